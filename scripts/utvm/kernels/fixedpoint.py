"""TFLite integer arithmetic, bit-exact: host-side parameters, TE builders, numpy references.

Three layers, all following TFLite / TFLite Micro reference kernels and gemmlowp's
fixed-point library (the behaviour, written anew here):

- host parameters (plain Python, IEEE double as the C++ code uses): ``tflite_round``,
  ``quantize_multiplier``, ``preprocess_softmax_scaling``, ``calculate_input_radius``, ...
- TE/TIR expression builders (TIR expressions in and out, int32 semantics, C-safe):
  ``saturating_rounding_doubling_high_mul``, ``rounding_divide_by_pot``,
  ``multiply_by_quantized_multiplier``, ``exp_on_negative_values``, ...
- numpy references with the same names prefixed ``np_`` (int64 arrays holding int32 values).

Multiplier/shift convention is TFLite's: ``quantize_multiplier(r)`` returns ``(m, shift)`` with
``r ~= m * 2**(shift - 31)``; ``shift > 0`` is a left shift.

Rounding modes: TFLite's default (``single_rounding=False``) rounds twice
(SaturatingRoundingDoublingHighMul then RoundingDivideByPOT); builds with
``TFLITE_SINGLE_ROUNDING=1`` round once ((x * m + round) >> (31 - shift)) and also saturate the
multiplier differently. The ``tflite-micro`` PyPI package rounds twice (see
tests/test_fixedpoint.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import tvm
from tvm import tirx

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1

Expr = tvm.ir.Expr
IntOrExpr = int | tvm.ir.Expr
IntArray = npt.NDArray[np.int64]

# ---------------------------------------------------------------------------------------------
# host-side parameters (exact IEEE double arithmetic, as TFLite computes them)
# ---------------------------------------------------------------------------------------------


def tflite_round(x: float) -> float:
    """std::round / TfLiteRound: round half away from zero, exact for every double."""
    if x < 0.0:
        return -tflite_round(-x)
    f = math.floor(x)
    return f + 1.0 if x - f >= 0.5 else f


def as_float32(x: float) -> float:
    """The double value of ``x`` rounded to float32 (how a .tflite scale or beta reaches C++)."""
    return float(np.float32(x))


def quantize_multiplier(real: float, single_rounding: bool = False) -> tuple[int, int]:
    """TFLite QuantizeMultiplier(double): (int32 multiplier, shift), real ~= m * 2**(shift-31)."""
    if real == 0.0:
        return 0, 0
    q, shift = math.frexp(real)
    q_fixed = int(tflite_round(q * float(1 << 31)))
    if q_fixed > (1 << 31):
        raise ValueError(f"quantize_multiplier: bad multiplier {real!r}")
    if q_fixed == (1 << 31):
        q_fixed //= 2
        shift += 1
    if q_fixed > INT32_MAX:
        raise ValueError(f"quantize_multiplier: bad multiplier {real!r}")
    if shift < -31:
        shift = 0
        q_fixed = 0
    if single_rounding and shift > 30:
        shift = 30
        q_fixed = INT32_MAX
    return q_fixed, shift


def quantize_multiplier_greater_than_one(real: float, single_rounding: bool = False) -> tuple[int, int]:
    """TFLite QuantizeMultiplierGreaterThanOne: as quantize_multiplier, requires real > 1."""
    if not real > 1.0:
        raise ValueError(f"multiplier {real!r} must be > 1")
    m, shift = quantize_multiplier(real, single_rounding)
    if shift < 0:
        raise ValueError(f"multiplier {real!r} gave a negative left shift")
    return m, shift


def conv_real_multiplier(input_scale: float, filter_scale: float, output_scale: float, per_channel: bool) -> float:
    """Real requant multiplier of TFLM CONV/FC: per-channel path in double, per-tensor FC path
    (GetQuantizedConvolutionMultipler) multiplies the two float32 scales in float32 first."""
    if per_channel:
        return as_float32(input_scale) * as_float32(filter_scale) / as_float32(output_scale)
    prod = float(np.float32(input_scale) * np.float32(filter_scale))
    return prod / as_float32(output_scale)


def preprocess_softmax_scaling(
    beta: float, input_scale: float, input_integer_bits: int, single_rounding: bool = False
) -> tuple[int, int]:
    """TFLite PreprocessSoftmaxScaling: (multiplier, left_shift) for beta*scale in Q(ib).(31-ib)."""
    max_real = float((1 << 30) - 1) if single_rounding else float((1 << 31) - 1)
    real = min(beta * input_scale * float(1 << (31 - input_integer_bits)), max_real)
    return quantize_multiplier_greater_than_one(real, single_rounding)


def calculate_input_radius(input_integer_bits: int, input_left_shift: int, total_signed_bits: int = 31) -> int:
    """TFLite CalculateInputRadius: largest |input diff| that does not overflow after rescale."""
    max_input_rescaled = (
        1.0
        * ((1 << input_integer_bits) - 1)
        * float(1 << (total_signed_bits - input_integer_bits))
        / float(1 << input_left_shift)
    )
    return int(math.floor(max_input_rescaled))


@dataclass(frozen=True)
class SoftmaxParams:
    """Prepared parameters of TFLite's int8 softmax (SoftmaxParams fields of the same names)."""

    input_multiplier: int
    input_left_shift: int
    diff_min: int


#: TFLite's left shift of the int8 ADD inputs before they are rescaled to a common scale
ADD_LEFT_SHIFT = 20


def add_params(sa: float, sb: float, sy: float,
               left_shift: int = ADD_LEFT_SHIFT) -> tuple[int, int, int, int, int, int]:
    """TFLite's int8 ADD multipliers and shifts (ma, sha, mb, shb, my, shy): the inputs, shifted
    left by ``left_shift`` (ADD_LEFT_SHIFT; 15 for int16), are scaled by scale / (2 *
    max(scale_a, scale_b)), their sum by 2 * max / (2**left_shift * scale_y)."""
    twice_max = 2.0 * max(float(sa), float(sb))
    ma, sha = quantize_multiplier(float(sa) / twice_max)
    mb, shb = quantize_multiplier(float(sb) / twice_max)
    my, shy = quantize_multiplier(twice_max / ((1 << left_shift) * float(sy)))
    return ma, sha, mb, shb, my, shy


def softmax_params(input_scale: float, beta: float, single_rounding: bool = False) -> SoftmaxParams:
    """TFLM SoftmaxPrepare for int8: scale and beta as float32, 5 scaled-diff integer bits."""
    k_scaled_diff_integer_bits = 5
    mult, shift = preprocess_softmax_scaling(
        as_float32(beta), as_float32(input_scale), k_scaled_diff_integer_bits, single_rounding
    )
    diff_min = -calculate_input_radius(k_scaled_diff_integer_bits, shift)
    return SoftmaxParams(mult, shift, diff_min)


# ---------------------------------------------------------------------------------------------
# TE / TIR expression builders (int32 values; int64 only for products)
# ---------------------------------------------------------------------------------------------


def c32(v: IntOrExpr) -> Expr:
    """An int32 TIR constant from a Python int, or the expression itself."""
    if isinstance(v, int):
        return tirx.const(v, "int32")
    return v


def c64(v: int) -> Expr:
    """An int64 TIR constant."""
    return tirx.const(v, "int64")


# The builders return plain expression trees: an argument used twice appears twice. TVM 0.27's
# passes expand Let bindings (nested Let expressions or Bind statements) and slow down
# exponentially on deep chains, and its simplifier propagates the condition of every Select
# into both branches (exponential on nested Selects). So the builders use sign masks
# (x >> 31), min/max and bit operations instead of Select (branch-free C, as gemmlowp's own
# masks), and deep computations (exp, Newton-Raphson) are cut into TE stages by the caller with
# the step functions below (see softmax.py).


def _mask_select(mask: Expr, a: Expr, b: Expr) -> Expr:
    """mask ? a : b for an int32 mask that is all ones or zero (gemmlowp SelectUsingMask)."""
    return b ^ (mask & (a ^ b))


def rounding_half_sum(a: Expr, b: IntOrExpr) -> Expr:
    """gemmlowp RoundingHalfSum (int32): (a + b) / 2 rounded half away from zero."""
    s = a.astype("int64") + c32(b).astype("int64")
    sign = c64(1) + c64(2) * (s >> c64(63))  # 1 or -1
    return tirx.truncdiv(s + sign, c64(2)).astype("int32")


def saturating_rounding_doubling_high_mul(a: IntOrExpr, b: IntOrExpr, no_overflow: bool = False) -> Expr:
    """gemmlowp SaturatingRoundingDoublingHighMul (ARM VQRDMULH) on int32.

    ``no_overflow`` drops the INT32_MIN*INT32_MIN saturation test (done automatically when one
    operand is a Python int other than INT32_MIN)."""
    if isinstance(a, int) and isinstance(b, int):
        return c32(int(np_saturating_rounding_doubling_high_mul(np.int64(a), np.int64(b))))
    if (isinstance(a, int) and a != INT32_MIN) or (isinstance(b, int) and b != INT32_MIN):
        no_overflow = True
    ea, eb = c32(a), c32(b)
    ab = ea.astype("int64") * eb.astype("int64")
    # nudge = ab >= 0 ? 2**30 : 1 - 2**30, from the sign mask of ab
    nudge = c64(1 << 30) + ((ab >> c64(63)) & c64(1 - (1 << 31)))
    # (ab + nudge) / 2**31 rounded toward zero, as shifts: TE leaves tensor loads inside a
    # truncdiv unbound (te.create_prim_func), which per-channel multipliers would be
    v = ab + nudge
    res = (v + ((v >> c64(63)) & c64((1 << 31) - 1))) >> c64(31)
    if not no_overflow:
        # only INT32_MIN * INT32_MIN gives 2**31 here: saturate it (a Select on a == b == MIN
        # would be simplified away by TVM 0.27, wrongly)
        res = tirx.min(res, c64(INT32_MAX))
    return res.astype("int32")


def rounding_divide_by_pot(x: Expr, exponent: IntOrExpr) -> Expr:
    """gemmlowp RoundingDivideByPOT: x / 2**exponent rounded to nearest, ties away from zero.

    ``exponent`` in [0, 31], a Python int or an int32 expression."""
    if isinstance(exponent, int):
        if not 0 <= exponent <= 31:
            raise ValueError(f"rounding_divide_by_pot: exponent {exponent} out of [0, 31]")
        if exponent == 0:
            return x
        mask: Expr = c32((1 << exponent) - 1)
        half: Expr = c32(((1 << exponent) - 1) >> 1)
    else:
        mask = ((c64(1) << exponent.astype("int64")) - c64(1)).astype("int32")
        half = mask >> c32(1)
    threshold = half - (x >> c32(31))  # + 1 when x < 0
    # 1 when remainder > threshold (both in [0, 2**30], the difference cannot overflow)
    round_up = ((threshold - (x & mask)) >> c32(31)) & c32(1)
    return (x >> c32(exponent)) + round_up


def saturating_rounding_multiply_by_pot(x: Expr, exponent: int) -> Expr:
    """gemmlowp SaturatingRoundingMultiplyByPOT<exponent>: saturating << or rounding >>."""
    if exponent == 0:
        return x
    if exponent < 0:
        return rounding_divide_by_pot(x, -exponent)
    wide = x.astype("int64") * c64(1 << exponent)
    return tirx.min(tirx.max(wide, c64(INT32_MIN)), c64(INT32_MAX)).astype("int32")


def shift_left_wrap(x: Expr, left: IntOrExpr) -> Expr:
    """int32 x * 2**left (0 <= left <= 31), wrapping around as two's complement does, with no
    undefined behaviour in the C (a left shift of a negative int32, or an overflowing one, is):
    utvm_shl_s32 of utvm/kernels.h shifts the unsigned value. An opaque call rather than TIR's
    unsigned casts, from which TVM's simplifier concludes that the result is not negative."""
    return tirx.call_pure_extern("int32", "utvm_shl_s32", x, c32(left) if isinstance(left, int) else left)


def _shift_left_expr(x: Expr, left: IntOrExpr) -> Expr:
    """x * 2**left for a non-negative shift (TFLite assumes no overflow; an overflow wraps here,
    without undefined behaviour)."""
    if isinstance(left, int) and left == 0:
        return x
    return shift_left_wrap(x, left)


def multiply_by_quantized_multiplier(
    x: Expr, multiplier: IntOrExpr, shift: IntOrExpr, single_rounding: bool = False
) -> Expr:
    """TFLite MultiplyByQuantizedMultiplier(int32 x, m, shift); shift > 0 is a left shift.

    ``multiplier``/``shift`` may be Python ints (per-tensor) or int32 expressions (per-channel
    values loaded from constant tensors). Double rounding by default, single rounding as
    TFLITE_SINGLE_ROUNDING builds do."""
    if single_rounding:
        total_e, rnd = _rounding_right_shift(31, shift)
        prod = x.astype("int64") * c32(multiplier).astype("int64") + rnd
        return (prod >> total_e).astype("int32")
    if isinstance(shift, int):
        left: IntOrExpr = max(shift, 0)
        right: IntOrExpr = max(-shift, 0)
    else:
        left = tirx.max(shift, c32(0))
        right = tirx.max(c32(0) - shift, c32(0))
    high = saturating_rounding_doubling_high_mul(_shift_left_expr(x, left), multiplier)
    return rounding_divide_by_pot(high, right)


def multiply_by_quantized_multiplier_int64(x: Expr, multiplier: IntOrExpr, shift: IntOrExpr) -> Expr:
    """TFLite MultiplyByQuantizedMultiplier(int64 x, m, shift), the 16x8 kernels' form: the
    multiplier reduced to 16 bits (rounded, at most 0x7FFF), one rounding shift by 15 - shift.
    Returns int32 (the result fits by TFLite's assumptions)."""
    if isinstance(multiplier, int):
        reduced: Expr = c64(((multiplier + (1 << 15)) >> 16) if multiplier < 0x7FFF0000 else 0x7FFF)
    else:
        m = multiplier.astype("int64")
        reduced = tirx.Select(m < c64(0x7FFF0000), (m + c64(1 << 15)) >> c64(16), c64(0x7FFF))
    total, rnd = _rounding_right_shift(15, shift)
    return ((x.astype("int64") * reduced + rnd) >> total).astype("int32")


def _rounding_right_shift(bits: int, shift: IntOrExpr) -> tuple[Expr, Expr]:
    """(bits - shift, half of 1 << that) as int64: the right shift and rounding term that
    follow a multiplication by a ``bits``-bit fixed-point multiplier and a left ``shift``."""
    if isinstance(shift, int):
        return c64(bits - shift), c64(1 << (bits - 1 - shift))
    total = c64(bits) - shift.astype("int64")
    return total, c64(1) << (total - c64(1))


def np_multiply_by_quantized_multiplier_int64(x: npt.ArrayLike, multiplier: npt.ArrayLike,
                                             shift: npt.ArrayLike) -> IntArray:
    """numpy reference of multiply_by_quantized_multiplier_int64."""
    xa = np.asarray(x, dtype=np.int64)
    m = np.asarray(multiplier, dtype=np.int64)
    s = np.asarray(shift, dtype=np.int64)
    reduced = np.where(m < 0x7FFF0000, (m + (1 << 15)) >> 16, 0x7FFF)
    total = 15 - s
    return (xa * reduced + (np.int64(1) << (total - 1))) >> total


def multiply_by_quantized_multiplier_greater_than_one(
    x: Expr, multiplier: int, left_shift: int, single_rounding: bool = False
) -> Expr:
    """TFLite MultiplyByQuantizedMultiplierGreaterThanOne (left_shift >= 0)."""
    if single_rounding:
        return multiply_by_quantized_multiplier(x, multiplier, left_shift, True)
    return saturating_rounding_doubling_high_mul(_shift_left_expr(x, left_shift), multiplier)


EXP_CONSTANT_TERM = 1895147668  # exp(-1/8) in Q0.31
EXP_CONSTANT_1_OVER_3 = 715827883  # 1/3 in Q0.31


def exp_interval_x(a: Expr) -> Expr:
    """exp on [-1/4, 0), step 1: x = a + 1/8 (Q0.31; |x| <= 1/8 so x*x never saturates)."""
    return a + c32(1 << 28)


def exp_interval_poly(x: Expr, x2: Expr) -> Expr:
    """exp on [-1/4, 0), step 2 (x2 = x*x): x^4/24 + x^3/6 + x^2/2 in Q0.31."""
    srdhm = saturating_rounding_doubling_high_mul
    x3 = srdhm(x2, x, no_overflow=True)
    x4 = srdhm(x2, x2, no_overflow=True)
    x4_over_4 = rounding_divide_by_pot(x4, 2)
    return rounding_divide_by_pot(srdhm(x4_over_4 + x3, EXP_CONSTANT_1_OVER_3) + x2, 1)


def exp_interval_result(x: Expr, poly: Expr) -> Expr:
    """exp on [-1/4, 0), step 3: exp(-1/8) * (1 + x + poly)."""
    return c32(EXP_CONSTANT_TERM) + saturating_rounding_doubling_high_mul(EXP_CONSTANT_TERM, x + poly)


def exp_on_interval_between_negative_one_quarter_and_0_excl(a: Expr) -> Expr:
    """gemmlowp exp(a) for a Q0.31 value a in [-1/4, 0), result Q0.31 (one large tree)."""
    x = exp_interval_x(a)
    x2 = saturating_rounding_doubling_high_mul(x, x, no_overflow=True)
    return exp_interval_result(x, exp_interval_poly(x, x2))


def exp_neg_interval_input(a: Expr, integer_bits: int) -> Expr:
    """exp_on_negative_values, step 0: (a mod 1/4) - 1/4 rescaled to Q0.31."""
    one_quarter = 1 << (31 - integer_bits - 2)
    a_mod_q_minus_q = (a & c32(one_quarter - 1)) - c32(one_quarter)
    return saturating_rounding_multiply_by_pot(a_mod_q_minus_q, integer_bits)


# exp(-2**k) in Q0.31 for k = -2 .. 4 (gemmlowp's barrel shifter constants)
EXP_BARREL = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308), (2, 39332535), (3, 720401), (4, 242))


def exp_neg_head(a: Expr, integer_bits: int) -> Expr:
    """First part of exp_on_negative_values: exp of (a mod 1/4) - 1/4, Q0.31 (one tree)."""
    return exp_on_interval_between_negative_one_quarter_and_0_excl(exp_neg_interval_input(a, integer_bits))


def exp_neg_barrel(result: Expr, a: Expr, integer_bits: int, exponents: list[int]) -> Expr:
    """Barrel-shifter steps of exp_on_negative_values for the given exponents (of -2..4)."""
    frac_bits = 31 - integer_bits
    one_quarter = 1 << (frac_bits - 2)
    remainder = (a & c32(one_quarter - 1)) - c32(one_quarter) - a
    table = dict(EXP_BARREL)
    for exponent in exponents:
        if integer_bits > exponent:
            bit_mask = c32(0) - ((remainder >> c32(frac_bits + exponent)) & c32(1))
            result = _mask_select(bit_mask, saturating_rounding_doubling_high_mul(result, table[exponent]), result)
    return result


def exp_neg_tail(result: Expr, a: Expr, integer_bits: int) -> Expr:
    """Last part of exp_on_negative_values: clamp below -32 (integer_bits > 5), exp(0) = 1.

    Requires a <= 0 (as exp_on_negative_values does)."""
    if integer_bits > 5:
        clamp = -(1 << (36 - integer_bits))  # -32.0
        result = result & ~((a - c32(clamp)) >> c32(31))  # 0 where a < clamp
    is_zero = ~(a >> c32(31))  # all ones where a == 0 (a <= 0)
    return _mask_select(is_zero, c32(INT32_MAX), result)


def exp_on_negative_values(a: Expr, integer_bits: int) -> Expr:
    """gemmlowp exp_on_negative_values: a is Q(integer_bits).(31-integer_bits), a <= 0; Q0.31.

    One expression tree (large): prefer the staged exp_neg_head/barrel/tail in kernels."""
    r = exp_neg_head(a, integer_bits)
    r = exp_neg_barrel(r, a, integer_bits, [e for e, _ in EXP_BARREL])
    return exp_neg_tail(r, a, integer_bits)


def newton_reciprocal_init(half_denominator: Expr) -> Expr:
    """Start of one_over_one_plus_x_for_x_in_0_1: 48/17 - 32/17 * half_denominator, Q2.29."""
    return c32(1515870810) + saturating_rounding_doubling_high_mul(half_denominator, -1010580540)


def newton_reciprocal_step(x: Expr, half_denominator: Expr) -> Expr:
    """One Newton-Raphson step of one_over_one_plus_x_for_x_in_0_1 (x in Q2.29).

    No INT32_MIN saturation test: half_denominator is in [1/2, 1), x in (1, 3), so the
    operands are never INT32_MIN."""
    srdhm = saturating_rounding_doubling_high_mul
    one_minus = c32(1 << 29) - srdhm(half_denominator, x, no_overflow=True)
    return x + saturating_rounding_multiply_by_pot(srdhm(x, one_minus, no_overflow=True), 2)


def one_over_one_plus_x_for_x_in_0_1(a: Expr) -> Expr:
    """gemmlowp 1/(1+a) for a Q0.31 value a in [0, 1), 3 Newton-Raphson steps; Q0.31.

    One expression tree (large): prefer staging half_denominator and each step in kernels."""
    half_denominator = rounding_half_sum(a, INT32_MAX)
    x = newton_reciprocal_init(half_denominator)
    for _ in range(3):
        x = newton_reciprocal_step(x, half_denominator)
    return saturating_rounding_multiply_by_pot(x, 1)


def count_leading_zeros_u32(x: Expr) -> Expr:
    """Leading zero bits of x viewed as uint32 (32 for 0), as int32, by comparisons only.

    TVM 0.27's C back end cannot emit ``tirx.clz``; this is 32 - (number of k with x >= 2**k),
    without selects (x appears 32 times: meant for per-row values)."""
    v = x.astype("uint32")
    one = tirx.const(1, "uint32")
    n = tirx.const(32, "uint32")
    for k in range(32):
        n = n - tirx.min(v >> tirx.const(k, "uint32"), one)  # [v >= 2**k]
    return n.astype("int32")


# ---------------------------------------------------------------------------------------------
# numpy references (int64 arrays holding int32 values; wraps like two's-complement int32)
# ---------------------------------------------------------------------------------------------


def np_wrap32(v: npt.ArrayLike) -> IntArray:
    """Wrap int64 values to int32 two's complement (C int32 overflow as gcc does it)."""
    a = np.asarray(v, dtype=np.int64)
    return ((a + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def _np_truncdiv(v: IntArray, d: int) -> IntArray:
    """C integer division (truncation toward zero) of int64 values by d > 0."""
    return np.where(v >= 0, v // d, -((-v) // d))


def np_saturating_rounding_doubling_high_mul(a: npt.ArrayLike, b: npt.ArrayLike) -> IntArray:
    """numpy reference of saturating_rounding_doubling_high_mul."""
    a64 = np.asarray(a, dtype=np.int64)
    b64 = np.asarray(b, dtype=np.int64)
    ab = a64 * b64
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    res = _np_truncdiv(ab + nudge, 1 << 31)
    overflow = (a64 == b64) & (a64 == INT32_MIN)
    return np.where(overflow, INT32_MAX, res).astype(np.int64)


def np_rounding_divide_by_pot(x: npt.ArrayLike, exponent: npt.ArrayLike) -> IntArray:
    """numpy reference of rounding_divide_by_pot (exponent scalar or array, in [0, 31])."""
    x64 = np.asarray(x, dtype=np.int64)
    e = np.asarray(exponent, dtype=np.int64)
    mask = (np.int64(1) << e) - 1
    remainder = x64 & mask
    threshold = (mask >> 1) + (x64 < 0)
    return ((x64 >> e) + (remainder > threshold)).astype(np.int64)


def np_saturating_rounding_multiply_by_pot(x: npt.ArrayLike, exponent: int) -> IntArray:
    """numpy reference of saturating_rounding_multiply_by_pot."""
    x64 = np.asarray(x, dtype=np.int64)
    if exponent == 0:
        return x64
    if exponent < 0:
        return np_rounding_divide_by_pot(x64, -exponent)
    threshold = (1 << (31 - exponent)) - 1
    return np.where(x64 > threshold, INT32_MAX, np.where(x64 < -threshold, INT32_MIN, x64 << exponent)).astype(np.int64)


def np_multiply_by_quantized_multiplier(
    x: npt.ArrayLike,
    multiplier: npt.ArrayLike,
    shift: npt.ArrayLike,
    single_rounding: bool = False,
) -> IntArray:
    """numpy reference of multiply_by_quantized_multiplier (multiplier/shift broadcast)."""
    x64 = np.asarray(x, dtype=np.int64)
    m = np.asarray(multiplier, dtype=np.int64)
    s = np.asarray(shift, dtype=np.int64)
    if single_rounding:
        total = 31 - s
        rnd = np.int64(1) << (total - 1)
        return ((x64 * m + rnd) >> total).astype(np.int64)
    left = np.maximum(s, 0)
    right = np.maximum(-s, 0)
    shifted = np_wrap32(x64 << left)
    return np_rounding_divide_by_pot(np_saturating_rounding_doubling_high_mul(shifted, m), right)


def np_rounding_half_sum(a: npt.ArrayLike, b: npt.ArrayLike) -> IntArray:
    """numpy reference of rounding_half_sum."""
    s = np.asarray(a, dtype=np.int64) + np.asarray(b, dtype=np.int64)
    return _np_truncdiv(s + np.where(s >= 0, 1, -1), 2)


def np_exp_on_negative_values(a: npt.ArrayLike, integer_bits: int) -> IntArray:
    """numpy reference of exp_on_negative_values."""
    a64 = np.asarray(a, dtype=np.int64)
    srdhm = np_saturating_rounding_doubling_high_mul
    frac_bits = 31 - integer_bits
    one_quarter = 1 << (frac_bits - 2)
    amq = (a64 & (one_quarter - 1)) - one_quarter
    xin = np_saturating_rounding_multiply_by_pot(amq, integer_bits)
    x = xin + (1 << 28)
    x2 = srdhm(x, x)
    x3 = srdhm(x2, x)
    x4 = srdhm(x2, x2)
    x4_over_4 = np_rounding_divide_by_pot(x4, 2)
    poly = np_rounding_divide_by_pot(np_wrap32(srdhm(np_wrap32(x4_over_4 + x3), 715827883) + x2), 1)
    result = np_wrap32(1895147668 + srdhm(1895147668, np_wrap32(x + poly)))
    remainder = np_wrap32(amq - a64)
    for exponent, mult in EXP_BARREL:
        if integer_bits > exponent:
            bit = 1 << (frac_bits + exponent)
            result = np.where((remainder & bit) != 0, srdhm(result, mult), result)
    if integer_bits > 5:
        result = np.where(a64 < -(1 << (36 - integer_bits)), 0, result)
    return np.where(a64 == 0, INT32_MAX, result).astype(np.int64)


def np_one_over_one_plus_x_for_x_in_0_1(a: npt.ArrayLike) -> IntArray:
    """numpy reference of one_over_one_plus_x_for_x_in_0_1."""
    srdhm = np_saturating_rounding_doubling_high_mul
    half_den = np_rounding_half_sum(a, INT32_MAX)
    x = np_wrap32(1515870810 + srdhm(half_den, -1010580540))
    for _ in range(3):
        one_minus = np_wrap32((1 << 29) - srdhm(half_den, x))
        x = np_wrap32(x + np_saturating_rounding_multiply_by_pot(srdhm(x, one_minus), 2))
    return np_saturating_rounding_multiply_by_pot(x, 1)


def np_count_leading_zeros_u32(x: npt.ArrayLike) -> IntArray:
    """numpy reference of count_leading_zeros_u32."""
    u = np.asarray(x, dtype=np.int64) & 0xFFFFFFFF
    out = np.full(u.shape, 32, dtype=np.int64)
    for bit in range(31, -1, -1):
        hit = ((u >> bit) & 1) == 1
        out = np.where(hit & (out == 32), 31 - bit, out)
    return out
