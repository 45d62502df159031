"""One declaration per operation: the route, the schemas that check what comes in,
the shapes that what goes out is dumped with, and everything else the contract
says about it (summary, tag, parameters, replies, links).  The view receives
what was checked and returns data; the declaration turns it into the response.
service/contract.py writes openapi.yaml from the same declarations.

    @operation(bp, "post /v1/verify", "verify", tag="solving",
               summary="Judge a player's moves, and whether they are optimal",
               body=VerifyRequest, replies={200: Reply("The verdict", Verdict)}, errors=(400,))
    def verify(body: dict) -> dict: ...

A view may still return a `Response` (streams, pictures, several media types);
then the declaration documents it and passes it through.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from flask import Blueprint, Response, jsonify, request
from marshmallow import Schema

from solver.formats.lines import ndjson_line
from workers.schemas import load

from .caching import cached
from .errors import json_body

Shape = type[Schema]

# The shared replies of openapi.yaml's components, by status: a declaration lists
# the statuses it may answer and these fill in what each means.
STANDARD = {304: "NotModified", 400: "Problem", 401: "Problem", 403: "Problem", 404: "Problem", 409: "Problem",
            410: "Problem", 422: "Problem", 503: "Unavailable"}
JOB_LINKS = {"getJob": {"$ref": "#/components/links/GetJob"}, "cancelJob": {"$ref": "#/components/links/CancelJob"}}
CACHE_HEADERS = {"ETag": "ETag", "Cache-Control": "CacheControl"}


@dataclass(frozen=True)
class Reply:
    """One status of an operation.  `shape` is the JSON body's schema: the view's
    data is dumped with it.  `cached` gives the body a strong ETag and
    Cache-Control (a day's, or the Cache-Control it gives) and answers 304 to a
    request that holds it.  `media` documents
    other media types the view answers itself (pictures, streams)."""

    description: str
    shape: Shape | None = None
    headers: Mapping[str, Any] = field(default_factory=dict)
    links: Mapping[str, Any] = field(default_factory=dict)
    media: Mapping[str, Any] = field(default_factory=dict)
    cached: bool | str = False
    content_type: str = "application/json"

    def openapi(self) -> dict[str, Any]:
        out: dict[str, Any] = {"description": self.description}
        headers = {**(CACHE_HEADERS if self.cached else {}), **self.headers}
        if headers:
            out["headers"] = dict(headers)
        content = {self.content_type: {"schema": self.shape}} if self.shape is not None else {}
        content.update(self.media)
        if content:
            out["content"] = content
        if self.links:
            out["links"] = dict(self.links)
        return out

    @functools.cached_property
    def _dumper(self) -> Schema | None:  # one instance: schemas are stateless, and making one costs 60 us
        return self.shape() if self.shape is not None else None

    def render(self, data: Any, status: int) -> Response:
        response = jsonify(self._dumper.dump(data) if self._dumper is not None else data)
        response.status_code = status
        if not self.cached:
            return response
        return cached(response, self.cached) if isinstance(self.cached, str) else cached(response)


@dataclass(frozen=True)
class Body:
    """A request body: a schema loads it (a bad field is a 400 naming it), or a
    parser that checks it itself, documented as `schema` (a JSON Schema object)."""

    schema: Shape | None = None
    parse: Callable[[Any], Any] | None = None
    doc: Mapping[str, Any] | None = None

    @functools.cached_property
    def _loader(self) -> Schema | None:
        return self.schema() if self.schema is not None else None

    def load(self, data: Any) -> Any:
        if self.parse is not None:
            return self.parse(data)
        assert self._loader is not None
        return load(self._loader, data)

    def openapi(self) -> dict[str, Any]:
        schema = self.doc if self.doc is not None else self.schema
        return {"required": True, "content": {"application/json": {"schema": schema}}}


@dataclass
class Operation:
    method: str
    path: str
    operation_id: str
    summary: str
    tag: str
    replies: dict[int, Reply | str]
    description: str | None = None
    body: Body | None = None
    query: Shape | None = None
    path_shape: Shape | None = None  # `path=` of the declaration (`path` is the route's)
    header: Shape | None = None
    parameters: Sequence[Any] = ()
    security: Sequence[Mapping[str, Any]] | None = None
    searches: bool = False  # the tighter rate limit of the routes that search (service/limits.py)
    quota: str | None = None  # the client's hourly quota its queued work is charged to ("solve", "pack")

    @functools.cached_property
    def query_loader(self) -> Schema | None:
        return self.query() if self.query is not None else None

    @functools.cached_property
    def path_loader(self) -> Schema | None:
        return self.path_shape() if self.path_shape is not None else None

    @functools.cached_property
    def header_loader(self) -> Schema | None:
        return self.header() if self.header is not None else None

    def openapi(self) -> dict[str, Any]:
        out: dict[str, Any] = {"operationId": self.operation_id, "summary": self.summary, "tags": [self.tag]}
        if self.description:
            out["description"] = self.description
        parameters = [*_parameters(self.path_shape, "path"), *self.parameters, *_parameters(self.header, "header"),
                      *_parameters(self.query, "query")]
        if parameters:
            out["parameters"] = parameters
        if self.body is not None:
            out["requestBody"] = self.body.openapi()
        out["responses"] = {str(status): reply.openapi() if isinstance(reply, Reply) else reply
                            for status, reply in self.replies.items()}
        if self.security is not None:
            out["security"] = list(self.security)
        return out

    def respond(self, result: Any) -> Response:
        """The view's result as a response: a Response as it is, else data (or
        (data, status) or (data, status, headers)) dumped with that status's shape."""
        if isinstance(result, Response):
            return result
        headers: Mapping[str, str] = {}
        status = min(s for s, r in self.replies.items() if isinstance(r, Reply))
        if isinstance(result, tuple):
            result, status, *rest = result
            headers = rest[0] if rest else {}
        reply = self.replies[status]
        assert isinstance(reply, Reply), f"{self.operation_id} declares no shape for {status}"
        response = reply.render(result, status)
        response.headers.update(headers)
        return response


def _parameters(shape: Shape | None, where: str) -> list[Any]:
    """A path's or query's parameters in the contract: the schema's fields, or the
    shared component it names (a schema's COMPONENT: openapi.yaml's
    components/parameters holds it once)."""
    if shape is None:
        return []
    component = getattr(shape, "COMPONENT", None)
    return [component] if component else [{"in": where, "schema": shape}]


def operation(bp: Blueprint, route: str, operation_id: str, *, summary: str, tag: str,
              replies: Mapping[int, Reply | str], errors: Sequence[int] = (), **options: Any) -> Callable[..., Any]:
    """Declare the operation `route` ("get /v1/...", Flask's <name> for path
    parameters) on `bp`: see the module's docstring.  `path=`, `query=` and
    `header=` schemas load the path's, the query's and the headers' parameters
    as `body=` loads the body (a bad one is a 400 naming it), pass them to the
    view (its path arguments, `query`, `header`) and document them.  `errors` are statuses
    answered with the shared replies (STANDARD); `replies` the operation's own."""
    method, path = route.split(" ", 1)
    body = options.pop("body", None)
    options["path_shape"] = options.pop("path", None)
    if body is not None and not isinstance(body, Body):
        body = Body(schema=body)
    all_replies = {**{s: STANDARD[s] for s in errors}, **replies}
    op = Operation(method.lower(), path, operation_id, summary, tag, dict(sorted(all_replies.items())),
                   body=body, **options)

    def decorate(view: Callable[..., Any]) -> Callable[..., Any]:
        if hasattr(view, "operations"):  # a second route (or method) for the same view
            view.operations[(op.method, op.path)] = op
            bp.add_url_rule(path, view_func=view, methods=[op.method.upper()])
            return view

        @functools.wraps(view)
        def endpoint(**path_args: Any) -> Response:
            method = "get" if request.method == "HEAD" else request.method.lower()
            declared = endpoint.operations[(method, request.url_rule.rule)]  # type: ignore[attr-defined,union-attr]
            if declared.path_loader is not None:
                path_args = load(declared.path_loader, path_args)
            if declared.body is not None:
                path_args["body"] = declared.body.load(json_body())
            if declared.query_loader is not None:
                path_args["query"] = load(declared.query_loader, request.args.to_dict())
            if declared.header_loader is not None:
                names = [f.data_key or n for n, f in declared.header_loader.fields.items()]
                sent = {name: request.headers[name] for name in names if name in request.headers}  # any case
                path_args["header"] = load(declared.header_loader, sent)
            return declared.respond(view(**path_args))

        endpoint.operations = {(op.method, op.path): op}  # type: ignore[attr-defined]
        bp.add_url_rule(path, view_func=endpoint, methods=[op.method.upper()])
        return endpoint

    return decorate


@functools.cache
def _dumper(shape: Shape) -> Schema:
    return shape()


def dumped(shape: Shape, data: Any) -> bytes:
    """A reply's body as its declaration renders it: `data` dumped by `shape`, as
    JSON (for a view that keeps the bytes it served)."""
    return jsonify(_dumper(shape).dump(data)).get_data()


def ndjson(shape: Shape, items: Iterable[Any]) -> Iterator[str]:
    """A streamed reply's lines (application/x-ndjson): each item dumped by `shape`,
    written by the export's NDJSON writer (spaced, as these lines have always been)."""
    dumper = _dumper(shape)
    for item in items:
        yield ndjson_line(dumper.dump(item), spaced=True)


def event_stream(shape: Shape, events: Iterable[dict[str, Any]], id_key: str, type_key: str) -> Iterator[str]:
    """Server-sent events: each event's `id` and `event` from two of its fields,
    its `data` the event dumped by `shape`."""
    dumper = _dumper(shape)
    for event in events:
        yield f"id: {event[id_key]}\nevent: {event[type_key]}\ndata: {json.dumps(dumper.dump(event))}\n\n"


def operations_of(view: Callable[..., Any]) -> dict[tuple[str, str], Operation]:
    """The declarations of a registered view function ({} for one declared otherwise)."""
    return getattr(view, "operations", {})
