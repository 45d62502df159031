"""Directions, colours and cell arithmetic shared by every part of the game model."""

from __future__ import annotations

DIRECTIONS = ("N", "E", "S", "W")
N, E, S, W = range(4)
DX = (0, 1, 0, -1)
DY = (-1, 0, 1, 0)
OPPOSITE = (S, W, N, E)

# Robot colours in their canonical order; black is the optional fifth robot.
ROBOT_COLOURS = ("red", "green", "blue", "yellow", "black")
TARGET_COLOURS = ("red", "green", "blue", "yellow")
SYMBOLS = ("circle", "triangle", "square", "hexagon")
VORTEX = "vortex"

# Deflection by a diagonal barrier: `/` turns E->N, N->E, W->S, S->W;
# `\` turns E->S, S->E, W->N, N->W.  Indexed [orientation][direction].
DEFLECT = {
    "/": (E, N, W, S),
    "\\": (W, S, E, N),
}


def axis(direction: int) -> int:
    """0 for a vertical move (N/S), 1 for a horizontal one (E/W)."""
    return direction & 1
