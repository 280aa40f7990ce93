"""The synthetic campaign as the Stellaris companion's other programs write it: the save
extractor's JSON outputs (with their real drift) and the companion's SQLite history
(`workbench.stellaris.synth`)."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path
from typing import Any

from workbench.stellaris.synth_campaign import (
    LEADER_CLASSES,
    RESEARCH,
    SUMMARY,
    Campaign,
    Raw,
    State,
    war_name,
)


def player_status(campaign: Campaign, state: State) -> dict:
    habitats = [c for c in state.colonies if c.planet_class == "pc_habitat"]
    worlds = [c for c in state.colonies if c.planet_class != "pc_habitat"]
    total = sum(c.population for c in state.colonies)
    return {
        "empire_name": campaign.empire_name,
        "date": state.date,
        "player_id": campaign.player_id,
        "military_power": round(state.military_power),
        "economy_power": round(state.economy_power),
        "tech_power": round(state.tech_power),
        "fleet_count": len(state.fleet_ids),
        "fleet_size": state.fleet_size,
        "celestial_bodies_in_territory": len(state.controlled),
        "colonies": {
            "total_count": len(state.colonies),
            "total_population": total,
            "avg_pops_per_colony": round(total / len(state.colonies), 1),
            "habitats": {"count": len(habitats), "population": sum(c.population for c in habitats)},
            "planets": {"count": len(worlds), "population": sum(c.population for c in worlds)},
        },
    }


def resources(state: State) -> dict:
    net = state.net
    return {
        "stockpiles": dict(state.stockpiles),
        "monthly_income": state.totals(state.income),
        "monthly_expenses": state.totals(state.expenses),
        "net_monthly": net,
        "summary": {
            **{f"{r}_net": net.get(r, 0.0) for r in SUMMARY},
            "research_total": round(sum(net.get(r, 0.0) for r in RESEARCH), 5),
        },
    }


def wars_output(campaign: Campaign, state: State) -> dict:
    names = [war_name(campaign, w) for w in state.wars]
    return {
        "wars": names,
        "count": len(names),
        "player_at_war": bool(names),
        "all_wars_count": len(names) + 1,
        "active_war_ids": [str(w["id"]) for w in state.wars],
    }


def situation(state: State, wars: dict) -> dict:
    net = state.net
    return {
        "game_phase": "early" if state.index < 6 else "mid",
        "year": int(state.date[:4]),
        "at_war": bool(wars["wars"]),
        "war_count": len(wars["wars"]),
        "contacts_made": True,
        "contact_count": 4,
        "rivals": ["Chosen Imperium"],
        "allies": [],
        "crisis_active": False,
        "economy": {
            "energy_net": net["energy"],
            "minerals_net": net["minerals"],
            "alloys_net": net["alloys"],
            "consumer_goods_net": net["consumer_goods"],
            "research_net": round(sum(net[r] for r in RESEARCH), 5),
            "resources_in_deficit": sum(1 for v in net.values() if v < 0),
        },
    }


def planets_output(campaign: Campaign, state: State) -> dict:
    planets: list[dict[str, Any]] = [
        {
            "id": str(c.planet_id),
            "name": c.name,
            "type": c.planet_class.removeprefix("pc_"),
            "population": c.population,
            "stability": round(c.stability, 1),
            "is_habitat": c.planet_class == "pc_habitat",
        }
        for c in state.colonies
    ]
    by_type: dict[str, int] = {}
    for planet in planets:
        by_type[planet["type"]] = by_type.get(planet["type"], 0) + 1
    return {
        "planets": planets,
        "count": len(planets),
        "total_population": sum(p["population"] for p in planets),
        "by_type": by_type,
    }


def diplomacy(campaign: Campaign) -> dict:
    return {
        "relations": [{"country_id": cid, "opinion": 10 * k} for k, cid in enumerate(campaign.rivals)],
        "treaties": ["research_agreement"],
        "allies": [],
        "rivals": ["Chosen Imperium"],
        "federation": None,
        "relation_count": len(campaign.rivals),
    }


def full_briefing(campaign: Campaign, state: State) -> dict:
    status, resource = player_status(campaign, state), resources(state)
    net = resource["net_monthly"]
    return {
        "meta": {"empire_name": status["empire_name"], "date": state.date, "player_id": campaign.player_id},
        "military": {
            "military_power": status["military_power"],
            "fleet_count": status["fleet_count"],
            "fleet_size": status["fleet_size"],
        },
        "economy": {
            "economy_power": status["economy_power"],
            "tech_power": status["tech_power"],
            "net_monthly": dict(net),
            "key_resources": {
                "energy": net["energy"],
                "minerals": net["minerals"],
                "alloys": net["alloys"],
                "consumer_goods": net["consumer_goods"],
                "research_total": resource["summary"]["research_total"],
            },
        },
        "territory": {
            "celestial_bodies_in_territory": status["celestial_bodies_in_territory"],
            "colonies": status["colonies"],
        },
        "diplomacy": {
            "relation_count": len(campaign.rivals),
            "allies": [],
            "rivals": ["Chosen Imperium"],
            "federation": None,
        },
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
    files.append(
        (
            "get_planets.json",
            planets,
            [
                {"locator": tool("get_planets"), "field": "planets[0].is_habitat", "rule": "required_key"},
                {"locator": tool("get_planets"), "field": "total_population", "rule": "required_key"},
            ],
        )
    )

    legacy = resources(latest)
    legacy["monthly_net"] = legacy.pop("net_monthly")  # the documented old bug
    files.append(
        (
            "get_resources.json",
            legacy,
            [{"locator": tool("get_resources"), "field": "net_monthly", "rule": "required_key"}],
        )
    )

    files.append(
        (
            "get_technology.json",
            {
                "researched_techs": latest.techs,
                "completed_count": len(latest.techs),
                "in_progress": {"physics": "tech_lasers_2", "society": None, "engineering": "tech_cruisers"},
                "tech_count": len(latest.techs),
            },
            [
                {"locator": tool("get_technology"), "field": "completed", "rule": "required_key"},
                {"locator": tool("get_technology"), "field": "current_research", "rule": "required_key"},
                {"locator": tool("get_technology"), "field": "by_category", "rule": "required_key"},
            ],
        )
    )

    treaties = diplomacy(campaign)
    treaties["treaties"] = [
        {"type": "research_agreement", "with": "Chosen Imperium"},
        {"type": "commercial_pact", "with": "Kilik Cooperative"},
    ]
    files.append(
        (
            "get_diplomacy.json",
            treaties,
            [{"locator": tool("get_diplomacy"), "field": "treaties[0]", "rule": "wrong_type"}],
        )
    )

    leaders: list[dict[str, Any]] = [
        {
            "name": f"Leader {k}",
            "class": rng.choice(LEADER_CLASSES),
            "level": rng.randint(1, 8),
            "age": rng.randint(30, 90),
            "traits": ["leader_trait_resilient"],
        }
        for k in range(6)
    ]
    leaders[3].pop("name")  # real outputs have leaders without a name
    leaders[4]["class"] = "envoy"
    by_class: dict[str, int] = {}
    for leader in leaders:
        by_class[leader["class"]] = by_class.get(leader["class"], 0) + 1
    files.append(
        (
            "get_leaders.json",
            {"leaders": leaders, "count": len(leaders), "by_class": by_class},
            [{"locator": tool("get_leaders"), "field": "leaders[3].name", "rule": "required_key"}],
        )
    )

    broken_wars = wars_output(campaign, at_war)
    broken_wars["wars"] = []  # `wars` not populated although the player is at war
    files.append(
        ("get_wars.json", broken_wars, [{"locator": tool("get_wars"), "field": "wars", "rule": "invariant_wars"}])
    )

    files.append(("get_armies.json", {"armies": [{"id": "52", "type": "defense_army"}], "count": 1}, []))
    files.append(
        (
            "get_fleets.json",
            Raw(json.dumps({"count": 3, "fleet_names": ["Home Guard", "1st Fleet"]})[:37]),
            [{"locator": tool("get_fleets"), "field": "(record)", "rule": "invalid_json"}],
        )
    )
    starbase = {"id": "1", "level": "starport", "modules": ["shipyard"], "buildings": []}
    files.append(("get_starbases.json", {"starbases": [starbase], "count": 1, "by_level": {"starport": 1}}, []))
    files.append(
        (
            "get_empire.json",
            {
                "name": "Chosen Imperium",
                "found": True,
                "military_power": 5120.5,
                "economy_power": 870.0,
                "opinion": -35.0,
                "raw_data_preview": "name={...}",
            },
            [],
        )
    )
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
        "get_player_status": player_status(campaign, state),
        "get_resources": resources(state),
        "get_wars": wars,
        "get_situation": peace,
        "get_planets": planets,
        "get_full_briefing": briefing,
    }
    last = len(planets["planets"]) - 1
    return (
        f"{state.date}.briefing.json",
        bundle,
        [
            {
                "locator": "tool get_full_briefing",
                "field": "economy.net_monthly.energy",
                "rule": "invariant_full_briefing",
            },
            {"locator": "tool get_situation", "field": "at_war", "rule": "invariant_wars"},
            {"locator": "tool get_planets", "field": f"planets[{last}].owner", "rule": "invariant_player_id"},
        ],
    )


def _clean_bundle(campaign: Campaign, state: State):
    wars = wars_output(campaign, state)
    resource = resources(state)
    # One net that is not income - expenses.
    food = resource["net_monthly"]["food"] = round(resource["net_monthly"]["food"] + 5.0, 5)
    resource["summary"]["food_net"] = food
    briefing = full_briefing(campaign, state)
    briefing["economy"]["net_monthly"]["food"] = food
    bundle = {
        "get_player_status": player_status(campaign, state),
        "get_resources": resource,
        "get_wars": wars,
        "get_situation": situation(state, wars),
        "get_full_briefing": briefing,
    }
    return (
        f"{state.date}.briefing.json",
        bundle,
        [{"locator": "tool get_resources", "field": "net_monthly.food", "rule": "invariant_net_monthly"}],
    )


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
    rows: list[tuple] = []
    faults: list[dict] = []
    session = f"{campaign.slug}-session"
    for number, state in enumerate(campaign.states, start=1):
        briefing = full_briefing(campaign, state)
        net = briefing["economy"]["net_monthly"]
        event_state = {
            "meta": briefing["meta"],
            "military": {"military_power": briefing["military"]["military_power"]},
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
        rows.append(
            (
                session,
                1_760_000_000 + 3600 * number,
                state.date,
                f"{rng.getrandbits(64):016x}",
                briefing["military"]["military_power"],
                len(state.colonies),
                len(state.wars),
                energy,
                net["alloys"],
                json.dumps(briefing) if number == 1 else "{}",
                state_text,
            )
        )
    rows.append(
        (session, 1_760_000_000 + 3600 * (len(rows) + 1), "unknown", None, None, None, None, None, None, None, "{}")
    )
    faults.append({"locator": f"row {len(rows)}", "field": "game_date", "rule": "date_format"})
    return rows, faults


def write_history(path: Path, campaign: Campaign, rows: list[tuple]) -> None:
    if path.exists():
        path.unlink()
    con = sqlite3.connect(path)
    try:
        con.execute("PRAGMA journal_mode = WAL")  # as the companion keeps it; the log is folded in on close
        con.executescript(HISTORY_SCHEMA)
        con.execute(
            "INSERT INTO sessions VALUES (?, ?, ?, ?)",
            (f"{campaign.slug}-session", campaign.slug, campaign.empire_name, 1_760_000_000),
        )
        con.executemany(
            "INSERT INTO snapshots (session_id, captured_at, game_date, save_hash, military_power, colony_count, "
            "wars_count, energy_net, alloys_net, full_briefing_json, event_state_json) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        con.commit()
    finally:
        con.close()


# --- the whole corpus -------------------------------------------------------------------------------------
