"""How many of a layer's words are not zero: each operand's density and distribution.

Sparseloop's density models (Wu et al., MICRO 2022; Timeloop ``src/workload/density-models``),
the two a workload names:

* ``uniform``: the tensor holds ``ceil(density x words)`` non-zeros placed uniformly at random
  (Sparseloop's ``hypergeometric``); a tile of ``n`` of its words is empty with probability
  ``(1 - density)^n`` (the binomial limit of the hypergeometric law, an approximation for
  tiles that are a large share of the tensor).
* ``structured``: N:M, ``N`` non-zeros in every block of ``M`` consecutive words (NVIDIA's 2:4;
  Sparseloop's ``fixed_structured``): every block holds exactly ``N``; a tile of ``n <= M``
  words of one block is empty with probability ``C(M - n, N) / C(M, N)``, a larger one never.

* ``measured``: a real tensor's zeros, given as the density of each input channel (``C``;
  ``channels``): the tensor's density is their mean, its zeros otherwise uniform within a
  channel. The MACs that meet a non-zero weight and a non-zero input are then the mean over
  channels of the product of the two channels' densities, not the product of the means: real
  tensors' channel densities are correlated (the Sparseloop artifact's Eyeriss v2 masks,
  r = 0.29-0.63), which a uniform model misses (its 6.5 % worst error there).

A workload gives a density as a number (uniform), ``"N:M"`` (structured) or a mapping
``{density: 0.4, distribution: uniform}``, ``{channels: [0.5, 0.7, ...]}`` (measured).
Density 1 everywhere is the dense layer.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, Literal

import numpy as np
import numpy.typing as npt
from pydantic import Field, GetJsonSchemaHandler, model_validator
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from magnet.strict import Public
from magnet.units import Whole
from magnet.workload.dims import OPERANDS, Operand, parse_operand

_N_OF_M = re.compile(r"^\s*(\d+)\s*:\s*(\d+)\s*$")


class Density(Public):
    """One tensor's density (non-zero words / words, in (0, 1]) and distribution; for
    ``structured``, ``block`` is M of N:M (``density`` x ``block`` = N, a whole number)."""

    density: float = Field(1.0, gt=0, le=1)
    distribution: Literal["uniform", "structured", "measured"] = "uniform"
    block: Whole | None = Field(None, ge=1, le=1 << 16)
    channels: tuple[Annotated[float, Field(ge=0, le=1)], ...] | None = None

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        """``0.5`` (uniform) and ``"2:4"`` (structured) as well as the mapping."""
        if isinstance(data, bool):
            raise ValueError(f"a density is a number in (0, 1] or 'N:M', got {data!r}")
        if isinstance(data, int | float):
            return {"density": data}
        if isinstance(data, str):
            match = _N_OF_M.match(data)
            if match is None:
                try:
                    return {"density": float(data)}
                except ValueError:
                    raise ValueError(
                        f"a density is a number in (0, 1] or 'N:M' (e.g. '2:4'), got {data!r}"
                    ) from None
            n, m = int(match.group(1)), int(match.group(2))
            if not 1 <= n <= m:
                raise ValueError(f"N:M needs 1 <= N <= M (N non-zeros in M words), got {data!r}")
            return {"density": n / m, "distribution": "structured", "block": m}
        if isinstance(data, dict) and data.get("channels") is not None:
            channels = list(data["channels"])
            if not channels or not all(isinstance(c, int | float) for c in channels):
                raise ValueError("channels: a list of each input channel's density, in [0, 1]")
            mean = sum(channels) / len(channels)
            if "density" in data and abs(float(data["density"]) - mean) > 1e-9:
                raise ValueError(
                    f"density {data['density']} is not the mean of channels ({mean:.6g}); "
                    "give one or the other"
                )
            return {**data, "density": mean, "distribution": "measured"}
        return data

    @model_validator(mode="after")
    def _whole_block(self) -> Density:
        if self.distribution == "structured":
            if self.block is None:
                raise ValueError("a structured density needs block (M of N:M), e.g. '2:4'")
            if abs(self.density * self.block - round(self.density * self.block)) > 1e-9:
                raise ValueError(
                    f"density x block must be a whole number of non-zeros (N of N:M), got "
                    f"{self.density:g} x {self.block}"
                )
        elif self.block is not None:
            raise ValueError("block is for a structured density (N:M); a uniform one has none")
        if (self.distribution == "measured") != (self.channels is not None):
            raise ValueError("a measured density gives channels (each input channel's density)")
        return self

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        """The shorthands too: a number in (0, 1], ``"N:M"``."""
        return {
            "anyOf": [
                {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
                {"type": "string", "pattern": _N_OF_M.pattern},
                handler(core_schema),
            ]
        }

    @property
    def dense(self) -> bool:
        """Every word may be non-zero."""
        return self.density >= 1.0

    def expected(self, words: float) -> float:
        """The share of a tensor of ``words`` words that is not zero: ``ceil(density x
        words) / words`` for uniform (Sparseloop's whole number of non-zeros), the density
        for structured."""
        if self.distribution == "structured" or words <= 0:
            return self.density
        return math.ceil(self.density * words - 1e-9) / words

    def occupied(self, words: npt.NDArray[np.floating[Any]]) -> npt.NDArray[np.float64]:
        """The probability that a tile of ``words`` words holds a non-zero (see the module
        docstring), elementwise."""
        n = np.maximum(np.asarray(words, dtype=float), 1.0)
        if self.dense:
            return np.ones_like(n)
        if self.distribution != "structured":
            return np.asarray(1.0 - (1.0 - self.density) ** n)
        m = int(self.block or 1)
        k = round(self.density * m)
        empty = np.array([math.comb(m - j, k) / math.comb(m, k) for j in range(m + 1)])
        return np.asarray(1.0 - empty[np.minimum(n, m).astype(int)])

    def worst(self) -> float:
        """The densest a tile can be: 1 for uniform (the non-zeros may gather), the density
        for structured, the densest channel for measured."""
        if self.distribution == "measured":
            return max(self.channels or (1.0,))
        return self.density if self.distribution == "structured" else 1.0

    def describe(self) -> str:
        """``0.4``, ``2:4``, ``0.52 measured``."""
        if self.distribution == "structured":
            return f"{round(self.density * (self.block or 1))}:{self.block}"
        if self.distribution == "measured":
            return f"{self.density:.3g} measured"
        return f"{self.density:g}"


class Densities(Public):
    """The densities of a layer's weights, inputs and outputs (each 1: dense). A mapping of
    operand names (``weights``, ``inputs``, ``outputs``, or ``W``, ``I``, ``O``) to densities
    (``Density``)."""

    weights: Density = Density()
    inputs: Density = Density()
    outputs: Density = Density()

    @model_validator(mode="before")
    @classmethod
    def _names(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        out: dict[str, Any] = {}
        for key, value in data.items():
            try:
                op = parse_operand(str(key))
            except ValueError:
                raise ValueError(
                    f"unknown tensor {key!r}; allowed: weights, inputs, outputs"
                ) from None
            out[OPERANDS[op]] = value
        return out

    def of(self, operand: Operand) -> Density:
        """The density of ``operand``."""
        found: Density = getattr(self, OPERANDS[operand])
        return found

    @property
    def dense(self) -> bool:
        """Every tensor dense."""
        return all(self.of(op).dense for op in Operand)

    def effectual(self, operands: tuple[Operand, ...], words: dict[Operand, float]) -> float:
        """The share of MACs whose ``operands`` are all non-zero: the product of their
        densities (``expected`` of tensors of ``words``), but for two measured ones, the
        mean over channels of the product of their channel densities."""
        measured = [op for op in operands if self.of(op).channels is not None]
        p = 1.0
        if len(measured) == 2:
            a, b = (self.of(op).channels or () for op in measured)
            if len(a) == len(b):
                p = sum(x * y for x, y in zip(a, b, strict=True)) / len(a)
                operands = tuple(op for op in operands if op not in measured)
        for op in operands:
            p *= self.of(op).expected(words[op])
        return p

    def describe(self) -> str:
        """``W 2:4, I 0.5`` (dense tensors left out; ``dense`` when all are)."""
        parts = [f"{op.name} {self.of(op).describe()}" for op in Operand if not self.of(op).dense]
        return ", ".join(parts) or "dense"


DENSE = Densities()


class DensityTable(Public):
    """Densities for a network's layers: ``default`` for every MAC layer, ``layers`` for
    named ones (a layer's entry replaces the default's tensors it names). A YAML file of it,
    an inline ``weights=2:4,inputs=0.5`` (the default alone) or a mapping."""

    default: Densities = Densities()
    layers: dict[str, Densities] = Field(default_factory=dict)

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        """A mapping of tensors alone too (the default)."""
        return {"anyOf": [handler(core_schema), handler(Densities.__pydantic_core_schema__)]}

    @model_validator(mode="before")
    @classmethod
    def _flat(cls, data: Any) -> Any:
        """A mapping of tensors alone is the default."""
        if isinstance(data, dict) and not set(data) & {"default", "layers"}:
            return {"default": data}
        return data


def parse_densities(text: str) -> dict[str, str]:
    """``weights=2:4,inputs=0.5`` -> ``{weights: "2:4", inputs: "0.5"}``."""
    out: dict[str, str] = {}
    for part in text.split(","):
        key, eq, value = (x.strip() for x in part.partition("="))
        if not key or not eq or not value:
            raise ValueError(
                f"{part!r} is not TENSOR=DENSITY; write weights=2:4,inputs=0.5 (tensors: "
                "weights, inputs, outputs; a density in (0, 1] or N:M) or a YAML file"
            )
        out[key] = value
    return out
