"""The database mirrors each file's current content: a log ingested while it grew, a cut
last line later completed, a rewritten file and a bot trace appended across sessions
each give, table by table, what one ingest of the final file gives."""

import dataclasses
import hashlib
import json
import shutil
from pathlib import Path

import duckdb
import pytest

import workbench
from tests.conftest import SHARED, rows
from workbench import ingestion as ingest_module
from workbench import registry
from workbench.errors import OlderDatabase
from workbench.violation import Violation

REAL_HOLDEM = SHARED / "corpus" / "damage" / "game_20261123T135537354772Z_ab3780.events.jsonl"
VIEWS = ("ec4x_quality_gates", "arena_error_rates")


def snapshot(db: Path) -> dict[str, list]:
    """Every row of every table and view, with the file's name in place of its source id;
    the columns by name (a database given a column later has it last)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        tables = dict(
            con.execute(
                "SELECT table_name, list(column_name ORDER BY column_name) FROM duckdb_columns() "
                "WHERE table_name IN (SELECT table_name FROM duckdb_columns() WHERE column_name = 'source_id') "
                "AND table_name != 'sources' AND column_name != 'source_id' GROUP BY ALL"
            ).fetchall()
        )
        found = {
            table: con.execute(
                f"SELECT parse_filename(s.path) AS file, {', '.join(f't.{c}' for c in columns)} FROM {table} t "
                f"JOIN sources s USING (source_id) ORDER BY ALL"
            ).fetchall()
            for table, columns in tables.items()
        }
        found["sources"] = con.execute(
            "SELECT parse_filename(path), sha256, format, records, rejected, size, complete_bytes, complete_lines, "
            "resume FROM sources ORDER BY ALL"
        ).fetchall()
        for view in VIEWS:
            found[view] = con.execute(f"SELECT * FROM {view} ORDER BY ALL").fetchall()
        return found
    finally:
        con.close()


def assert_same_tables(grown_db: Path, final_files: list[Path], tmp_path: Path) -> None:
    one_shot_db = tmp_path / "one_shot.duckdb"
    report = workbench.ingest(final_files, db=one_shot_db)
    assert {f.status for f in report.files} == {"ingested"}
    grown, one_shot = snapshot(grown_db), snapshot(one_shot_db)
    assert grown.keys() == one_shot.keys()
    for table in one_shot:
        assert grown[table] == one_shot[table], f"{table} differs from a one-shot ingest"


def grow(path: Path, content: bytes, cuts: list[float], db: Path) -> list:
    """Write `content` to `path` in stages (fractions of its bytes, cut mid-line where
    they fall), ingesting after each; returns the reports."""
    reports = []
    for fraction in cuts:
        path.write_bytes(content[: int(len(content) * fraction)])
        (file,) = workbench.ingest([path], db=db).files
        reports.append(file)
    return reports


@pytest.fixture
def real_holdem() -> bytes:
    if not REAL_HOLDEM.exists():
        pytest.skip(f"the real Damage corpus is absent ({REAL_HOLDEM}); it sits beside the repository in CI")
    return REAL_HOLDEM.read_bytes()


def test_real_log_ingested_while_it_grew(tmp_path, real_holdem):
    content, log, db = real_holdem, tmp_path / REAL_HOLDEM.name, tmp_path / "grown.duckdb"
    reports = grow(log, content, [0.4, 0.7, 1.0], db)
    assert [r.status for r in reports] == ["ingested", "appended", "appended"]
    # Independent counts: the hold'em game has 1,775 lines, 126 actions submitted and 10
    # betting calls that failed (`action_rejected`), each a decision.
    assert content.count(b"\n") == 1775
    assert rows(db, "SELECT count(*) FROM damage_events") == [(1775,)]
    assert rows(db, "SELECT count(*) FROM decisions") == [(decided(content),)] == [(126 + 10,)]
    assert rows(db, "SELECT count(*) FROM rejects") == [(0,)]
    assert_same_tables(db, [log], tmp_path)


def test_a_log_read_before_damage_calls_kept_its_calls_still_grows_right(tmp_path, real_holdem):
    content, log, db = real_holdem, tmp_path / REAL_HOLDEM.name, tmp_path / "grown.duckdb"
    grow(log, content, [0.5], db)
    # As an earlier workbench left it: no calls kept, a state that does not say so, and
    # no count of the file's rows in each table.
    con = duckdb.connect(str(db))
    con.execute("DELETE FROM damage_calls")
    con.execute(
        'UPDATE sources SET resume = json_merge_patch(resume, \'{"format": {"calls_kept": null}}\'), table_rows = NULL'
    )
    con.close()
    assert [r.status for r in grow(log, content, [1.0], db)] == ["appended"]
    assert rows(db, "SELECT count(*) FROM decisions WHERE model IS NOT NULL") == [(decided(content),)]
    assert_same_tables(db, [log], tmp_path)


def test_a_log_read_before_failed_calls_were_decisions_gets_them_when_it_grows(tmp_path, real_holdem):
    content, log, db = real_holdem, tmp_path / REAL_HOLDEM.name, tmp_path / "grown.duckdb"
    grow(log, content, [0.5], db)
    # As an earlier workbench left it: no decision of a failed call, a state that does not
    # say so, and its count of the file's rows in each table made without them.
    con = duckdb.connect(str(db))
    failed = con.execute("DELETE FROM decisions WHERE action IS NULL").fetchall()
    con.execute(
        "UPDATE sources SET resume = json_merge_patch(resume, "
        '\'{"format": {"failed_calls_decided": null}}\'), '
        "table_rows = json_merge_patch(table_rows, json_object('decisions', "
        "(SELECT count(*) FROM decisions)))"
    )
    con.close()
    assert failed != [(0,)]  # the first half holds failed calls
    assert [r.status for r in grow(log, content, [1.0], db)] == ["appended"]
    assert rows(db, "SELECT count(*) FROM decisions") == [(decided(content),)]
    assert_same_tables(db, [log], tmp_path)


def decided(content: bytes) -> int:
    """The decisions of a Damage log: its actions submitted and its betting calls that failed."""
    return content.count(b'"type": "action_submitted"') + content.count(b'"type": "action_rejected"')


def test_a_log_cut_between_a_calls_start_and_its_failure_grows_right(tmp_path, real_holdem):
    # The model of a failed call is on the `thinking` line before the `action_rejected`:
    # cut between the two, the append still finds it in the lines ingested before.
    lines = real_holdem.split(b"\n")
    rejected = next(number for number, line in enumerate(lines, 1) if b'"type": "action_rejected"' in line)
    assert b'"status": "start"' in lines[rejected - 2]  # the line before it: the call's start
    log, db = tmp_path / REAL_HOLDEM.name, tmp_path / "grown.duckdb"
    cut = len(b"\n".join(lines[: rejected - 1])) + 1
    log.write_bytes(real_holdem[:cut])
    workbench.ingest([log], db=db)
    log.write_bytes(real_holdem)
    assert [f.status for f in workbench.ingest([log], db=db).files] == ["appended"]
    assert rows(db, f"SELECT model, valid, outcome FROM decisions WHERE locator = 'line {rejected}'") == [
        ("mock-qwen-14b", None, "failed")
    ]
    assert_same_tables(db, [log], tmp_path)


def _line_ends(content: bytes, needle: bytes) -> list[int]:
    """Where each line that holds `needle` ends (the offset of its newline)."""
    ends, start = [], 0
    while (found := content.find(needle, start)) >= 0:
        ends.append(content.index(b"\n", found))
        start = ends[-1]
    return ends


def test_an_action_whose_call_came_before_the_append_takes_its_model(tmp_path, real_holdem):
    # The log stops right after a provider_call; the action that call produced comes
    # with the next append, and its decision is the call's (model, latency, tokens).
    call_ends = _line_ends(real_holdem, b'"type": "provider_call"')
    action_ends = set(_line_ends(real_holdem, b'"type": "action_submitted"'))
    end = next(e for e in call_ends if real_holdem.index(b"\n", e + 1) in action_ends)
    log, db = tmp_path / REAL_HOLDEM.name, tmp_path / "grown.duckdb"
    log.write_bytes(real_holdem[: end + 1])
    workbench.ingest([log], db=db)
    log.write_bytes(real_holdem)
    assert workbench.ingest([log], db=db).files[0].status == "appended"
    action_line = real_holdem[: end + 1].count(b"\n") + 1
    call = json.loads(real_holdem[real_holdem.rindex(b"\n", 0, end) + 1 : end])["payload"]
    assert rows(db, "SELECT model, latency_ms FROM decisions WHERE locator = ?", [f"line {action_line}"]) == [
        (call["resolved_model"], call["latency_ms"])
    ]
    assert_same_tables(db, [log], tmp_path)


@pytest.mark.parametrize(
    "kind, needle", [("damage", b'"type": "action_submitted"'), ("ec4x", b'"houseId"'), ("arena", b'"tool"')]
)
def test_a_decision_on_a_last_line_without_its_newline_is_not_doubled(tmp_path, sample, kind, needle):
    # A whole record without its newline is read (the writer may be done), then read
    # again when the line proves complete: its decision is replaced, not added to.
    source = max(
        (p for p in (sample / kind).glob("*.jsonl") if needle in p.read_bytes()), key=lambda p: p.stat().st_size
    )
    content = source.read_bytes()
    ends = _line_ends(content, needle)
    end = ends[len(ends) // 2]
    log, db = tmp_path / source.name, tmp_path / "grown.duckdb"
    log.write_bytes(content[:end])
    (first,) = workbench.ingest([log], db=db).files
    last_line = content[:end].count(b"\n") + 1
    assert first.rejected == 0
    assert rows(db, "SELECT count(*) FROM decisions WHERE locator = ?", [f"line {last_line}"]) == [(1,)]
    log.write_bytes(content)
    assert workbench.ingest([log], db=db).files[0].status == "appended"
    # (a Damage log's betting calls that failed are decisions too)
    assert rows(db, "SELECT count(*) FROM decisions") == [
        (decided(content) if kind == "damage" else len(_line_ends(content, needle)),)
    ]
    assert_same_tables(db, [log], tmp_path)


def test_a_file_rewritten_while_the_one_before_it_loads_is_recorded_as_it_is_then(tmp_path, sample, monkeypatch):
    # The second file is chosen, and its hash begun, before the first loads; a writer
    # then rewrites it (shorter, cut mid-line) before its turn.
    logs = sorted((sample / "damage").glob("game_*.events.jsonl"))[:2]
    first, second = tmp_path / logs[0].name, tmp_path / logs[1].name
    shutil.copyfile(logs[0], first)
    content = logs[1].read_bytes()
    second.write_bytes(content)
    cut = content.index(b"\n", 1000) - 10
    load_file = ingest_module._load_file

    def rewrite_then_load(con, file, *rest):
        if file.path == second:
            second.write_bytes(content[:cut])
        return load_file(con, file, *rest)

    monkeypatch.setattr(ingest_module, "_load_file", rewrite_then_load)
    db = tmp_path / "grown.duckdb"
    workbench.ingest([first, second], db=db)
    monkeypatch.undo()
    assert rows(
        db, "SELECT sha256, size, complete_lines FROM sources WHERE parse_filename(path) = ?", [second.name]
    ) == [(hashlib.sha256(content[:cut]).hexdigest(), cut, content[:cut].count(b"\n"))]
    second.write_bytes(content)  # the writer puts the whole log back: it grew
    assert workbench.ingest([second], db=db).files[0].status == "appended"
    assert_same_tables(db, [first, second], tmp_path)


def test_cut_last_line_completed_later(tmp_path, sample):
    source = max((sample / "damage").glob("*.events.jsonl"), key=lambda p: p.stat().st_size)
    content = source.read_bytes()
    middle_of_a_line = content.index(b"\n", len(content) // 2) - 10
    log = tmp_path / source.name
    db = tmp_path / "grown.duckdb"
    log.write_bytes(content[:middle_of_a_line])
    (first,) = workbench.ingest([log], db=db).files
    cut_line = content[:middle_of_a_line].count(b"\n") + 1
    assert rows(db, "SELECT locator FROM rejects") == [(f"line {cut_line}",)]
    assert first.rejected == 1
    log.write_bytes(content)
    (second,) = workbench.ingest([log], db=db).files
    assert second.status == "appended"
    read_again = content.count(b"\n") - cut_line + 1  # the cut line, then every line after it
    assert second.message == f"appended {read_again} lines"
    assert rows(db, "SELECT count(*) FROM rejects WHERE locator = ?", [f"line {cut_line}"]) == [(0,)]
    assert rows(
        db, "SELECT count(*) FROM violations WHERE rule = 'not_a_json_object' AND locator = ?", [f"line {cut_line}"]
    ) == [(0,)]
    assert_same_tables(db, [log], tmp_path)


def test_rewritten_file_is_replaced(tmp_path, sample):
    games = sorted((sample / "damage").glob("game_*.events.jsonl"))
    log = tmp_path / "rewritten.events.jsonl"
    db = tmp_path / "grown.duckdb"
    shutil.copyfile(games[0], log)
    workbench.ingest([log], db=db)
    shutil.copyfile(games[1], log)
    (file,) = workbench.ingest([log], db=db).files
    assert file.status == "replaced"
    assert rows(db, "SELECT count(*) FROM sources") == [(1,)]
    assert_same_tables(db, [log], tmp_path)


@pytest.mark.parametrize("pattern", ["damage/game_*.events.jsonl", "ec4x/*.orders.jsonl"])
def test_a_file_that_grew_and_changed_before_is_replaced(tmp_path, sample, pattern):
    # Its hash is computed while the new lines load: the append is rolled back and the
    # file read whole again, as one ingest of it would.
    original = sorted(sample.glob(pattern))[0].read_bytes()
    log = tmp_path / sorted(sample.glob(pattern))[0].name
    db = tmp_path / "grown.duckdb"
    log.write_bytes(original[: len(original) // 2])
    workbench.ingest([log], db=db)
    first = original.index(b"\n")
    changed = original[:first].replace(b'"', b"'", 1) + original[first:]  # line 1 is no longer JSON
    log.write_bytes(changed)
    (file,) = workbench.ingest([log], db=db).files
    assert file.status == "replaced" and file.rejected >= 1
    assert rows(db, "SELECT count(*) FROM sources") == [(1,)]
    assert_same_tables(db, [log], tmp_path)


def test_bot_trace_appended_across_sessions(tmp_path, sample):
    trace = sorted((sample / "ec4x").glob("bot_trace_*.jsonl"))[0]
    lines = trace.read_bytes().splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if b'"session_start"' in line]
    log = tmp_path / trace.name
    db = tmp_path / "grown.duckdb"
    # One ingest per bot process: each session's lines arrive, then the next session starts.
    bounds = starts[1:] + [len(lines)]
    if len(bounds) < 2:  # a single session: grow it in halves
        bounds = [len(lines) // 2, len(lines)]
    statuses = []
    for end in bounds:
        log.write_bytes(b"".join(lines[:end]))
        statuses.append(workbench.ingest([log], db=db).files[0].status)
    assert statuses == ["ingested"] + ["appended"] * (len(bounds) - 1)
    assert_same_tables(db, [log], tmp_path)


@pytest.mark.parametrize("kind", ["arena", "gm", "ec4x"])
def test_every_line_format_grows_like_a_one_shot_ingest(tmp_path, sample, kind):
    files = sorted(p for p in (sample / kind).iterdir() if p.suffix == ".jsonl")
    db = tmp_path / "grown.duckdb"
    copies = []
    for source in files:
        copy = tmp_path / source.name
        grow(copy, source.read_bytes(), [0.33, 0.5, 0.51, 0.9, 1.0], db)
        copies.append(copy)
    assert_same_tables(db, copies, tmp_path)


def test_an_appended_report_names_the_violations_of_a_one_shot_ingest(tmp_path, sample):
    """A report reads the file's violations back from the database as columns, made
    into `Violation`s when first used: after an append they are the one-shot ingest's,
    in its order, and the counts by severity are the database's."""
    source = sample / "ec4x" / "amber-quiet-c9643a.orders.jsonl"
    grown, whole = tmp_path / "grown" / source.name, tmp_path / "whole" / source.name
    for path in (grown, whole):
        path.parent.mkdir()
    db = tmp_path / "w.duckdb"
    (appended,) = grow(grown, source.read_bytes(), [0.5, 1.0], db)[1:]
    shutil.copyfile(source, whole)
    (one_shot,) = workbench.ingest([whole], db=tmp_path / "one_shot.duckdb").files
    assert appended.status == "appended" and one_shot.status == "ingested"
    # Counted from the stored columns first, then made a list like any other.
    counted = dict(rows(db, "SELECT severity, count(*) FROM violations GROUP BY severity"))
    assert appended.severity_counts() == {
        severity: counted.get(severity, 0) for severity in ("error", "warning", "info")
    }
    assert counted.get("error", 0) > 0 and counted.get("info", 0) > 0
    assert isinstance(appended.violations, list) and len(appended.violations) == len(one_shot.violations)
    assert (
        appended.violations
        == one_shot.violations
        == [
            Violation(*row)
            for row in rows(db, "SELECT locator, severity, rule, field, message FROM violations ORDER BY rowid")
        ]
    )
    assert appended.severity_counts() == one_shot.severity_counts()


def test_unchanged_file_adds_nothing(tmp_path, sample):
    log = tmp_path / "g.events.jsonl"
    shutil.copyfile(sorted((sample / "damage").glob("game_*.events.jsonl"))[0], log)
    db = tmp_path / "w.duckdb"
    workbench.ingest([log], db=db)
    before = snapshot(db)
    (file,) = workbench.ingest([log], db=db).files
    assert file.status == "unchanged"
    assert snapshot(db) == before


def test_shrunk_file_is_replaced(tmp_path, sample):
    source = sorted((sample / "damage").glob("game_*.events.jsonl"))[0]
    log = tmp_path / source.name
    db = tmp_path / "w.duckdb"
    content = source.read_bytes()
    log.write_bytes(content)
    workbench.ingest([log], db=db)
    log.write_bytes(content[: content.index(b"\n", len(content) // 3) + 1])
    (file,) = workbench.ingest([log], db=db).files
    assert file.status == "replaced"
    assert_same_tables(db, [log], tmp_path)


def test_copy_at_another_path_is_its_own_source(tmp_path, sample):
    source = sorted((sample / "damage").glob("game_*.events.jsonl"))[0]
    a, b = tmp_path / "a" / source.name, tmp_path / "b" / source.name
    for path in (a, b):
        path.parent.mkdir()
        shutil.copyfile(source, path)
    db = tmp_path / "w.duckdb"
    report = workbench.ingest([a, b], db=db)
    assert [f.status for f in report.files] == ["ingested", "ingested"]
    assert rows(db, "SELECT count(DISTINCT path) FROM sources") == [(2,)]


def test_cli_says_what_happened(tmp_path, sample, capsys):
    from workbench.cli import main

    source = sorted((sample / "damage").glob("game_*.events.jsonl"))[0]
    content = source.read_bytes()
    log = tmp_path / source.name
    db = str(tmp_path / "w.duckdb")
    half = content.index(b"\n", len(content) // 2) + 1
    log.write_bytes(content[:half])
    assert main(["ingest", str(log), "--db", db, "--quiet"]) == 0
    log.write_bytes(content)
    assert main(["ingest", str(log), "--db", db, "--quiet"]) == 0
    added = content[half:].count(b"\n")
    assert f"appended {added} lines" in capsys.readouterr().out
    log.write_bytes(content[:half] + b"\n")
    assert main(["ingest", str(log), "--db", db, "--quiet"]) == 0
    assert ": replaced" in capsys.readouterr().out
    assert main(["ingest", str(log), "--db", db, "--quiet"]) == 0
    assert ": unchanged" in capsys.readouterr().out


def old_database(path: Path) -> Path:
    """A database as a workbench without append support left it."""
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE sources (source_id BIGINT PRIMARY KEY, path VARCHAR, sha256 VARCHAR UNIQUE, "
        "format VARCHAR, records BIGINT, rejected BIGINT, ingested_at TIMESTAMP)"
    )
    con.close()
    return path


def test_an_older_database_is_refused_in_one_line(tmp_path, capsys):
    from workbench.cli import main

    db = old_database(tmp_path / "old.duckdb")
    log = tmp_path / "g.events.jsonl"
    log.write_text("")
    assert main(["ingest", str(log), "--db", str(db)]) == 2
    assert capsys.readouterr().err == (
        f"workbench: database {db} was written by an older workbench (no append support); "
        f"ingest into a new file: delete it, or pass --db\n"
    )
    with pytest.raises(OlderDatabase, match="written by an older workbench"):
        workbench.connect(db)
    # Refused before anything is written: its tables are as they were.
    assert rows(db, "SELECT column_name FROM duckdb_columns() WHERE table_name = 'sources'") == [
        ("source_id",),
        ("path",),
        ("sha256",),
        ("format",),
        ("records",),
        ("rejected",),
        ("ingested_at",),
    ]


@pytest.mark.slow
def test_the_demo_rebuilds_its_own_older_database(tmp_path, sample):
    import io

    from workbench.demo import run_demo

    data = tmp_path / "data"
    shutil.copytree(sample, data / "sample")
    old_database(data / "workbench.duckdb")
    out = io.StringIO()
    db = run_demo(data, out=out, progress=False)
    assert "was written by an older workbench; rebuilding it" in out.getvalue()
    assert rows(db, "SELECT count(*) FROM sources") == [(len(workbench.ingest([data / "sample"], db=db).files),)]


def test_a_small_append_runs_duckdb_on_one_thread_and_gives_the_others_back(tmp_path, sample, monkeypatch):
    logs = sorted((sample / "damage").glob("game_*.events.jsonl"))[:2]
    grown, new = tmp_path / logs[0].name, tmp_path / logs[1].name
    content = logs[0].read_bytes()
    grown.write_bytes(content[: content.index(b"\n", len(content) // 2) + 1])
    db = tmp_path / "w.duckdb"
    workbench.ingest([grown], db=db)
    grown.write_bytes(content)
    shutil.copyfile(logs[1], new)
    seen, load = {}, registry.FORMATS["damage"].load

    def load_noting_threads(ctx):
        seen[ctx.path.name] = ctx.con.execute("SELECT current_setting('threads')").fetchall()[0][0]
        return load(ctx)

    monkeypatch.setitem(
        registry.FORMATS, "damage", dataclasses.replace(registry.FORMATS["damage"], load=load_noting_threads)
    )
    assert [f.status for f in workbench.ingest([grown, new], db=db).files] == ["appended", "ingested"]
    default = duckdb.connect().execute("SELECT current_setting('threads')").fetchall()[0][0]
    assert seen == {grown.name: 1, new.name: default}


class RecordedBar:
    """A stand-in for tqdm that keeps what the progress bar was told."""

    made: list["RecordedBar"] = []

    def __init__(self, total, **options):
        self.total, self.n, self.finished = total, 0, {}
        RecordedBar.made.append(self)

    def update(self, n):
        assert n >= 0
        self.n += n
        assert self.n <= self.total

    def set_postfix_str(self, text, **options):  # said as each file finishes
        self.finished[text] = self.n

    def close(self):
        pass


@pytest.mark.parametrize("read_before", [300_000, 299_999])
def test_the_progress_of_an_append_after_a_cut_line_counts_each_byte_once(
    tmp_path, real_holdem, monkeypatch, read_before
):
    """The bytes read before, less a cut last line (read again whole), and the new ones
    add up to the file's size when it finishes; the file after it ends the bar at its
    total, never past it."""
    import tqdm.auto

    monkeypatch.setattr(tqdm.auto, "tqdm", RecordedBar)
    log, other, db = tmp_path / "g.events.jsonl", tmp_path / "h.events.jsonl", tmp_path / "w.duckdb"
    log.write_bytes(real_holdem[:read_before])
    workbench.ingest([log], db=db, progress=True)
    log.write_bytes(real_holdem)
    other.write_bytes(real_holdem[:1000].rsplit(b"\n", 1)[0] + b"\n")
    RecordedBar.made.clear()
    report = workbench.ingest([log, other], db=db, progress=True)
    assert [f.status for f in report.files] == ["appended", "ingested"]
    (bar,) = RecordedBar.made
    assert bar.finished == {
        "g.events.jsonl: appended": len(real_holdem),
        "h.events.jsonl: ingested": len(real_holdem) + other.stat().st_size,
    }
    assert bar.n == bar.total


def test_the_progress_of_an_append_rolled_back_and_read_whole_stays_within_its_total(
    tmp_path, real_holdem, monkeypatch
):
    """A file that grew and changed before: the append reads its new lines, finds the
    earlier content changed, and the file is read whole again."""
    import tqdm.auto

    monkeypatch.setattr(tqdm.auto, "tqdm", RecordedBar)
    log, db = tmp_path / "g.events.jsonl", tmp_path / "w.duckdb"
    log.write_bytes(real_holdem[:300_000])
    workbench.ingest([log], db=db, progress=True)
    log.write_bytes(real_holdem.replace(b'"game_started"', b'"game_begun"', 1))  # grown, and line 1 changed
    RecordedBar.made.clear()
    report = workbench.ingest([log], db=db, progress=True)
    assert report.files[0].status == "replaced"
    (bar,) = RecordedBar.made
    assert bar.n == bar.total == log.stat().st_size


def test_a_file_gone_before_the_run_starts_fails_alone_with_the_progress_bar_on(tmp_path, real_holdem):
    """Found by the paths, removed before its turn: the other files load; it fails in
    one line."""
    present, gone = tmp_path / "a.events.jsonl", tmp_path / "b.events.jsonl"
    present.write_bytes(real_holdem)
    report = ingest_module.ingest_files([(present, True), (gone, True)], db=tmp_path / "w.duckdb", progress=True)
    assert [f.status for f in report.files] == ["ingested", "failed"]
    assert "no such file" in report.files[1].message
