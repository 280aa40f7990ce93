"""The figures register themselves: each figure's module marks its public function with
its kind (`workbench.plots.kinds`), which `workbench plot`, the demo and the report draw."""

import pytest

from workbench import plots
from workbench.plots.kinds import Figure, figure_kind, figures

# The order of `workbench plot --help`, the demo's figures and the report's.
KINDS = [
    "emotions",
    "economy",
    "budget",
    "scorecard",
    "decisions",
    "attacks",
    "attack-study",
    "families",
    "trace-steps",
    "play",
]


def test_every_kind_is_its_module_s_function_and_a_name_of_the_package():
    assert list(plots.FIGURES) == list(figures()) == KINDS
    for kind, figure in plots.FIGURES.items():
        assert figure.kind == kind and figure.function.__module__.startswith("workbench.plots.")
        assert getattr(plots, figure.function.__name__) is figure.function
        assert callable(figure.function.spec)
    named = {figure.function.__name__ for figure in plots.FIGURES.values()}
    assert set(plots.__all__) == named | {"save", "FIGURES", "figure", "figure_spec"}
    with pytest.raises(AttributeError):
        plots.no_such_figure  # noqa: B018


def test_what_each_figure_takes():
    taking = {
        kind: [name for name in ("takes_game", "takes_aliases", "strict", "across_games") if getattr(figure, name)]
        for kind, figure in plots.FIGURES.items()
    }
    assert {kind: names for kind, names in taking.items() if names} == {
        "emotions": ["takes_game"],
        "scorecard": ["takes_aliases", "across_games"],
        "decisions": ["takes_aliases", "across_games"],
        "attacks": ["takes_game"],
        "attack-study": ["takes_game"],
        "families": ["strict"],
        "trace-steps": ["strict"],
        "play": ["takes_aliases"],
    }


def test_a_figure_is_given_only_what_it_takes():
    def chart(con):
        raise AssertionError("the spec is drawn, not the chart")

    chart.spec = lambda con, **given: given
    assert Figure("x", chart, 1)("con", "g1", {"a": "m"}) == {}
    assert Figure("x", chart, 1, takes_game=True)("con", "g1", {"a": "m"}) == {"game_id": "g1"}
    assert Figure("x", chart, 1, takes_aliases=True, strict=True)("con", "g1", {"a": "m"}) == {
        "aliases": {"a": "m"},
        "strict": True,
    }


def test_a_kind_marked_by_another_function_is_refused():
    drawn = figures()["emotions"].function

    def another(con):
        pass

    with pytest.raises(ValueError, match="figure kind 'emotions' is marked twice"):
        figure_kind("emotions", order=99)(another)
    assert figures()["emotions"].function is drawn
