"""Synthetic Damage games and a tournament log, written the way the real game writes
them (formats.md): `schema_version` "0.1", `+00:00` timestamps without a zero
fraction, undocumented event types, extra player keys, `discussion` phases, hold'em
and draw-5 hands, unrounded emotions, and a small known rate of injected faults."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

EMOTIONS = ("fear", "anger", "shame", "confidence", "tilt")
INTENTS = ("fear", "anger", "shame", "tilt")
MODELS = {
    "gpt-4.1-mini": (900.0, 350.0),  # latency mean, sd (ms)
    "claude-3-5-haiku": (1300.0, 400.0),
    "llama-3.1-70b": (2100.0, 700.0),
}
RANKS, SUITS = "23456789TJQKA", "CDHS"
FAULT_RATE = 1 / 300  # of eligible events
# Of betting calls, those that fail at the provider (the real logs: 13 of 223), and what
# the simulator then writes as their detail.
PROVIDER_FAILURE_RATE = 0.04
PROVIDER_ERRORS = (
    'provider HTTP error 500: {"error": "mock overload"}',
    'provider HTTP error 429: {"error": "rate limit exceeded"}',
    "provider timeout after 30s",
)


@dataclass
class Player:
    player_id: str
    model: str
    alias: str
    lives: int = 5
    bankroll: int = 200
    current_bet: int = 0
    in_hand: bool = True
    hand: list[str] = field(default_factory=list)
    focus: float = 3.0
    stress: float = 0.0
    emotions: dict[str, float] = field(default_factory=dict)

    def state(self, rng: random.Random) -> dict:
        return {
            "player_id": self.player_id,
            "alias": self.alias,
            "avatar_id": f"av_{self.player_id.lower()}",
            "lives": self.lives,
            "bankroll": self.bankroll,
            "current_bet": self.current_bet,
            "in_hand": self.in_hand,
            "hand": list(self.hand),
            "will": 3,
            "skill_affect": 2,
            "focus": round(self.focus, 2),
            "stress": round(self.stress, 3),
            "resistance_bonus": 0.1,
            "tempo": 1,
            "exposure": rng.randint(0, 3),
            "hand_contribution": self.current_bet,
            "emotions": dict(self.emotions),
        }


class GameLog:
    """Writes one game's events, tracking line numbers and injected faults."""

    def __init__(self, game_id: str, start: datetime, rng: random.Random):
        self.game_id, self.clock, self.rng = game_id, start, rng
        # Whether a betting call fails at the provider: a stream of its own, so a game's
        # other draws are those it would have without failures.
        self.provider = random.Random(f"{game_id}:provider")
        self.lines: list[dict[str, Any] | str] = []  # events, and a crash's cut last line as written
        self.faults: list[dict[str, str]] = []

    def emit(self, kind: str, payload: dict) -> dict:
        self.clock += timedelta(
            microseconds=self.rng.choice([0, self.rng.randint(1, 999_999)]), milliseconds=self.rng.randint(5, 900)
        )
        event: dict[str, Any] = {
            "schema_version": "0.1",
            "type": kind,
            "game_id": self.game_id,
            "ts": self.clock.isoformat(),
            "payload": payload,
        }
        self.lines.append(event)
        return event

    def fault(self, field_path: str, rule: str) -> None:
        self.faults.append({"locator": f"line {len(self.lines)}", "field": field_path, "rule": rule})

    def text(self) -> str:
        return "".join(line if isinstance(line, str) else json.dumps(line) + "\n" for line in self.lines)


def _clamp(value: float) -> float:
    return max(-1.0, min(1.0, value))


def _deal(rng: random.Random, players: list[Player], cards: int) -> None:
    deck = [r + s for r in RANKS for s in SUITS]
    rng.shuffle(deck)
    for player in players:
        player.hand = [deck.pop() for _ in range(cards)] if player.in_hand else []


def _game_id(rng: random.Random, start: datetime, old_style: bool) -> str:
    stamp = start.strftime("%Y%m%dT%H%M%S")
    if old_style:
        return f"game_{stamp}Z"
    return f"game_{stamp}{start.microsecond:06d}Z_{rng.getrandbits(24):06x}"


def play_game(
    rng: random.Random,
    start: datetime,
    n_players: int,
    turns: int,
    old_style: bool = False,
    inject: bool = True,
    crash: bool = False,
) -> GameLog:
    start = start.replace(microsecond=rng.randint(1, 999_999))
    log = GameLog(_game_id(rng, start, old_style), start, rng)
    models = rng.sample(sorted(MODELS), k=rng.choice([2, 3]))
    players = [Player(f"P{i + 1}", rng.choice(models), f"Player {i + 1}") for i in range(n_players)]
    for p in players:
        p.emotions = {e: rng.uniform(-0.2, 0.3) for e in EMOTIONS}
    cards = rng.choice([2, 5])
    log.emit(
        "game_started",
        {
            "players": n_players,
            "turns": turns,
            "primary_model": models[0],
            "fallback_models": models[1:],
            "seed": rng.randint(1, 10**6),
        },
    )
    _setup(log, players, rng)
    for turn in range(1, turns + 1):
        alive = [p for p in players if p.lives > 0]
        if len(alive) < 2:
            break
        _hand(log, alive, turn, cards, rng, inject)
    log.emit(
        "game_ended",
        {
            "final_state": [p.state(rng) for p in players],
            "token_stats": {"calls": float(len(log.lines) // 4)},
            "token_stats_by_model": {m: {"calls": 1.0} for m in models},
        },
    )
    if crash:  # a crashed game leaves a truncated last line
        last = json.dumps(log.lines[-1])
        log.lines[-1] = last[: len(last) // 2]
        log.fault("(record)", "not_a_json_object")
    return log


def _setup(log: GameLog, players: list[Player], rng: random.Random) -> None:
    for p in players:
        log.emit("player_joined", {"player_id": p.player_id, "alias": p.alias})
        log.emit(
            "thinking", {"turn": 0, "player_id": p.player_id, "status": "start", "stage": "avatar", "model": p.model}
        )
        _provider_call(log, p, 0, rng)
        log.emit("avatar_selected", {"player_id": p.player_id, "avatar_id": f"av_{p.player_id.lower()}"})
        log.emit("backstory_created", {"player_id": p.player_id, "summary": f"{p.alias} grew up in a casino."})
    if rng.random() < 0.5:
        p = rng.choice(players)
        log.emit(
            "model_assignment_warning",
            {"player_id": p.player_id, "assigned_model": p.model, "reason": "fallback model used after timeout"},
        )


def _provider_call(log: GameLog, p: Player, turn: int, rng: random.Random) -> None:
    mean, sd = MODELS[p.model]
    prompt, completion = rng.randint(900, 4000), rng.randint(60, 400)
    log.emit(
        "provider_call",
        {
            "turn": turn,
            "player_id": p.player_id,
            "requested_model": p.model,
            "resolved_model": p.model,
            "latency_ms": round(max(120.0, rng.gauss(mean, sd)), 1),
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
            "max_output_tokens": 512,
        },
    )


def _hand(log: GameLog, players: list[Player], turn: int, cards: int, rng: random.Random, inject: bool) -> None:
    pot = ante = 2
    for p in players:
        p.in_hand, p.current_bet = True, 0
        p.bankroll -= ante
        pot += ante
    _deal(rng, players, cards)
    started = log.emit(
        "hand_started", {"turn": turn, "pot": pot, "ante": ante, "players": [p.state(rng) for p in players]}
    )
    if inject and rng.random() < FAULT_RATE * 40:
        i = rng.randrange(len(players))
        started["payload"]["players"][i]["emotions"]["fear"] = 1.0 + rng.uniform(0.05, 0.6)
        log.fault(f"payload.players[{i}].emotions.fear", "less_than_equal")
    log.emit("blinds_posted", {"turn": turn, "amount": ante})
    _affect_phase(log, players, turn, rng, inject)
    pot = _betting_phase(log, players, turn, pot, rng, inject)
    _showdown(log, players, turn, pot, rng)
    log.emit("hand_ended", {"turn": turn, "players": [p.state(rng) for p in players]})
    log.emit(
        "turn_summary",
        {
            "turn": turn,
            # The real game writes `calls` as a float (`36.0`); the seed leaves it untyped.
            "token_stats": {
                "calls": float(len(players)),
                "avg_prompt": 2100.5,
                "avg_completion": 180.2,
                "avg_total": 2280.7,
                "p95_total": 3900.0,
                "required_context_capacity": 8192,
            },
            "token_stats_by_model": {p.model: {"calls": 1.0, "avg_total": 2280.7} for p in players},
            "context_warning": None,
        },
    )


def _affect_phase(log, players, turn, rng, inject) -> None:
    log.emit("phase_changed", {"turn": turn, "phase": "affect"})
    for p in players:
        log.emit(
            "thinking", {"turn": turn, "player_id": p.player_id, "status": "start", "stage": "affect", "model": p.model}
        )
        log.emit(
            "thinking",
            {
                "turn": turn,
                "player_id": p.player_id,
                "status": "end",
                "stage": "affect",
                "outcome": "ok",
                "summary": "Watch the table.",
            },
        )
        others = [o for o in players if o is not p]
        if rng.random() < 0.55 and others:
            _attack(log, p, rng.choice(others), rng.sample(others, k=min(len(others), rng.randint(0, 1))), turn, rng)
        else:
            _self_regulate(log, p, turn, rng)
    if rng.random() < 0.3:
        _chatter(log, players, turn, rng)


def _attack(log, lead, target, assistants, turn, rng) -> None:
    emotion = rng.choice(INTENTS)
    log.emit(
        "affect_intent",
        {
            "turn": turn,
            "player_id": lead.player_id,
            "intent": {
                "mode": "attack_team",
                "focus_spend": 1,
                "target_player_id": target.player_id,
                "lead_player_id": lead.player_id,
                "emotion": emotion,
                "summary": f"Needle {target.alias}.",
            },
        },
    )
    raw = rng.uniform(0.05, 0.45)
    applied = raw * rng.uniform(0.3, 1.0)
    target.emotions[emotion] = _clamp(target.emotions[emotion] + applied)
    target.emotions["confidence"] = _clamp(target.emotions["confidence"] - applied / 3)
    target.stress += applied
    log.emit(
        "affect_resolved",
        {
            "turn": turn,
            "mode": "attack_team",
            "lead_player_id": lead.player_id,
            "assistants": [a.player_id for a in assistants if a is not target],
            "target_player_id": target.player_id,
            "emotion": emotion,
            "focus_spent": 1,
            "team_power": round(rng.uniform(1, 3), 3),
            "attack_score": rng.uniform(0, 5),
            "defense_score": rng.uniform(0, 5),
            "raw_delta": raw,
            "applied_delta": applied,
            "stake_multiplier": 1.0,
            "target_emotions": dict(target.emotions),
        },
    )


def _self_regulate(log, p, turn, rng) -> None:
    deltas = {e: -p.emotions[e] * rng.uniform(0.1, 0.4) for e in EMOTIONS if e != "confidence"}
    for emotion, delta in deltas.items():
        p.emotions[emotion] = _clamp(p.emotions[emotion] + delta)
    p.emotions["confidence"] = _clamp(p.emotions["confidence"] + rng.uniform(0, 0.1))
    recovered = min(p.stress, rng.uniform(0, 0.3))
    p.stress -= recovered
    log.emit(
        "affect_resolved",
        {
            "turn": turn,
            "mode": "self_regulate",
            "player_id": p.player_id,
            "deltas": deltas,
            "stress_recovered": recovered,
            "target_emotions": dict(p.emotions),
        },
    )


def _chatter(log, players, turn, rng) -> None:
    log.emit("phase_changed", {"turn": turn, "phase": "discussion"})
    speaker, target = rng.sample(players, k=2)
    log.emit(
        "thinking",
        {"turn": turn, "player_id": speaker.player_id, "status": "start", "stage": "chatter", "model": speaker.model},
    )
    log.emit(
        "chatter_posted", {"turn": turn, "player_id": speaker.player_id, "text": f"Nice bluff, {target.alias}. Really."}
    )
    target.emotions["anger"] = _clamp(target.emotions["anger"] + rng.uniform(0, 0.2))
    log.emit(
        "chatter_evaluated",
        {
            "turn": turn,
            "player_id": speaker.player_id,
            "target_player_id": target.player_id,
            "target_emotions": dict(target.emotions),
        },
    )
    if rng.random() < 0.5:
        target.emotions["anger"] = _clamp(target.emotions["anger"] * 0.8)
        log.emit(
            "offturn_regulation_resolved",
            {"turn": turn, "player_id": target.player_id, "target_emotions": dict(target.emotions)},
        )


def _attack_plan(rng, target) -> dict:
    return {
        "kinetic_intent": rng.choice(["discard_pressure", "lockout", "combo_break", "tempo_swing", "forced_line"]),
        "emotional_intent": rng.choice(["fear", "anger", "shame", "tilt", "overconfidence", "paranoia"]),
        "manipulation_plan": rng.choice(
            ["threat_framing", "bait", "false_concession", "public_isolation", "status_challenge", "betrayal_cue"]
        ),
        "delivery_channel": rng.choice(["public", "private", "mixed"]),
        "target_player_id": target.player_id,
        "expected_behavior_shift": f"{target.alias} folds under pressure",
        "confidence": round(rng.random(), 2),
    }


def _betting_phase(log, players, turn, pot, rng, inject) -> int:
    log.emit("phase_changed", {"turn": turn, "phase": "betting"})
    high = 0
    for p in players:
        log.emit("thinking", {"turn": turn, "player_id": p.player_id, "status": "start", "model": p.model})
        if log.provider.random() < PROVIDER_FAILURE_RATE:
            high, pot = _provider_failure(log, p, turn, high, pot, rng)
            continue
        _provider_call(log, p, turn, rng)
        log.emit(
            "thinking",
            {
                "turn": turn,
                "player_id": p.player_id,
                "status": "end",
                "outcome": "ok",
                "summary": "Pot odds look fine.",
            },
        )
        kind = rng.choices(["fold", "check", "call", "raise"], weights=[2, 3, 4, 3 + 4 * p.emotions["tilt"] + 2])[0]
        target = rng.choice([o for o in players if o is not p])
        amount = rng.randint(2, 20) if kind == "raise" else 0
        action = {
            "player_id": p.player_id,
            "kind": kind,
            "payload": {"amount": amount} if amount else {},
            "reasoning_summary": f"{kind} feels right",
            "attack_plan": _attack_plan(rng, target) if kind == "raise" else None,
        }
        event = log.emit("action_submitted", {"turn": turn, "player_id": p.player_id, "action": action})
        if kind == "raise" and inject and rng.random() < FAULT_RATE * 15:
            _break_raise(log, event["payload"]["action"], rng)
        if kind == "fold":
            p.in_hand = False
        elif kind in ("call", "raise"):
            high = max(high, p.current_bet + amount)
        pot = _resolved(log, p, turn, kind, high, pot, rng, action["attack_plan"])
    return pot


def _resolved(log, p, turn, kind, high, pot, rng, attack_plan) -> int:
    """`action_resolved` for `p`'s `kind`, a call or a raise paid up to the high bet
    first. Returns the pot after it."""
    if kind in ("call", "raise"):
        paid = min(p.bankroll, high - p.current_bet)
        p.bankroll -= paid
        p.current_bet += paid
        pot += paid
    log.emit(
        "action_resolved",
        {
            "turn": turn,
            "player_id": p.player_id,
            "kind": kind,
            "pot": pot,
            "current_high_bet": high,
            "player_state": p.state(rng),
            "attack_plan": attack_plan,
        },
    )
    return pot


def _provider_failure(log, p, turn, high, pot, rng) -> tuple[int, int]:
    """A betting call that raised, as the real simulator writes it: `action_rejected`
    (provider_failure, the HTTP error as `detail`), no `provider_call`, then a forced
    `call` resolved as any action. Returns the high bet and the pot after it."""
    log.emit(
        "action_rejected",
        {
            "turn": turn,
            "player_id": p.player_id,
            "reason": "provider_failure",
            "detail": log.provider.choice(PROVIDER_ERRORS),
        },
    )
    log.emit("thinking", {"turn": turn, "player_id": p.player_id, "status": "end", "outcome": "provider_failure"})
    return high, _resolved(log, p, turn, "call", high, pot, rng, None)


def _break_raise(log: GameLog, action: dict, rng: random.Random) -> None:
    """An invalid raw raise, as logged by other tools or older game versions."""
    if rng.random() < 0.5:
        action["attack_plan"] = None
        log.fault("payload.action.attack_plan", "attack_plan_required")
    else:
        action["payload"]["amount"] = rng.choice([0, -5])
        log.fault("payload.action.payload.amount", "raise_amount_positive_int")


def _showdown(log, players, turn, pot, rng) -> None:
    log.emit("phase_changed", {"turn": turn, "phase": "showdown"})
    log.emit("community_revealed", {"turn": turn, "cards": [rng.choice(RANKS) + rng.choice(SUITS) for _ in range(3)]})
    contenders = [p for p in players if p.in_hand] or players[:1]
    winner = rng.choice(contenders)
    winner.bankroll += pot
    for p in players:
        p.emotions["confidence"] = _clamp(p.emotions["confidence"] + (0.15 if p is winner else -0.05))
        p.emotions["tilt"] = _clamp(p.emotions["tilt"] + (-0.1 if p is winner else rng.uniform(0, 0.12)))
    # Usually one contender pays a life for losing the showdown.
    others = [p for p in contenders if p is not winner]
    losers = [rng.choice(others)] if others and rng.random() < 0.5 else []
    log.emit(
        "showdown",
        {
            "turn": turn,
            "pot": pot,
            "winners": [winner.player_id],
            "life_losses": len(losers),
            "payouts": {winner.player_id: pot},
            "rankings": {
                p.player_id: {
                    "category": rng.choice(["pair", "two_pair", "flush", "high_card"]),
                    "score": [rng.randint(1, 14) for _ in range(3)],
                    "hand": list(p.hand),
                }
                for p in contenders
            },
        },
    )
    for p in players:
        if not p.in_hand:
            log.emit("fold_saved_life", {"turn": turn, "player_id": p.player_id})
    for p in losers:
        p.lives -= 1
        log.emit("life_lost", {"turn": turn, "player_id": p.player_id, "remaining_lives": p.lives})
        if p.lives == 0:
            log.emit("player_eliminated", {"turn": turn, "player_id": p.player_id, "remaining_lives": 0})


def _drop_envelope_key(log: GameLog, rng: random.Random) -> None:
    """One event that lost an envelope key (an old writer's bug)."""
    index = rng.randrange(2, len(log.lines) - 2)
    key = rng.choice(["ts", "game_id", "schema_version"])
    event = log.lines[index]
    if not isinstance(event, dict):
        raise ValueError(f"line {index + 1} of {log.game_id} is no event: only a crashed game's last line is cut")
    del event[key]
    log.faults.append({"locator": f"line {index + 1}", "field": key, "rule": "required_key"})


def _tournament(rng: random.Random, start: datetime, games: list[GameLog]) -> GameLog:
    stamp = start.strftime("%Y%m%dT%H%M%SZ")
    log = GameLog(f"tournament_{stamp}_{rng.getrandbits(24):06x}", start, rng)
    log.emit("tournament_started", {"tables": len(games), "rounds": 1})
    log.emit("round_started", {"round": 1})
    for number, game in enumerate(games, 1):
        log.emit("table_spawned", {"round": 1, "table": number, "game_id": game.game_id})
    for number, game in enumerate(games, 1):
        log.emit(
            "table_result",
            {"round": 1, "table": number, "game_id": game.game_id, "winner": rng.choice(["P1", "P2", "P3"])},
        )
    log.emit("round_ended", {"round": 1})
    log.emit("tournament_ended", {"winner": "P1"})
    return log


def generate(out: Path, scale: int, rng: random.Random) -> list[dict]:
    """Per unit of scale: one long 8-player game (2,000+ events), three shorter games
    (one crashed, one with the older game id style) and a tournament log over them."""
    out.mkdir(parents=True, exist_ok=True)
    start = datetime(2026, 2, 6, 9, 38, 54, tzinfo=UTC)
    entries: list[dict[str, Any]] = []
    for unit in range(scale):
        base = start + timedelta(days=unit)
        games = [play_game(rng, base, 8, 32)]
        for number in range(3):
            games.append(
                play_game(
                    rng,
                    base + timedelta(hours=number + 1),
                    rng.randint(4, 6),
                    rng.randint(8, 12),
                    old_style=number == 2,
                    crash=number == 0,
                )
            )
        for game in games:
            if rng.random() < 0.7:
                _drop_envelope_key(game, rng)
        for log in [*games, _tournament(rng, base, games[1:])]:
            path = out / f"{log.game_id}.events.jsonl"
            path.write_text(log.text())
            entries.append(
                {
                    "path": str(path),
                    "format": "damage",
                    "faults": sorted(log.faults, key=lambda f: int(f["locator"].split()[1])),
                }
            )
    return entries
