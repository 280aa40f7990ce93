"""Seed 000 (the save extractor's tool return schemas) as pydantic models: the contract,
declared once.

Every tool of the seed has a model; nested shapes are models too. Models are strict
(`"5"` is not an int, `true` is not an int) but accept a whole float where an int is
due (`12.0`), since JSON writers do not keep the difference. Keys the seed does not
list are ignored here and reported separately as `info` (see `findings.py`).

Two kinds of knowledge about real outputs ride on the fields, so they too are declared
once: `seen_as` lists the names real extractors write instead of the seed's (the
"did you mean" hints beyond what a fuzzy match finds), and `documented` lists the
values the seed names for an open string (other values are drift, reported as `info`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator
from pydantic.config import JsonDict
from pydantic_core import PydanticCustomError

from workbench.schema import INT64
from workbench.stellaris.dates import day_number


def _whole_float_as_int(value):
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _stellaris_date(value):
    if isinstance(value, str) and day_number(value) is None:
        raise PydanticCustomError(
            "date_format",
            "expected a Stellaris date `YYYY.MM.DD` (months 1-12, days 1-30); found {found}",
            {"found": repr(value)},
        )
    return value


# Within the BIGINT a figure is stored as: a larger one is a violation, not a NULL.
Int = Annotated[int, BeforeValidator(_whole_float_as_int), Field(ge=INT64[0], le=INT64[1])]
GameDate = Annotated[str, BeforeValidator(_stellaris_date)]


def key(default: Any = ..., *, seen_as: tuple[str, ...] = (), documented: tuple[str, ...] = (), alias=None):
    """A seed key, with what real outputs are known to write instead (`seen_as`) and the
    values the seed documents for it (`documented`)."""
    extra: JsonDict = {}
    if seen_as:
        extra["seen_as"] = list(seen_as)
    if documented:
        extra["documented"] = list(documented)
    return Field(default, alias=alias, json_schema_extra=extra or None)


class Model(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", populate_by_name=True)


# --- get_player_status ------------------------------------------------------------


class ColonyGroup(Model):
    count: Int
    population: Int


class Colonies(Model):
    total_count: Int
    total_population: Int = key(seen_as=("total_pops",))
    avg_pops_per_colony: float
    habitats: ColonyGroup
    planets: ColonyGroup


class GetPlayerStatus(Model):
    empire_name: str
    date: GameDate
    player_id: Int
    military_power: Int
    economy_power: Int
    tech_power: Int
    fleet_count: Int
    fleet_size: Int
    celestial_bodies_in_territory: Int = key(seen_as=("planet_count",))
    colonies: Colonies


# --- get_wars, get_fleets -----------------------------------------------------------


class GetWars(Model):
    wars: list[str]
    count: Int
    player_at_war: bool
    all_wars_count: Int
    active_war_ids: list[str] | None = None  # "may be absent"


class GetFleets(Model):
    count: Int
    fleet_names: list[str]


# --- get_resources ----------------------------------------------------------------


class ResourceSummary(Model):
    energy_net: float
    minerals_net: float
    food_net: float
    alloys_net: float
    consumer_goods_net: float
    research_total: float


class GetResources(Model):
    stockpiles: dict[str, float]
    monthly_income: dict[str, float]
    monthly_expenses: dict[str, float]
    net_monthly: dict[str, float] = key(seen_as=("monthly_net",))
    summary: ResourceSummary


# --- get_diplomacy, get_leaders ------------------------------------------------------


class GetDiplomacy(Model):
    relations: list[dict]
    treaties: list[str]
    allies: list[str]
    rivals: list[str]
    federation: str | None
    relation_count: Int


class Leader(Model):
    name: str
    class_: str = key(alias="class", documented=("scientist", "admiral", "general", "governor"))
    level: Int
    age: Int
    traits: list[str]


class GetLeaders(Model):
    leaders: list[Leader]
    count: Int
    by_class: dict[str, Int]


# --- get_technology -----------------------------------------------------------------


class CurrentResearch(Model):
    physics: str | None
    society: str | None
    engineering: str | None


class GetTechnology(Model):
    completed: list[str] = key(seen_as=("researched_techs",))
    completed_count: Int = key(seen_as=("researched_count", "tech_count"))
    current_research: CurrentResearch = key(seen_as=("in_progress",))
    by_category: dict[str, Int]


# --- get_planets, get_starbases --------------------------------------------------------


class Planet(Model):
    id: str
    name: str
    type: str
    population: Int = key(seen_as=("pops",))
    stability: float | None
    is_habitat: bool


class GetPlanets(Model):
    planets: list[Planet]
    count: Int
    total_population: Int = key(seen_as=("total_pops",))
    by_type: dict[str, Int]


class Starbase(Model):
    id: str
    level: str
    modules: list[str]
    buildings: list[str]


class GetStarbases(Model):
    starbases: list[Starbase]
    count: Int
    by_level: dict[str, Int]


# --- get_full_briefing ------------------------------------------------------------------


class BriefingMeta(Model):
    empire_name: str
    date: GameDate
    player_id: Int


class BriefingMilitary(Model):
    military_power: Int
    fleet_count: Int
    fleet_size: Int


class KeyResources(Model):
    energy: float
    minerals: float
    alloys: float
    consumer_goods: float
    research_total: float


class BriefingEconomy(Model):
    economy_power: Int
    tech_power: Int
    net_monthly: dict[str, float] = key(seen_as=("monthly_net",))
    key_resources: KeyResources


class GetFullBriefing(Model):
    meta: BriefingMeta
    military: BriefingMilitary
    economy: BriefingEconomy
    territory: dict
    diplomacy: dict
    defense: dict
    leadership: dict


# --- get_empire, search, get_situation ------------------------------------------------------


class GetEmpire(Model):
    name: str
    found: bool
    military_power: float | None = None  # present when found
    economy_power: float | None = None
    opinion: float | None = None
    raw_data_preview: str | None = None
    error: str | None = None  # present when parsing failed

    @model_validator(mode="after")
    def found_empire_has_figures(self):
        if self.found and self.error is None:
            for name in ("military_power", "economy_power"):
                if getattr(self, name) is None:
                    raise PydanticCustomError(
                        "required_when_found",
                        "expected key `{field}` when `found` is true; found no such key (or null)",
                        {"field": name},
                    )
        return self


class SearchMatch(Model):
    position: Int
    context: str


class Search(Model):
    query: str
    matches: list[SearchMatch]
    total_found: Int
    truncated: bool | None = None
    error: str | None = None


class SituationEconomy(Model):
    energy_net: float
    minerals_net: float
    alloys_net: float
    consumer_goods_net: float
    research_net: float
    resources_in_deficit: Int


class GetSituation(Model):
    game_phase: Literal["early", "mid", "late", "endgame"]
    year: Int
    at_war: bool
    war_count: Int
    contacts_made: bool
    contact_count: Int
    rivals: list[str]
    allies: list[str]
    crisis_active: bool
    economy: SituationEconomy


# --- the consolidated surface (Discord `/ask`) ------------------------------------------------


class GetDetails(Model):
    """`get_details(categories)`: category -> that tool's schema; any subset."""

    leaders: GetLeaders | None = None
    planets: GetPlanets | None = None
    starbases: GetStarbases | None = None
    technology: GetTechnology | None = None
    wars: GetWars | None = None
    fleets: GetFleets | None = None
    resources: GetResources | None = None
    diplomacy: GetDiplomacy | None = None


TOOLS: dict[str, type[Model]] = {
    "get_player_status": GetPlayerStatus,
    "get_wars": GetWars,
    "get_fleets": GetFleets,
    "get_resources": GetResources,
    "get_diplomacy": GetDiplomacy,
    "get_leaders": GetLeaders,
    "get_technology": GetTechnology,
    "get_planets": GetPlanets,
    "get_starbases": GetStarbases,
    "get_full_briefing": GetFullBriefing,
    "get_empire": GetEmpire,
    "search": Search,
    "get_situation": GetSituation,
    # The consolidated tools return the schemas above.
    "get_snapshot": GetFullBriefing,
    "get_details": GetDetails,
    "get_empire_details": GetEmpire,
    "search_save_file": Search,
}
