"""LOGICAL_AND and LOGICAL_OR: elementwise and / or of two bool tensors, NumPy broadcasting.

Import: TFLite LOGICAL_AND, LOGICAL_OR; ONNX And, Or (ONNX Xor is NOT_EQUAL of bools).
Semantics: TFLite Micro's logical.cc (BinaryFunction / BroadcastBinaryFunction4DSlow of x && y,
x || y).
"""

from __future__ import annotations

from tvm import tirx

from ..ir import Graph, Operator
from ..kernels.kerneldef import KernelDef
from ..kernels.target import Target
from . import elementwise
from .base import OpDef, SourceOp, Variant


def check(g: Graph, op: Operator) -> None:
    elementwise.check_binary(g, op, ("bool",))


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    combine = tirx.And if op.kind == "logical_and" else tirx.Or
    return elementwise.kernel(g, op, lambda v: combine(v[0], v[1]))


OPS = tuple(
    OpDef(
        kind=kind,
        summary=f"elementwise {word} of two bool tensors",
        tflite=(SourceOp(kind.upper(), elementwise.tflite_rule(kind), ("bool",), "broadcasting"),),
        onnx=(SourceOp(onnx, elementwise.onnx_rule(kind), ("bool",), "broadcasting"),),
        variants=(Variant("generic", _generic, types=("bool",)),),
        check=check,
        reference=f"TFLite Micro logical.cc: Logical{word.capitalize()} of bool",
    )
    for kind, onnx, word in (("logical_and", "And", "and"), ("logical_or", "Or", "or"))
)
