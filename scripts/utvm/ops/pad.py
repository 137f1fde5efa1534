"""PAD: widen a tensor by a border on every axis, attrs ``pads`` (one (before, after) pair per
axis; negative values crop, ONNX only), ``value`` (the padding value: a float, or the quantized
integer for int8/int16) and ``mode`` (constant; ONNX also edge and reflect).

Import: TFLite PAD (value: the output zero point for int8, 0 for int16 and float32, as TFLite
Micro's pad.cc), PADV2 (value: its constant input, raw); ONNX Pad (constant, edge, reflect).
Semantics: ``out[j] = x[j - before]`` inside the input, else the value (constant), the nearest
edge element (edge) or the element mirrored at the edge (reflect); exact for every type.
"""

from __future__ import annotations

from typing import Any

from tvm import tirx

from ..ir import NHWC, PLAIN, TO_NHWC, Graph, Operator
from ..kernels.kerneldef import KernelDef
from ..kernels.target import Target
from ._movement import TYPES_8_16_F, check_same_types, gather_kernel, onnx_ints, tflite_ints
from .base import OpDef, OpError, SourceOp, Validation, Variant

#: TFLite Micro pads tensors of up to 5 dimensions
MAX_DIMS = 5


def from_tflite(ctx: Any, node: Any) -> None:
    x, y = ctx.tensors[node.inputs[0]], ctx.tensors[node.outputs[0]]
    pads = tflite_ints(ctx, node, 1, "paddings")
    if pads.size != 2 * len(x.shape):
        raise ctx.fail(node, f"paddings has {pads.size} values, a {len(x.shape)}-D input needs {2 * len(x.shape)}")
    pairs = tuple((int(a), int(b)) for a, b in pads.reshape(-1, 2))
    value: float | int = 0.0 if x.dtype == "float32" else 0
    if node.kind == "PADV2" and len(node.inputs) > 2 and node.inputs[2]:
        c = ctx.tensors[node.inputs[2]]
        if c.data is None or c.data.size != 1:
            raise ctx.fail(node, "the constant value must be a constant scalar")
        if c.dtype != x.dtype:
            raise ctx.fail(node, f"the constant value is {c.dtype}, the input {x.dtype}")
        if x.dtype == "int8" and (c.quant is None or y.quant is None or c.quant.scalar() != y.quant.scalar()):
            raise ctx.fail(node, "the int8 constant value must be quantized as the output")
        value = float(c.data.reshape(-1)[0]) if x.dtype == "float32" else int(c.data.reshape(-1)[0])
    elif x.dtype == "int8" and y.quant is not None:
        value = y.quant.scalar()[1]
    ctx.emit(node, "pad", [node.inputs[0]], node.outputs, {"pads": pairs, "value": value, "mode": "constant"})


def from_onnx(imp: Any, node: Any) -> None:
    attrs = imp.attrs(node)
    mode = attrs.get("mode", b"constant")
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    if mode not in ("constant", "edge", "reflect"):
        raise imp.fail(f"Pad mode '{mode}' is not supported (constant, edge, reflect)")
    x_name = node.input[0]
    rank = len(imp.shape(x_name))
    if imp.opset < 11:
        flat = [int(p) for p in attrs.get("pads", [])]
        value = float(attrs.get("value", 0.0))
    else:
        flat = [int(p) for p in onnx_ints(imp, node.input[1], "pads")] if len(node.input) > 1 else []
        value = 0.0
        if len(node.input) > 2 and node.input[2]:
            value = float(imp.float_const(node.input[2], "constant value").reshape(-1)[0])
    axes = list(range(rank))
    if len(node.input) > 3 and node.input[3]:
        axes = [int(a) + rank if int(a) < 0 else int(a) for a in onnx_ints(imp, node.input[3], "axes")]
    if len(flat) != 2 * len(axes):
        raise imp.fail(f"pads has {len(flat)} values for {len(axes)} axes")
    pairs = [(0, 0)] * rank
    for k, a in enumerate(axes):
        pairs[a] = (flat[k], flat[k + len(axes)])
    have = imp.vals.get(x_name, {})
    layout = NHWC if rank == 4 and NHWC in have else PLAIN
    if layout == NHWC:
        pairs = [pairs[p] for p in TO_NHWC]
    imp.emit("pad", [imp.get(x_name, layout)], node.output[0], layout,
             {"pads": tuple(pairs), "value": value, "mode": mode})


def check(g: Graph, op: Operator) -> None:
    check_same_types(g, op, TYPES_8_16_F)
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    pads = op.attrs["pads"]
    if len(x.shape) > MAX_DIMS:
        raise OpError(f"{op.source}: PAD supports up to {MAX_DIMS} dimensions, the input has {len(x.shape)}")
    if len(pads) != len(x.shape):
        raise OpError(f"{op.source}: {len(pads)} padding pairs for a {len(x.shape)}-D input")
    want = tuple(d + a + b for d, (a, b) in zip(x.shape, pads))
    if want != tuple(y.shape):
        raise OpError(f"{op.source}: padding {list(x.shape)} by {list(pads)} gives {list(want)}, "
                      f"the output is {list(y.shape)}")
    mode = op.attrs.get("mode", "constant")
    if mode == "reflect" and any(max(a, b) >= d for d, (a, b) in zip(x.shape, pads)):
        raise OpError(f"{op.source}: reflect padding must be smaller than the padded axis")
    if mode != "constant" and any(d == 0 for d in x.shape):
        raise OpError(f"{op.source}: {mode} padding of an empty tensor")
    if x.dtype != "float32":
        info = (-128, 127) if x.dtype == "int8" else (-32768, 32767)
        if not info[0] <= int(op.attrs["value"]) <= info[1]:
            raise OpError(f"{op.source}: padding value {op.attrs['value']} out of {x.dtype} range")


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x = g.tensors[op.inputs[0]]
    before = [int(a) for a, _ in op.attrs["pads"]]
    mode = op.attrs.get("mode", "constant")
    dims = x.shape

    def source(j: tuple[Any, ...]) -> tuple[Any, ...]:
        out = []
        for k, jk in enumerate(j):
            i = jk - before[k] if before[k] else jk
            if mode == "edge" and dims[k] > 1:
                i = tirx.max(tirx.min(i, dims[k] - 1), 0)
            elif mode == "edge":
                i = tirx.const(0, "int32")
            elif mode == "reflect" and dims[k] > 1:
                i = tirx.if_then_else(i < 0, 0 - i, tirx.if_then_else(i >= dims[k], 2 * (dims[k] - 1) - i, i))
            out.append(i)
        return tuple(out)

    def inside(j: tuple[Any, ...]) -> Any:
        if mode != "constant":
            return None
        conds = []
        for k, jk in enumerate(j):
            lo, hi = before[k], before[k] + dims[k]
            if lo > 0:
                conds.append(jk >= lo)
            if hi < g.tensors[op.outputs[0]].shape[k]:
                conds.append(jk < hi)
        if not conds:
            return None
        cond = conds[0]
        for c in conds[1:]:
            cond = tirx.all(cond, c)
        return cond

    return gather_kernel(g, op, source, inside, op.attrs["value"])


OPS = (
    OpDef(
        kind="pad",
        summary="widen by a border (constant value; ONNX also edge, reflect)",
        tflite=(SourceOp("PAD", from_tflite, TYPES_8_16_F, "constant paddings; up to 5-D"),
                SourceOp("PADV2", from_tflite, TYPES_8_16_F, "constant paddings and value; up to 5-D")),
        onnx=(SourceOp("Pad", from_onnx, ("float32",), "constant pads; mode constant, edge or reflect"),),
        variants=(Variant("generic", _generic, types=TYPES_8_16_F),),
        check=check,
        reference="TFLite Micro pad.cc (reference_ops::Pad / PadImageStyle); ONNX Pad",
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "PAD of more than 5 dimensions",
               "`TF_LITE_ENSURE(NumDimensions(input) <= PadKernelMaxDimensionCount())` (5) [k/pad_common.cc:56]",
               "refused-by-TFLM", "kept"),
    Validation("check", "paddings not one pair per dimension",
               "`TF_LITE_ENSURE_EQ(FlatSize(paddings), 2 * NumDimensions(input))` [k/pad_common.cc:66]",
               "refused-by-TFLM", "kept"),
    Validation("check", "stored output is not the padded shape",
               "`TF_LITE_ENSURE_EQ(output_dim, expected_dim)` [k/pad_common.cc:79]",
               "refused-by-TFLM", "kept"),
    Validation("check", "MIRROR_PAD / reflect padding not smaller than the axis",
               "MIRROR_PAD Eval reads mirrored indexes outside the input for larger pads, no check [k/mirror_pad.cc]",
               "would-compute-differently", "kept"),
    Validation("check", "edge/reflect padding of an empty tensor (ONNX)",
               "onnxruntime refuses ('Cannot use reflect/edge mode on an empty axis')",
               "refused-by-TFLM", "kept"),
    Validation("check", "int8/int16 padding value outside the type",
               "int8: `TF_LITE_ENSURE(output zero_point in int8 range)`, a constant value is an int8 tensor [k/pad_common.cc:103-112]",
               "refused-by-TFLM", "kept"),
    Validation("from_tflite", "PAD paddings of another count than 2 x rank",
               "`TF_LITE_ENSURE_EQ(FlatSize(paddings), 2 * NumDimensions(input))` [k/pad_common.cc:66]",
               "refused-by-TFLM", "kept", rule=True),
    Validation("from_tflite", "PADV2 constant value not a constant scalar",
               "`TF_LITE_ENSURE_EQ(NumElements(constant_values), 1)` [k/pad_common.cc:62]; non-constant: TFLM reads it at run time",
               "would-compute-differently", "kept: utvm folds it at compile time", rule=True),
    Validation("from_tflite", "PADV2 constant value of another type than the input",
               "`TF_LITE_ENSURE_EQ(input->type, constant_values->type)` [k/pad_common.cc:60]",
               "refused-by-TFLM", "kept", rule=True),
    Validation("from_tflite", "int8 PADV2 constant value quantized otherwise than the output",
               "`TF_LITE_ENSURE_EQ` on zero point and scale [k/pad_common.cc:110-113]",
               "refused-by-TFLM", "kept", rule=True),
)
