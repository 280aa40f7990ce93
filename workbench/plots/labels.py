"""Text in the figures: names from logs made safe and short, and the chart that stands
in for a figure with nothing to draw."""

from __future__ import annotations

import altair as alt
import polars as pl

LABEL_CHARS = 40


def display_name(text: str) -> str:
    """A name from a log, safe and short for a figure. Angle brackets become look-alikes:
    the HTML export embeds the spec in a <script> block, where a `</script>` in a
    model name would end it."""
    text = " ".join(str(text).split()).replace("<", "‹").replace(">", "›")
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def displayed(column: str) -> pl.Expr:
    """`column` with every name through `display_name`."""
    return pl.col(column).map_elements(display_name, return_dtype=pl.String)


def note_chart(text: str, title: str, width: int = 300) -> alt.Chart:
    """A figure that only says `text`, under its usual title."""
    return alt.Chart(pl.DataFrame({"note": [text]})).mark_text(size=13, color="gray").encode(
        text=alt.Text("note:N")
    ).properties(title=title, width=width, height=60)


PICK = "pick"  # the name of a chart's selection that leads to its records (widgets.DrillDown)


def picking(*fields: str, name: str = PICK):
    """A click selects a mark by `fields`, which say which records are behind it; a
    double click clears it."""
    import altair as alt

    return alt.selection_point(name=name, fields=list(fields), on="click", clear="dblclick")
