"""The documentation's Python examples run as written, and its site builds.

Every ```python block of README.md and docs/ runs, page by page in one namespace (as a
reader would type them one after another), in a folder that holds what the examples
name: `data/workbench.duckdb` (the demo database), `logs/` and `corpus/` (the demo's
sample corpus), `game.events.jsonl` (one of its Damage logs) and `traces/agent.otlp.jsonl`.
Nothing else is defined: a page that needs a connection or a game id shows how it gets
them, so that a reader can paste its blocks as printed. A block that runs elsewhere is preceded by `<!-- not run here: where it runs -->`,
naming a test file that reads that page.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, quick_spark_jvm

NOT_RUN_HERE = re.compile(r"<!-- not run here: (.+?) -->\s*$")
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def blocks(page: Path) -> list[tuple[str, str | None]]:
    """The page's Python blocks, each with the reason it is not run here (or None)."""
    text = page.read_text(encoding="utf-8")
    found = []
    for match in re.finditer(r"```python\n(.+?)```", text, re.S):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        reason = NOT_RUN_HERE.search(before)
        found.append((match.group(1), reason.group(1) if reason else None))
    return found


def _name(page: Path) -> str:
    return str(page.relative_to(ROOT))


RUN = [page for page in PAGES if any(reason is None for _, reason in blocks(page))]
# Examples that start Spark: run by this test too, but only where Java is (slow).
NEEDS_SPARK = {"docs/beyond-one-machine.md"}


@pytest.fixture
def reader_folder(tmp_path, notebook_db, sample, monkeypatch):
    (tmp_path / "data").mkdir()
    shutil.copy(notebook_db, tmp_path / "data" / "workbench.duckdb")
    (tmp_path / "logs").symlink_to(sample, target_is_directory=True)
    (tmp_path / "corpus").symlink_to(sample, target_is_directory=True)
    shutil.copy(next(sample.rglob("*.events.jsonl")), tmp_path / "game.events.jsonl")
    (tmp_path / "traces").mkdir()
    shutil.copy(ROOT / "tests" / "otel" / "data" / "holdem_agents.otlp.jsonl", tmp_path / "traces" / "agent.otlp.jsonl")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("WORKBENCH_DB", raising=False)
    return tmp_path


def run_examples(page: Path, namespace: dict) -> None:
    """The page's blocks that run here, one after another in `namespace`."""
    for number, (code, reason) in enumerate(blocks(page), 1):
        if reason is None:
            exec(compile(code, f"{_name(page)}, example {number}", "exec"), namespace)  # noqa: S102 - our own docs


@pytest.mark.parametrize("page", [p for p in RUN if _name(p) not in NEEDS_SPARK], ids=_name)
def test_the_examples_of_a_page_run(page, reader_folder):
    namespace = {"__name__": "__main__"}
    try:
        run_examples(page, namespace)
    finally:
        if hasattr(namespace.get("con"), "close"):
            namespace["con"].close()


@pytest.mark.slow
@pytest.mark.xdist_group("spark")  # with tests/test_spark.py: one Spark session, on one worker
@pytest.mark.parametrize("page", [p for p in RUN if _name(p) in NEEDS_SPARK], ids=_name)
def test_the_spark_examples_run(page, reader_folder, monkeypatch):
    if shutil.which("java") is None:
        pytest.skip("Spark needs a Java runtime (Debian: apt-get install openjdk-17-jre-headless)")
    quick_spark_jvm(monkeypatch)  # for the JVM an example starts (the first Spark test of a run)
    namespace = {"__name__": "__main__"}
    # The corpus is one game's logs: tests/test_spark.py runs the whole sample on Spark
    # and checks every number; here the examples only need to run, each query on Spark
    # costs seconds, and its Python workers read the files one by one.
    (reader_folder / "corpus").unlink()
    (reader_folder / "corpus").symlink_to(reader_folder / "logs" / "damage", target_is_directory=True)
    run_examples(page, namespace)
    assert (reader_folder / "lake" / "_manifest.parquet").exists()


def test_a_block_not_run_here_names_the_test_that_runs_it():
    for page in PAGES:
        for _, reason in blocks(page):
            if reason is None:
                continue
            tests = re.findall(r"tests/[\w/]+\.py", reason)
            assert tests, f"{_name(page)}: 'not run here' names no test file: {reason}"
            for test in tests:
                assert _name(page) in (ROOT / test).read_text(), f"{test} does not read {_name(page)}"


def test_every_page_is_in_the_site_navigation():
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in (ROOT / "docs").rglob("*.md"):
        assert str(page.relative_to(ROOT / "docs")) in nav, f"{_name(page)} is not in mkdocs.yml's nav"


@pytest.mark.slow
def test_the_site_builds_strict_and_offline(tmp_path):
    # --strict: a broken link, a missing page or a docstring griffe cannot read fails it.
    if shutil.which("mkdocs", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("mkdocs is not installed (pip install -e '.[dev]')")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    home = (tmp_path / "site" / "index.html").read_text()
    assert 'id="a-tour"' in home and 'href="getting-started.html"' in home
    assert (tmp_path / "site" / "reference" / "api.html").exists()  # offline: plain .html pages
    # Nothing loaded from the network: the search's worker shim was unpkg.com's.
    for page in (tmp_path / "site").rglob("*.html"):
        assert not re.search(r'<script[^>]*src="https?://', page.read_text()), page
    _search_works_from_disk(tmp_path / "site")


def _search_works_from_disk(site: Path) -> None:
    """The site opened from disk (file://) in headless Chromium, with no network: a search
    finds the page that holds the words."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        return  # tests/test_browser.py says Chromium is missing; the build is checked above
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_context(offline=True, viewport={"width": 1280, "height": 900}).new_page()
            page.goto((site / "index.html").as_uri())
            page.fill("input.md-search__input", "declared formats")
            page.wait_for_selector(".md-search-result__item", timeout=30_000)
            assert "your-own-game.html" in page.inner_html(".md-search-result__list")
        finally:
            browser.close()


def test_the_record_browser_example_shows_what_its_comment_says(reader_folder):
    """docs/notebooks.md: the browser opened on invalid records, then searched again for a
    model's: its invalid records only (a search with `model=` alone dropped `valid=False`)."""
    namespace = {"__name__": "__main__"}
    code, _ = blocks(ROOT / "docs" / "notebooks.md")[0]
    try:
        exec(compile(code, "docs/notebooks.md, example 1", "exec"), namespace)  # noqa: S102 - our own docs
        shown = namespace["browser"].records
        assert shown.height > 0 and set(shown["model"]) == {"gpt-4o-mini"} and set(shown["valid"]) == {False}
    finally:
        namespace["con"].close()


def test_the_worked_comparison_prints_what_the_page_shows(notebook_db, capsys):
    """docs/comparing-models.md's worked example, run on the demo's database: the line the
    page explains part by part is the command's own."""
    from workbench.cli import main

    page = (ROOT / "docs" / "comparing-models.md").read_text(encoding="utf-8")
    shown = re.search(r"<!-- compare-example:start -->\n```console\n\$ (.+?)\n(.+?)```", page, re.S)
    command, printed = shown.group(1), shown.group(2)
    argv = command.split()[1:]
    assert main([*argv, "--db", str(notebook_db)]) == 0
    assert capsys.readouterr().out == printed
