"""An Agent Arena decision log for the benchmarks, written here, not by `workbench synth`.

Its lines have the real runtime's shapes (seed 002's tools, the logs' `agent_id` and
`tick`, each action's outcome reported in the agent's next decision as
`last_action_result`, the runtime's `target_position` spelling of move_to's target and
its own tool names), and about one line in fifty is broken the way a model breaks them
(a string where a number goes, a tool the seed does not have, a missing parameter, a
cut line).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from bench.common import WORK, written

AGENTS = {
    "agent_001": "llama3.1:8b",
    "agent_002": "qwen2.5:14b",
    "agent_003": "claude-3-5-haiku-20241022",
    "agent_004": "gpt-4o-mini",
}
CODES = ("OUT_OF_RANGE", "NOT_FOUND", "MISSING_MATERIALS", "INVALID_PARAMS", "BUSY", "TIMEOUT")  # the last: drift


def _params(rng: random.Random, tool: str) -> dict:
    point = [round(rng.uniform(-40, 40), 2), 0.0, round(rng.uniform(-40, 40), 2)]
    if tool == "move_to":
        form = rng.randrange(3)
        if form == 0:
            return dict(zip(("target_x", "target_y", "target_z"), point))
        return {"target" if form == 1 else "target_position": point, **({"speed": 1.5} if rng.random() < 0.2 else {})}
    return {
        "collect": lambda: {"target_name": f"Wood{rng.randint(1, 30)}"},
        "craft": lambda: {"item_name": rng.choice(("plank", "rope", "torch")), "station_name": "Workbench"},
        "query_world": lambda: {"radius": rng.choice((10.0, 20.0, 35.5)), "filter_type": "resource"},
        "send_message": lambda: {"message": "heading north", "target_agent": "all"},
    }.get(tool, dict)()


def _outcome(rng: random.Random) -> dict:
    if rng.random() < 0.8:
        return {"success": True, "error_code": None, "error_message": None}
    code = rng.choice(CODES)
    return {"success": False, "error_code": code, "error_message": f"{code.lower()} at the target"}


def _broken(rng: random.Random, record: dict) -> str:
    fault = rng.randrange(4)
    if fault == 0:
        record["tool"], record["params"] = "query_world", {"radius": "30"}  # a string where a number goes
    elif fault == 1:
        record["tool"] = "craft_item"  # the runtime's name, not the seed's
    elif fault == 2:
        record["tool"], record["params"] = "collect", {}  # no target_name
    else:
        return json.dumps(record)[: rng.randint(5, 60)]  # a cut line
    return json.dumps(record)


def decisions_log(count: int, folder: Path = WORK) -> Path:
    """`count` decision lines, four agents a tick (kept in `folder` for the next run)."""
    path = folder / f"arena_{count}.decisions.jsonl"
    if path.exists():
        return path
    rng = random.Random(2)
    tools = ("move_to", "collect", "craft", "query_world", "query_inventory", "send_message", "idle")
    with written(path) as out:
        for number in range(count):
            agent = list(AGENTS)[number % len(AGENTS)]
            tool = rng.choices(tools, weights=(5, 3, 2, 2, 1, 1, 1))[0]
            record = {
                "agent_id": agent,
                "tick": number // len(AGENTS),
                "tool": tool,
                "params": _params(rng, tool),
                "reasoning": rng.choice(
                    ("Resource within collection range", "Checking progress", "Heading to the nearest target")
                ),
                "model": AGENTS[agent],
            }
            if number >= len(AGENTS):
                record["last_action_result"] = _outcome(rng)
            out.write((_broken(rng, record) if rng.random() < 0.02 else json.dumps(record)) + "\n")
    return path
