"""ADD: elementwise sum of two tensors with NumPy broadcasting, with a fused activation.

Import: TFLite ADD; ONNX Add.
Semantics: TFLite Micro's reference kernels (reference_integer_ops::Add / BroadcastAdd6DSlow
for int8: both inputs shifted left by 20 bits, rescaled with their own multipliers, summed,
rescaled to the output, see fixedpoint.add_params; int16 (zero points 0) the same general path
with a left shift of 15, which TFLite Micro takes for every int16 ADD (it never uses the
power-of-two path of reference_ops::Add); float32 a + b; int32 a + b wrapping, without the
fused activation, as TFLite Micro's EvalAdd).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tvm import te

from ..ir import NHWC, PLAIN, TO_NHWC, Graph, Operator
from ..kernels import fixedpoint as fp
from ..kernels import helium as mve
from ..kernels.kerneldef import KernelArg, KernelDef
from ..kernels.requant import activation_range_int8, float_clamp
from ..kernels.target import Target
from . import elementwise
from .base import Offload, OpDef, SourceOp, Variant

TYPES = ("int8", "int16", "float32", "int32")
from_tflite = elementwise.tflite_rule("add", "AddOptions")


def from_onnx(imp: Any, node: Any) -> None:
    """Add with broadcasting; Add of a constant is folded into a preceding Conv/Gemm/MatMul as
    its bias when it can be."""
    a, b = node.input[0], node.input[1]
    if a in imp.consts and b in imp.consts:
        raise imp.fail("both operands are constant")
    if a in imp.consts or b in imp.consts:
        var, cname = (b, a) if a in imp.consts else (a, b)
        if imp.fuse_bias(var, imp.float_const(cname, "constant operand"), node.output[0]):
            return
    elementwise.onnx_emit(imp, node, "add", [a, b], {"activation": "none"})


def from_onnx_qlinear(imp: Any, node: Any) -> None:
    """com.microsoft.QLinearAdd (and the Add groups of QDQ models): two int8 values of the same
    shape, int8 output."""
    a, b, out = node.input[0], node.input[3], node.output[0]
    out_shape = imp.shape(out)
    operands = [(a, node.input[1], node.input[2]), (b, node.input[4], node.input[5])]
    variables = [v for v, _, _ in operands if v not in imp.consts]
    if not variables:
        raise imp.fail("both operands are constant")
    have = [imp.vals.get(v, {}) for v in variables]
    layout = NHWC if len(out_shape) == 4 and any(NHWC in h for h in have) else PLAIN
    inputs = []
    for value, scale, zp in operands:
        if value in imp.consts:  # an int8 constant, broadcast to the output's shape
            quant = imp.scalar_quant(scale, zp, "constant operand")
            full = np.broadcast_to(imp.consts[value].astype(np.int8), out_shape)
            if layout == NHWC:
                full = full.transpose(TO_NHWC)
            inputs.append(imp.add_const(f"{out}_addend", np.ascontiguousarray(full), quant))
            continue
        imp.quantized_input(value, scale, zp, "input")
        if imp.shape(value) != out_shape:
            raise imp.fail(f"broadcasting add {list(imp.shape(a))} + {list(imp.shape(b))} is not supported")
        inputs.append(imp.get(value, layout))
    act = imp.attrs(node).get("activation", b"none")
    imp.emit("add", inputs, out, layout, {"activation": act.decode() if isinstance(act, bytes) else str(act)})


def check(g: Graph, op: Operator) -> None:
    if elementwise.check_binary(g, op, TYPES) in ("int8", "int16"):
        elementwise.add_sub_params(g, op)


def _helium(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """Helium: one utvm_mve_add_s8 call, 16 elements per step."""
    if not target.helium:
        return None
    a, b, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    if a.dtype != "int8" or b.dtype != "int8" or y.dtype != "int8":
        return None
    if a.quant is None or b.quant is None or y.quant is None:
        return None
    if a.quant.per_channel or b.quant.per_channel or y.quant.per_channel:
        return None
    if a.size != b.size or a.size != y.size:  # same shapes, or only leading axes of 1 apart: elementwise
        return None
    sa, za = a.quant.scalar()
    sb, zb = b.quant.scalar()
    sy, zy = y.quant.scalar()
    ma, sha, mb, shb, my, shy = fp.add_params(float(sa), float(sb), float(sy))
    lo, hi = activation_range_int8(op.attrs["activation"], sy, zy)
    size = y.size
    A = te.placeholder((size,), "int8", name="a")
    B = te.placeholder((size,), "int8", name="b")

    def body(ins, outs):  # type: ignore[no-untyped-def]
        return mve.call("utvm_mve_add_s8", outs[0].access_ptr("w"), ins[0].access_ptr("r"), ins[1].access_ptr("r"),
                        size, za, ma, sha, zb, mb, shb, my, shy, zy, lo, hi)

    return mve.extern(y, [KernelArg(A, tensor=a.name), KernelArg(B, tensor=b.name)], body)


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    dtype = g.tensors[op.inputs[0]].dtype
    act = op.attrs["activation"]
    f: elementwise.ElementFn
    if dtype in ("int8", "int16"):
        f = elementwise.add_sub(g, op, lambda p, q: p + q)
    elif dtype == "int32":
        def f(v):  # type: ignore[no-untyped-def]
            return elementwise.wrapping(v[0], v[1], lambda p, q: p + q)
    else:
        def f(v):  # type: ignore[no-untyped-def]
            return float_clamp(v[0] + v[1], act)
    return elementwise.kernel(g, op, f)


OPS = (
    OpDef(
        kind="add",
        summary="elementwise addition",
        tflite=(SourceOp("ADD", from_tflite, TYPES,
                         "broadcasting; fused activation NONE/RELU/RELU6/RELU_N1_TO_1; int16 zero points 0"),),
        onnx=(SourceOp("Add", from_onnx, ("float32",), "broadcasting", qdq="elementwise"),
              SourceOp("com.microsoft.QLinearAdd", from_onnx_qlinear, ("int8",), "also QDQ Add groups; same shapes")),
        variants=(Variant("helium", _helium, "Cortex-M52/M55/M85"),
                  Variant("generic", _generic, types=TYPES)),
        check=check,
        reference="TFLite Micro add.cc: reference_integer_ops::Add/BroadcastAdd6DSlow (int8), reference_ops::Add"
                  " general path (int16), reference_ops::Add/BroadcastAdd6DSlow (float32, int32)",
        fuses_activation=True,
        patch_stage="elementwise",
        offload=(Offload("cmsis-nn", ("int8",), "add"),),
    ),
)
