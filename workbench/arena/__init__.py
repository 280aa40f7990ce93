"""Agent Arena: agents' tool decisions (`*.decisions.jsonl`, seed 002's universal tools)."""

from workbench.arena import reader, report, tables
from workbench.formats import Format, jsonl_claims

DECISION_SIGNATURE = {"agent_id", "tick", "tool", "params"}

FORMAT = Format(
    name="arena",
    tables=tables.TABLES,
    views=tables.VIEWS,
    claims=jsonl_claims(reader.SUFFIX, DECISION_SIGNATURE),
    load=reader.load,
    line_based=True,
    describe="Agent Arena decision logs (*.decisions.jsonl)",
    summary=report.summary,
)
