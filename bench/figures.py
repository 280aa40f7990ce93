"""How long the standard figures take to export, per figure and format, from real data
(the Damage simulator's logs and the Stellaris save of ../shared/corpus), against the
exporter's own floor measured in the same run: a one-point chart saved to the same format.
Each figure is its Vega-Lite spec, as `workbench plot` writes it. A figure of a game the
corpus has no logs of (EC4X, Agent Arena) is said and not drawn.

    python -m bench.figures
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import workbench
from bench.common import CORPUS, machine
from workbench import connection, plots
from workbench.errors import WorkbenchError
from workbench.plots.vega import SCHEMA_URL

SUFFIXES = (".png", ".svg", ".pdf", ".html")


def floor(folder: Path) -> dict[str, float]:
    """Seconds to save a one-point chart, per suffix (after one warm-up)."""
    chart = {
        "$schema": SCHEMA_URL,
        "data": {"values": [{"x": 1}]},
        "mark": "point",
        "encoding": {"x": {"field": "x", "type": "quantitative"}},
    }
    times = {}
    for suffix in SUFFIXES:
        plots.save(chart, folder / f"warm{suffix}")
        start = time.perf_counter()
        plots.save(chart, folder / f"floor{suffix}")
        times[suffix] = time.perf_counter() - start
    return times


def main(argv=None) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "real.duckdb"
        workbench.ingest([CORPUS / "damage", CORPUS / "stellaris"], db=db)
        base = floor(Path(tmp))
        con = connection.connect(db, read_only=True)
        try:
            results = {}
            print(f"figure export on {machine()} (real corpus); floor = a one-point chart")
            print("  floor: " + ", ".join(f"{s} {base[s]:.2f} s" for s in SUFFIXES))
            for kind in plots.FIGURES:
                start = time.perf_counter()
                try:
                    chart = plots.figure_spec(kind, con)
                except WorkbenchError as exc:  # the real corpus has no EC4X or Arena logs
                    print(f"  {kind}: not drawn ({exc})")
                    continue
                built = time.perf_counter() - start
                for suffix in SUFFIXES:
                    start = time.perf_counter()
                    plots.save(chart, Path(tmp) / f"{kind}{suffix}")
                    results[f"{kind}{suffix}"] = built + time.perf_counter() - start
                print(
                    f"  {kind}: "
                    + ", ".join(
                        f"{s} {results[kind + s]:.2f} s ({results[kind + s] / base[s]:.1f}x floor)" for s in SUFFIXES
                    )
                )
        finally:
            con.close()
    print("  reproduce: python -m bench.figures")
    return results


if __name__ == "__main__":
    main()
