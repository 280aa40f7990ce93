"""Errors a user can cause. The command line prints them as one line and exits 2."""


class WorkbenchError(Exception):
    """A problem with the user's arguments, files or database, explained in one line."""


class PluginWarning(UserWarning):
    """A format plugin that was left out, and why (one line; see `registry`)."""


class OlderDatabase(WorkbenchError):
    """A database written by an older workbench, whose tables cannot take what this one
    records."""


class UnreadableFile(WorkbenchError):
    """A file that cannot be read as a whole (not a zip, no gamestate, not text, ...).

    Raised inside a format reader; the file's transaction is rolled back and the
    other files of the same run go on.
    """


def first_line(exc: BaseException) -> str:
    """An exception's message cut to its first line (its type name when it has none),
    for one-line error reports."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def is_interrupt(exc: BaseException) -> bool:
    """Ctrl-C as DuckDB reports it when the signal reaches a query first: an
    InterruptException, or from some statements a plain RuntimeError. One that lands in
    Python code DuckDB runs for a statement (reading an Arrow table's schema) comes back
    as an "Invalid Input Error" naming it: the file was reported failed, and the run
    went on."""
    return (
        type(exc).__name__ == "InterruptException"
        or (isinstance(exc, RuntimeError) and str(exc).startswith("Query interrupted"))
        or (type(exc).__name__ == "InvalidInputException" and "failed: KeyboardInterrupt:" in str(exc))
        or (isinstance(exc, ImportError) and (_interrupted or _caused_by_an_interrupt(exc)))
    )


# Whether the `workbench` command was interrupted (its Ctrl-C handler says so: `note_interrupt`).
# A Ctrl-C that lands while a compiled module imports may come back as a plain ImportError,
# its KeyboardInterrupt swallowed: numpy's import of `datetime` gives "PyCapsule_Import
# could not import module", chained to nothing.
_interrupted = False


def note_interrupt() -> None:
    """Remember that the user pressed Ctrl-C, then stop as Python does."""
    global _interrupted
    _interrupted = True
    raise KeyboardInterrupt


def _caused_by_an_interrupt(exc: BaseException | None) -> bool:
    """A Ctrl-C while a compiled module loads (a command's DuckDB or Polars) comes back as
    an ImportError ("Encountered an error while initializing the extension") caused by it."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False
