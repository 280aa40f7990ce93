"""A decision's outcome: `valid`, `invalid` (an answer that breaks a rule), or `failed`
(no answer came back: the provider's or the transport's error, never the model's move).
How a failed call counts where models are compared is the user's choice, said in every
verdict: left out of validity (`exclude`, the default), or against the model as an
invalid decision (`invalid`)."""

from __future__ import annotations

from workbench.errors import WorkbenchError

OUTCOMES = ("valid", "invalid", "failed")
FAILURES = ("exclude", "invalid")
# What a verdict says of the failed calls, after where its numbers come from.
FAILURES_SAID = {"exclude": ", failed calls left out", "invalid": ", failed calls counted as invalid"}
# What a command that needs decisions says to do where there are none. Which formats
# record decisions is the registry's to say (`workbench formats`), not a list kept here.
INGEST_DECISIONS = "ingest the logs of a game or an agent (`workbench formats` lists what reads them) first"


def failures_used(failures: str) -> str:
    """`failures` checked; WorkbenchError naming the choices at any other."""
    if failures not in FAILURES:
        raise WorkbenchError(f"failures must be one of: {', '.join(FAILURES)} (not {failures!r})")
    return failures


def answered(failures: str) -> str:
    """A SQL condition on `decisions` keeping the calls `failures` compares: the answered
    ones, or every one."""
    return "outcome IS DISTINCT FROM 'failed'" if failures_used(failures) == "exclude" else "true"
