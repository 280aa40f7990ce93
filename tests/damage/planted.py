"""Damage games with a planted effect of attacks on play: three players at a five-card
draw table; every sixth hand P1 raises with an attack plan on P3; P3, holding the best
hand, folds it at `after` in its three decisions after an attack and at `before` in the
rest (any other hand: at 0.3). Written as the simulator writes its lines, or as the
judged decisions and attacks the event study reads, for simulations that skip the
ingest."""

from __future__ import annotations

import json
import random

import polars as pl

from tests.damage.events import ATTACK_PLAN, PAYLOADS, PLAYER, event
from workbench.damage import cards

PLAYERS = ("P1", "P2", "P3")
EVERY = 6  # an attack every EVERY hands
WINDOW = 3  # P3's decisions after an attack that it reaches (the event study's k)


def hands(rng: random.Random, count: int, after: float, before: float):
    """Per hand: its cards, whether P1 attacked, and P3's choice (and whether its hand was
    the best at the table), with the effect planted."""
    since = WINDOW  # P3's decisions since the last attack
    for number in range(count):
        deck = rng.sample(cards.DECK, 15)
        dealt = {pid: deck[5 * i : 5 * i + 5] for i, pid in enumerate(PLAYERS)}
        attacked = number % EVERY == 0
        since = 0 if attacked else since
        strength = {pid: cards.strength(hand) for pid, hand in dealt.items()}
        best = strength["P3"] >= max(strength["P1"], strength["P2"])
        chance = (after if since < WINDOW else before) if best else 0.3
        folds = rng.random() < chance
        since += 1
        yield dealt, attacked, folds, best, strength


def game_lines(game: str, seed: int, count: int = 30, after: float = 0.4, before: float = 0.1) -> list[str]:
    lines = [event("game_started", {**PAYLOADS["game_started"], "players": 3, "card_style": "draw5"}, game_id=game)]

    def add(kind, payload):
        lines.append(event(kind, payload, game_id=game))

    for turn, (dealt, attacked, folds, _, strength) in enumerate(hands(random.Random(seed), count, after, before), 1):
        pot, high = 6, 0
        state = {
            pid: {**PLAYER, "player_id": pid, "hand": hand, "current_bet": 0, "hand_contribution": 2, "in_hand": True}
            for pid, hand in dealt.items()
        }
        add(
            "hand_started",
            {
                "turn": turn,
                "pot": pot,
                "ante": 2,
                "card_style": "draw5",
                "community_cards": [],
                "players": list(state.values()),
            },
        )
        plan = {**ATTACK_PLAN, "target_player_id": "P3"} if attacked else None
        for pid in PLAYERS:
            to_call = high - state[pid]["current_bet"]
            kind = (
                ("raise" if attacked else "check")
                if pid == "P1"
                else ("fold" if pid == "P3" and folds else "call" if to_call else "check")
            )
            add(
                "provider_call",
                {
                    **PAYLOADS["provider_call"],
                    "turn": turn,
                    "player_id": pid,
                    "requested_model": f"m-{pid}",
                    "resolved_model": f"m-{pid}",
                },
            )
            action = {
                "player_id": pid,
                "kind": kind,
                "payload": {"amount": 10} if kind == "raise" else {},
                "reasoning_summary": "x",
                "attack_plan": plan if pid == "P1" else None,
            }
            add("action_submitted", {"turn": turn, "player_id": pid, "action": action})
            commit = {"raise": to_call + 10, "call": to_call}.get(kind, 0)
            state[pid].update(
                current_bet=state[pid]["current_bet"] + commit,
                hand_contribution=state[pid]["hand_contribution"] + commit,
                in_hand=kind != "fold",
            )
            pot, high = pot + commit, max(high, state[pid]["current_bet"] + 0)
            if kind == "raise":
                add(
                    "direct_emoter_attack_resolved",
                    {
                        "turn": turn,
                        "attacker_id": "P1",
                        "target_player_id": "P3",
                        "emotion": plan["emotional_intent"],
                        "before": {},
                        "after": {},
                    },
                )
            add(
                "action_resolved",
                {
                    "turn": turn,
                    "player_id": pid,
                    "kind": kind,
                    "pot": pot,
                    "current_high_bet": high,
                    "player_state": dict(state[pid]),
                },
            )
        shown = [pid for pid in PLAYERS if state[pid]["in_hand"]]
        top = max(strength[pid] for pid in shown)
        winners = [pid for pid in shown if strength[pid] == top]
        add(
            "showdown",
            {
                "turn": turn,
                "pot": pot,
                "winners": winners,
                "life_losses": len(shown) - len(winners),
                "payouts": {pid: pot // len(winners) if pid in winners else 0 for pid in PLAYERS},
                "rankings": {pid: {"category": cards.category(dealt[pid]), "score": [strength[pid]]} for pid in shown},
                "card_style": "draw5",
                "community_cards": [],
            },
        )
    return [json.dumps(line) for line in lines]


def frames(games: int, seed: int, after: float, before: float, count: int = 30) -> tuple[pl.DataFrame, pl.DataFrame]:
    """P3's judged decisions and the attacks on it, as the event study reads them, without
    writing or ingesting a log: one line per hand, the attack just before P3's choice."""
    rng = random.Random(seed)
    choices, attacks = [], []
    for game in range(games):
        for turn, (_, attacked, folds, best, _) in enumerate(hands(rng, count, after, before), 1):
            line = 10 * turn
            if attacked:
                attacks.append(
                    {
                        "source_id": game,
                        "game_id": f"g{game}",
                        "line": line - 1,
                        "target": "P3",
                        "plan": "bait",
                        "intent": "tilt",
                    }
                )
            choices.append(
                {
                    "source_id": game,
                    "game_id": f"g{game}",
                    "player_id": "P3",
                    "line": line,
                    "action": "fold" if folds else "call",
                    "mistake": None,
                    "won_at_showdown": best,
                }
            )
    return (
        pl.DataFrame(
            choices,
            schema={
                "source_id": pl.Int64,
                "game_id": pl.String,
                "player_id": pl.String,
                "line": pl.Int64,
                "action": pl.String,
                "mistake": pl.String,
                "won_at_showdown": pl.Boolean,
            },
        ),
        pl.DataFrame(
            attacks,
            schema={
                "source_id": pl.Int64,
                "game_id": pl.String,
                "line": pl.Int64,
                "target": pl.String,
                "plan": pl.String,
                "intent": pl.String,
            },
        ),
    )
