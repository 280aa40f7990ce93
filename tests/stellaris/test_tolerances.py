"""The bounds that decide whether a Stellaris economy is consistent, tested on both sides,
and which player of a multiplayer save is read.

Every expected value here is written out by hand or computed by the test from the
save's text, never taken from the code under test: a tolerance widened in the code, or
the last player read instead of the first, makes a test here fail.

- `net_monthly[r]` must be `monthly_income[r] - monthly_expenses[r]` within 0.01
  (seed 000's rule, the tolerance docs/formats/stellaris.md states; `workbench/stellaris/invariants.py`), and so must
  every restatement of it.
- A save's net (income - expenses over `budget.current_month`) must be the game's own
  `balance` within 0.01 (formats.md: "`net_monthly[r]` = sum of income minus sum of
  expenses = sum of balance"; `workbench/stellaris/save.py`).
- In `player={ { name=... country=A } { name=... country=B } }` the player is the
  first entry, A: docs/formats/stellaris.md and formats.md say the player's id is read from `player`, and
  the reader reports a multiplayer save as `info` saying "the first is read".

"Just inside" is off by 0.009, "just outside" by 0.011. The exact boundary (0.01) is
left alone: 0.01 has no exact binary value, so which side `x ± 0.01` falls on is an
accident of rounding, not of the rule.
"""

import random
import re
import zipfile
from pathlib import Path

import pytest

import workbench
from tests.conftest import rows
from tests.stellaris.conftest import write_zip
from tests.stellaris.examples import bundle, example
from workbench.stellaris import save, save_zip, synth
from workbench.stellaris.invariants import check_bundle

INSIDE, OUTSIDE = 0.009, 0.011


def found(outputs, player_id=None):
    return [(v.locator, v.severity, v.rule, v.field) for v in check_bundle(outputs, player_id)]


# --- net_monthly = income - expenses (seed 000, invariant 2) --------------------------------
# The example's energy: income 140.0, expenses 120.0, so income - expenses = 20.0.


def resources_with_energy_net(net: float) -> dict:
    resources = example("get_resources")
    assert (resources["monthly_income"]["energy"], resources["monthly_expenses"]["energy"]) == (140.0, 120.0)
    resources["net_monthly"]["energy"] = net
    resources["summary"]["energy_net"] = net  # the summary restates it: only the net itself is off
    return resources


@pytest.mark.parametrize("net", [20.0 + INSIDE, 20.0 - INSIDE], ids=["above", "below"])
def test_a_net_off_by_less_than_0_01_is_consistent(net):
    assert check_bundle({"get_resources": resources_with_energy_net(net)}) == []


@pytest.mark.parametrize("net", [20.0 + OUTSIDE, 20.0 - OUTSIDE, 20.5, 19.6], ids=["above", "below", "+0.5", "-0.4"])
def test_a_net_off_by_more_than_0_01_breaks_the_invariant(net):
    violations = check_bundle({"get_resources": resources_with_energy_net(net)})
    assert [(v.locator, v.severity, v.rule, v.field) for v in violations] == [
        ("tool get_resources", "error", "invariant_net_monthly", "net_monthly.energy")
    ]
    assert violations[0].message == (
        f"`net_monthly.energy` is {net:g} but income - expenses = 140 - 120 = 20 (tolerance 0.01)"
    )


@pytest.mark.parametrize("offset, broken", [(INSIDE, False), (-INSIDE, False), (OUTSIDE, True), (-OUTSIDE, True)])
def test_the_summary_restates_net_monthly_within_0_01(offset, broken):
    resources = example("get_resources")
    assert resources["net_monthly"]["minerals"] == 35.5
    resources["summary"]["minerals_net"] = 35.5 + offset
    expected = [("tool get_resources", "error", "invariant_net_monthly", "summary.minerals_net")] if broken else []
    assert found({"get_resources": resources}) == expected


@pytest.mark.parametrize("amount, broken", [(INSIDE, False), (OUTSIDE, True)])
def test_a_resource_missing_from_net_monthly_may_only_have_a_negligible_net(amount, broken):
    resources = example("get_resources")
    resources["monthly_income"]["food"] = 5.0 + amount
    resources["monthly_expenses"]["food"] = 5.0  # and no `food` in net_monthly
    expected = [("tool get_resources", "error", "invariant_net_monthly", "net_monthly.food")] if broken else []
    assert found({"get_resources": resources}) == expected


@pytest.mark.parametrize("offset, broken", [(INSIDE, False), (-INSIDE, False), (OUTSIDE, True), (-OUTSIDE, True)])
def test_a_full_briefing_carries_its_sources_values_within_0_01(offset, broken):
    outputs = bundle("get_resources", "get_player_status", "get_full_briefing")
    assert outputs["get_resources"]["net_monthly"]["alloys"] == -12.5
    outputs["get_full_briefing"]["economy"]["net_monthly"]["alloys"] = -12.5 + offset
    outputs["get_full_briefing"]["military"]["military_power"] = 52000 + offset
    expected = (
        [
            ("tool get_full_briefing", "error", "invariant_full_briefing", field)
            for field in ("military.military_power", "economy.net_monthly.alloys")
        ]
        if broken
        else []
    )
    assert found(outputs) == expected


# --- a save: net = the game's own balance ----------------------------------------------------


def tiny_save(path: Path, countries: dict[int, dict], players: list[int], date: str = "2250.01.01") -> Path:
    """A save written by hand: `meta`, then a gamestate holding the date, the `player`
    block (one entry per id, in that order) and the given countries, laid out as the game
    lays them out (one tab per depth)."""
    gamestate = synth.clausewitz(
        {
            "version": "Phoenix v4.0.1",
            "date": date,
            "player": [{"name": f"player_{n}", "country": country} for n, country in enumerate(players, 1)],
            "country": {str(country_id): entry for country_id, entry in countries.items()},
        }
    )
    meta = synth.clausewitz({"version": "Phoenix v4.0.1", "name": "Tiny Save", "date": date})
    return write_zip(path, {"meta": meta.encode(), "gamestate": gamestate.encode()})


def country(name: str, income: dict, expenses: dict, balance: dict, military_power: float = 1000.0) -> dict:
    """A country entry: `income`, `expenses` and `balance` map a category to its amounts."""
    return {
        "name": {"key": name},
        "budget": {"current_month": {"income": income, "expenses": expenses, "balance": balance}},
        "military_power": military_power,
        "economy_power": 500.0,
        "tech_power": 400.0,
        "fleet_size": 12,
        "owned_planets": [],
        "modules": {"standard_economy_module": {"resources": {"energy": 1000.0}}},
    }


def energy_country(balance_of_ships: float) -> dict:
    """Energy: income 140, expenses 120, so income - expenses = 20; the game's balance
    sums to 140 + `balance_of_ships`. Minerals agree exactly (income 95.5)."""
    return country(
        "Alpha",
        income={"country_base": {"energy": 140.0, "minerals": 95.5}},
        expenses={"ships": {"energy": 120.0}},
        balance={"country_base": {"energy": 140.0, "minerals": 95.5}, "ships": {"energy": balance_of_ships}},
    )


@pytest.mark.parametrize("ships", [-120.0 - INSIDE, -120.0 + INSIDE], ids=["below", "above"])
def test_a_balance_off_by_less_than_0_01_agrees_with_the_budget(tmp_path, ships):
    path = tiny_save(tmp_path / "inside.sav", {5: energy_country(ships)}, [5])
    snapshot = save.read_snapshot(save_zip.open_save(path))
    assert snapshot.player_id == 5
    assert snapshot.net == {"energy": 20.0, "minerals": 95.5}  # income - expenses, not the balance
    assert snapshot.balance["energy"] == pytest.approx(140.0 + ships, abs=1e-9)
    assert snapshot.violations == []


@pytest.mark.parametrize(
    "ships", [-120.0 - OUTSIDE, -120.0 + OUTSIDE, -120.5, -119.6], ids=["below", "above", "-0.5", "+0.4"]
)
def test_a_balance_off_by_more_than_0_01_is_a_damaged_budget(tmp_path, ships):
    path = tiny_save(tmp_path / "outside.sav", {5: energy_country(ships)}, [5])
    snapshot = save.read_snapshot(save_zip.open_save(path))
    assert snapshot.net == {"energy": 20.0, "minerals": 95.5}
    [violation] = snapshot.violations
    assert (violation.locator, violation.severity, violation.rule, violation.field) == (
        "country 5",
        "error",
        "invariant_net_monthly",
        "budget.current_month.balance.energy",
    )
    balance = round(140.0 + ships, 5)
    assert violation.message == (
        f"the game's balance for energy sums to {balance:g} but income - expenses = 140 - 120 = 20 (tolerance 0.01)"
    )


def test_a_damaged_balance_reaches_the_report_and_the_database(tmp_path):
    inside = tiny_save(tmp_path / "inside.sav", {5: energy_country(-120.0 - INSIDE)}, [5])
    outside = tiny_save(tmp_path / "outside.sav", {5: energy_country(-120.0 + OUTSIDE)}, [5])
    db = tmp_path / "w.duckdb"
    report = workbench.ingest([inside, outside], db=db)
    errors = {
        Path(f.path).name: [(v.locator, v.rule, v.field) for v in f.violations if v.severity == "error"]
        for f in report.files
    }
    assert errors == {
        "inside.sav": [],
        "outside.sav": [("country 5", "invariant_net_monthly", "budget.current_month.balance.energy")],
    }
    # Both stay records, with the budget's net (not the balance) stored.
    assert rows(
        db,
        "SELECT s.path LIKE '%outside.sav', r.net FROM stellaris_resources r JOIN sources s "
        "USING (source_id) WHERE r.resource = 'energy' ORDER BY 1",
    ) == [(False, 20.0), (True, 20.0)]


# --- a multiplayer save: the first player is the player ------------------------------------

ALPHA = country(
    "Alpha",
    income={"country_base": {"energy": 140.0, "minerals": 95.5}},
    expenses={"ships": {"energy": 120.0}},
    balance={"country_base": {"energy": 140.0, "minerals": 95.5}, "ships": {"energy": -120.0}},
    military_power=52000.0,
)
BETA = country(
    "Beta",
    income={"country_base": {"energy": 300.0, "alloys": 40.0}},
    expenses={"ships": {"energy": 230.0, "alloys": 55.0}},
    balance={"country_base": {"energy": 300.0, "alloys": 40.0}, "ships": {"energy": -230.0, "alloys": -55.0}},
    military_power=7000.0,
)


@pytest.mark.parametrize(
    "players, expected",
    [
        ([5, 9], {"player_id": 5, "key": "Alpha", "net": {"energy": 20.0, "minerals": 95.5}, "military_power": 52000}),
        ([9, 5], {"player_id": 9, "key": "Beta", "net": {"energy": 70.0, "alloys": -15.0}, "military_power": 7000}),
    ],
    ids=["alpha-first", "beta-first"],
)
def test_a_multiplayer_save_is_read_for_its_first_player(tmp_path, players, expected):
    path = tiny_save(tmp_path / "multiplayer.sav", {5: ALPHA, 9: BETA}, players)
    snapshot = save.read_snapshot(save_zip.open_save(path))
    assert snapshot.player_id == expected["player_id"]
    assert snapshot.empire_name_key == expected["key"]
    assert snapshot.net == expected["net"]
    status = snapshot.outputs["get_player_status"]
    assert (status["player_id"], status["military_power"]) == (expected["player_id"], expected["military_power"])
    assert snapshot.outputs["get_resources"]["net_monthly"] == expected["net"]
    assert [(v.locator, v.severity, v.rule) for v in snapshot.violations] == [("player", "info", "multiplayer_save")]
    first, last = players
    assert snapshot.violations[0].message == (f"the save has 2 players (countries {first}, {last}); the first is read")


# The synthetic campaign's save, made multiplayer: the campaign's player first, a rival
# (country 12, an economy of its own) last.


def multiplayer_campaign_save(path: Path, players_first_to_last) -> tuple[bytes, int]:
    """The save `synthetic_save` writes for state 0, with a `player` block naming more
    than one country; returns the gamestate and the campaign's player id."""
    rng = random.Random("save-tests")
    campaign = synth.new_campaign(rng, 0)
    state = campaign.states[0]
    text = synth.gamestate(campaign, state, rng, [])
    single = synth.clausewitz({"player": [{"name": "synthetic_player", "country": campaign.player_id}]})
    ids = [campaign.player_id if who == "player" else who for who in players_first_to_last]
    several = synth.clausewitz({"player": [{"name": f"player_{n}", "country": c} for n, c in enumerate(ids, 1)]})
    assert text.count(single) == 1
    text = text.replace(single, several)
    synth.write_save(path, synth.meta(campaign, state), text)
    return text.encode(), campaign.player_id


def budget_by_lines(gamestate: bytes, country_id: int) -> dict[str, dict[str, float]]:
    """Income, expenses and balance of a country's current month, summed per resource by
    reading the lines of the gamestate, independently of the workbench's parser."""
    countries = gamestate.index(b"\ncountry=\n{")
    start = gamestate.index(b"\n\t%d=\n\t{" % country_id, countries)
    end = gamestate.index(b"\n\t}\n", start)
    entry = gamestate[start:end]
    month = entry.index(b"\n\t\t\tcurrent_month=\n\t\t\t{")
    month_text = entry[month : entry.index(b"\n\t\t\t}\n", month) + 1]
    sums = {}
    for part in ("income", "expenses", "balance"):
        at = month_text.index(b"\n\t\t\t\t%s=\n\t\t\t\t{" % part.encode())
        block = month_text[at : month_text.index(b"\n\t\t\t\t}\n", at)]
        totals: dict[str, float] = {}
        for resource, amount in re.findall(rb"\n\t{6}(\w+)=(-?[\d.]+)", block):
            totals[resource.decode()] = totals.get(resource.decode(), 0.0) + float(amount)
        sums[part] = totals
    return sums


def nets_by_lines(gamestate: bytes, country_id: int) -> dict[str, float]:
    budget = budget_by_lines(gamestate, country_id)
    income, expenses = budget["income"], budget["expenses"]
    return {r: income.get(r, 0.0) - expenses.get(r, 0.0) for r in {*income, *expenses}}


def test_a_multiplayer_campaign_save_is_the_first_players(tmp_path):
    rival = 12
    gamestate, player = multiplayer_campaign_save(tmp_path / "autosave.sav", ["player", rival])
    mine, theirs = nets_by_lines(gamestate, player), nets_by_lines(gamestate, rival)
    assert mine["energy"] != pytest.approx(theirs["energy"], abs=1.0)  # the two countries differ
    with zipfile.ZipFile(tmp_path / "autosave.sav") as archive:
        assert archive.read("gamestate") == gamestate
    db = tmp_path / "w.duckdb"
    [file] = workbench.ingest([tmp_path / "autosave.sav"], db=db).files
    assert (file.status, file.records, file.rejected) == ("ingested", 1, 0)
    assert [(v.locator, v.severity, v.rule) for v in file.violations if v.rule == "multiplayer_save"] == [
        ("player", "info", "multiplayer_save")
    ]
    assert [v for v in file.violations if v.severity == "error"] == []
    assert rows(db, "SELECT player_id FROM stellaris_snapshots") == [(player,)]
    stored = dict(rows(db, "SELECT resource, net FROM stellaris_resources WHERE income <> 0 OR expenses <> 0"))
    assert set(stored) == set(mine)
    for resource, net in mine.items():
        assert stored[resource] == pytest.approx(net, abs=1e-6), resource


def test_a_multiplayer_campaign_save_with_the_rival_first_is_the_rivals(tmp_path):
    rival = 12
    gamestate, player = multiplayer_campaign_save(tmp_path / "autosave.sav", [rival, "player"])
    snapshot = save.read_snapshot(save_zip.open_save(tmp_path / "autosave.sav"))
    assert snapshot.player_id == rival != player
    expected = nets_by_lines(gamestate, rival)
    assert snapshot.net == pytest.approx(expected, abs=1e-6)
