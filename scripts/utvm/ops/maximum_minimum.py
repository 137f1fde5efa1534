"""MAXIMUM and MINIMUM: elementwise max / min of two tensors, with NumPy broadcasting.

Import: TFLite MAXIMUM, MINIMUM; ONNX Max, Min (two inputs; one input is a copy).
Semantics: TFLite Micro's maximum_minimum.cc: the stored values are compared as they are (no
requantization, even if the quantization parameters differ; the converter gives both inputs
and the output the same ones).
"""

from __future__ import annotations

from typing import Any

from tvm import te

from ..ir import Graph, Operator
from ..kernels.kerneldef import KernelDef
from ..kernels.target import Target
from . import elementwise
from .base import OpDef, SourceOp, Variant

TYPES = ("int8", "int16", "float32", "int32")


def check(g: Graph, op: Operator) -> None:
    elementwise.check_binary(g, op, TYPES)


def from_onnx(imp: Any, node: Any) -> None:
    """Max / Min of two operands; of one, the operand itself."""
    operands = [v for v in node.input if v]
    if len(operands) == 1 and operands[0] not in imp.consts:
        imp.vals[node.output[0]] = dict(imp.vals[operands[0]])
        return
    if len(operands) != 2:
        raise imp.fail(f"{node.op_type} of {len(operands)} inputs is not supported (only 1 or 2)")
    elementwise.onnx_emit(imp, node, "maximum" if node.op_type == "Max" else "minimum", operands, {})


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    pick = te.max if op.kind == "maximum" else te.min
    return elementwise.kernel(g, op, lambda v: pick(v[0], v[1]))


OPS = tuple(
    OpDef(
        kind=kind,
        summary=f"elementwise {word} of two tensors",
        tflite=(SourceOp(kind.upper(), elementwise.tflite_rule(kind), TYPES, "broadcasting"),),
        onnx=(SourceOp(onnx, from_onnx, ("float32",), "1 or 2 inputs, broadcasting"),),
        variants=(Variant("generic", _generic, types=TYPES),),
        check=check,
        reference=f"TFLite Micro maximum_minimum.cc: MaximumMinimumBroadcastSlow with {word} of the stored values",
    )
    for kind, onnx, word in (("maximum", "Max", "max"), ("minimum", "Min", "min"))
)
