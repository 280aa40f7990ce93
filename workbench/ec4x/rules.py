"""Building blocks of the EC4X models: custom rule errors and seed enums.

What the real compiler accepts beyond the seed (drift, reported as `info`) is not an
error, so the models do not raise it: `drift.py` finds it as the screen decodes the
drafts, from the same declarations (`SeedEnum`, `seed.py`).
"""

from __future__ import annotations

import difflib
import functools
import types
import typing
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

from workbench.ec4x.seed import token
from workbench.screen import ScreenAs


def rule_error(rule: str, message: str) -> PydanticCustomError:
    # The message travels in the context, so braces in found values stay literal and the
    # shared formatter knows the message already says what was found.
    return PydanticCustomError(rule, "{message}", {"message": message, "says_found": True})


def fail(title: str, failures: list[tuple[str | tuple, PydanticCustomError, Any]]) -> None:
    """Raise every (field or path, error, input) at once, each located at its own field."""
    if failures:
        raise ValidationError.from_exception_data(
            title,
            [
                InitErrorDetails(type=error, loc=field if isinstance(field, tuple) else (field,), input=value)
                for field, error, value in failures
            ],
        )


def with_errors(exc: ValidationError | None, failures: list[tuple[tuple, PydanticCustomError, Any]], title: str):
    """A ValidationError holding the errors of `exc` (from the rest of the model) and
    `failures`, so a rule over the raw input is reported next to the field errors."""
    details = [
        InitErrorDetails(
            type=PydanticCustomError(e["type"], "{message}", {**(e.get("ctx") or {}), "message": e["msg"]}),
            loc=e["loc"],
            input=e["input"],
        )
        for e in (exc.errors(include_url=False) if exc else [])
    ]
    details += [InitErrorDetails(type=error, loc=loc, input=value) for loc, error, value in failures]
    return ValidationError.from_exception_data(title, details)


def missing(value: Any) -> bool:
    return value is None or value == []


def hint(value: str, candidates) -> str:
    return _hint(value, tuple(candidates))


@functools.lru_cache(maxsize=4096)
def _hint(value: str, candidates: tuple[str, ...]) -> str:
    # Cached: a model repeats its misspellings, and difflib is slow.
    close = difflib.get_close_matches(value, candidates, n=1, cutoff=0.6)
    return f"; did you mean `{close[0]}`?" if close else ""


@dataclass(frozen=True, eq=False)
class SeedEnum:
    """A field that holds one of the seed's `values`, matched the way the real compiler
    matches (see `token`). `compiler_only`: values only the real compiler knows;
    `aliases`: its other names for a seed value."""

    field: str
    values: tuple[str, ...]
    compiler_only: tuple[str, ...] = ()
    aliases: dict[str, str] = dataclass_field(default_factory=dict)

    @functools.cached_property
    def _lookup(self) -> dict[str, str]:
        lookup = {token(v): v for v in (*self.values, *self.compiler_only)}
        return lookup | {token(alias): target for alias, target in self.aliases.items()}

    @functools.cached_property
    def _seed_spelled(self) -> frozenset[str]:
        return frozenset(self.values)

    def canonical(self, value: Any) -> str | None:
        """The seed or compiler value a string stands for (None: no known value)."""
        if not isinstance(value, str):
            return None
        return value if value in self._seed_spelled else self._lookup.get(token(value))

    def spellings(self) -> tuple[str, ...]:
        """The usual spellings of the seed's values and aliases (not of the compiler-only
        values, which are errors): `join-fleet`, `join_fleet`, `JoinFleet`, `JOIN_FLEET`, ...
        What the screen lets through; a rarer spelling goes to pydantic."""
        found = set()
        for value in (*self.values, *self.aliases):
            words = value.split("-")
            for case in (str.lower, str.upper, str.capitalize):
                for joiner in ("-", "_", " ", ""):
                    found.add(joiner.join(case(w) for w in words))
                    found.add(joiner.join([case(words[0]), *(w.lower() for w in words[1:])]))
            found.add(words[0].lower() + "".join(w.capitalize() for w in words[1:]))  # camelCase
        # Kept only where the validator itself takes the spelling: the screen stays sound.
        return tuple(sorted(s for s in found if self.canonical(s) not in (None, *self.compiler_only)))


def seed_enum(
    field: str, values: tuple[str, ...], compiler_only: tuple[str, ...] = (), aliases: dict[str, str] | None = None
):
    """A string holding one of the seed's `values` in any spelling the real compiler
    takes (`SeedEnum`). The seed's own spelling is stored; another spelling is drift,
    found by `drift.py`. A value only the real compiler knows is an error that says so."""
    enum = SeedEnum(field, values, compiler_only, aliases or {})
    expected = "|".join(values)

    def check(value: str) -> str:
        canonical = enum.canonical(value)
        if canonical is None:
            raise rule_error(
                "enum_value",
                f"`{field}` must be one of {expected}; found {value!r}{hint(value, values)}",
            )
        if canonical in compiler_only:
            raise rule_error(
                "compiler_only_value",
                f"{value!r} is not one of the seed's values for `{field}` ({expected}); the real compiler "
                f"accepts it, but the seed is the contract, so it is an error",
            )
        return canonical

    return Annotated[str, enum, ScreenAs(Literal[enum.spellings()]), AfterValidator(check)]


def enum_of(annotation) -> SeedEnum | None:
    """The SeedEnum of a `seed_enum` annotation, or of `seed_enum | None` (None for any other)."""
    found = next((m for m in getattr(annotation, "__metadata__", ()) if isinstance(m, SeedEnum)), None)
    if found is None and typing.get_origin(annotation) in (typing.Union, types.UnionType):
        found = next(filter(None, map(enum_of, typing.get_args(annotation))), None)
    return found


def seed_enum_of(annotation) -> SeedEnum:
    """The SeedEnum of an annotation made by `seed_enum`; a TypeError for any other."""
    found = enum_of(annotation)
    if found is None:
        raise TypeError(f"{annotation!r} is not a seed_enum annotation")
    return found
