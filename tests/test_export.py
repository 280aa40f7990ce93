"""The Parquet tree reads back with the same rows, lazily, in Polars and DuckDB."""

import json

import duckdb
import polars as pl
import pytest

import workbench
from workbench.cli import main
from workbench.export import export_parquet


@pytest.fixture(scope="module")
def db(tmp_path_factory, sample):
    path = tmp_path_factory.mktemp("export") / "w.duckdb"
    workbench.ingest([sample], db=path)
    return path


def table_counts(db) -> dict[str, int]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        tables = [t for (t,) in con.execute("SELECT table_name FROM information_schema.tables "
                                            "WHERE table_type = 'BASE TABLE'").fetchall()]
        tables.remove("workbench_schema")  # which schema made the tables: no data to share
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in tables}
    finally:
        con.close()


def test_every_table_reads_back_with_polars_lazy_scan(tmp_path, db):
    written = export_parquet(tmp_path / "pq", db=db)
    counts = table_counts(db)
    assert written == counts
    for table, rows in counts.items():
        frame = pl.scan_parquet(tmp_path / "pq" / table / "**" / "*.parquet", hive_partitioning=True)
        assert frame.select(pl.len()).collect().item() == rows, table
        assert "format" in frame.collect_schema().names()


def test_partitions_by_format_and_game(tmp_path, db, sample):
    export_parquet(tmp_path / "pq", db=db)
    games = {p.name for p in (tmp_path / "pq" / "damage_events" / "format=damage").iterdir()}
    con = duckdb.connect(str(db), read_only=True)
    expected = {f"game_id={g}" for (g,) in con.execute(
        "SELECT DISTINCT game_id FROM damage_events WHERE game_id IS NOT NULL").fetchall()}
    con.close()
    assert expected <= games
    # A query on one game counts that game's events: one row per line of the logs that is
    # a JSON object with that game_id (counted here from the sample's files).
    game = sorted(expected)[0].removeprefix("game_id=")
    tree = tmp_path / "pq" / "damage_events"
    lazy = pl.scan_parquet(tree / "**" / "*.parquet", hive_partitioning=True)
    one = lazy.filter(pl.col("game_id") == game).select(pl.len()).collect().item()
    lines = events_of_game(sample, game)
    assert lines > 100 and one == lines
    # ...and reads only that game's folder: with every other file of the tree made
    # unreadable, the query on the game still answers, while a query on the whole tree fails.
    mine = tree / "format=damage" / f"game_id={game}"
    schema = pl.read_parquet_schema(next(mine.glob("*.parquet")))
    others = [p for p in tree.rglob("*.parquet") if p.parent != mine]
    assert {p.parent for p in others} == set((tree / "format=damage").iterdir()) - {mine}
    for path in others:
        path.write_bytes(b"not parquet")
    lazy = pl.scan_parquet(tree / "**" / "*.parquet", hive_partitioning=True, schema=schema)
    assert lazy.filter(pl.col("game_id") == game).select(pl.len()).collect().item() == lines
    with pytest.raises(pl.exceptions.ComputeError):
        lazy.select(pl.len()).collect()


def events_of_game(sample, game: str) -> int:
    """Lines of the sample's Damage logs that are JSON objects naming `game`."""
    count = 0
    for path in sorted((sample / "damage").rglob("*.jsonl")):
        for raw in path.read_bytes().splitlines():
            try:
                line = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                continue
            count += isinstance(line, dict) and line.get("game_id") == game
    return count


def test_duckdb_reads_the_tree_as_is(tmp_path, db):
    export_parquet(tmp_path / "pq", db=db)
    con = duckdb.connect()
    rows = con.execute(f"SELECT count(*) FROM read_parquet('{tmp_path}/pq/decisions/**/*.parquet', "
                       "hive_partitioning = true)").fetchall()[0][0]
    assert rows == table_counts(db)["decisions"]


def test_cli_export_refuses_a_non_empty_folder(capsys, tmp_path, db):
    assert main(["export", "--parquet", str(tmp_path / "pq"), "--db", str(db)]) == 0
    assert main(["export", "--parquet", str(tmp_path / "pq"), "--db", str(db)]) == 2
    assert "is not empty" in capsys.readouterr().err
    assert main(["export", "--parquet", str(tmp_path / "pq"), "--db", str(db), "--overwrite"]) == 0


def test_the_docs_example_runs_on_an_exported_sample(tmp_path, db):
    """The Polars example of docs/beyond-one-machine.md, run as written on the demo sample's export."""
    import re

    from tests.conftest import ROOT

    export_parquet(tmp_path / "pq", db=db)
    page = (ROOT / "docs" / "beyond-one-machine.md").read_text()
    section = page[page.index("## The Parquet export"):]
    code = re.search(r"```python\n(.+?)```", section, re.S).group(1)
    namespace = {}
    exec(code.replace("/shared/workbench-parquet", str(tmp_path / "pq")), namespace)  # noqa: S102 - our own docs
    assert namespace["events"].select(pl.len()).collect().item() == table_counts(db)["damage_events"]
    tilt = namespace["tilt"]
    assert tilt.height == 8 and tilt["tilt"].max() <= 1.0
