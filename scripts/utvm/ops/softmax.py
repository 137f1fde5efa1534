"""SOFTMAX over the last axis: int8 bit-exact with TFLite Micro's reference kernel, and float32.

Import: TFLite SOFTMAX (any beta); ONNX Softmax over the last axis.
Semantics: the int8 kernel follows TFLite's reference ``Softmax<int8_t, int8_t>`` (gemmlowp fixed
point): input diffs to the row maximum are rescaled by beta * input_scale into Q5.26,
exponentiated (``exp_on_negative_values``), summed in Q12.19, inverted with
``one_over_one_plus_x_for_x_in_0_1`` after normalisation by count-leading-zeros, and each
exponential times the reciprocal is rounded down to the output scale 1/256, zero point -128.
:func:`np_softmax_int8` is the same arithmetic in numpy. float32: reference_ops::Softmax.
int16 (input zero point 0, output scale 1/32768, zero point 0) follows ``SoftmaxInt16``: the
diffs to the row maximum scaled so that [-65535, 0] is [-10, 0], recentred to int16 and looked up
in a 513-entry exp table with linear interpolation between entries (``gen_lut`` of exp over
[-10, 0], computed in float32 as TFLite Micro's Prepare computes it), summed in int32, the sum
normalised by count-leading-zeros and looked up in a table of 1 / (1 + x) over [0, 1], and each
exponential times that reciprocal shifted down with rounding. :func:`np_softmax_int16` is the same
arithmetic in numpy.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
from tvm import te, tirx

from ..ir import PLAIN, Graph, Operator
from ..kernels import fixedpoint as fp
from ..kernels.kerneldef import KernelArg, KernelDef
from ..kernels.requant import clamp
from ..kernels.target import Target
from .base import Offload, OpDef, OpError, SourceOp, Validation, Variant
from .common import check_row_op, check_same_size, rows_kernel

#: integer bits of the scaled input diffs (Q5.26), of the exp sum (Q12.19): TFLite's constants
SCALED_DIFF_INTEGER_BITS = 5
ACCUMULATION_INTEGER_BITS = 12
#: the fixed output quantization TFLite requires for int8 softmax
OUTPUT_SCALE = 1.0 / 256.0
OUTPUT_ZERO_POINT = -128
#: an int8 input with an int16 output (zero point -32768)
OUTPUT_SCALE_INT8_INT16 = 1.0 / 65536.0
#: int16 softmax: output scale 1/32768 (zero point 0), input diffs of [-65535, 0] mapped to [-10, 0]
OUTPUT_SCALE_INT16 = 1.0 / 32768.0
INT16_INPUT_RANGE = 10.0 / 65535.0
LUT_STEPS = 512


def _newton_stage(prev: te.Tensor, half_den: te.Tensor, name: str) -> te.Tensor:
    """One Newton-Raphson step of the reciprocal as its own [rows] stage."""
    return te.compute(prev.shape, lambda i: fp.newton_reciprocal_step(prev[i], half_den[i]), name=name)


def staged_one_over_one_plus_x(x: te.Tensor, name: str) -> te.Tensor:
    """gemmlowp one_over_one_plus_x_for_x_in_0_1 of every element of the int32 [rows] tensor
    ``x`` (Q0.31) in stages ``<name>_hden``, ``<name>_nr*``, ``<name>_recip``; Q0.31."""
    half_den = te.compute(x.shape, lambda i: fp.rounding_half_sum(x[i], fp.INT32_MAX), name=f"{name}_hden")
    nr = te.compute(x.shape, lambda i: fp.newton_reciprocal_init(half_den[i]), name=f"{name}_nr0")
    for step in range(3):
        nr = _newton_stage(nr, half_den, f"{name}_nr{step + 1}")
    last = nr
    return te.compute(x.shape, lambda i: fp.saturating_rounding_multiply_by_pot(last[i], 1), name=f"{name}_recip")


def staged_exp(a: te.Tensor, ib: int, name: str) -> te.Tensor:
    """exp_on_negative_values of every element of the int32 [rows, depth] tensor ``a`` (Q(ib),
    values <= 0) in TE stages ``<name>_exp*``; Q0.31."""
    shape = a.shape
    ex = te.compute(shape, lambda i, c: fp.exp_interval_x(fp.exp_neg_interval_input(a[i, c], ib)), name=f"{name}_expx")
    ex2 = te.compute(
        shape,
        lambda i, c: fp.saturating_rounding_doubling_high_mul(ex[i, c], ex[i, c], True),
        name=f"{name}_expx2",
    )
    epoly = te.compute(shape, lambda i, c: fp.exp_interval_poly(ex[i, c], ex2[i, c]), name=f"{name}_exppoly")
    e1 = te.compute(shape, lambda i, c: fp.exp_interval_result(ex[i, c], epoly[i, c]), name=f"{name}_exp1")
    e2 = te.compute(shape, lambda i, c: fp.exp_neg_barrel(e1[i, c], a[i, c], ib, [-2, -1]), name=f"{name}_exp2")
    e3 = te.compute(shape, lambda i, c: fp.exp_neg_barrel(e2[i, c], a[i, c], ib, [0, 1]), name=f"{name}_exp3")
    return te.compute(
        shape,
        lambda i, c: fp.exp_neg_tail(fp.exp_neg_barrel(e3[i, c], a[i, c], ib, [2, 3, 4]), a[i, c], ib),
        name=f"{name}_expv",
    )


def softmax_int8(
    x: te.Tensor,
    input_scale: float,
    beta: float,
    name: str,
    single_rounding: bool = False,
    out_dtype: str = "int8",
) -> te.Tensor:
    """Softmax over the last axis of an int8 [rows, depth] tensor; int8 out (scale 1/256, zp -128)
    or int16 out (``out_dtype``; scale 1/65536, zp -32768: TFLite's Softmax<int8_t, int16_t>).

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
    e = staged_exp(a, SCALED_DIFF_INTEGER_BITS, name)

    def exp_final(i: fp.Expr, c: fp.Expr) -> fp.Expr:
        # 0 where TFLite skips the element: adds nothing to the sum, outputs -128
        return e[i, c] & ~((diff(i, c) - c32(p.diff_min)) >> c32(31))

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

    def shifted_minus_one(i: fp.Expr) -> fp.Expr:
        u = sum_of_exps[i].astype("uint32") << headroom[i].astype("uint32")
        return (u - tirx.const(1 << 31, "uint32")).astype("int32")

    recip = staged_one_over_one_plus_x(te.compute((rows,), shifted_minus_one, name=f"{name}_x"), name)

    bits = 16 if out_dtype == "int16" else 8
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1

    def scaled(i: fp.Expr, c: fp.Expr) -> fp.Expr:
        # exponent = num_bits_over_unit + 31 - output bits, num_bits_over_unit = 12 - headroom
        exponent = c32(ACCUMULATION_INTEGER_BITS + 31 - bits) - headroom[i]
        prod = fp.saturating_rounding_doubling_high_mul(recip[i], exps[i, c], no_overflow=True)
        return fp.rounding_divide_by_pot(prod, exponent) + c32(low)

    # Its own stage: TVM 0.27's simplifier drops the upper clamp when it sees the whole
    # expression (it bounds the shifted value wrongly), and 1.0 (output 128) must give 127.
    val = te.compute((rows, depth), scaled, name=f"{name}_val")
    return te.compute(
        (rows, depth),
        lambda i, c: te.min(te.max(val[i, c], c32(low)), c32(high)).astype(out_dtype),
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
    x: npt.ArrayLike, input_scale: float, beta: float, single_rounding: bool = False, bits: int = 8
) -> npt.NDArray[np.int8]:
    """numpy reference of softmax_int8 over the last axis (any leading shape); ``bits`` 16: the
    int16 output."""
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
    exponent = ACCUMULATION_INTEGER_BITS + 31 - bits - clz
    out = fp.np_rounding_divide_by_pot(fp.np_saturating_rounding_doubling_high_mul(recip, e), exponent)
    low = -(1 << (bits - 1))
    out = np.clip(out + low, low, -low - 1)
    return out.astype(np.int16 if bits == 16 else np.int8).reshape(shape)


# ---------------------------------------------------------------------------------------------
# int16


def _round_half_away(v: np.float32) -> np.float32:
    return np.float32(np.sign(v) * np.floor(np.abs(v) + np.float32(0.5)))


def gen_lut_int16(func: Any, lo: float, hi: float) -> np.ndarray:
    """TFLite's ``gen_lut<float, int16_t, int16_t>(func, lo, hi, -1, 1)``: 512 float32 samples
    of ``func`` over [lo, hi] times 32768, each biased by half the error of linear interpolation
    at its interval's midpoint, plus the value at ``hi``; int16[513]."""
    f32 = np.float32
    step = f32((f32(hi) - f32(lo)) / f32(LUT_STEPS))
    half = f32(step / f32(2))
    scale = f32(32768.0)
    lut = np.empty(LUT_STEPS + 1, np.int16)
    for i in range(LUT_STEPS):
        x = f32(f32(lo) + f32(f32(i) * step))
        val = f32(func(x))
        mid = f32(func(f32(x + half)))
        nxt = f32(func(f32(f32(lo) + f32(f32(i + 1) * step))))
        sample = _round_half_away(f32(val * scale))
        interp = _round_half_away(f32(f32(f32(nxt * scale) + sample) / f32(2)))
        bias = _round_half_away(f32(f32(interp - _round_half_away(f32(mid * scale))) / f32(2)))
        lut[i] = int(np.clip(f32(sample - bias), -32768, 32767))
    lut[LUT_STEPS] = int(np.clip(_round_half_away(f32(f32(func(f32(hi))) * scale)), -32768, 32767))
    return lut


def _exp_f32(x: np.float32) -> np.float32:
    return np.float32(np.exp(np.float64(x)))


def _one_over_one_plus_f32(x: np.float32) -> np.float32:
    return np.float32(np.float32(1.0) / np.float32(np.float32(1.0) + x))


def softmax_int16_luts() -> tuple[np.ndarray, np.ndarray]:
    """The exp table over [-10, 0] and the 1 / (1 + x) table over [0, 1]."""
    return gen_lut_int16(_exp_f32, -10.0, 0.0), gen_lut_int16(_one_over_one_plus_f32, 0.0, 1.0)


def softmax_int16_multiplier(input_scale: float, beta: float) -> tuple[int, int]:
    """QuantizeMultiplier(input_scale * beta / (10 / 65535)) in double, as TFLite Micro."""
    return fp.quantize_multiplier(fp.as_float32(input_scale) * fp.as_float32(beta) / INT16_INPUT_RANGE)


def np_lut_lookup(lut: np.ndarray, v: npt.ArrayLike) -> np.ndarray:
    """TFLite's int16 table lookup with interpolation of int16 values ``v``."""
    va = np.asarray(v, np.int64)
    index = 256 + (va >> 7)
    base = lut.astype(np.int64)[index]
    slope = (lut.astype(np.int64)[index + 1] - base).astype(np.int16).astype(np.int64)
    return (base + ((slope * (va & 0x7F) + 64) >> 7)).astype(np.int16).astype(np.int64)


def np_softmax_int16(x: npt.ArrayLike, input_scale: float, beta: float) -> np.ndarray:
    """numpy reference of the int16 kernel over the last axis."""
    exp_lut, recip_lut = softmax_int16_luts()
    m, shift = softmax_int16_multiplier(input_scale, beta)
    xa = np.asarray(x, np.int64)
    scaled = fp.np_multiply_by_quantized_multiplier(xa - xa.max(axis=-1, keepdims=True), m, shift)
    e = np_lut_lookup(exp_lut, np.clip(scaled + 32767, -32768, 32767))
    total = e.sum(axis=-1, keepdims=True)
    h = fp.np_count_leading_zeros_u32(total)
    shifted = ((total << (h - 1)) + (1 << 13)) >> 14
    recip = np_lut_lookup(recip_lut, np.clip(shifted - 98304, -32768, 32767))
    out = (e * recip + (np.int64(1) << (30 - h))) >> (31 - h)
    return np.clip(out, 0, 32767).astype(np.int16)


def _te_lut_lookup(lut: te.Tensor, v: fp.Expr) -> fp.Expr:
    """The int16 table lookup with interpolation of an int32 value ``v`` in [-32768, 32767]."""
    index = (v >> fp.c32(7)) + fp.c32(256)
    base = lut[index].astype("int32")
    slope = (lut[index + fp.c32(1)].astype("int32") - base).astype("int16").astype("int32")
    return (base + ((slope * (v & fp.c32(0x7F)) + fp.c32(64)) >> fp.c32(7))).astype("int16").astype("int32")


def softmax_int16(x: te.Tensor, exp_lut: te.Tensor, recip_lut: te.Tensor, input_scale: float, beta: float,
                  name: str) -> te.Tensor:
    """Softmax over the last axis of an int16 [rows, depth] tensor (input zero point 0); int16
    out (scale 1/32768, zero point 0), as TFLite Micro's SoftmaxInt16. ``exp_lut`` and
    ``recip_lut`` are int16[513] placeholders bound to :func:`softmax_int16_luts`."""
    rows, depth = x.shape
    m, shift = softmax_int16_multiplier(input_scale, beta)
    c32 = fp.c32
    k = te.reduce_axis((0, depth), name="k")
    row_max = te.compute((rows,), lambda i: te.max(x[i, k], axis=k), name=f"{name}_max")

    def exp_of(i: fp.Expr, c: fp.Expr) -> fp.Expr:
        scaled = fp.multiply_by_quantized_multiplier(x[i, c].astype("int32") - row_max[i].astype("int32"), m, shift)
        return _te_lut_lookup(exp_lut, clamp(scaled + c32(32767), -32768, 32767)).astype("int16")

    exps = te.compute((rows, depth), exp_of, name=f"{name}_exp")  # int16, as TFLite Micro keeps them
    k2 = te.reduce_axis((0, depth), name="k2")
    total = te.compute((rows,), lambda i: te.sum(exps[i, k2].astype("int32"), axis=k2), name=f"{name}_sum")
    headroom = te.compute((rows,), lambda i: fp.count_leading_zeros_u32(total[i]), name=f"{name}_clz")

    def reciprocal(i: fp.Expr) -> fp.Expr:
        wide = (total[i].astype("int64") << (headroom[i] - c32(1)).astype("int64")) + fp.c64(1 << 13)
        shifted = (wide >> fp.c64(14)).astype("int32")
        return _te_lut_lookup(recip_lut, clamp(shifted - c32(98304), -32768, 32767))

    recip = te.compute((rows,), reciprocal, name=f"{name}_recip")

    def scaled_out(i: fp.Expr, c: fp.Expr) -> fp.Expr:
        prod = exps[i, c].astype("int64") * recip[i].astype("int64")
        rounded = (prod + (fp.c64(1) << (c32(30) - headroom[i]).astype("int64"))) >> (c32(31) - headroom[i]).astype("int64")
        return clamp(rounded.astype("int32"), 0, 32767).astype("int16")

    return te.compute((rows, depth), scaled_out, name=name)


# ---------------------------------------------------------------------------------------
# the operator


def from_tflite(ctx: Any, node: Any) -> None:
    o = ctx.options(node, "SoftmaxOptions")
    ctx.emit(node, "softmax", [node.inputs[0]], node.outputs, {"beta": float(o.Beta())})


def from_onnx(imp: Any, node: Any) -> None:
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
    """TFLite Micro's SoftmaxPrepare: equal shapes, beta positive (integer types), the output quantization fixed
    for int8 and int16, and for int8 beta x input scale giving a multiplier above 1."""
    # TFLite Micro: int8 output scale 1/256 (to 1e-8), int16 1/32768 (to 1e-3 of it); an int8 input
    # with an int16 output: scale 1/65536 (to 1e-3 of it), zero point -32768
    check_same_size(g, op)
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    if x.dtype == "int8" and y.dtype == "int16":
        if x.quant is None or y.quant is None or x.shape != y.shape:
            raise OpError(f"{op.source}: int8 -> int16 SOFTMAX needs quantized tensors of one shape")
        ys, zy = y.quant.scalar()
        if zy != -32768 or abs(float(ys) - OUTPUT_SCALE_INT8_INT16) > 1e-3 * OUTPUT_SCALE_INT8_INT16:
            raise OpError(f"{op.source}: int8 -> int16 SOFTMAX output must have scale 1/65536 and zero point -32768")
    else:
        check_row_op(g, op, {"int8": (OUTPUT_SCALE, OUTPUT_ZERO_POINT, 2.56e-6),
                             "int16": (OUTPUT_SCALE_INT16, 0, 1e-3)}, "SOFTMAX")
    if x.dtype == "int16":
        assert x.quant is not None
        if x.quant.scalar()[1] != 0:
            raise OpError(f"{op.source}: int16 SOFTMAX input must have zero point 0")
    beta = float(op.attrs["beta"])
    # float32: TFLite Micro computes exp((x - max) * beta) / sum for any beta (0, negative), and
    # so does softmax_float; a non-finite one has no C constant in the generated code. The
    # integer kernels need a positive beta (int8: PreprocessSoftmaxScaling's
    # QuantizeMultiplierGreaterThanOne aborts on anything else)
    if not math.isfinite(beta):
        raise OpError(f"{op.source}: beta {beta:g} (must be finite)")
    if x.dtype != "float32" and beta <= 0:
        raise OpError(f"{op.source}: beta {beta:g} (must be finite and positive)")
    if x.dtype == "int8":
        assert x.quant is not None
        try:
            fp.softmax_params(x.quant.scalar()[0], beta)
        except ValueError:
            raise OpError(f"{op.source}: beta {beta:g} x input scale {x.quant.scalar()[0]:g} is too small for the "
                          "int8 softmax") from None


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x = g.tensors[op.inputs[0]]
    beta = op.attrs["beta"]
    if x.dtype == "float32":
        return rows_kernel(g, op, lambda X: softmax_float(X, beta, "out"))
    assert x.quant is not None
    scale = float(x.quant.scalar()[0])
    if x.dtype == "int8":
        out_dtype = g.tensors[op.outputs[0]].dtype
        return rows_kernel(g, op, lambda X: softmax_int8(X, scale, beta, "out", out_dtype=out_dtype))
    exp_table, recip_table = softmax_int16_luts()
    exp_lut = te.placeholder((LUT_STEPS + 1,), "int16", name="exp_lut")
    recip_lut = te.placeholder((LUT_STEPS + 1,), "int16", name="recip_lut")
    kdef = rows_kernel(g, op, lambda X: softmax_int16(X, exp_lut, recip_lut, scale, beta, "out"))
    kdef.args += [KernelArg(exp_lut, constant=exp_table, role="exp_lut"),
                  KernelArg(recip_lut, constant=recip_table, role="recip_lut")]
    return kdef


OPS = (
    OpDef(
        kind="softmax",
        summary="softmax over the last axis",
        tflite=(SourceOp("SOFTMAX", from_tflite, ("int8", "int16", "float32"),
                         "int8 output scale 1/256, zero point -128 (or int16 1/65536, -32768); int16 zero points 0, "
                         "output scale 1/32768"),),
        onnx=(SourceOp("Softmax", from_onnx, ("float32",), "last axis"),),
        variants=(Variant("generic", _generic, types=("int8", "int16", "float32")),),
        check=check,
        reference="TFLite Micro softmax.cc: reference_ops::Softmax (int8 gemmlowp arithmetic, float32), SoftmaxInt16",
        offload=(Offload("cmsis-nn", ("int8",), "softmax"),),
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "int8 -> int16 SOFTMAX tensors without quantization or of other shapes",
               "output quantization checked (zero point -32768, scale 1/65536) [k/softmax_common.cc:97-100]",
               "refused-by-TFLM", "kept"),
    Validation("check", "int8 -> int16 SOFTMAX output not (1/65536, -32768)",
               "`TF_LITE_ENSURE_EQ(zero_point, -32768)`, `TF_LITE_ENSURE_NEAR(scale, 1/65536, 1e-3 of it)` [k/softmax_common.cc:98-100]",
               "refused-by-TFLM", "kept"),
    Validation("check", "int16 SOFTMAX input zero point not 0",
               "`TF_LITE_ENSURE_EQ(input->params.zero_point, 0)` [k/softmax_common.cc:91]",
               "refused-by-TFLM", "kept"),
    Validation("check", "beta not finite (any type)",
               "float32: runs it (NaN outputs) [reference softmax.h]; int8: QuantizeMultiplierGreaterThanOne aborts",
               "would-compute-differently", "kept: utvm's generated C has no constant for a non-finite beta (the host build failed with 'inff undeclared' when it was accepted)"),
    Validation("check", "beta not positive (integer types; was: any type)",
               "float32: runs any beta, exp((x - max) * beta) / sum [reference softmax.h]; int8: PreprocessSoftmaxScaling's QuantizeMultiplierGreaterThanOne aborts [quantization_util.cc:106-111]; int16: QuantizeMultiplier of a non-positive multiplier runs [k/softmax_common.cc:118]",
               "neither", "relaxed for float32 (finite beta); kept for int8 (TFLM aborts) and int16 (utvm's LUT path not shown equal for beta <= 0)"),
    Validation("check", "int8 beta x input scale too small (multiplier not above 1)",
               "QuantizeMultiplierGreaterThanOne: `TFLITE_CHECK_GT(multiplier, 1)` aborts [quantization_util.cc:109]",
               "refused-by-TFLM", "kept"),
)
