"""EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL: elementwise comparisons with
NumPy broadcasting, producing bool.

Import: the TFLite builtins; ONNX Equal, Less, LessOrEqual, Greater, GreaterOrEqual (float32),
and Xor (bool inequality).
Semantics: TFLite Micro's comparisons.cc. int8 compares both inputs rescaled to a common scale
(ComparisonWithScaling: offset, shifted left by 8 bits, MultiplyByQuantizedMultiplierSmallerThanOneExp
by the input's own scale); float32, int32 and bool (EQUAL, NOT_EQUAL) compare the stored values.
int16 is refused: TFLite Micro computes no rescaling parameters for it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tvm import tirx

from ..ir import Graph, Operator
from ..kernels import fixedpoint as fp
from ..kernels.kerneldef import KernelDef
from ..kernels.target import Target
from . import elementwise
from .base import OpDef, OpError, SourceOp, Validation, Variant

#: kind -> (TFLite builtin, ONNX operator, comparison)
KINDS: dict[str, tuple[str, str, Callable[[Any, Any], Any]]] = {
    "equal": ("EQUAL", "Equal", tirx.EQ),
    "not_equal": ("NOT_EQUAL", "Xor", tirx.NE),
    "less": ("LESS", "Less", tirx.LT),
    "less_equal": ("LESS_EQUAL", "LessOrEqual", tirx.LE),
    "greater": ("GREATER", "Greater", tirx.GT),
    "greater_equal": ("GREATER_EQUAL", "GreaterOrEqual", tirx.GE),
}
LEFT_SHIFT = 8


def _types(kind: str) -> tuple[str, ...]:
    return ("int8", "float32", "int32", "bool") if kind in ("equal", "not_equal") else ("int8", "float32", "int32")


def check(g: Graph, op: Operator) -> None:
    if elementwise.check_binary(g, op, _types(op.kind), out="bool") == "int8":
        _params(g, op)


def _params(g: Graph, op: Operator) -> list[tuple[int, int]]:
    """(multiplier, shift) of each input's scale (QuantizeMultiplierSmallerThanOneExp)."""
    pairs = []
    for name in op.inputs:
        t = g.tensors[name]
        assert t.quant
        m, shift = fp.quantize_multiplier(t.quant.scalar()[0])
        if shift > 0:
            raise OpError(f"{op.source}: input scale {t.quant.scalar()[0]:.4g} is not below 1"
                          " (TFLite Micro refuses it too)")
        pairs.append((m, shift))
    return pairs


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    compare = KINDS[op.kind][2]
    a, b = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]]
    if a.dtype != "int8":
        return elementwise.kernel(g, op, lambda v: compare(v[0], v[1]))
    assert a.quant and b.quant
    (ma, sha), (mb, shb) = _params(g, op)
    za, zb = a.quant.scalar()[1], b.quant.scalar()[1]

    def f(v):  # type: ignore[no-untyped-def]
        return compare(elementwise.rescaled(v[0], za, LEFT_SHIFT, ma, sha, "int8"),
                       elementwise.rescaled(v[1], zb, LEFT_SHIFT, mb, shb, "int8"))
    return elementwise.kernel(g, op, f)


OPS = tuple(
    OpDef(
        kind=kind,
        summary=f"elementwise a {symbol} b (bool)",
        tflite=(SourceOp(builtin, elementwise.tflite_rule(kind), _types(kind), "broadcasting; bool output"),),
        onnx=(SourceOp(onnx, elementwise.onnx_rule(kind), ("bool",) if onnx == "Xor" else ("float32",),
                       "broadcasting; bool output"),),
        variants=(Variant("generic", _generic, types=_types(kind)),),
        check=check,
        reference=f"TFLite Micro comparisons.cc: {builtin.title().replace('_', '')}WithScaling (int8),"
                  f" {builtin.title().replace('_', '')}NoScaling (other types)",
    )
    for kind, (builtin, onnx, _), symbol in zip(KINDS, KINDS.values(), ("==", "!=", "<", "<=", ">", ">="))
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("_params", "int8 comparison with an input scale of 1 or more",
               "QuantizeMultiplierSmallerThanOneExp: `TFLITE_CHECK_LT(multiplier, 1)` aborts [k/comparisons.cc:569-574]",
               "refused-by-TFLM", "kept"),
)
