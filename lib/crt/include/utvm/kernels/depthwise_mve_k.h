/*
 * Helium depthwise convolution of any window (depth multiplier 1, any channel count), one
 * output row per call: utvm_mve_dwk_row_s8 (included by utvm/kernels_mve.h, whose
 * requantization helpers it uses).
 *
 *   out[ox * c + ch] for ox < ow, ch < c,
 * from x (h x w x c): the taps of pixel ox are input rows iy0 + ry * dh (ry < kh) and columns
 * ox * sw - pad_left + rx * dw (rx < kw), weights wt (UTVM_MVE_DWK_W: blocks of four
 * channels, kh x kw x 4 each); the taps outside the input
 * count as the zero point zx (the biases are folded with zx). Nothing is copied: a tap outside
 * the input adds zx times its weight (one VMLA by the scalar zx).
 *
 * Four pixels x four channels per step where the four windows lie inside the input along the
 * row (each weight vector loaded once for the four pixels: 9 instructions per 16 MACs), the
 * others one pixel at a time; the last c % 4 channels under a predicate (VCTP), so that no
 * channel count is refused. The rows of the window outside the input (the top and bottom
 * borders) are zx times the sums of their weights, added once per block of channels. The
 * geometry (h, w, c, ow, sw, pad_left, kh, kw, dh, dw) is passed as constants by the
 * generated code, the helper always inlined: the loops over the taps are unrolled by the
 * compiler where they are short. With UTVM_MVE_RQ_RIGHT (every shift a right shift) the
 * rounding fix of the requantization needs no mask. Plain C (same results) without MVE.
 */
#ifndef UTVM_KERNELS_DEPTHWISE_MVE_K_H_
#define UTVM_KERNELS_DEPTHWISE_MVE_K_H_

#include <stdint.h>

#include "common_mve.h"
#include "copy_mve.h"
#include "requant_mve.h"

#define UTVM_MVE_RQ_RIGHT 16 /* every shift is a right shift of 1..31 */

/* the weight of tap t (ry * kw + rx) of channel ch: blocks of four channels, each its taps'
 * four weights in turn (the last block padded with zeros) */
#define UTVM_MVE_DWK_W(wt, taps, t, ch) ((wt) + ((ch) >> 2) * (taps) * 4 + (t) * 4 + ((ch) & 3))

#ifdef UTVM_MVE_VECTOR
/* int8 lanes of channels a..a+3 widened (p: the predicate of a last partial block, 0: none) */
#define UTVM_MVE_DWK_LD(a, p) ((p) ? vldrbq_z_s32((a), (p)) : vldrbq_s32(a))

/* requantized lanes, stored (p as above) */
UTVM_INLINE void utvm_mve_dwk_store(int8_t* op, int32x4_t v, int32x4_t m,
                                                                     int32x4_t sh, const utvm_mve_rq_t* q,
                                                                     mve_pred16_t p) {
  if (q->mode & UTVM_MVE_RQ_RIGHT) {
    v = vqrdmulhq_s32(v, m);
    v = vqaddq_s32(v, vshrq_n_s32(v, 31));
    v = vrshlq_s32(v, sh);
    v = vaddq_n_s32(v, q->zy);
    v = vminq_s32(vmaxq_s32(v, vdupq_n_s32(q->lo)), vdupq_n_s32(q->hi));
  } else {
    v = utvm_mve_rq_apply4(q, v, m, sh);
  }
  if (p) {
    vstrbq_p_s32(op, v, p);
  } else {
    vstrbq_s32(op, v);
  }
}

/* the bias of channels ch.. plus zx times the weights of the rows outside [ry0, ry1) */
UTVM_INLINE int32x4_t utvm_mve_dwk_start(const utvm_mve_rq_t* q, int32_t ch,
                                                                          const int8_t* wt, int32_t kh,
                                                                          int32_t kw, int32_t ry0, int32_t ry1,
                                                                          int32_t zx, mve_pred16_t p) {
  int32x4_t a = utvm_mve_rq_bias4(q, ch, p);
  for (int32_t ry = 0; ry < kh; ++ry) {
    if (ry >= ry0 && ry < ry1) continue;
    for (int32_t rx = 0; rx < kw; ++rx) a = vmlaq_n_s32(a, UTVM_MVE_DWK_LD(UTVM_MVE_DWK_W(wt, kh * kw, ry * kw + rx, ch), p), zx);
  }
  return a;
}

/* one block of four channels (ch; the output stores under the predicate p, 0: none) of four
 * pixels in the padded rows (every tap inside): row0 points to pixel 0's first tap in the first
 * row, rstride bytes between rows, d between taps, step between pixels; out its first output */
#define UTVM_MVE_DWK_MAC(P, A, INC)                                                                \
  "vldrb.s32 %q[xv], [%[" P "]]" INC "\n\t"                                                     \
  "vmul.i32 %q[xv], %q[xv], %q[wv]\n\t"                                                          \
  "vadd.i32 %q[" A "], %q[" A "], %q[xv]\n\t"
#define UTVM_MVE_DWK_M1(I) UTVM_MVE_DWK_MAC("p0", "a0", I)
#define UTVM_MVE_DWK_M2(I) UTVM_MVE_DWK_M1(I) UTVM_MVE_DWK_MAC("p1", "a1", I)
#define UTVM_MVE_DWK_M3(I) UTVM_MVE_DWK_M2(I) UTVM_MVE_DWK_MAC("p2", "a2", I)
#define UTVM_MVE_DWK_M4(I) UTVM_MVE_DWK_M3(I) UTVM_MVE_DWK_MAC("p3", "a3", I)
#define UTVM_MVE_DWK_ADD1 "add %[p0], %[p0], %[d]\n\t"
#define UTVM_MVE_DWK_ADD2 UTVM_MVE_DWK_ADD1 "add %[p1], %[p1], %[d]\n\t"
#define UTVM_MVE_DWK_ADD3 UTVM_MVE_DWK_ADD2 "add %[p2], %[p2], %[d]\n\t"
#define UTVM_MVE_DWK_ADD4 UTVM_MVE_DWK_ADD3 "add %[p3], %[p3], %[d]\n\t"
#define UTVM_MVE_DWK_OPS                                                                           \
  : [a0] "+w"(a0), [a1] "+w"(a1), [a2] "+w"(a2), [a3] "+w"(a3), [wv] "=&w"(wv), [xv] "=&w"(xv), \
    [wp] "+l"(wp), [p0] "+l"(p0), [p1] "+l"(p1), [p2] "+l"(p2), [p3] "+l"(p3)
/* one tap of N pixels: the pointers moved on by the loads where the taps are at most 127
 * bytes apart, else by ADDs */
#define UTVM_MVE_DWK_TAP(N)                                                                        \
  if (UTVM_MVE_CONSTANT(d) && d <= 127) {                                                        \
    __asm__("vldrb.s32 %q[wv], [%[wp]], #4\n\t" UTVM_MVE_DWK_M##N(", %[d]") UTVM_MVE_DWK_OPS      \
            : [d] "i"(d)                                                                           \
            : "memory");                                                                           \
  } else {                                                                                         \
    __asm__("vldrb.s32 %q[wv], [%[wp]], #4\n\t" UTVM_MVE_DWK_M##N("") UTVM_MVE_DWK_ADD##N          \
                UTVM_MVE_DWK_OPS                                                                   \
            : [d] "r"(d)                                                                           \
            : "memory");                                                                           \
  }

/* one block of four channels (ch; the output stores under the predicate p, 0: none) of n <= 4
 * pixels in the padded rows (every tap inside): row0 points to pixel 0's first tap in the first
 * row, rstride bytes between rows, d between taps, step between pixels; out its first output.
 * Per tap 1 + 3n instructions for 4n MACs. */
UTVM_INLINE void utvm_mve_dwk_group_block(
    int8_t* out, int32_t n, const int8_t* row0, int32_t ch, int32_t c, int32_t step, int32_t d, int32_t rstride,
    int32_t kh, int32_t kw, int32_t ry0, int32_t ry1, const int8_t* wt, int32_t zx, const utvm_mve_rq_t* q,
    mve_pred16_t p) {
  int32x4_t a0 = utvm_mve_dwk_start(q, ch, wt, kh, kw, ry0, ry1, zx, p);
  int32x4_t a1 = a0, a2 = a0, a3 = a0;
  int32x4_t wv, xv;
  for (int32_t ry = ry0; ry < ry1; ++ry) {
    const int8_t* p0 = row0 + (ry - ry0) * rstride + ch;
    const int8_t* p1 = p0 + step;
    const int8_t* p2 = p1 + step;
    const int8_t* p3 = p2 + step;
    const int8_t* wp = UTVM_MVE_DWK_W(wt, kh * kw, ry * kw, ch);
#pragma GCC unroll 16
    for (int32_t rx = 0; rx < kw; ++rx) {
      if (n == 4) {
        UTVM_MVE_DWK_TAP(4)
      } else if (n == 3) {
        UTVM_MVE_DWK_TAP(3)
      } else if (n == 2) {
        UTVM_MVE_DWK_TAP(2)
      } else {
        UTVM_MVE_DWK_TAP(1)
      }
    }
  }
  int32x4_t m = utvm_mve_rq_mult4(q, ch, p);
  int32x4_t sh = utvm_mve_rq_shift4(q, ch, p);
  int8_t* op = out + ch;
  utvm_mve_dwk_store(op, a0, m, sh, q, p);
  if (n > 1) utvm_mve_dwk_store(op + c, a1, m, sh, q, p);
  if (n > 2) utvm_mve_dwk_store(op + 2 * c, a2, m, sh, q, p);
  if (n > 3) utvm_mve_dwk_store(op + 3 * c, a3, m, sh, q, p);
}
#endif

#ifdef UTVM_MVE_VECTOR
/* n bytes copied: 16 at a time, the last n % 16 under a predicate */
UTVM_INLINE void utvm_mve_dwk_copy(int8_t* dst, const int8_t* src, int32_t n) {
  int32_t k = 0;
  for (; k + 16 <= n; k += 16) vstrbq_s8(dst + k, vldrbq_s8(src + k));
  if (k < n) {
    mve_pred16_t p = vctp8q((uint32_t)(n - k));
    vstrbq_p_s8(dst + k, vldrbq_z_s8(src + k, p), p);
  }
}
#endif

/* the first tap index t of n (t * step + o0 >= 0) and one past the last (t * step + o0 < lim) */
static inline int32_t utvm_mve_dwk_first(int32_t o0, int32_t step, int32_t n) {
  int32_t t = 0;
  while (t < n && o0 + t * step < 0) ++t;
  return t;
}

static inline int32_t utvm_mve_dwk_end(int32_t o0, int32_t step, int32_t n, int32_t lim) {
  int32_t t = n;
  while (t > 0 && o0 + (t - 1) * step >= lim) --t;
  return t;
}

/* int8 bytes of the padded rows */
static inline int32_t utvm_mve_dwk_scratch(int32_t ow, int32_t sw, int32_t kh, int32_t kw, int32_t dw, int32_t c) {
  return kh * ((ow - 1) * sw + (kw - 1) * dw + 1) * ((c + 3) & ~3) + 16;
}

UTVM_INLINE void utvm_mve_dwk_row_impl(
    int8_t* out, const int8_t* x, int32_t h, int32_t w, int32_t c, int32_t iy0, int32_t ow, int32_t sw,
    int32_t pad_left, int32_t kh, int32_t kw, int32_t dh, int32_t dw, const int8_t* wt, int32_t zx,
    utvm_mve_rq_t rq, int8_t* rows) {
  const utvm_mve_rq_t* q = &rq; /* a copy: the int8 stores would otherwise make gcc reload its fields */
  int32_t ry0 = utvm_mve_dwk_first(iy0, dh, kh);
  int32_t ry1 = utvm_mve_dwk_end(iy0, dh, kh, h);
  if (ry1 < ry0) ry1 = ry0;
#ifdef UTVM_MVE_VECTOR
  /* the rows of the window inside the input, each padded with the zero point to every column
   * a group of four pixels reads, channels in blocks of four (c4 bytes a pixel) */
  int32_t c4 = (c + 3) & ~3;
  int32_t wpad = (ow - 1) * sw + (kw - 1) * dw + 1;
  int32_t lo = pad_left < wpad ? pad_left : wpad;
  int32_t hi = pad_left + w < wpad ? pad_left + w : wpad;
  /* VALID windows on 4n channels read the input in place */
  int32_t direct = c == c4 && pad_left == 0 && wpad <= w;
  for (int32_t ry = ry0; ry < ry1 && !direct; ++ry) {
    int8_t* dst = rows + (ry - ry0) * wpad * c4;
    const int8_t* src = x + (iy0 + ry * dh) * w * c;
    utvm_mve_fill_s8(dst, zx, lo * c4);
    if (c == c4) {
      utvm_mve_dwk_copy(dst + lo * c4, src + (lo - pad_left) * c, (hi - lo) * c);
    } else if (c < 16) {
      /* one vector a pixel (the bytes past c are overwritten by the next pixel or never read:
       * the weights of the padding channels are zero) */
      mve_pred16_t pc = vctp8q((uint32_t)c);
      for (int32_t k = lo; k < hi; ++k) vstrbq_s8(dst + k * c4, vldrbq_z_s8(src + (k - pad_left) * c, pc));
    } else {
      for (int32_t k = lo; k < hi; ++k) utvm_mve_dwk_copy(dst + k * c4, src + (k - pad_left) * c, c);
    }
    utvm_mve_fill_s8(dst + hi * c4, zx, (wpad - hi) * c4);
  }
  int32_t step = sw * c4, d = dw * c4, rstride = direct ? dh * w * c : wpad * c4;
  int32_t full = c & ~3;
  const int8_t* first = direct ? x + (iy0 + ry0 * dh) * w * c : rows;
  /* groups of four pixels, then one of the ow % 4 left */
  for (int32_t ox = 0; ox < ow; ox += 4) {
    int32_t n = ow - ox;
    const int8_t* r = first + ox * step;
    int8_t* op = out + ox * c;
    if (n >= 4) {
      for (int32_t ch = 0; ch < full; ch += 4)
        utvm_mve_dwk_group_block(op, 4, r, ch, c, step, d, rstride, kh, kw, ry0, ry1, wt, zx, q, 0);
      if (c & 3)
        utvm_mve_dwk_group_block(op, 4, r, full, c, step, d, rstride, kh, kw, ry0, ry1, wt, zx, q, vctp32q(c - full));
    } else {
#define UTVM_MVE_DWK_LAST(N)                                                                                 \
  for (int32_t ch = 0; ch < full; ch += 4)                                                                   \
    utvm_mve_dwk_group_block(op, N, r, ch, c, step, d, rstride, kh, kw, ry0, ry1, wt, zx, q, 0);             \
  if (c & 3)                                                                                                 \
    utvm_mve_dwk_group_block(op, N, r, full, c, step, d, rstride, kh, kw, ry0, ry1, wt, zx, q, vctp32q(c - full));
      if (n == 3) {
        UTVM_MVE_DWK_LAST(3)
      } else if (n == 2) {
        UTVM_MVE_DWK_LAST(2)
      } else {
        UTVM_MVE_DWK_LAST(1)
      }
#undef UTVM_MVE_DWK_LAST
    }
  }
#else
  (void)rows;
  for (int32_t ox = 0; ox < ow; ++ox) {
    for (int32_t ch = 0; ch < c; ++ch) {
      int32_t acc = 0;
      for (int32_t ry = 0; ry < kh; ++ry) {
        int32_t iy = iy0 + ry * dh;
        for (int32_t rx = 0; rx < kw; ++rx) {
          int32_t ix = ox * sw - pad_left + rx * dw;
          int32_t v = ry >= ry0 && ry < ry1 && ix >= 0 && ix < w ? x[(iy * w + ix) * c + ch] : zx;
          acc += v * *UTVM_MVE_DWK_W(wt, kh * kw, ry * kw + rx, ch);
        }
      }
      out[ox * c + ch] = utvm_mve_requant1(q, acc, ch);
    }
  }
#endif
}

/* the entry point (requantization arguments as utvm_mve_dw3x3_row_s8's) */
UTVM_INLINE int32_t utvm_mve_dwk_row_s8(void* out, void* x, int32_t h, int32_t w, int32_t c, int32_t iy0,
                                          int32_t ow, int32_t sw, int32_t pad_left, int32_t kh, int32_t kw,
                                          int32_t dh, int32_t dw, void* wt, int32_t zx, void* bias, void* mult,
                                          void* shift, int32_t m0, int32_t s0, int32_t mode, int32_t zy, int32_t lo,
                                          int32_t hi, void* rows) {
  utvm_mve_rq_t q = {(const int32_t*)bias, (const int32_t*)mult, (const int8_t*)shift, m0, s0, mode, zy, lo, hi};
  utvm_mve_dwk_row_impl((int8_t*)out, (const int8_t*)x, h, w, c, iy0, ow, sw, pad_left, kh, kw, dh, dw,
                        (const int8_t*)wt, zx, q, (int8_t*)rows);
  return 0;
}

#endif /* UTVM_KERNELS_DEPTHWISE_MVE_K_H_ */
