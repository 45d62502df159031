"""Schemas (marshmallow) for what crosses a process boundary: API bodies and
task payloads are checked by the same schema before any work starts."""

from __future__ import annotations

import re
from typing import Any

from marshmallow import RAISE, Schema, ValidationError, fields, validate, validates_schema

from solver.errors import InvalidInput
from solver.model.board import BoardKind
from solver.model.puzzle import Ricochet
from solver.production.packs import PACK_THEMES, fitting_lengths

MAX_PACK = 1000
MAX_PACK_LENGTH = 30  # what pools and the bank hold decides what a pack can have (API: 422 beyond)
BOARD_KINDS = tuple(BoardKind)
MAX_SEED = 100
MAX_TIME_BUDGET = 600.0  # seconds a queued solve may search


class StrictInt(fields.Integer):
    """An integer, and only an integer: no strings, floats or booleans."""

    def _validated(self, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.make_error("invalid")
        return value

    default_error_messages = {"invalid": "must be an integer"}


# Text no field of the API takes: lone surrogates (not Unicode text: Redis and every
# encoder downstream refuse them) and C0 control characters and DEL (tab, newline
# and carriage return are whitespace).  Free-text fields (seeds, names) check it;
# fields with a closed set of values (colours, directions, specs, codes) refuse
# anything else anyway.
NOT_TEXT = re.compile(r"[\ud800-\udfff\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def text(value: str) -> str:
    """A marshmallow validator: `value` is Unicode text without control characters."""
    bad = NOT_TEXT.search(value) if isinstance(value, str) else None
    if bad is not None:
        what = "a lone surrogate" if 0xD800 <= ord(bad.group()) <= 0xDFFF else "a control character"
        raise ValidationError(f"holds {what} (U+{ord(bad.group()):04X}); send Unicode text")
    return value


class Seed(fields.Field[int | str]):
    """An integer or a string of at most MAX_SEED characters."""

    def __init__(self, **kwargs: Any) -> None:
        metadata = {"shape": {"type": ["integer", "string"], "maxLength": MAX_SEED}, **kwargs.pop("metadata", {})}
        super().__init__(metadata=metadata, **kwargs)

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> int | str:
        if isinstance(value, bool) or not isinstance(value, (int, str)) or len(str(value)) > MAX_SEED:
            raise ValidationError(f"must be an integer or a string of at most {MAX_SEED} characters")
        return text(value) if isinstance(value, str) else value


MAX_TITLE = 120  # characters: a book's header line


def _range(lo: int, hi: int) -> validate.Range:
    return validate.Range(lo, hi, error=f"must be an integer from {lo} to {hi}")


class PackRequest(Schema):
    """POST /v1/packs and the ricochet.pack task."""

    class Meta:
        unknown = RAISE
        ordered = True

    count = StrictInt(required=True, validate=_range(1, MAX_PACK))
    min_length = StrictInt(required=True, validate=_range(1, MAX_PACK_LENGTH))
    max_length = StrictInt(required=True, validate=_range(1, MAX_PACK_LENGTH), metadata={
        "description": "beyond 20 moves, up to the longest the pools and the bank hold (else 422)"})
    seed = Seed(load_default=0, metadata={
        "description": "same seed, same puzzles, in the same order (for a given pool set)"})
    board = fields.String(load_default=BoardKind.RANDOM_2013.value, validate=validate.Length(max=200), metadata={
                          "description": "a real board spec, random-2013 (default), random-1999, random-beginner"},
                          error_messages={"invalid": "must be a board spec or random-2013, random-1999, "
                                                     "random-beginner"})
    robots = StrictInt(load_default=4, validate=validate.OneOf([4, 5], error="must be 4 or 5"))
    ricochet = fields.String(load_default=Ricochet.TURN.value, validate=validate.OneOf(Ricochet.options(),
                                                                        error="must be turn or none"),
                             metadata={"description": "the ricochet rule of every puzzle in the pack"})

    # A band of starting ratings and a theme (docs/ratings.md): left out, a pack is as it always was.
    min_rating = StrictInt(validate=_range(400, 3600), metadata={
        "description": "only puzzles starting at this rating or above (the prior from length and robots moved)"})
    max_rating = StrictInt(validate=_range(400, 3600), metadata={"description": "only puzzles starting at this "
                                                                               "rating or below"})
    theme = fields.String(validate=validate.OneOf(PACK_THEMES, error="must be one of the themes of "
                                                  "GET /v1/themes: " + ", ".join(PACK_THEMES)),
                          metadata={"description": "only puzzles with this theme (the library's: GET /v1/themes)"})
    title = fields.String(validate=[validate.Length(1, MAX_TITLE, error=f"must be 1 to {MAX_TITLE} characters"),
                                    lambda text: _printable_title(text)], metadata={
        "description": "the pack's title, on its book's pages and in the PDF's metadata (default: what it holds, "
                       "like 'Ricochet Robots — 24 puzzles, 10–12 moves')"})

    @validates_schema
    def _lengths(self, data: dict[str, Any], **kwargs: Any) -> None:
        if data["min_length"] > data["max_length"]:
            raise ValidationError("must not exceed max_length", "min_length")
        if data.get("min_rating", 0) > data.get("max_rating", 3600):
            raise ValidationError("must not exceed max_rating", "min_rating")
        if not fitting_lengths(data, data["min_length"], data["max_length"], data.get("robots", 4)):
            raise ValidationError(f"no puzzle of {data['min_length']} to {data['max_length']} moves fits this rating "
                                  "band and theme (a puzzle starts about 1500 at 6 moves, 110 more a move, 40 more a "
                                  "robot moved): widen them or the lengths",
                                  "min_rating" if "min_rating" in data else "max_rating" if "max_rating" in data
                                  else "theme")

    @validates_schema
    def _board(self, data: dict[str, Any], **kwargs: Any) -> None:
        board = data.get("board")
        if board in BOARD_KINDS:
            return
        from solver.model.board import real_board

        try:
            real_board(board)
        except InvalidInput as e:
            raise ValidationError(f"must be {', '.join(BOARD_KINDS)} or a real board spec like "
                                  f"'green-A,red-B,blue-C,yellow-D': {e.message}", "board") from None


def _printable_title(text: str) -> bool:
    """A title is one line the book's font prints whole (Latin letters and punctuation), so no book shows boxes."""
    from solver.formats.pdf import unprintable

    if any(ord(ch) < 32 or 127 <= ord(ch) < 160 for ch in text):
        raise ValidationError("must be one line of text, without control characters")
    missing = unprintable(text)
    if missing:
        raise ValidationError(f"holds characters the book's font cannot print ({missing[:10]}): use Latin "
                              "letters, digits and punctuation")
    return True


def load(schema: Schema, data: Any) -> dict[str, Any]:
    """Validate and fill in defaults; a bad field becomes an InvalidInput (400 in
    the API) naming it, with every other bad field listed beside it."""
    if not isinstance(data, dict):
        raise InvalidInput("", "expected a JSON object")
    try:
        return schema.load(data)
    except ValidationError as e:
        problems = [(f, _plain(m, schema)) for f, m in _flatten(e.normalized_messages())]
        raise InvalidInput(*problems[0], others=problems[1:]) from None


def _plain(message: str, schema: Schema) -> str:
    if message == "Unknown field.":
        return f"unknown field; expected one of {', '.join(schema.fields)}"
    if message == "Missing data for required field.":
        return "is required"
    return message


def _flatten(messages: Any, prefix: str = "") -> list[tuple[str, str]]:
    if isinstance(messages, dict):
        out = []
        for key, value in messages.items():
            name = "" if key == "_schema" else (f"{prefix}.{key}" if prefix else str(key))
            out.extend(_flatten(value, name or prefix))
        return out
    if isinstance(messages, list):
        return [(prefix, str(m)) for m in messages if not isinstance(m, (dict, list))] + \
            [p for m in messages if isinstance(m, (dict, list)) for p in _flatten(m, prefix)]
    return [(prefix, str(messages))]
