"""REVERSE_V2: the input with the order of its elements reversed along some axes, attr ``axes``
(sorted, non-negative).

Import: TFLite REVERSE_V2 (int8, int16, int32, float32, uint8, int64, bool, as TFLite Micro's
reverse.cc; a constant 1-D int32 axis tensor, negative axes counted from
the end). ONNX has no counterpart.
Semantics: ``out[j] = x[j']`` with ``j'_a = n_a - 1 - j_a`` for every axis a in ``axes`` and
``j'_a = j_a`` otherwise; values are moved as they are (no requantization), exact. As TFLite
Micro: up to 6 dimensions, at most as many axes as dimensions, the axes (once sorted) next to
each other, each once; an empty axis list is refused too (TFLite Micro's kernel reads its last
axis).
"""

from __future__ import annotations

from typing import Any

from ..ir import Graph, Operator
from ..kernels.kerneldef import KernelDef
from ..kernels.target import Target
from ._movement import MOVE_TYPES, check_same_types, gather_kernel
from .base import OpDef, OpError, SourceOp, Validation, Variant

TYPES = (*MOVE_TYPES, "int32", "uint8", "int64", "bool")
#: TFLite Micro reverses tensors of up to 6 dimensions (RuntimeShape::kMaxSmallSize)
MAX_DIMS = 6


def from_tflite(ctx: Any, node: Any) -> None:
    if len(node.inputs) < 2 or not node.inputs[1]:
        raise ctx.fail(node, "expects an input and an axis tensor")
    x, axis = ctx.tensors[node.inputs[0]], ctx.tensors[node.inputs[1]]
    if axis.dtype != "int32":
        raise ctx.fail(node, f"an axis tensor of type {axis.dtype} is not supported (int32, as TFLite Micro)")
    if axis.data is None:
        raise ctx.fail(node, "the axis tensor must be constant")
    if axis.data.ndim != 1:
        raise ctx.fail(node, f"the axis tensor must be 1-D, it is {axis.data.ndim}-D")
    rank = len(x.shape)
    if axis.data.size > rank:
        raise ctx.fail(node, f"{axis.data.size} axes for a {rank}-D input")
    axes = [int(a) + rank if int(a) < 0 else int(a) for a in axis.data]
    if any(not 0 <= a < rank for a in axes):
        raise ctx.fail(node, f"axes {axis.data.tolist()} out of range for a {rank}-D input")
    ctx.emit(node, "reverse", [node.inputs[0]], node.outputs, {"axes": tuple(sorted(axes))})


def check(g: Graph, op: Operator) -> None:
    check_same_types(g, op, TYPES)
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    axes = list(op.attrs["axes"])
    if len(x.shape) > MAX_DIMS:
        raise OpError(f"{op.source}: REVERSE_V2 supports up to {MAX_DIMS} dimensions, the input has {len(x.shape)}")
    if not axes:
        raise OpError(f"{op.source}: no axis to reverse (TFLite Micro needs at least one)")
    if axes != list(range(axes[0], axes[0] + len(axes))) or not 0 <= axes[0] <= axes[-1] < len(x.shape):
        raise OpError(f"{op.source}: axes {axes} are not distinct neighbours inside a {len(x.shape)}-D input "
                      "(TFLite Micro reverses contiguous axes only)")
    if tuple(x.shape) != tuple(y.shape):
        raise OpError(f"{op.source}: the output {list(y.shape)} differs from the input {list(x.shape)}")


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x = g.tensors[op.inputs[0]]
    axes = set(op.attrs["axes"])
    return gather_kernel(g, op, lambda j: tuple(n - 1 - jk if k in axes and n > 1 else jk
                                                 for k, (jk, n) in enumerate(zip(j, x.shape))))


OPS = (
    OpDef(
        kind="reverse",
        summary="the elements in reverse order along some axes",
        tflite=(SourceOp("REVERSE_V2", from_tflite, TYPES,
                         "constant int32 axes, contiguous, each once; up to 6-D"),),
        variants=(Variant("generic", _generic, types=TYPES),),
        check=check,
        reference="TFLite Micro reverse.cc (reference_ops::Reverse)",
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "input of more than 6 dimensions",
               "`TF_LITE_ENSURE(NumDimensions(input) <= kMaxDimensions)` (RuntimeShape::kMaxSmallSize, 6) [k/reverse.cc:32,61]",
               "refused-by-TFLM", "kept"),
    Validation("check", "no axis to reverse (an empty axis tensor)",
               "no check; reference_ops::Reverse reads `axes[num_axes - 1]`, axes[-1] of the std::array (out of bounds) [k/reverse.cc:94-99, reference/reverse.h]",
               "would-compute-differently", "kept"),
    Validation("check", "axes not contiguous, repeated or outside the rank",
               '`TF_LITE_ENSURE(axes_data[i] >= 0 && < rank)`, `MicroPrintf("Non-contiguous axes not supported")` (a repeated axis is not contiguous after the sort) [k/reverse.cc:105,117]',
               "refused-by-TFLM", "kept"),
    Validation("check", "output shape other than the input's",
               "no shape check (only `TF_LITE_ENSURE_EQ(input->type, output->type)`); Reverse writes the input's flat size into the output [k/reverse.cc:79]",
               "would-compute-differently", "kept"),
    Validation("from_tflite", "REVERSE_V2 without an input and an axis tensor",
               "`TF_LITE_ENSURE_EQ(NumInputs(node), 2)`, `TF_LITE_ENSURE(axis != nullptr)` [k/reverse.cc:47,56]",
               "refused-by-TFLM", "kept", rule=True),
    Validation("from_tflite", "REVERSE_V2 axis of a type other than int32",
               '`MicroPrintf("Axis Type \'%s\' is not supported by reverse.")` [k/reverse.cc:73-76]',
               "refused-by-TFLM", "kept", rule=True),
    Validation("from_tflite", "REVERSE_V2 axis not constant",
               "read in Eval [k/reverse.cc:94-99]",
               "would-compute-differently", "kept: utvm needs the axes at compile time", rule=True),
    Validation("from_tflite", "REVERSE_V2 axis tensor not 1-D",
               "`TF_LITE_ENSURE_EQ(NumDimensions(axis), 1)` [k/reverse.cc:60]",
               "refused-by-TFLM", "kept", rule=True),
    Validation("from_tflite", "REVERSE_V2 more axes than the input's rank",
               "`TF_LITE_ENSURE(NumDimensions(input) >= NumElements(axis))` [k/reverse.cc:62]",
               "refused-by-TFLM", "kept", rule=True),
    Validation("from_tflite", "REVERSE_V2 axis outside the rank (after adding the rank to a negative one)",
               "`TF_LITE_ENSURE(axes_data[i] >= 0 && axes_data[i] < rank)` [k/reverse.cc:105]",
               "refused-by-TFLM", "kept", rule=True),
)
