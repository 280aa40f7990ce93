"""EC4X: the LLM bot's order drafts (`*.orders.jsonl`, seed 004's v1 JSON contract)
and its per-turn traces (`bot_trace_<gameId>.jsonl`), with the bot's quality gates."""

from pathlib import Path

from workbench.ec4x import queries, reader, tables
from workbench.formats import AcrossFiles, Format, generated_by


def claims(path: Path, head: bytes) -> bool:
    # Both kinds are recognised by name: their first lines share no key that would
    # tell them apart from other JSONL logs reliably.
    return reader.is_order_log(path) or (path.name.startswith("bot_trace_") and path.suffix == ".jsonl")


FORMAT = Format(
    name="ec4x",
    tables=tables.TABLES,
    views=tables.VIEWS,
    claims=claims,
    load=reader.load,
    line_based=True,
    decisions_by_line=True,  # a draft's or a bot turn's decision: its own line
    describe="EC4X bot order drafts (*.orders.jsonl) and bot traces (bot_trace_*.jsonl)",
    summary=queries.summary,
    # A draft names no model: it takes its game's bot trace's, from another file.
    across_files=(AcrossFiles("decisions", "model", ("format", "source_id", "locator"), tables.draft_models()),),
    bound_names=(tables.LINES, "draft_lines"),
    generate=generated_by("workbench.ec4x.synth"),
)
