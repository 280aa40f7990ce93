"""The notebooks as a person meets them: JupyterLab started here, each notebook opened in
headless Chromium (Debian's `chromium`, driven by Playwright), run with Run > Run All
Cells, and read off the page: not marked modified on opening, every chart the headless
run displays drawn, widgets drawn, no error in any cell, and the scrubber's controls move
its text and the chart's cursor.

One JupyterLab and one browser serve the module. The notebooks the selected tests read
are opened and run ahead of them, a few tabs at a time (`WORKBENCH_BROWSER_TABS`; by
default one per core of this xdist worker), while the headless runs go on beside them.
A test that only reads a tab hands it on to the next test of the same notebook that
works with it (the scrubber, notebook 03's drill-down), which would otherwise open and
run it all over again.

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
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from tests.notebook_form import kernel_metadata
from tests.notebook_run import (
    NAMES,
    NOTEBOOKS,
    all_outputs,
    chart_titles,
    cores_of_this_worker,
    errors_in,
    sent_here,
)

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("browser")]

CHROMIUM = os.environ.get("WORKBENCH_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
TOKEN = "browser-test"
BROKEN = "broken"  # a notebook whose cell fails, to prove the error check sees it
OPEN_TIMEOUT = 90  # seconds for a notebook to open and its kernel to be idle
RUN_TIMEOUT = 180  # seconds for a notebook's Run All, generous for a loaded 2-core machine
TABS = int(os.environ.get("WORKBENCH_BROWSER_TABS") or cores_of_this_worker())  # notebooks opening or running at once

if CHROMIUM is None:
    pytest.skip(
        "no Chromium: install Debian's `chromium` package (as .ci/run does) to run the browser tests",
        allow_module_level=True,
    )
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


@dataclass
class Lab:
    base: str  # its URL
    notebooks: Path  # the folder it serves


@pytest.fixture(scope="module")
def lab(notebook_db, tmp_path_factory):
    """JupyterLab over a copy of the notebooks (its autosave never touches the repository),
    reading the sample database."""
    root = tmp_path_factory.mktemp("lab")
    shutil.copytree(NOTEBOOKS, root / "notebooks")
    nbformat.write(
        nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 / 0")], metadata=kernel_metadata()),
        root / "notebooks" / f"{BROKEN}.ipynb",
    )
    write_settings(root / "settings")
    port = free_port()
    env = dict(os.environ, WORKBENCH_DB=str(notebook_db), JUPYTER_RUNTIME_DIR=str(root / "runtime"))
    log = (root / "lab.log").open("w")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            f"--port={port}",
            f"--ServerApp.token={TOKEN}",
            "--allow-root",
            f"--ServerApp.root_dir={root / 'notebooks'}",
            f"--LabApp.user_settings_dir={root / 'settings'}",
            f"--LabApp.workspaces_dir={root / 'workspaces'}",
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_server(base, server, root / "lab.log")
        yield Lab(base, root / "notebooks")
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
            time.sleep(0.1)
    pytest.fail(f"JupyterLab did not answer within 60 s: {log.read_text()[-2000:]}")


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
        )
        yield chromium
        chromium.close()


IDLE = """() => [...document.querySelectorAll('.jp-StatusBar-TextItem')].some(item => /Idle/.test(item.textContent))"""
# Read as textContent, which needs no layout: innerText, asked for every few tenths of a
# second, would have the page lay out its long notebook again while it draws the outputs.
PROMPTS = "() => [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(prompt => prompt.textContent)"


def ran_to_the_end(prompts: list[str]) -> bool:
    """Whether every code cell shows an execution count (`[*]:` runs, `[ ]:` never ran)."""
    return bool(prompts) and all(re.fullmatch(r"\[\d+\]:", prompt.strip()) for prompt in prompts)


def idle(page) -> bool:
    """Whether the notebook has opened and its kernel is idle (False while the page loads)."""
    try:
        return page.evaluate(IDLE)
    except sync_api.Error:  # the page is still navigating: no document to ask yet
        return False


@dataclass
class Tab:
    """A notebook opened in a tab (in a workspace of its own) and run with Run > Run All
    Cells: "opening" until its kernel is idle, then "running" until every cell has run;
    "failed" (saying why) for the test that reads it, not the one waiting when it failed."""

    name: str
    page: object
    state: str = "opening"
    dirty: int = 0  # cells marked modified once it had opened
    deadline: float = 0.0
    error: str = ""


class Tabs:
    """The notebooks the selected tests read, opened and run in the order the tests read
    them, `TABS` at a time; a test waits only for its own (`get`) and checks it as before.

    A notebook opened again (its first tab was closed, its kernel lives on in the server)
    is opened as a copy, with a kernel of its own."""

    def __init__(self, context, lab: Lab, readers: Counter, ahead: bool) -> None:
        self.context, self.lab, self.readers = context, lab, readers
        self.queue = list(readers) if ahead else []  # to open, in the order the tests read them
        self.tabs: dict[str, Tab] = {}
        self.opened: Counter = Counter()

    def get(self, name: str) -> Tab:
        """The tab of `name`, opened and run to the end (the others advance meanwhile)."""
        if name not in self.tabs:
            if name in self.queue:
                self.queue.remove(name)
            self._open(name)
        tab = self.tabs[name]
        while tab.state not in ("done", "failed"):
            self.advance()
            time.sleep(0.2)
        if tab.state == "failed":
            self.tabs.pop(name)  # a later test of the notebook opens it again
            self.readers[name] -= 1
            pytest.fail(tab.error)
        return tab

    def done(self, name: str, keep: bool) -> None:
        """A test has read the tab of `name`: closed, unless `keep` and a later test reads it."""
        self.readers[name] -= 1
        if not keep or self.readers[name] <= 0:
            tab = self.tabs.pop(name, None)
            if tab is not None:
                tab.page.close()

    def advance(self) -> None:
        """Open the next notebooks while fewer than TABS open or run; move each on."""
        while self.queue and sum(tab.state in ("opening", "running") for tab in self.tabs.values()) < TABS:
            self._open(self.queue.pop(0))
        for tab in self.tabs.values():
            try:
                self._advance(tab)
            except Exception as exc:  # noqa: BLE001 - the tab's own test reports it
                tab.state, tab.error = "failed", f"{tab.name}: {exc}"

    def _advance(self, tab: Tab) -> None:
        if tab.state == "opening" and idle(tab.page):
            tab.dirty = tab.page.locator(".jp-mod-dirty").count()
            tab.page.locator(".lm-MenuBar-itemLabel").get_by_text("Run", exact=True).click()
            tab.page.locator(".lm-Menu-itemLabel").get_by_text("Run All Cells", exact=True).click()
            tab.state, tab.deadline = "running", time.monotonic() + RUN_TIMEOUT
        elif tab.state == "opening" and time.monotonic() > tab.deadline:
            try:  # a grace: tabs move on only while a test waits in `get`, maybe past the deadline
                tab.page.wait_for_function(IDLE, timeout=10_000)
            except sync_api.Error:  # idle in time: Run All on the next round
                tab.state, tab.error = "failed", f"{tab.name} did not open with an idle kernel in {OPEN_TIMEOUT} s"
        elif tab.state == "running":
            prompts = tab.page.evaluate(PROMPTS)
            if ran_to_the_end(prompts):
                tab.state = "done"
            elif time.monotonic() > tab.deadline:
                tab.state, tab.error = "failed", f"Run All did not finish in {RUN_TIMEOUT} s; prompts: {prompts}"

    def close(self) -> None:
        for tab in self.tabs.values():
            tab.page.close()
        self.tabs.clear()

    def _open(self, name: str) -> None:
        self.opened[name] += 1
        path = name if self.opened[name] == 1 else f"{name}-{self.opened[name]}"
        if path != name:
            shutil.copy(self.lab.notebooks / f"{name}.ipynb", self.lab.notebooks / f"{path}.ipynb")
        page = self.context.new_page()
        page.goto(f"{self.lab.base}/lab/workspaces/{path}/tree/{path}.ipynb?token={TOKEN}", wait_until="commit")
        self.tabs[name] = Tab(name, page, deadline=time.monotonic() + OPEN_TIMEOUT)


# The notebook whose tab each test reads, besides the one each notebook's own test reads.
READS = {
    "test_the_error_check_sees_an_error_in_a_cell": BROKEN,
    "test_the_scrubber_follows_its_slider_buttons_and_play_in_the_browser": "04_replay_scrubber",
    "test_notebook_03_leads_from_a_scorecard_point_to_the_failing_records_and_the_turns_side_by_side": "03_decision_quality",
    "test_notebook_03_leads_from_a_validity_bar_a_rule_bar_and_a_mistake_to_their_records": "03_decision_quality",
}


@pytest.fixture(scope="module")
def tabs(lab, browser, request):
    """The notebooks the module's selected tests read, opened and run ahead of them."""
    items = [item for item in request.session.items if getattr(item, "module", None) is request.module]
    readers = Counter()
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        name = params.get("name") if "name" in params else READS.get(item.originalname)
        if name is not None:
            readers[name] += 1
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    opened = Tabs(context, lab, readers, ahead=sent_here(request.config, items))
    try:
        yield opened
    finally:
        opened.close()
        context.close()


def wait_until(check, what: str, timeout: float = 30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.25)
    pytest.fail(f"timed out waiting for {what}")


@pytest.mark.parametrize("name", NAMES)
def test_a_notebook_opened_and_run_in_the_browser_shows_what_the_kernel_displayed(name, executed, tabs):
    tab, passed = tabs.get(name), False  # opened, and run with Run All
    page = tab.page
    try:
        charts = len(chart_titles(all_outputs(executed(name))))  # what the headless run displayed
        assert errors_in(executed(name)) == []
        assert tab.dirty == 0, "opening the notebook changed it"
        drawn = ".vega-embed .marks"  # the SVG or canvas Vega draws into
        wait_until(lambda: page.locator(drawn).count() >= charts, f"{charts} charts drawn in {name}")
        assert page.locator(".vega-embed").count() == page.locator(drawn).count() == charts
        assert page.locator(".jupyter-widgets").count() > 0
        assert page.get_by_text("Error displaying widget").count() == 0
        assert cell_errors(page) == []
        if name == "03_decision_quality":  # the records behind a rule wrap rather than scroll sideways
            wide = page.locator(".jp-OutputArea-output pre").evaluate_all(
                "blocks => blocks.filter(b => b.scrollWidth > b.clientWidth + 1).length"
            )
            assert wide == 0, f"{wide} records scroll sideways"
        passed = True
    finally:
        tabs.done(name, keep=passed)  # as it is, for a later test of the same notebook


def cell_errors(page) -> list[str]:
    """The errors the page shows in cells (JupyterLab draws a traceback as stderr)."""
    shown = page.locator('[data-mime-type="application/vnd.jupyter.stderr"]').all_inner_texts()
    return [text for text in shown if "Traceback" in text or "Error" in text]


def test_the_error_check_sees_an_error_in_a_cell(tabs):
    page = tabs.get(BROKEN).page  # opened, and run with Run All
    try:
        wait_until(lambda: cell_errors(page), "the error to be drawn")
        assert "ZeroDivisionError" in cell_errors(page)[0]
    finally:
        tabs.done(BROKEN, keep=False)


def cursor_x(page) -> list[float]:
    """The x of the scrubber chart's cursor rule, one per emotion panel."""
    transforms = page.locator(".vega-embed .mark-rule.role-mark :is(path, line)").evaluate_all(
        "paths => paths.map(p => p.getAttribute('transform'))"
    )
    return [float(re.match(r"translate\(([-\d.e]+),", t).group(1)) for t in transforms]


def event_number(page) -> int:
    [status] = [t for t in page.locator(".widget-html-content").all_inner_texts() if re.match(r"event \d+ of", t)]
    return int(re.match(r"event (\d+) of", status).group(1))


def test_the_scrubber_follows_its_slider_buttons_and_play_in_the_browser(tabs):
    page = tabs.get("04_replay_scrubber").page  # opened, and run with Run All; as yet untouched
    try:
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
        page.locator(".widget-dropdown select").filter(
            has=page.locator("option", has_text="500 events/s")
        ).select_option("500 events/s")
        page.locator(".widget-play button").first.click()  # play
        wait_until(lambda: event_number(page) > before + 100, "Play at 500 events/s to pass 100 events", timeout=20)
        assert cursor_x(page)[0] > x2[0]
    finally:
        tabs.done("04_replay_scrubber", keep=False)


SHOTS = Path(os.environ.get("WORKBENCH_SCREENSHOTS", "/tmp/workbench-screenshots"))


def data_table(page, column: str):
    """The DataTables table (an itables widget) that has a column named `column`."""
    return page.locator(".dt-container").filter(
        has=page.locator(".dt-scroll-head th", has_text=re.compile(rf"^\s*{re.escape(column)}\s*$"))
    )


def table_column(table, name: str) -> list[str]:
    """The cells of column `name` of a DataTables table, as shown (its current page)."""
    headers = [h.strip() for h in table.locator(".dt-scroll-head th").all_inner_texts()]
    at = headers.index(name) + 1
    return [t.strip() for t in table.locator(f".dt-scroll-body tbody tr td:nth-child({at})").all_inner_texts()]


def test_notebook_03_leads_from_a_scorecard_point_to_the_failing_records_and_the_turns_side_by_side(tabs):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = tabs.get("03_decision_quality").page  # opened, and run with Run All; as yet untouched
    try:
        chart = (
            page.locator(".jp-OutputArea-output")
            .filter(has=page.locator(".vega-embed", has_text="Valid decisions per model"))
            .first
        )
        points = chart.locator(".vega-embed .mark-symbol.role-mark path")
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
        # a disagreement comes first; one decision a side per row: pick a row where one is invalid beside a valid one
        assert table_column(pairs, "disagree")[0] == "true"
        sides = list(zip(table_column(pairs, "outcome_a"), table_column(pairs, "outcome_b")))
        row = next(i for i, pair in enumerate(sides) if sorted(pair) == ["invalid", "valid"])
        pairs.locator(".dt-scroll-body tbody tr").nth(row).click()
        both = page.locator(".widget-html-content", has_text=" · turn ").first
        wait_until(lambda: both.count() > 0 and both.locator("pre").count() == 2, "both decisions as written")
        both.scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / "03_side_by_side.png"), full_page=False)
        # play quality: the decisions behind a mistake's rate, each with its file and line
        named = page.get_by_text(re.compile(r"\d+ decisions named fold_free")).first
        named.scroll_into_view_if_needed()
        mistaken = data_table(page, "win_probability").first
        wait_until(lambda: mistaken.locator(".dt-scroll-body tbody tr").count() > 0, "the decisions named fold_free")
        assert set(table_column(mistaken, "action")) == {"fold"} and set(table_column(mistaken, "to_call")) == {"0"}
        page.screenshot(path=str(SHOTS / "03_play_quality.png"), full_page=False)
        assert cell_errors(page) == []
    finally:
        tabs.done("03_decision_quality", keep=False)


def test_notebook_03_leads_from_a_validity_bar_a_rule_bar_and_a_mistake_to_their_records(tabs):
    """The decision-quality chart: a click on a format's validity bar shows that format's
    invalid records below it, a click on a violation rule's bar the records that break it;
    the play-quality chart: a click on a mistake's point the decisions named with it."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = tabs.get("03_decision_quality").page
    try:
        output = (
            page.locator(".jp-OutputArea-output")
            .filter(has=page.locator(".vega-embed", has_text="Decision quality across games"))
            .first
        )
        wait_until(lambda: output.count() > 0, "the decision-quality chart")
        output.scroll_into_view_if_needed()
        bars = output.locator(".vega-embed .mark-rect.role-mark path")
        wait_until(lambda: bars.count() > 0, "the chart's bars")
        labels = bars.evaluate_all("ps => ps.map(p => p.getAttribute('aria-label') || '')")
        records = output.locator(".dt-container").first
        # a format's validity bar: its tooltip names the format and its valid_rate
        at = next(i for i, label in enumerate(labels) if "valid_rate" in label and "format: gm" in label)
        bars.nth(at).click()
        wait_until(
            lambda: (
                records.locator(".dt-scroll-body tbody tr").count() > 0
                and set(table_column(records, "format")) == {"gm"}
            ),
            "the records of gm's validity bar",
        )
        assert set(table_column(records, "valid")) == {"invalid"}
        page.screenshot(path=str(SHOTS / "03_validity_bar_to_records.png"), full_page=False)
        # a rule's bar: the records that break it
        at, rule = next(
            (i, re.search(r"rule: ([^;]+)", label).group(1).strip())
            for i, label in enumerate(labels)
            if "severity" in label and "rule: " in label
        )
        bars.nth(at).click()
        wait_until(
            lambda: all(rule in cell for cell in table_column(records, "rules")) and table_column(records, "rules"),
            f"the records that break {rule}",
        )
        page.screenshot(path=str(SHOTS / "03_rule_bar_to_records.png"), full_page=False)
        # the play-quality chart: a mistake's point, the decisions named with it
        played = (
            page.locator(".jp-OutputArea-output")
            .filter(has=page.locator(".vega-embed", has_text="How each model plays its Damage hands"))
            .first
        )
        played.scroll_into_view_if_needed()
        points = played.locator(".vega-embed .mark-symbol.role-mark path")
        wait_until(lambda: points.count() > 0, "the play-quality chart's points")
        labels = points.evaluate_all("ps => ps.map(p => p.getAttribute('aria-label') || '')")
        at, model, mistake = next(
            (
                i,
                re.search(r"model: ([^;]+)", label).group(1).strip(),
                re.search(r"mistake: ([^;]+)", label).group(1).strip(),
            )
            for i, label in enumerate(labels)
            if "mistake: " in label and not re.search(r"rate: 0(\.0)?%", label)
        )
        points.nth(at).click()
        decisions = played.locator(".dt-container").first
        wait_until(
            lambda: (
                decisions.locator(".dt-scroll-body tbody tr").count() > 0
                and set(table_column(decisions, "model")) == {model}
                and set(table_column(decisions, "format")) == {"damage"}
            ),
            f"{model}'s decisions named {mistake}",
        )
        page.screenshot(path=str(SHOTS / "03_mistake_to_decisions.png"), full_page=False)
        assert cell_errors(page) == []
    finally:
        tabs.done("03_decision_quality", keep=False)


def test_the_report_reads_at_1280_pixels_with_every_chart_drawn_and_a_quiet_console(browser, notebook_db, tmp_path):
    """The HTML report as a reader opens it: every chart drawn, none wider than a 1280-pixel
    window, and no error or warning of Vega's or Vega-Lite's in the console (an empty
    layer's "Infinite extent", a facet's independent scales joining its layers' domains:
    neither said anything to a reader)."""
    from workbench.cli import main

    report = tmp_path / "report.html"
    assert main(["report", "--db", str(notebook_db), "-o", str(report)]) == 0
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    said = []
    page.on("console", lambda message: said.append(f"{message.type}: {message.text}"))
    try:
        page.goto(report.as_uri())
        charts = page.locator(".chart")
        wait_until(
            lambda: charts.count() > 0 and page.locator(".chart .marks").count() == charts.count(),
            "every chart of the report drawn",
        )
        wider = page.evaluate(
            "() => [...document.querySelectorAll('.chart')].filter(c => "
            "c.getBoundingClientRect().right > window.innerWidth).map(c => c.id)"
        )
        assert wider == []
        assert said == []
        assert 'resources="all"' not in report.read_text()  # no Python advice to its readers
    finally:
        context.close()
