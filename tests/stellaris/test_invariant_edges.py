"""Edges of the seed's four key invariants: tolerance bounds, keys present on one side only,
malformed items, where the player's id comes from, and what each finding says."""

from tests.stellaris.examples import bundle, example
from workbench.stellaris.invariants import bundle_player_id, check_bundle

PLAYER = 16777223  # the player's id in the examples (seed 000: `player_id` is the save's, not 0)


def found(outputs, player_id=None):
    return [(v.locator, v.severity, v.rule, v.field, v.message) for v in check_bundle(outputs, player_id)]


def resources(income, expenses, net, summary=None):
    output = {"monthly_income": income, "monthly_expenses": expenses, "net_monthly": net}
    if summary is not None:
        output["summary"] = summary
    return {"get_resources": output}


# 1. get_wars populates `wars`, and get_situation agrees


def test_player_at_war_with_no_wars_says_wars_must_be_populated():
    wars = {"wars": [], "count": 0, "player_at_war": True}
    assert found({"get_wars": wars}) == [
        (
            "tool get_wars",
            "error",
            "invariant_wars",
            "wars",
            "`player_at_war` is true but `wars` is empty: get_wars must populate `wars`",
        )
    ]


def test_situation_at_war_disagreeing_shows_its_value_in_lower_case():
    outputs = bundle("get_wars", "get_situation")
    outputs["get_situation"]["at_war"] = False
    assert found(outputs) == [
        (
            "tool get_situation",
            "error",
            "invariant_wars",
            "at_war",
            "`at_war` is false but get_wars lists 1 war(s) in the same bundle",
        )
    ]


def test_situation_war_count_disagreeing_shows_both_counts():
    outputs = bundle("get_wars", "get_situation")
    outputs["get_situation"]["war_count"] = 3
    assert found(outputs) == [
        (
            "tool get_situation",
            "error",
            "invariant_wars",
            "war_count",
            "`war_count` is 3 but get_wars lists 1 war(s) in the same bundle",
        )
    ]


# 2. net_monthly = income - expenses (tolerance 0.01)


def test_resource_with_income_only_has_no_expenses():
    assert found(resources({"unity": 10.0}, {}, {"unity": 10.0})) == []
    assert found(resources({"unity": 10.0}, {}, {"unity": 5.0})) == [
        (
            "tool get_resources",
            "error",
            "invariant_net_monthly",
            "net_monthly.unity",
            "`net_monthly.unity` is 5 but income - expenses = 10 - 0 = 10 (tolerance 0.01)",
        )
    ]


def test_resource_with_expenses_only_has_no_income():
    assert found(resources({}, {"influence": 3.0}, {"influence": -3.0})) == []
    assert found(resources({}, {"influence": 3.0}, {"influence": 0.0})) == [
        (
            "tool get_resources",
            "error",
            "invariant_net_monthly",
            "net_monthly.influence",
            "`net_monthly.influence` is 0 but income - expenses = 0 - 3 = -3 (tolerance 0.01)",
        )
    ]


def test_a_non_numeric_income_or_expense_is_left_to_the_schema_check():
    assert found(resources({"energy": "n/a"}, {"energy": 120.0}, {"energy": 20.0})) == []
    assert found(resources({"energy": 140.0}, {"energy": None}, {"energy": 20.0})) == []


def test_net_monthly_off_by_exactly_the_tolerance_is_kept():
    assert found(resources({"energy": 0.5}, {"energy": 0.5}, {"energy": 0.01})) == []


def test_net_monthly_off_by_just_more_than_the_tolerance_is_broken():
    assert found(resources({"energy": 0.5}, {"energy": 0.5}, {"energy": 0.02})) == [
        (
            "tool get_resources",
            "error",
            "invariant_net_monthly",
            "net_monthly.energy",
            "`net_monthly.energy` is 0.02 but income - expenses = 0.5 - 0.5 = 0 (tolerance 0.01)",
        )
    ]


def test_a_resource_missing_from_net_monthly_is_fine_when_its_net_is_within_the_tolerance():
    assert found(resources({"food": 0.01}, {}, {})) == []


def test_a_resource_missing_from_net_monthly_is_broken_when_its_net_exceeds_the_tolerance():
    assert found(resources({"food": 0.02}, {}, {})) == [
        (
            "tool get_resources",
            "error",
            "invariant_net_monthly",
            "net_monthly.food",
            "`net_monthly` has no `food` but income - expenses = 0.02 - 0 = 0.02",
        )
    ]


def test_without_expenses_only_the_summary_is_checked():
    output = example("get_resources")
    del output["monthly_expenses"]
    output["net_monthly"]["energy"] = 99.0  # no longer checkable against income - expenses
    output["summary"]["energy_net"] = 99.0
    assert found({"get_resources": output}) == []
    output["summary"]["minerals_net"] = 0.0
    assert found({"get_resources": output}) == [
        (
            "tool get_resources",
            "error",
            "invariant_net_monthly",
            "summary.minerals_net",
            "`summary.minerals_net` is 0.0 but `net_monthly.minerals` is 35.5",
        )
    ]


def test_summary_net_off_by_exactly_the_tolerance_is_kept():
    assert found(resources({}, {}, {"energy": 0.0}, {"energy_net": 0.01})) == []


def test_summary_net_off_by_just_more_than_the_tolerance_is_broken():
    assert found(resources({}, {}, {"energy": 0.0}, {"energy_net": 0.02})) == [
        (
            "tool get_resources",
            "error",
            "invariant_net_monthly",
            "summary.energy_net",
            "`summary.energy_net` is 0.02 but `net_monthly.energy` is 0.0",
        )
    ]


# 3. ownership uses the save's player_id


def test_a_wrong_nonzero_owner_names_the_saves_player_block_without_suspecting_zero():
    outputs = bundle("get_planets")
    outputs["get_planets"]["planets"][0]["owner"] = PLAYER
    outputs["get_planets"]["planets"][1]["owner"] = 5
    assert found(outputs, player_id=PLAYER) == [
        (
            "tool get_planets",
            "error",
            "invariant_player_id",
            "planets[1].owner",
            f"owner is 5 but the player's id is {PLAYER} (from the save's `player` block): ownership "
            f"must use the save's player_id",
        )
    ]


def test_an_owner_of_zero_is_suspected_hard_coded_and_names_the_status_as_source():
    outputs = bundle("get_player_status", "get_starbases")
    outputs["get_starbases"]["starbases"][0]["owner_id"] = 0
    assert found(outputs) == [
        (
            "tool get_starbases",
            "error",
            "invariant_player_id",
            "starbases[0].owner_id",
            f"owner is 0 (a hard-coded 0?) but the player's id is {PLAYER} (from get_player_status.player_id): "
            f"ownership must use the save's player_id",
        )
    ]


def test_the_full_briefing_states_the_players_id_when_the_status_is_absent():
    outputs = {"get_full_briefing": {"meta": {"player_id": PLAYER}}, "get_fleets": {"fleets": [{"owner": 0}]}}
    assert found(outputs) == [
        (
            "tool get_fleets",
            "error",
            "invariant_player_id",
            "fleets[0].owner",
            f"owner is 0 (a hard-coded 0?) but the player's id is {PLAYER} (from get_full_briefing.meta.player_id): "
            f"ownership must use the save's player_id",
        )
    ]


def test_the_snapshot_states_the_players_id_when_status_and_briefing_are_absent():
    outputs = {"get_snapshot": {"meta": {"player_id": PLAYER}}, "get_fleets": {"fleets": [{"owner": 0}]}}
    assert found(outputs) == [
        (
            "tool get_fleets",
            "error",
            "invariant_player_id",
            "fleets[0].owner",
            f"owner is 0 (a hard-coded 0?) but the player's id is {PLAYER} (from get_snapshot.meta.player_id): "
            f"ownership must use the save's player_id",
        )
    ]


def test_a_bundle_that_states_no_player_id_gives_no_id_and_no_source():
    assert bundle_player_id({}) == (None, "")
    assert bundle_player_id({"get_player_status": {"player_id": True}}) == (None, "")


def test_owned_list_items_that_are_not_objects_are_skipped():
    outputs = {"get_planets": {"planets": ["Earth", None, {"owner": 0}]}}
    assert [(v.field, v.rule) for v in check_bundle(outputs, PLAYER)] == [("planets[2].owner", "invariant_player_id")]


# 4. get_full_briefing / get_snapshot carry their source tools' values


def test_a_differing_scalar_shows_both_values():
    outputs = bundle("get_player_status", "get_full_briefing")
    outputs["get_full_briefing"]["meta"]["player_id"] = 0
    assert found(outputs) == [
        (
            "tool get_full_briefing",
            "error",
            "invariant_full_briefing",
            "meta.player_id",
            f"`meta.player_id` is 0 but get_player_status.player_id is {PLAYER} in the same bundle",
        )
    ]


def test_a_snapshot_is_checked_like_a_full_briefing():
    outputs = bundle("get_player_status")
    outputs["get_snapshot"] = example("get_full_briefing")
    assert found(outputs) == []
    outputs["get_snapshot"]["military"]["fleet_count"] = 13
    assert found(outputs) == [
        (
            "tool get_snapshot",
            "error",
            "invariant_full_briefing",
            "military.fleet_count",
            "`military.fleet_count` is 13 but get_player_status.fleet_count is 14 in the same bundle",
        )
    ]


def test_a_resource_the_briefing_adds_to_net_monthly_is_reported_as_absent_from_the_source():
    outputs = bundle("get_resources", "get_full_briefing")
    outputs["get_full_briefing"]["economy"]["net_monthly"]["food"] = 5.0
    assert found(outputs) == [
        (
            "tool get_full_briefing",
            "error",
            "invariant_full_briefing",
            "economy.net_monthly.food",
            "`economy.net_monthly.food` is 5.0 but get_resources.net_monthly has no `food`",
        )
    ]


def test_an_added_resource_with_a_null_value_is_still_absent_from_the_source():
    outputs = bundle("get_resources", "get_full_briefing")
    outputs["get_full_briefing"]["economy"]["net_monthly"]["food"] = None
    assert found(outputs) == [
        (
            "tool get_full_briefing",
            "error",
            "invariant_full_briefing",
            "economy.net_monthly.food",
            "`economy.net_monthly.food` is None but get_resources.net_monthly has no `food`",
        )
    ]


def test_a_resource_the_briefing_drops_shows_the_lost_value():
    outputs = bundle("get_resources", "get_full_briefing")
    del outputs["get_full_briefing"]["economy"]["net_monthly"]["alloys"]
    assert found(outputs) == [
        (
            "tool get_full_briefing",
            "error",
            "invariant_full_briefing",
            "economy.net_monthly.alloys",
            "`economy.net_monthly` has no `alloys` but get_resources.net_monthly.alloys is -12.5 (data lost)",
        )
    ]


def test_briefing_number_off_by_exactly_the_tolerance_is_kept():
    outputs = bundle("get_resources", "get_full_briefing")
    outputs["get_full_briefing"]["economy"]["key_resources"]["research_total"] = 0.01
    assert found(outputs) == []


def test_briefing_number_off_by_just_more_than_the_tolerance_is_broken():
    outputs = bundle("get_resources", "get_full_briefing")
    outputs["get_full_briefing"]["economy"]["key_resources"]["research_total"] = 0.02
    assert found(outputs) == [
        (
            "tool get_full_briefing",
            "error",
            "invariant_full_briefing",
            "economy.key_resources.research_total",
            "`economy.key_resources.research_total` is 0.02 but get_resources.summary.research_total is 0.0 "
            "in the same bundle",
        )
    ]


def diplomacy_bundle(briefing_diplomacy, **source):
    outputs = bundle("get_diplomacy")
    outputs["get_diplomacy"].update(source)
    outputs["get_full_briefing"] = {"diplomacy": briefing_diplomacy}
    return outputs


def test_equal_name_lists_agree():
    assert found(diplomacy_bundle({"rivals": ["Chosen Imperium"], "allies": []})) == []
    outputs = diplomacy_bundle(
        {"allies": ["Tiyanki Herd", "Fanatic Purifiers"]}, allies=["Tiyanki Herd", "Fanatic Purifiers"]
    )
    assert found(outputs) == []


def test_a_name_list_with_an_extra_name_disagrees():
    outputs = diplomacy_bundle({"rivals": ["Chosen Imperium", "Tiyanki Herd"]})
    assert found(outputs) == [
        (
            "tool get_full_briefing",
            "error",
            "invariant_full_briefing",
            "diplomacy.rivals",
            "`diplomacy.rivals` is ['Chosen Imperium', 'Tiyanki Herd'] but get_diplomacy.rivals is "
            "['Chosen Imperium'] in the same bundle",
        )
    ]


def test_a_name_list_with_another_name_disagrees():
    outputs = diplomacy_bundle({"rivals": ["Tiyanki Herd"]})
    assert found(outputs) == [
        (
            "tool get_full_briefing",
            "error",
            "invariant_full_briefing",
            "diplomacy.rivals",
            "`diplomacy.rivals` is ['Tiyanki Herd'] but get_diplomacy.rivals is ['Chosen Imperium'] in the same bundle",
        )
    ]


def test_a_list_against_a_non_list_disagrees():
    outputs = diplomacy_bundle({"allies": []}, allies=None)
    assert found(outputs) == [
        (
            "tool get_full_briefing",
            "error",
            "invariant_full_briefing",
            "diplomacy.allies",
            "`diplomacy.allies` is [] but get_diplomacy.allies is None in the same bundle",
        )
    ]
    outputs = diplomacy_bundle({"allies": []}, allies="")
    assert found(outputs) == [
        (
            "tool get_full_briefing",
            "error",
            "invariant_full_briefing",
            "diplomacy.allies",
            "`diplomacy.allies` is [] but get_diplomacy.allies is '' in the same bundle",
        )
    ]


def test_a_value_shown_in_sixty_characters_is_shown_whole():
    name = "F" * 58  # repr adds two quotes: 60 characters
    outputs = diplomacy_bundle({"federation": name})
    assert found(outputs) == [
        (
            "tool get_full_briefing",
            "error",
            "invariant_full_briefing",
            "diplomacy.federation",
            f"`diplomacy.federation` is '{name}' but get_diplomacy.federation is None in the same bundle",
        )
    ]


def test_a_value_longer_than_sixty_characters_is_cut_to_sixty():
    name = "F" * 59  # repr: 61 characters, cut to its first 57 and "..."
    shown = "'" + "F" * 56 + "..."
    assert len(shown) == 60
    outputs = diplomacy_bundle({"federation": name})
    assert found(outputs) == [
        (
            "tool get_full_briefing",
            "error",
            "invariant_full_briefing",
            "diplomacy.federation",
            f"`diplomacy.federation` is {shown} but get_diplomacy.federation is None in the same bundle",
        )
    ]
