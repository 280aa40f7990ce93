"""How many games a question needs: what a format's decisions say about planning a
comparison (`plan`: validity, decisions per game, the ICC and its upper bound), and the
games per model that detect a difference (`sample_size`), in numbers and in words.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real
from typing import TYPE_CHECKING, TypeGuard, overload

from workbench import stats
from workbench.comparison.clusters import decisions_sql
from workbench.connection import holder, is_database, ordered_frame
from workbench.errors import WorkbenchError
from workbench.naming import read_aliases
from workbench.outcomes import FAILURES_SAID

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection

    from workbench.spark.lake import Lake

    # What the analyses read: a database, or a Parquet tree open on Spark.
    Source = DuckDBPyConnection | Lake

POWER = 0.8


@dataclass(frozen=True)
class Plan:
    """What a format's (or every format's) decisions say about planning a comparison: the
    ICC estimated from `games` model-game clusters and its upper bound (`icc_high`,
    one-sided at stats.PLAN_ICC_LEVEL), which the plan uses: an ICC from few games is
    often far below the truth (from a 3-game pilot, under half the games needed were
    planned 17-42% of the time in simulation; from the bound, 1-14%)."""

    validity: float
    decisions_per_game: float
    icc: float
    games: int  # model-game clusters seen
    models: int
    icc_high: float | None = None

    @property
    def planning_icc(self) -> float:
        return self.icc if self.icc_high is None else max(self.icc, self.icc_high)

    def games_needed(
        self, difference: float, validity: float | None = None, power: float = POWER, level: float = stats.LEVEL
    ) -> int:
        return stats.games_needed(
            difference,
            self.validity if validity is None else validity,
            self.decisions_per_game,
            self.planning_icc,
            power,
            level,
        )


def plan(con, format: str | None = None, aliases=None, cluster: str | None = "game", failures: str = "exclude") -> Plan:
    """Validity, decisions per game and the intra-class correlation of validity within
    games (games nested in their model) with its upper bound, over `format`'s answered
    decisions or every format's (`failures="invalid"`: every call, a failed one as
    invalid)."""
    plans = plans_by_format(con, decisions_sql(read_aliases(aliases), cluster, failures), format, pooled=format is None)
    if not plans:
        raise WorkbenchError(f"no decisions{f' in format {format!r}' if format else ''} in {holder(con)} to plan from")
    return next(iter(plans.values()))


def plans_by_format(con, source: str, format: str | None, pooled: bool = False) -> dict[str, Plan]:
    """Per format (or one for all, `pooled`): the Plan its decisions give."""
    frame = ordered_frame(
        con,
        f"""
        SELECT format, who, cluster, count(*) AS n, count(*) FILTER (WHERE valid) AS valid
        FROM ({source}) WHERE $format IS NULL OR format = $format GROUP BY ALL
    """,
        {"format": format},
    )
    plans = {}
    groups = (
        [("all", frame)] if pooled else [(key[0], part) for key, part in frame.group_by("format", maintain_order=True)]
    )
    for name, part in groups:
        if part.is_empty():
            continue
        group = (part["format"] + "\x00" + part["who"]).to_numpy()
        n, valid = part["n"].to_numpy(), part["valid"].to_numpy()
        between = stats.between_games(valid, n, group)
        icc = 0.0 if math.isnan(between.icc) else between.icc
        # nothing to measure the ICC with: plan as if each game were one decision
        high = 1.0 if math.isnan(between.high) else between.high
        plans[name] = Plan(
            float(valid.sum() / n.sum()), float(n.sum() / part.height), icc, part.height, len(set(group)), high
        )
    return plans


def _games_needed(row: dict, planned: Plan | None) -> int | None:
    """For a comparison that found no evidence: games per model to show its difference
    (the better model's validity as the baseline)."""
    if row["significant"] or planned is None or not row["difference"]:
        return None
    better = max(row["validity_a"], row["validity_b"])
    difference = abs(row["difference"])
    if better - difference < 0 and better + difference > 1:
        return None
    return planned.games_needed(difference, validity=better)


@overload
def sample_size(
    con: Source,
    /,
    *,
    difference: float,
    validity: float | None = None,
    decisions_per_game: float | None = None,
    icc: float | None = None,
    power: float = POWER,
    level: float = stats.LEVEL,
    format: str | None = None,
    aliases=None,
    failures: str = "exclude",
) -> int: ...


@overload
def sample_size(
    difference: float,
    validity: float,
    decisions_per_game: float,
    icc: float,
    power: float = POWER,
    level: float = stats.LEVEL,
) -> int: ...


@overload
def sample_size(
    difference: float,
    validity: float | None = None,
    decisions_per_game: float | None = None,
    icc: float | None = None,
    power: float = POWER,
    level: float = stats.LEVEL,
    *,
    con: Source,
    format: str | None = None,
    aliases=None,
    failures: str = "exclude",
) -> int: ...


def sample_size(
    con_or_difference: Source | float | None = None,
    /,
    validity: float | None = None,
    decisions_per_game: float | None = None,
    icc: float | None = None,
    power: float = POWER,
    level: float = stats.LEVEL,
    *,
    difference: float | None = None,
    con: Source | None = None,
    format: str | None = None,
    aliases=None,
    failures: str = "exclude",
) -> int:
    """Games per model to detect a difference in validity: `sample_size(difference,
    validity, decisions_per_game, icc)` (positionally or by keyword), or
    `sample_size(con, difference=...)` (or `sample_size(difference, con=con)`) with what
    is not given estimated from the database.

    The fewest games for which the comparison's own test (Newcombe's interval from two
    Wilson intervals at the effective counts, Student's t at the degrees of freedom
    those games give it) keeps the difference at `power` (`stats.games_needed`); the
    design effect is 1 + (m - 1) ICC of games of m decisions. Never fewer than 2.

    Args:
        con_or_difference: a connection to estimate validity, decisions per game and the
            ICC from (a DuckDB connection, or a Parquet tree open on Spark), or the
            difference to detect. Positional only.
        validity: the baseline validity (0 to 1); with a connection, overrides the
            estimate.
        decisions_per_game: decisions per game (at least 1); overrides the estimate.
        icc: the intra-class correlation of validity within games (0 to 1); overrides the
            estimate. Estimated, the ICC is taken at its 90% upper bound: from few
            games the estimate is often far too low.
        power: the chance of detecting the difference.
        level: the confidence level of the two-sided test.
        difference: the difference in validity to detect (0.05 for 5 points), where the
            first argument is not it.
        con: the connection to estimate from, where the first argument is not it.
        format: with a connection, estimate from that format's decisions only.
        aliases: with a connection, a dict, or a JSON or CSV file, mapping names to one
            model.
        failures: with a connection, `exclude` (the answered decisions) or `invalid` (a
            failed call counted as invalid).

    Returns:
        Games per model.

    Raises:
        WorkbenchError: a first argument that is neither a connection nor a number, the
            difference or the connection given twice, an input missing or out of range,
            or a database with no decisions to estimate from.
    """
    first = con_or_difference
    if _is_source(first):
        if con is not None:
            raise WorkbenchError("sample_size takes one connection: positionally or as con=, not both")
        if difference is None and validity is not None:  # sample_size(con, 0.1)
            raise WorkbenchError("sample_size(con, ...) takes the difference by name: sample_size(con, difference=0.1)")
        con = first
    elif isinstance(first, Real) and not isinstance(first, bool):
        if difference is not None:
            raise WorkbenchError("sample_size was given difference twice")
        difference = first if isinstance(first, int | float) else float(first)
    elif first is not None:
        raise WorkbenchError(
            f"sample_size takes a connection or the difference to detect first, not {type(first).__name__} {first!r}"
        )
    if difference is None:
        raise WorkbenchError("sample_size needs the difference to detect (difference=0.05 for 5 points)")
    if con is not None:
        estimated = plan(con, format, aliases, failures=failures)
        validity = estimated.validity if validity is None else validity
        decisions_per_game = estimated.decisions_per_game if decisions_per_game is None else decisions_per_game
        icc = estimated.planning_icc if icc is None else icc
    if validity is None or decisions_per_game is None or icc is None:
        missing = [
            name
            for name, value in (("validity", validity), ("decisions_per_game", decisions_per_game), ("icc", icc))
            if value is None
        ]
        raise WorkbenchError(f"sample_size needs {', '.join(missing)} (or con= a connection to estimate them from)")
    check_plan(difference, validity, decisions_per_game, icc, power, level)
    return stats.games_needed(difference, validity, decisions_per_game, icc, power, level)


def _is_source(value: object) -> TypeGuard[Source]:
    """A DuckDB connection, or a Parquet tree open on Spark (which answers `frame`, as
    `connection.query_frame` asks it)."""
    return is_database(value) or callable(getattr(value, "frame", None))


def plan_numbers(
    con,
    difference: float,
    power: float = POWER,
    format: str | None = None,
    aliases=None,
    validity=None,
    decisions_per_game=None,
    icc=None,
    failures: str = "exclude",
) -> dict:
    """`workbench plan --json`: games per model to detect `difference` and each number it
    rests on (`icc` and `games`, `models` as estimated from the database, None without
    one; `icc_planning` the one planned with: given, else the estimate's upper bound).
    Without a connection every input must be given."""
    estimated = plan(con, format, aliases, failures=failures) if con is not None else None
    if estimated is not None:
        validity = estimated.validity if validity is None else validity
        decisions_per_game = estimated.decisions_per_game if decisions_per_game is None else decisions_per_game
    planning = estimated.planning_icc if icc is None and estimated is not None else icc
    return {
        "games_per_model": sample_size(difference, validity, decisions_per_game, planning, power),
        "difference": abs(difference),
        "power": power,
        "level": stats.LEVEL,
        "validity": validity,
        "decisions_per_game": decisions_per_game,
        "icc_planning": planning,
        "icc_given": icc is not None,
        "design_effect": 1 + (decisions_per_game - 1) * planning,
        "icc": estimated.icc if estimated is not None else None,
        "games": estimated.games if estimated is not None else None,
        "models": estimated.models if estimated is not None else None,
        "format": format,
        "failures": failures,
    }


def plan_in_words(
    con,
    difference: float,
    power: float = POWER,
    format: str | None = None,
    aliases=None,
    db_label: str = "the database",
    validity=None,
    decisions_per_game=None,
    icc=None,
    failures: str = "exclude",
) -> str:
    """`workbench plan`: games per model to detect `difference`, and what that rests on
    (`plan_numbers`). Without a connection every input must be given."""
    numbers = plan_numbers(con, difference, power, format, aliases, validity, decisions_per_game, icc, failures)
    text = (
        f"about {numbers['games_per_model']} games per model to detect {numbers['difference'] * 100:g} points "
        f"at {power:.0%} power (95% level): validity {numbers['validity']:.1%}, "
        f"{numbers['decisions_per_game']:.3g} decisions per game, "
    )
    if not numbers["icc_given"] and numbers["icc"] is not None:
        text += (
            f"ICC {numbers['icc']:.3f} from {games_in_words(numbers['games'])}; "
            f"planning at {numbers['icc_planning']:.3f}, its {stats.PLAN_ICC_LEVEL:.0%} upper bound "
            f"(design effect {numbers['design_effect']:.2f})"
        )
    else:
        text += f"ICC {numbers['icc_planning']:.3f} (design effect {numbers['design_effect']:.2f})"
    if numbers["games"] is not None:
        scope = f"{format}'s" if format else "every format's"
        text += (
            f"; estimated from {scope} {numbers['games']} games of {numbers['models']} models in {db_label}"
            f"{FAILURES_SAID[failures]} (a value given on the command line replaces its estimate)"
        )
    return text


def check_plan(difference, validity, decisions_per_game, icc, power, level) -> None:
    """Each input of a sample size within its range, or one line saying which is not."""
    checks = [
        ("difference", difference, 0 < abs(difference) < 1, "between 0 and 1 (0.05 for 5 points)"),
        ("validity", validity, 0 <= validity <= 1, "between 0 and 1"),
        ("decisions per game", decisions_per_game, decisions_per_game >= 1, "at least 1"),
        ("icc", icc, 0 <= icc <= 1, "between 0 and 1"),
        ("power", power, 0 < power < 1, "between 0 and 1"),
        ("level", level, 0 < level < 1, "between 0 and 1"),
    ]
    for name, value, holds, expected in checks:
        if not (isinstance(value, (int, float)) and math.isfinite(value) and holds):
            raise WorkbenchError(f"{name} must be {expected}, not {value!r}")
    if validity - abs(difference) < 0 and validity + abs(difference) > 1:
        raise WorkbenchError(f"a difference of {abs(difference):g} does not fit around a validity of {validity:g}")


def games_in_words(count: int) -> str:
    """ "1 game", "2 games"."""
    return f"{count} game" if count == 1 else f"{count} games"
