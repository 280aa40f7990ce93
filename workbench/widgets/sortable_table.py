"""Frames as tables to read in a notebook: `table(frame)`."""

from __future__ import annotations

import polars as pl


def table(frame: pl.DataFrame, page: int = 10):
    """A frame as people read it (`display.readable`: intervals with their n, rounded
    numbers, no dtype row) in a sortable, paged, searchable table that scrolls within
    its cell when wide.

    Args:
        frame: the frame to show.
        page: rows per page.

    Returns:
        An itables `ITable` widget.
    """
    from itables.widget import ITable

    from workbench.display import readable

    return ITable(
        readable(frame), pageLength=page, scrollX=True, classes="display compact", showIndex=False, show_dtypes=False
    )


def selectable_table(frame: pl.DataFrame, page: int = 10):
    """A frame as it is (no `display.readable`) in a sortable, paged, searchable table
    one row of which may be selected: its `selected_rows` says which."""
    from itables.widget import ITable

    return ITable(
        frame,
        select={"style": "single"},
        selected_rows=[],
        pageLength=page,
        scrollX=True,
        classes="display compact",
        showIndex=False,
        show_dtypes=False,
    )
