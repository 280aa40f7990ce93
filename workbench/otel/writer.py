"""Every decision of every format as OpenTelemetry GenAI spans, in OTLP/JSON: what
Langfuse, Phoenix or any OTLP receiver takes (`workbench export --otlp FILE`).

One trace per game; one `chat` span per decision, named `chat {model}`, with the
conventions' attributes (`gen_ai.operation.name`, `gen_ai.provider.name`,
`gen_ai.request.model`, `gen_ai.response.model` where another model answered,
`gen_ai.conversation.id` (the game), `gen_ai.agent.name`, the token counts; a failed
call, which got no answer, has status ERROR with the provider's words and `error.type`
`_OTHER`) and the workbench's own (`workbench.format`, `workbench.turn`,
`workbench.action`, `workbench.valid`, `workbench.outcome`, `workbench.rule` (the error
rule an invalid decision breaks), `workbench.locator`, `workbench.latency_ms`,
`workbench.tokens` where a log kept only a total, and the resource's `workbench.source`). A decision has no clock time: the spans of a game follow one another
from the time its file was ingested, each as long as its decision's latency (to the
nanosecond; `workbench.latency_ms` keeps it whole) and none where it is unknown.
Ingesting the file gives the same decisions back: models, validity, tokens, latency.

`FILE.otlp.jsonl` holds one export per source file, as a Collector's file exporter
writes, or several for a file of many decisions, each of at most EXPORT_BYTES (a line of
the 8 MiB the ingest reads as a record at most, with room to spare); `FILE.otlp.json` a
single export of them all (any other `.jsonl` or name likewise, but the ingest
recognises those two). The decisions are read a batch at a time and their spans written
as they come: of the export's memory only DuckDB's sort of the decisions grows with the
database (docs/performance.md, Measured where the code chose)."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from workbench import connection
from workbench.errors import WorkbenchError
from workbench.otel import conventions as sc
from workbench.otel.otlp import key_values
from workbench.paths import text_of, writable_folder
from workbench.schema import INT64, sql_literal

SCOPE = {"name": "workbench", "version": "0.1.0"}
GAP_NS = 1_000_000  # between one decision's span and the next one's in a game

DECISIONS = """
SELECT s.path, d.format, d.game_id, d.turn, d.agent_id, d.model, d.response_model, d.action, d.valid, d.outcome,
       d.failure, d.latency_ms, d.tokens,
       d.input_tokens, d.output_tokens, d.cached_tokens, d.locator,
       epoch_ns(s.ingested_at) AS ingested_ns,
       (SELECT min(v.rule) FROM violations v WHERE v.source_id = d.source_id AND v.locator = d.locator
                                              AND v.severity = 'error') AS rule,
       row_number() OVER (PARTITION BY s.path, d.format, coalesce(d.locator, '') ORDER BY d.game_id NULLS FIRST,
                          d.turn NULLS FIRST, d.locator, d.rowid) - 1 AS occurrence
FROM decisions d JOIN sources s USING (source_id)
ORDER BY s.path, d.format, d.game_id NULLS FIRST, d.turn NULLS FIRST, d.locator, d.rowid
"""
# The files the decisions are of, to name each relative to the folder they have in common.
PATHS = "SELECT DISTINCT s.path FROM decisions d JOIN sources s USING (source_id) ORDER BY s.path"
# An export written holds at most this many bytes of spans (but for a single span larger).
EXPORT_BYTES = 4 << 20
# Decisions read from the database at a time.
BATCH_ROWS = 10_000
# The memory DuckDB may take for the export's query: past it, its sort spills to disk.
QUERY_MEMORY = "256MB"

# genai-prices' provider ids (it knows which provider serves a model) as the conventions name them.
_PROVIDERS = {
    "google": "gcp.gemini",
    "mistral": "mistral_ai",
    "x-ai": "x_ai",
    "xai": "x_ai",
    "aws": "aws.bedrock",
    "bedrock": "aws.bedrock",
    "azure": "azure.ai.openai",
}


def export_otlp(out: str | Path, db=None, overwrite: bool = False) -> int:
    """Write every decision of `db` as OTLP/JSON spans to `out` (an existing file only
    with `overwrite`); returns how many."""
    out = Path(out)
    if out.is_dir():
        raise WorkbenchError(f"cannot export to {text_of(out)}: it is a folder; name a file (e.g. traces.otlp.jsonl)")
    if out.exists() and not overwrite:
        raise WorkbenchError(f"{text_of(out)} exists; choose another file or pass --overwrite")
    writable_folder(out)
    partial = out.with_name(f".{out.name}.partial-{os.getpid()}")
    con = connection.connect(db, read_only=True)
    try:
        with partial.open("wb") as file:
            written = _write(con, file, lines=out.suffix == ".jsonl")
        partial.replace(out)
    except OSError as exc:
        raise WorkbenchError(f"cannot export to {text_of(out)}: {exc.strerror or exc}") from None
    finally:
        con.close()
        partial.unlink(missing_ok=True)
    return written


def _write(con, file, lines: bool) -> int:
    """Every decision as a span, written as exports: one per source file, or per part of
    one of EXPORT_BYTES (`lines`: one a line; else all in one export's `resourceSpans`);
    the file named relative to the folder the files have in common (a trace shared
    elsewhere says nothing of the folders of the machine it came from). Returns how many."""
    from workbench.paths import relative_to_common

    paths = [path for (path,) in con.execute(PATHS).fetchall()]
    con.execute("SET enable_progress_bar = false")  # this connection's own: the command says what it wrote
    shown = dict(zip(paths, relative_to_common(paths)[0]))
    clock: dict[tuple, int] = {}  # (format, game) -> where its next span starts
    exports = _Exports(file, lines)
    written = 0
    with _bounded(con):
        for batch in con.sql(DECISIONS).to_arrow_reader(BATCH_ROWS):
            for decision in batch.to_pylist():
                game = (
                    decision["format"],
                    decision["game_id"] if decision["game_id"] is not None else decision["path"],
                )
                span = _span(decision, game, clock.get(game, decision["ingested_ns"]), decision["occurrence"])
                clock[game] = int(span["endTimeUnixNano"]) + GAP_NS
                exports.add(shown[decision["path"]], _json(span).encode())
                written += 1
    exports.close()
    return written


@contextmanager
def _bounded(con) -> Iterator[None]:
    """DuckDB's memory for the export's query bounded at QUERY_MEMORY (its sort spills to
    a temporary folder past it), then as it was: the instance may be a notebook's."""
    limit, spills = con.execute("SELECT current_setting('memory_limit'), current_setting('temp_directory')").fetchone()
    with tempfile.TemporaryDirectory(prefix="workbench-export-") as spill:
        with contextlib.suppress(duckdb.Error):  # an instance that has spilled keeps its folder
            con.execute(f"SET temp_directory = {sql_literal(spill)}")
        con.execute(f"SET memory_limit = {sql_literal(QUERY_MEMORY)}")
        try:
            yield
        finally:
            with contextlib.suppress(duckdb.Error):
                con.execute(f"SET memory_limit = {sql_literal(limit)}")
                con.execute(f"SET temp_directory = {sql_literal(spills)}")


class _Exports:
    """Spans (as JSON) written as exports, each of one source's spans, of at most
    EXPORT_BYTES (but for a single span larger)."""

    def __init__(self, file, lines: bool):
        self.file, self.lines, self.size, self.count = file, lines, 0, 0
        self.source: str | None = None
        self.spans: list[bytes] = []
        self.head = self.tail = b""

    def add(self, source: str, span: bytes) -> None:
        if self.spans and (source != self.source or self.size + len(span) + 1 > EXPORT_BYTES):
            self._flush()
        if source != self.source or not self.spans:
            self.source = source
            resource = {"attributes": key_values({"service.name": "workbench", "workbench.source": source})}
            self.head = (
                f'{{"resourceSpans":[{{"resource":{_json(resource)},"scopeSpans":[{{"scope":{_json(SCOPE)},'
                f'"spans":['.encode()
            )
            self.tail = f'],"schemaUrl":{_json(sc.SCHEMA_URL)}}}],"schemaUrl":{_json(sc.SCHEMA_URL)}}}]}}\n'.encode()
            self.size = len(self.head) + len(self.tail)
        self.spans.append(span)
        self.size += len(span) + 1

    def close(self) -> None:
        if self.spans:
            self._flush()
        if not self.lines:
            self.file.write(b"]}" if self.count else b'{"resourceSpans":[]}')

    def _flush(self) -> None:
        """One export a line (`lines`); else each source's part one of the single
        export's `resourceSpans`."""
        head, tail = self.head, self.tail
        if not self.lines:
            head = head.removeprefix(b'{"resourceSpans":[') if self.count else head
            head, tail = (b"," + head if self.count else head), tail.removesuffix(b"]}\n")
        self.file.write(head + b",".join(self.spans) + tail)
        self.spans, self.count = [], self.count + 1


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _span(d: dict, game: tuple, start: int, occurrence: int) -> dict:
    """A decision's span; its id stays the same while its file and place in it do
    (`occurrence`: the how-manieth decision at its locator), so a receiver that keeps
    spans by id takes a second export as the same spans."""
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider_of(d["model"]),
        "gen_ai.request.model": d["model"],
        "gen_ai.conversation.id": d["game_id"],
        "gen_ai.agent.name": d["agent_id"],
        "gen_ai.usage.input_tokens": d["input_tokens"],
        "gen_ai.usage.output_tokens": d["output_tokens"],
        "gen_ai.usage.cache_read.input_tokens": d["cached_tokens"],
        "gen_ai.response.model": d["response_model"],
        "error.type": "_OTHER" if d["outcome"] == "failed" else None,
        "workbench.format": d["format"],
        "workbench.turn": d["turn"],
        "workbench.action": d["action"],
        "workbench.valid": d["valid"],
        "workbench.outcome": d["outcome"],
        "workbench.rule": (d["rule"] or "invalid_decision") if d["outcome"] == "invalid" else None,
        "workbench.locator": d["locator"],
        "workbench.latency_ms": d["latency_ms"],
        "workbench.tokens": d["tokens"] if d["tokens"] != _sum(d["input_tokens"], d["output_tokens"]) else None,
    }
    span = {
        "traceId": _hex(32, *game),
        "spanId": _hex(16, d["path"], d["format"], d["locator"] or "", str(occurrence)),
        "name": f"chat {d['model']}" if d["model"] else "chat",
        "kind": 3,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + _duration_ns(d["latency_ms"], start)),
        "attributes": key_values(attributes),
    }
    if d["outcome"] == "failed":
        span["status"] = {"code": sc.STATUS_ERROR, "message": d["failure"]}
    return span


def _sum(*counts: int | None) -> int | None:
    """Input plus output tokens, as the reader adds them (None where neither is known)."""
    known = [count for count in counts if count is not None]
    return sum(known) if known else None


def _duration_ns(latency_ms: float | None, start: int) -> int:
    """A latency as a span's nanoseconds; 0 where it is unknown, not finite or would end
    the span past what a timestamp holds (`workbench.latency_ms` keeps it as it was)."""
    if latency_ms is None or not math.isfinite(latency_ms * 1e6) or latency_ms < 0:
        return 0
    duration = round(latency_ms * 1e6)
    return duration if start + duration <= INT64[1] else 0


def _hex(digits: int, *parts: str) -> str:
    """A stable id of `digits` hex digits for what `parts` name (never all zero)."""
    value = hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:digits]
    return value if set(value) != {"0"} else "1" + value[1:]


@functools.cache
def provider_of(model: str | None) -> str:
    """The conventions' provider name for a model, as genai-prices knows who serves it;
    `unknown` where it does not (the attribute is required on a chat span)."""
    if not model:
        return "unknown"
    from genai_prices import Usage, calc_price

    try:
        provider = calc_price(Usage(input_tokens=1), model_ref=model).provider.id
    except LookupError:
        return "unknown"
    return _PROVIDERS.get(provider, provider)
