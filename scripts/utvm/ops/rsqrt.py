"""RSQRT: 1 / sqrt(x).

Import: TFLite RSQRT (ONNX has no such operator).
Semantics: TFLite Micro's elementwise.cc. int8: RsqrtEvalQuantized: the offset input v (> 0; 0
gives the largest output) gets its inverse square root as a quantized multiplier by
GetInvSqrtQuantizedMultiplierExp (normalised into [2**27, 2**29) by pairs of bits, five
Newton-Raphson steps in Q3.28, times sqrt(2)/2), applied to 1 shifted left by 20, then rescaled
by 1 / (sqrt(input_scale) * output_scale) (the product in float32, its inverse in double) shifted
right by 20, plus the output zero point, saturated: evaluated on the host for the 256 values and
looked up. Inputs below the zero point are an error in TFLite Micro; here they give the output
zero point. float32: 1 / sqrtf(x).
"""

from __future__ import annotations

import numpy as np
from tvm import te, tirx

from ..ir import Graph, Operator
from ..kernels import fixedpoint as fp
from ..kernels.kerneldef import KernelDef
from ..kernels.target import Target
from .base import OpDef, SourceOp, Variant
from .unary import INT8_VALUES, check_unary, expr_kernel, saturate, scales, table_kernel, tflite_rule

#: the left shift that keeps the inverse square root an integer (TFLite's kShift)
SHIFT = 20


def check(g: Graph, op: Operator) -> None:
    check_unary(g, op, ("int8", "float32"))


def inv_sqrt_multiplier(value: int) -> tuple[int, int]:
    """TFLite's GetInvSqrtQuantizedMultiplierExp(value, reverse_shift=-1): (multiplier, left shift)."""
    if value <= 1:
        return fp.INT32_MAX, 0
    srdhm = fp.np_saturating_rounding_doubling_high_mul
    shift = 11
    while value >= (1 << 29):
        value //= 4
        shift += 1
    pairs = (int(fp.np_count_leading_zeros_u32(value)) - 1) // 2 - 1
    shift -= pairs
    value <<= 2 * pairs
    x_in = value >> 1                                        # Q3.28
    half_in = int(fp.np_rounding_divide_by_pot(x_in, 1))
    half_three = (1 << 28) + (1 << 27)                       # 1.5 in Q3.28
    x = 1 << 28                                              # 1.0
    for _ in range(5):
        x3 = int(fp.np_saturating_rounding_multiply_by_pot(srdhm(srdhm(x, x), x), 6))
        x = int(fp.np_saturating_rounding_multiply_by_pot(fp.np_wrap32(srdhm(half_three, x) - srdhm(half_in, x3)), 3))
    out = int(srdhm(x, 1518500250))                          # times sqrt(2) / 2 in Q0.31
    if shift < 0:
        out <<= -shift
        shift = 0
    return out, -shift


def int8_table(g: Graph, op: Operator) -> np.ndarray:
    sx, zx, sy, zy = scales(g, op)
    product = np.float32(np.sqrt(np.float32(sx))) * np.float32(sy)
    m, s = fp.quantize_multiplier(1.0 / float(product))
    out = []
    for v in (INT8_VALUES - zx).tolist():
        if v < 0:
            out.append(zy)
        elif v == 0:
            out.append(127)
        else:
            im, ishift = inv_sqrt_multiplier(v)
            data = fp.np_multiply_by_quantized_multiplier(1, im, ishift + SHIFT)
            out.append(int(fp.np_multiply_by_quantized_multiplier(data, m, s - SHIFT)) + zy)
    return saturate(np.array(out, np.int64), "int8")


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    if g.tensors[op.inputs[0]].dtype == "int8":
        return table_kernel(g, op, int8_table(g, op))
    return expr_kernel(g, op, lambda v: tirx.const(1.0, "float32") / te.sqrt(v))


OPS = (
    OpDef(
        kind="rsqrt",
        summary="1 / sqrt(x)",
        tflite=(SourceOp("RSQRT", tflite_rule("rsqrt"), ("int8", "float32"), "int8 inputs at or above the zero point"),),
        variants=(Variant("generic", _generic, types=("int8", "float32")),),
        check=check,
        reference="TFLite Micro elementwise.cc: RsqrtEvalQuantized (int8, a 256-entry table), 1 / sqrtf (float32)",
        inplace=True,
    ),
)
