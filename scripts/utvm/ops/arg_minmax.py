"""ARG_MAX / ARG_MIN: the index of the largest / smallest element along one axis (attrs ``axis``,
non-negative, and ``keep_dims``), as int32 or int64.

Import: TFLite ARG_MAX / ARG_MIN (a constant axis, negative counted from the end; output type
int32 or int64); ONNX ArgMax / ArgMin (``axis``, ``keepdims``, ``select_last_index``; int64).
Semantics: TFLite Micro arg_min_max.cc (reference_ops::ArgMinMax): the first index of the extreme
value wins a tie (the last with ONNX's select_last_index=1); integer inputs are compared as
stored, whatever their quantization.
"""

from __future__ import annotations

from typing import Any

from tvm import te, tirx

from ..ir import PLAIN, Graph, Operator
from ..kernels.kerneldef import KernelArg, KernelDef
from ..kernels.target import Target
from ._movement import tflite_ints
from .base import OpDef, OpError, SourceOp, Validation, Variant
from .common import io
from .reduce import check_reduced_shape, input_index, normalize_axes

_KINDS = {"ARG_MAX": "arg_max", "ARG_MIN": "arg_min", "ArgMax": "arg_max", "ArgMin": "arg_min"}
TYPES = ("int8", "float32")
OUT_TYPES = ("int32", "int64")


def from_tflite(ctx: Any, node: Any) -> None:
    x = ctx.tensors[node.inputs[0]]
    raw = tflite_ints(ctx, node, 1, "axis").reshape(-1)
    axes = normalize_axes(raw, len(x.shape)) if raw.size == 1 else None
    if axes is None:
        raise ctx.fail(node, f"axis {list(raw)} is not one axis of a {len(x.shape)}-D input")
    ctx.emit(node, _KINDS[node.kind], [node.inputs[0]], node.outputs, {"axis": axes[0], "keep_dims": False})


def from_onnx(imp: Any, node: Any) -> None:
    attrs = imp.attrs(node)
    x, out = node.input[0], node.output[0]
    rank = len(imp.shape(x))
    axes = normalize_axes([int(attrs.get("axis", 0))], rank)
    if axes is None:
        raise imp.fail(f"axis {attrs.get('axis')} out of range for a {rank}-D input")
    imp.emit(_KINDS[node.op_type], [imp.get(x, PLAIN)], out, PLAIN,
             {"axis": axes[0], "keep_dims": bool(int(attrs.get("keepdims", 1))),
              "last": bool(int(attrs.get("select_last_index", 0)))})


def check(g: Graph, op: Operator) -> None:
    x, y = io(g, op)
    if x.dtype not in TYPES or y.dtype not in OUT_TYPES:
        raise OpError(f"{op.source}: unsupported data types {x.dtype} -> {y.dtype}")
    axis = int(op.attrs["axis"])
    if not 0 <= axis < len(x.shape) or x.shape[axis] == 0:
        raise OpError(f"{op.source}: axis {axis} is not an axis of {list(x.shape)}")
    check_reduced_shape(op, x.shape, (axis,), bool(op.attrs["keep_dims"]), y.shape)


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x, y = io(g, op)
    axis = int(op.attrs["axis"])
    n = x.shape[axis]
    X = te.placeholder(x.shape, x.dtype, name="x")
    r = te.reduce_axis((0, n), name="r")
    best = te.max if op.kind == "arg_max" else te.min
    extreme = te.compute(y.shape, lambda *j: best(X[input_index(x.shape, (axis,), y.shape, j, (r,))], axis=r),
                         name="extreme")
    k = te.reduce_axis((0, n), name="k")
    last = bool(op.attrs.get("last", False))

    def first(*j: Any) -> Any:
        hit = X[input_index(x.shape, (axis,), y.shape, j, (k,))] == extreme[j]
        if last:
            return te.max(tirx.Select(hit, k, -1), axis=k)
        return te.min(tirx.Select(hit, k, n), axis=k)

    index = te.compute(y.shape, first, name="index")
    out = te.compute(y.shape, lambda *j: index[j].astype(y.dtype), name="out")
    return KernelDef([KernelArg(X, tensor=x.name)], out, y.name)


def _opdef(kind: str, tflite: str, onnx: str, what: str) -> OpDef:
    return OpDef(
        kind=kind,
        summary=f"index of the {what} along an axis",
        tflite=(SourceOp(tflite, from_tflite, TYPES, "constant axis; int32 output (int64 too: TFLite Micro refuses it)"),),
        onnx=(SourceOp(onnx, from_onnx, ("float32",), "int64 output"),),
        variants=(Variant("generic", _generic, types=TYPES),),
        check=check,
        reference=f"TFLite Micro arg_min_max.cc: reference_ops::ArgMinMax; ONNX {onnx}",
    )


OPS = (
    _opdef("arg_max", "ARG_MAX", "ArgMax", "largest element"),
    _opdef("arg_min", "ARG_MIN", "ArgMin", "smallest element"),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "input type outside int8/int16/float32 or output not int32",
               '`MicroPrintf("Only int32_t are supported currently")` for outputs other than int32 [k/arg_min_max.cc:85,90]',
               "refused-by-TFLM", "kept"),
    Validation("check", "axis outside the input's rank (or an empty axis)",
               "no check; reference_ops::ArgMinMax indexes dims with it (out of bounds) [k/arg_min_max.cc]",
               "would-compute-differently", "kept"),
    Validation("from_tflite", "ARG_MAX/MIN axis not one axis of the input",
               "no range check (reference indexes dims with it) [k/arg_min_max.cc]",
               "would-compute-differently", "kept", rule=True),
)
