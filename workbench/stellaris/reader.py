"""Load one Stellaris file: a save (`*.sav`), an extractor output (`get_<tool>.json`,
`*.briefing.json`) or a companion history (`*.db`). Each kind gives an `Extraction`
(rows, findings, counts); this module writes it in bulk through the load context."""

from __future__ import annotations

from pathlib import Path

from workbench.errors import UnreadableFile
from workbench.formats import Counts, LoadContext
from workbench.paths import text_of
from workbench.stellaris import extractor, history, invariants, save, save_zip
from workbench.stellaris.tables import Extraction, budget_rows, resource_rows, snapshot_row, status_figures, write
from workbench.violation import Violation

SAVE_LOCATOR = "save"
# A rejected save keeps its `meta` and the start of its gamestate, not tens of MB.
REJECT_GAMESTATE_BYTES = 4096


def load(ctx: LoadContext) -> Counts:
    extraction = read(ctx.path, ctx.advance)
    write(ctx.con, ctx.source_id, extraction)
    ctx.add_violations(extraction.violations)
    ctx.add_rejects(extraction.rejects)
    return Counts(extraction.records, extraction.rejected)


def read(path: Path, advance=lambda n: None) -> Extraction:
    """The file's extraction; raises UnreadableFile for a file that cannot be read at all."""
    try:
        return _read(path, advance)
    except RecursionError:
        raise UnreadableFile(f"{path}: its values are nested too deeply to read") from None


def _read(path: Path, advance) -> Extraction:
    series = series_of(path)
    suffix = path.suffix.lower()
    if suffix == ".sav":
        return read_save(path, series, advance)
    if suffix in history.SUFFIXES:
        return history.read(path)
    return extractor.read(path, series)


def series_of(path: Path) -> str:
    """A folder of autosaves (or of extractor outputs) is one time series, named after it."""
    return text_of(path.resolve().parent.name or path.stem)


def read_save(path: Path, series: str, advance=lambda n: None) -> Extraction:
    files = save_zip.open_save(path, advance)
    try:
        snapshot = save.read_snapshot(files)
    except save.SnapshotError as exc:
        return _rejected_save(files, str(exc))
    extraction = Extraction(records=1, violations=list(snapshot.violations))
    extractor.add_outputs(extraction, snapshot.outputs, "save")  # every tool a save gives is known
    extraction.violations += invariants.check_bundle(snapshot.outputs, player_id=snapshot.player_id)
    extraction.snapshots.append(_snapshot_row(snapshot, series, text_of(path.name)))
    extraction.resources = _resource_rows(snapshot)
    extraction.budget = budget_rows(SAVE_LOCATOR, series, snapshot.date, snapshot.budgets)
    return extraction


def _resource_rows(snapshot: save.Snapshot) -> list[dict]:
    """A save's budget and stockpiles are complete: the game writes no zero amounts, so
    a resource missing from one of them has 0 there."""
    resources = list(dict.fromkeys([*snapshot.net, *snapshot.stockpiles]))
    income, expenses, net, stockpiles = (
        {r: mapping.get(r, 0.0) for r in resources}
        for mapping in (snapshot.income, snapshot.expenses, snapshot.net, snapshot.stockpiles)
    )
    return resource_rows(SAVE_LOCATOR, snapshot.date, income, expenses, net, stockpiles)


def _snapshot_row(snapshot: save.Snapshot, series: str, file_name: str) -> dict:
    wars = snapshot.outputs["get_wars"]
    return snapshot_row(
        SAVE_LOCATOR,
        "save",
        series,
        file_name,
        snapshot.date,
        **status_figures(snapshot.outputs["get_player_status"]),
        empire_name_key=snapshot.empire_name_key,
        empire_name_template=snapshot.empire_name_template,
        wars_count=wars["count"],
        at_war=wars["player_at_war"],
    )


def _rejected_save(files: save_zip.SaveFiles, why: str) -> Extraction:
    raw = (
        files.meta.decode("utf-8", errors="replace")
        + "\n# gamestate begins:\n"
        + files.gamestate[:REJECT_GAMESTATE_BYTES].decode("utf-8", errors="replace")
    )
    return Extraction(
        violations=[
            Violation(
                SAVE_LOCATOR,
                "error",
                "no_snapshot",
                "(record)",
                f"expected the player's empire in the gamestate; {why}; the save's meta and "
                f"the start of its gamestate are kept in `rejects`",
            )
        ],
        rejects=[(SAVE_LOCATOR, raw)],
        records=0,
        rejected=1,
    )
