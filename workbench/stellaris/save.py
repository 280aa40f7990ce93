"""Real saves: open a `.sav` safely, then derive the seed's shapes from its gamestate.

A `.sav` is a zip of `meta` and `gamestate`, opened by `save_zip.open_save`.

From the gamestate only a few sections are parsed (see `clausewitz.Locator`): `date`,
`player`, the player's entry of `country`, the player's planets in `planets`, and `war`.
They give `get_player_status`, `get_resources` and `get_wars` as the seed shapes them;
the reader validates those with the same models as extractor outputs.

Every other country's budget is read in the same pass: the entries of `country` are
delimited once (`Locator.child_blocks`), and of each entry only `name`, `type` and
`budget.current_month` are parsed, giving its budget lines (category x resource).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from workbench.stellaris import clausewitz
from workbench.stellaris.clausewitz import ClausewitzError, Locator, Span, as_dict, as_list, first, is_id
from workbench.stellaris.dates import day_number
from workbench.stellaris.names import raw_key, render, template_json
from workbench.stellaris.save_zip import SaveFiles
from workbench.violation import Violation

TOLERANCE = 0.01
RESEARCH = ("physics_research", "society_research", "engineering_research")
SUMMARY_RESOURCES = ("energy", "minerals", "food", "alloys", "consumer_goods")


class SnapshotError(Exception):
    """The save is a readable zip but holds no snapshot of the player's empire
    (no date, no player, no country entry for the player): its record is rejected."""


# --- the snapshot ------------------------------------------------------------------------


@dataclass
class Snapshot:
    date: str
    player_id: int
    empire_name: str  # readable: the save's `meta` name, else the country's name rendered
    empire_name_key: str | None  # the country's name as written: its localisation key
    empire_name_template: str | None  # and the whole template as JSON, when it has variables
    outputs: dict[str, dict]  # the seed's shapes derived from the save, by tool
    stockpiles: dict[str, float]
    income: dict[str, float]
    expenses: dict[str, float]
    net: dict[str, float]
    balance: dict[str, float]  # the game's own per-resource sums of `balance`
    violations: list[Violation] = field(default_factory=list)
    budgets: list[CountryBudget] = field(default_factory=list)  # every country's, the player's too


def read_snapshot(files: SaveFiles) -> Snapshot:
    """Derive the player's snapshot from the save. Raises SnapshotError when the save
    does not hold one."""
    meta = _parse_meta(files.meta)
    gamestate = Locator(files.gamestate)
    try:
        return _derive(gamestate, meta)
    except ClausewitzError as exc:
        raise SnapshotError(f"the gamestate is not well-formed Clausewitz text ({exc})") from None


META_NAME = re.compile(rb'^name\s*=\s*"((?:[^"\\\r\n]|\\.)*)"', re.MULTILINE)


def _parse_meta(meta: bytes) -> dict:
    """`meta`: the empire's readable name and a fallback date. A meta that is not
    well-formed still gives its top-level `name="..."` line."""
    try:
        return clausewitz.parse(meta) if meta else {}
    except ClausewitzError:
        found = META_NAME.search(meta)
        if not found:
            return {}
        return {"name": found.group(1).decode("utf-8", errors="replace").replace('\\"', '"')}


def _derive(gamestate: Locator, meta: dict) -> Snapshot:
    date = _scalar(gamestate, "date") or meta.get("date")
    if not isinstance(date, str) or day_number(date) is None:
        raise SnapshotError(f"the gamestate has no Stellaris `date` (found {date!r})")
    player_id, violations = _player_id(gamestate)
    countries = _country_entries(gamestate)
    country = _country(gamestate, countries, player_id)
    budget = Budget.of(country)
    violations += budget.mismatches(player_id)
    colonies, planet_violations = _colonies(gamestate, country, player_id)
    violations += planet_violations
    wars = _wars(gamestate, player_id)
    name = country.get("name")
    stockpiles = _stockpiles(country)
    empire_name = _empire_name(meta, name)
    budgets, budget_violations = _budgets(gamestate, countries, CountryBudget.of(player_id, empire_name, country))
    snapshot = Snapshot(
        date=date,
        player_id=player_id,
        empire_name=empire_name,
        empire_name_key=raw_key(name),
        empire_name_template=template_json(name),
        outputs={},
        stockpiles=stockpiles,
        income=budget.income,
        expenses=budget.expenses,
        net=budget.net,
        balance=budget.balance,
        violations=violations + budget_violations,
        budgets=budgets,
    )
    snapshot.outputs = {
        "get_player_status": _player_status(snapshot, country, colonies),
        "get_resources": _resources(snapshot),
        "get_wars": wars,
    }
    return snapshot


def _empire_name(meta: dict, name) -> str:
    """The player's empire as the save itself names it in readable text: `meta`'s
    `name=`, the save's name, which the game takes from the empire's name when the game
    starts (the real companion shows it as the empire's name too; a later rename or a
    switch of country does not change it: the corpus save's meta says "United Nations
    of Earth 2" for a country named by a `%ADJECTIVE%` template). Without it, the
    country's own name, read as well as it can be without localisation."""
    text = meta.get("name")
    if isinstance(text, str) and text.strip():
        return text.strip()
    return render(name)


def _scalar(gamestate: Locator, key: str):
    span = gamestate.find(key)
    return gamestate.parse(span) if span is not None else None


def _player_id(gamestate: Locator) -> tuple[int, list[Violation]]:
    """The player's country id from `player={ { name="..." country=<id> } }`, never assumed 0."""
    span = gamestate.find("player")
    entries = [e for e in as_list(gamestate.parse(span)) if isinstance(e, dict)] if span else []
    ids = [e["country"] for e in entries if isinstance(e.get("country"), int)]
    if not ids:
        raise SnapshotError("the gamestate names no player country (`player={ { country=<id> } }`)")
    violations = []
    if len(ids) > 1:
        violations.append(
            Violation(
                "player",
                "info",
                "multiplayer_save",
                "player",
                f"the save has {len(ids)} players (countries {', '.join(map(str, ids))}); the first is read",
            )
        )
    return ids[0], violations


# The parts of the player's country entry the snapshot reads. Only these are parsed:
# the entry also holds AI plans, intel and event chains, most of its 240 KB.
COUNTRY_KEYS = (
    "name",
    "type",
    "budget",
    "modules",
    "owned_planets",
    "controlled_planets",
    "fleets_manager",
    "military_power",
    "economy_power",
    "tech_power",
    "fleet_size",
)


def _country_entries(gamestate: Locator) -> dict[str, Span]:
    """Every country's entry by its id, delimited in one pass over `country`."""
    countries = gamestate.find("country")
    if countries is None or not countries.is_block(gamestate.data):
        raise SnapshotError("the gamestate has no `country` section")
    return gamestate.child_blocks(countries, indent=1)


def _country(gamestate: Locator, countries: dict[str, Span], player_id: int) -> dict:
    span = countries.get(str(player_id))
    if span is None:
        raise SnapshotError(f"`country` has no entry for the player's id {player_id}")
    parts = gamestate.find_children(span, list(COUNTRY_KEYS), indent=2)
    return {key: gamestate.parse(part) for key, part in parts.items()}


@dataclass
class Budget:
    """`budget.current_month`: per resource, income and expenses summed over the
    categories, their difference, and the game's own `balance` summed likewise."""

    income: dict[str, float]
    expenses: dict[str, float]
    balance: dict[str, float]

    @classmethod
    def of(cls, country: dict) -> Budget:
        month = as_dict(as_dict(country.get("budget")).get("current_month"))
        return cls(*(_sum_categories(month.get(part)) for part in ("income", "expenses", "balance")))

    @property
    def resources(self) -> list[str]:
        return list(dict.fromkeys([*self.income, *self.expenses, *self.balance]))

    @property
    def net(self) -> dict[str, float]:
        return {
            r: round(self.income.get(r, 0.0) - self.expenses.get(r, 0.0), 5)
            for r in dict.fromkeys([*self.income, *self.expenses])
        }

    def mismatches(self, player_id: int) -> list[Violation]:
        """net_monthly must equal the game's own balance, resource by resource."""
        found = []
        for resource in self.resources:
            net = self.income.get(resource, 0.0) - self.expenses.get(resource, 0.0)
            balance = self.balance.get(resource, 0.0)
            if abs(net - balance) > TOLERANCE:
                found.append(
                    Violation(
                        f"country {player_id}",
                        "error",
                        "invariant_net_monthly",
                        f"budget.current_month.balance.{resource}",
                        f"the game's balance for {resource} sums to {balance:g} but income - expenses = "
                        f"{self.income.get(resource, 0.0):g} - {self.expenses.get(resource, 0.0):g} = {net:g} "
                        f"(tolerance {TOLERANCE})",
                    )
                )
        return found


def _sum_categories(part) -> dict[str, float]:
    totals: dict[str, float] = {}
    for category in as_dict(part).values():
        for resource, amount in as_dict(first(category)).items():
            if isinstance(amount, (int, float)):
                totals[resource] = totals.get(resource, 0.0) + amount
    return {r: round(v, 5) for r, v in totals.items()}


# --- every country's budget lines -------------------------------------------------------


@dataclass
class BudgetLine:
    """One category's amounts of one resource in `budget.current_month`: 0 on the side
    the category does not name the resource (the game writes no zero amounts)."""

    category: str
    resource: str
    income: float
    expenses: float


@dataclass
class CountryBudget:
    country_id: int
    name: str  # the player's as the snapshot names it; others' rendered from their template
    country_type: str | None  # the save's `type`: default (an empire), fallen_empire, enclave, ...
    is_player: bool
    lines: list[BudgetLine]

    @classmethod
    def of(cls, country_id: int, name: str, country: dict, is_player: bool = True) -> CountryBudget:
        """From a parsed country entry (or its parts: `name`, `type`, `budget`)."""
        month = as_dict(as_dict(country.get("budget")).get("current_month"))
        kind = country.get("type")
        return cls(country_id, name, kind if isinstance(kind, str) else None, is_player, budget_lines(month))


def budget_lines(month: dict) -> list[BudgetLine]:
    """A `current_month` block's lines, category by category as the game writes them. A
    category written twice counts once, its first amounts, as in the totals (`Budget`);
    an amount that is not a number is left out."""
    income, expenses = (_amounts_by_category(month.get(part)) for part in ("income", "expenses"))
    lines = []
    for category in dict.fromkeys([*income, *expenses]):
        gained, spent = income.get(category, {}), expenses.get(category, {})
        for resource in dict.fromkeys([*gained, *spent]):
            lines.append(BudgetLine(category, resource, gained.get(resource, 0.0), spent.get(resource, 0.0)))
    return lines


def _amounts_by_category(part) -> dict[str, dict[str, float]]:
    return {
        category: {
            r: float(v)
            for r, v in as_dict(first(amounts)).items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)
        }
        for category, amounts in as_dict(part).items()
    }


def _budgets(
    gamestate: Locator, countries: dict[str, Span], player: CountryBudget
) -> tuple[list[CountryBudget], list[Violation]]:
    """Every country with budget lines, in the save's order; the player's from its
    entry already parsed. A country whose budget cannot be read is reported and left
    out, not the save."""
    budgets: list[CountryBudget] = []
    violations: list[Violation] = []
    for key, span in countries.items():
        if not key.isdigit():
            continue
        found: CountryBudget | None
        if int(key) == player.country_id:
            found = player
        else:
            try:
                found = _other_budget(gamestate, int(key), span)
            except ClausewitzError as exc:
                violations.append(
                    Violation(
                        f"country {key}",
                        "warning",
                        "unreadable_budget",
                        "budget.current_month",
                        f"country {key}'s budget is not well-formed Clausewitz text ({exc}); its budget lines are left out",
                    )
                )
                continue
        if found is not None and found.lines:
            budgets.append(found)
    return budgets, violations


def _other_budget(gamestate: Locator, country_id: int, span: Span) -> CountryBudget | None:
    """A country's `name`, `type` (written near the entry's end) and the `income` and
    `expenses` of `budget.current_month`; the rest of its entry is left unread."""
    data = gamestate.data
    parts = gamestate.find_children(span, ["name", "budget"], indent=2)
    budget = parts.get("budget")
    month = gamestate.find_child(budget, "current_month", indent=3) if budget and budget.is_block(data) else None
    if month is None or not month.is_block(data):
        return None
    sides = gamestate.find_children(month, ["income", "expenses"], indent=4)
    if not sides:
        return None
    kind = gamestate.find_last_child(span, "type", indent=2)
    entry = {
        "budget": {"current_month": {side: gamestate.parse(found) for side, found in sides.items()}},
        "type": gamestate.parse(kind) if kind is not None else None,
    }
    name = gamestate.parse(parts["name"]) if "name" in parts else None
    return CountryBudget.of(country_id, render(name), entry, is_player=False)


def _stockpiles(country: dict) -> dict[str, float]:
    modules = as_dict(country.get("modules"))
    resources = as_dict(as_dict(modules.get("standard_economy_module")).get("resources"))
    return {r: float(v) for r, v in resources.items() if isinstance(v, (int, float))}


# --- planets ---------------------------------------------------------------------------


@dataclass
class Colony:
    planet_id: int
    name: str
    planet_class: str
    population: int

    @property
    def is_habitat(self) -> bool:
        return self.planet_class.startswith("pc_habitat")


def _colonies(gamestate: Locator, country: dict, player_id: int) -> tuple[list[Colony], list[Violation]]:
    """The player's colonies: `owned_planets`, each checked to be owned by the player."""
    owned = [p for p in as_list(country.get("owned_planets")) if is_id(p)]
    planets = gamestate.find("planets")
    table = gamestate.find_child(planets, "planet", indent=1) if planets and planets.is_block(gamestate.data) else None
    spans = gamestate.find_children(table, [str(p) for p in owned], indent=2) if table else {}
    colonies, violations = [], []
    for planet_id in owned:
        span = spans.get(str(planet_id))
        planet = gamestate.parse(span) if span is not None else None
        if not isinstance(planet, dict):
            violations.append(
                Violation(
                    f"planet {planet_id}",
                    "warning",
                    "missing_planet",
                    "owned_planets",
                    f"country {player_id} lists planet {planet_id} in owned_planets but `planets` has no such "
                    f"planet; left out of the colony figures",
                )
            )
            continue
        owner = planet.get("owner")
        if owner != player_id:
            violations.append(
                Violation(
                    f"planet {planet_id}",
                    "error",
                    "invariant_player_id",
                    "owner",
                    f"planet {planet_id} is in country {player_id}'s owned_planets but its owner is {owner}; "
                    f"ownership follows the player's id, so it is left out of the colony figures",
                )
            )
            continue
        colonies.append(
            Colony(planet_id, render(planet.get("name")), str(planet.get("planet_class") or ""), _population(planet))
        )
    return colonies, violations


def _population(planet: dict) -> int:
    pops = planet.get("num_sapient_pops")
    if isinstance(pops, (int, float)):
        return int(pops)
    return len(as_list(planet.get("pop_groups")))


# --- wars -----------------------------------------------------------------------------------


def _wars(gamestate: Locator, player_id: int) -> dict:
    span = gamestate.find("war")
    section = gamestate.parse(span) if span is not None else {}
    wars = {war_id: war for war_id, war in as_dict(section).items() if isinstance(war, dict)}
    mine = {war_id: war for war_id, war in wars.items() if player_id in _participants(war)}
    names = [render(war.get("name")) or f"war {war_id}" for war_id, war in mine.items()]
    return {
        "wars": names,
        "count": len(names),
        "player_at_war": bool(names),
        "all_wars_count": len(wars),
        "active_war_ids": [str(war_id) for war_id in mine],
    }


def _participants(war: dict) -> set:
    sides = [*as_list(war.get("attackers")), *as_list(war.get("defenders"))]
    return {side.get("country") for side in sides if isinstance(side, dict) and isinstance(side.get("country"), int)}


# --- the seed's shapes -----------------------------------------------------------------------


def _player_status(snapshot: Snapshot, country: dict, colonies: list[Colony]) -> dict:
    habitats = [c for c in colonies if c.is_habitat]
    worlds = [c for c in colonies if not c.is_habitat]
    total = sum(c.population for c in colonies)
    fleets = as_list(as_dict(country.get("fleets_manager")).get("owned_fleets"))
    return {
        "empire_name": snapshot.empire_name,
        "date": snapshot.date,
        "player_id": snapshot.player_id,
        "military_power": _whole(country.get("military_power")),
        "economy_power": _whole(country.get("economy_power")),
        "tech_power": _whole(country.get("tech_power")),
        "fleet_count": len(fleets),
        "fleet_size": _whole(country.get("fleet_size")),
        "celestial_bodies_in_territory": len(as_list(country.get("controlled_planets"))),
        "colonies": {
            "total_count": len(colonies),
            "total_population": total,
            "avg_pops_per_colony": round(total / len(colonies), 1) if colonies else 0.0,
            "habitats": {"count": len(habitats), "population": sum(c.population for c in habitats)},
            "planets": {"count": len(worlds), "population": sum(c.population for c in worlds)},
        },
    }


def _whole(value) -> int:
    return int(round(value)) if isinstance(value, (int, float)) else 0


def _resources(snapshot: Snapshot) -> dict:
    net = snapshot.net
    return {
        "stockpiles": snapshot.stockpiles,
        "monthly_income": snapshot.income,
        "monthly_expenses": snapshot.expenses,
        "net_monthly": net,
        "summary": {
            **{f"{r}_net": net.get(r, 0.0) for r in SUMMARY_RESOURCES},
            "research_total": round(sum(net.get(r, 0.0) for r in RESEARCH), 5),
        },
    }
