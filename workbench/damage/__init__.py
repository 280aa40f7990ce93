"""Damage: LLM-vs-LLM poker replays (`<game_id>.events.jsonl`, tournament logs)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.damage import reader, tables
from workbench.formats import Format, generated_by, jsonl_claims

if TYPE_CHECKING:
    import duckdb
    import polars as pl

ENVELOPE_SIGNATURE = {"type", "payload", "game_id"}

FORMAT = Format(
    name="damage",
    tables=tables.TABLES,
    claims=jsonl_claims(".events.jsonl", ENVELOPE_SIGNATURE),
    load=reader.load,
    line_based=True,
    decisions_by_line=True,  # an action's decision: its line and the call before it
    describe="Damage replay and tournament logs (*.events.jsonl)",
    bound_names=("event_lines", "emotion_docs"),
    generate=generated_by("workbench.damage.synth"),
)


def attack_matrix(con: duckdb.DuckDBPyConnection, game_id: str) -> pl.DataFrame:
    """Who attacks whom in a game, and what it does: a polars frame per attacker and
    target (see `queries.attack_matrix`). Imported on call, so loading the format for
    ingestion does not load the read side."""
    from workbench.damage.queries import attack_matrix as matrix

    return matrix(con, game_id)
