"""Shared test helpers: where the reference data lives."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
#: Timeloop and SCALE-Sim reference runs, shipped with the tests (data/reference/README.md)
REFERENCE = DATA / "reference"
