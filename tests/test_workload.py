"""Layers: shapes, MACs, operand sizes, constructors (numbers worked out by hand)."""

from __future__ import annotations

import pytest

import magnet as mg
from magnet.errors import MagnetError
from magnet.workload.dims import Operand


def test_conv2d_shape_and_counts() -> None:
    # ResNet-50 conv1: 3 -> 64 channels, 7x7, stride 2, 112x112 outputs.
    layer = mg.conv2d(
        "conv1", in_channels=3, out_channels=64, out_height=112, out_width=112, kernel=7, stride=2
    )
    # MACs = 64 * 3 * 112 * 112 * 7 * 7 = 118,013,952
    assert layer.macs == 118_013_952
    # input window: 2 * (112 - 1) + 1 * (7 - 1) + 1 = 229 (the padded 224 + 2 * 3 minus the
    # one column the last stride skips)
    assert layer.input_width == 229 and layer.input_height == 229
    assert layer.operand_size(Operand.W) == 64 * 3 * 7 * 7  # 9,408
    assert layer.operand_size(Operand.I) == 3 * 229 * 229  # 157,323
    assert layer.operand_size(Operand.O) == 64 * 112 * 112  # 802,816
    assert layer.min_traffic_words == 9_408 + 157_323 + 802_816


def test_grouped_and_depthwise() -> None:
    grouped = mg.conv2d(
        "g", in_channels=64, out_channels=128, out_height=8, out_width=8, kernel=3, groups=4
    )
    # per group: K = 32, C = 16; MACs = 4 * 32 * 16 * 8 * 8 * 9 = 1,179,648
    assert (grouped.G, grouped.K, grouped.C) == (4, 32, 16)
    assert grouped.macs == 1_179_648
    dw = mg.depthwise_conv2d("dw", channels=32, out_height=56, out_width=56, kernel=3)
    # depthwise: G = 32 channels, K = C = 1; MACs = 32 * 56 * 56 * 9 = 903,168
    assert (dw.kind, dw.G, dw.K, dw.C) == ("depthwise", 32, 1, 1)
    assert dw.macs == 903_168
    with pytest.raises(MagnetError, match="divide by groups=3"):
        mg.conv2d("bad", in_channels=64, out_channels=64, out_height=1, out_width=1, groups=3)


def test_gemm_and_batched_matmul() -> None:
    # BERT-base Q projection at 128 tokens: (128 x 768) @ (768 x 768): 75,497,472 MACs
    q = mg.gemm("q_proj", m=128, k=768, n=768)
    assert q.macs == 128 * 768 * 768
    assert q.operand_size(Operand.W) == 768 * 768
    assert q.operand_size(Operand.I) == 128 * 768
    # attention scores: 12 heads of (128 x 64) @ (64 x 128); both operands are activations
    qk = mg.matmul("qk", m=128, k=64, n=128, heads=12)
    assert qk.kind == "matmul"
    assert qk.macs == 12 * 128 * 64 * 128  # 12,582,912
    assert qk.operand_size(Operand.W) == 12 * 64 * 128  # K^T per head
    assert qk.operand_size(Operand.O) == 12 * 128 * 128


def test_parse_layer_keys_and_defaults() -> None:
    layer = mg.parse_layer("K=64,C=64,P=56,Q=56,R=3,S=3,stride=2")
    assert layer.dims == (1, 1, 64, 64, 56, 56, 3, 3)
    assert (layer.wstride, layer.hstride) == (2, 2)
    assert mg.parse_layer("M=8").K == 8  # Timeloop's M is magnet's K
    with pytest.raises(MagnetError, match="unknown key 'Z'"):
        mg.parse_layer("Z=3")
    with pytest.raises(MagnetError, match="is not KEY=INTEGER"):
        mg.parse_layer("K:3")
    with pytest.raises(MagnetError, match="K must be >= 1, got -3"):
        mg.parse_layer("K=-3")


def test_identical_layers_share_a_shape_key() -> None:
    a = mg.parse_layer("K=64,C=64,P=56,Q=56,R=3,S=3", name="a")
    b = mg.parse_layer("K=64,C=64,P=56,Q=56,R=3,S=3", name="b")
    assert a.shape_key() == b.shape_key()
    assert a.shape_key() != mg.parse_layer("K=64,C=64,P=56,Q=56,R=3,S=3,stride=2").shape_key()
