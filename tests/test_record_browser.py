"""The record browser and the drill-down from a chart, driven as a notebook user drives
them (the widgets' values), on the synthetic corpus: what each search shows is checked
against a query of the database written here, and the detail pane against the file."""

import json

import duckdb
import polars as pl
import pytest

from workbench import plots
from workbench.errors import WorkbenchError
from workbench.widgets import DrillDown, RecordBrowser, ReplayScrubber, scorecard_filters

pytest.importorskip("itables")


def expected_lines(db, sql, params=()):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return [row for row in con.execute(sql, params).fetchall()]
    finally:
        con.close()


def test_the_filters_search_and_the_table_shows_what_was_found(notebook_db):
    browser = RecordBrowser(notebook_db, format="arena", valid=False)
    # the invalid Arena decisions, by hand: decisions not valid, in file order
    invalid = expected_lines(
        notebook_db,
        """
        SELECT s.path, d.locator FROM decisions d JOIN sources s USING (source_id)
        WHERE d.format = 'arena' AND NOT d.valid ORDER BY s.path, TRY_CAST(split_part(d.locator, ' ', 2) AS INT)""",
    )
    shown = browser.records.select("path", "locator").rows()
    assert [row for row in shown if row in set(invalid)] == invalid  # every invalid decision, in order
    assert not browser.records["valid"].any()
    view = browser._view
    assert view.inputs["format"].value == "arena" and view.inputs["valid"].value == "invalid"
    table = view.table.children[0]
    assert table.__class__.__name__ == "ITable"
    assert f"<b>{browser.records.height:,}</b>" in view.count.value
    # the user types a model: the search runs again with it
    model = browser.records["model"][0]
    view.inputs["model"].value = model
    assert set(browser.records["model"]) == {model} and browser.filters["model"] == model
    view.inputs["valid"].value = "any"
    assert browser.records["valid"].any()


def test_selecting_a_row_shows_its_raw_text_and_findings(notebook_db):
    browser = RecordBrowser(notebook_db, format="arena", valid=False)
    row = browser.records.row(0, named=True)
    pane = browser.select(0)
    line = int(row["locator"].split()[1])
    written = open(row["path"], encoding="utf-8").read().split("\n")[line - 1]
    assert row["raw"] == written
    rules = expected_lines(
        notebook_db,
        "SELECT rule, field FROM violation_lines WHERE source_id = ? AND line = ?",
        (row["source_id"], line),
    )
    assert rules and all(rule in pane and field in pane for rule, field in rules)
    assert browser._view.pane.value == pane
    # an Arena decision with a reasoning trace shows its steps
    traced = RecordBrowser(notebook_db, format="arena", text='"tool"', limit=2000)
    ticks = set(expected_lines(notebook_db, "SELECT episode_id, tick, agent_id FROM arena_traces"))
    index = next(
        i
        for i, r in enumerate(traced.records.iter_rows(named=True))
        if (r["game_id"].rsplit("/", 1)[-1], r["turn"], r["agent_id"]) in ticks
    )
    assert "traced at line" in traced.select(index)


def test_a_damage_record_opens_the_replay_at_its_event_and_the_replay_shows_its_findings(notebook_db):
    browser = RecordBrowser(notebook_db, format="damage", severity="error")
    row = browser.records.row(0, named=True)
    browser.select(0)
    assert browser._view.open_replay.layout.display is None  # the button shows for a Damage event
    scrubber = browser.scrubber(0)
    assert isinstance(scrubber, ReplayScrubber) and scrubber.game_id == row["game_id"]
    assert scrubber.event["seq"] == row["line"]
    html = scrubber.widget.children[3].children[1].value  # the event pane
    assert "finding" in html and row["rules"][0] in html


def test_clicking_a_scorecard_bar_fills_the_browser_with_that_models_failures(notebook_db):
    con = duckdb.connect(str(notebook_db), read_only=True)
    chart = plots.scorecard(con)
    con.close()
    browser = RecordBrowser(notebook_db)
    drill = DrillDown(chart, browser, to_filters=scorecard_filters)
    model = expected_lines(notebook_db, "SELECT model FROM decisions WHERE format = 'gm' AND NOT valid LIMIT 1")[0][0]
    found = drill.picked({"format": "gm", "model_name": model})
    failures = expected_lines(
        notebook_db, "SELECT count(*) FROM decisions WHERE format = 'gm' AND model = ? AND NOT valid", (model,)
    )[0][0]
    assert found.height == failures > 0 and set(found["model"]) == {model} and not found["valid"].any()
    assert drill.chart.selections.trait_names() and "pick" in drill.chart.selections.trait_names()


def test_clicking_a_validity_bar_or_a_rule_bar_of_the_decisions_chart_leads_to_its_records(notebook_db):
    from workbench.plots.decisions import PICKS
    from workbench.widgets import decision_filters

    con = duckdb.connect(str(notebook_db), read_only=True)
    chart = plots.decision_quality(con)
    con.close()
    drill = DrillDown(chart, RecordBrowser(notebook_db, limit=10_000), param=list(PICKS), to_filters=decision_filters)
    assert set(PICKS) <= set(drill.chart.selections.trait_names())
    # a format's bar: its invalid records, the invalid decisions and the lines not read
    invalid = expected_lines(notebook_db, "SELECT count(*) FROM decisions WHERE format = 'gm' AND NOT valid")[0][0]
    invalid += expected_lines(
        notebook_db, "SELECT count(*) FROM rejects JOIN sources USING (source_id) WHERE format = 'gm'"
    )[0][0]
    found = drill.picked({"format": "gm"})
    assert found.height == invalid > 0 and set(found["format"]) == {"gm"} and not found["valid"].any()
    # a model's bar: that model's invalid decisions in that format
    model = expected_lines(notebook_db, "SELECT model FROM decisions WHERE format = 'arena' AND NOT valid LIMIT 1")[0][
        0
    ]
    failures = expected_lines(
        notebook_db, "SELECT count(*) FROM decisions WHERE format = 'arena' AND model = ? AND NOT valid", (model,)
    )[0][0]
    found = drill.picked({"format": "arena", "model_name": model})
    assert found.height == failures > 0 and set(found["model"]) == {model}
    # a rule's bar: the format's records that break it, one per line the rule names (those
    # a count stands for too: `violation_lines`)
    rule, lines = expected_lines(
        notebook_db,
        """
        SELECT v.rule, count(DISTINCT (v.source_id, v.locator)) FROM violation_lines v JOIN sources s USING (source_id)
        WHERE s.format = 'gm' AND v.severity = 'error' GROUP BY ALL ORDER BY 2 DESC, 1 LIMIT 1""",
    )[0]
    found = drill.picked({"format": "gm", "rule_name": rule})
    assert found.height == lines and all(rule in rules for rules in found["rules"])


def test_clicking_a_mistake_of_the_play_quality_chart_leads_to_the_decisions_named_with_it(notebook_db):
    from workbench.damage import play
    from workbench.widgets import mistake_filters

    con = duckdb.connect(str(notebook_db), read_only=True)
    chart = plots.play_quality_chart(con)
    judged = play.judged(con)
    con.close()
    assert selections(chart.to_dict())["pick"] == ["model_name", "mistake"]
    drill = DrillDown(chart, RecordBrowser(notebook_db, limit=10_000), to_filters=mistake_filters(notebook_db))
    named = judged.filter(pl.col("mistake").is_not_null() & pl.col("model").is_not_null())
    model, mistake = (
        named.group_by("model", "mistake").len().sort("len", "model", "mistake", descending=True).row(0)[:2]
    )
    mine = named.filter((pl.col("model") == model) & (pl.col("mistake") == mistake))
    found = drill.picked({"model_name": model, "mistake": mistake})
    assert sorted(found.select("source_id", "line").rows()) == sorted(mine.select("source_id", "line").rows())
    assert found.height > 0 and set(found["model"]) == {model} and set(found["format"]) == {"damage"}
    for raw, player in zip(found.sort("source_id", "line")["raw"], mine.sort("source_id", "line")["player_id"]):
        event = json.loads(raw)  # each an action its player submitted
        assert event["type"] == "action_submitted" and event["payload"]["player_id"] == player


def test_unknown_filters_are_one_clear_error(notebook_db):
    with pytest.raises(WorkbenchError, match="no filter colour"):
        RecordBrowser(notebook_db, colour="red")


def test_each_charts_marks_lead_to_the_records_behind_them(notebook_db):
    from workbench.damage import queries
    from workbench.ec4x.families import draft_keys
    from workbench.ec4x.queries import family_matrix
    from workbench.widgets import attack_filters, economy_filters, emotion_filters, family_filters

    browser = RecordBrowser(notebook_db, limit=5000)
    con = duckdb.connect(str(notebook_db), read_only=True)
    game = queries.largest_game(con)
    cell = queries.attack_matrix(con, game).filter(pl.col("attacks") > 0).row(0, named=True)
    used = family_matrix(con).filter((pl.col("tried") > 0) & (pl.col("source") == "drafts")).row(0, named=True)
    date = con.execute("SELECT min(game_date) FROM stellaris_resources").fetchall()[0][0]
    saves = {
        s for (s,) in con.execute("SELECT source_id FROM stellaris_resources WHERE game_date = ?", [date]).fetchall()
    }
    con.close()
    # an attack cell: its attacks, each line naming both players
    attacks = browser.show(**attack_filters(notebook_db, game)(cell))
    assert attacks.height == cell["attacks"]
    assert all(cell["attacker"] in raw and cell["target"] in raw for raw in attacks["raw"])
    # a family cell: the model's drafts, each holding one of the family's keys
    keys = [key for key, family in draft_keys().items() if family == used["family"]]
    drafts = browser.show(**family_filters(notebook_db)(used))
    assert drafts.height == used["tried"] and set(drafts["model"]) <= {used["model"]}
    assert all(any(f'"{key}"' in raw for key in keys) for raw in drafts["raw"])
    # a point of an emotion line: the event at that line
    point = browser.show(**emotion_filters(notebook_db, game)({"seq": attacks["line"][0], "player_id": "x"}))
    assert point["line"].to_list() == [attacks["line"][0]] and point["game_id"].to_list() == [game]
    # a point of the economy: the records of that date's saves
    saved = browser.show(**economy_filters(notebook_db)({"game_date": date}))
    assert not saved.is_empty() and set(saved["source_id"]) == saves


def selections(spec) -> dict[str, list[str]]:
    """Every point selection a Vega-Lite spec declares, however nested: name -> fields."""
    found = {}
    if isinstance(spec, dict):
        for param in spec.get("params", []):
            if isinstance(param.get("select"), dict) and param["select"].get("type") == "point":
                found[param["name"]] = param["select"].get("fields")
        for value in spec.values():
            found.update(selections(value))
    elif isinstance(spec, list):
        for value in spec:
            found.update(selections(value))
    return found


def test_the_charts_declare_what_a_click_on_a_mark_selects(notebook_db):
    from workbench.damage import queries

    con = duckdb.connect(str(notebook_db), read_only=True)
    game = queries.largest_game(con)
    picks = {
        "scorecard": selections(plots.scorecard(con).to_dict()),
        "attacks": selections(plots.attack_heatmap(con, game).to_dict()),
        "families": selections(plots.family_matrix_chart(con).to_dict()),
        "economy": selections(plots.economy_nets(con).to_dict()),
        "emotions": selections(plots.emotion_trajectories(con, game, emotions=["tilt", "fear"]).to_dict()),
    }
    con.close()
    assert picks["scorecard"]["pick"] == ["format", "model_name"]
    assert picks["attacks"]["pick"] == ["attacker", "target"]
    assert picks["families"]["pick"] == ["family", "model", "source"]
    assert picks["economy"]["pick"] == ["game_date"]
    assert picks["emotions"]["pick_tilt"] == picks["emotions"]["pick_fear"] == ["seq"]


def test_a_drill_down_over_panels_follows_each_panels_selection(notebook_db):
    from workbench.damage import queries
    from workbench.widgets import emotion_filters

    con = duckdb.connect(str(notebook_db), read_only=True)
    game = queries.largest_game(con)
    chart = plots.emotion_trajectories(con, game, emotions=["tilt", "fear"])
    con.close()
    drill = DrillDown(
        chart,
        RecordBrowser(notebook_db, format="damage"),
        param=["pick_tilt", "pick_fear"],
        to_filters=emotion_filters(notebook_db, game),
    )
    assert {"pick_tilt", "pick_fear"} <= set(drill.chart.selections.trait_names())
    assert drill.picked({"seq": 5})["line"].to_list() == [5]
