"""A file's decisions, derived once its spans are stored: a span written twice said once,
the tool failures charged to the calls that asked for them, the decisions themselves
(`tables.DERIVE_DECISIONS`), and what the file's spans lack to be decisions."""

from __future__ import annotations

from workbench.formats import LoadContext
from workbench.otel import answers
from workbench.otel import conventions as sc
from workbench.otel.tables import DERIVE_DECISIONS, TOOL_FAILURES
from workbench.violation import Violation


def derive(ctx: LoadContext) -> None:
    """After the file's lines: a span written twice (an exporter that sent a batch again)
    said once, and the file's decisions derived again."""
    twice = ctx.con.execute(
        "SELECT trace_id, span_id, list(seq ORDER BY seq, span_index) FROM otel_spans "
        "WHERE source_id = ? AND span_id IS NOT NULL AND trace_id IS NOT NULL GROUP BY ALL HAVING count(*) > 1 "
        "ORDER BY min(seq), span_id",
        [ctx.source_id],
    ).fetchall()
    ctx.add_file_findings(
        [
            Violation(
                f"span {span_id}",
                "warning",
                "duplicate_span",
                "spanId",
                f"span {span_id} of trace {trace_id} is written {len(lines)} times (line {', '.join(map(str, lines))}): "
                f"one decision, as written first",
            )
            for trace_id, span_id, lines in twice
        ]
    )
    ctx.add_file_findings(
        [
            Violation(
                f"span {decision}",
                answers.TOOL_RULES[rule],
                rule,
                f"(execute_tool span {tool_span})",
                f"the tool {tool or '(unnamed)'} this call asked for failed: {failure}",
            )
            for decision, tool_span, tool, rule, failure in ctx.con.execute(
                TOOL_FAILURES, {"source_id": ctx.source_id}
            ).fetchall()
            if decision is not None
        ]
    )
    ctx.con.execute(DERIVE_DECISIONS, {"source_id": ctx.source_id})
    ctx.add_file_findings(_what_decisions_lack(ctx.con, ctx.source_id))


# LiteLLM's OpenTelemetry callback, by default, writes a call's GenAI attributes onto the
# span active when the call began (often ended by the time it writes, so they are lost),
# and the provider's raw response on a `raw_gen_ai_request` child (`llm.openai.*`).
RAW_CALLS_ONLY = f"""
SELECT count(*) FROM otel_spans r
WHERE r.source_id = $source_id AND r.name = 'raw_gen_ai_request' AND json_exists(r.attributes, '$."llm.openai.choices"')
  AND NOT EXISTS (SELECT 1 FROM otel_spans p WHERE p.source_id = r.source_id AND p.trace_id = r.trace_id
                  AND p.span_id = r.parent_span_id AND p.operation IN ({", ".join(repr(o) for o in sc.INFERENCE)}))
"""


def _raw_calls_only(con, source_id: int) -> list[Violation]:
    """LiteLLM calls recorded only as raw responses: one line naming the setting that
    gives each call a GenAI span."""
    raw = con.execute(RAW_CALLS_ONLY, {"source_id": source_id}).fetchall()[0][0]
    return (
        [
            Violation(
                "file",
                "warning",
                "raw_calls_only",
                "(file)",
                f"{raw} model calls are recorded only as LiteLLM's raw_gen_ai_request spans (llm.openai.*), "
                f"with no GenAI span of their own: they are no decisions here. Run LiteLLM with "
                f"USE_OTEL_LITELLM_REQUEST_SPAN=true for a litellm_request span per call",
            )
        ]
        if raw
        else []
    )


def _what_decisions_lack(con, source_id: int) -> list[Violation]:
    """A file whose spans hold no inference call says so (none is a decision), and one
    whose calls answered with tool calls it does not record says they cannot be checked."""
    spans, inference, operations, others = con.execute(
        f"""
        SELECT count(*), count(*) FILTER (WHERE operation IN ({", ".join(repr(o) for o in sc.INFERENCE)})),
               list(DISTINCT operation ORDER BY operation) FILTER (WHERE operation IS NOT NULL),
               list(DISTINCT name ORDER BY name)[:5]
        FROM otel_spans WHERE source_id = ?""",
        [source_id],
    ).fetchall()[0]
    unrecorded = con.execute(
        "SELECT count(*) FROM decisions d JOIN otel_spans s ON s.source_id = d.source_id "
        "AND d.locator = 'span ' || s.span_id WHERE d.source_id = ? AND d.failure IS NULL "
        "AND NOT s.answer_recorded AND list_has_any(s.finish_reasons, ['tool_calls', 'tool_call'])",
        [source_id],
    ).fetchall()[0][0]
    found = _raw_calls_only(con, source_id)
    if inference:
        return found + (
            []
            if not unrecorded
            else [
                Violation(
                    "file",
                    "info",
                    "answers_not_recorded",
                    "(file)",
                    f"{unrecorded} inference spans finished with tool calls but record no answer (no gen_ai.output.messages): "
                    f"their tool calls' arguments cannot be checked. An instrumentation that writes message content "
                    f"to log records (opentelemetry-instrumentation-openai-v2 by default) writes it on spans with "
                    f"OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental",
                )
            ]
        )
    if not spans:
        return []
    what = (
        f"GenAI operations {', '.join(operations)} but no inference"
        if operations
        else f"no GenAI operation (span names: {', '.join(others)})"
    )
    return found + [
        Violation(
            "file",
            "warning",
            "no_decisions",
            "(file)",
            f"{spans} spans, {what}: no decision. A decision is an inference span: gen_ai.operation.name "
            f"{', '.join(sc.INFERENCE)} (or OpenInference's span kind LLM)",
        )
    ]
