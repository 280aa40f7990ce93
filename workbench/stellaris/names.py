"""Readable names from the save's name templates, without the game's localisation files.

Names are written as `name={ key="%ADJECTIVE%" variables={ { key="adjective" value={
key="SPEC_Bilnoc" } } { key="1" value={ key="Autocracy" } } } }`: a template key and
its variables, nested. Without localisation the best reading is the variables filled
into a few known templates, and otherwise the key's own words: `SPEC_Bilnoc` ->
"Bilnoc", `MOL4_PLANET_LonesomeRetreat` -> "Lonesome Retreat".
"""

from __future__ import annotations

import re

from workbench.stellaris.clausewitz import as_list

# Template keys whose variables read in a known order.
TEMPLATES = {
    "%ADJECTIVE%": "{adjective} {1}",
    "%ADJ%": "{adjective} {1}",
    "%SEQ%": "{fmt} {num}",
    "war_vs_adjectives": "{1}-{2} {3}",
    "war_vs_names": "{1} vs {2}",
}
CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
TAG = re.compile(r"^[A-Z0-9]+$")  # localisation prefixes: NAME, SPEC, ADJ, PLANET, MOL4


def render(name) -> str:
    """A display name for a scalar or a `{ key=... variables=... }` template."""
    if isinstance(name, (str, int, float)):
        return str(name)
    if not isinstance(name, dict):
        return ""
    key = name.get("key")
    key = str(key) if key is not None else ""
    variables = {
        str(v.get("key")): render(v.get("value"))
        for v in as_list(name.get("variables"))
        if isinstance(v, dict)
    }
    if key in TEMPLATES and variables:
        text = TEMPLATES[key]
        for var, value in variables.items():
            text = text.replace("{" + var + "}", value)
        return re.sub(r"\{[^}]*\}", "", text).strip(" -")
    if variables:
        return " ".join(v for v in variables.values() if v)
    return words_of(key)


def words_of(key: str) -> str:
    """`SPEC_Bilnoc_planet` -> "Bilnoc"; `Xeno_Purification_War` -> "Xeno Purification War"."""
    parts = [p for p in key.strip("%").split("_") if p]
    while len(parts) > 1 and TAG.match(parts[0]):
        parts.pop(0)
    if len(parts) > 1 and parts[-1] == "planet":
        parts.pop()
    return " ".join(CAMEL.sub(" ", part) for part in parts)
