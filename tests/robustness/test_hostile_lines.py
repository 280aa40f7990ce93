"""Single hostile lines against the bulk reader and the screen: each is a record or a
reject with its text and the exact violations pydantic gives it alone, and the run goes
on. The expected findings come from pydantic-core run on the line by itself."""

import json

import duckdb
import pytest

import workbench
from tests.conftest import rows
from tests.damage.events import event
from workbench.damage.models import LINES, SCREEN
from workbench.screen import DEPTH_BOUND


def write(path, *lines: str | bytes):
    path.write_bytes(b"".join((line if isinstance(line, bytes) else line.encode()) + b"\n" for line in lines))
    return path


def alone(line: str) -> set[tuple]:
    """(field, rule) of every error pydantic finds in the line by itself."""
    try:
        LINES.validate_python([line])
        return set()
    except Exception as exc:
        return {(".".join(str(p) for p in e["loc"][2:]), e["type"]) for e in exc.errors()}


def test_an_empty_event_type_is_an_undocumented_type_and_the_next_file_loads(tmp_path):
    odd = write(tmp_path / "a.events.jsonl", json.dumps({**event("phase_changed"), "type": ""}))
    good = write(tmp_path / "b.events.jsonl", json.dumps(event("phase_changed")))
    report = workbench.ingest([odd, good], db=tmp_path / "w.duckdb")
    assert [(f.status, f.records, f.rejected) for f in report.files] == [("ingested", 1, 0), ("ingested", 1, 0)]
    assert [v.rule for v in report.files[0].violations] == ["undocumented_event_type"]


@pytest.mark.parametrize("position", [0, 2, 99])
def test_text_that_looks_like_a_path_in_a_value_does_not_move_an_error(tmp_path, position):
    # msgspec quotes the refused value before the path of the error: the value cannot
    # point the screen at another line.
    fooling = {**event("thinking")}
    fooling["payload"] = {**fooling["payload"], "status": f"x - at `$[{position}]`"}
    bad_turn = {**event("thinking")}
    bad_turn["payload"] = {**bad_turn["payload"], "turn": "zero"}
    lines = [json.dumps(event("thinking")), json.dumps(fooling), json.dumps(bad_turn), json.dumps(event("thinking"))]
    (file,) = workbench.ingest([write(tmp_path / "g.events.jsonl", *lines)], db=tmp_path / "w.duckdb").files
    found = {(v.locator, v.field, v.rule) for v in file.violations if v.severity == "error"}
    assert found == {("line 2", "payload.status", "enum_value"), ("line 3", "payload.turn", "int_type")}
    assert alone(lines[1]) == {("payload.status", "literal_error")}  # the same finding, from pydantic alone


@pytest.mark.parametrize("depth", [DEPTH_BOUND - 3, 199, 200, 990, 3000])
def test_deep_nesting_is_what_pydantic_says_it_is_and_the_run_goes_on(tmp_path, depth):
    nested = "[" * depth + "]" * depth  # written as text: deeper than Python's own parser goes
    thinking = {**event("thinking")}
    thinking["payload"] = {**thinking["payload"], "deep": 1}
    line = json.dumps(thinking).replace('"deep": 1', '"deep": ' + nested)
    emotions = {"fear": 0.1, "anger": 0.1, "shame": 0.1, "confidence": 0.1, "tilt": 0.1}
    undocumented = json.dumps({**event("phase_changed"), "type": "odd", "payload": {**emotions, "x": 1}})
    undocumented = undocumented.replace('"x": 1', '"x": ' + nested)
    path = write(tmp_path / "g.events.jsonl", line, undocumented, json.dumps(event("phase_changed")))
    (file,) = workbench.ingest([path], db=tmp_path / "w.duckdb").files
    refused_by_pydantic = [alone(text) == {("", "json_invalid")} for text in (line, undocumented)]
    assert file.status == "ingested" and file.records + file.rejected == 3
    assert file.rejected == sum(refused_by_pydantic)
    assert refused_by_pydantic == [depth >= 200] * 2


def test_the_screen_passes_no_line_pydantic_refuses_for_its_depth():
    for depth in range(DEPTH_BOUND - 5, 205):
        record = {**event("thinking")}
        record["payload"] = {**record["payload"], "deep": json.loads("[" * depth + "]" * depth)}
        text = json.dumps(record)
        if SCREEN.accepts(text):
            assert not alone(text), depth


def test_many_bad_lines_are_all_rejects(tmp_path):
    lines = [json.dumps(event("phase_changed")) if i % 2 else "{" for i in range(6000)]
    (file,) = workbench.ingest([write(tmp_path / "g.events.jsonl", *lines)], db=tmp_path / "w.duckdb").files
    assert (file.records, file.rejected) == (3000, 3000)
    assert rows(tmp_path / "w.duckdb", "SELECT min(line), max(line) FROM rejects") == [(1, 5999)]


def test_a_line_that_starts_with_cr_is_a_record(tmp_path):
    path = write(tmp_path / "g.events.jsonl", b"\r" + json.dumps(event("phase_changed")).encode())
    (file,) = workbench.ingest([path], db=tmp_path / "w.duckdb").files
    assert (file.records, file.rejected) == (1, 0)
    assert rows(tmp_path / "w.duckdb", "SELECT seq, type FROM damage_events") == [(1, "phase_changed")]


@pytest.mark.parametrize("name", ["g.events.jsonl", "a.decisions.jsonl", "s.gm.jsonl", "g.orders.jsonl"])
def test_only_one_cr_before_lf_is_dropped(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b"{bad\r\r\n")
    workbench.ingest([path], db=tmp_path / "w.duckdb")
    con = duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True)
    assert con.execute("SELECT raw FROM rejects").fetchall() == [("{bad\r",)]
    con.close()


def test_an_empty_file_that_grows_is_appended_to(tmp_path):
    path = tmp_path / "g.events.jsonl"
    path.write_bytes(b"")
    db = tmp_path / "w.duckdb"
    workbench.ingest([path], db=db)
    write(path, json.dumps(event("phase_changed")))
    (file,) = workbench.ingest([path], db=db).files
    assert (file.status, file.records) == ("appended", 1)


@pytest.mark.parametrize("count_bytes", [1, 7, 64, 1 << 20])
def test_brackets_are_counted_per_line_across_slices(monkeypatch, count_bytes):
    import random

    import numpy as np

    from workbench import screen

    monkeypatch.setattr(screen, "_COUNT_BYTES", count_bytes)
    rng = random.Random(count_bytes)
    lines = [bytes(rng.choice(b'[{ab"]}') for _ in range(rng.randrange(0, 1400))) for _ in range(60)]
    data = b"\n".join(lines)
    starts = np.cumsum([0] + [len(line) + 1 for line in lines[:-1]])
    ends = starts + [len(line) for line in lines]
    expected = [line.count(b"[") + line.count(b"{") >= DEPTH_BOUND for line in lines]
    assert screen.maybe_too_deep(data, starts, ends).tolist() == expected
    assert any(expected) and not all(expected)


# --- integers past what Python reads (4,300 digits) or a double holds --------------------

HUGE = "9" * 4301  # one digit past Python's int-string limit


@pytest.mark.parametrize("kind", ["damage", "arena", "trace", "orders", "gm"])
def test_an_integer_of_4301_digits_costs_its_line_only(tmp_path, kind):
    from tests.robustness.test_hostile_input import LINE_KINDS

    name, make = LINE_KINDS[kind]
    good = json.dumps(make())
    huge = good[:-1] + f', "n": {HUGE}}}'
    path = write(tmp_path / name, good, huge, good)
    after = write(tmp_path / "after.events.jsonl", json.dumps(event("phase_changed")))
    report = workbench.ingest([path, after], db=tmp_path / "w.duckdb")
    assert [f.status for f in report.files] == ["ingested", "ingested"], report.files[0].message
    file = report.files[0]
    assert file.records + file.rejected == 3 and file.records >= 2
    if file.rejected:
        [(raw, line)] = rows(tmp_path / "w.duckdb", "SELECT raw, line FROM rejects")
        assert (raw, line) == (huge, 2)


def test_a_gm_line_of_a_4301_digit_integer_is_a_reject_that_says_why(tmp_path):
    line = '{"id": "r-1", "model": "m", "text": "x", "n": ' + HUGE + "}"
    (file,) = workbench.validate([write(tmp_path / "b.gm.jsonl", line)]).files
    assert (file.records, file.rejected) == (0, 1)
    [found] = file.violations
    assert found.rule == "not_a_json_object" and "an integer of more digits than can be read" in found.message


def test_a_gm_response_whose_json_holds_a_4301_digit_integer_is_repaired_as_the_game_repairs_it(tmp_path):
    text = (
        'Hi.\nSUGGESTED_ACTIONS: [{"text": "a", "type": "basic", "importance": '
        + HUGE
        + '}, {"text": "b", "type": "basic"}, {"text": "c", "type": "basic"}]'
    )
    (file,) = workbench.validate([write(tmp_path / "b.gm.jsonl", json.dumps({"id": "r-1", "text": text}))]).files
    assert (file.records, file.rejected) == (1, 0)
    assert any(
        v.rule == "json_repaired" and "an integer of more digits than can be read" in v.message for v in file.violations
    )


def otlp_span(*attributes: dict, **fields) -> dict:
    return {
        "traceId": "1" * 32,
        "spanId": "2" * 16,
        "name": "chat m",
        "kind": 3,
        "startTimeUnixNano": "1",
        "endTimeUnixNano": "2",
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.request.model", "value": {"stringValue": "m"}},
            {"key": "gen_ai.provider.name", "value": {"stringValue": "p"}},
            *attributes,
        ],
        **fields,
    }


@pytest.mark.parametrize("suffix", [".otlp.jsonl", ".otlp.json"])
@pytest.mark.parametrize(
    "span, field",
    [
        (
            otlp_span({"key": "gen_ai.usage.input_tokens", "value": {"intValue": HUGE}}),
            "attributes.gen_ai.usage.input_tokens",
        ),
        (otlp_span({"key": "x.ratio", "value": {"doubleValue": 10**400}}), "attributes.x.ratio"),
        (otlp_span(startTimeUnixNano=HUGE), "startTimeUnixNano"),
        (otlp_span(startTimeUnixNano="0" * 5000 + "1"), None),  # leading zeros: still the number 1
    ],
    ids=["intValue of 4301 digits", "doubleValue of 401 digits", "a time of 4301 digits", "a time of 5000 zeros"],
)
def test_an_otlp_number_past_what_its_type_holds_is_an_otlp_shape_finding(tmp_path, suffix, span, field):
    path = tmp_path / f"t{suffix}"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}) + "\n")
    (file,) = workbench.validate([path]).files
    assert file.status == "ingested" and (file.records, file.rejected) == (1, 0)
    shapes = [(v.locator, v.field) for v in file.violations if v.rule == "otlp_shape"]
    assert shapes == ([("span 2222222222222222", field)] if field else [])
