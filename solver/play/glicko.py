"""Glicko-2 (Glickman, "Example of the Glicko-2 system", 2013), one game at a time:
a player's first attempt at a puzzle is a game between the two, won by the
player when the answer reaches the target in the optimal number of moves.

Ratings are on the Glicko scale (1500 for a stranger, as Lichess's puzzles);
each attempt is its own rating period, as Lichess rates puzzles, so ratings move
as soon as an attempt is recorded.  `prior` is where a puzzle starts: from what
the solver knows of it, so that a puzzle nobody played yet already sits near
puzzles of its kind (docs/ratings.md gives the fit).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

SCALE = 173.7178  # Glicko-2's factor between the Glicko scale and its own
TAU = 0.5  # how far volatility may move in one period (Glickman suggests 0.3 to 1.2)
START = 1500.0
START_DEVIATION = 500.0  # a new player: Lichess's
START_VOLATILITY = 0.09
MIN_DEVIATION = 45.0  # never quite certain: ratings keep following play
MAX_DEVIATION = 500.0
_EPSILON = 1e-6


@dataclass(frozen=True)
class Rating:
    value: float = START
    deviation: float = START_DEVIATION
    volatility: float = START_VOLATILITY

    def to_json(self) -> dict[str, float]:
        return {"value": round(self.value, 1), "deviation": round(self.deviation, 1)}


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _volatility(sigma: float, phi: float, v: float, delta: float) -> float:
    """Step 5 of the algorithm: the new volatility, by the Illinois method."""
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        return (ex * (delta * delta - phi * phi - v - ex) / (2.0 * (phi * phi + v + ex) ** 2)
                - (x - a) / (TAU * TAU))

    big_a = a
    if delta * delta > phi * phi + v:
        big_b = math.log(delta * delta - phi * phi - v)
    else:
        k = 1
        while f(a - k * TAU) < 0:
            k += 1
        big_b = a - k * TAU
    fa, fb = f(big_a), f(big_b)
    for _ in range(100):
        if abs(big_b - big_a) <= _EPSILON:
            break
        big_c = big_a + (big_a - big_b) * fa / (fb - fa)
        fc = f(big_c)
        if fc * fb <= 0:
            big_a, fa = big_b, fb
        else:
            fa /= 2.0
        big_b, fb = big_c, fc
    return math.exp(big_a / 2.0)


def update(r: Rating, opponent: Rating, score: float) -> Rating:
    """`r` after one game against `opponent` (score 1 won, 0 lost, 0.5 drawn)."""
    return period(r, [(opponent, score)])


def period(r: Rating, games: list[tuple[Rating, float]]) -> Rating:
    """`r` after a rating period of `games` (opponent, score), steps 2 to 8."""
    mu, phi = (r.value - START) / SCALE, r.deviation / SCALE
    if not games:  # step 6 alone: an idle period only widens the deviation
        phi_idle = math.sqrt(phi * phi + r.volatility * r.volatility)
        return Rating(r.value, min(MAX_DEVIATION, phi_idle * SCALE), r.volatility)
    inverse_v = 0.0
    gain = 0.0
    for opponent, score in games:
        g = _g(opponent.deviation / SCALE)
        e = 1.0 / (1.0 + math.exp(-g * (mu - (opponent.value - START) / SCALE)))
        inverse_v += g * g * e * (1.0 - e)
        gain += g * (score - e)
    v = 1.0 / inverse_v
    sigma = _volatility(r.volatility, phi, v, v * gain)
    phi_star = math.sqrt(phi * phi + sigma * sigma)
    phi_new = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
    mu_new = mu + phi_new * phi_new * gain
    deviation = min(MAX_DEVIATION, max(MIN_DEVIATION, phi_new * SCALE))
    return Rating(START + mu_new * SCALE, deviation, sigma)


def game(player: Rating, puzzle: Rating, won: bool) -> tuple[Rating, Rating]:
    """Both ratings after a player's first attempt at a puzzle."""
    score = 1.0 if won else 0.0
    return update(player, puzzle, score), update(puzzle, player, 1.0 - score)


# The prior: a puzzle of n optimal moves starts at PRIOR_BASE + PRIOR_PER_MOVE * (n - PRIOR_LENGTH),
# plus PRIOR_PER_HELPER for each robot beyond the first that its solution moves:
# length is what decides whether a player finds the optimum.  It is calibrated to
# people, not to random positions: a new player (1500) is taken to find the
# optimum of a 6-move puzzle about half the time (the Monday daily; the length
# most players of the board game find at the table), and each move more to cost
# as much as 110 rating points (a 17-move puzzle is out of reach of all but the
# strongest).  Until 2026-11-27 it was anchored at 9 moves, the median of random
# positions, which made nearly every daily "extreme".
PRIOR_BASE = 1500.0
PRIOR_LENGTH = 6
PRIOR_PER_MOVE = 110.0
PRIOR_PER_HELPER = 40.0
PRIOR_DEVIATION = 300.0  # an informed guess: play moves it, but less than a stranger's


def prior(length: int, robots_moved: int = 1) -> Rating:
    """Where a puzzle of `length` optimal moves, its solution moving `robots_moved`
    robots, starts before anyone played it."""
    value = PRIOR_BASE + PRIOR_PER_MOVE * (length - PRIOR_LENGTH) + PRIOR_PER_HELPER * max(0, robots_moved - 1)
    return Rating(min(3600.0, max(400.0, value)), PRIOR_DEVIATION, START_VOLATILITY)
