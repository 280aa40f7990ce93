"""Damage: LLM-vs-LLM poker replays (`<game_id>.events.jsonl`, tournament logs)."""

from workbench.damage import reader, tables
from workbench.formats import Format, jsonl_claims

ENVELOPE_SIGNATURE = {"type", "payload", "game_id"}

FORMAT = Format(
    name="damage",
    tables=tables.TABLES,
    claims=jsonl_claims(".events.jsonl", ENVELOPE_SIGNATURE),
    load=reader.load,
    line_based=True,
    describe="Damage replay and tournament logs (*.events.jsonl)",
)
