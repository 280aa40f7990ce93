"""Edges of how tool outputs are checked against seed 000: exact messages, the hint
that names a near sibling key, drift on every object, and one finding per kind.

Expected texts are written out here (from the seed's wording or by hand), never taken
from the code under test.
"""

import typing
from typing import Annotated, Literal

from pydantic import BaseModel

from tests.stellaris.examples import example
from workbench.stellaris.findings import (
    annotation_at,
    check_output,
    collapse,
    describe,
    model_at,
    near_key,
    unknown_tool,
    value_at,
)
from workbench.stellaris.models import GameDate
from workbench.violation import Violation


def findings(tool, payload):
    return [(v.locator, v.severity, v.rule, v.field, v.message) for v in check_output(tool, payload)[1]]


def errors(tool, payload):
    return {v.field: v.message for v in check_output(tool, payload)[1] if v.severity == "error"}


# --- describe: plain words for what a field holds ------------------------------------------


class Inner(BaseModel):
    x: int


class Outer(BaseModel):
    inner: Annotated[Inner, "meta"]
    maybe: Inner | None = None
    either: Inner | str = ""
    scores: dict[str, int] = {}
    by_id: dict[int, float] = {}
    loose: typing.Dict = {}  # noqa: UP006  (the bare typing form)
    items: list[Inner] = []
    tagged: list[Annotated[Inner, "meta"]] = []
    count: int = 0
    counts: int = 0


class Gauge:
    pass


def test_describe_says_plain_json_type_words():
    assert [describe(t) for t in (int, float, str, bool, dict)] == [
        "an integer",
        "a number",
        "a string",
        "true or false",
        "an object",
    ]


def test_describe_lists_and_objects_use_plural_words():
    assert describe(list[int]) == "a list of integers"
    assert describe(list[float]) == "a list of numbers"
    assert describe(list[str]) == "a list of strings"
    assert describe(list[bool]) == "a list of booleans"
    assert describe(list[dict]) == "a list of objects"
    assert describe(list[Inner]) == "a list of objects"
    assert describe(dict[str, float]) == "an object of numbers"
    assert describe(dict[str, bool]) == "an object of booleans"


def test_describe_nested_list_keeps_the_inner_phrase():
    assert describe(list[list[int]]) == "a list of a list of integers"


def test_describe_bare_list_and_dict_without_parameters():
    assert describe(typing.List) == "a list"  # noqa: UP006  (the bare typing form, as models may write it)
    assert describe(typing.Dict) == "an object"  # noqa: UP006


def test_describe_unions_join_members_with_or_and_null_last():
    assert describe(int | None) == "an integer or null"
    assert describe(typing.Optional[str]) == "a string or null"  # noqa: UP045  (the old spelling, as models write it)
    assert describe(int | str) == "an integer or a string"
    assert describe(str | int | None) == "a string or an integer or null"


def test_describe_literals_annotated_models_and_other_types():
    assert describe(Literal["early", "mid"]) == "one of 'early', 'mid'"
    assert describe(Annotated[int, "meta"]) == "an integer"
    assert describe(Annotated[list[str], "meta"]) == "a list of strings"
    assert describe(Inner) == "an object"
    assert describe(GameDate) == "a date string `YYYY.MM.DD`"  # the seed's date format
    assert describe(Gauge) == "Gauge"
    assert describe("Later") == "Later"  # an unresolved forward reference has no __name__


# --- walking models and payloads --------------------------------------------------------------


def test_annotation_at_walks_annotated_optional_lists_and_dicts():
    assert annotation_at(Outer, ("inner", "x")) is int
    assert annotation_at(Outer, ("maybe", "x")) is int
    assert annotation_at(Outer, ("items", 0, "x")) is int
    assert annotation_at(Outer, ("tagged", 0, "x")) is int
    assert annotation_at(Outer, ("scores", "wins")) is int
    assert annotation_at(Outer, ("by_id", 7)) is float
    assert annotation_at(Outer, ("loose", "anything")) is typing.Any


def test_annotation_at_is_none_where_the_model_says_nothing():
    assert annotation_at(Outer, ("nope",)) is None
    assert annotation_at(Outer, ("count", "x")) is None
    assert annotation_at(Outer, ("items", "x")) is None
    assert annotation_at(Outer, ("either", "x")) is None  # a union of two kinds is not walked


def test_model_at_finds_nested_models_only():
    assert model_at(Outer, ()) is Outer
    assert model_at(Outer, ("inner",)) is Inner
    assert model_at(Outer, ("maybe",)) is Inner
    assert model_at(Outer, ("items", 0)) is Inner
    assert model_at(Outer, ("tagged", 0)) is Inner
    assert model_at(Outer, ("count",)) is None
    assert model_at(Outer, ("scores",)) is None


def test_value_at_follows_keys_and_indexes_and_stops_at_gaps():
    payload = {"a": [{"b": 1}, {"b": 2}], "c": {"d": "e"}}
    assert value_at(payload, ("a", 1, "b")) == 2
    assert value_at(payload, ("a", 0)) == {"b": 1}
    assert value_at(payload, ("c", "d")) == "e"
    assert value_at(payload, ()) is payload
    assert value_at(payload, ("a", 2)) is None  # one past the end
    assert value_at(payload, ("c", 0)) is None  # an index into an object
    assert value_at(payload, ("z",)) is None
    assert value_at(["a"], ("a",)) is None  # a key into a list
    assert value_at("abc", ("a",)) is None  # a key into a string


def test_near_key_skips_siblings_the_model_already_declares():
    # `counts` is a field of Outer: present, so not a misspelling of `count`.
    assert near_key(Outer, ("count",), ["counts", "countx"]) == "countx"
    assert near_key(Outer, ("count",), ["counts"]) is None


# --- missing keys: what was expected, the keys found, the hint ------------------------------------


def test_missing_key_lists_at_most_eight_sibling_keys_then_an_ellipsis():
    status = example("get_player_status")
    del status["empire_name"]
    assert findings("get_player_status", status) == [
        (
            "tool get_player_status",
            "error",
            "required_key",
            "empire_name",
            "expected key `empire_name` (a string); found no such key (keys here: `date`, "
            "`player_id`, `military_power`, `economy_power`, `tech_power`, `fleet_count`, `fleet_size`, "
            "`celestial_bodies_in_territory`, ...)",
        )
    ]


def test_missing_key_with_exactly_eight_siblings_lists_them_all():
    status = example("get_player_status")
    del status["empire_name"], status["colonies"]
    shown = (
        "(keys here: `date`, `player_id`, `military_power`, `economy_power`, `tech_power`, "
        "`fleet_count`, `fleet_size`, `celestial_bodies_in_territory`)"
    )
    assert errors("get_player_status", status) == {
        "empire_name": f"expected key `empire_name` (a string); found no such key {shown}",
        "colonies": f"expected key `colonies` (an object); found no such key {shown}",
    }


def test_missing_nested_key_lists_the_keys_of_its_own_object():
    status = example("get_player_status")
    del status["colonies"]["habitats"]["count"]
    assert findings("get_player_status", status) == [
        (
            "tool get_player_status",
            "error",
            "required_key",
            "colonies.habitats.count",
            "expected key `count` (an integer); found no such key (keys here: `population`)",
        )
    ]


def test_missing_key_in_an_empty_object_names_no_keys():
    assert errors("get_fleets", {}) == {
        "count": "expected key `count` (an integer); found no such key",
        "fleet_names": "expected key `fleet_names` (a list of strings); found no such key",
    }


def test_missing_keys_inside_an_optional_category_are_described():
    assert findings("get_details", {"planets": {"count": 1}}) == [
        (
            "tool get_details",
            "error",
            "required_key",
            "planets.planets",
            "expected key `planets` (a list of objects); found no such key (keys here: `count`)",
        ),
        (
            "tool get_details",
            "error",
            "required_key",
            "planets.total_population",
            "expected key `total_population` (an integer); found no such key (keys here: `count`)",
        ),
        (
            "tool get_details",
            "error",
            "required_key",
            "planets.by_type",
            "expected key `by_type` (an object of integers); found no such key (keys here: `count`)",
        ),
    ]


def test_declared_alias_hint_works_inside_a_consolidated_tool():
    technology = example("get_technology")
    technology["researched_techs"] = technology.pop("completed")
    message = errors("get_details", {"technology": technology})["technology.completed"]
    assert message == (
        "expected key `completed` (a list of strings); found no such key (keys here: "
        "`completed_count`, `current_research`, `by_category`, `researched_techs`); "
        "did you mean `researched_techs`?"
    )


def test_a_name_written_without_its_underscore_is_a_typo():
    technology = example("get_technology")
    technology["bycategory"] = technology.pop("by_category")
    assert errors("get_technology", technology)["by_category"].endswith("; did you mean `bycategory`?")


def test_typo_ratio_of_exactly_the_threshold_counts_as_near():
    # `count` and `co_nt` share 4 of 5+5 letters: 2*4/10 = 0.8, the threshold itself.
    assert errors("get_fleets", {"fleet_names": [], "co_nt": 3}) == {
        "count": "expected key `count` (an integer); found no such key (keys here: `fleet_names`, `co_nt`); "
        "did you mean `co_nt`?",
    }


def test_the_same_words_reordered_are_near():
    assert errors("get_fleets", {"count": 0, "names_fleet": []})["fleet_names"].endswith(
        "; did you mean `names_fleet`?"
    )


def test_words_abbreviated_to_their_first_three_letters_are_near():
    status = example("get_player_status")
    status["mil_pow"] = status.pop("military_power")
    assert errors("get_player_status", status)["military_power"].endswith("; did you mean `mil_pow`?")


def test_words_abbreviated_below_three_letters_are_not_near():
    status = example("get_player_status")
    status["mi_po"] = status.pop("military_power")
    assert "did you mean" not in errors("get_player_status", status)["military_power"]


def test_a_word_with_a_typo_pairs_up_by_spelling():
    for written in ("mil_pwer", "mil_pover"):  # power/pwer 8/9; power/pover 2*4/10 = 0.8 exactly
        status = example("get_player_status")
        status[written] = status.pop("military_power")
        assert errors("get_player_status", status)["military_power"].endswith(f"; did you mean `{written}`?")


def test_the_closest_of_several_near_spellings_is_named():
    # ratios to `count`: coun 2*4/9 = 0.89, acount 2*5/11 = 0.91
    message = errors("get_fleets", {"fleet_names": [], "coun": 1, "acount": 1})["count"]
    assert message.endswith("; did you mean `acount`?")


# --- mistyped values: expected and found, with the JSON type -----------------------------------


def test_found_values_name_their_json_type():
    status = example("get_player_status")
    status["player_id"] = None
    status["fleet_count"] = True
    status["fleet_size"] = {"ships": 120}
    status["tech_power"] = (2800,)
    assert {f: m for f, m in errors("get_player_status", status).items()} == {
        "player_id": "expected an integer; found None (null)",
        "fleet_count": "expected an integer; found True (boolean)",
        "fleet_size": "expected an integer; found {'ships': 120} (object)",
        "tech_power": "expected an integer; found (2800,) (tuple)",
    }


def test_an_output_that_is_a_list_says_what_it_found():
    assert findings("get_fleets", ["Home Guard"]) == [
        (
            "tool get_fleets",
            "error",
            "wrong_type",
            "(record)",
            "expected a JSON object (the tool's output); found ['Home Guard'] (list)",
        )
    ]


def test_a_list_where_a_nested_object_belongs_is_a_wrong_type_at_that_key():
    status = example("get_player_status")
    status["colonies"] = [{"total_count": 1}]
    assert findings("get_player_status", status) == [
        (
            "tool get_player_status",
            "error",
            "wrong_type",
            "colonies",
            "expected an object; found [{'total_count': 1}] (list)",
        )
    ]


def test_a_mistyped_value_in_a_keyed_object_expects_the_value_type():
    resources = example("get_resources")
    resources["stockpiles"]["energy"] = "lots"
    assert findings("get_resources", resources) == [
        (
            "tool get_resources",
            "error",
            "wrong_type",
            "stockpiles.energy",
            "expected a number; found 'lots' (string)",
        )
    ]


def test_a_non_string_object_key_falls_back_to_the_validator_message():
    resources = example("get_resources")
    resources["stockpiles"] = {1: 2.0}
    assert findings("get_resources", resources) == [
        (
            "tool get_resources",
            "error",
            "wrong_type",
            "stockpiles[1].[key]",
            "expected Input should be a valid string; found 1 (number)",
        )
    ]


def test_a_bad_date_keeps_the_rule_message_and_locator():
    status = example("get_player_status")
    status["date"] = "2342-06-15"
    assert findings("get_player_status", status) == [
        (
            "tool get_player_status",
            "error",
            "date_format",
            "date",
            "expected a Stellaris date `YYYY.MM.DD` (months 1-12, days 1-30); found '2342-06-15'",
        )
    ]


def test_a_found_empire_without_figures_points_at_the_key():
    [(locator, severity, rule, field, _)] = findings(
        "get_empire", {"name": "Chosen", "found": True, "military_power": 1.0}
    )
    assert (locator, severity, rule, field) == ("tool get_empire", "error", "required_when_found", "economy_power")


# --- drift: every key and value of every object is looked at -------------------------------------


def test_an_undocumented_key_does_not_hide_the_keys_after_it():
    leaders = example("get_leaders")
    leaders["leaders"] = [{"title": "Envoy", "name": "Voss", "class": "envoy", "level": 1, "age": 33, "traits": []}]
    assert findings("get_leaders", leaders) == [
        (
            "tool get_leaders",
            "info",
            "undocumented_key",
            "leaders[0].title",
            "key `title` is not in the specification; kept",
        ),
        (
            "tool get_leaders",
            "info",
            "undocumented_value",
            "leaders[0].class",
            "class = 'envoy' is not among the values the specification names "
            "(scientist, admiral, general, governor); kept",
        ),
    ]


def test_an_undocumented_key_does_not_hide_nested_objects_after_it():
    status = {"victory_rank": 3, **example("get_player_status")}
    status["colonies"]["_note"] = "colonized worlds"
    assert [(f, r) for _, _, r, f, _ in findings("get_player_status", status)] == [
        ("victory_rank", "undocumented_key"),
        ("colonies._note", "undocumented_key"),
    ]


# --- one finding per kind ----------------------------------------------------------------------


def _at(field, locator="tool t", rule="required_key"):
    return Violation(locator, "error", rule, field, "m")


def test_collapse_names_three_more_then_an_ellipsis():
    [head] = collapse([_at(f"items[{i}].x") for i in range(5)])
    assert head == Violation(
        "tool t",
        "error",
        "required_key",
        "items[0].x",
        "m (also at 4 more: `items[1].x`, `items[2].x`, `items[3].x`, ...)",
    )


def test_collapse_of_four_names_all_three_others():
    [head] = collapse([_at(f"items[{i}].x") for i in range(4)])
    assert head == Violation(
        "tool t", "error", "required_key", "items[0].x", "m (also at 3 more: `items[1].x`, `items[2].x`, `items[3].x`)"
    )


def test_collapse_keeps_distinct_places_rules_and_locators_apart():
    kept = collapse([_at("a[0].x"), _at("a[1].y"), _at("a[2].x", locator="tool u"), _at("a[3].x", rule="wrong_type")])
    assert [(v.locator, v.rule, v.field, v.message) for v in kept] == [
        ("tool t", "required_key", "a[0].x", "m"),
        ("tool t", "required_key", "a[1].y", "m"),
        ("tool u", "required_key", "a[2].x", "m"),
        ("tool t", "wrong_type", "a[3].x", "m"),
    ]


# --- tools the seed does not define ------------------------------------------------------------


def test_an_unknown_tool_far_from_every_name_gets_no_hint():
    assert unknown_tool("get_armies", "tool get_armies") == Violation(
        "tool get_armies",
        "info",
        "unknown_tool",
        "(record)",
        "`get_armies` is not a tool of the specification; kept, not validated",
    )


def test_near_key_under_a_keyed_object_without_a_model_still_hints_a_spelling():
    # `scores` is dict[str, int]: no model declares its keys, so every sibling is a candidate.
    assert near_key(Outer, ("scores", "wins"), ["winz"]) == "winz"
    assert near_key(Outer, ("scores", "wins"), ["losses"]) is None
