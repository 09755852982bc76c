"""Shared test helpers: where the reference data lives."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
REFERENCE = SHARED / "reference"
DATA = Path(__file__).resolve().parent / "data"

needs_shared = pytest.mark.skipif(
    not REFERENCE.exists(),
    reason="../shared/reference (Timeloop and SCALE-Sim runs) exists only in the dev and CI "
    "checkouts, not in a user's clone",
)
