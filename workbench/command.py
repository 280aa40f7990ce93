"""The `workbench` command's entry point, kept apart from the command line's modules: a
Ctrl-C while they load (the first tenth of a second) ends the command in one line with
exit 130, as a Ctrl-C at any later moment does, not with a traceback from the import
machinery. (Before the interpreter runs this, it is starting itself: a Ctrl-C then is
Python's.)"""

import os
import signal


def run() -> None:
    """`workbench`: `cli.run`, once the command line's modules are loaded."""
    signal.signal(signal.SIGINT, _interrupted_while_loading)
    from workbench import cli
    from workbench.errors import note_interrupt

    # From here a Ctrl-C raises KeyboardInterrupt as Python's own handler does, and is
    # remembered: an import it broke may say only ImportError (`errors.is_interrupt`).
    signal.signal(signal.SIGINT, lambda number, frame: note_interrupt())
    cli.run()


def _interrupted_while_loading(number, frame) -> None:
    # Nothing is open or written yet: end here, at once, rather than unwind an import.
    os.write(2, b"workbench: interrupted before it began; nothing was done\n")
    os._exit(130)
