"""TRANSPOSE_CONV: the gradient of a 2-D convolution (a learned upsampling), NHWC, OHWI filter.

Import: TFLite TRANSPOSE_CONV (its first input is the output shape, a constant; the bias, when
given, is its fourth); ONNX ConvTranspose (group 1, no output padding beyond what the output
shape implies).
Semantics: TFLite Micro's transpose_conv.cc. Each input pixel scatters, through the filter, into
the output window it is the centre of: output (oy, ox) takes input (iy, ix) and tap (fy, fx)
when oy = iy * stride - pad + fy. The padding is what SAME/VALID gives a convolution from the
output's size (ComputePaddingHeightWidth with the output as input). int8: per-channel filter,
(x - input zero point) * w summed in int32, bias, MultiplyByQuantizedMultiplier per channel,
output zero point, activation clamp. int16 (16x8): int64 sums and the int64
MultiplyByQuantizedMultiplier, an int16 bias widened to int64. float32: the same sums (TFLite
scatters, utvm gathers: the order of the float additions differs).
The kernel gathers: for each output pixel the taps (fy, fx) whose input row/column
(oy + pad - fy) / stride is a whole number inside the input.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tvm import te, tirx

from ..ir import Graph, Operator
from ..lower.kerneldef import KernelArg, KernelDef
from ..lower.requant import I32, activation_range_int8, bias_requant, effective_scales, float_clamp, imm
from ..lower.schedules import reduction_schedule
from ..lower.target import Target
from .base import OpDef, OpError, SourceOp, Variant
from .common import abs_sums, bias_of, check_16x8, requant16


def transpose_padding(code: int, out_size: int, k: int, stride: int) -> int:
    """The padding before the first row (column) TFLite uses: that of a SAME (0) / VALID (1)
    convolution whose input is the transpose conv's output."""
    conv_out = (out_size + stride - 1) // stride if code == 0 else (out_size + stride - k) // stride
    return max((conv_out - 1) * stride + k - out_size, 0) // 2


def from_tflite(ctx: Any, node: Any) -> None:
    o = ctx.options(node, "TransposeConvOptions")
    ins = node.inputs
    if len(ins) < 3:
        raise ctx.fail(node, f"expects the output shape, the filter and the input, has {len(ins)} inputs")
    shape_t, w, x = (ctx.tensors[n] if n else None for n in ins[:3])
    y = ctx.tensors[node.outputs[0]]
    if shape_t is None or shape_t.size != 4:
        raise ctx.fail(node, "the output shape (input 1) must be a tensor of 4 values")
    # a model input (TFLite Micro's SEANet tests) is taken for the output tensor's static shape
    if shape_t.data is not None and [int(v) for v in shape_t.data.reshape(-1)] != list(y.shape):
        raise ctx.fail(node, f"output shape {shape_t.data.reshape(-1).tolist()} differs from the output tensor's "
                             f"{list(y.shape)}")
    if w is None or x is None or len(w.shape) != 4 or len(x.shape) != 4 or len(y.shape) != 4:
        raise ctx.fail(node, "expects 4-D filter, input and output")
    sh, sw = o.StrideH(), o.StrideW()
    if sh < 1 or sw < 1:
        raise ctx.fail(node, f"strides must be at least 1, got {sh}x{sw}")
    code = o.Padding()
    pad = (transpose_padding(code, y.shape[1], w.shape[1], sh), transpose_padding(code, y.shape[2], w.shape[2], sw))
    act = ctx.activation(o.FusedActivationFunction(), node) if hasattr(o, "FusedActivationFunction") else "none"
    inputs = [ins[2], ins[1]] + ([ins[3]] if len(ins) > 3 and ins[3] else [])
    ctx.emit(node, "transpose_conv2d", inputs, node.outputs, {"strides": (sh, sw), "padding": pad, "activation": act})


def from_onnx(imp: Any, node: Any) -> None:
    """ConvTranspose, 2-D, group 1: weights [C_in, C_out, KH, KW] -> OHWI."""
    from ..importer.onnx_import import NHWC

    attrs = imp.attrs(node)
    x_shape, out_shape = imp.shape(node.input[0]), imp.shape(node.output[0])
    w = imp.float_const(node.input[1], "weight")
    if len(x_shape) != 4 or w.ndim != 4:
        raise imp.fail("only 2-D transposed convolutions (4-D input) are supported")
    if int(attrs.get("group", 1)) != 1:
        raise imp.fail("grouped transposed convolution is not supported")
    if imp.pair(attrs, "dilations", (1, 1)) != (1, 1):
        raise imp.fail("dilated transposed convolution is not supported")
    strides = imp.pair(attrs, "strides", (1, 1))
    kh, kw = w.shape[2], w.shape[3]
    auto = attrs.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else str(auto)
    if auto in ("NOTSET", "", "VALID"):
        pads = [int(p) for p in attrs.get("pads", [0, 0, 0, 0])] if auto != "VALID" else [0, 0, 0, 0]
        top, left = pads[0], pads[1]
    else:  # SAME_*: the padding that makes the output stride x input; SAME_UPPER puts the odd one after
        tot_h = max((x_shape[2] - 1) * strides[0] + kh - out_shape[2], 0)
        tot_w = max((x_shape[3] - 1) * strides[1] + kw - out_shape[3], 0)
        top, left = (tot_h // 2, tot_w // 2) if auto == "SAME_UPPER" else (tot_h - tot_h // 2, tot_w - tot_w // 2)
    x = imp.get(node.input[0], NHWC)
    inputs = [x, imp.add_const(f"{node.output[0]}_weight", w.transpose(1, 2, 3, 0))]
    if len(node.input) > 2 and node.input[2]:
        inputs.append(imp.add_const(f"{node.output[0]}_bias", imp.float_const(node.input[2], "bias").reshape(-1)))
    imp.emit("transpose_conv2d", inputs, node.output[0], NHWC,
             {"strides": strides, "padding": (top, left), "activation": "none"})


def check(g: Graph, op: Operator) -> None:
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    b = bias_of(g, op)
    if w.data is None or len(w.shape) != 4 or w.shape[3] != x.shape[3] or w.shape[0] != y.shape[3]:
        raise OpError(f"{op.source}: filter {list(w.shape)} must be a constant [{y.shape[3]}, kh, kw, {x.shape[3]}]")
    if x.shape[0] != y.shape[0]:
        raise OpError(f"{op.source}: batch {x.shape[0]} in, {y.shape[0]} out")
    if b is not None and (b.data is None or b.size != y.shape[3]):
        raise OpError(f"{op.source}: the bias must be a constant of {y.shape[3]} values")
    if x.dtype == "int16":
        check_16x8(g, op)
        if b is not None and b.dtype not in ("int16", "int64"):
            raise OpError(f"{op.source}: a 16x8 transpose conv needs an int16 or int64 bias, not {b.dtype}")
    elif x.dtype == "int8":
        if w.dtype != "int8" or y.dtype != "int8" or x.quant is None or w.quant is None or y.quant is None:
            raise OpError(f"{op.source}: int8 transpose conv needs int8 filter and output with quantization")
        if np.any(w.quant.zero_point != 0):
            raise OpError(f"{op.source}: filter zero points must be 0 (symmetric int8 weights)")
        if b is not None and b.dtype != "int32":
            raise OpError(f"{op.source}: int8 transpose conv needs an int32 bias, not {b.dtype}")
    elif not (x.dtype == w.dtype == y.dtype == "float32"):
        raise OpError(f"{op.source}: unsupported data types {x.dtype} input, {w.dtype} filter")


def _taps(g: Graph, op: Operator, X: te.Tensor, value: Any) -> Any:
    """acc(b, oy, ox, oc) = sum over taps and input channels of value(x, w) where the tap lands."""
    x, w = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]]
    _, h, wd, cin = x.shape
    _, kh, kw, _ = w.shape
    sh, sw = op.attrs["strides"]
    top, left = op.attrs["padding"]
    ry, rx, rc = te.reduce_axis((0, kh), "ry"), te.reduce_axis((0, kw), "rx"), te.reduce_axis((0, cin), "rc")

    def f(b, oy, ox, o):  # type: ignore[no-untyped-def]
        ty, tx = oy + top - ry, ox + left - rx
        iy, ix = tirx.floordiv(ty, sh), tirx.floordiv(tx, sw)
        inside = tirx.all(ty >= 0, tx >= 0, tirx.floormod(ty, sh) == 0, tirx.floormod(tx, sw) == 0, iy < h, ix < wd)
        xv = X[b, te.max(te.min(iy, h - 1), 0), te.max(te.min(ix, wd - 1), 0), rc]
        return value(inside, xv, o, ry, rx, rc)

    return f, [ry, rx, rc]


def _kernel(g: Graph, op: Operator, target: Target) -> KernelDef:
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    b = bias_of(g, op)
    cout = y.shape[3]
    X = te.placeholder(x.shape, x.dtype, name="x")
    W = te.placeholder(w.shape, w.dtype, name="w")
    args = [KernelArg(X, tensor=x.name), KernelArg(W, tensor=w.name)]
    if x.dtype == "float32":
        f, axes = _taps(g, op, X, lambda ok, xv, o, ry, rx, rc: tirx.if_then_else(ok, xv * W[o, ry, rx, rc],
                                                                                  imm(0.0, "float32")))
        acc = te.compute(y.shape, lambda *i: te.sum(f(*i), axis=axes), name="acc")
        act = op.attrs["activation"]
        if b is not None:
            B = te.placeholder((cout,), "float32", name="bias")
            args.append(KernelArg(B, tensor=b.name))
            out = te.compute(y.shape, lambda bb, i, j, o: float_clamp(acc[bb, i, j, o] + B[o], act), name="out")
        else:
            out = te.compute(y.shape, lambda bb, i, j, o: float_clamp(acc[bb, i, j, o], act), name="out")
        return KernelDef(args, out, y.name, reduction_schedule("acc", "out", None, 4))
    if x.dtype == "int16":
        rq = requant16(g, op, cout, True, True, abs_sums(w.data, (1, 2, 3)))
        f, axes = _taps(g, op, X, lambda ok, xv, o, ry, rx, rc: tirx.if_then_else(
            ok, xv.astype(rq.acc) * W[o, ry, rx, rc].astype(rq.acc), imm(0, rq.acc)))
        acc = te.compute(y.shape, lambda *i: te.sum(f(*i), axis=axes), name="acc")
        out = te.compute(y.shape, lambda bb, i, j, o: rq.output(acc[bb, i, j, o], o), name="out")
        return KernelDef([*args, *rq.args], out, y.name, reduction_schedule("acc", "out", None, 4))
    assert x.quant and w.quant and y.quant and w.data is not None
    _, zx = x.quant.scalar()
    ys, zy = y.quant.scalar()
    bias = b.data.astype(np.int64) if b is not None and b.data is not None else np.zeros(cout, np.int64)
    rq8 = bias_requant(bias, effective_scales(x, w, y, True), cout)
    lo, hi = activation_range_int8(op.attrs["activation"], ys, zy)
    f, axes = _taps(g, op, X, lambda ok, xv, o, ry, rx, rc: tirx.if_then_else(
        ok, (xv.astype(I32) - zx) * W[o, ry, rx, rc].astype(I32), imm(0)))
    acc = te.compute(y.shape, lambda *i: te.sum(f(*i), axis=axes), name="acc")
    out = te.compute(y.shape, lambda bb, i, j, o: rq8.output_s8(acc[bb, i, j, o], o, zy, lo, hi), name="out")
    return KernelDef([*args, *rq8.args], out, y.name, reduction_schedule("acc", "out", None, 4))


def macs(g: Graph, op: Operator) -> int:
    """Every input element times every filter tap and output channel (what the scatter does)."""
    x, w = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]]
    return x.size * w.shape[0] * w.shape[1] * w.shape[2]


OPS = (
    OpDef(
        kind="transpose_conv2d",
        summary="transposed 2-D convolution",
        tflite=(SourceOp("TRANSPOSE_CONV", from_tflite, ("int8", "int16", "float32"),
                         "constant output shape; int8 filter per-channel symmetric; int16: int16/int64 bias"),),
        onnx=(SourceOp("ConvTranspose", from_onnx, ("float32",), "2-D, group 1, no dilation"),),
        variants=(Variant("generic", _kernel, types=("int8", "int16", "float32")),),
        check=check,
        reference="TFLite Micro transpose_conv.cc: reference_integer_ops::TransposeConv (int8, int16 with int64 "
                  "accumulators), reference_ops::TransposeConv (float32)",
        fuses_activation=True,
        macs=macs,
    ),
)
