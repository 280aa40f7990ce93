"""Reading OTLP/JSON traces: an OpenTelemetry Collector file exporter's lines
(`*.otlp.jsonl`, one `{"resourceSpans": [...]}` export per line) or one export
(`*.otlp.json`). Every span becomes a row of `otel_spans`, checked against OTLP/JSON and
the GenAI conventions (`conventions`); a finding is located `span <span_id>` with the
field it is about (`attributes.gen_ai.usage.input_tokens`). A line that is not an
export is a reject with its text.

Here each line (or export) becomes rows; the export is walked by `spans`, a span's
attributes read under the conventions by `genai`, and the file's decisions derived once
its spans are stored by `decisions`."""

from __future__ import annotations

import dataclasses
import json
import mmap
import os
from pathlib import Path

import msgspec

from workbench.errors import UnreadableFile
from workbench.formats import BOM, Counts, LoadContext
from workbench.jsonl import context_batches
from workbench.otel import answers, otlp
from workbench.otel import conventions as sc
from workbench.otel.decisions import derive
from workbench.otel.dialects import genai_view
from workbench.otel.genai import call_answer, check_attributes, conventional, events_of, latency_of, tokens_of
from workbench.otel.spans import DECODE, hex_id, request_of, resources_of, shape_problem, span_row, spans_of
from workbench.otel.tables import SCORES, SPANS
from workbench.paths import text_of
from workbench.violation import Violation

LINES_SUFFIX, EXPORT_SUFFIX = ".otlp.jsonl", ".otlp.json"


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
    derive(ctx)
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
    derive(ctx)
    return Counts(read.spans, len(read.rejects))


_JSON_LINES = Violation(
    "file",
    "info",
    "json_lines",
    "(file)",
    "this *.otlp.json file holds JSON Lines (one export "
    "per line): read line by line; name it *.otlp.jsonl to have it followed as it grows",
)


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
    it is not one (`otlp.lazy_export`, `shape_problem`): read whole then."""
    mapped = mmap.mmap(handle.fileno(), size, access=mmap.ACCESS_READ)
    try:
        export = otlp.lazy_export(memoryview(mapped)[len(BOM) :] if mapped[: len(BOM)] == BOM else mapped)
        if export is None or shape_problem(otlp.skeleton(export)) is not None:
            return None
        ctx.advance(size)
        read, spans = _Read(whole_file=True), 0
        for index, (path, span, resource, scope) in enumerate(spans_of(export)):
            read._span(1, index, path, span, resource, scope)
            if read.spans == STORED_SPANS:
                read.store(ctx)
                read, spans = _Read(whole_file=True), spans + read.spans
        check_attributes(*resources_of(export), read._finding("file", 1, ""), "")
        read.store(ctx)
    finally:
        export = None  # its spans are slices of the mapping
        try:
            mapped.close()
        except BufferError:  # slices an error on its way up still holds: closed as they go
            pass
    derive(ctx)
    return Counts(spans + read.spans, 0)


def _is_json(line: str) -> bool:
    """Is `line` one JSON value? Where the first of a file's several non-blank lines is,
    the file is JSON Lines: one JSON value spread over lines never starts with a whole one."""
    try:
        DECODE.decode(line)
        return True
    except (msgspec.DecodeError, RecursionError):
        return False


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
        request, why = request_of(text, unreadable)
        if request is not None:
            why = shape_problem(request)
        if request is None or why is not None:
            line = None if self.whole_file and where == "file" else number
            self.rejects.append((where, text, line))
            self.violations.append(
                Violation(
                    where,
                    "error",
                    "not_an_otlp_export",
                    "(record)",
                    f'expected an OTLP/JSON traces export ({{"resourceSpans": [...]}}); found {why}, kept in `rejects`',
                    line=line,
                )
            )
            return
        for index, (path, span, resource, scope) in enumerate(spans_of(request)):
            self._span(number, index, path, span, resource, scope)
        check_attributes(*resources_of(request), self._finding(where, number, ""), "")

    def _finding(self, where: str, number: int, prefix: str):
        """Says a finding at `where`, its field under `prefix` (the path of a span that
        has no id to be named by)."""
        line = None if self.whole_file and where == "file" else number

        def found_at(field: str, message: str, severity: str = "error", rule: str = "otlp_shape") -> None:
            self.violations.append(Violation(where, severity, rule, prefix + field, message, line=line))

        return found_at

    def _span(self, number: int, index: int, path: str, span: dict, resource: dict, scope: dict) -> None:
        span_id = hex_id(span.get("spanId"), 16)
        where = f"span {span_id}" if span_id else f"line {number}"
        said = self._finding(where, number, "" if span_id else f"{path}.")
        found_before = len(self.violations)
        row = span_row(span, said)
        attributes, kinds = otlp.attributes_of(span.get("attributes", []))
        check_attributes(attributes, kinds, said, "attributes")
        view, view_kinds = genai_view(attributes, kinds)
        values = conventional(view, view_kinds, resource, said, "gen_ai.operation.name" in attributes)
        events = events_of(span.get("events", []), said)
        for event in events:
            if event["name"] == sc.EVALUATION:
                self._score(number, row, event)
        # any error.type marks a failure, whatever its type (a wrong type is said above);
        # so does an exception event on a span whose status says nothing (LangChain's)
        failed = (
            row["status_code"] == sc.STATUS_ERROR
            or "error.type" in attributes
            or (row["status_code"] != 1 and any(event["name"] == "exception" for event in events))
        )
        if failed and "error.type" not in attributes and "gen_ai.operation.name" in attributes:
            said(
                "attributes.error.type",
                "a GenAI operation that ended in an error should say its error.type (conditionally required)",
                "warning",
                "required_attribute",
            )
        answered = call_answer(view, values["operation"], failed, said)
        failure = answers.failure_of(row["status_message"], events, attributes) if failed else None
        measured = {
            **row,
            **values,
            **answered,
            "latency_ms": latency_of(row, attributes),
            "tokens": tokens_of(values, attributes),
            "seq": number,
            "span_index": index,
            "failed": failed,
            "failure": failure,
            "tool_rule": answers.tool_rule(view, events, failure)
            if failure is not None and values["operation"] == "execute_tool"
            else None,
            "valid": not any(v.severity == "error" for v in self.violations[found_before:]),
            "attributes": json.dumps(attributes, ensure_ascii=False),
            "events": json.dumps(events, ensure_ascii=False),
            "resource": json.dumps(resource, ensure_ascii=False),
            "scope_name": scope.get("name"),
            "scope_version": scope.get("version"),
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
            "seq": number,
            "trace_id": row["trace_id"],
            "span_id": row["span_id"],
            "name": text("gen_ai.evaluation.name"),
            "score_value": float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None,
            "score_label": text("gen_ai.evaluation.score.label"),
            "explanation": text("gen_ai.evaluation.explanation"),
            "response_id": text("gen_ai.response.id"),
            "time_ns": event["time_ns"],
        }.items():
            self.score_rows[name].append(value)

    def store(self, ctx: LoadContext) -> None:
        SPANS.insert_rows(ctx.con, {"source_id": [ctx.source_id] * self.spans, **self.span_rows})
        scores = len(self.score_rows["seq"])
        SCORES.insert_rows(ctx.con, {"source_id": [ctx.source_id] * scores, **self.score_rows})
        ctx.add_violations(self.violations)
        ctx.add_rejects(self.rejects)
