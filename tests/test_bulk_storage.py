"""How an ingest stores its rows: row groups of `connection.BULK_ROW_GROUP_ROWS` rows, an
append that rewrites no row group before its own, and a database this process holds
open already shared, not refused. The DuckDB instance ingests attach their file to is
kept between them: what one ingest leaves in it reaches no other."""

import json
import math
import subprocess
import sys
import threading
import warnings

import duckdb
import pytest

import workbench
from workbench import connection, registry
from workbench import ingestion as ingest_module
from workbench.ec4x import tables as ec4x_tables
from workbench.errors import WorkbenchError

DRAFT = json.dumps(
    {"turn": 1, "houseId": 1, "fleetCommands": [{"fleetId": 1, "commandType": "Move", "targetSystemId": 1}]}
)
INVALID = DRAFT.replace('"houseId": 1', '"houseId": "three"')
CUT = DRAFT[:20]  # no JSON: a reject, whose line has no row
# The settings an ingest changes on the instance it attaches its file to.
SETTINGS_AN_INGEST_CHANGES = (
    "threads",
    "memory_limit",
    "preserve_insertion_order",
    "write_buffer_row_group_count",
    "checkpoint_threshold",
    "auto_checkpoint_skip_wal_threshold",
)


def _drafts(first: int, last: int, faults: bool = True) -> bytes:
    """Lines `first` to `last`: drafts, every 80th cut short and every 27th invalid."""
    return b"".join(
        (CUT if faults and n % 80 == 0 else INVALID if faults and n % 27 == 0 else DRAFT).encode() + b"\n"
        for n in range(first, last + 1)
    )


def _row_groups(db, table: str) -> dict[int, set[tuple]]:
    """Each row group of `table`, as the blocks its segments are stored in."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        groups: dict[int, set[tuple]] = {}
        for group, column, segment, block, offset in con.execute(
            f"SELECT row_group_id, column_path, segment_id, block_id, block_offset FROM pragma_storage_info('{table}')"
        ).fetchall():
            groups.setdefault(group, set()).add((column, segment, block, offset))
        return groups
    finally:
        con.close()


def test_an_ingest_writes_row_groups_of_the_bulk_size(tmp_path):
    lines = connection.BULK_ROW_GROUP_ROWS + 1000
    log = tmp_path / "game.orders.jsonl"
    log.write_bytes(_drafts(1, lines, faults=False))
    (file,) = workbench.ingest([log], db=tmp_path / "w.duckdb").files
    assert (file.status, file.records) == ("ingested", lines)
    # DuckDB's own row groups hold 122,880 rows: these lines would be one.
    assert (
        len(_row_groups(tmp_path / "w.duckdb", "ec4x_orders")) == math.ceil(lines / connection.BULK_ROW_GROUP_ROWS) == 2
    )


def _counts(db, table: str) -> list[int]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return [
            count
            for _, count in con.execute(
                f"SELECT row_group_id, max(count) FROM pragma_storage_info('{table}') WHERE column_path = '[0]' "
                f"GROUP BY ALL ORDER BY ALL"
            ).fetchall()
        ]
    finally:
        con.close()


@pytest.mark.slow
def test_an_append_rewrites_no_full_row_group(tmp_path):
    """The drafts' row groups are full but the last, lines DuckDB cannot parse (cut
    lines) left out: a row group left short by them would be merged with the next at a
    checkpoint once their rows fit in fewer, each of them rewritten."""
    size = connection.BULK_ROW_GROUP_ROWS
    lines = 3 * size + 700
    log, db = tmp_path / "game.orders.jsonl", tmp_path / "w.duckdb"
    log.write_bytes(_drafts(1, lines))
    workbench.ingest([log], db=db)
    before = _row_groups(db, "ec4x_orders")
    rows = lines - lines // 80
    assert _counts(db, "ec4x_orders") == [size, size, rows - 2 * size]
    log.write_bytes(_drafts(1, lines + 1000))
    (file,) = workbench.ingest([log], db=db).files
    assert (file.status, file.records, file.rejected) == (
        "appended",
        lines + 1000 - (lines + 1000) // 80,
        (lines + 1000) // 80,
    )
    after = _row_groups(db, "ec4x_orders")
    assert all(after[group] == before[group] for group in before)


@pytest.mark.slow
def test_a_log_grown_line_by_line_is_stored_in_as_many_row_groups_as_read_at_once(tmp_path):
    """Each append writes its rows as a row group of their own; the checkpoint that
    closes the database merges them into the last, as the rows of one ingest would be."""
    log, db, once = tmp_path / "game.orders.jsonl", tmp_path / "grown.duckdb", tmp_path / "once.duckdb"
    for step in range(1, 31):
        log.write_bytes(_drafts(1, 20 * step, faults=False))
        workbench.ingest([log], db=db)
    workbench.ingest([log], db=once)
    for table in ("ec4x_orders", "decisions"):
        assert len(_counts(db, table)) <= len(_counts(once, table)) + 1
    assert db.stat().st_size <= 2 * once.stat().st_size


def test_an_ingest_shares_a_database_this_process_holds_open(tmp_path):
    log = tmp_path / "game.orders.jsonl"
    log.write_bytes(_drafts(1, 10))
    db = tmp_path / "w.duckdb"
    held = workbench.connect(db)
    try:
        (file,) = workbench.ingest([log], db=db).files
        assert file.status == "ingested"
        assert held.execute("SELECT count(*) FROM ec4x_orders").fetchall() == [(10,)]
    finally:
        held.close()


def test_an_ingest_beside_a_connection_of_this_process_leaves_its_settings_alone(tmp_path):
    """The ingest shares that connection's instance (`commits_write_the_file` sets
    nothing on it): a notebook's database keeps its own log and checkpoints."""
    log, db = tmp_path / "game.orders.jsonl", tmp_path / "w.duckdb"
    log.write_bytes(_drafts(1, 10))
    held = workbench.connect(db)
    try:
        before = {name: _setting(held, name) for name in SETTINGS_AN_INGEST_CHANGES}
        workbench.ingest([log], db=db)
        assert {name: _setting(held, name) for name in SETTINGS_AN_INGEST_CHANGES} == before
    finally:
        held.close()


def test_the_last_file_of_an_ingest_commits_into_the_database_file(tmp_path, monkeypatch):
    """The files before it commit to DuckDB's write-ahead log, written into the file once
    at the end; the last one's rows go to the file at its commit, not to the log first
    (which the detach would have written into the file right after)."""
    db = tmp_path / "w.duckdb"
    logs = [tmp_path / f"{name}.orders.jsonl" for name in "abc"]
    for log in logs:
        log.write_bytes(_drafts(1, 300))
    in_transaction, log_sizes = ingest_module._in_transaction, []

    def committed(con, path, load):
        report = in_transaction(con, path, load)
        wal = tmp_path / "w.duckdb.wal"
        log_sizes.append(wal.stat().st_size if wal.exists() else 0)
        return report

    monkeypatch.setattr(ingest_module, "_in_transaction", committed)
    files = workbench.ingest(logs, db=db).files
    assert [f.status for f in files] == ["ingested"] * 3
    assert log_sizes[0] > 0 and log_sizes[1] > log_sizes[0] and log_sizes[2] == 0
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM ec4x_orders").fetchall() == [(3 * (300 - 300 // 80),)]
    finally:
        con.close()


def test_a_database_an_ingest_of_this_process_writes_is_refused_in_one_line(tmp_path):
    db = tmp_path / "w.duckdb"
    with connection.bulk_connection(db):
        with pytest.raises(WorkbenchError) as refused:
            connection.connect(db)
        assert str(refused.value) == (
            f"database {db} is being written by an ingest in this process; open it once that ingest is done"
        )
    connection.connect(db).close()  # and opened once it is done


@pytest.mark.slow
def test_an_ingest_of_every_format_warns_of_nothing(tmp_path, sample):
    """Run under a caller's `-W error` (a test suite's, say), any warning of DuckDB or
    pandas an ingest let through would fail it. Each format's files, whole and then
    grown."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report = workbench.ingest([sample], db=tmp_path / "w.duckdb")
        log = tmp_path / "game.orders.jsonl"
        log.write_bytes(_drafts(1, 100))
        workbench.ingest([log], db=tmp_path / "w.duckdb")
        log.write_bytes(_drafts(1, 200))
        (grown,) = workbench.ingest([log], db=tmp_path / "w.duckdb").files
    assert {file.format for file in report.files} == {fmt.name for fmt in registry.BUILT_IN if fmt.generate}
    assert grown.status == "appended"


def test_an_ingest_spills_where_a_connection_to_its_file_would(tmp_path):
    db = tmp_path / "w.duckdb"
    plain = duckdb.connect(str(db))
    where = plain.execute("SELECT current_setting('temp_directory')").fetchall()
    plain.close()
    with connection.bulk_connection(db) as writing:
        assert writing.execute("SELECT current_setting('temp_directory')").fetchall() == where == [(f"{db}.tmp",)]


def test_one_thread_nested_keeps_one_thread_until_the_outer_block_ends():
    con = duckdb.connect()
    con.execute("SET threads = 2")

    def threads() -> int:
        return int(con.execute("SELECT current_setting('threads')").fetchall()[0][0])

    with connection.one_thread(con):
        with connection.one_thread(con):
            assert threads() == 1
        assert threads() == 1
    assert threads() == 2


def _setting(con, name: str):
    return con.execute(f"SELECT current_setting('{name}')").fetchall()[0][0]


def test_an_ingest_leaves_its_database_written_and_free(tmp_path):
    """Detached from the kept instance, the file is whole on disk (no WAL left to
    replay) and can be opened at once by a plain connection of the same process."""
    log, db = tmp_path / "game.orders.jsonl", tmp_path / "w.duckdb"
    log.write_bytes(_drafts(1, 100))
    workbench.ingest([log], db=db)
    log.write_bytes(_drafts(1, 150))
    (file,) = workbench.ingest([log], db=db).files
    assert file.status == "appended"
    assert not (tmp_path / "w.duckdb.wal").exists()
    con = duckdb.connect(str(db))
    try:
        assert con.execute("SELECT count(*) FROM ec4x_orders").fetchall() == [(150 - 150 // 80,)]
    finally:
        con.close()


def test_settings_and_temporary_tables_of_an_ingest_reach_no_later_one(tmp_path):
    fresh = duckdb.connect()
    defaults = {name: _setting(fresh, name) for name in SETTINGS_AN_INGEST_CHANGES}
    fresh.close()
    with connection.bulk_connection(tmp_path / "a.duckdb") as con:
        connection.commits_write_the_file(con)
        assert _setting(con, "checkpoint_threshold") != defaults["checkpoint_threshold"]
        assert _setting(con, "write_buffer_row_group_count") != defaults["write_buffer_row_group_count"]
        con.execute("SET threads = 1")
        con.execute("SET memory_limit = '100MB'")
        con.execute("SET preserve_insertion_order = false")
        con.execute("CREATE TEMP TABLE scratch AS SELECT 1 AS one")
    with connection.bulk_connection(tmp_path / "b.duckdb") as con:
        # DuckDB's own, but the row groups an ingest writes as they fill (`connection._attached`).
        assert {name: _setting(con, name) for name in defaults} == {**defaults, "write_buffer_row_group_count": 1}
        assert _setting(con, "temp_directory") == f"{tmp_path / 'b.duckdb'}.tmp"
        assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'scratch'").fetchall() == [(0,)]


def test_a_failed_ingest_writes_nothing_and_the_next_one_works(tmp_path):
    db = tmp_path / "w.duckdb"
    with connection.bulk_connection(db) as con:
        con.execute("CREATE TABLE kept (n INTEGER)")
    with pytest.raises(RuntimeError):
        with connection.bulk_connection(db) as con:
            con.execute("BEGIN")
            con.execute("INSERT INTO kept VALUES (1)")
            raise RuntimeError("a load failed")
    with connection.bulk_connection(db) as con:
        assert con.execute("SELECT count(*) FROM kept").fetchall() == [(0,)]
    duckdb.connect(str(db)).close()  # and the file is free


def test_ingests_in_two_threads_each_write_their_own_database(tmp_path):
    log = tmp_path / "game.orders.jsonl"
    log.write_bytes(_drafts(1, 400))
    expected = workbench.ingest([log], db=tmp_path / "once.duckdb").files[0]
    found, failures = {}, []

    def ingest(n: int) -> None:
        try:
            for round_ in range(5):
                found[n, round_] = workbench.ingest([log], db=tmp_path / f"{n}-{round_}.duckdb").files[0]
        except BaseException as exc:  # said by the assertion below
            failures.append(exc)

    threads = [threading.Thread(target=ingest, args=(n,)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert {(f.status, f.records, f.rejected, len(f.violations)) for f in found.values()} == {
        ("ingested", expected.records, expected.rejected, len(expected.violations))
    }


# Ingests, forks, and the child leaves as a program does (its interpreter shut down),
# after an ingest of its own or at once; prints how the child ended.
FORKED = """
import os, sys, workbench
log, db, child = sys.argv[1:]
workbench.ingest([log], db=db + ".parent")
pid = os.fork()
if pid == 0:
    if child == "ingests":
        workbench.ingest([log], db=db + ".child")
    sys.exit(0)
print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""


@pytest.mark.parametrize("child", ["ingests", "exits"])
@pytest.mark.slow
def test_a_process_forked_after_an_ingest_works_and_ends_cleanly(tmp_path, child):
    """The child holds no instance of the parent's: DuckDB's threads are not forked, so
    one it used aborted it, and one it closed, even at exit, crashed it."""
    log, db = tmp_path / "game.orders.jsonl", tmp_path / "w.duckdb"
    log.write_bytes(_drafts(1, 200))
    ran = subprocess.run(
        [sys.executable, "-c", FORKED, str(log), str(db), child], capture_output=True, text=True, timeout=120
    )
    assert (ran.returncode, ran.stdout.strip()) == (0, "0"), ran.stderr
    if child == "ingests":
        con = duckdb.connect(f"{db}.child", read_only=True)
        try:
            assert con.execute("SELECT count(*) FROM ec4x_orders").fetchall() == [(200 - 200 // 80,)]
        finally:
            con.close()


def test_an_instance_that_spilled_to_disk_is_not_kept(tmp_path):
    """DuckDB cannot move the temporary directory of an instance that used it: kept, it
    would spill the next ingest's work beside this database."""
    with connection.bulk_connection(tmp_path / "a.duckdb") as con:
        con.execute("SET memory_limit = '32MB'")
        con.execute("SET threads = 1")
        con.execute(
            "CREATE TEMP TABLE big AS SELECT range AS i, repeat(md5(range::VARCHAR), 2) AS s FROM range(1000000)"
        )
        assert (tmp_path / "a.duckdb.tmp").is_dir()
    assert not (tmp_path / "a.duckdb.tmp").exists()
    with connection.bulk_connection(tmp_path / "b.duckdb") as con:
        assert _setting(con, "temp_directory") == f"{tmp_path / 'b.duckdb'}.tmp"


def test_an_interrupted_load_beside_a_connection_of_this_process_gives_it_its_threads_back(tmp_path, monkeypatch):
    """A Ctrl-C in a statement aborts the file's transaction, so the load's own `SET
    threads` back fails while it is open; the shared instance gets it once rolled back."""
    log, db = tmp_path / "game.orders.jsonl", tmp_path / "w.duckdb"
    log.write_bytes(_drafts(1, 300))
    held = workbench.connect(db)

    def interrupted(con, *args):
        with pytest.raises(duckdb.Error):
            con.execute("SELECT error('the statement a Ctrl-C interrupted')")
        raise KeyboardInterrupt

    try:
        held.execute("SET threads = 3")
        monkeypatch.setattr(ec4x_tables, "insert_drafts", interrupted)
        with pytest.raises(KeyboardInterrupt):
            workbench.ingest([log], db=db)
        assert held.execute("SELECT current_setting('threads')").fetchall() == [(3,)]
        monkeypatch.undo()
        assert workbench.ingest([log], db=db).files[0].status == "ingested"
    finally:
        held.close()
