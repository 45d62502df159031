"""Packs' requests: a new pack (workers.schemas.PackRequest, the schema the
stored request is checked with), its Idempotency-Key, and how to read one."""

from __future__ import annotations

from marshmallow import fields, validate

from application.books import GRIDS, PAPERS
from workers.schemas import PackRequest

from . import Lenient, Strict

__all__ = ["BookQuery", "IdempotencyHeader", "PackQuery", "PackRequest", "SheetQuery"]


class IdempotencyHeader(Lenient):
    # Its length is checked by application.packs.submit (a 400 naming it).
    key = fields.String(data_key="Idempotency-Key", metadata={
        "maxLength": 200, "description": "the same key (per client) with the same body returns the same job for 24 "
                                         "hours; with another body 422; while the first request is still being "
                                         "created 409"})


class PackQuery(Lenient):
    """GET /v1/packs/{id}: JSON (the default, unless Accept asks for NDJSON or CSV), NDJSON or CSV."""

    format = fields.String(validate=validate.OneOf(["json", "ndjson", "csv"], error="must be json, ndjson or csv"))


class SheetQuery(Strict):
    """GET /v1/packs/{id}.svg: which sheet, and whether to draw the solutions."""

    page = fields.Integer(load_default=1, validate=validate.Range(1, 1000, error="must be from 1 to 1000"),
                          error_messages={"invalid": "must be an integer"})
    solution = fields.Boolean(load_default=False, error_messages={"invalid": "must be true or false"},
                              metadata={"description": "draw each puzzle's optimal solution"})


class BookQuery(Strict):
    """GET /v1/packs/{id}.pdf: the paper, puzzles a page, and whether the solutions follow."""

    paper = fields.String(load_default="a4", validate=validate.OneOf(list(PAPERS), error="must be a4 or letter"),
                          metadata={"description": "A4 or US Letter"})
    per_page = fields.Integer(load_default=4, validate=validate.OneOf(list(GRIDS), error="must be one of "
                                                                      + ", ".join(map(str, GRIDS))),
                              error_messages={"invalid": "must be an integer"},
                              metadata={"description": "puzzles a page"})
    solutions = fields.Boolean(load_default=True, error_messages={"invalid": "must be true or false"},
                               metadata={"description": "the solutions at the back"})
