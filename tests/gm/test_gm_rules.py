"""Each rule of the gm format with a record that breaks it and one that keeps it."""

import json

import pytest

from workbench.gm.reader import read_line

OPTIONS = [{"text": "Accept", "impact": "Authority"}, {"text": "Decline", "impact": "Freedom"}]
ATTRIBUTES = {
    "speed": 10,
    "gunAccuracy": 12,
    "throwingAccuracy": 8,
    "strength": 11,
    "baseStrength": 11,
    "bravery": 9,
    "experience": 5,
}


def line(text=None, **envelope) -> str:
    record = {"id": "r-1", "model": "m", **envelope}
    if text is not None:
        record["text"] = text
    return json.dumps(record)


def found(raw: str, severities=("error", "warning")) -> set[tuple[str, str, str]]:
    """(field, rule, severity) of what the reader reports about one line."""
    return {(v.field, v.rule, v.severity) for v in read_line(1, raw).violations if v.severity in severities}


def json_response(**overrides) -> str:
    body = {
        "narrative": "The saloon is quiet.",
        "location": {"type": "town", "name": "Saloon"},
        "combatInitiated": False,
        "acquiredItems": [],
        "removedItems": [],
        "suggestedActions": [{"text": "Wait", "type": "basic"}],
    }
    body.update(overrides)
    return line(json.dumps({k: v for k, v in body.items() if v is not ...}))


def mixed(decision: dict) -> str:
    return line(f'The sheriff offers a badge.\nLOCATION: Office\n"playerDecision": {json.dumps(decision)}')


def character(**attributes) -> str:
    values = {**ATTRIBUTES, **attributes}
    return line(json.dumps({"name": "Doc", "attributes": {k: v for k, v in values.items() if v is not ...}}))


# --- suggested actions --------------------------------------------------------------


@pytest.mark.parametrize("kind", ["basic", "combat", "interaction"])
def test_known_action_types_pass(kind):
    assert found(json_response(suggestedActions=[{"text": "Go", "type": kind}])) == set()


def test_unknown_action_type_is_an_error_at_its_index():
    raw = line('Dusk.\nSUGGESTED_ACTIONS: [{"text": "Go", "type": "basic"}, {"text": "Fly", "type": "magic"}]')
    assert found(raw) == {("suggested_actions[1].type", "enum_value", "error")}
    [v] = read_line(1, raw).violations
    assert v.locator == "response r-1" and "'magic'" in v.message and "basic" in v.message


def test_title_description_actions_are_accepted_and_read_as_text():
    raw = line(
        'Dusk.\nSUGGESTED_ACTIONS: [{"title": "Punch", "description": "Hit him", "type": "combat", "id": "p-1"}]'
    )
    outcome = read_line(1, raw)
    assert outcome.violations == []
    assert outcome.row["suggested_actions"] == [
        {"text": "Punch", "type": "combat", "description": "Hit him", "id": "p-1"}
    ]


def test_action_without_type_defaults_to_basic_with_a_warning():
    outcome = read_line(1, json_response(suggestedActions=[{"text": "Wait"}]))
    assert found(json_response(suggestedActions=[{"text": "Wait"}])) == {
        ("suggested_actions[0].type", "action_type_defaulted", "warning")
    }
    assert outcome.row["suggested_actions"] == [{"text": "Wait", "type": "basic"}]
    assert outcome.row["valid"] is True


def test_action_without_text_is_an_error():
    assert found(json_response(suggestedActions=[{"type": "basic"}])) == {
        ("suggested_actions[0].text", "required_key", "error")
    }


def test_action_that_is_not_an_object_is_an_error():
    assert found(json_response(suggestedActions=["Wait"])) == {("suggested_actions[0]", "not_an_object", "error")}


def test_suggested_actions_that_are_not_a_list_are_an_error():
    assert found(line("Dusk.\nSUGGESTED_ACTIONS: Look around")) == {("suggested_actions", "list_type", "error")}


# --- player decisions -----------------------------------------------------------------


def test_a_complete_decision_passes_with_defaults_applied():
    outcome = read_line(1, mixed({"prompt": "Deputy?", "options": OPTIONS}))
    assert outcome.violations == []
    assert outcome.row["player_decision"]["importance"] == "moderate"
    assert outcome.row["player_decision"]["options"][0]["tags"] == []


@pytest.mark.parametrize("importance", ["critical", "significant", "moderate", "minor"])
def test_documented_importance_passes(importance):
    outcome = read_line(1, mixed({"prompt": "Deputy?", "options": OPTIONS, "importance": importance}))
    assert outcome.violations == []
    assert outcome.row["player_decision"]["importance"] == importance


def test_unknown_importance_falls_back_to_moderate_with_a_warning():
    outcome = read_line(1, mixed({"prompt": "Deputy?", "options": OPTIONS, "importance": "urgent"}))
    assert {(v.field, v.rule, v.severity) for v in outcome.violations} == {
        ("player_decision.importance", "importance_defaulted", "warning")
    }
    assert "'urgent'" in outcome.violations[0].message
    assert outcome.row["player_decision"]["importance"] == "moderate"
    assert outcome.row["valid"] is True


def test_one_option_is_too_few():
    assert found(mixed({"prompt": "Deputy?", "options": OPTIONS[:1]})) == {
        ("player_decision.options", "too_few_options", "error")
    }


def test_an_option_without_impact_is_dropped_and_leaves_too_few():
    decision = {"prompt": "Deputy?", "options": [OPTIONS[0], {"text": "Decline"}]}
    assert found(mixed(decision)) == {
        ("player_decision.options[1].impact", "incomplete_option", "warning"),
        ("player_decision.options", "too_few_options", "error"),
    }


def test_an_incomplete_third_option_only_warns():
    decision = {"prompt": "Deputy?", "options": [*OPTIONS, {"text": "", "impact": "Nothing"}]}
    outcome = read_line(1, mixed(decision))
    assert {(v.field, v.rule, v.severity) for v in outcome.violations} == {
        ("player_decision.options[2].text", "incomplete_option", "warning")
    }
    assert len(outcome.row["player_decision"]["options"]) == 2


def test_decision_without_prompt_is_an_error():
    assert found(mixed({"options": OPTIONS})) == {("player_decision.prompt", "required_key", "error")}


def test_decision_in_a_json_response_uses_the_column_name():
    raw = json_response(playerDecision={"prompt": "Go?", "options": OPTIONS[:1]})
    assert found(raw) == {("player_decision.options", "too_few_options", "error")}


# --- character generation -----------------------------------------------------------


def test_the_seed_character_passes():
    outcome = read_line(1, character())
    assert outcome.violations == [] and outcome.row["kind"] == "character"
    assert outcome.row["character"]["attributes"]["bravery"] == 9


@pytest.mark.parametrize("value", [0, 20])
def test_attribute_bounds_pass(value):
    assert found(character(speed=value)) == set()


@pytest.mark.parametrize(
    "value, rule",
    [
        (21, "less_than_equal"),
        (-1, "greater_than_equal"),
        ("12", "int_type"),
        (12.5, "int_type"),
    ],
)
def test_attribute_out_of_range_or_not_an_integer(value, rule):
    assert found(character(gunAccuracy=value)) == {("character.attributes.gunAccuracy", rule, "error")}


@pytest.mark.parametrize("attribute", list(ATTRIBUTES))
def test_every_attribute_is_required(attribute):
    assert found(character(**{attribute: ...})) == {(f"character.attributes.{attribute}", "required_key", "error")}


# --- narrative, location, items -----------------------------------------------------


def test_json_response_without_narrative_is_an_error():
    assert found(json_response(narrative=...)) == {("narrative", "required_key", "error")}


def test_empty_response_text_is_an_error():
    assert found(line("   ")) == {("narrative", "string_too_short", "error")}


def test_town_without_name_falls_back_with_a_warning():
    # The game cannot show a nameless town and uses its default location instead.
    outcome = read_line(1, json_response(location={"type": "town"}))
    assert {(v.field, v.rule, v.severity) for v in outcome.violations} == {
        ("location.name", "location_defaulted", "warning")
    }
    assert outcome.row["valid"] is True


def test_location_name_and_type_go_to_their_columns():
    row = read_line(1, json_response()).row
    assert (row["location"], row["location_type"]) == ("Saloon", "town")


def test_items_must_be_strings():
    assert found(json_response(acquiredItems=["Rope", 3])) == {("acquired_items[1]", "string_type", "error")}


def test_missing_markers_take_the_documented_defaults():
    row = read_line(1, line("Only a story, no markers.")).row
    assert row["location"] is None and row["combat"] is False and row["combat_opponent"] is None
    assert row["acquired_items"] == [] and row["removed_items"] == [] and row["suggested_actions"] == []
    assert row["player_decision"] is None and row["valid"] is True


def test_unknown_json_key_is_info_only():
    outcome = read_line(1, json_response(mood="tense"))
    assert [(v.field, v.rule, v.severity) for v in outcome.violations] == [("mood", "undocumented_key", "info")]
    assert outcome.row["valid"] is True


# --- malformed JSON -----------------------------------------------------------------


def test_valid_json_needs_no_repair():
    assert found(line('Dusk.\nSUGGESTED_ACTIONS: [{"text": "Go", "type": "basic"}]')) == set()


def test_repaired_json_is_a_warning():
    outcome = read_line(1, line('Dusk.\nSUGGESTED_ACTIONS: [{"text": "Go", "type": "basic"},]'))
    assert {(v.field, v.rule, v.severity) for v in outcome.violations} == {
        ("suggested_actions", "json_repaired", "warning")
    }
    assert "json-repair" in outcome.violations[0].message
    assert outcome.row["valid"] is True


def test_json_that_cannot_be_repaired_into_a_list_is_an_error():
    outcome = read_line(1, line('Dusk.\nSUGGESTED_ACTIONS: {"text": "Go", "type": '))
    assert found(line('Dusk.\nSUGGESTED_ACTIONS: {"text": "Go", "type": ')) == {
        ("suggested_actions", "unparsable_json", "error")
    }
    assert outcome.row["suggested_actions"] == []


# --- the line itself ----------------------------------------------------------------


def test_a_line_that_is_not_json_is_rejected_at_its_line_number():
    outcome = read_line(7, '{"id": "r-7", "text": "cut off')
    assert outcome.row is None and outcome.locator == "line 7"
    assert [(v.locator, v.field, v.rule) for v in outcome.violations] == [("line 7", "(record)", "not_a_json_object")]


def test_a_json_array_line_is_rejected():
    assert read_line(3, "[1, 2]").row is None


def test_a_line_without_text_is_rejected_at_its_response():
    outcome = read_line(2, json.dumps({"id": "r-2", "model": "m"}))
    assert outcome.row is None and outcome.locator == "response r-2"
    assert [(v.field, v.rule) for v in outcome.violations] == [("text", "required_key")]


def test_a_line_without_id_is_rejected_at_its_line_number():
    outcome = read_line(4, json.dumps({"text": "Hello"}))
    assert outcome.row is None and outcome.locator == "line 4"
    assert [(v.field, v.rule) for v in outcome.violations] == [("id", "required_key")]


def test_text_that_is_not_a_string_is_rejected():
    outcome = read_line(1, json.dumps({"id": "r-1", "text": {"narrative": "x"}}))
    assert outcome.row is None and [(v.field, v.rule) for v in outcome.violations] == [("text", "string_type")]


def test_numeric_id_and_timestamps_are_read():
    outcome = read_line(1, json.dumps({"id": 12, "text": "Hi.", "ts": "2026-02-06T10:38:54+01:00"}))
    assert outcome.locator == "response 12" and outcome.violations == []
    assert outcome.row["ts"].isoformat() == "2026-02-06T09:38:54"


def test_a_bad_timestamp_is_an_error_but_the_response_is_kept():
    outcome = read_line(1, line("Hi.", ts="yesterday"))
    assert outcome.row is not None and outcome.row["ts"] is None and outcome.row["valid"] is False
    assert [v.field for v in outcome.violations] == ["ts"]
