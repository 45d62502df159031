"""Solved answers by puzzle content hash, the lower bounds of searches that ran
out of time, and the optimal lengths recorded for generated puzzles.

Keys: `solve:<hash>` (an answer), `unsettled:<hash>:<budget>` (a bound),
`optimum:<hash>` (a length), `themes:<hash>` (a puzzle's themes, comma-separated)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import Client, Reply, dump, load, maybe_number, text

SOLVE_TTL = 30 * 24 * 3600   # solved answers: a month
UNSETTLED_TTL = 3600         # "not within this budget": an hour (a queued solve may settle it meanwhile)


class AnswerStore:
    def __init__(self, client: Client) -> None:
        self.redis = client

    def get(self, puzzle_hash: str) -> dict[str, Any] | None:
        return load(self.redis.get(f"solve:{puzzle_hash}"), "answer")

    def get_many(self, puzzle_hashes: list[str]) -> list[dict[str, Any] | None]:
        """Several answers in one round trip (None where none is kept)."""
        if not puzzle_hashes:
            return []
        return [load(raw, "answer") for raw in self.redis.mget([f"solve:{h}" for h in puzzle_hashes])]

    def save(self, puzzle_hash: str, answer: dict[str, Any], *, unless_kept: bool = False) -> None:
        """Only settled answers (optimal, unsolvable) are kept: limits may differ next time.
        `unless_kept`: an answer kept already stays."""
        if answer.get("status") in ("optimal", "unsolvable"):
            self.redis.set(f"solve:{puzzle_hash}", dump("answer", answer), ex=SOLVE_TTL, nx=unless_kept)

    def unsettled(self, puzzle_hash: str, budget: float) -> tuple[int, str] | None:
        """How a search within `budget` seconds ended when it ran out (of time,
        "timeout", or of its memory, "state_limit"), if one did lately, and the
        lower bound it proved: the same search is not repeated."""
        raw = self.redis.get(f"unsettled:{puzzle_hash}:{budget:g}")
        if raw is None:
            return None
        bound, _, status = text(raw).partition(":")  # a bare bound: written before the status was
        return int(bound), status or "timeout"

    def save_unsettled(self, puzzle_hash: str, budget: float, lower_bound: int, status: str = "timeout") -> None:
        self.redis.set(f"unsettled:{puzzle_hash}:{budget:g}", f"{lower_bound}:{status}", ex=UNSETTLED_TTL)

    def themes(self, puzzle_hash: str) -> list[str] | None:
        return _themes(self.redis.get(f"themes:{puzzle_hash}"))

    def themes_of(self, puzzle_hashes: list[str]) -> list[list[str] | None]:
        if not puzzle_hashes:
            return []
        return [_themes(raw) for raw in self.redis.mget([f"themes:{h}" for h in puzzle_hashes])]

    def save_themes(self, puzzle_hash: str, themes: list[str]) -> None:
        self.redis.set(f"themes:{puzzle_hash}", ",".join(themes), ex=SOLVE_TTL)

    def optimum(self, puzzle_hash: str) -> int | None:
        """A puzzle's proven optimal length, when known: from a solved answer, or
        recorded when the puzzle was generated (daily puzzles, packs)."""
        solved, recorded = self.redis.mget(f"solve:{puzzle_hash}", f"optimum:{puzzle_hash}")
        answer = load(solved, "answer")
        if answer is not None and answer.get("status") == "optimal":
            return int(answer["length"])
        return maybe_number(recorded)

    def save_optimum(self, puzzle_hash: str, length: int, ttl: int | None = SOLVE_TTL) -> None:
        self.redis.set(f"optimum:{puzzle_hash}", length, ex=ttl)

    def record_generated(self, item: Mapping[str, Any], ttl: int | None) -> None:
        """A generated puzzle's optimum, and its solution as the answer served for
        it (hints, a solve) unless one is kept already: one solution per puzzle."""
        from solver.model.moves import round_of
        from solver.model.puzzle import Move, Puzzle
        from solver.search.solution import Solution

        p = Puzzle.from_json(item.get("puzzle") or {k: item[k] for k in ("board", "robots", "target", "rules")
                                                    if k in item})
        key = p.content_hash()
        self.save_optimum(key, item["optimal_length"], ttl)
        if item.get("solution"):
            moves = [Move.from_json(m) for m in item["solution"]]
            answer = Solution("optimal", moves, len(moves), round_of(p), {"source": "generated"}).to_json()
            self.save(key, answer | {"code": p.code()}, unless_kept=True)


def _themes(raw: Reply | None) -> list[str] | None:
    """A puzzle's kept themes (comma-separated), or None when none are kept."""
    return None if raw is None else [t for t in text(raw).split(",") if t]
