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
from workbench.errors import WorkbenchError

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
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=dict(os.environ),
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


@pytest.mark.parametrize("interval", ["0", "-1", "nan", "inf"])
def test_watch_refuses_a_bad_interval_in_one_line_before_it_starts(tmp_path, capsys, interval):
    from workbench.cli import main

    (tmp_path / "a.events.jsonl").write_text("")
    assert main(["ingest", str(tmp_path), "--db", str(tmp_path / "w.duckdb"), "--watch", "--interval", interval]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "--interval must be a number of seconds more than 0" in err
    assert not (tmp_path / "w.duckdb").exists()


# --- one scan at a time, in process --------------------------------------------------------


def decisions(path: Path, tools: list[str]) -> Path:
    import json

    path.write_text(
        "".join(
            json.dumps({"agent_id": "a", "tick": tick, "tool": tool, "params": {}}) + "\n"
            for tick, tool in enumerate(tools)
        )
    )
    return path


def scans(paths, db, **options):
    from workbench.watch import watch

    return watch([str(p) for p in paths], db=db, interval=0.01, **options)


def test_a_same_size_rewrite_with_its_times_put_back_is_read_again(tmp_path):
    log = decisions(tmp_path / "ep.decisions.jsonl", ["idle", "idle", "idle"])
    following = scans([tmp_path], tmp_path / "w.duckdb")
    assert [f.status for f in next(following).files] == ["ingested"]
    before = log.stat()
    decisions(log, ["idle", "fly!", "idle"])  # as many bytes, one decision now invalid
    assert log.stat().st_size == before.st_size
    os.utime(log, ns=(before.st_atime_ns, before.st_mtime_ns))  # `touch -r`, `rsync -t`
    report = next(following)
    assert [(f.status, f.severity_counts()["error"]) for f in report.files] == [("replaced", 1)]


def test_the_stamp_changes_with_the_last_block_even_where_size_and_times_do_not(tmp_path, monkeypatch):
    from workbench import watch

    log = decisions(tmp_path / "ep.decisions.jsonl", ["idle", "idle"])
    first, times = watch.stamp(log), log.stat()
    log.write_bytes(log.read_bytes().replace(b"idle", b"IDLE", 1))
    os.utime(log, ns=(times.st_atime_ns, times.st_mtime_ns))
    # device, inode, size and mtime as they were: the hash of the end of the file tells
    assert watch.stamp(log)[:4] == first[:4] and watch.stamp(log)[-1] != first[-1]
    assert watch.stamp(tmp_path / "gone") == ()


def test_a_failed_write_is_said_in_one_line_and_tried_again(tmp_path, monkeypatch):
    from workbench import watch

    decisions(tmp_path / "ep.decisions.jsonl", ["idle"])
    real, calls = watch.ingest_files, []

    def disk_full_once(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise OSError(28, "No space left on device")
        return real(*args, **kwargs)

    monkeypatch.setattr(watch, "ingest_files", disk_full_once)
    following = scans([tmp_path], tmp_path / "w.duckdb")
    failed = next(following)
    assert isinstance(failed, WorkbenchError) and str(failed) == "cannot write the database: No space left on device"
    assert [f.status for f in next(following).files] == ["ingested"]  # space is back: the file is read


def test_a_file_that_failed_is_tried_again_at_the_next_scan(tmp_path, monkeypatch):
    from workbench import ingestion as ingest

    decisions(tmp_path / "ep.decisions.jsonl", ["idle"])
    real, calls = ingest._load_whole, []

    def fails_once(*args):
        calls.append(1)
        if len(calls) == 1:
            raise duckdb.IOException("IO Error: No space left on device")
        return real(*args)

    monkeypatch.setattr(ingest, "_load_whole", fails_once)
    following = scans([tmp_path], tmp_path / "w.duckdb")
    assert [f.status for f in next(following).files] == ["failed"]
    assert [f.status for f in next(following).files] == ["ingested"]


def test_a_file_gone_is_missing_once_and_pruned_when_asked(tmp_path):
    keep, gone = (
        decisions(tmp_path / "a.decisions.jsonl", ["idle"]),
        decisions(tmp_path / "b.decisions.jsonl", ["idle"]),
    )
    following = scans([tmp_path], tmp_path / "w.duckdb")
    next(following)
    gone.unlink()
    report = next(following)
    assert [(f.path, f.status) for f in report.files] == [(str(gone), "missing")]
    decisions(keep, ["idle", "idle"])  # later changes do not say it again
    assert [f.status for f in next(following).files] == ["appended"]
    pruning = scans([tmp_path], tmp_path / "w.duckdb", prune=True)
    assert [(f.path, f.status) for f in next(pruning).files if f.status not in ("ingested", "unchanged")] == [
        (str(gone), "pruned")
    ]
