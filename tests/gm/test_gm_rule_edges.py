"""Edges of the gm rules: where each finding is located, what its message says, and
what the columns keep when a response breaks a rule.

Expected values are written out here from seed 001 (action types `basic, combat,
interaction`; importance `critical, significant, moderate, minor`), from the real
game's behaviour recorded in test_real_boothill.py (the kinds `town, wilderness,
landmark, unknown`, the default location wilderness 'Unknown area', the fallback
response in town 'Boot Hill'), never taken from the code under test.
"""

import json

import pytest

from workbench.gm.reader import read_line

LOCATOR = "response e-1"
OPTIONS = [{"text": "Take the job", "impact": "Money, and enemies"}, {"text": "Walk away", "impact": "Nothing changes"}]
ATTRIBUTES = {
    "speed": 10,
    "gunAccuracy": 12,
    "throwingAccuracy": 8,
    "strength": 11,
    "baseStrength": 11,
    "bravery": 9,
    "experience": 5,
}
KINDS = "town, wilderness, landmark, unknown"  # the game's LocationType, in its order
DEFAULT_LOCATION = "the game shows its default location instead (wilderness 'Unknown area')"
FALLBACK_RESPONSE = "the game replaces the whole response with its fallback response (in town 'Boot Hill')"


def line(text: str) -> str:
    return json.dumps({"id": "e-1", "model": "m", "text": text})


def json_response(**fields) -> str:
    """A whole-JSON response: a narrative and whatever else is given."""
    return line(json.dumps({"narrative": "Dust settles on the boardwalk.", **fields}))


def the_violation(raw: str):
    """The one violation of a line (fails when there are none or several)."""
    [found] = read_line(1, raw).violations
    return found


def as_tuple(v) -> tuple:
    return v.locator, v.field, v.rule, v.severity, v.message


# --- suggested actions: a missing or empty type is 'basic' ----------------------------


def test_an_action_without_type_says_none_was_found_and_basic_is_used():
    v = the_violation(json_response(suggestedActions=[{"text": "Wait"}]))
    assert as_tuple(v) == (
        LOCATOR,
        "suggested_actions[0].type",
        "action_type_defaulted",
        "warning",
        "expected `type` (basic, combat, interaction); found none; using 'basic'",
    )


def test_an_action_with_an_empty_type_says_the_empty_string_was_found():
    v = the_violation(line('Noon.\nSUGGESTED_ACTIONS: [{"text": "Go", "type": "basic"}, {"text": "Ride", "type": ""}]'))
    assert as_tuple(v) == (
        LOCATOR,
        "suggested_actions[1].type",
        "action_type_defaulted",
        "warning",
        "expected `type` (basic, combat, interaction); found ''; using 'basic'",
    )


def test_an_action_that_is_not_an_object_is_located_and_says_what_was_found():
    v = the_violation(json_response(suggestedActions=["Wait"]))
    assert as_tuple(v) == (
        LOCATOR,
        "suggested_actions[0]",
        "not_an_object",
        "error",
        "expected a JSON object; found 'Wait'",
    )


def test_the_real_games_action_note_is_only_on_action_types():
    # A null importance is not an action type: whatever is said about it, the note on
    # what the game does with actions of other types is not.
    decision = {"prompt": "Take the job?", "options": OPTIONS, "importance": None}
    outcome = read_line(1, json_response(playerDecision=decision))
    assert [v.field for v in outcome.violations] == ["player_decision.importance"]
    assert "seed 001;" not in outcome.violations[0].message
    assert "action" not in outcome.violations[0].message


# --- importance: anything else is 'moderate' --------------------------------------------


@pytest.mark.parametrize("written", ["Critical", "MINOR", " significant "])
def test_an_importance_in_another_case_or_padded_says_the_game_compares_exactly(written):
    v = the_violation(
        json_response(playerDecision={"prompt": "Take the job?", "options": OPTIONS, "importance": written})
    )
    assert as_tuple(v) == (
        LOCATOR,
        "player_decision.importance",
        "importance_defaulted",
        "warning",
        f"expected one of critical, significant, moderate, minor; found {written!r}; using 'moderate'"
        " (the game compares levels exactly, case included)",
    )


@pytest.mark.parametrize("written, shown", [("urgent", "'urgent'"), (3, "3")])
def test_an_importance_that_is_no_level_in_any_case_says_nothing_about_case(written, shown):
    v = the_violation(
        json_response(playerDecision={"prompt": "Take the job?", "options": OPTIONS, "importance": written})
    )
    assert as_tuple(v) == (
        LOCATOR,
        "player_decision.importance",
        "importance_defaulted",
        "warning",
        f"expected one of critical, significant, moderate, minor; found {shown}; using 'moderate'",
    )


# --- options: only a missing text or impact drops an option ------------------------------


def test_an_option_that_is_not_an_object_is_dropped_with_a_warning():
    decision = {"prompt": "Take the job?", "options": ["Take the job", *OPTIONS]}
    outcome = read_line(1, json_response(playerDecision=decision))
    assert [as_tuple(v) for v in outcome.violations] == [
        (
            LOCATOR,
            "player_decision.options[0]",
            "incomplete_option",
            "warning",
            "expected a JSON object; found 'Take the job'; the option is dropped",
        )
    ]
    assert [o["text"] for o in outcome.row["player_decision"]["options"]] == ["Take the job", "Walk away"]


def test_an_option_with_bad_tags_is_kept_and_its_tags_are_an_error():
    # Tags are optional: an option with text and impact is complete, so it is not dropped.
    decision = {"prompt": "Take the job?", "options": [{**OPTIONS[0], "tags": "greedy"}, OPTIONS[1]]}
    outcome = read_line(1, json_response(playerDecision=decision))
    assert [(v.field, v.rule, v.severity) for v in outcome.violations] == [
        ("player_decision.options[0].tags", "list_type", "error")
    ]
    assert len(outcome.row["player_decision"]["options"]) == 2


# --- locations ---------------------------------------------------------------------------


def test_a_town_without_a_name_says_none_was_found():
    v = the_violation(json_response(location={"type": "town"}))
    assert as_tuple(v) == (
        LOCATOR,
        "location.name",
        "location_defaulted",
        "warning",
        f"expected `location.name` (text) for a location of type 'town'; found none; {DEFAULT_LOCATION}",
    )


def test_a_location_without_a_type_is_located_and_says_none_was_found():
    outcome = read_line(1, json_response(location={"name": "Tombstone"}))
    assert [as_tuple(v) for v in outcome.violations] == [
        (
            LOCATOR,
            "location.type",
            "location_defaulted",
            "warning",
            f"expected `location.type` (one of {KINDS}); found none; {DEFAULT_LOCATION}",
        )
    ]


def test_a_kind_the_game_does_not_know_lists_the_games_kinds():
    v = the_violation(json_response(location={"type": "city", "name": "Tombstone"}))
    assert as_tuple(v) == (
        LOCATOR,
        "location.type",
        "location_defaulted",
        "warning",
        f"expected `location.type` to be one of {KINDS}; found 'city', a kind the game "
        f"does not know; {FALLBACK_RESPONSE}",
    )


def test_a_location_type_that_is_not_text_is_a_warning_and_not_stored():
    outcome = read_line(1, json_response(location={"type": 5, "name": "Tombstone"}))
    assert [as_tuple(v) for v in outcome.violations] == [
        (
            LOCATOR,
            "location.type",
            "location_defaulted",
            "warning",
            f"expected `location.type` to be one of {KINDS}; found 5, a kind the game does not know; {FALLBACK_RESPONSE}",
        )
    ]
    assert (outcome.row["location"], outcome.row["location_type"]) == ("Tombstone", None)
    assert outcome.row["valid"] is True


def test_a_string_location_in_a_json_response_is_located_and_names_the_games_kinds():
    v = the_violation(json_response(location="Tombstone"))
    assert as_tuple(v) == (
        LOCATOR,
        "location",
        "location_defaulted",
        "warning",
        f"expected `location` to be an object of one of the game's kinds ({KINDS}); "
        f"found the string 'Tombstone'; {FALLBACK_RESPONSE}; kept as the location's name",
    )


def test_a_location_that_is_a_number_says_so_and_is_not_stored():
    outcome = read_line(1, json_response(location=7))
    assert [as_tuple(v) for v in outcome.violations] == [
        (
            LOCATOR,
            "location",
            "location_defaulted",
            "warning",
            f"expected `location` to be an object of one of the game's kinds ({KINDS}); found 7; "
            f"{DEFAULT_LOCATION}; no location is stored",
        )
    ]
    assert (outcome.row["location"], outcome.row["location_type"]) == (None, None)


def test_a_description_that_is_not_text_is_left_out_with_a_warning():
    # A town needs a name, not a description: a bad description is only left out.
    outcome = read_line(1, json_response(location={"type": "town", "name": "Tombstone", "description": 7}))
    assert [as_tuple(v) for v in outcome.violations] == [
        (
            LOCATOR,
            "location.description",
            "location_defaulted",
            "warning",
            "expected `location.description` to be text; found 7; the game leaves it out",
        )
    ]
    assert (outcome.row["location"], outcome.row["location_type"]) == ("Tombstone", "town")
    assert outcome.row["valid"] is True


def test_a_location_of_unknown_kind_with_only_a_description_is_stored_by_it():
    raw = json_response(location={"type": "unknown", "description": "A fog-bound valley"})
    outcome = read_line(1, raw)
    assert outcome.violations == []
    assert (outcome.row["location"], outcome.row["location_type"]) == ("A fog-bound valley", "unknown")


def test_a_location_of_unknown_kind_with_a_name_is_stored_by_its_name():
    raw = json_response(location={"type": "unknown", "name": "Hollow", "description": "A fog-bound valley"})
    outcome = read_line(1, raw)
    assert outcome.violations == []
    assert (outcome.row["location"], outcome.row["location_type"]) == ("Hollow", "unknown")


# --- combat ------------------------------------------------------------------------------


def test_the_combat_marker_starts_combat_with_its_opponent():
    # Seed 001: `COMBAT: Mysterious Gunslinger` names the opponent of a combat.
    outcome = read_line(1, line("A shadowy figure steps out.\nLOCATION: Dark Alley\nCOMBAT: Mysterious Gunslinger"))
    assert outcome.violations == []
    assert (outcome.row["combat"], outcome.row["combat_opponent"]) == (True, "Mysterious Gunslinger")


def test_a_response_that_breaks_a_rule_keeps_combat_and_the_opponents_name():
    raw = json_response(
        combatInitiated=True,
        opponent={"name": "Black Bart", "attributes": {}},
        suggestedActions=[{"text": "Fly", "type": "magic"}],
    )
    outcome = read_line(1, raw)
    assert [(v.field, v.rule) for v in outcome.violations] == [("suggested_actions[0].type", "enum_value")]
    assert outcome.row["valid"] is False
    assert (outcome.row["combat"], outcome.row["combat_opponent"]) == (True, "Black Bart")


def test_a_response_that_breaks_a_rule_without_combat_is_not_in_combat():
    outcome = read_line(1, line('Noon.\nSUGGESTED_ACTIONS: [{"text": "Fly", "type": "magic"}]'))
    assert outcome.row["valid"] is False
    assert (outcome.row["combat"], outcome.row["combat_opponent"]) == (False, None)


def test_a_combat_flag_that_is_not_a_boolean_is_an_error_and_stored_as_unknown():
    outcome = read_line(1, json_response(combatInitiated="yes"))
    assert [(v.field, v.rule, v.severity) for v in outcome.violations] == [("combat", "bool_type", "error")]
    assert outcome.row["combat"] is None


# --- columns of a response that breaks a rule: kept as written -----------------------------


def test_a_narrative_that_is_not_text_is_stored_as_its_json_with_accents_kept():
    outcome = read_line(1, json_response(narrative=["Señor Díaz rides in."]))
    assert [(v.field, v.rule) for v in outcome.violations] == [("narrative", "string_type")]
    assert outcome.row["narrative"] == '["Señor Díaz rides in."]'


# --- characters --------------------------------------------------------------------------


def test_a_repaired_character_keeps_its_json_repaired_warning():
    raw = line(json.dumps({"name": "Doc", "attributes": ATTRIBUTES})[:-1] + ",}")
    outcome = read_line(1, raw)
    assert outcome.row["kind"] == "character"
    assert [(v.locator, v.field, v.rule, v.severity) for v in outcome.violations] == [
        (LOCATOR, "text", "json_repaired", "warning")
    ]


def test_a_character_key_the_seed_does_not_know_is_info_located_and_not_stored():
    outcome = read_line(1, line(json.dumps({"name": "Doc", "attributes": ATTRIBUTES, "mood": "grim"})))
    assert [as_tuple(v) for v in outcome.violations] == [
        (
            LOCATOR,
            "character.mood",
            "undocumented_key",
            "info",
            "key `mood` is not in the specification; kept in `text`",
        )
    ]
    assert outcome.row["character"] == {"name": "Doc", "attributes": ATTRIBUTES}


def test_an_unknown_response_key_is_info_at_the_response():
    outcome = read_line(1, json_response(mood="tense"))
    assert [as_tuple(v) for v in outcome.violations] == [
        (LOCATOR, "mood", "undocumented_key", "info", "key `mood` is not in the specification; kept in `text`")
    ]


# --- malformed JSON ----------------------------------------------------------------------


def test_json_that_cannot_be_repaired_is_located_and_says_the_field_is_left_empty():
    outcome = read_line(1, line('Dusk.\nSUGGESTED_ACTIONS: {"text": "Go", "type": '))
    [v] = outcome.violations
    assert (v.locator, v.field, v.rule, v.severity) == (LOCATOR, "suggested_actions", "unparsable_json", "error")
    assert v.message.startswith("expected JSON of the documented shape; found ")
    assert v.message.endswith(", and json-repair could not recover it; the field is left empty")
    assert outcome.row["suggested_actions"] == []
