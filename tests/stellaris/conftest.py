"""Fixtures for the Stellaris tests: the real corpus save (skipped when absent), a
synthetic campaign, and small builders for saves and tool outputs."""

import random
import zipfile
from pathlib import Path

import pytest

from workbench.stellaris import synth

REPO = Path(__file__).resolve().parents[2]
CORPUS_SAVE = REPO / ".." / "shared" / "corpus" / "stellaris" / "autosave_2312.01.01.sav"
CORPUS_PLAYER = 16777223


@pytest.fixture(scope="session")
def corpus_save() -> Path:
    if not CORPUS_SAVE.exists():
        pytest.skip(f"the real Stellaris save is not here ({CORPUS_SAVE.resolve()}): ../shared is absent")
    return CORPUS_SAVE


@pytest.fixture(scope="session")
def campaign_dir(tmp_path_factory) -> tuple[Path, list[dict]]:
    """A synthetic corpus at scale 1 (one campaign), with its manifest entries."""
    out = tmp_path_factory.mktemp("stellaris") / "stellaris"
    entries = synth.generate(out, 1, random.Random("7:stellaris"))
    return out, entries


@pytest.fixture(scope="session")
def campaign(campaign_dir) -> synth.Campaign:
    """The same campaign as `campaign_dir`, as data."""
    return synth.new_campaign(random.Random("7:stellaris"), 0)


def write_zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def synthetic_save(path: Path, state_index: int = 0, seed: str = "save-tests") -> tuple[Path, synth.Campaign]:
    """One synthetic autosave (the campaign's state `state_index`)."""
    rng = random.Random(seed)
    campaign = synth.new_campaign(rng, 0)
    state = campaign.states[state_index]
    synth.write_save(path, synth.meta(campaign, state), synth.gamestate(campaign, state, rng, []))
    return path, campaign
