"""Charts in a notebook: drawn without network access (`enable_offline_charts`), and
redrawn as widgets change (`live_chart`)."""

from __future__ import annotations

import html

from workbench.errors import WorkbenchError

_offline_tried = False


def offline_chart_scripts(alt) -> None:
    """Serve the chart's JavaScript from vl-convert instead of a CDN, once per process.
    Where that fails the chart still works, loading its scripts online."""
    global _offline_tried
    if not _offline_tried:
        _offline_tried = True
        try:
            alt.JupyterChart.enable_offline()
        except ImportError:  # no anywidget: the caller falls back to a static chart
            _offline_tried = False
            raise
        except Exception:  # noqa: BLE001 - offline mode is a nicety; the CDN still works
            pass


def has_anywidget() -> bool:
    """Whether the `anywidget` package is installed (charts can then be live `JupyterChart` widgets)."""
    import importlib.util

    return importlib.util.find_spec("anywidget") is not None


def enable_offline_charts() -> str:
    """Make every chart a notebook shows render without network access.

    Altair's default notebook output loads Vega from a CDN, and JupyterLab's built-in
    renderer does not know Vega-Lite 6. With anywidget, charts become `JupyterChart`
    widgets whose scripts come from vl-convert; without it, each chart's HTML carries
    the scripts inline.

    Returns:
        Which of the two is in use, in words.
    """
    from workbench.lean_imports import altair

    alt = altair()

    if has_anywidget():
        offline_chart_scripts(alt)
        alt.renderers.enable("jupyter", offline=True)
        return "JupyterChart widgets, offline"
    alt.renderers.enable("html", template="inline")
    return "inline HTML (install anywidget for chart widgets)"


def live_chart(make_chart, controls: dict):
    """A chart that follows widgets: `make_chart(**values)` is drawn with the controls'
    values and redrawn when one changes. With anywidget, one `JupyterChart` gets the
    new chart (no new widget per change); otherwise the chart is redrawn into an
    Output. A value that cannot be drawn shows its reason instead.

    Args:
        make_chart: a function of the controls' values, by name, that returns a chart; a
            WorkbenchError it raises is shown as its message.
        controls: ipywidgets controls by the name of the argument each gives.

    Returns:
        The widget to display: a VBox of a note and the live chart, or an `interactive_output`.
    """
    from workbench.lean_imports import altair

    alt = altair()
    import ipywidgets as widgets

    if not has_anywidget():
        return widgets.interactive_output(lambda **values: _show(make_chart, values), controls)
    offline_chart_scripts(alt)
    note = widgets.HTML()

    def values() -> dict:
        return {name: control.value for name, control in controls.items()}

    def redraw(_=None) -> None:
        try:
            live.chart = make_chart(**values())
            note.value = ""
        except WorkbenchError as exc:
            note.value = f"<i>{html.escape(str(exc))}</i>"

    live = alt.JupyterChart(alt.Chart(alt.Data(values=[{}])).mark_text().properties(width=20, height=20))
    redraw()
    for control in controls.values():
        control.observe(redraw, names="value")
    return widgets.VBox([note, live])


def _show(make_chart, values: dict) -> None:
    from IPython.display import display

    try:
        display(make_chart(**values))
    except WorkbenchError as exc:
        print(exc)
