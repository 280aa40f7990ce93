"""stellaris: not implemented yet (placeholder while the format is being written)."""

from workbench.formats import Format


def _load(ctx):
    raise NotImplementedError("stellaris reader")


FORMAT = Format(name="stellaris", tables="", claims=lambda path, head: False, load=_load)
