"""Reading OTLP/JSON traces: an OpenTelemetry Collector file exporter's lines
(`*.otlp.jsonl`, one `{"resourceSpans": [...]}` export per line) or one export
(`*.otlp.json`). Every span becomes a row of `otel_spans`, checked against OTLP/JSON and
the GenAI conventions (`conventions`); a finding is located `span <span_id>` with the
field it is about (`attributes.gen_ai.usage.input_tokens`). A line that is not an
export is a reject with its text."""

from __future__ import annotations

import dataclasses
import json
import math
import mmap
import os
import re
from pathlib import Path
from typing import Any

import msgspec

from workbench.errors import UnreadableFile
from workbench.formats import BOM, Counts, LoadContext
from workbench.jsonl import context_batches
from workbench.otel import answers, otlp
from workbench.otel import conventions as sc
from workbench.otel.dialects import genai_view
from workbench.otel.tables import DERIVE_DECISIONS, SCORES, SPANS, TOOL_FAILURES
from workbench.paths import text_of
from workbench.validation import found
from workbench.violation import Violation

LINES_SUFFIX, EXPORT_SUFFIX = ".otlp.jsonl", ".otlp.json"
_HEX = {32: re.compile(r"[0-9a-fA-F]{32}"), 16: re.compile(r"[0-9a-fA-F]{16}")}
_DECODE = msgspec.json.Decoder()


def claims(path: Path, head: bytes) -> bool:
    return path.name.endswith((LINES_SUFFIX, EXPORT_SUFFIX))


def reads_lines(path: Path) -> bool:
    """A file exporter's lines grow as the collector writes; a single export is read whole."""
    return not path.name.endswith(EXPORT_SUFFIX)


def load(ctx: LoadContext) -> Counts:
    if not reads_lines(ctx.path):
        return _load_export(ctx)
    return _load_lines(ctx)


def _load_lines(ctx: LoadContext) -> Counts:
    records = rejected = 0
    for batch in context_batches(ctx):
        read = _Read()
        for index, (number, text) in enumerate(zip(batch.numbers, batch.texts)):
            read.line(number, text, batch.unreadable.get(index))
        read.store(ctx)
        records, rejected = records + read.spans, rejected + len(read.rejects)
    _derive(ctx)
    return Counts(records, rejected)


# An export read a span at a time is stored every this many spans.
STORED_SPANS = 10_000


def _load_export(ctx: LoadContext) -> Counts:
    """A whole `*.otlp.json` file: one export, pretty-printed or not; or, where it holds
    JSON Lines (a Collector's file exporter told to write `traces.json`), its lines. An
    export of OTLP's structure is read a span at a time (`otlp.lazy_export`) and its
    rows stored as it goes: its memory grows with its largest span, not with the file.
    Any other is read whole, to say what it holds."""
    try:
        with open(ctx.path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            counts = _load_spans(ctx, handle, size) if size else None
            if counts is not None:
                return counts
            if size and _first_line_is_json(handle):
                ctx.add_violations([_JSON_LINES])
                return _load_lines(ctx)
        data = ctx.path.read_bytes()
    except OSError as exc:
        raise UnreadableFile(f"{text_of(ctx.path)}: {exc.strerror or exc}") from None
    ctx.advance(len(data))
    try:
        text, why = data.removeprefix(BOM).decode("utf-8"), None
    except UnicodeDecodeError as exc:
        text, why = data.decode("utf-8", "backslashreplace"), f"not UTF-8 at byte {exc.start}"
    read = _Read(whole_file=True)
    read.line(1, text, why, "file")
    read.store(ctx)
    _derive(ctx)
    return Counts(read.spans, len(read.rejects))


_JSON_LINES = Violation("file", "info", "json_lines", "(file)", "this *.otlp.json file holds JSON Lines (one export "
                        "per line): read line by line; name it *.otlp.jsonl to have it followed as it grows")


def _first_line_is_json(handle) -> bool:
    """Is the first non-blank line one JSON value? Where it is and more follows, the file
    is JSON Lines: one JSON value spread over lines never starts with a whole one (a
    file that is one line is one export)."""
    try:
        for number, line in enumerate(handle, 1):
            line = line.removeprefix(BOM) if number == 1 else line
            if line.strip():
                return _is_json(line) and any(rest.strip() for rest in handle)
        return False
    finally:
        handle.seek(0)


def _load_spans(ctx: LoadContext, handle, size: int) -> Counts | None:
    """A whole export of OTLP's structure, mapped and read a span at a time; None where
    it is not one (`otlp.lazy_export`, `_shape_problem`): read whole then."""
    mapped = mmap.mmap(handle.fileno(), size, access=mmap.ACCESS_READ)
    try:
        export = otlp.lazy_export(memoryview(mapped)[len(BOM):] if mapped[:len(BOM)] == BOM else mapped)
        if export is None or _shape_problem(otlp.skeleton(export)) is not None:
            return None
        ctx.advance(size)
        read, spans = _Read(whole_file=True), 0
        for index, (path, span, resource, scope) in enumerate(_spans(export)):
            read._span(1, index, path, span, resource, scope)
            if read.spans == STORED_SPANS:
                read.store(ctx)
                read, spans = _Read(whole_file=True), spans + read.spans
        _check_attributes(*_resources_of(export), read._finding("file", 1, ""), "")
        read.store(ctx)
    finally:
        export = None  # its spans are slices of the mapping
        try:
            mapped.close()
        except BufferError:  # slices an error on its way up still holds: closed as they go
            pass
    _derive(ctx)
    return Counts(spans + read.spans, 0)


def _is_json(line: str) -> bool:
    """Is `line` one JSON value? Where the first of a file's several non-blank lines is,
    the file is JSON Lines: one JSON value spread over lines never starts with a whole one."""
    try:
        _DECODE.decode(line)
        return True
    except (msgspec.DecodeError, RecursionError):
        return False


def _derive(ctx: LoadContext) -> None:
    """After the file's lines: a span written twice (an exporter that sent a batch again)
    said once, and the file's decisions derived again."""
    twice = ctx.con.execute(
        "SELECT trace_id, span_id, list(seq ORDER BY seq, span_index) FROM otel_spans "
        "WHERE source_id = ? AND span_id IS NOT NULL AND trace_id IS NOT NULL GROUP BY ALL HAVING count(*) > 1 "
        "ORDER BY min(seq), span_id", [ctx.source_id]).fetchall()
    ctx.add_file_findings([Violation(
        f"span {span_id}", "warning", "duplicate_span", "spanId",
        f"span {span_id} of trace {trace_id} is written {len(lines)} times (line {', '.join(map(str, lines))}): "
        f"one decision, as written first") for trace_id, span_id, lines in twice])
    ctx.add_file_findings([Violation(
        f"span {decision}", answers.TOOL_RULES[rule], rule, f"(execute_tool span {tool_span})",
        f"the tool {tool or '(unnamed)'} this call asked for failed: {failure}")
        for decision, tool_span, tool, rule, failure in ctx.con.execute(
            TOOL_FAILURES, {"source_id": ctx.source_id}).fetchall() if decision is not None])
    ctx.con.execute(DERIVE_DECISIONS, {"source_id": ctx.source_id})
    ctx.add_file_findings(_what_decisions_lack(ctx.con, ctx.source_id))


# LiteLLM's OpenTelemetry callback, by default, writes a call's GenAI attributes onto the
# span active when the call began (often ended by the time it writes, so they are lost),
# and the provider's raw response on a `raw_gen_ai_request` child (`llm.openai.*`).
RAW_CALLS_ONLY = f"""
SELECT count(*) FROM otel_spans r
WHERE r.source_id = $source_id AND r.name = 'raw_gen_ai_request' AND json_exists(r.attributes, '$."llm.openai.choices"')
  AND NOT EXISTS (SELECT 1 FROM otel_spans p WHERE p.source_id = r.source_id AND p.trace_id = r.trace_id
                  AND p.span_id = r.parent_span_id AND p.operation IN ({', '.join(repr(o) for o in sc.INFERENCE)}))
"""


def _raw_calls_only(con, source_id: int) -> list[Violation]:
    """LiteLLM calls recorded only as raw responses: one line naming the setting that
    gives each call a GenAI span."""
    raw = con.execute(RAW_CALLS_ONLY, {"source_id": source_id}).fetchall()[0][0]
    return [Violation("file", "warning", "raw_calls_only", "(file)",
                      f"{raw} model calls are recorded only as LiteLLM's raw_gen_ai_request spans (llm.openai.*), "
                      f"with no GenAI span of their own: they are no decisions here. Run LiteLLM with "
                      f"USE_OTEL_LITELLM_REQUEST_SPAN=true for a litellm_request span per call")] if raw else []


def _what_decisions_lack(con, source_id: int) -> list[Violation]:
    """A file whose spans hold no inference call says so (none is a decision), and one
    whose calls answered with tool calls it does not record says they cannot be checked."""
    spans, inference, operations, others = con.execute(f"""
        SELECT count(*), count(*) FILTER (WHERE operation IN ({', '.join(repr(o) for o in sc.INFERENCE)})),
               list(DISTINCT operation ORDER BY operation) FILTER (WHERE operation IS NOT NULL),
               list(DISTINCT name ORDER BY name)[:5]
        FROM otel_spans WHERE source_id = ?""", [source_id]).fetchall()[0]
    unrecorded = con.execute(
        "SELECT count(*) FROM decisions d JOIN otel_spans s ON s.source_id = d.source_id "
        "AND d.locator = 'span ' || s.span_id WHERE d.source_id = ? AND d.failure IS NULL "
        "AND NOT s.answer_recorded AND list_has_any(s.finish_reasons, ['tool_calls', 'tool_call'])",
        [source_id]).fetchall()[0][0]
    found = _raw_calls_only(con, source_id)
    if inference:
        return found + ([] if not unrecorded else [Violation(
            "file", "info", "answers_not_recorded", "(file)",
            f"{unrecorded} inference spans finished with tool calls but record no answer (no gen_ai.output.messages): "
            f"their tool calls' arguments cannot be checked. An instrumentation that writes message content "
            f"to log records (opentelemetry-instrumentation-openai-v2 by default) writes it on spans with "
            f"OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental")])
    if not spans:
        return []
    what = (f"GenAI operations {', '.join(operations)} but no inference" if operations
            else f"no GenAI operation (span names: {', '.join(others)})")
    return found + [Violation("file", "warning", "no_decisions", "(file)",
                      f"{spans} spans, {what}: no decision. A decision is an inference span: gen_ai.operation.name "
                      f"{', '.join(sc.INFERENCE)} (or OpenInference's span kind LLM)")]


@dataclasses.dataclass
class _Read:
    """The rows, findings and rejects of some lines (or of a whole export)."""

    whole_file: bool = False
    spans: int = 0
    span_rows: dict = dataclasses.field(default_factory=lambda: {c.name: [] for c in SPANS.columns[1:]})
    score_rows: dict = dataclasses.field(default_factory=lambda: {c.name: [] for c in SCORES.columns[1:]})
    violations: list = dataclasses.field(default_factory=list)
    rejects: list = dataclasses.field(default_factory=list)

    def line(self, number: int, text: str, unreadable: str | None, where: str | None = None) -> None:
        """A line (or a whole export): its spans, or a reject with its text. An export
        whose structure is not OTLP's anywhere is refused whole: a part that is not
        there cannot be a row, and its text is kept with the line's."""
        where = where or f"line {number}"
        request, why = _request(text, unreadable)
        if why is None:
            why = _shape_problem(request)
        if why is not None:
            line = None if self.whole_file and where == "file" else number
            self.rejects.append((where, text, line))
            self.violations.append(Violation(where, "error", "not_an_otlp_export", "(record)",
                                             f"expected an OTLP/JSON traces export ({{\"resourceSpans\": [...]}}); "
                                             f"found {why}, kept in `rejects`", line=line))
            return
        for index, (path, span, resource, scope) in enumerate(_spans(request)):
            self._span(number, index, path, span, resource, scope)
        _check_attributes(*_resources_of(request), self._finding(where, number, ""), "")

    def _finding(self, where: str, number: int, prefix: str):
        """Says a finding at `where`, its field under `prefix` (the path of a span that
        has no id to be named by)."""
        line = None if self.whole_file and where == "file" else number

        def found_at(field: str, message: str, severity: str = "error", rule: str = "otlp_shape") -> None:
            self.violations.append(Violation(where, severity, rule, prefix + field, message, line=line))

        return found_at

    def _span(self, number: int, index: int, path: str, span: dict, resource: dict, scope: dict) -> None:
        span_id = _id(span.get("spanId"), 16)
        where = f"span {span_id}" if span_id else f"line {number}"
        said = self._finding(where, number, "" if span_id else f"{path}.")
        found_before = len(self.violations)
        row = _span_row(span, said)
        attributes, kinds = otlp.attributes_of(span.get("attributes", []))
        _check_attributes(attributes, kinds, said, "attributes")
        view, view_kinds = genai_view(attributes, kinds)
        values = _conventional(view, view_kinds, resource, said, "gen_ai.operation.name" in attributes)
        events = _events(span.get("events", []), said)
        for event in events:
            if event["name"] == sc.EVALUATION:
                self._score(number, row, event)
        # any error.type marks a failure, whatever its type (a wrong type is said above);
        # so does an exception event on a span whose status says nothing (LangChain's)
        failed = row["status_code"] == sc.STATUS_ERROR or "error.type" in attributes or (
            row["status_code"] != 1 and any(event["name"] == "exception" for event in events))
        if failed and "error.type" not in attributes and "gen_ai.operation.name" in attributes:
            said("attributes.error.type", "a GenAI operation that ended in an error should say its error.type "
                 "(conditionally required)", "warning", "required_attribute")
        answered = _answered(view, values["operation"], failed, said)
        failure = answers.failure_of(row["status_message"], events, attributes) if failed else None
        measured = {
            **row, **values, **answered, "latency_ms": _latency(row, attributes), "tokens": _tokens(values, attributes),
            "seq": number, "span_index": index, "failed": failed, "failure": failure,
            "tool_rule": answers.tool_rule(view, events, failure)
            if failed and values["operation"] == "execute_tool" else None,
            "valid": not any(v.severity == "error" for v in self.violations[found_before:]),
            "attributes": json.dumps(attributes, ensure_ascii=False), "events": json.dumps(events, ensure_ascii=False),
            "resource": json.dumps(resource, ensure_ascii=False),
            "scope_name": scope.get("name"), "scope_version": scope.get("version"),
        }
        for name, value in measured.items():
            self.span_rows[name].append(value)
        self.spans += 1

    def _score(self, number: int, row: dict, event: dict) -> None:
        values = event["attributes"]

        def text(key: str) -> str | None:
            return values.get(key) if isinstance(values.get(key), str) else None

        score = values.get("gen_ai.evaluation.score.value")
        for name, value in {
            "seq": number, "trace_id": row["trace_id"], "span_id": row["span_id"],
            "name": text("gen_ai.evaluation.name"),
            "score_value": float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None,
            "score_label": text("gen_ai.evaluation.score.label"),
            "explanation": text("gen_ai.evaluation.explanation"), "response_id": text("gen_ai.response.id"),
            "time_ns": event["time_ns"],
        }.items():
            self.score_rows[name].append(value)

    def store(self, ctx: LoadContext) -> None:
        SPANS.insert_rows(ctx.con, {"source_id": [ctx.source_id] * self.spans, **self.span_rows})
        scores = len(self.score_rows["seq"])
        SCORES.insert_rows(ctx.con, {"source_id": [ctx.source_id] * scores, **self.score_rows})
        ctx.add_violations(self.violations)
        ctx.add_rejects(self.rejects)


def _request(text: str, unreadable: str | None) -> tuple[dict | None, str | None]:
    """The export a line holds, or why it holds none."""
    if unreadable:
        return None, f"a line that cannot be read ({unreadable})"
    try:
        request = _DECODE.decode(text)
    except msgspec.DecodeError as exc:
        return None, f"text that is not JSON ({exc})"
    except RecursionError:
        return None, "JSON nested too deeply to read"
    if not isinstance(request, dict):
        return None, f"a JSON {type(request).__name__}, not an object"
    if not isinstance(request.get("resourceSpans"), list):
        return None, "an object without a `resourceSpans` list" + (
            " (a logs or metrics export: this format reads traces)"
            if {"resourceLogs", "resourceMetrics"} & request.keys() else "")
    return request, None


def _shape_problem(request: dict) -> str | None:
    """Where an export's structure is not OTLP's: resources, scopes and spans are
    objects, their lists lists, a scope's name and version strings."""
    for r, resource_spans in enumerate(request["resourceSpans"]):
        at = f"resourceSpans[{r}]"
        if not isinstance(resource_spans, dict):
            return f"{at} {found(resource_spans)}, not an object"
        if not isinstance(resource_spans.get("resource", {}), dict):
            return f"{at}.resource {found(resource_spans['resource'])}, not an object"
        if not isinstance(resource_spans.get("scopeSpans", []), list):
            return f"{at}.scopeSpans {found(resource_spans['scopeSpans'])}, not a list"
        for s, scoped in enumerate(resource_spans.get("scopeSpans", [])):
            where = f"{at}.scopeSpans[{s}]"
            if not isinstance(scoped, dict) or not isinstance(scoped.get("spans", []), list):
                return f"{where} {found(scoped)}, not an object with a `spans` list"
            scope = scoped.get("scope", {})
            if not isinstance(scope, dict) or not all(isinstance(scope.get(k, ""), str) for k in ("name", "version")):
                return f"{where}.scope {found(scope)}, not an object with a string name and version"
            for n, span in enumerate(scoped.get("spans", [])):
                if not isinstance(span, dict):
                    return f"{where}.spans[{n}] {found(span)}, not a span object"
    return None


def _spans(request: dict):
    """(path, span, resource attributes, scope) of each span of an export whose structure
    is OTLP's (`_shape_problem`)."""
    for r, resource_spans in enumerate(request["resourceSpans"]):
        resource, _ = otlp.attributes_of(resource_spans.get("resource", {}).get("attributes", []))
        for s, scoped in enumerate(resource_spans.get("scopeSpans", [])):
            for n, span in enumerate(scoped.get("spans", [])):
                yield f"resourceSpans[{r}].scopeSpans[{s}].spans[{n}]", span, resource, scoped.get("scope", {})


def _resources_of(request: dict) -> tuple[dict, dict]:
    """Every resource attribute of an export, by its path, with its kind: checked once
    per line, not once per span."""
    values, kinds = {}, {}
    for r, resource_spans in enumerate(request["resourceSpans"]):
        got, got_kinds = otlp.attributes_of(resource_spans.get("resource", {}).get("attributes", []))
        for key, kind in got_kinds.items():
            values[f"resourceSpans[{r}].resource.attributes.{key}"] = got.get(key)
            kinds[f"resourceSpans[{r}].resource.attributes.{key}"] = kind
    return values, kinds


def _id(value: Any, digits: int) -> str | None:
    """A hex id of `digits` digits in lower case (OTLP/JSON ids are case-insensitive)."""
    if isinstance(value, str) and _HEX[digits].fullmatch(value) and set(value) != {"0"}:
        return value.lower()
    return None


def _span_row(span: dict, said) -> dict:
    """The span's own fields, each checked as OTLP/JSON writes it."""
    row = {"trace_id": _id(span.get("traceId"), 32), "span_id": _id(span.get("spanId"), 16)}
    for key, digits in (("traceId", 32), ("spanId", 16)):
        if row[key.replace("Id", "_id").lower()] is None:
            said(key, f"expected {digits} hex digits, not all zero; found {found(span.get(key))}")
    parent = span.get("parentSpanId", "")
    row["parent_span_id"] = _id(parent, 16)
    if parent not in ("", None) and row["parent_span_id"] is None:
        said("parentSpanId", f"expected 16 hex digits, or none for a root span; found {found(parent)}")
    row["name"] = span.get("name") if isinstance(span.get("name"), str) else None
    if row["name"] is None:
        said("name", f"expected a string; found {found(span.get('name'))}")
    for key, column in (("startTimeUnixNano", "start_ns"), ("endTimeUnixNano", "end_ns")):
        row[column] = otlp.int64_of(span.get(key))
        if row[column] is None or row[column] < 0:
            row[column] = None
            said(key, f"expected nanoseconds since the epoch as a decimal string; found {found(span.get(key))}")
    if None not in (row["start_ns"], row["end_ns"]) and row["end_ns"] < row["start_ns"]:
        said("endTimeUnixNano", "the span ends before it starts", "warning", "span_ends_before_it_starts")
    row["kind"] = _enum(span.get("kind", 0), range(6), sc.KIND_NAMES, "kind", said)
    status = span.get("status") if isinstance(span.get("status"), dict) else {}
    row["status_code"] = _enum(status.get("code", 0), range(3), sc.STATUS_NAMES, "status.code", said)
    row["status_message"] = status.get("message") if isinstance(status.get("message"), str) else None
    return row


def _latency(row: dict, attributes: dict) -> float | None:
    """The span's duration in ms. `export --otlp` also writes the decision's latency as it
    was (`workbench.latency_ms`): that value is taken where the span's nanoseconds agree
    with it (a latency measured below the nanosecond comes back whole), or where the span
    has no duration (a latency no span can hold, or none a number can say)."""
    start, end = row["start_ns"], row["end_ns"]
    if start is None or end is None:
        return None
    written = attributes.get("workbench.latency_ms")
    written = otlp.SPECIAL_DOUBLES.get(written, written) if isinstance(written, str) else written
    if isinstance(written, (int, float)) and not isinstance(written, bool):
        if end == start or (math.isfinite(written * 1e6) and round(written * 1e6) == end - start):
            return float(written)
    return (end - start) / 1e6 if end > start else None


def _tokens(values: dict, attributes: dict) -> int | None:
    """All tokens of the call: input and output; where the workbench wrote the total of a
    log that records only a total (`workbench.tokens`), that total."""
    written = attributes.get("workbench.tokens")
    if isinstance(written, int) and not isinstance(written, bool):
        return written
    if values["input_tokens"] is None and values["output_tokens"] is None:
        return None
    return (values["input_tokens"] or 0) + (values["output_tokens"] or 0)


def _enum(value: Any, allowed: range, names: dict[str, int], field: str, said) -> int | None:
    """An enum as OTLP/JSON must write it (an integer); a name, which some emitters
    write, is read and reported."""
    if isinstance(value, int) and not isinstance(value, bool) and value in allowed:
        return value
    if isinstance(value, str) and value in names:
        said(field, f"OTLP/JSON writes enums as integers; found the name {value!r} ({names[value]})", "warning",
             "enum_as_name")
        return names[value]
    said(field, f"expected an integer {allowed.start} to {allowed.stop - 1}; found {found(value)}")
    return None


def _check_attributes(values: dict, kinds: dict, said, where: str) -> None:
    """Each attribute's type against the conventions', its name against their registry."""
    for key, kind in kinds.items():
        field = f"{where}.{key}" if where else key
        if kind == otlp.BAD:
            said(field.rstrip("."), _bad(key, values))
            continue
        if key in sc.DEPRECATED:
            now = sc.DEPRECATED[key]
            said(field, f"{key} is deprecated in the conventions {sc.VERSION}" + (
                f"; read as {now}" if now else "; removed, with no replacement"), "info", "deprecated_attribute")
            expected = sc.TYPES.get(now) if now else None
        elif key.startswith("gen_ai.") and key not in sc.TYPES:
            said(field, f"not an attribute of the GenAI conventions {sc.VERSION}", "info", "unknown_attribute")
            continue
        else:
            expected = sc.TYPES.get(key)
        if expected == "string[]" and kind == otlp.STRING and answers.finish_reasons(values.get(key)) is not None \
                and str(values.get(key)).startswith("["):
            said(field, f"expected string[] (the conventions {sc.VERSION}); found the array written as JSON text "
                 f"{found(values.get(key))}: read as the array it holds", "warning", "array_as_json_text")
        elif expected is not None and not _is_a(values.get(key), kind, expected):
            said(field, f"expected {expected} (the conventions {sc.VERSION}); found {kind} {found(values.get(key))}",
                 "error", "attribute_type")


def _bad(key: str, values: dict) -> str:
    """What a value `attributes_of` could not read was expected to be."""
    if key == "":
        return "expected a list of {\"key\", \"value\"} attributes"
    if key.startswith("[") and key not in values:
        return "expected an attribute {\"key\": a string, \"value\": an AnyValue}"
    return ("expected an AnyValue: one of stringValue, boolValue, intValue (a 64-bit integer as a decimal string), "
            f"doubleValue, arrayValue, kvlistValue, bytesValue; found {found(values.get(key))}")


def _is_a(value: Any, kind: str, expected: str) -> bool:
    if expected == "any":
        return True
    if expected == "string[]":
        return kind == otlp.ARRAY and all(isinstance(item, str) for item in value)
    # JSON and the SDKs write 1 for 1.0: an integer where a double is expected is one.
    return kind == expected or (expected == "double" and kind == otlp.INT)


def _answered(view: dict, operation: str | None, failed: bool, said) -> dict:
    """What an inference span's call answered: its finish reasons, and the rules its
    answer breaks (a refusal; tool-call arguments that are not JSON or break the tool's
    declared parameters), each an error on the span. A failed call answered nothing."""
    answer = answers.answer_of(view)
    found = {"finish_reasons": answer.finish_reasons, "refusal": None, "bad_arguments": None, "exported_rule": None,
             "answer_recorded": answers.recorded(view),
             "tool_call_ids": [call.id for call in answer.tool_calls if call.id] or None,
             "streamed": view.get("gen_ai.request.stream") if isinstance(view.get("gen_ai.request.stream"), bool)
             else None}
    if operation not in sc.INFERENCE or failed:
        return found
    if view.get("workbench.outcome") == "invalid":  # as `export --otlp` wrote a decision found invalid
        rule = view.get("workbench.rule") if isinstance(view.get("workbench.rule"), str) else "invalid_decision"
        found["exported_rule"] = rule
        said("attributes.workbench.rule", f"exported as an invalid decision, by the rule {rule!r}", "error", rule)
    if answer.refusal is not None:
        found["refusal"] = answer.refusal
        said("attributes.gen_ai.output.messages", f"the model refused to answer: {answer.refusal}", "error", "refusal")
    found["bad_arguments"] = answer.bad_arguments()
    if found["bad_arguments"]:
        said("attributes.gen_ai.output.messages", found["bad_arguments"], "error", "tool_arguments")
    return found


def _conventional(attributes: dict, kinds: dict, resource: dict, said, declared: bool = True) -> dict:
    """The attributes the workbench reads of a span, each of the conventions' type (a
    value of another type is reported by `_check_attributes` and left out); the
    required ones of its operation checked where the span `declared` it (an operation
    read from another instrumentation's attributes is not held to the conventions)."""

    def value(key: str, expected: str):
        for name in (key, *(old for old, now in sc.DEPRECATED.items() if now == key)):
            if name in attributes and _is_a(attributes[name], kinds[name], expected):
                return attributes[name]
        return None

    operation = value("gen_ai.operation.name", "string")
    if operation is not None and operation not in sc.OPERATIONS:
        said("attributes.gen_ai.operation.name", f"{operation!r} is not one of the operations the conventions "
             f"{sc.VERSION} name ({', '.join(sc.OPERATIONS)}); a custom one is allowed", "info", "unknown_operation")
    if operation is not None and declared:
        for key in sc.REQUIRED.get(operation, ()):
            if value(key, sc.TYPES[key]) is None and key not in attributes:
                said(f"attributes.{key}", f"required on a GenAI {operation} span (the conventions {sc.VERSION})",
                     "error", "required_attribute")
    session = value("session.id", "string")
    if session is None and isinstance(resource.get("session.id"), str):
        session = resource["session.id"]
    return {
        "operation": operation, "provider": value("gen_ai.provider.name", "string"),
        "request_model": value("gen_ai.request.model", "string"),
        "response_model": value("gen_ai.response.model", "string"),
        "agent": value("gen_ai.agent.name", "string") or value("gen_ai.agent.id", "string"),
        "tool": value("gen_ai.tool.name", "string"), "tool_call_id": value("gen_ai.tool.call.id", "string"),
        "conversation_id": value("gen_ai.conversation.id", "string"),
        "session_id": session, "input_tokens": value("gen_ai.usage.input_tokens", "int"),
        "output_tokens": value("gen_ai.usage.output_tokens", "int"),
        "cached_tokens": value("gen_ai.usage.cache_read.input_tokens", "int"),
        "error_type": value("error.type", "string"),
    }


def _events(events: Any, said) -> list[dict]:
    """The span's events as {name, time_ns, attributes}; an evaluation's attributes
    checked against the conventions."""
    if not isinstance(events, list):
        said("events", f"expected a list; found {found(events)}")
        return []
    kept = []
    for n, event in enumerate(events):
        if not isinstance(event, dict):
            said(f"events[{n}]", f"expected an event object; found {found(event)}")
            continue
        attributes, kinds = otlp.attributes_of(event.get("attributes", []))
        name = event.get("name") if isinstance(event.get("name"), str) else None
        time_ns = otlp.int64_of(event.get("timeUnixNano", "0"))
        if name is None:
            said(f"events[{n}].name", f"expected a string; found {found(event.get('name'))}")
        if time_ns is None or time_ns < 0:
            time_ns = None
            said(f"events[{n}].timeUnixNano",
                 f"expected nanoseconds since the epoch as a decimal string; found {found(event.get('timeUnixNano'))}")
        if name == sc.EVALUATION:
            where = f"events[{n}].attributes"
            _check_attributes(attributes, kinds, said, where)
            for key in sc.EVALUATION_REQUIRED:
                if key not in attributes:
                    said(f"{where}.{key}", f"required on a {sc.EVALUATION} event (the conventions {sc.VERSION})",
                         "error", "required_attribute")
        kept.append({"name": name, "time_ns": time_ns, "attributes": attributes})
    return kept
