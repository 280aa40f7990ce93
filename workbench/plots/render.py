"""Rendering a Vega-Lite spec to PNG, SVG or PDF with vl-convert, in this process or in a
process of its own.

vl-convert's V8 engine takes 0.6-0.9 s to start, and holds the GIL while it does, so in
this process it could only start after the chart is built. `Renderer` starts it in a
child process first, and the chart is built meanwhile: `workbench plot` to a PNG takes
that much less. The child is run by file path in isolated mode, so it imports nothing but
vl-convert. Whatever goes wrong in the child, the spec is rendered here instead, where
an error is raised as it always was.

Run as a script, this file is that child: it starts the engine, reads one request (JSON)
from stdin and writes the rendered bytes to stdout."""

from __future__ import annotations

import json
import subprocess
import sys

IMAGES = (".png", ".svg", ".pdf")
# A chart with what every figure has: axes, a legend and a title.
WARM_UP = {"title": "warm-up", "data": {"values": [{"x": 0, "y": "a"}]}, "mark": "point",
           "encoding": {"x": {"field": "x", "type": "quantitative"}, "color": {"field": "y", "type": "nominal"}}}


def render(spec: dict, suffix: str, vl_version: str, scale: float) -> bytes:
    """The bytes of `spec` rendered as `suffix` (one of IMAGES), as Altair's own `save`
    renders them: PNG at `scale` and 72 ppi, PDF at scale 1, SVG as text in UTF-8."""
    import vl_convert

    if suffix == ".png":
        return vl_convert.vegalite_to_png(without_tooltips(spec), vl_version=vl_version, scale=scale, ppi=72)
    if suffix == ".pdf":
        return vl_convert.vegalite_to_pdf(spec, vl_version=vl_version, scale=1)
    return vl_convert.vegalite_to_svg(spec, vl_version=vl_version).encode("utf-8")


def without_tooltips(node):
    """A spec (or a part of one) with no tooltip in its views. A PNG shows none, the same
    pixels are drawn without them, and Vega computes a tooltip for every mark: a tenth of
    the emotion figure's render. (An SVG keeps them: they are its marks' aria-labels.)"""
    if isinstance(node, list):
        return [without_tooltips(value) for value in node]
    if not isinstance(node, dict):
        return node
    bare = {}
    for key, value in node.items():
        if key in ("datasets", "data"):  # rows, whose fields may have any name
            bare[key] = value
        elif key in ("encoding", "mark") and isinstance(value, dict):
            bare[key] = {name: part for name, part in value.items() if name != "tooltip"}
        else:
            bare[key] = without_tooltips(value)
    return bare


class Renderer:
    """A child process whose vl-convert engine starts as soon as it is made. Use it as
    a context manager, so that a child never asked to render is stopped."""

    def __init__(self) -> None:
        try:
            self.child: subprocess.Popen | None = subprocess.Popen(
                [sys.executable, "-I", __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL)
        except OSError:
            self.child = None

    def render(self, spec: dict, suffix: str, vl_version: str, scale: float) -> bytes:
        """`render` done by the child, or here where the child cannot."""
        child, self.child = self.child, None
        if child is not None:
            request = json.dumps({"spec": spec, "suffix": suffix, "vl_version": vl_version, "scale": scale})
            try:
                out, _ = child.communicate(request.encode("utf-8"))
            except OSError:  # the child died before it read the request
                child.kill()
                child.wait()
            else:
                if child.returncode == 0 and out:  # an empty answer is a child that did not render
                    return out
        return render(spec, suffix, vl_version, scale)

    def close(self) -> None:
        if self.child is not None:
            self.child.kill()
            self.child.wait()
            self.child = None

    def __enter__(self) -> Renderer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _serve() -> int:
    import vl_convert

    # Start the engine before the request comes: that is what the child is for. The
    # warm-up lays out text and draws a PNG, so the fonts and the rasteriser are loaded too.
    vl_convert.vegalite_to_png(WARM_UP)
    request = json.loads(sys.stdin.buffer.read())
    sys.stdout.buffer.write(render(request["spec"], request["suffix"], request["vl_version"], request["scale"]))
    return 0


if __name__ == "__main__":
    sys.exit(_serve())
