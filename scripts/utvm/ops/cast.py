"""CAST (ONNX Cast): each element converted to another type.

Import: TFLite CAST between int8, int16, int32, float32 and bool (the pairs TFLite Micro's
cast.cc takes); ONNX Cast between float32 and bool.
Semantics: C's conversion, as TFLite Micro's static_cast: float to integer truncates toward
zero, integers narrow by wrapping, anything to bool is x != 0, bool to numbers is 0 or 1.
Quantization parameters are ignored, as TFLite Micro does.
"""

from __future__ import annotations

from typing import Any

from tvm import tirx

from ..ir import Graph, Operator
from ..kernels.kerneldef import KernelDef
from ..kernels.target import Target
from .base import OpDef, OpError, SourceOp, Validation, Variant
from .common import io
from .unary import expr_kernel, tflite_rule

TYPES = ("int8", "int16", "int32", "float32", "bool")
#: ONNX TensorProto element types utvm holds
ONNX_TYPES = {1: "float32", 9: "bool"}


def from_onnx(imp: Any, node: Any) -> None:
    to = int(imp.attrs(node).get("to", 0))
    if to not in ONNX_TYPES:
        raise imp.fail(f"Cast to element type {to} is not supported (only float and bool)")
    x, layout = imp.any_layout(node.input[0])
    imp.emit("cast", [x], node.output[0], layout)


def check(g: Graph, op: Operator) -> None:
    x, y = io(g, op)
    if x.dtype not in TYPES or y.dtype not in TYPES:
        raise OpError(f"{op.source}: CAST from {x.dtype} to {y.dtype} is not supported")
    if x.size != y.size:
        raise OpError(f"{op.source}: input shape {list(x.shape)} and output shape {list(y.shape)} differ")


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x, y = io(g, op)
    if y.dtype == "bool":
        return expr_kernel(g, op, lambda v: v if x.dtype == "bool" else tirx.NE(v, tirx.const(0, x.dtype)))
    return expr_kernel(g, op, lambda v: v.astype(y.dtype))


OPS = (
    OpDef(
        kind="cast",
        summary="elementwise type conversion",
        tflite=(SourceOp("CAST", tflite_rule("cast"), TYPES, "to int8, int16, int32, float32 or bool"),),
        onnx=(SourceOp("Cast", from_onnx, ("float32", "bool"), "to float or bool"),),
        variants=(Variant("generic", _generic, types=TYPES),),
        check=check,
        reference="TFLite Micro cast.cc: static_cast of each element",
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "CAST between types outside the supported pairs",
               '`MicroPrintf("Input/Output type %s not supported")` [k/cast.cc:74,110]',
               "refused-by-TFLM", "kept"),
    Validation("check", "CAST input and output element counts differ",
               "no check; copies NumElements(input) values into the output (overflow) [k/cast.cc]",
               "would-compute-differently", "kept"),
)
