"""otel: OpenTelemetry traces of LLM agents as OTLP/JSON (`*.otlp.jsonl`, a Collector
file exporter's lines; `*.otlp.json`, one export), checked against the GenAI semantic
conventions 1.41.0. Every span with a `gen_ai.operation.name` is a decision."""

from workbench.formats import Format
from workbench.otel import reader, tables

FORMAT = Format(
    name="otel",
    tables=tables.TABLES,
    claims=reader.claims,
    load=reader.load,
    line_based=reader.reads_lines,
    describe="OpenTelemetry GenAI traces, OTLP/JSON (*.otlp.jsonl, *.otlp.json)",
    locators=(("otel_spans", "'span ' || span_id"),),
)
