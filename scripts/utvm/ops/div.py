"""DIV: elementwise quotient of two float32 tensors with NumPy broadcasting, fused activation.

Import: TFLite DIV (float32); ONNX Div.
Semantics: TFLite Micro's div.cc, reference_ops::Div / BroadcastDivSlow for float32: a / b,
clamped to the activation range.
"""

from __future__ import annotations

from ..ir import Graph, Operator
from ..kernels.kerneldef import KernelDef
from ..kernels.requant import float_clamp
from ..kernels.target import Target
from . import elementwise
from .base import OpDef, SourceOp, Variant


def check(g: Graph, op: Operator) -> None:
    elementwise.check_binary(g, op, ("float32",))


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    act = op.attrs["activation"]
    return elementwise.kernel(g, op, lambda v: float_clamp(v[0] / v[1], act))


OPS = (
    OpDef(
        kind="div",
        summary="elementwise quotient",
        tflite=(SourceOp("DIV", elementwise.tflite_rule("div", "DivOptions"), ("float32",),
                         "broadcasting; fused activation NONE/RELU/RELU6/RELU_N1_TO_1"),),
        onnx=(SourceOp("Div", elementwise.onnx_rule("div", {"activation": "none"}), ("float32",), "broadcasting"),),
        variants=(Variant("generic", _generic, types=("float32",)),),
        check=check,
        reference="TFLite Micro div.cc: reference_ops::Div/BroadcastDivSlow (float32)",
        fuses_activation=True,
    ),
)
