"""The twelve feature families of the EC4X bot's coverage gate.

They follow seed 004's command categories, one family per kind of order a draft can
carry: zero-turn commands (1), fleet commands (2), construction (3), the four parts of
economy and R&D (4: research, colony management, terraforming, population transfer),
espionage operations and espionage-point investment (5: `espionageActions` and
`invest ebp=N cip=N`), diplomacy (6), repair and scrap (7). The bot's own coverage
script uses the same twelve names.

How a trace's `featureTags` map to families: a tag equal to a family name is that
family (`fleet`, `build`, `colony_management`, ...); a tag starting with `ztc_` names one
zero-turn command (`ztc_merge_fleets`) and counts as `zero_turn`. Any other tag maps to
no family and is reported as drift.

How an order draft maps to families: the family's list is non-empty, its object is
present, or (investment) an investment is positive; see `DRAFT_PREDICATES`.
"""

from __future__ import annotations

FAMILIES = (
    "zero_turn", "fleet", "build", "repair", "scrap", "diplomacy",
    "population_transfer", "terraform", "colony_management", "espionage", "research", "investment",
)
TAG_PREFIXES = {"ztc_": "zero_turn"}


# Path arguments rather than `j->'key'`: DuckDB then reads the value in place instead
# of copying it out first, which halves the cost over a large batch.
def _non_empty(key: str) -> str:
    return f"coalesce(json_array_length(j, '$.{key}'), 0) > 0"


def _positive(key: str) -> str:
    return f"coalesce(TRY_CAST(json_extract_string(j, '$.{key}') AS DOUBLE), 0) > 0"


# SQL over `j`, an order draft as JSON: does the draft use the family?
DRAFT_PREDICATES = {
    "zero_turn": _non_empty("zeroTurnCommands"),
    "fleet": _non_empty("fleetCommands"),
    "build": _non_empty("buildCommands"),
    "repair": _non_empty("repairCommands"),
    "scrap": _non_empty("scrapCommands"),
    "diplomacy": "json_type(j, '$.diplomaticCommand') = 'OBJECT'",
    "population_transfer": _non_empty("populationTransfers"),
    "terraform": _non_empty("terraformCommands"),
    "colony_management": _non_empty("colonyManagement"),
    "espionage": _non_empty("espionageActions"),
    "research": "json_type(j, '$.researchAllocation') = 'OBJECT'",
    "investment": f"({_positive('ebpInvestment')} OR {_positive('cipInvestment')})",
}


def family_of_tag(tag: str) -> str | None:
    if tag in FAMILIES:
        return tag
    for prefix, family in TAG_PREFIXES.items():
        if tag.startswith(prefix):
            return family
    return None


def draft_families_sql() -> str:
    """SQL list of the families an order draft `j` uses, in FAMILIES order."""
    cases = ", ".join(f"CASE WHEN {DRAFT_PREDICATES[f]} THEN '{f}' END" for f in FAMILIES)
    return f"list_filter([{cases}], lambda f: f IS NOT NULL)"


def tag_family_sql(tag: str) -> str:
    """SQL: the family of the feature tag expression `tag`, or NULL."""
    exact = ", ".join(f"'{f}'" for f in FAMILIES)
    prefixes = " ".join(
        f"WHEN starts_with({tag}, '{prefix}') THEN '{family}'" for prefix, family in TAG_PREFIXES.items()
    )
    return f"CASE WHEN {tag} IN ({exact}) THEN {tag} {prefixes} END"
