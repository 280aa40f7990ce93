"""The twelve feature families of the EC4X bot's coverage gate.

They follow seed 004's command categories, one family per kind of order a draft can
carry: zero-turn commands (1), fleet commands (2), construction (3), the four parts of
economy and R&D (4: research, colony management, terraforming, population transfer),
espionage operations and espionage-point investment (5: `espionageActions` and
`invest ebp=N cip=N`), diplomacy (6), repair and scrap (7). The bot's own coverage
script uses the same twelve names.

How a trace's `featureTags` map to families: a tag equal to a family name is that
family (`fleet`, `build`, `colony_management`, ...); `ztc_` and a zero-turn command
(`ztc_merge_fleets`, one of the nine the bot writes next to `zero_turn`) counts as
`zero_turn`. Any other tag maps to no family and is reported as drift.

How an order draft maps to families, as the bot tags the packet it compiles: the
family's list is non-empty, the diplomatic command is present, research allocates
something (economic or science points above 0, or any tech field), or an investment is
positive; see `DRAFT_FAMILIES`.
"""

from __future__ import annotations

from workbench.ec4x.orders import OrderDraft
from workbench.ec4x.seed import ZERO_TURN_COMMANDS
from workbench.schema import SchemaError, missing_field

FAMILIES = (
    "zero_turn",
    "fleet",
    "build",
    "repair",
    "scrap",
    "diplomacy",
    "population_transfer",
    "terraform",
    "colony_management",
    "espionage",
    "research",
    "investment",
)


def zero_turn_tag(command: str) -> str:
    """The bot's tag for a zero-turn command: `ztc_` and the command in snake case."""
    return "ztc_" + command.replace("-", "_")


ZERO_TURN_TAGS = tuple(zero_turn_tag(command) for command in ZERO_TURN_COMMANDS)
TAG_FAMILIES = {**{f: f for f in FAMILIES}, **{tag: "zero_turn" for tag in ZERO_TURN_TAGS}}


# Each family's predicate reads the values of the draft's top-level keys it names (SQL
# expressions of JSON values, read out of the draft in one parse by `json_extract`, so
# written without whitespace; see `draft_families_sql`). A value's type is told by its
# first character, and an empty list is `[]`: no parse of the command lists again.
def _non_empty(key: str):
    return (key,), lambda at: f"coalesce(starts_with({at[key]}, '[') AND {at[key]} <> '[]', false)"


def _is_object(value: str) -> str:
    return f"coalesce(starts_with({value}, '{{'), false)"


def _positive(value: str) -> str:
    return f"coalesce(TRY_CAST(json_extract_string({value}, '$') AS DOUBLE), 0) > 0"


def _research(at: dict[str, str]) -> str:
    allocation = at["researchAllocation"]

    def points(name: str) -> str:
        return _positive(f"json_extract({allocation}, '$.{name}')")

    return (
        f"({_is_object(allocation)} AND ({points('economic')} OR {points('science')} "
        f"OR coalesce(json_type({allocation}, '$.fields') = 'OBJECT' "
        f"AND len(json_keys({allocation}, '$.fields')) > 0, false)))"
    )


# Does the draft use the family: (the top-level keys read, the SQL predicate over their values).
DRAFT_FAMILIES = {
    "zero_turn": _non_empty("zeroTurnCommands"),
    "fleet": _non_empty("fleetCommands"),
    "build": _non_empty("buildCommands"),
    "repair": _non_empty("repairCommands"),
    "scrap": _non_empty("scrapCommands"),
    "diplomacy": (("diplomaticCommand",), lambda at: _is_object(at["diplomaticCommand"])),
    "population_transfer": _non_empty("populationTransfers"),
    "terraform": _non_empty("terraformCommands"),
    "colony_management": _non_empty("colonyManagement"),
    "espionage": _non_empty("espionageActions"),
    "research": (("researchAllocation",), _research),
    "investment": (
        ("ebpInvestment", "cipInvestment"),
        lambda at: f"({_positive(at['ebpInvestment'])} OR {_positive(at['cipInvestment'])})",
    ),
}
# The sub-fields `_research` reads, checked against the model with the keys.
_RESEARCH_PATHS = ("researchAllocation.economic", "researchAllocation.science", "researchAllocation.fields")


def draft_keys() -> dict[str, str]:
    """Top-level draft key -> the family it counts for."""
    return {key: family for family, (keys, _) in DRAFT_FAMILIES.items() for key in keys}


def _check_draft_paths() -> None:
    """Every key a predicate reads names a field of the draft model, checked at import
    as a column's path is: a renamed field would otherwise count for no family, silently."""
    for path in (*draft_keys(), *_RESEARCH_PATHS):
        problem = missing_field(OrderDraft, path)
        if problem:
            raise SchemaError(f"feature family {draft_keys().get(path.split('.')[0])} reads `{path}`: {problem}")


_check_draft_paths()


def family_of_tag(tag: str) -> str | None:
    return TAG_FAMILIES.get(tag)


def draft_families_sql(at: dict[str, str]) -> str:
    """SQL list of the families an order draft uses, in FAMILIES order; `at` holds the SQL
    of the value of each top-level key (`draft_keys`)."""
    cases = ", ".join(f"CASE WHEN {DRAFT_FAMILIES[f][1](at)} THEN '{f}' END" for f in FAMILIES)
    return f"list_filter([{cases}], lambda f: f IS NOT NULL)"


def tag_family_sql(tag: str) -> str:
    """SQL: the family of the feature tag expression `tag`, or NULL."""
    exact = ", ".join(f"'{f}'" for f in FAMILIES)
    zero_turn = ", ".join(f"'{t}'" for t in ZERO_TURN_TAGS)
    return f"CASE WHEN {tag} IN ({exact}) THEN {tag} WHEN {tag} IN ({zero_turn}) THEN 'zero_turn' END"
