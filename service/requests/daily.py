"""The daily puzzle's requests: a day in the path (by date or number, or its
picture), and the archive's query."""

from __future__ import annotations

from typing import ClassVar

from marshmallow import fields, validate

from . import Strict

DAY = "[0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{1,6}"


class DayPath(Strict):
    """A day: the view reads it (service/daily.py: a date or a number, published)."""

    COMPONENT: ClassVar[str] = "Day"
    day = fields.String(required=True, metadata={
        "description": "A date (YYYY-MM-DD) or a day number (1 = 2026-01-01)", "pattern": f"^({DAY})$",
        "examples": ["2026-11-20", "324"]})


class DayOrPicturePath(Strict):
    COMPONENT: ClassVar[str] = "DayOrPicture"
    day = fields.String(required=True, metadata={
        "description": "A date (YYYY-MM-DD) or a day number (1 = 2026-01-01); `.png` after it asks for the picture",
        "pattern": f"^({DAY})(\\.png)?$", "examples": ["2026-11-20", "324", "2026-11-20.png"]})


class ArchiveQuery(Strict):
    """GET /v1/daily/archive: which published days, a page at a time."""

    from_ = fields.Date(data_key="from", attribute="from", error_messages={"invalid": "must be a date, YYYY-MM-DD"},
                        metadata={"description": "first day (default 2026-01-01)"})
    to = fields.Date(error_messages={"invalid": "must be a date, YYYY-MM-DD"},
                     metadata={"description": "last day (default today); not before from"})
    limit = fields.Integer(load_default=100, validate=validate.Range(1, 366, error="must be from 1 to 366"),
                           error_messages={"invalid": "must be an integer"})
