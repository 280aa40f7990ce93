"""The rules of seed 001 applied to a parsed response: recoveries, then validation.

Recoveries do what the game does with an imperfect response and report it as a
`warning`: repaired JSON is used, an action without a type is a `basic` action, an
unknown `importance` becomes `moderate`, an option without text or impact is dropped,
a location the game cannot show (a kind it does not know, a town without a name, ...)
is replaced by the game's default. What cannot be recovered is an `error`: an action
of an unknown type, a decision left with fewer than two complete options, a character
attribute outside 0-20, ... Everything else is checked by the pydantic models, so each
shape is declared once.

Where the real game (github.com/jerseycheese/BootHillGM) is more lenient than seed 001,
the seed wins and the message says what the game does.

Field paths name the `gm_responses` columns (`suggested_actions[1].type`,
`player_decision.options`) whichever spelling the response used.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any, cast

from pydantic import AliasChoices, AliasPath, BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from workbench.gm.models import (
    ACTION_TYPES,
    IMPORTANCE_LEVELS,
    LOCATION_NEEDS,
    LOCATION_TYPES,
    Character,
    DecisionOption,
    GmResponse,
    known_keys,
)
from workbench.gm.parser import JsonProblem, Parsed
from workbench.validation import field_path, found, violation
from workbench.violation import Violation


def _spellings(name: str, info: FieldInfo) -> list[str | AliasPath]:
    """A field's name and the other spellings it is validated under (`AliasChoices`)."""
    alias = info.validation_alias
    if not alias:
        return [name]
    if not isinstance(alias, AliasChoices):
        raise TypeError(f"GmResponse.{name}: its validation alias is not an AliasChoices")
    return [name, *alias.choices]


# A field's spellings in a whole-JSON response -> the field (`suggestedActions` -> ...).
SPELLINGS = {spelling: name for name, info in GmResponse.model_fields.items() for spelling in _spellings(name, info)}
NOT_AN_OBJECT = ("model_type", "model_attributes_type", "dict_type")
OPTION_ESSENTIALS = ("text", "impact")
ACTION_TYPE_FIELD = re.compile(r"suggested_actions\[\d+\]\.type")
# What the real game does with an action type seed 001 does not know, by response kind.
GAME_ACTION_TYPES = {
    "json": "the real game's JSON responses also use main, side, optional, chaotic and danger, "
    "and it gives an action of any other type one it picks from the narrative",
    "markers": "the real game drops such an action from a marker response",
}
# The game's fallbacks for a location it cannot show.
GAME_DEFAULT_LOCATION = "the game shows its default location instead (wilderness 'Unknown area')"
GAME_FALLBACK_RESPONSE = "the game replaces the whole response with its fallback response (in town 'Boot Hill')"


def check(parsed: Parsed, locator: str) -> tuple[dict[str, Any], list[Violation]]:
    """The response's column values and everything found wrong with it."""
    violations = [_json_violation(locator, problem) for problem in parsed.json_problems]
    if parsed.kind == "character":
        raw = parsed.fields["character"]
        violations += _undocumented_keys(locator, raw, known_keys(Character), "character.")
        value, found_wrong = validated(Character, raw, locator, ("character",))
        return {"character": value if value is not None else raw}, violations + found_wrong
    fields, unknown = canonical(parsed.fields)
    violations += _undocumented_keys(locator, unknown, set(), "")
    violations += recover(fields, locator, parsed.kind)
    value, found_wrong = validated(GmResponse, fields, locator, ())
    found_wrong = [_with_game_note(v, parsed.kind) for v in found_wrong]
    return columns(value if value is not None else fields), violations + found_wrong


def canonical(raw: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """`raw` keyed by GmResponse field, and the keys the specification does not know.
    The values were parsed for this response alone, so recoveries may change them in place."""
    fields: dict[str, Any] = {}
    unknown: dict[str, Any] = {}
    for key, value in raw.items():
        name = SPELLINGS.get(key)
        if name is None:
            unknown[key] = value
        elif name not in fields:  # the column's own spelling comes first in `raw` order
            fields[name] = value
    return fields, unknown


def validated(model: type[BaseModel], data: Any, locator: str, prefix: tuple) -> tuple[dict | None, list[Violation]]:
    """`data` as the model dumps it (defaults applied), or None and the violations."""
    try:
        return model.model_validate(data).model_dump(exclude_none=True), []
    except ValidationError as exc:
        return None, [_violation(locator, error, (*prefix, *error["loc"])) for error in exc.errors(include_url=False)]


def _with_game_note(found_wrong: Violation, kind: str) -> Violation:
    """An action type seed 001 does not know is an error; say what the real game does."""
    if found_wrong.rule != "enum_value" or not ACTION_TYPE_FIELD.fullmatch(found_wrong.field):
        return found_wrong
    note = GAME_ACTION_TYPES["json" if kind == "json" else "markers"]
    return dataclasses.replace(found_wrong, message=f"{found_wrong.message} (seed 001; {note})")


def _violation(locator: str, error: ErrorDetails, loc: tuple) -> Violation:
    if error["type"] in NOT_AN_OBJECT:
        return Violation(
            locator, "error", "not_an_object", field_path(loc), f"expected a JSON object; found {found(error['input'])}"
        )
    return violation(locator, cast(dict, error), loc)  # an ErrorDetails is a dict, which `violation` reads


# --- recoveries --------------------------------------------------------------------


def recover(fields: dict[str, Any], locator: str, kind: str = "markers") -> list[Violation]:
    """Apply the game's fallbacks to `fields` in place; one warning per fallback."""
    found_here = fallback_location(fields, locator, kind)
    found_here += default_action_types(fields.get("suggested_actions"), locator)
    decision = fields.get("player_decision")
    if isinstance(decision, dict):
        found_here += fallback_importance(decision, locator)
        found_here += drop_incomplete_options(decision, locator)
    return found_here


def default_action_types(actions: Any, locator: str) -> list[Violation]:
    if not isinstance(actions, list):
        return []
    warnings = []
    for index, action in enumerate(actions):
        # The game reads `type || 'basic'`: an empty type is no type.
        if isinstance(action, dict) and action.get("type") in (None, ""):
            what = "none" if action.get("type") is None else "''"
            action["type"] = "basic"
            warnings.append(
                Violation(
                    locator,
                    "warning",
                    "action_type_defaulted",
                    f"suggested_actions[{index}].type",
                    f"expected `type` ({', '.join(ACTION_TYPES)}); found {what}; using 'basic'",
                )
            )
    return warnings


def fallback_importance(decision: dict, locator: str) -> list[Violation]:
    value = decision.get("importance")
    if value is None or value in IMPORTANCE_LEVELS:
        return []
    decision["importance"] = "moderate"
    # The game compares the level exactly: `Critical` is not `critical` to it.
    spelling = (
        " (the game compares levels exactly, case included)"
        if isinstance(value, str) and value.strip().lower() in IMPORTANCE_LEVELS
        else ""
    )
    return [
        Violation(
            locator,
            "warning",
            "importance_defaulted",
            "player_decision.importance",
            f"expected one of {', '.join(IMPORTANCE_LEVELS)}; found {found(value)}; using 'moderate'{spelling}",
        )
    ]


def fallback_location(fields: dict[str, Any], locator: str, kind: str) -> list[Violation]:
    """Check `location` against the game's own kinds. What the game cannot show is a
    warning (it substitutes a default); a value that is not text is left out, so only
    text reaches the model and the columns."""
    value = fields.get("location")
    if value is None or (isinstance(value, str) and kind != "json"):
        return []  # no location, or the LOCATION marker's name
    kinds = ", ".join(LOCATION_TYPES)
    expected_object = f"expected `location` to be an object of one of the game's kinds ({kinds})"
    if isinstance(value, str):
        return [
            _location_warning(
                locator,
                "location",
                f"{expected_object}; found the string {found(value)}; "
                f"{GAME_FALLBACK_RESPONSE}; kept as the location's name",
            )
        ]
    if not isinstance(value, dict):
        fields["location"] = None
        return [
            _location_warning(
                locator,
                "location",
                f"{expected_object}; found {found(value)}; {GAME_DEFAULT_LOCATION}; no location is stored",
            )
        ]
    warnings = []
    place_kind = value.get("type")
    needs = None
    if place_kind is None:
        warnings.append(
            _location_warning(
                locator,
                "location.type",
                f"expected `location.type` (one of {kinds}); found none; {GAME_DEFAULT_LOCATION}",
            )
        )
    elif place_kind not in LOCATION_TYPES:
        if not isinstance(place_kind, str):
            value.pop("type")
        warnings.append(
            _location_warning(
                locator,
                "location.type",
                f"expected `location.type` to be one of {kinds}; found {found(place_kind)}, a kind the game "
                f"does not know; {GAME_FALLBACK_RESPONSE}",
            )
        )
    else:
        needs = LOCATION_NEEDS[place_kind]
    for key in ("name", "description"):
        text = value.get(key)
        usable = isinstance(text, str) and text.strip()
        if key == needs and not usable:
            what = "none" if text is None else found(text)
            warnings.append(
                _location_warning(
                    locator,
                    f"location.{key}",
                    f"expected `location.{key}` (text) for a location of type {place_kind!r}; found {what}; "
                    f"{GAME_DEFAULT_LOCATION}",
                )
            )
        elif text is not None and not usable:
            warnings.append(
                _location_warning(
                    locator,
                    f"location.{key}",
                    f"expected `location.{key}` to be text; found {found(text)}; the game leaves it out",
                )
            )
        if text is not None and not usable:
            value.pop(key)
    return warnings


def _location_warning(locator: str, field: str, message: str) -> Violation:
    return Violation(locator, "warning", "location_defaulted", field, message)


def drop_incomplete_options(decision: dict, locator: str) -> list[Violation]:
    """Options without text or impact are dropped (the game cannot show them); the
    decision's own rule then needs two options left."""
    options = decision.get("options")
    if not isinstance(options, list):
        return []
    kept, warnings = [], []
    for index, option in enumerate(options):
        missing = _incompleteness(option)
        if missing is None:
            kept.append(option)
            continue
        loc = ("player_decision", "options", index, *missing["loc"])
        warnings.append(
            Violation(
                locator,
                "warning",
                "incomplete_option",
                field_path(loc),
                f"{_violation(locator, missing, loc).message}; the option is dropped",
            )
        )
    decision["options"] = kept
    return warnings


def _incompleteness(option: Any) -> ErrorDetails | None:
    """The first error that makes `option` incomplete (not an object, no text or impact)."""
    try:
        DecisionOption.model_validate(option)
    except ValidationError as exc:
        for error in exc.errors(include_url=False):
            if not error["loc"] or error["loc"][0] in OPTION_ESSENTIALS:
                return error
    return None


# --- findings that are not about the models ----------------------------------------


def _json_violation(locator: str, problem: JsonProblem) -> Violation:
    if problem.repaired:
        return Violation(
            locator,
            "warning",
            "json_repaired",
            problem.field,
            f"expected valid JSON; found {problem.problem}; repaired with json-repair",
        )
    return Violation(
        locator,
        "error",
        "unparsable_json",
        problem.field,
        f"expected JSON of the documented shape; found {problem.problem}, "
        "and json-repair could not recover it; the field is left empty",
    )


def _undocumented_keys(locator: str, raw: Any, known: set[str], prefix: str) -> list[Violation]:
    if not isinstance(raw, dict):
        return []
    return [
        Violation(
            locator,
            "info",
            "undocumented_key",
            f"{prefix}{key}",
            f"key `{key}` is not in the specification; kept in `text`",
        )
        for key in raw
        if key not in known
    ]


# --- columns -----------------------------------------------------------------------


def columns(fields: dict[str, Any]) -> dict[str, Any]:
    """The gm_responses values of a response: its validated dump, or (when it broke a
    rule) its raw parts, kept as written."""
    location = fields.get("location")
    opponent = fields.get("combat_opponent")
    combat = fields.get("combat")
    return {
        "narrative": _text(fields.get("narrative")),
        "location": _text(_place(location)),
        "location_type": _text(location.get("type")) if isinstance(location, dict) else None,
        "combat": combat if isinstance(combat, bool) else False if combat is None else None,
        "combat_opponent": _text(opponent.get("name") if isinstance(opponent, dict) else opponent),
        "acquired_items": _texts(fields.get("acquired_items")),
        "removed_items": _texts(fields.get("removed_items")),
        "suggested_actions": fields.get("suggested_actions"),
        "player_decision": fields.get("player_decision"),
    }


def _place(location: Any) -> Any:
    """The text that identifies a location: what its kind needs (a wilderness's
    description, a town's or landmark's name), else its name, else its description."""
    if not isinstance(location, dict):
        return location
    kind = location.get("type")
    needs = LOCATION_NEEDS.get(kind) if isinstance(kind, str) else None
    for key in (needs, "name", "description"):
        if key and location.get(key) is not None:
            return location[key]
    return None


def _text(value: Any) -> str | None:
    return None if value is None else _as_text(value)


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _texts(value: Any) -> list[str]:
    return [_as_text(item) for item in value if item is not None] if isinstance(value, list) else []
