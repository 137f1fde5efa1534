/* utvm/kernels/gemm_mve.h: moved from kernels_mve.h by the split of issue 24 (one header per
 * operator family and instruction set, the bodies unchanged). */
#ifndef UTVM_KERNELS_GEMM_MVE_H_
#define UTVM_KERNELS_GEMM_MVE_H_

#include "common_mve.h"
#include "requant_mve.h"
#include "copy_mve.h"


/* One 16-lane step of four pixels' dot products with the same 16 weights: the weight and
 * pixel pointers advance by 16 (post-increment addressing). The _TAIL form reads the last
 * k % 16 lanes under predicate p and leaves the pointers. */
#define UTVM_MVE_MAC4_STEP(a0, a1, a2, a3, wp, p0, p1, p2, p3) \
  do { \
    int8x16_t utvm_wv_ = vldrbq_s8(wp); \
    (a0) = vmladavaq_s8((a0), vldrbq_s8(p0), utvm_wv_); \
    (a1) = vmladavaq_s8((a1), vldrbq_s8(p1), utvm_wv_); \
    (a2) = vmladavaq_s8((a2), vldrbq_s8(p2), utvm_wv_); \
    (a3) = vmladavaq_s8((a3), vldrbq_s8(p3), utvm_wv_); \
    (wp) += 16; \
    (p0) += 16; \
    (p1) += 16; \
    (p2) += 16; \
    (p3) += 16; \
  } while (0)
#define UTVM_MVE_MAC4_TAIL(a0, a1, a2, a3, wp, p0, p1, p2, p3, p) \
  do { \
    int8x16_t utvm_wv_ = vldrbq_z_s8((wp), (p)); \
    (a0) = vmladavaq_s8((a0), vldrbq_z_s8((p0), (p)), utvm_wv_); \
    (a1) = vmladavaq_s8((a1), vldrbq_z_s8((p1), (p)), utvm_wv_); \
    (a2) = vmladavaq_s8((a2), vldrbq_z_s8((p2), (p)), utvm_wv_); \
    (a3) = vmladavaq_s8((a3), vldrbq_z_s8((p3), (p)), utvm_wv_); \
  } while (0)

/* col[(ry * kw + rx) * c + ch] = x[iy0 + ry * dh][ix0 + rx * dw][ch] (x: h x w x c), or zx
 * outside the input */
static inline void utvm_mve_im2col_impl(int8_t* col, const int8_t* x, int32_t h, int32_t w, int32_t c,
                                      int32_t iy0, int32_t ix0, int32_t kh, int32_t kw, int32_t dh,
                                      int32_t dw, int32_t zx) {
  int32_t row_bytes = kw * c;
  int32_t whole = dw == 1 && ix0 >= 0 && ix0 + kw <= w;
  for (int32_t ry = 0; ry < kh; ++ry, col += row_bytes) {
    int32_t iy = iy0 + ry * dh;
    if (iy < 0 || iy >= h) {
      utvm_mve_fill_s8(col, zx, row_bytes);
      continue;
    }
    const int8_t* row = x + iy * w * c;
    if (whole) {
      utvm_mve_copy_s8(col, row + ix0 * c, row_bytes);
      continue;
    }
    for (int32_t rx = 0; rx < kw; ++rx) {
      int32_t ix = ix0 + rx * dw;
      if (ix < 0 || ix >= w) {
        utvm_mve_fill_s8(col + rx * c, zx, c);
      } else {
        utvm_mve_copy_s8(col + rx * c, row + ix * c, c);
      }
    }
  }
}

#ifdef UTVM_MVE_VECTOR
/* The np = 1..4 pixel form of utvm_mve_gemm_impl for k >= 64 (full = k rounded down to 16,
 * tail = k % 16; inlined twice, with and without a tail): four channels at a time, the dot
 * products of the four pixels with each channel (one filter load and four VMLADAVA per 16
 * products, the first 16 without accumulating) written to a 4 x 4 block whose rows (one
 * pixel, four channels) are
 * then requantized as vectors and stored contiguously. The filter pointer runs on from one
 * channel to the next (the rows are contiguous). */
UTVM_INLINE void utvm_mve_gemm4_block(
    int8_t* out, int32_t np, int32_t out_stride, const int8_t* col, int32_t col_stride, const int8_t* w,
    int32_t full, int32_t tail, int32_t cout, const utvm_mve_rq_t* q) {
  const int8_t* c1 = col + col_stride;
  const int8_t* c2 = np > 2 ? c1 + col_stride : col;
  const int8_t* c3 = np > 3 ? c2 + col_stride : col;
  mve_pred16_t ptail = vctp8q((uint32_t)tail);
  int32_t rest = (full >> 4) - 1; /* loop iterations after the first 16 products */
  const int8_t* rows[4] = {col, c1, c2, c3};
  int32_t blk[16];
  int32x4_t zy = vdupq_n_s32(q->zy), lo = vdupq_n_s32(q->lo), hi = vdupq_n_s32(q->hi), zero = vdupq_n_s32(0);
  const int8_t* wp = w;
  for (int32_t o = 0; o < cout; o += 4) {
    int32_t nc = cout - o < 4 ? cout - o : 4;
    int32_t* b = blk;
    for (int32_t j = 0; j < nc; ++j, ++b) {
      const int8_t* p0 = rows[0];
      const int8_t* p1 = rows[1];
      const int8_t* p2 = rows[2];
      const int8_t* p3 = rows[3];
      int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
      if (full) {
        int8x16_t wv = vldrbq_s8(wp);
        a0 = vmladavq_s8(vldrbq_s8(p0), wv);
        a1 = vmladavq_s8(vldrbq_s8(p1), wv);
        a2 = vmladavq_s8(vldrbq_s8(p2), wv);
        a3 = vmladavq_s8(vldrbq_s8(p3), wv);
        wp += 16;
        p0 += 16;
        p1 += 16;
        p2 += 16;
        p3 += 16;
        /* pointers stepped by the loads (post-increment addressing, no address arithmetic) */
        for (int32_t i = rest; i > 0; --i) {
          UTVM_MVE_MAC4_STEP(a0, a1, a2, a3, wp, p0, p1, p2, p3);
        }
      }
      if (tail) {
        UTVM_MVE_MAC4_TAIL(a0, a1, a2, a3, wp, p0, p1, p2, p3, ptail);
        wp += tail;
      }
      b[0] = a0;
      b[4] = a1;
      b[8] = a2;
      b[12] = a3;
    }
    /* the channels' constants once per block; per pixel the same instructions whatever the
     * mode (a left shift by max(shift, 0): by 0 without left shifts) */
    mve_pred16_t pc = vctp32q((uint32_t)nc);
    int32x4_t bias = utvm_mve_rq_bias4(q, o, pc);
    int32x4_t m = utvm_mve_rq_mult4(q, o, pc);
    int32x4_t sh = utvm_mve_rq_shift4(q, o, pc);
    int32x4_t sl = vmaxq_s32(sh, zero);
    int32x4_t sr = vminq_s32(sh, zero);
    int8_t* op = out + o;
    const int32_t* bp = blk;
    for (int32_t p = 0; p < np; ++p, op += out_stride, bp += 4) {
      int32x4_t v = vshlq_s32(vaddq_s32(vldrwq_s32(bp), bias), sl);
      v = vqrdmulhq_s32(v, m);
      v = vqaddq_s32(v, vshrq_n_s32(vandq_s32(v, sr), 31));
      v = vaddq_s32(vrshlq_s32(v, sr), zy);
      vstrbq_p_s32(op, vminq_s32(vmaxq_s32(v, lo), hi), pc);
    }
  }
}

/* the two forms of utvm_mve_gemm4_block, separate functions: inlined into
 * utvm_mve_gemm_impl beside its other paths, the compiler spills the block's registers */
__attribute__((noinline)) static void utvm_mve_gemm4_block_tail(int8_t* out, int32_t np, int32_t out_stride,
                                                                const int8_t* col, int32_t col_stride,
                                                                const int8_t* w, int32_t full, int32_t tail,
                                                                int32_t cout, utvm_mve_rq_t rq) {
  utvm_mve_gemm4_block(out, np, out_stride, col, col_stride, w, full, tail, cout, &rq);
}

__attribute__((noinline)) static void utvm_mve_gemm4_block_full(int8_t* out, int32_t np, int32_t out_stride,
                                                                const int8_t* col, int32_t col_stride,
                                                                const int8_t* w, int32_t full, int32_t cout,
                                                                utvm_mve_rq_t rq) {
  utvm_mve_gemm4_block(out, np, out_stride, col, col_stride, w, full, 0, cout, &rq);
}
#endif

/* out[p * out_stride + o] for p < np (1..4), o < cout:
 *   requant(sum_j col[p * col_stride + j] * w[o * k + j], o)  (j < k) */
static inline void utvm_mve_gemm_impl(int8_t* out, int32_t np, int32_t out_stride, const int8_t* col,
                                      int32_t col_stride, const int8_t* w, int32_t k, int32_t cout,
                                      utvm_mve_rq_t rq) {
  /* a copy: the stores to out (int8_t) would otherwise make the compiler reload the fields */
  const utvm_mve_rq_t* q = &rq;
#ifdef UTVM_MVE_VECTOR
  int32_t full = k & ~15;
  int32_t tail = k - full;
  mve_pred16_t ptail = vctp8q((uint32_t)tail);
  if (np == 1) {
    /* four channels at a time: one input load for four filter rows, one vector requantization */
    for (int32_t o = 0; o < cout; o += 4) {
      mve_pred16_t pc = o + 4 <= cout ? 0 : vctp32q((uint32_t)(cout - o));
      const int8_t* w0 = w + o * k;
      const int8_t* w1 = o + 1 < cout ? w0 + k : w0;
      const int8_t* w2 = o + 2 < cout ? w0 + 2 * k : w0;
      const int8_t* w3 = o + 3 < cout ? w0 + 3 * k : w0;
      const int8_t* xp = col;
      int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
      for (int32_t j = full >> 4; j > 0; --j) {
        int8x16_t xv = vldrbq_s8(xp);
        a0 = vmladavaq_s8(a0, xv, vldrbq_s8(w0));
        a1 = vmladavaq_s8(a1, xv, vldrbq_s8(w1));
        a2 = vmladavaq_s8(a2, xv, vldrbq_s8(w2));
        a3 = vmladavaq_s8(a3, xv, vldrbq_s8(w3));
        xp += 16;
        w0 += 16;
        w1 += 16;
        w2 += 16;
        w3 += 16;
      }
      if (tail) {
        int8x16_t xv = vldrbq_z_s8(xp, ptail);
        a0 = vmladavaq_s8(a0, xv, vldrbq_z_s8(w0, ptail));
        a1 = vmladavaq_s8(a1, xv, vldrbq_z_s8(w1, ptail));
        a2 = vmladavaq_s8(a2, xv, vldrbq_z_s8(w2, ptail));
        a3 = vmladavaq_s8(a3, xv, vldrbq_z_s8(w3, ptail));
      }
      int32x4_t v = vdupq_n_s32(a0);
      v = vsetq_lane_s32(a1, v, 1);
      v = vsetq_lane_s32(a2, v, 2);
      v = vsetq_lane_s32(a3, v, 3);
      v = vaddq_s32(v, utvm_mve_rq_bias4(q, o, pc));
      v = utvm_mve_rq_apply4(q, v, utvm_mve_rq_mult4(q, o, pc), utvm_mve_rq_shift4(q, o, pc));
      if (pc) {
        vstrbq_p_s32(out + o, v, pc);
      } else {
        vstrbq_s32(out + o, v);
      }
    }
    return;
  }
  /* deep dot products (k >= 64): four channels per block, vector requantization per pixel
   * (utvm_mve_gemm4_block); shallower ones (the requantization a larger share): one channel
   * at a time, its four pixels requantized in one vector and scattered */
  if (k >= 64) {
    if (tail) {
      utvm_mve_gemm4_block_tail(out, np, out_stride, col, col_stride, w, full, tail, cout, rq);
    } else {
      utvm_mve_gemm4_block_full(out, np, out_stride, col, col_stride, w, full, cout, rq);
    }
    return;
  }
  const int8_t* c0 = col;
  const int8_t* c1 = col + col_stride;
  const int8_t* c2 = np > 2 ? col + 2 * col_stride : col;
  const int8_t* c3 = np > 3 ? col + 3 * col_stride : col;
  mve_pred16_t pout = vctp32q((uint32_t)np);
  uint32x4_t offsets = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)out_stride);
  int32x4_t vlo = vdupq_n_s32(q->lo);
  int32x4_t vhi = vdupq_n_s32(q->hi);
  int32_t left = q->mode & UTVM_MVE_RQ_LEFT;
  for (int32_t o = 0; o < cout; ++o) {
    const int8_t* wp = w + o * k;
    int32_t a0 = utvm_mve_rq_bias(q, o);
    int32_t a1 = a0, a2 = a0, a3 = a0;
    const int8_t* p0 = c0;
    const int8_t* p1 = c1;
    const int8_t* p2 = c2;
    const int8_t* p3 = c3;
    /* pointers stepped by the loads (post-increment addressing, no address arithmetic) */
    for (int32_t j = full >> 4; j > 0; --j) {
      UTVM_MVE_MAC4_STEP(a0, a1, a2, a3, wp, p0, p1, p2, p3);
    }
    if (tail) {
      UTVM_MVE_MAC4_TAIL(a0, a1, a2, a3, wp, p0, p1, p2, p3, ptail);
    }
    int32x4_t v = vdupq_n_s32(a0);
    v = vsetq_lane_s32(a1, v, 1);
    v = vsetq_lane_s32(a2, v, 2);
    v = vsetq_lane_s32(a3, v, 3);
    int32_t shift = utvm_mve_rq_shift(q, o);
    if (left && shift > 0) v = vshlq_r_s32(v, shift);
    v = vqrdmulhq_n_s32(v, utvm_mve_rq_mult(q, o));
    int32_t right = shift < 0 ? shift : 0;
    v = vqaddq_s32(v, vshrq_n_s32(vandq_s32(v, vdupq_n_s32(right)), 31));
    v = vrshlq_n_s32(v, right);
    v = vaddq_n_s32(v, q->zy);
    v = vminq_s32(vmaxq_s32(v, vlo), vhi);
    vstrbq_scatter_offset_p_s32(out + o, offsets, v, pout);
  }
#else
  for (int32_t p = 0; p < np; ++p) {
    const int8_t* cp = col + p * col_stride;
    for (int32_t o = 0; o < cout; ++o) {
      const int8_t* wp = w + o * k;
      int32_t acc = 0;
      for (int32_t j = 0; j < k; ++j) acc += cp[j] * wp[j];
      out[p * out_stride + o] = utvm_mve_requant1(q, acc, o);
    }
  }
#endif
}

/* The entry points the generated kernels call: TVM declares them as int32_t functions of
 * void* and int32_t arguments, so they are defined with exactly these types. The
 * requantization arguments (see above): bias, mult, shift, m0, s0, mode, zy, lo, hi. */

static inline int32_t utvm_mve_im2col_s8(void* col, void* x, int32_t h, int32_t w, int32_t c, int32_t iy0,
                                         int32_t ix0, int32_t kh, int32_t kw, int32_t dh, int32_t dw,
                                         int32_t zx) {
  utvm_mve_im2col_impl((int8_t*)col, (const int8_t*)x, h, w, c, iy0, ix0, kh, kw, dh, dw, zx);
  return 0;
}

static inline int32_t utvm_mve_gemm_s8(void* out, int32_t np, int32_t out_stride, void* col, int32_t col_stride,
                                       void* w, int32_t k, int32_t cout, void* bias, void* mult, void* shift,
                                       int32_t m0, int32_t s0, int32_t mode, int32_t zy, int32_t lo, int32_t hi) {
  utvm_mve_rq_t q = {(const int32_t*)bias, (const int32_t*)mult, (const int8_t*)shift, m0, s0, mode, zy, lo, hi};
  utvm_mve_gemm_impl((int8_t*)out, np, out_stride, (const int8_t*)col, col_stride, (const int8_t*)w, k, cout, q);
  return 0;
}

#endif /* UTVM_KERNELS_GEMM_MVE_H_ */
