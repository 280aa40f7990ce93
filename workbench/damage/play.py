"""How well each Damage player plays its hand: every answered betting decision judged on
what the player could know at that moment, named mistakes, the standard play statistics,
and what an attack did to the target's play.

A decision's state is rebuilt from the log as the simulator kept it (damage-game
`simulator.py`): `hand_started` holds every player's cards, the pot after the antes and
blinds and each player's bet; each `action_resolved` the pot, the high bet and the
actor's bet and whether it is still in; a `community_revealed` of a new street resets
the bets; `showdown` the payouts and the rankings. The amount to call is the high bet less
the player's bet, the pot odds to_call / (pot + to_call).

Mistakes (one name a decision; the graver first):
- `showdown_long_shot`: the player's last choice of a hand it then lost at showdown (a
  Life lost) was made at a win probability under LONG_SHOT;
- `fold_free`: a fold with nothing to call (checking was free: strictly dominated);
- `fold_ahead`: a fold whose win probability was above the pot odds by more than MARGIN;
- `continue_behind`: a call or raise whose win probability was below the pot odds by more
  than MARGIN.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import duckdb
import msgspec
import numpy as np
import polars as pl

from workbench.damage import cards, deals

# How far the win probability must be from the pot odds to call a choice a mistake: the
# Monte Carlo error (at most 0.025) stays well inside it, and so does the part of a
# hand's value the pot odds leave out (what later streets win or cost).
MARGIN = 0.10
# A showdown lost from below this win probability risked a Life on little.
LONG_SHOT = 0.20
MISTAKES = ("fold_free", "fold_ahead", "continue_behind", "showdown_long_shot")
BETTING = ("fold", "check", "call", "raise")

# The events a hand's state is rebuilt from, in the order they were written, with the
# answered decisions their action lines are (a failed call is no choice). A game's log
# may be in more than one file (cut where it was rotated or resumed): its files are read
# in the order they were written (by their first event's time), whatever order they
# were ingested in, so a hand that one file starts and the next ends is whole.
EVENTS = """
SELECT e.source_id, s.path, e.game_id, e.seq, e.type, e.turn, e.payload::VARCHAR AS payload,
       d.model, d.outcome
FROM damage_events e JOIN sources s USING (source_id)
LEFT JOIN decisions d ON d.format = 'damage' AND d.source_id = e.source_id AND d.locator = 'line ' || e.seq
     AND e.type = 'action_submitted'
WHERE e.type IN ('hand_started', 'community_revealed', 'action_submitted', 'action_resolved', 'showdown')
  AND ($game_id IS NULL OR e.game_id = $game_id)
ORDER BY min(e.ts) OVER (PARTITION BY e.source_id) NULLS LAST, s.path, e.source_id, e.seq
"""

COLUMNS: dict[str, pl.DataType | type[pl.DataType]] = {
    "path": pl.String,
    "line": pl.Int64,
    "source_id": pl.Int64,
    "game_id": pl.String,
    "turn": pl.Int64,
    "street": pl.String,
    "player_id": pl.String,
    "model": pl.String,
    "valid": pl.Boolean,
    "action": pl.String,
    "card_style": pl.String,
    "hand": pl.List(pl.String),
    "board": pl.List(pl.String),
    "opponents": pl.List(pl.String),
    "to_call": pl.Int64,
    "raised_before": pl.Boolean,
    "pot": pl.Int64,
    "pot_odds": pl.Float64,
    "win_probability": pl.Float64,
    "win_probability_se": pl.Float64,
    "won_at_showdown": pl.Boolean,
    "last_choice": pl.Boolean,
    "showdown": pl.Boolean,
    "hand_won": pl.Boolean,
    "life_lost": pl.Boolean,
    "hand_chips": pl.Int64,
    "final_pot": pl.Int64,
    "hand_contribution": pl.Int64,
    "mistake": pl.String,
}


@dataclass
class Hand:
    """One hand of one game as the simulator kept it."""

    turn: int
    style: str
    pot: int = 0
    high_bet: int = 0
    street: str = "preflop"
    board: list = field(default_factory=list)
    cards: dict = field(default_factory=dict)  # player -> its cards
    bets: dict = field(default_factory=dict)  # player -> its bet this street
    contributed: dict = field(default_factory=dict)  # player -> chips put in this hand
    still_in: dict = field(default_factory=dict)  # player -> still in the hand
    choices: list = field(default_factory=list)  # the judged decisions, in order


def judged(
    con: duckdb.DuckDBPyConnection, game_id: str | None = None, samples: int = cards.SAMPLES, seed: int = 0
) -> pl.DataFrame:
    """One row per answered Damage betting decision (`COLUMNS`), judged on what its player
    could know; the same database, seed and samples give the same rows."""
    rows: list[dict] = []
    events = con.execute(EVENTS, {"game_id": game_id}).fetchall()
    hands: dict[tuple, Hand] = {}
    pending: dict[tuple, dict] = {}
    for source_id, path, game, seq, kind, turn, payload, model, outcome in events:
        data = _payload(payload)
        key = (game, turn) if game is not None else (source_id, turn)  # a game's hand, in whichever file
        if kind == "hand_started":
            hands[key] = _started(turn, data)
        elif key not in hands:
            continue  # a hand whose start the log does not hold: nothing to judge it against
        elif kind == "community_revealed":
            _revealed(hands[key], data)
        elif kind == "action_submitted" and outcome in ("valid", "invalid"):
            choice = _choice(hands[key], data, path, seq, source_id, game, turn, model, outcome == "valid")
            if choice is not None:
                pending[(key, choice["player_id"])] = choice
        elif kind == "action_resolved":
            player = _named(data.get("player_id"))
            choice = pending.pop((key, player), None)
            if choice is not None:
                hands[key].choices.append(choice)
            _resolved(hands[key], data)
        elif kind == "showdown":
            rows.extend(_ended(hands.pop(key), data))
    frame = pl.DataFrame({name: [row.get(name) for row in rows] for name in COLUMNS}, schema=COLUMNS)
    return _with_win_probabilities(frame, samples, seed).with_columns(mistake=_mistake()).sort(["source_id", "line"])


def _payload(text: str | None) -> dict:
    try:
        data = _decode(text) if text else {}
    except msgspec.DecodeError:
        return {}
    return data if isinstance(data, dict) else {}


_decode = msgspec.json.Decoder().decode


# Chips past this are no game's: a number beyond it is read as absent (the ingest names it).
MOST_CHIPS = 2**53


def _number(value, default: int = 0) -> int:
    """A count of chips as written, else `default` (not a number, or past MOST_CHIPS)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not -MOST_CHIPS <= value <= MOST_CHIPS:
        return default
    return int(value)


def _cards(value) -> list[str]:
    """A list of cards as written (each as text), else none."""
    return [str(c) for c in value] if isinstance(value, list) else []


def _named(value) -> str | None:
    """A player's id: text, else no one."""
    return value if isinstance(value, str) else None


def _object(value) -> dict:
    """A JSON object as written, else an empty one."""
    return value if isinstance(value, dict) else {}


def _started(turn: int, data: dict) -> Hand:
    hand = Hand(turn=turn, style=str(data.get("card_style") or "draw5"), pot=_number(data.get("pot")))
    players = data.get("players")
    for player in players if isinstance(players, list) else []:
        pid = _named(player.get("player_id")) if isinstance(player, dict) else None
        if not pid:
            continue
        hand.cards[pid] = _cards(player.get("hand"))
        hand.bets[pid] = _number(player.get("current_bet"))
        hand.contributed[pid] = _number(player.get("hand_contribution"))
        hand.still_in[pid] = player.get("in_hand", True) is not False
    hand.high_bet = max(hand.bets.values(), default=0)
    return hand


def _revealed(hand: Hand, data: dict) -> None:
    hand.board = _cards(data.get("community_cards"))
    street = data.get("street")
    if street != "auto_showdown":  # a new street starts its bets from nothing
        hand.street = str(street)
        hand.high_bet = 0
        hand.bets = {pid: 0 for pid in hand.bets}


def _choice(hand: Hand, data: dict, path, seq, source_id, game, turn, model, valid) -> dict | None:
    action = _object(data.get("action"))
    player = _named(data.get("player_id")) or _named(action.get("player_id"))
    kind = action.get("kind")
    if kind not in BETTING or player not in hand.cards:
        return None
    to_call = max(0, hand.high_bet - hand.bets.get(player, 0))
    street = hand.street if hand.style == "holdem" else "draw"  # a draw hand bets in one round
    return {
        "path": path,
        "line": seq,
        "source_id": source_id,
        "game_id": game,
        "turn": turn,
        "street": street,
        "player_id": player,
        "model": model,
        "valid": valid,
        "action": kind,
        "card_style": hand.style,
        "hand": hand.cards[player],
        "board": list(hand.board),
        "opponents": [pid for pid, still in hand.still_in.items() if still and pid != player],
        "to_call": to_call,
        "pot": hand.pot,
        # an answered raise earlier in this betting round (a choice is kept once resolved)
        "raised_before": any(c["action"] == "raise" and c["street"] == street for c in hand.choices),
        # no odds where the log's pot and bet make none (a pot of chips taken out)
        "pot_odds": (to_call / (hand.pot + to_call) if hand.pot + to_call > 0 else None) if to_call else 0.0,
    }


def _resolved(hand: Hand, data: dict) -> None:
    player = _named(data.get("player_id"))
    state = _object(data.get("player_state"))
    hand.pot = _number(data.get("pot"), hand.pot)
    hand.high_bet = _number(data.get("current_high_bet"), hand.high_bet)
    if player in hand.cards:
        hand.bets[player] = _number(state.get("current_bet"), hand.bets.get(player, 0))
        hand.contributed[player] = _number(state.get("hand_contribution"), hand.contributed.get(player, 0))
        hand.still_in[player] = state.get("in_hand", hand.still_in.get(player)) is not False


def _ended(hand: Hand, data: dict) -> list[dict]:
    """The hand's choices with what came of them: hindsight against the hands still in at
    each choice (on the final board), the showdown, the chips and the Life."""
    rankings = _object(data.get("rankings"))
    payouts = _object(data.get("payouts"))
    showed = len(rankings) > 1  # one hand left: a walk, no showdown
    board = _cards(data.get("community_cards")) or hand.board
    last = {choice["player_id"]: index for index, choice in enumerate(hand.choices)}
    rows = []
    for index, choice in enumerate(hand.choices):
        player = choice["player_id"]
        paid = _number(payouts.get(player))
        contenders = {pid: hand.cards[pid] for pid in [player, *choice["opponents"]]}
        rows.append(
            {
                **choice,
                "won_at_showdown": player in _winners(contenders, board, hand.style) if showed else None,
                "last_choice": last[player] == index,
                "showdown": showed and player in rankings,
                "hand_won": paid > 0,
                "life_lost": showed and player in rankings and paid <= 0,
                "hand_chips": paid - hand.contributed.get(player, 0),
                "final_pot": _number(data.get("pot"), hand.pot),
                "hand_contribution": hand.contributed.get(player, 0),
            }
        )
    return rows


def _winners(contenders: dict, board: list, style: str) -> set:
    try:
        return cards.showdown_winners(contenders, board if style == "holdem" else ())
    except cards.CardError:
        return set()


def _with_win_probabilities(frame: pl.DataFrame, samples: int, seed: int) -> pl.DataFrame:
    """Each decision's win probability and its error, dealt once per situation (the same
    cards, board and number of opponents; before the flop, the same ranks and
    suitedness), all situations of a card style at once."""
    situations: dict[tuple, int] = {}
    seen: dict[tuple, int | None] = {}  # a situation as written -> its place in `situations`
    index = []
    for hand, board, opponents, style in frame.select("hand", "board", "opponents", "card_style").iter_rows():
        written = (style, tuple(hand), tuple(board), len(opponents))
        if written not in seen:
            try:
                cards.check(hand, board, len(opponents), style)
            except cards.CardError:
                seen[written] = None  # cards the simulator could not have dealt: no probability
            else:
                seen[written] = situations.setdefault(_situation(style, hand, board, len(opponents)), len(situations))
        index.append(seen[written])
    probability = np.full(len(situations), np.nan)
    error = np.full(len(situations), np.nan)
    for style in cards.STYLES:
        mine = [(number, key) for key, number in situations.items() if key[0] == style]
        if mine:
            rows = [number for number, _ in mine]
            probability[rows], error[rows] = deals.win_probabilities(
                [deals.numbers(key[1]) for _, key in mine],
                [deals.numbers(key[2]) for _, key in mine],
                [key[3] for _, key in mine],
                style,
                samples,
                [cards.situation_seed(key[1], key[2], key[3], style, seed) for _, key in mine],
            )
    return frame.with_columns(
        win_probability=pl.Series([None if at is None else float(probability[at]) for at in index], dtype=pl.Float64),
        win_probability_se=pl.Series([None if at is None else float(error[at]) for at in index], dtype=pl.Float64),
    )


def _situation(style: str, hand: list, board: list, opponents: int) -> tuple:
    """What a win probability depends on. Before the flop in hold'em, only the two ranks
    and whether they share a suit (every suit is alike then): the hand is written as its
    ranks in clubs, or clubs and diamonds."""
    if style == "holdem" and not board:
        (high, first), (low, second) = sorted(
            ((cards.RANKS.index(c[0].upper()), c[1].upper()) for c in hand), reverse=True
        )
        suits = ("C", "C") if first == second else ("C", "D")
        return style, (cards.RANKS[high] + suits[0], cards.RANKS[low] + suits[1]), (), opponents
    return style, tuple(sorted(c.upper() for c in hand)), tuple(sorted(c.upper() for c in board)), opponents


def _mistake() -> pl.Expr:
    p, odds = pl.col("win_probability"), pl.col("pot_odds")
    folded = pl.col("action") == "fold"
    kept_on = pl.col("action").is_in(["call", "raise"])
    return (
        pl.when(pl.col("last_choice") & pl.col("life_lost") & ~folded & (p < LONG_SHOT))
        .then(pl.lit("showdown_long_shot"))
        .when(folded & (pl.col("to_call") == 0))
        .then(pl.lit("fold_free"))
        .when(folded & (p > odds + MARGIN))
        .then(pl.lit("fold_ahead"))
        .when(kept_on & (pl.col("to_call") > 0) & (p < odds - MARGIN))
        .then(pl.lit("continue_behind"))
        .otherwise(pl.lit(None, dtype=pl.String))
    )
