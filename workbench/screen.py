"""A fast, sound screen derived from the pydantic models.

Building Python objects for every record makes pydantic cost about as much per line as
DuckDB's whole JSON load. So bulk validation runs in two steps: msgspec decoders,
generated here from the same pydantic models, pass every line; only lines they refuse
(and types whose models carry custom Python rules) go through pydantic, which writes
the precise violations. The screen is *sound*: a line it accepts is one pydantic
accepts. Where it cannot be exact it is stricter, which only sends more lines to
pydantic, never fewer.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union

import annotated_types
import msgspec
from pydantic import BaseModel


@dataclass(frozen=True)
class ScreenAs:
    """Annotated metadata: how the screen checks a field pydantic checks with Python
    code (the screen's type must accept a subset of what pydantic accepts)."""

    annotation: Any


class Unscreenable(Exception):
    """A model with rules only pydantic can run: its records always go to pydantic."""


CONSTRAINTS = {annotated_types.Ge: "ge", annotated_types.Le: "le", annotated_types.Gt: "gt",
               annotated_types.Lt: "lt"}


def screen_type(annotation, cache: dict | None = None):
    """The msgspec type for a pydantic annotation; raises Unscreenable."""
    cache = {} if cache is None else cache
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _struct(annotation, cache)
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        return _annotated(args[0], args[1:], cache)
    if origin is Literal or annotation in (str, int, float, bool, Any, type(None)):
        return annotation
    if origin is list:
        return list[screen_type(args[0], cache)]
    if origin is dict:
        return dict[screen_type(args[0], cache), screen_type(args[1], cache)]
    if origin in (Union, types.UnionType):
        members = set(args)
        if {int, float} <= members:  # msgspec's float takes JSON ints, as strict pydantic does
            members -= {int}
        return Union[tuple(screen_type(a, cache) for a in members)]
    raise Unscreenable(f"no screen for {annotation!r}")


def _annotated(base, metadata, cache):
    for item in metadata:
        if isinstance(item, ScreenAs):
            return item.annotation
    constraints = {}
    for item in metadata:
        for part in getattr(item, "metadata", [item]):  # FieldInfo carries its constraints in .metadata
            if type(part) in CONSTRAINTS:
                name = CONSTRAINTS[type(part)]
                constraints[name] = getattr(part, name)
            elif hasattr(part, "pattern") and part.pattern is not None:
                # Python's `$` also matches before a final newline; pydantic's does not.
                constraints["pattern"] = part.pattern.removesuffix("$") + r"\Z"
            elif callable(getattr(part, "func", None)):
                raise Unscreenable(f"custom validator on {base!r}")
    inner = screen_type(base, cache)
    return Annotated[inner, msgspec.Meta(**constraints)] if constraints else inner


def _struct(model: type[BaseModel], cache: dict, tag: str | None = None, tag_field: str | None = None):
    key = (model, tag)
    if key in cache:
        return cache[key]
    decorators = model.__pydantic_decorators__
    check = getattr(model, "__screen_check__", None)
    if (decorators.model_validators or decorators.field_validators) and check is None:
        raise Unscreenable(f"{model.__name__} has custom rules and no __screen_check__")
    fields = []
    for name, info in model.model_fields.items():
        if name == tag_field:
            continue
        annotation = Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation
        kind = screen_type(annotation, cache)
        fields.append((name, kind) if info.is_required() else (name, kind, info.default))
    options = {"tag": tag, "tag_field": tag_field} if tag else {}
    if check is not None:
        options["namespace"] = {"__post_init__": _post_init(check)}
    cache[key] = msgspec.defstruct(f"{model.__name__}Screen", fields, **options)
    return cache[key]


def _post_init(check):
    """msgspec runs `__post_init__` on each decoded struct; a ValueError fails the decode."""
    def __post_init__(self):
        broken = check(self)
        if broken:
            raise ValueError(broken)
    return __post_init__


class Screen:
    """A decoder for a union of `models` tagged by `tag_field`, plus an optional
    `fallback` model for records whose tag is outside the union (accepted only where
    `fallback_accepts(decoded)` holds). `unscreened` lists the tags it cannot screen:
    their records always go to pydantic."""

    def __init__(self, models: dict[str, type[BaseModel]], tag_field: str,
                 fallback: type[BaseModel] | None = None, fallback_accepts=lambda decoded: True):
        cache: dict = {}
        structs, self.unscreened = [], set()
        for tag, model in models.items():
            try:
                structs.append(_struct(model, cache, tag=tag, tag_field=tag_field))
            except Unscreenable:
                self.unscreened.add(tag)
        self.decoder = msgspec.json.Decoder(Union[tuple(structs)])
        self.fallback = msgspec.json.Decoder(_struct(fallback, cache)) if fallback else None
        self.fallback_accepts = fallback_accepts

    def passes(self, texts: list[str]) -> list[bool]:
        """Which lines the screen accepts (one C call per line, no Python objects kept)."""
        return [self._accepts(text) for text in texts]

    def _accepts(self, text: str) -> bool:
        try:
            self.decoder.decode(text)
            return True
        except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
            pass
        if self.fallback is None:
            return False
        try:
            return self.fallback_accepts(self.fallback.decode(text))
        except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
            return False
