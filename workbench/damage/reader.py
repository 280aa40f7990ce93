"""Load a Damage replay (or tournament) log batch by batch: validate (screen, then
pydantic-core), parse and insert in DuckDB, derive emotions and drift in SQL over the
batch; the decisions follow once the whole file is in."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import duckdb
import pyarrow as pa
from pydantic import ValidationError

from workbench.violation import Violation
from workbench.damage import drift, emotions, tables
from workbench.damage.models import LINES, PAYLOADS, SCREEN, UNDOCUMENTED
from workbench.formats import Counts, LoadContext
from workbench import jsonl
from workbench.jsonl import LineBatch, context_batches
from workbench.validation import violation

EVENT_TAGS = {*PAYLOADS, UNDOCUMENTED}


def load(ctx: LoadContext) -> Counts:
    # Checking a batch runs in Python; storing one runs in DuckDB, which releases the
    # GIL: a single writer thread stores batch k while batch k+1 is being checked.
    records = rejected = 0
    tally = drift.DriftTally.from_state(ctx.state)
    stage = FileStage(ctx.con, ctx.source_id, earlier_lines=ctx.appending)
    with ThreadPoolExecutor(max_workers=1) as writer:
        pending = None
        for batch in context_batches(ctx):
            checked = check_batch(batch)
            if pending is not None:
                records, rejected = _add(pending.result(), records, rejected)
            pending = writer.submit(store_batch, ctx, stage, tally, batch, *checked)
        if pending is not None:
            records, rejected = _add(pending.result(), records, rejected)
    stage.derive_decisions()
    ctx.state = tally.state()
    ctx.add_file_findings(tally.findings())
    return Counts(records, rejected)


def _add(counts: Counts, records: int, rejected: int) -> tuple[int, int]:
    return records + counts.records, rejected + counts.rejected


def store_batch(ctx: LoadContext, stage: FileStage, tally: drift.DriftTally, batch: LineBatch,
                violations: list[Violation], reject_at: dict[int, str]) -> Counts:
    counts = jsonl.store_batch(ctx, batch, violations, reject_at, stage.parse)
    tally.add_batch(ctx.con, stage.batch)
    stage.publish()
    return counts


class FileStage:
    """Loading one file: each batch is parsed once into an Arrow table, which DuckDB reads
    explicitly (`tables.on_batch`); its emotion vectors and the fields decisions need
    are derived from it, its events are moved to `damage_events`, and it is dropped. The
    file's actions and provider calls are kept (a few fields each) for its decisions."""

    def __init__(self, con: duckdb.DuckDBPyConnection, source_id: int, earlier_lines: bool = False):
        self.con, self.source_id = con, source_id
        self.batch: pa.Table | None = None
        con.execute("SET arrow_lossless_conversion = true")  # JSON stays JSON through Arrow
        tables.start_calls(con, source_id, earlier_lines)

    def parse(self, event_lines: pa.Table) -> int:
        """Parse a batch of (seq, raw) lines; returns how many became rows."""
        self.batch = tables.parse_events(self.con, self.source_id, event_lines)
        return self.batch.num_rows

    def publish(self) -> None:
        """Derive the batch's emotion vectors and decision fields, then move its events."""
        emotions.insert_vectors(self.con, self.source_id, self.batch)  # wherever they are
        tables.move_batch(self.con, self.batch)
        self.batch = None

    def derive_decisions(self) -> None:
        """The file's decisions, once all its events (and their violations) are in."""
        tables.derive_decisions(self.con, self.source_id)


def check_batch(batch: LineBatch) -> tuple[list[Violation], dict[int, str]]:
    """Validate every line of the batch: the screen passes the plainly valid ones, and
    the rest go through pydantic-core in one call.

    Returns the violations of the lines that are records, and the positions of the
    lines that cannot be records at all (not UTF-8, not JSON, not an object), each
    with the reason.
    """
    reject_at = dict(batch.unreadable)
    suspects = [i for i, ok in enumerate(SCREEN.passes(batch.texts)) if not ok and i not in reject_at]
    violations: list[Violation] = []
    try:
        LINES.validate_python([batch.texts[i] for i in suspects])
        return violations, reject_at
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    for error in errors:
        position, *loc = error["loc"]
        index = suspects[position]
        if not loc:  # the line as a whole: invalid JSON, or JSON that is not an object
            reject_at[index] = error["msg"]
            continue
        if loc[0] in EVENT_TAGS:
            loc = loc[1:]
        violations.append(violation(batch.locator(index), error, tuple(loc)))
    return violations, reject_at
