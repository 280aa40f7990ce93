"""Seed 002 (Agent Arena's universal tools) as pydantic models, one per tool.

A log line is a decision `{tool, params, reasoning?}` plus the `agent_id` and `tick`
the logs add, and optionally the tool's outcome (`result`, or the next observation's
`last_action_result`). Parameters are strict (`"30"` is not a radius) and a tool's
unknown parameters are errors. `target_position`, the real runtime's spelling of
`move_to`'s target, is accepted as the target and reported as drift (`drift.py`), as
are top-level keys and error codes the seed does not list. The runtime's other names
(`craft_item`, `get_inventory`, ...; `collect`'s `resource_id`) stay errors, with a
message that says what the runtime means and the seed's name for it.
"""

from __future__ import annotations

import difflib
from datetime import datetime
from typing import Annotated, Any, Literal, Union, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Json,
    Tag,
    TypeAdapter,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from workbench.schema import INT64
from workbench.validation import found, tag_by

# A tick: 0 or more, and within the BIGINT it is stored as.
Tick = Annotated[int, Field(ge=0, le=INT64[1])]

FilterType = Literal["resource", "hazard", "agent", "station"]
FILTER_TYPES: tuple[str, ...] = get_args(FilterType)
ERROR_CODES = ("OUT_OF_RANGE", "NOT_FOUND", "MISSING_MATERIALS", "INVALID_PARAMS", "BUSY")
# The real runtime's spelling of move_to's shorthand target (formats.md).
RUNTIME_TARGET = "target_position"
AXES = ("target_x", "target_y", "target_z")
# Tools the real runtime registers (its Godot tool registry, its SDK's action tools)
# under names seed 002 does not use: still unknown tools, but the message says what the
# runtime means by them and, where there is one, the seed's tool for it.
RUNTIME_TOOLS = {
    "craft_item": "craft",
    "get_inventory": "query_inventory",
    "navigate_to": "move_to",
    "pickup_item": "collect",
    "explore": None,
    "explore_direction": None,
    "stop_movement": None,
    "drop_item": None,
    "use_item": None,
    "look_at": None,
    "plan_path": None,
    "get_exploration_status": None,
    "get_recipes": None,
}
# Parameter names the real runtime and its docs use for a seed tool's parameter.
RUNTIME_PARAMS = {
    ("collect", "resource_id"): "target_name",
    ("collect", "target"): "target_name",
    ("craft", "recipe"): "item_name",
}


def rule_error(rule: str, message: str, field: str | None = None) -> PydanticCustomError:
    # The message travels in the context, so braces in found values stay literal and the
    # shared formatter knows the message already says what was found; `field` (appended
    # to the error's location) points the violation at the key that is wrong.
    context = {"message": message, "says_found": True}
    if field:
        context["field"] = field
    return PydanticCustomError(rule, "{message}", context)


def hint(value: str, candidates) -> str:
    close = difflib.get_close_matches(value, list(candidates), n=1, cutoff=0.6)
    return f"; did you mean `{close[0]}`?" if close else ""


def _three_numbers(value: list[float]) -> list[float]:
    if len(value) != 3:
        raise rule_error("position_xyz", f"a position is exactly three numbers [x, y, z]; found {len(value)}")
    return value


Position = Annotated[list[float], AfterValidator(_three_numbers)]
Positive = Annotated[float, Field(gt=0)]


class Params(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


class MoveTo(Params):
    target_x: float | None = None
    target_y: float | None = None
    target_z: float | None = None
    target: Position | None = None
    target_position: Position | None = None
    speed: Positive | None = None  # multiplier, default 1.0

    @model_validator(mode="after")
    def target_given(self):
        if self.target is not None or self.target_position is not None:
            return self
        given = [axis for axis in AXES if getattr(self, axis) is not None]
        if len(given) == len(AXES):
            return self
        if given:
            absent = next(axis for axis in AXES if axis not in given)
            raise rule_error(
                "move_target_incomplete",
                f"move_to with {', '.join(f'`{a}`' for a in given)} needs all of target_x, target_y, target_z; "
                f"found no `{absent}` (or use `target` [x, y, z])",
                field=absent,
            )
        raise rule_error(
            "move_target_required",
            "move_to needs `target` [x, y, z] or all of target_x, target_y, target_z; found neither",
            field="target",
        )


class Collect(Params):
    target_name: str


class Craft(Params):
    item_name: str
    station_name: str


class QueryWorld(Params):
    radius: Positive | None = None  # default 20.0
    filter_type: FilterType | None = None


class QueryInventory(Params):
    pass


class SendMessage(Params):
    message: str
    target_agent: str = "all"


class Idle(Params):
    pass


TOOLS: dict[str, type[Params]] = {
    "move_to": MoveTo,
    "collect": Collect,
    "craft": Craft,
    "query_world": QueryWorld,
    "query_inventory": QueryInventory,
    "send_message": SendMessage,
    "idle": Idle,
}
UNKNOWN_TOOL = "unknown_tool"


class ActionResult(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")

    success: bool
    error_code: str | None = None  # the seed lists its "common" codes: others are drift
    error_message: str | None = None


class Decision(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")  # other keys: drift, found in SQL

    agent_id: str
    tick: Tick
    tool: str
    params: dict[str, Any]
    reasoning: str | None = None
    result: ActionResult | None = None
    last_action_result: ActionResult | None = None
    model: str | None = None


def _known_tool(tool: str) -> str:
    if tool in RUNTIME_TOOLS:
        seed_tool = RUNTIME_TOOLS[tool]
        instead = f"; the seed's tool for it is `{seed_tool}`" if seed_tool else "; the seed has no such tool"
        raise rule_error(
            "unknown_tool",
            f"tool {tool!r} is not one of the seed's tools ({', '.join(TOOLS)}); the real runtime registers it, "
            f"but the seed is the contract, so it is an error{instead}",
        )
    raise rule_error(
        "unknown_tool", f"tool {tool!r} is not one of the seed's tools ({', '.join(TOOLS)}){hint(tool, TOOLS)}"
    )


class UnknownToolDecision(Decision):
    tool: Annotated[str, AfterValidator(_known_tool)]


def _decision_model(tool: str, params: type[Params]) -> type[Decision]:
    return create_model(f"{tool}_decision", __base__=Decision, params=(params, ...))


# A union of models made at run time, one per tool: `Any` to the type checker.
DecisionLine: Any = Annotated[
    Union[  # noqa: UP007  (a union made at run time)
        tuple(Annotated[_decision_model(tool, params), Tag(tool)] for tool, params in TOOLS.items())
        + (Annotated[UnknownToolDecision, Tag(UNKNOWN_TOOL)],)
    ],
    Discriminator(
        tag_by("tool", TOOLS, UNKNOWN_TOOL),
        custom_error_type="not_an_object",
        custom_error_message="expected a JSON object",
    ),
]
LINE_TAGS = (*TOOLS, UNKNOWN_TOOL)

# One call validates a whole batch of raw lines in pydantic-core.
LINES = TypeAdapter(list[Json[DecisionLine]])


def unknown_param_message(tool: str, key: str) -> str:
    known = list(TOOLS[tool].model_fields) if tool in TOOLS else []
    listed = ", ".join(k for k in known if k != RUNTIME_TARGET) or "none"
    seed_name = RUNTIME_PARAMS.get((tool, key))
    if seed_name:
        return (
            f"`{key}` is not a parameter of {tool} in the seed (parameters: {listed}); the real runtime "
            f"spells it so, but the seed is the contract, so it is an error; did you mean `{seed_name}`?"
        )
    return f"`{key}` is not a parameter of {tool} in the seed (parameters: {listed}){hint(key, known)}"


# --- reasoning traces -----------------------------------------------------------------

# The runtime's standard step names, in pipeline order (its TraceStepName): the prompt
# step is `prompt`, the model's answer `response`.
TRACE_STEP_NAMES = ("observation", "retrieved", "prompt", "llm_request", "response", "decision")
# The keys the runtime copies from a record into each of its steps.
STEP_STAMPS = ("agent_id", "tick")


def _iso_time(value: str) -> str:
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise rule_error(
            "timestamp_format", f"expected an ISO 8601 time such as 2026-03-06T18:30:00.123456Z; found {found(value)}"
        ) from None
    return value


IsoTime = Annotated[str, AfterValidator(_iso_time)]


class TraceStep(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")  # other keys: drift, found in SQL

    timestamp: IsoTime
    agent_id: str | None = None
    tick: Tick | None = None
    name: str
    data: dict[str, Any]
    duration_ms: Annotated[float, Field(ge=0)] | None = None  # left out when not measured


class TraceRecord(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")

    agent_id: str
    tick: Tick
    episode_id: str
    start_time: IsoTime
    steps: list[TraceStep]

    @field_validator("steps")
    @classmethod
    def steps_of_this_tick(cls, steps: list[TraceStep], info: ValidationInfo) -> list[TraceStep]:
        # The runtime stamps every step with its record's agent and tick: a step of
        # another agent or tick was not written by it, and would join the wrong decision.
        for key in STEP_STAMPS:
            if key not in info.data:
                continue  # the record's own value is already an error
            own = info.data[key]
            others = [(i, getattr(s, key)) for i, s in enumerate(steps) if getattr(s, key) not in (None, own)]
            if others:
                index, value = others[0]
                more = f" ({len(others)} steps differ)" if len(others) > 1 else ""
                raise rule_error(
                    "step_mismatch",
                    f"every step carries its record's {key} ({own!r}); found {value!r}{more}",
                    field=f"{index}.{key}",
                )
        return steps


TRACE_LINES = TypeAdapter(list[Json[TraceRecord]])
