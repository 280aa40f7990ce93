"""A Spark tree of few large files: small parts merged (`workbench compact`, or the
ingest past a threshold), a merged part written again without a file that left it,
and a tree of the layout before (a folder per game) read and rewritten; each time the
tree gives what a one-shot ingest of its files into a database gives."""

import itertools
import shutil
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

import workbench
from tests.conftest import skip_without_spark
from workbench import cli
from workbench.spark import compact, manifest

skip_without_spark()

from tests.spark_differential import spark_session  # noqa: E402, F401  (the fixture)
from workbench import spark as on_spark  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("spark")]

TABLES = ("sources", "damage_events", "decisions", "violations", "rejects", "damage_emotions")


@pytest.fixture
def logs(sample, tmp_path):
    folder = tmp_path / "logs"
    shutil.copytree(sample / "damage", folder)
    return folder


def _listed(tree: Path) -> list[str]:
    return sorted({part for row in manifest.read_manifest(tree).values() for part in row["parts"]})


def _rows_listed(tree: Path, table: str) -> int:
    """Rows of the table's parts the manifest lists, read by DuckDB (not by the code under test)."""
    parts = [str(tree / part) for part in _listed(tree) if part.startswith(f"{table}/")]
    if not parts:
        return 0
    return duckdb.sql("SELECT count(*) FROM read_parquet($parts)", params={"parts": parts}).fetchall()[0][0]


def _as_one_shot(tree: Path, logs: Path, tmp_path: Path) -> None:
    """Each table's listed parts hold as many rows as a one-shot ingest's database, and
    every file on disk under a table is listed (nothing stray, nothing doubled)."""
    fresh = tmp_path / "fresh.duckdb"
    fresh.unlink(missing_ok=True)
    workbench.ingest([logs], db=fresh)
    with duckdb.connect(str(fresh), read_only=True) as con:
        for table in TABLES:
            assert _rows_listed(tree, table) == con.sql(f"SELECT count(*) FROM {table}").fetchall()[0][0], table
    on_disk = sorted(p.relative_to(tree).as_posix() for p in tree.glob("*/**/*.parquet"))
    assert on_disk == _listed(tree)


def test_compact_merges_each_formats_small_parts_into_one(logs, tmp_path, spark_session, capsys):
    tree = tmp_path / "lake"
    on_spark.ingest([logs], tree, spark=spark_session)
    files = len(list(logs.glob("*.jsonl")))
    assert sum(p.startswith("damage_events/") for p in _listed(tree)) == files
    assert cli.main(["compact", "--parquet", str(tree)]) == 0
    assert f"damage_events: {files} parts -> 1" in capsys.readouterr().out
    [merged] = [p for p in _listed(tree) if p.startswith("damage_events/")]
    assert merged.startswith("damage_events/format=damage/c-")
    rows = pq.read_table(tree / merged, columns=["source_id", "game_id"]).to_pylist()
    # each file's rows by game (those of no game last), file after file: row groups skip
    # other games', and no game's rows are scattered
    for _, of_a_file in itertools.groupby(rows, key=lambda row: row["source_id"]):
        games = [row["game_id"] for row in of_a_file]
        assert games == sorted(games, key=lambda game: (game is None, game or ""))
    runs = [game for game, _ in itertools.groupby(row["game_id"] for row in rows) if game is not None]
    assert len(runs) == len(set(runs))
    _as_one_shot(tree, logs, tmp_path)
    assert cli.main(["compact", "--parquet", str(tree)]) == 0
    assert capsys.readouterr().out.startswith("nothing to merge")
    again = on_spark.ingest([logs], tree, spark=spark_session)
    assert {f.status for f in again.files} == {"unchanged"}


def test_a_file_read_again_or_pruned_leaves_a_merged_part_without_its_rows(logs, tmp_path, spark_session):
    tree = tmp_path / "lake"
    on_spark.ingest([logs], tree, spark=spark_session)
    compact.compact(tree)
    first, second = sorted(logs.glob("*.jsonl"))[:2]
    first.write_bytes(b"".join(first.read_bytes().splitlines(keepends=True)[:5]))  # rewritten shorter
    report = on_spark.ingest([logs], tree, spark=spark_session)
    assert {Path(f.path).name: f.status for f in report.files}[first.name] == "replaced"
    _as_one_shot(tree, logs, tmp_path)
    second.unlink()
    on_spark.ingest([logs], tree, spark=spark_session, prune=True)
    _as_one_shot(tree, logs, tmp_path)
    # the others are unchanged: their rows were moved, not lost
    assert {f.status for f in on_spark.ingest([logs], tree, spark=spark_session).files} == {"unchanged"}


def test_the_ingest_merges_on_its_own_past_the_threshold_and_not_before(logs, tmp_path, spark_session, monkeypatch):
    files = len(list(logs.glob("*.jsonl")))
    tree = tmp_path / "lake"
    monkeypatch.setattr(compact, "AUTOMATIC", files)  # as many small parts as files: not more than it
    on_spark.ingest([logs], tree, spark=spark_session)
    assert sum(p.startswith("damage_events/") for p in _listed(tree)) == files
    extra = logs / "copy.events.jsonl"
    shutil.copy(sorted(logs.glob("*.jsonl"))[0], extra)  # one more: past it
    on_spark.ingest([logs], tree, spark=spark_session)
    assert sum(p.startswith("damage_events/") for p in _listed(tree)) == 1
    _as_one_shot(tree, logs, tmp_path)


def test_a_compaction_cut_short_leaves_the_tree_as_it_was(logs, tmp_path, spark_session, monkeypatch):
    tree = tmp_path / "lake"
    on_spark.ingest([logs], tree, spark=spark_session)
    before = _listed(tree)

    def cut_short(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(compact, "write_manifest", cut_short)  # the merged parts written, not yet listed
    with pytest.raises(KeyboardInterrupt):
        compact.compact(tree)
    monkeypatch.undo()
    assert _listed(tree) == before
    on_spark.ingest([logs], tree, spark=spark_session)  # removes the unlisted merged parts
    _as_one_shot(tree, logs, tmp_path)


def test_a_tree_of_the_layout_before_is_read_and_rewritten_in_this_one(logs, tmp_path, spark_session):
    """A tree as ingests wrote it before: a folder per game, the whole id in game_id_full."""
    tree = tmp_path / "lake"
    on_spark.ingest([logs], tree, spark=spark_session)
    _to_layout_before(tree)
    assert any("/game_id=" in part for part in _listed(tree))
    opened = on_spark.open(tree, spark=spark_session)
    workbench.ingest([logs], db=tmp_path / "w.duckdb")
    with workbench.connect(tmp_path / "w.duckdb", read_only=True) as con:
        games = con.execute("SELECT count(DISTINCT game_id) FROM damage_events").fetchall()[0][0]
    assert opened.frame("SELECT count(DISTINCT game_id) AS n FROM damage_events")["n"][0] == games
    report = on_spark.ingest([logs], tree, spark=spark_session)
    assert {f.status for f in report.files} == {"unchanged"}  # rewritten, not read again
    assert not any("/game_id=" in part for part in _listed(tree))
    _as_one_shot(tree, logs, tmp_path)


def test_an_export_of_the_first_layout_reads_each_games_id_from_its_folder(logs, tmp_path, spark_session):
    """The first exports wrote a folder per game and no `game_id_full`: the game's id is
    the folder's name."""
    db, tree = tmp_path / "w.duckdb", tmp_path / "exported"
    workbench.ingest([logs], db=db)
    assert cli.main(["export", "--parquet", str(tree), "--db", str(db)]) == 0
    for path in sorted((tree / "decisions").rglob("*.parquet")):
        for (game,) in duckdb.sql(f"SELECT DISTINCT game_id FROM read_parquet('{path}')").fetchall():
            target = path.parent / f"game_id={game}" / path.name
            target.parent.mkdir(parents=True, exist_ok=True)
            duckdb.sql(
                f"COPY (SELECT * EXCLUDE (game_id) FROM read_parquet('{path}') WHERE game_id = $game) "
                f"TO '{target}' (FORMAT parquet)",
                params={"game": game},
            )
        path.unlink()
    with workbench.connect(db, read_only=True) as con:
        expected = con.execute("SELECT game_id, count(*) FROM decisions GROUP BY ALL ORDER BY ALL").fetchall()
    opened = on_spark.open(tree, spark=spark_session)
    read = opened.frame("SELECT game_id, count(*) AS n FROM decisions GROUP BY ALL ORDER BY ALL")
    assert read.rows() == expected and all(game is not None for game, _ in expected)


def _to_layout_before(tree: Path) -> None:
    """Each part of a table with a game column moved to a folder per game, its game id in
    `game_id_full` and folder (as the ingest wrote them before), the manifest with them."""
    listed = manifest.read_manifest(tree)
    moved = {}
    for part in _listed(tree):
        path = tree / part
        names = pq.read_schema(path).names
        if "game_id" not in names:
            continue
        games = duckdb.sql(f"SELECT DISTINCT game_id FROM read_parquet('{path}')").fetchall()
        for number, (game,) in enumerate(games):
            folder = f"game_id={game}" if game is not None else "game_id=__HIVE_DEFAULT_PARTITION__"
            target = path.parent / folder / path.name.replace(".parquet", f"-{number}.parquet")
            target.parent.mkdir(parents=True, exist_ok=True)
            duckdb.sql(
                f"COPY (SELECT * EXCLUDE (game_id), game_id AS game_id_full FROM read_parquet('{path}') "
                f"WHERE game_id IS NOT DISTINCT FROM $game) TO '{target}' (FORMAT parquet)",
                params={"game": game},
            )
            moved.setdefault(part, []).append(target.relative_to(tree).as_posix())
        path.unlink()
    for row in listed.values():
        row["parts"] = [new for part in row["parts"] for new in moved.get(part, [part])]
        row["part_stamps"] = [manifest.stamp(tree / part) for part in row["parts"]]
    manifest.write_manifest(tree, listed)
