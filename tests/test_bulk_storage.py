"""How an ingest stores its rows: row groups of `catalog.BULK_ROW_GROUP_ROWS` rows, an
append that rewrites no row group before its own, and a database this process holds
open already shared, not refused."""

import importlib
import json
import math
import warnings

import duckdb
import pytest

import workbench
from workbench import catalog
from workbench.errors import WorkbenchError

DRAFT = json.dumps({"turn": 1, "houseId": 1, "fleetCommands": [{"fleetId": 1, "commandType": "Move",
                                                                 "targetSystemId": 1}]})
INVALID = DRAFT.replace('"houseId": 1', '"houseId": "three"')
CUT = DRAFT[:20]  # no JSON: a reject, whose line has no row


def _drafts(first: int, last: int, faults: bool = True) -> bytes:
    """Lines `first` to `last`: drafts, every 80th cut short and every 27th invalid."""
    return b"".join((CUT if faults and n % 80 == 0 else INVALID if faults and n % 27 == 0 else DRAFT).encode() + b"\n"
                    for n in range(first, last + 1))


def _row_groups(db, table: str) -> dict[int, set[tuple]]:
    """Each row group of `table`, as the blocks its segments are stored in."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        groups: dict[int, set[tuple]] = {}
        for group, column, segment, block, offset in con.execute(
                f"SELECT row_group_id, column_path, segment_id, block_id, block_offset "
                f"FROM pragma_storage_info('{table}')").fetchall():
            groups.setdefault(group, set()).add((column, segment, block, offset))
        return groups
    finally:
        con.close()


def test_an_ingest_writes_row_groups_of_the_bulk_size(tmp_path):
    lines = catalog.BULK_ROW_GROUP_ROWS + 1000
    log = tmp_path / "game.orders.jsonl"
    log.write_bytes(_drafts(1, lines, faults=False))
    (file,) = workbench.ingest([log], db=tmp_path / "w.duckdb").files
    assert (file.status, file.records) == ("ingested", lines)
    # DuckDB's own row groups hold 122,880 rows: these lines would be one.
    assert len(_row_groups(tmp_path / "w.duckdb", "ec4x_orders")) == math.ceil(lines / catalog.BULK_ROW_GROUP_ROWS) == 2


def test_an_append_rewrites_no_row_group_before_its_own(tmp_path):
    """The rows DuckDB inserts in parallel fill their row groups only in part where
    lines have no row (cut lines). Once those fit in fewer, DuckDB's vacuum would merge
    them at the append's checkpoint, rewriting every one."""
    lines = 3 * catalog.BULK_ROW_GROUP_ROWS + 700
    log, db = tmp_path / "game.orders.jsonl", tmp_path / "w.duckdb"
    log.write_bytes(_drafts(1, lines))
    workbench.ingest([log], db=db)
    before = _row_groups(db, "ec4x_orders")
    log.write_bytes(_drafts(1, lines + 1000))
    (file,) = workbench.ingest([log], db=db).files
    assert (file.status, file.records, file.rejected) == ("appended", lines + 1000 - (lines + 1000) // 80,
                                                          (lines + 1000) // 80)
    after = _row_groups(db, "ec4x_orders")
    assert len(before) == 4 and len(after) == 5
    assert all(after[group] == before[group] for group in before)


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


def test_a_database_an_ingest_of_this_process_writes_is_refused_in_one_line(tmp_path):
    db = tmp_path / "w.duckdb"
    writing = catalog.connect(db, bulk=True)
    try:
        with pytest.raises(WorkbenchError) as refused:
            catalog.connect(db)
        assert str(refused.value) == (f"database {db} is being written by an ingest in this process; "
                                      f"open it once that ingest is done")
    finally:
        writing.close()
    catalog.connect(db).close()  # and opened once it is done


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
    assert {file.format for file in report.files} == {"damage", "stellaris", "ec4x", "arena", "gm"}
    assert grown.status == "appended"
