"""The cross-format decision-quality figure."""

import json
import random

import pytest

import workbench
from tests.figures import assert_rendered, check_decisions, panel, spec_of
from workbench.cli import main
from workbench.errors import WorkbenchError
from workbench.gm import synth as gm
from workbench.plots import decision_quality, save

HOSTILE = "</script><script>alert(1)</script>"


def add_decisions(con, fmt: str, rows: list[tuple]) -> None:
    """Rows of (agent_id, model, valid, latency_ms, tokens) for a format, with a source
    and one violation, as the engine leaves another format's records (an outcome for each)."""
    source_id = con.execute(
        "INSERT INTO sources (path, sha256, format) VALUES (?, ?, ?) RETURNING source_id",
        [f"{fmt}.log", f"sha-{fmt}-{len(rows)}", fmt],
    ).fetchone()[0]
    con.executemany(
        "INSERT INTO decisions (source_id, format, game_id, turn, agent_id, model, action, valid, outcome, "
        "latency_ms, tokens, locator) VALUES (?, ?, 'g1', ?, ?, ?, 'act', ?, ?, ?, ?, ?)",
        [
            [
                source_id,
                fmt,
                turn,
                agent,
                model,
                valid,
                "valid" if valid else "invalid",
                latency,
                tokens,
                f"line {turn}",
            ]
            for turn, (agent, model, valid, latency, tokens) in enumerate(rows, 1)
        ],
    )
    con.execute(
        "INSERT INTO violations (source_id, locator, severity, rule, field, message, line) VALUES (?, 'line 1', 'error', 'attack_plan_required', 'payload', 'x', 1)",
        [source_id],
    )


@pytest.fixture
def db(tmp_path):
    """A database with a synthetic gm corpus and hand-made Damage decisions."""
    out = tmp_path / "gm"
    gm.generate(out, 1, random.Random(5))
    path = tmp_path / "x.duckdb"
    workbench.ingest([out], db=path)
    con = workbench.connect(path)
    add_decisions(
        con,
        "damage",
        [
            ("p1", "gpt-4o", True, 1200.0, 300),
            ("p1", "gpt-4o", True, 1500.0, 320),
            ("p2", HOSTILE, False, 900.0, 250),
            ("p3", None, True, None, None),
        ],
    )
    con.close()
    return path


def check_damage_rows(spec: dict) -> None:
    """The four hand-made Damage decisions, as the figure must show them."""
    shown_hostile = HOSTILE.replace("<", "\u2039").replace(">", "\u203a")
    [bars, _] = panel(spec, "Validity per format")
    [damage] = [r for r in bars.rows if r["format"] == "damage"]
    assert (damage["decisions"], damage["valid"], damage["valid_rate"], damage["label"]) == (4, 3, 0.75, "3 of 4")
    [bars, _, _] = panel(spec, "Validity per model or agent (with 95% intervals)")
    assert sorted(
        (r["model"], r["decisions"], r["valid"], r["validity"]) for r in bars.rows if r["format"] == "damage"
    ) == sorted([("gpt-4o", 2, 2, 1.0), (shown_hostile, 1, 0, 0.0), ("p3", 1, 1, 1.0)])  # no model: the agent
    [rules] = panel(spec, "Most frequent violation rules")
    assert [(r["rule"], r["severity"], r["violations"]) for r in rules.rows if r["format"] == "damage"] == [
        ("attack_plan_required", "error", 1)
    ]
    for title, values in (
        ("Latency (ms)", {"gpt-4o": (2, 1200, 1275, 1350, 1425, 1500), shown_hostile: (1, 900, 900, 900, 900, 900)}),
        ("Tokens per decision", {"gpt-4o": (2, 300, 305, 310, 315, 320), shown_hostile: (1, 250, 250, 250, 250, 250)}),
    ):
        whiskers, boxes, medians = panel(spec, title)
        assert (whiskers.mark, boxes.mark, medians.mark) == ("rule", "bar", "tick")
        assert (
            whiskers.fields["x"],
            whiskers.fields["x2"],
            boxes.fields["x"],
            boxes.fields["x2"],
            medians.fields["x"],
            boxes.fields["y"],
        ) == ("lo", "hi", "q1", "q3", "mid", "row")
        # p3 recorded neither latency nor tokens, and no gm response in this corpus records them
        assert {r["who"]: (r["n"], r["lo"], r["q1"], r["mid"], r["q3"], r["hi"]) for r in whiskers.rows} == values


def test_the_figure_says_what_the_decisions_hold(db):
    con = workbench.connect(db, read_only=True)
    spec = decision_quality(con).to_dict()
    check_decisions(spec, con)
    check_damage_rows(spec)
    assert {r["format"] for r in panel(spec, "Validity per format")[0].rows} == {"damage", "gm"}


@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf", ".html", ".json"])
def test_the_figure_builds_and_saves(db, tmp_path, suffix):
    con = workbench.connect(db, read_only=True)
    chart = decision_quality(con)
    path = save(chart, tmp_path / f"decisions{suffix}")
    if suffix in (".html", ".json"):
        spec = spec_of(path)
        assert spec["datasets"] == chart.to_dict()["datasets"]
        check_decisions(spec, con)
        check_damage_rows(spec)
    else:
        assert_rendered(path)
    if suffix == ".svg":
        text = path.read_text()
        assert "Decision quality across games" in text and "gpt-4o" in text and "3 of 4" in text


def test_the_spec_holds_aggregates_only(db):
    con = workbench.connect(db)
    con.execute(
        "INSERT INTO decisions (source_id, format, turn, agent_id, model, valid, latency_ms, tokens) "
        "SELECT 999, 'arena', i, 'agent-' || (i % 7), NULL, i % 5 <> 0, 100 + i % 900, 50 + i % 400 "
        "FROM range(200000) t(i)"
    )
    spec = json.dumps(decision_quality(con).to_dict())
    assert len(spec) < 60_000
    assert "agent-3" in spec  # agents stand in for models where a log names none


def test_model_names_from_logs_cannot_inject_markup(db, tmp_path):
    con = workbench.connect(db, read_only=True)
    html = save(decision_quality(con), tmp_path / "decisions.html").read_text()
    assert "alert(1)" in html  # the name is shown...
    assert "<script>alert" not in html and "</script><script>" not in html  # ...but cannot open a script


def test_narratives_stay_out_of_the_figure(tmp_path):
    path = tmp_path / "x.gm.jsonl"
    path.write_text(json.dumps({"id": "r-1", "model": "m", "text": "<script>alert('x')</script> Dusk."}) + "\n")
    workbench.ingest([path], db=tmp_path / "x.duckdb")
    con = workbench.connect(tmp_path / "x.duckdb", read_only=True)
    html = save(decision_quality(con), tmp_path / "decisions.html").read_text()
    assert "alert('x')" not in html


def test_empty_decisions_raise_a_one_line_error(tmp_path):
    con = workbench.connect(tmp_path / "empty.duckdb")
    with pytest.raises(WorkbenchError, match="no decisions") as caught:
        decision_quality(con)
    assert "\n" not in str(caught.value)


def test_formats_narrow_the_figure(db):
    con = workbench.connect(db, read_only=True)
    spec = json.dumps(decision_quality(con, formats=["damage"]).to_dict())
    assert "gpt-4o" in spec and "claude-3-5-haiku" not in spec
    with pytest.raises(WorkbenchError, match="arena"):
        decision_quality(con, formats=["arena"])


def test_without_latency_the_panel_says_so(tmp_path):
    path = tmp_path / "x.gm.jsonl"
    path.write_text(json.dumps({"id": "r-1", "model": "m", "text": "Dusk."}) + "\n")
    workbench.ingest([path], db=tmp_path / "x.duckdb")
    con = workbench.connect(tmp_path / "x.duckdb", read_only=True)
    assert "No latency recorded" in json.dumps(decision_quality(con).to_dict())


def test_cli_plot_decisions(db, tmp_path, capsys):
    out = tmp_path / "figure.svg"
    assert main(["plot", "decisions", "--db", str(db), "-o", str(out)]) == 0
    assert_rendered(out)
    assert "Decision quality across games" in out.read_text()
    spec_out = tmp_path / "figure.json"
    assert main(["plot", "decisions", "--db", str(db), "-o", str(spec_out)]) == 0
    con = workbench.connect(db, read_only=True)
    check_decisions(spec_of(spec_out), con)
    check_damage_rows(spec_of(spec_out))
