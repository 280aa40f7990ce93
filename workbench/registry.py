"""The one place that knows every source format: the built-in ones, then the installed
plugins', then the declared ones (`workbench.declared`). Order matters: the first format
whose `claims` accepts a file reads it, so formats recognised by file name come before
Damage, which also recognises envelope-shaped JSONL by content, and a plugin never
takes a built-in format's file. A declared format's files are the ones its `files`
names, whatever they hold: detection asks the declared formats first.

A plugin is a package that declares its format under the entry-point group
`workbench.formats`, named as the format,

    [project.entry-points."workbench.formats"]
    dice = "dice_workbench:FORMAT"

and builds it with `workbench.plugin` only. A plugin that cannot be used (it fails to
import, raises SystemExit or KeyboardInterrupt there, takes more than IMPORT_SECONDS to
import, is not a `Format`, names a table or column otherwise than as a plain SQL name,
runs a statement that does not make a table or view of its own, or takes a name a
format, table or view already has) is left out with one line saying why
(`PluginWarning`); the other formats go on. What a plugin's code raises as it reads a
file (SystemExit and a KeyboardInterrupt of its own too) fails that file only."""

from __future__ import annotations

import dataclasses
import importlib
import re
import signal
import threading
import warnings
from collections.abc import Callable, Iterable
from importlib.metadata import EntryPoint, entry_points

import duckdb

from workbench import catalog, connection
from workbench.declared import declared_folders, declared_format, read_spec
from workbench.errors import PluginWarning, UnreadableFile, WorkbenchError, first_line
from workbench.formats import Counts, Format
from workbench.paths import text_of
from workbench.schema import Table, bound_names

GROUP = "workbench.formats"

# The built-in formats, one line each, in the order they are asked whether a file is
# theirs: each is the folder `workbench/<name>/`, whose `FORMAT` is its Format. A new
# one needs its folder and its line here, and nothing else.
BUILT_IN_FOLDERS = (
    "stellaris",
    "ec4x",
    "arena",
    "gm",
    "otel",
    "damage",
)
BUILT_IN: tuple[Format, ...] = tuple(
    importlib.import_module(f"workbench.{folder}").FORMAT for folder in BUILT_IN_FOLDERS
)

# A plugin whose import has not returned after this many seconds is left out (its
# import goes on in a thread of its own, which nothing waits for).
IMPORT_SECONDS = 60.0
# The names a plugin gives its tables and columns are written into SQL as they are.
PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Each statement a plugin's tables and views run makes a table or view (or adds a column).
MAKES = re.compile(r"\s*(CREATE\s+(OR\s+REPLACE\s+)?(TEMP(ORARY)?\s+)?(TABLE|VIEW)|ALTER\s+TABLE)\s", re.IGNORECASE)


def with_plugins(built_in: Iterable[Format], found: Iterable[EntryPoint] | None = None) -> dict[str, Format]:
    """The built-in formats by name, then each usable plugin of `found` (by default the
    installed ones), in the order of their names; a warning for each one left out."""
    formats = {fmt.name: fmt for fmt in built_in}
    points = sorted(entry_points(group=GROUP) if found is None else found, key=lambda p: p.name)
    if not points:
        return formats
    # The statements of every format accepted so far, run in one scratch database: a
    # plugin's are run over them, and what they make must take no name made before.
    scratch = duckdb.connect(":memory:", config=catalog.NO_EXTENSIONS)
    try:
        taken = set(bound_names()) | _made(scratch, catalog.SHARED_DDL, catalog.SHARED_TABLES)
        for fmt in formats.values():
            taken |= _made(scratch, fmt.ddl(), fmt.tables)
        for point in points:
            try:
                fmt = _usable(point, formats, taken, scratch)
            except _LeftOut as why:
                warnings.warn(
                    f"format plugin {point.name} ({point.value}) left out: {why}", PluginWarning, stacklevel=2
                )
                continue
            formats[fmt.name] = _guarded(fmt)  # `_usable` added its names to `taken`
    finally:
        scratch.close()
    return formats


def _made(scratch: duckdb.DuckDBPyConnection, ddl: str, tables) -> set[str]:
    """Run `ddl` in `scratch`: the names, in lower case (DuckDB finds a name in any
    case), of `tables` and of the views it made or replaced."""
    before = _views(scratch)
    if ddl:
        scratch.execute(ddl)
    return {table.name.lower() for table in tables} | {
        name.lower() for name, sql in _views(scratch).items() if before.get(name) != sql
    }


def _views(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    return dict(con.execute("SELECT view_name, sql FROM duckdb_views() WHERE NOT internal").fetchall())


class _LeftOut(Exception):
    """Why a plugin cannot be used."""


def _usable(
    point: EntryPoint, formats: dict[str, Format], taken: set[str], scratch: duckdb.DuckDBPyConnection
) -> Format:
    """The plugin's Format, its statements run in `scratch` (kept there only if usable)."""
    fmt = _imported(point)
    if not isinstance(fmt, Format):
        raise _LeftOut(f"it is a {type(fmt).__name__}, not a workbench.plugin.Format")
    if fmt.name != point.name:
        raise _LeftOut(f"its Format is named {fmt.name!r}; name the entry point as the format")
    if fmt.name in formats:
        raise _LeftOut(f"a format named {fmt.name!r} is already registered")
    ddl = _statements_of(fmt)
    before = _objects(scratch)
    scratch.execute("BEGIN TRANSACTION")
    try:
        made = _made(scratch, ddl, fmt.tables)
        changed = sorted(name for name, made_as in before.items() if _objects(scratch).get(name) != made_as)
    except Exception as exc:
        scratch.execute("ROLLBACK")
        raise _LeftOut(f"its tables cannot be made: {first_line(exc)}") from None
    clash = sorted(made & taken)
    if clash or changed:
        scratch.execute("ROLLBACK")
        raise _LeftOut(f"its table or view {(clash or changed)[0]!r} has the name of one the workbench already has")
    scratch.execute("COMMIT")
    taken |= made
    return fmt


def _imported(point: EntryPoint):
    """What the entry point names, imported in a thread of its own: whatever the import
    raises (SystemExit and KeyboardInterrupt too: a Ctrl-C the user gives reaches the
    waiting thread, not this one), or an import still under way after IMPORT_SECONDS,
    leaves the plugin out."""
    done: dict = {}

    def load() -> None:
        try:
            done["value"] = point.load()
        except BaseException as exc:  # a plugin's bug never stops the built-in formats
            done["error"] = exc

    thread = threading.Thread(target=load, name=f"workbench plugin {point.name}", daemon=True)
    thread.start()
    thread.join(IMPORT_SECONDS)
    if thread.is_alive():
        raise _LeftOut(f"its import did not end within {IMPORT_SECONDS:g} s")
    if "error" in done:
        raise _LeftOut(_fault(done["error"]))
    return done["value"]


def _fault(exc: BaseException) -> str:
    """What a plugin raised, in one line: its type, and its message where it has one."""
    return f"{type(exc).__name__}: {first_line(exc)}" if str(exc).strip() else type(exc).__name__


def _statements_of(fmt: Format) -> str:
    """The plugin's statements, each checked: its tables and columns named by plain SQL
    names, and each statement making a table or view (never dropping, changing or
    reading anything into the workbench's own)."""
    for table in fmt.tables:
        if not isinstance(table, Table):
            raise _LeftOut(f"its table {table!r} is not a workbench.plugin.Table")
        for name in (table.name, *table.names, *table.unique):
            if not isinstance(name, str) or not PLAIN_NAME.fullmatch(name):
                raise _LeftOut(
                    f"its table or column name {name!r} is not a plain SQL name (letters, digits and _, "
                    f"not starting with a digit)"
                )
    try:
        ddl = fmt.ddl()
        statements = duckdb.extract_statements(ddl) if ddl.strip() else []
    except Exception as exc:
        raise _LeftOut(f"its tables cannot be made: {first_line(exc)}") from None
    for statement in statements:
        if not MAKES.match(statement.query):
            raise _LeftOut(
                f"its statement {statement.query.strip().splitlines()[0][:80]!r} does not make a table or "
                f"view; a plugin's statements only make its own"
            )
    return ddl


def _objects(con: duckdb.DuckDBPyConnection) -> dict[str, tuple]:
    """Every table (its columns) and view (its statement) of a scratch database, by name."""
    tables = con.execute(
        "SELECT table_name, list(column_name || ' ' || data_type ORDER BY column_index) "
        "FROM duckdb_columns() WHERE NOT internal GROUP BY ALL"
    ).fetchall()
    return {name.lower(): ("table", tuple(columns)) for name, columns in tables} | {
        name.lower(): ("view", sql) for name, sql in _views(con).items()
    }


class _PluginFault(Exception):
    """What a plugin's own code raised (an exception, SystemExit, a KeyboardInterrupt of
    its own), kept as `fault`."""

    def __init__(self, fault: BaseException):
        super().__init__(_fault(fault))
        self.fault = fault


def _calling(function: Callable, *args):
    """`function(*args)`, a plugin's code: what it raises, SystemExit and a
    KeyboardInterrupt of its own included, as a _PluginFault; the workbench's own
    one-line errors and DuckDB's as they are. A Ctrl-C the user gives while it runs is
    told from a KeyboardInterrupt the plugin raises by the signal (a handler that notes
    it, then does what the one before did), and stops the run."""
    pressed: list[int] = []
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.getsignal(signal.SIGINT)
        if callable(previous):

            def noted(number, frame, before=previous):
                pressed.append(number)
                before(number, frame)

            signal.signal(signal.SIGINT, noted)
        else:
            previous = None  # ignored, or the default: a Ctrl-C raises nothing here
    try:
        return function(*args)
    except (WorkbenchError, duckdb.Error):
        raise  # said as for any format
    except KeyboardInterrupt as exc:
        if pressed:
            raise
        raise _PluginFault(exc) from None
    except BaseException as exc:
        raise _PluginFault(exc) from None
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _guarded(fmt: Format, kind: str = "format plugin") -> Format:
    """A plugin whose code fails never stops a run: a file its `load` (or `line_based`)
    fails on is `failed` with one line, its transaction rolled back; a file its `claims`
    fails on is not its (said once per plugin); a summary it fails to give is said in
    its place. SystemExit and a KeyboardInterrupt the plugin raises itself are failures
    like any other (`_calling`)."""
    load, claims, lines, summary = fmt.load, fmt.claims, fmt.line_based, fmt.summary
    told: list[object] = []  # the file a claim failed on, once said

    def failed(exc: BaseException, path) -> UnreadableFile:
        return UnreadableFile(f"{text_of(path)}: {kind} {fmt.name} failed: {_fault(exc)}")

    def guarded_load(ctx) -> Counts:
        try:
            counts = _calling(load, ctx)
        except _PluginFault as exc:
            raise failed(exc.fault, ctx.path) from None
        if not isinstance(counts, Counts):
            raise failed(TypeError(f"its load returned {type(counts).__name__}, not Counts"), ctx.path)
        return counts

    def guarded_lines(path) -> bool:
        assert callable(lines)  # made only for a format whose line_based is a function
        try:
            return bool(_calling(lines, path))
        except _PluginFault as exc:
            raise failed(exc.fault, path) from None

    def guarded_claims(path, head) -> bool:
        try:
            return bool(_calling(claims, path, head))
        except (_PluginFault, WorkbenchError, duckdb.Error) as exc:
            if not told:
                told.append(path)
                warnings.warn(
                    f"{kind} {fmt.name} could not tell whether {text_of(path)} is its "
                    f"({_fault(getattr(exc, 'fault', exc))}); such files are not read as {fmt.name}",
                    PluginWarning,
                    stacklevel=2,
                )
            return False

    def guarded_summary(con) -> list[str]:
        assert summary is not None  # made only for a format that gives a summary
        try:
            return [str(line) for line in _calling(summary, con)]
        except (_PluginFault, WorkbenchError, duckdb.Error) as exc:
            return [f"{fmt.name}: its summary failed: {_fault(getattr(exc, 'fault', exc))}"]

    return dataclasses.replace(
        fmt,
        load=guarded_load,
        claims=guarded_claims,
        line_based=guarded_lines if callable(lines) else lines,
        summary=guarded_summary if summary is not None else None,
    )


# The declared formats (`workbench.declared`) by name: the TOML file each is declared in.
DECLARED: dict[str, str] = {}


def with_declared(formats: dict[str, Format]) -> dict[str, Format]:
    """`formats`, then each format a TOML file in a declared-formats folder declares, in
    the order of their paths; a warning for each one left out."""
    for folder in declared_folders():
        for path in sorted(folder.glob("*.toml")) if folder.is_dir() else []:
            try:
                _declared_into(formats, path)
            except WorkbenchError as why:
                warnings.warn(f"declared format {text_of(path)} left out: {why}", PluginWarning, stacklevel=2)
    return formats


def declare(path) -> Format:
    """The format the TOML file at `path` declares, registered in this process (one a
    declared-formats folder holds already is kept, unless the file now declares
    otherwise)."""
    return _declared_into(FORMATS, path)


def _declared_into(formats: dict[str, Format], path) -> Format:
    spec = read_spec(path)
    where = text_of(spec.path.resolve())
    if spec.name in formats and DECLARED.get(spec.name) == where:
        if formats[spec.name].reading == spec.reading:
            return formats[spec.name]
        del formats[spec.name]  # the file declares otherwise now: registered as it is
    if spec.name in formats:
        told = f"declared in {DECLARED[spec.name]}" if spec.name in DECLARED else "registered"
        raise WorkbenchError(
            f"{text_of(spec.path)}: a format named {spec.name!r} is {told} already; name yours otherwise"
        )
    fmt = declared_format(spec)
    table = fmt.tables[0].name
    taken = {t.name.lower() for f in formats.values() for t in f.tables} | {
        t.name.lower() for t in catalog.SHARED_TABLES
    }
    if table in taken or table in bound_names():
        raise WorkbenchError(
            f"{text_of(spec.path)}: its table {table} has the name of one the workbench has; name the format otherwise"
        )
    formats[spec.name] = _guarded(fmt, "declared format")  # whatever fails fails its file only
    DECLARED[spec.name] = where
    return formats[spec.name]


FORMATS: dict[str, Format] = with_declared(with_plugins(BUILT_IN))


def schema_ddl() -> str:
    """The statements that make the shared tables and every registered format's own
    tables and views."""
    return catalog.SHARED_DDL + "".join(fmt.ddl() for fmt in FORMATS.values())


def create_tables(con: duckdb.DuckDBPyConnection, loading: bool = False) -> None:
    """Every table and view in place (see `catalog.create_schema`); `loading`: for an
    ingest, which refuses a database holding a table or view named as a batch it binds."""
    catalog.create_schema(con, schema_ddl(), _read_again_into, bound_names() if loading else frozenset())


def data_tables(fmt: Format | None = None) -> list[Table]:
    """The tables of data (not the record of the schema that made them): the shared
    ones, and every format's own or only `fmt`'s, but for the temporary ones."""
    formats = FORMATS.values() if fmt is None else [fmt]
    tables = [*catalog.SHARED_TABLES, *(table for f in formats for table in f.tables)]
    return [t for t in tables if t is not catalog.SCHEMA and not t.temporary]


def record_locators() -> dict[str, str]:
    """The tables whose records are located otherwise than `line N`, with the SQL of a
    row's locator (`Format.locators`)."""
    return {table: locator for fmt in FORMATS.values() for table, locator in fmt.locators}


def views_ddl() -> list[str]:
    """The statements of the shared views and of every format's own."""
    return [catalog.VIOLATION_LINES, *(fmt.views for fmt in FORMATS.values() if fmt.views)]


def across_files() -> dict[str, list]:
    """Per table, the values formats derive in it from other files' rows."""
    derived: dict[str, list] = {}
    for fmt in FORMATS.values():
        for value in fmt.across_files:
            derived.setdefault(value.table, []).append(value)
    return derived


def file_tables(fmt: Format | None = None) -> list[str]:
    """The tables that hold files' rows (by `source_id`): the shared ones, and every
    format's own or only `fmt`'s."""
    return [t.name for t in data_tables(fmt) if "source_id" in t.names and t is not catalog.SOURCES]


def _read_again_into(con: duckdb.DuckDBPyConnection, made: set[str]) -> None:
    """A table that holds files' rows, made again empty (someone dropped it) or given a
    column its rows have no value in yet (a newer workbench), would disagree with the
    others until those files change: the files of every format it holds rows of are
    read whole at their next ingest instead."""
    formats = [fmt.name for fmt in FORMATS.values() if made & set(file_tables(fmt))]
    if formats:
        catalog.read_again(con, formats)


def connect(db=None, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """A workbench database with every table in place (read-only: opened as it is)."""
    con = connection.connect(db, read_only=read_only)
    if not read_only:
        try:
            create_tables(con)
        except BaseException:
            con.close()  # a database refused (older, foreign) is not held open
            raise
    return con


def format_named(name: str | None) -> Format | None:
    """The registered format called `name` (None for None: each file's own is detected).

    Raises:
        WorkbenchError: no format has that name; the message names those there are.
    """
    if name is None:
        return None
    if name not in FORMATS:
        raise WorkbenchError(f"unknown format {name!r}; choose one of: {', '.join(FORMATS)}")
    return FORMATS[name]
