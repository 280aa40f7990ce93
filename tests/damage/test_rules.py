"""Each rule of seed 003 with a record that breaks it and one that passes."""

import copy

import pytest

import workbench
from tests.conftest import write_lines
from tests.damage.events import PAYLOADS, event


def findings(tmp_path, *records):
    report = workbench.validate([write_lines(tmp_path / "g.events.jsonl", records)])
    (file,) = report.files
    return file, [(v.locator, v.severity, v.rule, v.field) for v in file.violations]


def errors(tmp_path, *records):
    return [f for f in findings(tmp_path, *records)[1] if f[1] == "error"]


@pytest.mark.parametrize("kind", sorted(PAYLOADS))
def test_every_documented_event_passes(tmp_path, kind):
    file, found = findings(tmp_path, event(kind))
    assert found == [] and file.records == 1 and file.rejected == 0


def raise_action(**changes):
    record = event("action_submitted")
    record["payload"]["action"].update(changes)
    return record


def test_raise_without_attack_plan_is_located(tmp_path):
    assert errors(tmp_path, event("game_started"), raise_action(attack_plan=None)) == [
        ("line 2", "error", "attack_plan_required", "payload.action.attack_plan")
    ]


def test_raise_missing_attack_plan_key(tmp_path):
    record = raise_action()
    del record["payload"]["action"]["attack_plan"]
    assert ("line 1", "error", "required_key", "payload.action.attack_plan") in errors(tmp_path, record)


@pytest.mark.parametrize("amount", [0, -3, 2.5, "10", True, None])
def test_raise_amount_must_be_positive_int(tmp_path, amount):
    assert errors(tmp_path, raise_action(payload={"amount": amount})) == [
        ("line 1", "error", "raise_amount_positive_int", "payload.action.payload.amount")
    ]


def test_raise_amount_missing(tmp_path):
    file, found = findings(tmp_path, raise_action(payload={}))
    assert found == [("line 1", "error", "raise_amount_positive_int", "payload.action.payload.amount")]
    assert "found no amount" in file.violations[0].message


@pytest.mark.parametrize("kind", ["fold", "check", "call", "pass"])
def test_other_actions_need_no_plan_or_amount(tmp_path, kind):
    assert errors(tmp_path, raise_action(kind=kind, payload={}, attack_plan=None)) == []


def test_unknown_action_kind(tmp_path):
    assert errors(tmp_path, raise_action(kind="bet")) == [("line 1", "error", "enum_value", "payload.action.kind")]


@pytest.mark.parametrize(
    "field,value,rule",
    [
        ("kinetic_intent", "smash", "enum_value"),
        ("emotional_intent", "joy", "enum_value"),
        ("manipulation_plan", "flattery", "enum_value"),
        ("delivery_channel", "carrier_pigeon", "enum_value"),
        ("confidence", 1.5, "less_than_equal"),
        ("confidence", -0.1, "greater_than_equal"),
        ("target_player_id", 3, "string_type"),
    ],
)
def test_attack_plan_fields(tmp_path, field, value, rule):
    record = raise_action()
    record["payload"]["action"]["attack_plan"][field] = value
    assert errors(tmp_path, record) == [("line 1", "error", rule, f"payload.action.attack_plan.{field}")]


@pytest.mark.parametrize("emotion", ["fear", "anger", "shame", "confidence", "tilt"])
@pytest.mark.parametrize("value,rule", [(1.01, "less_than_equal"), (-1.5, "greater_than_equal")])
def test_emotions_stay_in_unit_range(tmp_path, emotion, value, rule):
    record = event("hand_started")
    record["payload"]["players"][0]["emotions"][emotion] = value
    assert errors(tmp_path, record) == [("line 1", "error", rule, f"payload.players[0].emotions.{emotion}")]


def test_emotions_at_the_bounds_pass(tmp_path):
    record = event("hand_started")
    record["payload"]["players"][0]["emotions"] = dict.fromkeys(["fear", "anger", "shame", "confidence"], 1.0) | {
        "tilt": -1.0
    }
    assert errors(tmp_path, record) == []


def test_strict_types(tmp_path):
    record = event("hand_started")
    record["payload"]["turn"] = "1"
    record["payload"]["players"][0]["in_hand"] = "yes"
    assert errors(tmp_path, record) == [
        ("line 1", "error", "int_type", "payload.turn"),
        ("line 1", "error", "bool_type", "payload.players[0].in_hand"),
    ]


def test_card_codes(tmp_path):
    record = event("hand_started")
    record["payload"]["players"][0]["hand"] = ["AS", "1X"]
    assert errors(tmp_path, record) == [("line 1", "error", "string_pattern_mismatch", "payload.players[0].hand[1]")]


@pytest.mark.parametrize("key", ["schema_version", "type", "game_id", "ts", "payload"])
def test_missing_envelope_key(tmp_path, key):
    record = event("phase_changed")
    del record[key]
    file, found = findings(tmp_path, record)
    assert ("line 1", "error", "required_key", key) in found
    assert file.records == 1  # kept as a record, with its violation


def test_ts_must_be_utc(tmp_path):
    file, found = findings(
        tmp_path,
        event("phase_changed", ts="2026-02-06T11:38:54+02:00"),
        event("phase_changed", ts="2026-02-06T09:38:54+00:00"),
    )
    assert found == [("line 1", "error", "ts_not_utc", "ts")]


def test_ts_must_be_a_timestamp(tmp_path):
    assert errors(tmp_path, event("phase_changed", ts="yesterday")) == [("line 1", "error", "datetime_parsing", "ts")]


def test_schema_version_any_string(tmp_path):
    assert (
        errors(tmp_path, event("phase_changed", schema_version="0.1"), event("phase_changed", schema_version="0.2"))
        == []
    )


def test_affect_resolved_mode_enum(tmp_path):
    assert errors(tmp_path, event("affect_resolved", {"turn": 1, "mode": "hypnosis"})) == [
        ("line 1", "error", "enum_value", "payload.mode")
    ]


def test_provider_call_usage_required(tmp_path):
    payload = copy.deepcopy(PAYLOADS["provider_call"])
    del payload["usage"]["total_tokens"]
    assert errors(tmp_path, event("provider_call", payload)) == [
        ("line 1", "error", "required_key", "payload.usage.total_tokens")
    ]


def test_violation_messages_say_expected_and_found(tmp_path):
    record = event("hand_started")
    record["payload"]["players"][0]["emotions"]["tilt"] = 3
    file, _ = findings(tmp_path, record)
    (violation,) = file.violations
    assert "less than or equal to 1" in violation.message and "found 3" in violation.message


def test_undocumented_types_and_keys_are_info(tmp_path):
    chatter = event(
        "phase_changed",
        {"turn": 1, "target_player_id": "P1", "target_emotions": dict(PAYLOADS["affect_resolved"]["target_emotions"])},
        type="chatter_evaluated",
    )
    hand = event("hand_started")
    hand["payload"]["players"][0]["alias"] = "Ace"
    found = findings(
        tmp_path,
        chatter,
        hand,
        event("phase_changed", {"turn": 1, "phase": "discussion"}),
        event("thinking", {"turn": 1, "player_id": "P1", "status": "start", "stage": "chatter"}),
        event("phase_changed", extra_key=1),
    )[1]
    assert sorted(found) == sorted(
        [
            ("line 1", "info", "undocumented_event_type", "type"),
            ("line 2", "info", "undocumented_key", "payload.players[].alias"),
            ("line 3", "info", "undocumented_value", "payload.phase"),
            ("line 4", "info", "undocumented_value", "payload.stage"),
            ("line 5", "info", "undocumented_key", "extra_key"),
        ]
    )


def test_undocumented_event_emotions_are_still_checked(tmp_path):
    chatter = event(
        "phase_changed",
        {"target_emotions": {**PAYLOADS["affect_resolved"]["target_emotions"], "anger": 4}},
        type="chatter_evaluated",
    )
    assert errors(tmp_path, chatter) == [("line 1", "error", "less_than_equal", "payload.target_emotions.anger")]


def test_drift_findings_are_aggregated_per_file(tmp_path):
    records = [event("phase_changed", {"turn": t, "phase": "discussion"}) for t in range(1, 6)]
    file, found = findings(tmp_path, *records)
    assert found == [("line 1", "info", "undocumented_value", "payload.phase")]
    assert "5 lines, first line 1" in file.violations[0].message
