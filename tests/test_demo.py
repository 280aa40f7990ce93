"""`workbench demo` end to end in a temporary folder, and `workbench lab`'s launch."""

import os
import re

import duckdb
import pytest

from tests.conftest import ROOT
from tests.figures import assert_rendered, check_decisions, check_economy, check_emotions, spec_of
from workbench import registry
from workbench.cli import main

# Every standard figure, named here rather than read from `plots.FIGURES`.
FIGURES = (
    "emotions",
    "economy",
    "budget",
    "scorecard",
    "decisions",
    "attacks",
    "attack-study",
    "families",
    "trace-steps",
    "play",
)


@pytest.mark.slow
def test_demo_end_to_end(tmp_path, capsys):
    data = tmp_path / "data"
    assert main(["demo", "--data", str(data)]) == 0
    out = capsys.readouterr().out
    assert (data / "sample" / "manifest.json").exists()
    figures = data / "figures"
    assert sorted(p.name for p in figures.iterdir()) == sorted(
        f"{kind}{suffix}" for kind in FIGURES for suffix in (".png", ".html")
    )
    for kind in FIGURES:
        assert_rendered(figures / f"{kind}.png")
    con = duckdb.connect(str(data / "workbench.duckdb"), read_only=True)
    try:
        # The figures say what the database holds: the largest game's emotions (by vectors),
        # every series' monthly nets, every format's decisions.
        [(largest,)] = con.execute(
            "SELECT game_id FROM damage_emotions GROUP BY game_id ORDER BY count(*) DESC, game_id LIMIT 1"
        ).fetchall()
        assert check_emotions(spec_of(figures / "emotions.html"), con) == largest
        economy = check_economy(spec_of(figures / "economy.html"), con)
        series = {s for (s,) in con.execute("SELECT DISTINCT series FROM stellaris_snapshots").fetchall()}
        assert {r["series"] for r in economy} == series and any(r["deficit"] for r in economy)
        check_decisions(spec_of(figures / "decisions.html"), con)
        formats = {f for (f,) in con.execute("SELECT DISTINCT format FROM sources").fetchall()}
        decided = {f for (f,) in con.execute("SELECT DISTINCT format FROM decisions").fetchall()}
        # validity of the answered decisions; the calls that got no answer said beside it
        decided_counts = con.execute(
            "SELECT format, count(*) FILTER (WHERE valid), count(*), "
            "count(DISTINCT coalesce(game_id, 'file ' || source_id)) FROM decisions "
            "WHERE outcome <> 'failed' GROUP BY format"
        ).fetchall()
        failed = dict(
            con.execute("SELECT format, count(*) FROM decisions WHERE outcome = 'failed' GROUP BY format").fetchall()
        )
    finally:
        con.close()
    # every built-in format with a synthetic corpus; all but Stellaris's saves decide
    assert formats == {fmt.name for fmt in registry.BUILT_IN if fmt.generate is not None}
    assert decided == formats - {"stellaris"}
    for name in formats:  # a summary line per format, and the headline per decision format
        assert f"\n{name} " in out
    assert "scorecard (valid decisions, 95% interval clustered by game, n" in out
    assert f"database: {data / 'workbench.duckdb'}" in out and "workbench lab" in out
    # the next commands name the demo's database (not the default one), and run as printed
    db = data / "workbench.duckdb"
    [records] = re.findall(r"`(workbench records [^`]*)`", out)
    assert records == f"workbench records --db {db} --invalid"
    assert main(records.split()[1:]) == 0
    shown = capsys.readouterr()
    assert (
        shown.out.count(": damage;")
        + shown.out.count(": arena;")
        + shown.out.count(": ec4x;")
        + shown.out.count(": gm;")
        + shown.out.count(": stellaris;")
        == 20
        and "INVALID" in shown.out
    )
    # each format's headline carries its n and an interval around its rate
    for fmt, valid, n, games in decided_counts:
        [line] = [line for line in out.splitlines() if line.startswith(f"  {fmt} ")]
        rate, low, high = re.match(r"\s+\w+\s+([\d.]+)% \((\d+)%-(\d+)%, n=(\d+) in \d+ games?\)", line).groups()[:3]
        assert f"n={n} in {games} game" in line.split(";")[0] and float(rate) == round(100 * valid / n, 1)
        assert int(low) <= float(rate) <= int(high)
        assert (f"{failed.get(fmt)} failed calls left out" in line) == (fmt in failed)
    assert failed.get("damage", 0) > 0  # the synthetic simulator's provider failures
    # A second run adds nothing and says so.
    assert main(["demo", "--data", str(data)]) == 0
    assert "0 files ingested" in capsys.readouterr().out


def test_lab_opens_jupyterlab_on_the_notebooks_with_the_database(tmp_path, monkeypatch):
    launched = {}

    def fake_exec(program, argv, env):
        launched.update(argv=argv, env=env)

    monkeypatch.setattr(os, "execvpe", fake_exec)
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert main(["lab", "--db", str(tmp_path / "w.duckdb"), "--no-browser", "--port", "8899"]) == 0
    assert launched["argv"][1:] == [
        "-m",
        "jupyterlab",
        f"--notebook-dir={ROOT / 'notebooks'}",
        "--ContentsManager.pre_save_hook=workbench.lab.strip_run_state",
        "--no-browser",
        "--port",
        "8899",
    ]
    assert launched["env"]["WORKBENCH_DB"] == str(tmp_path / "w.duckdb")


def test_lab_as_root_starts_with_allow_root_and_says_so(tmp_path, monkeypatch, capsys):
    # JupyterLab exits with "Running as root is not recommended" unless told --allow-root.
    launched = {}
    monkeypatch.setattr(os, "execvpe", lambda program, argv, env: launched.update(argv=argv))
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert main(["lab", "--db", str(tmp_path / "w.duckdb"), "--no-browser"]) == 0
    assert launched["argv"][-2:] == ["--no-browser", "--allow-root"]
    assert "running as root" in capsys.readouterr().err
    assert main(["lab", "--db", str(tmp_path / "w.duckdb"), "--allow-root"]) == 0
    assert launched["argv"].count("--allow-root") == 1
