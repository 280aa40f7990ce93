"""Nim: two players take one to three stones in turn from a pile (`*.nim.jsonl`, one
move per line); where an LLM chose the move, its model. A seventh built-in game,
declared as the six are: this folder and one line of the registry."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, Json, TypeAdapter, model_validator

from workbench.catalog import DECISIONS
from workbench.formats import Counts, Format, LoadContext, generated_by, jsonl_claims
from workbench.jsonl import check_lines, store_batches
from workbench.schema import Column, Table, run_on
from workbench.validation import violation


class Move(BaseModel):
    """One line: a move as the rules of Nim allow it."""

    model_config = ConfigDict(extra="forbid", strict=True)
    game: str
    turn: Annotated[int, Field(ge=1, le=2**63 - 1)]
    player: str
    pile: Annotated[int, Field(ge=1, le=2**63 - 1)]
    take: Annotated[int, Field(ge=1, le=3)]
    model: str | None = None

    @model_validator(mode="after")
    def _takes_from_the_pile(self) -> Move:
        if self.take > self.pile:
            raise ValueError(f"takes {self.take} stones from a pile of {self.pile}")
        return self


LINES = TypeAdapter(list[Json[Move]])

MOVES = Table(
    "nim_moves",
    (
        Column("source_id", "BIGINT", required=True),
        Column("seq", "BIGINT", "1-based line number", required=True),
        Column("game", "VARCHAR", path="game"),
        Column("turn", "BIGINT", path="turn"),
        Column("player", "VARCHAR", path="player"),
        Column("pile", "BIGINT", path="pile"),
        Column("take", "BIGINT", path="take"),
        Column("model", "VARCHAR", path="model"),
        Column("valid", "BOOLEAN", "no error violation on the line", required=True),
    ),
    doc="One row per move.",
    model=Move,
)

INSERT_MOVES = MOVES.insert(f"""
SELECT $source_id AS source_id, seq, {MOVES.select_paths("j")}, valid
FROM (SELECT seq, valid, TRY_CAST(raw AS JSON) AS j FROM lines) WHERE json_type(j) = 'OBJECT'
""")
DERIVE_DECISIONS = DECISIONS.insert("""
SELECT source_id, 'nim' AS format, game AS game_id, turn, player AS agent_id, model, 'take ' || take AS action,
       valid, 'line ' || seq AS locator
FROM nim_moves WHERE source_id = $source_id AND model IS NOT NULL
""")


def load(ctx: LoadContext) -> Counts:
    """Each batch of lines checked against `Move` in one pydantic-core call and stored
    with its findings (`jsonl.store_batches`, as the built-in formats read theirs); then
    the file's decisions, derived again whole."""

    def insert(lines) -> int:
        return run_on(ctx.con, lines, INSERT_MOVES, "lines", {"source_id": ctx.source_id})[0][0]

    counts = store_batches(ctx, lambda batch: check_lines(batch, LINES, violation), insert)
    ctx.con.execute(DERIVE_DECISIONS, {"source_id": ctx.source_id})
    return counts


FORMAT = Format(
    name="nim",
    tables=(MOVES,),
    claims=jsonl_claims(".nim.jsonl", {"game", "turn", "player", "pile", "take"}),
    load=load,
    line_based=True,
    describe="Nim moves (*.nim.jsonl)",
    generate=generated_by("workbench.nim.synth"),
)
