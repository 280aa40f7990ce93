"""Two real game-agent log formats of other projects, each declared in one TOML file and
a JSON Schema (tests/declared/foreign/<name>/: an excerpt of the real program's own
output, byte for byte, its source and license in SOURCE.md). The expected counts are
SOURCE.md's, counted by hand from the rules the real programs state, not by the
workbench."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from workbench.cli import main

FOREIGN = Path(__file__).parent / "foreign"

# per format: per model (decisions, valid), and each invalid decision (model, line, rule, field)
EXPECTED = {
    # lmgame-org/GamingAgent 2048: a move is legal when it changes the board (info.is_legal);
    # gpt4o's steps 43-45 and o3's step 66 were not
    "gamingagent2048": (
        {"gpt4o": (6, 3), "o3": (5, 4)},
        [
            ("gpt4o", "line 3", "const", "info.is_legal"),
            ("gpt4o", "line 4", "const", "info.is_legal"),
            ("gpt4o", "line 5", "const", "info.is_legal"),
            ("o3", "line 3", "const", "info.is_legal"),
        ],
    ),
    # microsoft/tale-suite: an action is one short phrase; `> east` (gpt-4o, step 30) and
    # `> go north` (gpt-4o-mini, step 10) echo the transcript's marker
    "tales": (
        {"gpt-4o": (5, 4), "gpt-4o-mini": (3, 2)},
        [("gpt-4o", "line 4", "pattern", "Action"), ("gpt-4o-mini", "line 2", "pattern", "Action")],
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_real_foreign_format_declared_in_one_file_gives_its_decisions_and_validity(name, tmp_path):
    folder = FOREIGN / name
    spec = folder / f"{name}.toml"
    assert len(spec.read_text().splitlines()) <= 30
    db = tmp_path / "w.duckdb"
    assert main(["ingest", str(folder), "--db", str(db), "--spec", str(spec), "--quiet"]) == 0
    counts, invalid = EXPECTED[name]
    with duckdb.connect(str(db), read_only=True) as con:
        found = con.execute(
            "SELECT model, count(*), count(*) FILTER (WHERE valid) FROM decisions WHERE format = ? GROUP BY model",
            [name],
        ).fetchall()
        assert {model: (n, valid) for model, n, valid in found} == counts
        findings = con.execute("""
            SELECT d.model, v.locator, v.rule, v.field FROM violations v
            JOIN decisions d ON d.source_id = v.source_id AND d.locator = v.locator ORDER BY ALL""").fetchall()
        assert findings == sorted(invalid)
        # each model's run is a game of its own
        games = con.execute("SELECT model, count(DISTINCT game_id) FROM decisions GROUP BY model").fetchall()
        assert dict(games) == {model: 1 for model in counts}
        assert con.execute("SELECT count(DISTINCT game_id) FROM decisions").fetchall() == [(len(counts),)]


def test_the_excerpts_are_lines_of_the_real_files_as_their_sources_say():
    """Each excerpt's SOURCE.md names the repository, commit, original path and license."""
    for name in EXPECTED:
        source = (FOREIGN / name / "SOURCE.md").read_text()
        for needed in ("Repository", "Commit", "License", "MIT"):
            assert needed.lower() in source.lower(), (name, needed)
