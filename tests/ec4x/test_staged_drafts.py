"""A chunk of drafts that fills a row group is parsed into a temporary table while the
screen reads it, and moved into `ec4x_orders` with each draft's validity once the
screen has said it (`reader._parsed`); a smaller chunk is inserted, then its invalid
drafts marked. Both ways store the same rows, findings, rejects and decisions."""

import json

import duckdb

import workbench
from tests.conftest import rows, write_lines
from tests.ec4x.test_drift_watch import MOVE, REPEATED, TEXTS, VALID
from workbench.ec4x import reader, tables

# Lines the parse and the checks tell apart the hard way, between the drafts.
HOSTILE = [
    VALID[:25],  # cut short: DuckDB cannot parse it, a reject
    "[1, 2]",  # JSON, no object
    "",  # blank: neither a record nor a reject
    VALID + "}",  # two values' worth of braces: DuckDB cannot parse it, ends like an object
    VALID + "   ",  # does not end with its brace, parses all the same
    MOVE.replace('"houseId": 1', '"houseId": "\\ud800"'),  # a lone surrogate: no text
    VALID.replace('"turn": 12', '"turn": 12.5'),  # a float where an int goes
    json.dumps({"turn": 3}),  # no houseId
]
LINES = [*TEXTS, *HOSTILE, *REPEATED, *HOSTILE, *TEXTS[:50]]


def _stored(db) -> dict[str, list]:
    """Everything an ingest stored of its file, in a stable order."""
    return {
        "ec4x_orders": rows(db, "SELECT * EXCLUDE (source_id) FROM ec4x_orders ORDER BY seq"),
        "decisions": rows(db, "SELECT * EXCLUDE (source_id) FROM decisions ORDER BY locator"),
        "violations": rows(db, "SELECT * EXCLUDE (source_id) FROM violations ORDER BY ALL"),
        "rejects": rows(db, "SELECT * EXCLUDE (source_id) FROM rejects ORDER BY ALL"),
        "sources": rows(db, "SELECT records, rejected FROM sources"),
    }


def _ingested(path, db, monkeypatch, row_group_rows: int) -> dict[str, list]:
    # Staged when the chunk has at least this many lines.
    monkeypatch.setattr(reader, "BULK_ROW_GROUP_ROWS", row_group_rows)
    (file,) = workbench.ingest([path], db=db).files
    assert file.status == "ingested", file.message
    return _stored(db)


def test_a_staged_chunk_stores_what_an_inserted_and_marked_one_stores(tmp_path, monkeypatch):
    path = write_lines(tmp_path / "game.orders.jsonl", LINES)
    marked = []
    mark = tables.mark
    monkeypatch.setattr(
        tables, "mark", lambda con, source_id, seqs, valid: (marked.append(seqs), mark(con, source_id, seqs, valid))
    )
    inserted = _ingested(path, tmp_path / "inserted.duckdb", monkeypatch, row_group_rows=10**9)
    assert any(marked)  # that way marks the drafts the screen refused
    staged = _ingested(path, tmp_path / "staged.duckdb", monkeypatch, row_group_rows=1)
    assert staged == inserted
    # Both hold all the kinds of outcome there are.
    valid = [row[-1] for row in staged["ec4x_orders"]]
    assert valid.count(True) > 100 and valid.count(False) > 100
    assert len(staged["rejects"]) >= 6
    assert {rule for _, _, rule, *_ in staged["violations"]} >= {
        "enum_spelling",
        "compiler_requires_field",
        "compiler_only_field",
        "not_a_json_object",
    }


def test_a_chunk_that_fills_a_row_group_marks_no_row_after_its_insert(tmp_path, monkeypatch):
    """A row group DuckDB has written as it filled is written again at the commit if a
    row of it changes: the drafts are inserted with their validity instead."""
    draft = json.loads(VALID)
    lines = [{**draft, "houseId": "three"} if n % 27 == 0 else draft for n in range(1, 301)]
    path = write_lines(tmp_path / "game.orders.jsonl", lines)
    marked = []
    monkeypatch.setattr(tables, "mark", lambda con, source_id, seqs, valid: marked.extend(seqs))
    stored = _ingested(path, tmp_path / "w.duckdb", monkeypatch, row_group_rows=100)
    assert marked == []
    assert [seq for seq, *_, valid in stored["ec4x_orders"] if not valid] == list(range(27, 301, 27))


def test_a_column_a_user_added_keeps_its_default_in_a_staged_chunk(tmp_path, monkeypatch):
    db = tmp_path / "w.duckdb"
    first = write_lines(tmp_path / "first.orders.jsonl", [VALID])
    workbench.ingest([first], db=db)
    with duckdb.connect(str(db)) as con:
        con.execute("ALTER TABLE ec4x_orders ADD COLUMN note VARCHAR DEFAULT 'mine'")
    path = write_lines(tmp_path / "game.orders.jsonl", LINES)
    _ingested(path, db, monkeypatch, row_group_rows=1)
    assert rows(db, "SELECT DISTINCT note FROM ec4x_orders") == [("mine",)]
