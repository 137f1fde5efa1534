"""FILL (ONNX ConstantOfShape): a tensor of the output's shape holding one value everywhere.

Import: TFLite FILL (the dims a constant 1-D int8/int16/int32/int64 tensor equal to the output's
shape, the value a scalar of the output's type: int8, int32 or float32, as TFLite Micro's
kernel). ONNX ConstantOfShape needs a constant shape in a static model, so the ONNX importer
evaluates it at import time (a constant, no operator).
Semantics: TFLite Micro's fill.cc (reference_ops::Fill): every output element the value's
element as it is (int8: the raw value; quantization parameters are not read).
"""

from __future__ import annotations

from typing import Any

from ..ir import Graph, Operator
from ..kernels.kerneldef import KernelDef
from ..kernels.target import Target
from .base import OpDef, OpError, SourceOp, Validation, Variant
from .zeros_like import uniform_kernel

_TYPES = ("int8", "int32", "float32")
_DIMS_TYPES = ("int8", "int16", "int32", "int64")


def from_tflite(ctx: Any, node: Any) -> None:
    if len(node.inputs) != 2 or len(node.outputs) != 1:
        raise ctx.fail(node, f"expects 2 inputs and 1 output, has {len(node.inputs)} and {len(node.outputs)}")
    dims, y = ctx.tensors[node.inputs[0]], ctx.tensors[node.outputs[0]]
    if dims.data is None:
        raise ctx.fail(node, "Non-constant dims tensor is not supported")
    if dims.dtype not in _DIMS_TYPES or len(dims.shape) != 1:
        raise ctx.fail(node, f"the dims must be a 1-D integer tensor, got {dims.dtype}{list(dims.shape)}")
    if [int(v) for v in dims.data] != list(y.shape):
        raise ctx.fail(node, f"the dims {[int(v) for v in dims.data]} are not the output's shape {list(y.shape)}")
    ctx.emit(node, "fill", [node.inputs[1]], node.outputs)


def check(g: Graph, op: Operator) -> None:
    """FillPrepare and FillEval: a scalar value of the output's type, int8, int32 or float32."""
    v, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    if len(v.shape) != 0:
        raise OpError(f"{op.source}: the value must be a scalar, has shape {list(v.shape)}")
    if v.dtype not in _TYPES or y.dtype != v.dtype:
        raise OpError(f"{op.source}: unsupported data types {v.dtype} value -> {y.dtype} (int8, int32, float32)")


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    return uniform_kernel(g, op, lambda V: V[0])


OPS = (
    OpDef(
        kind="fill",
        summary="one scalar value in every element of the output",
        tflite=(SourceOp("FILL", from_tflite, _TYPES, "constant dims equal to the output's shape; scalar value"),),
        variants=(Variant("generic", _generic, types=_TYPES),),
        check=check,
        reference="TFLite Micro fill.cc: reference_ops::Fill",
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "value not a scalar",
               "`TF_LITE_ENSURE_EQ(NumDimensions(value), 0)` [k/fill.cc:82]",
               "refused-by-TFLM", "kept"),
    Validation("check", "value type other than int8/int32/float32, or output of another type than the value",
               '`TF_LITE_ENSURE_EQ(value->type, output->type)` [k/fill.cc:85]; Eval\'s `MicroPrintf("Fill only currently supports float32 ...")` for other value types [k/fill.cc:124-127]',
               "refused-by-TFLM", "kept"),
    Validation("from_tflite", "FILL without 2 inputs and 1 output",
               "missing ones: `TF_LITE_ENSURE(dims/value/output != nullptr)` [k/fill.cc:73-79] (extra ones are not read: see *Left*)",
               "refused-by-TFLM", "kept", rule=True),
    Validation("from_tflite", "FILL dims not constant",
               '`TF_LITE_ENSURE_MSG(IsConstantTensor(dims), "Non-constant >dims< tensor is not supported")` [k/fill.cc:90]',
               "refused-by-TFLM", "kept", rule=True),
    Validation("from_tflite", "FILL dims not a 1-D int8/int16/int32/int64 tensor",
               'EnsureEq: `TF_LITE_ENSURE_EQ(NumDimensions(tensor), 1)`, `MicroPrintf("cannot compare int array to tensor of type %d.")` [k/fill.cc:43-59]',
               "refused-by-TFLM", "kept", rule=True),
    Validation("from_tflite", "FILL dims other than the output's shape",
               "EnsureEq: `TF_LITE_ENSURE_EQ(array->size, tensor_len)`, per value `TF_LITE_ENSURE_EQ` [k/fill.cc:34,45,94]",
               "refused-by-TFLM", "kept", rule=True),
)
