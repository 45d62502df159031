"""`ricochet keys`: issue, list and revoke API keys in the Redis the service uses
(a revoked key's webhooks are disabled; `ricochet keys webhooks NAME` lists and
deletes a key's webhooks):
REDIS_URL's, else the private one of a `ricochet serve` running from the
instance folder (its run file names it), so that beside `make run` one command
issues a key.  A client sends its key as `X-API-Key`; an unknown or revoked key
is refused with 401, and a client without a key is its address."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any

from .common import EXIT_FAILED, EXIT_OK, InputError, deployment


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("keys", help="issue, list and revoke API keys (in REDIS_URL's Redis, else that of the "
                                    "`ricochet serve` running from --instance)")
    p.add_argument("--instance", default="instance",
                   help="the folder of a running `ricochet serve` without REDIS_URL (default: instance, as serve's)")
    actions = p.add_subparsers(dest="action", required=True)
    create = actions.add_parser("create", help="issue a key: printed once, stored only as a hash")
    create.add_argument("name", help="who the key is for (unique; 1-64 of A-Z a-z 0-9 . _ -)")
    create.add_argument("--quota-solve", type=int, metavar="SECONDS",
                        help="worker-seconds of queued solves an hour (default: RICOCHET_QUOTA_SOLVE_SECONDS)")
    create.add_argument("--quota-pack", type=int, metavar="MOVES",
                        help="puzzle-moves of packs an hour (default: RICOCHET_QUOTA_PACK_MOVES)")
    create.set_defaults(run=run_create)
    listing = actions.add_parser("list", help="the keys issued: names, when, quotas (never the keys)")
    listing.set_defaults(run=run_list)
    revoke = actions.add_parser("revoke", help="revoke a key by name (refused within 30 s everywhere)")
    revoke.add_argument("name", help="the name it was issued under")
    revoke.set_defaults(run=run_revoke)
    hooks = actions.add_parser("webhooks", help="a key's webhook endpoints (issued or revoked: a revoked key's "
                                                "are disabled), one JSON line each; --delete deletes")
    hooks.add_argument("name", help="the name the key was issued under")
    which = hooks.add_mutually_exclusive_group()
    which.add_argument("--delete", metavar="ID", help="delete this endpoint of the key")
    which.add_argument("--delete-all", action="store_true", help="delete every endpoint of the key")
    hooks.set_defaults(run=run_webhooks)


def _stores(args: argparse.Namespace) -> Any:  # the stores, opened late: the other commands need no Redis
    ctx, settings = _deployment(args)
    return ctx.stores, settings


def _deployment(args: argparse.Namespace) -> Any:  # the use cases' Context on the service's Redis, and the settings
    from workers.embedded import RUN_FILE, running_redis
    from workers.settings import settings_or_exit

    settings, url = settings_or_exit(), None
    if not settings.redis_url:  # the private Redis of a `ricochet serve` running here, if any
        run = running_redis(args.instance)
        if run is None:
            raise InputError(f"keys live in the service's Redis: set REDIS_URL, or run this beside a running "
                             f"`ricochet serve` (no server is running from {args.instance}/{RUN_FILE}; give its "
                             "--instance)")
        url = run["redis_url"]
        print(f"ricochet: the private Redis of the server at {run['address']} (pid {run['pid']})", file=sys.stderr)
    return deployment("keys live in the service's Redis: set REDIS_URL", url), settings


def _keys(args: argparse.Namespace) -> Any:
    return _stores(args)[0].keys


def _held(stores: Any, settings: Any) -> int:
    """EXIT_OK once RICOCHET_WAIT_REPLICAS replicas hold the change, so a failover keeps it."""
    if settings.wait_replicas and stores.settle(settings.wait_replicas, settings.wait_ms) < settings.wait_replicas:
        print(f"ricochet: not yet held by {settings.wait_replicas} replica(s): a failover now may lose it; "
              "check with `ricochet keys list`", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def announce(instance: str, redis_url: str, address: str) -> None:
    """`ricochet serve` with a private Redis: the run file `ricochet keys` finds it by, and how to issue a key."""
    from workers.embedded import write_run_file

    write_run_file(instance, redis_url, address)
    command = sys.argv[0] if Path(sys.argv[0]).name == "ricochet" else "ricochet"  # as it was run: .venv/bin/...
    where = "" if instance == "instance" else f" --instance {instance}"
    print(f"ricochet: issue an API key for this server with: {command} keys{where} create NAME", file=sys.stderr)


def forget(instance: str) -> None:
    from workers.embedded import remove_run_file

    remove_run_file(instance)


def run_create(args: argparse.Namespace) -> int:
    name = args.name
    if not (1 <= len(name) <= 64 and all(c.isascii() and (c.isalnum() or c in "._-") for c in name)):
        raise InputError("a key's name is 1 to 64 of A-Z a-z 0-9 . _ -")
    quotas = {kind: value for kind, value in (("solve", args.quota_solve), ("pack", args.quota_pack))
              if value is not None}
    if any(v < 0 for v in quotas.values()):
        raise InputError("quotas are whole numbers from 0")
    stores, settings = _stores(args)
    try:
        key, _ = stores.keys.create(name, quotas)
    except ValueError as e:
        raise InputError(str(e)) from None
    print(key)
    print(f"ricochet: key {name!r} issued; it is shown only now (clients send it as X-API-Key)", file=sys.stderr)
    return _held(stores, settings)


def run_list(args: argparse.Namespace) -> int:
    for record in _keys(args).all():
        created = dt.datetime.fromtimestamp(record["created"], dt.UTC).isoformat(timespec="seconds")
        print(json.dumps({"name": record["name"], "created": created, "quotas": record["quotas"]}))
    return EXIT_OK


def run_revoke(args: argparse.Namespace) -> int:
    from application import webhooks

    ctx, settings = _deployment(args)
    stores = ctx.stores
    if not stores.keys.revoke(args.name):
        print(f"ricochet: no key named {args.name!r}", file=sys.stderr)
        return EXIT_FAILED
    disabled = webhooks.key_revoked(ctx, args.name)
    print(f"ricochet: key {args.name!r} revoked" + (f"; its {disabled} webhook(s) disabled (a new key of the same "
                                                     "name lists, enables and deletes them)" if disabled else ""),
          file=sys.stderr)
    return _held(stores, settings)


def run_webhooks(args: argparse.Namespace) -> int:
    from application import webhooks
    from application.problems import Problem

    ctx, _ = _deployment(args)
    if args.delete or args.delete_all:
        try:
            gone = webhooks.delete_owned(ctx, args.name, None if args.delete_all else args.delete)
        except Problem as e:
            raise InputError(e.detail) from None
        print(f"ricochet: {len(gone)} webhook(s) of key {args.name!r} deleted: {', '.join(gone) or 'none'}",
              file=sys.stderr)
        return EXIT_OK
    for hook in webhooks.owned_by(ctx, args.name):
        print(json.dumps(hook))
    return EXIT_OK
