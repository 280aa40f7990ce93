"""The code as the linter, the formatter and the type checker read it (configured in
`pyproject.toml`): `ruff check` and `ruff format --check` on the package, the tests,
the benchmarks and the docs' generator, and `mypy` on the package, find nothing. They
run with the tests, so CI runs them (docs/contributing.md says how to run them alone)."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT

CHECKED = ("workbench", "tests", "bench", "docs/generate.py", "docs/hooks.py")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing():
    done = run("ruff", "check", "--no-cache", *CHECKED)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_file_is_formatted_as_ruff_formats_it():
    done = run("ruff", "format", "--check", "--no-cache", *CHECKED)
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_finds_no_type_error():
    done = run("mypy", "--no-incremental")
    assert done.returncode == 0, done.stdout + done.stderr
