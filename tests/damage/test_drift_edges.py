"""Drift findings of Damage logs (`info`), through `workbench.ingest`: exact finding per kind
of drift, its first line and how many lines carry it (formats.md, damage section; seed 003)."""

import copy

from tests.damage.events import PAYLOADS, PLAYER, event

# formats.md: "Envelope keys: `schema_version`, `type`, `game_id`, `ts`, `payload`."
ENVELOPE = "schema_version, type, game_id, ts, payload"


def info(file):
    return sorted((v.locator, v.severity, v.rule, v.field, v.message) for v in file.violations if v.severity == "info")


def test_undocumented_types_and_envelope_keys_count_every_line_that_carries_them(ingest_lines):
    # two chatter_posted lines fall into two groups (one has an extra envelope key): still one finding
    file, _ = ingest_lines(
        "g.events.jsonl",
        [
            event("game_started"),
            event("phase_changed", {"turn": 1}, type="chatter_posted"),
            event("phase_changed", {"turn": 1}, type="chatter_posted", mood="calm"),
            event("phase_changed", {"turn": 1}, type="blinds_posted"),
        ],
    )
    assert info(file) == [
        (
            "line 2",
            "info",
            "undocumented_event_type",
            "type",
            "event type 'chatter_posted' is not in the specification; kept (2 lines, first line 2)",
        ),
        (
            "line 3",
            "info",
            "undocumented_key",
            "mood",
            f"envelope key `mood` is not in the specification ({ENVELOPE}); kept in damage_events.extra "
            "(1 line, first line 3)",
        ),
        (
            "line 4",
            "info",
            "undocumented_event_type",
            "type",
            "event type 'blinds_posted' is not in the specification; kept (1 line, first line 4)",
        ),
    ]


def test_extra_payload_keys_are_found_at_every_depth_with_their_field_path(ingest_lines):
    players = copy.deepcopy(PAYLOADS["hand_started"])
    players["players"][0]["alias"] = "Ace"
    both = copy.deepcopy(players)
    both["players"][0]["avatar_id"] = "a7"
    showdown = copy.deepcopy(PAYLOADS["showdown"])
    showdown["rankings"]["P1"]["kicker"] = "K"
    call = copy.deepcopy(PAYLOADS["provider_call"])
    call["cost"] = 0.01
    call["usage"]["cached_tokens"] = 5
    file, _ = ingest_lines(
        "g.events.jsonl",
        [
            event("hand_started", players),
            event("showdown", showdown),
            event("provider_call", call),
            event("hand_started", both),
            event("hand_ended"),
        ],
    )

    def key(line, field, name, kind, count):
        return (
            f"line {line}",
            "info",
            "undocumented_key",
            field,
            f"key `{name}` of {kind} is not in the specification; kept ({count}, first line {line})",
        )

    assert info(file) == sorted(
        [
            key(1, "payload.players[].alias", "alias", "hand_started", "2 lines"),
            key(2, "payload.rankings.<key>.kicker", "kicker", "showdown", "1 line"),
            key(3, "payload.cost", "cost", "provider_call", "1 line"),
            key(3, "payload.usage.cached_tokens", "cached_tokens", "provider_call", "1 line"),
            key(4, "payload.players[].avatar_id", "avatar_id", "hand_started", "1 line"),
        ]
    )


def test_a_list_where_an_object_is_expected_has_no_keys_to_report(ingest_lines):
    # player_state is one object in the seed; as a list its elements are not the emotions object
    payload = copy.deepcopy(PAYLOADS["action_resolved"])
    payload["player_state"] = [copy.deepcopy(PLAYER)]
    file, _ = ingest_lines("g.events.jsonl", [event("action_resolved", payload)])
    assert info(file) == []


def test_an_element_that_is_not_an_object_hides_no_key_of_the_others(ingest_lines):
    # players[1] is a number (pydantic's error); players[0] still carries `alias`, and
    # players[0].emotions `calm`, which the seed does not list
    payload = copy.deepcopy(PAYLOADS["hand_started"])
    payload["players"][0]["alias"] = "Ace"
    payload["players"][0]["emotions"]["calm"] = 0.5
    payload["players"].append(7)
    file, _ = ingest_lines("g.events.jsonl", [event("hand_started", payload)])
    assert [(v.field, v.message) for v in file.violations if v.severity == "info"] == [
        (
            "payload.players[].alias",
            "key `alias` of hand_started is not in the specification; kept (1 line, first line 1)",
        ),
        (
            "payload.players[].emotions.calm",
            "key `calm` of hand_started is not in the specification; kept (1 line, first line 1)",
        ),
    ]
    assert [v.field for v in file.violations if v.severity == "error"] == ["payload.players[1]"]


def test_enum_values_the_real_game_adds_are_reported_per_type_and_key(ingest_lines):
    # formats.md: `phase` also takes `discussion`; `thinking.stage` also takes `chatter_eval`, ...
    thinking = {**PAYLOADS["thinking"], "stage": "chatter_eval"}
    file, _ = ingest_lines(
        "g.events.jsonl",
        [
            event("phase_changed", {"turn": 1, "phase": "discussion"}),
            event("thinking", thinking),
            event("thinking"),
            event("phase_changed", {"turn": 1, "phase": "betting"}),
            # `stage` is not a key of phase_changed: an extra key, not a value of thinking.stage
            event("phase_changed", {"turn": 1, "phase": "affect", "stage": "chatter"}),
            event("thinking", {**thinking, "stage": "avatar"}),
            event("phase_changed", {"turn": 2, "phase": "discussion"}),
        ],
    )
    assert info(file) == [
        (
            "line 1",
            "info",
            "undocumented_value",
            "payload.phase",
            "phase_changed.phase = 'discussion' is not in the specification's enum; kept (2 lines, first line 1)",
        ),
        (
            "line 2",
            "info",
            "undocumented_value",
            "payload.stage",
            "thinking.stage = 'chatter_eval' is not in the specification's enum; kept (1 line, first line 2)",
        ),
        (
            "line 5",
            "info",
            "undocumented_key",
            "payload.stage",
            "key `stage` of phase_changed is not in the specification; kept (1 line, first line 5)",
        ),
        (
            "line 6",
            "info",
            "undocumented_value",
            "payload.stage",
            "thinking.stage = 'avatar' is not in the specification's enum; kept (1 line, first line 6)",
        ),
    ]


def test_findings_of_one_line_are_listed_by_kind_then_key_whoever_read_them(tmp_path):
    # One line with an undocumented type and two envelope keys: by kind (the type first,
    # as the tally lists them), then key; the same after the log grew, whose tally was
    # read back from the database, as in a one-shot ingest.
    import json

    import workbench

    lines = [
        event("game_started"),
        event("phase_changed", {"turn": 1}, type="chatter_posted", zeta=1, alpha=2),
        event("phase_changed", {"turn": 2}),
        event("phase_changed", {"turn": 3}, beta=3),
    ]
    grown, whole = tmp_path / "grown" / "g.events.jsonl", tmp_path / "whole" / "g.events.jsonl"
    for path in (grown, whole):
        path.parent.mkdir()
        path.write_text("".join(json.dumps(line) + "\n" for line in lines[: 3 if path is grown else None]))
        workbench.ingest([path], db=path.parent / "w.duckdb")
    with grown.open("a") as log:
        log.write(json.dumps(lines[3]) + "\n")
    reports = [workbench.ingest([path], db=path.parent / "w.duckdb").files[0] for path in (grown, whole)]
    assert [r.status for r in reports] == ["appended", "unchanged"]
    listed = [[(v.locator, v.rule, v.field) for v in r.violations if v.severity == "info"] for r in reports]
    assert (
        listed[0]
        == listed[1]
        == [
            ("line 2", "undocumented_event_type", "type"),
            ("line 2", "undocumented_key", "alpha"),
            ("line 2", "undocumented_key", "zeta"),
            ("line 4", "undocumented_key", "beta"),
        ]
    )
