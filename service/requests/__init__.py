"""Request schemas, one module per concern: what each operation's path, query,
headers and body carry.  service/declare.py loads them where the request enters
(a bad value is a 400 naming it) and service/contract.py documents them from
the same schemas.  A schema with a COMPONENT is one shared parameter of
openapi.yaml (components/parameters), referred to by that name.

Here: what several concerns share (the base schemas, a whole number in a path or
query, true or false in a query, how many to list, a puzzle code, a hint's level)."""

from __future__ import annotations

from typing import Any, ClassVar

from marshmallow import EXCLUDE, RAISE, Schema, ValidationError, fields, validate

from ..errors import count_in

CODE_PATTERN = r"^[A-Za-z0-9_-]+$"


class Strict(Schema):
    """A body, path or query: a field it does not know is refused (400 naming it)."""

    class Meta:
        unknown = RAISE


class Lenient(Schema):
    """A query read alongside others it does not name (pages, caches' busters),
    or headers: what it does not know is left alone."""

    class Meta:
        unknown = EXCLUDE


class Count(fields.Integer):
    """A whole number written in ASCII digits (at most `digits` of them) from
    `low` to `high`; `says` what to send instead."""

    def __init__(self, low: int, high: int, says: str, digits: int = 9, **kwargs: Any) -> None:
        metadata = {"minimum": low, "maximum": high, **kwargs.pop("metadata", {})}
        super().__init__(metadata=metadata, **kwargs)
        self.low, self.high, self.says, self.digits = low, high, says, digits

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> int:
        number = count_in(value if isinstance(value, str) else None, self.digits)
        if number is None or not self.low <= number <= self.high:
            raise ValidationError(self.says)
        return number


def true_or_false(**kwargs: Any) -> fields.Boolean:
    """A query's `true` or `false`, and nothing else (not 1, yes or on)."""
    return fields.Boolean(truthy={"true"}, falsy={"false"}, error_messages={"invalid": "must be true or false"},
                          **kwargs)


def up_to(most: int, default: int = 20) -> fields.Integer:
    """How many to list: a whole number from 1 to `most`."""
    return fields.Integer(load_default=default, validate=validate.Range(1, most, error=f"must be from 1 to {most}"),
                          error_messages={"invalid": "must be a whole number"})


def code(description: str = "a puzzle code (URL-safe base64)", pattern: str = CODE_PATTERN) -> fields.String:
    """A path's puzzle code: documented here, checked by Puzzle.from_code in the view."""
    return fields.String(required=True, metadata={"description": description, "pattern": pattern})


class CodePath(Strict):
    code = code()


class HintQuery(Strict):
    """GET .../hint (a puzzle's and a day's): how much to tell."""

    COMPONENT: ClassVar[str] = "HintLevel"
    level = fields.Integer(load_default=1, validate=validate.Range(1, 4, error="must be from 1 to 4"),
                           error_messages={"invalid": "must be an integer from 1 to 4"}, metadata={
                               "description": "1 the optimal length; 2 also how many robots move; 3 also which "
                                              "robots (in the order they first move); 4 also the first move. The "
                                              "robots and the move are those of the optimal solution the API "
                                              "serves."})
