"""A Parquet tree of workbench tables (`workbench export --parquet`, or
`workbench ingest --engine spark`) as Spark views named as the database's tables, and
the workbench's queries asked of them.

Each table is read from `<tree>/<table>/`, its partition folders giving `format` and a
game column's folder name; the game's whole id is `<column>_full`. The views have the
database's own columns in its own order and types (`schema`), so a query asks the
tree what it asks a database. A table with no files is an empty view. The database's
views (`violation_lines`, a format's own) are made from their one definition
(`sql.to_spark`).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from workbench.errors import WorkbenchError
from workbench.export import GAME_COLUMNS
from workbench.spark.session import said, session
from workbench.spark.sql import spark_type, statements, to_spark


class Lake:
    """The tables of a Parquet tree, on a Spark session. `frame` asks one of the
    workbench's queries (DuckDB's dialect) and gives a polars frame: what
    `catalog.query_frame` gives from a database."""

    def __init__(self, root: str | Path, spark=None):
        self.root = Path(root)
        if not self.root.is_dir():
            raise WorkbenchError(f"{self.root} is not a folder of Parquet tables (made by `workbench export "
                                 f"--parquet` or `workbench ingest --engine spark`)")
        self.spark = session(spark)
        self.tables = _declared_tables()
        for table in self.tables:
            self._read(table).createOrReplaceTempView(table.name)
        for ddl in (statement for script in _views() for statement in statements(script)):
            self.spark.sql(to_spark(ddl).replace("CREATE OR REPLACE VIEW", "CREATE OR REPLACE TEMPORARY VIEW", 1))

    def frame(self, sql: str, params: dict | None = None) -> pl.DataFrame:
        try:
            table = self.spark.sql(to_spark(sql, params or {})).toArrow()
        except Exception as exc:
            if isinstance(exc, WorkbenchError):
                raise
            raise WorkbenchError(f"Spark could not run a query over {self.root}: {said(exc)}") from None
        return pl.from_arrow(table)

    def columns(self, table: str) -> set[str]:
        return {column.name for t in self.tables if t.name == table for column in t.columns}

    def close(self) -> None:
        """The views stay in the session (which may be the caller's); nothing to let go."""

    def _read(self, table):
        """`table`'s rows as the database holds them (a Spark DataFrame)."""
        folder = self.root / table.name
        first = next(folder.rglob("*.parquet"), None)
        if first is None:
            return self.spark.sql("SELECT " + ", ".join(f"CAST(NULL AS {spark_type(c.type)}) AS {c.name}"
                                                        for c in table.columns) + " WHERE false")
        # Every file of a table is written by one schema: the first one's is all's, given
        # to Spark so that it need not read every file's footer to find it. Partition
        # folders (`format=damage`) give their columns, as text.
        from pyspark.sql.pandas.types import from_arrow_schema
        from pyspark.sql.types import StringType

        written = pq.read_schema(first)
        schema = from_arrow_schema(pa.schema([  # JSON is its text (an Arrow extension over a string)
            field.with_type(field.type.storage_type) if hasattr(field.type, "storage_type") else field
            for field in written]), prefer_timestamp_ntz=True)
        for part in first.relative_to(folder).parts[:-1]:
            if "=" in part:
                schema = schema.add(part.split("=", 1)[0], StringType())
        rows = self.spark.read.schema(schema).parquet(str(folder.resolve()))
        return rows.selectExpr(*(_column(column, set(schema.fieldNames())) for column in table.columns))


def open(root: str | Path, spark=None) -> Lake:  # noqa: A001  (the name the API gives it)
    """The Parquet tree at `root` on `spark` (default: the active session, or a new one,
    `session.session`): pass it to `analysis.scorecard`, `compare_models`, `ratings`,
    `plan`, or `report.write_report` as to any of them a database connection."""
    return Lake(root, spark)


def _column(column, present: set[str]) -> str:
    """The column as the database has it: a game's whole id from `<column>_full`; NULL
    where the files lack it (written by a workbench from before it was added)."""
    kind = spark_type(column.type)
    stored = f"{column.name}_full" if column.name in GAME_COLUMNS else column.name
    return f"CAST({stored if stored in present else 'NULL'} AS {kind}) AS {column.name}"


def _declared_tables():
    from workbench import catalog, registry

    shared = [t for t in catalog.SHARED_TABLES if t is not catalog.SCHEMA]
    return [*shared, *(table for fmt in registry.FORMATS.values() for table in fmt.tables if not table.temporary)]


def _views() -> list[str]:
    from workbench import catalog, registry

    return [catalog.VIOLATION_LINES, *(fmt.views for fmt in registry.FORMATS.values() if fmt.views)]
