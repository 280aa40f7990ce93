"""The synthetic Stellaris campaign itself: its empire, rivals, wars and budgets year by
year, and the Clausewitz text the game writes them in (`workbench.stellaris.synth`)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

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
INCOME_CATEGORIES = (
    "country_base",
    "planet_technician",
    "planet_miners",
    "planet_farmers",
    "orbital_mining_deposits",
    "orbital_research_deposits",
    "trade_policy",
    "planet_artisans",
    "planet_metallurgists",
    "planet_researchers",
    "subject_tax",
    "pop_factions",
)
EXPENSE_CATEGORIES = (
    "ships",
    "ship_components",
    "starbases",
    "planet_buildings",
    "planet_districts",
    "pops",
    "leaders",
    "armies",
    "edicts",
    "megastructures",
)
TECHS = (
    "lasers_1",
    "corvettes",
    "mining_network_1",
    "basic_science_lab_1",
    "destroyers",
    "space_construction",
    "cruisers",
    "hydroponics",
)
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
    rivals = {
        0: rng.choice(rival_species),
        12: rng.choice(rival_species),
        43: rng.choice(rival_species),
        33554436 + rng.randrange(0, 9): rng.choice(rival_species),
    }
    rates = {
        r: (inc * rng.uniform(0.85, 1.15), exp * rng.uniform(0.9, 1.1), gi, ge * rng.uniform(0.9, 1.2))
        for r, (inc, exp, gi, ge) in ECONOMY.items()
    }
    slug = f"{species.lower()}_{government.lower()}_{unit + 1}"
    campaign = Campaign(slug, species, government, player_id, rivals, rates)
    campaign.states = _story(campaign, rng)
    return campaign


def _story(campaign: Campaign, rng: random.Random) -> list[State]:
    states: list[State] = []
    stockpiles = {r: rng.uniform(100, 400) for r in ECONOMY}
    colonies: list[Colony] = []
    wars: list[dict] = []
    next_planet = rng.randrange(90, 140)
    fleets = [rng.randrange(20, 400) for _ in range(3)]
    enemy = next(cid for cid in campaign.rivals if cid not in (0,))
    for index in range(SAVES_PER_CAMPAIGN):
        year = FIRST_YEAR + index
        if index == 0 or (index % 2 == 0 and len(colonies) < 7):
            habitat = index >= 6 and rng.random() < 0.6
            colonies.append(
                Colony(
                    next_planet,
                    rng.choice(PLANET_NAMES) if index else "Homeworld",
                    "pc_habitat" if habitat else rng.choice(PLANET_CLASSES),
                    rng.randint(8, 20),
                    rng.uniform(45, 80),
                )
            )
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
            index=index,
            date=f"{year}.01.01",
            income=income,
            expenses=expenses,
            stockpiles={},
            colonies=[Colony(**vars(c)) for c in colonies],
            wars=[dict(w) for w in wars],
            military_power=round(800 * (1.35**index) * (1.4 if at_war else 1.0) + rng.uniform(0, 90), 5),
            economy_power=round(400 * (1.22**index) + rng.uniform(0, 50), 5),
            tech_power=round(300 * (1.25**index) + rng.uniform(0, 40), 5),
            fleet_ids=list(fleets),
            fleet_size=12 + 9 * index + (20 if at_war else 0),
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
    return {
        "id": 50331648 + rng.randrange(0, 99),
        "enemy": enemy,
        "start_date": f"{year - 1}.0{rng.randint(1, 9)}.1{rng.randint(0, 9)}",
        "vars": ("NAME_ADJ_Chosen", campaign.species, kind),
    }


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


def war_name(campaign: Campaign, war: dict) -> str:
    first_name, adjective, kind = war["vars"]
    return f"{first_name.split('_')[-1]}-{adjective} {kind.replace('_', ' ')}"


def meta(campaign: Campaign, state: State) -> str:
    return clausewitz(
        {
            "version": "Phoenix v4.0.1",
            "version_control_revision": 108,
            "name": campaign.empire_name,
            "date": state.date,
            "required_dlcs": ["Federations", "Nemesis", "Overlord", "The Machine Age", "Utopia"],
            "player_portrait": "synth05",
            "meta_fleets": len(state.fleet_ids),
            "meta_planets": len(state.colonies),
        }
    )
