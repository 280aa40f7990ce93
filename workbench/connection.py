"""Connections to a workbench database: opening one for reading or writing (refusing a
file that is not one, or one an older workbench wrote), the bulk connection an ingest
writes through and its pool of DuckDB instances, and reading a database's rows as
polars frames, from a database or a Parquet tree open on Spark."""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from workbench.catalog import COLUMN_TYPES, DECISIONS, NO_EXTENSIONS, SOURCES
from workbench.errors import OlderDatabase, WorkbenchError, first_line
from workbench.paths import writable_folder

DEFAULT_DB = Path("data/workbench.duckdb")


def default_db() -> Path:
    """`$WORKBENCH_DB`, else `data/workbench.duckdb`: an empty `WORKBENCH_DB=` is taken as
    not set (it named `.`, a folder, not a database)."""
    return Path(os.environ.get("WORKBENCH_DB") or DEFAULT_DB)


def connect(db: str | os.PathLike | None = None, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open (or create) a workbench database.

    `db=None` means `$WORKBENCH_DB` or `data/workbench.duckdb`; `":memory:"` works too.
    Creates no table: `workbench.connect` (or `registry.create_tables`) does.
    """
    target = _target(db, read_only)
    con = _opened(target, lambda: duckdb.connect(str(target), read_only=read_only), read_only)
    if con is None:  # duckdb.connect gives a connection or raises
        raise WorkbenchError(f"cannot open database {target}")
    # A database written before a column was added to `sources` is still the workbench's.
    if read_only and not set(SOURCES.names) - set(SOURCES.added) <= column_names(con, SOURCES.name):
        con.close()
        raise WorkbenchError(
            f"database {target} holds no workbench tables (no `sources` table the workbench "
            f"made); run `workbench demo`, or `workbench ingest` into a new database first"
        )
    if read_only:
        _read_as_now(con)
    return con


def _read_as_now(con: duckdb.DuckDBPyConnection) -> None:
    """A database written before `violation_lines` (and the rows that count findings) is
    read as it is: every finding of it is a row of `violations`, and a view of this
    connection's own says so (an ingest makes the database's own). One written before a
    column of `decisions` is read with that column empty, and each decision's outcome
    as its validity said (no call was told failed then), through a view of this
    connection's own that stands in for the table."""
    _decisions_as_now(con)
    if not con.execute(
        "SELECT count(*) FROM duckdb_views() WHERE view_name = 'violation_lines' AND database_name = current_database()"
    ).fetchall()[0][0]:
        con.execute(
            "CREATE TEMP VIEW violation_lines AS "
            "SELECT source_id, locator, severity, rule, field, message, line FROM violations"
        )


@contextmanager
def bulk_connection(
    db: str | os.PathLike | None = None, settings: tuple[str, ...] = ()
) -> Iterator[duckdb.DuckDBPyConnection]:
    """`connect(db)` for an ingest: a database file is attached to an in-memory instance
    with row groups of `BULK_ROW_GROUP_ROWS` rows (`_Hosts`), `settings` (SET
    statements) made there, and detached after the block, which writes it to disk as
    closing would. A database this process holds open (a notebook's) is shared as it
    is, and a database in memory is a plain one of its own: neither gets `settings`.
    Why row groups are written while a file loads: docs/performance.md, "How the ingest is fast"."""
    target = _target(db, read_only=False)
    host = con = None
    if isinstance(target, Path):
        host = taken = _HOSTS.take()
        try:
            con = _opened(target, lambda: _attached(taken, target))
        except BaseException:
            host.close()
            raise
    if con is None:  # in memory, or the file is open in this process: a plain connection shares it
        if host is not None:
            _HOSTS.give_back(host)
        with contextlib.closing(connect(target)) as con:
            threads = _setting(con, "threads")
            try:
                yield con
            finally:
                # A load sets one thread for a while (`one_thread`), on the instance; a
                # Ctrl-C in a statement then aborts the transaction, and its own restore
                # fails: it is restored here, once the transaction has rolled back. What
                # ended the block, if anything, is what the caller hears.
                with contextlib.suppress(duckdb.Error):
                    if _setting(con, "threads") != threads:
                        con.execute(f"SET threads = {int(threads)}")
        return
    assert host is not None  # an attached file's connection comes from a host of the pool
    try:
        _HOSTED.add(con)
        for setting in settings:
            con.execute(setting)
        yield con
        con.execute("USE memory")
        con.execute("DETACH workbench")
    except BaseException:
        host.close()  # and the file with it, its transaction rolled back
        raise
    finally:
        _HOSTED.discard(con)
    con.close()
    _HOSTS.give_back(host)


# The connections `bulk_connection` attached to an instance of its own: theirs to set.
# The connections themselves, not their ids: one a Ctrl-C left here stays alive, so its
# id is never another's.
_HOSTED: set[duckdb.DuckDBPyConnection] = set()


def commits_write_the_file(con: duckdb.DuckDBPyConnection) -> None:
    """The commits of an ingest's connection from now on write the database file itself,
    not the write-ahead log, which the detach would write into the file right after. For
    the last file of an ingest only: each such commit rewrites every table's last row
    group, where the log of many files is written once (docs/performance.md). Nothing is set on a
    connection that shares an instance this process opened (a notebook's)."""
    if con in _HOSTED:
        con.execute("SET checkpoint_threshold = '0b'")
        con.execute("SET auto_checkpoint_skip_wal_threshold = 0")


def _target(db, read_only: bool) -> str | Path:
    if str(db) == ":memory:":
        return ":memory:"
    target = Path(db) if db is not None else default_db()
    if read_only and not target.exists():
        raise WorkbenchError(f"database {target} does not exist; run `workbench demo` or `workbench ingest` first")
    _refuse_foreign_file(target)
    writable_folder(target)
    return target


# Every connection the workbench opens: DuckDB never downloads or loads an extension
# behind the user's back (a SQLite file named as --db made it fetch `sqlite_scanner`).

# A DuckDB database file begins with an 8-byte checksum, then these bytes.
DUCKDB_MAGIC = (8, b"DUCK")
SQLITE_MAGIC = b"SQLite format 3\x00"


def _refuse_foreign_file(target: Path) -> None:
    """A file that is there and is not a DuckDB database is refused in one line before
    DuckDB opens it (it would try to read, or to load an extension for, what it is)."""
    try:
        with open(target, "rb") as handle:
            head = handle.read(16)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return
    except OSError as exc:
        raise WorkbenchError(f"cannot open database {target}: {exc.strerror or exc}") from None
    offset, magic = DUCKDB_MAGIC
    if head and head[offset : offset + len(magic)] != magic:
        kind = (
            " (it is a SQLite database; `workbench ingest` reads the companion's history from it)"
            if head.startswith(SQLITE_MAGIC)
            else ""
        )
        raise WorkbenchError(f"{target} is not a DuckDB database{kind}; name a workbench database with --db")


def _opened(
    target, opening: Callable[[], duckdb.DuckDBPyConnection | None], read_only: bool = False
) -> duckdb.DuckDBPyConnection | None:
    """The connection `opening` makes, ready for use (an older database refused); DuckDB's
    errors in one line."""
    try:
        con = opening()
    except duckdb.IOException as exc:
        raise WorkbenchError(_lock_message(target, exc)) from None
    except duckdb.ResourceInUseException:
        raise WorkbenchError(
            f"database {target} is being written by an ingest in this process; open it once that ingest is done"
        ) from None
    except duckdb.Error as exc:
        raise WorkbenchError(f"cannot open database {target}: {first_line(exc)}") from None
    if con is not None:
        con.execute("SET TimeZone = 'UTC'")  # timestamps are stored and shown in UTC
        # Set on the instance, not asked for at connecting: DuckDB refuses a second
        # connection to a file with other options than the first (a notebook's own).
        for setting, value in NO_EXTENSIONS.items():
            con.execute(f"SET {setting} = {str(value).lower()}")
        if not read_only:
            try:
                _refuse_older_schema(con, target)
            except OlderDatabase:
                con.close()
                raise
    return con


# Row groups of an ingest's writes, a quarter of DuckDB's 122,880 rows. A file's rows
# then fill row groups while they are inserted, which DuckDB compresses and writes at
# once, on a core the Python checks leave idle, and the rest are compressed in parallel
# at commit (docs/performance.md).
BULK_ROW_GROUP_ROWS = 32_768
# The settings an ingest may change on its instance: DuckDB's own again before the next
# ingest uses it.
_HOST_SETTINGS = (
    "threads",
    "memory_limit",
    "preserve_insertion_order",
    "temp_directory",
    "TimeZone",
    "write_buffer_row_group_count",
    "checkpoint_threshold",
    "auto_checkpoint_skip_wal_threshold",
)


class _Hosts:
    """In-memory DuckDB instances that an ingest attaches its database file to: the row
    group size is an option of ATTACH only. One is kept between ingests: starting an
    instance registers DuckDB's built-in functions, a good part of a small append
    (docs/performance.md), and `workbench ingest --watch` ingests at each change.
    Each ingest has its own connection to it, its temporary objects going with it, and
    finds DuckDB's settings."""

    def __init__(self):
        self._lock = threading.Lock()
        self._idle: duckdb.DuckDBPyConnection | None = None
        os.register_at_fork(before=self._close_idle, after_in_child=self._new_lock)

    def _close_idle(self) -> None:
        """Before a fork: the child must not hold the instance, whose threads are not
        forked with it (a child that used it aborted; one that closed it, even at exit,
        crashed). The parent starts another at its next ingest."""
        with self._lock:
            host, self._idle = self._idle, None
        if host is not None:
            host.close()

    def _new_lock(self) -> None:
        # In the child: held by another thread of the parent, the lock would stay held.
        self._lock = threading.Lock()

    def take(self) -> duckdb.DuckDBPyConnection:
        with self._lock:
            host, self._idle = self._idle, None
        return host if host is not None else duckdb.connect(":memory:", config=NO_EXTENSIONS)

    def give_back(self, host: duckdb.DuckDBPyConnection) -> None:
        try:
            for setting in _HOST_SETTINGS:
                host.execute(f"RESET {setting}")
        except duckdb.Error:
            # One that spilled to disk keeps its temporary directory until it closes
            # (DuckDB cannot switch it): the next ingest would spill beside this database.
            host.close()
            return
        with self._lock:
            surplus, self._idle = (None, host) if self._idle is None else (host, self._idle)
        if surplus is not None:
            surplus.close()


_HOSTS = _Hosts()


def _attached(host: duckdb.DuckDBPyConnection, target: Path) -> duckdb.DuckDBPyConnection | None:
    """A connection to `host` with the database file attached as `workbench`, the
    default catalog; None if this process has the file open already (a notebook's
    connection, say): DuckDB attaches a file once per process."""
    con = host.cursor()
    try:
        con.execute(f"ATTACH ? AS workbench (ROW_GROUP_SIZE {BULK_ROW_GROUP_ROWS})", [str(target)])
        con.execute("USE workbench")
        # Where a file connection spills: an in-memory one would spill to `.tmp` in the
        # working directory.
        con.execute("SET temp_directory = ?", [f"{target}.tmp"])
        # Each row group is written to the file as soon as it is full, not five at a
        # time: on a core the checks leave idle, while the load goes on.
        con.execute("SET write_buffer_row_group_count = 1")
    except duckdb.ResourceInUseException:
        con.close()
        return None
    except BaseException:
        con.close()
        raise
    return con


def _setting(con: duckdb.DuckDBPyConnection, name: str):
    return con.execute(f"SELECT current_setting('{name}')").fetchall()[0][0]


@contextmanager
def one_thread(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """DuckDB on one thread for the statements of the block, then as many as before.
    Already on one (an append's `_one_thread_if_small` around a chunk's parse), nothing
    is set."""
    threads = _setting(con, "threads")
    if int(threads) == 1:
        yield
        return
    con.execute("SET threads = 1")
    try:
        yield
    finally:
        try:
            con.execute(f"SET threads = {int(threads)}")
        except duckdb.Error:
            # The connection is closing, or its transaction aborted (Ctrl-C): the setting
            # goes with its instance, or `bulk_connection` restores it on one it shares.
            pass


@contextmanager
def reading(con_or_db):
    """The connection given, or a short-lived read-only one on a database path, closed
    after use: a notebook never holds the database while `workbench ingest` writes.

    A context manager: `with reading(db) as con: ...`.

    Args:
        con_or_db: a database path (str or path-like), opened read-only for the block and
            closed after it; or a connection, used as it is and left open.

    Returns:
        A context manager that yields the connection.

    Raises:
        WorkbenchError: the path is not an existing workbench database, or it is locked.
    """
    if isinstance(con_or_db, (str, os.PathLike)):
        con = connect(con_or_db, read_only=True)
        try:
            yield con
        finally:
            con.close()
    else:
        yield con_or_db


def _refuse_older_schema(con, target) -> None:
    """A database written before files could grow has no place to record where an
    append resumes; mixing the two would double rows, so it is refused in one line."""
    columns = column_names(con, SOURCES.name)
    if columns and "resume" not in columns:
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


def is_database(con) -> bool:
    """A DuckDB connection, not a Parquet tree open on Spark (`workbench.spark.open`)."""
    return isinstance(con, duckdb.DuckDBPyConnection)


def holder(con) -> str:
    """What `con` is, for a message: "this database", or "this tree" (a Parquet tree open
    on Spark), whose rows come from `workbench ingest --engine spark`."""
    return "this database" if is_database(con) else "this tree"


def _decisions_as_now(con: duckdb.DuckDBPyConnection) -> None:
    present = column_names(con, DECISIONS.name)
    if not present or set(DECISIONS.names) <= present:
        return
    outcome = "CASE WHEN valid THEN 'valid' WHEN NOT valid THEN 'invalid' END"
    columns = ", ".join(
        column.name
        if column.name in present
        else f"{outcome if column.name == 'outcome' else 'NULL'}::{column.type} AS {column.name}"
        for column in DECISIONS.columns
    )
    database = con.execute("SELECT current_database()").fetchall()[0][0].replace('"', '""')
    con.execute(f'CREATE TEMP VIEW {DECISIONS.name} AS SELECT {columns} FROM "{database}".main.{DECISIONS.name}')


def column_names(con, table: str) -> set[str]:
    """The columns `table` has (a database written before a column was added lacks it)."""
    if not is_database(con):
        return con.columns(table)
    return {
        name
        for (name,) in con.execute(f"SELECT column_name FROM ({COLUMN_TYPES}) WHERE table_name = ?", [table]).fetchall()
    }


def query_frame(con, sql: str, params=None):
    """Run a query and return a polars frame (through Arrow, no copy per row).

    DuckDB refuses a new query while an `execute()` result is only partly fetched:
    fetch results with `fetchall()` before calling this.

    Args:
        con: a DuckDB connection, or a Parquet tree open on Spark (`workbench.spark.open`),
            which asks the same query of it.
        sql: the query; it names its parameters `$name`.
        params: the parameters' values by name (a dict); None: none.

    Returns:
        The query's result as a polars DataFrame, its columns those the query selects.
    """
    if not is_database(con):
        return con.frame(sql, params)
    return con.sql(sql, params=params or {}).pl()


def ordered_frame(con, sql: str, params=None):
    """`query_frame`, its rows ordered by every column in turn, nulls last: the order
    `ORDER BY ALL` gives, given here, where on Spark a sort is a job of its own (a query
    whose rows are summed in order must have the same order on both engines)."""
    frame = query_frame(con, sql, params)
    return frame.sort(frame.columns, nulls_last=True)


def format_summary(con):
    """Per format: files, records kept, lines rejected, findings by severity.

    Args:
        con: a connection to a workbench database.

    Returns:
        A polars DataFrame, one row per format in the database, sorted by format: `format`,
        `files`, `records` (kept), `rejected` (lines), and the findings by severity:
        `errors`, `warnings`, `info`.
    """
    return query_frame(
        con,
        """
        SELECT s.format, count(DISTINCT s.source_id) AS files, sum(s.records)::BIGINT AS records,
               sum(s.rejected)::BIGINT AS rejected, coalesce(sum(v.errors), 0)::BIGINT AS errors,
               coalesce(sum(v.warnings), 0)::BIGINT AS warnings, coalesce(sum(v.infos), 0)::BIGINT AS info
        FROM sources s LEFT JOIN (
            SELECT source_id, count(*) FILTER (severity = 'error') AS errors,
                   count(*) FILTER (severity = 'warning') AS warnings, count(*) FILTER (severity = 'info') AS infos
            FROM violation_lines GROUP BY source_id) v USING (source_id)
        GROUP BY s.format ORDER BY s.format
    """,
    )
