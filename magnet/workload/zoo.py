"""The model zoo: reference networks as layer lists, shapes as in the papers and torchvision.

Every layer a deployed inference runs is listed, in the order it runs, with the graph of
which layer feeds which (``Network.producers``): convolutions, fully connected / GEMM
layers and the attention products (MAC layers), and the post-processing layers the
post-processing unit runs: activations (ReLU, ReLU6, GELU), pooling, residual adds, softmax
and layer norms. As deployed inference does, a convolution's BatchNorm is folded into its
weights and bias, a linear layer's bias is the initial value of its accumulators (or added
with the requantisation on its output path), and the attention scale 1/sqrt(d) is folded
into the query projection's weights: none is a layer here. Dropout is the identity at
inference. Not modelled: AlexNet's local response normalisation, ViT's class token and
position embedding (a concatenation and an add of constants), and the embedding look-ups,
pooler and task heads of the transformers. Output sizes are computed from the input size
with each layer's real padding. ``batch`` maps to N of convolutions and to the ``batch`` of
GEMMs and attention products.

    net = load_zoo("resnet50", batch=4)
    net.macs, net.layer_count, net.unique_layers()
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field

from magnet.errors import MagnetError
from magnet.workload.dims import MAX_EXTENT
from magnet.workload.layer import (
    Layer,
    conv2d,
    fully_connected,
    gemm,
    matmul,
    pool,
    postprocess,
)
from magnet.workload.network import Network

_Entry = Layer | tuple[Layer, int]


# ---- helpers -------------------------------------------------------------------------------


def _check_int(name: str, value: object, *, low: int = 1, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise MagnetError(f"must be an integer >= {low}, got {value!r}", field=name)
    if high is not None and value > high:
        raise MagnetError(f"must be <= {high} (the model's limit), got {value}", field=name)
    if value > MAX_EXTENT:  # a layer's extent is at most that
        raise MagnetError(f"must be <= {MAX_EXTENT} (2**31 - 1), got {value}", field=name)
    return value


def _out_size(size: int, kernel: int, stride: int, padding: int) -> int:
    return (size + 2 * padding - kernel) // stride + 1


@dataclass
class _Stack:
    """A sequential CNN: tracks the current feature map (channels, square size) and which
    layer made it (``sources``), and each layer's producers (``Network.producers``)."""

    batch: int
    channels: int
    size: int
    layers: list[_Entry] = field(default_factory=list)
    sources: tuple[str, ...] = ()
    producers: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def append(self, layer: Layer, inputs: tuple[str, ...] | None = None) -> None:
        """``layer`` reading ``inputs`` (default: the current feature map); it makes the
        feature map."""
        self.layers.append(layer)
        self.producers[layer.name] = self.sources if inputs is None else inputs
        self.sources = (layer.name,)

    def conv(
        self,
        name: str,
        out: int,
        kernel: int,
        stride: int = 1,
        padding: int = 0,
        groups: int = 1,
        act: str | None = "relu",
    ) -> None:
        """A conv on the main path (its BatchNorm folded in), then its activation ``act``
        (None: none): the feature map becomes its output."""
        layer, self.channels, self.size = self._conv(
            name, self.channels, self.size, out, kernel, stride, padding, groups
        )
        self.append(layer)
        if act is not None:
            self.activation(f"{name}.{act}", act)

    def activation(self, name: str, op: str) -> None:
        """An activation (``relu``, ``relu6``...) of the feature map."""
        self.append(self._elementwise(name, "activation", op))

    def side_conv(
        self,
        name: str,
        channels: int,
        size: int,
        out: int,
        stride: int,
        sources: tuple[str, ...],
        padding: int = 0,
    ) -> None:
        """A 1x1 conv off the main path (a projection shortcut, reading the feature map of
        ``sources``) that must meet its output; the main path is unchanged."""
        main = self.sources
        layer, *shape = self._conv(name, channels, size, out, 1, stride, padding, 1)
        if tuple(shape) != (self.channels, self.size):  # pragma: no cover - guards the tables
            raise AssertionError(f"{name} gives {shape}, main path {self.channels, self.size}")
        self.append(layer, sources)
        self.sources = main

    def add(self, name: str, shortcut: tuple[str, ...]) -> None:
        """A residual add of the main path and ``shortcut``'s feature map."""
        self.append(self._elementwise(name, "eltwise", "add"), (*self.sources, *shortcut))

    def network(self, name: str) -> Network:
        """The layers so far as a network called ``name``, with their producers."""
        return Network.of(name, self.layers).model_copy(update={"producers": self.producers})

    def pool(self, name: str, op: str, kernel: int, stride: int, padding: int = 0) -> None:
        """A pooling layer (``max`` or ``avg``) of the feature map."""
        out = _out_size(self.size, kernel, stride, padding)
        self.append(
            pool(
                name,
                op=op,
                channels=self.channels,
                out_height=out,
                out_width=out,
                kernel=kernel,
                stride=stride,
                batch=self.batch,
            )
        )
        self.size = out

    def global_pool(self, name: str) -> None:
        """A global average pool: the whole feature map to one value per channel."""
        self.pool(name, "avg", self.size, 1)

    def fc(self, name: str, out: int, act: str | None = None) -> None:
        """A fully connected layer over the whole (flattened) feature map, then ``act``."""
        features = self.channels * self.size * self.size
        self.append(fully_connected(name, in_features=features, out_features=out, batch=self.batch))
        self.channels, self.size = out, 1
        if act is not None:
            self.activation(f"{name}.{act}", act)

    def _elementwise(self, name: str, kind: str, op: str) -> Layer:
        """A post-processing layer over the current feature map."""
        size = self.size
        return postprocess(
            name,
            kind=kind,
            op=op,
            channels=self.channels,
            height=size,
            width=size,
            batch=self.batch,
        )

    def _conv(
        self,
        name: str,
        channels: int,
        size: int,
        out: int,
        kernel: int,
        stride: int,
        padding: int,
        groups: int,
    ) -> tuple[Layer, int, int]:
        out_size = _out_size(size, kernel, stride, padding)
        layer = conv2d(
            name,
            in_channels=channels,
            out_channels=out,
            out_height=out_size,
            out_width=out_size,
            kernel=kernel,
            stride=stride,
            groups=groups,
            batch=self.batch,
        )
        return layer, out, out_size


@dataclass
class _Tokens:
    """A transformer's layers so far, the graph between them, and the layer whose output is
    the current hidden state (``last``; empty: the network's input)."""

    batch: int
    layers: list[_Entry] = field(default_factory=list)
    producers: dict[str, tuple[str, ...]] = field(default_factory=dict)
    last: tuple[str, ...] = ()

    def append(self, entry: _Entry, inputs: tuple[str, ...] | None = None) -> str:
        """``entry`` reading ``inputs`` (default: the hidden state); it makes the hidden
        state. Returns its name."""
        layer = entry[0] if isinstance(entry, tuple) else entry
        self.layers.append(entry)
        self.producers[layer.name] = self.last if inputs is None else inputs
        self.last = (layer.name,)
        return layer.name

    def rows(self, name: str, kind: str, op: str, tokens: int, width: int, groups: int = 1) -> str:
        """A post-processing layer over ``tokens`` rows of ``width`` (x ``groups``)."""
        layer = postprocess(
            name, kind=kind, op=op, channels=width, width=tokens, groups=groups, batch=self.batch
        )
        return self.append(layer)

    def network(self, name: str) -> Network:
        """The layers so far as a network called ``name``, with their producers."""
        return Network.of(name, self.layers).model_copy(update={"producers": self.producers})


def _transformer_block(
    t: _Tokens,
    prefix: str,
    *,
    tokens: int,
    kv_len: int,
    d_model: int,
    heads: int,
    d_ff: int,
    pre_norm: bool,
) -> None:
    """One encoder/decoder block: Q, K, V projections (x3), Q.K^T, softmax, A.V, output
    projection, residual add, MLP up, GELU, MLP down, residual add, and its two layer norms:
    after each add (post-norm, BERT) or before each half (pre-norm, GPT-2 and ViT)."""
    head_dim, batch = d_model // heads, t.batch
    x = t.last
    if pre_norm:
        t.rows(f"{prefix}.ln_1", "norm", "layernorm", tokens, d_model)
    t.append((gemm(f"{prefix}.attn.qkv", m=tokens, k=d_model, n=d_model, batch=batch), 3))
    t.append(matmul(f"{prefix}.attn.qk", m=tokens, k=head_dim, n=kv_len, heads=heads, batch=batch))
    t.rows(f"{prefix}.attn.softmax", "softmax", "softmax", tokens, kv_len, heads)
    t.append(matmul(f"{prefix}.attn.av", m=tokens, k=kv_len, n=head_dim, heads=heads, batch=batch))
    t.append(gemm(f"{prefix}.attn.out", m=tokens, k=d_model, n=d_model, batch=batch))
    add = postprocess(
        f"{prefix}.attn.add", kind="eltwise", op="add", channels=d_model, width=tokens, batch=batch
    )
    t.append(add, (*t.last, *x))
    if not pre_norm:
        t.rows(f"{prefix}.ln_1", "norm", "layernorm", tokens, d_model)
    x = t.last
    if pre_norm:
        t.rows(f"{prefix}.ln_2", "norm", "layernorm", tokens, d_model)
    t.append(gemm(f"{prefix}.mlp.up", m=tokens, k=d_model, n=d_ff, batch=batch))
    t.rows(f"{prefix}.mlp.gelu", "activation", "gelu", tokens, d_ff)
    t.append(gemm(f"{prefix}.mlp.down", m=tokens, k=d_ff, n=d_model, batch=batch))
    add = postprocess(
        f"{prefix}.mlp.add", kind="eltwise", op="add", channels=d_model, width=tokens, batch=batch
    )
    t.append(add, (*t.last, *x))
    if not pre_norm:
        t.rows(f"{prefix}.ln_2", "norm", "layernorm", tokens, d_model)


def _encoder_stack(t: _Tokens, prefix: str, depth: int, **block: int) -> None:
    for i in range(depth):
        _transformer_block(t, f"{prefix}.{i}", **block)  # type: ignore[arg-type]


# ---- CNNs ----------------------------------------------------------------------------------


def alexnet(batch: int = 1) -> Network:
    """AlexNet as in Krizhevsky et al. 2012 (and Caffe's bvlc_alexnet, Eyeriss, SCALE-Sim).

    227x227 input; 96/256/384/384/256 channels, 2 groups in conv2, conv4 and conv5 (the two
    GPU halves); fc6-fc8. Not torchvision's single-tower "one weird trick" variant (64/192/...).
    """
    s = _Stack(_check_int("batch", batch), channels=3, size=227)
    s.conv("conv1", 96, 11, stride=4)  # 55x55
    s.pool("pool1", "max", 3, 2)  # 27
    s.conv("conv2", 256, 5, padding=2, groups=2)
    s.pool("pool2", "max", 3, 2)  # 13
    s.conv("conv3", 384, 3, padding=1)
    s.conv("conv4", 384, 3, padding=1, groups=2)
    s.conv("conv5", 256, 3, padding=1, groups=2)
    s.pool("pool5", "max", 3, 2)  # 6
    s.fc("fc6", 4096, act="relu")
    s.fc("fc7", 4096, act="relu")
    s.fc("fc8", 1000)
    return s.network("alexnet")


def vgg16(batch: int = 1) -> Network:
    """VGG-16 (Simonyan & Zisserman 2015, configuration D), 224x224: 13 3x3 convs, 3 FCs."""
    s = _Stack(_check_int("batch", batch), channels=3, size=224)
    for stage, (width, convs) in enumerate(((64, 2), (128, 2), (256, 3), (512, 3), (512, 3)), 1):
        for i in range(1, convs + 1):
            s.conv(f"conv{stage}_{i}", width, 3, padding=1)
        s.pool(f"pool{stage}", "max", 2, 2)
    s.fc("fc6", 4096, act="relu")
    s.fc("fc7", 4096, act="relu")
    s.fc("fc8", 1000)
    return s.network("vgg16")


def _resnet_stem(batch: int) -> _Stack:
    s = _Stack(_check_int("batch", batch), channels=3, size=224)
    s.conv("conv1", 64, 7, stride=2, padding=3)  # 112x112
    s.pool("maxpool", "max", 3, 2, padding=1)  # 56x56
    return s


def _shortcut(
    s: _Stack, prefix: str, block_in: tuple[int, int, tuple[str, ...]], stride: int
) -> None:
    """The residual add of a block whose input was ``block_in`` (channels, size, sources):
    the identity, or a projection when the shape changes; then the block's ReLU."""
    channels, size, sources = block_in
    if stride != 1 or channels != s.channels:
        name = f"{prefix}.downsample.0"
        s.side_conv(name, channels, size, s.channels, stride, sources)
        sources = (name,)
    s.add(f"{prefix}.add", sources)
    s.activation(f"{prefix}.relu", "relu")


def _basic_block(s: _Stack, prefix: str, width: int, stride: int) -> None:
    block_in = (s.channels, s.size, s.sources)
    s.conv(f"{prefix}.conv1", width, 3, stride=stride, padding=1)
    s.conv(f"{prefix}.conv2", width, 3, padding=1, act=None)
    _shortcut(s, prefix, block_in, stride)


def _bottleneck(s: _Stack, prefix: str, width: int, stride: int) -> None:
    """torchvision's ResNet v1.5 bottleneck: the stride sits in the 3x3 conv2."""
    block_in = (s.channels, s.size, s.sources)
    s.conv(f"{prefix}.conv1", width, 1)
    s.conv(f"{prefix}.conv2", width, 3, stride=stride, padding=1)
    s.conv(f"{prefix}.conv3", width * 4, 1, act=None)
    _shortcut(s, prefix, block_in, stride)


def _resnet(name: str, block: Callable[..., None], depths: tuple[int, ...], batch: int) -> Network:
    s = _resnet_stem(batch)
    for stage, depth in enumerate(depths):
        for i in range(depth):
            stride = 2 if stage > 0 and i == 0 else 1
            block(s, f"layer{stage + 1}.{i}", 64 * 2**stage, stride)
    s.global_pool("avgpool")
    s.fc("fc", 1000)
    return s.network(name)


def resnet18(batch: int = 1) -> Network:
    """ResNet-18 (He et al. 2016; torchvision), 224x224, basic blocks [2, 2, 2, 2]."""
    return _resnet("resnet18", _basic_block, (2, 2, 2, 2), batch)


def resnet50(batch: int = 1) -> Network:
    """ResNet-50 v1.5 (torchvision), 224x224, bottlenecks [3, 4, 6, 3], stride in conv2."""
    return _resnet("resnet50", _bottleneck, (3, 4, 6, 3), batch)


# (expansion t, output channels c, repeats n, first stride s): Sandler et al. 2018, Table 2
_MOBILENETV2 = (
    (1, 16, 1, 1),
    (6, 24, 2, 2),
    (6, 32, 3, 2),
    (6, 64, 4, 2),
    (6, 96, 3, 1),
    (6, 160, 3, 2),
    (6, 320, 1, 1),
)


def _inverted_residual(s: _Stack, prefix: str, out: int, expand: int, stride: int) -> None:
    hidden, block_in = s.channels * expand, (s.channels, s.sources)
    if expand != 1:
        s.conv(f"{prefix}.expand", hidden, 1, act="relu6")
    s.conv(f"{prefix}.dw", hidden, 3, stride=stride, padding=1, groups=hidden, act="relu6")
    s.conv(f"{prefix}.project", out, 1, act=None)  # the linear bottleneck
    if stride == 1 and block_in[0] == out:  # torchvision: use_res_connect
        s.add(f"{prefix}.add", block_in[1])


def mobilenetv2(batch: int = 1) -> Network:
    """MobileNetV2 1.0 (Sandler et al. 2018; torchvision), 224x224.

    Names follow torchvision's ``features`` index: ``features.0.conv`` (3x3/2, 32),
    ``features.1``..``features.17`` inverted residuals (``expand`` 1x1, ``dw`` 3x3 depthwise,
    ``project`` 1x1, linear: no activation), ``features.18.conv`` (1x1, 1280), ``classifier``;
    every other convolution followed by a ReLU6.
    """
    s = _Stack(_check_int("batch", batch), channels=3, size=224)
    s.conv("features.0.conv", 32, 3, stride=2, padding=1, act="relu6")
    index = 1
    for expand, out, repeats, stride in _MOBILENETV2:
        for i in range(repeats):
            _inverted_residual(s, f"features.{index}", out, expand, stride if i == 0 else 1)
            index += 1
    s.conv(f"features.{index}.conv", 1280, 1, act="relu6")
    s.global_pool("avgpool")
    s.fc("classifier", 1000)
    return s.network("mobilenetv2")


# ---- transformers --------------------------------------------------------------------------


def bert_base(batch: int = 1, seq_len: int = 128) -> Network:
    """BERT-base encoder stack (Devlin et al. 2019): 12 blocks, d=768, 12 heads, FFN 3072.

    Post-norm: a layer norm after each residual add. Embedding look-ups, the pooler and task
    heads are not included.
    """
    batch = _check_int("batch", batch)
    seq_len = _check_int("seq_len", seq_len, high=512)
    t = _Tokens(batch)
    block = dict(tokens=seq_len, kv_len=seq_len, d_model=768, heads=12, d_ff=3072)
    _encoder_stack(t, "encoder", 12, pre_norm=False, **block)
    return t.network("bert-base")


_GPT2_MODES = ("prefill", "decode")


def gpt2_small(
    batch: int = 1, mode: str = "prefill", seq_len: int = 128, kv_len: int | None = None
) -> Network:
    """GPT-2 small (Radford et al. 2019): 12 decoder blocks, d=768, 12 heads, MLP 3072.

    ``prefill``: ``seq_len`` tokens attend to ``seq_len`` tokens (Q.K^T counted dense: the
    causal mask does not skip work); ``kv_len`` must be left unset or equal ``seq_len``.
    ``decode``: one new token attends to ``kv_len`` cached positions (default ``seq_len``),
    i.e. ``kv_len`` counts the KV cache including the new token's own entry.
    The LM head IS included: a 768 x 50257 GEMM (tied to the token embedding) applied to
    every token processed, ``seq_len`` rows in prefill (as ``GPT2LMHeadModel`` computes
    logits for every position) and 1 row in decode. Pre-norm, and a final layer norm before
    the LM head; GELU (GPT-2's tanh approximation) is priced as any GELU.
    """
    batch = _check_int("batch", batch)
    seq_len = _check_int("seq_len", seq_len, high=1024)
    if mode not in _GPT2_MODES:
        raise MagnetError(f"unknown mode {mode!r}; allowed: {', '.join(_GPT2_MODES)}", field="mode")
    if mode == "prefill":
        if kv_len is not None and kv_len != seq_len:
            raise MagnetError(
                f"prefill attends seq_len={seq_len} tokens to each other; kv_len={kv_len} "
                "applies to mode='decode' only",
                field="kv_len",
            )
        tokens, kv = seq_len, seq_len
    else:
        tokens, kv = 1, _check_int("kv_len", seq_len if kv_len is None else kv_len, high=1024)
    t = _Tokens(batch)
    block = dict(tokens=tokens, kv_len=kv, d_model=768, heads=12, d_ff=3072)
    _encoder_stack(t, "decoder", 12, pre_norm=True, **block)
    t.rows("ln_f", "norm", "layernorm", tokens, 768)
    t.append(gemm("lm_head", m=tokens, k=768, n=50257, batch=batch))
    return t.network("gpt2-small")


def vit_b16(batch: int = 1) -> Network:
    """ViT-B/16 (Dosovitskiy et al. 2021; torchvision), 224x224.

    Patch embedding as a 16x16 stride-16 conv (3 -> 768, 14x14 = 196 patches), 197 tokens
    with the class token, 12 pre-norm blocks (d=768, 12 heads, MLP 3072), the encoder's final
    layer norm, classifier head on the class token (768 -> 1000).
    """
    batch = _check_int("batch", batch)
    s = _Stack(batch, channels=3, size=224)
    s.conv("conv_proj", 768, 16, stride=16, act=None)
    tokens = s.size * s.size + 1
    t = _Tokens(batch, layers=list(s.layers), producers=dict(s.producers), last=s.sources)
    block = dict(tokens=tokens, kv_len=tokens, d_model=768, heads=12, d_ff=3072)
    _encoder_stack(t, "encoder", 12, pre_norm=True, **block)
    t.rows("encoder.ln", "norm", "layernorm", tokens, 768)
    t.append(fully_connected("head", in_features=768, out_features=1000, batch=batch))
    return t.network("vit-b16")


# ---- registry ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ZooEntry:
    """A zoo network: its builder, a one-line description, the parameters it accepts."""

    build: Callable[..., Network]
    description: str
    parameters: tuple[str, ...]


def _entry(build: Callable[..., Network], description: str) -> ZooEntry:
    return ZooEntry(build, description, tuple(inspect.signature(build).parameters))


ZOO: dict[str, ZooEntry] = {
    "alexnet": _entry(alexnet, "AlexNet (Krizhevsky 2012, 2-group conv2/4/5), 227x227"),
    "vgg16": _entry(vgg16, "VGG-16 (configuration D), 224x224"),
    "resnet18": _entry(resnet18, "ResNet-18 (torchvision), 224x224"),
    "resnet50": _entry(resnet50, "ResNet-50 v1.5 (torchvision, stride in the 3x3), 224x224"),
    "mobilenetv2": _entry(mobilenetv2, "MobileNetV2 1.0 (torchvision), 224x224"),
    "bert-base": _entry(bert_base, "BERT-base encoder, 12 blocks, d=768, 12 heads"),
    "gpt2-small": _entry(gpt2_small, "GPT-2 small, 12 blocks + LM head, prefill or decode"),
    "vit-b16": _entry(vit_b16, "ViT-B/16, 224x224, 197 tokens, classifier head"),
}


def load_zoo(name: str, **params: object) -> Network:
    """Build a zoo network by name, e.g. ``load_zoo("gpt2-small", mode="decode", kv_len=512)``."""
    entry = ZOO.get(name)
    if entry is None:
        raise MagnetError(f"unknown network {name!r}; allowed: {', '.join(ZOO)}", field="name")
    unknown = sorted(set(params) - set(entry.parameters))
    if unknown:
        raise MagnetError(
            f"{name} does not take {', '.join(unknown)}; allowed: {', '.join(entry.parameters)}",
            field="params",
        )
    return entry.build(**params)
