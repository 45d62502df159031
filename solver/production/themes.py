"""Themes: what a puzzle asks of its solver, read off its optimal solutions.

A theme about "every optimal solution" is given only when every one was
listed (solver.search.orders.LISTED orderings at most, within the budget): a
puzzle with more is not claimed to have it.  many-ways, an at-least claim,
is also proven from the first LISTED orderings of a puzzle with more, when
ten distinct classes are among them (`ways_proven`).  docs/ratings.md lists
them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from solver.model.geometry import DIRECTIONS
from solver.model.moves import IllegalMove, State, slide
from solver.model.puzzle import Move, Puzzle, Ricochet
from solver.play.grades import DifficultyReport
from solver.search.orders import LISTED, classes, proven_classes
from solver.search.solve import Solutions, every_solution, solve

LISTING_STATE_BUDGET = 32 << 20  # bytes the listing of every solution may take (a web process lists them)
WAYS_LONGEST = 14  # the longest puzzle many-ways is proven for from a partial listing (longer: lists take seconds)
MANY = 10  # classes that make many-ways

THEMES: dict[str, str] = {
    "solo": "an optimal solution moves the active robot alone",
    "one-helper": "the fewest robots an optimal solution moves besides the one that finishes: one",
    "two-helpers": "the fewest robots moved besides the finisher: two",
    "three-helpers": "the fewest robots moved besides the finisher: three or more",
    "blocker-moved-again": "every optimal solution moves a helper, then the finisher, then that helper again",
    "diagonal": "every optimal solution bounces off a diagonal barrier",
    "vortex": "the target is the vortex: any robot may finish",
    "ricochet-rule": "the ricochet rule decides: without it the puzzle takes fewer moves",
    "turn-at-the-end": "every optimal solution's last move turns the finisher (90 degrees or a bounce)",
    "unique": "one optimal solution, up to the order of independent moves",
    "many-ways": "ten or more optimal solutions, up to the order of independent moves",
    "short": "4 moves or fewer",
    "long": "12 to 17 moves",
    "very-long": "18 moves or more",
}


def themes(p: Puzzle, moves: Sequence[Move], *, time_budget: float = 1.0, thorough: bool = True,
           report: DifficultyReport | None = None, plain_length: int | None = None) -> list[str]:
    """The puzzle's themes (sorted), given one optimal solution `moves`.  Not
    `thorough` (a pack's thousand puzzles): only what the puzzle and that
    solution show at once (its length, the vortex, solo), no search.  A
    difficulty `report` that counted every optimal solution (a pool's, the
    bank's, one made by `difficulty`) spares the listing where its count
    already decides it (`_listing`): the same themes, without the search.  A
    `plain_length` known (the puzzle's optimum under the plain rule, from the
    other option's pool of the same analysis) spares the plain-rule search."""
    length = len(moves)
    found = set(themes_of_length(length))
    if p.goal.colour is None:
        found.add("vortex")
    if not thorough:
        return sorted(found | _helpers([list(moves)], complete=False))
    if p.rules.ricochet is Ricochet.TURN and length:
        if plain_length is None:
            plain_length = shorter_plain(p, length, time_budget)
        if plain_length is not None and plain_length < length:
            found.add("ricochet-rule")
    listed = _listing(p, moves, report, time_budget) if length else None
    if listed is None or not listed.complete:
        if ways_proven(p, listed):
            found.add("many-ways")
        return sorted(found | _helpers([list(moves)], complete=False) | counted(report, length))
    found |= _helpers(listed.listed, complete=True)
    grouped = classes(p, listed.listed)
    found |= {"unique"} if len(grouped) == 1 else {"many-ways"} if len(grouped) >= MANY else set()
    walks = [_walk(p, s) for s in listed.listed]
    if all(w[0] for w in walks):
        found.add("diagonal")
    if all(w[1] for w in walks):
        found.add("turn-at-the-end")
    if all(blocker_moved_again(s) for s in listed.listed):
        found.add("blocker-moved-again")
    return sorted(found)


def ways_proven(p: Puzzle, listed: Solutions | None) -> bool:
    """Whether a partial listing (the first LISTED orderings of more) of a
    puzzle of at most WAYS_LONGEST moves proves many-ways: ten distinct
    classes among them, each closed under the swaps of independent moves
    (orders.proven_classes), so that none is counted twice."""
    if listed is None or listed.complete or not listed.listed or listed.length > WAYS_LONGEST:
        return False
    return proven_classes(p, listed.listed, enough=MANY) >= MANY


def shorter_plain(p: Puzzle, length: int, time_budget: float) -> int | None:
    """The puzzle's optimum under the plain rule when it is shorter than `length`
    (searched to length - 1 within the budget), else None."""
    plain = solve(replace(p, rules=replace(p.rules, ricochet=Ricochet.NONE)), max_depth=length - 1,
                  time_budget=time_budget)
    return plain.length if plain.status == "optimal" else None


def _listing(p: Puzzle, moves: Sequence[Move], report: DifficultyReport | None, time_budget: float) -> Solutions | None:
    """Every optimal solution, up to LISTED, as `themes` reads them.  Where the
    report counted them (uncapped), the count decides without a search: more
    than LISTED and the listing could not be complete (the themes about every
    solution are not given, as after a listing that stops there), and exactly
    one is `moves` itself.  Why: listing a long puzzle's solutions took a
    second or more a request (issue 68), and most long pool puzzles have
    thousands of orderings.  A puzzle of at most WAYS_LONGEST moves is listed
    all the same (up to LISTED: a fraction of a second), for many-ways
    (`ways_proven`)."""
    length = len(moves)
    counted = report.get("optimal_solutions") if report is not None else None
    if counted is not None and report is not None and report.get("optimal_length") == length:
        if (report.get("optimal_solutions_capped") or counted > LISTED) and length > WAYS_LONGEST:
            return Solutions(length, counted, bool(report.get("optimal_solutions_capped")), [])
        if counted == 1:
            return Solutions(length, 1, False, [list(moves)])
    return every_solution(p, length, limit=LISTED, time_budget=time_budget, state_budget=LISTING_STATE_BUDGET)


def counted(report: DifficultyReport | None, length: int) -> set[str]:
    """The helpers' theme a difficulty `report` decides without a listing: its
    fewest robots moved is every optimal solution's when it counted them all
    (not capped)."""
    if report is None or report.get("optimal_length") != length or report.get("optimal_solutions") is None \
            or report.get("optimal_solutions_capped") or not report.get("fewest_robots_moved"):
        return set()
    fewest = report["fewest_robots_moved"]
    return {"solo"} if fewest == 1 else {2: {"one-helper"}, 3: {"two-helpers"}}.get(fewest, {"three-helpers"})


# The themes given only when every optimal solution was listed.
EVERY_SOLUTION = frozenset({"one-helper", "two-helpers", "three-helpers", "blocker-moved-again", "diagonal",
                            "turn-at-the-end", "unique", "many-ways"})
HELPED = {"solo": 1, "one-helper": 2, "two-helpers": 3}  # the fewest robots moved each theme says ("three-helpers": 4+)


def could_have(theme: str, p: Puzzle, report: DifficultyReport) -> bool:
    """Whether `themes` could give `p` this theme, judged without a search from
    the puzzle and its difficulty report alone (False only where it cannot): a
    request for one theme skips the others' puzzles before listing solutions."""
    length = report["optimal_length"]
    if theme in LENGTH_THEMES:
        return theme in themes_of_length(length)
    if theme == "vortex":
        return p.goal.colour is None
    if theme == "ricochet-rule":
        return p.rules.ricochet is Ricochet.TURN and length > 0
    counted = report.get("optimal_solutions")
    exact = counted is not None and not report.get("optimal_solutions_capped")
    if theme == "many-ways" and counted is not None:
        if exact and counted < MANY:
            return False  # ten ways up to order need ten orderings at least
        return (exact and counted <= LISTED) or length <= WAYS_LONGEST  # more: proven from a partial listing
    if theme in EVERY_SOLUTION and counted is not None and (not exact or counted > LISTED):
        return False  # they need every solution listed, and there are more than a listing holds (`_listing`)
    if theme == "diagonal":
        return bool(p.board.diagonals)
    if exact and theme in HELPED:  # every optimal solution was counted: its fewest robots moved is the puzzle's
        return report["fewest_robots_moved"] == HELPED[theme]
    if exact and theme == "three-helpers":
        return report["fewest_robots_moved"] >= 4
    return True


LENGTH_THEMES = ("short", "long", "very-long")  # the themes a puzzle's optimal length alone decides


def themes_of_length(length: int) -> list[str]:
    """The themes a puzzle has by its optimal length alone."""
    return ["short"] if length <= 4 else ["long"] if 12 <= length <= 17 else ["very-long"] if length >= 18 else []


def _helpers(solutions: list[list[Move]], complete: bool) -> set[str]:
    """solo / one-helper / ...: from the fewest robots moved (of one solution,
    when not every one is known: then only solo, which one solution proves)."""
    fewest = min(len({m.robot for m in s}) for s in solutions) if solutions else 0
    if fewest == 1:
        return {"solo"}
    if not complete or fewest == 0:
        return set()
    return {2: {"one-helper"}, 3: {"two-helpers"}}.get(fewest, {"three-helpers"})


def bounces(p: Puzzle, moves: Sequence[Move]) -> bool:
    """Whether a move of the solution bounces off a diagonal barrier."""
    return _walk(p, moves)[0]


def _walk(p: Puzzle, moves: Sequence[Move]) -> tuple[bool, bool]:
    """Whether a move of the solution bounces off a barrier, and whether its last
    move turns the finisher (perpendicular to its move before, or bounced)."""
    state = State.start(p)
    bounced = last_bounced = False
    for m in moves:
        r = p.colours.index(m.robot)
        try:
            _, last_bounced = slide(p.board, state.cells[:r] + state.cells[r + 1:], m.robot, state.cells[r],
                                    DIRECTIONS.index(m.direction))
            state = state.apply(m)
        except IllegalMove:  # not a solution: nothing to say
            return False, False
        bounced |= last_bounced
    finisher = moves[-1].robot if moves else None
    previous = [m.direction for m in moves[:-1] if m.robot == finisher]
    turned = bool(previous) and (previous[-1] in "NS") != (moves[-1].direction in "NS")
    return bounced, turned or last_bounced


def blocker_moved_again(moves: Sequence[Move]) -> bool:
    """Whether the solution moves a helper, then the finisher, then that helper again."""
    finisher = moves[-1].robot
    for i, m in enumerate(moves):
        if m.robot == finisher:
            continue
        later = moves[i + 1:]
        for j, n in enumerate(later):
            if n.robot == finisher and any(k.robot == m.robot for k in later[j + 1:]):
                return True
    return False
