"""What the real game (github.com/jerseycheese/BootHillGM) accepts and writes, as our tests.

Each test states one fact learnt from the game's response handling and its own tests
(`services/locationService.ts`, `services/ai/gameService.ts`, `services/ai/utils/
responseValidator.ts`, `services/ai/responseParser.ts`, `services/ai/parsers/*`,
`utils/session/itemExtractUtils.ts`), with inputs of our own. Expected values are
written out here, never taken from the code under test. Where the game and seed 001
disagree, seed 001 wins and the message says what the game does.
"""

import json

import pytest

from workbench.gm.reader import read_line

OPTIONS = [{"text": "Take the job", "impact": "Money, and enemies"}, {"text": "Walk away", "impact": "Nothing changes"}]


def line(text: str) -> str:
    return json.dumps({"id": "b-1", "model": "m", "text": text})


def json_response(**overrides) -> str:
    """A whole-JSON response shaped like the game's own prompt asks for."""
    body = {
        "narrative": "Dust settles on the boardwalk.",
        "location": {"type": "town", "name": "Cutter's Ford"},
        "combatInitiated": False,
        "opponent": None,
        "acquiredItems": [],
        "removedItems": [],
        "suggestedActions": [{"text": "Wait for the stage", "type": "basic"}],
        "playerDecision": None,
    }
    body.update(overrides)
    return line(json.dumps({k: v for k, v in body.items() if v is not ...}))


def findings(raw: str) -> set[tuple[str, str, str]]:
    """(field, rule, severity) of the errors and warnings of one line."""
    return {(v.field, v.rule, v.severity) for v in read_line(1, raw).violations if v.severity != "info"}


def location_columns(raw: str) -> tuple:
    row = read_line(1, raw).row
    return row["location"], row["location_type"]


# --- locations: the game's four kinds (locationService.ts `LocationType`) -----------


@pytest.mark.parametrize(
    "location, columns",
    [
        ({"type": "town", "name": "Cutter's Ford"}, ("Cutter's Ford", "town")),
        (
            {"type": "wilderness", "description": "Cracked salt pan east of the river"},
            ("Cracked salt pan east of the river", "wilderness"),
        ),
        (
            {"type": "landmark", "name": "Hangman's Oak", "description": "A lone tree on the ridge"},
            ("Hangman's Oak", "landmark"),
        ),
        ({"type": "landmark", "name": "Hangman's Oak"}, ("Hangman's Oak", "landmark")),  # description optional
        ({"type": "unknown"}, (None, "unknown")),
    ],
)
def test_each_kind_of_the_game_is_legal_and_stored(location, columns):
    raw = json_response(location=location)
    assert findings(raw) == set()
    assert location_columns(raw) == columns


@pytest.mark.parametrize("kind", ["city", "building", "Town", "WILDERNESS"])
def test_a_kind_the_game_does_not_know_is_one_warning(kind):
    # gameService.ts answers a type outside town/wilderness/landmark/unknown (compared
    # exactly, case included) with its fallback response.
    outcome = read_line(1, json_response(location={"type": kind, "name": "Tombstone"}))
    assert [(v.field, v.rule, v.severity) for v in outcome.violations] == [
        ("location.type", "location_defaulted", "warning")
    ]
    message = outcome.violations[0].message
    assert "location.type" in message and repr(kind) in message
    assert all(name in message for name in ("town", "wilderness", "landmark", "unknown"))
    assert "fallback" in message and "Boot Hill" in message
    assert outcome.row["valid"] is True
    assert (outcome.row["location"], outcome.row["location_type"]) == ("Tombstone", kind)  # as written


@pytest.mark.parametrize(
    "location, field",
    [
        ({"type": "town"}, "location.name"),
        ({"type": "town", "name": ""}, "location.name"),
        ({"type": "town", "description": "A dusty crossroads"}, "location.name"),
        ({"type": "wilderness"}, "location.description"),
        ({"type": "wilderness", "name": "Dry Wash"}, "location.description"),  # a wilderness is described
        ({"type": "landmark", "description": "A tall rock"}, "location.name"),
    ],
)
def test_what_each_kind_needs(location, field):
    # responseValidator.ts keeps a town or landmark only with a string `name`, a
    # wilderness only with a string `description`; otherwise its default location.
    outcome = read_line(1, json_response(location=location))
    assert [(v.field, v.rule, v.severity) for v in outcome.violations] == [(field, "location_defaulted", "warning")]
    message = outcome.violations[0].message
    assert field in message and repr(location["type"]) in message
    assert "wilderness 'Unknown area'" in message
    assert outcome.row["location_type"] == location["type"]


def test_a_wilderness_is_stored_by_its_description_even_when_named():
    # responseValidator.ts keeps only the description of a wilderness.
    raw = json_response(location={"type": "wilderness", "name": "Dry Wash", "description": "A gully of white stones"})
    assert findings(raw) == set()
    assert location_columns(raw) == ("A gully of white stones", "wilderness")


def test_a_name_that_is_not_text_is_left_out():
    outcome = read_line(1, json_response(location={"type": "town", "name": 7}))
    assert findings(json_response(location={"type": "town", "name": 7})) == {
        ("location.name", "location_defaulted", "warning")
    }
    assert "7" in outcome.violations[0].message
    assert (outcome.row["location"], outcome.row["location_type"]) == (None, "town")


def test_a_location_without_type_falls_back():
    outcome = read_line(1, json_response(location={"name": "Tombstone"}))
    assert [(v.field, v.rule, v.severity) for v in outcome.violations] == [
        ("location.type", "location_defaulted", "warning")
    ]
    assert "found none" in outcome.violations[0].message
    assert location_columns(json_response(location={"name": "Tombstone"})) == ("Tombstone", None)


def test_a_string_location_in_a_json_response_is_a_warning_and_kept():
    # gameService.ts answers a JSON response whose location is a string with its fallback.
    outcome = read_line(1, json_response(location="Cutter's Ford"))
    assert [(v.field, v.rule, v.severity) for v in outcome.violations] == [
        ("location", "location_defaulted", "warning")
    ]
    message = outcome.violations[0].message
    assert "Cutter's Ford" in message and "fallback" in message and "Boot Hill" in message
    assert (outcome.row["location"], outcome.row["location_type"]) == ("Cutter's Ford", None)


def test_a_location_that_is_neither_object_nor_text_is_not_stored():
    outcome = read_line(1, json_response(location=["Cutter's Ford"]))
    assert findings(json_response(location=["Cutter's Ford"])) == {("location", "location_defaulted", "warning")}
    assert (outcome.row["location"], outcome.row["location_type"]) == (None, None)


def test_a_null_location_is_no_location():
    raw = json_response(location=None)
    assert findings(raw) == set() and location_columns(raw) == (None, None)


def test_the_location_marker_gives_a_name_and_no_kind():
    raw = line("The stage rolls in.\nLOCATION: Cutter's Ford")
    assert findings(raw) == set()
    assert location_columns(raw) == ("Cutter's Ford", None)


# --- items (itemExtractUtils.ts, the game's prompt) ---------------------------------


def test_acquired_items_may_be_name_objects():
    # The prompt asks for `{name, category}`; the game keeps the name.
    raw = json_response(acquiredItems=[{"name": "Tin of Beans", "category": "consumable"}, "Lasso"])
    outcome = read_line(1, raw)
    assert outcome.violations == []
    assert outcome.row["acquired_items"] == ["Tin of Beans", "Lasso"]


def test_an_item_object_without_a_name_is_an_error():
    raw = json_response(acquiredItems=["Lasso", {"category": "weapon"}])
    assert findings(raw) == {("acquired_items[1]", "item_without_name", "error")}


@pytest.mark.parametrize("written", ["[Lasso, Spurs]", "Lasso, Spurs"])
def test_marker_items_are_split_at_commas_with_or_without_brackets(written):
    row = read_line(1, line(f"You rummage in the saddlebag.\nACQUIRED_ITEMS: {written}\nREMOVED_ITEMS: [Rope]")).row
    assert row["acquired_items"] == ["Lasso", "Spurs"] and row["removed_items"] == ["Rope"]


# --- suggested actions (responseParser.ts, responseValidator.ts) ---------------------


def test_title_wins_over_text():
    # The game reads `action.title || action.text`.
    raw = line('Noon.\nSUGGESTED_ACTIONS: [{"title": "Saddle up", "text": "Ride", "type": "basic"}]')
    assert read_line(1, raw).row["suggested_actions"] == [{"text": "Saddle up", "type": "basic"}]


def test_an_empty_type_is_basic():
    # The game reads `action.type || 'basic'`: an empty type is no type.
    outcome = read_line(1, line('Noon.\nSUGGESTED_ACTIONS: [{"text": "Saddle up", "type": ""}]'))
    assert [(v.field, v.rule, v.severity) for v in outcome.violations] == [
        ("suggested_actions[0].type", "action_type_defaulted", "warning")
    ]
    assert outcome.row["suggested_actions"] == [{"text": "Saddle up", "type": "basic"}]


def test_a_marker_action_of_another_type_is_an_error_the_game_drops():
    outcome = read_line(1, line('Noon.\nSUGGESTED_ACTIONS: [{"text": "Saddle up", "type": "travel"}]'))
    [v] = outcome.violations
    assert (v.field, v.rule, v.severity) == ("suggested_actions[0].type", "enum_value", "error")
    assert "'travel'" in v.message and "drops" in v.message


def test_the_games_json_only_types_are_errors_that_say_so():
    # The game's JSON path also takes main, side, optional, chaotic, danger; seed 001 does not.
    raw = json_response(suggestedActions=[{"title": "Rest", "description": "Sleep", "type": "optional", "id": "a-1"}])
    [v] = read_line(1, raw).violations
    assert (v.field, v.rule, v.severity) == ("suggested_actions[0].type", "enum_value", "error")
    assert "'optional'" in v.message
    assert all(name in v.message for name in ("main", "side", "chaotic", "danger"))


# --- player decisions (parsers/playerDecisionParser.ts) -----------------------------


def test_importance_is_compared_exactly():
    decision = {"prompt": "Take the job?", "options": OPTIONS, "importance": "Critical"}
    outcome = read_line(1, json_response(playerDecision=decision))
    assert [(v.field, v.rule, v.severity) for v in outcome.violations] == [
        ("player_decision.importance", "importance_defaulted", "warning")
    ]
    assert outcome.row["player_decision"]["importance"] == "moderate"


def test_a_decision_keeps_what_it_says_and_tags_default_to_empty():
    decision = {
        "prompt": "Take the job?",
        "options": OPTIONS,
        "importance": "significant",
        "context": "The rancher is desperate",
        "characters": ["Rancher Boyd"],
    }
    outcome = read_line(1, json_response(playerDecision=decision))
    assert outcome.violations == []
    stored = outcome.row["player_decision"]
    assert (stored["prompt"], stored["importance"], stored["context"], stored["characters"]) == (
        "Take the job?",
        "significant",
        "The rancher is desperate",
        ["Rancher Boyd"],
    )
    assert [option["tags"] for option in stored["options"]] == [[], []]


def test_an_option_with_empty_text_and_impact_does_not_count():
    decision = {"prompt": "Take the job?", "options": [OPTIONS[0], {"text": "", "impact": ""}]}
    assert findings(json_response(playerDecision=decision)) == {
        ("player_decision.options[1].text", "incomplete_option", "warning"),
        ("player_decision.options", "too_few_options", "error"),
    }


def test_no_options_is_too_few_and_the_game_shows_no_decision():
    outcome = read_line(1, json_response(playerDecision={"prompt": "Take the job?", "options": []}))
    [v] = outcome.violations
    assert (v.field, v.rule, v.severity) == ("player_decision.options", "too_few_options", "error")
    assert "found 0" in v.message and "no decision" in v.message


def test_null_fields_the_prompt_asks_for_are_empty():
    # The game's prompt: "Provide all fields, even if they are empty arrays or null".
    outcome = read_line(1, json_response(storyProgression=None, lore=None))
    assert findings(json_response(storyProgression=None, lore=None)) == set()
    row = outcome.row
    assert row["player_decision"] is None and row["combat"] is False and row["combat_opponent"] is None


# --- characters (parsers/characterParser.ts) ----------------------------------------


def test_a_name_with_attributes_is_a_character_whatever_else_it_says():
    # The game tries the character form first.
    body = {
        "name": "Ezra Coil",
        "narrative": "A stranger.",
        "attributes": {
            "speed": 7,
            "gunAccuracy": 15,
            "throwingAccuracy": 3,
            "strength": 12,
            "baseStrength": 12,
            "bravery": 18,
            "experience": 0,
        },
    }
    outcome = read_line(1, line(json.dumps(body)))
    assert outcome.row["kind"] == "character"
    assert [(v.field, v.rule, v.severity) for v in outcome.violations] == [
        ("character.narrative", "undocumented_key", "info")
    ]
    assert outcome.row["character"]["attributes"]["gunAccuracy"] == 15
