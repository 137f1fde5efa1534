"""RESHAPE: the same bytes seen with another shape. No kernel: the memory planner gives the
output the input's bytes (an alias).

Import: TFLite RESHAPE, SQUEEZE, EXPAND_DIMS; ONNX Reshape (constant shape), Flatten, Squeeze,
Unsqueeze; ONNX Identity and Dropout (inference) only rename a value and add no operator.
Semantics: row-major element order is kept (TFLite Micro's reshape.cc copies when the buffers
differ, which they never do here).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ir import PLAIN, Graph, Operator
from .base import Channels, OpDef, OpError, SourceOp, Validation


def view(x: str, out: str, source: str) -> Operator:
    """``out``, the bytes of ``x`` under ``out``'s shape (the importers' views)."""
    return Operator("reshape", [x], [out], {}, source=source)


def from_tflite(ctx: Any, node: Any) -> None:
    x, y = ctx.tensors[node.inputs[0]], ctx.tensors[node.outputs[0]]
    if x.size != y.size:
        raise ctx.fail(node, f"reshape from {list(x.shape)} to {list(y.shape)} changes the element count")
    ctx.emit(node, "reshape", [node.inputs[0]], node.outputs)


def _reshape_to(imp: Any, x_value: str, out: str) -> None:
    x = imp.get(x_value, PLAIN)
    if imp.tensors[x].size != int(np.prod(imp.shape(out), dtype=np.int64)):
        raise imp.fail(f"reshape from {list(imp.shape(x_value))} to {list(imp.shape(out))} changes the element count")
    imp.emit("reshape", [x], out, PLAIN)


def from_onnx_reshape(imp: Any, node: Any) -> None:
    if len(node.input) > 1:
        imp.const(node.input[1], "shape")
    _reshape_to(imp, node.input[0], node.output[0])


def from_onnx_flatten(imp: Any, node: Any) -> None:
    _reshape_to(imp, node.input[0], node.output[0])


def from_onnx_squeeze(imp: Any, node: Any) -> None:
    """Squeeze / Unsqueeze: the output shape (from shape inference) says which axes go or come."""
    if len(node.input) > 1 and node.input[1]:
        imp.const(node.input[1], "axes")
    _reshape_to(imp, node.input[0], node.output[0])


def from_onnx_identity(imp: Any, node: Any) -> None:
    x, out = node.input[0], node.output[0]
    if node.op_type == "Dropout" and len([o for o in node.output if o]) > 1:
        raise imp.fail("the mask output of Dropout is not supported")
    if x in imp.consts:
        imp.consts[out] = imp.consts[x]
        return
    imp.vals[out] = dict(imp.vals[x])


def check(g: Graph, op: Operator) -> None:
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    if x.size != y.size or x.dtype != y.dtype:
        raise OpError(f"{op.source}: reshape from {x.dtype}{list(x.shape)} to {y.dtype}{list(y.shape)} "
                      "changes the element count or type")


_ANY = ("int8", "int16", "int32", "float32")
OPS = (
    OpDef(
        kind="reshape",
        summary="view the same bytes with another shape (no kernel)",
        tflite=(SourceOp("RESHAPE", from_tflite, _ANY),
                SourceOp("SQUEEZE", from_tflite, _ANY),
                SourceOp("EXPAND_DIMS", from_tflite, _ANY, "constant axis")),
        onnx=(SourceOp("Reshape", from_onnx_reshape, ("float32",), "constant shape", qdq="passthrough"),
              SourceOp("Flatten", from_onnx_flatten, ("float32",), qdq="passthrough"),
              SourceOp("Squeeze", from_onnx_squeeze, ("float32",), "constant axes", qdq="passthrough"),
              SourceOp("Unsqueeze", from_onnx_squeeze, ("float32",), "constant axes", qdq="passthrough"),
              SourceOp("Identity", from_onnx_identity, ("float32",), qdq="passthrough"),
              SourceOp("Dropout", from_onnx_identity, ("float32",), "inference, no mask output")),
        check=check,
        reference="TFLite Micro reshape.cc, squeeze.cc, expand_dims.cc (copies there, an alias here)",
        alias=True,
        rearranges=True,
        # the channel axis is kept when the element counts before it are
        channels=Channels("passes", lambda g, op: int(np.prod(g.tensors[op.inputs[0]].shape[:-1]))
                          == int(np.prod(g.tensors[op.outputs[0]].shape[:-1]))),
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "RESHAPE changes the element count or type",
               "`TF_LITE_ENSURE_TYPES_EQ(input, output)`, `TF_LITE_ENSURE_EQ(num_input_elements, num_output_elements)` [k/reshape_common.cc:77-78]",
               "refused-by-TFLM", "kept"),
    Validation("from_tflite", "RESHAPE changes the element count",
               "`TF_LITE_ENSURE_EQ(num_input_elements, num_output_elements)` [k/reshape_common.cc:78]",
               "refused-by-TFLM", "kept", rule=True),
)
