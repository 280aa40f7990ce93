"""The bot trace: its line rules, decisions, drift findings and the quality-gate view."""

import pytest

from workbench.ec4x.families import family_of_tag

# The twelve coverage families, transcribed from the bot's summarize_trace_coverage.py
# (its FAMILIES), not taken from the validator's own list.
COVERAGE_FAMILIES = (
    "zero_turn",
    "fleet",
    "build",
    "repair",
    "scrap",
    "diplomacy",
    "population_transfer",
    "terraform",
    "colony_management",
    "espionage",
    "research",
    "investment",
)


def session(model="gpt-4o-mini", **values):
    return {
        "kind": "session_start",
        "timestamp": "2026-02-27T10:00:00-05:00",
        "gameId": "g1",
        "model": model,
        "relays": ["wss://relay"],
        "maxRetries": 2,
        "requestTimeoutSec": 45,
        "autoReconnect": True,
        **values,
    }


def failed(attempt, stage="schema_parse", ms=1000, size=500):
    return {
        "attempt": attempt,
        "stage": stage,
        "details": ["Missing required field: turn"],
        "outcome": "retry",
        "llmRequestMs": ms,
        "llmResponseBytes": size,
    }


def turn(number, ok=True, attempts=1, tags=("fleet",), trace=None, **values):
    trace = trace if trace is not None else [failed(n) for n in range(1, attempts if ok else attempts + 1)]
    return {
        "timestamp": f"2026-02-27T11:{number % 60:02d}:00-05:00",
        "gameId": "g1",
        "turn": number,
        "ok": ok,
        "errorClass": "success" if ok else "validation",
        "attempts": attempts,
        "errors": [] if ok else ["Missing required field: turn"],
        "featureTags": list(tags) if ok else [],
        "trace": trace,
        **values,
    }


def test_valid_lines(check_trace_line):
    assert check_trace_line(session()) == set()
    assert check_trace_line(turn(1)) == set()
    assert check_trace_line(turn(2, ok=False, attempts=3)) == set()


@pytest.mark.parametrize(
    "record, expected",
    [
        (session(model=None), {("string_type", "model")}),
        (session(maxRetries="2"), {("int_type", "maxRetries")}),
        (session(timestamp="2026-02-27T10:00:00"), {("timezone_aware", "timestamp")}),
        (turn(1, errorClass="timeout"), {("enum_value", "errorClass")}),
        ({**turn(1), "attempts": "1"}, {("int_type", "attempts")}),
        (turn(1, attempts=0), {("greater_than_equal", "attempts")}),
        (turn(1, ok="true"), {("bool_type", "ok")}),
        (turn(1, featureTags="fleet"), {("list_type", "featureTags")}),
        (turn(1, attempts=2, trace=[{**failed(1), "stage": "render"}]), {("enum_value", "trace[0].stage")}),
        (turn(1, attempts=2, trace=[failed(1, ms=-5)]), {("greater_than_equal", "trace[0].llmRequestMs")}),
        (turn(1, attempts=2, trace=[{**failed(1), "details": "x"}]), {("list_type", "trace[0].details")}),
        (turn(1, attempts=2, trace=[failed(3)]), {("trace_attempt_in_range", "trace[0].attempt")}),
        (turn(1, ok=True, errorClass="validation"), {("ok_matches_error_class", "errorClass")}),
        (turn(1, ok=False, errorClass="success"), {("ok_matches_error_class", "errorClass")}),
    ],
)
def test_line_rules(check_trace_line, record, expected):
    assert check_trace_line(record) == expected


@pytest.mark.parametrize(
    "key", ["timestamp", "gameId", "turn", "ok", "errorClass", "attempts", "errors", "featureTags", "trace"]
)
def test_every_turn_key_is_required(check_trace_line, key):
    record = turn(1)
    del record[key]
    assert check_trace_line(record) == {("required_key", key)}


def test_tag_families():
    assert family_of_tag("ztc_merge_fleets") == "zero_turn"
    assert family_of_tag("colony_management") == "colony_management"
    assert family_of_tag("weird") is None
    assert [family_of_tag(f) for f in COVERAGE_FAMILIES] == list(COVERAGE_FAMILIES)


def known_trace():
    """A game on two models: 26 turns on gpt-4o-mini, then a restart on another model.

    gpt-4o-mini: turns 1-26 with turn 3 and 4 failing; a run of 22 (turns 5-26);
    retries on turns 3, 4 (failed, 3 attempts) and 10, 20 (ok after 2): 4 of 26.
    Families: fleet, build, zero_turn (from ztc_), research = 4.
    """
    lines = [session()]
    for number in range(1, 27):
        if number in (3, 4):
            lines.append(turn(number, ok=False, attempts=3))
        elif number in (10, 20):
            lines.append(turn(number, attempts=2, tags=("fleet", "build")))
        else:
            lines.append(turn(number, tags=("fleet", "ztc_merge_fleets", "research", "mystery")))
    lines.append(session(model="gemini-2.0-flash", timestamp="2026-02-28T09:00:00+01:00"))
    lines += [turn(27, tags=COVERAGE_FAMILIES), turn(28, ok=False, attempts=3)]
    return lines


def gates(con, model):
    rows = con.execute(
        "SELECT gate, value, threshold, comparison, passed, turns FROM ec4x_quality_gates "
        "WHERE game_id = 'g1' AND model = ?",
        [model],
    ).fetchall()
    return {row[0]: tuple(row[1:]) for row in rows}


def test_quality_gates_on_a_known_trace(ingest_lines):
    lines = known_trace()
    report, con = ingest_lines("bot_trace_g1.jsonl", lines)
    # the only errors: each turn whose orders the bot refused (the model's answer broke them)
    refused = [
        f"line {n}"
        for n, record in enumerate(lines, 1)
        if record.get("ok") is False and record["errorClass"] == "validation"
    ]
    assert refused == ["line 4", "line 5", "line 30"]  # turns 3, 4 and 28 (after two sessions' lines)
    assert refused and [(v.locator, v.rule) for v in report.violations if v.severity == "error"] == [
        (locator, "orders_refused") for locator in refused
    ]
    mini = gates(con, "gpt-4o-mini")
    assert mini["success_rate"] == (pytest.approx(24 / 26), 0.75, ">=", True, 26)
    assert mini["retry_rate"] == (pytest.approx(4 / 26), 0.5, "<=", True, 26)
    assert mini["longest_success_run"] == (22, 20, ">=", True, 26)
    assert mini["feature_families"] == (4, 12, ">=", False, 26)
    other = gates(con, "gemini-2.0-flash")
    assert other["success_rate"][0] == 0.5 and other["retry_rate"][0] == 0.5
    assert other["longest_success_run"][0] == 1
    assert other["feature_families"][:4] == (12, 12, ">=", True)


def test_trace_decisions_and_turn_rows(ingest_lines):
    report, con = ingest_lines("bot_trace_g1.jsonl", known_trace())
    assert report.records == 30 and report.rejected == 0
    rows = con.execute(
        "SELECT turn, model, action, valid, latency_ms, locator FROM decisions WHERE format = 'ec4x' ORDER BY turn"
    ).fetchall()
    assert len(rows) == 28
    by_turn = {row[0]: row for row in rows}
    assert by_turn[3] == (3, "gpt-4o-mini", "validation (attempts 3)", False, 3000.0, "line 4")
    assert by_turn[10] == (10, "gpt-4o-mini", "success (attempts 2): fleet build", True, 1000.0, "line 11")
    assert by_turn[1][4] is None  # no failed attempt, so the trace times nothing
    assert by_turn[27][1] == "gemini-2.0-flash"
    ts = con.execute("SELECT CAST(ts AS VARCHAR) FROM ec4x_turns WHERE turn = 27").fetchone()[0]
    assert ts.startswith("2026-02-27 16:")  # 11:xx at -05:00, stored in UTC


def test_trace_drift_findings(ingest_lines):
    report, _ = ingest_lines("bot_trace_g1.jsonl", known_trace() + [{"kind": "heartbeat", "gameId": "g1"}])
    info = {(v.rule, v.field, v.locator) for v in report.violations if v.severity == "info"}
    assert info == {("unmapped_feature_tag", "featureTags", "line 2"), ("undocumented_kind", "kind", "line 31")}


def test_summary_lines_show_the_gates(ingest_lines):
    from workbench.ec4x import FORMAT

    _, con = ingest_lines("bot_trace_g1.jsonl", known_trace())
    lines = FORMAT.summary(con)
    mini = next(line for line in lines if "gpt-4o-mini" in line)
    assert "success_rate 0.92 >= 0.75 pass" in mini
    assert "longest_success_run 22 >= 20 pass" in mini
    assert "feature_families 4 >= 12 fail" in mini and mini.endswith("=> FAIL")


def test_a_games_turns_in_two_trace_files_give_the_same_gates_whichever_is_read_first(tmp_path):
    import json

    import duckdb

    import workbench

    first, second = tmp_path / "a" / "bot_trace_g1.jsonl", tmp_path / "b" / "bot_trace_g1.jsonl"
    for path, turns in ((first, [turn(1), turn(2)]), (second, [turn(3), turn(4, ok=False, attempts=3)])):
        path.parent.mkdir()
        path.write_text("".join(json.dumps(line) + "\n" for line in (session(), *turns)))
    runs = []
    for order, db in (([first, second], tmp_path / "ab.duckdb"), ([second, first], tmp_path / "ba.duckdb")):
        for path in order:
            workbench.ingest([path], db=db)
        with duckdb.connect(str(db), read_only=True) as con:
            runs += con.execute("SELECT value FROM ec4x_quality_gates WHERE gate = 'longest_success_run'").fetchall()
    # In path order: turns 1, 2 (a/), then 3 and the failed 4 (b/): three successes in a row.
    assert runs == [(3.0,), (3.0,)]
