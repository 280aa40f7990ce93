"""Format plugins: `tests/plugins/dice`, a package built on `workbench.plugin` only, is
installed beside the workbench (a folder on the path holding the package and the
`.dist-info` that pip writes for it, with the entry points of its pyproject.toml), and
the commands run over its files as a user runs them: ingest, growth, validate, the
scorecard, the report and export. Broken plugins are left out in one line each, and
the built-in formats go on."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
import warnings
from importlib.metadata import EntryPoint
from pathlib import Path

import duckdb
import pytest

import workbench
from workbench import registry
from workbench.errors import PluginWarning
from workbench.plugin import Column, Format, Table

ROOT = Path(__file__).resolve().parents[1]
DICE = ROOT / "tests" / "plugins" / "dice"

ROLLS = [
    '{"game": "g1", "turn": 1, "player": "P1", "roll": 4, "model": "m-a"}',
    '{"game": "g1", "turn": 1, "player": "P2", "roll": 7, "model": "m-b"}',  # 7 is no die's face
    "",
    "not json",
    '{"game": "g1", "turn": 2, "player": "P1", "roll": 6, "model": "m-a", "bet": 1}',  # unknown key
    '{"game": "g2", "turn": 1, "player": "P1", "roll": 2}',  # no model: a human's roll, no decision
]


def install(site: Path, entry_points: dict[str, str] | None = None) -> Path:
    """The dice package installed into `site` as pip installs it: the package, and a
    dist-info with its metadata and `entry_points` (by default its pyproject's)."""
    project = tomllib.loads((DICE / "pyproject.toml").read_text())["project"]
    points = entry_points or project["entry-points"]["workbench.formats"]
    shutil.copytree(DICE / "dice_workbench", site / "dice_workbench")
    info = site / f"dice_workbench-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    (info / "entry_points.txt").write_text(
        "[workbench.formats]\n" + "".join(f"{name} = {value}\n" for name, value in points.items())
    )
    return site


def command(site: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    """`workbench ARGS...` in a process whose path holds `site`."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    env.pop("WORKBENCH_DB", None)
    return subprocess.run(
        [sys.executable, "-m", "workbench.cli", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=300
    )


def write(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines))
    return path


def logs_beside_a_damage_log(tmp_path: Path, sample: Path, name: str, lines: list[str]) -> tuple[Path, str]:
    """A folder holding `name` (of `lines`) and a Damage log of the synthetic corpus;
    the folder and the Damage log's name."""
    logs = tmp_path / "logs"
    write(logs / name, lines)
    damage = next(sample.rglob("*.events.jsonl"))
    shutil.copy(damage, logs / damage.name)
    return logs, damage.name


@pytest.fixture
def site(tmp_path):
    return install(tmp_path / "site")


def test_the_pyproject_declares_the_format_under_the_workbench_group():
    project = tomllib.loads((DICE / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["workbench.formats"] == {"dice": "dice_workbench:FORMAT"}


def test_the_plugin_imports_only_the_public_api():
    source = (DICE / "dice_workbench" / "__init__.py").read_text()
    imported = {
        line.split()[1] for line in source.splitlines() if line.startswith(("from workbench", "import workbench"))
    }
    assert imported == {"workbench.plugin"}


@pytest.mark.slow
def test_an_installed_plugin_is_ingested_validated_and_its_decisions_shared(site, tmp_path, sample):
    logs, damage = logs_beside_a_damage_log(tmp_path, sample, "table-1.dice.jsonl", ROLLS)
    done = command(site, "ingest", str(logs), "--db", "w.duckdb", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert "table-1.dice.jsonl: dice: 4 records, 1 rejected, 3 errors" in done.stdout
    assert f"{damage}: damage:" in done.stdout
    con = duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True)
    assert con.sql("SELECT seq, game, turn, player, roll, model, valid FROM dice_rolls ORDER BY seq").fetchall() == [
        (1, "g1", 1, "P1", 4, "m-a", True),
        (2, "g1", 1, "P2", 7, "m-b", False),
        (5, "g1", 2, "P1", 6, "m-a", False),
        (6, "g2", 1, "P1", 2, None, True),
    ]
    assert con.sql(
        "SELECT locator, rule, field FROM violations JOIN sources USING (source_id) "
        "WHERE format = 'dice' ORDER BY line, rule"
    ).fetchall() == [
        ("line 2", "less_than_equal", "roll"),
        ("line 4", "not_a_json_object", "(record)"),
        ("line 5", "unknown_key", "bet"),
    ]
    assert con.sql("SELECT raw FROM rejects JOIN sources USING (source_id) WHERE format = 'dice'").fetchall() == [
        ("not json",)
    ]
    assert con.sql(
        "SELECT game_id, turn, agent_id, model, action, valid FROM decisions WHERE format = 'dice' ORDER BY locator"
    ).fetchall() == [
        ("g1", 1, "P1", "m-a", "roll 4", True),
        ("g1", 1, "P2", "m-b", "roll 7", False),
        ("g1", 2, "P1", "m-a", "roll 6", False),
    ]
    con.close()

    checked = command(site, "validate", str(logs / "table-1.dice.jsonl"), cwd=tmp_path)
    assert checked.returncode == 1
    assert "table-1.dice.jsonl: line 2: error: less_than_equal" in checked.stdout and "roll" in checked.stdout

    scored = command(site, "scorecard", "--db", "w.duckdb", cwd=tmp_path)
    assert scored.returncode == 0, scored.stderr
    [m_a] = [line for line in scored.stdout.splitlines() if line.startswith("dice m-a:")]
    assert "50.0% valid" in m_a and "n=2 in 1 game" in m_a

    reported = command(site, "report", "--db", "w.duckdb", "-o", "r.html", cwd=tmp_path)
    assert reported.returncode == 0, reported.stderr
    html = (tmp_path / "r.html").read_text()
    assert "table-1.dice.jsonl" in html  # the per-source summary
    assert "m-a" in html and "m-b" in html  # the scorecard's models

    exported = command(site, "export", "--db", "w.duckdb", "--parquet", "tree", cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    assert duckdb.sql(
        f"SELECT count(*) FROM read_parquet('{tmp_path / 'tree' / 'dice_rolls'}/**/*.parquet', "
        "hive_partitioning = true)"
    ).fetchall() == [(4,)]


@pytest.mark.slow
def test_a_plugin_log_that_grows_gives_what_a_one_shot_ingest_gives(site, tmp_path):
    log = write(tmp_path / "grown" / "t.dice.jsonl", ROLLS[:2])
    assert command(site, "ingest", str(log), "--db", "grown.duckdb", cwd=tmp_path).returncode == 0
    with log.open("a") as out:
        out.write("".join(line + "\n" for line in ROLLS[2:]))
    grown = command(site, "ingest", str(log), "--db", "grown.duckdb", cwd=tmp_path)
    assert "appended" in grown.stdout, grown.stdout + grown.stderr
    once = write(tmp_path / "once" / "t.dice.jsonl", ROLLS)
    assert command(site, "ingest", str(once), "--db", "once.duckdb", cwd=tmp_path).returncode == 0
    for sql in (
        "SELECT seq, player, roll, valid FROM dice_rolls ORDER BY seq",
        "SELECT locator, rule FROM violations ORDER BY locator, rule",
        "SELECT game_id, turn, action, valid FROM decisions ORDER BY locator",
    ):
        with (
            duckdb.connect(str(tmp_path / "grown.duckdb"), read_only=True) as a,
            duckdb.connect(str(tmp_path / "once.duckdb"), read_only=True) as b,
        ):
            assert a.sql(sql).fetchall() == b.sql(sql).fetchall()


def test_broken_plugins_are_each_told_in_one_line_and_the_others_go_on(tmp_path, sample):
    site = install(
        tmp_path / "site",
        {
            "dice": "dice_workbench:FORMAT",
            "gone": "no_such_package:FORMAT",
            "damage": "dice_workbench:FORMAT",
            "loose": "dice_workbench:LINE",
            "dicey": "dice_workbench:FORMAT",
        },
    )
    logs, damage = logs_beside_a_damage_log(tmp_path, sample, "t.dice.jsonl", ROLLS)
    done = command(site, "ingest", str(logs), "--db", "w.duckdb", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "workbench: format plugin damage (dice_workbench:FORMAT) left out: its Format is named 'dice'; "
        "name the entry point as the format",
        "workbench: format plugin dicey (dice_workbench:FORMAT) left out: its Format is named 'dice'; "
        "name the entry point as the format",
        "workbench: format plugin gone (no_such_package:FORMAT) left out: ModuleNotFoundError: "
        "No module named 'no_such_package'",
        "workbench: format plugin loose (dice_workbench:LINE) left out: it is a TypeAdapter, "
        "not a workbench.plugin.Format",
    ]
    assert "t.dice.jsonl: dice: 4 records" in done.stdout and f"{damage}: damage:" in done.stdout


# Formats that take a name the workbench has: left out, each saying which.
def _table(name: str) -> Table:
    return Table(name, (Column("source_id", "BIGINT", required=True),))


def _format(name: str, table: str, views: str = "") -> Format:
    return Format(
        name=name, tables=(_table(table),), claims=lambda path, head: False, load=lambda ctx: None, views=views
    )


DAMAGE_NAMED = _format("damage", "damage_dice")
TABLE_OF_DAMAGE = _format("coins", "damage_events")
SHARED_TABLE = _format("coins", "decisions")
SHARED_TABLE_IN_CAPITALS = _format("coins", "Decisions")  # DuckDB finds a name in any case
BOUND_TABLE = _format("coins", "lines")
BOUND_TABLE_IN_CAPITALS = _format("coins", "LINES")
SHARED_VIEW = _format("coins", "coin_flips", "CREATE OR REPLACE VIEW violation_lines AS SELECT 1 AS x;")
BAD_SQL = _format("coins", "coin_flips", "CREATE VIEW coin_odds AS SELECT * FROM no_such_table;")
FINE = _format("coins", "coin_flips", "CREATE OR REPLACE VIEW coin_odds AS SELECT count(*) AS n FROM decisions;")
BEANS = _format("beans", "bean_counts")
COINS_AGAIN = _format("coins2", "coin_flips")
OVER_DAMAGE = _format(
    "coins", "coin_flips", "CREATE OR REPLACE VIEW coin_hands AS SELECT count(*) AS n FROM damage_events;"
)


@pytest.mark.parametrize(
    "value, told",
    [
        ("DAMAGE_NAMED", "its Format is named 'damage'"),
        ("TABLE_OF_DAMAGE", "its table or view 'damage_events' has the name of one the workbench already has"),
        ("SHARED_TABLE", "its table or view 'decisions' has the name of one the workbench already has"),
        ("SHARED_TABLE_IN_CAPITALS", "its table or view 'decisions' has the name of one the workbench already has"),
        ("BOUND_TABLE", "its table or view 'lines' has the name of one the workbench already has"),
        ("BOUND_TABLE_IN_CAPITALS", "its table or view 'lines' has the name of one the workbench already has"),
        ("SHARED_VIEW", "its table or view 'violation_lines' has the name of one the workbench already has"),
        ("BAD_SQL", "its tables cannot be made: Catalog Error: Table with name no_such_table does not exist!"),
    ],
)
def test_a_plugin_that_takes_a_workbench_name_is_left_out(value, told, monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    point = EntryPoint("coins", f"test_plugins:{value}", registry.GROUP)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        formats = registry.with_plugins(registry.BUILT_IN, [point])
    assert list(formats) == [fmt.name for fmt in registry.BUILT_IN]
    [warning] = said
    assert warning.category is PluginWarning
    assert str(warning.message).startswith(f"format plugin coins (test_plugins:{value}) left out: {told}")


@pytest.mark.parametrize("value", ["FINE", "OVER_DAMAGE"])
def test_a_plugin_comes_after_the_built_in_formats_and_may_read_their_tables(monkeypatch, value):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    points = [EntryPoint("coins", f"test_plugins:{value}", registry.GROUP)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        formats = registry.with_plugins(registry.BUILT_IN, points)
    assert list(formats) == [*(fmt.name for fmt in registry.BUILT_IN), "coins"]
    assert formats["coins"].tables == FINE.tables


def test_two_plugins_are_added_in_the_order_of_their_names_and_may_not_share_a_table(monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    points = [
        EntryPoint("coins", "test_plugins:FINE", registry.GROUP),
        EntryPoint("beans", "test_plugins:BEANS", registry.GROUP),
        EntryPoint("coins2", "test_plugins:COINS_AGAIN", registry.GROUP),
    ]
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        formats = registry.with_plugins(registry.BUILT_IN, points)
    assert list(formats)[-2:] == ["beans", "coins"]
    assert [str(w.message) for w in said] == [
        "format plugin coins2 (test_plugins:COINS_AGAIN) left out: its table or view 'coin_flips' has the name "
        "of one the workbench already has"
    ]


def test_the_public_api_is_exactly_what_a_plugin_needs():
    import workbench.plugin as api

    assert sorted(api.__all__) == sorted(
        [
            "DECISIONS",
            "Column",
            "Counts",
            "Format",
            "LineBatch",
            "LoadContext",
            "Table",
            "Violation",
            "context_batches",
            "first_json_line",
            "jsonl_claims",
            "run_on",
            "store_batch",
            "violation",
        ]
    )
    assert all(hasattr(api, name) for name in api.__all__)


def test_without_plugins_the_registry_holds_the_built_in_formats(tmp_path):
    assert list(registry.with_plugins(registry.BUILT_IN, [])) == list(registry.BUILT_IN_FOLDERS)


def test_the_help_lists_an_installed_plugin_after_the_built_in_formats(site, tmp_path):
    helped = command(site, "ingest", "--help", cwd=tmp_path)
    listed = [line.split()[0] for line in helped.stdout.split("formats:\n")[1].splitlines() if line.strip()]
    assert listed == [*registry.BUILT_IN_FOLDERS, "dice"]


def _raising(*args):
    raise ValueError("a bug in the plugin")


FAILS_TO_LOAD = Format(
    name="coins",
    tables=(_table("coin_flips"),),
    load=_raising,
    claims=lambda path, head: path.name.endswith(".coins.jsonl"),
    line_based=True,
)
FAILS_TO_CLAIM = Format(name="coins", tables=(_table("coin_flips"),), load=_raising, claims=_raising)
RETURNS_NOTHING = Format(
    name="coins", tables=(_table("coin_flips"),), load=lambda ctx: None, claims=FAILS_TO_LOAD.claims, line_based=True
)
FAILS_TO_SAY_HOW = Format(
    name="coins", tables=(_table("coin_flips"),), load=_raising, claims=FAILS_TO_LOAD.claims, line_based=_raising
)


def registered_alone(value: str, monkeypatch) -> None:
    """The registry of this run: the built-in formats and the plugin `coins` = `value`."""
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    point = EntryPoint("coins", f"test_plugins:{value}", registry.GROUP)
    monkeypatch.setattr(registry, "FORMATS", registry.with_plugins(registry.BUILT_IN, [point]))


@pytest.mark.parametrize(
    "value, why",
    [
        ("FAILS_TO_LOAD", "ValueError: a bug in the plugin"),
        ("RETURNS_NOTHING", "TypeError: its load returned NoneType, not Counts"),
        ("FAILS_TO_SAY_HOW", "ValueError: a bug in the plugin"),
    ],
)
def test_a_plugin_that_fails_on_a_file_fails_that_file_only(tmp_path, monkeypatch, sample, value, why):
    registered_alone(value, monkeypatch)
    logs, damage = logs_beside_a_damage_log(tmp_path, sample, "a.coins.jsonl", ['{"flip": "heads"}'])
    report = workbench.ingest([logs], db=tmp_path / "w.duckdb", progress=False)
    by_name = {Path(f.path).name: f for f in report.files}
    assert by_name["a.coins.jsonl"].status == "failed"
    assert by_name["a.coins.jsonl"].message.endswith(f"a.coins.jsonl: format plugin coins failed: {why}")
    assert by_name[damage].status == "ingested"
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        assert con.sql("SELECT format FROM sources").fetchall() == [("damage",)]  # nothing half-written


def test_a_plugin_that_fails_to_recognise_a_file_is_said_once_and_the_run_goes_on(tmp_path, monkeypatch, sample):
    registered_alone("FAILS_TO_CLAIM", monkeypatch)
    logs, _ = logs_beside_a_damage_log(tmp_path, sample, "notes.txt", ["hello"])
    write(logs / "more.txt", ["again"])
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        report = workbench.ingest([logs], db=tmp_path / "w.duckdb", progress=False)
    assert [f.status for f in report.files] == ["ingested"]
    [warning] = said
    assert "format plugin coins could not tell whether" in str(warning.message)
    assert "(ValueError: a bug in the plugin); such files are not read as coins" in str(warning.message)
