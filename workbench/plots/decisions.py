"""Decision quality across games: how often each format's and each model's decisions
are valid, which rules they break most, and how long and how many tokens they took.

Everything is aggregated in DuckDB over `decisions` (and `violations` joined to
`sources.format`); only the small aggregates go into the Vega-Lite spec.
"""

from __future__ import annotations

import polars as pl

from workbench.connection import holder, query_frame
from workbench.errors import WorkbenchError
from workbench.naming import read_aliases
from workbench.outcomes import INGEST_DECISIONS
from workbench.plots.kinds import figure_kind
from workbench.plots.labels import displayed, note_view, picking
from workbench.plots.vega import Datasets, altair_figure, field, mark, top_level

MODELS_PER_FORMAT = 12  # the most active models or agents of each format
TOP_RULES = 15
# A click on a bar selects what its records are (widgets.decision_filters): a format's
# invalid decisions, a model's in a format, or a format's lines that break a rule.
PICKS = ("pick_format", "pick_model", "pick_rule")
# The bars' views, named as Altair names a view layered in a concatenation (by its place:
# `_0` in the first row's first panel, `_1` in the second row), so that a notebook's live
# chart and the spec name them alike.
FORMAT_BARS, MODEL_BARS = "format-bars_0", "model-bars_1"

SCOPE = "($formats::VARCHAR[] IS NULL OR list_contains($formats::VARCHAR[], format))"


@figure_kind("decisions", order=5, takes_aliases=True, across_games=True)
@altair_figure
def decision_quality(con, formats: list[str] | None = None, aliases=None):
    """Validity per format and per model or agent (with 95% intervals clustered by game
    and counts), the most frequent error and warning rules, and latency and token
    distributions where logs record them. `aliases` maps names to one model.

    The model rows are the 12 most active models or agents of each format, by validity;
    the rules are the 15 most frequent.

    Args:
        con: a connection to a workbench database.
        formats: only these formats; None: every format with decisions.
        aliases: a dict, or a JSON or CSV file, mapping names to one model.

    Returns:
        An Altair chart of three rows: validity per format beside the top rules, validity
        per model, and the latency and token distributions.

    Raises:
        WorkbenchError: no decisions (in `formats`) in the database.
    """
    from workbench.comparison import decisions_sql, scorecard

    params = {"formats": list(formats) if formats else None}
    per_format = _query(con, VALIDITY_BY_FORMAT, params)
    if per_format.is_empty():
        scope = f" for {', '.join(formats)}" if formats else ""
        raise WorkbenchError(f"no decisions{scope} in {holder(con)}; {INGEST_DECISIONS}")
    datasets = Datasets()
    color = field("format:N", title="format", scale={"domain": per_format["format"].to_list()})
    top = {"hconcat": [_validity_by_format(datasets, per_format, color), _top_rules(con, datasets, params, color)]}
    middle = _validity_by_model(datasets, _most_active(scorecard(con, aliases=aliases), formats), color)
    source = decisions_sql(read_aliases(aliases))
    bottom = {
        "hconcat": [
            _distribution(con, datasets, source, params, "latency_ms", "latency (ms)", color),
            _distribution(con, datasets, source, params, "tokens", "tokens per decision", color),
        ]
    }
    picks = [
        picking(FORMAT_BARS, "format", name="pick_format"),
        picking(MODEL_BARS, "format", "model_name", name="pick_model"),
    ]
    if top["hconcat"][1].get("name") == "rule-bars":  # not the note that there are no rules
        picks.append(picking("rule-bars", "format", "rule_name", name="pick_rule"))
    title = {"text": "Decision quality across games", "anchor": "middle"}  # at the start, the axis labels cut it
    return top_level(
        {"vconcat": [top, middle, bottom], "title": title, "params": picks, "resolve": {"scale": {"color": "shared"}}},
        datasets,
    )


def _most_active(card: pl.DataFrame, formats: list[str] | None) -> pl.DataFrame:
    """The MODELS_PER_FORMAT models or agents of each format with the most decisions,
    by validity."""
    if formats:
        card = card.filter(pl.col("format").is_in(list(formats)))
    card = (
        card.sort(["decisions", "model"], descending=[True, False])
        .group_by("format", maintain_order=True)
        .head(MODELS_PER_FORMAT)
    )
    return card.sort(["format", "validity", "model"], descending=[False, True, False])


# --- queries -----------------------------------------------------------------------

# Validity of the answered decisions; a call that got no answer (failed) is counted apart.
VALIDITY_BY_FORMAT = f"""
SELECT format, count(*) FILTER (WHERE outcome IS DISTINCT FROM 'failed') AS decisions,
       count(*) FILTER (WHERE valid) AS valid, avg(valid::INT) AS valid_rate,
       count(*) FILTER (WHERE outcome = 'failed') AS failed
FROM decisions WHERE {SCOPE} GROUP BY format ORDER BY format
"""

# Rules broken by the logs of the formats in scope (info-level drift is left out:
# it says how a log differs from its document, not how good a decision was).
TOP_RULES_QUERY = f"""
WITH found AS (
    SELECT s.format, v.rule, string_agg(DISTINCT v.severity, '/' ORDER BY v.severity) AS severity,
           count(*) AS violations
    FROM violation_lines v JOIN sources s USING (source_id)
    WHERE v.severity IN ('error', 'warning')
      AND s.format IN (SELECT DISTINCT format FROM decisions WHERE {SCOPE})
    GROUP BY ALL
),
top AS (SELECT rule FROM found GROUP BY rule ORDER BY sum(violations) DESC, rule LIMIT {TOP_RULES})
SELECT found.* FROM found JOIN top USING (rule) ORDER BY violations DESC, rule, format
"""

# Five-number summaries: the boxplot is drawn from these, not from the raw values.
DISTRIBUTION = f"""
WITH per_who AS (
    SELECT format, who, count({{measure}}) AS n,
           min({{measure}}) AS lo, quantile_cont({{measure}}, 0.25) AS q1, median({{measure}}) AS mid,
           quantile_cont({{measure}}, 0.75) AS q3, max({{measure}}) AS hi
    FROM ({{source}}) WHERE {SCOPE} AND {{measure}} IS NOT NULL GROUP BY ALL
)
SELECT * EXCLUDE (activity) FROM (
    SELECT *, row_number() OVER (PARTITION BY format ORDER BY n DESC, who) AS activity FROM per_who
) WHERE activity <= {MODELS_PER_FORMAT}
ORDER BY format, who
"""


def _query(con, sql: str, params: dict) -> pl.DataFrame:
    used = {name: value for name, value in params.items() if f"${name}" in sql}
    return query_frame(con, sql, used)


# --- panels ------------------------------------------------------------------------


def _validity_by_format(datasets: Datasets, frame: pl.DataFrame, color: dict) -> dict:
    frame = frame.with_columns(
        label=pl.format("{} of {}", "valid", "decisions")
        + pl.when(pl.col("failed") > 0).then(pl.format(" · {} failed", "failed")).otherwise(pl.lit(""))
    )
    axes = {
        "y": field("format:N", title=None),
        "x": field("valid_rate:Q", title="valid decisions", axis={"format": "%"}, scale={"domain": [0, 1]}),
    }
    bars = {
        "mark": mark("bar", cursor="pointer"),
        "name": FORMAT_BARS,
        "encoding": {
            **axes,
            "color": color,
            "tooltip": [field("format:N"), field("decisions:Q"), field("valid:Q"), field("valid_rate:Q", format=".1%")],
        },
    }
    counts = {"mark": mark("text", align="left", dx=4), "encoding": {**axes, "text": field("label:N")}}
    return {
        "data": datasets.add("per-format", frame),
        "layer": [bars, counts],
        "title": "Validity per format",
        "width": 300,
        "height": _height(frame),
    }


def _validity_by_model(datasets: Datasets, frame: pl.DataFrame, color: dict) -> dict:
    frame = frame.select(
        "format", "model", "decisions", "valid", "validity", "ci_low", "ci_high", "games"
    ).with_columns(model_name=pl.col("model"), model=displayed("model"))
    frame = frame.with_columns(row=pl.format("{} · {}", "format", "model"), label=pl.format("n={}", "decisions"))
    y = field("row:N", title=None, sort=None)
    bars = {
        "mark": mark("bar", cursor="pointer"),
        "name": MODEL_BARS,
        "encoding": {
            "y": y,
            "x": field("validity:Q", title="valid decisions", axis={"format": "%"}, scale={"domain": [0, 1]}),
            "color": color,
            "tooltip": [
                field("format:N"),
                field("model:N", title="model or agent"),
                field("decisions:Q"),
                field("valid:Q"),
                field("games:Q"),
                field("validity:Q", format=".1%"),
                field("ci_low:Q", format=".1%", title="95% low"),
                field("ci_high:Q", format=".1%", title="95% high"),
            ],
        },
    }
    # The 95% interval, clustered by game, as in the scorecard: a small sample shows as a long whisker.
    whiskers = {
        "mark": mark("rule", color="black"),
        "encoding": {"y": y, "x": field("ci_low:Q"), "x2": {"field": "ci_high"}},
    }
    counts = {
        "mark": mark("text", align="left", dx=4),
        "encoding": {"y": y, "x": field("ci_high:Q"), "text": field("label:N")},
    }
    return {
        "data": datasets.add("per-model", frame),
        "layer": [bars, whiskers, counts],
        "title": "Validity per model or agent (with 95% intervals)",
        "width": 640,
        "height": _height(frame),
    }


def _top_rules(con, datasets: Datasets, params: dict, color: dict) -> dict:
    frame = _query(con, TOP_RULES_QUERY, params)
    if frame.is_empty():
        return note_view(datasets, "rules", "No error or warning violations", "Most frequent violation rules")
    frame = frame.with_columns(rule_name=pl.col("rule"), rule=displayed("rule"))
    return {
        "data": datasets.add("rules", frame),
        "mark": mark("bar", cursor="pointer"),
        "name": "rule-bars",
        "encoding": {
            "y": field("rule:N", title=None, sort={"field": "violations", "op": "sum", "order": "descending"}),
            "x": field("violations:Q", aggregate="sum", title="violations"),
            "color": color,
            "detail": field("rule_name:N"),  # kept through the sum: the selection's field
            "tooltip": [field("format:N"), field("rule:N", title="rule"), field("severity:N"), field("violations:Q")],
        },
        "title": "Most frequent violation rules",
        "width": 300,
        "height": _height(frame, by="rule"),
    }


def _distribution(con, datasets: Datasets, source: str, params: dict, measure: str, title: str, color: dict) -> dict:
    frame = _query(con, DISTRIBUTION.format(measure=measure, source=source), params)
    if frame.is_empty():
        return note_view(datasets, measure, f"No {title.split(' (')[0]} recorded", title.capitalize())
    frame = _labelled(frame).with_columns(row=pl.format("{} · {}", "format", "who"))
    y = field("row:N", title=None, sort=None)
    tooltip = [
        field("format:N"),
        field("who:N", title="model or agent"),
        *(field(f"{name}:Q") for name in ("n", "lo", "q1", "mid", "q3", "hi")),
    ]
    whiskers = {"mark": mark("rule"), "encoding": {"y": y, "x": field("lo:Q", title=title), "x2": {"field": "hi"}}}
    boxes = {
        "mark": mark("bar", size=12),
        "encoding": {"y": y, "x": field("q1:Q"), "x2": {"field": "q3"}, "color": color, "tooltip": tooltip},
    }
    medians = {"mark": mark("tick", color="black", size=12), "encoding": {"y": y, "x": field("mid:Q")}}
    return {
        "data": datasets.add(measure, frame),
        "layer": [whiskers, boxes, medians],
        "title": title.capitalize(),
        "width": 300,
        "height": _height(frame),
    }


def _labelled(frame: pl.DataFrame) -> pl.DataFrame:
    # Replaces `who`: the whole frame goes into the spec, not only the encoded columns.
    return frame.with_columns(displayed("who"))


def _height(frame: pl.DataFrame, by: str | None = None) -> int:
    rows = frame[by].n_unique() if by else frame.height
    return max(40, 22 * rows)
