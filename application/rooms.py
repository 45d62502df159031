"""Rooms: a game's players gather by a shared link.  The host opens a room with
the board and house rules, others take seats by name, and the host starts the
game; each seat's token (kept by its browser, never in the link) is its token
in the game too.  A room of one starts a solitaire game.  The host may seat
robot players of a chosen strength (solver/play/robot.py), who need no token.
A room in race mode starts a race instead (solver/play/race.py): everyone plays
the same puzzles for a set time, and the room's event stream tells the progress."""

from __future__ import annotations

import random
import secrets
import time
from collections.abc import Callable, Iterator, Mapping
from typing import NotRequired, TypedDict, TypeVar, cast

from solver.errors import InvalidInput
from solver.model.board import random_board_spec, real_board
from solver.model.puzzle import Move, Puzzle, Ricochet, Rules, moves_from_json
from solver.play.game import MAX_PLAYERS, GameError, GameEvent, GameOptions, GameState, options_from_json
from solver.play.race import Race, RacePublic, RaceResult, RaceState, found_puzzles
from solver.play.robot import Strength
from solver.search.solve import solve
from workers.stores.rooms import RoomState, RoomStore

from . import Context, games
from .problems import BY_STATUS, Problem, echo

SEAT = "0" * 64  # a seat as the room keeps it: its token's hash (and its name)
T = TypeVar("T")


class NewRoom(TypedDict):
    """POST /v1/rooms's body as loaded: the fields of service/requests/rooms.py's NewRoom."""
    name: str
    board: str
    options: Mapping[str, object]  # checked by options_from_json
    seed: NotRequired[str | None]
    mode: str
    race_seconds: int


class RoomPublic(TypedDict):
    """A room as anyone holding its link sees it: the keys of service/shapes.py's Room."""
    id: str
    version: int
    created: float
    host: str
    players: list[str]
    board: str
    options: GameOptions
    game: str | None
    robots: NotRequired[dict[str, str]]
    mode: str
    race_seconds: int | None
    race: NotRequired[RacePublic]


def _rooms(ctx: Context) -> RoomStore:
    if ctx.stores is None:
        raise Problem("unavailable", "rooms need Redis: set REDIS_URL or run `ricochet serve`")
    return ctx.stores.rooms


RACE_SOLVE_BUDGET = 2.0  # seconds the referee spends on a race puzzle's optimum (one out of reach is drawn again)


def public(state: RoomState) -> RoomPublic:
    """What anyone holding the link may see: not the seed, which fixes the deck, nor
    a race's puzzles before anyone reached them."""
    out = cast(RoomPublic, {k: v for k, v in state.items() if k not in ("seed", "race_events")})
    out.setdefault("mode", "game")
    race = state.get("race")
    if race:
        out["race"] = Race(race).public()
    return out


def create(ctx: Context, body: NewRoom, now: float) -> tuple[RoomPublic, str]:
    """A new room (a NewRoom, loaded) with its host seated, and the host's token."""
    try:
        options = options_from_json(body["options"])
    except InvalidInput as e:
        raise e if e.field.startswith("options") else e.within("options") from None
    if body["board"] not in games.KEYWORDS:
        real_board(body["board"])  # raises InvalidInput("board", ...) for a bad spec
    games.within_budget(ctx)
    token = secrets.token_urlsafe(24)
    for _ in range(5):
        state: RoomState = {"id": secrets.token_urlsafe(9), "version": 1, "created": now, "host": body["name"],
                 "players": [body["name"]], "board": body["board"], "options": options, "seed": body.get("seed"),
                 "game": None, "mode": body.get("mode", "game"), "race_seconds": body.get("race_seconds")}
        if _rooms(ctx).create(state, body["name"], token):
            games.charge(ctx, games.stored_size(state, SEAT, body["name"], keys=2))
            return public(state), token
    raise RuntimeError("no free room id in five draws")


def _state(ctx: Context, rid: str) -> RoomState:
    state = _rooms(ctx).get(rid)
    if state is None:
        raise Problem("not-found", f"no room {echo(rid)!r}: rooms are kept six hours after their last seat is "
                      "taken, two days once their game starts")
    return state


def get(ctx: Context, rid: str) -> RoomPublic:
    return public(_state(ctx, rid))


def join(ctx: Context, rid: str, name: str) -> tuple[RoomPublic, str]:
    """Seat a new player by name: their token (the seat charged to the caller's day)."""
    games.within_budget(ctx)
    token = secrets.token_urlsafe(24)

    def seat(state: RoomState) -> None:
        if state["game"] is not None or state.get("race"):
            raise Problem("conflict", "the game in this room has started: ask the host for a new room")
        if name in state["players"]:
            raise Problem("conflict", f"{name!r} is taken in this room: choose another name")
        if len(state["players"]) >= MAX_PLAYERS:
            raise Problem("conflict", f"the room is full ({MAX_PLAYERS} players)")
        state["players"].append(name)
        state["version"] += 1

    state = _changed(ctx, rid, _rooms(ctx).update(rid, seat, token=(token, name)))[0]
    games.charge(ctx, games.stored_size(SEAT, name, name))  # the seat, and the name in the room's players
    return public(state), token


def _changed(ctx: Context, rid: str, changed: tuple[RoomState, T] | None) -> tuple[RoomState, T]:
    """A change's (room, result); not-found when there was no room to change."""
    if changed is None:
        _state(ctx, rid)  # raises not-found
        raise Problem("not-found", f"no room {echo(rid)!r}")  # gone between the two reads
    return changed


def seated(ctx: Context, rid: str, token: str) -> str:
    """The name of the player whose token this is."""
    games.presented(token, "your seat's token")
    name = _rooms(ctx).seat(rid, token)
    if name is None:
        _state(ctx, rid)  # raises not-found
        raise Problem("forbidden", "that token is not a seat's token in this room")
    return name


def start(ctx: Context, rid: str, token: str, now: float) -> tuple[RoomPublic, GameState | None]:
    """The host starts the room's game: (room, game state); or its race: (room, None)."""
    before = _state(ctx, rid)
    name = seated(ctx, rid, token)
    if before["host"] != name:
        raise Problem("forbidden", f"only the host ({before['host']}) starts the game")
    if before["game"] is not None or before.get("race"):
        raise Problem("conflict", "the game in this room has started")
    games.within_budget(ctx)  # the game is the host's to pay for
    if before.get("mode") == "race":
        return start_race(ctx, rid, before, now), None
    stores = _rooms(ctx)
    body = games.NewGame(players=before["players"], board=before["board"], options=before["options"],
                         seed=before["seed"])
    game = games.start(ctx, body, now, stores.tokens(rid), robots=before.get("robots", {}))

    def record(state: RoomState) -> str | None:
        if state["game"] is None and state["players"] == body["players"]:
            state["game"] = game["id"]
            state["version"] += 1
        return state["game"]

    state, gid = _changed(ctx, rid, stores.update(rid, record))
    if gid != game["id"]:  # someone joined or started meanwhile: this game is never played
        raise Problem("conflict", "the room changed while the game was being set up: try again")
    return public(state), game


def robot_name(strength: Strength, taken: list[str]) -> str:
    """A robot's seat name when the host gave none: "Master robot", then "Master robot 2"..."""
    base = f"{strength.value.capitalize()} robot"
    return next(name for n in range(1, MAX_PLAYERS + 2) if (name := base if n == 1 else f"{base} {n}") not in taken)


def add_robot(ctx: Context, rid: str, token: str, strength: str, name: str | None) -> RoomPublic:
    """The host seats a robot player of `strength` (named `name`, or by its strength)."""
    before = _state(ctx, rid)
    host = seated(ctx, rid, token)
    if before["host"] != host:
        raise Problem("forbidden", f"only the host ({before['host']}) seats robots")
    games.within_budget(ctx)
    level = Strength(strength)
    seated_as = [name]

    if before.get("mode") == "race":
        raise Problem("conflict", "robots sit at games, not races: this room races")

    def seat(state: RoomState) -> None:
        if state["game"] is not None:
            raise Problem("conflict", "the game in this room has started: robots join before the start")
        if len(state["players"]) >= MAX_PLAYERS:
            raise Problem("conflict", f"the room is full ({MAX_PLAYERS} players)")
        robot = name or robot_name(level, state["players"])
        if robot in state["players"]:
            raise Problem("conflict", f"{robot!r} is taken in this room: choose another name")
        state["players"].append(robot)
        state.setdefault("robots", {})[robot] = level.value
        state["version"] += 1
        seated_as[0] = robot

    state = _changed(ctx, rid, _rooms(ctx).update(rid, seat))[0]
    games.charge(ctx, games.stored_size(seated_as[0], seated_as[0], level.value))
    return public(state)


def remove_robot(ctx: Context, rid: str, token: str, name: str) -> RoomPublic:
    """The host takes a robot's seat away again, before the game starts."""
    before = _state(ctx, rid)
    if before["host"] != seated(ctx, rid, token):
        raise Problem("forbidden", f"only the host ({before['host']}) seats and unseats robots")

    def unseat(state: RoomState) -> None:
        if state["game"] is not None:
            raise Problem("conflict", "the game in this room has started: robots leave before the start")
        if name not in state.get("robots", {}):
            raise Problem("not-found", f"no robot {echo(name)!r} sits in this room")
        state["players"].remove(name)
        del state["robots"][name]
        state["version"] += 1

    return public(_changed(ctx, rid, _rooms(ctx).update(rid, unseat))[0])


# -- races ------------------------------------------------------------------------------


def _search(puzzle: Puzzle) -> list[Move] | None:
    answer = solve(puzzle, time_budget=RACE_SOLVE_BUDGET)
    return list(answer.moves) if answer.length is not None else None


def _rules(state: RoomState) -> Rules:
    return Rules(ricochet=Ricochet(state["options"]["ricochet"]))


def start_race(ctx: Context, rid: str, before: RoomState, now: float) -> RoomPublic:
    """The room's race, its first puzzles searched before anyone sees one."""
    seed = before["seed"] if before["seed"] is not None else secrets.token_hex(16)
    board = before["board"]
    if board in games.KEYWORDS:
        board = random_board_spec(random.Random(f"game:{seed}"), "1999" if board == "1999" else "2013",
                                  barriers=board != "beginner")
    race = Race.create(before["players"], board, str(seed), before.get("race_seconds") or 180, now)
    drawn, found = found_puzzles(race.state["seed"], board, _rules(before), 0, race.wanted(), 0, _search)
    race.add_puzzles(0, drawn, found)
    players = before["players"]

    def record(state: RoomState) -> bool:
        if state.get("race") or state["players"] != players:
            return False
        state["race"], state["race_events"] = race.state, race.events
        state["version"] += 1
        return True

    state, started = _changed(ctx, rid, _rooms(ctx).update(rid, record))
    if not started:
        raise Problem("conflict", "the room changed while the race was being set up: try again")
    games.charge(ctx, games.stored_size(race.state, *race.events))
    return public(state)


def _racing(ctx: Context, rid: str, action: Callable[[Race], T], now: float) -> tuple[RoomState, T]:
    """Apply an action to the room's race atomically (its clock settled first)."""

    def act(state: RoomState) -> T:
        held = state.get("race")
        if not held:
            raise Problem("conflict", "this room has no race running: a race starts when the host starts "
                          "a room opened with mode race")
        race = Race(held)
        race.advance(now)
        result = action(race)
        state["race_events"].extend(race.events)
        return result

    try:
        changed = _rooms(ctx).update(rid, act)
    except GameError as e:
        raise Problem(BY_STATUS.get(e.status, "conflict"), str(e)) from None
    return _changed(ctx, rid, changed)


def _ready(ctx: Context, rid: str, state: RoomState) -> RoomState:
    """Search the race's next puzzles (outside any transaction) when a player nears the last one held."""
    race = Race(_race(state))
    if race.state["finished"] or len(race.state["puzzles"]) >= race.wanted():
        return state
    since = race.state["drawn"]
    drawn, found = found_puzzles(race.state["seed"], race.state["board"], _rules(state), since, race.wanted(),
                                 len(race.state["puzzles"]), _search)
    after = _rooms(ctx).update(rid, lambda s: Race(_race(s)).add_puzzles(since, drawn, found))
    return after[0] if after is not None else state


def _race(state: RoomState) -> RaceState:
    """The room's race, which the caller knows has started."""
    race = state.get("race")
    if race is None:
        raise Problem("conflict", "this room has no race running")
    return race


def race_move(ctx: Context, rid: str, token: str, moves: object | None, now: float) -> tuple[RoomPublic, RaceResult]:
    """A racer shows a solution to their current puzzle (`moves`), or skips it (None): (room, result)."""
    name = seated(ctx, rid, token)
    sequence = None if moves is None else moves_from_json(moves)
    state, result = _racing(ctx, rid, lambda race: race.skip(name, now) if sequence is None
                            else race.solve(name, sequence, now), now)
    games.charge(ctx, games.stored_size(result))
    return public(_ready(ctx, rid, state)), result


def follow(ctx: Context, rid: str, seen: int, clock: Callable[[], float], seconds: float,
           poll: float = 0.25) -> Iterator[GameEvent]:
    """The room's race events after version `seen`, each once and in order, as they
    happen (its end settled as the clock runs), for `seconds` or until it ends."""
    _state(ctx, rid)  # raises not-found
    return _race_events(ctx, rid, seen, clock, time.monotonic() + seconds, poll)


def _race_events(ctx: Context, rid: str, seen: int, clock: Callable[[], float], deadline: float,
                 poll: float) -> Iterator[GameEvent]:
    while True:
        state = _rooms(ctx).get(rid)
        race = state.get("race") if state else None
        if race and not race["finished"] and clock() >= race["ends"]:
            state, _ = _racing(ctx, rid, lambda r: None, clock())
            race = state["race"]
        for event in state.get("race_events", []) if state is not None else []:
            if event["version"] > seen:
                seen = event["version"]
                yield event
        if state is None or (race and race["finished"]) or time.monotonic() >= deadline:
            return
        time.sleep(poll)
