"""Packs and jobs: creating a pack (idempotent, admitted, charged), reading it as JSON,
NDJSON or printable sheets, following and cancelling jobs."""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request

from solver.interop import driftingdroids_id
from solver.puzzle import Puzzle, moves_from_json
from solver.svg import sheet_svg
from workers.schemas import PackRequest, load

from .common import (
    SVG,
    accepted,
    admit,
    app_stores,
    job_view,
    longest_held,
    query_choice,
    required_stores,
)
from .errors import Problem, json_body
from .limits import announce, charge
from .schemas import SheetQuery

bp = Blueprint("packs", __name__)
PACK_REQUEST = PackRequest()
SHEET_QUERY = SheetQuery()


@bp.post("/v1/packs")
def create_pack() -> Response:
    """
    ---
    post:
      operationId: createPack
      summary: Generate a pack of puzzles in the background (202 + the job's Location)
      parameters:
      - name: Idempotency-Key
        in: header
        required: false
        schema: {type: string, maxLength: 200}
        description: the same key (per client) with the same body returns the same job for 24 hours; with
          another body 422; while the first request is still being created 409
      requestBody:
        required: true
        content: {application/json: {schema: PackRequest}}
      responses:
        '202':
          description: Accepted; follow `Location`
          headers:
            Location: {schema: {type: string}}
          content: {application/json: {schema: Job}}
          links:
            getJob: {$ref: '#/components/links/GetJob'}
            cancelJob: {$ref: '#/components/links/CancelJob'}
        '400': {$ref: '#/components/responses/Problem'}
        '409': {$ref: '#/components/responses/Problem'}
        '422': {$ref: '#/components/responses/Problem'}
        '503': {$ref: '#/components/responses/Unavailable'}
    """
    request_body = load(PACK_REQUEST, json_body())
    stores = required_stores()
    longest = longest_held(request_body["board"], request_body["robots"], request_body["ricochet"])
    if request_body["min_length"] > longest:
        raise Problem("out-of-range", f"the longest puzzles held for {request_body['robots']} robots on "
                      f"{request_body['board']} boards (ricochet {request_body['ricochet']}) have {longest} moves; "
                      f"ask for min_length up to {longest}", field="min_length")
    job_id = uuid.uuid4().hex
    key = request.headers.get("Idempotency-Key")
    if key is not None:
        if not 1 <= len(key) <= 200:
            raise Problem("invalid-input", "Idempotency-Key must be 1 to 200 characters",
                          field="Idempotency-Key")
        # Keys are the client's own (by address), and name one request: the same key
        # with another body is refused, as the IETF Idempotency-Key draft has it.
        fingerprint = hashlib.sha256(json.dumps(request_body, sort_keys=True).encode()).hexdigest()
        existing, same = stores.jobs.for_idempotency_key(f"{request.remote_addr}:{key}", job_id, fingerprint)
        if not same:
            raise Problem("idempotency-key-reused", "this Idempotency-Key was used with another request body; "
                          "use a new key for a new pack", field="Idempotency-Key")
        if existing != job_id:
            found = stores.jobs.get(existing)
            if found is None:
                raise Problem("conflict", "the first request with this Idempotency-Key is still being "
                              "created; retry in a moment", headers={"Retry-After": "1"}, field="Idempotency-Key")
            return accepted(found)
    admit("packs")
    quota = charge("pack", request_body["count"] * request_body["max_length"])
    job = stores.jobs.create("pack", request_body, job_id)
    current_app.extensions["celery"].send_task("ricochet.pack", args=[job["id"]])
    return announce(accepted(job), quota)


def _pack(pack_id: str, finished: bool = True) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The pack's job and its puzzles in order (those made so far unless
    `finished`); 404, 409 (not ready) or 410 otherwise."""
    stores = required_stores()
    job = stores.jobs.get(pack_id) if len(pack_id) <= 64 else None
    if job is None or job["kind"] != "pack":
        raise Problem("not-found", f"no pack {pack_id!r}: packs are kept for a week")
    if finished and job["state"] != "succeeded" or job["state"] in ("failed", "cancelled"):
        raise Problem("not-ready", f"the pack is {job['state']}; follow its job",
                      headers={"Location": f"/v1/jobs/{pack_id}"}, job=f"/v1/jobs/{pack_id}", state=job["state"])
    if job["state"] == "succeeded" and not stores.packs.exists(pack_id):
        raise Problem("gone", "the pack has expired; create it again (same seed, same puzzles)")
    items = stores.packs.items(pack_id, job["request"]["count"])
    for item in items:  # packs made before the field existed
        if "driftingdroids_id" not in item:
            item["driftingdroids_id"] = driftingdroids_id(Puzzle.from_code(item["code"]))
    return job, items


@bp.get("/v1/packs/<pack_id>")
def get_pack(pack_id: str) -> Response:
    """
    ---
    get:
      operationId: getPack
      summary: 'A finished pack as JSON, or (with ?format=ndjson or Accept application/x-ndjson) one puzzle
        per line: the puzzles made so far, also while the pack is running (header X-Pack-State)'
      parameters:
      - name: format
        in: query
        required: false
        schema: {type: string, enum: [json, ndjson]}
      responses:
        '200':
          description: The puzzles in order of `index`, each a FORMATS.md puzzle with its solution and difficulty;
            `failed` lists the items that could not be made, with the reason
          headers:
            Vary:
              schema: {type: string}
              description: Accept
            X-Pack-State:
              schema: {type: string}
              description: 'NDJSON only: the pack''s job state'
          content:
            application/json: {schema: Pack}
            application/x-ndjson: {schema: {type: string}}
        '400': {$ref: '#/components/responses/Problem'}
        '404': {$ref: '#/components/responses/Problem'}
        '409': {$ref: '#/components/responses/Problem'}
        '410': {$ref: '#/components/responses/Problem'}
    """
    asked = query_choice("format", ("json", "ndjson"))
    wants_lines = asked == "ndjson" or (asked is None and request.accept_mimetypes.best == "application/x-ndjson")
    # NDJSON streams the puzzles made so far, also while the pack is still running.
    job, puzzles = _pack(pack_id, finished=not wants_lines)
    if wants_lines:
        response = Response((json.dumps(p) + "\n" for p in puzzles), mimetype="application/x-ndjson")
        response.headers["X-Pack-State"] = job["state"]
    else:
        failed = (job.get("result") or {}).get("failed", [])
        response = jsonify({"pack_id": pack_id, "count": len(puzzles), "request": job["request"],
                            "puzzles": puzzles, "failed": failed})
    response.headers["Vary"] = "Accept"
    return response


SHEET_SIZE = 24  # puzzles per SVG sheet


@bp.get("/v1/packs/<pack_id>.svg")
def pack_sheet(pack_id: str) -> Response:
    """
    ---
    get:
      operationId: getPackSheet
      summary: A finished pack drawn as printable SVG sheets of 24 puzzles, captioned with code and length
      parameters:
      - {in: query, schema: SheetQuery}
      responses:
        '200':
          description: One sheet
          content:
            image/svg+xml: {schema: {type: string}}
        '400': {$ref: '#/components/responses/Problem'}
        '404': {$ref: '#/components/responses/Problem'}
        '409': {$ref: '#/components/responses/Problem'}
        '410': {$ref: '#/components/responses/Problem'}
    """
    query = load(SHEET_QUERY, request.args.to_dict())
    _, puzzles = _pack(pack_id)
    pages = (len(puzzles) + SHEET_SIZE - 1) // SHEET_SIZE
    if query["page"] > pages:
        raise Problem("not-found", f"the pack has {pages} sheet(s) of {SHEET_SIZE} puzzles", field="page")
    first = (query["page"] - 1) * SHEET_SIZE
    items = []
    for index, item in enumerate(puzzles[first:first + SHEET_SIZE], start=first + 1):
        p = Puzzle.from_json({k: item[k] for k in ("board", "robots", "target", "rules")})
        moves = moves_from_json(item["solution"]) if query["solution"] else None
        items.append((p, f"{index}. {item['code']} · {item['optimal_length']} moves", moves))
    sheet = sheet_svg(items, columns=4, title=f"Pack {pack_id}, sheet {query['page']} of {pages}")
    response = Response(sheet, mimetype=SVG)
    response.headers["Cache-Control"] = "private, max-age=3600"
    return response


@bp.get("/v1/jobs/<job_id>")
def job(job_id: str) -> Response:
    """
    ---
    get:
      operationId: getJob
      summary: A queued job's state, progress and, once done, its result
      responses:
        '200':
          description: The job
          content: {application/json: {schema: Job}}
        '404': {$ref: '#/components/responses/Problem'}
        '503': {$ref: '#/components/responses/Unavailable'}
    """
    stores = app_stores()
    found = stores.jobs.get(job_id) if stores is not None and len(job_id) <= 64 else None
    if found is None:
        raise Problem("not-found", f"no job {job_id!r}: jobs are kept for a week")
    return jsonify(job_view(found))


@bp.delete("/v1/jobs/<job_id>")
def cancel_job(job_id: str) -> Response:
    """Cancel a pending or running job: its workers stop within about a second.
    A settled job answers as it stands (cancelling twice is harmless).

    ---
    delete:
      operationId: cancelJob
      summary: Cancel a pending or running job; its workers stop within about a second (a pack keeps the puzzles
        made so far).  A settled job answers as it stands.
      responses:
        '200':
          description: The job as it stands (state cancelled, unless it had settled before)
          content: {application/json: {schema: Job}}
        '404': {$ref: '#/components/responses/Problem'}
        '503': {$ref: '#/components/responses/Unavailable'}
    """
    stores = required_stores()
    found = stores.jobs.cancel(job_id) if len(job_id) <= 64 else None
    if found is None:
        raise Problem("not-found", f"no job {job_id!r}: jobs are kept for a week")
    return jsonify(job_view(found))
