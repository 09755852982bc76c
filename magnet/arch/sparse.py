"""What a level does with zeros: its format for a tensor, and gating or skipping its accesses.

Sparseloop's abstractions (Wu et al., MICRO 2022; Timeloop ``src/model/sparse-optimization-
parser.cpp`` and ``src/workload/format-models``), per storage level and tensor:

* ``ranks`` (or ``format``, one rank): how the level stores the tensor and moves it, as a
  fiber tree of ranks, outer to inner, each over some of the tensor's coordinates
  (flattened). A rank is ``uncompressed`` (every coordinate, no metadata), ``uop`` (offset
  pairs: every coordinate, an offset of ``metadata_bits`` per coordinate plus one per fiber;
  default 16, an assumption), or compressed, keeping only the coordinates whose subtree
  holds a non-zero: ``bitmask`` (``metadata_bits`` per coordinate, kept or not; default 1),
  ``rle`` (run-length: ``metadata_bits`` per kept coordinate; default 4, Eyeriss v2's),
  ``cp`` (coordinate-payload: a coordinate of ``metadata_bits`` per kept one; default 8, an
  assumption). ``format: csr`` is Sparseloop's UOP over the rows then CP. Metadata is
  stored and moved with the data at the level's own price per bit.
* ``action``: ``gating`` (an access whose ``condition_on`` tensors are zero is not made, its
  slot is kept: energy saved, cycles not) or ``skipping`` (nor its slot: both saved) of the
  level's reads of the tensor (of outputs, their reads and updates), Sparseloop's
  "gating/skipping target conditioned on ...".

The MACs (``ComputeLevel.zeros``) gate or skip a multiply whose ``operands`` are
zero. The model is ``magnet.model.sparse_counts``.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import Field, GetJsonSchemaHandler, field_validator, model_validator
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from magnet.strict import Strict
from magnet.workload.dims import OPERANDS, parse_operand

Format = Literal["uncompressed", "bitmask", "rle", "cp", "csr"]
RankFormat = Literal["uncompressed", "bitmask", "rle", "cp", "uop"]
#: Default metadata bits of each rank format (see the module docstring); ``uop``'s are its
#: offsets' bits.
METADATA_BITS = {"uncompressed": 0, "bitmask": 1, "rle": 4, "cp": 8, "uop": 16}
#: Each tensor's coordinates, outer to inner, each named by the layer dims that index it (an
#: input's height by Q and S, its width by P and R).
COORDINATES: dict[str, tuple[tuple[str, ...], ...]] = {
    "weights": (("G",), ("K",), ("C",), ("S",), ("R",)),
    "inputs": (("N",), ("G",), ("C",), ("Q", "S"), ("P", "R")),
    "outputs": (("N",), ("G",), ("K",), ("Q",), ("P",)),
}
#: CSR's rows (offset pairs over them), per tensor; its columns (coordinates) are the rest.
CSR_ROWS = {"weights": ("G", "K"), "inputs": ("N", "G", "Q", "P"), "outputs": ("N", "G", "Q", "P")}
ZeroAction = Literal["none", "gating", "skipping"]


class Rank(Strict):
    """One rank of a tensor's fiber tree at a level (Sparseloop's per-rank format): its
    ``format`` (``uncompressed``; ``uop``, an offset of ``metadata_bits`` per coordinate and
    one more per fiber, its coordinates all kept; the compressed ``bitmask``, ``rle`` and
    ``cp``, which keep the coordinates whose subtree holds a non-zero), over the tensor's
    coordinates its ``dims`` name (flattened; empty: those no other rank names)."""

    format: RankFormat
    metadata_bits: int | None = Field(None, ge=0, le=64)
    dims: tuple[str, ...] = ()

    @property
    def compressed(self) -> bool:
        """It keeps only the coordinates whose subtree holds a non-zero."""
        return self.format in ("bitmask", "rle", "cp")

    @property
    def bits(self) -> int:
        """Its metadata bits (per coordinate, or per offset for ``uop``)."""
        return METADATA_BITS[self.format] if self.metadata_bits is None else self.metadata_bits


class TensorSparsity(Strict):
    """A level's format for one tensor and what it does with zero accesses (see the module
    docstring). ``ranks``: the tensor's fiber tree, outer to inner (``Rank``); ``format``:
    the same for one rank over the whole tile (``csr``: offset pairs over its rows, then
    coordinates, ``CSR_ROWS``), with ``metadata_bits``."""

    format: Format = "uncompressed"
    metadata_bits: int | None = Field(None, ge=0, le=64)
    ranks: tuple[Rank, ...] = ()
    action: ZeroAction = "none"
    condition_on: tuple[str, ...] = ()

    @field_validator("condition_on")
    @classmethod
    def _operands(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(OPERANDS[parse_operand(v)] for v in value)

    @model_validator(mode="after")
    def _consistent(self) -> TensorSparsity:
        if self.action != "none" and not self.condition_on:
            raise ValueError(
                f"{self.action} needs condition_on: the tensors whose zeros it acts on "
                "(weights, inputs, outputs)"
            )
        if self.action == "none" and self.condition_on:
            raise ValueError("condition_on needs an action (gating or skipping)")
        if self.ranks and (self.format != "uncompressed" or self.metadata_bits is not None):
            raise ValueError(
                "give format (one rank over the whole tile) or ranks (each its own), not both"
            )
        if sum(not r.dims for r in self.ranks) > 1:
            raise ValueError("at most one rank leaves dims out (it takes the dims no other names)")
        return self

    def fiber_ranks(self, tensor: str) -> tuple[Rank, ...]:
        """The ranks, outer to inner (``format``'s: one, or CSR's two)."""
        if self.ranks:
            return self.ranks
        if self.format == "csr":
            return (
                Rank(format="uop", dims=CSR_ROWS[tensor]),
                Rank(format="cp", metadata_bits=self.metadata_bits),
            )
        return (Rank(format=self.format, metadata_bits=self.metadata_bits),)

    @property
    def compressed(self) -> bool:
        """Some rank keeps only the coordinates holding non-zeros."""
        return self.format != "uncompressed" or any(r.compressed for r in self.ranks)

    def check_dims(self, tensor: str) -> None:
        """``ValueError`` for a rank naming a dim that does not index ``tensor``, or a
        coordinate two ranks name."""
        named: dict[int, int] = {}
        allowed = [d for coord in COORDINATES[tensor] for d in coord]
        for r, rank in enumerate(self.ranks):
            for dim in rank.dims:
                where = [i for i, coord in enumerate(COORDINATES[tensor]) if dim in coord]
                if not where:
                    raise ValueError(
                        f"ranks.{r}.dims: {dim!r} does not index {tensor}; its dims: "
                        f"{' '.join(allowed)}"
                    )
                if named.get(where[0], r) != r:
                    raise ValueError(
                        f"ranks.{r}.dims: {dim!r} names a coordinate rank {named[where[0]]} "
                        "flattens too"
                    )
                named[where[0]] = r


class ComputeZeros(Strict):
    """What the MACs do with a zero operand: ``none``, ``gating`` (the multiply is not done,
    its cycle kept: energy saved) or ``skipping`` (nor its cycle), conditioned on the
    ``operands`` (default both multiplier operands; not ``on``: YAML 1.1 reads that key as
    true)."""

    action: ZeroAction = "none"
    operands: tuple[str, ...] = ("weights", "inputs")

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: object) -> object:
        return {"action": data} if isinstance(data, str) else data

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        """The action alone too (``zeros: skipping``)."""
        return {"anyOf": [{"enum": list(get_args(ZeroAction))}, handler(core_schema)]}

    @field_validator("operands")
    @classmethod
    def _operands(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        ops = tuple(OPERANDS[parse_operand(v)] for v in value)
        if "outputs" in ops or not ops:
            raise ValueError(
                "a MAC acts on zeros of its multiplier operands: weights, inputs or both; "
                f"got {list(value)}"
            )
        return ops
