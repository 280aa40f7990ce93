"""`workbench scorecard`, `compare` and `plan` as a user types them: what they print, and
one line with exit 2 for every bad price, alias or planning input."""

import json
import os
import subprocess
import sys

import pytest

import workbench
from tests.intervals import clustered_by_hand
from tests.test_comparison import arena_log, games_needed_by_hand
from workbench.cli import main


@pytest.fixture
def db(tmp_path):
    db = tmp_path / "w.duckdb"
    paths = [
        arena_log(tmp_path / "ep1.decisions.jsonl", {"m-a": [True] * 10, "m-b": [True] * 3 + [False] * 7}),
        arena_log(
            tmp_path / "ep2.decisions.jsonl",
            {"m-a": [True] * 10, "m-b": [True] * 4 + [False] * 6, "=HYPERLINK(1)": [True, False]},
        ),
    ]
    assert not workbench.ingest(paths, db=db).failed
    return db


def test_the_scorecard_prints_intervals_n_and_games(db, capsys):
    assert main(["scorecard", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    # the ICC from every game of the format, games nested in their model
    pool = [("m-a", 10, 10), ("m-a", 10, 10), ("m-b", 3, 10), ("m-b", 4, 10), ("=HYPERLINK(1)", 1, 2)]
    _, (low, high) = clustered_by_hand([3, 4], [10, 10], pool)
    assert f"arena m-b: 35.0% valid (95% CI {low:.1%}-{high:.1%}, n=20 in 2 games), most broken: unknown_tool" in out
    assert "arena m-a: 100.0% valid" in out and "n=20 in 2 games" in out
    assert main(["scorecard", "--db", str(db), "--csv", "--by", "model"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("model,model_from,decisions,valid,validity,ci_low,ci_high,games,design_effect,ci_method")
    # a name a spreadsheet would run as a formula is written as text
    assert any(line.startswith("'=HYPERLINK(1),model,2,1,") for line in lines)
    assert main(["scorecard", "--db", str(db), "--json", "--by", "model"]) == 0
    rows = {row["model"]: row for row in json.loads(capsys.readouterr().out)}
    assert (rows["m-b"]["decisions"], rows["m-b"]["valid"], rows["m-b"]["games"]) == (20, 7, 2)
    assert (rows["m-b"]["ci_low"], rows["m-b"]["ci_high"]) == pytest.approx((low, high))
    assert rows["=HYPERLINK(1)"]["decisions"] == 2  # JSON is data: no apostrophe


def test_compare_says_what_it_compared_and_gives_verdicts(db, capsys):
    assert main(["compare", "--db", str(db), "m-a", "m-b"]) == 0
    out = capsys.readouterr().out
    assert "arena: m-a vs m-b: m-a is more often valid than m-b: +65.0 points" in out
    assert "on 20 shared turns in 2 games" in out and "Newcombe paired interval and its test" in out
    assert main(["compare", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "arena: every pair of 3 models: 3 comparisons\np-values Holm-corrected over all 3 comparisons"
    )
    assert main(["compare", "--db", str(db), "m-a"]) == 2
    assert "compare takes two models or none" in capsys.readouterr().err


def test_compare_with_aliases_from_a_file(db, tmp_path, capsys):
    (tmp_path / "aliases.csv").write_text("name,model\nm-b,m-a\n")
    assert main(["scorecard", "--db", str(db), "--aliases", str(tmp_path / "aliases.csv")]) == 0
    assert "arena m-a: 67.5% valid" in capsys.readouterr().out  # 27 of 40 decisions


def test_plan_in_words_from_the_database_and_from_given_values(db, capsys):
    assert main(["plan", "--difference", "0.1", "--validity", "0.9", "--per-game", "20", "--icc", "0.05"]) == 0
    out = capsys.readouterr().out
    # the games counted up by hand (tests/test_comparison.py); design effect 1 + (20 - 1) * 0.05
    games = games_needed_by_hand(0.1, 0.9, 20, 0.05)
    assert games == 22
    assert out.startswith(
        f"about {games} games per model to detect 10 points at 80% "
        "power (95% level): validity 90.0%, 20 decisions per game, ICC 0.050 (design effect 1.95)"
    )
    assert main(["plan", "--difference", "0.05", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("about ") and "estimated from every format's 5 games of 3 models in" in out


def test_plan_as_json_and_csv_carries_every_number_the_words_say(db, capsys):
    given = ["plan", "--difference", "0.1", "--validity", "0.9", "--per-game", "20", "--icc", "0.05"]
    assert main([*given, "--json"]) == 0
    numbers = json.loads(capsys.readouterr().out)
    assert numbers["games_per_model"] == games_needed_by_hand(0.1, 0.9, 20, 0.05) == 22
    assert (numbers["validity"], numbers["decisions_per_game"], numbers["icc_planning"]) == (0.9, 20, 0.05)
    assert numbers["design_effect"] == pytest.approx(1.95) and numbers["icc_given"] and numbers["games"] is None
    assert main(["plan", "--difference", "0.05", "--db", str(db), "--json"]) == 0
    estimated = json.loads(capsys.readouterr().out)
    assert (estimated["games"], estimated["models"]) == (5, 3) and not estimated["icc_given"]
    assert main(["plan", "--difference", "0.05", "--db", str(db)]) == 0
    words = capsys.readouterr().out
    assert words.startswith(f"about {estimated['games_per_model']} games per model")
    assert f"planning at {estimated['icc_planning']:.3f}" in words
    assert main(["plan", "--difference", "0.05", "--db", str(db), "--csv"]) == 0
    header, row, *_ = capsys.readouterr().out.splitlines()
    assert dict(zip(header.split(","), row.split(",")))["games_per_model"] == str(estimated["games_per_model"])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["plan", "--difference", "nan", "--validity", "0.9", "--per-game", "9", "--icc", "0"], "difference must be"),
        (["plan", "--difference", "-2", "--validity", "0.9", "--per-game", "9", "--icc", "0"], "difference must be"),
        (["plan", "--difference", "0.1", "--validity", "0.9", "--per-game", "9", "--icc", "1.5"], "icc must be"),
        (
            ["plan", "--difference", "0.1", "--validity", "0.9", "--per-game", "0", "--icc", "0"],
            "decisions per game must be at least 1",
        ),
        (
            ["plan", "--difference", "0.1", "--validity", "0.9", "--per-game", "9", "--icc", "0", "--power", "1"],
            "power must be",
        ),
    ],
)
def test_plan_refuses_inputs_out_of_range_in_one_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "content", ['{"m-a": NaN}', '{"m-a": -0.5}', '{"m-a": 1e400}', '{"m-a": "free"}', "[1, 2]", "{not json"]
)
def test_a_bad_prices_file_is_one_line_and_exit_2(db, tmp_path, capsys, content):
    (tmp_path / "prices.json").write_text(content)
    for command in (["scorecard"], ["report", "-o", str(tmp_path / "r.html")]):
        assert main([*command, "--db", str(db), "--prices", str(tmp_path / "prices.json")]) == 2
        err = capsys.readouterr().err
        assert err.startswith("workbench: ") and err.count("\n") == 1 and "prices" in err
    assert not (tmp_path / "r.html").exists()


@pytest.mark.slow
def test_a_prices_file_over_a_megabyte_a_fifo_or_a_device_is_refused_before_reading(db, tmp_path, capsys):
    big = tmp_path / "big.json"
    big.write_text('{"m-a": 1.0' + " " * 1_000_001 + "}")
    fifo = tmp_path / "prices.fifo"
    os.mkfifo(fifo)
    for path, said in (
        (big, "more than the 1,000,000 a prices file may hold"),
        (fifo, "it is a FIFO, not a file"),
        ("/dev/zero", "it is a character device, not a file"),
        (tmp_path, "it is a folder"),
    ):
        # in a child: a FIFO read would block it, /dev/zero fill its memory
        run = subprocess.run(
            [sys.executable, "-m", "workbench.cli", "scorecard", "--db", str(db), "--prices", str(path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert run.returncode == 2 and said in run.stderr and run.stderr.count("\n") == 1, run.stderr
    run = subprocess.run(
        [sys.executable, "-m", "workbench.cli", "compare", "--db", str(db), "--aliases", "/dev/zero"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2 and "cannot read aliases from /dev/zero" in run.stderr


def test_an_alias_file_with_a_conflict_is_one_line(db, tmp_path, capsys):
    (tmp_path / "a.csv").write_text("name,model\nx,a\nx,b\n")
    assert main(["compare", "--db", str(db), "--aliases", str(tmp_path / "a.csv")]) == 2
    assert "'x' is given two models, 'a' and 'b'" in capsys.readouterr().err
    (tmp_path / "b.csv").write_text("who,what\nx,a\n")
    assert main(["scorecard", "--db", str(db), "--aliases", str(tmp_path / "b.csv")]) == 2
    assert "columns name,model" in capsys.readouterr().err
    (tmp_path / "c.json").write_text(json.dumps(["x", "a"]))
    assert main(["scorecard", "--db", str(db), "--aliases", str(tmp_path / "c.json")]) == 2


def test_compare_sequential_decides_after_enough_games_and_says_it_once_while_watching(tmp_path, capsys):
    from workbench.cli_files import _newly_decided

    db = tmp_path / "seq.duckdb"
    paths = [
        arena_log(tmp_path / f"ep{g:02d}.decisions.jsonl", {"m-a": [True] * 10, "m-b": [True] * 3 + [False] * 7})
        for g in range(12)
    ]
    assert not workbench.ingest(paths[:2], db=db).failed
    assert main(["compare", "--db", str(db), "--sequential", "m-a", "m-b"]) == 0
    assert "not decided after 2 games (paired games" in capsys.readouterr().out
    said: set = set()
    assert _newly_decided(db, said) == []
    assert not workbench.ingest(paths, db=db).failed
    assert main(["compare", "--db", str(db), "--sequential", "--json"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert row["decided"] and row["paired"] and row["games"] == 12 and row["e_value"] >= 20
    # the e-values, game by game, are the e-process of the twelve differences of 0.7
    from workbench.stats import e_process

    e = e_process([0.7] * 12)[0]
    assert row["e_value"] == pytest.approx(e[-1]) and row["decided_after"] == int((e >= 20).argmax()) + 1
    assert row["p_value"] == pytest.approx(1 / e.max()) and row["p_value"] <= 0.05
    [line] = _newly_decided(db, said)
    assert line.startswith("workbench: decided: arena: m-a vs m-b: m-a is more often valid than m-b: decided after")
    assert _newly_decided(db, said) == []  # said once


def test_compare_as_json_and_csv_gives_every_column(db, capsys):
    assert main(["compare", "--db", str(db), "m-a", "m-b", "--json"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert {
        "difference",
        "ci_low",
        "ci_high",
        "p_value",
        "p_holm",
        "method",
        "shared_turns",
        "games_compared",
        "verdict",
    } <= set(row)
    assert (row["p_value"] < 0.05) == (row["ci_low"] > 0 or row["ci_high"] < 0)
    assert main(["compare", "--db", str(db), "--csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("format,a,b,compared,") and len(lines) == 4


def test_scorecard_and_compare_say_once_which_names_look_like_one_model(tmp_path, capsys):
    db = tmp_path / "w.duckdb"
    workbench.ingest(
        [
            arena_log(
                tmp_path / "ep1.decisions.jsonl", {"claude-3-5-haiku": [True, False], "gpt-4o-mini": [True, True]}
            ),
            arena_log(
                tmp_path / "ep2.decisions.jsonl",
                {"claude-3-5-haiku-20241022": [True, True], "gpt-4o-mini": [False, True]},
            ),
        ],
        db=db,
    )
    said = (
        "workbench: claude-3-5-haiku-20241022 looks like a dated snapshot of claude-3-5-haiku, counted apart\n"
        'workbench: to count them as one model: write {"claude-3-5-haiku-20241022": "claude-3-5-haiku"} to '
        "aliases.json and pass --aliases aliases.json\n"
    )
    for argv in (["scorecard"], ["compare", "gpt-4o-mini", "claude-3-5-haiku"]):
        assert main([*argv, "--db", str(db)]) == 0
        captured = capsys.readouterr()
        assert captured.err == said
    (tmp_path / "aliases.json").write_text('{"claude-3-5-haiku-20241022": "claude-3-5-haiku"}')
    assert main(["scorecard", "--db", str(db), "--aliases", str(tmp_path / "aliases.json")]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and "arena claude-3-5-haiku: 75.0% valid" in captured.out  # 3 of 4, one model now
    assert main(["scorecard", "--db", str(db), "--csv"]) == 0
    assert capsys.readouterr().err == ""  # data on stdout only: nothing said beside it
