"""MUL: elementwise product of two tensors with NumPy broadcasting, with a fused activation.

Import: TFLite MUL; ONNX Mul.
Semantics: TFLite Micro's mul.cc (reference_integer_ops::Mul / BroadcastMul6DSlow): for int8
and int16 (zero points 0) the product of the offset inputs, MultiplyByQuantizedMultiplier by
scale_a * scale_b / scale_y (in double), plus the output zero point, clamped to the activation
range; float32 a * b with the fused activation; int32 a * b wrapping, with the activation.
"""

from __future__ import annotations

from ..ir import Graph, Operator
from ..kernels import fixedpoint as fp
from ..kernels.kerneldef import KernelDef
from ..kernels.requant import I32, float_clamp, scale_const
from ..kernels.target import Target
from . import elementwise
from .base import OpDef, SourceOp, Variant

TYPES = ("int8", "int16", "float32", "int32")


def check(g: Graph, op: Operator) -> None:
    elementwise.check_binary(g, op, TYPES)


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    a, b, y = (g.tensors[n] for n in (*op.inputs, op.outputs[0]))
    act = op.attrs["activation"]
    f: elementwise.ElementFn
    if a.dtype in ("int8", "int16"):
        assert a.quant and b.quant and y.quant
        (sa, za), (sb, zb), (sy, zy) = a.quant.scalar(), b.quant.scalar(), y.quant.scalar()
        m, shift = fp.quantize_multiplier(float(sa) * float(sb) / float(sy))
        lo, hi = elementwise.activation_range(act, y)
        bound = elementwise.OFFSET_BOUND[a.dtype] ** 2

        def f(v):  # type: ignore[no-untyped-def]
            prod = (v[0].astype(I32) - za) * (v[1].astype(I32) - zb)
            return elementwise.clamp_to(scale_const(prod, m, shift, bound) + zy, lo, hi, y.dtype)
    elif a.dtype == "int32":
        def f(v):  # type: ignore[no-untyped-def]
            return elementwise.int32_clamp(elementwise.wrapping(v[0], v[1], lambda p, q: p * q), act)
    else:
        def f(v):  # type: ignore[no-untyped-def]
            return float_clamp(v[0] * v[1], act)
    return elementwise.kernel(g, op, f)


OPS = (
    OpDef(
        kind="mul",
        summary="elementwise product",
        tflite=(SourceOp("MUL", elementwise.tflite_rule("mul", "MulOptions"), TYPES,
                         "broadcasting; fused activation NONE/RELU/RELU6/RELU_N1_TO_1; int16 zero points 0"),),
        onnx=(SourceOp("Mul", elementwise.onnx_rule("mul", {"activation": "none"}), ("float32",), "broadcasting"),),
        variants=(Variant("generic", _generic, types=TYPES),),
        check=check,
        reference="TFLite Micro mul.cc: reference_integer_ops::Mul/BroadcastMul6DSlow (int8, int16),"
                  " reference_ops::Mul/BroadcastMul6DSlow (float32, int32)",
        fuses_activation=True,
    ),
)
