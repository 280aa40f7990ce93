"""Drift in order drafts: what the real compiler accepts beyond the seed, reported as
`info`, once per kind and file, at the first line and path it appears on, with how many
lines carry it. None of it is an error, so the models do not raise it; it is found here,
from the same declarations:

- `enum_spelling`: a value of a seed enum (`SeedEnum`, read off the models' fields) in
  another spelling the real compiler takes (`Move` for `move`, an alias);
- `compiler_requires_field`: a seed-valid command the real compiler refuses for a field
  it leaves out (`seed.COMPILER_SYSTEM_TARGET_COMMANDS`, `seed.COMPILER_ESPIONAGE_REQUIRES`);
- `compiler_only_field`: a top-level list only the real compiler reads
  (`seed.COMPILER_ONLY_LISTS`).

Each place a value may drift (`PLACES`) is watched where the draft is decoded anyway:
the order screen's structs note, as msgspec builds them, the commands that may hold
drift (`DriftWatch`, through `WATCHING`), so a valid draft costs no second reading. A
draft the screen refuses is read by Python's parser and walked (`walked`). Both read a
repeated key by its last value, as pydantic does. What a value means (its seed value)
is asked of the `SeedEnum` once per distinct value.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import operator
import re
import threading
import typing
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import BaseModel

from workbench.ec4x import seed
from workbench.ec4x.orders import EspionageAction, FleetCommand, OrderDraft, model_at
from workbench.ec4x.rules import SeedEnum, enum_of
from workbench.jsonl import LineChunk
from workbench.screen import Watching
from workbench.validation import line_count
from workbench.violation import Violation


def _system_target_message(command: str, name: str) -> str:
    return (
        f"`{command}` without `{name}` is valid by the seed (its prompt gives `{command}` no target), but the "
        f"real compiler refuses it: it requires a targetSystemId for patrol, guard-colony and guard-starbase "
        f"as for the system-target commands; the seed is the contract, so this is drift, not an error"
    )


def _espionage_target_message(operation: str, name: str) -> str:
    return (
        f"`{operation}` without `{name}` is valid by the seed (its prompt gives it no target), but the real "
        f"compiler refuses every espionage operation without a {name}; the seed is the contract, so this is "
        f"drift, not an error"
    )


# What the real compiler requires beyond the seed: for a command model and its enum
# field, the fields each seed value must not leave null (only where the seed does not),
# and what the finding says.
COMPILER_REQUIRES: dict[tuple[type[BaseModel], str], tuple[dict[str, tuple[str, ...]], Callable[[str, str], str]]] = {
    (FleetCommand, "commandType"): (
        dict.fromkeys(seed.COMPILER_SYSTEM_TARGET_COMMANDS, ("targetSystemId",)),
        _system_target_message,
    ),
    (EspionageAction, "operation"): (
        {
            operation: tuple(name for name in seed.COMPILER_ESPIONAGE_REQUIRES if name not in requires)
            for operation, requires in seed.ESPIONAGE_REQUIRES.items()
        },
        _espionage_target_message,
    ),
}


@dataclass(frozen=True)
class Place:
    """Where a draft may hold drift: `key` is a top-level key, holding a list of commands
    (`listed`), one command, or (no `field`) a list only the compiler reads. `requires`
    and `says` are the place's entry in COMPILER_REQUIRES, if any. A place with a
    `field` has its `enum`."""

    key: str
    listed: bool = False
    field: str | None = None
    enum: SeedEnum | None = None
    requires: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    says: Callable[[str, str], str] | None = None

    @functools.cached_property  # read per command by `walked`
    def watched(self) -> tuple[str, ...]:
        """The fields whose absence the compiler refuses for some values."""
        return tuple(sorted({name for names in self.requires.values() for name in names}))

    def path(self, index: int | None, name: str | None) -> str:
        where = f"{self.key}[{index}]" if self.listed else self.key
        return f"{where}.{name}" if name else where

    def field_enum(self) -> SeedEnum:
        """The enum of the place's field (a list only the compiler reads has none)."""
        if self.enum is None:
            raise TypeError(f"`{self.key}` holds no seed enum: it is a list only the compiler reads")
        return self.enum

    def requirement(self, value: str, name: str) -> str:
        """What the finding says of `value` leaving out a field `name` it `requires`."""
        if self.says is None:
            raise TypeError(f"`{self.path(None, self.field)}` has no field the compiler requires")
        return self.says(value, name)


def _field_enum(model, name: str) -> SeedEnum | None:
    info = model.model_fields[name]
    return enum_of(typing.Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation)


def _places() -> list[Place]:
    places = [Place(key) for key in seed.COMPILER_ONLY_LISTS]
    for key, info in OrderDraft.model_fields.items():
        command = model_at((key,))
        if command is None:
            continue
        listed = typing.get_origin(info.annotation) is list
        for name in command.model_fields:
            enum = _field_enum(command, name)
            if enum is not None:
                requires, says = COMPILER_REQUIRES.get((command, name), ({}, None))
                places.append(Place(key, listed, name, enum, requires, says))
    return places


def findings_of(place: Place, value: str, lacks: list[str]) -> list[tuple[str, str | None, str]]:
    """(rule, field, message) of each drift a value at `place` is, with the watched fields
    its command leaves out."""
    if place.field is None:
        return [
            (
                "compiler_only_field",
                None,
                f"`{place.key}` is not a field of the seed's v1 JSON contract, but the seed's prompt lists "
                f"Repair & Scrap among the draft's categories and the real compiler reads this list, so it is "
                f"reported as drift rather than rejected; kept, entries not checked",
            )
        ]
    canonical = place.field_enum().canonical(value)
    if canonical is None:
        return []
    found: list[tuple[str, str | None, str]] = []
    if canonical != value:
        found.append(
            (
                "enum_spelling",
                place.field,
                f"{value!r} is not the seed's spelling of `{canonical}`; the real compiler normalises enum "
                f"spellings, and the seed only asks that the value be known to the compiler, so it is "
                f"accepted as `{canonical}` (drift, not an error)",
            )
        )
    for name in place.requires.get(canonical, ()):
        if name in lacks:
            found.append(("compiler_requires_field", name, place.requirement(canonical, name)))
    return found


PLACES = _places()
# The drift occurrences of lines: one row per value that may be drift (`findings_of`
# says which kinds it is), at its line (`seq`) and its command's index in a list.
# (`Schema.empty_table` would import pandas in every command that reads EC4X.)
NO_OCCURRENCES = pa.Table.from_batches(
    [],
    schema=pa.schema(
        [
            ("seq", pa.int64()),
            ("idx", pa.int64()),
            ("place", pa.int64()),
            ("value", pa.string()),
            ("lacks", pa.string()),
        ]
    ),
)


@dataclass(frozen=True)
class _Watched:
    """A place in a command, as drift is looked for there: `number` in PLACES, its
    field, the seed's spellings of its values, the values the compiler wants more of."""

    number: int
    place: Place
    field: str
    seed_spelled: frozenset[str]
    wanting: frozenset[str]

    def drifts(self, value: str, lacks: str) -> bool:
        """Whether a value is drift, or may be: not in the seed's spelling, or leaving out
        (`lacks`: comma-joined) fields the compiler wants of it."""
        return value not in self.seed_spelled or bool(lacks and value in self.wanting)


_WATCHED = [
    _Watched(
        number,
        place,
        place.field,
        frozenset(place.field_enum().values),
        frozenset(value for value, needs in place.requires.items() if needs),
    )
    for number, place in enumerate(PLACES)
    if place.field is not None
]
_ONLY_LISTS = [(number, place.key) for number, place in enumerate(PLACES) if place.field is None]


def walked(numbers: list[int], texts: list[str]) -> pa.Table:
    """The drift occurrences of the drafts the order screen refused (`texts`, numbered
    `numbers`): each read as JSON (a repeated key by its last value, as pydantic reads
    it) and walked. A text that is no JSON holds no drift: it is no record for pydantic
    either."""
    rows = []
    for number, text in zip(numbers, texts):
        draft = _json(text)
        if isinstance(draft, dict):
            rows += [(number, *found) for found in _walk(draft)]
    columns: list[Sequence] = list(zip(*rows)) if rows else [[]] * 5
    return pa.table(columns, schema=NO_OCCURRENCES.schema)


def _json(text: str):
    """A text read by msgspec (faster than Python's parser), or by Python's parser
    where msgspec cannot read it (a number beyond 64 bits, say); None where neither can."""
    try:
        return _READ_JSON(text)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        pass
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


_READ_JSON = msgspec.json.Decoder().decode


def _walk(draft: dict) -> list[tuple]:
    """(idx, place, value, lacks) of the drift of a draft read as JSON: a list only the
    compiler reads, there even as null; a value that `_Watched.drifts`, where a value is
    a JSON string, a command a JSON object and a list a JSON array."""
    found: list[tuple[int | None, int, str, str]] = [
        (None, number, "", "") for number, key in _ONLY_LISTS if key in draft
    ]
    for watched in _WATCHED:
        place = watched.place
        held = draft.get(place.key)
        items: Iterable[tuple[int | None, typing.Any]]
        if not place.listed:
            items = [(None, held)]
        else:
            items = enumerate(held) if isinstance(held, list) else ()
        for index, item in items:
            if not isinstance(item, dict):
                continue
            value = item.get(watched.field)
            if not isinstance(value, str):
                continue
            lacks = ",".join([name for name in place.watched if item.get(name) is None])
            if watched.drifts(value, lacks):
                found.append((index, watched.number, value, lacks))
    return found


class DriftWatch:
    """The drift of the drafts the order screen accepts, seen as msgspec decodes them
    (`WATCHING`), as `_walk` finds it. A command that may hold drift is noted as it is
    decoded; once its draft is, it is drift of that draft where the draft holds it, at
    its index there. A command of a list given again under the same key, or of a draft
    the screen refused, is not held: so a repeated key is read by its last value, as
    pydantic reads it. After each run of lines the screen says which lines it accepted
    (`bulk.Watcher`). Nothing decoded is kept: kept objects make the garbage collector
    walk them again and again."""

    def __init__(self) -> None:
        self.notes: list[tuple] = []  # (place, value, lacks, command) until their draft is decoded
        self.drafts = 0  # decoded since the last run
        self._found: list[tuple[int, list[tuple]]] = []  # (draft, its occurrences) since the last run
        # Columns, not rows: kept rows made the watch slower.
        self._seen: list[list] = [[], [], [], [], []]  # line position, idx, place, value, lacks
        self._unsure: list[int] = []  # line positions to walk (`accepted`)
        self._outer: DriftWatch | None = None

    def __enter__(self) -> DriftWatch:
        self._outer = _WATCHING.watch
        _WATCHING.watch = self
        return self

    def __exit__(self, *exc) -> None:
        _WATCHING.watch = self._outer

    def decoded(self, draft) -> None:
        """A draft decoded that may hold drift: the lists only the compiler reads that it
        has, and the commands noted that it holds."""
        only_lists = _only_lists(draft)
        found = (
            []
            if only_lists == _NONE_THERE
            else [
                (None, number, "", "")
                for (number, _), held in zip(_ONLY_LISTS, only_lists)
                if held is not msgspec.UNSET
            ]
        )
        for place, value, lacks, command in self.notes:
            key, listed = _WHERE[place]
            held = getattr(draft, key)
            if not listed:
                if held is command:
                    found.append((None, place, value, lacks))
                continue
            try:
                index = held.index(command)  # in C: this command, or an equal one before it
            except ValueError:
                continue
            if held[index] is not command:
                index = next((i for i, item in enumerate(held) if item is command), None)
                if index is None:
                    continue
            found.append((index, place, value, lacks))
        self.notes.clear()
        if found:
            self._found.append((self.drafts, found))
        self.drafts += 1

    def accepted(self, positions: np.ndarray) -> None:
        """The drafts decoded since the last run are the lines at `positions` (into the
        chunk, in order); any after those were refused after all. Where more were
        decoded than lines accepted, a line was refused after its draft was built (text
        after it that msgspec read on to): whose draft is whose cannot be told, so the
        run's lines are walked instead (`occurrences`)."""
        if self._found:
            positions = positions.tolist()
        if self.drafts > len(positions):
            self._unsure += list(positions)
            self._found.clear()
        at, *columns = self._seen
        for draft, found in self._found:
            if draft < len(positions):
                at += [positions[draft]] * len(found)
                for column, values in zip(columns, zip(*found)):
                    column += values
        self._found.clear()
        self.notes.clear()
        self.drafts = 0

    def forget(self) -> None:
        """The lines are screened again from the start: what was seen is void."""
        self._seen = [[], [], [], [], []]
        self._unsure = []

    def occurrences(self, chunk: LineChunk) -> pa.Table:
        """The drift occurrences seen in the chunk's lines, and of the lines walked."""
        at, *columns = self._seen
        seen = pa.table([chunk.numbers[np.asarray(at, np.int64)], *columns], schema=NO_OCCURRENCES.schema)
        if not self._unsure:
            return seen
        return pa.concat_tables([seen, walked(chunk.numbers[self._unsure].tolist(), chunk.texts(self._unsure))])


class _Watching(threading.local):
    watch: DriftWatch | None = None  # the watch of the screen decoding in this thread


_WATCHING = _Watching()
_WHERE = [(place.key, place.listed) for place in PLACES]
# A draft's lists only the compiler reads, as a tuple (one C call), and that tuple when
# it has none of them.
_only_lists = (
    operator.attrgetter(*(key for _, key in _ONLY_LISTS))
    if len(_ONLY_LISTS) > 1
    else lambda draft: tuple(getattr(draft, key) for _, key in _ONLY_LISTS)
)
_NONE_THERE = (msgspec.UNSET,) * len(_ONLY_LISTS)


def _draft_seen(draft) -> None:
    watch = _WATCHING.watch
    if watch is None:
        return
    if watch.notes or _only_lists(draft) != _NONE_THERE:
        watch.decoded(draft)
    else:  # the usual draft, without drift
        watch.drafts += 1


def _command_watch(checks: list[tuple[_Watched, str | None]]) -> Callable[[typing.Any], None]:
    """What the struct of a command does once decoded: for each place it holds (and the
    value there when it is the struct's tag), it notes a value that `_Watched.drifts`.
    It runs for every such command, so the usual case, one place whose value is the
    struct's tag, takes a shorter path."""
    if len(checks) == 1 and (tagged := checks[0][1]) is not None:
        watched = checks[0][0]
        number, lacking = watched.number, _lacking(watched.place.watched)
        always = watched.drifts(tagged, "")  # else the tag drifts only where fields are left out

        def seen_tagged(command) -> None:
            watch = _WATCHING.watch
            if watch is not None:
                lacks = lacking(command)
                if always or lacks:
                    watch.notes.append((number, tagged, lacks, command))

        return seen_tagged
    # A place the compiler wants nothing more of drifts by its value alone (as the
    # build's classes): read without the fields-left-out test.
    plain = [
        (watched.number, watched.field, watched.seed_spelled)
        for watched, tagged in checks
        if tagged is None and not watched.place.watched
    ]
    reads = [
        (watched, tagged, watched.field, _lacking(watched.place.watched))
        for watched, tagged in checks
        if tagged is not None or watched.place.watched
    ]

    def seen(command) -> None:
        watch = _WATCHING.watch
        if watch is None:
            return
        for number, field, seed_spelled in plain:
            value = getattr(command, field)
            if value is not None and value not in seed_spelled:
                watch.notes.append((number, value, "", command))
        for watched, tagged, field, lacking in reads:
            value = tagged if tagged is not None else getattr(command, field)
            if value is not None:
                lacks = lacking(command)
                if watched.drifts(value, lacks):
                    watch.notes.append((watched.number, value, lacks, command))

    return seen


def _lacking(names: tuple[str, ...]) -> Callable[[typing.Any], str]:
    """The fields of `names` a command leaves out (null or absent), comma-joined."""
    if not names:
        return lambda command: ""
    if len(names) == 1:
        (name,), get = names, operator.attrgetter(names[0])
        return lambda command: name if get(command) is None else ""
    gets = [(name, operator.attrgetter(name)) for name in names]
    return lambda command: ",".join([name for name, get in gets if get(command) is None])


def _watch(model, tag: str | None) -> Callable[[typing.Any], None] | None:
    """The watcher of a struct of the order screen (`screen.Watching`): the draft's, or
    a command's that may hold drift. None for a variant whose tag is in the seed's
    spelling and wants nothing more, the only place of the usual command."""
    if model is OrderDraft:
        return _draft_seen
    variants = getattr(model, "__screen_variants__", None)
    checks = []
    for watched in _WATCHED:
        if model_at((watched.place.key,)) is not model:
            continue
        tagged = tag if variants is not None and tag is not None and watched.place.field == variants.field else None
        if tagged is not None and not watched.drifts(tagged, "") and tagged not in watched.wanting:
            continue
        checks.append((watched, tagged))
    return _command_watch(checks) if checks else None


def _one_place_per_model() -> None:
    """A watcher knows a command's place by its model: no model may sit under two keys."""
    keys: dict[type[BaseModel], set[str]] = defaultdict(set)
    for watched in _WATCHED:
        model = model_at((watched.place.key,))
        if model is None:
            raise TypeError(f"`{watched.place.key}` holds no command model: it cannot be watched for drift")
        keys[model].add(watched.place.key)
    shared = {model.__name__: sorted(names) for model, names in keys.items() if len(names) > 1}
    if shared:
        raise TypeError(f"a command model under two keys cannot be watched for drift: {shared}")


_one_place_per_model()
# How the order screen watches for drift as it decodes (`reader.order_screen`). The
# lists only the compiler reads are left unset when absent: one written null is there.
WATCHING = Watching(watch=_watch, unset=lambda model: seed.COMPILER_ONLY_LISTS if model is OrderDraft else ())


class DriftTally:
    """Drift reported once per file and kind (rule, path with indexes generalised,
    message): at the first line and path it appears on, with how many lines carry it."""

    def __init__(self) -> None:
        self._first: dict[tuple, Violation] = {}
        self._lines: dict[tuple, int] = defaultdict(int)

    def add(self, occurrences: pa.Table) -> None:
        """The drift `occurrences` (`NO_OCCURRENCES`) of the drafts of a chunk that are
        records."""
        if not occurrences.num_rows:
            return
        meanings, kinds = self._meanings(occurrences)
        found = occurrences.join(meanings, ["place", "value", "lacks"], join_type="inner")
        for kind, seq, index, lines in _kinds(found):
            place, rule, name, message = kinds[kind]
            v = Violation(f"line {seq}", "info", rule, place.path(index, name), message)
            self._first.setdefault(_kind(v), v)
            self._lines[_kind(v)] += lines

    @staticmethod
    def _meanings(occurrences: pa.Table) -> tuple[pa.Table, list]:
        """Each distinct (place, value, lacks) with the kinds of drift it is."""
        rows: dict[str, list] = {"place": [], "value": [], "lacks": [], "kind": []}
        kinds: dict[tuple, int] = {}
        # Sorted, so kinds are numbered the same way every run (the number breaks ties in `_kinds`).
        distinct = (
            occurrences.group_by(["place", "value", "lacks"])
            .aggregate([])
            .sort_by([("place", "ascending"), ("value", "ascending"), ("lacks", "ascending")])
            .to_pylist()
        )
        for row in distinct:
            place = PLACES[row["place"]]
            for rule, name, message in findings_of(place, row["value"], row["lacks"].split(",")):
                number = kinds.setdefault((row["place"], rule, name, message), len(kinds))
                for column, value in zip(rows, (row["place"], row["value"], row["lacks"], number)):
                    rows[column].append(value)
        described = [(PLACES[p], rule, name, message) for p, rule, name, message in kinds]
        return pa.table(
            rows,
            schema=pa.schema(
                [("place", pa.int64()), ("value", pa.string()), ("lacks", pa.string()), ("kind", pa.int64())]
            ),
        ), described

    def findings(self) -> list[Violation]:
        return [
            dataclasses.replace(
                first, message=f"{first.message} ({line_count(self._lines[key])}, first {first.locator})"
            )
            for key, first in self._first.items()
        ]

    def state(self) -> dict:
        """The tally as JSON, for a later append to go on from: its kinds in the order
        they were first met, so that a file that grew lists them as a one-shot ingest
        does (sorted, `line 10` came before `line 9`)."""
        return {"kinds": [[dataclasses.astuple(first)[:5], self._lines[key]] for key, first in self._first.items()]}

    @classmethod
    def from_state(cls, state: dict | None) -> DriftTally:
        tally = cls()
        for first, lines in (state or {}).get("kinds", []):
            v = Violation(*first[:5])
            tally._first[_kind(v)], tally._lines[_kind(v)] = v, lines
        return tally


def _kinds(found: pa.Table) -> list[tuple[int, int, int | None, int]]:
    """(kind, line, index, lines) per kind of drift among the occurrences `found`: its
    first occurrence (by line, then index, a place with no index first) and how many
    lines carry it, kinds in the order of their first occurrences. (In Arrow: a DuckDB
    statement over a few hundred occurrences costs more, most of it fixed.)"""
    ordered = found.append_column("at", pc.coalesce(found["idx"], -1)).sort_by(
        [("seq", "ascending"), ("at", "ascending"), ("kind", "ascending")]
    )
    # Without threads, groups come in the order they are first met and `first` is the first row's.
    grouped = ordered.group_by("kind", use_threads=False).aggregate(
        [("seq", "first"), ("idx", "first", pc.ScalarAggregateOptions(skip_nulls=False)), ("seq", "count_distinct")]
    )
    return list(zip(*(grouped[name].to_pylist() for name in ("kind", "seq_first", "idx_first", "seq_count_distinct"))))


def _kind(v: Violation) -> tuple:
    """A kind of drift: its rule, its path with indexes generalised, its message."""
    return v.rule, re.sub(r"\[\d+\]", "[]", v.field), v.message
