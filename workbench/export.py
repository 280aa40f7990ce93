"""Export every table as a Hive-partitioned Parquet tree, written by DuckDB.

The tree reads as-is in DuckDB (`read_parquet('out/*/**/*.parquet', hive_partitioning=true)`),
Polars (`pl.scan_parquet(..., hive_partitioning=True)`), Spark or Trino: one folder per
table, partitioned by source format and, where the table has one, by game. A table with
a game column also keeps it whole as `<column>_full`: a game id too long for a folder
name (over 80 bytes) is shortened in its folder, and so in `game_id` as a reader of the
partitions sees it, to its first 16 characters, `~` and 16 hex digits of its SHA-256.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import duckdb

from workbench import catalog
from workbench.errors import WorkbenchError, first_line

# Columns that split a table further, where the table has them: a game's rows, or a
# save series' rows, then sit together.
GAME_COLUMNS = ("game_id", "save_name")


def export_parquet(out: str | Path, db=None, overwrite: bool = False) -> dict[str, int]:
    """Write every table of `db` under `out/<table>/format=<f>/[game_id=<g>/]*.parquet`.

    The tree is written into a hidden folder beside `out` and renamed to `out` once
    whole, so a run cut short (Ctrl-C, a full disk) leaves `out` as it was. Returns the
    row count written per table.
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise WorkbenchError(f"cannot export to {out}: it is a file, not a folder")
    if out.is_dir() and any(out.iterdir()) and not overwrite:
        raise WorkbenchError(f"{out} is not empty; choose an empty folder or pass --overwrite")
    con = catalog.connect(db, read_only=True)
    partial = out.parent / f".{out.name}.partial-{os.getpid()}"
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
    or an export --overwrite replaces) is removed once the new tree is in place."""
    old = out.parent / f".{out.name}.old-{os.getpid()}"
    if out.exists():
        out.rename(old)
    partial.rename(out)
    shutil.rmtree(old, ignore_errors=True)


def data_tables(con) -> list[str]:
    """The tables of data: not the record of the schema that made them."""
    return [name for (name,) in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' "
        "AND table_type = 'BASE TABLE' AND table_name <> ? ORDER BY table_name", [catalog.SCHEMA.name]).fetchall()]


# A game id of at most this many bytes is its folder's name as it is. DuckDB writes a
# partition value percent-escaped (up to 3 characters a byte), and a file system takes
# names of 255 bytes: 80 bytes and `game_id=` always fit.
GAME_FOLDER_BYTES = 80


def _export_table(con, table: str, target: Path) -> int:
    select, partitions = partitioned_select(con, table)
    rows = con.execute(f"SELECT count(*) FROM ({select})").fetchall()[0][0]
    if rows == 0:
        # An empty table still gets its folder and schema, so readers find every table.
        target.mkdir(parents=True, exist_ok=True)
        con.execute(f"COPY ({select}) TO {_quoted(target / 'empty.parquet')} (FORMAT parquet)")
        return 0
    write_partitioned(con, select, partitions, target)
    return rows


def partitioned_select(con, table: str, source_id: str | None = None,
                       of_source: int | None = None) -> tuple[str, list[str]]:
    """The query that gives `table`'s rows as the tree holds them (with `format`, and a
    game column as its folder name plus `<column>_full`), and the columns it is
    partitioned by. `source_id`: an SQL expression the rows' own source_id becomes (one
    file's rows written under the id the tree knows it by); `of_source`: only the rows
    of that file (a table without files' rows has none)."""
    columns = catalog.column_names(con, table)
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
    games = [c for c in GAME_COLUMNS if c in columns]
    replaced = [f"{_folder_name(games[0])} AS {games[0]}"] if games else []
    if source_id is not None and "source_id" in columns:
        replaced.append(f"{source_id} AS source_id")
    if replaced:
        kept = f", {games[0]} AS {games[0]}_full" if games else ""
        select = f"SELECT * REPLACE ({', '.join(replaced)}){kept} FROM ({select})"
    return select, ["format", *games]


def write_partitioned(con, select: str, partitions: list[str], target: Path, file_names: str | None = None) -> None:
    """COPY `select` under `target`, one folder per partition value; `file_names`: the
    files' name pattern (DuckDB's FILENAME_PATTERN, `{i}` numbering them)."""
    pattern = f", FILENAME_PATTERN {_quoted(Path(file_names))}" if file_names else ""
    con.execute(f"COPY ({select}) TO {_quoted(target)} (FORMAT parquet, PARTITION_BY ({', '.join(partitions)}), "
                f"OVERWRITE_OR_IGNORE true{pattern})")


def _folder_name(column: str) -> str:
    """The game id as its folder shows it: as it is, or, past GAME_FOLDER_BYTES or empty
    (a folder `game_id=` is no partition to Spark or Hive: every query of the tree
    failed), its first 16 characters, `~` and the first 16 hex digits of its SHA-256
    (`<column>_full` keeps it whole in the files)."""
    return (f"CASE WHEN strlen({column}) BETWEEN 1 AND {GAME_FOLDER_BYTES} THEN {column} "
            f"ELSE left({column}, 16) || '~' || left(sha256({column}), 16) END")


def _quoted(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"
