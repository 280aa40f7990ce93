"""A hand-made game-master session with faults planted at known responses, end to end."""

import json

import workbench
from workbench.cli import main

OPTIONS = [{"text": "Accept", "impact": "Authority"}, {"text": "Decline", "impact": "Freedom"}]
DECISION = {"prompt": "Become a deputy?", "options": OPTIONS, "importance": "significant"}


def response(rid, text, model="gpt-4o-mini", **extra):
    return json.dumps({"id": rid, "ts": "2026-02-06T09:38:54+00:00", "model": model, "text": text, **extra})


LINES = [
    # r-1: the seed's standard narrative: valid
    response(
        "r-1",
        "You enter the dusty saloon.\n\nLOCATION: Silver Gulch Saloon\nACQUIRED_ITEMS: [Rope, Lantern]\n"
        'SUGGESTED_ACTIONS: [{"text": "Approach the bar", "type": "basic"}]',
    ),
    # r-2: an action of an unknown type (error)
    response(
        "r-2",
        "A shadow moves.\nLOCATION: Dark Alley\nCOMBAT: Gunslinger\nSUGGESTED_ACTIONS: "
        '[{"text": "Draw", "type": "combat"}, {"text": "Vanish", "type": "magic"}]',
    ),
    "",  # blank lines are neither records nor rejects
    # r-3: mixed format, decision with an unknown importance (warning)
    response(
        "r-3",
        f'The sheriff waits.\nLOCATION: Office\n"playerDecision": {json.dumps({**DECISION, "importance": "urgent"})}',
        model="claude-3-5-haiku",
    ),
    # r-4: whole JSON with one complete option (error) and a trailing comma (warning)
    response(
        "r-4",
        json.dumps(
            {
                "narrative": "A deal.",
                "playerDecision": {"prompt": "Deal?", "options": [OPTIONS[0], {"text": "Walk away"}]},
            }
        )[:-1]
        + ",}",
        model="claude-3-5-haiku",
    ),
    # r-5: a character with an attribute out of range (error)
    response(
        "r-5",
        json.dumps(
            {
                "name": "Doc",
                "attributes": {
                    "speed": 10,
                    "gunAccuracy": 12,
                    "throwingAccuracy": 8,
                    "strength": 11,
                    "baseStrength": 11,
                    "bravery": 23,
                    "experience": 5,
                },
            }
        ),
        model="llama-3.1-70b",
    ),
    # r-6: inline markers, valid
    response("r-6", "Dusty ACQUIRED_ITEMS: REMOVED_ITEMS: misses the shopkeeper!", model="llama-3.1-70b"),
    # r-7: no text: rejected
    json.dumps({"id": "r-7", "model": "llama-3.1-70b"}),
    # line 9: not JSON: rejected
    '{"id": "r-8", "text": "The stage',
    # r-9: an action without type (warning) in a JSON response
    response("r-9", json.dumps({"narrative": "Rain.", "suggestedActions": [{"text": "Wait"}]})),
    # r-10: mixed, valid
    response("r-10", f'Deputy time.\n"playerDecision": {json.dumps(DECISION)}', model="llama-3.1-70b"),
]

PLANTED = {
    ("response r-2", "suggested_actions[1].type", "enum_value", "error"),
    ("response r-3", "player_decision.importance", "importance_defaulted", "warning"),
    ("response r-4", "text", "json_repaired", "warning"),
    ("response r-4", "player_decision.options[1].impact", "incomplete_option", "warning"),
    ("response r-4", "player_decision.options", "too_few_options", "error"),
    ("response r-5", "character.attributes.bravery", "less_than_equal", "error"),
    ("response r-7", "text", "required_key", "error"),
    ("line 9", "(record)", "not_a_json_object", "error"),
    ("response r-9", "suggested_actions[0].type", "action_type_defaulted", "warning"),
}


def write_session(tmp_path):
    path = tmp_path / "saloon.gm.jsonl"
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    return path


def test_every_planted_fault_is_located_by_response_and_field(tmp_path):
    report = workbench.ingest([write_session(tmp_path)], db=tmp_path / "x.duckdb")
    [file] = report.files
    assert file.format == "gm" and file.status == "ingested"
    assert {(v.locator, v.field, v.rule, v.severity) for v in file.violations} == PLANTED


def test_records_and_rejects_add_up_to_the_non_blank_lines(tmp_path):
    path = write_session(tmp_path)
    [file] = workbench.ingest([path], db=tmp_path / "x.duckdb").files
    non_blank = sum(1 for text in path.read_text().splitlines() if text.strip())
    assert (file.records, file.rejected) == (8, 2)
    assert file.records + file.rejected == non_blank
    con = workbench.connect(tmp_path / "x.duckdb")
    assert con.execute("SELECT locator FROM rejects ORDER BY locator").fetchall() == [("line 9",), ("response r-7",)]
    assert con.execute("SELECT raw FROM rejects WHERE locator = 'line 9'").fetchone()[0] == LINES[8]


def test_valid_records_are_parsed_into_gm_responses(tmp_path):
    workbench.ingest([write_session(tmp_path)], db=tmp_path / "x.duckdb")
    con = workbench.connect(tmp_path / "x.duckdb")
    rows = con.execute(
        "SELECT response_id, kind, valid, narrative, location, combat_opponent, acquired_items, "
        "suggested_actions->>'$[0].text', player_decision->>'importance' FROM gm_responses ORDER BY seq"
    ).fetchall()
    by_id = {row[0]: row[1:] for row in rows}
    assert by_id["r-1"] == (
        "markers",
        True,
        "You enter the dusty saloon.",
        "Silver Gulch Saloon",
        None,
        ["Rope", "Lantern"],
        "Approach the bar",
        None,
    )
    assert by_id["r-2"][:5] == ("markers", False, "A shadow moves.", "Dark Alley", "Gunslinger")
    assert by_id["r-3"][:2] == ("mixed", True) and by_id["r-3"][-1] == "moderate"
    assert by_id["r-6"][2] == "Dusty misses the shopkeeper!"
    assert by_id["r-10"][:2] == ("mixed", True)
    assert con.execute(
        "SELECT character->'attributes'->>'bravery' FROM gm_responses WHERE kind = 'character'"
    ).fetchone() == ("23",)


def test_one_decision_per_response(tmp_path):
    workbench.ingest([write_session(tmp_path)], db=tmp_path / "x.duckdb")
    con = workbench.connect(tmp_path / "x.duckdb")
    rows = con.execute(
        "SELECT locator, format, game_id, turn, agent_id, model, action, valid FROM decisions ORDER BY turn"
    ).fetchall()
    assert len(rows) == 8
    session = f"{tmp_path.name}/saloon"  # the session within its run: the folder it is in
    assert rows[0] == ("response r-1", "gm", session, 1, "gpt-4o-mini", "gpt-4o-mini", "markers", True)
    actions = {locator: (action, valid) for locator, _, _, _, _, _, action, valid in rows}
    assert actions["response r-2"] == ("markers", False)
    assert actions["response r-3"] == ("decision", True)
    assert actions["response r-4"] == ("decision", False)
    assert actions["response r-5"] == ("character", False)
    assert actions["response r-9"] == ("json", True)


def test_reingesting_the_same_file_adds_nothing(tmp_path):
    path = write_session(tmp_path)
    workbench.ingest([path], db=tmp_path / "x.duckdb")
    [again] = workbench.ingest([path], db=tmp_path / "x.duckdb").files
    assert again.status == "unchanged"
    con = workbench.connect(tmp_path / "x.duckdb")
    assert con.execute("SELECT count(*) FROM gm_responses").fetchone() == (8,)


def test_a_reused_response_id_is_a_warning(tmp_path):
    path = tmp_path / "dup.gm.jsonl"
    path.write_text(response("r-1", "One.") + "\n" + response("r-1", "Two.") + "\n")
    [file] = workbench.validate([path]).files
    assert [(v.locator, v.field, v.rule, v.severity) for v in file.violations] == [
        ("response r-1", "id", "duplicate_response_id", "warning")
    ]
    assert "line 1" in file.violations[0].message and "line 2" in file.violations[0].message


def test_detection_by_file_name_and_cli_validate(tmp_path, capsys):
    path = write_session(tmp_path)
    assert main(["validate", "--json", str(path)]) == 1  # errors were planted
    out = json.loads(capsys.readouterr().out)
    [file] = out["files"]
    assert file["format"] == "gm" and file["records"] == 8 and file["rejected"] == 2
