"""What a format gives the ingest engine (`workbench.formats`): which files it claims,
read from a file's name and its first JSON object, whether it reads them line by line,
the tables and views it creates, and a generator loaded only when called. The claims are
held to the Damage specification's envelope (seed 003, section 2: every persisted event
is a JSONL line with schema_version, type, game_id, ts and payload); the DDL is run by
DuckDB."""

import json
import random
import sys
from pathlib import Path

import duckdb
import pytest

from workbench.formats import BOM, Counts, Format, first_json_line, generated_by, jsonl_claims
from workbench.schema import Column, Table

# the envelope's keys, as seed 003 lists them
ENVELOPE = {"schema_version", "type", "game_id", "ts", "payload"}
EVENT = {
    "schema_version": "0.2",
    "type": "game_started",
    "game_id": "g-1",
    "ts": "2026-02-06T09:38:54Z",
    "payload": {"players": 4, "turns": 20},
}


# --- the first JSON object of a file ------------------------------------------------------------


def test_the_first_line_that_is_not_blank_is_read_past_a_byte_order_mark():
    head = b"\n  \r\n" + json.dumps(EVENT).encode() + b'\n{"type": "second"}\n'
    assert first_json_line(head) == EVENT
    assert first_json_line(BOM + json.dumps(EVENT).encode()) == EVENT
    assert BOM == "\ufeff".encode("utf-8")  # U+FEFF written in UTF-8


@pytest.mark.parametrize(
    "head",
    [
        b"",  # nothing
        b"\n\n",  # blank lines only
        b"[1, 2]\n",  # JSON, but no object
        b'"game_started"\n',
        b"{not json\n" + json.dumps(EVENT).encode(),  # the first line decides
        b"[" * 100_000,  # nested past what the parser follows
    ],
)
def test_a_head_whose_first_line_is_no_json_object_gives_none(head):
    assert first_json_line(head) is None


# --- which files a format claims ------------------------------------------------------------------


def test_a_jsonl_format_claims_its_suffix_or_a_first_object_with_every_key_of_its_signature():
    claims = jsonl_claims(".events.jsonl", ENVELOPE)
    line = json.dumps(EVENT).encode() + b"\n"
    assert claims(Path("replays/g-1.events.jsonl"), b"")  # its name is enough
    assert claims(Path("logs/run.jsonl"), line)  # any .jsonl whose first object is an envelope
    assert claims(Path("logs/run.jsonl"), BOM + b"\n" + line)
    without_ts = json.dumps({k: v for k, v in EVENT.items() if k != "ts"}).encode()
    assert not claims(Path("logs/run.jsonl"), without_ts)  # one key of the envelope missing
    assert not claims(Path("logs/run.json"), line)  # not JSON Lines by its name
    assert not claims(Path("logs/run.jsonl"), b"[" + line + b"]")


# --- a format's tables, and how it reads -----------------------------------------------------------


def no_load(ctx) -> Counts:
    return Counts(0, 0)


def test_a_format_s_ddl_creates_its_tables_and_views_in_duckdb():
    rolls = Table(
        "dice_rolls",
        (
            Column("source_id", "BIGINT", required=True),
            Column("seq", "BIGINT"),
            Column("roll", "BIGINT", doc="the die's face"),
        ),
    )
    dice = Format(
        "dice",
        (rolls,),
        claims=lambda path, head: False,
        load=no_load,
        views="CREATE OR REPLACE VIEW dice_sixes AS SELECT * FROM dice_rolls WHERE roll = 6;\n",
    )
    con = duckdb.connect()
    try:
        con.execute(dice.ddl())
        con.execute("INSERT INTO dice_rolls VALUES (1, 1, 6), (1, 2, 3), (1, 3, 6)")
        assert con.execute("SELECT seq FROM dice_sixes ORDER BY seq").fetchall() == [(1,), (3,)]
        assert con.execute(
            "SELECT column_name, data_type, is_nullable FROM information_schema.columns "
            "WHERE table_name = 'dice_rolls' ORDER BY ordinal_position"
        ).fetchall() == [("source_id", "BIGINT", "NO"), ("seq", "BIGINT", "YES"), ("roll", "BIGINT", "YES")]
        con.execute(dice.ddl())  # again, over what it made: nothing changes
        assert con.execute("SELECT count(*) FROM dice_rolls").fetchall() == [(3,)]
    finally:
        con.close()


def test_a_format_reads_lines_as_its_line_based_says_for_each_path():
    whole = Format("a", (), claims=lambda path, head: True, load=no_load)
    lines = Format("b", (), claims=lambda path, head: True, load=no_load, line_based=True)
    # OTLP's two forms: an exporter's lines grow, a single export is read whole
    either = Format(
        "c",
        (),
        claims=lambda path, head: True,
        load=no_load,
        line_based=lambda path: not path.name.endswith(".otlp.json"),
    )
    assert not whole.reads_lines(Path("x.jsonl")) and lines.reads_lines(Path("x.sav"))
    assert either.reads_lines(Path("t.otlp.jsonl")) and not either.reads_lines(Path("t.otlp.json"))


def test_a_bound_name_must_be_a_plain_identifier():
    for bad in ("_batch", "two words", "1st"):
        with pytest.raises(ValueError, match="a batch is bound under a plain name not starting with _"):
            Format("x", (), claims=lambda path, head: True, load=no_load, bound_names=(bad,))


# --- a generator, loaded when called ---------------------------------------------------------------


def test_a_generator_s_module_is_imported_when_it_is_first_called(tmp_path, monkeypatch):
    name = "dice_synthetic_corpus_for_a_test"
    (tmp_path / f"{name}.py").write_text(
        "def generate(folder, scale, rng):\n"
        "    path = folder / 'rolls.dice.jsonl'\n"
        "    path.write_text(''.join(f'{rng.randint(1, 6)}\\n' for _ in range(scale)))\n"
        "    return [{'path': path.name, 'lines': scale}]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    generate = generated_by(name)
    assert name not in sys.modules  # made, not yet loaded
    out = tmp_path / "out"
    out.mkdir()
    assert generate(out, 5, random.Random(3)) == [{"path": "rolls.dice.jsonl", "lines": 5}]
    assert name in sys.modules and len((out / "rolls.dice.jsonl").read_text().split()) == 5
    with pytest.raises(ModuleNotFoundError):
        generated_by("no_module_of_this_name_anywhere")(out, 1, random.Random(0))
