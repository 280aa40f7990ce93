"""Readable names from the save's name templates, without the game's localisation files.

Names are written as `name={ key="%ADJECTIVE%" variables={ { key="adjective" value={
key="SPEC_Bilnoc" } } { key="1" value={ key="Autocracy" } } } }`: a template key and
its variables, nested. A value marked `literal=yes` (`{ key="VII" literal=yes }`) is text
the save itself provides and is used as written. The rest needs the game's localisation,
which the save does not carry, so the best reading is the variables filled into a few
known templates, and otherwise the key's own words: `SPEC_Bilnoc` -> "Bilnoc",
`MOL4_PLANET_LonesomeRetreat` -> "Lonesome Retreat". The raw key and template are kept
beside the reading (`raw_key`, `template_json`), since the reading is only a guess where
the save provides no text: the player's empire takes its readable name from the save's
`meta` (`name=`) instead (see `save.py`).
"""

from __future__ import annotations

import json
import re

from workbench.stellaris.clausewitz import as_list

# Template keys whose variables read in a known order.
TEMPLATES = {
    "%ADJECTIVE%": "{adjective} {1}",
    "%ADJ%": "{1}",
    "%SEQ%": "{fmt} {num}",
    "PLANET_NAME_FORMAT": "{PARENT} {NUMERAL}",
    "SUBPLANET_NAME_FORMAT": "{PARENT} {NUMERAL}",
    "war_vs_adjectives": "{1}-{2} {3}",
    "war_vs_names": "{1} vs {2}",
}
CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
TAG = re.compile(r"^[A-Z0-9]+$")  # localisation prefixes: NAME, SPEC, ADJ, PLANET, MOL4
# `PRESCRIPTED_adjective_humans1`: a prescripted empire's part, named by its design.
PRESCRIPTED = re.compile(
    r"^PRESCRIPTED_(?:adjective|species_name|species_plural|planet_name|system_name|ruler_name|name)_"
)
WORD_KEY = re.compile(r"^[A-Z][a-z]+(?:_[a-z]+)*$")
PLACEHOLDER = re.compile(r"\{[^{}]*\}")


def is_literal(name) -> bool:
    """Text the save provides as is: a plain string or number, or a `literal=yes` value."""
    if isinstance(name, (str, int, float)) and not isinstance(name, bool):
        return True
    return isinstance(name, dict) and name.get("literal") in ("yes", True) and name.get("key") is not None


def render(name) -> str:
    """A display name for a scalar or a `{ key=... variables=... }` template."""
    if isinstance(name, bool) or name is None:
        return ""
    if isinstance(name, (str, int, float)):
        return str(name)
    if not isinstance(name, dict):
        return ""
    key = name.get("key")
    key = str(key) if key is not None else ""
    if is_literal(name):
        return key
    variables = {
        str(v.get("key")): render(v.get("value")) for v in as_list(name.get("variables")) if isinstance(v, dict)
    }
    if key in TEMPLATES and variables:
        text = TEMPLATES[key]
        for var, value in variables.items():
            text = text.replace("{" + var + "}", value)
        return " ".join(PLACEHOLDER.sub("", text).split()).strip(" -")
    if variables:
        # An unknown template: its variables, after its own word where the key is one
        # (`Holy`, `Union_of`: "Holy ...", "Union of ..."), not a tag (`NAME_WAR_OF_REVOLT`).
        own = words_of(key) if WORD_KEY.match(key) else ""
        return " ".join(part for part in (own, *variables.values()) if part)
    return words_of(key)


def words_of(key: str) -> str:
    """`SPEC_Bilnoc_planet` -> "Bilnoc"; `Xeno_Purification_War` -> "Xeno Purification War"."""
    key = PRESCRIPTED.sub("", key)
    parts = [p for p in key.strip("%").split("_") if p]
    while len(parts) > 1 and TAG.match(parts[0]):
        parts.pop(0)
    if len(parts) > 1 and parts[-1] in ("planet", "system"):
        parts.pop()
    return " ".join(CAMEL.sub(" ", part) for part in parts)


def raw_key(name) -> str | None:
    """The localisation key a name is written as (`humans1`, `%ADJECTIVE%`); None for
    text the save provides as is."""
    if not isinstance(name, dict) or is_literal(name):
        return None
    key = name.get("key")
    return str(key) if key is not None else None


def template_json(name) -> str | None:
    """The whole template as JSON, when the name has variables; None otherwise."""
    if not isinstance(name, dict) or not as_list(name.get("variables")):
        return None
    return json.dumps(name, ensure_ascii=False, separators=(",", ":"))
