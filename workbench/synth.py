"""A deterministic synthetic corpus of every built-in format that has a generator
(`Format.generate`), with the real programs' quirks (formats.md) and injected faults
listed in `manifest.json`.

A format's generator lives in its folder (`<format>/synth.py`):
`generate(out_dir, scale, rng) -> list[dict]` returning one manifest entry per file
written: `{"path": <relative to out_dir>, "format": <name>, "faults": [{"locator",
"field", "rule"}]}`. The same seed gives the same bytes.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from workbench.registry import BUILT_IN


def synthesize(out: str | Path, scale: int = 1, seed: int = 7) -> dict:
    """Write the corpus under `out` and return its manifest (also written to manifest.json)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for fmt in BUILT_IN:
        if fmt.generate is None:
            continue
        # One stream per format, so adding a format never changes another's bytes.
        rng = random.Random(f"{seed}:{fmt.name}")
        files += fmt.generate(out / fmt.name, scale, rng)
    for entry in files:
        entry["path"] = Path(entry["path"]).relative_to(out).as_posix()
    manifest = {"seed": seed, "scale": scale, "files": files}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest
