"""Seeded int8 layer shapes from the model families users bring (not from our models alone).

    shapes("DEPTHWISE_CONV_2D", 200, seed=0) -> list[Shape]

Families: keyword spotting (depthwise of one input channel with multiplier > 1, DS-CNN),
streaming 1-D audio (convolutions as 2-D of height 1, depthwise 1-D), MobileNet V1/V2/V3 at 96
and 128 pixels, ResNet-8 and -18 style, autoencoders, and the gates of LSTM/SVDF (few-output
and gate-sized FULLY_CONNECTED). Each family draws its shapes from its own seeded generator,
the families in turn, so that the first n shapes of a list are a fair sample of all of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from tflite_builder import ModelBuilder

OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")


@dataclass(frozen=True)
class Shape:
    op: str
    family: str
    #: NHWC input (FULLY_CONNECTED: [batch, depth])
    input: tuple[int, ...]
    #: output channels (depthwise: input channels x multiplier), FC units
    out: int
    kernel: tuple[int, int] = (1, 1)
    stride: tuple[int, int] = (1, 1)
    padding: str = "SAME"
    multiplier: int = 1
    activation: str = "NONE"
    per_channel: bool = True
    seed: int = 0

    def output_hw(self) -> tuple[int, int]:
        _, h, w, _ = self.input
        if self.padding == "SAME":
            return -(-h // self.stride[0]), -(-w // self.stride[1])
        return (h - self.kernel[0]) // self.stride[0] + 1, (w - self.kernel[1]) // self.stride[1] + 1

    @property
    def macs(self) -> int:
        if self.op == "FULLY_CONNECTED":
            return self.input[0] * self.input[1] * self.out
        oh, ow = self.output_hw()
        per = self.kernel[0] * self.kernel[1] * (1 if self.op == "DEPTHWISE_CONV_2D" else self.input[3])
        return oh * ow * self.out * per

    @property
    def activation_bytes(self) -> int:
        if self.op == "FULLY_CONNECTED":
            return self.input[0] * (self.input[1] + self.out)
        oh, ow = self.output_hw()
        return int(np.prod(self.input)) + oh * ow * self.out

    @property
    def weight_bytes(self) -> int:
        if self.op == "FULLY_CONNECTED":
            return self.input[1] * self.out
        return self.kernel[0] * self.kernel[1] * self.out * (1 if self.op == "DEPTHWISE_CONV_2D" else self.input[3])

    def text(self) -> str:
        if self.op == "FULLY_CONNECTED":
            return f"[{self.input[0]},{self.input[1]}] -> {self.out}"
        k, s = f"{self.kernel[0]}x{self.kernel[1]}", f"s{self.stride[0]}x{self.stride[1]}"
        m = f" m{self.multiplier}" if self.op == "DEPTHWISE_CONV_2D" else ""
        return f"{list(self.input[1:])} {k} {s} {self.padding}{m} -> {self.out}"


def _pick(rng: np.random.Generator, values: Sequence[Any]) -> Any:
    return values[int(rng.integers(len(values)))]


def _act(rng: np.random.Generator) -> str:
    return _pick(rng, ["NONE", "RELU", "RELU", "RELU6"])


def _div8(v: float) -> int:
    """Keras' _make_divisible(v, 8): the channel counts of the MobileNets at a width multiplier."""
    n = max(8, int(v + 4) // 8 * 8)
    return n + 8 if n < 0.9 * v else n


#: one layer of a network: (op, input map, input channels, output channels, kernel, stride,
#: activation or None for the draw's own); depthwise: output channels = input channels
Layer = tuple[str, int, int, int, int, int, "str | None"]


@cache
def _mobilenet(version: int, res: int, alpha: float) -> tuple[Layer, ...]:
    """Every CONV_2D and DEPTHWISE_CONV_2D of MobileNet V1 / V2 / V3-Small / V3-Large (Keras'
    block tables; 4 = V3-Small, 3 = V3-Large) at ``res`` pixels and width ``alpha``, and the
    squeeze-excite 1x1 convolutions (on a 1x1 map) of V3. Activations: RELU6 (V1, V2), RELU or
    NONE (V3's hard-swish is an operator of its own)."""
    out: list[Layer] = []
    m = res // 2
    if version == 1:
        c = _div8(32 * alpha)
        out.append(("CONV_2D", res, 3, c, 3, 2, "RELU6"))
        for cout, s in [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), *[(512, 1)] * 5,
                        (1024, 2), (1024, 1)]:
            cout = _div8(cout * alpha)
            out.append(("DEPTHWISE_CONV_2D", m, c, c, 3, s, "RELU6"))
            m = -(-m // s)
            out.append(("CONV_2D", m, c, cout, 1, 1, "RELU6"))
            c = cout
        return tuple(out)
    if version == 2:
        c = _div8(32 * alpha)
        out.append(("CONV_2D", res, 3, c, 3, 2, "RELU6"))
        for t, cout, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                              (6, 160, 3, 2), (6, 320, 1, 1)]:
            cout = _div8(cout * alpha)
            for k in range(n):
                stride = s if k == 0 else 1
                e = c * t
                if t != 1:
                    out.append(("CONV_2D", m, c, e, 1, 1, "RELU6"))
                out.append(("DEPTHWISE_CONV_2D", m, e, e, 3, stride, "RELU6"))
                m = -(-m // stride)
                out.append(("CONV_2D", m, e, cout, 1, 1, "NONE"))
                c = cout
        out.append(("CONV_2D", m, c, 1280 if alpha <= 1.0 else _div8(1280 * alpha), 1, 1, "RELU6"))
        return tuple(out)
    # V3: kernel, expansion, output, squeeze-excite, ReLU (else hard-swish), stride
    small = [(3, 16, 16, 1, 1, 2), (3, 72, 24, 0, 1, 2), (3, 88, 24, 0, 1, 1), (5, 96, 40, 1, 0, 2),
             (5, 240, 40, 1, 0, 1), (5, 240, 40, 1, 0, 1), (5, 120, 48, 1, 0, 1), (5, 144, 48, 1, 0, 1),
             (5, 288, 96, 1, 0, 2), (5, 576, 96, 1, 0, 1), (5, 576, 96, 1, 0, 1)]
    large = [(3, 16, 16, 0, 1, 1), (3, 64, 24, 0, 1, 2), (3, 72, 24, 0, 1, 1), (5, 72, 40, 1, 1, 2),
             (5, 120, 40, 1, 1, 1), (5, 120, 40, 1, 1, 1), (3, 240, 80, 0, 0, 2), (3, 200, 80, 0, 0, 1),
             (3, 184, 80, 0, 0, 1), (3, 184, 80, 0, 0, 1), (3, 480, 112, 1, 0, 1), (3, 672, 112, 1, 0, 1),
             (5, 672, 160, 1, 0, 2), (5, 960, 160, 1, 0, 1), (5, 960, 160, 1, 0, 1)]
    c = 16
    out.append(("CONV_2D", res, 3, c, 3, 2, "NONE"))
    for k, exp, cout, se, relu, s in small if version == 4 else large:
        e, cout = _div8(exp * alpha), _div8(cout * alpha)
        act = "RELU" if relu else "NONE"
        if e != c:
            out.append(("CONV_2D", m, c, e, 1, 1, act))
        out.append(("DEPTHWISE_CONV_2D", m, e, e, k, s, act))
        m = -(-m // s)
        if se:
            r = _div8(e / 4)
            out.append(("CONV_2D", 1, e, r, 1, 1, "RELU"))
            out.append(("CONV_2D", 1, r, e, 1, 1, "NONE"))
        out.append(("CONV_2D", m, e, cout, 1, 1, "NONE"))
        c = cout
    out.append(("CONV_2D", m, c, _div8(6 * c), 1, 1, "NONE"))
    return tuple(out)


@cache
def _resnet(depth: int, res: int, width: int) -> tuple[Layer, ...]:
    """The convolutions of ResNet-8 (MLPerf Tiny's image classifier: three stages of one basic
    block, ``width`` 16 at 32x32) and ResNet-18 style (four stages of two basic blocks, ``width``
    64, CIFAR-style stem): 3x3 stride 1 and 2, 1x1 stride-2 shortcuts."""
    out: list[Layer] = [("CONV_2D", res, 3, width, 3, 1, "RELU")]
    m, c = res, width
    stages = 3 if depth == 8 else 4
    for k in range(stages):
        cout = width << k
        for b in range(1 if depth == 8 else 2):
            s = 2 if k > 0 and b == 0 else 1
            out.append(("CONV_2D", m, c, cout, 3, s, "RELU"))
            if s == 2:
                out.append(("CONV_2D", m, c, cout, 1, 2, "NONE"))
            m = -(-m // s)
            out.append(("CONV_2D", m, cout, cout, 3, 1, "NONE"))
            c = cout
    return tuple(out)


@cache
def _network_layers(family: str, op: str) -> tuple[Layer, ...]:
    """The distinct layers of ``op`` in every network of ``family`` (each resolution and width),
    in a fixed order."""
    if family.startswith("mobilenet_v"):
        v = int(family[-1])
        alphas = {1: [0.25, 0.5, 0.75, 1.0], 2: [0.35, 0.5, 0.75, 1.0], 3: [0.75, 1.0]}[v]
        nets = [_mobilenet(version, res, alpha) for version in ([3, 4] if v == 3 else [v])
                for res in (96, 128) for alpha in alphas]
    elif family == "resnet8":
        nets = [_resnet(8, res, width) for res in (32, 48, 64) for width in (8, 16, 24, 32)]
    else:  # resnet18: maps of 32, 16, 8 and 4, 64-512 channels (at widths 64 and 32)
        nets = [_resnet(18, 32, width) for width in (32, 64)]
    return tuple(dict.fromkeys(x for net in nets for x in net if x[0] == op))


def _network_layer(rng: np.random.Generator, family: str, op: str) -> dict[str, Any] | None:
    """A layer of ``op`` drawn from the networks of ``family`` (None: they have none)."""
    layers = _network_layers(family, op)
    if not layers:
        return None
    _, m, cin, cout, k, s, act = _pick(rng, layers)
    d: dict[str, Any] = dict(input=(1, m, m, cin), out=cout, kernel=(k, k), stride=(s, s))
    if act is not None and rng.random() < 0.75:
        d["activation"] = act
    return d


def _dw(rng: np.random.Generator, family: str) -> dict[str, Any] | None:
    if family == "kws":
        # keyword spotting: one input channel (the spectrogram), multiplier > 1
        h, w = _pick(rng, [(49, 10), (49, 40), (98, 40), (32, 10), (40, 20), (25, 5), (61, 13), (124, 40)])
        mult = _pick(rng, [2, 3, 4, 8, 8, 16, 32, 64])
        k = _pick(rng, [(10, 8), (10, 4), (3, 3), (5, 5), (8, 8), (4, 10), (20, 8), (7, 3)])
        k = (min(k[0], h), min(k[1], w))
        return dict(input=(1, h, w, 1), out=mult, multiplier=mult, kernel=k,
                    stride=_pick(rng, [(1, 1), (2, 2), (2, 1), (1, 2)]), padding=_pick(rng, ["SAME", "VALID"]))
    if family == "kws_ds":
        # DS-CNN's depthwise layers and multiplier-2 and -4 variants
        c = _pick(rng, [16, 32, 64, 64, 128, 172, 276])
        mult = _pick(rng, [1, 1, 2, 4])
        return dict(input=(1, _pick(rng, [25, 13, 49]), _pick(rng, [5, 10, 20]), c), out=c * mult, multiplier=mult,
                    kernel=(3, 3), stride=_pick(rng, [(1, 1), (2, 2)]), padding=_pick(rng, ["SAME", "VALID"]))
    if family == "stream1d":
        # streaming audio: depthwise 1-D (height 1) over a window of frames
        c = _pick(rng, [8, 16, 24, 32, 48, 64, 96, 128])
        w = _pick(rng, [8, 16, 25, 32, 49, 64, 100])
        mult = _pick(rng, [1, 1, 1, 2, 4])
        k = _pick(rng, [3, 5, 7, 9, 15])
        return dict(input=(1, 1, w, c), out=c * mult, multiplier=mult, kernel=(1, min(k, w)),
                    stride=(1, _pick(rng, [1, 1, 2])), padding=_pick(rng, ["SAME", "VALID"]))
    if family.startswith("mobilenet"):
        return _network_layer(rng, family, "DEPTHWISE_CONV_2D")
    # misc: odd channel counts, 3x3 and 5x5
    c = _pick(rng, [1, 3, 5, 6, 12, 20, 36, 44])
    hw = _pick(rng, [4, 6, 8, 12, 16, 20])
    return dict(input=(1, hw, hw, c), out=c, kernel=_pick(rng, [(3, 3), (3, 3), (5, 5)]),
                stride=_pick(rng, [(1, 1), (2, 2)]), padding=_pick(rng, ["SAME", "VALID"]))


def _conv(rng: np.random.Generator, family: str) -> dict[str, Any] | None:
    if family == "kws":
        h, w = _pick(rng, [(49, 10), (49, 40), (98, 40), (32, 10), (61, 13)])
        k = _pick(rng, [(10, 4), (10, 8), (3, 3), (20, 8), (5, 5)])
        return dict(input=(1, h, w, 1), out=_pick(rng, [8, 16, 28, 32, 64]), kernel=(min(k[0], h), min(k[1], w)),
                    stride=_pick(rng, [(1, 1), (2, 2), (2, 1)]), padding=_pick(rng, ["SAME", "VALID"]))
    if family == "stream1d":
        # streaming audio: 1-D convolutions as 2-D of height 1
        cin = _pick(rng, [1, 8, 16, 24, 32, 40, 64, 96])
        w = _pick(rng, [8, 16, 25, 32, 49, 64, 100])
        k = _pick(rng, [1, 3, 3, 5, 7, 9])
        return dict(input=(1, 1, w, cin), out=_pick(rng, [8, 16, 24, 32, 48, 64, 96]), kernel=(1, min(k, w)),
                    stride=(1, _pick(rng, [1, 1, 2])), padding=_pick(rng, ["SAME", "VALID"]))
    if family.startswith(("mobilenet", "resnet")):
        return _network_layer(rng, family, "CONV_2D")
    # autoencoder (convolutional): small maps, odd channels
    hw = _pick(rng, [4, 8, 16, 32])
    return dict(input=(1, hw, hw, _pick(rng, [1, 3, 4, 8, 12, 16])), out=_pick(rng, [4, 8, 12, 16, 32]),
                kernel=_pick(rng, [(3, 3), (3, 3), (5, 5)]), stride=_pick(rng, [(1, 1), (2, 2)]))


def _fc(rng: np.random.Generator, family: str) -> dict[str, Any] | None:
    if family == "kws":  # the classifier: few outputs
        return dict(input=(1, _pick(rng, [64, 128, 144, 256, 400, 640, 1000, 2000])), out=_pick(rng, [2, 3, 4, 6, 10, 12]))
    if family == "stream1d":  # streaming classifiers and bottlenecks
        return dict(input=(1, _pick(rng, [32, 48, 64, 96, 128, 192])), out=_pick(rng, [2, 4, 8, 12, 16, 32, 64]))
    if family == "lstm":  # an LSTM's gates: [x, h] -> 4 x units (or x and h each -> 4 x units)
        units = _pick(rng, [8, 16, 20, 32, 48, 64, 100, 128])
        x = _pick(rng, [10, 13, 16, 20, 40, 64])
        return dict(input=(1, _pick(rng, [x + units, x, units])), out=4 * units)
    if family == "svdf":  # SVDF: features -> rank x units (its feature filter), the time filter's units
        units = _pick(rng, [16, 32, 64, 128, 256])
        return dict(input=(1, _pick(rng, [10, 20, 40, 64, 100])), out=_pick(rng, [1, 2]) * units)
    if family == "autoencoder":  # MLPerf Tiny AD and dense autoencoders
        dims = [8, 16, 32, 64, 128, 256, 320, 512, 640]
        return dict(input=(_pick(rng, [1, 1, 1, 5]), _pick(rng, dims)), out=_pick(rng, dims))
    # heads: MobileNet / ResNet classifiers, MobileNet V3's 1x1 head and squeeze-excite as FC
    return dict(input=(1, _pick(rng, [64, 96, 128, 256, 432, 576, 960, 1024, 1280])),
                out=_pick(rng, [2, 5, 10, 16, 24, 100, 144, 240, 1024]))


FAMILIES: dict[str, tuple[Callable[[np.random.Generator, str], dict[str, Any] | None], list[str]]] = {
    "DEPTHWISE_CONV_2D": (_dw, ["kws", "kws_ds", "stream1d", "mobilenet_v1", "mobilenet_v2", "mobilenet_v3",
                                "misc"]),
    "CONV_2D": (_conv, ["kws", "stream1d", "mobilenet_v1", "mobilenet_v2", "mobilenet_v3", "resnet8", "resnet18",
                        "autoencoder"]),
    "FULLY_CONNECTED": (_fc, ["kws", "stream1d", "lstm", "svdf", "autoencoder", "heads"]),
}

#: bounds of a family other than shapes()'s own (MACs, activation bytes): ResNet-18's 3x3
#: layers at 32x32 and 16x16 with 64 or 128 channels
LIMITS = {"resnet18": (40_000_000, 160 * 1024)}


def shapes(op: str, n: int, seed: int = 0, min_macs: int = 1000, max_macs: int = 3_000_000,
           max_bytes: int = 96 * 1024, max_weight_bytes: int = 256 * 1024) -> list[Shape]:
    """``n`` distinct shapes of ``op``, the families in turn, each family seeded from ``seed``;
    MACs, activations (input and output bytes) and weights within the bounds (what a
    microcontroller holds: mps3/an547 has 512 KB of RAM and of flash). Distinct: differing in
    more than the activation and the seed. Fewer than ``n`` only if the families run dry."""
    draw, families = FAMILIES[op]
    rngs = {f: np.random.default_rng([seed, OPS.index(op), k]) for k, f in enumerate(families)}
    out: list[Shape] = []
    seen: set[Shape] = set()
    k = 0
    while len(out) < n and k <= 200 * n:
        family = families[k % len(families)]
        k += 1
        rng = rngs[family]
        params = draw(rng, family)
        if params is None:
            continue
        params.setdefault("activation", _act(rng))
        s = Shape(op, family, per_channel=op != "FULLY_CONNECTED" or bool(rng.random() < 0.3),
                  seed=int(rng.integers(1 << 30)), **params)
        if s.op != "FULLY_CONNECTED" and min(s.output_hw()) < 1:
            continue
        key = Shape(**{**s.__dict__, "seed": 0, "activation": "NONE", "family": ""})
        most_macs, most_bytes = LIMITS.get(family, (max_macs, max_bytes))
        if (not min_macs <= s.macs <= most_macs or s.activation_bytes > most_bytes
                or s.weight_bytes > max_weight_bytes or key in seen):
            continue
        seen.add(key)
        out.append(s)
    return out


def add_layer(m: ModelBuilder, s: Shape, tag: str) -> tuple[list[int], list[int]]:
    """Add ``s`` to ``m`` (its own input and output, tensor names prefixed by ``tag``)."""
    rng = np.random.default_rng(s.seed)
    in_scale, out_scale = float(rng.uniform(0.02, 0.1)), float(rng.uniform(0.05, 0.3))
    zx, zy = int(rng.integers(-20, 20)), int(rng.integers(-10, 10))
    oc = s.out
    if s.op == "FULLY_CONNECTED":
        fshape = [oc, s.input[1]]
        qdim = 0
        oshape = [s.input[0], oc]
    elif s.op == "DEPTHWISE_CONV_2D":
        fshape = [1, s.kernel[0], s.kernel[1], oc]
        qdim = 3
        oshape = [s.input[0], *s.output_hw(), oc]
    else:
        fshape = [oc, s.kernel[0], s.kernel[1], s.input[3]]
        qdim = 0
        oshape = [s.input[0], *s.output_hw(), oc]
    depth = int(np.prod(fshape)) // oc if s.op != "DEPTHWISE_CONV_2D" else s.kernel[0] * s.kernel[1]
    # weight scales that keep the outputs spread over the int8 range
    base = out_scale / (in_scale * 40.0 * max(depth, 1) ** 0.5)
    w_scale = base * rng.uniform(0.5, 2.0, oc if s.per_channel else 1)
    x = m.add_tensor(f"{tag}_in", list(s.input), "int8", scale=in_scale, zero_point=zx)
    wt = m.add_tensor(f"{tag}_w", fshape, "int8", data=rng.integers(-127, 128, fshape), scale=w_scale,
                      zero_point=0, quantized_dimension=qdim)
    bt = m.add_tensor(f"{tag}_b", [oc], "int32", data=rng.integers(-3000, 3000, oc),
                      scale=in_scale * w_scale.astype(np.float32).astype(np.float64), zero_point=0)
    y = m.add_tensor(f"{tag}_out", oshape, "int8", scale=out_scale, zero_point=zy)
    if s.op == "FULLY_CONNECTED":
        opts: dict[str, Any] = {"fused_activation_function": s.activation}
    else:
        opts = {"padding": s.padding, "stride_w": s.stride[1], "stride_h": s.stride[0],
                "fused_activation_function": s.activation, "dilation_w_factor": 1, "dilation_h_factor": 1}
        if s.op == "DEPTHWISE_CONV_2D":
            opts["depth_multiplier"] = s.multiplier
    m.add_operator(s.op, [x, wt, bt], [y], opts)
    return [x], [y]


def layers_model(layers: Sequence[Shape], name: str) -> bytes:
    """A model of ``layers`` side by side, each its own model input and output (tags l0, l1, ...)."""
    m = ModelBuilder(name)
    ins: list[int] = []
    outs: list[int] = []
    for k, s in enumerate(layers):
        i, o = add_layer(m, s, f"l{k}")
        ins += i
        outs += o
    return m.finish(ins, outs)
