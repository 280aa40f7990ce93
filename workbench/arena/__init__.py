"""arena: not implemented yet (placeholder while the format is being written)."""

from workbench.formats import Format


def _load(ctx):
    raise NotImplementedError("arena reader")


FORMAT = Format(name="arena", tables="", claims=lambda path, head: False, load=_load)
