"""Figures written as Vega-Lite specs, and the Altair charts made of them.

Every figure is a Vega-Lite spec written as plain dicts and lists: its data are named
datasets at the top, its selections are top-level parameters naming their views. Writing
one takes milliseconds and needs no Altair, whose import and object model would be most
of `workbench plot` and `workbench report`
(docs/performance.md, "Figures without Altair"). Those commands render and embed the
specs; the Python API and the notebooks get an Altair chart of the same spec
(`as_altair`), which composes, displays and drives a `JupyterChart` as any Altair chart does.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Protocol, cast

import polars as pl

# The Vega-Lite version the specs are written for, as `$schema` names it and as vl-convert
# names it; Altair's charts of them are checked against its own schema (tests/test_vega.py).
VEGA_LITE = "6.4.1"
SCHEMA_URL = f"https://vega.github.io/schema/vega-lite/v{VEGA_LITE}.json"
VL_CONVERT_VERSION = "v" + "_".join(VEGA_LITE.split(".")[:2])
# Altair's default theme: the size of a view with a continuous axis and no width or height.
DEFAULT_CONFIG = {"view": {"continuousWidth": 300, "continuousHeight": 300}}

TYPES = {"N": "nominal", "Q": "quantitative", "O": "ordinal", "T": "temporal"}


def field(shorthand: str, **props: Any) -> dict:
    """An encoding of a field: `field("value:Q", title="tilt")` is
    `{"field": "value", "type": "quantitative", "title": "tilt"}`."""
    name, _, kind = shorthand.rpartition(":")
    if not name or kind not in TYPES:
        raise ValueError(f"a field is written name:N, name:Q, name:O or name:T, not {shorthand!r}")
    return {"field": name, "type": TYPES[kind], **props}


def mark(kind: str, **props: Any) -> dict:
    """A mark: `mark("point", filled=True)` is `{"type": "point", "filled": True}`."""
    return {"type": kind, **props}


def point_selection(
    name: str, fields: Sequence[str], views: Sequence[str], bind: str | None = None, **select: Any
) -> dict:
    """A top-level point selection on `fields`, made by the marks of `views` (or through
    `bind`, such as the legend); `select` adds to how (`on="click"`)."""
    param = {"name": name, "select": {"type": "point", "fields": list(fields), **select}, "views": list(views)}
    return param | ({"bind": bind} if bind else {})


def rows(frame: pl.DataFrame) -> list[dict]:
    """The rows of `frame` as JSON values, as Altair writes a polars frame: dates and
    times as local ISO text (a time zone kept where the column has one)."""
    temporal = []
    for name, dtype in frame.schema.items():
        if dtype == pl.Date:
            temporal.append(pl.col(name).cast(pl.Datetime).dt.to_string("%Y-%m-%dT%H:%M:%S"))
        elif isinstance(dtype, pl.Datetime):
            zone = "%z" if dtype.time_zone is not None else ""
            temporal.append(pl.col(name).dt.to_string(f"%Y-%m-%dT%H:%M:%S%.f{zone}"))
        elif isinstance(dtype, pl.Duration):
            raise ValueError(f"column {name!r} is a duration, which Vega-Lite cannot draw")
    return (frame.with_columns(temporal) if temporal else frame).to_dicts()


class Datasets:
    """The named datasets of one spec: `add` keeps a frame's rows and returns the data
    reference a view takes."""

    def __init__(self) -> None:
        self.values: dict[str, list[dict]] = {}

    def add(self, name: str, frame: pl.DataFrame | list[dict]) -> dict:
        if name in self.values:
            raise ValueError(f"a spec has one dataset named {name!r}")
        self.values[name] = frame if isinstance(frame, list) else rows(frame)
        return {"name": name}


def top_level(spec: dict, datasets: Datasets) -> dict:
    """`spec` as a whole figure: its schema, Altair's default view size, and its datasets."""
    return {"$schema": SCHEMA_URL, "config": DEFAULT_CONFIG, **spec, "datasets": datasets.values}


# --- Altair -------------------------------------------------------------------------------


class FigureFunction(Protocol):
    """A figure's public function, as `altair_figure` makes it: it returns the figure as
    an Altair chart, and its `.spec` as a Vega-Lite spec."""

    __name__: str
    __qualname__: str
    spec: Callable[..., dict]

    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...


def altair_figure(build: Callable[..., dict]) -> FigureFunction:
    """The figure function `build`, which returns a Vega-Lite spec, as the public function
    that returns the figure as an Altair chart; `build` stays reachable as its `.spec`."""

    @functools.wraps(build)
    def chart(*args, **kwargs):
        return as_altair(build(*args, **kwargs))

    chart.spec = build  # type: ignore[attr-defined]
    build.__qualname__ += ".spec"  # the name it is found by again, as in a process pool
    return cast(FigureFunction, chart)


def as_altair(spec: dict):
    """An Altair chart of `spec` (a figure's Vega-Lite spec), equal to it as `to_dict()`
    writes it, but for the names of its datasets (Altair names them by their hash).

    Each view becomes the Altair class that Altair itself would build (a layer a
    LayerChart, a unit a Chart, ...), with its encoding and parameters as Altair objects,
    so it composes, displays and drives a `JupyterChart` as Altair's own charts do. The
    rest is kept as the spec has it: a view's `data` is `{"values": rows}` (Altair's
    data transformers and its row limit do not apply), and an encoding's channels and a
    mark are dicts (`chart.encoding.x["title"]`, not `.x.title`). It is made in
    milliseconds, where `Chart.from_dict` takes seconds matching every value against
    the schema (docs/performance.md)."""
    datasets = spec.get("datasets", {})
    props = {key: value for key, value in spec.items() if key not in ("$schema", "datasets")}
    if props.get("config") == DEFAULT_CONFIG:  # Altair's theme adds it again
        del props["config"]
    return _view(props, datasets)


def _view(props: dict, datasets: dict):
    from workbench.lean_imports import altair

    alt = altair()

    props = dict(props)
    data = props.get("data")
    if isinstance(data, dict) and set(data) == {"name"} and data["name"] in datasets:
        props["data"] = {"values": datasets[data["name"]]}
    if "encoding" in props:
        props["encoding"] = alt.FacetedEncoding(**props["encoding"])
    if "params" in props:
        props["params"] = [_parameter(param) for param in props["params"]]
    for key, cls in (
        ("layer", alt.LayerChart),
        ("vconcat", alt.VConcatChart),
        ("hconcat", alt.HConcatChart),
        ("concat", alt.ConcatChart),
    ):
        if key in props:
            props[key] = [_view(child, datasets) for child in props[key]]
            return cls(**props)
    if "spec" in props:
        props["spec"] = _view(props["spec"], datasets)
        return alt.FacetChart(**props)
    return alt.Chart(**props)


def _parameter(param: dict):
    from workbench.lean_imports import altair

    alt = altair()

    if "select" not in param:
        return alt.VariableParameter(**param)
    return alt.TopLevelSelectionParameter(**param) if "views" in param else alt.SelectionParameter(**param)


def spec_of(chart) -> dict:
    """The Vega-Lite spec of a figure: a spec as it is, or what an Altair chart's
    `to_dict()` writes (which checks it against Altair's schema)."""
    return chart if isinstance(chart, dict) else chart.to_dict()
