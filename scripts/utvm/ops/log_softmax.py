"""LOG_SOFTMAX over the last axis: x - max - log(sum(exp(x - max))).

Import: TFLite LOG_SOFTMAX; ONNX LogSoftmax over the last axis (float32).
Semantics, TFLite Micro log_softmax.cc: float32 reference_ops::LogSoftmax (``x - max - log(sum(
exp(x - max)))``); int8 reference_integer_ops::LogSoftmax (output scale 16/256, zero point 127):
the differences to the row maximum rescaled into Q5.26 (PreprocessLogSoftmaxScalingExp, beta 1),
their exponentials (gemmlowp exp_on_negative_values) summed in Q12.19, the log of that sum
(log_x_for_x_greater_than_or_equal_to_1 into Q5.26: a normalisation by count-leading-zeros, a
rational approximation with one_over_one_plus_x_for_x_in_0_1), and each rescaled difference less
that log rounded by 2**22 to the output scale; differences below a limit derived from the log
give -128. :func:`np_log_softmax_int8` is the same arithmetic in numpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from tvm import te, tirx

from ..ir import PLAIN, Graph, Operator
from ..kernels import fixedpoint as fp
from ..kernels.kerneldef import KernelDef
from ..kernels.requant import clamp
from ..kernels.target import Target
from .base import OpDef, OpError, SourceOp, Validation, Variant
from .common import check_row_op, rows_kernel
from .softmax import ACCUMULATION_INTEGER_BITS, SCALED_DIFF_INTEGER_BITS, staged_exp, staged_one_over_one_plus_x

OUTPUT_SCALE = 16.0 / 256.0
OUTPUT_ZERO_POINT = 127
#: integer bits of the output (16 / 256 = 2**-4 per step)
OUTPUT_INTEGER_BITS = 4
#: the log is accumulated with one integer bit more than its Q5.26 result
_LOG_ACCUM_BITS = SCALED_DIFF_INTEGER_BITS + 1

# gemmlowp-style Q0.31 constants of log_x_for_x_greater_than_or_equal_to_1
LOG_2 = 1488522236            # log(2)
SQRT_SQRT_HALF = 1805811301   # 2**-0.25
SQRT_HALF = 1518500250        # 2**-0.5
ONE_QUARTER = 536870912       # 1/4
ALPHA_N = 117049297           # 11/240 * 2**0.25
ALPHA_D = 127690142           # 1/20 * 2**0.25
ALPHA_I = 1057819769          # 2 / 2**0.25 - 2**0.25
ALPHA_F = 638450708           # 1/4 * 2**0.25


@dataclass(frozen=True)
class LogSoftmaxParams:
    """TFLite Micro's LogSoftmaxOpData for int8."""

    input_multiplier: int
    input_left_shift: int
    reverse_multiplier: int
    reverse_shift: int      # <= 0: MultiplyByQuantizedMultiplier's shift for the reverse scaling
    diff_min: int


def log_softmax_params(input_scale: float) -> LogSoftmaxParams:
    """PreprocessLogSoftmaxScalingExp(beta 1, input scale, 5 integer bits) and the diff limit."""
    mult, shift = fp.preprocess_softmax_scaling(1.0, fp.as_float32(input_scale), SCALED_DIFF_INTEGER_BITS)
    reverse = float(1 << (31 - shift)) / float(mult)
    rmult, rshift = fp.quantize_multiplier(reverse)
    if rshift > 0:
        raise OpError(f"input scale {input_scale} is too small for int8 LOG_SOFTMAX")
    diff_min = -fp.calculate_input_radius(SCALED_DIFF_INTEGER_BITS, shift)
    return LogSoftmaxParams(mult, shift, rmult, rshift, diff_min)


# ---------------------------------------------------------------------------------------------
# numpy reference


def _np_shift_left(x: np.ndarray, e: np.ndarray) -> np.ndarray:
    """SaturatingRoundingMultiplyByPOTParam for exponents >= 0: x * 2**e saturated to int32."""
    return np.clip(np.asarray(x, np.int64) << np.asarray(e, np.int64), fp.INT32_MIN, fp.INT32_MAX)


def np_log_x(raw: npt.ArrayLike, input_integer_bits: int = ACCUMULATION_INTEGER_BITS) -> np.ndarray:
    """log_x_for_x_greater_than_or_equal_to_1<5>(x) of Q12.19 values x >= 1: Q5.26 raw values."""
    srdhm = fp.np_saturating_rounding_doubling_high_mul
    wrap = fp.np_wrap32
    z_a = np.asarray(raw, np.int64)
    shifted_quarter = ONE_QUARTER >> _LOG_ACCUM_BITS
    ha = fp.np_count_leading_zeros_u32(z_a)
    r_a = fp.np_saturating_rounding_multiply_by_pot(srdhm(_np_shift_left(z_a, ha - 1), SQRT_HALF), 1)
    z_a_pow = np.clip(((input_integer_bits - ha) << (31 - _LOG_ACCUM_BITS)) + shifted_quarter, fp.INT32_MIN, fp.INT32_MAX)
    z_b = srdhm(z_a, SQRT_HALF)
    hb = fp.np_count_leading_zeros_u32(z_b) - 1
    r_b = _np_shift_left(z_a, hb)
    z_b_pow = np.clip(((input_integer_bits - hb) << (31 - _LOG_ACCUM_BITS)) - shifted_quarter, fp.INT32_MIN, fp.INT32_MAX)
    r = np.minimum(r_a, r_b)
    z_pow = np.maximum(z_a_pow, z_b_pow)
    p = fp.np_rounding_half_sum(r, SQRT_SQRT_HALF)
    q = wrap(2 * wrap(r - SQRT_SQRT_HALF))
    sq = srdhm(q, q)
    num = wrap(srdhm(q, r) + srdhm(srdhm(q, sq), ALPHA_N))
    den = wrap(srdhm(p, wrap(wrap(ALPHA_I + q) + srdhm(ALPHA_D, sq))) + srdhm(ALPHA_F, q))
    recip = fp.np_one_over_one_plus_x_for_x_in_0_1(den)
    num_scaled = fp.np_rounding_divide_by_pot(num, _LOG_ACCUM_BITS)
    total = wrap(srdhm(z_pow, LOG_2) + srdhm(num_scaled, recip))
    return fp.np_saturating_rounding_multiply_by_pot(total, _LOG_ACCUM_BITS - SCALED_DIFF_INTEGER_BITS)


def np_log_softmax_int8(x: npt.ArrayLike, input_scale: float) -> np.ndarray:
    """numpy reference of the int8 kernel over the last axis."""
    p = log_softmax_params(input_scale)
    xa = np.asarray(x, np.int64)
    diff = xa - xa.max(axis=-1, keepdims=True)
    q5 = fp.np_multiply_by_quantized_multiplier(np.maximum(diff, p.diff_min), p.input_multiplier, p.input_left_shift)
    e = fp.np_exp_on_negative_values(q5, SCALED_DIFF_INTEGER_BITS)
    e = np.where(diff >= p.diff_min, fp.np_rounding_divide_by_pot(e, ACCUMULATION_INTEGER_BITS), 0)
    total = fp.np_wrap32(e.sum(axis=-1, keepdims=True))
    log_sum = np_log_x(total)
    limit = np.maximum(p.diff_min - 1, fp.np_multiply_by_quantized_multiplier(
        fp.np_wrap32(log_sum + fp.INT32_MIN), p.reverse_multiplier, p.reverse_shift))
    out = fp.np_rounding_divide_by_pot(fp.np_wrap32(q5 - log_sum), 31 - SCALED_DIFF_INTEGER_BITS - OUTPUT_INTEGER_BITS)
    out = np.where(diff > limit, np.clip(out + OUTPUT_ZERO_POINT, -128, 127), -128)
    return out.astype(np.int8)


# ---------------------------------------------------------------------------------------------
# the kernels


def _sat_shift_left(x: Any, e: Any) -> Any:
    """x * 2**e saturated to int32, for 0 <= e <= 31 (SaturatingRoundingMultiplyByPOTParam)."""
    wide = x.astype("int64") << e.astype("int64")
    return tirx.min(tirx.max(wide, fp.c64(fp.INT32_MIN)), fp.c64(fp.INT32_MAX)).astype("int32")


def staged_log_x(total: te.Tensor, name: str) -> te.Tensor:
    """log_x_for_x_greater_than_or_equal_to_1<5> of every element of the int32 [rows] tensor
    ``total`` (Q12.19, >= 1) in TE stages; Q5.26 raw values, as :func:`np_log_x`."""
    c32 = fp.c32
    srdhm = fp.saturating_rounding_doubling_high_mul
    rows = total.shape
    ib = ACCUMULATION_INTEGER_BITS
    quarter = ONE_QUARTER >> _LOG_ACCUM_BITS
    ha = te.compute(rows, lambda i: fp.count_leading_zeros_u32(total[i]), name=f"{name}_ha")
    hb = te.compute(rows, lambda i: fp.count_leading_zeros_u32(srdhm(total[i], SQRT_HALF)) - c32(1), name=f"{name}_hb")

    def r_of(i: Any) -> Any:
        r_a = fp.saturating_rounding_multiply_by_pot(srdhm(_sat_shift_left(total[i], ha[i] - c32(1)), SQRT_HALF), 1)
        return tirx.min(r_a, _sat_shift_left(total[i], hb[i]))

    r = te.compute(rows, r_of, name=f"{name}_r")

    def z_pow(i: Any) -> Any:  # (ib - headroom) << 25 stays far inside int32: no saturation
        shift = c32(31 - _LOG_ACCUM_BITS)
        return tirx.max(((c32(ib) - ha[i]) << shift) + c32(quarter), ((c32(ib) - hb[i]) << shift) - c32(quarter))

    zp = te.compute(rows, z_pow, name=f"{name}_zpow")
    # two stages: TVM's simplifier would fold (r - c) * 2 into r * 2 - 2c, a constant past int32
    r_off = te.compute(rows, lambda i: r[i] - c32(SQRT_SQRT_HALF), name=f"{name}_roff")
    q = te.compute(rows, lambda i: r_off[i] + r_off[i], name=f"{name}_q")
    sq = te.compute(rows, lambda i: srdhm(q[i], q[i]), name=f"{name}_sq")
    num = te.compute(rows, lambda i: srdhm(q[i], r[i]) + srdhm(srdhm(q[i], sq[i]), ALPHA_N), name=f"{name}_num")

    def denominator(i: Any) -> Any:
        p = fp.rounding_half_sum(r[i], SQRT_SQRT_HALF)
        return srdhm(p, c32(ALPHA_I) + q[i] + srdhm(sq[i], ALPHA_D)) + srdhm(q[i], ALPHA_F)

    recip = staged_one_over_one_plus_x(te.compute(rows, denominator, name=f"{name}_den"), name)

    def result(i: Any) -> Any:
        acc = srdhm(zp[i], LOG_2) + srdhm(fp.rounding_divide_by_pot(num[i], _LOG_ACCUM_BITS), recip[i])
        return fp.saturating_rounding_multiply_by_pot(acc, _LOG_ACCUM_BITS - SCALED_DIFF_INTEGER_BITS)

    return te.compute(rows, result, name=f"{name}_log")


def log_softmax_int8(x: te.Tensor, input_scale: float, name: str) -> te.Tensor:
    """LOG_SOFTMAX over the last axis of an int8 [rows, depth] tensor; int8 out (scale 16/256,
    zero point 127), bit-exact with TFLite Micro's reference kernel."""
    rows, depth = x.shape
    p = log_softmax_params(input_scale)
    c32 = fp.c32
    k = te.reduce_axis((0, depth), name="k")
    row_max = te.compute((rows,), lambda i: te.max(x[i, k], axis=k), name=f"{name}_max")

    def diff(i: Any, c: Any) -> Any:
        return x[i, c].astype("int32") - row_max[i].astype("int32")

    a = te.compute((rows, depth), lambda i, c: fp.multiply_by_quantized_multiplier(
        te.max(diff(i, c), c32(p.diff_min)), p.input_multiplier, p.input_left_shift), name=f"{name}_exp0")
    e = staged_exp(a, SCALED_DIFF_INTEGER_BITS, name)
    k2 = te.reduce_axis((0, depth), name="k2")

    def term(i: Any, c: Any) -> Any:  # 0 where TFLite skips the element
        scaled = fp.rounding_divide_by_pot(e[i, c], ACCUMULATION_INTEGER_BITS)
        return scaled & ~((diff(i, c) - c32(p.diff_min)) >> c32(31))

    total = te.compute((rows,), lambda i: te.sum(term(i, k2), axis=k2), name=f"{name}_sum")
    log_sum = staged_log_x(total, f"{name}_ln")
    limit = te.compute((rows,), lambda i: tirx.max(c32(p.diff_min - 1), fp.multiply_by_quantized_multiplier(
        log_sum[i] + c32(fp.INT32_MIN), p.reverse_multiplier, p.reverse_shift)), name=f"{name}_limit")
    val = te.compute((rows, depth), lambda i, c: fp.rounding_divide_by_pot(
        a[i, c] - log_sum[i], 31 - SCALED_DIFF_INTEGER_BITS - OUTPUT_INTEGER_BITS) + c32(OUTPUT_ZERO_POINT),
        name=f"{name}_val")
    return te.compute((rows, depth), lambda i, c: tirx.Select(
        diff(i, c) > limit[i], clamp(val[i, c], -128, 127), c32(-128)).astype("int8"), name=name)


def log_softmax_float(x: te.Tensor, name: str) -> te.Tensor:
    """TFLite's float LOG_SOFTMAX: x - max - log(sum(exp(x - max)))."""
    rows, depth = x.shape
    k = te.reduce_axis((0, depth), name="k")
    row_max = te.compute((rows,), lambda i: te.max(x[i, k], axis=k), name=f"{name}_max")
    k2 = te.reduce_axis((0, depth), name="k2")
    total = te.compute((rows,), lambda i: te.sum(te.exp(x[i, k2] - row_max[i]), axis=k2), name=f"{name}_sum")
    log_sum = te.compute((rows,), lambda i: te.log(total[i]), name=f"{name}_log")
    return te.compute((rows, depth), lambda i, c: x[i, c] - row_max[i] - log_sum[i], name=name)


# ---------------------------------------------------------------------------------------------
# the operator


def from_tflite(ctx: Any, node: Any) -> None:
    ctx.emit(node, "log_softmax", [node.inputs[0]], node.outputs)


def from_onnx(imp: Any, node: Any) -> None:
    x, out = node.input[0], node.output[0]
    rank = len(imp.shape(x))
    axis = int(imp.attrs(node).get("axis", -1 if imp.opset >= 13 else 1))
    if axis not in (-1, rank - 1):
        raise imp.fail(f"LogSoftmax over axis {axis} of a {rank}-D tensor is not supported (only the last axis)")
    imp.emit("log_softmax", [imp.get(x, PLAIN)], out, PLAIN)


def check(g: Graph, op: Operator) -> None:
    check_row_op(g, op, {"int8": (OUTPUT_SCALE, OUTPUT_ZERO_POINT, 0.0)}, "LOG_SOFTMAX")
    x = g.tensors[op.inputs[0]]
    if x.dtype == "int8":
        assert x.quant is not None
        log_softmax_params(float(x.quant.scalar()[0]))


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x = g.tensors[op.inputs[0]]
    if x.dtype == "int8":
        assert x.quant is not None
        scale = float(x.quant.scalar()[0])
        return rows_kernel(g, op, lambda X: log_softmax_int8(X, scale, "out"))
    return rows_kernel(g, op, lambda X: log_softmax_float(X, "out"))


OPS = (
    OpDef(
        kind="log_softmax",
        summary="log of the softmax over the last axis",
        tflite=(SourceOp("LOG_SOFTMAX", from_tflite, constraints="int8 output scale 16/256, zero point 127"),),
        onnx=(SourceOp("LogSoftmax", from_onnx, ("float32",), "last axis"),),
        variants=(Variant("generic", _generic, types=("int8", "float32")),),
        check=check,
        reference="TFLite Micro log_softmax.cc: reference_integer_ops::LogSoftmax, reference_ops::LogSoftmax",
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("log_softmax_params", "int8 LOG_SOFTMAX input scale too small",
               "PreprocessLogSoftmaxScalingExp: QuantizeMultiplierSmallerThanOneExp aborts [quantization_util.cc:321-336]",
               "refused-by-TFLM", "kept"),
)
