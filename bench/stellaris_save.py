"""How long snapshot + resources extraction takes from a real save, against merely
unzipping its gamestate (the floor any reader pays). The aim is a ratio <= 3.0.

    python -m bench.stellaris_save [SAVE.sav] [--runs N]

Both are timed in the same run, interleaved, and the medians compared. "Extraction"
is everything the ingest does short of writing to DuckDB: unzip with the safety caps,
locate and parse the needed sections, derive get_player_status / get_resources /
get_wars, validate them against the seed's models, check the invariants and build the
table rows.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import workbench
from bench.common import ROOT
from workbench.stellaris.reader import read_save

CORPUS_SAVE = ROOT / ".." / "shared" / "corpus" / "stellaris" / "autosave_2312.01.01.sav"
AIM = 3.0


def unzip_only(path: Path) -> int:
    with zipfile.ZipFile(path) as archive:
        return len(archive.read("gamestate"))


def extract(path: Path) -> int:
    extraction = read_save(path, series=path.parent.name)
    return len(extraction.resources)


def timed(action, path: Path) -> float:
    start = time.perf_counter()
    action(path)
    return time.perf_counter() - start


def ingest(path: Path) -> None:
    """The whole `workbench ingest` of the save into a fresh database."""
    with tempfile.TemporaryDirectory() as tmp:
        (file,) = workbench.ingest([path], db=Path(tmp) / "w.duckdb").files
        assert file.status == "ingested", file.message


def main(argv=None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("save", nargs="?", default=str(CORPUS_SAVE), help="a .sav file (default: the corpus save)")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args(argv)
    path = Path(args.save)
    if not path.exists():
        print(f"no save at {path}; pass one: python -m bench.stellaris_save SAVE.sav")
        return {}
    extract(path)  # warm up imports and caches once
    unzip_times, extract_times = [], []
    for _ in range(args.runs):
        unzip_times.append(timed(unzip_only, path))
        extract_times.append(timed(extract, path))
    unzip, extraction = statistics.median(unzip_times), statistics.median(extract_times)
    ratio = extraction / unzip
    whole = statistics.median(timed(ingest, path) for _ in range(3))
    size = unzip_only(path)
    print(f"save:        {path.resolve()} (gamestate {size / 2**20:.1f} MB)")
    print(f"unzip only:  {unzip * 1000:8.1f} ms (median of {args.runs})")
    print(f"extraction:  {extraction * 1000:8.1f} ms (median of {args.runs}; snapshot + {extract(path)} resource rows)")
    print(f"ratio:       {ratio:8.2f} (aim <= {AIM})")
    print(
        f"whole ingest into a new database (hashing, transaction, tables): {whole * 1000:.1f} ms, "
        f"ratio {whole / unzip:.2f}"
    )
    print(f"reproduce:   python -m bench.stellaris_save {args.save if args.save != str(CORPUS_SAVE) else ''}".rstrip())
    return {"unzip_s": unzip, "extract_s": extraction, "ratio": ratio, "ingest_ratio": whole / unzip}


if __name__ == "__main__":
    sys.exit(0 if main().get("ratio", AIM + 1) <= AIM else 1)
