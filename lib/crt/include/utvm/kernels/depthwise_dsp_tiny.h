/* utvm/kernels/depthwise_dsp_tiny.h: moved from kernels.h by the split of issue 24 (one header per
 * operator family and instruction set, the bodies unchanged). */
#ifndef UTVM_KERNELS_DEPTHWISE_DSP_TINY_H_
#define UTVM_KERNELS_DEPTHWISE_DSP_TINY_H_

#include "common.h"
#include "depthwise_dsp.h"


/*
 * Depthwise 3x3 convolutions of tiny output maps (the dsp_dwt variant): utvm_dwt_s8.
 *
 * For at most 4x4 outputs (strides 1 or 2, multiplier 1) each output position is its own case:
 * only the taps that fall on the input are converted and multiplied (a tap on the padding is
 * neither), and the zero point of the input is folded at compile time into one bias word per
 * output position and channel (ops/depthwise_conv2d.py, _dwt_records), so that no padding is
 * filled and no zero point handled at run time. The input is converted four channels at a time
 * into planes of pair words (x_2k, x_2k+1) (plane of channel g of the group at sc + g h pw,
 * pw = (w + 1) / 2 words a row, the high half of a row's last word undefined for w odd); then
 * each channel runs straight-line over its outputs (the loops over positions and taps unroll
 * and fold where the layer's constants are immediates): an aligned pair of real taps is one
 * SMLAD, a single one an SMLAxy on the halves. Record of channel o at rec + o (10 + oh ow)
 * words: E_ky = (w_ky0, w_ky1) for ky = 0..2, T = (w_02, w_12), O_ky = (w_ky1, w_ky2) for
 * ky = 0..2 (scaled as dsp_dwp's), m, r, e, then the bias of each output position;
 * requantization as utvm_dwp_rq (shift > 0: the layer's shift of the channels with e < 0).
 * Input pixel (r, c) channel k at x + (r w + c) cin + k, output (i, j) channel o at
 * y + (i ow + j) cin + o. With DSP, stride 2 from a 6-wide input to 3-wide outputs (VWW's
 * 6x6 -> 3x3) runs in assembly (utvm_dwt3_asm): an output row at a time, three accumulators,
 * each plane word loaded once (LDRD and LDR a kernel row), 95 instructions for a channel's 81
 * multiply-accumulates of which 64 are real, with their requantization (the layer's shift).
 */
#if defined(__ARM_FEATURE_SIMD32) && __ARM_FEATURE_SIMD32
#define UTVM_DWT_SMLABB(a, b, c) __smlabb((a), (b), (c))
#define UTVM_DWT_SMLATT(a, b, c) __smlatt((a), (b), (c))
#else
#define UTVM_DWT_SMLABB(a, b, c) ((int32_t)((uint32_t)(c) + (uint32_t)(UTVM_DWP_LO(a) * UTVM_DWP_LO(b))))
#define UTVM_DWT_SMLATT(a, b, c) ((int32_t)((uint32_t)(c) + (uint32_t)(UTVM_DWP_HI(a) * UTVM_DWP_HI(b))))
#endif

/* acc plus one tap: the half xh (0 low, 1 high) of the pair word xw times the half wh of ww */
UTVM_DWP_AI int32_t utvm_dwt_tap(int32_t acc, int32_t xw, int32_t xh, int32_t ww, int32_t wh) {
  if (xh) return wh ? UTVM_DWT_SMLATT(xw, ww, acc) : UTVM_DWP_SMLATB(xw, ww, acc);
  return wh ? UTVM_DWP_SMLABT(xw, ww, acc) : UTVM_DWT_SMLABB(xw, ww, acc);
}

/* acc plus the taps of a kernel row (weights E, O) at columns c0, c0 + 1, c0 + 2 of the plane
 * row pr, those on the input only: an aligned pair of them one SMLAD */
UTVM_DWP_AI int32_t utvm_dwt_row(int32_t acc, const int32_t* pr, int32_t we, int32_t wo, int32_t c0, int32_t w) {
  const int32_t ok0 = c0 >= 0 && c0 < w, ok1 = c0 + 1 >= 0 && c0 + 1 < w, ok2 = c0 + 2 >= 0 && c0 + 2 < w;
  if (ok0 && ok1 && (c0 & 1) == 0) {
    acc = UTVM_DWP_SMLAD(pr[c0 / 2], we, acc);
    if (ok2) acc = utvm_dwt_tap(acc, pr[(c0 + 2) / 2], 0, wo, 1);
  } else if (ok1 && ok2 && (c0 & 1) != 0) {
    if (ok0) acc = utvm_dwt_tap(acc, pr[c0 / 2], 1, we, 0);
    acc = UTVM_DWP_SMLAD(pr[(c0 + 1) / 2], wo, acc);
  } else {
    if (ok0) acc = utvm_dwt_tap(acc, pr[c0 / 2], c0 & 1, we, 0);
    if (ok1) acc = utvm_dwt_tap(acc, pr[(c0 + 1) / 2], (c0 + 1) & 1, we, 1);
    if (ok2) acc = utvm_dwt_tap(acc, pr[(c0 + 2) / 2], (c0 + 2) & 1, wo, 1);
  }
  return acc;
}

/* the outputs of one channel over its plane pl with its record rc and the shift e: the weights
 * and (m, r) read first, every accumulator before the first store (int8 stores may alias) */
UTVM_DWP_AI void utvm_dwt_chan(int8_t* y, const int32_t* pl, const int32_t* rc, int32_t e, int32_t h, int32_t w,
                               int32_t cout, int32_t oh, int32_t ow, int32_t sh, int32_t sw, int32_t top,
                               int32_t left, int32_t flags, int32_t lo, int32_t hi) {
  int32_t wv[7], acc[16], i, j, ky;
  const int32_t pw = (w + 1) / 2, m = rc[7], r = rc[8];
  UTVM_DWP_UNROLL
  for (i = 0; i < 7; ++i) wv[i] = rc[i];
  UTVM_DWP_UNROLL
  for (i = 0; i < oh; ++i) {
    UTVM_DWP_UNROLL
    for (j = 0; j < ow; ++j) {
      int32_t a = rc[10 + i * ow + j];
      UTVM_DWP_UNROLL
      for (ky = 0; ky < 3; ++ky) {
        const int32_t iy = i * sh + ky - top;
        if (iy >= 0 && iy < h) a = utvm_dwt_row(a, pl + iy * pw, wv[ky], wv[4 + ky], j * sw - left, w);
      }
      acc[i * ow + j] = a;
    }
  }
  UTVM_DWP_UNROLL
  for (i = 0; i < oh * ow; ++i) y[i * cout] = (int8_t)utvm_dwp_rq(acc[i], m, r, e, flags, lo, hi);
}

#ifdef UTVM_DWP_ASM
/* the planes of four channels of a 6-wide input of h rows (words cin bytes apart): per row two
 * pairs of pair words stored by STRD a channel, then the third pair (32 instructions a row) */
UTVM_DWP_AI void utvm_dwt_conv6(int32_t* d, const int8_t* px, int32_t h, int32_t cin, int32_t ps) {
  int32_t a, b, c, e, t, u;
  __asm__ volatile(
      ".set .Lutvm_dwt_r, 0\n\t"
      ".rept %c[h]\n\t"
      "ldr %[a], [%[px]]\n\tldr %[b], [%[px], #%c[cs]]\n\t"
      "ldr %[c], [%[px], #2*%c[cs]]\n\tldr %[e], [%[px], #3*%c[cs]]\n\t"
      "pkhbt %[t], %[a], %[b], lsl #16\n\tpkhtb %[b], %[b], %[a], asr #16\n\t"
      "pkhbt %[a], %[c], %[e], lsl #16\n\tpkhtb %[e], %[e], %[c], asr #16\n\t"
      "sxtb16 %[c], %[t]\n\tsxtb16 %[u], %[a]\n\tstrd %[c], %[u], [%[d], #.Lutvm_dwt_r]\n\t"
      "sxtb16 %[c], %[t], ror #8\n\tsxtb16 %[u], %[a], ror #8\n\tstrd %[c], %[u], [%[d], #.Lutvm_dwt_r+4*%c[ps]]\n\t"
      "sxtb16 %[c], %[b]\n\tsxtb16 %[u], %[e]\n\tstrd %[c], %[u], [%[d], #.Lutvm_dwt_r+8*%c[ps]]\n\t"
      "sxtb16 %[c], %[b], ror #8\n\tsxtb16 %[u], %[e], ror #8\n\tstrd %[c], %[u], [%[d], #.Lutvm_dwt_r+12*%c[ps]]\n\t"
      "ldr %[a], [%[px], #4*%c[cs]]\n\tldr %[b], [%[px], #5*%c[cs]]\n\t"
      "pkhbt %[t], %[a], %[b], lsl #16\n\tpkhtb %[b], %[b], %[a], asr #16\n\t"
      "sxtb16 %[a], %[t]\n\tsxtb16 %[t], %[t], ror #8\n\t"
      "str %[a], [%[d], #.Lutvm_dwt_r+8]\n\tstr %[t], [%[d], #.Lutvm_dwt_r+8+4*%c[ps]]\n\t"
      "sxtb16 %[a], %[b]\n\tsxtb16 %[b], %[b], ror #8\n\t"
      "str %[a], [%[d], #.Lutvm_dwt_r+8+8*%c[ps]]\n\tstr %[b], [%[d], #.Lutvm_dwt_r+8+12*%c[ps]]\n\t"
      "addw %[px], %[px], #6*%c[cs]\n\t"
      ".set .Lutvm_dwt_r, .Lutvm_dwt_r+12\n\t"
      ".endr\n\t"
      : [px] "+r"(px), [a] "=&r"(a), [b] "=&r"(b), [c] "=&r"(c), [e] "=&r"(e), [t] "=&r"(t), [u] "=&r"(u)
      : [d] "r"(d), [h] "n"(h), [cs] "n"(cin), [ps] "n"(ps)
      : "memory");
}

/* kernel row KY (input row 2 I + KY, weights E, third taps by SMLABx X of TW) of output row I */
#define UTVM_DWT3_KY(I, KY, E, X, TW)                                     \
  ".if 2*" I "+" KY " < %c[h]\n\t"                                       \
  "ldrd ip, lr, [%[p], #%c[po]+4*3*(2*" I "+" KY ")]\n\t"                       \
  "smlad %[a0], ip, %[" E "], %[a0]\n\t"                                 \
  "smlab" X " %[a0], lr, %[" TW "], %[a0]\n\t"                           \
  "smlad %[a1], lr, %[" E "], %[a1]\n\t"                                 \
  "ldr ip, [%[p], #%c[po]+4*3*(2*" I "+" KY ")+8]\n\t"                          \
  "smlab" X " %[a1], ip, %[" TW "], %[a1]\n\t"                           \
  "smlad %[a2], ip, %[" E "], %[a2]\n\t"                                 \
  ".endif\n\t"
/* output row I: biases, three kernel rows, requantization (the layer's shift, or the channel's
 * own e after SMMLAR), three STRB */
#define UTVM_DWT3_ROW(I)                                                               \
  ".if " I " < %c[oh]\n\t"                                                            \
  "ldrd %[a0], %[a1], [%[q], #%c[qo]+40+12*" I "]\n\t"                                        \
  "ldr %[a2], [%[q], #%c[qo]+48+12*" I "]\n\t"                                                \
  UTVM_DWT3_KY(I, "0", "e0", "b", "t") UTVM_DWT3_KY(I, "1", "e1", "t", "t")             \
  UTVM_DWT3_KY(I, "2", "e2", "t", "o2")                                                \
  "ldrd ip, lr, [%[q], #%c[qo]+28]\n\t"                                                       \
  ".if %c[sh]\n\t"                                                                    \
  "smmla %[a0], %[a0], ip, lr\n\tsmmla %[a1], %[a1], ip, lr\n\tsmmla %[a2], %[a2], ip, lr\n\t" \
  "ssat %[a0], #8, %[a0], asr #%c[sh]\n\tssat %[a1], #8, %[a1], asr #%c[sh]\n\t"        \
  "ssat %[a2], #8, %[a2], asr #%c[sh]\n\t"                                              \
  ".else\n\t"                                                                         \
  "smmlar %[a0], %[a0], ip, lr\n\tsmmlar %[a1], %[a1], ip, lr\n\tsmmlar %[a2], %[a2], ip, lr\n\t" \
  "ldr ip, [%[q], #%c[qo]+36]\n\t"                                                            \
  "asr %[a0], %[a0], ip\n\tasr %[a1], %[a1], ip\n\tasr %[a2], %[a2], ip\n\t"            \
  "ssat %[a0], #8, %[a0]\n\tssat %[a1], #8, %[a1]\n\tssat %[a2], #8, %[a2]\n\t"          \
  ".endif\n\t"                                                                        \
  "strb %[a0], [%[y], #%c[gi]+3*" I "*%c[c]]\n\t"                                              \
  "strb %[a1], [%[y], #%c[gi]+(3*" I "+1)*%c[c]]\n\t"                                          \
  "strb %[a2], [%[y], #%c[gi]+(3*" I "+2)*%c[c]]\n\t"                                          \
  ".endif\n\t"

/* channel gi of a group (output y + gi, plane pl + gi ps, record rc + gi rl: immediate offsets,
 * so that the channels of a group share the pointers) of a 6-wide plane of h rows to oh <= 4
 * output rows of three, stride 2, no padding above or left: shift > 0 the layer's (e < 0), 0
 * the channel's own e */
UTVM_DWP_AI void utvm_dwt3_asm(int8_t* y, const int32_t* pl, const int32_t* rc, int32_t gi, int32_t ps, int32_t rl,
                               int32_t h, int32_t oh, int32_t cout, int32_t shift) {
  int32_t a0, a1, a2, e0, e1, e2, t, o2;
  __asm__ volatile(
      "ldrd %[e0], %[e1], [%[q], #%c[qo]]\n\t"
      "ldrd %[e2], %[t], [%[q], #%c[qo]+8]\n\t"
      "ldr %[o2], [%[q], #%c[qo]+24]\n\t"
      UTVM_DWT3_ROW("0") UTVM_DWT3_ROW("1") UTVM_DWT3_ROW("2") UTVM_DWT3_ROW("3")
      : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [e0] "=&r"(e0), [e1] "=&r"(e1), [e2] "=&r"(e2),
        [t] "=&r"(t), [o2] "=&r"(o2)
      : [y] "r"(y), [p] "r"(pl), [q] "r"(rc), [h] "n"(h), [oh] "n"(oh), [c] "n"(cout), [sh] "n"(shift),
        [gi] "n"(gi), [po] "n"(4 * gi * ps), [qo] "n"(4 * gi * rl)
      : "ip", "lr", "memory");
}
#endif

/* utvm_dwt3_asm applies: 6 wide, stride 2, three outputs a row, nothing padded above or left */
UTVM_DWP_AI int32_t utvm_dwt3_fits(int32_t h, int32_t w, int32_t cin, int32_t oh, int32_t ow, int32_t sh, int32_t sw,
                                   int32_t top, int32_t left, int32_t flags, int32_t lo, int32_t hi) {
#ifdef UTVM_DWP_ASM
  return sh == 2 && sw == 2 && top == 0 && left == 0 && w == 6 && ow == 3 && oh <= 4 && h <= 2 * oh + 1 &&
         (flags & UTVM_DWP_ROUND_NEG) == 0 && lo == -128 && hi == 127 && 11 * cin <= 4095;
#else
  (void)h, (void)w, (void)cin, (void)oh, (void)ow, (void)sh, (void)sw, (void)top, (void)left, (void)flags, (void)lo;
  (void)hi;
  return 0;
#endif
}

/* output channel gi of the group whose outputs, planes and records start at y, pl, rc: the
 * assembly where it applies, else utvm_dwt_chan; the layer's shift or the channel's own */
UTVM_DWP_AI void utvm_dwt_one(int8_t* y, const int32_t* pl, const int32_t* rc, int32_t gi, int32_t h, int32_t w,
                              int32_t cin, int32_t oh, int32_t ow, int32_t sh, int32_t sw, int32_t top, int32_t left,
                              int32_t flags, int32_t lo, int32_t hi, int32_t shift) {
  const int32_t ps = h * ((w + 1) / 2), rl = 10 + oh * ow;
  const int32_t layer = shift > 0 && ((flags & UTVM_DWP_MIXED) == 0 || rc[gi * rl + 9] < 0);
#ifdef UTVM_DWP_ASM
  if (utvm_dwt3_fits(h, w, cin, oh, ow, sh, sw, top, left, flags, lo, hi)) {
    if (layer)
      utvm_dwt3_asm(y, pl, rc, gi, ps, rl, h, oh, cin, shift);
    else
      utvm_dwt3_asm(y, pl, rc, gi, ps, rl, h, oh, cin, 0);
    return;
  }
#endif
  utvm_dwt_chan(y + gi, pl + gi * ps, rc + gi * rl, layer ? -shift : rc[gi * rl + 9], h, w, cin, oh, ow, sh, sw, top,
                left, flags, lo, hi);
}

UTVM_DWP_AI int32_t utvm_dwt_s8(void* yv, void* xv, void* scv, void* recv, int32_t h, int32_t w, int32_t cin,
                                int32_t oh, int32_t ow, int32_t sh, int32_t sw, int32_t top, int32_t left,
                                int32_t flags, int32_t lo, int32_t hi, int32_t shift) {
  int8_t* y = (int8_t*)yv;
  const int8_t* x = (const int8_t*)xv;
  int32_t* sc = (int32_t*)scv;
  const int32_t* rec = (const int32_t*)recv;
  const int32_t pw = (w + 1) / 2, ps = h * pw, rl = 10 + oh * ow;
  const int32_t fast = utvm_dwt3_fits(h, w, cin, oh, ow, sh, sw, top, left, flags, lo, hi);
  int32_t g0, gi, r, k;
  for (g0 = 0; g0 < cin; g0 += 4) {
    /* 4 at compile time for the assembly where cin % 4 == 0 (not in C: GCC then builds VWW's
     * stride-1 3x3 worse) */
    const int32_t gc = (cin & 3) == 0 && fast ? 4 : cin - g0 < 4 ? cin - g0 : 4;
    const int8_t* px = x + g0;
#ifdef UTVM_DWP_ASM
    if (gc == 4 && w == 6 && 6 * cin <= 4095 && h <= 20) {
      utvm_dwt_conv6(sc, px, h, cin, ps);
    } else
#endif
    if (gc == 4) {
      UTVM_DWP_UNROLL
      for (r = 0; r < h; ++r) {
        UTVM_DWP_UNROLL
        for (k = 0; k < pw; ++k) {
          int32_t xa, xb = 0;
          __builtin_memcpy(&xa, px + (r * w + 2 * k) * cin, 4);
          if (2 * k + 1 < w) __builtin_memcpy(&xb, px + (r * w + 2 * k + 1) * cin, 4);
          {
            const int32_t plo = utvm_dwp_pkhbt(xa, xb), phi = utvm_dwp_pkhtb(xb, xa);
            int32_t* d = sc + r * pw + k;
            d[0] = UTVM_DWP_SXTB16(plo);
            d[ps] = UTVM_DWP_SXTB16_ROR8(plo);
            d[2 * ps] = UTVM_DWP_SXTB16(phi);
            d[3 * ps] = UTVM_DWP_SXTB16_ROR8(phi);
          }
        }
      }
    } else {
      for (gi = 0; gi < gc; ++gi)
        for (r = 0; r < h; ++r)
          for (k = 0; k < pw; ++k) {
            const uint32_t a = (uint16_t)(int16_t)px[(r * w + 2 * k) * cin + gi];
            const uint32_t b = 2 * k + 1 < w ? (uint16_t)(int16_t)px[(r * w + 2 * k + 1) * cin + gi] : 0u;
            sc[gi * ps + r * pw + k] = (int32_t)(a | (b << 16));
          }
    }
    if (gc == 4) {
      if (fast) { /* the pointers of the group, the channel's offsets immediates (written out: -Og) */
        utvm_dwt_one(y + g0, sc, rec + g0 * rl, 0, h, w, cin, oh, ow, sh, sw, top, left, flags, lo, hi, shift);
        utvm_dwt_one(y + g0, sc, rec + g0 * rl, 1, h, w, cin, oh, ow, sh, sw, top, left, flags, lo, hi, shift);
        utvm_dwt_one(y + g0, sc, rec + g0 * rl, 2, h, w, cin, oh, ow, sh, sw, top, left, flags, lo, hi, shift);
        utvm_dwt_one(y + g0, sc, rec + g0 * rl, 3, h, w, cin, oh, ow, sh, sw, top, left, flags, lo, hi, shift);
      } else {
        UTVM_DWP_UNROLL /* no loop test between the channels of a group */
        for (gi = 0; gi < 4; ++gi)
          utvm_dwt_one(y + g0 + gi, sc + gi * ps, rec + (g0 + gi) * rl, 0, h, w, cin, oh, ow, sh, sw, top, left,
                       flags, lo, hi, shift);
      }
    } else {
      for (gi = 0; gi < gc; ++gi)
        utvm_dwt_one(y + g0 + gi, sc + gi * ps, rec + (g0 + gi) * rl, 0, h, w, cin, oh, ow, sh, sw, top, left, flags,
                     lo, hi, shift);
    }
  }
  return 0;
}

#endif /* UTVM_KERNELS_DEPTHWISE_DSP_TINY_H_ */
