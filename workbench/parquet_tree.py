"""Export every table as a Parquet tree partitioned by format, written by DuckDB.

The tree reads as-is in DuckDB (`read_parquet('out/*/**/*.parquet', hive_partitioning=true)`),
Polars (`pl.scan_parquet(..., hive_partitioning=True)`), Spark or Trino: one folder per
table, one folder per source format under it (`<table>/format=<name>/`), and in it files
of up to about 128 MB. A few formats make a few folders: a cluster reads a handful of
large files, not one small file a game (13,500 games made 54,000 files, and Spark spent
minutes listing and opening them). Rows are written ordered by game (`game_id`, or a
save series' `save_name`), so each row group's statistics of that column let a reader
skip the groups of other games.

A tree written before this layout (a folder per game under each format, the game id
whole in `<column>_full`) is still read (`workbench.spark.open`); `workbench compact`
rewrites one that `ingest --engine spark` keeps in this layout.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

import duckdb

from workbench import catalog, connection
from workbench.errors import WorkbenchError, first_line

# The column that orders a table's rows, where the table has one: a game's rows, or a
# save series' rows, then sit together, in row groups a reader of one game can skip to.
GAME_COLUMNS = ("game_id", "save_name")
# A file's size at which the next one is begun (DuckDB's FILE_SIZE_BYTES): Spark's and the
# lakehouses' guides aim at files of 128 MB to 1 GB.
FILE_BYTES = "128MB"
# Rows per row group (DuckDB's default): the unit a reader skips by its statistics, and
# the step by which a file grows past FILE_BYTES.
ROW_GROUP_ROWS = 122_880


def export_parquet(out: str | Path, db=None, overwrite: bool = False) -> dict[str, int]:
    """Write every table of `db` under `out/<table>/format=<f>/*.parquet`.

    The tree is written into a hidden folder beside `out` and renamed to `out` once
    whole, so a run cut short (Ctrl-C, a full disk) leaves `out` as it was. Returns the
    row count written per table.
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise WorkbenchError(f"cannot export to {out}: it is a file, not a folder")
    if out.is_dir() and any(out.iterdir()) and not overwrite:
        raise WorkbenchError(f"{out} is not empty; choose an empty folder or pass --overwrite")
    source = Path(db if db is not None else connection.default_db())
    if out.is_dir() and source.resolve().is_relative_to(out.resolve()):
        raise WorkbenchError(
            f"cannot export to {out}: it holds the database {source} being exported, which "
            f"--overwrite would remove; choose another folder"
        )
    con = connection.connect(db, read_only=True)
    # hidden names of a fixed length: `out`'s own name may be as long as a name can be
    partial = out.parent / f".workbench-export-{os.getpid()}-{uuid.uuid4().hex[:8]}.partial"
    try:
        shutil.rmtree(partial, ignore_errors=True)
        _make_folder(partial)
        written = {table: _export_table(con, table, partial / table) for table in data_tables(con)}
        _replace(partial, out)
        return written
    except duckdb.IOException as exc:
        raise WorkbenchError(f"cannot export to {out}: {first_line(exc)}") from None
    finally:
        con.close()
        shutil.rmtree(partial, ignore_errors=True)


def _make_folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True)
    except OSError as exc:
        raise WorkbenchError(f"cannot export to {folder.parent}: {exc.strerror or exc}") from None


def _replace(partial: Path, out: Path) -> None:
    """`out` becomes the tree written in `partial`; what it held before (an empty folder,
    or an export --overwrite replaces) is removed once the new tree is in place. Cut
    short between the two renames (Ctrl-C, a failure), `out` is put back as it was."""
    old = partial.with_suffix(".old")
    try:
        if out.exists():
            out.rename(old)
        partial.rename(out)
    except BaseException:
        if old.exists() and not out.exists():
            old.rename(out)
        raise
    shutil.rmtree(old, ignore_errors=True)


def data_tables(con) -> list[str]:
    """The tables of data: not the record of the schema that made them."""
    return [
        name
        for (name,) in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' "
            "AND table_type = 'BASE TABLE' AND table_name <> ? ORDER BY table_name",
            [catalog.SCHEMA.name],
        ).fetchall()
    ]


def _export_table(con, table: str, target: Path) -> int:
    select, partitions = partitioned_select(con, table)
    rows = con.execute(f"SELECT count(*) FROM ({select})").fetchall()[0][0]
    if rows == 0:
        # An empty table still gets its folder and schema, so readers find every table.
        target.mkdir(parents=True, exist_ok=True)
        con.execute(f"COPY ({select}) TO {quoted(target / 'empty.parquet')} (FORMAT parquet)")
        return 0
    write_partitioned(con, select, partitions, target)
    return rows


def partitioned_select(
    con, table: str, source_id: str | None = None, of_source: int | None = None
) -> tuple[str, list[str]]:
    """The query that gives `table`'s rows as the tree holds them (with `format`, ordered
    by game), and the columns it is partitioned by. `source_id`: an SQL expression the
    rows' own source_id becomes (one file's rows written under the id the tree knows it
    by); `of_source`: only the rows of that file (a table without files' rows has none)."""
    columns = connection.column_names(con, table)
    if of_source is not None and "source_id" not in columns:
        select = f"SELECT *, 'none' AS format FROM {table} WHERE false"
    elif "format" in columns:
        select = f"SELECT * FROM {table} t"
    elif "source_id" in columns:  # every row knows its file, so its format
        select = f"SELECT t.*, s.format FROM {table} t JOIN sources s USING (source_id)"
    else:
        select = f"SELECT *, 'none' AS format FROM {table}"
    if of_source is not None and "source_id" in columns:
        select += f" WHERE t.source_id = {int(of_source)}"
    if source_id is not None and "source_id" in columns:
        select = f"SELECT * REPLACE ({source_id} AS source_id) FROM ({select})"
    return f"SELECT * FROM ({select}){by_game(columns)}", ["format"]


def by_game(columns) -> str:
    """The ORDER BY that puts each game's rows together (those of no game last), for a
    table of `columns`; "" for a table without a game column."""
    games = [c for c in GAME_COLUMNS if c in columns]
    return f" ORDER BY {games[0]} NULLS LAST" if games else ""


def write_partitioned(con, select: str, partitions: list[str], target: Path, file_names: str | None = None) -> None:
    """COPY `select` under `target`, one folder per partition value, in files of up to
    FILE_BYTES; `file_names`: the files' name pattern (DuckDB's FILENAME_PATTERN, `{i}`
    numbering them)."""
    pattern = f", FILENAME_PATTERN {quoted(Path(file_names))}" if file_names else ""
    con.execute(
        f"COPY ({select}) TO {quoted(target)} (FORMAT parquet, PARTITION_BY ({', '.join(partitions)}), "
        f"OVERWRITE_OR_IGNORE true, FILE_SIZE_BYTES '{FILE_BYTES}', ROW_GROUP_SIZE {ROW_GROUP_ROWS}{pattern})"
    )


def quoted(path: Path) -> str:
    """A path as a DuckDB string literal."""
    return "'" + str(path).replace("'", "''") + "'"
