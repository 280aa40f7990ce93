"""The figures are Vega-Lite specs written as data (`workbench.plots.vega`), and the
Altair chart the Python API returns for each is that spec: Altair writes it back
unchanged, checks it against its schema, and composes and drives it as any chart of its
own. The expected values come from Altair itself: the version it writes, the rows it
writes for a frame, what its own composition of the same chart gives."""

from __future__ import annotations

import datetime as dt
import hashlib
import json

import altair as alt
import duckdb
import polars as pl
import pytest

from workbench import plots
from workbench.plots.emotions import cursor_rule
from workbench.plots.vega import (
    SCHEMA_URL,
    VEGA_LITE,
    VL_CONVERT_VERSION,
    Datasets,
    as_altair,
    field,
    rows,
    spec_of,
)


@pytest.fixture(scope="module")
def con(notebook_db):
    connection = duckdb.connect(str(notebook_db), read_only=True)
    yield connection
    connection.close()


def by_content(spec: dict) -> dict:
    """`spec` with each named dataset written as a hash of its rows: Altair names its
    datasets by their hash, the workbench by what they hold."""
    datasets = spec.get("datasets", {})

    def named(node):
        if isinstance(node, dict):
            if set(node) == {"name"} and node["name"] in datasets:
                return {"rows": hashlib.sha256(json.dumps(datasets[node["name"]], sort_keys=True).encode()).hexdigest()}
            return {key: named(value) for key, value in node.items() if key != "datasets"}
        if isinstance(node, list):
            return [named(value) for value in node]
        return node

    return named(spec)


def test_the_specs_are_written_for_a_vega_lite_altair_and_vl_convert_both_know():
    # Altair's charts of them say its own version (checked against its schema below);
    # vl-convert renders them as the version they say.
    import vl_convert

    assert VEGA_LITE.split(".")[0] == alt.SCHEMA_VERSION.removeprefix("v").split(".")[0] == "6"
    assert SCHEMA_URL == f"https://vega.github.io/schema/vega-lite/v{VEGA_LITE}.json"
    assert VL_CONVERT_VERSION == "v" + "_".join(VEGA_LITE.split(".")[:2])
    assert VL_CONVERT_VERSION.removeprefix("v").replace("_", ".") in vl_convert.get_vegalite_versions()


@pytest.mark.parametrize("kind", list(plots.FIGURES))
def test_each_figure_s_altair_chart_is_its_spec(con, kind):
    spec = plots.figure_spec(kind, con)
    written = as_altair(spec).to_dict(validate=True)  # checked against Altair's Vega-Lite schema
    assert spec["$schema"] == SCHEMA_URL and written.pop("$schema") == alt.SCHEMA_URL
    assert by_content(written) == by_content({key: value for key, value in spec.items() if key != "$schema"})
    assert isinstance(plots.figure(kind, con), type(as_altair(spec)))


@pytest.mark.parametrize("kind", list(plots.FIGURES))
def test_every_selection_names_views_the_figure_has(con, kind):
    # as the spec says and as Altair writes it (it renames the views of concatenated panels)
    spec = plots.figure_spec(kind, con)
    assert selections_name_their_views(spec) and selections_name_their_views(as_altair(spec).to_dict())


def test_a_figure_function_returns_altair_and_its_spec_the_same_figure(con):
    spec = plots.scorecard.spec(con)
    assert isinstance(spec, dict) and set(spec["datasets"]) == {"scorecard"}
    assert by_content(plots.scorecard(con).to_dict()) == by_content(spec)
    assert plots.scorecard.__name__ == "scorecard" and "95% interval" in plots.scorecard.__doc__


def test_the_chart_drives_a_jupyter_chart_by_the_spec_s_selections(con):
    spec = plots.emotion_trajectories.spec(con)
    live = alt.JupyterChart(as_altair(spec))
    names = {param["name"] for param in spec["params"]}
    assert names == {f"pick_{emotion}" for emotion in ("fear", "anger", "shame", "confidence", "tilt")}
    assert set(live.selections.trait_names()) >= names


def units(spec: dict) -> list[str]:
    """The unit views of `spec`, each with its rows in place of its data's name and
    without its own name, as sorted JSON."""
    found = []

    def walk(node, data):
        if isinstance(node, dict):
            data = node.get("data", data)
            if "mark" in node:
                unit = {key: value for key, value in node.items() if key not in ("name", "data")}
                rows_ = spec.get("datasets", {}).get(data.get("name"), data.get("values")) if data else None
                found.append(json.dumps({**unit, "rows": rows_}, sort_keys=True))
            for key, value in node.items():
                if key != "datasets":
                    walk(value, data)
        elif isinstance(node, list):
            for value in node:
                walk(value, data)

    walk(spec, None)
    return sorted(found)


def selections_name_their_views(spec: dict) -> bool:
    names = {unit["name"] for unit in _all(spec) if "mark" in unit and "name" in unit}
    return {view for param in spec.get("params", []) for view in param.get("views", [])} <= names


def _all(node):
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _all(value)
    elif isinstance(node, list):
        for value in node:
            yield from _all(value)


# Not the economy or the scorecard: Altair cannot concatenate a faceted chart whose
# selection is made in a layer other than its first (it names the first for it), and
# failed alike on the charts it built of them itself.
@pytest.mark.parametrize("kind", ["emotions", "attacks", "decisions", "families", "trace-steps"])
def test_it_composes_as_an_altair_chart(con, kind):
    spec = plots.figure_spec(kind, con)
    extra = alt.Chart(alt.Data(values=[{"a": 1}])).mark_point().encode(x="a:Q")
    chart = as_altair(spec)
    composed = {"beside": chart | extra, "above": chart & extra, "titled": chart.properties(title="mine")}
    for how, made in composed.items():
        written = made.to_dict(validate=True)
        assert selections_name_their_views(written), how
        assert set(units(spec)) <= set(units(written)), how
    assert composed["titled"].to_dict()["title"] == "mine"


def inlined(spec: dict) -> dict:
    """`spec` with each view's named data written in the view, and no top-level keys a
    chart made by Altair's own `from_dict` cannot have."""
    datasets = spec["datasets"]

    def inline(node):
        if isinstance(node, dict):
            if set(node) == {"name"} and node["name"] in datasets:
                return {"values": datasets[node["name"]]}
            return {key: inline(value) for key, value in node.items()}
        return [inline(value) for value in node] if isinstance(node, list) else node

    return inline({key: value for key, value in spec.items() if key not in ("$schema", "config", "datasets")})


def test_a_variable_parameter_added_lands_at_the_top(con):
    chart = plots.emotion_trajectories(con, overlay=cursor_rule("cursor")).add_params(alt.param(name="cursor", value=7))
    params = chart.to_dict(validate=True)["params"]
    assert {"name": "cursor", "value": 7} in params
    assert all(p["name"].startswith("pick_") for p in params if p["name"] != "cursor")


def test_an_altair_chart_as_overlay_joins_the_figure_with_its_data(con):
    rule = alt.Chart(alt.Data(values=[{"seq": 100}])).mark_rule().encode(x="seq:Q")
    spec = plots.emotion_trajectories.spec(con, emotions=["tilt"], overlay=rule)
    [layer] = [panel["layer"] for panel in spec["vconcat"]]
    assert layer[-1]["mark"] == {"type": "rule"} and layer[-1]["data"] == {"values": [{"seq": 100}]}
    plots.emotion_trajectories(con, emotions=["tilt"], overlay=rule).to_dict(validate=True)


def test_rows_are_what_altair_writes_for_the_frame():
    frame = pl.DataFrame(
        {
            "n": [1, None],
            "x": [0.5, float("inf")],
            "s": ["a", None],
            "ok": [True, False],
            "day": [dt.date(2026, 1, 2), None],
            "at": [dt.datetime(2026, 1, 2, 3, 4, 5, 600000), dt.datetime(2026, 1, 2)],
            "utc": pl.Series([dt.datetime(2026, 1, 2, 3, 4, 5)] * 2).dt.replace_time_zone("UTC"),
            "list": [[1, 2], []],
        }
    )
    written = alt.Chart(frame).mark_point().to_dict()
    [altairs] = written["datasets"].values()
    assert rows(frame) == altairs


def test_a_duration_cannot_be_drawn():
    with pytest.raises(ValueError, match="duration"):
        rows(pl.DataFrame({"d": [dt.timedelta(seconds=1)]}))


def test_a_field_is_written_as_altair_writes_its_shorthand():
    for shorthand, props in [
        ("seq:Q", {}),
        ("player_id:N", {"title": "player"}),
        ("rank:O", {}),
        ("when:T", {"format": "%Y"}),
    ]:
        ours = field(shorthand, **props)
        theirs = alt.Tooltip(shorthand, **props).to_dict()
        assert ours == theirs
    for bad in ("seq", "seq:X", ":Q", "seq:q"):
        with pytest.raises(ValueError, match="name:N"):
            field(bad)


def test_a_spec_names_each_dataset_once():
    datasets = Datasets()
    assert datasets.add("lines", [{"a": 1}]) == {"name": "lines"}
    with pytest.raises(ValueError, match="one dataset named 'lines'"):
        datasets.add("lines", [{"a": 2}])
    assert datasets.values == {"lines": [{"a": 1}]}


def test_spec_of_takes_a_spec_as_it_is_and_a_chart_as_altair_writes_it():
    spec = {"mark": "point"}
    assert spec_of(spec) is spec
    chart = alt.Chart(alt.Data(values=[{"a": 1}])).mark_point()
    assert spec_of(chart) == chart.to_dict()


def test_an_overlay_s_variable_parameter_is_the_figure_s_once(con):
    rule = (
        alt.Chart()
        .mark_rule()
        .encode(x=alt.X(datum=alt.expr("at"), type="quantitative"))
        .add_params(alt.param(name="at", value=100))
    )
    spec = plots.emotion_trajectories.spec(con, emotions=["tilt", "fear"], overlay=rule)
    assert [p for p in spec["params"] if p["name"] == "at"] == [{"name": "at", "value": 100}]
    assert all("params" not in view for panel in spec["vconcat"] for view in panel["layer"])
    as_altair(spec).to_dict(validate=True)


def test_a_figure_function_s_spec_pickles_as_itself():
    import pickle

    assert pickle.loads(pickle.dumps(plots.scorecard.spec)) is plots.scorecard.spec
    assert pickle.loads(pickle.dumps(plots.scorecard)) is plots.scorecard
