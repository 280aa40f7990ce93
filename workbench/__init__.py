"""workbench: load, validate and explore the logs of LLM agents that play games."""

from workbench.catalog import connect
from workbench.errors import WorkbenchError
from workbench.ingest import ingest, validate

__all__ = ["connect", "ingest", "validate", "WorkbenchError", "plots", "widgets"]


def __getattr__(name):
    # Plotting and widgets pull in Altair and ipywidgets: load them on first use so
    # the command line starts fast.
    if name in ("plots", "widgets"):
        import importlib

        return importlib.import_module(f"workbench.{name}")
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")
