"""A plugin is code of someone else's: whatever it raises while it is imported or while it
reads a file (an exception, SystemExit, a KeyboardInterrupt of its own) leaves that plugin,
or that file, out in one line, and the built-in formats, the other files and `--help`
go on. No name a plugin gives is written into SQL unless it is a plain SQL name, and its
statements only make tables and views of its own."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import warnings
from importlib.metadata import EntryPoint
from pathlib import Path

import duckdb
import pytest

import workbench
from tests.conftest import ROOT, write_lines
from workbench import registry
from workbench.errors import PluginWarning
from workbench.plugin import Column, Counts, Format, Table

BUILT_IN = [fmt.name for fmt in registry.BUILT_IN]


def plugin_module(folder: Path, name: str, body: str) -> EntryPoint:
    """A module `name` in `folder` (put on the path) whose FORMAT the entry point names."""
    (folder / f"{name}.py").write_text(textwrap.dedent(body))
    return EntryPoint(name.replace("_", ""), f"{name}:FORMAT", registry.GROUP)


def left_out(points: list[EntryPoint]) -> tuple[dict, list[str]]:
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        formats = registry.with_plugins(registry.BUILT_IN, points)
    assert all(w.category is PluginWarning for w in said)
    return formats, [str(w.message) for w in said]


@pytest.mark.parametrize(
    "body, why",
    [
        ("import sys\nsys.exit(0)\n", "SystemExit: 0"),
        ("raise SystemExit\n", "SystemExit"),
        ("raise KeyboardInterrupt\n", "KeyboardInterrupt"),
        ("raise GeneratorExit('odd')\n", "GeneratorExit: odd"),
    ],
    ids=["sys.exit(0)", "SystemExit", "KeyboardInterrupt", "GeneratorExit"],
)
def test_a_plugin_that_exits_or_interrupts_as_it_is_imported_is_left_out(tmp_path, monkeypatch, body, why):
    monkeypatch.syspath_prepend(str(tmp_path))
    point = plugin_module(tmp_path, "quits", body)
    formats, said = left_out([point])
    assert list(formats) == BUILT_IN
    assert said == [f"format plugin quits (quits:FORMAT) left out: {why}"]


def test_a_plugin_whose_import_never_returns_is_left_out_after_the_bound(tmp_path, monkeypatch):
    release = threading.Event()
    monkeypatch.setattr(registry, "IMPORT_SECONDS", 0.5)
    monkeypatch.setattr(sys, "hanging_plugin_waits_for", release, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    hangs = plugin_module(tmp_path, "hangs", "import sys\nsys.hanging_plugin_waits_for.wait()\n")
    fine = plugin_module(
        tmp_path,
        "fine_coins",
        """
        from workbench.plugin import Column, Format, Table
        FORMAT = Format("finecoins", (Table("fine_coins", (Column("source_id", "BIGINT"),)),),
                        lambda path, head: False, lambda ctx: None)
    """,
    )
    try:
        formats, said = left_out([hangs, fine])
    finally:
        release.set()  # the import thread ends with the test
    assert list(formats) == [*BUILT_IN, "finecoins"]
    assert said == ["format plugin hangs (hangs:FORMAT) left out: its import did not end within 0.5 s"]


def _format(table: Table, views: str = "") -> Format:
    return Format(name="coins", tables=(table,), claims=lambda path, head: False, load=lambda ctx: None, views=views)


def _table(name: str, column: str = "source_id", **more) -> Table:
    return Table(name, (Column(column, "BIGINT", **more),))


INJECTED = _format(_table("x (a INT); DROP TABLE IF EXISTS sources; CREATE TABLE y"))
QUOTED = _format(_table('"Decisions"'))
DOTTED = _format(_table("main.decisions"))
SPACED = _format(_table("coin flips"))
INJECTED_COLUMN = _format(_table("coin_flips", "a INT); DROP TABLE sources; --"))
INJECTED_DEFAULT = _format(_table("coin_flips", default="1); DROP TABLE sources; CREATE TABLE z (a INT"))
DROPPING_VIEW = _format(_table("coin_flips"), "CREATE VIEW coin_odds AS SELECT 1; DROP TABLE IF EXISTS sources;")
REPLACING_TABLE = _format(_table("coin_flips"), "CREATE OR REPLACE TABLE sources AS SELECT 1 AS a;")
ALTERING = _format(_table("coin_flips"), "ALTER TABLE sources DROP COLUMN found_at;")
MACRO = _format(_table("coin_flips"), "CREATE MACRO rows(x) AS x;")
ATTACHING = _format(_table("coin_flips"), "ATTACH ':memory:' AS other;")


@pytest.mark.parametrize(
    "value, why",
    [
        (
            "INJECTED",
            "its table or column name 'x (a INT); DROP TABLE IF EXISTS sources; CREATE TABLE y' is not a plain "
            "SQL name",
        ),
        ("QUOTED", "its table or column name '\"Decisions\"' is not a plain SQL name"),
        ("DOTTED", "its table or column name 'main.decisions' is not a plain SQL name"),
        ("SPACED", "its table or column name 'coin flips' is not a plain SQL name"),
        ("INJECTED_COLUMN", "its table or column name 'a INT); DROP TABLE sources; --' is not a plain SQL name"),
        ("INJECTED_DEFAULT", "its statement 'DROP TABLE sources;' does not make a table or view"),
        ("DROPPING_VIEW", "its statement 'DROP TABLE IF EXISTS sources;' does not make a table or view"),
        ("REPLACING_TABLE", "its table or view 'sources' has the name of one the workbench already has"),
        ("ALTERING", "its table or view 'sources' has the name of one the workbench already has"),
        ("MACRO", "its statement 'CREATE MACRO rows(x) AS x;' does not make a table or view"),
        ("ATTACHING", "its statement \"ATTACH ':memory:' AS other;\" does not make a table or view"),
    ],
)
def test_a_plugin_whose_names_or_statements_reach_beyond_its_own_tables_is_left_out(value, why, monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    point = EntryPoint("coins", f"test_plugin_isolation:{value}", registry.GROUP)
    formats, said = left_out([point])
    assert list(formats) == BUILT_IN
    assert said == [
        f"format plugin coins (test_plugin_isolation:{value}) left out: {why}"
        + (
            " (letters, digits and _, not starting with a digit)"
            if "plain SQL name" in why
            else "; a plugin's statements only make its own"
            if "does not make" in why
            else ""
        )
    ]


def test_the_users_sources_survive_a_plugin_that_would_drop_them(tmp_path, monkeypatch, sample):
    db = tmp_path / "w.duckdb"
    workbench.ingest([sample / "gm"], db=db)
    with duckdb.connect(str(db), read_only=True) as con:
        before = con.sql("SELECT path, sha256 FROM sources ORDER BY path").fetchall()
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    points = [
        EntryPoint("coins", f"test_plugin_isolation:{value}", registry.GROUP)
        for value in ("INJECTED", "INJECTED_DEFAULT", "DROPPING_VIEW", "REPLACING_TABLE")
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginWarning)
        monkeypatch.setattr(registry, "FORMATS", registry.with_plugins(registry.BUILT_IN, points))
    report = workbench.ingest([sample / "gm"], db=db)
    assert {f.status for f in report.files} == {"unchanged"}
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.sql("SELECT path, sha256 FROM sources ORDER BY path").fetchall() == before


# --- a plugin's code as it reads a file -------------------------------------------------------


def _exits(*args):
    raise SystemExit(0)


def _interrupts(ctx):
    raise KeyboardInterrupt


EXITS_AS_IT_LOADS = Format(
    name="coins",
    tables=(_table("coin_flips"),),
    load=_exits,
    claims=lambda path, head: path.name.endswith(".coins.jsonl"),
    line_based=True,
)
INTERRUPTS_AS_IT_LOADS = Format(
    name="coins", tables=(_table("coin_flips"),), load=_interrupts, claims=EXITS_AS_IT_LOADS.claims, line_based=True
)
EXITS_AS_IT_CLAIMS = Format(name="coins", tables=(_table("coin_flips"),), load=_exits, claims=_exits)


@pytest.mark.parametrize(
    "value, why", [("EXITS_AS_IT_LOADS", "SystemExit: 0"), ("INTERRUPTS_AS_IT_LOADS", "KeyboardInterrupt")]
)
def test_a_plugin_that_exits_or_interrupts_as_it_reads_a_file_fails_that_file_only(
    tmp_path, monkeypatch, sample, value, why
):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    point = EntryPoint("coins", f"test_plugin_isolation:{value}", registry.GROUP)
    monkeypatch.setattr(registry, "FORMATS", registry.with_plugins(registry.BUILT_IN, [point]))
    logs = tmp_path / "logs"
    write_lines(logs / "a.coins.jsonl" if logs.mkdir() is None else None, [{"flip": "heads"}])
    for game in (sample / "gm").iterdir():
        (logs / game.name).write_bytes(game.read_bytes())
    report = workbench.ingest([logs], db=tmp_path / "w.duckdb")
    by_name = {Path(f.path).name: f for f in report.files}
    assert by_name.pop("a.coins.jsonl").message.endswith(f"a.coins.jsonl: format plugin coins failed: {why}")
    assert {f.status for f in by_name.values()} == {"ingested"} and len(by_name) == 3


def test_a_plugin_that_exits_as_it_tells_its_files_is_said_once_and_the_run_goes_on(tmp_path, monkeypatch, sample):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    point = EntryPoint("coins", "test_plugin_isolation:EXITS_AS_IT_CLAIMS", registry.GROUP)
    monkeypatch.setattr(registry, "FORMATS", registry.with_plugins(registry.BUILT_IN, [point]))
    (tmp_path / "notes.txt").write_text("hello\n")
    (tmp_path / "more.txt").write_text("again\n")
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        report = workbench.ingest([tmp_path, sample / "gm"], db=tmp_path / "w.duckdb")
    assert [f.status for f in report.files] == ["ingested"] * 3
    [warning] = said
    assert "could not tell whether" in str(warning.message) and "(SystemExit: 0)" in str(warning.message)


def test_a_ctrl_c_while_a_plugin_reads_still_interrupts_the_run(tmp_path, monkeypatch):
    # The user's Ctrl-C (the signal) is told from a KeyboardInterrupt the plugin raises.
    import signal

    def load(ctx):
        signal.raise_signal(signal.SIGINT)
        return Counts(0, 0)

    plugin = Format(
        name="coins", tables=(_table("coin_flips"),), load=load, claims=EXITS_AS_IT_LOADS.claims, line_based=True
    )
    monkeypatch.setattr(registry, "FORMATS", {**registry.FORMATS, "coins": registry._guarded(plugin)})
    path = write_lines(tmp_path / "a.coins.jsonl", [{"flip": "heads"}])
    with pytest.raises(KeyboardInterrupt):
        workbench.ingest([path], db=tmp_path / "w.duckdb")


# --- as a user runs it ------------------------------------------------------------------------


def installed(site: Path, body: str) -> Path:
    """A plugin `quits` installed into `site` as pip installs one."""
    site.mkdir()
    (site / "quits.py").write_text(textwrap.dedent(body))
    info = site / "quits-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: quits\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[workbench.formats]\nquits = quits:FORMAT\n")
    return site


def workbench_cli(site: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    env.pop("WORKBENCH_DB", None)
    return subprocess.run(
        [sys.executable, "-m", "workbench.cli", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=300
    )


@pytest.mark.parametrize(
    "body, why", [("import sys\nsys.exit(0)\n", "SystemExit: 0"), ("raise KeyboardInterrupt\n", "KeyboardInterrupt")]
)
def test_ingest_validate_and_help_go_on_past_a_plugin_that_exits_on_import(tmp_path, sample, body, why):
    site = installed(tmp_path / "site", body)
    told = f"workbench: format plugin quits (quits:FORMAT) left out: {why}"
    ingested = workbench_cli(site, "ingest", str(sample / "gm"), "--db", "w.duckdb", "--quiet", cwd=tmp_path)
    assert (ingested.returncode, ingested.stderr.splitlines()) == (0, [told])
    assert ingested.stdout.count(": gm: ") == 3
    validated = workbench_cli(site, "validate", str(sample / "gm"), cwd=tmp_path)
    assert validated.stderr.splitlines() == [told] and validated.stdout.count(": gm: ") == 3
    helped = workbench_cli(site, "ingest", "--help", cwd=tmp_path)
    assert helped.returncode == 0 and "damage " in helped.stdout and helped.stderr.splitlines() == [told]


def test_a_plugin_that_exits_as_it_loads_fails_its_file_and_the_mixed_folder_loads(tmp_path, sample):
    site = installed(
        tmp_path / "site",
        """
        from workbench.plugin import Column, Format, Table, jsonl_claims
        def load(ctx):
            raise SystemExit(0)
        FORMAT = Format("quits", (Table("quit_rows", (Column("source_id", "BIGINT"),)),),
                        jsonl_claims(".quits.jsonl", {"q"}), load, line_based=True)
    """,
    )
    logs = tmp_path / "logs"
    write_lines(logs / "a.quits.jsonl" if logs.mkdir() is None else None, [{"q": 1}])
    for game in (sample / "gm").iterdir():
        (logs / game.name).write_bytes(game.read_bytes())
    done = workbench_cli(site, "ingest", str(logs), "--db", "w.duckdb", "--quiet", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr == ""
    assert f"{logs / 'a.quits.jsonl'}: failed: format plugin quits failed: SystemExit: 0" in done.stdout.splitlines()
    assert done.stdout.count(": gm: ") == 3
