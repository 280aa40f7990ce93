"""Finding records (`analysis.records`) in a database of a million Damage events, each
search against a baseline measured in the same run:
  - a filter (none, a model, invalid ones, a rule, a game) against the plainest DuckDB
    query of one table that answers part of it (the floor: no join, no raw text);
  - a search of the words of the records against `grep -n -i` over the same file (what
    researchers do today).
The log is made of the real Damage simulator's logs (../shared/corpus/damage) repeated
under fresh game ids, not of the workbench's own generator.

    python -m bench.records [--events 1000000] [--runs 3]
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

import workbench
from bench.common import WORK, best_of, damage_log, machine
from workbench import analysis, connection


def database(events: int) -> tuple[Path, Path]:
    log = damage_log(events)
    db = WORK / f"records_{events}.duckdb"
    if not db.exists():
        print(f"  ingesting {log.name} once (kept in {db})", flush=True)
        report = workbench.ingest([log], db=db.with_suffix(".tmp"))
        assert not report.failed, report.files[0].message
        db.with_suffix(".tmp").rename(db)
    return log, db


def main(argv=None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    log, db = database(args.events)
    con = connection.connect(db, read_only=True)
    model, game, rule = con.execute("""
        SELECT (SELECT model FROM decisions WHERE model IS NOT NULL LIMIT 1),
               (SELECT game_id FROM damage_events LIMIT 1), (SELECT min(rule) FROM violations)
    """).fetchall()[0]
    events = con.execute("SELECT count(*) FROM damage_events").fetchall()[0][0]
    print(f"finding records among {events:,} Damage events on {machine()}; best of {args.runs}")
    floor = "SELECT * FROM {} ORDER BY source_id, {} LIMIT 200"
    searches = {
        "every record, first 200": ({}, lambda: con.execute(floor.format("damage_events", "seq")).fetchall()),
        "a model's decisions": (
            {"model": model},
            lambda: con.execute(
                "SELECT * FROM decisions WHERE model = ? ORDER BY source_id, locator LIMIT 200", [model]
            ).fetchall(),
        ),
        "invalid records": (
            {"valid": False},
            lambda: con.execute(
                "SELECT * FROM decisions WHERE NOT valid ORDER BY source_id, locator LIMIT 200"
            ).fetchall(),
        ),
        "a rule": (
            {"rule": rule},
            lambda: con.execute(
                "SELECT * FROM violation_lines WHERE rule = ? ORDER BY source_id, line LIMIT 200", [rule]
            ).fetchall(),
        ),
        "a game": (
            {"game_id": game},
            lambda: con.execute(
                "SELECT * FROM damage_events WHERE game_id = ? ORDER BY seq LIMIT 200", [game]
            ).fetchall(),
        ),
        "words (present)": ({"text": "showdown"}, lambda: _grep("showdown", log)),
        "words (absent)": ({"text": "no such words"}, lambda: _grep("no such words", log)),
    }
    analysis.records(con, text="warm the file's index")  # the file is hashed and indexed once per version
    ratios = {}
    for name, (filters, baseline) in searches.items():
        mine = best_of(args.runs, lambda filters=filters: analysis.records(con, **filters))
        base = best_of(args.runs, baseline)
        ratios[name] = mine / base
        print(f"  {name:26} records {mine:6.3f} s   baseline {base:6.3f} s   ratio {mine / base:6.2f}")
    con.close()
    print(f"  reproduce: python -m bench.records --events {args.events} --runs {args.runs}")
    return ratios


def _grep(words: str, log: Path) -> None:
    # its output read, as a reader would (GNU grep stops at the first match when writing to /dev/null)
    subprocess.run(["grep", "-n", "-i", "-F", words, str(log)], capture_output=True, check=False)


if __name__ == "__main__":
    main()
