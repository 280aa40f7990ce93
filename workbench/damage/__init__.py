"""Damage: LLM-vs-LLM poker replays (`<game_id>.events.jsonl`, tournament logs)."""

from pathlib import Path

from workbench.damage import reader, tables
from workbench.formats import Format, first_json_line

ENVELOPE_SIGNATURE = {"type", "payload", "game_id"}


def claims(path: Path, head: bytes) -> bool:
    if path.name.endswith(".events.jsonl"):
        return True
    if path.suffix != ".jsonl":
        return False
    first = first_json_line(head)
    return first is not None and ENVELOPE_SIGNATURE <= first.keys()


FORMAT = Format(
    name="damage",
    tables=tables.DDL,
    claims=claims,
    load=reader.load,
    describe="Damage replay and tournament logs (*.events.jsonl)",
)
