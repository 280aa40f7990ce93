"""The Spark session the workbench works in: one given, or one made for it."""

from __future__ import annotations

import logging
import os
import re
import shutil
import socket
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from workbench.errors import WorkbenchError, first_line

# Partition folders are text (`game_id=007` stays "007"); game columns are read from
# `<column>_full` anyway, and formats are names.
SETTINGS = {"spark.sql.sources.partitionColumnTypeInference.enabled": "false"}


LOGGING = Path(__file__).with_name("log4j2.properties")


# What Spark takes as a master: local mode (`local`, `local[N]`, `local[*]`, with a number
# of retries after a comma; `local-cluster[N,C,M]`), a standalone cluster, YARN, Kubernetes,
# or a Spark Connect server (`REMOTE`).
LOCAL = r"local(\[(\*|[1-9][0-9]*)(,[1-9][0-9]*)?\])?|local-cluster\[[1-9][0-9]*,[1-9][0-9]*,[1-9][0-9]*\]"
# A Spark Connect URL as pyspark reads it: sc://HOST[:PORT], then parameters after `/`
# (`sc://host:443/;use_ssl=true;token=...`); the port is 15002 when not given.
REMOTE = re.compile(
    r"sc://(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(:(?P<port>[0-9]{1,5}))?"
    r"(/(;[^\s;=/]+=[^\s;]*)*)?"
)
MASTERS = re.compile(rf"{LOCAL}|spark://[^\s/]+|yarn|k8s://\S+|{REMOTE.pattern}")
CONNECT_PORT = 15002


def check_master(master: str) -> None:
    """A master Spark can start on, or one line naming it (before a JVM starts, whose
    refusal is a Java stack)."""
    if not MASTERS.fullmatch(master):
        zero = re.fullmatch(r"local\[0+(,[0-9]+)?\]", master)
        raise WorkbenchError(
            f"--master {master}: "
            + (
                "local mode with no thread runs nothing; give local[N] with N of 1 or more, or local[*]"
                if zero
                else "not a Spark master; give local[N], local[*], spark://HOST:PORT, yarn, k8s://URL "
                "or sc://HOST:PORT (Spark Connect)"
            )
        )


def check_remote(remote: str) -> None:
    """`$SPARK_REMOTE` as pyspark takes it (a Spark Connect URL, or `local...` for a
    server of its own), or one line naming it."""
    if not (REMOTE.fullmatch(remote) or re.fullmatch(LOCAL, remote)):
        raise WorkbenchError(
            f"SPARK_REMOTE={remote}: not a Spark Connect URL; give sc://HOST:PORT (or unset it to run Spark here)"
        )


def connected(spark) -> bool:
    """A Spark Connect session: no SparkContext, no JVM in this process."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def cancelled(exc: BaseException) -> bool:
    """A Spark job cancelled: the workbench cancels none itself, pyspark does on Ctrl-C."""
    return "SPARK_JOB_CANCELLED" in str(exc) or re.search(r"\bJob [0-9]+ cancelled\b", str(exc)) is not None


def session(spark=None, master: str | None = None):
    """`spark` if given; else the active session; else a new one: on `master` (a Spark
    Connect server for `sc://HOST:PORT`), or on Spark Connect at `$SPARK_REMOTE`, or in
    local mode on every core (`local[*]`)."""
    if master is not None:
        check_master(master)
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
    if master is not None:
        remote = master if master.startswith("sc://") else None
    else:
        remote = os.environ.get("SPARK_REMOTE") or None
        if remote is not None:
            check_remote(remote)
    running = _running()
    if running is not None and (remote is not None or master not in (None, running)):
        # pyspark would hand back the session on `running` as it is (a master given is
        # then not the one the work runs on), or refuse Spark Connect beside it
        wanted = master if remote is None else _server(remote) if remote.startswith("sc://") else remote
        raise WorkbenchError(
            f"Spark runs in this process on {running} already: stop its session "
            f"(spark.stop()) to start Spark on {wanted}"
        )
    if remote is not None and remote.startswith("sc://"):
        return _connect(SparkSession, remote)
    if remote is None and (master is None or master.startswith("local")):
        # Local workers run this very Python, so they import this workbench (a cluster's
        # workers need it installed: the docs' "Beyond one machine").
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    with _without_remote(master is not None):
        spark = _started(_builder(SparkSession, master, remote), master)
    if not connected(spark):
        spark.sparkContext.setLogLevel("OFF")  # its failures reach us as exceptions
    return spark


def _running() -> str | None:
    """The master of the SparkContext running in this process, if one does."""
    context = sys.modules.get("pyspark.core.context")
    running = context.SparkContext._active_spark_context if context is not None else None
    return running.master if running is not None else None


def _builder(SparkSession, master: str | None, remote: str | None):
    logging_options = f"-Dlog4j2.configurationFile={LOGGING.as_uri()}"
    builder = (
        SparkSession.builder.appName("workbench")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.extraJavaOptions", logging_options)
        .config("spark.executor.extraJavaOptions", logging_options)
        # The workbench makes no tables in Spark's catalog: no spark-warehouse/ where it runs.
        .config("spark.sql.warehouse.dir", str(Path(tempfile.gettempdir()) / "workbench-spark-warehouse"))
    )
    if master is not None:
        return builder.master(master)
    if remote:  # `local...`: pyspark starts a Spark Connect server of its own
        return builder.remote(remote)
    return builder.master("local[*]")


def _started(builder, master: str | None):
    """The builder's session, its JVM started here; or one line saying why not."""
    with _JavaErrors() as java:
        try:
            return builder.getOrCreate()
        except Exception as exc:  # no Java, a master that does not answer
            told = first_line(exc)
            if ("JAVA_GATEWAY_EXITED" in told or "JAVA_HOME" in told) and not _java():
                raise WorkbenchError(
                    "Spark needs a Java runtime (17 or newer), and none started: install one "
                    "(Debian: apt install openjdk-17-jre-headless) or set JAVA_HOME"
                ) from None
            where = f" on {master}" if master else ""
            raise WorkbenchError(f"cannot start Spark{where}: {java.why() or said(exc)}") from None


def _connect(SparkSession, url: str):
    """A session on the Spark Connect server at `url`. The server is asked first whether
    it is there: pyspark retries a server that does not answer for ten minutes."""
    where = _server(url)
    host, port = where.removeprefix("sc://").rsplit(":", 1)
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
    except OSError as exc:
        raise WorkbenchError(
            f"cannot reach the Spark Connect server at {where}: {exc.strerror or first_line(exc)}; is it started?"
        ) from None
    try:
        return SparkSession.builder.remote(url).getOrCreate()
    except ImportError as exc:  # grpcio and the other Connect clients' packages
        raise WorkbenchError(
            f"Spark Connect needs pyspark's Connect packages ({first_line(exc)}): pip install 'workbench[spark]'"
        ) from None
    except Exception as exc:
        raise WorkbenchError(f"cannot start Spark on the Spark Connect server at {where}: {said(exc)}") from None


def _server(url: str) -> str:
    """A Spark Connect URL without its parameters (which may hold a token): sc://HOST:PORT."""
    found = REMOTE.fullmatch(url)
    assert found is not None  # a URL `check_master` or `check_remote` has taken
    return f"sc://{found['host']}:{found['port'] or CONNECT_PORT}"


@contextmanager
def _without_remote(hide: bool) -> Iterator[None]:
    """`$SPARK_REMOTE` out of the environment while a session on a master given is made:
    pyspark refuses a master beside it, and spark-submit would take it over the master."""
    remote = os.environ.pop("SPARK_REMOTE", None) if hide else None
    try:
        yield
    finally:
        if remote is not None:
            os.environ["SPARK_REMOTE"] = remote


def _java() -> bool:
    return bool(os.environ.get("JAVA_HOME")) or shutil.which("java") is not None


class _JavaErrors:
    """What Spark's JVM writes to standard error while it starts (its banner, a refusal's
    Java stack) held back: the command says in one line what went wrong (`why`). The JVM
    keeps that standard error for its life: what it writes after its start goes on to
    the terminal as it comes."""

    def __enter__(self) -> _JavaErrors:
        self.held: list[bytes] = []
        self.passing = False
        self.terminal: int | None
        try:
            sys.stderr.flush()
            self.terminal = os.dup(2)
            read, write = os.pipe()
            os.dup2(write, 2)
            os.close(write)
        except (OSError, ValueError, AttributeError):  # no standard error to hold back
            self.terminal = None
            return self
        threading.Thread(target=self._pass_on, args=(read,), name="workbench spark stderr", daemon=True).start()
        return self

    def _pass_on(self, read: int) -> None:
        with os.fdopen(read, "rb") as pipe:
            for line in pipe:
                if self.passing and self.terminal is not None:
                    os.write(self.terminal, line)
                else:
                    self.held.append(line)

    def __exit__(self, *exc) -> None:
        if self.terminal is not None:
            sys.stderr.flush()
            os.dup2(self.terminal, 2)  # Python's own standard error as it was
            self.passing = True

    def why(self) -> str | None:
        """The line that says why the JVM refused to start, where it wrote one."""
        text = b"".join(self.held).decode("utf-8", "backslashreplace")
        found = re.findall(r"(?:Exception|Error)(?: in thread \"\w+\")?:? ([^\n]+)", text)
        return found[0].strip() if found else None


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
