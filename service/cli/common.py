"""What the subcommands share: exit codes, input errors, reading JSON documents,
progress bars, and the package version."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from solver.errors import InvalidInput
from solver.model.board import Board
from solver.model.puzzle import Goal

EXIT_OK, EXIT_FAILED, EXIT_INPUT = 0, 1, 2


class InputError(Exception):
    """Input the command cannot read or judge: exit 2 with the message."""


def open_input(path: str) -> TextIO:
    if path == "-":
        return sys.stdin
    try:
        return open(path, encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror}") from None


def load_json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{where}: not valid JSON ({e.msg} at line {e.lineno} column {e.colno})") from None


def documents(path: str, jsonl: bool) -> Iterator[tuple[str, Any]]:
    """(where, document) for the file's one document, or for each non-blank line."""
    with open_input(path) as f:
        if not jsonl:
            yield path, load_json(f.read(), path)
            return
        for n, line in enumerate(f, 1):
            if line.strip():
                yield f"{path}:{n}", load_json(line, f"{path}:{n}")


def each(path: str, jsonl: bool, judge: Callable[[Any], dict[str, Any]]) -> int:
    """Run `judge` on each document; an invalid line prints an error object in its
    place (keeping answers in order) and the command exits 2 at the end."""
    status = EXIT_OK
    for where, doc in documents(path, jsonl):
        try:
            answer = judge(doc)
        except InvalidInput as e:
            if not jsonl:
                raise InputError(f"{where}: {e}") from None
            print(f"ricochet: {where}: {e}", file=sys.stderr)
            answer = {"error": e.message, "field": e.field}
            status = EXIT_INPUT
        print(json.dumps(answer), flush=jsonl)
    return status


def context(redis_url: str | None = None) -> Any:
    """The use cases' Context for a command: the deployment's stores, pools and
    queue with REDIS_URL set, or at `redis_url` (wired by the Celery app's
    factory, as the server's are), else none (what play made of a puzzle is then
    a new puzzle's); settings read and checked as a server reads them."""
    from application import Context
    from solver.production.pools import Library, shipped
    from workers.answers import Answers
    from workers.settings import settings_or_exit

    settings = settings_or_exit()
    celery = None
    if redis_url or settings.redis_url:
        from workers.app import make_celery

        celery = make_celery(redis_url or settings.redis_url, settings, patient=False)
    stores = celery.stores if celery is not None else None
    return Context(stores=stores, pools=Library(shipped() + ([stores.pools] if stores else [])),
                   answers=Answers(stores, settings.solve_time_budget), rating_prior=settings.rating_prior == "on",
                   send=celery.send if celery is not None else None)


def deployment(why: str, redis_url: str | None = None) -> Any:
    """The Context of the deployment at REDIS_URL (or `redis_url`); without one,
    InputError saying `why` it is needed."""
    ctx = context(redis_url)
    if ctx.stores is None:
        raise InputError(why)
    return ctx


def board_and_target(spec: str, target: str) -> tuple[Board, Goal]:
    """A real board and one of its chips, as `colour-symbol` or `vortex`."""
    try:
        board = Board.from_json(spec)
    except InvalidInput as e:
        raise InputError(str(e)) from None
    names = {(f"{t.colour}-{t.symbol}" if t.colour else t.symbol): t for t in board.targets}
    if target not in names:
        raise InputError(f"{target!r} is not a chip of {spec}; choose one of {', '.join(sorted(names))}")
    t = names[target]
    return board, Goal(t.cell, t.colour, t.symbol)


def progress_bar(total: float | None, desc: str, unit: str = "") -> Any:
    """A tqdm bar on standard error, shown only when a person watches (a terminal)."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=not sys.stderr.isatty(), leave=True)


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("ricochet-service")
    except PackageNotFoundError:
        return "unknown"


class TimedBar:
    """A progress bar over a time-bounded run (`ricochet bank`): it fills with the
    seconds spent, ticking once a second on its own, and shows what was found."""

    def __init__(self, seconds: float, desc: str) -> None:
        self._start = time.monotonic()
        self._stop = threading.Event()
        self.bar = progress_bar(round(seconds), desc, " s")
        self._thread = threading.Thread(target=self._tick, daemon=True)

    def _tick(self) -> None:
        while not self._stop.wait(1.0):
            self._advance()

    def _advance(self) -> None:
        done = min(round(time.monotonic() - self._start), self.bar.total or 0)
        self.bar.update(done - self.bar.n)

    def found(self, what: str) -> None:
        self.bar.set_postfix_str(what)

    def write(self, line: str) -> None:
        """A line on standard error that does not break the bar."""
        self.bar.write(line, file=sys.stderr)

    def __enter__(self) -> TimedBar:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._advance()
        self.bar.close()
