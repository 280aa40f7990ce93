"""The commands of `workbench` that draw conclusions from the database (or the Parquet
tree on Spark): scorecard, compare, plan, ratings, quality, and the figures of plot and
report. Each takes the parsed arguments (`workbench.cli`), calls the package, prints,
and returns the exit code."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

from workbench.cli_io import database, printed_as_data, source, source_label, spreadsheet_safe
from workbench.errors import WorkbenchError
from workbench.outcomes import INGEST_DECISIONS
from workbench.terminal import escaped


def scorecard_command(args) -> int:
    from workbench.comparison import scorecard
    from workbench.connection import holder

    with source(args) as con:
        card = scorecard(
            con,
            by=[key.strip() for key in args.by.split(",") if key.strip()],
            prices=args.prices,
            aliases=args.aliases,
            cluster=_cluster(args),
            failures=args.failures,
        )
    if card.is_empty():
        raise WorkbenchError(f"no decisions in {holder(con)} to score; {INGEST_DECISIONS}")
    if printed_as_data(card, args):
        return 0
    for row in card.iter_rows(named=True):
        who = " ".join(str(row[key]) for key in card.columns[: card.columns.index("decisions")] if key != "model_from")
        line = f"{who}: {_validity_said(row)}"
        if row["failed"] and args.failures == "exclude":
            line += (
                f"; {row['failed']} failed call{'s' if row['failed'] != 1 else ''} left out "
                f"({row['failure_rate']:.1%} of calls, 95% CI {row['failure_low']:.1%}-{row['failure_high']:.1%})"
            )
        elif row["failed"]:
            line += f"; {row['failed']} of them failed calls, counted as invalid"
        if row["top_rule"]:
            line += f", most broken: {row['top_rule']}"
        if row.get("cost_per_decision") is not None:
            line += f", ${row['cost_per_decision']:.5f} per decision"
            if row["cost_per_valid"] is not None:
                line += f", ${row['cost_per_valid']:.5f} per valid one"
        print(line)
    if "model" in card.columns:  # its names are the models the aliases left
        _say_look_alikes(card["model"].unique().to_list(), None)
    return 0


def _validity_said(row: dict) -> str:
    """A scorecard row's validity with its interval, n and games, in words."""
    if not row["decisions"]:
        return "no answered decision"
    games = f"{row['games']} game" + ("s" if row["games"] != 1 else "")
    return (
        f"{row['validity']:.1%} valid (95% CI {row['ci_low']:.1%}-{row['ci_high']:.1%}, "
        f"n={row['decisions']} in {games}{', clustered' if row['ci_method'] != 'wilson' else ''})"
    )


def _cluster(args) -> str | None:
    return None if args.cluster == "none" else args.cluster


def compare_command(args) -> int:
    from workbench.comparison import compare_models, how_compared, sequential

    if len(args.models) not in (0, 2):
        raise WorkbenchError(f"compare takes two models or none, not {len(args.models)}")
    a, b = args.models or (None, None)
    with source(args) as con:
        run = sequential if args.sequential else compare_models
        found = run(
            con,
            a,
            b,
            format=args.format,
            aliases=args.aliases,
            all_pairs=args.all_pairs,
            cluster=_cluster(args),
            failures=args.failures,
        )
        names = _model_names(con)
    if args.json:
        print(json.dumps(found.to_dicts(), ensure_ascii=False, default=str))
        return 0
    if args.csv:
        print(spreadsheet_safe(found).write_csv(), end="")
        return 0
    if args.sequential:
        for row in found.iter_rows(named=True):
            print(f"{row['format']}: {row['a']} vs {row['b']}: {row['verdict']}")
        return 0
    for line in how_compared(found):
        print(line)
    for row in found.iter_rows(named=True):
        print(
            f"{row['format']}: {row['a']} vs {row['b']}: {row['verdict']} "
            f"[{row['method']}; p={row['p_value']:.3g}, Holm {row['p_holm']:.3g}]"
        )
    _say_look_alikes(names, args.aliases)
    return 0


def _model_names(con) -> list[str]:
    """Every name a decision gives its model (or agent), as written."""
    from workbench.connection import query_frame

    return query_frame(
        con,
        "SELECT DISTINCT coalesce(model, agent_id) AS name FROM decisions WHERE coalesce(model, agent_id) IS NOT NULL",
    )["name"].to_list()


def _say_look_alikes(names: list[str], aliases) -> None:
    """Names that look like one model (a dated snapshot and its base name), said once on
    stderr with the aliases that would merge them; nothing is merged unasked."""
    from workbench.naming import look_alike, look_alike_lines, read_aliases

    for line in look_alike_lines(look_alike(names, read_aliases(aliases))):
        print(f"workbench: {line}", file=sys.stderr)


# The most decisions per game a plan takes: no game has more.
MOST_PER_GAME = 1_000_000_000


def plan_command(args) -> int:
    if not args.difference > 0:  # a difference is one size; -0.1 is not taken for 0.1
        raise WorkbenchError(
            f"--difference must be more than 0 and less than 1 (0.05 for 5 points), not {args.difference:g}"
        )
    if args.per_game is not None and not args.per_game <= MOST_PER_GAME:
        raise WorkbenchError(f"--per-game must be from 1 to {MOST_PER_GAME:,} decisions, not {args.per_game:g}")

    given = {"validity": args.validity, "decisions_per_game": args.per_game, "icc": args.icc}
    if all(value is not None for value in given.values()) and args.db is None and args.parquet is None:
        return _planned(args, None, given)
    with source(args) as con:
        return _planned(args, con, given)


def _planned(args, con, given: dict) -> int:
    """The plan in words, or its numbers (--json, --csv)."""
    from workbench.comparison import plan_in_words, plan_numbers

    if args.json or args.csv:
        numbers = plan_numbers(
            con,
            args.difference,
            power=args.power,
            format=args.format,
            aliases=args.aliases,
            failures=args.failures,
            **given,
        )
        if args.json:
            print(json.dumps(numbers, indent=1))
        else:
            import polars as pl

            print(spreadsheet_safe(pl.DataFrame([numbers])).write_csv(), end="")
        return 0
    print(
        plan_in_words(
            con,
            args.difference,
            power=args.power,
            format=args.format,
            aliases=args.aliases,
            db_label=source_label(args) if con is not None else "the database",
            failures=args.failures,
            **given,
        )
    )
    return 0


MOST_RESAMPLES = 100_000


def ratings_command(args) -> int:
    from workbench.analysis import ratings
    from workbench.damage.ratings import ratings_in_words

    if not 1 <= args.bootstrap <= MOST_RESAMPLES:
        raise WorkbenchError(f"--bootstrap must be from 1 to {MOST_RESAMPLES:,} resamples, not {args.bootstrap}")
    with source(args) as con:
        table = ratings(con, by=args.by, bootstrap=args.bootstrap, aliases=args.aliases, failures=args.failures)
    if printed_as_data(table, args):
        return 0
    for line in ratings_in_words(table, args.by):
        print(line)
    return 0


# The mistakes a decision can be named by (damage.play.MISTAKES; kept here so that
# `--help` needs no poker library).
MISTAKE_NAMES = ("fold_free", "fold_ahead", "continue_behind", "showdown_long_shot")


def quality_command(args) -> int:
    from workbench.analysis import play_quality, play_summary

    with database(args) as con:
        if args.mistake:
            return _mistaken(play_quality(con, game_id=args.game), args)
        summary = play_summary(con, aliases=args.aliases, model=args.model, game_id=args.game)
    if printed_as_data(summary, args):
        return 0
    for row in summary.iter_rows(named=True):
        for line in _quality_said(row):
            print(line)
    return 0


def _quality_said(row: dict) -> list[str]:
    """A model's play in lines: its decisions, each mistake's and statistic's share with
    its interval and n, and luck apart from skill."""

    def share(name: str, label: str) -> str:
        if row[name] is None:
            return f"{label}: none to count"
        return (
            f"{label} {row[name]:.1%} (95% CI {_percent(row[name + '_low'])}-{_percent(row[name + '_high'])}, "
            f"n={row[name + '_n']})"
        )

    games = f"{row['games']} game" + ("s" if row["games"] != 1 else "")
    lines = [
        f"{row['model']}: {row['decisions']} betting decisions in {games}",
        "  mistakes: " + "; ".join(share(name, name) for name in MISTAKE_NAMES),
        "  play: "
        + "; ".join(
            share(name, label)
            for name, label in (
                ("vpip", "VPIP"),
                ("pfr", "PFR"),
                ("aggression", "raises of calls and raises"),
                ("fold_to_raise", "fold to a raise"),
                ("showdown_win_rate", "showdowns won"),
            )
        ),
    ]
    if row["showdowns"]:
        showdowns = f"{row['showdowns']} showdown" + ("s" if row["showdowns"] != 1 else "")
        lines.append(
            f"  luck apart: at {showdowns} won {row['chips_won']:+,.0f} chips, expected "
            f"{row['chips_expected']:+,.0f} from its win probabilities; lost {row['lives_lost']} "
            f"Lives, expected {row['lives_expected']:.1f}"
        )
    return lines


def _percent(value, places: int = 1) -> str:
    return "?" if value is None else f"{value:.{places}%}"


def _mistaken(frame, args) -> int:
    import polars as pl

    from workbench.naming import read_aliases

    names = read_aliases(args.aliases)
    frame = frame.filter(pl.col("mistake") == args.mistake).with_columns(
        model=pl.col("model").replace(names) if names else pl.col("model")
    )
    if args.model:
        frame = frame.filter(pl.col("model") == args.model)
    if printed_as_data(frame, args):
        return 0
    if frame.is_empty():
        print(f"no decision named {args.mistake}")
        return 0
    for row in frame.iter_rows(named=True):
        board = f" on {' '.join(row['board'])}" if row["board"] else ""
        where = escaped(f"{row['path']}:{row['line']}")
        print(
            f"{where}: "
            f"{row['game_id']} turn {row['turn']} {row['street']}, {escaped(row['player_id'])} "
            f"({escaped(row['model'] or 'no model')}) {row['action']} holding {' '.join(row['hand'])}{board}: "
            f"{row['to_call']} to call into {row['pot']} (pot odds {_percent(row['pot_odds'], 0)}), "
            f"win probability {_percent(row['win_probability'], 0)}"
        )
    return 0


def plot_command(args) -> int:
    from workbench.plots.render import IMAGES, Renderer

    # An image's renderer starts first, in a process of its own, while the chart is built.
    with Renderer() if Path(args.output).suffix.lower() in IMAGES else contextlib.nullcontext() as renderer:
        from workbench import connection, plots

        con = connection.connect(args.db, read_only=True)
        try:
            spec = plots.figure_spec(args.kind, con, args.game, aliases=args.aliases)
        finally:
            con.close()
        path = plots.save(spec, args.output, renderer=renderer)
    print(f"wrote {path}")
    return 0


def report_command(args) -> int:
    from workbench.report import write_report

    with source(args) as con:
        path = write_report(
            con,
            args.output,
            db_label=Path(source_label(args)).name,
            prices=args.prices,
            aliases=args.aliases,
            log=sys.stderr,
        )
    size = path.stat().st_size
    print(f"wrote {path} ({size / 1e6:.1f} MB)" if size >= 1e5 else f"wrote {path} ({size / 1e3:.0f} kB)")
    return 0
