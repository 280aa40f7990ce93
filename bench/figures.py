"""How long the standard figures take to export, per figure and format, on the demo
database (built in a temporary folder if needed).

    python -m bench.figures
"""

from __future__ import annotations

import io
import tempfile
import time
from pathlib import Path

from bench.common import machine
from workbench import catalog, plots
from workbench.demo import run_demo

SUFFIXES = (".png", ".svg", ".pdf", ".html")


def main(argv=None) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        db = run_demo(Path(tmp) / "data", out=io.StringIO(), progress=False)
        con = catalog.connect(db, read_only=True)
        try:
            results = {}
            print(f"figure export on {machine()} (demo database)")
            for kind in plots.FIGURES:
                start = time.perf_counter()
                chart = plots.figure(kind, con)
                built = time.perf_counter() - start
                for suffix in SUFFIXES:
                    start = time.perf_counter()
                    plots.save(chart, Path(tmp) / f"{kind}{suffix}")
                    results[f"{kind}{suffix}"] = built + time.perf_counter() - start
                print("  " + ", ".join(f"{kind}{s} {results[kind + s]:.2f} s" for s in SUFFIXES))
        finally:
            con.close()
    print("  reproduce: python -m bench.figures")
    return results


if __name__ == "__main__":
    main()
