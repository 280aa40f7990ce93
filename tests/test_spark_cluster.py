"""The Spark engine on a real cluster, not only in local mode: a standalone master with
two workers, and a Spark Connect server, each started here on 127.0.0.1 from the Spark
that pyspark ships (tests/spark_cluster.py) and stopped after, every process of it.

The synthetic corpus at seed 18 and the OpenTelemetry traces are ingested on each the
ways a user reaches it (`--master spark://…`, `--master sc://…`, `$SPARK_REMOTE`),
dealt one file a task and by the default, and every table and answer must equal the
DuckDB database of the same files. The executors run this Python, as the docs tell a
cluster's user to set it up (`PYSPARK_PYTHON` where the driver runs), and the logs
and the tree are in one folder every process sees at the same path."""

import pytest

from tests.conftest import skip_without_spark
from workbench import cli

skip_without_spark()

from tests import spark_cluster  # noqa: E402
from tests.spark_differential import DEALS, OTEL, lake_of, same_everywhere, seed_18  # noqa: E402, F401  (a fixture)
from workbench import spark as on_spark  # noqa: E402
from workbench.spark.session import connected  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("spark-cluster")]

WAYS = ("the default", "each alone")


def _no_spark_in_this_process() -> None:
    """A process runs one Spark driver: a session another test left (local mode) stops."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and not connected(active):
        active.stop()


@pytest.fixture(scope="module")
def standalone():
    """A session whose driver is this process, on a standalone master with two workers."""
    _no_spark_in_this_process()
    with pytest.MonkeyPatch.context() as patch, spark_cluster.or_skip(spark_cluster.standalone()) as master:
        spark_cluster.driver_environment(patch)
        spark = on_spark.session(master=master)
        yield master, spark
        spark.stop()


@pytest.fixture(scope="module")
def connect_server():
    _no_spark_in_this_process()
    with spark_cluster.or_skip(spark_cluster.connect_server()) as url:
        yield url


@pytest.mark.parametrize("deal", WAYS)
def test_a_standalone_cluster_gives_the_databases_answers(seed_18, standalone, deal, tmp_path):
    folder, con = seed_18
    master, spark = standalone
    assert spark.sparkContext.master == master
    tree = lake_of([folder / "logs", OTEL], tmp_path / "lake", spark, DEALS[deal])
    # the tasks ran on the workers: the driver and an executor on each of the two
    assert spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() == 3
    same_everywhere(con, tree)


@pytest.mark.parametrize("deal", WAYS)
def test_spark_connect_named_by_master_gives_the_databases_answers(seed_18, connect_server, deal, tmp_path):
    folder, con = seed_18
    spark = on_spark.session(master=connect_server)
    assert connected(spark)
    try:
        same_everywhere(con, lake_of([folder / "logs", OTEL], tmp_path / "lake", spark, DEALS[deal]))
    finally:
        spark.stop()  # this client's session; the server goes on


def test_spark_connect_named_by_spark_remote_answers_the_command_line_as_duckdb(
    seed_18, connect_server, tmp_path, monkeypatch, capsys
):
    folder, _ = seed_18
    monkeypatch.setenv("SPARK_REMOTE", connect_server)
    tree, db = str(tmp_path / "lake"), str(folder / "w.duckdb")
    assert cli.main(["ingest", str(folder / "logs"), str(OTEL), "--engine", "spark", "--parquet", tree, "--quiet"]) == 0
    capsys.readouterr()
    for command in (["scorecard"], ["compare"], ["plan", "--difference", "0.05"]):
        assert cli.main([*command, "--parquet", tree, "--engine", "spark"]) == 0
        on_connect = capsys.readouterr().out
        assert cli.main([*command, "--db", db]) == 0
        assert on_connect.replace(tree, db) == capsys.readouterr().out, command
