"""A mapping: per storage level, temporal loops (with their order) and spatial loops.

In YAML, levels are listed outermost first and so are the loops inside ``temporal``::

    mapping:
      - target: DRAM
        temporal: {P: 8, Q: 2, K: 4}      # for P / for Q / for K (K innermost)
      - target: GlobalBuffer
        temporal: "P14 Q4"                 # the same, written as a string
        spatial_x: {Q: 14}                 # fan-out below GlobalBuffer, along X
        spatial_y: {C: 3, S: 3}
        keep: [inputs, outputs]            # optional: override the level's keep/bypass

Dimensions not named have factor 1. Internally a batch of mappings is a set of integer
arrays indexed ``[level, dim, batch]`` (the batch last) with level 0 the innermost storage
level (``MappingBatch``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import yaml
from pydantic import Field, ValidationError, field_validator

from magnet.arch.spec import Arch
from magnet.arguments import checked_call, checked_methods
from magnet.errors import InvalidMappingError, MagnetError, validation_message
from magnet.files import read_yaml
from magnet.strict import Strict
from magnet.workload.dims import (
    DIMS,
    NUM_DIMS,
    OPERANDS,
    Dim,
    parse_dim,
    parse_factors,
    parse_operand,
)
from magnet.workload.layer import Layer


class LevelMapping(Strict):
    """Loops of one storage level. ``temporal`` is ordered outermost loop first."""

    target: str
    temporal: dict[str, int] = Field(default_factory=dict)
    spatial_x: dict[str, int] = Field(default_factory=dict)
    spatial_y: dict[str, int] = Field(default_factory=dict)
    keep: tuple[str, ...] | None = None

    @field_validator(
        "temporal",
        "spatial_x",
        "spatial_y",
        mode="before",
        json_schema_input_type=str | dict[str, int],
    )
    @classmethod
    def _factors(cls, value: Any) -> dict[str, int]:
        return parse_factors(value)

    @field_validator("keep", mode="before", json_schema_input_type=str | list[str] | None)
    @classmethod
    def _keep(cls, value: Any) -> tuple[str, ...] | None:
        if value is None:
            return None
        if isinstance(value, str):
            value = [value]
        return tuple(OPERANDS[parse_operand(v)] for v in value)


@checked_methods()
class Mapping(Strict):
    """A whole mapping: one ``LevelMapping`` per storage level that has loops."""

    levels: tuple[LevelMapping, ...]

    def level(self, name: str) -> LevelMapping | None:
        """The loops of the level called ``name``, None when the mapping gives it none."""
        for lvl in self.levels:
            if lvl.target == name:
                return lvl
        return None

    # ---- YAML ---------------------------------------------------------------------------
    @classmethod
    @checked_call
    def from_yaml(cls, path: str | Path) -> Mapping:
        """Read a mapping file (``mapping:`` and a list of levels); errors name the file."""
        return cls.from_data(read_yaml(path), source=str(path))

    @classmethod
    def from_data(cls, data: Any, source: str = "mapping") -> Mapping:
        """A mapping from parsed YAML: a list of levels, or ``{mapping: [...]}``."""
        if isinstance(data, dict) and "mapping" in data:
            extra = sorted(set(data) - {"mapping"})
            if extra:
                raise MagnetError(
                    f"unknown top-level keys {extra}; a mapping file has only 'mapping'",
                    source=source,
                )
            data = data["mapping"]
        if not isinstance(data, list):
            raise MagnetError(
                "expected a list of levels (each with target, temporal, spatial_x, spatial_y, "
                "keep)",
                source=source,
                field="mapping",
            )
        try:
            return cls(levels=tuple(data))
        except ValidationError as exc:
            raise MagnetError(validation_message(exc, Mapping), source=source) from None

    def to_data(self) -> dict[str, Any]:
        """The mapping as YAML data (``{mapping: [...]}``), factors of 1 left out."""
        levels = []
        for lvl in self.levels:
            entry: dict[str, Any] = {"target": lvl.target}
            for key in ("temporal", "spatial_x", "spatial_y"):
                factors = {d: f for d, f in getattr(lvl, key).items() if f != 1}
                if factors:
                    entry[key] = factors
            if lvl.keep is not None:
                entry["keep"] = list(lvl.keep)
            levels.append(entry)
        return {"mapping": levels}

    def to_yaml(self) -> str:
        """The mapping as the text of a mapping file."""
        return yaml.safe_dump(self.to_data(), sort_keys=False, default_flow_style=None)

    # ---- display -----------------------------------------------------------------------
    def loop_nest(self, arch: Arch) -> str:
        """The mapping as an indented loop nest, outermost level first."""
        lines, depth = [], 0
        for storage in arch.levels:
            lvl = self.level(storage.name)
            keeps = lvl.keep if lvl is not None and lvl.keep is not None else storage.keeps
            lines.append(f"{'  ' * depth}{storage.name} [{', '.join(keeps) or 'bypass'}]")
            if lvl is None:
                continue
            for dim, factor in lvl.temporal.items():
                if factor > 1:
                    lines.append(f"{'  ' * depth}| for {dim} in [0:{factor})")
                    depth += 1
            for axis in ("x", "y"):
                for dim, factor in getattr(lvl, f"spatial_{axis}").items():
                    if factor > 1:
                        lines.append(
                            f"{'  ' * depth}| parallel-for {dim} in [0:{factor}) (spatial-{axis})"
                        )
                        depth += 1
        lines.append(f"{'  ' * depth}<< MAC >>")
        return "\n".join(lines)


@dataclass
class MappingBatch:
    """Mappings as arrays with the batch LAST; level 0 = innermost storage level.

    factors_t, spatial_x, spatial_y: int32[level, dim, batch]; rank: int8[level, dim, batch]
    is the position of each dim among its level's temporal loops (0 = innermost);
    keep: bool[level, operand] is shared by the whole batch (one bypass pattern per batch).
    """

    # dtypes as the docstring says; plain ndarray because the mappers mix these arrays
    # with derived ones of other dtypes
    factors_t: np.ndarray
    spatial_x: np.ndarray
    spatial_y: np.ndarray
    rank: np.ndarray
    keep: np.ndarray

    @property
    def size(self) -> int:
        """How many mappings the batch holds."""
        return int(self.factors_t.shape[2])

    def take(self, index: npt.NDArray[np.integer[Any]] | slice) -> MappingBatch:
        """The mappings at ``index`` (a view where numpy gives one)."""
        return MappingBatch(
            self.factors_t[..., index],
            self.spatial_x[..., index],
            self.spatial_y[..., index],
            self.rank[..., index],
            self.keep,
        )

    @staticmethod
    def concat(batches: list[MappingBatch]) -> MappingBatch:
        """One batch of all the mappings of ``batches`` (which share one keep pattern)."""
        keep = batches[0].keep
        for b in batches[1:]:
            if not np.array_equal(b.keep, keep):
                raise ValueError("mappings in one batch must share their keep/bypass pattern")
        return MappingBatch(
            np.concatenate([b.factors_t for b in batches], axis=2),
            np.concatenate([b.spatial_x for b in batches], axis=2),
            np.concatenate([b.spatial_y for b in batches], axis=2),
            np.concatenate([b.rank for b in batches], axis=2),
            keep,
        )

    def mapping(self, i: int, arch: Arch) -> Mapping:
        """The i-th mapping back as a ``Mapping`` (for display and YAML)."""
        levels = []
        for li, storage in enumerate(arch.inner_first):
            outer_first = np.argsort(-self.rank[li, :, i], kind="stable")
            temporal = {
                DIMS[d]: int(self.factors_t[li, d, i])
                for d in outer_first
                if self.factors_t[li, d, i] > 1
            }
            sx = {DIMS[d]: int(f) for d, f in enumerate(self.spatial_x[li, :, i]) if f > 1}
            sy = {DIMS[d]: int(f) for d, f in enumerate(self.spatial_y[li, :, i]) if f > 1}
            keep = tuple(OPERANDS[o] for o in range(3) if self.keep[li, o])
            levels.append(
                LevelMapping(
                    target=storage.name,
                    temporal=temporal,
                    spatial_x=sx,
                    spatial_y=sy,
                    keep=None if set(keep) == set(storage.keeps) else keep,
                )
            )
        return Mapping(levels=tuple(reversed(levels)))


def default_keep(arch: Arch) -> npt.NDArray[np.bool_]:
    """bool[level, operand]: what each level keeps (innermost first), as the arch says."""
    keep = np.zeros((len(arch.levels), 3), dtype=bool)
    for li, storage in enumerate(arch.inner_first):
        for op in storage.kept:
            keep[li, op] = True
    return keep


_DIMS = tuple(Dim)


#: One level's loops, as ``loops_batch`` takes them: its index (innermost first), its
#: temporal factors (outermost loop first), its x and y fan-out factors, and what it keeps
#: (operand names; None: what the level keeps).
LevelLoops = tuple[int, dict[str, int], dict[str, int], dict[str, int], tuple[str, ...] | None]


def to_batch(mapping: Mapping, arch: Arch, source: str = "mapping") -> MappingBatch:
    """Convert one mapping to a batch of one, checking level names and fan-outs."""
    names = [lvl.name for lvl in arch.levels]
    seen: set[str] = set()
    for lvl in mapping.levels:
        if lvl.target not in names:
            raise MagnetError(
                f"unknown level {lvl.target!r}; the architecture has: {', '.join(names)}",
                source=source,
                field="target",
            )
        if lvl.target in seen:
            raise MagnetError(f"level {lvl.target!r} is mapped twice", source=source)
        seen.add(lvl.target)
    batch = loops_batch(
        arch,
        [
            (arch.level_index(lvl.target), lvl.temporal, lvl.spatial_x, lvl.spatial_y, lvl.keep)
            for lvl in mapping.levels
        ],
    )
    check_structure(batch, arch, source)
    return batch


def loops_batch(arch: Arch, levels: Iterable[LevelLoops]) -> MappingBatch:
    """A batch of one from the loops of some of ``arch``'s levels (``LevelLoops``, each level
    once; a level not listed runs no loops and keeps what it keeps). Structure unchecked
    (``check_structure``)."""
    nlev = len(arch.levels)
    # plain lists, made arrays once: numpy's cost per element set is most of a small batch's
    t, sx, sy = ([[1] * NUM_DIMS for _ in range(nlev)] for _ in range(3))
    rank = [list(range(NUM_DIMS)) for _ in range(nlev)]
    keep = default_keep(arch)
    for li, temporal, spatial_x, spatial_y, kept in levels:
        listed = [parse_dim(d) for d in temporal]
        for position, d in enumerate([*reversed(listed), *(d for d in _DIMS if d not in listed)]):
            rank[li][d] = position
        for factors, into in ((temporal, t), (spatial_x, sx), (spatial_y, sy)):
            for name, f in factors.items():
                into[li][parse_dim(name)] = f
        if kept is not None:
            keep[li] = False
            for k in kept:
                keep[li, parse_operand(k)] = True

    def one(rows: list[list[int]], dtype: type[np.integer[Any]]) -> np.ndarray:
        return np.array(rows, dtype=dtype)[:, :, None]

    return MappingBatch(
        one(t, np.int32), one(sx, np.int32), one(sy, np.int32), one(rank, np.int8), keep
    )


def check_structure(batch: MappingBatch, arch: Arch, source: str = "mapping") -> None:
    """Fan-outs fit the hardware and the outermost level keeps every operand."""
    top = arch.levels[0].name
    for op in range(3):
        if not batch.keep[-1, op]:
            raise InvalidMappingError(
                f"the outermost level {top!r} must keep {OPERANDS[op]}: that is where they "
                "come from (and where outputs go)",
                source=source,
                field=top,
            )
    for li, (fx, fy) in enumerate(arch.fanouts):
        name = arch.inner_first[li].name
        used_x = batch.spatial_x[li].prod(axis=0)
        used_y = batch.spatial_y[li].prod(axis=0)
        for axis, used, limit in (("x", used_x, fx), ("y", used_y, fy)):
            bad = np.flatnonzero(used > limit)
            if bad.size:
                raise InvalidMappingError(
                    f"spatial_{axis} uses a fan-out of {int(used[bad[0]])} below {name!r}, "
                    f"which has only {limit} along {axis}",
                    source=source,
                    field=name,
                )


def check_coverage(batch: MappingBatch, layer: Layer, source: str = "mapping") -> None:
    """Every dimension's factors multiply to at least the layer's extent, and to less than
    twice it.

    Factors that multiply to more than the extent pad the loop nest: the analysis prices the
    padded iterations (cycles) and scales the accesses to the real layer, so utilisation
    shows the padding (and the text report says how much). A product of twice the extent or
    more is refused: at least half the iterations along the dimension would be padding
    (``K: 32`` for K=16 doubles the cycles), which no mapper makes; Timeloop refuses any
    product but the extent (a last partial iteration is written as a residual). The padding
    magnet's mappers make (a fan-out wider than what is left of a dimension, the last step
    padded) always stays under twice the extent.
    """
    # products as floats: exact up to 2**53, far above any extent, and they cannot wrap
    factors = batch.factors_t * batch.spatial_x.astype(np.float64) * batch.spatial_y
    total = factors.prod(axis=0)  # [dim, batch]
    need = np.array(layer.dims, dtype=np.float64)[:, None]
    for bad, problem in (
        (total < need, "the product over all levels must cover it"),
        (total >= 2 * need, "twice the extent or more: at least half the iterations would pad"),
    ):
        found = np.argwhere(bad)
        if found.size:
            d, i = found[0]
            extent, product = int(need[d, 0]), math.prod(int(f) for f in factors[:, d, i])
            raise InvalidMappingError(
                f"factors of {DIMS[d]} multiply to {product} but the layer has "
                f"{DIMS[d]}={extent}; {problem} (make them multiply to {extent}, or to less "
                f"than {2 * extent} to pad a partial last step)",
                source=source,
                field=DIMS[d],
            )
