"""A dice game's rolls, one JSON object per line (`*.dice.jsonl`): a player, a roll of
1 to 6 and, where an LLM chose to roll, its model."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from workbench.plugin import (
    DECISIONS,
    Column,
    Counts,
    Format,
    LoadContext,
    Table,
    context_batches,
    jsonl_claims,
    run_on,
    store_batch,
    violation,
)


class Roll(BaseModel):
    """One line: what the game's rules say a roll is."""

    model_config = ConfigDict(extra="forbid", strict=True)
    game: str
    turn: Annotated[int, Field(ge=1, le=2**63 - 1)]
    player: str
    roll: Annotated[int, Field(ge=1, le=6)]
    model: str | None = None


LINE = TypeAdapter(Roll)

ROLLS = Table(
    "dice_rolls",
    (
        Column("source_id", "BIGINT", required=True),
        Column("seq", "BIGINT", "1-based line number", required=True),
        Column("game", "VARCHAR", path="game"),
        Column("turn", "BIGINT", path="turn"),
        Column("player", "VARCHAR", path="player"),
        Column("roll", "BIGINT", path="roll"),
        Column("model", "VARCHAR", path="model"),
        Column("valid", "BOOLEAN", "no error violation on the line", required=True),
    ),
    doc="One row per roll.",
    model=Roll,
)

INSERT_ROLLS = ROLLS.insert(f"""
SELECT $source_id AS source_id, seq, {ROLLS.select_paths("j")}, valid
FROM (SELECT seq, valid, TRY_CAST(raw AS JSON) AS j FROM lines) WHERE json_type(j) = 'OBJECT'
""")
DERIVE_DECISIONS = DECISIONS.insert("""
SELECT source_id, 'dice' AS format, game AS game_id, turn, player AS agent_id, model, 'roll ' || roll AS action,
       valid, 'line ' || seq AS locator
FROM dice_rolls WHERE source_id = $source_id AND model IS NOT NULL
""")


def load(ctx: LoadContext) -> Counts:
    """Each batch of lines checked against `Roll`, stored with its violations and
    rejects; then the file's decisions (the rolls an LLM chose), derived again whole
    (the workbench removed them when the file grew)."""
    records = rejected = 0
    for batch in context_batches(ctx):
        violations, reject_at = [], dict(batch.unreadable)
        for index, text in enumerate(batch.texts):
            if index in reject_at:
                continue
            try:
                LINE.validate_json(text)
            except ValidationError as exc:
                for error in exc.errors(include_url=False):
                    if error["type"] in ("json_invalid", "model_type"):
                        reject_at[index] = error["msg"]
                        break
                    violations.append(violation(batch.locator(index), error, error["loc"]))

        def insert(lines):
            return run_on(ctx.con, lines, INSERT_ROLLS, "lines", {"source_id": ctx.source_id})[0][0]

        counts = store_batch(ctx, batch, violations, reject_at, insert)
        records, rejected = records + counts.records, rejected + counts.rejected
    ctx.con.execute(DERIVE_DECISIONS, {"source_id": ctx.source_id})
    return Counts(records, rejected)


FORMAT = Format(
    name="dice",
    tables=(ROLLS,),
    claims=jsonl_claims(".dice.jsonl", {"game", "turn", "player", "roll"}),
    load=load,
    line_based=True,
    describe="dice rolls (*.dice.jsonl)",
)
