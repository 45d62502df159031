"""Schemas (marshmallow) for API bodies and queries; puzzles themselves are
checked by solver.model.puzzle, which names the bad field the same way."""

from __future__ import annotations

from marshmallow import RAISE, Schema, fields, validate

from application.books import GRIDS, PAPERS
from application.puzzles import SOLUTIONS_LIMIT
from application.ratings import HISTORY_KEPT, OFFSETS
from solver.model.board import BoardKind
from solver.model.puzzle import Ricochet
from solver.production.difficulty import GRADES
from solver.production.generate import MAX_LENGTH
from solver.production.themes import THEMES
from workers.schemas import text
from workers.webhooks import EVENTS as WEBHOOK_EVENTS
from workers.webhooks import MAX_URL as WEBHOOK_URL_MAX

from .i18n import LANGUAGES
from .shapes import Move

PLAYER_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
PLAYER_RULE = "must be 1 to 64 letters, digits, '_' or '-' (the app's own id for its player)"


def player_field(**kwargs: object) -> fields.String:
    return fields.String(validate=validate.Regexp(PLAYER_PATTERN, error=PLAYER_RULE), metadata={
        "description": "the app's own id for its player (1-64 of A-Z a-z 0-9 _ -), scoped to the API key sent "
                       "(without a key, the public scope)"}, **kwargs)


def up_to(most: int, default: int = 20) -> fields.Integer:
    """How many to list: a whole number from 1 to `most`."""
    return fields.Integer(load_default=default, validate=validate.Range(1, most, error=f"must be from 1 to {most}"),
                          error_messages={"invalid": "must be a whole number"})


class VerifyRequest(Schema):
    """POST /v1/verify: {"puzzle": {...} or {"code": ...}, "moves": [...], "player"?: id}."""

    class Meta:
        unknown = RAISE

    puzzle = fields.Dict(required=True, metadata={"shape": {"$ref": "#/components/schemas/PuzzleRef"}},
                         error_messages={"invalid": "must be a docs/formats.md puzzle or {{\"code\": ...}}"})
    moves = fields.List(fields.Raw(metadata={"shape": Move}), required=True, validate=validate.Length(max=1000),
                        error_messages={"invalid": "must be a list of moves like {{\"robot\": \"red\", "
                                                   "\"direction\": \"N\"}}"})
    player = player_field()


class JsonBoolean(fields.Boolean):
    """A JSON true or false, nothing else (marshmallow's takes 1, "yes", "on", ...)."""

    def _deserialize(self, value: object, attr: str | None, data: object, **kwargs: object) -> bool:
        if not isinstance(value, bool):
            raise self.make_error("invalid")
        return value


class VoteRequest(Schema):
    """POST /v1/puzzles/{code}/vote: {"player": id, "up": true or false}."""

    class Meta:
        unknown = RAISE

    player = player_field(required=True)
    up = JsonBoolean(required=True, error_messages={"invalid": "must be true or false"})


class NextQuery(Schema):
    """GET /v1/puzzles/next: whose next puzzle, how hard, and of which theme."""

    class Meta:
        unknown = RAISE

    player = player_field(required=True)
    difficulty = fields.String(load_default="normal", validate=validate.OneOf(
        list(OFFSETS), error=f"must be one of {', '.join(OFFSETS)}"), metadata={
        "description": "the rating looked for: the player's, 600 or 300 below (easiest, easier) or above (harder, "
                       "hardest)"})
    theme = fields.String(validate=validate.OneOf(list(THEMES), error="must be one of the themes in "
                                                  "docs/ratings.md: " + ", ".join(THEMES)))
    solution = fields.Boolean(load_default=True, error_messages={"invalid": "must be true or false"}, metadata={
        "description": "false leaves the solution out and opens a round: the player's first answer within it is "
                       "rated (docs/ratings.md); true (the default) gives it, and the attempt is recorded unrated"})


class HistoryQuery(Schema):
    """GET /v1/players/{id}/attempts: how many of the last attempts."""

    class Meta:
        unknown = RAISE

    limit = up_to(HISTORY_KEPT)


class ExportQuery(Schema):
    """GET /v1/puzzles/export: which puzzles, in which format."""

    class Meta:
        unknown = RAISE

    format = fields.String(load_default="ndjson", validate=validate.OneOf(["csv", "ndjson"],
                                                                          error="must be csv or ndjson"))
    min_length = fields.Integer(load_default=2, validate=validate.Range(2, MAX_LENGTH, error="must be from 2 to "
                                                                         f"{MAX_LENGTH}"),
                                error_messages={"invalid": "must be a whole number"})
    max_length = fields.Integer(load_default=MAX_LENGTH, validate=validate.Range(2, MAX_LENGTH, error="must be "
                                                                                 f"from 2 to {MAX_LENGTH}"),
                                error_messages={"invalid": "must be a whole number"})
    robots = fields.Integer(validate=validate.OneOf([4, 5], error="must be 4 or 5"),
                            error_messages={"invalid": "must be 4 or 5"})
    ricochet = fields.String(validate=validate.OneOf(Ricochet.options(), error="must be turn or none"))
    source = fields.String(validate=validate.Regexp(r"^(bank|daily|pools)(,(bank|daily|pools))*$",
                                                    error="must be bank, daily or pools, or several joined by ','"),
                           metadata={"description": "only these sources, joined by ',' (default all)"})


class SolutionsQuery(Schema):
    """GET /v1/puzzles/{code}/solutions: how many to list."""

    class Meta:
        unknown = RAISE

    limit = up_to(SOLUTIONS_LIMIT)


class RandomQuery(Schema):
    """GET /v1/puzzles/random: exactly one of length or grade."""

    class Meta:
        unknown = RAISE

    # 2..MAX_LENGTH is checked by the view: beyond it is 422 (out of range), not 400
    length = fields.Integer(error_messages={"invalid": "must be an integer"}, metadata={
        "minimum": 2, "maximum": MAX_LENGTH,
        "description": "from 21 moves on, puzzles come from the bank of verified long puzzles; 422 when it has none"})
    grade = fields.String(validate=validate.OneOf(GRADES, error=f"must be one of {', '.join(GRADES)}"))
    robots = fields.Integer(load_default=4, validate=validate.OneOf([4, 5], error="must be 4 or 5"),
                            error_messages={"invalid": "must be 4 or 5"})
    seed = fields.String(validate=[validate.Length(1, 100, error="must be 1 to 100 characters"), text],
                         metadata={"description": "same seed, same puzzle"})
    board = fields.String(load_default=BoardKind.RANDOM_2013.value, validate=validate.Length(max=200),
                          metadata={"description": "a board spec, random-2013 (default), random-1999 or "
                                                   "random-beginner"})
    solution = fields.Boolean(load_default=True, error_messages={"invalid": "must be true or false"}, metadata={
        "description": "false leaves the solution out and opens a round for this client: a player's first answer "
                       "within it is rated (docs/ratings.md); true (the default) gives it, and answers from this "
                       "client are recorded unrated"})


class SheetQuery(Schema):
    """GET /v1/packs/{id}.svg: which sheet, and whether to draw the solutions."""

    class Meta:
        unknown = RAISE

    page = fields.Integer(load_default=1, validate=validate.Range(1, 1000, error="must be from 1 to 1000"),
                          error_messages={"invalid": "must be an integer"})
    solution = fields.Boolean(load_default=False, error_messages={"invalid": "must be true or false"},
                              metadata={"description": "draw each puzzle's optimal solution"})


class BookQuery(Schema):
    """GET /v1/packs/{id}.pdf: the paper, puzzles a page, and whether the solutions follow."""

    class Meta:
        unknown = RAISE

    paper = fields.String(load_default="a4", validate=validate.OneOf(list(PAPERS), error="must be a4 or letter"),
                          metadata={"description": "A4 or US Letter"})
    per_page = fields.Integer(load_default=4, validate=validate.OneOf(list(GRIDS), error="must be one of "
                                                                      + ", ".join(map(str, GRIDS))),
                              error_messages={"invalid": "must be an integer"},
                              metadata={"description": "puzzles a page"})
    solutions = fields.Boolean(load_default=True, error_messages={"invalid": "must be true or false"},
                               metadata={"description": "the solutions at the back"})


class ArchiveQuery(Schema):
    """GET /v1/daily/archive: which published days, a page at a time."""

    class Meta:
        unknown = RAISE

    from_ = fields.Date(data_key="from", attribute="from", error_messages={"invalid": "must be a date, YYYY-MM-DD"},
                        metadata={"description": "first day (default 2026-01-01)"})
    to = fields.Date(error_messages={"invalid": "must be a date, YYYY-MM-DD"},
                     metadata={"description": "last day (default today); not before from"})
    limit = fields.Integer(load_default=100, validate=validate.Range(1, 366, error="must be from 1 to 366"),
                           error_messages={"invalid": "must be an integer"})


class HintQuery(Schema):
    """GET .../hint: how much to tell (1 length, 2 robot count, 3 robots, 4 first move)."""

    class Meta:
        unknown = RAISE

    level = fields.Integer(load_default=1, validate=validate.Range(1, 4, error="must be from 1 to 4"),
                           error_messages={"invalid": "must be an integer from 1 to 4"})


class PictureQuery(Schema):
    """POST /v1/pictures: which format, and whether to draw the solution."""

    class Meta:
        unknown = RAISE

    format = fields.String(load_default="svg", validate=validate.OneOf(["svg", "png"], error="must be svg or png"))
    solution = fields.Boolean(load_default=False, error_messages={"invalid": "must be true or false"},
                              metadata={"description": "draw an optimal solution, when one is known or found "
                                                       "within the request's search budget"})


class EmbedQuery(Schema):
    """GET /embed/...: the embedded puzzle's language and look."""

    class Meta:
        unknown = RAISE

    lang = fields.String(validate=validate.OneOf(LANGUAGES, error=f"must be one of {', '.join(LANGUAGES)}"),
                         metadata={"description": "the language (default: the reader's Accept-Language)"})
    theme = fields.String(load_default="auto", validate=validate.OneOf(["auto", "light", "dark"],
                                                                      error="must be auto, light or dark"),
                          metadata={"description": "auto follows the reader's system"})


class OEmbedQuery(Schema):
    """GET /oembed: oEmbed 1.0's consumer request."""

    class Meta:
        unknown = RAISE

    url = fields.Url(required=True, require_tld=False, schemes={"http", "https"},
                     error_messages={"invalid": "must be the address of a puzzle page of this site",
                                     "required": "give the address of a puzzle page of this site"},
                     metadata={"description": "a puzzle page of this site: /, /?day=YYYY-MM-DD, /p/{code} or "
                                              "/embed/..."})
    maxwidth = fields.Integer(validate=validate.Range(200, 4000, error="must be from 200 to 4000"),
                              error_messages={"invalid": "must be an integer"})
    maxheight = fields.Integer(validate=validate.Range(260, 4000, error="must be from 260 to 4000"),
                               error_messages={"invalid": "must be an integer"})
    format = fields.String(load_default="json", metadata={"description": "json (xml is answered 501, as oEmbed says)"})


class WebhookRequest(Schema):
    """POST /v1/webhooks: {"url": "https://...", "events": ["job.succeeded", ...]}."""

    class Meta:
        unknown = RAISE

    url = fields.String(required=True, validate=validate.Length(min=8, max=WEBHOOK_URL_MAX), metadata={
        "description": "where events are POSTed: http:// or https://, to a public address; redirects are not "
                       "followed"})
    events = fields.List(fields.String(validate=validate.OneOf(WEBHOOK_EVENTS)), required=True,
                         validate=validate.Length(min=1, max=len(WEBHOOK_EVENTS)),
                         metadata={"description": "the events wanted"})
