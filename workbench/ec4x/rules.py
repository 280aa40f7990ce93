"""Building blocks of the EC4X models: custom rule errors, seed enums, drift passes.

Drift (what the real compiler accepts beyond the seed, reported as `info`) is found by
validating lines a second time in drift mode (`DRIFT_MODE` in the validation
context): the validators that accept a drift value quietly in the normal pass raise
a drift error in that pass, so each finding carries its exact JSON path. The second
pass only validates the lines on which the first one saw drift (`DRIFT_LINES`).
"""

from __future__ import annotations

import difflib
import functools
from typing import Annotated, Any

from pydantic import AfterValidator, ValidationError, ValidationInfo
from pydantic_core import InitErrorDetails, PydanticCustomError

from workbench.ec4x.seed import token

DRIFT_MODE = "drift_mode"
DRIFT_LINES = "drift_lines"  # positions in the batch of the lines that hold drift
_LINE = "line"  # position of the line being validated
# Error types raised only in drift mode; everything else in that pass is ignored.
DRIFT_RULES = ("enum_spelling", "compiler_only_field", "compiler_requires_field")


def rule_error(rule: str, message: str) -> PydanticCustomError:
    # The message travels in the context, so braces in found values stay literal and the
    # shared formatter knows the message already says what was found.
    return PydanticCustomError(rule, "{message}", {"message": message, "says_found": True})


def fail(title: str, failures: list[tuple[str | tuple, PydanticCustomError, Any]]) -> None:
    """Raise every (field or path, error, input) at once, each located at its own field."""
    if failures:
        raise ValidationError.from_exception_data(title, [
            InitErrorDetails(type=error, loc=field if isinstance(field, tuple) else (field,), input=value)
            for field, error, value in failures
        ])


def with_errors(exc: ValidationError | None, failures: list[tuple[tuple, PydanticCustomError, Any]], title: str):
    """A ValidationError holding the errors of `exc` (from the rest of the model) and
    `failures`, so a rule over the raw input is reported next to the field errors."""
    details = [
        InitErrorDetails(
            type=PydanticCustomError(e["type"], "{message}", {**(e.get("ctx") or {}), "message": e["msg"]}),
            loc=e["loc"], input=e["input"],
        )
        for e in (exc.errors(include_url=False) if exc else [])
    ]
    details += [InitErrorDetails(type=error, loc=loc, input=value) for loc, error, value in failures]
    return ValidationError.from_exception_data(title, details)


def missing(value: Any) -> bool:
    return value is None or value == []


def in_drift_mode(info: ValidationInfo) -> bool:
    return bool(info.context and info.context.get(DRIFT_MODE))


def note_drift(info: ValidationInfo) -> None:
    if info.context is not None and _LINE in info.context:
        info.context.setdefault(DRIFT_LINES, set()).add(info.context[_LINE])


def count_lines(value: Any, handler, info: ValidationInfo):
    """Wraps each line of a batch so drift can be traced back to the line it is on."""
    if info.context is not None:
        info.context[_LINE] = info.context.get(_LINE, -1) + 1
    return handler(value)


def with_drift(data: Any, handler, info: ValidationInfo, failures: list, title: str):
    """Validate `data` with `handler`; `failures` are drift found on the raw input (seed-valid
    values the real compiler treats differently). They are raised only in drift mode, next to
    whatever else the model reports there, so each finding keeps its exact path."""
    if not failures:
        return handler(data)
    failures = [(loc if isinstance(loc, tuple) else (loc,), error, value) for loc, error, value in failures]
    note_drift(info)
    if not in_drift_mode(info):
        return handler(data)
    try:
        handler(data)
    except ValidationError as exc:
        raise with_errors(exc, failures, title) from None
    raise with_errors(None, failures, title)


def hint(value: str, candidates) -> str:
    return _hint(value, tuple(candidates))


@functools.lru_cache(maxsize=4096)
def _hint(value: str, candidates: tuple[str, ...]) -> str:
    # Cached: a model repeats its misspellings, and difflib costs about a millisecond a call.
    close = difflib.get_close_matches(value, candidates, n=1, cutoff=0.6)
    return f"; did you mean `{close[0]}`?" if close else ""


def seed_enum(field: str, values: tuple[str, ...], compiler_only: tuple[str, ...] = (),
              aliases: dict[str, str] | None = None):
    """A string holding one of the seed's `values`, matched the way the real compiler
    matches (case, `-` and `_` ignored). The seed's own spelling is stored; any other
    spelling is drift. A value only the real compiler knows is an error that says so."""
    lookup = {token(v): v for v in (*values, *compiler_only)}
    lookup |= {token(alias): target for alias, target in (aliases or {}).items()}
    expected = "|".join(values)
    seed_values = frozenset(values)

    def check(value: str, info: ValidationInfo) -> str:
        if value in seed_values:  # the common case, kept cheap
            return value
        canonical = lookup.get(token(value))
        if canonical is None:
            raise rule_error(
                "enum_value",
                f"`{field}` must be one of {expected}; found {value!r}{hint(value, values)}",
            )
        if canonical != value:
            note_drift(info)
            if in_drift_mode(info):
                raise rule_error(
                    "enum_spelling",
                    f"{value!r} is not the seed's spelling of `{canonical}`; the real compiler normalises "
                    f"enum spellings, and the seed only asks that the value be known to the compiler, "
                    f"so it is accepted as `{canonical}` (drift, not an error)",
                )
        if canonical in compiler_only:
            raise rule_error(
                "compiler_only_value",
                f"{value!r} is not one of the seed's values for `{field}` ({expected}); the real compiler "
                f"accepts it, but the seed is the contract, so it is an error",
            )
        return canonical

    return Annotated[str, AfterValidator(check)]
