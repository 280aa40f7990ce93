"""Decision quality across games: how often each format's and each model's decisions
are valid, which rules they break most, and how long and how many tokens they took.

Everything is aggregated in DuckDB over `decisions` (and `violations` joined to
`sources.format`); only the small aggregates go into the Vega-Lite spec. Channels are
written as objects (`alt.Tooltip("valid:Q")`), not as strings: Altair spends several
milliseconds parsing each string.
"""

from __future__ import annotations

import altair as alt
import polars as pl

from workbench.catalog import query_frame
from workbench.comparison import decided, scorecard
from workbench.errors import WorkbenchError
from workbench.naming import read_aliases
from workbench.plots.labels import displayed, note_chart

MODELS_PER_FORMAT = 12  # the most active models or agents of each format
TOP_RULES = 15

SCOPE = "($formats::VARCHAR[] IS NULL OR list_contains($formats::VARCHAR[], format))"


def decision_quality(con, formats: list[str] | None = None, aliases=None) -> alt.VConcatChart:
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
    params = {"formats": list(formats) if formats else None}
    per_format = _query(con, VALIDITY_BY_FORMAT, params)
    if per_format.is_empty():
        scope = f" for {', '.join(formats)}" if formats else ""
        raise WorkbenchError(f"no decisions{scope} in this database; ingest a damage, ec4x, arena or gm log first")
    color = alt.Color("format:N", title="format", scale=alt.Scale(domain=per_format["format"].to_list()))
    top = alt.hconcat(_validity_by_format(per_format, color), _top_rules(con, params, color))
    middle = _validity_by_model(_most_active(scorecard(con, aliases=aliases), formats), color)
    source = decided(read_aliases(aliases))
    bottom = alt.hconcat(
        _distribution(con, source, params, "latency_ms", "latency (ms)", color),
        _distribution(con, source, params, "tokens", "tokens per decision", color),
    )
    return alt.vconcat(top, middle, bottom, title="Decision quality across games").resolve_scale(color="shared")


def _most_active(card: pl.DataFrame, formats: list[str] | None) -> pl.DataFrame:
    """The MODELS_PER_FORMAT models or agents of each format with the most decisions,
    by validity."""
    if formats:
        card = card.filter(pl.col("format").is_in(list(formats)))
    card = card.sort(["decisions", "model"], descending=[True, False]).group_by("format", maintain_order=True).head(
        MODELS_PER_FORMAT)
    return card.sort(["format", "validity", "model"], descending=[False, True, False])


# --- queries -----------------------------------------------------------------------

VALIDITY_BY_FORMAT = f"""
SELECT format, count(*) AS decisions, count(*) FILTER (WHERE valid) AS valid,
       avg(valid::INT) AS valid_rate
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
SELECT found.* FROM found JOIN top USING (rule) ORDER BY violations DESC, rule
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


def _validity_by_format(frame: pl.DataFrame, color: alt.Color) -> alt.LayerChart:
    frame = frame.with_columns(label=pl.format("{} of {}", "valid", "decisions"))
    base = alt.Chart(frame).encode(
        y=alt.Y("format:N", title=None),
        x=alt.X("valid_rate:Q", title="valid decisions", axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1])),
    )
    bars = base.mark_bar().encode(
        color=color,
        tooltip=[alt.Tooltip("format:N"), alt.Tooltip("decisions:Q"), alt.Tooltip("valid:Q"),
                 alt.Tooltip("valid_rate:Q", format=".1%")],
    )
    counts = base.mark_text(align="left", dx=4).encode(text=alt.Text("label:N"))
    return (bars + counts).properties(title="Validity per format", width=300, height=_height(frame))


def _validity_by_model(frame: pl.DataFrame, color: alt.Color) -> alt.LayerChart:
    frame = frame.select("format", "model", "decisions", "valid", "validity", "ci_low", "ci_high", "games").with_columns(
        model=displayed("model"))
    frame = frame.with_columns(row=pl.format("{} · {}", "format", "model"), label=pl.format("n={}", "decisions"))
    base = alt.Chart(frame).encode(
        y=alt.Y("row:N", title=None, sort=None),
        x=alt.X("validity:Q", title="valid decisions", axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1])),
    )
    bars = base.mark_bar().encode(
        color=color,
        tooltip=[alt.Tooltip("format:N"), alt.Tooltip("model:N", title="model or agent"), alt.Tooltip("decisions:Q"),
                 alt.Tooltip("valid:Q"), alt.Tooltip("games:Q"), alt.Tooltip("validity:Q", format=".1%"),
                 alt.Tooltip("ci_low:Q", format=".1%", title="95% low"),
                 alt.Tooltip("ci_high:Q", format=".1%", title="95% high")],
    )
    # The 95% interval, clustered by game, as in the scorecard: a small sample shows as a long whisker.
    whiskers = base.mark_rule(color="black").encode(x=alt.X("ci_low:Q"), x2=alt.X2("ci_high"))
    counts = base.mark_text(align="left", dx=4).encode(x=alt.X("ci_high:Q"), text=alt.Text("label:N"))
    return (bars + whiskers + counts).properties(title="Validity per model or agent (with 95% intervals)",
                                                 width=640, height=_height(frame))


def _top_rules(con, params: dict, color: alt.Color) -> alt.Chart:
    frame = _query(con, TOP_RULES_QUERY, params)
    if frame.is_empty():
        return note_chart("No error or warning violations", "Most frequent violation rules")
    frame = frame.with_columns(displayed("rule"))
    return alt.Chart(frame).mark_bar().encode(
        y=alt.Y("rule:N", title=None, sort=alt.EncodingSortField("violations", op="sum", order="descending")),
        x=alt.X("sum(violations):Q", title="violations"),
        color=color,
        tooltip=[alt.Tooltip("format:N"), alt.Tooltip("rule:N", title="rule"), alt.Tooltip("severity:N"),
                 alt.Tooltip("violations:Q")],
    ).properties(title="Most frequent violation rules", width=300, height=_height(frame, by="rule"))


def _distribution(con, source: str, params: dict, measure: str, title: str, color: alt.Color) -> alt.Chart:
    frame = _query(con, DISTRIBUTION.format(measure=measure, source=source), params)
    if frame.is_empty():
        return note_chart(f"No {title.split(' (')[0]} recorded", title.capitalize())
    frame = _labelled(frame).with_columns(row=pl.format("{} · {}", "format", "who"))
    base = alt.Chart(frame).encode(y=alt.Y("row:N", title=None, sort=None))
    tooltip = [alt.Tooltip("format:N"), alt.Tooltip("who:N", title="model or agent"),
               *(alt.Tooltip(f"{name}:Q") for name in ("n", "lo", "q1", "mid", "q3", "hi"))]
    whiskers = base.mark_rule().encode(x=alt.X("lo:Q", title=title), x2=alt.X2("hi"))
    boxes = base.mark_bar(size=12).encode(x=alt.X("q1:Q"), x2=alt.X2("q3"), color=color, tooltip=tooltip)
    medians = base.mark_tick(color="black", size=12).encode(x=alt.X("mid:Q"))
    return (whiskers + boxes + medians).properties(title=title.capitalize(), width=300, height=_height(frame))


def _labelled(frame: pl.DataFrame) -> pl.DataFrame:
    # Replaces `who`: the whole frame goes into the spec, not only the encoded columns.
    return frame.with_columns(displayed("who"))


def _height(frame: pl.DataFrame, by: str | None = None) -> int:
    rows = frame[by].n_unique() if by else frame.height
    return max(40, 22 * rows)
