"""What the commands of `workbench` read and how they print a table: the database or the
Parquet tree on Spark (`--db`, `--engine`, `--parquet`, `--master`), and a frame as JSON
or CSV (`--json`, `--csv`)."""

from __future__ import annotations

import contextlib
import json

from workbench.errors import WorkbenchError
from workbench.paths import check_tree


def engine(args) -> str:
    """The engine asked for, with what it needs, or one line saying what is missing."""
    if args.engine == "spark":
        if not args.parquet:
            raise WorkbenchError("--engine spark works on a Parquet tree: add --parquet DIR")
        check_tree(args.parquet)
        if args.db:
            raise WorkbenchError(
                "--engine spark reads and writes the Parquet tree (--parquet), not a database: drop --db"
            )
        if args.master is not None:
            from workbench.spark.session import check_master

            check_master(args.master)
    elif args.parquet:
        raise WorkbenchError(
            "--parquet DIR is the Spark engine's tree: add --engine spark (DuckDB reads a database: "
            "--db, or `workbench export --parquet` writes a tree from one)"
        )
    elif args.master:
        raise WorkbenchError("--master is the Spark cluster: add --engine spark --parquet DIR")
    return args.engine


@contextlib.contextmanager
def source(args):
    """What an analysis asks: the database, read-only, or the Parquet tree on Spark."""
    if engine(args) == "spark":
        from workbench import spark

        yield spark.open(args.parquet, master=args.master)
        return
    with database(args) as con:
        yield con


@contextlib.contextmanager
def database(args):
    """The database, read-only: what commands that read records ask (they read files too,
    so they do not run on Spark)."""
    from workbench import connection

    con = connection.connect(args.db, read_only=True)
    try:
        yield con
    finally:
        con.close()


def source_label(args) -> str:
    from workbench import connection

    return str(args.parquet) if args.engine == "spark" else str(args.db or connection.default_db())


def printed_as_data(frame, args) -> bool:
    """`frame` printed as JSON (one object per row) or CSV (lists joined by `;`, cells
    safe for a spreadsheet), as asked; False when neither was."""
    import polars as pl

    if args.json:
        print(json.dumps(frame.to_dicts(), ensure_ascii=False, default=str))
    elif args.csv:
        flat = frame.with_columns(
            pl.col(name).cast(pl.List(pl.String)).list.join(";")
            for name, dtype in frame.schema.items()
            if isinstance(dtype, pl.List)
        )
        print(spreadsheet_safe(flat).write_csv(), end="")
    return bool(args.json or args.csv)


def spreadsheet_safe(frame):
    """Text cells a spreadsheet would run as a formula (starting =, +, -, @, tab or
    carriage return, OWASP's CSV-injection list) get a leading apostrophe, so it shows them
    as text."""
    import polars as pl

    risky = r"^[=+\-@\t\r]"
    return frame.with_columns(
        pl.when(pl.col(name).str.contains(risky)).then("'" + pl.col(name)).otherwise(pl.col(name)).alias(name)
        for name, dtype in frame.schema.items()
        if dtype == pl.String
    )
