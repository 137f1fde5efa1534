"""CONCATENATION: inputs side by side along one axis. No kernel of its own: each input has a
slot in the output (:func:`slots`) and its producer writes straight into it where the lowering
can arrange that (``utvm.lower.lowering``); any other input is copied into its slot by the
generic variant, built for a one-input concatenation (a copy).

Import: TFLite CONCATENATION (fused activation NONE, as TFLite Micro requires), PACK (each input
given the new axis by a reshape, then concatenated); ONNX Concat.
Semantics: TFLite Micro's concatenation.cc copies the inputs' values unchanged: int8 inputs must
have the output's scale and zero point (TFLite Micro refuses others, so does utvm), int16 ones
zero point 0 (values are copied even when scales differ, as TFLite Micro does).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tvm import te

from ..ir import NHWC, PLAIN, TO_NHWC, Graph, Operator, Tensor
from ..kernels.kerneldef import KernelArg, KernelDef
from ..kernels.target import Target
from .base import OpDef, OpError, Slot, SourceOp, Validation, Variant

_TYPES = ("int8", "int16", "int32", "float32")


def _axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def join(parts: list[str], out: str, axis: int, source: str) -> Operator:
    """``parts`` side by side along ``axis`` into ``out`` (the patch planner's join)."""
    return Operator("concatenation", parts, [out], {"axis": axis}, source)


def from_tflite(ctx: Any, node: Any) -> None:
    o = ctx.options(node, "ConcatenationOptions")
    if ctx.activation(o.FusedActivationFunction(), node) != "none":
        raise ctx.fail(node, "a fused activation on CONCATENATION is not supported (TFLite Micro refuses it too)")
    y = ctx.tensors[node.outputs[0]]
    axis = _axis(int(o.Axis()), len(y.shape))
    ctx.emit(node, "concatenation", list(node.inputs), node.outputs, {"axis": axis})


def from_tflite_pack(ctx: Any, node: Any) -> None:
    """PACK: each input [d0..dn] becomes [d0..1..dn] (a reshape), then they are concatenated."""
    o = ctx.options(node, "PackOptions")
    y = ctx.tensors[node.outputs[0]]
    axis = _axis(int(o.Axis()), len(y.shape))
    if not 0 <= axis < len(y.shape):
        raise ctx.fail(node, f"axis {o.Axis()} out of range for a {len(y.shape)}-D output")
    parts = []
    for k, name in enumerate(node.inputs):
        x = ctx.tensors[name]
        shape = x.shape[:axis] + (1,) + x.shape[axis:]
        if len(shape) != len(y.shape):
            raise ctx.fail(node, f"input {list(x.shape)} does not fit output {list(y.shape)}")
        part = f"{node.outputs[0]}:pack{k}"
        data = None if x.data is None else x.data.reshape(shape)
        ctx.tensors[part] = Tensor(part, shape, x.dtype, x.quant, data)
        if data is None:
            ctx.emit(node, "reshape", [name], [part])
        parts.append(part)
    ctx.emit(node, "concatenation", parts, node.outputs, {"axis": axis, "pack": True})


def from_onnx(imp: Any, node: Any) -> None:
    out = node.output[0]
    shape = imp.shape(out)
    rank = len(shape)
    axis = _axis(int(imp.attrs(node)["axis"]), rank)
    names = [n for n in node.input if n]
    variable = [n for n in names if n not in imp.consts]
    layout = PLAIN
    if rank == 4 and any(NHWC in imp.vals.get(n, {}) for n in variable):
        layout = NHWC
    inputs = []
    for n in names:
        if n in imp.consts:
            data = imp.float_const(n, "input")
            inputs.append(imp.add_const(f"{out}_part", data.transpose(TO_NHWC) if layout == NHWC else data))
        else:
            inputs.append(imp.get(n, layout))
    if layout == NHWC:
        axis = TO_NHWC.index(axis)
    imp.emit("concatenation", inputs, out, layout, {"axis": axis})


def check(g: Graph, op: Operator) -> None:
    y = g.tensors[op.outputs[0]]
    axis = int(op.attrs["axis"])
    if not 0 <= axis < len(y.shape):
        raise OpError(f"{op.source}: axis {axis} out of range for a {len(y.shape)}-D output")
    if y.dtype not in _TYPES:
        raise OpError(f"{op.source}: unsupported data type {y.dtype}")
    total = 0
    for name in op.inputs:
        x = g.tensors[name]
        if x.dtype != y.dtype:
            raise OpError(f"{op.source}: input type {x.dtype} differs from the output type {y.dtype}")
        if len(x.shape) != len(y.shape) or any(a != b for d, (a, b) in enumerate(zip(x.shape, y.shape))
                                               if d != axis):
            raise OpError(f"{op.source}: input {list(x.shape)} does not fit output {list(y.shape)} along axis {axis}")
        total += x.shape[axis]
        if op.attrs.get("pack"):
            continue  # TFLite Micro's PACK copies values whatever their quantization
        if y.dtype == "int8":
            if x.quant is None or y.quant is None or x.quant.scalar() != y.quant.scalar():
                raise OpError(f"{op.source}: int8 inputs must have the output's scale and zero point "
                              "(TFLite Micro does not requantize in CONCATENATION)")
        if y.dtype == "int16" and ((x.quant is not None and x.quant.scalar()[1] != 0)
                                   or (y.quant is not None and y.quant.scalar()[1] != 0)):
            raise OpError(f"{op.source}: int16 tensors need zero point 0")
    if len(op.inputs) > 1 and total != y.shape[axis]:
        raise OpError(f"{op.source}: inputs add up to {total} along axis {axis}, the output has {y.shape[axis]}")


def compact_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major element strides of ``shape``."""
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    return tuple(strides)


def slots(g: Graph, op: Operator) -> list[Slot]:
    """Each input's place in the output: one contiguous run when every axis before the
    concatenation axis has size 1, else the output's strides."""
    y = g.tensors[op.outputs[0]]
    axis = int(op.attrs["axis"])
    strides = compact_strides(y.shape)
    contiguous = int(np.prod(y.shape[:axis], dtype=np.int64)) == 1
    out, start = [], 0
    for name in op.inputs:
        out.append(Slot(start * strides[axis], None if contiguous else strides))
        start += g.tensors[name].shape[axis]
    return out


def _copy(g: Graph, op: Operator, target: Target) -> KernelDef:
    """A one-input concatenation: a copy (the lowering points its output at the input's slot)."""
    if len(op.inputs) != 1:
        raise OpError(f"{op.source}: a concatenation kernel copies one input, not {len(op.inputs)}")
    x = g.tensors[op.inputs[0]]
    X = te.placeholder(x.shape, x.dtype, name="x")
    out = te.compute(x.shape, lambda *i: X[i], name="out")
    return KernelDef([KernelArg(X, tensor=x.name)], out, op.outputs[0])


OPS = (
    OpDef(
        kind="concatenation",
        summary="inputs side by side along an axis (producers write into their slot)",
        tflite=(SourceOp("CONCATENATION", from_tflite, ("int8", "int16", "float32"),
                         "int8 inputs quantized as the output; fused activation NONE"),
                SourceOp("PACK", from_tflite_pack, ("int8", "int16", "float32"),
                         "int8 inputs quantized as the output")),
        onnx=(SourceOp("Concat", from_onnx, ("float32",), qdq="passthrough"),),
        variants=(Variant("generic", _copy, types=_TYPES),),
        check=check,
        reference="TFLite Micro concatenation.cc / pack.cc (reference_ops::Concatenation); ONNX Concat",
        input_slots=slots,
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "axis outside the output's rank",
               "CalculatePositiveAxis then reference indexes dims with it (out of bounds), no check [k/concatenation.cc:215]",
               "would-compute-differently", "kept"),
    Validation("check", "type outside bool/int8/int16/int32/int64/float32",
               "`TF_LITE_ENSURE(input_type == ...)` [k/concatenation.cc:148]",
               "refused-by-TFLM", "kept"),
    Validation("check", "an input's type differs from the output's",
               "`TF_LITE_ENSURE_TYPES_EQ(input->type, input_type)`, output == input type [k/concatenation.cc:154,169]",
               "refused-by-TFLM", "kept"),
    Validation("check", "an input's shape differs from the output's off the axis",
               "no check; copies by the stored sizes (out of bounds) [k/concatenation.cc]",
               "would-compute-differently", "kept"),
    Validation("check", "int8 input with another scale or zero point than the output",
               "`TF_LITE_ENSURE_EQ(input scale, output scale)`, zero points [k/concatenation.cc:183-186]",
               "refused-by-TFLM", "kept"),
    Validation("check", "int16 input or output zero point not 0",
               "`TF_LITE_ENSURE_EQ(zero_point, 0)` [k/concatenation.cc:189,205]",
               "refused-by-TFLM", "kept"),
    Validation("check", "inputs do not add up to the output along the axis",
               "no check; writes by the inputs' sizes (out of bounds) [k/concatenation.cc]",
               "would-compute-differently", "kept"),
    Validation("_copy", "(kernel) the copy variant met several inputs",
               "— (internal: the variant is only chosen for one input)",
               "not-a-model-check", "kept"),
    Validation("from_tflite", "CONCATENATION with a fused activation",
               "`TF_LITE_ENSURE_EQ(params->activation, kTfLiteActNone)` [k/concatenation.cc:147]",
               "refused-by-TFLM", "kept", rule=True),
    Validation("from_tflite_pack", "PACK axis outside the output's rank",
               "a negative axis gets the rank added, no range check (out of bounds) [k/pack.cc:38-47]",
               "would-compute-differently", "kept", rule=True),
    Validation("from_tflite_pack", "PACK input not the output's shape without the axis",
               "no check; copies by input 0's size [k/pack.cc]",
               "would-compute-differently", "kept", rule=True),
)
