"""One model, many names: aliases a user gives so that `claude-3-5-haiku` in one log and
`claude-3-5-haiku-20241022` in another count as one model.

Aliases apply where decisions are grouped and compared (scorecard, comparisons, ratings,
the report and the charts); the `decisions` table keeps each name as its log wrote it.
"""

from __future__ import annotations

import csv
import json
import os
import re

from workbench.errors import WorkbenchError
from workbench.paths import is_text, settings_text, text_of

FORMS = 'a JSON object {"name": "model", ...} or a CSV file with the columns name,model'


def read_aliases(aliases) -> dict[str, str]:
    """Aliases as a dict name -> model, from a dict, a JSON file or a CSV file
    (`name,model`); None gives none. A name given two different models is refused."""
    if aliases is None:
        return {}
    if isinstance(aliases, dict):
        pairs, where = list(aliases.items()), "aliases"
    elif isinstance(aliases, (str, os.PathLike)):
        pairs, where = _pairs_in(aliases), f"aliases in {text_of(aliases)}"
    else:
        raise WorkbenchError(f"aliases must be a dict or a file ({FORMS}), not {type(aliases).__name__}")
    found: dict[str, str] = {}
    for name, model in pairs:
        if not (
            isinstance(name, str)
            and isinstance(model, str)
            and name.strip()
            and model.strip()
            and is_text(name)
            and is_text(model)
        ):
            raise WorkbenchError(f"{where}: {name!r} -> {model!r}: each name and model must be non-empty text")
        if found.get(name, model) != model:
            raise WorkbenchError(f"{where}: {name!r} is given two models, {found[name]!r} and {model!r}")
        found[name] = model
    return {name: _model_of(name, found, where) for name in found}


def _model_of(name: str, found: dict[str, str], where: str) -> str:
    """The model a name stands for, following a chain (a -> b, b -> c: a is c); a
    chain that comes back to a name on it is refused."""
    chain = [name]
    while found.get(chain[-1], chain[-1]) != chain[-1]:
        chain.append(found[chain[-1]])
        if chain[-1] in chain[:-1]:
            raise WorkbenchError(
                f"{where}: {' -> '.join(map(repr, chain))} goes round in a circle; map each name to the one model it is"
            )
    return chain[-1]


def two_models(a: str, b: str, aliases: dict[str, str], needs: str) -> tuple[str, str]:
    """The models `a` and `b` stand for under `aliases` (read); WorkbenchError when they
    are one (`needs`: what needs two, as the message says it)."""
    model_a, model_b = aliases.get(a, a), aliases.get(b, b)
    if model_a == model_b:
        one = f"{a!r} and {b!r} are one model under the aliases" if a != b else f"not {a!r} twice"
        raise WorkbenchError(f"{needs} needs two different models, {one}")
    return model_a, model_b


# A dated snapshot of a model: its base name and a date (`-20241022`, `-2024-10-22`, `@20241022`).
SNAPSHOT = re.compile(r"(?P<base>.+?)[-@](?P<date>(19|20)\d{2}-?[01]\d-?[0-3]\d)")


def look_alike(names, aliases: dict[str, str]) -> list[tuple[str, str]]:
    """The pairs (dated, base) of `names` where one is the other's dated snapshot
    (`claude-3-5-haiku-20241022`, `claude-3-5-haiku`) and `aliases` (read) do not make
    them one model already: probably one model, never merged unless asked."""
    names = set(names)
    pairs = []
    for name in sorted(names):
        found = SNAPSHOT.fullmatch(name)
        if found and found["base"] in names and aliases.get(name, name) != aliases.get(found["base"], found["base"]):
            pairs.append((name, found["base"]))
    return pairs


def look_alike_lines(pairs: list[tuple[str, str]]) -> list[str]:
    """What to say of the pairs `look_alike` finds, once each, with the aliases that
    would merge them."""
    if not pairs:
        return []
    mapping = json.dumps(dict(pairs))
    return [f"{dated} looks like a dated snapshot of {base}, counted apart" for dated, base in pairs] + [
        f"to count them as one model: write {mapping} to aliases.json and pass --aliases aliases.json"
    ]


def alias_sql(aliases: dict[str, str], name: str) -> str:
    """SQL of the model `name` (an SQL expression) stands for under `aliases` (read)."""
    if not aliases:
        return name
    names = ", ".join(_sql_text(alias) for alias in aliases)
    models = ", ".join(_sql_text(model) for model in aliases.values())
    return f"coalesce(map([{names}], [{models}])[{name}], {name})"


def _sql_text(text: str) -> str:
    return "'" + str(text).replace("'", "''") + "'"


def _pairs_in(path) -> list[tuple]:
    text = settings_text(path, "aliases")
    if os.fspath(path).lower().endswith(".csv"):
        try:
            rows = list(csv.DictReader(text.splitlines()))
        except csv.Error as exc:  # a field past csv's limit (128 KiB), a NUL byte
            raise WorkbenchError(f"cannot read aliases from {text_of(path)}: {exc}; give {FORMS}") from None
        if rows and not {"name", "model"} <= set(rows[0]):
            raise WorkbenchError(f"cannot read aliases from {text_of(path)}: {FORMS}")
        return [(row["name"], row["model"]) for row in rows]
    try:
        table = json.loads(text, object_pairs_hook=list)
    except ValueError as exc:
        raise WorkbenchError(f"cannot read aliases from {text_of(path)}: {exc}; give {FORMS}") from None
    except RecursionError:
        raise WorkbenchError(f"cannot read aliases from {text_of(path)}: nested too deeply; give {FORMS}") from None
    if not isinstance(table, list) or not all(isinstance(pair, tuple) for pair in table):
        raise WorkbenchError(f"cannot read aliases from {text_of(path)}: {FORMS}")
    return table
