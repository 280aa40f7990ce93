"""Seed 001 (AI game-master responses) as pydantic models: the contract, declared once.

`GmResponse` is one parsed response with fields named as the `gm_responses` columns;
its aliases are the keys of a whole-JSON response (`suggestedActions`, ...), so a JSON
response and the output of the marker parser validate against the same model, and a
violation's field is the column's name (`suggested_actions[1].type`) either way.
Models are strict (`"12"` is not an int) and ignore keys they do not know; the reader
reports unknown top-level keys as `info`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
)
from pydantic_core import PydanticCustomError

ActionType = Literal["basic", "combat", "interaction"]
Importance = Literal["critical", "significant", "moderate", "minor"]
# The game's own kinds of place (its `LocationType` union), and the key each kind needs
# to be shown: a town and a landmark are named, a wilderness is described.
LocationType = Literal["town", "wilderness", "landmark", "unknown"]
ACTION_TYPES: tuple[str, ...] = get_args(ActionType)
IMPORTANCE_LEVELS: tuple[str, ...] = get_args(Importance)
LOCATION_TYPES: tuple[str, ...] = get_args(LocationType)
LOCATION_NEEDS: dict[str, str | None] = {
    "town": "name",
    "wilderness": "description",
    "landmark": "name",
    "unknown": None,
}

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
Attribute = Annotated[int, Field(ge=0, le=20)]


def _alias(name: str, *spellings: str, **default):
    """Accept the column's name and the spellings real responses use."""
    return Field(validation_alias=AliasChoices(name, *spellings), **default)


class Model(BaseModel):
    model_config = ConfigDict(
        strict=True, extra="ignore", loc_by_alias=False, validate_by_name=True, validate_by_alias=True
    )


class ResponseLine(BaseModel):
    """One line of a `*.gm.jsonl` file. Lax on purpose: an id may be written as a number,
    `ts` as an ISO 8601 string or epoch seconds. A line without `id` or `text` is rejected."""

    model_config = ConfigDict(extra="ignore", coerce_numbers_to_str=True)

    id: Text
    text: str
    ts: datetime | None = None
    model: str | None = None


class SuggestedAction(Model):
    # Real models also write `{title, description, type, id}`; `title` stands for `text`,
    # and wins when both are written (the game reads `title || text`).
    text: Text = Field(validation_alias=AliasChoices("title", "text"))
    type: ActionType
    description: str | None = None
    id: str | int | None = None


class DecisionOption(Model):
    text: Text
    impact: Text
    tags: list[str] = Field(default_factory=list)


def _at_least_two(options: list[DecisionOption]) -> list[DecisionOption]:
    if len(options) < 2:
        raise PydanticCustomError(
            "too_few_options",
            "expected at least 2 options with text and impact; found {found}; the game shows no decision",
            {"found": len(options)},
        )
    return options


class PlayerDecision(Model):
    prompt: Text
    options: Annotated[list[DecisionOption], AfterValidator(_at_least_two)]
    importance: Importance = "moderate"
    context: str | None = None
    characters: list[str] = Field(default_factory=list)


class Location(Model):
    """A place: a name from the LOCATION marker, or one of the game's kinds in a JSON
    response (`{type: "town", name}`, `{type: "wilderness", description}`, `{type:
    "landmark", name, description?}`, `{type: "unknown"}`). What the game would replace
    with a default (a kind it does not know, a town without a name, ...) is a warning of
    the rules, which also leave out a name or description that is not text; so the model
    takes any kind, and stores the type as written."""

    type: str | None = None
    name: Text | None = None
    description: Text | None = None


def _item_name(value: Any) -> Any:
    # JSON responses may write an acquired item as `{name, category}` (the game's prompt
    # asks for it); the game keeps its name.
    if not isinstance(value, dict):
        return value
    name = value.get("name")
    if isinstance(name, str) and name.strip():
        return name
    raise PydanticCustomError(
        "item_without_name",
        "expected an item name or an object with a `name`; found {found}",
        {"found": repr(value)[:80]},
    )


ItemName = Annotated[str, BeforeValidator(_item_name)]


class CharacterAttributes(Model):
    speed: Attribute
    gunAccuracy: Attribute
    throwingAccuracy: Attribute
    strength: Attribute
    baseStrength: Attribute
    bravery: Attribute
    experience: Attribute


class Character(Model):
    """An NPC from character generation: a whole-JSON response with `attributes`."""

    name: Text
    attributes: CharacterAttributes


class GmResponse(Model):
    narrative: Text
    location: Location | None = None
    combat: bool = _alias("combat", "combatInitiated", default=False)
    combat_opponent: str | None = _alias("combat_opponent", "opponent", default=None)
    acquired_items: list[ItemName] = _alias("acquired_items", "acquiredItems", default_factory=list)
    removed_items: list[str] = _alias("removed_items", "removedItems", default_factory=list)
    suggested_actions: list[SuggestedAction] = _alias("suggested_actions", "suggestedActions", default_factory=list)
    player_decision: PlayerDecision | None = _alias("player_decision", "playerDecision", default=None)

    @field_validator("location", mode="before")
    @classmethod
    def location_may_be_a_name(cls, value: Any) -> Any:
        # The LOCATION marker gives a name; a JSON response gives one of the game's kinds.
        return {"name": value} if isinstance(value, str) else value

    @field_validator("combat_opponent", mode="before")
    @classmethod
    def opponent_may_be_a_character(cls, value: Any) -> Any:
        # JSON responses name the opponent as a character object; the column keeps its name.
        return value.get("name") if isinstance(value, dict) else value


def known_keys(model: type[BaseModel]) -> set[str]:
    """Every key `model` reads: field names and their aliases."""
    keys = set(model.model_fields)
    for info in model.model_fields.values():
        if isinstance(info.validation_alias, AliasChoices):
            keys.update(choice for choice in info.validation_alias.choices if isinstance(choice, str))
    return keys
