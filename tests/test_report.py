"""`workbench report`: one self-contained file with the whole picture, log text escaped,
drawn by a real browser; the same as Markdown with its figures beside it."""

import json
import os
import shutil
from html.parser import HTMLParser

import pytest

from tests.conftest import SHARED, write_lines
from workbench.cli import main

import workbench

CHROMIUM = os.environ.get("WORKBENCH_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
HOSTILE_MODEL = "m</script><script>alert('model')</script>"
HOSTILE_RULE_TEXT = "<img src=http://example.com/x onerror=alert(1)>"


class Links(HTMLParser):
    """Every src and href of the page, and the ids of its chart containers."""

    def __init__(self):
        super().__init__()
        self.links, self.charts, self.scripts = [], [], 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.links += [attrs[name] for name in ("src", "href") if name in attrs]
        self.charts += [attrs["id"]] if (attrs.get("id") or "").startswith("chart-") else []
        self.scripts += tag == "script"


@pytest.fixture(scope="module")
def hostile_db(notebook_db, tmp_path_factory):
    """The sample database plus an Arena log whose model and tool carry markup."""
    folder = tmp_path_factory.mktemp("hostile")
    db = folder / "w.duckdb"
    shutil.copy(notebook_db, db)
    lines = [json.dumps({"agent_id": "a1", "tick": tick, "tool": HOSTILE_RULE_TEXT if tick == 0 else "idle",
                         "params": {}, "model": HOSTILE_MODEL}) for tick in range(3)]
    assert not workbench.ingest([write_lines(folder / "ep9.decisions.jsonl", lines)], db=db).failed
    return db


@pytest.fixture(scope="module")
def report_html(hostile_db, tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "report.html"
    assert main(["report", "--db", str(hostile_db), "-o", str(out)]) == 0
    return out


def test_the_report_is_one_offline_file_with_every_section(report_html):
    text = report_html.read_text()
    page = Links()
    page.feed(text)
    assert page.links == []  # nothing loaded from anywhere, the network least of all
    for heading in ("What the database holds", "Scorecard", "Model comparisons", "Ratings", "Figures",
                    "Quality gates", "Most frequent violations", "Provenance"):
        assert f"<h2>{heading}</h2>" in text
    from workbench import plots

    # the scorecard's chart and every standard figure the sample can draw
    assert len(page.charts) == 1 + len(plots.FIGURES)
    assert "sha256" in text and "ec4x" in text and "mu_low" in text


def test_log_text_in_the_report_cannot_run(report_html):
    text = report_html.read_text()
    assert HOSTILE_MODEL not in text and "<script>alert(" not in text
    assert "<img src=http" not in text
    assert "m&lt;/script&gt;&lt;script&gt;alert(&#x27;model&#x27;)&lt;/script&gt;" in text  # escaped in tables
    assert "\\u2039script\\u203aalert('model')" in text  # chart labels use look-alikes of < and >


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium: install Debian's `chromium` (as .ci/run does)")
def test_a_browser_draws_every_chart_of_the_report_and_runs_nothing_from_the_logs(report_html):
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed: pip install -e '.[dev]'")
    page_links = Links()
    page_links.feed(report_html.read_text())
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page()
            dialogs, requests = [], []
            page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
            page.on("request", lambda request: requests.append(request.url))
            page.goto(report_html.as_uri())
            page.wait_for_function(f"document.querySelectorAll('.vega-embed .marks').length >= "
                                   f"{len(page_links.charts)}", timeout=60_000)
            assert page.locator(".vega-embed .marks").count() == len(page_links.charts)
            assert dialogs == [] and [url for url in requests if not url.startswith(("file:", "data:", "blob:"))] == []
        finally:
            browser.close()


def test_the_markdown_report_links_figures_written_beside_it(hostile_db, tmp_path):
    out = tmp_path / "share" / "report.md"
    assert main(["report", "--db", str(hostile_db), "-o", str(out)]) == 0
    text = out.read_text()
    figures = sorted((tmp_path / "share" / "report_figures").glob("*.png"))
    assert figures and all(f"](report_figures/{figure.name})" in text for figure in figures)
    assert "## Scorecard" in text and "| format | model |" in text
    assert "<script>" not in text and "m&lt;/script&gt;" in text  # no markup from the logs
    # a table row per scorecard row, none broken by a `|` inside a cell
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    assert all(line.count(" | ") == rows[0].count(" | ") for line in rows[:3])


def test_a_report_needs_a_known_suffix_and_readable_prices(hostile_db, tmp_path, capsys):
    assert main(["report", "--db", str(hostile_db), "-o", str(tmp_path / "report.pdf")]) == 2
    err = capsys.readouterr().err
    assert "a report is .html or .md" in err and err.count("\n") == 1  # one line: the refusal
    out = tmp_path / "priced.md"
    assert main(["report", "--db", str(hostile_db), "-o", str(out), "--prices", str(tmp_path / "none.json")]) == 2
    err = capsys.readouterr().err
    assert "cannot read prices from" in err and err.count("\n") == 1 and not out.exists()
    (tmp_path / "prices.json").write_text(json.dumps({"claude-3-5-haiku": 1.0}))
    assert main(["report", "--db", str(hostile_db), "-o", str(out), "--prices", str(tmp_path / "prices.json")]) == 0
    assert "cost\\_per\\_decision" in out.read_text()  # Markdown escapes the underscores


def test_a_database_with_no_decisions_still_gets_a_report_saying_so(tmp_path, capsys):
    save = SHARED / "corpus" / "stellaris" / "autosave_2312.01.01.sav"
    if not save.exists():
        pytest.skip(f"the real Stellaris save is not at {save}")
    db = tmp_path / "w.duckdb"
    assert not workbench.ingest([save], db=db).failed
    out = tmp_path / "report.html"
    assert main(["report", "--db", str(db), "-o", str(out)]) == 0
    text = out.read_text()
    assert "no decisions in this database: nothing to score" in text
    assert "no finished Damage game in this database" in text and "<h2>Provenance</h2>" in text
    assert "[8/8] provenance" in capsys.readouterr().err  # progress, one line per section
