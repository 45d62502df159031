"""A whole game of Ricochet Robots (docs/rules.md section 5), with the server as referee and clock.

The state is plain JSON (kept in Redis by the service) and every change goes
through `Game`, which takes the time as an argument: nothing here reads a
clock, so tests drive the sand timer and the idle rule without sleeping.
Every change bumps `version` and is recorded as an event.

Phases: `bidding` (a chip is face up; bids come in; the first one starts the
timer), `verifying` (the timer ran out; bidders show their solutions in order)
and `finished`.  Timers are settled lazily by `advance(now)`, at the exact
instant they ran out, whenever anyone looks at or acts on the game; so are a
robot player's bids and shown solutions (robot.py plans them when the round's
optimum is known), each at its own instant.
"""

from __future__ import annotations

import random
from enum import StrEnum
from typing import Any, NotRequired, TypedDict, cast

from solver.errors import InvalidInput
from solver.model.board import Board, random_board_spec, real_board
from solver.model.geometry import ROBOT_COLOURS
from solver.model.moves import check, replay, round_of
from solver.model.puzzle import Goal, Move, Puzzle, Ricochet, Rules, moves_from_json, moves_to_json
from solver.play import robot as robots_play

CHIPS_TO_WIN = {2: 8, 3: 6, 4: 5}  # more than 4 players: until every chip is taken
MAX_PLAYERS = 16
ROUND_SOLVE_BUDGET = 10.0  # seconds the referee spends finding a round's optimum
ABANDONED_AFTER = 3  # rounds in a row whose timer ran out with no bid: nobody plays, the game ends


class TieBreak(StrEnum):
    """Who shows first among equal bids (option `tie_break`)."""

    FEWER_CHIPS = "fewer_chips"  # the player with fewer chips (the printed rules)
    FIRST_BID = "first_bid"      # the earlier bid (tournaments, the 2013 text)


class Scoring(StrEnum):
    """How a game is won (option `scoring`)."""

    CHIPS = "chips"          # the most chips
    INFINITY = "infinity"    # the house rule: the lowest total of the winners' move counts


class GameError(Exception):
    """A move in the game that the rules do not allow now (409), or a bad token (403)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class GameOptions(TypedDict):
    """A game's house rules: the keys of service/shapes.py's GameOptions (options_from_json checks them)."""
    timer_seconds: int
    idle_seconds: int
    exact_bid: bool
    tie_break: str
    chips_to_win: int | None
    scoring: str
    infinity_target: int
    solitaire_timer_factor: int
    black_robot: bool
    ricochet: str
    void_returns_chip: bool


class GameEvent(TypedDict):
    """One change of a game (or a race), as its event stream shows it: the keys of service/shapes.py's
    GameEvent, each event carrying more of its own (a bid's player and moves, ...)."""
    version: int
    type: str
    at: float


class Chip(TypedDict):
    index: int
    colour: str | None  # None: the vortex
    symbol: str
    cell: list[int]


class GamePlayer(TypedDict):
    name: str
    chips: list[Chip]
    face_down: list[Chip]
    score: int
    robot: NotRequired[str]  # a robot player's strength


class BidPlaced(TypedDict):
    player: str
    moves: int
    at: float
    seq: int


class Turn(TypedDict):
    player: str
    moves: int


class Attempt(TypedDict):
    """What a solution shown did: the keys of service/shapes.py's Attempt."""
    success: bool
    length: int | None  # None: nothing shown within the timer
    legal: bool | None
    solved: bool
    impossible_bid: bool
    reason: str | None


class AttemptMade(Attempt):
    """An attempt as the round keeps it: whose, when, on which bid (solitaire has none)."""
    player: str
    at: float
    bid: NotRequired[int]


class RoundOutcome(TypedDict):
    """How a round ended: its winner's solution, or why nobody won it."""
    winner: str | None
    length: NotRequired[int]
    moves: NotRequired[list[dict[str, str]]]
    reason: NotRequired[str]


class RoundRecord(RoundOutcome):
    """A round once over, as the game's history keeps it."""
    number: int
    chip: Chip
    optimal_length: int | None
    optimal_solution: list[dict[str, str]] | None
    bids: list[BidPlaced]
    attempts: list[AttemptMade]


class RoundPublic(TypedDict):
    """The round in play as every player sees it: not its optimum, nor the robots' plans."""
    number: int
    chip: Chip
    started: float
    idle_ends: float
    timer_started: float | None
    timer_ends: float | None
    bids: list[BidPlaced]
    order: list[Turn]
    attempts: list[AttemptMade]
    void: bool
    show_ends: NotRequired[float]  # verifying: when the verifier's turn passes


class GameRound(RoundPublic):
    """The round in play: its chip, bids, the order bidders show in, the optimum (hidden until it ends)."""
    optimal_length: int | None
    optimal_solution: list[dict[str, str]] | None
    rating: NotRequired[str]  # pending until the referee records the optimum, then done
    robots: NotRequired[dict[str, list[list[float]]]]  # each robot's bids to come: [at, moves]


class GameState(TypedDict):
    """A game as the store keeps it; `Game` changes it."""
    id: str
    version: int
    created: float
    seed: str
    options: GameOptions
    board: str
    robots: dict[str, list[int]]
    players: list[GamePlayer]
    deck: list[int]
    shuffles: int
    phase: str  # bidding, verifying, finished
    round: GameRound | None
    history: list[RoundRecord]  # each round once over
    winners: list[str] | None
    void_streak: NotRequired[int]
    idle_rounds: NotRequired[int]
    finish_reason: NotRequired[str]


class GamePublic(TypedDict):
    """What every player may see of a game: the keys of service/shapes.py's Game."""
    id: str
    version: int
    created: float
    options: GameOptions
    board: str
    robots: dict[str, list[int]]
    players: list[GamePlayer]
    phase: str
    round: RoundPublic | None
    history: list[RoundRecord]
    winners: list[str] | None
    chips_left: int
    void_streak: NotRequired[int]
    idle_rounds: NotRequired[int]
    finish_reason: NotRequired[str]


DEFAULT_OPTIONS = GameOptions(**{
    "timer_seconds": 60,
    "idle_seconds": 300,
    "exact_bid": False,
    "tie_break": TieBreak.FEWER_CHIPS.value,
    "chips_to_win": None,              # default by player count
    "scoring": Scoring.CHIPS.value,
    "infinity_target": 50,
    "solitaire_timer_factor": 1,       # 2: twice the timer for solitaire
    "black_robot": False,
    "ricochet": Ricochet.TURN.value,
    "void_returns_chip": False,        # house rule: a void round's chip goes back
})


def robots_of(value: Any, players: list[str]) -> dict[str, str]:
    """Robot players by name, each with its strength (robot.Strength), checked."""
    if not isinstance(value, dict):
        raise InvalidInput("robots", "expected an object of robot players' names and strengths")
    strengths = [s.value for s in robots_play.Strength]
    for name, strength in value.items():
        if name not in players:
            raise InvalidInput("robots", f"{name!r} is not one of the players")
        if strength not in strengths:
            raise InvalidInput(f"robots.{name}", f"a robot's strength is one of {', '.join(strengths)}")
    if value and len(players) == 1:
        raise InvalidInput("robots", "a robot plays with others: solitaire is a person's")
    return dict(value)


def options_from_json(value: Any) -> GameOptions:
    value = value or {}
    if not isinstance(value, dict):
        raise InvalidInput("options", "expected an object of game options")
    unknown = sorted(set(value) - set(DEFAULT_OPTIONS))
    if unknown:
        raise InvalidInput(f"options.{unknown[0]}", f"unknown option; options are {', '.join(DEFAULT_OPTIONS)}")
    out = cast(GameOptions, {**DEFAULT_OPTIONS, **value})

    given: dict[str, object] = dict(out)

    def integer(name: str, lo: int, hi: int, allow_none: bool = False) -> None:
        v = given[name]
        if allow_none and v is None:
            return
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            raise InvalidInput(f"options.{name}", f"must be an integer from {lo} to {hi}")

    integer("timer_seconds", 5, 3600)
    integer("idle_seconds", 5, 24 * 3600)
    integer("chips_to_win", 1, 17, allow_none=True)
    integer("infinity_target", 1, 10_000)
    integer("solitaire_timer_factor", 1, 2)
    for name in ("exact_bid", "black_robot", "void_returns_chip"):
        if not isinstance(given[name], bool):
            raise InvalidInput(f"options.{name}", "must be true or false")
    for name, kind in (("tie_break", TieBreak), ("scoring", Scoring), ("ricochet", Ricochet)):
        allowed = [m.value for m in kind]
        if given[name] not in allowed:
            raise InvalidInput(f"options.{name}", f"must be one of {', '.join(allowed)}")
    return out


def _seat(name: str, robot: str | None) -> GamePlayer:
    """A player at the start of a game (a robot's with its strength)."""
    player = GamePlayer(name=name, chips=[], face_down=[], score=0)
    if robot is not None:
        player["robot"] = robot
    return player


class Game:
    """One game's state and the rules that change it."""

    def __init__(self, state: GameState) -> None:
        self.state = state
        self.events: list[GameEvent] = []  # recorded by this change, not yet stored

    # -- creation ---------------------------------------------------------------------

    @classmethod
    def create(cls, game_id: str, players: list[str], board: str | None, options: GameOptions,
               seed: str, now: float, beginner: bool = False, edition: str = "2013",
               robots: dict[str, str] | None = None) -> Game:
        """A new game; `robots` names the players who are robots, with their strength."""
        if not isinstance(players, list) or not 1 <= len(players) <= MAX_PLAYERS:
            raise InvalidInput("players", f"give 1 (solitaire) to {MAX_PLAYERS} player names")
        for i, name in enumerate(players):
            if not isinstance(name, str) or not 1 <= len(name) <= 40:
                raise InvalidInput(f"players[{i}]", "a player's name is 1 to 40 characters")
        if len(set(players)) != len(players):
            raise InvalidInput("players", "player names must differ")
        machines = robots_of(robots or {}, players)
        rng = random.Random(f"game:{seed}")
        spec = board or random_board_spec(rng, edition, barriers=not beginner)
        b = real_board(spec)  # raises InvalidInput for a bad spec
        colours = ROBOT_COLOURS[:5 if options["black_robot"] else 4]
        placed = dict(zip(colours, rng.sample(b.start_cells(), len(colours))))
        state: GameState = {
            "id": game_id, "version": 0, "created": now, "seed": seed, "options": options, "board": spec,
            "robots": {c: list(cell) for c, cell in placed.items()},
            "players": [_seat(n, machines.get(n)) for n in players],
            "deck": list(range(len(b.targets))), "shuffles": 0, "phase": "bidding", "round": None,
            "history": [], "winners": None,
        }
        game = cls(state)
        game._shuffle()
        game._record("created", now, players=players, board=spec)
        game._next_round(now)
        return game

    # -- queries ----------------------------------------------------------------------

    @property
    def solitaire(self) -> bool:
        return len(self.state["players"]) == 1

    def board(self) -> Board:
        return real_board(self.state["board"])

    def puzzle(self) -> Puzzle:
        chip = self._round()["chip"]
        x, y = chip["cell"]
        goal = Goal((x, y), chip["colour"], chip["symbol"])
        robots = {c: tuple(cell) for c, cell in self.state["robots"].items()}
        return Puzzle.create(self.board(), robots, goal, Rules(ricochet=Ricochet(self.state["options"]["ricochet"])))

    def _round(self) -> GameRound:
        """The round in play (the caller knows there is one)."""
        r = self.state["round"]
        if r is None:
            raise GameError(409, "no round is in play")
        return r

    def player_index(self, name: str) -> int:
        for i, p in enumerate(self.state["players"]):
            if p["name"] == name:
                return i
        raise GameError(403, f"no player {name!r} in this game")

    def public(self) -> GamePublic:
        """What every player may see: no deck order, no optimum before the round ends."""
        s = self.state
        out = cast(GamePublic, {k: v for k, v in s.items() if k not in ("deck", "seed", "shuffles")})
        out["chips_left"] = len(s["deck"]) + (1 if s["round"] else 0)
        if s["round"] is not None:
            out["round"] = cast(RoundPublic, {k: v for k, v in s["round"].items()
                                              if k not in ("optimal_length", "optimal_solution", "rating", "robots")})
        return out

    # -- the clock ----------------------------------------------------------------------

    def advance(self, now: float) -> None:
        """Settle every timer that has run out by `now`, at the instant it ran out,
        and every robot's bid or shown solution due by then, at its instant."""
        for _ in range(1000):  # each pass settles one event; rounds can chain
            r = self.state["round"]
            if self._robot_acts(now):
                continue
            if self.state["phase"] == "verifying" and r is not None and r.get("show_ends") is not None \
                    and now >= r["show_ends"]:
                self._turn_passes(r["show_ends"])
                continue
            if self.state["phase"] != "bidding" or r is None:
                return
            if r["timer_ends"] is None and now >= r["idle_ends"]:
                r["timer_started"] = r["idle_ends"]
                r["timer_ends"] = r["idle_ends"] + self.state["options"]["timer_seconds"]
                self._record("timer_started", r["idle_ends"], reason="idle")
                continue
            if r["timer_ends"] is not None and now >= r["timer_ends"]:
                self._timer_ran_out(r["timer_ends"])
                continue
            return

    # -- actions ------------------------------------------------------------------------

    def bid(self, player: str, moves: Any, now: float) -> None:
        self.advance(now)
        i = self.player_index(player)
        if self.state["phase"] != "bidding":
            raise GameError(409, f"no bidding now: the game is {self.state['phase']}")
        if self.solitaire:
            raise GameError(409, "solitaire has no bids: show a solution before the timer runs out")
        if isinstance(moves, bool) or not isinstance(moves, int) or not 1 <= moves <= 99:
            raise InvalidInput("moves", "a bid is a number of moves from 1 to 99")
        r = self._round()
        mine = [b for b in r["bids"] if b["player"] == player]
        if mine and moves >= mine[-1]["moves"]:
            raise GameError(409, f"a bid may only go down: your bid is {mine[-1]['moves']}")
        self._place_bid(i, moves, now)

    def _place_bid(self, i: int, moves: int, now: float) -> None:
        r, player = self._round(), self.state["players"][i]["name"]
        r["bids"].append({"player": player, "moves": moves, "at": now, "seq": len(r["bids"])})
        self.state["idle_rounds"] = 0
        if r["timer_ends"] is None:
            r["timer_started"], r["timer_ends"] = now, now + self.state["options"]["timer_seconds"]
        self._record("bid", now, player=player, moves=moves, chips=len(self.state["players"][i]["chips"]))

    def show(self, player: str, moves: Any, now: float) -> Attempt:
        """The current verifier (or, in solitaire, the player) shows a solution."""
        self.advance(now)
        self.player_index(player)
        return self._show(player, moves_from_json(moves), now)

    def _show(self, player: str, sequence: list[Move], now: float) -> Attempt:
        r = self._round()
        if self.solitaire:
            if self.state["phase"] != "bidding":
                raise GameError(409, f"the game is {self.state['phase']}")
            result = self._judge(sequence, None)
            r["attempts"].append({"player": player, "at": now, **result})
            self._record("attempt", now, player=player, moves=moves_to_json(sequence), **result)
            if result["success"] and result["length"] is not None:  # a success has a length
                self._win(player, sequence, result["length"], now, face_up=True)
            return result
        if self.state["phase"] != "verifying":
            raise GameError(409, "no one is showing a solution now: wait for the timer to run out"
                            if self.state["phase"] == "bidding" else f"the game is {self.state['phase']}")
        if r["order"][0]["player"] != player:
            raise GameError(409, f"it is {r['order'][0]['player']}'s turn to show a solution")
        bid = r["order"][0]["moves"]
        result = self._judge(sequence, bid)
        r["attempts"].append({"player": player, "bid": bid, "at": now, **result})
        self._record("attempt", now, player=player, bid=bid, moves=moves_to_json(sequence), **result)
        if result["success"] and result["length"] is not None:
            self._win(player, sequence, result["length"], now)
        else:
            self._next_verifier(now)  # the robots stay on their markers: nothing moved
        return result

    def _next_verifier(self, at: float) -> None:
        r = self._round()
        r["order"].pop(0)
        if r["order"]:
            r["show_ends"] = at + self.state["options"]["timer_seconds"]
        else:
            self._unclaimed(at, "no bidder showed a solution")

    def _turn_passes(self, at: float) -> None:
        """A verifier who shows nothing within the timer's length loses the turn, as a failed attempt."""
        r = self._round()
        verifier = r["order"][0]
        result = Attempt(success=False, length=None, legal=None, solved=False, impossible_bid=False,
                         reason=f"no solution shown within {self.state['options']['timer_seconds']} s")
        r["attempts"].append({"player": verifier["player"], "bid": verifier["moves"], "at": at, **result})
        self._record("attempt", at, player=verifier["player"], bid=verifier["moves"], **result)
        self._next_verifier(at)

    # -- the rules' steps ---------------------------------------------------------------

    def _judge(self, sequence: list[Move], bid: int | None) -> Attempt:
        p = self.puzzle()
        verdict = check(p, sequence)
        r = self._round()
        impossible = bid is not None and r["optimal_length"] is not None and bid < r["optimal_length"]
        if bid is None:
            fits = True
        else:
            fits = verdict.length == bid if self.state["options"]["exact_bid"] else verdict.length <= bid
        success = verdict.legal and verdict.solved and fits and not impossible
        reason = None
        if not success:
            reason = ("the bid is below the round's optimum: no solution that short exists" if impossible
                      else verdict.reason or (f"{verdict.length} moves do not match the bid of {bid}"
                                              if self.state["options"]["exact_bid"]
                                              else f"{verdict.length} moves are more than the bid of {bid}"))
        return {"success": success, "length": verdict.length, "legal": verdict.legal, "solved": verdict.solved,
                "impossible_bid": impossible, "reason": reason}

    def _timer_ran_out(self, at: float) -> None:
        r = self._round()
        if self.solitaire:
            self._unclaimed(at, "the timer ran out", face_down=True)
            return
        if not r["bids"]:
            self.state["idle_rounds"] = self.state.get("idle_rounds", 0) + 1
            self._unclaimed(at, "the timer ran out with no bid")
            return
        latest: dict[str, BidPlaced] = {}
        for b in r["bids"]:
            latest[b["player"]] = b  # the lowest is the last: bids only go down
        chips = {p["name"]: len(p["chips"]) for p in self.state["players"]}
        if self.state["options"]["tie_break"] == TieBreak.FEWER_CHIPS:
            order = sorted(latest.values(), key=lambda b: (b["moves"], chips[b["player"]], b["seq"]))
        else:
            order = sorted(latest.values(), key=lambda b: (b["moves"], b["seq"]))
        r["order"] = [{"player": b["player"], "moves": b["moves"]} for b in order]
        r["show_ends"] = at + self.state["options"]["timer_seconds"]  # each verifier has a timer's length
        self.state["phase"] = "verifying"
        self._record("verification", at, order=r["order"])

    def _win(self, player: str, sequence: list[Move], length: int, now: float, face_up: bool = True) -> None:
        r = self._round()
        final = self._final_positions(sequence)
        self.state["robots"] = final  # the moved robots stay where they ended
        players = self.state["players"]
        winner = players[self.player_index(player)]
        winner["chips"].append(r["chip"])
        if self.state["options"]["scoring"] == Scoring.INFINITY:
            for p in players:
                if p is not winner:
                    p["score"] += length
        self._close_round(now, {"winner": player, "length": length, "moves": moves_to_json(sequence)})

    def _unclaimed(self, at: float, reason: str, face_down: bool = False) -> None:
        r = self._round()
        if face_down:  # solitaire: the chip is kept face down
            self.state["players"][0]["face_down"].append(r["chip"])
        else:
            self.state["deck"].append(r["chip"]["index"])
            self._shuffle()
        self._close_round(at, {"winner": None, "reason": reason})

    def _close_round(self, at: float, outcome: RoundOutcome) -> None:
        r = self._round()
        record: RoundRecord = {"number": r["number"], "chip": r["chip"], "optimal_length": r["optimal_length"],
                  "optimal_solution": r["optimal_solution"], "bids": r["bids"], "attempts": r["attempts"], **outcome}
        self.state["history"].append(record)
        self.state["round"] = None
        self._record("round_over", at, **{k: v for k, v in record.items() if k not in ("bids", "attempts")})
        if self._over():
            self._finish(at)
        elif self.state.get("idle_rounds", 0) >= ABANDONED_AFTER and not self.solitaire:
            self._finish(at, reason="abandoned")  # whoever keeps polling, an unplayed game ends
        else:
            self.state["phase"] = "bidding"
            self._next_round(at)

    def _over(self) -> bool:
        s, o = self.state, self.state["options"]
        players = s["players"]
        if not s["deck"]:
            return True
        if self.solitaire:
            return False
        if o["scoring"] == Scoring.INFINITY:
            return any(p["score"] > o["infinity_target"] for p in players)
        goal = o["chips_to_win"] or CHIPS_TO_WIN.get(len(players))
        return goal is not None and any(len(p["chips"]) >= goal for p in players)

    def _finish(self, at: float, reason: str = "won") -> None:
        s = self.state
        s["finish_reason"] = reason
        players = s["players"]
        if self.solitaire:
            p = players[0]
            s["winners"] = [p["name"]] if len(p["chips"]) > len(p["face_down"]) else []
        elif s["options"]["scoring"] == Scoring.INFINITY:
            best = min(p["score"] for p in players)
            s["winners"] = [p["name"] for p in players if p["score"] == best]
        else:
            best = max(len(p["chips"]) for p in players)
            s["winners"] = [p["name"] for p in players if len(p["chips"]) == best]
        s["phase"] = "finished"
        self._record("finished", at, winners=s["winners"], reason=reason)

    def _next_round(self, now: float) -> None:
        s = self.state
        b = self.board()
        index = s["deck"].pop()
        t = b.targets[index]
        number = len(s["history"]) + 1
        chip = Chip(index=index, colour=t.colour, symbol=t.symbol, cell=list(t.cell))
        r = GameRound(number=number, chip=chip, started=now, idle_ends=now + s["options"]["idle_seconds"],
                      timer_started=None, timer_ends=None, bids=[], order=[], attempts=[],
                      optimal_length=None, optimal_solution=None, void=False)
        s["round"] = r
        # The round's optimum is searched for by the caller, outside any transaction
        # (rate_round), before anyone can have shown a solution.
        r["rating"] = "pending"
        p = self.puzzle()
        rnd = round_of(p)
        r["void"] = rnd.void
        self._record("round", now, number=number, chip=chip, void=rnd.void)
        if self.solitaire:
            factor = s["options"]["solitaire_timer_factor"]
            r["timer_started"] = now
            r["timer_ends"] = now + factor * s["options"]["timer_seconds"]
        # House rule: a void round's chip goes back, unless every chip left is void here.
        if rnd.void and s["options"]["void_returns_chip"] and s.get("void_streak", 0) <= len(s["deck"]):
            s["void_streak"] = s.get("void_streak", 0) + 1
            self._unclaimed(now, f"void round ({rnd.void_reason})")
        else:
            s["void_streak"] = 0

    def unrated(self) -> tuple[int, Puzzle] | None:
        """The open round whose optimum is still to be searched for: (number, puzzle)."""
        r = self.state["round"]
        if r is None or r.get("rating") != "pending" or self.state["phase"] == "finished":
            return None
        return r["number"], self.puzzle()

    def rate_round(self, number: int, length: int | None, moves: list[Move], now: float | None = None) -> None:
        """Record round `number`'s optimum (searched for by the caller) at `now`; kept
        hidden until the round is over, with the robots' plans.  A round already
        rated, or over, is left alone."""
        r = self.state["round"]
        if r is None or r["number"] != number or r.get("rating") != "pending":
            return
        r["optimal_length"] = length
        r["optimal_solution"] = moves_to_json(moves) if length is not None else None
        r["rating"] = "done"  # no event: nothing a player may see has changed
        if length is not None:
            self._plan_robots(moves, now)

    # -- robot players (robot.py: what each bids and when, from the seed) -------------------

    def _plan_robots(self, optimum: list[Move], now: float | None) -> None:
        """Each robot's bids this round, at instants from the round's start (none
        before `now`, when the optimum came late: a robot thinks once it is known)."""
        r, puzzle = self._round(), self.puzzle()
        plans = {}
        for p in self.state["players"]:
            if "robot" in p:
                bids = robots_play.plan(self.state["seed"], p["name"], p["robot"], puzzle, optimum)
                plans[p["name"]] = [[max(r["started"] + b.at, now or 0.0), b.moves] for b in bids]
        if plans:
            r["robots"] = plans

    def _robot_acts(self, now: float) -> bool:
        """The next robot action due by `now` and before any timer runs out, taken: True if one was."""
        s, r = self.state, self.state["round"]
        if r is None or not r.get("robots"):
            return False
        if s["phase"] == "verifying":
            turn = r["order"][0]
            if turn["player"] not in r["robots"] or r.get("show_ends") is None:
                return False
            at = r["show_ends"] - s["options"]["timer_seconds"] + robots_play.show_delay(turn["moves"])
            if at > now or at >= r["show_ends"]:
                return False
            optimum = moves_from_json(r["optimal_solution"])
            self._show(turn["player"], robots_play.solution(self.puzzle(), optimum, turn["moves"]), at)
            return True
        if s["phase"] != "bidding":
            return False
        due = min(((bids[0][0], name) for name, bids in r["robots"].items() if bids), default=None)
        ends = r["timer_ends"] if r["timer_ends"] is not None else r["idle_ends"]
        if due is None or due[0] > now or due[0] >= ends:
            return False
        at, moves = r["robots"][due[1]].pop(0)
        self._place_bid(self.player_index(due[1]), int(moves), at)
        return True

    def _final_positions(self, sequence: list[Move]) -> dict[str, list[int]]:
        final = replay(self.puzzle(), sequence).positions[-1]
        return {c: list(cell) for c, cell in final.items()}

    def _shuffle(self) -> None:
        s = self.state
        random.Random(f"deck:{s['seed']}:{s['shuffles']}").shuffle(s["deck"])
        s["shuffles"] += 1

    def _record(self, kind: str, at: float, **data: Any) -> None:
        self.state["version"] += 1
        # The event's own keys beside the three every event has (a TypedDict value may hold more keys).
        self.events.append(cast(GameEvent, {"version": self.state["version"], "type": kind, "at": at, **data}))
