"""The seed's four key invariants, each with data that breaks it and data that keeps it."""

from tests.stellaris.examples import bundle, example
from workbench.stellaris.invariants import check_bundle


def broken(outputs, player_id=None):
    return {(v.locator, v.field, v.rule) for v in check_bundle(outputs, player_id)}


def test_consistent_outputs_keep_every_invariant():
    outputs = bundle(
        "get_player_status",
        "get_resources",
        "get_wars",
        "get_situation",
        "get_full_briefing",
        "get_planets",
        "get_diplomacy",
    )
    assert check_bundle(outputs) == []


# 1. get_wars populates `wars`, and get_situation agrees


def test_wars_must_be_populated():
    wars = example("get_wars")
    wars["wars"] = []
    assert broken({"get_wars": wars}) == {("tool get_wars", "wars", "invariant_wars")}
    messages = [v.message for v in check_bundle({"get_wars": wars})]
    assert any("`count` is 1" in m for m in messages) and any("`player_at_war` is true" in m for m in messages)


def test_situation_at_war_must_agree_with_wars_in_a_bundle():
    outputs = bundle("get_wars", "get_situation")
    outputs["get_situation"]["at_war"] = False
    assert broken(outputs) == {("tool get_situation", "at_war", "invariant_wars")}
    outputs["get_situation"]["at_war"], outputs["get_situation"]["war_count"] = True, 3
    assert broken(outputs) == {("tool get_situation", "war_count", "invariant_wars")}


# 2. net_monthly = income - expenses


def test_net_monthly_must_be_income_minus_expenses():
    resources = example("get_resources")
    resources["net_monthly"]["minerals"] = resources["summary"]["minerals_net"] = 40.0
    [violation] = check_bundle({"get_resources": resources})
    assert (violation.field, violation.rule) == ("net_monthly.minerals", "invariant_net_monthly")
    assert "95.5 - 60 = 35.5" in violation.message


def test_net_monthly_tolerates_rounding_and_needs_every_resource():
    resources = example("get_resources")
    resources["net_monthly"]["energy"] = 20.009
    assert check_bundle({"get_resources": resources}) == []
    del resources["net_monthly"]["alloys"]
    assert broken({"get_resources": resources}) == {
        ("tool get_resources", "net_monthly.alloys", "invariant_net_monthly")
    }


def test_summary_nets_restate_net_monthly():
    resources = example("get_resources")
    resources["summary"]["energy_net"] = 0.0  # what the `monthly_net` bug left behind
    assert broken({"get_resources": resources}) == {
        ("tool get_resources", "summary.energy_net", "invariant_net_monthly")
    }


# 3. ownership uses the save's player_id


def test_owned_items_must_carry_the_players_id():
    outputs = bundle("get_player_status", "get_planets")
    for planet in outputs["get_planets"]["planets"]:
        planet["owner"] = 16777223
    assert check_bundle(outputs) == []
    outputs["get_planets"]["planets"][1]["owner"] = 0
    [violation] = check_bundle(outputs)
    assert (violation.locator, violation.field, violation.rule) == (
        "tool get_planets",
        "planets[1].owner",
        "invariant_player_id",
    )
    assert "hard-coded 0" in violation.message and "16777223" in violation.message


def test_the_saves_player_id_wins_over_the_bundles():
    outputs = bundle("get_planets")
    for planet in outputs["get_planets"]["planets"]:
        planet["owner"] = 0
    assert check_bundle(outputs) == []  # nothing says who the player is
    assert broken(outputs, player_id=16777223) == {
        ("tool get_planets", "planets[0].owner", "invariant_player_id"),
        ("tool get_planets", "planets[1].owner", "invariant_player_id"),
    }


# 4. get_full_briefing carries its source tools' values


def test_full_briefing_nets_must_equal_get_resources():
    outputs = bundle("get_resources", "get_full_briefing")
    outputs["get_full_briefing"]["economy"]["net_monthly"]["energy"] = 60.0
    [violation] = check_bundle(outputs)
    assert (violation.locator, violation.field, violation.rule) == (
        "tool get_full_briefing",
        "economy.net_monthly.energy",
        "invariant_full_briefing",
    )
    assert "is 60.0 but get_resources.net_monthly.energy is 20.0" in violation.message


def test_full_briefing_that_drops_a_resource_loses_data():
    outputs = bundle("get_resources", "get_full_briefing")
    del outputs["get_full_briefing"]["economy"]["net_monthly"]["alloys"]
    [violation] = check_bundle(outputs)
    assert violation.field == "economy.net_monthly.alloys" and "data lost" in violation.message


def test_full_briefing_meta_and_military_must_equal_player_status():
    outputs = bundle("get_player_status", "get_full_briefing")
    outputs["get_full_briefing"]["meta"]["player_id"] = 0
    outputs["get_full_briefing"]["military"]["fleet_size"] = 7
    assert broken(outputs) == {
        ("tool get_full_briefing", "meta.player_id", "invariant_full_briefing"),
        ("tool get_full_briefing", "military.fleet_size", "invariant_full_briefing"),
    }


def test_a_briefing_alone_or_a_malformed_source_breaks_nothing():
    assert check_bundle(bundle("get_full_briefing")) == []
    outputs = bundle("get_full_briefing")
    outputs["get_resources"] = {"monthly_net": {"energy": 1.0}}
    assert check_bundle(outputs) == []  # the schema check reports the missing key
