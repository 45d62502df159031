"""Formats: pictures (SVG boards, puzzles and pack sheets), ASCII boards,
DriftingDroids game IDs, and the NDJSON and CSV lines of exports and packs."""
