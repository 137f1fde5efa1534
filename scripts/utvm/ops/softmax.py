"""SOFTMAX over the last axis: int8 bit-exact with TFLite Micro's reference kernel, and float32.

Import: TFLite SOFTMAX (any beta); ONNX Softmax over the last axis.
Semantics: the int8 kernel follows TFLite's reference ``Softmax<int8_t, int8_t>`` (gemmlowp fixed
point): input diffs to the row maximum are rescaled by beta * input_scale into Q5.26,
exponentiated (``exp_on_negative_values``), summed in Q12.19, inverted with
``one_over_one_plus_x_for_x_in_0_1`` after normalisation by count-leading-zeros, and each
exponential times the reciprocal is rounded down to the output scale 1/256, zero point -128.
:func:`np_softmax_int8` is the same arithmetic in numpy. float32: reference_ops::Softmax.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
from tvm import te, tirx

from ..ir import Graph, Operator
from ..lower import fixedpoint as fp
from ..lower.kerneldef import KernelArg, KernelDef
from ..lower.target import Target
from .base import OpDef, OpError, SourceOp, Variant
from .common import check_io_types, check_same_size, io

#: integer bits of the scaled input diffs (Q5.26), of the exp sum (Q12.19): TFLite's constants
SCALED_DIFF_INTEGER_BITS = 5
ACCUMULATION_INTEGER_BITS = 12
#: the fixed output quantization TFLite requires for int8 softmax
OUTPUT_SCALE = 1.0 / 256.0
OUTPUT_ZERO_POINT = -128


def _newton_stage(prev: te.Tensor, half_den: te.Tensor, name: str) -> te.Tensor:
    """One Newton-Raphson step of the reciprocal as its own [rows] stage."""
    return te.compute(prev.shape, lambda i: fp.newton_reciprocal_step(prev[i], half_den[i]), name=name)


def softmax_int8(
    x: te.Tensor,
    input_scale: float,
    beta: float,
    name: str,
    single_rounding: bool = False,
) -> te.Tensor:
    """Softmax over the last axis of an int8 [rows, depth] tensor; int8 out (scale 1/256, zp -128).

    Bit-exact with TFLite Micro's reference int8 SOFTMAX (the input zero point cancels out).
    The exponentials are computed once, in stages ``<name>_exp*`` (int32
    [rows, depth]; schedule them with compute_at into the output loop to make them scalars),
    the per-row sum / reciprocal in int32 [rows] stages. ``single_rounding`` matches builds with
    TFLITE_SINGLE_ROUNDING=1 (not the PyPI tflite-micro).
    """
    if len(x.shape) != 2 or x.dtype != "int8":
        raise ValueError(f"softmax_int8 wants an int8 [rows, depth] tensor, got {x.dtype}{x.shape}")
    rows, depth = x.shape
    p = fp.softmax_params(input_scale, beta, single_rounding)
    ib = SCALED_DIFF_INTEGER_BITS
    c32 = fp.c32

    k = te.reduce_axis((0, depth), name="k")
    row_max = te.compute((rows,), lambda i: te.max(x[i, k], axis=k), name=f"{name}_max")

    def diff(i: fp.Expr, c: fp.Expr) -> fp.Expr:
        return x[i, c].astype("int32") - row_max[i].astype("int32")

    def rescale(i: fp.Expr, c: fp.Expr) -> fp.Expr:
        # clamp to diff_min first so that out-of-range diffs never overflow int32 in C
        safe = te.max(diff(i, c), c32(p.diff_min))
        return fp.multiply_by_quantized_multiplier_greater_than_one(
            safe, p.input_multiplier, p.input_left_shift, single_rounding
        )

    # scaled diff in Q5.26, then exp in Q0.31 in stages (TVM expands deep expression trees)
    a = te.compute((rows, depth), rescale, name=f"{name}_exp0")
    shape = (rows, depth)
    ex = te.compute(
        shape,
        lambda i, c: fp.exp_interval_x(fp.exp_neg_interval_input(a[i, c], ib)),
        name=f"{name}_expx",
    )
    ex2 = te.compute(
        shape,
        lambda i, c: fp.saturating_rounding_doubling_high_mul(ex[i, c], ex[i, c], True),
        name=f"{name}_expx2",
    )
    epoly = te.compute(shape, lambda i, c: fp.exp_interval_poly(ex[i, c], ex2[i, c]), name=f"{name}_exppoly")
    e1 = te.compute(shape, lambda i, c: fp.exp_interval_result(ex[i, c], epoly[i, c]), name=f"{name}_exp1")
    e2 = te.compute(
        (rows, depth),
        lambda i, c: fp.exp_neg_barrel(e1[i, c], a[i, c], ib, [-2, -1]),
        name=f"{name}_exp2",
    )
    e3 = te.compute(
        (rows, depth),
        lambda i, c: fp.exp_neg_barrel(e2[i, c], a[i, c], ib, [0, 1]),
        name=f"{name}_exp3",
    )

    def exp_final(i: fp.Expr, c: fp.Expr) -> fp.Expr:
        r = fp.exp_neg_tail(fp.exp_neg_barrel(e3[i, c], a[i, c], ib, [2, 3, 4]), a[i, c], ib)
        # 0 where TFLite skips the element: adds nothing to the sum, outputs -128
        return r & ~((diff(i, c) - c32(p.diff_min)) >> c32(31))

    exps = te.compute((rows, depth), exp_final, name=f"{name}_exp4")

    # sum of exp rescaled from Q0.31 to Q12.19 (int32 wrapping add, as gemmlowp's Add)
    k2 = te.reduce_axis((0, depth), name="k2")
    sum_of_exps = te.compute(
        (rows,),
        lambda i: te.sum(fp.rounding_divide_by_pot(exps[i, k2], ACCUMULATION_INTEGER_BITS), axis=k2),
        name=f"{name}_sum",
    )
    # GetReciprocal: headroom (count leading zeros), 1 / (1 + x) of the normalised sum
    headroom = te.compute((rows,), lambda i: fp.count_leading_zeros_u32(sum_of_exps[i]), name=f"{name}_clz")

    def half_denominator(i: fp.Expr) -> fp.Expr:
        u = sum_of_exps[i].astype("uint32") << headroom[i].astype("uint32")
        shifted_minus_one = (u - tirx.const(1 << 31, "uint32")).astype("int32")
        return fp.rounding_half_sum(shifted_minus_one, fp.INT32_MAX)

    half_den = te.compute((rows,), half_denominator, name=f"{name}_hden")
    nr = te.compute((rows,), lambda i: fp.newton_reciprocal_init(half_den[i]), name=f"{name}_nr0")
    for step in range(3):
        nr = _newton_stage(nr, half_den, f"{name}_nr{step + 1}")
    last = nr
    recip = te.compute((rows,), lambda i: fp.saturating_rounding_multiply_by_pot(last[i], 1), name=f"{name}_recip")

    def scaled(i: fp.Expr, c: fp.Expr) -> fp.Expr:
        # exponent = num_bits_over_unit + 31 - 8, num_bits_over_unit = 12 - headroom
        exponent = c32(ACCUMULATION_INTEGER_BITS + 31 - 8) - headroom[i]
        prod = fp.saturating_rounding_doubling_high_mul(recip[i], exps[i, c], no_overflow=True)
        return fp.rounding_divide_by_pot(prod, exponent) + c32(OUTPUT_ZERO_POINT)

    # Its own stage: TVM 0.27's simplifier drops the upper clamp when it sees the whole
    # expression (it bounds the shifted value wrongly), and 1.0 (output 128) must give 127.
    val = te.compute((rows, depth), scaled, name=f"{name}_val")
    return te.compute(
        (rows, depth),
        lambda i, c: te.min(te.max(val[i, c], c32(-128)), c32(127)).astype("int8"),
        name=name,
    )


def softmax_float(x: te.Tensor, beta: float, name: str) -> te.Tensor:
    """Softmax over the last axis of a float32 [rows, depth] tensor, as TFLite's float reference:
    m = max, e = expf((x - m) * beta), out = e / sum(e) (sum accumulated left to right)."""
    if len(x.shape) != 2 or x.dtype != "float32":
        raise ValueError(f"softmax_float wants a float32 [rows, depth] tensor, got {x.dtype}")
    rows, depth = x.shape
    beta_c = tirx.const(fp.as_float32(beta), "float32")
    k = te.reduce_axis((0, depth), name="k")
    row_max = te.compute((rows,), lambda i: te.max(x[i, k], axis=k), name=f"{name}_max")
    exps = te.compute((rows, depth), lambda i, c: te.exp((x[i, c] - row_max[i]) * beta_c), name=f"{name}_exp")
    k2 = te.reduce_axis((0, depth), name="k2")
    total = te.compute((rows,), lambda i: te.sum(exps[i, k2], axis=k2), name=f"{name}_sum")
    return te.compute((rows, depth), lambda i, c: exps[i, c] / total[i], name=name)


def np_softmax_int8(
    x: npt.ArrayLike, input_scale: float, beta: float, single_rounding: bool = False
) -> npt.NDArray[np.int8]:
    """numpy reference of softmax_int8 over the last axis (any leading shape)."""
    xa = np.asarray(x, dtype=np.int64)
    shape = xa.shape
    x2 = xa.reshape(-1, shape[-1])
    p = fp.softmax_params(input_scale, beta, single_rounding)
    diff = x2 - x2.max(axis=1, keepdims=True)
    in_range = diff >= p.diff_min
    safe = np.where(in_range, diff, p.diff_min)
    if single_rounding:
        rescaled = fp.np_multiply_by_quantized_multiplier(safe, p.input_multiplier, p.input_left_shift, True)
    else:
        rescaled = fp.np_saturating_rounding_doubling_high_mul(safe << p.input_left_shift, p.input_multiplier)
    e = np.where(in_range, fp.np_exp_on_negative_values(rescaled, SCALED_DIFF_INTEGER_BITS), 0)
    total = fp.np_wrap32(fp.np_rounding_divide_by_pot(e, ACCUMULATION_INTEGER_BITS).sum(axis=1, keepdims=True))
    clz = fp.np_count_leading_zeros_u32(total)
    shifted_minus_one = fp.np_wrap32(((total & 0xFFFFFFFF) << clz) - (1 << 31))
    recip = fp.np_one_over_one_plus_x_for_x_in_0_1(shifted_minus_one)
    exponent = ACCUMULATION_INTEGER_BITS + 31 - 8 - clz
    out = fp.np_rounding_divide_by_pot(fp.np_saturating_rounding_doubling_high_mul(recip, e), exponent)
    out = np.clip(out + OUTPUT_ZERO_POINT, -128, 127)
    return out.astype(np.int8).reshape(shape)


# ---------------------------------------------------------------------------------------
# the operator


def from_tflite(ctx: Any, node: Any) -> None:
    o = ctx.options(node, "SoftmaxOptions")
    ctx.emit(node, "softmax", [node.inputs[0]], node.outputs, {"beta": float(o.Beta())})


def from_onnx(imp: Any, node: Any) -> None:
    from ..importer.onnx_import import PLAIN

    attrs = imp.attrs(node)
    x, out = node.input[0], node.output[0]
    shape = imp.shape(x)
    rank = len(shape)
    axis = int(attrs.get("axis", -1 if imp.opset >= 13 else 1))
    axis = axis + rank if axis < 0 else axis
    if axis == rank - 1:
        imp.emit("softmax", [imp.get(x, PLAIN)], out, PLAIN, {"beta": 1.0})
        return
    raise imp.fail(f"softmax over axis {axis} of a {rank}-D tensor is not supported (only the last axis)")


def check(g: Graph, op: Operator) -> None:
    """TFLite Micro's SoftmaxPrepare: the output has the input's size, beta is positive, and for
    int8 the output quantization is fixed and beta x input scale gives a multiplier above 1."""
    check_io_types(g, op)
    x, y = io(g, op)
    check_same_size(g, op)
    beta = float(op.attrs["beta"])
    if not (math.isfinite(beta) and beta > 0):
        raise OpError(f"{op.source}: beta {beta:g} (must be finite and positive)")
    if x.dtype == "int8":
        assert x.quant is not None and y.quant is not None
        ys, zy = y.quant.scalar()
        if zy != OUTPUT_ZERO_POINT or abs(ys - OUTPUT_SCALE) > 1e-8:
            raise OpError(f"{op.source}: int8 softmax output must have scale 1/256 and zero point -128")
        try:
            fp.softmax_params(x.quant.scalar()[0], beta)
        except ValueError:
            raise OpError(f"{op.source}: beta {beta:g} x input scale {x.quant.scalar()[0]:g} is too small for the "
                          "int8 softmax") from None


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    depth = x.shape[-1]
    rows = x.size // depth
    X = te.placeholder((rows, depth), x.dtype, name="x")
    if x.dtype == "int8":
        assert x.quant and y.quant
        out = softmax_int8(X, float(x.quant.scalar()[0]), op.attrs["beta"], "out")
    else:
        out = softmax_float(X, op.attrs["beta"], "out")
    return KernelDef([KernelArg(X, tensor=x.name)], out, y.name)


OPS = (
    OpDef(
        kind="softmax",
        summary="softmax over the last axis",
        tflite=(SourceOp("SOFTMAX", from_tflite, constraints="int8 output scale 1/256, zero point -128"),),
        onnx=(SourceOp("Softmax", from_onnx, ("float32",), "last axis"),),
        variants=(Variant("generic", _generic),),
        check=check,
        reference="TFLite Micro softmax.cc: reference_ops::Softmax (int8 gemmlowp arithmetic, float32)",
    ),
)
