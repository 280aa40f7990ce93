"""Order-draft rules that mutation testing found unpinned: a field error keeps its exact
message when a rule across commands fails on the same draft, and an unknown key's
message names where it is.

Bounds are transcribed from seed 004 (004_b2c06fa726c29d99.txt): "`roe` optional; if
present must be 0-10", "Set `tax-rate <0-100>`", "1 command per fleet per turn".
"""

import copy

import pytest

from tests.ec4x.conftest import VALID_DRAFT


def _violations(draft_violations, record):
    found, _ = draft_violations(record)
    return {(v.rule, v.field): v.message for v in found}


@pytest.mark.parametrize(
    "field, path, value, message",
    [
        ("fleetCommands[0].roe", ("fleetCommands", 0, "roe"), 11, "Input should be less than or equal to 10; found 11"),
        (
            "fleetCommands[0].roe",
            ("fleetCommands", 0, "roe"),
            -1,
            "Input should be greater than or equal to 0; found -1",
        ),
        (
            "colonyManagement[0].taxRate",
            ("colonyManagement", 0, "taxRate"),
            101,
            "Input should be less than or equal to 100; found 101",
        ),
        # a custom rule's message (it already says what was found: nothing is appended)
        (
            "buildCommands[0].shipClass",
            ("buildCommands", 0, "shipClass"),
            "zzzz",
            "`shipClass` must be one of corvette|frigate|destroyer|light-cruiser|cruiser|battlecruiser|battleship|"
            "dreadnought|super-dreadnought|carrier|super-carrier|raider|scout|etac|troop-transport; found 'zzzz'",
        ),
    ],
)
def test_a_field_error_reads_the_same_next_to_a_repeated_fleet(draft_violations, field, path, value, message):
    draft = copy.deepcopy(VALID_DRAFT)
    section, index, key = path
    draft[section][index][key] = value
    alone = _violations(draft_violations, draft)
    assert [m for (_, f), m in alone.items() if f == field] == [message]

    # the same draft with a second command for fleet 101: the cross-command rule fails too
    draft["fleetCommands"].append({"fleetId": 101, "commandType": "hold"})
    both = _violations(draft_violations, draft)
    assert [m for (_, f), m in both.items() if f == field] == [message]
    assert ("one_command_per_fleet", "fleetCommands[1].fleetId") in both
    assert set(both) - {("one_command_per_fleet", "fleetCommands[1].fleetId")} == set(alone)


def test_bounds_pass_on_the_inside(draft_violations):
    draft = copy.deepcopy(VALID_DRAFT)
    draft["fleetCommands"][0]["roe"] = 10
    draft["colonyManagement"][0]["taxRate"] = 100
    assert _violations(draft_violations, draft) == {}
    draft["fleetCommands"][0]["roe"] = 0
    draft["colonyManagement"][0]["taxRate"] = 0
    assert _violations(draft_violations, draft) == {}


@pytest.mark.parametrize(
    "where, place, expected",
    [
        ("top", None, "for the draft"),
        ("fleet", ("fleetCommands", 0), "for `fleetCommands[]`"),
        ("diplomacy", ("diplomaticCommand",), "for `diplomaticCommand`"),
    ],
)
def test_an_unknown_key_says_where_it_is(draft_violations, where, place, expected):
    draft = copy.deepcopy(VALID_DRAFT)
    target = draft
    for part in place or ():
        target = target[part]
    target["bogusKey"] = 1
    found = _violations(draft_violations, draft)
    field = (
        ".".join(
            f"{p}[{q}]" if isinstance(q, int) else p
            for p, q in zip(place, (*place[1:], None))
            if not isinstance(p, int)
        )
        if place
        else ""
    )
    field = f"{field}.bogusKey" if field else "bogusKey"
    message = found[("unknown_key", field)]
    assert f"key `bogusKey` is not in the seed's v1 contract {expected};" in message


def test_an_unknown_key_close_to_a_known_one_gets_a_hint(draft_violations):
    draft = copy.deepcopy(VALID_DRAFT)
    draft["fleetCommands"][0]["fleetIdd"] = 101
    message = _violations(draft_violations, draft)[("unknown_key", "fleetCommands[0].fleetIdd")]
    assert "did you mean `fleetId`?" in message


def test_an_unknown_key_far_from_every_known_one_gets_no_hint(draft_violations):
    draft = copy.deepcopy(VALID_DRAFT)
    draft["qqqq"] = 1
    message = _violations(draft_violations, draft)[("unknown_key", "qqqq")]
    assert message == (
        "key `qqqq` is not in the seed's v1 contract for the draft; the seed's compiler rejects "
        "unknown fields (the real compiler ignores them), so this is an error"
    )


@pytest.mark.parametrize("value", ["frigat", "zzzz"])
def test_an_unknown_ship_class_is_an_error_with_a_hint_only_when_close(draft_violations, value):
    draft = copy.deepcopy(VALID_DRAFT)
    draft["buildCommands"][0]["shipClass"] = value
    message = _violations(draft_violations, draft)[("enum_value", "buildCommands[0].shipClass")]
    assert message.startswith("`shipClass` must be one of corvette|frigate|destroyer|")
    assert message.endswith(f"found {value!r}; did you mean `frigate`?" if value == "frigat" else f"found {value!r}")


def _rules(draft_violations, record):
    found, drift = draft_violations(record)
    return ({(v.rule, v.field): v.message for v in found}, {(v.rule, v.field): v.message for v in drift})


def test_a_repeated_fleet_after_a_bad_fleet_id_is_still_found(draft_violations):
    # "### 2. Fleet Commands (1 per fleet per turn)"
    draft = copy.deepcopy(VALID_DRAFT)
    draft["fleetCommands"] = [
        {"fleetId": "x", "commandType": "hold"},
        {"fleetId": 5, "commandType": "hold"},
        {"fleetId": 5, "commandType": "hold"},
    ]
    errors, _ = _rules(draft_violations, draft)
    assert set(errors) == {
        ("int_type", "fleetCommands[0].fleetId"),
        ("one_command_per_fleet", "fleetCommands[2].fleetId"),
    }
    assert errors[("one_command_per_fleet", "fleetCommands[2].fleetId")] == (
        "fleet 5 already has a command this turn (the seed allows 1 per fleet per turn)"
    )


@pytest.mark.parametrize("operations, flagged", [(3, False), (4, True)])
def test_espionage_limit_after_a_bad_house_id_on_both_sides(draft_violations, operations, flagged):
    # "issue up to 3 operations per target house"
    draft = copy.deepcopy(VALID_DRAFT)
    draft["espionageActions"] = [{"operation": "tech-theft", "targetHouseId": "x"}] + [
        {"operation": "tech-theft", "targetHouseId": 2}
    ] * operations
    errors, _ = _rules(draft_violations, draft)
    over = {k: m for k, m in errors.items() if k[0] == "espionage_ops_per_house"}
    if flagged:
        assert list(over) == [("espionage_ops_per_house", "espionageActions[4].targetHouseId")]
        assert over[("espionage_ops_per_house", "espionageActions[4].targetHouseId")].startswith(
            "operation 4 against house 2; the seed allows up to 3 per target house"
        )
    else:
        assert over == {}


def test_a_required_zero_turn_field_says_what_was_found(draft_violations):
    draft = copy.deepcopy(VALID_DRAFT)
    draft["zeroTurnCommands"] = [
        {"commandType": "detach-ships", "sourceFleetId": 101, "shipIndices": []},
        {"commandType": "reactivate"},
    ]
    errors, _ = _rules(draft_violations, draft)
    assert errors == {
        (
            "zero_turn_field_required",
            "zeroTurnCommands[0].shipIndices",
        ): "`detach-ships` needs `shipIndices`; found an empty list",
        (
            "zero_turn_field_required",
            "zeroTurnCommands[1].sourceFleetId",
        ): "`reactivate` needs `sourceFleetId`; found null or no such key",
    }


def test_two_kinds_of_drift_on_one_fleet_command_are_both_reported(draft_violations):
    # `Patrol`: a spelling the real compiler normalises; patrol without a system: the real
    # compiler wants one. Both are drift (info), neither an error.
    draft = copy.deepcopy(VALID_DRAFT)
    draft["fleetCommands"] = [{"fleetId": 101, "commandType": "Patrol"}]
    errors, drift = _rules(draft_violations, draft)
    assert errors == {}
    assert set(drift) == {
        ("enum_spelling", "fleetCommands[0].commandType"),
        ("compiler_requires_field", "fleetCommands[0].targetSystemId"),
    }


def test_a_draft_with_drift_validates_without_a_context():
    from workbench.ec4x.orders import OrderDraft

    draft = copy.deepcopy(VALID_DRAFT)
    draft["fleetCommands"][0]["commandType"] = "MOVE"
    assert OrderDraft.model_validate(draft).fleetCommands[0].commandType == "move"
