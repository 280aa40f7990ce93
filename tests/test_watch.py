"""`workbench ingest --watch`, end to end in a subprocess: it follows a growing log and a
new file, a reader connects read-only while it runs, and Ctrl-C stops it with exit 0."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from tests.conftest import ROOT

DEADLINE = 60  # seconds for any one thing the watcher should do


def read_when_free(db: Path, sql: str):
    """Connect read-only, as a notebook does; between scans this must succeed."""
    end = time.monotonic() + DEADLINE
    while True:
        try:
            con = duckdb.connect(str(db), read_only=True)
        except duckdb.Error:
            if time.monotonic() > end:
                raise
            time.sleep(0.1)
            continue
        try:
            return con.execute(sql).fetchall()
        finally:
            con.close()


def wait_for_line(proc, lines: list[str], needle: str) -> str:
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        line = proc.stdout.readline()
        if line:
            lines.append(line)
            if needle in line:
                return line
        elif proc.poll() is not None:
            break
    raise AssertionError(f"no line with {needle!r}; got {lines}")


def test_watch_follows_growth_and_new_files(tmp_path, sample):
    source = sorted((sample / "damage").glob("game_*.events.jsonl"))[0]
    content = source.read_bytes().splitlines(keepends=True)
    logs = tmp_path / "logs"
    logs.mkdir()
    log = logs / source.name
    log.write_bytes(b"".join(content[:10]))
    db = tmp_path / "w.duckdb"
    proc = subprocess.Popen(
        [sys.executable, "-m", "workbench.cli", "ingest", str(logs), "--db", str(db), "--watch", "--interval", "0.3"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=dict(os.environ),
    )
    lines: list[str] = []
    try:
        wait_for_line(proc, lines, "watching")
        wait_for_line(proc, lines, "10 records")
        assert read_when_free(db, "SELECT count(*) FROM damage_events") == [(10,)]

        with open(log, "ab") as handle:  # the game goes on
            handle.write(b"".join(content[10:25]))
        assert "appended 15 lines, 25 records" in wait_for_line(proc, lines, "appended")
        assert read_when_free(db, "SELECT count(*) FROM damage_events") == [(25,)]

        second = logs / "second.events.jsonl"  # a new game starts
        second.write_bytes(b"".join(content[:5]))
        wait_for_line(proc, lines, "second.events.jsonl")
        assert read_when_free(db, "SELECT count(*) FROM sources") == [(2,)]
    finally:
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=DEADLINE)
    tail = [line for line in out.splitlines() if line.strip()]
    assert proc.returncode == 0
    assert tail == ["workbench: stopped watching; every file read so far is in the database"]
    assert not any("Traceback" in line for line in lines)


@pytest.mark.parametrize("interval", ["0", "-1"])
def test_watch_refuses_a_bad_interval_in_one_line_before_it_starts(tmp_path, capsys, interval):
    from workbench.cli import main

    (tmp_path / "a.events.jsonl").write_text("")
    assert main(["ingest", str(tmp_path), "--db", str(tmp_path / "w.duckdb"), "--watch", "--interval", interval]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "--interval must be more than 0 seconds" in err
    assert not (tmp_path / "w.duckdb").exists()
