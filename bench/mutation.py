"""Mutation testing of the rule modules, the conclusions and the ingest core, with mutmut
(not run by CI).

    pip install 'mutmut>=3.8,<4'            # once, in the project's environment
    python -m bench.mutation                # every module below
    python -m bench.mutation ec4x.orders    # one module (or several); names as listed by --list
    python -m bench.mutation --report       # the scores of the last runs, without running
    python -m bench.mutation --survivors ec4x.orders   # after adding tests: only the last survivors again
    python -m bench.mutation --sample 300 comparison   # 300 mutants drawn at random (seed 0)

mutmut's configuration is `[tool.mutmut]` in pyproject.toml: which files are mutated and
which tests may kill a mutant. mutmut copies the project to `mutants/` (git-ignored),
runs the selected tests once to learn which tests reach which function, then runs, for
each mutant, only the tests that reach the mutated function. Results are cached in
`mutants/`: a second run only checks mutants of functions that changed.

A function that runs while its module is imported (a validator factory such as
`seed_enum`, a lookup table built at module level) cannot be mutated in mutmut's forked
workers: the module was imported, unmutated, before the fork. Its mutants would all
"survive". Each such survivor is therefore checked again in a fresh interpreter that
imports the module with the mutant active and runs the tests of the module's format
(`--no-recheck` skips this). The score is killed / total per module, where killed
includes timeouts and mutants killed in the fresh-interpreter check.

`--sample N` runs N of a module's mutants drawn at random (a seeded draw, so a rerun
checks the same ones): on two cores a module of a thousand mutants whose tests build
databases takes hours. The score of a sample is an estimate and is printed with its
Wilson 95% interval; `--report` scores the last sample while one is recorded.
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MUTANTS = ROOT / "mutants"

# A test that runs the command line in a child process checks the unmutated code: it only
# costs time there (25 s a mutant).
CONCLUSIONS = (
    "tests/test_stats.py",
    "tests/test_comparison.py",
    "tests/test_cli_conclusions.py",
    "--deselect=tests/test_cli_conclusions.py::"
    "test_a_prices_file_over_a_megabyte_a_fifo_or_a_device_is_refused_before_reading",
)
RATINGS = ("tests/damage/test_ratings.py", "tests/damage/test_plackett_luce.py")
OUTCOME_TESTS = ("tests/test_outcomes.py",)
OTEL_ANSWERS = ("tests/otel/test_answers.py",)
PLAY = (
    "tests/damage/test_cards.py",
    "tests/damage/test_deals.py",
    "tests/damage/test_quality.py",
    "tests/damage/test_play_state.py",
    "tests/damage/test_play_real.py",
    "tests/damage/test_attack_effects.py",
    "tests/damage/test_play_edges.py",
)

# module -> (file, mutant-name patterns, tests of its format for the fresh-interpreter check)
# The modules in OWN_TESTS are run with only those tests selected (`--own-tests`): the
# conclusions are reached by the report's and the demo's slow tests too, which would
# run for every mutant while the statistics' own tests are the ones that check them.
MODULES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "damage.models": ("workbench/damage/models.py", ("workbench.damage.models.*",), ("tests/damage",)),
    "damage.drift": ("workbench/damage/drift.py", ("workbench.damage.drift.*",), ("tests/damage",)),
    "ec4x.orders": ("workbench/ec4x/orders.py", ("workbench.ec4x.orders.*",), ("tests/ec4x",)),
    "ec4x.rules": ("workbench/ec4x/rules.py", ("workbench.ec4x.rules.*",), ("tests/ec4x",)),
    "ec4x.trace": ("workbench/ec4x/trace.py", ("workbench.ec4x.trace.*",), ("tests/ec4x",)),
    "arena.models": ("workbench/arena/models.py", ("workbench.arena.models.*",), ("tests/arena",)),
    "gm.rules": ("workbench/gm/rules.py", ("workbench.gm.rules.*",), ("tests/gm",)),
    "stellaris.invariants": (
        "workbench/stellaris/invariants.py",
        ("workbench.stellaris.invariants.*",),
        ("tests/stellaris",),
    ),
    "stellaris.findings": (
        "workbench/stellaris/findings.py",
        ("workbench.stellaris.findings.*",),
        ("tests/stellaris",),
    ),
    # save.py reads the save; only its budget/balance check is a rule.
    "stellaris.save": (
        "workbench/stellaris/save.py",
        (
            "workbench.stellaris.save.xǁBudgetǁ*",
            "workbench.stellaris.save.x__sum_categories__mutmut_*",
            "workbench.stellaris.save.x__stockpiles__mutmut_*",
        ),
        ("tests/stellaris",),
    ),
    # The conclusions: intervals, tests, verdicts, costs, ratings.
    "stats.shares": ("workbench/stats/shares.py", ("workbench.stats.shares.*",), CONCLUSIONS),
    "stats.clustering": ("workbench/stats/clustering.py", ("workbench.stats.clustering.*",), CONCLUSIONS),
    "stats.differences": ("workbench/stats/differences.py", ("workbench.stats.differences.*",), CONCLUSIONS),
    "stats.planning": ("workbench/stats/planning.py", ("workbench.stats.planning.*",), CONCLUSIONS),
    "stats.anytime": ("workbench/stats/anytime.py", ("workbench.stats.anytime.*",), CONCLUSIONS),
    "comparison.clusters": ("workbench/comparison/clusters.py", ("workbench.comparison.clusters.*",), CONCLUSIONS),
    "comparison.scorecards": (
        "workbench/comparison/scorecards.py",
        ("workbench.comparison.scorecards.*",),
        CONCLUSIONS,
    ),
    "comparison.pairs": ("workbench/comparison/pairs.py", ("workbench.comparison.pairs.*",), CONCLUSIONS),
    "comparison.plans": ("workbench/comparison/plans.py", ("workbench.comparison.plans.*",), CONCLUSIONS),
    "prices": ("workbench/prices.py", ("workbench.prices.*",), CONCLUSIONS),
    "damage.ratings": ("workbench/damage/ratings.py", ("workbench.damage.ratings.*",), RATINGS),
    "damage.plackett_luce": ("workbench/damage/plackett_luce.py", ("workbench.damage.plackett_luce.*",), RATINGS),
    # What a decision is: its outcome, and what an OpenTelemetry span says its call answered.
    "outcomes": ("workbench/outcomes.py", ("workbench.outcomes.*",), OUTCOME_TESTS),
    "otel.answers": ("workbench/otel/answers.py", ("workbench.otel.answers.*",), OTEL_ANSWERS),
    "otel.dialects": ("workbench/otel/dialects.py", ("workbench.otel.dialects.*",), OTEL_ANSWERS),
    # How well a Damage hand was played: cards, deals, the judged decisions, their summaries.
    "damage.cards": ("workbench/damage/cards.py", ("workbench.damage.cards.*",), PLAY),
    "damage.deals": ("workbench/damage/deals.py", ("workbench.damage.deals.*",), PLAY),
    "damage.play": ("workbench/damage/play.py", ("workbench.damage.play.*",), PLAY),
    "damage.quality": ("workbench/damage/quality.py", ("workbench.damage.quality.*",), PLAY),
    "jsonl": ("workbench/jsonl.py", ("workbench.jsonl.*",), ()),
    "ingest": ("workbench/ingestion.py", ("workbench.ingestion.*",), ()),
    "ingest.source_rows": ("workbench/source_rows.py", ("workbench.source_rows.*",), ()),
    "ingest.file_choice": ("workbench/file_choice.py", ("workbench.file_choice.*",), ()),
}

OWN_TESTS = {
    *(f"stats.{m}" for m in ("shares", "clustering", "differences", "planning", "anytime")),
    *(f"comparison.{m}" for m in ("clusters", "scorecards", "pairs", "plans")),
    "prices",
    "damage.ratings",
    "damage.plackett_luce",
    "outcomes",
    "otel.answers",
    "otel.dialects",
    "damage.cards",
    "damage.deals",
    "damage.play",
    "damage.quality",
}

TIMEOUTS = {36, -24, 24, 152, 255}
KILLED = {1, 3, *TIMEOUTS}  # test failure, pytest internal error, timeouts
# In the fresh-interpreter check, the unmutated run must pass (checked first), so any
# failure counts: 1 a test failed, 2 or 4 the mutated module could not even be imported
# (collection error, conftest import error), 36 timeout. 5 (no tests) is not a kill.
RECHECK_NOT_KILLED = {0, 5}
RECHECK_TIMEOUT = 600


def _selection() -> list[str]:
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]
    return list(config["pytest_add_cli_args_test_selection"])


@contextlib.contextmanager
def _selected(tests: tuple[str, ...] | None):
    """mutmut reads its test selection from pyproject.toml: for the block, only `tests`
    (None: as configured); the file is put back as it was whatever happens."""
    path = ROOT / "pyproject.toml"
    original = path.read_text()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a kill, too, puts the file back
    if tests:
        start = original.index("pytest_add_cli_args_test_selection = [")
        end = original.index("]", start) + 1
        listed = ", ".join(f'"{test}"' for test in tests)
        path.write_text(original[:start] + f"pytest_add_cli_args_test_selection = [{listed}]" + original[end:])
    try:
        yield
    finally:
        path.write_text(original)


def _results(module: str) -> dict[str, int | None]:
    path, patterns, _ = MODULES[module]
    meta = MUTANTS / (path + ".meta")
    if not meta.exists():
        return {}
    codes = json.loads(meta.read_text())["exit_code_by_key"]
    return {name: code for name, code in codes.items() if any(fnmatch.fnmatchcase(name, p) for p in patterns)}


def _samples_path() -> Path:
    return MUTANTS / "samples.json"


def _samples() -> dict[str, list[str]]:
    path = _samples_path()
    return json.loads(path.read_text()) if path.exists() else {}


def _draw(module: str, size: int, seed: int) -> list[str]:
    """`size` of the module's mutant names, drawn with `seed`, recorded for the report."""
    names = sorted(_results(module))
    if not names:  # mutmut has not made the mutants yet: a run that matches none makes them
        subprocess.call(
            [sys.executable, "-m", "mutmut", "run", f"{MODULES[module][1][0]}__none__"], stdout=subprocess.DEVNULL
        )
        names = sorted(_results(module))
    drawn = sorted(random.Random(seed).sample(names, min(size, len(names))))
    samples = _samples()
    samples[module] = drawn
    _samples_path().write_text(json.dumps(samples, indent=1))
    return drawn


def _rechecked_path() -> Path:
    return MUTANTS / "rechecked.json"


def _rechecked() -> dict[str, int]:
    path = _rechecked_path()
    return json.loads(path.read_text()) if path.exists() else {}


def _recheck(module: str, jobs: int) -> None:
    """Survivors again, each in a fresh interpreter that imports the module mutated."""
    _, _, tests = MODULES[module]
    done = _rechecked()
    # survivors, and timeouts: a forked worker can hang for reasons of its own (threads
    # started before the fork), so a timeout is only a kill if a fresh run agrees
    survivors = [
        name for name, code in _results(module).items() if (code == 0 or code in TIMEOUTS) and name not in done
    ]
    if not survivors:
        return
    args = list(tests) if tests else _selection()
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-n", "0", *args]
    clean = subprocess.call(
        cmd,
        cwd=MUTANTS,
        env={**os.environ, "MUTANT_UNDER_TEST": ""},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    if clean != 0:
        print(
            f"{module}: the unmutated tests fail in mutants/ (exit {clean}); survivors not checked again",
            file=sys.stderr,
        )
        return
    print(f"{module}: checking {len(survivors)} survivors again in a fresh interpreter", flush=True)
    running: list[tuple[str, subprocess.Popen]] = []

    def reap(block: bool) -> None:
        for item in list(running):
            name, proc = item
            if block or proc.poll() is not None:
                try:
                    code = proc.wait(timeout=RECHECK_TIMEOUT)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    code = 36
                done[name] = code
                running.remove(item)
                block = False
        _rechecked_path().write_text(json.dumps(done, indent=1, sort_keys=True))

    for name in survivors:
        while len(running) >= jobs:
            reap(block=True)
        env = {**os.environ, "MUTANT_UNDER_TEST": name, "PYTHONDONTWRITEBYTECODE": "1"}
        running.append(
            (name, subprocess.Popen(cmd, cwd=MUTANTS, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        )
    while running:
        reap(block=True)


def _forget_rechecks(names) -> None:
    done = _rechecked()
    for name in names:
        done.pop(name, None)
    if _rechecked_path().exists():
        _rechecked_path().write_text(json.dumps(done, indent=1, sort_keys=True))


def score(module: str) -> tuple[int, int, list[str]]:
    """(killed, total checked, survivors) of a module from the last runs."""
    rechecked = _rechecked()
    results = _results(module)
    if module in _samples():
        results = {name: results.get(name) for name in _samples()[module]}
    killed, checked, survivors = 0, 0, []
    for name, code in results.items():
        if code is None:  # not checked yet
            continue
        checked += 1
        if name in rechecked:
            dead = rechecked[name] not in RECHECK_NOT_KILLED
        else:
            dead = code in KILLED
        if dead:
            killed += 1
        else:
            survivors.append(name)
    return killed, checked, sorted(survivors)


def report(modules: list[str], seconds: dict[str, float] | None = None) -> None:
    print(f"{'module':24} {'killed':>7} {'total':>6} {'score':>7} {'unchecked':>9}  {'time':>6}")
    for module in modules:
        killed, total, survivors = score(module)
        sample = _samples().get(module)
        codes = _results(module)
        unchecked = sum(codes.get(name) is None for name in (sample or codes))
        pct = f"{100 * killed / total:.1f}%" if total else "-"
        took = f"{seconds[module]:.0f}s" if seconds and module in seconds else ""
        print(f"{module:24} {killed:>7} {total:>6} {pct:>7} {unchecked:>9}  {took:>6}")
        if sample and total:
            from workbench.stats import wilson

            low, high = wilson(killed, total)
            print(
                f"  a sample of {len(sample)} of its {len(codes)} mutants: "
                f"95% interval of the score {100 * low:.1f}-{100 * high:.1f}%"
            )
    for module in modules:
        for name in score(module)[2]:
            print(f"  survived: {name}   (mutmut show {name})")


def _patterns(module: str, ns: argparse.Namespace) -> tuple[str, ...]:
    """The mutants to run: a drawn sample, the last survivors, or all (which ends a sample)."""
    if ns.sample:
        return tuple(_draw(module, ns.sample, ns.seed))
    if ns.survivors:
        return tuple(score(module)[2])
    samples = _samples()
    if samples.pop(module, None) is not None:
        _samples_path().write_text(json.dumps(samples, indent=1))
    return MODULES[module][1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.mutation", description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help="modules to run (default: all); see --list")
    parser.add_argument("--list", action="store_true", help="print the module names and exit")
    parser.add_argument("--report", action="store_true", help="print the scores of the last runs, run nothing")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="parallel workers (default: cores)")
    parser.add_argument(
        "--survivors",
        action="store_true",
        help="run again only the mutants that survived the last run (after adding tests)",
    )
    parser.add_argument("--no-recheck", action="store_true", help="skip the fresh-interpreter check of survivors")
    parser.add_argument(
        "--sample",
        type=int,
        metavar="N",
        help="run N of each module's mutants drawn at random (seeded); the score is an estimate",
    )
    parser.add_argument("--seed", type=int, default=0, help="the seed of --sample's draw (default 0)")
    ns = parser.parse_args(argv)
    if ns.list:
        print("\n".join(MODULES))
        return 0
    unknown = [m for m in ns.modules if m not in MODULES]
    if unknown:
        parser.error(f"unknown module {', '.join(unknown)}; one of {', '.join(MODULES)}")
    modules = ns.modules or list(MODULES)
    if not ns.report:
        try:
            import mutmut  # noqa: F401
        except ImportError:
            print("mutmut is not installed: pip install 'mutmut>=3.8,<4'", file=sys.stderr)
            return 2
    seconds: dict[str, float] = {}
    if not ns.report:
        os.chdir(ROOT)
        for module in modules:
            start = time.monotonic()
            with _selected(MODULES[module][2] if module in OWN_TESTS else None):
                patterns = _patterns(module, ns)
                if not patterns:
                    continue
                # verdicts of the fresh-interpreter check are redone for what runs again
                _forget_rechecks([n for n in _results(module) if any(fnmatch.fnmatchcase(n, p) for p in patterns)])
                code = subprocess.call(
                    [sys.executable, "-m", "mutmut", "run", "--max-children", str(ns.jobs), *patterns]
                )
            if code not in (0, None):
                print(f"mutmut run failed for {module} (exit {code})", file=sys.stderr)
                return code
            if not ns.no_recheck:
                _recheck(module, ns.jobs)
            seconds[module] = time.monotonic() - start
    report(modules, seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
