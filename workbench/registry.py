"""The one place that knows every source format. Order matters: the first format
whose `claims` accepts a file reads it, so formats recognised by file name come
before Damage, which also recognises envelope-shaped JSONL by content."""

from __future__ import annotations

import duckdb

from workbench import arena, catalog, damage, ec4x, gm, stellaris
from workbench.formats import Format

FORMATS: dict[str, Format] = {
    fmt.name: fmt for fmt in (stellaris.FORMAT, ec4x.FORMAT, arena.FORMAT, gm.FORMAT, damage.FORMAT)
}


def create_tables(con: duckdb.DuckDBPyConnection) -> None:
    """The shared tables and every registered format's own tables and views."""
    catalog.create_shared_tables(con)
    for fmt in FORMATS.values():
        fmt.create_tables(con)


def connect(db=None, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """A workbench database with every table in place (read-only: opened as it is)."""
    con = catalog.connect(db, read_only=read_only)
    if not read_only:
        create_tables(con)
    return con
