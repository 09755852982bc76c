"""A layer: one loop nest over N, G, K, C, P, Q, R, S with strides and dilations."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, Protocol, TypedDict

from annotated_types import Ge, Le
from pydantic import Field, field_validator, model_validator

from magnet.arguments import Name, checked_call
from magnet.errors import MagnetError
from magnet.strict import Public
from magnet.units import Whole, number_text
from magnet.workload.dims import DIMS, MAX_EXTENT, Dim, Operand
from magnet.workload.sparsity import DENSE, Densities

LayerKind = Literal[
    "conv", "depthwise", "fc", "matmul", "eltwise", "activation", "pool", "softmax", "norm"
]
#: The kinds that are loop nests of multiply-accumulates (mapped onto the MAC array).
MAC_KINDS: tuple[str, ...] = ("conv", "depthwise", "fc", "matmul")
#: The kinds a post-processing unit runs, each with its operations (``Layer.op``):
#: ``eltwise`` ``add`` / ``mul`` of two activations of one shape (``sub`` is an ``add``),
#: ``bias`` / ``scale``: an activation plus / times a per-channel constant; ``activation``
#: ``relu``, ``relu6`` and ``clip`` (a clamp), ``sigmoid``, ``tanh``, ``silu`` (x sigmoid(x)),
#: ``gelu``; ``pool`` ``max`` / ``avg`` over an R x S window (a global pool: the window is the
#: whole input); ``softmax`` over rows of ``K``; ``norm`` ``layernorm`` over rows of ``K``
#: and ``batchnorm`` (inference: a per-channel scale and shift, when not folded into the
#: convolution before it).
POSTPROCESS_OPS: dict[str, tuple[str, ...]] = {
    "eltwise": ("add", "mul", "bias", "scale"),
    "activation": ("relu", "relu6", "clip", "sigmoid", "tanh", "silu", "gelu"),
    "pool": ("max", "avg"),
    "softmax": ("softmax",),
    "norm": ("layernorm", "batchnorm"),
}
#: A size, count, stride or dilation a layer builder takes (``gemm(m=...)``): a whole number
#: in 1..``MAX_EXTENT``, checked as the builder's own argument (named as the caller wrote it).
Extent = Annotated[int, Ge(1), Le(MAX_EXTENT), f"a whole number in 1..{MAX_EXTENT:,}"]
#: A kernel size, stride or dilation: one for both directions, or (height, width).
Pair = Annotated[
    Extent | tuple[Extent, Extent],
    f"a whole number in 1..{MAX_EXTENT:,} or a pair (height, width) of them",
]
#: The identity of a loop nest (``Layer.shape_key``): its kind, extents, strides, dilations.
ShapeKey = tuple[str | int, ...]


class Layer(Public):
    """One layer as a loop nest. Sizes are per group: ``C`` and ``K`` are channels per group.

    ``kind == "matmul"`` marks a product of two activations (attention ``Q.K^T`` and ``A.V``):
    the operand in the weight position is then an activation too. Every extent, stride and
    dilation is a whole number in 1..``MAX_EXTENT`` (``true`` is not 1). A layer its kind
    cannot be is refused: a ``depthwise`` layer has one filter per channel (``K = C = 1`` per
    group, the channels in ``G``); an ``fc`` or ``matmul`` layer has no filter window
    (``R = S = 1``, strides and dilations 1). ``densities``: how many of each operand's words
    are not zero (``magnet.workload.sparsity``; dense by default).

    A post-processing layer (``kind`` in ``POSTPROCESS_OPS``: ``eltwise``, ``activation``,
    ``pool``, ``softmax``, ``norm``) names its operation in ``op`` and has no MACs: its
    output is ``N x G x K x P x Q`` elements (channels, or a row's length for ``softmax`` and
    ``layernorm``, in ``K``; ``C`` is 1); only a ``pool`` has a window (``R``, ``S``, strides
    and dilations), its input the window box as for a convolution. The template's
    post-processing unit runs it (``magnet.model.postprocess``).
    """

    name: str = "layer"
    kind: LayerKind = "conv"
    op: str | None = None
    N: Whole = Field(1, ge=1, le=MAX_EXTENT)
    G: Whole = Field(1, ge=1, le=MAX_EXTENT)
    K: Whole = Field(1, ge=1, le=MAX_EXTENT)
    C: Whole = Field(1, ge=1, le=MAX_EXTENT)
    P: Whole = Field(1, ge=1, le=MAX_EXTENT)
    Q: Whole = Field(1, ge=1, le=MAX_EXTENT)
    R: Whole = Field(1, ge=1, le=MAX_EXTENT)
    S: Whole = Field(1, ge=1, le=MAX_EXTENT)
    wstride: Whole = Field(1, ge=1, le=MAX_EXTENT)
    hstride: Whole = Field(1, ge=1, le=MAX_EXTENT)
    wdilation: Whole = Field(1, ge=1, le=MAX_EXTENT)
    hdilation: Whole = Field(1, ge=1, le=MAX_EXTENT)
    densities: Densities = DENSE

    @field_validator("name")
    @classmethod
    def _name_not_empty(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a layer name cannot be empty")
        return value

    @model_validator(mode="before")
    @classmethod
    def _softmax_op(cls, data: Any) -> Any:
        """A softmax has one operation: ``op`` may be left out."""
        if isinstance(data, dict) and data.get("kind") == "softmax" and data.get("op") is None:
            return {**data, "op": "softmax"}
        return data

    @model_validator(mode="after")
    def _possible(self) -> Layer:
        """Refuse a layer its kind cannot be, naming it and why."""
        for op in Operand:
            channels = self.densities.of(op).channels
            if channels is not None and op is not Operand.O and len(channels) != self.G * self.C:
                raise ValueError(
                    f"layer {self.name!r}: densities.{('weights', 'inputs')[op]}.channels gives "
                    f"{len(channels)} channel densities; the layer has G x C = "
                    f"{self.G * self.C} input channels"
                )
        if self.kind in POSTPROCESS_OPS:
            return self._possible_postprocess()
        if self.op is not None:
            raise ValueError(
                f"layer {self.name!r}: op is for post-processing layers (kinds "
                f"{', '.join(POSTPROCESS_OPS)}); {_a(self.kind)} layer has none (got "
                f"op={self.op!r})"
            )
        if self.kind == "depthwise" and (self.K, self.C) != (1, 1):
            raise ValueError(
                f"layer {self.name!r}: a depthwise layer has one filter per channel: K = C = 1 "
                f"per group, the channels in G (for 32 channels: G=32, K=1, C=1); got K={self.K}, "
                f"C={self.C} (a grouped convolution with more channels per group is kind conv)"
            )
        if self.kind in ("fc", "matmul"):
            window = ("R", "S", "wstride", "hstride", "wdilation", "hdilation")
            given = [f"{key}={getattr(self, key)}" for key in window if getattr(self, key) != 1]
            if given:
                raise ValueError(
                    f"layer {self.name!r}: {_a(self.kind)} layer has no filter window: R, "
                    f"S, strides and dilations are 1; got {', '.join(given)} (a layer with a "
                    "window is kind conv)"
                )
        return self

    def _possible_postprocess(self) -> Layer:
        """A post-processing layer: a known ``op`` of its kind, channels in K (C = 1), a
        window only for a pool."""
        ops = POSTPROCESS_OPS[self.kind]
        if self.op not in ops:
            given = "no op" if self.op is None else f"op {self.op!r}"
            hint = " (a global pool: max or avg, its window R x S the whole input)"
            raise ValueError(
                f"layer {self.name!r}: {_a(self.kind)} layer has {given}; allowed: "
                f"{', '.join(ops)}{hint if self.kind == 'pool' else ''}"
            )
        if self.C != 1:
            raise ValueError(
                f"layer {self.name!r}: {_a(self.kind)} layer has its channels (or a row's "
                f"length) in K and C = 1; got C={self.C}"
            )
        if self.kind != "pool":
            window = ("R", "S", "wstride", "hstride", "wdilation", "hdilation")
            given_window = [f"{k}={getattr(self, k)}" for k in window if getattr(self, k) != 1]
            if given_window:
                raise ValueError(
                    f"layer {self.name!r}: {_a(self.kind)} layer has no window: R, S, strides "
                    f"and dilations are 1; got {', '.join(given_window)} (a window is kind pool)"
                )
        return self

    @property
    def is_postprocess(self) -> bool:
        """Whether the post-processing unit runs the layer (no MACs, not mapped)."""
        return self.kind in POSTPROCESS_OPS

    @property
    def in_channels(self) -> int:
        """Channels of the input (all groups): ``G x C``; a post-processing layer's, ``G x K``."""
        return self.G * (self.K if self.is_postprocess else self.C)

    @property
    def out_channels(self) -> int:
        """Channels of the output (all groups): ``G x K``."""
        return self.G * self.K

    @property
    def activation_inputs(self) -> int:
        """How many activation tensors the layer reads: two for an ``eltwise`` ``add`` or
        ``mul``, else one (a ``matmul``'s second activation is its weight operand)."""
        return 2 if self.kind == "eltwise" and self.op in ("add", "mul") else 1

    # ---- shape -------------------------------------------------------------------------
    @property
    def dims(self) -> tuple[int, ...]:
        """Extents in ``Dim`` order (N, G, K, C, P, Q, R, S)."""
        return tuple(getattr(self, d) for d in DIMS)

    @property
    def input_width(self) -> int:
        """Width of the input the windows read (words, zero padding included)."""
        return self.wstride * (self.P - 1) + self.wdilation * (self.R - 1) + 1

    @property
    def input_height(self) -> int:
        """Height of the input the windows read (words, zero padding included)."""
        return self.hstride * (self.Q - 1) + self.hdilation * (self.S - 1) + 1

    @property
    def macs(self) -> int:
        """Multiply-accumulates of the layer: the product of its extents (0 for a
        post-processing layer: its operations are counted by ``magnet.model.postprocess``)."""
        return 0 if self.is_postprocess else math.prod(self.dims)

    def operand_size(self, operand: Operand) -> int:
        """Words of an operand; for inputs, the bounding box of the windows (gaps included).

        A post-processing layer: weights are its constants (a ``bias`` or ``scale``: one per
        channel; a ``batchnorm`` or ``layernorm``: a scale and a shift per channel or
        feature; else none), inputs one activation input (a pool's: the window box), outputs
        its output."""
        if not self.is_postprocess:
            return int(operand_words(self, dict(enumerate(self.dims)))[operand])
        if operand is Operand.W:
            per_channel = {"bias": 1, "scale": 1, "batchnorm": 2, "layernorm": 2}
            return per_channel.get(str(self.op), 0) * self.G * self.K
        if operand is Operand.I:
            return self.N * self.G * self.K * self.input_width * self.input_height
        return self.N * self.G * self.K * self.P * self.Q

    @property
    def operand_sizes(self) -> dict[str, int]:
        """Words of each operand by its letter (W, I, O)."""
        return {op.name: self.operand_size(op) for op in Operand}

    @property
    def min_traffic_words(self) -> int:
        """Algorithmic minimum traffic to the outermost memory: read W and I once, write O once."""
        return sum(self.operand_size(op) for op in Operand)

    def shape_str(self) -> str:
        """The shape for people and file keys: ``K=64,C=64,P=56,...`` (extents of 1 and
        unit strides left out; ``scalar`` when nothing is left); a post-processing layer's
        begins with its operation: ``relu K=64,P=56,Q=56``."""
        parts = [f"{d}={getattr(self, d)}" for d in DIMS if getattr(self, d) != 1]
        for key in ("wstride", "hstride", "wdilation", "hdilation"):
            if getattr(self, key) != 1:
                parts.append(f"{key}={getattr(self, key)}")
        shape = ",".join(parts) or "scalar"
        return f"{self.op} {shape}" if self.is_postprocess else shape

    def gemm_view(self) -> GemmView:
        """SCALE-Sim's GEMM view: ``P`` = output pixels N*P*Q, ``C`` = window C*R*S (the
        im2col matrix's columns), ``K`` = filters; groups stay in ``G``. The view remembers
        the words of the input tensor the im2col matrix repeats (``input_tensor_words``)."""
        return GemmView(
            name=self.name,
            kind="matmul" if self.kind == "matmul" else "fc",
            G=self.G,
            K=self.K,
            C=self.C * self.R * self.S,
            P=self.N * self.P * self.Q,
            input_tensor_words=self.operand_size(Operand.I),
            densities=self.densities,
        )

    def shape_key(self) -> ShapeKey:
        """Identity of the loop nest (name excluded): equal keys price identically."""
        key: ShapeKey = (
            self.kind,
            *self.dims,
            self.wstride,
            self.hstride,
            self.wdilation,
            self.hdilation,
        )
        if self.op is not None:
            key = (*key, self.op)
        if not self.densities.dense:
            key = (*key, self.densities.model_dump_json())
        return key


class GemmView(Layer):
    """A layer seen as SCALE-Sim's GEMM (``Layer.gemm_view``): its inputs are the im2col
    matrix, which repeats each of the ``input_tensor_words`` words of the input tensor up to
    R*S times. DRAM holds the tensor; the on-chip level it fills serves the repeats
    (``magnet.model.counts``)."""

    input_tensor_words: int = Field(ge=1)

    def shape_key(self) -> ShapeKey:
        """The layer's key and the words of the input tensor."""
        return (*super().shape_key(), self.input_tensor_words)


class Windowed(Protocol):
    """What ``operand_words`` reads of a layer: its strides and dilations (numbers, or a
    value per mapping: ``magnet.model.counts.LayerStack``)."""

    @property
    def wstride(self) -> Any: ...
    @property
    def hstride(self) -> Any: ...
    @property
    def wdilation(self) -> Any: ...
    @property
    def hdilation(self) -> Any: ...


def operand_words(layer: Windowed, e: Mapping[int, Any] | Sequence[Any]) -> tuple[Any, Any, Any]:
    """Words of the weights, inputs and outputs of a tile of per-dimension extents ``e``
    (indexed by ``Dim``, a mapping or a sequence; numbers or arrays of one shape): inputs
    take the sliding-window box, ``wstride * (P - 1) + wdilation * (R - 1) + 1`` wide,
    likewise high with Q and S. A layer's own sizes are plain integers, without numpy's
    cost."""
    width = layer.wstride * (e[Dim.P] - 1) + layer.wdilation * (e[Dim.R] - 1) + 1
    height = layer.hstride * (e[Dim.Q] - 1) + layer.hdilation * (e[Dim.S] - 1) + 1
    weights = e[Dim.G] * e[Dim.K] * e[Dim.C] * e[Dim.R] * e[Dim.S]
    inputs = e[Dim.N] * e[Dim.G] * e[Dim.C] * width * height
    outputs = e[Dim.N] * e[Dim.G] * e[Dim.K] * e[Dim.P] * e[Dim.Q]
    return weights, inputs, outputs


# ---- constructors ----------------------------------------------------------------------


class _Window(TypedDict):
    R: int
    S: int
    wstride: int
    hstride: int
    wdilation: int
    hdilation: int


def _window(kernel: Pair, stride: Pair, dilation: Pair) -> _Window:
    """A window's fields from (height, width) pairs: R and S, the strides, the dilations."""
    (kh, kw), (sh, sw), (dh, dw) = _pair(kernel), _pair(stride), _pair(dilation)
    return _Window(R=kw, S=kh, wstride=sw, hstride=sh, wdilation=dw, hdilation=dh)


@checked_call
def conv2d(
    name: Name = "conv",
    *,
    in_channels: Extent,
    out_channels: Extent,
    out_height: Extent,
    out_width: Extent,
    kernel: Pair = 1,
    stride: Pair = 1,
    dilation: Pair = 1,
    groups: Extent = 1,
    batch: Extent = 1,
) -> Layer:
    """A (grouped) 2-D convolution given its output size; ``kernel``, ``stride``: (h, w) or int."""
    if in_channels % groups or out_channels % groups:
        raise MagnetError(
            f"channels ({in_channels} in, {out_channels} out) must divide by groups={groups}",
            field=name,
        )
    one_per_channel = groups > 1 and in_channels == out_channels == groups
    kind: LayerKind = "depthwise" if one_per_channel else "conv"
    return Layer(
        name=name,
        kind=kind,
        N=batch,
        G=groups,
        K=out_channels // groups,
        C=in_channels // groups,
        P=out_width,
        Q=out_height,
        **_window(kernel, stride, dilation),
    )


@checked_call
def depthwise_conv2d(
    name: Name = "dwconv",
    *,
    channels: Extent,
    out_height: Extent,
    out_width: Extent,
    kernel: Pair = 3,
    stride: Pair = 1,
    dilation: Pair = 1,
    batch: Extent = 1,
) -> Layer:
    """A depthwise conv: one filter per channel (groups = channels, C = K = 1 per group)."""
    return conv2d(
        name,
        in_channels=channels,
        out_channels=channels,
        out_height=out_height,
        out_width=out_width,
        kernel=kernel,
        stride=stride,
        dilation=dilation,
        groups=channels,
        batch=batch,
    )


@checked_call
def gemm(name: Name = "gemm", *, m: Extent, k: Extent, n: Extent, batch: Extent = 1) -> Layer:
    """Fully connected / GEMM: (M x K) activations times (K x N) weights.

    Mapped onto the loop nest as P = M rows (times ``batch``), C = K (reduction), K = N outputs.
    """
    return Layer(name=name, kind="fc", N=batch, K=n, C=k, P=m)


@checked_call
def fully_connected(
    name: Name = "fc", *, in_features: Extent, out_features: Extent, batch: Extent = 1
) -> Layer:
    """A fully connected layer: a GEMM of one row per batch item."""
    return gemm(name, m=1, k=in_features, n=out_features, batch=batch)


@checked_call
def matmul(
    name: Name = "matmul", *, m: Extent, k: Extent, n: Extent, heads: Extent = 1, batch: Extent = 1
) -> Layer:
    """Batched product of two activations, (M x K) @ (K x N) per head (attention QK^T, AV).

    Heads map to G, so every operand is indexed by the head, as both are activations.
    """
    return Layer(name=name, kind="matmul", N=batch, G=heads, K=n, C=k, P=m)


@checked_call
def postprocess(
    name: Name = "postprocess",
    *,
    kind: str,
    op: str,
    channels: Extent,
    height: Extent = 1,
    width: Extent = 1,
    groups: Extent = 1,
    batch: Extent = 1,
) -> Layer:
    """A post-processing layer without a window (``eltwise``, ``activation``, ``softmax``,
    ``norm``) over ``batch x groups x channels x height x width`` elements: ``channels`` in K
    (a ``softmax``'s or ``layernorm``'s row length), ``width`` in P, ``height`` in Q, groups
    (attention heads) in G."""
    fields: dict[str, Any] = {"kind": kind, "op": op}  # a kind of the Literal, checked there
    return Layer(name=name, N=batch, G=groups, K=channels, P=width, Q=height, **fields)


@checked_call
def pool(
    name: Name = "pool",
    *,
    op: str,
    channels: Extent,
    out_height: Extent,
    out_width: Extent,
    kernel: Pair,
    stride: Pair = 1,
    dilation: Pair = 1,
    batch: Extent = 1,
) -> Layer:
    """A pooling layer (``op``: ``max`` or ``avg``) given its output size, as ``conv2d``: the
    window in R (width) and S (height); a global pool's window is its whole input and its
    output 1 x 1."""
    return Layer(
        name=name,
        kind="pool",
        op=op,
        N=batch,
        K=channels,
        P=out_width,
        Q=out_height,
        **_window(kernel, stride, dilation),
    )


_LAYER_KEY = re.compile(r"^\s*([A-Za-z_]+)\s*=\s*([^\s=]+)\s*$")
_LAYER_ALIASES = {
    "stride": ("wstride", "hstride"),
    "dilation": ("wdilation", "hdilation"),
    "m": ("K",),
}


@checked_call
def parse_layer(text: str, name: Name = "layer") -> Layer:
    """Parse ``"K=64,C=64,P=56,Q=56,R=3,S=3,stride=2"`` (unspecified dimensions are 1)."""
    values: dict[str, Any] = {}  # dimensions by name
    allowed = [*DIMS, "stride", "hstride", "wstride", "dilation", "hdilation", "wdilation"]
    parts = [p.strip() for p in text.split(",")]
    if not any(parts):
        raise MagnetError(
            f"empty layer; give KEY=INTEGER pairs, keys: {', '.join(allowed)}", field="--layer"
        )
    if not all(parts):
        raise MagnetError(
            f"item {parts.index('') + 1} of {text!r} is empty; separate KEY=INTEGER pairs "
            "with single commas",
            field="--layer",
        )
    for part in parts:
        match = _LAYER_KEY.match(part)
        if not match:
            raise MagnetError(
                f"{part!r} is not KEY=INTEGER; keys: {', '.join(allowed)}", field="--layer"
            )
        key = match.group(1)
        keys = _LAYER_ALIASES.get(key.lower(), (key.upper() if key.upper() in DIMS else key,))
        if any(k not in allowed and k != "K" for k in keys):
            raise MagnetError(
                f"unknown key {key!r}; allowed: {', '.join(allowed)}", field="--layer"
            )
        value = _layer_value(key, match.group(2))
        for k in keys:
            if k in values:
                raise MagnetError(f"{key} is given more than once", field="--layer")
            if value < 1:
                raise MagnetError(f"{key} must be >= 1, got {value}", field="--layer")
            values[k] = value
    try:
        return Layer(name=name, **values)
    except MagnetError as exc:
        raise MagnetError(exc.message, field="--layer") from None


def _layer_value(key: str, text: str) -> int:
    """A value of ``parse_layer``: an integer, or a whole number written with an exponent
    (``1e3``); anything else (``true``, ``2.5``) is refused naming the key."""
    try:
        number = number_text(text)
    except ValueError as exc:  # thousands of digits
        raise MagnetError(f"{key}: {exc}", field="--layer") from None
    if isinstance(number, int):
        return number
    raise MagnetError(f"{key}={text}: {text!r} is not a whole number", field="--layer")


def _a(kind: str) -> str:
    """``kind`` with its article: ``an fc``, ``an activation``, ``a conv``."""
    return f"{'an' if kind in ('fc', 'eltwise', 'activation') else 'a'} {kind}"


def _pair(value: int | tuple[int, int]) -> tuple[int, int]:
    if isinstance(value, tuple):
        first, second = value
        return int(first), int(second)
    return int(value), int(value)
