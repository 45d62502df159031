"""openapi.yaml, generated: the shapes are the marshmallow schemas (service/shapes.py
and the request schemas that check bodies and queries), each operation is its
view's declaration (service/declare.py: the same schemas check requests and
dump responses), and the parts shared between operations (parameters,
responses, links, security, tags) are below.

    .venv/bin/python -m service.contract            # rewrite openapi.yaml
    .venv/bin/python -m service.contract --check    # exit 1 when it differs from the generated

tests/test_openapi.py fails when the committed file is not the generated one.
"""

from __future__ import annotations

import argparse
import copy
import re
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import yaml
from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin, OpenAPIConverter
from apispec.ext.marshmallow.common import resolve_schema_cls
from flask import Flask
from marshmallow import Schema, fields

from application.puzzles import RANDOM_TIME_BUDGET
from workers.messages import DEFAULT_DEPTH
from workers.schemas import MAX_PACK
from workers.settings import Settings

from . import shapes
from .app import MAX_BODY
from .declare import operations_of
from .requests import HintQuery
from .requests.daily import DayOrPicturePath, DayPath
from .requests.games import SinceQuery

DOCUMENT = Path(__file__).resolve().parent / "openapi.yaml"

DESCRIPTION = """\
Ricochet Robots puzzles as a service: optimal solving, answer checking and
board pictures.  Puzzles, moves and answers use the shapes of docs/formats.md.
Every error is `application/problem+json` (RFC 9457) with a `detail` that
says what to fix and, for invalid input, the `field` at fault.

Limits: request bodies up to {body} (413 beyond); a synchronous solve
searches for at most {solve} (then 202 and a job, which may search for {job};
at most {depth} moves deep, tables within {tables}); a random puzzle is searched for at most {random}
(then 422, pointing to packs); a pack holds at most {pack} puzzles.
Rate limits per client address and route: {rate}, and
{rate_search} for the routes that search (solve, difficulty, random
puzzles, new packs); beyond them 429 with Retry-After.  Operators set them
with RICOCHET_RATE_LIMIT and RICOCHET_RATE_LIMIT_SEARCH.  Every answer of a
/v1 route says them as the IETF draft's fields (draft-ietf-httpapi-ratelimit-headers):
`RateLimit-Policy: "default";q=1200;w=60` (or "search"; with, on the routes
that queue work, the client's hourly quota "solve" or "pack") and
`RateLimit: "default";r=1187;t=42` (what is left, and the seconds until the
window turns); an answer that charges queued work adds the quota's state,
equal to its X-Quota-* headers.
"""


def _seconds(value: float) -> str:
    return f"{value:g} s"


def _bytes(mib: int) -> str:
    return f"{mib >> 10:,} GiB" if mib >= 1024 and mib % 1024 == 0 else f"{mib:,} MiB"


def _rate(limit: str, unit: str = "") -> str:
    """'1200 per minute' as '1,200 requests per minute' (several limits joined by ';' stay apart)."""
    return "; ".join(re.sub(r"^\s*(\d+)\s*(?:/|per)\s*", lambda m: f"{int(m.group(1)):,}{unit} per ", part).strip()
                     for part in limit.split(";"))


def description(settings: Settings | None = None) -> str:
    """The document's description, its limits read from `settings` (default: the
    settings' defaults, what a deployment that sets nothing enforces)."""
    settings = settings or Settings.from_env({})
    return DESCRIPTION.format(
        body=_bytes(MAX_BODY >> 20), solve=_seconds(settings.solve_time_budget),
        job=_seconds(settings.job_time_budget), depth=DEFAULT_DEPTH, tables=_bytes(settings.job_state_mb),
        random=_seconds(RANDOM_TIME_BUDGET), pack=f"{MAX_PACK:,}", rate=_rate(settings.rate_limit, " requests"),
        rate_search=_rate(settings.rate_limit_search))


TITLE = "ricochet-service"
SERVERS = [{"url": "/", "description": "the server that serves this document (ricochet serve listens on "
                                       "http://127.0.0.1:8000)"}]

PROBLEM = {"application/problem+json": {"schema": "Problem"}}
# Every /v1 answer's limits (service/limits.py), and the quota state of one that charges queued work.
LIMIT_HEADERS = {"RateLimit-Policy": "RateLimitPolicy", "RateLimit": "RateLimit"}
QUOTA_HEADERS = {"X-Quota-Kind": "QuotaKind", "X-Quota-Limit": "QuotaLimit", "X-Quota-Remaining": "QuotaRemaining",
                 "X-Quota-Reset": "QuotaReset"}
# The parameters several operations share (components/parameters), each a request schema with its COMPONENT.
PARAMETERS = {DayPath: "path", DayOrPicturePath: "path", SinceQuery: "query", HintQuery: "query"}
RESPONSES = {
    "Daily": {"description": "The daily puzzle, or its PNG picture (strong ETag; Cache-Control: the picture public, "
                             "immutable for past days, the JSON, which carries the puzzle's rating, five minutes; "
                             "both until midnight UTC at most for today)",
              "headers": {"ETag": {"schema": {"type": "string"}}, "Cache-Control": {"schema": {"type": "string"}}},
              "content": {"application/json": {"schema": "Daily"},
                          "image/png": {"schema": {"type": "string", "format": "binary"}}}},
    "TooManyRequests": {"description": "A rate limit for this client and route was exceeded (problem+json: "
                                       "`limit` names the policy, as RateLimit does), or queued work is over the "
                                       "client's hourly quota (`quota` names it, X-Quota-* say what is left); "
                                       "`remaining` and `reset` are the headers' numbers, Retry-After the seconds "
                                       "until the window resets",
                        "headers": {"Retry-After": {"schema": {"type": "integer"}}, **LIMIT_HEADERS,
                                    **QUOTA_HEADERS}, "content": PROBLEM},
    "Unavailable": {"description": "The store is unreachable; retry after the given seconds",
                    "headers": {"Retry-After": {"schema": {"type": "string"}}, **LIMIT_HEADERS}, "content": PROBLEM},
    "Problem": {"description": "What was wrong with the request and how to fix it", "headers": LIMIT_HEADERS,
                "content": PROBLEM},
    "NotModified": {"description": "Not modified (If-None-Match matched the ETag)", "headers": LIMIT_HEADERS},
}
HEADERS = {
    "ETag": {"description": "strong, from the body", "schema": {"type": "string"}},
    "CacheControl": {"description": "public; immutable where the content never changes", "schema": {"type": "string"}},
    "RateLimitPolicy": {"description": "On every answer of a /v1 route: the limits it counts against "
                                       "(draft-ietf-httpapi-ratelimit-headers, a structured field list), each a "
                                       "name with its quota `q` and window `w` in seconds: the route's \"default\" "
                                       "or \"search\" (requests), and on the routes that queue work the client's "
                                       "hourly \"solve\" (worker-seconds) or \"pack\" (puzzle-moves) quota, its "
                                       "unit in `ricochet-unit`", "schema": {"type": "string"},
                        "example": '"search";q=120;w=60, "pack";q=200000;w=3600;ricochet-unit="puzzle-moves"'},
    "RateLimit": {"description": "What is left of each limit (`r`) and the seconds until its window turns (`t`): "
                                 "the route's on every answer the limiter counted, a quota's on the answers that "
                                 "charge or refuse queued work (equal to X-Quota-Remaining and X-Quota-Reset)",
                  "schema": {"type": "string"}, "example": '"search";r=117;t=42, "pack";r=199940;t=3374'},
    "QuotaKind": {"description": "The hourly quota the work is charged to: solve or pack",
                  "schema": {"type": "string"}},
    "QuotaLimit": {"description": "The quota, in its unit, an hour", "schema": {"type": "string"}},
    "QuotaRemaining": {"description": "What is left of it this hour, after this work (a refusal costs nothing)",
                       "schema": {"type": "string"}},
    "QuotaReset": {"description": "Seconds until the hour turns", "schema": {"type": "string"}},
}
LINKS = {
    "GetJob": {"operationId": "getJob", "parameters": {"job_id": "$response.body#/id"},
               "description": "The job's state, progress and result"},
    "CancelJob": {"operationId": "cancelJob", "parameters": {"job_id": "$response.body#/id"},
                  "description": "Cancel the job"},
}
# The groups /docs shows operations in (each operation's declaration names its tag).
TAGS = [
    {"name": "solving", "description": "Optimal solutions, and judging a player's answer"},
    {"name": "puzzles", "description": "Boards, puzzles by code, hints, difficulty and random puzzles"},
    {"name": "daily", "description": "The daily puzzle, its solution, hint and archive"},
    {"name": "packs", "description": "Packs of puzzles made in the background"},
    {"name": "jobs", "description": "Following and cancelling queued work"},
    {"name": "players", "description": "Players rated from their attempts (POST /v1/verify with `player`)"},
    {"name": "games", "description": "Multiplayer games: rounds, bids, solutions shown, scores, live events"},
    {"name": "storms", "description": "Storm: puzzles against the clock the server keeps, high scores, the day's "
                                      "seeded run and its board"},
    {"name": "service", "description": "The play page, documentation, problem types and health"},
    {"name": "embed", "description": "The embeddable puzzle (an iframe any site may show) and oEmbed"},
    {"name": "webhooks", "description": "Signed events (Standard Webhooks) to an API key's endpoints: jobs "
                                        "finished, days published"},
]
SECURITY = {"player": {"type": "http", "scheme": "bearer",
                       "description": "The player's token from POST /v1/games, or a seat's from POST /v1/rooms"},
            "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key",
                       "description": "A key the operator issued (`ricochet keys create`): the client its limits and "
                                      "quotas count, instead of its address. Optional; a key not issued, or "
                                      "revoked, is 401."}}


def build(app: Flask | None = None) -> dict[str, Any]:
    """The OpenAPI document of `app` (by default the service's) as a mapping."""
    if app is None:
        from .app import create_app

        app = create_app({"TESTING": True})
    plugin = _Plugin(schema_name_resolver=_name)
    spec = APISpec(TITLE, _version(), "3.1.0", plugins=[plugin],
                   info={"description": description()}, servers=SERVERS, tags=TAGS)
    for schema in shapes.COMPONENTS:
        spec.components.schema(schema.__name__, schema=schema)
    converter = plugin.converter
    assert converter is not None  # made as the spec took the plugin
    spec.components.schema("PuzzleRef", component=converter.field2property(shapes.PUZZLE_REF))
    for schema, where in PARAMETERS.items():
        parameter = converter.schema2parameters(schema, location=where)[0]
        spec.components.parameter(_component(schema), where, parameter)
    for name, response in RESPONSES.items():
        spec.components.response(name, response)
    for name, header in HEADERS.items():
        spec.components.header(name, header)
    for name, link in LINKS.items():
        spec.components.link(name, link)
    for name, scheme in SECURITY.items():
        spec.components.security_scheme(name, scheme)
    for path, operations in _operations(app):
        spec.path(path=path, operations=operations)
    document = spec.to_dict()
    document["security"] = [{}, {"apiKey": []}]  # anonymous (by address), or an issued key
    document["webhooks"] = webhooks()
    return document


# What each event is sent for (docs/webhooks.md): the contract's `webhooks` section, one POST per event.
EVENTS = {
    "job.succeeded": "A pack or a queued solve this key queued (while it had a webhook) succeeded",
    "job.failed": "A pack or a queued solve this key queued (while it had a webhook) failed",
    "day.published": "A daily puzzle was published (00:00 UTC), to the endpoints that want it then",
    "webhook.test": "POST /v1/webhooks/{id}/test: sent to that endpoint whatever its events",
    "webhook.disabled": "Another endpoint of this key was disabled (it answered 410, or no attempt succeeded for "
                        "RICOCHET_WEBHOOKS_DISABLE_AFTER): sent to the key's other enabled endpoints whatever their "
                        "events",
}
WEBHOOK_HEADERS = [
    {"name": "webhook-id", "in": "header", "required": True, "schema": {"type": "string"},
     "description": "the message's id: the same on every attempt and replay (deduplicate by it)"},
    {"name": "webhook-timestamp", "in": "header", "required": True, "schema": {"type": "integer"},
     "description": "the attempt's time, whole seconds since the epoch"},
    {"name": "webhook-signature", "in": "header", "required": True, "schema": {"type": "string"},
     "description": "v1, and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`; during a "
                    "rotation's overlap two, separated by a space"},
]


def webhooks() -> dict[str, Any]:
    """OpenAPI 3.1's top-level `webhooks`: every event the service POSTs, its body a component (shapes.EVENT_SHAPES)."""
    if set(EVENTS) != set(shapes.EVENT_SHAPES):
        raise ValueError(f"events described and shaped differ: {sorted(set(EVENTS) ^ set(shapes.EVENT_SHAPES))}")
    return {name: {"post": {
        "operationId": "on" + "".join(part.title() for part in re.split(r"[._]", name)),
        "summary": EVENTS[name], "tags": ["webhooks"], "parameters": copy.deepcopy(WEBHOOK_HEADERS),
        "requestBody": {"required": True, "content": {"application/json": {
            "schema": {"$ref": f"#/components/schemas/{shape.__name__}"}}}},
        "responses": {"2XX": {"description": "Received: the delivery succeeded"},
                      "410": {"description": "Gone: the endpoint is disabled, nothing more is sent to it"},
                      "429": {"description": "Retried after Retry-After (seconds or an HTTP date), at most an hour"},
                      "default": {"description": "Retried on the schedule (docs/webhooks.md)"}}}}
        for name, shape in shapes.EVENT_SHAPES.items()}


def render(document: dict[str, Any]) -> str:
    """The document as YAML, `openapi` first (clients sniff it) and then the rest in reading order."""
    order = ("openapi", "info", "servers", "tags", "security", "paths", "webhooks", "components")
    ordered = {k: document[k] for k in order if k in document} | document
    head, rest = yaml.dump(ordered, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=110).split("\n", 1)
    return f"{head}\n{GENERATED}{rest}"


GENERATED = "# Generated by `python -m service.contract` from service/shapes.py and the views' declarations:\n" \
            "# do not edit it, change those and generate it again.\n"


def _operations(app: Flask) -> list[tuple[str, dict[str, Any]]]:
    """(path, operations) for every route, from its view's declaration (service/declare.py)."""
    out: dict[str, dict[str, Any]] = {}
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static":
            continue
        path = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule)
        view = app.view_functions[rule.endpoint]
        declared = {m: op for (m, p), op in operations_of(view).items() if p == rule.rule}
        doc = {m: op.openapi() for m, op in declared.items()}
        methods = {m.lower() for m in rule.methods or ()} - {"head", "options"}
        missing = methods - set(doc)
        if missing:
            raise ValueError(f"the view of {path} declares no {', '.join(sorted(missing))} operation "
                             "(service/declare.py: @operation)")
        out.setdefault(path, {}).update({m: _shared(path, doc[m], declared[m].quota) for m in sorted(methods)})
    return list(out.items())


def _shared(path: str, operation: dict[str, Any], quota: str | None = None) -> dict[str, Any]:
    """What kinds of routes share, so that no declaration repeats it: every route
    refuses an oversized request line (414) or headers (431); every /v1 route
    refuses a key not issued (401), is rate limited (429) and says its limits
    on every answer (RateLimit-Policy, RateLimit), and one that queues work
    (`quota`) says what is left of the quota on its 202; a route that takes
    a body refuses a bad (400) or too large (413) one; a path parameter not
    described otherwise is a plain string."""
    responses = operation.setdefault("responses", {})
    responses.setdefault("414", "Problem")  # a request line over 8 KiB (the front, or gunicorn)
    responses.setdefault("431", "Problem")  # a header over 8 KiB, or headers over 32 KiB in all
    if path.startswith("/v1/"):
        responses.setdefault("401", "Problem")  # an X-API-Key not issued here
        responses.setdefault("429", "TooManyRequests")
        for status, response in responses.items():  # the shared ones (a name) carry the fields themselves
            if isinstance(response, dict):
                charged = QUOTA_HEADERS if quota is not None and status == "202" else {}
                response["headers"] = {**response.get("headers", {}), **LIMIT_HEADERS, **charged}
    if "requestBody" in operation:
        responses.setdefault("400", "Problem")
        responses.setdefault("413", "Problem")
    described = {name for p in operation.get("parameters", []) for name in _names(p)}
    plain = [{"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
             for name in re.findall(r"{(\w+)}", path) if name not in described]
    if plain:
        operation["parameters"] = plain + operation.get("parameters", [])
    return operation


def _names(parameter: Any) -> list[str]:
    """The names a parameter of a declaration gives: its own, its schema's fields', or its component's."""
    if isinstance(parameter, str):
        schema = next((s for s in PARAMETERS if parameter == _component(s)), None)
    elif "name" in parameter:
        return [parameter["name"]]
    else:
        schema = parameter.get("schema")
    return [f.data_key or n for n, f in _schema_cls(schema)._declared_fields.items()] if schema else []


def _component(schema: type[Schema]) -> str:
    """The name a shared parameter's schema gives its component (its COMPONENT)."""
    name = getattr(schema, "COMPONENT", None)
    if not isinstance(name, str):
        raise TypeError(f"{schema.__name__} is listed in PARAMETERS without a COMPONENT")
    return name


def _schema_cls(schema: type[Schema] | Schema | str) -> type[Schema]:
    """A schema's class (apispec resolves a name, an instance or a class; never a list here)."""
    found = resolve_schema_cls(schema)
    assert not isinstance(found, list)
    return found


def _version() -> str:
    try:
        return version("ricochet-service")
    except PackageNotFoundError:  # a source tree without metadata
        return "0.0.0"


def _name(schema: type[Schema] | Schema | str) -> str:
    return _schema_cls(schema).__name__


class _Converter(OpenAPIConverter):
    """Fields documented as a shape (metadata "shape") or as one of several
    (shapes.Either) take that shape's schema, keeping their description and default."""

    def field2property(self, field: fields.Field[Any]) -> dict[str, Any]:
        prop = super().field2property(field)
        if isinstance(field, shapes.Either):
            shape: dict[str, Any] = {"oneOf": [self._shape(a) for a in field.alternatives]}
        elif "shape" in field.metadata:
            shape = self._shape(field.metadata["shape"])
        else:
            return prop
        return {**shape, **{k: prop[k] for k in ("description", "default") if k in prop}}

    def _shape(self, alternative: Any) -> dict[str, Any]:
        if isinstance(alternative, dict):
            return alternative
        if isinstance(alternative, fields.Field):
            return self.field2property(alternative)
        return self.resolve_nested_schema(alternative)


class _Plugin(MarshmallowPlugin):
    Converter = _Converter


class _Dumper(yaml.SafeDumper):
    """Short mappings and lists of scalars on one line, multi-line text as literal blocks."""


def _flat(value: Any) -> bool:
    return not isinstance(value, (dict, list)) or (isinstance(value, list) and all(_flat(v) for v in value))


def _short(data: Any) -> bool:
    return len(yaml.safe_dump(data, default_flow_style=True, width=1000)) < 90


def _mapping(dumper: yaml.SafeDumper, data: dict[str, Any]) -> yaml.MappingNode:
    leaves = all(_flat(v) for v in data.values())
    pairs = all(isinstance(v, dict) and all(_flat(x) for x in v.values()) for v in data.values())
    flow = (leaves or pairs) and _short(data)
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items(), flow_style=flow)


def _sequence(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.SequenceNode:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=_flat(data) and _short(data))


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


_Dumper.add_representer(dict, _mapping)
_Dumper.add_representer(list, _sequence)
_Dumper.add_representer(str, _text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m service.contract", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when openapi.yaml is not the generated one")
    args = parser.parse_args(argv)
    text = render(build())
    if args.check:
        if DOCUMENT.read_text(encoding="utf-8") != text:
            print(f"{DOCUMENT} differs from the generated document: run python -m service.contract",
                  file=sys.stderr)
            return 1
        return 0
    DOCUMENT.write_text(text, encoding="utf-8")
    print(f"wrote {DOCUMENT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
