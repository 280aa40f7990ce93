"""What decisions cost (`workbench.prices`): the user's prices as JSON, CSV or a dict,
genai-prices' table under them, tiers by prompt size, and the costs a scorecard shows per
decision and per valid decision. Expected values come from the providers' published
rates (OpenAI: gpt-4o-mini $0.15 input, $0.075 cached input, $0.60 output per million
tokens; Google: gemini-2.5-pro $1.25 input and $10 output per million up to a 200,000-
token prompt, $2.50 and $15 past it), from genai-prices' own calculator, or by hand."""

import json

import polars as pl
import pytest

import workbench
from tests.conftest import write_lines
from tests.damage.events import PAYLOADS, event
from tests.test_comparison import arena_log, bot_trace, database  # noqa: F401 (database: a fixture)
from workbench.comparison import scorecard
from workbench.errors import WorkbenchError
from workbench.prices import MAX_RATE, Price, at, flat, known_prices, read_prices

# --- costs ---------------------------------------------------------------------------------------


def damage_game(path, model: str, calls: list[tuple[int, int, bool]]):
    """A Damage game in which P1 (played by `model`) makes one betting call and one action
    per turn: (prompt tokens, completion tokens, valid action)."""
    lines = [event("game_started")]
    for turn, (prompt, completion, valid) in enumerate(calls, 1):
        lines.append(
            event(
                "provider_call",
                {
                    **PAYLOADS["provider_call"],
                    "turn": turn,
                    "requested_model": model,
                    "resolved_model": model,
                    "usage": {
                        "prompt_tokens": prompt,
                        "completion_tokens": completion,
                        "total_tokens": prompt + completion,
                    },
                },
            )
        )
        action = {**PAYLOADS["action_submitted"]["action"]}
        if not valid:  # a raise without its attack plan breaks the specification
            action = {key: value for key, value in action.items() if key != "attack_plan"}
        lines.append(event("action_submitted", {"turn": turn, "player_id": "P1", "action": action}))
    return write_lines(path, lines)


def test_costs_per_decision_and_per_valid_one_from_input_and_output_prices(tmp_path, database):
    con = database(
        damage_game(
            tmp_path / "g.events.jsonl", "gpt-4o-mini", [(1000, 200, True), (3000, 400, True), (2000, 0, False)]
        )
    )
    [row] = scorecard(con).iter_rows(named=True)
    assert (row["decisions"], row["valid"]) == (3, 2)
    # genai-prices' gpt-4o-mini: $0.15 per million input tokens, $0.60 per million output
    dollars = (6000 * 0.15 + 600 * 0.60) / 1e6
    assert row["cost_per_decision"] == pytest.approx(dollars / 3)
    assert row["cost_per_valid"] == pytest.approx(dollars / 2)
    assert row["price_source"] == "genai-prices: openai gpt-4o-mini"
    # a price file overrides: input, output (cached input at the input rate)
    (tmp_path / "prices.json").write_text(json.dumps({"gpt-4o-mini": {"input": 1.0, "output": 10.0}}))
    [priced] = scorecard(con, prices=tmp_path / "prices.json").iter_rows(named=True)
    assert priced["cost_per_valid"] == pytest.approx((6000 * 1.0 + 600 * 10.0) / 1e6 / 2)
    # one rate for every token
    (tmp_path / "prices.csv").write_text("model,usd_per_mtok\ngpt-4o-mini,2\n")
    [blended] = scorecard(con, prices=tmp_path / "prices.csv").iter_rows(named=True)
    assert blended["cost_per_decision"] == pytest.approx(6600 * 2 / 1e6 / 3)


def test_a_model_no_table_knows_and_a_log_without_tokens_have_no_cost(tmp_path, database):
    con = database(
        damage_game(tmp_path / "g.events.jsonl", "llama-3.1-70b", [(100, 10, True)]),
        bot_trace(tmp_path / "bot_trace_g1.jsonl", "gpt-4o-mini", [1, 1]),
    )
    card = {row["model"]: row for row in scorecard(con).iter_rows(named=True)}
    assert card["llama-3.1-70b"]["cost_per_decision"] is None and card["llama-3.1-70b"]["price_source"] is None
    # EC4X traces record no tokens: nothing to price, whatever the price
    assert card["gpt-4o-mini"]["cost_per_decision"] is None
    [row] = scorecard(con, prices={"llama-3.1-70b": 5}).filter(pl.col("model") == "llama-3.1-70b").iter_rows(named=True)
    assert row["cost_per_decision"] == pytest.approx(110 * 5 / 1e6)


@pytest.mark.parametrize("bad", ["NaN", "-1", "1e400", '"cheap"', "true", "null"])
def test_a_price_must_be_finite_and_not_negative(tmp_path, database, bad):
    con = database(arena_log(tmp_path / "ep1.decisions.jsonl", {"m": [True]}))
    (tmp_path / "p.json").write_text(f'{{"m": {bad}}}')
    with pytest.raises(WorkbenchError, match="the price of 'm' must be a finite number of US dollars per million"):
        scorecard(con, prices=tmp_path / "p.json")
    with pytest.raises(WorkbenchError, match="needs input and output rates"):
        scorecard(con, prices={"m": {"input": 1}})


def test_costs_take_each_decisions_tier_and_cached_tokens_as_genai_prices_does(tmp_path):
    # genai-prices itself is the oracle: its price of each decision, summed. gemini-2.5-pro
    # bills every token of a request whose prompt is past 200,000 at its higher tier.
    from genai_prices import Usage, calc_price

    calls = [(100_000, 2_000, 0), (200_000, 1_000, 50_000), (200_001, 500, 10_000), (250_000, 3_000, 0)]
    con = workbench.connect(tmp_path / "w.duckdb")
    [(source,)] = con.execute(
        "INSERT INTO sources (path, sha256, format) VALUES ('x', 'y', 'gm') RETURNING source_id"
    ).fetchall()
    con.executemany(
        "INSERT INTO decisions (source_id, format, game_id, turn, model, valid, tokens, input_tokens, "
        "output_tokens, cached_tokens, locator) VALUES (?, 'gm', 'g', ?, 'gemini-2.5-pro', ?, ?, ?, ?, ?, ?)",
        [
            [source, turn, turn != 2, inp + out, inp, out, cached, f"line {turn}"]
            for turn, (inp, out, cached) in enumerate(calls)
        ],
    )
    expected = sum(
        float(
            calc_price(
                Usage(input_tokens=inp, output_tokens=out, cache_read_tokens=cached), model_ref="gemini-2.5-pro"
            ).total_price
        )
        for inp, out, cached in calls
    )
    [row] = scorecard(con).iter_rows(named=True)
    con.close()
    assert row["cost_per_decision"] == pytest.approx(expected / 4)
    assert row["cost_per_valid"] == pytest.approx(expected / 3)


# --- the user's prices, read ---------------------------------------------------------------------


def test_a_number_is_one_rate_for_every_token_and_an_object_gives_each_rate():
    prices = read_prices(
        {"one": 2, "split": {"input": 1, "output": 4}, "cached": {"input": 1, "output": 4, "cached": "0.5"}}
    )
    assert prices["one"] == Price(((0, 2.0),), ((0, 2.0),), ((0, 2.0),), "prices", blended=True)
    # no cached rate given: a cached input token costs what an input token does
    assert prices["split"] == Price(((0, 1.0),), ((0, 4.0),), ((0, 1.0),), "prices")
    assert prices["cached"].cached == ((0, 0.5),) and not prices["cached"].blended


def test_prices_files_in_json_and_both_csv_forms(tmp_path):
    (tmp_path / "p.json").write_text(json.dumps({"m": {"input": 3, "output": 15}}))
    (tmp_path / "blended.csv").write_text("model,usd_per_mtok\nm,2.5\nn,0\n")
    (tmp_path / "split.csv").write_text("model,input,output,cached\nm,3,15,0.3\nn,1,2,\n")
    from_json = read_prices(tmp_path / "p.json")["m"]
    assert (from_json.input, from_json.output, from_json.cached) == (flat(3.0), flat(15.0), flat(3.0))
    assert from_json.source.startswith("prices in ") and "p.json" in from_json.source
    blended = read_prices(str(tmp_path / "blended.csv"))
    assert (blended["m"].input, blended["m"].blended, blended["n"].output) == (flat(2.5), True, flat(0.0))
    split = read_prices(tmp_path / "split.csv")
    assert (split["m"].cached, split["n"].cached) == (flat(0.3), flat(1.0))  # an empty cached: the input rate
    assert read_prices(tmp_path / "split.csv")["m"].input == flat(3.0)


def test_a_rate_is_from_0_to_a_dollar_a_token_and_an_object_names_input_and_output():
    assert read_prices({"m": MAX_RATE})["m"].input == flat(1_000_000.0)  # a dollar a token: the most
    assert read_prices({"m": 0})["m"].output == flat(0.0)
    with pytest.raises(
        WorkbenchError,
        match="must be a finite number of US dollars per million tokens, from 0 to 1,000,000, not 1000001",
    ):
        read_prices({"m": 1_000_001})
    with pytest.raises(
        WorkbenchError, match="'m' needs input and output rates \\(and may give cached\\), not input, tokens"
    ):
        read_prices({"m": {"input": 1, "tokens": 2}})
    with pytest.raises(WorkbenchError, match="prices must be a dict or a file"):
        read_prices([("m", 1)])


def test_a_tier_s_rate_holds_from_the_prompt_size_it_starts_past():
    # gemini-2.5-pro's input: $1.25 up to 200,000 prompt tokens, $2.50 past them
    rate = ((0, 1.25), (200_000, 2.5))
    assert (at(rate, 0), at(rate, 200_000)) == (1.25, 2.5)
    price = Price(rate, ((0, 10.0), (200_000, 15.0)), ((0, 0.3), (128_000, 0.6)), "x")
    assert price.thresholds() == [128_000, 200_000]  # every size at which some rate changes
    assert Price(flat(1.0), flat(2.0), flat(1.0), "x").thresholds() == []


# --- genai-prices' table ---------------------------------------------------------------------------


def test_the_maintained_table_gives_the_published_rates_and_the_user_s_price_comes_first():
    found = known_prices(["gpt-4o-mini", "gemini-2.5-pro", "no-such-model-anywhere"])
    mini = found["gpt-4o-mini"]
    assert (mini.input, mini.cached, mini.output) == (flat(0.15), flat(0.075), flat(0.6))
    assert mini.source == "genai-prices: openai gpt-4o-mini" and not mini.blended
    pro = found["gemini-2.5-pro"]
    assert (pro.input, pro.output) == (((0, 1.25), (200_000, 2.5)), ((0, 10.0), (200_000, 15.0)))
    assert found["no-such-model-anywhere"] is None
    mine = known_prices(["gpt-4o-mini"], {"gpt-4o-mini": 2})["gpt-4o-mini"]
    assert (mine.input, mine.blended, mine.source) == (flat(2.0), True, "prices")


def test_a_log_of_totals_only_is_priced_only_at_one_rate_for_every_token(tmp_path):
    # 1,000 and 3,000 tokens in all, neither split into input and output
    con = workbench.connect(tmp_path / "w.duckdb")
    [(source,)] = con.execute(
        "INSERT INTO sources (path, sha256, format) VALUES ('x', 'y', 'gm') RETURNING source_id"
    ).fetchall()
    con.executemany(
        "INSERT INTO decisions (source_id, format, game_id, turn, model, valid, tokens, locator) "
        "VALUES (?, 'gm', 'g', ?, 'm', ?, ?, ?)",
        [[source, 0, True, 1000, "line 1"], [source, 1, False, 3000, "line 2"]],
    )
    try:
        [blended] = scorecard(con, prices={"m": 2}).iter_rows(named=True)
        assert blended["cost_per_decision"] == pytest.approx(4000 * 2 / 1e6 / 2, rel=1e-12)
        assert blended["cost_per_valid"] == pytest.approx(4000 * 2 / 1e6 / 1, rel=1e-12)
        # input and output rates cannot be told apart in a total: no cost
        [split] = scorecard(con, prices={"m": {"input": 1, "output": 4}}).iter_rows(named=True)
        assert split["cost_per_decision"] is None and split["price_source"] == "prices"
    finally:
        con.close()
