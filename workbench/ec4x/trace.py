"""The EC4X bot's per-turn trace (`bot_trace_<gameId>.jsonl`) as pydantic models.

No seed documents this file; formats.md describes what the real bot writes: a
`session_start` line at each process start, then one line per turn. The models hold
those keys to their types (strict) and ignore keys they do not list, since the bot
adds configuration keys to `session_start` over time. A line with another `kind` is
kept and reported as drift.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import AwareDatetime, BaseModel, ConfigDict, Discriminator, Field, Json, Tag, TypeAdapter, model_validator

from workbench.ec4x.rules import fail, rule_error

ERROR_CLASSES = ("success", "validation", "llm_request", "transport", "unknown")
STAGES = ("llm_request", "schema_parse", "compile", "submit")

Count = Annotated[int, Field(ge=0)]


class TraceModel(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")


class SessionStart(TraceModel):
    model_config = ConfigDict(strict=True, extra="allow")  # relays, timeouts, ... vary by version

    kind: Literal["session_start"]
    timestamp: AwareDatetime
    gameId: str
    model: str
    maxRetries: Count


class FailedAttempt(TraceModel):
    """One entry of `trace`: an attempt that did not end in a submitted order."""

    attempt: Annotated[int, Field(ge=1)]
    stage: Literal[STAGES]
    details: list[str]
    outcome: str
    llmRequestMs: Annotated[float, Field(ge=0)]
    llmResponseBytes: Count


class TurnRecord(TraceModel):
    timestamp: AwareDatetime  # local time with its offset
    gameId: str
    turn: Count
    ok: bool
    errorClass: Literal[ERROR_CLASSES]
    attempts: Annotated[int, Field(ge=1)]
    errors: list[str]
    featureTags: list[str]
    trace: list[FailedAttempt]

    @model_validator(mode="after")
    def ok_matches_error_class(self):
        if self.ok != (self.errorClass == "success"):
            fail("TurnRecord", [("errorClass", rule_error(
                "ok_matches_error_class",
                f"`ok` is {str(self.ok).lower()} but errorClass is {self.errorClass!r}; a turn is ok exactly "
                f"when its errorClass is 'success'", self.errorClass), self.errorClass)])
        return self

    @model_validator(mode="after")
    def attempts_cover_trace(self):
        fail("TurnRecord", [
            (("trace", index, "attempt"), rule_error(
                "trace_attempt_in_range",
                f"trace entry for attempt {entry.attempt}, but the turn took {self.attempts} attempt(s)",
                entry.attempt), entry.attempt)
            for index, entry in enumerate(self.trace) if entry.attempt > self.attempts
        ])
        return self


class OtherKind(TraceModel):
    """A line with a `kind` the bot is not known to write: kept, reported as drift."""

    kind: str


def _line_tag(value: Any) -> str | None:
    if not isinstance(value, dict):
        return None  # not an object: the line is rejected, not validated
    if "kind" not in value:
        return "turn"
    return "session_start" if value["kind"] == "session_start" else "other_kind"


TraceLine = Annotated[
    Union[
        Annotated[SessionStart, Tag("session_start")],
        Annotated[TurnRecord, Tag("turn")],
        Annotated[OtherKind, Tag("other_kind")],
    ],
    Discriminator(_line_tag, custom_error_type="not_an_object", custom_error_message="expected a JSON object"),
]
LINE_TAGS = ("session_start", "turn", "other_kind")

# One call validates a whole batch of raw lines in pydantic-core.
LINES = TypeAdapter(list[Json[TraceLine]])
