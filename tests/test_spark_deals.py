"""The Spark engine's answers do not depend on how its files are dealt to tasks.

Each Spark task loads its share of the files into a DuckDB of its own and sees no other
task's files; a value derived from another file's rows (an EC4X order draft's model,
from its game's bot trace) is derived over the whole tree when it is read. The files
are dealt three ways (each to a task of its own; each game's files to different tasks
on purpose; the default), and each tree must equal the DuckDB database of the same
files on every table and every answer: on the synthetic corpus at seed 18 (where a
draft and its game's trace in two tasks once gave drafts without a model, shown as
`house 2`), at seeds 1-5 dealt one file a task, and on the real corpus."""

from pathlib import Path

import polars as pl
import pytest

import workbench
from tests.conftest import skip_without_spark

skip_without_spark()

from tests.spark_differential import (  # noqa: E402
    CORPUS,
    DEALS,
    OTEL,
    each_alone,
    game_of,
    games_apart,
    lake_of,
    same_everywhere,  # noqa: F401  (a fixture)
    seed_18,  # noqa: F401  (a fixture)
    spark_session,  # noqa: F401  (a fixture)
)
from workbench import comparison  # noqa: E402
from workbench.paths import text_of  # noqa: E402
from workbench.synth import synthesize  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("spark-deals")]


@pytest.mark.parametrize("deal", DEALS)
def test_seed_18_gives_the_databases_answers_however_its_files_are_dealt(seed_18, deal, spark_session, tmp_path):
    folder, con = seed_18
    tree = lake_of([folder / "logs", OTEL], tmp_path / "lake", spark_session, DEALS[deal])
    same_everywhere(con, tree)
    card = comparison.scorecard(tree)
    assert not card.filter(pl.col("model").str.starts_with("house")).height  # a draft without its model
    assert set(card.filter(pl.col("format") == "ec4x")["model"]) == set(
        comparison.scorecard(con).filter(pl.col("format") == "ec4x")["model"]
    )


def test_seeds_1_to_5_dealt_a_file_a_task_give_the_databases_answers(spark_session, tmp_path):
    """The five corpora side by side in one tree (their games' ids differ), each file in
    a task of its own."""
    folders = [tmp_path / f"seed-{seed}" for seed in range(1, 6)]
    for seed, folder in enumerate(folders, 1):
        synthesize(folder, scale=1, seed=seed)
    workbench.ingest(folders, db=tmp_path / "w.duckdb")
    tree = lake_of(folders, tmp_path / "lake", spark_session, each_alone)
    with workbench.connect(tmp_path / "w.duckdb", read_only=True) as con:
        assert con.execute("SELECT count(DISTINCT game_id) FROM ec4x_orders").fetchall()[0][0] == 15
        same_everywhere(con, tree)


@pytest.mark.parametrize("deal", DEALS)
def test_the_real_corpus_gives_the_databases_answers_however_its_files_are_dealt(deal, spark_session, tmp_path_factory):
    if not CORPUS.is_dir():
        pytest.skip(f"the real corpus is not at {CORPUS} (../shared/corpus beside the repository)")
    out = tmp_path_factory.mktemp("real")
    paths = [CORPUS / "damage", CORPUS / "stellaris"]
    workbench.ingest(paths, db=out / "w.duckdb")
    tree = lake_of(paths, out / "lake", spark_session, DEALS[deal])
    with workbench.connect(out / "w.duckdb", read_only=True) as con:
        same_everywhere(con, tree)


def test_games_apart_really_puts_a_games_files_in_two_tasks(seed_18):
    folder, _ = seed_18
    files = sorted((folder / "logs" / "ec4x").glob("*.jsonl"))
    todo = [(text_of(path), True, number, 1, 1, text_of(path)) for number, path in enumerate(files, 1)]
    shares = games_apart(todo, 2)
    for game in {game_of(path.name) for path in files}:
        tasks = {k for k, share in enumerate(shares) for task in share if game_of(Path(task["path"]).name) == game}
        assert tasks == {0, 1}, game
