"""Every line-based reader survives random corruption of valid files, ingested into a
database (with its memory limit): no exception, every line accounted for, and the CLI
exits 0 with rejects."""

import random

import pytest

import workbench
from tests.robustness.corruptions import corrupt_lines
from workbench.cli import main
from workbench.jsonl import BLANK

pytestmark = pytest.mark.slow

# (format, glob of its files in the synthetic corpus)
LINE_FORMATS = [
    ("damage", "damage/*.events.jsonl"),
    ("ec4x", "ec4x/*.orders.jsonl"),
    ("ec4x", "ec4x/bot_trace_*.jsonl"),
    ("arena", "arena/*.decisions.jsonl"),
    ("gm", "gm/*.gm.jsonl"),
]
FILES_PER_FORMAT = 25
CORRUPTIONS_PER_FILE = 12  # 300 corruptions per kind of file


def non_blank_lines(data: bytes) -> int:
    return sum(1 for line in data.split(b"\n") if line.strip(BLANK))


@pytest.mark.parametrize("fmt,pattern", LINE_FORMATS, ids=[p for _, p in LINE_FORMATS])
def test_random_corruption_loses_no_line(tmp_path, sample, fmt, pattern):
    originals = sorted(sample.glob(pattern))
    assert originals, f"the sample corpus has no {pattern}"
    rng = random.Random(f"robustness:{pattern}")  # fixed seed: a failure reproduces
    for number in range(FILES_PER_FORMAT):
        source = originals[number % len(originals)]
        data, done = corrupt_lines(source.read_bytes(), rng, CORRUPTIONS_PER_FILE)
        path = tmp_path / f"{number:02d}_{source.name}"
        path.write_bytes(data)
        (file,) = workbench.ingest([path], db=tmp_path / "w.duckdb", format=fmt).files
        context = f"{path.name} after {done}"
        assert file.status == "ingested", f"{context}: {file.message}"
        assert file.records + file.rejected == non_blank_lines(data), context
        assert all(v.locator and v.field and v.rule and v.message for v in file.violations), context
        path.unlink()


def test_cli_exits_0_with_rejects(tmp_path, sample, capsys):
    source = sorted(sample.glob("damage/*.events.jsonl"))[0]
    path = tmp_path / source.name
    path.write_bytes(source.read_bytes() + b'{"truncated": \n\xff\xfe\n')
    assert main(["ingest", str(path), "--db", str(tmp_path / "w.duckdb"), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "2 rejected" in out
