"""SUB: elementwise difference of two tensors with NumPy broadcasting, with a fused activation.

Import: TFLite SUB; ONNX Sub.
Semantics: TFLite Micro's sub.cc. int8 and int16 (zero points 0) take the general quantized
path (reference_ops::Sub / BroadcastQuantSubSlow): both inputs shifted left by 20 (int16: 15)
bits, rescaled, subtracted, rescaled to the output, with ADD's rescaling factors. float32
a - b, int32 a - b wrapping, both with the fused activation.
"""

from __future__ import annotations

from ..ir import Graph, Operator
from ..kernels.kerneldef import KernelDef
from ..kernels.requant import float_clamp
from ..kernels.target import Target
from . import elementwise
from .base import OpDef, SourceOp, Variant

TYPES = ("int8", "int16", "float32", "int32")


def check(g: Graph, op: Operator) -> None:
    if elementwise.check_binary(g, op, TYPES) in ("int8", "int16"):
        elementwise.add_sub_params(g, op)


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    dtype = g.tensors[op.inputs[0]].dtype
    act = op.attrs["activation"]
    f: elementwise.ElementFn
    if dtype in ("int8", "int16"):
        f = elementwise.add_sub(g, op, lambda p, q: p - q)
    elif dtype == "int32":
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
        tflite=(SourceOp("SUB", elementwise.tflite_rule("sub", "SubOptions"), TYPES,
                         "broadcasting; fused activation NONE/RELU/RELU6/RELU_N1_TO_1; int16 zero points 0"),),
        onnx=(SourceOp("Sub", elementwise.onnx_rule("sub", {"activation": "none"}), ("float32",), "broadcasting"),),
        variants=(Variant("generic", _generic, types=TYPES),),
        check=check,
        reference="TFLite Micro sub.cc: reference_ops::Sub/BroadcastQuantSubSlow (int8, int16),"
                  " SubWithActivation/BroadcastSubSlow (float32, int32)",
        fuses_activation=True,
    ),
)
