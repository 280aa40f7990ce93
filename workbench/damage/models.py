"""Seed 003 (Damage replay events) as pydantic models: the contract, declared once.

Models are strict (`"5"` is not an int) and ignore unknown keys: keys the real game adds
are found separately, in bulk, and reported as `info` (see `drift.py`). Values the
real game writes beyond the seed's enums are accepted here and listed in
`DRIFT_VALUES`, so they too are reported as `info`, never as errors.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal, Union

import msgspec
from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Json,
    Tag,
    TypeAdapter,
    create_model,
    model_validator,
)
from pydantic_core import PydanticCustomError

from workbench.schema import Int64, check_paths
from workbench.screen import Screen, ScreenAs
from workbench.validation import tag_by

Unit = Annotated[float, Field(ge=-1, le=1)]
Probability = Annotated[float, Field(ge=0, le=1)]
Card = Annotated[str, Field(pattern=r"^[2-9TJQKA][CDHS]$")]

# Values the real game writes that the seed's enums do not list (formats.md).
DRIFT_VALUES: dict[tuple[str, str], tuple[str, ...]] = {
    ("phase_changed", "phase"): ("discussion",),
    ("thinking", "stage"): ("chatter", "chatter_eval", "avatar", "backstory"),
}


class Model(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")


class EmotionState(Model):
    fear: Unit
    anger: Unit
    shame: Unit
    confidence: Unit
    tilt: Unit


# The five emotion keys in the seed's order; every table, query and search for emotion
# vectors takes them from here.
EMOTIONS = list(EmotionState.model_fields)


class PlayerPublicState(Model):
    player_id: str
    lives: Int64
    bankroll: Int64
    current_bet: Int64
    in_hand: bool
    hand: list[Card]
    will: Int64
    skill_affect: Int64
    focus: float
    stress: float
    resistance_bonus: float
    tempo: Int64
    exposure: Int64
    emotions: EmotionState


class AttackPlan(Model):
    kinetic_intent: Literal["discard_pressure", "lockout", "combo_break", "tempo_swing", "forced_line"]
    emotional_intent: Literal["fear", "anger", "shame", "tilt", "overconfidence", "paranoia"]
    manipulation_plan: Literal[
        "threat_framing", "bait", "false_concession", "public_isolation", "status_challenge", "betrayal_cue"
    ]
    delivery_channel: Literal["public", "private", "mixed"]
    target_player_id: str
    expected_behavior_shift: str
    confidence: Probability


class ActionEnvelope(Model):
    player_id: str
    kind: Literal["fold", "check", "call", "raise", "pass"]
    payload: dict[str, Any]
    reasoning_summary: str
    attack_plan: AttackPlan | None

    @model_validator(mode="after")
    def raise_rules(self):
        # Seed 003 section 4.2. `field` in the context is appended to the error's
        # location, so the violation points at the key that is wrong.
        rule = broken_raise_rule(self.kind, self.attack_plan, self.payload)
        if rule == "attack_plan_required":
            raise PydanticCustomError(
                rule, "a raise needs an attack_plan; found null or no attack_plan", {"field": "attack_plan"}
            )
        if rule == "raise_amount_positive_int":
            found = "no amount" if "amount" not in self.payload else f"{self.payload['amount']!r}"
            raise PydanticCustomError(
                rule,
                "a raise needs payload.amount to be an integer > 0; found {found}",
                {"field": "payload.amount", "found": found},
            )
        return self

    # The same rule for the screen, run on its decoded action (see workbench/screen.py).
    __screen_check__ = staticmethod(lambda action: broken_raise_rule(action.kind, action.attack_plan, action.payload))


def broken_raise_rule(kind: str, attack_plan, payload: dict) -> str | None:
    """The rule of section 4.2 an action breaks, if any: a raise needs an attack plan
    and an integer `payload.amount > 0`."""
    if kind != "raise":
        return None
    if attack_plan is None:
        return "attack_plan_required"
    amount = payload.get("amount")
    return None if type(amount) is int and amount > 0 else "raise_amount_positive_int"


def _utc(value: datetime) -> datetime:
    offset = value.utcoffset()
    if offset is None or offset.total_seconds() != 0:
        raise PydanticCustomError(
            "ts_not_utc", "expected a UTC timestamp; found offset {offset}", {"offset": str(offset)}
        )
    return value


# The screen reads a timestamp with msgspec's RFC 3339 parser, in C (every string it
# takes, pydantic's parser takes: tests/test_screen.py), and lets only UTC through. A
# pattern on the string cost more: msgspec calls Python's `re` per line.
# msgspec reads every zero offset (Z, +00:00, -00:00) as `timezone.utc` itself.
UTC_TIMESTAMP_SCREEN = ScreenAs(Annotated[datetime, msgspec.Meta(tz=True)], check=lambda ts: ts.tzinfo is UTC)


class Envelope(Model):
    schema_version: str
    type: str
    game_id: str
    ts: Annotated[AwareDatetime, AfterValidator(_utc), UTC_TIMESTAMP_SCREEN]
    payload: Any


# --- payloads of the documented event types (seed 003, section 5) -----------------


class GameStarted(Model):
    players: Int64
    turns: Int64
    primary_model: str
    fallback_models: list[str]
    seed: Int64


class HandStarted(Model):
    turn: Int64
    pot: Int64
    ante: Int64
    players: list[PlayerPublicState]


class PhaseChanged(Model):
    turn: Int64
    phase: Literal["affect", "betting", "showdown", "discussion"]


class Thinking(Model):
    turn: Int64
    player_id: str
    status: Literal["start", "end"]
    stage: Literal["affect", "chatter", "chatter_eval", "avatar", "backstory"] | None = None
    model: str | None = None
    outcome: str | None = None
    summary: str | None = None


class AffectIntentBody(Model):
    mode: str
    focus_spend: Int64 | float
    target_player_id: str | None
    lead_player_id: str | None
    emotion: str | None
    summary: str


class AffectIntent(Model):
    turn: Int64
    player_id: str
    intent: AffectIntentBody


class AffectResolved(Model):
    turn: Int64
    mode: Literal["guard", "attack_team", "assist_direct", "self_regulate"]
    player_id: str | None = None
    lead_player_id: str | None = None
    assistants: list[str] | None = None
    target_player_id: str | None = None
    emotion: str | None = None
    focus_spent: Int64 | None = None
    resistance_bonus: float | None = None
    team_power: float | None = None
    attack_score: float | None = None
    defense_score: float | None = None
    raw_delta: float | None = None
    applied_delta: float | None = None
    stake_multiplier: float | None = None
    target_emotions: EmotionState | None = None
    deltas: dict[str, float] | None = None
    stress_recovered: float | None = None


class Usage(Model):
    prompt_tokens: Int64
    completion_tokens: Int64
    total_tokens: Int64


class ProviderCall(Model):
    turn: Int64
    player_id: str
    requested_model: str
    resolved_model: str
    latency_ms: float
    usage: Usage
    max_output_tokens: Int64


class ActionSubmitted(Model):
    turn: Int64
    player_id: str
    action: ActionEnvelope


class ActionResolved(Model):
    turn: Int64
    player_id: str
    kind: str
    pot: Int64
    current_high_bet: Int64
    player_state: PlayerPublicState
    attack_plan: AttackPlan | None


class FoldSavedLife(Model):
    turn: Int64
    player_id: str


class LifeLost(Model):
    turn: Int64
    player_id: str
    remaining_lives: Int64


class Ranking(Model):
    category: str
    score: list[Int64]
    hand: list[str] | None = None


class Showdown(Model):
    turn: Int64
    pot: Int64
    winners: list[str]
    life_losses: Int64
    payouts: dict[str, Int64]
    rankings: dict[str, Ranking]


class HandEnded(Model):
    turn: Int64
    players: list[PlayerPublicState]


class TokenStats(Model):
    """Seed 003 section 5.14 lists these keys and gives their values no type, so any
    JSON value is valid (the real game writes `calls` as a float, `36.0`, and as the
    integer `0` before its first call)."""

    calls: Any
    avg_prompt: Any
    avg_completion: Any
    avg_total: Any
    p95_total: Any
    required_context_capacity: Any


class TokenStatsSubset(Model):
    """`token_stats_by_model` maps a model to "the same stats subset": an object with
    some of the keys of `TokenStats`, values untyped."""

    calls: Any = None
    avg_prompt: Any = None
    avg_completion: Any = None
    avg_total: Any = None
    p95_total: Any = None
    required_context_capacity: Any = None


class TurnSummary(Model):
    turn: Int64
    token_stats: TokenStats
    token_stats_by_model: dict[str, TokenStatsSubset]
    context_warning: str | None


class GameEnded(Model):
    final_state: list[PlayerPublicState]
    token_stats: dict[str, Any]
    token_stats_by_model: dict[str, Any]


class ModelAssignmentWarning(Model):
    player_id: str
    assigned_model: str
    reason: str


class AffectUnpairedAssist(Model):
    turn: Int64
    assistant_id: str
    target_player_id: str
    emotion: str
    outcome: str


class Undocumented(Model):
    """Any event type the seed does not list: kept, reported as `info`; an emotion
    vector it carries is still held to the [-1, 1] range."""

    target_emotions: EmotionState | None = None


PAYLOADS: dict[str, type[Model]] = {
    "game_started": GameStarted,
    "hand_started": HandStarted,
    "phase_changed": PhaseChanged,
    "thinking": Thinking,
    "affect_intent": AffectIntent,
    "affect_resolved": AffectResolved,
    "provider_call": ProviderCall,
    "action_submitted": ActionSubmitted,
    "action_resolved": ActionResolved,
    "fold_saved_life": FoldSavedLife,
    "life_lost": LifeLost,
    "player_eliminated": LifeLost,
    "showdown": Showdown,
    "hand_ended": HandEnded,
    "turn_summary": TurnSummary,
    "game_ended": GameEnded,
    "model_assignment_warning": ModelAssignmentWarning,
    "affect_unpaired_assist": AffectUnpairedAssist,
}
UNDOCUMENTED = "undocumented"


def _event_model(name: str, payload: type[Model]) -> type[Envelope]:
    return create_model(f"{name}_event", __base__=Envelope, payload=(payload, ...))


_EVENT_PAYLOADS: dict[str, type[Model]] = {**PAYLOADS, UNDOCUMENTED: Undocumented}
# A union of models made at run time, one per event type: `Any` to the type checker.
Event: Any = Annotated[
    Union[  # noqa: UP007  (a union made at run time)
        tuple(Annotated[_event_model(name, payload), Tag(name)] for name, payload in _EVENT_PAYLOADS.items())
    ],
    Discriminator(
        tag_by("type", PAYLOADS, UNDOCUMENTED),
        custom_error_type="not_an_object",
        custom_error_message="expected a JSON object",
    ),
]

# One call validates a whole batch of raw lines in pydantic-core.
LINES = TypeAdapter(list[Json[Event]])
# The fast screen over the same models (see workbench/screen.py). A record of an
# undocumented type is screened against the `Undocumented` model.
SCREEN = Screen(
    {name: _event_model(name, payload) for name, payload in PAYLOADS.items()},
    tag_field="type",
    fallback=_event_model(UNDOCUMENTED, Undocumented),
    fallback_accepts=lambda event: event.type not in PAYLOADS,
)


for _type, _key in DRIFT_VALUES:  # a renamed field must not silently end its drift note
    check_paths(PAYLOADS[_type], {_key: _key}, f"drift value of {_type}:")
