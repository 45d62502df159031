"""Formats: pictures (SVG boards, puzzles and pack sheets), ASCII boards, and
DriftingDroids game IDs."""
