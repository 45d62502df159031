"""The finisher: what an attempt at a puzzle does to the ratings.  The rules
are pure functions (`unrated_because`, `finish`); `attempt` reads what they
need and has the store write their decision in one transaction."""

from __future__ import annotations

import time
from typing import NotRequired, TypedDict

from solver.model.puzzle import Puzzle
from solver.play import daily
from solver.play.glicko import Rating, game
from workers.stores.ratings import Decision, HistoryLine, Standing
from workers.stores.rounds import ROUND_SECONDS

from .. import Context, daily_stats
from .players import NEW_PLAYERS_A_DAY, PlayerRating, admitted, rating_of, scope, solved_daily
from .rounds import answers_for_its_players, clients, is_today, made_a_pack_with, reveal
from .themes import PuzzleRating, puzzle_prior, shown

# A player whose rating deviation is at most this (about 13 rated attempts from a
# new player's 500) has an established rating: only such players move a puzzle's.
ESTABLISHED_DEVIATION = 150.0
# How far one client (an API key, else an address) may move one puzzle's rating in a day (UTC).
PUZZLE_DAILY_BOUND = 50.0

NOT_FIRST = "not the player's first attempt at this puzzle"
SHOWN = ("this client was shown the puzzle's answer (a solution, every solution, the last hint, a solve, or a "
         "picture with the solution, its API key's or its address's, within 48 hours before or during the round) or "
         "checked it (a verify without a player, or of another player than the round's first)")
PACKED = ("this client made a pack holding this puzzle (POST /v1/packs hands every item with its answer, its API "
          "key's or its address's, within the week the pack is kept): its answers count as shown")
LATE = f"answered after the round closed ({ROUND_SECONDS // 3600} hours after the puzzle was handed)"
NOT_HANDED = ("the puzzle was not handed to this client without its answer within the last "
              f"{ROUND_SECONDS // 3600} hours: attempts are rated at puzzles from GET /v1/puzzles/next?solution=false, "
              "GET /v1/puzzles/random?solution=false and GET /v1/daily")


class RatingChange(PlayerRating):
    """service/shapes.py's RatingChange: the player's rating after an attempt, and how far it moved."""

    change: float


class AttemptResult(TypedDict):
    """service/shapes.py's AttemptResult: what a verify response's `attempt` says."""

    rated: bool
    won: NotRequired[bool]
    reason: NotRequired[str]
    player: NotRequired[RatingChange]
    puzzle: NotRequired[PuzzleRating]


class Verdict(TypedDict):
    """service/shapes.py's Verdict, POST /v1/verify's reply (application/solving.py's
    verify): `ricochet check`'s verdict (solver/model/moves.py's Verdict.to_json),
    with the optimum, whether the moves reach it, and (the service adds it) the
    attempt recorded."""

    legal: bool
    solved: bool
    length: int
    ricochet: bool
    reached_target: bool
    finisher: str | None
    void: bool
    void_reason: NotRequired[str]
    first_bad_move: NotRequired[int]
    reason: NotRequired[str]
    optimal_length: int | None
    optimal: bool
    optimality: str
    attempt: NotRequired[AttemptResult]


def unrated_because(played: str | None, opened: bool, was_shown: bool, now: float,
                    packed: bool = False) -> str | None:
    """Why an attempt moves no rating, or None when it does: it must be the
    player's first at the puzzle (`played` is what the player was handed or tried
    of it), in a round (handed to the player by /next within ROUND_SECONDS, or
    to the client: `opened`), and the client not shown the answer meanwhile
    (`packed`: by a pack it made)."""
    if played == "tried":
        return NOT_FIRST
    if packed:
        return PACKED
    if was_shown or played == "shown":
        return SHOWN
    if played is not None and played.startswith("open:"):
        return None if now - float(played[len("open:"):]) <= ROUND_SECONDS else LATE
    return None if opened else NOT_HANDED


def established(player: Rating) -> bool:
    """Whether the player's rating is established: its deviation as every reply shows it (to 0.1) at most
    ESTABLISHED_DEVIATION.  A deviation of 150.04 is shown as 150.0, and a client that reads it must be right."""
    return player.to_json()["deviation"] <= ESTABLISHED_DEVIATION


def finish(player: Rating, puzzle: Rating, won: bool, moved: float) -> tuple[Rating, Rating, float]:
    """A rated attempt: the player's rating after it (Glicko-2, one game); the
    puzzle's, which only a player with an established rating moves, and by no
    more than what is left of PUZZLE_DAILY_BOUND after `moved` (how far this
    client moved it today); and how far it moved."""
    me, it = game(player, puzzle, won)
    room = PUZZLE_DAILY_BOUND - moved
    if not established(player) or room <= 0:
        return me, puzzle, 0.0
    step = max(-room, min(room, it.value - puzzle.value))
    return me, Rating(puzzle.value + step, it.deviation, it.volatility), abs(step)


def attempt(ctx: Context, p: Puzzle, verdict: Verdict, player_id: str) -> AttemptResult:
    """Record `player_id`'s attempt at `p` (judged by `verdict`): what a verify
    response's `attempt` says.  Only an attempt whose optimum is proven is
    recorded; `unrated_because` and `finish` say what it moves."""
    stores = ctx.required_stores()
    if verdict["optimality"] != "proven" or verdict["optimal_length"] is None:
        return {"rated": False, "reason": "the optimum of this puzzle is not known yet (POST /v1/solve finds it)"}
    if not admitted(ctx, player_id):  # judged all the same: the answer checked
        reveal(ctx, p)
        return {"rated": False, "reason": f"this address made {NEW_PLAYERS_A_DAY} new players today (UTC): a new "
                "player's attempt is judged but not recorded until tomorrow (an API key has no such limit)"}
    known = ctx.answers.settled(p)
    robots_moved = len(known.robots_moved) if known is not None and known.status == "optimal" else 1
    won, h, now = bool(verdict["optimal"]), p.content_hash(), time.time()
    played = stores.ratings.played(scope(ctx), player_id, [h])[0]
    own = played is not None and played.startswith("open:")  # handed to this player by /next: its own round
    claim = "" if own or answers_for_its_players(ctx) else player_id  # who claims the round, if anyone
    opened, was_shown = stores.rounds.attempt(clients(ctx), h, claim)
    packed = was_shown and made_a_pack_with(ctx, p)  # which answer shown, for the reason
    code, length, optimal_length, t = p.code(), verdict["length"], verdict["optimal_length"], round(now, 3)

    def decide(standing: Standing) -> Decision:
        reason = unrated_because(standing.played, opened, was_shown, now, packed)
        if reason is not None:
            unrated = HistoryLine(code=code, won=won, length=length, optimal_length=optimal_length, t=t, rated=False,
                                  reason=reason, rating=round(standing.player.value, 1), change=0.0)
            return Decision(False, standing.player, unrated, kept=reason != NOT_HANDED)
        me, it, moved = finish(standing.player, standing.puzzle, won, standing.moved)
        rated = HistoryLine(code=code, won=won, length=length, optimal_length=optimal_length, t=t, rated=True,
                            rating=round(me.value, 1), change=round(me.value - standing.player.value, 1))
        return Decision(True, me, rated, it, moved)

    done = stores.ratings.record(scope(ctx), player_id, h, p.code(), ctx.client, won,
                                 puzzle_prior(ctx, verdict["optimal_length"], robots_moved), decide)
    decision = done.decision
    if decision.rated and won and is_today(ctx, p):
        solved_daily(ctx, player_id, daily.today())
    daily_stats.finished(ctx, p, player_id, verdict, own=decision.rated,  # how others did on a day's puzzle
                         shown=decision.history.get("reason") in (SHOWN, PACKED))
    out = AttemptResult(rated=decision.rated, won=won, puzzle=shown(done.puzzle)["rating"],
                        player=RatingChange(**rating_of(done.player), change=decision.history["change"]))
    if not decision.rated and "reason" in decision.history:
        out["reason"] = decision.history["reason"]
    return out
