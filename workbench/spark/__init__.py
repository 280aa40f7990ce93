"""The workbench on Apache Spark: the same loader and the same comparisons, for a lab's
logs beyond one machine.

`ingest(paths, parquet_dir)` runs the workbench's own loader in Spark's tasks, into the
Parquet tree, partitioned by format, that `workbench export --parquet` writes (`load`;
its small parts merged by `compact`, its commit protocol `manifest`). `open(dir)` gives
that tree's tables as Spark views that `analysis.scorecard`, `compare_models`,
`ratings`, `plan` and the report take in place of a database connection (`lake`): the
grouped counts are Spark SQL, made from the workbench's one DuckDB text of each query
(`sql`), and the statistics the same Python as over a database.

pyspark is needed only here: `pip install 'workbench[spark]'`, and a Java runtime.
"""

from workbench.spark.lake import Lake, open  # noqa: A004  (the name the API gives it)
from workbench.spark.load import ingest
from workbench.spark.session import session

__all__ = ["Lake", "ingest", "open", "session"]
