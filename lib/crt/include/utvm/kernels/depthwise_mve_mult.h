/*
 * utvm_mve_dwm_s8: int8 depthwise convolution with channel multiplier > 1 on Helium (Cortex-M52,
 * M55, M85), any window, stride, dilation and padding, any channel count (header-only, C99;
 * included by utvm/kernels_mve.h, whose requantization helpers it uses).
 *
 * Per band of ``rows`` output rows, the input rows their windows read are copied into scratch,
 * padded with the input zero point (the biases are folded with it, so a tap in the padding adds
 * nothing): rows of pw pixels x c channels. The output pixels of a band run on from one row to
 * the next (narrow maps fill the vectors), each at its offset in the band (offs, computed once).
 * Then per input channel, per pair of its output channels and per 8 output pixels of the band,
 * four int32 accumulators (2 channels x 2 x 4 pixels) start at the folded biases; each tap
 * gathers the channel's value at the 8 pixels (two VLDRB.S32 by the pixels' offsets) and multiplies it by the two channels' weights (scalars, VMLA): 2 gathers, 2 weight
 * loads and 4 VMLA per 16 multiply-accumulates, every gather shared by two output channels.
 * Each vector of 4 pixels of one channel is requantized with the channel's multiplier and shift
 * in scalar registers and scattered to its pixels (utvm_mve_rq_scatter).
 *
 * wt: per output channel its kh x kw taps (int8, row-major); rq: per output channel the folded
 * bias, TFLite's multiplier and shift (int32); right: every shift is a right shift of at least 1.
 * The band takes ((rows - 1) sh + kr) x pw x c bytes (kr = (kh - 1) dh + 1, pw = (ow - 1) sw +
 * (kw - 1) dw + 1), offs rows x ow + 8 words. Without MVE the same arithmetic in plain C (TFLite's, bit-exact).
 */
#ifndef UTVM_KERNELS_DEPTHWISE_MVE_MULT_H_
#define UTVM_KERNELS_DEPTHWISE_MVE_MULT_H_

#include <stdint.h>

#include "common_mve.h"
#include "conv_mve.h"
#include "copy_mve.h"
#include "requant_mve.h"

/* the padded input rows iy0 .. iy0 + kr - 1: kr rows of pw pixels x c channels */
static inline void utvm_mve_dwm_band(int8_t* band, const int8_t* x, int32_t h, int32_t w, int32_t c, int32_t iy0,
                                     int32_t kr, int32_t pw, int32_t left, int32_t zx) {
  int32_t n = w < pw - left ? w : pw - left; /* the input columns inside the band */
  for (int32_t r = 0; r < kr; r++) {
    int8_t* dst = band + r * pw * c;
    int32_t iy = iy0 + r;
    if (iy < 0 || iy >= h || n <= 0) {
      utvm_mve_fill_s8(dst, zx, pw * c);
      continue;
    }
    utvm_mve_fill_s8(dst, zx, left * c);
    utvm_mve_copy_s8(dst + left * c, x + iy * w * c, n * c);
    utvm_mve_fill_s8(dst + (left + n) * c, zx, (pw - left - n) * c);
  }
}

UTVM_INLINE void utvm_mve_dwm_impl(
    int8_t* out, const int8_t* x, int32_t h, int32_t w, int32_t c, int32_t mult, int32_t oh, int32_t ow, int32_t kh,
    int32_t kw, int32_t sh, int32_t sw, int32_t dh, int32_t dw, int32_t top, int32_t left, const int8_t* wt,
    const int32_t* rq, int32_t zx, int32_t zy, int32_t lo, int32_t hi, int32_t right, int32_t pw, int32_t rows,
    int8_t* band, int32_t* offs) {
  const int32_t cout = c * mult, taps = kh * kw, kr = (kh - 1) * dh + 1, rs = pw * c;
  /* the band offset of each output pixel of a band of rows (8 more, reading the band's start) */
  for (int32_t p = 0; p < rows * ow + 8; p++) offs[p] = p < rows * ow ? (p / ow) * sh * rs + (p % ow) * sw * c : 0;
#ifdef UTVM_MVE_VECTOR
  const uint32x4_t yoff = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)cout);
  const int32x4_t vlo = vdupq_n_s32(lo), vhi = vdupq_n_s32(hi);
#endif
  for (int32_t oy = 0; oy < oh; oy += rows) {
    const int32_t nr = oh - oy < rows ? oh - oy : rows, np = nr * ow;
    utvm_mve_dwm_band(band, x, h, w, c, oy * sh - top, (nr - 1) * sh + kr, pw, left, zx);
    int8_t* orow = out + oy * ow * cout;
    for (int32_t ch = 0; ch < c; ch++) {
      for (int32_t m = 0; m < mult; m += 2) {
        const int32_t o0 = ch * mult + m;
        const int32_t o1 = m + 1 < mult ? o0 + 1 : o0; /* an odd last channel: computed twice, stored once */
        const int8_t* w0 = wt + o0 * taps;
        const int8_t* w1 = wt + o1 * taps;
        const int8_t* base = band + ch;
#ifdef UTVM_MVE_VECTOR
        const int32_t b0 = rq[3 * o0], m0 = rq[3 * o0 + 1], s0 = rq[3 * o0 + 2];
        const int32_t b1 = rq[3 * o1], m1 = rq[3 * o1 + 1], s1 = rq[3 * o1 + 2];
        for (int32_t p = 0; p < np; p += 8) {
          const uint32x4_t oa = vreinterpretq_u32_s32(vldrwq_s32(offs + p));
          const uint32x4_t ob = vreinterpretq_u32_s32(vldrwq_s32(offs + p + 4));
          int32x4_t a00 = vdupq_n_s32(0), a01 = a00, a10 = a00, a11 = a00;
          for (int32_t ky = 0; ky < kh; ky++) {
            const int8_t* row = base + ky * dh * rs;
            const int8_t* k0 = w0 + ky * kw;
            const int8_t* k1 = w1 + ky * kw;
            for (int32_t kx = 0; kx < kw; kx++) {
              const int8_t* t = row + kx * dw * c;
              int32x4_t xa = vldrbq_gather_offset_s32(t, oa);
              int32x4_t xb = vldrbq_gather_offset_s32(t, ob);
              int32_t v0 = k0[kx], v1 = k1[kx];
              a00 = vmlaq_n_s32(a00, xa, v0);
              a01 = vmlaq_n_s32(a01, xb, v0);
              a10 = vmlaq_n_s32(a10, xa, v1);
              a11 = vmlaq_n_s32(a11, xb, v1);
            }
          }
          int32_t n = np - p;
          mve_pred16_t pa = n >= 4 ? 0 : vctp32q((uint32_t)n);
          int8_t* dst = orow + p * cout;
          utvm_mve_rq_scatter(dst + o0, yoff, a00, b0, m0, s0, right, pa, zy, vlo, vhi);
          if (o1 != o0) utvm_mve_rq_scatter(dst + o1, yoff, a10, b1, m1, s1, right, pa, zy, vlo, vhi);
          if (n > 4) {
            mve_pred16_t pb = n >= 8 ? 0 : vctp32q((uint32_t)(n - 4));
            utvm_mve_rq_scatter(dst + 4 * cout + o0, yoff, a01, b0, m0, s0, right, pb, zy, vlo, vhi);
            if (o1 != o0) utvm_mve_rq_scatter(dst + 4 * cout + o1, yoff, a11, b1, m1, s1, right, pb, zy, vlo, vhi);
          }
        }
#else
        (void)right;
        for (int32_t p = 0; p < np; p++) {
          const int8_t* at = base + offs[p];
          int32_t a0 = rq[3 * o0], a1 = rq[3 * o1];
          for (int32_t ky = 0; ky < kh; ky++) {
            for (int32_t kx = 0; kx < kw; kx++) {
              int32_t v = at[ky * dh * rs + kx * dw * c];
              a0 += v * w0[ky * kw + kx];
              a1 += v * w1[ky * kw + kx];
            }
          }
          orow[p * cout + o0] = utvm_mve_clamp_s8(utvm_mve_mbqm(a0, rq[3 * o0 + 1], rq[3 * o0 + 2]) + zy, lo, hi);
          orow[p * cout + o1] = utvm_mve_clamp_s8(utvm_mve_mbqm(a1, rq[3 * o1 + 1], rq[3 * o1 + 2]) + zy, lo, hi);
        }
#endif
      }
    }
  }
}

UTVM_INLINE int32_t utvm_mve_dwm_s8(
    void* out, void* x, int32_t h, int32_t w, int32_t c, int32_t mult, int32_t oh, int32_t ow, int32_t kh, int32_t kw,
    int32_t sh, int32_t sw, int32_t dh, int32_t dw, int32_t top, int32_t left, void* wt, void* rq, int32_t zx,
    int32_t zy, int32_t lo, int32_t hi, int32_t right, int32_t pw, int32_t rows, void* band, void* offs) {
  utvm_mve_dwm_impl((int8_t*)out, (const int8_t*)x, h, w, c, mult, oh, ow, kh, kw, sh, sw, dh, dw, top, left,
                    (const int8_t*)wt, (const int32_t*)rq, zx, zy, lo, hi, right, pw, rows, (int8_t*)band,
                    (int32_t*)offs);
  return 0;
}

/*
 * utvm_mve_dwd_s8: the same layers with windows of at most 16 taps whose taps lie within 255
 * bytes of the window's first in a channel plane ((kh - 1) dh pw + (kw - 1) dw <= 255): per band
 * of output rows the input rows re-laid out as one plane per channel (nr rows of pw pixels,
 * padded with the zero point; 8 pixels a gather), then per input channel its mult filters held
 * in vector registers (16 int8 lanes, zero past the taps: a predicated load) and per output pixel one gather of its
 * window (VLDRB.U8 by tap offsets) and one VMLADAV per filter (up to 16 multiply-accumulates
 * each), four pixels of a channel requantized in one vector and scattered.
 *
 * wt: per output channel its kh x kw taps (int8, row-major); toff: the 16 byte offsets of
 * the taps in a plane (0 past the taps); offs: rows x ow + 3 words; planes: c x nr x pw bytes
 * (nr = (rows - 1) sh + (kh - 1) dh + 1).
 */
#define UTVM_MVE_DWD_MAXM 4

/* the planes of input rows iy0 .. iy0 + nr - 1 */
static inline void utvm_mve_dwd_planes(int8_t* planes, const int8_t* x, int32_t h, int32_t w, int32_t c, int32_t iy0,
                                       int32_t nr, int32_t pw, int32_t left, int32_t zx) {
  int32_t n = w < pw - left ? w : pw - left;
  utvm_mve_fill_s8(planes, zx, c * nr * pw);
  for (int32_t r = 0; r < nr; r++) {
    int32_t iy = iy0 + r;
    if (iy < 0 || iy >= h) continue;
    const int8_t* src = x + iy * w * c;
    for (int32_t ch = 0; ch < c; ch++) {
      int8_t* dst = planes + (ch * nr + r) * pw + left;
#ifdef UTVM_MVE_VECTOR
      const uint16x8_t off = vmulq_n_u16(vidupq_n_u16(0, 1), (uint16_t)c);
      for (int32_t j = 0; j < n; j += 8) {
        mve_pred16_t p = vctp16q((uint32_t)(n - j));
        vstrbq_p_s16(dst + j, vldrbq_gather_offset_z_s16(src + j * c + ch, off, p), p);
      }
#else
      for (int32_t j = 0; j < n; j++) dst[j] = src[j * c + ch];
#endif
    }
  }
}

UTVM_INLINE void utvm_mve_dwd_impl(
    int8_t* out, const int8_t* x, int32_t h, int32_t w, int32_t c, int32_t mult, int32_t oh, int32_t ow, int32_t kh,
    int32_t kw, int32_t sh, int32_t sw, int32_t dh, int32_t top, int32_t left, const int8_t* wt, const uint8_t* toff,
    const int32_t* rq, int32_t zx, int32_t zy, int32_t lo, int32_t hi, int32_t right, int32_t pw, int32_t rows,
    int8_t* planes, int32_t* offs) {
  const int32_t cout = c * mult, taps = kh * kw;
  int32_t filled = 0; /* the rows of the table offs (the last band may have fewer: zeros past its pixels) */
#ifdef UTVM_MVE_VECTOR
  const uint8x16_t tv = vldrbq_u8(toff);
  /* the lanes of utvm_mve_lanes4 (the predicate of a last partial group needs them in order) */
  const uint32x4_t yoff = utvm_mve_lanes4_index(cout), lane = utvm_mve_lanes4_index(1);
  const int32x4_t vlo = vdupq_n_s32(lo), vhi = vdupq_n_s32(hi);
#else
  (void)right;
#endif
  for (int32_t oy = 0; oy < oh; oy += rows) {
    const int32_t nrows = oh - oy < rows ? oh - oy : rows, np = nrows * ow, nr = (nrows - 1) * sh + (kh - 1) * dh + 1;
    utvm_mve_dwd_planes(planes, x, h, w, c, oy * sh - top, nr, pw, left, zx);
    if (nrows != filled) {
      for (int32_t p = 0; p < rows * ow + 3; p++) offs[p] = p < np ? (p / ow) * sh * pw + (p % ow) * sw : 0;
      filled = nrows;
    }
    int8_t* orow = out + oy * ow * cout;
    for (int32_t ch = 0; ch < c; ch++) {
      const int8_t* plane = planes + ch * nr * pw;
      for (int32_t m = 0; m < mult; m += UTVM_MVE_DWD_MAXM) {
        const int32_t nm = mult - m < UTVM_MVE_DWD_MAXM ? mult - m : UTVM_MVE_DWD_MAXM, o = ch * mult + m;
#ifdef UTVM_MVE_VECTOR
        int8x16_t f[UTVM_MVE_DWD_MAXM];
        for (int32_t k = 0; k < nm; k++) f[k] = vldrbq_z_s8(wt + taps * (o + k), vctp8q((uint32_t)taps));
        for (int32_t p = 0; p < np; p += 4) {
          const int32_t* op = offs + p;
          const int8x16_t v0 = vldrbq_gather_offset_s8(plane + op[0], tv);
          const int8x16_t v1 = vldrbq_gather_offset_s8(plane + op[1], tv);
          const int8x16_t v2 = vldrbq_gather_offset_s8(plane + op[2], tv);
          const int8x16_t v3 = vldrbq_gather_offset_s8(plane + op[3], tv);
          int32_t n = np - p;
          mve_pred16_t pr = n >= 4 ? 0 : vcmphiq_u32(vdupq_n_u32((uint32_t)n), lane);
          int8_t* dst = orow + p * cout + o;
          for (int32_t k = 0; k < nm; k++) {
            const int32_t* q = rq + 3 * (o + k);
            int32x4_t v = utvm_mve_lanes4(vmladavq_s8(v0, f[k]), vmladavq_s8(v1, f[k]), vmladavq_s8(v2, f[k]),
                                          vmladavq_s8(v3, f[k]));
            utvm_mve_rq_scatter(dst + k, yoff, v, q[0], q[1], q[2], right, pr, zy, vlo, vhi);
          }
        }
#else
        for (int32_t p = 0; p < np; p++) {
          for (int32_t k = 0; k < nm; k++) {
            int32_t acc = rq[3 * (o + k)];
            for (int32_t t = 0; t < taps; t++) acc += plane[offs[p] + toff[t]] * wt[taps * (o + k) + t];
            orow[p * cout + o + k] =
                utvm_mve_clamp_s8(utvm_mve_mbqm(acc, rq[3 * (o + k) + 1], rq[3 * (o + k) + 2]) + zy, lo, hi);
          }
        }
#endif
      }
    }
  }
}

UTVM_INLINE int32_t utvm_mve_dwd_s8(
    void* out, void* x, int32_t h, int32_t w, int32_t c, int32_t mult, int32_t oh, int32_t ow, int32_t kh, int32_t kw,
    int32_t sh, int32_t sw, int32_t dh, int32_t top, int32_t left, void* wt, void* toff, void* rq, int32_t zx,
    int32_t zy, int32_t lo, int32_t hi, int32_t right, int32_t pw, int32_t rows, void* planes, void* offs) {
  utvm_mve_dwd_impl((int8_t*)out, (const int8_t*)x, h, w, c, mult, oh, ow, kh, kw, sh, sw, dh, top, left,
                    (const int8_t*)wt, (const uint8_t*)toff, (const int32_t*)rq, zx, zy, lo, hi, right, pw, rows,
                    (int8_t*)planes, (int32_t*)offs);
  return 0;
}

/*
 * utvm_mve_dwx_s8: multiplier 4n, VALID windows (every tap inside the input), a few output
 * pixels (1-D layers whose windows cover most of the input): per output pixel and group of four
 * output channels (of one input channel), the four accumulators in the lanes start at their
 * folded biases; per tap one scalar input value (LDRSB), the group's four weights (VLDRB.S32)
 * and one VMLA by the value: 3 instructions per 4 MACs whatever the number of pixels, then the
 * group's four outputs requantized with vectors of multipliers and shifts and stored. Nothing is
 * copied. wt: per group its taps (ry, rx row-major), four weights each (int8); rq: per group the
 * four folded biases, multipliers and shifts (int32, 12 words). Plain C without MVE.
 */
UTVM_INLINE int32_t utvm_mve_dwx_s8(void* out, void* x, int32_t w, int32_t c,
                                                                     int32_t mult, int32_t oh, int32_t ow,
                                                                     int32_t kh, int32_t kw, int32_t sh, int32_t sw,
                                                                     int32_t dh, int32_t dw, void* wt, void* rq,
                                                                     int32_t zy, int32_t lo, int32_t hi) {
  const int8_t* xs = (const int8_t*)x;
  const int32_t* q = (const int32_t*)rq;
  int8_t* y = (int8_t*)out;
  const int32_t cout = c * mult, groups = cout / 4, taps = kh * kw;
  for (int32_t p = 0; p < oh * ow; p++) {
    const int8_t* px = xs + ((p / ow) * sh * w + (p % ow) * sw) * c;
    int8_t* po = y + p * cout;
    const int8_t* wp = (const int8_t*)wt;
    for (int32_t g = 0; g < groups; g++, wp += taps * 4) {
      const int8_t* xc = px + (g * 4) / mult;
      const int32_t* qg = q + g * 12;
#ifdef UTVM_MVE_VECTOR
      int32x4_t a = vldrwq_s32(qg);
      const int8_t* wq = wp;
      const int32_t d = dw * c;
      for (int32_t ry = 0; ry < kh; ry++) {
        const int8_t* xr = xc + ry * dh * w * c;
        if (UTVM_MVE_CONSTANT(d) && d <= 255) {
          /* the pointers moved on by the loads: 3 instructions a tap */
#pragma GCC unroll 16
          for (int32_t rx = 0; rx < kw; rx++) {
            int32_t v;
            int32x4_t wv;
            __asm__("ldrsb %[v], [%[xr]], %[d]\n\t"
                    "vldrb.s32 %q[wv], [%[wq]], #4\n\t"
                    "vmla.s32 %q[a], %q[wv], %[v]\n\t"
                    : [a] "+w"(a), [wv] "=&w"(wv), [v] "=&r"(v), [xr] "+r"(xr), [wq] "+r"(wq)
                    : [d] "i"(d)
                    : "memory");
          }
        } else {
          for (int32_t rx = 0; rx < kw; rx++, wq += 4) a = vmlaq_n_s32(a, vldrbq_s32(wq), xr[rx * d]);
        }
      }
      const int32x4_t s = vldrwq_s32(qg + 8);
      const int32x4_t r = vminq_s32(s, vdupq_n_s32(0));
      a = vqrdmulhq_s32(vshlq_s32(a, vmaxq_s32(s, vdupq_n_s32(0))), vldrwq_s32(qg + 4));
      a = vrshlq_s32(vqaddq_s32(a, vshrq_n_s32(vandq_s32(a, r), 31)), r);
      a = vminq_s32(vmaxq_s32(vaddq_n_s32(a, zy), vdupq_n_s32(lo)), vdupq_n_s32(hi));
      vstrbq_s32(po + g * 4, a);
#else
      for (int32_t k = 0; k < 4; k++) {
        int32_t acc = qg[k];
        for (int32_t ry = 0; ry < kh; ry++)
          for (int32_t rx = 0; rx < kw; rx++) acc += xc[(ry * dh * w + rx * dw) * c] * wp[(ry * kw + rx) * 4 + k];
        po[g * 4 + k] = utvm_mve_clamp_s8(utvm_mve_mbqm(acc, qg[4 + k], qg[8 + k]) + zy, lo, hi);
      }
#endif
    }
  }
  return 0;
}

#endif /* UTVM_KERNELS_DEPTHWISE_MVE_MULT_H_ */
