"""A database remembers the schema that made its tables and views: opening it again with
that schema writes nothing; a newer schema, or a table gone, makes them again."""

import hashlib
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

import workbench
from tests.conftest import rows
from tests.test_growing_files import assert_same_tables
from workbench import catalog, connection, registry
from workbench.schema import run_on


def _bytes_of(db: Path) -> str:
    return hashlib.sha256(db.read_bytes()).hexdigest()


def test_opening_a_database_made_by_this_schema_writes_nothing(tmp_path):
    db = tmp_path / "w.duckdb"
    registry.connect(db).close()
    before = _bytes_of(db)
    registry.connect(db).close()
    assert _bytes_of(db) == before
    # Running the statements again would replace the views, and closing would write them.
    con = connection.connect(db)
    con.execute(registry.schema_ddl())
    con.close()
    assert _bytes_of(db) != before


def _made_then_changed(tmp_path: Path, *statements: str) -> Path:
    """A database made by this schema, then changed behind its back."""
    db = tmp_path / "w.duckdb"
    registry.connect(db).close()
    con = duckdb.connect(str(db))
    for statement in statements:
        con.execute(statement)
    con.close()
    return db


def _views_named(db: Path, name: str) -> list:
    return rows(db, "SELECT count(*) FROM duckdb_views() WHERE view_name = ?", [name])


def test_a_database_made_by_another_schema_gets_every_table_and_view(tmp_path):
    db = _made_then_changed(
        tmp_path, "DROP VIEW ec4x_quality_gates", "UPDATE workbench_schema SET fingerprint = 'an older schema'"
    )
    registry.connect(db).close()
    assert _views_named(db, "ec4x_quality_gates") == [(1,)]
    expected = hashlib.sha256(registry.schema_ddl().encode()).hexdigest()
    assert rows(db, "SELECT fingerprint FROM workbench_schema") == [(expected,)]


def test_a_table_dropped_since_is_made_again(tmp_path, sample):
    db = _made_then_changed(tmp_path, "DROP TABLE damage_emotions")
    log = sorted((sample / "damage").glob("game_*.events.jsonl"))[0]
    (report,) = workbench.ingest([log], db=db).files
    assert report.status == "ingested"
    assert rows(db, "SELECT count(*) FROM damage_emotions")[0][0] > 0


def test_a_database_made_before_the_schema_was_remembered_is_brought_up_to_date(tmp_path):
    db = _made_then_changed(tmp_path, "DROP TABLE workbench_schema", "DROP VIEW arena_error_rates")
    registry.connect(db).close()
    assert _views_named(db, "arena_error_rates") == [(1,)]
    assert rows(db, "SELECT count(*) FROM workbench_schema") == [(1,)]


def _ingested_then_changed(tmp_path: Path, log: Path, *statements: str) -> Path:
    db = tmp_path / "w.duckdb"
    workbench.ingest([log], db=db)
    con = duckdb.connect(str(db))
    for statement in statements:
        con.execute(statement)
    con.close()
    return db


@pytest.mark.parametrize("table, grown", [("decisions", True), ("damage_emotions", False)])
@pytest.mark.slow
def test_files_are_read_again_when_a_table_of_their_rows_was_dropped(tmp_path, sample, table, grown):
    source = max((sample / "damage").glob("game_*.events.jsonl"), key=lambda p: p.stat().st_size)
    content, log = source.read_bytes(), tmp_path / source.name
    log.write_bytes(content[: content.index(b"\n", len(content) // 2) + 1] if grown else content)
    db = _ingested_then_changed(tmp_path, log, f"DROP TABLE {table}")
    log.write_bytes(content)  # grown or not, its rows in that table come back whole
    assert workbench.ingest([log], db=db).files[0].status == "replaced"
    assert_same_tables(db, [log], tmp_path)


def test_a_table_no_file_fills_made_again_reads_nothing_again(tmp_path, sample):
    log = tmp_path / "g.events.jsonl"
    log.write_bytes(sorted((sample / "damage").glob("game_*.events.jsonl"))[0].read_bytes())
    db = _ingested_then_changed(tmp_path, log, "DROP TABLE workbench_schema", "DROP TABLE arena_traces")
    assert workbench.ingest([log], db=db).files[0].status == "unchanged"


def test_tables_are_made_all_or_none(tmp_path):
    db = tmp_path / "w.duckdb"
    con = connection.connect(db)
    try:
        with pytest.raises(duckdb.Error):
            catalog.create_schema(con, registry.schema_ddl() + "CREATE TABLE broken (x NOT_A_TYPE);")
    finally:
        con.close()
    assert rows(db, "SELECT count(*) FROM duckdb_tables()") == [(0,)]


def _half_then_whole(tmp_path: Path, sample: Path, *statements: str, grown: bool = True) -> tuple[Path, Path]:
    """The largest sample Damage log ingested (half of it, if `grown`), the database
    then changed behind the workbench's back, and the whole log written."""
    source = max((sample / "damage").glob("game_*.events.jsonl"), key=lambda p: p.stat().st_size)
    content, log = source.read_bytes(), tmp_path / source.name
    log.write_bytes(content[: content.index(b"\n", len(content) // 2) + 1] if grown else content)
    db = _ingested_then_changed(tmp_path, log, *statements)
    log.write_bytes(content)
    return db, log


@pytest.mark.parametrize("statement", ["DROP TABLE sources", "DELETE FROM sources"])
@pytest.mark.slow
def test_rows_of_files_the_database_no_longer_knows_are_not_doubled(tmp_path, sample, statement):
    db, log = _half_then_whole(tmp_path, sample, statement)
    assert workbench.ingest([log], db=db).files[0].status == "ingested"
    assert_same_tables(db, [log], tmp_path)  # the rows of the files it knows
    tables = [
        t for (t,) in rows(db, "SELECT DISTINCT table_name FROM duckdb_columns() WHERE column_name = 'source_id'")
    ]
    counts = "SELECT " + ", ".join(f"(SELECT count(*) FROM {t})" for t in tables)
    assert rows(db, counts) == rows(tmp_path / "one_shot.duckdb", counts)  # and no others


@pytest.mark.parametrize("grown", [True, False])
@pytest.mark.parametrize(
    "statement",
    [
        "DELETE FROM decisions",
        "DELETE FROM damage_emotions WHERE seq % 2 = 0",
        "DELETE FROM violations",
        "INSERT INTO violations SELECT * FROM violations",
    ],
)
@pytest.mark.slow
def test_a_file_whose_rows_were_changed_behind_its_back_is_read_again(tmp_path, sample, statement, grown):
    db, log = _half_then_whole(tmp_path, sample, statement, grown=grown)
    assert workbench.ingest([log], db=db).files[0].status == "replaced"
    assert_same_tables(db, [log], tmp_path)


def test_a_file_whose_rows_are_as_they_were_is_appended_to_or_unchanged(tmp_path, sample):
    db, log = _half_then_whole(tmp_path, sample)
    assert workbench.ingest([log], db=db).files[0].status == "appended"
    assert workbench.ingest([log], db=db).files[0].status == "unchanged"


@pytest.mark.parametrize("column", ["damage_events.extra", "decisions.model", "sources.ingested_at"])
@pytest.mark.slow
def test_a_table_that_lost_a_column_is_made_again_whole(tmp_path, sample, column):
    table, name = column.split(".")
    db, log = _half_then_whole(tmp_path, sample, f"ALTER TABLE {table} DROP COLUMN {name}")
    assert workbench.ingest([log], db=db).files[0].status in ("replaced", "ingested")
    assert rows(
        db, "SELECT count(*) FROM duckdb_columns() WHERE table_name = ? AND column_name = ?", [table, name]
    ) == [(1,)]
    assert_same_tables(db, [log], tmp_path)


def test_a_view_redefined_with_the_same_columns_is_made_again(tmp_path, sample):
    logs = sorted((sample / "ec4x").glob("*.jsonl"))
    db = tmp_path / "w.duckdb"
    workbench.ingest(logs, db=db)
    gates = rows(db, "SELECT * FROM ec4x_quality_gates ORDER BY ALL")
    assert gates
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE nothing AS SELECT * FROM ec4x_quality_gates LIMIT 0")
    con.execute("CREATE OR REPLACE VIEW ec4x_quality_gates AS SELECT * FROM nothing")
    con.close()
    assert {f.status for f in workbench.ingest(logs, db=db).files} == {"unchanged"}
    assert rows(db, "SELECT * FROM ec4x_quality_gates ORDER BY ALL") == gates


@pytest.mark.parametrize(
    "theirs, says",
    [
        ("CREATE TABLE damage_events (x INTEGER)", "its column `source_id` should be BIGINT: no such column"),
        (
            "CREATE TABLE rejects (source_id VARCHAR, locator INTEGER, raw INTEGER, line VARCHAR)",
            "its column `source_id` should be BIGINT: VARCHAR",
        ),
        (
            "CREATE TABLE rejects (source_id BIGINT NOT NULL, locator VARCHAR NOT NULL, raw VARCHAR NOT NULL, line BIGINT, "
            "mine INTEGER NOT NULL)",
            "its column `mine` cannot be NULL",
        ),
        ("CREATE VIEW arena_decisions AS SELECT 1 AS source_id", "a view `arena_decisions` where the workbench keeps"),
        ("CREATE TABLE arena_decisions (source_id BIGINT)", "holds tables the workbench did not make"),  # views over it
        ("CREATE VIEW decisions AS SELECT 1 AS x", "a view `decisions` where the workbench keeps a table"),
    ],
)
def test_a_database_with_a_table_of_the_workbenchs_name_it_did_not_make_is_refused_untouched(
    tmp_path, sample, capsys, theirs, says
):
    from workbench.cli import main

    db = tmp_path / "theirs.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute(theirs)
    before = rows(db, "SELECT sql FROM duckdb_tables() UNION ALL SELECT sql FROM duckdb_views() WHERE NOT internal")
    log = next((sample / "damage").glob("*.events.jsonl"))
    assert main(["ingest", str(log), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err and "ingest into a new database file" in err
    assert (
        rows(db, "SELECT sql FROM duckdb_tables() UNION ALL SELECT sql FROM duckdb_views() WHERE NOT internal")
        == before
    )  # nothing made beside it


@pytest.mark.parametrize("kind", ["TABLE", "VIEW"])
@pytest.mark.parametrize(
    "name",
    [
        "invalid",
        '"Invalid"',
        "LINES",
        "rows",
        "marked",
        "refused",
        "draft_lines",
        "event_lines",
        "emotion_docs",
        "ec4x_lines",
        "arena_lines",
    ],
)
def test_a_database_with_a_table_named_as_a_bound_one_is_refused_by_an_ingest_untouched(
    tmp_path, sample, capsys, kind, name
):
    """DuckDB reads a table or view of the database, in any case, before a table bound
    in Python under the same name: a notebook's view `invalid` made every staged EC4X
    draft invalid. Only an ingest binds batches: the database still opens."""
    from workbench.cli import main

    db = tmp_path / "w.duckdb"
    log = next((sample / "damage").glob("*.events.jsonl"))
    workbench.ingest([log], db=db)
    with duckdb.connect(str(db)) as con:
        con.execute(f"CREATE {kind} {name} AS SELECT 1 AS seq")
    before = rows(db, "SELECT count(*), sum(source_id) FROM damage_events")
    grown = tmp_path / log.name
    grown.write_bytes(log.read_bytes() * 2)
    assert main(["ingest", str(grown), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    said = name.strip('"').lower()
    assert err.count("\n") == 1 and f"`{said}`, a name the workbench reads its own rows under" in err
    assert rows(db, "SELECT count(*), sum(source_id) FROM damage_events") == before
    assert rows(db, f"SELECT seq FROM {name}") == [(1,)]
    workbench.connect(db).close()


def test_a_table_is_bound_only_under_a_declared_name():
    with pytest.raises(ValueError, match="BOUND_NAMES"):
        run_on(duckdb.connect(), pa.table({"n": [1]}), "SELECT * FROM mine", "mine")


def test_a_table_of_the_workbench_with_one_more_column_that_may_be_null_is_kept(tmp_path, sample):
    db = tmp_path / "w.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute(
            "CREATE TABLE rejects (source_id BIGINT NOT NULL, locator VARCHAR NOT NULL, "
            "raw VARCHAR NOT NULL, line BIGINT, note VARCHAR)"
        )
    log = next((sample / "damage").glob("*.events.jsonl"))
    assert workbench.ingest([log], db=db).files[0].status == "ingested"
    assert rows(db, "SELECT count(*) FROM decisions") != [(0,)]


@pytest.mark.parametrize("command", [["plot", "decisions", "-o", "x.png"], ["report", "-o", "x.html"], ["scorecard"]])
@pytest.mark.parametrize(
    "theirs", ["CREATE TABLE decisions (x INTEGER)", "CREATE TABLE sources (id INTEGER, path VARCHAR)"]
)
def test_reading_a_database_the_workbench_did_not_write_is_refused_in_one_line(tmp_path, capsys, command, theirs):
    from workbench.cli import main

    db = tmp_path / "theirs.duckdb"
    duckdb.connect(str(db)).execute(theirs).close()
    command = [*command[:-1], str(tmp_path / command[-1])] if "-o" in command else command
    assert main([*command, "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds no workbench tables" in err


def test_files_are_read_again_when_a_newer_workbench_gives_a_table_of_their_rows_a_column(tmp_path, sample):
    # A database written before `decisions` recorded input and output tokens: its rows have
    # none. Read as it is, its costs are unknown; at the next ingest its files are read whole.
    log = tmp_path / "g.events.jsonl"
    log.write_bytes(sorted((sample / "damage").glob("game_*.events.jsonl"))[0].read_bytes())
    older = [
        "ALTER TABLE decisions DROP COLUMN input_tokens",
        "ALTER TABLE decisions DROP COLUMN output_tokens",
        "ALTER TABLE decisions DROP COLUMN cached_tokens",
        "UPDATE workbench_schema SET fingerprint = 'an older schema', "
        "columns = list_filter(columns, lambda c: c NOT LIKE 'decisions.%_tokens' OR c = 'decisions.tokens')",
    ]
    db = _ingested_then_changed(tmp_path, log, *older)
    con = connection.connect(db, read_only=True)
    try:
        from workbench.comparison import scorecard

        # only totals: unknown at genai-prices' input and output rates, known at one rate for every token
        assert scorecard(con)["cost_per_decision"].null_count() == scorecard(con).height
        card = scorecard(con, prices={model: 1.0 for model in scorecard(con)["model"]})
        per_model = dict(
            con.execute(
                "SELECT model, avg(tokens) / 1e6 FROM decisions WHERE tokens IS NOT NULL "
                "AND model IS NOT NULL GROUP BY model"
            ).fetchall()
        )
        costs = dict(card.select("model", "cost_per_decision").iter_rows())
        assert {model: costs[model] for model in per_model} == pytest.approx(per_model)
    finally:
        con.close()
    assert workbench.ingest([log], db=db).files[0].status == "replaced"
    assert rows(db, "SELECT count(*) FROM decisions WHERE input_tokens IS NOT NULL")[0][0] > 0
    assert_same_tables(db, [log], tmp_path)


@pytest.mark.slow
def test_a_database_written_before_the_counted_findings_reads_as_it_is(tmp_path, sample):
    # No `found_at`, no counting columns, no `violation_lines`: read-only, every command
    # reads it (each finding a row); an ingest brings it up to date.
    log = tmp_path / "g.events.jsonl"
    log.write_bytes(sorted((sample / "damage").glob("game_*.events.jsonl"))[0].read_bytes())
    older = [
        "DROP VIEW violation_lines",
        "ALTER TABLE sources DROP COLUMN found_at",
        *(f"ALTER TABLE violations DROP COLUMN {name}" for name in ("count", "locators", "lines", "fields")),
        "UPDATE workbench_schema SET fingerprint = 'an older schema'",
    ]
    db = _ingested_then_changed(tmp_path, log, *older)
    from workbench import analysis
    from workbench.cli import main

    con = connection.connect(db, read_only=True)
    try:
        assert analysis.format_summary(con)["errors"].to_list() == [
            rows(db, "SELECT count(*) FROM violations WHERE severity = 'error'")[0][0]
        ]
        assert not analysis.scorecard(con).is_empty()
    finally:
        con.close()
    assert main(["report", "--db", str(db), "-o", str(tmp_path / "r.md")]) == 0
    workbench.ingest([log], db=db)
    assert rows(db, "SELECT count(*) FROM duckdb_views() WHERE view_name = 'violation_lines'") == [(1,)]
