"""The Parquet tree reads back with the same rows, lazily, in Polars and DuckDB."""

import json

import duckdb
import polars as pl
import pyarrow.parquet as pq
import pytest

import workbench
from workbench import parquet_tree
from workbench.cli import main
from workbench.parquet_tree import export_parquet


@pytest.fixture(scope="module")
def db(tmp_path_factory, sample):
    path = tmp_path_factory.mktemp("export") / "w.duckdb"
    workbench.ingest([sample], db=path)
    return path


def table_counts(db) -> dict[str, int]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        tables = [
            t
            for (t,) in con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE'"
            ).fetchall()
        ]
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


def test_partitions_by_format_only_with_each_games_rows_together(tmp_path, db, sample):
    """A folder per format, none per game (13,500 games made 54,000 small files); the
    rows ordered by game, so each row group's game_id statistics span few games."""
    export_parquet(tmp_path / "pq", db=db)
    tree = tmp_path / "pq" / "damage_events"
    assert [p.name for p in tree.iterdir()] == ["format=damage"]
    assert all(p.is_file() for p in (tree / "format=damage").iterdir())
    con = duckdb.connect(str(db), read_only=True)
    games = sorted(
        g for (g,) in con.execute("SELECT DISTINCT game_id FROM damage_events WHERE game_id IS NOT NULL").fetchall()
    )
    con.close()
    for path in (tree / "format=damage").glob("*.parquet"):
        in_file = pq.read_table(path, columns=["game_id"])["game_id"].to_pylist()
        assert in_file == sorted(in_file, key=lambda g: (g is None, g or ""))
        metadata = pq.ParquetFile(path).metadata
        statistics = metadata.row_group(0).column(metadata.schema.names.index("game_id")).statistics
        assert statistics.has_min_max and statistics.min == min(g for g in in_file if g is not None)
    # A query on one game counts that game's events: one row per line of the logs that is
    # a JSON object with that game_id (counted here from the sample's files).
    game = games[0]
    lazy = pl.scan_parquet(tree / "**" / "*.parquet", hive_partitioning=True)
    lines = events_of_game(sample, game)
    assert lines > 100 and lazy.filter(pl.col("game_id") == game).select(pl.len()).collect().item() == lines


def test_a_large_table_is_cut_into_files_of_the_size_aimed_at(tmp_path, db, monkeypatch):
    monkeypatch.setattr(parquet_tree, "FILE_BYTES", "64KB")
    monkeypatch.setattr(parquet_tree, "ROW_GROUP_ROWS", 2048)  # a file grows a row group at a time
    export_parquet(tmp_path / "pq", db=db)
    files = sorted((tmp_path / "pq" / "damage_events" / "format=damage").glob("*.parquet"))
    assert len(files) > 1
    assert sum(pq.ParquetFile(f).metadata.num_rows for f in files) == table_counts(db)["damage_events"]
    # DuckDB begins the next file once the one it writes has passed the size: each but
    # the last is past it, by less than a row group
    assert all(64 * 1024 <= f.stat().st_size < 3 * 64 * 1024 for f in files[:-1])


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
    rows = con.execute(
        f"SELECT count(*) FROM read_parquet('{tmp_path}/pq/decisions/**/*.parquet', hive_partitioning = true)"
    ).fetchall()[0][0]
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
    section = page[page.index("## The Parquet export") :]
    code = re.search(r"```python\n(.+?)```", section, re.S).group(1)
    namespace = {}
    exec(code.replace("/shared/workbench-parquet", str(tmp_path / "pq")), namespace)  # noqa: S102 - our own docs
    assert namespace["events"].select(pl.len()).collect().item() == table_counts(db)["damage_events"]
    tilt = namespace["tilt"]
    assert tilt.height == 8 and tilt["tilt"].max() <= 1.0


def test_an_export_over_the_folder_that_holds_its_database_is_refused(tmp_path, db, capsys):
    """`export --parquet data --overwrite` with the database in data/ would remove it."""
    folder = tmp_path / "data"
    folder.mkdir()
    inside = folder / "w.duckdb"
    inside.write_bytes(db.read_bytes())
    assert main(["export", "--parquet", str(folder), "--db", str(inside), "--overwrite"]) == 2
    assert "holds the database" in capsys.readouterr().err
    assert inside.read_bytes() == db.read_bytes()


def test_an_export_to_a_folder_of_the_longest_name_is_written(tmp_path, db):
    """The hidden folders it is written in beside it had names longer than the name."""
    out = tmp_path / ("e" * 255)
    assert main(["export", "--parquet", str(out), "--db", str(db)]) == 0
    assert main(["export", "--parquet", str(out), "--db", str(db), "--overwrite"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]


def test_an_overwrite_cut_between_its_renames_leaves_the_tree_as_it_was(tmp_path, db, monkeypatch):
    """Ctrl-C after the old tree was moved aside, before the new one took its place."""
    from pathlib import Path

    out = tmp_path / "pq"
    export_parquet(out, db=db)
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    rename = Path.rename

    def cut(self, target):
        if self.name.endswith(".partial"):
            raise KeyboardInterrupt
        return rename(self, target)

    monkeypatch.setattr(Path, "rename", cut)
    with pytest.raises(KeyboardInterrupt):
        export_parquet(out, db=db, overwrite=True)
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pq"]  # nothing hidden left beside it
