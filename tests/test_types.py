"""The type checker (make lint's mypy, [tool.mypy] in pyproject.toml) catches a misnamed key in a
use case's typed reply: a copy of application.jobs.view's reply with one key planted wrong fails the
check, and the same reply with the right keys passes it (so the failure is the key's, not the set-up's);
so does a misnamed key in a task's payload as a use case sends it (`jobs.send(ctx, PACK.of({...}))`)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

REPLY = """\
from application import Context
from application.jobs import JobView, send
from workers.messages import PACK


def right() -> JobView:
    return {{"id": "j", "kind": "solve", "state": "pending", "progress": 0.0, "created": 1.0,
             "started": None, "finished": None, "error": None, "result": None}}


def planted() -> JobView:
    return {{"id": "j", "kind": "solve", "state": "pending", "progress": 0.0, "created": 1.0,
             "started": None, "finished": None, "error": None, "{key}": None}}


def queued(ctx: Context) -> None:
    send(ctx, PACK.of({{"job_id": "j"}}))
    send(ctx, PACK.of({{"{task_key}": "j"}}))
"""


def test_a_planted_wrong_key_fails_the_type_check(tmp_path: Path) -> None:
    module = tmp_path / "planted_reply.py"
    module.write_text(textwrap.dedent(REPLY.format(key="results", task_key="job")), encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                          "--cache-dir", str(tmp_path / "cache"), "--no-error-summary", str(module)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    errors = [line for line in run.stdout.splitlines() if ": error:" in line]
    assert run.returncode == 1, run.stdout + run.stderr
    # Only the planted reply fails (its return, line 12: "results" for "result"), for that key alone, and the
    # planted task's payload (line 18: "job" for "job_id"; the right one on line 17 passes).
    assert sorted(line.split(": error: ")[0] for line in errors) == [
        f"{module}:12", f"{module}:12", f"{module}:18", f"{module}:18"], run.stdout
    assert sorted(line.split(": error: ")[1] for line in errors) == [
        'Extra key "job" for TypedDict "JobPayload"  [typeddict-unknown-key]',
        'Extra key "results" for TypedDict "JobView"  [typeddict-unknown-key]',
        'Missing key "job_id" for TypedDict "JobPayload"  [typeddict-item]',
        'Missing key "result" for TypedDict "JobView"  [typeddict-item]'], run.stdout


# -- jobs, packs and webhooks: each typed value against the schema of the same shape --------------------------

def _job_pack_webhook_pairs() -> list[tuple[type, type]]:
    """(TypedDict, the marshmallow schema it is sent or loaded through): the same keys, required alike."""
    from application import jobs, webhooks
    from application import packs as made
    from service import shapes
    from service.requests import webhooks as asked
    from solver.production import packs as planned
    from workers import schemas
    from workers import webhooks as events
    from workers.stores import packs
    from workers.stores import webhooks as hooks

    return [(jobs.JobView, shapes.Job), (packs.FailedItem, shapes.FailedItem),
            (webhooks.WebhookView, shapes.Webhook), (webhooks.NewWebhookView, shapes.NewWebhook),
            (webhooks.RotatedSecret, shapes.RotatedSecret), (webhooks.DeliveryView, shapes.Delivery),
            (hooks.Attempt, shapes.DeliveryAttempt), (hooks.Disabled, shapes.WebhookDisabled),
            (webhooks.WebhookChange, asked.WebhookChange), (events.JobEventData, shapes.JobEventData),
            (made.PackItem, shapes.PackItem), (planned.PackRequest, schemas.PackRequest)]


def _field_names(schema: type, required: bool = False) -> set[str]:
    return {f.data_key or name for name, f in schema._declared_fields.items() if f.required or not required}


def _drift(typed: type, schema: type) -> list[str]:
    keys = _keys(typed)
    fields = _field_names(schema)
    return ([f"{k} only in {typed.__name__}" for k in sorted(keys - fields)]
            + [f"{k} only in {schema.__name__}" for k in sorted(fields - keys)]
            + [f"{k} required by {schema.__name__}, optional in {typed.__name__}"
               for k in sorted(_field_names(schema, required=True) - _required(typed))])


def test_jobs_packs_and_webhooks_typed_values_name_their_schemas_fields() -> None:
    for typed, schema in _job_pack_webhook_pairs():
        assert _drift(typed, schema) == [], (typed.__name__, schema.__name__)


def test_each_tasks_payload_type_names_its_schemas_fields() -> None:
    """A sender's payload (`TaskSpec.of`) is typed as its schema loads it: the same keys,
    required where the schema requires them and nowhere else."""
    from workers.messages import TASKS

    for spec in TASKS.values():
        typed, schema = spec.payload_type, spec.schema
        assert _drift(typed, schema) == [], spec.name
        assert _required(typed) == _field_names(schema, required=True), spec.name


def test_a_drifted_webhook_key_is_found() -> None:
    """The comparison finds a drift: WebhookView with `failing_since` renamed `failing`."""
    from typing import TypedDict

    from service import shapes
    from workers.stores.webhooks import Disabled

    class Drifted(TypedDict):
        id: str
        url: str
        events: list[str]
        created: float
        enabled: bool
        disabled: Disabled | None
        failing: float | None
        previous_secret_expires: float | None

    assert _drift(Drifted, shapes.Webhook) == ["failing only in Drifted", "failing_since only in Webhook",
                                               "failing_since required by Webhook, optional in Drifted"]


# -- one declaration per shape: a use case's typed reply names the fields of the schema that describes it --------

def _typed_pairs() -> list[tuple[type, type, set[str]]]:
    """(TypedDict, the service/shapes.py or service/requests/ schema of the same shape, keys the TypedDict
    carries beyond it)."""
    from application.daily import ArchiveDay, DailyHint, DailySolution, DailyView
    from application.daily_stats import DayStats
    from application.puzzles import CodedHint, RandomQuery, SolutionsView
    from application.ratings.finisher import AttemptResult, RatingChange, Verdict
    from application.ratings.players import DailyStreak, PlayerHistory, PlayerRating, PlayerView
    from application.ratings.themes import (
        Described,
        DifficultyReport,
        NextPuzzle,
        PuzzleRating,
        RandomPuzzle,
        ThemeEntry,
        ThemeHeld,
        ThemeList,
    )
    from application.ratings.votes import VoteView
    from service import shapes
    from service.requests import puzzles as asked
    from workers.stores.ratings import HistoryLine

    return [(PlayerRating, shapes.PlayerRating, set()), (PuzzleRating, shapes.PuzzleRating, set()),
            (RatingChange, shapes.RatingChange, set()), (AttemptResult, shapes.AttemptResult, set()),
            (Verdict, shapes.Verdict, set()), (DailyStreak, shapes.DailyStreak, set()),
            (PlayerView, shapes.Player, set()), (HistoryLine, shapes.PastAttempt, set()),
            (PlayerHistory, shapes.PlayerHistory, set()), (VoteView, shapes.Vote, set()),
            (ThemeHeld, shapes.ThemeHeld, set()), (ThemeEntry, shapes.ThemeEntry, set()),
            (ThemeList, shapes.ThemeList, set()), (CodedHint, shapes.CodedHint, set()),
            (DifficultyReport, shapes.Difficulty, set()), (SolutionsView, shapes.Solutions, set()),
            (RandomPuzzle, shapes.RandomPuzzle, set()), (NextPuzzle, shapes.NextPuzzle, set()),
            (DailyView, shapes.Daily, set()), (DailySolution, shapes.DailySolution, set()),
            (DailyHint, shapes.DailyHint, set()), (ArchiveDay, shapes.ArchiveDay, set()),
            (DayStats, shapes.DayStats, set()),
            (RandomQuery, asked.RandomQuery, set()),
            # a served puzzle's `difficulty`, graded by its rating, goes out in Made's and Daily's field
            (Described, shapes.Rated, {"difficulty"})]


def _keys(typed: type) -> set[str]:
    return set(typed.__required_keys__) | set(typed.__optional_keys__)


def _required(typed: type) -> set[str]:
    """The keys a TypedDict requires.  Read from its annotations: under `from __future__
    import annotations` they are strings, and Python 3.11's __required_keys__ then holds
    every key, NotRequired ones too."""
    def optional(annotation: object) -> bool:
        text = getattr(annotation, "__forward_arg__", annotation)
        return isinstance(text, str) and text.startswith("NotRequired[")

    return {k for k, a in typed.__annotations__.items() if not optional(a)} if typed.__total__ else set()


def test_each_typed_reply_names_its_schemas_fields() -> None:
    """A TypedDict and the marshmallow schema of the same shape name the same keys: a key
    renamed, added or dropped in one and not the other fails here (the API's shapes are
    the schemas'; the TypedDicts let mypy check the use cases that fill them)."""
    for typed, schema, beyond in _typed_pairs():
        fields = {f.data_key or name for name, f in schema._declared_fields.items()}
        assert _keys(typed) == fields | beyond, (typed.__name__, schema.__name__)
        required = {f.data_key or name for name, f in schema._declared_fields.items() if f.required}
        assert required <= _required(typed), (typed.__name__, "required in the schema, optional here")


def test_a_drifted_key_fails_the_comparison() -> None:
    """The comparison itself catches a drift: a copy of Vote's TypedDict with one key renamed differs."""
    from typing import TypedDict

    from service import shapes

    class Drifted(TypedDict):
        code: str
        popularity: int
        ups: int
        down: int

    fields = set(shapes.Vote._declared_fields)
    assert _keys(Drifted) != fields and _keys(Drifted) ^ fields == {"up", "ups"}


def test_a_key_the_schema_requires_left_optional_is_found() -> None:
    """The required half catches a drift too: Vote's keys, with `down` NotRequired."""
    from typing import NotRequired, TypedDict

    from service import shapes

    class Loose(TypedDict):
        code: str
        popularity: int
        up: int
        down: NotRequired[int]

    required = {name for name, f in shapes.Vote._declared_fields.items() if f.required}
    assert _keys(Loose) == set(shapes.Vote._declared_fields) and required - _required(Loose) == {"down"}


# -- games, rooms, races and storms: each typed value against the schema of its shape (the same check) ----------

def _play_pairs() -> list[tuple[type, type]]:
    """(TypedDict, the schema that loads or dumps the same shape) for games, rooms, races and storms."""
    from application import games, rooms, storms
    from service import shapes
    from service.requests import games as game_requests
    from service.requests import rooms as room_requests
    from solver.play import game, race
    from workers.stores.storms import StormReviewed

    return [(game.GameOptions, shapes.GameOptions), (game.GameEvent, shapes.GameEvent), (game.GamePublic, shapes.Game),
            (game.Attempt, shapes.Attempt), (games.GameView, shapes.GameView), (games.NewGame, game_requests.NewGame),
            (rooms.RoomPublic, shapes.Room), (rooms.NewRoom, room_requests.NewRoom),
            (race.RacePublic, shapes.Race), (race.Racer, shapes.Racer), (race.Standing, shapes.Standing),
            (race.RacePuzzle, shapes.RacePuzzle),
            (storms.StormView, shapes.Storm), (storms.StormClock, shapes.StormClock),
            (storms.StormPuzzle, shapes.StormPuzzle), (storms.StormAnswered, shapes.StormAnswered),
            (storms.StormBoardRow, shapes.StormBoardRow), (storms.StormBoard, shapes.StormBoard),
            (storms.StormBest, shapes.StormBest), (storms.StormScores, shapes.StormScores),
            (StormReviewed, shapes.StormReviewed)]


def test_play_values_name_their_schemas_fields() -> None:
    """Each TypedDict of games, rooms, races and storms names exactly its schema's fields (a key
    renamed, added or dropped on one side fails), and a field the schema requires is required in it."""
    for typed, schema in _play_pairs():
        fields = {f.data_key or name for name, f in schema._declared_fields.items()}
        keys = _keys(typed)
        assert keys == fields, (typed.__name__, schema.__name__, keys ^ fields)
        required = {f.data_key or name for name, f in schema._declared_fields.items() if f.required}
        assert required <= _required(typed), (typed.__name__, required - _required(typed))


def test_a_required_webhook_key_left_optional_is_found() -> None:
    """_drift's required half reads NotRequired (under `from __future__ import annotations` too):
    WebhookView's keys with `failing_since`, which Webhook requires, planted NotRequired."""
    from typing import NotRequired, TypedDict

    from service import shapes
    from workers.stores.webhooks import Disabled

    class Loose(TypedDict):
        id: str
        url: str
        events: list[str]
        created: float
        enabled: bool
        disabled: Disabled | None
        failing_since: NotRequired[float | None]
        previous_secret_expires: float | None

    assert _drift(Loose, shapes.Webhook) == ["failing_since required by Webhook, optional in Loose"]


def test_no_module_is_left_out_of_the_type_check() -> None:
    """Every module of the four packages is checked: pyproject.toml's [tool.mypy] ignores no
    module's errors (the list of those left out, 25 at first, is gone: issue 70)."""
    config = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert "ignore_errors" not in config
    assert 'files = ["service", "application", "workers", "solver"]' in config
