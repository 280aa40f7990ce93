"""ARCHITECTURE.md's "add a format" recipe, followed from a test: a tiny dice game,
declared here, registered, then ingested, validated, grown and queried like the five
real formats."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import pytest
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

import workbench
from workbench import registry
from workbench.catalog import DECISIONS
from workbench.formats import Counts, Format, LoadContext
from workbench.jsonl import context_batches, store_batch
from workbench.schema import Column, Table, run_on
from workbench.validation import violation


# 1. The model: what the specification says a record is.
class Roll(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    player: str
    roll: Annotated[int, Field(ge=1, le=6)]
    model: str | None = None


LINE = TypeAdapter(Roll)

# 2. The table, declared once; each path is checked against the model right here.
ROLLS = Table("dice_rolls", (
    Column("source_id", "BIGINT", required=True),
    Column("seq", "BIGINT", "1-based line number", required=True),
    Column("player", "VARCHAR", path="player"),
    Column("roll", "BIGINT", path="roll"),
    Column("model", "VARCHAR", path="model"),
    Column("valid", "BOOLEAN", "no error violation on the line", required=True),
), model=Roll)

INSERT_ROLLS = ROLLS.insert(f"""
SELECT $source_id AS source_id, seq, {ROLLS.select_paths('j')}, valid
FROM (SELECT seq, valid, TRY_CAST(raw AS JSON) AS j FROM lines) WHERE json_type(j) = 'OBJECT'
""")
DERIVE_DECISIONS = DECISIONS.insert("""
SELECT source_id, 'dice' AS format, player AS agent_id, model, 'roll ' || roll AS action, valid,
       'line ' || seq AS locator
FROM dice_rolls WHERE source_id = $source_id
""")


# 3. The loader: validate each batch, store its lines, derive the shared tables.
def load(ctx: LoadContext) -> Counts:
    records = rejected = 0
    for batch in context_batches(ctx):
        violations, reject_at = [], dict(batch.unreadable)
        for index, text in enumerate(batch.texts):
            if index in reject_at:
                continue
            try:
                LINE.validate_json(text)
            except ValidationError as exc:
                for error in exc.errors(include_url=False):
                    if error["type"] in ("json_invalid", "model_type"):
                        reject_at[index] = error["msg"]
                        break
                    violations.append(violation(batch.locator(index), error, error["loc"]))

        def insert(lines):
            return run_on(ctx.con, lines, INSERT_ROLLS, "lines", {"source_id": ctx.source_id})[0][0]

        counts = store_batch(ctx, batch, violations, reject_at, insert)
        records, rejected = records + counts.records, rejected + counts.rejected
    ctx.con.execute(DERIVE_DECISIONS, {"source_id": ctx.source_id})
    return Counts(records, rejected)


# 4. The format value, and its place in the registry.
DICE = Format(
    name="dice",
    tables=(ROLLS,),
    claims=lambda path, head: path.name.endswith(".dice.jsonl"),
    load=load,
    line_based=True,
    describe="dice rolls (*.dice.jsonl)",
)


@pytest.fixture
def dice(monkeypatch):
    monkeypatch.setitem(registry.FORMATS, "dice", DICE)


LINES = [
    '{"player": "P1", "roll": 4, "model": "m-a"}',
    '{"player": "P2", "roll": 7, "model": "m-b"}',  # out of range
    "",
    "not json",
    '{"player": "P1", "roll": 6, "extra": 1}',  # unknown key
]


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_a_sixth_format_is_ingested_validated_and_queried(tmp_path, dice):
    log = write(tmp_path / "table-1.dice.jsonl", LINES)
    [file] = workbench.ingest([log], db=tmp_path / "w.duckdb").files
    assert (file.format, file.records, file.rejected) == ("dice", 3, 1)
    con = workbench.connect(tmp_path / "w.duckdb", read_only=True)
    assert con.sql("SELECT seq, player, roll, model, valid FROM dice_rolls ORDER BY seq").fetchall() == [
        (1, "P1", 4, "m-a", True), (2, "P2", 7, "m-b", False), (5, "P1", 6, None, False)]
    assert con.sql("SELECT locator, rule, field FROM violations ORDER BY line, rule").fetchall() == [
        ("line 2", "less_than_equal", "roll"), ("line 4", "not_a_json_object", "(record)"), ("line 5", "unknown_key", "extra")]
    assert con.sql("SELECT locator, raw FROM rejects").fetchall() == [("line 4", "not json")]
    assert con.sql("SELECT format, agent_id, model, action, valid FROM decisions ORDER BY locator").fetchall() == [
        ("dice", "P1", "m-a", "roll 4", True), ("dice", "P2", "m-b", "roll 7", False),
        ("dice", "P1", None, "roll 6", False)]


def test_a_sixth_format_grows_like_the_others(tmp_path, dice):
    log = write(tmp_path / "table-2.dice.jsonl", LINES[:2])
    db = tmp_path / "w.duckdb"
    workbench.ingest([log], db=db)
    with log.open("a") as out:
        out.write("".join(line + "\n" for line in LINES[2:]))
    [file] = workbench.ingest([log], db=db).files
    assert file.status.startswith("appended")
    grown = workbench.connect(db, read_only=True)
    (tmp_path / "once").mkdir()
    workbench.ingest([write(tmp_path / "once" / "table-2.dice.jsonl", LINES)], db=tmp_path / "once.duckdb")
    once = workbench.connect(tmp_path / "once.duckdb", read_only=True)
    for sql in ("SELECT seq, player, roll, valid FROM dice_rolls ORDER BY seq",
                "SELECT locator, rule FROM violations ORDER BY locator, rule",
                "SELECT action, valid FROM decisions ORDER BY locator"):
        assert grown.sql(sql).fetchall() == once.sql(sql).fetchall()
