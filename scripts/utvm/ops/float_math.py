"""The float32 functions of one operand: EXP, LOG, SQRT, SQUARE, SIN, COS, NEG, FLOOR,
CEIL, ROUND, and ONNX's Exp, Log, Sqrt, Reciprocal, Sin, Cos, Neg, Floor, Ceil, Round, Erf.

Import: the TFLite builtins and ONNX operators of the table below, float32 only (TFLite Micro's
kernels of these builtins take float32 only).
Semantics: C's float functions (expf, logf, sqrtf, sinf, cosf, floorf, ceilf, erff); ROUND
rounds halves to even (nearbyintf), as TFLite's RoundToNearest and ONNX Round do.
"""

from __future__ import annotations

from collections.abc import Callable

from tvm import te, tirx

from ..ir import Graph, Operator
from ..kernels.fixedpoint import Expr
from ..kernels.kerneldef import KernelDef
from ..kernels.target import Target
from .base import OpDef, SourceOp, Variant
from .unary import check_float, expr_kernel, onnx_rule, tflite_rule


def _one(v: Expr) -> Expr:
    return tirx.const(1.0, "float32")


#: kind -> (TFLite builtin or "", ONNX operator or "", the element's function, in words)
FUNCTIONS: dict[str, tuple[str, str, Callable[[Expr], Expr], str]] = {
    "exp": ("EXP", "Exp", te.exp, "exp(x)"),
    "log": ("LOG", "Log", te.log, "log(x)"),
    "sqrt": ("SQRT", "Sqrt", te.sqrt, "sqrt(x)"),
    "reciprocal": ("", "Reciprocal", lambda v: _one(v) / v, "1 / x"),
    "square": ("SQUARE", "", lambda v: v * v, "x * x"),
    "sin": ("SIN", "Sin", te.sin, "sin(x)"),
    "cos": ("COS", "Cos", te.cos, "cos(x)"),
    "neg": ("NEG", "Neg", lambda v: -v, "-x"),
    "floor": ("FLOOR", "Floor", te.floor, "floor(x)"),
    "ceil": ("CEIL", "Ceil", te.ceil, "ceil(x)"),
    "round": ("ROUND", "Round", te.nearbyint, "x rounded, halves to even"),
    "erf": ("", "Erf", te.erf, "erf(x)"),
}


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    return expr_kernel(g, op, FUNCTIONS[op.kind][2])


OPS = tuple(
    OpDef(
        kind=kind,
        summary=words,
        tflite=(SourceOp(builtin, tflite_rule(kind), ("float32",)),) if builtin else (),
        onnx=(SourceOp(onnx, onnx_rule(kind), ("float32",)),) if onnx else (),
        variants=(Variant("generic", _generic, types=("float32",)),),
        check=check_float,
        reference=f"C float32 {words}" + (f" (TFLite Micro {builtin})" if builtin else "") + (f" (ONNX {onnx})" if onnx else ""),
        inplace=True,
    )
    for kind, (builtin, onnx, _, words) in FUNCTIONS.items()
)
