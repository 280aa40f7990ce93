"""Stellaris dates: `"YYYY.MM.DD"` on a 360-day calendar (12 months of 30 days).

Text dates sort wrongly once years differ in width (`"999.01.01"` > `"1000.01.01"`), so
every table keeps a day number beside the text: days since `0.01.01`.
"""

from __future__ import annotations

import re

DATE = re.compile(r"^(\d{1,5})\.(\d{1,2})\.(\d{1,2})$")
DAYS_PER_MONTH = 30
DAYS_PER_YEAR = 360


def day_number(text: str) -> int | None:
    """`"2312.01.01"` -> 832320; None for text that is not a Stellaris date."""
    match = DATE.match(text) if isinstance(text, str) else None
    if match is None:
        return None
    year, month, day = (int(part) for part in match.groups())
    if not (1 <= month <= 12 and 1 <= day <= DAYS_PER_MONTH):
        return None
    return year * DAYS_PER_YEAR + (month - 1) * DAYS_PER_MONTH + (day - 1)


def date_text(day: int) -> str:
    """The inverse of `day_number`: 832320 -> `"2312.01.01"`."""
    year, rest = divmod(day, DAYS_PER_YEAR)
    month, day_of_month = divmod(rest, DAYS_PER_MONTH)
    return f"{year}.{month + 1:02d}.{day_of_month + 1:02d}"
