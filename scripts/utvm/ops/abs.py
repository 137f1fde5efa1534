"""ABS (ONNX Abs): |x|.

Import: TFLite ABS; ONNX Abs.
Semantics: TFLite Micro's elementwise.cc: int8 and int16 take |x - input zero point|, rescaled
by MultiplyByQuantizedMultiplier with input_scale / output_scale (in double) unless both
scales are equal, plus the output zero point, saturated (int8 as a 256-entry table); float32 fabsf.
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
    check_unary(g, op, ("int8", "int16", "float32"))


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x = g.tensors[op.inputs[0]]
    if x.dtype == "float32":
        return expr_kernel(g, op, lambda v: tirx.Select(v < tirx.const(0.0, "float32"), -v, v))
    sx, zx, sy, zy = scales(g, op)
    rescale = sx != sy
    m, s = fp.quantize_multiplier(sx / sy)
    if x.dtype == "int8":
        v = np.abs(INT8_VALUES - zx)
        return table_kernel(g, op, saturate((fp.np_multiply_by_quantized_multiplier(v, m, s) if rescale else v) + zy,
                                            "int8"))
    lo, hi = qrange(x.dtype)

    def f(q):  # type: ignore[no-untyped-def]
        v = q.astype(I32) - zx
        v = tirx.Select(v >= 0, v, 0 - v)
        return clamp_to((fp.multiply_by_quantized_multiplier(v, m, s) if rescale else v) + zy, lo, hi, x.dtype)
    return expr_kernel(g, op, f)


OPS = (
    OpDef(
        kind="abs",
        summary="|x|",
        tflite=(SourceOp("ABS", tflite_rule("abs"), ("int8", "int16", "float32"), "int16 zero points 0"),),
        onnx=(SourceOp("Abs", onnx_rule("abs"), ("float32",)),),
        variants=(Variant("generic", _generic, types=("int8", "int16", "float32")),),
        check=check,
        reference="TFLite Micro elementwise.cc: AbsEvalQuantized (int8 as a 256-entry table, int16), std::abs (float32)",
        inplace=True,
    ),
)
