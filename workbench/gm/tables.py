"""The `gm_responses` table, declared once (its DDL, Arrow schema and inserts come from
`RESPONSES`), and the SQL deriving `decisions`."""

from __future__ import annotations

import json
from typing import Any

import duckdb

from workbench.catalog import DECISIONS
from workbench.gm.models import GmResponse, ResponseLine
from workbench.schema import Column, Table

RESPONSES = Table(
    "gm_responses",
    (
        Column("source_id", "BIGINT", "the file (`sources.source_id`)", required=True),
        Column("seq", "BIGINT", "1-based line number: the session's order", required=True),
        Column("response_id", "VARCHAR", "the line's `id`", path="id", required=True),
        Column("ts", "TIMESTAMP", "the line's `ts`, UTC", path="ts"),
        Column("model", "VARCHAR", "the line's `model`", path="model"),
        Column("kind", "VARCHAR", "markers | mixed | json | character"),
        Column("valid", "BOOLEAN", "no `error` violation", required=True),
        Column("narrative", "VARCHAR", "the text without its markers", path="narrative"),
        Column(
            "location",
            "VARCHAR",
            "the place's name (a wilderness: its description); NULL when not stated",
            path="location.name",
        ),
        Column(
            "location_type",
            "VARCHAR",
            "`location.type` as written: town | wilderness | landmark | unknown",
            path="location.type",
        ),
        Column("combat", "BOOLEAN", "COMBAT marker or `combatInitiated`", path="combat"),
        Column("combat_opponent", "VARCHAR", "the opponent's name", path="combat_opponent"),
        Column(
            "acquired_items",
            "VARCHAR[]",
            "items the player gains (ACQUIRED_ITEMS marker or `acquiredItems`); empty when none",
            path="acquired_items",
        ),
        Column(
            "removed_items",
            "VARCHAR[]",
            "items the player loses (REMOVED_ITEMS marker or `removedItems`); empty when none",
            path="removed_items",
        ),
        Column("suggested_actions", "JSON", "[{text, type, description?, id?}]", path="suggested_actions"),
        Column("player_decision", "JSON", "{prompt, options, importance, ...}", path="player_decision"),
        Column("character", "JSON", "{name, attributes} of a character-generation response"),
        Column("text", "VARCHAR", "the raw model text, as written", path="text"),
    ),
    doc="One row per game-master response (a line of `*.gm.jsonl`), its text parsed the way the game reads it.",
    model=(ResponseLine, GmResponse),
)
JSON_COLUMNS = [c.name for c in RESPONSES.columns if c.type == "JSON"]
TABLES = (RESPONSES,)

# One decision per response: the model is the agent; a response that offers the
# player a decision is a `decision`, any other is its kind.
DERIVE_DECISIONS = DECISIONS.insert("""
SELECT source_id, 'gm' AS format, $game_id AS game_id, row_number() OVER (ORDER BY seq) AS turn,
       model AS agent_id, model, CASE WHEN player_decision IS NOT NULL THEN 'decision' ELSE kind END AS action,
       valid, 'response ' || response_id AS locator
FROM gm_responses WHERE source_id = $source_id
""")


class Rows:
    """Column lists of a batch of responses, inserted in one statement."""

    def __init__(self) -> None:
        self.values: dict[str, list] = {name: [] for name in RESPONSES.names}

    def __len__(self) -> int:
        return len(self.values["seq"])

    def add(self, row: dict[str, Any]) -> None:
        for name, column in self.values.items():
            value = row.get(name)
            column.append(_json(value) if name in JSON_COLUMNS else value)

    def insert(self, con: duckdb.DuckDBPyConnection, source_id: int) -> None:
        if not len(self):
            return
        self.values["source_id"] = [source_id] * len(self)
        RESPONSES.insert_rows(con, self.values)


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


def first_lines(con: duckdb.DuckDBPyConnection, source_id: int) -> dict[str, int]:
    """Each response id of the file's rows, with the first line it is on."""
    return dict(
        con.execute(
            "SELECT response_id, min(seq) FROM gm_responses WHERE source_id = ? GROUP BY ALL", [source_id]
        ).fetchall()
    )


def derive_decisions(con: duckdb.DuckDBPyConnection, source_id: int, game_id: str) -> None:
    con.execute(DERIVE_DECISIONS, {"source_id": source_id, "game_id": game_id})
