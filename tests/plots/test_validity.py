"""The scorecard as a chart (`workbench.plots.validity`): a panel per format, in it each
model's validity as a point inside its 95% interval, `n=` its decisions and games, a
click on a point selecting its format and model. Expected values are the rows written
here and, from a database, Wilson's interval written out by hand (tests/intervals.py)."""

import polars as pl
import pytest

import workbench
from tests.intervals import wilson_by_hand
from tests.test_comparison import arena_log
from workbench import connection
from workbench.errors import WorkbenchError
from workbench.plots.validity import TITLE, scorecard, scorecard_spec

COLUMNS = ("format", "model", "decisions", "valid", "validity", "ci_low", "ci_high", "games", "ci_method")


def card(*rows) -> pl.DataFrame:
    """Rows shaped as `comparison.scorecard` makes them (its columns the chart reads)."""
    return pl.DataFrame(
        [dict(zip(COLUMNS, row)) for row in rows],
        schema_overrides={"validity": pl.Float64, "ci_low": pl.Float64, "ci_high": pl.Float64},
        orient="row",
    )


ROWS = card(
    ("gm", "m-a", 40, 30, 0.75, 0.6, 0.86, 3, "wilson-clustered"),
    ("arena", "m-b</script>", 12, 12, 1.0, 0.74, 1.0, 1, "wilson"),
    ("arena", "m-c", 0, 0, None, None, None, 0, "wilson"),
)  # every call failed: nothing to draw


def test_a_panel_per_format_in_order_each_showing_its_own_rows():
    spec = scorecard_spec(ROWS)
    assert spec["title"] == TITLE == "Valid decisions per model, with 95% intervals clustered by game"
    panels = spec["vconcat"]
    assert [panel["title"]["text"] for panel in panels] == ["arena", "gm"]
    assert [panel["transform"] for panel in panels] == [
        [{"filter": {"field": "format", "equal": "arena"}}],
        [{"filter": {"field": "format", "equal": "gm"}}],
    ]
    # the interval a bar from its low to its high end, the validity a point, the label beside
    for panel in panels:
        interval, point, label = panel["layer"]
        assert (interval["mark"]["type"], point["mark"]["type"], label["mark"]["type"]) == ("bar", "point", "text")
        assert (interval["encoding"]["x"]["field"], interval["encoding"]["x2"]) == ("ci_low", {"field": "ci_high"})
        assert interval["encoding"]["x"]["scale"] == point["encoding"]["x"]["scale"] == {"domain": [0, 1]}
        assert point["encoding"]["y"]["sort"] == {"field": "validity", "order": "descending"}
        assert (label["encoding"]["x"]["field"], label["encoding"]["text"]["field"]) == ("ci_high", "label")
    # the x axis named once, under the last panel
    assert [panel["layer"][1]["encoding"]["x"]["title"] for panel in panels] == [None, "valid decisions"]


def test_its_rows_drop_a_model_with_no_validity_and_say_decisions_and_games():
    rows = scorecard_spec(ROWS)["datasets"]["scorecard"]
    assert [(row["format"], row["model_name"], row["label"]) for row in rows] == [
        ("gm", "m-a", "n=40, 3 games"),
        ("arena", "m-b</script>", "n=12, 1 game"),
    ]
    # as a figure shows it: no `<` or `>` to end the <script> an HTML export puts the spec in
    assert [row["model"] for row in rows] == ["m-a", "m-b‹/script›"]
    assert [(row["validity"], row["ci_low"], row["ci_high"]) for row in rows] == [(0.75, 0.6, 0.86), (1.0, 0.74, 1.0)]


def test_a_click_on_a_point_selects_its_format_and_model_as_the_log_wrote_it():
    spec = scorecard_spec(ROWS)
    [pick] = spec["params"]
    assert pick["name"] == "pick" and pick["select"]["fields"] == ["format", "model_name"]
    assert pick["select"]["on"] == "click" and pick["views"] == [panel["layer"][1]["name"] for panel in spec["vconcat"]]
    assert len(set(pick["views"])) == 2  # each panel's points a view of its own


def test_from_a_database_each_model_s_point_and_interval_as_worked_by_hand(tmp_path):
    log = arena_log(tmp_path / "ep1.decisions.jsonl", {"m-a": [True, True, True, False], "m-b": [True]})
    assert not workbench.ingest([log], db=tmp_path / "w.duckdb").failed
    con = connection.connect(tmp_path / "w.duckdb", read_only=True)
    try:
        rows = {row["model"]: row for row in scorecard.spec(con)["datasets"]["scorecard"]}
        # one game each, nothing to measure how games differ: m-a's game is one
        # observation (0.75 of 1); m-b's one decision is one of 1
        assert (rows["m-a"]["validity"], rows["m-a"]["label"]) == (0.75, "n=4, 1 game")
        assert (rows["m-a"]["ci_low"], rows["m-a"]["ci_high"]) == pytest.approx(wilson_by_hand(0.75, 1), rel=1e-9)
        assert (rows["m-b"]["ci_low"], rows["m-b"]["ci_high"]) == pytest.approx(wilson_by_hand(1, 1), rel=1e-9)
        with pytest.raises(WorkbenchError, match="^no decisions in "):
            scorecard.spec(con, formats=["gm"])
    finally:
        con.close()
