/*
 * utvm_mve_dwr_s8: int8 depthwise convolution on Helium (Cortex-M52, M55, M85) with the output
 * pixels of a row in the vector lanes: any multiplier, window, stride and padding, any channel
 * count, no dilation (header-only, C99; included by utvm/kernels_mve.h).
 *
 * For the layers whose channels do not fill vectors (1-D layers of height 1, whose windows slide
 * along the width only; tiny channel counts): per output row and input channel the input rows
 * (a pass of rows output rows) the input rows its windows read are copied into scratch as sw phase planes each (plane (ry, ph) holds the
 * padded input columns ph, ph + sw, ph + 2 sw, ..., the padding the zero point zx: the biases are
 * folded with it), so that the tap rx of output pixels ox .. ox + 3 is one contiguous VLDRB.S32
 * at plane (ry, rx % sw), column ox + rx / sw, whatever the stride. Then per chunk of mm output
 * channels of the input channel and per g x 4 output pixels (g x mm <= 4 accumulators), each
 * tap: g loads, mm weight loads (int8 scalars, in the order of the taps' runs) and g x mm VMLA
 * by the weight; each vector of four pixels requantized with the channel's constants in scalar
 * registers and scattered to its pixels (utvm_mve_rq4_store of conv_mve.h).
 *
 * wt: per input channel, per chunk of mm of its output channels, per window row ry, per phase
 * ph, per tap rx = ph, ph + sw, ... < kw: the mm weights (int8); rq: per output channel the
 * folded bias, TFLite's multiplier and shift (int32); right: every shift a right shift of at
 * least 1. pwp: the columns of a plane (at least the output width rounded up to 4 g, plus
 * (kw - 1) / sw + 1); planes: ((rows - 1) sh + kh) x sw x pwp bytes. Without MVE the same arithmetic in plain C.
 */
#ifndef UTVM_KERNELS_DEPTHWISE_MVE_ROW_H_
#define UTVM_KERNELS_DEPTHWISE_MVE_ROW_H_

#include <stdint.h>

#include "common_mve.h"
#include "conv_mve.h"
#include "copy_mve.h"
#include "requant_mve.h"

/* fill of utvm_mve_dwr_planes: the rows outside the input, the padding columns of the others */
#define UTVM_MVE_DWR_FILL_ROWS 1
#define UTVM_MVE_DWR_FILL_COLS 2

/* the planes of input channel ic for the window rows at input row iy0 (kh rows, sw phases). The
 * zero point is written only where fill says: a plane row's padding columns are the same for
 * every channel and row (no gather writes them: filled once per call), its rows outside the
 * input the same for every channel of a pass (filled by its first channel) */
static inline void utvm_mve_dwr_planes(int8_t* planes, const int8_t* x, int32_t h, int32_t w, int32_t c, int32_t ic,
                                       int32_t iy0, int32_t kh, int32_t sw, int32_t left, int32_t pwp, int32_t zx,
                                       int32_t fill) {
  for (int32_t ph = 0; ph < sw; ph++) {
    /* the columns j whose input column j sw + ph - left lies inside: j0 <= j < j1 */
    const int32_t j0 = left - ph > 0 ? (left - ph + sw - 1) / sw : 0;
    int32_t j1 = w - 1 + left - ph >= 0 ? (w - 1 + left - ph) / sw + 1 : 0;
    if (j1 > pwp) j1 = pwp;
    for (int32_t ry = 0; ry < kh; ry++) {
      const int32_t iy = iy0 + ry;
      int8_t* dst = planes + (ry * sw + ph) * pwp;
      if (iy < 0 || iy >= h || j1 <= j0) {
        if (fill & UTVM_MVE_DWR_FILL_ROWS) utvm_mve_fill_s8(dst, zx, pwp);
        continue;
      }
      if (fill & UTVM_MVE_DWR_FILL_COLS) {
        if (j0 > 0) utvm_mve_fill_s8(dst, zx, j0);
        if (j1 < pwp) utvm_mve_fill_s8(dst + j1, zx, pwp - j1);
      }
      const int8_t* src = x + (iy * w + j0 * sw + ph - left) * c + ic;
      const int32_t n = j1 - j0;
#ifdef UTVM_MVE_VECTOR
      if (c * sw == 1) {
        utvm_mve_copy_s8(dst + j0, src, n);
        continue;
      }
      const uint16x8_t off = vmulq_n_u16(vidupq_n_u16(0, 1), (uint16_t)(c * sw));
      int32_t j = 0;
      for (; j + 8 <= n; j += 8) vstrbq_s16(dst + j0 + j, vldrbq_gather_offset_s16(src + j * c * sw, off));
      if (j < n) {
        mve_pred16_t p = vctp16q((uint32_t)(n - j));
        vstrbq_p_s16(dst + j0 + j, vldrbq_gather_offset_z_s16(src + j * c * sw, off, p), p);
      }
#else
      for (int32_t j = 0; j < n; j++) dst[j0 + j] = src[j * c * sw];
#endif
    }
  }
}

#ifdef UTVM_MVE_VECTOR
/* one tap of utvm_mve_dwr_chunk: the weights of its mm channels (post-incremented), the g
 * vectors of pixels at p (the pixels 4i.. at p + 4i; the last load moves p on by one) and the
 * VMLAs onto a0..a3 (channel k, vector i: a[k * g + i]) */
#define UTVM_MVE_DWR_W1 "ldrsb %[w0], [%[wp]], #1\n\t"
#define UTVM_MVE_DWR_W2 UTVM_MVE_DWR_W1 "ldrsb %[w1], [%[wp]], #1\n\t"
#define UTVM_MVE_DWR_W3 UTVM_MVE_DWR_W2 "ldrsb %[w2], [%[wp]], #1\n\t"
#define UTVM_MVE_DWR_W4 UTVM_MVE_DWR_W3 "ldrsb %[w3], [%[wp]], #1\n\t"
#define UTVM_MVE_DWR_L(OFF) "vldrb.s32 %q[x], [%[p], #" OFF "]\n\t"
#define UTVM_MVE_DWR_LP "vldrb.s32 %q[x], [%[p]], #1\n\t"
#define UTVM_MVE_DWR_M(A, W) "vmla.s32 %q[" A "], %q[x], %[" W "]\n\t"
#define UTVM_MVE_DWR_TAP(TEXT, ACC, W)                                                                      \
  __asm__(TEXT : ACC, [x] "=&w"(xv), W, [p] "+l"(p), [wp] "+r"(wp) : : "memory")
#define UTVM_MVE_DWR_A1 [a0] "+w"(a0)
#define UTVM_MVE_DWR_A2 UTVM_MVE_DWR_A1, [a1] "+w"(a1)
#define UTVM_MVE_DWR_A3 UTVM_MVE_DWR_A2, [a2] "+w"(a2)
#define UTVM_MVE_DWR_A4 UTVM_MVE_DWR_A3, [a3] "+w"(a3)
#define UTVM_MVE_DWR_R1 [w0] "=&r"(w0)
#define UTVM_MVE_DWR_R2 UTVM_MVE_DWR_R1, [w1] "=&r"(w1)
#define UTVM_MVE_DWR_R3 UTVM_MVE_DWR_R2, [w2] "=&r"(w2)
#define UTVM_MVE_DWR_R4 UTVM_MVE_DWR_R3, [w3] "=&r"(w3)
#endif

/* one chunk of mm output channels (o0 ..) of one input channel over an output row (orow: its
 * pixel 0, channel 0), g x 4 pixels a step */
UTVM_INLINE void utvm_mve_dwr_chunk(int8_t* orow, const int8_t* planes, int32_t ow,
                                                                     int32_t cout, int32_t o0, int32_t kh, int32_t kw,
                                                                     int32_t sw, int32_t pwp, const int8_t* wt,
                                                                     const int32_t* rq, int32_t zy, int32_t lo,
                                                                     int32_t hi, int32_t right, int32_t g,
                                                                     int32_t mm) {
#ifdef UTVM_MVE_VECTOR
  const uint32x4_t yoff = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)cout);
  const int32x4_t vlo = vdupq_n_s32(lo), vhi = vdupq_n_s32(hi);
  int32_t bk[4] = {0, 0, 0, 0}, mk[4] = {0, 0, 0, 0}, sk[4] = {0, 0, 0, 0};
#pragma GCC unroll 4
  for (int32_t k = 0; k < mm; k++) {
    bk[k] = rq[3 * (o0 + k)];
    mk[k] = rq[3 * (o0 + k) + 1];
    sk[k] = rq[3 * (o0 + k) + 2];
  }
  for (int32_t ox = 0; ox < ow; ox += 4 * g) {
    /* accumulator of channel k, pixels 4i..: a[k * g + i] */
    int32x4_t a0 = vdupq_n_s32(bk[0]), a1 = vdupq_n_s32(bk[g == 1 ? 1 : 0]);
    int32x4_t a2 = vdupq_n_s32(bk[g == 2 ? 1 : g == 1 ? 2 : 0]), a3 = vdupq_n_s32(bk[g == 2 ? 1 : g == 1 ? 3 : 0]);
    const int8_t* wp = wt;
#pragma GCC unroll 8
    for (int32_t ry = 0; ry < kh; ry++) {
#pragma GCC unroll 4
      for (int32_t ph = 0; ph < sw; ph++) {
        const int8_t* p = planes + (ry * sw + ph) * pwp + ox;
        const int32_t n = (kw - ph + sw - 1) / sw;
#pragma GCC unroll 16
        for (int32_t t = 0; t < n; t++) {
          int32x4_t xv;
          int32_t w0, w1 = 0, w2 = 0, w3 = 0;
          if (g == 4) {
            UTVM_MVE_DWR_TAP(UTVM_MVE_DWR_W1 UTVM_MVE_DWR_L("4") UTVM_MVE_DWR_M("a1", "w0") UTVM_MVE_DWR_L("8")
                                 UTVM_MVE_DWR_M("a2", "w0") UTVM_MVE_DWR_L("12") UTVM_MVE_DWR_M("a3", "w0")
                                     UTVM_MVE_DWR_LP UTVM_MVE_DWR_M("a0", "w0"),
                             UTVM_MVE_DWR_A4, UTVM_MVE_DWR_R1);
          } else if (g == 2 && mm == 1) {
            UTVM_MVE_DWR_TAP(UTVM_MVE_DWR_W1 UTVM_MVE_DWR_L("4") UTVM_MVE_DWR_M("a1", "w0") UTVM_MVE_DWR_LP
                                 UTVM_MVE_DWR_M("a0", "w0"),
                             UTVM_MVE_DWR_A2, UTVM_MVE_DWR_R1);
          } else if (g == 2) {
            UTVM_MVE_DWR_TAP(UTVM_MVE_DWR_W2 UTVM_MVE_DWR_L("4") UTVM_MVE_DWR_M("a1", "w0")
                                 UTVM_MVE_DWR_M("a3", "w1") UTVM_MVE_DWR_LP UTVM_MVE_DWR_M("a0", "w0")
                                     UTVM_MVE_DWR_M("a2", "w1"),
                             UTVM_MVE_DWR_A4, UTVM_MVE_DWR_R2);
          } else if (mm == 1) {
            UTVM_MVE_DWR_TAP(UTVM_MVE_DWR_W1 UTVM_MVE_DWR_LP UTVM_MVE_DWR_M("a0", "w0"), UTVM_MVE_DWR_A1,
                             UTVM_MVE_DWR_R1);
          } else if (mm == 2) {
            UTVM_MVE_DWR_TAP(UTVM_MVE_DWR_W2 UTVM_MVE_DWR_LP UTVM_MVE_DWR_M("a0", "w0") UTVM_MVE_DWR_M("a1", "w1"),
                             UTVM_MVE_DWR_A2, UTVM_MVE_DWR_R2);
          } else if (mm == 3) {
            UTVM_MVE_DWR_TAP(UTVM_MVE_DWR_W3 UTVM_MVE_DWR_LP UTVM_MVE_DWR_M("a0", "w0") UTVM_MVE_DWR_M("a1", "w1")
                                 UTVM_MVE_DWR_M("a2", "w2"),
                             UTVM_MVE_DWR_A3, UTVM_MVE_DWR_R3);
          } else {
            UTVM_MVE_DWR_TAP(UTVM_MVE_DWR_W4 UTVM_MVE_DWR_LP UTVM_MVE_DWR_M("a0", "w0") UTVM_MVE_DWR_M("a1", "w1")
                                 UTVM_MVE_DWR_M("a2", "w2") UTVM_MVE_DWR_M("a3", "w3"),
                             UTVM_MVE_DWR_A4, UTVM_MVE_DWR_R4);
          }
          (void)w1;
          (void)w2;
          (void)w3;
        }
      }
    }
    const int32x4_t acc[4] = {a0, a1, a2, a3};
#pragma GCC unroll 4
    for (int32_t i = 0; i < g; i++) {
      const int32_t n = ow - ox - 4 * i;
      if (n <= 0) break;
      const mve_pred16_t pr = n >= 4 ? 0 : vctp32q((uint32_t)n);
      int8_t* dst = orow + (ox + 4 * i) * cout + o0;
#pragma GCC unroll 4
      for (int32_t k = 0; k < mm; k++) utvm_mve_rq4_store(dst + k, yoff, acc[k * g + i], mk[k], sk[k], right, pr, zy, vlo, vhi);
    }
  }
#else
  (void)right;
  (void)g;
  for (int32_t ox = 0; ox < ow; ox++) {
    for (int32_t k = 0; k < mm; k++) {
      int32_t acc = rq[3 * (o0 + k)];
      const int8_t* wp = wt;
      for (int32_t ry = 0; ry < kh; ry++) {
        for (int32_t ph = 0; ph < sw; ph++) {
          const int8_t* p = planes + (ry * sw + ph) * pwp + ox;
          const int32_t n = (kw - ph + sw - 1) / sw;
          for (int32_t t = 0; t < n; t++, wp += mm) acc += p[t] * wp[k];
        }
      }
      orow[ox * cout + o0 + k] =
          utvm_mve_clamp_s8(utvm_mve_mbqm(acc, rq[3 * (o0 + k) + 1], rq[3 * (o0 + k) + 2]) + zy, lo, hi);
    }
  }
#endif
}

UTVM_INLINE void utvm_mve_dwr_impl(
    int8_t* out, const int8_t* x, int32_t h, int32_t w, int32_t c, int32_t mult, int32_t oh, int32_t ow, int32_t kh,
    int32_t kw, int32_t sh, int32_t sw, int32_t top, int32_t left, const int8_t* wt, const int32_t* rq, int32_t zx,
    int32_t zy, int32_t lo, int32_t hi, int32_t right, int32_t g, int32_t mm, int32_t pwp, int32_t rows, int8_t* planes) {
  const int32_t cout = c * mult, taps = kh * kw;
  for (int32_t oy0 = 0; oy0 < oh; oy0 += rows) {
    const int32_t nr = oh - oy0 < rows ? oh - oy0 : rows;
    for (int32_t ic = 0; ic < c; ic++) {
      const int32_t fill = ic > 0 ? 0 : oy0 > 0 ? UTVM_MVE_DWR_FILL_ROWS : UTVM_MVE_DWR_FILL_ROWS | UTVM_MVE_DWR_FILL_COLS;
      utvm_mve_dwr_planes(planes, x, h, w, c, ic, oy0 * sh - top, (nr - 1) * sh + kh, sw, left, pwp, zx, fill);
      for (int32_t r = 0; r < nr; r++) {
        for (int32_t k = 0; k < mult; k += mm) {
          const int32_t o0 = ic * mult + k;
          utvm_mve_dwr_chunk(out + (oy0 + r) * ow * cout, planes + r * sh * sw * pwp, ow, cout, o0, kh, kw, sw, pwp,
                             wt + o0 * taps, rq, zy, lo, hi, right, g, mm);
        }
      }
    }
  }
}

/* g x mm accumulators: (4, 1), (2, 1), (1, 1), (2, 2), (1, 2), (1, 3), (1, 4) (each a constant of
 * the generated call, so that only its loop is compiled) */
UTVM_INLINE int32_t utvm_mve_dwr_s8(void* out, void* x, int32_t h, int32_t w,
                                                                     int32_t c, int32_t mult, int32_t oh, int32_t ow,
                                                                     int32_t kh, int32_t kw, int32_t sh, int32_t sw,
                                                                     int32_t top, int32_t left, void* wt, void* rq,
                                                                     int32_t zx, int32_t zy, int32_t lo, int32_t hi,
                                                                     int32_t right, int32_t g, int32_t mm,
                                                                     int32_t pwp, int32_t rows, void* planes) {
#define UTVM_MVE_DWR_CALL(G, MM)                                                                                   \
  utvm_mve_dwr_impl((int8_t*)out, (const int8_t*)x, h, w, c, mult, oh, ow, kh, kw, sh, sw, top, left,               \
                    (const int8_t*)wt, (const int32_t*)rq, zx, zy, lo, hi, right, G, MM, pwp, rows,        \
                    (int8_t*)planes)
  if (mm == 1 && g == 4) {
    UTVM_MVE_DWR_CALL(4, 1);
  } else if (mm == 1 && g == 2) {
    UTVM_MVE_DWR_CALL(2, 1);
  } else if (mm == 1) {
    UTVM_MVE_DWR_CALL(1, 1);
  } else if (mm == 2 && g == 2) {
    UTVM_MVE_DWR_CALL(2, 2);
  } else if (mm == 2) {
    UTVM_MVE_DWR_CALL(1, 2);
  } else if (mm == 3) {
    UTVM_MVE_DWR_CALL(1, 3);
  } else {
    UTVM_MVE_DWR_CALL(1, 4);
  }
#undef UTVM_MVE_DWR_CALL
  return 0;
}

#endif /* UTVM_KERNELS_DEPTHWISE_MVE_ROW_H_ */
