"""AVERAGE_POOL_2D and MAX_POOL_2D: 2-D pooling over NHWC windows.

Import: TFLite AVERAGE_POOL_2D / MAX_POOL_2D; ONNX AveragePool, MaxPool, GlobalAveragePool.
Semantics: TFLite Micro's reference kernels (reference_integer_ops::AveragePool: the window
sum divided by the count of taps inside the input, rounded half away from zero;
reference_integer_ops::MaxPool; the float32 ones), with the fused activation clamp.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tvm import te, tirx

from ..ir import NHWC, Graph, Operator, Quant
from ..kernels import fixedpoint as fp
from ..kernels.kerneldef import KernelArg, KernelDef
from ..kernels.padding import padding
from ..kernels.requant import I32, activation_range_int8, clamp, float_clamp, imm
from ..kernels.schedules import reduction_schedule
from ..kernels.target import Target
from .base import Channels, Offload, OpDef, OpError, SourceOp, Validation, Variant
from .common import check_io_types, check_window, io

_KINDS = {"AVERAGE_POOL_2D": "avg_pool2d", "MAX_POOL_2D": "max_pool2d"}


def from_tflite(ctx: Any, node: Any) -> None:
    o = ctx.options(node, "Pool2DOptions")
    x = ctx.tensors[node.inputs[0]]
    if len(x.shape) != 4:
        raise ctx.fail(node, f"expects a 4-D input, got {list(x.shape)}")
    kh, kw = o.FilterHeight(), o.FilterWidth()
    sh, sw = o.StrideH(), o.StrideW()
    pad4 = padding(o.Padding(), x.shape[1], x.shape[2], kh, kw, sh, sw, 1, 1)
    attrs = {"pool_size": (kh, kw), "strides": (sh, sw), "padding": pad4,
             "activation": ctx.activation(o.FusedActivationFunction(), node)}
    ctx.emit(node, _KINDS[node.kind], [node.inputs[0]], node.outputs, attrs)


def from_onnx(imp: Any, node: Any) -> None:
    attrs = imp.attrs(node)
    x_shape = imp.shape(node.input[0])
    if len(x_shape) != 4:
        raise imp.fail(f"only 2-D pooling (4-D input) is supported, input has shape {list(x_shape)}")
    if len([o for o in node.output if o]) > 1:
        raise imp.fail("the Indices output is not supported")
    if node.op_type == "GlobalAveragePool":
        kernel, strides, pad4 = (x_shape[2], x_shape[3]), (1, 1), (0, 0, 0, 0)
    else:
        kernel = imp.pair(attrs, "kernel_shape", (1, 1))
        strides = imp.pair(attrs, "strides", (1, 1))
        if imp.pair(attrs, "dilations", (1, 1)) != (1, 1):
            raise imp.fail("dilated pooling is not supported")
        if int(attrs.get("storage_order", 0)) != 0:
            raise imp.fail("storage_order=1 is not supported")
        pad4 = imp.pads_2d(attrs, (x_shape[2], x_shape[3]), kernel, strides, (1, 1))
        if node.op_type == "AveragePool" and int(attrs.get("count_include_pad", 0)) and any(pad4):
            raise imp.fail("count_include_pad=1 with padding is not supported")
    kind = "max_pool2d" if node.op_type == "MaxPool" else "avg_pool2d"
    x = imp.get(node.input[0], NHWC)
    imp.emit(kind, [x], node.output[0], NHWC,
             {"pool_size": kernel, "strides": strides, "padding": pad4, "activation": "none"})


def from_onnx_qlinear(imp: Any, node: Any) -> None:
    """com.microsoft.QLinearAveragePool / QLinearGlobalAveragePool (and the pooling groups of
    QDQ models): int8 average pooling in the input's quantization, then a requantization to
    the output's when it differs."""
    xq = imp.quantized_input(node.input[0], node.input[1], node.input[2], "input")
    yq = imp.qparams[node.output[0]]
    attrs = imp.attrs(node)
    if int(attrs.get("channels_last", 0)):
        raise imp.fail("channels_last=1 is not supported")
    x_shape = imp.shape(node.input[0])
    if len(x_shape) != 4:
        raise imp.fail(f"only 2-D pooling (4-D input) is supported, input has shape {list(x_shape)}")
    if node.op_type == "QLinearGlobalAveragePool":
        kernel, strides, pad4 = (x_shape[2], x_shape[3]), (1, 1), (0, 0, 0, 0)
    else:
        kernel = imp.pair(attrs, "kernel_shape", (1, 1))
        strides = imp.pair(attrs, "strides", (1, 1))
        pad4 = imp.pads_2d(attrs, (x_shape[2], x_shape[3]), kernel, strides, (1, 1))
        if int(attrs.get("count_include_pad", 0)) and any(pad4):
            raise imp.fail("count_include_pad=1 with padding is not supported")
    act = attrs.get("activation", b"none")
    pool_attrs = {"pool_size": kernel, "strides": strides, "padding": pad4,
                  "activation": act.decode() if isinstance(act, bytes) else str(act)}
    x = imp.get(node.input[0], NHWC)
    if xq.scalar() == yq.scalar():
        imp.emit("avg_pool2d", [x], node.output[0], NHWC, pool_attrs)
        return
    if not any(pad4):  # one rounding to the output scale, as onnxruntime rounds once
        imp.emit("avg_pool2d", [x], node.output[0], NHWC, {**pool_attrs, "rescale": True})
        return
    imp.qparams[node.output[0]] = xq
    pooled = imp.emit("avg_pool2d", [x], node.output[0], NHWC, pool_attrs).outputs[0]
    imp.qparams[node.output[0]] = yq
    imp.emit("quantize", [pooled], node.output[0], NHWC)


def check(g: Graph, op: Operator) -> None:
    check_io_types(g, op)
    x, y = io(g, op)
    check_window(g, op, *op.attrs["pool_size"])
    if y.shape[3] != x.shape[3]:
        raise OpError(f"{op.source}: {y.shape[3]} output channels for {x.shape[3]} input channels")
    if x.dtype == "int8" and op.attrs.get("rescale"):
        if op.kind != "avg_pool2d" or any(op.attrs["padding"]):
            raise OpError(f"{op.source}: rescaling pools must be average pools without padding")
    elif x.dtype == "int8" and x.quant is not None and y.quant is not None and not same_pool_quant(x.quant, y.quant):
        raise OpError(f"{op.source}: int8 pooling needs the same quantization in and out")


def same_pool_quant(a: Quant, b: Quant) -> bool:
    """TFLite Micro's PoolingPrepare test: zero points equal, scales (float32) at most 1e-6 apart
    (the pooling kernels copy or average the values as they are, in neither scale)."""
    (sa, za), (sb, zb) = a.scalar(), b.scalar()
    return za == zb and float(abs(np.float32(sa) - np.float32(sb))) <= 1.0e-6


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    n, h, w, c = x.shape
    _, oh, ow, _ = y.shape
    kh, kw = op.attrs["pool_size"]
    sh, sw = op.attrs["strides"]
    top, left, _, _ = op.attrs["padding"]
    X = te.placeholder(x.shape, x.dtype, name="x")
    ry = te.reduce_axis((0, kh), "ry")
    rx = te.reduce_axis((0, kw), "rx")
    quant = x.dtype == "int8"
    acc_dtype = I32 if quant else "float32"

    def inside(i, j):  # type: ignore[no-untyped-def]
        hi = i * sh - top + ry
        wi = j * sw - left + rx
        return tirx.all(hi >= 0, hi < h, wi >= 0, wi < w), hi, wi

    if op.kind == "avg_pool2d":
        def acc_f(b, i, j, ch):  # type: ignore[no-untyped-def]
            ok, hi, wi = inside(i, j)
            v = X[b, te.max(te.min(hi, h - 1), 0), te.max(te.min(wi, w - 1), 0), ch].astype(acc_dtype)
            return te.sum(tirx.if_then_else(ok, v, imm(0, acc_dtype)), axis=[ry, rx])
    else:
        def acc_f(b, i, j, ch):  # type: ignore[no-untyped-def]
            ok, hi, wi = inside(i, j)
            v = X[b, te.max(te.min(hi, h - 1), 0), te.max(te.min(wi, w - 1), 0), ch].astype(acc_dtype)
            low = imm(-(2**31), I32) if quant else imm(-3.4028234663852886e38, "float32")
            return te.max(tirx.if_then_else(ok, v, low), axis=[ry, rx])

    acc = te.compute((n, oh, ow, c), acc_f, name="acc")

    def count(i, j):  # type: ignore[no-untyped-def]
        h0 = i * sh - top
        w0 = j * sw - left
        hc = te.min(h0 + kh, h) - te.max(h0, 0)
        wc = te.min(w0 + kw, w) - te.max(w0, 0)
        return hc * wc

    act = op.attrs["activation"]
    if quant:
        assert y.quant is not None
        lo, hi_ = activation_range_int8(act, *y.quant.scalar())
        if op.attrs.get("rescale"):
            # ONNX's quantized average pools: the sum, less the zero points, scaled once to the
            # output quantization (windows without padding: one count, one multiplier)
            assert x.quant is not None
            xs, zx = x.quant.scalar()
            ys, zy = y.quant.scalar()
            m, shift = fp.quantize_multiplier(float(xs) / (float(ys) * kh * kw))

            def out_f(b, i, j, ch):  # type: ignore[no-untyped-def]
                v = fp.multiply_by_quantized_multiplier(acc[b, i, j, ch] - zx * kh * kw, m, shift) + zy
                return clamp(v, lo, hi_).astype("int8")
        elif op.kind == "avg_pool2d":
            def out_f(b, i, j, ch):  # type: ignore[no-untyped-def]
                s = acc[b, i, j, ch]
                cnt = count(i, j)
                half = tirx.truncdiv(cnt, 2)
                avg = tirx.Select(s > 0, tirx.truncdiv(s + half, cnt), tirx.truncdiv(s - half, cnt))
                return clamp(avg, lo, hi_).astype("int8")
        else:
            def out_f(b, i, j, ch):  # type: ignore[no-untyped-def]
                return clamp(acc[b, i, j, ch], lo, hi_).astype("int8")
    else:
        if op.kind == "avg_pool2d":
            def out_f(b, i, j, ch):  # type: ignore[no-untyped-def]
                return float_clamp(acc[b, i, j, ch] / count(i, j).astype("float32"), act)
        else:
            def out_f(b, i, j, ch):  # type: ignore[no-untyped-def]
                return float_clamp(acc[b, i, j, ch], act)

    out = te.compute((n, oh, ow, c), out_f, name="out")
    # unrolled, the max reduction gave wrong results (TVM 0.27; not investigated further)
    unroll = op.kind == "avg_pool2d"
    return KernelDef([KernelArg(X, tensor=x.name)], out, y.name,
                     reduction_schedule("acc", "out", None, 4, unroll))


_CONSTRAINTS = "fused activation NONE/RELU/RELU6/RELU_N1_TO_1"
OPS = (
    OpDef(
        kind="avg_pool2d",
        summary="2-D average pooling",
        tflite=(SourceOp("AVERAGE_POOL_2D", from_tflite, constraints=_CONSTRAINTS),),
        onnx=(SourceOp("AveragePool", from_onnx, ("float32",), "2-D, count_include_pad=0 when padded", qdq="pool"),
              SourceOp("GlobalAveragePool", from_onnx, ("float32",), "4-D input", qdq="pool"),
              SourceOp("com.microsoft.QLinearAveragePool", from_onnx_qlinear, ("int8",), "also QDQ groups; 2-D"),
              SourceOp("com.microsoft.QLinearGlobalAveragePool", from_onnx_qlinear, ("int8",),
                       "also QDQ groups; channels first")),
        variants=(Variant("generic", _generic),),
        check=check,
        reference="TFLite Micro pooling.cc: reference_integer_ops::AveragePool, reference_ops::AveragePool",
        fuses_activation=True,
        offload=(Offload("cmsis-nn", ("int8",), "average_pool"), Offload("plain-c", ("int8",), "average_pool")),
        # unpadded, the average of a constant channel is the constant
        channels=Channels("passes", lambda g, op: not any(op.attrs["padding"])),
    ),
    OpDef(
        kind="max_pool2d",
        summary="2-D max pooling",
        tflite=(SourceOp("MAX_POOL_2D", from_tflite, constraints=_CONSTRAINTS),),
        onnx=(SourceOp("MaxPool", from_onnx, ("float32",), "2-D, no dilation, no Indices output", qdq="passthrough"),),
        variants=(Variant("generic", _generic),),
        check=check,
        reference="TFLite Micro pooling.cc: reference_integer_ops::MaxPool, reference_ops::MaxPool",
        fuses_activation=True,
        offload=(Offload("cmsis-nn", ("int8",), "max_pool"),),
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "pool output channels differ from the input's",
               "no check; the reference loops over the stored output depth [reference pooling.h]",
               "would-compute-differently", "kept"),
    Validation("check", "(ONNX QLinearAveragePool) rescaling pool with padding or not an average pool",
               "onnxruntime counts padding per window (count_include_pad); utvm's rescaling pool has one count",
               "would-compute-differently", "kept"),
    Validation("check", "int8 pool with other quantization out than in",
               "`TF_LITE_ENSURE(abs(input scale - output scale) <= 1e-6)`, zero points equal [k/pooling_common.cc:70-76]",
               "neither", "relaxed to TFLM's 1e-6 (was: equal)"),
    Validation("from_tflite", "pool input not 4-D",
               "no rank check; SizeOfDimension(input, 1..2) [k/pooling_common.cc:36-37]",
               "would-compute-differently", "kept", rule=True),
)
