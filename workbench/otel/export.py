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
writes; `FILE.otlp.json` a single export (any other `.jsonl` or name likewise, but the
ingest recognises those two)."""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
from pathlib import Path

from workbench import catalog
from workbench.errors import WorkbenchError
from workbench.otel import conventions as sc
from workbench.otel.otlp import key_values
from workbench.paths import text_of, writable_folder
from workbench.schema import INT64

SCOPE = {"name": "workbench", "version": "0.1.0"}
GAP_NS = 1_000_000  # between one decision's span and the next one's in a game

DECISIONS = """
SELECT s.path, d.format, d.game_id, d.turn, d.agent_id, d.model, d.response_model, d.action, d.valid, d.outcome,
       d.failure, d.latency_ms, d.tokens,
       d.input_tokens, d.output_tokens, d.cached_tokens, d.locator,
       epoch_ns(s.ingested_at) AS ingested_ns,
       (SELECT min(v.rule) FROM violations v WHERE v.source_id = d.source_id AND v.locator = d.locator
                                              AND v.severity = 'error') AS rule
FROM decisions d JOIN sources s USING (source_id)
ORDER BY s.path, d.format, d.game_id NULLS FIRST, d.turn NULLS FIRST, d.locator
"""

# genai-prices' provider ids (it knows which provider serves a model) as the conventions name them.
_PROVIDERS = {"google": "gcp.gemini", "mistral": "mistral_ai", "x-ai": "x_ai", "xai": "x_ai",
              "aws": "aws.bedrock", "bedrock": "aws.bedrock", "azure": "azure.ai.openai"}


def export_otlp(out: str | Path, db=None, overwrite: bool = False) -> int:
    """Write every decision of `db` as OTLP/JSON spans to `out` (an existing file only
    with `overwrite`); returns how many."""
    out = Path(out)
    if out.is_dir():
        raise WorkbenchError(f"cannot export to {text_of(out)}: it is a folder; name a file (e.g. traces.otlp.jsonl)")
    if out.exists() and not overwrite:
        raise WorkbenchError(f"{text_of(out)} exists; choose another file or pass --overwrite")
    writable_folder(out)
    con = catalog.connect(db, read_only=True)
    try:
        rows = con.execute(DECISIONS).fetchall()
        names = [d[0] for d in con.description]
    finally:
        con.close()
    exports = _exports([dict(zip(names, row)) for row in rows])
    partial = out.with_name(f".{out.name}.partial-{os.getpid()}")
    try:
        with partial.open("w", encoding="utf-8") as file:
            if out.suffix == ".jsonl":
                file.writelines(json.dumps(export, ensure_ascii=False, separators=(",", ":")) + "\n"
                                for export in exports)
            else:
                json.dump({"resourceSpans": [r for e in exports for r in e["resourceSpans"]]}, file,
                          ensure_ascii=False, separators=(",", ":"))
        partial.replace(out)
    except OSError as exc:
        raise WorkbenchError(f"cannot export to {text_of(out)}: {exc.strerror or exc}") from None
    finally:
        partial.unlink(missing_ok=True)
    return len(rows)


def _exports(decisions: list[dict]) -> list[dict]:
    """One export per source file, its decisions as spans; the file named relative to
    the folder the files have in common (a trace shared elsewhere says nothing of the
    folders of the machine it came from)."""
    import polars as pl

    from workbench.tables import relative_paths

    paths = list(dict.fromkeys(d["path"] for d in decisions))
    shown = dict(zip(paths, relative_paths(pl.DataFrame({"path": paths}, schema={"path": pl.String}))[0]["path"]))
    by_file: dict[str, list[dict]] = {}
    clock: dict[tuple, int] = {}  # (format, game) -> where its next span starts
    seen: dict[tuple, int] = {}  # (file, format, locator) -> decisions there so far
    for decision in decisions:
        game = (decision["format"], decision["game_id"] if decision["game_id"] is not None else decision["path"])
        start = clock.get(game, decision["ingested_ns"])
        place = (decision["path"], decision["format"], decision["locator"] or "")
        seen[place] = seen.get(place, -1) + 1
        by_file.setdefault(decision["path"], []).append(_span(decision, game, start, seen[place]))
        clock[game] = int(by_file[decision["path"]][-1]["endTimeUnixNano"]) + GAP_NS
    return [{"resourceSpans": [{
        "resource": {"attributes": key_values({"service.name": "workbench", "workbench.source": shown[path]})},
        "scopeSpans": [{"scope": SCOPE, "spans": spans, "schemaUrl": sc.SCHEMA_URL}],
        "schemaUrl": sc.SCHEMA_URL}]} for path, spans in by_file.items()]


def _span(d: dict, game: tuple, start: int, occurrence: int) -> dict:
    """A decision's span; its id stays the same while its file and place in it do
    (`occurrence`: the how-manieth decision at its locator), so a receiver that keeps
    spans by id takes a second export as the same spans."""
    attributes = {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": provider_of(d["model"]),
        "gen_ai.request.model": d["model"], "gen_ai.conversation.id": d["game_id"], "gen_ai.agent.name": d["agent_id"],
        "gen_ai.usage.input_tokens": d["input_tokens"], "gen_ai.usage.output_tokens": d["output_tokens"],
        "gen_ai.usage.cache_read.input_tokens": d["cached_tokens"], "gen_ai.response.model": d["response_model"],
        "error.type": "_OTHER" if d["outcome"] == "failed" else None,
        "workbench.format": d["format"], "workbench.turn": d["turn"], "workbench.action": d["action"],
        "workbench.valid": d["valid"], "workbench.outcome": d["outcome"],
        "workbench.rule": (d["rule"] or "invalid_decision") if d["outcome"] == "invalid" else None,
        "workbench.locator": d["locator"], "workbench.latency_ms": d["latency_ms"],
        "workbench.tokens": d["tokens"] if d["tokens"] != _sum(d["input_tokens"], d["output_tokens"]) else None,
    }
    span = {
        "traceId": _hex(32, *game), "spanId": _hex(16, d["path"], d["format"], d["locator"] or "", str(occurrence)),
        "name": f"chat {d['model']}" if d["model"] else "chat", "kind": 3,
        "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + _duration_ns(d["latency_ms"], start)),
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
