"""Seed 004's v1 order draft (the JSON the bot's LLM returns) as pydantic models.

The seed's compiler rejects unknown fields, type mismatches and missing required
fields, so the models are strict (`"101"` is not an int) and forbid unknown keys. The
real compiler ignores unknown keys; the workbench follows the seed and says so in the
message (see `unknown_key_message`). Which fields are required follows the contract's
examples and the bot's strict draft parser: `turn` and `houseId` always; every command
list may be left out (empty); nullable ids may be null. `load-cargo` loads `marines`
only, as the contract's rules say (and the real compiler enforces), although the KDL
reference lists colonists. Where the real compiler is stricter than the seed (a system
for `patrol` and the guards, a house for `counter-intel-sweep`) the seed wins and the
difference is drift (`compiler_requires_field`).
"""

from __future__ import annotations

import typing
from operator import attrgetter
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    Json,
    TypeAdapter,
    ValidationError,
    create_model,
    model_validator,
)

from workbench.ec4x import seed
from workbench.ec4x.rules import SeedEnum, fail, hint, missing, rule_error, seed_enum, seed_enum_of, with_errors
from workbench.schema import Int64
from workbench.screen import ScreenVariants

if typing.TYPE_CHECKING:
    # Each is made at run time by `seed_enum` (a str carrying its seed's values); what a
    # validated field holds is the seed's spelling, a str.
    FleetCommandType: TypeAlias = str
    BuildType: TypeAlias = str
    ShipClass: TypeAlias = str
    FacilityClass: TypeAlias = str
    GroundClass: TypeAlias = str
    ZeroTurnCommandType: TypeAlias = str
    CargoType: TypeAlias = str
    EspionageOperation: TypeAlias = str
    DiplomaticAction: TypeAlias = str
    ProposedState: TypeAlias = str
else:
    FleetCommandType = seed_enum("commandType", seed.FLEET_COMMANDS)
    BuildType = seed_enum("buildType", seed.BUILD_TYPES, seed.COMPILER_ONLY["buildType"])
    ShipClass = seed_enum("shipClass", seed.SHIP_CLASSES, seed.COMPILER_ONLY["shipClass"])
    FacilityClass = seed_enum("facilityClass", seed.FACILITY_CLASSES)
    GroundClass = seed_enum("groundClass", seed.GROUND_CLASSES)
    ZeroTurnCommandType = seed_enum("commandType", seed.ZERO_TURN_COMMANDS)
    CargoType = seed_enum("cargoType", seed.CARGO_TYPES, seed.COMPILER_ONLY["cargoType"])
    EspionageOperation = seed_enum("operation", seed.ESPIONAGE_OPERATIONS, aliases=seed.ALIASES["operation"])
    DiplomaticAction = seed_enum("action", seed.DIPLOMATIC_ACTIONS)
    ProposedState = seed_enum("proposedState", seed.PROPOSED_STATES)

Roe = Annotated[int, Field(ge=seed.ROE_RANGE[0], le=seed.ROE_RANGE[1])]
TaxRate = Annotated[int, Field(ge=seed.TAX_RATE_RANGE[0], le=seed.TAX_RATE_RANGE[1])]


class Contract(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


def _required_for(what: str, requires: tuple[str, ...], values: dict, rule: str, note: str = "") -> list:
    """(field, error, input) for each field of `requires` that `values` leaves null or empty."""
    failures = []
    for name in requires:
        value = values.get(name)
        if missing(value):
            found = "null or no such key" if value is None else "an empty list"
            failures.append((name, rule_error(rule, f"{what} needs `{name}`; found {found}{note}"), value))
    return failures


def variants(
    requires: dict[str, tuple[str, ...]], enum: SeedEnum, key: str, narrowed: dict[str, dict] | None = None
) -> ScreenVariants:
    """How the screen checks the fields a command's `key` value requires (see
    `screen.ScreenVariants`): a struct per spelling of the value the screen lets through."""
    # Every spelling stands for a value (`SeedEnum.spellings`): none is left out.
    canonical = {spelling: value for spelling in enum.spellings() if (value := enum.canonical(spelling)) is not None}
    return ScreenVariants(key, canonical, requires, narrowed or {})


# What the real compiler says when a build leaves `quantity` out (seed 004 requires it).
_QUANTITY_DEFAULTS = {
    "ship": "; the real compiler would build 1",
    "ground": "; the real compiler would build 1",
    "industrial": "; the real compiler would convert 0 PP",
}


class FleetCommand(Contract):
    fleetId: Int64
    commandType: FleetCommandType
    targetSystemId: Int64 | None = None
    targetFleetId: Int64 | None = None
    roe: Roe | None = None  # the game's default is 6

    __screen_variants__ = variants(
        {**dict.fromkeys(seed.SYSTEM_TARGET_COMMANDS, ("targetSystemId",)), "join-fleet": ("targetFleetId",)},
        seed_enum_of(FleetCommandType),
        "commandType",
    )

    @model_validator(mode="after")
    def targets_present(self):
        values = self.__dict__
        failures = []
        if self.commandType in seed.SYSTEM_TARGET_COMMANDS:
            failures += _required_for(
                f"`{self.commandType}` (a system-target command)", ("targetSystemId",), values, "target_system_required"
            )
        if self.commandType == "join-fleet":
            failures += _required_for("`join-fleet`", ("targetFleetId",), values, "target_fleet_required")
        fail("FleetCommand", failures)
        return self


class BuildCommand(Contract):
    colonyId: Int64
    buildType: BuildType
    shipClass: ShipClass | None = None
    facilityClass: FacilityClass | None = None
    groundClass: GroundClass | None = None
    quantity: Int64 | None = None  # defaults to 1 for a facility

    __screen_variants__ = variants(seed.BUILD_REQUIRES, seed_enum_of(BuildType), "buildType")

    @model_validator(mode="after")
    def class_and_quantity_present(self):
        requires = seed.BUILD_REQUIRES.get(self.buildType, ())
        what = f"buildType `{self.buildType}`"
        classes = tuple(name for name in requires if name != "quantity")
        failures = _required_for(what, classes, self.__dict__, "build_class_required")
        if "quantity" in requires:
            failures += _required_for(
                what, ("quantity",), self.__dict__, "quantity_required", _QUANTITY_DEFAULTS.get(self.buildType, "")
            )
        fail("BuildCommand", failures)
        return self


_CARGO = seed_enum_of(CargoType)


class ZeroTurnCommand(Contract):
    commandType: ZeroTurnCommandType
    sourceFleetId: Int64 | None = None
    targetFleetId: Int64 | None = None
    shipIndices: list[Int64] = Field(default_factory=list)
    fighterShipIds: list[Int64] = Field(default_factory=list)
    carrierShipId: Int64 | None = None
    sourceCarrierShipId: Int64 | None = None
    targetCarrierShipId: Int64 | None = None
    cargoType: CargoType | None = None
    quantity: Int64 | None = None

    # `load-cargo` loads marines only: its struct takes their spellings alone.
    __screen_variants__ = variants(
        seed.ZERO_TURN_REQUIRES,
        seed_enum_of(ZeroTurnCommandType),
        "commandType",
        {
            "load-cargo": {
                "cargoType": Literal[
                    tuple(
                        spelling
                        for spelling in _CARGO.spellings()
                        if _CARGO.canonical(spelling) in seed.LOAD_CARGO_TYPES
                    )
                ]
            },
        },
    )

    @model_validator(mode="after")
    def command_fields_present(self):
        requires = seed.ZERO_TURN_REQUIRES[self.commandType]
        failures = _required_for(f"`{self.commandType}`", requires, self.__dict__, "zero_turn_field_required")
        if (
            self.commandType == "load-cargo"
            and self.cargoType is not None
            and self.cargoType not in seed.LOAD_CARGO_TYPES
        ):
            failures.append(
                (
                    "cargoType",
                    rule_error(
                        "load_cargo_marines_only",
                        f"`load-cargo` loads cargoType {'|'.join(seed.LOAD_CARGO_TYPES)} only (the seed's v1 JSON "
                        f"rules); found {self.cargoType!r}. The real compiler refuses it too (load-cargo supports only "
                        f"Marines); the seed's KDL reference lists colonists, but the JSON contract does not",
                    ),
                    self.cargoType,
                )
            )
        fail("ZeroTurnCommand", failures)
        return self


class PopulationTransfer(Contract):
    sourceColonyId: Int64
    destColonyId: Int64
    ptuAmount: Int64


class TerraformCommand(Contract):
    colonyId: Int64


class ColonyManagement(Contract):
    colonyId: Int64
    taxRate: TaxRate | None = None
    autoRepair: bool | None = None
    autoLoadMarines: bool | None = None
    autoLoadFighters: bool | None = None


class DiplomaticCommand(Contract):
    targetHouseId: Int64
    action: DiplomaticAction
    proposalId: Int64 | None = None
    proposedState: ProposedState | None = None

    __screen_variants__ = variants(seed.DIPLOMATIC_REQUIRES, seed_enum_of(DiplomaticAction), "action")

    @model_validator(mode="after")
    def action_fields_present(self):
        requires = seed.DIPLOMATIC_REQUIRES[self.action]
        fail(
            "DiplomaticCommand", _required_for(f"`{self.action}`", requires, self.__dict__, "diplomatic_field_required")
        )
        return self


class EspionageAction(Contract):
    operation: EspionageOperation
    targetHouseId: Int64 | None = None
    targetSystemId: Int64 | None = None

    __screen_variants__ = variants(seed.ESPIONAGE_REQUIRES, seed_enum_of(EspionageOperation), "operation")

    @model_validator(mode="after")
    def operation_targets_present(self):
        requires = seed.ESPIONAGE_REQUIRES[self.operation]
        fail(
            "EspionageAction",
            _required_for(f"`{self.operation}`", requires, self.__dict__, "espionage_target_required"),
        )
        return self


# PP per tech field, keyed by the seed's abbreviations (cst, wep, ter, ...); any other key is
# unknown. A field may be left out, but one that is present holds an int: null is a type
# mismatch (the real parser refuses it too).
_TECH_FIELDS: dict[str, Any] = {f: (Int64, None) for f in seed.TECH_FIELDS}
if typing.TYPE_CHECKING:

    class ResearchFields(Contract):
        """Made at run time: an optional Int64 per field of `seed.TECH_FIELDS`."""
else:
    ResearchFields = create_model("ResearchFields", __base__=Contract, **_TECH_FIELDS)


class ResearchAllocation(Contract):
    economic: Int64 | None = None
    science: Int64 | None = None
    fields: ResearchFields | None = None


class OrderDraft(Contract):
    turn: Int64
    houseId: Int64
    fleetCommands: list[FleetCommand] = Field(default_factory=list)
    buildCommands: list[BuildCommand] = Field(default_factory=list)
    zeroTurnCommands: list[ZeroTurnCommand] = Field(default_factory=list)
    populationTransfers: list[PopulationTransfer] = Field(default_factory=list)
    terraformCommands: list[TerraformCommand] = Field(default_factory=list)
    colonyManagement: list[ColonyManagement] = Field(default_factory=list)
    espionageActions: list[EspionageAction] = Field(default_factory=list)
    diplomaticCommand: DiplomaticCommand | None = None
    researchAllocation: ResearchAllocation | None = None
    ebpInvestment: Int64 | None = 0
    cipInvestment: Int64 | None = 0
    # Not in the contract; the real compiler reads them (see seed.COMPILER_ONLY_LISTS).
    # Kept as written: the seed gives their entries no shape to check.
    repairCommands: Any = None
    scrapCommands: Any = None

    @staticmethod
    def __screen_check__(draft) -> str | None:
        # The rules across commands (`across_commands`), over the decoded draft. It runs
        # for every draft the screen reads, so the usual case is settled in C.
        if _may_repeat(draft.fleetCommands, "fleetId", seed.COMMANDS_PER_FLEET) and _beyond_limit(
            [command.fleetId for command in draft.fleetCommands], seed.COMMANDS_PER_FLEET
        ):
            return "a fleet with two commands"
        if _may_repeat(draft.espionageActions, "targetHouseId", seed.ESPIONAGE_OPS_PER_HOUSE) and _beyond_limit(
            [action.targetHouseId for action in draft.espionageActions], seed.ESPIONAGE_OPS_PER_HOUSE
        ):
            return "too many operations against one house"
        return None

    @model_validator(mode="wrap")
    @classmethod
    def across_commands(cls, data, handler):
        # Rules across the items of a list are checked on the raw input, so they are
        # reported even when an item also has errors of its own.
        failures = _repeated_fleets(data) + _espionage_over_limit(data) if isinstance(data, dict) else []
        if not failures:
            return handler(data)
        try:
            handler(data)
        except ValidationError as exc:
            raise with_errors(exc, failures, "OrderDraft") from None
        raise with_errors(None, failures, "OrderDraft")


def _items(data: dict, key: str) -> list[tuple[int, dict]]:
    items = data.get(key)
    return [(i, item) for i, item in enumerate(items) if isinstance(item, dict)] if isinstance(items, list) else []


def _may_repeat(items: list, name: str, limit: int) -> bool:
    """Whether some `name` of `items` may be met more than `limit` times: False when
    there are no more items than that, or no two share it."""
    return len(items) > limit and len(set(map(attrgetter(name), items))) < len(items)


def _beyond_limit(ids: list, limit: int) -> list[tuple[int, Any, int]]:
    """(position, id, how many times met so far) of each id met more than `limit` times
    by then; a None id is skipped."""
    counts: dict = {}
    beyond = []
    for position, key in enumerate(ids):
        if key is not None:
            counts[key] = counts.get(key, 0) + 1
            if counts[key] > limit:
                beyond.append((position, key, counts[key]))
    return beyond


def _int_ids(items: list[tuple[int, dict]], name: str) -> list[int | None]:
    # A wrong or missing id is reported by the item's own validation.
    return [item.get(name) if type(item.get(name)) is int else None for _, item in items]


def _repeated_fleets(data: dict) -> list:
    """The seed allows 1 command per fleet per turn: every later command of a fleet fails."""
    items = _items(data, "fleetCommands")
    return [
        (
            ("fleetCommands", items[position][0], "fleetId"),
            rule_error(
                "one_command_per_fleet",
                f"fleet {fleet} already has a command this turn (the seed allows 1 per fleet per turn)",
            ),
            fleet,
        )
        for position, fleet, _ in _beyond_limit(_int_ids(items, "fleetId"), seed.COMMANDS_PER_FLEET)
    ]


def _espionage_over_limit(data: dict) -> list:
    """Up to ESPIONAGE_OPS_PER_HOUSE operations per target house: every one beyond fails."""
    items = _items(data, "espionageActions")
    limit = seed.ESPIONAGE_OPS_PER_HOUSE
    return [
        (
            ("espionageActions", items[position][0], "targetHouseId"),
            rule_error(
                "espionage_ops_per_house",
                f"operation {count} against house {house}; the seed allows up to {limit} per target house "
                f"(the real compiler does not count them)",
            ),
            house,
        )
        for position, house, count in _beyond_limit(_int_ids(items, "targetHouseId"), limit)
    ]


# One call validates a whole batch of raw lines in pydantic-core.
LINES = TypeAdapter(list[Json[OrderDraft]])


def _model_in(annotation) -> type[BaseModel] | None:
    """The model inside `X`, `X | None`, `list[X]` or `Annotated[X, ...]`."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        inner = _model_in(arg)
        if inner is not None:
            return inner
    return None


def model_at(loc: tuple) -> type[BaseModel] | None:
    """The model whose object sits at `loc` (a path of keys and list indexes) in a draft."""
    model: type[BaseModel] | None = OrderDraft
    for part in loc:
        if isinstance(part, int):
            continue
        if model is None or part not in model.model_fields:
            return None
        model = _model_in(model.model_fields[part].annotation)
    return model


def unknown_key_message(loc: tuple) -> str:
    key = str(loc[-1])
    model = model_at(loc[:-1])
    known = list(model.model_fields) if model else []
    where = "the draft" if not loc[:-1] else f"`{loc[-2]}`" if isinstance(loc[-2], str) else f"`{loc[-3]}[]`"
    return (
        f"key `{key}` is not in the seed's v1 contract for {where}{hint(key, known)}; the seed's compiler "
        f"rejects unknown fields (the real compiler ignores them), so this is an error"
    )
