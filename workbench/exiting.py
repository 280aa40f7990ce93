"""How the `workbench` command ends once its work is done and printed: with its exit
code, quickly, and never by a late signal.

Why it ends by `os._exit` rather than by returning to Python: Python's shutdown would
unload polars, DuckDB and pyarrow and free their objects one by one after the command's
work was done and printed: about a tenth of `workbench plot` (docs/performance.md). `os._exit` skips what Python would still do, so that is done
here first, in Python's order: the exit handlers run (`atexit._run_exitfuncs`: what
they print would otherwise be lost), then standard output and error are flushed. Where
Python's shutdown still has work of its own, the process exits as Python does: under a
debugger, a profiler (cProfile writes its profile at exit) or IPython's `%run` (which
must go on running), and while a thread that is not a daemon is alive (Python would
wait for it). A stream that fails to flush is also left to Python, which says what it
says of it.
"""

from __future__ import annotations

import os
import sys


def end(code: int) -> None:
    """End the process with `code`, the command's exit code. A late Ctrl-C is ignored
    from here on, rather than killing the process with a signal after its work
    succeeded."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A Ctrl-C that ended an `exec` of a string (a dataclass being built as a format's
    # module loads) marks the interpreter, which then ends by SIGINT at exit, though
    # `main` caught it: `python -m workbench.cli` lost its exit code (130). Each `exec`
    # of a string starts by clearing that mark.
    exec("")
    _exit(code)


def _exit(code: int) -> None:
    """End the process with `code`, skipping Python's shutdown where nothing is left for
    it to do (the module's docstring says why and where): the exit handlers run first,
    then the output is flushed. Elsewhere it exits as Python does."""
    import atexit
    import threading

    hosted = sys.gettrace() is not None or sys.getprofile() is not None or "IPython" in sys.modules
    if hosted or any(
        thread.is_alive() and not thread.daemon
        for thread in threading.enumerate()
        if thread is not threading.main_thread()
    ):
        sys.exit(code)
    atexit._run_exitfuncs()  # and forgotten: a `sys.exit` below does not run them again
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:  # no stream: the file descriptor was closed, or pythonw
                stream.flush()
        except BrokenPipeError:  # what was left to print found its reader gone (`| head`)
            code = reader_gone() if stream is sys.stdout else code
        except (OSError, ValueError):
            sys.exit(code)  # Python's shutdown says what it says of a stream that failed
    os._exit(code)


def reader_gone() -> int:
    """The reader of standard output went away (`| head`): stop quietly, as `cat` does,
    with the exit status of a process ended by SIGPIPE."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python's own flush at exit finds no pipe
    except (OSError, ValueError):
        pass
    return 128 + 13
