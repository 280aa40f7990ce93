"""The one place that knows every source format. Order matters: the first format
whose `claims` accepts a file reads it, so formats recognised by file name come
before Damage, which also recognises envelope-shaped JSONL by content."""

from __future__ import annotations

import duckdb

from workbench import arena, catalog, damage, ec4x, gm, stellaris
from workbench.formats import Format
from workbench.schema import BOUND_NAMES, Table

FORMATS: dict[str, Format] = {
    fmt.name: fmt for fmt in (stellaris.FORMAT, ec4x.FORMAT, arena.FORMAT, gm.FORMAT, damage.FORMAT)
}


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
