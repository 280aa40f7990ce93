"""A seventh built-in game takes its folder and one line of the registry, and nothing
else: a copy of the package gets `tests/seventh_game/nim/` and `"nim",` in
`registry.BUILT_IN_FOLDERS`; its corpus is written, ingested, scored, listed and read
back record by record, and no other file of the package names it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NIM = Path(__file__).parent / "seventh_game" / "nim"
FOLDERS_START = "BUILT_IN_FOLDERS = (\n"


@pytest.fixture(scope="module")
def package(tmp_path_factory) -> Path:
    """A copy of the package with Nim added as a built-in game."""
    root = tmp_path_factory.mktemp("seventh")
    shutil.copytree(ROOT / "workbench", root / "workbench", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(NIM, root / "workbench" / "nim", ignore=shutil.ignore_patterns("__pycache__"))
    registry = root / "workbench" / "registry.py"
    text = registry.read_text()
    assert text.count(FOLDERS_START) == 1
    registry.write_text(text.replace(FOLDERS_START, FOLDERS_START + '    "nim",\n'))
    return root


def workbench(package: Path, *args: str) -> str:
    code = "import sys; from workbench.cli import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=package,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(package), "WORKBENCH_FORMATS": str(package / "none")},
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_no_other_file_of_the_package_names_the_seventh_game(package):
    named = {}
    for path in sorted((package / "workbench").rglob("*")):
        if path.is_file() and path.suffix in (".py", ".toml", ".json", ".sql", ".txt", ".md"):
            lines = [line.strip() for line in path.read_text().splitlines() if re.search(r"\bnim\b", line, re.I)]
            if lines:
                named[path.relative_to(package / "workbench").as_posix()] = lines
    others = {path: lines for path, lines in named.items() if not path.startswith("nim/")}
    assert others == {"registry.py": ['"nim",']}


def test_the_seventh_game_is_written_read_scored_and_shown(package):
    assert re.search(r"^nim\s+built in: Nim moves", workbench(package, "formats"), re.M)
    workbench(package, "synth", "--out", "corpus")
    manifest = json.loads((package / "corpus" / "manifest.json").read_text())
    nim = [entry for entry in manifest["files"] if entry["format"] == "nim"]
    assert len(nim) == 2 and all(entry["path"].startswith("nim/") for entry in nim)
    workbench(package, "ingest", "corpus", "--db", "w.duckdb")
    scores = {
        row["model"]: row
        for row in json.loads(workbench(package, "scorecard", "--db", "w.duckdb", "--json"))
        if row["format"] == "nim"
    }
    # each game: 15 stones, the third move takes 4 (one invalid move of model-b a game: turn 3 is odd)
    moves = [
        json.loads(line) for entry in nim for line in (package / "corpus" / entry["path"]).read_text().splitlines()
    ]
    for model in ("model-a", "model-b"):
        own = [move for move in moves if move["model"] == model]
        assert scores[model]["decisions"] == len(own)
        assert scores[model]["valid"] == sum(move["take"] <= 3 for move in own)
        assert scores[model]["games"] == 2
    records = json.loads(workbench(package, "records", "--db", "w.duckdb", "--format", "nim", "--invalid", "--json"))
    assert sorted((r["path"].rsplit("/", 1)[-1], r["locator"]) for r in records) == [
        ("game-0.nim.jsonl", "line 3"),
        ("game-1.nim.jsonl", "line 3"),
    ]
    assert all(json.loads(r["raw"])["take"] == 4 and r["rules"] == ["less_than_equal"] for r in records)
