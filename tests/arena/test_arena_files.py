"""Whole Agent Arena logs: planted faults come back located, outcomes feed error rates,
decisions are written, and the synthetic corpus's faults are all found."""

import random
from pathlib import Path

import duckdb

import workbench
from workbench.arena import synth as synth_arena


def decision(agent, tick, tool, params, **values):
    return {"agent_id": agent, "tick": tick, "tool": tool, "params": params, "model": "m-" + agent[-1], **values}


FAIL = {"success": False, "error_code": "OUT_OF_RANGE", "error_message": "too far"}
OK = {"success": True}


def planted_log():
    lines = [
        decision("a1", 0, "move_to", {"target": [1, 0, 2]}),  # 1
        decision("a2", 0, "collect", {"target_name": "Berry1"}, result=FAIL),  # 2
        decision("a1", 1, "collect", {"target_name": "Berry1"}, last_action_result=OK),  # 3
        decision("a2", 1, "pick_up", {"target_name": "Berry1"}),  # 4
        "",  # 5 blank
        decision("a1", 2, "move_to", {"target_position": [3, 0, 4]}, last_action_result=FAIL),  # 6
        decision("a2", 2, "query_world", {"radius": "30"}, run="r7"),  # 7
        decision(
            "a1", 3, "craft", {"item_name": "plank"}, last_action_result={"success": False, "error_code": "STUCK"}
        ),  # 8
        decision("a2", "3", "idle", {}),  # 9
        decision("a1", 4, "move_to", {"target": [1, 0]}),  # 10
        '{"agent_id": "a2", "tick": 4, "tool": "idle", "par',  # 11
    ]
    faults = {
        ("line 4", "tool", "unknown_tool"),
        ("line 7", "params.radius", "float_type"),
        ("line 8", "params.station_name", "required_key"),
        ("line 9", "tick", "int_type"),
        ("line 10", "params.target", "position_xyz"),
        ("line 11", "(record)", "not_a_json_object"),
    }
    return lines, faults


def errors(report):
    return {(v.locator, v.field, v.rule) for v in report.violations if v.severity == "error"}


def test_planted_faults_are_located(ingest_lines):
    lines, faults = planted_log()
    report, con = ingest_lines("forage_ep1.decisions.jsonl", lines)
    assert errors(report) == faults
    assert report.records + report.rejected == 10 and report.rejected == 1
    info = {(v.locator, v.field, v.rule) for v in report.violations if v.severity == "info"}
    assert info == {
        ("line 6", "params.target_position", "param_spelling"),
        ("line 8", "last_action_result.error_code", "undocumented_error_code"),
        ("line 7", "run", "undocumented_key"),
    }
    spelling = next(v for v in report.violations if v.rule == "param_spelling")
    assert "did you mean `target`?" in spelling.message
    assert con.execute("SELECT raw FROM rejects").fetchone()[0] == lines[-1]


def test_rows_outcomes_and_decisions(ingest_lines):
    lines, _ = planted_log()
    _, con = ingest_lines("forage_ep1.decisions.jsonl", lines)
    rows = con.execute(
        "SELECT seq, episode, agent_id, tick, tool, success, error_code, valid FROM arena_decisions ORDER BY seq"
    ).fetchall()
    assert rows[:4] == [
        (1, "forage_ep1", "a1", 0, "move_to", True, None, True),  # from a1's next last_action_result
        (2, "forage_ep1", "a2", 0, "collect", False, "OUT_OF_RANGE", True),  # its own result
        (3, "forage_ep1", "a1", 1, "collect", False, "OUT_OF_RANGE", True),
        (4, "forage_ep1", "a2", 1, "pick_up", None, None, False),
    ]
    assert rows[4][:7] == (6, "forage_ep1", "a1", 2, "move_to", False, "STUCK")
    decisions = con.execute(
        "SELECT locator, format, game_id, agent_id, turn, model, action, valid FROM decisions "
        "ORDER BY CAST(split_part(locator, ' ', 2) AS INT)"
    ).fetchall()
    assert len(decisions) == 9
    game = f"{Path(con.execute('SELECT path FROM sources').fetchone()[0]).parent.name}/forage_ep1"  # within its run
    assert decisions[0] == ("line 1", "arena", game, "a1", 0, "m-1", "move_to", True)
    assert [d[-1] for d in decisions] == [row[-1] for row in rows]


def test_error_rates_per_code(ingest_lines):
    lines, _ = planted_log()
    _, con = ingest_lines("forage_ep1.decisions.jsonl", lines)
    rows = con.execute(
        "SELECT tool, error_code, failures, outcomes, documented FROM arena_error_rates WHERE model = '(all models)'"
    ).fetchall()
    rates = {row[:2]: tuple(row[2:]) for row in rows}
    assert rates[("(all tools)", "OUT_OF_RANGE")] == (2, 4, True)
    assert rates[("collect", "OUT_OF_RANGE")] == (2, 2, True)
    assert rates[("move_to", "STUCK")] == (1, 2, False)


def test_every_synthetic_fault_is_found_where_the_manifest_says(tmp_path):
    entries = synth_arena.generate(tmp_path / "arena", 1, random.Random("7:arena"))
    assert sum(len(e["faults"]) for e in entries) > 0
    report = workbench.ingest([tmp_path / "arena"], db=tmp_path / "x.duckdb")
    found = {(Path(f.path).name, *fault) for f in report.files for fault in errors(f)}
    expected = {(Path(e["path"]).name, f["locator"], f["field"], f["rule"]) for e in entries for f in e["faults"]}
    assert found == expected
    for file in report.files:
        non_blank = sum(1 for line in Path(file.path).read_text().splitlines() if line.strip())
        assert file.records + file.rejected == non_blank
    con = duckdb.connect(str(tmp_path / "x.duckdb"))
    agents, models, invalid = con.execute(
        "SELECT count(DISTINCT agent_id), count(DISTINCT model), count(*) FILTER (NOT valid) FROM decisions "
        "WHERE format = 'arena'"
    ).fetchone()
    con.close()
    assert agents >= 3 and models >= 2 and invalid > 0


def test_synthesis_is_deterministic(tmp_path):
    first = synth_arena.generate(tmp_path / "a", 1, random.Random(3))
    second = synth_arena.generate(tmp_path / "b", 1, random.Random(3))
    for a, b in zip(first, second):
        assert Path(a["path"]).read_bytes() == Path(b["path"]).read_bytes()
        assert a["faults"] == b["faults"]


def test_the_sample_corpus_manifest(manifest, sample):
    entries = [e for e in manifest["files"] if e["format"] == "arena"]
    assert entries
    report = workbench.ingest([sample / e["path"] for e in entries], db=sample.parent / "arena-sample.duckdb")
    found = {(Path(f.path).name, *fault) for f in report.files for fault in errors(f)}
    assert found == {(Path(e["path"]).name, f["locator"], f["field"], f["rule"]) for e in entries for f in e["faults"]}


def test_summary_lines(ingest_lines):
    from workbench.arena import FORMAT

    lines, _ = planted_log()
    _, con = ingest_lines("forage_ep1.decisions.jsonl", lines)
    summary = FORMAT.summary(con)
    assert summary[0].startswith("arena decisions: 9 from 2 agents")
    assert "OUT_OF_RANGE 50.0%" in summary[1]
