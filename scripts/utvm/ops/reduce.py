"""Reductions over axes: MEAN, SUM, REDUCE_MAX, REDUCE_MIN (attrs ``axes``: sorted distinct
non-negative axes, ``keep_dims``).

Import: TFLite MEAN / SUM / REDUCE_MAX / REDUCE_MIN (constant axes, negative ones counted from
the end, repeated ones once); ONNX ReduceMean / ReduceSum / ReduceMax / ReduceMin (axes as an
attribute or, from opset 18 (ReduceSum 13), as a constant input; ``noop_with_empty_axes``) and
GlobalMaxPool.
Semantics, TFLite Micro's reduce.cc (reference_ops::QuantizedMeanOrSumExtraArgs): int8/int16
MEAN and SUM add the raw values in int32, take away ``zero_point * count`` and requantize once
with MultiplyByQuantizedMultiplier by input_scale / output_scale; for MEAN that multiplier
absorbs 1 / count: with ``s = min(floor(log2(count)), 32, 31 + shift)``, multiplier
``(m << s) / count`` (int64, truncated) and shift ``shift - s``. REDUCE_MAX / MIN move values
(int8 keeps its quantization; TFLite Micro has no int16 ones, nor REDUCE_PROD). float32: the sum in the input's order, the mean that sum divided by
the count.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from tvm import te, tirx

from ..ir import NHWC, PLAIN, TO_NHWC, Graph, Operator
from ..kernels import fixedpoint as fp
from ..kernels.kerneldef import KernelArg, KernelDef
from ..kernels.requant import clamp
from ..kernels.target import Target
from ._movement import onnx_ints, tflite_ints
from .base import OpDef, OpError, SourceOp, Validation, Variant
from .common import io

#: TFLite builtin -> operator kind
_TFLITE = {"MEAN": "mean", "SUM": "reduce_sum", "REDUCE_MAX": "reduce_max", "REDUCE_MIN": "reduce_min"}
_ONNX = {"ReduceMean": "mean", "ReduceSum": "reduce_sum", "ReduceMax": "reduce_max", "ReduceMin": "reduce_min"}
#: the opset from which each ONNX reduction takes its axes as an input
_AXES_INPUT_FROM = {"ReduceSum": 13}
_LIMITS = {"int8": (-128, 127), "int16": (-32768, 32767)}


def normalize_axes(axes: Sequence[int], rank: int) -> tuple[int, ...] | None:
    """Sorted distinct axes in [0, rank) (negative ones counted from the end), None if one is
    out of range."""
    out = set()
    for a in axes:
        a = int(a)
        if not -rank <= a < max(rank, 1):
            return None
        out.add(a + rank if a < 0 else a)
    return tuple(sorted(out))


def reduced_shape(shape: Sequence[int], axes: Sequence[int], keep_dims: bool) -> tuple[int, ...]:
    """The output shape of a reduction of ``shape`` over ``axes``."""
    if keep_dims:
        return tuple(1 if d in axes else s for d, s in enumerate(shape))
    return tuple(s for d, s in enumerate(shape) if d not in axes)


def from_tflite(ctx: Any, node: Any) -> None:
    x = ctx.tensors[node.inputs[0]]
    raw = tflite_ints(ctx, node, 1, "axis").reshape(-1)
    axes = normalize_axes(raw, len(x.shape))
    if axes is None:
        raise ctx.fail(node, f"axis {list(raw)} out of range for a {len(x.shape)}-D input")
    keep = bool(ctx.options(node, "ReducerOptions").KeepDims())
    ctx.emit(node, _TFLITE[node.kind], [node.inputs[0]], node.outputs, {"axes": axes, "keep_dims": keep})


def _onnx_axes(imp: Any, node: Any, rank: int) -> tuple[int, ...]:
    """The axes of an ONNX reduction (all of them when none are given, unless
    noop_with_empty_axes)."""
    attrs = imp.attrs(node)
    if imp.opset >= _AXES_INPUT_FROM.get(node.op_type, 18):
        given = (onnx_ints(imp, node.input[1], "axes").reshape(-1)
                 if len(node.input) > 1 and node.input[1] else np.zeros(0, np.int64))
    else:
        given = np.asarray(attrs.get("axes", []), np.int64)
    if given.size == 0:
        return tuple(range(rank)) if not int(attrs.get("noop_with_empty_axes", 0)) else ()
    axes = normalize_axes(given, rank)
    if axes is None:
        raise imp.fail(f"axes {list(given)} out of range for a {rank}-D input")
    return axes


def from_onnx(imp: Any, node: Any) -> None:
    x, out = node.input[0], node.output[0]
    shape = imp.shape(x)
    kind = _ONNX.get(node.op_type, "reduce_max")
    if node.op_type == "GlobalMaxPool":
        if len(shape) != 4:
            raise imp.fail(f"only 4-D (NCHW) inputs are supported, got {list(shape)}")
        imp.emit(kind, [imp.get(x, NHWC)], out, NHWC, {"axes": (1, 2), "keep_dims": True})
        return
    axes = _onnx_axes(imp, node, len(shape))
    keep = bool(int(imp.attrs(node).get("keepdims", 1)))
    if not axes:  # noop_with_empty_axes: the input itself
        imp.emit("reshape", [imp.get(x, PLAIN)], out, PLAIN)
        return
    if len(shape) == 4 and keep and NHWC in imp.vals.get(x, {}):
        # a value held channels-last stays so: the same axes, counted in NHWC
        nhwc_axes = tuple(sorted(TO_NHWC.index(a) for a in axes))
        imp.emit(kind, [imp.get(x, NHWC)], out, NHWC, {"axes": nhwc_axes, "keep_dims": True})
        return
    imp.emit(kind, [imp.get(x, PLAIN)], out, PLAIN, {"axes": axes, "keep_dims": keep})


def _types(kind: str) -> tuple[str, ...]:
    return ("int8", "int16", "float32") if kind in ("mean", "reduce_sum") else ("int8", "float32")


def check(g: Graph, op: Operator) -> None:
    x, y = io(g, op)
    if x.dtype not in _types(op.kind) or y.dtype != x.dtype:
        raise OpError(f"{op.source}: unsupported data types {x.dtype} -> {y.dtype}")
    if x.dtype in _LIMITS:
        if x.quant is None or y.quant is None:
            raise OpError(f"{op.source}: {x.dtype} tensors without quantization parameters")
        if op.kind in ("reduce_max", "reduce_min") and x.quant.scalar() != y.quant.scalar():
            raise OpError(f"{op.source}: {x.dtype} {op.kind.upper()} needs the same quantization in and out")
    axes = tuple(int(a) for a in op.attrs["axes"])
    if normalize_axes(axes, len(x.shape)) != axes or not axes:
        raise OpError(f"{op.source}: axes {list(axes)} are not distinct axes of a {len(x.shape)}-D input")
    check_reduced_shape(op, x.shape, axes, bool(op.attrs["keep_dims"]), y.shape)
    if any(x.shape[a] == 0 for a in axes):
        raise OpError(f"{op.source}: reduction over an empty axis")


def mean_multiplier(scale_ratio: float, count: int) -> tuple[int, int]:
    """(multiplier, shift) of an integer MEAN: QuantizeMultiplier(input_scale / output_scale)
    with 1 / count folded in as TFLite Micro folds it."""
    m, shift = fp.quantize_multiplier(scale_ratio)
    s = min(count.bit_length() - 1, 32, 31 + shift)
    return int((m << s) // count), shift - s


def np_reduce(x: np.ndarray, kind: str, axes: tuple[int, ...], keep_dims: bool,
              qx: tuple[float, int] | None = None, qy: tuple[float, int] | None = None) -> np.ndarray:
    """numpy reference of the kernels (integer arithmetic as TFLite Micro's)."""
    if kind in ("reduce_max", "reduce_min"):
        f = np.max if kind == "reduce_max" else np.min
        return f(x, axis=axes, keepdims=keep_dims)
    if x.dtype == np.float32:
        total = np.sum(x, axis=axes, keepdims=keep_dims, dtype=np.float32)
        return total if kind == "reduce_sum" else (total / np.float32(_count(x.shape, axes))).astype(np.float32)
    assert qx is not None and qy is not None
    count = _count(x.shape, axes)
    total = fp.np_wrap32(np.sum(x.astype(np.int64), axis=axes, keepdims=keep_dims) - qx[1] * count)
    ratio = float(np.float32(qx[0])) / float(np.float32(qy[0]))
    m, shift = mean_multiplier(ratio, count) if kind == "mean" else fp.quantize_multiplier(ratio)
    lo, hi = _LIMITS[str(x.dtype)]
    return np.clip(fp.np_multiply_by_quantized_multiplier(total, m, shift) + qy[1], lo, hi).astype(x.dtype)


def input_index(x_shape: Sequence[int], axes: Sequence[int], y_shape: Sequence[int],
                j: Sequence[Any], reduced: Sequence[Any]) -> tuple[Any, ...]:
    """The input element of output index ``j`` and the indices ``reduced`` along ``axes``: the
    kept input axes of more than one element are, in order, the output's axes of more than one
    (so any output shape that differs from the reduced shape by axes of 1 will do)."""
    y_axes = [k for k, s in enumerate(y_shape) if s != 1]
    x_kept = [d for d in range(len(x_shape)) if d not in axes and x_shape[d] != 1]
    index: list[Any] = [0] * len(x_shape)
    for d, k in zip(x_kept, y_axes, strict=True):
        index[d] = j[k]
    for a, r in zip(axes, reduced, strict=True):
        index[a] = r
    return tuple(index)


def check_reduced_shape(op: Operator, x_shape: Sequence[int], axes: Sequence[int], keep_dims: bool,
                        y_shape: Sequence[int]) -> None:
    """The output shape is the reduced shape, give or take axes of 1."""
    want = reduced_shape(x_shape, axes, keep_dims)
    if [d for d in want if d != 1] != [d for d in y_shape if d != 1]:
        raise OpError(f"{op.source}: the reduction of {list(x_shape)} over {list(axes)} gives {list(want)}, "
                      f"the output is {list(y_shape)}")


def _count(shape: Sequence[int], axes: Sequence[int]) -> int:
    return int(np.prod([shape[a] for a in axes]))


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x, y = io(g, op)
    axes = tuple(int(a) for a in op.attrs["axes"])
    X = te.placeholder(x.shape, x.dtype, name="x")
    raxes = [te.reduce_axis((0, x.shape[a]), name=f"r{a}") for a in axes]
    quant = x.dtype in _LIMITS
    acc_dtype = "int32" if quant and op.kind in ("mean", "reduce_sum") else x.dtype

    def element(j: Sequence[Any]) -> Any:
        return X[input_index(x.shape, axes, y.shape, j, raxes)].astype(acc_dtype)

    if op.kind in ("mean", "reduce_sum"):
        acc = te.compute(y.shape, lambda *j: te.sum(element(j), axis=raxes), name="acc")
    elif op.kind == "reduce_max":
        acc = te.compute(y.shape, lambda *j: te.max(element(j), axis=raxes), name="acc")
    else:
        acc = te.compute(y.shape, lambda *j: te.min(element(j), axis=raxes), name="acc")
    count = _count(x.shape, axes)
    if op.kind in ("reduce_max", "reduce_min") or (op.kind == "reduce_sum" and not quant):
        out = acc
    elif not quant:
        out = te.compute(y.shape, lambda *j: acc[j] / tirx.const(float(count), "float32"), name="out")
    else:
        assert x.quant and y.quant
        xs, zx = x.quant.scalar()
        ys, zy = y.quant.scalar()
        ratio = float(xs) / float(ys)
        m, shift = mean_multiplier(ratio, count) if op.kind == "mean" else fp.quantize_multiplier(ratio)
        offset = fp.np_wrap32(np.int64(zx) * count)
        lo, hi = _LIMITS[x.dtype]

        def requant(*j: Any) -> Any:
            v = fp.multiply_by_quantized_multiplier(acc[j] - fp.c32(int(offset)), m, shift) + fp.c32(int(zy))
            return clamp(v, lo, hi).astype(x.dtype)

        out = te.compute(y.shape, requant, name="out")
    return KernelDef([KernelArg(X, tensor=x.name)], out, y.name)


def _opdef(kind: str, tflite: str, onnx: tuple[str, ...], summary: str, reference: str) -> OpDef:
    constraints = "constant axes"
    onnx_ops = tuple(SourceOp(name, from_onnx, ("float32",), "4-D input" if name == "GlobalMaxPool" else
                              "constant axes") for name in onnx)
    extremes = kind in ("reduce_max", "reduce_min")
    return OpDef(
        kind=kind,
        summary=summary,
        tflite=(SourceOp(tflite, from_tflite, _types(kind),
                         constraints + ("; integer: same quantization in and out" if extremes else "")),),
        onnx=onnx_ops,
        variants=(Variant("generic", _generic, types=_types(kind)),),
        check=check,
        reference=reference,
    )


_REF = "TFLite Micro reduce.cc"
OPS = (
    _opdef("mean", "MEAN", ("ReduceMean",), "mean over axes",
           f"{_REF}: reference_ops::QuantizedMeanOrSumExtraArgs (int8/int16), reference_ops::Mean; ONNX ReduceMean"),
    _opdef("reduce_sum", "SUM", ("ReduceSum",), "sum over axes",
           f"{_REF}: reference_ops::QuantizedMeanOrSumExtraArgs (int8/int16), ReduceGeneric; ONNX ReduceSum"),
    _opdef("reduce_max", "REDUCE_MAX", ("ReduceMax", "GlobalMaxPool"), "maximum over axes",
           f"{_REF}: ReduceGeneric; ONNX ReduceMax, GlobalMaxPool"),
    _opdef("reduce_min", "REDUCE_MIN", ("ReduceMin",), "minimum over axes",
           f"{_REF}: ReduceGeneric; ONNX ReduceMin"),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "REDUCE types outside the operator's set or different in/out",
               '`TF_LITE_ENSURE_TYPES_EQ(input, output)`, `MicroPrintf("Only float32, int8, and int16 types are supported.")` [k/reduce_common.cc:149,188,368,406]',
               "refused-by-TFLM", "kept"),
    Validation("check", "int8/int16 reduce without quantization",
               "MEAN/SUM: QuantizeMultiplier of scale 0 ratios (abort) [k/reduce_common.cc:58]; MAX/MIN compare 0 == 0 and run",
               "refused-by-TFLM", "kept (MAX/MIN without quantization: see *Left*)"),
    Validation("check", "REDUCE_MAX/MIN with other quantization out than in",
               "`TF_LITE_ENSURE_EQ(input_scale, output_scale)`, zero points [k/reduce_common.cc:174-176]",
               "refused-by-TFLM", "kept"),
    Validation("check", "no axes (repeats, order and negative axes are normalized at import as ResolveAxis does; out-of-range ones refused there)",
               "an empty axis tensor reduces nothing: a copy (MEAN/SUM: a requantization) [k/reduce_common.cc:97]",
               "neither", "kept (left: utvm's reduction kernels need an axis; see *Left*)"),
    Validation("check", "reduction over an empty axis",
               "unreachable (dimensions of 0 are refused first, importer/limits.py)",
               "not-a-model-check", "kept"),
    Validation("check_reduced_shape", "stored output shape is not the reduced one",
               "no check of the stored shape; ReduceGeneric loops over the input and writes by output index [k/reduce_common.cc]",
               "would-compute-differently", "kept"),
    Validation("from_tflite", "reduce axis out of range",
               "ReduceGeneric/ResolveAxis returns false: `TF_LITE_ENSURE(context, result)` [k/reduce_common.cc:97]",
               "refused-by-TFLM", "kept", rule=True),
)
