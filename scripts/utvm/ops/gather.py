"""GATHER: pick slices of ``x`` along ``axis`` by an index tensor, attrs ``axis`` and
``batch_dims``; inputs ``x`` and the int32 indices (a constant or a model input/intermediate).

``out[b.., o.., c.., i..] = x[b.., o.., idx[b.., c..], i..]`` with ``b`` the batch_dims leading
axes shared by ``x`` and the indices, ``o`` the other axes before ``axis``, ``c`` the remaining
index axes, ``i`` the axes after ``axis``.

Import: TFLite GATHER (int8, float32, int32 indices, as TFLite Micro's gather.cc); ONNX Gather
(constant indices, negative ones counted from the end). A constant scalar index becomes a
strided_slice (which may need no kernel at all).
Semantics: TFLite Micro copies the slices; an index outside the axis is undefined there; here
constant indices outside it are refused and run-time ones are clamped into the axis.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tvm import te, tirx

from ..ir import PLAIN, Graph, Operator, Tensor
from ..kernels.kerneldef import KernelArg, KernelDef
from ..kernels.target import Target
from ._movement import TYPES_8_F, check_same_types, onnx_ints
from .base import OpDef, OpError, SourceOp, Validation, Variant


def _scalar_slice(x_shape: tuple[int, ...], axis: int, index: int) -> dict[str, Any]:
    begin = [0] * len(x_shape)
    begin[axis] = index
    return {"begin": tuple(begin), "strides": (1,) * len(x_shape),
            "out_axes": tuple(a for a in range(len(x_shape)) if a != axis)}


def from_tflite(ctx: Any, node: Any) -> None:
    o = ctx.options(node, "GatherOptions")
    x, idx = ctx.tensors[node.inputs[0]], ctx.tensors[node.inputs[1]]
    axis = int(o.Axis())
    axis = axis + len(x.shape) if axis < 0 else axis
    batch_dims = int(o.BatchDims()) if hasattr(o, "BatchDims") else 0
    batch_dims = batch_dims + len(idx.shape) if batch_dims < 0 else batch_dims
    if idx.dtype != "int32":
        raise ctx.fail(node, f"indices of type {idx.dtype} are not supported (int32, as TFLite Micro)")
    if idx.data is not None and idx.data.ndim == 0 and batch_dims == 0 and 0 <= axis < len(x.shape) \
            and 0 <= int(idx.data) < x.shape[axis]:
        ctx.emit(node, "strided_slice", [node.inputs[0]], node.outputs, _scalar_slice(x.shape, axis, int(idx.data)))
        return
    ctx.emit(node, "gather", node.inputs[:2], node.outputs, {"axis": axis, "batch_dims": batch_dims})


def from_onnx(imp: Any, node: Any) -> None:
    x_value, out = node.input[0], node.output[0]
    shape = imp.shape(x_value)
    axis = int(imp.attrs(node).get("axis", 0))
    axis = axis + len(shape) if axis < 0 else axis
    if not 0 <= axis < len(shape):
        raise imp.fail(f"axis out of range for a {len(shape)}-D input")
    idx = onnx_ints(imp, node.input[1], "indices")
    idx = np.where(idx < 0, idx + shape[axis], idx)
    if np.any(idx < 0) or np.any(idx >= shape[axis]):
        raise imp.fail(f"indices outside an axis of {shape[axis]}")
    x = imp.get(x_value, PLAIN)
    if idx.ndim == 0:
        imp.emit("strided_slice", [x], out, PLAIN, _scalar_slice(shape, axis, int(idx)))
        return
    name = imp._unique(f"{out}_indices")
    data = np.ascontiguousarray(idx.astype(np.int32))
    imp.tensors[name] = Tensor(name, tuple(data.shape), "int32", data=data)
    imp.emit("gather", [x, name], out, PLAIN, {"axis": axis, "batch_dims": 0})


def _out_shape(x: Tensor, idx: Tensor, axis: int, batch_dims: int) -> tuple[int, ...]:
    return tuple(x.shape[:axis]) + tuple(idx.shape[batch_dims:]) + tuple(x.shape[axis + 1:])


def check(g: Graph, op: Operator) -> None:
    check_same_types(g, op, TYPES_8_F, name=" (TFLite Micro gathers int8 and float32)")
    x, idx, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    axis, batch_dims = int(op.attrs["axis"]), int(op.attrs["batch_dims"])
    if idx.dtype != "int32":
        raise OpError(f"{op.source}: indices of type {idx.dtype} are not supported (int32)")
    if not 0 <= axis < len(x.shape) or not 0 <= batch_dims <= min(axis, len(idx.shape)):
        raise OpError(f"{op.source}: axis {axis} / batch_dims {batch_dims} out of range")
    if tuple(x.shape[:batch_dims]) != tuple(idx.shape[:batch_dims]):
        raise OpError(f"{op.source}: the batch axes of input {list(x.shape)} and indices {list(idx.shape)} differ")
    if _out_shape(x, idx, axis, batch_dims) != tuple(y.shape):
        raise OpError(f"{op.source}: gather gives {list(_out_shape(x, idx, axis, batch_dims))}, "
                      f"the output is {list(y.shape)}")
    if idx.data is not None and (np.any(idx.data < 0) or np.any(idx.data >= x.shape[axis])):
        raise OpError(f"{op.source}: constant indices outside an axis of {x.shape[axis]}")


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x, idx, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    axis, batch_dims = int(op.attrs["axis"]), int(op.attrs["batch_dims"])
    nc = len(idx.shape) - batch_dims
    X = te.placeholder(x.shape, x.dtype, name="x")
    I = te.placeholder(idx.shape, "int32", name="idx")  # noqa: E741
    n = x.shape[axis]

    def f(*j):  # type: ignore[no-untyped-def]
        i = I[tuple(j[:batch_dims]) + tuple(j[axis:axis + nc])] if idx.shape else I[()]
        if idx.data is None:  # run-time indices: kept inside the axis
            i = tirx.max(tirx.min(i, n - 1), 0)
        return X[tuple(j[:axis]) + (i,) + tuple(j[axis + nc:])]

    out = te.compute(y.shape, f, name="out")
    return KernelDef([KernelArg(X, tensor=x.name), KernelArg(I, tensor=idx.name)], out, y.name)


OPS = (
    OpDef(
        kind="gather",
        summary="slices picked along an axis by an index tensor",
        tflite=(SourceOp("GATHER", from_tflite, TYPES_8_F, "int32 indices (constant or not); batch_dims"),),
        onnx=(SourceOp("Gather", from_onnx, ("float32",), "constant indices"),),
        variants=(Variant("generic", _generic, types=TYPES_8_F),),
        check=check,
        reference="TFLite Micro gather.cc; ONNX Gather",
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "indices not int32",
               '`MicroPrintf("Positions of type \'%s\' are not supported by gather.")` for other than int32 [k/gather.cc:118-124]',
               "refused-by-TFLM", "kept"),
    Validation("check", "axis or batch_dims out of range",
               "`TF_LITE_ENSURE(0 <= axis < rank)`, `batch_dims <= axis`, ... [k/gather.cc:147-157]",
               "refused-by-TFLM", "kept"),
    Validation("check", "batch axes of input and indices differ",
               "`TF_LITE_ENSURE_EQ(input->dims->data[i], coords->dims->data[i])` [k/gather.cc:159]",
               "refused-by-TFLM", "kept"),
    Validation("check", "stored output shape is not the gathered one",
               "TFLM writes the output dims it computes [k/gather.cc:167-181]",
               "would-compute-differently", "kept: utvm writes the stored shape"),
    Validation("check", "constant indices outside the axis",
               "`TFLITE_DCHECK_GE/LT(coords, 0/axis_size)` only (off in release): memcpy from outside the input [k/gather.cc:85-86]",
               "would-compute-differently", "kept"),
    Validation("from_tflite", "GATHER indices not int32",
               '`MicroPrintf("Positions of type \'%s\' are not supported by gather.")` [k/gather.cc:118-124]',
               "refused-by-TFLM", "kept", rule=True),
)
