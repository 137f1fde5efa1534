"""ADD: elementwise sum of two tensors of the same shape, with a fused activation.

Import: TFLite ADD; ONNX Add.
Semantics: TFLite Micro's reference kernels (reference_integer_ops::Add for int8: both inputs
shifted left by 20 bits, rescaled with their own multipliers, summed, rescaled to the output,
see fixedpoint.add_params; float32 a + b).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tvm import te

from ..ir import Graph, Operator
from ..lower import fixedpoint as fp
from ..lower import helium as mve
from ..lower.kerneldef import KernelArg, KernelDef
from ..lower.requant import I32, activation_range_int8, clamp_s8, float_clamp, scale_const
from ..lower.target import Target
from .base import OpDef, OpError, SourceOp, Variant


def from_tflite(ctx: Any, node: Any) -> None:
    o = ctx.options(node, "AddOptions")
    a, b = ctx.tensors[node.inputs[0]], ctx.tensors[node.inputs[1]]
    if a.shape != b.shape:
        raise ctx.fail(node, f"broadcasting add {list(a.shape)} + {list(b.shape)} is not supported")
    attrs = {"activation": ctx.activation(o.FusedActivationFunction(), node)}
    ctx.emit(node, "add", node.inputs[:2], node.outputs, attrs)


def from_onnx(imp: Any, node: Any) -> None:
    """Add of two tensors of the same shape, or of a tensor and a constant (folded into a
    preceding Conv/Gemm/MatMul as its bias when it can be)."""
    from ..importer.onnx_import import NHWC, PLAIN, TO_NHWC

    a, b = node.input[0], node.input[1]
    out = node.output[0]
    out_shape = imp.shape(out)
    if a in imp.consts and b in imp.consts:
        raise imp.fail("both operands are constant")
    if a in imp.consts or b in imp.consts:
        var, cname = (b, a) if a in imp.consts else (a, b)
        c = imp.float_const(cname, "constant operand")
        if imp.fuse_bias(var, c, out):
            return
        if imp.shape(var) != out_shape:
            raise imp.fail(f"broadcasting add {list(imp.shape(a))} + {list(imp.shape(b))} is not supported")
        x, layout = imp.any_layout(var)
        full = np.broadcast_to(c, out_shape)
        if layout == NHWC:
            full = full.transpose(TO_NHWC)
        imp.emit("add", [x, imp.add_const(f"{out}_addend", full)], out, layout, {"activation": "none"})
        return
    if imp.shape(a) != imp.shape(b) or imp.shape(a) != out_shape:
        raise imp.fail(f"broadcasting add {list(imp.shape(a))} + {list(imp.shape(b))} is not supported")
    have_a, have_b = imp.vals.get(a, {}), imp.vals.get(b, {})
    if len(out_shape) != 4 or (PLAIN in have_a and PLAIN in have_b and not (NHWC in have_a and NHWC in have_b)):
        layout = PLAIN
    else:
        layout = NHWC if (NHWC in have_a or NHWC in have_b) else PLAIN
    imp.emit("add", [imp.get(a, layout), imp.get(b, layout)], out, layout, {"activation": "none"})


def from_onnx_qlinear(imp: Any, node: Any) -> None:
    """com.microsoft.QLinearAdd (and the Add groups of QDQ models): two int8 values of the same
    shape, int8 output."""
    from ..importer.onnx_import import NHWC, PLAIN, TO_NHWC

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
    a, b, y = (g.tensors[n] for n in (*op.inputs[:2], op.outputs[0]))
    if not (a.dtype == b.dtype == y.dtype and a.dtype in ("int8", "float32")):
        raise OpError(f"{op.source}: unsupported data types {a.dtype} + {b.dtype} -> {y.dtype}")
    if a.dtype == "int8" and (a.quant is None or b.quant is None or y.quant is None):
        raise OpError(f"{op.source}: int8 tensors without quantization parameters")


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
    if a.shape != b.shape or a.size != y.size:
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
    a, b, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    size = y.size
    A = te.placeholder((size,), a.dtype, name="a")
    B = te.placeholder((size,), b.dtype, name="b")
    act = op.attrs["activation"]
    if a.dtype == "int8":
        assert a.quant and b.quant and y.quant
        sa, za = a.quant.scalar()
        sb, zb = b.quant.scalar()
        sy, zy = y.quant.scalar()
        left_shift = fp.ADD_LEFT_SHIFT
        ma, sha, mb, shb, my, shy = fp.add_params(sa, sb, sy)
        lo, hi = activation_range_int8(act, sy, zy)

        # bounds of the three requantized values: 255 * 2**20 for the shifted inputs, their
        # requantized sum at most twice that (each input multiplier is at most 1/2)
        bound = 255 << left_shift

        def f(i):  # type: ignore[no-untyped-def]
            xa = (A[i].astype(I32) - za) * (1 << left_shift)
            xb = (B[i].astype(I32) - zb) * (1 << left_shift)
            va = scale_const(xa, ma, sha, bound)
            vb = scale_const(xb, mb, shb, bound)
            return clamp_s8(scale_const(va + vb, my, shy, 2 * bound + 2) + zy, lo, hi)
    else:
        def f(i):  # type: ignore[no-untyped-def]
            return float_clamp(A[i] + B[i], act)

    out = te.compute((size,), f, name="out")
    return KernelDef([KernelArg(A, tensor=a.name), KernelArg(B, tensor=b.name)], out, y.name)


OPS = (
    OpDef(
        kind="add",
        summary="elementwise addition",
        tflite=(SourceOp("ADD", from_tflite, constraints="same shapes; fused activation NONE/RELU/RELU6/RELU_N1_TO_1"),),
        onnx=(SourceOp("Add", from_onnx, ("float32",), "same shapes, or a constant operand"),
              SourceOp("com.microsoft.QLinearAdd", from_onnx_qlinear, ("int8",), "also QDQ Add groups; same shapes")),
        variants=(Variant("helium", _helium, "Cortex-M52/M55/M85"), Variant("generic", _generic)),
        check=check,
        reference="TFLite Micro add.cc: reference_integer_ops::Add (int8), reference_ops::Add (float32)",
        fuses_activation=True,
    ),
)
