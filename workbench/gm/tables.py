"""The `gm_responses` table: its columns (declared once: the DDL and the Arrow schema
of the bulk insert both come from `COLUMNS`), and the SQL deriving `decisions`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import duckdb
import pyarrow as pa


@dataclass(frozen=True)
class Column:
    name: str
    sql: str
    arrow: pa.DataType
    doc: str


COLUMNS = [
    Column("source_id", "BIGINT NOT NULL", pa.int64(), ""),
    Column("seq", "BIGINT NOT NULL", pa.int64(), "1-based line number: the session's order"),
    Column("response_id", "VARCHAR NOT NULL", pa.string(), "the line's `id`"),
    Column("ts", "TIMESTAMP", pa.timestamp("us"), "the line's `ts`, UTC"),
    Column("model", "VARCHAR", pa.string(), "the line's `model`"),
    Column("kind", "VARCHAR", pa.string(), "markers | mixed | json | character"),
    Column("valid", "BOOLEAN NOT NULL", pa.bool_(), "no `error` violation"),
    Column("narrative", "VARCHAR", pa.string(), "the text without its markers"),
    Column("location", "VARCHAR", pa.string(), "the place's name (a wilderness: its description); NULL when not stated"),
    Column("location_type", "VARCHAR", pa.string(), "`location.type` as written: town | wilderness | landmark | unknown"),
    Column("combat", "BOOLEAN", pa.bool_(), "COMBAT marker or `combatInitiated`"),
    Column("combat_opponent", "VARCHAR", pa.string(), "the opponent's name"),
    Column("acquired_items", "VARCHAR[]", pa.list_(pa.string()), ""),
    Column("removed_items", "VARCHAR[]", pa.list_(pa.string()), ""),
    Column("suggested_actions", "JSON", pa.string(), "[{text, type, description?, id?}]"),
    Column("player_decision", "JSON", pa.string(), "{prompt, options, importance, ...}"),
    Column("character", "JSON", pa.string(), "{name, attributes} of a character-generation response"),
    Column("text", "VARCHAR", pa.string(), "the raw model text, as written"),
]
JSON_COLUMNS = [c.name for c in COLUMNS if c.sql == "JSON"]
SCHEMA = pa.schema([(c.name, c.arrow) for c in COLUMNS])


def _ddl() -> str:
    lines = []
    for number, c in enumerate(COLUMNS, 1):
        comma = "," if number < len(COLUMNS) else ""
        lines.append(f"    {c.name} {c.sql}{comma}" + (f"  -- {c.doc}" if c.doc else ""))
    return "CREATE TABLE IF NOT EXISTS gm_responses (\n" + "\n".join(lines) + "\n);\n"


DDL = _ddl()

INSERT = (
    "INSERT INTO gm_responses SELECT "
    + ", ".join(f"CAST({c.name} AS JSON)" if c.sql == "JSON" else c.name for c in COLUMNS)
    + " FROM response_rows"
)

# One decision per response: the model is the agent; a response that offers the
# player a decision is a `decision`, any other is its kind.
DECISIONS = """
INSERT INTO decisions (source_id, format, game_id, turn, agent_id, model, action, valid, latency_ms, tokens, locator)
SELECT source_id, 'gm', $game_id, row_number() OVER (ORDER BY seq), model, model,
       CASE WHEN player_decision IS NOT NULL THEN 'decision' ELSE kind END,
       valid, NULL, NULL, 'response ' || response_id
FROM gm_responses WHERE source_id = $source_id
"""


class Rows:
    """Column lists of a batch of responses, inserted in one statement."""

    def __init__(self) -> None:
        self.values: dict[str, list] = {c.name: [] for c in COLUMNS}

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
        # INSERT reads `response_rows` by name: a DuckDB replacement scan, which unlike
        # register() does not pin the rows in memory until the file's transaction ends.
        response_rows = pa.table(self.values, schema=SCHEMA)  # noqa: F841
        con.execute(INSERT)


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


def first_lines(con: duckdb.DuckDBPyConnection, source_id: int) -> dict[str, int]:
    """Each response id of the file's rows, with the first line it is on."""
    return dict(con.execute("SELECT response_id, min(seq) FROM gm_responses WHERE source_id = ? GROUP BY ALL",
                            [source_id]).fetchall())


def derive_decisions(con: duckdb.DuckDBPyConnection, source_id: int, game_id: str) -> None:
    con.execute(DECISIONS, {"source_id": source_id, "game_id": game_id})
