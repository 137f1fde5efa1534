"""GATHER_ND: slices of ``params`` picked by index tuples; inputs ``params`` and the int32
indices (a constant or a model input/intermediate) whose last axis holds one tuple of ``nd``
indices into the first ``nd`` axes of ``params``.

``out[b.., i..] = params[idx[b.., 0], .., idx[b.., nd - 1], i..]``, the output's shape
``idx.shape[:-1] + params.shape[nd:]``.

Import: TFLite GATHER_ND (int8, float32 params, int32 indices, as TFLite Micro's gather_nd.cc:
params and indices at least 1-D, nd at most the params' rank and at most 5); ONNX GatherND
(batch_dims 0, constant indices, negative ones counted from the end).
Semantics: as TFLite Micro, an index tuple is a flat element position ``sum idx[k] *
stride[k]`` (strides of ``params``) from which ``slice`` consecutive elements are copied; a
position whose slice does not lie inside ``params`` makes TFLite Micro's Invoke fail: constant
indices doing so are refused here and run-time ones are clamped into ``params``. Values are
moved as they are, exact.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from tvm import te, tirx

from ..ir import PLAIN, Graph, Operator, Tensor
from ..kernels.kerneldef import KernelArg, KernelDef
from ..kernels.target import Target
from ._movement import TYPES_8_F, check_same_types, onnx_ints
from .base import OpDef, OpError, SourceOp, Validation, Variant

#: TFLite Micro's MAX_INDICES_ND: the longest index tuple
MAX_ND = 5


def from_tflite(ctx: Any, node: Any) -> None:
    if len(node.inputs) < 2 or not node.inputs[1]:
        raise ctx.fail(node, "expects params and indices")
    ctx.emit(node, "gather_nd", node.inputs[:2], node.outputs)


def from_onnx(imp: Any, node: Any) -> None:
    if int(imp.attrs(node).get("batch_dims", 0)) != 0:
        raise imp.fail("GatherND with batch_dims other than 0 is not supported")
    shape = imp.shape(node.input[0])
    idx = onnx_ints(imp, node.input[1], "indices")
    nd = idx.shape[-1] if idx.ndim else 0
    if idx.ndim < 1 or not 1 <= nd <= min(len(shape), MAX_ND):
        raise imp.fail(f"indices of shape {list(idx.shape)} do not fit data of shape {list(shape)}")
    dims = np.array(shape[:nd], dtype=np.int64)
    idx = np.where(idx < 0, idx + dims, idx)
    if np.any(idx < 0) or np.any(idx >= dims):
        raise imp.fail(f"indices outside the data's axes {shape[:nd]}")
    name = imp._unique(f"{node.output[0]}_indices")
    data = np.ascontiguousarray(idx.astype(np.int32))
    imp.tensors[name] = Tensor(name, tuple(data.shape), "int32", data=data)
    imp.emit("gather_nd", [imp.get(node.input[0], PLAIN), name], node.output[0], PLAIN)


def _strides(shape: tuple[int, ...]) -> list[int]:
    return [math.prod(shape[k + 1:]) for k in range(len(shape))]


def check(g: Graph, op: Operator) -> None:
    check_same_types(g, op, TYPES_8_F, name=" (TFLite Micro gathers int8 and float32)")
    x, idx, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    if idx.dtype != "int32":
        raise OpError(f"{op.source}: indices of type {idx.dtype} are not supported (int32, as TFLite Micro)")
    if not x.shape or not idx.shape:
        raise OpError(f"{op.source}: params and indices must be at least vectors")
    nd = idx.shape[-1]
    if nd > len(x.shape) or nd > MAX_ND:
        raise OpError(f"{op.source}: index tuples of {nd} for {len(x.shape)}-D params "
                      f"(at most the params' rank and at most {MAX_ND})")
    want = tuple(idx.shape[:-1]) + tuple(x.shape[nd:])
    if want != tuple(y.shape):
        raise OpError(f"{op.source}: gather_nd gives {list(want)}, the output is {list(y.shape)}")
    if idx.data is not None:
        pos = idx.data.reshape(-1, nd).astype(np.int64) @ np.array(_strides(x.shape)[:nd], dtype=np.int64)
        if np.any(pos < 0) or np.any(pos + math.prod(x.shape[nd:]) > x.size):
            raise OpError(f"{op.source}: constant indices outside params of shape {list(x.shape)}")


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x, idx, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    nd, lead = idx.shape[-1], len(idx.shape) - 1
    strides = _strides(x.shape)
    slice_size = math.prod(x.shape[nd:])
    X = te.placeholder((x.size,), x.dtype, name="x")
    I = te.placeholder(idx.shape, "int32", name="idx")  # noqa: E741

    def f(*j):  # type: ignore[no-untyped-def]
        pos = I[tuple(j[:lead]) + (0,)] * strides[0]
        for k in range(1, nd):
            pos = pos + I[tuple(j[:lead]) + (k,)] * strides[k]
        if idx.data is None:  # run-time indices: the slice kept inside params
            pos = tirx.max(tirx.min(pos, x.size - slice_size), 0)
        inner = sum((jk * s for jk, s in zip(j[lead:], strides[nd:])), tirx.const(0, "int32"))
        return X[pos + inner]

    out = te.compute(y.shape, f, name="out")
    return KernelDef([KernelArg(X, tensor=x.name), KernelArg(I, tensor=idx.name)], out, y.name)


OPS = (
    OpDef(
        kind="gather_nd",
        summary="slices picked by index tuples",
        tflite=(SourceOp("GATHER_ND", from_tflite, TYPES_8_F, "int32 indices (constant or not); tuples up to 5"),),
        onnx=(SourceOp("GatherND", from_onnx, ("float32",), "constant indices; batch_dims 0"),),
        variants=(Variant("generic", _generic, types=TYPES_8_F),),
        check=check,
        reference="TFLite Micro gather_nd.cc; ONNX GatherND",
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "indices of a type other than int32",
               '`MicroPrintf("Indices of type \'%s\' are not supported by gather_nd.")` [k/gather_nd.cc:57-62]',
               "refused-by-TFLM", "kept"),
    Validation("check", "params or indices of rank 0",
               '`MicroPrintf("Params must be at least a vector.")`, `("Indices must be at least a vector.")` [k/gather_nd.cc:68-74]',
               "refused-by-TFLM", "kept"),
    Validation("check", "index tuples longer than the params' rank or than 5",
               '`MicroPrintf("Index innermost dimension length must be <= params rank.")`, `("... must not exceed %d.")` (MAX_INDICES_ND 5) [k/gather_nd.cc:76-83]',
               "refused-by-TFLM", "kept"),
    Validation("check", "stored output shape other than indices.shape[:-1] + params.shape[nd:]",
               "no check; Prepare overwrites the output's dims with the computed shape [k/gather_nd.cc:99-107], in an arena planned for the stored one",
               "would-compute-differently", "kept: utvm sizes the output from the stored shape"),
    Validation("check", "constant index tuples whose flat position lies outside params",
               'Eval: a flat position below 0 or with its slice past params_flat_size returns kTfLiteError, `MicroPrintf("gather_nd index out of bounds")` [k/gather_nd.cc:155,183]',
               "refused-by-TFLM", "kept"),
    Validation("from_tflite", "GATHER_ND without params and indices",
               "`TF_LITE_ENSURE_EQ(NumInputs(node), 2)`, `TF_LITE_ENSURE(indices != nullptr)` [k/gather_nd.cc:34,41]",
               "refused-by-TFLM", "kept", rule=True),
)
