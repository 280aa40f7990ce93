"""Two models' decisions on the turns they shared, side by side: `SideBySide(db, a, b)`."""

from __future__ import annotations

import html
from pathlib import Path

import polars as pl

from workbench.connection import reading
from workbench.widgets.markup import WRAPPED, pretty
from workbench.widgets.sortable_table import selectable_table

# How a side's outcome reads in the pane.
OUTCOME_HTML = {
    "valid": "valid",
    "invalid": "<b style=color:#c0392b>invalid</b>",
    "failed": "<b style=color:#7f8c8d>failed</b> (no answer came back)",
}


def _side_html(row: dict, who: str, side: str) -> str:
    """One model's decision of a side-by-side row: outcome, rules, seat, place and its raw
    text pretty-printed; a side with no decision in this row says so."""
    if row["locator" + side] is None:
        return (
            f"<div style='flex:1 1 0;min-width:0'><b>{html.escape(row[who])}</b> · "
            f"<i>no decision of its own in this row</i></div>"
        )
    seat = f" · as {html.escape(row['agent_id' + side])}" if row["agent_id" + side] is not None else ""
    return (
        f"<div style='flex:1 1 0;min-width:0'><b>{html.escape(row[who])}</b>{seat} · "
        f"{OUTCOME_HTML.get(row['outcome' + side], '—')}"
        f"{' · ' + html.escape(', '.join(row['rules' + side])) if row['rules' + side] else ''}"
        f"<div title='{html.escape(row['path' + side] or '')}'>{html.escape(row['locator' + side] or '')} of "
        f"{html.escape(Path(row['path' + side] or '').name)}</div>"
        f"<pre style='{WRAPPED}'>{html.escape(pretty(row['raw' + side] or '—'))}</pre></div>"
    )


SIDE_ROW = (
    "format",
    "game_id",
    "turn",
    "round",
    "disagree",
    "agent_id_a",
    "action_a",
    "outcome_a",
    "rules_a",
    "agent_id_b",
    "action_b",
    "outcome_b",
    "rules_b",
)


class SideBySide:
    """Two models' decisions on the turns they shared (`analysis.side_by_side`), the
    disagreements first: a table with one decision a side per row (a Damage hand: one
    row per betting round and seat), and the selected row's two records as written,
    each pretty-printed, side by side. `.pairs` is the frame; `.select(i)` shows row i;
    `.widget` the view.

    Args:
        db: a database path or a connection (only read).
        a: the first model (or agent, where a log names no model).
        b: the second model, another than `a`.
        format: only this format's decisions; None: every format.
        aliases: a dict, or a JSON or CSV file, mapping names to one model.

    Raises:
        WorkbenchError: `a` and `b` are the same model.
    """

    def __init__(self, db, a: str, b: str, format: str | None = None, aliases=None):
        import ipywidgets as widgets

        from workbench.records import side_by_side

        self.a, self.b = a, b
        with reading(db) as con:
            self.pairs = side_by_side(con, a, b, format=format, aliases=aliases)
        turns = self.pairs.select("format", "game_id", "turn", "disagree").unique()
        disagree = int(turns["disagree"].sum()) if turns.height else 0
        self.count = widgets.HTML(
            f"<b>{turns.height:,}</b> turns both decided, <b>{disagree:,}</b> where one's "
            f"answers were all valid and the other's not (listed first)"
        )
        self.pane = widgets.HTML("<i>select a turn to read both decisions</i>" if self.pairs.height else "")
        children = [self.count]
        if self.pairs.height:
            shown = self.pairs.select(SIDE_ROW).with_columns(
                pl.col("rules_a", "rules_b").list.join(", "), pl.col("outcome_a", "outcome_b").fill_null("—")
            )
            self.table = selectable_table(shown)
            self.table.observe(lambda change: change["new"] and self.select(change["new"][0]), names="selected_rows")
            children.append(self.table)
        self.widget = widgets.VBox([*children, self.pane])

    def select(self, index: int) -> str:
        """Show the two decisions of row `index` of `.pairs` side by side in the pane.

        Args:
            index: the row of `.pairs`, from 0.

        Returns:
            The pane's HTML: each model's validity, rules broken, place and raw text.
        """
        row = self.pairs.row(index, named=True)
        sides = "".join(_side_html(row, who, side) for who, side in (("a", "_a"), ("b", "_b")))
        within = f" · {html.escape(row['round'])}" if row["round"] is not None else ""
        self.pane.value = (
            f"<div>{html.escape(row['format'])} · {html.escape(str(row['game_id']))} · turn "
            f"{row['turn']}{within}</div><div style='display:flex;gap:16px'>{sides}</div>"
        )
        return self.pane.value

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
