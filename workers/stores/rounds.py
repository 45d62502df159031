"""Rounds: what a client was handed without its answer, and what answers it
was shown (application/ratings/rounds.py decides what they mean for ratings).

Keys, both expiring ROUND_SECONDS after they were set:
- `round:<client>:<hash>`: the puzzle was handed to the client without its
  answer (GET /v1/puzzles/random?solution=false);
- `shown:<client>:<hash>`: the client was shown the puzzle's answer (its
  solution, every solution, the last hint, a solve, a picture with the
  solution) while a round was open: set only then, so that the answers clients
  are shown every day cost nothing here.
A client is an API key's name or an address (service/limits.py).
"""

from __future__ import annotations

from .base import Client

ROUND_SECONDS = 24 * 3600  # a round stays open (and an answer shown is remembered) this long
_SHOW = """if redis.call('exists', KEYS[1]) == 1 then redis.call('set', KEYS[2], 1, 'EX', ARGV[1]) end"""


class RoundStore:
    def __init__(self, client: Client) -> None:
        self.redis = client

    def open(self, client: str, puzzle_hash: str) -> None:
        """The puzzle was handed to `client` without its answer."""
        self.redis.set(f"round:{client}:{puzzle_hash}", 1, ex=ROUND_SECONDS)

    def show(self, client: str, puzzle_hash: str) -> None:
        """`client` was shown the puzzle's answer: remembered while it has a round open on it."""
        self.redis.eval(_SHOW, 2, f"round:{client}:{puzzle_hash}", f"shown:{client}:{puzzle_hash}", ROUND_SECONDS)

    def of(self, client: str, puzzle_hash: str) -> tuple[bool, bool]:
        """Whether a round is open for `client` on the puzzle, and whether it was shown its answer."""
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.exists(f"round:{client}:{puzzle_hash}")
            pipe.exists(f"shown:{client}:{puzzle_hash}")
            opened, shown = pipe.execute()
        return bool(opened), bool(shown)


__all__ = ["ROUND_SECONDS", "RoundStore"]
