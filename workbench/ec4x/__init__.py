"""ec4x: not implemented yet (placeholder while the format is being written)."""

from workbench.formats import Format


def _load(ctx):
    raise NotImplementedError("ec4x reader")


FORMAT = Format(name="ec4x", tables="", claims=lambda path, head: False, load=_load)
