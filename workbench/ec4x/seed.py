"""Seed 004's vocabulary as data: command names, class enums and what each command needs.

The spellings are the seed's (kebab-case, as in its prompt template). `COMPILER_ONLY`
lists values the real compiler also accepts but the seed does not (formats.md); the
seed is the contract, so they are errors that say the real compiler would take them.
`ALIASES` are the real compiler's alternative names for a seed value: a spelling
difference, reported as drift.
"""

from __future__ import annotations

import re

# --- fleet commands (section 2): `fleet (FleetId)ID <command> [parameters]` ----------
# Commands the prompt writes with a `system=`, `to=` or `at=` (SystemId) parameter.
SYSTEM_TARGET_COMMANDS = (
    "move",
    "rendezvous",
    "blockade",
    "bombard",
    "invade",
    "blitz",
    "view",
    "scout-system",
    "scout-colony",
    "hack-starbase",
    "colonize",
)
# All of them, in the prompt's order.
FLEET_COMMANDS = (
    "hold",
    "patrol",
    "guard-colony",
    "guard-starbase",
    "seek-home",
    *SYSTEM_TARGET_COMMANDS,
    "join-fleet",
    "reserve",
    "mothball",
    "salvage",
)
ROE_RANGE = (0, 10)
COMMANDS_PER_FLEET = 1  # per turn
# Commands the seed writes without a target that the real compiler still refuses without
# a `targetSystemId`: the seed wins (no error), the difference is reported as drift.
COMPILER_SYSTEM_TARGET_COMMANDS = ("patrol", "guard-colony", "guard-starbase")

# --- construction (section 3) --------------------------------------------------------
BUILD_TYPES = ("ship", "facility", "ground", "industrial")
SHIP_CLASSES = (
    "corvette",
    "frigate",
    "destroyer",
    "light-cruiser",
    "cruiser",
    "battlecruiser",
    "battleship",
    "dreadnought",
    "super-dreadnought",
    "carrier",
    "super-carrier",
    "raider",
    "scout",
    "etac",
    "troop-transport",
)
FACILITY_CLASSES = ("spaceport", "shipyard", "drydock", "starbase")
GROUND_CLASSES = ("army", "marine", "ground-battery", "planetary-shield")
# The fields each build type needs; `quantity` defaults to 1 for a facility.
BUILD_REQUIRES = {
    "ship": ("shipClass", "quantity"),
    "facility": ("facilityClass",),
    "ground": ("groundClass", "quantity"),
    "industrial": ("quantity",),
}

# --- zero-turn commands (section 1 and the v1 contract's rules) ----------------------
ZERO_TURN_REQUIRES = {
    "reactivate": ("sourceFleetId",),
    "detach-ships": ("sourceFleetId", "shipIndices"),
    "transfer-ships": ("sourceFleetId", "targetFleetId", "shipIndices"),
    "merge-fleets": ("sourceFleetId", "targetFleetId"),
    "load-cargo": ("sourceFleetId", "cargoType"),
    "unload-cargo": ("sourceFleetId",),
    "load-fighters": ("sourceFleetId", "carrierShipId", "fighterShipIds"),
    "unload-fighters": ("sourceFleetId", "carrierShipId", "fighterShipIds"),
    "transfer-fighters": ("sourceFleetId", "sourceCarrierShipId", "targetCarrierShipId", "fighterShipIds"),
}
ZERO_TURN_COMMANDS = tuple(ZERO_TURN_REQUIRES)
# The values a `cargoType` may name: the prompt's `load-cargo type=<marines|colonists>`.
CARGO_TYPES = ("marines", "colonists")
# What `load-cargo` may load: the v1 JSON rules say `cargoType` (`marines`), and the real
# compiler refuses anything else; the KDL reference (the prompt) also lists colonists.
LOAD_CARGO_TYPES = ("marines",)

# --- economy and R&D (section 4) -----------------------------------------------------
TECH_FIELDS = ("cst", "wep", "ter", "eli", "clk", "sld", "cic", "stl", "fc", "sc", "fd", "aco")
TAX_RATE_RANGE = (0, 100)

# --- espionage (section 5): what each operation names besides itself ------------------
ESPIONAGE_REQUIRES = {
    "tech-theft": ("targetHouseId",),
    "sabotage-low": ("targetHouseId", "targetSystemId"),
    "sabotage-high": ("targetHouseId", "targetSystemId"),
    "assassination": ("targetHouseId",),
    "cyber-attack": ("targetHouseId", "targetSystemId"),
    "economic-manipulation": ("targetHouseId",),
    "psyops": ("targetHouseId",),
    "counter-intel-sweep": (),
    "intel-theft": ("targetHouseId",),
    "plant-disinfo": ("targetHouseId",),
}
ESPIONAGE_OPERATIONS = tuple(ESPIONAGE_REQUIRES)
# The real compiler wants a `targetHouseId` for every operation, `counter-intel-sweep`
# included, which the seed writes without a target: drift, not an error.
COMPILER_ESPIONAGE_REQUIRES = ("targetHouseId",)
ESPIONAGE_OPS_PER_HOUSE = 3

# --- diplomacy (section 6); `targetHouseId` is always required by the contract's shape --
DIPLOMATIC_REQUIRES = {
    "declare-hostile": (),
    "declare-enemy": (),
    "set-neutral": (),
    "propose-deescalate": ("proposedState",),
    "accept-proposal": ("proposalId",),
    "reject-proposal": ("proposalId",),
}
DIPLOMATIC_ACTIONS = tuple(DIPLOMATIC_REQUIRES)
PROPOSED_STATES = ("neutral", "hostile")

# --- what the real compiler accepts beyond the seed (formats.md) ---------------------
COMPILER_ONLY = {
    "buildType": ("infrastructure",),
    "shipClass": ("fighter", "planet-breaker"),
    "cargoType": ("none",),
}
ALIASES = {
    "operation": {"psyops-campaign": "psyops", "plant-disinformation": "plant-disinfo"},
}
# Top-level command lists the real compiler reads although the v1 contract has no such
# field; the seed's prompt does list "7. Repair & Scrap" among the categories of the draft.
COMPILER_ONLY_LISTS = ("repairCommands", "scrapCommands")


def token(value: str) -> str:
    """How the real compiler compares enum spellings: lower case, letters and digits only,
    so `join-fleet`, `JoinFleet` and `join_fleet` are one command."""
    return re.sub(r"[^a-z0-9]", "", value.lower())
