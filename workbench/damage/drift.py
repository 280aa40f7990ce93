"""Drift findings (`info`): what the real game writes beyond seed 003.

Found in bulk, in SQL, over each chunk of a file's events, and reported once per file
and kind of drift with the first line it appears on and how many lines carry it: an undocumented
event type, a key the seed does not list (at any depth of a documented payload), an
enum value the real game adds. The known keys come from the pydantic models, so the
schema is declared once.
"""

from __future__ import annotations

import functools
import json
import typing

import duckdb
from pydantic import BaseModel

from workbench.damage.models import DRIFT_VALUES, PAYLOADS
from workbench.damage.tables import CHUNK, ENVELOPE_KEYS
from workbench.schema import sql_literal
from workbench.validation import drift_finding
from workbench.violation import Violation


def _nested_model(annotation) -> tuple[type[BaseModel] | None, str]:
    """The model inside `X`, `X | None`, `list[X]` or `dict[str, X]`, and the JSON
    path suffix that reaches it."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, ""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is list and args:
        inner, suffix = _nested_model(args[0])
        return inner, "[*]" + suffix
    if origin is dict and len(args) == 2:
        inner, suffix = _nested_model(args[1])
        return inner, ".*" + suffix
    for arg in args:  # unions, Annotated
        inner, suffix = _nested_model(arg)
        if inner is not None:
            return inner, suffix
    return None, ""


def object_paths(model: type[BaseModel], json_path: str = "$", field: str = "payload"):
    """(JSON path, field path, known keys) for the model and every model nested in it."""
    yield json_path, field, set(model.model_fields)
    for name, info in model.model_fields.items():
        inner, suffix = _nested_model(info.annotation)
        if inner is not None:
            shown = suffix.replace("[*]", "[]").replace(".*", ".<key>")
            yield from object_paths(inner, f"{json_path}.{name}{suffix}", f"{field}.{name}{shown}")


KEY_CHECKS = [
    (event_type, json_path, field, known)
    for event_type, model in PAYLOADS.items()
    for json_path, field, known in object_paths(model)
]
CHECKS_OF = {t: [n for n, check in enumerate(KEY_CHECKS) if check[0] == t] for t in PAYLOADS}


def _sql_list(values) -> str:
    return ", ".join(sql_literal(v) for v in values)


DOCUMENTED = _sql_list(PAYLOADS)


def _keys_read(event_type: str) -> tuple[list[int], str]:
    """The checks of a type, in the order its SQL lists their keys, and that SQL: a JSON
    list of the keys at each check's path, read from the payload in one parse for the
    paths without a wildcard (a value that is not an object has none) and one per path
    with one (`$.players[*]`: the keys of every element, together)."""
    plain = [n for n in CHECKS_OF[event_type] if "*" not in KEY_CHECKS[n][1]]
    wild = [n for n in CHECKS_OF[event_type] if "*" in KEY_CHECKS[n][1]]
    if [KEY_CHECKS[n][1] for n in plain] == ["$"] and not wild:
        lists = "[json_keys(payload)]"
    else:
        lists = f"json_keys(payload, [{_sql_list(KEY_CHECKS[n][1] for n in plain)}])"
        lists += "".join(f" || [flatten(json_keys(payload, {sql_literal(KEY_CHECKS[n][1])}))]" for n in wild)
    return plain + wild, f"to_json({lists})"


KEYS_READ = {event_type: _keys_read(event_type) for event_type in PAYLOADS}
# The types that read their keys the same way share a branch (all the flat ones do): a
# shorter statement is quicker to plan, which is most of its cost on a small append.
_TYPES_READING: dict[str, list[str]] = {}
for _type, (_, _sql) in KEYS_READ.items():
    _TYPES_READING.setdefault(_sql, []).append(_type)


def _drift_value(event_type: str, key: str, values) -> str:
    value = f"payload->>{sql_literal(key)}"
    return f"CASE WHEN type = {sql_literal(event_type)} AND {value} IN ({_sql_list(values)}) THEN {value} END"


# The event types of a chunk the seed does not list, and the values beyond its enums,
# with their lines: one scan of the chunk's types, payloads read only for the types
# whose enums the real game extends.
OTHERS = f"""
SELECT CASE WHEN type NOT IN ({DOCUMENTED}) THEN type END,
       [{", ".join(_drift_value(t, k, values) for (t, k), values in DRIFT_VALUES.items())}],
       count(*), min(seq)
FROM {CHUNK} WHERE type NOT IN ({DOCUMENTED}) OR type IN ({_sql_list({t for t, _ in DRIFT_VALUES})})
GROUP BY ALL
"""

# The keys drift needs: rows that agree on their type, the keys of their payload at the
# paths of its model's objects (`KEYS_READ`) and their undocumented envelope keys
# collapse into one row, and Python reads each distinct list once. (The keys at every
# depth, `json_structure`, cost more, and lose the keys of an object in an array whose
# other elements are not objects.)
KEYS = f"""
SELECT type, CASE {" ".join(f"WHEN type IN ({_sql_list(types)}) THEN {sql}" for sql, types in _TYPES_READING.items())} END,
       CASE WHEN extra IS NOT NULL THEN json_keys(extra) END, count(*), min(seq)
FROM {CHUNK} WHERE type IN ({DOCUMENTED}) AND starts_with(payload, '{{')
GROUP BY ALL
UNION ALL
SELECT type, NULL, json_keys(extra), count(*), min(seq)
FROM {CHUNK} WHERE extra IS NOT NULL AND NOT (type IN ({DOCUMENTED}) AND starts_with(payload, '{{')) IS TRUE
GROUP BY ALL
"""


class DriftTally:
    """Drift of one file, gathered batch by batch: for each kind of drift, how many
    lines carry it and the first of them."""

    def __init__(self) -> None:
        self.types: dict[str, tuple[int, int]] = {}
        self.envelope_keys: dict[str, tuple[int, int]] = {}
        self.payload_keys: dict[tuple[int, str], tuple[int, int]] = {}
        self.values: dict[tuple[str, str, str], tuple[int, int]] = {}

    def add_chunk(self, con: duckdb.DuckDBPyConnection, params: dict) -> None:
        """Tally a chunk's rows (`params`: source_id, first, last)."""
        for event_type, values, lines, first in con.execute(OTHERS, params).fetchall():
            if event_type is not None:
                _count(self.types, event_type, lines, first)
            for (value_type, key), value in zip(DRIFT_VALUES, values):
                if value is not None:
                    _count(self.values, (value_type, key, value), lines, first)
        undocumented_keys = functools.cache(_undocumented_keys)
        for event_type, shape, envelope_keys, lines, first in con.execute(KEYS, params).fetchall():
            for key in envelope_keys or ():
                _count(self.envelope_keys, key, lines, first)
            if shape is not None:
                for check in undocumented_keys(event_type, shape):
                    _count(self.payload_keys, check, lines, first)

    def restore(self, state: dict) -> None:
        """Go back to an earlier `state()`."""
        vars(self).update(vars(DriftTally.from_state(state)))

    def state(self) -> dict:
        """The tally as JSON, for a later append to go on from."""
        return {name: sorted([*_as_list(key), *seen] for key, seen in getattr(self, name).items()) for name in _TALLIES}

    @classmethod
    def from_state(cls, state: dict | None) -> DriftTally:
        tally = cls()
        for name in _TALLIES:
            for *key, lines, first in (state or {}).get(name, []):
                getattr(tally, name)[key[0] if len(key) == 1 else tuple(key)] = (lines, first)
        return tally

    def findings(self) -> list[Violation]:
        """By first line; those of one line by kind, then key: the order DuckDB groups
        a chunk's rows in, and a tally read back from `state()`, play no part."""
        found = [_undocumented_type(kind, *seen) for kind, seen in sorted(self.types.items())]
        found += [_extra_envelope_key(key, *seen) for key, seen in sorted(self.envelope_keys.items())]
        found += [_extra_payload_key(*check, *seen) for check, seen in sorted(self.payload_keys.items())]
        found += [_undocumented_value(*kind, *seen) for kind, seen in sorted(self.values.items())]
        return sorted(found, key=lambda v: int(v.locator.split()[1]))


_TALLIES = ("types", "envelope_keys", "payload_keys", "values")


def _undocumented_keys(event_type: str, keys: str) -> list[tuple[int, str]]:
    """(check, key) for each key of a payload's objects (see KEYS) that its model does
    not list, in the order of the checks."""
    checks, lists = KEYS_READ[event_type][0], json.loads(keys)
    found = {check_no: set(listed or ()) for check_no, listed in zip(checks, lists)}
    return [
        (check_no, key)
        for check_no in CHECKS_OF[event_type]
        for key in sorted(found[check_no] - KEY_CHECKS[check_no][3])
    ]


def _as_list(key) -> list:
    return list(key) if isinstance(key, tuple) else [key]


def _count(tally: dict, key, lines: int, first: int) -> None:
    seen_lines, seen_first = tally.get(key, (0, first))
    tally[key] = (seen_lines + lines, min(seen_first, first))


def _extra_payload_key(check_no: int, key: str, lines: int, first: int) -> Violation:
    event_type, _, field, _ = KEY_CHECKS[check_no]
    return drift_finding(
        "undocumented_key",
        f"{field}.{key}",
        f"key `{key}` of {event_type} is not in the specification; kept",
        lines,
        first,
    )


def _undocumented_value(event_type: str, key: str, value: str, lines: int, first: int) -> Violation:
    return drift_finding(
        "undocumented_value",
        f"payload.{key}",
        f"{event_type}.{key} = {value!r} is not in the specification's enum; kept",
        lines,
        first,
    )


def _undocumented_type(event_type: str, lines: int, first: int) -> Violation:
    return drift_finding(
        "undocumented_event_type",
        "type",
        f"event type {event_type!r} is not in the specification; kept",
        lines,
        first,
    )


def _extra_envelope_key(key: str, lines: int, first: int) -> Violation:
    return drift_finding(
        "undocumented_key",
        key,
        f"envelope key `{key}` is not in the specification ({', '.join(ENVELOPE_KEYS)}); kept in damage_events.extra",
        lines,
        first,
    )
