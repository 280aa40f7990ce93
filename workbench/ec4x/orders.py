"""Seed 004's v1 order draft (the JSON the bot's LLM returns) as pydantic models.

The seed's compiler rejects unknown fields, type mismatches and missing required
fields, so the models are strict (`"101"` is not an int) and forbid unknown keys. The
real compiler ignores unknown keys; the workbench follows the seed and says so in the
message (see `unknown_key_message`). Which fields are required follows the contract's
examples and the bot's strict draft parser: `turn` and `houseId` always; every command
list may be left out (empty); nullable ids may be null.
"""

from __future__ import annotations

import typing
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    Json,
    TypeAdapter,
    create_model,
    ValidationInfo,
    field_validator,
    model_validator,
)

from workbench.ec4x import seed
from workbench.ec4x.rules import fail, hint, in_drift_mode, missing, note_drift, rule_error, seed_enum

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


def _required_for(what: str, requires: tuple[str, ...], values: dict, rule: str) -> list:
    return [
        (name, rule_error(rule, f"{what} needs `{name}`; found {'no value' if values.get(name) is None else 'an empty list'}",
                          values.get(name)), values.get(name))
        for name in requires
        if missing(values.get(name))
    ]


class FleetCommand(Contract):
    fleetId: int
    commandType: FleetCommandType
    targetSystemId: int | None = None
    targetFleetId: int | None = None
    roe: Roe | None = None  # the game's default is 6

    @model_validator(mode="after")
    def targets_present(self):
        values = self.__dict__
        failures = []
        if self.commandType in seed.SYSTEM_TARGET_COMMANDS:
            failures += _required_for(f"`{self.commandType}` (a system-target command)", ("targetSystemId",),
                                      values, "target_system_required")
        if self.commandType == "join-fleet":
            failures += _required_for("`join-fleet`", ("targetFleetId",), values, "target_fleet_required")
        fail("FleetCommand", failures)
        return self


class BuildCommand(Contract):
    colonyId: int
    buildType: BuildType
    shipClass: ShipClass | None = None
    facilityClass: FacilityClass | None = None
    groundClass: GroundClass | None = None
    quantity: int | None = None  # defaults to 1 for a facility

    @model_validator(mode="after")
    def class_and_quantity_present(self):
        requires = seed.BUILD_REQUIRES.get(self.buildType, ())
        what = f"buildType `{self.buildType}`"
        classes = tuple(name for name in requires if name != "quantity")
        failures = _required_for(what, classes, self.__dict__, "build_class_required")
        if "quantity" in requires:
            failures += _required_for(what, ("quantity",), self.__dict__, "quantity_required")
        fail("BuildCommand", failures)
        return self


class ZeroTurnCommand(Contract):
    commandType: ZeroTurnCommandType
    sourceFleetId: int | None = None
    targetFleetId: int | None = None
    shipIndices: list[int] = []
    fighterShipIds: list[int] = []
    carrierShipId: int | None = None
    sourceCarrierShipId: int | None = None
    targetCarrierShipId: int | None = None
    cargoType: CargoType | None = None
    quantity: int | None = None

    @model_validator(mode="after")
    def command_fields_present(self):
        requires = seed.ZERO_TURN_REQUIRES[self.commandType]
        fail("ZeroTurnCommand", _required_for(f"`{self.commandType}`", requires, self.__dict__,
                                              "zero_turn_field_required"))
        return self


class PopulationTransfer(Contract):
    sourceColonyId: int
    destColonyId: int
    ptuAmount: int


class TerraformCommand(Contract):
    colonyId: int


class ColonyManagement(Contract):
    colonyId: int
    taxRate: TaxRate | None = None
    autoRepair: bool | None = None
    autoLoadMarines: bool | None = None
    autoLoadFighters: bool | None = None


class DiplomaticCommand(Contract):
    targetHouseId: int
    action: DiplomaticAction
    proposalId: int | None = None
    proposedState: ProposedState | None = None

    @model_validator(mode="after")
    def action_fields_present(self):
        requires = seed.DIPLOMATIC_REQUIRES[self.action]
        fail("DiplomaticCommand", _required_for(f"`{self.action}`", requires, self.__dict__,
                                                "diplomatic_field_required"))
        return self


class EspionageAction(Contract):
    operation: EspionageOperation
    targetHouseId: int | None = None
    targetSystemId: int | None = None

    @model_validator(mode="after")
    def operation_targets_present(self):
        requires = seed.ESPIONAGE_REQUIRES[self.operation]
        fail("EspionageAction", _required_for(f"`{self.operation}`", requires, self.__dict__,
                                              "espionage_target_required"))
        return self


# PP per tech field, keyed by the seed's abbreviations (cst, wep, ter, ...); any other key is unknown.
ResearchFields = create_model("ResearchFields", __base__=Contract, **{f: (int | None, None) for f in seed.TECH_FIELDS})


class ResearchAllocation(Contract):
    economic: int | None = None
    science: int | None = None
    fields: ResearchFields | None = None


class OrderDraft(Contract):
    turn: int
    houseId: int
    fleetCommands: list[FleetCommand] = []
    buildCommands: list[BuildCommand] = []
    zeroTurnCommands: list[ZeroTurnCommand] = []
    populationTransfers: list[PopulationTransfer] = []
    terraformCommands: list[TerraformCommand] = []
    colonyManagement: list[ColonyManagement] = []
    espionageActions: list[EspionageAction] = []
    diplomaticCommand: DiplomaticCommand | None = None
    researchAllocation: ResearchAllocation | None = None
    ebpInvestment: int | None = 0
    cipInvestment: int | None = 0
    # Not in the contract; the real compiler reads them (see seed.COMPILER_ONLY_LISTS).
    # Kept as written: the seed gives their entries no shape to check.
    repairCommands: Any = None
    scrapCommands: Any = None

    @field_validator(*seed.COMPILER_ONLY_LISTS)
    @classmethod
    def compiler_only_list(cls, value, info: ValidationInfo):
        note_drift(info)
        if in_drift_mode(info):
            raise rule_error(
                "compiler_only_field",
                f"`{info.field_name}` is not a field of the seed's v1 JSON contract, but the seed's prompt "
                f"lists Repair & Scrap among the draft's categories and the real compiler reads this list, "
                f"so it is reported as drift rather than rejected; kept, entries not checked",
                value,
            )
        return value

    @model_validator(mode="after")
    def one_command_per_fleet(self):
        seen: set[int] = set()
        failures = []
        for index, command in enumerate(self.fleetCommands):
            if command.fleetId in seen:
                failures.append((index, command.fleetId))
            seen.add(command.fleetId)
        fail("OrderDraft", [
            (("fleetCommands", index, "fleetId"),
             rule_error("one_command_per_fleet",
                        f"fleet {fleet} already has a command this turn (the seed allows 1 per fleet per turn)",
                        fleet), fleet)
            for index, fleet in failures
        ])
        return self

    @model_validator(mode="after")
    def espionage_ops_per_house(self):
        counts: dict[int, int] = {}
        failures = []
        for index, action in enumerate(self.espionageActions):
            if action.targetHouseId is None:
                continue
            counts[action.targetHouseId] = counts.get(action.targetHouseId, 0) + 1
            if counts[action.targetHouseId] > seed.ESPIONAGE_OPS_PER_HOUSE:
                failures.append((index, action.targetHouseId))
        fail("OrderDraft", [
            (("espionageActions", index, "targetHouseId"),
             rule_error("espionage_ops_per_house",
                        f"more than {seed.ESPIONAGE_OPS_PER_HOUSE} espionage operations against house {house} "
                        f"(the seed allows up to {seed.ESPIONAGE_OPS_PER_HOUSE} per target house)", house), house)
            for index, house in failures
        ])
        return self


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
