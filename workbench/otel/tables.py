"""The `otel` format's tables: every span whole, every evaluation event as a score, and
the decisions of the spans that are GenAI operations."""

from __future__ import annotations

from workbench.catalog import DECISIONS
from workbench.otel.conventions import INFERENCE
from workbench.schema import Column, Table

SPANS = Table(
    "otel_spans",
    (
        Column("source_id", "BIGINT", "the file (`sources.source_id`)", required=True),
        Column(
            "seq", "BIGINT", "the line of the file the span was written on (1 in an `*.otlp.json` file)", required=True
        ),
        Column("span_index", "BIGINT", "its place among the spans of that line, from 0", required=True),
        Column("trace_id", "VARCHAR", "the span's trace (`traceId`): 32 hex digits, lower case"),
        Column("span_id", "VARCHAR", "the span's id (`spanId`): 16 hex digits, lower case"),
        Column("parent_span_id", "VARCHAR", "the parent span's id; NULL for a root span"),
        Column("name", "VARCHAR", "the span's name: `chat gpt-4o`, `execute_tool move`, ..."),
        Column("kind", "BIGINT", "SpanKind: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer"),
        Column("start_ns", "BIGINT", "start, nanoseconds since the epoch"),
        Column("end_ns", "BIGINT", "end, nanoseconds since the epoch"),
        Column(
            "latency_ms",
            "DOUBLE",
            "end minus start; NULL for a span that does not end after it starts "
            "(to below the nanosecond where `workbench.latency_ms` says it)",
        ),
        Column("status_code", "BIGINT", "0 unset, 1 ok, 2 error"),
        Column("status_message", "VARCHAR", "the status's message, where the span gives one"),
        Column(
            "operation",
            "VARCHAR",
            "gen_ai.operation.name (or what OpenInference's or Traceloop's span kind stands "
            "for): a span that has one is a GenAI operation; an inference (chat, "
            "text_completion, generate_content) is a decision",
        ),
        Column("provider", "VARCHAR", "gen_ai.provider.name (or the older gen_ai.system)"),
        Column("request_model", "VARCHAR", "gen_ai.request.model"),
        Column("response_model", "VARCHAR", "gen_ai.response.model"),
        Column("agent", "VARCHAR", "gen_ai.agent.name, else gen_ai.agent.id"),
        Column("tool", "VARCHAR", "gen_ai.tool.name"),
        Column("tool_call_id", "VARCHAR", "gen_ai.tool.call.id: the call an execute_tool span ran"),
        Column("conversation_id", "VARCHAR", "gen_ai.conversation.id"),
        Column("session_id", "VARCHAR", "session.id, of the span or of its resource"),
        Column("input_tokens", "BIGINT", "gen_ai.usage.input_tokens (cached ones included)"),
        Column("output_tokens", "BIGINT", "gen_ai.usage.output_tokens"),
        Column("cached_tokens", "BIGINT", "gen_ai.usage.cache_read.input_tokens"),
        Column(
            "tokens", "BIGINT", "input plus output tokens; the total `workbench.tokens` says where a log kept only that"
        ),
        Column("error_type", "VARCHAR", "error.type"),
        Column(
            "failed",
            "BOOLEAN",
            "the operation ended in an error: status ERROR, an error.type, or an exception "
            "event on a span whose status is not OK",
            required=True,
        ),
        Column(
            "failure",
            "VARCHAR",
            "a failed span's reason: its status message, else its exception's, else its "
            "error.type (with the HTTP status where the span has one)",
        ),
        Column(
            "finish_reasons",
            "VARCHAR[]",
            "gen_ai.response.finish_reasons (an array written as JSON text read as "
            "the array; OpenInference's llm.finish_reason)",
        ),
        Column("refusal", "VARCHAR", "an inference's refusal: its text, or the finish reason that says it"),
        Column(
            "bad_arguments",
            "VARCHAR",
            "why an inference's tool call cannot be run: arguments that are not JSON, or "
            "that break the tool's declared parameters",
        ),
        Column(
            "exported_rule",
            "VARCHAR",
            "the rule `workbench export --otlp` wrote for a decision it had found invalid (`workbench.rule`)",
        ),
        Column("tool_call_ids", "VARCHAR[]", "the ids of the tool calls an inference answered with"),
        Column(
            "answer_recorded",
            "BOOLEAN",
            "the span records what the model answered (its output messages, or the provider's raw response)",
        ),
        Column(
            "tool_rule",
            "VARCHAR",
            "a failed execute_tool span's rule, a finding on the inference that called it: "
            "tool_arguments (its arguments could not be read) or tool_failed (the tool refused "
            "the call: an illegal move), errors; tool_unavailable (the tool's own service "
            "failed: a timeout), a warning, not the model's move",
        ),
        Column("streamed", "BOOLEAN", "gen_ai.request.stream (or llm.is_streaming, gen_ai.is_streaming)"),
        Column("valid", "BOOLEAN", "no error violation on the span", required=True),
        Column("attributes", "JSON", "every attribute, {key: value}"),
        Column("events", "JSON", "[{name, time_ns, attributes}]"),
        Column("resource", "JSON", "the resource's attributes, {key: value}"),
        Column("scope_name", "VARCHAR", "the instrumentation scope that wrote the span (its library)"),
        Column("scope_version", "VARCHAR", "that scope's version"),
    ),
    doc="One row per span of an OTLP/JSON traces file.",
    added=(
        "tool_call_id",
        "failure",
        "finish_reasons",
        "refusal",
        "bad_arguments",
        "tool_call_ids",
        "tool_rule",
        "streamed",
        "answer_recorded",
        "exported_rule",
    ),
)

SCORES = Table(
    "otel_scores",
    (
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
    ),
    doc="One row per gen_ai.evaluation.result event of a span.",
)

TABLES = (SPANS, SCORES)

_INFERENCE = ", ".join(f"'{operation}'" for operation in INFERENCE)

# The file's spans, a span written twice (an exporter that sent a batch again) once; its
# inference calls; and each failed tool run charged to the inference that called it (by
# tool-call id, else the latest inference of its trace that started before it).
_CALLS = f"""
file AS (
    SELECT * FROM otel_spans WHERE source_id = $source_id
    QUALIFY span_id IS NULL OR trace_id IS NULL
         OR row_number() OVER (PARTITION BY trace_id, span_id ORDER BY seq, span_index) = 1
),
calls AS (SELECT * FROM file WHERE operation IN ({_INFERENCE})),
tool_errors AS (SELECT * FROM file WHERE operation = 'execute_tool' AND failed),
by_id AS (
    SELECT e.span_id AS tool_span, any_value(c.span_id) AS decision FROM tool_errors e
    JOIN calls c ON c.trace_id = e.trace_id AND list_contains(c.tool_call_ids, e.tool_call_id) GROUP BY e.span_id
),
by_time AS (
    SELECT e.span_id AS tool_span, c.span_id AS decision FROM (SELECT * FROM tool_errors ANTI JOIN by_id
                                                               ON by_id.tool_span = tool_errors.span_id) e
    ASOF JOIN calls c ON c.trace_id = e.trace_id AND e.start_ns >= c.start_ns
),
tool_failures AS (
    -- a call whose own arguments are already found unreadable is not charged twice for them
    SELECT a.decision, e.span_id AS tool_span, e.tool, e.tool_rule, e.failure
    FROM (SELECT * FROM by_id UNION ALL SELECT * FROM by_time) a JOIN tool_errors e ON e.span_id = a.tool_span
    JOIN calls c ON c.span_id = a.decision
    WHERE c.bad_arguments IS NULL OR e.tool_rule <> 'tool_arguments'
)"""

# The failed tool runs, as findings on the inference that called them.
TOOL_FAILURES = f"""
WITH {_CALLS}
SELECT decision, tool_span, tool, tool_rule, failure FROM tool_failures ORDER BY decision, tool_span
"""

# One decision per inference call. A streamed call that an instrumentation wrote twice
# (logfire: the request's span, then a zero-length span holding the whole response) is
# one decision, located at the span with the answer, timed from the request's start.
# Its game: the nearest conversation up its ancestors, else one of its trace's, else its
# session, else the one named game whose spans' time holds it (a streamed call LiteLLM
# wrote outside its parent), else its trace. Its agent: its own, else its nearest
# ancestor's. Its model: the one asked for (its own, else its nearest ancestor's); the
# one that answered, where it differs, is `response_model`. Its turn: its place among
# its game's decisions in time. Not valid: a refusal, tool-call arguments that cannot be
# run (its own, or as a tool run of its found them), or a tool run the tool refused (an
# illegal move); a tool whose own service failed (a timeout) is a warning, not the
# model's move. A failed call is `failed` (catalog.SET_OUTCOMES).
DERIVE_DECISIONS = DECISIONS.insert(f"""
WITH RECURSIVE {_CALLS},
tails AS (
    SELECT t.span_id AS tail, h.span_id AS head, h.start_ns AS head_start FROM calls t
    ASOF JOIN calls h ON h.trace_id = t.trace_id AND h.parent_span_id IS NOT DISTINCT FROM t.parent_span_id
                     AND h.request_model IS NOT DISTINCT FROM t.request_model AND t.start_ns > h.start_ns
    -- two children of one span: the request's, which holds no answer (no finish reason, no
    -- tokens, no failure), then a zero-length one that holds it
    WHERE t.parent_span_id IS NOT NULL AND t.start_ns = t.end_ns AND h.end_ns <= t.start_ns
      AND (t.finish_reasons IS NOT NULL OR t.output_tokens IS NOT NULL OR t.answer_recorded)
      AND NOT h.failed AND h.finish_reasons IS NULL AND h.input_tokens IS NULL AND h.output_tokens IS NULL
      AND NOT h.answer_recorded
),
decided AS (
    SELECT c.*, t.head_start FROM calls c LEFT JOIN tails t ON t.tail = c.span_id
    WHERE c.span_id IS NULL OR c.span_id NOT IN (SELECT head FROM tails)
),
up(span_id, trace_id, ancestor, depth) AS (
    SELECT span_id, trace_id, parent_span_id, 1 FROM decided WHERE parent_span_id IS NOT NULL
    UNION ALL
    SELECT u.span_id, u.trace_id, f.parent_span_id, u.depth + 1
    FROM up u JOIN file f ON f.span_id = u.ancestor AND f.trace_id = u.trace_id
    WHERE f.parent_span_id IS NOT NULL AND u.depth < 64
),
inherited AS (
    SELECT u.span_id, u.trace_id,
           arg_min(f.agent, u.depth) FILTER (WHERE f.agent IS NOT NULL) AS agent,
           arg_min(f.conversation_id, u.depth) FILTER (WHERE f.conversation_id IS NOT NULL) AS conversation_id,
           arg_min(f.request_model, u.depth) FILTER (WHERE f.request_model IS NOT NULL) AS model
    FROM up u JOIN file f ON f.span_id = u.ancestor AND f.trace_id = u.trace_id GROUP BY ALL
),
traces AS (
    SELECT trace_id, arg_min(conversation_id, (start_ns, seq, span_index))
                         FILTER (WHERE conversation_id IS NOT NULL) AS conversation_id
    FROM file GROUP BY trace_id
),
named AS (
    SELECT coalesce(conversation_id, session_id) AS game, min(start_ns) AS first_ns, max(end_ns) AS last_ns
    FROM file WHERE coalesce(conversation_id, session_id) IS NOT NULL GROUP BY ALL
),
placed AS (
    SELECT d.*, coalesce(d.conversation_id, i.conversation_id, t.conversation_id, d.session_id,
                         (SELECT CASE WHEN count(*) = 1 THEN any_value(n.game) END FROM named n
                          WHERE d.start_ns >= n.first_ns AND d.end_ns <= n.last_ns),
                         d.trace_id) AS game,
           coalesce(d.agent, i.agent) AS who, coalesce(d.request_model, i.model, d.response_model) AS asked,
           NOT EXISTS (SELECT 1 FROM tool_failures f WHERE f.decision = d.span_id AND f.tool_rule <> 'tool_unavailable')
             AS tools_ran
    FROM decided d LEFT JOIN inherited i ON i.span_id = d.span_id AND i.trace_id = d.trace_id
    LEFT JOIN traces t ON t.trace_id = d.trace_id
)
SELECT source_id, 'otel' AS format, game AS game_id,
       row_number() OVER (PARTITION BY game ORDER BY coalesce(head_start, start_ns), seq, span_index) AS turn,
       who AS agent_id, asked AS model,
       CASE WHEN failed THEN NULL WHEN response_model IS DISTINCT FROM asked THEN response_model END AS response_model,
       operation || coalesce(': ' || nullif(array_to_string(finish_reasons, ' '), ''), '') AS action,
       refusal IS NULL AND bad_arguments IS NULL AND exported_rule IS NULL AND tools_ran AS valid,
       CASE WHEN failed THEN coalesce(failure, 'an error, with no words') END AS failure,
       CASE WHEN head_start IS NOT NULL AND end_ns >= head_start THEN (end_ns - head_start) / 1e6 ELSE latency_ms END
         AS latency_ms,
       tokens, coalesce('span ' || span_id, 'line ' || seq) AS locator, input_tokens, output_tokens, cached_tokens
FROM placed
""")
