"""The screen is sound: a line it accepts is a line pydantic accepts."""

import itertools
import json
from typing import Annotated, Literal

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, ValidationError, model_validator

from tests.damage.events import PAYLOADS, event
from workbench.damage.models import LINES, SCREEN
from workbench.screen import ScreenAs, ScreenVariants, Unscreenable, Watching, model_screen

# Values that probe every kind of check: types, bounds, enums, patterns, nulls.
ODD_VALUES = st.sampled_from(
    [
        None,
        True,
        0,
        1,
        -1,
        2,
        1.0,
        1.5,
        -1.0001,
        0.9999,
        1e308,
        "",
        "1",
        "AS",
        "1X",
        "AS\n",
        "raise",
        "attack_team",
        "discussion",
        [],
        [1],
        ["AS"],
        {},
        {"a": 1},
        "2026-02-06T09:38:54+00:00",
        "2026-02-30T09:38:54+00:00",
        "2026-02-06T09:38:54+02:00",
    ]
)


def paths(value, prefix=()):
    """Every location inside a JSON value."""
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from paths(item, (*prefix, index))


def replaced(record, path, value):
    record = json.loads(json.dumps(record))
    if not path:
        return value
    target = record
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    return record


def pydantic_accepts(text: str) -> bool:
    try:
        LINES.validate_python([text])
        return True
    except ValidationError:
        return False


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.sampled_from(sorted(PAYLOADS)), st.data())
def test_screen_never_accepts_what_pydantic_refuses(kind, data):
    record = event(kind)
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(list(paths(record))))
        record = replaced(record, path, data.draw(ODD_VALUES))
    text = json.dumps(record)
    if SCREEN.passes([text]) == [True]:
        assert pydantic_accepts(text), text


def test_screen_accepts_every_plain_valid_event():
    assert SCREEN.unscreened == set()
    texts = [json.dumps(event(kind)) for kind in sorted(PAYLOADS)]
    assert SCREEN.passes(texts) == [True] * len(texts)


@pytest.mark.parametrize(
    "change,expected",
    [
        ({}, True),
        ({"kind": "call", "attack_plan": None, "payload": {}}, True),
        ({"attack_plan": None}, False),
        ({"payload": {"amount": 0}}, False),
        ({"payload": {"amount": 5.0}}, False),
        ({"payload": {"amount": True}}, False),
    ],
)
def test_the_raise_rule_runs_in_the_screen_too(change, expected):
    record = event("action_submitted")
    record["payload"]["action"].update(change)
    text = json.dumps(record)
    assert SCREEN.passes([text]) == [expected] and pydantic_accepts(text) == expected


@pytest.mark.parametrize(
    "record,expected",
    [
        ({"type": "chatter_posted", "payload": {"text": "hi"}}, True),
        ({"type": "chatter_evaluated", "payload": {"target_emotions": {"fear": 3}}}, False),
        ({"type": "hand_started", "payload": {}}, False),  # documented: never screened as undocumented
        ({"type": 7, "payload": {}}, False),
    ],
)
def test_undocumented_types_are_screened_against_their_model(record, expected):
    text = json.dumps({**event("phase_changed"), **record})
    assert SCREEN.passes([text]) == [expected] and pydantic_accepts(text) == expected


def test_screen_survives_deep_nesting():
    deep = '{"type": "phase_changed", "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    assert SCREEN.passes([deep]) == [False]


def test_many_sets_of_undocumented_types_keep_few_decoders():
    # A long `--watch` meets new undocumented event types in file after file: the
    # decoders (and structs) made for them stay bounded.
    from workbench.screen import MAX_DECODERS

    for number in range(3 * MAX_DECODERS):
        decoder = SCREEN.lines(frozenset({f"kind_{number}"}), closed=True)
        line = json.dumps({**event("phase_changed"), "type": f"kind_{number}", "payload": {}})
        assert len(decoder.decode_lines(line.encode())) == 1
    assert len(SCREEN._arrays) <= MAX_DECODERS
    assert sum(1 for key in SCREEN._cache if key[1] and key[1].startswith("kind_")) <= MAX_DECODERS


class Move(BaseModel, extra="forbid", strict=True):
    """A command whose fields are required by the value of `kind`, as the EC4X commands'
    are: its validator is the oracle the variant screen below must agree with."""

    kind: Literal["go", "Go", "stay", "load"]
    target: int | None = None
    items: list[int] = Field(default_factory=list)
    cargo: str | None = None

    __screen_variants__ = ScreenVariants(
        "kind",
        {"go": "go", "Go": "go", "stay": "stay", "load": "load"},
        {"go": ("target",), "load": ("items", "cargo")},
        {"load": {"cargo": Literal["marines"]}},
    )

    @model_validator(mode="after")
    def fields_present(self):
        kind = self.kind.lower()
        if kind == "go" and self.target is None:
            raise ValueError("go needs a target")
        if kind == "load" and (not self.items or self.cargo != "marines"):
            raise ValueError("load needs items and loads marines only")
        return self


@pytest.mark.parametrize(
    "record",
    [
        {"kind": "go", "target": 1},
        {"kind": "Go", "target": 1},
        {"kind": "go"},
        {"kind": "go", "target": None},
        {"kind": "Go", "target": "1"},
        {"kind": "stay"},
        {"kind": "stay", "target": None},
        {"kind": "load", "items": [1], "cargo": "marines"},
        {"kind": "load", "items": [], "cargo": "marines"},
        {"kind": "load", "items": [1], "cargo": "colonists"},
        {"kind": "load", "items": [1]},
        {"kind": "load", "cargo": "marines"},
        {"kind": "fly"},
        {"kind": 5},
        {"target": 1},
        {"kind": "stay", "other": 1},
    ],
)
def test_a_variant_screen_requires_what_each_value_requires(record):
    # One struct per spelling of `kind`: the fields its value requires are there, not
    # null and not empty, and `load` takes marines only; everything else is refused.
    text = json.dumps(record)
    try:
        Move.model_validate_json(text)
        valid = True
    except ValidationError:
        valid = False
    assert _passes(model_screen(Move), text) == valid


def _passes(decoder: msgspec.json.Decoder, text: str) -> bool:
    try:
        decoder.decode(text)
        return True
    except msgspec.ValidationError:
        return False


class Order(BaseModel, extra="forbid", strict=True):
    move: Move
    note: Annotated[str, ScreenAs(Literal["ok", "Ok"])] = "ok"
    extra: int | None = None


def _watching(seen: list):
    """A screen of Order that hands each struct it decodes to `seen`: (model, tag, struct)."""

    def watch(model, tag):
        return lambda struct: seen.append((model.__name__, tag, struct))

    return model_screen(Order, Watching(watch=watch, unset=lambda model: ("extra",) if model is Order else ()))


@pytest.mark.parametrize(
    "record",
    [
        {"move": {"kind": "go", "target": 1}},
        {"move": {"kind": "Go", "target": 1}},
        {"move": {"kind": "stay"}},
        {"move": {"kind": "go"}},
        {"move": {"kind": "go", "target": 1}, "note": "Ok"},
        {"move": {"kind": "go", "target": 1}, "extra": None},
        {"move": {"kind": "go", "target": 1}, "extra": 3},
        {"move": {"kind": "go", "target": 1}, "note": "no"},
        {"move": {"kind": "fly"}},
        {},
    ],
)
def test_a_watching_screen_passes_what_the_plain_one_passes(record):
    text = json.dumps(record)
    assert _passes(_watching([]), text) == _passes(model_screen(Order), text)


def test_a_watching_screen_hands_over_each_struct_once_built_inner_first():
    seen = []
    _watching(seen).decode(json.dumps({"move": {"kind": "Go", "target": 1}, "extra": None}))
    assert [(model, tag) for model, tag, _ in seen] == [("Move", "Go"), ("Order", None)]
    move, order = seen[0][2], seen[1][2]
    assert order.move is move and move.target == 1
    # `extra` is unset where it is left out, None where it is written null.
    assert order.extra is None
    seen.clear()
    _watching(seen).decode(json.dumps({"move": {"kind": "stay"}}))
    assert seen[-1][2].extra is msgspec.UNSET


def test_a_watching_screen_hands_over_no_struct_it_refuses():
    seen = []
    with pytest.raises(msgspec.ValidationError):
        _watching(seen).decode(json.dumps({"move": {"kind": "go", "target": 1}, "note": "no"}))
    # The move was built before the draft failed; the draft itself never was.
    assert [(model, tag) for model, tag, _ in seen] == [("Move", "go")]


# Pieces of RFC 3339 / ISO 8601 timestamps and near misses: the screen reads a `ts`
# with msgspec's parser, so every string it takes must be one pydantic takes, as UTC.
TS_DATES = [
    "2026-02-06",
    "2024-02-29",
    "2026-02-29",
    "2026-04-31",
    "2026-12-31",
    "0000-01-01",
    "0001-01-01",
    "9999-12-31",
    "2026-2-06",
    "20260206",
    "2026-13-01",
    "2026-00-10",
    "+2026-02-06",
    "2026-W06-5",
    "2026-037",
    "２０２６-02-06",
]
TS_SEPARATORS = ["T", "t", " ", "_", "", "TT"]
TS_TIMES = [
    "09:38:54",
    "09:38",
    "24:00:00",
    "23:59:60",
    "09:38:54.1",
    "09:38:54.123456",
    "09:38:54.1234567",
    "09:38:54.123456789",
    "09:38:54,5",
    "093854",
    "09:38:54.",
    "09:60:00",
    "9:38:54",
    "09:38:54.-1",
]
TS_ZONES = [
    "Z",
    "z",
    "+00:00",
    "-00:00",
    "+0000",
    "+00",
    "+00:01",
    "-00:01",
    "+01:00",
    "-23:59",
    "+24:00",
    "",
    "+00:00:00",
    " Z",
    "UTC",
    "+00:60",
    "Z ",
    "\n",
]


def _ts_event(ts: str) -> str:
    return json.dumps({**event("phase_changed"), "ts": ts})


def test_a_timestamp_the_screen_takes_pydantic_takes():
    texts = [_ts_event("".join(parts)) for parts in itertools.product(TS_DATES, TS_SEPARATORS, TS_TIMES, TS_ZONES)]
    taken = [text for text, passed in zip(texts, SCREEN.passes(texts)) if passed]
    assert len(taken) > 300  # the grid holds plenty of valid timestamps (375)
    assert [text for text in taken if not pydantic_accepts(text)] == []


@pytest.mark.parametrize(
    "ts,screened,valid",
    [
        ("2026-02-06T09:38:54+00:00", True, True),
        ("2026-02-06T09:38:54Z", True, True),
        ("2026-02-06T09:38:54.123456-00:00", True, True),
        ("2024-02-29T09:38:54+00:00", True, True),
        ("2026-02-29T09:38:54+00:00", False, False),  # 2026 is no leap year
        ("2026-02-06T09:38:54+00:01", False, False),  # one minute off UTC, either way
        ("2026-02-06T09:38:54-00:01", False, False),
        ("2026-02-06T09:38:54+01:00", False, False),
        ("2026-02-06T09:38:54", False, False),  # no offset
    ],
)
def test_the_screen_takes_utc_timestamps_only(ts, screened, valid):
    # Seed 003: `ts` is an ISO-8601 UTC timestamp.
    text = _ts_event(ts)
    assert SCREEN.passes([text]) == [screened]
    assert pydantic_accepts(text) == valid


class _Even(BaseModel):
    n: Annotated[int, ScreenAs(int, check=lambda n: n % 2 == 0)]


class _EvenInAList(BaseModel):
    ns: list[Annotated[int, ScreenAs(int, check=lambda n: n % 2 == 0)]]


def test_a_screen_check_runs_on_its_field_and_nowhere_else():
    # The check of a model's own field runs on each decoded value, both sides of it.
    screen = model_screen(_Even)
    assert screen.decode(b'{"n": 2}').n == 2
    with pytest.raises(msgspec.ValidationError):
        screen.decode(b'{"n": 3}')
    # Inside a list no field test can run: the model is not screened at all, rather
    # than screened without its check.
    with pytest.raises(Unscreenable):
        model_screen(_EvenInAList)
