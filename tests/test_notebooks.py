"""Every notebook runs headless, top to bottom, against a small synthetic database, and
exports its figures; the query helpers behind them answer what they say."""

import json
import re
import shlex
import shutil
import threading
from pathlib import Path

import duckdb
import nbformat
import polars as pl
import pytest

import workbench
from tests.conftest import SHARED
from tests.figures import (
    assert_rendered,
    check_decisions,
    check_economy,
    check_emotions,
    spec_of,
)
from tests.notebook_form import canonical
from tests.notebook_run import (
    NAMES,
    NOTEBOOKS,
    all_outputs,
    bundle_folder,
    chart_titles,
    errors_in,
    run_notebook,
    section_outputs,
    sent_here,
    started_ahead,
    widget_texts,
)
from tests.notebook_server import call, running_lab, save_notebook
from workbench import analysis, connection
from workbench.cli import main
from workbench.damage import queries as damage_queries
from workbench.damage.replay import compare_positions
from workbench.notebook import figures_dir, needs, notebook_database, unmark
from workbench.stellaris import queries as stellaris_queries
from workbench.widgets import GameReplay

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("notebooks")]


@pytest.fixture
def db(notebook_db) -> Path:
    return notebook_db


def largest_game_by_events(con) -> str:
    """The game with the most events among those with hands (what the notebooks open first)."""
    return con.execute(
        "SELECT game_id FROM damage_events WHERE game_id IS NOT NULL GROUP BY game_id "
        "HAVING count(*) FILTER (WHERE type = 'hand_started') > 0 "
        "ORDER BY count(*) DESC, game_id LIMIT 1"
    ).fetchall()[0][0]


def check_emotions_figure(spec, con):
    # the picker's first game, all its players, all five emotions
    check_emotions(spec, con, game_id=largest_game_by_events(con))


def check_economy_figure(spec, con):
    # the first series, and the resources in deficit somewhere (else the first four)
    series = con.execute("SELECT min(series) FROM stellaris_snapshots").fetchall()[0][0]
    in_deficit = [
        r
        for (r,) in con.execute(
            "SELECT DISTINCT r.resource FROM stellaris_resources r JOIN stellaris_snapshots s "
            "USING (source_id, locator) WHERE r.net < 0 ORDER BY 1"
        ).fetchall()
    ]
    assert in_deficit, "the sample campaign runs deficits"
    drawn = check_economy(spec, con, series=series, resources=in_deficit)
    assert {r["series"] for r in drawn} == {series}
    present = {
        r
        for (r,) in con.execute(
            "SELECT DISTINCT r.resource FROM stellaris_resources r JOIN stellaris_snapshots s USING (source_id, locator) "
            "WHERE s.series = ? AND coalesce(r.net, r.income - r.expenses) IS NOT NULL",
            [series],
        ).fetchall()
    }
    assert {r["resource"] for r in drawn} == set(in_deficit) & present


def check_scrubber_figure(spec, con):
    game = largest_game_by_events(con)
    check_emotions(spec, con, game_id=game, cursor=True)
    [cursor] = [p for p in spec["params"] if p["name"] == "cursor"]
    seqs = {s for (s,) in con.execute("SELECT seq FROM damage_events WHERE game_id = ?", [game]).fetchall()}
    assert cursor["value"] in seqs


FIGURE_CHECKS = {
    "01_emotion_trajectories": check_emotions_figure,
    "02_economy_nets": check_economy_figure,
    "03_decision_quality": check_decisions,
    "04_replay_scrubber": check_scrubber_figure,
}


@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs_top_to_bottom_and_exports_its_figures(name, db, executed):
    nb = executed(name)
    assert errors_in(nb) == []
    assert_rendered(db.parent / "figures" / f"{name}.png")
    con = connection.connect(db, read_only=True)
    try:
        FIGURE_CHECKS[name](spec_of(db.parent / "figures" / f"{name}.html"), con)
    finally:
        con.close()


# Each section with a figure, and the words its chart's title starts with.
SECTION_CHARTS = [
    ("01_emotion_trajectories", "## Who attacks whom", "Who attacks whom in "),
    ("01_emotion_trajectories", "## Did the attack really move", "Change in the aimed-at emotion after attacks in "),
    ("02_economy_nets", "### The player beside two empires", "Monthly net per resource, the player beside other"),
    ("02_economy_nets", "### Where the player's resources come from", "Where "),
    ("03_decision_quality", "## Scorecard", "Valid decisions per model, with 95% intervals"),
    ("03_decision_quality", "## EC4X: which order families", "EC4X command families"),
    ("03_decision_quality", "## Agent Arena: from a decision", "Reasoning-trace step times"),
]


@pytest.mark.parametrize(("name", "heading", "title"), SECTION_CHARTS)
def test_notebook_sections_draw_their_charts(name, heading, title, executed):
    titles = chart_titles(section_outputs(executed(name), heading))
    assert any(t.startswith(title) for t in titles), f"{heading!r} drew {titles}"


@pytest.mark.parametrize("name", NAMES)
def test_notebooks_are_stored_without_outputs(name):
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    nbformat.validate(nb)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert code and all(cell.outputs == [] and cell.execution_count is None for cell in code)
    assert "widgets" not in nb.metadata
    # The notebooks call the package; the database comes from one function.
    assert "db = notebook_database()" in code[0].source


@pytest.mark.parametrize("name", NAMES)
def test_notebooks_are_stored_as_jupyterlab_saves_them(name):
    # Opening a notebook in JupyterLab must not leave it changed (the browser test checks
    # that the opened notebook is not marked modified, too).
    text = (NOTEBOOKS / f"{name}.ipynb").read_text()
    assert canonical(text) == text, "run `python -m tests.notebook_form` to store it as JupyterLab saves it"


def test_a_notebook_run_and_saved_in_jupyterlab_is_stored_unchanged(executed, notebook_db, tmp_path):
    # Saving a run notebook (Ctrl+S, autosave) sends its outputs, execution counts, widget
    # state and run timings; the server `workbench lab` starts writes none of them.
    pytest.importorskip("jupyter_server", reason="jupyter_server is not installed: pip install -e .")
    pytest.importorskip("jupyterlab", reason="JupyterLab is not installed: pip install -e .")
    name = "03_decision_quality.ipynb"
    ran = json.loads(nbformat.writes(executed(name.removesuffix(".ipynb"))))
    assert ran["metadata"]["widgets"] and str(notebook_db) in json.dumps(ran["cells"])
    assert any(cell.get("outputs") and cell["metadata"].get("execution") for cell in ran["cells"])
    (tmp_path / "notebooks").mkdir()
    shutil.copy(NOTEBOOKS / name, tmp_path / "notebooks" / name)
    with running_lab(tmp_path / "notebooks", tmp_path) as lab:
        save_notebook(lab, name, ran)
        reread = call(lab, "GET", f"api/contents/{name}")["content"]
    saved = (tmp_path / "notebooks" / name).read_text()
    assert saved == (NOTEBOOKS / name).read_text()  # git sees no change
    assert str(notebook_db) not in saved and str(notebook_db.parent) not in saved
    assert all(cell.get("outputs", []) == [] for cell in reread["cells"]) and "widgets" not in reread["metadata"]


def test_notebook_database_builds_the_demo_when_missing(tmp_path, monkeypatch):
    built = []

    def fake_demo(data, progress=True):
        built.append(data)
        workbench.connect(data / "workbench.duckdb").close()

    monkeypatch.setattr("workbench.demo.run_demo", fake_demo)
    monkeypatch.setenv("WORKBENCH_DB", str(tmp_path / "data" / "workbench.duckdb"))
    assert notebook_database() == (tmp_path / "data" / "workbench.duckdb").resolve()
    assert built == [tmp_path / "data"]
    # From notebooks/, the default path is the repository's data/ folder.
    monkeypatch.delenv("WORKBENCH_DB")
    (tmp_path / "notebooks").mkdir()
    monkeypatch.chdir(tmp_path / "notebooks")
    assert notebook_database() == (tmp_path / "data" / "workbench.duckdb").resolve()
    assert len(built) == 1


# --- on the data a user has: one game's, or none ----------------------------------------

# What each notebook is about; where the database lacks it, the notebook says what to
# ingest and its other cells stay quiet.
NEEDED = {
    "01_emotion_trajectories": "damage",
    "02_economy_nets": "stellaris",
    "03_decision_quality": "decisions",
    "04_replay_scrubber": "damage",
}
HINT_STARTS = {
    "damage": "no Damage game in this database: ingest ",
    "stellaris": "no Stellaris save series in this database: ingest ",
    "decisions": "no decisions in this database: ingest ",
}
CORPUS = SHARED / "corpus"
# Databases of one game's data each, or none: what is ingested (a folder of the synthetic
# corpus or of the real one beside the repository) and what the notebooks find in it.
ONE_GAME = {
    "synthetic damage": ("sample", "damage", {"damage", "decisions"}),
    "synthetic stellaris": ("sample", "stellaris", {"stellaris"}),
    "synthetic ec4x": ("sample", "ec4x", {"decisions"}),
    "synthetic arena": ("sample", "arena", {"decisions"}),
    "synthetic gm": ("sample", "gm", {"decisions"}),
    "real damage logs": ("corpus", "damage", {"damage", "decisions"}),
    "real stellaris save": ("corpus", "stellaris", {"stellaris"}),
    "otel traces": ("otel", "data", {"decisions"}),
    "empty": (None, None, set()),
}
OTEL = Path(__file__).resolve().parent / "otel"


def corpus_missing(data: str) -> Path | None:
    """Where the real corpus a key of ONE_GAME is ingested from should be, if it is not there."""
    corpus, folder, _ = ONE_GAME[data]
    return CORPUS / folder if corpus == "corpus" and not (CORPUS / folder).is_dir() else None


@pytest.fixture(scope="module")
def one_game_db(sample, tmp_path_factory):
    """The database of a key of ONE_GAME, built once for the module (by whichever thread
    asks first: the notebook runs started ahead build theirs)."""
    built, lock = {}, threading.Lock()

    def build(data: str) -> Path:
        if missing := corpus_missing(data):
            pytest.skip(f"the real corpus is not at {missing} (../shared/corpus beside the repository)")
        with lock:
            if data not in built:
                corpus, folder, _ = ONE_GAME[data]
                db = tmp_path_factory.mktemp(data.replace(" ", "_")) / "workbench.duckdb"
                if corpus is None:
                    workbench.connect(db).close()
                else:
                    root = {"sample": sample, "corpus": CORPUS, "otel": OTEL}[corpus]
                    assert not workbench.ingest([root / folder], db=db).failed
                built[data] = db
            return built[data]

    return build


@pytest.fixture(scope="module")
def one_game_runs(one_game_db, request, tmp_path_factory):
    """Each notebook run headless on the database of a key of ONE_GAME, once; the runs the
    selected tests read start with the first of them, a few kernels at a time."""
    bundles = bundle_folder(tmp_path_factory)
    with started_ahead(
        request,
        "one_game_runs",
        ("data", "name"),
        lambda data, name: run_notebook(name, one_game_db(data), bundles),
        wanted=lambda data, name: not corpus_missing(data),
    ) as run:
        yield run


@pytest.fixture(scope="module", autouse=True)
def runs_ahead(request):
    """The headless runs this module's selected tests read, started before the first test
    (in the order the tests read them), so that the kernels work while tests check."""
    items = [item for item in request.session.items if getattr(item, "module", None) is request.module]
    for fixture in ("executed", "one_game_runs"):
        if sent_here(request.config, items) and any(fixture in item.fixturenames for item in items):
            request.getfixturevalue(fixture)


def printed_lines(cell) -> list[str]:
    return "".join(out.get("text", "") for out in cell.get("outputs", [])).splitlines()


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("data", ONE_GAME)
def test_notebook_runs_on_one_games_data_or_none(data, name, one_game_db, one_game_runs):
    db = one_game_db(data)
    nb = one_game_runs(data, name)
    assert errors_in(nb) == []
    first, *others = [cell for cell in nb.cells if cell.cell_type == "code"]
    hints = [line for line in printed_lines(first) if line.startswith(tuple(HINT_STARTS.values()))]
    if NEEDED[name] in ONE_GAME[data][2]:  # it shows what applies: at least a chart
        assert hints == [] and chart_titles(all_outputs(nb))
    else:  # one line saying what to ingest into this database, and nothing else
        assert len(hints) == 1 and hints[0].startswith(HINT_STARTS[NEEDED[name]]) and f" --db {db}`" in hints[0]
        assert [cell.outputs for cell in others if cell.outputs] == []


@pytest.mark.parametrize(("what", "folder"), [("damage", "damage"), ("stellaris", "stellaris"), ("decisions", "gm")])
def test_the_hint_is_the_command_that_adds_what_is_missing(what, folder, sample, tmp_path, capsys):
    db = tmp_path / "w.duckdb"
    workbench.connect(db).close()
    assert needs(db, what) is False
    [hint] = capsys.readouterr().out.splitlines()
    ingest, placeholder, *rest = shlex.split(re.search(r"`workbench (ingest [^`]*)`", hint).group(1))
    assert main([ingest, str(sample / folder), *rest, "--quiet"]) == 0
    capsys.readouterr()
    assert needs(db, what) is True and capsys.readouterr().out == ""


def test_a_marked_cell_keeps_its_line_numbers_or_is_skipped(one_game_db, capsys):
    cell = ["%%needs stellaris\n", "x = 1\n", "y = x / 0\n"]
    needs(one_game_db("synthetic stellaris"), "stellaris")
    assert unmark(cell) == ["\n", "x = 1\n", "y = x / 0\n"]  # line 3 is still line 3
    needs(one_game_db("empty"), "stellaris")
    assert unmark(cell) == [] and unmark(cell[1:]) == cell[1:]


# --- the helpers behind the notebooks -----------------------------------------------------


@pytest.fixture
def con(db):
    con = connection.connect(db, read_only=True)
    yield con
    con.close()


def test_attack_effects_measure_the_targets_change(con):
    game = damage_queries.largest_game(con)
    effects = damage_queries.attack_effects(con, game)
    affect = effects.filter(pl.col("kind") == "affect")
    assert affect.height > 50 and effects.filter(pl.col("kind") == "raise").height > 10
    # The synthetic game adds the applied delta to the aimed-at emotion (clamped to 1).
    unclamped = affect.filter(pl.col("actual").is_not_null() & (pl.col("actual") < pl.col("applied_delta") - 1e-9))
    assert unclamped.height < affect.height * 0.1
    first = affect.row(0, named=True)
    vectors = con.execute(
        f"SELECT seq, {first['intent']} FROM damage_emotions WHERE game_id = ? AND player_id = ? ORDER BY seq",
        [game, first["target"]],
    ).fetchall()
    before = [v for seq, v in vectors if seq < first["seq"]][-1]
    after = [v for seq, v in vectors if seq >= first["seq"]][0]
    assert first["actual"] == pytest.approx(after - before)
    summary = damage_queries.attack_summary(effects)
    assert summary["attacks"].sum() == effects.height


def test_compare_positions_is_the_replay_at_two_lines(con):
    game = damage_queries.largest_game(con)
    frame = compare_positions(con, game, 200, 900)
    replay = GameReplay(con, game)
    a, b = replay.state_at(replay.position_of_seq(200)), replay.state_at(replay.position_of_seq(900))
    row = frame.row(1, named=True)
    player = row["player_id"]
    assert row["bankroll_a"] == a[player]["bankroll"] and row["bankroll_b"] == b[player]["bankroll"]
    assert row["tilt_change"] == pytest.approx(b[player]["emotions"]["tilt"] - a[player]["emotions"]["tilt"])
    assert frame.height == len(replay.players)


def test_months_in_deficit_counts_negative_nets(con):
    deficits = stellaris_queries.months_in_deficit(con)
    row = deficits.row(0, named=True)
    nets = con.execute(
        "SELECT r.net FROM stellaris_resources r JOIN stellaris_snapshots s USING (source_id, locator) "
        "WHERE s.series = ? AND r.resource = ?",
        [row["series"], row["resource"]],
    ).fetchall()
    assert row["snapshots"] == len(nets)
    assert row["snapshots_in_deficit"] == sum(net < 0 for (net,) in nets) > 0
    assert row["snapshots_in_deficit"] <= row["months_in_deficit"] <= row["months_observed"]
    series = stellaris_queries.series_names(con)
    compared = stellaris_queries.compare_series(con, series[0], series[-1], ["energy"])
    assert compared.height > 0 and set(compared["resource"]) == {"energy"}


def test_violations_for_rule_reach_the_raw_records(con):
    rules = analysis.top_violation_rules(con, limit=50)
    assert rules["violations"].to_list() == sorted(rules["violations"].to_list(), reverse=True)
    records = analysis.violations_for_rule(con, "attack_plan_required")
    assert records.height > 0
    for row in records.iter_rows(named=True):
        line = int(row["locator"].split()[1])
        assert row["raw"] == Path(row["path"]).read_text().splitlines()[line - 1]
        assert json.loads(row["raw"])["type"] == "action_submitted"
        assert "damage_events" in json.loads(row["stored"])
    rejected = analysis.violations_for_rule(con, "not_a_json_object")
    assert rejected.height > 0 and rejected["raw"].null_count() == 0


def test_validity_tables_add_up(con):
    by_format = analysis.scorecard(con, by="format")
    by_agent = analysis.scorecard(con, by=("format", "agent_id"))
    # the answered decisions, and the calls that got no answer beside them: every call once
    answered, failed = con.execute(
        "SELECT count(*) FILTER (WHERE outcome <> 'failed'), count(*) FILTER (WHERE outcome = 'failed') FROM decisions"
    ).fetchall()[0]
    assert by_format["decisions"].sum() == by_agent["decisions"].sum() == answered
    assert by_format["failed"].sum() == by_agent["failed"].sum() == failed > 0


def test_notebooks_point_at_the_database_given(db, monkeypatch):
    monkeypatch.setenv("WORKBENCH_DB", str(db))
    assert notebook_database() == db.resolve()
    assert figures_dir(db) == db.parent / "figures"


def test_the_arena_section_jumps_to_a_traced_decision_and_shows_its_steps(executed, db):
    shown = "".join(
        out.get("data", {}).get("text/html", "")
        for out in section_outputs(executed("03_decision_quality"), "### Jump to a decision")
    )
    con = connection.connect(db, read_only=True)
    try:  # the first pick: an invalid traced decision, by episode, agent and tick
        [(agent, episode, tick)] = con.execute(
            "SELECT d.agent_id, d.episode, d.tick FROM arena_decisions d "
            "JOIN (SELECT DISTINCT agent_id, episode_id, tick FROM arena_trace_steps) t "
            "ON t.agent_id = d.agent_id AND t.episode_id = d.episode AND t.tick = d.tick "
            "WHERE NOT d.valid ORDER BY d.episode, d.agent_id, d.tick LIMIT 1"
        ).fetchall()
    finally:
        con.close()
    assert f"<b>{agent}</b> · {episode} · tick {tick}" in shown and "invalid" in shown
    assert all(f"<i>{step}</i>" in shown for step in ("observation", "prompt", "llm_request", "response"))


def test_the_scorecard_leads_notebook_03_and_the_picker_gives_a_verdict(executed):
    nb = executed("03_decision_quality")
    headings = [cell.source.splitlines()[0] for cell in nb.cells if cell.cell_type == "markdown"]
    assert headings[1].startswith("## Scorecard")
    printed = "".join(out.get("text", "") for out in section_outputs(nb, "## Scorecard"))
    assert "no evidence of a difference: " in printed or "is more often valid than" in printed
    assert "[paired on " in printed or "[unpaired: " in printed
    # every pair at once says what it compared
    assert "every pair of 4 models: 6 comparisons" in printed and "p-values Holm-corrected over all" in printed
    planned = "".join(out.get("text", "") for out in section_outputs(nb, "## How many games do I need?"))
    assert planned.startswith("about ") and "games per model to detect 5 points at 80% power" in planned


def test_notebook_03_ranks_the_damage_models_with_the_groups_the_cli_shows(executed, notebook_db, capsys):
    from workbench.cli import main

    nb = executed("03_decision_quality")
    printed = "".join(out.get("text", "") for out in section_outputs(nb, "### Who places better"))
    assert main(["ratings", "--db", str(notebook_db)]) == 0
    assert printed.startswith(capsys.readouterr().out)  # the same lines, then the table
    assert printed.startswith("Damage models by Plackett-Luce rating")


def test_notebook_03_judges_the_damage_play_and_leads_to_the_mistaken_decisions(executed, notebook_db):
    from workbench.damage.quality import mistaken

    nb = executed("03_decision_quality")
    outputs = section_outputs(nb, "## Damage: how well each model plays its hand")
    printed = "".join(out.get("text", "") for out in outputs)
    assert "Mistake rates by tilt at the decision:" in printed
    con = workbench.connect(notebook_db, read_only=True)
    try:
        shown = mistaken(con, "fold_free").height
    finally:
        con.close()
    assert f"{shown} decisions named fold_free" in printed  # the first pick: every model's
    assert "attacks: the target's play in its 3 decisions before and after" in printed


def test_notebook_03_leads_from_the_scorecard_to_the_records_and_the_turns_side_by_side(executed, notebook_db):
    nb = executed("03_decision_quality")
    outputs = section_outputs(nb, "## Scorecard")
    assert any(title.startswith("Valid decisions per model, with 95% intervals") for title in chart_titles(outputs))
    texts = widget_texts(nb, outputs)
    # the record browser, first showing the invalid records (as analysis.records finds them)
    con = duckdb.connect(str(notebook_db), read_only=True)
    invalid = workbench.analysis.records(con, valid=False, limit=None).height
    con.close()
    shown = min(invalid, 500)
    assert any(t.startswith(f"<b>{shown:,}</b> records") for t in texts), texts[:5]
    # the picked pair's shared turns, disagreements first
    assert any("turns both decided" in t and "listed first" in t for t in texts)


@pytest.mark.parametrize("name", NAMES)
def test_no_table_is_shown_as_a_raw_frame(name, executed):
    """A polars frame displayed as it is shows its shape and a row of dtypes: every table
    goes through `widgets.table` (or its own HTML). The callbacks' outputs count too."""
    nb = executed(name)
    raw = [
        out
        for out in all_outputs(nb)
        if "<small>shape: (" in "".join(out.get("data", {}).get("text/html", ""))
        or "".join(out.get("data", {}).get("text/plain", "")).startswith("shape: (")
        or "".join(out.get("text", "")).startswith("shape: (")
    ]
    assert raw == []
