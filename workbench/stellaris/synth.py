"""A synthetic Stellaris campaign per scale unit, written the way the real programs
write (formats.md):

- a folder of 12 yearly autosaves (`autosave_2201.01.01.sav`, ...): zips of `meta` and
  `gamestate` in real Clausewitz structure (bare top level, nested blocks, scalar lists,
  lists of blocks, repeated keys, `none` slots, 4294967295 for "no id", templated
  names, numeric keys that lost their indentation, a key split from its `=`), a player
  id that is not 0 (and a country 0 that is not the player), budgets whose nets trend
  and go negative, wars that start and end; AI empires (one of them a fallen empire)
  with budgets of their own that trend too, and countries without budget lines;
- the save extractor's JSON outputs with the real drift (`total_pops`, `monthly_net`,
  `researched_techs`, treaties as objects, leaders without a name, unknown classes,
  `get_armies.json`, a truncated file, bundles, one whose full briefing disagrees);
- the companion's SQLite history of the same campaign.

Injected errors are listed per file as they are reported (locator, field, rule).
"""

from __future__ import annotations

import json
import random
import zipfile
from pathlib import Path
from typing import Any

from workbench.stellaris.synth_campaign import (
    GOVERNMENTS,
    NO_ID,
    PLANET_CLASSES,
    ZIP_TIME,
    Bare,
    Campaign,
    Raw,
    Repeat,
    State,
    _budget,
    clausewitz,
    meta,
    name_key,
    new_campaign,
    templated,
)
from workbench.stellaris.synth_outputs import (
    extractor_files,
    history_rows,
    write_history,
)

# --- the gamestate --------------------------------------------------------------------------


def gamestate(campaign: Campaign, state: State, rng: random.Random, faults: list[dict]) -> str:
    pairs = {
        "version": "Phoenix v4.0.1",
        "version_control_revision": 108,
        "name": campaign.empire_name,
        "date": state.date,
        "required_dlcs": ["Federations", "Nemesis", "Overlord", "The Machine Age", "Utopia"],
        "player": [{"name": "synthetic_player", "country": campaign.player_id}],
        "tick": rng.randrange(0, 30),
        "random_log_day": 0,
        "species_db": _species(campaign),
        "pop_groups": {
            str(1000 + k): {"species": rng.randrange(0, 4), "size": rng.randrange(1, 900)} for k in range(25)
        },
        "galactic_object": _systems(rng),
        "planets": {"planet": _planets(campaign, state, rng, faults)},
        "country": _countries(campaign, state, rng, faults),
        "construction": {"queue_mgr": {"queues": {}}, "item_mgr": {"items": {}}},
        "fleet": _fleets(state, rng),
        "war": _wars(campaign, state),
        "last_created_pop": NO_ID,
    }
    return clausewitz(pairs)


def _species(campaign: Campaign) -> dict:
    entries = {"0": {"traits": {}, "extra_trait_points": 0, "gender": Bare("not_set")}}
    for number, name in enumerate((campaign.species, *campaign.rivals.values()), start=1):
        entries[str(number)] = {
            "name_list": "MOL4",
            "name": name_key(f"SPEC_{name}"),
            "class": "MOL",
            "traits": {"trait": Repeat(["trait_quick_learners", "trait_talented", "trait_adaptive"])},
            "gender": Bare("not_set"),
        }
    return entries


def _systems(rng: random.Random) -> dict:
    systems = {}
    for number in range(12):
        systems[str(number)] = {
            "coordinate": {
                "x": round(rng.uniform(-300, 300), 3),
                "y": round(rng.uniform(-300, 300), 3),
                "origin": NO_ID,
            },
            "type": Bare("star"),
            "name": name_key(f"NAME_System_{number}"),
            "hyperlane": [{"to": (number + 1) % 12, "length": rng.randrange(20, 90)}],
            "fleet_presence": [rng.randrange(20, 9000) for _ in range(rng.randint(0, 4))],
            "flags": {},
        }
    # A key split from its `=` by a newline, as in the corpus save.
    systems["3"]["variables"] = Raw("\t\tvariables=\n\t\t{\n\t\t\torigin_shoulders_of_giants_planets\n=0\n\t\t}\n")
    return systems


def _planets(campaign: Campaign, state: State, rng: random.Random, faults: list[dict]) -> dict:
    planets: dict = {}
    for other in range(6):  # planets nobody or a rival owns
        owner = rng.choice([*campaign.rivals, NO_ID])
        planets[str(10 + other)] = _planet(
            f"NAME_Rock_{other}", rng.choice(PLANET_CLASSES), owner, rng.randrange(0, 30), 50.0, rng
        )
    planets["16"] = Bare("none")  # a deleted planet's slot
    for number, colony in enumerate(state.colonies):
        owner = campaign.player_id
        if state.index == 4 and number == len(state.colonies) - 1:
            owner = 0  # listed as the player's, owned by country 0
            faults.append({"locator": f"planet {colony.planet_id}", "field": "owner", "rule": "invariant_player_id"})
        planet = _planet(
            f"{campaign.species.upper()}_PLANET_{colony.name}",
            colony.planet_class,
            owner,
            colony.population,
            colony.stability,
            rng,
        )
        if number == 0:
            # Numeric keys that lost their indentation, as the corpus save has them.
            planet["pop_category_changes"] = Raw(
                "\t\t\tpop_category_changes=\n\t\t\t{\n\t\t\t\tdemotions=\n\t\t\t\t{\n"
                + "".join(f"{k}=\n\t\t\t\t\t{{\n\t\t\t\t\t}}\n" for k in (560, 561, 562))
                + "\t\t\t\t}\n\t\t\t}\n"
            )
        planets[str(colony.planet_id)] = planet
    return planets


def _planet(name: str, planet_class: str, owner: int, pops: int, stability: float, rng: random.Random) -> dict:
    return {
        "name": name_key(name),
        "planet_class": planet_class,
        "coordinate": {"x": round(rng.uniform(-50, 50), 3), "y": round(rng.uniform(-50, 50), 3), "origin": 258},
        "orbit": rng.randrange(0, 90),
        "planet_size": rng.randrange(8, 25),
        "owner": owner,
        "controller": owner,
        "original_owner": owner,
        "num_sapient_pops": pops,
        "stability": round(stability, 4),
        "pop_groups": [rng.randrange(1000, 1025) for _ in range(3)],
        "timed_modifier": {"items": {}},
        "last_bombardment": "0.01.01",
    }


# Countries beside the empires, as the game keeps them: one whose budget names no
# amount (an event country) and one without a budget block. Neither has budget lines.
NO_BUDGET_COUNTRIES = {
    "44": {
        "name": name_key("global_event_country"),
        "type": "global_event",
        "budget": {"current_month": {"income": {"none": {}}, "expenses": {"none": {}}, "balance": {"none": {}}}},
    },
    "45": {"name": name_key("NAME_Wandering_Swarm"), "type": "swarm"},
}
FALLEN_EMPIRE = 43  # one of the rivals' ids


def _countries(campaign: Campaign, state: State, rng: random.Random, faults: list[dict]) -> dict:
    countries: dict[str, Any] = {}
    for number, (country_id, species) in enumerate(campaign.rivals.items()):
        countries[str(country_id)] = _rival(campaign, number, country_id, species, state, rng)
        if country_id == 0:
            countries["1"] = Bare("none")  # a destroyed empire's slot
    countries.update(NO_BUDGET_COUNTRIES)
    countries[str(campaign.player_id)] = _player_country(campaign, state, rng, faults)
    return dict(sorted(countries.items(), key=lambda item: int(item[0])))


def rival_name(campaign: Campaign, number: int, species: str) -> dict:
    """Each rival a government of its own, so two rivals of one species differ."""
    government = GOVERNMENTS[(GOVERNMENTS.index(campaign.government) + 1 + number) % len(GOVERNMENTS)]
    return templated("%ADJECTIVE%", [("adjective", name_key(f"SPEC_{species}")), ("1", name_key(government))])


def rival_budget(campaign: Campaign, country_id: int, state: State) -> tuple[dict, dict]:
    """A rival's budget: its own rates (a share of the player's, drawn once per rival)
    growing over the campaign, costlier while it fights the player. Drawn from
    generators of its own, so the rest of the campaign does not depend on it."""
    steady = random.Random(f"{campaign.slug}:{country_id}")
    rates = {
        r: (inc * steady.uniform(0.4, 1.8), exp * steady.uniform(0.6, 1.5), gi, ge)
        for r, (inc, exp, gi, ge) in campaign.rates.items()
        if r not in ("sr_zro", "sr_dark_matter")
    }
    at_war = any(war["enemy"] == country_id for war in state.wars)
    return _budget(rates, state.index, at_war, random.Random(f"{campaign.slug}:{country_id}:{state.index}"))


def _rival(campaign: Campaign, number: int, country_id: int, species: str, state: State, rng: random.Random) -> dict:
    """A country with its own, different economy: reading it instead of the player's
    (a hard-coded 0) gives visibly wrong numbers."""
    income, expenses = rival_budget(campaign, country_id, state)
    return {
        "name": rival_name(campaign, number, species),
        "budget": {"current_month": {"income": income, "expenses": expenses, "balance": _balance(income, expenses)}},
        "military_power": round(rng.uniform(100, 90000), 5),
        "economy_power": round(rng.uniform(100, 5000), 5),
        "tech_power": round(rng.uniform(100, 5000), 5),
        "fleet_size": rng.randrange(0, 400),
        "owned_planets": [10 + rng.randrange(0, 6)],
        "modules": {"standard_economy_module": {"resources": {"energy": round(rng.uniform(0, 9000), 5)}}},
        # Written near the end of the entry, as the game does.
        "type": "fallen_empire" if country_id == FALLEN_EMPIRE else "default",
    }


def _player_country(campaign: Campaign, state: State, rng: random.Random, faults: list[dict]) -> dict:
    balance = _balance(state.income, state.expenses)
    if state.index == 7:
        # The game's balance disagreeing with income - expenses: a damaged budget.
        category = next(c for c in balance if "energy" in balance[c])
        balance[category]["energy"] = round(balance[category]["energy"] + 25.0, 5)
        faults.append(
            {
                "locator": f"country {campaign.player_id}",
                "field": "budget.current_month.balance.energy",
                "rule": "invariant_net_monthly",
            }
        )
    last_income = {c: {r: round(v * 0.97, 5) for r, v in amounts.items()} for c, amounts in state.income.items()}
    return {
        "save_on_death": 1,
        "flag": {
            "icon": {"category": "domination", "file": "domination_22.dds"},
            "colors": ["teal", "brown", "black", "null"],
        },
        "color_index": -1,
        "name": templated(
            "%ADJECTIVE%", [("adjective", name_key(f"SPEC_{campaign.species}")), ("1", name_key(campaign.government))]
        ),
        "tech_status": {"technology": Repeat(state.techs), "level": Repeat([1] * len(state.techs))},
        "last_date_was_human": state.date,
        "last_date_at_war": state.date if state.wars else "0.01.01",
        "budget": {
            "current_month": {
                "income": state.income,
                "expenses": state.expenses,
                "balance": balance,
                "extra_income": {},
                "trade_income": {},
            },
            # Last month's budget is there too, and must not be read instead.
            "last_month": {
                "income": last_income,
                "expenses": state.expenses,
                "balance": _balance(last_income, state.expenses),
            },
            "current_month_commercial_pacts": 0,
        },
        "military_power": state.military_power,
        "economy_power": state.economy_power,
        "victory_rank": rng.randint(1, 9),
        "tech_power": state.tech_power,
        "fleet_size": state.fleet_size,
        "used_naval_capacity": state.fleet_size,
        "empire_size": 20 + 9 * state.index,
        "num_sapient_pops": sum(c.population for c in state.colonies),
        "ai": {
            "initialized": True,
            "budget": {"reserved": {}},
            "attitude": Repeat([{"country": cid, "attitude": Bare("cautious")} for cid in campaign.rivals]),
        },
        "capital": state.colonies[0].planet_id,
        "owned_leaders": [rng.randrange(100000, 200000) for _ in range(4)],
        "owned_planets": [c.planet_id for c in state.colonies],
        "holding_planets": Raw(
            "\t\tholding_planets=\n\t\t{\n\t\t\t\n\t\t\t{\n\t\t\t\tkey=subject_holding"
            "\t\t\t\tvalue=450\t\t\t}\n\n\t\t}\n"
        ),
        "controlled_planets": state.controlled,
        "modules": {
            "standard_event_module": {
                "delayed_event": {
                    "event": "country.2050",
                    "days": 173,
                    "scope": {"type": Bare("country"), "id": campaign.player_id, "random": [0, 639387581]},
                }
            },
            "standard_economy_module": {"resources": state.stockpiles},
            "standard_leader_module": {"enabled": True, "leaders": [150995373, 100663673]},
        },
        "fleets_manager": {
            "owned_fleets": [
                {
                    "fleet": fid,
                    "ownership_status": Bare("normal"),
                    "lease_period": 0,
                    "debtor": NO_ID,
                    "previous_owner": NO_ID,
                }
                for fid in state.fleet_ids
            ]
        },
        "war_allies": [12] if state.wars else {},
        "type": "default",
    }


def _balance(income: dict, expenses: dict) -> dict:
    balance: dict[str, dict[str, float]] = {"none": {}}
    for category in dict.fromkeys([*income, *expenses]):
        gained, spent = income.get(category, {}), expenses.get(category, {})
        amounts = {r: round(gained.get(r, 0.0) - spent.get(r, 0.0), 5) for r in dict.fromkeys([*gained, *spent])}
        if amounts:
            balance[category] = amounts
    return balance


def _fleets(state: State, rng: random.Random) -> dict:
    fleets: dict[str, Any] = {}
    for number, fleet_id in enumerate(state.fleet_ids):
        fleets[str(fleet_id)] = {
            "name": templated("%SEQ%", [("fmt", name_key("HUMAN1_FLEET_FORMAT")), ("num", {"key": str(number + 1)})]),
            "ships": [rng.randrange(1000, 90000) for _ in range(rng.randint(1, 5))],
            "combat": {"coordinate": {"x": 0, "y": 0, "origin": NO_ID}},
            "military_power": round(rng.uniform(0, 900), 3),
        }
    fleets["7"] = Bare("none")
    return fleets


def _wars(campaign: Campaign, state: State) -> dict:
    wars: dict[str, Any] = {"1": Bare("none")}
    rival_ids = [cid for cid in campaign.rivals if cid not in (0,)]
    # A war between two other empires, always going on: not the player's.
    wars["2"] = _war(
        templated("war_vs_names", [("1", name_key("NAME_Rivals")), ("2", name_key("NAME_Others"))]),
        "2200.04.11",
        rival_ids[0],
        rival_ids[1],
    )
    for war in state.wars:
        first_name, adjective, kind = war["vars"]
        name = templated(
            "war_vs_adjectives",
            [
                ("1", name_key(first_name)),
                ("2", templated("%ADJECTIVE%", [("adjective", name_key(f"SPEC_{adjective}"))])),
                ("3", name_key(kind)),
            ],
        )
        wars[str(war["id"])] = _war(name, war["start_date"], war["enemy"], campaign.player_id)
    return wars


def _war(name: dict, start: str, attacker: int, defender: int) -> dict:
    def side(country: int) -> list[dict]:
        return [{"call_type": Bare("primary"), "country": country, "caller": NO_ID, "fleets_gone_mia": 0}]

    return {
        "name": name,
        "start_date": start,
        "attackers": side(attacker),
        "defenders": side(defender),
        "battles": [
            {
                "defenders": [defender],
                "attackers": [attacker],
                "system": 144,
                "planet": NO_ID,
                "attacker_victory": True,
                "date": start,
                "type": Bare("ships"),
            }
        ],
    }


def write_save(path: Path, meta_text: str, gamestate_text: str) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in (("meta", meta_text), ("gamestate", gamestate_text)):
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 0
            info.external_attr = 0
            archive.writestr(info, text.encode("utf-8"))


# --- the extractor's outputs ---------------------------------------------------------------------


def generate(out_dir: Path, scale: int, rng: random.Random) -> list[dict]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    entries: list[dict] = []
    for unit in range(max(1, scale)):
        campaign = new_campaign(rng, unit)
        entries += _write_saves(out_dir / campaign.slug, campaign, rng)
        entries += _write_extractor(out_dir / f"{campaign.slug}_extractor", campaign, rng)
        rows, faults = history_rows(campaign, rng)
        history = out_dir / f"{campaign.slug}_history.db"
        write_history(history, campaign, rows)
        entries.append(_entry(history, faults))
    return entries


def _write_saves(folder: Path, campaign: Campaign, rng: random.Random) -> list[dict]:
    folder.mkdir(parents=True, exist_ok=True)
    entries = []
    for state in campaign.states:
        faults: list[dict] = []
        text = gamestate(campaign, state, rng, faults)
        path = folder / f"autosave_{state.date}.sav"
        write_save(path, meta(campaign, state), text)
        entries.append(_entry(path, faults))
    return entries


def _write_extractor(folder: Path, campaign: Campaign, rng: random.Random) -> list[dict]:
    folder.mkdir(parents=True, exist_ok=True)
    entries = []
    for name, content, faults in extractor_files(campaign, rng):
        path = folder / name
        path.write_text(content if isinstance(content, Raw) else json.dumps(content, indent=1) + "\n")
        entries.append(_entry(path, faults))
    return entries


def _entry(path: Path, faults: list[dict]) -> dict:
    return {"path": str(path), "format": "stellaris", "faults": faults}
