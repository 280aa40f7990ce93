"""Altair and jsonschema, imported without a part the workbench never uses.

jsonschema imports `rfc3987_syntax` where it is installed (JupyterLab brings it) to
check the `iri` string format, and that module compiles a grammar as it loads: seconds
of every command and notebook that draws (Altair imports jsonschema) or checks a JSON
Schema (an OTel tool call's arguments, a declared format's lines). Neither Altair nor
the workbench checks that format. So where nothing in the process has loaded jsonschema
yet, the workbench imports it with `rfc3987_syntax` hidden for that one import: the
process can still import `rfc3987_syntax` itself afterwards, and jsonschema then goes
without the `iri` check, as it does where the module is not installed.
"""

from __future__ import annotations

import sys
from types import ModuleType


def jsonschema() -> ModuleType:
    """The `jsonschema` package, imported without `rfc3987_syntax` if not loaded yet."""
    if "jsonschema" not in sys.modules and "rfc3987_syntax" not in sys.modules:
        sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]  # None: "not installed"
        try:
            import jsonschema as module
        finally:
            del sys.modules["rfc3987_syntax"]
        return module
    import jsonschema as module

    return module


def altair() -> ModuleType:
    """The `altair` package, its jsonschema imported by `jsonschema()`."""
    jsonschema()
    import altair as module

    return module
