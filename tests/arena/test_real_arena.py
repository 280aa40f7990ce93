"""What the real Agent Arena code does, recorded as tests of the workbench.

Every expected value here is written out by hand from the real program's code, tests or
docs (github.com/JustInternetAI/AgentArena at bf2cafb244c6, March 2026), never computed
by the code under test nor taken from the workbench's own lists. The inputs are our own.
Where the real code and seed 002 disagree, the seed wins and the message says what the
real code does.

- `scripts/autoload/tool_registry_service.gd`: the Godot runtime's registered tools
  (`move_to` with `target_position` and `speed` default 1.0, `craft_item` with
  `recipe`, `get_inventory`, `navigate_to`, `pickup_item`, ...).
- `python/sdk/agent_arena_sdk/adapters/base.py`: the SDK's action tools (`move_to`
  with `target_position`, `collect` with `target_name`, `craft_item`, `explore`,
  `idle`).
- `python/sdk/agent_arena_sdk/schemas/decision.py`: a decision is `{tool, params,
  reasoning?}`; `reasoning` is left out when there is none.
- `scripts/simple_agent.gd`: a `target_position` of fewer than three numbers is refused.
- `scripts/base_scene_controller.gd`: a tool's result as the runtime reports it,
  `{tool, success, result, error, duration_ticks}`.
- `python/tools/inventory.py`, `docs/learners/api_reference/tools.md`: other spellings
  of `collect`'s parameter (`target`, `resource_id`).
"""

import pytest


def line(tool, params, **values):
    return {"agent_id": "agent_001", "tick": 12, "tool": tool, "params": params, **values}


# --- move_to: the seed's two forms and the runtime's third ------------------------------


@pytest.mark.parametrize(
    "params",
    [
        {"target_x": 10.0, "target_y": 0.0, "target_z": 5.0},
        {"target": [10.0, 0.0, 5.0]},
        {"target": [10, 0, 5], "speed": 1.0},
        {"target_x": -3, "target_y": 0, "target_z": 8.5, "speed": 2.5},
    ],
)
def test_the_seeds_move_to_forms_are_valid(check_decision, params):
    assert check_decision("move_to", params) == set()


def test_the_runtimes_target_position_is_drift_with_a_hint(ingest_lines):
    lines = [
        line("move_to", {"target_position": [10.0, 0.0, 5.0]}, reasoning="Moving toward nearest berry"),
        line("move_to", {"target_position": [4.0, 0.0, -2.0], "speed": 1.5}, tick=13),
    ]
    report, con = ingest_lines("forage.decisions.jsonl", lines)
    assert [v for v in report.violations if v.severity == "error"] == []
    (finding,) = [v for v in report.violations if v.severity == "info"]
    assert (finding.rule, finding.field, finding.locator) == ("param_spelling", "params.target_position", "line 1")
    assert "did you mean `target`?" in finding.message
    assert "2 lines" in finding.message
    assert con.execute("SELECT bool_and(valid) FROM arena_decisions").fetchone()[0] is True


def test_a_target_position_of_two_numbers_is_refused(check_decision):
    # simple_agent.gd: "Invalid target_position" unless the array has at least 3 items
    assert check_decision("move_to", {"target_position": [10.0, 5.0]}) == {("position_xyz", "params.target_position")}


@pytest.mark.parametrize(
    "params, expected",
    [
        ({"target": [1.0, 0.0, 2.0], "speed": "fast"}, {("float_type", "params.speed")}),
        ({"target": [1.0, 0.0, 2.0], "speed": 0}, {("greater_than", "params.speed")}),
        ({"target_x": 1.0, "target_z": 2.0}, {("move_target_incomplete", "params.target_y")}),
        ({}, {("move_target_required", "params.target")}),
    ],
)
def test_move_to_parameters(check_decision, params, expected):
    assert check_decision("move_to", params) == expected


# --- collect, craft and the runtime's other spellings -----------------------------------


def test_collect_with_target_name_is_valid(check_decision):
    # the SDK's action tool and its test: {"target_name": "berry_001"}
    assert check_decision("collect", {"target_name": "berry_001"}) == set()


@pytest.mark.parametrize("key", ["resource_id", "target"])
def test_collects_other_spellings_are_errors_that_name_the_seeds(arena_violations, key):
    found = arena_violations(line("collect", {key: "Apple_001"}))
    assert {(v.severity, v.rule, v.field) for v in found} == {
        ("error", "unknown_key", f"params.{key}"),
        ("error", "required_key", "params.target_name"),
    }
    message = next(v.message for v in found if v.rule == "unknown_key")
    assert "real runtime" in message and "did you mean `target_name`?" in message


def test_craft_with_the_runtimes_recipe_parameter(arena_violations):
    found = arena_violations(line("craft", {"recipe": "torch"}))
    assert {(v.rule, v.field) for v in found} == {
        ("unknown_key", "params.recipe"),
        ("required_key", "params.item_name"),
        ("required_key", "params.station_name"),
    }
    assert "did you mean `item_name`?" in next(v.message for v in found if v.rule == "unknown_key")


@pytest.mark.parametrize(
    "tool, params, seed_tool",
    [
        ("craft_item", {"recipe": "torch"}, "craft"),
        ("get_inventory", {}, "query_inventory"),
        ("navigate_to", {"target_position": [1.0, 0.0, 2.0]}, "move_to"),
        ("pickup_item", {"item_id": "Berry1"}, "collect"),
    ],
)
def test_runtime_tools_are_unknown_and_named(arena_violations, tool, params, seed_tool):
    (found,) = arena_violations(line(tool, params))
    assert (found.severity, found.rule, found.field) == ("error", "unknown_tool", "tool")
    assert "real runtime registers it" in found.message
    assert f"`{seed_tool}`" in found.message


@pytest.mark.parametrize("tool", ["explore", "stop_movement", "plan_path", "explore_direction", "get_recipes"])
def test_runtime_tools_without_a_seed_equivalent(arena_violations, tool):
    (found,) = arena_violations(line(tool, {}))
    assert found.rule == "unknown_tool"
    assert "real runtime registers it" in found.message and "seed has no such tool" in found.message


# --- the decision itself -----------------------------------------------------------------


def test_a_decision_without_reasoning_is_valid(check_decision):
    # Decision.to_dict leaves `reasoning` out when there is none; Decision.idle() has params {}
    assert check_decision("idle", {}) == set()
    assert check_decision("collect", {"target_name": "berry_001"}, reasoning=None) == set()


# --- tool results ---------------------------------------------------------------------------


def test_the_runtimes_tool_result_shape_is_accepted(ingest_lines):
    # base_scene_controller.gd reports {tool, success, result, error, duration_ticks};
    # the seed's result carries success, error_code, error_message.
    runtime_fail = {
        "tool": "craft_item",
        "success": False,
        "result": {"success": False},
        "error": "Unknown recipe: rope",
        "duration_ticks": 0,
    }
    runtime_idle = {"tool": "idle", "success": True, "result": {}, "error": "", "duration_ticks": 0}
    lines = [
        line("craft", {"item_name": "rope", "station_name": "Workbench1"}, result=runtime_fail),
        line("idle", {}, tick=13, result=runtime_idle),
    ]
    report, con = ingest_lines("craft.decisions.jsonl", lines)
    assert [v for v in report.violations if v.severity == "error"] == []
    outcomes = con.execute("SELECT seq, success, error_code FROM arena_decisions ORDER BY seq").fetchall()
    assert outcomes == [(1, False, None), (2, True, None)]


@pytest.mark.parametrize(
    "code, documented",
    [
        ("OUT_OF_RANGE", True),
        ("NOT_FOUND", True),
        ("MISSING_MATERIALS", True),
        ("INVALID_PARAMS", True),
        ("BUSY", True),
        ("stuck", False),  # simple_agent.gd calls a stuck move "stuck" (in its `error`), not a seed code
    ],
)
def test_error_codes_feed_the_error_rates(ingest_lines, code, documented):
    result = {"success": False, "error_code": code, "error_message": "failed"}
    report, con = ingest_lines("forage.decisions.jsonl", [line("collect", {"target_name": "Berry1"}, result=result)])
    assert [v for v in report.violations if v.severity == "error"] == []
    info = {(v.rule, v.field) for v in report.violations if v.severity == "info"}
    assert info == (set() if documented else {("undocumented_error_code", "result.error_code")})
    row = con.execute(
        "SELECT documented, failures, outcomes FROM arena_error_rates "
        "WHERE error_code = ? AND tool = 'collect' AND model = '(all models)'",
        [code],
    ).fetchone()
    assert row == (documented, 1, 1)
