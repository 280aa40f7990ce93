"""workbench: load, validate and explore the logs of LLM agents that play games.

`import workbench` loads nothing but this file and its errors: `ingest` and `validate`
(the ingest machinery, `workbench.ingestion`), the registry of formats, plotting and
widgets each load on first use. So a read-only notebook connection does not depend on
every format's folder, and a command starts at once: `workbench plot` starts its image
renderer before anything else is imported (docs/performance.md).
"""

import importlib

from workbench.errors import WorkbenchError

__all__ = ["connect", "ingest", "validate", "WorkbenchError", "plots", "widgets", "analysis"]


def connect(db=None, read_only: bool = False):
    """A DuckDB connection to a workbench database with every table in place.

    Opened for writing, the database file (and its folder) is created when missing and
    every table and view is made. With `read_only=True` the database is opened as it is:
    nothing is created or changed, and no format is imported.

    Args:
        db: the database file, or `":memory:"`. None: `$WORKBENCH_DB`, else
            `data/workbench.duckdb`.
        read_only: open an existing database for reading only.

    Returns:
        An open `duckdb.DuckDBPyConnection` (close it when done); timestamps are shown in UTC.

    Raises:
        WorkbenchError: the file is not a DuckDB database, is locked by another process or
            written by an ingest in this process, or was written by an older workbench
            (opened for writing); read-only: the file does not exist or holds no workbench tables.
    """
    if read_only:
        from workbench import connection

        return connection.connect(db, read_only=True)
    from workbench import registry

    return registry.connect(db)


def __dir__():
    return sorted({*globals(), *__all__})


def __getattr__(name):
    if name in ("ingest", "validate"):
        from workbench import ingestion

        return getattr(ingestion, name)
    if name in ("plots", "widgets", "analysis"):
        return importlib.import_module(f"workbench.{name}")
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")
