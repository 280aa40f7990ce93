"""An Agent Arena log that grows: an action's outcome is reported in its agent's next
decision (`last_action_result`, seed 002's observation), so a new line can set the
outcome of a decision read before. Whether the new lines keep each agent's tick order
or not, whatever came before them, the database holds what one ingest of the final
file gives."""

import json

import pytest

import workbench
from tests.conftest import rows
from tests.test_growing_files import assert_same_tables

FAIL = {"success": False, "error_code": "NOT_FOUND", "error_message": "no such berry"}
OK = {"success": True, "error_code": None, "error_message": None}


def line(agent, tick, **values) -> str:
    return json.dumps({"agent_id": agent, "tick": tick, "tool": "idle", "params": {}, **values}) + "\n"


def outcomes(db) -> list:
    return rows(db, "SELECT seq, success, error_code FROM arena_decisions ORDER BY seq")


def grown(tmp_path, before: str, after: str):
    """Ingest `before`, then the file grown to `before + after`; returns its log and database."""
    log, db = tmp_path / "ep1.decisions.jsonl", tmp_path / "grown.duckdb"
    log.write_text(before)
    assert workbench.ingest([log], db=db).files[0].status == "ingested"
    log.write_text(before + after)
    assert workbench.ingest([log], db=db).files[0].status == "appended"
    return log, db


def test_a_new_line_reports_the_outcome_of_its_agents_decision_before(tmp_path):
    before = line("a1", 0) + line("a2", 0) + line("a1", 1, last_action_result=OK)
    log, db = grown(tmp_path, before, line("a2", 1, last_action_result=FAIL) + line("a1", 2))
    # a2's tick-0 idle failed (its next decision says so); a1's tick 1 has no report yet.
    assert outcomes(db) == [(1, True, None), (2, False, "NOT_FOUND"), (3, None, None), (4, None, None), (5, None, None)]
    assert_same_tables(db, [log], tmp_path)


def test_a_decision_own_result_stays_when_a_later_report_arrives(tmp_path):
    before = line("a1", 0, result=OK)
    log, db = grown(tmp_path, before, line("a1", 1, last_action_result=FAIL))
    assert outcomes(db) == [(1, True, None), (2, None, None)]
    assert_same_tables(db, [log], tmp_path)


@pytest.mark.parametrize(
    "after",
    [
        line("a1", 1, last_action_result=FAIL),  # back in time: lands between a1's ticks 0 and 2
        line("a1", 2, last_action_result=FAIL),  # the same tick as a1's last: after it, by line
        line("a3", 0, last_action_result=FAIL),  # an agent not seen before
    ],
)
def test_lines_in_or_out_of_tick_order_give_the_one_shot_outcomes(tmp_path, after):
    before = line("a1", 0) + line("a2", 0) + line("a1", 2, last_action_result=OK) + line("a2", 5)
    log, db = grown(tmp_path, before, after)
    assert_same_tables(db, [log], tmp_path)


def test_the_one_shot_outcomes_when_a_tick_is_not_a_number(tmp_path):
    before = line("a1", 0) + line("a1", "1", last_action_result=OK) + line("a1", 2)
    log, db = grown(tmp_path, before, line("a1", 3, last_action_result=FAIL))
    assert rows(db, "SELECT count(*) FROM arena_decisions WHERE tick IS NULL") == [(1,)]
    assert_same_tables(db, [log], tmp_path)


@pytest.mark.parametrize("completed", ["\n", "garbage\n"])
def test_a_cut_last_line_read_before_then_completed_gives_the_one_shot_outcomes(tmp_path, completed):
    # The last line, a whole record without its newline, is read; it reports the outcome
    # of a1's tick-0 decision out of tick order. Completed, it may stay that record, or
    # stop being one: a1's tick-0 outcome then comes from its tick-2 decision again.
    before = line("a1", 0) + line("a1", 2, last_action_result=OK) + line("a1", 1, last_action_result=FAIL).strip()
    log, db = tmp_path / "ep1.decisions.jsonl", tmp_path / "grown.duckdb"
    log.write_text(before)
    workbench.ingest([log], db=db)
    assert outcomes(db)[0] == (1, False, "NOT_FOUND")
    log.write_text(before + completed)
    assert workbench.ingest([log], db=db).files[0].status == "appended"
    assert outcomes(db)[0] == ((1, False, "NOT_FOUND") if completed == "\n" else (1, True, None))
    assert_same_tables(db, [log], tmp_path)


def test_the_report_goes_to_the_decision_last_by_tick_not_by_line(tmp_path):
    before = line("a1", 0) + line("a1", 5) + line("a1", 3, last_action_result=OK)
    log, db = grown(tmp_path, before, line("a1", 6, last_action_result=FAIL))
    # By tick: 0, 3, 5, 6. Tick 0's report is line 3's; tick 5's, line 4's.
    assert outcomes(db) == [(1, True, None), (2, False, "NOT_FOUND"), (3, None, None), (4, None, None)]
    assert_same_tables(db, [log], tmp_path)


@pytest.mark.parametrize(
    "report",
    [
        {"error_code": "NOT_FOUND", "error_message": "gone"},  # no `success`
        {"success": "no", "error_code": "NOT_FOUND"},
    ],
)  # not a boolean
def test_an_outcome_without_success_goes_when_the_report_stops_being_its_own(tmp_path, report):
    # a1's tick-5 decision takes the report of its tick-7 one; a tick-6 decision arrives
    # between them (out of tick order: every outcome derived again) and reports nothing.
    log, db = grown(tmp_path, line("a1", 5) + line("a1", 7, last_action_result=report), line("a1", 6))
    assert outcomes(db)[0] == (1, None, None)
    assert_same_tables(db, [log], tmp_path)


def test_one_ingest_of_a_file_whose_last_line_has_no_newline_gives_its_outcomes(tmp_path):
    log = tmp_path / "ep1.decisions.jsonl"
    report = {"error_code": "BUSY"}
    text = line("a1", 5) + line("a1", 7, last_action_result=report) + line("a1", 6).strip()
    log.write_text(text)
    workbench.ingest([log], db=tmp_path / "cut.duckdb")
    log.write_text(text + "\n")
    workbench.ingest([log], db=tmp_path / "whole.duckdb")
    assert (
        outcomes(tmp_path / "cut.duckdb")
        == outcomes(tmp_path / "whole.duckdb")
        == [(1, None, None), (2, None, None), (3, None, "BUSY")]
    )
