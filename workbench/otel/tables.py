"""The `otel` format's tables: every span whole, every evaluation event as a score, and
the decisions of the spans that are GenAI operations."""

from __future__ import annotations

from workbench.catalog import DECISIONS
from workbench.schema import Column, Table

SPANS = Table("otel_spans", (
    Column("source_id", "BIGINT", "the file (`sources.source_id`)", required=True),
    Column("seq", "BIGINT", "the line of the file the span was written on (1 in an `*.otlp.json` file)",
           required=True),
    Column("span_index", "BIGINT", "its place among the spans of that line, from 0", required=True),
    Column("trace_id", "VARCHAR", "the span's trace (`traceId`): 32 hex digits, lower case"),
    Column("span_id", "VARCHAR", "the span's id (`spanId`): 16 hex digits, lower case"),
    Column("parent_span_id", "VARCHAR", "the parent span's id; NULL for a root span"),
    Column("name", "VARCHAR", "the span's name: `chat gpt-4o`, `execute_tool move`, ..."),
    Column("kind", "BIGINT", "SpanKind: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer"),
    Column("start_ns", "BIGINT", "start, nanoseconds since the epoch"),
    Column("end_ns", "BIGINT", "end, nanoseconds since the epoch"),
    Column("latency_ms", "DOUBLE", "end minus start; NULL for a span that does not end after it starts "
                                   "(to below the nanosecond where `workbench.latency_ms` says it)"),
    Column("status_code", "BIGINT", "0 unset, 1 ok, 2 error"),
    Column("status_message", "VARCHAR", "the status's message, where the span gives one"),
    Column("operation", "VARCHAR", "gen_ai.operation.name: a span that has one is a GenAI operation"),
    Column("provider", "VARCHAR", "gen_ai.provider.name (or the older gen_ai.system)"),
    Column("request_model", "VARCHAR", "gen_ai.request.model"),
    Column("response_model", "VARCHAR", "gen_ai.response.model"),
    Column("agent", "VARCHAR", "gen_ai.agent.name, else gen_ai.agent.id"),
    Column("tool", "VARCHAR", "gen_ai.tool.name"),
    Column("conversation_id", "VARCHAR", "gen_ai.conversation.id"),
    Column("session_id", "VARCHAR", "session.id, of the span or of its resource"),
    Column("input_tokens", "BIGINT", "gen_ai.usage.input_tokens (cached ones included)"),
    Column("output_tokens", "BIGINT", "gen_ai.usage.output_tokens"),
    Column("cached_tokens", "BIGINT", "gen_ai.usage.cache_read.input_tokens"),
    Column("tokens", "BIGINT", "input plus output tokens; the total `workbench.tokens` says where a log kept only that"),
    Column("error_type", "VARCHAR", "error.type"),
    Column("failed", "BOOLEAN", "the operation ended in an error: status ERROR, or an error.type", required=True),
    Column("valid", "BOOLEAN", "no error violation on the span", required=True),
    Column("attributes", "JSON", "every attribute, {key: value}"),
    Column("events", "JSON", "[{name, time_ns, attributes}]"),
    Column("resource", "JSON", "the resource's attributes, {key: value}"),
    Column("scope_name", "VARCHAR", "the instrumentation scope that wrote the span (its library)"),
    Column("scope_version", "VARCHAR", "that scope's version"),
), doc="One row per span of an OTLP/JSON traces file.")

SCORES = Table("otel_scores", (
    Column("source_id", "BIGINT", "the file (`sources.source_id`)", required=True),
    Column("seq", "BIGINT", "the line of the span the event is on", required=True),
    Column("trace_id", "VARCHAR", "the trace of the span evaluated"),
    Column("span_id", "VARCHAR", "the span evaluated"),
    Column("name", "VARCHAR", "gen_ai.evaluation.name"),
    Column("score_value", "DOUBLE", "gen_ai.evaluation.score.value"),
    Column("score_label", "VARCHAR", "gen_ai.evaluation.score.label"),
    Column("explanation", "VARCHAR", "gen_ai.evaluation.explanation"),
    Column("response_id", "VARCHAR", "gen_ai.response.id"),
    Column("time_ns", "BIGINT", "when the event happened, nanoseconds since the epoch"),
), doc="One row per gen_ai.evaluation.result event of a span.")

TABLES = (SPANS, SCORES)

# A span's game: its conversation, else one of its trace's (the agent's span often carries
# it, its model calls not), else the session, else the trace. Its turn: its place among
# its game's GenAI spans in time. Its agent and model: its own, else its parent's (a
# tool's span names no model; the model call it is a child of does).
DERIVE_DECISIONS = DECISIONS.insert("""
WITH file AS (
    SELECT * FROM otel_spans WHERE source_id = $source_id
), traces AS (
    SELECT trace_id, arg_min(conversation_id, (start_ns, seq, span_index))
                         FILTER (WHERE conversation_id IS NOT NULL) AS conversation_id
    FROM file GROUP BY trace_id
), parents AS (
    SELECT span_id, trace_id, any_value(agent) AS agent,
           any_value(coalesce(response_model, request_model)) AS model
    FROM file GROUP BY span_id, trace_id
), spans AS (
    SELECT s.*, coalesce(s.conversation_id, t.conversation_id, s.session_id, s.trace_id) AS game,
           p.agent AS parent_agent, p.model AS parent_model
    FROM file s LEFT JOIN traces t ON t.trace_id = s.trace_id
    LEFT JOIN parents p ON p.span_id = s.parent_span_id AND p.trace_id = s.trace_id
    WHERE s.operation IS NOT NULL
    -- a span written twice (an exporter that sent a batch again) is one decision
    QUALIFY s.span_id IS NULL OR s.trace_id IS NULL
         OR row_number() OVER (PARTITION BY s.trace_id, s.span_id ORDER BY s.seq, s.span_index) = 1
)
SELECT source_id, 'otel' AS format, game AS game_id,
       row_number() OVER (PARTITION BY game ORDER BY start_ns, seq, span_index) AS turn,
       coalesce(agent, parent_agent) AS agent_id, coalesce(response_model, request_model, parent_model) AS model,
       coalesce(tool, operation) AS action, NOT failed AS valid,
       latency_ms,
       tokens, coalesce('span ' || span_id, 'line ' || seq) AS locator, input_tokens, output_tokens, cached_tokens
FROM spans
""")
