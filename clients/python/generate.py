"""Write ricochet_client/_generated.py from the service's contract (openapi.yaml):
a TypedDict for every schema, one typed method per operation of `paths` (named
after its operationId), and the webhook events of the contract's `webhooks`
section when it has one.  The client is made from the contract, so an endpoint
cannot be missing from it; tests/test_python_client.py fails when the committed
file is not what this makes of today's openapi.yaml.

    python clients/python/generate.py            # writes the module
    python clients/python/generate.py --check    # exit 1 when it is stale

Needs PyYAML (the service's environment has it); the client itself does not.
"""

from __future__ import annotations

import argparse
import json
import keyword
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CONTRACT = HERE.parents[1] / "openapi.yaml"
OUTPUT = HERE / "ricochet_client" / "_generated.py"
METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
WIDTH = 120
_TEXT = re.compile(r"^(text/|image/svg\+xml|application/(x-ndjson|yaml|xml))")


def snake(name: str) -> str:
    """An operationId or a parameter's name as a Python identifier: getPlayer -> get_player, from -> from_."""
    name = re.sub(r"[^0-9A-Za-z_]+", "_", name)
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower().strip("_")
    if not name or name[0].isdigit():
        name = "_" + name
    return name + "_" if keyword.iskeyword(name) or name in ("self", "token") else name


def camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^0-9A-Za-z]+", name) if part)


class Generator:
    """One pass over a contract; `extra` collects the TypedDicts of inline objects as they are met."""

    def __init__(self, contract: dict[str, Any]) -> None:
        self.contract = contract
        self.components = contract.get("components", {})
        self.extra: list[str] = []
        self.named: set[str] = set(self.components.get("schemas", {}))
        self.literals: dict[tuple[Any, ...], str] = {}

    # -- schemas -------------------------------------------------------------------------

    def resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        """A `$ref` to the components (responses, parameters, request bodies) followed."""
        while isinstance(node, dict) and "$ref" in node:
            section, name = node["$ref"].split("/")[-2:]
            node = self.components[section][name]
        return node

    def type_of(self, schema: Any, name: str) -> str:
        """The Python type of a JSON Schema; an inline object with properties becomes a TypedDict `name`."""
        if not isinstance(schema, dict) or not schema:
            return "Any"
        if "$ref" in schema:
            return schema["$ref"].rsplit("/", 1)[-1]
        for key in ("oneOf", "anyOf"):
            if key in schema:
                return self.union([self.type_of(s, f"{name}{i}") for i, s in enumerate(schema[key])])
        if "allOf" in schema:
            return self.type_of(schema["allOf"][0], name) if len(schema["allOf"]) == 1 else "dict[str, Any]"
        if "const" in schema:
            return f"Literal[{_lit(schema['const'])}]"
        types = schema.get("type")
        if isinstance(types, list):
            return self.union([self.type_of({**schema, "type": t}, name) for t in types])
        if "enum" in schema and types in ("string", "integer", None):
            return self.literal(schema["enum"], name)
        return self._typed(types, schema, name)

    def literal(self, values: list[Any], name: str) -> str:
        """Literal[...] in place, or a named alias (one per set of values) when it would not fit a line."""
        inline = "Literal[" + ", ".join(_lit(v) for v in values) + "]"
        if len(inline) <= 60:
            return inline
        key = tuple(values)
        if key not in self.literals:
            self.literals[key] = name
            self.named.add(name)
            self.extra.append("\n".join([f"{name}: TypeAlias = Literal[", *(f"    {_lit(v)}," for v in values), "]"]))
        return self.literals[key]

    def _typed(self, types: str | None, schema: dict[str, Any], name: str) -> str:
        if types == "array":
            return f"list[{self.type_of(schema.get('items'), name + 'Item')}]"
        if types == "object" or "properties" in schema:
            if schema.get("properties"):
                self.extra.append(self.typed_dict(name, schema))
                return name
            extra = schema.get("additionalProperties")
            return f"dict[str, {self.type_of(extra, name + 'Value') if isinstance(extra, dict) else 'Any'}]"
        simple = {"string": "bytes" if schema.get("format") == "binary" else "str", "integer": "int",
                  "number": "float", "boolean": "bool", "null": "None"}
        return simple.get(types or "", "Any")

    @staticmethod
    def union(types: list[str]) -> str:
        out: list[str] = []
        for t in types:
            out += [part.strip() for part in _split_top(t, "|") if part.strip() not in out]
        if "Any" in out:
            return "Any"
        return " | ".join([t for t in out if t != "None"] + (["None"] if "None" in out else []))

    def optional(self, kind: str) -> str:
        return self.union([kind, "None"])

    def typed_dict(self, name: str, schema: dict[str, Any]) -> str:
        self.named.add(name)
        required = set(schema.get("required", []))
        fields = []
        for prop, sub in schema.get("properties", {}).items():
            kind = self.type_of(sub, name + camel(prop))
            fields.append((prop, kind if prop in required else f"NotRequired[{kind}]"))
        doc = _docstring(schema.get("description") or f"The {name} schema of the contract.", 4)
        if all(p.isidentifier() and not keyword.iskeyword(p) for p, _ in fields):
            body = [f"    {p}: {k}" for p, k in fields]
            return "\n".join([f"class {name}(TypedDict):", doc, *body])
        entries = [f"    {_lit(p)}: {_quoted(k)}," for p, k in fields]  # keys that are no identifiers
        return "\n".join([f"{name} = TypedDict({_lit(name)}, {{", *entries, "})"])

    def schemas(self) -> list[str]:
        out = []
        for name, schema in self.components.get("schemas", {}).items():
            if schema.get("properties") and schema.get("type", "object") == "object":
                out.append(self.typed_dict(name, schema))
            else:
                out.append(f"{name}: TypeAlias = {_quoted(self.type_of(schema, name + 'Value'))}")
        return out

    # -- operations ----------------------------------------------------------------------

    def operations(self) -> list[tuple[str, str, dict[str, Any], list[dict[str, Any]]]]:
        found = []
        for path, item in self.contract.get("paths", {}).items():
            shared = item.get("parameters", [])
            for method in METHODS:
                if method in item:
                    found.append((method.upper(), path, item[method], shared))
        return found

    def method(self, verb: str, path: str, op: dict[str, Any], shared: list[dict[str, Any]]) -> str:
        name = snake(op["operationId"])
        params = {p["name"]: p for p in (self.resolve(p) for p in [*shared, *op.get("parameters", [])])}
        positional, keywords, query, headers = [], [], {}, {}
        for param in params.values():
            arg = snake(param["name"])
            kind = self.type_of(param.get("schema"), camel(op["operationId"]) + camel(param["name"]))
            if param["in"] == "path":
                positional.append(f"{arg}: {kind}")
                path = path.replace("{" + param["name"] + "}", "{quote_path(" + arg + ")}")
                continue
            keywords.append(f"{arg}: {kind}" if param.get("required") else f"{arg}: {self.optional(kind)} = None")
            (query if param["in"] == "query" else headers if param["in"] == "header" else {})[param["name"]] = arg
        body = self.body(op, keywords, set(params))
        if self.needs_token(op):
            keywords.append("token: str")
        signature = ", ".join(["self", *positional, *(["*", *_ordered(keywords)] if keywords else [])])
        call = [_lit(verb), f'f"{path}"' if "{" in path else _lit(path)]
        call += [f"query={_mapping(query)}"] if query else []
        call += [f"headers={_mapping(headers)}"] if headers else []
        call += [f"body={body}"] if body else []
        call += ["token=token"] if self.needs_token(op) else []
        summary = (op.get("summary") or op["operationId"]).rstrip(".") + f" ({verb} {path_of(op, path)})."
        return "\n".join([*_wrapped_def(name, signature, self.reply(op)), _docstring(summary, 8),
                          *_wrapped_call("        return self._transport.request(", call)])

    def body(self, op: dict[str, Any], keywords: list[str], taken: set[str]) -> str | None:
        """The request body: keyword arguments, one per property of an object body, or `body`."""
        request = self.resolve(op.get("requestBody") or {})
        schema = (request.get("content") or {}).get("application/json", {}).get("schema")
        if schema is None:
            return None
        shape = self.resolve_schema(schema)
        props = shape.get("properties") or {}
        if not props or "oneOf" in shape or "anyOf" in shape or taken & set(props) \
                or any(snake(p) != p for p in props):
            kind = self.type_of(schema, camel(op["operationId"]) + "Body")
            keywords.append(f"body: {kind}" if request.get("required") else f"body: {self.optional(kind)} = None")
            return "body"
        owner = schema["$ref"].rsplit("/", 1)[-1] if "$ref" in schema else camel(op["operationId"]) + "Body"
        required = set(shape.get("required", []))
        for prop, sub in props.items():
            kind = self.type_of(sub, owner + camel(prop))
            keywords.append(f"{prop}: {kind}" if prop in required else f"{prop}: {self.optional(kind)} = None")
        return _mapping({p: p for p in props})

    def resolve_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in schema:
            schema = self.components["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
        return schema

    def needs_token(self, op: dict[str, Any]) -> bool:
        """A player's bearer token is asked for when every way to call the operation is one."""
        schemes = self.components.get("securitySchemes", {})
        requirements = op.get("security") or []
        return bool(requirements) and all(
            any(schemes.get(s, {}).get("scheme") == "bearer" for s in requirement) for requirement in requirements)

    def reply(self, op: dict[str, Any]) -> str:
        kinds = []
        for status, response in op.get("responses", {}).items():
            if not str(status).startswith("2"):
                continue
            content = self.resolve(response).get("content") or {}
            if not content:
                kinds.append("None")
            for media, item in content.items():
                if media == "application/json" or media.endswith("+json"):
                    kinds.append(self.type_of(item.get("schema"), camel(op["operationId"]) + "Reply"))
                else:
                    kinds.append("str" if _TEXT.match(media) else "bytes")
        return f"Reply[{self.union(kinds) or 'None'}]"

    # -- webhooks ------------------------------------------------------------------------

    def webhooks(self) -> list[str]:
        events: dict[str, str] = {}
        for event, item in (self.contract.get("webhooks") or {}).items():
            op = next((item[m] for m in METHODS if m in item), {})
            request = self.resolve(op.get("requestBody") or {})
            schema = (request.get("content") or {}).get("application/json", {}).get("schema")
            events[event] = self.type_of(schema, camel(event) + "Event") if schema else "dict[str, Any]"
        default = "WebhookEvent" if "WebhookEvent" in self.named else "dict[str, Any]"
        payload = self.union(list(events.values())) if events else default
        table = "\n".join(f"    {_lit(e)}: {_quoted(t)}," for e, t in events.items())
        return ["# The events the service sends to webhooks (the contract's `webhooks` section), and their bodies.\n"
                f"WEBHOOK_EVENTS: dict[str, str] = {{{chr(10) + table + chr(10) if table else ''}}}",
                f"WebhookPayload: TypeAlias = {_multiline(payload)}"]

    # -- the module ----------------------------------------------------------------------

    def module(self) -> str:
        schemas = self.schemas()
        ops = self.operations()
        names = [snake(op["operationId"]) for _, _, op, _ in ops]
        doubled = sorted({n for n in names if names.count(n) > 1})
        if doubled:
            raise SystemExit(f"operationIds that give the same method name: {doubled}; make them unique")
        methods = [self.method(*item) for item in ops]
        webhooks = self.webhooks()
        table = "\n".join(f"    {_lit(o['operationId'])}: ({_lit(verb)}, {_lit(path)}, {_lit(name)}),"
                          for (verb, path, o, _), name in zip(ops, names))
        info = self.contract.get("info", {})
        parts = [HEADER.format(title=info.get("title", "the service"), version=info.get("version", "?")),
                 *schemas, *self.extra, *webhooks,
                 "# operationId -> (method, path, the method's name on Operations)\n"
                 f"OPERATIONS: dict[str, tuple[str, str, str]] = {{\n{table}\n}}",
                 OPERATIONS_CLASS + "\n\n".join(methods)]
        return "\n\n\n".join(parts).rstrip() + "\n"


HEADER = '''"""The contract of {title} {version} as Python: generated by clients/python/generate.py
from openapi.yaml; do not edit, run `python clients/python/generate.py` instead.

`Operations` has one method per operation (its operationId in snake_case): path
parameters first, then query and header parameters, the JSON body's properties
(or `body`), and `token` (a player's) where the operation needs one, all as
keywords; None leaves a parameter out.  Each returns a `Reply` whose `data` is
typed by the schemas below."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

from .transport import Reply, Transport, quote_path

__all__ = ["OPERATIONS", "WEBHOOK_EVENTS", "Operations", "WebhookPayload"]'''

OPERATIONS_CLASS = '''class Operations:
    """Every operation of the contract, as a method that sends one request."""

    def __init__(self, transport: Transport) -> None:
        self._transport = transport

'''


def path_of(op: dict[str, Any], path: str) -> str:
    return re.sub(r"\{quote_path\((\w+)\)\}", r"{\1}", path)


def _ordered(keywords: list[str]) -> list[str]:
    """Keyword-only arguments, the required ones first (as readers expect; Python would allow any order)."""
    return [k for k in keywords if "=" not in k] + [k for k in keywords if "=" in k]


def _mapping(pairs: dict[str, str]) -> str:
    return "{" + ", ".join(f"{_lit(k)}: {v}" for k, v in pairs.items()) + "}"


def _quoted(kind: str) -> str:
    return _lit(kind) if kind != "Any" else "Any"


def _multiline(union: str) -> str:
    """A union of names defined above it, unquoted, a member a line when it would not fit one."""
    parts = [p.strip() for p in _split_top(union, "|")]
    if len(union) <= WIDTH - 40:
        return union
    return "(\n    " + "\n    | ".join(parts) + "\n)"


def _lit(value: Any) -> str:
    """A literal as the house writes one (double quotes)."""
    return json.dumps(value) if isinstance(value, str) else repr(value)


def _docstring(text: str, indent: int) -> str:
    pad = " " * indent
    text = " ".join(text.split()).replace("\\", "\\\\").replace('"""', "'''")
    lines = textwrap.wrap(text, WIDTH - indent - 6, break_on_hyphens=False)
    if len(lines) == 1:
        return f'{pad}"""{lines[0]}"""'
    return "\n".join([f'{pad}"""{lines[0]}', *(pad + line for line in lines[1:]), f'{pad}"""'])


def _wrapped_def(name: str, signature: str, returns: str) -> list[str]:
    line = f"    def {name}({signature}) -> {returns}:"
    if len(line) <= WIDTH:
        return [line]
    args = [a.strip() for a in _split_top(signature)]
    return [f"    def {name}(", *(f"            {a}," for a in args), f"    ) -> {returns}:"]


def _wrapped_call(start: str, args: list[str]) -> list[str]:
    line = start + ", ".join(args) + ")"
    if len(line) <= WIDTH:
        return [line]
    out = [start]
    for arg in args:
        if len(arg) + 13 <= WIDTH:
            out.append(f"            {arg},")
            continue
        key, _, mapping = arg.partition("=")
        entries = _split_top(mapping[1:-1])
        out += [f"            {key}={{", *(f"                {e.strip()}," for e in entries), "            },"]
    return [*out, "        )"]


def _split_top(text: str, sep: str = ",") -> list[str]:
    """Split at the separators outside brackets and quotes."""
    parts, depth, current, quote = [], 0, "", ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == sep and depth == 0:
            parts.append(current)
            current = ""
            continue
        current += char
    return [p for p in [*parts, current] if p.strip()]


def generate(contract: dict[str, Any]) -> str:
    """The module's source for a contract (an OpenAPI 3.1 document, as parsed)."""
    return Generator(contract).module()


def load(path: Path = CONTRACT) -> dict[str, Any]:
    import yaml

    return yaml.safe_load(path.read_text(encoding="utf-8"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contract", type=Path, default=CONTRACT)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--check", action="store_true", help="exit 1 when the output is not what the contract makes")
    args = parser.parse_args(argv)
    source = generate(load(args.contract))
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != source:
            print(f"{args.output} is stale: run python clients/python/generate.py", file=sys.stderr)
            return 1
        return 0
    args.output.write_text(source, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
