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
import sqlite3
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

SAVES_PER_CAMPAIGN = 12
FIRST_YEAR = 2201
NO_ID = 4294967295
SPECIES = ("Bilnoc", "Kilik", "Voor", "Oviron", "Graparx", "Tzynn", "Scyldari", "Jehetma")
GOVERNMENTS = ("Autocracy", "Republic", "Directorate", "Imperium", "Commonwealth", "Hegemony")
PLANET_NAMES = ("LonesomeRetreat", "Vashta", "Orrin", "Kepler", "Draxis", "Halcyon", "Meridian", "Solace", "Umbra")
PLANET_CLASSES = ("pc_continental", "pc_ocean", "pc_tropical", "pc_arid", "pc_desert", "pc_alpine")
LEADER_CLASSES = ("scientist", "admiral", "general", "governor", "commander", "official", "envoy")
ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # what the game writes; fixed, so the bytes are reproducible

# resource: (income, expenses, income growth/year, expenses growth/year) at the start.
ECONOMY = {
    "energy": (60.0, 42.0, 0.10, 0.10),
    "minerals": (80.0, 52.0, 0.08, 0.10),
    "food": (42.0, 31.0, 0.05, 0.075),
    "physics_research": (30.0, 0.0, 0.15, 0.0),
    "society_research": (24.0, 0.0, 0.14, 0.0),
    "engineering_research": (27.0, 0.0, 0.15, 0.0),
    "influence": (3.0, 1.2, 0.02, 0.09),
    "unity": (14.0, 3.0, 0.12, 0.14),
    "consumer_goods": (22.0, 17.0, 0.06, 0.10),
    "alloys": (16.0, 9.0, 0.12, 0.13),
    "trade": (25.0, 11.0, 0.09, 0.10),
    "volatile_motes": (2.0, 1.1, 0.05, 0.12),
    "exotic_gases": (2.2, 1.0, 0.05, 0.11),
    "rare_crystals": (1.8, 1.2, 0.05, 0.07),
    "sr_living_metal": (0.6, 0.2, 0.03, 0.10),
    "sr_zro": (0.5, 0.3, 0.04, 0.06),
    "sr_dark_matter": (0.4, 0.1, 0.03, 0.09),
    "astral_threads": (1.0, 0.0, 0.05, 0.0),
}
# Upkeep multipliers while the player is at war: the nets dip below zero, then recover.
WAR_COSTS = {"energy": 1.6, "alloys": 1.9, "consumer_goods": 1.2}
INCOME_CATEGORIES = ("country_base", "planet_technician", "planet_miners", "planet_farmers", "orbital_mining_deposits",
                     "orbital_research_deposits", "trade_policy", "planet_artisans", "planet_metallurgists",
                     "planet_researchers", "subject_tax", "pop_factions")
EXPENSE_CATEGORIES = ("ships", "ship_components", "starbases", "planet_buildings", "planet_districts", "pops",
                      "leaders", "armies", "edicts", "megastructures")
TECHS = ("lasers_1", "corvettes", "mining_network_1", "basic_science_lab_1", "destroyers", "space_construction",
         "cruisers", "hydroponics")
SUMMARY = ("energy", "minerals", "food", "alloys", "consumer_goods")
RESEARCH = ("physics_research", "society_research", "engineering_research")


# --- the campaign's story -----------------------------------------------------------------


@dataclass
class Colony:
    planet_id: int
    name: str
    planet_class: str
    population: int
    stability: float


@dataclass
class State:
    """One autosave's worth of the player's empire."""

    index: int
    date: str
    income: dict[str, dict[str, float]]  # category -> resource -> amount
    expenses: dict[str, dict[str, float]]
    stockpiles: dict[str, float]
    colonies: list[Colony]
    wars: list[dict]  # {id, name_vars, enemy, start_date}
    military_power: float
    economy_power: float
    tech_power: float
    fleet_ids: list[int]
    fleet_size: int
    controlled: list[int]
    techs: list[str]

    def totals(self, part: dict) -> dict[str, float]:
        sums: dict[str, float] = {}
        for amounts in part.values():
            for resource, amount in amounts.items():
                sums[resource] = sums.get(resource, 0.0) + amount
        return {r: round(v, 5) for r, v in sums.items()}

    @property
    def net(self) -> dict[str, float]:
        income, expenses = self.totals(self.income), self.totals(self.expenses)
        return {r: round(income.get(r, 0.0) - expenses.get(r, 0.0), 5) for r in dict.fromkeys([*income, *expenses])}


@dataclass
class Campaign:
    slug: str
    species: str
    government: str
    player_id: int
    rivals: dict[int, str]  # country id -> species
    rates: dict[str, tuple[float, float, float, float]]
    states: list[State] = field(default_factory=list)

    @property
    def empire_name(self) -> str:
        return f"{self.species} {self.government}"


def new_campaign(rng: random.Random, unit: int) -> Campaign:
    species = rng.choice(SPECIES)
    government = rng.choice(GOVERNMENTS)
    player_id = 16777216 + rng.randrange(3, 60)
    rival_species = [s for s in SPECIES if s != species]
    rivals = {0: rng.choice(rival_species), 12: rng.choice(rival_species), 43: rng.choice(rival_species),
              33554436 + rng.randrange(0, 9): rng.choice(rival_species)}
    rates = {r: (inc * rng.uniform(0.85, 1.15), exp * rng.uniform(0.9, 1.1), gi, ge * rng.uniform(0.9, 1.2))
             for r, (inc, exp, gi, ge) in ECONOMY.items()}
    slug = f"{species.lower()}_{government.lower()}_{unit + 1}"
    campaign = Campaign(slug, species, government, player_id, rivals, rates)
    campaign.states = _story(campaign, rng)
    return campaign


def _story(campaign: Campaign, rng: random.Random) -> list[State]:
    states, stockpiles, colonies, wars = [], {r: rng.uniform(100, 400) for r in ECONOMY}, [], []
    next_planet = rng.randrange(90, 140)
    fleets = [rng.randrange(20, 400) for _ in range(3)]
    enemy = next(cid for cid in campaign.rivals if cid not in (0,))
    for index in range(SAVES_PER_CAMPAIGN):
        year = FIRST_YEAR + index
        if index == 0 or (index % 2 == 0 and len(colonies) < 7):
            habitat = index >= 6 and rng.random() < 0.6
            colonies.append(Colony(next_planet, rng.choice(PLANET_NAMES) if index else "Homeworld",
                                   "pc_habitat" if habitat else rng.choice(PLANET_CLASSES),
                                   rng.randint(8, 20), rng.uniform(45, 80)))
            next_planet += rng.randrange(7, 400)
        for colony in colonies:
            colony.population += rng.randint(2, 9)
            colony.stability = min(100.0, max(10.0, colony.stability + rng.uniform(-6, 6)))
        at_war = 4 <= index <= 7
        if at_war and not wars:
            wars = [_new_war(campaign, enemy, year, rng)]
        if not at_war:
            wars = []
        fleets.append(rng.randrange(400, 9000))
        income, expenses = _budget(campaign.rates, index, at_war, rng)
        state = State(
            index=index, date=f"{year}.01.01", income=income, expenses=expenses, stockpiles={},
            colonies=[Colony(**vars(c)) for c in colonies], wars=[dict(w) for w in wars],
            military_power=round(800 * (1.35 ** index) * (1.4 if at_war else 1.0) + rng.uniform(0, 90), 5),
            economy_power=round(400 * (1.22 ** index) + rng.uniform(0, 50), 5),
            tech_power=round(300 * (1.25 ** index) + rng.uniform(0, 40), 5),
            fleet_ids=list(fleets), fleet_size=12 + 9 * index + (20 if at_war else 0),
            controlled=sorted({c.planet_id for c in colonies} | {100 + 7 * k for k in range(6 + 3 * index)}),
            techs=[f"tech_{name}" for name in TECHS[: 3 + index // 2]],
        )
        for resource, net in state.net.items():
            stockpiles[resource] = max(0.0, stockpiles.get(resource, 0.0) + 12 * net)
        state.stockpiles = {r: round(v, 5) for r, v in stockpiles.items() if round(v, 5) > 0}
        states.append(state)
    return states


def _new_war(campaign: Campaign, enemy: int, year: int, rng: random.Random) -> dict:
    kind = rng.choice(("War_of_Conquest", "Xeno_Purification_War"))
    return {"id": 50331648 + rng.randrange(0, 99), "enemy": enemy,
            "start_date": f"{year - 1}.0{rng.randint(1, 9)}.1{rng.randint(0, 9)}",
            "vars": ("NAME_ADJ_Chosen", campaign.species, kind)}


def _budget(rates: dict, index: int, at_war: bool, rng: random.Random):
    income: dict[str, dict[str, float]] = {"none": {}}
    expenses: dict[str, dict[str, float]] = {"none": {}}
    for resource, (base_in, base_out, grow_in, grow_out) in rates.items():
        war_cost = WAR_COSTS.get(resource, 1.0) if at_war else 1.0
        total_in = base_in * (1 + grow_in) ** index * rng.uniform(0.95, 1.05)
        total_out = base_out * (1 + grow_out) ** index * war_cost * rng.uniform(0.95, 1.05)
        _spread(income, rng.sample(INCOME_CATEGORIES, rng.randint(1, 3)), resource, total_in, rng)
        if total_out > 0:
            _spread(expenses, rng.sample(EXPENSE_CATEGORIES, rng.randint(1, 3)), resource, total_out, rng)
    return income, expenses


def _spread(part: dict, categories: list[str], resource: str, total: float, rng: random.Random) -> None:
    weights = [rng.uniform(0.2, 1.0) for _ in categories]
    for category, weight in zip(categories, weights):
        part.setdefault(category, {})[resource] = round(total * weight / sum(weights), 5)


# --- Clausewitz text --------------------------------------------------------------------------


class Bare(str):
    """A word written without quotes (`yes`, `none`, `primary`)."""


class Repeat(list):
    """A key written once per value (`trait="a" trait="b"`)."""


class Raw(str):
    """Text written as it is: the quirks a serializer would not produce."""


def clausewitz(pairs: dict, depth: int = 0) -> str:
    return "".join(_pair(key, value, depth) for key, value in pairs.items())


def _pair(key, value, depth: int) -> str:
    tabs = "\t" * depth
    if isinstance(value, Raw):
        return value
    if isinstance(value, Repeat):
        return "".join(_pair(key, item, depth) for item in value)
    if isinstance(value, dict):
        return f"{tabs}{key}=\n{tabs}{{\n{clausewitz(value, depth + 1)}{tabs}}}\n"
    if isinstance(value, list):
        return f"{tabs}{key}=\n{tabs}{{\n{_items(value, depth + 1)}{tabs}}}\n"
    return f"{tabs}{key}={_scalar(value)}\n"


def _items(items: list, depth: int) -> str:
    tabs = "\t" * depth
    if items and all(isinstance(i, dict) for i in items):
        # Lists of blocks as the game writes them: a blank tabbed line, then each block
        # followed by a line holding one space.
        return f"{tabs}\n" + "".join(f"{tabs}{{\n{clausewitz(i, depth + 1)}{tabs}}}\n \n" for i in items)
    return f"{tabs}{' '.join(_scalar(i) for i in items)} \n" if items else ""


def _scalar(value) -> str:
    if isinstance(value, Bare):
        return str(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.5f}".rstrip("0").rstrip(".") if value != int(value) else str(int(value))
    if isinstance(value, int):
        return str(value)
    return '"' + str(value).replace('"', '\\"') + '"'


def name_key(key: str) -> dict:
    return {"key": key}


def templated(key: str, variables: list[tuple[str, dict]]) -> dict:
    return {"key": key, "variables": [{"key": k, "value": v} for k, v in variables]}


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
        "pop_groups": {str(1000 + k): {"species": rng.randrange(0, 4), "size": rng.randrange(1, 900)}
                       for k in range(25)},
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
            "name_list": "MOL4", "name": name_key(f"SPEC_{name}"), "class": "MOL",
            "traits": {"trait": Repeat(["trait_quick_learners", "trait_talented", "trait_adaptive"])},
            "gender": Bare("not_set"),
        }
    return entries


def _systems(rng: random.Random) -> dict:
    systems = {}
    for number in range(12):
        systems[str(number)] = {
            "coordinate": {"x": round(rng.uniform(-300, 300), 3), "y": round(rng.uniform(-300, 300), 3),
                           "origin": NO_ID},
            "type": Bare("star"), "name": name_key(f"NAME_System_{number}"),
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
        planets[str(10 + other)] = _planet(f"NAME_Rock_{other}", rng.choice(PLANET_CLASSES), owner,
                                           rng.randrange(0, 30), 50.0, rng)
    planets["16"] = Bare("none")  # a deleted planet's slot
    for number, colony in enumerate(state.colonies):
        owner = campaign.player_id
        if state.index == 4 and number == len(state.colonies) - 1:
            owner = 0  # listed as the player's, owned by country 0
            faults.append({"locator": f"planet {colony.planet_id}", "field": "owner", "rule": "invariant_player_id"})
        planet = _planet(f"{campaign.species.upper()}_PLANET_{colony.name}", colony.planet_class, owner,
                         colony.population, colony.stability, rng)
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
    "44": {"name": name_key("global_event_country"), "type": "global_event",
           "budget": {"current_month": {"income": {"none": {}}, "expenses": {"none": {}}, "balance": {"none": {}}}}},
    "45": {"name": name_key("NAME_Wandering_Swarm"), "type": "swarm"},
}
FALLEN_EMPIRE = 43  # one of the rivals' ids


def _countries(campaign: Campaign, state: State, rng: random.Random, faults: list[dict]) -> dict:
    countries = {}
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
    rates = {r: (inc * steady.uniform(0.4, 1.8), exp * steady.uniform(0.6, 1.5), gi, ge)
             for r, (inc, exp, gi, ge) in campaign.rates.items() if r not in ("sr_zro", "sr_dark_matter")}
    at_war = any(war["enemy"] == country_id for war in state.wars)
    return _budget(rates, state.index, at_war, random.Random(f"{campaign.slug}:{country_id}:{state.index}"))


def _rival(campaign: Campaign, number: int, country_id: int, species: str, state: State,
           rng: random.Random) -> dict:
    """A country with its own, different economy: reading it instead of the player's
    (a hard-coded 0) gives visibly wrong numbers."""
    income, expenses = rival_budget(campaign, country_id, state)
    return {
        "name": rival_name(campaign, number, species),
        "budget": {"current_month": {"income": income, "expenses": expenses,
                                     "balance": _balance(income, expenses)}},
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
        faults.append({"locator": f"country {campaign.player_id}",
                       "field": "budget.current_month.balance.energy", "rule": "invariant_net_monthly"})
    last_income = {c: {r: round(v * 0.97, 5) for r, v in amounts.items()} for c, amounts in state.income.items()}
    return {
        "save_on_death": 1,
        "flag": {"icon": {"category": "domination", "file": "domination_22.dds"},
                 "colors": ["teal", "brown", "black", "null"]},
        "color_index": -1,
        "name": templated("%ADJECTIVE%", [("adjective", name_key(f"SPEC_{campaign.species}")),
                                          ("1", name_key(campaign.government))]),
        "tech_status": {"technology": Repeat(state.techs), "level": Repeat([1] * len(state.techs))},
        "last_date_was_human": state.date,
        "last_date_at_war": state.date if state.wars else "0.01.01",
        "budget": {
            "current_month": {"income": state.income, "expenses": state.expenses, "balance": balance,
                              "extra_income": {}, "trade_income": {}},
            # Last month's budget is there too, and must not be read instead.
            "last_month": {"income": last_income, "expenses": state.expenses,
                           "balance": _balance(last_income, state.expenses)},
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
        "ai": {"initialized": True, "budget": {"reserved": {}}, "attitude": Repeat(
            [{"country": cid, "attitude": Bare("cautious")} for cid in campaign.rivals])},
        "capital": state.colonies[0].planet_id,
        "owned_leaders": [rng.randrange(100000, 200000) for _ in range(4)],
        "owned_planets": [c.planet_id for c in state.colonies],
        "holding_planets": Raw("\t\tholding_planets=\n\t\t{\n\t\t\t\n\t\t\t{\n\t\t\t\tkey=subject_holding"
                               "\t\t\t\tvalue=450\t\t\t}\n\n\t\t}\n"),
        "controlled_planets": state.controlled,
        "modules": {
            "standard_event_module": {"delayed_event": {"event": "country.2050", "days": 173,
                                                        "scope": {"type": Bare("country"), "id": campaign.player_id,
                                                                  "random": [0, 639387581]}}},
            "standard_economy_module": {"resources": state.stockpiles},
            "standard_leader_module": {"enabled": True, "leaders": [150995373, 100663673]},
        },
        "fleets_manager": {"owned_fleets": [
            {"fleet": fid, "ownership_status": Bare("normal"), "lease_period": 0, "debtor": NO_ID,
             "previous_owner": NO_ID} for fid in state.fleet_ids]},
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
    fleets = {}
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
    wars = {"1": Bare("none")}
    rival_ids = [cid for cid in campaign.rivals if cid not in (0,)]
    # A war between two other empires, always going on: not the player's.
    wars["2"] = _war(templated("war_vs_names", [("1", name_key("NAME_Rivals")), ("2", name_key("NAME_Others"))]),
                     "2200.04.11", rival_ids[0], rival_ids[1])
    for war in state.wars:
        first_name, adjective, kind = war["vars"]
        name = templated("war_vs_adjectives", [
            ("1", name_key(first_name)),
            ("2", templated("%ADJECTIVE%", [("adjective", name_key(f"SPEC_{adjective}"))])),
            ("3", name_key(kind)),
        ])
        wars[str(war["id"])] = _war(name, war["start_date"], war["enemy"], campaign.player_id)
    return wars


def _war(name: dict, start: str, attacker: int, defender: int) -> dict:
    def side(country: int) -> list[dict]:
        return [{"call_type": Bare("primary"), "country": country, "caller": NO_ID, "fleets_gone_mia": 0}]

    return {"name": name, "start_date": start, "attackers": side(attacker), "defenders": side(defender),
            "battles": [{"defenders": [defender], "attackers": [attacker], "system": 144, "planet": NO_ID,
                         "attacker_victory": True, "date": start, "type": Bare("ships")}]}


def war_name(campaign: Campaign, war: dict) -> str:
    first_name, adjective, kind = war["vars"]
    return f"{first_name.split('_')[-1]}-{adjective} {kind.replace('_', ' ')}"


def meta(campaign: Campaign, state: State) -> str:
    return clausewitz({
        "version": "Phoenix v4.0.1",
        "version_control_revision": 108,
        "name": campaign.empire_name,
        "date": state.date,
        "required_dlcs": ["Federations", "Nemesis", "Overlord", "The Machine Age", "Utopia"],
        "player_portrait": "synth05",
        "meta_fleets": len(state.fleet_ids),
        "meta_planets": len(state.colonies),
    })


def write_save(path: Path, meta_text: str, gamestate_text: str) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in (("meta", meta_text), ("gamestate", gamestate_text)):
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 0
            info.external_attr = 0
            archive.writestr(info, text.encode("utf-8"))


# --- the extractor's outputs ---------------------------------------------------------------------


def player_status(campaign: Campaign, state: State) -> dict:
    habitats = [c for c in state.colonies if c.planet_class == "pc_habitat"]
    worlds = [c for c in state.colonies if c.planet_class != "pc_habitat"]
    total = sum(c.population for c in state.colonies)
    return {
        "empire_name": campaign.empire_name, "date": state.date, "player_id": campaign.player_id,
        "military_power": round(state.military_power), "economy_power": round(state.economy_power),
        "tech_power": round(state.tech_power), "fleet_count": len(state.fleet_ids), "fleet_size": state.fleet_size,
        "celestial_bodies_in_territory": len(state.controlled),
        "colonies": {
            "total_count": len(state.colonies), "total_population": total,
            "avg_pops_per_colony": round(total / len(state.colonies), 1),
            "habitats": {"count": len(habitats), "population": sum(c.population for c in habitats)},
            "planets": {"count": len(worlds), "population": sum(c.population for c in worlds)},
        },
    }


def resources(state: State) -> dict:
    net = state.net
    return {
        "stockpiles": dict(state.stockpiles), "monthly_income": state.totals(state.income),
        "monthly_expenses": state.totals(state.expenses), "net_monthly": net,
        "summary": {**{f"{r}_net": net.get(r, 0.0) for r in SUMMARY},
                    "research_total": round(sum(net.get(r, 0.0) for r in RESEARCH), 5)},
    }


def wars_output(campaign: Campaign, state: State) -> dict:
    names = [war_name(campaign, w) for w in state.wars]
    return {"wars": names, "count": len(names), "player_at_war": bool(names), "all_wars_count": len(names) + 1,
            "active_war_ids": [str(w["id"]) for w in state.wars]}


def situation(state: State, wars: dict) -> dict:
    net = state.net
    return {
        "game_phase": "early" if state.index < 6 else "mid", "year": int(state.date[:4]),
        "at_war": bool(wars["wars"]), "war_count": len(wars["wars"]), "contacts_made": True, "contact_count": 4,
        "rivals": ["Chosen Imperium"], "allies": [], "crisis_active": False,
        "economy": {"energy_net": net["energy"], "minerals_net": net["minerals"], "alloys_net": net["alloys"],
                    "consumer_goods_net": net["consumer_goods"],
                    "research_net": round(sum(net[r] for r in RESEARCH), 5),
                    "resources_in_deficit": sum(1 for v in net.values() if v < 0)},
    }


def planets_output(campaign: Campaign, state: State) -> dict:
    planets = [{"id": str(c.planet_id), "name": c.name, "type": c.planet_class.removeprefix("pc_"),
                "population": c.population, "stability": round(c.stability, 1),
                "is_habitat": c.planet_class == "pc_habitat"} for c in state.colonies]
    by_type: dict[str, int] = {}
    for planet in planets:
        by_type[planet["type"]] = by_type.get(planet["type"], 0) + 1
    return {"planets": planets, "count": len(planets), "total_population": sum(p["population"] for p in planets),
            "by_type": by_type}


def diplomacy(campaign: Campaign) -> dict:
    return {"relations": [{"country_id": cid, "opinion": 10 * k} for k, cid in enumerate(campaign.rivals)],
            "treaties": ["research_agreement"], "allies": [], "rivals": ["Chosen Imperium"], "federation": None,
            "relation_count": len(campaign.rivals)}


def full_briefing(campaign: Campaign, state: State) -> dict:
    status, resource = player_status(campaign, state), resources(state)
    net = resource["net_monthly"]
    return {
        "meta": {"empire_name": status["empire_name"], "date": state.date, "player_id": campaign.player_id},
        "military": {"military_power": status["military_power"], "fleet_count": status["fleet_count"],
                     "fleet_size": status["fleet_size"]},
        "economy": {"economy_power": status["economy_power"], "tech_power": status["tech_power"],
                    "net_monthly": dict(net),
                    "key_resources": {"energy": net["energy"], "minerals": net["minerals"], "alloys": net["alloys"],
                                      "consumer_goods": net["consumer_goods"],
                                      "research_total": resource["summary"]["research_total"]}},
        "territory": {"celestial_bodies_in_territory": status["celestial_bodies_in_territory"],
                      "colonies": status["colonies"]},
        "diplomacy": {"relation_count": len(campaign.rivals), "allies": [], "rivals": ["Chosen Imperium"],
                      "federation": None},
        "defense": {"starbase_count": 4},
        "leadership": {"leader_count": 4},
    }


def extractor_files(campaign: Campaign, rng: random.Random) -> list[tuple[str, object, list[dict]]]:
    """(file name, content, injected errors): the tools' outputs with the real drift."""
    latest = campaign.states[-1]
    at_war = next(s for s in campaign.states if s.wars)
    tool = lambda name: f"tool {name}"  # noqa: E731
    files: list[tuple[str, object, list[dict]]] = []

    status = player_status(campaign, latest)
    status.update(victory_rank=3, _note="colonies are colonized worlds, not all bodies")  # extra keys: info
    files.append(("get_player_status.json", status, []))

    planets = planets_output(campaign, latest)
    planets["total_pops"] = planets.pop("total_population")  # the real extractor's name
    for planet in planets["planets"]:
        planet.pop("is_habitat")
        planet["is_capital"] = planet is planets["planets"][0]
    files.append(("get_planets.json", planets, [
        {"locator": tool("get_planets"), "field": "planets[0].is_habitat", "rule": "required_key"},
        {"locator": tool("get_planets"), "field": "total_population", "rule": "required_key"},
    ]))

    legacy = resources(latest)
    legacy["monthly_net"] = legacy.pop("net_monthly")  # the documented old bug
    files.append(("get_resources.json", legacy, [
        {"locator": tool("get_resources"), "field": "net_monthly", "rule": "required_key"}]))

    files.append(("get_technology.json", {
        "researched_techs": latest.techs, "completed_count": len(latest.techs),
        "in_progress": {"physics": "tech_lasers_2", "society": None, "engineering": "tech_cruisers"},
        "tech_count": len(latest.techs),
    }, [
        {"locator": tool("get_technology"), "field": "completed", "rule": "required_key"},
        {"locator": tool("get_technology"), "field": "current_research", "rule": "required_key"},
        {"locator": tool("get_technology"), "field": "by_category", "rule": "required_key"},
    ]))

    treaties = diplomacy(campaign)
    treaties["treaties"] = [{"type": "research_agreement", "with": "Chosen Imperium"},
                            {"type": "commercial_pact", "with": "Kilik Cooperative"}]
    files.append(("get_diplomacy.json", treaties, [
        {"locator": tool("get_diplomacy"), "field": "treaties[0]", "rule": "wrong_type"}]))

    leaders = [{"name": f"Leader {k}", "class": rng.choice(LEADER_CLASSES), "level": rng.randint(1, 8),
                "age": rng.randint(30, 90), "traits": ["leader_trait_resilient"]} for k in range(6)]
    leaders[3].pop("name")  # real outputs have leaders without a name
    leaders[4]["class"] = "envoy"
    by_class: dict[str, int] = {}
    for leader in leaders:
        by_class[leader["class"]] = by_class.get(leader["class"], 0) + 1
    files.append(("get_leaders.json", {"leaders": leaders, "count": len(leaders), "by_class": by_class}, [
        {"locator": tool("get_leaders"), "field": "leaders[3].name", "rule": "required_key"}]))

    broken_wars = wars_output(campaign, at_war)
    broken_wars["wars"] = []  # `wars` not populated although the player is at war
    files.append(("get_wars.json", broken_wars, [
        {"locator": tool("get_wars"), "field": "wars", "rule": "invariant_wars"}]))

    files.append(("get_armies.json", {"armies": [{"id": "52", "type": "defense_army"}], "count": 1}, []))
    files.append(("get_fleets.json", Raw(json.dumps({"count": 3, "fleet_names": ["Home Guard", "1st Fleet"]})[:37]),
                  [{"locator": tool("get_fleets"), "field": "(record)", "rule": "invalid_json"}]))
    starbase = {"id": "1", "level": "starport", "modules": ["shipyard"], "buildings": []}
    files.append(("get_starbases.json", {"starbases": [starbase], "count": 1, "by_level": {"starport": 1}}, []))
    files.append(("get_empire.json", {"name": "Chosen Imperium", "found": True, "military_power": 5120.5,
                                      "economy_power": 870.0, "opinion": -35.0, "raw_data_preview": "name={...}"}, []))
    match = {"position": 48083790, "context": "war_vs_adjectives"}
    files.append(("search.json", {"query": "war_vs", "matches": [match], "total_found": 1, "truncated": False}, []))

    files.append(_mismatching_bundle(campaign, at_war))
    files.append(_clean_bundle(campaign, campaign.states[2]))
    return files


def _mismatching_bundle(campaign: Campaign, state: State):
    wars = wars_output(campaign, state)
    briefing = full_briefing(campaign, state)
    briefing["economy"]["net_monthly"]["energy"] = round(briefing["economy"]["net_monthly"]["energy"] + 40.0, 5)
    planets = planets_output(campaign, state)
    for planet in planets["planets"]:
        planet["owner"] = campaign.player_id
    planets["planets"][-1]["owner"] = 0  # ownership checked against a hard-coded 0
    peace = situation(state, wars)
    peace["at_war"] = False
    bundle = {
        "generated_at": "2026-01-12T10:00:00+00:00",
        "get_player_status": player_status(campaign, state), "get_resources": resources(state),
        "get_wars": wars, "get_situation": peace, "get_planets": planets, "get_full_briefing": briefing,
    }
    last = len(planets["planets"]) - 1
    return (f"{state.date}.briefing.json", bundle, [
        {"locator": "tool get_full_briefing", "field": "economy.net_monthly.energy", "rule": "invariant_full_briefing"},
        {"locator": "tool get_situation", "field": "at_war", "rule": "invariant_wars"},
        {"locator": "tool get_planets", "field": f"planets[{last}].owner", "rule": "invariant_player_id"},
    ])


def _clean_bundle(campaign: Campaign, state: State):
    wars = wars_output(campaign, state)
    resource = resources(state)
    # One net that is not income - expenses.
    food = resource["net_monthly"]["food"] = round(resource["net_monthly"]["food"] + 5.0, 5)
    resource["summary"]["food_net"] = food
    briefing = full_briefing(campaign, state)
    briefing["economy"]["net_monthly"]["food"] = food
    bundle = {"get_player_status": player_status(campaign, state), "get_resources": resource, "get_wars": wars,
              "get_situation": situation(state, wars), "get_full_briefing": briefing}
    return (f"{state.date}.briefing.json", bundle, [
        {"locator": "tool get_resources", "field": "net_monthly.food", "rule": "invariant_net_monthly"}])


# --- the companion's history -------------------------------------------------------------------------

HISTORY_SCHEMA = """
CREATE TABLE sessions (id TEXT PRIMARY KEY, save_id TEXT NOT NULL, empire_name TEXT, started_at INTEGER);
CREATE TABLE snapshots (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    captured_at INTEGER NOT NULL,
    game_date TEXT,
    save_hash TEXT,
    military_power INTEGER,
    colony_count INTEGER,
    wars_count INTEGER,
    energy_net REAL,
    alloys_net REAL,
    full_briefing_json TEXT,
    event_state_json TEXT
);
"""


def history_rows(campaign: Campaign, rng: random.Random) -> tuple[list[tuple], list[dict]]:
    rows, faults = [], []
    session = f"{campaign.slug}-session"
    for number, state in enumerate(campaign.states, start=1):
        briefing = full_briefing(campaign, state)
        net = briefing["economy"]["net_monthly"]
        event_state = {
            "meta": briefing["meta"], "military": {"military_power": briefing["military"]["military_power"]},
            "economy": {"net_monthly": {r: net[r] for r in ("energy", "alloys", "consumer_goods", "food", "minerals")}},
            "territory": {"colonies": {"total_count": len(state.colonies)}},
        }
        energy = net["energy"]
        state_text = json.dumps(event_state)
        if number == 5:
            energy = round(energy - 15.0, 5)  # the column disagrees with the state it was copied from
            faults.append({"locator": f"row {number}", "field": "energy_net", "rule": "invariant_full_briefing"})
        if number == 9:
            state_text = state_text[: len(state_text) // 2]  # a truncated write
            faults.append({"locator": f"row {number}", "field": "event_state_json", "rule": "invalid_json"})
        rows.append((session, 1_760_000_000 + 3600 * number, state.date, f"{rng.getrandbits(64):016x}",
                     briefing["military"]["military_power"], len(state.colonies), len(state.wars), energy,
                     net["alloys"], json.dumps(briefing) if number == 1 else "{}", state_text))
    rows.append((session, 1_760_000_000 + 3600 * (len(rows) + 1), "unknown", None, None, None, None, None, None,
                 None, "{}"))
    faults.append({"locator": f"row {len(rows)}", "field": "game_date", "rule": "date_format"})
    return rows, faults


def write_history(path: Path, campaign: Campaign, rows: list[tuple]) -> None:
    if path.exists():
        path.unlink()
    con = sqlite3.connect(path)
    try:
        con.execute("PRAGMA journal_mode = WAL")  # as the companion keeps it; the log is folded in on close
        con.executescript(HISTORY_SCHEMA)
        con.execute("INSERT INTO sessions VALUES (?, ?, ?, ?)",
                    (f"{campaign.slug}-session", campaign.slug, campaign.empire_name, 1_760_000_000))
        con.executemany(
            "INSERT INTO snapshots (session_id, captured_at, game_date, save_hash, military_power, colony_count, "
            "wars_count, energy_net, alloys_net, full_briefing_json, event_state_json) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        con.commit()
    finally:
        con.close()


# --- the whole corpus -------------------------------------------------------------------------------------


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
