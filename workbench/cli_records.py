"""The commands of `workbench` that show the records behind a number: records (filtered,
with their raw text) and side-by-side (two models on the turns they shared). Each takes
the parsed arguments (`workbench.cli`), calls the package, prints, and returns the exit
code."""

from __future__ import annotations

import sys

from workbench.cli_io import database, printed_as_data
from workbench.errors import WorkbenchError

# In a terminal a record's raw text is cut here; --json and --csv give it whole.
SHOWN_CHARS = 300


def records_command(args) -> int:
    from workbench.records import count_records, records

    limit = _row_limit(args.limit)
    filters = {
        "format": args.format,
        "model": args.model,
        "game_id": args.game,
        "rule": args.rule,
        "severity": args.severity,
        "valid": args.valid,
        "outcome": args.outcome,
        "text": args.text,
        "aliases": args.aliases,
    }
    with database(args) as con:
        # one more than shown: whether there are more to tell of
        found = records(con, limit=None if limit is None else limit + 1, **filters)
        if found.is_empty():
            print(f"workbench: no record matches{_unknown_name(con, args)}", file=sys.stderr)
        if args.text is not None:
            _say_unsearched(con, args.format)
        total = count_records(con, **filters) if limit is not None and found.height > limit else None
    if limit is not None and total is not None:  # on stderr, so that JSON and CSV on stdout stay whole
        print(f"(the first {limit:,} of {total:,} records; --limit 0 shows all)", file=sys.stderr)
        found = found.head(limit)
    if printed_as_data(found.drop("source_id"), args):
        return 0
    for row in found.iter_rows(named=True):
        where = _place(row["path"], row["locator"])
        about = [row["format"], *(f"{key} {row[key]}" for key in ("game_id", "turn", "model") if row[key] is not None)]
        if row["outcome"] == "failed":
            about.append(f"FAILED (no answer: {row['failure']})")
        elif row["valid"] is not None:
            about.append("valid" if row["valid"] else "INVALID")
        if row["rules"]:  # with the severities found, so an `info` finding does not read as the failure
            about.append(f"breaks {', '.join(row['rules'])} ({'/'.join(row['severities'])})")
        print(f"{where}: {'; '.join(about)}")
        print(f"    {_shown(row['raw'], row['line'])}")
    return 0


def _say_unsearched(con, format: str | None) -> None:
    """One line on stderr naming the files a --text search passed over, if any."""
    from workbench.records import unsearched

    passed = unsearched(con, format)
    if passed:
        print(
            f"workbench: {len(passed)} file{'s' if len(passed) != 1 else ''} not searched, no longer holding what "
            f"was ingested (changed, gone, or not a regular file): {', '.join(passed[:3])}"
            f"{', ...' if len(passed) > 3 else ''}",
            file=sys.stderr,
        )


# What `workbench records` checks a name against when nothing matches: the names the
# database knows.
KNOWN_NAMES = {
    "format": "SELECT DISTINCT format FROM sources",
    "model": "SELECT DISTINCT model FROM decisions",
    "rule": "SELECT DISTINCT rule FROM violations",
}


def _unknown_name(con, args) -> str:
    """`; no model 'x' here (...)` for the first filter that names nothing the database
    knows (an alias, and the name it maps, are names too), with the name that differs
    only in case; else ``."""
    from workbench.naming import read_aliases

    for option, query in KNOWN_NAMES.items():
        given = getattr(args, option)
        if given is None:
            continue
        known = {name for (name,) in con.execute(query).fetchall() if name is not None}
        if option == "model":
            aliases = read_aliases(args.aliases)
            known |= set(aliases) | set(aliases.values())
        if given in known:
            continue
        alike = [name for name in known if name.lower() == given.lower()]
        if alike:
            hint = f"did you mean {alike[0]!r}?"
        elif option == "model":
            hint = f"{len(known)} known: `workbench scorecard` lists them"
        else:
            hint = f"known: {', '.join(sorted(known)[:8])}{', ...' if len(known) > 8 else ''}"
        return f"; no {option} {given!r} here ({hint})"
    return ""


def _shown(raw: str | None, line: int | None) -> str:
    if raw is None and line is None:
        return "(no raw text: a part of a file that has no lines)"
    if raw is None:
        return "(raw text gone: the file no longer holds what was ingested)"
    if len(raw) <= SHOWN_CHARS:
        return raw
    return f"{raw[:SHOWN_CHARS]}… ({len(raw) - SHOWN_CHARS} more characters; --json)"


def side_by_side_command(args) -> int:
    from workbench.records import side_by_side

    limit = _row_limit(args.limit)
    a, b = args.models
    with database(args) as con:
        paired = side_by_side(con, a, b, format=args.format, aliases=args.aliases)
        if paired.is_empty():
            _why_no_turn_is_shared(con, args)
    turns = paired.select("format", "game_id", "turn", "disagree").unique(maintain_order=True)
    shared, disagree = turns.height, int(turns["disagree"].sum() or 0)
    if limit is not None and shared > limit:
        paired = paired.join(
            turns.head(limit).drop("disagree"), on=["format", "game_id", "turn"], how="semi", maintain_order="left"
        )
        print(f"(the first {limit} of {shared} turns; --limit 0 shows all)", file=sys.stderr)
    if printed_as_data(paired, args):
        return 0
    print(f"{a} and {b}: {shared} shared turns, {disagree} where one's answers were all valid and the other's not")
    for (fmt, game, turn, differ), rows in paired.group_by(
        "format", "game_id", "turn", "disagree", maintain_order=True
    ):
        print(f"{fmt} {game} turn {turn}{': DISAGREE' if differ else ''}")
        for row in rows.iter_rows(named=True):
            for side, model in (("a", a), ("b", b)):
                if row[f"locator_{side}"] is not None:
                    print(f"    {_decision_said(row, side, model)}")
    return 0


def _decision_said(row: dict, side: str, model: str) -> str:
    """One side of a side-by-side row in words: round, model, seat, action, outcome, place."""
    rules = row[f"rules_{side}"]
    verdict = {"failed": "FAILED (no answer)", "invalid": "INVALID"}.get(row[f"outcome_{side}"], "valid")
    verdict += f" ({', '.join(rules)})" if rules else ""
    seat = f" as {row[f'agent_id_{side}']}" if row[f"agent_id_{side}"] is not None else ""
    round_ = f"{row['round']}: " if row["round"] is not None else ""
    action = row[f"action_{side}"] or "(no action)"
    return f"{round_}{model}{seat}: {action}: {verdict} at {_place(row[f'path_{side}'], row[f'locator_{side}'])}"


def _why_no_turn_is_shared(con, args) -> None:
    """One line on stderr: which model has no decision here, or that they never met."""
    from workbench.records import records

    for model in args.models:
        if records(con, format=args.format, model=model, limit=1, aliases=args.aliases).is_empty():
            print(
                f"workbench: no record of model {model!r} here{f' in format {args.format}' if args.format else ''}; "
                f"`workbench scorecard` lists the models",
                file=sys.stderr,
            )
            return
    print("workbench: the two models never decided the same turn of the same game", file=sys.stderr)


def _place(path: str, locator: str | None) -> str:
    """`path:N` for line N of a file, else the path and where in it."""
    if locator and locator.startswith("line ") and locator[5:].isdigit():
        return f"{path}:{locator[5:]}"
    return f"{path} ({locator})" if locator else path


# The most rows a --limit may ask for (one more is asked of the database, a BIGINT).
MOST_ROWS = 2**63 - 2


def _row_limit(limit: int) -> int | None:
    if limit < 0:
        raise WorkbenchError(f"--limit must be 0 (all) or more, not {limit}")
    if limit > MOST_ROWS:
        raise WorkbenchError(f"--limit must be at most {MOST_ROWS} (or 0 for all), not {limit}")
    return limit or None
