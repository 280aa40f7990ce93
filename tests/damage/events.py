"""Valid Damage events to start from; tests break one thing at a time."""

import copy

EMOTIONS = {"fear": 0.1, "anger": -0.2, "shame": 0.0, "confidence": 0.4, "tilt": 0.05}
PLAYER = {
    "player_id": "P1",
    "lives": 3,
    "bankroll": 100,
    "current_bet": 0,
    "in_hand": True,
    "hand": ["AS", "KD", "7H", "7C", "2S"],
    "will": 3,
    "skill_affect": 2,
    "focus": 2.5,
    "stress": 0.1,
    "resistance_bonus": 0.0,
    "tempo": 1,
    "exposure": 0,
    "emotions": EMOTIONS,
}
ATTACK_PLAN = {
    "kinetic_intent": "tempo_swing",
    "emotional_intent": "tilt",
    "manipulation_plan": "bait",
    "delivery_channel": "public",
    "target_player_id": "P2",
    "expected_behavior_shift": "P2 calls wide",
    "confidence": 0.7,
}
PAYLOADS = {
    "game_started": {"players": 2, "turns": 5, "primary_model": "m1", "fallback_models": ["m2"], "seed": 1},
    "hand_started": {"turn": 1, "pot": 4, "ante": 2, "players": [PLAYER]},
    "phase_changed": {"turn": 1, "phase": "affect"},
    "thinking": {"turn": 1, "player_id": "P1", "status": "start", "stage": "affect", "model": "m1"},
    "affect_intent": {
        "turn": 1,
        "player_id": "P1",
        "intent": {
            "mode": "attack_team",
            "focus_spend": 1,
            "target_player_id": "P2",
            "lead_player_id": "P1",
            "emotion": "fear",
            "summary": "press",
        },
    },
    "affect_resolved": {
        "turn": 1,
        "mode": "attack_team",
        "lead_player_id": "P1",
        "target_player_id": "P2",
        "emotion": "fear",
        "raw_delta": 0.3,
        "applied_delta": 0.2,
        "target_emotions": {**EMOTIONS, "fear": 0.3},
    },
    "provider_call": {
        "turn": 1,
        "player_id": "P1",
        "requested_model": "m1",
        "resolved_model": "m1",
        "latency_ms": 812.5,
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        "max_output_tokens": 256,
    },
    "action_submitted": {
        "turn": 1,
        "player_id": "P1",
        "action": {
            "player_id": "P1",
            "kind": "raise",
            "payload": {"amount": 10},
            "reasoning_summary": "value",
            "attack_plan": ATTACK_PLAN,
        },
    },
    "action_resolved": {
        "turn": 1,
        "player_id": "P1",
        "kind": "raise",
        "pot": 14,
        "current_high_bet": 10,
        "player_state": PLAYER,
        "attack_plan": ATTACK_PLAN,
    },
    "fold_saved_life": {"turn": 1, "player_id": "P2"},
    "life_lost": {"turn": 1, "player_id": "P2", "remaining_lives": 2},
    "player_eliminated": {"turn": 1, "player_id": "P2", "remaining_lives": 0},
    "showdown": {
        "turn": 1,
        "pot": 14,
        "winners": ["P1"],
        "life_losses": 1,
        "payouts": {"P1": 14},
        "rankings": {"P1": {"category": "pair", "score": [7, 14], "hand": ["7H", "7C"]}},
    },
    "hand_ended": {"turn": 1, "players": [PLAYER]},
    "turn_summary": {
        "turn": 1,
        "token_stats": {
            "calls": 2,
            "avg_prompt": 100.0,
            "avg_completion": 20.0,
            "avg_total": 120.0,
            "p95_total": 130.0,
            "required_context_capacity": 4096,
        },
        "token_stats_by_model": {"m1": {"calls": 2, "avg_total": 120.0}},
        "context_warning": None,
    },
    "game_ended": {"final_state": [PLAYER], "token_stats": {}, "token_stats_by_model": {}},
    "model_assignment_warning": {"player_id": "P1", "assigned_model": "m2", "reason": "quota"},
    "affect_unpaired_assist": {
        "turn": 1,
        "assistant_id": "P3",
        "target_player_id": "P2",
        "emotion": "fear",
        "outcome": "no lead",
    },
}


def event(kind: str, payload: dict | None = None, **envelope) -> dict:
    record = {
        "schema_version": "0.1",
        "type": kind,
        "game_id": "game_20260206T093854Z",
        "ts": "2026-02-06T09:38:54.123456+00:00",
        "payload": copy.deepcopy(PAYLOADS[kind] if payload is None else payload),
    }
    record.update(envelope)
    return record
