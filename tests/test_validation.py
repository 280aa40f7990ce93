"""Pydantic's errors as located findings (`workbench.validation`), for every format. The
errors are pydantic's own, raised by a model of Damage's ActionEnvelope and AttackPlan
as the specification (seed 003, sections 4.1 and 4.2) writes them; the expected rules,
fields and messages are written out by hand."""

from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from workbench.validation import FOUND_CHARS, field_path, found, line_count, message_of, tag_by, violation
from workbench.violation import Violation


class AttackPlan(BaseModel):
    model_config = ConfigDict(extra="forbid")
    delivery_channel: Literal["public", "private", "mixed"]
    confidence: float


class ActionEnvelope(BaseModel):
    model_config = ConfigDict(extra="forbid")
    player_id: str
    kind: Literal["fold", "check", "call", "raise", "pass"]
    payload: dict
    reasoning_summary: str
    attack_plan: AttackPlan | None = None

    @model_validator(mode="after")
    def a_raise_needs_its_plan(self):  # "if kind == raise, attack_plan is required"
        if self.kind == "raise" and self.attack_plan is None:
            raise PydanticCustomError("attack_plan_required", "a raise needs its attack_plan", {"field": "attack_plan"})
        return self


def findings(action: dict, locator: str = "line 7") -> list[Violation]:
    """The findings of an action as an `action_submitted` event's payload holds it."""
    with pytest.raises(ValidationError) as raised:
        ActionEnvelope.model_validate(action)
    return [violation(locator, error, ("payload", "action", *error["loc"])) for error in raised.value.errors()]


def test_a_missing_key_an_unknown_key_and_a_value_not_in_the_enum_are_named_for_a_reader():
    said = findings({"kind": "shove", "payload": {}, "reasoning_summary": "all in", "mood": "calm"})
    assert said == [
        Violation(
            "line 7", "error", "required_key", "payload.action.player_id", "expected key `player_id`; found no such key"
        ),
        Violation(
            "line 7",
            "error",
            "enum_value",
            "payload.action.kind",
            "Input should be 'fold', 'check', 'call', 'raise' or 'pass'; found 'shove'",
        ),
        Violation("line 7", "error", "unknown_key", "payload.action.mood", "key `mood` is not in the specification"),
    ]


def test_a_nested_error_keeps_its_path_and_pydantic_s_own_type_as_its_rule():
    said = findings(
        {
            "player_id": "P1",
            "kind": "call",
            "payload": {},
            "reasoning_summary": "x",
            "attack_plan": {"delivery_channel": "public", "confidence": "high"},
        }
    )
    assert said == [
        Violation(
            "line 7",
            "error",
            "float_parsing",
            "payload.action.attack_plan.confidence",
            "Input should be a valid number, unable to parse string as a number; found 'high'",
        )
    ]


def test_a_custom_rule_points_at_the_key_it_names_and_says_its_own_message():
    # the rule is the model's (no location of its own): ctx['field'] names the key
    [said] = findings({"player_id": "P1", "kind": "raise", "payload": {"amount": 5}, "reasoning_summary": "x"})
    assert said == Violation(
        "line 7", "error", "attack_plan_required", "payload.action.attack_plan", "a raise needs its attack_plan"
    )
    error = {"type": "custom", "loc": (), "msg": "3 is odd", "input": 3, "ctx": {"field": "a.b"}}
    assert violation("response r-2", error, ("payload",), "warning") == Violation(
        "response r-2", "warning", "custom", "payload.a.b", "3 is odd"
    )


@pytest.mark.parametrize(
    "loc, path",
    [
        (("payload", "players", 0, "emotions"), "payload.players[0].emotions"),
        (("players", 0, 1), "players[0][1]"),
        ((0, "fear"), "[0].fear"),
        (("payload",), "payload"),
        ((), "(record)"),  # the record itself
    ],
)
def test_a_location_is_written_as_a_path_with_indices_in_brackets(loc, path):
    assert field_path(loc) == path


def test_what_was_found_is_its_repr_cut_to_80_characters():
    assert found("shove") == "'shove'" and found(None) == "None" and found([1, 2]) == "[1, 2]"
    fits = "x" * (FOUND_CHARS - 2)  # with its quotes, 80 characters: kept whole
    assert found(fits) == f"'{fits}'" and len(found(fits)) == 80
    long = "y" * 200
    assert found(long) == "'" + "y" * 76 + "..." and len(found(long)) == 80


def test_a_count_of_lines_is_said_in_words():
    assert [line_count(n) for n in (0, 1, 2, 12)] == ["0 lines", "1 line", "2 lines", "12 lines"]


def test_json_errors_and_messages_that_say_what_they_found_are_kept_as_they_are():
    assert (
        message_of({"type": "json_invalid", "loc": (), "msg": "Invalid JSON: EOF", "input": "{"}) == "Invalid JSON: EOF"
    )
    said = {
        "type": "too_long",
        "loc": ("hand",),
        "msg": "6 cards, not 5",
        "input": [1] * 6,
        "ctx": {"says_found": True},
    }
    assert message_of(said) == "6 cards, not 5"


def test_a_tag_names_a_known_model_else_the_fallback_and_no_object_is_no_tag():
    # Damage's event types (seed 003, section 5) name the model of their payload
    tag = tag_by("type", {"game_started", "action_submitted"}, "unknown_event")
    assert tag({"type": "game_started", "payload": {}}) == "game_started"
    assert tag({"type": "hand_ended"}) == "unknown_event"  # not among the models given
    assert tag({"type": 3}) == tag({}) == "unknown_event"
    assert tag(["type", "game_started"]) is None and tag("game_started") is None
