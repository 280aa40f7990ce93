"""Errors a user can cause. The command line prints them as one line and exits 2."""


class WorkbenchError(Exception):
    """A problem with the user's arguments, files or database, explained in one line."""


class UnreadableFile(WorkbenchError):
    """A file that cannot be read as a whole (not a zip, no gamestate, not text, ...).

    Raised inside a format reader; the file's transaction is rolled back and the
    other files of the same run go on.
    """
