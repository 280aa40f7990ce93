"""Reading the companion's history writes nothing anywhere: the database is opened
read-only and immutable, by a percent-quoted URI, so no `-wal`, `-shm` or journal file
appears beside it and nothing in its folder changes, whatever the folder is called."""

import hashlib
import os
import sqlite3
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

import workbench
from tests.conftest import rows
from workbench.stellaris import history

SCHEMA = """
CREATE TABLE sessions (id TEXT PRIMARY KEY, save_id TEXT NOT NULL, empire_name TEXT);
CREATE TABLE snapshots (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, game_date TEXT,
    military_power INTEGER, colony_count INTEGER, wars_count INTEGER, energy_net REAL, alloys_net REAL,
    full_briefing_json TEXT, event_state_json TEXT);
"""
ROW = "INSERT INTO snapshots (session_id, game_date, military_power, colony_count, energy_net) VALUES (?, ?, ?, ?, ?)"


def wal_history(path: Path, dates=("2300.01.01", "2301.01.01")) -> Path:
    """A WAL-mode history, closed cleanly (so its log is folded in and removed)."""
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA journal_mode = WAL").fetchone() == ("wal",)
    con.executescript(SCHEMA)
    con.execute("INSERT INTO sessions VALUES ('s1', 'save-1', 'Sol Alliance')")
    con.executemany(ROW, [("s1", date, 1000 + n, 3, 10.0 + n) for n, date in enumerate(dates)])
    con.commit()
    con.close()
    return path


def folder_state(folder: Path) -> dict:
    """Every entry of the folder with its size, mtime and bytes; and the folder's own mtime."""
    state = {".": folder.stat().st_mtime_ns}
    for entry in sorted(folder.iterdir()):
        info = entry.stat()
        state[entry.name] = (info.st_size, info.st_mtime_ns, hashlib.sha256(entry.read_bytes()).hexdigest())
    return state


ODD_NAMES = ["plain", "odd ?#%&=;'name ü", "100% sure?mode=rw#x"]


@pytest.mark.parametrize("folder_name", ODD_NAMES)
def test_ingest_and_validate_leave_the_folder_as_it_was(tmp_path, folder_name):
    folder = tmp_path / folder_name
    folder.mkdir()
    path = wal_history(folder / "companion history.db")
    before = folder_state(folder)
    assert list(before) == [".", "companion history.db"]
    db = tmp_path / "out" / "w.duckdb"
    [file] = workbench.ingest([folder], db=db).files
    assert (file.status, file.records, file.violations) == ("ingested", 2, [])
    assert rows(db, "SELECT game_date, empire_name, military_power FROM stellaris_snapshots ORDER BY day") == [
        ("2300.01.01", "Sol Alliance", 1000.0),
        ("2301.01.01", "Sol Alliance", 1001.0),
    ]
    [checked] = workbench.validate([path]).files
    assert checked.records == 2
    assert folder_state(folder) == before


def test_the_uri_is_read_only_immutable_and_quoted(tmp_path):
    path = tmp_path / "a?b#c%d e" / "h.db"
    uri = history.read_only_uri(path)
    address, query = uri.split("?", 1)
    assert query == "mode=ro&immutable=1"
    assert "#" not in address and " " not in address
    assert Path(unquote(urlsplit(address).path)) == path.resolve()


def test_a_log_the_companion_has_not_folded_in_is_reported_and_left_alone(tmp_path):
    folder = tmp_path / "history"
    folder.mkdir()
    path = wal_history(folder / "companion.db")
    # The companion still running: a newer row sits in the write-ahead log only.
    writer = sqlite3.connect(path)
    try:
        writer.execute("PRAGMA wal_autocheckpoint = 0")
        writer.execute(ROW, ("s1", "2302.01.01", 1002, 3, 12.0))
        writer.commit()
        assert (folder / "companion.db-wal").stat().st_size > 0
        before = folder_state(folder)
        db = tmp_path / "w.duckdb"
        [file] = workbench.ingest([path], db=db).files
        assert folder_state(folder) == before
    finally:
        writer.close()
    assert (file.status, file.records) == ("ingested", 2)
    [warning] = file.violations
    assert (warning.locator, warning.severity, warning.rule, warning.field) == (
        "database",
        "warning",
        "history_wal_unread",
        "companion.db-wal",
    )
    assert "not loaded" in warning.message
    assert rows(db, "SELECT game_date FROM stellaris_snapshots ORDER BY day") == [("2300.01.01",), ("2301.01.01",)]


def test_detection_writes_nothing_either(tmp_path):
    path = wal_history(tmp_path / "companion.db")
    before = folder_state(tmp_path)
    head = path.read_bytes()[:100]
    assert history.claims(path, head)
    assert folder_state(tmp_path) == before
    assert sorted(os.listdir(tmp_path)) == ["companion.db"]
