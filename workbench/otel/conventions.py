"""The contract of the `otel` format: the OpenTelemetry semantic conventions for
generative AI, version 1.41.0 (2026-04-27), the last release of the conventions'
repository that defines them (from 1.42.0 they live in `semantic-conventions-genai`),
and the attributes of other namespaces those spans use. Each attribute's type is the
registry's; which ones a span must carry depends on its `gen_ai.operation.name`."""

from __future__ import annotations

VERSION = "1.41.0"
SCHEMA_URL = f"https://opentelemetry.io/schemas/{VERSION}"

# Attribute -> type: string, int, double, boolean, string[] or any (model/gen-ai/registry.yaml).
GEN_AI = {
    **dict.fromkeys(
        (
            "gen_ai.provider.name",
            "gen_ai.operation.name",
            "gen_ai.request.model",
            "gen_ai.response.id",
            "gen_ai.response.model",
            "gen_ai.token.type",
            "gen_ai.conversation.id",
            "gen_ai.agent.id",
            "gen_ai.agent.name",
            "gen_ai.agent.description",
            "gen_ai.agent.version",
            "gen_ai.tool.name",
            "gen_ai.tool.call.id",
            "gen_ai.tool.description",
            "gen_ai.tool.type",
            "gen_ai.data_source.id",
            "gen_ai.output.type",
            "gen_ai.retrieval.query.text",
            "gen_ai.evaluation.name",
            "gen_ai.evaluation.score.label",
            "gen_ai.evaluation.explanation",
            "gen_ai.prompt.name",
            "gen_ai.workflow.name",
        ),
        "string",
    ),
    **dict.fromkeys(
        (
            "gen_ai.request.max_tokens",
            "gen_ai.request.choice.count",
            "gen_ai.request.seed",
            "gen_ai.usage.input_tokens",
            "gen_ai.usage.cache_read.input_tokens",
            "gen_ai.usage.cache_creation.input_tokens",
            "gen_ai.usage.output_tokens",
            "gen_ai.usage.reasoning.output_tokens",
            "gen_ai.embeddings.dimension.count",
        ),
        "int",
    ),
    **dict.fromkeys(
        (
            "gen_ai.request.temperature",
            "gen_ai.request.top_p",
            "gen_ai.request.top_k",
            "gen_ai.request.frequency_penalty",
            "gen_ai.request.presence_penalty",
            "gen_ai.response.time_to_first_chunk",
            "gen_ai.evaluation.score.value",
        ),
        "double",
    ),
    "gen_ai.request.stream": "boolean",
    **dict.fromkeys(
        ("gen_ai.request.stop_sequences", "gen_ai.request.encoding_formats", "gen_ai.response.finish_reasons"),
        "string[]",
    ),
    **dict.fromkeys(
        (
            "gen_ai.tool.call.arguments",
            "gen_ai.tool.call.result",
            "gen_ai.tool.definitions",
            "gen_ai.retrieval.documents",
            "gen_ai.system_instructions",
            "gen_ai.input.messages",
            "gen_ai.output.messages",
        ),
        "any",
    ),
}
# Attributes of other namespaces that GenAI spans carry (error, server, session registries).
OTHER = {"error.type": "string", "server.address": "string", "server.port": "int", "session.id": "string"}
TYPES = {**GEN_AI, **OTHER}

# Names earlier releases used (model/gen-ai/deprecated/registry-deprecated.yaml), still
# written by instrumentations that keep the older conventions by default: read in place
# of their replacement, and reported as drift.
DEPRECATED = {
    "gen_ai.system": "gen_ai.provider.name",
    "gen_ai.usage.prompt_tokens": "gen_ai.usage.input_tokens",
    "gen_ai.usage.completion_tokens": "gen_ai.usage.output_tokens",
    "gen_ai.openai.request.seed": "gen_ai.request.seed",
    "gen_ai.openai.request.response_format": "gen_ai.output.type",
    "gen_ai.openai.request.service_tier": "openai.request.service_tier",
    "gen_ai.openai.response.service_tier": "openai.response.service_tier",
    "gen_ai.openai.response.system_fingerprint": "openai.response.system_fingerprint",
    "gen_ai.prompt": None,
    "gen_ai.completion": None,
}

INFERENCE = ("chat", "generate_content", "text_completion")
# Operation -> the attributes its span must carry (model/gen-ai/spans.yaml); every GenAI
# span carries `gen_ai.operation.name`, which makes it one.
REQUIRED = {
    **dict.fromkeys(INFERENCE, ("gen_ai.provider.name",)),
    "embeddings": ("gen_ai.provider.name",),
    "create_agent": ("gen_ai.provider.name",),
    "invoke_agent": ("gen_ai.provider.name",),
    "execute_tool": ("gen_ai.tool.name",),
}
OPERATIONS = (*INFERENCE, "embeddings", "retrieval", "create_agent", "invoke_agent", "execute_tool", "invoke_workflow")

# The evaluation event (model/gen-ai/events.yaml). The conventions define it as a log
# record; the workbench reads it where a traces file holds it, as an event of the span it
# evaluates.
EVALUATION = "gen_ai.evaluation.result"
EVALUATION_REQUIRED = ("gen_ai.evaluation.name",)

# Status.code and SpanKind, as OTLP/JSON writes them (integers), and the names some
# emitters write instead.
STATUS_ERROR = 2
STATUS_NAMES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}
KIND_NAMES = {
    "SPAN_KIND_UNSPECIFIED": 0,
    "SPAN_KIND_INTERNAL": 1,
    "SPAN_KIND_SERVER": 2,
    "SPAN_KIND_CLIENT": 3,
    "SPAN_KIND_PRODUCER": 4,
    "SPAN_KIND_CONSUMER": 5,
}
