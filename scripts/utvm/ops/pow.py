"""POW (ONNX Pow): a ** b elementwise for float32, with NumPy broadcasting.

Import: ONNX Pow (float32 base and exponent). TFLite Micro has no POW kernel.
Semantics: C's powf of every pair (onnxruntime's float32 Pow within 1e-5 relative); a constant
exponent of exactly 2 is a product.
"""

from __future__ import annotations

from tvm import te

from ..ir import Graph, Operator
from ..kernels.kerneldef import KernelDef
from ..kernels.target import Target
from . import elementwise
from .base import OpDef, SourceOp, Variant


def check(g: Graph, op: Operator) -> None:
    elementwise.check_binary(g, op, ("float32",))


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    exponent = g.tensors[op.inputs[1]]
    if exponent.data is not None and exponent.size == 1 and float(exponent.data.reshape(-1)[0]) == 2.0:
        return elementwise.kernel(g, op, lambda v: v[0] * v[0], operands=(0,))
    return elementwise.kernel(g, op, lambda v: te.power(v[0], v[1]))


OPS = (
    OpDef(
        kind="pow",
        summary="a ** b elementwise",
        onnx=(SourceOp("Pow", elementwise.onnx_rule("pow"), ("float32",), "float32 exponent; broadcasting"),),
        variants=(Variant("generic", _generic, types=("float32",)),),
        check=check,
        reference="ONNX Pow (onnxruntime), C powf",
    ),
)
