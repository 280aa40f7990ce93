"""What a declaration, its schema and its files may and may not cause: each case below
broke the contract once (a second red team's, of the declared formats). The expected
values are the contract's: one line and exit 2, a located finding, or what a one-shot
ingest gives."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import duckdb
import pytest

from tests.declared.test_declared import SCHEMA, TOML, game, ingest  # noqa: F401  (`game` is a fixture)
from workbench.cli import main
from workbench.declared import load


def run(*argv, cwd: Path, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """The command in a process of its own, bounded: a case that hung once must fail, not hang."""
    return subprocess.run(
        [sys.executable, "-m", "workbench.cli", *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        timeout=timeout,
    )


def rows(db: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


def one_line_refusal(result: subprocess.CompletedProcess, said: str) -> None:
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and said in result.stderr and "Traceback" not in result.stderr


# --- the schema is checked alone ----------------------------------------------------


@pytest.fixture
def web(tmp_path):
    """A web server on 127.0.0.1 that counts what is asked of it (and answers a schema)."""
    asked = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802  (the library's name)
            asked.append(self.path)
            body = json.dumps({"type": "string"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}", asked
    server.shutdown()


def test_a_ref_to_the_network_is_refused_and_never_fetched(game, tmp_path, web, capsys):
    """It was fetched once per line, with no time bound (a server that never answers hung the run)."""
    url, asked = web
    (game / "rps.schema.json").write_text(
        json.dumps({**SCHEMA, "properties": {**SCHEMA["properties"], "seat": {"$ref": f"{url}/seat.json"}}})
    )
    assert ingest(game, tmp_path / "w.duckdb") == 2
    err = capsys.readouterr().err
    assert f"$ref '{url}/seat.json' at /properties/seat does not lead to a part of the schema" in err
    assert asked == [] and not (tmp_path / "w.duckdb").exists()


def test_a_ref_to_another_file_is_refused_and_never_read(game, tmp_path, capsys):
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"type": "string"}))
    (game / "rps.schema.json").write_text(json.dumps({"properties": {"seat": {"$ref": outside.as_uri()}}}))
    assert ingest(game, tmp_path / "w.duckdb") == 2
    assert "does not lead to a part of the schema; a declared schema is checked alone" in capsys.readouterr().err


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#"},
        {"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}},
        {"anyOf": [{"$ref": "#"}]},
    ],
)
def test_a_schema_that_refers_to_itself_without_end_is_refused(game, tmp_path, capsys, schema):
    """It was taken: every line then failed its check, every model 0% valid, 50x slower."""
    (game / "rps.schema.json").write_text(json.dumps(schema))
    assert ingest(game, tmp_path / "w.duckdb") == 2
    assert "its schema refers to itself without end" in capsys.readouterr().err


def test_a_schema_that_refers_to_itself_through_the_line_is_taken(game, tmp_path):
    """The other side of the bound: a tree of moves, each checked by the schema of the whole."""
    (game / "rps.schema.json").write_text(
        json.dumps(
            {**SCHEMA, "properties": {**SCHEMA["properties"], "replies": {"type": "array", "items": {"$ref": "#"}}}}
        )
    )
    assert ingest(game, tmp_path / "w.duckdb") == 0
    assert rows(tmp_path / "w.duckdb", "SELECT count(*) FILTER (WHERE valid) FROM decisions") == [(8,)]


@pytest.mark.parametrize(
    "value, said",
    [
        ("1979-05-27", "[schema].properties.seat.const is datetime.date(1979, 5, 27)"),
        ("nan", "[schema].properties.turn.maximum is nan"),
    ],
)
def test_an_inline_schema_holds_json_values_only(game, tmp_path, capsys, value, said):
    key = "seat" if value[0].isdigit() else "turn"
    keyword = "const" if key == "seat" else "maximum"
    text = TOML.replace('schema = "rps.schema.json"\n', "") + f"\n[schema.properties.{key}]\n{keyword} = {value}\n"
    (game / "rps.toml").write_text(text)
    assert ingest(game, tmp_path / "w.duckdb") == 2
    assert said in capsys.readouterr().err


def test_a_pattern_that_backtracks_without_end_leaves_its_line_unchecked_and_the_run_goes_on(
    game, tmp_path, monkeypatch
):
    monkeypatch.setattr(load, "CHECK_SECONDS", 0.3)
    (game / "rps.schema.json").write_text(json.dumps({"properties": {"note": {"pattern": "^(a+)+$"}}}))
    with (game / "g1.rps.jsonl").open("a") as log:
        log.write(json.dumps({"match": {"id": "g1"}, "turn": 3, "seat": "A", "note": "a" * 40 + "!"}) + "\n")
    db = tmp_path / "w.duckdb"
    assert ingest(game, db) == 0
    assert rows(db, "SELECT locator, rule, message FROM violations") == [
        (
            "line 5",
            "schema",
            "the schema could not be checked on this line within 0.3 s (a pattern that backtracks without end?)",
        )
    ]
    assert rows(db, "SELECT count(*), count(*) FILTER (WHERE valid) FROM decisions") == [(13, 12)]


# --- a turn is a whole number -------------------------------------------------------


@pytest.mark.parametrize(
    "turn, stored, rule",
    [
        (2**63 - 1, 2**63 - 1, None),  # the largest a BIGINT holds
        (-(2**63), -(2**63), None),
        (2**63, None, "less_than_equal"),  # one past: it was NULL, the line valid, no finding
        (-(2**63) - 1, None, "greater_than_equal"),
        (2.5, None, "int_type"),  # it was rounded to 3
        ("7", None, "int_type"),  # it was read as 7
        (True, None, "int_type"),
        (None, None, None),  # no turn said
    ],
)
def test_a_turn_is_a_whole_number_a_bigint_holds_or_a_finding_on_its_field(game, tmp_path, turn, stored, rule):
    (game / "rps.schema.json").write_text(json.dumps({"type": "object"}))
    for log in game.glob("*.rps.jsonl"):
        log.unlink()
    (game / "t.rps.jsonl").write_text(json.dumps({"turn": turn, "seat": "A", "move": "rock"}) + "\n")
    db = tmp_path / "w.duckdb"
    assert ingest(game, db) == 0
    assert rows(db, "SELECT turn, valid FROM rps_records") == [(stored, rule is None)]
    assert rows(db, "SELECT rule, field FROM violations") == ([(rule, "turn")] if rule else [])


# --- files: whose they are, and what their paths say --------------------------------


def test_a_file_the_declaration_names_is_its_whatever_it_holds(game, tmp_path):
    """A line shaped as a Damage event took the file to `damage`, one as an Agent Arena
    decision to `arena`."""
    (game / "a.rps.jsonl").write_text(json.dumps({"type": "x", "payload": {}, "game_id": "g9", "turn": 1}) + "\n")
    (game / "b.rps.jsonl").write_text(json.dumps({"agent_id": "a", "tick": 1, "tool": "t", "params": {}}) + "\n")
    db = tmp_path / "w.duckdb"
    assert ingest(game, db) == 0
    assert rows(db, "SELECT DISTINCT format FROM sources") == [("rps",)]
    assert rows(db, "SELECT count(*) FROM rps_records") == [(14,)]


def test_the_file_expression_reads_the_full_path_wherever_the_command_runs(game, tmp_path):
    """Ingested as `.` from its folder, the model was `(unknown)`; by its full path, `gpt4o`."""
    folder = game / "gpt4o"
    folder.mkdir()
    (folder / "m.rps.jsonl").write_text(
        json.dumps({"match": {"id": "g"}, "turn": 1, "seat": "A", "move": "rock"}) + "\n"
    )
    (game / "rps.toml").write_text(
        "file = '/(?P<model>[a-z0-9]+)/[^/]+$'\n" + TOML.replace('model = "agent.model"\n', "")
    )
    from_here = run(
        "ingest", ".", "--db", str(tmp_path / "a.duckdb"), "--spec", str(game / "rps.toml"), "--quiet", cwd=folder
    )
    from_above = run(
        "ingest",
        str(folder / "m.rps.jsonl"),
        "--db",
        str(tmp_path / "b.duckdb"),
        "--spec",
        str(game / "rps.toml"),
        "--quiet",
        cwd=tmp_path,
    )
    assert from_here.returncode == from_above.returncode == 0, from_here.stderr
    for db in ("a.duckdb", "b.duckdb"):
        assert rows(tmp_path / db, "SELECT model FROM decisions") == [("gpt4o",)]


def test_a_name_that_is_not_utf8_taken_by_the_file_expression_is_stored_with_its_bytes_as_xnn(game, tmp_path):
    """The whole file failed with DuckDB's "Python Conversion Failure"."""
    (game / "rps.toml").write_text(
        "file = '(?P<model>[^/]+)[.]rps[.]jsonl$'\n" + TOML.replace('model = "agent.model"\n', "")
    )
    for log in game.glob("*.rps.jsonl"):
        log.unlink()
    name = os.fsdecode(b"m\xff.rps.jsonl")
    (game / name).write_text(json.dumps({"match": {"id": "g"}, "turn": 1, "seat": "A", "move": "rock"}) + "\n")
    db = tmp_path / "w.duckdb"
    assert ingest(game, db) == 0
    assert rows(db, "SELECT model, valid FROM decisions") == [("m\\xff", True)]


# --- a declaration that changed -----------------------------------------------------


def test_files_read_under_a_declaration_that_changed_are_read_again_as_a_first_ingest_would(game, tmp_path, capsys):
    """They were `unchanged`, their old rows kept; lines appended then were read under the
    new one, and the database mixed the two."""
    db, once = tmp_path / "w.duckdb", tmp_path / "once.duckdb"
    assert ingest(game, db) == 0
    lenient = {**SCHEMA, "properties": {**SCHEMA["properties"], "move": {"type": "string"}}}
    (game / "rps.schema.json").write_text(json.dumps(lenient))
    with (game / "g1.rps.jsonl").open("a") as log:
        log.write(json.dumps({"match": {"id": "g1"}, "turn": 3, "seat": "A", "move": "spock"}) + "\n")
    capsys.readouterr()
    assert main(["ingest", str(game), "--db", str(db), "--spec", str(game / "rps.toml")]) == 0
    said = capsys.readouterr().out
    assert said.count("read again: its format's declaration changed since") == 3
    assert ingest(game, once) == 0
    query = "SELECT s.path, d.locator, d.valid, d.turn FROM decisions d JOIN sources s USING (source_id) ORDER BY ALL"
    assert rows(db, query) == rows(once, query)
    assert rows(db, "SELECT count(*) FILTER (WHERE valid) FROM decisions") == [(11,)]  # only g2's turn 0 fails
    assert main(["ingest", str(game), "--db", str(db), "--spec", str(game / "rps.toml")]) == 0
    assert capsys.readouterr().out.count("unchanged") == 3  # read under this declaration: nothing to do


# --- files that are not files, paths that are not paths ------------------------------


@pytest.mark.parametrize("where", ["spec", "schema", "folder"])
def test_a_fifo_where_a_declaration_or_its_schema_is_read_is_refused_in_one_line(game, tmp_path, where):
    """Each hung: the folder's hung every command."""
    fifo = game / ("fifo.toml" if where != "schema" else "rps.schema.json")
    if where == "schema":
        fifo.unlink()
    os.mkfifo(fifo)
    if where == "folder":
        result = run(
            "ingest", str(game), "--db", str(tmp_path / "w.duckdb"), cwd=tmp_path, env={"WORKBENCH_FORMATS": str(game)}
        )
        assert result.returncode == 0, result.stderr
        assert "fifo.toml left out" in result.stderr and "it is a FIFO, not a file" in result.stderr
        assert rows(tmp_path / "w.duckdb", "SELECT count(*) FROM rps_records") == [(12,)]
        return
    spec = fifo if where == "spec" else game / "rps.toml"
    result = run("ingest", str(game), "--db", str(tmp_path / "w.duckdb"), "--spec", str(spec), cwd=tmp_path)
    one_line_refusal(result, "it is a FIFO, not a file")


def test_a_device_named_as_a_declaration_is_refused_before_a_byte_is_read(tmp_path):
    """/dev/zero filled memory: "internal error: MemoryError"."""
    result = run("validate", str(tmp_path), "--spec", "/dev/zero", cwd=tmp_path)
    one_line_refusal(result, "cannot read a declared format from /dev/zero: it is a character device, not a file")


def test_a_declaration_with_a_byte_order_mark_is_read(game, tmp_path):
    (game / "rps.toml").write_bytes(b"\xef\xbb\xbf" + TOML.encode())
    assert ingest(game, tmp_path / "w.duckdb") == 0


def test_a_declaration_whose_name_is_not_utf8_is_read(game, tmp_path):
    """It was refused: "is not UTF-8 text, so nothing here is named so"."""
    named = game / os.fsdecode(b"r\xff.toml")
    (game / "rps.toml").rename(named)
    result = run("ingest", str(game), "--db", str(tmp_path / "w.duckdb"), "--spec", str(named), "--quiet", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert rows(tmp_path / "w.duckdb", "SELECT count(*) FROM rps_records") == [(12,)]


@pytest.mark.parametrize(
    "argv, said",
    [
        (["validate", "x", "--spec", ""], "--spec is given empty; give a path"),
        (["compact", "--parquet", ""], "--parquet is given empty; give a path"),  # it compacted the folder here
        (["ingest", ""], "a path is given empty; give a path"),
    ],
)
def test_a_path_given_empty_is_refused(tmp_path, argv, said):
    one_line_refusal(run(*argv, cwd=tmp_path), said)


def test_compact_refuses_a_manifest_that_is_a_fifo(tmp_path):
    """It hung."""
    (tmp_path / "tree").mkdir()
    os.mkfifo(tmp_path / "tree" / "_manifest.parquet")
    result = run("compact", "--parquet", str(tmp_path / "tree"), cwd=tmp_path)
    one_line_refusal(
        result, "_manifest.parquet is not a manifest `workbench ingest --engine spark` wrote: it is not a file"
    )


def test_a_tree_holds_a_file_unchanged_only_as_its_declaration_reads_it_now(game):
    """The Spark engine's tree keeps, per file, how its format read it (`reading`): a
    file of a declaration that changed since is not held unchanged."""
    from workbench import registry
    from workbench.spark.load import _unchanged

    fmt = registry.declare(game / "rps.toml")
    status = (game / "g1.rps.jsonl").stat()
    known = {
        "size": status.st_size,
        "mtime_ns": status.st_mtime_ns,
        "ctime_ns": status.st_ctime_ns,
        "format": "rps",
        "parts": ["sources/format=rps/s1-x_0.parquet"],
        "reading": fmt.reading,
    }
    present = set(known["parts"])
    assert _unchanged(present, known, status, True, None)
    (game / "rps.schema.json").write_text(json.dumps({"type": "object"}))
    assert registry.declare(game / "rps.toml").reading != fmt.reading
    assert not _unchanged(present, known, status, True, None)
    assert not _unchanged(present, {**known, "reading": None}, status, True, None)  # a tree written before
