"""`workbench report`: the whole picture of a database as one file to share.

The content is built once, as a list of sections (text, tables and charts), then written
as a self-contained HTML page (a table of contents; tables that sort and filter, drawn by
`workbench.display` with its script inline; Vega's scripts inline; nothing loaded from the
network; every chart interactive with its tooltips) or as Markdown with the charts as PNG
files in a folder beside it. The charts are the figures' Vega-Lite specs: the report
loads no Altair. Both show the tables as `display.readable` puts them: a
validity with its interval, n and games in one cell, numbers rounded. Text from logs is
escaped for the format it is written in: HTML entities in the page, and `ScriptSafeJSON`
for the chart specs inside its <script>."""

from __future__ import annotations

import html
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO
from urllib.parse import quote

import polars as pl

from workbench import analysis, comparison, connection, display, plots
from workbench.errors import WorkbenchError
from workbench.naming import read_aliases
from workbench.paths import text_of, writable_folder
from workbench.plots.files import ScriptSafeJSON, vega_script
from workbench.prices import read_prices

SUFFIXES = (".html", ".md")
TOP_VIOLATIONS = 15
EXAMPLES_PER_RULE = 3


@dataclass
class Section:
    """A heading, a sentence saying how to read what follows, then tables and charts."""

    title: str
    text: str = ""
    tables: list[pl.DataFrame] = field(default_factory=list)
    charts: list[tuple[str, dict]] = field(default_factory=list)  # (name, Vega-Lite spec)
    notes: list[str] = field(default_factory=list)


def write_report(con, path: str | Path, db_label: str, prices=None, aliases=None, log: TextIO | None = None) -> Path:
    """Write the report of the database open on `con` to `path` (.html or .md);
    `prices` and `aliases` as `comparison.scorecard` takes them."""
    path = Path(path)
    if path.suffix.lower() not in SUFFIXES:
        raise WorkbenchError(f"cannot write {path}: a report is .html or .md, not {path.suffix or '(no suffix)'}")
    # A bad price or alias file, or a place that cannot be written, is the user's to fix
    # before the report is built.
    prices = read_prices(prices) if prices is not None else None
    aliases = read_aliases(aliases)
    writable_folder(path)
    if log is not None:
        print(f"workbench report: reading {db_label}", file=log)
    sections = build(con, prices, log, aliases)
    title = f"workbench report: {db_label}"
    made = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    try:
        if path.suffix.lower() == ".html":
            path.write_text(as_html(title, made, sections), encoding="utf-8")
        else:
            path.write_text(as_markdown(title, made, sections, path), encoding="utf-8")
    except OSError as exc:
        raise WorkbenchError(f"cannot write {text_of(path)}: {exc.strerror or exc}") from None
    return path


# --- what the report says -------------------------------------------------------------


def build(con, prices=None, log: TextIO | None = None, aliases=None) -> list[Section]:
    """Every section, in reading order; a section whose data is absent says so."""
    steps: list[tuple[str, Callable[[], Section]]] = [
        ("summary", lambda: _summary(con)),
        ("scorecard", lambda: _scorecard(con, prices, aliases)),
        ("failed calls", lambda: _failed_calls(con, aliases)),
        ("comparisons", lambda: _comparisons(con, aliases)),
        ("ratings", lambda: _ratings(con, aliases)),
        ("play quality", lambda: _play_quality(con, aliases)),
        ("figures", lambda: _figures(con, aliases)),
        ("quality gates", lambda: _gates(con)),
        ("violations", lambda: _violations(con)),
        ("provenance", lambda: _provenance(con)),
    ]
    sections = []
    for number, (name, make) in enumerate(steps, 1):
        if log is not None:
            print(f"  [{number}/{len(steps)}] {name}", file=log, flush=True)
        try:
            sections.append(make())
        except WorkbenchError as exc:  # nothing of that kind in this database: the section says so
            sections.append(Section(name.capitalize(), notes=[str(exc)]))
    return sections


def _summary(con) -> Section:
    return Section(
        "What the database holds",
        "Per format: files, records kept, lines rejected, and findings by severity "
        "(error: breaks the specification; warning: recovered; info: drift).",
        tables=[analysis.format_summary(con)],
    )


def _scorecard(con, prices, aliases) -> Section:
    card = comparison.scorecard(con, prices=prices, aliases=aliases)
    if card.is_empty():
        raise WorkbenchError(f"no decisions in {connection.holder(con)}: nothing to score")
    return Section(
        "Scorecard",
        "Per format and model (or agent where no model is known): how many decisions, "
        "how many valid, with the 95% interval clustered by game (games: how many; design effect: how "
        "much more the games differ than independent decisions would, 1 where they do not and the "
        "interval is Wilson's); the calls that got no answer (failed: the provider's fault, left out of "
        "validity) and their share of all calls; latency and tokens per decision (p50/p95); retries where the log "
        "records them; the rule broken most; costs where a price is known (genai-prices, or --prices). "
        "A wide interval is a small sample, or few games that differ.",
        tables=[card],
        charts=[("validity with 95% intervals", plots.figure_spec("scorecard", con, aliases=aliases))],
    )


def _failed_calls(con, aliases) -> Section:
    failed = comparison.failed_calls(con, aliases)
    return Section(
        "Failed calls",
        comparison.failed_calls_in_words(failed) + " A failed call got no answer from the "
        "model (a provider or transport error, a timeout, a rate limit): it is the provider's fault, not "
        "the model's, so it is left out of validity and the comparisons (workbench scorecard --failures "
        "invalid counts it against the model); `workbench records --failed` lists each with its line.",
        tables=[failed] if failed.height else [],
    )


def _comparisons(con, aliases) -> Section:
    pairs = comparison.compare_models(con, aliases=aliases)
    return Section(
        "Model comparisons",
        "Models within a format: the difference in validity with its 95% interval, "
        "paired (Newcombe's paired interval) on the turns both played in the same games, else "
        "unpaired (Newcombe's interval from the two clustered intervals); both with the design effect of "
        "the format's games, and a p-value that is the interval's own inversion; p-values corrected for the number of comparisons (Holm). A difference is named "
        "only where the corrected p is below 0.05 and the interval excludes 0; where there is no "
        "evidence, the verdict says how many games per model would show the difference seen.",
        tables=[pairs.select(COMPARISON_COLUMNS)],
        notes=comparison.how_compared(pairs),
    )


# What the comparisons table shows: the pair, its verdict, the difference with its interval
# (ci_low/ci_high after it), the corrected p, each side's validity with its n and games,
# and how it was compared. The rest (uncorrected p, the shared turns, flags the verdict
# states in words) is in `workbench compare` and `comparison.compare_models`.
COMPARISON_COLUMNS = (
    "format",
    "a",
    "b",
    "verdict",
    "difference",
    "ci_low",
    "ci_high",
    "p_holm",
    "validity_a",
    "n_a",
    "games_a",
    "validity_b",
    "n_b",
    "games_b",
    "method",
)


def _ratings(con, aliases) -> Section:
    table = analysis.ratings(con, aliases=aliases)
    return Section(
        "Ratings",
        "Damage games: per model, placements, wins and a Plackett-Luce rating with a 95% "
        "interval from a bootstrap over games (ordinal = mu - 3 sigma ranks them); rank_low and "
        "rank_high are the ranks a model could hold, and models with the same `tied` label cannot be "
        "told apart; a model with fewer than 3 rated games gets no interval.",
        tables=[table],
        notes=[RATED_FORMATS],
    )


def _play_quality(con, aliases) -> Section:
    title = "Play quality"
    if not connection.is_database(con):
        return Section(
            title,
            notes=[
                "Play quality is judged from a database (`workbench report --db FILE`): it "
                "reads every card of the Damage logs, which a Parquet tree on Spark holds too, "
                "but deals them on this machine."
            ],
        )
    summary = analysis.play_summary(con, aliases=aliases)
    shown = summary.select("model", "decisions", "games", *(pl.col(name) for name in PLAY_COLUMNS))
    return Section(
        title,
        "Damage: each answered betting decision judged on what its player could know (the pot "
        "odds, and the hand's win probability against the opponents still in). Per model, each named "
        "mistake's share of its decisions and the play statistics, each a share with its 95% interval "
        "clustered by game (the `_low`/`_high` columns of `workbench quality --csv`); chips and Lives "
        "won at showdown beside those its win probabilities expected.",
        tables=[shown],
        notes=[PLAYED_FORMATS, "Its figure is among the figures below (`play`)."],
    )


# The columns of the play quality table: rates (their intervals are in `workbench quality`).
PLAY_COLUMNS = (
    "fold_free",
    "fold_ahead",
    "continue_behind",
    "showdown_long_shot",
    "vpip",
    "pfr",
    "aggression",
    "fold_to_raise",
    "showdown_win_rate",
    "chips_won",
    "chips_expected",
    "lives_lost",
    "lives_expected",
)
# Why the other formats have no play quality (docs/play-quality.md).
PLAYED_FORMATS = (
    "Only Damage logs carry every card: EC4X order logs, Agent Arena decision logs, game-master "
    "responses and Stellaris saves record no reference for what a decision was worth, and their "
    "decision quality is validity (the scorecard)."
)


# Which logs record who placed where (damage.ratings says why).
RATED_FORMATS = (
    "Only Damage logs record placements. EC4X traces, Arena decision logs and GM responses record no "
    "placement or outcome per model, and a Stellaris save has one player: they have no ratings."
)


def _figures(con, aliases) -> Section:
    section = Section("Figures", "Every standard figure (hover for the values behind a mark).")
    for kind, figure in plots.FIGURES.items():  # on Spark, only those that compare across games
        if not connection.is_database(con) and not figure.across_games:
            section.notes.append(
                f"{kind}: drawn from a database, not from a Parquet tree; pull the games wanted "
                f'into one (docs/beyond-one-machine.md, "Per game, on DuckDB")'
            )
            continue
        try:
            section.charts.append((kind, plots.figure_spec(kind, con, aliases=aliases)))
        except WorkbenchError as exc:
            section.notes.append(f"{kind}: not drawn ({exc})")
    return section


def _gates(con) -> Section:
    return Section(
        "Quality gates",
        "The EC4X bot's own gates per game and model: pass or fail.",
        tables=[analysis.quality_gates(con)],
    )


def _violations(con) -> Section:
    rules = analysis.top_violation_rules(con, limit=TOP_VIOLATIONS, examples=EXAMPLES_PER_RULE)
    _, root = display.relative_paths(analysis.provenance(con))
    where = "path and locator"
    if root is not None and "examples" in rules.columns:  # as the provenance shows paths
        folder = os.path.join(root, "")
        rules = rules.with_columns(
            pl.Series(
                "examples",
                [[place.removeprefix(folder) for place in places or []] for places in rules["examples"].to_list()],
            )
        )
        where = "path relative to the folder the provenance names, and locator"
    return Section(
        "Most frequent violations",
        f"The {TOP_VIOLATIONS} most frequent rules, each with up to "
        f"{EXAMPLES_PER_RULE} example locations ({where}) to look at.",
        tables=[rules],
    )


def _provenance(con) -> Section:
    files, root = display.relative_paths(analysis.provenance(con))
    where = f" Paths are relative to {root}." if root else ""
    return Section(
        "Provenance", f"Every file the database holds, its sha256 and when it was read.{where}", tables=[files]
    )


# --- HTML -------------------------------------------------------------------------------

PAGE_STYLE = """
body { font-family: system-ui, sans-serif; margin: 24px auto; padding: 0 16px; max-width: 1280px; color: #222;
  box-sizing: border-box; }
nav.contents ol { margin: 4px 0 16px; padding-left: 24px; columns: 2; }
.note { color: #666; font-style: italic; }
div.chart { margin: 12px 0 24px; overflow-x: auto; display: block; max-width: 100%; }  /* vega-embed makes it inline-block */
"""


def as_html(title: str, made: str, sections: list[Section]) -> str:
    charts: list[dict] = []  # the Vega-Lite specs, in page order
    body: list[str] = []
    anchors = _anchors(sections)
    for section, anchor in zip(sections, anchors):
        body.append(f"<h2 id='{anchor}'>{html.escape(section.title)}</h2>")
        if section.text:
            body.append(f"<p>{html.escape(section.text)}</p>")
        body += [f"<p class='note'>{html.escape(note)}</p>" for note in section.notes]
        body += [
            display.html_table(_with_values(table), f"{anchor}-table-{number}")
            for number, table in enumerate(section.tables, 1)
        ]
        for name, spec in section.charts:
            body.append(f"<h3>{html.escape(name)}</h3><div class='chart' id='chart-{len(charts)}'></div>")
            charts.append(spec)
    contents = "".join(
        f"<li><a href='#{anchor}'>{html.escape(section.title)}</a></li>" for section, anchor in zip(sections, anchors)
    )
    specs = json.dumps(charts, cls=ScriptSafeJSON)
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>{PAGE_STYLE}{display.STYLE}</style>
<script type="text/javascript">{vega_script()}</script></head>
<body><h1>{html.escape(title)}</h1><p class="note">made {made}</p>
<nav class="contents" aria-label="Contents"><strong>Contents</strong><ol>{contents}</ol></nav>
{"".join(body)}
<script type="text/javascript">{display.SCRIPT}</script>
<script type="text/javascript">
const specs = {specs};
// Vega's warnings (an empty layer's "Infinite extent") say nothing to a reader; an error
// still shows (log level 1: vega.Error).
specs.forEach((spec, i) => vegaEmbed('#chart-' + i, spec, {{"actions": false, "logLevel": 1}})
  .catch(console.error));
</script></body></html>
"""


def _anchors(sections: list[Section]) -> list[str]:
    """An id per section from its title (`model-comparisons`), unique within the page."""
    anchors: list[str] = []
    for section in sections:
        anchor = "-".join("".join(c if c.isalnum() else " " for c in section.title.lower()).split()) or "section"
        anchors.append(anchor if anchor not in anchors else f"{anchor}-{len(anchors) + 1}")
    return anchors


def _with_values(table: pl.DataFrame) -> pl.DataFrame:
    """The table without the columns that hold no value in any row: they say nothing."""
    return (
        table.select(name for name in table.columns if table[name].null_count() < table.height)
        if table.height
        else table
    )


# --- Markdown ----------------------------------------------------------------------------


def as_markdown(title: str, made: str, sections: list[Section], path: Path) -> str:
    folder = path.with_name(path.stem + "_figures")
    lines = [f"# {_md_text(title)}", "", f"_made {made}_", ""]
    for section in sections:
        lines += [f"## {_md_text(section.title)}", ""]
        if section.text:
            lines += [_md_text(section.text), ""]
        lines += [f"_{_md_text(note)}_\n" for note in section.notes]
        for table in section.tables:
            lines += [_md_table(table), ""]
        for name, spec in section.charts:
            figure = plots.save(spec, folder / f"{_file_name(name)}.png")
            # percent-encoded, so a folder or file name with spaces or brackets still links
            lines += [f"![{_md_text(name)}]({quote(f'{folder.name}/{figure.name}')})", ""]
    return "\n".join(lines)


def _md_table(table: pl.DataFrame) -> str:
    if table.is_empty():
        return "_nothing to show_"
    shown = display.readable(_with_values(table))
    rows = [[display.heading(name) for name in shown.columns], ["---"] * shown.width, *shown.iter_rows()]
    return "\n".join("| " + " | ".join(_md_text(cell) for cell in row) + " |" for row in rows)


def _md_text(text: str) -> str:
    """Text from logs, inert in Markdown: no table break, no HTML, no link or image syntax."""
    text = " ".join(str(text).split())
    text = html.escape(text, quote=False)
    for char in "\\|`*_[]":
        text = text.replace(char, "\\" + char)
    return text


def _file_name(name: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in name).strip("-") or "figure"
