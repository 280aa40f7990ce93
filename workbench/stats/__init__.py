"""The statistics behind every conclusion: intervals of a share of valid decisions that
respect the games those decisions came from, comparisons whose p-value and interval are
one test, Holm's correction, the number of games a question needs, and a sequential test
that may be checked after every game.

Decisions come in games. A model's decisions in one game share a prompt, a history and a
state, so they succeed and fail together; counted as independent coin flips they give
intervals that are too narrow and differences that are not there. How much, is the
*intra-class correlation* (ICC) of validity within games: a share of n decisions from
games of sizes n_g has the variance p (1 - p) / n times the design effect
1 + (m - 1) ICC, with m = sum n_g^2 / n (Kish 1965; Donner & Klar 2000, ch. 2).

The ICC is estimated once per format, from every game of every model in it (`Between`):
the one-way ANOVA estimator with games nested in their model (Fleiss, Levin & Paik 2003,
ch. 15), whose between-game mean square rests on games - models degrees of freedom. A
model seen in one game, or in games that happen to agree, so borrows what games in its
format typically do (the pooled variance of a random-effects model; Smyth 2004, Stat Appl
Genet Mol Biol 3:3, for the same idea in moderated t). The interval is Wilson's at the
effective sample size n / design effect (Dean & Pagano 2015, Stat Med 34:3315; Korn &
Graubard 1998, Survey Methodology 24:193), with the quantile of Student's t at
Satterthwaite's degrees of freedom for a variance that is part known (binomial) and part
estimated (between games): d (deff / (deff - 1))^2, with d the ICC's degrees of freedom.
At ICC 0 that is the normal quantile; as the between-game part grows it tends to t(d).
The interval moves smoothly with every decision and every game: there is no switch.

Where the ICC cannot be measured (one game per model, or every game exactly at its
model's share, as when all are all valid) it is unknown, not 0: a share then takes ICC
1, each game one observation. A
model seen in one game, in a format with nothing to borrow from, so gets the interval of
one observation (Wilson at n = 1, nearly all of [0, 1]): one game cannot tell a model
from the game it played.

Two shares are compared by one test. Unpaired: Newcombe's hybrid score interval from the
two clustered Wilson intervals; paired (the same turns): Newcombe's paired interval at the
effective counts. The p-value is that interval's inversion, the largest level at which it
excludes no difference, so p < 0.05 exactly when the 95% interval excludes 0; no count is
rounded.

Its parts, each imported from here (`from workbench import stats; stats.wilson(...)`):
`shares` (one share and its interval), `clustering` (the ICC and the design effect),
`differences` (two shares compared, Holm), `planning` (the games a question needs) and
`anytime` (the sequential test).
"""

from workbench.stats.anytime import Sequential, e_process, sequential
from workbench.stats.clustering import (
    EFFECT_ICC_LEVEL,
    FREEDOM_SHARE,
    NOTHING,
    PLAN_ICC_LEVEL,
    Between,
    between_arrays,
    between_games,
    design_effect,
    effects,
    freedoms,
    icc_anova,
)
from workbench.stats.differences import (
    MIN_EXPECTED,
    MIN_GAMES,
    Paired,
    expected_counts,
    fisher,
    holm,
    inverted,
    mcnemar_exact,
    newcombe,
    newcombe_arrays,
    newcombe_at,
    newcombe_paired,
    paired_effects,
    paired_interval,
    paired_test,
    two_proportion_p,
    unpaired_test,
)
from workbench.stats.planning import MAX_GAMES, decisions_needed, expected_bound, expected_freedom, games_needed
from workbench.stats.shares import (
    ALPHA,
    LEVEL,
    Clustered,
    Z,
    clustered,
    intervals,
    quantile,
    share,
    share_arrays,
    wilson,
)

__all__ = [
    # one share
    "LEVEL",
    "ALPHA",
    "Z",
    "wilson",
    "quantile",
    "intervals",
    "Clustered",
    "share_arrays",
    "share",
    "clustered",
    # how the games of a format differ
    "PLAN_ICC_LEVEL",
    "EFFECT_ICC_LEVEL",
    "FREEDOM_SHARE",
    "Between",
    "NOTHING",
    "between_games",
    "between_arrays",
    "icc_anova",
    "design_effect",
    "freedoms",
    "effects",
    # two shares compared
    "MIN_EXPECTED",
    "MIN_GAMES",
    "inverted",
    "newcombe_at",
    "newcombe_arrays",
    "newcombe",
    "unpaired_test",
    "fisher",
    "expected_counts",
    "two_proportion_p",
    "Paired",
    "paired_effects",
    "mcnemar_exact",
    "newcombe_paired",
    "paired_interval",
    "paired_test",
    "holm",
    # how many games
    "decisions_needed",
    "expected_freedom",
    "expected_bound",
    "MAX_GAMES",
    "games_needed",
    # can I stop now?
    "e_process",
    "Sequential",
    "sequential",
]
