"""What instrumentations write in place of the GenAI conventions, read as the GenAI
attribute it stands for, where a span does not carry that attribute itself.

- OpenInference (Arize; `openinference-instrumentation-*`) writes no `gen_ai.*`: a span's
  kind is `openinference.span.kind` (LLM, AGENT, TOOL, ...), its model `llm.model_name`
  (the model that answered) and `llm.invocation_parameters` (a JSON string holding the
  model asked for), its tokens `llm.token_count.*`, its finish reason `llm.finish_reason`,
  its game `session.id`, its agent `agent.name`, its tool `tool.name`.
- Traceloop (OpenLLMetry, and its LangChain instrumentation) names the game and the
  player in association properties on every span (`traceloop.association.properties.
  session_id` or `.thread_id`, `.agent`) and a span's role in `traceloop.span.kind`.
- LiteLLM and Traceloop mark a streamed call `llm.is_streaming` / `gen_ai.is_streaming`.

Each is a reading of the instrumentation's own attributes, reported as nothing: the
attributes are checked as they are (an unknown `gen_ai.*` name is drift), and only the
GenAI view of a span is filled in.
"""

from __future__ import annotations

import json
from typing import Any

from workbench.otel import otlp

OPENINFERENCE_KINDS = {
    "LLM": "chat",
    "AGENT": "invoke_agent",
    "TOOL": "execute_tool",
    "EMBEDDING": "embeddings",
    "RETRIEVER": "retrieval",
}
TRACELOOP_KINDS = {"workflow": "invoke_workflow", "agent": "invoke_agent", "tool": "execute_tool"}
ASSOCIATION = "traceloop.association.properties."

# GenAI attribute <- the attributes that stand for it, in order of preference.
SAME_VALUE = {
    "gen_ai.response.model": ("llm.model_name",),
    "gen_ai.usage.input_tokens": ("llm.token_count.prompt",),
    "gen_ai.usage.output_tokens": ("llm.token_count.completion",),
    "gen_ai.usage.cache_read.input_tokens": ("llm.token_count.prompt_details.cache_read",),
    "gen_ai.agent.name": ("agent.name", ASSOCIATION + "agent"),
    "gen_ai.tool.name": ("tool.name",),
    "gen_ai.provider.name": ("llm.provider", "llm.system"),
    "gen_ai.conversation.id": (ASSOCIATION + "session_id", ASSOCIATION + "thread_id", ASSOCIATION + "conversation_id"),
}


def genai_view(attributes: dict, kinds: dict) -> tuple[dict, dict]:
    """`attributes` (and their kinds) with each GenAI attribute the span lacks read from
    what its instrumentation wrote instead (see the module's docstring)."""
    added, added_kinds = {}, {}

    def put(key: str, value: Any, kind: str) -> None:
        if key not in attributes and key not in added and value is not None:
            added[key], added_kinds[key] = value, kind

    for key, sources in SAME_VALUE.items():
        for source in sources:
            if source in attributes and kinds.get(source) != otlp.BAD:
                put(key, attributes[source], kinds[source])
                break
    kind = attributes.get("openinference.span.kind")
    if isinstance(kind, str):
        put("gen_ai.operation.name", OPENINFERENCE_KINDS.get(kind.upper()), otlp.STRING)
    kind = attributes.get("traceloop.span.kind")
    if isinstance(kind, str):
        put("gen_ai.operation.name", TRACELOOP_KINDS.get(kind), otlp.STRING)
    if attributes.get("openinference.span.kind") == "LLM":
        asked = _json_object(attributes.get("llm.invocation_parameters")).get("model")
        put("gen_ai.request.model", asked if isinstance(asked, str) else attributes.get("llm.model_name"), otlp.STRING)
    reason = attributes.get("llm.finish_reason")
    if isinstance(reason, str):
        put("gen_ai.response.finish_reasons", [reason], otlp.ARRAY)
    for source in ("gen_ai.is_streaming", "llm.is_streaming"):
        if source in attributes:
            put("gen_ai.request.stream", _truth(attributes[source]), otlp.BOOLEAN)
    if (
        attributes.get("openinference.span.kind") == "LLM"
        and _json_object(attributes.get("llm.invocation_parameters")).get("stream") is True
    ):
        put("gen_ai.request.stream", True, otlp.BOOLEAN)
    return {**attributes, **added}, {**kinds, **added_kinds}


def _json_object(text: Any) -> dict:
    """The JSON object a string holds, else {}."""
    if not isinstance(text, str):
        return text if isinstance(text, dict) else {}
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _truth(value: Any) -> bool | None:
    """A boolean, as written or as the text LiteLLM writes (`'False'`)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return None
