"""What the Spark differential tests share: the corpora, a Spark session, and a tree
ingested with its files dealt to tasks a given way."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import workbench
from workbench import analysis, comparison, connection, plots, registry
from workbench.damage import ratings
from workbench.spark.load import TASK_FIELDS
from workbench.synth import synthesize

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
# OpenTelemetry traces: an instrumented poker agent and the conventions' own examples.
OTEL = Path(__file__).resolve().parent / "otel" / "data"


@pytest.fixture(scope="module")
def spark_session():
    """A Spark session on `local[2]`."""
    pytest.importorskip("pyspark", reason="the Spark engine's extra is not installed: pip install -e '.[dev]'")
    from tests.conftest import quick_spark_jvm
    from workbench import spark as on_spark

    with pytest.MonkeyPatch.context() as patch:  # only for a JVM started here, now
        quick_spark_jvm(patch)
        return on_spark.session(master="local[2]")


@pytest.fixture(scope="module")
def seed_18(tmp_path_factory):
    """The synthetic corpus at seed 18 and the OpenTelemetry traces, in a database: (its
    folder, a connection). At seed 18 a draft and its game's trace dealt to two tasks once
    gave drafts without a model."""
    folder = tmp_path_factory.mktemp("seed-18")
    synthesize(folder / "logs", scale=1, seed=18)
    workbench.ingest([folder / "logs", OTEL], db=folder / "w.duckdb")
    con = connection.connect(folder / "w.duckdb", read_only=True)
    yield folder, con
    con.close()


def lake_of(paths: list[Path], tree: Path, spark, deal=None):
    """`paths` ingested into `tree` on `spark`, dealt to tasks by `deal(todo, tasks)` (as
    `load._shares`; None: the default), and the tree opened."""
    from workbench import spark as on_spark
    from workbench.spark import load

    with pytest.MonkeyPatch.context() as patch:
        if deal is not None:
            patch.setattr(load, "_shares", deal)
        report = on_spark.ingest(paths, tree, spark=spark)
    assert report.files and not any(f.status == "failed" and "Spark" in f.message for f in report.files)
    return on_spark.open(tree, spark=spark)


def each_alone(todo, tasks):
    """Every file in a task of its own."""
    return [[dict(zip(TASK_FIELDS, task))] for task in todo]


def games_apart(todo, tasks):
    """The files of one game (an EC4X game's order drafts and bot trace; a Stellaris
    series' save, extractor outputs and history) each in another of two tasks."""
    games: dict[str, list] = {}
    for task in sorted(todo):
        games.setdefault(game_of(Path(task[0]).name), []).append(task)
    shares = [[], []]
    for files in games.values():
        for number, task in enumerate(files):
            shares[number % 2].append(dict(zip(TASK_FIELDS, task)))
    return shares


def game_of(name: str) -> str:
    name = name.removeprefix("bot_trace_")
    return re.sub(r"(\.orders)?\.jsonl$|_extractor.*$|_history\.db$|\.sav$", "", name)


DEALS = {"each alone": each_alone, "games apart": games_apart, "the default": None}


def same_everywhere(con, tree) -> None:
    """Every table row for row (a file's rows by its path, not its id), and every answer."""
    for table in [t.name for t in registry.data_tables()]:
        columns = [c for c in connection.column_names(con, table) if c not in ("source_id", "ingested_at")]
        joined = "source_id" in connection.column_names(con, table)
        query = (
            (
                f"SELECT s.path AS file, {', '.join('t.' + c for c in columns)} FROM {table} t "
                f"JOIN sources s USING (source_id)"
            )
            if joined
            else f"SELECT {', '.join(columns)} FROM {table}"
        )
        in_db, in_tree = _canonical(connection.query_frame(con, query)), _canonical(tree.frame(query))
        assert in_db.height == in_tree.height, table
        differing = in_db.join(in_tree, on=in_db.columns, how="anti", nulls_equal=True)
        assert differing.is_empty(), f"{table}: {differing.head(3).to_dicts()}"
    equal(comparison.scorecard(con), comparison.scorecard(tree))
    equal(comparison.scorecard(con, cluster="file"), comparison.scorecard(tree, cluster="file"))
    equal(comparison.compare_models(con), comparison.compare_models(tree))
    assert comparison.plan(con) == comparison.plan(tree)
    equal(analysis.ratings(con, bootstrap=50), analysis.ratings(tree, bootstrap=50))
    equal(ratings.placements(con), ratings.placements(tree))
    for kind in ("scorecard", "decisions"):
        assert _figure_data(plots.FIGURES[kind](con)) == _figure_data(plots.FIGURES[kind](tree)), kind


def _canonical(frame: pl.DataFrame) -> pl.DataFrame:
    """Values as text (lists and JSON as sorted JSON; floats to 9 places), so that two
    engines' types of one value compare equal."""
    columns = []
    for name, dtype in frame.schema.items():
        if dtype.is_nested():
            columns.append(
                pl.col(name).map_elements(lambda v: json.dumps(v, default=str, sort_keys=True), return_dtype=pl.String)
            )
        elif dtype.is_float():
            columns.append(pl.col(name).round(9).cast(pl.String))
        else:
            columns.append(pl.col(name).cast(pl.String))
    return frame.select(columns)


def _figure_data(spec: dict) -> list:
    return sorted(json.dumps(rows, sort_keys=True, default=str) for rows in spec.get("datasets", {}).values())


def equal(a: pl.DataFrame, b: pl.DataFrame) -> None:
    """Equal frames, floats to the last digits two engines may sum differently."""
    assert_frame_equal(a, b, check_exact=False, rel_tol=1e-9, abs_tol=1e-12)
