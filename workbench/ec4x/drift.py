"""Drift in order drafts: what the real compiler accepts beyond the seed, reported as
`info`, once per kind and file, at the first line and path it appears on, with how many
lines carry it. None of it is an error, so the models do not raise it; it is found here
in SQL over a chunk's drafts as written, from the same declarations:

- `enum_spelling`: a value of a seed enum (`SeedEnum`, read off the models' fields) in
  another spelling the real compiler takes (`Move` for `move`, an alias);
- `compiler_requires_field`: a seed-valid command the real compiler refuses for a field
  it leaves out (`seed.COMPILER_SYSTEM_TARGET_COMMANDS`, `seed.COMPILER_ESPIONAGE_REQUIRES`);
- `compiler_only_field`: a top-level list only the real compiler reads
  (`seed.COMPILER_ONLY_LISTS`).

SQL finds where each enum value and watched field sits; what a value means (its seed
value) is asked of the `SeedEnum` once per distinct value, in Python. It looks only at
the drafts that may hold drift: a stricter screen (`DRIFT_FREE_SCREEN`) passes the
others first, reading each key's last value as pydantic does.
"""

from __future__ import annotations

import dataclasses
import json
import re
import typing
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Literal

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from workbench.ec4x import seed
from workbench.ec4x.orders import EspionageAction, FleetCommand, OrderDraft, model_at
from workbench.ec4x.rules import SeedEnum, enum_of
from workbench.schema import arrow_on, sql_literal, values_at
from workbench.screen import Narrowing, ScreenVariants, model_screen
from workbench.validation import line_count
from workbench.violation import Violation


def _system_target_message(command: str, name: str) -> str:
    return (f"`{command}` without `{name}` is valid by the seed (its prompt gives `{command}` no target), but the "
            f"real compiler refuses it: it requires a targetSystemId for patrol, guard-colony and guard-starbase "
            f"as for the system-target commands; the seed is the contract, so this is drift, not an error")


def _espionage_target_message(operation: str, name: str) -> str:
    return (f"`{operation}` without `{name}` is valid by the seed (its prompt gives it no target), but the real "
            f"compiler refuses every espionage operation without a {name}; the seed is the contract, so this is "
            f"drift, not an error")


# What the real compiler requires beyond the seed: for a command model and its enum
# field, the fields each seed value must not leave null (only where the seed does not),
# and what the finding says.
COMPILER_REQUIRES = {
    (FleetCommand, "commandType"): (
        dict.fromkeys(seed.COMPILER_SYSTEM_TARGET_COMMANDS, ("targetSystemId",)), _system_target_message),
    (EspionageAction, "operation"): ({
        operation: tuple(name for name in seed.COMPILER_ESPIONAGE_REQUIRES if name not in requires)
        for operation, requires in seed.ESPIONAGE_REQUIRES.items()
    }, _espionage_target_message),
}


@dataclass(frozen=True)
class Place:
    """Where a draft may hold drift: `key` is a top-level key, holding a list of commands
    (`listed`), one command, or (no `field`) a list only the compiler reads. `requires`
    and `says` are the place's entry in COMPILER_REQUIRES, if any."""

    key: str
    listed: bool = False
    field: str | None = None
    enum: SeedEnum | None = None
    requires: dict = dataclasses.field(default_factory=dict)
    says: Callable[[str, str], str] | None = None

    @property
    def watched(self) -> tuple[str, ...]:
        """The fields whose absence the compiler refuses for some values."""
        return tuple(sorted({name for names in self.requires.values() for name in names}))

    def path(self, index: int | None, name: str | None) -> str:
        where = f"{self.key}[{index}]" if self.listed else self.key
        return f"{where}.{name}" if name else where


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


PLACES = _places()


def _seed_spelled(enum: SeedEnum, spellings) -> typing.Any:
    """The screen type of a value in the seed's own spelling, of the `spellings` the
    plain screen lets through (a Literal of them)."""
    if typing.get_origin(spellings) is not Literal:
        raise TypeError(f"the screen of a seed enum is a Literal of its spellings, not {spellings!r}")
    return Literal[tuple(s for s in typing.get_args(spellings) if s in enum.values)]


def _drift_free_variants(model, variants: ScreenVariants) -> ScreenVariants:
    """A command's variants with the seed's spellings alone, each requiring the fields
    the real compiler requires of it too."""
    compiler, _ = COMPILER_REQUIRES.get((model, variants.field), ({}, None))
    return dataclasses.replace(
        variants,
        spellings={spelling: value for spelling, value in variants.spellings.items() if spelling == value},
        requires={value: tuple(dict.fromkeys((*variants.requires.get(value, ()), *compiler.get(value, ()))))
                  for value in {*variants.requires, *compiler}},
        narrowed={value: {name: _seed_spelled(_field_enum(model, name), annotation)
                          for name, annotation in fields.items()}
                  for value, fields in variants.narrowed.items()},
    )


def _drift_free_value(metadata: tuple, annotation) -> typing.Any:
    """A seed enum's field takes the seed's spellings alone; any other field is as in
    the plain screen."""
    enum = next((item for item in metadata if isinstance(item, SeedEnum)), None)
    return annotation if enum is None else _seed_spelled(enum, annotation)


# A draft this screen passes is valid and holds no drift: every enum value in the seed's
# spelling, every field the compiler requires of a command there, no list only the
# compiler reads. msgspec checks each value of a repeated key and keeps the last, as
# pydantic does (DuckDB reads the first). So the drift SQL need only read the drafts it
# refuses.
DRIFT_FREE_SCREEN = model_screen(OrderDraft, Narrowing(
    screen_as=_drift_free_value,
    variants=_drift_free_variants,
    absent=lambda model: seed.COMPILER_ONLY_LISTS if model is OrderDraft else (),
))

_KEYS = list(dict.fromkeys(place.key for place in PLACES))


def _string(value: str) -> str:
    return f"CASE WHEN json_type({value}) = 'VARCHAR' THEN {value} ->> '$' END"


def _occurrences(number: int, place: Place) -> str:
    """A struct for the place's value in a command, read from the columns `_readings`
    gives: `s<i>`, the string at the command's i-th field (`_fields(key)`), and `n<i>`,
    whether that field is null or left out."""
    fields = _fields(place.key)
    value = f"s{fields.index(place.field)}"
    lacks = [f"CASE WHEN n{fields.index(w)} THEN '{w}' END" for w in place.watched]
    lacking = f"concat_ws(',', {', '.join(lacks)})" if lacks else "''"
    # A value in the seed's spelling is drift only where the compiler wants more of it.
    seed_spelled = f"list_contains({sql_literal(list(place.enum.values))}, {value})"
    wants_more = f"list_contains({sql_literal([v for v, needs in place.requires.items() if needs])}, {value})"
    drifts = f"NOT {seed_spelled} OR ({lacking} <> '' AND {wants_more})" if lacks else f"NOT {seed_spelled}"
    return f"{{'place': {number}, 'value': {value}, 'lacks': {lacking}, 'keep': {value} IS NOT NULL AND ({drifts})}}"


def _fields(key: str) -> list[str]:
    return sorted({f for place in PLACES if place.key == key and place.field
                   for f in (place.field, *place.watched)})


def _readings(key: str) -> str:
    """SQL: each field of `_fields(key)` read once from a command's values `e`: its
    string (`s<i>`) and whether it is null or left out (`n<i>`)."""
    read = []
    for i, _ in enumerate(_fields(key)):
        read += [f"{_string(f'e[{i + 1}]')} AS s{i}", f"coalesce(json_type(e[{i + 1}]), 'NULL') = 'NULL' AS n{i}"]
    return ", ".join(read)


def _repeats_a_key(keys: str) -> str:
    """SQL: does the list of an object's `keys` (`json_keys`) name a key twice?"""
    return f"coalesce(list_unique({keys}) < len({keys}), false)"


def _select_key(key: str) -> str:
    """(seq, idx, place, value, lacks, repeated) of every enum value under a top-level
    key that may be drift (not the seed's spelling, or a watched field left out), and
    of every command there that repeats a key."""
    at = f"v[{_KEYS.index(key) + 1}]"
    numbered = [(n, p) for n, p in enumerate(PLACES) if p.key == key]
    if numbered[0][1].field is None:  # a list only the compiler reads: its presence is drift
        (number, _), = numbered
        return (f"SELECT seq, NULL::BIGINT AS idx, {number}::BIGINT AS place, '' AS value, '' AS lacks, "
                f"false AS repeated FROM rows WHERE {at} IS NOT NULL")
    structs = ", ".join(_occurrences(n, p) for n, p in numbered)
    if numbered[0][1].listed:
        items = (f"SELECT seq, unnest(generate_series(0, len(items) - 1)) AS idx, unnest(items) AS item "
                 f"FROM (SELECT seq, json_extract({at}, '$[*]') AS items FROM rows WHERE json_type({at}) = 'ARRAY')")
    else:
        items = f"SELECT seq, NULL AS idx, {at} AS item FROM rows"
    return f"""
SELECT seq, idx, CAST(o.place AS BIGINT) AS place, o.value AS value, o.lacks AS lacks, repeated
FROM (SELECT seq, idx, unnest([{structs}]) AS o, repeated
      FROM (SELECT seq, idx, repeated, {_readings(key)}
            FROM (SELECT seq, idx, {values_at('item', _fields(key))} AS e, {_repeats_a_key('json_keys(item)')} AS repeated
                  FROM ({items}) WHERE json_type(item) = 'OBJECT')))
WHERE o.keep OR repeated"""


def _occurrences_in(drafts: str) -> str:
    """The drift occurrences of the drafts (seq, payload JSON) of `drafts`; a draft whose
    object or commands repeat a key is named too (`repeated`, with no place)."""
    return f"""
WITH rows AS (SELECT seq, json_keys(payload) AS keys, {values_at('payload', _KEYS)} AS v FROM {drafts})
SELECT seq, NULL::BIGINT AS idx, NULL::BIGINT AS place, NULL AS value, NULL AS lacks, true AS repeated
FROM rows WHERE {_repeats_a_key('keys')}
UNION ALL {' UNION ALL '.join(_select_key(key) for key in _KEYS)}
"""


# Over drafts as written (`drafts`: seq, raw), each parsed as the insert parses it (a
# text it cannot parse holds no drift: it is no row).
OCCURRENCES = _occurrences_in("(SELECT seq, TRY_CAST(raw AS JSON) AS payload FROM drafts)")
_FOUND = pa.schema([("seq", pa.int64()), ("idx", pa.int64()), ("place", pa.int64()), ("value", pa.string()),
                    ("lacks", pa.string()), ("repeated", pa.bool_())])
NO_OCCURRENCES = _FOUND.empty_table().drop_columns(["repeated"])



def findings_of(place: Place, value: str, lacks: list[str]) -> list[tuple[str, str | None, str]]:
    """(rule, field, message) of each drift a value at `place` is, with the watched fields
    its command leaves out."""
    if place.field is None:
        return [("compiler_only_field", None,
                 f"`{place.key}` is not a field of the seed's v1 JSON contract, but the seed's prompt lists "
                 f"Repair & Scrap among the draft's categories and the real compiler reads this list, so it is "
                 f"reported as drift rather than rejected; kept, entries not checked")]
    canonical = place.enum.canonical(value)
    if canonical is None:
        return []
    found = []
    if canonical != value:
        found.append(("enum_spelling", place.field,
                      f"{value!r} is not the seed's spelling of `{canonical}`; the real compiler normalises enum "
                      f"spellings, and the seed only asks that the value be known to the compiler, so it is "
                      f"accepted as `{canonical}` (drift, not an error)"))
    for name in place.requires.get(canonical, ()):
        if name in lacks:
            found.append(("compiler_requires_field", name, place.says(canonical, name)))
    return found


class DriftTally:
    """Drift reported once per file and kind (rule, path with indexes generalised,
    message): at the first line and path it appears on, with how many lines carry it."""

    def __init__(self):
        self._first: dict[tuple, Violation] = {}
        self._lines: dict[tuple, int] = defaultdict(int)

    def add(self, occurrences: pa.Table) -> None:
        """The drift `occurrences` (of `occurrences_in`) of the drafts of a chunk that are
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
        distinct = occurrences.group_by(["place", "value", "lacks"]).aggregate([]) \
            .sort_by([("place", "ascending"), ("value", "ascending"), ("lacks", "ascending")]).to_pylist()
        for row in distinct:
            place = PLACES[row["place"]]
            for rule, name, message in findings_of(place, row["value"], row["lacks"].split(",")):
                number = kinds.setdefault((row["place"], rule, name, message), len(kinds))
                for column, value in zip(rows, (row["place"], row["value"], row["lacks"], number)):
                    rows[column].append(value)
        described = [(PLACES[p], rule, name, message) for p, rule, name, message in kinds]
        return pa.table(rows, schema=pa.schema([("place", pa.int64()), ("value", pa.string()),
                                               ("lacks", pa.string()), ("kind", pa.int64())])), described

    def findings(self) -> list[Violation]:
        return [dataclasses.replace(first, message=f"{first.message} ({line_count(self._lines[key])}, "
                                                   f"first {first.locator})")
                for key, first in self._first.items()]

    def state(self) -> dict:
        """The tally as JSON, for a later append to go on from: its kinds in the order
        they were first met, so that a file that grew lists them as a one-shot ingest
        does (sorted, `line 10` came before `line 9`)."""
        return {"kinds": [[dataclasses.astuple(first)[:5], self._lines[key]] for key, first in self._first.items()]}

    @classmethod
    def from_state(cls, state: dict | None) -> "DriftTally":
        tally = cls()
        for first, lines in (state or {}).get("kinds", []):
            v = Violation(*first[:5])
            tally._first[_kind(v)], tally._lines[_kind(v)] = v, lines
        return tally


def _kinds(found: pa.Table) -> list[tuple[int, int, int | None, int]]:
    """(kind, line, index, lines) per kind of drift among the occurrences `found`: its
    first occurrence (by line, then index, a place with no index first) and how many
    lines carry it, kinds in the order of their first occurrences. (In Arrow: a DuckDB
    statement over a few hundred occurrences cost 2.5 ms, most of it fixed.)"""
    ordered = found.append_column("at", pc.coalesce(found["idx"], -1)).sort_by(
        [("seq", "ascending"), ("at", "ascending"), ("kind", "ascending")])
    # Without threads, groups come in the order they are first met and `first` is the first row's.
    grouped = ordered.group_by("kind", use_threads=False).aggregate(
        [("seq", "first"), ("idx", "first", pc.ScalarAggregateOptions(skip_nulls=False)), ("seq", "count_distinct")])
    return list(zip(*(grouped[name].to_pylist() for name in ("kind", "seq_first", "idx_first", "seq_count_distinct"))))


def occurrences_in(con: duckdb.DuckDBPyConnection, drafts: pa.Table) -> pa.Table:
    """The drift occurrences (seq, idx, place, value, lacks) of `drafts` (seq, raw: each
    draft as written), a repeated key read by its last value, as pydantic reads it.
    The drafts' text is all it reads, so it runs on a connection of its own while the
    file's transaction parses the same lines into `ec4x_orders`."""
    if not drafts.num_rows:
        return NO_OCCURRENCES
    return _last_values(con, arrow_on(con, drafts, OCCURRENCES, "drafts", _FOUND), drafts)


def _last_values(con: duckdb.DuckDBPyConnection, occurrences: pa.Table, drafts: pa.Table) -> pa.Table:
    """The occurrences as pydantic reads a draft that repeats a key (as it reads its
    errors): by its last value, where DuckDB reads the first. Those few drafts are read
    again from their text (in `drafts`) with each key once, its last value kept."""
    repeated = pc.unique(pc.filter(occurrences["seq"], occurrences["repeated"]))
    kept = occurrences.filter(pc.and_(pc.invert(pc.is_in(occurrences["seq"], repeated)),
                                      pc.is_valid(occurrences["place"])))
    if not len(repeated):
        return kept.drop_columns(["repeated"])
    # One by one: Arrow cannot filter the string views of a chunk's lines, and they are few.
    at = pc.indices_nonzero(pc.is_in(drafts["seq"], repeated)).to_pylist()
    once = [(drafts["seq"][i].as_py(), _each_key_once(drafts["raw"][i].as_py())) for i in at]
    once = [(seq, text) for seq, text in once if text is not None]
    again = arrow_on(con, pa.table({"seq": pa.array([seq for seq, _ in once], pa.int64()),
                                    "raw": pa.array([text for _, text in once], pa.string())}),
                     OCCURRENCES, "drafts", _FOUND)
    again = again.filter(pc.is_valid(again["place"])).cast(kept.schema)
    return pa.concat_tables([kept, again]).drop_columns(["repeated"])


def _each_key_once(text: str) -> str | None:
    """The JSON text with each repeated key once, at its last value. None for a text
    Python cannot read (DuckDB's reader is more lenient): pydantic refuses such a line,
    so it is no record and its drift is not counted."""
    try:
        return json.dumps(json.loads(text))
    except (ValueError, RecursionError):
        return None


def _kind(v: Violation) -> tuple:
    """A kind of drift: its rule, its path with indexes generalised, its message."""
    return v.rule, re.sub(r"\[\d+\]", "[]", v.field), v.message
