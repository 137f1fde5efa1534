"""SQUARED_DIFFERENCE: (a - b)**2 elementwise, with NumPy broadcasting.

Import: TFLite SQUARED_DIFFERENCE.
Semantics: TFLite Micro's squared_difference.cc: int8 inputs shifted left by 7 bits (int16,
zero points 0: not shifted), rescaled to a common scale (factors below 1, in double), the
difference squared in int32 and brought to the output scale with MultiplyByQuantizedMultiplier
by (2 * max scale)**2 / (2**(2 * shift) * output scale); float32 and int32 (wrapping) (a - b) * (a - b).
"""

from __future__ import annotations

from ..ir import Graph, Operator
from ..kernels import fixedpoint as fp
from ..kernels.kerneldef import KernelDef
from ..kernels.requant import scale_const
from ..kernels.target import Target
from . import elementwise
from .base import OpDef, OpError, SourceOp, Validation, Variant

TYPES = ("int8", "int16", "float32", "int32")
#: the left shift of both quantized inputs (TFLite's SquaredDifferencePrepare)
LEFT_SHIFT = {"int8": 7, "int16": 0}


def check(g: Graph, op: Operator) -> None:
    if elementwise.check_binary(g, op, TYPES) in LEFT_SHIFT:
        _params(g, op)


def _params(g: Graph, op: Operator) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int]]:
    a, b, y = (g.tensors[n] for n in (*op.inputs, op.outputs[0]))
    assert a.quant and b.quant and y.quant
    sa, sb, sy = a.quant.scalar()[0], b.quant.scalar()[0], y.quant.scalar()[0]
    twice_max = 2.0 * max(sa, sb)
    ma, mb = fp.quantize_multiplier(sa / twice_max), fp.quantize_multiplier(sb / twice_max)
    if ma[1] > 0 or mb[1] > 0:
        raise OpError(f"{op.source}: input rescaling factors not below 1")
    return ma, mb, fp.quantize_multiplier(twice_max * twice_max / ((1 << 2 * LEFT_SHIFT[y.dtype]) * sy))


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    a, b, y = (g.tensors[n] for n in (*op.inputs, op.outputs[0]))
    f: elementwise.ElementFn
    if a.dtype in LEFT_SHIFT:
        za, zb, zy = elementwise.zero_points(g, op)
        shift_in = LEFT_SHIFT[a.dtype]
        (ma, sha), (mb, shb), (my, shy) = _params(g, op)
        lo, hi = elementwise.qrange(y.dtype)
        # each rescaled input is at most half its shifted bound: the square stays below 2**31
        half = (elementwise.OFFSET_BOUND[a.dtype] << shift_in) // 2 + 1

        def f(v):  # type: ignore[no-untyped-def]
            diff = (elementwise.rescaled(v[0], za, shift_in, ma, sha, a.dtype)
                    - elementwise.rescaled(v[1], zb, shift_in, mb, shb, a.dtype))
            return elementwise.clamp_to(scale_const(diff * diff, my, shy, 4 * half * half) + zy, lo, hi, y.dtype)
    elif a.dtype == "int32":
        def f(v):  # type: ignore[no-untyped-def]
            diff = elementwise.wrapping(v[0], v[1], lambda p, q: p - q)
            return elementwise.wrapping(diff, diff, lambda p, q: p * q)
    else:
        def f(v):  # type: ignore[no-untyped-def]
            diff = v[0] - v[1]
            return diff * diff
    return elementwise.kernel(g, op, f)


OPS = (
    OpDef(
        kind="squared_difference",
        summary="(a - b) ** 2 elementwise",
        tflite=(SourceOp("SQUARED_DIFFERENCE", elementwise.tflite_rule("squared_difference"), TYPES,
                         "broadcasting; int16 zero points 0"),),
        variants=(Variant("generic", _generic, types=TYPES),),
        check=check,
        reference="TFLite Micro squared_difference.cc (quantized: SquaredDifference with left shift 7 / 0)",
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("_params", "int8 SQUARED_DIFFERENCE input rescaling factor not below 1",
               "QuantizeMultiplierSmallerThanOneExp aborts [k/squared_difference.cc]",
               "refused-by-TFLM", "kept"),
)
