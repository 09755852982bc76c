"""The loop dimensions of a layer and which of them index each operand.

A layer is the loop nest ``for N, G, K, C, P, Q, R, S: O[n,g,k,q,p] += I[n,g,c,h,w] * W[g,k,c,s,r]``
with the input window ``w = wstride*p + wdilation*r`` and ``h = hstride*q + hdilation*s``
(Timeloop's conv2D projection: P pairs with R along the width, Q with S along the height).
"""

from __future__ import annotations

import math
import re
from enum import IntEnum
from typing import Any

from magnet.units import number_text


class Dim(IntEnum):
    """A loop dimension; the value is its index in every ``[..., dim, ...]`` array."""

    N = 0  # batch
    G = 1  # groups (depthwise conv, attention heads, batched matmul)
    K = 2  # output channels
    C = 3  # input channels per group (reduction)
    P = 4  # output width
    Q = 5  # output height
    R = 6  # filter width
    S = 7  # filter height


DIMS: tuple[str, ...] = tuple(d.name for d in Dim)
NUM_DIMS = len(DIMS)
#: Largest extent, stride, dilation or mapping factor (mapping arrays hold factors as int32).
MAX_EXTENT = 2**31 - 1


class Operand(IntEnum):
    """An operand; the value is its index in every ``[..., operand, ...]`` array."""

    W = 0  # weights (or the second matmul operand)
    I = 1  # inputs  # noqa: E741
    O = 2  # outputs (partial sums)  # noqa: E741


OPERANDS: tuple[str, ...] = ("weights", "inputs", "outputs")
OPERAND_ALIASES = {
    "w": Operand.W,
    "weight": Operand.W,
    "weights": Operand.W,
    "i": Operand.I,
    "input": Operand.I,
    "inputs": Operand.I,
    "o": Operand.O,
    "output": Operand.O,
    "outputs": Operand.O,
}

# RELEVANT[operand] = the dimensions that index it (the rest leave it unchanged).
RELEVANT: dict[Operand, frozenset[Dim]] = {
    Operand.W: frozenset({Dim.G, Dim.K, Dim.C, Dim.R, Dim.S}),
    Operand.I: frozenset({Dim.N, Dim.G, Dim.C, Dim.P, Dim.Q, Dim.R, Dim.S}),
    Operand.O: frozenset({Dim.N, Dim.G, Dim.K, Dim.P, Dim.Q}),
}
REDUCTION_DIMS = frozenset({Dim.C, Dim.R, Dim.S})


def parse_dim(name: str) -> Dim:
    """Dimension by name; Timeloop's ``M`` is magnet's ``K``. A dimension's own name (as a
    mapping's loops name them) is one lookup."""
    found = Dim.__members__.get(name)
    if found is not None:
        return found
    key = name.strip().upper()
    if key == "M":
        key = "K"
    if key not in DIMS:
        raise ValueError(f"unknown dimension {name!r}; allowed: {', '.join(DIMS)} (M = K)")
    return Dim[key]


def parse_operand(name: str) -> Operand:
    """Operand by name: ``weights``, ``inputs``, ``outputs`` (singular or a letter too)."""
    key = name.strip().lower()
    if key not in OPERAND_ALIASES:
        raise ValueError(f"unknown operand {name!r}; allowed: weights, inputs, outputs")
    return OPERAND_ALIASES[key]


_FACTOR = re.compile(r"^([A-Za-z]+)=?([-+]?[0-9.][0-9.eE+-]*)$")


def parse_factors(value: Any) -> dict[str, int]:
    """``{P: 8, Q: 2}``, ``"P8 Q2"`` or ``"P=8,Q=2"`` -> ordered ``{dim: factor}``.

    Timeloop's ``M`` reads as ``K``. Raises ``ValueError`` (callers add the file and field).
    """
    if value is None:
        return {}
    if isinstance(value, str):
        items = []
        for token in re.split(r"[\s,]+", value.strip()):
            if not token:
                continue
            match = _FACTOR.match(token)
            if not match:
                raise ValueError(f"{token!r} is not DIM<factor> (e.g. 'P8 Q2' or 'P=8')")
            number = number_text(match.group(2))  # 8, or 1e3 (a whole number)
            items.append((match.group(1), match.group(2) if number is None else number))
    elif isinstance(value, dict):
        items = list(value.items())
    else:
        raise ValueError(f"expected a mapping like {{P: 8, Q: 2}} or 'P8 Q2', got {value!r}")
    out: dict[str, int] = {}
    for key, factor in items:
        dim = parse_dim(str(key)).name
        if dim in out:
            raise ValueError(f"dimension {dim} appears twice")
        if isinstance(factor, bool) or not isinstance(factor, int) or factor < 1:
            raise ValueError(f"factor of {dim} must be a whole number >= 1, got {factor!r}")
        if factor > MAX_EXTENT:
            raise ValueError(f"factor of {dim} must be <= {MAX_EXTENT} (2**31 - 1), got {factor}")
        out[dim] = factor
    return out


def divisors(n: int) -> list[int]:
    """The divisors of ``n``, ascending."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))
