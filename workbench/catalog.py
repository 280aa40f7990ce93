"""The DuckDB catalog: shared tables, connections, and bulk writers for findings.

Every format adds its own tables (declared in its folder); the tables here are the
ones all formats share: what was read (`sources`), what was wrong with it
(`violations`), what could not be read at all (`rejects`) and every agent decision
(`decisions`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa

from workbench.errors import WorkbenchError, first_line

DEFAULT_DB = Path("data/workbench.duckdb")
SEVERITIES = ("error", "warning", "info")

SHARED_TABLES = """
CREATE SEQUENCE IF NOT EXISTS source_ids START 1;
CREATE TABLE IF NOT EXISTS sources (
    source_id   BIGINT PRIMARY KEY DEFAULT nextval('source_ids'),
    path        VARCHAR NOT NULL,
    sha256      VARCHAR NOT NULL UNIQUE,
    format      VARCHAR NOT NULL,
    records     BIGINT NOT NULL DEFAULT 0,
    rejected    BIGINT NOT NULL DEFAULT 0,
    ingested_at TIMESTAMP NOT NULL DEFAULT CAST(now() AS TIMESTAMP)
);
CREATE TABLE IF NOT EXISTS violations (
    source_id BIGINT NOT NULL,
    locator   VARCHAR NOT NULL,
    severity  VARCHAR NOT NULL CHECK (severity IN ('error', 'warning', 'info')),
    rule      VARCHAR NOT NULL,
    field     VARCHAR NOT NULL,
    message   VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS rejects (
    source_id BIGINT NOT NULL,
    locator   VARCHAR NOT NULL,
    raw       VARCHAR NOT NULL
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
    ]
)
REJECT_SCHEMA = pa.schema([("source_id", pa.int64()), ("locator", pa.string()), ("raw", pa.string())])


@dataclass(frozen=True)
class Violation:
    """One finding: where (`locator`, `field`), how bad (`severity`), which `rule`, and why."""

    locator: str
    severity: str
    rule: str
    field: str
    message: str


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
        con.execute(SHARED_TABLES)
        for fmt in FORMATS.values():
            con.execute(fmt.tables)
    return con


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



def add_violations(con, source_id: int, violations: list[Violation]) -> None:
    if not violations:
        return
    columns = {name: [getattr(v, name) for v in violations] for name in VIOLATION_SCHEMA.names[1:]}
    violation_rows = pa.table({"source_id": [source_id] * len(violations), **columns}, schema=VIOLATION_SCHEMA)
    con.execute("INSERT INTO violations SELECT * FROM violation_rows")


def add_rejects(con, source_id: int, rejects: list[tuple[str, str]]) -> None:
    """`rejects` holds (locator, raw text) pairs."""
    if not rejects:
        return
    reject_rows = pa.table(
        {
            "source_id": [source_id] * len(rejects),
            "locator": [loc for loc, _ in rejects],
            "raw": [raw for _, raw in rejects],
        },
        schema=REJECT_SCHEMA,
    )
    con.execute("INSERT INTO rejects SELECT * FROM reject_rows")


def query_frame(con, sql: str, params=None):
    """Run a query and return a polars frame (through Arrow, no copy per row).

    DuckDB refuses a new query while an `execute()` result is only partly fetched:
    fetch results with `fetchall()` before calling this.
    """
    return con.sql(sql, params=params or {}).pl()
