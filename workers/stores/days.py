"""Daily puzzles: kept forever, and never replaced once published.

`daily:<date>` holds the record a deployment first served for that day; days
served under schedule version 1 were kept under `daily:v1:<date>` and still stand."""

from __future__ import annotations

import json

from solver.play.daily import DayRecord

from .answers import AnswerStore
from .base import Client, dump


class DayStore:
    def __init__(self, client: Client, answers: AnswerStore) -> None:
        self.redis = client
        self.answers = answers

    def get_many(self, days: list[str]) -> dict[str, DayRecord]:
        """The stored records of these days (ISO dates), where one is stored."""
        raws = self.redis.mget([k for d in days for k in (f"daily:{d}", f"daily:v1:{d}")]) if days else []
        found: dict[str, DayRecord] = {}
        for i, day in enumerate(days):
            raw = raws[2 * i] or raws[2 * i + 1]
            if raw is not None:  # every version of a day's record stands as it was kept
                found[day] = json.loads(raw)["daily"]
        return found

    def get(self, day: str) -> DayRecord | None:
        return self.get_many([day]).get(day)

    def publish(self, day: str, daily: DayRecord) -> DayRecord:
        """Store a day's puzzle unless one is there already; returns the one that stands."""
        standing = self.get(day)
        if standing is not None:
            return standing
        if self.redis.set(f"daily:{day}", dump("daily", daily), nx=True):
            self.answers.record_generated(daily, ttl=None)  # verify knows the optimum at once, for good
            return daily
        return self.get(day) or daily
