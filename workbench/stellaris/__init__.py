"""Stellaris: real saves (`*.sav`), the save extractor's tool outputs (`get_<tool>.json`,
`*.briefing.json`) and the companion's SQLite history (`*.db` with `snapshots`),
checked against seed 000 and loaded into one economy over time."""

from pathlib import Path

from workbench.formats import Format, generated_by
from workbench.stellaris import extractor, history, reader, tables
from workbench.stellaris.summary import summary


def claims(path: Path, head: bytes) -> bool:
    suffix = path.suffix.lower()
    if suffix == ".sav":
        return True
    if suffix == ".json":
        return extractor.claims(path)
    if suffix in history.SUFFIXES:
        return history.claims(path, head)
    return False


FORMAT = Format(
    name="stellaris",
    tables=tables.TABLES,
    claims=claims,
    load=reader.load,
    describe="Stellaris saves (*.sav), extractor outputs (get_<tool>.json, *.briefing.json), history (*.db)",
    summary=summary,
    generate=generated_by("workbench.stellaris.synth"),
)
