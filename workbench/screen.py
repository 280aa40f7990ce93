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

import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, replace
from dataclasses import field as dataclass_field
from operator import attrgetter
from typing import Annotated, Any, Literal, Union, cast

import annotated_types
import msgspec
import numpy as np
from pydantic import BaseModel


@dataclass(frozen=True)
class ScreenAs:
    """Annotated metadata: how the screen checks a field pydantic checks with Python
    code (the screen's type must accept a subset of what pydantic accepts), and what
    of it only Python can say: `check(value)` runs on each decoded value and must hold."""

    annotation: Any
    check: Callable[[Any], bool] | None = None


@dataclass(frozen=True)
class ScreenVariants:
    """A model's `__screen_variants__`: the screen decodes it as a union tagged by the
    value of `field`, one struct per spelling the screen lets through (`spellings`:
    spelling -> the value it stands for). In the struct of a value, the fields that
    value `requires` must be present, not null and not an empty list, and the fields of
    `narrowed[value]` take the narrower annotation given there. So msgspec checks, in
    C, the rules a model's validator applies per value, with no Python per record."""

    field: str
    spellings: dict[str, str]
    requires: dict[str, tuple[str, ...]]
    narrowed: dict[str, dict[str, Any]] = dataclass_field(default_factory=dict)


@dataclass(frozen=True)
class Watching:
    """A screen that watches what it decodes (`model_screen(model, watching)`): it
    accepts what the plain screen accepts, and hands each struct of a model it decodes
    (of the variant spelled `tag`, for a model decoded by its variants) to
    `watch(model, tag)`, once the struct's checks pass; None watches none of them. A
    watcher must not raise: the screen would refuse the line. A field of `unset(model)`
    defaults to msgspec.UNSET, so a watcher tells one left out from one written null."""

    watch: Callable[[type, str | None], Callable[[Any], None] | None] = lambda model, tag: None
    unset: Callable[[type], tuple[str, ...]] = lambda model: ()


class _Cache(dict):
    """The structs built so far for one screen, and what they watch."""

    def __init__(self, watching: Watching | None = None):
        super().__init__()
        self.watching = watching or Watching()


class Unscreenable(Exception):
    """A model with rules only pydantic can run: its records always go to pydantic."""


CONSTRAINTS = {annotated_types.Ge: "ge", annotated_types.Le: "le", annotated_types.Gt: "gt", annotated_types.Lt: "lt"}


def screen_type(annotation, cache: _Cache | None = None):
    """The msgspec type for a pydantic annotation; raises Unscreenable."""
    cache = _Cache() if cache is None else cache
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _struct(annotation, cache)
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        return _annotated(args[0], args[1:], cache)
    if origin is Literal or annotation in (str, int, float, bool, Any, type(None)):
        return annotation
    if origin is list:
        return types.GenericAlias(list, (screen_type(args[0], cache),))
    if origin is dict:
        return types.GenericAlias(dict, (screen_type(args[0], cache), screen_type(args[1], cache)))
    if origin in (Union, types.UnionType):
        members = set(args)
        if {int, float} <= members:  # msgspec's float takes JSON ints, as strict pydantic does
            members -= {int}
        return Union[tuple(screen_type(a, cache) for a in members)]  # noqa: UP007  (a union made at run time)
    raise Unscreenable(f"no screen for {annotation!r}")


def _annotated(base, metadata, cache):
    for item in metadata:
        if isinstance(item, ScreenAs):
            if item.check is not None:  # runs on a model's own field only (`_fields_struct`)
                raise Unscreenable(f"a ScreenAs check inside {base!r}")
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


def _struct(
    model: type[BaseModel], cache: _Cache, tag: str | None = None, tag_field: str | None = None, closed: bool = False
):
    key = (model, tag, closed)
    if key in cache:
        return cache[key]
    decorators = model.__pydantic_decorators__
    check = getattr(model, "__screen_check__", None)
    variants = getattr(model, "__screen_variants__", None) if tag is None else None
    if (decorators.model_validators or decorators.field_validators) and check is None and variants is None:
        raise Unscreenable(f"{model.__name__} has custom rules and no __screen_check__ or __screen_variants__")
    if variants is not None:
        cache[key] = Union[  # noqa: UP007  (a union made at run time)
            tuple(
                _fields_struct(
                    model,
                    cache,
                    check,
                    closed,
                    spelling,
                    variants.field,
                    variants.requires.get(value, ()),
                    variants.narrowed.get(value, {}),
                )
                for spelling, value in variants.spellings.items()
            )
        ]
    else:
        cache[key] = _fields_struct(model, cache, check, closed, tag, tag_field)
    return cache[key]


def _fields_struct(
    model: type[BaseModel],
    cache: _Cache,
    check,
    closed: bool,
    tag: str | None,
    tag_field: str | None,
    required: tuple[str, ...] = (),
    narrowed: dict | None = None,
):
    """The struct of a model's fields (but the tag's); those in `required` must be
    present, not null and not empty, and those in `narrowed` take the annotation given."""
    fields: list[tuple[Any, ...]] = []  # (name, type) or (name, type, default)
    tests: list[tuple[str, Callable[[Any], bool]]] = []
    unset = cache.watching.unset(model)
    for name, info in model.model_fields.items():
        if name == tag_field:
            continue
        # A check of the field's own value runs in the struct's __post_init__.
        checked = [item for item in info.metadata if isinstance(item, ScreenAs) and item.check is not None]
        tests += [(name, item.check) for item in checked if item.check is not None]
        metadata = [replace(item, check=None) if item in checked else item for item in info.metadata]
        annotation = Annotated[(info.annotation, *metadata)] if metadata else info.annotation
        kind = screen_type((narrowed or {}).get(name, annotation), cache)
        if name in required:
            fields.append((name, _present(kind)))
        elif info.is_required():
            fields.append((name, kind))
        elif name in unset:
            fields.append((name, kind, msgspec.UNSET))
        else:
            # pydantic's factories here take no argument (none of the models' takes the data)
            factory = cast(Callable[[], Any] | None, info.default_factory)
            default = msgspec.field(default_factory=factory) if factory is not None else info.default
            fields.append((name, kind, default))
    # Decoded structs hold no cycles: the garbage collector need not track them.
    options: dict[str, Any] = {"tag": tag, "tag_field": tag_field, "gc": False} if tag is not None else {"gc": False}
    options["kw_only"] = True  # required fields may follow optional ones
    if closed or model.model_config.get("extra") == "forbid":
        options["forbid_unknown_fields"] = True
    watch = cache.watching.watch(model, tag)
    if check is not None or tests or watch is not None:
        options["namespace"] = {"__post_init__": _post_init(check, tests, watch)}
    return msgspec.defstruct(f"{model.__name__}Screen", fields, **options)


def _present(kind):
    """The screen type of a value that must be there: not null, and not an empty list."""
    if typing.get_origin(kind) in (Union, types.UnionType):
        members = tuple(a for a in typing.get_args(kind) if a is not type(None))
        kind = Union[members] if len(members) > 1 else members[0]  # noqa: UP007  (a union made at run time)
    base = typing.get_args(kind)[0] if typing.get_origin(kind) is Annotated else kind
    if typing.get_origin(base) is list:
        return Annotated[kind, msgspec.Meta(min_length=1)]
    return kind


def _post_init(check, tests: list[tuple[str, Callable[[Any], bool]]], watch: Callable[[Any], None] | None):
    """msgspec runs `__post_init__` on each decoded struct; a ValueError fails the decode.
    It runs the model's `check` (a reason when the struct breaks a rule) and each
    field's test (`ScreenAs.check`, on a value that is not None), then hands the struct
    that passed them to `watch` (`Watching`)."""
    if check is None and not tests:
        return watch  # one Python call per struct, not two
    getters = [(attrgetter(name), name, test) for name, test in tests]

    def __post_init__(self):
        broken = check(self) if check is not None else None
        if broken:
            raise ValueError(broken)
        for get, name, test in getters:
            value = get(self)
            if value is not None and not test(value):
                raise ValueError(f"{name} fails its check")
        if watch is not None:
            watch(self)

    return __post_init__


# Decoders kept for the sets of undocumented tags met so far.
MAX_DECODERS = 32
# pydantic-core refuses JSON nested 200 deep (msgspec goes deeper): the screen passes no
# line with this many opening brackets (more than its depth), so pydantic decides.
DEPTH_BOUND = 190


def maybe_too_deep(data: bytes, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Which lines (`data[starts[i]:ends[i]]`, in order) hold DEPTH_BOUND opening
    brackets or more; counted a few MiB of `data` at a time, to keep memory small."""
    counts = np.zeros(len(starts), np.int64)
    view = np.frombuffer(data, np.uint8)
    for low in range(0, len(view), _COUNT_BYTES):
        part = view[low : low + _COUNT_BYTES]
        # `[` (0x5B) and `{` (0x7B) are the only bytes that read `{` with bit 5 set: one
        # comparison instead of two and an OR (docs/performance.md).
        opening = np.flatnonzero((part | 0x20) == ord("{")) + low
        first, last = np.searchsorted(ends, low, "right"), np.searchsorted(starts, low + len(part))
        counts[first:last] += np.searchsorted(opening, ends[first:last]) - np.searchsorted(opening, starts[first:last])
    return counts >= DEPTH_BOUND


_COUNT_BYTES = 8 << 20


def model_screen(model: type[BaseModel], watching: Watching | None = None) -> msgspec.json.Decoder:
    """The screen of one model, watching what it decodes (`watching`) or not; raises
    Unscreenable."""
    return msgspec.json.Decoder(_struct(model, _Cache(watching)))


class Screen:
    """A decoder for a union of `models` tagged by `tag_field`, plus an optional
    `fallback` model for records whose tag is outside the union (accepted only where
    `fallback_accepts(decoded)` holds). `unscreened` lists the tags it cannot screen:
    their records always go to pydantic."""

    def __init__(
        self,
        models: dict[str, type[BaseModel]],
        tag_field: str,
        fallback: type[BaseModel] | None = None,
        fallback_accepts=lambda decoded: True,
    ):
        cache = _Cache()
        structs, self.unscreened = [], set()
        for tag, model in models.items():
            try:
                structs.append(_struct(model, cache, tag=tag, tag_field=tag_field))
            except Unscreenable:
                self.unscreened.add(tag)
        self.decoder = msgspec.json.Decoder(Union[tuple(structs)])  # noqa: UP007  (a union made at run time)
        self.fallback = msgspec.json.Decoder(_struct(fallback, cache)) if fallback else None
        self.fallback_accepts = fallback_accepts
        self._models = {tag: model for tag, model in models.items() if tag not in self.unscreened}
        self._fallback_model, self._tag_field, self._cache = fallback, tag_field, cache
        self._arrays: dict[tuple[frozenset[str], bool], msgspec.json.Decoder] = {}

    def lines(self, other_tags: frozenset[str], closed: bool = False) -> msgspec.json.Decoder:
        """The screen of many records in one call (`decode_lines`), whose tags are the
        models' or `other_tags` (screened as the fallback model: a tagged union needs
        each tag named). `closed`: a record with a top-level key its model does not
        list is refused too."""
        key = (other_tags, closed)
        if key not in self._arrays:
            if len(self._arrays) >= MAX_DECODERS:  # a long `--watch` meets many sets of types
                self._arrays.clear()
                for cached in [k for k in self._cache if k[0] is self._fallback_model and k[1] is not None]:
                    del self._cache[cached]
            fallback = self._fallback_model
            if other_tags and fallback is None:
                raise ValueError("tags other than the models' are screened as the fallback model, and there is none")
            tagged: dict[str, type[BaseModel]] = {
                **self._models,
                **(dict.fromkeys(other_tags, fallback) if fallback else {}),
            }
            structs = [_struct(model, self._cache, tag, self._tag_field, closed) for tag, model in tagged.items()]
            self._arrays[key] = msgspec.json.Decoder(Union[tuple(structs)])  # noqa: UP007  (a union made at run time)
        return self._arrays[key]

    def passes(self, texts: list[str]) -> list[bool]:
        """Which lines the screen accepts (one C call per line, no Python objects kept)."""
        return [self.accepts(text) for text in texts]

    def accepts(self, text: str | bytes) -> bool:
        opened = text.count(b"[") + text.count(b"{") if isinstance(text, bytes) else text.count("[") + text.count("{")
        if opened >= DEPTH_BOUND:
            return False
        return self._decodes(text)

    def _decodes(self, text: str | bytes) -> bool:
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


# Where msgspec says the error is: the path at the end of its message (a value it
# quotes earlier in the message may hold any text).
_AT_ELEMENT = re.compile(r"- at `\$\[(\d+)\][^`]*`\Z")
_AT_BYTE = re.compile(r"\(byte (\d+)\)\Z")


def refused(decoder: msgspec.json.Decoder, lines: memoryview, starts: np.ndarray) -> list[int] | None:
    """The positions of the lines of `lines` (JSON values, one a line, starting at the
    offsets `starts`; blank lines between them are skipped) that `decoder` refuses, in
    one pass: on a refusal the decoding goes on from the next line. None when msgspec
    does not say which line it refused."""
    found: list[int] = []
    first = 0
    while first < len(starts):
        at = int(starts[first])
        try:
            decoder.decode_lines(lines[at:])
            return found
        except msgspec.ValidationError as exc:
            match = _AT_ELEMENT.search(str(exc))
            index = first + int(match.group(1)) if match else None
        except msgspec.DecodeError as exc:
            match = _AT_BYTE.search(str(exc))
            index = int(np.searchsorted(starts, at + int(match.group(1)), "right")) - 1 if match else None
        except RecursionError:
            index = None
        if index is None or not first <= index < len(starts):
            return None
        found.append(index)
        first = index + 1
    return found
