"""What a span says its model call answered, and what other instrumentations' attributes
stand for in the GenAI conventions, read one attribute set at a time. The attribute
sets are the shapes the real instrumentations wrote (tests/otel/emitters), cut down by
hand; the expected values are read off them here."""

import pytest

from workbench.otel import otlp
from workbench.otel.answers import Answer, ToolCall, answer_of, failure_of, finish_reasons, recorded, tool_rule
from workbench.otel.dialects import genai_view

PLACE = {
    "type": "object",
    "properties": {"square": {"type": "integer", "minimum": 0, "maximum": 8}},
    "required": ["square"],
    "additionalProperties": False,
}


def kinds(attributes: dict) -> dict:
    return {key: otlp.value_of(_any(value))[1] for key, value in attributes.items()}


def _any(value):
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, list):
        return {"arrayValue": {"values": [_any(item) for item in value]}}
    return {"stringValue": value}


def view(attributes: dict) -> dict:
    return genai_view(attributes, kinds(attributes))[0]


# --- what other instrumentations' attributes stand for -------------------------------------


def test_openinference_reads_as_the_genai_conventions():
    # openinference-instrumentation-openai 0.1.66: an LLM span
    got = view(
        {
            "openinference.span.kind": "LLM",
            "llm.model_name": "gpt-4o-mini-2024-07-18",
            "llm.invocation_parameters": '{"model": "gpt-4o-mini", "stream": true}',
            "llm.token_count.prompt": 106,
            "llm.token_count.completion": 16,
            "llm.token_count.prompt_details.cache_read": 64,
            "llm.finish_reason": "content_filter",
            "llm.system": "openai",
            "session.id": "game-1",
        }
    )
    assert got["gen_ai.operation.name"] == "chat"
    assert (got["gen_ai.request.model"], got["gen_ai.response.model"]) == ("gpt-4o-mini", "gpt-4o-mini-2024-07-18")
    assert (
        got["gen_ai.usage.input_tokens"],
        got["gen_ai.usage.output_tokens"],
        got["gen_ai.usage.cache_read.input_tokens"],
    ) == (106, 16, 64)
    assert got["gen_ai.response.finish_reasons"] == ["content_filter"]
    assert got["gen_ai.provider.name"] == "openai" and got["gen_ai.request.stream"] is True


@pytest.mark.parametrize(
    "kind, operation",
    [
        ("LLM", "chat"),
        ("AGENT", "invoke_agent"),
        ("TOOL", "execute_tool"),
        ("EMBEDDING", "embeddings"),
        ("RETRIEVER", "retrieval"),
        ("CHAIN", None),
        ("llm", "chat"),
    ],
)
def test_each_openinference_span_kind_stands_for_its_operation(kind, operation):
    assert view({"openinference.span.kind": kind}).get("gen_ai.operation.name") == operation


def test_an_openinference_call_asked_for_no_model_it_names_the_one_that_answered():
    # the failed call's span has no llm.model_name; one whose parameters name none asked for the answering one
    assert (
        view({"openinference.span.kind": "LLM", "llm.model_name": "m-2025", "llm.invocation_parameters": "{}"})[
            "gen_ai.request.model"
        ]
        == "m-2025"
    )
    assert (
        view({"openinference.span.kind": "LLM", "llm.model_name": "m-2025", "llm.invocation_parameters": "not json"})[
            "gen_ai.request.model"
        ]
        == "m-2025"
    )
    assert "gen_ai.request.model" not in view({"openinference.span.kind": "AGENT", "llm.model_name": "m"})


def test_traceloop_names_the_game_the_player_and_the_role():
    got = view(
        {
            "traceloop.span.kind": "tool",
            "traceloop.association.properties.thread_id": "game-2",
            "traceloop.association.properties.agent": "X",
            "agent.name": "Y",
        }
    )
    assert got["gen_ai.operation.name"] == "execute_tool"
    assert got["gen_ai.conversation.id"] == "game-2" and got["gen_ai.agent.name"] == "Y"  # agent.name first
    assert view({"traceloop.span.kind": "workflow"})["gen_ai.operation.name"] == "invoke_workflow"
    assert view({"traceloop.span.kind": "agent"})["gen_ai.operation.name"] == "invoke_agent"
    assert "gen_ai.operation.name" not in view({"traceloop.span.kind": "task"})
    # session_id before thread_id
    assert (
        view({"traceloop.association.properties.session_id": "s", "traceloop.association.properties.thread_id": "t"})[
            "gen_ai.conversation.id"
        ]
        == "s"
    )


def test_a_span_s_own_genai_attribute_wins():
    got = view(
        {
            "gen_ai.operation.name": "chat",
            "openinference.span.kind": "AGENT",
            "gen_ai.agent.name": "A",
            "agent.name": "B",
            "gen_ai.conversation.id": "c",
            "traceloop.association.properties.session_id": "s",
        }
    )
    assert (got["gen_ai.operation.name"], got["gen_ai.agent.name"], got["gen_ai.conversation.id"]) == ("chat", "A", "c")


@pytest.mark.parametrize(
    "written, read", [(False, False), (True, True), ("False", False), ("true", True), ("maybe", None), (1, None)]
)
def test_a_streamed_flag_is_read_as_written_or_as_text(written, read):
    assert view({"llm.is_streaming": written}).get("gen_ai.request.stream") == read
    assert view({"gen_ai.is_streaming": written}).get("gen_ai.request.stream") == read


def test_a_value_that_could_not_be_read_stands_for_nothing():
    attributes = {"llm.model_name": "m", "llm.token_count.prompt": 5}
    unreadable = {**kinds(attributes), "llm.model_name": otlp.BAD}
    got = genai_view(attributes, unreadable)[0]
    assert "gen_ai.response.model" not in got and got["gen_ai.usage.input_tokens"] == 5


# --- what a call answered ----------------------------------------------------------------


@pytest.mark.parametrize(
    "written, read",
    [
        (["stop"], ["stop"]),
        ('["tool_calls"]', ["tool_calls"]),
        ("content_filter", ["content_filter"]),
        ("", None),
        (None, None),
        ([1, "stop"], ["stop"]),
        ('{"a": 1}', ['{"a": 1}']),
        ('[1, "x"]', ["x"]),
    ],
)
def test_finish_reasons_as_an_array_as_json_text_or_alone(written, read):
    assert finish_reasons(written) == read


def test_a_refusal_part_a_refusal_finish_reason_or_a_raw_refusal_is_a_refusal():
    # Traceloop: a refusal part with its text
    assert (
        answer_of(
            {
                "gen_ai.output.messages": '[{"role": "assistant", "parts": [{"type": "refusal", '
                '"content": "I can\'t help with that."}]}]'
            }
        ).refusal
        == "I can't help with that."
    )
    assert answer_of({"gen_ai.output.messages": [{"parts": [{"type": "refusal"}]}]}).refusal == "a refusal"
    # openai-v2: only the finish reason says it
    assert answer_of({"gen_ai.response.finish_reasons": ["content_filter"]}).refusal == "finish reason content_filter"
    assert answer_of({"gen_ai.response.finish_reasons": ["stop", "refusal"]}).refusal == "finish reason refusal"
    # OpenInference: the provider's raw response
    raw = '{"choices": [{"finish_reason": "stop", "message": {"content": null, "refusal": "No."}}]}'
    assert answer_of({"output.value": raw}).refusal == "No."
    assert answer_of({"gen_ai.response.finish_reasons": ["stop", "tool_calls"]}).refusal is None
    assert answer_of({"output.value": '{"choices": [{"message": {"refusal": null}}]}'}).refusal is None
    assert answer_of({"output.value": "plain text"}).refusal is None


def test_tool_calls_are_read_wherever_an_instrumentation_writes_them():
    parts = answer_of(
        {
            "gen_ai.output.messages": [
                {
                    "parts": [
                        {"type": "tool_call", "id": "call_1", "name": "place", "arguments": {"square": 1}},
                        {"type": "text", "content": "ok"},
                    ]
                }
            ]
        }
    )
    assert [(c.id, c.name, c.arguments) for c in parts.tool_calls] == [("call_1", "place", {"square": 1})]
    # LiteLLM: gen_ai.completion.N.function_call.*
    litellm = answer_of(
        {
            "gen_ai.completion.0.function_call.name": "place",
            "gen_ai.completion.0.function_call.arguments": '{"square": 2,',
        }
    )
    assert [(c.id, c.name, c.arguments) for c in litellm.tool_calls] == [(None, "place", '{"square": 2,')]
    # OpenInference: llm.output_messages.N.message.tool_calls.M.tool_call.*
    openinference = answer_of(
        {
            "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_7",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "place",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"square": 3}',
            "llm.output_messages.0.message.tool_calls.1.tool_call.function.name": "place",
            "llm.output_messages.0.message.tool_calls.1.tool_call.function.arguments": '{"square": 4}',
        }
    )
    assert [(c.id, c.name, c.arguments) for c in openinference.tool_calls] == [
        ("call_7", "place", '{"square": 3}'),
        (None, "place", '{"square": 4}'),
    ]
    # a flattened call without arguments is no call
    assert answer_of({"gen_ai.completion.0.function_call.name": "place"}).tool_calls == []


def test_tool_definitions_in_each_form():
    flat = answer_of({"gen_ai.tool.definitions": [{"type": "function", "name": "place", "parameters": PLACE}]})
    nested = answer_of(
        {
            "gen_ai.tool.definitions": '[{"type": "function", "function": {"name": "place", '
            '"parameters": {"type": "object"}}}]'
        }
    )
    openinference = answer_of(
        {
            "llm.tools.0.tool.json_schema": '{"type": "function", "function": '
            '{"name": "go", "parameters": {"type": "object"}}}'
        }
    )
    litellm = answer_of(
        {
            "llm.request.functions.0.name": "place",
            "llm.request.functions.0.parameters": '{"type": "object", "required": ["square"]}',
        }
    )
    assert flat.tools == {"place": PLACE} and nested.tools == {"place": {"type": "object"}}
    assert openinference.tools == {"go": {"type": "object"}}
    assert litellm.tools == {"place": {"type": "object", "required": ["square"]}}
    assert answer_of({"gen_ai.tool.definitions": [{"name": "no parameters"}, "text"]}).tools == {}


@pytest.mark.parametrize(
    "arguments, problem",
    [
        ({"square": 2}, None),
        ('{"square": 2}', None),
        ('{"square": 2,', "tool call 'place''s arguments are not JSON"),
        ("[2]", "tool call 'place''s arguments are not a JSON object"),
        ({"square": 9}, "tool call 'place''s arguments break the tool's declared parameters at square: 9 is greater"),
        ({}, "break the tool's declared parameters at (arguments): 'square' is a required property"),
        ({"square": 1, "row": 2}, "Additional properties are not allowed"),
    ],
)
def test_tool_arguments_are_checked_as_json_and_against_the_declared_parameters(arguments, problem):
    answer = Answer(tool_calls=[ToolCall("c", "place", arguments)], tools={"place": PLACE})
    found = answer.bad_arguments()
    assert (found is None) if problem is None else (problem in found)


def test_a_call_of_a_tool_without_declared_parameters_is_checked_as_json_only():
    assert Answer(tool_calls=[ToolCall(None, "other", {"square": 99})], tools={"place": PLACE}).bad_arguments() is None
    assert "a tool call's arguments are not JSON" in Answer(tool_calls=[ToolCall(None, None, "{")]).bad_arguments()
    unreadable_schema = {"type": 12}
    assert Answer(tool_calls=[ToolCall(None, "x", {"a": 1})], tools={"x": unreadable_schema}).bad_arguments() is None


def test_long_arguments_are_cut_in_the_message():
    found = Answer(tool_calls=[ToolCall(None, "t", "{" + "x" * 500)]).bad_arguments()
    assert found.endswith("x" * 119 + "…") and len(found) < 250


def test_an_answer_is_recorded_by_its_messages_or_the_raw_response():
    assert recorded({"gen_ai.output.messages": "[]"}) and recorded({"output.value": "{}"})
    assert recorded({"gen_ai.completion.0.content": "x"}) and recorded({"llm.output_messages.0.message.role": "a"})
    assert not recorded({"gen_ai.response.finish_reasons": ["tool_calls"], "gen_ai.input.messages": "[]"})


# --- a tool run that failed, and a call that got no answer -----------------------------------


@pytest.mark.parametrize(
    "attributes, events, failure, rule",
    [
        # pydantic-ai keeps arguments it could not parse under INVALID_JSON
        ({"gen_ai.tool.call.arguments": '{"INVALID_JSON": "{\\"square\\": 2,"}'}, [], "", "tool_arguments"),
        # LangChain's callback inputs: the arguments as text
        ({"gen_ai.tool.call.arguments": '{"input_str": "{\\"square\\": 2,"}'}, [], "ValueError", "tool_arguments"),
        ({"gen_ai.tool.call.arguments": '{"input_str": "{\\"square\\": 2}"}'}, [], "ValueError", "tool_failed"),
        ({"gen_ai.tool.call.arguments": "{not json"}, [], "x", "tool_arguments"),
        (
            {},
            [{"name": "exception", "attributes": {"exception.type": "json.decoder.JSONDecodeError"}}],
            "Expecting",
            "tool_arguments",
        ),
        ({"pydantic_ai.tool.failure_stage": "validation"}, [], "", "tool_arguments"),
        ({"error.type": "ValidationError"}, [], "", "tool_arguments"),
        ({"error.type": "IllegalMove"}, [], "square taken", "tool_failed"),
        ({"error.type": "TimeoutError"}, [], "weather service timed out", "tool_unavailable"),
        ({}, [], "Connection refused", "tool_unavailable"),
        ({}, [{"name": "log", "attributes": {"exception.type": "JSONDecodeError"}}], "no", "tool_failed"),
    ],
)
def test_a_failed_tool_run_is_charged_by_what_failed(attributes, events, failure, rule):
    assert tool_rule(attributes, events, failure) == rule


def test_a_failure_is_said_in_the_providers_words():
    events = [
        {
            "name": "exception",
            "attributes": {"exception.message": "Error code: 429 - rate limited", "exception.type": "RateLimitError"},
        }
    ]
    assert failure_of("BadRequestError: Error code: 400", events, {}) == "BadRequestError: Error code: 400"
    assert failure_of(None, events, {}) == "Error code: 429 - rate limited"
    assert failure_of(None, [{"name": "exception", "attributes": {"exception.type": "Boom"}}], {}) == "Boom"
    assert failure_of(None, [], {"error.type": "TimeoutError"}) == "TimeoutError"
    assert failure_of(None, [], {}) == "an error, with no words"
    # the HTTP status where the words lack it
    assert failure_of("bad request", [], {"http.response.status_code": 400}) == "HTTP 400: bad request"
    assert failure_of("Error code: 400 - x", [], {"http.response.status_code": 400}) == "Error code: 400 - x"
    assert failure_of("x", [], {"http.status_code": "503"}) == "HTTP 503: x"


def test_what_stands_in_is_of_the_conventions_type():
    attributes = {
        "openinference.span.kind": "LLM",
        "llm.model_name": "m-2025",
        "llm.token_count.prompt": 3,
        "llm.invocation_parameters": '{"model": "m", "stream": true}',
        "llm.finish_reason": "stop",
        "llm.is_streaming": "true",
    }
    got, got_kinds = genai_view(attributes, kinds(attributes))
    assert {key: got_kinds[key] for key in got if key.startswith("gen_ai.")} == {
        "gen_ai.operation.name": otlp.STRING,
        "gen_ai.request.model": otlp.STRING,
        "gen_ai.response.model": otlp.STRING,
        "gen_ai.usage.input_tokens": otlp.INT,
        "gen_ai.response.finish_reasons": otlp.ARRAY,
        "gen_ai.request.stream": otlp.BOOLEAN,
    }
    _, traceloop = genai_view({"traceloop.span.kind": "agent"}, kinds({"traceloop.span.kind": "agent"}))
    assert traceloop["gen_ai.operation.name"] == otlp.STRING
    _, streamed = genai_view({"openinference.span.kind": "LLM", "llm.invocation_parameters": '{"stream": true}'}, {})
    assert streamed["gen_ai.request.stream"] == otlp.BOOLEAN


def test_invocation_parameters_as_an_object_as_text_or_neither():
    as_object = {"openinference.span.kind": "LLM", "llm.invocation_parameters": {"model": "m", "stream": True}}
    assert genai_view(as_object, {})[0]["gen_ai.request.model"] == "m"
    not_an_object = {"openinference.span.kind": "LLM", "llm.model_name": "m-2025", "llm.invocation_parameters": "[1]"}
    assert view(not_an_object)["gen_ai.request.model"] == "m-2025"
    # only a model call's parameters say it streamed
    agent = {"openinference.span.kind": "AGENT", "llm.invocation_parameters": '{"stream": true}'}
    assert "gen_ai.request.stream" not in view(agent)


def test_odd_shapes_are_passed_over_not_fatal():
    # a message or a part that is no object, an id that is no text, a choice that is no object
    answer = answer_of(
        {
            "gen_ai.output.messages": [
                "text",
                {"parts": ["junk", {"type": "tool_call", "id": 5, "name": "place", "arguments": {}}]},
            ],
            "output.value": '{"choices": ["x", {"message": "text"}]}',
        }
    )
    assert [(c.id, c.name) for c in answer.tool_calls] == [(None, "place")] and answer.refusal is None
    # a raw response that is not text is not read
    assert answer_of({"output.value": {"choices": [{"message": {"refusal": "no"}}]}}).refusal is None


def test_a_call_written_both_ways_is_one_call_and_flattened_indexes_are_kept_apart():
    both = answer_of(
        {
            "gen_ai.output.messages": [
                {"parts": [{"type": "tool_call", "id": "call_1", "name": "place", "arguments": "{}"}]}
            ],
            "gen_ai.completion.0.tool_calls.0.id": "call_1",
            "gen_ai.completion.0.tool_calls.0.name": "place",
            "gen_ai.completion.0.tool_calls.0.arguments": "{}",
        }
    )
    assert len(both.tool_calls) == 1
    apart = answer_of(
        {
            "gen_ai.completion.0.function_call.name": "a",
            "gen_ai.completion.0.function_call.arguments": "1",
            "gen_ai.completion.0.tool_calls.1.name": "b",
            "gen_ai.completion.0.tool_calls.1.arguments": "2",
        }
    )
    assert [(c.name, c.arguments) for c in apart.tool_calls] == [("a", "1"), ("b", "2")]
    tools = answer_of(
        {
            "llm.request.functions.0.name": "a",
            "llm.request.functions.0.parameters": "{}",
            "llm.request.functions.1.name": "b",
            "llm.request.functions.1.parameters": "{}",
        }
    ).tools
    assert sorted(tools) == ["a", "b"]


def test_a_problem_says_the_arguments_and_where_they_break_the_parameters():
    nested = {"type": "object", "properties": {"at": {"type": "object", "properties": {"x": {"maximum": 2}}}}}
    found = Answer(tool_calls=[ToolCall(None, "go", {"at": {"x": 9}})], tools={"go": nested}).bad_arguments()
    assert "at at/x:" in found
    assert Answer(tool_calls=[ToolCall(None, "t", "[2]")]).bad_arguments().endswith("not a JSON object: [2]")
    listed = Answer(tool_calls=[ToolCall(None, "t", [{"a": "é"}])]).bad_arguments()
    assert listed.endswith('not a JSON object: [{"a": "é"}]')
    cut = Answer(tool_calls=[ToolCall(None, "t", "{" + "x" * 500)]).bad_arguments()
    assert cut.endswith(": {" + "x" * 119 + "…")


def test_arguments_recorded_as_an_object_are_read_as_they_are():
    assert tool_rule({"gen_ai.tool.call.arguments": {"square": 1}}, [], "square taken") == "tool_failed"
    assert tool_rule({"gen_ai.tool.call.arguments": {"INVALID_JSON": "{"}}, [], "") == "tool_arguments"
