"""OpenTelemetry in and out within the JSONL formats' bound: an `*.otlp.json` export (one
JSON object, of any size) is read a span at a time, and `export --otlp` writes a batch
of decisions at a time, in exports the ingest reads again whole. Memory is compared, not
timed: a peak against another measured in the same run (`bench.otlp` measures them at
scale)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

import workbench
from bench.common import PRINT_PEAK_KB
from tests.conftest import ROOT
from workbench.jsonl import MAX_LINE_BYTES
from workbench.otel import otlp, reader, writer

OTEL = ROOT / "tests" / "otel" / "data"
# What ingesting an OTLP file leaves, table by table, but for the file's own id.
TABLES = {
    "otel_spans": "* EXCLUDE (source_id)",
    "otel_scores": "* EXCLUDE (source_id)",
    "violations": "* EXCLUDE (source_id)",
    "rejects": "* EXCLUDE (source_id)",
    "decisions": "* EXCLUDE (source_id)",
    "sources": "records, rejected",
}


def decisions_log(path: Path, count: int, games: int = 1) -> Path:
    with path.open("w") as out:
        for tick in range(count):
            out.write(
                json.dumps(
                    {
                        "agent_id": f"a{tick % 3}",
                        "tick": tick,
                        "tool": "idle",
                        "params": {},
                        "model": f"m{tick % 2}",
                        "reasoning": "x" * (tick % 50),
                    }
                )
                + "\n"
            )
    return path


def as_one_export(lines: list[Path], out: Path) -> Path:
    """The exports of OTLP/JSON lines, pretty-printed as one export (`*.otlp.json`)."""
    resource_spans = [
        part
        for path in lines
        for line in path.read_text().splitlines()
        if line.strip()
        for part in json.loads(line)["resourceSpans"]
    ]
    out.write_text("\ufeff" + json.dumps({"resourceSpans": resource_spans}, indent=2))
    return out


def tables_of(db: Path) -> dict[str, list]:
    with duckdb.connect(str(db), read_only=True) as con:
        return {
            table: con.sql(f"SELECT {columns} FROM {table} ORDER BY ALL").fetchall()
            for table, columns in TABLES.items()
        }


def test_an_export_read_a_span_at_a_time_gives_what_reading_it_whole_gives(tmp_path, monkeypatch):
    one = as_one_export(sorted(OTEL.glob("*.otlp.jsonl")), tmp_path / "all.otlp.json")
    monkeypatch.setattr(reader, "STORED_SPANS", 7)  # its rows stored every 7 spans
    streamed = workbench.ingest([one], db=tmp_path / "streamed.duckdb").files[0]
    with monkeypatch.context() as whole:
        whole.setattr(otlp, "lazy_export", lambda data: None)
        read_whole = workbench.ingest([one], db=tmp_path / "whole.duckdb").files[0]
    assert streamed.records == read_whole.records > 7 * 3 and streamed.rejected == read_whole.rejected == 0
    assert tables_of(tmp_path / "streamed.duckdb") == tables_of(tmp_path / "whole.duckdb")


@pytest.mark.parametrize(
    "text, why",
    [
        ('{"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "1"}, 7]}]}]}', "spans[1] 7, not a span object"),
        ('{"resourceSpans": [{"scopeSpans": [{"spans": [{"n": ' + "9" * 5000 + "}]}]}]}", "text that is not JSON"),
        ('{"resourceSpans": [{"resource": [], "scopeSpans": []}]}', "resource [], not an object"),
        (
            '{"resourceSpans": [{"scopeSpans": [{"scope": {"name": 1}, "spans": []}]}]}',
            "not an object with a string name",
        ),
        ('{"resourceSpans": [{"scopeSpans": [{"spans": [{"s": "\\udc00"}]}]}]} x', "text that is not JSON"),
    ],
)
def test_an_export_that_is_not_otlp_s_anywhere_is_still_refused_whole_and_said_why(tmp_path, text, why):
    path = tmp_path / "bad.otlp.json"
    path.write_text(text)
    (file,) = workbench.validate([path]).files
    assert (file.records, file.rejected) == (0, 1)
    assert [v.rule for v in file.violations] == ["not_an_otlp_export"] and why in file.violations[0].message


def test_a_json_lines_otlp_json_is_read_line_by_line_as_the_jsonl_formats_are(tmp_path):
    path = tmp_path / "traces.otlp.json"
    path.write_bytes((OTEL / "holdem_agents.otlp.jsonl").read_bytes() + b"not json\n")
    (file,) = workbench.validate([path]).files
    (lines,) = workbench.validate([OTEL / "holdem_agents.otlp.jsonl"]).files
    assert (file.records, file.rejected) == (lines.records, 1)
    assert file.violations[0].rule == "json_lines"


def test_an_export_of_a_source_of_many_decisions_is_cut_into_exports_the_ingest_reads_again(tmp_path, monkeypatch):
    db = tmp_path / "w.duckdb"
    workbench.ingest([decisions_log(tmp_path / "long.decisions.jsonl", 600)], db=db)
    monkeypatch.setattr(writer, "EXPORT_BYTES", 64 << 10)
    for name in ("out.otlp.jsonl", "out.otlp.json"):
        assert writer.export_otlp(tmp_path / name, db=db) == 600
        (back,) = workbench.ingest([tmp_path / name], db=tmp_path / f"{name}.duckdb").files
        assert (back.records, back.rejected) == (600, 0)
    lines = (tmp_path / "out.otlp.jsonl").read_bytes().splitlines()
    assert len(lines) > 5 and all(len(line) <= 64 << 10 for line in lines)
    spans = [
        span
        for line in lines
        for r in json.loads(line)["resourceSpans"]
        for s in r["scopeSpans"]
        for span in s["spans"]
    ]
    assert len({span["spanId"] for span in spans}) == 600
    one = json.loads((tmp_path / "out.otlp.json").read_text())
    assert [span for r in one["resourceSpans"] for s in r["scopeSpans"] for span in s["spans"]] == spans


def test_an_export_of_12000_decisions_of_one_source_round_trips(tmp_path):
    db = tmp_path / "h.duckdb"
    workbench.ingest([decisions_log(tmp_path / "e.decisions.jsonl", 12_000)], db=db)
    out = tmp_path / "h.otlp.jsonl"
    assert writer.export_otlp(out, db=db) == 12_000
    assert max(len(line) for line in out.read_bytes().splitlines()) <= MAX_LINE_BYTES
    (back,) = workbench.ingest([out], db=tmp_path / "rt.duckdb").files
    assert (back.records, back.rejected) == (12_000, 0)
    query = "SELECT model, valid, agent_id, count(*) FROM decisions GROUP BY ALL ORDER BY ALL"
    with duckdb.connect(str(db), read_only=True) as a, duckdb.connect(str(tmp_path / "rt.duckdb"), read_only=True) as b:
        assert a.sql(query).fetchall() == b.sql(query).fetchall()


def peak_mb(code: str) -> float:
    done = subprocess.run(
        [sys.executable, "-c", code + "\n" + PRINT_PEAK_KB],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return int(done.stdout.split()[-1]) / 1024


@pytest.mark.slow
def test_the_export_s_peak_memory_grows_only_with_duckdb_s_sort_of_the_decisions(tmp_path):
    small, large = tmp_path / "small.duckdb", tmp_path / "large.duckdb"
    workbench.ingest([decisions_log(tmp_path / "s.decisions.jsonl", 20_000)], db=small)
    workbench.ingest([decisions_log(tmp_path / "l.decisions.jsonl", 100_000)], db=large)
    code = "from workbench.otel.writer import export_otlp; export_otlp({out!r}, db={db!r})"
    small_mb = peak_mb(code.format(out=str(tmp_path / "s.otlp.jsonl"), db=str(small)))
    large_mb = peak_mb(code.format(out=str(tmp_path / "l.otlp.jsonl"), db=str(large)))
    # Everything held: about 6.5 kB a decision (520 MB more for the larger). Streamed, the
    # sort's few hundred bytes a decision.
    assert (large_mb - small_mb) * 1024 / 80_000 < 1.5, (small_mb, large_mb)


@pytest.mark.slow
def test_ingesting_an_otlp_json_takes_the_memory_its_spans_as_jsonl_take(tmp_path):
    db = tmp_path / "w.duckdb"
    workbench.ingest([decisions_log(tmp_path / "e.decisions.jsonl", 60_000)], db=db)
    lines = tmp_path / "t.otlp.jsonl"
    writer.export_otlp(lines, db=db)
    one = as_one_export([lines], tmp_path / "t.otlp.json")
    code = "import workbench; assert workbench.ingest([{path!r}], db={db!r}).files[0].rejected == 0"
    as_lines = peak_mb(code.format(path=str(lines), db=str(tmp_path / "lines.duckdb")))
    as_one = peak_mb(code.format(path=str(one), db=str(tmp_path / "one.duckdb")))
    # Read whole: about 12 times the file (50 MB here) on top.
    assert as_one < 1.25 * as_lines, (as_lines, as_one)
