"""Seeded int8 layer shapes from the model families users bring (not from our models alone).

    shapes("DEPTHWISE_CONV_2D", 200, seed=0) -> list[Shape]

Families: keyword spotting (depthwise of one input channel with multiplier > 1, DS-CNN),
streaming 1-D audio (convolutions as 2-D of height 1, depthwise 1-D), MobileNet V1/V2/V3 at 96
and 128 pixels, ResNet-8 and -18 style, autoencoders, and the gates of LSTM/SVDF (few-output
and gate-sized FULLY_CONNECTED). Each family draws its shapes from its own seeded generator,
the families in turn, so that the first n shapes of a list are a fair sample of all of them.
"""

from __future__ import annotations

from dataclasses import dataclass
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


def _pick(rng: np.random.Generator, values: list[Any]) -> Any:
    return values[int(rng.integers(len(values)))]


def _act(rng: np.random.Generator) -> str:
    return _pick(rng, ["NONE", "RELU", "RELU", "RELU6"])


def _mobilenet_hw(rng: np.random.Generator) -> int:
    res = _pick(rng, [96, 128])
    return max(res // _pick(rng, [2, 4, 8, 16, 32]), 3)


def _dw(rng: np.random.Generator, family: str) -> dict[str, Any]:
    if family == "kws":
        # keyword spotting: one input channel (the spectrogram), multiplier > 1
        h, w = _pick(rng, [(49, 10), (49, 40), (98, 40), (32, 10), (40, 20), (25, 5)])
        mult = _pick(rng, [2, 4, 8, 8, 16, 32])
        k = _pick(rng, [(10, 8), (10, 4), (3, 3), (5, 5), (8, 8), (4, 10)])
        k = (min(k[0], h), min(k[1], w))
        return dict(input=(1, h, w, 1), out=mult, multiplier=mult, kernel=k,
                    stride=_pick(rng, [(1, 1), (2, 2), (2, 1)]), padding=_pick(rng, ["SAME", "VALID"]))
    if family == "kws_ds":
        # DS-CNN's depthwise layers and multiplier-2 variants
        c = _pick(rng, [16, 32, 64, 64, 128])
        mult = _pick(rng, [1, 1, 2])
        return dict(input=(1, _pick(rng, [25, 13, 49]), _pick(rng, [5, 10]), c), out=c * mult, multiplier=mult,
                    kernel=(3, 3), stride=_pick(rng, [(1, 1), (2, 2)]))
    if family == "stream1d":
        c = _pick(rng, [8, 16, 24, 32, 48, 64, 96, 128])
        w = _pick(rng, [8, 16, 25, 32, 49, 64, 100])
        mult = _pick(rng, [1, 1, 1, 2, 4])
        k = _pick(rng, [3, 5, 7, 9, 15])
        return dict(input=(1, 1, w, c), out=c * mult, multiplier=mult, kernel=(1, min(k, w)),
                    stride=(1, _pick(rng, [1, 1, 2])), padding=_pick(rng, ["SAME", "VALID"]))
    if family == "mobilenet":
        hw = _mobilenet_hw(rng)
        c = _pick(rng, [8, 16, 24, 32, 40, 48, 64, 72, 96, 120, 144, 192, 240, 256])
        return dict(input=(1, hw, hw, c), out=c, kernel=_pick(rng, [(3, 3), (3, 3), (5, 5)]),
                    stride=_pick(rng, [(1, 1), (2, 2)]))
    # autoencoder / resnet families have no depthwise layer; misc: odd channel counts
    c = _pick(rng, [1, 3, 5, 6, 12, 20, 36])
    hw = _pick(rng, [4, 6, 8, 12, 16])
    return dict(input=(1, hw, hw, c), out=c, kernel=(3, 3), stride=_pick(rng, [(1, 1), (2, 2)]))


def _conv(rng: np.random.Generator, family: str) -> dict[str, Any]:
    if family == "kws":
        h, w = _pick(rng, [(49, 10), (49, 40), (98, 40), (32, 10)])
        k = _pick(rng, [(10, 4), (10, 8), (3, 3), (20, 8)])
        return dict(input=(1, h, w, 1), out=_pick(rng, [8, 16, 28, 32, 64]), kernel=(min(k[0], h), min(k[1], w)),
                    stride=_pick(rng, [(1, 1), (2, 2), (2, 1)]))
    if family == "stream1d":
        cin = _pick(rng, [1, 8, 16, 24, 32, 40, 64, 96])
        w = _pick(rng, [8, 16, 25, 32, 49, 64, 100])
        k = _pick(rng, [1, 3, 3, 5, 7, 9])
        return dict(input=(1, 1, w, cin), out=_pick(rng, [8, 16, 24, 32, 48, 64, 96]), kernel=(1, min(k, w)),
                    stride=(1, _pick(rng, [1, 1, 2])), padding=_pick(rng, ["SAME", "VALID"]))
    if family == "mobilenet":
        hw = _mobilenet_hw(rng)
        if rng.random() < 0.15:  # the stem
            hw = _pick(rng, [96, 128])
            return dict(input=(1, hw, hw, 3), out=_pick(rng, [8, 16, 32]), kernel=(3, 3), stride=(2, 2))
        cin = _pick(rng, [8, 16, 24, 32, 40, 48, 64, 72, 96, 120, 144, 192, 240, 256])
        hw = min(hw, 24)
        return dict(input=(1, hw, hw, cin), out=_pick(rng, [8, 16, 24, 32, 40, 64, 96, 128, 256]))
    if family == "resnet":
        hw = _pick(rng, [32, 16, 8, 4])
        c = _pick(rng, [16, 32, 64]) if hw >= 16 else _pick(rng, [64, 128])
        if rng.random() < 0.3:  # downsampling shortcut
            return dict(input=(1, hw, hw, c), out=2 * c, kernel=(1, 1), stride=(2, 2))
        if hw == 32 and rng.random() < 0.3:
            return dict(input=(1, hw, hw, 3), out=16, kernel=(3, 3))
        return dict(input=(1, hw, hw, c), out=_pick(rng, [c, 2 * c]), kernel=(3, 3),
                    stride=_pick(rng, [(1, 1), (2, 2)]))
    # autoencoder (convolutional): small maps, odd channels
    hw = _pick(rng, [4, 8, 16])
    return dict(input=(1, hw, hw, _pick(rng, [1, 4, 8, 12, 16])), out=_pick(rng, [4, 8, 12, 16, 32]),
                kernel=(3, 3), stride=_pick(rng, [(1, 1), (2, 2)]))


def _fc(rng: np.random.Generator, family: str) -> dict[str, Any]:
    if family == "kws":  # the classifier: few outputs
        return dict(input=(1, _pick(rng, [64, 128, 144, 256, 400, 640, 1000, 2000])), out=_pick(rng, [2, 3, 4, 6, 10, 12]))
    if family == "stream1d":  # streaming classifiers and bottlenecks
        return dict(input=(1, _pick(rng, [32, 48, 64, 96, 128, 192])), out=_pick(rng, [2, 4, 8, 12, 16, 32, 64]))
    if family == "gates":  # LSTM/SVDF gates: [x, h] -> 4 units, SVDF features
        units = _pick(rng, [8, 16, 20, 32, 64])
        return dict(input=(1, _pick(rng, [10, 16, 20, 40, 64]) + units), out=_pick(rng, [1, 4]) * units)
    if family == "autoencoder":  # MLPerf Tiny AD style
        return dict(input=(1, _pick(rng, [8, 128, 640])), out=_pick(rng, [8, 128, 640]))
    # mobilenet/resnet heads
    return dict(input=(1, _pick(rng, [64, 128, 256, 576, 1024])), out=_pick(rng, [2, 5, 10, 16, 100]))


FAMILIES = {
    "DEPTHWISE_CONV_2D": (_dw, ["kws", "kws_ds", "stream1d", "mobilenet", "misc"]),
    "CONV_2D": (_conv, ["kws", "stream1d", "mobilenet", "resnet", "autoencoder"]),
    "FULLY_CONNECTED": (_fc, ["kws", "stream1d", "gates", "autoencoder", "heads"]),
}


def shapes(op: str, n: int, seed: int = 0, min_macs: int = 1000, max_macs: int = 3_000_000,
           max_bytes: int = 96 * 1024) -> list[Shape]:
    """``n`` distinct shapes of ``op``, the families in turn, each family seeded from ``seed``;
    MACs and activations (input and output bytes) within the bounds (what a microcontroller
    holds: mps3/an547 has 512 KB of RAM and of flash)."""
    draw, families = FAMILIES[op]
    rngs = {f: np.random.default_rng([seed, OPS.index(op), k]) for k, f in enumerate(families)}
    out: list[Shape] = []
    seen: set[Shape] = set()
    k = 0
    while len(out) < n:
        family = families[k % len(families)]
        k += 1
        rng = rngs[family]
        params = draw(rng, family)
        s = Shape(op, family, activation=_act(rng), per_channel=op != "FULLY_CONNECTED" or bool(rng.random() < 0.3),
                  seed=int(rng.integers(1 << 30)), **params)
        if s.op != "FULLY_CONNECTED" and min(s.output_hw()) < 1:
            continue
        key = Shape(**{**s.__dict__, "seed": 0, "activation": "NONE"})
        if not min_macs <= s.macs <= max_macs or s.activation_bytes > max_bytes or key in seen:
            if k > 100 * n:
                break
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
