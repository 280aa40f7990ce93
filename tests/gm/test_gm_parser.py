"""The raw-text parser against the seed's own examples and the variants real models write."""

import json

import pytest

from workbench.gm.parser import parse

# --- seed 001's examples, verbatim ----------------------------------------------------

SEED_STANDARD = """You enter the dusty saloon. The bartender nods in your direction.

LOCATION: Silver Gulch Saloon
SUGGESTED_ACTIONS: [
  {"text": "Approach the bar", "type": "basic"},
  {"text": "Look around the room", "type": "basic"},
  {"text": "Talk to the bartender", "type": "interaction"}
]"""

SEED_COMBAT = """A shadowy figure steps out from the alley, revolver drawn.

LOCATION: Dark Alley
COMBAT: Mysterious Gunslinger
SUGGESTED_ACTIONS: [
  {"text": "Draw your weapon", "type": "combat"},
  {"text": "Try to talk your way out", "type": "interaction"},
  {"text": "Dive for cover", "type": "combat"}
]"""

SEED_DECISION = """The sheriff offers you a deputy badge.

LOCATION: Sheriff's Office

"playerDecision": {
  "prompt": "Do you accept the sheriff's offer to become a deputy?",
  "options": [
    {
      "text": "Accept the badge",
      "impact": "You'll gain authority but also responsibility",
      "tags": ["lawful", "commitment"]
    },
    {
      "text": "Decline politely",
      "impact": "You'll maintain your freedom but may miss opportunities",
      "tags": ["neutral", "independence"]
    },
    {
      "text": "Laugh at the offer",
      "impact": "You'll offend the sheriff but impress outlaws",
      "tags": ["rude", "reputation"]
    }
  ],
  "importance": "significant",
  "characters": ["Sheriff Wilson"]
}"""

SEED_CHARACTER = """{
  "name": "Character Name",
  "attributes": {
    "speed": 10,
    "gunAccuracy": 12,
    "throwingAccuracy": 8,
    "strength": 11,
    "baseStrength": 11,
    "bravery": 9,
    "experience": 5
  }
}"""


def test_seed_standard_narrative():
    parsed = parse(SEED_STANDARD)
    assert parsed.kind == "markers"
    assert parsed.fields["narrative"] == "You enter the dusty saloon. The bartender nods in your direction."
    assert parsed.fields["location"] == "Silver Gulch Saloon"
    assert [a["text"] for a in parsed.fields["suggested_actions"]] == [
        "Approach the bar",
        "Look around the room",
        "Talk to the bartender",
    ]
    assert "acquired_items" not in parsed.fields  # missing markers are left to the model's defaults
    assert parsed.json_problems == []


def test_seed_combat_initiation():
    parsed = parse(SEED_COMBAT)
    assert parsed.fields["combat_opponent"] == "Mysterious Gunslinger"
    assert parsed.fields["combat"] is True
    assert parsed.fields["location"] == "Dark Alley"
    assert [a["type"] for a in parsed.fields["suggested_actions"]] == ["combat", "interaction", "combat"]
    assert parsed.fields["narrative"] == "A shadowy figure steps out from the alley, revolver drawn."


def test_seed_decision_point_is_the_mixed_format():
    parsed = parse(SEED_DECISION)
    assert parsed.kind == "mixed"
    assert parsed.fields["narrative"] == "The sheriff offers you a deputy badge."
    assert parsed.fields["location"] == "Sheriff's Office"
    decision = parsed.fields["player_decision"]
    assert decision["prompt"] == "Do you accept the sheriff's offer to become a deputy?"
    assert len(decision["options"]) == 3 and decision["importance"] == "significant"
    assert decision["characters"] == ["Sheriff Wilson"]


def test_seed_character_generation():
    parsed = parse(SEED_CHARACTER)
    assert parsed.kind == "character"
    assert parsed.fields["character"]["attributes"]["gunAccuracy"] == 12


# --- inline markers (formats.md, and the real game's own test cases) ----------------


def test_inline_markers_are_cut_and_the_sentence_rejoined():
    parsed = parse("Dusty ACQUIRED_ITEMS: REMOVED_ITEMS: misses the shopkeeper!")
    assert parsed.fields["narrative"] == "Dusty misses the shopkeeper!"
    assert "acquired_items" not in parsed.fields and "removed_items" not in parsed.fields


def test_inline_markers_in_combat_rolls_keep_the_other_lines():
    text = """
Showdown
Round 2
Your Health: 41
Wes Calloway ACQUIRED_ITEMS: REMOVED_ITEMS: fires wide of the Drifter! (Roll: 88, Target: 52)
The Drifter ACQUIRED_ITEMS: REMOVED_ITEMS: grazes Wes Calloway for 3 damage! (Roll: 19, Target: 47)
    """
    assert parse(text).fields["narrative"] == (
        "Showdown\nRound 2\nYour Health: 41\n"
        "Wes Calloway fires wide of the Drifter! (Roll: 88, Target: 52)\n"
        "The Drifter grazes Wes Calloway for 3 damage! (Roll: 19, Target: 47)"
    )


def test_own_line_items_and_inline_empty_markers_together():
    text = """
The brawl spills into the street!
ACQUIRED_ITEMS: [Derringer, Pocket Watch]
REMOVED_ITEMS: [Hat]
You swing at the cowhand ACQUIRED_ITEMS: REMOVED_ITEMS: and connect! (Roll: 33, Target: 40)
    """
    parsed = parse(text)
    assert parsed.fields["narrative"] == (
        "The brawl spills into the street!\nYou swing at the cowhand and connect! (Roll: 33, Target: 40)"
    )
    assert parsed.fields["acquired_items"] == ["Derringer", "Pocket Watch"]
    assert parsed.fields["removed_items"] == ["Hat"]


def test_combat_name_ends_at_the_next_marker():
    parsed = parse(
        "Spurs jingle behind you.\nCOMBAT: One-Eyed Pete ACQUIRED_ITEMS: REMOVED_ITEMS:\nPete reaches for his holster!"
    )
    assert parsed.fields["combat_opponent"] == "One-Eyed Pete"
    assert parsed.fields["narrative"] == "Spurs jingle behind you.\nPete reaches for his holster!"


def test_name_line_marker_block_and_continuation_join():
    actions = [
        {"title": "Grab a chair", "type": "combat", "description": "Swing it", "id": "chair-1"},
        {"title": "Duck behind the bar", "type": "basic", "description": "Hide", "id": "duck-1"},
    ]
    text = (
        f"Blacksmith\n\nACQUIRED_ITEMS: []\nREMOVED_ITEMS: []\nSUGGESTED_ACTIONS: {json.dumps(actions)}"
        " kicks with Hit (Roll: 14) dealing 4 damage to leg"
    )
    parsed = parse(text)
    assert parsed.fields["narrative"] == "Blacksmith kicks with Hit (Roll: 14) dealing 4 damage to leg"
    assert parsed.fields["suggested_actions"][0]["title"] == "Grab a chair"
    assert parsed.fields["acquired_items"] == [] and parsed.fields["removed_items"] == []


def test_inline_location_ends_with_its_sentence():
    parsed = parse("You ride into town. LOCATION: Tombstone. The wind howls. ACQUIRED_ITEMS: [Map] You pocket it.")
    assert parsed.fields["location"] == "Tombstone"
    assert parsed.fields["acquired_items"] == ["Map"]
    assert parsed.fields["narrative"] == "You ride into town. The wind howls. You pocket it."


def test_no_space_is_put_before_punctuation():
    assert parse("You find a rope ACQUIRED_ITEMS: [Rope].").fields["narrative"] == "You find a rope."


def test_a_marker_word_inside_a_json_string_is_not_a_marker():
    text = 'Quiet night.\nSUGGESTED_ACTIONS: [{"text": "Ask about COMBAT: rules", "type": "interaction"}]'
    parsed = parse(text)
    assert parsed.fields["suggested_actions"] == [{"text": "Ask about COMBAT: rules", "type": "interaction"}]
    assert "combat_opponent" not in parsed.fields


def test_markdown_bold_markers_and_template_brackets():
    parsed = parse("The stage stops.\n**LOCATION:** [Stagecoach Station]")
    assert parsed.fields["location"] == "Stagecoach Station"
    assert parsed.fields["narrative"] == "The stage stops."


# --- item lists ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "written, items",
    [
        ("[Rope, Lantern]", ["Rope", "Lantern"]),
        ('["Rope", "Lantern"]', ["Rope", "Lantern"]),
        ("Rope, Lantern", ["Rope", "Lantern"]),
        ("[Sheriff's Badge]", ["Sheriff's Badge"]),
        ("[]", []),
        ("none", []),
    ],
)
def test_item_list_spellings(written, items):
    parsed = parse(f"You search the room.\nACQUIRED_ITEMS: {written}")
    assert parsed.fields["acquired_items"] == items
    assert parsed.json_problems == []


def test_several_item_markers_add_up():
    parsed = parse("A.\nACQUIRED_ITEMS: [Rope]\nB.\nACQUIRED_ITEMS: [Lantern]")
    assert parsed.fields["acquired_items"] == ["Rope", "Lantern"]


# --- whole-JSON and mixed responses ---------------------------------------------------


def test_whole_json_response_keeps_its_spelling_for_validation():
    body = {
        "narrative": "The livery smells of hay.",
        "location": {"type": "town", "name": "Cutter's Ford"},
        "combatInitiated": False,
        "acquiredItems": [],
        "removedItems": [],
        "suggestedActions": [],
    }
    parsed = parse(json.dumps(body, indent=2))
    assert parsed.kind == "json" and parsed.fields == body


def test_whole_json_in_a_code_fence():
    parsed = parse('```json\n{"narrative": "Dust everywhere."}\n```')
    assert parsed.kind == "json" and parsed.fields["narrative"] == "Dust everywhere."


def test_braces_in_a_narrative_are_not_a_json_response():
    parsed = parse("{The door creaks open.}\nLOCATION: Barn")
    assert parsed.kind == "markers" and parsed.fields["location"] == "Barn"


def test_mixed_decision_in_a_fence_leaves_no_fence_in_the_narrative():
    decision = {"prompt": "Go?", "options": [{"text": "Yes", "impact": "Far"}, {"text": "No", "impact": "Near"}]}
    text = f'The road forks.\n```json\n"playerDecision": {json.dumps(decision)}\n```'
    parsed = parse(text)
    assert parsed.kind == "mixed" and parsed.fields["narrative"] == "The road forks."
    assert parsed.fields["player_decision"] == decision


# --- malformed JSON -----------------------------------------------------------------


def test_trailing_comma_in_actions_is_repaired():
    parsed = parse('Hi.\nSUGGESTED_ACTIONS: [{"text": "Run", "type": "basic"},]')
    assert parsed.fields["suggested_actions"] == [{"text": "Run", "type": "basic"}]
    [problem] = parsed.json_problems
    assert problem.field == "suggested_actions" and problem.repaired


def test_truncated_actions_run_to_the_next_marker_and_are_repaired():
    parsed = parse('Hi.\nSUGGESTED_ACTIONS: [{"text": "Run", "type": "basic"}, {"text": "Hide"\nCOMBAT: Bandit')
    assert parsed.fields["suggested_actions"] == [{"text": "Run", "type": "basic"}, {"text": "Hide"}]
    assert parsed.fields["combat_opponent"] == "Bandit"
    assert [p.field for p in parsed.json_problems] == ["suggested_actions"]


def test_malformed_whole_json_is_repaired():
    parsed = parse('{"narrative": "Night falls.", "acquiredItems": ["Rope"],}')
    assert parsed.kind == "json" and parsed.fields["acquiredItems"] == ["Rope"]
    [problem] = parsed.json_problems
    assert problem.field == "text" and problem.repaired


def test_malformed_decision_in_the_mixed_format_is_repaired():
    text = (
        "A deal.\n\"playerDecision\": {'prompt': 'Deal?', 'options': [{'text': 'Yes', 'impact': 'Rich'}, "
        "{'text': 'No', 'impact': 'Poor'}]}"
    )
    parsed = parse(text)
    assert parsed.fields["player_decision"]["prompt"] == "Deal?"
    assert parsed.json_problems[0].field == "player_decision" and parsed.json_problems[0].repaired


def test_unclosed_item_list_ends_with_its_line():
    parsed = parse("Loot.\nACQUIRED_ITEMS: [Rope, Lantern\nThe end.")
    assert parsed.fields["acquired_items"] == ["Rope", "Lantern"]
    assert parsed.fields["narrative"] == "Loot.\nThe end."
    assert [p.field for p in parsed.json_problems] == ["acquired_items"]
