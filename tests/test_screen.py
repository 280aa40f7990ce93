"""The screen is sound: a line it accepts is a line pydantic accepts."""

import json

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from tests.damage.events import PAYLOADS, event
from workbench.damage.models import LINES, SCREEN, UNSCREENED_TYPES
from workbench.screen import passes

# Values that probe every kind of check: types, bounds, enums, patterns, nulls.
ODD_VALUES = st.sampled_from([
    None, True, 0, 1, -1, 2, 1.0, 1.5, -1.0001, 0.9999, 1e308, "", "1", "AS", "1X", "AS\n", "raise",
    "attack_team", "discussion", [], [1], ["AS"], {}, {"a": 1},
    "2026-02-06T09:38:54+00:00", "2026-02-30T09:38:54+00:00", "2026-02-06T09:38:54+02:00",
])


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
    if passes(SCREEN, [text]) == [True]:
        assert pydantic_accepts(text), text


def test_screen_accepts_plain_valid_events():
    screened = [kind for kind in sorted(PAYLOADS) if kind not in UNSCREENED_TYPES]
    assert passes(SCREEN, [json.dumps(event(kind)) for kind in screened]) == [True] * len(screened)


def test_types_with_custom_rules_always_go_to_pydantic():
    assert "action_submitted" in UNSCREENED_TYPES
    assert passes(SCREEN, [json.dumps(event("action_submitted"))]) == [False]


def test_screen_survives_deep_nesting():
    deep = '{"type": "phase_changed", "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    assert passes(SCREEN, [deep]) == [False]
    assert isinstance(SCREEN, msgspec.json.Decoder)
