"""Every tool of seed 002 with its parameters, each rule with a failing and a passing record."""

import pytest


@pytest.mark.parametrize(
    "tool, params",
    [
        ("move_to", {"target_x": 12.0, "target_y": 0.0, "target_z": 6.0}),
        ("move_to", {"target": [12.0, 0.0, 6.0]}),
        ("move_to", {"target": [12.0, 0.0, 6.0], "speed": 1.5}),
        ("move_to", {"target": [1, 0, 2]}),
        ("collect", {"target_name": "Berry1"}),
        ("craft", {"item_name": "iron_ingot", "station_name": "Furnace1"}),
        ("query_world", {"radius": 30.0}),
        ("query_world", {"radius": 20.0, "filter_type": "resource"}),
        ("query_world", {}),
        ("query_inventory", {}),
        ("send_message", {"message": "I'm capturing point A", "target_agent": "all"}),
        ("send_message", {"message": "Need backup!", "target_agent": "agent_002"}),
        ("send_message", {"message": "Capturing A"}),
        ("idle", {}),
    ],
)
def test_the_seeds_examples_are_valid(check_decision, tool, params):
    assert check_decision(tool, params, reasoning="Nearest resource, within range") == set()


# --- the decision line ---------------------------------------------------------------


@pytest.mark.parametrize("key", ["agent_id", "tick", "tool", "params"])
def test_line_keys_are_required(arena_violations, key):
    record = {"agent_id": "a", "tick": 1, "tool": "idle", "params": {}}
    del record[key]
    assert {(v.rule, v.field) for v in arena_violations(record)} == {("required_key", key)}


@pytest.mark.parametrize(
    "values, expected",
    [
        ({"tick": "3"}, {("int_type", "tick")}),
        ({"tick": -1}, {("greater_than_equal", "tick")}),
        ({"agent_id": 7}, {("string_type", "agent_id")}),
        ({"reasoning": ["x"]}, {("string_type", "reasoning")}),
        ({"params": []}, {("model_type", "params")}),
        ({"reasoning": "ok", "model": "gpt-4o-mini"}, set()),
    ],
)
def test_line_values(check_decision, values, expected):
    params = values.pop("params", {})
    assert check_decision("idle", params, **values) == expected


def test_unknown_tools_are_errors_with_a_hint(arena_violations):
    (violation,) = arena_violations({"agent_id": "a", "tick": 1, "tool": "move", "params": {"target": [1, 2, 3]}})
    assert (violation.rule, violation.field, violation.severity) == ("unknown_tool", "tool", "error")
    assert "did you mean `move_to`?" in violation.message


# --- move_to -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params, expected",
    [
        ({}, {("move_target_required", "params.target")}),
        ({"speed": 1.0}, {("move_target_required", "params.target")}),
        ({"target_x": 1.0, "target_z": 2.0}, {("move_target_incomplete", "params.target_y")}),
        ({"target_x": 1.0, "target_y": 0.0}, {("move_target_incomplete", "params.target_z")}),
        ({"target": [1.0, 2.0]}, {("position_xyz", "params.target")}),
        ({"target": [1.0, 2.0, 3.0, 4.0]}, {("position_xyz", "params.target")}),
        ({"target": [1.0, "0", 2.0]}, {("float_type", "params.target[1]")}),
        ({"target": "12,0,6"}, {("list_type", "params.target")}),
        ({"target_x": "1", "target_y": 0.0, "target_z": 2.0}, {("float_type", "params.target_x")}),
        ({"target": [1, 0, 2], "speed": 0}, {("greater_than", "params.speed")}),
        ({"target": [1, 0, 2], "speed": -1.5}, {("greater_than", "params.speed")}),
        ({"target": [1, 0, 2], "speed": "fast"}, {("float_type", "params.speed")}),
        ({"target": [1, 0, 2], "speed": 0.5}, set()),
    ],
)
def test_move_to_target_forms(check_decision, params, expected):
    assert check_decision("move_to", params) == expected


def test_target_position_is_accepted_and_checked(check_decision):
    assert check_decision("move_to", {"target_position": [1.0, 0.0, 2.0]}) == set()
    assert check_decision("move_to", {"target_position": [1.0, 0.0]}) == {("position_xyz", "params.target_position")}


# --- the other tools -----------------------------------------------------------------


@pytest.mark.parametrize(
    "tool, params, expected",
    [
        ("collect", {}, {("required_key", "params.target_name")}),
        ("collect", {"target_name": 3}, {("string_type", "params.target_name")}),
        ("craft", {"item_name": "plank"}, {("required_key", "params.station_name")}),
        ("craft", {"station_name": "Workbench1"}, {("required_key", "params.item_name")}),
        ("query_world", {"radius": "30"}, {("float_type", "params.radius")}),
        ("query_world", {"radius": 0}, {("greater_than", "params.radius")}),
        ("query_world", {"filter_type": "enemy"}, {("enum_value", "params.filter_type")}),
        ("query_world", {"filter_type": "station"}, set()),
        ("send_message", {"target_agent": "all"}, {("required_key", "params.message")}),
        ("send_message", {"message": "hi", "target_agent": 2}, {("string_type", "params.target_agent")}),
    ],
)
def test_tool_parameters(check_decision, tool, params, expected):
    assert check_decision(tool, params) == expected


@pytest.mark.parametrize("tool", ["query_inventory", "idle"])
def test_tools_without_parameters_take_none(check_decision, tool):
    assert check_decision(tool, {"radius": 2}) == {("unknown_key", "params.radius")}


def test_unknown_parameters_are_errors_with_a_hint(arena_violations):
    record = {"agent_id": "a", "tick": 1, "tool": "collect", "params": {"target_name": "B", "targetname": "B"}}
    (violation,) = arena_violations(record)
    assert (violation.rule, violation.field) == ("unknown_key", "params.targetname")
    assert "not a parameter of collect" in violation.message and "did you mean `target_name`?" in violation.message


# --- results -------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["result", "last_action_result"])
def test_results(check_decision, key):
    failure = {"success": False, "error_code": "OUT_OF_RANGE", "error_message": "Target 'Berry1' is 5.2 units away"}
    assert check_decision("idle", {}, **{key: failure}) == set()
    assert check_decision("idle", {}, **{key: {"success": "no"}}) == {("bool_type", f"{key}.success")}
    assert check_decision("idle", {}, **{key: {"error_code": "BUSY"}}) == {("required_key", f"{key}.success")}
