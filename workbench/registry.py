"""The one place that knows every source format. Order matters: the first format
whose `claims` accepts a file reads it, so formats recognised by file name come
before Damage, which also recognises envelope-shaped JSONL by content."""

from __future__ import annotations

from workbench import arena, damage, ec4x, gm, stellaris
from workbench.formats import Format

FORMATS: dict[str, Format] = {
    fmt.name: fmt for fmt in (stellaris.FORMAT, ec4x.FORMAT, arena.FORMAT, gm.FORMAT, damage.FORMAT)
}
