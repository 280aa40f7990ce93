"""What a span says under the GenAI semantic conventions: its attributes checked against
their types and registry (`check_attributes`), the values the workbench reads of it
(`conventional`), what its call answered (`call_answer`), its events, its latency and its
tokens."""

from __future__ import annotations

import math
from typing import Any

from workbench.otel import answers, otlp
from workbench.otel import conventions as sc
from workbench.validation import found


def latency_of(row: dict, attributes: dict) -> float | None:
    """The span's duration in ms. `export --otlp` also writes the decision's latency as it
    was (`workbench.latency_ms`): that value is taken where the span's nanoseconds agree
    with it (a latency measured below the nanosecond comes back whole), or where the span
    has no duration (a latency no span can hold, or none a number can say)."""
    start, end = row["start_ns"], row["end_ns"]
    if start is None or end is None:
        return None
    written = attributes.get("workbench.latency_ms")
    written = otlp.SPECIAL_DOUBLES.get(written, written) if isinstance(written, str) else written
    if isinstance(written, (int, float)) and not isinstance(written, bool):
        if end == start or (math.isfinite(written * 1e6) and round(written * 1e6) == end - start):
            return float(written)
    return (end - start) / 1e6 if end > start else None


def tokens_of(values: dict, attributes: dict) -> int | None:
    """All tokens of the call: input and output; where the workbench wrote the total of a
    log that records only a total (`workbench.tokens`), that total."""
    written = attributes.get("workbench.tokens")
    if isinstance(written, int) and not isinstance(written, bool):
        return written
    if values["input_tokens"] is None and values["output_tokens"] is None:
        return None
    return (values["input_tokens"] or 0) + (values["output_tokens"] or 0)


def check_attributes(values: dict, kinds: dict, said, where: str) -> None:
    """Each attribute's type against the conventions', its name against their registry."""
    for key, kind in kinds.items():
        field = f"{where}.{key}" if where else key
        if kind == otlp.BAD:
            said(field.rstrip("."), _bad(key, values))
            continue
        if key in sc.DEPRECATED:
            now = sc.DEPRECATED[key]
            said(
                field,
                f"{key} is deprecated in the conventions {sc.VERSION}"
                + (f"; read as {now}" if now else "; removed, with no replacement"),
                "info",
                "deprecated_attribute",
            )
            expected = sc.TYPES.get(now) if now else None
        elif key.startswith("gen_ai.") and key not in sc.TYPES:
            said(field, f"not an attribute of the GenAI conventions {sc.VERSION}", "info", "unknown_attribute")
            continue
        else:
            expected = sc.TYPES.get(key)
        if (
            expected == "string[]"
            and kind == otlp.STRING
            and answers.finish_reasons(values.get(key)) is not None
            and str(values.get(key)).startswith("[")
        ):
            said(
                field,
                f"expected string[] (the conventions {sc.VERSION}); found the array written as JSON text "
                f"{found(values.get(key))}: read as the array it holds",
                "warning",
                "array_as_json_text",
            )
        elif expected is not None and not _is_a(values.get(key), kind, expected):
            said(
                field,
                f"expected {expected} (the conventions {sc.VERSION}); found {kind} {found(values.get(key))}",
                "error",
                "attribute_type",
            )


def _bad(key: str, values: dict) -> str:
    """What a value `attributes_of` could not read was expected to be."""
    if key == "":
        return 'expected a list of {"key", "value"} attributes'
    if key.startswith("[") and key not in values:
        return 'expected an attribute {"key": a string, "value": an AnyValue}'
    return (
        "expected an AnyValue: one of stringValue, boolValue, intValue (a 64-bit integer as a decimal string), "
        f"doubleValue, arrayValue, kvlistValue, bytesValue; found {found(values.get(key))}"
    )


def _is_a(value: Any, kind: str, expected: str) -> bool:
    if expected == "any":
        return True
    if expected == "string[]":
        return kind == otlp.ARRAY and all(isinstance(item, str) for item in value)
    # JSON and the SDKs write 1 for 1.0: an integer where a double is expected is one.
    return kind == expected or (expected == "double" and kind == otlp.INT)


def call_answer(view: dict, operation: str | None, failed: bool, said) -> dict:
    """What an inference span's call answered: its finish reasons, and the rules its
    answer breaks (a refusal; tool-call arguments that are not JSON or break the tool's
    declared parameters), each an error on the span. A failed call answered nothing."""
    answer = answers.answer_of(view)
    found = {
        "finish_reasons": answer.finish_reasons,
        "refusal": None,
        "bad_arguments": None,
        "exported_rule": None,
        "answer_recorded": answers.recorded(view),
        "tool_call_ids": [call.id for call in answer.tool_calls if call.id] or None,
        "streamed": view.get("gen_ai.request.stream") if isinstance(view.get("gen_ai.request.stream"), bool) else None,
    }
    if operation not in sc.INFERENCE or failed:
        return found
    if view.get("workbench.outcome") == "invalid":  # as `export --otlp` wrote a decision found invalid
        rule = view.get("workbench.rule") if isinstance(view.get("workbench.rule"), str) else "invalid_decision"
        found["exported_rule"] = rule
        said("attributes.workbench.rule", f"exported as an invalid decision, by the rule {rule!r}", "error", rule)
    if answer.refusal is not None:
        found["refusal"] = answer.refusal
        said("attributes.gen_ai.output.messages", f"the model refused to answer: {answer.refusal}", "error", "refusal")
    found["bad_arguments"] = answer.bad_arguments()
    if found["bad_arguments"]:
        said("attributes.gen_ai.output.messages", found["bad_arguments"], "error", "tool_arguments")
    return found


def conventional(attributes: dict, kinds: dict, resource: dict, said, declared: bool = True) -> dict:
    """The attributes the workbench reads of a span, each of the conventions' type (a
    value of another type is reported by `check_attributes` and left out); the
    required ones of its operation checked where the span `declared` it (an operation
    read from another instrumentation's attributes is not held to the conventions)."""

    def value(key: str, expected: str):
        for name in (key, *(old for old, now in sc.DEPRECATED.items() if now == key)):
            if name in attributes and _is_a(attributes[name], kinds[name], expected):
                return attributes[name]
        return None

    operation = value("gen_ai.operation.name", "string")
    if operation is not None and operation not in sc.OPERATIONS:
        said(
            "attributes.gen_ai.operation.name",
            f"{operation!r} is not one of the operations the conventions "
            f"{sc.VERSION} name ({', '.join(sc.OPERATIONS)}); a custom one is allowed",
            "info",
            "unknown_operation",
        )
    if operation is not None and declared:
        for key in sc.REQUIRED.get(operation, ()):
            if value(key, sc.TYPES[key]) is None and key not in attributes:
                said(
                    f"attributes.{key}",
                    f"required on a GenAI {operation} span (the conventions {sc.VERSION})",
                    "error",
                    "required_attribute",
                )
    session = value("session.id", "string")
    if session is None and isinstance(resource.get("session.id"), str):
        session = resource["session.id"]
    return {
        "operation": operation,
        "provider": value("gen_ai.provider.name", "string"),
        "request_model": value("gen_ai.request.model", "string"),
        "response_model": value("gen_ai.response.model", "string"),
        "agent": value("gen_ai.agent.name", "string") or value("gen_ai.agent.id", "string"),
        "tool": value("gen_ai.tool.name", "string"),
        "tool_call_id": value("gen_ai.tool.call.id", "string"),
        "conversation_id": value("gen_ai.conversation.id", "string"),
        "session_id": session,
        "input_tokens": value("gen_ai.usage.input_tokens", "int"),
        "output_tokens": value("gen_ai.usage.output_tokens", "int"),
        "cached_tokens": value("gen_ai.usage.cache_read.input_tokens", "int"),
        "error_type": value("error.type", "string"),
    }


def events_of(events: Any, said) -> list[dict]:
    """The span's events as {name, time_ns, attributes}; an evaluation's attributes
    checked against the conventions."""
    if not isinstance(events, list):
        said("events", f"expected a list; found {found(events)}")
        return []
    kept = []
    for n, event in enumerate(events):
        if not isinstance(event, dict):
            said(f"events[{n}]", f"expected an event object; found {found(event)}")
            continue
        attributes, kinds = otlp.attributes_of(event.get("attributes", []))
        name = event.get("name") if isinstance(event.get("name"), str) else None
        time_ns = otlp.int64_of(event.get("timeUnixNano", "0"))
        if name is None:
            said(f"events[{n}].name", f"expected a string; found {found(event.get('name'))}")
        if time_ns is None or time_ns < 0:
            time_ns = None
            said(
                f"events[{n}].timeUnixNano",
                f"expected nanoseconds since the epoch as a decimal string; found {found(event.get('timeUnixNano'))}",
            )
        if name == sc.EVALUATION:
            where = f"events[{n}].attributes"
            check_attributes(attributes, kinds, said, where)
            for key in sc.EVALUATION_REQUIRED:
                if key not in attributes:
                    said(
                        f"{where}.{key}",
                        f"required on a {sc.EVALUATION} event (the conventions {sc.VERSION})",
                        "error",
                        "required_attribute",
                    )
        kept.append({"name": name, "time_ns": time_ns, "attributes": attributes})
    return kept
