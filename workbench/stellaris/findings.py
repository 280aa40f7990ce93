"""Checking one tool output against its model: located, explained violations.

- A missing or mistyped seed key is an `error` that says what was expected and what
  was found, and names a sibling key the writer probably meant ("did you mean
  `total_pops`?"): one the model declares as `seen_as`, or else a near name (a typo,
  the same words reordered or abbreviated).
- A key the seed does not list is `info` (drift, kept), as is a value outside the
  values the seed documents for an open string (a leader class `envoy`).
- The same finding on every item of a list is reported once, at the first item, with
  how many items carry it.
"""

from __future__ import annotations

import difflib
import os
import re
import types
import typing
from collections import defaultdict
from typing import Annotated, Any, Literal, cast

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from workbench.stellaris.models import TOOLS, GameDate
from workbench.validation import field_path, found, violation
from workbench.violation import Violation

TYPO = 0.8  # difflib ratio above which two names are one with a typo (`by_categry`)
ITEM_INDEX = re.compile(r"\[\d+\]")


def tool_locator(tool: str) -> str:
    return f"tool {tool}"


def check_output(tool: str, payload: Any, locator: str | None = None) -> tuple[bool, list[Violation]]:
    """Validate `payload` as the output of `tool`. Returns (valid, violations); valid
    means no `error`. A tool the seed does not define gives one `info`."""
    locator = locator or tool_locator(tool)
    model = TOOLS.get(tool)
    if model is None:
        return True, [unknown_tool(tool, locator)]
    errors = _schema_errors(model, payload, locator)
    drift = _drift(model, payload, locator) if isinstance(payload, dict) else []
    return not errors, collapse(errors) + collapse(drift)


def unknown_tool(tool: str, locator: str) -> Violation:
    near = difflib.get_close_matches(tool, list(TOOLS), n=1, cutoff=TYPO)
    hint = f"; did you mean `{near[0]}`?" if near else ""
    return Violation(
        locator,
        "info",
        "unknown_tool",
        "(record)",
        f"`{tool}` is not a tool of the specification; kept, not validated{hint}",
    )


# --- schema errors ---------------------------------------------------------------------


def _schema_errors(model: type[BaseModel], payload: Any, locator: str) -> list[Violation]:
    try:
        model.model_validate(payload)
        return []
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    return [_explain(model, payload, locator, error) for error in errors]


def _explain(model, payload, locator: str, error: ErrorDetails) -> Violation:
    loc = tuple(error["loc"])
    kind = error["type"]
    if kind == "missing":
        return Violation(locator, "error", "required_key", field_path(loc), _missing_message(model, payload, loc))
    if (error.get("ctx") or {}).get("field") or kind in ("date_format", "required_when_found"):
        return violation(locator, cast(dict, error), loc)  # an ErrorDetails is a dict, which `violation` reads
    annotation = annotation_at(model, loc)
    expected = describe(annotation) if annotation is not None else error["msg"]
    message = f"expected {expected}; found {_found(error.get('input'))}"
    if kind == "model_type" and not loc:
        message = f"expected a JSON object (the tool's output); found {_found(error.get('input'))}"
    return Violation(locator, "error", _rule(kind), field_path(loc), message)


def _rule(kind: str) -> str:
    if kind.endswith("_type") or kind in ("model_type", "model_attributes_type", "int_from_float"):
        return "wrong_type"
    return {"literal_error": "enum_value"}.get(kind, kind)


def _found(value) -> str:
    return f"{found(value)} ({_json_type(value)})"


def _json_type(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    return "object" if isinstance(value, dict) else type(value).__name__


def _missing_message(model, payload, loc: tuple) -> str:
    name = loc[-1]
    annotation = annotation_at(model, loc)
    expected = f"expected key `{name}`" + (f" ({describe(annotation)})" if annotation is not None else "")
    parent = value_at(payload, loc[:-1])
    siblings = list(parent) if isinstance(parent, dict) else []
    hint = near_key(model, loc, siblings)
    text = f"{expected}; found no such key"
    if siblings:
        shown = ", ".join(f"`{k}`" for k in siblings[:8]) + (", ..." if len(siblings) > 8 else "")
        text += f" (keys here: {shown})"
    return text + (f"; did you mean `{hint}`?" if hint else "")


def near_key(model, loc: tuple, siblings: list[str]) -> str | None:
    """The sibling key the writer probably meant for the missing `loc[-1]`: one the
    model declares as seen for it, else the closest unknown spelling."""
    name = loc[-1]
    owner = model_at(model, loc[:-1])
    known = set(_field_names(owner)) if owner is not None else set()
    unknown = [k for k in siblings if isinstance(k, str) and k not in known]
    info = _field_info(owner, name) if owner is not None else None
    declared = ((info.json_schema_extra or {}) if info is not None else {}).get("seen_as", [])
    for alias in declared:
        if alias in unknown:
            return alias
    close = [k for k in unknown if is_near(str(name), k)]
    return max(close, key=lambda k: difflib.SequenceMatcher(None, str(name), k).ratio()) if close else None


def is_near(expected: str, written: str) -> bool:
    """A typo (`by_categry`), the same words reordered (`monthly_net`), or the same
    words abbreviated (`total_pops`). Names that only share a word (`is_capital` for
    `is_habitat`) are not near: a fuzzy ratio alone would call them so."""
    if difflib.SequenceMatcher(None, expected, written).ratio() >= TYPO:
        return True
    ours, theirs = expected.split("_"), written.split("_")
    return len(ours) == len(theirs) and _words_pair_up(ours, theirs)


def _words_pair_up(ours: list[str], theirs: list[str]) -> bool:
    remaining = list(theirs)
    for word in ours:
        match = next((w for w in remaining if _same_word(word, w)), None)
        if match is None:
            return False
        remaining.remove(match)
    return True


def _same_word(a: str, b: str) -> bool:
    shared = len(os.path.commonprefix([a, b]))
    return a == b or shared >= 3 or difflib.SequenceMatcher(None, a, b).ratio() >= TYPO


# --- walking models and data together ------------------------------------------------------


def _field_names(model: type[BaseModel]) -> dict[str, str]:
    """JSON key -> attribute name (aliases included)."""
    return {(info.alias or name): name for name, info in model.model_fields.items()}


def _field_info(model: type[BaseModel], key):
    name = _field_names(model).get(key)
    return model.model_fields[name] if name is not None else None


def _strip(annotation):
    """`Annotated[X, ...]` -> X; `X | None` -> X (for walking, not for describing)."""
    while typing.get_origin(annotation) is Annotated:
        annotation = typing.get_args(annotation)[0]
    if _is_union(annotation):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) == 1:
            return _strip(members[0])
    return annotation


def _is_union(annotation) -> bool:
    return typing.get_origin(annotation) in (typing.Union, types.UnionType)


def _is_model(annotation) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def annotation_at(model: type[BaseModel], loc: tuple):
    """The annotation the model expects at `loc` (keys, list indexes, dict keys)."""
    annotation: Any = model  # then a field's annotation: a class, a union, a generic alias, ...
    for part in loc:
        annotation = _strip(annotation)
        if _is_model(annotation):
            info = _field_info(annotation, part)
            if info is None:
                return None
            annotation = info.annotation
        elif typing.get_origin(annotation) is list and isinstance(part, int):
            annotation = typing.get_args(annotation)[0]
        elif typing.get_origin(annotation) is dict:
            annotation = typing.get_args(annotation)[1] if typing.get_args(annotation) else Any
        else:
            return None
    return annotation


def model_at(model: type[BaseModel], loc: tuple) -> type[BaseModel] | None:
    annotation = _strip(annotation_at(model, loc)) if loc else model
    return annotation if _is_model(annotation) else None


def value_at(payload, loc: tuple):
    value = payload
    for part in loc:
        if isinstance(part, int) and isinstance(value, list) and part < len(value):
            value = value[part]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            return None
    return value


TYPE_WORDS = {int: "an integer", float: "a number", str: "a string", bool: "true or false", dict: "an object"}


def describe(annotation) -> str:
    """Plain words for what a field holds: `list[str]` -> "a list of strings"."""
    if annotation == GameDate:
        return "a date string `YYYY.MM.DD`"
    if typing.get_origin(annotation) is Annotated:
        return describe(typing.get_args(annotation)[0])
    if _is_union(annotation):
        members = typing.get_args(annotation)
        shown = [describe(a) for a in members if a is not type(None)]
        return " or ".join(shown) + (" or null" if type(None) in members else "")
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    if origin is list:
        return f"a list of {_plural(args[0])}" if args else "a list"
    if origin is dict:
        return f"an object of {_plural(args[1])}" if args else "an object"
    if _is_model(annotation):
        return "an object"
    return TYPE_WORDS.get(annotation, getattr(annotation, "__name__", str(annotation)))


def _plural(annotation) -> str:
    word = describe(annotation)
    plurals = {
        "an integer": "integers",
        "a number": "numbers",
        "a string": "strings",
        "true or false": "booleans",
        "an object": "objects",
    }
    return plurals.get(word, word)


# --- drift: keys and values beyond the seed ------------------------------------------------


def _drift(model: type[BaseModel], payload: dict, locator: str) -> list[Violation]:
    found_here: list[Violation] = []
    for loc, value, owner in _objects(model, payload, ()):
        names = _field_names(owner)
        for key_name, item in value.items():
            if key_name not in names:
                found_here.append(
                    Violation(
                        locator,
                        "info",
                        "undocumented_key",
                        field_path((*loc, key_name)),
                        f"key `{key_name}` is not in the specification; kept",
                    )
                )
                continue
            documented = ((owner.model_fields[names[key_name]].json_schema_extra) or {}).get("documented")
            if documented and isinstance(item, str) and item not in documented:
                found_here.append(
                    Violation(
                        locator,
                        "info",
                        "undocumented_value",
                        field_path((*loc, key_name)),
                        f"{key_name} = {item!r} is not among the values the specification names "
                        f"({', '.join(documented)}); kept",
                    )
                )
    return found_here


def _objects(model: type[BaseModel], value: dict, loc: tuple):
    """(location, object, model) for the payload's object and every object inside it
    that a nested model describes."""
    yield loc, value, model
    names = _field_names(model)
    for key_name, item in value.items():
        if key_name not in names:
            continue
        yield from _nested(model.model_fields[names[key_name]].annotation, item, (*loc, key_name))


def _nested(annotation, item, loc: tuple):
    annotation = _strip(annotation)
    if _is_model(annotation) and isinstance(item, dict):
        yield from _objects(annotation, item, loc)
    elif typing.get_origin(annotation) is list and isinstance(item, list):
        for index, element in enumerate(item):
            yield from _nested(typing.get_args(annotation)[0], element, (*loc, index))
    elif typing.get_origin(annotation) is dict and isinstance(item, dict):
        for name, element in item.items():
            yield from _nested(typing.get_args(annotation)[1], element, (*loc, name))


# --- one finding per kind ---------------------------------------------------------------------


def collapse(violations: list[Violation]) -> list[Violation]:
    """The same rule at the same place in every item of a list: reported once, at the
    first item, saying how many items carry it. Undocumented values are grouped by
    value too, since each value is its own drift."""
    groups: dict[tuple, list[Violation]] = defaultdict(list)
    for v in violations:
        detail = v.message if v.rule == "undocumented_value" else ""
        groups[(v.locator, v.rule, ITEM_INDEX.sub("[]", v.field), detail)].append(v)
    kept = []
    for members in groups.values():
        head = members[0]
        if len(members) > 1:
            others = ", ".join(f"`{m.field}`" for m in members[1:4]) + (", ..." if len(members) > 4 else "")
            head = Violation(
                head.locator,
                head.severity,
                head.rule,
                head.field,
                f"{head.message} (also at {len(members) - 1} more: {others})",
            )
        kept.append(head)
    return kept
