"""magnet's own Pareto front and hypervolume (``magnet.search.pareto``): hand-derived cases,
and agreement with Optuna's private functions (which magnet no longer calls) on random sets."""

from __future__ import annotations

import numpy as np
import pytest

from magnet.search.pareto import covered, hypervolume, nondominated, reference_point


def test_front_by_hand() -> None:
    # (1,3), (2,2), (3,1) trade off; (3,3) is dominated by (2,2); the copy of (1,3) stays
    points = [[1, 3], [2, 2], [3, 1], [3, 3], [1, 3]]
    assert nondominated(points).tolist() == [True, True, True, False, True]
    assert nondominated(np.zeros((0, 2))).tolist() == []
    # one objective: every copy of the best
    assert nondominated([[2.0], [1.0], [1.0]]).tolist() == [False, True, True]


def test_points_a_front_covers_by_hand_and_by_definition() -> None:
    front = np.array([[1.0, 3.0], [3.0, 1.0]])
    # (2,4) is dominated by (1,3), (3,1) equals a front point, (2,2) is beaten by neither,
    # (0,5) is better than both in its first objective
    points = np.array([[2.0, 4.0], [3.0, 1.0], [2.0, 2.0], [0.0, 5.0]])
    assert covered(points, front).tolist() == [True, True, False, False]
    assert covered(points, np.zeros((0, 2))).tolist() == [False] * 4
    assert covered(np.zeros((0, 2)), front).tolist() == []
    rng = np.random.default_rng(7)
    for objectives in (1, 2, 3, 4):
        # coarse values: many ties, which count as covered
        pts = rng.integers(0, 5, (300, objectives)).astype(float)
        fr = rng.integers(0, 5, (20, objectives)).astype(float)
        each = [any((f <= p).all() for f in fr) for p in pts]
        assert covered(pts, fr).tolist() == each


def test_hypervolume_by_hand() -> None:
    # a staircase up to (4, 4): 3 x 1 + 2 x 1 + 1 x 1 = 6
    assert hypervolume([[1, 3], [2, 2], [3, 1]], [4, 4]) == 6.0
    # a point on the reference's face adds nothing; a dominated point adds nothing
    assert hypervolume([[1, 3], [2, 2], [3, 1], [4, 0], [3, 3]], [4, 4]) == 6.0
    # two boxes of 1 x 1 x 1/2 that share nothing but a face: 1; in 4-D, a unit cube times 2
    assert hypervolume([[0, 0, 0.5], [0, 0.5, 0]], [1, 1, 1]) == pytest.approx(0.75)
    assert hypervolume([[0, 0, 0, 0]], [1, 1, 1, 2]) == 2.0
    assert hypervolume([[3.0]], [5.0]) == 2.0
    assert hypervolume(np.zeros((0, 2)), [1, 1]) == 0.0
    assert reference_point([[0, 1], [2, -1]]) == [3.0, 2.0]


@pytest.mark.parametrize("objectives", [1, 2, 3, 4, 5])
def test_same_as_optuna(objectives: int) -> None:
    wfg = pytest.importorskip("optuna._hypervolume")
    multi = pytest.importorskip("optuna.study._multi_objective")
    rng = np.random.default_rng(objectives)
    for case in range(300):
        n = int(rng.integers(1, 40))
        if case % 3 == 0:  # ties and copies
            points = rng.integers(0, 4, size=(n, objectives)).astype(float)
        else:
            points = rng.normal(size=(n, objectives))
        mask = nondominated(points)
        assert (mask == multi._is_pareto_front(points, assume_unique_lexsorted=False)).all()
        ref = points.max(axis=0) + rng.uniform(-0.5, 1.0, size=objectives)
        inside = points[(points < ref).all(axis=1)]
        expected = 0.0
        if len(inside):
            front = inside[multi._is_pareto_front(inside, assume_unique_lexsorted=False)]
            expected = float(wfg.compute_hypervolume(front, ref))
        assert hypervolume(points, ref.tolist()) == pytest.approx(expected, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("objectives", [1, 2, 3, 4])
def test_a_fronts_hypervolume_is_that_of_its_points_exactly(objectives: int) -> None:
    # front_hypervolume skips the search for non-dominated points (its caller keeps a front):
    # on any set of distinct mutually non-dominated points, in any order, the same bits as
    # hypervolume; and a non-finite reference or no point inside as there
    from magnet.search.pareto import front_hypervolume

    rng = np.random.default_rng(objectives)
    for case in range(200):
        n = int(rng.integers(1, 40))
        grid = case % 3 == 0  # ties on one objective
        points = (
            rng.integers(0, 6, size=(n, objectives)).astype(float)
            if grid
            else rng.normal(size=(n, objectives))
        )
        front = np.unique(points[nondominated(points)], axis=0)
        front = front[rng.permutation(len(front))]
        ref = (points.max(axis=0) + rng.uniform(-0.5, 1.0, size=objectives)).tolist()
        assert front_hypervolume(front, ref) == hypervolume(front, ref) == hypervolume(points, ref)
    assert front_hypervolume(np.zeros((0, 2)), [1, 1]) == 0.0
    assert front_hypervolume([[0.0, 0.0]], [1, float("inf")]) == hypervolume([[0, 0]], [1, np.inf])
