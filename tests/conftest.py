import json
from pathlib import Path

import pytest

from workbench.synth import synthesize

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


@pytest.fixture(scope="session")
def sample(tmp_path_factory) -> Path:
    """The synthetic corpus at scale 1, seed 7 (what `workbench demo` uses)."""
    out = tmp_path_factory.mktemp("sample")
    synthesize(out, scale=1, seed=7)
    return out


@pytest.fixture(scope="session")
def manifest(sample) -> dict:
    return json.loads((sample / "manifest.json").read_text())


def write_lines(path: Path, records) -> Path:
    """Write records (dicts as JSON, strings as they are) one per line."""
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path
