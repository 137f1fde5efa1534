"""L2_POOL_2D (ONNX LpPool with p = 2): the root of the window's sum of squares.

Import: TFLite L2_POOL_2D (float32, as TFLite Micro: it has no quantized L2 pool; fused
activation NONE/RELU/RELU6/RELU_N1_TO_1); ONNX LpPool with ``p`` 2 (float32, 2-D, no dilation).
Semantics: TFLite Micro's reference_ops::L2Pool: per NHWC window the squares of the taps inside
the input summed in float32 row by row, divided by the count of those taps, ``sqrtf`` of
that, clamped by the activation. ONNX LpPool does not divide: ``sqrt(sum x**2)`` over the
window, padding contributing zeros (``attrs["mean"]`` False).
"""

from __future__ import annotations

from typing import Any

from tvm import te, tirx

from ..ir import NHWC, Graph, Operator
from ..kernels.kerneldef import KernelArg, KernelDef
from ..kernels.padding import padding
from ..kernels.requant import float_clamp, imm
from ..kernels.schedules import reduction_schedule
from ..kernels.target import Target
from .base import OpDef, OpError, SourceOp, Validation, Variant
from .common import check_io_types, check_window, io


def from_tflite(ctx: Any, node: Any) -> None:
    if len(node.inputs) != 1 or len(node.outputs) != 1:
        raise ctx.fail(node, f"expects 1 input and 1 output, has {len(node.inputs)} and {len(node.outputs)}")
    o = ctx.options(node, "Pool2DOptions")
    x = ctx.tensors[node.inputs[0]]
    if len(x.shape) != 4:
        raise ctx.fail(node, f"expects a 4-D input, got {list(x.shape)}")
    kh, kw, sh, sw = o.FilterHeight(), o.FilterWidth(), o.StrideH(), o.StrideW()
    pad4 = padding(o.Padding(), x.shape[1], x.shape[2], kh, kw, sh, sw, 1, 1)
    ctx.emit(node, "l2_pool2d", [node.inputs[0]], node.outputs,
             {"pool_size": (kh, kw), "strides": (sh, sw), "padding": pad4, "mean": True,
              "activation": ctx.activation(o.FusedActivationFunction(), node)})


def from_onnx(imp: Any, node: Any) -> None:
    attrs = imp.attrs(node)
    shape = imp.shape(node.input[0])
    if len(shape) != 4:
        raise imp.fail(f"only 2-D pooling (4-D input) is supported, input has shape {list(shape)}")
    if int(attrs.get("p", 2)) != 2:
        raise imp.fail(f"only p = 2 is supported, got p = {attrs.get('p')}")
    if imp.pair(attrs, "dilations", (1, 1)) != (1, 1):
        raise imp.fail("dilated pooling is not supported")
    kernel = imp.pair(attrs, "kernel_shape", (1, 1))
    strides = imp.pair(attrs, "strides", (1, 1))
    pad4 = imp.pads_2d(attrs, (shape[2], shape[3]), kernel, strides, (1, 1))
    imp.emit("l2_pool2d", [imp.get(node.input[0], NHWC)], node.output[0], NHWC,
             {"pool_size": kernel, "strides": strides, "padding": pad4, "mean": False, "activation": "none"})


def check(g: Graph, op: Operator) -> None:
    """TFLite Micro's L2Prepare: 4-D float32 in and out (same type), the window's output size."""
    check_io_types(g, op, ("float32",))
    check_window(g, op, *op.attrs["pool_size"])
    x, y = io(g, op)
    if y.shape[3] != x.shape[3]:
        raise OpError(f"{op.source}: {y.shape[3]} output channels for {x.shape[3]} input channels")


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x, y = io(g, op)
    _, h, w, _ = x.shape
    kh, kw = op.attrs["pool_size"]
    sh, sw = op.attrs["strides"]
    top, left, _, _ = op.attrs["padding"]
    X = te.placeholder(x.shape, "float32", name="x")
    ry, rx = te.reduce_axis((0, kh), "ry"), te.reduce_axis((0, kw), "rx")

    def acc_f(b, i, j, ch):  # type: ignore[no-untyped-def]
        hi, wi = i * sh - top + ry, j * sw - left + rx
        v = X[b, te.max(te.min(hi, h - 1), 0), te.max(te.min(wi, w - 1), 0), ch]
        return te.sum(tirx.if_then_else(tirx.all(hi >= 0, hi < h, wi >= 0, wi < w), v * v, imm(0, "float32")),
                      axis=[ry, rx])

    acc = te.compute(y.shape, acc_f, name="acc")

    def out_f(b, i, j, ch):  # type: ignore[no-untyped-def]
        s = acc[b, i, j, ch]
        if op.attrs["mean"]:
            h0, w0 = i * sh - top, j * sw - left
            count = (te.min(h0 + kh, h) - te.max(h0, 0)) * (te.min(w0 + kw, w) - te.max(w0, 0))
            s = s / count.astype("float32")
        return float_clamp(tirx.call_pure_extern("float32", "sqrtf", s), op.attrs["activation"])

    out = te.compute(y.shape, out_f, name="out")
    return KernelDef([KernelArg(X, tensor=x.name)], out, y.name, reduction_schedule("acc", "out", None, 4, False))


OPS = (
    OpDef(
        kind="l2_pool2d",
        summary="2-D L2 pooling: root of the windows' (mean) sum of squares",
        tflite=(SourceOp("L2_POOL_2D", from_tflite, ("float32",), "fused activation NONE/RELU/RELU6/RELU_N1_TO_1"),),
        onnx=(SourceOp("LpPool", from_onnx, ("float32",), "p = 2, 2-D, no dilation"),),
        variants=(Variant("generic", _generic, types=("float32",)),),
        check=check,
        reference="TFLite Micro l2_pool_2d.cc: reference_ops::L2Pool (float32); ONNX LpPool (p = 2)",
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "output channels other than the input's",
               "no check in L2Prepare; reference_ops::L2Pool's `MatchingDim(input_shape, 3, output_shape, 3)` is a `TFLITE_DCHECK` (off in release) [k/l2_pool_2d.cc:102, reference/pooling.h]",
               "would-compute-differently", "kept"),
    Validation("from_tflite", "L2_POOL_2D without 1 input and 1 output",
               "`TF_LITE_ENSURE_EQ(NumInputs(node), 1)`, `NumOutputs == 1` [k/l2_pool_2d.cc:44-45]",
               "refused-by-TFLM", "kept", rule=True),
    Validation("from_tflite", "L2_POOL_2D input not 4-D",
               "`TF_LITE_ENSURE_EQ(NumDimensions(input), kTensorShapeRank)` (4) [k/l2_pool_2d.cc:52]",
               "refused-by-TFLM", "kept", rule=True),
)
