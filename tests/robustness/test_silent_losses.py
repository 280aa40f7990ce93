"""Nothing is lost in silence: a number too large for its column, two file names that
print alike, a file that is gone, a file read as another format, a game id too long for
a folder, an export cut short, and a million findings of one rule."""

from __future__ import annotations

import json
import os
from pathlib import Path

import duckdb
import pytest

import workbench
from tests.conftest import rows, write_lines
from tests.damage.events import event
from tests.ec4x.conftest import VALID_DRAFT
from workbench import catalog
from workbench.cli import main

BEYOND_64_BITS = [2**63, 2**70]


def decision(tick, tool="idle") -> dict:
    return {"agent_id": "a", "tick": tick, "tool": tool, "params": {}}


def errors_of(report) -> list[tuple]:
    return [(v.locator, v.rule, v.field) for f in report.files for v in f.violations if v.severity == "error"]


# --- integers beyond 64 bits ---------------------------------------------------------------


@pytest.mark.parametrize("big", BEYOND_64_BITS)
def test_an_arena_tick_beyond_64_bits_breaks_its_rule_and_is_kept(tmp_path, big):
    log = write_lines(
        tmp_path / "ep.decisions.jsonl",
        [decision(0), f'{{"agent_id": "a", "tick": {big}, "tool": "idle", "params": {{}}}}'],
    )
    report = workbench.ingest([log], db=tmp_path / "w.duckdb")
    assert errors_of(report) == [("line 2", "less_than_equal", "tick")]
    [violation] = [v for v in report.files[0].violations if v.severity == "error"]
    assert f"found {big}" in violation.message
    # the row says what was written, where its BIGINT column cannot
    assert rows(tmp_path / "w.duckdb", "SELECT tick, extra::VARCHAR, valid FROM arena_decisions ORDER BY seq") == [
        (0, None, True),
        (None, f'{{"tick":{big}}}', False),
    ]


@pytest.mark.parametrize("big", BEYOND_64_BITS)
def test_an_ec4x_turn_beyond_64_bits_breaks_its_rule(tmp_path, big):
    draft = VALID_DRAFT
    log = write_lines(tmp_path / "g.orders.jsonl", [draft, {**draft, "turn": big}])
    report = workbench.ingest([log], db=tmp_path / "w.duckdb")
    assert ("line 2", "less_than_equal", "turn") in errors_of(report)
    assert ("line 1", "less_than_equal", "turn") not in errors_of(report)
    assert rows(tmp_path / "w.duckdb", "SELECT valid FROM ec4x_orders ORDER BY seq")[1] == (False,)


def test_a_damage_turn_beyond_64_bits_breaks_its_rule(tmp_path):
    action = event("action_submitted")
    line = json.dumps(action).replace('"turn": 1', f'"turn": {2**63}', 1)
    log = write_lines(tmp_path / "g.events.jsonl", [event("game_started"), line])
    report = workbench.ingest([log], db=tmp_path / "w.duckdb")
    assert ("line 2", "less_than_equal", "payload.turn") in errors_of(report)
    assert rows(tmp_path / "w.duckdb", "SELECT valid FROM decisions") == [(False,)]
    # the payload keeps the value as written
    assert rows(tmp_path / "w.duckdb", "SELECT payload ->> 'turn' FROM damage_events WHERE seq = 2") == [(str(2**63),)]


def test_the_largest_64_bit_integer_is_still_a_tick(tmp_path):
    log = write_lines(tmp_path / "ep.decisions.jsonl", [decision(2**63 - 1)])
    assert errors_of(workbench.ingest([log], db=tmp_path / "w.duckdb")) == []
    assert rows(tmp_path / "w.duckdb", "SELECT tick FROM arena_decisions") == [(2**63 - 1,)]


# --- two names that print alike ------------------------------------------------------------


def test_a_name_with_a_byte_not_utf8_and_one_spelling_that_byte_are_two_sources(tmp_path):
    raw = Path(os.fsdecode(bytes(tmp_path) + b"/\xff.decisions.jsonl"))
    spelled = tmp_path / "\\xff.decisions.jsonl"
    write_lines(raw, [decision(t) for t in range(50)])
    write_lines(spelled, [decision(t) for t in range(3)])
    db = tmp_path / "w.duckdb"
    for _ in range(2):  # and again: each file is unchanged, none replaced
        statuses = {f.status for f in workbench.ingest([tmp_path], db=db).files}
    assert statuses == {"unchanged"}
    paths = sorted(path for (path,) in rows(db, "SELECT path FROM sources"))
    assert paths == sorted([f"{tmp_path}/\\xff.decisions.jsonl", f"{tmp_path}/\\\\xff.decisions.jsonl"])
    assert rows(db, "SELECT count(*) FROM arena_decisions") == [(53,)]


# --- files gone, and files read as another format -----------------------------------------------


def test_a_deleted_file_is_missing_until_pruned(tmp_path, capsys):
    logs = tmp_path / "logs"
    logs.mkdir()
    kept, gone = (write_lines(logs / f"{name}.decisions.jsonl", [decision(0)]) for name in ("kept", "gone"))
    db = tmp_path / "w.duckdb"
    assert main(["ingest", str(logs), "--db", str(db), "--quiet"]) == 0
    gone.unlink()
    capsys.readouterr()
    assert main(["ingest", str(logs), "--db", str(db), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert (
        f"{gone}: missing: no longer there (deleted, or a link that leads elsewhere now); its rows are kept: "
        f"pass --prune to remove them" in out
    )
    assert rows(db, "SELECT count(*) FROM arena_decisions") == [(2,)]
    assert main(["ingest", str(logs), "--db", str(db), "--quiet", "--prune"]) == 0
    assert f"{gone}: pruned: no longer there; its rows were removed" in capsys.readouterr().out
    assert rows(db, "SELECT count(*) FROM arena_decisions") == [(1,)]
    assert rows(db, "SELECT count(*) FROM sources") == [(1,)]
    # once pruned, nothing more to say
    assert main(["ingest", str(logs), "--db", str(db), "--quiet", "--prune"]) == 0
    assert "pruned" not in capsys.readouterr().out and kept.exists()


def test_a_file_outside_the_paths_named_is_left_alone(tmp_path):
    (tmp_path / "other").mkdir()
    elsewhere = write_lines(tmp_path / "other" / "x.decisions.jsonl", [decision(0)])
    logs = tmp_path / "logs"
    logs.mkdir()
    write_lines(logs / "a.decisions.jsonl", [decision(0)])
    db = tmp_path / "w.duckdb"
    workbench.ingest([elsewhere, logs], db=db)
    elsewhere.unlink()
    report = workbench.ingest([logs], db=db, prune=True)
    assert {f.status for f in report.files} == {"unchanged"}
    assert rows(db, "SELECT count(*) FROM sources") == [(2,)]


def test_a_link_that_leads_elsewhere_now_leaves_its_old_file_missing(tmp_path):
    first = write_lines(tmp_path / "first.decisions.jsonl", [decision(0)])
    second = write_lines(tmp_path / "second.decisions.jsonl", [decision(0), decision(1)])
    logs = tmp_path / "logs"
    logs.mkdir()
    link = logs / "link.decisions.jsonl"
    link.symlink_to(first)
    db = tmp_path / "w.duckdb"
    workbench.ingest([logs], db=db)
    link.unlink()
    link.symlink_to(second)
    report = workbench.ingest([logs], db=db, prune=True)
    assert sorted((Path(f.path).name, f.status) for f in report.files) == [
        ("first.decisions.jsonl", "pruned"),
        ("link.decisions.jsonl", "ingested"),
    ]
    assert rows(db, "SELECT count(*) FROM arena_decisions") == [(2,)]


# --- an export cut short, a game id too long for a folder name ------------------------------------------


@pytest.mark.parametrize("game", ["g" * 300, ""])
def test_a_game_id_of_any_length_is_kept_whole_in_the_export(tmp_path, game):
    """Games are a column, not folders: a game id longer than a folder name can be (255
    bytes), or empty (a folder `game_id=` is no partition to Spark), is written as it is."""
    log = write_lines(tmp_path / f"{'e' * 10}.decisions.jsonl", [decision(0)])
    db = tmp_path / "w.duckdb"
    workbench.ingest([log], db=db)
    with duckdb.connect(str(db)) as con:
        con.execute("UPDATE decisions SET game_id = ?", [game])
    assert main(["export", "--parquet", str(tmp_path / "pq"), "--db", str(db)]) == 0
    assert all(path.is_file() for path in (tmp_path / "pq" / "decisions" / "format=arena").iterdir())
    with duckdb.connect() as con:
        assert con.execute(
            "SELECT game_id FROM read_parquet(?, hive_partitioning = true)",
            [str(tmp_path / "pq" / "decisions" / "*" / "*.parquet")],
        ).fetchall() == [(game,)]


def test_an_export_cut_short_leaves_the_folder_as_it_was(tmp_path, monkeypatch):
    from workbench import parquet_tree

    log = write_lines(tmp_path / "ep.decisions.jsonl", [decision(0)])
    db = tmp_path / "w.duckdb"
    workbench.ingest([log], db=db)
    out = tmp_path / "pq"
    parquet_tree.export_parquet(out, db=db)
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    real, done = parquet_tree._export_table, []

    def interrupted(con, table, target):
        done.append(table)
        if len(done) == 3:
            raise KeyboardInterrupt
        return real(con, table, target)

    monkeypatch.setattr(parquet_tree, "_export_table", interrupted)
    with pytest.raises(KeyboardInterrupt):
        parquet_tree.export_parquet(out, db=db, overwrite=True)
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # nothing half-written left


# --- a line longer than the head ----------------------------------------------------------------


def test_a_cr_only_file_whose_first_line_is_longer_than_the_head_is_refused_as_cr_only(tmp_path):
    line = json.dumps({**decision(0), "reasoning": "x" * 70_000})
    for ending, refused in ((b"\r", True), (b"\r\n", False), (b"\n", False)):
        path = tmp_path / f"{len(ending)}{refused}.decisions.jsonl"
        path.write_bytes((line.encode() + ending) * 3)
        [file] = workbench.validate([path]).files
        if refused:
            assert file.status == "failed" and "its lines end with CR alone, not LF" in file.message
        else:
            assert (file.status, file.records, file.rejected) == ("ingested", 3, 0)


# --- a million findings ---------------------------------------------------------------------------


def test_past_a_thousand_findings_of_a_rule_the_rest_are_counted(tmp_path):
    # 3,000 lines of {}: each misses agent_id, tick, tool and params (seed 002).
    log = tmp_path / "braces.decisions.jsonl"
    log.write_text("{}\n" * 3000)
    db = tmp_path / "w.duckdb"
    [file] = workbench.ingest([log], db=db).files
    assert file.severity_counts()["error"] == 4 * 3000
    listed = rows(db, "SELECT count(*) FROM violations WHERE count IS NULL")[0][0]
    assert listed == catalog.VIOLATIONS_PER_RULE  # one rule: required_key
    [(locator, count, lines)] = rows(db, "SELECT locator, count, len(lines) FROM violations WHERE count IS NOT NULL")
    assert (count, lines) == (4 * 3000 - 1000, 4 * 3000 - 1000) and locator == "lines 251-3000"
    # every finding is still there to count and to join: the view lists each
    assert rows(db, "SELECT count(*), count(DISTINCT line) FROM violation_lines") == [(12000, 3000)]
    assert rows(db, "SELECT count(*) FILTER (WHERE valid) FROM arena_decisions") == [(0,)]
    summary = json.loads(json.dumps(file.to_dict()))
    assert [v["count"] for v in summary["violations"] if v["count"] > 1] == [11000]


def test_the_count_holds_as_the_file_grows_and_equals_a_one_shot_ingest(tmp_path):
    from tests.test_growing_files import assert_same_tables

    log = tmp_path / "braces.decisions.jsonl"
    content = "{}\n" * 2000 + "{}"  # a cut last line, completed later
    log.write_text(content[: len(content) // 2])
    db = tmp_path / "w.duckdb"
    workbench.ingest([log], db=db)
    log.write_text(content)
    workbench.ingest([log], db=db)
    log.write_text(content + "\n" + "{}\n" * 500)
    [file] = workbench.ingest([log], db=db).files
    assert file.status == "appended"
    assert rows(db, "SELECT count(*) FROM violation_lines") == [(4 * 2501,)]
    assert rows(db, "SELECT count(*) FROM violations WHERE count IS NULL AND line IS NOT NULL")[0][0] <= 1000 + 4
    assert_same_tables(db, [log], tmp_path / "one")
