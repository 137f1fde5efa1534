"""CUMSUM (ONNX CumSum): the running sum of the input along one axis.

Import: TFLite CUMSUM (int8, float32; the axis a constant int32 of one element, the options'
``exclusive`` and ``reverse``); ONNX CumSum (float32, a constant axis, ``exclusive`` and
``reverse``).
Semantics: ``out[..., k, ...] = sum of x[..., j, ...]`` over ``j <= k`` (``exclusive``:
``j < k``; ``reverse``: ``j >= k`` / ``j > k``), summed in the order TFLite Micro sums:
from the start (``reverse``: from the end) of the axis, so float32 sums round alike.
int8 as TFLite Micro's reference_ops::CumSum with ArithmeticParams: each value less the input
zero point, shifted left by 20 and halved (MultiplyByQuantizedMultiplierSmallerThanOneExp of
0.5), summed in int32 starting from the halved, shifted negative zero point (TFLite Micro's
accumulator starts at the input offset, not at 0), rescaled by ``2 s_in / (2**20 s_out)`` and
offset by the output zero point, clamped to int8.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tvm import te, tirx

from ..ir import PLAIN, Graph, Operator
from ..kernels import fixedpoint as fp
from ..kernels.kerneldef import KernelArg, KernelDef
from ..kernels.requant import I32, clamp, imm
from ..kernels.schedules import reduction_schedule
from ..kernels.target import Target
from ._movement import onnx_ints
from .base import OpDef, OpError, SourceOp, Validation, Variant
from .common import check_io_types, io

_LEFT_SHIFT = 20  # kCumSumIntegerShift


def from_tflite(ctx: Any, node: Any) -> None:
    if len(node.inputs) != 2 or len(node.outputs) != 1:
        raise ctx.fail(node, f"expects 2 inputs and 1 output, has {len(node.inputs)} and {len(node.outputs)}")
    o = ctx.options(node, "CumsumOptions")
    axis_t = ctx.tensors[node.inputs[1]]
    if axis_t.dtype != "int32" or axis_t.size != 1:
        raise ctx.fail(node, f"the axis must be one int32, got {axis_t.dtype}{list(axis_t.shape)}")
    if axis_t.data is None:
        raise ctx.fail(node, "the axis must be a constant tensor")
    ctx.emit(node, "cumsum", [node.inputs[0]], node.outputs,
             {"axis": int(axis_t.data.reshape(-1)[0]), "exclusive": bool(o.Exclusive()), "reverse": bool(o.Reverse())})


def from_onnx(imp: Any, node: Any) -> None:
    axis = onnx_ints(imp, node.input[1], "axis").reshape(-1)
    if axis.size != 1:
        raise imp.fail(f"the axis must be one value, got {axis.size}")
    attrs = imp.attrs(node)
    imp.emit("cumsum", [imp.get(node.input[0], PLAIN)], node.output[0], PLAIN,
             {"axis": int(axis[0]), "exclusive": bool(int(attrs.get("exclusive", 0))),
              "reverse": bool(int(attrs.get("reverse", 0)))})


def _axis(g: Graph, op: Operator) -> int:
    rank = len(g.tensors[op.inputs[0]].shape)
    axis = int(op.attrs["axis"])
    return axis + rank if axis < 0 else axis


def check(g: Graph, op: Operator) -> None:
    """TFLite Micro's CalculateOpData and Eval checks: int8 or float32 in and out, same shapes,
    rank at least 1, the axis inside the rank."""
    check_io_types(g, op)
    x, y = io(g, op)
    if len(x.shape) < 1 or x.shape != y.shape:
        raise OpError(f"{op.source}: output shape {list(y.shape)} is not the input's {list(x.shape)}")
    axis = _axis(g, op)
    if not 0 <= axis < len(x.shape):
        raise OpError(f"{op.source}: invalid axis {op.attrs['axis']} for a {len(x.shape)}-D input")


def _int8_params(g: Graph, op: Operator) -> tuple[int, int, int, int, int, int]:
    """(input zero point, input multiplier, input shift, output multiplier, output shift, output
    zero point) as TFLite Micro's CalculateOpData computes them (in double)."""
    x, y = io(g, op)
    assert x.quant is not None and y.quant is not None
    xs, zx = x.quant.scalar()
    ys, zy = y.quant.scalar()
    twice = 2 * float(xs)
    mi, si = fp.quantize_multiplier(float(xs) / twice)
    mo, so = fp.quantize_multiplier(twice / ((1 << _LEFT_SHIFT) * float(ys)))
    return int(zx), mi, si, mo, so, int(zy)


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x, y = io(g, op)
    rank, axis = len(x.shape), _axis(g, op)
    depth = x.shape[axis]
    exclusive, reverse = bool(op.attrs["exclusive"]), bool(op.attrs["reverse"])
    X = te.placeholder(x.shape, x.dtype, name="x")
    r = te.reduce_axis((0, depth), "r")
    quant = x.dtype == "int8"
    acc_dtype = I32 if quant else "float32"
    if quant:
        zx, mi, si, mo, so, zy = _int8_params(g, op)

        def scaled(v: tirx.PrimExpr) -> tirx.PrimExpr:
            return fp.multiply_by_quantized_multiplier(v * imm(1 << _LEFT_SHIFT), mi, si)

        start = int(fp.np_multiply_by_quantized_multiplier(np.array([-zx * (1 << _LEFT_SHIFT)]), mi, si)[0])

    def acc_f(*idx):  # type: ignore[no-untyped-def]
        k = idx[axis]
        j = depth - 1 - r if reverse else r  # the position summed r-th, in TFLite Micro's order
        if reverse:
            take = j > k if exclusive else j >= k
        else:
            take = j < k if exclusive else j <= k
        v = X[(*idx[:axis], j, *idx[axis + 1:])]
        v = scaled(v.astype(I32) - zx) if quant else v
        return te.sum(tirx.if_then_else(take, v, imm(0, acc_dtype)), axis=r)

    acc = te.compute(x.shape, acc_f, name="acc")
    if quant:
        def out_f(*idx):  # type: ignore[no-untyped-def]
            v = fp.multiply_by_quantized_multiplier(acc[idx] + start, mo, so) + zy
            return clamp(v, -128, 127).astype("int8")
    else:
        def out_f(*idx):  # type: ignore[no-untyped-def]
            return acc[idx]
    out = te.compute(x.shape, out_f, name="out")
    return KernelDef([KernelArg(X, tensor=x.name)], out, y.name, reduction_schedule("acc", "out", None, rank, False))


OPS = (
    OpDef(
        kind="cumsum",
        summary="running sum along an axis (exclusive, reverse)",
        tflite=(SourceOp("CUMSUM", from_tflite, constraints="constant int32 axis"),),
        onnx=(SourceOp("CumSum", from_onnx, ("float32",), "constant axis"),),
        variants=(Variant("generic", _generic, types=("int8", "float32")),),
        check=check,
        reference="TFLite Micro cumsum.cc: reference_ops::CumSum (int8 with ArithmeticParams, float32)",
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "input of rank 0, or output shape other than the input's",
               "`TF_LITE_ENSURE(NumDimensions(input) >= 1)`, `TF_LITE_ENSURE(HaveSameShapes(input, output))` [k/cumsum.cc:64,70]",
               "refused-by-TFLM", "kept"),
    Validation("check", "axis outside the input's rank (after adding the rank to a negative one)",
               '`MicroPrintf("CUMSUM Invalid axis: %d")`, kTfLiteError in Eval [k/cumsum.cc:126-128]',
               "refused-by-TFLM", "kept"),
    Validation("from_tflite", "CUMSUM without 2 inputs and 1 output",
               "`TF_LITE_ENSURE_EQ(NumInputs(node), 2)`, `NumOutputs == 1` [k/cumsum.cc:48-49]",
               "refused-by-TFLM", "kept", rule=True),
    Validation("from_tflite", "CUMSUM axis not one int32",
               "`TF_LITE_ENSURE_EQ(axis->type, kTfLiteInt32)`, `NumElements(axis) == 1` [k/cumsum.cc:60-62]",
               "refused-by-TFLM", "kept", rule=True),
    Validation("from_tflite", "CUMSUM axis not constant",
               "read in Eval [k/cumsum.cc:123]",
               "would-compute-differently", "kept: utvm needs the axis at compile time", rule=True),
)
