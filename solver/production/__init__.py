"""Puzzle production: everything that makes puzzles of a wanted length.

- `difficulty`: the difficulty report (score, grade, percentile);
- `generated`: what producers hand back (`Generated`, `NoPuzzleFound`);
- `bank`: the shipped bank of proven long puzzles (read-only data);
- `pools`: proven, rated puzzles of every length from one whole-board analysis;
- `walk`: the one walk from known long positions toward others (search fallback);
- `generate`: the entry point that picks among pools, the bank and search;
- `maintain`: maintainers' tools (growing the bank, records); never on the run-time path.

The game and its search stay in `solver`; `workers` and `service` import this
package, never the other way round.
"""
