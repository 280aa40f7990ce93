"""Comparing models honestly: every rate with its interval, its n and its games.

`scorecard` gives, per format and model (or agent where a log names no model), the share
of valid decisions with its 95% interval clustered by game (`stats`), the number of
games, latency and tokens, retries, the rule broken most and, with prices, costs.
`compare_models` sets two models (or many) side by side: the difference in validity with
its interval, paired where both decided the same turns of the same games, a test that
holds at small counts, Holm's correction over every comparison made, and a verdict that
claims a difference only where the p-value and the interval both show one; `sequential`
is the comparison that may be looked at after every game. `plan` and `sample_size` say
how many games a question needs.

The counts are aggregated in DuckDB; one row per model and game reaches Python, where
the statistics are computed over numpy arrays.

Its parts, each imported from here: `clusters` (the decisions as counted, `decisions_sql`,
and their clusters), `scorecards` (the scorecard, failed calls), `pairs` (models compared,
sequentially too) and `plans` (the games a question needs).
"""

from workbench.comparison.clusters import CLUSTERS, decisions_sql
from workbench.comparison.pairs import (
    ALL_PAIRS_UP_TO,
    MIN_PAIRS,
    Share,
    compare_models,
    how_compared,
    sequential,
    sequential_verdict,
    verdict,
)
from workbench.comparison.plans import POWER, Plan, check_plan, plan, plan_in_words, plan_numbers, sample_size
from workbench.comparison.scorecards import GROUPS, failed_calls, failed_calls_in_words, scorecard

__all__ = [
    "CLUSTERS",
    "decisions_sql",
    "GROUPS",
    "scorecard",
    "failed_calls",
    "failed_calls_in_words",
    "MIN_PAIRS",
    "ALL_PAIRS_UP_TO",
    "Share",
    "compare_models",
    "how_compared",
    "verdict",
    "sequential",
    "sequential_verdict",
    "POWER",
    "Plan",
    "plan",
    "sample_size",
    "plan_numbers",
    "plan_in_words",
    "check_plan",
]
