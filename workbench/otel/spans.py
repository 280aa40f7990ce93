"""An OTLP/JSON traces export, walked: the export a line holds or why it holds none, where
its structure is not OTLP's, its spans with their resource and scope, and a span's own
fields (ids, name, times, kind, status) each checked as OTLP/JSON writes it."""

from __future__ import annotations

import re
from typing import Any

import msgspec

from workbench.otel import conventions as sc
from workbench.otel import otlp
from workbench.validation import found

_HEX = {32: re.compile(r"[0-9a-fA-F]{32}"), 16: re.compile(r"[0-9a-fA-F]{16}")}
DECODE = msgspec.json.Decoder()


def request_of(text: str, unreadable: str | None) -> tuple[dict | None, str | None]:
    """The export a line holds, or why it holds none."""
    if unreadable:
        return None, f"a line that cannot be read ({unreadable})"
    try:
        request = DECODE.decode(text)
    except msgspec.DecodeError as exc:
        return None, f"text that is not JSON ({exc})"
    except RecursionError:
        return None, "JSON nested too deeply to read"
    if not isinstance(request, dict):
        return None, f"a JSON {type(request).__name__}, not an object"
    if not isinstance(request.get("resourceSpans"), list):
        return None, "an object without a `resourceSpans` list" + (
            " (a logs or metrics export: this format reads traces)"
            if {"resourceLogs", "resourceMetrics"} & request.keys()
            else ""
        )
    return request, None


def shape_problem(request: dict) -> str | None:
    """Where an export's structure is not OTLP's: resources, scopes and spans are
    objects, their lists lists, a scope's name and version strings."""
    for r, resource_spans in enumerate(request["resourceSpans"]):
        at = f"resourceSpans[{r}]"
        if not isinstance(resource_spans, dict):
            return f"{at} {found(resource_spans)}, not an object"
        if not isinstance(resource_spans.get("resource", {}), dict):
            return f"{at}.resource {found(resource_spans['resource'])}, not an object"
        if not isinstance(resource_spans.get("scopeSpans", []), list):
            return f"{at}.scopeSpans {found(resource_spans['scopeSpans'])}, not a list"
        for s, scoped in enumerate(resource_spans.get("scopeSpans", [])):
            where = f"{at}.scopeSpans[{s}]"
            if not isinstance(scoped, dict) or not isinstance(scoped.get("spans", []), list):
                return f"{where} {found(scoped)}, not an object with a `spans` list"
            scope = scoped.get("scope", {})
            if not isinstance(scope, dict) or not all(isinstance(scope.get(k, ""), str) for k in ("name", "version")):
                return f"{where}.scope {found(scope)}, not an object with a string name and version"
            for n, span in enumerate(scoped.get("spans", [])):
                if not isinstance(span, dict):
                    return f"{where}.spans[{n}] {found(span)}, not a span object"
    return None


def spans_of(request: dict):
    """(path, span, resource attributes, scope) of each span of an export whose structure
    is OTLP's (`shape_problem`)."""
    for r, resource_spans in enumerate(request["resourceSpans"]):
        resource, _ = otlp.attributes_of(resource_spans.get("resource", {}).get("attributes", []))
        for s, scoped in enumerate(resource_spans.get("scopeSpans", [])):
            for n, span in enumerate(scoped.get("spans", [])):
                yield f"resourceSpans[{r}].scopeSpans[{s}].spans[{n}]", span, resource, scoped.get("scope", {})


def resources_of(request: dict) -> tuple[dict, dict]:
    """Every resource attribute of an export, by its path, with its kind: checked once
    per line, not once per span."""
    values, kinds = {}, {}
    for r, resource_spans in enumerate(request["resourceSpans"]):
        got, got_kinds = otlp.attributes_of(resource_spans.get("resource", {}).get("attributes", []))
        for key, kind in got_kinds.items():
            values[f"resourceSpans[{r}].resource.attributes.{key}"] = got.get(key)
            kinds[f"resourceSpans[{r}].resource.attributes.{key}"] = kind
    return values, kinds


def hex_id(value: Any, digits: int) -> str | None:
    """A hex id of `digits` digits in lower case (OTLP/JSON ids are case-insensitive)."""
    if isinstance(value, str) and _HEX[digits].fullmatch(value) and set(value) != {"0"}:
        return value.lower()
    return None


def span_row(span: dict, said) -> dict:
    """The span's own fields, each checked as OTLP/JSON writes it."""
    row: dict[str, Any] = {"trace_id": hex_id(span.get("traceId"), 32), "span_id": hex_id(span.get("spanId"), 16)}
    for key, digits in (("traceId", 32), ("spanId", 16)):
        if row[key.replace("Id", "_id").lower()] is None:
            said(key, f"expected {digits} hex digits, not all zero; found {found(span.get(key))}")
    parent = span.get("parentSpanId", "")
    row["parent_span_id"] = hex_id(parent, 16)
    if parent not in ("", None) and row["parent_span_id"] is None:
        said("parentSpanId", f"expected 16 hex digits, or none for a root span; found {found(parent)}")
    row["name"] = span.get("name") if isinstance(span.get("name"), str) else None
    if row["name"] is None:
        said("name", f"expected a string; found {found(span.get('name'))}")
    for key, column in (("startTimeUnixNano", "start_ns"), ("endTimeUnixNano", "end_ns")):
        row[column] = otlp.int64_of(span.get(key))
        if row[column] is None or row[column] < 0:
            row[column] = None
            said(key, f"expected nanoseconds since the epoch as a decimal string; found {found(span.get(key))}")
    if None not in (row["start_ns"], row["end_ns"]) and row["end_ns"] < row["start_ns"]:
        said("endTimeUnixNano", "the span ends before it starts", "warning", "span_ends_before_it_starts")
    row["kind"] = _enum(span.get("kind", 0), range(6), sc.KIND_NAMES, "kind", said)
    status = span["status"] if isinstance(span.get("status"), dict) else {}
    row["status_code"] = _enum(status.get("code", 0), range(3), sc.STATUS_NAMES, "status.code", said)
    row["status_message"] = status.get("message") if isinstance(status.get("message"), str) else None
    return row


def _enum(value: Any, allowed: range, names: dict[str, int], field: str, said) -> int | None:
    """An enum as OTLP/JSON must write it (an integer); a name, which some emitters
    write, is read and reported."""
    if isinstance(value, int) and not isinstance(value, bool) and value in allowed:
        return value
    if isinstance(value, str) and value in names:
        said(
            field,
            f"OTLP/JSON writes enums as integers; found the name {value!r} ({names[value]})",
            "warning",
            "enum_as_name",
        )
        return names[value]
    said(field, f"expected an integer {allowed.start} to {allowed.stop - 1}; found {found(value)}")
    return None
