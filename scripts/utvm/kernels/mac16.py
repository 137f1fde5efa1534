"""16x8 multiply-accumulate kernels (int16 activations, int8 weights): what the 16x8 variants of
conv2d, depthwise_conv2d, fully_connected and transpose_conv share.

TFLite Micro sums 16x8 products in int64 (in int32 with an int32 bias). With the int8 weights
known at compile time, |sum| <= 32768 x sum|w| per output channel: where that (plus the bias)
stays below 2**31, the int64 sums are exact in int32, and TFLite's int64
MultiplyByQuantizedMultiplier, (x * reduced + 2**(t-1)) >> t with the multiplier rounded to 15
bits and t = 15 - shift, is one rounded high multiply (utvm_mulhr_s32: SMMULR; VRMULH on Helium)
by reduced << (32 - t) when 16 <= t <= 32 (multiplying the numerator and the divisor by
2**(32 - t) changes nothing): :func:`short_int64_requant`.

:class:`Rows` lays a weight matrix (channels x depth) out for the dot-product helpers of
utvm/kernels.h (utvm_mac4_s16, DSP) or utvm/kernels_mve.h (utvm_mve_mac4_s16, Helium): four
channels at a time, the depth split into segments (a kernel row, a kernel tap, or a piece of at
most SEGMENT_MAX inputs), one helper call each; also for int8 inputs (utvm_mac4_u_s8,
utvm_mve_mac4_s8: the gate and feature FCs of the recurrent layers).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from tvm import te, tirx

from .requant import I32, imm
from .schedules import loop, seq, to_tir
from .target import Target

#: the largest |int16 input|
INPUT_BOUND = 32768
#: products per helper call at most: each |x * w| <= 2**22, so 511 of them stay below 2**31
SEGMENT_MAX = 511
#: output channels per helper call
BLOCK = 4


def short_int64_requant(mults: np.ndarray, shifts: np.ndarray, wabs: np.ndarray,
                        bias: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(int32 biases, folded multipliers) per channel of the short form of TFLite's int64
    requantization (see the module), or None where it is not exact: a shift outside [-17, -1]
    or a sum that may not fit in int32. ``wabs``: sum|w| per channel, ``bias``: int64 values."""
    mults, shifts = np.asarray(mults, np.int64), np.asarray(shifts, np.int64)
    total = 15 - shifts
    bound = INPUT_BOUND * np.asarray(wabs, np.int64) + np.abs(np.asarray(bias, np.int64))
    if np.any(total < 16) or np.any(total > 32) or np.any(bound >= 1 << 31) or np.any(mults < 0):
        return None
    reduced = np.where(mults < 0x7FFF0000, (mults + (1 << 15)) >> 16, 0x7FFF)
    return np.asarray(bias, np.int64).astype(np.int32), (reduced << (32 - total)).astype(np.int32)


def segments(length: int) -> list[int]:
    """``length`` inputs as pieces of at most SEGMENT_MAX."""
    n = -(-length // SEGMENT_MAX)
    return [length // n + (1 if k < length % n else 0) for k in range(n)]


def _int16_words(w: np.ndarray) -> np.ndarray:
    """int16 values as their little-endian bytes (int8)."""
    return np.ascontiguousarray(w.astype("<i2")).view(np.int8).reshape(-1)


def _dsp_segment(sub: np.ndarray) -> np.ndarray:
    """One segment (BLOCK rows x L weights) for utvm_mac4_s16: per four inputs a word per row,
    bytes (w0, w2, w1, w3); the last L % 4 as int16 words per row, a pair then a single one."""
    rows, length = sub.shape
    n = length // 4
    parts = [sub[:, :4 * n].reshape(rows, n, 4)[:, :, [0, 2, 1, 3]].transpose(1, 0, 2).astype(np.int8).reshape(-1)]
    at = 4 * n
    if length % 4 >= 2:
        parts.append(_int16_words(sub[:, at:at + 2]))
        at += 2
    if length % 2:
        parts.append(_int16_words(np.stack([sub[:, at], np.zeros(rows, np.int64)], axis=1)))
    return np.concatenate(parts)


def _dsp_wide_segment(sub: np.ndarray) -> np.ndarray:
    """One segment for utvm_mac4w_s16: per four inputs two int16 words per row, (w0, w1) and
    (w2, w3); the tail as :func:`_dsp_segment`'s."""
    rows, length = sub.shape
    n = length // 4
    words = _int16_words(sub[:, :4 * n].reshape(rows, n, 4).transpose(1, 0, 2))
    return np.concatenate([words, _dsp_segment(sub[:, 4 * n:])])


def _mve_segment(sub: np.ndarray, group: int = 8) -> np.ndarray:
    """One segment for utvm_mve_mac4_s16 (``group`` 8) or utvm_mve_mac4_s8 (16): per ``group``
    inputs the rows' weights one after the other, the last group padded with zeros."""
    rows, length = sub.shape
    groups = -(-length // group)
    padded = np.zeros((rows, groups * group), np.int64)
    padded[:, :length] = sub
    return padded.reshape(rows, groups, group).transpose(1, 0, 2).astype(np.int8).reshape(-1)


def _dsp8_segment(sub: np.ndarray) -> np.ndarray:
    """One segment for utvm_mac4_u_s8 (a multiple of 4 inputs): per four inputs a word per row."""
    rows, length = sub.shape
    assert length % 4 == 0
    return sub.reshape(rows, length // 4, 4).transpose(1, 0, 2).astype(np.int8).reshape(-1)


#: (int8 inputs, Helium, weights widened to int16) -> (segment layout, helper)
_LAYOUTS: dict[tuple[bool, bool, bool], tuple[Callable[[np.ndarray], np.ndarray], str]] = {
    (False, False, False): (_dsp_segment, "utvm_mac4_s16"),
    (False, False, True): (_dsp_wide_segment, "utvm_mac4w_s16"),
    (False, True, False): (_mve_segment, "utvm_mve_mac4_s16"),
    (True, False, False): (_dsp8_segment, "utvm_mac4_u_s8"),
    (True, True, False): (lambda sub: _mve_segment(sub, 16), "utvm_mve_mac4_s8"),
}


@dataclass
class Rows:
    """A weight matrix laid out for the dot-product helpers of four rows (see the module)."""

    data: np.ndarray        # int8, blocks one after the other
    lengths: list[int]      # inputs of each segment
    offsets: list[int]      # byte offset of each segment in a block
    block: int              # bytes of one block of BLOCK channels
    helper: str             # the helper the calls take

    @classmethod
    def build(cls, w: np.ndarray, lengths: list[int], helium: bool, int8_inputs: bool = False,
              wide: bool = False) -> Rows:
        """``w``: channels x depth int8 weights, ``lengths``: the segments (summing to depth);
        the channels padded with zero rows to a multiple of BLOCK. The helpers: utvm_mac4_s16
        (``wide``: utvm_mac4w_s16, the weights widened to int16) / utvm_mve_mac4_s16 for int16
        inputs, utvm_mac4_u_s8 (segments of a multiple of 4 inputs) / utvm_mve_mac4_s8 for int8
        inputs."""
        channels, depth = w.shape
        assert sum(lengths) == depth
        layout, helper = _LAYOUTS[(int8_inputs, helium, wide and not helium and not int8_inputs)]
        blocks = -(-channels // BLOCK)
        padded = np.zeros((blocks * BLOCK, depth), np.int64)
        padded[:channels] = w
        starts = np.cumsum([0, *lengths])
        per_block = [np.concatenate([layout(padded[b * BLOCK:(b + 1) * BLOCK, starts[s]:starts[s + 1]])
                                     for s in range(len(lengths))]) for b in range(blocks)]
        sizes = [layout(np.zeros((BLOCK, n), np.int64)).size for n in lengths]
        offsets = [int(v) for v in np.cumsum([0, *sizes[:-1]])]
        return cls(np.concatenate(per_block), list(lengths), offsets, int(sum(sizes)), helper)

    def call(self, acc: tirx.PrimExpr, x: tirx.PrimExpr, w: tirx.Buffer, block: tirx.PrimExpr,
             segment: int) -> tirx.Stmt:
        """acc[c] += the dot product of the segment's inputs at address ``x`` with the segment's
        weights of channel block * BLOCK + c (``w``: the flat weight buffer)."""
        w_at = tirx.address_of(w[block * self.block + self.offsets[segment]])
        length = self.lengths[segment]
        n = length // 4 if self.helper == "utvm_mac4_u_s8" else length
        return tirx.Evaluate(tirx.call_extern(I32, self.helper, acc, x, w_at, imm(n)))


def mulhr(x: tirx.PrimExpr, m: tirx.PrimExpr | int) -> tirx.PrimExpr:
    """(x * m + 2**31) >> 32 (utvm_mulhr_s32)."""
    return tirx.call_pure_extern(I32, "utvm_mulhr_s32", x, imm(m) if isinstance(m, int) else m)


def dw4_weights(taps: np.ndarray) -> np.ndarray:
    """Depthwise weights (taps x channels, channels % BLOCK == 0) for utvm_dw4_pair_s16 and
    utvm_dw4_tap_s16, as int32 words: per block of BLOCK channels, per pair of taps (a, b) a
    word (w[a][c], w[b][c]) of int16 halves per channel, then for an odd last tap its BLOCK
    weights as int16 (two words)."""
    t, channels = taps.shape
    blocks = taps.astype(np.int64).reshape(t, channels // BLOCK, BLOCK).transpose(1, 0, 2)  # block, tap, lane
    pairs = blocks[:, :t - t % 2].reshape(channels // BLOCK, t // 2, 2, BLOCK).transpose(0, 1, 3, 2)
    parts = [pairs.reshape(channels // BLOCK, -1)]
    if t % 2:
        parts.append(blocks[:, t - 1])
    halves = np.concatenate(parts, axis=1).astype("<i2")
    return np.ascontiguousarray(halves).view("<i4").reshape(-1)


def even_odd(v: np.ndarray) -> np.ndarray:
    """Per-channel int32 values for utvm_mve_dw_row_s16: per block of eight channels the four even
    ones, then the four odd ones (zeros past the last channel)."""
    c8 = -(-v.size // 8) * 8
    padded = np.zeros(c8, np.int64)
    padded[:v.size] = v
    return np.ascontiguousarray(padded.reshape(c8 // 8, 4, 2).transpose(0, 2, 1)).reshape(-1).astype(np.int32)


def dw4_block_words(taps: int) -> int:
    """int32 words of one block in :func:`dw4_weights`."""
    return BLOCK * (taps // 2) + BLOCK // 2 * (taps % 2)


class Acc16:
    """The sums of one block of BLOCK channels of a layer with the Requant16 ``rq``: int32
    accumulators the helpers add into, starting from the bias (int32 sums), or, for TFLite's
    int64 sums that may not fit, int64 sums of each segment's int32 sum."""

    def __init__(self, rq: Any) -> None:
        self.rq = rq
        self.acc = tirx.decl_buffer((BLOCK,), I32, "acc")
        self.wide = tirx.decl_buffer((BLOCK,), "int64", "acc64") if rq.acc == "int64" else None
        #: the int32 sums start from the bias (one load instead of a load and an add)
        self.biased = self.wide is None and rq.bias is not None

    @property
    def buffers(self) -> list[tirx.Buffer]:
        return [self.acc] + ([self.wide] if self.wide is not None else [])

    def start(self, o0: tirx.PrimExpr, channels: int, bufs: dict[str, tirx.Var]) -> list[tirx.Stmt]:
        """The accumulators of the block from channel o0 set to their start (``channels``: the
        layer's)."""
        def first(k: int) -> tirx.PrimExpr:
            if not self.biased:
                return imm(0)
            bias = to_tir(self.rq.bias[o0 + k].astype(I32), bufs)
            if channels % BLOCK == 0 or k < channels % BLOCK:
                return bias
            return tirx.if_then_else(o0 + k < channels, bias, imm(0))

        return [tirx.BufferStore(self.acc, first(k), [k]) for k in range(BLOCK)]

    def sums(self, rows: Rows, w: tirx.Buffer, block: tirx.PrimExpr, channels: int, bufs: dict[str, tirx.Var],
             inputs: list[tuple[int, tirx.PrimExpr, tirx.PrimExpr | None]]) -> list[tirx.Stmt]:
        """The block's sums over segments: ``inputs`` lists (segment, address of its inputs,
        None or the condition under which it counts: a kernel tap inside the input)."""
        acc_at = tirx.address_of(self.acc[0])

        def when(cond: tirx.PrimExpr | None, stmts: list[tirx.Stmt]) -> list[tirx.Stmt]:
            return stmts if cond is None else [tirx.IfThenElse(cond, seq(stmts), None)]

        if self.wide is None:
            stmts = self.start(block * BLOCK, channels, bufs)
            for s, x, cond in inputs:
                stmts += when(cond, [rows.call(acc_at, x, w, block, s)])
            return stmts
        wide = self.wide
        stmts = [tirx.BufferStore(wide, tirx.const(0, "int64"), [k]) for k in range(BLOCK)]
        for s, x, cond in inputs:
            stmts += when(cond, [*self.start(block * BLOCK, channels, bufs), rows.call(acc_at, x, w, block, s),
                                 *(tirx.BufferStore(wide, wide[k] + self.acc[k].astype("int64"), [k])
                                   for k in range(BLOCK))])
        return stmts

    def store(self, o0: tirx.PrimExpr, channels: int, bufs: dict[str, tirx.Var],
              store: Callable[[tirx.PrimExpr, tirx.PrimExpr], tirx.Stmt]) -> list[tirx.Stmt]:
        """Requantize the block's sums and store each with ``store(channel, value)`` (only the
        channels below ``channels``)."""
        values = [self.acc[k] if self.wide is None else self.wide[k] for k in range(BLOCK)]
        return [guard(o0 + k, channels, k, store(o0 + k, to_tir(self.rq.output(v, o0 + k, not self.biased), bufs)))
                for k, v in enumerate(values)]


def over_blocks(channels: int, body: Callable[[tirx.PrimExpr], tirx.Stmt]) -> tirx.Stmt:
    """``body(block)`` for every block of BLOCK channels, in one loop: a copy of the body for a
    last partial block would let TVM's common subexpression elimination reuse the first copy's
    loads of the accumulators across the helper calls that change them. The stores guard the
    channels past ``channels`` (:func:`guard`)."""
    return loop(-(-channels // BLOCK), "oo", body)


def guard(o: tirx.PrimExpr, channels: int, k: int, stmt: tirx.Stmt) -> tirx.Stmt:
    """``stmt`` for channel o = block * BLOCK + k, only where o < channels when the last block is
    partial (k >= channels % BLOCK)."""
    if channels % BLOCK == 0 or k < channels % BLOCK:
        return stmt
    return tirx.IfThenElse(o < channels, stmt, None)


def signature(shape: tuple[int, ...], x: te.Tensor) -> te.Tensor:
    """An int16 output of ``shape`` standing for the kernel in TE: it gives the kernel's signature
    only, the body is written in TIR (root_schedule)."""
    return te.compute(shape, lambda *i: x[(0,) * len(x.shape)].astype("int16"), name="out")


#: a kernel builder (graph, operator, target) -> kernel or None
Builder = Callable[[Any, Any, Target], Any]


def on_helium(build: Builder) -> Builder:
    """``build`` for Helium CPUs only (the helium_int16 variants)."""
    return lambda g, op, target: build(g, op, target) if target.helium else None


def on_dsp(build: Builder) -> Builder:
    """``build`` for the 4-lane DSP CPUs only (the dsp_int16 variants)."""
    return lambda g, op, target: build(g, op, target) if target.dsp else None
