"""Writing a chart to disk by suffix, offline (no CDN, no browser)."""

from __future__ import annotations

import json
from pathlib import Path

import altair as alt
from altair.vegalite import SCHEMA_VERSION

from workbench.errors import WorkbenchError
from workbench.paths import text_of, writable_folder
from workbench.plots.render import IMAGES, Renderer, render

SUFFIXES = (".png", ".svg", ".pdf", ".html", ".json")
# The Vega-Lite version of Altair's specs, as vl-convert names it (`v6_4`).
VL_VERSION = "_".join(SCHEMA_VERSION.split(".")[:2])


class ScriptSafeJSON(json.JSONEncoder):
    """JSON that cannot close the <script> element it is embedded in: every `<`
    (only ever inside strings) is written as the escape \\u003c."""

    def encode(self, o) -> str:
        return super().encode(o).replace("<", "\\u003c")


def save(chart: alt.TopLevelMixin, path: str | Path, scale: float = 2.0, renderer: Renderer | None = None) -> Path:
    """Write `chart` to `path`.

    Offline: no CDN, no browser. The folder is created when missing.

    Args:
        chart: an Altair chart.
        path: where to write it; its suffix says how: .png, .svg, .pdf (rendered by
            vl-convert), .html (self-contained, works offline) or .json (the Vega-Lite spec).
        scale: how many pixels a PNG has per pixel of the chart.
        renderer: a `Renderer` started before the chart was built, to render an image in.

    Returns:
        `path`, as a Path.

    Raises:
        WorkbenchError: an unknown suffix, or a path that cannot be written.
    """
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
        elif suffix in IMAGES:
            # Not validated against the Vega-Lite schema here (a tenth of a second or more):
            # the tests validate every figure's spec.
            spec = chart.to_dict(validate=False)
            rendered = (renderer.render if renderer else render)(spec, suffix, VL_VERSION, scale)
            path.write_bytes(rendered)
        else:
            chart.save(str(path), format=suffix[1:])
    except OSError as exc:
        raise WorkbenchError(f"cannot write {text_of(path)}: {exc.strerror or exc}") from None
    return path
