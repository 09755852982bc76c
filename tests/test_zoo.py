"""Model zoo: total MACs against published counts, exact layer shapes, load_zoo errors.

Published numbers (all multiply-accumulates at batch 1; torchvision's "GFLOPS" column on each
model's documentation page counts one multiply-add as one operation, e.g.
https://pytorch.org/vision/stable/models/generated/torchvision.models.resnet50.html):
torchvision (IMAGENET1K_V1): resnet50 4.09, resnet18 1.81, vgg16 15.47, mobilenet_v2 0.30,
vit_b_16 17.56. Tolerance: half a unit of the last published digit.
"""

from __future__ import annotations

import re

import pytest

from magnet.errors import MagnetError
from magnet.workload.layer import Layer
from magnet.workload.network import Network
from magnet.workload.zoo import ZOO, load_zoo


def layer(net: Network, name: str) -> Layer:
    return next(entry.layer for entry in net if entry.layer.name == name)


# (zoo name, published GMACs, tolerance GMACs, source)
PUBLISHED = [
    ("resnet50", 4.09, 0.005, "torchvision resnet50 docs, GFLOPS 4.09"),
    ("resnet18", 1.81, 0.005, "torchvision resnet18 docs, GFLOPS 1.81"),
    ("vgg16", 15.47, 0.005, "torchvision vgg16 docs, GFLOPS 15.47"),
    ("mobilenetv2", 0.30, 0.005, "torchvision mobilenet_v2 docs 0.30; Sandler et al. 2018: 300M"),
    ("alexnet", 0.724, 0.0005, "Sze et al. 2017 (Proc. IEEE tutorial), AlexNet: 724M MACs"),
    ("vit-b16", 17.56, 0.005, "torchvision vit_b_16 docs 17.56; DeiT-B (Touvron 2021) 17.6"),
    # Derived (no single published count): 12 x (4 x 128 x 768 x 768 [Q, K, V, O]
    # + 2 x 12 x 128 x 64 x 128 [Q.K^T, A.V] + 2 x 128 x 768 x 3072 [MLP]) = 11.17 G
    ("bert-base", 11.17, 0.005, "derived by hand, see test_transformer_macs_by_hand"),
]


@pytest.mark.parametrize(("name", "gmacs", "tol", "source"), PUBLISHED)
def test_total_macs_match_published(name: str, gmacs: float, tol: float, source: str) -> None:
    assert load_zoo(name).macs / 1e9 == pytest.approx(gmacs, abs=tol), source


def test_alexnet_macs_by_hand() -> None:
    # Krizhevsky 2012 / Sze et al. 2017 layer table, per-group channels:
    # conv1 55^2*96*3*11^2 = 105,415,200     conv2 27^2*256*48*5^2 = 223,948,800
    # conv3 13^2*384*256*9 = 149,520,384     conv4 13^2*384*192*9 = 112,140,288
    # conv5 13^2*256*192*9 =  74,760,192     fc6 9216*4096 = 37,748,736
    # fc7 4096*4096 = 16,777,216             fc8 4096*1000 = 4,096,000     total 724,406,816
    net = load_zoo("alexnet")
    assert net.macs == 724_406_816
    conv2 = layer(net, "conv2")  # SCALE-Sim table (tests/data/reference/README.md): C=48 per group
    assert (conv2.G, conv2.K, conv2.C, conv2.P, conv2.R) == (2, 128, 48, 27, 5)
    macs = [e.layer.name for e in net if not e.layer.is_postprocess]
    assert macs == [*(f"conv{i}" for i in range(1, 6)), "fc6", "fc7", "fc8"]


def test_transformer_macs_by_hand() -> None:
    d, ff, h, dh = 768, 3072, 12, 64
    # BERT-base, 128 tokens: per block 4*128*768^2 = 301,989,888 (Q, K, V, O)
    # + 2*12*128*64*128 = 25,165,824 (Q.K^T, A.V) + 2*128*768*3072 = 603,979,776 (MLP)
    # = 931,135,488; x 12 = 11,173,625,856
    block = 4 * 128 * d * d + 2 * h * 128 * dh * 128 + 2 * 128 * d * ff
    assert block == 931_135_488
    assert load_zoo("bert-base").macs == 12 * block == 11_173_625_856
    # GPT-2 small prefill, 128 tokens: the same 12 blocks + LM head 128*768*50257
    # = 4,940,464,128 -> 16,114,089,984
    assert load_zoo("gpt2-small").macs == 12 * block + 128 * d * 50257 == 16_114_089_984
    # GPT-2 small decode, 1 token against kv_len = 128: per block 4*768^2 = 2,359,296
    # + 2*12*64*128 = 196,608 + 2*768*3072 = 4,718,592 -> 7,274,496; x 12 = 87,293,952;
    # + LM head 768*50257 = 38,597,376 -> 125,891,328
    decode = load_zoo("gpt2-small", mode="decode", kv_len=128)
    assert decode.macs == 12 * 7_274_496 + 38_597_376 == 125_891_328
    # decode at kv_len 1024: only Q.K^T and A.V grow, by 12 blocks * 2 * 12 * 64 * (1024-128)
    longer = load_zoo("gpt2-small", mode="decode", kv_len=1024)
    assert longer.macs - decode.macs == 12 * 2 * h * dh * (1024 - 128)
    # ViT-B/16: patch conv 196*768*3*16^2 = 115,605,504; 12 blocks at 197 tokens
    # (4*197*768^2 + 2*12*197*64*197 + 2*197*768*3072 = 1,453,954,560); head 768*1000
    vit_block = 4 * 197 * d * d + 2 * h * 197 * dh * 197 + 2 * 197 * d * ff
    assert load_zoo("vit-b16").macs == 115_605_504 + 12 * vit_block + 768_000 == 17_563_828_224


@pytest.mark.parametrize("name", list(ZOO))
def test_batch_scales_macs_linearly(name: str) -> None:
    one = load_zoo(name)
    four = load_zoo(name, batch=4)
    assert four.macs == 4 * one.macs
    assert four.layer_count == one.layer_count
    assert len({entry.layer.name for entry in one}) == len(one)  # names unique (also validated)


def test_resnet50_shapes() -> None:
    net = load_zoo("resnet50")
    conv1 = layer(net, "conv1")  # 7x7/2, padding 3: 224 -> 112
    assert (conv1.K, conv1.C, conv1.P, conv1.Q, conv1.R, conv1.S) == (64, 3, 112, 112, 7, 7)
    assert (conv1.wstride, conv1.hstride) == (2, 2)
    # first projection shortcut: layer1.0 widens 64 -> 256 at 56x56, stride 1
    ds1 = layer(net, "layer1.0.downsample.0")
    assert (ds1.K, ds1.C, ds1.P, ds1.R, ds1.wstride) == (256, 64, 56, 1, 1)
    # first strided one: 256 -> 512, 1x1 stride 2, 56 -> 28
    ds2 = layer(net, "layer2.0.downsample.0")
    assert (ds2.K, ds2.C, ds2.P, ds2.Q, ds2.R, ds2.wstride, ds2.hstride) == (
        512,
        256,
        28,
        28,
        1,
        2,
        2,
    )
    # v1.5: the stride is in the 3x3 conv2, conv1 (1x1) runs at the input resolution
    assert (layer(net, "layer2.0.conv1").P, layer(net, "layer2.0.conv1").wstride) == (56, 1)
    assert (layer(net, "layer2.0.conv2").P, layer(net, "layer2.0.conv2").wstride) == (28, 2)
    assert sum(e.layer.name.endswith("downsample.0") for e in net) == 4
    fc = layer(net, "fc")
    assert (fc.kind, fc.K, fc.C) == ("fc", 1000, 2048)
    # 53 convs + fc; identical shapes repeat across blocks: 24 distinct loop nests
    # (conv1, 4 in layer1 (its downsample equals conv3), 6 in each of layers 2-4, fc);
    # and 49 ReLUs, 16 residual adds, 2 pools: 121 layers (tests/test_postprocess.py)
    assert net.layer_count == 121
    assert len(net.unique_layers(mapped=True)) == 24


def test_mobilenetv2_shapes() -> None:
    net = load_zoo("mobilenetv2")
    stem = layer(net, "features.0.conv")
    assert (stem.K, stem.C, stem.P, stem.wstride) == (32, 3, 112, 2)
    # features.2: expansion 6 (16 -> 96), depthwise 3x3 stride 2 (112 -> 56), project -> 24
    expand = layer(net, "features.2.expand")
    assert (expand.K, expand.C, expand.P, expand.R) == (96, 16, 112, 1)
    dw = layer(net, "features.2.dw")
    assert (dw.kind, dw.G, dw.K, dw.C, dw.P, dw.Q, dw.R, dw.S) == (
        "depthwise",
        96,
        1,
        1,
        56,
        56,
        3,
        3,
    )
    assert (dw.wstride, dw.hstride, dw.input_width) == (2, 2, 113)
    project = layer(net, "features.2.project")
    assert (project.K, project.C, project.P) == (24, 96, 56)
    # features.1 has expansion 1: no expand layer
    assert not any(e.layer.name == "features.1.expand" for e in net)
    last = layer(net, "features.18.conv")
    assert (last.K, last.C, last.P) == (1280, 320, 7)
    assert (layer(net, "classifier").K, layer(net, "classifier").C) == (1000, 1280)
    assert sum(e.layer.kind == "depthwise" for e in net) == 17


def test_bert_attention_shapes() -> None:
    net = load_zoo("bert-base", seq_len=128)
    qk = layer(net, "encoder.5.attn.qk")
    assert (qk.kind, qk.G, qk.P, qk.C, qk.K) == ("matmul", 12, 128, 64, 128)
    av = layer(net, "encoder.5.attn.av")
    assert (av.kind, av.G, av.P, av.C, av.K) == ("matmul", 12, 128, 128, 64)
    qkv = next(e for e in net if e.layer.name == "encoder.5.attn.qkv")
    assert (qkv.repeat, qkv.layer.kind, qkv.layer.P, qkv.layer.C, qkv.layer.K) == (
        3,
        "fc",
        128,
        768,
        768,
    )
    up = layer(net, "encoder.11.mlp.up")
    assert (up.P, up.C, up.K) == (128, 768, 3072)
    # Q, K, V, O, QK^T, AV, up, down; softmax, GELU, 2 residual adds, 2 layer norms
    assert net.layer_count == 12 * (8 + 6)


def test_gpt2_decode_shapes() -> None:
    net = load_zoo("gpt2-small", mode="decode", kv_len=300, batch=2)
    qk = layer(net, "decoder.0.attn.qk")
    assert (qk.N, qk.G, qk.P, qk.C, qk.K) == (2, 12, 1, 64, 300)
    head = layer(net, "lm_head")
    assert (head.N, head.P, head.C, head.K) == (2, 1, 768, 50257)
    # kv_len defaults to seq_len in decode
    assert load_zoo("gpt2-small", mode="decode", seq_len=300, batch=2) == net


def test_vit_shapes() -> None:
    net = load_zoo("vit-b16")
    patch = layer(net, "conv_proj")
    assert (patch.K, patch.C, patch.P, patch.R, patch.wstride) == (768, 3, 14, 16, 16)
    assert layer(net, "encoder.0.attn.qk").P == 197  # 196 patches + class token
    head = layer(net, "head")
    assert (head.P, head.C, head.K) == (1, 768, 1000)


def test_registry_lists_parameters() -> None:
    assert list(ZOO) == [
        "alexnet",
        "vgg16",
        "resnet18",
        "resnet50",
        "mobilenetv2",
        "bert-base",
        "gpt2-small",
        "vit-b16",
    ]
    assert ZOO["gpt2-small"].parameters == ("batch", "mode", "seq_len", "kv_len")
    assert all("batch" in entry.parameters and entry.description for entry in ZOO.values())


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("resnet-50", {}, "unknown network 'resnet-50'; allowed: alexnet, vgg16"),
        ("resnet50", {"seq_len": 64}, "resnet50 does not take seq_len; allowed: batch"),
        ("resnet50", {"batch": 0}, "batch: must be an integer >= 1, got 0"),
        ("vgg16", {"batch": 1.5}, "batch: must be an integer >= 1"),
        ("gpt2-small", {"mode": "x"}, "unknown mode 'x'; allowed: prefill, decode"),
        ("gpt2-small", {"kv_len": 64}, "applies to mode='decode' only"),
        ("gpt2-small", {"mode": "decode", "kv_len": 2048}, "kv_len: must be <= 1024"),
        ("bert-base", {"seq_len": 513}, "seq_len: must be <= 512"),
    ],
)
def test_load_zoo_errors(name: str, params: dict, message: str) -> None:
    with pytest.raises(MagnetError, match=re.escape(message)):
        load_zoo(name, **params)
