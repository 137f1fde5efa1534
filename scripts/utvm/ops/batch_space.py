"""SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND: move bh x bw spatial blocks between the batch axis
and the spatial axes of a 4-D NHWC (or 3-D NHD) tensor, attrs ``block`` (bh, bw) and, for
space_to_batch_nd, ``pads`` (top, left) and the padding ``value``; for batch_to_space_nd
``crops`` (top, left). The output shape gives the rest.

Import: TFLite SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND (int8, float32: what TFLite Micro supports;
constant block shape, paddings and crops).
Semantics: TFLite Micro's reference_ops::SpaceToBatchND / BatchToSpaceND (3-D tensors as
[batch, height, 1, depth]). Padded positions hold the output zero point (int8) or 0.0, as
TFLite's own kernel sets them: TFLite Micro's kernel never sets its ``output_offset`` parameter,
so what it writes there depends on what its arena held before (bit-exact comparisons use
paddings that pad nothing).
"""

from __future__ import annotations

from typing import Any

from tvm import tirx

from ..ir import Graph, Operator
from ..kernels.kerneldef import KernelDef
from ..kernels.target import Target
from ._movement import TYPES_8_F, check_same_types, gather_kernel, tflite_ints
from .base import OpDef, OpError, SourceOp, Validation, Variant


def from_tflite(ctx: Any, node: Any) -> None:
    x = ctx.tensors[node.inputs[0]]
    if len(x.shape) not in (3, 4):
        raise ctx.fail(node, f"expects a 3-D or 4-D input, got {list(x.shape)}")
    block = [int(v) for v in tflite_ints(ctx, node, 1, "block shape").reshape(-1)]
    edges = tflite_ints(ctx, node, 2, "paddings" if node.kind == "SPACE_TO_BATCH_ND" else "crops").reshape(-1)
    spatial = len(x.shape) - 2
    if len(block) != spatial or edges.size != 2 * spatial:
        raise ctx.fail(node, f"block shape and paddings/crops must cover {spatial} spatial axes")
    if spatial == 1:
        block.append(1)
        edges = list(edges) + [0, 0]
    top_left = (int(edges[0]), int(edges[2]))
    if node.kind == "SPACE_TO_BATCH_ND":
        y = ctx.tensors[node.outputs[0]]
        value: float | int = 0.0 if x.dtype == "float32" else (y.quant.scalar()[1] if y.quant is not None else 0)
        attrs: dict[str, Any] = {"block": tuple(block), "pads": top_left, "value": value}
        ctx.emit(node, "space_to_batch_nd", [node.inputs[0]], node.outputs, attrs)
    else:
        ctx.emit(node, "batch_to_space_nd", [node.inputs[0]], node.outputs,
                 {"block": tuple(block), "crops": top_left})


def _nhwc(shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    return (shape[0], shape[1], 1, shape[2]) if len(shape) == 3 else (shape[0], shape[1], shape[2], shape[3])


def check(g: Graph, op: Operator) -> None:
    check_same_types(g, op, TYPES_8_F, " (TFLite Micro supports int8 and float32)")
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    if len(x.shape) not in (3, 4) or len(y.shape) != len(x.shape):
        raise OpError(f"{op.source}: expects 3-D or 4-D tensors")
    bh, bw = op.attrs["block"]
    if bh < 1 or bw < 1:
        raise OpError(f"{op.source}: block sizes must be positive")
    (n, h, w, c), (on, oh, ow, oc) = _nhwc(x.shape), _nhwc(y.shape)
    if c != oc:
        raise OpError(f"{op.source}: the depth changes from {c} to {oc}")
    if op.kind == "space_to_batch_nd":
        top, left = op.attrs["pads"]
        ok = on == n * bh * bw and top >= 0 and left >= 0 and oh * bh >= top + h and ow * bw >= left + w
    else:
        top, left = op.attrs["crops"]
        ok = n == on * bh * bw and top >= 0 and left >= 0 and oh + top <= h * bh and ow + left <= w * bw
    if not ok:
        raise OpError(f"{op.source}: {op.kind} of {list(x.shape)} with block {bh}x{bw} does not give {list(y.shape)}")


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    bh, bw = (int(v) for v in op.attrs["block"])
    three = len(x.shape) == 3
    (n_in, h_in, w_in, _), (n_out, _, _, _) = _nhwc(x.shape), _nhwc(y.shape)

    def split(j: tuple[Any, ...]) -> tuple[Any, Any, Any, Any]:
        return (j[0], j[1], 0, j[2]) if three else (j[0], j[1], j[2], j[3])

    def pack(b: Any, h: Any, w: Any, c: Any) -> tuple[Any, ...]:
        return (b, h, c) if three else (b, h, w, c)

    if op.kind == "batch_to_space_nd":
        top, left = (int(v) for v in op.attrs["crops"])

        def source(j: tuple[Any, ...]) -> tuple[Any, ...]:
            b, h, w, c = split(j)
            hh, ww = h + top, w + left
            offset = (hh % bh) * bw + ww % bw
            return pack(offset * n_out + b, hh // bh, ww // bw, c)

        return gather_kernel(g, op, source)

    top, left = (int(v) for v in op.attrs["pads"])

    def position(j: tuple[Any, ...]) -> tuple[Any, Any, Any, Any]:
        b, h, w, c = split(j)
        shift = b // n_in
        return b % n_in, h * bh + shift // bw - top, w * bw + shift % bw - left, c

    def source_s2b(j: tuple[Any, ...]) -> tuple[Any, ...]:
        return pack(*position(j))

    def inside(j: tuple[Any, ...]) -> Any:
        _, h, w, _ = position(j)
        return tirx.all(h >= 0, h < h_in, w >= 0, w < w_in)

    return gather_kernel(g, op, source_s2b, inside, op.attrs["value"])


OPS = (
    OpDef(
        kind="space_to_batch_nd",
        summary="spatial blocks moved to the batch axis (padded with zeros)",
        tflite=(SourceOp("SPACE_TO_BATCH_ND", from_tflite, TYPES_8_F, "constant block shape and paddings; 3-D/4-D"),),
        variants=(Variant("generic", _generic, types=TYPES_8_F),),
        check=check,
        reference="TFLite Micro space_to_batch_nd.cc (reference_ops::SpaceToBatchND)",
    ),
    OpDef(
        kind="batch_to_space_nd",
        summary="batch blocks moved back to the spatial axes (with cropping)",
        tflite=(SourceOp("BATCH_TO_SPACE_ND", from_tflite, TYPES_8_F, "constant block shape and crops; 3-D/4-D"),),
        variants=(Variant("generic", _generic, types=TYPES_8_F),),
        check=check,
        reference="TFLite Micro batch_to_space_nd.cc (reference_ops::BatchToSpaceND)",
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "BATCH_TO_SPACE_ND / SPACE_TO_BATCH_ND not 3-D or 4-D",
               "`TF_LITE_ENSURE(NumDimensions >= 3 && <= 4)` in and out [k/batch_to_space_nd.cc:53-56, space_to_batch_nd.cc:60-63]",
               "refused-by-TFLM", "kept"),
    Validation("check", "block size below 1",
               "no check; reference divides the batch by the block product (0: SIGFPE) or indexes with negative strides [k/batch_to_space_nd.cc]",
               "would-compute-differently", "kept"),
    Validation("check", "output depth differs from the input's",
               "no check; the reference copies `depth` values per pixel into the stored output (out of bounds) [k/batch_to_space_nd.cc]",
               "would-compute-differently", "kept"),
    Validation("check", "stored output shape is not what block and paddings/crops give",
               "no check of the stored shape; the reference loops over it and reads outside the input [k/batch_to_space_nd.cc]",
               "would-compute-differently", "kept"),
    Validation("from_tflite", "BATCH_TO_SPACE_ND / SPACE_TO_BATCH_ND input not 3-D or 4-D",
               "`TF_LITE_ENSURE(NumDimensions(input) >= 3 && <= 4)` [k/batch_to_space_nd.cc:53-56]",
               "refused-by-TFLM", "kept", rule=True),
    Validation("from_tflite", "block shape / crops or paddings not covering the spatial axes",
               "no check; the reference reads block_shape and crops by the input's spatial rank (out of bounds) [k/batch_to_space_nd.cc:80]",
               "would-compute-differently", "kept", rule=True),
)
