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
    # interrupted `exec` (`cli.run`).
    pattern = re.compile(r'\b(eval|exec)\s*\((?!""\))|\bpickle\b|\bmarshal\b|yaml\.load\(|shell=True')
    offenders = [f"{p.relative_to(ROOT)}:{n}" for p in SOURCES
                 for n, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert offenders == []


def test_archive_members_are_never_extracted_to_disk():
    offenders = [str(p.relative_to(ROOT)) for p in SOURCES
                 if re.search(r"\.extract(all)?\(", p.read_text())]
    assert offenders == []


def test_html_export_cannot_be_closed_by_log_text(tmp_path):
    chart = alt.Chart(pl.DataFrame({"who": [SCRIPT, "<img src=x onerror=alert(1)>"], "n": [1, 2]})).mark_bar().encode(
        x="who:N", y="n:Q", tooltip="who:N")
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
