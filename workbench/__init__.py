"""workbench: load, validate and explore the logs of LLM agents that play games.

`import workbench` loads no source format: the registry is imported on first use,
so a read-only notebook connection does not depend on every format's folder, and the
command line starts fast. Plotting and widgets (Altair, ipywidgets) load on first use.
"""

import importlib
import sys

# Altair imports jsonschema, which imports `rfc3987_syntax` where it is installed (Jupyter
# brings it) to check the `iri` string format, and that module compiles a grammar as it
# loads: 2 s of every command and notebook that draws. Neither Altair nor the workbench
# checks that format, so unless something has already loaded either, jsonschema goes
# without it (an `import rfc3987_syntax` in this process then fails).
if "jsonschema" not in sys.modules and "rfc3987_syntax" not in sys.modules:
    sys.modules["rfc3987_syntax"] = None

from workbench.errors import WorkbenchError  # noqa: E402
from workbench.ingest import ingest, validate  # noqa: E402

__all__ = ["connect", "ingest", "validate", "WorkbenchError", "plots", "widgets", "analysis"]


def connect(db=None, read_only: bool = False):
    """A DuckDB connection to a workbench database with every table in place
    (`read_only=True`: opened as it is). `db=None`: `$WORKBENCH_DB` or `data/workbench.duckdb`."""
    if read_only:
        from workbench import catalog

        return catalog.connect(db, read_only=True)
    from workbench import registry

    return registry.connect(db)


def __getattr__(name):
    if name in ("plots", "widgets", "analysis"):
        return importlib.import_module(f"workbench.{name}")
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")
