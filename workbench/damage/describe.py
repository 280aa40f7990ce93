"""One line of text per Damage event, that a person reads at a glance."""

from __future__ import annotations

import json


def describe_event(kind: str, payload) -> str:
    """One line a person reads at a glance; the payload itself is shown beside it."""
    if not isinstance(payload, dict):
        return f"{kind}: {_short(payload)}"
    describe = _DESCRIPTIONS.get(kind)
    try:
        return describe(payload) if describe else f"{kind} " + _pairs(payload)
    except (KeyError, TypeError, ValueError):  # a payload that lacks what the template needs
        return f"{kind} " + _pairs(payload)


def _signed(value) -> str:
    return f"{value:+.3f}" if isinstance(value, (int, float)) else "?"


def _affect(p: dict) -> str:
    mode = p.get("mode")
    if mode == "attack_team":
        helpers = f" with {', '.join(p['assistants'])}" if p.get("assistants") else ""
        return (
            f"{p.get('lead_player_id')}{helpers} attacks {p.get('target_player_id')} on {p.get('emotion')}: "
            f"intended {_signed(p.get('raw_delta'))}, applied {_signed(p.get('applied_delta'))}"
        )
    if mode == "self_regulate":
        return f"{p.get('player_id')} self-regulates (stress -{p.get('stress_recovered', 0):.2f})"
    return f"affect {mode}: " + _pairs(p)


def _action(p: dict) -> str:
    plan = p.get("attack_plan")
    aim = (
        (f"; aims {plan.get('emotional_intent')} at {plan.get('target_player_id')} ({plan.get('manipulation_plan')})")
        if isinstance(plan, dict)
        else ""
    )
    return f"{p.get('player_id')} {p.get('kind')} → pot {p.get('pot')}, high bet {p.get('current_high_bet')}{aim}"


def _submitted(p: dict) -> str:
    action = p.get("action") or {}
    amount = (action.get("payload") or {}).get("amount")
    return f"{p.get('player_id')} submits {action.get('kind')}" + (f" {amount}" if amount is not None else "")


def _showdown(p: dict) -> str:
    winners = ", ".join(p.get("winners") or []) or "nobody"
    return f"showdown: {winners} win pot {p.get('pot')}; {p.get('life_losses', 0)} life lost"


_DESCRIPTIONS = {
    "hand_started": lambda p: (
        f"hand {p.get('turn')} starts: {len(p.get('players') or [])} players, ante {p.get('ante')}, pot {p.get('pot')}"
    ),
    "hand_ended": lambda p: f"hand {p.get('turn')} ends",
    "phase_changed": lambda p: f"phase: {p.get('phase')}",
    "affect_intent": lambda p: (
        f"{p.get('player_id')} intends {(p.get('intent') or {}).get('mode')} on "
        f"{(p.get('intent') or {}).get('target_player_id')}"
    ),
    "affect_resolved": _affect,
    "action_submitted": _submitted,
    "action_resolved": _action,
    "showdown": _showdown,
    "life_lost": lambda p: f"{p.get('player_id')} loses a life ({p.get('remaining_lives')} left)",
    "player_eliminated": lambda p: f"{p.get('player_id')} is eliminated",
    "fold_saved_life": lambda p: f"{p.get('player_id')} folded and keeps its life",
    "chatter_posted": lambda p: f"{p.get('player_id')}: “{p.get('text')}”",
    "thinking": lambda p: (
        f"{p.get('player_id')} thinking {p.get('status')}"
        + (f" ({p['stage']})" if p.get("stage") else "")
        + (f": {p['summary']}" if p.get("summary") else "")
    ),
    "provider_call": lambda p: (
        f"{p.get('player_id')} called {p.get('resolved_model')} "
        f"({p.get('latency_ms')} ms, {(p.get('usage') or {}).get('total_tokens')} tokens)"
    ),
    "game_ended": lambda p: "game over",
}


def _pairs(payload: dict, limit: int = 6) -> str:
    items = [f"{k}={_short(v)}" for k, v in list(payload.items())[:limit]]
    return ", ".join(items) + (", …" if len(payload) > limit else "")


def _short(value, width: int = 40) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= width else text[: width - 1] + "…"
