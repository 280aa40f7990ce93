"""Every rule of seed 004's v1 order draft, each with a failing and a passing record.

The expected values are transcribed below from seed 004's text (004_b2c06fa726c29d99.txt:
its prompt template and its v1 JSON contract), not taken from `workbench.ec4x.seed`, so a
wrong or missing entry in the validator's own lists makes a test fail.
"""

import re

import pytest

# --- seed 004, transcribed -----------------------------------------------------------

# "### 2. Fleet Commands", in the order the prompt lists them.
FLEET_COMMANDS = (
    "hold",
    "patrol",
    "guard-colony",
    "guard-starbase",
    "seek-home",
    "move",
    "rendezvous",  # Movement/Defensive
    "blockade",
    "bombard",
    "invade",
    "blitz",  # Offensive
    "view",
    "scout-system",
    "scout-colony",
    "hack-starbase",  # Recon/Intel
    "colonize",  # Expansion/Support
    "join-fleet",
    "reserve",
    "mothball",
    "salvage",  # Fleet Management
)
# The commands the prompt writes with a (SystemId) parameter: `move to=`, `rendezvous at=`,
# `<command> system=`. The v1 rules: "`targetSystemId` is required for system-target commands."
SYSTEM_TARGET_COMMANDS = (
    "move",
    "rendezvous",
    "blockade",
    "bombard",
    "invade",
    "blitz",
    "view",
    "scout-system",
    "scout-colony",
    "hack-starbase",
    "colonize",
)
# Written with no parameter at all (`join-fleet target=(FleetId)ID` is the other one).
UNTARGETED_COMMANDS = (
    "hold",
    "patrol",
    "guard-colony",
    "guard-starbase",
    "seek-home",
    "reserve",
    "mothball",
    "salvage",
)

# "### 3. Construction & Build Commands" and the v1 rules of buildCommands[].
BUILD_TYPES = ("ship", "facility", "ground", "industrial")
SHIP_CLASSES = (
    "corvette",
    "frigate",
    "destroyer",
    "light-cruiser",
    "cruiser",
    "battlecruiser",
    "battleship",
    "dreadnought",
    "super-dreadnought",
    "carrier",
    "super-carrier",
    "raider",
    "scout",
    "etac",
    "troop-transport",
)
FACILITY_CLASSES = ("spaceport", "shipyard", "drydock", "starbase")
GROUND_CLASSES = ("army", "marine", "ground-battery", "planetary-shield")

# The v1 rules of zeroTurnCommands[]: what each command requires.
ZERO_TURN_REQUIRES = {
    "reactivate": ("sourceFleetId",),
    "detach-ships": ("sourceFleetId", "shipIndices"),
    "transfer-ships": ("sourceFleetId", "targetFleetId", "shipIndices"),
    "merge-fleets": ("sourceFleetId", "targetFleetId"),
    "load-cargo": ("sourceFleetId", "cargoType"),
    "unload-cargo": ("sourceFleetId",),
    "load-fighters": ("sourceFleetId", "carrierShipId", "fighterShipIds"),
    "unload-fighters": ("sourceFleetId", "carrierShipId", "fighterShipIds"),
    "transfer-fighters": ("sourceFleetId", "sourceCarrierShipId", "targetCarrierShipId", "fighterShipIds"),
}
# "Runtime supports these zero-turn commands: ..." (the last paragraph of the seed).
ZERO_TURN_COMMANDS = (
    "reactivate",
    "detach-ships",
    "transfer-ships",
    "merge-fleets",
    "load-cargo",
    "unload-cargo",
    "load-fighters",
    "unload-fighters",
    "transfer-fighters",
)
# `load-cargo fleet=(FleetId)ID type=<marines|colonists> quantity=N`
CARGO_TYPES = ("marines", "colonists")

# "### 4. Economy & R&D": "Tech fields: cst, wep, ter, eli, clk, sld, cic, stl, fc, sc, fd, aco."
TECH_FIELDS = ("cst", "wep", "ter", "eli", "clk", "sld", "cic", "stl", "fc", "sc", "fd", "aco")

# "### 5. Espionage": `target=(HouseId)ID` is targetHouseId, `system=(SystemId)ID` targetSystemId.
ESPIONAGE_REQUIRES = {
    "tech-theft": ("targetHouseId",),
    "sabotage-low": ("targetHouseId", "targetSystemId"),
    "sabotage-high": ("targetHouseId", "targetSystemId"),
    "assassination": ("targetHouseId",),
    "cyber-attack": ("targetHouseId", "targetSystemId"),
    "economic-manipulation": ("targetHouseId",),
    "psyops": ("targetHouseId",),
    "counter-intel-sweep": (),
    "intel-theft": ("targetHouseId",),
    "plant-disinfo": ("targetHouseId",),
}

# "### 6. Diplomacy": `to=<neutral|hostile>` is proposedState, `id=(ProposalId)ID` proposalId;
# targetHouseId is part of the contract's diplomaticCommand for every action.
DIPLOMATIC_REQUIRES = {
    "declare-hostile": (),
    "declare-enemy": (),
    "set-neutral": (),
    "propose-deescalate": ("proposedState",),
    "accept-proposal": ("proposalId",),
    "reject-proposal": ("proposalId",),
}
PROPOSED_STATES = ("neutral", "hostile")

# The real compiler's extra top-level lists (docs/formats/ec4x.md: "its `repairCommands` /
# `scrapCommands` are `info`"); the seed's prompt has "### 7. Repair & Scrap" but the
# v1 contract has no such field.
COMPILER_ONLY_LISTS = ("repairCommands", "scrapCommands")


def test_the_transcription_is_consistent():
    """Each fleet command is a system-target command, `join-fleet` or one without a target."""
    assert sorted(FLEET_COMMANDS) == sorted((*SYSTEM_TARGET_COMMANDS, *UNTARGETED_COMMANDS, "join-fleet"))
    assert tuple(ZERO_TURN_REQUIRES) == ZERO_TURN_COMMANDS
    assert len(FLEET_COMMANDS) == 20 and len(SHIP_CLASSES) == 15 and len(TECH_FIELDS) == 12
    assert len(ESPIONAGE_REQUIRES) == 10 and len(DIPLOMATIC_REQUIRES) == 6


def test_the_seeds_examples_assembled_are_valid(check_draft, draft):
    assert check_draft(draft) == (set(), set())


# --- top-level shape -----------------------------------------------------------------


@pytest.mark.parametrize("key", ["turn", "houseId"])
def test_turn_and_house_are_required(check_draft, draft, key):
    del draft[key]
    assert check_draft(draft)[0] == {("required_key", key)}


def test_command_lists_may_be_left_out(check_draft):
    assert check_draft({"turn": 1, "houseId": 2}) == (set(), set())


def test_a_command_list_must_be_a_list(check_draft, draft):
    draft["fleetCommands"] = None
    assert check_draft(draft)[0] == {("list_type", "fleetCommands")}


def test_type_mismatches_are_rejected(check_draft, draft):
    draft["houseId"] = "1"
    draft["fleetCommands"][0]["fleetId"] = "101"
    draft["colonyManagement"][0]["autoRepair"] = "true"
    draft["ebpInvestment"] = 1.5
    assert check_draft(draft)[0] == {
        ("int_type", "houseId"),
        ("int_type", "fleetCommands[0].fleetId"),
        ("bool_type", "colonyManagement[0].autoRepair"),
        ("int_type", "ebpInvestment"),
    }


@pytest.mark.parametrize(
    "path, key",
    [
        ((), "notes"),
        (("fleetCommands", 0), "priority"),
        (("diplomaticCommand",), "message"),
        (("researchAllocation", "fields"), "wpn"),
    ],
)
def test_unknown_fields_are_rejected_and_the_message_says_why(draft_violations, draft, path, key):
    target = draft
    for part in path:
        target = target[part]
    target[key] = 1
    found, _ = draft_violations(draft)
    (violation,) = found
    where = ".".join(p if isinstance(p, str) else f"[{p}]" for p in (*path, key)).replace(".[", "[")
    assert (violation.severity, violation.rule, violation.field) == ("error", "unknown_key", where)
    assert "the seed's compiler rejects unknown fields" in violation.message
    assert "the real compiler ignores them" in violation.message


def test_an_unknown_tech_field_gets_a_hint(draft_violations, draft):
    draft["researchAllocation"]["fields"] = {"wpn": 5}
    (violation,) = draft_violations(draft)[0]
    assert "did you mean `wep`?" in violation.message


# --- fleetCommands -------------------------------------------------------------------


def fleet(**values):
    return {"fleetId": 101, "commandType": "hold", **values}


@pytest.mark.parametrize("command", FLEET_COMMANDS)
def test_every_seed_fleet_command_is_known(check_draft, command):
    record = fleet(commandType=command, targetSystemId=22, targetFleetId=7)
    assert check_draft({"turn": 1, "houseId": 1, "fleetCommands": [record]})[0] == set()


def test_an_unknown_fleet_command_is_rejected(check_draft):
    errors, _ = check_draft({"turn": 1, "houseId": 1, "fleetCommands": [fleet(commandType="warp")]})
    assert errors == {("enum_value", "fleetCommands[0].commandType")}


def test_command_type_is_required(check_draft):
    errors, _ = check_draft({"turn": 1, "houseId": 1, "fleetCommands": [{"fleetId": 1}]})
    assert errors == {("required_key", "fleetCommands[0].commandType")}


@pytest.mark.parametrize("command", SYSTEM_TARGET_COMMANDS)
def test_system_target_commands_need_target_system(check_draft, command):
    failing = {"turn": 1, "houseId": 1, "fleetCommands": [fleet(commandType=command, targetSystemId=None)]}
    passing = {"turn": 1, "houseId": 1, "fleetCommands": [fleet(commandType=command, targetSystemId=4)]}
    assert check_draft(failing)[0] == {("target_system_required", "fleetCommands[0].targetSystemId")}
    assert check_draft(passing)[0] == set()


@pytest.mark.parametrize("command", UNTARGETED_COMMANDS)
def test_other_fleet_commands_need_no_target(check_draft, command):
    assert check_draft({"turn": 1, "houseId": 1, "fleetCommands": [fleet(commandType=command)]})[0] == set()


def test_join_fleet_needs_target_fleet(check_draft):
    failing = {"turn": 1, "houseId": 1, "fleetCommands": [fleet(commandType="join-fleet")]}
    passing = {"turn": 1, "houseId": 1, "fleetCommands": [fleet(commandType="join-fleet", targetFleetId=9)]}
    assert check_draft(failing)[0] == {("target_fleet_required", "fleetCommands[0].targetFleetId")}
    assert check_draft(passing)[0] == set()


@pytest.mark.parametrize(
    "roe, rule",
    [(-1, "greater_than_equal"), (11, "less_than_equal"), ("6", "int_type"), (0, None), (10, None), (None, None)],
)
def test_roe_is_0_to_10_when_present(check_draft, roe, rule):
    errors, _ = check_draft({"turn": 1, "houseId": 1, "fleetCommands": [fleet(roe=roe)]})
    assert errors == ({(rule, "fleetCommands[0].roe")} if rule else set())


def test_one_command_per_fleet_per_turn(check_draft):
    repeated = {"turn": 1, "houseId": 1, "fleetCommands": [fleet(), fleet(commandType="patrol"), fleet(fleetId=102)]}
    assert check_draft(repeated)[0] == {("one_command_per_fleet", "fleetCommands[1].fleetId")}
    repeated["fleetCommands"][1]["fleetId"] = 103
    assert check_draft(repeated)[0] == set()


def test_rules_across_commands_are_reported_next_to_item_errors(check_draft):
    record = {"turn": 1, "houseId": 1, "fleetCommands": [fleet(), fleet(roe=40)]}
    assert check_draft(record)[0] == {
        ("one_command_per_fleet", "fleetCommands[1].fleetId"),
        ("less_than_equal", "fleetCommands[1].roe"),
    }


# --- drift: the real compiler's spellings and extra lists ------------------------------


@pytest.mark.parametrize("spelling", ["JoinFleet", "join_fleet", "JOIN-FLEET"])
def test_compiler_spellings_are_drift_and_still_checked(draft_violations, spelling):
    record = {"turn": 1, "houseId": 1, "fleetCommands": [fleet(commandType=spelling)]}
    found, drift = draft_violations(record)
    # Normalised to join-fleet, so join-fleet's own rule applies.
    assert {(v.rule, v.field) for v in found} == {("target_fleet_required", "fleetCommands[0].targetFleetId")}
    (finding,) = drift
    assert (finding.severity, finding.rule, finding.field) == ("info", "enum_spelling", "fleetCommands[0].commandType")
    assert "normalises" in finding.message and "`join-fleet`" in finding.message


def test_class_spellings_are_drift(check_draft):
    record = {
        "turn": 1,
        "houseId": 1,
        "buildCommands": [{"colonyId": 1, "buildType": "Ship", "shipClass": "LightCruiser", "quantity": 1}],
    }
    assert check_draft(record) == (
        set(),
        {("enum_spelling", "buildCommands[0].buildType"), ("enum_spelling", "buildCommands[0].shipClass")},
    )


@pytest.mark.parametrize("key", COMPILER_ONLY_LISTS)
def test_repair_and_scrap_lists_are_drift_not_errors(draft_violations, draft, key):
    draft[key] = [{"colonyId": 12, "shipId": 5}]
    found, drift = draft_violations(draft)
    assert found == []
    (finding,) = drift
    assert (finding.severity, finding.rule, finding.field) == ("info", "compiler_only_field", key)


# --- buildCommands -------------------------------------------------------------------


def build(**values):
    return {"colonyId": 12, **values}


def test_build_type_is_one_of_four(check_draft):
    errors, _ = check_draft({"turn": 1, "houseId": 1, "buildCommands": [build(buildType="outpost", quantity=1)]})
    assert errors == {("enum_value", "buildCommands[0].buildType")}


def test_infrastructure_is_the_compilers_not_the_seeds(draft_violations):
    found, _ = draft_violations(
        {"turn": 1, "houseId": 1, "buildCommands": [build(buildType="infrastructure", quantity=1)]}
    )
    (violation,) = found
    assert (violation.severity, violation.rule, violation.field) == (
        "error",
        "compiler_only_value",
        "buildCommands[0].buildType",
    )
    assert "real compiler accepts it" in violation.message and "seed is the contract" in violation.message


@pytest.mark.parametrize(
    "build_type, class_field, classes",
    [
        ("ship", "shipClass", SHIP_CLASSES),
        ("facility", "facilityClass", FACILITY_CLASSES),
        ("ground", "groundClass", GROUND_CLASSES),
    ],
)
def test_each_build_type_needs_its_class_from_the_seeds_list(check_draft, build_type, class_field, classes):
    def errors(**values):
        return check_draft(
            {"turn": 1, "houseId": 1, "buildCommands": [build(buildType=build_type, quantity=2, **values)]}
        )[0]

    assert errors() == {("build_class_required", f"buildCommands[0].{class_field}")}
    assert errors(**{class_field: "titan"}) == {("enum_value", f"buildCommands[0].{class_field}")}
    for name in classes:
        assert errors(**{class_field: name}) == set()


@pytest.mark.parametrize(
    "build_type, values",
    [
        ("ship", {"shipClass": "scout"}),
        ("ground", {"groundClass": "army"}),
        ("industrial", {}),
    ],
)
def test_quantity_is_required_for_ship_ground_industrial(check_draft, build_type, values):
    failing = {"turn": 1, "houseId": 1, "buildCommands": [build(buildType=build_type, **values)]}
    assert check_draft(failing)[0] == {("quantity_required", "buildCommands[0].quantity")}
    failing["buildCommands"][0]["quantity"] = 3
    assert check_draft(failing)[0] == set()


def test_facility_quantity_defaults_to_one(check_draft):
    record = {"turn": 1, "houseId": 1, "buildCommands": [build(buildType="facility", facilityClass="shipyard")]}
    assert check_draft(record)[0] == set()


def test_a_fighter_ship_is_the_compilers_class(check_draft):
    record = {"turn": 1, "houseId": 1, "buildCommands": [build(buildType="ship", shipClass="fighter", quantity=1)]}
    assert check_draft(record)[0] == {("compiler_only_value", "buildCommands[0].shipClass")}


# --- zeroTurnCommands ----------------------------------------------------------------

ZERO_TURN_VALUES = {
    "sourceFleetId": 101,
    "targetFleetId": 102,
    "shipIndices": [0, 1],
    "fighterShipIds": [501],
    "carrierShipId": 301,
    "sourceCarrierShipId": 301,
    "targetCarrierShipId": 302,
    "cargoType": "marines",
}


@pytest.mark.parametrize("command, requires", ZERO_TURN_REQUIRES.items())
def test_each_zero_turn_command_needs_its_fields(check_draft, command, requires):
    complete = {"commandType": command, **{name: ZERO_TURN_VALUES[name] for name in requires}}
    assert check_draft({"turn": 1, "houseId": 1, "zeroTurnCommands": [complete]})[0] == set()
    for name in requires:
        empty = [] if isinstance(ZERO_TURN_VALUES[name], list) else None
        record = {"turn": 1, "houseId": 1, "zeroTurnCommands": [{**complete, name: empty}]}
        assert check_draft(record)[0] == {("zero_turn_field_required", f"zeroTurnCommands[0].{name}")}


def test_optional_quantity_of_cargo_commands(check_draft):
    record = {
        "turn": 1,
        "houseId": 1,
        "zeroTurnCommands": [
            {"commandType": "load-cargo", "sourceFleetId": 1, "cargoType": "marines", "quantity": 2},
            {"commandType": "unload-cargo", "sourceFleetId": 1, "quantity": 2},
        ],
    }
    assert check_draft(record)[0] == set()


@pytest.mark.parametrize(
    "field, value, rule",
    [
        ("commandType", "split-fleet", "enum_value"),
        ("cargoType", "fuel", "enum_value"),
        ("cargoType", "none", "compiler_only_value"),
        ("shipIndices", [0, "1"], "int_type"),
    ],
)
def test_zero_turn_values(check_draft, field, value, rule):
    command = {"commandType": "load-cargo", "sourceFleetId": 1, "cargoType": "marines", field: value}
    errors, _ = check_draft({"turn": 1, "houseId": 1, "zeroTurnCommands": [command]})
    suffix = "[1]" if field == "shipIndices" else ""
    assert errors == {(rule, f"zeroTurnCommands[0].{field}{suffix}")}


# --- population, terraform, colony management ---------------------------------------


@pytest.mark.parametrize("key", ["sourceColonyId", "destColonyId", "ptuAmount"])
def test_population_transfer_fields_are_required_ints(check_draft, key):
    complete = {"sourceColonyId": 12, "destColonyId": 13, "ptuAmount": 1}
    assert check_draft({"turn": 1, "houseId": 1, "populationTransfers": [complete]})[0] == set()
    missing = {k: v for k, v in complete.items() if k != key}
    assert check_draft({"turn": 1, "houseId": 1, "populationTransfers": [missing]})[0] == {
        ("required_key", f"populationTransfers[0].{key}")
    }
    assert check_draft({"turn": 1, "houseId": 1, "populationTransfers": [{**complete, key: "1"}]})[0] == {
        ("int_type", f"populationTransfers[0].{key}")
    }


def test_terraform_needs_a_colony(check_draft):
    assert check_draft({"turn": 1, "houseId": 1, "terraformCommands": [{}]})[0] == {
        ("required_key", "terraformCommands[0].colonyId")
    }
    assert check_draft({"turn": 1, "houseId": 1, "terraformCommands": [{"colonyId": 3}]})[0] == set()


@pytest.mark.parametrize("tax, rule", [(-1, "greater_than_equal"), (101, "less_than_equal"), (0, None), (100, None)])
def test_tax_rate_is_0_to_100(check_draft, tax, rule):
    errors, _ = check_draft({"turn": 1, "houseId": 1, "colonyManagement": [{"colonyId": 1, "taxRate": tax}]})
    assert errors == ({(rule, "colonyManagement[0].taxRate")} if rule else set())


@pytest.mark.parametrize("flag", ["autoRepair", "autoLoadMarines", "autoLoadFighters"])
def test_colony_flags_are_booleans(check_draft, flag):
    def errors(value):
        return check_draft({"turn": 1, "houseId": 1, "colonyManagement": [{"colonyId": 1, flag: value}]})[0]

    assert errors(1) == {("bool_type", f"colonyManagement[0].{flag}")}
    assert errors(True) == set()


# --- espionage -----------------------------------------------------------------------


@pytest.mark.parametrize("operation, requires", ESPIONAGE_REQUIRES.items())
def test_each_espionage_operation_names_its_targets(check_draft, operation, requires):
    complete = {"operation": operation, **{name: 7 for name in requires}}
    assert check_draft({"turn": 1, "houseId": 1, "espionageActions": [complete]})[0] == set()
    for name in requires:
        record = {"turn": 1, "houseId": 1, "espionageActions": [{**complete, name: None}]}
        assert check_draft(record)[0] == {("espionage_target_required", f"espionageActions[0].{name}")}


def test_unknown_operation(check_draft):
    errors, _ = check_draft({"turn": 1, "houseId": 1, "espionageActions": [{"operation": "bribe", "targetHouseId": 2}]})
    assert errors == {("enum_value", "espionageActions[0].operation")}


def test_up_to_three_operations_per_target_house(check_draft):
    ops = [{"operation": "psyops", "targetHouseId": 2}] * 3 + [{"operation": "psyops", "targetHouseId": 3}]
    assert check_draft({"turn": 1, "houseId": 1, "espionageActions": ops})[0] == set()
    ops.append({"operation": "intel-theft", "targetHouseId": 2})
    assert check_draft({"turn": 1, "houseId": 1, "espionageActions": ops})[0] == {
        ("espionage_ops_per_house", "espionageActions[4].targetHouseId")
    }


def test_investments_are_ints(check_draft):
    assert check_draft({"turn": 1, "houseId": 1, "ebpInvestment": 2, "cipInvestment": 1})[0] == set()
    assert check_draft({"turn": 1, "houseId": 1, "cipInvestment": "1"})[0] == {("int_type", "cipInvestment")}


# --- diplomacy -----------------------------------------------------------------------


@pytest.mark.parametrize("action, requires", DIPLOMATIC_REQUIRES.items())
def test_each_diplomatic_action_has_its_fields(check_draft, action, requires):
    values = {"proposalId": 4, "proposedState": "neutral"}
    complete = {"targetHouseId": 2, "action": action, **{name: values[name] for name in requires}}
    assert check_draft({"turn": 1, "houseId": 1, "diplomaticCommand": complete})[0] == set()
    for name in requires:
        record = {"turn": 1, "houseId": 1, "diplomaticCommand": {**complete, name: None}}
        assert check_draft(record)[0] == {("diplomatic_field_required", f"diplomaticCommand.{name}")}


def test_diplomacy_needs_a_target_house_and_known_values(check_draft):
    def errors(**values):
        command = {"targetHouseId": 2, "action": "propose-deescalate", "proposedState": "hostile", **values}
        return check_draft({"turn": 1, "houseId": 1, "diplomaticCommand": command})[0]

    assert errors() == set()
    assert errors(proposedState="allied") == {("enum_value", "diplomaticCommand.proposedState")}
    assert errors(action="declare-war") == {("enum_value", "diplomaticCommand.action")}
    assert errors(targetHouseId=None) == {("int_type", "diplomaticCommand.targetHouseId")}


# --- research ------------------------------------------------------------------------


def test_every_tech_field_abbreviation_is_known(check_draft):
    fields = {name: 1 for name in TECH_FIELDS}
    record = {"turn": 1, "houseId": 1, "researchAllocation": {"economic": 1, "science": 2, "fields": fields}}
    assert check_draft(record)[0] == set()


def test_research_points_are_ints(check_draft):
    record = {"turn": 1, "houseId": 1, "researchAllocation": {"economic": "20", "fields": {"ter": 1.5}}}
    assert check_draft(record)[0] == {
        ("int_type", "researchAllocation.economic"),
        ("int_type", "researchAllocation.fields.ter"),
    }


# --- the validator's vocabulary is exactly the seed's ----------------------------------


def draft_with(section, command):
    return {"turn": 1, "houseId": 1, section: command if section == "diplomaticCommand" else [command]}


# (section, a valid command, the field that holds the enum, the seed's values for it)
ENUMS = [
    ("fleetCommands", fleet(), "commandType", FLEET_COMMANDS),
    ("buildCommands", build(buildType="ship", shipClass="scout", quantity=1), "buildType", BUILD_TYPES),
    ("buildCommands", build(buildType="ship", shipClass="scout", quantity=1), "shipClass", SHIP_CLASSES),
    ("buildCommands", build(buildType="facility", facilityClass="shipyard"), "facilityClass", FACILITY_CLASSES),
    ("buildCommands", build(buildType="ground", groundClass="army", quantity=1), "groundClass", GROUND_CLASSES),
    ("zeroTurnCommands", {"commandType": "unload-cargo", "sourceFleetId": 1}, "commandType", ZERO_TURN_COMMANDS),
    (
        "zeroTurnCommands",
        {"commandType": "unload-cargo", "sourceFleetId": 1, "cargoType": "marines"},
        "cargoType",
        CARGO_TYPES,
    ),
    ("espionageActions", {"operation": "psyops", "targetHouseId": 2}, "operation", tuple(ESPIONAGE_REQUIRES)),
    ("diplomaticCommand", {"targetHouseId": 2, "action": "declare-enemy"}, "action", tuple(DIPLOMATIC_REQUIRES)),
    (
        "diplomaticCommand",
        {"targetHouseId": 2, "action": "propose-deescalate", "proposedState": "neutral"},
        "proposedState",
        PROPOSED_STATES,
    ),
]


@pytest.mark.parametrize("section, command, field, values", ENUMS, ids=[f"{e[0]}.{e[2]}" for e in ENUMS])
def test_an_unknown_value_is_told_exactly_the_seeds_values(draft_violations, section, command, field, values):
    """The message of an unknown value lists what the validator accepts: the seed's list,
    no entry more, none less, none misspelt."""
    found, _ = draft_violations(draft_with(section, {**command, field: "zzz-unknown"}))
    (violation,) = found
    where = f"{section}.{field}" if section == "diplomaticCommand" else f"{section}[0].{field}"
    assert (violation.rule, violation.field) == ("enum_value", where)
    listed = re.search(r"must be one of (\S+); found", violation.message).group(1).split("|")
    assert sorted(listed) == sorted(values)


@pytest.mark.parametrize("section, command, field, values", ENUMS, ids=[f"{e[0]}.{e[2]}" for e in ENUMS])
@pytest.mark.slow
def test_every_seed_value_is_accepted_as_written(draft_violations, section, command, field, values):
    """Known, and in the seed's own spelling (no `enum_spelling` drift); what else the
    command then needs is checked by the tests above."""
    where = f"{section}.{field}" if section == "diplomaticCommand" else f"{section}[0].{field}"
    for value in values:
        found, drift = draft_violations(draft_with(section, {**command, field: value}))
        assert [(v.rule, v.field) for v in found + drift if v.field == where] == [], value


# Near misses: one letter, a plural, a synonym, a neighbouring list's value. None of them
# is the seed's value in another spelling (case, `-` and `_` aside), so none is drift.
NEAR_MISSES = [
    (
        "fleetCommands",
        fleet(),
        "commandType",
        ["move-to", "colonise", "scout", "guard", "join", "seek", "salvag", "reactivate", "blockade-system"],
    ),
    (
        "buildCommands",
        build(buildType="ship", shipClass="scout", quantity=1),
        "buildType",
        ["ships", "facilities", "industry", "infantry"],
    ),
    (
        "buildCommands",
        build(buildType="ship", shipClass="scout", quantity=1),
        "shipClass",
        ["light-cruise", "destroyers", "super-dreadnaught", "troop-carrier", "battle-cruisers", "scouts"],
    ),
    (
        "buildCommands",
        build(buildType="facility", facilityClass="shipyard"),
        "facilityClass",
        ["shipyards", "starbases", "space-dock", "kastra"],
    ),
    (
        "buildCommands",
        build(buildType="ground", groundClass="army", quantity=1),
        "groundClass",
        ["marines", "armies", "planetary-shields", "ground-batteries"],
    ),
    (
        "zeroTurnCommands",
        {"commandType": "unload-cargo", "sourceFleetId": 1},
        "commandType",
        ["merge-fleet", "detach-ship", "load-fighter", "transfer-fleet", "activate"],
    ),
    (
        "espionageActions",
        {"operation": "psyops", "targetHouseId": 2},
        "operation",
        ["tech-steal", "sabotage", "assassinate", "psyop", "counter-intel", "disinfo"],
    ),
    (
        "diplomaticCommand",
        {"targetHouseId": 2, "action": "declare-enemy"},
        "action",
        ["propose-deescalation", "accept", "declare-neutral", "declare-war"],
    ),
    (
        "diplomaticCommand",
        {"targetHouseId": 2, "action": "propose-deescalate", "proposedState": "neutral"},
        "proposedState",
        ["enemy", "allied", "neutrals"],
    ),
]


@pytest.mark.parametrize("section, command, field, misses", NEAR_MISSES, ids=[f"{e[0]}.{e[2]}" for e in NEAR_MISSES])
def test_near_misses_of_the_seeds_values_are_rejected(check_draft, section, command, field, misses):
    where = f"{section}.{field}" if section == "diplomaticCommand" else f"{section}[0].{field}"
    for value in misses:
        errors, _ = check_draft(draft_with(section, {**command, field: value}))
        assert ("enum_value", where) in errors, value


@pytest.mark.parametrize("field", ["wpn", "cons", "wea", "shd", "elec", "cloak", "ecn", "sci", "acc", "f"])
def test_a_tech_field_the_seed_does_not_list_is_unknown(check_draft, field):
    record = {"turn": 1, "houseId": 1, "researchAllocation": {"economic": 1, "science": 2, "fields": {field: 1}}}
    assert check_draft(record)[0] == {("unknown_key", f"researchAllocation.fields.{field}")}


@pytest.mark.parametrize("field", TECH_FIELDS)
def test_each_tech_field_alone_is_known(check_draft, field):
    record = {"turn": 1, "houseId": 1, "researchAllocation": {"economic": 0, "science": 0, "fields": {field: 3}}}
    assert check_draft(record) == (set(), set())
