"""Synthetic EC4X files: the bot's traces (`bot_trace_<gameId>.jsonl`) and the order
drafts a research harness keeps (`<gameId>.orders.jsonl`).

Games follow a few plans: a strong model that passes every quality gate (a forced run
of 25 successful turns, all twelve feature families), a weak one that fails them and is
restarted on another model, and a middling one whose process crashes mid-write (the
truncated line and the restart's `session_start` end up on one line). Real quirks:
local timestamps with offsets, restarts, the compiler's enum spellings (`JoinFleet`),
`repairCommands`/`scrapCommands`. Faults are injected at a small known rate, one per
line, and listed exactly as the reader reports them.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from workbench.ec4x.families import FAMILIES, zero_turn_tag
from workbench.ec4x.seed import (
    BUILD_TYPES,
    DIPLOMATIC_ACTIONS,
    DIPLOMATIC_REQUIRES,
    ESPIONAGE_OPERATIONS,
    ESPIONAGE_REQUIRES,
    FACILITY_CLASSES,
    FLEET_COMMANDS,
    GROUND_CLASSES,
    PROPOSED_STATES,
    ROE_RANGE,
    SHIP_CLASSES,
    SYSTEM_TARGET_COMMANDS,
    TECH_FIELDS,
    ZERO_TURN_COMMANDS,
    ZERO_TURN_REQUIRES,
)

TRACE_FAULT_RATE = 0.04
DRAFT_FAULT_RATE = 0.07
MAX_RETRIES = 2


@dataclass(frozen=True)
class Plan:
    model: str
    success: float  # chance a turn ends ok
    retry: float  # chance an attempt fails before the last one
    latency_ms: float  # median LLM request time
    families: tuple[str, ...]
    streak: bool = False  # force a run of 25 successful turns
    restart_model: str | None = None
    crash: bool = False


PLANS = (
    Plan("claude-3-5-haiku", 0.93, 0.15, 2600, FAMILIES, streak=True),
    Plan(
        "gpt-4o-mini",
        0.62,
        0.45,
        1300,
        ("fleet", "build", "research", "investment", "zero_turn"),
        restart_model="gemini-2.0-flash",
    ),
    Plan("gemini-2.0-flash", 0.84, 0.25, 1800, FAMILIES[:10], crash=True),
)
GAME_WORDS = ("lunar", "crimson", "ember", "quiet", "iron", "azure", "amber", "vast")
OFFSETS = (-5, -8, 1, 2)

STAGE_DETAILS = {
    "schema_parse": [
        "Missing required field: turn",
        "Expected int for field: fleetId",
        "Invalid JSON: unexpected end of input",
        "fleetCommands must be an array",
    ],
    "compile": [
        "Unknown fleet command type: warp",
        "Missing targetSystemId for move",
        "Duplicate fleet command for fleet 104",
        "load-cargo currently supports only Marines",
    ],
    "llm_request": ["LLM request failed: HTTP 429 Too Many Requests", "LLM request timed out after 45s"],
    "submit": ["Submission rejected: turn already resolved"],
}
STAGE_WEIGHTS = {"schema_parse": 45, "compile": 35, "llm_request": 15, "submit": 5}
ERROR_CLASS_OF_STAGE = {
    "schema_parse": "validation",
    "compile": "validation",
    "llm_request": "llm_request",
    "submit": "transport",
}
FAMILY_ODDS = {
    "fleet": 0.9,
    "build": 0.7,
    "research": 0.6,
    "investment": 0.35,
    "zero_turn": 0.3,
    "espionage": 0.2,
    "colony_management": 0.25,
    "population_transfer": 0.12,
    "terraform": 0.08,
    "diplomacy": 0.1,
    "repair": 0.08,
    "scrap": 0.05,
}


def generate(out_dir: Path, scale: int, rng: random.Random) -> list[dict]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    entries = []
    for number in range(3 * scale):
        plan = PLANS[number % len(PLANS)]
        game_id = f"{rng.choice(GAME_WORDS)}-{rng.choice(GAME_WORDS)}-{rng.getrandbits(24):06x}"
        turns = rng.randint(34, 46)
        entries.append(_write(out_dir / f"bot_trace_{game_id}.jsonl", *_trace(game_id, plan, turns, rng)))
        entries.append(_write(out_dir / f"{game_id}.orders.jsonl", *_drafts(plan, turns, rng)))
    return entries


def _write(path: Path, lines: list[str], faults: list[dict]) -> dict:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {"path": str(path), "format": "ec4x", "faults": faults}


def _dump(value: dict) -> str:
    return json.dumps(value, separators=(",", ":"))  # the bot writes compact JSON


# --- traces -------------------------------------------------------------------------


def _trace(game_id: str, plan: Plan, turns: int, rng: random.Random) -> tuple[list[str], list[dict]]:
    local = timezone(timedelta(hours=rng.choice(OFFSETS)))
    clock = datetime(2026, 2, rng.randint(1, 26), rng.randint(8, 20), tzinfo=local)
    restart_at = rng.randint(turns // 3, 2 * turns // 3)
    oks = _outcomes(plan, turns, rng)
    tags = _turn_tags(plan, oks, rng)
    lines = [_dump(_session(game_id, plan.model, clock))]
    faults: list[dict] = []
    for turn in range(1, turns + 1):
        clock += timedelta(minutes=rng.randint(4, 90))
        record = _turn(game_id, turn, oks[turn - 1], tags[turn - 1], plan, clock, rng)
        if turn == restart_at:
            model = plan.restart_model or plan.model
            restart = _dump(_session(game_id, model, clock + timedelta(minutes=3)))
            if plan.crash:  # the process died mid-write: the restart appends to the broken line
                text = _dump(record)
                lines.append(text[: rng.randint(20, len(text) - 10)] + restart)
                faults.append(_fault(len(lines), "(record)", "not_a_json_object"))
                continue
            faults += _refused(record, len(lines) + 1)
            lines += [_dump(record), restart]
            continue
        if rng.random() < TRACE_FAULT_RATE:
            field, rule = _break_turn(record, rng)
            faults.append(_fault(len(lines) + 1, field, rule))
        else:
            faults += _refused(record, len(lines) + 1)
        lines.append(_dump(record))
    return lines, faults


def _refused(record: dict, line: int) -> list[dict]:
    """A turn whose orders the bot refused (the model's answer broke their rules) is an
    invalid decision, by the error rule `orders_refused` on its line."""
    refused = not record["ok"] and record["errorClass"] not in ("llm_request", "transport")
    return [_fault(line, "errorClass", "orders_refused")] if refused else []


def _session(game_id: str, model: str, clock: datetime) -> dict:
    return {
        "kind": "session_start",
        "timestamp": _local(clock),
        "gameId": game_id,
        "model": model,
        "relays": ["wss://relay.ec4x.local"],
        "maxRetries": MAX_RETRIES,
        "requestTimeoutSec": 45,
        "autoReconnect": True,
    }


def _local(clock: datetime) -> str:
    return clock.isoformat(timespec="seconds")  # local time with offset, e.g. 2026-02-03T10:15:00-05:00


def _outcomes(plan: Plan, turns: int, rng: random.Random) -> list[bool]:
    oks = [rng.random() < plan.success for _ in range(turns)]
    if plan.streak:
        oks[5:30] = [True] * 25
    return oks


def _turn_tags(plan: Plan, oks: list[bool], rng: random.Random) -> list[list[str]]:
    families = [[f for f in plan.families if rng.random() < FAMILY_ODDS[f]] if ok else [] for ok in oks]
    # Every family of the plan shows up at least once, on some successful turn.
    ok_turns = [i for i, ok in enumerate(oks) if ok]
    for family in plan.families:
        if ok_turns and not any(family in turn for turn in families):
            families[rng.choice(ok_turns)].append(family)
    return [_tags(sorted(turn, key=FAMILIES.index), rng) for turn in families]


def _tags(families: list[str], rng: random.Random) -> list[str]:
    tags = []
    for family in families:
        tags.append(family)
        if family == "zero_turn":
            command = rng.choice(ZERO_TURN_COMMANDS)
            tags.append(zero_turn_tag(command))
    return tags


def _turn(game_id, turn, ok, tags, plan: Plan, clock, rng) -> dict:
    attempts = MAX_RETRIES + 1
    if ok:
        attempts = 1
        while attempts <= MAX_RETRIES and rng.random() < plan.retry:
            attempts += 1
    failed = attempts - 1 if ok else attempts
    trace = [_failed_attempt(n, plan, rng) for n in range(1, failed + 1)]
    error_class = "success" if ok else ERROR_CLASS_OF_STAGE[trace[-1]["stage"]]
    return {
        "timestamp": _local(clock),
        "gameId": game_id,
        "turn": turn,
        "ok": ok,
        "errorClass": error_class,
        "attempts": attempts,
        "errors": [] if ok else list(trace[-1]["details"]),
        "featureTags": tags,
        "trace": trace,
    }


def _failed_attempt(number: int, plan: Plan, rng: random.Random) -> dict:
    stage = rng.choices(list(STAGE_WEIGHTS), weights=list(STAGE_WEIGHTS.values()))[0]
    no_response = stage == "llm_request"
    return {
        "attempt": number,
        "stage": stage,
        "details": [rng.choice(STAGE_DETAILS[stage])],
        "outcome": "retry",  # the bot writes "retry" for every failed attempt, the last one too
        "llmRequestMs": int(rng.lognormvariate(0, 0.45) * plan.latency_ms),
        "llmResponseBytes": 0 if no_response else rng.randint(380, 6200),
    }


def _break_turn(record: dict, rng: random.Random) -> tuple[str, str]:
    """Plant one fault in a turn line; returns (field, rule) as the reader reports them."""
    choices = ["error_class", "attempts_text"]
    if not record["ok"]:  # a successful turn keeps its `ok`, so the gates stay as planned
        choices += ["ok_missing", "ok_mismatch", "class_stage", "tags_on_failure"]
    if record["trace"]:
        choices += ["stage", "negative_ms"]
    kind = rng.choice(choices)
    if kind == "error_class":
        record["errorClass"] = "timeout"
        return "errorClass", "enum_value"
    if kind == "attempts_text":
        record["attempts"] = str(record["attempts"])
        return "attempts", "int_type"
    if kind == "ok_missing":
        del record["ok"]
        return "ok", "required_key"
    if kind == "ok_mismatch":
        record["ok"] = not record["ok"]
        return "errorClass", "ok_matches_error_class"
    if kind == "class_stage":  # a class the last failed attempt's stage does not give
        record["errorClass"] = "transport" if record["errorClass"] != "transport" else "llm_request"
        return "errorClass", "error_class_matches_stage"
    if kind == "tags_on_failure":
        record["featureTags"] = ["fleet"]
        return "featureTags", "feature_tags_on_failure"
    if kind == "stage":
        record["trace"][0]["stage"] = "render"
        return "trace[0].stage", "enum_value"
    record["trace"][0]["llmRequestMs"] = -record["trace"][0]["llmRequestMs"] - 1
    return "trace[0].llmRequestMs", "greater_than_equal"


# --- order drafts -------------------------------------------------------------------


def _drafts(plan: Plan, turns: int, rng: random.Random) -> tuple[list[str], list[dict]]:
    house = rng.randint(1, 4)
    lines, faults = [], []
    for turn in range(1, turns + 1):
        draft = _draft(turn, house, plan, rng)
        if rng.random() < DRAFT_FAULT_RATE:
            broken = _break_draft(draft, rng)
            if broken is None:  # the model answered in prose around the JSON: not a record
                lines.append(f"Here are my orders for turn {turn}: {json.dumps(draft)}")
                faults.append(_fault(len(lines), "(record)", "not_a_json_object"))
                continue
            faults.append(_fault(len(lines) + 1, *broken))
        lines.append(json.dumps(draft))
    return lines, faults


def _draft(turn: int, house: int, plan: Plan, rng: random.Random) -> dict:
    fleets = rng.sample(range(101, 140), 6)
    draft = {
        "turn": turn,
        "houseId": house,
        "fleetCommands": _fleet_commands(fleets[:3], rng),
        "buildCommands": [_build(rng) for _ in range(rng.randint(0, 2))],
        "zeroTurnCommands": [],
        "populationTransfers": [],
        "terraformCommands": [],
        "colonyManagement": [],
        "espionageActions": [],
        "diplomaticCommand": None,
        "researchAllocation": None,
        "ebpInvestment": 0,
        "cipInvestment": 0,
    }
    if rng.random() < 0.3:
        draft["zeroTurnCommands"] = [_zero_turn(fleets[3], fleets[4], rng)]
    if rng.random() < 0.6:
        draft["researchAllocation"] = {
            "economic": rng.randint(0, 30),
            "science": rng.randint(0, 20),
            "fields": {f: rng.randint(1, 10) for f in rng.sample(TECH_FIELDS, 2)},
        }
    if rng.random() < 0.25:
        draft["colonyManagement"] = [
            {
                "colonyId": rng.randint(1, 30),
                "taxRate": rng.randint(5, 60),
                "autoRepair": True,
                "autoLoadMarines": False,
                "autoLoadFighters": False,
            }
        ]
    if rng.random() < 0.12:
        draft["populationTransfers"] = [{"sourceColonyId": 12, "destColonyId": 13, "ptuAmount": rng.randint(1, 5)}]
    if rng.random() < 0.08:
        draft["terraformCommands"] = [{"colonyId": rng.randint(1, 30)}]
    if rng.random() < 0.2:
        draft["espionageActions"] = [_espionage(house, rng)]
        draft["ebpInvestment"] = rng.randint(1, 4)
    if rng.random() < 0.1:
        draft["diplomaticCommand"] = _diplomacy(house, rng)
    if rng.random() < 0.06:  # the real compiler's extra lists (drift, not a fault), in its parser's shape
        if rng.random() < 0.5:
            draft["repairCommands"] = [
                {
                    "colonyId": rng.randint(1, 30),
                    "targetType": "ship",
                    "targetId": rng.randint(1, 400),
                    "priority": rng.randint(0, 3),
                }
            ]
        else:
            draft["scrapCommands"] = [
                {
                    "colonyId": rng.randint(1, 30),
                    "targetType": "facility",
                    "targetId": rng.randint(1, 40),
                    "acknowledgeQueueLoss": True,
                }
            ]
    return draft


def _fleet_commands(fleets: list[int], rng: random.Random) -> list[dict]:
    commands = []
    for fleet in fleets[: rng.randint(1, 3)]:
        kind = rng.choice(FLEET_COMMANDS)
        command = {
            "fleetId": fleet,
            "commandType": kind,
            "targetSystemId": None,
            "targetFleetId": None,
            "roe": rng.randint(*ROE_RANGE),
        }
        if kind in SYSTEM_TARGET_COMMANDS:
            command["targetSystemId"] = rng.randint(1, 60)
        if kind == "join-fleet":
            command["targetFleetId"] = rng.randint(140, 160)
            command["commandType"] = rng.choice(["join-fleet", "JoinFleet", "join_fleet"])  # compiler spellings
        commands.append(command)
    return commands


def _build(rng: random.Random) -> dict:
    kind = rng.choice(BUILD_TYPES)
    command: dict[str, Any] = {
        "colonyId": rng.randint(1, 30),
        "buildType": kind,
        "shipClass": None,
        "facilityClass": None,
        "groundClass": None,
        "quantity": rng.randint(1, 4),
    }
    if kind == "ship":
        command["shipClass"] = rng.choice(SHIP_CLASSES)
    elif kind == "facility":
        command["facilityClass"] = rng.choice(FACILITY_CLASSES)
        command["quantity"] = None  # defaults to 1
    elif kind == "ground":
        command["groundClass"] = rng.choice(GROUND_CLASSES)
    return command


def _zero_turn(source: int, target: int, rng: random.Random) -> dict:
    kind = rng.choice(ZERO_TURN_COMMANDS)
    values: dict[str, Any] = {
        "sourceFleetId": source,
        "targetFleetId": target,
        "shipIndices": [0, 2],
        "fighterShipIds": [rng.randint(500, 600)],
        "carrierShipId": rng.randint(300, 400),
        "sourceCarrierShipId": rng.randint(300, 400),
        "targetCarrierShipId": rng.randint(300, 400),
        "cargoType": "marines",
        "quantity": None,
    }
    command: dict[str, Any] = {
        "commandType": kind,
        "sourceFleetId": None,
        "targetFleetId": None,
        "shipIndices": [],
        "fighterShipIds": [],
        "carrierShipId": None,
        "sourceCarrierShipId": None,
        "targetCarrierShipId": None,
        "cargoType": None,
        "quantity": None,
    }
    command.update({name: values[name] for name in ZERO_TURN_REQUIRES[kind]})
    return command


def _espionage(house: int, rng: random.Random) -> dict:
    operation = rng.choice(ESPIONAGE_OPERATIONS)
    target = {"targetHouseId": house % 4 + 1, "targetSystemId": rng.randint(1, 60)}
    action: dict[str, Any] = {"operation": operation, "targetHouseId": None, "targetSystemId": None}
    action.update({name: target[name] for name in ESPIONAGE_REQUIRES[operation]})
    return action


def _diplomacy(house: int, rng: random.Random) -> dict:
    action = rng.choice(DIPLOMATIC_ACTIONS)
    command: dict[str, Any] = {
        "targetHouseId": house % 4 + 1,
        "action": action,
        "proposalId": None,
        "proposedState": None,
    }
    values = {"proposedState": lambda: rng.choice(PROPOSED_STATES), "proposalId": lambda: rng.randint(1, 20)}
    command.update({name: values[name]() for name in DIPLOMATIC_REQUIRES[action]})
    return command


def _break_draft(draft: dict, rng: random.Random) -> tuple[str, str] | None:
    """Plant one fault in a draft; returns (field, rule) as the reader reports them, or
    None for a draft that will be written as prose (not JSON)."""
    fleet = draft["fleetCommands"]
    kind = rng.choice(
        [
            "unknown_key",
            "fleet_id_text",
            "move_target",
            "join_target",
            "roe",
            "command",
            "infrastructure",
            "quantity",
            "ship_class",
            "facility_class",
            "merge",
            "tax",
            "sabotage",
            "tech_field",
            "turn_missing",
            "repeat_fleet",
            "proposal",
            "colonists",
            "prose",
        ]
    )
    if kind == "unknown_key":
        draft["reasoning"] = "Expand toward the core worlds."
        return "reasoning", "unknown_key"
    if kind == "fleet_id_text":
        fleet[0]["fleetId"] = str(fleet[0]["fleetId"])
        return "fleetCommands[0].fleetId", "int_type"
    if kind == "move_target":
        fleet[0].update(commandType="move", targetSystemId=None, targetFleetId=None)
        return "fleetCommands[0].targetSystemId", "target_system_required"
    if kind == "join_target":
        fleet[0].update(commandType="join-fleet", targetSystemId=None, targetFleetId=None)
        return "fleetCommands[0].targetFleetId", "target_fleet_required"
    if kind == "roe":
        fleet[0]["roe"] = 12
        return "fleetCommands[0].roe", "less_than_equal"
    if kind == "command":
        fleet[0]["commandType"] = "warp"
        return "fleetCommands[0].commandType", "enum_value"
    if kind == "repeat_fleet":
        fleet.append({**fleet[0], "commandType": "hold", "targetSystemId": None, "targetFleetId": None})
        return f"fleetCommands[{len(fleet) - 1}].fleetId", "one_command_per_fleet"
    if kind == "prose":
        return None
    return _break_section(draft, kind, rng)


def _break_section(draft: dict, kind: str, rng: random.Random) -> tuple[str, str]:
    builds = draft["buildCommands"]
    if kind in ("infrastructure", "quantity", "ship_class", "facility_class"):
        index = len(builds)
        if kind == "infrastructure":
            builds.append({"colonyId": 7, "buildType": "infrastructure", "quantity": 3})
            return f"buildCommands[{index}].buildType", "compiler_only_value"
        if kind == "quantity":
            builds.append({"colonyId": 7, "buildType": "ship", "shipClass": "frigate"})
            return f"buildCommands[{index}].quantity", "quantity_required"
        if kind == "ship_class":
            builds.append({"colonyId": 7, "buildType": "ship", "shipClass": "titan", "quantity": 1})
            return f"buildCommands[{index}].shipClass", "enum_value"
        builds.append({"colonyId": 7, "buildType": "facility", "quantity": 1})
        return f"buildCommands[{index}].facilityClass", "build_class_required"
    if kind == "colonists":  # the KDL reference's cargo, which the v1 JSON rules do not load
        index = len(draft["zeroTurnCommands"])
        draft["zeroTurnCommands"].append(
            {"commandType": "load-cargo", "sourceFleetId": 160, "cargoType": "colonists", "quantity": 2}
        )
        return f"zeroTurnCommands[{index}].cargoType", "load_cargo_marines_only"
    if kind == "merge":
        index = len(draft["zeroTurnCommands"])
        draft["zeroTurnCommands"].append({"commandType": "merge-fleets", "sourceFleetId": 160})
        return f"zeroTurnCommands[{index}].targetFleetId", "zero_turn_field_required"
    if kind == "tax":
        index = len(draft["colonyManagement"])
        draft["colonyManagement"].append({"colonyId": 3, "taxRate": 140})
        return f"colonyManagement[{index}].taxRate", "less_than_equal"
    if kind == "sabotage":
        index = len(draft["espionageActions"])
        draft["espionageActions"].append({"operation": "sabotage-high", "targetHouseId": 2})
        return f"espionageActions[{index}].targetSystemId", "espionage_target_required"
    if kind == "tech_field":
        draft["researchAllocation"] = {"economic": 10, "science": 5, "fields": {"wpn": 5}}
        return "researchAllocation.fields.wpn", "unknown_key"
    if kind == "turn_missing":
        del draft["turn"]
        return "turn", "required_key"
    draft["diplomaticCommand"] = {
        "targetHouseId": 2,
        "action": "accept-proposal",
        "proposalId": None,
        "proposedState": None,
    }
    return "diplomaticCommand.proposalId", "diplomatic_field_required"


def _fault(line: int, field: str, rule: str) -> dict:
    return {"locator": f"line {line}", "field": field, "rule": rule}
