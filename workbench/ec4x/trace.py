"""The EC4X bot's per-turn trace (`bot_trace_<gameId>.jsonl`) as pydantic models.

No seed documents this file; formats.md describes what the real bot writes: a
`session_start` line at each process start, then one line per turn. The models hold
those keys to their types (strict) and ignore keys they do not list, since the bot
adds configuration keys to `session_start` over time. A line with another `kind` is
kept and reported as drift. A turn line also keeps what the bot's retry loop
guarantees: `ok` exactly when errorClass is `success`, at most one trace entry per
failed attempt, numbered 1, 2, ... in order, a failed turn's errorClass derived from the stage of its
last failed attempt, and feature tags only on a successful turn.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import AwareDatetime, BaseModel, ConfigDict, Discriminator, Field, Json, Tag, TypeAdapter, model_validator

from workbench.ec4x.rules import fail, rule_error
from workbench.schema import INT64

ErrorClass = Literal["success", "validation", "llm_request", "transport", "unknown"]
Stage = Literal["llm_request", "schema_parse", "compile", "submit"]
ERROR_CLASSES: tuple[str, ...] = get_args(ErrorClass)
STAGES: tuple[str, ...] = get_args(Stage)
# How the bot classifies a failed turn: by the stage of its last failed attempt
# (a failed turn without any trace entry is "unknown").
ERROR_CLASS_OF_STAGE = {
    "llm_request": "llm_request",
    "schema_parse": "validation",
    "compile": "validation",
    "submit": "transport",
}

Count = Annotated[int, Field(ge=0, le=INT64[1])]


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

    attempt: Annotated[int, Field(ge=1, le=INT64[1])]
    stage: Stage
    details: list[str]
    outcome: str
    llmRequestMs: Annotated[float, Field(ge=0)]
    llmResponseBytes: Count


class TurnRecord(TraceModel):
    timestamp: AwareDatetime  # local time with its offset
    gameId: str
    turn: Count
    ok: bool
    errorClass: ErrorClass
    attempts: Annotated[int, Field(ge=1, le=INT64[1])]
    errors: list[str]
    featureTags: list[str]
    trace: list[FailedAttempt]

    @model_validator(mode="after")
    def consistent(self):
        """What the bot's retry loop guarantees of every turn line it writes."""
        if self.ok != (self.errorClass == "success"):
            fail(
                "TurnRecord",
                [
                    (
                        "errorClass",
                        rule_error(
                            "ok_matches_error_class",
                            f"`ok` is {str(self.ok).lower()} but errorClass is {self.errorClass!r}; a turn is ok exactly "
                            f"when its errorClass is 'success'",
                        ),
                        self.errorClass,
                    )
                ],
            )
        failures = []
        for index, entry in enumerate(self.trace):
            if entry.attempt > self.attempts:
                failures.append(
                    (
                        ("trace", index, "attempt"),
                        rule_error(
                            "trace_attempt_in_range",
                            f"trace entry for attempt {entry.attempt}, but the turn took {self.attempts} attempt(s)",
                        ),
                        entry.attempt,
                    )
                )
            elif entry.attempt != index + 1:
                failures.append(
                    (
                        ("trace", index, "attempt"),
                        rule_error(
                            "trace_attempt_order",
                            f"trace entry {index} is for attempt {entry.attempt}; the bot writes its failed attempts "
                            f"in order, 1, 2, ...",
                        ),
                        entry.attempt,
                    )
                )
        failed = self.attempts - 1 if self.ok else self.attempts
        if not failures and len(self.trace) > failed:
            outcome = "ended ok" if self.ok else "all failed"
            failures.append(
                (
                    "trace",
                    rule_error(
                        "trace_entry_per_failed_attempt",
                        f"{self.attempts} attempt(s) that {outcome} make {failed} failed attempt(s), and the bot writes "
                        f"one trace entry per failed attempt; found {len(self.trace)} entries",
                    ),
                    len(self.trace),
                )
            )
        if not self.ok:
            expected = ERROR_CLASS_OF_STAGE[self.trace[-1].stage] if self.trace else "unknown"
            if self.errorClass != expected:
                last = (
                    f"its last failed attempt's stage is {self.trace[-1].stage!r}"
                    if self.trace
                    else "it has no trace entry"
                )
                failures.append(
                    (
                        "errorClass",
                        rule_error(
                            "error_class_matches_stage",
                            f"errorClass is {self.errorClass!r} but {last}; the bot classifies a failed turn by that "
                            f"stage, so it is {expected!r}",
                        ),
                        self.errorClass,
                    )
                )
            if self.featureTags:
                failures.append(
                    (
                        "featureTags",
                        rule_error(
                            "feature_tags_on_failure",
                            f"a failed turn with feature tags {self.featureTags!r}; the bot tags only the orders of a "
                            f"successful turn and writes [] otherwise",
                        ),
                        self.featureTags,
                    )
                )
        fail("TurnRecord", failures)
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
    Annotated[SessionStart, Tag("session_start")]
    | Annotated[TurnRecord, Tag("turn")]
    | Annotated[OtherKind, Tag("other_kind")],
    Discriminator(_line_tag, custom_error_type="not_an_object", custom_error_message="expected a JSON object"),
]
LINE_TAGS = ("session_start", "turn", "other_kind")

# One call validates a whole batch of raw lines in pydantic-core.
LINES = TypeAdapter(list[Json[TraceLine]])
