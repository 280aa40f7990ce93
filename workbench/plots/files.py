"""Writing a figure to disk by suffix, offline (no CDN, no browser), with no Altair: a
figure is its Vega-Lite spec, and vl-convert renders it and bundles the scripts that
draw it in a page."""

from __future__ import annotations

import html
import json
import os
from pathlib import Path

from workbench.errors import WorkbenchError
from workbench.paths import text_of, writable_folder
from workbench.plots.render import Renderer, render
from workbench.plots.vega import VL_CONVERT_VERSION, spec_of

SUFFIXES = (".png", ".svg", ".pdf", ".html", ".json")


class ScriptSafeJSON(json.JSONEncoder):
    """JSON that cannot close the <script> element it is embedded in: every `<`
    (only ever inside strings) is written as the escape \\u003c."""

    def encode(self, o) -> str:
        return super().encode(o).replace("<", "\\u003c")


def save(chart, path: str | Path, scale: float = 2.0, renderer: Renderer | None = None) -> Path:
    """Write `chart` to `path`.

    Offline: no CDN, no browser. The folder is created when missing.

    Args:
        chart: an Altair chart (checked against the Vega-Lite schema as Altair writes
            it), or a figure's Vega-Lite spec as a dict.
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
        raise WorkbenchError(
            f"cannot write {path}: unknown suffix {suffix or '(none)'}; use one of {', '.join(SUFFIXES)}"
        )
    writable_folder(path)
    spec = spec_of(chart)
    try:
        if suffix == ".html":
            path.write_text(page(spec), encoding="utf-8")
        elif suffix == ".json":
            path.write_text(json.dumps(spec, indent=2), encoding="utf-8")
        else:
            path.write_bytes((renderer.render if renderer else render)(spec, suffix, VL_CONVERT_VERSION, scale))
    except OSError as exc:
        raise WorkbenchError(f"cannot write {text_of(path)}: {exc.strerror or exc}") from None
    return path


def page(spec: dict, title: str = "") -> str:
    """A page that draws `spec` offline: Vega, Vega-Lite and vega-embed inline. The spec
    (with text from logs) is escaped so it cannot end its <script>, and Vega escapes
    text when it renders, so a log cannot inject markup."""
    return f"""<!DOCTYPE html>
<html>
<head>
  <meta charset="UTF-8">
  <title>{html.escape(title or spec_title(spec))}</title>
  <style>
    #vis.vega-embed {{ width: 100%; display: flex; }}
    #vis.vega-embed details, #vis.vega-embed details summary {{ position: relative; }}
  </style>
  <script type="text/javascript">{vega_script()}</script>
</head>
<body>
<div class="vega-visualization" id="vis"></div>
<script type="text/javascript">
  const spec = {json.dumps(spec, cls=ScriptSafeJSON)};
  const embedOpt = {{"mode": "vega-lite"}};
  vegaEmbed('#vis', spec, embedOpt).catch(console.error);
</script>
</body>
</html>
"""


def spec_title(spec: dict) -> str:
    """The text of a spec's title (its lines joined), or "figure"."""
    title = spec.get("title") or "figure"
    text = title.get("text", "figure") if isinstance(title, dict) else title
    return " ".join(map(str, text)) if isinstance(text, list) else str(text)


def vega_script() -> str:
    """Vega, the Vega-Lite the specs are written for and vega-embed as one script, as
    vl-convert bundles them: seconds the first time in a process, so kept in the user's
    cache folder, one file per vl-convert and Vega-Lite version (it bundles the same
    script every time)."""
    import vl_convert

    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "workbench"
    version = vl_convert.__version__  # type: ignore[attr-defined]
    path = cache / f"vega-embed-vl-convert-{version}-vega-lite-{VL_CONVERT_VERSION}.js"
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        pass
    bundle = vl_convert.javascript_bundle(vl_version=VL_CONVERT_VERSION)  # type: ignore[call-arg]
    try:  # whole or not at all: written aside, then renamed
        cache.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}.part")
        partial.write_text(bundle, encoding="utf-8")
        partial.replace(path)
    except OSError:
        pass  # no cache: the next page bundles again
    return bundle
