"""The ingest and validation API (`workbench.ingest`, `workbench.validate`): what the
report says of each file, what the database holds after, and what changes when a file
grows, is rewritten or is read again unchanged. The expected counts are the lines the
tests write: seed 002 names the universal tools an Agent Arena decision may call, and
`fly` is none of them."""

from __future__ import annotations

import json

import pytest

import workbench
from tests.conftest import rows, write_lines
from workbench.errors import WorkbenchError


def decision(tick: int, tool: str = "idle") -> str:
    return json.dumps({"agent_id": "scout", "tick": tick, "tool": tool, "params": {}, "model": "m-a"})


@pytest.fixture
def log(tmp_path):
    # three decisions, the second calling a tool seed 002 does not have, then a line that is no JSON
    path = write_lines(tmp_path / "ep1.decisions.jsonl", [decision(0), decision(1, "fly"), decision(2)])
    with path.open("a") as handle:
        handle.write("{not json\n")
    return path


def test_an_ingest_reports_each_file_and_keeps_every_line(tmp_path, log):
    db = tmp_path / "w.duckdb"
    report = workbench.ingest([log], db=db)
    [file] = report.files
    assert (file.format, file.status, file.records, file.rejected) == ("arena", "ingested", 3, 1)
    assert report.failed == [] and report.has_errors()
    assert [v.locator for v in file.violations if v.severity == "error"] == ["line 2", "line 4"]  # the tool, the JSON
    assert rows(db, "SELECT count(*), count(*) FILTER (WHERE valid) FROM decisions") == [(3, 2)]
    assert rows(db, "SELECT locator, raw FROM rejects") == [("line 4", "{not json")]


def test_the_same_file_again_is_unchanged_and_a_grown_one_appended(tmp_path, log):
    db = tmp_path / "w.duckdb"
    workbench.ingest([log], db=db)
    assert [f.status for f in workbench.ingest([log], db=db).files] == ["unchanged"]
    with log.open("a") as handle:
        handle.write(decision(3) + "\n")
    [grown] = workbench.ingest([log], db=db).files
    assert (grown.status, grown.lines_added) == ("appended", 1)
    assert rows(db, "SELECT count(*) FROM decisions") == [(4,)]


def test_a_rewritten_file_replaces_its_rows(tmp_path, log):
    db = tmp_path / "w.duckdb"
    workbench.ingest([log], db=db)
    write_lines(log, [decision(0, "fly")])
    [again] = workbench.ingest([log], db=db).files
    assert (again.status, again.records, again.rejected) == ("replaced", 1, 0)
    assert rows(db, "SELECT count(*), count(*) FILTER (WHERE valid) FROM decisions") == [(1, 0)]
    assert rows(db, "SELECT count(*) FROM rejects") == [(0,)]


def test_a_validation_says_what_an_ingest_would_and_writes_no_database(tmp_path, log, monkeypatch):
    monkeypatch.chdir(tmp_path)
    [file] = workbench.validate([log]).files
    assert (file.format, file.records, file.rejected) == ("arena", 3, 1)
    assert [v.locator for v in file.violations if v.severity == "error"] == ["line 2", "line 4"]  # the tool, the JSON
    assert not (tmp_path / "data").exists()


def test_a_file_no_format_reads_and_an_unknown_format_are_said(tmp_path):
    stray = tmp_path / "notes.txt"
    stray.write_text("hello\n")
    [file] = workbench.ingest([stray], db=tmp_path / "w.duckdb").files
    assert file.status == "failed" and "notes.txt" in file.message
    with pytest.raises(WorkbenchError, match="nim"):
        workbench.ingest([stray], db=tmp_path / "w.duckdb", format="nim")
