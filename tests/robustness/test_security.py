"""No code execution from data, no archive paths on disk, no markup injected by logs."""

import json
import re

import altair as alt
import polars as pl

import workbench
from tests.conftest import ROOT, write_lines
from tests.damage.events import event
from workbench.plots import emotion_trajectories, save

SOURCES = sorted((ROOT / "workbench").rglob("*.py"))
SCRIPT = "</script><script>alert('pwned')</script>"


def test_no_eval_exec_or_pickle_in_the_package():
    # `exec("")` runs nothing: the CLI's way to clear the interpreter's mark of an
    # interrupted `exec` (`exiting.end`).
    pattern = re.compile(r'\b(eval|exec)\s*\((?!""\))|\bpickle\b|\bmarshal\b|yaml\.load\(|shell=True')
    offenders = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in SOURCES
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert offenders == []


def test_archive_members_are_never_extracted_to_disk():
    offenders = [str(p.relative_to(ROOT)) for p in SOURCES if re.search(r"\.extract(all)?\(", p.read_text())]
    assert offenders == []


def test_html_export_cannot_be_closed_by_log_text(tmp_path):
    chart = (
        alt.Chart(pl.DataFrame({"who": [SCRIPT, "<img src=x onerror=alert(1)>"], "n": [1, 2]}))
        .mark_bar()
        .encode(x="who:N", y="n:Q", tooltip="who:N")
    )
    html = save(chart, tmp_path / "x.html").read_text()
    assert "alert('pwned')</script>" not in html and "<img src=x" not in html
    assert "\\u003c/script>" in html  # still there, escaped


def test_player_ids_from_a_log_are_escaped_in_the_emotion_figure(tmp_path):
    record = event("hand_started")
    record["payload"]["players"][0]["player_id"] = SCRIPT
    db = tmp_path / "w.duckdb"
    workbench.ingest([write_lines(tmp_path / "g.events.jsonl", [record])], db=db)
    con = workbench.connect(db)
    try:
        html = save(emotion_trajectories(con), tmp_path / "e.html").read_text()
    finally:
        con.close()
    assert "alert('pwned')</script>" not in html
    spec = json.loads(emotion_trajectories_spec(db))
    assert SCRIPT in json.dumps(spec)  # the data is intact, only its HTML form is escaped


def emotion_trajectories_spec(db) -> str:
    con = workbench.connect(db)
    try:
        return emotion_trajectories(con).to_json()
    finally:
        con.close()


# --- what a terminal is sent ----------------------------------------------------------------

TITLE_AND_CLEAR = "\x1b]0;pwned\x07\x1b[2J"  # sets the window's title, clears the screen


def on_a_terminal(argv: list[str], cwd) -> bytes:
    """What `workbench ARGV` writes to a terminal (a pseudo-terminal: standard output and
    error both)."""
    import os
    import pty
    import subprocess
    import sys

    main, child = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "workbench.cli", *argv], stdout=child, stderr=child, cwd=cwd)
    os.close(child)
    written = b""
    while True:
        try:
            chunk = os.read(main, 1 << 16)
        except OSError:  # the child is gone: EIO
            break
        if not chunk:
            break
        written += chunk
    proc.wait(timeout=120)
    os.close(main)
    return written


def test_a_log_model_alias_or_file_name_reaches_a_terminal_escaped(tmp_path):
    folder = tmp_path / f"logs{TITLE_AND_CLEAR}"
    folder.mkdir()
    decisions = [
        {"agent_id": "a1", "tick": t, "tool": "idle", "params": {}, "model": f"m{TITLE_AND_CLEAR}"} for t in range(3)
    ]
    decisions += [{"agent_id": "a1", "tick": t, "tool": "fly", "params": {}, "model": "other"} for t in range(3)]
    log = write_lines(folder / f"ep{TITLE_AND_CLEAR}.decisions.jsonl", decisions)
    with log.open("a") as out:
        out.write(f"not json {TITLE_AND_CLEAR}\n")  # a reject: its raw text shown by `records`
    (tmp_path / "aliases.json").write_text(json.dumps({"other": f"o{TITLE_AND_CLEAR}"}))
    db = str(tmp_path / "w.duckdb")
    aliases = ["--aliases", str(tmp_path / "aliases.json")]
    for argv in (
        ["ingest", str(folder), "--db", db],
        ["validate", str(log)],
        ["records", "--db", db, "--limit", "0"],
        ["scorecard", "--db", db, *aliases],
        ["compare", "--db", db, *aliases],
        ["side-by-side", f"m{TITLE_AND_CLEAR}", "other", "--db", db],
        ["records", "--db", db, "--model", f"x{TITLE_AND_CLEAR}"],
    ):
        written = on_a_terminal(argv, tmp_path)
        assert b"\x1b" not in written and b"\x07" not in written, (argv, written)
        assert b"\\x1b]0;pwned\\x07\\x1b[2J" in written, (argv, written)


def test_what_is_not_a_terminal_gets_the_text_as_it_is(tmp_path, capsys):
    from workbench.cli import main

    log = write_lines(
        tmp_path / "ep.decisions.jsonl",
        [{"agent_id": "a1", "tick": 1, "tool": "idle", "params": {}, "model": f"m{TITLE_AND_CLEAR}"}],
    )
    assert main(["ingest", str(log), "--db", str(tmp_path / "w.duckdb"), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["records", "--db", str(tmp_path / "w.duckdb"), "--json"]) == 0
    [record] = json.loads(capsys.readouterr().out)
    assert record["model"] == f"m{TITLE_AND_CLEAR}"


def test_escaped_keeps_line_ends_tabs_and_a_progress_bar_s_carriage_returns():
    from workbench.terminal import escaped

    assert escaped("\ra\tb\n") == "\ra\tb\n"
    assert escaped("x\ry\u202ez\x9b") == "x\\x0dy\\u202ez\\x9b"
