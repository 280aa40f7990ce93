"""What decisions cost: US dollars per million tokens, from the maintained `genai-prices`
table where it knows a model, and from the user's prices over it.

A log that separates input and output tokens (Damage's `usage`: prompt and completion
tokens) is priced at the model's input and output rates, and cached input tokens, where
a log records them, at its cache-read rate. A log that records only a total can be
priced only at one rate for every token: a user's `usd_per_mtok`. A price that varies
with the size of the prompt (genai-prices' tiers: past a threshold every token of the
request is billed at the tier's rate: a prompt of more than the tier's first size, as
genai-prices reads it) is applied decision by decision. Cached tokens are counted within
the input tokens (genai-prices' convention, and OpenAI's). genai-prices' bundled table is
used as installed: it is never updated from the network.
"""

from __future__ import annotations

import csv
import functools
import json
import math
import os
from dataclasses import dataclass

import polars as pl

from workbench import connection
from workbench.connection import ordered_frame
from workbench.errors import WorkbenchError
from workbench.paths import settings_text, text_of

FORMS = (
    'JSON {"model": usd_per_mtok} or {"model": {"input": ..., "output": ..., "cached": ...}}, '
    "or a CSV with the columns model,usd_per_mtok or model,input,output[,cached]"
)

# The most a user's price may be, USD per million tokens (a dollar a token): every cost
# of tokens a BIGINT counts at it is a finite number.
MAX_RATE = 1_000_000
# A rate: (first prompt size, USD per million tokens) from 0 up, a tier per step.
Rate = tuple[tuple[int, float], ...]


@dataclass(frozen=True)
class Price:
    """A model's prices, USD per million tokens."""

    input: Rate
    output: Rate
    cached: Rate  # an input token read from the provider's cache
    source: str
    # One rate for every token (a user's usd_per_mtok): decisions whose log records only
    # a total of tokens can be priced too.
    blended: bool = False

    def thresholds(self) -> list[int]:
        """The prompt sizes at which a rate changes, above 0."""
        return sorted({start for rate in (self.input, self.output, self.cached) for start, _ in rate if start > 0})


def flat(rate: float) -> Rate:
    return ((0, rate),)


def at(rate: Rate, tier_start: int) -> float:
    """The rate of a tier (named by the prompt size it starts past; 0: the base rate)."""
    return [price for start, price in rate if start <= tier_start][-1]


# --- the user's prices -------------------------------------------------------------


def read_prices(prices) -> dict[str, Price]:
    """Prices by model from a dict or a JSON/CSV file (see FORMS): a number is one rate
    for every token; an object gives input, output and optionally cached rates. Every
    rate must be a number from 0 to MAX_RATE."""
    if isinstance(prices, dict):
        table, where = prices, "prices"
    elif isinstance(prices, (str, os.PathLike)):
        table, where = _table_in(prices), f"prices in {text_of(prices)}"
    else:
        raise WorkbenchError(f"prices must be a dict or a file ({FORMS}), not {type(prices).__name__}")
    return {str(model): _price(where, str(model), value) for model, value in table.items()}


def _table_in(path) -> dict:
    text = settings_text(path, "prices")
    try:
        if os.fspath(path).lower().endswith(".csv"):
            return _csv_table(text)
        table = json.loads(text)
    except (ValueError, KeyError, csv.Error) as exc:  # csv: a field past its limit (128 KiB)
        raise WorkbenchError(f"cannot read prices from {text_of(path)}: {exc}; give {FORMS}") from None
    except RecursionError:
        raise WorkbenchError(f"cannot read prices from {text_of(path)}: nested too deeply; give {FORMS}") from None
    if not isinstance(table, dict):
        raise WorkbenchError(f"cannot read prices from {text_of(path)}: give {FORMS}")
    return table


def _csv_table(text: str) -> dict:
    rows = list(csv.DictReader(text.splitlines()))
    if not rows:
        return {}
    if "usd_per_mtok" in rows[0]:
        return {row["model"]: row["usd_per_mtok"] for row in rows}
    return {
        row["model"]: {key: row[key] for key in ("input", "output", "cached") if row.get(key) not in (None, "")}
        for row in rows
    }


def _price(where: str, model: str, value) -> Price:
    if isinstance(value, Price):  # read before
        return value
    if isinstance(value, dict):
        unknown = set(value) - {"input", "output", "cached"}
        if unknown or not {"input", "output"} <= set(value):
            raise WorkbenchError(
                f"{where}: {model!r} needs input and output rates (and may give cached), "
                f"not {', '.join(sorted(map(str, value))) or 'nothing'}"
            )
        rates = {key: _rate(where, model, number) for key, number in value.items()}
        return Price(flat(rates["input"]), flat(rates["output"]), flat(rates.get("cached", rates["input"])), where)
    rate = _rate(where, model, value)
    return Price(flat(rate), flat(rate), flat(rate), where, blended=True)


def _rate(where: str, model: str, value) -> float:
    try:
        number = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError, OverflowError):
        number = math.nan
    if not (math.isfinite(number) and 0 <= number <= MAX_RATE):
        raise WorkbenchError(
            f"{where}: the price of {model!r} must be a finite number of US dollars per million "
            f"tokens, from 0 to {MAX_RATE:,}, not {value!r}"
        )
    return number


# --- genai-prices ---------------------------------------------------------------------


def known_prices(models: list[str], prices=None) -> dict[str, Price | None]:
    """Each model's price: the user's where given, else genai-prices' where it knows
    the model, else None."""
    given = read_prices(prices) if prices is not None else {}
    return {model: given.get(model) or _maintained(model) for model in models}


@functools.cache
def _maintained(model: str) -> Price | None:
    from genai_prices import Usage, calc_price

    try:
        found = calc_price(Usage(input_tokens=0, output_tokens=0), model_ref=model)
    except (LookupError, ValueError):
        return None
    price = found.model_price
    if price.input_mtok is None or price.output_mtok is None:
        return None
    input_rate = _tiers(price.input_mtok)
    cached = _tiers(price.cache_read_mtok) if price.cache_read_mtok is not None else input_rate
    return Price(input_rate, _tiers(price.output_mtok), cached, f"genai-prices: {found.provider.id} {found.model.id}")


def _tiers(value) -> Rate:
    if hasattr(value, "tiers"):
        return ((0, float(value.base)), *((int(t.start), float(t.price)) for t in value.tiers))
    return flat(float(value))


# --- costs ------------------------------------------------------------------------------


def costs(con, source: str, keys: list[str], prices: dict[str, Price | None]) -> pl.DataFrame:
    """Per group of `keys` (which include `who`, the model): cost_per_decision and
    cost_per_valid (US dollars) over the decisions that record tokens, and
    price_source. None where a model has no price, where no decision records tokens, or
    where a log records only totals and the price is not one rate for every token."""
    columns = _token_columns(con)
    thresholds = {who: price.thresholds() for who, price in prices.items() if price is not None and price.thresholds()}
    group = ", ".join(keys)
    frame = ordered_frame(
        con,
        f"""
        WITH d AS (SELECT *{columns} FROM ({source})),
        sized AS (SELECT *, array_length(list_filter(coalesce(map($names::VARCHAR[], $starts::BIGINT[][])[who], []),
                                            lambda s: coalesce(input_tokens, 0) > s)) AS tier FROM d)
        SELECT {group}, tier,
               sum(input_tokens)::DOUBLE AS input, sum(output_tokens)::DOUBLE AS output,
               sum(cached_tokens)::DOUBLE AS cached, sum(tokens) FILTER (WHERE input_tokens IS NULL)::DOUBLE AS totals_only,
               count(*) FILTER (WHERE input_tokens IS NOT NULL OR tokens IS NOT NULL) AS priced,
               count(*) FILTER (WHERE valid AND (input_tokens IS NOT NULL OR tokens IS NOT NULL)) AS priced_valid
        FROM sized GROUP BY ALL
    """,
        {"names": list(thresholds), "starts": list(thresholds.values())},
    )
    out = []
    for group_keys, part in frame.group_by(keys, maintain_order=True):
        price = prices.get(group_keys[keys.index("who")])
        dollars = _dollars(part, price)
        priced, valid = int(part["priced"].sum()), int(part["priced_valid"].sum())
        out.append(
            {
                **dict(zip(keys, group_keys)),
                "cost_per_decision": dollars / priced if dollars is not None and priced else None,
                "cost_per_valid": dollars / valid if dollars is not None and valid else None,
                "price_source": price.source if price is not None else None,
            }
        )
    schema = {
        **{k: frame.schema[k] for k in keys},
        "cost_per_decision": pl.Float64,
        "cost_per_valid": pl.Float64,
        "price_source": pl.String,
    }
    return pl.DataFrame(out, schema=schema).rename({"who": "model"})


def _dollars(part: pl.DataFrame, price: Price | None) -> float | None:
    """The cost of a group's decisions, tier by tier, or None where it cannot be said."""
    if price is None or not int(part["priced"].sum()):
        return None
    starts = [0, *price.thresholds()]
    total = 0.0
    for row in part.iter_rows(named=True):
        prompt = starts[row["tier"]]
        if row["totals_only"]:
            if not price.blended:
                return None
            total += row["totals_only"] * at(price.input, prompt)
        cached = row["cached"] or 0
        total += ((row["input"] or 0) - cached) * at(price.input, prompt) + cached * at(price.cached, prompt)
        total += (row["output"] or 0) * at(price.output, prompt)
    return total / 1e6


def _token_columns(con) -> str:
    """`, NULL::BIGINT AS <column>` for each token column a database written before it
    was recorded lacks (its files fill it when they are ingested again)."""
    present = connection.column_names(con, "decisions")
    return "".join(
        f", NULL::BIGINT AS {name}"
        for name in ("input_tokens", "output_tokens", "cached_tokens")
        if name not in present
    )
