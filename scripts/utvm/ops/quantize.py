"""QUANTIZE: float32 -> int8, or int8 -> int8 requantization.

Import: TFLite QUANTIZE.
Semantics: TFLite Micro's quantize.cc: float -> int8 is round(x / scale) + zero point (round
half away from zero) clamped; int8 -> int8 is MultiplyByQuantizedMultiplier(x - zx) + zy.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tvm import te, tirx

from ..ir import Graph, Operator
from ..lower import fixedpoint as fp
from ..lower.kerneldef import KernelArg, KernelDef
from ..lower.requant import I32, clamp, imm
from ..lower.target import Target
from .base import OpDef, OpError, SourceOp, Variant
from .common import check_same_size


def from_tflite(ctx: Any, node: Any) -> None:
    ctx.emit(node, "quantize", [node.inputs[0]], node.outputs)


def from_onnx(imp: Any, node: Any) -> None:
    """QuantizeLinear to int8 (or uint8, taken as int8), per tensor: round(x / scale) +
    zero point, saturated. ONNX rounds halves to even where TFLite rounds them away from
    zero: the two differ by one step on exact halves."""
    attrs = imp.attrs(node)
    scale = imp.const(node.input[1], "scale")
    if scale.size != 1:
        raise imp.fail(f"per-axis quantization (axis {attrs.get('axis', 1)}) is not supported")
    x, layout = imp.any_layout(node.input[0])
    imp.emit("quantize", [x], node.output[0], layout)


def check(g: Graph, op: Operator) -> None:
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    if (x.dtype, y.dtype) not in (("float32", "int8"), ("int8", "int8")):
        raise OpError(f"{op.source}: QUANTIZE from {x.dtype} to {y.dtype} is not supported")
    if y.quant is None or (x.dtype == "int8" and x.quant is None):
        raise OpError(f"{op.source}: int8 tensors without quantization parameters")
    check_same_size(g, op)


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    X = te.placeholder((x.size,), x.dtype, name="x")
    if x.dtype == "float32" and y.dtype == "int8":
        assert y.quant
        s, z = y.quant.scalar()

        def f(i):  # type: ignore[no-untyped-def]
            v = tirx.round(X[i] / imm(float(np.float32(s)), "float32")).astype(I32) + z
            return clamp(v, -128, 127).astype("int8")
    elif x.dtype == "int8" and y.dtype == "int8":
        assert x.quant and y.quant
        sx, zx = x.quant.scalar()
        sy, zy = y.quant.scalar()
        m, sft = fp.quantize_multiplier(float(sx) / float(sy))

        def f(i):  # type: ignore[no-untyped-def]
            v = fp.multiply_by_quantized_multiplier(X[i].astype(I32) - zx, m, sft) + zy
            return clamp(v, -128, 127).astype("int8")
    else:
        raise OpError(f"{op.source}: QUANTIZE from {x.dtype} to {y.dtype} is not supported")
    return KernelDef([KernelArg(X, tensor=x.name)], te.compute((x.size,), f, name="out"), y.name)


OPS = (
    OpDef(
        kind="quantize",
        summary="quantize float32 to int8, or requantize int8",
        tflite=(SourceOp("QUANTIZE", from_tflite, ("float32", "int8"), "output int8, per-tensor"),),
        onnx=(SourceOp("QuantizeLinear", from_onnx, ("float32",), "int8 or uint8 output, per tensor"),),
        variants=(Variant("generic", _generic),),
        check=check,
        reference="TFLite Micro quantize.cc: reference_ops::AffineQuantize, reference_ops::Requantize",
    ),
)
