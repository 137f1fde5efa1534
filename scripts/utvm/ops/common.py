"""Code shared by several operator modules: the int8 layer parameters of the MAC operators,
their type checks, and the shape of operators' attributes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tvm import te

from ..ir import Graph, Operator, Tensor
from ..lower.kerneldef import KernelArg
from ..lower.requant import Requant, acc_bound, activation_range_int8, bias_requant, effective_scales
from .base import OpError


def io(g: Graph, op: Operator) -> tuple[Tensor, Tensor]:
    """The first input and the output of ``op``."""
    return g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]


def bias_of(g: Graph, op: Operator, index: int = 2) -> Tensor | None:
    """The optional bias input (omitted inputs are absent or named "")."""
    return g.tensors[op.inputs[index]] if len(op.inputs) > index and op.inputs[index] else None


def check_io_types(g: Graph, op: Operator, types: tuple[str, ...] = ("int8", "float32")) -> None:
    """The first input and the output have the same type, one of ``types``; quantized types carry
    quantization parameters."""
    x, y = io(g, op)
    if x.dtype not in types or y.dtype != x.dtype:
        raise OpError(f"{op.source}: unsupported data types {x.dtype} -> {y.dtype}")
    if x.dtype in ("int8", "int16") and (x.quant is None or y.quant is None):
        raise OpError(f"{op.source}: {x.dtype} tensors without quantization parameters")


def check_mac_types(g: Graph, op: Operator) -> None:
    """Types of a conv / depthwise / fully connected layer: int8 or float32 activations with
    weights of the same type; refuse dynamic-range (hybrid) models."""
    x, w = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]]
    if x.dtype == "float32" and w.dtype == "int8":
        raise OpError(
            f"{op.source}: hybrid (dynamic-range) quantized model: float32 activations and int8 weights;"
            " TFLite Micro does not run these either. Quantize the model fully to int8 (with a"
            " representative dataset) or keep it float32")
    if x.dtype == "int8" and (x.quant is None or w.quant is None):
        raise OpError(f"{op.source}: int8 tensors without quantization parameters")
    if x.dtype not in ("int8", "float32") or w.dtype != x.dtype:
        raise OpError(f"{op.source}: unsupported data types {x.dtype} input, {w.dtype} weights")


@dataclass
class QuantConv:
    """What every int8 variant of a convolution (or depthwise convolution) starts from: the
    placeholders of input and filter, the requantization (bias folded with the input zero
    point), and the output quantization with its activation clamp."""

    X: te.Tensor
    W: te.Tensor
    args: list[KernelArg]       # x, w, then the requantization constants
    rq: Requant
    wdata: np.ndarray           # the filter as int64
    zx: int
    zy: int
    lo: int
    hi: int


def quant_conv(g: Graph, op: Operator, dsp: bool) -> QuantConv:
    """The int8 parameters of a conv2d / depthwise_conv2d; ``dsp``: the target has SMMLAR."""
    depthwise = op.kind == "depthwise_conv2d"
    x, w = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]]
    b = bias_of(g, op)
    y = g.tensors[op.outputs[0]]
    assert x.quant and w.quant and y.quant and w.data is not None
    cout = y.shape[3]
    X = te.placeholder(x.shape, x.dtype, name="x")
    W = te.placeholder(w.shape, w.dtype, name="w")
    args = [KernelArg(X, tensor=x.name), KernelArg(W, tensor=w.name)]
    _, zx = x.quant.scalar()
    ys, zy = y.quant.scalar()
    wdata = w.data.astype(np.int64)
    if np.any(w.quant.zero_point != 0):
        raise OpError(f"{op.source}: filter zero points must be 0 (symmetric int8 weights)")
    # bias' = bias - zx * sum(w): the input offset folded into the bias
    axes = (0, 1, 2) if depthwise else (1, 2, 3)
    wsum = wdata.sum(axis=axes)
    bias = (b.data.astype(np.int64) if b is not None and b.data is not None else np.zeros(cout, np.int64))
    folded = (bias - zx * wsum).astype(np.int64)
    if np.any(folded > 2**31 - 1) or np.any(folded < -(2**31)):
        raise OpError(f"{op.source}: folded bias overflows int32")
    wabs = np.abs(wdata).sum(axis=axes)
    rq = bias_requant(folded, effective_scales(x, w, y, True), cout, acc_bound(wabs, bias), wabs == 0, dsp)
    args += rq.args
    lo, hi = activation_range_int8(op.attrs["activation"], ys, zy)
    return QuantConv(X, W, args, rq, wdata, zx, zy, lo, hi)


def conv_macs(g: Graph, op: Operator) -> int:
    """MACs of a convolution: output elements x window x input channels per output."""
    w, y = g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    per_output = w.shape[1] * w.shape[2] * (w.shape[3] if op.kind == "conv2d" else 1)
    return y.size * per_output
