"""Agent Arena reasoning traces: how long each step of the decision pipeline takes, per
model. The percentiles are computed in DuckDB (`arena.queries.step_times`); only one row
per step name and model goes into the spec."""

from __future__ import annotations

import altair as alt
import polars as pl

from workbench.arena.queries import step_times
from workbench.errors import WorkbenchError
from workbench.plots.labels import displayed, note_chart

TITLE = "Reasoning-trace step times: median (bar) and 95th percentile (tick) per model"


def step_times_chart(con, strict: bool = False) -> alt.Chart | alt.LayerChart:
    """Per step name (rows, in pipeline order), one bar per model for its median
    duration_ms, a rule and a tick out to its 95th percentile. The x axis is logarithmic:
    an LLM request takes seconds where building a prompt takes a millisecond. A database
    with no timed step gives a chart saying so, or (`strict`, as `workbench plot` asks)
    a WorkbenchError.

    Args:
        con: a connection to a workbench database holding Agent Arena reasoning traces.
        strict: raise instead of drawing a note when there is nothing to plot.

    Returns:
        An Altair layered chart (bars, rules, ticks), or a note chart.

    Raises:
        WorkbenchError: with `strict`, no timed reasoning-trace step in the database.
    """
    try:
        frame = step_times(con)
    except WorkbenchError as exc:
        if strict:
            raise
        return note_chart(f"Nothing to plot: {exc}", TITLE, width=420)
    frame = frame.filter(pl.col("p50_ms").is_not_null() & (pl.col("p95_ms") > 0))
    if frame.is_empty():
        missing = ("no timed reasoning-trace step in this database; ingest Agent Arena traces "
                   "(traces/<episode_id>.jsonl) whose steps carry duration_ms")
        if strict:
            raise WorkbenchError(missing)
        return note_chart(f"Nothing to plot: {missing}", TITLE, width=420)
    return _chart(frame.with_columns(displayed("model")))


def _chart(frame: pl.DataFrame) -> alt.LayerChart:
    names = list(dict.fromkeys(frame["name"].to_list()))  # pipeline order, as the query sorts
    models = sorted(frame["model"].unique().to_list())
    # A log scale has no zero: bars start at half the smallest positive time, and a
    # time below that (0 ms) is drawn there; the tooltip keeps the true values.
    times = pl.concat([frame["p50_ms"], frame["p95_ms"]])
    floor = times.filter(times > 0).min() / 2
    frame = frame.with_columns(
        floor=pl.lit(floor), p50_shown=pl.max_horizontal("p50_ms", pl.lit(floor)),
        p95_shown=pl.max_horizontal("p95_ms", pl.lit(floor)),
    )
    log = alt.Scale(type="log")
    base = alt.Chart(frame).encode(
        y=alt.Y("name:N", title="step", sort=names),
        yOffset=alt.YOffset("model:N", sort=models),
        color=alt.Color("model:N", title="model (or agent)", sort=models),
        tooltip=[*(alt.Tooltip(name) for name in ("name:N", "model:N", "model_from:N", "steps:Q", "timed:Q")),
                 alt.Tooltip("p50_ms:Q", format=",.1f", title="p50 (ms)"),
                 alt.Tooltip("p95_ms:Q", format=",.1f", title="p95 (ms)")],
    )
    bars = base.mark_bar().encode(x=alt.X("floor:Q", scale=log, title="duration (ms, log scale)"),
                                  x2=alt.X2("p50_shown"))
    rules = base.mark_rule().encode(x=alt.X("p50_shown:Q", scale=log), x2=alt.X2("p95_shown"))
    ticks = base.mark_tick(thickness=2, color="black").encode(x=alt.X("p95_shown:Q", scale=log))
    height = max(60, 14 * len(frame) + 10 * len(names))
    return alt.layer(bars, rules, ticks).properties(title=TITLE, width=420, height=height)

