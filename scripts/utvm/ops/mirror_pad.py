"""MIRROR_PAD: widen a tensor by a border on every axis whose elements mirror the input at its
edges, attrs ``pads`` (one (before, after) pair per axis) and ``mode``: ``reflect`` (the edge
element is not repeated: ``[a b c]`` padded by 2 on both sides is ``c b a b c b a``) or
``symmetric`` (it is: ``b a a b c c b``).

Import: TFLite MIRROR_PAD (int8, float32, as TFLite Micro's mirror_pad.cc; constant int32 or
int64 paddings; MirrorPadOptions mode REFLECT or SYMMETRIC). The ONNX counterpart, Pad with
mode 'reflect', is imported by :mod:`utvm.ops.pad`; ONNX has no symmetric mode.
Semantics: along an axis of n elements with ``before`` and ``after`` padding, output index j
reads input index i = j - before inside the input; left of it ``-i`` (reflect) or ``-i - 1``
(symmetric), right of it ``2 (n - 1) - i`` (reflect) or ``2 n - 1 - i`` (symmetric); values are
moved as they are (no requantization, as TFLite Micro), exact. TFLite Micro checks only the
shape of the paddings; a border wider than the axis can mirror (n - 1 for reflect, n for
symmetric) or a negative one makes it read outside the input, so these are refused here (as
TensorFlow's MirrorPad refuses them).
"""

from __future__ import annotations

from typing import Any

from tvm import tirx

from ..ir import Graph, Operator
from ..kernels.kerneldef import KernelDef
from ..kernels.target import Target
from ._movement import TYPES_8_F, check_same_types, gather_kernel, tflite_ints
from .base import OpDef, OpError, SourceOp, Validation, Variant

#: tflite.MirrorPadMode values
MODES = {0: "reflect", 1: "symmetric"}


def from_tflite(ctx: Any, node: Any) -> None:
    x = ctx.tensors[node.inputs[0]]
    pads_t = ctx.tensors.get(node.inputs[1]) if len(node.inputs) > 1 and node.inputs[1] else None
    if pads_t is not None and pads_t.dtype not in ("int32", "int64"):
        raise ctx.fail(node, f"paddings of type {pads_t.dtype} are not supported (int32 or int64, as TFLite Micro)")
    pads = tflite_ints(ctx, node, 1, "paddings")
    if pads.ndim != 2 or pads.shape[0] != len(x.shape) or pads.shape[1] != 2:
        raise ctx.fail(node, f"paddings of shape {list(pads.shape)} do not fit a {len(x.shape)}-D input "
                             f"(needs [{len(x.shape)}, 2])")
    mode = int(ctx.options(node, "MirrorPadOptions").Mode())
    if mode not in MODES:
        raise ctx.fail(node, f"unknown mirror padding mode {mode} (REFLECT or SYMMETRIC)")
    ctx.emit(node, "mirror_pad", [node.inputs[0]], node.outputs,
             {"pads": tuple((int(a), int(b)) for a, b in pads), "mode": MODES[mode]})


def check(g: Graph, op: Operator) -> None:
    check_same_types(g, op, TYPES_8_F, name=" (TFLite Micro mirror-pads int8 and float32)")
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    pads, mode = op.attrs["pads"], op.attrs["mode"]
    if mode not in MODES.values():
        raise OpError(f"{op.source}: unknown mirror padding mode '{mode}'")
    if len(pads) != len(x.shape):
        raise OpError(f"{op.source}: {len(pads)} padding pairs for a {len(x.shape)}-D input")
    most = 1 if mode == "reflect" else 0
    for k, (d, (a, b)) in enumerate(zip(x.shape, pads)):
        if min(a, b) < 0 or max(a, b) > d - most:
            raise OpError(f"{op.source}: {mode} padding ({a}, {b}) of axis {k} ({d} elements) must lie in "
                          f"[0, {d - most}]")
    want = tuple(d + a + b for d, (a, b) in zip(x.shape, pads))
    if want != tuple(y.shape):
        raise OpError(f"{op.source}: padding {list(x.shape)} by {list(pads)} gives {list(want)}, "
                      f"the output is {list(y.shape)}")


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x = g.tensors[op.inputs[0]]
    reflect = op.attrs["mode"] == "reflect"

    def source(j: tuple[Any, ...]) -> tuple[Any, ...]:
        out = []
        for jk, n, (before, after) in zip(j, x.shape, op.attrs["pads"]):
            i = jk - before if before else jk
            if before:
                i = tirx.if_then_else(i < 0, (0 if reflect else -1) - i, i)
            if after:
                i = tirx.if_then_else(i >= n, (2 * (n - 1) if reflect else 2 * n - 1) - i, i)
            out.append(i)
        return tuple(out)

    return gather_kernel(g, op, source)


OPS = (
    OpDef(
        kind="mirror_pad",
        summary="widen by a border mirroring the input (reflect or symmetric)",
        tflite=(SourceOp("MIRROR_PAD", from_tflite, TYPES_8_F,
                         "constant int32/int64 paddings; REFLECT or SYMMETRIC; borders up to the axis size"),),
        variants=(Variant("generic", _generic, types=TYPES_8_F),),
        check=check,
        reference="TFLite Micro mirror_pad.cc (ONNX Pad reflect: see pad)",
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "mode other than reflect/symmetric",
               "— (internal: the import rule maps the flatbuffer's modes, see *Import rules*)",
               "not-a-model-check", "kept"),
    Validation("check", "padding pairs of another count than the input's rank",
               "`TF_LITE_ENSURE_EQ(SizeOfDimension(padding_matrix, 0), NumDimensions(input))` [k/mirror_pad.cc:182]",
               "refused-by-TFLM", "kept"),
    Validation("check", "a negative padding, or one wider than the axis can mirror (REFLECT: d - 1, SYMMETRIC: d)",
               "no check; GetInputDimension gives an index outside the axis, the kernel reads outside the input [k/mirror_pad.cc:42-56]",
               "would-compute-differently", "kept"),
    Validation("check", "stored output shape other than the padded input's",
               "no check; Eval maps each output index by the output's dims [k/mirror_pad.cc:80, 128-132]",
               "would-compute-differently", "kept"),
    Validation("from_tflite", "MIRROR_PAD paddings of a type other than int32/int64",
               "no check; GetFlatIndex's type switch reads no padding for other types (both 0, `default: break`) and mirrors by the output's dims [k/mirror_pad.cc:68-76]",
               "would-compute-differently", "kept", rule=True),
    Validation("from_tflite", "MIRROR_PAD paddings not of shape [rank, 2]",
               "`TF_LITE_ENSURE_EQ(NumDimensions(padding_matrix), 2)`, `SizeOfDimension(padding_matrix, 0) == NumDimensions(input)` [k/mirror_pad.cc:181-182] (the second dimension is not checked: pairs read past the tensor)",
               "refused-by-TFLM", "kept", rule=True),
    Validation("from_tflite", "MIRROR_PAD mode other than REFLECT (0) and SYMMETRIC (1)",
               "not refused: ConvertMirrorPadding gives kTfLiteMirrorPaddingUnknown [core/api/flatbuffer_conversions.cc:140-147], and Prepare's `offset = mode != Reflect ? 0 : 1` pads it as SYMMETRIC [k/mirror_pad.cc:190]",
               "neither", "kept (left: utvm could pad an unknown mode as SYMMETRIC)", rule=True),
)
