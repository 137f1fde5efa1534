"""What the data-movement operators share (PAD, STRIDED_SLICE, GATHER, DEPTH_TO_SPACE, ...):
reading constant integer parameters at import, their checks, and the kernel that copies
elements by an index map."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from tvm import te, tirx

from ..ir import Graph, Operator
from ..kernels.kerneldef import KernelArg, KernelDef
from .base import OpError, Validation

#: element types the data-movement kernels copy (they only move values)
MOVE_TYPES = ("int8", "int16", "float32")
TYPES_8_16_F = ("int8", "int16", "float32")
TYPES_8_F = ("int8", "float32")


def tflite_ints(ctx: Any, node: Any, index: int, what: str) -> np.ndarray:
    """The constant integer input ``index`` of a TFLite operator as int64 (one error line if it
    is missing or not constant)."""
    name = node.inputs[index] if len(node.inputs) > index else ""
    t = ctx.tensors.get(name) if name else None
    if t is None or t.data is None:
        raise ctx.fail(node, f"the {what} must be a constant tensor")
    if t.dtype not in ("int32", "uint8", "int8", "int16") and t.data.dtype.kind not in "iu":
        raise ctx.fail(node, f"the {what} must be integers, got {t.dtype}")
    return t.data.astype(np.int64)


def onnx_ints(imp: Any, name: str, what: str) -> np.ndarray:
    """A constant integer input of an ONNX node as int64."""
    arr = imp.const(name, what)
    if arr.dtype.kind not in "iu":
        raise imp.fail(f"the {what} must be integers, got {arr.dtype}")
    return arr.astype(np.int64)


def check_same_types(g: Graph, op: Operator, types: Sequence[str] = MOVE_TYPES, name: str = "") -> None:
    """The data input and the output have the same type, one of ``types``. Values are moved as
    they are (TFLite Micro does not requantize in these operators either)."""
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    if x.dtype not in types or y.dtype != x.dtype:
        raise OpError(f"{op.source}: unsupported data types {x.dtype} -> {y.dtype}{name}")


def gather_kernel(g: Graph, op: Operator,
                  index: Callable[[tuple[tirx.PrimExpr, ...]], tuple[tirx.PrimExpr, ...]],
                  inside: Callable[[tuple[tirx.PrimExpr, ...]], tirx.PrimExpr | None] | None = None,
                  fill: float | int = 0) -> KernelDef:
    """``out[j] = x[index(j)]`` over the output's shape, or ``fill`` where ``inside(j)`` is false."""
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    X = te.placeholder(x.shape, x.dtype, name="x")

    def f(*j):  # type: ignore[no-untyped-def]
        value = X[index(j)]
        cond = inside(j) if inside is not None else None
        if cond is None:
            return value
        return tirx.if_then_else(cond, value, tirx.const(fill, x.dtype))

    out = te.compute(y.shape, f, name="out")
    return KernelDef([KernelArg(X, tensor=x.name)], out, y.name)

#: the heading of this module's rows in docs/VALIDATION.md
VALIDATION_TITLE = "Movement operators (shared type check)"
#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check_same_types", "movement operator (reshape, transpose, gather, pad, slice, batch/depth-space, tile...) of a type outside its set, or input and output types differ",
               '`TF_LITE_ENSURE_TYPES_EQ(input, output)` and a type switch with `MicroPrintf("Type %s not supported")` [k/reshape_common.cc:77, transpose_common.cc:35, gather.cc:137, pad_common.cc:53, batch_to_space_nd.cc:57, depth_to_space.cc:58]',
               "refused-by-TFLM", "kept"),
    Validation("tflite_ints", "a parameter tensor (axis, paddings, begin/end/strides, perm, size, shape, multiples) not constant",
               "PAD, STRIDED_SLICE, TRANSPOSE, RESIZE_*, SPLIT refuse non-constant ones (`TF_LITE_ENSURE_MSG(IsConstantTensor(...))`) [k/pad_common.cc:72, strided_slice_common.cc:144-148, transpose_common.cc:37, resize_bilinear.cc:52, split.cc:78]; others read them at run time",
               "would-compute-differently", "kept: utvm needs them at compile time", rule=True),
    Validation("tflite_ints", "a parameter tensor not of an integer type",
               "int32 parameters (`TF_LITE_ENSURE_TYPES_EQ(axis->type, kTfLiteInt32)` [k/reduce_common.cc:52], `size->type == kTfLiteInt32` [k/resize_bilinear.cc:49])",
               "refused-by-TFLM", "kept", rule=True),
)
