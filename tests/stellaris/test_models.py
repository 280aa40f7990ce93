"""The seed's models against its own examples and against real-world drift."""

import pytest

from tests.stellaris.examples import EXAMPLES, example
from workbench.stellaris.findings import check_output
from workbench.stellaris.models import TOOLS

SEED_TOOLS = [
    "get_player_status",
    "get_wars",
    "get_fleets",
    "get_resources",
    "get_diplomacy",
    "get_leaders",
    "get_technology",
    "get_planets",
    "get_starbases",
    "get_full_briefing",
    "get_empire",
    "search",
    "get_situation",
]


def errors(tool, payload):
    return [(v.field, v.rule, v.message) for v in check_output(tool, payload)[1] if v.severity == "error"]


def infos(tool, payload):
    return [(v.field, v.rule, v.message) for v in check_output(tool, payload)[1] if v.severity == "info"]


def test_every_tool_of_the_seed_has_a_model_and_an_example():
    assert set(SEED_TOOLS) <= set(TOOLS) and set(SEED_TOOLS) == set(EXAMPLES)


@pytest.mark.parametrize("tool", SEED_TOOLS)
def test_seed_examples_are_valid_without_findings(tool):
    assert check_output(tool, example(tool)) == (True, [])


def test_consolidated_tools_use_the_same_schemas():
    assert check_output("get_snapshot", example("get_full_briefing"))[0]
    assert check_output("get_details", {"resources": example("get_resources"), "wars": example("get_wars")})[0]
    assert not check_output("get_details", {"planets": {"count": 1}})[0]


def test_total_pops_is_a_missing_key_with_a_hint():
    planets = example("get_planets")
    planets["total_pops"] = planets.pop("total_population")
    [(field, rule, message)] = errors("get_planets", planets)
    assert (field, rule) == ("total_population", "required_key")
    assert "expected key `total_population` (an integer)" in message
    assert "found no such key" in message and "did you mean `total_pops`?" in message
    assert ("total_pops", "undocumented_key") in [(f, r) for f, r, _ in infos("get_planets", planets)]


def test_monthly_net_where_net_monthly_belongs():
    resources = example("get_resources")
    resources["monthly_net"] = resources.pop("net_monthly")
    [(field, rule, message)] = errors("get_resources", resources)
    assert (field, rule) == ("net_monthly", "required_key")
    assert "did you mean `monthly_net`?" in message


def test_a_hint_comes_from_declared_names_and_from_close_spellings():
    technology = {
        "researched_techs": ["tech_lasers_1"],
        "completed_count": 1,
        "in_progress": {"physics": None, "society": None, "engineering": None},
        "by_categry": {},
    }
    found = {field: message for field, _, message in errors("get_technology", technology)}
    assert "did you mean `researched_techs`?" in found["completed"]  # declared: real extractors write it
    assert "did you mean `in_progress`?" in found["current_research"]
    assert "did you mean `by_categry`?" in found["by_category"]  # a close spelling


def test_no_hint_without_a_near_sibling():
    wars = example("get_wars")
    del wars["count"]
    [(_, _, message)] = errors("get_wars", wars)
    assert "did you mean" not in message


def test_no_hint_for_names_that_only_share_a_word():
    planets = example("get_planets")
    for planet in planets["planets"]:
        planet["is_capital"] = planet.pop("is_habitat")
    [(_, _, message)] = errors("get_planets", planets)
    assert "did you mean" not in message


def test_missing_keys_in_list_items_are_reported_once_with_the_first_index():
    planets = example("get_planets")
    for planet in planets["planets"]:
        del planet["is_habitat"]
    [(field, rule, message)] = errors("get_planets", planets)
    assert (field, rule) == ("planets[0].is_habitat", "required_key")
    assert "also at 1 more: `planets[1].is_habitat`" in message


def test_mistyped_keys_say_what_was_expected_and_found():
    status = example("get_player_status")
    status["player_id"] = "16777223"
    status["colonies"]["habitats"]["count"] = 2.5
    found = {field: message for field, _, message in errors("get_player_status", status)}
    assert found["player_id"] == "expected an integer; found '16777223' (string)"
    assert found["colonies.habitats.count"] == "expected an integer; found 2.5 (number)"


def test_whole_floats_count_as_integers_but_booleans_do_not():
    status = example("get_player_status")
    status["military_power"] = 52000.0
    assert errors("get_player_status", status) == []
    status["fleet_count"] = True
    assert [f for f, _, _ in errors("get_player_status", status)] == ["fleet_count"]


def test_treaties_as_objects_are_mistyped():
    diplomacy = example("get_diplomacy")
    diplomacy["treaties"] = [{"type": "research_agreement"}, {"type": "commercial_pact"}]
    [(field, rule, message)] = errors("get_diplomacy", diplomacy)
    assert (field, rule) == ("treaties[0]", "wrong_type")
    assert message.startswith("expected a string; found {'type': 'research_agreement'} (object)")


def test_leaders_without_a_name_and_undocumented_classes():
    leaders = example("get_leaders")
    leaders["leaders"] += [
        {"class": "commander", "level": 2, "age": 40, "traits": []},
        {"name": "Voss", "class": "envoy", "level": 1, "age": 33, "traits": []},
    ]
    assert [(f, r) for f, r, _ in errors("get_leaders", leaders)] == [("leaders[1].name", "required_key")]
    drift = {(f, r) for f, r, _ in infos("get_leaders", leaders)}
    assert drift == {("leaders[1].class", "undocumented_value"), ("leaders[2].class", "undocumented_value")}


def test_extra_keys_are_info_at_their_path():
    status = example("get_player_status")
    status["victory_rank"] = 3
    status["colonies"]["_note"] = "colonized worlds"
    assert errors("get_player_status", status) == []
    assert {f for f, _, _ in infos("get_player_status", status)} == {"victory_rank", "colonies._note"}


def test_optional_keys_may_be_absent_but_not_mistyped():
    wars = example("get_wars")
    del wars["active_war_ids"]
    assert errors("get_wars", wars) == []
    search = example("search")
    search["truncated"] = "no"
    assert [f for f, _, _ in errors("search", search)] == ["truncated"]


def test_a_found_empire_needs_its_figures():
    assert errors("get_empire", {"name": "Nobody", "found": False}) == []
    [(field, rule, _)] = errors("get_empire", {"name": "Chosen", "found": True})
    assert (field, rule) == ("military_power", "required_when_found")


def test_dates_must_be_stellaris_dates_and_enums_hold():
    status = example("get_player_status")
    status["date"] = "2342-06-15"
    [(field, rule, _)] = errors("get_player_status", status)
    assert (field, rule) == ("date", "date_format")
    situation = example("get_situation")
    situation["game_phase"] = "middle"
    [(field, rule, message)] = errors("get_situation", situation)
    assert (field, rule) == ("game_phase", "enum_value") and "'early', 'mid', 'late', 'endgame'" in message


def test_an_output_that_is_not_an_object_and_an_unknown_tool():
    [(field, rule, message)] = errors("get_fleets", ["Home Guard"])
    assert (field, rule) == ("(record)", "wrong_type") and "expected a JSON object" in message
    valid, [finding] = check_output("get_armies", {"count": 1})
    assert valid and (finding.severity, finding.rule, finding.field) == ("info", "unknown_tool", "(record)")
    assert "did you mean `get_planets`?" in check_output("get_planet", {})[1][0].message
