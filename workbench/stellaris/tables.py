"""The Stellaris tables, declared once: each column's name, Arrow type and SQL type.
The DDL and the Arrow schemas used for bulk inserts both derive from the declarations.

- `stellaris_snapshots`: one row per snapshot of the player's empire (a save, a history
  row, a dated extractor bundle), with the sortable `day` beside the text date and the
  `series` it belongs to (a save folder, a history database, an extractor folder).
- `stellaris_resources`: one row per resource per snapshot; joined to its snapshot by
  (`source_id`, `locator`).
- `stellaris_tool_outputs`: every tool output as read (extractor files) or derived
  (saves), with whether it passed its schema.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import duckdb
import pyarrow as pa

from workbench.catalog import Violation
from workbench.stellaris.dates import day_number


@dataclass(frozen=True)
class Column:
    name: str
    arrow: pa.DataType
    sql: str
    comment: str = ""


SNAPSHOT_COLUMNS = [
    Column("source_id", pa.int64(), "BIGINT NOT NULL"),
    Column("locator", pa.string(), "VARCHAR NOT NULL", "where in the file: `save`, `row 3`, `bundle`"),
    Column("origin", pa.string(), "VARCHAR NOT NULL", "save | history | extractor"),
    Column("series", pa.string(), "VARCHAR NOT NULL", "the save folder, history database or extractor folder"),
    Column("save_name", pa.string(), "VARCHAR", "the file name"),
    Column("game_date", pa.string(), "VARCHAR NOT NULL", "YYYY.MM.DD"),
    Column("day", pa.int64(), "BIGINT NOT NULL", "days since 0.01.01 on the 360-day calendar: sorts"),
    Column("player_id", pa.int64(), "BIGINT"),
    Column("empire_name", pa.string(), "VARCHAR", "readable: a save's meta name, the history's, the extractor's"),
    Column("empire_name_key", pa.string(), "VARCHAR", "a save's country name as written: `humans1`, `%ADJECTIVE%`"),
    Column("empire_name_template", pa.string(), "JSON", "that name's whole template, when it has variables"),
    Column("military_power", pa.float64(), "DOUBLE"),
    Column("economy_power", pa.float64(), "DOUBLE"),
    Column("tech_power", pa.float64(), "DOUBLE"),
    Column("fleet_count", pa.int64(), "BIGINT"),
    Column("fleet_size", pa.int64(), "BIGINT"),
    Column("colony_count", pa.int64(), "BIGINT"),
    Column("population", pa.int64(), "BIGINT"),
    Column("wars_count", pa.int64(), "BIGINT"),
    Column("at_war", pa.bool_(), "BOOLEAN"),
]

RESOURCE_COLUMNS = [
    Column("source_id", pa.int64(), "BIGINT NOT NULL"),
    Column("locator", pa.string(), "VARCHAR NOT NULL", "the snapshot's locator"),
    Column("game_date", pa.string(), "VARCHAR NOT NULL"),
    Column("day", pa.int64(), "BIGINT NOT NULL"),
    Column("resource", pa.string(), "VARCHAR NOT NULL"),
    Column("income", pa.float64(), "DOUBLE", "per month, summed over budget categories"),
    Column("expenses", pa.float64(), "DOUBLE"),
    Column("net", pa.float64(), "DOUBLE", "income - expenses"),
    Column("stockpile", pa.float64(), "DOUBLE"),
]

TOOL_OUTPUT_COLUMNS = [
    Column("source_id", pa.int64(), "BIGINT NOT NULL"),
    Column("locator", pa.string(), "VARCHAR NOT NULL", "`tool get_planets`"),
    Column("tool", pa.string(), "VARCHAR NOT NULL"),
    Column("origin", pa.string(), "VARCHAR NOT NULL", "extractor (read from a file) | save (derived)"),
    Column("known", pa.bool_(), "BOOLEAN NOT NULL", "a tool the specification defines"),
    Column("valid", pa.bool_(), "BOOLEAN NOT NULL", "no error against its schema"),
    Column("payload", pa.string(), "JSON"),
]

TABLES = {
    "stellaris_snapshots": SNAPSHOT_COLUMNS,
    "stellaris_resources": RESOURCE_COLUMNS,
    "stellaris_tool_outputs": TOOL_OUTPUT_COLUMNS,
}


def _create(name: str, columns: list[Column]) -> str:
    lines = []
    for index, column in enumerate(columns):
        comma = "," if index < len(columns) - 1 else ""
        comment = f"  -- {column.comment}" if column.comment else ""
        lines.append(f"    {column.name} {column.sql}{comma}{comment}")
    return f"CREATE TABLE IF NOT EXISTS {name} (\n" + "\n".join(lines) + "\n);\n"


# Columns added since the tables were first declared: a database written before gets them
# (inserts name their columns, so their place at the end of such a table does not matter).
ADDED_COLUMNS = {"stellaris_snapshots": ("empire_name_key", "empire_name_template")}


def _added(name: str, columns: list[Column]) -> str:
    by_name = {c.name: c for c in columns}
    return "".join(f"ALTER TABLE {name} ADD COLUMN IF NOT EXISTS {by_name[c].name} {by_name[c].sql};\n"
                   for c in ADDED_COLUMNS.get(name, ()))


DDL = "".join(_create(name, columns) + _added(name, columns) for name, columns in TABLES.items())


@dataclass
class Extraction:
    """What one file gave: rows for each table, findings, and its record counts."""

    snapshots: list[dict] = field(default_factory=list)
    resources: list[dict] = field(default_factory=list)
    tool_outputs: list[dict] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    rejects: list[tuple[str, str]] = field(default_factory=list)
    records: int = 0
    rejected: int = 0


def snapshot_row(locator: str, origin: str, series: str, save_name: str, game_date: str, **figures) -> dict:
    """A `stellaris_snapshots` row; `figures` are the optional columns the source holds."""
    row = dict.fromkeys(c.name for c in SNAPSHOT_COLUMNS)
    row.update(locator=locator, origin=origin, series=series, save_name=save_name,
               game_date=game_date, day=day_number(game_date))
    unknown = set(figures) - set(row)
    if unknown:
        raise ValueError(f"not columns of stellaris_snapshots: {sorted(unknown)}")
    row.update({name: _fits(name, value) for name, value in figures.items()})
    return row


INT64 = range(-(2**63), 2**63)
COLUMN_TYPES = {c.name: c.arrow for c in SNAPSHOT_COLUMNS}


def _fits(column: str, value):
    """The figure if its column can hold it, else NULL: a writer's odd value (text
    where a number belongs, an integer beyond 64 bits) must not fail the file's load."""
    kind = COLUMN_TYPES[column]
    if value is None:
        return None
    if kind == pa.int64():
        return value if isinstance(value, int) and not isinstance(value, bool) and value in INT64 else None
    if kind == pa.float64():
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if kind == pa.bool_():
        return value if isinstance(value, bool) else None
    return value if isinstance(value, str) else None


def resource_rows(locator: str, game_date: str, income=None, expenses=None, net=None, stockpiles=None) -> list[dict]:
    """One `stellaris_resources` row per resource any of the mappings names."""
    income, expenses, net, stockpiles = (m if isinstance(m, dict) else {} for m in (income, expenses, net, stockpiles))
    day = day_number(game_date)
    rows = []
    for resource in dict.fromkeys([*net, *income, *expenses, *stockpiles]):
        rows.append({
            "locator": locator, "game_date": game_date, "day": day, "resource": resource,
            "income": _number(income.get(resource)), "expenses": _number(expenses.get(resource)),
            "net": _number(net.get(resource)), "stockpile": _number(stockpiles.get(resource)),
        })
    return rows


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def write(con: duckdb.DuckDBPyConnection, source_id: int, extraction: Extraction) -> None:
    """Insert the file's rows in bulk, one Arrow table per table."""
    _insert(con, "stellaris_snapshots", source_id, extraction.snapshots)
    _insert(con, "stellaris_resources", source_id, extraction.resources)
    _insert(con, "stellaris_tool_outputs", source_id, extraction.tool_outputs)


def _insert(con, table: str, source_id: int, rows: list[dict]) -> None:
    if not rows:
        return
    columns = TABLES[table]
    schema = pa.schema([(c.name, c.arrow) for c in columns])
    batch = pa.Table.from_pylist([{**row, "source_id": source_id} for row in rows], schema=schema)
    selected = ", ".join(f"CAST({c.name} AS JSON)" if c.sql == "JSON" else c.name for c in columns)
    names = ", ".join(c.name for c in columns)
    # Read by name (a DuckDB replacement scan), which unlike register() does not pin the
    # rows in memory until the file's transaction ends.
    stellaris_batch = batch  # noqa: F841
    con.execute(f"INSERT INTO {table} ({names}) SELECT {selected} FROM stellaris_batch")
