"""Comparing models honestly: every rate with its interval and its n.

`scorecard` gives, per format and model (or agent where a log names no model), the
share of valid decisions with its Wilson 95% interval, latency and tokens, retries and
the rule broken most. `compare_models` sets two models (or every pair) side by side:
the difference in validity with Newcombe's interval, a paired test where both models
decided the same turns, and Holm's correction when many pairs are compared at once.

The counts are aggregated in DuckDB; only one row per model reaches Python. Intervals
come from scipy where it has them (Wilson: `binomtest(...).proportion_ci`; McNemar's
exact test is a binomial test on the discordant pairs). Newcombe's hybrid score interval
for a difference and Holm's step-down correction are a few lines over those, written out
here (and checked against the published worked examples in the tests) rather than
pulling in statsmodels for them.
"""

from __future__ import annotations

import csv
import json
import math
from itertools import combinations
from pathlib import Path

import numpy as np
import polars as pl
from scipy.stats import binomtest, norm

from workbench.catalog import query_frame
from workbench.errors import WorkbenchError

LEVEL = 0.95
ALPHA = 1 - LEVEL
# Below this many aligned turns a paired test says little; the unpaired comparison is used.
MIN_PAIRS = 10
BOOTSTRAP = 2000
GROUPS = {"format": "format", "model": "who", "game_id": "game_id", "agent_id": "agent_id"}

# A decision's actor: its model when the log names one, else its agent.
DECIDED = """
SELECT *, coalesce(model, agent_id, '(unknown)') AS who,
       CASE WHEN model IS NOT NULL THEN 'model' WHEN agent_id IS NOT NULL THEN 'agent' ELSE 'unknown' END AS model_from
FROM decisions
"""


# --- intervals -----------------------------------------------------------------------


def wilson(valid: int, n: int) -> tuple[float, float]:
    """The Wilson score 95% interval of valid / n (NaN, NaN for n = 0)."""
    if n == 0:
        return math.nan, math.nan
    interval = binomtest(int(valid), int(n)).proportion_ci(confidence_level=LEVEL, method="wilson")
    return float(interval.low), float(interval.high)


def newcombe(valid_a: int, n_a: int, valid_b: int, n_b: int) -> tuple[float, float, float]:
    """The difference p_a - p_b and its 95% interval by Newcombe's hybrid score method
    (method 10 of Newcombe 1998), built from the two Wilson intervals."""
    p_a, p_b = valid_a / n_a, valid_b / n_b
    (low_a, high_a), (low_b, high_b) = wilson(valid_a, n_a), wilson(valid_b, n_b)
    difference = p_a - p_b
    low = difference - math.sqrt((p_a - low_a) ** 2 + (high_b - p_b) ** 2)
    high = difference + math.sqrt((high_a - p_a) ** 2 + (p_b - low_b) ** 2)
    return difference, low, high


def two_proportion_p(valid_a: int, n_a: int, valid_b: int, n_b: int) -> float:
    """Two-sided p-value of the pooled two-proportion score (z) test, the test the
    score intervals above invert."""
    pooled = (valid_a + valid_b) / (n_a + n_b)
    spread = math.sqrt(pooled * (1 - pooled) * (1 / n_a + 1 / n_b))
    if spread == 0:
        return 1.0
    return float(2 * norm.sf(abs(valid_a / n_a - valid_b / n_b) / spread))


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """McNemar's exact test: of the discordant pairs (valid for one model only), is the
    split further from even than chance allows? A binomial test at 1/2."""
    if only_a + only_b == 0:
        return 1.0
    return float(binomtest(only_a, only_a + only_b, 0.5).pvalue)


def holm(p_values) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given."""
    p = np.asarray(list(p_values), dtype=float)
    order = np.argsort(p, kind="stable")
    scaled = (len(p) - np.arange(len(p))) * p[order]
    adjusted = np.empty(len(p))
    adjusted[order] = np.minimum(np.maximum.accumulate(scaled), 1.0)
    return adjusted.tolist()


# --- the scorecard -------------------------------------------------------------------


def scorecard(con, by=("format", "model"), prices=None) -> pl.DataFrame:
    """One row per `by` group (format, model, game_id, agent_id): decisions, valid,
    validity with its Wilson 95% interval (ci_low, ci_high), latency p50/p95 (ms),
    tokens per decision (p50), retries where the log records them (EC4X attempts past
    the first), and the error rule broken most. With `prices` (a dict or a JSON/CSV
    file, see `read_prices`): cost per decision and per valid decision."""
    by = [by] if isinstance(by, str) else list(by)
    keys = _group_keys(by)
    frame = query_frame(con, _scorecard_sql(keys))
    intervals = [wilson(v, n) for v, n in frame.select("valid", "decisions").iter_rows()]
    frame = frame.with_columns(
        ci_low=pl.Series([low for low, _ in intervals], dtype=pl.Float64),
        ci_high=pl.Series([high for _, high in intervals], dtype=pl.Float64),
    )
    columns = [*by, *(["model_from"] if "model" in by else []), "decisions", "valid", "validity", "ci_low",
               "ci_high", "p50_ms", "p95_ms", "p50_tokens", "retries", "top_rule", "top_rule_count"]
    frame = frame.rename({"who": "model"}) if "model" in by else frame
    if prices is not None:
        frame = _with_costs(frame, read_prices(prices))
        columns += ["cost_per_decision", "cost_per_valid"]
    return frame.select(columns)


def _group_keys(by: list[str]) -> list[str]:
    unknown = [key for key in by if key not in GROUPS]
    if not by or unknown:
        raise WorkbenchError(f"cannot group a scorecard by {', '.join(unknown) or 'nothing'}; "
                             f"use some of: {', '.join(GROUPS)}")
    return [GROUPS[key] for key in by]


def _scorecard_sql(keys: list[str]) -> str:
    group = ", ".join(keys)
    joined = " AND ".join(f"t.{k} IS NOT DISTINCT FROM d.{k}" for k in keys)
    return f"""
    WITH d AS ({DECIDED}),
    retried AS (SELECT source_id, 'line ' || seq AS locator, greatest(coalesce(attempts, 1) - 1, 0) AS retries
                FROM ec4x_turns),
    rules AS (
        SELECT {", ".join(f"d.{k}" for k in keys)}, v.rule, count(*) AS n
        FROM d JOIN violations v ON v.source_id = d.source_id AND v.locator = d.locator AND v.severity = 'error'
        GROUP BY ALL
    ),
    top AS (
        SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY {group} ORDER BY n DESC, rule) AS rank FROM rules)
        WHERE rank = 1
    )
    SELECT {", ".join(f"d.{k}" for k in keys)}, any_value(d.model_from) AS model_from,
           count(*) AS decisions, count(*) FILTER (WHERE d.valid) AS valid, avg(d.valid::INT) AS validity,
           quantile_cont(d.latency_ms, 0.5) AS p50_ms, quantile_cont(d.latency_ms, 0.95) AS p95_ms,
           quantile_cont(d.tokens, 0.5) AS p50_tokens, sum(d.tokens) AS tokens, sum(r.retries)::BIGINT AS retries,
           any_value(t.rule) AS top_rule, coalesce(any_value(t.n), 0) AS top_rule_count
    FROM d LEFT JOIN retried r USING (source_id, locator)
    LEFT JOIN top t ON {joined}
    GROUP BY {", ".join(f"d.{k}" for k in keys)}
    ORDER BY {", ".join(f"d.{k}" for k in keys)}
    """


def read_prices(prices) -> dict[str, float]:
    """Prices in US dollars per million tokens, by model: a dict, a JSON file
    (`{"model": 0.6, ...}`) or a CSV file with the columns `model,usd_per_mtok`. The
    logs record one token count per decision (prompt and completion together), so one
    price per model applies to all of them. None are built in: prices change."""
    if isinstance(prices, dict):
        table = prices
    else:
        path = Path(prices)
        try:
            text = path.read_text(encoding="utf-8")
            if path.suffix.lower() == ".csv":
                table = {row["model"]: row["usd_per_mtok"] for row in csv.DictReader(text.splitlines())}
            else:
                table = json.loads(text)
        except (OSError, UnicodeDecodeError, ValueError, KeyError) as exc:
            raise WorkbenchError(f"cannot read prices from {path}: {exc}; give JSON {{\"model\": usd_per_mtok}} "
                                 "or a CSV with the columns model,usd_per_mtok") from None
    if not isinstance(table, dict):
        raise WorkbenchError("prices must map each model to its US dollars per million tokens")
    try:
        return {str(model): float(price) for model, price in table.items()}
    except (TypeError, ValueError):
        raise WorkbenchError("prices must map each model to a number: US dollars per million tokens") from None


def _with_costs(frame: pl.DataFrame, prices: dict[str, float]) -> pl.DataFrame:
    price = pl.col("model").replace_strict(prices, default=None, return_dtype=pl.Float64)
    cost = pl.col("tokens") * price / 1e6
    return frame.with_columns(cost_per_decision=cost / pl.col("decisions"),
                              cost_per_valid=pl.when(pl.col("valid") > 0).then(cost / pl.col("valid")))


# --- two models side by side -----------------------------------------------------------


def compare_models(con, a: str | None = None, b: str | None = None, format: str | None = None) -> pl.DataFrame:
    """Model `a` against model `b` in every format both decided in (or only `format`):
    each one's n and validity, the difference a - b with its 95% interval, p50 latency
    and token differences, the method, a p-value and a verdict in plain words.

    Paired where both decided at least MIN_PAIRS of the same turns (same format, game
    and turn): McNemar's exact test, and a paired bootstrap interval of the difference
    over those turns. Otherwise unpaired: Newcombe's interval and the two-proportion
    score test. With no `a` and `b`: every pair of models within each format, their
    p-values corrected for the number of pairs (Holm), `significant` after it."""
    if (a is None) != (b is None):
        raise WorkbenchError("name two models to compare, or none to compare every pair")
    totals = query_frame(con, f"""
        SELECT format, who, count(*) AS n, count(*) FILTER (WHERE valid) AS valid,
               quantile_cont(latency_ms, 0.5) AS p50_ms, quantile_cont(tokens, 0.5) AS p50_tokens
        FROM ({DECIDED}) WHERE $format IS NULL OR format = $format GROUP BY ALL ORDER BY format, who
    """, {"format": format})
    if a is not None:
        known = set(totals["who"].to_list())
        unknown = [m for m in (a, b) if m not in known]
        if unknown:
            raise WorkbenchError(f"no decisions by {', '.join(map(repr, unknown))}"
                                 f"{f' in {format}' if format else ''}; known: {', '.join(sorted(known))}")
    rows = []
    for fmt, models in totals.group_by("format", maintain_order=True):
        stats = {row["who"]: row for row in models.iter_rows(named=True)}
        pairs = [(a, b)] if a is not None else list(combinations(sorted(stats), 2))
        rows += [_compare(con, fmt[0], stats[x], stats[y]) for x, y in pairs if x in stats and y in stats]
    if not rows:
        raise WorkbenchError(f"{a!r} and {b!r} share no format" if a is not None else "no two models to compare")
    frame = pl.DataFrame(rows)
    adjusted = holm(frame["p_value"].to_list()) if a is None else frame["p_value"].to_list()
    frame = frame.with_columns(p_holm=pl.Series(adjusted, dtype=pl.Float64))
    frame = frame.with_columns(significant=pl.col("p_holm") < ALPHA)
    return frame.with_columns(verdict=pl.Series([_verdict(row) for row in frame.iter_rows(named=True)]))


def _compare(con, fmt: str, a: dict, b: dict) -> dict:
    pairs = query_frame(con, f"""
        WITH d AS ({DECIDED}),
        turns AS (SELECT game_id, turn, who, bool_and(valid) AS valid FROM d
                  WHERE format = $format AND who IN ($a, $b) AND game_id IS NOT NULL AND turn IS NOT NULL GROUP BY ALL)
        SELECT x.valid AS a_valid, y.valid AS b_valid
        FROM turns x JOIN turns y USING (game_id, turn) WHERE x.who = $a AND y.who = $b
    """, {"format": fmt, "a": a["who"], "b": b["who"]})
    row = {"format": fmt, "a": a["who"], "b": b["who"], "n_a": a["n"], "n_b": b["n"],
           "validity_a": a["valid"] / a["n"], "validity_b": b["valid"] / b["n"]}
    if pairs.height >= MIN_PAIRS:
        a_valid, b_valid = pairs["a_valid"].to_numpy(), pairs["b_valid"].to_numpy()
        difference, low, high = _paired_bootstrap(a_valid, b_valid)
        p_value = mcnemar_exact(int((a_valid & ~b_valid).sum()), int((~a_valid & b_valid).sum()))
        method = f"paired: McNemar exact, bootstrap interval over {pairs.height} shared turns"
    else:
        difference, low, high = newcombe(a["valid"], a["n"], b["valid"], b["n"])
        p_value = two_proportion_p(a["valid"], a["n"], b["valid"], b["n"])
        method = "unpaired: Newcombe interval, two-proportion score test"
    return {**row, "difference": difference, "ci_low": low, "ci_high": high, "pairs": pairs.height,
            "method": method, "p_value": p_value,
            "latency_p50_diff_ms": _minus(a["p50_ms"], b["p50_ms"]),
            "tokens_p50_diff": _minus(a["p50_tokens"], b["p50_tokens"])}


def _paired_bootstrap(a_valid: np.ndarray, b_valid: np.ndarray, seed: int = 0) -> tuple[float, float, float]:
    """The paired difference in validity and its percentile bootstrap 95% interval,
    resampling the shared turns (the same seed gives the same interval)."""
    differences = a_valid.astype(float) - b_valid.astype(float)
    picks = np.random.default_rng(seed).integers(0, len(differences), size=(BOOTSTRAP, len(differences)))
    means = differences[picks].mean(axis=1)
    low, high = np.quantile(means, [ALPHA / 2, 1 - ALPHA / 2])
    return float(differences.mean()), float(low), float(high)


def _minus(x, y):
    return None if x is None or y is None else x - y


def _verdict(row: dict) -> str:
    sizes = f"n={row['n_a']} vs {row['n_b']}"
    if not row["significant"] or row["ci_low"] <= 0 <= row["ci_high"]:
        return f"no evidence of a difference at {sizes}"
    better, worse = (row["a"], row["b"]) if row["difference"] > 0 else (row["b"], row["a"])
    return (f"{better} is more often valid than {worse}: {abs(row['difference']) * 100:+.1f} points "
            f"(95% CI {row['ci_low'] * 100:+.1f} to {row['ci_high'] * 100:+.1f}, a - b), {sizes}")
