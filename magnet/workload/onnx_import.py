"""Import an ONNX model as a :class:`Network` of the layers magnet can price.

``load_onnx(path, batch=None, skip_ops=False)`` returns ``(network, summary)``:

* **MAC layers**: ``Conv`` (1-D and 2-D, any ``group``), ``Gemm`` and ``MatMul`` of the
  default ONNX domain. Every such node becomes one layer (repeat 1), in graph order.
* **Post-processing layers** (``POSTPROCESS_ONNX``), run on the design's post-processing
  unit: ``Relu``, ``Clip`` (``relu6`` for 0..6, else ``clip``), ``Sigmoid``, ``Tanh``,
  ``Gelu``, ``Add`` / ``Sub`` / ``Mul`` of two activations (``eltwise``) or of an activation
  and a constant (``bias`` / ``scale``; ``Div`` by a constant: ``scale``), ``MaxPool``,
  ``AveragePool``, ``GlobalAveragePool``, ``GlobalMaxPool``, ``Softmax``,
  ``LayerNormalization``, ``BatchNormalization``; and the patterns exporters write for
  three of them: GELU as ``x * 0.5 * (1 + Erf(x / sqrt(2)))``, SiLU as ``x * Sigmoid(x)``,
  and a layer norm decomposed into ``ReduceMean``, ``Sub``, ``Pow``, ``ReduceMean``, ``Add``,
  ``Sqrt``, ``Div`` (then an optional scale ``Mul`` and shift ``Add``): one layer each.
  A tensor's channels are its dim 1 (ONNX's layout; a row op's row is its normalised axes).
* **Free** (``FREE_OPS``): nodes that only move, reshape or relabel data (``Reshape``,
  ``Flatten``, ``Transpose``, ``Concat``, ``Split``, ``Slice``, ``Squeeze``, ``Unsqueeze``,
  ``Identity``, ``Dropout``, ``Cast``, ``Expand``, ``Pad``, a ``Gather`` of an activation):
  no layer (a layout change is the next layer's addressing; a concatenation puts two
  producers behind one input), and nodes whose inputs are all constant (weights behind a
  ``Transpose`` or ``DequantizeLinear``, shape arithmetic after ``Shape``): folded.
* **Anything else** (``Pow``, ``Resize``, a 3-D ``Conv``, ``ConvTranspose``, a ``Gather``
  of an embedding table, custom-domain ops, ...) is not priced: the import is refused in one
  line naming the op and its node, unless ``skip_ops`` (``--skip-unpriced-ops``), which
  leaves such nodes out (as free nodes: what they read passes through) and lists them in the
  summary and the network (``Network.skipped``, a record's ``skipped_ops``). Subgraphs
  (``If``/``Loop`` bodies) are not entered: the node itself is not priced.

Shapes come from ``onnx.shape_inference.infer_shapes`` (with data propagation) over the
graph inputs, ``value_info``, outputs and initializer dims. The model is loaded without its
external data: only the weights' shapes are needed, never their values.

**Batch.** Before shape inference, dim 0 of every graph input that is not an initializer is
set to ``batch`` when it is given (whatever it was, symbolic or fixed); when ``batch`` is
``None`` a symbolic (or missing) dim 0 becomes 1 and a fixed one is kept. When an input is
changed, the model's stale intermediate ``value_info`` and output shapes are dropped so that
inference recomputes them from the new inputs. Other symbolic dimensions (a sequence length)
are left alone; a priced node that needs one raises :class:`MagnetError`.

**Weights.** An operand is a weight when it is *constant*: an initializer, the output of a
``Constant`` node, or the output of a node all of whose inputs are constant (a weight behind
``DequantizeLinear``, ``Transpose`` or ``Cast`` still counts as one). **Their zeros**: a
``Conv``'s or a weighted ``Gemm`` / ``MatMul``'s weight held in the file (an initializer)
with zeros in it (a pruned model) gives the layer's measured weight density, per input
channel (``magnet.workload.sparsity``); a dense one, or one whose data is kept outside the
file, or one of zeros only (a placeholder), leaves the layer dense.

**Mapping onto the loop nest** (see :mod:`magnet.workload.layer`):

* ``Conv`` 2-D, input ``[N, C, H, W]``, weight ``[M, C/group, kH, kW]``: ``conv2d`` with
  ``N``, ``G = group``, ``K = M/group``, ``C = C/group``, ``P`` = output width, ``Q`` = output
  height, ``R = kW``, ``S = kH``, strides and dilations split the same way (the last ONNX axis
  is the width). ``kind`` is ``"depthwise"`` when ``group == C > 1``. 1-D Conv ``[N, C, L]``
  runs along the width: ``P`` = output length, ``R = k``, ``Q = S = 1``. The output size is
  the inferred output shape, cross-checked against
  ``floor((in + pad_begin + pad_end - dilation*(k-1) - 1) / stride) + 1`` (``auto_pad``
  ``SAME_*``: ``ceil(in / stride)``; ``VALID``: no padding); a disagreement raises. Padding
  itself is not a loop dimension.
* ``Gemm`` (``A' = A`` or ``A^T`` by ``transA``, likewise ``B``): ``A'`` is ``M x K``, ``B'``
  is ``K x N``. With ``B`` constant: ``gemm(m=M, k=K, n=N)`` (``P = M``, ``C = K``,
  ``K = N``). With only ``A`` constant the product is priced transposed,
  ``Y^T = B'^T A'^T``: ``gemm(m=N, k=K, n=M)`` (same MACs, the weight in the weight slot).
  With neither constant: ``matmul(m=M, k=K, n=N)`` (``kind="matmul"``). The rows ``M`` of a
  2-D product go to ``P``, not ``N``: the graph does not say which rows are a batch.
* ``MatMul`` follows numpy: a 1-D operand is a single row / column, leading dims broadcast.
  The weight is chosen as for ``Gemm``. Leading (broadcast) dims ``L`` of the product: if the
  second operand (the weight side) has no leading dim above 1, all of ``L`` is the batch
  (``N = prod(L)``): ``[B, M, K] @ [K, N]`` weight is ``gemm(m=M, k=K, n=N, batch=B)``, so
  ``N`` is the batch as for a convolution. Otherwise the last leading dim is the heads
  (``G``) and the rest the batch: ``[B, H, M, K] @ [B, H, K, N]`` of two activations is
  ``matmul(m=M, k=K, n=N, heads=H, batch=B)``.

**Producers.** The network records, for each layer, the layers whose outputs make its
input(s): the graph is followed back from the layer's non-constant inputs through free (and
skipped) nodes to the layers behind them (``Network.producers``, which decides the
activations kept on chip and the layers fused on the MAC array's output path).

Layer names are the ONNX node names (stripped), or ``<op_type>_<index>`` (the node's index
in the graph) when empty, made unique by appending ``_2``, ``_3``, ... The network is named
after the file stem.

Errors (missing file, not an ONNX model, a shape inference cannot give, an attribute that
disagrees with the shapes, an operator not priced, a model with nothing to price) raise
:class:`MagnetError` with the file as ``source`` and, for a node, the node's (layer) name as
``field``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import onnx
from pydantic import Field

from magnet.errors import MagnetError
from magnet.files import path_kind
from magnet.strict import Strict
from magnet.workload.layer import Layer, conv2d, gemm, matmul, pool, postprocess
from magnet.workload.network import Network
from magnet.workload.sparsity import Densities, Density

__all__ = ["FREE_OPS", "POSTPROCESS_ONNX", "PRICED_OPS", "ImportSummary", "load_onnx"]

PRICED_OPS: tuple[str, ...] = ("Conv", "Gemm", "MatMul")
"""ONNX op types (default domain) that become MAC layers."""

POSTPROCESS_ONNX: tuple[str, ...] = (
    "Relu",
    "Clip",
    "Sigmoid",
    "Tanh",
    "Gelu",
    "Add",
    "Sub",
    "Mul",
    "Div",
    "MaxPool",
    "AveragePool",
    "GlobalAveragePool",
    "GlobalMaxPool",
    "Softmax",
    "LayerNormalization",
    "BatchNormalization",
)
"""ONNX op types (default domain) that become post-processing layers (``Div``: by a
constant only)."""

FREE_OPS: frozenset[str] = frozenset(
    {
        "Reshape",
        "Flatten",
        "Transpose",
        "Concat",
        "Split",
        "Slice",
        "Squeeze",
        "Unsqueeze",
        "Identity",
        "Dropout",
        "Cast",
        "Expand",
        "Pad",
        "Gather",
        "Shape",
        "Size",
        "Constant",
        "ConstantOfShape",
    }
)
"""ONNX op types that only move, reshape or relabel data: no layer, no cost (a ``Gather``
only of an activation: one of a constant table is an embedding look-up, not priced)."""

#: Ops whose output is shape data, known before the run (folded like constants).
_SHAPE_OPS = frozenset({"Shape", "Size"})

_DEFAULT_DOMAINS = ("", "ai.onnx")

# Ops that do multiply-accumulate work but are not priced: the summary notes them.
_UNPRICED_COMPUTE = frozenset(
    {
        "ConvTranspose",
        "ConvInteger",
        "QLinearConv",
        "MatMulInteger",
        "QLinearMatMul",
        "Einsum",
        "LSTM",
        "GRU",
        "RNN",
        "Attention",
        "MultiHeadAttention",
        "FusedConv",
        "FusedGemm",
        "FusedMatMul",
    }
)

Shape = tuple[int | str | None, ...]


class ImportSummary(Strict):
    """What an ONNX import priced and what it left out."""

    source: str
    layers: tuple[Layer, ...]
    """The priced layers, in graph order (the network's layers)."""
    priced: dict[str, int]
    """Priced nodes per op type (a pattern by its layer's op: ``gelu``, ``silu``,
    ``layernorm``), in order of first appearance."""
    not_priced: dict[str, int]
    """Free nodes (``FREE_OPS``, and nodes of constants only) per op type, in order of
    first appearance: they move or relabel data and cost nothing."""
    skipped: dict[str, int] = Field(default_factory=dict)
    """Nodes of operators magnet does not price, left out on request (``skip_ops``), per op
    type (``domain.op`` outside the default domain)."""
    notes: tuple[str, ...] = ()
    """Why some skipped nodes that carry MACs (3-D Conv, ConvTranspose, ...) are not priced."""

    @property
    def priced_count(self) -> int:
        """Nodes priced as layers (a pattern counts once)."""
        return sum(self.priced.values())

    @property
    def not_priced_count(self) -> int:
        """Free nodes (no cost)."""
        return sum(self.not_priced.values())

    def __str__(self) -> str:
        text = f"priced: {self.priced_count} layers"
        if self.priced:
            text += ": " + _counts(self.priced)
        text += f"; free (layout, constants): {self.not_priced_count} nodes"
        if self.not_priced:
            text += ": " + _counts(self.not_priced)
        if self.skipped:
            text += f"; SKIPPED (not priced, left out on request): {_counts(self.skipped)}"
        if self.notes:
            text += "; " + "; ".join(self.notes)
        return text


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{op} x {n}" for op, n in counts.items())


def load_onnx(
    path: str | Path, batch: int | None = None, skip_ops: bool = False
) -> tuple[Network, ImportSummary]:
    """The priced layers of an ONNX model as a network, and a summary of what was left out.

    ``batch`` replaces dim 0 of every graph input before shape inference; without it a
    symbolic batch dimension becomes 1. ``skip_ops``: leave out the nodes of operators
    magnet does not price (else the first one is refused, naming it). See the module
    docstring for the full mapping.
    """
    path = Path(path)
    src = str(path)
    if batch is not None and (isinstance(batch, bool) or not isinstance(batch, int) or batch < 1):
        raise MagnetError(
            f"batch must be an integer >= 1, got {batch!r}", source=src, field="batch"
        )
    kind = path_kind(path)
    if kind is None:
        raise MagnetError("file not found", source=src)
    if kind != "file":
        raise MagnetError(f"is a {kind}, not a file", source=src)
    model = _load(path, src)
    _set_batch(model, batch, src)
    try:
        inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)
    except Exception as exc:  # onnx raises several types (InferenceError, ValidationError, ...)
        raise MagnetError(f"ONNX shape inference failed: {exc}", source=src) from None
    return _Importer(inferred, src, path.stem or "onnx", skip_ops).run()


def _load(path: Path, src: str) -> onnx.ModelProto:
    try:
        model = onnx.load(str(path), load_external_data=False)
    except Exception as exc:  # protobuf DecodeError, UnicodeDecodeError, ...
        raise MagnetError(f"not an ONNX model ({type(exc).__name__}: {exc})", source=src) from None
    # protobuf parses some foreign bytes without complaint; a real model has a graph with nodes
    if not model.HasField("graph") or model.ir_version <= 0 or not model.graph.node:
        raise MagnetError("not an ONNX model (no IR version or an empty graph)", source=src)
    if model.ir_version > onnx.IR_VERSION:
        raise MagnetError(
            f"IR version {model.ir_version} is newer than the installed onnx "
            f"{onnx.__version__} reads (IR versions 1 to {onnx.IR_VERSION}); upgrade onnx or "
            "export the model with an older one",
            source=src,
            field="ir_version",
        )
    _check_opset(model, src)
    return model


def _check_opset(model: onnx.ModelProto, src: str) -> None:
    """Refuse a model whose default-domain opset the installed ``onnx`` cannot read (its shape
    inference knows opsets 1 to ``onnx.defs.onnx_opset_version()``; Conv, Gemm and MatMul
    read the same in all of them)."""
    newest = onnx.defs.onnx_opset_version()
    supported = f"supported: opsets 1 to {newest} (the installed onnx {onnx.__version__})"
    versions = [o.version for o in model.opset_import if o.domain in _DEFAULT_DOMAINS]
    if not versions:
        if any(node.domain in _DEFAULT_DOMAINS for node in model.graph.node):
            raise MagnetError(
                f"the model imports no opset of the default ONNX domain, which its nodes use; "
                f"{supported}",
                source=src,
                field="opset_import",
            )
        return
    for version in versions:
        if not 1 <= version <= newest:
            newer = " (newer than this onnx knows: upgrade onnx or export at a lower opset)"
            raise MagnetError(
                f"opset {version} of the default ONNX domain is not supported"
                f"{newer if version > newest else ''}; {supported}",
                source=src,
                field="opset_import",
            )


def _set_batch(model: onnx.ModelProto, batch: int | None, src: str) -> None:
    """Set dim 0 of the graph inputs (see the module docstring) and drop stale shapes; a
    batch the model fixes at 0 (or below) is refused, unless ``batch`` replaces it."""
    graph = model.graph
    initializers = {t.name for t in graph.initializer}
    changed = False
    for value in graph.input:
        if value.name in initializers or not value.type.HasField("tensor_type"):
            continue
        tensor = value.type.tensor_type
        if not tensor.HasField("shape") or not tensor.shape.dim:
            continue
        dim0 = tensor.shape.dim[0]
        if batch is None and dim0.HasField("dim_value") and dim0.dim_value <= 0:
            what = "zero-sized: it holds nothing" if dim0.dim_value == 0 else "negative"
            raise MagnetError(
                f"dimension 0 (the batch) of graph input {value.name!r} is {dim0.dim_value}, "
                f"{what}; a batch is >= 1 (or give one: --batch N)",
                source=src,
                field="graph.input",
            )
        fixed = dim0.HasField("dim_value")
        target = batch if batch is not None else (None if fixed else 1)
        if target is None or (fixed and dim0.dim_value == target):
            continue
        dim0.Clear()
        dim0.dim_value = target
        changed = True
    if changed:
        del graph.value_info[:]
        for value in graph.output:
            if value.type.HasField("tensor_type"):
                value.type.tensor_type.ClearField("shape")


class _Pattern(NamedTuple):
    """Nodes an exporter writes for one operation, priced as one layer (``kind``, ``op``):
    ``nodes`` (indices), ending at ``anchor``; ``input`` its activation, ``output`` its
    result, ``row`` a layer norm's row length (None: by channels)."""

    kind: str
    op: str
    anchor: int
    nodes: frozenset[int]
    input: str
    output: str
    row: int | None


def _axis(axis: int, rank: int, name: str, importer: _Importer) -> int:
    """``axis`` of a tensor of ``rank`` as an index in 0..rank-1 (negative: from the end)."""
    if not -rank <= axis < rank:
        raise importer.fail(f"axis {axis} is outside a tensor of rank {rank}", name)
    return axis % rank


class _ConvAttributes(NamedTuple):
    """A Conv node's attributes, one value per spatial axis (``pads``: all the starts, then
    all the ends)."""

    group: int
    kernel: list[int]
    strides: list[int]
    dilations: list[int]
    pads: list[int]
    auto_pad: str

    def output_sizes(self, sizes: Sequence[int]) -> list[int]:
        """The output size along each spatial axis of an input of ``sizes`` (ONNX's Conv
        formula; ``SAME_*`` padding keeps ceil(size / stride))."""
        spatial = len(sizes)
        out: list[int] = []
        for axis in range(spatial):
            size, k, s, d = sizes[axis], self.kernel[axis], self.strides[axis], self.dilations[axis]
            if self.auto_pad in ("SAME_UPPER", "SAME_LOWER"):
                out.append(-(-size // s))
            else:
                pads = self.pads
                pad = 0 if self.auto_pad == "VALID" else pads[axis] + pads[axis + spatial]
                out.append((size + pad - d * (k - 1) - 1) // s + 1)
        return out


class _Importer:
    def __init__(self, model: onnx.ModelProto, src: str, name: str, skip_ops: bool) -> None:
        self.src = src
        self.name = name
        self.skip_ops = skip_ops
        self.graph = model.graph
        self.shapes: dict[str, Shape] = {}
        for value in (*self.graph.input, *self.graph.value_info, *self.graph.output):
            tensor = value.type.tensor_type
            if value.type.HasField("tensor_type") and tensor.HasField("shape"):
                self.shapes[value.name] = tuple(
                    d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
                    for d in tensor.shape.dim
                )
        for init in self.graph.initializer:
            self.shapes[init.name] = tuple(int(d) for d in init.dims)
        for sparse in self.graph.sparse_initializer:
            self.shapes[sparse.values.name] = tuple(int(d) for d in sparse.dims)
        self.constant = {t.name for t in self.graph.initializer} | {
            s.values.name for s in self.graph.sparse_initializer
        }
        self.values = {t.name: t for t in self.graph.initializer}
        self.used_names: set[str] = set()
        # tensor -> the nodes (indices) that read it
        self.readers: dict[str, list[int]] = {}
        for index, node in enumerate(self.graph.node):
            for tensor in node.input:
                if tensor:
                    self.readers.setdefault(tensor, []).append(index)
        self.outputs = {v.name for v in self.graph.output}
        # tensor -> the node (index) that writes it
        self.writers = {o: i for i, node in enumerate(self.graph.node) for o in node.output if o}
        for node in self.graph.node:  # the values of Constant nodes (a Clip's bounds)
            if node.op_type == "Constant" and node.output and node.attribute:
                value = onnx.helper.get_attribute_value(node.attribute[0])
                if isinstance(value, onnx.TensorProto):
                    self.values[node.output[0]] = value
        versions = [o.version for o in model.opset_import if o.domain in _DEFAULT_DOMAINS]
        self.opset = max(versions, default=onnx.defs.onnx_opset_version())

    # ---- errors and shapes -----------------------------------------------------------------
    def fail(self, message: str, field: str) -> MagnetError:
        """An error naming the model file and ``field`` (a node), for the caller to raise."""
        return MagnetError(message, source=self.src, field=field)

    def shape(self, tensor: str, layer: str, role: str) -> tuple[int, ...]:
        """The static shape of ``tensor`` or a MagnetError naming the node."""
        if not tensor:
            raise self.fail(f"{role} is missing", layer)
        if tensor not in self.shapes:
            raise self.fail(
                f"shape inference gave no shape for {role} {tensor!r}; give the graph inputs "
                "static shapes (or run onnxsim) and check that the ops before it are standard",
                layer,
            )
        shape = self.shapes[tensor]
        sizes: list[int] = []
        for axis, dim in enumerate(shape):
            if isinstance(dim, int) and dim < 1:
                what = "zero-sized: it holds nothing" if dim == 0 else "negative: not a size"
                raise self.fail(
                    f"dimension {axis} of {role} {tensor!r} {list(shape)} is {dim}, {what}; "
                    "every dimension of a priced node's operands is >= 1",
                    layer,
                )
            if not isinstance(dim, int):
                what = f"symbolic ({dim!r})" if isinstance(dim, str) else "unknown"
                raise self.fail(
                    f"dimension {axis} of {role} {tensor!r} {list(shape)} is {what}; only the "
                    "batch (dim 0 of the graph inputs) is fixed by load_onnx; give the other "
                    "inputs' dimensions static sizes",
                    layer,
                )
            sizes.append(int(dim))
        return tuple(sizes)

    def known_shape(self, tensor: str) -> tuple[int, ...] | None:
        """The static shape of ``tensor`` when inference gave one (for cross-checks)."""
        shape = self.shapes.get(tensor)
        if shape is None:
            return None
        sizes = [int(d) for d in shape if isinstance(d, int) and d >= 1]
        return tuple(sizes) if len(sizes) == len(shape) else None

    def layer_name(self, node: onnx.NodeProto, index: int) -> str:
        """A unique name for the layer of ``node``: its own, else ``OpType_index``; a name
        taken already gets ``_2``, ``_3``..."""
        base = node.name.strip() or f"{node.op_type}_{index}"
        name, k = base, 2
        while name in self.used_names:
            name, k = f"{base}_{k}", k + 1
        self.used_names.add(name)
        return name

    # ---- the graph ---------------------------------------------------------------------------
    def run(self) -> tuple[Network, ImportSummary]:
        """Walk the graph in order: every Conv, Gemm and MatMul a MAC layer, every operator of
        ``POSTPROCESS_ONNX`` (and every pattern) a post-processing layer, the free nodes
        passed through, any other node refused (or skipped, with ``skip_ops``); the
        producers of each layer traced through the free and skipped nodes."""
        layers: list[Layer] = []
        priced: dict[str, int] = {}
        free: dict[str, int] = {}
        skipped: dict[str, int] = {}
        notes: list[str] = []
        # tensor -> the layers its value comes from, through free and skipped nodes
        made_by: dict[str, tuple[str, ...]] = {}
        producers: dict[str, tuple[str, ...]] = {}
        patterns = self.patterns()
        inside = {i for p in patterns.values() for i in p.nodes if i != p.anchor}
        for index, node in enumerate(self.graph.node):
            inputs = [i for i in node.input if i]
            standard = node.domain in _DEFAULT_DOMAINS
            op = node.op_type if standard else f"{node.domain}.{node.op_type}"
            folded = node.op_type == "Constant" or (standard and node.op_type in _SHAPE_OPS)
            if folded or (inputs and all(i in self.constant for i in inputs)):
                self.constant.update(o for o in node.output if o)
                free[op] = free.get(op, 0) + 1
                continue
            if index in inside:
                continue  # read only inside its pattern: priced as the pattern's layer
            activations = [i for i in inputs if i not in self.constant]
            sources = tuple(dict.fromkeys(p for i in activations for p in made_by.get(i, ())))
            pattern = patterns.get(index)
            layer: Layer | None = None
            why = ""
            label = op
            if pattern is not None:
                name = self.layer_name(node, index)
                layer = self.tensor_layer(
                    name, pattern.kind, pattern.op, pattern.output, row=pattern.row
                )
                sources = made_by.get(pattern.input, ())
                label = pattern.op
            elif standard and node.op_type in PRICED_OPS:
                name = self.layer_name(node, index)
                if node.op_type == "Conv":
                    layer = self.conv(node, name)
                    if layer is None:
                        self.used_names.discard(name)
                        why = " (a Conv with 3 or more spatial dims)"
                elif node.op_type == "Gemm":
                    layer = self.gemm(node, name)
                else:
                    layer = self.matmul(node, name)
            elif standard and node.op_type in POSTPROCESS_ONNX:
                name = self.layer_name(node, index)
                layer, why = self.postprocess(node, name, activations)
                if layer is None:
                    self.used_names.discard(name)
            elif standard and node.op_type in FREE_OPS:
                if node.op_type == "Gather" and inputs[0] in self.constant:
                    why = " (a Gather of a constant table: an embedding look-up)"
                else:
                    free[op] = free.get(op, 0) + 1
                    for out in node.output:
                        if out:
                            made_by[out] = sources
                    continue
            elif node.op_type in _UNPRICED_COMPUTE:
                why = " (it carries MACs)"
            if layer is None:
                if not self.skip_ops:
                    raise self.fail(
                        f"{op} is an operator magnet does not price{why}; pass "
                        "--skip-unpriced-ops (load_onnx(..., skip_ops=True); in a search "
                        "space, skip_unpriced_ops: true on the workload) to leave such nodes "
                        "out, and the record lists them",
                        node.name.strip() or f"{op}_{index}",
                    )
                if why and op not in skipped:
                    notes.append(f"{op} skipped{why}")
                skipped[op] = skipped.get(op, 0) + 1
                for out in node.output:
                    if out:
                        made_by[out] = sources
                continue
            layers.append(layer)
            priced[label] = priced.get(label, 0) + 1
            producers[layer.name] = sources
            outputs = node.output if pattern is None else [pattern.output]
            for out in outputs:
                if out:
                    made_by[out] = (layer.name,)
        summary = ImportSummary(
            source=self.src,
            layers=tuple(layers),
            priced=priced,
            not_priced=free,
            skipped=skipped,
            notes=tuple(notes),
        )
        if not layers:
            raise MagnetError(f"no layer to price ({summary})", source=self.src)
        network = Network.of(self.name, list(layers))
        return network.model_copy(update={"producers": producers, "skipped": skipped}), summary

    # ---- post-processing -----------------------------------------------------------------------
    def postprocess(
        self, node: onnx.NodeProto, name: str, activations: list[str]
    ) -> tuple[Layer | None, str]:
        """A node of ``POSTPROCESS_ONNX`` as a post-processing layer, or (None, why) when this
        use of it is not priced (a division of two activations)."""
        kind = node.op_type
        out = node.output[0]
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        if kind in ("Relu", "Sigmoid", "Tanh", "Gelu"):
            return self.tensor_layer(name, "activation", kind.lower(), out), ""
        if kind == "Clip":
            return self.tensor_layer(name, "activation", self.clip_op(node, attrs), out), ""
        if kind in ("Add", "Sub", "Mul", "Div"):
            if len(activations) == 2:
                if kind == "Div":
                    return None, " (a division of two activations)"
                op = "mul" if kind == "Mul" else "add"
                return self.tensor_layer(name, "eltwise", op, out), ""
            constant = next(i for i in node.input if i and i in self.constant)
            numel = math.prod(self.known_shape(constant) or (1,))
            op = "bias" if kind in ("Add", "Sub") else "scale"
            return self.tensor_layer(name, "eltwise", op, out, row=int(numel)), ""
        if kind in ("MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"):
            return self.pool(node, name, attrs), ""
        x = self.shape(node.input[0], name, f"{kind} input")
        if kind == "BatchNormalization":
            channels = x[1] if len(x) > 1 else x[0]
            return self.tensor_layer(name, "norm", "batchnorm", out, row=channels), ""
        if kind == "Softmax":
            legacy = self.opset < 13  # before opset 13: coerced to 2-D at axis (default 1)
            axis = _axis(int(attrs.get("axis", 1 if legacy else -1)), len(x), name, self)
            row = math.prod(x[axis:]) if legacy else x[axis]
            return self.tensor_layer(name, "softmax", "softmax", out, row=row), ""
        axis = _axis(int(attrs.get("axis", -1)), len(x), name, self)  # LayerNormalization
        return self.tensor_layer(name, "norm", "layernorm", out, row=math.prod(x[axis:])), ""

    def clip_op(self, node: onnx.NodeProto, attrs: dict[str, Any]) -> str:
        """``relu6`` for a Clip to 0..6 (ReLU6), else ``clip`` (priced alike)."""
        bounds = [attrs.get("min"), attrs.get("max")]
        for slot in (1, 2):
            if len(node.input) > slot and node.input[slot] in self.values:
                value = onnx.numpy_helper.to_array(self.values[node.input[slot]])
                bounds[slot - 1] = float(value.reshape(-1)[0]) if value.size else None
        return "relu6" if bounds == [0.0, 6.0] else "clip"

    def pool(self, node: onnx.NodeProto, name: str, attrs: dict[str, Any]) -> Layer:
        """A pooling node as a pool layer: its window (the whole input for a global one),
        strides and dilations, its output size from shape inference."""
        x = self.shape(node.input[0], name, f"{node.op_type} input")
        y = self.shape(node.output[0], name, f"{node.op_type} output")
        if len(x) not in (3, 4) or len(y) != len(x):
            raise self.fail(
                f"{node.op_type} input {list(x)}: expected [N, C, L] or [N, C, H, W]", name
            )
        spatial = len(x) - 2
        if node.op_type.startswith("Global"):
            kernel, strides, dilations = list(x[2:]), [1] * spatial, [1] * spatial
        else:
            kernel = [int(k) for k in attrs.get("kernel_shape", [])]
            strides = [int(v) for v in attrs.get("strides", [1] * spatial)]
            dilations = [int(v) for v in attrs.get("dilations", [1] * spatial)]
            if len(kernel) != spatial or min(kernel + strides + dilations, default=0) < 1:
                raise self.fail(
                    f"{node.op_type} kernel_shape {kernel}, strides {strides}, dilations "
                    f"{dilations}: expected {spatial} values each, all >= 1",
                    name,
                )
        out = list(y[2:])
        if spatial == 1:  # along the width, as a 1-D Conv
            kernel, strides, dilations, out = ([1, *v] for v in (kernel, strides, dilations, out))
        op = "max" if "Max" in node.op_type else "avg"
        try:
            return pool(
                name,
                op=op,
                channels=x[1],
                out_height=out[0],
                out_width=out[1],
                kernel=(kernel[0], kernel[1]),
                stride=(strides[0], strides[1]),
                dilation=(dilations[0], dilations[1]),
                batch=x[0],
            )
        except MagnetError as exc:
            raise self.fail(exc.message, name) from None

    def tensor_layer(
        self, name: str, kind: str, op: str, tensor: str, row: int | None = None
    ) -> Layer:
        """A post-processing layer over the elements of ``tensor``: channels (K) its dim 1
        (a 4-D tensor's height and width in Q and P), or, given ``row``, rows of ``row``
        elements (a softmax's, a layer norm's, a per-channel constant's length), the batch
        (dim 0) in N where it divides."""
        shape = self.shape(tensor, name, f"{kind} {op} output")
        elements = math.prod(shape)
        batch = shape[0] if len(shape) >= 2 else 1
        height, width = 1, 1
        if row is None:
            if len(shape) <= 1:
                channels, batch = elements, 1
            else:
                channels = shape[1]
                if len(shape) == 4:
                    height, width = shape[2], shape[3]
                else:
                    width = math.prod(shape[2:])
        else:
            channels = row if row >= 1 and elements % row == 0 else 1
            rest = elements // channels
            batch = batch if rest % batch == 0 else 1
            width = rest // batch
        try:
            return postprocess(
                name,
                kind=kind,
                op=op,
                channels=channels,
                height=height,
                width=width,
                batch=batch,
            )
        except MagnetError as exc:
            raise self.fail(exc.message, name) from None

    # ---- patterns ------------------------------------------------------------------------------
    def producer(self, tensor: str) -> int | None:
        """The node (index) that writes ``tensor``; None for an input or an initializer."""
        return self.writers.get(tensor)

    def only_reader(self, tensor: str, ops: tuple[str, ...]) -> int | None:
        """The one node that reads ``tensor``, if it is one of ``ops`` of the default domain
        and ``tensor`` is not a graph output."""
        readers = set(self.readers.get(tensor, ()))
        if len(readers) != 1 or tensor in self.outputs:
            return None
        (index,) = readers
        node = self.graph.node[index]
        return index if node.op_type in ops and node.domain in _DEFAULT_DOMAINS else None

    def by_constant(self, index: int) -> str | None:
        """The activation input of a two-input node whose other input is a constant."""
        inputs: list[str] = [i for i in self.graph.node[index].input if i]
        activations = [i for i in inputs if i not in self.constant]
        return activations[0] if len(inputs) == 2 and len(activations) == 1 else None

    def other_input(self, index: int, tensor: str) -> str | None:
        """The input of a two-input node other than ``tensor`` (None: not two inputs)."""
        inputs: list[str] = [i for i in self.graph.node[index].input if i]
        if len(inputs) != 2 or tensor not in inputs:
            return None
        return inputs[1] if inputs[0] == tensor else inputs[0]

    def patterns(self) -> dict[int, _Pattern]:
        """The patterns of the graph by the node that ends them (``_Pattern``): GELU from
        ``Erf``, SiLU ``x * Sigmoid(x)``, a decomposed layer norm from ``ReduceMean``."""
        found: dict[int, _Pattern] = {}
        taken: set[int] = set()
        for index, node in enumerate(self.graph.node):
            if node.domain not in _DEFAULT_DOMAINS or index in taken:
                continue
            match = {
                "Erf": self.gelu_pattern,
                "Sigmoid": self.silu_pattern,
                "ReduceMean": self.layernorm_pattern,
            }.get(node.op_type)
            pattern = None if match is None else match(index)
            if pattern is not None and not pattern.nodes & taken:
                found[pattern.anchor] = pattern
                taken |= pattern.nodes
        return found

    def gelu_pattern(self, erf: int) -> _Pattern | None:
        """``x * 0.5 * (1 + Erf(x / sqrt(2)))`` (any order of the multiplies)."""
        node = self.graph.node[erf]
        scaled = node.input[0]
        first = self.producer(scaled)
        if first is None or self.graph.node[first].op_type not in ("Div", "Mul"):
            return None
        x = self.by_constant(first)
        if x is None or self.only_reader(scaled, ("Erf",)) != erf:
            return None
        plus = self.only_reader(node.output[0], ("Add",))
        if plus is None or self.other_input(plus, node.output[0]) not in self.constant:
            return None
        nodes, tensor, seen_x = {first, erf, plus}, self.graph.node[plus].output[0], False
        while (mul := self.only_reader(tensor, ("Mul",))) is not None:
            other = self.other_input(mul, tensor)
            side = None if other is None else self.producer(other)
            if other == x:
                seen_x = True
            elif (
                side is not None
                and self.graph.node[side].op_type == "Mul"
                and (
                    x in self.graph.node[side].input
                    and self.other_input(side, x) in self.constant
                    and self.only_reader(other or "", ("Mul",)) == mul
                )
            ):
                nodes.add(side)
                seen_x = True
            elif other not in self.constant:
                break
            nodes.add(mul)
            tensor = self.graph.node[mul].output[0]
        if not seen_x:
            return None
        return _Pattern("activation", "gelu", max(nodes), frozenset(nodes), x, tensor, None)

    def silu_pattern(self, sigmoid: int) -> _Pattern | None:
        """``x * Sigmoid(x)``."""
        node = self.graph.node[sigmoid]
        x = node.input[0]
        mul = self.only_reader(node.output[0], ("Mul",))
        if x in self.constant or mul is None or self.other_input(mul, node.output[0]) != x:
            return None
        output = self.graph.node[mul].output[0]
        return _Pattern("activation", "silu", mul, frozenset({sigmoid, mul}), x, output, None)

    def layernorm_pattern(self, mean: int) -> _Pattern | None:
        """``(x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps)``, then an optional scale
        ``Mul`` and shift ``Add`` by constants (the normalised axes: ``ReduceMean``'s,
        else the last)."""
        node = self.graph.node[mean]
        x = node.input[0]
        sub = self.only_reader(node.output[0], ("Sub",))
        if x in self.constant or sub is None:
            return None
        if list(self.graph.node[sub].input) != [x, node.output[0]]:
            return None
        centred = self.graph.node[sub].output[0]
        readers = sorted(set(self.readers.get(centred, ())))
        kinds = {self.graph.node[i].op_type: i for i in readers}
        if len(readers) != 2 or "Div" not in kinds or not {"Pow", "Mul"} & set(kinds):
            return None
        square = kinds.get("Pow", kinds.get("Mul"))
        assert square is not None
        chain = [square]
        for ops in (("ReduceMean",), ("Add",), ("Sqrt",)):
            following = self.only_reader(self.graph.node[chain[-1]].output[0], ops)
            if following is None:
                return None
            chain.append(following)
        divide = kinds["Div"]
        if list(self.graph.node[divide].input) != [centred, self.graph.node[chain[-1]].output[0]]:
            return None
        nodes = {mean, sub, divide, *chain}
        tensor = self.graph.node[divide].output[0]
        for ops in (("Mul",), ("Add",)):
            following = self.only_reader(tensor, ops)
            if following is None or self.other_input(following, tensor) not in self.constant:
                break
            nodes.add(following)
            tensor = self.graph.node[following].output[0]
        shape = self.known_shape(x)
        if shape is None:
            return None
        axes = [int(a) for a in self.attribute(mean, "axes") or [-1]]
        row = math.prod(shape[a] for a in axes) if axes else shape[-1]
        return _Pattern("norm", "layernorm", max(nodes), frozenset(nodes), x, tensor, row)

    def attribute(self, index: int, key: str) -> Any:
        """Attribute ``key`` of node ``index`` (None when absent)."""
        for a in self.graph.node[index].attribute:
            if a.name == key:
                return onnx.helper.get_attribute_value(a)
        return None

    # ---- Conv -----------------------------------------------------------------------------------
    def conv(self, node: onnx.NodeProto, name: str) -> Layer | None:
        """A 1-D or 2-D Conv as a layer (None for 3 or more spatial dims: not priced); the
        output size follows ONNX's formula and must agree with shape inference."""
        x = self.shape(node.input[0], name, "Conv input")
        spatial = len(x) - 2
        if spatial not in (1, 2):
            if spatial >= 3:
                return None
            raise self.fail(f"Conv input has rank {len(x)}; expected 3 (1-D) or 4 (2-D)", name)
        w = self.shape(node.input[1] if len(node.input) > 1 else "", name, "Conv weight")
        if len(w) != len(x):
            raise self.fail(f"Conv weight {list(w)} and input {list(x)} differ in rank", name)
        conv = self.conv_attributes(node, name, w, spatial)
        batch, channels, out_channels = x[0], x[1], w[0]
        if conv.group < 1:
            raise self.fail(f"Conv attribute group={conv.group}: a group count is >= 1", name)
        if channels != w[1] * conv.group or out_channels % conv.group:
            raise self.fail(
                f"group={conv.group} does not split the channels: input channels {channels} "
                f"must be weight channels {w[1]} x group, and output channels {out_channels} "
                "a multiple of the group",
                name,
            )
        out = conv.output_sizes(x[2:])
        expected = [batch, out_channels, *out]
        inferred = self.known_shape(node.output[0])
        if inferred is not None and list(inferred) != expected:
            raise self.fail(
                f"inferred output shape {list(inferred)} disagrees with the Conv formula "
                f"{expected} (input {list(x)}, kernel {conv.kernel}, strides {conv.strides}, "
                f"dilations {conv.dilations}, pads {conv.pads}, auto_pad {conv.auto_pad})",
                name,
            )
        if min(out) < 1:
            raise self.fail(
                f"Conv output size {out} is empty: the dilated kernel "
                f"{[d * (k - 1) + 1 for d, k in zip(conv.dilations, conv.kernel, strict=True)]} "
                f"is larger than the padded input (input {list(x)}, pads {conv.pads}, "
                f"auto_pad {conv.auto_pad})",
                name,
            )
        kernel, strides, dilations = conv.kernel, conv.strides, conv.dilations
        if spatial == 1:
            # a 1-D conv runs along the width: height extents, strides and dilations are 1
            kernel, strides, dilations, out = ([1, *v] for v in (kernel, strides, dilations, out))
        layer = self.built(
            name,
            lambda: conv2d(
                name,
                in_channels=channels,
                out_channels=out_channels,
                out_height=out[0],
                out_width=out[1],
                kernel=(kernel[0], kernel[1]),
                stride=(strides[0], strides[1]),
                dilation=(dilations[0], dilations[1]),
                groups=conv.group,
                batch=batch,
            ),
        )
        weight = self.array(node.input[1])
        if weight is None:
            return layer
        # [K, C / group, kernel...]: each group's filters read its own input channels
        filters = weight.reshape(conv.group, out_channels // conv.group, w[1], -1) != 0
        return _with_weight_zeros(layer, filters.mean(axis=(1, 3)).reshape(-1))

    def array(self, tensor: str) -> np.ndarray | None:
        """The values of a constant tensor held in the file (None: not a constant, or its
        data kept outside the file)."""
        if tensor not in self.values:
            return None
        try:
            return np.asarray(onnx.numpy_helper.to_array(self.values[tensor]))
        except Exception:  # external data not loaded, a type numpy cannot hold
            return None

    def built(self, name: str, build: Callable[[], Layer]) -> Layer:
        """``build()`` (a layer builder's call), what the builder refuses (a size beyond its
        bound, named by its argument) named for the node ``name`` and the file."""
        try:
            return build()
        except MagnetError as exc:
            raise self.fail(
                f"{exc.field}: {exc.message}" if exc.field else exc.message, name
            ) from None

    def conv_attributes(
        self, node: onnx.NodeProto, name: str, weight: tuple[int, ...], spatial: int
    ) -> _ConvAttributes:
        """The Conv node's attributes, checked (the kernel is the weight's)."""
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        kernel = list(weight[2:])
        if "kernel_shape" in attrs and list(attrs["kernel_shape"]) != kernel:
            raise self.fail(
                f"kernel_shape {list(attrs['kernel_shape'])} disagrees with the weight "
                f"{list(weight)}",
                name,
            )
        auto_pad = attrs.get("auto_pad", b"NOTSET")
        return _ConvAttributes(
            group=int(attrs.get("group", 1)),
            kernel=kernel,
            strides=self.ints(attrs, "strides", [1] * spatial, spatial, name),
            dilations=self.ints(attrs, "dilations", [1] * spatial, spatial, name),
            pads=self.ints(attrs, "pads", [0] * (2 * spatial), 2 * spatial, name),
            auto_pad=auto_pad.decode() if isinstance(auto_pad, bytes) else str(auto_pad),
        )

    def ints(
        self, attrs: dict[str, Any], key: str, default: list[int], size: int, name: str
    ) -> list[int]:
        """The integer list attribute ``key`` of a Conv (``default`` when absent): ``size``
        values, each >= 1 (pads >= 0)."""
        values = [int(v) for v in attrs.get(key, default)]
        if len(values) != size:
            raise self.fail(
                f"Conv attribute {key}={values}: expected {size} values (one per spatial axis"
                f"{', begins then ends' if key == 'pads' else ''})",
                name,
            )
        low = 0 if key == "pads" else 1
        bad = [v for v in values if v < low]
        if bad:
            what = {
                "pads": "negative padding (a crop), which magnet does not price",
                "strides": "a stride of 0 or less, which moves the window nowhere",
                "dilations": "a dilation of 0 or less, which collapses the kernel",
            }[key]
            raise self.fail(
                f"Conv attribute {key}={values} holds {bad[0]}: {what}; {key} are >= {low}",
                name,
            )
        return values

    # ---- Gemm and MatMul ----------------------------------------------------------------------
    def gemm(self, node: onnx.NodeProto, name: str) -> Layer:
        """A Gemm (2-D operands, ``transA`` / ``transB``) as a layer."""
        if len(node.input) < 2:
            raise self.fail("Gemm needs two inputs", name)
        a = self.shape(node.input[0], name, "Gemm input A")
        b = self.shape(node.input[1], name, "Gemm input B")
        if len(a) != 2 or len(b) != 2:
            raise self.fail(f"Gemm operands must be 2-D, got {list(a)} and {list(b)}", name)
        attrs = {x.name: onnx.helper.get_attribute_value(x) for x in node.attribute}
        m, k = (a[1], a[0]) if attrs.get("transA", 0) else a
        k2, n = (b[1], b[0]) if attrs.get("transB", 0) else b
        if k != k2:
            raise self.fail(
                f"Gemm reduction sizes differ: A {list(a)} (transA={attrs.get('transA', 0)}) "
                f"and B {list(b)} (transB={attrs.get('transB', 0)})",
                name,
            )
        self.check_output(node, name, (m, n))
        return self.built(name, lambda: self.product(node, name, m, k, n, (), (), ()))

    def matmul(self, node: onnx.NodeProto, name: str) -> Layer:
        """A MatMul (numpy semantics: vectors, broadcast leading dims) as a layer."""
        if len(node.input) < 2:
            raise self.fail("MatMul needs two inputs", name)
        a = self.shape(node.input[0], name, "MatMul input A")
        b = self.shape(node.input[1], name, "MatMul input B")
        if not a or not b:
            raise self.fail(f"MatMul operands cannot be scalars, got {list(a)}, {list(b)}", name)
        a2 = (1, *a) if len(a) == 1 else a  # numpy: a vector on the left is one row
        b2 = (*b, 1) if len(b) == 1 else b  # and on the right one column
        m, k = a2[-2:]
        k2, n = b2[-2:]
        if k != k2:
            raise self.fail(f"MatMul reduction sizes differ: {list(a)} @ {list(b)}", name)
        a_lead, b_lead = a2[:-2], b2[:-2]
        lead = _broadcast(a_lead, b_lead)
        if lead is None:
            raise self.fail(f"MatMul leading dims do not broadcast: {list(a)} @ {list(b)}", name)
        out = (*lead, *((m,) if len(a) > 1 else ()), *((n,) if len(b) > 1 else ()))
        self.check_output(node, name, out)
        return self.built(name, lambda: self.product(node, name, m, k, n, lead, a_lead, b_lead))

    def check_output(self, node: onnx.NodeProto, name: str, expected: Sequence[int]) -> None:
        """Refuse a node whose inferred output shape is not ``expected``."""
        inferred = self.known_shape(node.output[0])
        if inferred is not None and list(inferred) != list(expected):
            raise self.fail(
                f"inferred output shape {list(inferred)} disagrees with the operands' "
                f"{list(expected)}",
                name,
            )

    def product(
        self,
        node: onnx.NodeProto,
        name: str,
        m: int,
        k: int,
        n: int,
        lead: tuple[int, ...],
        a_lead: tuple[int, ...],
        b_lead: tuple[int, ...],
    ) -> Layer:
        """(lead x M x K) @ (lead x K x N): weight on the right, on the left, or none."""
        a_const, b_const = (node.input[i] in self.constant for i in (0, 1))
        if a_const and not b_const:  # weight on the left: price Y^T = B^T A^T
            batch, heads = _batch_heads(lead, a_lead)
            return self.weighted(name, m=n, k=k, n=m, batch=batch, heads=heads)
        batch, heads = _batch_heads(lead, b_lead)
        if b_const:
            layer = self.weighted(name, m=m, k=k, n=n, batch=batch, heads=heads)
            weight = self.array(node.input[1])
            if weight is None or heads != 1 or weight.ndim != 2:
                return layer
            attrs = {x.name: onnx.helper.get_attribute_value(x) for x in node.attribute}
            rows = weight.T if node.op_type == "Gemm" and attrs.get("transB", 0) else weight
            return _with_weight_zeros(layer, (rows != 0).mean(axis=1))  # [K, N]: per K
        return matmul(name, m=m, k=k, n=n, heads=heads, batch=batch)

    @staticmethod
    def weighted(name: str, *, m: int, k: int, n: int, batch: int, heads: int) -> Layer:
        """A product with a constant weight: a GEMM, its heads as groups."""
        layer = gemm(name, m=m, k=k, n=n, batch=batch)
        return layer if heads == 1 else Layer(**{**layer.model_dump(), "G": heads})


def _with_weight_zeros(layer: Layer, channels: np.ndarray) -> Layer:
    """``layer`` with its weights' measured density per input channel (``channels``, one
    per input channel, the groups' in order), when some weight is zero; else as it is (and
    for a weight of zeros only: a placeholder, a graph exported without its values)."""
    if channels.size != layer.G * layer.C or bool((channels >= 1.0).all()):
        return layer
    if not channels.any():
        return layer
    measured = Density.model_validate({"channels": [float(c) for c in channels]})
    return layer.model_copy(update={"densities": Densities(weights=measured)})


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    """numpy broadcasting of two shapes, or None when they do not broadcast."""
    size = max(len(a), len(b))
    a = (1,) * (size - len(a)) + a
    b = (1,) * (size - len(b)) + b
    out = []
    for x, y in zip(a, b, strict=True):
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y))
    return tuple(out)


def _batch_heads(lead: tuple[int, ...], second_lead: tuple[int, ...]) -> tuple[int, int]:
    """(batch, heads) of the leading dims: heads only if the second operand varies along them."""
    if not lead:
        return 1, 1
    if all(d == 1 for d in second_lead):
        return math.prod(lead), 1
    return math.prod(lead[:-1]), lead[-1]
