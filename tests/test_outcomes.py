"""One decision, one outcome: `valid`, `invalid` (an answer that breaks a rule, named on
its line) or `failed` (no answer came back: the provider's fault). A failed call is
shown beside validity and left out of it unless `failures="invalid"` asks otherwise.
Expected values come from the logs' own lines, counted here, and from Wilson's formula
written out by hand."""

import json
import math

import duckdb
import polars as pl
import pytest

import workbench
from tests.conftest import SHARED, write_lines
from tests.ec4x.test_real_ec4x import SESSION, failed, turn_line
from workbench import analysis
from workbench.cli import main
from workbench.errors import WorkbenchError

REAL_DAMAGE = SHARED / "corpus" / "damage"
needs_corpus = pytest.mark.skipif(not REAL_DAMAGE.is_dir(), reason=f"the real Damage corpus is absent ({REAL_DAMAGE})")


def by_hand_wilson(hits: float, n: float, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson's score interval (Wilson 1927), written out."""
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


@pytest.fixture(scope="module")
def real_db(tmp_path_factory):
    if not REAL_DAMAGE.is_dir():
        pytest.skip(f"the real Damage corpus is absent ({REAL_DAMAGE})")
    db = tmp_path_factory.mktemp("real") / "w.duckdb"
    assert not workbench.ingest([REAL_DAMAGE], db=db).failed
    return db


def real_failures() -> list[tuple[str, str]]:
    """(game_id, detail) of every failed betting call the real simulator wrote."""
    found = []
    for log in sorted(REAL_DAMAGE.rglob("*.events.jsonl")):
        for text in log.read_text(encoding="utf-8").splitlines():
            if '"action_rejected"' in text:
                line = json.loads(text)
                found.append((line["game_id"], line["payload"]["detail"]))
    return found


@needs_corpus
def test_the_real_failed_calls_are_counted_apart_and_charged_only_when_asked(real_db, capsys):
    assert len(real_failures()) == 13
    assert main(["scorecard", "--db", str(real_db)]) == 0
    out = capsys.readouterr().out
    assert out.count("100.0% valid") == 2 and "8 failed calls left out" in out and "5 failed calls left out" in out
    assert main(["scorecard", "--db", str(real_db), "--failures", "invalid"]) == 0
    out = capsys.readouterr().out
    assert "93.8% valid" in out and "94.7% valid" in out  # 121/129 and 89/94
    assert main(["compare", "--db", str(real_db)]) == 0
    assert "failed calls left out" in capsys.readouterr().out
    assert main(["compare", "--db", str(real_db), "--failures", "invalid"]) == 0
    assert "failed calls counted as invalid" in capsys.readouterr().out
    assert main(["plan", "--difference", "0.1", "--db", str(real_db), "--failures", "invalid"]) == 0
    assert "failed calls counted as invalid" in capsys.readouterr().out


@needs_corpus
def test_records_failed_lists_each_failed_call_with_the_providers_words(real_db, capsys):
    assert main(["records", "--db", str(real_db), "--failed", "--json", "--limit", "0"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert sorted((row["game_id"], row["failure"]) for row in found) == sorted(real_failures())
    assert {(row["outcome"], row["valid"]) for row in found} == {("failed", None)}
    assert main(["records", "--db", str(real_db), "--invalid"]) == 0  # no answer was invalid
    assert "no record matches" in capsys.readouterr().err


@needs_corpus
def test_the_report_names_the_failed_calls(real_db, tmp_path):
    out = tmp_path / "report.md"
    assert main(["report", "--db", str(real_db), "-o", str(out)]) == 0
    section = out.read_text().split("## Failed calls", 1)[1].split("\n## ", 1)[0]
    per_game = {}
    for game, _ in real_failures():
        per_game[game] = per_game.get(game, 0) + 1
    assert (
        "13 calls failed at the provider" in section
        and 'provider HTTP error 500: {"error": "mock overload"} ×13' in section.replace("\\", "")
    )
    for game, count in per_game.items():
        assert f"{count} in game {game}" in section.replace("\\_", "_")
    assert sorted(per_game.values()) == [1, 2, 10]


@needs_corpus
def test_the_failure_rate_has_wilsons_interval_where_decisions_are_independent(real_db):
    con = duckdb.connect(str(real_db), read_only=True)
    try:
        card = analysis.scorecard(con, by=("model",), cluster=None)
    finally:
        con.close()
    for row in card.iter_rows(named=True):
        calls = row["decisions"] + row["failed"]
        low, high = by_hand_wilson(row["failed"], calls)
        assert row["failure_rate"] == pytest.approx(row["failed"] / calls)
        assert (row["failure_low"], row["failure_high"]) == (pytest.approx(low), pytest.approx(high))


def ec4x_turns() -> list[dict]:
    """A bot's trace of four turns, one of each ending: orders used, orders refused by
    the compiler (the model's answer broke them), an LLM request that failed, and orders
    that could not be submitted."""
    return [
        SESSION,
        turn_line(1, True, 1, "success", [], tags=["fleet"]),
        turn_line(2, False, 3, "validation", [failed(n, "compile") for n in (1, 2, 3)], errors=["bad fleet"]),
        turn_line(
            3, False, 3, "llm_request", [failed(n, "llm_request") for n in (1, 2, 3)], errors=["HTTP 429 rate limited"]
        ),
        turn_line(4, False, 3, "transport", [failed(n, "submit") for n in (1, 2, 3)], errors=["relay closed"]),
    ]


def test_an_ec4x_turn_is_failed_when_no_orders_came_back_to_judge(tmp_path):
    log = write_lines(tmp_path / "bot_trace_game-123.jsonl", [json.dumps(line) for line in ec4x_turns()])
    db = tmp_path / "w.duckdb"
    report = workbench.ingest([log], db=db)
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute("SELECT turn, outcome, valid, failure FROM decisions ORDER BY turn").fetchall()
        assert rows == [
            (1, "valid", True, None),
            (2, "invalid", False, None),
            (3, "failed", None, "llm_request: HTTP 429 rate limited"),
            (4, "failed", None, "transport: relay closed"),
        ]
        # the invalid turn names the error rule it is invalid by, on its own line
        errors = [(v.locator, v.rule) for v in report.files[0].violations if v.severity == "error"]
        assert errors == [("line 3", "orders_refused")]
        card = analysis.scorecard(con).row(0, named=True)
        assert (card["decisions"], card["valid"], card["failed"], card["top_rule"]) == (2, 1, 2, "orders_refused")
        charged = analysis.scorecard(con, failures="invalid").row(0, named=True)
        assert (charged["decisions"], charged["valid"], charged["failed"]) == (4, 1, 2)
    finally:
        con.close()


def test_a_model_whose_every_call_failed_keeps_its_row(tmp_path):
    lines = [
        SESSION,
        *(
            turn_line(n, False, 3, "llm_request", [failed(a, "llm_request") for a in (1, 2, 3)], errors=["timeout"])
            for n in (1, 2)
        ),
    ]
    log = write_lines(tmp_path / "bot_trace_game-9.jsonl", [json.dumps(line) for line in lines])
    workbench.ingest([log], db=tmp_path / "w.duckdb")
    con = duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True)
    try:
        row = analysis.scorecard(con).row(0, named=True)
        assert (row["model"], row["decisions"], row["validity"], row["failed"], row["failure_rate"]) == (
            "gpt-4o-mini",
            0,
            None,
            2,
            1.0,
        )
    finally:
        con.close()
    assert main(["scorecard", "--db", str(tmp_path / "w.duckdb")]) == 0


def test_failures_takes_exclude_or_invalid_only(tmp_path, capsys):
    log = write_lines(tmp_path / "bot_trace_game-123.jsonl", [json.dumps(line) for line in ec4x_turns()])
    workbench.ingest([log], db=tmp_path / "w.duckdb")
    con = duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True)
    try:
        for call in (
            lambda: analysis.scorecard(con, failures="ignore"),
            lambda: analysis.compare_models(con, failures="all"),
            lambda: analysis.sample_size(difference=0.1, con=con, failures="yes"),
        ):
            with pytest.raises(WorkbenchError, match="failures must be one of: exclude, invalid"):
                call()
        with pytest.raises(WorkbenchError, match="no outcome 'lost'"):
            analysis.records(con, outcome="lost")
    finally:
        con.close()
    with pytest.raises(SystemExit) as stopped:  # argparse's own one line, exit 2
        main(["scorecard", "--db", str(tmp_path / "w.duckdb"), "--failures", "maybe"])
    assert stopped.value.code == 2 and "invalid choice: 'maybe'" in capsys.readouterr().err


def test_every_invalid_decision_names_its_error_rule_in_every_format(tmp_path):
    # The synthetic corpus of every format, with its planted faults: an invalid decision
    # is never one whose only finding is info (or none).
    from workbench.synth import synthesize

    synthesize(tmp_path / "sample", scale=1, seed=11)
    workbench.ingest([tmp_path / "sample"], db=tmp_path / "w.duckdb")
    con = duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True)
    try:
        bare = con.execute("""
            SELECT d.format, d.locator FROM decisions d JOIN sources s USING (source_id)
            WHERE d.outcome = 'invalid' AND NOT EXISTS (
                SELECT 1 FROM violation_lines v WHERE v.source_id = d.source_id AND v.severity = 'error'
                  AND (v.locator = d.locator OR 'line ' || v.line = d.locator))""").fetchall()
        outcomes = dict(con.execute("SELECT outcome, count(*) FROM decisions GROUP BY ALL").fetchall())
        assert (
            con.execute(
                "SELECT count(*) FROM decisions WHERE outcome IS NULL OR (outcome = 'failed') <> (valid IS NULL)"
            ).fetchone()[0]
            == 0
        )
    finally:
        con.close()
    assert bare == [] and outcomes["invalid"] > 0 and outcomes["valid"] > 0
    records = analysis.records(duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True), valid=False, limit=None)
    decided = records.filter(pl.col("outcome") == "invalid")
    assert decided.height and all("error" in severities for severities in decided["severities"].to_list())


@needs_corpus
def test_sample_size_takes_every_documented_form(real_db):
    # the interface's forms: numbers (positionally or by keyword), or a connection to estimate from
    con = duckdb.connect(str(real_db), read_only=True)
    try:
        by_keyword = analysis.sample_size(difference=0.1, validity=0.85, decisions_per_game=40, icc=0.2)
        assert analysis.sample_size(0.1, 0.85, 40, 0.2) == by_keyword
        estimated = analysis.sample_size(con, difference=0.1)
        assert estimated == analysis.sample_size(difference=0.1, con=con) >= 2
        charged = analysis.sample_size(con, difference=0.1, failures="invalid")
        assert isinstance(charged, int) and charged >= 2
        with pytest.raises(WorkbenchError, match="given difference twice"):
            analysis.sample_size(0.1, difference=0.2, validity=0.5, decisions_per_game=4, icc=0)
        with pytest.raises(WorkbenchError, match="one connection"):
            analysis.sample_size(con, difference=0.1, con=con)
    finally:
        con.close()
