"""`workbench export --otlp FILE`: every decision of every format as OTLP/JSON spans.
The output is parsed with the OTLP protobuf definitions (opentelemetry-proto), and
ingesting it gives the same decisions back."""

from __future__ import annotations

import base64
import json
from collections import Counter
from pathlib import Path

import duckdb
import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

import workbench
from workbench import cli

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
IDS = ("traceId", "spanId", "parentSpanId")
# What a round trip keeps: each decision's model, validity, tokens and latency (and its
# game and agent, which the export names as the conventions do).
KEPT = "model, valid, tokens, input_tokens, output_tokens, cached_tokens, latency_ms, game_id, agent_id"


def as_protobuf_json(value):
    """OTLP/JSON as protobuf's JSON mapping reads it: hex ids written as base64 (the one
    place where the two differ; json_format would read hex as base64 and say nothing)."""
    if isinstance(value, dict):
        return {
            key: base64.b64encode(bytes.fromhex(item)).decode() if key in IDS and item else as_protobuf_json(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [as_protobuf_json(item) for item in value]
    return value


def parsed(line: str) -> ExportTraceServiceRequest:
    return json_format.ParseDict(as_protobuf_json(json.loads(line)), ExportTraceServiceRequest())


@pytest.fixture(scope="module")
def every_format(tmp_path_factory, sample):
    """A database of the synthetic corpus of every format, and of the real one where it is."""
    db = tmp_path_factory.mktemp("every") / "w.duckdb"
    paths = [sample] + ([CORPUS / "damage"] if (CORPUS / "damage").is_dir() else [])
    workbench.ingest(paths, db=db, progress=False)
    return db


def invalid_rules(db: Path) -> Counter:
    """The rule each invalid decision breaks (the first by name of its error findings)."""
    with duckdb.connect(str(db), read_only=True) as con:
        return Counter(
            dict(
                con.sql("""
            SELECT coalesce(rule, 'invalid_decision'), count(*) FROM (
                SELECT (SELECT min(v.rule) FROM violations v WHERE v.source_id = d.source_id AND v.locator = d.locator
                        AND v.severity = 'error') AS rule FROM decisions d WHERE d.outcome = 'invalid') GROUP BY ALL
        """).fetchall()
            )
        )


def decisions(db: Path) -> Counter:
    with duckdb.connect(str(db), read_only=True) as con:
        return Counter(con.sql(f"SELECT {KEPT} FROM decisions").fetchall())


@pytest.mark.slow
def test_the_export_parses_with_the_otlp_protobuf_definitions(every_format, tmp_path, capsys):
    out = tmp_path / "all.otlp.jsonl"
    assert cli.main(["export", "--db", str(every_format), "--otlp", str(out)]) == 0
    total = sum(decisions(every_format).values())
    assert capsys.readouterr().out == f"wrote {total} decisions as spans to {out}\n"
    lines = out.read_text().splitlines()
    with duckdb.connect(str(every_format), read_only=True) as con:
        assert len(lines) == con.sql("SELECT count(DISTINCT source_id) FROM decisions").fetchall()[0][0]
        formats = {f for (f,) in con.sql("SELECT DISTINCT format FROM decisions").fetchall()}
    assert {"damage", "ec4x", "arena", "gm"} <= formats
    spans = []
    for line in lines:
        request = parsed(line)
        for resource in request.resource_spans:
            assert resource.schema_url == "https://opentelemetry.io/schemas/1.41.0"
            for scope in resource.scope_spans:
                spans += scope.spans
    assert len(spans) == total
    assert {len(s.trace_id) for s in spans} == {16} and {len(s.span_id) for s in spans} == {8}
    assert len({s.span_id for s in spans}) == total
    for span in spans:
        attributes = {kv.key: kv.value for kv in span.attributes}
        assert attributes["gen_ai.operation.name"].string_value == "chat"
        assert attributes["gen_ai.provider.name"].string_value
        assert attributes["workbench.format"].string_value in formats
        assert span.end_time_unix_nano >= span.start_time_unix_nano
        # a failed call (no answer came back) is an error span; an invalid answer names its rule
        outcome = attributes["workbench.outcome"].string_value
        assert (span.status.code == span.status.STATUS_CODE_ERROR) == (outcome == "failed")
        assert ("error.type" in attributes) == (outcome == "failed")
        assert ("workbench.rule" in attributes) == (outcome == "invalid")


def test_ids_written_as_hex_would_be_read_wrong_by_protobuf_alone(every_format, tmp_path):
    """Why the test converts: protobuf reads a hex id as base64 without an error."""
    out = tmp_path / "all.otlp.jsonl"
    cli.main(["export", "--db", str(every_format), "--otlp", str(out)])
    raw = json.loads(out.read_text().splitlines()[0])
    wrong = json_format.ParseDict(raw, ExportTraceServiceRequest())
    assert len(wrong.resource_spans[0].scope_spans[0].spans[0].trace_id) == 24


@pytest.mark.parametrize("name", ["all.otlp.jsonl", "all.otlp.json"])
def test_a_round_trip_gives_the_same_decisions(every_format, tmp_path, name):
    out = tmp_path / name
    assert cli.main(["export", "--db", str(every_format), "--otlp", str(out)]) == 0
    report = workbench.ingest([out], db=tmp_path / "back.duckdb", progress=False)
    [file] = report.files
    assert (file.format, file.rejected) == ("otel", 0)
    # the only findings: each invalid decision's rule, on its span
    with duckdb.connect(str(tmp_path / "back.duckdb"), read_only=True) as con:
        back = Counter(dict(con.sql("SELECT rule, count(*) FROM violations GROUP BY rule").fetchall()))
    assert back == invalid_rules(every_format)
    assert decisions(tmp_path / "back.duckdb") == decisions(every_format)


def test_the_export_of_the_game_a_format_names_is_one_trace_in_turn_order(every_format, tmp_path):
    out = tmp_path / "all.otlp.jsonl"
    cli.main(["export", "--db", str(every_format), "--otlp", str(out)])
    with duckdb.connect(str(every_format), read_only=True) as con:
        game, fmt, turns = con.sql(
            "SELECT game_id, format, list(turn ORDER BY turn) FROM decisions "
            "WHERE format = 'damage' GROUP BY ALL ORDER BY count(*) DESC LIMIT 1"
        ).fetchall()[0]
    spans = [
        span
        for line in out.read_text().splitlines()
        for r in json.loads(line)["resourceSpans"]
        for s in r["scopeSpans"]
        for span in s["spans"]
    ]
    ours = [
        s
        for s in spans
        if {"key": "gen_ai.conversation.id", "value": {"stringValue": game}} in s["attributes"]
        and {"key": "workbench.format", "value": {"stringValue": fmt}} in s["attributes"]
    ]
    assert len({s["traceId"] for s in ours}) == 1
    starts = [int(s["startTimeUnixNano"]) for s in ours]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    written = [next(int(a["value"]["intValue"]) for a in s["attributes"] if a["key"] == "workbench.turn") for s in ours]
    assert written == turns


def test_export_errors_are_one_line(tmp_path, capsys, every_format):
    assert cli.main(["export", "--db", str(every_format), "--otlp", str(tmp_path)]) == 2
    assert (
        capsys.readouterr().err == f"workbench: cannot export to {tmp_path}: it is a folder; name a file "
        f"(e.g. traces.otlp.jsonl)\n"
    )
    with pytest.raises(SystemExit) as exited:
        cli.main(["export", "--db", str(every_format), "--otlp", "x.jsonl", "--parquet", str(tmp_path / "p")])
    assert exited.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_sources_are_named_relative_to_their_common_folder(every_format, tmp_path, sample):
    out = tmp_path / "all.otlp.jsonl"
    cli.main(["export", "--db", str(every_format), "--otlp", str(out)])
    text = out.read_text()
    assert str(sample) not in text and str(tmp_path) not in text
    sources = {
        a["value"]["stringValue"]
        for line in text.splitlines()
        for r in json.loads(line)["resourceSpans"]
        for a in r["resource"]["attributes"]
        if a["key"] == "workbench.source"
    }
    assert all(not Path(source).is_absolute() for source in sources)
    assert any(source.endswith(".events.jsonl") for source in sources)


def test_an_existing_file_is_replaced_only_when_asked(every_format, tmp_path, capsys):
    out = tmp_path / "kept.otlp.jsonl"
    out.write_text("a collector's log\n")
    assert cli.main(["export", "--db", str(every_format), "--otlp", str(out)]) == 2
    assert capsys.readouterr().err == f"workbench: {out} exists; choose another file or pass --overwrite\n"
    assert out.read_text() == "a collector's log\n"
    assert cli.main(["export", "--db", str(every_format), "--otlp", str(out), "--overwrite"]) == 0
    assert out.read_text().startswith('{"resourceSpans"')


def _span_ids(path: Path) -> dict[str, str]:
    """locator@file name -> span id, over an export."""
    ids = {}
    for line in path.read_text().splitlines():
        for resource in json.loads(line)["resourceSpans"]:
            source = Path(resource["resource"]["attributes"][1]["value"]["stringValue"]).name
            for span in resource["scopeSpans"][0]["spans"]:
                locator = next(a["value"]["stringValue"] for a in span["attributes"] if a["key"] == "workbench.locator")
                ids[f"{locator}@{source}"] = span["spanId"]
    return ids


def test_span_ids_stay_when_another_file_is_added(tmp_path, sample):
    workbench.ingest([sample / "gm"], db=tmp_path / "w.duckdb", progress=False)
    cli.main(["export", "--db", str(tmp_path / "w.duckdb"), "--otlp", str(tmp_path / "before.otlp.jsonl")])
    workbench.ingest([sample / "arena"], db=tmp_path / "w.duckdb", progress=False)
    cli.main(["export", "--db", str(tmp_path / "w.duckdb"), "--otlp", str(tmp_path / "after.otlp.jsonl")])
    before, after = _span_ids(tmp_path / "before.otlp.jsonl"), _span_ids(tmp_path / "after.otlp.jsonl")
    assert before and all(after[key] == span_id for key, span_id in before.items())


def _one_damage_log(sample: Path, tmp_path: Path, change) -> Path:
    """A Damage log of the synthetic corpus, each provider call's JSON changed by `change`
    (the lines that are not JSON, its injected faults, as they were)."""
    source = next(sample.rglob("*.events.jsonl"))
    lines = []
    for line in source.read_text().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            lines.append(line)
            continue
        if (
            isinstance(record, dict)
            and record.get("type") == "provider_call"
            and isinstance(record.get("payload"), dict)
        ):
            change(record["payload"])
        lines.append(json.dumps(record))
    out = tmp_path / "logs" / source.name
    out.parent.mkdir()
    out.write_text("\n".join(lines) + "\n")
    return out


def _round_trip(log: Path, tmp_path: Path) -> tuple[Counter, Counter]:
    workbench.ingest([log], db=tmp_path / "a.duckdb", progress=False)
    cli.main(["export", "--db", str(tmp_path / "a.duckdb"), "--otlp", str(tmp_path / "x.otlp.jsonl")])
    workbench.ingest([tmp_path / "x.otlp.jsonl"], db=tmp_path / "b.duckdb", progress=False)
    return decisions(tmp_path / "a.duckdb"), decisions(tmp_path / "b.duckdb")


def test_a_log_that_kept_only_the_total_of_tokens_comes_back_whole(tmp_path, sample):
    def total_only(payload):
        usage = payload.get("usage")
        if isinstance(usage, dict) and isinstance(usage.get("total_tokens"), int):
            payload["usage"] = {"total_tokens": usage["total_tokens"]}

    before, after = _round_trip(_one_damage_log(sample, tmp_path, total_only), tmp_path)
    with duckdb.connect(str(tmp_path / "a.duckdb"), read_only=True) as con:
        assert (
            con.sql("SELECT count(*) FROM decisions WHERE tokens IS NOT NULL AND input_tokens IS NULL").fetchall()[0][0]
            > 0
        )
    assert after == before


def test_a_latency_no_span_can_hold_is_kept_as_written(tmp_path, sample):
    def endless(payload):
        if "latency_ms" in payload:
            payload["latency_ms"] = 1e300

    before, after = _round_trip(_one_damage_log(sample, tmp_path, endless), tmp_path)
    with duckdb.connect(str(tmp_path / "b.duckdb"), read_only=True) as con:  # only the invalid decisions' rules
        errors = con.sql("SELECT count(*) FROM violations WHERE severity = 'error'").fetchall()[0][0]
    assert errors == sum(invalid_rules(tmp_path / "a.duckdb").values())
    assert after == before
