"""From a chart to its records: `DrillDown(chart, browser, to_filters=...)` fills a
RecordBrowser with the records behind a clicked mark; the `*_filters` functions say
which records each workbench chart's marks stand for."""

from __future__ import annotations

import polars as pl

from workbench.connection import query_frame, reading
from workbench.damage import queries
from workbench.widgets.charts import offline_chart_scripts
from workbench.widgets.record_browser import RecordBrowser


class DrillDown:
    """A chart that leads to its records: clicking a mark fills a RecordBrowser.

    The chart declares a point selection named `param` (the workbench's charts name
    theirs `pick`; the emotion chart one per panel, `pick_<emotion>`: give the list)
    over the fields that say which records are behind a mark;
    `to_filters(values)` turns the selected mark's fields (a dict) into the browser's
    filters (default: the fields as they are). Your own chart works the same way:

        pick = alt.selection_point(name="pick", fields=["format", "model"], on="click")
        chart = alt.Chart(frame).mark_bar().encode(...).add_params(pick)
        DrillDown(chart, browser)          # display `.widget`

    `.chart` is the live `JupyterChart`; `.picked(values)` is what a click calls;
    `.widget` shows the chart above the browser.

    Args:
        chart: an Altair chart with a point selection named `param`.
        browser: the RecordBrowser a click fills.
        param: the selection's name, or a list of names (a chart of panels may name one each).
        to_filters: a function from the selected mark's fields (a dict) to the browser's
            filters; None: the fields as they are. See `scorecard_filters`, `decision_filters`,
            `attack_filters`, `emotion_filters`, `mistake_filters`, `family_filters`, `economy_filters`.
    """

    def __init__(self, chart, browser: RecordBrowser, param="pick", to_filters=None):
        from workbench.lean_imports import altair

        alt = altair()
        import ipywidgets as widgets

        self.browser = browser
        self.params = [param] if isinstance(param, str) else list(param)  # a chart of panels may name one each
        self.to_filters = to_filters or (lambda values: dict(values))
        offline_chart_scripts(alt)
        with alt.data_transformers.disable_max_rows():
            self.chart = alt.JupyterChart(chart)
        self.chart.selections.observe(self._clicked, names=self.params)
        self.widget = widgets.VBox([self.chart, browser.widget])

    def _clicked(self, change) -> None:
        selected = change["new"].value
        if selected:
            self.picked(selected[0])

    def picked(self, values: dict) -> pl.DataFrame:
        """Show the records behind the mark whose selected fields are `values`.

        Args:
            values: the selected mark's fields, by name.

        Returns:
            The records the browser shows (`RecordBrowser.show`).
        """
        return self.browser.show(**self.to_filters(values))

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


def scorecard_filters(values: dict) -> dict:
    """The records behind a bar of the scorecard (`plots.scorecard`): that model's
    invalid decisions in that format (switch `records` to `any` for all of them).

    A `to_filters` for `DrillDown`.

    Args:
        values: the selected mark's `format` and `model_name`.

    Returns:
        The filters `format`, `model` and `valid=False`.
    """
    return {"format": values["format"], "model": values["model_name"], "valid": False}


def decision_filters(values: dict) -> dict:
    """The records behind a bar of the decision-quality chart (`plots.decision_quality`,
    its selections `plots.decisions.PICKS`): a format's invalid records (its invalid
    decisions and the lines that could not be read), a model's invalid decisions in that
    format, or the format's records that break that rule.

    A `to_filters` for `DrillDown(chart, browser, param=PICKS, to_filters=decision_filters)`.

    Args:
        values: the selected bar's `format`, and `model_name` or `rule_name`.

    Returns:
        The filters `format` and `valid=False`, with `model`; or `format` and `rule`.
    """
    if "rule_name" in values:
        return {"format": values["format"], "rule": values["rule_name"]}
    if "model_name" in values:
        return scorecard_filters(values)
    return {"format": values["format"], "valid": False}


# What a mark of each workbench chart stands for, as the records behind it. Each takes
# the database (and the game) and gives the `to_filters` of a DrillDown.


def attack_filters(db, game_id: str):
    """A cell of the attack matrix (`attacker`, `target`): the game's lines where the
    attacker led an attack on the target.

    Args:
        db: a database path or a connection (only read).
        game_id: the game the attack matrix shows.

    Returns:
        A `to_filters` for `DrillDown` over `plots.attack_heatmap`: the Damage records at those lines.
    """

    def to_filters(values: dict) -> dict:
        with reading(db) as con:
            effects = queries.attack_effects(con, game_id)
            seqs = effects.filter((pl.col("attacker") == values["attacker"]) & (pl.col("target") == values["target"]))
            return {"format": "damage", "at": _event_lines(con, game_id, seqs["seq"].to_list())}

    return to_filters


def mistake_filters(db, aliases=None):
    """A point of the play-quality chart's mistakes (`model_name`, `mistake`): that
    model's decisions named with that mistake.

    Args:
        db: a database path or a connection (only read).
        aliases: the aliases the chart was drawn with (a dict, or a JSON or CSV file).

    Returns:
        A `to_filters` for `DrillDown(chart, browser, to_filters=...)` over
        `plots.play_quality_chart`: the Damage records at those lines.
    """
    from workbench.damage.quality import named_with

    def to_filters(values: dict) -> dict:  # the browser reads the lines' raw text
        with reading(db) as con:
            found = named_with(con, values["mistake"], model=values["model_name"], aliases=aliases)
        return {"format": "damage", "at": found.select("source_id", "line")}

    return to_filters


def emotion_filters(db, game_id: str):
    """A point of an emotion trajectory (`seq`): the event at that line of the game.

    Args:
        db: a database path or a connection (only read).
        game_id: the game the trajectories show.

    Returns:
        A `to_filters` for `DrillDown` over `plots.emotion_trajectories`: the Damage record at that line.
    """

    def to_filters(values: dict) -> dict:
        with reading(db) as con:
            return {"format": "damage", "at": _event_lines(con, game_id, [int(values["seq"])])}

    return to_filters


def family_filters(db):
    """A cell of the EC4X family x model matrix (`family`, `model`, `source`): the
    drafts (or bot-trace turns) of that model that used that family.

    Args:
        db: a database path or a connection (only read).

    Returns:
        A `to_filters` for `DrillDown` over `plots.family_matrix_chart`: those EC4X records.
    """
    from workbench.ec4x.queries import family_lines

    def to_filters(values: dict) -> dict:
        with reading(db) as con:
            return {"format": "ec4x", "at": family_lines(con, values["family"], values["model"], values["source"])}

    return to_filters


def economy_filters(db):
    """A point of the economy nets (`game_date`): the records of the saves of that date.

    Args:
        db: a database path or a connection (only read).

    Returns:
        A `to_filters` for `DrillDown` over `plots.economy_nets`: the Stellaris records of those saves.
    """

    def to_filters(values: dict) -> dict:
        with reading(db) as con:
            saves = con.execute(
                "SELECT DISTINCT source_id FROM stellaris_resources WHERE CAST(game_date AS VARCHAR) = ?",
                [str(values["game_date"])[:10]],
            ).fetchall()
        return {"format": "stellaris", "at": {"source_id": [s for (s,) in saves], "line": [None] * len(saves)}}

    return to_filters


def _event_lines(con, game_id: str, seqs: list[int]) -> pl.DataFrame:
    """(source_id, line) of a Damage game's events at `seqs`."""
    return query_frame(
        con,
        "SELECT DISTINCT source_id, seq AS line FROM damage_events "
        "WHERE game_id = $game AND list_contains($seqs, seq) ORDER BY ALL",
        {"game": game_id, "seqs": seqs},
    )
