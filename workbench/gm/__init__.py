"""gm: not implemented yet (placeholder while the format is being written)."""

from workbench.formats import Format


def _load(ctx):
    raise NotImplementedError("gm reader")


FORMAT = Format(name="gm", tables="", claims=lambda path, head: False, load=_load)
