"""The Stellaris tables, declared once (their DDL and the Arrow schemas of their bulk
inserts derive from these declarations), and the rows a file gives them.

- `stellaris_snapshots`: one row per snapshot of the player's empire (a save, a history
  row, a dated extractor bundle), with the sortable `day` beside the text date and the
  `series` it belongs to (a save folder, a history database, an extractor folder).
  A column with a `path` holds that field of the snapshot's `get_player_status` output.
- `stellaris_resources`: one row per resource per snapshot; joined to its snapshot by
  (`source_id`, `locator`).
- `stellaris_budget`: every country's budget lines (a save's `budget.current_month`),
  one row per country, category and resource; joined to its snapshot by (`source_id`,
  `locator`). Only saves give them: extractor outputs and the companion's history hold
  per-resource totals without categories (those are in `stellaris_resources`).
- `stellaris_tool_outputs`: every tool output as read (extractor files) or derived
  (saves), with whether it passed its schema.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import duckdb
import pyarrow as pa

from workbench.schema import Column, Table
from workbench.stellaris.dates import day_number
from workbench.stellaris.invariants import dig
from workbench.stellaris.models import GetPlayerStatus
from workbench.violation import Violation

SNAPSHOTS = Table(
    "stellaris_snapshots",
    (
        Column("source_id", "BIGINT", "the file (`sources.source_id`)", required=True),
        Column("locator", "VARCHAR", "where in the file: `save`, `row 3`, `bundle`", required=True),
        Column("origin", "VARCHAR", "save | history | extractor", required=True),
        Column("series", "VARCHAR", "the save folder, history database or extractor folder", required=True),
        Column("save_name", "VARCHAR", "the file name"),
        Column("game_date", "VARCHAR", "the date in the game, YYYY.MM.DD", required=True),
        Column("day", "BIGINT", "days since 0.01.01 on the 360-day calendar: sorts", required=True),
        Column("player_id", "BIGINT", "the player's country id (`get_player_status.player_id`)", path="player_id"),
        Column(
            "empire_name", "VARCHAR", "readable: a save's meta name, the history's, the extractor's", path="empire_name"
        ),
        Column("empire_name_key", "VARCHAR", "a save's country name as written: `humans1`, `%ADJECTIVE%`"),
        Column("empire_name_template", "JSON", "that name's whole template, when it has variables"),
        Column("military_power", "DOUBLE", "the empire's military power as the game rates it", path="military_power"),
        Column("economy_power", "DOUBLE", "its economy power as the game rates it", path="economy_power"),
        Column("tech_power", "DOUBLE", "its technology power as the game rates it", path="tech_power"),
        Column("fleet_count", "BIGINT", "how many fleets it has", path="fleet_count"),
        Column(
            "fleet_size",
            "BIGINT",
            "its fleet size as the game counts it (the country's `fleet_size`)",
            path="fleet_size",
        ),
        Column("colony_count", "BIGINT", "colonies it owns (`colonies.total_count`)", path="colonies.total_count"),
        Column(
            "population",
            "BIGINT",
            "pops on its colonies (`colonies.total_population`)",
            path="colonies.total_population",
        ),
        Column("wars_count", "BIGINT", "the player's wars (`get_wars`)"),
        Column(
            "at_war",
            "BOOLEAN",
            "whether the player is at war (`get_wars.player_at_war`, or any war listed); NULL "
            "where the source does not say",
        ),
    ),
    doc="One row per snapshot of the player's empire: a save, a row of the companion's history, a dated extractor "
    "output or bundle. A figure is NULL where the source lacks it.",
    model=GetPlayerStatus,
    added=("empire_name_key", "empire_name_template"),
)

RESOURCES = Table(
    "stellaris_resources",
    (
        Column("source_id", "BIGINT", "the file (`sources.source_id`)", required=True),
        Column("locator", "VARCHAR", "the snapshot's locator", required=True),
        Column("game_date", "VARCHAR", "the snapshot's date, YYYY.MM.DD", required=True),
        Column("day", "BIGINT", "the snapshot's day (as `stellaris_snapshots.day`)", required=True),
        Column(
            "resource", "VARCHAR", "the resource as the game names it: energy, minerals, alloys, ...", required=True
        ),
        Column("income", "DOUBLE", "per month, summed over budget categories; NULL where the source gives no income"),
        Column("expenses", "DOUBLE", "per month, summed over budget categories; NULL where the source gives none"),
        Column("net", "DOUBLE", "income - expenses, per month"),
        Column("stockpile", "DOUBLE", "the amount held at the snapshot's date; NULL where the source gives none"),
    ),
    doc="The player's totals per resource and snapshot; joined to `stellaris_snapshots` by (`source_id`, `locator`).",
)

BUDGET = Table(
    "stellaris_budget",
    (
        Column("source_id", "BIGINT", "the file (`sources.source_id`)", required=True),
        Column("locator", "VARCHAR", "the snapshot's locator", required=True),
        Column("series", "VARCHAR", "the snapshot's series", required=True),
        Column("game_date", "VARCHAR", "the snapshot's date, YYYY.MM.DD", required=True),
        Column("day", "BIGINT", "the snapshot's day (as `stellaris_snapshots.day`)", required=True),
        Column("country_id", "BIGINT", "the key of the country's entry in `country`", required=True),
        Column("country_name", "VARCHAR", "the player's as in stellaris_snapshots; others' rendered from the save"),
        Column("is_player", "BOOLEAN", "the snapshot's player (a multiplayer save's first)", required=True),
        Column("country_type", "VARCHAR", "the save's `type`: default (an empire), fallen_empire, enclave, ..."),
        Column("category", "VARCHAR", "the budget category: country_base, planet_miners, ships, ...", required=True),
        Column(
            "resource", "VARCHAR", "the resource as the game names it: energy, minerals, alloys, ...", required=True
        ),
        Column("income", "DOUBLE", "per month; 0 where the category only spends the resource", required=True),
        Column("expenses", "DOUBLE", "per month; 0 where the category only yields it", required=True),
    ),
    doc="Every country's budget lines in a save (`budget.current_month`), one row per country, category and "
    "resource; only saves give them.",
)

TOOL_OUTPUTS = Table(
    "stellaris_tool_outputs",
    (
        Column("source_id", "BIGINT", "the file (`sources.source_id`)", required=True),
        Column("locator", "VARCHAR", "where: `tool get_planets`, or a history row's `row 3`", required=True),
        Column("tool", "VARCHAR", "the tool whose output it is: `get_player_status`, `get_wars`, ...", required=True),
        Column(
            "origin",
            "VARCHAR",
            "extractor (read from a file) | save (derived from one) | history (a row's full briefing)",
            required=True,
        ),
        Column("known", "BOOLEAN", "a tool the specification defines", required=True),
        Column("valid", "BOOLEAN", "no error against its schema", required=True),
        Column("payload", "JSON", "the output: as read, or as derived from the save"),
    ),
    doc="Every extractor tool output: read from its file, derived from a save, or a history row's full "
    "briefing, with whether it passed its schema.",
)

TABLES = (SNAPSHOTS, RESOURCES, BUDGET, TOOL_OUTPUTS)


@dataclass
class Extraction:
    """What one file gave: rows for each table, findings, and its record counts."""

    snapshots: list[dict] = field(default_factory=list)
    resources: list[dict] = field(default_factory=list)
    budget: list[dict] = field(default_factory=list)
    tool_outputs: list[dict] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    rejects: list[tuple[str, str]] = field(default_factory=list)
    records: int = 0
    rejected: int = 0


def status_figures(status) -> dict:
    """The snapshot columns a `get_player_status` output holds, read at their declared
    paths (None where the output lacks one)."""
    return {c.name: dig(status, c.path, None) for c in SNAPSHOTS.columns if c.path}


def snapshot_row(locator: str, origin: str, series: str, save_name: str, game_date: str, **figures) -> dict:
    """A `stellaris_snapshots` row; `figures` are the optional columns the source holds."""
    row = dict.fromkeys(SNAPSHOTS.names)
    row.update(
        locator=locator,
        origin=origin,
        series=series,
        save_name=save_name,
        game_date=game_date,
        day=day_number(game_date),
    )
    unknown = set(figures) - set(row)
    if unknown:
        raise ValueError(f"not columns of stellaris_snapshots: {sorted(unknown)}")
    row.update({name: _fits(SNAPSHOTS.column(name).type, value) for name, value in figures.items()})
    return row


INT64 = range(-(2**63), 2**63)


def _fits(duck_type: str, value):
    """The figure if its column can hold it, else NULL: a writer's odd value (text
    where a number belongs, an integer beyond 64 bits) must not fail the file's load."""
    if value is None:
        return None
    if duck_type == "BIGINT":
        return value if isinstance(value, int) and not isinstance(value, bool) and value in INT64 else None
    if duck_type == "DOUBLE":
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if duck_type == "BOOLEAN":
        return value if isinstance(value, bool) else None
    return value if isinstance(value, str) else None


def resource_rows(locator: str, game_date: str, income=None, expenses=None, net=None, stockpiles=None) -> list[dict]:
    """One `stellaris_resources` row per resource any of the mappings names."""
    income, expenses, net, stockpiles = (m if isinstance(m, dict) else {} for m in (income, expenses, net, stockpiles))
    day = day_number(game_date)
    rows = []
    for resource in dict.fromkeys([*net, *income, *expenses, *stockpiles]):
        rows.append(
            {
                "locator": locator,
                "game_date": game_date,
                "day": day,
                "resource": resource,
                "income": _number(income.get(resource)),
                "expenses": _number(expenses.get(resource)),
                "net": _number(net.get(resource)),
                "stockpile": _number(stockpiles.get(resource)),
            }
        )
    return rows


def budget_rows(locator: str, series: str, game_date: str, budgets) -> list[dict]:
    """One `stellaris_budget` row per line of each country's budget (`save.CountryBudget`)."""
    day = day_number(game_date)
    return [
        {
            "locator": locator,
            "series": series,
            "game_date": game_date,
            "day": day,
            "country_id": budget.country_id,
            "country_name": budget.name,
            "is_player": budget.is_player,
            "country_type": budget.country_type,
            "category": line.category,
            "resource": line.resource,
            "income": line.income,
            "expenses": line.expenses,
        }
        for budget in budgets
        for line in budget.lines
    ]


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def write(con: duckdb.DuckDBPyConnection, source_id: int, extraction: Extraction) -> None:
    """Insert the file's rows in bulk, one Arrow table per table."""
    for table, rows in (
        (SNAPSHOTS, extraction.snapshots),
        (RESOURCES, extraction.resources),
        (BUDGET, extraction.budget),
        (TOOL_OUTPUTS, extraction.tool_outputs),
    ):
        if rows:
            batch = pa.Table.from_pylist([{**row, "source_id": source_id} for row in rows], schema=table.arrow_schema)
            table.insert_rows(con, batch)
