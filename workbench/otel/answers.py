"""What a model call answered, as its span records it: the finish reasons, a refusal, the
tool calls with their arguments (checked as JSON, and against the tool's declared
parameters where the span records the tool definitions), and, for a call that got no
answer, the provider's own words.

Instrumentations write these in several places, each read here:
- the GenAI conventions: `gen_ai.response.finish_reasons` (a string array; some write the
  array as a JSON string, or a one-value string), `gen_ai.output.messages` (parts of type
  `tool_call` with `arguments`, `refusal` with `content`), `gen_ai.tool.definitions`;
- their flattened predecessors, still written by LiteLLM: `gen_ai.completion.N.
  function_call.arguments`, `gen_ai.completion.N.tool_calls.M.*`, `llm.request.functions.N.*`;
- OpenInference: `llm.output_messages.N.message.tool_calls.M.tool_call.*`, `llm.tools.N.
  tool.json_schema`, and the provider's raw response in `output.value` (where the refusal
  text is);
- a failure: the status message, else the `exception` event's message, else `error.type`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

REFUSAL_REASONS = ("content_filter", "refusal")
_FLAT_CALL = re.compile(
    r"(?:gen_ai\.completion|llm\.output_messages)\.(\d+)\.(?:message\.)?(?:tool_calls\.(\d+)\.)?"
    r"(?:tool_call\.)?(?:function_call|function)?\.?(id|name|arguments)$"
)
_FLAT_TOOL = re.compile(r"llm\.request\.functions\.(\d+)\.(name|parameters)$")
_OPENINFERENCE_TOOL = re.compile(r"llm\.tools\.(\d+)\.tool\.json_schema$")


@dataclass
class ToolCall:
    id: str | None
    name: str | None
    arguments: Any  # as written: an object, or text


@dataclass
class Answer:
    finish_reasons: list[str] | None = None
    refusal: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    tools: dict[str, Any] = field(default_factory=dict)  # name -> declared parameters (a JSON Schema)

    def bad_arguments(self) -> str | None:
        """Why a tool call's arguments cannot be the tool's: not JSON, not an object, or
        breaking its declared parameters; None where every call's are fine."""
        for call in self.tool_calls:
            problem = _arguments_problem(call, self.tools.get(call.name) if call.name is not None else None)
            if problem:
                return problem
        return None


def answer_of(attributes: dict) -> Answer:
    """What the span's attributes say the call answered."""
    answer = Answer(finish_reasons=finish_reasons(attributes.get("gen_ai.response.finish_reasons")))
    messages = _parsed(attributes.get("gen_ai.output.messages"))
    for message in messages if isinstance(messages, list) else []:
        for part in message.get("parts") or [] if isinstance(message, dict) else []:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "tool_call":
                answer.tool_calls.append(
                    ToolCall(_text(part.get("id")), _text(part.get("name")), part.get("arguments"))
                )
            elif part.get("type") == "refusal":
                answer.refusal = _text(part.get("content")) or "a refusal"
    _flat_calls(attributes, answer)
    _raw_response(attributes.get("output.value"), answer)
    _tools(attributes, answer)
    if answer.refusal is None and answer.finish_reasons:
        said = [reason for reason in answer.finish_reasons if reason in REFUSAL_REASONS]
        answer.refusal = f"finish reason {said[0]}" if said else None
    return answer


def recorded(attributes: dict) -> bool:
    """Does the span record what the model answered (its messages, or the raw response)?"""
    return any(
        key == "gen_ai.output.messages"
        or key == "output.value"
        or key.startswith(("gen_ai.completion.", "llm.output_messages."))
        for key in attributes
    )


def finish_reasons(value: Any) -> list[str] | None:
    """Finish reasons as a list: an array as written, the array a JSON string encodes
    (logfire, LiteLLM), or a lone reason."""
    if isinstance(value, list):
        return [str(item) for item in value if isinstance(item, str)]
    if isinstance(value, str):
        parsed = _parsed(value)
        if isinstance(parsed, list):
            return [item for item in parsed if isinstance(item, str)]
        return [value] if value else None
    return None


def _flat_calls(attributes: dict, answer: Answer) -> None:
    """Tool calls written as flattened attributes (LiteLLM's `gen_ai.completion.N.*`,
    OpenInference's `llm.output_messages.N.message.tool_calls.M.tool_call.*`)."""
    calls: dict[tuple, dict] = {}
    for key, value in attributes.items():
        found = _FLAT_CALL.match(key)
        if found:
            calls.setdefault((int(found[1]), int(found[2] or 0)), {})[found[3]] = value
    known = {(call.id, call.name) for call in answer.tool_calls}
    for _, call in sorted(calls.items()):
        if "arguments" in call and (_text(call.get("id")), _text(call.get("name"))) not in known:
            answer.tool_calls.append(ToolCall(_text(call.get("id")), _text(call.get("name")), call["arguments"]))


def _raw_response(value: Any, answer: Answer) -> None:
    """A refusal in the provider's raw chat completion (OpenInference's `output.value`)."""
    response = _parsed(value) if isinstance(value, str) and value.startswith("{") else None
    for choice in response.get("choices") or [] if isinstance(response, dict) else []:
        message = choice.get("message") if isinstance(choice, dict) else None
        if isinstance(message, dict) and isinstance(message.get("refusal"), str) and answer.refusal is None:
            answer.refusal = message["refusal"]


def _tools(attributes: dict, answer: Answer) -> None:
    """The tools the call declared, name -> parameters."""
    definitions = _parsed(attributes.get("gen_ai.tool.definitions"))
    listed = definitions if isinstance(definitions, list) else []
    listed += [_parsed(value) for key, value in attributes.items() if _OPENINFERENCE_TOOL.match(key)]
    flat: dict[int, dict] = {}
    for key, value in attributes.items():
        found = _FLAT_TOOL.match(key)
        if found:
            flat.setdefault(int(found[1]), {})[found[2]] = _parsed(value) if found[2] == "parameters" else value
    listed += list(flat.values())
    for tool in listed:
        if isinstance(tool, dict) and isinstance(tool.get("function"), dict):
            tool = tool["function"]
        if isinstance(tool, dict) and isinstance(tool.get("name"), str) and isinstance(tool.get("parameters"), dict):
            answer.tools[tool["name"]] = tool["parameters"]


def _arguments_problem(call: ToolCall, parameters: dict | None) -> str | None:
    name = f"tool call {call.name!r}" if call.name else "a tool call"
    arguments = call.arguments
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError) as exc:
            return f"{name}'s arguments are not JSON ({exc}): {_short(call.arguments)}"
    if not isinstance(arguments, dict):
        return f"{name}'s arguments are not a JSON object: {_short(call.arguments)}"
    if parameters is None:
        return None
    from workbench.lean_imports import jsonschema

    jsonschema()  # loaded without a part it never needs
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(parameters)
        error = next(iter(Draft202012Validator(parameters).iter_errors(arguments)), None)
    except (SchemaError, RecursionError, ValueError, TypeError, re.error):
        return None  # a declaration no validator can read (or use) checks nothing
    if error is None:
        return None
    where = "/".join(map(str, error.absolute_path)) or "(arguments)"
    return f"{name}'s arguments break the tool's declared parameters at {where}: {error.message}"


# Errors that say a tool could not read the arguments it was called with.
ARGUMENT_ERRORS = ("JSONDecodeError", "ValidationError", "ArgsValidationError", "json_invalid")
# Errors that say the tool's own service failed (not the call the model asked for).
UNAVAILABLE = re.compile(r"time ?out|timed out|connection|unavailable|unreachable|rate.?limit", re.IGNORECASE)
# A tool run's rule -> its severity on the call that asked for it.
TOOL_RULES = {"tool_arguments": "error", "tool_failed": "error", "tool_unavailable": "warning"}


def tool_rule(attributes: dict, events: list[dict], failure: str) -> str:
    """A failed tool run's rule: `tool_arguments` where the model's arguments could not
    be read (not JSON as recorded, or the tool's error says so); `tool_unavailable` where
    the tool's own service failed (a timeout, a connection), which is not the model's
    move; else `tool_failed`: the tool refused what the model asked (an illegal move)."""
    arguments = (
        _parsed(attributes.get("gen_ai.tool.call.arguments"))
        if isinstance(attributes.get("gen_ai.tool.call.arguments"), str)
        else attributes.get("gen_ai.tool.call.arguments")
    )
    if "gen_ai.tool.call.arguments" in attributes and arguments is None:
        return "tool_arguments"
    if isinstance(arguments, dict):
        if "INVALID_JSON" in arguments:  # pydantic-ai keeps arguments it could not parse so
            return "tool_arguments"
        if isinstance(arguments.get("input_str"), str) and _parsed(arguments["input_str"]) is None:
            return "tool_arguments"  # LangChain's callback inputs: the arguments as text
    said = [
        failure,
        _text(attributes.get("error.type")) or "",
        _text(attributes.get("pydantic_ai.tool.failure_stage")) or "",
    ] + [_text(event["attributes"].get("exception.type")) or "" for event in events if event.get("name") == "exception"]
    if "validation" in said or any(error in text for text in said for error in ARGUMENT_ERRORS):
        return "tool_arguments"
    return "tool_unavailable" if any(UNAVAILABLE.search(text) for text in said) else "tool_failed"


def failure_of(status_message: str | None, events: list[dict], attributes: dict) -> str:
    """A failed call's reason in the provider's words: the status message, else the
    exception's message, else `error.type`, with the HTTP status where the span has one
    and the words do not."""
    said = (
        status_message
        or next(
            (
                _text(event["attributes"].get("exception.message")) or _text(event["attributes"].get("exception.type"))
                for event in events
                if event.get("name") == "exception"
            ),
            None,
        )
        or _text(attributes.get("error.type"))
    )
    said = said or "an error, with no words"
    status = attributes.get("http.response.status_code", attributes.get("http.status_code"))
    if isinstance(status, (int, str)) and str(status) not in said:
        said = f"HTTP {status}: {said}"
    return said


def _parsed(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return None
    return value


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _short(value: Any, limit: int = 120) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "…"
