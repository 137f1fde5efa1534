"""STRIDED_SLICE: every ``strides[k]``-th element of each input axis from ``begin[k]``, attrs
``begin`` and ``strides`` (one per input axis, begin already clamped into the axis, strides
non-zero) and ``out_axes`` (one per output axis: the input axis it walks, or -1 for a new axis of
size 1; input axes not listed are taken at ``begin`` only). The output's shape gives the counts.

Import: TFLite STRIDED_SLICE (begin/end/strides constants, begin/end/shrink-axis masks and
negative strides as TFLite Micro's strided_slice.cc computes them, plus ellipsis and new-axis
masks and ``offset`` with TensorFlow's meaning, which TFLite Micro ignores), SLICE, SPLIT,
SPLIT_V and UNPACK (one strided_slice per output); ONNX Slice and Split.
Semantics: ``out[j] = x[begin + strides * j]`` on the walked axes; values are moved, exact for
every type. A slice that is one contiguous run of its input (e.g. SPLIT along the outermost
axis) has no kernel: its consumers read the input's bytes at an offset (a view).
"""

from __future__ import annotations

import math
from typing import Any

from ..ir import NHWC, PLAIN, TO_NHWC, Graph, Operator
from ..kernels.kerneldef import KernelDef
from ..kernels.target import Target
from ._movement import MOVE_TYPES, check_same_types, gather_kernel, onnx_ints, tflite_ints
from .base import OpDef, OpError, SourceOp, Validation, Variant

#: TFLite Micro slices tensors of up to 4 (STRIDED_SLICE) / 5 (SLICE) dimensions
MAX_DIMS = 5

_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1


def _clamp(v: int, lo: int, hi: int) -> int:
    return hi if v > hi else lo if v < lo else v


def axis_range(size: int, begin: int, end: int, stride: int, begin_mask: bool, end_mask: bool,
               shrink: bool, offset: bool = False) -> tuple[int, int]:
    """(start, count) of one axis, as TFLite's strided_slice StartForAxis / StopForAxis."""
    if size == 0:
        return 0, 0
    start = (_INT_MIN if stride > 0 else _INT_MAX) if begin_mask else begin
    if start < 0:
        start += size
    start = _clamp(start, 0, size) if stride > 0 else _clamp(start, -1, size - 1)
    if shrink:
        return start, 1 if start < size else 0
    stop = end + start if offset else end
    if end_mask:
        stop = _INT_MAX if stride > 0 else _INT_MIN
    if stop < 0:
        stop += size
    stop = _clamp(stop, 0, size) if stride > 0 else _clamp(stop, -1, size - 1)
    return start, max(math.ceil((stop - start) / stride), 0)


def _bit(mask: int, i: int) -> bool:
    return bool(mask >> i & 1)


def tflite_strided_slice(shape: tuple[int, ...], begin: list[int], end: list[int], strides: list[int],
                         begin_mask: int, end_mask: int, ellipsis_mask: int, new_axis_mask: int,
                         shrink_mask: int, offset: bool = False) -> tuple[dict[str, Any], tuple[int, ...]]:
    """(attrs, output shape) of a TFLite STRIDED_SLICE; raises ValueError on bad parameters."""
    rank = len(shape)
    n = len(begin)
    if len(end) != n or len(strides) != n:
        raise ValueError("begin, end and strides differ in length")
    if any(s == 0 for s in strides):
        raise ValueError("a stride is 0")
    dense: list[tuple[int, int, int, bool, bool, bool] | None] = []  # None: new axis
    axis = 0
    seen_ellipsis = False
    for i in range(n):
        if _bit(ellipsis_mask, i) and not seen_ellipsis:
            seen_ellipsis = True
            after = sum(1 for k in range(i + 1, n) if not _bit(new_axis_mask, k))
            for _ in range(rank - axis - after):
                dense.append((0, 0, 1, True, True, False))
                axis += 1
        elif _bit(new_axis_mask, i):
            dense.append(None)
        else:
            dense.append((begin[i], end[i], strides[i], _bit(begin_mask, i), _bit(end_mask, i),
                          _bit(shrink_mask, i)))
            axis += 1
    while axis < rank:
        dense.append((0, 0, 1, True, True, False))
        axis += 1
    if axis != rank:
        raise ValueError(f"{n} slice entries for a {rank}-D input")
    starts, steps, out_axes, out_shape = [], [], [], []
    axis = 0
    for entry in dense:
        if entry is None:
            out_axes.append(-1)
            out_shape.append(1)
            continue
        b, e, s, bm, em, shrink = entry
        start, count = axis_range(shape[axis], b, e, s, bm, em, shrink, offset)
        starts.append(_clamp(start, 0, max(shape[axis] - 1, 0)))
        steps.append(s)
        if not shrink:
            out_axes.append(axis)
            out_shape.append(count)
        elif count == 0:
            raise ValueError(f"shrinking axis {axis} at an index outside it")
        axis += 1
    return {"begin": tuple(starts), "strides": tuple(steps), "out_axes": tuple(out_axes)}, tuple(out_shape)


def _attrs(x_shape: tuple[int, ...], begin: list[int], strides: list[int], out_axes: list[int]) -> dict[str, Any]:
    starts = [_clamp(b, 0, max(d - 1, 0)) for b, d in zip(begin, x_shape)]
    return {"begin": tuple(starts), "strides": tuple(strides), "out_axes": tuple(out_axes)}


def window(x: str, out: str, begin: tuple[int, ...], source: str) -> Operator:
    """A slice of ``x`` from ``begin`` with stride 1 on every axis, every axis kept, as large as
    the tensor ``out`` (the patch planner's cut, :mod:`utvm.plan.patches`)."""
    return Operator("strided_slice", [x], [out], {"begin": begin, "strides": (1,) * len(begin),
                                                  "out_axes": tuple(range(len(begin)))}, source)


def from_tflite(ctx: Any, node: Any) -> None:
    x, y = ctx.tensors[node.inputs[0]], ctx.tensors[node.outputs[0]]
    o = ctx.options(node, "StridedSliceOptions")
    begin, end, strides = (tflite_ints(ctx, node, i, w).reshape(-1).tolist()
                           for i, w in ((1, "begin"), (2, "end"), (3, "strides")))
    offset = bool(o.Offset()) if hasattr(o, "Offset") else False
    try:
        attrs, shape = tflite_strided_slice(x.shape, begin, end, strides, o.BeginMask(), o.EndMask(),
                                            o.EllipsisMask(), o.NewAxisMask(), o.ShrinkAxisMask(), offset)
    except ValueError as exc:
        raise ctx.fail(node, str(exc)) from None
    if shape != tuple(y.shape):
        raise ctx.fail(node, f"the slice gives shape {list(shape)}, the output is {list(y.shape)}")
    ctx.emit(node, "strided_slice", [node.inputs[0]], node.outputs, attrs)


def from_tflite_slice(ctx: Any, node: Any) -> None:
    x, y = ctx.tensors[node.inputs[0]], ctx.tensors[node.outputs[0]]
    begin = tflite_ints(ctx, node, 1, "begin").reshape(-1).tolist()
    size = tflite_ints(ctx, node, 2, "size").reshape(-1).tolist()
    if len(begin) != len(x.shape) or len(size) != len(x.shape):
        raise ctx.fail(node, f"begin and size need {len(x.shape)} values")
    shape = []
    for d, b, s in zip(x.shape, begin, size):
        s = d - b if s < 0 else s
        if b < 0 or b + s > d:
            raise ctx.fail(node, f"slice [{b}, {b + s}) outside an axis of {d}")
        shape.append(s)
    if tuple(shape) != tuple(y.shape):
        raise ctx.fail(node, f"the slice gives shape {shape}, the output is {list(y.shape)}")
    ctx.emit(node, "strided_slice", [node.inputs[0]], node.outputs,
             _attrs(x.shape, begin, [1] * len(begin), list(range(len(begin)))))


def _split_outputs(ctx: Any, node: Any, x_name: str, axis: int, sizes: list[int], shrink: bool = False) -> None:
    x = ctx.tensors[x_name]
    rank = len(x.shape)
    if not 0 <= axis < rank:
        raise ctx.fail(node, f"axis out of range for a {rank}-D input")
    if sum(sizes) != x.shape[axis]:
        raise ctx.fail(node, f"the parts add up to {sum(sizes)}, the axis has {x.shape[axis]}")
    start = 0
    for out, size in zip(node.outputs, sizes):
        begin = [0] * rank
        begin[axis] = start
        out_axes = [a for a in range(rank) if not (shrink and a == axis)]
        shape = tuple(size if a == axis else x.shape[a] for a in out_axes)
        if shape != tuple(ctx.tensors[out].shape):
            raise ctx.fail(node, f"a part has shape {list(shape)}, its output {list(ctx.tensors[out].shape)}")
        ctx.emit(node, "strided_slice", [x_name], [out], _attrs(x.shape, begin, [1] * rank, out_axes))
        start += size


def from_tflite_split(ctx: Any, node: Any) -> None:
    x_name = node.inputs[1]
    rank = len(ctx.tensors[x_name].shape)
    axis = int(tflite_ints(ctx, node, 0, "axis").reshape(-1)[0])
    axis = axis + rank if axis < 0 else axis
    n = len(node.outputs)
    dim = ctx.tensors[x_name].shape[axis] if 0 <= axis < rank else 0
    if n == 0 or dim % n:
        raise ctx.fail(node, f"an axis of {dim} does not split into {n} equal parts")
    _split_outputs(ctx, node, x_name, axis, [dim // n] * n)


def from_tflite_split_v(ctx: Any, node: Any) -> None:
    x_name = node.inputs[0]
    rank = len(ctx.tensors[x_name].shape)
    axis = int(tflite_ints(ctx, node, 2, "axis").reshape(-1)[0])
    axis = axis + rank if axis < 0 else axis
    sizes = [int(s) for s in tflite_ints(ctx, node, 1, "size_splits").reshape(-1)]
    if 0 <= axis < rank and sizes.count(-1) == 1:
        sizes[sizes.index(-1)] = ctx.tensors[x_name].shape[axis] - (sum(sizes) + 1)
    if len(sizes) != len(node.outputs):
        raise ctx.fail(node, f"{len(sizes)} sizes for {len(node.outputs)} outputs")
    _split_outputs(ctx, node, x_name, axis, sizes)


def from_tflite_unpack(ctx: Any, node: Any) -> None:
    o = ctx.options(node, "UnpackOptions")
    x = ctx.tensors[node.inputs[0]]
    axis = int(o.Axis())
    axis = axis + len(x.shape) if axis < 0 else axis
    if not 0 <= axis < len(x.shape) or x.shape[axis] != len(node.outputs):
        raise ctx.fail(node, f"{len(node.outputs)} outputs for an axis {axis} of input {list(x.shape)}")
    _split_outputs(ctx, node, node.inputs[0], axis, [1] * len(node.outputs), shrink=True)


def _onnx_layout(imp: Any, value: str) -> str:
    have = imp.vals.get(value, {})
    return NHWC if len(imp.shape(value)) == 4 and NHWC in have and PLAIN not in have else PLAIN


def _onnx_emit(imp: Any, x_value: str, out_value: str, begin: list[int], strides: list[int]) -> None:
    """One ONNX slice (begin/strides per NCHW axis, no axis removed) in the layout the input has."""
    layout = _onnx_layout(imp, x_value)
    shape = imp.shape(x_value)
    if layout == NHWC:
        begin = [begin[p] for p in TO_NHWC]
        strides = [strides[p] for p in TO_NHWC]
        shape = tuple(shape[p] for p in TO_NHWC)
    imp.emit("strided_slice", [imp.get(x_value, layout)], out_value, layout,
             _attrs(shape, begin, strides, list(range(len(shape)))))


def from_onnx_slice(imp: Any, node: Any) -> None:
    x_value = node.input[0]
    shape = imp.shape(x_value)
    rank = len(shape)
    if imp.opset < 10:
        attrs = imp.attrs(node)
        starts = [int(v) for v in attrs["starts"]]
        ends = [int(v) for v in attrs["ends"]]
        axes = [int(v) for v in attrs.get("axes", range(len(starts)))]
        steps = [1] * len(starts)
    else:
        starts = onnx_ints(imp, node.input[1], "starts").reshape(-1).tolist()
        ends = onnx_ints(imp, node.input[2], "ends").reshape(-1).tolist()
        has = [len(node.input) > k and bool(node.input[k]) for k in (3, 4)]
        axes = onnx_ints(imp, node.input[3], "axes").reshape(-1).tolist() if has[0] else list(range(len(starts)))
        steps = onnx_ints(imp, node.input[4], "steps").reshape(-1).tolist() if has[1] else [1] * len(starts)
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise imp.fail("starts, ends, axes and steps differ in length")
    begin, strides = [0] * rank, [1] * rank
    for start, end, axis, step in zip(starts, ends, axes, steps):
        axis = axis + rank if axis < 0 else axis
        if not 0 <= axis < rank or step == 0:
            raise imp.fail(f"bad slice of axis {axis} (step {step})")
        dim = shape[axis]
        start = start + dim if start < 0 else start
        end = end + dim if end < 0 else end
        if step > 0:
            start, end = _clamp(start, 0, dim), _clamp(end, 0, dim)
        else:
            start, end = _clamp(start, 0, dim - 1), _clamp(end, -1, dim - 1)
        begin[axis], strides[axis] = start, step
    _onnx_emit(imp, x_value, node.output[0], begin, strides)


def from_onnx_split(imp: Any, node: Any) -> None:
    x_value = node.input[0]
    shape = imp.shape(x_value)
    rank = len(shape)
    attrs = imp.attrs(node)
    axis = int(attrs.get("axis", 0))
    axis = axis + rank if axis < 0 else axis
    outs = [o for o in node.output]
    if not 0 <= axis < rank:
        raise imp.fail(f"axis out of range for a {rank}-D input")
    dim = shape[axis]
    if len(node.input) > 1 and node.input[1]:
        sizes = onnx_ints(imp, node.input[1], "split").reshape(-1).tolist()
    elif "split" in attrs:
        sizes = [int(s) for s in attrs["split"]]
    elif "num_outputs" in attrs:
        n = int(attrs["num_outputs"])
        part = -(-dim // n)
        sizes = [part] * (n - 1) + [dim - part * (n - 1)]
    else:
        if dim % len(outs):
            raise imp.fail(f"an axis of {dim} does not split into {len(outs)} equal parts")
        sizes = [dim // len(outs)] * len(outs)
    if len(sizes) != len(outs) or sum(sizes) != dim or min(sizes) < 0:
        raise imp.fail(f"split sizes {sizes} do not cut an axis of {dim} into {len(outs)} parts")
    start = 0
    for out, size in zip(outs, sizes):
        if out:
            begin = [0] * rank
            begin[axis] = start
            _onnx_emit(imp, x_value, out, begin, [1] * rank)
        start += size


def _counts(g: Graph, op: Operator) -> list[int]:
    """Elements taken along each input axis."""
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    counts = [1] * len(x.shape)
    for d, a in enumerate(op.attrs["out_axes"]):
        if a >= 0:
            counts[a] = y.shape[d]
    return counts


def check(g: Graph, op: Operator) -> None:
    check_same_types(g, op, MOVE_TYPES + ("int32",))
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    begin, strides, out_axes = op.attrs["begin"], op.attrs["strides"], op.attrs["out_axes"]
    if len(x.shape) > MAX_DIMS:
        raise OpError(f"{op.source}: slices of up to {MAX_DIMS} dimensions are supported, not {len(x.shape)}")
    if len(begin) != len(x.shape) or len(strides) != len(x.shape) or len(out_axes) != len(y.shape):
        raise OpError(f"{op.source}: slice parameters do not match the input {list(x.shape)}")
    walked = [a for a in out_axes if a >= 0]
    if len(set(walked)) != len(walked) or walked != sorted(walked):
        raise OpError(f"{op.source}: bad slice axes {list(out_axes)}")
    for d, a in enumerate(out_axes):
        if a < 0 and y.shape[d] != 1:
            raise OpError(f"{op.source}: a new axis must have size 1")
    for k, (dim, b, s, n) in enumerate(zip(x.shape, begin, strides, _counts(g, op))):
        if n == 0:
            continue
        last = b + s * (n - 1)
        if s == 0 or not 0 <= b < dim or not 0 <= last < dim:
            raise OpError(f"{op.source}: slice of axis {k} reads outside it ({b} + {s} x {n - 1}, size {dim})")


def contiguous_offset(g: Graph, op: Operator) -> int | None:
    """The element offset in the input when the slice is one contiguous run of it, else None."""
    x = g.tensors[op.inputs[0]]
    counts = _counts(g, op)
    begin, strides = op.attrs["begin"], op.attrs["strides"]
    # all axes before the first partial one taken singly, those after taken whole with stride 1
    k = 0
    while k < len(x.shape) and counts[k] == 1:
        k += 1
    for j in range(k + 1, len(x.shape)):
        if counts[j] != x.shape[j] or begin[j] != 0 or strides[j] != 1:
            return None
    if k < len(x.shape) and strides[k] != 1 and counts[k] > 1:
        return None
    offset, step = 0, 1
    for d in range(len(x.shape) - 1, -1, -1):
        offset += begin[d] * step
        step *= x.shape[d]
    return offset


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x = g.tensors[op.inputs[0]]
    begin, strides, out_axes = op.attrs["begin"], op.attrs["strides"], op.attrs["out_axes"]
    position = {a: d for d, a in enumerate(out_axes) if a >= 0}

    def source(j: tuple[Any, ...]) -> tuple[Any, ...]:
        idx = []
        for k in range(len(x.shape)):
            if k in position:
                step = j[position[k]] if strides[k] == 1 else j[position[k]] * int(strides[k])
                idx.append(step + int(begin[k]) if begin[k] else step)
            else:
                idx.append(int(begin[k]))
        return tuple(idx)

    return gather_kernel(g, op, source)


_TYPES = ("int8", "int16", "float32")
OPS = (
    OpDef(
        kind="strided_slice",
        summary="every n-th element of each axis from a start (slices, splits, unpacking)",
        tflite=(SourceOp("STRIDED_SLICE", from_tflite, _TYPES,
                         "constant begin/end/strides; masks; negative strides"),
                SourceOp("SLICE", from_tflite_slice, _TYPES, "constant begin and size"),
                SourceOp("SPLIT", from_tflite_split, _TYPES, "constant axis"),
                SourceOp("SPLIT_V", from_tflite_split_v, _TYPES, "constant sizes and axis"),
                SourceOp("UNPACK", from_tflite_unpack, _TYPES)),
        onnx=(SourceOp("Slice", from_onnx_slice, ("float32",), "constant starts/ends/axes/steps"),
              SourceOp("Split", from_onnx_split, ("float32",), "constant split sizes")),
        variants=(Variant("generic", _generic, types=MOVE_TYPES),),
        check=check,
        reference="TFLite Micro strided_slice.cc / slice.cc / split.cc / split_v.cc / unpack.cc; ONNX Slice, Split",
        view_of_input=contiguous_offset,
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "STRIDED_SLICE of more than 5 dimensions",
               "`TF_LITE_ENSURE_MSG(dims <= kMaxDim)`, kMaxDim 4 [k/strided_slice_common.cc:66,142]",
               "refused-by-TFLM", "kept (5-D: utvm accepts what TFLM refuses, *Missing*)"),
    Validation("check", "slice parameters do not match the input rank",
               "begin/end/strides sizes checked against the rank [k/strided_slice_common.cc]",
               "refused-by-TFLM", "kept"),
    Validation("check", "slice axes repeated or out of order (internal form of the masks)",
               "— (internal: the importer builds them from the masks)",
               "not-a-model-check", "kept"),
    Validation("check", "a new axis of size other than 1",
               "TFLM builds the output shape itself (new axis: 1) and compares it: `TF_LITE_ENSURE_EQ(output_shape->data[...], dim_shape)` [k/strided_slice_common.cc:119-123]",
               "refused-by-TFLM", "kept"),
    Validation("check", "slice reads outside an axis, or stride 0",
               "`TF_LITE_ENSURE_MSG(stride != 0)` [k/strided_slice_common.cc:102]; begin/end clamped to the axis (StartForAxis/StopForAxis), as utvm's importer does: unreachable otherwise",
               "refused-by-TFLM", "kept"),
    Validation("from_tflite", "STRIDED_SLICE parameters that cannot be resolved (the masks' arithmetic)",
               "the same resolution fails its `TF_LITE_ENSURE`s (stride 0, sizes) [k/strided_slice_common.cc:102-123]",
               "refused-by-TFLM", "kept", rule=True),
    Validation("from_tflite", "STRIDED_SLICE result shape differs from the stored output",
               "`TF_LITE_ENSURE_EQ(output_shape->data[...], dim_shape)`, `TF_LITE_ENSURE_EQ(output_shape->size, shape_size)` [k/strided_slice_common.cc:119-123]",
               "refused-by-TFLM", "kept", rule=True),
    Validation("from_tflite_slice", "SLICE begin/size of another count than the rank",
               "no check; reads begin/size per input dimension (out of bounds) [k/slice.cc]",
               "would-compute-differently", "kept", rule=True),
    Validation("from_tflite_slice", "SLICE outside an axis",
               "no check; copies from outside the input [k/slice.cc]",
               "would-compute-differently", "kept", rule=True),
    Validation("from_tflite_slice", "SLICE result shape differs from the stored output",
               "no check of the stored shape [k/slice.cc]",
               "would-compute-differently", "kept", rule=True),
    Validation("_split_outputs", "SPLIT/SPLIT_V/UNPACK axis out of range",
               "`TF_LITE_ENSURE(axis_value >= 0 && < rank)` [k/split.cc:94-95, split_v.cc:97-98]",
               "refused-by-TFLM", "kept", rule=True),
    Validation("_split_outputs", "SPLIT_V sizes do not add up to the axis",
               "no check; copies by the outputs' sizes [k/split_v.cc]",
               "would-compute-differently", "kept", rule=True),
    Validation("_split_outputs", "a SPLIT part's shape differs from its output",
               "no check; copies by the outputs' sizes [k/split.cc]",
               "would-compute-differently", "kept", rule=True),
    Validation("from_tflite_split", "SPLIT axis not divisible into the outputs",
               "no check; copies axis / num_splits per output [k/split.cc]",
               "would-compute-differently", "kept", rule=True),
    Validation("from_tflite_split_v", "SPLIT_V sizes of another count than the outputs",
               "no check; reads size_splits per output (out of bounds) [k/split_v.cc]",
               "would-compute-differently", "kept", rule=True),
    Validation("from_tflite_unpack", "UNPACK outputs other than the axis size",
               "no check; writes axis-size outputs [k/unpack.cc]",
               "would-compute-differently", "kept", rule=True),
)
