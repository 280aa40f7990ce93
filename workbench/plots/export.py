"""Writing a chart to disk by suffix, offline (no CDN, no browser)."""

from __future__ import annotations

import json
from pathlib import Path

import altair as alt

from workbench.errors import WorkbenchError
from workbench.paths import text_of, writable_folder

SUFFIXES = (".png", ".svg", ".pdf", ".html", ".json")


class ScriptSafeJSON(json.JSONEncoder):
    """JSON that cannot close the <script> element it is embedded in: every `<`
    (only ever inside strings) is written as the escape \\u003c."""

    def encode(self, o) -> str:
        return super().encode(o).replace("<", "\\u003c")


def save(chart: alt.TopLevelMixin, path: str | Path, scale: float = 2.0) -> Path:
    """Write `chart` to `path`: .png, .svg, .pdf (rendered by vl-convert), .html
    (self-contained, works offline) or .json (the Vega-Lite spec)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise WorkbenchError(f"cannot write {path}: unknown suffix {suffix or '(none)'}; use one of {', '.join(SUFFIXES)}")
    writable_folder(path)
    try:
        if suffix == ".html":
            # `inline=True` embeds vega, vega-lite and vega-embed, so the file opens offline.
            # The spec (with text from logs) is escaped so it cannot end its <script>, and
            # Vega escapes text when it renders, so a log cannot inject markup.
            chart.save(str(path), format="html", inline=True, json_kwds={"cls": ScriptSafeJSON})
        elif suffix == ".png":
            chart.save(str(path), format="png", scale_factor=scale)
        else:
            chart.save(str(path), format=suffix[1:])
    except OSError as exc:
        raise WorkbenchError(f"cannot write {text_of(path)}: {exc.strerror or exc}") from None
    return path
