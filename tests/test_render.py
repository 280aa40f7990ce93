"""Images rendered in a child process (`workbench.plots.render.Renderer`) are the bytes
Altair's own `save` writes, and whatever goes wrong in the child, the image is still
rendered. A PNG is rendered without tooltips, which it cannot show: its pixels are the
same. (Every figure's spec is valid Vega-Lite: tests/test_vega.py.)"""

import json
import subprocess
import sys

import altair as alt
import duckdb
import pytest

from tests.figures import assert_rendered
from workbench import plots
from workbench.cli import main
from workbench.plots.render import Renderer, render, without_tooltips
from workbench.plots.vega import VL_CONVERT_VERSION

SPEC_CHART = alt.Chart(alt.Data(values=[{"x": i, "y": i * i} for i in range(6)])).mark_line().encode(x="x:Q", y="y:Q")


@pytest.fixture(scope="module")
def all_figures_db(notebook_db):
    con = duckdb.connect(str(notebook_db), read_only=True)
    yield con
    con.close()


# The figures whose marks are grouped by their fields (a sum of violations; an error bar)
# keep their tooltips: a tooltip's field is one the marks are grouped by.
AGGREGATING = {"decisions", "attack-study"}


@pytest.mark.parametrize("kind", list(plots.FIGURES))
def test_a_png_without_tooltips_has_the_same_pixels(all_figures_db, kind):
    import vl_convert

    spec = plots.figure_spec(kind, all_figures_db)
    views = {key: value for key, value in without_tooltips(spec).items() if key != "datasets"}
    assert '"tooltip"' in json.dumps(spec)
    assert ('"tooltip"' in json.dumps(views)) == (kind in AGGREGATING)
    with_them = vl_convert.vegalite_to_png(spec, vl_version=VL_CONVERT_VERSION, scale=2.0, ppi=72)
    assert render(spec, ".png", VL_CONVERT_VERSION, 2.0) == with_them


FRAME = {"model": ["a", "a", "b", "b"], "game": ["g1", "g2", "g1", "g2"], "valid": [0.2, 0.8, 0.4, 0.6]}


@pytest.mark.parametrize(
    "encoding",
    [
        {"x": "mean(valid):Q", "y": "model:N", "tooltip": ["game:N"]},  # four points, not two
        {"x": "model:N", "y": "count():Q", "tooltip": ["game:N"]},  # bars of 1 stacked, not one bar of 2
        {"x": "model:N", "y": "valid:Q", "tooltip": ["count():Q"]},  # the tooltip itself aggregates
    ],
)
def test_a_chart_that_groups_keeps_its_tooltips_and_its_pixels(tmp_path, encoding):
    chart = (
        alt.Chart(alt.Data(values=[dict(zip(FRAME, row)) for row in zip(*FRAME.values())]))
        .mark_bar()
        .encode(**encoding)
    )
    spec = chart.to_dict()
    assert without_tooltips(spec) is spec
    plots.save(chart, tmp_path / "ours.png")
    chart.save(str(tmp_path / "altair.png"), scale_factor=2.0)
    assert (tmp_path / "ours.png").read_bytes() == (tmp_path / "altair.png").read_bytes()


def test_a_composite_mark_keeps_its_tooltips():
    spec = {
        "mark": {"type": "boxplot"},
        "encoding": {"y": {"field": "v", "type": "quantitative"}, "tooltip": [{"field": "g", "type": "nominal"}]},
    }
    assert without_tooltips(spec) is spec


def test_only_the_views_lose_their_tooltips():
    spec = {
        "datasets": {"rows": [{"tooltip": "a field of that name", "x": 1}]},
        "data": {"values": [{"tooltip": 2}]},
        "layer": [
            {
                "mark": {"type": "point", "tooltip": True},
                "encoding": {
                    "x": {"field": "x", "type": "quantitative"},
                    "tooltip": [{"field": "tooltip", "type": "nominal"}],
                },
            }
        ],
    }
    assert without_tooltips(spec) == {
        "datasets": spec["datasets"],
        "data": spec["data"],
        "layer": [{"mark": {"type": "point"}, "encoding": {"x": {"field": "x", "type": "quantitative"}}}],
    }
    assert spec["layer"][0]["encoding"]["tooltip"]  # the spec itself is left as it was


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_child_renders_what_altair_saves(tmp_path, suffix):
    ours, altairs = tmp_path / f"ours{suffix}", tmp_path / f"altair{suffix}"
    with Renderer() as renderer:
        plots.save(SPEC_CHART, ours, renderer=renderer)
        assert renderer.child is None  # used once, then gone
    SPEC_CHART.save(str(altairs), **({"scale_factor": 2.0} if suffix == ".png" else {}))
    assert ours.read_bytes() == altairs.read_bytes()


def test_child_renders_a_pdf(tmp_path):
    with Renderer() as renderer:
        path = plots.save(SPEC_CHART, tmp_path / "x.pdf", renderer=renderer)
    assert_rendered(path)


def test_a_child_that_cannot_start_leaves_the_render_here(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-python"))
    with Renderer() as renderer:
        assert renderer.child is None
        plots.save(SPEC_CHART, tmp_path / "x.png", renderer=renderer)
    assert (tmp_path / "x.png").read_bytes() == render(SPEC_CHART.to_dict(), ".png", VL_CONVERT_VERSION, 2.0)


@pytest.mark.parametrize("code", ["import sys; sys.exit(3)", "import os; os._exit(0)", "raise SystemExit('boom')"])
def test_a_child_that_fails_leaves_the_render_here(tmp_path, code):
    # A child that dies, or exits 0 having written nothing, or fails: the image is the same.
    renderer = Renderer.__new__(Renderer)
    renderer.child = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    if code.startswith("import os"):
        renderer.child.wait()
    with renderer:
        plots.save(SPEC_CHART, tmp_path / "x.svg", renderer=renderer)
    assert_rendered(tmp_path / "x.svg")


def test_an_unused_child_is_stopped():
    with Renderer() as renderer:
        child = renderer.child
        assert child.poll() is None  # starting its engine
    assert child.returncode is not None and renderer.child is None


def test_plot_without_data_stops_its_child(tmp_path, capsys):
    # The figure cannot be drawn: one line, exit 2, and no renderer left behind.
    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()
    before = _children()
    assert main(["plot", "emotions", "--db", str(empty), "-o", str(tmp_path / "x.png")]) == 2
    assert "workbench:" in capsys.readouterr().err
    assert _children() == before and not (tmp_path / "x.png").exists()


def _children() -> set[int]:
    """The process ids of this process's children (Linux)."""
    import os
    from pathlib import Path

    found = set()
    for status in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = status.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid():
            found.add(int(status.parent.name))
    return found
