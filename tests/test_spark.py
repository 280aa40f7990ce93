"""The Spark engine gives what DuckDB gives: the same files through `workbench ingest`
into a database and through `workbench.spark.ingest` into a Parquet tree, then every
table's rows and every comparison the same, number for number.

One Spark session on `local[2]` serves every test here (the `spark` fixture), and each
corpus is ingested once on each engine for the module (`synthetic`, through the command
line; `real`): Spark costs seconds a query and tens of seconds a start."""

import contextlib
import io
import shutil
from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from tests.conftest import skip_without_spark

skip_without_spark()

import workbench  # noqa: E402
from tests.conftest import quick_spark_jvm  # noqa: E402
from tests.spark_differential import CORPUS, OTEL, equal  # noqa: E402
from workbench import analysis, cli, comparison, connection, registry  # noqa: E402
from workbench import spark as on_spark  # noqa: E402
from workbench.damage import ratings  # noqa: E402
from workbench.parquet_tree import export_parquet  # noqa: E402
from workbench.paths import text_of  # noqa: E402
from workbench.spark import lake, load, manifest, sql  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("spark")]


@pytest.fixture(scope="module")
def spark():
    with pytest.MonkeyPatch.context() as patch:  # only for a JVM started here, now
        quick_spark_jvm(patch)
        session = on_spark.session(master="local[2]")
    yield session


@dataclass
class Ingested:
    """The same files in a database (DuckDB's ingest) and in a tree (Spark's)."""

    db: Path
    tree: Path
    con: duckdb.DuckDBPyConnection
    lake: on_spark.Lake
    report: object  # the DuckDB ingest's
    loaded: load.LakeReport
    printed: dict[str, str]  # the command line's output, by engine (`synthetic` only)
    exit_codes: dict[str, int]


@pytest.fixture(scope="module")
def synthetic(sample, spark, tmp_path_factory):
    """The synthetic corpus and the OTel traces through `workbench ingest` on each engine,
    once: what each printed, and what each ingest reported (taken on the way out)."""
    out = tmp_path_factory.mktemp("both-synthetic")
    db, tree = out / "w.duckdb", out / "lake"
    paths = [str(sample), str(OTEL)]
    reports, printed, exit_codes = {}, {}, {}

    def kept(engine, real):
        def ingest(*args, **kwargs):
            reports[engine] = real(*args, **kwargs)
            return reports[engine]

        return ingest

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(on_spark, "ingest", kept("spark", on_spark.ingest))  # what `workbench ingest` calls
        from workbench import ingestion as on_duckdb

        patch.setattr(on_duckdb, "ingest", kept("duckdb", on_duckdb.ingest))
        for engine, argv in (("spark", ["--engine", "spark", "--parquet", str(tree)]), ("duckdb", ["--db", str(db)])):
            with contextlib.redirect_stdout(io.StringIO()) as said:
                exit_codes[engine] = cli.main(["ingest", *paths, *argv, "--quiet"])
            printed[engine] = said.getvalue()
    con = connection.connect(db, read_only=True)
    yield Ingested(
        db, tree, con, on_spark.open(tree, spark=spark), reports["duckdb"], reports["spark"], printed, exit_codes
    )
    con.close()


@pytest.fixture(scope="module")
def real(spark, tmp_path_factory):
    """The real corpus (`../shared/corpus`): its Damage and Stellaris logs, on each engine."""
    if not CORPUS.is_dir():
        pytest.skip(f"the real corpus is not at {CORPUS} (../shared/corpus beside the repository)")
    paths = [CORPUS / "damage", CORPUS / "stellaris"]
    out = tmp_path_factory.mktemp("both-real")
    report = workbench.ingest(paths, db=out / "w.duckdb")
    loaded = on_spark.ingest(paths, out / "lake", spark=spark)
    con = connection.connect(out / "w.duckdb", read_only=True)
    yield Ingested(
        out / "w.duckdb", out / "lake", con, on_spark.open(out / "lake", spark=spark), report, loaded, {}, {}
    )
    con.close()


@pytest.fixture(scope="module", params=["synthetic", "real"])
def both(request):
    """(database, tree, the DuckDB ingest's report, the Spark ingest's report) of a corpus."""
    ingested = request.getfixturevalue(request.param)
    return ingested.con, ingested.lake, ingested.report, ingested.loaded


def _tables() -> list[str]:
    return [t.name for t in lake._declared_tables()]


# --- the proof ------------------------------------------------------------------------


def test_every_table_holds_as_many_rows_in_the_tree_as_in_the_database(both):
    con, tree, report, loaded = both
    assert {f.status for f in loaded.files} <= {"ingested", "failed"}
    assert sorted(f.path for f in loaded.files if f.status == "failed") == sorted(
        f.path for f in report.files if f.status == "failed"
    )
    counted = 0
    for table in _tables():
        in_db = con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
        assert tree.frame(f"SELECT count(*) AS n FROM {table}")["n"][0] == in_db, table
        counted += in_db
    assert counted > 1000  # a corpus, not an empty run


def test_the_rows_themselves_are_the_same_but_for_the_file_ids(both):
    """Decisions and findings column by column: the same loader ran in Spark's tasks."""
    con, tree, _, _ = both
    for table in ("decisions", "violations", "rejects", "sources"):
        columns = [c for c in connection.column_names(con, table) if c not in ("source_id", "ingested_at")]
        query = (
            f"SELECT s.path AS file, {', '.join('t.' + c for c in sorted(columns))} FROM {table} t "
            f"JOIN sources s USING (source_id)"
        )
        order = ["file", *sorted(c for c in columns if c not in ("locators", "lines", "fields", "resume"))]
        equal(connection.query_frame(con, query).sort(order), tree.frame(query).sort(order))


def test_the_scorecard_and_the_comparisons_are_the_same_interval_for_interval(both):
    con, tree, _, _ = both
    card = comparison.scorecard(con)
    assert card.height >= 1
    equal(card, comparison.scorecard(tree))
    equal(comparison.scorecard(con, by=("format", "game_id")), comparison.scorecard(tree, by=("format", "game_id")))
    equal(comparison.scorecard(con, cluster="file"), comparison.scorecard(tree, cluster="file"))
    if card.group_by("format").len()["len"].max() >= 2:
        pairs = comparison.compare_models(con)
        equal(pairs, comparison.compare_models(tree))
        assert pairs["verdict"].to_list() == comparison.compare_models(tree)["verdict"].to_list()


def test_ratings_summaries_and_violations_are_the_same(both):
    con, tree, _, _ = both
    equal(ratings.placements(con), ratings.placements(tree))
    equal(analysis.ratings(con, bootstrap=50), analysis.ratings(tree, bootstrap=50))
    equal(analysis.format_summary(con), analysis.format_summary(tree))
    equal(analysis.top_violation_rules(con, examples=3), analysis.top_violation_rules(tree, examples=3))
    equal(analysis.quality_gates(con), analysis.quality_gates(tree))
    equal(analysis.provenance(con).drop("ingested_at"), analysis.provenance(tree).drop("ingested_at"))


def test_the_plan_is_the_same(both):
    con, tree, _, _ = both
    if comparison.scorecard(con).is_empty():
        pytest.skip("no decisions in this corpus")
    assert comparison.plan(con) == comparison.plan(tree)


# --- the tree as files change -------------------------------------------------------------


@pytest.fixture
def logs(sample, tmp_path):
    folder = tmp_path / "logs"
    shutil.copytree(sample / "damage", folder)
    return folder


def _tree_rows(tree_dir: Path, table: str) -> int:
    if not any((tree_dir / table).rglob("*.parquet")):
        return 0
    return duckdb.sql(
        f"SELECT count(*) FROM read_parquet('{tree_dir}/{table}/**/*.parquet', hive_partitioning = true)"
    ).fetchall()[0][0]


def test_ingesting_again_skips_unchanged_files_and_rewrites_nothing(logs, tmp_path, spark):
    tree = tmp_path / "lake"
    first = on_spark.ingest([logs], tree, spark=spark)
    parts = sorted(p.relative_to(tree) for p in tree.rglob("*.parquet"))
    again = on_spark.ingest([logs], tree, spark=spark)
    assert [f.status for f in again.files] == ["unchanged"] * len(first.files)
    assert [f.records for f in again.files] == [f.records for f in first.files]
    assert sorted(p.relative_to(tree) for p in tree.rglob("*.parquet")) == parts


def test_a_grown_or_rewritten_file_gives_what_a_one_shot_ingest_of_it_gives(logs, tmp_path, spark):
    tree = tmp_path / "lake"
    on_spark.ingest([logs], tree, spark=spark)
    grown = sorted(logs.glob("*.jsonl"))[0]
    lines = grown.read_bytes().splitlines(keepends=True)
    grown.write_bytes(b"".join(lines + lines[-3:]))  # three more lines
    rewritten = sorted(logs.glob("*.jsonl"))[1]
    rewritten.write_bytes(b"".join(rewritten.read_bytes().splitlines(keepends=True)[:5]))
    report = on_spark.ingest([logs], tree, spark=spark)
    statuses = {Path(f.path).name: f.status for f in report.files}
    assert statuses[grown.name] == statuses[rewritten.name] == "replaced"
    assert sum(s == "unchanged" for s in statuses.values()) == len(statuses) - 2
    fresh = tmp_path / "fresh.duckdb"
    workbench.ingest([logs], db=fresh)
    with duckdb.connect(str(fresh), read_only=True) as con:
        for table in ("sources", "damage_events", "decisions", "violations", "rejects", "damage_emotions"):
            assert _tree_rows(tree, table) == con.sql(f"SELECT count(*) FROM {table}").fetchall()[0][0], table


def test_a_file_gone_is_missing_and_pruned_on_request(logs, tmp_path, spark):
    tree = tmp_path / "lake"
    on_spark.ingest([logs], tree, spark=spark)
    before = _tree_rows(tree, "damage_events")
    gone = sorted(logs.glob("*.jsonl"))[0]
    lines = sum(1 for _ in gone.open("rb"))
    gone.unlink()
    kept = on_spark.ingest([logs], tree, spark=spark)
    assert [f.status for f in kept.files if Path(f.path).name == gone.name] == ["missing"]
    assert _tree_rows(tree, "damage_events") == before
    pruned = on_spark.ingest([logs], tree, spark=spark, prune=True)
    assert [f.status for f in pruned.files if Path(f.path).name == gone.name] == ["pruned"]
    fresh = tmp_path / "fresh.duckdb"
    workbench.ingest([logs], db=fresh)
    with duckdb.connect(str(fresh), read_only=True) as con:
        assert _tree_rows(tree, "damage_events") == con.sql("SELECT count(*) FROM damage_events").fetchall()[0][0]
    assert _tree_rows(tree, "damage_events") < before - lines // 2
    assert text_of(gone.resolve()) not in manifest.read_manifest(tree)


def test_parts_a_run_cut_short_left_are_removed_by_the_next(logs, tmp_path, spark):
    tree = tmp_path / "lake"
    on_spark.ingest([logs], tree, spark=spark)
    events = _tree_rows(tree, "damage_events")
    stray = next(tree.glob("damage_events/**/*.parquet"))
    shutil.copy(stray, stray.with_name("s999-cutshort_0.parquet"))
    (tree / load.STAGING / "cutshort").mkdir(parents=True)
    assert _tree_rows(tree, "damage_events") > events
    on_spark.ingest([logs], tree, spark=spark)
    assert _tree_rows(tree, "damage_events") == events
    assert not (tree / load.STAGING).exists()


def test_one_bad_file_does_not_stop_the_run(logs, tmp_path, spark):
    bad = tmp_path / "notes.bin"  # named, and of no format: the ingest reports it failed
    bad.write_bytes(b"\x00\x01 not a log\n")
    report = on_spark.ingest([logs, bad], tmp_path / "lake", spark=spark)
    failed = [f for f in report.files if f.status == "failed"]
    assert [Path(f.path).name for f in failed] == ["notes.bin"]
    assert failed[0].message == workbench.ingest([bad], db=tmp_path / "w.duckdb").failed[0].message
    assert sum(f.status == "ingested" for f in report.files) == len(list(logs.glob("*.jsonl")))


def test_a_tree_that_export_wrote_reads_as_the_database(synthetic, tmp_path, spark):
    export_parquet(tmp_path / "exported", db=synthetic.db)
    equal(comparison.scorecard(synthetic.con), comparison.scorecard(on_spark.open(tmp_path / "exported", spark=spark)))


def test_two_trees_open_on_one_session_each_answer_with_their_own_rows(synthetic, logs, tmp_path, spark):
    damage_only = tmp_path / "lake"
    on_spark.ingest([logs], damage_only, spark=spark)
    second = on_spark.open(damage_only, spark=spark)  # after the synthetic corpus's tree
    # queries of their own: a Lake keeps the answers it gave
    asked = "SELECT count(*) AS n, '{}' AS asker FROM decisions"
    in_db = synthetic.con.execute("SELECT count(*) FROM decisions").fetchall()[0][0]
    assert synthetic.lake.frame(asked.format("first"))["n"][0] == in_db
    assert second.frame(asked.format("second"))["n"][0] == _tree_rows(damage_only, "decisions") < in_db
    assert synthetic.lake.frame(asked.format("first, again"))["n"][0] == in_db


def test_a_lake_asks_spark_once_per_query_keeps_the_latest_and_gives_copies(synthetic, spark, monkeypatch):
    opened = on_spark.open(synthetic.tree, spark=spark)
    asked = []
    monkeypatch.setattr(lake, "REMEMBERED", 2)
    monkeypatch.setattr(
        opened,
        "spark",
        type(
            "Counting",
            (),
            {  # the queries asked, not the views named
                "sql": lambda _, query: (query.startswith("SELECT") and asked.append(query)) or spark.sql(query),
                "__getattr__": lambda _, name: getattr(spark, name),
            },
        )(),
    )
    lake._SHOWING[id(opened.spark)] = opened  # the counting stand-in holds this Lake's views
    count = "SELECT count(*) AS n FROM decisions WHERE valid = {}"
    first = opened.frame(count.format("true"))
    first[0, "n"] = -1  # the caller's copy: the kept answer is untouched
    assert (
        opened.frame(count.format("true"))["n"][0]
        == synthetic.con.execute("SELECT count(*) FROM decisions WHERE valid").fetchall()[0][0]
    )
    assert len(asked) == 1
    opened.frame(count.format("false"))
    opened.frame("SELECT count(*) AS n FROM sources")  # a third answer: the first goes
    opened.frame(count.format("true"))
    assert len(asked) == 4


def test_a_tree_written_by_another_program_is_not_ingested_into(tmp_path, spark, sample):
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(workbench.WorkbenchError, match="holds files but no _manifest.parquet"):
        on_spark.ingest([sample], tmp_path / "other", spark=spark)


# --- the command line --------------------------------------------------------------------


def test_the_commands_print_the_same_scorecard_on_both_engines(synthetic, tmp_path, capsys):
    """The ingests are the `synthetic` fixture's: `workbench ingest` on each engine."""
    tree, db = str(synthetic.tree), str(synthetic.db)
    assert synthetic.exit_codes == {"spark": 0, "duckdb": 0}
    assert sorted(synthetic.printed["spark"].splitlines()) == sorted(synthetic.printed["duckdb"].splitlines())
    for command in (["scorecard"], ["compare"], ["plan", "--difference", "0.05"]):
        assert cli.main([*command, "--parquet", tree, "--engine", "spark"]) == 0
        on_spark_out = capsys.readouterr().out
        assert cli.main([*command, "--db", db]) == 0
        in_db = capsys.readouterr().out
        assert on_spark_out.replace(tree, db) == in_db, command
    report = tmp_path / "report.html"
    assert cli.main(["report", "--parquet", tree, "--engine", "spark", "-o", str(report)]) == 0
    text = report.read_text()
    assert (
        "Scorecard" in text
        and "Spark could not" not in text
        and "drawn from a database, not from a Parquet tree" in text
    )


@pytest.mark.parametrize(
    "argv, said",
    [
        (["scorecard", "--engine", "spark"], "--engine spark works on a Parquet tree: add --parquet DIR"),
        (["scorecard", "--parquet", "x"], "--parquet DIR is the Spark engine's tree: add --engine spark"),
        (["ingest", "x", "--engine", "spark", "--parquet", "t", "--db", "d"], "drop --db"),
        (["ingest", "x", "--master", "local[2]"], "--master is the Spark cluster: add --engine spark"),
        (["ingest", "x", "--engine", "spark", "--parquet", "t", "--watch"], "run the ingest again"),
        (["scorecard", "--engine", "spark", "--parquet", "/nonexistent/tree"], "is not a folder of Parquet tables"),
    ],
)
def test_a_wrong_engine_request_is_one_line(argv, said, capsys, spark):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert said in err and len(err.splitlines()) == 1


# --- one definition of each query ---------------------------------------------------------


def test_side_by_side_lists_are_walked_together_as_duckdb_walks_them(spark):
    """DuckDB's several unnests in one SELECT pair the lists' elements; so must Spark's."""
    query = "SELECT unnest($a) AS letter, unnest($b) AS number ORDER BY number"
    params = {"a": ["x", "y", "z"], "b": [1, 2, 3]}
    expected = pl.DataFrame({"letter": ["x", "y", "z"], "number": [1, 2, 3]})
    assert_frame_equal(duckdb.sql(query, params=params).pl(), expected, check_dtypes=False)
    assert_frame_equal(pl.from_arrow(spark.sql(sql.to_spark(query, params)).toArrow()), expected, check_dtypes=False)


def test_quantiles_interpolate_as_duckdb_does(spark):
    query = "SELECT quantile_cont(x, 0.95) AS q FROM (SELECT unnest($xs) AS x)"
    params = {"xs": [1.0, 2.0, 10.0, 40.0]}
    # numpy's linear interpolation, computed apart: 0.95 of the way is 2.85 of 3 steps.
    expected = 10.0 + 0.85 * (40.0 - 10.0)
    assert duckdb.sql(query, params=params).fetchall()[0][0] == pytest.approx(expected)
    assert spark.sql(sql.to_spark(query, params)).collect()[0][0] == pytest.approx(expected)


def test_parameters_are_quoted_literals_not_text_pasted_in(spark):
    query = "SELECT $name AS name, $names AS names"
    params = {"name": "O'Brien') OR (1=1", "names": ["a'b", None]}
    row = spark.sql(sql.to_spark(query, params)).collect()[0]
    assert row["name"] == params["name"] and list(row["names"]) == params["names"]
    with pytest.raises(workbench.WorkbenchError, match=r"asks for \$missing"):
        sql.to_spark("SELECT $missing", {})


def test_every_view_of_the_schema_is_made_on_spark(both):
    _, tree, _, _ = both
    views = {name for script in lake._views() for name in [sql.statements(script)[0].split()[4]]}
    assert views == {"violation_lines", "ec4x_quality_gates", "arena_error_rates"}
    con = both[0]
    for view in views:
        query = f"SELECT * FROM {view}"
        in_db = connection.query_frame(con, query).drop("source_id", strict=False)  # ids are each engine's own
        equal(in_db.sort(in_db.columns), tree.frame(query).drop("source_id", strict=False).sort(in_db.columns))


def test_every_table_of_the_registry_is_in_the_tree_views():
    assert set(_tables()) == {t for t in registry.file_tables()} | {"sources"}


def test_the_docs_way_to_pull_one_game_into_duckdb_works(real, tmp_path, monkeypatch):
    """The snippet of docs/beyond-one-machine.md, run as written, on the real logs (the
    tree of the `real` fixture, as `lake` where the snippet runs)."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "beyond-one-machine.md").read_text()
    snippet = next(block for block in page.split("```python")[1:] if "one-game.duckdb" in block).split("```")[0]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lake").symlink_to(real.tree, target_is_directory=True)
    exec(compile(snippet, "docs/beyond-one-machine.md", "exec"), {})
    game = "game_20261123T135533274249Z_d74231"
    with duckdb.connect("one-game.duckdb", read_only=True) as con:
        games = con.sql("SELECT DISTINCT game_id FROM damage_events").fetchall()
        events = con.sql("SELECT count(*) FROM damage_events").fetchall()[0][0]
    assert games == [(game,)]
    assert events == _tree_rows_of_game(tmp_path / "lake", "damage_events", game) > 100


def _tree_rows_of_game(tree_dir: Path, table: str, game: str) -> int:
    return duckdb.sql(
        f"SELECT count(*) FROM read_parquet('{tree_dir}/{table}/**/*.parquet', hive_partitioning = true) "
        "WHERE game_id = ?",
        params=[game],
    ).fetchall()[0][0]


def test_a_file_whose_rows_cannot_be_written_is_failed_and_the_task_goes_on(logs, tmp_path):
    """A task's own work, run here: the place its parts go is under a file, not a folder."""
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    todo = [
        {
            "path": text_of(path.resolve()),
            "named": True,
            "source_id": number,
            "size": path.stat().st_size,
            "mtime_ns": path.stat().st_mtime_ns,
            "found_at": text_of(path),
        }
        for number, path in enumerate(sorted(logs.glob("*.jsonl")), 1)
    ]
    results = load._load_files(todo, tmp_path / "task.duckdb", blocker / "_staging" / "run", None)
    assert [r["status"] for r in results] == ["failed"] * len(todo)
    assert all("cannot write its rows" in r["message"] and r["records"] > 0 for r in results)


def test_a_file_read_as_another_format_now_is_read_again(logs, tmp_path, spark):
    tree = tmp_path / "lake"
    on_spark.ingest([logs], tree, spark=spark)
    again = on_spark.ingest([logs], tree, spark=spark, format="gm")
    assert {f.status for f in again.files} <= {"replaced", "failed"} and again.files
    assert {f.format for f in again.files if f.status == "replaced"} <= {"gm"}


def test_a_file_of_no_format_in_a_folder_is_skipped_quietly_as_the_ingest_does(logs, tmp_path, spark):
    notes = logs / "notes.txt"
    notes.write_text("not a log\n")
    tree = tmp_path / "lake"
    first = on_spark.ingest([logs], tree, spark=spark)
    assert text_of(notes.resolve()) not in {f.path for f in first.files}
    notes.unlink()
    after = on_spark.ingest([logs], tree, spark=spark)
    assert {f.status for f in after.files} == {"unchanged"}  # not "missing"


def test_a_tree_inside_the_paths_is_not_read_as_logs(logs, spark):
    tree = logs / "lake"
    on_spark.ingest([logs], tree, spark=spark)
    again = on_spark.ingest([logs], tree, spark=spark)
    assert {f.status for f in again.files} == {"unchanged"}
    assert not any("/lake/" in path for path in manifest.read_manifest(tree))


def test_each_task_gets_its_own_share_of_the_files(logs, tmp_path, spark):
    todo = [
        (text_of(path.resolve()), True, number, path.stat().st_size, path.stat().st_mtime_ns, text_of(path))
        for number, path in enumerate(sorted(logs.glob("*.jsonl"))[:4], 1)
    ]
    results = load._run_tasks(spark, tmp_path / "lake", "run", todo, None, partitions=4)
    assert sorted(r["source_id"] for r in results) == [1, 2, 3, 4]
    attempts = {r["staged"].split("-")[1] for r in results}
    assert len(attempts) == 4  # four tasks, one file each: no task got two, none none


def test_files_reached_through_a_link_are_found_where_the_database_finds_them(logs, tmp_path, spark):
    # sources.path follows the link; found_at keeps the path as it was given, on both engines
    linked = tmp_path / "linked"
    linked.symlink_to(logs, target_is_directory=True)
    db, tree = tmp_path / "w.duckdb", tmp_path / "lake"
    workbench.ingest([linked], db=db)
    on_spark.ingest([linked], tree, spark=spark)
    query = "SELECT path, found_at FROM sources ORDER BY path"
    with workbench.connect(db, read_only=True) as con:
        on_duckdb = con.execute(query).fetchall()
    on_tree = on_spark.open(tree, spark=spark).frame(query).rows()
    assert on_tree == on_duckdb and len(on_duckdb) == len(list(logs.glob("*.jsonl")))
    assert all(path.startswith(str(logs.resolve())) and found.startswith(str(linked)) for path, found in on_duckdb)


def test_unequal_and_null_lists_are_padded_as_duckdb_pads_them(spark):
    query = "SELECT unnest($a) AS a, unnest($b::BIGINT[]) AS b, unnest(NULL::VARCHAR[]) AS c"
    params = {"a": ["x", "y", "z"], "b": [1]}
    expected = duckdb.sql(query, params=params).pl()
    assert expected.height == 3
    got = pl.from_arrow(spark.sql(sql.to_spark(query, params)).toArrow())
    assert_frame_equal(got.sort("a"), expected.sort("a"), check_dtypes=False)


def test_the_example_message_is_the_first_finding_on_both_engines(both):
    con, tree, _, _ = both
    rules = analysis.top_violation_rules(con, limit=5)
    first = connection.query_frame(
        con,
        """
        SELECT v.rule, v.message FROM violation_lines v JOIN sources s USING (source_id)
        WHERE v.severity IN ('error', 'warning')
        QUALIFY row_number() OVER (PARTITION BY v.rule ORDER BY s.path, coalesce(v.line, 0), v.locator) = 1""",
    )
    expected = dict(zip(first["rule"], first["message"]))
    assert all(expected[row["rule"]] == row["example"] for row in rules.iter_rows(named=True))
