"""Turning pydantic errors into located violations, for every format."""

from __future__ import annotations

from collections.abc import Iterable

from workbench.violation import Violation

FOUND_CHARS = 80

# Pydantic's error types, renamed where a reader would not guess the rule.
RULE_NAMES = {"missing": "required_key", "extra_forbidden": "unknown_key", "literal_error": "enum_value"}


def field_path(loc: Iterable) -> str:
    """('payload', 'players', 0, 'emotions') -> 'payload.players[0].emotions'."""
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path or "(record)"


def line_count(count: int) -> str:
    """`1 line`, `12 lines`: how many lines a finding counts."""
    return "1 line" if count == 1 else f"{count} lines"


def drift_finding(rule: str, path: str, message: str, count: int, first: int) -> Violation:
    """An `info` finding about `count` lines of a file, located at the first of them:
    `message`, then how many lines and which first."""
    return Violation(f"line {first}", "info", rule, path, f"{message} ({line_count(count)}, first line {first})")


def found(value) -> str:
    text = repr(value)
    return text if len(text) <= FOUND_CHARS else text[: FOUND_CHARS - 3] + "..."


def message_of(error: dict) -> str:
    """What was expected and what was found, in one line."""
    kind = error["type"]
    if kind == "missing":
        return f"expected key `{error['loc'][-1]}`; found no such key"
    if kind == "extra_forbidden":
        return f"key `{error['loc'][-1]}` is not in the specification"
    ctx = error.get("ctx") or {}
    if ctx.get("says_found") or "field" in ctx or "found" in ctx or kind.startswith("json"):
        return error["msg"]  # a custom rule's message already says what was found
    return f"{error['msg']}; found {found(error.get('input'))}"


def violation(locator: str, error: dict, loc: tuple, severity: str = "error") -> Violation:
    """A violation for a pydantic `error` whose location (minus any union tag) is `loc`.

    A custom rule may name the offending key in `ctx['field']`; it is appended to the
    location so the violation points at the key, not at the object that holds it.
    """
    extra = (error.get("ctx") or {}).get("field")
    if extra:
        loc = (*loc, *extra.split("."))
    kind = error["type"]
    return Violation(locator, severity, RULE_NAMES.get(kind, kind), field_path(loc), message_of(error))


def tag_by(key: str, known, fallback: str):
    """A discriminator for a tagged union of record models: the record's `key` when it
    names a known model, else `fallback`; None (the line is rejected, not validated)
    when the record is not a JSON object."""

    def tag(value) -> str | None:
        if not isinstance(value, dict):
            return None
        found = value.get(key)
        return found if isinstance(found, str) and found in known else fallback

    return tag
