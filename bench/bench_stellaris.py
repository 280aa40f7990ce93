"""How long snapshot + resources extraction takes from a real save, against merely
unzipping its gamestate (the floor any reader pays). The aim is a ratio <= 4.0.

    python bench/bench_stellaris.py [SAVE.sav] [--runs N]

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
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workbench.stellaris.reader import read_save  # noqa: E402

CORPUS_SAVE = ROOT / ".." / "shared" / "corpus" / "stellaris" / "autosave_2312.01.01.sav"
AIM = 4.0


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("save", nargs="?", default=str(CORPUS_SAVE), help="a .sav file (default: the corpus save)")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    path = Path(args.save)
    if not path.exists():
        print(f"no save at {path}; pass one: python bench/bench_stellaris.py SAVE.sav")
        return 2
    extract(path)  # warm up imports and caches once
    unzip_times, extract_times = [], []
    for _ in range(args.runs):
        unzip_times.append(timed(unzip_only, path))
        extract_times.append(timed(extract, path))
    unzip, extraction = statistics.median(unzip_times), statistics.median(extract_times)
    ratio = extraction / unzip
    size = unzip_only(path)
    print(f"save:        {path.resolve()} (gamestate {size / 2**20:.1f} MB)")
    print(f"unzip only:  {unzip * 1000:8.1f} ms (median of {args.runs})")
    print(f"extraction:  {extraction * 1000:8.1f} ms (median of {args.runs}; snapshot + {extract(path)} resource rows)")
    print(f"ratio:       {ratio:8.2f} (aim <= {AIM})")
    print(f"reproduce:   python bench/bench_stellaris.py {args.save if args.save != str(CORPUS_SAVE) else ''}".rstrip())
    return 0 if ratio <= AIM else 1


if __name__ == "__main__":
    sys.exit(main())
