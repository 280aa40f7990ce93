"""The DuckDB catalog: opening a database, the shared tables, and bulk writers for findings.

Every format declares its own tables in its folder; the tables here are the ones all
formats share: what was read (`sources`), what was wrong with it (`violations`), what
could not be read at all (`rejects`) and every agent decision (`decisions`). Opening a
database creates nothing: `registry.create_tables` does, for ingest and `workbench.connect`.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import duckdb

from workbench.errors import OlderDatabase, WorkbenchError, first_line, is_interrupt
from workbench.paths import writable_folder
from workbench.schema import Column, Table
from workbench.violation import FIELDS, SEVERITIES, Violation, line_of

DEFAULT_DB = Path("data/workbench.duckdb")

SOURCE_IDS = "CREATE SEQUENCE IF NOT EXISTS source_ids START 1;\n"

SOURCES = Table("sources", (
    Column("source_id", "BIGINT", "the file's number, which its rows in every other table carry",
           primary_key=True, default="nextval('source_ids')"),
    Column("path", "VARCHAR", "the file's absolute path, links followed; with `format`, what the file is known by",
           required=True),
    Column("sha256", "VARCHAR", "SHA-256 of the content read (the first `size` bytes)", required=True),
    Column("format", "VARCHAR", "the format it was read as: `damage`, `stellaris`, ...", required=True),
    Column("records", "BIGINT", "records it gave, valid or not (for `otel`, spans)", required=True, default="0"),
    Column("rejected", "BIGINT", "records that could not be read at all (kept in `rejects`)", required=True,
           default="0"),
    Column("ingested_at", "TIMESTAMP", "when it was last read, in the local time of the machine that read it",
           required=True, default="CAST(now() AS TIMESTAMP)"),
    Column("size", "BIGINT", "bytes of the file read", required=True, default="0"),
    Column("complete_bytes", "BIGINT", "bytes up to the last newline: where an append resumes", required=True, default="0"),
    Column("complete_lines", "BIGINT", "lines before that point", required=True, default="0"),
    Column("resume", "JSON", "what the format needs to go on from there"),
    Column("table_rows", "JSON", "its rows in each table then: a file whose rows changed since is read again"),
    Column("found_at", "VARCHAR", "where it was found, absolute, links not followed: a link that leads "
                                  "elsewhere later leaves this file missing"),
), doc="One row per file and format: the database mirrors the file's current content.",
    unique=("path", "format"), added=("table_rows", "found_at"))

# A file holds at most this many rows of findings of one rule: 600 KB of `{}` lines
# would make a million rows. The rest are counted, with where each one is, in one row.
VIOLATIONS_PER_RULE = 1000

VIOLATIONS = Table("violations", (
    Column("source_id", "BIGINT", "the file (`sources.source_id`)", required=True),
    Column("locator", "VARCHAR", "where: `line 17`, `tool get_planets`, `response r-12`", required=True),
    Column("severity", "VARCHAR", "error (breaks the specification), warning (recovered: repaired JSON, a "
                                  "defaulted value) or info (drift: an undocumented key or event type)",
           required=True, check="severity IN (" + ", ".join(f"'{s}'" for s in SEVERITIES) + ")"),
    Column("rule", "VARCHAR", "the rule broken: `not_a_json_object`, `unknown_tool`, `undocumented_key`, ...",
           required=True),
    Column("field", "VARCHAR", "dotted path: `payload.action.attack_plan`", required=True),
    Column("message", "VARCHAR", "what was expected and what was found, in words", required=True),
    Column("line", "BIGINT", "the line the finding is about; NULL for findings about the whole file"),
    Column("count", "BIGINT", f"past the first {VIOLATIONS_PER_RULE:,} findings of a rule in a file: the further "
                              f"findings this one row stands for (NULL: it is one finding)"),
    Column("locators", "VARCHAR[]", "where each finding the row stands for is"),
    Column("lines", "BIGINT[]", "the line of each"),
    Column("fields", "VARCHAR[]", "the field of each"),
), doc=f"Every finding about a file; past the first {VIOLATIONS_PER_RULE:,} of a rule, one row of the rule "
       f"counts the rest (`violation_lines` lists them all).", added=("count", "locators", "lines", "fields"))

# Every finding, one row each: the listed ones and those a counting row stands for.
VIOLATION_LINES = """
CREATE OR REPLACE VIEW violation_lines AS
SELECT source_id, locator, severity, rule, field, message, line FROM violations WHERE count IS NULL
UNION ALL
SELECT source_id, unnest(locators) AS locator, severity, rule, unnest(fields) AS field, message,
       unnest(lines) AS line
FROM violations WHERE count IS NOT NULL;
"""

# What each view holds, by its name: the shared ones here, a format's in its `tables.py`.
VIEW_DOCS = {
    "violation_lines": "Every finding, one row each: the rows of `violations` that are one finding, and each "
                       "finding a counting row stands for, with its own locator, field and line.",
}

REJECTS = Table("rejects", (
    Column("source_id", "BIGINT", "the file (`sources.source_id`)", required=True),
    Column("locator", "VARCHAR", "where: `line 17`, `row 3`, `save`", required=True),
    Column("raw", "VARCHAR", "the record as written", required=True),
    Column("line", "BIGINT", "the line it is on; NULL where the file is not read by lines (a save, a history "
                             "row, a whole OTLP export)"),
), doc="Every record that could not be read at all (not JSON, not an object, no date to place it at), kept as "
       "written; an `error` in `violations` says why.")

DECISIONS = Table("decisions", (
    Column("source_id", "BIGINT", "the file the decision is in (`sources.source_id`)", required=True),
    Column("format", "VARCHAR", "the format of that file", required=True),
    Column("game_id", "VARCHAR", "the game: Damage's `game_id`, the EC4X game, the Arena episode and the "
                                 "game-master session within their run (`<folder>/<file name>`), an OTel "
                                 "conversation (else session, else agent run, else trace)"),
    Column("turn", "BIGINT", "the turn: Damage's and EC4X's own, the Arena tick, the place of a game-master "
                             "response or of an OTel span in its game (from 1)"),
    Column("agent_id", "VARCHAR", "who decided: a Damage player, `house N` for an EC4X draft, an Arena agent, the "
                                  "game master's model, an OTel agent; NULL where the log names none"),
    Column("model", "VARCHAR", "the model as the log names it (Damage: the served `resolved_model`; a failed "
                               "call's, the model its `thinking` start asked for); NULL where unknown"),
    Column("action", "VARCHAR", "what was decided: an action kind, a tool, a draft's feature families, a turn's "
                                "error class and attempts"),
    Column("valid", "BOOLEAN", "the answer breaks no rule: its line has no error (an EC4X bot turn: `ok`; an "
                               "OTel inference span: no refusal, no broken tool call); NULL for a failed call, "
                               "which has no answer to judge"),
    Column("latency_ms", "DOUBLE", "milliseconds of the model call behind it, where the log records it (an EC4X "
                                   "bot turn: the LLM time of its failed attempts)"),
    Column("tokens", "BIGINT", "all tokens of the call behind the decision"),
    Column("locator", "VARCHAR", "where in the file: `line 17`, `response r-12`, `span <span_id>`"),
    Column("input_tokens", "BIGINT", "prompt tokens, where the log separates them (cached ones included)"),
    Column("output_tokens", "BIGINT", "completion tokens, where the log separates them"),
    Column("cached_tokens", "BIGINT", "input tokens read from the provider's cache, where the log records them"),
    Column("outcome", "VARCHAR", "`valid`, `invalid` (an answer that breaks a rule of error severity), or `failed` "
                                 "(no answer came back: a provider or transport error, a timeout, a rate limit)"),
    Column("failure", "VARCHAR", "a failed call's reason in the provider's own words (an HTTP status and its body, "
                                 "an error type); NULL for an answered call"),
    Column("round", "VARCHAR", "where in its turn, where a turn has several rounds: Damage's betting round "
                               "(`preflop`, then the street last revealed: `flop`, `turn`, `river`; draw5: `betting`)"),
    Column("response_model", "VARCHAR", "the model the reply named (a dated snapshot of the one asked for), where "
                                        "the log records it"),
    Column("retries", "BIGINT", "the calls the decision was asked again after (an EC4X bot turn: its attempts "
                                "less one), where the log records them"),
), doc="One row per agent decision in every format, so decision quality compares across games: one inference call "
       "of one model and its outcome.",
    added=("input_tokens", "output_tokens", "cached_tokens", "outcome", "failure", "round", "response_model",
           "retries"))

# A database made before a failed call was a decision of its own kept `valid` NOT NULL.
DECISIONS_VALID_NULLABLE = "ALTER TABLE decisions ALTER COLUMN valid DROP NOT NULL;\n"

# Every decision's outcome from what its format wrote: a `failure` is a failed call (no
# answer, so no validity), else `valid` says. Run on a file's new decisions after its
# load, so a format (or a plugin) writes only `valid` and, for a failed call, `failure`.
SET_OUTCOMES = """
UPDATE decisions SET outcome = CASE WHEN failure IS NOT NULL THEN 'failed' WHEN valid THEN 'valid' ELSE 'invalid' END,
                     valid = CASE WHEN failure IS NOT NULL THEN NULL ELSE coalesce(valid, false) END
WHERE source_id = $source_id AND outcome IS NULL
"""

# Which schema made a database's tables and views: opening one made by this very schema
# runs none of its statements (replacing the views would write the catalog at every
# opening, and the checkpoint at closing would write it again).
SCHEMA = Table("workbench_schema", (
    Column("fingerprint", "VARCHAR", "SHA-256 of the statements that made the tables and views", required=True),
    Column("columns", "VARCHAR[]", "the columns of its tables and views then (`table.column`)", required=True),
    Column("views", "VARCHAR", "SHA-256 of the views' definitions then, as the database holds them"),
), doc="One row: the schema that made this database's tables and views.", added=("views",))

SHARED_TABLES = (SOURCES, VIOLATIONS, REJECTS, DECISIONS, SCHEMA)
SHARED_DDL = (SOURCE_IDS + "".join(table.ddl() for table in SHARED_TABLES) + DECISIONS_VALID_NULLABLE
              + VIOLATION_LINES)

# The columns of the database's tables and views (`table.column`), and the definitions of
# its views.
_CATALOG = ("SELECT c.columns, c.names, (SELECT list(sql ORDER BY view_name) FROM duckdb_views() "
            "WHERE NOT internal AND schema_name = 'main' AND database_name = current_database()) "
            "FROM (SELECT list(table_name || '.' || column_name) AS columns, list(DISTINCT lower(table_name)) AS names "
            "FROM duckdb_columns() WHERE schema_name = 'main' AND database_name = current_database()) c")


def _catalog(con: duckdb.DuckDBPyConnection) -> tuple[set[str], set[str], str]:
    """The columns of the tables and views (`table.column`), their names in lower case
    (DuckDB finds a name in any case), and a fingerprint of the views as the database
    holds them: one redefined by someone (with the same columns, say) is made again."""
    columns, names, views = con.execute(_CATALOG).fetchall()[0]
    return set(columns or ()), set(names or ()), hashlib.sha256("\n".join(views or ()).encode()).hexdigest()


def create_schema(con: duckdb.DuckDBPyConnection, ddl: str,
                  made: Callable[[duckdb.DuckDBPyConnection, set[str]], None] = lambda con, tables: None,
                  bound: frozenset[str] = frozenset()) -> None:
    """Run `ddl` (the statements that make every table and view), unless this database
    was made by it and still holds every column of every table and view it had then,
    and its views as they were. `made` is told, in the same transaction, which tables
    and views were not there, or lacked a column they now have. A database holding a table or view named as one of
    `bound` (the batches a load reads, `schema.BOUND_NAMES`) is refused."""
    fingerprint = hashlib.sha256(ddl.encode()).hexdigest()
    present, names, views = _catalog(con)
    _refuse_bound_names(names & bound)
    recorded = []
    if f"{SCHEMA.name}.views" in present:
        recorded = con.execute(f"SELECT fingerprint, columns, views FROM {SCHEMA.name}").fetchall()
        if (recorded and recorded[0][0] == fingerprint and present.issuperset(recorded[0][1])
                and recorded[0][2] == views):
            return
    elif f"{SCHEMA.name}.fingerprint" in present:  # made before the views were remembered
        recorded = con.execute(f"SELECT fingerprint, columns FROM {SCHEMA.name}").fetchall()
    with transaction(con):  # all of it or none: a database is never left with part of its tables
        # A table that lost a column it was made with (someone dropped it) is made
        # again whole: `CREATE TABLE IF NOT EXISTS` would leave it without the column.
        lost = {name.split(".")[0] for name in (recorded[0][1] if recorded else ()) if name not in present}
        for table in sorted(lost & _tables(con)):
            con.execute(f"DROP TABLE {table}")
        present = {name for name in present if name.split(".")[0] not in lost}
        if present:  # an empty database holds nothing of anyone else's
            _refuse_foreign_views(con, ddl)
        try:
            con.execute(ddl)
        except duckdb.Error as exc:
            if not present:
                raise
            # A foreign object our views or columns cannot be made over.
            raise WorkbenchError(f"this database holds tables the workbench did not make ({first_line(exc)}); "
                                 f"ingest into a new database file (--db)") from None
        if present:
            _refuse_foreign_tables(con, ddl)
        columns, _, views = _catalog(con)
        made(con, {c.split(".")[0] for c in columns - present})
        con.execute(f"DELETE FROM {SCHEMA.name}")
        con.execute(f"INSERT INTO {SCHEMA.name} (fingerprint, columns, views) VALUES (?, ?, ?)",
                    [fingerprint, sorted(columns), views])


def _refuse_bound_names(clash: set[str]) -> None:
    """A table or view named as a batch a load binds (`schema.BOUND_NAMES`) would be read
    in its place: the ingest would store wrong rows, and say nothing."""
    clash = sorted(clash)
    if clash:
        raise WorkbenchError(f"this database has a table or view `{clash[0]}`, a name the workbench reads its own "
                             f"rows under while it loads; rename it (ALTER TABLE or ALTER VIEW ... RENAME TO), "
                             f"or ingest into a new database file (--db)")


def _refuse_foreign_views(con: duckdb.DuckDBPyConnection, ddl: str) -> None:
    """A view where the workbench keeps a table was made by someone else."""
    clash = sorted(set(_made_by(ddl)[0]) & {name for (name,) in con.execute(_VIEW_NAMES).fetchall()})
    if clash:
        raise WorkbenchError(f"this database has a view `{clash[0]}` where the workbench keeps a table; ingest "
                             f"into a new database file (--db)")


def _refuse_foreign_tables(con: duckdb.DuckDBPyConnection, ddl: str) -> None:
    """A table of the workbench's name that `ddl` left other than it makes them was made by
    someone else (`CREATE TABLE IF NOT EXISTS` keeps it): a column missing or of another
    type, or one more that cannot be left NULL. The database is refused whole, and the
    transaction that was making it rolls back."""
    tables, ours = _made_by(ddl)
    theirs = {(table, column): (kind, nullable) for table, column, kind, nullable in con.execute(_COLUMN_TYPES).fetchall()
              if table in tables}
    for (table, column), kind in ours.items():
        if theirs.get((table, column), (None,))[0] != kind:
            found = theirs.get((table, column), ("no such column",))[0]
            raise WorkbenchError(f"this database has a table `{table}` that the workbench did not make (its "
                                 f"column `{column}` should be {kind}: {found}); ingest into a new database "
                                 f"file (--db)")
    for (table, column), (_, nullable) in theirs.items():
        if (table, column) not in ours and not nullable:
            raise WorkbenchError(f"this database has a table `{table}` that the workbench did not make (its "
                                 f"column `{column}` cannot be NULL); ingest into a new database file (--db)")


@functools.cache
def _made_by(ddl: str) -> tuple[frozenset[str], dict[tuple[str, str], str]]:
    """The tables `ddl` makes in an empty database, and the type of each of their columns."""
    scratch = duckdb.connect(":memory:", config=NO_EXTENSIONS)
    try:
        scratch.execute(ddl)
        tables = frozenset(_tables(scratch))
        return tables, {(table, column): kind for table, column, kind, _ in scratch.execute(_COLUMN_TYPES).fetchall()
                        if table in tables}
    finally:
        scratch.close()


_VIEW_NAMES = ("SELECT view_name FROM duckdb_views() WHERE NOT internal AND schema_name = 'main' "
               "AND database_name = current_database()")
# The columns of tables (not views), with their types and whether they may be NULL.
_COLUMN_TYPES = ("SELECT c.table_name, c.column_name, c.data_type, c.is_nullable FROM duckdb_columns() c "
                 "JOIN duckdb_tables() t ON t.table_oid = c.table_oid "
                 "WHERE c.schema_name = 'main' AND c.database_name = current_database()")


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """One transaction: committed if the block ends, rolled back if it raises."""
    con.begin()
    try:
        yield
        con.commit()
    except BaseException as exc:
        rollback(con)
        if is_interrupt(exc):
            raise KeyboardInterrupt from None  # Ctrl-C reached DuckDB first: the same stop
        raise


def _tables(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {name for (name,) in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' AND database_name = current_database()"
    ).fetchall()}


def table_rows(con: duckdb.DuckDBPyConnection, source_id: int, tables: list[str]) -> dict[str, int]:
    """How many rows of each of `tables` the file `source_id` has (those it has any in)."""
    counts = " UNION ALL ".join(f"SELECT '{table}', count(*) FROM {table} WHERE source_id = $source_id"
                                for table in tables)
    return {table: n for table, n in con.execute(counts, {"source_id": source_id}).fetchall() if n}


def forget_orphans(con: duckdb.DuckDBPyConnection, tables: list[str]) -> None:
    """Remove the rows of files the database no longer knows (someone dropped
    `sources`, or deleted some of its rows) from `tables`: a file read as new would
    otherwise have its rows twice. One transaction; nothing written when there are none."""
    ids = " UNION ALL ".join(f"SELECT source_id FROM {table}" for table in tables)
    if not con.execute(f"SELECT EXISTS (SELECT 1 FROM ({ids}) WHERE source_id NOT IN (SELECT source_id FROM sources))"
                       ).fetchall()[0][0]:
        return
    with transaction(con):
        for table in tables:
            con.execute(f"DELETE FROM {table} WHERE source_id NOT IN (SELECT source_id FROM sources)")


def read_again(con: duckdb.DuckDBPyConnection, formats: list[str]) -> None:
    """The files of `formats` are read whole at their next ingest (their recorded hash
    matches no content), as if they had changed."""
    con.execute("UPDATE sources SET sha256 = '' WHERE list_contains(?, format)", [formats])


def rollback(con) -> None:
    """Roll back the open transaction, if DuckDB has not ended it itself (an
    interrupted statement or commit does) and the connection is open (a Ctrl-C between
    a `with transaction` and its block leaves the rollback to the transaction's
    generator being collected, after the connection was closed, rolling it back)."""
    try:
        con.rollback()
    except (duckdb.TransactionException, duckdb.ConnectionException):
        pass


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
    # A database written before a column was added to `sources` is still the workbench's.
    if read_only and not set(SOURCES.names) - set(SOURCES.added) <= column_names(con, SOURCES.name):
        con.close()
        raise WorkbenchError(f"database {target} holds no workbench tables (no `sources` table the workbench "
                             f"made); run `workbench demo`, or `workbench ingest` into a new database first")
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
    if not con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = 'violation_lines' "
                       "AND database_name = current_database()").fetchall()[0][0]:
        con.execute("CREATE TEMP VIEW violation_lines AS "
                    "SELECT source_id, locator, severity, rule, field, message, line FROM violations")


@contextmanager
def bulk_connection(db: str | os.PathLike | None = None,
                    settings: tuple[str, ...] = ()) -> Iterator[duckdb.DuckDBPyConnection]:
    """`connect(db)` for an ingest: a database file is attached to an in-memory instance
    with row groups of `BULK_ROW_GROUP_ROWS` rows (`_Hosts`), `settings` (SET
    statements) made there, and detached after the block, which writes it to disk as
    closing would. A database this process holds open (a notebook's) is shared as it
    is, and a database in memory is a plain one of its own: neither gets `settings`.
    Why row groups are written while a file loads: docs/performance.md, "How the ingest is fast"."""
    target = _target(db, read_only=False)
    host = con = None
    if target != ":memory:":
        host = _HOSTS.take()
        try:
            con = _opened(target, lambda: _attached(host, target))
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
    not the write-ahead log, which the detach would write into the file right after (a
    1% append of 100k EC4X drafts: 59.5 to 57.5 ms). For the last file of an ingest
    only: each such commit rewrites every table's last row group, where the log of many
    files is written once (200 small files took 26% longer). Nothing is set on a
    connection that shares an instance this process opened (a notebook's)."""
    if con in _HOSTED:
        con.execute("SET checkpoint_threshold = '0b'")
        con.execute("SET auto_checkpoint_skip_wal_threshold = 0")


def _target(db, read_only: bool) -> str | Path:
    target = ":memory:" if str(db) == ":memory:" else Path(db) if db is not None else default_db()
    if target != ":memory:":
        if read_only and not target.exists():
            raise WorkbenchError(f"database {target} does not exist; run `workbench demo` or `workbench ingest` first")
        _refuse_foreign_file(target)
        writable_folder(target)
    return target


# Every connection the workbench opens: DuckDB never downloads or loads an extension
# behind the user's back (a SQLite file named as --db made it fetch `sqlite_scanner`).
NO_EXTENSIONS: dict[str, str | bool | int | float | list[str]] = {"autoinstall_known_extensions": False,
                                                                  "autoload_known_extensions": False}

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
    if head and head[offset:offset + len(magic)] != magic:
        kind = " (it is a SQLite database; `workbench ingest` reads the companion's history from it)" \
            if head.startswith(SQLITE_MAGIC) else ""
        raise WorkbenchError(f"{target} is not a DuckDB database{kind}; name a workbench database with --db")


def _opened(target, opening: Callable[[], duckdb.DuckDBPyConnection | None],
            read_only: bool = False) -> duckdb.DuckDBPyConnection | None:
    """The connection `opening` makes, ready for use (an older database refused); DuckDB's
    errors in one line."""
    try:
        con = opening()
    except duckdb.IOException as exc:
        raise WorkbenchError(_lock_message(target, exc)) from None
    except duckdb.ResourceInUseException:
        raise WorkbenchError(f"database {target} is being written by an ingest in this process; "
                             f"open it once that ingest is done") from None
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
_HOST_SETTINGS = ("threads", "memory_limit", "preserve_insertion_order", "temp_directory", "TimeZone",
                  "write_buffer_row_group_count", "checkpoint_threshold", "auto_checkpoint_skip_wal_threshold")


class _Hosts:
    """In-memory DuckDB instances that an ingest attaches its database file to: the row
    group size is an option of ATTACH only. One is kept between ingests: starting an
    instance takes 10 ms (DuckDB registers its built-in functions), a seventh of a 1%
    append of 100k EC4X drafts, and `workbench ingest --watch` ingests at each change.
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
            host, self._idle = (None, host) if self._idle is None else (host, self._idle)
        if host is not None:
            host.close()


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


def add_violations(con, source_id: int, violations: list[Violation], whole_file: bool = False) -> None:
    """Store findings. A finding about the whole file (drift counted over all its lines)
    has no line: an append recomputes those, and keeps the ones about lines."""
    if not violations:
        return
    columns = {name: [getattr(v, name) for v in violations] for name in FIELDS}
    columns["line"] = [None if whole_file else line_of(v.locator, v.line) for v in violations]
    VIOLATIONS.insert_rows(con, {"source_id": [source_id] * len(violations), **columns})


def listed_per_rule(con, source_id: int) -> dict[str, int]:
    """How many rows of findings about lines each rule has in this file, listed one by one."""
    return dict(con.execute("SELECT rule, count(*) FROM violations WHERE source_id = ? AND line IS NOT NULL "
                            "AND count IS NULL GROUP BY rule", [source_id]).fetchall())


def add_counted(con, source_id: int, rule: str, severity: str, found: list[tuple[str, int | None, str]]) -> None:
    """The findings of `rule` past the first VIOLATIONS_PER_RULE of this file, each found
    (locator, line, field), counted in one row with those it counted before (an append's
    are added to the row of the lines before it, as one ingest of the whole file has)."""
    earlier = con.execute("SELECT locators, lines, fields FROM violations WHERE source_id = ? AND rule = ? "
                          "AND severity = ? AND count IS NOT NULL", [source_id, rule, severity]).fetchall()
    if earlier:
        con.execute("DELETE FROM violations WHERE source_id = ? AND rule = ? AND severity = ? AND count IS NOT NULL",
                    [source_id, rule, severity])
        found = [place for locators, lines, fields in earlier for place in zip(locators, lines, fields)] + found
    lines = [line for _, line, _ in found if line is not None]
    span = f"lines {min(lines)}-{max(lines)}" if lines else f"{len(found)} places"
    VIOLATIONS.insert_rows(con, {
        "source_id": [source_id], "locator": [span], "severity": [severity], "rule": [rule],
        "field": ["(many)"], "line": [min(lines) if lines else None], "count": [len(found)],
        "message": [f"{len(found):,} more findings of this rule ({span}); the first {VIOLATIONS_PER_RULE:,} of the "
                    f"file are listed one by one"],
        "locators": [[locator for locator, _, _ in found]], "lines": [[line for _, line, _ in found]],
        "fields": [[field for _, _, field in found]]})


def add_rejects(con, source_id: int, rejects: list[tuple]) -> None:
    """`rejects` holds (locator, raw text) pairs, or (locator, raw text, line) where the
    locator does not name the line."""
    if not rejects:
        return
    REJECTS.insert_rows(con, {
        "source_id": [source_id] * len(rejects),
        "locator": [r[0] for r in rejects],
        "raw": [r[1] for r in rejects],
        "line": [line_of(r[0], r[2] if len(r) > 2 else None) for r in rejects],
    })


def forget_decisions_from(con, source_id: int, line: int) -> None:
    """Remove a file's decisions located at its lines from `line` on (`line N`)."""
    con.execute(f"DELETE FROM decisions WHERE source_id = ? AND {DECISION_LINE} >= ?", [source_id, line])


# The line of a decision located `line N` (NULL for any other locator).
DECISION_LINE = "CASE WHEN starts_with(locator, 'line ') THEN TRY_CAST(substr(locator, 6) AS BIGINT) END"


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
        column.name if column.name in present else
        f"{outcome if column.name == 'outcome' else 'NULL'}::{column.type} AS {column.name}"
        for column in DECISIONS.columns)
    database = con.execute("SELECT current_database()").fetchall()[0][0].replace('"', '""')
    con.execute(f'CREATE TEMP VIEW {DECISIONS.name} AS SELECT {columns} FROM "{database}".main.{DECISIONS.name}')


def column_names(con, table: str) -> set[str]:
    """The columns `table` has (a database written before a column was added lacks it)."""
    if not is_database(con):
        return con.columns(table)
    return {name for (name,) in con.execute(
        f"SELECT column_name FROM ({_COLUMN_TYPES}) WHERE table_name = ?", [table]).fetchall()}


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
    return query_frame(con, """
        SELECT s.format, count(DISTINCT s.source_id) AS files, sum(s.records)::BIGINT AS records,
               sum(s.rejected)::BIGINT AS rejected, coalesce(sum(v.errors), 0)::BIGINT AS errors,
               coalesce(sum(v.warnings), 0)::BIGINT AS warnings, coalesce(sum(v.infos), 0)::BIGINT AS info
        FROM sources s LEFT JOIN (
            SELECT source_id, count(*) FILTER (severity = 'error') AS errors,
                   count(*) FILTER (severity = 'warning') AS warnings, count(*) FILTER (severity = 'info') AS infos
            FROM violation_lines GROUP BY source_id) v USING (source_id)
        GROUP BY s.format ORDER BY s.format
    """)
