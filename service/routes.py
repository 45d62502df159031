"""The /v1 API: boards, pictures, solving and verifying (FORMATS.md shapes)."""

from __future__ import annotations

import hashlib
import html
import json
import time
import uuid
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request

from solver import daily
from solver.board import EDITIONS, all_boards, real_board, sections
from solver.errors import InvalidInput
from solver.geometry import DEFLECT
from solver.interop import driftingdroids_id, from_driftingdroids_id
from solver.production import bank
from solver.production.difficulty import difficulty
from solver.production.generate import MAX_LENGTH, generate
from solver.production.pools import Library, packaged
from solver.puzzle import Puzzle, Rules, moves_from_json
from solver.rules import check
from solver.solution import hint
from solver.solve import solve
from solver.svg import board_svg, puzzle_svg, sheet_svg
from workers.schemas import load

from .caching import cached
from .errors import KINDS, Problem, json_body, problem_response
from .limits import announce, charge
from .metrics import CACHE, SOLVE_SECONDS
from .pictures import PNG, picture
from .schemas import HintQuery, RandomQuery, SheetQuery, VerifyRequest

RANDOM_QUERY = RandomQuery()  # schemas are stateless: one instance serves every request
VERIFY_REQUEST = VerifyRequest()
SHEET_QUERY = SheetQuery()
HINT_QUERY = HintQuery()
api = Blueprint("api", __name__)
OPENAPI = Path(__file__).resolve().parent / "openapi.yaml"  # the top-level openapi.yaml links here

SVG = "image/svg+xml"


def _puzzle_from(body: Any) -> Puzzle:
    """A puzzle as FORMATS.md writes it, or {"code": ...}, or {"driftingdroids_id": ...}
    (with "rules" beside it if not RULES.md's defaults)."""
    if isinstance(body, dict) and set(body) == {"code"}:
        return Puzzle.from_code(body["code"])
    if isinstance(body, dict) and "driftingdroids_id" in body:
        if set(body) - {"driftingdroids_id", "rules"}:
            raise InvalidInput("", "a DriftingDroids puzzle is {\"driftingdroids_id\": ..., \"rules\": {...}} "
                               "and nothing else")
        rules = Rules.from_json(body["rules"]) if "rules" in body else None
        try:
            return from_driftingdroids_id(body["driftingdroids_id"], rules)
        except InvalidInput as e:
            raise InvalidInput("driftingdroids_id", e.message) from None
    return Puzzle.from_json(body)


PAGE = Path(__file__).resolve().parent / "static" / "index.html"


def _page(title: str, image: str, description: str) -> Response:
    """The play page with Open Graph tags, so that a shared link unfurls with the board."""
    root = request.url_root.rstrip("/")
    tags = "\n  ".join(
        f'<meta property="{p}" content="{html.escape(v, quote=True)}">'
        for p, v in (("og:type", "website"), ("og:site_name", "Ricochet Robots"), ("og:title", title),
                     ("og:description", description), ("og:image", root + image), ("og:url", request.base_url)))
    tags += '\n  <meta name="twitter:card" content="summary_large_image">'
    page = PAGE.read_text(encoding="utf-8").replace("<!-- open graph -->", tags)
    response = Response(page, mimetype="text/html")
    response.headers["Cache-Control"] = "no-cache"
    return response


@api.get("/")
def play_daily() -> Response:
    """The play page: today's puzzle (or ?length=N for a random one)."""
    today = daily.today()
    record = daily.daily_json(today)
    return _page(f"Ricochet Robots: daily puzzle #{daily.number(today)}, {today.isoformat()}",
                 f"/v1/daily/{today.isoformat()}.png",
                 f"Today's puzzle: {record['optimal_length']} moves ({record['difficulty']['grade']}). "
                 "Can you find the shortest way?")


@api.get("/p/<code>")
def play_code(code: str) -> Response:
    """The play page for any puzzle, by its code (a bad code: the page says so)."""
    try:
        p = Puzzle.from_code(code)
    except InvalidInput:
        return _page("Ricochet Robots", "/v1/boards/green-A,yellow-B,red-B,blue-B.png", "Ricochet Robots puzzles")
    target = p.goal.colour or "any robot"
    return _page(f"Ricochet Robots puzzle {p.code()}", f"/v1/puzzles/{p.code()}.png",
                 f"Bring {target} to its target in as few moves as you can.")


@api.get("/problems")
@api.get("/problems/<kind>")
def problem_types(kind: str | None = None) -> Response:
    """What each problem `type` means: the page its URI names."""
    if kind is not None and kind not in KINDS:
        raise Problem("not-found", f"no problem type {kind!r}; /problems lists them")
    rows = "".join(
        f"<tr id={k}><td><a href=/problems/{k}><code>/problems/{k}</code></a></td><td>{status}</td>"
        f"<td>{html.escape(title)}</td><td>{html.escape(text)}</td></tr>"
        for k, (status, title, text) in KINDS.items() if kind in (None, k))
    page = ("<!doctype html><html lang=en><meta charset=utf-8><title>ricochet-service problem types</title>"
            "<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto}td{padding:.3rem;"
            "vertical-align:top;border-bottom:1px solid #ddd}</style><h1>Problem types</h1><p>Every error is "
            "<code>application/problem+json</code> (RFC 9457); its <code>type</code> is one of these.</p>"
            f"<table><tr><th>type</th><th>status</th><th>title</th><th>meaning</th></tr>{rows}</table></html>")
    response = Response(page, mimetype="text/html")
    response.headers["Cache-Control"] = "public, max-age=86400"
    return response


@api.get("/openapi.yaml")
def openapi_document() -> Response:
    return Response(OPENAPI.read_text(encoding="utf-8"), mimetype="application/yaml")


@api.get("/docs")
def docs() -> Response:
    """The API documentation, rendered from openapi.yaml (no scripts, no outside assets)."""
    import html

    import yaml

    spec = yaml.safe_load(OPENAPI.read_text(encoding="utf-8"))
    rows = []
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            codes = ", ".join(str(c) for c in op.get("responses", {}))
            rows.append(f"<tr><td><code>{method.upper()}</code></td><td><code>{html.escape(path)}</code></td>"
                        f"<td>{html.escape(op.get('summary', ''))}</td><td>{codes}</td></tr>")
    page = (f"<!doctype html><html lang=en><meta charset=utf-8><title>{html.escape(spec['info']['title'])} API"
            "</title><style>body{font-family:system-ui,sans-serif;max-width:60em;margin:2em auto;padding:0 1em}"
            "td{padding:.3em .8em;border-bottom:1px solid #ddd;vertical-align:top}</style>"
            f"<h1>{html.escape(spec['info']['title'])} {html.escape(spec['info']['version'])}</h1>"
            f"<p>{html.escape(spec['info'].get('description', ''))}</p>"
            "<p>The contract: <a href=/openapi.yaml>openapi.yaml</a> (OpenAPI 3.1).</p>"
            "<table><tr><th>method</th><th>path</th><th>what</th><th>responses</th></tr>"
            + "".join(rows) + "</table></html>")
    return Response(page, mimetype="text/html")


@api.get("/healthz")
def healthz() -> Response:
    return jsonify(status="ok")


READY_FOR = 3.0  # seconds a worker's reply to the readiness ping is trusted


@api.get("/readyz")
def readyz() -> Response:
    """Ready when Redis answers and at least one worker replies to a ping."""
    stores = _stores()
    if stores is None:
        return jsonify(status="ready", redis="not configured", workers=0)
    stores.redis.ping()
    # One reply is enough (the broadcast ends at the first), and a reply is good
    # for a few seconds in this process: a busy probe costs no worker a thing.
    cached = current_app.extensions.get("ready_until", 0.0)
    if cached > time.monotonic():
        workers = [True]
    else:
        workers = current_app.extensions["celery"].control.ping(timeout=1.0, limit=1) or []
        if workers:
            current_app.extensions["ready_until"] = time.monotonic() + READY_FOR
    if not workers:
        response = problem_response("unavailable", "no worker replied; start one with `ricochet worker`")
        response.headers["Retry-After"] = "5"
        return response
    return jsonify(status="ready", redis="ok", workers=len(workers))


@api.get("/v1/boards")
def boards() -> Response:
    return cached(jsonify(
        editions={e: {"boards": sum(1 for _ in all_boards(e)),
                      "sections": [s for s in sections() if e == "2013" or s[-1] in "AB"]}
                  for e in EDITIONS},
        sections=[{"id": s["id"], "colour_marking": s["colour_marking"], "has_vortex": s["has_vortex"],
                   "has_diagonals": s["has_diagonals"]} for s in sections().values()],
        example="green-A,yellow-B,red-B,blue-B",
    ))


@api.get("/v1/boards/<spec>")
def board(spec: str) -> Response:
    for suffix, mimetype in ((".svg", SVG), (".png", PNG)):
        if spec.endswith(suffix):
            return picture(board_svg(real_board(spec[:-4])), mimetype)
    b = real_board(spec)
    body = b.to_object()
    if request.args.get("tables") == "true":
        # What a client needs to slide robots itself (the web page does): the next
        # cell from each cell in each direction (N E S W, -1 where a wall stops
        # it), and the diagonal barriers by cell index.
        body["steps"] = [list(row) for row in b.steps]
        body["barriers"] = {str(i): {"colour": d.colour, "orientation": d.orientation} for i, d in b.barriers.items()}
        body["deflect"] = {k: list(v) for k, v in DEFLECT.items()}  # new direction by barrier and old direction
    return cached(jsonify(body))


@api.get("/v1/puzzles/<code>")
def puzzle(code: str) -> Response:
    for suffix, mimetype in ((".svg", SVG), (".png", PNG)):
        if code.endswith(suffix):
            p = Puzzle.from_code(code[:-4])
            solution = _known_solution(p) if request.args.get("solution") == "true" else None
            return picture(puzzle_svg(p, solution), mimetype)
    p = Puzzle.from_code(code)
    return cached(jsonify({**p.to_json(), "code": p.code(), "hash": p.content_hash(),
                           "driftingdroids_id": driftingdroids_id(p)}))


@api.get("/v1/puzzles/<code>/hint")
def puzzle_hint(code: str) -> Response:
    """A hint from the optimal solution the API serves for this puzzle."""
    level = load(HINT_QUERY, request.args.to_dict())["level"]
    p = Puzzle.from_code(code)
    moves = _known_solution(p)
    if moves is None:
        answer = _stores().answer(p.content_hash()) if _stores() is not None else None
        if answer is not None and answer.get("status") == "unsolvable":
            raise Problem("unsolvable", "the puzzle has no solution, so there is no hint")
        raise Problem("needs-a-job", "the optimal solution is not known yet (it takes longer than a request "
                      "may search): POST /v1/solve queues the search, and hints follow once it is solved")
    return cached(jsonify({"code": p.code(), **hint(moves, level)}))


def _stores() -> Any:
    return current_app.extensions.get("stores")


def _known_solution(p: Puzzle) -> list[Any] | None:
    """An optimal solution to draw: a stored answer, else one search within the
    request's budget (remembered either way); None when it is not known in time."""
    stores = _stores()
    key = p.content_hash()
    budget = current_app.config["SOLVE_TIME_BUDGET"]
    if stores is not None:
        cached = stores.answer(key)
        if cached is not None:
            return moves_from_json(cached.get("moves") or [])
        if stores.unsettled(key, budget) is not None:
            return None
    answer = _search_and_remember(p)
    return answer.moves if answer.status == "optimal" else None


def _search_and_remember(p: Puzzle) -> Any:
    """One search within the request's budget; its answer is kept if settled,
    else that it ran out (for an hour): nobody repeats it meanwhile."""
    stores = _stores()
    budget = current_app.config["SOLVE_TIME_BUDGET"]
    with SOLVE_SECONDS.time():
        answer = solve(p, time_budget=budget)
    if stores is not None:
        key = p.content_hash()
        if answer.status in ("optimal", "unsolvable"):
            stores.save_answer(key, {**answer.to_json(), "code": p.code()})
        else:
            stores.save_unsettled(key, budget, answer.lower_bound)
    return answer


def _pools() -> Library:
    """The pools this process sees: the starter set, then the deployment's (Redis).
    One library per app, so a pool is loaded once and kept."""
    library = current_app.extensions.get("pools")
    if library is None:
        stores = _stores()
        library = Library([packaged()] + ([stores.pools()] if stores is not None else []))
        current_app.extensions["pools"] = library
    return library


SEARCH_REACHES = 20  # longest length search alone is asked for; beyond it pools and the bank decide


def _longest_held(board: str, robots: int, ricochet: str) -> int:
    """The longest length pools (or, for random boards, the bank) hold for such requests."""
    longest = SEARCH_REACHES
    for pool in _pools().pools(board, robots, ricochet):
        longest = max(longest, max(pool.lengths(), default=0))
    if board in ("random-2013", "random-1999"):
        edition = "1999" if board == "random-1999" else "2013"
        longest = max([longest] + [e["length"] for e in bank.matching(1, MAX_LENGTH, robots, ricochet, edition)])
    return longest


@api.post("/v1/solve")
def solve_puzzle() -> Response:
    p = _puzzle_from(json_body())
    stores = _stores()
    key = p.content_hash()
    if stores is not None:
        cached = stores.answer(key)
        CACHE.labels("hit" if cached is not None else "miss").inc()
        if cached is not None:
            response = jsonify(cached)
            response.headers["X-Cache"] = "hit"
            return response
    with SOLVE_SECONDS.time():
        answer = {**solve(p, time_budget=current_app.config["SOLVE_TIME_BUDGET"]).to_json(), "code": p.code()}
    if answer["status"] == "timeout" and stores is not None:
        budget = current_app.config["JOB_TIME_BUDGET"]
        _admit("ricochet")
        # Identical work in flight (same puzzle, same budget) shares one job, charged once.
        job, fresh = stores.shared_job("solve", f"{key}:{budget:g}", {"puzzle": p.to_json()}, ttl=budget + 60)
        quota = {}
        if fresh:
            try:
                quota = charge("solve", int(budget))
            except Problem:
                stores.cancel_job(job["id"])
                raise
            current_app.extensions["celery"].send_task("ricochet.solve", args=[job["id"], p.to_json(), budget])
        return announce(_accepted(job), quota)
    if stores is not None:
        stores.save_answer(key, answer)
    return jsonify(answer)


def _job_view(job: dict[str, Any]) -> dict[str, Any]:
    view = {k: job[k] for k in ("id", "kind", "state", "progress", "created", "started", "finished",
                                "error", "result")}
    if job["kind"] == "pack" and job["state"] == "succeeded":
        view["pack_id"] = job["id"]
    return view


def _accepted(job: dict[str, Any]) -> Response:
    response = jsonify(_job_view(job))
    response.status_code = 202
    response.headers["Location"] = f"/v1/jobs/{job['id']}"
    response.headers["Retry-After"] = "1"
    return response


def _admit(queue: str) -> None:
    """Refuse new queued work while the queue is full: 503 with Retry-After, rather
    than an unbounded backlog that nobody's request would live to see."""
    from workers.app import queued

    limit = current_app.config["MAX_QUEUED"][queue]
    if queued(current_app.extensions["celery"], queue) >= limit:
        raise Problem("unavailable", f"the {queue} queue is full ({limit} tasks waiting); "
                      "retry later", headers={"Retry-After": "30"})


def _required_stores() -> Any:
    stores = _stores()
    if stores is None:
        raise Problem("unavailable", "queued work needs Redis: set REDIS_URL or run `ricochet serve`")
    return stores


@api.post("/v1/packs")
def create_pack() -> Response:
    from workers.tasks import pack_request

    request_body = pack_request(json_body())
    stores = _required_stores()
    longest = _longest_held(request_body["board"], request_body["robots"], request_body["ricochet"])
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
        existing, same = stores.job_for_key(f"{request.remote_addr}:{key}", job_id, fingerprint)
        if not same:
            raise Problem("idempotency-key-reused", "this Idempotency-Key was used with another request body; "
                          "use a new key for a new pack", field="Idempotency-Key")
        if existing != job_id:
            found = stores.job(existing)
            if found is None:
                raise Problem("conflict", "the first request with this Idempotency-Key is still being "
                              "created; retry in a moment", headers={"Retry-After": "1"}, field="Idempotency-Key")
            return _accepted(found)
    _admit("packs")
    quota = charge("pack", request_body["count"] * request_body["max_length"])
    job = stores.create_job("pack", request_body, job_id)
    current_app.extensions["celery"].send_task("ricochet.pack", args=[job["id"]])
    return announce(_accepted(job), quota)


def _pack(pack_id: str, finished: bool = True) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The pack's job and its puzzles in order (those made so far unless
    `finished`); 404, 409 (not ready) or 410 otherwise."""
    stores = _required_stores()
    job = stores.job(pack_id) if len(pack_id) <= 64 else None
    if job is None or job["kind"] != "pack":
        raise Problem("not-found", f"no pack {pack_id!r}: packs are kept for a week")
    if finished and job["state"] != "succeeded" or job["state"] in ("failed", "cancelled"):
        raise Problem("not-ready", f"the pack is {job['state']}; follow its job",
                      headers={"Location": f"/v1/jobs/{pack_id}"}, job=f"/v1/jobs/{pack_id}", state=job["state"])
    if job["state"] == "succeeded" and not stores.pack_exists(pack_id):
        raise Problem("gone", "the pack has expired; create it again (same seed, same puzzles)")
    items = stores.pack_items(pack_id, job["request"]["count"])
    for item in items:  # packs made before the field existed
        if "driftingdroids_id" not in item:
            item["driftingdroids_id"] = driftingdroids_id(Puzzle.from_code(item["code"]))
    return job, items


@api.get("/v1/packs/<pack_id>")
def get_pack(pack_id: str) -> Response:
    wants_lines = request.args.get("format") == "ndjson" or \
        request.accept_mimetypes.best == "application/x-ndjson"
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


@api.get("/v1/packs/<pack_id>.svg")
def pack_sheet(pack_id: str) -> Response:
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


@api.get("/v1/jobs/<job_id>")
def job(job_id: str) -> Response:
    stores = _stores()
    found = stores.job(job_id) if stores is not None and len(job_id) <= 64 else None
    if found is None:
        raise Problem("not-found", f"no job {job_id!r}: jobs are kept for a week")
    return jsonify(_job_view(found))


@api.delete("/v1/jobs/<job_id>")
def cancel_job(job_id: str) -> Response:
    """Cancel a pending or running job: its workers stop within about a second.
    A settled job answers as it stands (cancelling twice is harmless)."""
    stores = _required_stores()
    found = stores.cancel_job(job_id) if len(job_id) <= 64 else None
    if found is None:
        raise Problem("not-found", f"no job {job_id!r}: jobs are kept for a week")
    return jsonify(_job_view(found))


@api.post("/v1/difficulty")
def rate() -> Response:
    p = _puzzle_from(json_body())
    answer = solve(p, time_budget=current_app.config["SOLVE_TIME_BUDGET"])
    if answer.length is None:
        if answer.status == "unsolvable":
            raise Problem("unsolvable", "the puzzle has no solution, so it has no difficulty")
        raise Problem("needs-a-job", f"the puzzle needs more than {answer.lower_bound - 1} moves; solve it first "
                      "with POST /v1/solve")
    return jsonify({**difficulty(p, answer, time_budget=current_app.config["SOLVE_TIME_BUDGET"]),
                    "code": p.code()})


RANDOM_TIME_BUDGET = 10.0  # seconds a request may spend generating

# Lengths to try for each grade; the grade of each find is checked before it is served.
GRADE_LENGTHS = {"beginner": (2, 3), "easy": (3, 5), "medium": (5, 8), "hard": (7, 10), "expert": (9, 13),
                 "extreme": (12, 16)}


@api.get("/v1/puzzles/random")
def random_puzzle() -> Response:
    query = load(RANDOM_QUERY, request.args.to_dict())
    length, grade, robots, board = query.get("length"), query.get("grade"), query["robots"], query["board"]
    seed = query.get("seed") or uuid.uuid4().hex
    if (length is None) == (grade is None):
        raise Problem("invalid-input", "give exactly one of length or grade", field="length")
    if length is not None and not 2 <= length <= MAX_LENGTH:
        raise Problem("out-of-range", f"no fair puzzle has {length} moves: ask for a length from 2 to "
                      f"{MAX_LENGTH} (a round solved in one move is void)", field="length")
    if length is not None:
        g = generate(length, board=board, robots=robots, seed=seed, time_budget=RANDOM_TIME_BUDGET, pools=_pools())
    else:
        lo, hi = GRADE_LENGTHS[grade]
        deadline = time.monotonic() + RANDOM_TIME_BUDGET
        for attempt in range(40):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise Problem("no-puzzle-found", f"no {grade} puzzle found in time for this seed; try another seed")
            g = generate(min_length=lo, max_length=hi, board=board, robots=robots, seed=f"{seed}:{attempt}",
                         time_budget=remaining, pools=_pools())
            if g.difficulty["grade"] == grade:
                break
        else:
            raise Problem("no-puzzle-found", f"no {grade} puzzle found for this seed; try another seed")
    return jsonify({**g.to_json(), "seed": seed})


@api.post("/v1/verify")
def verify() -> Response:
    body = load(VERIFY_REQUEST, json_body())
    try:
        p = _puzzle_from(body["puzzle"])
    except InvalidInput as e:
        raise e.within("puzzle") from None
    verdict = check(p, moves_from_json(body["moves"])).to_json()
    optimal_length, settled = _optimum(p)
    verdict["optimal_length"] = optimal_length
    verdict["optimal"] = bool(verdict["solved"] and optimal_length is not None
                              and verdict["length"] == optimal_length)
    # "unknown": the optimum was not found within the request's search budget
    # (POST /v1/solve queues a longer search; verify then knows it).
    verdict["optimality"] = "proven" if settled else "unknown"
    return jsonify(verdict)


def _optimum(p: Puzzle) -> tuple[int | None, bool]:
    """A puzzle's optimal length and whether it is settled: from what is known
    (a solved answer, a published or generated optimum), else from a search
    within the request's budget.  A search that runs out of it is remembered
    for an hour, so asking again costs no second search."""
    stores = _stores()
    key = p.content_hash()
    budget = current_app.config["SOLVE_TIME_BUDGET"]
    if stores is not None:
        known = stores.optimum(key)
        if known is not None:
            return known, True
        if stores.unsettled(key, budget) is not None:
            return None, False
    answer = _search_and_remember(p)
    settled = answer.status in ("optimal", "unsolvable")
    return answer.length, settled
