"""`workbench records` and `workbench side-by-side`: the records behind a number, and two
models on the same turns, for scripts and CI. Expected values come from the files' own
lines (`test_records.write_arena_logs`: model-b flies, no tool of seed 002, on ep_1's
odd ticks and on ep_2's tick 0; model-a is always valid)."""

import csv
import io
import json
from pathlib import Path

import pytest

from tests.conftest import write_lines
from tests.test_records import REAL_DAMAGE, arena_line, line_of, write_arena_logs
from workbench.cli import main
from workbench.cli_records import SHOWN_CHARS


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def arena(tmp_path_factory):
    """`write_arena_logs`, once: no test here changes a file."""
    return write_arena_logs(tmp_path_factory.mktemp("arena"))


def flights(path) -> list[int]:
    """The numbers of the lines where model-b flies, read off the file."""
    return [
        number
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if '"model-b"' in line and '"fly"' in line
    ]


def line_where(path, model: str, tick: int) -> int:
    """The number of the line where `model` decided `tick`, read off the file."""
    (number,) = [
        number
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if f'"{model}"' in line and f'"tick": {tick},' in line
    ]
    return number


def test_records_prints_where_each_record_is_what_it_breaks_and_its_line_as_written(capsys, arena):
    db, episode_1, episode_2 = arena
    code, out, err = run(capsys, "records", "--db", str(db), "--model", "model-b", "--invalid")
    assert code == 0 and err == ""
    lines = out.splitlines()
    expected = [(episode_1, n) for n in flights(episode_1)] + [(episode_2, n) for n in flights(episode_2)]
    assert len(expected) == 3 and len(lines) == 2 * len(expected)
    for (path, number), header, text in zip(expected, lines[::2], lines[1::2]):
        tick = json.loads(line_of(path, number))["tick"]
        game = f"{path.parent.name}/{path.name.split('.')[0]}"  # the episode within its run (its folder)
        assert header.startswith(
            f"{path}:{number}: arena; game_id {game}; turn {tick}; model model-b; INVALID; breaks "
        )
        assert text == "    " + line_of(path, number)


def test_records_json_gives_every_record_and_its_whole_text(capsys, arena):
    db, episode_1, episode_2 = arena
    code, out, _ = run(capsys, "records", "--db", str(db), "--json", "--limit", "0")
    found = json.loads(out)
    assert code == 0 and len(found) == 12  # 9 non-blank lines in episode 1, 3 in episode 2
    for row in found:
        path = episode_1 if row["path"] == str(episode_1) else episode_2
        assert row["raw"] == line_of(path, row["line"])
    assert {row["raw"] for row in found if row["valid"] is False and row["model"] is None} == {"{not json"}


def test_records_says_when_it_shows_only_the_first_and_when_nothing_matches(capsys, arena):
    db, _, _ = arena
    code, out, err = run(capsys, "records", "--db", str(db), "--limit", "2")
    assert code == 0 and len(out.splitlines()) == 4 and err == "(the first 2 of 12 records; --limit 0 shows all)\n"
    code, out, err = run(capsys, "records", "--db", str(db), "--limit", "11")  # one short of the 12
    assert code == 0 and len(out.splitlines()) == 22 and err == "(the first 11 of 12 records; --limit 0 shows all)\n"
    code, out, err = run(capsys, "records", "--db", str(db), "--limit", "12")  # all 12: nothing more to tell
    assert code == 0 and len(out.splitlines()) == 24 and err == ""
    code, out, err = run(capsys, "records", "--db", str(db), "--limit", "1", "--json")
    assert code == 0 and len(json.loads(out)) == 1 and err == "(the first 1 of 12 records; --limit 0 shows all)\n"
    code, out, err = run(capsys, "records", "--db", str(db), "--invalid", "--limit", "1")  # filtered: its total
    invalid = len(
        [row for row in json.loads(run(capsys, "records", "--db", str(db), "--invalid", "--json", "--limit", "0")[1])]
    )
    assert code == 0 and err == f"(the first 1 of {invalid} records; --limit 0 shows all)\n" and invalid > 1
    code, out, err = run(capsys, "records", "--db", str(db), "--model", "model-b", "--rule", "no_such_rule")
    assert (
        code == 0
        and out == ""
        and err
        == "workbench: no record matches; no rule 'no_such_rule' here (known: not_a_json_object, unknown_tool)\n"
    )
    code, out, err = run(capsys, "records", "--db", str(db), "--model", "model-a", "--invalid")
    assert code == 0 and out == "" and err == "workbench: no record matches\n"  # every name is known
    code, _, err = run(capsys, "records", "--db", str(db), "--model", "Model-B")
    assert err == "workbench: no record matches; no model 'Model-B' here (did you mean 'model-b'?)\n"
    code, _, err = run(capsys, "records", "--db", str(db), "--model", "nobody")
    assert err == "workbench: no record matches; no model 'nobody' here (3 known: `workbench scorecard` lists them)\n"
    code, _, err = run(capsys, "records", "--db", str(db), "--format", "ARENA")
    assert err == "workbench: no record matches; no format 'ARENA' here (did you mean 'arena'?)\n"
    code, out, err = run(capsys, "records", "--db", str(db), "--limit", "-1")
    assert code == 2 and out == "" and err == "workbench: --limit must be 0 (all) or more, not -1\n"


def test_a_long_record_is_cut_in_a_terminal_and_whole_in_json(capsys, tmp_path):
    long = arena_line("agent_a", 0, "model-a", reasoning="x" * 500)
    log = write_lines(tmp_path / "ep_9.decisions.jsonl", [long])
    db = str(tmp_path / "w.duckdb")
    assert main(["ingest", str(log), "--db", db, "--quiet"]) == 0
    capsys.readouterr()
    _, out, _ = run(capsys, "records", "--db", db)
    shown = out.splitlines()[1]
    assert shown == f"    {long[:SHOWN_CHARS]}… ({len(long) - SHOWN_CHARS} more characters; --json)"
    _, out, _ = run(capsys, "records", "--db", db, "--json")
    assert json.loads(out)[0]["raw"] == long


def test_records_csv_keeps_a_spreadsheet_from_running_a_line_as_a_formula(capsys, tmp_path):
    log = write_lines(tmp_path / "ep_9.decisions.jsonl", ['=HYPERLINK("http://x")', arena_line("a", 0, "m")])
    db = str(tmp_path / "w.duckdb")
    assert main(["ingest", str(log), "--db", db, "--quiet"]) == 0
    capsys.readouterr()
    code, out, _ = run(capsys, "records", "--db", db, "--csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and [row["line"] for row in rows] == ["1", "2"]
    assert rows[0]["raw"] == '\'=HYPERLINK("http://x")' and rows[0]["valid"] == "false"
    assert rows[1]["raw"] == arena_line("a", 0, "m") and rows[1]["rules"] == ""


def test_side_by_side_prints_the_disagreements_first_with_where_each_decision_is(capsys, arena):
    db, episode_1, episode_2 = arena
    code, out, err = run(capsys, "side-by-side", "model-a", "model-b", "--db", str(db))
    lines = out.splitlines()
    # shared: ep_1 ticks 0-3 and ep_2 tick 0; model-b flew on ep_1 1 and 3 and on ep_2 0
    assert code == 0 and err == ""
    assert lines[0] == "model-a and model-b: 5 shared turns, 3 where one's answers were all valid and the other's not"
    turns = [line for line in lines[1:] if not line.startswith("    ")]
    run_ = episode_1.parent.name
    assert turns == [
        f"arena {run_}/ep_1 turn 1: DISAGREE",
        f"arena {run_}/ep_1 turn 3: DISAGREE",
        f"arena {run_}/ep_2 turn 0: DISAGREE",
        f"arena {run_}/ep_1 turn 0",
        f"arena {run_}/ep_1 turn 2",
    ]
    assert lines[3].startswith("    model-b as agent_b: fly: INVALID (")
    assert lines[3].endswith(f" at {episode_1}:{line_where(episode_1, 'model-b', 1)}")
    assert lines[2] == f"    model-a as agent_a: idle: valid at {episode_1}:{line_where(episode_1, 'model-a', 1)}"


def test_side_by_side_json_has_both_raw_texts_and_limit_cuts_the_turns(capsys, arena):
    db, episode_1, _ = arena
    code, out, err = run(capsys, "side-by-side", "model-a", "model-b", "--db", str(db), "--json", "--limit", "1")
    (pair,) = json.loads(out)
    assert code == 0 and err == "(the first 1 of 5 turns; --limit 0 shows all)\n"  # on stderr: the JSON stays whole
    assert pair["raw_b"] == line_of(episode_1, flights(episode_1)[0]) and pair["disagree"] is True


def test_side_by_side_says_why_no_turn_is_shared(capsys, arena):
    db, _, _ = arena
    code, out, err = run(capsys, "side-by-side", "model-a", "nobody", "--db", str(db))
    assert code == 0 and err == "workbench: no record of model 'nobody' here; `workbench scorecard` lists the models\n"
    code, _, err = run(capsys, "side-by-side", "model-a", "model-b", "--db", str(db), "--format", "gm")
    assert err == "workbench: no record of model 'model-a' here in format gm; `workbench scorecard` lists the models\n"
    code, _, err = run(capsys, "side-by-side", "model-a", "model-a", "--db", str(db))
    assert code == 2 and "two different models" in err


@pytest.mark.skipif(not REAL_DAMAGE.is_dir(), reason=f"the real Damage corpus is absent ({REAL_DAMAGE})")
def test_the_real_simulators_logs_through_the_command_line(capsys, tmp_path):
    logs = sorted(REAL_DAMAGE.rglob("*.events.jsonl"))[:3]
    db = str(tmp_path / "w.duckdb")
    assert main(["ingest", *map(str, logs), "--db", db, "--quiet"]) == 0
    capsys.readouterr()
    # the simulator's failed betting calls, found by words (in any case) and by a byte search here
    code, out, _ = run(
        capsys, "records", "--db", db, "--text", '"REASON": "provider_failure"', "--json", "--limit", "0"
    )
    found = json.loads(out)
    by_hand = [
        (str(log.resolve()), number)
        for log in logs
        for number, text in enumerate(log.read_bytes().split(b"\n"), 1)
        if b'"reason": "provider_failure"' in text.lower()
    ]
    assert code == 0 and len(by_hand) == 12 and [(row["path"], row["line"]) for row in found] == by_hand
    # failed calls: no answer to judge, the provider's words kept
    assert {(row["valid"], row["action"], row["outcome"]) for row in found} == {(None, None, "failed")}
    assert all(row["model"] for row in found) and all(
        row["failure"].startswith("provider HTTP error 500") for row in found
    )
    code, out, _ = run(capsys, "records", "--db", db, "--failed", "--json", "--limit", "0")
    assert [(row["path"], row["line"]) for row in json.loads(out)] == by_hand
    assert all(row["raw"] == line_of(Path(row["path"]), row["line"]) for row in found)
    models = sorted(
        {
            row["model"]
            for row in json.loads(run(capsys, "records", "--db", db, "--json", "--limit", "0")[1])
            if row["model"]
        }
    )
    assert len(models) >= 2, models
    code, out, _ = run(capsys, "side-by-side", *models[:2], "--db", db, "--json", "--limit", "0")
    pairs = json.loads(out)
    assert code == 0 and pairs
    for pair in pairs:  # each side's place is its own line, of the pair's game, hand and seat
        for side in ("a", "b"):
            if pair[f"locator_{side}"] is None:  # a side with no decision of its own in this row
                assert pair[f"raw_{side}"] is None
                continue
            number = int(pair[f"locator_{side}"].removeprefix("line "))
            raw = line_of(Path(pair[f"path_{side}"]), number)
            assert raw == pair[f"raw_{side}"]  # one decision a side per row, its own line
            event = json.loads(raw)
            assert event["game_id"] == pair["game_id"] and event["payload"]["turn"] == pair["turn"]
            assert event["payload"]["player_id"] == pair[f"agent_id_{side}"]


def test_a_name_the_aliases_map_finds_its_models_records_as_the_model_does(capsys, arena, tmp_path):
    db, _, _ = arena
    aliases = tmp_path / "aliases.json"
    aliases.write_text(json.dumps({"model-b": "flier"}))
    outs = [
        run(capsys, "records", "--db", str(db), "--model", name, "--aliases", str(aliases), "--json", "--limit", "0")
        for name in ("model-b", "flier")
    ]
    found = [json.loads(out) for _, out, _ in outs]
    # model-b's decisions: ep_1's four ticks and ep_2's one, under its alias
    assert found[0] == found[1] and len(found[0]) == 4 + 1 and {row["model"] for row in found[0]} == {"flier"}
    code, _, err = run(capsys, "side-by-side", "model-a", "flier", "--db", str(db), "--aliases", str(aliases))
    assert code == 0 and err == ""
    aliases.write_text(json.dumps({"model-a": "one", "model-b": "one"}))
    code, _, err = run(capsys, "side-by-side", "model-a", "model-b", "--db", str(db), "--aliases", str(aliases))
    assert code == 2 and "'model-a' and 'model-b' are one model under the aliases" in err
