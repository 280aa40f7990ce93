"""A game of one's own declared in one TOML file and a JSON Schema: its lines become
rows, findings and decisions, with no Python; the expected values are worked out here
from the rules the schema states, not by the workbench's code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from workbench import registry
from workbench.cli import main

TOML = """name = "rps"
files = "*.rps.jsonl"
schema = "rps.schema.json"
description = "rock, paper, scissors"

[fields]
game = "match.id"
turn = "turn"
player = "seat"
model = "agent.model"
action = "move"
"""
SCHEMA = {
    "type": "object",
    "required": ["match", "turn", "seat", "move"],
    "properties": {
        "match": {"type": "object", "required": ["id"]},
        "turn": {"type": "integer", "minimum": 1},
        "seat": {"type": "string"},
        "move": {"enum": ["rock", "paper", "scissors"]},
        "agent": {"type": "object", "properties": {"model": {"type": "string"}}},
    },
}
MOVES = {"rock", "paper", "scissors"}


def line(game: str, turn, seat: str, model: str, move) -> dict:
    record = {"match": {"id": game}, "turn": turn, "seat": seat, "agent": {"model": model}}
    if move is not None:
        record["move"] = move
    return record


# Three games; model-b sometimes plays "lizard" (not a move), model-a once gives turn 0
# and once no move at all.
GAMES = {
    "g1": [
        line("g1", 1, "A", "model-a", "rock"),
        line("g1", 1, "B", "model-b", "lizard"),
        line("g1", 2, "A", "model-a", "paper"),
        line("g1", 2, "B", "model-b", "rock"),
    ],
    "g2": [
        line("g2", 0, "A", "model-a", "rock"),
        line("g2", 1, "B", "model-b", "paper"),
        line("g2", 2, "A", "model-a", "scissors"),
        line("g2", 2, "B", "model-b", "lizard"),
    ],
    "g3": [
        line("g3", 1, "A", "model-a", None),
        line("g3", 1, "B", "model-b", "scissors"),
        line("g3", 2, "A", "model-a", "rock"),
        line("g3", 2, "B", "model-b", "paper"),
    ],
}


def meets_the_rules(record: dict) -> bool:
    """The schema's rules, written out by hand."""
    return (
        record.get("move") in MOVES
        and isinstance(record.get("turn"), int)
        and record["turn"] >= 1
        and isinstance(record.get("seat"), str)
        and "id" in record.get("match", {})
    )


@pytest.fixture
def game(tmp_path) -> Path:
    folder = tmp_path / "rps"
    folder.mkdir()
    (folder / "rps.toml").write_text(TOML)
    (folder / "rps.schema.json").write_text(json.dumps(SCHEMA))
    for name, records in GAMES.items():
        (folder / f"{name}.rps.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder


def ingest(folder: Path, db: Path, *more: str) -> int:
    return main(["ingest", str(folder), "--db", str(db), "--spec", str(folder / "rps.toml"), "--quiet", *more])


def test_each_line_is_a_decision_valid_when_it_meets_the_schema(game, tmp_path):
    db = tmp_path / "w.duckdb"
    assert ingest(game, db) == 0
    expected = {}
    for records in GAMES.values():
        for record in records:
            decided, valid = expected.get(record["agent"]["model"], (0, 0))
            expected[record["agent"]["model"]] = (decided + 1, valid + meets_the_rules(record))
    with duckdb.connect(str(db), read_only=True) as con:
        counted = con.execute(
            "SELECT model, count(*), count(*) FILTER (WHERE valid) FROM decisions WHERE format = 'rps' GROUP BY model"
        ).fetchall()
        assert {model: (n, valid) for model, n, valid in counted} == expected == {"model-a": (6, 4), "model-b": (6, 4)}
        assert con.execute("SELECT DISTINCT game_id FROM decisions ORDER BY 1").fetchall() == [
            ("g1",),
            ("g2",),
            ("g3",),
        ]
        assert con.execute(
            "SELECT turn, agent_id, action FROM decisions WHERE locator = 'line 2' AND game_id = 'g1'"
        ).fetchall() == [(1, "B", "lizard")]


def test_each_schema_error_is_a_finding_on_its_line_with_the_field_and_what_was_expected(game, tmp_path):
    db = tmp_path / "w.duckdb"
    assert ingest(game, db) == 0
    with duckdb.connect(str(db), read_only=True) as con:
        found = con.execute("""
            SELECT regexp_extract(s.path, '[^/]+$'), v.locator, v.rule, v.field, v.message
            FROM violations v JOIN sources s USING (source_id) ORDER BY ALL""").fetchall()
    assert found == [
        ("g1.rps.jsonl", "line 2", "enum", "move", "'lizard' is not one of ['rock', 'paper', 'scissors']"),
        ("g2.rps.jsonl", "line 1", "minimum", "turn", "0 is less than the minimum of 1"),
        ("g2.rps.jsonl", "line 4", "enum", "move", "'lizard' is not one of ['rock', 'paper', 'scissors']"),
        ("g3.rps.jsonl", "line 1", "required", "move", "'move' is a required property"),
    ]


def test_a_line_that_is_not_an_object_is_rejected_with_its_text(game, tmp_path):
    with (game / "g1.rps.jsonl").open("a") as log:
        log.write("not json\n[1, 2]\n")
    db = tmp_path / "w.duckdb"
    assert ingest(game, db) == 0
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT locator, raw FROM rejects ORDER BY locator").fetchall() == [
            ("line 5", "not json"),
            ("line 6", "[1, 2]"),
        ]
        assert con.execute("SELECT count(*) FROM rps_records").fetchall() == [(12,)]


def test_a_log_that_grows_gives_what_a_one_shot_ingest_gives(game, tmp_path):
    grown, once = tmp_path / "grown.duckdb", tmp_path / "once.duckdb"
    log = game / "g1.rps.jsonl"
    full = log.read_text()
    first = full.splitlines(keepends=True)[:2]
    log.write_text("".join(first))
    assert ingest(game, grown) == 0
    log.write_text(full + json.dumps(line("g1", 3, "B", "model-b", "lizard")) + "\n")
    assert ingest(game, grown) == 0
    assert ingest(game, once) == 0

    def tables(db):
        with duckdb.connect(str(db), read_only=True) as con:
            return [
                con.execute(f"SELECT * EXCLUDE (source_id) FROM {t} ORDER BY ALL").fetchall()
                for t in ("rps_records", "decisions")
            ] + [con.execute("SELECT locator, rule, field FROM violations ORDER BY ALL").fetchall()]

    assert tables(grown) == tables(once)


def test_scorecard_and_compare_take_a_declared_game(game, tmp_path, capsys):
    db = tmp_path / "w.duckdb"
    assert ingest(game, db) == 0
    capsys.readouterr()
    assert main(["scorecard", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "rps model-a: 66.7% valid" in out and "n=6 in 3 games" in out
    assert main(["records", "--db", str(db), "--format", "rps", "--invalid"]) == 0
    assert "lizard" in capsys.readouterr().out


@pytest.mark.parametrize(
    "change, said",
    [
        (lambda t: 'colour = "red"\n' + t, "unknown key 'colour'"),
        (lambda t: t.replace('name = "rps"', 'name = "R P S"'), "name 'R P S' must be lower-case letters"),
        (lambda t: t.replace('name = "rps"', 'name = "damage"'), "a format named 'damage' is registered already"),
        (lambda t: t.replace('schema = "rps.schema.json"\n', ""), "schema must be given"),
        (lambda t: t.replace("rps.schema.json", "missing.json"), "cannot read a schema from"),
        (lambda t: t.replace('turn = "turn"', 'turn = "a..b"'), "fields.turn must be a dotted path"),
        (lambda t: t.replace('turn = "turn"', 'round = "r"'), "unknown field 'round'"),
        (lambda t: t.replace('files = "*.rps.jsonl"', 'files = "logs/*.jsonl"'), "is a pattern of file names"),
        (lambda t: t.replace("[fields]", "[fields"), "is not a TOML file"),
        (lambda t: "file = '(?P<model>['\n" + t, "is not a regular expression"),
        (lambda t: "file = '(?P<colour>x)'\n" + t, "file's named groups must be fields"),
        (lambda t: "file = 'x'\n" + t, "file's named groups must be fields"),
    ],
)
def test_a_declaration_that_is_wrong_is_refused_in_one_line_naming_the_file(game, tmp_path, capsys, change, said):
    spec = game / "rps.toml"
    spec.write_text(change(TOML))
    assert ingest(game, tmp_path / "w.duckdb") == 2
    err = capsys.readouterr().err
    assert said in err and str(spec) in err and err.count("\n") == 1, err
    assert not (tmp_path / "w.duckdb").exists()


@pytest.mark.parametrize(
    "schema, said",
    [
        ("[1, 2]", "its schema must be a JSON object"),
        ("{not json", "is not JSON"),
        ('{"type": "nothing"}', "is not a valid JSON Schema at type"),
        ('{"properties": {"move": {"pattern": "(["}}}', "is not a valid JSON Schema at properties/move/pattern"),
    ],
)
def test_a_schema_that_is_not_one_is_refused_in_one_line(game, tmp_path, capsys, schema, said):
    (game / "rps.schema.json").write_text(schema)
    assert ingest(game, tmp_path / "w.duckdb") == 2
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1, err


def test_an_inline_schema_table_is_taken_as_the_file_would_be(game, tmp_path):
    inline = TOML.replace('schema = "rps.schema.json"\n', "") + (
        '\n[schema]\ntype = "object"\nrequired = ["move"]\n[schema.properties.move]\nenum = ["rock", "paper", '
        '"scissors"]\n'
    )
    (game / "rps.toml").write_text(inline)
    db = tmp_path / "w.duckdb"
    assert ingest(game, db) == 0
    with duckdb.connect(str(db), read_only=True) as con:
        # only the move is checked now: turn 0 is valid
        assert con.execute("SELECT count(*) FILTER (WHERE valid) FROM decisions").fetchall() == [(9,)]


def test_a_folder_of_declared_formats_is_found_by_every_command(game, tmp_path):
    """`$WORKBENCH_FORMATS` names the folder; `formats` lists what it declares, an ingest
    reads its files without --spec, and a declaration that is wrong is left out in one
    line while the others go on."""
    (game / "broken.toml").write_text('name = "broken"\n')
    environment = {**os.environ, "WORKBENCH_FORMATS": str(game)}

    def run(*argv):
        return subprocess.run(
            [sys.executable, "-m", "workbench.cli", *argv],
            capture_output=True,
            text=True,
            env=environment,
            cwd=tmp_path,
        )

    listed = run("formats")
    assert listed.returncode == 0
    assert f"rps          declared in {game / 'rps.toml'}: rock, paper, scissors" in listed.stdout
    assert "declared format" in listed.stderr and "broken.toml left out" in listed.stderr
    assert "files must be given" in listed.stderr
    as_json = {row["name"]: row for row in json.loads(run("formats", "--json").stdout)}
    assert as_json["rps"] == {
        "name": "rps",
        "kind": "declared",
        "declared_in": str(game / "rps.toml"),
        "description": "rock, paper, scissors",
        "tables": ["rps_records"],
    }
    assert as_json["damage"]["kind"] == "built in" and "damage_events" in as_json["damage"]["tables"]
    ingested = run("ingest", str(game), "--db", str(tmp_path / "w.duckdb"), "--quiet")
    assert ingested.returncode == 0 and "g1.rps.jsonl: rps: 4 records" in ingested.stdout


def test_spec_with_the_spark_engine_is_refused_before_spark_starts(game, tmp_path, capsys):
    assert (
        main(
            [
                "ingest",
                str(game),
                "--engine",
                "spark",
                "--parquet",
                str(tmp_path / "t"),
                "--spec",
                str(game / "rps.toml"),
            ]
        )
        == 2
    )
    assert "put the TOML file in a declared-formats folder" in capsys.readouterr().err


def test_a_declared_format_is_registered_once_per_file(game):
    first = registry.declare(game / "rps.toml")
    assert registry.declare(game / "rps.toml") is first
    other = game / "copy.toml"
    other.write_text(TOML)
    with pytest.raises(Exception, match="a format named 'rps' is declared in .*rps.toml already"):
        registry.declare(other)
