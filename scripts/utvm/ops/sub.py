"""SUB: elementwise difference of two tensors with NumPy broadcasting, with a fused activation.

Import: TFLite SUB; ONNX Sub.
Semantics: TFLite Micro's sub.cc. int8 and int16 (zero points 0) take the general quantized
path (reference_ops::Sub / BroadcastQuantSubSlow): both inputs shifted left by 20 (int16: 15)
bits, rescaled, subtracted, rescaled to the output; unlike ADD, CalculateOpDataSub computes the
three rescaling factors in float32 arithmetic. float32 a - b, int32 a - b wrapping, both with
the fused activation.
"""

from __future__ import annotations

import numpy as np

from ..ir import Graph, Operator
from ..lower import fixedpoint as fp
from ..lower.kerneldef import KernelDef
from ..lower.requant import float_clamp, scale_const
from ..lower.target import Target
from . import elementwise
from .base import OpDef, OpError, SourceOp, Variant

#: the left shift of both quantized inputs (TFLite's CalculateOpDataSub)
LEFT_SHIFT = {"int8": 20, "int16": 15}


def check(g: Graph, op: Operator) -> None:
    if elementwise.check_binary(g, op, ("int8", "int16", "float32", "int32")) in LEFT_SHIFT:
        _params(g, op)


def _params(g: Graph, op: Operator) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int]]:
    """((ma, sha), (mb, shb), (my, shy)) as CalculateOpDataSub computes them (float32 products)."""
    a, b, y = (g.tensors[n] for n in (*op.inputs, op.outputs[0]))
    assert a.quant and b.quant and y.quant
    sa, sb, sy = (np.float32(t.quant.scalar()[0]) for t in (a, b, y))
    twice_max = np.float32(2) * max(sa, sb)
    reals = (float(sa / twice_max), float(sb / twice_max),
             float(twice_max / (np.float32(1 << LEFT_SHIFT[y.dtype]) * sy)))
    pairs = tuple(fp.quantize_multiplier(r) for r in reals)
    if any(shift > 0 for _, shift in pairs):
        raise OpError(f"{op.source}: output scale {float(sy):.3g} too small for the input scales"
                      " (TFLite Micro refuses these quantization parameters too)")
    return pairs[0], pairs[1], pairs[2]


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    a, b, y = (g.tensors[n] for n in (*op.inputs, op.outputs[0]))
    act = op.attrs["activation"]
    f: elementwise.ElementFn
    if a.dtype in LEFT_SHIFT:
        za, zb, zy = elementwise.zero_points(g, op)
        left_shift = LEFT_SHIFT[a.dtype]
        (ma, sha), (mb, shb), (my, shy) = _params(g, op)
        lo, hi = elementwise.activation_range(act, y)
        bound = elementwise.OFFSET_BOUND[a.dtype] << left_shift

        def f(v):  # type: ignore[no-untyped-def]
            va = elementwise.rescaled(v[0], za, left_shift, ma, sha, a.dtype)
            vb = elementwise.rescaled(v[1], zb, left_shift, mb, shb, a.dtype)
            return elementwise.clamp_to(scale_const(va - vb, my, shy, 2 * bound + 2) + zy, lo, hi, y.dtype)
    elif a.dtype == "int32":
        def f(v):  # type: ignore[no-untyped-def]
            return elementwise.int32_clamp(elementwise.wrapping(v[0], v[1], lambda p, q: p - q), act)
    else:
        def f(v):  # type: ignore[no-untyped-def]
            return float_clamp(v[0] - v[1], act)
    return elementwise.kernel(g, op, f)


OPS = (
    OpDef(
        kind="sub",
        summary="elementwise difference",
        tflite=(SourceOp("SUB", elementwise.tflite_rule("sub", "SubOptions"), ("int8", "int16", "float32", "int32"),
                         "broadcasting; fused activation NONE/RELU/RELU6/RELU_N1_TO_1; int16 zero points 0"),),
        onnx=(SourceOp("Sub", elementwise.onnx_rule("sub", {"activation": "none"}), ("float32",), "broadcasting"),),
        variants=(Variant("generic", _generic, types=("int8", "int16", "float32", "int32")),),
        check=check,
        reference="TFLite Micro sub.cc: reference_ops::Sub/BroadcastQuantSubSlow (int8, int16),"
                  " SubWithActivation/BroadcastSubSlow (float32, int32)",
        fuses_activation=True,
    ),
)
