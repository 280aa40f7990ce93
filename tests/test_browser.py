"""The notebooks as a person meets them: JupyterLab started here, each notebook opened in
headless Chromium (Debian's `chromium`, driven by Playwright), run with Run > Run All
Cells, and read off the page: not marked modified on opening, every chart the headless
run displays drawn, widgets drawn, no error in any cell, and the scrubber's controls move
its text and the chart's cursor.

Skips, saying why, where Chromium or Playwright is missing (`.ci/run` installs both)."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

from tests.notebook_form import kernel_metadata
from tests.notebook_run import NAMES, NOTEBOOKS, all_outputs, chart_titles, errors_in

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("browser")]

CHROMIUM = os.environ.get("WORKBENCH_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
TOKEN = "browser-test"
SCRUBBER = "scrubber_controls"  # a copy of notebook 04, opened with a kernel of its own
BROKEN = "broken"  # a notebook whose cell fails, to prove the error check sees it
RUN_TIMEOUT = 180  # seconds for a notebook's Run All, generous for a loaded 2-core machine

if CHROMIUM is None:
    pytest.skip("no Chromium: install Debian's `chromium` package (as .ci/run does) to run the browser tests",
                allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed: pip install -e '.[dev]'")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def write_settings(folder: Path) -> None:
    """Lab settings for a quiet, complete page: no news prompt, and every cell rendered
    (JupyterLab otherwise leaves cells outside the view empty, so they cannot be read)."""
    for plugin, values in {
        "apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
        "notebook-extension/tracker": {"windowingMode": "none"},
        "docmanager-extension/plugin": {"autosave": False},  # each test opens its notebook as stored
    }.items():
        path = folder / "@jupyterlab" / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


@pytest.fixture(scope="module")
def lab(notebook_db, tmp_path_factory):
    """JupyterLab over a copy of the notebooks (its autosave never touches the repository),
    reading the sample database; yields its base URL."""
    root = tmp_path_factory.mktemp("lab")
    shutil.copytree(NOTEBOOKS, root / "notebooks")
    shutil.copy(NOTEBOOKS / "04_replay_scrubber.ipynb", root / "notebooks" / f"{SCRUBBER}.ipynb")
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 / 0")], metadata=kernel_metadata()),
                   root / "notebooks" / f"{BROKEN}.ipynb")
    write_settings(root / "settings")
    port = free_port()
    env = dict(os.environ, WORKBENCH_DB=str(notebook_db), JUPYTER_RUNTIME_DIR=str(root / "runtime"))
    log = (root / "lab.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", f"--ServerApp.token={TOKEN}",
         "--allow-root", f"--ServerApp.root_dir={root / 'notebooks'}", f"--LabApp.user_settings_dir={root / 'settings'}",
         f"--LabApp.workspaces_dir={root / 'workspaces'}"],
        env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_server(base, server, root / "lab.log")
        yield base
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


def wait_for_server(base: str, server: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"JupyterLab exited with {server.returncode}: {log.read_text()[-2000:]}")
        try:
            urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=2)
            return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"JupyterLab did not answer within 60 s: {log.read_text()[-2000:]}")


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        yield chromium
        chromium.close()


def open_notebook(browser, lab: str, name: str):
    """A page with the notebook opened (in a workspace of its own) and run to the end."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{lab}/lab/workspaces/{name}/tree/{name}.ipynb?token={TOKEN}")
    page.wait_for_function("""() => [...document.querySelectorAll('.jp-StatusBar-TextItem')]
                                     .some(item => /Idle/.test(item.textContent))""", timeout=60_000)
    return page


def run_all(page) -> None:
    page.locator(".lm-MenuBar-itemLabel").get_by_text("Run", exact=True).click()
    page.locator(".lm-Menu-itemLabel").get_by_text("Run All Cells", exact=True).click()
    deadline = time.monotonic() + RUN_TIMEOUT
    while time.monotonic() < deadline:
        prompts = page.locator(".jp-CodeCell .jp-InputPrompt").all_inner_texts()
        if prompts and all(re.fullmatch(r"\[\d+\]:", prompt.strip()) for prompt in prompts):
            return
        time.sleep(0.5)
    pytest.fail(f"Run All did not finish in {RUN_TIMEOUT} s; prompts: {prompts}")


def wait_until(check, what: str, timeout: float = 30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.25)
    pytest.fail(f"timed out waiting for {what}")


@pytest.mark.parametrize("name", NAMES)
def test_a_notebook_opened_and_run_in_the_browser_shows_what_the_kernel_displayed(name, lab, browser, executed):
    charts = len(chart_titles(all_outputs(executed(name))))  # what the headless run displayed
    assert errors_in(executed(name)) == []
    page = open_notebook(browser, lab, name)
    try:
        assert page.locator(".jp-mod-dirty").count() == 0, "opening the notebook changed it"
        run_all(page)
        drawn = ".vega-embed .marks"  # the SVG or canvas Vega draws into
        wait_until(lambda: page.locator(drawn).count() >= charts, f"{charts} charts drawn in {name}")
        assert page.locator(".vega-embed").count() == page.locator(drawn).count() == charts
        assert page.locator(".jupyter-widgets").count() > 0
        assert page.get_by_text("Error displaying widget").count() == 0
        assert cell_errors(page) == []
        if name == "03_decision_quality":  # the records behind a rule wrap rather than scroll sideways
            wide = page.locator(".jp-OutputArea-output pre").evaluate_all(
                "blocks => blocks.filter(b => b.scrollWidth > b.clientWidth + 1).length")
            assert wide == 0, f"{wide} records scroll sideways"
    finally:
        page.close()


def cell_errors(page) -> list[str]:
    """The errors the page shows in cells (JupyterLab draws a traceback as stderr)."""
    shown = page.locator('[data-mime-type="application/vnd.jupyter.stderr"]').all_inner_texts()
    return [text for text in shown if "Traceback" in text or "Error" in text]


def test_the_error_check_sees_an_error_in_a_cell(lab, browser):
    page = open_notebook(browser, lab, BROKEN)
    try:
        run_all(page)
        wait_until(lambda: cell_errors(page), "the error to be drawn")
        assert "ZeroDivisionError" in cell_errors(page)[0]
    finally:
        page.close()


def cursor_x(page) -> list[float]:
    """The x of the scrubber chart's cursor rule, one per emotion panel."""
    transforms = page.locator(".vega-embed .mark-rule.role-mark :is(path, line)").evaluate_all(
        "paths => paths.map(p => p.getAttribute('transform'))")
    return [float(re.match(r"translate\(([-\d.e]+),", t).group(1)) for t in transforms]


def event_number(page) -> int:
    [status] = [t for t in page.locator(".widget-html-content").all_inner_texts() if re.match(r"event \d+ of", t)]
    return int(re.match(r"event (\d+) of", status).group(1))


def test_the_scrubber_follows_its_slider_buttons_and_play_in_the_browser(lab, browser):
    page = open_notebook(browser, lab, SCRUBBER)
    try:
        run_all(page)
        wait_until(lambda: cursor_x(page), "the scrubber chart's cursor")
        start, x0 = event_number(page), cursor_x(page)
        assert len(set(x0)) == 1  # one cursor across the panels

        handle = page.locator(".widget-slider .noUi-handle").first
        handle.scroll_into_view_if_needed()
        handle.focus()
        for _ in range(5):
            page.keyboard.press("ArrowRight")
        wait_until(lambda: event_number(page) == start + 5, "event N+5 after five steps of the slider")
        x1 = wait_until(lambda: (x := cursor_x(page)) != x0 and x, "the cursor to follow the slider")
        assert x1[0] > x0[0]
        assert page.locator(".widget-readout").first.inner_text().strip() == str(start + 5)  # 1-based, as the text

        page.get_by_role("button", name="hand ▶").click()
        wait_until(lambda: event_number(page) > start + 5, "the next hand")
        x2 = wait_until(lambda: (x := cursor_x(page)) != x1 and x, "the cursor to follow the jump")
        assert x2[0] > x1[0]

        before = event_number(page)
        page.locator(".widget-dropdown select").filter(has=page.locator("option", has_text="500 events/s")) \
            .select_option("500 events/s")
        page.locator(".widget-play button").first.click()  # play
        wait_until(lambda: event_number(page) > before + 100, "Play at 500 events/s to pass 100 events", timeout=20)
        assert cursor_x(page)[0] > x2[0]
    finally:
        page.close()


SHOTS = Path(os.environ.get("WORKBENCH_SCREENSHOTS", "/tmp/workbench-screenshots"))


def data_table(page, column: str):
    """The DataTables table (an itables widget) that has a column named `column`."""
    return page.locator(".dt-container").filter(has=page.locator(".dt-scroll-head th", has_text=re.compile(
        rf"^\s*{re.escape(column)}\s*$")))


def table_column(table, name: str) -> list[str]:
    """The cells of column `name` of a DataTables table, as shown (its current page)."""
    headers = [h.strip() for h in table.locator(".dt-scroll-head th").all_inner_texts()]
    at = headers.index(name) + 1
    return [t.strip() for t in table.locator(f".dt-scroll-body tbody tr td:nth-child({at})").all_inner_texts()]


def test_notebook_03_leads_from_a_scorecard_point_to_the_failing_records_and_the_turns_side_by_side(lab, browser):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = open_notebook(browser, lab, "03_decision_quality")
    try:
        run_all(page)
        points = page.locator(".vega-embed .mark-symbol.role-mark path")
        wait_until(lambda: points.count() > 0, "the scorecard's points")
        records = data_table(page, "locator").first
        wait_until(lambda: records.locator(".dt-scroll-body tbody tr").count() > 0, "the record browser's rows")
        # the worst model of the first panel: its point's label names it
        labels = points.evaluate_all("ps => ps.map(p => p.getAttribute('aria-label') || '')")
        model = re.search(r"model: ([^;]+)", labels[-1]).group(1).strip()
        points.nth(len(labels) - 1).click()
        wait_until(lambda: set(table_column(records, "model")) == {model}, f"the records of {model}")
        assert set(table_column(records, "valid")) == {"invalid"}
        assert records.locator(".dt-scroll-head thead tr").count() == 1  # names only: no row of dtypes
        page.screenshot(path=str(SHOTS / "03_scorecard_to_records.png"), full_page=False)
        # a record selected: read in full, with its findings
        records.locator(".dt-scroll-body tbody tr").first.click()
        pane = page.locator(".widget-html-content", has_text="findings").first
        wait_until(lambda: pane.count() > 0 and "finding" in pane.inner_text(), "the selected record's detail")
        pane.scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / "03_record_detail.png"), full_page=False)
        # the picked pair's turns, disagreements first; one selected shows both decisions
        count = page.get_by_text("turns both decided").first
        count.scroll_into_view_if_needed()
        pairs = data_table(page, "action_b").first
        wait_until(lambda: pairs.locator(".dt-scroll-body tbody tr").count() > 0, "the side-by-side rows")
        first = [table_column(pairs, side)[0] for side in ("valid_a", "valid_b")]
        assert sorted(first) == ["invalid", "valid"]  # a disagreement comes first
        pairs.locator(".dt-scroll-body tbody tr").first.click()
        both = page.locator(".widget-html-content", has_text=" · turn ").first
        wait_until(lambda: both.count() > 0 and both.locator("pre").count() == 2, "both decisions as written")
        both.scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / "03_side_by_side.png"), full_page=False)
        assert cell_errors(page) == []
    finally:
        page.close()
