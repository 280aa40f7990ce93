"""The synthetic gm sessions: deterministic, every variant present, every fault found."""

import random

import pytest

import workbench
from workbench.gm import synth as gm


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("synth") / "gm"
    manifest = gm.generate(out, 1, random.Random("7:gm"))
    report = workbench.ingest([out], db=out.parent / "x.duckdb")
    return out, manifest, report


def test_same_rng_same_bytes(tmp_path):
    first = gm.generate(tmp_path / "a", 1, random.Random(3))
    second = gm.generate(tmp_path / "b", 1, random.Random(3))
    assert [e["faults"] for e in first] == [e["faults"] for e in second]
    for a, b in zip(first, second):
        assert open(a["path"], "rb").read() == open(b["path"], "rb").read()


def test_scale_multiplies_the_responses(tmp_path):
    [small, *_] = gm.generate(tmp_path / "a", 1, random.Random(3))
    [large, *_] = gm.generate(tmp_path / "b", 3, random.Random(3))
    assert _lines(large["path"]) > 2.5 * _lines(small["path"])


def test_every_manifest_fault_is_reported_where_the_manifest_says(corpus):
    out, manifest, report = corpus
    files = {f.path: f for f in report.files}
    assert len(manifest) == len(files) == len(gm.SESSIONS)
    for entry in manifest:
        assert entry["format"] == "gm"
        expected = {(f["locator"], f["field"], f["rule"]) for f in entry["faults"]}
        reported = {(v.locator, v.field, v.rule) for v in files[entry["path"]].violations if v.severity != "info"}
        assert reported == expected, entry["path"]


def test_every_fault_kind_is_planted_somewhere(corpus):
    _, manifest, _ = corpus
    rules = {f["rule"] for entry in manifest for f in entry["faults"]}
    assert rules >= {
        "enum_value",
        "action_type_defaulted",
        "importance_defaulted",
        "too_few_options",
        "incomplete_option",
        "required_key",
        "less_than_equal",
        "int_type",
        "json_repaired",
        "not_a_json_object",
        "location_defaulted",
    }


def test_every_variant_is_written(corpus):
    out, _, _ = corpus
    con = workbench.connect(out.parent / "x.duckdb")
    kinds = {k for (k,) in con.execute("SELECT DISTINCT kind FROM gm_responses").fetchall()}
    assert kinds == {"markers", "mixed", "json", "character"}
    texts = "\n".join(p.read_text() for p in out.glob("*.gm.jsonl"))
    for quirk in ("ACQUIRED_ITEMS: REMOVED_ITEMS:", '\\"title\\"', "```json", "COMBAT:", '\\"playerDecision\\": {'):
        assert quirk in texts, quirk
    models = {m for (m,) in con.execute("SELECT DISTINCT model FROM decisions").fetchall()}
    assert len(models) == 3


def test_locations_of_every_kind_and_item_objects_are_written(corpus):
    out, _, _ = corpus
    con = workbench.connect(out.parent / "x.duckdb")
    kinds = {
        k for (k,) in con.execute("SELECT DISTINCT location_type FROM gm_responses WHERE kind = 'json'").fetchall()
    }
    assert kinds >= {"town", "wilderness", "landmark", "unknown"}
    texts = "\n".join(p.read_text() for p in out.glob("*.gm.jsonl"))
    assert '\\"category\\"' in texts  # acquired items as {name, category}


def test_records_and_rejects_add_up_to_the_non_blank_lines(corpus):
    _, _, report = corpus
    for file in report.files:
        assert file.records + file.rejected == _lines(file.path)


def _lines(path) -> int:
    with open(path, encoding="utf-8") as handle:
        return sum(1 for text in handle if text.strip())


def test_the_corpus_manifest_lists_what_ingest_reports(sample, manifest, tmp_path):
    """Through `workbench synth` (paths relative to the corpus), into a fresh database."""
    entries = [entry for entry in manifest["files"] if entry["format"] == "gm"]
    assert len(entries) == len(gm.SESSIONS)
    report = workbench.ingest([sample / entry["path"] for entry in entries], db=tmp_path / "x.duckdb")
    for entry, file in zip(entries, report.files):
        expected = {(f["locator"], f["field"], f["rule"]) for f in entry["faults"]}
        assert {(v.locator, v.field, v.rule) for v in file.violations if v.severity != "info"} == expected
