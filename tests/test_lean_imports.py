"""Altair and jsonschema imported the workbench's way: without `rfc3987_syntax` (a
grammar compiled as it loads, for a string format nothing here checks), for that import
only: `import workbench` changes nothing in the process, and the process can still
import `rfc3987_syntax` itself afterwards."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT


def probe(code: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def test_import_workbench_leaves_the_modules_of_the_process_alone():
    found = probe("import sys, json, workbench; print(json.dumps({'set': 'rfc3987_syntax' in sys.modules}))")
    assert found == {"set": False}


def test_altair_comes_without_the_iri_grammar_which_can_still_be_imported_after():
    pytest.importorskip("rfc3987_syntax", reason="rfc3987_syntax is not installed here: nothing to leave out")
    found = probe(
        "import sys, json\n"
        "from workbench.lean_imports import altair\n"
        "alt = altair()\n"
        "loaded = 'rfc3987_syntax' in sys.modules\n"
        "import rfc3987_syntax\n"
        "print(json.dumps({'chart': hasattr(alt, 'Chart'), 'loaded': loaded, "
        "'after': sys.modules['rfc3987_syntax'] is not None}))"
    )
    assert found == {"chart": True, "loaded": False, "after": True}


def test_a_process_that_loaded_jsonschema_first_keeps_it_as_it_is():
    pytest.importorskip("rfc3987_syntax", reason="rfc3987_syntax is not installed here: nothing to leave out")
    found = probe(
        "import sys, json, jsonschema\n"
        "before = sys.modules['jsonschema']\n"
        "from workbench.lean_imports import jsonschema as lean\n"
        "print(json.dumps({'same': lean() is before}))"
    )
    assert found == {"same": True}
