"""The shapes of what the API sends and takes, as marshmallow schemas: openapi.yaml's
components are generated from them (service/contract.py), beside the request
schemas that check bodies and queries (service/requests/, workers/schemas.py).
Puzzles, moves and answers are docs/formats.md's shapes; solver.model.puzzle
checks them (with field-naming messages), so these describe them for clients.

Two field options say what JSON Schema alone cannot infer from a field:
`metadata={"shape": Schema}` documents a loosely checked field (a dict, a raw
value) as that schema, and `Either(...)` is one of several shapes.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from marshmallow import EXCLUDE, RAISE, Schema, fields, post_dump, validate

from application import JobState
from solver.model.geometry import DIRECTIONS, ROBOT_COLOURS, SYMBOLS, VORTEX
from solver.model.puzzle import Ricochet
from solver.model.puzzle import Rules as RuleOptions
from solver.play.game import Scoring, TieBreak
from solver.production.difficulty import GRADES
from solver.production.themes import THEMES
from solver.search.solution import STATUSES
from workers.webhooks import ALL_EVENTS as ALL_WEBHOOK_EVENTS
from workers.webhooks import DISABLED_EVENT, TEST_EVENT
from workers.webhooks import EVENTS as WEBHOOK_EVENTS

from .errors import KINDS

CODE_PATTERN = "^[A-Za-z0-9_-]+$"
DRIFTINGDROIDS_PATTERN = "^[0-9A-F]{4}\\+[45][0-4F]\\+([0-9A-F]{2}){4,5}\\+[0-9A-F]{2}$"


class Either(fields.Raw):
    """One of several shapes (schemas, fields, or plain JSON Schema dicts): documents
    a value that several forms may take; checking it is left to the code that reads it."""

    def __init__(self, *alternatives: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.alternatives = alternatives


class Shape(Schema):
    """What the service sends: clients must accept properties added later."""

    class Meta:
        unknown = EXCLUDE


class Open(Shape):
    """A shape whose instances carry more than it names (a game event's fields
    depend on its type): dumped whole, the named fields through their schema."""

    @post_dump(pass_original=True)
    def _keep_the_rest(self, data: dict[str, Any], original: Any, **_: Any) -> dict[str, Any]:
        return {**{k: v for k, v in original.items() if k not in data}, **data}


def _strict(cls: type[Schema]) -> type[Schema]:
    """A shape that admits no other properties."""
    cls.Meta = type("Meta", (), {"unknown": RAISE})  # type: ignore[misc, assignment]  # a Meta made at run time
    return cls


def one_of(kind: type[Enum]) -> validate.OneOf:
    """One of an enum's values (as JSON spells them)."""
    return validate.OneOf([m.value for m in kind])


def colour(**kwargs: Any) -> fields.String:
    return fields.String(validate=validate.OneOf(ROBOT_COLOURS), **kwargs)


def cell(**kwargs: Any) -> fields.List[int]:
    return fields.List(fields.Integer(validate=validate.Range(min=0)), validate=validate.Length(2, 2), **kwargs)


def moves(**kwargs: Any) -> fields.List[dict[str, Any]]:
    return fields.List(fields.Nested(Move), **kwargs)


def date(**kwargs: Any) -> fields.String:
    """A date as the service writes it (YYYY-MM-DD): dumped as the string it is."""
    return fields.String(metadata={"format": "date"}, **kwargs)


def grade(**kwargs: Any) -> fields.String:
    return fields.String(validate=validate.OneOf(GRADES), **kwargs)


def driftingdroids_id() -> fields.String:
    return fields.String(required=True, allow_none=True, validate=validate.Regexp(DRIFTINGDROIDS_PATTERN), metadata={
        "description": "The position as a DriftingDroids game ID (e.g. 0765+42+2E21BD0F+93), where that program "
                       "shows the board as we do: real quadrants without diagonal barriers (every 1999-edition "
                       "board) and the standard robots; null otherwise. DriftingDroids keeps no rule options: "
                       "under the ricochet rule its optimum may be shorter."})


class Move(Shape):
    robot = colour(required=True)
    direction = fields.String(required=True, validate=validate.OneOf(DIRECTIONS))


def _rule(kind: type) -> fields.Field[Any]:
    """A rule option's field: a bool, or one of an enum's values."""
    return fields.Boolean() if kind is bool else fields.String(validate=one_of(kind))


# A puzzle's rules: one field per option of solver.model.puzzle.Rules (a new option is here at once).
Rules = _strict(Shape.from_dict({name: _rule(kind) for name, kind in RuleOptions.options().items()}, name="Rules"))


def rules() -> fields.Nested:
    return fields.Nested(Rules, allow_none=True,
                         metadata={"description": "The rules in force; left out or null, docs/rules.md's defaults"})


class BoardObject(Shape):
    width = fields.Integer(required=True, validate=validate.Range(4, 32))
    height = fields.Integer(required=True, validate=validate.Range(4, 32))
    walls = fields.List(fields.List(fields.Raw()), required=True)
    blocked = fields.List(cell(), required=True)
    targets = fields.List(fields.Dict(), required=True)
    diagonals = fields.List(fields.Dict(), required=True)
    openings = fields.List(fields.List(fields.Raw()), required=True)
    spec = fields.String()
    steps = fields.List(fields.List(fields.Integer()), metadata={"description": "with ?tables=true"})
    barriers = fields.Dict(metadata={"description": "with ?tables=true"})
    deflect = fields.Dict(metadata={"description": "with ?tables=true"})


class Target(Shape):
    colour = fields.String()
    symbol = fields.String(validate=validate.OneOf(SYMBOLS + (VORTEX,)))
    cell = cell()


class Puzzle(Shape):
    board = Either({"type": "string", "description": "Real board spec, e.g. green-A,yellow-B,red-B,blue-B"},
                   BoardObject, required=True)
    robots = fields.Dict(keys=fields.String(), values=cell(), required=True)
    target = fields.Nested(Target, required=True)
    rules = rules()


@_strict
class ByCode(Shape):
    code = fields.String(required=True, validate=validate.Regexp(CODE_PATTERN),
                         metadata={"description": "a puzzle code (URL-safe base64)"})


@_strict
class ByDriftingDroidsId(Shape):
    driftingdroids_id = fields.String(required=True, metadata={"examples": ["0765+42+2E21BD0F+93"]})
    rules = rules()


PUZZLE_REF = Either(Puzzle, ByCode, ByDriftingDroidsId, metadata={
    "description": "A puzzle: in the docs/formats.md form, by its code, or by a DriftingDroids game ID (with `rules` "
                   "beside it when not docs/rules.md's defaults)"})


class Answer(Shape):
    length = fields.Integer(required=True, allow_none=True)
    moves = moves(required=True)
    status = fields.String(required=True, validate=validate.OneOf(STATUSES))
    lower_bound = fields.Integer()
    message = fields.String()
    void = fields.Boolean()
    void_reason = fields.String()
    finisher = fields.String()
    robots_moved = fields.List(fields.String())
    code = fields.String()
    stats = fields.Dict()


class PlayerRating(Shape):
    value = fields.Float(required=True, metadata={"description": "Glicko-2 rating (1500 for a new player)"})
    deviation = fields.Float(required=True, metadata={"description": "how uncertain the rating is (RD)"})


class PuzzleRating(PlayerRating):
    plays = fields.Integer(required=True, metadata={"description": "players' first attempts"})
    wins = fields.Integer(required=True, metadata={"description": "first attempts that reached the optimum"})


class RatingChange(PlayerRating):
    change = fields.Float(required=True, metadata={"description": "how far this attempt moved the rating"})


class AttemptResult(Shape):
    rated = fields.Boolean(required=True, metadata={
        "description": "whether this attempt moved the ratings: only a player's first at a puzzle handed without "
                       "its answer (GET /v1/puzzles/next or /v1/puzzles/random with solution=false, GET /v1/daily), "
                       "answered within the round and before this client was shown the answer, once the puzzle's "
                       "optimum is proven (docs/ratings.md)"})
    won = fields.Boolean(metadata={"description": "the answer reached the target in the optimal number of moves"})
    reason = fields.String(metadata={"description": "why the attempt could not be rated"})
    player = fields.Nested(RatingChange)
    puzzle = fields.Nested(PuzzleRating)


class Verdict(Shape):
    legal = fields.Boolean(required=True)
    solved = fields.Boolean(required=True)
    length = fields.Integer(required=True)
    ricochet = fields.Boolean(required=True)
    reached_target = fields.Boolean()
    finisher = fields.String(allow_none=True)
    void = fields.Boolean()
    void_reason = fields.String()
    first_bad_move = fields.Integer()
    reason = fields.String()
    optimal = fields.Boolean(required=True)
    optimal_length = fields.Integer(required=True, allow_none=True)
    optimality = fields.String(validate=validate.OneOf(["proven", "unknown"]), metadata={
        "description": "unknown when the optimum was not found within the request's search budget (then optimal "
                       "is false); POST /v1/solve searches longer, and verify knows the optimum afterwards.  Daily "
                       "puzzles and pack puzzles are known at once."})
    attempt = fields.Nested(AttemptResult, metadata={"description": "with `player` in the request: the attempt "
                                                                    "recorded and the ratings after it"})


class DailyStreak(Shape):
    streak = fields.Integer(required=True, metadata={"description": "days in a row up to today or yesterday on "
                                                                     "which the player solved the daily puzzle "
                                                                     "optimally"})
    best_streak = fields.Integer(required=True)
    last_solved = date(allow_none=True)


class Player(Shape):
    id = fields.String(required=True)
    scope = fields.String(required=True, metadata={"description": "the API key's name, or public"})
    rating = fields.Nested(PlayerRating, required=True)
    attempts = fields.Integer(required=True)
    rated = fields.Integer(metadata={"description": "attempts that moved the rating"})
    wins = fields.Integer(required=True, metadata={"description": "rated attempts solved optimally"})
    daily = fields.Nested(DailyStreak, required=True)


class PastAttempt(Shape):
    code = fields.String(required=True)
    won = fields.Boolean(required=True, metadata={"description": "the answer reached the target in the optimal "
                                                                 "number of moves"})
    length = fields.Integer(required=True, metadata={"description": "moves in the answer"})
    optimal_length = fields.Integer(required=True)
    rated = fields.Boolean(required=True)
    reason = fields.String(metadata={"description": "why the attempt moved no rating"})
    rating = fields.Float(required=True, metadata={"description": "the player's rating after the attempt"})
    change = fields.Float(required=True, metadata={"description": "how far the attempt moved it"})
    t = fields.Float(required=True, metadata={"description": "when (Unix time, seconds)"})


class PlayerHistory(Shape):
    id = fields.String(required=True)
    scope = fields.String(required=True, metadata={"description": "the API key's name, or public"})
    attempts = fields.List(fields.Nested(PastAttempt), required=True, metadata={
        "description": "the player's last attempts, newest first (the last 100 are kept)"})


class Vote(Shape):
    code = fields.String(required=True)
    popularity = fields.Integer(required=True, metadata={"description": "-100 (all down) to 100 (all up)"})
    up = fields.Integer(required=True)
    down = fields.Integer(required=True)


class Difficulty(Shape):
    optimal_length = fields.Integer(required=True)
    fewest_robots_moved = fields.Integer(required=True)
    helper_moves = fields.Integer(required=True)
    robot_switches = fields.Integer(allow_none=True)
    optimal_solutions = fields.Integer(allow_none=True)
    optimal_solutions_capped = fields.Boolean(allow_none=True)
    lone_robot_bound = fields.Integer(allow_none=True)
    bound_gap = fields.Integer(allow_none=True)
    straight_route = fields.Boolean()
    score = fields.Float(required=True)
    grade = grade(required=True)
    graded_by = fields.String(validate=validate.OneOf(["rating"]), metadata={
        "description": "rating: the grade follows the puzzle's rating from play (once 8 players tried it), not "
                       "the formula on its solutions"})
    percentile = fields.Float(allow_none=True)
    code = fields.String()


class Hint(Shape):
    level = fields.Integer(required=True, validate=validate.Range(1, 4))
    optimal_length = fields.Integer(required=True)
    robots_moved = fields.Integer(metadata={"description": "from level 2"})
    robots = fields.List(colour(), metadata={"description": "from level 3"})
    first_move = fields.Nested(Move, allow_none=True, metadata={"description": "level 4"})


class Job(Shape):
    id = fields.String(required=True)
    kind = fields.String(required=True)
    state = fields.String(required=True, validate=one_of(JobState))
    progress = fields.Float(required=True, validate=validate.Range(0, 1))
    created = fields.Float()
    started = fields.Float(allow_none=True)
    finished = fields.Float(allow_none=True)
    error = fields.String(allow_none=True)
    result = fields.Dict(allow_none=True)
    pack_id = fields.String(metadata={"description": "once a pack job has succeeded"})


class FailedItem(Shape):
    index = fields.Integer(required=True)
    error = fields.String(required=True, metadata={"description": "why no puzzle could be made for this item"})


class FieldError(Shape):
    field = fields.String(required=True)
    message = fields.String(required=True)


class Problem(Shape):
    type = fields.String(required=True, validate=validate.OneOf([f"/problems/{kind}" for kind in KINDS]), metadata={
        "description": "The kind of problem, stable for clients to branch on; the service documents each at this "
                       "(relative) URI"})
    title = fields.String(required=True)
    status = fields.Integer(required=True)
    detail = fields.String(required=True)
    field = fields.String(metadata={"description": "Dotted path of the bad field, e.g. robots.red"})
    errors = fields.List(fields.Nested(FieldError),
                         metadata={"description": "Every bad field, when there was more than one"})
    limit = fields.String(metadata={"description": "The rate limit that was exceeded (429): its policy's name in "
                                                   "RateLimit-Policy (\"default\", \"search\"), or for what one "
                                                   "client holds at once, how many"})
    quota = fields.String(metadata={"description": "The hourly quota the work is over (429): \"solve\" or \"pack\", "
                                                   "as X-Quota-Kind and RateLimit-Policy name it"})
    remaining = fields.Integer(metadata={"description": "What is left of that limit or quota (429): RateLimit's `r`, "
                                                        "and X-Quota-Remaining for a quota"})
    reset = fields.Integer(metadata={"description": "Seconds until its window turns (429): Retry-After, RateLimit's "
                                                    "`t`, and X-Quota-Reset for a quota"})
    violated_policies = fields.List(fields.String(), data_key="violated-policies", metadata={
        "description": "The policies exceeded, by their RateLimit-Policy names (draft-ietf-httpapi-ratelimit-headers)"})


# -- puzzles with what the service knows of them -----------------------------------------


class Known(Puzzle):
    """A puzzle (docs/formats.md) with its code and DriftingDroids game ID."""

    code = fields.String(required=True)
    driftingdroids_id = driftingdroids_id()


class Rated(Shape):
    """What play and the solver make of a puzzle (docs/ratings.md)."""

    rating = fields.Nested(PuzzleRating, metadata={
        "description": "Glicko-2, from players' first attempts (POST /v1/verify with `player`); before any, the "
                       "prior from its optimal length and robots moved"})
    popularity = fields.Integer(metadata={"description": "-100 (all votes down) to 100 (all up), 0 without votes "
                                                         "(POST /v1/puzzles/{code}/vote)"})
    themes = fields.List(fields.String(validate=validate.OneOf(list(THEMES))), metadata={
        "description": "what the puzzle asks of its solver, from its optimal solutions (docs/ratings.md)"})


class PuzzleByCode(Known, Rated):
    hash = fields.String(required=True)
    optimal_length = fields.Integer(metadata={"description": "the fewest moves that solve it, once the service "
                                                             "knows (a daily, a random or a solved puzzle)"})


class Made(Known, Rated):
    """A generated puzzle: its optimal solution and difficulty report."""

    optimal_length = fields.Integer(required=True)
    solution = moves(required=True)
    difficulty = fields.Nested(Difficulty, required=True)


class RandomPuzzle(Made):
    seed = fields.String(required=True)
    solution = moves(metadata={"description": "an optimal solution; left out with solution=false (a round: the "
                                              "player's first answer is rated)"})


class NextPuzzle(RandomPuzzle):
    aim = fields.Float(required=True, metadata={"description": "the rating looked for: the player's plus the "
                                                                "difficulty's offset"})
    off_aim = fields.Float(required=True, metadata={
        "description": "how far from the aim the selector had to go: the puzzle's rating minus `aim`.  With a "
                       "theme, when no puzzle with it is near the aim, the window around the aim widens a length "
                       "at a time (Lichess's compromise) rather than fail (docs/ratings.md)"})


class ThemeHeld(Shape):
    count = fields.Integer(required=True, metadata={"description": "puzzles the library holds with the theme"})
    rating_min = fields.Integer(required=True, allow_none=True, metadata={
        "description": "the lowest rating they start at (null: none held)"})
    rating_max = fields.Integer(required=True, allow_none=True, metadata={"description": "the highest"})


class ThemeEntry(ThemeHeld):
    theme = fields.String(required=True)
    description = fields.String(required=True)
    by_ricochet = fields.Dict(keys=fields.String(), values=fields.Nested(ThemeHeld), required=True, metadata={
        "description": "the same under each ricochet option (the top-level figures are the ricochet rule's, "
                       "the default)"})


class ThemeList(Shape):
    themes = fields.List(fields.Nested(ThemeEntry), required=True)


class Solutions(Shape):
    code = fields.String(required=True)
    length = fields.Integer(required=True, metadata={"description": "the optimal length"})
    count = fields.Integer(required=True, metadata={
        "description": "distinct optimal solutions: solutions that differ only in the order of independent moves "
                       "(moves of different robots that, taken the other way round, leave every robot where it "
                       "was) count as one"})
    complete = fields.Boolean(required=True, metadata={
        "description": "every ordering was listed, so `count` is exact; false: `count` is of the first 2,000 "
                       "orderings"})
    orderings = fields.Integer(required=True, metadata={"description": "optimal solutions counting every order "
                                                                       "apart (up to 1,000,000)"})
    solutions = fields.List(moves(), required=True, metadata={"description": "one solution of each class, up to "
                                                                             "`limit`"})


class PackItem(Made):
    index = fields.Integer(required=True, metadata={"description": "the item's place in the pack, from 0"})


class Pack(Shape):
    pack_id = fields.String(required=True)
    title = fields.String(required=True, metadata={"description": "the title given at creation, else what the pack "
                                                                  "holds in words; its book's header"})
    count = fields.Integer(required=True, metadata={"description": "puzzles made"})
    request = fields.Dict()
    pairs = fields.Integer(metadata={"description": "the (board, target) pairs the puzzles are spread over: a "
                                                    "pack takes the pairs the deployment holds at each length in "
                                                    "turns"})
    puzzles = fields.List(fields.Nested(PackItem), required=True)
    failed = fields.List(fields.Nested(FailedItem), required=True)


class CodedHint(Hint):
    code = fields.String(required=True)


class DailyHint(CodedHint):
    date = date(required=True)


class DailySolution(Shape):
    date = fields.String(required=True)
    code = fields.String(required=True)
    length = fields.Integer(required=True)
    moves = moves(required=True)
    status = fields.Constant("optimal", required=True)


class DayStats(Shape):
    date = date(required=True)
    players = fields.Integer(required=True, validate=validate.Range(min=0), metadata={
        "description": "players counted: each player's first finish of the day's puzzle, on its day or the next "
                       "(UTC), an answer of their own (a rated attempt) or one made after the answer was shown"})
    solved = fields.Integer(required=True, validate=validate.Range(min=0),
                            metadata={"description": "of them, those whose own answer reached the target"})
    optimal = fields.Integer(required=True, validate=validate.Range(min=0),
                             metadata={"description": "of those, the ones in the fewest moves"})
    solved_share = fields.Float(required=True, validate=validate.Range(0, 1),
                                metadata={"description": "solved / players, to 3 places (0 without players)"})
    average_moves = fields.Float(required=True, allow_none=True,
                                 metadata={"description": "the moves of a solve on average, to 1 place; null "
                                                          "before anyone solved it"})
    moves = fields.Dict(keys=fields.String(), values=fields.Integer(), required=True, metadata={
        "description": "solves by their number of moves, fewest first", "examples": [{"9": 14, "10": 6, "12": 1}]})


class Daily(Rated):
    number = fields.Integer(required=True, validate=validate.Range(min=1),
                            metadata={"description": "day 1 is 2026-01-01"})
    date = date(required=True)
    schedule_version = fields.Integer(required=True)
    puzzle = fields.Nested(Puzzle, required=True)
    code = fields.String(required=True)
    optimal_length = fields.Integer(required=True)
    difficulty = fields.Nested(Difficulty, required=True)
    solution_url = fields.String(required=True)
    hint_url = fields.String(required=True)
    image_url = fields.String(required=True, metadata={"description": "the PNG picture"})
    driftingdroids_id = driftingdroids_id()


class ArchiveDay(Shape):
    number = fields.Integer(required=True, validate=validate.Range(min=1),
                            metadata={"description": "day 1 is 2026-01-01"})
    date = date(required=True)
    code = fields.String(required=True)
    optimal_length = fields.Integer(required=True)
    grade = grade(required=True)
    url = fields.String(required=True)


class Archive(Shape):
    total = fields.Integer(required=True)
    limit = fields.Integer(required=True)
    items = fields.List(fields.Nested(ArchiveDay), required=True)


# -- boards -------------------------------------------------------------------------------


class Edition(Shape):
    boards = fields.Integer()
    sections = fields.List(fields.String())


class Section(Shape):
    id = fields.String(metadata={"examples": ["green-A"]})
    colour_marking = fields.String()
    has_vortex = fields.Boolean()
    has_diagonals = fields.Boolean()


class Boards(Shape):
    editions = fields.Dict(keys=fields.String(), values=fields.Nested(Edition), required=True)
    sections = fields.List(fields.Nested(Section), required=True)
    example = fields.String()


# -- games --------------------------------------------------------------------------------


class Game(Shape):
    id = fields.String(required=True)
    version = fields.Integer(required=True)
    board = fields.String(required=True)
    robots = fields.Dict(required=True)
    players = fields.List(fields.Dict(), required=True)
    phase = fields.String(required=True, validate=validate.OneOf(["bidding", "verifying", "finished"]))
    round = fields.Dict(allow_none=True)
    options = fields.Dict(required=True)
    history = fields.List(fields.Dict(), required=True)
    chips_left = fields.Integer(required=True)
    winners = fields.List(fields.String(), allow_none=True)
    created = fields.Float()
    void_streak = fields.Integer(metadata={"description": "rounds in a row that ended void"})
    idle_rounds = fields.Integer(metadata={"description": "rounds in a row that ended with no bid"})
    finish_reason = fields.String(metadata={"description": "why the game ended, once it has"})


@_strict
class GameOptions(Shape):
    """Every option is optional; docs/rules.md section 5 says what each does."""

    timer_seconds = fields.Integer(dump_default=60, validate=validate.Range(5, 3600))
    idle_seconds = fields.Integer(dump_default=300, validate=validate.Range(5, 86400))
    exact_bid = fields.Boolean(dump_default=False)
    tie_break = fields.String(dump_default=TieBreak.FEWER_CHIPS.value, validate=one_of(TieBreak))
    chips_to_win = fields.Integer(allow_none=True, validate=validate.Range(1, 17), metadata={
        "description": "null: by player count (2 -> 8, 3 -> 6, 4 -> 5, more -> every chip)"})
    scoring = fields.String(dump_default=Scoring.CHIPS.value, validate=one_of(Scoring))
    infinity_target = fields.Integer(dump_default=50, validate=validate.Range(1, 10000))
    solitaire_timer_factor = fields.Integer(dump_default=1, validate=validate.Range(1, 2))
    black_robot = fields.Boolean(dump_default=False)
    ricochet = fields.String(dump_default=Ricochet.TURN.value, validate=validate.OneOf(Ricochet.options()))
    void_returns_chip = fields.Boolean(dump_default=False)


class GameEvent(Open):
    version = fields.Integer(required=True)
    type = fields.String(required=True)
    at = fields.Float(required=True)


NOW = fields.Float(metadata={"description": "the referee's clock (seconds since the epoch): with the round's "
                                            "timer_ends it tells how long the sand timer runs"})


class GameView(Shape):
    game = fields.Nested(Game, required=True)
    events = fields.List(fields.Nested(GameEvent))
    now = NOW


class NewGameView(Shape):
    game = fields.Nested(Game, required=True)
    tokens = fields.Dict(keys=fields.String(), values=fields.String(), required=True)


class Attempt(Shape):
    success = fields.Boolean(required=True)
    length = fields.Integer(required=True)
    legal = fields.Boolean(required=True)
    solved = fields.Boolean(required=True)
    impossible_bid = fields.Boolean(required=True)
    reason = fields.String(allow_none=True)


class AttemptView(Shape):
    result = fields.Nested(Attempt, required=True)
    game = fields.Nested(Game, required=True)
    now = NOW


class Room(Shape):
    id = fields.String(required=True, metadata={"description": "the room's id: /r/{id} is the link to share"})
    version = fields.Integer(required=True)
    host = fields.String(required=True, metadata={"description": "the player who opened the room and starts it"})
    players = fields.List(fields.String(), required=True, metadata={"description": "seated players, host first"})
    board = fields.String(required=True)
    options = fields.Nested(GameOptions, required=True)
    game = fields.String(allow_none=True, required=True, metadata={"description": "the game's id once started"})
    created = fields.Float()
    robots = fields.Dict(keys=fields.String(), values=fields.String(), dump_default=dict, metadata={
        "description": "the robot players among the players, each with its strength (POST .../robots)"})
    mode = fields.String(dump_default="game", validate=validate.OneOf(["game", "race"]), metadata={
        "description": "game (at the table) or race (the same puzzles for everyone, for race_seconds)"})
    race_seconds = fields.Integer(allow_none=True)
    race = fields.Nested(lambda: Race(), allow_none=True, metadata={"description": "the race, once started"})


class RacePuzzle(Shape):
    index = fields.Integer(required=True, metadata={"description": "its place in the race, from 0"})
    code = fields.String(required=True, metadata={"description": "the puzzle (GET /v1/puzzles/{code})"})


class Racer(Shape):
    at = fields.Integer(required=True, metadata={"description": "the puzzle the racer is on (an index of puzzles)"})
    points = fields.Integer(required=True, metadata={"description": "3 for a solution at the optimum, a point less "
                                                                    "for each move more, at least 1"})
    solved = fields.Integer(required=True)
    optimal = fields.Integer(required=True, metadata={"description": "puzzles solved at the optimum"})
    last = fields.Float(allow_none=True, required=True, metadata={"description": "when the racer last scored"})


class Standing(Shape):
    place = fields.Integer(required=True)
    player = fields.String(required=True)
    points = fields.Integer(required=True)
    solved = fields.Integer(required=True)
    optimal = fields.Integer(required=True)
    last = fields.Float(allow_none=True, required=True)


class Race(Shape):
    started = fields.Float(required=True)
    ends = fields.Float(required=True, metadata={"description": "the referee's clock when the race ends"})
    seconds = fields.Integer(required=True)
    board = fields.String(required=True)
    finished = fields.Boolean(required=True)
    version = fields.Integer(required=True, metadata={"description": "the last event's version"})
    players = fields.Dict(keys=fields.String(), values=fields.Nested(Racer), required=True)
    puzzles = fields.List(fields.Nested(RacePuzzle), required=True, metadata={
        "description": "the puzzles reached so far, the same for everyone, in order"})
    standings = fields.List(fields.Nested(Standing), allow_none=True, required=True, metadata={
        "description": "once finished: points, then puzzles solved, then who scored first"})


class RoomView(Shape):
    room = fields.Nested(Room, required=True)


class Seat(RoomView):
    token = fields.String(required=True, metadata={
        "description": "this seat's token, in the room and its game (Authorization: Bearer); keep it, never share it"})


class StartedRoom(RoomView):
    game = fields.Nested(Game, metadata={"description": "the room's game (a race room: none, the race is in room)"})
    now = NOW


class RaceMoved(RoomView):
    result = fields.Dict(required=True, metadata={
        "description": "index, success, points, and for a solution shown its length, optimal_length (when it "
                       "solves), legal, solved and reason; skipped for a skip"})


# -- the service itself -------------------------------------------------------------------


class OEmbed(Shape):
    """oEmbed 1.0's rich response (https://oembed.com, section 2.3)."""
    version = fields.Constant("1.0", required=True)
    type = fields.Constant("rich", required=True)
    html = fields.String(required=True, metadata={"description": "an iframe of the embeddable puzzle"})
    width = fields.Integer(required=True)
    height = fields.Integer(required=True)
    title = fields.String()
    provider_name = fields.String()
    provider_url = fields.String()
    cache_age = fields.Integer()
    thumbnail_url = fields.String()
    thumbnail_width = fields.Integer()
    thumbnail_height = fields.Integer()


# -- webhooks (docs/webhooks.md) -------------------------------------------------------------


class WebhookDisabled(Shape):
    reason = fields.String(required=True, metadata={"description": "why: the receiver answered 410, no attempt "
                                                                   "succeeded for days, its key was revoked, ..."})
    at = fields.Float(required=True, metadata={"description": "when (seconds since the epoch)"})


class Webhook(Shape):
    id = fields.String(required=True, metadata={"description": "wh_ and 32 hex digits"})
    url = fields.String(required=True)
    events = fields.List(fields.String(validate=validate.OneOf(WEBHOOK_EVENTS)), required=True)
    created = fields.Float(required=True, metadata={"description": "seconds since the epoch"})
    enabled = fields.Boolean(required=True, metadata={"description": "false: nothing is sent to it until it is "
                                                                     "enabled again (PATCH enabled true)"})
    disabled = fields.Nested(WebhookDisabled, allow_none=True, required=True,
                             metadata={"description": "why and when it was disabled (null: enabled)"})
    failing_since = fields.Float(allow_none=True, required=True, metadata={
        "description": "when its attempts began failing, none succeeding since (null: the last succeeded)"})
    previous_secret_expires = fields.Float(allow_none=True, required=True, metadata={
        "description": "after a rotation, until when the previous secret still signs beside the new one"})


class NewWebhook(Webhook):
    secret = fields.String(required=True, metadata={
        "description": "the signing secret, whsec_ and base64 (Standard Webhooks): shown only now, keep it"})


class RotatedSecret(Shape):
    id = fields.String(required=True)
    secret = fields.String(required=True, metadata={
        "description": "the new signing secret: shown only now, keep it"})
    previous_secret_expires = fields.Float(required=True, metadata={
        "description": "until when the previous secret signs too (deliveries carry both signatures)"})


class Webhooks(Shape):
    webhooks = fields.List(fields.Nested(Webhook), required=True)


class DeliveryAttempt(Shape):
    at = fields.Float(required=True, metadata={"description": "when it was made (seconds since the epoch)"})
    status = fields.Integer(allow_none=True, required=True, metadata={"description": "the receiver's HTTP status"})
    error = fields.String(allow_none=True, required=True, metadata={"description": "why it failed (null: it "
                                                                                    "succeeded)"})
    duration_ms = fields.Integer(required=True)
    retry_after = fields.Float(allow_none=True, metadata={
        "description": "the receiver's Retry-After (429, 503) in seconds, as honoured (at most an hour)"})


class JobEventData(Shape):
    id = fields.String(required=True)
    kind = fields.String(required=True, validate=validate.OneOf(["pack", "solve"]))
    state = fields.String(required=True, validate=validate.OneOf(["succeeded", "failed"]))
    created = fields.Float(required=True)
    finished = fields.Float(allow_none=True, required=True)
    error = fields.String(allow_none=True, required=True)
    job_url = fields.String(required=True, metadata={"description": "relative to the API's base URL"})
    pack_url = fields.String(metadata={"description": "a pack's"})
    made = fields.Integer(metadata={"description": "a pack's items made"})
    failed = fields.Integer(metadata={"description": "a pack's items that failed"})
    status = fields.String(allow_none=True, metadata={"description": "a solve's"})
    optimal_length = fields.Integer(allow_none=True, metadata={"description": "a solve's"})
    code = fields.String(allow_none=True, metadata={"description": "a solve's puzzle code"})


class DayEventData(Shape):
    date = fields.String(required=True)
    number = fields.Integer(required=True)
    code = fields.String(required=True)
    optimal_length = fields.Integer(required=True)
    grade = fields.String(allow_none=True, required=True)
    url = fields.String(required=True)


class TestEventData(Shape):
    webhook = fields.String(required=True)
    url = fields.String(required=True)
    note = fields.String(required=True)


class DisabledEventData(Shape):
    webhook = fields.String(required=True, metadata={"description": "the endpoint disabled (another of the key's)"})
    url = fields.String(required=True)
    reason = fields.String(required=True)
    disabled_at = fields.String(required=True, metadata={"description": "ISO 8601 UTC"})
    failing_since = fields.String(allow_none=True, required=True, metadata={"description": "ISO 8601 UTC"})


def _event(name: str, data: type[Shape], when: str) -> type[Shape]:
    """The body an event POSTs (Standard Webhooks' {type, timestamp, data})."""
    return type(name, (Shape,), {
        "type": fields.String(required=True, validate=validate.OneOf([when])),
        "timestamp": fields.String(required=True, metadata={"description": "ISO 8601 UTC: when it happened"}),
        "data": fields.Nested(data, required=True)})


# Every event, the body each POSTs: openapi.yaml's `webhooks` section (service/contract.py).
EVENT_SHAPES: dict[str, type[Shape]] = {
    "job.succeeded": _event("JobSucceededEvent", JobEventData, "job.succeeded"),
    "job.failed": _event("JobFailedEvent", JobEventData, "job.failed"),
    "day.published": _event("DayPublishedEvent", DayEventData, "day.published"),
    TEST_EVENT: _event("WebhookTestEvent", TestEventData, TEST_EVENT),
    DISABLED_EVENT: _event("WebhookDisabledEvent", DisabledEventData, DISABLED_EVENT),
}


class Delivery(Shape):
    id = fields.String(required=True, metadata={"description": "the message's id: webhook-id on every attempt"})
    webhook = fields.String(required=True)
    type = fields.String(required=True, validate=validate.OneOf(ALL_WEBHOOK_EVENTS))
    state = fields.String(required=True, validate=validate.OneOf(["pending", "succeeded", "failed"]))
    created = fields.Float(required=True)
    next_attempt = fields.Float(allow_none=True, required=True, metadata={
        "description": "when the next attempt is due (null once settled)"})
    attempts = fields.List(fields.Nested(DeliveryAttempt), required=True)
    event = Either(*EVENT_SHAPES.values(), required=True, metadata={"description": "the body each attempt POSTs"})


class Deliveries(Shape):
    deliveries = fields.List(fields.Nested(Delivery), required=True, metadata={"description": "newest first"})


class Health(Shape):
    status = fields.Constant("ok", required=True)


class Ready(Shape):
    status = fields.Constant("ready", required=True)
    redis = fields.String()
    workers = fields.Integer()


class StormPuzzle(Puzzle):
    """The puzzle a storm run hands now: without its answer."""

    index = fields.Integer(required=True, metadata={"description": "its place in the run, from 0; an answer names it"})
    code = fields.String(required=True)
    optimal_length = fields.Integer(required=True, metadata={
        "description": "the moves that solve it: more, or as many without reaching the target, fail it"})
    rating = fields.Float(required=True, metadata={"description": "the puzzle's rating (docs/ratings.md)"})


class StormReviewed(Shape):
    index = fields.Integer(required=True)
    code = fields.String(required=True)
    optimal_length = fields.Integer(required=True)
    rating = fields.Float(required=True)
    result = fields.String(required=True, validate=validate.OneOf(["solved", "failed", "shown", "unanswered"]),
                           metadata={"description": "solved at the optimum; failed (10 s off); shown: its answer "
                                                    "had been shown to this client, so it scored nothing; unanswered: "
                                                    "the puzzle in hand when the time was up"})
    solution = moves(required=True, metadata={"description": "an optimal solution"})
    moves = moves(metadata={"description": "the player's answer (none for the puzzle unanswered)"})
    seconds = fields.Float(metadata={"description": "from the puzzle handed to its answer, by the server's clock"})


class StormClock(Shape):
    seconds = fields.Float(required=True, metadata={"description": "the run's clock at the start"})
    bonus = fields.Float(required=True, metadata={"description": "seconds the combo's steps added"})
    penalty = fields.Float(required=True, metadata={"description": "seconds failed puzzles took off (10 each)"})


class StormAnswered(Shape):
    index = fields.Integer(required=True)
    result = fields.String(required=True, validate=validate.OneOf(["solved", "failed", "shown"]))
    seconds = fields.Float(required=True, metadata={"description": "from the puzzle handed to this answer, by the "
                                                                     "server's clock"})
    clock_change = fields.Float(required=True, metadata={"description": "seconds added (a combo's step) or taken "
                                                                          "off (a fail)"})
    combo = fields.Integer(required=True, metadata={"description": "solves in a row after this answer"})


class StormBoardRow(Shape):
    rank = fields.Integer(required=True)
    player = fields.String(required=True)
    score = fields.Integer(required=True)


class StormBoard(Shape):
    day = date(required=True)
    top = fields.List(fields.Nested(StormBoardRow), required=True, metadata={"description": "the day's best 20"})
    rank = fields.Integer(allow_none=True, required=True, metadata={"description": "the player's place, null when "
                                                                                   "it has no seeded run today"})


class StormBest(Shape):
    day = fields.Integer(required=True, metadata={"description": "today's (UTC)"})
    week = fields.Integer(required=True, metadata={"description": "this ISO week's"})
    month = fields.Integer(required=True)
    all = fields.Integer(required=True, metadata={"description": "of all time"})


class StormScores(Shape):
    player = fields.String(required=True)
    scope = fields.String(required=True, metadata={"description": "the API key's name, or public"})
    best = fields.Nested(StormBest, required=True, metadata={"description": "the player's best scores"})
    board = fields.Nested(StormBoard, required=True, metadata={"description": "the day's board of the seeded run"})


class Storm(Shape):
    id = fields.String(required=True)
    player = fields.String(required=True)
    scope = fields.String(required=True, metadata={"description": "the API key's name, or public"})
    seeded = fields.Boolean(required=True, metadata={"description": "the day's seeded run"})
    day = date(required=True)
    over = fields.Boolean(required=True, metadata={"description": "the time is up: no more answers"})
    seconds_left = fields.Float(required=True, metadata={"description": "by the server's clock, when it answered"})
    started_at = fields.Float(required=True, metadata={"description": "Unix time (server)"})
    ends_at = fields.Float(required=True, metadata={"description": "Unix time (server) the clock reaches zero, as "
                                                                    "things stand"})
    clock = fields.Nested(StormClock, required=True)
    score = fields.Integer(required=True, metadata={"description": "puzzles solved"})
    solves = fields.Integer(required=True)
    fails = fields.Integer(required=True)
    combo = fields.Integer(required=True, metadata={"description": "solves in a row now"})
    best_combo = fields.Integer(required=True)
    highest_rating = fields.Float(required=True, allow_none=True, metadata={
        "description": "the highest rating of a puzzle solved (null before the first)"})
    answered = fields.Integer(required=True)
    puzzle = fields.Nested(StormPuzzle, metadata={"description": "the puzzle to answer now (while the run lasts)"})
    review = fields.List(fields.Nested(StormReviewed), metadata={
        "description": "once the time is up: every puzzle handed, with the answer and an optimal solution"})
    answer = fields.Nested(StormAnswered, metadata={"description": "what the answer just sent did"})
    scores = fields.Nested(StormScores, metadata={"description": "once the time is up: the player's high scores"})


# Components in the order the document lists them.
COMPONENTS: tuple[type[Schema], ...] = (
    Move, Rules, BoardObject, Target, Puzzle, ByCode, ByDriftingDroidsId, Answer, Verdict, Difficulty, Hint, Job,
    FailedItem, FieldError, Problem, Known, PuzzleByCode, Made, RandomPuzzle, PackItem, Pack, CodedHint, DailyHint,
    DailySolution, Daily, ArchiveDay, Archive, Edition, Section, Boards, Game, GameOptions, GameEvent, GameView,
    NewGameView, Attempt, AttemptView, Room, RoomView, Seat, StartedRoom, OEmbed, WebhookDisabled, Webhook, NewWebhook,
    RotatedSecret, Webhooks, DeliveryAttempt, JobEventData, DayEventData, TestEventData, DisabledEventData,
    *EVENT_SHAPES.values(), Delivery, Deliveries, Health, Ready, StormPuzzle, StormReviewed, StormClock,
    StormAnswered, StormBoardRow, StormBoard, StormBest, StormScores, Storm,
)
