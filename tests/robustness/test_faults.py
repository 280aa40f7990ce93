"""Faults around ingest: a killed process, a locked database, a re-run."""

import os
import re
import signal
import subprocess
import sys
from datetime import UTC
from pathlib import Path

import duckdb
import pytest

from tests.conftest import ROOT
from workbench.damage.synth import play_game


def big_log(path: Path, events: int) -> Path:
    import random
    from datetime import datetime

    rng = random.Random(5)
    with open(path, "w") as out:
        written = 0
        while written < events:
            text = play_game(rng, datetime(2026, 2, 6, tzinfo=UTC), 8, 40).text()
            out.write(text)
            written += text.count("\n")
    return path


def workbench_cli(*args) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "workbench.cli", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_progress(proc: subprocess.Popen, percent: int) -> None:
    """Read the progress bar until it shows `percent`: the file is then mid-ingest."""
    seen = ""
    while proc.poll() is None:
        seen += proc.stderr.read(1)
        shown = re.findall(r"(\d+)%\|", seen[-200:])
        if shown and int(shown[-1]) >= percent:
            return
    raise AssertionError(f"ingest ended before {percent}%: {seen[-300:]}")


@pytest.mark.slow
def test_killed_ingest_leaves_no_partial_source_and_rerun_completes(tmp_path):
    log = big_log(tmp_path / "big.events.jsonl", 120_000)
    small = big_log(tmp_path / "small.events.jsonl", 100)
    db = tmp_path / "w.duckdb"
    assert workbench_cli("ingest", str(small), "--db", str(db), "--quiet").wait() == 0
    proc = workbench_cli("ingest", str(log), "--db", str(db))
    wait_for_progress(proc, percent=25)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    con = duckdb.connect(str(db), read_only=True)
    try:
        sources = con.execute("SELECT path FROM sources").fetchall()
        orphans = con.execute(
            "SELECT count(*) FROM damage_events WHERE source_id NOT IN (SELECT source_id FROM sources)"
        ).fetchall()[0][0]
    finally:
        con.close()
    assert sources == [(str(small),)]
    assert orphans == 0
    rerun = workbench_cli("ingest", str(log), str(small), "--db", str(db), "--quiet")
    out, err = rerun.communicate()
    assert rerun.returncode == 0, err
    lines = sum(1 for line in open(log) if line.strip())
    assert f"big.events.jsonl: damage: {lines} records, 0 rejected" in out
    assert "small.events.jsonl: unchanged" in out


def test_locked_database_names_it_and_says_what_to_do(tmp_path):
    db = tmp_path / "w.duckdb"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb, sys; c = duckdb.connect({str(db)!r}); print('ready', flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        log = big_log(tmp_path / "g.events.jsonl", 50)
        proc = workbench_cli("ingest", str(log), "--db", str(db))
        out, err = proc.communicate()
    finally:
        holder.communicate("")
    assert proc.returncode == 2
    assert err.strip().count("\n") == 0 and str(db) in err and "locked" in err and "close" in err
