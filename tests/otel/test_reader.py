"""The `otel` format's reader (`workbench.otel.reader`): OTLP/JSON traces checked against
the GenAI semantic conventions 1.41.0. `data/conventions_examples.otlp.jsonl` writes the
conventions' own examples (docs/gen-ai/non-normative/examples-llm-calls.md: a simple
chat completion, and a tool call between two chat calls) as spans;
`data/holdem_agents.otlp.jsonl` is a poker agent instrumented as agent frameworks write
it (per turn: invoke_agent, its chat call, its move as execute_tool).
`data/openai_v2_instrumented.otlp.jsonl` is real instrumentation output: eight chat
calls of a two-model game bot made with the OpenAI Python client, traced by
opentelemetry-instrumentation-openai-v2 2.3b0 (SDK 1.45.2) in its default conventions,
against a local stub of the API that refused one call (HTTP 400), the spans encoded by
the SDK's OTLP encoder and written as OTLP/JSON, as a Collector's file exporter writes
them. Expected values come from those texts, or from reading the files here with the
json module."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import duckdb
import pytest

import workbench
from workbench import cli

DATA = Path(__file__).parent / "data"
EXAMPLES = DATA / "conventions_examples.otlp.jsonl"
INSTRUMENTED = DATA / "openai_v2_instrumented.otlp.jsonl"
HOLDEM = DATA / "holdem_agents.otlp.jsonl"


def ingest(tmp_path, *paths, db="w.duckdb"):
    report = workbench.ingest(list(paths), db=tmp_path / db, progress=False)
    return report.files, duckdb.connect(str(tmp_path / db), read_only=True)


def attr(key, value):
    return {"key": key, "value": value}


def a_span(span_id="5fb397be34d26b51", attributes=None, **fields):
    """A chat span as the conventions' simple example has it, changed by `fields`."""
    span = {
        "traceId": "4bf92f3577b34da6a3ce929d0e0e4736",
        "spanId": span_id,
        "name": "chat gpt-4",
        "kind": 3,
        "startTimeUnixNano": "1760000000000000000",
        "endTimeUnixNano": "1760000001000000000",
        "attributes": attributes
        if attributes is not None
        else [
            attr("gen_ai.operation.name", {"stringValue": "chat"}),
            attr("gen_ai.provider.name", {"stringValue": "openai"}),
            attr("gen_ai.request.model", {"stringValue": "gpt-4"}),
            attr("gen_ai.usage.input_tokens", {"intValue": "52"}),
        ],
    }
    span.update(fields)
    return span


def a_line(*spans):
    return json.dumps(
        {
            "resourceSpans": [
                {"resource": {"attributes": []}, "scopeSpans": [{"scope": {"name": "t"}, "spans": list(spans)}]}
            ]
        }
    )


def write(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines))
    return path


def findings(con):
    return con.sql("SELECT locator, severity, rule, field FROM violations ORDER BY line, locator, field").fetchall()


def test_the_conventions_simple_chat_example_is_one_decision_with_its_evaluation(tmp_path):
    [file], con = ingest(tmp_path, EXAMPLES)
    assert (file.format, file.records, file.rejected) == ("otel", 4, 0)
    # the tool example's failed tool (a service timeout: not the model's move), and its
    # first call, which asked for a tool the span does not record
    assert findings(con) == [
        ("file", "info", "answers_not_recorded", "(file)"),
        ("span 1a2b3c4d5e6f7081", "warning", "tool_unavailable", "(execute_tool span 2b3c4d5e6f708192)"),
    ]
    # the example's values: gpt-4 asked, gpt-4-0613 answered, 52 tokens in, 47 out; the span lasted 1.284 s
    assert con.sql(
        "SELECT game_id, turn, agent_id, model, response_model, action, valid, latency_ms, tokens, "
        "input_tokens, output_tokens FROM decisions WHERE locator = 'span 00f067aa0ba902b7'"
    ).fetchall() == [
        ("4bf92f3577b34da6a3ce929d0e0e4736", 1, None, "gpt-4", "gpt-4-0613", "chat: stop", True, 1284.0, 99, 52, 47)
    ]
    assert con.sql("SELECT span_id, name, score_value, score_label, response_id FROM otel_scores").fetchall() == [
        ("00f067aa0ba902b7", "Relevance", 0.8, "relevant", "chatcmpl-9J3uIL87gldCFtiIbyaOvTeYBRA3l")
    ]
    [(attributes, resource)] = con.sql(
        "SELECT attributes, resource FROM otel_spans WHERE span_id = '00f067aa0ba902b7'"
    ).fetchall()
    assert json.loads(attributes)["gen_ai.response.finish_reasons"] == ["stop"]
    assert json.loads(attributes)["server.port"] == 443
    assert json.loads(resource)["service.name"] == "chat-example"


def test_the_conventions_tool_call_example_is_a_game_of_two_model_calls(tmp_path):
    # A decision is an inference call: the tool's run between them is none, and its
    # timeout (the weather service's) is a warning on the call that asked for it.
    _, con = ingest(tmp_path, EXAMPLES)
    assert con.sql(
        "SELECT turn, model, action, valid FROM decisions WHERE game_id = 'conv_5j66UpCpwteGg4YSxUnt7lPY' ORDER BY turn"
    ).fetchall() == [(1, "gpt-4", "chat: tool_calls", True), (2, "gpt-4", "chat: stop", True)]
    assert con.sql("SELECT error_type, status_message FROM otel_spans WHERE failed").fetchall() == [
        ("TimeoutError", "weather service timed out")
    ]


def _expected_by_model(path: Path) -> dict[str, Counter]:
    """Per model, its chat calls and the invalid ones, read from the file with json: a
    call's model is the one it asked for; it is invalid when the game refused the move it
    asked for (a failed execute_tool span under it)."""
    spans = [
        span
        for line in path.read_text().splitlines()
        for resource in json.loads(line)["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    ]
    attributes = {s["spanId"]: {a["key"]: next(iter(a["value"].values())) for a in s["attributes"]} for s in spans}
    refused = {
        (s["traceId"], s.get("parentSpanId"))
        for s in spans
        if attributes[s["spanId"]].get("gen_ai.operation.name") == "execute_tool"
        and s.get("status", {}).get("code") == 2
    }
    counts: dict[str, Counter] = {}
    for span in spans:
        own = attributes[span["spanId"]]
        if own.get("gen_ai.operation.name") == "chat":
            invalid = (span["traceId"], span["spanId"]) in refused
            counts.setdefault(own["gen_ai.request.model"], Counter()).update(decisions=1, invalid=int(invalid))
    return counts


def test_an_instrumented_agent_gets_a_scorecard_and_a_comparison_by_model(tmp_path, capsys):
    logs = tmp_path / "traces"
    logs.mkdir()
    shutil.copy(HOLDEM, logs)
    assert cli.main(["ingest", str(logs), "--db", str(tmp_path / "w.duckdb")]) == 0
    expected = _expected_by_model(HOLDEM)
    assert set(expected) == {"claude-sonnet-4-5", "gpt-4.1-mini"}
    capsys.readouterr()
    assert cli.main(["scorecard", "--db", str(tmp_path / "w.duckdb")]) == 0
    card = capsys.readouterr().out
    for model, count in expected.items():
        valid = (count["decisions"] - count["invalid"]) / count["decisions"]
        assert f"otel {model}: {valid:.1%} valid" in card
        assert f"n={count['decisions']} in 6 games" in card
    assert cli.main(["compare", "--db", str(tmp_path / "w.duckdb"), "claude-sonnet-4-5", "gpt-4.1-mini"]) == 0
    said = capsys.readouterr().out
    assert "claude-sonnet-4-5 is more often valid than gpt-4.1-mini" in said


CHAT = [attr("gen_ai.operation.name", {"stringValue": "chat"}), attr("gen_ai.provider.name", {"stringValue": "openai"})]
NO_DECISION = ("file", "warning", "no_decisions", "(file)")


@pytest.mark.parametrize(
    "attributes, found",
    [
        # a wrong type: located at the span, the field the attribute's path
        (
            CHAT + [attr("gen_ai.usage.input_tokens", {"stringValue": "52"})],
            [("span 5fb397be34d26b51", "error", "attribute_type", "attributes.gen_ai.usage.input_tokens")],
        ),
        (
            CHAT + [attr("gen_ai.request.temperature", {"stringValue": "0.5"})],
            [("span 5fb397be34d26b51", "error", "attribute_type", "attributes.gen_ai.request.temperature")],
        ),
        (
            CHAT + [attr("gen_ai.response.finish_reasons", {"arrayValue": {"values": [{"intValue": "1"}]}})],
            [("span 5fb397be34d26b51", "error", "attribute_type", "attributes.gen_ai.response.finish_reasons")],
        ),
        # what JSON and the SDKs write: an integer for a double, a number for a 64-bit integer
        (
            CHAT
            + [
                attr("gen_ai.request.temperature", {"intValue": "1"}),
                attr("gen_ai.usage.input_tokens", {"intValue": 19}),
            ],
            [],
        ),
        # the largest 64-bit integer is one; one more is not
        (CHAT + [attr("gen_ai.usage.input_tokens", {"intValue": "9223372036854775807"})], []),
        (
            CHAT + [attr("gen_ai.usage.input_tokens", {"intValue": "9223372036854775808"})],
            [("span 5fb397be34d26b51", "error", "otlp_shape", "attributes.gen_ai.usage.input_tokens")],
        ),
        # a required attribute missing: the provider on a chat span, the tool's name on execute_tool
        (
            [attr("gen_ai.operation.name", {"stringValue": "chat"})],
            [("span 5fb397be34d26b51", "error", "required_attribute", "attributes.gen_ai.provider.name")],
        ),
        # (a file of no inference span says it holds no decision)
        (
            [attr("gen_ai.operation.name", {"stringValue": "execute_tool"})],
            [("span 5fb397be34d26b51", "error", "required_attribute", "attributes.gen_ai.tool.name"), NO_DECISION],
        ),
        ([attr("gen_ai.operation.name", {"stringValue": "retrieval"})], [NO_DECISION]),  # requires nothing more
        # drift: an attribute the conventions do not have; an older name, read in its place
        (
            CHAT + [attr("gen_ai.usage.total_tokens", {"intValue": "99"})],
            [("span 5fb397be34d26b51", "info", "unknown_attribute", "attributes.gen_ai.usage.total_tokens")],
        ),
        (
            [attr("gen_ai.operation.name", {"stringValue": "chat"}), attr("gen_ai.system", {"stringValue": "openai"})],
            [("span 5fb397be34d26b51", "info", "deprecated_attribute", "attributes.gen_ai.system")],
        ),
        # not GenAI at all: not checked, not a decision
        ([attr("http.request.method", {"stringValue": "GET"})], [NO_DECISION]),
    ],
)
def test_each_attribute_is_checked_against_the_conventions(tmp_path, attributes, found):
    log = write(tmp_path / "a.otlp.jsonl", [a_line(a_span(attributes=attributes))])
    [file], con = ingest(tmp_path, log)
    assert file.records == 1
    assert findings(con) == found
    assert con.sql("SELECT valid FROM otel_spans").fetchall() == [(not any(f[1] == "error" for f in found),)]


def test_a_wrong_type_leaves_the_value_out_of_the_decision_and_keeps_it_in_the_span(tmp_path):
    log = write(
        tmp_path / "a.otlp.jsonl",
        [
            a_line(
                a_span(
                    attributes=CHAT
                    + [
                        attr("gen_ai.usage.input_tokens", {"stringValue": "52"}),
                        attr("gen_ai.usage.output_tokens", {"intValue": "7"}),
                    ]
                )
            )
        ],
    )
    _, con = ingest(tmp_path, log)
    assert con.sql("SELECT input_tokens, output_tokens, tokens, valid FROM decisions").fetchall() == [
        (None, 7, 7, True)
    ]
    assert (
        json.loads(con.sql("SELECT attributes FROM otel_spans").fetchall()[0][0])["gen_ai.usage.input_tokens"] == "52"
    )


def test_the_older_names_are_read(tmp_path):
    log = write(
        tmp_path / "a.otlp.jsonl",
        [
            a_line(
                a_span(
                    attributes=[
                        attr("gen_ai.operation.name", {"stringValue": "chat"}),
                        attr("gen_ai.system", {"stringValue": "openai"}),
                        attr("gen_ai.usage.prompt_tokens", {"intValue": 11}),
                        attr("gen_ai.usage.completion_tokens", {"intValue": 3}),
                    ]
                )
            )
        ],
    )
    _, con = ingest(tmp_path, log)
    assert con.sql("SELECT provider, input_tokens, output_tokens FROM otel_spans").fetchall() == [("openai", 11, 3)]


@pytest.mark.parametrize(
    "change, found",
    [
        ({"traceId": "4bf92f3577b34da6a3ce929d0e0e473"}, ("error", "otlp_shape", "traceId")),  # 31 digits
        ({"traceId": "0" * 32}, ("error", "otlp_shape", "traceId")),
        ({"parentSpanId": "xyz"}, ("error", "otlp_shape", "parentSpanId")),
        ({"startTimeUnixNano": "soon"}, ("error", "otlp_shape", "startTimeUnixNano")),
        ({"endTimeUnixNano": "1759999999999999999"}, ("warning", "span_ends_before_it_starts", "endTimeUnixNano")),
        ({"kind": "SPAN_KIND_CLIENT"}, ("warning", "enum_as_name", "kind")),
        ({"kind": 6}, ("error", "otlp_shape", "kind")),
        ({"status": {"code": 2}}, ("warning", "required_attribute", "attributes.error.type")),
    ],
)
def test_a_span_not_as_otlp_writes_it_is_a_located_finding(tmp_path, change, found):
    log = write(tmp_path / "a.otlp.jsonl", [a_line(a_span(**change))])
    [file], con = ingest(tmp_path, log)
    assert file.records == 1
    assert [f[1:] for f in findings(con)] == [found]
    assert findings(con)[0][0] == "span 5fb397be34d26b51"


def test_upper_case_ids_and_enum_names_are_read(tmp_path):
    log = write(
        tmp_path / "a.otlp.jsonl",
        [
            a_line(
                a_span(
                    traceId="4BF92F3577B34DA6A3CE929D0E0E4736",
                    kind="SPAN_KIND_CLIENT",
                    status={"code": "STATUS_CODE_ERROR"},
                )
            )
        ],
    )
    _, con = ingest(tmp_path, log)
    assert con.sql("SELECT trace_id, kind, status_code, failed FROM otel_spans").fetchall() == [
        ("4bf92f3577b34da6a3ce929d0e0e4736", 3, 2, True)
    ]


def test_lines_that_are_no_traces_export_are_rejects_with_their_text(tmp_path):
    lines = ["not json", '{"resourceLogs": []}', "[1, 2]", a_line(a_span())]
    log = write(tmp_path / "a.otlp.jsonl", lines)
    [file], con = ingest(tmp_path, log)
    assert (file.records, file.rejected) == (1, 3)
    assert con.sql("SELECT locator, raw FROM rejects ORDER BY line").fetchall() == [
        ("line 1", lines[0]),
        ("line 2", lines[1]),
        ("line 3", lines[2]),
    ]
    [(message,)] = con.sql("SELECT message FROM violations WHERE locator = 'line 2'").fetchall()
    assert "a logs or metrics export" in message


def test_an_evaluation_without_its_name_is_a_finding_and_still_a_score(tmp_path):
    event = {
        "timeUnixNano": "1760000002000000000",
        "name": "gen_ai.evaluation.result",
        "attributes": [attr("gen_ai.evaluation.score.value", {"doubleValue": 0.25})],
    }
    log = write(tmp_path / "a.otlp.jsonl", [a_line(a_span(events=[event]))])
    _, con = ingest(tmp_path, log)
    assert findings(con) == [
        ("span 5fb397be34d26b51", "error", "required_attribute", "events[0].attributes.gen_ai.evaluation.name")
    ]
    assert con.sql("SELECT name, score_value, time_ns FROM otel_scores").fetchall() == [
        (None, 0.25, 1760000002000000000)
    ]


def test_a_single_export_is_read_whole(tmp_path):
    export = json.loads(
        a_line(
            a_span(),
            a_span("6fb397be34d26b52", startTimeUnixNano="1760000005000000000", endTimeUnixNano="1760000005500000000"),
        )
    )
    path = tmp_path / "run.otlp.json"
    path.write_text(json.dumps(export, indent=2))
    [file], con = ingest(tmp_path, path)
    assert (file.format, file.records, file.rejected) == ("otel", 2, 0)
    assert con.sql("SELECT turn, latency_ms FROM decisions ORDER BY turn").fetchall() == [(1, 1000.0), (2, 500.0)]
    con.close()
    path.write_text("{ cut")
    [again], con = ingest(tmp_path, path)
    assert (again.status, again.records, again.rejected) == ("replaced", 0, 1)
    assert con.sql("SELECT locator, raw FROM rejects").fetchall() == [("file", "{ cut")]


def test_a_file_the_collector_goes_on_writing_gives_what_a_one_shot_ingest_gives(tmp_path):
    lines = HOLDEM.read_text().splitlines()
    grown = write(tmp_path / "grown" / "agents.otlp.jsonl", lines[:7])
    ingest(tmp_path, grown, db="grown.duckdb")[1].close()
    with grown.open("a") as out:
        out.write(lines[7][:100])  # the collector is half-way through a line
    ingest(tmp_path, grown, db="grown.duckdb")[1].close()
    with grown.open("a") as out:
        out.write(lines[7][100:] + "\n" + "".join(line + "\n" for line in lines[8:]))
    [file], con = ingest(tmp_path, grown, db="grown.duckdb")
    assert file.status.startswith("appended")
    once = write(tmp_path / "once" / "agents.otlp.jsonl", lines)
    _, whole = ingest(tmp_path, once, db="once.duckdb")
    for sql in (
        "SELECT * EXCLUDE (source_id) FROM otel_spans ORDER BY seq, span_index",
        "SELECT * EXCLUDE (source_id) FROM otel_scores ORDER BY ALL",
        "SELECT * EXCLUDE (source_id) FROM decisions ORDER BY locator",
        "SELECT locator, rule, field FROM violations ORDER BY ALL",
        "SELECT locator, raw FROM rejects ORDER BY ALL",
    ):
        assert con.sql(sql).fetchall() == whole.sql(sql).fetchall()


@pytest.mark.parametrize(
    "written, latency",
    [
        (1000.0000004, 1000.0000004),  # rounds to the span's nanoseconds: kept whole
        (1000.0000006, 1000.0),  # it does not: the span's own duration
        (True, 1000.0),
    ],
)
def test_the_workbench_latency_refines_the_duration_only_where_it_agrees(tmp_path, written, latency):
    value = {"boolValue": written} if isinstance(written, bool) else {"doubleValue": written}
    log = write(tmp_path / "a.otlp.jsonl", [a_line(a_span(attributes=CHAT + [attr("workbench.latency_ms", value)]))])
    _, con = ingest(tmp_path, log)
    assert con.sql("SELECT latency_ms FROM decisions").fetchall() == [(latency,)]


def _with(**resource_spans):
    """An export whose one resourceSpans entry is `a_line`'s, changed by `resource_spans`."""
    export = json.loads(a_line(a_span()))
    export["resourceSpans"][0].update(resource_spans)
    return json.dumps(export)


# Lines a careless or hostile exporter writes: each is a reject (its text kept) or a
# located finding, and the run goes on to the line after it.
HOSTILE = {
    "a resource that is no object": (_with(resource="x"), "reject"),
    "a scope named by a number": (_with(scopeSpans=[{"scope": {"name": 5}, "spans": [a_span()]}]), "reject"),
    "scopeSpans that are no list": (_with(scopeSpans={"spans": []}), "reject"),
    "a span that is no object": (_with(scopeSpans=[{"spans": [5]}]), "reject"),
    "nested too deeply": ("[" * 5000 + "]" * 5000, "reject"),
    "a kind that is a list": (a_line(a_span(kind=[1])), "finding"),
    "a status code that is an object": (a_line(a_span(status={"code": {}})), "finding"),
    "a latency beyond any float": (
        a_line(a_span(attributes=CHAT + [attr("workbench.latency_ms", {"doubleValue": 1e308})])),
        "finding-free",
    ),
    "a kvlist 300 deep": (
        a_line(a_span(attributes=CHAT + [attr("x.deep", "DEEP")])).replace(
            '"DEEP"', '{"kvlistValue": {"values": [{"key": "k", "value": ' * 300 + "{}" + "}]}}" * 300
        ),
        "reject",
    ),
    "attributes that are no list": (a_line(a_span(attributes={"gen_ai.operation.name": "chat"})), "finding"),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_line_costs_that_line_at_most(tmp_path, name):
    line, outcome = HOSTILE[name]
    good = a_line(a_span("6fb397be34d26b52"))
    log = write(tmp_path / "a.otlp.jsonl", [line, good])
    [file], con = ingest(tmp_path, log)
    spans = con.sql("SELECT seq, span_id FROM otel_spans ORDER BY seq").fetchall()
    assert (2, "6fb397be34d26b52") in spans
    if outcome == "reject":
        assert (file.records, file.rejected) == (1, 1)
        assert con.sql("SELECT locator, raw FROM rejects").fetchall() == [("line 1", line)]
    else:
        assert (file.records, file.rejected) == (2, 0)
        line_one = [f for f in findings(con) if f[0] == "span 5fb397be34d26b51" and f[1] == "error"]
        assert bool(line_one) == (outcome == "finding")


def test_a_span_written_twice_is_one_decision_and_said(tmp_path):
    log = write(tmp_path / "a.otlp.jsonl", [a_line(a_span()), a_line(a_span())])
    [file], con = ingest(tmp_path, log)
    assert file.records == 2
    assert con.sql("SELECT count(*) FROM decisions").fetchall() == [(1,)]
    assert findings(con) == [("span 5fb397be34d26b51", "warning", "duplicate_span", "spanId")]


def test_a_span_without_an_id_is_located_by_its_line_and_path(tmp_path):
    span = a_span(attributes=CHAT + [attr("gen_ai.usage.input_tokens", {"stringValue": "5"})])
    del span["spanId"]
    log = write(tmp_path / "a.otlp.jsonl", [a_line(span)])
    _, con = ingest(tmp_path, log)
    prefix = "resourceSpans[0].scopeSpans[0].spans[0]."
    assert findings(con) == [
        ("line 1", "error", "attribute_type", prefix + "attributes.gen_ai.usage.input_tokens"),
        ("line 1", "error", "otlp_shape", prefix + "spanId"),
    ]
    assert con.sql("SELECT locator FROM decisions").fetchall() == [("line 1",)]


def test_an_error_type_of_any_type_fails_the_operation(tmp_path):
    # an inference that ended in an error got no answer: a failed call, not an invalid one
    log = write(tmp_path / "a.otlp.jsonl", [a_line(a_span(attributes=CHAT + [attr("error.type", {"intValue": "1"})]))])
    _, con = ingest(tmp_path, log)
    assert con.sql("SELECT valid, outcome FROM decisions").fetchall() == [(None, "failed")]
    assert [f[2:] for f in findings(con)] == [("attribute_type", "attributes.error.type")]


def test_an_unknown_operation_is_drift_and_no_decision(tmp_path):
    log = write(
        tmp_path / "a.otlp.jsonl", [a_line(a_span(attributes=[attr("gen_ai.operation.name", {"stringValue": "plan"})]))]
    )
    _, con = ingest(tmp_path, log)
    assert findings(con) == [
        ("span 5fb397be34d26b51", "info", "unknown_operation", "attributes.gen_ai.operation.name"),
        NO_DECISION,
    ]
    assert con.sql("SELECT count(*) FROM decisions").fetchall() == [(0,)]


def test_an_otlp_json_file_holding_json_lines_is_read_line_by_line(tmp_path):
    path = write(tmp_path / "traces.otlp.json", [a_line(a_span()), a_line(a_span("6fb397be34d26b52"))])
    [file], con = ingest(tmp_path, path)
    assert (file.records, file.rejected) == (2, 0)
    assert findings(con) == [("file", "info", "json_lines", "(file)")]
    assert con.sql("SELECT seq FROM otel_spans ORDER BY seq").fetchall() == [(1,), (2,)]


@pytest.mark.parametrize(
    "value, written",
    [
        (float("nan"), {"doubleValue": "NaN"}),
        (float("inf"), {"doubleValue": "Infinity"}),
        (-float("inf"), {"doubleValue": "-Infinity"}),
        (0.5, {"doubleValue": 0.5}),
        (2**63 - 1, {"intValue": str(2**63 - 1)}),
        (True, {"boolValue": True}),
        (["a"], {"arrayValue": {"values": [{"stringValue": "a"}]}}),
    ],
)
def test_values_are_written_as_otlp_json_has_them_and_read_back(value, written):
    from workbench.otel import otlp

    assert otlp.any_value(value) == written
    json.dumps(written, allow_nan=False)  # JSON with no NaN in it
    read, _ = otlp.value_of(written)
    assert read == value or (read == written["doubleValue"])  # a special double is kept as written


def test_what_the_openai_instrumentation_writes_is_read(tmp_path):
    """Its default conventions name the provider `gen_ai.system` (1.30.0's name), leave
    the status empty and set `flags`; a refused call is status ERROR with error.type."""
    [file], con = ingest(tmp_path, INSTRUMENTED)
    spans = [
        span
        for line in INSTRUMENTED.read_text().splitlines()
        for r in json.loads(line)["resourceSpans"]
        for s in r["scopeSpans"]
        for span in s["spans"]
    ]
    assert (file.records, file.rejected) == (len(spans), 0) == (8, 0)
    # its default keeps message content off the spans: the tool calls it answered with cannot be checked
    assert con.sql("SELECT rule, severity, field, count(*) FROM violations GROUP BY ALL ORDER BY rule").fetchall() == [
        ("answers_not_recorded", "info", "(file)", 1),
        ("deprecated_attribute", "info", "attributes.gen_ai.system", 8),
    ]
    expected = []
    for span in spans:
        values = {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}
        failed = span["status"].get("code") == 2  # no answer came back
        expected.append(
            (
                f"span {span['spanId']}",
                values["gen_ai.request.model"],
                None if failed else True,
                int(values["gen_ai.usage.input_tokens"]) if "gen_ai.usage.input_tokens" in values else None,
                (int(span["endTimeUnixNano"]) - int(span["startTimeUnixNano"])) / 1e6,
                span["traceId"],
            )
        )
    assert con.sql(
        "SELECT locator, model, valid, input_tokens, latency_ms, game_id FROM decisions ORDER BY locator"
    ).fetchall() == sorted(expected)
    assert con.sql("SELECT DISTINCT provider FROM otel_spans").fetchall() == [("openai",)]
    assert con.sql("SELECT error_type, status_message FROM otel_spans WHERE failed").fetchall() == [
        ("BadRequestError", "Error code: 400 - Invalid 'tools': tool name too long")
    ]


def test_the_reader_claims_both_otlp_forms_by_name_and_follows_only_the_lines_as_they_grow():
    from workbench.otel import reader

    # a Collector's file exporter writes an export a line (*.otlp.jsonl); *.otlp.json is one export
    assert reader.claims(Path("traces/run.otlp.jsonl"), b"") and reader.claims(Path("run.otlp.json"), b"")
    assert not reader.claims(Path("run.jsonl"), a_line(a_span()).encode())  # its name claims it, not its text
    assert reader.reads_lines(Path("run.otlp.jsonl")) and not reader.reads_lines(Path("run.otlp.json"))
