"""Requantization of int8 layers as TE expressions, exactly as TFLite's reference kernels do it.

Shared by every int8 kernel: the activation ranges (CalculateActivationRangeQuantized), the
bias folded with the input zero point, per-channel MultiplyByQuantizedMultiplier and its short
exact forms when the accumulator bound known at compile time allows them, and how the
constants are stored compactly (immediates, shifts packed into bias words).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from tvm import te, tirx

from ..errors import UtvmError
from ..ir import Tensor
from . import fixedpoint as fp
from .kerneldef import KernelArg

I32 = "int32"

def imm(v: int | float, dtype: str = I32) -> tirx.PrimExpr:
    return tirx.const(v, dtype)


def clamp(x: tirx.PrimExpr, lo: tirx.PrimExpr | int | float, hi: tirx.PrimExpr | int | float) -> tirx.PrimExpr:
    return te.max(te.min(x, hi), lo)


def clamp_s8(x: tirx.PrimExpr, lo: int, hi: int) -> tirx.PrimExpr:
    """An int32 value clamped to [lo, hi] within the int8 range, as int8: saturation to
    int8 (one SSAT, utvm/kernels.h) and the activation bounds that remain."""
    v = tirx.call_pure_extern(I32, "utvm_sat_s8", x)
    if hi < 127:
        v = te.min(v, hi)
    if lo > -128:
        v = te.max(v, lo)
    return v.astype("int8")


def sat_s16(x: tirx.PrimExpr) -> tirx.PrimExpr:
    """An int32 value saturated to the int16 range, still int32 (one SSAT, utvm/kernels.h)."""
    return tirx.call_pure_extern(I32, "utvm_sat_s16", x)


# ---------------------------------------------------------------------------------------
# quantization helpers


def activation_range_int8(act: str, scale: float, zero_point: int) -> tuple[int, int]:
    """TFLite's CalculateActivationRangeQuantized for int8 outputs."""
    return activation_range_quantized(act, scale, zero_point, -128, 127)


def activation_range_quantized(act: str, scale: float, zero_point: int, lo: int, hi: int) -> tuple[int, int]:
    """TFLite's CalculateActivationRangeQuantized for outputs of the type whose range is [lo, hi]."""

    def q(v: float) -> int:
        return zero_point + int(fp.tflite_round(v / scale))

    if act == "relu":
        lo = max(lo, q(0.0))
    elif act == "relu6":
        lo, hi = max(lo, q(0.0)), min(hi, q(6.0))
    elif act == "relu_n1_to_1":
        lo, hi = max(lo, q(-1.0)), min(hi, q(1.0))
    return lo, hi


def activation_range_float(act: str) -> tuple[float, float]:
    return {"none": (-math.inf, math.inf), "relu": (0.0, math.inf), "relu6": (0.0, 6.0),
            "relu_n1_to_1": (-1.0, 1.0)}[act]


def float_clamp(x: tirx.PrimExpr, act: str) -> tirx.PrimExpr:
    lo, hi = activation_range_float(act)
    if hi != math.inf:
        x = te.min(x, imm(hi, "float32"))
    if lo != -math.inf:
        x = te.max(x, imm(lo, "float32"))
    return x


@dataclass
class Requant:
    """Bias and requantization of an int8 layer: kernel args, and per output channel ``o``
    the expressions (bias, multiplier, shift)."""

    args: list[KernelArg]
    at: Callable[[tirx.PrimExpr], tuple[tirx.PrimExpr, tirx.PrimExpr | int, tirx.PrimExpr | int]]
    #: every (acc + bias) * 2**left_shift stays below 2**30 in magnitude: cheap requantization
    small: bool = False
    #: every shift is <= 0 (a right shift only)
    right_only: bool = False
    #: every shift is < 0 (a right shift by at least one)
    right_positive: bool = False
    #: the third value of ``at`` is the right shift minus one (right_positive packed shifts)
    right_minus_one: bool = False
    #: (small only) every multiplier m is in [2**30, 2**31): the high product is one SMMLAR
    #: (utvm_srdhm2_small), per-channel multipliers stored as 2 * m mod 2**32
    doubled: bool = False

    def _high(self, a: tirx.PrimExpr, m: tirx.PrimExpr | int) -> tirx.PrimExpr:
        """SaturatingRoundingDoublingHighMul(a, m) for |a| < 2**30 (``m`` as ``at`` gives it)."""
        if not self.doubled:
            return tirx.call_pure_extern(I32, "utvm_srdhm_small", a, fp.c32(m))
        if isinstance(m, int):
            m = (2 * m) - (1 << 32)
        return tirx.call_pure_extern(I32, "utvm_srdhm2_small", a, fp.c32(m))

    def output_s8(self, acc: tirx.PrimExpr, o: tirx.PrimExpr, zy: int, lo: int, hi: int) -> tirx.PrimExpr:
        """The int8 output: MultiplyByQuantizedMultiplier(acc + bias[o], ...) + zy, clamped.

        With the cheap requantization and a right shift e >= 1, the rounding division by
        2**e and the output zero point take four instructions: y = x - (x < 0), then
        ((y >> (e - 1)) + 1 + 2 * zy) >> 1 (exact: see rounding_divide_by_pot_small), the last
        shift folded into the saturation (SSAT's shifted operand)."""
        bias_o, m, s = self.at(o)
        if self.small and (self.right_minus_one or (isinstance(s, int) and s < 0)):
            right_m1: tirx.PrimExpr | int = s if self.right_minus_one else -s - 1
            high = self._high(acc + bias_o, m)
            y = high + (high >> imm(31))
            q = y if isinstance(right_m1, int) and right_m1 == 0 else y >> fp.c32(right_m1)
            v = tirx.call_pure_extern(I32, "utvm_sat_s8", (q + imm(1 + 2 * zy)) >> imm(1))
            if hi < 127:
                v = te.min(v, hi)
            if lo > -128:
                v = te.max(v, lo)
            return v.astype("int8")
        return clamp_s8(self.apply(acc, o) + zy, lo, hi)

    def apply(self, acc: tirx.PrimExpr, o: tirx.PrimExpr) -> tirx.PrimExpr:
        """MultiplyByQuantizedMultiplier(acc + bias[o], multiplier[o], shift[o])."""
        assert not self.right_minus_one
        bias_o, m, s = self.at(o)
        x = acc + bias_o
        if not self.small:
            return fp.multiply_by_quantized_multiplier(x, m, s)
        if isinstance(s, int):
            a = x * (1 << s) if s > 0 else x
            right: tirx.PrimExpr | int = max(-s, 0)
        elif self.right_only:
            a, right = x, imm(0) - s
        else:
            a, right = fp.shift_left_wrap(x, tirx.max(s, imm(0))), tirx.max(imm(0) - s, imm(0))
        high = self._high(a, m)
        return rounding_divide_by_pot_small(high, right, self.right_positive)


def rounding_divide_by_pot_small(x: tirx.PrimExpr, e: tirx.PrimExpr | int, positive: bool = False) -> tirx.PrimExpr:
    """gemmlowp RoundingDivideByPOT(x, e) for |x| < 2**30 (x + 2**(e-1) cannot overflow):
    floor((x + 2**(e-1) - (x < 0)) / 2**e), which rounds half away from zero as gemmlowp does.
    ``positive``: e >= 1 for sure."""
    if isinstance(e, int):
        if e == 0:
            return x
        return (x + (imm(1 << (e - 1)) + (x >> imm(31)))) >> imm(e)
    if positive:
        return (x + ((imm(1) << e >> imm(1)) + (x >> imm(31)))) >> e
    mask = (imm(1) << e) - imm(1)
    # the offset is 2**(e-1) - (x < 0) for e >= 1 and must be 0 for e == 0: masked by 2**e - 1
    offset = ((imm(1) << e >> imm(1)) + (x >> imm(31))) & mask
    return (x + offset) >> e


def acc_bound(weights_abs_sum: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """Largest |acc + folded bias| per output channel: sum((x - zx) * w) + bias with
    |x - zx| <= 255 (padding contributes zx - zx = 0)."""
    return 255 * weights_abs_sum.astype(np.int64) + np.abs(bias.astype(np.int64))


#: bits of a packed bias word that hold the right shift (see bias_requant)
SHIFT_BITS = 5


def requant_constants(folded: np.ndarray, scales: np.ndarray, channels: int, bound: np.ndarray | None,
                      dead: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """(folded biases, multipliers, shifts, bound) of a layer: QuantizeMultiplier of each scale
    (one value for per-tensor scales), the channels whose weights are all zero (``dead``, with a
    ``bound``) given a small equivalent bias (see :func:`bias_requant`)."""
    if folded.size != channels:
        raise UtvmError(f"bias of {folded.size} values for {channels} channels")
    pairs = [fp.quantize_multiplier(float(v)) for v in scales]
    mults = np.array([m for m, _ in pairs], dtype=np.int64)
    shifts = np.array([sh for _, sh in pairs], dtype=np.int64)
    if mults.size not in (1, channels):
        raise UtvmError(f"per-channel scales ({mults.size}) do not match {channels} channels")
    if bound is not None and dead is not None and mults.size == channels and np.any(dead):
        folded, mults, shifts, bound = dead_channels(folded, mults, shifts, bound, dead)
    return folded, mults, shifts, bound


def bias_requant(folded: np.ndarray, scales: np.ndarray, channels: int, bound: np.ndarray | None = None,
                  dead: np.ndarray | None = None, dsp: bool = False) -> Requant:
    """Constants of a layer's bias and per-channel requantization, kept small for flash.

    Per-tensor values become immediates. Per-channel multipliers are an int32 array; per-channel
    right shifts (0..31) are packed into the low bits of the bias words when every bias fits
    in the remaining bits, otherwise they are a separate int8 array.

    ``bound`` (per channel, see :func:`acc_bound`), when known, enables the cheaper
    requantization. ``dead`` marks the channels whose weights are all zero: their output is
    a constant, requantized from a small bias instead (pruned channels often have biases
    near 2**30, which would rule the cheaper requantization out for the whole layer).
    ``dsp``: the target has the DSP extension (SMMLAR), see :attr:`Requant.doubled`.
    """
    folded, mults, shifts, bound = requant_constants(folded, scales, channels, bound, dead)
    bp = te.placeholder((channels,), I32, name="bias")
    args: list[KernelArg] = []
    limit = 1 << (31 - SHIFT_BITS)
    packable = bool(np.all(shifts <= 0) and np.all(-shifts < (1 << SHIFT_BITS))
                    and np.all(folded < limit) and np.all(folded >= -limit))
    uniform_m = bool(np.all(mults == mults[0]))
    small = bound is not None and bool(np.all((bound << np.maximum(shifts, 0)) < (1 << 30)))
    doubled = dsp and small and bool(np.all((mults >= (1 << 30)) & (mults < (1 << 31))))
    if uniform_m:
        m_at: Callable[[tirx.PrimExpr], tirx.PrimExpr | int] = lambda o: int(mults[0])  # noqa: E731
    else:
        mp = te.placeholder((channels,), I32, name="mult")
        stored = 2 * mults - (1 << 32) if doubled else mults
        args.append(KernelArg(mp, constant=stored.astype(np.int32), role="mult"))
        m_at = lambda o: mp[o]  # noqa: E731
    rq = _bias_requant_at(bp, args, m_at, folded, shifts, small, packable)
    rq.doubled = doubled
    return rq


def dead_channels(folded: np.ndarray, mults: np.ndarray, shifts: np.ndarray, bound: np.ndarray,
                  dead: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(folded bias, multiplier, shift, accumulator bound) per channel with the channels whose
    weights are all zero (``dead``) requantized from a small bias: their accumulator is 0, the
    output is clamp(v + zy) with v the requantized bias; v clipped to +-255 gives the same
    clamped output for any zero point, and v = MBQM(4v, 2**30, -1)."""
    v = np.clip(fp.np_multiply_by_quantized_multiplier(folded[dead], mults[dead], shifts[dead]), -255, 255)
    folded, mults, shifts, bound = folded.copy(), mults.copy(), shifts.copy(), bound.copy()
    folded[dead], mults[dead], shifts[dead], bound[dead] = 4 * v, 1 << 30, -1, np.abs(4 * v)
    return folded, mults, shifts, bound


def _bias_requant_at(bp: te.Tensor, args: list[KernelArg], m_at: Callable[[tirx.PrimExpr], tirx.PrimExpr | int],
                     folded: np.ndarray, shifts: np.ndarray, small: bool, packable: bool) -> Requant:
    """The bias and shift part of :func:`bias_requant`."""
    channels = folded.size
    if bool(np.all(shifts == shifts[0])):
        args.insert(0, KernelArg(bp, constant=folded.astype(np.int32), role="bias"))
        return Requant(args, lambda o: (bp[o], m_at(o), int(shifts[0])), small)
    if packable:
        mask = (1 << SHIFT_BITS) - 1
        if small and np.all(shifts < 0):
            # right shifts >= 1 stored minus one (see Requant.output_s8)
            words = (folded << SHIFT_BITS) | (-shifts - 1)
            args.insert(0, KernelArg(bp, constant=words.astype(np.int32), role="bias_shift"))
            return Requant(args, lambda o: (bp[o] >> SHIFT_BITS, m_at(o), bp[o] & mask), small, True, True,
                            right_minus_one=True)
        words = (folded << SHIFT_BITS) | (-shifts)
        args.insert(0, KernelArg(bp, constant=words.astype(np.int32), role="bias_shift"))
        return Requant(args, lambda o: (bp[o] >> SHIFT_BITS, m_at(o), imm(0) - (bp[o] & mask)), small, True,
                        bool(np.all(shifts < 0)))
    sp = te.placeholder((channels,), "int8", name="shift")
    args.insert(0, KernelArg(bp, constant=folded.astype(np.int32), role="bias"))
    args.append(KernelArg(sp, constant=shifts.astype(np.int8), role="shift"))
    return Requant(args, lambda o: (bp[o], m_at(o), sp[o].astype(I32)), small)


def effective_scales(x: Tensor, w: Tensor, y: Tensor, in_double: bool) -> np.ndarray:
    """input_scale * filter_scale[c] / output_scale, computed as TFLite Micro does: in double
    for convolutions, with a float32 product for per-tensor fully connected layers."""
    assert x.quant is not None and w.quant is not None and y.quant is not None
    xs, _ = x.quant.scalar()
    ys, _ = y.quant.scalar()
    return np.array([fp.conv_real_multiplier(xs, float(ws), ys, in_double) for ws in w.quant.scale])



def scale_const(x: tirx.PrimExpr, m: int, shift: int, bound: int) -> tirx.PrimExpr:
    """MultiplyByQuantizedMultiplier(x, m, shift) for constants m and shift, given |x| <= bound:
    SMMULR and a branch-free rounding shift when x * 2**max(shift, 0) stays below 2**30, the
    general form otherwise."""
    if bound << max(shift, 0) >= 1 << 30:
        return fp.multiply_by_quantized_multiplier(x, m, shift)
    a = x * (1 << shift) if shift > 0 else x
    high = tirx.call_pure_extern(I32, "utvm_srdhm_small", a, fp.c32(m))
    return rounding_divide_by_pot_small(high, max(-shift, 0))

