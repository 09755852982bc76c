"""Random mappings: every dimension split into random factors over the levels.

Used by the random mapper, the property tests and the benchmarks. Factors are divisors
(perfect factorisation); spatial factors respect each fan-out; loop orders are random.
Capacity is not checked here: the evaluator flags mappings that overflow.
"""

from __future__ import annotations

import numpy as np

from magnet.arch.spec import Arch
from magnet.mapping.mapping import MappingBatch, default_keep
from magnet.workload.dims import NUM_DIMS, divisors
from magnet.workload.layer import Layer


def random_batch(
    layer: Layer, arch: Arch, n: int, seed: int = 0, spatial: bool = True
) -> MappingBatch:
    """``n`` random mappings of ``layer`` on ``arch`` (deterministic for a seed)."""
    rng = np.random.default_rng(seed)
    nlev = len(arch.levels)
    t = np.ones((n, nlev, NUM_DIMS), dtype=np.int64)
    sx = np.ones_like(t)
    sy = np.ones_like(t)
    rank = np.empty_like(t)
    for i in range(n):
        remaining = list(layer.dims)
        if spatial:
            for li, (fx, fy) in enumerate(arch.fanouts):
                for target, limit in ((sx, fx), (sy, fy)):
                    for d in rng.permutation(NUM_DIMS)[:2]:
                        options = [f for f in divisors(remaining[d]) if f <= limit]
                        f = int(rng.choice(options))
                        target[i, li, d] = f
                        remaining[d] //= f
                        limit //= f
        for d in range(NUM_DIMS):
            for li in rng.permutation(nlev - 1):
                f = int(rng.choice(divisors(remaining[d])))
                t[i, li, d] = f
                remaining[d] //= f
            t[i, nlev - 1, d] = remaining[d]
        for li in range(nlev):
            rank[i, li] = rng.permutation(NUM_DIMS)

    def batch_last(x: np.ndarray, dtype: type = np.int32) -> np.ndarray:
        return np.ascontiguousarray(x.transpose(1, 2, 0), dtype=dtype)

    return MappingBatch(
        batch_last(t), batch_last(sx), batch_last(sy), batch_last(rank, np.int8), default_keep(arch)
    )
