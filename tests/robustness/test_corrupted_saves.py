"""Stellaris files damaged at random, and archives built to exhaust memory: each is read
or refused with one line, never a crash, and the other files still load."""

import io
import json
import random
import re
import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import workbench
from bench.common import PRINT_PEAK_KB
from tests.conftest import ROOT
from tests.robustness.corruptions import CORRUPTIONS

pytestmark = pytest.mark.slow

RUNS = 300


def damaged(data: bytes, rng: random.Random) -> bytes:
    """Damage anywhere in a file: corrupt a stretch as if it were a line, or cut it."""
    if rng.random() < 0.2:
        return data[: rng.randrange(len(data))]
    start = rng.randrange(len(data))
    end = min(len(data), start + rng.randrange(1, 200))
    return data[:start] + rng.choice(CORRUPTIONS)(data[start:end], rng) + data[end:]


# What a damaged file must give, worked out here from its bytes: (records, rejected), or
# None when it cannot be read at all (then the file fails with one line).
SEARCH_TOOLS = ("search", "search_save_file")  # seed 000's tools not named get_*


def expected_json(source: Path, data: bytes) -> tuple[str, tuple[int, int]]:
    """An extractor output: one record per tool output, or one reject when it is not JSON
    (not UTF-8, not strict JSON, a lone surrogate) or a bundle that is no object."""
    try:
        document = json.loads(data.decode("utf-8-sig"), parse_constant=lambda name: 1 / 0)
        json.dumps(document, ensure_ascii=False).encode("utf-8")  # a lone surrogate cannot be encoded
    except (UnicodeError, ValueError, ZeroDivisionError, RecursionError):  # docs/formats/stellaris.md: each a reject
        return "ingested", (0, 1)
    if not source.name.endswith(".briefing.json"):
        return "ingested", (1, 0)  # get_<tool>.json or search.json: that tool's one output
    if not isinstance(document, dict):
        return "ingested", (0, 1)
    tools = [key for key in document if key.startswith("get_") or key in SEARCH_TOOLS]
    return "ingested", (len(tools), 0) if tools else (1, 0)  # without tool keys: a full briefing


def members(data: bytes) -> dict[str, bytes] | None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return {name: archive.read(name) for name in archive.namelist()}
    except Exception:  # noqa: BLE001 - any damage that stops Python's own zip reader
        return None


STELLARIS_DATE = re.compile(r"\d{1,5}\.(\d{1,2})\.(\d{1,2})")


def is_date(value) -> bool:
    found = STELLARIS_DATE.fullmatch(value) if isinstance(value, str) else None
    return found is not None and 1 <= int(found.group(1)) <= 12 and 1 <= int(found.group(2)) <= 30


def expected_history(path: Path) -> tuple[int, int] | None:
    """A companion history: one record per row of `snapshots` with a Stellaris date, one
    reject per row without; None when SQLite itself cannot read the rows."""
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
        try:
            dates = [row[0] for row in con.execute("SELECT game_date FROM snapshots")]
            con.execute("SELECT * FROM snapshots").fetchall()
        finally:
            con.close()
    except sqlite3.Error:
        return None
    valid = sum(is_date(d) for d in dates)
    return valid, len(dates) - valid


@pytest.mark.parametrize("pattern", ["stellaris/**/*.json", "stellaris/**/*.sav", "stellaris/**/*.db"])
def test_random_damage_is_read_or_refused_in_one_line(tmp_path, sample, pattern):
    originals = sorted(sample.glob(pattern))
    assert originals, pattern
    rng = random.Random(f"robustness:{pattern}")
    runs = RUNS if pattern.endswith(".json") else RUNS // 6  # saves and databases cost more each
    outcomes = []
    for number in range(runs):
        source = originals[number % len(originals)]
        path = tmp_path / f"{number:03d}_{source.name}"
        data = damaged(source.read_bytes(), rng)
        path.write_bytes(data)
        (file,) = workbench.validate([path], format="stellaris").files
        counts = (file.records, file.rejected)
        if file.status == "failed":
            assert file.message.startswith(str(path)) and "\n" not in file.message, file.message
        else:
            assert file.status == "ingested", file
        if pattern.endswith(".json"):
            assert (file.status, counts) == expected_json(source, data), (path, file)
        elif pattern.endswith(".sav"):
            inside = members(data)
            if inside == members(source.read_bytes()):
                assert (file.status, counts) == ("ingested", (1, 0)), (path, file)  # only the zip's frame was hit
            elif file.status == "ingested":
                assert counts in ((1, 0), (0, 1)), (path, file)  # one save, one record: read or rejected
                assert (counts == (0, 1)) == any(v.rule == "no_snapshot" for v in file.violations), (path, file)
        else:
            expected = expected_history(path)
            assert (file.status, counts) == (("failed", (0, 0)) if expected is None else ("ingested", expected)), (
                path,
                file,
            )
        outcomes.append((file.status, counts))
        path.unlink()
    # The damage reached every kind of outcome: read, rejected (JSON), refused (saves, databases).
    if pattern.endswith(".json"):
        assert {(0, 1), (1, 0)} <= {counts for status, counts in outcomes if status == "ingested"}, outcomes
    else:
        assert {status for status, _ in outcomes} == {"ingested", "failed"}, outcomes


def test_json_nested_too_deeply_to_parse_is_a_reject(tmp_path):
    path = tmp_path / "get_wars.json"
    path.write_text('{"wars": ' + "[" * 20_000 + "]" * 20_000 + "}")
    (file,) = workbench.validate([path], format="stellaris").files
    assert (file.status, file.records, file.rejected) == ("ingested", 0, 1), file.message


def zip_bomb(path, gigabytes: int, lie: bool):
    """A .sav whose gamestate inflates to `gigabytes` GB of zeros, written in streaming
    fashion (at the quickest level: 9 MB, written 4 times faster than at the default);
    with `lie`, the headers declare 1 KB instead."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
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
                if data[at + (30 if signature == b"PK\x03\x04" else 46) :].startswith(b"gamestate"):
                    data[at + offset : at + offset + 4] = (1024).to_bytes(4, "little")
                at = data.find(signature, at + 1)
        path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("lie", [False, True], ids=["declared", "lying-headers"])
def test_zip_bomb_is_refused_with_bounded_memory(tmp_path, lie):
    bomb = zip_bomb(tmp_path / "bomb.sav", 2, lie)
    assert bomb.stat().st_size < 20 << 20  # 2 GB of content in a few MB
    code = (
        f"import sys\nfrom workbench.cli import main\n"
        f"status = main(['ingest', {str(bomb)!r}, '--db', {str(tmp_path / 'w.duckdb')!r}, '--quiet'])\n"
        f"{PRINT_PEAK_KB}\n"
        "sys.exit(status)"
    )
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 2, run.stderr
    report, peak = run.stdout.strip().splitlines()
    assert report.startswith(f"{bomb}: failed: ") and ("512 MB" in report or "cannot be unpacked" in report)
    assert int(peak) < 1024 * 1024  # kB: bounded by the 512 MB cap, never the 2 GB inside
