import json
import os
import shutil
from pathlib import Path

import duckdb
import pytest

# No declared formats but those a test declares: not the tester's own (~/.config/workbench/formats).
os.environ["WORKBENCH_FORMATS"] = ""

import workbench  # noqa: E402
from tests import xdist_groups

# Tests that took SLOW_SECONDS or more are marked slow (tests/timing.py).
from tests.timing import pytest_addoption, pytest_collection_modifyitems, pytest_runtest_logreport, pytest_sessionfinish  # noqa: F401 - hooks, found by their names
from workbench.synth import synthesize

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


def pytest_configure(config) -> None:  # warns when xdist spreads a group over its workers
    config.pluginmanager.register(xdist_groups, "tests.xdist_groups")


# The JVM a test run starts for Spark lives minutes and runs small queries: compiled by C1
# alone, with one GC thread, it starts sooner and burns half the CPU warming up (the other
# tests share the cores). spark-submit gives SPARK_SUBMIT_OPTS to the driver's JVM (the
# executors' too in local mode), beside the workbench's own options.
SPARK_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def skip_without_spark() -> None:
    """Skip the calling test module where Spark cannot run: no pyspark, or no Java."""
    pytest.importorskip("pyspark", reason="the Spark engine's extra is not installed: pip install -e '.[dev]'")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip(
            "Spark needs a Java runtime; .ci/run installs Debian's openjdk-17-jre-headless", allow_module_level=True
        )


def quick_spark_jvm(patch: pytest.MonkeyPatch) -> None:
    """Have a JVM Spark starts from now on use SPARK_JVM_OPTIONS."""
    patch.setenv("SPARK_SUBMIT_OPTS", f"{os.environ.get('SPARK_SUBMIT_OPTS', '')} {SPARK_JVM_OPTIONS}".strip())


@pytest.fixture(scope="session")
def sample(tmp_path_factory) -> Path:
    """The synthetic corpus at scale 1, seed 7 (what `workbench demo` uses)."""
    out = tmp_path_factory.mktemp("sample")
    synthesize(out, scale=1, seed=7)
    return out


@pytest.fixture(scope="session")
def manifest(sample) -> dict:
    return json.loads((sample / "manifest.json").read_text())


def write_lines(path: Path, records) -> Path:
    """Write records (dicts as JSON, strings as they are) one per line."""
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def rows(db, sql, params=None):
    """The rows of a query on a database file, opened read-only for just this query."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


@pytest.fixture
def ingest_lines(tmp_path):
    """Write lines to a file named `name`, ingest it; returns (file report, connection)."""
    connections = []

    def run(name, lines):
        path = write_lines(tmp_path / name, lines)
        (file,) = workbench.ingest([path], db=tmp_path / "x.duckdb").files
        assert file.status == "ingested", file.message
        con = duckdb.connect(str(tmp_path / "x.duckdb"))
        connections.append(con)
        return file, con

    yield run
    for con in connections:
        con.close()


@pytest.fixture(scope="session")
def notebook_db(sample, tmp_path_factory) -> Path:
    """The synthetic corpus (scale 1) ingested into a fresh database, for the notebooks."""
    path = tmp_path_factory.mktemp("notebook_db") / "workbench.duckdb"
    report = workbench.ingest([sample], db=path)
    assert not report.failed
    return path


@pytest.fixture(scope="session")
def executed(notebook_db, request, tmp_path_factory):
    """Each notebook run headless once against `notebook_db`, for every test that reads it.
    The runs the selected tests read start with the first of them, a few kernels at a time."""
    from tests.notebook_run import NAMES, bundle_folder, run_notebook, started_ahead

    bundles = bundle_folder(tmp_path_factory)
    with started_ahead(
        request,
        "executed",
        ("name",),
        lambda name: run_notebook(name, notebook_db, bundles),
        wanted=lambda name: name in NAMES,
    ) as run:
        yield run
