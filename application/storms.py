"""Storm: puzzles against the clock (issue 69, after Lichess's Puzzle Storm).
A run hands a player puzzles one at a time without their answers, from 2
moves up to the limit of the player's level; the server keeps the clock
(RUN_SECONDS to start, FAIL_SECONDS off for a failed puzzle, time added at
the combo's steps), checks every answer by replaying it under the puzzle's
rules and times it by its own clock.  The score is the puzzles solved; the
player's best by day, week, month and all time are kept, and the seeded run
(the same puzzles for everyone that UTC day, once a player) has a board.

The rules of trust (docs/ratings.md): a run's puzzles are rounds of their own
(they move no rating); an answer the client was shown (a solve, a solution)
scores nothing; a run is never extended, rewound or replayed (only its own
answers, in order, while its clock runs, change it); a client never sends a
time; an address makes no more new players a day than ratings allow."""

from __future__ import annotations

import datetime as dt
import time
import uuid
from typing import NotRequired, TypedDict

from solver.errors import InvalidInput
from solver.model.moves import check
from solver.model.puzzle import Move, Puzzle, moves_to_json
from solver.production.generate import generate
from solver.production.generated import NoPuzzleFound
from workers.stores.storms import StormDeck, StormHanded, StormReviewed, StormRun

from . import Context
from .problems import Problem, echo
from .ratings.players import NEW_PLAYERS_A_DAY, admitted, scope
from .ratings.rounds import clients, reveal
from .ratings.selection import length_for
from .ratings.themes import of_puzzle

RUN_SECONDS = 180.0  # a run's clock at the start
FAIL_SECONDS = 10.0  # taken off for a failed puzzle
# (solves in a row, seconds added) as the combo reaches each step; past the last, every COMBO_EVERY more add its time.
COMBO_STEPS = ((5, 3.0), (12, 5.0), (20, 7.0), (30, 10.0))
COMBO_EVERY = 10
LONGEST_RUN = 600.0  # seconds a run lasts at most, whatever its combos add
MOST_PUZZLES = 150  # puzzles a run hands at most (a run that solves them all ends there)
STEP = 3  # puzzles handed at each length before the next (2, 2, 2, 3, 3, 3, ...)
LEVEL_ABOVE = 600  # a run climbs to the length whose prior is nearest the player's rating plus this
TOPS = (6, 20)  # the longest puzzle a run reaches, at least and at most
SEEDED_TOP = 14  # the seeded run's longest (the same for everyone)
DRAW_BUDGET = 4.0  # seconds a puzzle's draw may search (short ones take milliseconds; longer are pool draws)
BOARD_SHOWN = 20
RESULTS = ("solved", "failed", "shown")


class StormClock(TypedDict):
    """The keys of service/shapes.py's StormClock."""
    seconds: float
    bonus: float
    penalty: float


class StormPuzzle(TypedDict):
    """The puzzle handed, without its answer: the keys of service/shapes.py's StormPuzzle."""
    board: str | dict[str, object]  # Puzzle.to_json's: a real board's spec, else the board object
    robots: dict[str, list[int]]
    target: dict[str, object]
    rules: dict[str, object]
    index: int
    code: str
    optimal_length: int
    rating: float


class StormAnswered(TypedDict):
    """What an answer did: the keys of service/shapes.py's StormAnswered."""
    index: int
    result: str
    seconds: float
    clock_change: float
    combo: int


class StormBoardRow(TypedDict):
    rank: int
    player: str
    score: int


class StormBoard(TypedDict):
    """The keys of service/shapes.py's StormBoard."""
    day: str
    top: list[StormBoardRow]
    rank: int | None


class StormBest(TypedDict):
    """The keys of service/shapes.py's StormBest: the best score of each period."""
    day: int
    week: int
    month: int
    all: int


class StormScores(TypedDict):
    """The keys of service/shapes.py's StormScores."""
    player: str
    scope: str
    best: StormBest
    board: StormBoard


class StormView(TypedDict):
    """A run as clients see it: the keys of service/shapes.py's Storm."""
    id: str
    player: str
    scope: str
    seeded: bool
    day: str
    over: bool
    seconds_left: float
    started_at: float
    ends_at: float
    clock: StormClock
    score: int
    solves: int
    fails: int
    combo: int
    best_combo: int
    highest_rating: float | None
    answered: int
    puzzle: NotRequired[StormPuzzle]
    review: NotRequired[list[StormReviewed]]
    answer: NotRequired[StormAnswered]
    scores: NotRequired[StormScores]


def open_run(ctx: Context, player_id: str, seeded: bool, seconds: float = RUN_SECONDS) -> StormView:
    """POST /v1/storms: a new run for the player, its clock started, its first
    puzzle handed; `seeded`: the day's run, the same puzzles for everyone, once
    a player a day (409 for a second)."""
    stores = ctx.required_stores()
    who = scope(ctx)
    if not (stores.storms.known(who, player_id) or admitted(ctx, player_id)):
        raise Problem("rate-limited", f"this address made {NEW_PLAYERS_A_DAY} new players today (UTC); play as "
                      "players it made before, or retry tomorrow (an API key has no such limit)",
                      headers={"Retry-After": str(_to_midnight())})
    day, run_id = _day(), uuid.uuid4().hex
    top = SEEDED_TOP if seeded else \
        max(TOPS[0], min(TOPS[1], length_for(stores.ratings.player_rating(who, player_id).value + LEVEL_ABOVE)))
    deck = StormDeck(seed=f"seeded:{day.isoformat()}" if seeded else uuid.uuid4().hex, day=day.isoformat(),
                     seeded=seeded, top=top)
    first = _draw(ctx, deck, 0)  # first: a draw that fails leaves the day's seeded run unclaimed
    if seeded:
        claimed = stores.storms.open_seeded(who, day.isoformat(), player_id, run_id)
        if claimed != run_id:
            raise Problem("conflict", f"player {echo(player_id)!r} opened today's seeded run already "
                          f"(/v1/storms/{claimed}): it is played once a day (UTC); open a run of your own "
                          "(\"seeded\": false) to play again")
    now = time.time()  # the clock starts with the puzzle in hand
    run = StormRun(id=run_id, scope=who, player=player_id, **deck, seconds=seconds, bonus=0.0, penalty=0.0,
                   ended=None, index=0, combo=0, best_combo=0, solves=0, fails=0, highest=None, done=[],
                   scored=False, puzzle=first, opened=now, handed=now)
    stores.storms.create(run)
    stores.storms.touch(who, player_id)
    return view(run, now)


def read(ctx: Context, run_id: str) -> StormView:
    """GET /v1/storms/{id}: the run now: its clock and puzzle, or, once its time
    is up, its summary, review and the player's high scores."""
    run = _settled(ctx, run_id)
    out = view(run, time.time())
    if run["scored"]:
        out["scores"] = scores(ctx, run["player"], run["scope"])
    return out


def answer(ctx: Context, run_id: str, index: int, moves: list[Move]) -> StormView:
    """POST /v1/storms/{id}/answers: the answer to puzzle `index` (the one handed),
    checked by replaying it and timed by the server's clock: solved at the
    optimum, failed (FAIL_SECONDS off) past it, or scoring nothing when the
    client was shown its answer; the next puzzle is handed at once."""
    stores = ctx.required_stores()
    run = _settled(ctx, run_id)
    now = time.time()
    held = _in_turn(run, index, now)
    p = Puzzle.from_code(held["code"])
    result = _judge(p, moves, held["optimal_length"])
    if result == "solved" and stores.rounds.attempt(clients(ctx), p.content_hash(), "")[1]:
        result = "shown"  # its answer was shown to this client (a solve, a solution, a check): no score
    following = _draw(ctx, run, index + 1) if index + 1 < MOST_PUZZLES else None
    handed = time.time()  # the next puzzle's time runs from here (a draw takes milliseconds, a pool's first read more)

    def step(kept: StormRun | None) -> tuple[StormRun | None, StormView]:
        if kept is None:
            raise _gone(run_id)
        _in_turn(kept, index, now)
        changed, said = _answered(kept, result, moves, following, now, handed)
        return changed, {**view(changed, now), "answer": said}

    out = stores.storms.change(run_id, step)
    if out["over"]:
        run = _settled(ctx, run_id)
        out = {**view(run, now), "answer": out["answer"], "scores": scores(ctx, run["player"], run["scope"])}
    return out


def scores(ctx: Context, player_id: str, who: str | None = None) -> StormScores:
    """GET /v1/storms/scores: the player's best scores this day, week and month
    (UTC) and of all time, and the day's board of the seeded run."""
    stores = ctx.required_stores()
    who = who or scope(ctx)
    day = _day()
    kept = stores.storms.bests(who, player_id)
    best = {period: kept[period][1] if period in kept and kept[period][0] == stamp else 0
            for period, stamp in periods(day)}
    board = [StormBoardRow(rank=i + 1, player=p, score=s)
             for i, (p, s) in enumerate(stores.storms.board(who, day.isoformat(), BOARD_SHOWN))]
    rank = stores.storms.rank(who, day.isoformat(), player_id)
    return {"player": player_id, "scope": who,
            "best": StormBest(day=best["day"], week=best["week"], month=best["month"], all=best["all"]),
            "board": {"day": day.isoformat(), "top": board, "rank": rank}}


def periods(day: dt.date) -> list[tuple[str, str]]:
    """The periods a score of `day` counts in, each with its stamp."""
    year, week, _ = day.isocalendar()
    return [("day", day.isoformat()), ("week", f"{year}-W{week:02d}"), ("month", day.strftime("%Y-%m")),
            ("all", "all")]


def length_at(top: int, index: int) -> int:
    """The optimal length of a run's puzzle `index`: from 2, a length every STEP puzzles, up to `top`."""
    return min(top, 2 + index // STEP)


def ends_at(run: StormRun) -> float:
    """When the run's clock reaches zero (server time): its start, plus its
    seconds and what combos added, less what fails took, within LONGEST_RUN;
    or when it handed its last puzzle."""
    end = min(run["opened"] + run["seconds"] + run["bonus"] - run["penalty"], run["opened"] + LONGEST_RUN)
    return end if run["ended"] is None else min(end, run["ended"])


def combo_bonus(combo: int) -> float:
    """The seconds a combo reaching `combo` solves in a row adds (0 between steps)."""
    for reached, seconds in COMBO_STEPS:
        if combo == reached:
            return seconds
    last, seconds = COMBO_STEPS[-1]
    return seconds if combo > last and (combo - last) % COMBO_EVERY == 0 else 0.0


def view(run: StormRun, now: float) -> StormView:
    """The run as clients see it: never the answer of the puzzle handed, the
    review (every answer) only once its time is up."""
    end = ends_at(run)
    over = now >= end
    out = StormView(id=run["id"], player=run["player"], scope=run["scope"], seeded=run["seeded"], day=run["day"],
                    solves=run["solves"], fails=run["fails"], combo=run["combo"], best_combo=run["best_combo"],
                    score=run["solves"], over=over, seconds_left=round(max(0.0, end - now), 3),
                    started_at=round(run["opened"], 3), ends_at=round(end, 3), highest_rating=run["highest"],
                    clock=StormClock(seconds=run["seconds"], bonus=run["bonus"], penalty=run["penalty"]),
                    answered=len(run["done"]))
    held = run["puzzle"]
    if over:
        out["review"] = list(run["done"])
        if held is not None:
            out["review"].append(_reviewed(held, run["index"], "unanswered"))
    elif held is not None:
        shown = Puzzle.from_code(held["code"]).to_json()
        out["puzzle"] = StormPuzzle(board=shown["board"], robots=shown["robots"], target=shown["target"],
                                    rules=shown["rules"], code=held["code"], optimal_length=held["optimal_length"],
                                    rating=held["rating"], index=run["index"])
    return out


def _reviewed(puzzle: StormHanded, index: int, result: str) -> StormReviewed:
    """A puzzle of the review: what it was, what became of it, an optimal solution."""
    return StormReviewed(code=puzzle["code"], optimal_length=puzzle["optimal_length"], rating=puzzle["rating"],
                         index=index, result=result, solution=puzzle["solution"])


def _answered(run: StormRun, result: str, moves: list[Move], following: StormHanded | None,
              now: float, handed: float) -> tuple[StormRun, StormAnswered]:
    """The run after `result` for its puzzle: counts, combo, clock, the next puzzle; and what the answer did."""
    run = StormRun(**run)
    held = run["puzzle"]
    if held is None:
        raise Problem("conflict", "the run has handed its last puzzle")
    change = 0.0
    if result == "solved":
        run["solves"] += 1
        run["combo"] += 1
        run["best_combo"] = max(run["best_combo"], run["combo"])
        change = combo_bonus(run["combo"])
        run["bonus"] += change
        run["highest"] = max(run["highest"] or 0.0, held["rating"])
    else:
        run["combo"] = 0
        if result == "failed":
            run["fails"] += 1
            run["penalty"] += FAIL_SECONDS
            change = -FAIL_SECONDS
    seconds = round(now - run["handed"], 3)
    done = _reviewed(held, run["index"], result)
    done["moves"], done["seconds"] = moves_to_json(moves), seconds
    run["done"] = [*run["done"], done]
    run["index"] += 1
    run["puzzle"], run["handed"] = following, handed
    if following is None:
        run["ended"] = now
    said = StormAnswered(index=run["index"] - 1, result=result, seconds=seconds, clock_change=change,
                         combo=run["combo"])
    return run, said


def _judge(p: Puzzle, moves: list[Move], optimum: int) -> str:
    """solved: the target reached in `optimum` moves; failed: more moves than the
    optimum, or the optimum's worth without reaching it (it can no longer be)."""
    verdict = check(p, moves)
    if not verdict.legal:
        raise InvalidInput(f"moves[{verdict.first_bad_move}]", f"this move is not legal here: {verdict.reason}")
    if verdict.solved and len(moves) <= optimum:
        return "solved"
    if len(moves) >= optimum:
        return "failed"
    raise Problem("out-of-range", f"the answer neither reaches the target nor passes the optimum ({optimum} "
                  "moves): send it when it reaches the target or has failed (more moves than the optimum)")


def _in_turn(run: StormRun, index: int, now: float) -> StormHanded:
    """Refuses an answer to a run whose time is up, or to another puzzle than the one handed now;
    else the puzzle handed now (a run that handed its last puzzle has ended: its time is up)."""
    if now >= ends_at(run):
        raise Problem("conflict", f"the run's time was up at {ends_at(run):.3f} (server time): it takes no more "
                      f"answers; its summary is at /v1/storms/{run['id']}")
    if index != run["index"]:
        raise Problem("conflict", f"puzzle {index} is not the one handed now ({run['index']}): each puzzle is "
                      "answered once, in order")
    if run["puzzle"] is None:
        raise Problem("conflict", f"the run has handed its last puzzle; its summary is at /v1/storms/{run['id']}")
    return run["puzzle"]


def _settled(ctx: Context, run_id: str) -> StormRun:
    """The run, scored first if its time is up (its bests and board written
    with it, once) and every answer its review shows counted as shown."""
    stores = ctx.required_stores()
    run = stores.storms.get(run_id)
    if run is None:
        raise _gone(run_id)
    if run["scored"] or time.time() < ends_at(run):
        return run

    def step(kept: StormRun | None) -> tuple[StormRun | None, bool]:
        if kept is None or kept["scored"]:
            return None, False
        counted = [[period, stamp] for period, stamp in periods(dt.date.fromisoformat(kept["day"]))]
        return {**kept, "scored": True, "periods": counted}, True

    if stores.storms.change(run_id, step):
        for d in [*run["done"], *([run["puzzle"]] if run["puzzle"] is not None else [])]:
            reveal(ctx, Puzzle.from_code(d["code"]))  # the review shows their answers
    return stores.storms.get(run_id) or run


def _draw(ctx: Context, run: StormDeck, index: int) -> StormHanded:
    """Puzzle `index` of the run: drawn from the run's seed (pools first, the
    short ones searched), the seeded run's stored for the day at its first draw."""
    length = length_at(run["top"], index)

    def made() -> Puzzle:
        for attempt in range(8):
            try:
                g = generate(length, seed=f"storm:{run['seed']}:{index}:{attempt}", time_budget=DRAW_BUDGET,
                             pools=ctx.pools)
            except NoPuzzleFound:
                continue
            ctx.answers.adopt(g.puzzle, g.solution)
            return g.puzzle
        raise Problem("no-puzzle-found", f"no puzzle of {length} moves was found in time for this run; ask again")

    stores = ctx.required_stores()
    p = Puzzle.from_code(stores.storms.seeded(run["day"], index, lambda: made().code())) if run["seeded"] else made()
    known = ctx.answers.settled(p)
    if known is None or known.status != "optimal" or known.length is None:
        raise Problem("no-puzzle-found", "the run's next puzzle has no known optimum yet; ask again")
    rating = of_puzzle(ctx, p, known.length, len(known.robots_moved))["rating"]
    return StormHanded(code=p.code(), optimal_length=known.length, rating=round(rating["value"], 1),
                       solution=moves_to_json(known.moves))


def _gone(run_id: str) -> Problem:
    return Problem("not-found", f"no storm run {echo(run_id)!r} (or it was opened more than a day ago)")


def _day() -> dt.date:
    return dt.datetime.now(dt.UTC).date()


def _to_midnight() -> int:
    now = dt.datetime.now(dt.UTC)
    midnight = dt.datetime.combine(now.date() + dt.timedelta(days=1), dt.time(), dt.UTC)
    return int((midnight - now).total_seconds()) + 1
