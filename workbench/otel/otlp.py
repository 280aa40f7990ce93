"""OTLP/JSON, as the OpenTelemetry protocol specifies it: attributes are lists of
`{"key", "value"}` whose value is one of `stringValue`, `boolValue`, `intValue` (a
64-bit integer written as a decimal string, or a number), `doubleValue`, `arrayValue`,
`kvlistValue` or `bytesValue`; trace and span ids are hex strings; times are
nanoseconds since the epoch, as decimal strings."""

from __future__ import annotations

import math
from typing import Any

import msgspec

from workbench.schema import INT64

# A value's kind, as the conventions' types name them.
STRING, INT, DOUBLE, BOOLEAN, ARRAY, KVLIST, BYTES, EMPTY, BAD = (
    "string",
    "int",
    "double",
    "boolean",
    "array",
    "kvlist",
    "bytes",
    "empty",
    "bad",
)
# Doubles JSON has no number for, as protobuf's JSON mapping writes them.
SPECIAL_DOUBLES = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def value_of(any_value: Any) -> tuple[Any, str]:
    """An AnyValue as a Python value (a JSON-able one: bytes stay base64) and its kind;
    (what was written, BAD) for one that is none of them."""
    if not isinstance(any_value, dict):
        return any_value, BAD
    if not any_value:
        return None, EMPTY
    if len(any_value) != 1:
        return any_value, BAD
    [(key, value)] = any_value.items()
    if key == "stringValue" and isinstance(value, str):
        return value, STRING
    if key == "boolValue" and isinstance(value, bool):
        return value, BOOLEAN
    if key == "intValue":
        number = int64_of(value)
        return (number, INT) if number is not None else (value, BAD)
    if key == "doubleValue":
        if isinstance(value, (int, float)) and not isinstance(value, bool) and _fits_a_double(value):
            return float(value), DOUBLE
        if value in SPECIAL_DOUBLES:
            return value, DOUBLE  # kept as written: JSON has no NaN or infinity
        return value, BAD
    if key == "arrayValue" and isinstance(value, dict) and isinstance(value.get("values", []), list):
        return [value_of(item)[0] for item in value.get("values", [])], ARRAY
    if key == "kvlistValue" and isinstance(value, dict) and isinstance(value.get("values", []), list):
        return attributes_of(value.get("values", []))[0], KVLIST
    if key == "bytesValue" and isinstance(value, str):
        return value, BYTES
    return any_value, BAD


def int64_of(value: Any) -> int | None:
    """A 64-bit integer written as a decimal string or a JSON integer, or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value[1:] if value.startswith(("-", "+")) else value
        # 64 bits hold 19 digits: a longer number (4,301 digits and more Python would
        # not even read) is none, whatever its leading zeros
        digits = text.lstrip("0") or "0"
        if not text.isascii() or not text.isdigit() or len(digits) > 19:
            return None
        value = -int(digits) if value.startswith("-") else int(digits)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and INT64[0] <= value <= INT64[1]:
        return value
    return None


def _fits_a_double(number: int | float) -> bool:
    """A JSON number a double holds: an integer beyond 1.8e308 has no double."""
    try:
        float(number)
    except OverflowError:
        return False
    return True


def attributes_of(key_values: Any) -> tuple[dict[str, Any], dict[str, str]]:
    """A list of KeyValue as {key: value} and {key: kind}; entries that are not
    `{"key": str, "value": ...}` are left out (kind BAD under their position)."""
    values: dict[str, Any] = {}
    kinds: dict[str, str] = {}
    if not isinstance(key_values, list):
        return values, {"": BAD}
    for position, entry in enumerate(key_values):
        if not isinstance(entry, dict) or not isinstance(entry.get("key"), str):
            kinds[f"[{position}]"] = BAD
            continue
        values[entry["key"]], kinds[entry["key"]] = value_of(entry.get("value", {}))
    return values, kinds


def any_value(value: Any) -> dict:
    """A Python value as an AnyValue (the inverse of `value_of` for JSON-able values)."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        if math.isnan(value):
            return {"doubleValue": "NaN"}
        if math.isinf(value):
            return {"doubleValue": "Infinity" if value > 0 else "-Infinity"}
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, (list, tuple)):
        return {"arrayValue": {"values": [any_value(item) for item in value]}}
    if isinstance(value, dict):
        return {"kvlistValue": {"values": key_values(value)}}
    return {}


def key_values(attributes: dict[str, Any]) -> list[dict]:
    """{key: value} as OTLP's list of KeyValue; None values are left out."""
    return [{"key": key, "value": any_value(value)} for key, value in attributes.items() if value is not None]


# --- an export read a span at a time ----------------------------------------------------------

_OBJECT_OF_RAW = msgspec.json.Decoder(dict[str, msgspec.Raw])
_LIST_OF_RAW = msgspec.json.Decoder(list[msgspec.Raw])
_DECODE = msgspec.json.Decoder()


class Spans:
    """A scope's spans as written (a `msgspec.Raw`: a slice of the file's bytes), decoded
    a span at a time as they are walked: an export's spans are never all objects at
    once, and only one scope's are indexed at a time."""

    def __init__(self, raw: msgspec.Raw):
        self.raw = raw

    def __iter__(self):
        for raw in _LIST_OF_RAW.decode(self.raw):
            yield _DECODE.decode(raw)


def lazy_export(data) -> dict | None:
    """The export `data` (bytes, or a file mapped) holds, as the reader takes it, its
    spans `Spans`; None where `data` is not one JSON object whose `resourceSpans`, their
    `scopeSpans` and theirs `spans` are lists of objects that each decode (the reader
    then reads it whole, to say what it holds). Memory: the resources and scopes, and
    the index of one scope's spans (a Collector's batch, or a part `export --otlp`
    writes) and a span at a time."""
    try:
        top = _OBJECT_OF_RAW.decode(data)
        if "resourceSpans" not in top:
            return None
        export = _decoded(top, "resourceSpans")
        export["resourceSpans"] = []
        for raw in _LIST_OF_RAW.decode(top["resourceSpans"]):
            resource_spans = _OBJECT_OF_RAW.decode(raw)
            kept = _decoded(resource_spans, "scopeSpans")
            if "scopeSpans" in resource_spans:
                kept["scopeSpans"] = [_scoped(raw) for raw in _LIST_OF_RAW.decode(resource_spans["scopeSpans"])]
            export["resourceSpans"].append(kept)
    except (msgspec.DecodeError, RecursionError, _NotAnObject):
        return None
    return export


class _NotAnObject(Exception):
    """A span that is no JSON object, or does not decode."""


def _decoded(raw_object: dict, but: str) -> dict:
    return {key: _DECODE.decode(value) for key, value in raw_object.items() if key != but}


def _scoped(raw) -> dict:
    """A scope's object, its spans `Spans`, each checked to decode to an object."""
    scoped = _OBJECT_OF_RAW.decode(raw)
    kept = _decoded(scoped, "spans")
    if "spans" in scoped:
        spans = Spans(scoped["spans"])
        if not all(isinstance(span, dict) for span in spans):  # one at a time: each decodes, an object
            raise _NotAnObject
        kept["spans"] = spans
    return kept


def skeleton(export: dict) -> dict:
    """`lazy_export`'s export without its spans (each scope's an empty list): its
    structure, to check, without a span decoded."""
    return {
        **export,
        "resourceSpans": [
            {
                **resource_spans,
                "scopeSpans": [
                    {**scoped, "spans": []} if isinstance(scoped.get("spans"), Spans) else scoped
                    for scoped in resource_spans["scopeSpans"]
                ],
            }
            if "scopeSpans" in resource_spans
            else resource_spans
            for resource_spans in export["resourceSpans"]
        ],
    }
