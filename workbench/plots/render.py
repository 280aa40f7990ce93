"""Rendering a Vega-Lite spec to PNG, SVG or PDF with vl-convert, in this process or in a
process of its own.

vl-convert's V8 engine takes most of a second to start, and holds the GIL while it does, so in
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
WARM_UP = {
    "title": "warm-up",
    "data": {"values": [{"x": 0, "y": "a"}]},
    "mark": "point",
    "encoding": {"x": {"field": "x", "type": "quantitative"}, "color": {"field": "y", "type": "nominal"}},
}


def render(spec: dict, suffix: str, vl_version: str, scale: float) -> bytes:
    """The bytes of `spec` rendered as `suffix` (one of IMAGES), as Altair's own `save`
    renders them: PNG at `scale` and 72 ppi, PDF at scale 1, SVG as text in UTF-8."""
    import vl_convert

    if suffix == ".png":
        return vl_convert.vegalite_to_png(without_tooltips(spec), vl_version=vl_version, scale=scale, ppi=72)
    if suffix == ".pdf":
        return vl_convert.vegalite_to_pdf(spec, vl_version=vl_version, scale=1)
    return vl_convert.vegalite_to_svg(spec, vl_version=vl_version).encode("utf-8")


# Marks that aggregate their data whatever the encoding says.
COMPOSITE_MARKS = {"boxplot", "errorbar", "errorband"}


def without_tooltips(spec: dict) -> dict:
    """`spec` with no tooltip in its views, where that leaves its pixels as they are: a
    PNG shows no tooltip, and Vega computes one for every mark (a tenth of the emotion
    figure's render). A spec that aggregates anywhere keeps them, since a tooltip's field
    is one its marks are grouped by. (An SVG keeps them: they are its aria-labels.)"""
    return spec if _aggregates(spec) else _stripped(spec)


def _aggregates(node) -> bool:
    if isinstance(node, list):
        return any(_aggregates(value) for value in node)
    if not isinstance(node, dict):
        return False
    mark = node.get("mark")
    if (mark.get("type") if isinstance(mark, dict) else mark) in COMPOSITE_MARKS:
        return True
    if isinstance(node.get("encoding"), dict) and _aggregated(node["encoding"]):
        return True
    return any(_aggregates(value) for key, value in node.items() if key not in ("datasets", "data", "encoding"))


def _aggregated(encoding: dict) -> bool:
    channels = [c for value in encoding.values() for c in (value if isinstance(value, list) else [value])]
    return any(isinstance(channel, dict) and "aggregate" in channel for channel in channels)


def _stripped(node):
    if isinstance(node, list):
        return [_stripped(value) for value in node]
    if not isinstance(node, dict):
        return node
    bare = {}
    for key, value in node.items():
        if key in ("datasets", "data"):  # rows, whose fields may have any name
            bare[key] = value
        elif key in ("encoding", "mark") and isinstance(value, dict):
            bare[key] = {name: part for name, part in value.items() if name != "tooltip"}
        else:
            bare[key] = _stripped(value)
    return bare


class Renderer:
    """A child process whose vl-convert engine starts as soon as it is made. Use it as
    a context manager, so that a child never asked to render is stopped."""

    def __init__(self) -> None:
        try:
            self.child: subprocess.Popen | None = subprocess.Popen(
                [sys.executable, "-I", __file__],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
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
