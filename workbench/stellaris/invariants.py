"""The seed's four key invariants, checked wherever the data allows.

They run on a bundle: the tool outputs that describe one moment of one game (a
`*.briefing.json`, a single `get_<tool>.json`, the outputs derived from a save, or a
companion history row). Each check reads raw values defensively, so a malformed output
(already reported by its schema check) never hides the invariants of the others.

1. `invariant_wars`: `get_wars` populates `wars` (as many names as `count`, some when
   `player_at_war`), and `get_situation.at_war`/`war_count` agree with it.
2. `invariant_net_monthly`: `net_monthly[r]` = `monthly_income[r]` - `monthly_expenses[r]`
   (tolerance 0.01), and the summary's nets are those values.
3. `invariant_player_id`: what the outputs list as the player's (planets, starbases,
   fleets with an `owner`) is owned by the save's `player_id`, not by a hard-coded 0.
4. `invariant_full_briefing`: a full briefing carries the values of its source tools.
"""

from __future__ import annotations

from typing import Any, TypeGuard

from workbench.stellaris.findings import tool_locator
from workbench.violation import Violation

TOLERANCE = 0.01
MISSING = object()

# summary key -> the net_monthly resource it restates.
SUMMARY_NETS = {
    "energy_net": "energy",
    "minerals_net": "minerals",
    "food_net": "food",
    "alloys_net": "alloys",
    "consumer_goods_net": "consumer_goods",
}

# (key in the full briefing, source tool, key in that tool's output). The real
# extractor fills `key_resources` with the nets of `get_resources`.
BRIEFING_SOURCES: list[tuple[str, str, str]] = [
    ("meta.empire_name", "get_player_status", "empire_name"),
    ("meta.date", "get_player_status", "date"),
    ("meta.player_id", "get_player_status", "player_id"),
    ("military.military_power", "get_player_status", "military_power"),
    ("military.fleet_count", "get_player_status", "fleet_count"),
    ("military.fleet_size", "get_player_status", "fleet_size"),
    ("economy.economy_power", "get_player_status", "economy_power"),
    ("economy.tech_power", "get_player_status", "tech_power"),
    ("economy.net_monthly", "get_resources", "net_monthly"),
    ("economy.key_resources.energy", "get_resources", "net_monthly.energy"),
    ("economy.key_resources.minerals", "get_resources", "net_monthly.minerals"),
    ("economy.key_resources.alloys", "get_resources", "net_monthly.alloys"),
    ("economy.key_resources.consumer_goods", "get_resources", "net_monthly.consumer_goods"),
    ("economy.key_resources.research_total", "get_resources", "summary.research_total"),
    ("territory.celestial_bodies_in_territory", "get_player_status", "celestial_bodies_in_territory"),
    ("territory.colonies", "get_player_status", "colonies"),
    ("diplomacy.relation_count", "get_diplomacy", "relation_count"),
    ("diplomacy.allies", "get_diplomacy", "allies"),
    ("diplomacy.rivals", "get_diplomacy", "rivals"),
    ("diplomacy.federation", "get_diplomacy", "federation"),
]

# Lists whose items are the player's own, and so must carry the player's id as owner.
OWNED_LISTS = {"get_planets": "planets", "get_starbases": "starbases", "get_fleets": "fleets"}
OWNER_KEYS = ("owner", "owner_id")


def check_bundle(outputs: dict[str, Any], player_id: int | None = None) -> list[Violation]:
    """Every invariant the outputs allow. `player_id` is the save's, when known."""
    return [
        *wars_populated(outputs),
        *net_monthly_consistent(outputs),
        *ownership_uses_player_id(outputs, player_id),
        *full_briefing_matches_sources(outputs),
    ]


def dig(value, path: str, default=MISSING):
    """`dig(output, "economy.net_monthly.energy")`; `default` when any step is missing."""
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return default
        value = value[part]
    return value


def is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def same(a, b) -> bool:
    """Equal, numbers within the tolerance, containers item by item."""
    if is_number(a) and is_number(b):
        return abs(a - b) <= TOLERANCE
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def _error(tool: str, rule: str, field: str, message: str) -> Violation:
    return Violation(tool_locator(tool), "error", rule, field, message)


# --- 1. wars ----------------------------------------------------------------------------


def wars_populated(outputs: dict[str, Any]) -> list[Violation]:
    wars_output = outputs.get("get_wars")
    wars = dig(wars_output, "wars")
    if not isinstance(wars, list):
        return []  # a missing or mistyped `wars` is the schema check's finding
    found = []
    count = dig(wars_output, "count")
    if is_number(count) and count != len(wars):
        found.append(
            _error(
                "get_wars",
                "invariant_wars",
                "wars",
                f"`wars` lists {len(wars)} name(s) but `count` is {count}: get_wars must "
                f"populate `wars` (get_situation reads it)",
            )
        )
    at_war = dig(wars_output, "player_at_war")
    if at_war is True and not wars:
        found.append(
            _error(
                "get_wars",
                "invariant_wars",
                "wars",
                "`player_at_war` is true but `wars` is empty: get_wars must populate `wars`",
            )
        )
    situation = outputs.get("get_situation")
    situation_at_war = dig(situation, "at_war")
    if isinstance(situation_at_war, bool) and situation_at_war != bool(wars):
        found.append(
            _error(
                "get_situation",
                "invariant_wars",
                "at_war",
                f"`at_war` is {str(situation_at_war).lower()} but get_wars lists {len(wars)} war(s) in the same bundle",
            )
        )
    war_count = dig(situation, "war_count")
    if is_number(war_count) and war_count != len(wars):
        found.append(
            _error(
                "get_situation",
                "invariant_wars",
                "war_count",
                f"`war_count` is {war_count} but get_wars lists {len(wars)} war(s) in the same bundle",
            )
        )
    return found


# --- 2. net_monthly ------------------------------------------------------------------------


def net_monthly_consistent(outputs: dict[str, Any]) -> list[Violation]:
    resources = outputs.get("get_resources")
    net, income, expenses = (dig(resources, k) for k in ("net_monthly", "monthly_income", "monthly_expenses"))
    if not isinstance(net, dict):
        return []
    found = []
    if isinstance(income, dict) and isinstance(expenses, dict):
        for resource in dict.fromkeys([*net, *income, *expenses]):
            found += _net_of(resource, net, income, expenses)
    for summary_key, resource in SUMMARY_NETS.items():
        stated, actual = dig(resources, f"summary.{summary_key}"), net.get(resource, MISSING)
        if is_number(stated) and is_number(actual) and not same(stated, actual):
            found.append(
                _error(
                    "get_resources",
                    "invariant_net_monthly",
                    f"summary.{summary_key}",
                    f"`summary.{summary_key}` is {stated} but `net_monthly.{resource}` is {actual}",
                )
            )
    return found


def _net_of(resource: str, net: dict, income: dict, expenses: dict) -> list[Violation]:
    gained, spent = income.get(resource, 0.0), expenses.get(resource, 0.0)
    if not (is_number(gained) and is_number(spent)):
        return []
    expected = gained - spent
    stated = net.get(resource, MISSING)
    if stated is MISSING:
        if abs(expected) <= TOLERANCE:
            return []
        return [
            _error(
                "get_resources",
                "invariant_net_monthly",
                f"net_monthly.{resource}",
                f"`net_monthly` has no `{resource}` but income - expenses = {gained:g} - {spent:g} = {expected:g}",
            )
        ]
    if is_number(stated) and abs(stated - expected) > TOLERANCE:
        return [
            _error(
                "get_resources",
                "invariant_net_monthly",
                f"net_monthly.{resource}",
                f"`net_monthly.{resource}` is {stated:g} but income - expenses = {gained:g} - {spent:g} "
                f"= {expected:g} (tolerance {TOLERANCE})",
            )
        ]
    return []


# --- 3. player_id ----------------------------------------------------------------------------


def bundle_player_id(outputs: dict[str, Any]) -> tuple[int | None, str]:
    """The player's id the bundle states, and where it says so."""
    for tool, path in (
        ("get_player_status", "player_id"),
        ("get_full_briefing", "meta.player_id"),
        ("get_snapshot", "meta.player_id"),
    ):
        value = dig(outputs.get(tool), path)
        if isinstance(value, int) and not isinstance(value, bool):
            return value, f"{tool}.{path}"
    return None, ""


def ownership_uses_player_id(outputs: dict[str, Any], player_id: int | None = None) -> list[Violation]:
    source = "the save's `player` block"
    if player_id is None:
        player_id, source = bundle_player_id(outputs)
    if player_id is None:
        return []
    found = []
    for tool, list_key in OWNED_LISTS.items():
        items = dig(outputs.get(tool), list_key)
        for index, item in enumerate(items if isinstance(items, list) else []):
            for owner_key in OWNER_KEYS:
                owner = item.get(owner_key) if isinstance(item, dict) else None
                if isinstance(owner, int) and owner != player_id:
                    found.append(
                        _error(
                            tool,
                            "invariant_player_id",
                            f"{list_key}[{index}].{owner_key}",
                            _owner_message(owner, player_id, source),
                        )
                    )
    return found


def _owner_message(owner: int, player_id: int, source: str) -> str:
    why = " (a hard-coded 0?)" if owner == 0 else ""
    return (
        f"owner is {owner}{why} but the player's id is {player_id} (from {source}): ownership "
        f"must use the save's player_id"
    )


# --- 4. full briefing ---------------------------------------------------------------------------


def full_briefing_matches_sources(outputs: dict[str, Any]) -> list[Violation]:
    found = []
    for tool in ("get_full_briefing", "get_snapshot"):
        briefing = outputs.get(tool)
        if isinstance(briefing, dict):
            for briefing_key, source_tool, source_key in BRIEFING_SOURCES:
                found += _agrees(tool, briefing, briefing_key, outputs.get(source_tool), source_tool, source_key)
    return found


def _agrees(tool, briefing, briefing_key, source, source_tool, source_key) -> list[Violation]:
    mine, theirs = dig(briefing, briefing_key), dig(source, source_key)
    if mine is MISSING or theirs is MISSING:
        return []
    if isinstance(mine, dict) and isinstance(theirs, dict) and not same(mine, theirs):
        return _dict_differences(tool, briefing_key, mine, source_tool, source_key, theirs)
    if same(mine, theirs):
        return []
    return [
        _error(
            tool,
            "invariant_full_briefing",
            briefing_key,
            f"`{briefing_key}` is {_shown(mine)} but {source_tool}.{source_key} is {_shown(theirs)} in the same bundle",
        )
    ]


def _dict_differences(tool, briefing_key, mine: dict, source_tool, source_key, theirs: dict) -> list[Violation]:
    found = []
    for name in dict.fromkeys([*theirs, *mine]):
        a, b = mine.get(name, MISSING), theirs.get(name, MISSING)
        if a is not MISSING and b is not MISSING and same(a, b):
            continue
        field = f"{briefing_key}.{name}"
        if a is MISSING:
            text = f"`{briefing_key}` has no `{name}` but {source_tool}.{source_key}.{name} is {_shown(b)} (data lost)"
        elif b is MISSING:
            text = f"`{field}` is {_shown(a)} but {source_tool}.{source_key} has no `{name}`"
        else:
            text = f"`{field}` is {_shown(a)} but {source_tool}.{source_key}.{name} is {_shown(b)} in the same bundle"
        found.append(_error(tool, "invariant_full_briefing", field, text))
    return found


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
