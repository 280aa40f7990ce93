"""The companion's SQLite history: table `snapshots`, one row per autosave it saw.

Columns (all but `game_date` optional): `session_id`, `game_date` ("YYYY.MM.DD"),
`military_power`, `colony_count`, `wars_count`, `energy_net`, `alloys_net`,
`full_briefing_json` (a `get_full_briefing` output; the companion prunes it to `{}` or
NULL on most rows) and `event_state_json` (a compact state whose
`economy.net_monthly` holds five resource nets). One record is one row.

What the real companion writes (its `GameDatabase`): WAL journal mode; `military_power`
and `colony_count` as integers cut from the briefing's figures (`int(52000.6)` = 52000), so
a column agrees with its briefing when it is that figure truncated; `wars_count` NULL
unless the briefing carried its wars; the full briefing only on a session's first row.

The file is opened read-only and immutable (`file:<quoted path>?mode=ro&immutable=1`):
reading writes nothing anywhere, not even the `-wal` and `-shm` files SQLite creates
beside a WAL database opened merely read-only. Immutable means SQLite does not look at a
`-wal` file either: rows the companion has not yet checkpointed into the database (it is
running, or it stopped without closing) are not read, and a warning says so.
"""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path

from workbench.errors import UnreadableFile
from workbench.paths import text_of
from workbench.stellaris.dates import day_number
from workbench.stellaris.extractor import strict_json
from workbench.stellaris.findings import check_output
from workbench.stellaris.invariants import dig, is_number, same
from workbench.stellaris.tables import Extraction, resource_rows, snapshot_row
from workbench.violation import Violation

SQLITE_HEADER = b"SQLite format 3\x00"
SUFFIXES = (".db", ".sqlite", ".sqlite3")
# History column -> where the same value sits in the row's full briefing, and in its event state.
COLUMN_SOURCES = {
    "energy_net": ("economy.net_monthly.energy", "economy.net_monthly.energy"),
    "alloys_net": ("economy.net_monthly.alloys", "economy.net_monthly.alloys"),
    "military_power": ("military.military_power", "military.military_power"),
    "colony_count": ("territory.colonies.total_count", "territory.colonies.total_count"),
}


# History columns the companion writes with int(): the briefing's figure truncated.
INTEGER_COLUMNS = {"military_power", "colony_count"}


def read_only_uri(path: Path) -> str:
    """A SQLite URI that opens `path` without writing anything: read-only (`mode=ro`),
    and immutable, so no lock, journal, `-wal` or `-shm` file is created. The path is
    percent-quoted (`?`, `#`, `%`, spaces and non-ASCII names work)."""
    return f"{path.resolve().as_uri()}?mode=ro&immutable=1"


def connect_read_only(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(read_only_uri(path), uri=True)


def claims(path: Path, head: bytes) -> bool:
    """A SQLite file (by its header) with a `snapshots` table."""
    if path.suffix.lower() not in SUFFIXES or not head.startswith(SQLITE_HEADER):
        return False
    try:
        con = connect_read_only(path)
        try:
            return _has_table(con, "snapshots")
        finally:
            con.close()
    except sqlite3.Error:
        return False


def _has_table(con: sqlite3.Connection, name: str) -> bool:
    return con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [name]).fetchone() is not None


def read(path: Path) -> Extraction:
    try:
        con = connect_read_only(path)
        try:
            rows, sessions = _rows(con, path), _session_names(con)
        finally:
            con.close()
    except sqlite3.Error as exc:
        raise UnreadableFile(f"{path}: not a readable SQLite history ({exc})") from None
    multiple = len({row.get("session_id") for row in rows}) > 1
    extraction = Extraction()
    extraction.violations += _unread_log(path)
    for number, row in enumerate(rows, start=1):
        stem = text_of(path.stem)
        series = f"{stem}/{row.get('session_id')}" if multiple else stem
        _add_row(extraction, f"row {number}", row, series, text_of(path.name), sessions)
    return extraction


def _rows(con: sqlite3.Connection, path: Path) -> list[dict]:
    columns = [info[1] for info in con.execute("PRAGMA table_info(snapshots)")]
    if not columns:
        raise UnreadableFile(f"{path}: not a companion history: it has no `snapshots` table")
    if "game_date" not in columns:
        raise UnreadableFile(f"{path}: its `snapshots` table has no `game_date` column (it has {', '.join(columns)})")
    con.row_factory = sqlite3.Row
    try:
        cursor = con.execute("SELECT * FROM snapshots ORDER BY rowid")
    except sqlite3.OperationalError:  # a WITHOUT ROWID table keeps its key order
        cursor = con.execute("SELECT * FROM snapshots")
    return [dict(row) for row in cursor]


def _unread_log(path: Path) -> list[Violation]:
    """A `-wal` file with frames beside the database: rows not yet in it, left unread."""
    log = path.with_name(path.name + "-wal")
    try:
        size = log.stat().st_size
    except OSError:
        return []
    if size == 0:
        return []
    return [
        Violation(
            "database",
            "warning",
            "history_wal_unread",
            log.name,
            f"`{log.name}` holds {size:,} bytes of changes not yet written into the database (the companion is "
            f"running, or stopped without closing it); the database is read as it is, immutable and without "
            f"writing, so rows still in the log are not loaded: close the companion and ingest again to include them",
        )
    ]


def _session_names(con: sqlite3.Connection) -> dict:
    if not _has_table(con, "sessions"):
        return {}
    columns = {info[1] for info in con.execute("PRAGMA table_info(sessions)")}
    if not {"id", "empire_name"} <= columns:
        return {}
    return dict(con.execute("SELECT id, empire_name FROM sessions").fetchall())


def _add_row(extraction: Extraction, locator: str, row: dict, series: str, file_name: str, sessions: dict) -> None:
    game_date = row.get("game_date")
    if not isinstance(game_date, str) or day_number(game_date) is None:
        extraction.rejects.append((locator, json.dumps(row, default=str)))
        extraction.rejected += 1
        extraction.violations.append(
            Violation(
                locator,
                "error",
                "date_format",
                "game_date",
                f"expected a Stellaris date `YYYY.MM.DD`; found {game_date!r}: the row cannot be placed in time, "
                f"kept in `rejects`",
            )
        )
        return
    extraction.records += 1
    briefing = _json_column(extraction, locator, row, "full_briefing_json")
    event_state = _json_column(extraction, locator, row, "event_state_json")
    if briefing:
        _check_briefing(extraction, locator, briefing)
    extraction.violations += _columns_agree(locator, row, briefing, event_state)
    meta = next((m for m in (dig(event_state, "meta", None), dig(briefing, "meta", None)) if isinstance(m, dict)), {})
    wars = row.get("wars_count")
    extraction.snapshots.append(
        snapshot_row(
            locator,
            "history",
            series,
            file_name,
            game_date,
            player_id=meta.get("player_id"),
            empire_name=sessions.get(row.get("session_id")) or meta.get("empire_name"),
            military_power=_float(row.get("military_power")),
            colony_count=_int(row.get("colony_count")),
            wars_count=_int(wars),
            at_war=wars > 0 if is_number(wars) else None,
        )
    )
    extraction.resources += resource_rows(locator, game_date, net=_nets(row, briefing, event_state))


def _json_column(extraction: Extraction, locator: str, row: dict, column: str) -> dict:
    """The column's JSON object; `{}` for NULL, empty or pruned; an error if it is not JSON."""
    text = row.get(column)
    if text is None or (isinstance(text, str) and not text.strip()):
        return {}
    try:
        value = strict_json(text)
    except (TypeError, ValueError) as exc:
        extraction.violations.append(
            Violation(
                locator,
                "error",
                "invalid_json",
                column,
                f"expected a JSON object; found text that is not JSON ({exc}); the row's other columns are kept",
            )
        )
        return {}
    if not isinstance(value, dict):
        extraction.violations.append(
            Violation(
                locator,
                "error",
                "wrong_type",
                column,
                f"expected a JSON object; found a JSON {type(value).__name__}",
            )
        )
        return {}
    return value


def _check_briefing(extraction: Extraction, locator: str, briefing: dict) -> None:
    valid, found = check_output("get_full_briefing", briefing, locator)
    extraction.violations += [
        Violation(v.locator, v.severity, v.rule, f"full_briefing_json.{v.field}", v.message) for v in found
    ]
    extraction.tool_outputs.append(
        {
            "locator": locator,
            "tool": "get_full_briefing",
            "origin": "history",
            "known": True,
            "valid": valid,
            "payload": json.dumps(briefing),
        }
    )


def _columns_agree(locator: str, row: dict, briefing: dict, event_state: dict) -> list[Violation]:
    """The row's figure columns are copies of its full briefing (and event state): they
    must carry the same values, or the history lost data."""
    found = []
    for column, (briefing_path, state_path) in COLUMN_SOURCES.items():
        value = row.get(column)
        if not is_number(value):
            continue
        for name, document, path in (
            ("full_briefing_json", briefing, briefing_path),
            ("event_state_json", event_state, state_path),
        ):
            source = dig(document, path, None)
            if is_number(source) and not _agrees(column, value, source):
                found.append(
                    Violation(
                        locator,
                        "error",
                        "invariant_full_briefing",
                        column,
                        f"`{column}` is {value:g} but {name}.{path} is {source:g} in the same row",
                    )
                )
    return found


def _agrees(column: str, value, source) -> bool:
    """The column is its source, or for an integer column the source cut to an integer
    the way the companion stores it."""
    if same(value, source):
        return True
    return column in INTEGER_COLUMNS and math.isfinite(source) and value == int(source)


def _nets(row: dict, briefing: dict, event_state: dict) -> dict:
    """Every net the row holds: the briefing's (all resources), the event state's (five),
    then the row's own columns, later ones taking precedence."""
    nets = {}
    for document in (briefing, event_state):
        found = dig(document, "economy.net_monthly", None)
        if isinstance(found, dict):
            nets.update({r: v for r, v in found.items() if is_number(v)})
    for resource in ("energy", "alloys"):
        if is_number(row.get(f"{resource}_net")):
            nets[resource] = row[f"{resource}_net"]
    return nets


def _int(value) -> int | None:
    return int(value) if is_number(value) else None


def _float(value) -> float | None:
    return float(value) if is_number(value) else None
