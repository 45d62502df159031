"""Storm: runs of puzzles against the server's clock, and high scores (application/storms.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flask import Blueprint, Response, current_app, request

from application import storms
from solver.model.puzzle import moves_from_json

from . import i18n
from .common import context
from .declare import Reply, operation
from .meta import HTML
from .requests.pages import PageQuery
from .requests.storms import ScoresQuery, StormAnswer, StormPath, StormRequest
from .shapes import Storm, StormScores

bp = Blueprint("storms", __name__)
PAGE = Path(__file__).resolve().parent / "static" / "storm.html"


@operation(bp, "get /storm", "stormPage", tag="service", replies={200: HTML}, query=PageQuery,
           summary="A web page to play Storm: puzzles against the clock, the run's summary, high scores")
def storm_page(query: dict[str, Any]) -> Response:
    return i18n.page(request, PAGE)


@operation(bp, "post /v1/storms", "openStorm", tag="storms", body=StormRequest, searches=True,
           errors=(400, 409, 422, 503), summary="Open a run for a player: its clock starts (3 minutes), its first "
           "puzzle is handed without its answer", replies={201: Reply("The run", Storm, headers={
               "Location": {"schema": {"type": "string"}, "description": "/v1/storms/{run_id}"}})})
def open_storm(body: dict[str, Any]) -> Any:
    run = storms.open_run(context(), body["player"], body["seeded"], current_app.config["STORM_SECONDS"])
    return run, 201, {"Location": f"/v1/storms/{run['id']}"}


@operation(bp, "get /v1/storms/scores", "getStormScores", tag="storms", query=ScoresQuery, errors=(400, 503),
           summary="A player's best storm scores (day, week, month, all time) and the day's board of the seeded run",
           replies={200: Reply("The scores", StormScores)})
def storm_scores(query: dict[str, Any]) -> Any:
    return storms.scores(context(), query["player"])


@operation(bp, "get /v1/storms/<run_id>", "getStorm", tag="storms", path=StormPath, errors=(400, 404, 503),
           summary="A run now: its clock and puzzle; once the time is up, its summary, review and high scores",
           replies={200: Reply("The run", Storm)})
def storm(run_id: str) -> Any:
    return storms.read(context(), run_id)


@operation(bp, "post /v1/storms/<run_id>/answers", "answerStorm", tag="storms", path=StormPath, body=StormAnswer,
           searches=True, errors=(400, 404, 409, 422, 503), summary="Answer the puzzle handed: checked and timed by "
           "the server, then the next puzzle", replies={200: Reply("The run after the answer, with `answer`", Storm)})
def answer_storm(run_id: str, body: dict[str, Any]) -> Any:
    return storms.answer(context(), run_id, body["puzzle"], moves_from_json(body["moves"]))
