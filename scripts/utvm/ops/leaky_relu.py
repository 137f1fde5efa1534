"""LEAKY_RELU (ONNX LeakyRelu): x if x >= 0 else alpha * x.

Import: TFLite LEAKY_RELU (alpha from its options); ONNX LeakyRelu (alpha, default 0.01).
Semantics: TFLite Micro's leaky_relu.cc: int8 and int16 as reference_ops::QuantizeLeakyRelu: the
offset input MultiplyByQuantizedMultiplier by input_scale / output_scale when >= 0, else by
input_scale * alpha / output_scale (both computed in double from the float32 values: the TFLite
Micro we compare with does so; the golden outputs of four SEANet layers come from a version that
computed them in float32 and differ in a few elements), plus the output zero point, saturated
(int8 as a 256-entry table); float32 x > 0 ? x : x * alpha.
"""

from __future__ import annotations

import numpy as np
from tvm import tirx

from ..ir import Graph, Operator
from ..kernels import fixedpoint as fp
from ..kernels.kerneldef import KernelDef
from ..kernels.requant import I32
from ..kernels.target import Target
from .base import OpDef, SourceOp, Variant
from .elementwise import clamp_to, qrange
from .unary import INT8_VALUES, check_unary, expr_kernel, onnx_rule, saturate, scales, table_kernel, tflite_rule


def check(g: Graph, op: Operator) -> None:
    check_unary(g, op, ("int8", "int16", "float32"), int16_zero_point=False)


def params(g: Graph, op: Operator) -> tuple[tuple[int, int], tuple[int, int]]:
    """((multiplier, shift) of the identity, of alpha)."""
    sx, _, sy, _ = scales(g, op)
    alpha = np.float32(op.attrs.get("alpha", 0.2))
    identity = fp.quantize_multiplier(sx / sy)
    scaled = fp.quantize_multiplier(sx * float(alpha) / sy)
    return identity, scaled


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x = g.tensors[op.inputs[0]]
    if x.dtype == "float32":
        alpha = tirx.const(float(np.float32(op.attrs.get("alpha", 0.2))), "float32")
        return expr_kernel(g, op, lambda v: tirx.Select(v > tirx.const(0.0, "float32"), v, v * alpha))
    _, zx, _, zy = scales(g, op)
    (m1, s1), (m2, s2) = params(g, op)
    if x.dtype == "int8":
        v = INT8_VALUES - zx
        y = np.where(v >= 0, fp.np_multiply_by_quantized_multiplier(v, m1, s1),
                     fp.np_multiply_by_quantized_multiplier(v, m2, s2)) + zy
        return table_kernel(g, op, saturate(y, "int8"))
    lo, hi = qrange(x.dtype)

    def f(q):  # type: ignore[no-untyped-def]
        v = q.astype(I32) - zx
        return clamp_to(tirx.Select(v >= 0, fp.multiply_by_quantized_multiplier(v, m1, s1),
                                    fp.multiply_by_quantized_multiplier(v, m2, s2)) + zy, lo, hi, x.dtype)
    return expr_kernel(g, op, f)


OPS = (
    OpDef(
        kind="leaky_relu",
        summary="x if x >= 0 else alpha * x",
        tflite=(SourceOp("LEAKY_RELU", tflite_rule("leaky_relu", "LeakyReluOptions", [("alpha", "Alpha")]),
                         ("int8", "int16", "float32")),),
        onnx=(SourceOp("LeakyRelu", onnx_rule("leaky_relu", {"alpha": 0.01}), ("float32",)),),
        variants=(Variant("generic", _generic, types=("int8", "int16", "float32")),),
        check=check,
        reference="TFLite Micro leaky_relu.cc: reference_ops::QuantizeLeakyRelu (int8 as a 256-entry table, "
                  "int16), reference_ops::LeakyRelu (float32)",
        inplace=True,
    ),
)
