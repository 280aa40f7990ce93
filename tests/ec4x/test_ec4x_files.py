"""Whole EC4X files: planted faults come back located, records are kept, decisions
are written, and the synthetic corpus's faults are all found where its manifest says."""

import json
import random
from pathlib import Path

import duckdb

import workbench
from workbench.ec4x import synth as synth_ec4x

GOOD = {"turn": 1, "houseId": 3, "fleetCommands": [{"fleetId": 7, "commandType": "move", "targetSystemId": 4}]}


def planted_order_log():
    """(lines, faults): a hand-made order log with a fault at known lines."""
    lines = [
        GOOD,  # 1
        {**GOOD, "turn": 2, "fleetCommands": [{"fleetId": 7, "commandType": "move"}]},  # 2
        "",  # 3 blank
        {**GOOD, "turn": 3, "buildCommands": [{"colonyId": 1, "buildType": "ship", "shipClass": "scout"}]},  # 4
        'Sure! Here are the orders: {"turn": 4}',  # 5
        {**GOOD, "turn": 5, "rationale": "expand"},  # 6
        {**GOOD, "turn": 6, "fleetCommands": [{"fleetId": 7, "commandType": "JoinFleet", "targetFleetId": 2}]},  # 7
        {**GOOD, "turn": 7, "espionageActions": [{"operation": "cyber-attack", "targetHouseId": 1}]},  # 8
        {**GOOD, "houseId": "3", "turn": 8},  # 9
        [1, 2, 3],  # 10
    ]
    faults = {
        ("line 2", "fleetCommands[0].targetSystemId", "target_system_required"),
        ("line 4", "buildCommands[0].quantity", "quantity_required"),
        ("line 5", "(record)", "not_a_json_object"),
        ("line 6", "rationale", "unknown_key"),
        ("line 8", "espionageActions[0].targetSystemId", "espionage_target_required"),
        ("line 9", "houseId", "int_type"),
        ("line 10", "(record)", "not_a_json_object"),
    }
    return lines, faults


def errors(report):
    return {(v.locator, v.field, v.rule) for v in report.violations if v.severity == "error"}


def test_planted_faults_in_an_order_log_are_located(ingest_lines):
    lines, faults = planted_order_log()
    report, con = ingest_lines("g7.orders.jsonl", lines)
    assert errors(report) == faults
    assert {(v.locator, v.field, v.rule) for v in report.violations if v.severity == "info"} == {
        ("line 7", "fleetCommands[0].commandType", "enum_spelling")
    }
    assert report.records + report.rejected == 9  # non-blank lines
    assert (report.records, report.rejected) == (7, 2)
    rejects = con.execute("SELECT locator, raw FROM rejects ORDER BY locator").fetchall()
    assert rejects == [("line 10", "[1, 2, 3]"), ("line 5", 'Sure! Here are the orders: {"turn": 4}')]


def test_order_rows_and_decisions(ingest_lines):
    lines, _ = planted_order_log()
    _, con = ingest_lines("g7.orders.jsonl", lines)
    rows = con.execute("SELECT seq, game_id, turn, house_id, valid FROM ec4x_orders ORDER BY seq").fetchall()
    assert rows == [
        (1, "g7", 1, 3, True),
        (2, "g7", 2, 3, False),
        (4, "g7", 3, 3, False),
        (6, "g7", 5, 3, False),
        (7, "g7", 6, 3, True),
        (8, "g7", 7, 3, False),
        (9, "g7", 8, None, False),
    ]
    decisions = con.execute(
        "SELECT locator, agent_id, action, valid FROM decisions WHERE format = 'ec4x' ORDER BY turn"
    ).fetchall()
    assert decisions[0] == ("line 1", "house 3", "fleet", True)
    assert [valid for *_, valid in decisions] == [valid for *_, valid in rows]
    assert decisions[2][2] == "fleet build"


def test_a_truncated_trace_line_with_a_restart_glued_on_is_a_reject(ingest_lines):
    start = json.dumps(
        {
            "kind": "session_start",
            "timestamp": "2026-02-27T10:00:00+01:00",
            "gameId": "g",
            "model": "m",
            "maxRetries": 2,
        }
    )
    turn = json.dumps(
        {
            "timestamp": "2026-02-27T10:05:00+01:00",
            "gameId": "g",
            "turn": 1,
            "ok": True,
            "errorClass": "success",
            "attempts": 1,
            "errors": [],
            "featureTags": ["fleet"],
            "trace": [],
        }
    )
    extra_key = turn.replace('"turn":', '"turn": 2, "x":')  # keys a trace line does not list are ignored
    report, con = ingest_lines("bot_trace_g.jsonl", [start, turn, turn[:40] + start, extra_key])
    assert errors(report) == {("line 3", "(record)", "not_a_json_object")}
    assert (report.records, report.rejected) == (3, 1)
    assert con.execute("SELECT count(*) FROM decisions").fetchone()[0] == 2


def test_every_synthetic_fault_is_found_where_the_manifest_says(tmp_path):
    entries = synth_ec4x.generate(tmp_path / "ec4x", 1, random.Random("7:ec4x"))
    assert {Path(e["path"]).name.endswith(".orders.jsonl") for e in entries} == {True, False}
    assert sum(len(e["faults"]) for e in entries) > 0
    report = workbench.ingest([tmp_path / "ec4x"], db=tmp_path / "x.duckdb")
    found = {(Path(f.path).name, *fault) for f in report.files for fault in errors(f)}
    expected = {(Path(e["path"]).name, f["locator"], f["field"], f["rule"]) for e in entries for f in e["faults"]}
    assert found == expected  # every fault found, and nothing reported that was not planted
    for file in report.files:
        non_blank = sum(1 for line in Path(file.path).read_text().splitlines() if line.strip())
        assert file.records + file.rejected == non_blank


def test_the_synthetic_games_pass_and_fail_the_gates(tmp_path):
    synth_ec4x.generate(tmp_path / "ec4x", 1, random.Random("7:ec4x"))
    workbench.ingest([tmp_path / "ec4x"], db=tmp_path / "x.duckdb")

    con = duckdb.connect(str(tmp_path / "x.duckdb"))
    verdicts = dict(
        con.execute("SELECT game_id || '/' || model, bool_and(passed) FROM ec4x_quality_gates GROUP BY ALL").fetchall()
    )
    runs = con.execute("SELECT max(value) FROM ec4x_quality_gates WHERE gate = 'longest_success_run'").fetchone()[0]
    models = {key.split("/")[1] for key in verdicts}
    con.close()
    assert True in verdicts.values() and False in verdicts.values()
    assert runs >= 20
    assert len(models) >= 2
    sessions = sum(Path(p).read_text().count('"kind":"session_start"') for p in (tmp_path / "ec4x").glob("bot_trace_*"))
    assert sessions > 3  # restarts


def test_synthesis_is_deterministic(tmp_path):
    first = synth_ec4x.generate(tmp_path / "a", 1, random.Random(5))
    second = synth_ec4x.generate(tmp_path / "b", 1, random.Random(5))
    for a, b in zip(first, second):
        assert Path(a["path"]).read_bytes() == Path(b["path"]).read_bytes()
        assert a["faults"] == b["faults"]


def test_the_sample_corpus_manifest(manifest, sample):
    entries = [e for e in manifest["files"] if e["format"] == "ec4x"]
    assert entries
    report = workbench.ingest([sample / e["path"] for e in entries], db=sample.parent / "ec4x-sample.duckdb")
    found = {(Path(f.path).name, *fault) for f in report.files for fault in errors(f)}
    assert found == {(Path(e["path"]).name, f["locator"], f["field"], f["rule"]) for e in entries for f in e["faults"]}


DRIFT_LINES = [
    {
        "turn": 1,
        "houseId": 1,
        "fleetCommands": [
            {"fleetId": 1, "commandType": "move", "targetSystemId": 2},
            {"fleetId": 2, "commandType": "Move", "targetSystemId": 3},
        ],
    },
    {
        "turn": 1,
        "houseId": 2,
        "fleetCommands": [
            {"fleetId": 1, "commandType": "Move", "targetSystemId": 2},
            {"fleetId": 2, "commandType": "Move", "targetSystemId": 3},
        ],
    },
    {"turn": 1, "houseId": 3, "repairCommands": None},
    {
        "turn": 1,
        "houseId": 4,
        "fleetCommands": [{"fleetId": 1, "commandType": "patrol"}],
        "espionageActions": [{"operation": "Counter_Intel_Sweep"}],
    },
    {"turn": 1, "houseId": "x", "fleetCommands": [{"fleetId": 1, "commandType": "Move"}]},  # errors, and drift
    '{"turn": 1, "fleetCommands": [{"commandType": "Move"',  # cut: a reject, no drift
    [{"commandType": "Move"}],  # not an object: a reject
]


def _drift(con) -> set[tuple]:
    return {
        (locator, rule, field, message.rsplit(" (", 1)[-1])
        for locator, rule, field, message in con.execute(
            "SELECT locator, rule, field, message FROM violations WHERE line IS NULL AND severity = 'info'"
        ).fetchall()
    }


def test_drift_is_counted_once_per_kind_and_line_over_the_file(ingest_lines):
    # By hand: `Move` at lines 1, 2 and 5 (a line with errors still carries its drift, a
    # reject none); the rest once, each at the path it first appears on.
    _, con = ingest_lines("g.orders.jsonl", DRIFT_LINES)
    assert _drift(con) == {
        ("line 1", "enum_spelling", "fleetCommands[1].commandType", "3 lines, first line 1)"),
        ("line 3", "compiler_only_field", "repairCommands", "1 line, first line 3)"),
        ("line 4", "compiler_requires_field", "fleetCommands[0].targetSystemId", "1 line, first line 4)"),
        ("line 4", "enum_spelling", "espionageActions[0].operation", "1 line, first line 4)"),
        ("line 4", "compiler_requires_field", "espionageActions[0].targetHouseId", "1 line, first line 4)"),
    }
    assert con.execute("SELECT count(*) FROM rejects").fetchone() == (2,)


def test_drift_is_listed_in_the_order_it_first_appears(ingest_lines):
    # By line, then by place (a top-level list before a command's fields), then in the
    # order the findings of one value are said: its spelling before what it lacks.
    _, con = ingest_lines(
        "g.orders.jsonl",
        [
            {
                "turn": 1,
                "houseId": 1,
                "fleetCommands": [{"fleetId": 1, "commandType": "hold"}, {"fleetId": 2, "commandType": "Patrol"}],
                "repairCommands": [],
            },
            {"turn": 2, "houseId": 1, "fleetCommands": [{"fleetId": 3, "commandType": "Move", "targetSystemId": 4}]},
        ],
    )
    assert con.execute("SELECT locator, rule, field FROM violations WHERE line IS NULL ORDER BY rowid").fetchall() == [
        ("line 1", "compiler_only_field", "repairCommands"),
        ("line 1", "enum_spelling", "fleetCommands[1].commandType"),
        ("line 1", "compiler_requires_field", "fleetCommands[1].targetSystemId"),
        ("line 2", "enum_spelling", "fleetCommands[0].commandType"),
    ]


def test_drift_of_a_grown_log_goes_on_from_its_old_lines(tmp_path):
    path = tmp_path / "g.orders.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in DRIFT_LINES[:2]))
    workbench.ingest([path], db=tmp_path / "x.duckdb")
    with path.open("a") as log:
        log.write(
            json.dumps(
                {"turn": 2, "houseId": 1, "fleetCommands": [{"fleetId": 5, "commandType": "Move", "targetSystemId": 1}]}
            )
            + "\n"
        )
    (file,) = workbench.ingest([path], db=tmp_path / "x.duckdb").files
    assert file.status == "appended"

    con = duckdb.connect(str(tmp_path / "x.duckdb"))
    assert _drift(con) == {("line 1", "enum_spelling", "fleetCommands[1].commandType", "3 lines, first line 1)")}
    con.close()


def test_a_grown_log_lists_its_drift_as_a_one_shot_ingest_lists_it(tmp_path):
    # Drift first met on line 9, then on line 10 ("line 10" sorts before "line 9" as text).
    plain = {"turn": 1, "houseId": 1, "fleetCommands": [{"fleetId": 1, "commandType": "move", "targetSystemId": 2}]}
    lines = [plain] * 8 + [
        {"turn": 1, "houseId": 1, "fleetCommands": [{"fleetId": 1, "commandType": "Move", "targetSystemId": 2}]},
        {"turn": 1, "houseId": 1, "scrapCommands": []},
        {"turn": 2, "houseId": 1, "fleetCommands": [{"fleetId": 1, "commandType": "JoinFleet", "targetFleetId": 3}]},
    ]
    grown, whole = tmp_path / "grown" / "g.orders.jsonl", tmp_path / "whole" / "g.orders.jsonl"
    for path, db in ((grown, tmp_path / "grown.duckdb"), (whole, tmp_path / "whole.duckdb")):
        path.parent.mkdir()
        path.write_text("".join(json.dumps(line) + "\n" for line in lines[: 10 if path is grown else None]))
        workbench.ingest([path], db=db)
    with grown.open("a") as log:
        log.write(json.dumps(lines[10]) + "\n")
    (file,) = workbench.ingest([grown], db=tmp_path / "grown.duckdb").files
    assert file.status == "appended"
    listed = []
    for db in ("grown.duckdb", "whole.duckdb"):
        con = duckdb.connect(str(tmp_path / db))
        listed.append(con.execute("SELECT locator, rule FROM violations WHERE line IS NULL ORDER BY rowid").fetchall())
        con.close()
    assert (
        listed[0]
        == listed[1]
        == [("line 9", "enum_spelling"), ("line 10", "compiler_only_field"), ("line 11", "enum_spelling")]
    )


REPEATED_KEYS = [
    '{"turn":1,"houseId":1,"fleetCommands":[{"fleetId":1,"commandType":"Move","commandType":"move","targetSystemId":1}]}',
    '{"turn":1,"houseId":1,"fleetCommands":[{"fleetId":1,"commandType":"move","commandType":"Move","targetSystemId":1}]}',
    '{"turn":1,"houseId":1,"fleetCommands":[{"fleetId":1,"commandType":"patrol","targetSystemId":1,"targetSystemId":null}]}',
    '{"turn":1,"houseId":1,"fleetCommands":[],"fleetCommands":[{"fleetId":1,"commandType":"JoinFleet","targetFleetId":1}]}',
    '{"turn":1,"houseId":1,"diplomaticCommand":{"targetHouseId":1,"action":"Declare_Hostile","action":"declare-hostile"}}',
    '{"turn":1,"houseId":1,"houseId":2,"espionageActions":[{"operation":"Counter_Intel_Sweep"}]}',
    '{"turn":1,"houseId":1,"fleetCommands":[{"fleetId":2,"commandType":"Move","targetSystemId":1}]}',
]


def test_a_repeated_key_counts_by_its_last_value_for_drift(ingest_lines):
    # pydantic, like Python's json, keeps the last value of a repeated key; DuckDB's JSON
    # functions read the first. Drift follows the last, as the errors do: line 1 ends on
    # `move` (none), line 2 on `Move`, line 3 on a null target, line 4 on a list with
    # `JoinFleet`, line 5 on the seed's spelling.
    _, con = ingest_lines("g.orders.jsonl", REPEATED_KEYS)
    assert _drift(con) == {
        ("line 2", "enum_spelling", "fleetCommands[0].commandType", "2 lines, first line 2)"),
        ("line 3", "compiler_requires_field", "fleetCommands[0].targetSystemId", "1 line, first line 3)"),
        ("line 4", "enum_spelling", "fleetCommands[0].commandType", "1 line, first line 4)"),
        ("line 6", "enum_spelling", "espionageActions[0].operation", "1 line, first line 6)"),
        ("line 6", "compiler_requires_field", "espionageActions[0].targetHouseId", "1 line, first line 6)"),
    }


def test_a_repeated_key_on_a_line_only_duckdb_reads_is_a_reject(ingest_lines):
    # DuckDB reads a trailing comma; Python's json and pydantic do not: the line is no record.
    _, con = ingest_lines(
        "g.orders.jsonl",
        [
            '{"turn":1,"houseId":1,"fleetCommands":[{"fleetId":1,"commandType":"Move","targetSystemId":1}],"turn":2,}',
            REPEATED_KEYS[1],
        ],
    )
    assert con.execute("SELECT locator FROM rejects").fetchall() == [("line 1",)]
    assert _drift(con) == {("line 2", "enum_spelling", "fleetCommands[0].commandType", "1 line, first line 2)")}
    # Its row goes, and its decision with it.
    assert con.execute("SELECT seq FROM ec4x_orders").fetchall() == [(2,)]
    assert con.execute("SELECT locator, valid FROM decisions").fetchall() == [("line 2", True)]


def test_a_line_only_duckdb_reads_holds_no_drift(ingest_lines):
    # DuckDB reads a trailing comma, in an object or a list; pydantic does not: such a
    # line is a reject, so its drift is none, though DuckDB parsed the line and found it.
    _, con = ingest_lines(
        "g.orders.jsonl",
        [
            '{"turn":1,"houseId":1,"fleetCommands":[{"fleetId":1,"commandType":"Move","targetSystemId":1}],}',
            '{"turn":2,"houseId":1,"espionageActions":[{"operation":"Counter_Intel_Sweep"},]}',
            REPEATED_KEYS[1],
        ],
    )
    assert con.execute("SELECT locator FROM rejects ORDER BY ALL").fetchall() == [("line 1",), ("line 2",)]
    assert _drift(con) == {("line 3", "enum_spelling", "fleetCommands[0].commandType", "1 line, first line 3)")}


# Lines DuckDB cannot read, each followed by a draft with drift and one with an error.
# The screens read a run of lines as one buffer: a line cut short there would take the
# next line into its own value, and a line holding two values would shift the count of
# every line after it, so a line the screen refused would be taken for another.
UNREADABLE_THEN_DRIFT = [
    '{"turn": 1, "houseId": 1, "fleetCommands": [',  # cut inside a list
    '{"turn": 1, "houseId": 2, "fleetCommands": [{"fleetId": 1, "commandType": "Move", "targetSystemId": 3}]}',
    '{"turn": 1, "houseId": 3, "fleetCommands": [{"fleetId": 1, "commandType": "teleport"}]}',
    '{"turn": 1, "houseId": 1} {"turn": 2, "houseId": 1}',  # two values, ending like an object
    '{"turn": 1, "houseId": 4, "espionageActions": [{"operation": "TechTheft", "targetHouseId": 2}]}',
    '{"turn": 1, "houseId": "five"}',
    '{"turn": 1, "houseId": 6}',
]


def _error_lines(con) -> list[int]:
    return [
        line
        for (line,) in con.execute(
            "SELECT DISTINCT line FROM violations WHERE severity = 'error' ORDER BY line"
        ).fetchall()
    ]


def _validity(con) -> list[tuple[int, bool]]:
    return con.execute("SELECT seq, valid FROM ec4x_orders ORDER BY seq").fetchall()


def test_a_line_duckdb_cannot_read_hides_no_drift_or_error_after_it(ingest_lines):
    _, con = ingest_lines("g.orders.jsonl", UNREADABLE_THEN_DRIFT)
    assert _drift(con) == {
        ("line 2", "enum_spelling", "fleetCommands[0].commandType", "1 line, first line 2)"),
        ("line 5", "enum_spelling", "espionageActions[0].operation", "1 line, first line 5)"),
    }
    assert _error_lines(con) == [1, 3, 4, 6]
    assert con.execute("SELECT locator FROM rejects ORDER BY line").fetchall() == [("line 1",), ("line 4",)]
    assert _validity(con) == [(2, True), (3, False), (5, True), (6, False), (7, True)]


def test_a_draft_with_trailing_blanks_is_screened_like_any_other(ingest_lines):
    # It does not end with `}`, as a line cut short does, but DuckDB reads it.
    _, con = ingest_lines(
        "g.orders.jsonl",
        [
            '{"turn": 1, "houseId": 1, "fleetCommands": [',
            '{"turn": 1, "houseId": 2, "fleetCommands": [{"fleetId": 1, "commandType": "Hold"}]}  \t',
            '{"turn": 1, "houseId": "three"} ',
            '{"turn": 1, "houseId": 4}',
        ],
    )
    assert _drift(con) == {("line 2", "enum_spelling", "fleetCommands[0].commandType", "1 line, first line 2)")}
    assert _error_lines(con) == [1, 3]
    assert _validity(con) == [(2, True), (3, False), (4, True)]


def test_a_draft_the_screen_refuses_and_pydantic_passes_has_a_valid_decision(ingest_lines, draft):
    # The decisions are derived while pydantic runs, the drafts the screen refused taken
    # as invalid; a rare spelling the screen leaves to pydantic is valid after all.
    rare = json.loads(json.dumps(draft).replace('"move"', '"mOvE"'))
    broken = {**draft, "houseId": "three"}
    report, con = ingest_lines("g.orders.jsonl", [broken, rare, draft])
    assert errors(report) == {("line 1", "houseId", "int_type")}
    assert con.execute("SELECT seq, valid FROM ec4x_orders ORDER BY seq").fetchall() == [
        (1, False),
        (2, True),
        (3, True),
    ]
    assert con.execute("SELECT locator, valid FROM decisions ORDER BY locator").fetchall() == [
        ("line 1", False),
        ("line 2", True),
        ("line 3", True),
    ]
    assert _drift(con) == {("line 2", "enum_spelling", "fleetCommands[0].commandType", "1 line, first line 2)")}
