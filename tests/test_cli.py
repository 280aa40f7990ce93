"""The command line: exit codes, one-line errors, exports, synth."""

import json
import subprocess
import sys
import textwrap

import pytest

import workbench
from tests.conftest import write_lines
from tests.damage.events import event
from workbench import cli
from workbench.cli import main


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def damage_db(tmp_path_factory, sample):
    db = tmp_path_factory.mktemp("db") / "w.duckdb"
    assert main(["ingest", str(sample / "damage"), "--db", str(db), "--quiet"]) == 0
    return db


def test_missing_path_exits_2_with_one_line(capsys, tmp_path):
    code, out, err = run(capsys, "ingest", str(tmp_path / "nope.jsonl"), "--db", str(tmp_path / "w.duckdb"))
    assert code == 2 and err.count("\n") == 1 and "no such file or folder" in err and "Traceback" not in err


def test_unknown_format_exits_2(capsys, tmp_path):
    path = write_lines(tmp_path / "g.events.jsonl", [event("game_started")])
    code, _, err = run(capsys, "ingest", str(path), "--format", "chess", "--db", str(tmp_path / "w.duckdb"))
    assert code == 2 and "unknown format 'chess'" in err and err.count("\n") == 1


def test_file_of_unknown_format_is_reported_not_guessed(capsys, tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello\n")
    code, out, _ = run(capsys, "ingest", str(path), "--db", str(tmp_path / "w.duckdb"), "--quiet")
    assert code == 2 and "unknown format" in out


def test_unreadable_file_exits_2(capsys, tmp_path, monkeypatch):
    from workbench import ingestion as ingest_module

    def denied(path):
        raise PermissionError(13, "Permission denied", str(path))

    # Tests may run as root, who can read a chmod-0 file: simulate the refusal instead.
    monkeypatch.setattr(ingest_module, "_read_head", denied)
    path = write_lines(tmp_path / "g.events.jsonl", [event("game_started")])
    code, out, _ = run(capsys, "ingest", str(path), "--db", str(tmp_path / "w.duckdb"), "--quiet")
    assert code == 2 and f"{path}: failed: cannot read file (Permission denied)" in out


def test_locked_database_exits_2_naming_it(capsys, tmp_path):
    db = tmp_path / "w.duckdb"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
        import duckdb, sys, time
        con = duckdb.connect({str(db)!r})
        print("ready", flush=True)
        sys.stdin.read()
    """),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        path = write_lines(tmp_path / "g.events.jsonl", [event("game_started")])
        code, _, err = run(capsys, "ingest", str(path), "--db", str(db))
    finally:
        holder.communicate("")
    assert code == 2 and err.count("\n") == 1
    assert f"database {db} is locked by process {holder.pid}" in err and "Traceback" not in err


def test_ingest_prints_a_summary_per_file(capsys, tmp_path, sample):
    code, out, _ = run(capsys, "ingest", str(sample / "damage"), "--db", str(tmp_path / "w.duckdb"), "--quiet")
    assert code == 0 and out.count("records") == 5
    code, out, _ = run(capsys, "ingest", str(sample / "damage"), "--db", str(tmp_path / "w.duckdb"), "--quiet")
    assert code == 0 and out.count("unchanged: already ingested") == 5


def test_ingest_accepts_globs(capsys, tmp_path, sample):
    code, out, _ = run(
        capsys, "ingest", str(sample / "damage" / "game_*.events.jsonl"), "--db", str(tmp_path / "w.duckdb"), "--quiet"
    )
    assert code == 0 and out.count("records") == 4


def test_validate_exit_codes_and_json(capsys, tmp_path):
    good = write_lines(tmp_path / "good.events.jsonl", [event("game_started")])
    bad_raise = event("action_submitted")
    bad_raise["payload"]["action"]["attack_plan"] = None
    bad = write_lines(tmp_path / "bad.events.jsonl", [event("game_started"), bad_raise, "{trunc"])
    assert run(capsys, "validate", str(good))[0] == 0
    code, out, _ = run(capsys, "validate", str(bad), "--json")
    assert code == 1
    (file,) = json.loads(out)["files"]
    assert {k: file[k] for k in ("path", "format", "records", "rejected")} == {
        "path": str(bad),
        "format": "damage",
        "records": 2,
        "rejected": 1,
    }
    assert {
        "locator": "line 2",
        "severity": "error",
        "rule": "attack_plan_required",
        "field": "payload.action.attack_plan",
    }.items() <= file["violations"][0].items()
    assert set(file["violations"][0]) == {"locator", "severity", "rule", "field", "message", "count"}
    assert file["violations"][0]["count"] == 1  # one finding; a row past the first 1,000 of a rule counts many


def test_validate_text_names_file_line_and_field(capsys, tmp_path):
    bad = write_lines(tmp_path / "bad.events.jsonl", [event("phase_changed", {"turn": 1, "phase": "lunch"})])
    code, out, _ = run(capsys, "validate", str(bad))
    assert code == 1 and f"{bad}: line 1: error: enum_value: payload.phase:" in out


@pytest.mark.parametrize(
    "suffix,magic",
    [(".png", b"\x89PNG"), (".svg", b"<svg"), (".pdf", b"%PDF"), (".html", b"<!DOCTYPE html>"), (".json", b"{")],
)
def test_plot_emotions_exports_every_format(capsys, tmp_path, damage_db, suffix, magic):
    out_file = tmp_path / f"emotions{suffix}"
    code, out, err = run(capsys, "plot", "emotions", "--db", str(damage_db), "-o", str(out_file))
    assert code == 0, err
    data = out_file.read_bytes()
    assert magic in data[:200]
    if suffix == ".html":  # offline: the Vega libraries are inlined, nothing is fetched
        assert b"cdn.jsdelivr" not in data and b"vega-lite" in data
    if suffix == ".json":
        assert json.loads(data)["$schema"].startswith("https://vega.github.io/schema/vega-lite/")


def test_plot_unknown_game_or_suffix_exits_2(capsys, tmp_path, damage_db):
    code, _, err = run(
        capsys, "plot", "emotions", "--db", str(damage_db), "--game", "nope", "-o", str(tmp_path / "x.png")
    )
    assert code == 2 and "no emotion vectors for game 'nope'" in err
    code, _, err = run(capsys, "plot", "emotions", "--db", str(damage_db), "-o", str(tmp_path / "x.gif"))
    assert code == 2 and "unknown suffix .gif" in err


def test_plot_help_names_every_figure(capsys):
    from workbench import plots

    with pytest.raises(SystemExit):
        main(["plot", "--help"])
    help_text = " ".join(capsys.readouterr().out.split()).replace("- ", "-")  # argparse wraps at hyphens
    assert f"one of: {', '.join(plots.FIGURES)}" in help_text
    assert "game id (emotions, attacks, attack-study); default:" in help_text


def test_plot_missing_database_exits_2(capsys, tmp_path):
    code, _, err = run(capsys, "plot", "emotions", "--db", str(tmp_path / "none.duckdb"), "-o", str(tmp_path / "x.png"))
    assert code == 2 and "does not exist" in err


def test_synth_same_seed_same_bytes(capsys, tmp_path):
    for name in ("a", "b"):
        assert run(capsys, "synth", "--out", str(tmp_path / name), "--seed", "3")[0] == 0
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert files_a == files_b
    for rel in files_a:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes(), rel


def test_synth_rejects_bad_scale(capsys, tmp_path):
    code, _, err = run(capsys, "synth", "--out", str(tmp_path), "--scale", "0")
    assert code == 2 and "--scale" in err


def test_emotion_figure_of_a_long_game_stays_small(tmp_path):
    from workbench.plots import emotion_trajectories

    con = workbench.connect(tmp_path / "long.duckdb")
    con.execute("""INSERT INTO damage_emotions
        SELECT 1, 'long', seq, seq // 100, 'P' || (seq % 8), 0.1, 0.2, 0.3, 0.4, sin(seq / 500), 'test'
        FROM range(1, 60001) t(seq)""")
    spec = emotion_trajectories(con, "long").to_dict()
    con.close()
    # Altair refuses panels over 5,000 rows: 8 players over 60,000 lines are averaged down.
    assert max(len(rows) for rows in spec["datasets"].values()) <= 5000


def test_ctrl_c_while_the_command_starts_is_one_line_and_exit_130(monkeypatch, capsys):
    # Ctrl-C while the command starts, before it runs: as likely there as anywhere.
    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_parser", interrupted)
    assert cli.main(["ingest", "x.events.jsonl"]) == 130
    assert capsys.readouterr().err == cli.INTERRUPTED + "\n"
