"""Agent Arena reasoning traces: how long each step of the decision pipeline takes, per
model. The percentiles are computed in DuckDB (`arena.queries.step_times`); only one row
per step name and model goes into the spec."""

from __future__ import annotations

from typing import cast

import polars as pl

from workbench.errors import WorkbenchError
from workbench.plots.kinds import figure_kind
from workbench.plots.labels import displayed, note_view
from workbench.plots.vega import Datasets, altair_figure, field, mark, top_level

TITLE = "Reasoning-trace step times: median (bar) and 95th percentile (tick) per model"


@figure_kind("trace-steps", order=9, strict=True)
@altair_figure
def step_times_chart(con, strict: bool = False):
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
    from workbench.arena.queries import step_times

    try:
        frame = step_times(con)
    except WorkbenchError as exc:
        if strict:
            raise
        return _note(f"Nothing to plot: {exc}")
    frame = frame.filter(pl.col("p50_ms").is_not_null() & (pl.col("p95_ms") > 0))
    if frame.is_empty():
        missing = (
            "no timed reasoning-trace step in this database; ingest Agent Arena traces "
            "(traces/<episode_id>.jsonl) whose steps carry duration_ms"
        )
        if strict:
            raise WorkbenchError(missing)
        return _note(f"Nothing to plot: {missing}")
    return _spec(frame.with_columns(displayed("model")))


def _note(text: str) -> dict:
    datasets = Datasets()
    return top_level(note_view(datasets, "note", text, TITLE, width=420), datasets)


def _spec(frame: pl.DataFrame) -> dict:
    datasets = Datasets()
    names = list(dict.fromkeys(frame["name"].to_list()))  # pipeline order, as the query sorts
    models = sorted(frame["model"].unique().to_list())
    # A log scale has no zero: bars start at half the smallest positive time, and a
    # time below that (0 ms) is drawn there; the tooltip keeps the true values.
    times = pl.concat([frame["p50_ms"], frame["p95_ms"]])
    floor = cast("float", times.filter(times > 0).min()) / 2
    frame = frame.with_columns(
        floor=pl.lit(floor),
        p50_shown=pl.max_horizontal("p50_ms", pl.lit(floor)),
        p95_shown=pl.max_horizontal("p95_ms", pl.lit(floor)),
    )
    log = {"type": "log"}
    shared = {
        "y": field("name:N", title="step", sort=names),
        "yOffset": field("model:N", sort=models),
        "color": field("model:N", title="model (or agent)", sort=models),
        "tooltip": [
            *(field(name) for name in ("name:N", "model:N", "model_from:N", "steps:Q", "timed:Q")),
            field("p50_ms:Q", format=",.1f", title="p50 (ms)"),
            field("p95_ms:Q", format=",.1f", title="p95 (ms)"),
        ],
    }
    bars = {
        "mark": mark("bar"),
        "encoding": {
            **shared,
            "x": field("floor:Q", scale=log, title="duration (ms, log scale)"),
            "x2": {"field": "p50_shown"},
        },
    }
    rules = {
        "mark": mark("rule"),
        "encoding": {**shared, "x": field("p50_shown:Q", scale=log), "x2": {"field": "p95_shown"}},
    }
    ticks = {
        "mark": mark("tick", thickness=2, color="black"),
        "encoding": {**shared, "x": field("p95_shown:Q", scale=log)},
    }
    return top_level(
        {
            "data": datasets.add("steps", frame),
            "layer": [bars, rules, ticks],
            "title": TITLE,
            "width": 420,
            "height": max(60, 14 * len(frame) + 10 * len(names)),
        },
        datasets,
    )
