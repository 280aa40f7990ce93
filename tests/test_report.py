"""`workbench report`: one self-contained file with the whole picture, log text escaped,
drawn by a real browser; the same as Markdown with its figures beside it."""

import json
import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import pytest

import workbench
from tests.conftest import SHARED, rows, write_lines
from workbench.cli import main

CHROMIUM = os.environ.get("WORKBENCH_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
HOSTILE_MODEL = "m</script><script>alert('model')</script>"
HOSTILE_RULE_TEXT = "<img src=http://example.com/x onerror=alert(1)>"
SECTIONS = (
    "What the database holds",
    "Scorecard",
    "Failed calls",
    "Model comparisons",
    "Ratings",
    "Play quality",
    "Figures",
    "Quality gates",
    "Most frequent violations",
    "Provenance",
)


class Links(HTMLParser):
    """What a page links to and what it loads: every src and href, the elements that load
    one (script src, link href, img, iframe...), its headings' ids, its chart containers,
    its tables, its filter boxes and its style sheets' text."""

    LOADS = {
        "script": "src",
        "link": "href",
        "img": "src",
        "iframe": "src",
        "embed": "src",
        "object": "data",
        "source": "src",
        "audio": "src",
        "video": "src",
    }

    def __init__(self):
        super().__init__()
        self.links, self.loaded, self.charts, self.scripts = [], [], [], 0
        self.headings, self.tables, self.filters, self.styles, self.in_style = {}, [], [], [], False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.links += [attrs[name] for name in ("src", "href") if name in attrs]
        if self.LOADS.get(tag) in attrs:
            self.loaded.append(attrs[self.LOADS[tag]])
        self.charts += [attrs["id"]] if (attrs.get("id") or "").startswith("chart-") else []
        self.scripts += tag == "script"
        self.headings.update({attrs["id"]: tag} if tag in ("h2", "h3") and "id" in attrs else {})
        self.tables += [attrs] if tag == "table" else []
        self.filters += [attrs] if tag == "input" else []
        self.styles += [attrs["style"]] if "style" in attrs else []
        self.in_style = tag == "style"

    def handle_data(self, data):
        if self.in_style:
            self.styles.append(data)

    def handle_endtag(self, tag):
        self.in_style = False


def read_page(path) -> Links:
    page = Links()
    page.feed(path.read_text())
    return page


@pytest.fixture(scope="module")
def hostile_db(notebook_db, tmp_path_factory):
    """The sample database plus an Arena log whose model and tool carry markup."""
    folder = tmp_path_factory.mktemp("hostile")
    db = folder / "w.duckdb"
    shutil.copy(notebook_db, db)
    lines = [
        json.dumps(
            {
                "agent_id": "a1",
                "tick": tick,
                "tool": HOSTILE_RULE_TEXT if tick == 0 else "idle",
                "params": {},
                "model": HOSTILE_MODEL,
            }
        )
        for tick in range(3)
    ]
    assert not workbench.ingest([write_lines(folder / "ep9.decisions.jsonl", lines)], db=db).failed
    return db


@pytest.fixture(scope="module")
def report_html(hostile_db, tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "report.html"
    assert main(["report", "--db", str(hostile_db), "-o", str(out)]) == 0
    return out


def test_the_report_is_one_offline_file_with_every_section(report_html):
    text = report_html.read_text()
    page = read_page(report_html)
    assert [link for link in page.links if not link.startswith("#")] == []  # nothing but its own sections
    for heading in SECTIONS:
        assert re.search(f"<h2 id='[a-z-]+'>{heading}</h2>", text), heading
    from workbench import plots

    # the scorecard's chart and every standard figure the sample can draw
    assert len(page.charts) == 1 + len(plots.FIGURES)
    assert "sha256" in text and "ec4x" in text and "mu" in text


def test_the_play_quality_section_has_a_row_per_damage_model(report_html, hostile_db, capsys):
    assert main(["quality", "--db", str(hostile_db), "--json"]) == 0
    models = [row["model"] for row in json.loads(capsys.readouterr().out)]
    text = report_html.read_text()
    section = text[text.index("<h2 id='play-quality'>") : text.index("<h2 id='figures'>")]
    assert models and all(f"<td>{model}</td>" in section for model in models)
    assert "fold free" in section and "showdown win rate" in section  # headings in words


def test_the_contents_link_to_every_section(report_html):
    text = report_html.read_text()
    contents = re.search(r"<nav class=\"contents\"[^>]*>(.*?)</nav>", text, re.S).group(1)
    linked = re.findall(r"<a href='#([^']+)'>([^<]+)</a>", contents)
    assert [title for _, title in linked] == list(SECTIONS)
    ids = read_page(report_html).headings
    assert all(ids.get(anchor) == "h2" for anchor, _ in linked)  # each link lands on its section's heading
    assert len({anchor for anchor, _ in linked}) == len(SECTIONS)


def test_every_table_of_the_report_sorts_and_filters(report_html):
    text = report_html.read_text()
    page = read_page(report_html)
    assert len(page.tables) >= 8  # summary, scorecard, comparisons, ratings, play, gates, violations, provenance
    assert all(table["class"] == "sortable" for table in page.tables)
    # one filter box per table, naming it
    assert sorted(box["data-table"] for box in page.filters) == sorted(table["id"] for table in page.tables)
    assert 'querySelectorAll("table.sortable")' in text and "input.filter" in text  # the script that does it


def test_the_report_loads_nothing_from_the_network(report_html):
    page = read_page(report_html)
    assert page.loaded == []  # no script, style sheet, image or frame from anywhere: all inline
    remote = re.compile(r"url\(\s*['\"]?\s*(https?:)?//|@import", re.I)
    assert [style for style in page.styles if remote.search(style)] == []


def test_the_report_shows_paths_relative_to_the_folder_ingested(report_html, hostile_db):
    text = report_html.read_text()
    paths = [path for (path,) in rows(hostile_db, "SELECT path FROM sources")]
    root = os.path.commonpath(paths)
    assert [path for path in paths if path in text] == []
    assert text.count(root) == 1 and f"Paths are relative to {root}." in text  # the root, said once
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", text.replace("<wbr>", ""))
    relative = {str(Path(path).relative_to(root)) for path in paths}
    assert relative <= set(cells)
    # the violations' example places too: `path:locator`, the path as the provenance shows it
    places = [place for cell in cells for place in cell.split(", ") if re.search(r":(line \d+|\w+ )", place)]
    lined = [place for place in places if ":line " in place]
    assert lined and all(place.rsplit(":", 1)[0] in relative for place in lined), places


def test_log_text_in_the_report_cannot_run(report_html):
    text = report_html.read_text()
    assert HOSTILE_MODEL not in text and "<script>alert(" not in text
    assert "<img src=http" not in text
    assert "m&lt;/script&gt;&lt;script&gt;alert(&#x27;model&#x27;)&lt;/script&gt;" in text  # escaped in tables
    assert "\\u2039script\\u203aalert('model')" in text  # chart labels use look-alikes of < and >


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium: install Debian's `chromium` (as .ci/run does)")
def test_a_browser_draws_every_chart_of_the_report_and_runs_nothing_from_the_logs(report_html, tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed: pip install -e '.[dev]'")
    page_links = read_page(report_html)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            dialogs, requests = [], []
            page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
            page.on("request", lambda request: requests.append(request.url))
            page.goto(report_html.as_uri())
            page.wait_for_function(
                f"document.querySelectorAll('.vega-embed .marks').length >= {len(page_links.charts)}", timeout=60_000
            )
            assert page.locator(".vega-embed .marks").count() == len(page_links.charts)
            assert dialogs == [] and [url for url in requests if not url.startswith(("file:", "data:", "blob:"))] == []
            check_the_tables_fit_sort_and_filter(page, tmp_path / "comparisons.png")
            # nothing but the page itself, not even a file beside it
            assert [
                url for url in requests if url != report_html.as_uri() and not url.startswith(("data:", "blob:"))
            ] == []
        finally:
            browser.close()


def check_the_tables_fit_sort_and_filter(page, screenshot) -> None:
    """At 1,280 px the comparisons table fits (its verdict in view) and the page does not
    scroll sideways; a header's click sorts its column by value; the filter box keeps the
    rows that hold its text."""
    comparisons = page.locator("#model-comparisons-table-1")
    comparisons.scroll_into_view_if_needed()
    page.screenshot(path=str(screenshot))
    width, room = comparisons.evaluate("table => [table.scrollWidth, table.parentElement.clientWidth]")
    assert 0 < width <= room <= 1280
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    verdict = page.locator("#model-comparisons-table-1 th", has_text="verdict").bounding_box()
    assert verdict["x"] + verdict["width"] <= 1280

    header = page.locator("#scorecard-table-1 th", has_text="validity")
    column = header.evaluate("th => th.cellIndex")
    keys = (
        f"[...document.querySelectorAll('#scorecard-table-1 tbody tr')].map(r => Number(r.cells[{column}].dataset.key))"
    )
    before = page.evaluate(keys)
    assert before != sorted(before)  # the scorecard comes by format and model, not by validity
    header.click()
    assert page.evaluate(keys) == sorted(before) and header.get_attribute("aria-sort") == "ascending"
    header.click()
    assert page.evaluate(keys) == sorted(before, reverse=True) and header.get_attribute("aria-sort") == "descending"

    rows = page.locator("#scorecard-table-1 tbody tr")
    formats = rows.evaluate_all("rows => rows.map(r => r.cells[0].textContent)")
    page.locator("input[data-table='scorecard-table-1']").fill("ec4x")
    visible = rows.evaluate_all("rows => rows.filter(r => !r.hidden).map(r => r.cells[0].textContent)")
    assert visible == ["ec4x"] * formats.count("ec4x") and 0 < len(visible) < len(formats)


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
    assert re.search(r"\| \d+\.\d% \(\d+\.\d–\d+\.\d%, n=\d+, \d+ games?\) \|", text)  # a validity, as read


def test_markdown_figure_links_work_for_any_file_name(hostile_db, tmp_path):
    out = tmp_path / "shared reports (v2)" / "my report (draft).md"
    assert main(["report", "--db", str(hostile_db), "-o", str(out)]) == 0
    links = re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", out.read_text())  # a link ends at the first ) or space
    figures = sorted(out.parent.glob("my report (draft)_figures/*.png"))
    assert figures and len(links) == len(figures)
    assert sorted(out.parent / unquote(link) for link in links) == figures


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
    assert "| cost per decision ($) |" in out.read_text()  # headings in words


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
    assert "no finished Damage game in this database" in text and "<h2 id='provenance'>Provenance</h2>" in text
    assert "no answered Damage betting decision in this database" in text  # the play quality section
    # one file: its folder is the root, the file named by itself (paths as the database
    # keeps them: links followed, where the corpus is reached through one)
    kept = save.resolve()
    assert str(kept) not in text and str(save) not in text and f"Paths are relative to {kept.parent}." in text
    assert "<td>autosave_<wbr>2312.01.01.sav</td>" in text  # may break after its underscore
    assert "[10/10] provenance" in capsys.readouterr().err  # progress, one line per section


def test_the_economy_figure_s_subtitle_is_lines_a_reader_can_read_whole(notebook_db):
    """The resources left out of the economy figure were named in one line cut off at the
    figure's edge, with advice for Python ('resources="all" shows them')."""
    from workbench import plots
    from workbench.plots.economy import SUBTITLE_CHARACTERS

    with workbench.connect(notebook_db, read_only=True) as con:
        spec = plots.economy_nets.spec(con)
    subtitle = spec["title"]["subtitle"]
    lines = subtitle if isinstance(subtitle, list) else [subtitle]
    assert all(len(line) <= SUBTITLE_CHARACTERS for line in lines)
    assert any("never in deficit, are not drawn" in line for line in lines)
    assert not any("resources=" in line for line in lines)
