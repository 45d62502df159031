"""Shared fixtures: the public puzzle samples and the quadrant test puzzles from ../shared."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("RICOCHET_SHARED", ROOT.parent / "shared"))


def load_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.fixture(scope="session")
def sample_puzzles() -> list[dict]:
    return load_jsonl(SHARED / "puzzles" / "sample_public.jsonl")


@pytest.fixture(scope="session")
def quadrant_test_puzzles() -> list[dict]:
    with open(SHARED / "boards" / "quadrants.json", encoding="utf-8") as f:
        return json.load(f)["test_puzzles"]
