"""Table declarations: DDL, typed reads out of JSON, explicit bindings, and paths
checked against the models when a table is declared."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any

import duckdb
import pyarrow as pa
import pytest
from pydantic import BaseModel, Field

from workbench.schema import Column, Int64, SchemaError, Table, missing_field, run_on

ROOT = Path(__file__).resolve().parents[1]


class Inner(BaseModel):
    kind: str


class Step(BaseModel):
    stage: str
    ms: float


class Record(BaseModel):
    turn: Int64
    inner: Inner | None = None
    steps: list[Step] = []
    payload: Any = None


def test_paths_through_optionals_lists_and_untyped_values():
    assert missing_field(Record, "turn") is None
    assert missing_field(Record, "inner.kind") is None
    assert missing_field(Record, "steps[].stage") is None
    assert missing_field(Record, "payload.anything.below") is None  # untyped: not checkable
    assert missing_field(Record, "payload.kind", {"payload": (Inner,)}) is None
    assert missing_field(Record, "payload.kinds", {"payload": (Inner,)}) == "no field `kinds` in Inner"
    assert missing_field(Record, "turns") == "no field `turns` in Record"
    assert missing_field(Record, "turn.value") == "`turn` is not an object with fields"


def test_a_path_the_model_does_not_have_fails_the_declaration_naming_the_column():
    with pytest.raises(SchemaError, match=r"column t\.kind reads `inner\.knd`: no field `knd` in Inner"):
        Table("t", (Column("kind", "VARCHAR", path="inner.knd"),), model=Record)
    with pytest.raises(SchemaError, match="names no model"):
        Table("t", (Column("kind", "VARCHAR", path="inner.kind"),))
    with pytest.raises(SchemaError, match="unknown type"):
        Column("x", "TEXT")


def test_ddl_names_every_column_with_its_constraints():
    table = Table(
        "t",
        (
            Column("id", "BIGINT", primary_key=True, default="nextval('ids')"),
            Column("name", "VARCHAR", "a doc", required=True),
            Column("level", "VARCHAR", check="level IN ('a', 'b')"),
        ),
        unique=("name", "level"),
        added=("level",),
    )
    assert table.ddl() == (
        "CREATE TABLE IF NOT EXISTS t (\n"
        "    id BIGINT PRIMARY KEY DEFAULT nextval('ids'),\n"
        "    name VARCHAR NOT NULL,  -- a doc\n"
        "    level VARCHAR CHECK (level IN ('a', 'b')),\n"
        "    UNIQUE (name, level)\n"
        ");\n"
        "ALTER TABLE t ADD COLUMN IF NOT EXISTS level VARCHAR CHECK (level IN ('a', 'b'));\n"
    )


TYPED = Table(
    "typed",
    (
        Column("turn", "BIGINT", path="turn"),
        Column("kind", "VARCHAR", path="inner.kind"),
        Column("stages", "VARCHAR[]", path="steps[].stage"),
        Column("total_ms", "DOUBLE", path="steps[].ms"),
        Column("payload", "JSON", path="payload"),
    ),
    model=Record,
)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            '{"turn": 3, "inner": {"kind": "a"}, "steps": [{"stage": "x", "ms": 1.5}, {"stage": "y", "ms": 2}],'
            ' "payload": {"k": 1}}',
            (3, "a", ["x", "y"], 3.5, '{"k":1}'),
        ),
        # a value of another JSON type is NULL, never a failed cast
        ('{"turn": "3", "inner": {"kind": 7}, "steps": [], "payload": null}', (None, None, [], None, "null")),
        # no list at all: no elements, and no total
        ('{"turn": 2.5}', (None, None, [], None, None)),
    ],
)
def test_columns_read_their_paths_and_give_null_for_other_types(line, expected):
    con = duckdb.connect()
    row = con.execute(f"SELECT {TYPED.select_paths('j')} FROM (SELECT CAST(? AS JSON) AS j)", [line]).fetchone()
    assert row == expected


def test_a_lenient_column_reads_the_text_of_a_value_of_another_type():
    con = duckdb.connect()
    table = Table(
        "l",
        (Column("who", "VARCHAR", path="turn", lenient=True), Column("delta", "DOUBLE", path="payload", lenient=True)),
        model=Record,
    )
    line = '{"turn": 7, "payload": "0.25"}'
    assert con.execute(f"SELECT {table.select_paths('j')} FROM (SELECT CAST(? AS JSON) AS j)", [line]).fetchone() == (
        "7",
        0.25,
    )


def test_a_column_read_from_one_record_type_must_be_in_that_type():
    # `turn` is in the union (Record has it) but not in Inner, the type it is read from
    with pytest.raises(SchemaError, match="column u.turn reads `turn`: no field `turn` in Inner"):
        Table("u", (Column("turn", "BIGINT", path="turn", of=(Inner,)),), model=(Record, Inner))


def test_insert_rows_matches_columns_by_name_not_position():
    con = duckdb.connect()
    table = Table("pairs", (Column("a", "VARCHAR"), Column("b", "VARCHAR"), Column("j", "JSON")))
    con.execute(table.ddl())
    table.insert_rows(con, {"b": ["second"], "a": ["first"], "j": ['{"x": 1}']})
    table.insert_rows(con, pa.table({"a": ["only a"]}))
    assert con.execute("SELECT a, b, j FROM pairs").fetchall() == [
        ("first", "second", '{"x": 1}'),
        ("only a", None, None),
    ]
    with pytest.raises(duckdb.Error):  # a name the table does not have
        con.execute(table.insert("SELECT 'x' AS c"))


def test_a_bound_table_is_read_under_its_name_with_prepared_parameters():
    con = duckdb.connect()
    rows = pa.table({"n": [1, 2, 3]})
    assert run_on(con, rows, "SELECT sum(n) + $add, $name FROM lines", "lines", {"add": 10, "name": "it's"}) == [
        (16, "it's")
    ]


def test_a_bound_table_hides_every_other_python_name():
    con = duckdb.connect()
    rows = pa.table({"n": [1]})
    other = pa.table({"m": [2]})  # noqa: F841 - a local the statement must not see
    with pytest.raises(duckdb.CatalogException):
        run_on(con, rows, "SELECT * FROM other", "lines")


@pytest.mark.parametrize(
    ("module", "old", "new", "column"),
    [
        ("gm/models.py", "    narrative: Text\n", "    story: Text\n", "gm_responses.narrative"),
        ("arena/models.py", "    tick: Tick\n", "    tock: Tick\n", "arena_decisions.tick"),
        ("ec4x/orders.py", "    houseId: Int64\n", "    house: Int64\n", "ec4x_orders.house_id"),
        # a field a BIGINT column stores, no longer bounded to 64 bits
        (
            "damage/models.py",
            "    turn: Int64\n    pot: Int64\n",
            "    turn: int\n    pot: Int64\n",
            "damage_events.turn: `payload.turn` is an int not bounded",
        ),
        # a payload field read only by a notebook question
        (
            "damage/models.py",
            "    raw_delta: float | None = None\n",
            "    delta: float | None = None\n",
            "damage_team_attack.intended_delta",
        ),
        # paths read outside a table declaration
        (
            "damage/models.py",
            '    phase: Literal["affect", "betting", "showdown", "discussion"]\n',
            '    stage_name: Literal["affect", "betting", "showdown", "discussion"]\n',
            "drift value of phase_changed:",
        ),
    ],
)
def test_renaming_a_model_field_fails_at_import_naming_the_column(tmp_path, module, old, new, column):
    copy = tmp_path / "workbench"
    shutil.copytree(ROOT / "workbench", copy, ignore=shutil.ignore_patterns("__pycache__"))
    source = copy / module
    text = source.read_text()
    assert old in text
    source.write_text(text.replace(old, new))
    result = subprocess.run(
        [sys.executable, "-c", "import workbench.registry, workbench.damage.queries"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(tmp_path), "PATH": ""},
    )
    assert result.returncode != 0
    assert (f"column {column} reads" if "." in column and " " not in column else column) in result.stderr


def test_json_columns_are_stored_with_zstd(tmp_path):
    # Records as written are most of a database: DuckDB stores them with zstd, the
    # compression its declaration names, once they are checkpointed to the file.
    table = Table("records", (Column("id", "BIGINT"), Column("payload", "JSON"), Column("name", "VARCHAR")))
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    con.execute(table.ddl())
    con.execute(
        "INSERT INTO records SELECT i, json_object('k', i, 'text', repeat('x', i % 50)), 'n' || (i % 7) "
        "FROM range(5000) r(i)"
    )
    con.execute("CHECKPOINT")
    compression = dict(
        con.execute(
            "SELECT column_name, any_value(compression) FROM pragma_storage_info('records') "
            "WHERE segment_type <> 'VALIDITY' GROUP BY ALL"
        ).fetchall()
    )
    assert compression["payload"] == "ZSTD"
    assert compression["name"] != "ZSTD"  # other text columns keep DuckDB's own choice


class Unbounded(BaseModel):
    turn: int
    ticks: list[int] = []
    small: Annotated[int, Field(ge=0, le=10)] = 0


@pytest.mark.parametrize("path", ["turn", "ticks[]"])
def test_a_bigint_column_refuses_a_field_not_bounded_to_64_bits(path):
    # DuckDB makes 2**63 NULL in a BIGINT: the model must break its rule first.
    with pytest.raises(SchemaError, match=f"column t.n: `{re.escape(path)}` is an int not bounded"):
        Table("t", (Column("n", "BIGINT[]" if "[]" in path else "BIGINT", path=path),), model=Unbounded)
    Table("t", (Column("n", "BIGINT", path="small"),), model=Unbounded)  # bounded within: fine
    Table("t", (Column("n", "DOUBLE", path="turn"),), model=Unbounded)  # not stored as BIGINT
