"""Stellaris files damaged at random, and archives built to exhaust memory: each is read
or refused with one line, never a crash, and the other files still load."""

import random
import subprocess
import sys
import zipfile

import pytest

import workbench
from tests.conftest import ROOT
from tests.robustness.corruptions import CORRUPTIONS

RUNS = 300


def damaged(data: bytes, rng: random.Random) -> bytes:
    """Damage anywhere in a file: corrupt a stretch as if it were a line, or cut it."""
    if rng.random() < 0.2:
        return data[: rng.randrange(len(data))]
    start = rng.randrange(len(data))
    end = min(len(data), start + rng.randrange(1, 200))
    return data[:start] + rng.choice(CORRUPTIONS)(data[start:end], rng) + data[end:]


@pytest.mark.parametrize("pattern", ["stellaris/**/*.json", "stellaris/**/*.sav", "stellaris/**/*.db"])
def test_random_damage_is_read_or_refused_in_one_line(tmp_path, sample, pattern):
    originals = sorted(sample.glob(pattern))
    assert originals, pattern
    rng = random.Random(f"robustness:{pattern}")
    runs = RUNS if pattern.endswith(".json") else RUNS // 6  # saves and databases cost more each
    for number in range(runs):
        source = originals[number % len(originals)]
        path = tmp_path / f"{number:03d}_{source.name}"
        path.write_bytes(damaged(source.read_bytes(), rng))
        (file,) = workbench.validate([path], format="stellaris").files
        if file.status == "failed":
            assert file.message.startswith(str(path)) and "\n" not in file.message, file.message
        else:
            assert file.status == "ingested" and file.records + file.rejected >= 1, file
        path.unlink()


def zip_bomb(path, gigabytes: int, lie: bool):
    """A .sav whose gamestate inflates to `gigabytes` GB of zeros, written in streaming
    fashion; with `lie`, the headers declare 1 KB instead."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("meta", 'version="4.0.1"\nname="bomb"\n')
        with archive.open("gamestate", "w", force_zip64=True) as member:
            block = b"\0" * (1 << 24)
            for _ in range(gigabytes * 64):
                member.write(block)
    if lie:
        data = bytearray(path.read_bytes())
        for signature, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
            at = data.find(signature + b"")
            while at != -1:
                if data[at + (30 if signature == b"PK\x03\x04" else 46):].startswith(b"gamestate"):
                    data[at + offset: at + offset + 4] = (1024).to_bytes(4, "little")
                at = data.find(signature, at + 1)
        path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("lie", [False, True], ids=["declared", "lying-headers"])
def test_zip_bomb_is_refused_with_bounded_memory(tmp_path, lie):
    bomb = zip_bomb(tmp_path / "bomb.sav", 2, lie)
    assert bomb.stat().st_size < 20 << 20  # 2 GB of content in a few MB
    code = (f"import resource, sys\nfrom workbench.cli import main\n"
            f"status = main(['ingest', {str(bomb)!r}, '--db', {str(tmp_path / 'w.duckdb')!r}, '--quiet'])\n"
            "print('peak', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, flush=True)\n"
            "sys.exit(status)")
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 2, run.stderr
    report, peak = run.stdout.strip().splitlines()
    assert report.startswith(f"{bomb}: failed: ") and ("512 MB" in report or "cannot be unpacked" in report)
    assert int(peak.split()[1]) < 1024  # MB: bounded by the 512 MB cap, never the 2 GB inside
