"""ELU (ONNX Elu): x if x >= 0 else alpha * (exp(x) - 1); TFLite's alpha is 1.

Import: TFLite ELU; ONNX Elu (alpha, default 1).
Semantics: TFLite Micro's elu.cc: int8 through the table PopulateLookupTable builds in float32
(exp(x) - 1 of each dequantized value, requantized); float32 as expm1.
"""

from __future__ import annotations

import numpy as np
from tvm import tirx

from ..ir import Graph, Operator
from ..kernels.kerneldef import KernelDef
from ..kernels.target import Target
from .base import OpDef, SourceOp, Variant
from .unary import check_unary, expr_kernel, float_table, onnx_rule, table_kernel, tflite_rule


def check(g: Graph, op: Operator) -> None:
    check_unary(g, op, ("int8", "float32"))


def _np_elu(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.where(x < 0, np.exp(x) - np.float32(1.0), x).astype(np.float32)


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    if g.tensors[op.inputs[0]].dtype == "int8":
        return table_kernel(g, op, float_table(g, op, _np_elu))
    alpha = float(op.attrs.get("alpha", 1.0))

    def f(v):  # type: ignore[no-untyped-def]
        negative = tirx.call_pure_extern("float32", "expm1f", v)
        if alpha != 1.0:
            negative = tirx.const(alpha, "float32") * negative
        return tirx.Select(v < tirx.const(0.0, "float32"), negative, v)
    return expr_kernel(g, op, f)


OPS = (
    OpDef(
        kind="elu",
        summary="x if x >= 0 else alpha * (exp(x) - 1)",
        tflite=(SourceOp("ELU", tflite_rule("elu"), ("int8", "float32")),),
        onnx=(SourceOp("Elu", onnx_rule("elu", {"alpha": 1.0}), ("float32",)),),
        variants=(Variant("generic", _generic, types=("int8", "float32")),),
        check=check,
        reference="TFLite Micro elu.cc: PopulateLookupTable (int8, a 256-entry table), expm1 (float32)",
        inplace=True,
    ),
)
