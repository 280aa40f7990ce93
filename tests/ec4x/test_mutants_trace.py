"""A bot-trace line whose `kind` the bot is not known to write is kept as drift (info),
never validated as a session start (mutation testing found this unpinned)."""

import pytest


@pytest.mark.parametrize("kind", ["heartbeat", "session_end", "Session_Start"])
def test_an_unknown_kind_is_drift_not_an_error(ingest_lines, kind):
    report, _ = ingest_lines("bot_trace_g1.jsonl", [{"kind": kind, "gameId": "g1"}])
    assert (report.records, report.rejected) == (1, 0)
    assert [(v.severity, v.rule, v.field, v.locator) for v in report.violations] == [
        ("info", "undocumented_kind", "kind", "line 1")
    ]


def test_a_session_start_line_is_checked_as_one(ingest_lines):
    report, _ = ingest_lines("bot_trace_g1.jsonl", [{"kind": "session_start", "gameId": "g1"}])
    assert {v.severity for v in report.violations} == {"error"}  # timestamp and model are missing
