"""A real Spark cluster on this machine, for the tests that run the workbench on one:
a standalone master with its workers (`standalone`), or a Spark Connect server
(`connect_server`). Each is started from the Spark that pyspark ships, bound to
127.0.0.1 on free ports, with its logs and work folders in a temporary folder; it is
waited for until it answers, and stopped, every process of it, on the way out.

What cannot start raises `ClusterUnavailable`, saying why and ending with the log's
last lines; `or_skip(standalone())` skips the test with that instead.

The tasks run this Python (`sys.executable`), in which the workbench is installed, so
they import it. Which Python a task runs is the driver's to say: its `PYSPARK_PYTHON`
or `spark.pyspark.python` (else `python3`, whatever that is on the worker), not the
worker's environment. A Spark Connect server is the driver of its sessions: it is
started with both. A standalone cluster's driver is the test's own process:
`driver_environment` sets its `PYSPARK_PYTHON`, and has it listen on 127.0.0.1 too.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from tests.conftest import SPARK_JVM_OPTIONS

HOST = "127.0.0.1"
# The memory of each part, small: the suite's two workers share two cores. A worker
# offers one core and 1 GB, the executor it starts takes them (Spark's default
# executor: 1 GB); the master's and workers' own JVMs need little.
WORKER_MEMORY = "1g"
DAEMON_MEMORY = "256m"
SERVER_MEMORY = "1g"
STARTS_WITHIN = 120.0  # seconds; a start here takes some 5 to 15
STOPS_WITHIN = 30.0


class ClusterUnavailable(Exception):
    """A part of the cluster could not start: why, and its log's last lines."""


def spark_home() -> Path:
    """The Spark that pyspark ships: its package folder (bin/, sbin/, jars/)."""
    import pyspark

    return Path(pyspark.__file__).parent


def free_ports(count: int) -> list[int]:
    """`count` ports nothing listens on now, on 127.0.0.1, each another."""
    with ExitStack() as stack:
        probes = [stack.enter_context(socket.socket()) for _ in range(count)]
        for probe in probes:
            probe.bind((HOST, 0))
        return [probe.getsockname()[1] for probe in probes]


def driver_environment(patch: pytest.MonkeyPatch) -> None:
    """The environment a driver in this process needs for a standalone cluster: its
    tasks run this Python, and it listens on 127.0.0.1 (not on the address the machine's
    name has). Also the JVM options that start Spark sooner (tests.conftest)."""
    patch.setenv("PYSPARK_PYTHON", sys.executable)
    patch.setenv("SPARK_LOCAL_IP", HOST)
    patch.setenv("SPARK_SUBMIT_OPTS", f"{os.environ.get('SPARK_SUBMIT_OPTS', '')} {SPARK_JVM_OPTIONS}".strip())


@contextmanager
def standalone(workers: int = 2, cores: int = 1, memory: str = WORKER_MEMORY) -> Iterator[str]:
    """A standalone master and `workers` workers of `cores` cores and `memory` each:
    yields the master's URL, `spark://127.0.0.1:PORT`, once every worker is registered
    with it."""
    _need_java()
    with tempfile.TemporaryDirectory(prefix="workbench-spark-cluster-") as folder, ExitStack() as stack:
        root = Path(folder)
        environment = stack.enter_context(_environment(root))
        # Master, workers and the executors the workers start (which inherit their
        # environment): compiled by C1, with one GC thread, as the tests' local JVM.
        environment["SPARK_DAEMON_JAVA_OPTS"] = SPARK_JVM_OPTIONS
        environment["SPARK_DAEMON_MEMORY"] = DAEMON_MEMORY
        environment["JAVA_TOOL_OPTIONS"] = SPARK_JVM_OPTIONS  # the executors' JVMs (no other way from here)
        port, ui, *ports = free_ports(2 + 2 * workers)
        url = f"spark://{HOST}:{port}"
        master = stack.enter_context(
            _process(
                "master",
                ["org.apache.spark.deploy.master.Master", "--host", HOST, "--port", str(port), "--webui-port", str(ui)],
                root,
                environment,
            )
        )
        master.wait_for("I have been elected leader")
        started = []
        for number in range(1, workers + 1):
            work = root / f"worker-{number}"
            work.mkdir()
            started.append(
                stack.enter_context(
                    _process(
                        f"worker-{number}",
                        [
                            "org.apache.spark.deploy.worker.Worker",
                            "--host",
                            HOST,
                            "--port",
                            str(ports[2 * number - 2]),
                            "--webui-port",
                            str(ports[2 * number - 1]),
                            "--cores",
                            str(cores),
                            "--memory",
                            memory,
                            "--work-dir",
                            str(work),
                            url,
                        ],
                        root,
                        environment,
                    )
                )
            )
        for worker in started:
            worker.wait_for("Successfully registered with master")
        yield url


@contextmanager
def connect_server(master: str = "local[2]", memory: str = SERVER_MEMORY) -> Iterator[str]:
    """A Spark Connect server (sbin/start-connect-server.sh), its own Spark on `master`
    (local mode by default; a `standalone` cluster's URL runs its tasks there): yields
    its URL, `sc://127.0.0.1:PORT`, once it takes connections."""
    _need_java()
    with (
        tempfile.TemporaryDirectory(prefix="workbench-spark-connect-") as folder,
        _environment(Path(folder)) as environment,
    ):
        root = Path(folder)
        environment["SPARK_SUBMIT_OPTS"] = f"{environment.get('SPARK_SUBMIT_OPTS', '')} {SPARK_JVM_OPTIONS}".strip()
        (port,) = free_ports(1)
        command = [
            str(spark_home() / "sbin" / "start-connect-server.sh"),
            "--wait",
            "--master",
            master,
            "--driver-memory",
            memory,
            "--conf",
            f"spark.connect.grpc.binding.address={HOST}",
            "--conf",
            f"spark.connect.grpc.binding.port={port}",
            "--conf",
            "spark.connect.grpc.port.maxRetries=0",
            "--conf",
            f"spark.pyspark.python={sys.executable}",
            "--conf",
            f"spark.driver.host={HOST}",
            "--conf",
            "spark.ui.enabled=false",
            "--conf",
            f"spark.local.dir={root / 'local'}",
            "--conf",
            f"spark.sql.warehouse.dir={root / 'warehouse'}",
        ]
        mode = os.environ.get("SPARK_CONNECT_MODE_ENABLED")
        with _process("connect-server", command, root, environment) as server:
            server.wait_for("Spark Connect server started at", port=port)
            try:
                yield f"sc://{HOST}:{port}"
            finally:
                _stop_connect_sessions(mode)


def _stop_connect_sessions(mode: str | None) -> None:
    """This process's Spark Connect sessions stopped while their server is up (pyspark
    would hand a later `getOrCreate` the one whose server is gone, and retry it for
    minutes), and the process back in pyspark's classic mode if it was in it before (a
    Connect session puts it in Connect mode for good: `SPARK_CONNECT_MODE_ENABLED`)."""
    connect = sys.modules.get("pyspark.sql.connect.session")
    if connect is not None:
        for session in {connect.SparkSession.getActiveSession(), connect.SparkSession._get_default_session()}:
            if session is not None:
                session.stop()
    if mode is None:
        os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)


@contextmanager
def or_skip(cluster) -> Iterator[str]:
    """`cluster` (`standalone()`, `connect_server()`) entered, or the test skipped, saying
    why it could not start."""
    with ExitStack() as stack:
        try:
            url = stack.enter_context(cluster)
        except ClusterUnavailable as exc:
            pytest.skip(str(exc))
        yield url


# --- processes --------------------------------------------------------------------------


def _need_java() -> None:
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        raise ClusterUnavailable("Spark needs a Java runtime; .ci/run installs Debian's openjdk-17-jre-headless")


@contextmanager
def _environment(root: Path) -> Iterator[dict[str, str]]:
    """What every part of a cluster runs with: this Python for its tasks, 127.0.0.1 for
    every port it opens (its web UIs included), its logs, pid files and scratch in `root`,
    and a mark (`WORKBENCH_TEST_CLUSTER`) that what it starts inherits. On the way out,
    once the parts are stopped: a process still marked (one that left the process
    group it was started in) is killed, and none is left."""
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "MASTER")
    }
    environment.update(
        {
            "SPARK_HOME": str(spark_home()),
            "PYSPARK_PYTHON": sys.executable,  # as a cluster's spark-env.sh sets it
            "SPARK_LOCAL_IP": HOST,
            "SPARK_LOG_DIR": str(root / "logs"),
            "SPARK_PID_DIR": str(root / "pids"),
            "SPARK_LOCAL_DIRS": str(root / "local"),
            "SPARK_WORKER_DIR": str(root / "work"),
            "SPARK_CONF_DIR": str(root / "conf"),  # none of the machine's spark-defaults.conf
            "SPARK_IDENT_STRING": "workbench-tests",
            "WORKBENCH_TEST_CLUSTER": str(root),
        }
    )
    for name in ("logs", "pids", "local", "work", "conf"):
        (root / name).mkdir(exist_ok=True)
    try:
        yield environment
    finally:
        _kill_marked(f"WORKBENCH_TEST_CLUSTER={root}")


def _kill_marked(mark: str) -> None:
    deadline = time.monotonic() + STOPS_WITHIN
    while left := _marked(mark):
        if time.monotonic() > deadline:
            raise RuntimeError(f"processes of a Spark test cluster outlived SIGKILL: {left}")
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)


def _marked(mark: str) -> list[int]:
    """The running processes whose environment holds `mark` (KEY=VALUE)."""
    found, wanted = [], mark.encode()
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if wanted in environ.read_bytes().split(b"\0") and _state(environ.parent) != "Z":
                found.append(int(environ.parent.name))
        except OSError:  # ended meanwhile, or not ours to read
            continue
    return found


def _state(process: Path) -> str:
    text = (process / "stat").read_text()
    return text[text.rindex(")") + 2 :].split()[0]


class _Process:
    """One JVM of the cluster, in a process group of its own (with what it starts: a
    worker's executors, their Python workers), its output in `<root>/<name>.log`."""

    def __init__(self, name: str, command: list[str], root: Path, environment: dict[str, str]):
        self.name = name
        self.log = root / f"{name}.log"
        with open(self.log, "wb") as log:
            self.popen = subprocess.Popen(
                command,
                cwd=root,
                env=environment,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def wait_for(self, line: str, port: int | None = None, within: float = STARTS_WITHIN) -> None:
        """Until the log has `line` (and, with `port`, that port takes connections); or
        ClusterUnavailable if the process ends or `within` seconds pass first."""
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            if line in self.log.read_text(errors="replace") and (port is None or _listening(port)):
                return
            if self.popen.poll() is not None:
                raise ClusterUnavailable(
                    f"Spark's {self.name} exited ({self.popen.returncode}) before it was ready{self.tail()}"
                )
            time.sleep(0.2)
        raise ClusterUnavailable(f"Spark's {self.name} was not ready within {within:.0f} s{self.tail()}")

    def tail(self, lines: int = 15) -> str:
        try:
            text = self.log.read_text(errors="replace").rstrip().splitlines()[-lines:]
        except OSError:
            return ""
        text = [line if len(line) <= 300 else line[:300] + " ..." for line in text]
        return f"; the last lines of {self.log.name}:\n" + "\n".join(text) if text else ""

    def stop(self) -> None:
        """Every process of the group ended: asked first (SIGTERM, which the JVMs' hooks
        answer by stopping what they started), then killed; returns once none is left
        running. A process whose parent ended first is reaped by init: it is waited for
        a little too, so that `ps` lists none of them."""
        group = self.popen.pid
        for sig, grace in ((signal.SIGTERM, 10.0), (signal.SIGKILL, STOPS_WITHIN)):
            try:
                os.killpg(group, sig)
            except ProcessLookupError:
                pass
            deadline = time.monotonic() + grace
            while time.monotonic() < deadline:
                self.popen.poll()  # the leader reaped, so that it counts as gone
                if not _group_members(group, running=True):
                    deadline = time.monotonic() + 5.0
                    while self.popen.poll() is None or _group_members(group):
                        if time.monotonic() > deadline:
                            break
                        time.sleep(0.1)
                    return
                time.sleep(0.1)
        raise RuntimeError(f"Spark's {self.name} (process group {group}) outlived SIGKILL: {_group_members(group)}")


@contextmanager
def _process(name: str, command: list[str], root: Path, environment: dict[str, str]) -> Iterator[_Process]:
    if not os.path.isabs(command[0]):
        command = [str(spark_home() / "bin" / "spark-class"), *command]
    process = _Process(name, command, root, environment)
    try:
        yield process
    finally:
        process.stop()


def _listening(port: int) -> bool:
    try:
        socket.create_connection((HOST, port), timeout=1).close()
        return True
    except OSError:
        return False


def _group_members(group: int, running: bool = False) -> list[str]:
    """The processes of the group ("pid state command", as `ps -g` lists them, read
    from /proc as `ps` does); `running`: not those that ended and are not reaped yet
    (zombies)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # ended meanwhile
            continue
        command, rest = text[text.index("(") + 1 : text.rindex(")")], text[text.rindex(")") + 2 :].split()
        state, pgrp = rest[0], rest[2]
        if pgrp == str(group) and not (running and state == "Z"):
            found.append(f"{stat.parent.name} {state} {command}")
    return found
