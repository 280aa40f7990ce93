"""Scorecards and model comparisons: intervals against their closed forms and published
worked examples, tests against hand sums, and the scorecard over hand-written logs."""

import json
import math

import pytest

from tests.conftest import write_lines
from workbench import catalog, comparison
from workbench.comparison import compare_models, holm, mcnemar_exact, newcombe, scorecard, two_proportion_p, wilson
from workbench.errors import WorkbenchError

import workbench

Z = 1.959963984540054  # the 97.5% normal quantile


def wilson_by_hand(k: int, n: int) -> tuple[float, float]:
    centre = (k + Z * Z / 2) / (n + Z * Z)
    half = Z * math.sqrt(k * (n - k) / n + Z * Z / 4) / (n + Z * Z)
    return centre - half, centre + half


@pytest.mark.parametrize(("k", "n"), [(0, 10), (10, 10), (1, 1), (0, 1), (7, 15), (192, 196)])
def test_wilson_matches_its_closed_form_at_the_edges(k, n):
    assert wilson(k, n) == pytest.approx(wilson_by_hand(k, n), abs=1e-9)


def test_wilson_at_zero_and_all_valid():
    assert wilson(0, 10)[0] == pytest.approx(0, abs=1e-12) and wilson(0, 10)[1] == pytest.approx(Z * Z / (10 + Z * Z))
    assert wilson(10, 10)[1] == pytest.approx(1) and wilson(10, 10)[0] == pytest.approx(10 / (10 + Z * Z))
    assert all(math.isnan(x) for x in wilson(0, 0))


def test_newcombe_reproduces_the_published_worked_example():
    # Newcombe (1998), Statistics in Medicine 17:873-890, Table II, example (a): 56/70 - 48/80,
    # hybrid score interval (method 10): 0.0524 to 0.3339.
    difference, low, high = newcombe(56, 70, 48, 80)
    assert difference == pytest.approx(0.2)
    assert (round(low, 4), round(high, 4)) == (0.0524, 0.3339)
    # swapping the groups mirrors the interval
    assert newcombe(48, 80, 56, 70) == pytest.approx((-0.2, -high, -low))


def test_the_two_proportion_test_and_mcnemar_against_hand_sums():
    pooled = 104 / 150
    z = 0.2 / math.sqrt(pooled * (1 - pooled) * (1 / 70 + 1 / 80))
    assert two_proportion_p(56, 70, 48, 80) == pytest.approx(math.erfc(z / math.sqrt(2)))
    # 1 pair valid for a only, 9 for b only: 2 * P(X <= 1), X ~ Binomial(10, 1/2)
    assert mcnemar_exact(1, 9) == pytest.approx(2 * (1 + 10) / 1024)
    assert mcnemar_exact(5, 5) == pytest.approx(1.0) and mcnemar_exact(0, 0) == 1.0


def test_holm_steps_down_by_hand():
    # sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> kept monotone: 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # 0.5*2 = 1.0 caps the larger one too: adjusted p-values never fall as raw ones rise
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm([0.001, 0.9]) == pytest.approx([0.002, 0.9])


# --- over logs --------------------------------------------------------------------------


def decision(agent: str, tick: int, model: str, valid: bool) -> str:
    tool = ("idle", {}) if valid else ("fly", {})  # `fly` is no tool of seed 002
    return json.dumps({"agent_id": agent, "tick": tick, "tool": tool[0], "params": tool[1], "model": model})


def arena_log(path, outcomes: dict[str, list[bool]]):
    """One episode: each model's agent decides once per tick, valid or not as given."""
    lines = [decision(f"agent_{model}", tick, model, valid)
             for model, results in outcomes.items() for tick, valid in enumerate(results)]
    return write_lines(path, lines)


def bot_trace(path, model: str, attempts: list[int]):
    lines = [{"kind": "session_start", "timestamp": "2026-02-27T10:00:00-05:00", "gameId": "g1", "model": model,
              "maxRetries": 3}]
    for turn, tries in enumerate(attempts, 1):
        trace = [{"attempt": i, "stage": "compile", "details": ["x"], "outcome": "retry", "llmRequestMs": 10,
                  "llmResponseBytes": 5} for i in range(1, tries)]
        lines.append({"timestamp": f"2026-02-27T11:{turn:02d}:00-05:00", "gameId": "g1", "turn": turn, "ok": True,
                      "errorClass": "success", "attempts": tries, "errors": [], "featureTags": ["fleet"],
                      "trace": trace})
    return write_lines(path, [json.dumps(line) for line in lines])


@pytest.fixture
def database(tmp_path):
    opened = []

    def build(*paths):
        db = tmp_path / f"w{len(opened)}.duckdb"
        assert not workbench.ingest(list(paths), db=db).failed
        con = catalog.connect(db, read_only=True)
        opened.append(con)
        return con

    yield build
    for con in opened:
        con.close()


def test_the_scorecard_counts_intervals_retries_and_rules(tmp_path, database):
    con = database(arena_log(tmp_path / "ep1.decisions.jsonl", {"m-a": [True, True, True, False], "m-b": [True]}),
                   bot_trace(tmp_path / "bot_trace_g1.jsonl", "m-c", [1, 3, 2]))
    card = {(row["format"], row["model"]): row for row in scorecard(con).iter_rows(named=True)}
    assert set(card) == {("arena", "m-a"), ("arena", "m-b"), ("ec4x", "m-c")}
    a = card["arena", "m-a"]
    assert (a["decisions"], a["valid"], a["validity"], a["model_from"]) == (4, 3, 0.75, "model")
    assert (a["ci_low"], a["ci_high"]) == pytest.approx(wilson_by_hand(3, 4))
    assert (a["top_rule"], a["top_rule_count"], a["retries"]) == ("unknown_tool", 1, None)
    b = card["arena", "m-b"]  # one decision: the interval spans most of [0, 1]
    assert (b["decisions"], b["valid"]) == (1, 1) and b["ci_low"] == pytest.approx(1 / (1 + Z * Z))
    c = card["ec4x", "m-c"]
    assert (c["decisions"], c["valid"], c["retries"], c["top_rule"], c["top_rule_count"]) == (3, 3, 3, None, 0)
    by_model = scorecard(con, by="model")
    assert by_model.columns[:2] == ["model", "model_from"] and by_model.height == 3
    with pytest.raises(WorkbenchError, match="cannot group a scorecard by tool"):
        scorecard(con, by=("format", "tool"))


def test_costs_come_from_the_prices_given(tmp_path, database):
    trace = bot_trace(tmp_path / "bot_trace_g1.jsonl", "m-c", [1, 1])
    con = database(trace)
    # EC4X traces record no tokens: no cost can be said, whatever the price
    assert scorecard(con, prices={"m-c": 1.0})["cost_per_decision"].to_list() == [None]
    prices = tmp_path / "prices.csv"
    prices.write_text("model,usd_per_mtok\nm-c,2.5\n")
    assert comparison.read_prices(prices) == {"m-c": 2.5}
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(WorkbenchError, match="cannot read prices"):
        comparison.read_prices(tmp_path / "bad.json")
    with pytest.raises(WorkbenchError, match="to a number"):
        comparison.read_prices({"m": "cheap"})


def test_a_paired_comparison_from_ten_shared_turns_and_unpaired_below(tmp_path, database):
    a = [True] * 10
    b = [True] * 3 + [False] * 7
    paired = compare_models(database(arena_log(tmp_path / "ep1.decisions.jsonl", {"m-a": a, "m-b": b})), "m-a", "m-b")
    [row] = paired.iter_rows(named=True)
    assert row["pairs"] == 10 and row["method"].startswith("paired: McNemar exact")
    assert row["difference"] == pytest.approx(0.7) and row["p_value"] == pytest.approx(2 / 2 ** 7)
    assert row["ci_low"] > 0 and "m-a is more often valid than m-b: +70.0 points" in row["verdict"]
    (tmp_path / "nine").mkdir()
    unpaired = compare_models(database(arena_log(tmp_path / "nine" / "ep1.decisions.jsonl",
                                                 {"m-a": a[:9], "m-b": b[:9]})), "m-a", "m-b")
    [row] = unpaired.iter_rows(named=True)
    assert row["pairs"] == 9 and row["method"].startswith("unpaired: Newcombe")
    assert (row["difference"], row["ci_low"], row["ci_high"]) == pytest.approx(newcombe(9, 9, 3, 9))
    assert row["p_value"] == pytest.approx(two_proportion_p(9, 9, 3, 9))


def test_small_samples_say_no_evidence_and_every_pair_is_holm_corrected(tmp_path, database):
    con = database(arena_log(tmp_path / "ep1.decisions.jsonl", {"m-a": [True, True], "m-b": [True, False],
                                                                "m-c": [False, False, False]}))
    every = compare_models(con)
    assert every.select("a", "b").rows() == [("m-a", "m-b"), ("m-a", "m-c"), ("m-b", "m-c")]
    assert every["p_holm"].to_list() == pytest.approx(holm(every["p_value"].to_list()))
    assert every["verdict"][0] == "no evidence of a difference at n=2 vs 2"
    with pytest.raises(WorkbenchError, match="no decisions by 'm-z'; known: m-a, m-b, m-c"):
        compare_models(con, "m-a", "m-z")
    with pytest.raises(WorkbenchError, match="name two models"):
        compare_models(con, "m-a")


def test_the_command_line_prints_the_scorecard_and_the_verdicts(tmp_path, capsys):
    from workbench.cli import main

    db = tmp_path / "w.duckdb"
    assert not workbench.ingest([arena_log(tmp_path / "ep1.decisions.jsonl",
                                           {"m-a": [True] * 10, "m-b": [True] * 3 + [False] * 7})], db=db).failed
    assert main(["scorecard", "--db", str(db)]) == 0
    low, high = wilson_by_hand(3, 10)
    assert f"arena m-b: 30.0% valid (95% CI {low:.1%}-{high:.1%}, n=10), most broken: unknown_tool" in \
        capsys.readouterr().out
    assert main(["scorecard", "--db", str(db), "--csv", "--by", "model"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("model,model_from,decisions,valid,validity")
    assert main(["compare", "--db", str(db), "m-a", "m-b"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("arena: m-a vs m-b: m-a is more often valid than m-b: +70.0 points") and "McNemar" in out
    assert main(["compare", "--db", str(db), "m-a"]) == 2
    assert "compare takes two models or none" in capsys.readouterr().err
