"""What the real EC4X programs do, recorded as tests of the workbench.

Every expected value here is written out by hand from the real program's code, tests or
docs (github.com/greenm01/ec4x at 9f931281a76e, March 2026), never computed by the
code under test nor taken from the workbench's own lists. The inputs are our own.
Where the real program and seed 004 disagree, the seed wins and the message says what
the real program does.

- `src/bot/order_schema.nim`: the strict draft parser (types, required keys, the
  repair/scrap lists it also reads).
- `src/bot/order_compiler.nim`: enum spellings it normalises (lower case, letters and
  digits only), values it knows beyond the seed, what it refuses.
- `src/bot/trace_log.nim`, `src/bot/runner.nim`: the trace lines, feature tags and how
  a failed turn is classified.
- `scripts/bot/evaluate_trace_quality.py`, `scripts/bot/summarize_trace_coverage.py`:
  the quality gates, their default thresholds and the twelve families.
"""

import pytest

BASE = {"turn": 9, "houseId": 1}


def draft(**lists):
    return {**BASE, **lists}


def zero_turn(command_type, **values):
    return {"commandType": command_type, "sourceFleetId": 22, **values}


# --- load-cargo: marines only ---------------------------------------------------------


def test_load_cargo_with_marines_is_valid(check_draft):
    # order_compiler.nim: load-cargo compiles when cargoType parses to Marines.
    record = draft(zeroTurnCommands=[zero_turn("load-cargo", cargoType="marines", quantity=5)])
    assert check_draft(record) == (set(), set())


def test_load_cargo_with_colonists_is_an_error_that_says_why(draft_violations):
    # Seed 004's v1 JSON rules: load-cargo needs `cargoType` (`marines`); the real compiler
    # parses "colonists" but refuses it for load-cargo ("supports only Marines"); the seed's
    # KDL reference writes `type=<marines|colonists>`.
    record = draft(zeroTurnCommands=[zero_turn("load-cargo", cargoType="colonists", quantity=2)])
    found, drift = draft_violations(record)
    assert [(v.severity, v.rule, v.field) for v in found] == [
        ("error", "load_cargo_marines_only", "zeroTurnCommands[0].cargoType")
    ]
    assert drift == []
    message = found[0].message
    assert "'colonists'" in message and "marines" in message
    assert "real compiler" in message and "only Marines" in message
    assert "KDL" in message and "colonists" in message


def test_load_cargo_colonists_is_found_at_its_own_index(check_draft):
    record = draft(
        zeroTurnCommands=[
            zero_turn("reactivate"),
            zero_turn("load-cargo", cargoType="marines"),
            zero_turn("load-cargo", cargoType="colonists"),
        ]
    )
    assert check_draft(record)[0] == {("load_cargo_marines_only", "zeroTurnCommands[2].cargoType")}


def test_load_cargo_colonists_in_another_spelling_is_still_refused(check_draft):
    # The compiler normalises "Colonists" to the same cargo class, then refuses it.
    errors, _ = check_draft(draft(zeroTurnCommands=[zero_turn("load-cargo", cargoType="Colonists")]))
    assert ("load_cargo_marines_only", "zeroTurnCommands[0].cargoType") in errors


def test_unload_cargo_may_name_colonists(check_draft):
    # order_compiler.nim: unload-cargo takes an optional cargoType of any known class.
    assert check_draft(draft(zeroTurnCommands=[zero_turn("unload-cargo", cargoType="colonists")])) == (set(), set())


def test_cargo_type_none_is_compiler_only(check_draft):
    # The compiler's cargo classes are marines, colonists and none; the seed names no `none`.
    errors, _ = check_draft(draft(zeroTurnCommands=[zero_turn("unload-cargo", cargoType="none")]))
    assert errors == {("compiler_only_value", "zeroTurnCommands[0].cargoType")}


# --- spellings the compiler normalises -------------------------------------------------


@pytest.mark.parametrize(
    "spelling, command",
    [
        ("JoinFleet", "join-fleet"),
        ("join_fleet", "join-fleet"),
        ("JOIN-FLEET", "join-fleet"),
        ("ScoutSystem", "scout-system"),
        ("seek_home", "seek-home"),
        ("HackStarbase", "hack-starbase"),
    ],
)
def test_fleet_command_spellings_are_drift(draft_violations, spelling, command):
    record = draft(fleetCommands=[{"fleetId": 41, "commandType": spelling, "targetSystemId": 22, "targetFleetId": 7}])
    found, drift = draft_violations(record)
    assert found == []
    assert [(v.severity, v.rule, v.field) for v in drift] == [("info", "enum_spelling", "fleetCommands[0].commandType")]
    assert f"`{command}`" in drift[0].message


@pytest.mark.parametrize(
    "spelling, operation",
    [
        ("psyops-campaign", "psyops"),
        ("plant-disinformation", "plant-disinfo"),
        ("TechTheft", "tech-theft"),
    ],
)
def test_espionage_spellings_and_aliases_are_drift(draft_violations, spelling, operation):
    record = draft(espionageActions=[{"operation": spelling, "targetHouseId": 2}])
    found, drift = draft_violations(record)
    assert found == []
    assert [(v.rule, v.field) for v in drift] == [("enum_spelling", "espionageActions[0].operation")]
    assert f"`{operation}`" in drift[0].message


@pytest.mark.parametrize(
    "field, value, build",
    [
        ("buildType", "infrastructure", {"buildType": "infrastructure", "quantity": 3}),
        ("shipClass", "fighter", {"buildType": "ship", "shipClass": "fighter", "quantity": 1}),
        ("shipClass", "planet-breaker", {"buildType": "ship", "shipClass": "planet-breaker", "quantity": 1}),
        ("shipClass", "PlanetBreaker", {"buildType": "ship", "shipClass": "PlanetBreaker", "quantity": 1}),
    ],
)
def test_values_only_the_compiler_knows_are_errors(draft_violations, field, value, build):
    found, _ = draft_violations(draft(buildCommands=[{"colonyId": 7, **build}]))
    assert [(v.rule, v.field) for v in found] == [("compiler_only_value", f"buildCommands[0].{field}")]
    assert "real compiler accepts it" in found[0].message


# --- what the compiler refuses, and the seed too ---------------------------------------


@pytest.mark.parametrize(
    "lists, expected",
    [
        # "Duplicate fleet command for fleet 5" (order_compiler_test: rejects duplicate fleet orders)
        (
            {
                "fleetCommands": [
                    {"fleetId": 5, "commandType": "hold"},
                    {"fleetId": 5, "commandType": "move", "targetSystemId": 11},
                ]
            },
            {("one_command_per_fleet", "fleetCommands[1].fleetId")},
        ),
        (
            {"fleetCommands": [{"fleetId": 5, "commandType": "move"}]},
            {("target_system_required", "fleetCommands[0].targetSystemId")},
        ),
        (
            {"fleetCommands": [{"fleetId": 5, "commandType": "join-fleet"}]},
            {("target_fleet_required", "fleetCommands[0].targetFleetId")},
        ),
        (
            {"fleetCommands": [{"fleetId": 5, "commandType": "hold", "roe": 11}]},
            {("less_than_equal", "fleetCommands[0].roe")},
        ),
        (
            {"fleetCommands": [{"fleetId": 5, "commandType": "hold", "roe": -1}]},
            {("greater_than_equal", "fleetCommands[0].roe")},
        ),
        ({"fleetCommands": [{"fleetId": 5, "commandType": "warp"}]}, {("enum_value", "fleetCommands[0].commandType")}),
        (
            {"buildCommands": [{"colonyId": 7, "buildType": "ship", "quantity": 1}]},
            {("build_class_required", "buildCommands[0].shipClass")},
        ),
        (
            {"buildCommands": [{"colonyId": 7, "buildType": "facility"}]},
            {("build_class_required", "buildCommands[0].facilityClass")},
        ),
        (
            {"buildCommands": [{"colonyId": 7, "buildType": "ground", "groundClass": "titan", "quantity": 1}]},
            {("enum_value", "buildCommands[0].groundClass")},
        ),
        (
            {"espionageActions": [{"operation": "sabotage-high", "targetHouseId": 2}]},
            {("espionage_target_required", "espionageActions[0].targetSystemId")},
        ),
        (
            {"espionageActions": [{"operation": "unknown-op", "targetHouseId": 2}]},
            {("enum_value", "espionageActions[0].operation")},
        ),
        (
            {"diplomaticCommand": {"targetHouseId": 2, "action": "accept-proposal"}},
            {("diplomatic_field_required", "diplomaticCommand.proposalId")},
        ),
        (
            {"diplomaticCommand": {"targetHouseId": 2, "action": "propose-deescalate"}},
            {("diplomatic_field_required", "diplomaticCommand.proposedState")},
        ),
        (
            {"diplomaticCommand": {"targetHouseId": 2, "action": "propose-deescalate", "proposedState": "allied"}},
            {("enum_value", "diplomaticCommand.proposedState")},
        ),
        ({"researchAllocation": {"fields": {"wpn": 5}}}, {("unknown_key", "researchAllocation.fields.wpn")}),
        (
            {"zeroTurnCommands": [{"commandType": "load-fighters", "sourceFleetId": 22}]},
            {
                ("zero_turn_field_required", "zeroTurnCommands[0].carrierShipId"),
                ("zero_turn_field_required", "zeroTurnCommands[0].fighterShipIds"),
            },
        ),
        (
            {"zeroTurnCommands": [{"commandType": "transfer-fighters", "sourceFleetId": 22, "fighterShipIds": [1002]}]},
            {
                ("zero_turn_field_required", "zeroTurnCommands[0].sourceCarrierShipId"),
                ("zero_turn_field_required", "zeroTurnCommands[0].targetCarrierShipId"),
            },
        ),
        (
            {"zeroTurnCommands": [{"commandType": "detach-ships", "sourceFleetId": 21, "shipIndices": []}]},
            {("zero_turn_field_required", "zeroTurnCommands[0].shipIndices")},
        ),
    ],
)
def test_what_the_compiler_refuses_is_an_error(check_draft, lists, expected):
    assert check_draft(draft(**lists))[0] == expected


@pytest.mark.parametrize(
    "lists",
    [
        # order_compiler tests: what compiles
        {
            "fleetCommands": [{"fleetId": 41, "commandType": "move", "targetSystemId": 22, "roe": 6}],
            "buildCommands": [{"colonyId": 7, "buildType": "ship", "shipClass": "destroyer", "quantity": 2}],
        },
        {
            "populationTransfers": [{"sourceColonyId": 7, "destColonyId": 8, "ptuAmount": 1}],
            "terraformCommands": [{"colonyId": 7}],
            "colonyManagement": [
                {"colonyId": 7, "taxRate": 22, "autoRepair": True, "autoLoadMarines": False, "autoLoadFighters": True}
            ],
            "ebpInvestment": 2,
            "cipInvestment": 1,
        },
        {
            "espionageActions": [{"operation": "sabotage-high", "targetHouseId": 2, "targetSystemId": 7}],
            "diplomaticCommand": {"targetHouseId": 2, "action": "propose-deescalate", "proposedState": "hostile"},
        },
        {
            "zeroTurnCommands": [
                {"commandType": "reactivate", "sourceFleetId": 20},
                {"commandType": "detach-ships", "sourceFleetId": 21, "shipIndices": [0, 2]},
                {"commandType": "load-cargo", "sourceFleetId": 22, "cargoType": "marines", "quantity": 5},
                {
                    "commandType": "load-fighters",
                    "sourceFleetId": 22,
                    "fighterShipIds": [1001, 1002],
                    "carrierShipId": 501,
                },
                {
                    "commandType": "transfer-fighters",
                    "sourceFleetId": 22,
                    "targetFleetId": 23,
                    "fighterShipIds": [1002],
                    "sourceCarrierShipId": 501,
                    "targetCarrierShipId": 502,
                },
            ]
        },
        {"researchAllocation": {"economic": 20, "science": 10, "fields": {"cst": 5, "fd": 1, "aco": 2}}},
    ],
)
def test_what_the_compiler_compiles_is_valid(check_draft, lists):
    assert check_draft(draft(**lists)) == (set(), set())


# --- where the compiler is stricter than the seed: the seed wins, drift says so --------


@pytest.mark.parametrize("command", ["patrol", "guard-colony", "guard-starbase"])
def test_guard_and_patrol_without_a_system_are_drift(draft_violations, command):
    # order_compiler.nim requires targetSystemId for patrol, guard-colony and guard-starbase;
    # the seed's prompt writes them with no parameter.
    found, drift = draft_violations(draft(fleetCommands=[{"fleetId": 9, "commandType": command}]))
    assert found == []
    assert [(v.severity, v.rule, v.field) for v in drift] == [
        ("info", "compiler_requires_field", "fleetCommands[0].targetSystemId")
    ]
    assert "real compiler refuses it" in drift[0].message


def test_guard_with_a_system_is_clean(check_draft):
    assert check_draft(draft(fleetCommands=[{"fleetId": 9, "commandType": "guard-colony", "targetSystemId": 4}])) == (
        set(),
        set(),
    )


def test_hold_needs_no_system_anywhere(check_draft):
    # order_compiler_test: {"fleetId": 9, "commandType": "hold"} compiles.
    assert check_draft(draft(fleetCommands=[{"fleetId": 9, "commandType": "hold"}])) == (set(), set())


def test_counter_intel_sweep_without_a_house_is_drift(draft_violations):
    # order_compiler.nim: every espionage operation needs targetHouseId; the seed writes
    # `counter-intel-sweep` bare.
    found, drift = draft_violations(draft(espionageActions=[{"operation": "counter-intel-sweep"}]))
    assert found == []
    assert [(v.rule, v.field) for v in drift] == [("compiler_requires_field", "espionageActions[0].targetHouseId")]
    assert draft_violations(draft(espionageActions=[{"operation": "counter-intel-sweep", "targetHouseId": 3}])) == (
        [],
        [],
    )


def test_a_build_without_quantity_says_what_the_compiler_would_do(draft_violations):
    # Seed: quantity required for ship builds; order_compiler.nim defaults it to 1.
    found, _ = draft_violations(draft(buildCommands=[{"colonyId": 7, "buildType": "ship", "shipClass": "scout"}]))
    assert [(v.rule, v.field) for v in found] == [("quantity_required", "buildCommands[0].quantity")]
    assert "real compiler would build 1" in found[0].message


def test_the_espionage_limit_says_the_compiler_does_not_count(draft_violations):
    ops = [{"operation": "psyops", "targetHouseId": 2}] * 4
    found, _ = draft_violations(draft(espionageActions=ops))
    assert [(v.rule, v.field) for v in found] == [("espionage_ops_per_house", "espionageActions[3].targetHouseId")]
    assert "real compiler does not count" in found[0].message


# --- the strict parser -----------------------------------------------------------------


def test_the_parsers_minimal_draft_is_valid(check_draft):
    # order_schema tests: "parses minimal valid draft"
    record = {
        "turn": 5,
        "houseId": 1,
        "fleetCommands": [{"fleetId": 100, "commandType": "move", "targetSystemId": 44, "roe": 6}],
    }
    assert check_draft(record) == (set(), set())


@pytest.mark.parametrize(
    "record, expected",
    [
        ({"turn": 5, "fleetCommands": []}, {("required_key", "houseId")}),
        (
            {
                "turn": 5,
                "houseId": 1,
                "fleetCommands": [{"fleetId": "A1", "commandType": "move", "targetSystemId": 44}],
            },
            {("int_type", "fleetCommands[0].fleetId")},
        ),
        ({"turn": 5, "houseId": 1, "fleetCommands": None}, {("list_type", "fleetCommands")}),
        ({"turn": 5, "houseId": 1, "diplomaticCommand": []}, {("model_type", "diplomaticCommand")}),
        (
            {
                "turn": 5,
                "houseId": 1,
                "zeroTurnCommands": [{"commandType": "detach-ships", "sourceFleetId": 1, "shipIndices": ["0"]}],
            },
            {("int_type", "zeroTurnCommands[0].shipIndices[0]")},
        ),
        # "researchAllocation.fields.<key> must be int": null is not an int either
        (
            {"turn": 5, "houseId": 1, "researchAllocation": {"fields": {"cst": None}}},
            {("int_type", "researchAllocation.fields.cst")},
        ),
        (
            {"turn": 5, "houseId": 1, "researchAllocation": {"fields": {"wep": 1.5}}},
            {("int_type", "researchAllocation.fields.wep")},
        ),
    ],
)
def test_what_the_parser_refuses_is_an_error(check_draft, record, expected):
    assert check_draft(record)[0] == expected


def test_nullable_values_the_parser_accepts(check_draft):
    # parseOptionalInt/parseOptionalString: a null is "not given".
    record = {
        "turn": 5,
        "houseId": 1,
        "ebpInvestment": None,
        "cipInvestment": None,
        "diplomaticCommand": None,
        "researchAllocation": {"economic": None, "science": None},
    }
    assert check_draft(record) == (set(), set())


def test_a_top_level_array_is_a_reject(ingest_lines):
    # "Top-level payload must be a JSON object"
    report, _ = ingest_lines("g.orders.jsonl", ["[]"])
    assert (report.records, report.rejected) == (0, 1)


def test_repair_and_scrap_lists_are_drift_in_the_parsers_shape(draft_violations):
    # order_schema tests: "parses repair and scrap arrays"
    record = {
        "turn": 6,
        "houseId": 1,
        "repairCommands": [{"colonyId": 7, "targetType": "ship", "targetId": 11, "priority": 2}],
        "scrapCommands": [{"colonyId": 7, "targetType": "facility", "targetId": 3, "acknowledgeQueueLoss": True}],
    }
    found, drift = draft_violations(record)
    assert found == []
    assert sorted((v.severity, v.rule, v.field) for v in drift) == [
        ("info", "compiler_only_field", "repairCommands"),
        ("info", "compiler_only_field", "scrapCommands"),
    ]


# --- feature families of a draft, as the bot tags its packet ---------------------------


@pytest.mark.parametrize(
    "lists, families",
    [
        # trace_log test: reactivate + hold + ebpInvestment 1 -> zero_turn, fleet, investment
        (
            {
                "zeroTurnCommands": [{"commandType": "reactivate", "sourceFleetId": 9}],
                "fleetCommands": [{"fleetId": 9, "commandType": "hold"}],
                "ebpInvestment": 1,
                "cipInvestment": 0,
            },
            ["zero_turn", "fleet", "investment"],
        ),
        # research only when something is allocated: economic > 0, science > 0 or any tech field
        ({"researchAllocation": {"economic": 0, "science": 0}}, []),
        ({"researchAllocation": {"economic": 0, "science": 0, "fields": {}}}, []),
        ({"researchAllocation": {"economic": 0, "fields": {"cst": 0}}}, ["research"]),
        ({"researchAllocation": {"science": 4}}, ["research"]),
        (
            {
                "diplomaticCommand": {"targetHouseId": 2, "action": "declare-enemy"},
                "repairCommands": [{"colonyId": 7, "targetType": "ship", "targetId": 11}],
                "scrapCommands": [{"colonyId": 7, "targetType": "starbase", "targetId": 3}],
                "populationTransfers": [{"sourceColonyId": 7, "destColonyId": 8, "ptuAmount": 1}],
                "terraformCommands": [{"colonyId": 7}],
                "colonyManagement": [{"colonyId": 7, "taxRate": 10}],
                "espionageActions": [{"operation": "psyops", "targetHouseId": 2}],
                "cipInvestment": 1,
            },
            [
                "repair",
                "scrap",
                "diplomacy",
                "population_transfer",
                "terraform",
                "colony_management",
                "espionage",
                "investment",
            ],
        ),
    ],
)
def test_draft_families_follow_the_bots_tags(ingest_lines, lists, families):
    _, con = ingest_lines("g.orders.jsonl", [draft(**lists)])
    assert con.execute("SELECT families FROM ec4x_orders").fetchone()[0] == families


# --- the bot's trace -------------------------------------------------------------------

# trace_log.nim writes timestamps as yyyy-MM-dd'T'HH:mm:sszzz (local time with offset)
SESSION = {
    "kind": "session_start",
    "timestamp": "2026-03-10T22:40:45-04:00",
    "gameId": "game-123",
    "model": "gpt-4o-mini",
    "relays": ["ws://localhost:8080"],
    "maxRetries": 2,
    "requestTimeoutSec": 45,
    "autoReconnect": True,
}


def failed(attempt, stage="schema_parse", details=("missing turn",)):
    # runner.nim: every failed attempt is written with outcome "retry"; ms and bytes are ints
    return {
        "attempt": attempt,
        "stage": stage,
        "details": list(details),
        "outcome": "retry",
        "llmRequestMs": 120,
        "llmResponseBytes": 560,
    }


def turn_line(number, ok, attempts, error_class, trace, tags=(), errors=()):
    return {
        "timestamp": "2026-03-10T22:41:02-04:00",
        "gameId": "game-123",
        "turn": number,
        "ok": ok,
        "errorClass": error_class,
        "attempts": attempts,
        "errors": list(errors),
        "featureTags": list(tags),
        "trace": trace,
    }


def test_the_session_line_the_bot_writes_is_valid(check_trace_line):
    assert check_trace_line(SESSION) == set()


def test_the_turn_lines_of_the_bots_own_test_are_valid(check_trace_line):
    # trace_log test: a failed turn 5 (2 attempts, one schema_parse entry, class "validation")
    # and a successful turn 6 tagged zero_turn, ztc_reactivate, fleet, investment.
    assert check_trace_line(turn_line(5, False, 2, "validation", [failed(1)], errors=["schema error"])) == set()
    assert (
        check_trace_line(
            turn_line(6, True, 1, "success", [], tags=["zero_turn", "ztc_reactivate", "fleet", "investment"])
        )
        == set()
    )


@pytest.mark.parametrize(
    "stage, error_class",
    [
        # runner.nim classifyRetryResult: the last failed attempt's stage decides
        ("submit", "transport"),
        ("llm_request", "llm_request"),
        ("schema_parse", "validation"),
        ("compile", "validation"),
    ],
)
def test_a_failed_turn_is_classified_by_its_last_stage(check_trace_line, stage, error_class):
    trace = [failed(1, "llm_request"), failed(2, "schema_parse"), failed(3, stage)]
    assert check_trace_line(turn_line(4, False, 3, error_class, trace)) == set()
    wrong = "unknown" if error_class != "unknown" else "validation"
    assert check_trace_line(turn_line(4, False, 3, wrong, trace)) == {("error_class_matches_stage", "errorClass")}


def test_a_failed_turn_without_trace_is_unknown(check_trace_line):
    assert check_trace_line(turn_line(4, False, 1, "unknown", [])) == set()
    assert check_trace_line(turn_line(4, False, 1, "validation", [])) == {("error_class_matches_stage", "errorClass")}


def test_a_failed_turn_carries_no_feature_tags(check_trace_line):
    # trace_log.nim: featureTags are the packet's tags when ok, else []
    line = turn_line(4, False, 1, "validation", [failed(1)], tags=["fleet"])
    assert check_trace_line(line) == {("feature_tags_on_failure", "featureTags")}


def test_no_more_trace_entries_than_failed_attempts(check_trace_line):
    # runner.nim: one entry per failed attempt, numbered from 1; a turn ok on attempt 2 failed once
    assert check_trace_line(turn_line(4, True, 2, "success", [failed(1)], tags=["fleet"])) == set()
    too_many = turn_line(4, True, 2, "success", [failed(1), failed(2)], tags=["fleet"])
    assert check_trace_line(too_many) == {("trace_entry_per_failed_attempt", "trace")}
    out_of_order = turn_line(4, False, 3, "validation", [failed(2), failed(1)])
    assert check_trace_line(out_of_order) == {
        ("trace_attempt_order", "trace[0].attempt"),
        ("trace_attempt_order", "trace[1].attempt"),
    }


@pytest.mark.parametrize(
    "tag",
    [
        # trace_log.nim packetFeatureTags: the nine zero-turn tags, each next to "zero_turn"
        "ztc_detach_ships",
        "ztc_transfer_ships",
        "ztc_merge_fleets",
        "ztc_load_cargo",
        "ztc_unload_cargo",
        "ztc_load_fighters",
        "ztc_unload_fighters",
        "ztc_transfer_fighters",
        "ztc_reactivate",
    ],
)
def test_the_bots_zero_turn_tags_count_as_zero_turn(tag):
    from workbench.ec4x.families import family_of_tag

    assert family_of_tag(tag) == "zero_turn"


@pytest.mark.parametrize(
    "tag",
    [
        # summarize_trace_coverage.py FAMILIES
        "zero_turn",
        "fleet",
        "build",
        "repair",
        "scrap",
        "diplomacy",
        "population_transfer",
        "terraform",
        "colony_management",
        "espionage",
        "research",
        "investment",
    ],
)
def test_the_twelve_coverage_families(tag):
    from workbench.ec4x.families import FAMILIES, family_of_tag

    assert family_of_tag(tag) == tag
    assert len(FAMILIES) == 12


def test_a_tag_the_bot_does_not_write_is_drift(ingest_lines):
    lines = [SESSION, turn_line(1, True, 1, "success", [], tags=["zero_turn", "ztc_warp", "fleet"])]
    report, _ = ingest_lines("bot_trace_game-123.jsonl", lines)
    info = {(v.rule, v.field) for v in report.violations if v.severity == "info"}
    assert info == {("unmapped_feature_tag", "featureTags")}
    assert "'ztc_warp'" in next(v.message for v in report.violations if v.rule == "unmapped_feature_tag")


def test_the_gates_and_their_thresholds(ingest_lines):
    # evaluate_trace_quality.py defaults: --min-success-rate 0.75, --max-retry-rate 0.50,
    # --min-consecutive-success 20; a retry turn has attempts > 1. Coverage: all 12 families.
    # 24 turns: 21 ok in a row (3 of them after a retry), then 3 that failed on 3 attempts.
    lines = [SESSION]
    for number in range(1, 22):
        attempts = 2 if number in (4, 8, 12) else 1
        trace = [failed(1)] if attempts == 2 else []
        lines.append(turn_line(number, True, attempts, "success", trace, tags=["fleet", "build"]))
    for number in range(22, 25):
        lines.append(turn_line(number, False, 3, "validation", [failed(1), failed(2), failed(3)]))
    report, con = ingest_lines("bot_trace_game-123.jsonl", lines)
    # the three failed turns (lines 23-25): the bot refused the model's orders, each an invalid decision by that
    assert [(v.locator, v.rule) for v in report.violations if v.severity == "error"] == [
        (f"line {n}", "orders_refused") for n in (23, 24, 25)
    ]
    gates = {
        row[0]: row[1:]
        for row in con.execute("SELECT gate, value, threshold, comparison, passed FROM ec4x_quality_gates").fetchall()
    }
    assert gates["success_rate"] == (pytest.approx(21 / 24), 0.75, ">=", True)
    assert gates["retry_rate"] == (pytest.approx(6 / 24), 0.5, "<=", True)
    assert gates["longest_success_run"] == (21, 20, ">=", True)
    assert gates["feature_families"] == (2, 12, ">=", False)
