"""Damage rules that mutation testing found unpinned (seed 003, 003_137d476ee76b989c.txt):
"if `kind == raise`, `payload.amount` must be integer `> 0`" on both sides of the bound,
and the message of a timestamp that is not UTC."""

import pytest

import workbench
from tests.conftest import write_lines
from tests.damage.events import event


def violations(tmp_path, *records):
    (file,) = workbench.validate([write_lines(tmp_path / "g.events.jsonl", records)]).files
    return [(v.locator, v.rule, v.field, v.message) for v in file.violations if v.severity == "error"]


def raise_of(amount):
    record = event("action_submitted")
    record["payload"]["action"]["payload"] = {"amount": amount}
    return record


@pytest.mark.parametrize("amount, broken", [(0, True), (1, False), (2, False), (-1, True)])
def test_raise_amount_on_both_sides_of_zero(tmp_path, amount, broken):
    found = violations(tmp_path, raise_of(amount))
    if broken:
        assert [(rule, field) for _, rule, field, _ in found] == [
            ("raise_amount_positive_int", "payload.action.payload.amount")
        ]
        assert found[0][3] == f"a raise needs payload.amount to be an integer > 0; found {amount}"
    else:
        assert found == []


@pytest.mark.parametrize(
    "ts, offset", [("2026-02-06T11:38:54+02:00", "2:00:00"), ("2026-02-06T04:08:54-05:30", "-1 day, 18:30:00")]
)
def test_a_timestamp_with_an_offset_says_which(tmp_path, ts, offset):
    assert violations(tmp_path, event("phase_changed", ts=ts)) == [
        ("line 1", "ts_not_utc", "ts", f"expected a UTC timestamp; found offset {offset}; found {ts!r}")
    ]
