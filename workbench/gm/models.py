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

from pydantic import AfterValidator, AliasChoices, BaseModel, ConfigDict, Field, StringConstraints, field_validator
from pydantic_core import PydanticCustomError

ActionType = Literal["basic", "combat", "interaction"]
Importance = Literal["critical", "significant", "moderate", "minor"]
ACTION_TYPES: tuple[str, ...] = get_args(ActionType)
IMPORTANCE_LEVELS: tuple[str, ...] = get_args(Importance)

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
    # Real models also write `{title, description, type, id}`; `title` stands for `text`.
    text: Text = _alias("text", "title")
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
            "expected at least 2 options with text and impact; found {found}",
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
    name: Text
    type: str | None = None


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
    acquired_items: list[str] = _alias("acquired_items", "acquiredItems", default_factory=list)
    removed_items: list[str] = _alias("removed_items", "removedItems", default_factory=list)
    suggested_actions: list[SuggestedAction] = _alias("suggested_actions", "suggestedActions", default_factory=list)
    player_decision: PlayerDecision | None = _alias("player_decision", "playerDecision", default=None)

    @field_validator("location", mode="before")
    @classmethod
    def location_may_be_a_name(cls, value: Any) -> Any:
        # The LOCATION marker gives a name; a JSON response gives `{type, name}`.
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
