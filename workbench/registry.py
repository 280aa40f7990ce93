"""The one place that knows every source format: the built-in ones, then the installed
plugins'. Order matters: the first format whose `claims` accepts a file reads it, so
formats recognised by file name come before Damage, which also recognises
envelope-shaped JSONL by content, and a plugin never takes a built-in format's file.

A plugin is a package that declares its format under the entry-point group
`workbench.formats`, named as the format,

    [project.entry-points."workbench.formats"]
    dice = "dice_workbench:FORMAT"

and builds it with `workbench.plugin` only. A plugin that cannot be used (it fails to
import, is not a `Format`, or takes a name a format, table or view already has) is left
out with one line saying why (`PluginWarning`); the other formats go on."""

from __future__ import annotations

import dataclasses
import warnings
from importlib.metadata import EntryPoint, entry_points
from typing import Iterable

import duckdb

from workbench import arena, catalog, damage, ec4x, gm, otel, stellaris
from workbench.errors import PluginWarning, UnreadableFile, WorkbenchError, first_line
from workbench.paths import text_of
from workbench.formats import Counts, Format
from workbench.schema import BOUND_NAMES, Table

GROUP = "workbench.formats"

BUILT_IN = (stellaris.FORMAT, ec4x.FORMAT, arena.FORMAT, gm.FORMAT, otel.FORMAT, damage.FORMAT)


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
        taken = set(BOUND_NAMES) | _made(scratch, catalog.SHARED_DDL, catalog.SHARED_TABLES)
        for fmt in formats.values():
            taken |= _made(scratch, fmt.ddl(), fmt.tables)
        for point in points:
            try:
                fmt = _usable(point, formats, taken, scratch)
            except _LeftOut as why:
                warnings.warn(f"format plugin {point.name} ({point.value}) left out: {why}", PluginWarning,
                              stacklevel=2)
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
        name.lower() for name, sql in _views(scratch).items() if before.get(name) != sql}


def _views(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    return dict(con.execute("SELECT view_name, sql FROM duckdb_views() WHERE NOT internal").fetchall())


class _LeftOut(Exception):
    """Why a plugin cannot be used."""


def _usable(point: EntryPoint, formats: dict[str, Format], taken: set[str],
            scratch: duckdb.DuckDBPyConnection) -> Format:
    """The plugin's Format, its statements run in `scratch` (kept there only if usable)."""
    try:
        fmt = point.load()
    except Exception as exc:  # a plugin's bug never stops the built-in formats
        raise _LeftOut(f"{type(exc).__name__}: {first_line(exc)}") from None
    if not isinstance(fmt, Format):
        raise _LeftOut(f"it is a {type(fmt).__name__}, not a workbench.plugin.Format")
    if fmt.name != point.name:
        raise _LeftOut(f"its Format is named {fmt.name!r}; name the entry point as the format")
    if fmt.name in formats:
        raise _LeftOut(f"a format named {fmt.name!r} is already registered")
    scratch.execute("BEGIN TRANSACTION")
    try:
        made = _made(scratch, fmt.ddl(), fmt.tables)
    except Exception as exc:
        scratch.execute("ROLLBACK")
        raise _LeftOut(f"its tables cannot be made: {first_line(exc)}") from None
    clash = sorted(made & taken)
    if clash:
        scratch.execute("ROLLBACK")
        raise _LeftOut(f"its table or view {clash[0]!r} has the name of one the workbench already has")
    scratch.execute("COMMIT")
    taken |= made
    return fmt


def _guarded(fmt: Format) -> Format:
    """A plugin whose code fails never stops a run: a file its `load` (or `line_based`)
    fails on is `failed` with one line, its transaction rolled back; a file its `claims`
    fails on is not its (said once per plugin)."""
    load, claims, lines, told = fmt.load, fmt.claims, fmt.line_based, []

    def failed(exc: Exception, path) -> UnreadableFile:
        return UnreadableFile(f"{text_of(path)}: format plugin {fmt.name} failed: "
                              f"{type(exc).__name__}: {first_line(exc)}")

    def guarded_load(ctx) -> Counts:
        try:
            counts = load(ctx)
        except (WorkbenchError, duckdb.Error):
            raise  # the workbench's own one-line errors, and DuckDB's, are said as for any format
        except Exception as exc:
            raise failed(exc, ctx.path) from None
        if not isinstance(counts, Counts):
            raise failed(TypeError(f"its load returned {type(counts).__name__}, not Counts"), ctx.path)
        return counts

    def guarded_lines(path) -> bool:
        try:
            return bool(lines(path))
        except Exception as exc:
            raise failed(exc, path) from None

    def guarded_claims(path, head) -> bool:
        try:
            return bool(claims(path, head))
        except Exception as exc:
            if not told:
                told.append(path)
                warnings.warn(f"format plugin {fmt.name} could not tell whether {text_of(path)} is its "
                              f"({type(exc).__name__}: {first_line(exc)}); such files are not read as {fmt.name}",
                              PluginWarning, stacklevel=2)
            return False

    return dataclasses.replace(fmt, load=guarded_load, claims=guarded_claims,
                               line_based=guarded_lines if callable(lines) else lines)


FORMATS: dict[str, Format] = with_plugins(BUILT_IN)


def schema_ddl() -> str:
    """The statements that make the shared tables and every registered format's own
    tables and views."""
    return catalog.SHARED_DDL + "".join(fmt.ddl() for fmt in FORMATS.values())


def create_tables(con: duckdb.DuckDBPyConnection, loading: bool = False) -> None:
    """Every table and view in place (see `catalog.create_schema`); `loading`: for an
    ingest, which refuses a database holding a table or view named as a batch it binds."""
    catalog.create_schema(con, schema_ddl(), _read_again_into, BOUND_NAMES if loading else frozenset())


def data_tables(fmt: Format | None = None) -> list[Table]:
    """The tables of data (not the record of the schema that made them): the shared
    ones, and every format's own or only `fmt`'s, but for the temporary ones."""
    formats = FORMATS.values() if fmt is None else [fmt]
    tables = [*catalog.SHARED_TABLES, *(table for f in formats for table in f.tables)]
    return [t for t in tables if t is not catalog.SCHEMA and not t.temporary]


def views_ddl() -> list[str]:
    """The statements of the shared views and of every format's own."""
    return [catalog.VIOLATION_LINES, *(fmt.views for fmt in FORMATS.values() if fmt.views)]


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
    con = catalog.connect(db, read_only=read_only)
    if not read_only:
        try:
            create_tables(con)
        except BaseException:
            con.close()  # a database refused (older, foreign) is not held open
            raise
    return con
