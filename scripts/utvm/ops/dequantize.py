"""DEQUANTIZE: int8 or int16 -> float32.

Import: TFLite DEQUANTIZE.
Semantics: TFLite Micro's dequantize.cc: scale * (x - zero point), computed in double and
rounded to float32 as reference_ops::Dequantize does.
"""

from __future__ import annotations

from typing import Any

from tvm import te

from ..ir import Graph, Operator
from ..kernels.kerneldef import KernelArg, KernelDef
from ..kernels.requant import I32, imm
from ..kernels.target import Target
from .base import OpDef, OpError, SourceOp, Validation, Variant
from .common import check_same_size


def from_tflite(ctx: Any, node: Any) -> None:
    ctx.emit(node, "dequantize", [node.inputs[0]], node.outputs)


def from_onnx(imp: Any, node: Any) -> None:
    """DequantizeLinear of an int8 value computed by the model, per tensor (of a constant, it is
    evaluated at import)."""
    imp.quantized_input(node.input[0], node.input[1], node.input[2] if len(node.input) > 2 else None, "input")
    x, layout = imp.any_layout(node.input[0])
    imp.emit("dequantize", [x], node.output[0], layout)


def check(g: Graph, op: Operator) -> None:
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    if x.dtype not in ("int8", "int16") or y.dtype != "float32" or x.quant is None:
        raise OpError(f"{op.source}: DEQUANTIZE from {x.dtype} to {y.dtype} is not supported")
    check_same_size(g, op)


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    assert x.quant is not None
    X = te.placeholder((x.size,), x.dtype, name="x")
    s, z = x.quant.scalar()
    out = te.compute((x.size,), lambda i: ((X[i].astype(I32) - z).astype("float64")
                                           * imm(float(s), "float64")).astype("float32"), name="out")
    return KernelDef([KernelArg(X, tensor=x.name)], out, y.name)


def _step(g: Graph, op: Operator) -> float | None:
    """The quantization step of the float output: the input's scale."""
    src = g.tensors[op.inputs[0]]
    return float(src.quant.scalar()[0]) if src.quant is not None else None


OPS = (
    OpDef(
        kind="dequantize",
        summary="dequantize int8 or int16 to float32",
        tflite=(SourceOp("DEQUANTIZE", from_tflite, ("int8", "int16"), "output float32, per-tensor"),),
        onnx=(SourceOp("DequantizeLinear", from_onnx, ("int8",), "per tensor"),),
        variants=(Variant("generic", _generic),),
        check=check,
        reference="TFLite Micro dequantize.cc: reference_ops::Dequantize",
        per_channel_tensors=True,
        output_step=_step,
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "DEQUANTIZE from a type other than int8/int16 (to float32), or without quantization",
               "`TF_LITE_ENSURE(input int8/int16/uint8)`, `TF_LITE_ENSURE(output float32)` [k/dequantize_common.cc:43-46]",
               "refused-by-TFLM", "kept (uint8: TFLM runs it, utvm has no uint8 tensors)"),
)
