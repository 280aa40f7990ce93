"""Export every table as a Hive-partitioned Parquet tree, written by DuckDB.

The tree reads as-is in DuckDB (`read_parquet('out/*/**/*.parquet', hive_partitioning=true)`),
Polars (`pl.scan_parquet(..., hive_partitioning=True)`), Spark or Trino: one folder per
table, partitioned by source format and, where the table has one, by game.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from workbench import catalog
from workbench.errors import WorkbenchError

# Columns that split a table further, where the table has them: a game's rows, or a
# save series' rows, then sit together.
GAME_COLUMNS = ("game_id", "save_name")


def export_parquet(out: str | Path, db=None, overwrite: bool = False) -> dict[str, int]:
    """Write every table of `db` under `out/<table>/format=<f>/[game_id=<g>/]*.parquet`.

    Returns the row count written per table.
    """
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        if not overwrite:
            raise WorkbenchError(f"{out} is not empty; choose an empty folder or pass --overwrite")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    con = catalog.connect(db, read_only=True)
    try:
        return {table: _export_table(con, table, out / table) for table in _tables(con)}
    finally:
        con.close()


def _tables(con) -> list[str]:
    """The tables of data: not the record of the schema that made them."""
    return [name for (name,) in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' "
        "AND table_type = 'BASE TABLE' AND table_name <> ? ORDER BY table_name", [catalog.SCHEMA.name]).fetchall()]


def _columns(con, table: str) -> list[str]:
    return [name for (name,) in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position",
        [table]).fetchall()]


def _export_table(con, table: str, target: Path) -> int:
    columns = _columns(con, table)
    if "format" in columns:
        select = f"SELECT * FROM {table}"
    elif "source_id" in columns:  # every row knows its file, so its format
        select = f"SELECT t.*, s.format FROM {table} t JOIN sources s USING (source_id)"
    else:
        select = f"SELECT *, 'none' AS format FROM {table}"
    partitions = ["format", *[c for c in GAME_COLUMNS if c in columns]]
    rows = con.execute(f"SELECT count(*) FROM ({select})").fetchall()[0][0]
    if rows == 0:
        # An empty table still gets its folder and schema, so readers find every table.
        target.mkdir(parents=True, exist_ok=True)
        con.execute(f"COPY ({select}) TO {_quoted(target / 'empty.parquet')} (FORMAT parquet)")
        return 0
    partition_list = ", ".join(partitions)
    con.execute(f"COPY ({select}) TO {_quoted(target)} (FORMAT parquet, PARTITION_BY ({partition_list}), "
                "OVERWRITE_OR_IGNORE true)")
    return rows


def _quoted(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"
