"""Ratings from play, split as Lichess splits its puzzle module: `selection`
(the next puzzle for a player), `finisher` (what an attempt does to the
ratings: pure rules, then one atomic write), `rounds` (what was handed without
its answer, what answers were shown), `players` (a player, their history),
`votes` (popularity) and `themes` (what a served puzzle carries: rating,
popularity, themes, the grade from play).  Players are the apps' own ids,
scoped to the API key that sent them (without a key, the public scope).
docs/ratings.md states the rules."""

from __future__ import annotations

from .finisher import ESTABLISHED_DEVIATION, PUZZLE_DAILY_BOUND, attempt, finish, unrated_because
from .players import HISTORY_KEPT, NEW_PLAYERS_A_DAY, PUBLIC, history, player, scope
from .rounds import checked, open_round, reveal
from .selection import OFFSETS, next_puzzle
from .themes import GRADED_AFTER, describe, describe_many, library_themes, of_puzzle, puzzle_prior, shown, themes_of
from .votes import popularity, vote

__all__ = ["ESTABLISHED_DEVIATION", "GRADED_AFTER", "HISTORY_KEPT", "NEW_PLAYERS_A_DAY", "OFFSETS", "PUBLIC",
           "PUZZLE_DAILY_BOUND", "attempt", "checked", "describe", "describe_many", "finish", "history",
           "library_themes", "next_puzzle", "of_puzzle", "open_round", "player", "popularity", "puzzle_prior",
           "reveal", "scope", "shown", "themes_of", "unrated_because", "vote"]
