"""Agent Arena: agents' tool decisions (`*.decisions.jsonl`, seed 002's universal tools)
and the runtime's reasoning traces (`traces/<episode_id>.jsonl`)."""

from pathlib import Path

from workbench.arena import queries, reader, tables, traces
from workbench.formats import Counts, Format, LoadContext, generated_by, jsonl_claims

_decision_claims = jsonl_claims(reader.SUFFIX, reader.DECISION_SIGNATURE)


def claims(path: Path, head: bytes) -> bool:
    return traces.is_trace(path, head) or _decision_claims(path, head)


def load(ctx: LoadContext) -> Counts:
    return traces.load(ctx) if traces.is_trace_file(ctx.path) else reader.load(ctx)


FORMAT = Format(
    name="arena",
    tables=tables.TABLES,
    views=tables.VIEWS,
    claims=claims,
    load=load,
    line_based=True,
    decisions_by_line=True,  # a decision is its own line's
    describe="Agent Arena decision logs (*.decisions.jsonl) and reasoning traces (traces/<episode_id>.jsonl)",
    summary=queries.summary,
    bound_names=(tables.LINES,),
    generate=generated_by("workbench.arena.synth"),
)
