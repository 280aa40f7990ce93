"""The DuckDB catalog: shared tables, connections, and bulk writers for findings.

Every format adds its own tables (declared in its folder); the tables here are the
ones all formats share: what was read (`sources`), what was wrong with it
(`violations`), what could not be read at all (`rejects`) and every agent decision
(`decisions`).
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa

from workbench.errors import OlderDatabase, WorkbenchError, first_line

DEFAULT_DB = Path("data/workbench.duckdb")
SEVERITIES = ("error", "warning", "info")

SHARED_TABLES = """
CREATE SEQUENCE IF NOT EXISTS source_ids START 1;
-- One row per file and format: the database mirrors the file's current content.
CREATE TABLE IF NOT EXISTS sources (
    source_id      BIGINT PRIMARY KEY DEFAULT nextval('source_ids'),
    path           VARCHAR NOT NULL,    -- absolute
    sha256         VARCHAR NOT NULL,    -- of the content read (the first `size` bytes)
    format         VARCHAR NOT NULL,
    records        BIGINT NOT NULL DEFAULT 0,
    rejected       BIGINT NOT NULL DEFAULT 0,
    ingested_at    TIMESTAMP NOT NULL DEFAULT CAST(now() AS TIMESTAMP),
    size           BIGINT NOT NULL DEFAULT 0,
    complete_bytes BIGINT NOT NULL DEFAULT 0,   -- up to the last newline: where an append resumes
    complete_lines BIGINT NOT NULL DEFAULT 0,   -- lines before that point
    resume         JSON,                        -- what the format needs to go on from there
    UNIQUE (path, format)
);
CREATE TABLE IF NOT EXISTS violations (
    source_id BIGINT NOT NULL,
    locator   VARCHAR NOT NULL,
    severity  VARCHAR NOT NULL CHECK (severity IN ('error', 'warning', 'info')),
    rule      VARCHAR NOT NULL,
    field     VARCHAR NOT NULL,
    message   VARCHAR NOT NULL,
    line      BIGINT             -- the line the finding is about; NULL for findings about the whole file
);
CREATE TABLE IF NOT EXISTS rejects (
    source_id BIGINT NOT NULL,
    locator   VARCHAR NOT NULL,
    raw       VARCHAR NOT NULL,
    line      BIGINT
);
CREATE TABLE IF NOT EXISTS decisions (
    source_id  BIGINT NOT NULL,
    format     VARCHAR NOT NULL,
    game_id    VARCHAR,
    turn       BIGINT,
    agent_id   VARCHAR,
    model      VARCHAR,
    action     VARCHAR,
    valid      BOOLEAN NOT NULL,
    latency_ms DOUBLE,
    tokens     BIGINT,
    locator    VARCHAR
);
"""

VIOLATION_SCHEMA = pa.schema(
    [
        ("source_id", pa.int64()),
        ("locator", pa.string()),
        ("severity", pa.string()),
        ("rule", pa.string()),
        ("field", pa.string()),
        ("message", pa.string()),
        ("line", pa.int64()),
    ]
)
REJECT_SCHEMA = pa.schema(
    [("source_id", pa.int64()), ("locator", pa.string()), ("raw", pa.string()), ("line", pa.int64())]
)
LINE_LOCATOR = re.compile(r"line (\d+)")


@dataclass(frozen=True)
class Violation:
    """One finding: where (`locator`, `field`), how bad (`severity`), which `rule`, and why."""

    locator: str
    severity: str
    rule: str
    field: str
    message: str
    # The line the finding is about, where the locator does not say it (`response r-12`).
    line: int | None = dataclasses.field(default=None, compare=False)


def default_db() -> Path:
    return Path(os.environ.get("WORKBENCH_DB", DEFAULT_DB))


def connect(db: str | os.PathLike | None = None, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open (or create) a workbench database with every table in place.

    `db=None` means `$WORKBENCH_DB` or `data/workbench.duckdb`; `":memory:"` works too.
    """
    from workbench.registry import FORMATS

    target = ":memory:" if str(db) == ":memory:" else Path(db) if db is not None else default_db()
    if target != ":memory:":
        if read_only and not target.exists():
            raise WorkbenchError(f"database {target} does not exist; run `workbench demo` or `workbench ingest` first")
        target.parent.mkdir(parents=True, exist_ok=True)
    try:
        con = duckdb.connect(str(target), read_only=read_only)
    except duckdb.IOException as exc:
        raise WorkbenchError(_lock_message(target, exc)) from None
    except duckdb.Error as exc:
        raise WorkbenchError(f"cannot open database {target}: {first_line(exc)}") from None
    con.execute("SET TimeZone = 'UTC'")  # timestamps are stored and shown in UTC
    if not read_only:
        _refuse_older_schema(con, target)
        con.execute(SHARED_TABLES)
        for fmt in FORMATS.values():
            con.execute(fmt.tables)
    return con


def _refuse_older_schema(con, target) -> None:
    """A database written before files could grow has no place to record where an
    append resumes; mixing the two would double rows, so it is refused in one line."""
    columns = {name for (name,) in con.execute(
        "SELECT column_name FROM duckdb_columns() WHERE table_name = 'sources' AND schema_name = 'main'"
    ).fetchall()}
    if columns and "resume" not in columns:
        con.close()
        raise OlderDatabase(
            f"database {target} was written by an older workbench (no append support); "
            f"ingest into a new file: delete it, or pass --db"
        )


def _lock_message(target, exc: Exception) -> str:
    text = str(exc)
    if "lock" in text.lower():
        pid = re.search(r"PID (\d+)", text)
        holder = f" by process {pid.group(1)}" if pid else " by another process"
        return (
            f"database {target} is locked{holder}; close the notebook kernel or program using it, "
            f"or pass --db to use another file"
        )
    return f"cannot open database {target}: {first_line(exc)}"



def line_of(locator: str, line: int | None = None) -> int | None:
    """The line a finding is about: given, or read from a `line N` locator."""
    if line is not None:
        return line
    match = LINE_LOCATOR.fullmatch(locator)
    return int(match.group(1)) if match else None


def add_violations(con, source_id: int, violations: list[Violation], whole_file: bool = False) -> None:
    """Store findings. A finding about the whole file (drift counted over all its lines)
    has no line: an append recomputes those, and keeps the ones about lines."""
    if not violations:
        return
    columns = {name: [getattr(v, name) for v in violations] for name in VIOLATION_SCHEMA.names[1:-1]}
    columns["line"] = [None if whole_file else line_of(v.locator, v.line) for v in violations]
    violation_rows = pa.table({"source_id": [source_id] * len(violations), **columns}, schema=VIOLATION_SCHEMA)
    con.execute("INSERT INTO violations SELECT * FROM violation_rows")


def add_rejects(con, source_id: int, rejects: list[tuple]) -> None:
    """`rejects` holds (locator, raw text) pairs, or (locator, raw text, line) where the
    locator does not name the line."""
    if not rejects:
        return
    reject_rows = pa.table(
        {
            "source_id": [source_id] * len(rejects),
            "locator": [r[0] for r in rejects],
            "raw": [r[1] for r in rejects],
            "line": [line_of(r[0], r[2] if len(r) > 2 else None) for r in rejects],
        },
        schema=REJECT_SCHEMA,
    )
    con.execute("INSERT INTO rejects SELECT * FROM reject_rows")


def tables_with(con, *columns: str) -> list[str]:
    """The base tables that have every one of `columns`."""
    rows = con.execute(
        "SELECT table_name FROM duckdb_columns() WHERE NOT internal AND database_name = current_database() "
        "AND schema_name = 'main' AND column_name IN (SELECT unnest($columns)) "
        "AND table_name IN (SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' "
        "AND database_name = current_database()) "
        "GROUP BY table_name HAVING count(DISTINCT column_name) = $n ORDER BY table_name",
        {"columns": list(columns), "n": len(columns)},
    ).fetchall()
    return [name for (name,) in rows]


def query_frame(con, sql: str, params=None):
    """Run a query and return a polars frame (through Arrow, no copy per row).

    DuckDB refuses a new query while an `execute()` result is only partly fetched:
    fetch results with `fetchall()` before calling this.
    """
    return con.sql(sql, params=params or {}).pl()
