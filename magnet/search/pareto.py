"""Pareto fronts and hypervolume of objective vectors.

Hypervolume is measured in decades: every objective is put on a log10 scale and turned into
a minimisation (a maximised objective is negated), so that objectives spanning orders of
magnitude (energy in pJ, area in mm^2) weigh alike. The reference point is fixed once per
study (``reference_point``): one decade worse than the worst of the first feasible designs.
"""

from __future__ import annotations

import numpy as np


def to_minimised_log(values: np.ndarray, directions: list[str]) -> np.ndarray:
    """``values[n, objectives]`` (positive) -> log10, negated for maximised objectives."""
    logs = np.log10(np.maximum(np.asarray(values, dtype=float), 1e-300))
    sign = np.array([1.0 if d == "minimize" else -1.0 for d in directions])
    return logs * sign


def nondominated(points: np.ndarray) -> np.ndarray:
    """bool mask of the points (minimised) no other point dominates (equal points all stay)."""
    from optuna.study._multi_objective import _is_pareto_front

    points = np.asarray(points, dtype=float)
    if len(points) == 0:
        return np.zeros(0, dtype=bool)
    return _is_pareto_front(points, assume_unique_lexsorted=False)


def reference_point(points: np.ndarray) -> list[float]:
    """One decade worse than the worst of ``points`` (minimised log values) in each objective."""
    return (np.asarray(points, dtype=float).max(axis=0) + 1.0).tolist()


def hypervolume(points: np.ndarray, reference: list[float]) -> float:
    """Hypervolume (decades^objectives) the points dominate up to ``reference``."""
    from optuna._hypervolume import compute_hypervolume

    points = np.asarray(points, dtype=float)
    ref = np.asarray(reference, dtype=float)
    if len(points) == 0:
        return 0.0
    # optuna's WFG needs every point inside ``ref``; handed only the non-dominated ones (the
    # same volume) it is much faster on big sets (1,722 points in 3-D: 270 ms -> 5 ms)
    inside = points[(points < ref).all(axis=1)]
    if len(inside) == 0:
        return 0.0
    return float(compute_hypervolume(inside[nondominated(inside)], ref))
