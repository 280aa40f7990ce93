"""The budget/balance check of a save (`Budget`), pinned by hand-computed sums.

Seed 000: "'net_monthly': {str: float},  # KEY NAME: net = income - expense". A save's
`budget.current_month` holds income, expenses and the game's own balance, each split in
categories; the check sums each per resource and reports a resource whose game balance is
not income - expenses. Every expected number below is computed by hand in the comments.
"""

import pytest

from workbench.stellaris.clausewitz import parse
from workbench.stellaris.save import Budget, _stockpiles


def country(income: str, expenses: str, balance: str) -> dict:
    return parse(
        f"budget={{ current_month={{ income={{ {income} }} expenses={{ {expenses} }} balance={{ {balance} }} }} }}"
    )


BALANCED = country(
    "country_base={ energy=20 } planet_jobs={ energy=5.5 minerals=3 }",  # energy 25.5, minerals 3
    "ship_upkeep={ energy=4 alloys=2 }",  # energy 4, alloys 2
    "country_base={ energy=20 } planet_jobs={ energy=1.5 minerals=3 } ship_upkeep={ alloys=-2 }",
)  # energy 21.5, minerals 3, alloys -2


def test_categories_are_summed_per_resource():
    budget = Budget.of(BALANCED)
    assert budget.income == {"energy": 25.5, "minerals": 3.0}
    assert budget.expenses == {"energy": 4.0, "alloys": 2.0}
    assert budget.balance == {"energy": 21.5, "minerals": 3.0, "alloys": -2.0}
    assert budget.resources == ["energy", "minerals", "alloys"]
    assert budget.net == {"energy": 21.5, "minerals": 3.0, "alloys": -2.0}
    assert budget.mismatches(7) == []


def test_net_is_rounded_to_five_decimals():
    budget = Budget.of(country("a={ energy=0.1 } b={ energy=0.2 }", "", "a={ energy=0.3 }"))
    assert budget.income == {"energy": 0.3}  # 0.1 + 0.2 in floats is 0.30000000000000004
    assert budget.net == {"energy": 0.3}
    budget = Budget.of(country("a={ energy=1.123456 }", "a={ energy=0.000001 }", ""))
    assert budget.income == {"energy": 1.12346}
    assert budget.net == {"energy": 1.12346}  # 1.12346 - 0.0 (0.000001 rounds to 0)


def test_a_balance_that_is_not_income_minus_expenses_is_an_error():
    budget = Budget.of(country("a={ energy=20 }", "a={ energy=4 }", "a={ energy=11 }"))  # 20 - 4 = 16, not 11
    (found,) = budget.mismatches(3)
    assert (found.locator, found.severity, found.rule, found.field) == (
        "country 3",
        "error",
        "invariant_net_monthly",
        "budget.current_month.balance.energy",
    )
    assert found.message == (
        "the game's balance for energy sums to 11 but income - expenses = 20 - 4 = 16 (tolerance 0.01)"
    )


@pytest.mark.parametrize(
    "income, expenses, balance, resource, message",
    [
        # only the balance names it: income 0 - expenses 0 = 0, not 2
        ("", "", "a={ minerals=2 }", "minerals", "sums to 2 but income - expenses = 0 - 0 = 0"),
        # only the expenses name it: 0 - 3 = -3, the game says 0
        ("", "a={ alloys=3 }", "", "alloys", "sums to 0 but income - expenses = 0 - 3 = -3"),
        # only the income names it: 5 - 0 = 5, the game says 0
        ("a={ food=5 }", "", "", "food", "sums to 0 but income - expenses = 5 - 0 = 5"),
    ],
)
def test_a_resource_missing_from_a_part_counts_as_zero_there(income, expenses, balance, resource, message):
    (found,) = Budget.of(country(income, expenses, balance)).mismatches(1)
    assert found.field == f"budget.current_month.balance.{resource}"
    assert message in found.message


@pytest.mark.parametrize(
    "balance, flagged",
    [
        ("10.004", False),
        ("9.996", False),  # 0.004 off either way: within the tolerance
        ("10.02", True),
        ("9.98", True),  # 0.02 off either way: beyond it
        ("10", False),
    ],
)
def test_the_tolerance_on_both_sides(balance, flagged):
    budget = Budget.of(country("a={ energy=12 }", "a={ energy=2 }", f"a={{ energy={balance} }}"))  # net 10
    assert bool(budget.mismatches(1)) is flagged


def test_text_amounts_are_not_summed_and_repeated_categories_count_once():
    budget = Budget.of(country('a={ energy="x" minerals=4 } b={ minerals=1 } b={ minerals=100 }', "", ""))
    assert budget.income == {"minerals": 5.0}  # 4 + the first `b` (1); "x" is not a number


def test_a_country_without_budget_has_no_mismatch():
    budget = Budget.of({})
    assert (budget.income, budget.expenses, budget.balance, budget.net) == ({}, {}, {}, {})
    assert budget.mismatches(0) == []


def test_stockpiles_are_the_numeric_resources_of_the_economy_module():
    found = _stockpiles(
        parse('modules={ standard_economy_module={ resources={ energy=100 minerals=50.5 name="x" } } }')
    )
    assert found == {"energy": 100.0, "minerals": 50.5}
    assert all(type(v) is float for v in found.values())
    assert _stockpiles({}) == {}


def test_a_difference_of_exactly_the_tolerance_is_accepted():
    # income 0.01 - expenses 0 = 0.01, the game says 0: off by exactly 0.01, which the
    # message calls the tolerance, so it passes; 0.02 off does not.
    assert Budget.of(country("a={ energy=0.01 }", "", "")).mismatches(1) == []
    assert len(Budget.of(country("a={ energy=0.02 }", "", "")).mismatches(1)) == 1
