"""A Parquet tree on Spark meets the same error contract as a database: nothing read from a
tree (its manifest) names a path outside it, a manifest or part that is not what an
ingest wrote is refused in one line or read again, odd names (`lake[1]`, `lake:1`, a
format `odd name/ä`, an empty game id) read as they are, and the same files give the
same answers as on DuckDB, to the last digit.

One Spark session on `local[2]` serves the module (Spark costs tens of seconds a start)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import skip_without_spark

skip_without_spark()

import workbench  # noqa: E402
from tests.conftest import ROOT, quick_spark_jvm  # noqa: E402
from workbench import cli  # noqa: E402
from workbench import spark as on_spark  # noqa: E402
from workbench.paths import text_of  # noqa: E402
from workbench.spark import load  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("spark")]


@pytest.fixture(scope="module")
def spark():
    with pytest.MonkeyPatch.context() as patch:
        quick_spark_jvm(patch)
        session = on_spark.session(master="local[2]")
    yield session


@pytest.fixture
def logs(sample, tmp_path) -> Path:
    folder = tmp_path / "logs"
    shutil.copytree(sample / "gm", folder)
    return folder


def said(argv: list[str]) -> tuple[int, str, str]:
    """`workbench ARGV` in this process (on the module's Spark session): exit, out, err."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(argv)
    return code, out.getvalue(), err.getvalue()


def on_tree(tree: Path, *argv: str) -> tuple[int, str, str]:
    return said([*argv, "--engine", "spark", "--parquet", str(tree)])


@pytest.mark.parametrize(
    "manifest, why",
    [
        (b"garbage", "Parquet file size is 7 bytes"),
        (b"", "Parquet file size is 0 bytes"),
        (None, "it has no column 'path'"),
    ],
    ids=["garbage", "empty", "another schema"],
)
def test_a_manifest_that_is_not_one_is_refused_in_one_line(logs, tmp_path, spark, manifest, why):
    tree = tmp_path / "lake"
    on_spark.ingest([logs], tree, spark=spark)
    if manifest is None:
        pq.write_table(pa.table({"x": [1]}), tree / load.MANIFEST)
    else:
        (tree / load.MANIFEST).write_bytes(manifest)
    for argv in (["ingest", str(logs), "--quiet"], ["scorecard"]):
        code, out, err = on_tree(tree, *argv)
        assert (code, out) == (2, "") and len(err.splitlines()) == 1, err
        assert (
            err.startswith(
                f"workbench: {tree / load.MANIFEST} is not a manifest `workbench ingest --engine spark` wrote: "
            )
            and why in err
        )


@pytest.mark.parametrize("outside", ["absolute", "parent", "not a part"])
def test_a_manifest_that_lists_a_part_outside_the_tree_touches_nothing(logs, tmp_path, spark, outside):
    tree = tmp_path / "lake"
    on_spark.ingest([logs], tree, spark=spark)
    victim = tmp_path / "victim"
    victim.write_text("precious")
    part = {
        "absolute": str(victim),
        "parent": "decisions/format=gm/../../../victim",
        "not a part": "_manifest.parquet",
    }[outside]
    table = pq.read_table(tree / load.MANIFEST)
    rows = table.to_pylist()
    gone = {**rows[0], "path": rows[0]["path"] + ".gone", "source_id": 99, "parts": [part]}
    pq.write_table(pa.Table.from_pylist(rows + [gone], schema=table.schema), tree / load.MANIFEST)
    code, out, err = on_tree(tree, "ingest", str(logs), "--prune", "--quiet")
    assert code == 2 and "which is not a part of a table of the tree" in err and len(err.splitlines()) == 1
    assert victim.read_text() == "precious" and (tree / load.MANIFEST).exists()


def test_odd_tree_names_are_the_folders_they_name(logs, tmp_path, spark, monkeypatch):
    monkeypatch.chdir(tmp_path)
    expected = said(["ingest", str(logs), "--db", "w.duckdb", "--quiet"]) and said(["scorecard", "--db", "w.duckdb"])
    for name in ("lake:1", "lake[1]", "lake{a,b}*?"):
        code, _, err = on_tree(Path(name), "ingest", str(logs), "--quiet")
        assert code == 0, err
        assert on_tree(Path(name), "scorecard") == expected, name
    assert not Path("lake1").exists()


def test_an_empty_game_id_gives_on_spark_what_it_gives_on_duckdb(sample, tmp_path, spark):
    logs = tmp_path / "e5"
    shutil.copytree(sample / "damage", logs)
    (logs / "x.events.jsonl").write_text(
        json.dumps(
            {
                "schema_version": "0.1",
                "type": "game_started",
                "game_id": "",
                "ts": "2026-02-06T09:38:54+00:00",
                "payload": {"players": 2, "turns": 1, "primary_model": "m", "fallback_models": [], "seed": 1},
            }
        )
        + "\n"
    )
    db, tree, exported = tmp_path / "w.duckdb", tmp_path / "lake", tmp_path / "exported"
    assert said(["ingest", str(logs), "--db", str(db), "--quiet"])[0] == 0
    assert on_tree(tree, "ingest", str(logs), "--quiet")[0] == 0
    assert said(["export", "--parquet", str(exported), "--db", str(db)])[0] == 0
    for command in (["scorecard", "--csv"], ["plan", "--difference", "0.1"]):
        on_duckdb = said([*command, "--db", str(db)])
        assert on_duckdb[0] == 0, on_duckdb
        for where in (tree, exported):
            assert on_tree(where, *command)[1].replace(str(where), str(db)) == on_duckdb[1], (where, command)
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.sql("SELECT count(*) FROM damage_events WHERE game_id = ''").fetchall() == [(1,)]


def test_the_scorecard_as_csv_is_the_same_to_the_last_digit_on_both_engines(sample, tmp_path, spark):
    db, tree = tmp_path / "w.duckdb", tmp_path / "exported"
    workbench.ingest([sample], db=db)
    assert said(["export", "--parquet", str(tree), "--db", str(db)])[0] == 0
    on_duckdb = said(["scorecard", "--csv", "--db", str(db)])[1].splitlines()
    assert on_tree(tree, "scorecard", "--csv")[1].splitlines() == on_duckdb
    assert "p95_ms" in on_duckdb[0] and len(on_duckdb) > 5


def test_a_format_of_any_name_is_named_so_on_spark(sample, tmp_path, spark):
    db, tree = tmp_path / "w.duckdb", tmp_path / "exported"
    workbench.ingest([sample / "gm"], db=db)
    with duckdb.connect(str(db)) as con:
        for table in ("sources", "decisions"):
            con.execute(f"UPDATE {table} SET format = 'odd name/ä'")
    assert said(["export", "--parquet", str(tree), "--db", str(db)])[0] == 0
    on_duckdb = said(["scorecard", "--db", str(db)])[1]
    assert on_tree(tree, "scorecard")[1] == on_duckdb and on_duckdb.startswith("odd name/ä ")


def test_a_rewrite_whose_times_were_put_back_is_read_again(logs, tmp_path, spark):
    tree, db = tmp_path / "lake", tmp_path / "w.duckdb"
    on_spark.ingest([logs], tree, spark=spark)
    workbench.ingest([logs], db=db)
    log = sorted(logs.glob("*.gm.jsonl"))[0]
    times = log.stat()
    log.write_bytes(log.read_bytes().replace(b"The ", b"THE ", 1))
    os.utime(log, ns=(times.st_atime_ns, times.st_mtime_ns))  # `touch -r`: same size, same times
    assert log.stat().st_size == times.st_size
    statuses = {Path(f.path).name: f.status for f in on_spark.ingest([logs], tree, spark=spark).files}
    assert statuses[log.name] == "replaced"
    assert {Path(f.path).name: f.status for f in workbench.ingest([logs], db=db).files}[log.name] == "replaced"
    assert on_tree(tree, "scorecard")[1].replace(str(tree), str(db)) == said(["scorecard", "--db", str(db)])[1]


def test_a_listed_part_written_over_is_read_again(logs, tmp_path, spark):
    tree = tmp_path / "lake"
    on_spark.ingest([logs], tree, spark=spark)
    before = on_tree(tree, "scorecard")
    part = sorted(tree.glob("decisions/**/s*.parquet"))[0]
    part.write_bytes(b"garbage")
    again = on_spark.ingest([logs], tree, spark=spark)
    assert sorted(f.status for f in again.files) == ["replaced", "unchanged", "unchanged"]
    assert on_tree(tree, "scorecard") == before and not part.exists()


def test_a_log_named_inside_the_tree_is_said_why_it_is_not_read(logs, tmp_path, spark):
    tree = tmp_path / "lake"
    on_spark.ingest([logs], tree, spark=spark)
    inside = tree / "mine.gm.jsonl"
    shutil.copy(sorted(logs.glob("*.gm.jsonl"))[0], inside)
    code, out, _ = on_tree(tree, "ingest", str(inside), "--quiet")
    assert code == 2
    assert out.splitlines() == [
        f"{text_of(inside.resolve())}: failed: inside the Parquet tree {tree}, whose files are "
        f"not logs; move it out of the tree to ingest it"
    ]


def test_a_ctrl_c_while_spark_loads_exits_130_in_one_line(sample, tmp_path):
    """In a process of its own: its tasks make their DuckDB files in TMPDIR, which says
    the job is under way."""
    logs = tmp_path / "big"
    logs.mkdir()
    with open(logs / "long.events.jsonl", "wb") as out:
        for _ in range(40):
            for game in sorted((sample / "damage").glob("*.events.jsonl")):
                out.write(game.read_bytes())
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch), "PYTHONPATH": str(ROOT)}
    with pytest.MonkeyPatch.context() as patch:
        quick_spark_jvm(patch)
        env["SPARK_SUBMIT_OPTS"] = os.environ.get("SPARK_SUBMIT_OPTS", "")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "workbench.cli",
            "ingest",
            str(logs),
            "--engine",
            "spark",
            "--parquet",
            str(tmp_path / "lake"),
            "--quiet",
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    end = time.monotonic() + 240
    while not any(scratch.glob("workbench-task-*")) and proc.poll() is None and time.monotonic() < end:
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (out, err)
    assert err.splitlines() == [cli.INTERRUPTED]


def test_quantiles_are_duckdb_s_to_the_last_bit(spark):
    """DuckDB's quantile_cont: the value below plus a fraction of the step up; Spark's
    percentile weighs the two values, which differs in the last digit (the scorecard's
    p95_ms said so in its 16th)."""
    import random

    from workbench.spark import sql

    rng = random.Random(56)
    groups, values, tokens = [], [], []
    for group in range(400):
        for _ in range(rng.randrange(1, 40)):
            groups.append(group)
            values.append(rng.choice([rng.uniform(0, 1e4), rng.lognormvariate(5, 2), round(rng.uniform(0, 9999), 1)]))
            tokens.append(rng.randrange(10, 5000))
    query = (
        "SELECT g, quantile_cont(x, 0.95) AS p95, quantile_cont(x, 0.5) AS p50, quantile_cont(x, 0.33) AS p33, "
        "quantile_cont(t, 0.5) AS t50 FROM (SELECT unnest($gs) AS g, unnest($xs) AS x, unnest($ts::BIGINT[]) AS t) "
        "GROUP BY g ORDER BY g"
    )
    params = {"gs": groups, "xs": values, "ts": tokens}
    expected = duckdb.sql(query, params=params).fetchall()
    got = [tuple(row) for row in spark.sql(sql.to_spark(query, params)).collect()]
    assert got == expected
    empty = "SELECT quantile_cont(x, 0.95) AS q FROM (SELECT unnest($xs::DOUBLE[]) AS x)"
    assert spark.sql(sql.to_spark(empty, {"xs": []})).collect()[0][0] is None


def test_a_line_of_a_4301_digit_integer_costs_that_line_on_spark_too(logs, tmp_path, spark):
    huge = logs / "huge.gm.jsonl"
    huge.write_text('{"id": "r-1", "model": "m", "text": "x", "n": ' + "9" * 4301 + "}\n")
    report = on_spark.ingest([logs], tmp_path / "lake", spark=spark)
    assert {f.status for f in report.files} == {"ingested"} and len(report.files) == 4
    assert [(f.records, f.rejected) for f in report.files if Path(f.path).name == "huge.gm.jsonl"] == [(0, 1)]


# --- found by the second red team -------------------------------------------------------------


def _manifest_rows(tree: Path, change) -> None:
    table = pq.read_table(tree / load.MANIFEST)
    rows = table.to_pylist()
    change(rows)
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), tree / load.MANIFEST)


@pytest.mark.parametrize(
    "change, why",
    [
        (lambda rows: rows[1].update(source_id=rows[0]["source_id"]), "is not one an ingest gives"),
        (lambda rows: rows[0].update(source_id=2**63 - 1), "is not one an ingest gives"),
        (lambda rows: rows[0].update(parts=None), "is listed with no part of `sources`"),
    ],
    ids=["two files of one id", "an id past what an ingest gives", "a file read with no parts"],
)
def test_a_manifest_whose_files_cannot_be_as_it_says_is_refused(logs, tmp_path, spark, change, why):
    tree = tmp_path / "lake"
    on_spark.ingest([logs], tree, spark=spark)
    parts = sorted(tree.rglob("*.parquet"))
    _manifest_rows(tree, change)
    for argv in (["ingest", str(logs), "--quiet"], ["scorecard"]):
        code, _, err = on_tree(tree, *argv)
        assert code == 2 and why in err and len(err.splitlines()) == 1, err
    assert sorted(tree.rglob("*.parquet")) == parts  # nothing removed


def test_a_table_folder_that_leads_out_of_the_tree_is_never_written_or_read_through(logs, tmp_path, spark):
    tree = tmp_path / "lake"
    on_spark.ingest([logs], tree, spark=spark)
    outside = tmp_path / "outside"
    victim = outside / "format=gm" / "game_id=x" / "s1-zzz_0.parquet"
    victim.parent.mkdir(parents=True)
    victim.write_text("precious")
    shutil.rmtree(tree / "decisions")
    (tree / "decisions").symlink_to(outside, target_is_directory=True)
    code, out, _ = on_tree(tree, "ingest", str(logs), "--prune", "--quiet")
    assert code == 2 and out.count("a folder of the tree is a link that leads elsewhere") == 3
    assert victim.read_text() == "precious" and sorted(outside.rglob("*")) == [
        victim.parent.parent,
        victim.parent,
        victim,
    ]
    code, _, err = on_tree(tree, "scorecard")
    assert code == 2 and "its folder decisions is a link that leads out of the tree" in err


def test_a_format_folder_that_leads_out_of_an_exported_tree_is_not_read_through(sample, tmp_path, spark):
    """A tree `export --parquet` wrote has no manifest: Spark lists its table folders, and
    would read another tree's rows through a format folder that is a link."""
    db, tree = tmp_path / "w.duckdb", tmp_path / "exported"
    workbench.ingest([sample / "gm"], db=db)
    assert said(["export", "--parquet", str(tree), "--db", str(db)])[0] == 0
    outside = tmp_path / "outside"
    shutil.move(tree / "decisions" / "format=gm", outside)
    (tree / "decisions" / "format=gm").symlink_to(outside, target_is_directory=True)
    code, _, err = on_tree(tree, "scorecard")
    assert code == 2 and "its folder decisions/format=gm is a link that leads out of the tree" in err
    assert len(err.splitlines()) == 1


def test_a_tree_with_no_decisions_is_called_a_tree(tmp_path, spark):
    tree = tmp_path / "empty"
    tree.mkdir()
    for argv, said_here in (
        (["scorecard"], "no decisions in this tree to score"),
        (["compare"], "no decisions in this tree to compare"),
        (["plan", "--difference", "0.1"], "no decisions in this tree to plan from"),
    ):
        code, _, err = on_tree(tree, *argv)
        assert code == 2 and said_here in err and len(err.splitlines()) == 1, err


def test_a_lock_that_is_a_link_is_not_followed(logs, tmp_path, spark):
    tree = tmp_path / "lake"
    on_spark.ingest([logs], tree, spark=spark)
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (tree / load.LOCK).unlink()
    (tree / load.LOCK).symlink_to(victim)
    code, _, err = on_tree(tree, "ingest", str(logs), "--quiet")
    assert code == 2 and len(err.splitlines()) == 1 and victim.read_text() == "keep"
