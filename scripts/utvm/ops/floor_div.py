"""FLOOR_DIV and FLOOR_MOD: the floored quotient and remainder of two float32 tensors, with
NumPy broadcasting.

Import: TFLite FLOOR_DIV, FLOOR_MOD (float32, as TFLite Micro).
Semantics: TFLite Micro's floor_div.cc and floor_mod.cc: floor(a / b) with the division in
double (a float32 quotient could round up to the next integer), and fmodf(a, b) moved to the
sign of b (b added when the remainder is nonzero and its sign differs from b's).
"""

from __future__ import annotations

from tvm import te, tirx

from ..ir import Graph, Operator
from ..kernels.kerneldef import KernelDef
from ..kernels.target import Target
from . import elementwise
from .base import OpDef, SourceOp, Variant


def check(g: Graph, op: Operator) -> None:
    elementwise.check_binary(g, op, ("float32",))


def _floor_div(v):  # type: ignore[no-untyped-def]
    return te.floor(v[0].astype("float64") / v[1].astype("float64")).astype("float32")


def _floor_mod(v):  # type: ignore[no-untyped-def]
    a, b = v
    zero = tirx.const(0.0, "float32")
    mod = tirx.call_pure_extern("float32", "fmodf", a, b)
    moves = tirx.And(tirx.NE(mod, zero), tirx.NE(tirx.LT(b, zero), tirx.LT(mod, zero)))
    return tirx.Select(moves, mod + b, mod)


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    return elementwise.kernel(g, op, _floor_div if op.kind == "floor_div" else _floor_mod)


OPS = tuple(
    OpDef(
        kind=kind,
        summary=summary,
        tflite=(SourceOp(kind.upper(), elementwise.tflite_rule(kind), ("float32",), "broadcasting"),),
        variants=(Variant("generic", _generic, types=("float32",)),),
        check=check,
        reference=f"TFLite Micro {kind}.cc: reference_ops::{name} (float32)",
    )
    for kind, name, summary in (("floor_div", "FloorDiv", "floor(a / b) elementwise"),
                                ("floor_mod", "FloorMod", "a - floor(a / b) * b elementwise"))
)
