"""DEPTH_TO_SPACE and SPACE_TO_DEPTH: move b x b blocks between the channel axis and the
spatial axes of an NHWC tensor, attrs ``block`` and ``mode`` (``DCR``: the block position is the
outer part of the channel index, as TFLite; ``CRD``: the inner part, ONNX DepthToSpace's other
mode).

Import: TFLite DEPTH_TO_SPACE, SPACE_TO_DEPTH (int8, float32: what TFLite Micro supports);
ONNX DepthToSpace (DCR, CRD), SpaceToDepth.
Semantics: TFLite Micro's reference_ops::DepthToSpace / SpaceToDepth; values are moved, exact.
"""

from __future__ import annotations

from typing import Any

from ..ir import NHWC, Graph, Operator
from ..kernels.kerneldef import KernelDef
from ..kernels.target import Target
from ._movement import TYPES_8_F, check_same_types, gather_kernel
from .base import OpDef, OpError, SourceOp, Validation, Variant

_KINDS = {"DEPTH_TO_SPACE": "depth_to_space", "SPACE_TO_DEPTH": "space_to_depth",
          "DepthToSpace": "depth_to_space", "SpaceToDepth": "space_to_depth"}


def from_tflite(ctx: Any, node: Any) -> None:
    table = "DepthToSpaceOptions" if node.kind == "DEPTH_TO_SPACE" else "SpaceToDepthOptions"
    block = int(ctx.options(node, table).BlockSize())
    ctx.emit(node, _KINDS[node.kind], [node.inputs[0]], node.outputs, {"block": block, "mode": "DCR"})


def from_onnx(imp: Any, node: Any) -> None:
    attrs = imp.attrs(node)
    mode = attrs.get("mode", b"DCR")
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    if mode not in ("DCR", "CRD"):
        raise imp.fail(f"unsupported mode {mode}")
    if len(imp.shape(node.input[0])) != 4:
        raise imp.fail("expects a 4-D input")
    x = imp.get(node.input[0], NHWC)
    imp.emit(_KINDS[node.op_type], [x], node.output[0], NHWC, {"block": int(attrs["blocksize"]), "mode": mode})


def check(g: Graph, op: Operator) -> None:
    check_same_types(g, op, TYPES_8_F, " (TFLite Micro supports int8 and float32)")
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    b = int(op.attrs["block"])
    if len(x.shape) != 4 or b < 1:
        raise OpError(f"{op.source}: expects a 4-D input and a block size of at least 1")
    n, h, w, c = x.shape
    if op.kind == "depth_to_space":
        want = (n, h * b, w * b, c // (b * b)) if c % (b * b) == 0 else None
    else:
        want = (n, h // b, w // b, c * b * b) if h % b == 0 and w % b == 0 else None
    if want != tuple(y.shape):
        raise OpError(f"{op.source}: {op.kind} of {list(x.shape)} by {b} does not give {list(y.shape)}")


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    b = int(op.attrs["block"])
    crd = op.attrs.get("mode", "DCR") == "CRD"
    if op.kind == "depth_to_space":
        c_out = y.shape[3]

        def source(j: tuple[Any, ...]) -> tuple[Any, ...]:
            n, h, w, c = j
            pos = (h % b) * b + w % b
            d = c * (b * b) + pos if crd else c + pos * c_out
            return n, h // b, w // b, d
    else:
        c_in = x.shape[3]

        def source(j: tuple[Any, ...]) -> tuple[Any, ...]:
            n, h, w, d = j
            pos, c = d // c_in, d % c_in
            return n, h * b + pos // b, w * b + pos % b, c

    return gather_kernel(g, op, source)


_REFERENCE = "TFLite Micro {}.cc (reference_ops); ONNX {}"
OPS = (
    OpDef(
        kind="depth_to_space",
        summary="channel blocks moved to b x b spatial blocks",
        tflite=(SourceOp("DEPTH_TO_SPACE", from_tflite, TYPES_8_F),),
        onnx=(SourceOp("DepthToSpace", from_onnx, ("float32",), "mode DCR or CRD"),),
        variants=(Variant("generic", _generic, types=TYPES_8_F),),
        check=check,
        reference=_REFERENCE.format("depth_to_space", "DepthToSpace"),
    ),
    OpDef(
        kind="space_to_depth",
        summary="b x b spatial blocks moved to channels",
        tflite=(SourceOp("SPACE_TO_DEPTH", from_tflite, TYPES_8_F),),
        onnx=(SourceOp("SpaceToDepth", from_onnx, ("float32",)),),
        variants=(Variant("generic", _generic, types=TYPES_8_F),),
        check=check,
        reference=_REFERENCE.format("space_to_depth", "SpaceToDepth"),
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "DEPTH_TO_SPACE / SPACE_TO_DEPTH not 4-D or block below 1",
               "`TF_LITE_ENSURE_EQ(NumDimensions(input), 4)`, `TF_LITE_ENSURE(block_size > 0)` [k/depth_to_space.cc:53,61, space_to_depth.cc:52]",
               "refused-by-TFLM", "kept"),
    Validation("check", "stored output is not what the block gives",
               "`TF_LITE_ENSURE_EQ` on height, width, channels (TFLM then writes the output dims) [k/depth_to_space.cc:69-71, space_to_depth.cc:65-66]",
               "refused-by-TFLM", "kept"),
)
