"""Synthetic game-master sessions (`*.gm.jsonl`) with the quirks real models show.

Every response variant of seed 001 and formats.md appears: markers on their own lines,
markers inline in combat rolls, whole-JSON responses (some in a ```json fence), the
mixed format with a `"playerDecision"`, character generation, `{title, description,
type, id}` actions, items as `[A, B]`, JSON arrays, comma lists or left out (and, in
JSON responses, as `{name, category}` objects), locations of each of the game's kinds
(`town`, `wilderness`, `landmark`, `unknown`), and malformed JSON that json-repair can fix. Faults are injected at chosen responses, and
each file's manifest entry lists every error and warning the reader will report
(locator, field, rule). The models fail at different rates, so the decision-quality
figure has something to compare.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

RESPONSES_PER_FILE = 30

# (file name, main model, fallback model or None, timestamp style)
SESSIONS = [
    ("silver-gulch", "gpt-4o-mini", None, "offset"),
    ("dark-alley", "claude-3-5-haiku", None, "z"),
    ("redemption-trail", "llama-3.1-70b-instruct", "gpt-4o-mini", "offset"),
]
FAULT_RATE = {"gpt-4o-mini": 0.08, "claude-3-5-haiku": 0.04, "llama-3.1-70b-instruct": 0.2}

VARIANTS = {  # variant -> weight
    "markers": 5,
    "inline": 2,
    "combat": 2,
    "titles": 2,
    "json": 3,
    "mixed": 3,
    "character": 1,
    "malformed_actions": 1,
    "malformed_json": 1,
}

# Places in the game's own kinds: a town or landmark is named, a wilderness described.
LOCATIONS = [
    {"type": "town", "name": "Silver Gulch"},
    {"type": "town", "name": "Redemption"},
    {"type": "landmark", "name": "Dark Alley"},
    {"type": "landmark", "name": "Abandoned Mine", "description": "Boarded-up shaft above the creek"},
    {"type": "landmark", "name": "Stagecoach Station"},
    {"type": "wilderness", "description": "Dry Creek Trail"},
    {"type": "wilderness", "description": "Sagebrush flats under a red mesa"},
    {"type": "unknown"},
]
UNKNOWN_PLACE_KINDS = ["building", "city", "Town", "saloon"]
ITEM_CATEGORIES = ["general", "weapon", "consumable", "medical"]
ITEMS = [
    "Rope",
    "Lantern",
    "Canteen",
    "Box of Matches",
    "Revolver Ammo",
    "Bandage",
    "Silver Dollar",
    "Sheriff's Badge",
    "Old Map",
    "Bottle of Whiskey",
    "Hunting Knife",
    "Tin Star",
]
OPPONENTS = ["Mysterious Gunslinger", "Surly Bandit", "Drunk Cowhand", "Rattlesnake Jake", "Outlaw Scout"]
NPCS = ["Sheriff Wilson", "Wes Calloway", "Ma Baker", "Doc Holloway", "Shopkeeper", "Miner Zeke"]
SCENES = [
    "You enter the dusty saloon. The bartender nods in your direction.",
    "The wind carries tumbleweeds across the empty street.",
    "A shadowy figure steps out from the alley, revolver drawn.",
    "The sheriff looks up from a stack of wanted posters.",
    "Hoofbeats echo from the canyon walls as the sun sets.",
    "The shopkeeper polishes a glass case full of cartridges.",
    "Somewhere a piano plays a tune you almost remember.",
    "The mine entrance is boarded up, but one plank hangs loose.",
]
ACTIONS = {
    "basic": [
        "Approach the bar",
        "Look around the room",
        "Head back to the street",
        "Check your gear",
        "Follow the tracks",
    ],
    "combat": ["Draw your weapon", "Dive for cover", "Fire a warning shot", "Throw a punch"],
    "interaction": [
        "Talk to the bartender",
        "Ask about the stranger",
        "Try to talk your way out",
        "Offer a silver dollar",
    ],
}
DECISIONS = [
    (
        "Do you accept the sheriff's offer to become a deputy?",
        [
            ("Accept the badge", "You'll gain authority but also responsibility", ["lawful", "commitment"]),
            (
                "Decline politely",
                "You'll maintain your freedom but may miss opportunities",
                ["neutral", "independence"],
            ),
            ("Laugh at the offer", "You'll offend the sheriff but impress outlaws", ["rude", "reputation"]),
        ],
    ),
    (
        "The stranger offers you a share of the gold. Do you ride with him?",
        [
            ("Ride with him", "Gold, and a price on your head", ["outlaw", "greed"]),
            ("Turn him in", "The town will trust you", ["lawful", "loyalty"]),
        ],
    ),
    (
        "Ma Baker asks you to find her missing son. Will you help?",
        [
            ("Promise to find him", "A long ride into the hills", ["kind", "quest"]),
            ("Ask for payment first", "She will pay, but remember it", ["greedy", "pragmatic"]),
            ("Refuse", "You keep your plans", ["cold"]),
        ],
    ),
]
IMPORTANCE = ["critical", "significant", "moderate", "minor"]
ATTRIBUTES = ["speed", "gunAccuracy", "throwingAccuracy", "strength", "baseStrength", "bravery", "experience"]

# Fault -> the variants it can be planted in.
FAULTS = {
    "unknown_action_type": ("markers", "inline", "combat", "titles", "json", "mixed"),
    "missing_action_type": ("markers", "combat", "json"),
    "bad_importance": ("mixed", "json_decision"),
    "one_option": ("mixed", "json_decision"),
    "option_without_impact": ("mixed", "json_decision"),
    "decision_without_prompt": ("mixed",),
    "attribute_out_of_range": ("character",),
    "attribute_as_text": ("character",),
    "missing_attribute": ("character",),
    "json_without_narrative": ("json",),
    "unknown_location_type": ("json",),
    "nameless_location": ("json",),
    "line_without_text": ("markers",),
}

DECISION_FAULTS = ("bad_importance", "one_option", "option_without_impact")


@dataclass
class Response:
    """One response being written: its scene, variant, and the faults it carries."""

    variant: str
    narrative: str | None
    location: dict
    acquired: list[str]
    removed: list[str]
    actions: list[dict]
    opponent: str | None = None
    decision: dict | None = None
    character: dict | None = None
    expected: list[tuple[str, str]] = field(default_factory=list)  # (field, rule)
    no_text: bool = False


def generate(out_dir: Path, scale: int, rng: random.Random) -> list[dict]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    fault_names = list(FAULTS)
    entries = []
    for number, (name, model, fallback, ts_style) in enumerate(SESSIONS):
        planted = fault_names[number :: len(SESSIONS)]  # every fault somewhere in the corpus
        path = out_dir / f"{name}.gm.jsonl"
        faults = _write_session(
            path,
            RESPONSES_PER_FILE * max(1, scale),
            model,
            fallback,
            ts_style,
            planted,
            truncated=fallback is not None,
            rng=rng,
        )
        entries.append({"path": str(path), "format": "gm", "faults": faults})
    return entries


def _write_session(path, count, model, fallback, ts_style, planted, truncated, rng) -> list[dict]:
    variants = _variant_plan(count, rng)
    forced = dict(zip(rng.sample(range(count), len(planted)), planted))
    clock = datetime(2026, 2, 6, 9, 0, tzinfo=UTC) + timedelta(hours=rng.randint(0, 48))
    lines, faults = [], []
    for index in range(count):
        who = fallback if fallback and rng.random() < 0.3 else model
        variant, fault = _variant_and_fault(variants[index], forced.get(index), FAULT_RATE[who], rng)
        response = _response(variant, rng, wants_decision=fault in DECISION_FAULTS)
        if fault:
            _plant(response, fault, rng)
        clock += timedelta(seconds=rng.randint(4, 90))
        response_id = f"r-{index + 1}"
        lines.append(_line(response_id, clock, ts_style, who, response))
        faults += [{"locator": f"response {response_id}", "field": f, "rule": r} for f, r in response.expected]
    if truncated:  # the game crashed while writing its last line
        cut = json.dumps({"id": f"r-{count + 1}", "model": model, "text": "The stagecoach lurches"})[:-9]
        lines.append(cut)
        faults.append({"locator": f"line {count + 1}", "field": "(record)", "rule": "not_a_json_object"})
    path.write_text("\n".join(lines) + ("" if truncated else "\n"), encoding="utf-8")
    return faults


def _variant_and_fault(planned: str, forced: str | None, rate: float, rng: random.Random):
    """A planted fault picks a variant it fits; otherwise the model errs at its rate."""
    if forced is not None:
        if _fits(planned, FAULTS[forced]):
            return planned, forced
        return rng.choice(FAULTS[forced]).replace("json_decision", "json"), forced
    if rng.random() >= rate:
        return planned, None
    fitting = [fault for fault, where in FAULTS.items() if _fits(planned, where)]
    return planned, rng.choice(fitting) if fitting else None


def _fits(variant: str, where: tuple[str, ...]) -> bool:
    return variant in where or (variant == "json" and "json_decision" in where)


def _variant_plan(count: int, rng: random.Random) -> list[str]:
    """Every variant at least once (when the file is long enough), the rest by weight."""
    plan = list(VARIANTS)[:count]
    plan += rng.choices(list(VARIANTS), weights=list(VARIANTS.values()), k=count - len(plan))
    rng.shuffle(plan)
    return plan


# --- the content of a response -----------------------------------------------------


def _response(variant: str, rng: random.Random, wants_decision: bool = False) -> Response:
    location = dict(rng.choice(LOCATIONS))
    response = Response(
        variant=variant,
        narrative=" ".join(rng.sample(SCENES, rng.randint(1, 3))),
        location=location,
        acquired=rng.sample(ITEMS, rng.choice([0, 0, 1, 2])),
        removed=rng.sample(ITEMS, rng.choice([0, 0, 0, 1])),
        actions=_actions(rng, combat=variant == "combat"),
    )
    if variant in ("combat", "inline"):
        response.opponent = rng.choice(OPPONENTS)
    if variant == "mixed" or (variant == "json" and (wants_decision or rng.random() < 0.4)):
        response.decision = _decision(rng)
    if variant == "character":
        response.character = {
            "name": rng.choice(NPCS + OPPONENTS),
            "attributes": {a: rng.randint(0, 20) for a in ATTRIBUTES},
        }
    if variant == "titles":
        response.actions = [
            {"title": a["text"], "description": f"{a['text']}, carefully", "type": a["type"], "id": f"{a['type']}-{n}"}
            for n, a in enumerate(response.actions, 1)
        ]
    return response


def _actions(rng: random.Random, combat: bool) -> list[dict]:
    kinds = ["combat", "interaction", "combat"] if combat else ["basic", "basic", "interaction"]
    return [{"text": rng.choice(ACTIONS[kind]), "type": kind} for kind in kinds[: rng.randint(2, 3)]]


def _decision(rng: random.Random) -> dict:
    prompt, options = rng.choice(DECISIONS)
    decision = {
        "prompt": prompt,
        "options": [{"text": t, "impact": i, "tags": tags} for t, i, tags in options],
        "importance": rng.choice(IMPORTANCE),
        "characters": rng.sample(NPCS, 1),
    }
    if rng.random() < 0.5:
        decision["context"] = "The town is watching what you do."
    return decision


def _plant(response: Response, fault: str, rng: random.Random) -> None:
    """Change `response` so it carries `fault`, and record what the reader will report."""
    expect = response.expected.append
    if fault in ("unknown_action_type", "missing_action_type"):
        at = rng.randrange(len(response.actions))
        if fault == "unknown_action_type":
            response.actions[at]["type"] = rng.choice(["magic", "social", "movement"])
            expect((f"suggested_actions[{at}].type", "enum_value"))
        else:
            del response.actions[at]["type"]
            expect((f"suggested_actions[{at}].type", "action_type_defaulted"))
    elif fault == "bad_importance":
        _planted_in(response.decision, fault)["importance"] = rng.choice(["urgent", "high", "low-ish"])
        expect(("player_decision.importance", "importance_defaulted"))
    elif fault == "one_option":
        decision = _planted_in(response.decision, fault)
        decision["options"] = decision["options"][:1]
        expect(("player_decision.options", "too_few_options"))
    elif fault == "option_without_impact":
        decision = _planted_in(response.decision, fault)
        decision["options"] = decision["options"][:2]
        del decision["options"][1]["impact"]
        expect(("player_decision.options[1].impact", "incomplete_option"))
        expect(("player_decision.options", "too_few_options"))
    elif fault == "decision_without_prompt":
        del _planted_in(response.decision, fault)["prompt"]
        expect(("player_decision.prompt", "required_key"))
    elif fault.startswith(("attribute", "missing_attribute")):
        _plant_attribute(response, fault, rng)
    elif fault == "unknown_location_type":
        response.location["type"] = rng.choice(UNKNOWN_PLACE_KINDS)
        expect(("location.type", "location_defaulted"))
    elif fault == "nameless_location":
        # A town or landmark without its name, or a wilderness without its description.
        response.location = rng.choice(
            [{"type": "town"}, {"type": "landmark", "description": "A tall rock"}, {"type": "wilderness"}]
        )
        needs = "description" if response.location["type"] == "wilderness" else "name"
        expect((f"location.{needs}", "location_defaulted"))
    elif fault == "json_without_narrative":
        response.narrative = None
        expect(("narrative", "required_key"))
    elif fault == "line_without_text":
        response.no_text = True
        expect(("text", "required_key"))


def _planted_in(part: dict | None, fault: str) -> dict:
    """The part of a response (its decision, its character) that `fault` changes: the
    variant picked for the fault writes it (`_variant_and_fault`)."""
    if part is None:
        raise ValueError(f"the response has no part for fault {fault!r} to change: its variant does not fit it")
    return part


def _plant_attribute(response: Response, fault: str, rng: random.Random) -> None:
    name = rng.choice(ATTRIBUTES)
    attributes = _planted_in(response.character, fault)["attributes"]
    if fault == "attribute_out_of_range":
        attributes[name] = rng.randint(21, 30)
        rule = "less_than_equal"
    elif fault == "attribute_as_text":
        attributes[name] = str(attributes[name])
        rule = "int_type"
    else:
        del attributes[name]
        rule = "required_key"
    response.expected.append((f"character.attributes.{name}", rule))


# --- writing a response as a model would --------------------------------------------


def _line(response_id: str, clock: datetime, ts_style: str, model: str, response: Response) -> str:
    ts = clock.isoformat()
    if ts_style == "z":
        ts = ts.replace("+00:00", "Z")
    record = {"id": response_id, "ts": ts, "model": model}
    if not response.no_text:
        record["text"] = _text(response)
    return json.dumps(record)


def _text(response: Response) -> str:
    variant = response.variant
    if variant == "character":
        return json.dumps(response.character, indent=2)
    if variant in ("json", "malformed_json"):
        return _json_text(response, malformed=variant == "malformed_json")
    if variant == "inline":
        return _inline_text(response)
    text = _markers_text(response, malformed=variant == "malformed_actions")
    if variant == "mixed":
        text += '\n\n"playerDecision": ' + json.dumps(response.decision, indent=2)
    return text


def _place(response: Response) -> str | None:
    """What the LOCATION marker says: the name, or a wilderness's description."""
    return response.location.get("name", response.location.get("description"))


def _location_lines(response: Response) -> list[str]:
    place = _place(response)
    return [f"LOCATION: {place}"] if place else []  # an unknown place is left out


def _narrative(response: Response) -> str:
    """The narrative of a response written with markers (only JSON may leave it out)."""
    if response.narrative is None:
        raise ValueError("a response written with markers has no narrative: only a JSON one may leave it out")
    return response.narrative


def _markers_text(response: Response, malformed: bool = False) -> str:
    lines = [_narrative(response), "", *_location_lines(response)]
    if response.opponent:
        lines.append(f"COMBAT: {response.opponent}")
    lines += _item_lines("ACQUIRED_ITEMS", response.acquired, response)
    lines += _item_lines("REMOVED_ITEMS", response.removed, response)
    actions = "[\n" + ",\n".join("  " + json.dumps(a) for a in response.actions) + "\n]"
    if malformed:
        # Two ways models break JSON: a trailing comma, or output cut before `]`.
        actions = actions[:-2] + ",\n]" if len(_narrative(response)) % 2 else actions[:-2]
        response.expected.append(("suggested_actions", "json_repaired"))
    lines.append(f"SUGGESTED_ACTIONS: {actions}")
    return "\n".join(lines)


def _item_lines(marker: str, items: list[str], response: Response) -> list[str]:
    """Items in one of the spellings models use; an empty list is often left out."""
    style = (len(_narrative(response)) + len(marker)) % 4
    if not items:
        return [] if style < 2 else [f"{marker}: []"]
    if style == 0:
        return [f"{marker}: [{', '.join(items)}]"]
    if style == 1:
        return [f"{marker}: {json.dumps(items)}"]
    if style == 2:
        return [f"{marker}: {', '.join(items)}"]
    return [f"{marker}: [{', '.join(items)}]"]


def _inline_text(response: Response) -> str:
    """A combat round: each roll line carries empty inline markers, as real models write."""
    attacker, target = "Wes Calloway", response.opponent
    rolls = [
        f"{attacker} ACQUIRED_ITEMS: REMOVED_ITEMS: fires wide of {target}! (Roll: 81, Target: 55)",
        f"{target} ACQUIRED_ITEMS: REMOVED_ITEMS: grazes {attacker} for 3 damage! (Roll: 22, Target: 48)",
    ]
    actions = json.dumps(response.actions)
    return "\n".join(
        ["Combat", *rolls, f"COMBAT: {target}", *_location_lines(response), f"SUGGESTED_ACTIONS: {actions}"]
    )


def _json_items(response: Response) -> list:
    """Acquired items as names, or as the `{name, category}` objects the game's prompt asks for."""
    if len(response.narrative or "") % 2:
        return response.acquired
    return [{"name": item, "category": ITEM_CATEGORIES[len(item) % len(ITEM_CATEGORIES)]} for item in response.acquired]


def _json_text(response: Response, malformed: bool) -> str:
    body: dict[str, Any] = {}
    if response.narrative is not None:
        body["narrative"] = response.narrative
    body.update(
        {
            "location": response.location,
            "combatInitiated": response.opponent is not None,
            "acquiredItems": _json_items(response),
            "removedItems": response.removed,
            "suggestedActions": response.actions,
        }
    )
    if response.decision is not None:
        body["playerDecision"] = response.decision
    text = json.dumps(body, indent=2)
    if malformed:
        text = text[:-2] + ",\n}"  # a trailing comma after the last member
        response.expected.append(("text", "json_repaired"))
    if len(response.narrative or "") % 3 == 0:
        text = f"```json\n{text}\n```"
    return text
