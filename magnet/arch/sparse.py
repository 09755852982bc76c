"""What a level does with zeros: its format for a tensor, and gating or skipping its accesses.

Sparseloop's abstractions (Wu et al., MICRO 2022; Timeloop ``src/model/sparse-optimization-
parser.cpp`` and ``src/workload/format-models``), per storage level and tensor:

* ``format``: how the level stores the tensor and moves it. ``uncompressed`` (every word);
  the compressed ones keep only the non-zeros and add metadata: ``bitmask`` (``metadata_bits``
  per word, non-zero or not; default 1), ``rle`` (run-length: ``metadata_bits`` per non-zero,
  the zeros before it; default 4, Eyeriss v2's), ``cp`` (coordinate-payload: a coordinate of
  ``metadata_bits`` per non-zero; default 8, an assumption), ``csr`` (offset pairs over rows
  of ``row_words`` words, ``offset_bits`` each, then coordinates as ``cp``: Sparseloop's UOP
  then CP; defaults 16 and 16 bits, assumptions). Metadata is stored and moved with the data
  at the level's own price per bit.
* ``action``: ``gating`` (an access whose ``condition_on`` tensors are zero is not made, its
  slot is kept: energy saved, cycles not) or ``skipping`` (nor its slot: both saved) of the
  level's reads of the tensor (of outputs, their reads and updates), Sparseloop's
  "gating/skipping target conditioned on ...".

The MACs (``ComputeLevel.zeros``) gate or skip a multiply whose ``zeros_on`` operands are
zero. The model is ``magnet.mapping.sparse``.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import Field, GetJsonSchemaHandler, field_validator, model_validator
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from magnet.strict import Strict
from magnet.workload.dims import OPERANDS, parse_operand

Format = Literal["uncompressed", "bitmask", "rle", "cp", "csr"]
#: Default metadata bits of each compressed format (see the module docstring).
METADATA_BITS = {"bitmask": 1, "rle": 4, "cp": 8, "csr": 16}
ZeroAction = Literal["none", "gating", "skipping"]


class TensorSparsity(Strict):
    """A level's format for one tensor and what it does with zero accesses (see the module
    docstring)."""

    format: Format = "uncompressed"
    metadata_bits: int | None = Field(None, ge=0, le=64)
    offset_bits: int = Field(16, ge=0, le=64)
    row_words: int = Field(16, ge=1, le=1 << 20)
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
        return self

    @property
    def compressed(self) -> bool:
        """Only the non-zeros are stored and moved."""
        return self.format != "uncompressed"

    def bits_per_word(self, word_bits: int, density: float) -> float:
        """Bits the level stores and moves per word of the dense tensor, metadata included,
        for a tensor of ``density`` (``word_bits`` per word uncompressed)."""
        if not self.compressed:
            return float(word_bits)
        meta = METADATA_BITS[self.format] if self.metadata_bits is None else self.metadata_bits
        if self.format == "bitmask":
            return density * word_bits + meta
        per_word = density * (word_bits + meta)
        if self.format == "csr":
            per_word += self.offset_bits / self.row_words
        return per_word


class ComputeZeros(Strict):
    """What the MACs do with a zero operand: ``none``, ``gating`` (the multiply is not done,
    its cycle kept: energy saved) or ``skipping`` (nor its cycle), conditioned on the
    ``zeros_on`` operands (default both multiplier operands)."""

    action: ZeroAction = "none"
    on: tuple[str, ...] = ("weights", "inputs")

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

    @field_validator("on")
    @classmethod
    def _operands(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        ops = tuple(OPERANDS[parse_operand(v)] for v in value)
        if "outputs" in ops or not ops:
            raise ValueError(
                "a MAC acts on zeros of its multiplier operands: weights, inputs or both; "
                f"got {list(value)}"
            )
        return ops
