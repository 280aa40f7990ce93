"""Synthetic Agent Arena decision logs (`<scenario>_ep<NNN>.decisions.jsonl`) and the
runtime's reasoning traces of the same episodes (`traces/<scenario>_ep<NNN>.jsonl`).

Each episode has 3-5 agents, each driven by its own model, deciding every tick. The
tool mix follows the scenario (foraging collects, crafting crafts, team capture
talks). Real quirks: both of the seed's `move_to` forms, the runtime's
`target_position` now and then (and, as a fault, its `craft_item` tool), integer coordinates, outcomes either as the line's own
`result` or as the next line's `last_action_result`, an `episode_id` key the seed does
not list, and a crashed episode whose last line is cut short. Faults are injected at a
small known rate, one per line, and listed exactly as the reader reports them.

Traces follow the runtime's trace store: one record per traced tick, the runtime's step
names (observation, retrieved for agents with memory, prompt, llm_request, response,
decision), the LLM call's duration by model, and the decision step the same as the logged
decision (faults included). One agent per episode runs with tracing off; an idle decision
is now and then the runtime's fallback after an answer it could not parse (a
`parse_error` step, no decision step); the crashed episode's last record is cut too. A
few records carry the SDK's `trace_id`, and trace faults are planted like decision faults.
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from workbench.arena.models import ERROR_CODES

FAULT_RATE = 0.03
TICKS = 30
MODELS = ("gpt-4o-mini", "llama3.1:8b", "qwen2.5:14b", "claude-3-5-haiku")
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
MESSAGES = {
    "OUT_OF_RANGE": "Target '{name}' is {distance} units away, collection range is 2.0",
    "NOT_FOUND": "Target '{name}' does not exist",
    "MISSING_MATERIALS": "Missing materials for '{name}'",
    "INVALID_PARAMS": "Invalid parameters",
    "BUSY": "Agent is already performing an action",
}
assert set(MESSAGES) == set(ERROR_CODES)

TRACE_FAULT_RATE = 0.03
# An LLM call's duration by model: median ms and the spread of its logarithm.
LLM_MS = {
    "gpt-4o-mini": (650, 0.35),
    "llama3.1:8b": (1400, 0.4),
    "qwen2.5:14b": (2600, 0.45),
    "claude-3-5-haiku": (900, 0.3),
}
EPISODE_START = datetime(2026, 3, 6, 18, 30)
SYSTEM_PROMPT = 'You are an autonomous agent in Agent Arena. Answer with one JSON tool call: {"tool", "params"}.'


def generate(out_dir: Path, scale: int, rng: random.Random) -> list[dict]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    entries = []
    episodes = []
    for number in range(3 * scale):
        scenario = list(SCENARIOS)[number % len(SCENARIOS)]
        episode = f"{scenario}_ep{number + 1:03d}"
        path = out_dir / f"{episode}.decisions.jsonl"
        lines, faults, decided = _episode(episode, scenario, crashed=number == 1, rng=rng)
        path.write_text("\n".join(lines) + ("" if number == 1 else "\n"), encoding="utf-8")
        entries.append({"path": str(path), "format": "arena", "faults": faults})
        episodes.append((episode, number, decided))
    # Drawn after every decision log is written, so traces leave the logs' bytes as they were.
    trace_rng = random.Random(rng.random())
    for episode, number, decided in episodes:
        path = out_dir / "traces" / f"{episode}.jsonl"
        path.parent.mkdir(exist_ok=True)
        lines, faults = _trace_file(episode, number, decided, crashed=number == 1, rng=trace_rng)
        path.write_text("\n".join(lines) + ("" if number == 1 else "\n"), encoding="utf-8")
        entries.append({"path": str(path), "format": "arena", "faults": faults})
    return entries


def _episode(
    episode_id: str, scenario: str, crashed: bool, rng: random.Random
) -> tuple[list[str], list[dict], list[tuple[str, int, dict]]]:
    """The log's lines, its faults, and each decision as (agent, tick, line as written)."""
    agents = [f"agent_{n:03d}" for n in range(1, rng.randint(3, 5) + 1)]
    models = {agent: rng.choice(MODELS) for agent in agents}
    own_results = rng.random() < 0.5  # this logger writes each decision's own `result`
    pending: dict[str, dict] = {}  # an agent's last outcome, reported on its next line
    lines: list[str] = []
    faults: list[dict] = []
    decided: list[tuple[str, int, dict]] = []
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
            decided.append((agent, tick, line))
    if crashed:  # the process died while writing its last line
        lines[-1] = lines[-1][: rng.randint(15, len(lines[-1]) - 5)]
        faults = [f for f in faults if f["locator"] != f"line {len(lines)}"]
        faults.append(_fault(len(lines), "(record)", "not_a_json_object"))
    return lines, faults, decided


def _decision(agent: str, tick: int, scenario: str, model: str, rng: random.Random) -> dict:
    mix = SCENARIOS[scenario]
    tool = rng.choices(list(mix), weights=list(mix.values()))[0]
    params, reasoning = _params(tool, rng)
    line: dict[str, Any] = {"agent_id": agent, "tick": tick, "tool": tool, "params": params}
    if rng.random() < 0.8:
        line["reasoning"] = reasoning
    line["model"] = model
    return line


def _position(rng: random.Random) -> list[float | int]:
    if rng.random() < 0.2:
        return [rng.randint(-20, 20), 0, rng.randint(-20, 20)]  # integer coordinates are numbers too
    return [round(rng.uniform(-20, 20), 2), 0.0, round(rng.uniform(-20, 20), 2)]


def _params(tool: str, rng: random.Random) -> tuple[dict, str]:
    params: dict[str, Any]
    if tool == "move_to":
        x, y, z = _position(rng)
        form = rng.random()
        params = (
            {"target": [x, y, z]}
            if form < 0.6
            else {"target_x": x, "target_y": y, "target_z": z}
            if form < 0.88
            else {"target_position": [x, y, z]}
        )
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
    kind = rng.choice(
        [
            "unknown_tool",
            "runtime_tool",
            "tick_text",
            "speed",
            "short_target",
            "half_axes",
            "filter",
            "radius_text",
            "no_target_name",
            "no_station",
            "no_message",
            "unknown_param",
        ]
    )
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
        line["params"] = (
            {"speed": -1.0, "target": [1.0, 0.0, 2.0]}
            if kind == "speed"
            else {"target": [4.0, 1.5]}
            if kind == "short_target"
            else {"target_x": 4.0}
        )
        return {
            "speed": ("params.speed", "greater_than"),
            "short_target": ("params.target", "position_xyz"),
            "half_axes": ("params.target_y", "move_target_incomplete"),
        }[kind]
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


# --- reasoning traces ---------------------------------------------------------------


def _trace_file(
    episode: str, number: int, decided: list[tuple[str, int, dict]], crashed: bool, rng: random.Random
) -> tuple[list[str], list[dict]]:
    agents = sorted({agent for agent, _, _ in decided})
    untraced = rng.choice(agents)  # this agent's behaviour ran with tracing off
    with_memory = {agent for agent in agents if rng.random() < 0.5}
    lines: list[str] = []
    faults: list[dict] = []
    for agent, tick, decision in decided:
        if agent == untraced:
            continue
        start = EPISODE_START + timedelta(hours=number, seconds=tick, milliseconds=37 * agents.index(agent))
        record = _trace(episode, agent, tick, decision, start, agent in with_memory, rng)
        if rng.random() < 0.05:
            record["trace_id"] = f"{rng.getrandbits(32):08x}"  # the SDK's debug traces carry one
        if rng.random() < TRACE_FAULT_RATE:
            field, rule = _break_trace(record, rng)
            faults.append(_fault(len(lines) + 1, field, rule))
        lines.append(json.dumps(record))
    if crashed:  # the same crash cut the trace's last record
        lines[-1] = lines[-1][: rng.randint(15, len(lines[-1]) - 5)]
        faults = [f for f in faults if f["locator"] != f"line {len(lines)}"]
        faults.append(_fault(len(lines), "(record)", "not_a_json_object"))
    return lines, faults


def _trace(
    episode: str, agent: str, tick: int, decision: dict, start: datetime, with_memory: bool, rng: random.Random
) -> dict:
    """One traced tick: the runtime's steps, each stamped with its agent and tick, timed."""
    steps: list[dict] = []
    record = {"agent_id": agent, "tick": tick, "episode_id": episode, "start_time": _iso(start), "steps": steps}
    clock = start

    def step(name: str, data: dict, duration_ms: float | None) -> None:
        nonlocal clock
        clock += timedelta(milliseconds=(duration_ms or 0.0) + rng.uniform(0.01, 0.2))
        entry: dict[str, Any] = {"timestamp": _iso(clock), "agent_id": agent, "tick": tick, "name": name, "data": data}
        if duration_ms is not None:
            entry["duration_ms"] = duration_ms
        steps.append(entry)

    position = [round(rng.uniform(-20, 20), 2), 0.0, round(rng.uniform(-20, 20), 2)]
    step(
        "observation",
        {
            "position": position,
            "health": rng.choice([100, 100, 90, 75]),
            "energy": rng.randint(40, 100),
            "nearby_resources": rng.randint(0, 4),
            "nearby_hazards": rng.randint(0, 1),
        },
        _ms(rng, 0.3, 0.5),
    )
    if with_memory:
        count = rng.randint(0, 3)
        items = [
            {
                "tick": max(tick - rng.randint(1, 10), 0),
                "position": [round(rng.uniform(-20, 20), 2), 0.0, round(rng.uniform(-20, 20), 2)],
            }
            for _ in range(count)
        ]
        step("retrieved", {"count": count, "items": items}, _ms(rng, 12, 0.5))
    user_prompt = f"Tick {tick}. Position {position}. What is your next action?"
    step(
        "prompt",
        {"system_prompt": SYSTEM_PROMPT, "user_prompt": user_prompt, "length": len(SYSTEM_PROMPT) + len(user_prompt)},
        _ms(rng, 0.8, 0.4),
    )
    model = decision["model"]  # every decision names its model (`_decision`)
    median, spread = LLM_MS.get(model, (1000, 0.4))
    step(
        "llm_request",
        {"model": model, "prompt": user_prompt, "temperature": 0.7, "max_tokens": 256},
        _ms(rng, median, spread),
    )
    answer = {"tool": decision.get("tool"), "params": decision.get("params")}
    if decision.get("tool") == "idle" and rng.random() < 0.3:  # the runtime's fallback after an unreadable answer
        raw = "I should look around first, then decide where to"
        step("response", {"raw_text": raw, "tokens_used": 256, "finish_reason": "length"}, _ms(rng, 0.2, 0.5))
        step("parse_error", {"error": "no JSON object in the response", "raw_text": raw}, None)
        return record
    step(
        "response",
        {"raw_text": json.dumps(answer), "tokens_used": rng.randint(25, 90), "finish_reason": "stop"},
        _ms(rng, 0.2, 0.5),
    )
    data = {**answer, **({"reasoning": decision["reasoning"]} if "reasoning" in decision else {})}
    step("decision", data, _ms(rng, 0.1, 0.5) if rng.random() < 0.5 else None)
    return record


def _ms(rng: random.Random, median: float, spread: float) -> float:
    return round(rng.lognormvariate(0, spread) * median, 3)


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="microseconds") + "Z"  # the runtime writes UTC with a Z


def _break_trace(record: dict, rng: random.Random) -> tuple[str, str]:
    """Plant one fault in a trace record; returns (field, rule) as the reader reports them."""
    steps = record["steps"]
    timed = next(i for i, s in enumerate(steps) if s["name"] == "llm_request")
    prompt = next(i for i, s in enumerate(steps) if s["name"] == "prompt")
    kind = rng.choice(
        ["duration_text", "negative_duration", "data_text", "tick_text", "no_steps", "step_tick", "start_time"]
    )
    if kind == "duration_text":
        steps[timed]["duration_ms"] = str(steps[timed]["duration_ms"])
        return f"steps[{timed}].duration_ms", "float_type"
    if kind == "negative_duration":
        steps[timed]["duration_ms"] = -steps[timed]["duration_ms"]
        return f"steps[{timed}].duration_ms", "greater_than_equal"
    if kind == "data_text":  # a behaviour logging its prompt as text, as the learner docs show
        steps[prompt]["data"] = steps[prompt]["data"]["user_prompt"]
        return f"steps[{prompt}].data", "dict_type"
    if kind == "tick_text":
        record["tick"] = str(record["tick"])
        return "tick", "int_type"
    if kind == "no_steps":
        del record["steps"]
        return "steps", "required_key"
    if kind == "step_tick":
        steps[-1]["tick"] = record["tick"] + 1
        return f"steps[{len(steps) - 1}].tick", "step_mismatch"
    record["start_time"] = EPISODE_START.strftime("%d/%m/%Y %H:%M")
    return "start_time", "timestamp_format"
