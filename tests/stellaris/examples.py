"""Tool outputs shaped exactly as seed 000 documents them, one per tool."""

import copy

RESOURCES = {
    "stockpiles": {"energy": 1200.5, "minerals": 800.0, "alloys": 310.25},
    "monthly_income": {"energy": 140.0, "minerals": 95.5, "alloys": 30.0},
    "monthly_expenses": {"energy": 120.0, "minerals": 60.0, "alloys": 42.5},
    "net_monthly": {"energy": 20.0, "minerals": 35.5, "alloys": -12.5},
    "summary": {
        "energy_net": 20.0,
        "minerals_net": 35.5,
        "food_net": 0.0,
        "alloys_net": -12.5,
        "consumer_goods_net": 0.0,
        "research_total": 0.0,
    },
}

PLAYER_STATUS = {
    "empire_name": "United Nations of Earth",
    "date": "2342.06.15",
    "player_id": 16777223,
    "military_power": 52000,
    "economy_power": 3100,
    "tech_power": 2800,
    "fleet_count": 14,
    "fleet_size": 120,
    "celestial_bodies_in_territory": 198,
    "colonies": {
        "total_count": 22,
        "total_population": 786,
        "avg_pops_per_colony": 35.7,
        "habitats": {"count": 8, "population": 274},
        "planets": {"count": 14, "population": 512},
    },
}

WARS = {
    "wars": ["Earth-Chosen War"],
    "count": 1,
    "player_at_war": True,
    "all_wars_count": 3,
    "active_war_ids": ["50331648"],
}

SITUATION = {
    "game_phase": "mid",
    "year": 2342,
    "at_war": True,
    "war_count": 1,
    "contacts_made": True,
    "contact_count": 6,
    "rivals": ["Chosen Imperium"],
    "allies": [],
    "crisis_active": False,
    "economy": {
        "energy_net": 20.0,
        "minerals_net": 35.5,
        "alloys_net": -12.5,
        "consumer_goods_net": 0.0,
        "research_net": 310.0,
        "resources_in_deficit": 1,
    },
}

FULL_BRIEFING = {
    "meta": {"empire_name": "United Nations of Earth", "date": "2342.06.15", "player_id": 16777223},
    "military": {"military_power": 52000, "fleet_count": 14, "fleet_size": 120},
    "economy": {
        "economy_power": 3100,
        "tech_power": 2800,
        "net_monthly": dict(RESOURCES["net_monthly"]),
        "key_resources": {
            "energy": 20.0,
            "minerals": 35.5,
            "alloys": -12.5,
            "consumer_goods": 0.0,
            "research_total": 0.0,
        },
    },
    "territory": {"celestial_bodies_in_territory": 198},
    "diplomacy": {},
    "defense": {},
    "leadership": {},
}

EXAMPLES = {
    "get_player_status": PLAYER_STATUS,
    "get_wars": WARS,
    "get_fleets": {"count": 2, "fleet_names": ["Home Guard", "1st Fleet"]},
    "get_resources": RESOURCES,
    "get_diplomacy": {
        "relations": [{"country": "Chosen Imperium", "opinion": -40}],
        "treaties": ["research_agreement"],
        "allies": [],
        "rivals": ["Chosen Imperium"],
        "federation": None,
        "relation_count": 1,
    },
    "get_leaders": {
        "leaders": [
            {
                "name": "Ada Okafor",
                "class": "scientist",
                "level": 4,
                "age": 52,
                "traits": ["leader_trait_expertise_materials"],
            }
        ],
        "count": 1,
        "by_class": {"scientist": 1},
    },
    "get_technology": {
        "completed": ["tech_lasers_1"],
        "completed_count": 1,
        "current_research": {"physics": "tech_lasers_2", "society": None, "engineering": None},
        "by_category": {"physics": 1},
    },
    "get_planets": {
        "planets": [
            {
                "id": "99",
                "name": "Earth",
                "type": "continental",
                "population": 64,
                "stability": 71.5,
                "is_habitat": False,
            },
            {
                "id": "3770",
                "name": "Orbital Habitat",
                "type": "habitat",
                "population": 18,
                "stability": None,
                "is_habitat": True,
            },
        ],
        "count": 2,
        "total_population": 82,
        "by_type": {"continental": 1, "habitat": 1},
    },
    "get_starbases": {
        "starbases": [{"id": "4", "level": "starport", "modules": ["shipyard"], "buildings": []}],
        "count": 1,
        "by_level": {"starport": 1},
    },
    "get_full_briefing": FULL_BRIEFING,
    "get_empire": {
        "name": "Chosen Imperium",
        "found": True,
        "military_power": 41000.5,
        "economy_power": 2200.0,
        "opinion": -40.0,
        "raw_data_preview": "name={ key=... }",
    },
    "search": {
        "query": "war_vs",
        "matches": [{"position": 48083790, "context": "war_vs_adjectives"}],
        "total_found": 1,
    },
    "get_situation": SITUATION,
}


def example(tool: str) -> dict:
    return copy.deepcopy(EXAMPLES[tool])


def bundle(*tools: str) -> dict:
    return {tool: example(tool) for tool in tools}
