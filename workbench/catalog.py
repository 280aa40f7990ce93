"""The shared tables and the database's schema over its life.

Every format declares its own tables in its folder; the tables here are the ones all
formats share: what was read (`sources`), what was wrong with it (`violations`), what
could not be read at all (`rejects`) and every agent decision (`decisions`). A database
remembers the statements that made it (`create_schema`): opening it again runs none,
and a table someone dropped or that lacks a newer column is made again. Opening a
database is `connection`'s; writing a file's findings is `finding_writers`'.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import duckdb

from workbench.errors import WorkbenchError, first_line, is_interrupt
from workbench.schema import Column, Table
from workbench.violation import SEVERITIES

NO_EXTENSIONS: dict[str, str | bool | int | float | list[str]] = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}

SOURCE_IDS = "CREATE SEQUENCE IF NOT EXISTS source_ids START 1;\n"

SOURCES = Table(
    "sources",
    (
        Column(
            "source_id",
            "BIGINT",
            "the file's number, which its rows in every other table carry",
            primary_key=True,
            default="nextval('source_ids')",
        ),
        Column(
            "path",
            "VARCHAR",
            "the file's absolute path, links followed; with `format`, what the file is known by",
            required=True,
        ),
        Column("sha256", "VARCHAR", "SHA-256 of the content read (the first `size` bytes)", required=True),
        Column("format", "VARCHAR", "the format it was read as: `damage`, `stellaris`, ...", required=True),
        Column("records", "BIGINT", "records it gave, valid or not (for `otel`, spans)", required=True, default="0"),
        Column(
            "rejected",
            "BIGINT",
            "records that could not be read at all (kept in `rejects`)",
            required=True,
            default="0",
        ),
        Column(
            "ingested_at",
            "TIMESTAMP",
            "when it was last read, in the local time of the machine that read it",
            required=True,
            default="CAST(now() AS TIMESTAMP)",
        ),
        Column("size", "BIGINT", "bytes of the file read", required=True, default="0"),
        Column(
            "complete_bytes",
            "BIGINT",
            "bytes up to the last newline: where an append resumes",
            required=True,
            default="0",
        ),
        Column("complete_lines", "BIGINT", "lines before that point", required=True, default="0"),
        Column("resume", "JSON", "what the format needs to go on from there"),
        Column("table_rows", "JSON", "its rows in each table then: a file whose rows changed since is read again"),
        Column(
            "found_at",
            "VARCHAR",
            "where it was found, absolute, links not followed: a link that leads "
            "elsewhere later leaves this file missing",
        ),
    ),
    doc="One row per file and format: the database mirrors the file's current content.",
    unique=("path", "format"),
    added=("table_rows", "found_at"),
)

# A file holds at most this many rows of findings of one rule: 600 KB of `{}` lines
# would make a million rows. The rest are counted, with where each one is, in one row.
VIOLATIONS_PER_RULE = 1000

VIOLATIONS = Table(
    "violations",
    (
        Column("source_id", "BIGINT", "the file (`sources.source_id`)", required=True),
        Column("locator", "VARCHAR", "where: `line 17`, `tool get_planets`, `response r-12`", required=True),
        Column(
            "severity",
            "VARCHAR",
            "error (breaks the specification), warning (recovered: repaired JSON, a "
            "defaulted value) or info (drift: an undocumented key or event type)",
            required=True,
            check="severity IN (" + ", ".join(f"'{s}'" for s in SEVERITIES) + ")",
        ),
        Column(
            "rule",
            "VARCHAR",
            "the rule broken: `not_a_json_object`, `unknown_tool`, `undocumented_key`, ...",
            required=True,
        ),
        Column("field", "VARCHAR", "dotted path: `payload.action.attack_plan`", required=True),
        Column("message", "VARCHAR", "what was expected and what was found, in words", required=True),
        Column("line", "BIGINT", "the line the finding is about; NULL for findings about the whole file"),
        Column(
            "count",
            "BIGINT",
            f"past the first {VIOLATIONS_PER_RULE:,} findings of a rule in a file: the further "
            f"findings this one row stands for (NULL: it is one finding)",
        ),
        Column("locators", "VARCHAR[]", "where each finding the row stands for is"),
        Column("lines", "BIGINT[]", "the line of each"),
        Column("fields", "VARCHAR[]", "the field of each"),
    ),
    doc=f"Every finding about a file; past the first {VIOLATIONS_PER_RULE:,} of a rule, one row of the rule "
    f"counts the rest (`violation_lines` lists them all).",
    added=("count", "locators", "lines", "fields"),
)

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

REJECTS = Table(
    "rejects",
    (
        Column("source_id", "BIGINT", "the file (`sources.source_id`)", required=True),
        Column("locator", "VARCHAR", "where: `line 17`, `row 3`, `save`", required=True),
        Column("raw", "VARCHAR", "the record as written", required=True),
        Column(
            "line",
            "BIGINT",
            "the line it is on; NULL where the file is not read by lines (a save, a history row, a whole OTLP export)",
        ),
    ),
    doc="Every record that could not be read at all (not JSON, not an object, no date to place it at), kept as "
    "written; an `error` in `violations` says why.",
)

DECISIONS = Table(
    "decisions",
    (
        Column("source_id", "BIGINT", "the file the decision is in (`sources.source_id`)", required=True),
        Column("format", "VARCHAR", "the format of that file", required=True),
        Column(
            "game_id",
            "VARCHAR",
            "the game: Damage's `game_id`, the EC4X game, the Arena episode and the "
            "game-master session within their run (`<folder>/<file name>`), an OTel "
            "conversation (else session, else agent run, else trace)",
        ),
        Column(
            "turn",
            "BIGINT",
            "the turn: Damage's and EC4X's own, the Arena tick, the place of a game-master "
            "response or of an OTel span in its game (from 1)",
        ),
        Column(
            "agent_id",
            "VARCHAR",
            "who decided: a Damage player, `house N` for an EC4X draft, an Arena agent, the "
            "game master's model, an OTel agent; NULL where the log names none",
        ),
        Column(
            "model",
            "VARCHAR",
            "the model as the log names it (Damage: the served `resolved_model`; a failed "
            "call's, the model its `thinking` start asked for); NULL where unknown",
        ),
        Column(
            "action",
            "VARCHAR",
            "what was decided: an action kind, a tool, a draft's feature families, a turn's error class and attempts",
        ),
        Column(
            "valid",
            "BOOLEAN",
            "the answer breaks no rule: its line has no error (an EC4X bot turn: `ok`; an "
            "OTel inference span: no refusal, no broken tool call); NULL for a failed call, "
            "which has no answer to judge",
        ),
        Column(
            "latency_ms",
            "DOUBLE",
            "milliseconds of the model call behind it, where the log records it (an EC4X "
            "bot turn: the LLM time of its failed attempts)",
        ),
        Column("tokens", "BIGINT", "all tokens of the call behind the decision"),
        Column("locator", "VARCHAR", "where in the file: `line 17`, `response r-12`, `span <span_id>`"),
        Column("input_tokens", "BIGINT", "prompt tokens, where the log separates them (cached ones included)"),
        Column("output_tokens", "BIGINT", "completion tokens, where the log separates them"),
        Column("cached_tokens", "BIGINT", "input tokens read from the provider's cache, where the log records them"),
        Column(
            "outcome",
            "VARCHAR",
            "`valid`, `invalid` (an answer that breaks a rule of error severity), or `failed` "
            "(no answer came back: a provider or transport error, a timeout, a rate limit)",
        ),
        Column(
            "failure",
            "VARCHAR",
            "a failed call's reason in the provider's own words (an HTTP status and its body, "
            "an error type); NULL for an answered call",
        ),
        Column(
            "round",
            "VARCHAR",
            "where in its turn, where a turn has several rounds: Damage's betting round "
            "(`preflop`, then the street last revealed: `flop`, `turn`, `river`; draw5: `betting`)",
        ),
        Column(
            "response_model",
            "VARCHAR",
            "the model the reply named (a dated snapshot of the one asked for), where the log records it",
        ),
        Column(
            "retries",
            "BIGINT",
            "the calls the decision was asked again after (an EC4X bot turn: its attempts "
            "less one), where the log records them",
        ),
    ),
    doc="One row per agent decision in every format, so decision quality compares across games: one inference call "
    "of one model and its outcome.",
    added=(
        "input_tokens",
        "output_tokens",
        "cached_tokens",
        "outcome",
        "failure",
        "round",
        "response_model",
        "retries",
    ),
)

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
SCHEMA = Table(
    "workbench_schema",
    (
        Column("fingerprint", "VARCHAR", "SHA-256 of the statements that made the tables and views", required=True),
        Column("columns", "VARCHAR[]", "the columns of its tables and views then (`table.column`)", required=True),
        Column("views", "VARCHAR", "SHA-256 of the views' definitions then, as the database holds them"),
    ),
    doc="One row: the schema that made this database's tables and views.",
    added=("views",),
)

SHARED_TABLES = (SOURCES, VIOLATIONS, REJECTS, DECISIONS, SCHEMA)
SHARED_DDL = SOURCE_IDS + "".join(table.ddl() for table in SHARED_TABLES) + DECISIONS_VALID_NULLABLE + VIOLATION_LINES

# The columns of the database's tables and views (`table.column`), and the definitions of
# its views.
_CATALOG = (
    "SELECT c.columns, c.names, (SELECT list(sql ORDER BY view_name) FROM duckdb_views() "
    "WHERE NOT internal AND schema_name = 'main' AND database_name = current_database()) "
    "FROM (SELECT list(table_name || '.' || column_name) AS columns, list(DISTINCT lower(table_name)) AS names "
    "FROM duckdb_columns() WHERE schema_name = 'main' AND database_name = current_database()) c"
)


def _catalog(con: duckdb.DuckDBPyConnection) -> tuple[set[str], set[str], str]:
    """The columns of the tables and views (`table.column`), their names in lower case
    (DuckDB finds a name in any case), and a fingerprint of the views as the database
    holds them: one redefined by someone (with the same columns, say) is made again."""
    columns, names, views = con.execute(_CATALOG).fetchall()[0]
    return set(columns or ()), set(names or ()), hashlib.sha256("\n".join(views or ()).encode()).hexdigest()


def create_schema(
    con: duckdb.DuckDBPyConnection,
    ddl: str,
    made: Callable[[duckdb.DuckDBPyConnection, set[str]], None] = lambda con, tables: None,
    bound: frozenset[str] = frozenset(),
) -> None:
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
        if (
            recorded
            and recorded[0][0] == fingerprint
            and present.issuperset(recorded[0][1])
            and recorded[0][2] == views
        ):
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
            raise WorkbenchError(
                f"this database holds tables the workbench did not make ({first_line(exc)}); "
                f"ingest into a new database file (--db)"
            ) from None
        if present:
            _refuse_foreign_tables(con, ddl)
        columns, _, views = _catalog(con)
        made(con, {c.split(".")[0] for c in columns - present})
        con.execute(f"DELETE FROM {SCHEMA.name}")
        con.execute(
            f"INSERT INTO {SCHEMA.name} (fingerprint, columns, views) VALUES (?, ?, ?)",
            [fingerprint, sorted(columns), views],
        )


def _refuse_bound_names(clash: set[str]) -> None:
    """A table or view named as a batch a load binds (`schema.BOUND_NAMES`) would be read
    in its place: the ingest would store wrong rows, and say nothing."""
    if clash:
        raise WorkbenchError(
            f"this database has a table or view `{min(clash)}`, a name the workbench reads its own "
            f"rows under while it loads; rename it (ALTER TABLE or ALTER VIEW ... RENAME TO), "
            f"or ingest into a new database file (--db)"
        )


def _refuse_foreign_views(con: duckdb.DuckDBPyConnection, ddl: str) -> None:
    """A view where the workbench keeps a table was made by someone else."""
    clash = sorted(set(_made_by(ddl)[0]) & {name for (name,) in con.execute(_VIEW_NAMES).fetchall()})
    if clash:
        raise WorkbenchError(
            f"this database has a view `{clash[0]}` where the workbench keeps a table; ingest "
            f"into a new database file (--db)"
        )


def _refuse_foreign_tables(con: duckdb.DuckDBPyConnection, ddl: str) -> None:
    """A table of the workbench's name that `ddl` left other than it makes them was made by
    someone else (`CREATE TABLE IF NOT EXISTS` keeps it): a column missing or of another
    type, or one more that cannot be left NULL. The database is refused whole, and the
    transaction that was making it rolls back."""
    tables, ours = _made_by(ddl)
    theirs = {
        (table, column): (kind, nullable)
        for table, column, kind, nullable in con.execute(COLUMN_TYPES).fetchall()
        if table in tables
    }
    for (table, column), kind in ours.items():
        if theirs.get((table, column), (None,))[0] != kind:
            found = theirs.get((table, column), ("no such column",))[0]
            raise WorkbenchError(
                f"this database has a table `{table}` that the workbench did not make (its "
                f"column `{column}` should be {kind}: {found}); ingest into a new database "
                f"file (--db)"
            )
    for (table, column), (_, nullable) in theirs.items():
        if (table, column) not in ours and not nullable:
            raise WorkbenchError(
                f"this database has a table `{table}` that the workbench did not make (its "
                f"column `{column}` cannot be NULL); ingest into a new database file (--db)"
            )


@functools.cache
def _made_by(ddl: str) -> tuple[frozenset[str], dict[tuple[str, str], str]]:
    """The tables `ddl` makes in an empty database, and the type of each of their columns."""
    scratch = duckdb.connect(":memory:", config=NO_EXTENSIONS)
    try:
        scratch.execute(ddl)
        tables = frozenset(_tables(scratch))
        return tables, {
            (table, column): kind
            for table, column, kind, _ in scratch.execute(COLUMN_TYPES).fetchall()
            if table in tables
        }
    finally:
        scratch.close()


_VIEW_NAMES = (
    "SELECT view_name FROM duckdb_views() WHERE NOT internal AND schema_name = 'main' "
    "AND database_name = current_database()"
)
# The columns of tables (not views), with their types and whether they may be NULL.
COLUMN_TYPES = (
    "SELECT c.table_name, c.column_name, c.data_type, c.is_nullable FROM duckdb_columns() c "
    "JOIN duckdb_tables() t ON t.table_oid = c.table_oid "
    "WHERE c.schema_name = 'main' AND c.database_name = current_database()"
)


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
    return {
        name
        for (name,) in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' AND database_name = current_database()"
        ).fetchall()
    }


def table_rows(con: duckdb.DuckDBPyConnection, source_id: int, tables: list[str]) -> dict[str, int]:
    """How many rows of each of `tables` the file `source_id` has (those it has any in)."""
    counts = " UNION ALL ".join(
        f"SELECT '{table}', count(*) FROM {table} WHERE source_id = $source_id" for table in tables
    )
    return {table: n for table, n in con.execute(counts, {"source_id": source_id}).fetchall() if n}


def forget_orphans(con: duckdb.DuckDBPyConnection, tables: list[str]) -> None:
    """Remove the rows of files the database no longer knows (someone dropped
    `sources`, or deleted some of its rows) from `tables`: a file read as new would
    otherwise have its rows twice. One transaction; nothing written when there are none."""
    ids = " UNION ALL ".join(f"SELECT source_id FROM {table}" for table in tables)
    if not con.execute(
        f"SELECT EXISTS (SELECT 1 FROM ({ids}) WHERE source_id NOT IN (SELECT source_id FROM sources))"
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
