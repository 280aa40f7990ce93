"""Extractor outputs through `workbench.ingest` / `workbench.validate`: file naming,
bundles, rejects, and the economy a dated bundle gives."""

import json
from pathlib import Path

import pytest

import workbench
from tests.conftest import rows
from tests.stellaris.examples import bundle, example
from workbench.stellaris import claims


def write_json(path: Path, value) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value if isinstance(value, str) else json.dumps(value))
    return path


def findings(report):
    return {(v.locator, v.field, v.rule, v.severity) for f in report.files for v in f.violations}


@pytest.mark.parametrize(
    "name, claimed",
    [
        ("get_planets.json", True),
        ("2312.01.01.get_planets.json", True),
        ("get_armies.json", True),
        ("search.json", True),
        ("x.briefing.json", True),
        ("autosave.sav", True),
        ("planets.json", False),
        ("notes.txt", False),
        ("history.db", False),
    ],
)
def test_detection_by_name(name, claimed):
    assert claims(Path(name), b"") is claimed


def test_a_tool_file_is_one_record_named_by_the_file(tmp_path):
    path = write_json(tmp_path / "get_planets.json", example("get_planets"))
    db = tmp_path / "w.duckdb"
    [file] = workbench.ingest([path], db=db).files
    assert (file.format, file.status, file.records, file.rejected, file.violations) == (
        "stellaris",
        "ingested",
        1,
        0,
        [],
    )
    assert rows(db, "SELECT locator, tool, origin, known, valid FROM stellaris_tool_outputs") == [
        ("tool get_planets", "get_planets", "extractor", True, True)
    ]


def test_drifted_outputs_get_precise_findings(tmp_path):
    planets = example("get_planets")
    planets["total_pops"] = planets.pop("total_population")
    report = workbench.validate([write_json(tmp_path / "get_planets.json", planets)])
    assert ("tool get_planets", "total_population", "required_key", "error") in findings(report)
    [error] = [v for v in report.files[0].violations if v.severity == "error"]
    assert "did you mean `total_pops`?" in error.message
    assert report.has_errors()


def test_an_unknown_tool_is_info_never_a_crash(tmp_path):
    report = workbench.validate([write_json(tmp_path / "get_armies.json", {"armies": [], "count": 0})])
    [file] = report.files
    assert (file.status, file.records) == ("ingested", 1)
    assert findings(report) == {("tool get_armies", "(record)", "unknown_tool", "info")}


def test_json_that_does_not_parse_is_a_reject_with_its_raw_text(tmp_path):
    path = write_json(tmp_path / "get_fleets.json", '{"count": 3, "fleet_names": ["Home')
    db = tmp_path / "w.duckdb"
    [file] = workbench.ingest([path], db=db).files
    assert (file.status, file.records, file.rejected) == ("ingested", 0, 1)
    [violation] = file.violations
    assert (violation.locator, violation.field, violation.rule, violation.severity) == (
        "tool get_fleets",
        "(record)",
        "invalid_json",
        "error",
    )
    assert "line 1 column" in violation.message
    assert rows(db, "SELECT locator, raw FROM rejects") == [("tool get_fleets", '{"count": 3, "fleet_names": ["Home')]


def test_a_bundle_is_one_record_per_tool_output(tmp_path):
    outputs = bundle("get_player_status", "get_resources", "get_wars", "get_situation", "get_full_briefing")
    outputs["get_armies"] = {"count": 0}
    outputs["generated_at"] = "2026-01-12T10:00:00+00:00"
    db = tmp_path / "w.duckdb"
    [file] = workbench.ingest([write_json(tmp_path / "game" / "2342.06.15.briefing.json", outputs)], db=db).files
    assert (file.records, file.rejected) == (6, 0)
    assert {(v.locator, v.field, v.rule) for v in file.violations} == {
        ("bundle", "generated_at", "undocumented_key"),
        ("tool get_armies", "(record)", "unknown_tool"),
    }
    assert rows(db, "SELECT count(*) FROM stellaris_tool_outputs")[0][0] == 6


def test_a_dated_bundle_gives_a_snapshot_and_its_economy(tmp_path):
    outputs = bundle("get_player_status", "get_resources", "get_wars")
    db = tmp_path / "w.duckdb"
    workbench.ingest([write_json(tmp_path / "game" / "a.briefing.json", outputs)], db=db)
    assert rows(db, "SELECT series, origin, game_date, player_id, wars_count, at_war FROM stellaris_snapshots") == [
        ("game", "extractor", "2342.06.15", 16777223, 1, True)
    ]
    assert rows(db, "SELECT resource, income, expenses, net, stockpile FROM stellaris_resources ORDER BY 1") == [
        ("alloys", 30.0, 42.5, -12.5, 310.25),
        ("energy", 140.0, 120.0, 20.0, 1200.5),
        ("minerals", 95.5, 60.0, 35.5, 800.0),
    ]


def test_a_bundle_without_tool_keys_is_a_full_briefing(tmp_path):
    briefing = example("get_full_briefing")
    briefing["economy"]["net_monthly"]["energy"] = "lots"
    report = workbench.validate([write_json(tmp_path / "snap.briefing.json", briefing)])
    assert findings(report) == {("tool get_full_briefing", "economy.net_monthly.energy", "wrong_type", "error")}


def test_a_bundle_breaking_the_invariants(tmp_path):
    outputs = bundle("get_player_status", "get_resources", "get_wars", "get_situation", "get_full_briefing")
    outputs["get_full_briefing"]["economy"]["net_monthly"]["energy"] = 99.0
    outputs["get_situation"]["at_war"] = False
    report = workbench.validate([write_json(tmp_path / "bad.briefing.json", outputs)])
    assert {(loc, field, rule) for loc, field, rule, severity in findings(report) if severity == "error"} == {
        ("tool get_full_briefing", "economy.net_monthly.energy", "invariant_full_briefing"),
        ("tool get_situation", "at_war", "invariant_wars"),
    }


def test_a_bundle_that_is_not_an_object_is_rejected(tmp_path):
    db = tmp_path / "w.duckdb"
    [file] = workbench.ingest([write_json(tmp_path / "list.briefing.json", [1, 2])], db=db).files
    assert (file.records, file.rejected) == (0, 1)
    assert [(v.locator, v.rule) for v in file.violations] == [("bundle", "not_a_bundle")]


def test_invalid_utf8_is_a_reject(tmp_path):
    path = tmp_path / "get_wars.json"
    path.write_bytes(b'{"wars": ["\xff"]}')
    [file] = workbench.validate([path]).files
    assert (file.records, file.rejected) == (0, 1) and "not UTF-8" in file.violations[0].message


def test_format_can_be_forced(tmp_path):
    path = write_json(tmp_path / "get_wars.json", example("get_wars"))
    [file] = workbench.validate([path], format="stellaris").files
    assert (file.format, file.records) == ("stellaris", 1)


def test_non_json_numbers_and_huge_integers_do_not_break_the_load(tmp_path):
    path = write_json(tmp_path / "get_resources.json", '{"net_monthly": {"energy": NaN}}')
    [file] = workbench.validate([path]).files
    assert (file.records, file.rejected) == (0, 1) and "NaN is not a JSON number" in file.violations[0].message
    status = example("get_player_status")
    status["player_id"] = 2**70
    db = tmp_path / "w.duckdb"
    [file] = workbench.ingest([write_json(tmp_path / "get_player_status.json", status)], db=db).files
    assert file.status == "ingested"
    assert rows(db, "SELECT player_id FROM stellaris_snapshots") == [(None,)]


def test_odd_values_where_figures_belong_become_null(tmp_path):
    outputs = {"get_player_status": example("get_player_status"), "get_full_briefing": example("get_full_briefing")}
    outputs["get_player_status"]["empire_name"] = {"key": "%ADJECTIVE%"}
    outputs["get_player_status"]["military_power"] = "huge"
    outputs["get_full_briefing"]["meta"]["empire_name"] = 7
    db = tmp_path / "w.duckdb"
    [file] = workbench.ingest([write_json(tmp_path / "odd.briefing.json", outputs)], db=db).files
    assert file.status == "ingested" and file.records == 2
    assert rows(db, "SELECT empire_name, military_power, fleet_count FROM stellaris_snapshots") == [(None, 52000.0, 14)]


def test_deeply_nested_json_is_a_reject(tmp_path):
    path = write_json(tmp_path / "get_wars.json", "[" * 100_000 + "]" * 100_000)
    [file] = workbench.validate([path]).files
    assert (file.status, file.records, file.rejected) == ("ingested", 0, 1)
    assert any("nested too deeply to parse" in v.message for v in file.violations)
