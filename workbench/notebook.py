"""What a notebook needs: the database it works on (`notebook_database`, built from the
demo when missing), where it exports its figures (`figures_dir`), short-lived read-only
connections (`read_only`), and one line saying what to ingest when the database does not
hold what the notebook is about (`needs`).

A notebook's first cell calls `needs(db, "damage")`. When the database holds no Damage
game, that prints the `workbench ingest` command that adds one, and every later cell that
starts with the line `%%needs damage` runs as an empty cell: the notebook runs to its end
quietly instead of stopping at a traceback in its second cell. Ingest, then run the
notebook again. A cell without that line runs as always.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from workbench import connection

# A short-lived read-only connection on a database path (`with read_only(db) as con:`),
# so a notebook never holds the database while `workbench ingest` wants to write to it.
from workbench.connection import reading as read_only
from workbench.errors import WorkbenchError

__all__ = ["notebook_database", "figures_dir", "read_only", "needs", "unmark", "NEEDS", "MARK", "Need"]

MARK = "%%needs"


# --- the database a notebook works on ----------------------------------------------


def notebook_database() -> Path:
    """The database a notebook works on, built from the demo when missing.

    `$WORKBENCH_DB`, else `data/workbench.duckdb` of the repository (also when the
    notebook runs from `notebooks/`); builds the demo database there when missing.

    Returns:
        The database's absolute path.

    Raises:
        WorkbenchError: the database is missing and the demo does not write it (the path
            is not named `workbench.duckdb`).
    """
    db = connection.default_db()
    if not db.is_absolute() and Path.cwd().name == "notebooks" and not db.exists():
        db = Path.cwd().parent / db
    if not db.exists():
        from workbench.demo import run_demo

        run_demo(db.parent, progress=False)
        if not db.exists():
            raise WorkbenchError(
                f"{db} is missing and the demo writes {db.parent / 'workbench.duckdb'}; "
                "point WORKBENCH_DB at an existing database or at a workbench.duckdb"
            )
    return db.resolve()


def figures_dir(db: Path) -> Path:
    """Where a notebook exports its figures: `figures/` beside the database.

    Args:
        db: the database's path.

    Returns:
        The `figures` folder beside the database (not created here).
    """
    return Path(db).parent / "figures"


# --- what a notebook is about, and the cells that need it ----------------------------


@dataclass(frozen=True)
class Need:
    missing: str  # what the database lacks, as a notebook says it
    files: str  # the files that give it
    path: str  # where those files are, in the command shown
    present: Callable[[object], bool]  # whether a connection's database holds it


def _has_damage_game(con) -> bool:
    from workbench.damage.queries import games

    return not games(con).is_empty()


def _has_save_series(con) -> bool:
    from workbench.stellaris.queries import series_names

    return bool(series_names(con))


def _has_decisions(con) -> bool:
    return con.execute("SELECT EXISTS (SELECT 1 FROM decisions)").fetchone()[0]


NEEDS = {
    "damage": Need("no Damage game", "Damage replay logs (*.events.jsonl)", "LOGS/", _has_damage_game),
    "stellaris": Need(
        "no Stellaris save series",
        "Stellaris saves (*.sav), companion histories or extractor folders",
        "SAVES/",
        _has_save_series,
    ),
    "decisions": Need("no decisions", "Damage, EC4X, Agent Arena or GM logs", "LOGS/", _has_decisions),
}

# The needs the database lacked when a notebook last asked (`needs`): cells marked with
# one of them are skipped until the notebook asks again.
_lacking: set[str] = set()


def needs(db, what: str) -> bool:
    """Whether the database `db` holds what the notebook needs (`what`, a key of `NEEDS`);
    if not, prints in one line the command that adds it, and the cells marked
    `%%needs <what>` run empty from now on."""
    need = NEEDS[what]
    with connection.reading(db) as con:
        present = need.present(con)
    _skip_marked_cells()
    if present:
        _lacking.discard(what)
    else:
        _lacking.add(what)
        print(
            f"{need.missing} in this database: ingest {need.files} with "
            f"`workbench ingest {need.path} --db {shlex.quote(str(db))}`, then run this notebook again"
        )
    return present


def unmark(lines: list[str]) -> list[str]:
    """An IPython input transformer: a cell marked `%%needs <what>`, as it runs. Skipped
    (no lines) when the database lacks it; else the cell without the mark, its line left
    blank so that a traceback's line numbers match the cell's."""
    first = lines[0].split() if lines else []
    if first[:1] != [MARK]:
        return lines
    return [] if _lacking & set(first[1:]) else ["\n", *lines[1:]]


def _skip_marked_cells() -> None:
    """Have the running IPython (if any) read marked cells through `unmark`, before it
    looks for cell magics (`%%needs` is none)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None and unmark not in shell.input_transformers_cleanup:
        shell.input_transformers_cleanup.append(unmark)
