"""Agent Arena messages that mutation testing found unpinned, transcribed from seed 002
(002_1957e62afd48e707.txt): its seven tools in the order of their sections (`### move_to`
... `### idle`), `collect`'s one parameter `target_name`, and a position as [x, y, z].
The runtime's names (`craft_item`, `explore`, `resource_id`) are the ones docs/formats/arena.md's
"what the real programs write" lists."""

import pytest

SEED_TOOLS = "move_to, collect, craft, query_world, query_inventory, send_message, idle"


def messages(arena_violations, tool, params):
    record = {"agent_id": "agent_001", "tick": 4, "tool": tool, "params": params}
    return {(v.rule, v.field): v.message for v in arena_violations(record)}


@pytest.mark.parametrize(
    "tool, tail",
    [
        (
            "craft_item",
            "; the real runtime registers it, but the seed is the contract, so it is an error; "
            "the seed's tool for it is `craft`",
        ),
        (
            "explore",
            "; the real runtime registers it, but the seed is the contract, so it is an error; "
            "the seed has no such tool",
        ),
        ("colect", "; did you mean `collect`?"),
        ("qqqq", ""),
    ],
)
def test_an_unknown_tool_lists_the_seed_tools(arena_violations, tool, tail):
    assert messages(arena_violations, tool, {}) == {
        ("unknown_tool", "tool"): f"tool {tool!r} is not one of the seed's tools ({SEED_TOOLS}){tail}"
    }


@pytest.mark.parametrize(
    "tool, params, message",
    [
        (
            "collect",
            {"target_name": "a", "zzz": 1},
            "`zzz` is not a parameter of collect in the seed (parameters: target_name)",
        ),
        (
            "collect",
            {"target_name": "a", "resource_id": "b"},
            "`resource_id` is not a parameter of collect in the seed (parameters: target_name); the real runtime "
            "spells it so, but the seed is the contract, so it is an error; did you mean `target_name`?",
        ),
        ("idle", {"zzz": 1}, "`zzz` is not a parameter of idle in the seed (parameters: none)"),
    ],
)
def test_an_unknown_parameter_lists_the_tool_parameters(arena_violations, tool, params, message):
    key = next(k for k in params if k not in ("target_name",))
    assert messages(arena_violations, tool, params) == {("unknown_key", f"params.{key}"): message}


@pytest.mark.parametrize("target, found", [([1, 2], 2), ([1, 2, 3, 4], 4), ([], 0)])
def test_a_position_is_three_numbers(arena_violations, target, found):
    assert messages(arena_violations, "move_to", {"target": target}) == {
        ("position_xyz", "params.target"): f"a position is exactly three numbers [x, y, z]; found {found}"
    }


def test_a_position_of_three_numbers_passes(arena_violations):
    assert messages(arena_violations, "move_to", {"target": [1, 2, 3]}) == {}


def test_a_tool_with_two_parameters_lists_both(arena_violations):
    # seed 002, `### craft`: | `item_name` | string | Yes | ... | `station_name` | string | Yes |
    params = {"item_name": "iron_ingot", "station_name": "Furnace1", "qqqq": 1}
    assert messages(arena_violations, "craft", params) == {
        (
            "unknown_key",
            "params.qqqq",
        ): "`qqqq` is not a parameter of craft in the seed (parameters: item_name, station_name)"
    }
