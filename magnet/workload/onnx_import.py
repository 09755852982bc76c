"""Import an ONNX model as a :class:`Network` of the layers magnet can price.

``load_onnx(path, batch=None)`` returns ``(network, summary)``:

* **Priced**: ``Conv`` (1-D and 2-D, any ``group``), ``Gemm`` and ``MatMul`` of the default
  ONNX domain. Every such node becomes one layer (repeat 1), in graph order.
* **Not priced**: every other node (Relu, MaxPool, BatchNormalization, Add, Reshape, Softmax,
  a 3-D Conv, custom-domain ops, ...). They never make the import fail; the summary counts
  them per op type, in order of first appearance. Subgraphs (``If``/``Loop`` bodies) are not
  entered: the ``If``/``Loop`` node itself is counted as not priced.

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
``DequantizeLinear``, ``Transpose`` or ``Cast`` still counts as one).

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

**Producers.** The network records, for each layer, the priced layers whose outputs make
its input: the graph is followed back from the layer's non-constant inputs through
unpriced nodes (Relu, pooling, Add, Reshape, ...) to the priced nodes behind them
(``Network.producers``, which decides the activations kept on chip).

Layer names are the ONNX node names (stripped), or ``<op_type>_<index>`` (the node's index
in the graph) when empty, made unique by appending ``_2``, ``_3``, ... The network is named
after the file stem.

Errors (missing file, not an ONNX model, a shape inference cannot give, an attribute that
disagrees with the shapes, a model with nothing to price) raise :class:`MagnetError` with the
file as ``source`` and, for a node, the node's (layer) name as ``field``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import onnx

from magnet.errors import MagnetError
from magnet.files import path_kind
from magnet.strict import Strict
from magnet.workload.layer import Layer, conv2d, gemm, matmul
from magnet.workload.network import Network

__all__ = ["PRICED_OPS", "ImportSummary", "load_onnx"]

PRICED_OPS: tuple[str, ...] = ("Conv", "Gemm", "MatMul")
"""ONNX op types (default domain) that become layers."""

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
    """Priced nodes per op type, in order of first appearance."""
    not_priced: dict[str, int]
    """Nodes that are not priced, per op type (``domain.op`` outside the default domain),
    in order of first appearance."""
    notes: tuple[str, ...] = ()
    """Why some nodes that carry MACs (3-D Conv, ConvTranspose, ...) are not priced."""

    @property
    def priced_count(self) -> int:
        """Nodes priced as layers."""
        return sum(self.priced.values())

    @property
    def not_priced_count(self) -> int:
        """Nodes left out (no MACs magnet prices)."""
        return sum(self.not_priced.values())

    def __str__(self) -> str:
        text = f"not priced: {self.not_priced_count} nodes"
        if self.not_priced:
            text += ": " + _counts(self.not_priced)
        text += f"; priced: {self.priced_count} layers"
        if self.priced:
            text += ": " + _counts(self.priced)
        if self.notes:
            text += "; " + "; ".join(self.notes)
        return text


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{op} x {n}" for op, n in counts.items())


def load_onnx(path: str | Path, batch: int | None = None) -> tuple[Network, ImportSummary]:
    """The priced layers of an ONNX model as a network, and a summary of what was left out.

    ``batch`` replaces dim 0 of every graph input before shape inference; without it a
    symbolic batch dimension becomes 1. See the module docstring for the full mapping.
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
    return _Importer(inferred, src, path.stem or "onnx").run()


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
    def __init__(self, model: onnx.ModelProto, src: str, name: str) -> None:
        self.src = src
        self.name = name
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
        self.used_names: set[str] = set()

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
        """Walk the graph in order: every Conv, Gemm and MatMul a layer, the producers of
        each layer traced through the nodes magnet does not price."""
        layers: list[Layer] = []
        priced: dict[str, int] = {}
        not_priced: dict[str, int] = {}
        notes: list[str] = []
        # tensor -> the priced layers its value comes from, through unpriced nodes
        made_by: dict[str, tuple[str, ...]] = {}
        producers: dict[str, tuple[str, ...]] = {}
        for index, node in enumerate(self.graph.node):
            inputs = [i for i in node.input if i]
            if node.op_type == "Constant" or (inputs and all(i in self.constant for i in inputs)):
                self.constant.update(o for o in node.output if o)
            sources = tuple(
                dict.fromkeys(
                    p for i in inputs if i not in self.constant for p in made_by.get(i, ())
                )
            )
            standard = node.domain in _DEFAULT_DOMAINS
            op = node.op_type if standard else f"{node.domain}.{node.op_type}"
            layer: Layer | None = None
            if standard and node.op_type in PRICED_OPS:
                name = self.layer_name(node, index)
                if node.op_type == "Conv":
                    layer = self.conv(node, name)
                    if layer is None:
                        self.used_names.discard(name)
                        notes.append(f"Conv {name!r} has 3 or more spatial dims: not priced")
                elif node.op_type == "Gemm":
                    layer = self.gemm(node, name)
                else:
                    layer = self.matmul(node, name)
            elif node.op_type in _UNPRICED_COMPUTE and op not in not_priced:
                notes.append(f"{op} carries MACs but is not priced")
            if layer is None:
                not_priced[op] = not_priced.get(op, 0) + 1
            else:
                layers.append(layer)
                priced[op] = priced.get(op, 0) + 1
                producers[layer.name] = sources
                sources = (layer.name,)
            for out in node.output:
                if out:
                    made_by[out] = sources
        summary = ImportSummary(
            source=self.src,
            layers=tuple(layers),
            priced=priced,
            not_priced=not_priced,
            notes=tuple(notes),
        )
        if not layers:
            raise MagnetError(f"no Conv, Gemm or MatMul node to price ({summary})", source=self.src)
        network = Network.of(self.name, list(layers))
        return network.model_copy(update={"producers": producers}), summary

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
        return self.built(
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
            return self.weighted(name, m=m, k=k, n=n, batch=batch, heads=heads)
        return matmul(name, m=m, k=k, n=n, heads=heads, batch=batch)

    @staticmethod
    def weighted(name: str, *, m: int, k: int, n: int, batch: int, heads: int) -> Layer:
        """A product with a constant weight: a GEMM, its heads as groups."""
        layer = gemm(name, m=m, k=k, n=n, batch=batch)
        return layer if heads == 1 else Layer(**{**layer.model_dump(), "G": heads})


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
