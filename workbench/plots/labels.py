"""Text in the figures: names from logs made safe and short; the view that stands in for
a figure with nothing to draw; the selection that leads from a mark to its records."""

from __future__ import annotations

import re

import polars as pl

from workbench.plots.vega import Datasets, field, mark, point_selection

LABEL_CHARS = 40
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def display_name(text: str) -> str:
    """A name from a log, safe and short for a figure. Angle brackets become look-alikes:
    the HTML export embeds the spec in a <script> block, where a `</script>` in a
    model name would end it. Control characters become U+FFFD: the image renderer
    refuses them."""
    text = " ".join(str(text).split()).replace("<", "‹").replace(">", "›")
    # a control character (text a log may hold, but no image format can) shows as �
    text = CONTROL.sub("\ufffd", text)
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def displayed(column: str) -> pl.Expr:
    """`column` with every name through `display_name`."""
    return pl.col(column).map_elements(display_name, return_dtype=pl.String)


def note_view(datasets: Datasets, name: str, text: str, title: str, width: int = 300) -> dict:
    """A view that only says `text`, under its figure's usual title; its one row is the
    dataset `name`."""
    return {
        "data": datasets.add(name, [{"note": text}]),
        "mark": mark("text", size=13, color="gray"),
        "encoding": {"text": field("note:N")},
        "title": title,
        "width": width,
        "height": 60,
    }


PICK = "pick"  # the name of a chart's selection that leads to its records (widgets.DrillDown)


def picking(view: str | list[str], *fields: str, name: str = PICK) -> dict:
    """The top-level selection by which a click on a mark of `view` (or of any of the
    views listed) selects it by `fields`, which say which records are behind it; a
    double click clears it."""
    return point_selection(name, fields, [view] if isinstance(view, str) else view, on="click", clear="dblclick")
