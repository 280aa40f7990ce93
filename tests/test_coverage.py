"""The promises of the intervals and verdicts, kept in simulation: a small grid of
`bench.coverage` (fixed seed, so the same numbers every run) against the targets of the
docs: 95% intervals covering at least 93% (at least 90% with one game), at most 5.5% false
differences, planned games with 75-85% power, rating intervals covering 93-97%."""

import numpy as np
import pytest

from bench import coverage

REPLICATES = 1000


@pytest.mark.parametrize(("p", "icc"), [(0.6, 0.1), (0.97, 0.3), (0.9, 0.0)])
def test_the_scorecards_interval_covers_at_least_93_percent(p, icc):
    rng = np.random.default_rng(coverage.SEED)
    for games in (1, 2, 5, 30):
        held, given = coverage.scorecard_cell(rng, p, icc, games, REPLICATES)
        assert given == 1 and held >= (0.90 if games == 1 else 0.93), (p, icc, games, held)


@pytest.mark.parametrize("cell", [coverage.unpaired_cell, coverage.paired_cell])
def test_equally_valid_models_are_called_different_at_most_5_5_percent_of_the_time(cell):
    rng = np.random.default_rng(coverage.SEED)
    for p, icc in ((0.6, 0.1), (0.97, 0.3), (0.9, 0.0)):
        for games in (2, 3, 10):
            assert cell(rng, p, icc, games, REPLICATES) <= 0.055, (cell.__name__, p, icc, games)


def test_the_sequential_test_checked_after_every_game_keeps_its_5_percent():
    rng = np.random.default_rng(coverage.SEED)
    for paired in (True, False):
        false, _ = coverage.sequential_cell(rng, 0.6, 0.6, 0.3, REPLICATES, paired=paired)
        found, _ = coverage.sequential_cell(rng, 0.9, 0.8, 0.0, 200, paired=paired)
        assert false <= 0.05 and found > 0.9


@pytest.mark.parametrize(("difference", "p", "icc"), [(0.1, 0.97, 0.0), (0.1, 0.9, 0.1), (0.1, 0.6, 0.3)])
def test_the_planned_games_give_75_to_85_percent_power(difference, p, icc):
    _, power = coverage.planner_cell(np.random.default_rng(coverage.SEED), difference, p, icc, REPLICATES)
    assert 0.75 <= power <= 0.85


@pytest.mark.slow
def test_rating_intervals_cover_93_to_97_percent():
    held, half, _ = coverage.ratings_cell(np.random.default_rng(coverage.SEED), (1.0, 1.5, 2.2, 3.3), 60, 120, 150)
    assert 0.93 <= held <= 0.97 and 1.7 < half < 2.4
