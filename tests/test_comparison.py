"""Scorecards and model comparisons over logs ingested for real: counts, intervals
clustered by game, pairs matched by game and turn, Holm over every comparison, verdicts
whose sign and interval agree, aliases and plans; expected values by hand (the costs a
scorecard shows: tests/test_prices.py)."""

import json
import math
import re
from itertools import count

import numpy as np
import polars as pl
import pytest
from scipy.stats import f as f_dist
from scipy.stats import t as student_t

import workbench
from tests.conftest import write_lines
from tests.damage.events import PAYLOADS, event
from tests.intervals import Z, clustered_by_hand, wilson_by_hand
from tests.test_stats import holds_by_hand, newcombe_p_by_hand, newcombe_paired_by_hand, paired_p_by_hand
from workbench import connection, stats
from workbench.comparison import compare_models, plan, sample_size, scorecard
from workbench.errors import WorkbenchError
from workbench.stats import Paired


def decision(agent: str, tick: int, model: str, valid: bool) -> str:
    tool = ("idle", {}) if valid else ("fly", {})  # `fly` is no tool of seed 002
    return json.dumps({"agent_id": agent, "tick": tick, "tool": tool[0], "params": tool[1], "model": model})


def arena_log(path, outcomes: dict[str, list[bool]]):
    """One episode (the file's name): each model's agent decides once per tick, valid or not as given."""
    lines = [
        decision(f"agent_{model}", tick, model, valid)
        for model, results in outcomes.items()
        for tick, valid in enumerate(results)
    ]
    return write_lines(path, lines)


def bot_trace(path, model: str, attempts: list[int]):
    lines = [
        {
            "kind": "session_start",
            "timestamp": "2026-02-27T10:00:00-05:00",
            "gameId": "g1",
            "model": model,
            "maxRetries": 3,
        }
    ]
    for turn, tries in enumerate(attempts, 1):
        trace = [
            {
                "attempt": i,
                "stage": "compile",
                "details": ["x"],
                "outcome": "retry",
                "llmRequestMs": 10,
                "llmResponseBytes": 5,
            }
            for i in range(1, tries)
        ]
        lines.append(
            {
                "timestamp": f"2026-02-27T11:{turn:02d}:00-05:00",
                "gameId": "g1",
                "turn": turn,
                "ok": True,
                "errorClass": "success",
                "attempts": tries,
                "errors": [],
                "featureTags": ["fleet"],
                "trace": trace,
            }
        )
    return write_lines(path, [json.dumps(line) for line in lines])


def outcomes(valid: int, n: int) -> list[bool]:
    return [True] * valid + [False] * (n - valid)


def searle_by_hand(msb: float, msw: float, n0: float, d1: int, d2: int, level: float) -> float:
    """Searle's one-sided upper bound of the ANOVA ICC at `level` (Searle 1971, 9.8), with
    scipy's F quantile: r = MSB / MSW / F(1 - level; d1, d2), (r - 1) / (r + n0 - 1),
    never below the estimate (MSB - MSW) / (MSB + (n0 - 1) MSW), nor outside [0, 1]."""
    icc = max((msb - msw) / (msb + (n0 - 1) * msw), 0.0)
    ratio = msb / msw / f_dist.ppf(1 - level, d1, d2)
    return min(max((ratio - 1) / (ratio + n0 - 1), icc), 1.0)


def paired_effect_by_hand(msb: float, msw: float, n0: float, d1: int, d2: int, size: float) -> tuple[float, float]:
    """The design effect 1 + (m - 1) ICC_70 of pairs in games of mean size m, and half
    Satterthwaite's degrees of freedom d1 (D / (D - 1))^2 at D = 1 + (m - 1) ICC_90."""
    effect = 1 + (size - 1) * searle_by_hand(msb, msw, n0, d1, d2, 0.7)
    high = 1 + (size - 1) * searle_by_hand(msb, msw, n0, d1, d2, 0.9)
    return effect, 0.5 * d1 * (high / (high - 1)) ** 2


def games_needed_by_hand(difference: float, validity: float, per_game: float, icc: float) -> int:
    """The fewest games per model, at least 2, for which the interval the comparison will
    draw at the expected counts keeps its margin to 0 at 80% power (`holds_by_hand` in
    tests/test_stats.py: Wilson and Newcombe written out, scipy's t and F quantiles),
    counted up one game at a time."""
    return next(games for games in count(2) if holds_by_hand(games, difference, validity, per_game, icc))


def holm_by_hand(p: list[float]) -> list[float]:
    """Holm's step-down: the i-th smallest of k p-values times k - i + 1 (i from 1), never
    below the one before it in that order, at most 1; given back in the order given."""
    order = sorted(range(len(p)), key=p.__getitem__)
    adjusted, running = [0.0] * len(p), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        adjusted[i] = running
    return adjusted


@pytest.fixture
def database(tmp_path):
    opened = []

    def build(*paths, **ingest):
        db = tmp_path / f"w{len(opened)}.duckdb"
        assert not workbench.ingest(list(paths), db=db, **ingest).failed
        con = connection.connect(db, read_only=True)
        opened.append(con)
        return con

    yield build
    for con in opened:
        con.close()


# --- the scorecard ---------------------------------------------------------------------------


def test_the_scorecard_counts_intervals_games_retries_and_rules(tmp_path, database):
    con = database(
        arena_log(tmp_path / "ep1.decisions.jsonl", {"m-a": [True, True, True, False], "m-b": [True]}),
        bot_trace(tmp_path / "bot_trace_g1.jsonl", "m-c", [1, 3, 2]),
    )
    card = {(row["format"], row["model"]): row for row in scorecard(con).iter_rows(named=True)}
    assert set(card) == {("arena", "m-a"), ("arena", "m-b"), ("ec4x", "m-c")}
    a = card["arena", "m-a"]
    assert (a["decisions"], a["valid"], a["validity"], a["model_from"], a["games"]) == (4, 3, 0.75, "model", 1)
    # one game each, nothing in the format to tell how games differ: the game is one
    # observation (ICC 1, design effect 4), Wilson at 0.75 of 1
    assert (a["ci_low"], a["ci_high"]) == pytest.approx(wilson_by_hand(0.75, 1))
    assert (a["design_effect"], a["ci_method"]) == (4.0, "one game: the game is one observation")
    assert (a["top_rule"], a["top_rule_count"], a["retries"]) == ("unknown_tool", 1, None)
    b = card["arena", "m-b"]  # one decision: the interval spans most of [0, 1]
    assert (b["decisions"], b["valid"]) == (1, 1) and b["ci_low"] == pytest.approx(1 / (1 + 1.959963984540054**2))
    c = card["ec4x", "m-c"]
    assert (c["decisions"], c["valid"], c["retries"], c["top_rule"], c["top_rule_count"]) == (3, 3, 3, None, 0)
    by_model = scorecard(con, by="model")
    assert by_model.columns[:2] == ["model", "model_from"] and by_model.height == 3
    with pytest.raises(WorkbenchError, match="cannot group a scorecard by tool"):
        scorecard(con, by=("format", "tool"))
    with pytest.raises(WorkbenchError, match="cannot cluster by 'tick'"):
        scorecard(con, cluster="tick")


def test_the_scorecard_clusters_by_episode_as_computed_by_hand(tmp_path, database):
    # 16 episodes of one model: 8 all valid (30 of 30), 8 with 21 of 30.
    paths = [
        arena_log(tmp_path / f"ep{i:02d}.decisions.jsonl", {"m": outcomes(30 if i < 8 else 21, 30)}) for i in range(16)
    ]
    con = database(*paths)
    [row] = scorecard(con).iter_rows(named=True)
    # the design effect and the interval written out (tests/intervals.py): the ANOVA ICC of
    # these games, Searle's bounds, Wilson at n / design effect with Student's t
    effect, (low, high) = clustered_by_hand([30] * 8 + [21] * 8, [30] * 16)
    assert (row["decisions"], row["valid"], row["games"], row["ci_method"]) == (480, 408, 16, "wilson-clustered")
    assert row["design_effect"] == pytest.approx(effect, rel=1e-9)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high), rel=1e-9)
    # the same decisions counted as independent ones: Wilson, over twice as narrow
    [plain] = scorecard(con, cluster=None).iter_rows(named=True)
    assert (plain["ci_low"], plain["ci_high"]) == pytest.approx(wilson_by_hand(408, 480))
    assert (plain["games"], plain["ci_method"]) == (1, "wilson")
    assert (high - low) > 2.2 * (plain["ci_high"] - plain["ci_low"])
    # by file: here one file per episode, so the same as by game
    [by_file] = scorecard(con, cluster="file").iter_rows(named=True)
    assert (by_file["ci_low"], by_file["ci_high"]) == pytest.approx((low, high))
    # grouped by game, each row is one game, and no group has a second: one observation each
    per_game = scorecard(con, by=("model", "game_id"))
    assert per_game.height == 16 and set(per_game["ci_method"]) == {"one game: the game is one observation"}


def test_the_top_rule_is_the_one_broken_most(tmp_path, database):
    # m-a breaks unknown_tool twice; m-b breaks unknown_tool once and, on two lines, the
    # seed's rule that move_to needs a target (move_target_required).
    lines = [
        decision("a1", 0, "m-a", False),
        decision("a1", 1, "m-a", False),
        decision("a1", 2, "m-a", True),
        decision("b1", 0, "m-b", False),
        json.dumps({"agent_id": "b1", "tick": 1, "tool": "move_to", "params": {}, "model": "m-b"}),
        json.dumps({"agent_id": "b1", "tick": 2, "tool": "move_to", "params": {}, "model": "m-b"}),
    ]
    con = database(write_lines(tmp_path / "ep1.decisions.jsonl", lines))
    rules = {row["model"]: (row["top_rule"], row["top_rule_count"]) for row in scorecard(con).iter_rows(named=True)}
    assert rules == {"m-a": ("unknown_tool", 2), "m-b": ("move_target_required", 2)}


# --- comparisons -------------------------------------------------------------------------------


def test_small_samples_claim_nothing_and_the_p_value_is_the_intervals(tmp_path, database):
    # 2/2 valid against 0/2, each in a game of its own: the score test said p = 0.0455.
    con = database(
        arena_log(tmp_path / "a.decisions.jsonl", {"m-a": [True, True]}),
        arena_log(tmp_path / "b.decisions.jsonl", {"m-b": [False, False]}),
    )
    [row] = compare_models(con, "m-a", "m-b").iter_rows(named=True)
    assert row["p_value"] > 0.05 and row["method"].startswith("unpaired: Newcombe interval and its test")
    assert row["ci_low"] < 0 < row["ci_high"]
    assert not row["significant"] and row["verdict"].startswith("no evidence of a difference")


def test_a_negative_difference_names_the_better_model_with_a_positive_lead(tmp_path, database):
    # Two episodes each, about alike.
    con = database(
        *(
            arena_log(tmp_path / f"{m}{g}.decisions.jsonl", {m: outcomes(k, 20)})
            for m, per_game in (("m-a", (5, 6)), ("m-b", (18, 17)))
            for g, k in enumerate(per_game)
        )
    )
    [row] = compare_models(con, "m-a", "m-b").iter_rows(named=True)
    assert (row["games_a"], row["games_b"], row["games_compared"]) == (2, 2, 2)
    # a - b: all three negative, the interval around the difference
    assert row["difference"] == pytest.approx(-0.6)
    assert row["ci_low"] < row["difference"] < row["ci_high"] < 0
    assert row["significant"]
    lead = f"{-row['difference'] * 100:+.1f}"
    assert row["verdict"].startswith(
        f"m-b is more often valid than m-a: {lead} points "
        f"(95% CI {-row['ci_high'] * 100:+.1f} to {-row['ci_low'] * 100:+.1f}"
    )
    assert lead == "+60.0" and "-" not in row["verdict"].split("points")[0].split(":")[1]
    # the same comparison the other way round is its mirror
    [mirror] = compare_models(con, "m-b", "m-a").iter_rows(named=True)
    assert (mirror["difference"], mirror["ci_low"], mirror["ci_high"]) == pytest.approx(
        (-row["difference"], -row["ci_high"], -row["ci_low"])
    )
    assert mirror["verdict"] == row["verdict"]


def test_pairs_are_matched_by_episode_and_tick(tmp_path, database):
    # Two episodes with the same ticks 0-9. In ep1 only m-a errs (ticks 0-4), in ep2 only m-b
    # (ticks 5-9). Matched by tick alone, every tick would pair an error with a valid decision
    # from the other episode; matched by episode and tick, each error is against a valid one.
    ep1 = {"m-a": [tick >= 5 for tick in range(10)], "m-b": [True] * 10}
    ep2 = {"m-a": [True] * 10, "m-b": [tick < 5 for tick in range(10)]}
    con = database(arena_log(tmp_path / "ep1.decisions.jsonl", ep1), arena_log(tmp_path / "ep2.decisions.jsonl", ep2))
    [row] = compare_models(con, "m-a", "m-b").iter_rows(named=True)
    assert (row["shared_turns"], row["shared_games"]) == (20, 2)
    assert (row["validity_a_shared"], row["validity_b_shared"]) == (0.75, 0.75)
    assert row["difference"] == 0 and row["method"].startswith("paired on 20 shared turns in 2 games")
    # per game: ep1 has 5 turns valid for b only, ep2 5 for a only; the format's games:
    # m-a 5 and 10 of 10, m-b 10 and 5 of 10. A difference of 0 lies inside the interval at
    # every level: the p-value, the level at which the interval reaches 0, is 1.
    assert row["p_value"] == 1.0
    # The interval by hand. The ICC, one-way ANOVA with games nested in models: each model's
    # share is 0.75 and each game 0.25 from it, so MSB = 4 * 10 * 0.25^2 / (4 games - 2 models)
    # = 1.25; only the games at 5 of 10 vary within, MSW = 2 * 10 * 0.5 * 0.5 / (40 - 4) = 5 / 36;
    # n0 = (40 - 4 * 10^2 / 20) / 2 = 10. The pairs' games hold 10 turns each (m = 10).
    effect, dof = paired_effect_by_hand(
        4 * 10 * 0.25**2 / 2, 2 * 10 * 0.5 * 0.5 / 36, (40 - 4 * 10**2 / 20) / 2, 2, 36, size=10
    )
    # Newcombe's paired interval at the effective counts of both, only a, only b, neither
    expected = newcombe_paired_by_hand(10 / effect, 5 / effect, 5 / effect, 0, student_t.ppf(0.975, dof))
    assert expected[0] == 0 and expected[1] == pytest.approx(-expected[2])
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(expected[1:], rel=1e-9)
    assert "on 20 shared turns in 2 games" in row["verdict"]


def test_a_paired_comparison_from_ten_shared_turns_and_unpaired_below(tmp_path, database):
    a, b = [True] * 10, [True] * 3 + [False] * 7
    paired = compare_models(database(arena_log(tmp_path / "ep1.decisions.jsonl", {"m-a": a, "m-b": b})), "m-a", "m-b")
    [row] = paired.iter_rows(named=True)
    assert row["shared_turns"] == 10 and row["method"].startswith(
        "paired on 10 shared turns in 1 game: Newcombe paired interval"
    )
    # one game, and nothing in the format to tell how games differ: the game is one
    # observation (design effect 10), its 3 turns valid for both and 7 for a alone count as
    # 0.3 and 0.7 of one turn, and no variance is estimated (the normal quantile).
    # Newcombe's paired interval (1998, method 10) by hand: a is 1 of 1, b 0.3 of 1; with no
    # turn valid for b alone nor for neither, a margin is 0 and so is the correlation term:
    # 0.7 - sqrt((1 - low_a)^2 + (high_b - 0.3)^2) to 0.7 + sqrt((0.3 - low_b)^2 + (high_a - 1)^2),
    # Wilson's 1 of 1 being 1 / (1 + z^2) to 1.
    (low_a, high_a), (low_b, high_b) = wilson_by_hand(1, 1), wilson_by_hand(0.3, 1)
    assert (low_a, high_a) == pytest.approx((1 / (1 + Z**2), 1.0), rel=1e-12)
    expected = (0.7 - math.hypot(1 - low_a, high_b - 0.3), 0.7 + math.hypot(0.3 - low_b, high_a - 1))
    assert row["difference"] == pytest.approx(0.7)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(expected, rel=1e-9)
    assert (row["validity_a_shared"], row["validity_b_shared"]) == (1.0, 0.3)
    assert row["p_value"] > 0.05 and not row["shown_in_the_games"] and not row["significant"]
    low, high = row["ci_low"] * 100, row["ci_high"] * 100
    assert row["verdict"].startswith(
        f"no evidence of a difference: m-a ahead of m-b by +70.0 points (95% CI "
        f"{low:+.1f} to {high:+.1f}; on 10 shared turns in 1 game: m-a 100.0% valid "
        f"there, m-b 30.0%"
    )  # the validities the paired difference is made of
    (tmp_path / "nine").mkdir()
    unpaired = compare_models(
        database(arena_log(tmp_path / "nine" / "ep1.decisions.jsonl", {"m-a": a[:9], "m-b": b[:9]})), "m-a", "m-b"
    )
    [row] = unpaired.iter_rows(named=True)
    assert row["shared_turns"] == 9 and row["method"].startswith("unpaired")
    assert row["validity_a_shared"] is None
    assert row["p_value"] > 0.05
    assert "m-a 9 decisions in 1 game, m-b 9 in 1 game" in row["verdict"]


def test_holm_decides_what_is_significant_among_three_pairs(tmp_path, database):
    # 80/100, 67/100 and 66/100, in episodes of their own (unpaired). Raw p-values by the
    # score test: a-b 0.037, a-c 0.026, b-c 0.88; Holm: 0.077, 0.077, 0.88.
    # Two episodes each of 50 decisions, as alike as whole counts allow (m-b: 34 and 33),
    # so no more spread between games than chance: Wilson's intervals.
    con = database(
        *(
            arena_log(tmp_path / f"{m}{g}.decisions.jsonl", {m: outcomes(k, 50)})
            for m, per_game in (("m-a", (40, 40)), ("m-b", (34, 33)), ("m-c", (33, 33)))
            for g, k in enumerate(per_game)
        )
    )
    every = compare_models(con)
    assert every.select("a", "b").rows() == [("m-a", "m-b"), ("m-a", "m-c"), ("m-b", "m-c")]

    # The format's games, one-way ANOVA with games nested in models: only m-b's (0.68 and
    # 0.66) leave their model's share, MSB = 50 * (0.01^2 + 0.01^2) / (6 games - 3 models);
    # MSW = 50 * (2 * .8 * .2 + .68 * .32 + .66 * .34 + 2 * .66 * .34) / (300 - 6); n0 = 50.
    # Searle's upper bounds of the ICC at 70% and 90% are 0 (F ratios far below 1): design
    # effect 1, no variance estimated (the normal quantile), and each p-value the level at
    # which Newcombe's interval of the plain counts touches 0 (`newcombe_p_by_hand`).
    msb = 50 * (0.01**2 + 0.01**2) / 3
    msw = 50 * (2 * 0.8 * 0.2 + 0.68 * 0.32 + 0.66 * 0.34 + 2 * 0.66 * 0.34) / 294
    assert searle_by_hand(msb, msw, 50, 3, 294, 0.7) == searle_by_hand(msb, msw, 50, 3, 294, 0.9) == 0
    raw = [
        newcombe_p_by_hand(80, 100, 67, 100),
        newcombe_p_by_hand(80, 100, 66, 100),
        newcombe_p_by_hand(67, 100, 66, 100),
    ]
    assert every["p_value"].to_list() == pytest.approx(raw, rel=1e-9)
    # Holm by hand: sorted p times 3, 2, 1, kept monotone
    stepped = holm_by_hand(raw)
    assert every["p_holm"].to_list() == pytest.approx(stepped, rel=1e-9)
    assert every["significant"].to_list() == [p < 0.05 and low > 0 for p, low in zip(stepped, every["ci_low"])]
    # the p-value and the interval agree, row by row
    assert [p < 0.05 for p in raw] == [low > 0 or high < 0 for low, high in zip(every["ci_low"], every["ci_high"])]
    # one pair alone is one comparison: its own p decides
    [alone] = compare_models(con, "m-a", "m-c").iter_rows(named=True)
    assert alone["p_holm"] == pytest.approx(raw[1]) and alone["significant"] == (raw[1] < 0.05)


def test_many_models_are_compared_with_the_best_unless_every_pair_is_asked_for(tmp_path, database):
    # 32 models in one episode: m-00 all valid; the others lower. The best is the highest lower bound.
    models = {f"m-{i:02d}": outcomes(30 - i // 4, 30) for i in range(32)}
    con = database(arena_log(tmp_path / "ep1.decisions.jsonl", models))
    against = compare_models(con)
    assert (
        against.height == 31 and set(against["a"]) == {"m-00"} and set(against["compared"]) == {"each against the best"}
    )
    assert against["p_holm"].to_list() == pytest.approx(holm_by_hand(against["p_value"].to_list()), rel=1e-12)
    every = compare_models(con, all_pairs=True)
    assert every.height == 32 * 31 // 2 and set(every["compared"]) == {"every pair"}
    from workbench.comparison import how_compared

    assert how_compared(against) == [
        "arena: 32 models, each compared with the best, m-00 (the highest lower bound of validity): 31 comparisons; "
        "--all-pairs for every pair",
        "p-values Holm-corrected over all 31 comparisons",
    ]
    assert how_compared(every)[0] == "arena: every pair of 32 models: 496 comparisons"


def test_a_model_named_with_markdown_characters_is_escaped_in_the_report(tmp_path, database):
    from workbench.report import write_report

    con = database(arena_log(tmp_path / "ep1.decisions.jsonl", {"gpt|4*o_[x]": [True] * 12, "m-b": [False] * 12}))
    path = write_report(con, tmp_path / "r.md", db_label="w")
    text = path.read_text()
    assert "gpt\\|4\\*o\\_\\[x\\]" in text and "gpt|4" not in text
    # every table row of the comparisons keeps its column count: as many cells (split at a
    # `|` no backslash escapes) as the header's 9, the one pair's row with the name in it too
    section = text.split("## Model comparisons", 1)[1].split("\n## ", 1)[0]
    table = [line for line in section.splitlines() if line.startswith("|")]
    cells = [len(re.split(r"(?<!\\)\|", line)) - 2 for line in table]
    assert table[0].startswith("| format | a | b | verdict |") and len(table) == 3  # header, rule, one pair
    assert cells == [9, 9, 9] and "gpt\\|4\\*o\\_\\[x\\]" in table[2]


def test_errors_for_unknown_models_and_formats(tmp_path, database):
    con = database(arena_log(tmp_path / "ep1.decisions.jsonl", {"m-a": [True, True], "m-b": [True, False]}))
    with pytest.raises(WorkbenchError, match="no decisions by 'm-z'; known: m-a, m-b"):
        compare_models(con, "m-a", "m-z")
    with pytest.raises(WorkbenchError, match="name two models"):
        compare_models(con, "m-a")
    with pytest.raises(WorkbenchError, match="no decisions in format 'gm'"):
        compare_models(con, format="gm")


# --- aliases -------------------------------------------------------------------------------------


def test_aliases_make_two_names_one_model_and_keep_the_raw_names(tmp_path, database):
    con = database(
        arena_log(tmp_path / "ep1.decisions.jsonl", {"claude-3-5-haiku": [True] * 4}),
        arena_log(
            tmp_path / "ep2.decisions.jsonl", {"claude-3-5-haiku-20241022": [True, False], "gpt-4o-mini": [False] * 6}
        ),
    )
    aliases = {"claude-3-5-haiku-20241022": "claude-3-5-haiku"}
    card = scorecard(con, aliases=aliases)
    assert card["model"].to_list() == ["claude-3-5-haiku", "gpt-4o-mini"]
    assert card.row(0, named=True)["decisions"] == 6 and card.row(0, named=True)["games"] == 2
    assert sorted(r[0] for r in con.execute("SELECT DISTINCT model FROM decisions").fetchall()) == [
        "claude-3-5-haiku",
        "claude-3-5-haiku-20241022",
        "gpt-4o-mini",
    ]
    # a file: JSON or CSV; the alias is the model's name in comparisons too
    (tmp_path / "aliases.csv").write_text("name,model\nclaude-3-5-haiku-20241022,claude-3-5-haiku\n")
    (tmp_path / "aliases.json").write_text(json.dumps(aliases))
    for given in (tmp_path / "aliases.csv", tmp_path / "aliases.json"):
        assert scorecard(con, aliases=given).equals(card)
        [row] = compare_models(con, "claude-3-5-haiku-20241022", "gpt-4o-mini", aliases=given).iter_rows(named=True)
        assert (row["a"], row["n_a"]) == ("claude-3-5-haiku", 6)
    # a model is not compared with itself, by its name or by two of its aliases
    with pytest.raises(WorkbenchError, match="a comparison needs two different models, not 'gpt-4o-mini' twice"):
        compare_models(con, "gpt-4o-mini", "gpt-4o-mini")
    with pytest.raises(
        WorkbenchError, match="'claude-3-5-haiku-20241022' and 'claude-3-5-haiku' are one model under the aliases"
    ):
        compare_models(con, "claude-3-5-haiku-20241022", "claude-3-5-haiku", aliases=aliases)
    (tmp_path / "twice.json").write_text('{"x": "a", "x": "b"}')
    with pytest.raises(WorkbenchError, match="'x' is given two models, 'a' and 'b'"):
        scorecard(con, aliases=tmp_path / "twice.json")
    with pytest.raises(WorkbenchError, match="non-empty text"):
        scorecard(con, aliases={"x": 3})


# --- planning ------------------------------------------------------------------------------------


def test_sample_size_from_a_database_estimates_validity_games_and_icc(tmp_path, database):
    # Two models, 4 episodes each of 20 decisions: m-a 20, 20, 10, 10; m-b 15 in each.
    paths = [
        arena_log(tmp_path / f"ep{i}.decisions.jsonl", {"m-a": outcomes(k, 20), "m-b": outcomes(15, 20)})
        for i, k in enumerate((20, 20, 10, 10))
    ]
    con = database(*paths)
    planned = plan(con)
    assert (planned.games, planned.models, planned.decisions_per_game) == (8, 2, 20)
    assert planned.validity == pytest.approx(120 / 160)
    # ANOVA ICC by hand, games nested in models: m-a's games at 1, 1, .5, .5 around .75;
    # m-b's all at .75. MSB = 20 * 4 * .0625 / (8 - 2); MSW = (2 * 20 * .5 * .5 + 4 * 20 * .75 * .25)
    # / (160 - 8); size (160 - (4 * 400 / 80 + 4 * 400 / 80)) / 6 = 20.
    between, within = 20 * 4 * 0.0625 / 6, (2 * 20 * 0.25 + 4 * 20 * 0.1875) / 152
    assert planned.icc == pytest.approx((between - within) / (between + 19 * within))
    # planned at the ICC's 90% upper bound (Searle's, by hand with scipy's F quantile)
    ratio = between / within / f_dist.ppf(0.1, 6, 152)
    icc_high = (ratio - 1) / (ratio + 19)
    assert planned.icc_high == pytest.approx(icc_high, rel=1e-9)
    # the games the plan needs, counted up by hand (`games_needed_by_hand`)
    assert sample_size(0.1, con=con) == games_needed_by_hand(0.1, 0.75, 20, icc_high) == 144
    assert sample_size(0.1, con=con, icc=0) == games_needed_by_hand(0.1, 0.75, 20, 0) == 19
    # the keywords the docs write, and the same positionally
    assert (
        sample_size(difference=0.1, validity=0.85, decisions_per_game=40, icc=0.2)
        == sample_size(0.1, 0.85, 40, 0.2)
        == games_needed_by_hand(0.1, 0.85, 40, 0.2)
        == 59
    )
    assert workbench.analysis.sample_size(difference=0.1, validity=0.85, decisions_per_game=40, icc=0.2) == 59
    with pytest.raises(WorkbenchError, match="difference must be between 0 and 1"):
        sample_size(float("nan"), con=con)
    with pytest.raises(WorkbenchError, match="needs the difference"):
        sample_size(con=con)
    with pytest.raises(WorkbenchError, match="sample_size needs validity, decisions_per_game, icc"):
        sample_size(0.1)
    with pytest.raises(WorkbenchError, match="does not fit around a validity of 0.5"):
        sample_size(0.8, 0.5, 10, 0)


def test_one_game_each_shows_a_difference_but_claims_none(tmp_path, database):
    con = database(
        arena_log(tmp_path / "a.decisions.jsonl", {"m-a": outcomes(10, 40)}),
        arena_log(tmp_path / "b.decisions.jsonl", {"m-b": outcomes(36, 40)}),
    )
    [row] = compare_models(con, "m-a", "m-b").iter_rows(named=True)
    # one game each, nothing else in the format: each game is one observation
    assert (row["games_compared"], row["shown_in_the_games"], row["significant"]) == (1, False, False)
    # m-b is ahead: 36 of 40 against 10 of 40, 65 points, its interval told from its side
    low, high = -row["ci_high"] * 100, -row["ci_low"] * 100
    assert row["verdict"].startswith(
        f"no evidence of a difference: m-b ahead of m-a by +65.0 points (95% CI "
        f"{low:+.1f} to {high:+.1f}; m-a 40 decisions in 1 game, m-b 40 in 1 game"
    )
    assert "games per model would show a 65.0-point difference" in row["verdict"] and row["games_needed"] >= 2


def test_paired_turns_of_games_that_differ_are_tested_at_their_effective_counts(tmp_path, database):
    # ep1: m-b errs on ticks 0-5 (6 turns valid for a only); ep2: m-a errs on ticks 0-1 (2 for b only).
    ep1 = {"m-a": [True] * 10, "m-b": [tick >= 6 for tick in range(10)]}
    ep2 = {"m-a": [tick >= 2 for tick in range(10)], "m-b": [True] * 10}
    con = database(arena_log(tmp_path / "ep1.decisions.jsonl", ep1), arena_log(tmp_path / "ep2.decisions.jsonl", ep2))
    [row] = compare_models(con, "m-a", "m-b").iter_rows(named=True)
    # The format's games: m-a 10 and 8 of 10, m-b 4 and 10 of 10; per shared game the
    # cells (both, only a, only b, neither): ep1 4, 6, 0, 0; ep2 8, 0, 2, 0.
    assert row["difference"] == pytest.approx(0.2) and row["shared_games"] == 2
    # By hand. The ICC, one-way ANOVA with games nested in models: m-a's share 0.9, its
    # games 0.1 from it; m-b's 0.7, its games 0.3 from it: MSB = 10 * (2 * 0.1^2 + 2 * 0.3^2)
    # / (4 - 2) = 1; MSW = 10 * (0.8 * 0.2 + 0.4 * 0.6) / (40 - 4) = 4 / 36; n0 = (40 - 4 * 10^2
    # / 20) / 2 = 10. The pairs' games hold 10 turns each (m = 10).
    effect, dof = paired_effect_by_hand(
        10 * (2 * 0.1**2 + 2 * 0.3**2) / 2, 10 * (0.8 * 0.2 + 0.4 * 0.6) / 36, (40 - 4 * 10**2 / 20) / 2, 2, 36, size=10
    )
    # Newcombe's paired interval at the effective counts 12, 6, 2, 0 / effect, and its p-value:
    # the level at which its lower end reaches 0 (scipy's root finder, `paired_p_by_hand`)
    cells = [x / effect for x in (12, 6, 2, 0)]
    expected = newcombe_paired_by_hand(*cells, student_t.ppf(0.975, dof))
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(expected[1:], rel=1e-9)
    assert row["p_value"] == pytest.approx(paired_p_by_hand(*cells, dof), rel=1e-9)
    assert f"design effect {effect:.2g}" in row["method"]


# --- planning: each input's range, on both sides of its bounds ----------------------------------


@pytest.mark.parametrize(
    "name, value, holds",
    [
        ("difference", 0.0, False),
        ("difference", 1e-9, True),
        ("difference", 0.999, True),
        ("difference", 1.0, False),
        ("difference", -1.0, False),
        ("power", 0.0, False),
        ("power", 0.5, True),
        ("power", 1.0, False),
        ("level", 0.0, False),
        ("level", 0.95, True),
        ("level", 1.0, False),
        ("icc", -0.01, False),
        ("icc", 0.0, True),
        ("icc", 1.0, True),
        ("icc", 1.01, False),
        ("decisions_per_game", 0.99, False),
        ("decisions_per_game", 1.0, True),
        ("validity", -0.01, False),
        ("validity", 0.0, True),
        ("validity", 1.0, True),
        ("validity", 1.01, False),
    ],
)
def test_each_planning_input_is_checked_at_its_bounds(name, value, holds):
    # a difference near 1 fits only beside a validity near 1 (or 0)
    validity = 0.9995 if name == "difference" else 0.5
    given = {
        "difference": 0.1,
        "validity": validity,
        "decisions_per_game": 10,
        "icc": 0.1,
        "power": 0.8,
        "level": 0.95,
        name: value,
    }
    args = [given[k] for k in ("difference", "validity", "decisions_per_game", "icc", "power", "level")]
    if holds:
        assert sample_size(*args) >= 2
    else:
        label = name.replace("_", " ")
        expected = {"difference": "between 0 and 1 (0.05 for 5 points)", "decisions_per_game": "at least 1"}.get(
            name, "between 0 and 1"
        )
        with pytest.raises(WorkbenchError) as raised:
            sample_size(*args)
        assert str(raised.value) == f"{label} must be {expected}, not {value!r}"


def test_a_difference_fits_up_to_the_ends_of_the_scale():
    # 0.4 - 0.6 < 0, but 0.4 + 0.6 = 1: the difference fits (b at 1.0); a hair more does not
    assert sample_size(0.6, 0.4, 10, 0.0) >= 2
    with pytest.raises(WorkbenchError, match="does not fit around a validity of 0.4"):
        sample_size(0.61, 0.4, 10, 0.0)


def test_a_plan_merges_aliased_names_and_defaults_to_its_own_validity(tmp_path, database):
    from workbench.comparison import plan_in_words

    paths = [
        arena_log(tmp_path / f"ep{i}.decisions.jsonl", {"m-a": outcomes(k, 10), "m-a-2024": outcomes(k, 10)})
        for i, k in enumerate((10, 5, 8))
    ]
    con = database(*paths)
    assert plan(con).models == 2
    merged = plan(con, aliases={"m-a-2024": "m-a"})
    # one model: its 3 games hold both names' decisions, 20 a game
    assert (merged.models, merged.games, merged.decisions_per_game) == (1, 3, 20)
    assert "3 games of 1 models" in plan_in_words(con, 0.1, aliases={"m-a-2024": "m-a"})
    assert "6 games of 2 models" in plan_in_words(con, 0.1)
    # every format pooled: the EC4X bot's model counts too
    both = database(*paths, bot_trace(tmp_path / "bot_trace_g1.jsonl", "m-c", [1, 1]))
    assert (plan(both).models, plan(both, "arena").models, plan(both, "ec4x").models) == (3, 2, 1)
    # a format's plan is planned from its decisions alone, as if no other format were there
    assert sample_size(0.1, con=both, format="arena") == sample_size(0.1, con=con) != sample_size(0.1, con=both)
    with pytest.raises(WorkbenchError) as raised:
        plan(database())
    assert str(raised.value) == "no decisions in this database to plan from"
    # planned at the ICC's upper bound, which is never below the estimate
    assert merged.icc_high >= merged.icc and merged.planning_icc == merged.icc_high
    # By hand: one model, games of 20 at 20, 10 and 16 valid (1, 0.5, 0.8), its share 46 / 60;
    # MSB = 20 * ((1 - 46/60)^2 + (0.5 - 46/60)^2 + (0.8 - 46/60)^2) / (3 - 1);
    # MSW = 20 * (1 * 0 + 0.5 * 0.5 + 0.8 * 0.2) / (60 - 3); n0 = (60 - 3 * 20^2 / 60) / 2 = 20;
    # planned at Searle's 90% bound on F(2, 57)
    share = 46 / 60
    msb = 20 * ((1 - share) ** 2 + (0.5 - share) ** 2 + (0.8 - share) ** 2) / 2
    high = searle_by_hand(msb, 20 * (0.5 * 0.5 + 0.8 * 0.2) / 57, 20, 2, 57, 0.9)
    assert (merged.validity, merged.icc_high) == pytest.approx((share, high), rel=1e-9)
    assert merged.games_needed(0.1) == games_needed_by_hand(0.1, share, 20, high)
    assert merged.games_needed(0.1, validity=0.5) == games_needed_by_hand(0.1, 0.5, 20, high)
    assert f"ICC {merged.icc:.3f} from 3 games; planning at {merged.icc_high:.3f}" in plan_in_words(
        con, 0.1, aliases={"m-a-2024": "m-a"}
    )


def test_a_pair_is_compared_only_in_formats_where_both_decided(tmp_path, database):
    arena = arena_log(tmp_path / "ep1.decisions.jsonl", {"m-a": outcomes(9, 10), "m-b": outcomes(5, 10)})
    only_a = arena_log(tmp_path / "ep2.decisions.jsonl", {"m-a": outcomes(10, 10)})
    trace = bot_trace(tmp_path / "bot_trace_g1.jsonl", "m-a", [1, 1])
    con = database(arena, only_a, trace)
    compared = compare_models(con, "m-a", "m-b")
    assert compared["format"].to_list() == ["arena"]  # m-b made no EC4X decision
    with pytest.raises(WorkbenchError) as raised:
        compare_models(con, "m-x", "m-y")
    assert str(raised.value).startswith("no decisions by 'm-x', 'm-y'; known: m-a, m-b")


def latency_game(path, model: str, latencies: list[float], game: str = "game_20260206T093854Z"):
    """A Damage game of one provider call and one valid action per turn, each call this long."""
    lines = [event("game_started", game_id=game)]
    for turn, latency in enumerate(latencies, 1):
        lines.append(
            event(
                "provider_call",
                {
                    **PAYLOADS["provider_call"],
                    "turn": turn,
                    "requested_model": model,
                    "resolved_model": model,
                    "latency_ms": latency,
                },
                game_id=game,
            )
        )
        lines.append(
            event(
                "action_submitted",
                {"turn": turn, "player_id": "P1", "action": PAYLOADS["action_submitted"]["action"]},
                game_id=game,
            )
        )
    return write_lines(path, lines)


def test_a_comparison_gives_the_difference_of_median_latencies_and_what_it_shared(tmp_path, database):
    con = database(
        latency_game(tmp_path / "g1.events.jsonl", "m-a", [100.0, 300.0, 200.0]),
        latency_game(tmp_path / "g2.events.jsonl", "m-b", [50.0, 70.0, 90.0, 1000.0]),
    )
    [row] = compare_models(con, "m-a", "m-b").iter_rows(named=True)
    # medians by hand: 200 and (70 + 90) / 2 = 80
    assert row["latency_p50_diff_ms"] == pytest.approx(200.0 - 80.0)
    # one game: turns 1-3 both decided, too few to pair on
    assert (row["shared_turns"], row["shared_games"]) == (3, 1) and row["method"].startswith("unpaired")
    assert row["validity_a_shared"] is None and row["validity_b_shared"] is None
    assert row["method"].startswith("unpaired: Newcombe interval and its test")
    assert row["compared"] == "the pair asked for"
    # different games: nothing shared
    apart = database(
        latency_game(tmp_path / "g3.events.jsonl", "m-a", [100.0], game="game_20260207T000000Z"),
        latency_game(tmp_path / "g4.events.jsonl", "m-b", [50.0], game="game_20260208T000000Z"),
    )
    [row] = compare_models(apart, "m-a", "m-b").iter_rows(named=True)
    assert (row["shared_turns"], row["shared_games"]) == (0, 0)


def test_an_unpaired_method_names_both_design_effects_when_either_side_is_clustered(tmp_path, database):
    # m-a's two episodes differ (10/10 and 2/10); m-b's alike (5/10 twice)
    paths = [arena_log(tmp_path / f"a{i}.decisions.jsonl", {"m-a": outcomes(k, 10)}) for i, k in enumerate((10, 2))]
    paths += [arena_log(tmp_path / f"b{i}.decisions.jsonl", {"m-b": outcomes(5, 10)}) for i in range(2)]
    con = database(*paths)
    [row] = compare_models(con, "m-a", "m-b").iter_rows(named=True)
    card = {r["model"]: r for r in scorecard(con).iter_rows(named=True)}
    # the ICC is the format's: m-b's games, alike, still carry what games in it do
    assert card["m-a"]["design_effect"] == card["m-b"]["design_effect"] > 1
    effects = f"{card['m-a']['design_effect']:.2g} and {card['m-b']['design_effect']:.2g}"
    assert row["method"].endswith(f", design effects {effects}")


def test_aliases_name_either_model_of_a_pair_and_errors_say_what_is_missing(tmp_path, database):
    con = database(arena_log(tmp_path / "ep1.decisions.jsonl", {"m-a": outcomes(3, 4), "m-b-2024": outcomes(1, 4)}))
    [row] = compare_models(con, "m-a", "m-b-2024", aliases={"m-b-2024": "m-b"}).iter_rows(named=True)
    assert (row["a"], row["b"], row["n_b"]) == ("m-a", "m-b", 4)
    lonely = database(arena_log(tmp_path / "ep2.decisions.jsonl", {"m-a": outcomes(3, 4)}))
    with pytest.raises(WorkbenchError, match="^no two models to compare$"):
        compare_models(lonely)
    empty = database()
    with pytest.raises(
        WorkbenchError,
        match="^no decisions in this database to compare; ingest the logs of a "
        r"game or an agent \(`workbench formats` lists what reads them\) first$",
    ):
        compare_models(empty)


def test_a_scorecard_by_agent_has_no_model_column_and_a_shown_difference_needs_no_more_games(tmp_path, database):
    con = database(
        *(
            arena_log(tmp_path / f"{m}{g}.decisions.jsonl", {m: outcomes(k, 20)})
            for m, per_game in (("m-a", (5, 6, 4)), ("m-b", (18, 17, 18)))
            for g, k in enumerate(per_game)
        )
    )
    by_agent = scorecard(con, by=("format", "agent_id"))
    assert "model" not in by_agent.columns and by_agent["agent_id"].to_list() == ["agent_m-a", "agent_m-b"]
    [row] = compare_models(con, "m-a", "m-b").iter_rows(named=True)
    assert row["significant"] and row["games_needed"] is None


# --- what a user would see change, were the code slightly wrong --------------------------------


def share_of(who, valid_g, n_g, between):
    from workbench.comparison import Share

    return Share(who, stats.share(valid_g, n_g, between), None, None, between)


def test_a_comparison_rests_on_the_fewer_games_of_either_side():
    # 1 game of 1,000 decisions against 30 games of 30: the verdict rests on 1 game, and
    # one game claims nothing (with max(), "A is more often valid: +15.0 points").
    from workbench.comparison.pairs import _compare

    between = stats.between_games([950] + [24] * 15 + [25] * 15, [1000] + [30] * 30, ["a"] + ["b"] * 30)
    a, b = share_of("a", [950], [1000], between), share_of("b", [24] * 15 + [25] * 15, [30] * 30, between)
    row = _compare("arena", a, b, None, "the pair asked for")
    assert (row["games_a"], row["games_b"], row["games_compared"]) == (1, 30, 1)


def test_a_paired_comparison_rests_on_the_shared_games_not_each_models_own():
    from workbench.comparison.pairs import _compare

    between = stats.between_games([30, 31, 29, 30, 10, 12, 11, 9], [40] * 8, ["a"] * 4 + ["b"] * 4)
    a, b = share_of("a", [30, 31, 29, 30], [40] * 4, between), share_of("b", [10, 12, 11, 9], [40] * 4, between)
    one_game = Paired(np.array([10]), np.array([20]), np.array([0]), np.array([10]))
    row = _compare("arena", a, b, one_game, "the pair asked for")
    assert (row["shared_games"], row["games_compared"]) == (1, 1)


def test_games_needed_plans_from_the_better_models_validity():
    from workbench.comparison.plans import Plan, _games_needed

    planned = Plan(0.8, 40.0, 0.1, 10, 2, 0.1)
    row = {"significant": False, "difference": -0.03, "validity_a": 0.90, "validity_b": 0.93}
    assert _games_needed(row, planned) == games_needed_by_hand(0.03, 0.93, 40, 0.1) == 172
    assert games_needed_by_hand(0.03, 0.90, 40, 0.1) == 224  # from the worse model's: more


def test_a_turn_decided_twice_is_valid_only_if_every_decision_was(tmp_path, database):
    # m-a decides tick 0 twice in ep1, once validly and once not: the turn is not valid.
    lines = [decision("a", 0, "m-a", True), decision("a", 0, "m-a", False)]
    lines += [decision("a", t, "m-a", True) for t in range(1, 12)]
    lines += [decision("b", t, "m-b", True) for t in range(12)]
    con = database(write_lines(tmp_path / "ep1.decisions.jsonl", lines))
    [row] = compare_models(con, "m-a", "m-b").iter_rows(named=True)
    assert row["shared_turns"] == 12 and row["validity_a_shared"] == pytest.approx(11 / 12)


# --- the sequential comparison -------------------------------------------------------------------


def gm_decisions(path, games: dict[tuple[str, str], tuple[int, int, int]], tokens: dict[str, int] | None = None):
    """A database of GM decisions written directly: per (model, game) the valid, the
    invalid and the failed calls (no answer came back: HTTP 500), each call a turn of its
    own and of the model's `tokens`."""
    tokens = tokens or {}
    con = workbench.connect(path)
    [(source,)] = con.execute(
        "INSERT INTO sources (path, sha256, format) VALUES ('x', 'y', 'gm') RETURNING source_id"
    ).fetchall()
    rows = []
    for (model, game), counts in games.items():
        calls = [("valid", True)] * counts[0] + [("invalid", False)] * counts[1] + [("failed", None)] * counts[2]
        rows += [
            [
                source,
                game,
                turn,
                model,
                valid,
                outcome,
                "HTTP 500" if outcome == "failed" else None,
                tokens.get(model),
                f"line {len(rows) + turn}",
            ]
            for turn, (outcome, valid) in enumerate(calls)
        ]
    con.executemany(
        "INSERT INTO decisions (source_id, format, game_id, turn, model, valid, outcome, failure, tokens, "
        "locator) VALUES (?, 'gm', ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    return con


def test_a_sequential_comparison_of_games_not_shared_bets_on_the_ith_game_of_each(tmp_path):
    from workbench.comparison import sequential

    # m-a in games a1-a4 (10, 9, 10 and 8 of 10 valid), m-b in b1-b3 (5, 6 and 4 of 10,
    # and two failed calls in b1): no turn shared, so the i-th game of each is compared,
    # as many as the fewer side played
    con = gm_decisions(
        tmp_path / "w.duckdb",
        {
            ("m-a", "a1"): (10, 0, 0),
            ("m-a", "a2"): (9, 1, 0),
            ("m-a", "a3"): (10, 0, 0),
            ("m-a", "a4"): (8, 2, 0),
            ("m-b", "b1"): (5, 5, 2),
            ("m-b", "b2"): (6, 4, 0),
            ("m-b", "b3"): (4, 6, 0),
        },
    )
    try:
        [row] = sequential(con, "m-a", "m-b").iter_rows(named=True)
        differences = [1 - 0.5, 0.9 - 0.6, 1 - 0.4]
        assert (row["paired"], row["games"]) == (False, 3)
        assert row["difference"] == pytest.approx(sum(differences) / 3)
        assert row["e_value"] == pytest.approx(stats.sequential(differences).e_value)  # held by hand in test_stats
        assert row["verdict"].startswith("not decided after 3 games (games of each")
        # the failed calls counted as invalid: b1 is 5 of 12
        [charged] = sequential(con, "m-a", "m-b", failures="invalid").iter_rows(named=True)
        assert charged["difference"] == pytest.approx((1 - 5 / 12 + 0.3 + 0.6) / 3)
        with pytest.raises(WorkbenchError) as raised:
            sequential(con, "m-a", "m-z", format="gm")
        assert str(raised.value) == "no decisions by 'm-z' in gm; known: m-a, m-b"
    finally:
        con.close()


def test_failed_calls_counted_as_invalid_change_the_counts_the_rates_and_the_words(tmp_path):
    from workbench.comparison import failed_calls, failed_calls_in_words

    # m-a: 18 of 20 valid and 4 failed calls in g1, 20 of 20 in g2; m-b: 10 of 20 in each
    con = gm_decisions(
        tmp_path / "w.duckdb",
        {("m-a", "g1"): (18, 2, 4), ("m-a", "g2"): (20, 0, 0), ("m-b", "g1"): (10, 10, 0), ("m-b", "g2"): (10, 10, 0)},
        tokens={"m-a": 120, "m-b": 45},
    )
    try:
        card = {row["model"]: row for row in scorecard(con).iter_rows(named=True)}
        assert (card["m-a"]["decisions"], card["m-a"]["valid"], card["m-a"]["failed"]) == (40, 38, 4)
        assert card["m-a"]["failure_rate"] == pytest.approx(4 / 44) and card["m-b"]["failure_rate"] == 0
        charged = {row["model"]: row for row in scorecard(con, failures="invalid").iter_rows(named=True)}
        assert (charged["m-a"]["decisions"], charged["m-a"]["valid"]) == (44, 38)
        [row] = compare_models(con, "m-a", "m-b", failures="invalid").iter_rows(named=True)
        assert row["validity_a"] == pytest.approx(38 / 44) and row["tokens_p50_diff"] == 120 - 45
        assert "failed calls counted as invalid" in row["verdict"]
        assert failed_calls_in_words(failed_calls(con)) == (
            "4 calls failed at the provider: HTTP 500 ×4; 4 in game g1."
        )
    finally:
        con.close()


def test_failed_calls_in_words_name_the_most_frequent_failure_first():
    from workbench.comparison import failed_calls_in_words

    failed = pl.DataFrame(
        {
            "format": ["gm"] * 4,
            "model": ["m"] * 4,
            "game_id": ["g1", "g1", "g1", "g2"],
            "failure": ["timeout", "HTTP 500", "HTTP 429", "HTTP 500"],
            "calls": [1, 2, 1, 1],
        }
    )
    assert failed_calls_in_words(failed) == (
        "5 calls failed at the provider: HTTP 500 ×3; HTTP 429 ×1; timeout ×1; 4 in game g1, 1 in game g2."
    )
    assert failed_calls_in_words(failed.head(0)) == "Every call got an answer: no call failed at the provider."


def test_a_difference_shown_only_within_one_game_names_the_better_model_first():
    from workbench.comparison import verdict

    # b leads by 20 points in the one game each played: told as a result about that game,
    # the better model, b, named first throughout
    row = {
        "a": "m-a",
        "b": "m-b",
        "difference": -0.2,
        "ci_low": -0.35,
        "ci_high": -0.05,
        "significant": False,
        "shown_in_the_games": True,
        "shared_turns": 0,
        "validity_a_shared": None,
        "n_a": 40,
        "n_b": 40,
        "games_a": 1,
        "games_b": 1,
        "failures": "exclude",
    }
    assert verdict(row) == (
        "no evidence of a difference beyond one game: in it, m-b is more often valid than m-a: "
        "+20.0 points (95% CI +5.0 to +35.0; m-b 40 decisions in 1 game, m-a 40 in 1 game, "
        "failed calls left out), but one game cannot tell a model from the game it played"
    )
