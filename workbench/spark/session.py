"""The Spark session the workbench works in: one given, or one made for it."""

from __future__ import annotations

import logging
import os
import sys
import tempfile
from pathlib import Path

from workbench.errors import WorkbenchError, first_line

# Partition folders are text (`game_id=007` stays "007"); game columns are read from
# `<column>_full` anyway, and formats are names.
SETTINGS = {"spark.sql.sources.partitionColumnTypeInference.enabled": "false"}


LOGGING = Path(__file__).with_name("log4j2.properties")


def session(spark=None, master: str | None = None):
    """`spark` if given; else the active session; else a new one: on `master`, or on
    Spark Connect at `$SPARK_REMOTE`, or in local mode on every core (`local[*]`)."""
    if spark is None:
        spark = _active() if master is None else None
    if spark is None:
        spark = _new(master)
    for key, value in SETTINGS.items():
        spark.conf.set(key, value)
    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        # PySpark logs a failed query's whole Java stack; the caller is told in one line.
        logging.getLogger(name).disabled = True
    return spark


def _spark_session_class():
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise WorkbenchError("the Spark engine needs pyspark: pip install 'workbench[spark]'") from None
    return SparkSession


def _active():
    return _spark_session_class().getActiveSession()


def _new(master: str | None):
    SparkSession = _spark_session_class()
    remote = os.environ.get("SPARK_REMOTE")
    if master is None and not remote or (master or "").startswith("local"):
        # Local workers run this very Python, so they import this workbench (a cluster's
        # workers need it installed: the docs' "Beyond one machine").
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    logging_options = f"-Dlog4j2.configurationFile={LOGGING.as_uri()}"
    builder = (SparkSession.builder.appName("workbench").config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.extraJavaOptions", logging_options)
               .config("spark.executor.extraJavaOptions", logging_options)
               # The workbench makes no tables in Spark's catalog: no spark-warehouse/ where it runs.
               .config("spark.sql.warehouse.dir", str(Path(tempfile.gettempdir()) / "workbench-spark-warehouse")))
    if master is not None:
        builder = builder.master(master)
    elif remote:
        builder = builder.remote(remote)
    else:
        builder = builder.master("local[*]")
    try:
        spark = builder.getOrCreate()
    except Exception as exc:  # no Java, a master that does not answer
        said = first_line(exc)
        if "JAVA_GATEWAY_EXITED" in said or "JAVA_HOME" in said:
            raise WorkbenchError("Spark needs a Java runtime (17 or newer), and none started: install one "
                                 "(Debian: apt install openjdk-17-jre-headless) or set JAVA_HOME") from None
        raise WorkbenchError(f"cannot start Spark: {said}") from None
    if remote is None or master is not None:
        spark.sparkContext.setLogLevel("OFF")  # its failures reach us as exceptions
    return spark


def said(exc: Exception) -> str:
    """What a Spark failure comes to, in one line: its first line, or, where that only
    says a Java call failed, the deepest cause given (`Caused by: ...`), or a failed
    task's own Python exception."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    first = first_line(exc)
    if lines and not first.startswith("An error occurred while calling") and "Python worker" not in first:
        return first
    causes = [line.removeprefix("Caused by: ") for line in lines if line.startswith("Caused by: ")]
    raised = [line for line in lines if line.split(":", 1)[0].endswith(("Error", "Exception"))]
    return (raised or causes or [first])[-1]
