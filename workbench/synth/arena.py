"""Synthetic Agent Arena decision logs (`<scenario>_ep<NNN>.decisions.jsonl`).

Each episode has 3-5 agents, each driven by its own model, deciding every tick. The
tool mix follows the scenario (foraging collects, crafting crafts, team capture
talks). Real quirks: both of the seed's `move_to` forms, the runtime's
`target_position` now and then (and, as a fault, its `craft_item` tool), integer coordinates, outcomes either as the line's own
`result` or as the next line's `last_action_result`, an `episode_id` key the seed does
not list, and a crashed episode whose last line is cut short. Faults are injected at a
small known rate, one per line, and listed exactly as the reader reports them.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

FAULT_RATE = 0.03
TICKS = 30
MODELS = ("gpt-4o-mini", "llama3.1:8b", "qwen2.5:14b", "claude-3-5-haiku-20241022")
SCENARIOS = {
    "foraging": {"move_to": 45, "collect": 30, "query_world": 10, "query_inventory": 5, "idle": 10},
    "crafting": {"move_to": 35, "collect": 20, "craft": 20, "query_world": 8, "query_inventory": 12, "idle": 5},
    "team_capture": {"move_to": 50, "send_message": 25, "query_world": 15, "idle": 10},
}
RESOURCES = ("Berry", "Wood", "IronOre", "Stone")
ITEMS = {"iron_ingot": "Furnace", "plank": "Workbench", "torch": "Workbench"}
# Which codes each tool fails with, and how often it fails.
FAILURES = {
    "move_to": (0.04, ("INVALID_PARAMS", "BUSY")),
    "collect": (0.25, ("OUT_OF_RANGE", "NOT_FOUND")),
    "craft": (0.3, ("MISSING_MATERIALS", "OUT_OF_RANGE", "BUSY")),
    "query_world": (0.0, ()),
    "query_inventory": (0.0, ()),
    "send_message": (0.02, ("INVALID_PARAMS",)),
    "idle": (0.0, ()),
}
# Seed 002, "Common Error Codes" (transcribed here, not imported from the validator).
ERROR_CODES = ("OUT_OF_RANGE", "NOT_FOUND", "MISSING_MATERIALS", "INVALID_PARAMS", "BUSY")
MESSAGES = {
    "OUT_OF_RANGE": "Target '{name}' is {distance} units away, collection range is 2.0",
    "NOT_FOUND": "Target '{name}' does not exist",
    "MISSING_MATERIALS": "Missing materials for '{name}'",
    "INVALID_PARAMS": "Invalid parameters",
    "BUSY": "Agent is already performing an action",
}
assert set(MESSAGES) == set(ERROR_CODES)


def generate(out_dir: Path, scale: int, rng: random.Random) -> list[dict]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    entries = []
    for number in range(3 * scale):
        scenario = list(SCENARIOS)[number % len(SCENARIOS)]
        path = out_dir / f"{scenario}_ep{number + 1:03d}.decisions.jsonl"
        lines, faults = _episode(f"{scenario}-{number + 1:03d}", scenario, crashed=number == 1, rng=rng)
        path.write_text("\n".join(lines) + ("" if number == 1 else "\n"), encoding="utf-8")
        entries.append({"path": str(path), "format": "arena", "faults": faults})
    return entries


def _episode(episode_id: str, scenario: str, crashed: bool, rng: random.Random) -> tuple[list[str], list[dict]]:
    agents = [f"agent_{n:03d}" for n in range(1, rng.randint(3, 5) + 1)]
    models = {agent: rng.choice(MODELS) for agent in agents}
    own_results = rng.random() < 0.5  # this logger writes each decision's own `result`
    pending: dict[str, dict] = {}  # an agent's last outcome, reported on its next line
    lines, faults = [], []
    for tick in range(TICKS):
        for agent in agents:
            line = _decision(agent, tick, scenario, models[agent], rng)
            outcome = _outcome(line["tool"], line["params"], rng)
            if own_results:
                line["result"] = outcome
            elif agent in pending:
                line["last_action_result"] = pending[agent]
            pending[agent] = outcome
            if rng.random() < 0.1:
                line["episode_id"] = episode_id  # a key some loggers add
            if rng.random() < FAULT_RATE:
                field, rule = _break(line, rng)
                faults.append(_fault(len(lines) + 1, field, rule))
            lines.append(json.dumps(line))
    if crashed:  # the process died while writing its last line
        lines[-1] = lines[-1][: rng.randint(15, len(lines[-1]) - 5)]
        faults = [f for f in faults if f["locator"] != f"line {len(lines)}"]
        faults.append(_fault(len(lines), "(record)", "not_a_json_object"))
    return lines, faults


def _decision(agent: str, tick: int, scenario: str, model: str, rng: random.Random) -> dict:
    mix = SCENARIOS[scenario]
    tool = rng.choices(list(mix), weights=list(mix.values()))[0]
    params, reasoning = _params(tool, rng)
    line = {"agent_id": agent, "tick": tick, "tool": tool, "params": params}
    if rng.random() < 0.8:
        line["reasoning"] = reasoning
    line["model"] = model
    return line


def _position(rng: random.Random) -> list[float | int]:
    if rng.random() < 0.2:
        return [rng.randint(-20, 20), 0, rng.randint(-20, 20)]  # integer coordinates are numbers too
    return [round(rng.uniform(-20, 20), 2), 0.0, round(rng.uniform(-20, 20), 2)]


def _params(tool: str, rng: random.Random) -> tuple[dict, str]:
    if tool == "move_to":
        x, y, z = _position(rng)
        form = rng.random()
        params = ({"target": [x, y, z]} if form < 0.6 else
                  {"target_x": x, "target_y": y, "target_z": z} if form < 0.88 else
                  {"target_position": [x, y, z]})
        if rng.random() < 0.15:
            params["speed"] = rng.choice([0.5, 1.5, 2.0])
        return params, "Heading to the nearest target"
    if tool == "collect":
        return {"target_name": f"{rng.choice(RESOURCES)}{rng.randint(1, 9)}"}, "Resource within collection range"
    if tool == "craft":
        item, station = rng.choice(list(ITEMS.items()))
        return {"item_name": item, "station_name": f"{station}{rng.randint(1, 2)}"}, f"Have materials for {item}"
    if tool == "query_world":
        params = {"radius": rng.choice([15.0, 20.0, 30.0])}
        if rng.random() < 0.5:
            params["filter_type"] = rng.choice(["resource", "hazard", "agent", "station"])
        return params, "Need more information about the surroundings"
    if tool == "send_message":
        params = {"message": rng.choice(["I'm capturing point A", "Need backup!", "Point B is clear"])}
        if rng.random() < 0.5:
            params["target_agent"] = "all"
        return params, "Coordinating with the team"
    if tool == "query_inventory":
        return {}, "Checking progress"
    return {}, "Nothing useful to do"


def _outcome(tool: str, params: dict, rng: random.Random) -> dict:
    odds, codes = FAILURES[tool]
    if not codes or rng.random() >= odds:
        return {"success": True, "error_code": None, "error_message": None}
    code = rng.choice(codes)
    name = params.get("target_name") or params.get("item_name") or "target"
    message = MESSAGES[code].format(name=name, distance=round(rng.uniform(2.5, 9), 1))
    return {"success": False, "error_code": code, "error_message": message}


def _break(line: dict, rng: random.Random) -> tuple[str, str]:
    """Plant one fault in a decision; returns (field, rule) as the reader reports them."""
    kind = rng.choice(["unknown_tool", "runtime_tool", "tick_text", "speed", "short_target", "half_axes", "filter",
                       "radius_text", "no_target_name", "no_station", "no_message", "unknown_param"])
    if kind == "unknown_tool":
        line.update(tool="pick_up", params={"target_name": "Berry1"})
        return "tool", "unknown_tool"
    if kind == "runtime_tool":  # the real runtime's crafting tool, which the seed calls `craft`
        line.update(tool="craft_item", params={"recipe": "torch"})
        return "tool", "unknown_tool"
    if kind == "tick_text":
        line["tick"] = str(line["tick"])
        return "tick", "int_type"
    if kind in ("speed", "short_target", "half_axes"):
        line["tool"] = "move_to"
        line["params"] = {"speed": -1.0, "target": [1.0, 0.0, 2.0]} if kind == "speed" else \
            {"target": [4.0, 1.5]} if kind == "short_target" else {"target_x": 4.0}
        return {"speed": ("params.speed", "greater_than"), "short_target": ("params.target", "position_xyz"),
                "half_axes": ("params.target_y", "move_target_incomplete")}[kind]
    if kind == "filter":
        line.update(tool="query_world", params={"radius": 20.0, "filter_type": "enemy"})
        return "params.filter_type", "enum_value"
    if kind == "radius_text":
        line.update(tool="query_world", params={"radius": "30"})
        return "params.radius", "float_type"
    if kind == "no_target_name":
        line.update(tool="collect", params={})
        return "params.target_name", "required_key"
    if kind == "no_station":
        line.update(tool="craft", params={"item_name": "plank"})
        return "params.station_name", "required_key"
    if kind == "no_message":
        line.update(tool="send_message", params={"target_agent": "all"})
        return "params.message", "required_key"
    line.update(tool="collect", params={"target_name": "Wood2", "amount": 2})
    return "params.amount", "unknown_key"


def _fault(line: int, field: str, rule: str) -> dict:
    return {"locator": f"line {line}", "field": field, "rule": rule}
