"""Agent Arena: agents' tool decisions (`*.decisions.jsonl`, seed 002's universal tools)."""

from pathlib import Path

from workbench.arena import reader, report, tables
from workbench.formats import Format, first_json_line

DECISION_SIGNATURE = {"agent_id", "tick", "tool", "params"}


def claims(path: Path, head: bytes) -> bool:
    if path.name.endswith(reader.SUFFIX):
        return True
    if path.suffix != ".jsonl":
        return False
    first = first_json_line(head)
    return first is not None and DECISION_SIGNATURE <= first.keys()


FORMAT = Format(
    name="arena",
    tables=tables.DDL,
    claims=claims,
    load=reader.load,
    describe="Agent Arena decision logs (*.decisions.jsonl)",
    summary=report.summary,
)
