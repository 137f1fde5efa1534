"""Short-window int8 convolutions of one input channel on DSP CPUs: one naked assembly function
generated per layer (kernels/conv_dsp_short.h).

A convolution of one input channel with a small window (3x3: nine taps) spends most of
kernels_dsp.h's instructions on what surrounds its products: gathering each pixel's patch into
scratch, padding K to whole quads (six pairs for nine taps), entering an unrolled body by a
computed jump, reloading the clamp per block. Here the shape, the channels' right shifts and the
clamp are known at compile time (as in ``lower/tiny.py``, whose per-row code this reuses):

- utvm_dsp_short_conv copies the kh input rows of an output row into scratch (kh x wp bytes, the
  padding the zero point) and calls the layer's function for the row's pixels;
- per pixel the window's taps straight into P = ceil(K / 2) registers of int16 pairs: per window
  row, taps s and s + 2 by one LDR and SXTB16 (and s + 1, s + 3 by SXTB16 ROR 8 when four
  remain), the other taps paired by LDRSB, LDRSB, PKHBT (a last odd one alone);
- per output channel (unrolled) the stream's words (``tiny.stream``: 2 * folded bias, the P
  doubled weight pairs, m, c) by LDM into the free registers, one SMLAD per pair, SMMLAR, the
  sign fix-up, SSAT/USAT with the shift as an immediate, the clamp (a ReLU of a nonzero zero
  point as SSAT, CMP, MOVLT: :func:`lo_by_compare`), STRB: TFLite's arithmetic
  (kernels_dsp.h), exact under :func:`utvm.kernels.dsp.gemm_requant`'s conditions.

Stream: 4 (P + 3) bytes per output channel, at most what dsp_gemm's int8 stream takes for the same
layer (4 (kq + 5) bytes per channel, two channels per block), so flash does not grow; code: about
13 instructions (50 bytes) per output channel. Without the DSP extension in Thumb-2 (host builds)
the function is utvm_dsp_short_rows, plain C over the same stream.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from . import tiny
from .dsp import GemmRequant, Geometry

#: the most output channels (the code is unrolled per channel: about 50 bytes each, 4.8 KB at 96)
MAX_COUT = 96
#: the most pairs per pixel (five in registers leave six for the stream's words)
MAX_PAIRS = 5
#: pairs and the stream's words share these (r0 outputs, r1 the window, r2 the stream)
POOL = tiny.POOL


#: the largest offset of a load (LDR/LDRSB's 12-bit immediate)
MAX_OFFSET = 4095


def applies(geo: Geometry) -> bool:
    """One input channel, no dilation, at most 2 MAX_PAIRS taps and MAX_COUT channels, every tap
    of a window within MAX_OFFSET bytes of its first (a word read at the last one)."""
    return (geo.cin == 1 and geo.dh == geo.dw == 1 and geo.kh * geo.kw <= 2 * MAX_PAIRS
            and geo.cout <= MAX_COUT and (geo.kh - 1) * row_bytes(geo) + geo.kw + 3 <= MAX_OFFSET)


def row_bytes(geo: Geometry) -> int:
    """wp: the bytes of a window row copied per output row (the padded columns the row reads)."""
    return (geo.ow - 1) * geo.sw + geo.kw


def scratch_words(geo: Geometry) -> int:
    return -(-(geo.kh * row_bytes(geo) + 4) // 4)


@dataclass(frozen=True)
class Pair:
    """One register: taps ``lo`` and ``hi`` (byte offsets in the window, hi -1: none); ``word``:
    loaded by LDR + SXTB16 (lo and hi two bytes apart, ``odd``: the SXTB16 ROR 8 of the same word)."""

    lo: int
    hi: int
    word: bool = False
    odd: bool = False


def pairs(geo: Geometry) -> list[Pair]:
    """The window's taps as pairs: per row, runs of four taps as two word pairs, three as a word
    pair and a single, then the singles two by two (a last odd one alone)."""
    wp = row_bytes(geo)
    out: list[Pair] = []
    singles: list[int] = []
    for r in range(geo.kh):
        s = 0
        while geo.kw - s >= 3:
            at = r * wp + s
            out.append(Pair(at, at + 2, word=True))
            if geo.kw - s >= 4:
                out.append(Pair(at + 1, at + 3, word=True, odd=True))
                s += 4
            else:
                singles.append(at + 1)
                s += 3
        singles += [r * wp + t for t in range(s, geo.kw)]
    out += [Pair(singles[k], singles[k + 1]) for k in range(0, len(singles) - 1, 2)]
    if len(singles) % 2:
        out.append(Pair(singles[-1], -1))
    return out


def weights(geo: Geometry, wmat: np.ndarray) -> np.ndarray:
    """The weights (cout x window, (row, column) order) in the columns of tiny.stream's pair order
    (``tiny._pairs`` of a row of K inputs) that put each of :func:`pairs`' taps in its pair's half."""
    k = geo.kh * geo.kw
    wp = row_bytes(geo)
    tap = {r * wp + s: r * geo.kw + s for r in range(geo.kh) for s in range(geo.kw)}
    out = np.zeros((wmat.shape[0], k), np.int64)
    for (lo, hi), p in zip(tiny._pairs(np.zeros(k)), pairs(geo), strict=True):
        out[:, lo] = wmat[:, tap[p.lo]]
        if hi >= 0:
            out[:, hi] = wmat[:, tap[p.hi]]
    return out


def _load(ps: list[Pair], regs: list[str], tmp: str) -> list[str]:
    code: list[str] = []
    k = 0
    while k < len(ps):
        p, reg = ps[k], regs[k]
        if p.word:
            odd = k + 1 < len(ps) and ps[k + 1].odd
            code.append(f"ldr {reg}, [r1, #{p.lo}]")
            if odd:
                code.append(f"sxtb16 {regs[k + 1]}, {reg}, ror #8")
            code.append(f"sxtb16 {reg}, {reg}")
            k += 2 if odd else 1
            continue
        code.append(f"ldrsb {reg}, [r1, #{p.lo}]")
        if p.hi >= 0:
            code += [f"ldrsb {tmp}, [r1, #{p.hi}]", f"pkhbt {reg}, {reg}, {tmp}, lsl #16"]
        k += 1
    return code


def lo_by_compare(lo: int, hi: int) -> bool:
    """A lower clamp alone (hi 127, lo not 0) costs one instruction less as SSAT then a compare
    and a conditional move (the constants c holding zy) than as dsp_tiny's USAT, compare, move
    and ADD of lo (c holding zy - lo): ReLU of a nonzero output zero point."""
    return -128 < lo != 0 and hi == 127


def bytes_clamp(lo: int, hi: int, cout: int) -> bool:
    """A lower clamp whose outputs cost at least five instructions each (SSAT, CMP, IT, MOV and the
    STRB; or USAT, the compare of the upper bound and the STRB) clamps four outputs at once as
    bytes (tiny.TinyFc._pack: USAT per output, then 10 instructions per four, and one register
    fewer for the stream's words), the constants c holding zy - lo. Not where hi - lo is 2**n - 1
    (USAT alone, then the STRB and an ADD of a nonzero lo)."""
    if lo == -128 or cout < 2:
        return False
    span = hi - lo
    return lo_by_compare(lo, hi) or span != (1 << max(1, span.bit_length())) - 1


class _Row(tiny.TinyFc):
    def _bytes(self) -> bool:
        return bytes_clamp(self.lo, self.hi, self.units)

    def _clamp(self, v: str, e: int) -> list[str]:
        lo = self.lo
        if not lo_by_compare(lo, self.hi):
            return super()._clamp(v, e)
        cmp = f"cmp {v}, #{lo}" if lo >= 0 else f"cmn {v}, #{-lo}"
        mov = f"movlt {v}, #{lo}" if lo >= 0 else f"mvnlt {v}, #{-lo - 1}"
        return [f"ssat {v}, #8, {v}, asr #{e}", cmp, "it lt", mov]


def assembly(geo: Geometry, rights: tuple[int, ...], lo: int, hi: int) -> list[str]:
    """The layer's utvm_dsp_short_fn: r0 outputs, r1 the window of the first pixel, r2 the
    stream, r3 the pixels."""
    ps = pairs(geo)
    layer = _Row(1, geo.kh * geo.kw, geo.cout, rights, lo, hi)
    regs = sorted(POOL[:len(ps)], key=tiny._number)
    free = sorted([r for r in POOL if r not in regs], key=tiny._number)
    t = free[0]
    return (["push {r4, r5, r6, r7, r8, r9, r10, r11, lr}", "sub sp, sp, #8", "strd r3, r2, [sp]", "1:"]
            + _load(ps, regs, t) + [f"add r1, r1, #{geo.sw}"]
            + layer._row(0, regs, free)
            + [f"add r0, r0, #{geo.cout}", f"ldrd {t}, r2, [sp]", f"subs {t}, {t}, #1", f"str {t}, [sp]", "bne 1b",
               "add sp, sp, #8", "pop {r4, r5, r6, r7, r8, r9, r10, r11, pc}"])


def stream(geo: Geometry, wmat: np.ndarray, rq: GemmRequant, zy: int, lo: int, hi: int) -> np.ndarray:
    return tiny.stream(weights(geo, wmat), rq, zy, -128 if _compared(lo, hi, geo.cout) else lo)


def _compared(lo: int, hi: int, cout: int) -> bool:
    """The lower clamp by a compare after SSAT (the constants c holding zy)."""
    return lo_by_compare(lo, hi) and not bytes_clamp(lo, hi, cout)


def source(geo: Geometry, rights: tuple[int, ...], zx: int, lo: int, hi: int) -> tuple[str, str]:
    """The name and C source of the layer's entry point ``name(y, x, stream, scratch)``."""
    lines = assembly(geo, rights, lo, hi)
    ps = pairs(geo)
    wp = row_bytes(geo)
    geometry = [geo.n, geo.h, geo.w, geo.oh, geo.ow, geo.cout, geo.kh, geo.sh, geo.top, geo.left, wp, zx]
    digest = hashlib.sha256(("\n".join(lines) + repr(geometry)).encode()).hexdigest()[:16]
    name = f"utvm_dsp_short_{digest}"
    body = "\n".join(f'      "{line}\\n"' for line in lines)
    unused = "__attribute__((unused))"
    taps = ", ".join(f"{p.lo}, {p.hi}" for p in ps)
    args = ", ".join(str(v) for v in geometry)
    src = (f"#ifdef UTVM_DSP_ASM\n"
           f"__attribute__((naked, noinline)) static void {name}_px({unused} int8_t* y, {unused} const int8_t* x, "
           f"{unused} const int32_t* w, {unused} int32_t np) {{\n"
           f"  __asm__ volatile(\n{body});\n}}\n"
           f"#else\n"
           f"static void {name}_px(int8_t* y, const int8_t* x, const int32_t* w, int32_t np) {{\n"
           f"  static const int16_t taps[] = {{{taps}}};\n"
           f"  utvm_dsp_short_rows(y, x, w, np, taps, {len(ps)}, {geo.cout}, {geo.sw}, {lo}, {hi}, "
           f"{0 if _compared(lo, hi, geo.cout) else 1});\n}}\n"
           f"#endif\n"
           f"static int32_t {name}(void* y, void* x, void* w, void* rows) {{\n"
           f"  return utvm_dsp_short_conv(y, x, w, rows, {args}, {name}_px);\n}}\n")
    return name, src
