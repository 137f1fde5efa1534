"""BROADCAST_TO: the input repeated to a larger shape by NumPy's broadcasting rule (the output's
shape: the input's axes aligned to its last ones, each of them 1 or the output's size).

Import: TFLite BROADCAST_TO (every type TFLite Micro's broadcast_to.cc copies that utvm holds:
int8, int16, int32, float32, uint8, int64, bool; a constant 1-D int32 or int64 shape equal to the
output's; up to 5-D); ONNX Expand (constant shape; the output's shape is the broadcast of the
input's and that shape).
Semantics: ``out[j] = x[j']`` with ``j'_k = j_(k + r)`` (r the output's extra leading axes)
where the input's axis k has the output's size and 0 where it has size 1; values are moved as
they are (no requantization), exact.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ir import PLAIN, Graph, Operator
from ..kernels.kerneldef import KernelDef
from ..kernels.target import Target
from ._movement import MOVE_TYPES, check_same_types, gather_kernel, onnx_ints, tflite_ints
from .base import OpDef, OpError, SourceOp, Validation, Variant

TYPES = (*MOVE_TYPES, "int32", "uint8", "int64", "bool")
#: TFLite Micro broadcasts to tensors of up to 5 dimensions
MAX_DIMS = 5


def from_tflite(ctx: Any, node: Any) -> None:
    shape_t = ctx.tensors.get(node.inputs[1]) if len(node.inputs) > 1 and node.inputs[1] else None
    if shape_t is not None and shape_t.dtype not in ("int32", "int64"):
        raise ctx.fail(node, f"a shape of type {shape_t.dtype} is not supported (int32 or int64, as TFLite Micro)")
    shape = tflite_ints(ctx, node, 1, "shape")
    y = ctx.tensors[node.outputs[0]]
    if shape.ndim != 1 or tuple(int(d) for d in shape) != tuple(y.shape):
        raise ctx.fail(node, f"the shape {shape.tolist()} differs from the output's {list(y.shape)}")
    ctx.emit(node, "broadcast_to", [node.inputs[0]], node.outputs)


def from_onnx(imp: Any, node: Any) -> None:
    shape = onnx_ints(imp, node.input[1], "shape")
    x_shape, out_shape = imp.shape(node.input[0]), imp.shape(node.output[0])
    try:
        want = np.broadcast_shapes(tuple(x_shape), tuple(int(d) for d in shape.reshape(-1)))
    except ValueError:
        raise imp.fail(f"shape {shape.tolist()} does not broadcast with the input's {list(x_shape)}") from None
    if tuple(want) != tuple(out_shape):
        raise imp.fail(f"Expand gives {list(want)}, the output is {list(out_shape)}")
    imp.emit("broadcast_to", [imp.get(node.input[0], PLAIN)], node.output[0], PLAIN)


def check(g: Graph, op: Operator) -> None:
    check_same_types(g, op, TYPES)
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    if len(y.shape) > MAX_DIMS:
        raise OpError(f"{op.source}: BROADCAST_TO supports up to {MAX_DIMS} dimensions, the output has "
                      f"{len(y.shape)}")
    extra = len(y.shape) - len(x.shape)
    if extra < 0 or any(d not in (1, o) for d, o in zip(x.shape, y.shape[extra:])):
        raise OpError(f"{op.source}: {list(x.shape)} does not broadcast to {list(y.shape)}")


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    extra = len(y.shape) - len(x.shape)
    return gather_kernel(g, op, lambda j: tuple(0 if d == 1 else jk for jk, d in zip(j[extra:], x.shape)))


OPS = (
    OpDef(
        kind="broadcast_to",
        summary="the input repeated to a larger shape by broadcasting",
        tflite=(SourceOp("BROADCAST_TO", from_tflite, TYPES, "constant int32/int64 shape; up to 5-D"),),
        onnx=(SourceOp("Expand", from_onnx, ("float32",), "constant shape"),),
        variants=(Variant("generic", _generic, types=TYPES),),
        check=check,
        reference="TFLite Micro broadcast_to.cc (reference_ops::BroadcastTo); ONNX Expand",
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "output of more than 5 dimensions",
               "`TF_LITE_ENSURE_MSG(output_num_dims <= kMaxDims)`, kMaxDims 5 [k/broadcast_to.cc:32,47]",
               "refused-by-TFLM", "kept"),
    Validation("check", "input that does not broadcast to the output (more dimensions, or a dimension neither 1 nor the output's)",
               "`TF_LITE_ENSURE_MSG(input_num_dims <= output_num_dims)` and per dimension equal to 1 or to the shape's [k/broadcast_to.cc:45,61]",
               "refused-by-TFLM", "kept"),
    Validation("from_tflite", "BROADCAST_TO shape of a type other than int32/int64",
               "`TF_LITE_ENSURE(shape->type == kTfLiteInt32 or kTfLiteInt64)` [k/broadcast_to.cc:90]",
               "refused-by-TFLM", "kept", rule=True),
    Validation("from_tflite", "BROADCAST_TO shape not 1-D or not the output's shape",
               "`TF_LITE_ENSURE_EQ(NumDimensions(shape), 1)`, `output_num_dims == shape_num_dims`, `output_shape.Dims(idx) == shape[idx]` [k/broadcast_to.cc:37,43,71]",
               "refused-by-TFLM", "kept", rule=True),
)
