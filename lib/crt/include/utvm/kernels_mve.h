/*
 * int8 convolution helpers for Helium (MVE: Cortex-M52, M55, M85) that utvm's generated
 * kernels call (header-only, C99). Each helper does a whole inner loop; the generated code
 * keeps the loops over output rows and pixel groups. With __ARM_FEATURE_MVE they use vector
 * instructions, elsewhere plain C with the same results (the arithmetic is TFLite's,
 * bit-exact).
 *
 * Requantization ("rq", utvm_mve_rq_t): per channel o,
 *   y = clamp(MultiplyByQuantizedMultiplier(acc + bias[o], mult[o], shift[o]) + zy, lo, hi)
 * (shifts in TFLite's convention: > 0 left, < 0 right), stored as compactly as the generic
 * kernels store it: the folded biases are an int32 array; the multipliers an int32 array
 * (UTVM_MVE_RQ_MULT) or one value m0; the shifts one value s0, or right shifts 0..31 in the
 * low byte of the bias words (UTVM_MVE_RQ_PACKED: bias * 256 + (shift & 255), the byte VRSHL by a
 * register reads as its signed shift), or an int8 array
 * (UTVM_MVE_RQ_SHIFT8). The generated code passes the unused pointers as the bias pointer.
 * Vector form: VQRDMULH is gemmlowp's SaturatingRoundingDoublingHighMul; the rounding right
 * shift of gemmlowp (ties away from zero) is VRSHL after subtracting one from negative values
 * (only where the shift is not zero).
 *
 * - utvm_mve_copy_s8(dst, src, n) / utvm_mve_fill_s8(dst, v, n): n bytes copied / set.
 * - utvm_mve_im2col_s8(...): the kh x kw x c input patch of one output pixel, contiguous, the
 *   taps outside the input filled with the input zero point.
 * - utvm_mve_gemm_s8(...): np (1..4) pixels x cout channels: dot products of k int8 values
 *   (pixel rows with a stride, filter rows contiguous), requantized and stored; one pixel
 *   (fully connected layers) four channels at a time; several pixels with k >= 64 in blocks of
 *   four channels (each pixel's four results requantized as one vector), with smaller k one
 *   channel at a time (the pixels' four results in one vector).
 * - utvm_mve_conv_row_s8(...): one output row of a convolution read in place (cin a multiple
 *   of 16, no scratch): per pixel four channels at a time, one input load and four filter
 *   loads per 16 bytes of each window row (filters interleaved four channels at a time); the
 *   taps in the padding multiply the zero point instead of an input load.
 * - utvm_mve_dw3x3_row_s8(...): one output row of a 3x3 depthwise convolution, all channels
 *   (a multiple of 4), four pixels at a time sharing the filter loads (the last ones one at
 *   a time), read in place (no scratch): a tap in the padding adds the zero point times its
 *   weight (VMLA by a scalar) instead of an input load and multiply.
 * - utvm_mve_add_s8(...): TFLite's int8 ADD of two tensors of n elements (same shape),
 *   16 elements per step (4 x int32x4), the last n % 16 four at a time under a predicate.
 */
#ifndef UTVM_KERNELS_MVE_H_
#define UTVM_KERNELS_MVE_H_

#include <stdint.h>

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>
#define UTVM_MVE_VECTOR 1
#endif

/* a value known when compiling with optimization (inline assembly may then take it as an
 * immediate operand; without optimization nothing is, and the helpers take their general path) */
#ifdef __OPTIMIZE__
#define UTVM_MVE_CONSTANT(v) __builtin_constant_p(v)
#else
#define UTVM_MVE_CONSTANT(v) 0
#endif

#define UTVM_MVE_RQ_MULT 1   /* per-channel multipliers (int32 array) */
#define UTVM_MVE_RQ_PACKED 2 /* per-channel shifts in the low byte of the bias words */
#define UTVM_MVE_RQ_SHIFT8 4 /* per-channel shifts (int8 array) */
#define UTVM_MVE_RQ_LEFT 8   /* some shift is a left shift */
#define UTVM_MVE_RQ_SHIFT_BITS 8

typedef struct {
  const int32_t* bias;  /* folded biases (or bias_shift words) */
  const int32_t* mult;  /* with UTVM_MVE_RQ_MULT */
  const int8_t* shift;  /* with UTVM_MVE_RQ_SHIFT8 */
  int32_t m0, s0, mode, zy, lo, hi;
} utvm_mve_rq_t;

static inline int32_t utvm_mve_rq_bias(const utvm_mve_rq_t* q, int32_t o) {
  int32_t b = q->bias[o];
  return (q->mode & UTVM_MVE_RQ_PACKED) ? b >> UTVM_MVE_RQ_SHIFT_BITS : b;
}

static inline int32_t utvm_mve_rq_mult(const utvm_mve_rq_t* q, int32_t o) {
  return (q->mode & UTVM_MVE_RQ_MULT) ? q->mult[o] : q->m0;
}

static inline int32_t utvm_mve_rq_shift(const utvm_mve_rq_t* q, int32_t o) {
  if (q->mode & UTVM_MVE_RQ_PACKED) return ((q->bias[o] & 255) ^ 128) - 128;
  return (q->mode & UTVM_MVE_RQ_SHIFT8) ? (int32_t)q->shift[o] : q->s0;
}

/* TFLite MultiplyByQuantizedMultiplier, one value (plain C, for the fallbacks) */
static inline int32_t utvm_mve_mbqm(int32_t x, int32_t m, int32_t shift) {
  int32_t left = shift > 0 ? shift : 0;
  int32_t right = shift > 0 ? 0 : -shift;
  int64_t ab = (int64_t)(int32_t)((uint32_t)x << left) * m;
  int64_t nudge = ab >= 0 ? ((int64_t)1 << 30) : 1 - ((int64_t)1 << 30);
  int64_t q = (ab + nudge) / ((int64_t)1 << 31);
  int32_t high = q > INT32_MAX ? INT32_MAX : (int32_t)q;
  int32_t mask = (int32_t)(((int64_t)1 << right) - 1);
  int32_t threshold = (mask >> 1) + (high < 0 ? 1 : 0);
  return (high >> right) + ((high & mask) > threshold ? 1 : 0);
}

static inline int8_t utvm_mve_clamp_s8(int32_t v, int32_t lo, int32_t hi) {
  return (int8_t)(v < lo ? lo : (v > hi ? hi : v));
}

/* the requantized int8 value of accumulator acc (without bias) of channel o (plain C) */
static inline int8_t utvm_mve_requant1(const utvm_mve_rq_t* q, int32_t acc, int32_t o) {
  int32_t v = utvm_mve_mbqm(acc + utvm_mve_rq_bias(q, o), utvm_mve_rq_mult(q, o), utvm_mve_rq_shift(q, o));
  return utvm_mve_clamp_s8(v + q->zy, q->lo, q->hi);
}

#ifdef UTVM_MVE_VECTOR
/* biases, multipliers and shifts of channels o..o+3; with p != 0 only the lanes of the
 * predicate p are read (the others are 0) */
static inline int32x4_t utvm_mve_ld32(const int32_t* a, mve_pred16_t p) {
  return p ? vldrwq_z_s32(a, p) : vldrwq_s32(a);
}

static inline int32x4_t utvm_mve_rq_bias4(const utvm_mve_rq_t* q, int32_t o, mve_pred16_t p) {
  int32x4_t b = utvm_mve_ld32(q->bias + o, p);
  return (q->mode & UTVM_MVE_RQ_PACKED) ? vshrq_n_s32(b, UTVM_MVE_RQ_SHIFT_BITS) : b;
}

static inline int32x4_t utvm_mve_rq_mult4(const utvm_mve_rq_t* q, int32_t o, mve_pred16_t p) {
  return (q->mode & UTVM_MVE_RQ_MULT) ? utvm_mve_ld32(q->mult + o, p) : vdupq_n_s32(q->m0);
}

static inline int32x4_t utvm_mve_rq_shift4(const utvm_mve_rq_t* q, int32_t o, mve_pred16_t p) {
  if (q->mode & UTVM_MVE_RQ_PACKED) {
    return vshrq_n_s32(vshlq_n_s32(utvm_mve_ld32(q->bias + o, p), 24), 24);
  }
  if (q->mode & UTVM_MVE_RQ_SHIFT8) return p ? vldrbq_z_s32(q->shift + o, p) : vldrbq_s32(q->shift + o);
  return vdupq_n_s32(q->s0);
}

/* requantized lanes (accumulators with the bias): lane i with multiplier m[i], shift sh[i] */
static inline int32x4_t utvm_mve_rq_apply4(const utvm_mve_rq_t* q, int32x4_t v, int32x4_t m, int32x4_t sh) {
  if (q->mode & UTVM_MVE_RQ_LEFT) {
    v = vshlq_s32(v, vmaxq_s32(sh, vdupq_n_s32(0)));
    sh = vminq_s32(sh, vdupq_n_s32(0));
  }
  v = vqrdmulhq_s32(v, m);
  /* minus one for negative values when shifting right: gemmlowp rounds ties away from 0 */
  v = vqaddq_s32(v, vshrq_n_s32(vandq_s32(v, sh), 31));
  v = vrshlq_s32(v, sh);
  v = vaddq_n_s32(v, q->zy);
  return vminq_s32(vmaxq_s32(v, vdupq_n_s32(q->lo)), vdupq_n_s32(q->hi));
}

/* acc + a * b lane by lane (MVE multiplies vectors by vectors without accumulating) */
static inline int32x4_t utvm_mve_mla(int32x4_t acc, int32x4_t a, int32x4_t b) {
  return vaddq_s32(acc, vmulq_s32(a, b));
}
#endif

static inline void utvm_mve_copy_s8(int8_t* dst, const int8_t* src, int32_t n) {
#ifdef UTVM_MVE_VECTOR
  for (; n > 0; n -= 16, dst += 16, src += 16) {
    mve_pred16_t p = vctp8q((uint32_t)n);
    vstrbq_p_s8(dst, vldrbq_z_s8(src, p), p);
  }
#else
  for (int32_t i = 0; i < n; ++i) dst[i] = src[i];
#endif
}

static inline void utvm_mve_fill_s8(int8_t* dst, int32_t v, int32_t n) {
#ifdef UTVM_MVE_VECTOR
  int8x16_t vv = vdupq_n_s8((int8_t)v);
  for (; n > 0; n -= 16, dst += 16) vstrbq_p_s8(dst, vv, vctp8q((uint32_t)n));
#else
  for (int32_t i = 0; i < n; ++i) dst[i] = (int8_t)v;
#endif
}

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
__attribute__((always_inline)) static inline void utvm_mve_gemm4_block(
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

/* 3x3 depthwise convolution (depth multiplier 1), one output row at a time:
 *   out[ox * c + ch] for ox < ow, ch < c (a multiple of 4),
 * from x (h x w x c): the taps of pixel ox are input rows iy0 + ry * dh and columns
 * ox * sw - pad_left + rx * dw (ry, rx < 3), weights wt (3 x 3 x c); the taps outside the input
 * count as the zero point zx (the biases are folded with zx). Nothing is copied: a tap outside
 * the input adds zx times its weight (one VMLA by the scalar zx: cheaper than the tap it
 * replaces). Tap masks: bit ry * 3 + rx of a pixel, bit p * 3 + rx (column rx of pixel p) of a
 * group of four pixels, set when the tap is inside the input. */

/* bit rx: column ix0 + rx * dw inside the input (0 <= column < w) */
static inline int32_t utvm_mve_dw_cols(int32_t w, int32_t ix0, int32_t dw) {
  int32_t m = 0;
  for (int32_t rx = 0; rx < 3; ++rx) {
    int32_t ix = ix0 + rx * dw;
    m |= (ix >= 0 && ix < w) << rx;
  }
  return m;
}

/* the 9-bit tap mask of a pixel: rows rv (bit ry: the row inside), columns cols */
static inline int32_t utvm_mve_dw_taps(int32_t rv, int32_t cols) {
  return ((rv & 1) ? cols : 0) | ((rv & 2) ? cols << 3 : 0) | ((rv & 4) ? cols << 6 : 0);
}

#ifdef UTVM_MVE_VECTOR
/* Four pixels (columns step bytes apart), all channels: rows[ry] points to the first tap of
 * pixel 0 in input row ry (not read when bit ry of rv is clear), cm is the 12-bit column mask
 * of the group. Each tap loads the weights once for the four pixels; the masks are constants
 * where it is called (interior, left border, right border), so the tests fold away. */
__attribute__((always_inline)) static inline void utvm_mve_dw_group4(int8_t* out, const int8_t* const rows[3],
                                                                     int32_t rv, int32_t cm, int32_t c,
                                                                     int32_t step, int32_t d, const int8_t* wt,
                                                                     int32_t zx, const utvm_mve_rq_t* q) {
  for (int32_t ch = 0; ch < c; ch += 4) {
    const int8_t* wp = wt + ch;
    int32x4_t a0 = utvm_mve_rq_bias4(q, ch, 0);
    int32x4_t a1 = a0, a2 = a0, a3 = a0;
    /* one tap after the other (the empty asm orders them): gcc would otherwise load the taps
     * first and spill, with 8 vector registers */
#define UTVM_MVE_DW_TAP(rx)                                                                    \
  do {                                                                                         \
    int32x4_t wv = vldrbq_s32(wp);                                                             \
    a0 = (cm & (1 << (rx))) ? utvm_mve_mla(a0, vldrbq_s32(p0), wv) : vmlaq_n_s32(a0, wv, zx);  \
    a1 = (cm & (8 << (rx))) ? utvm_mve_mla(a1, vldrbq_s32(p1), wv) : vmlaq_n_s32(a1, wv, zx);  \
    a2 = (cm & (64 << (rx))) ? utvm_mve_mla(a2, vldrbq_s32(p2), wv) : vmlaq_n_s32(a2, wv, zx); \
    a3 = (cm & (512 << (rx))) ? utvm_mve_mla(a3, vldrbq_s32(p3), wv) : vmlaq_n_s32(a3, wv, zx); \
    wp += c;                                                                                   \
    p0 += d;                                                                                   \
    p1 += d;                                                                                   \
    p2 += d;                                                                                   \
    p3 += d;                                                                                   \
    __asm__("" : "+w"(a0), "+w"(a1), "+w"(a2), "+w"(a3), "+r"(wp), "+r"(p0), "+r"(p1), "+r"(p2), "+r"(p3)); \
  } while (0)
    /* a row outside the input: zx times the sum of its three weights */
#define UTVM_MVE_DW_ROW(ry)                                                                    \
  if (rv & (1 << (ry))) {                                                                      \
    const int8_t* p0 = rows[ry] + ch;                                                          \
    const int8_t* p1 = p0 + step;                                                              \
    const int8_t* p2 = p1 + step;                                                              \
    const int8_t* p3 = p2 + step;                                                              \
    UTVM_MVE_DW_TAP(0);                                                                        \
    UTVM_MVE_DW_TAP(1);                                                                        \
    UTVM_MVE_DW_TAP(2);                                                                        \
  } else {                                                                                     \
    int32x4_t s = vaddq_s32(vaddq_s32(vldrbq_s32(wp), vldrbq_s32(wp + c)), vldrbq_s32(wp + 2 * c)); \
    a0 = vmlaq_n_s32(a0, s, zx);                                                               \
    a1 = vmlaq_n_s32(a1, s, zx);                                                               \
    a2 = vmlaq_n_s32(a2, s, zx);                                                               \
    a3 = vmlaq_n_s32(a3, s, zx);                                                               \
    wp += 3 * c;                                                                               \
  }
    UTVM_MVE_DW_ROW(0)
    UTVM_MVE_DW_ROW(1)
    UTVM_MVE_DW_ROW(2)
#undef UTVM_MVE_DW_ROW
#undef UTVM_MVE_DW_TAP
    int32x4_t m = utvm_mve_rq_mult4(q, ch, 0);
    int32x4_t sh = utvm_mve_rq_shift4(q, ch, 0);
    int8_t* op = out + ch;
    vstrbq_s32(op, utvm_mve_rq_apply4(q, a0, m, sh));
    vstrbq_s32(op + c, utvm_mve_rq_apply4(q, a1, m, sh));
    vstrbq_s32(op + 2 * c, utvm_mve_rq_apply4(q, a2, m, sh));
    vstrbq_s32(op + 3 * c, utvm_mve_rq_apply4(q, a3, m, sh));
  }
}

/* One pixel, all channels: rows as above, tm its 9-bit tap mask. */
__attribute__((always_inline)) static inline void utvm_mve_dw_pixel(int8_t* out, const int8_t* const rows[3],
                                                                    int32_t tm, int32_t c, int32_t d,
                                                                    const int8_t* wt, int32_t zx,
                                                                    const utvm_mve_rq_t* q) {
  for (int32_t ch = 0; ch < c; ch += 4) {
    const int8_t* wp = wt + ch;
    int32x4_t acc = utvm_mve_rq_bias4(q, ch, 0);
    /* the nine taps written out (a loop with the mask tests is not unrolled) */
#define UTVM_MVE_DW_PTAP(ry, rx)                                                                     \
  do {                                                                                               \
    int32x4_t wv = vldrbq_s32(wp + ((ry) * 3 + (rx)) * c);                                           \
    acc = (tm & (1 << ((ry) * 3 + (rx)))) ? utvm_mve_mla(acc, vldrbq_s32(rows[ry] + ch + (rx) * d), wv) \
                                          : vmlaq_n_s32(acc, wv, zx);                                \
  } while (0)
    UTVM_MVE_DW_PTAP(0, 0);
    UTVM_MVE_DW_PTAP(0, 1);
    UTVM_MVE_DW_PTAP(0, 2);
    UTVM_MVE_DW_PTAP(1, 0);
    UTVM_MVE_DW_PTAP(1, 1);
    UTVM_MVE_DW_PTAP(1, 2);
    UTVM_MVE_DW_PTAP(2, 0);
    UTVM_MVE_DW_PTAP(2, 1);
    UTVM_MVE_DW_PTAP(2, 2);
#undef UTVM_MVE_DW_PTAP
    int32x4_t v = utvm_mve_rq_apply4(q, acc, utvm_mve_rq_mult4(q, ch, 0), utvm_mve_rq_shift4(q, ch, 0));
    vstrbq_s32(out + ch, v);
  }
}
#endif

static inline void utvm_mve_dw3x3_row_impl(int8_t* out, const int8_t* x, int32_t h, int32_t w, int32_t c,
                                           int32_t iy0, int32_t ow, int32_t sw, int32_t pad_left, int32_t dh,
                                           int32_t dw, const int8_t* wt, int32_t zx, utvm_mve_rq_t rq) {
  const utvm_mve_rq_t* q = &rq; /* a copy, see utvm_mve_gemm_impl */
#ifdef UTVM_MVE_VECTOR
  int32_t step = sw * c; /* bytes from one pixel's window to the next */
  int32_t d = dw * c;    /* bytes from one tap to the next */
  /* the input rows: pointers to column -pad_left (pixel 0's first tap; only the taps inside the
   * input are read), rv: bit ry set when row ry is inside */
  const int8_t* rows[3];
  int32_t rv = 0;
  for (int32_t ry = 0; ry < 3; ++ry) {
    int32_t iy = iy0 + ry * dh;
    int32_t inside = iy >= 0 && iy < h;
    rows[ry] = inside ? x + (iy * w - pad_left) * c : x;
    rv |= inside << ry;
  }
  /* groups of four pixels; when two or three remain (and ow >= 4), a last group ending at the
   * last pixel (recomputing some of the previous group: cheaper than single pixels). A group
   * with all its columns inside the input, at the left border (its pixel 0 without the first
   * column) or at the right border (its pixel 3 without the last column) is done as a group;
   * other column patterns (narrow inputs, dilation) one pixel at a time. */
  int32_t groups_end = ow >= 4 && ow % 4 >= 2 ? ow : ow & ~3;
  int32_t ox = 0;
  while (ox < groups_end) {
    int32_t gx = ox + 4 > ow ? ow - 4 : ox;
    int32_t ix0 = gx * sw - pad_left;
    if (ix0 >= 0 && ix0 + 3 * sw + 2 * dw < w) {
      const int8_t* g[3] = {rows[0] + gx * step, rows[1] + gx * step, rows[2] + gx * step};
      utvm_mve_dw_group4(out + gx * c, g, rv, 0xfff, c, step, d, wt, zx, q);
      ox += 4;
      continue;
    }
    int32_t cm = 0;
    for (int32_t p = 0; p < 4; ++p) cm |= utvm_mve_dw_cols(w, ix0 + p * sw, dw) << (3 * p);
    const int8_t* g[3] = {rows[0] + gx * step, rows[1] + gx * step, rows[2] + gx * step};
    int8_t* op = out + gx * c;
    if (cm == 0xffe) { /* left border: pixel 0 without its first column */
      utvm_mve_dw_group4(op, g, rv, 0xffe, c, step, d, wt, zx, q);
    } else if (cm == 0x7ff) { /* right border: pixel 3 without its last column */
      utvm_mve_dw_group4(op, g, rv, 0x7ff, c, step, d, wt, zx, q);
    } else {
      for (int32_t p = 0; p < 4; ++p) {
        const int8_t* pr[3] = {g[0] + p * step, g[1] + p * step, g[2] + p * step};
        utvm_mve_dw_pixel(op + p * c, pr, utvm_mve_dw_taps(rv, (cm >> (3 * p)) & 7), c, d, wt, zx, q);
      }
    }
    ox += 4;
  }
  /* the remaining pixels one at a time */
  for (int32_t ox = groups_end; ox < ow; ++ox) {
    int32_t tm = utvm_mve_dw_taps(rv, utvm_mve_dw_cols(w, ox * sw - pad_left, dw));
    const int8_t* pr[3] = {rows[0] + ox * step, rows[1] + ox * step, rows[2] + ox * step};
    utvm_mve_dw_pixel(out + ox * c, pr, tm, c, d, wt, zx, q);
  }
#else
  for (int32_t ox = 0; ox < ow; ++ox) {
    for (int32_t ch = 0; ch < c; ++ch) {
      int32_t acc = 0;
      for (int32_t ry = 0; ry < 3; ++ry) {
        int32_t iy = iy0 + ry * dh;
        for (int32_t rx = 0; rx < 3; ++rx) {
          int32_t ix = ox * sw - pad_left + rx * dw;
          int32_t v = iy >= 0 && iy < h && ix >= 0 && ix < w ? x[(iy * w + ix) * c + ch] : zx;
          acc += v * wt[(ry * 3 + rx) * c + ch];
        }
      }
      out[ox * c + ch] = utvm_mve_requant1(q, acc, ch);
    }
  }
#endif
}

/* Convolution without patch copies (no scratch), one output row: for ox < ow, o < cout
 *   out[ox * cout + o] = requant(sum_{ry, rx, ch} x[iy0 + ry * dh][ox * sw - pad_left + rx][ch] *
 *                                w[o][ry][rx][ch], o)
 * (x: h x w x cin, cin a multiple of 16; kh x kw windows, no column dilation), the taps outside
 * the input counting as the zero point zx. The filters wt are stored four output channels at a
 * time with their 16-byte steps interleaved: block b, step j holds w[4b + i][16j .. 16j + 15]
 * for i = 0..3 (zeros for the channels past cout), so one pointer walks the four filter rows.
 * Each window row (kw * cin contiguous input bytes) is a run of 16-byte steps, one input load
 * and four filter loads each (as utvm_mve_gemm_s8 with one pixel); the columns of a window row
 * outside the input, and the rows outside, multiply the zero point instead (no input load).
 * Four channels at a time, their requantization constants loaded once for the row's pixels. */
#ifdef UTVM_MVE_VECTOR
/* acc[0..3] += dot products of len bytes (a multiple of 16) at xp with the four interleaved
 * filter rows at *wq (advanced by 4 * len) */
__attribute__((always_inline)) static inline void utvm_mve_conv_dot(int32_t* acc, const int8_t* xp, const int8_t** wq,
                                                                    int32_t len) {
  const int8_t* wp = *wq;
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  /* filter rows 1, 2, 3 at offsets, row 0 last with the pointer stepped by the load
   * (post-increment addressing; the empty asm keeps gcc from indexing the pointers) */
  for (int32_t n = len >> 4; n > 0; --n) {
    int8x16_t xv = vldrbq_s8(xp);
    xp += 16;
    a1 = vmladavaq_s8(a1, xv, vldrbq_s8(wp + 16));
    a2 = vmladavaq_s8(a2, xv, vldrbq_s8(wp + 32));
    a3 = vmladavaq_s8(a3, xv, vldrbq_s8(wp + 48));
    a0 = vmladavaq_s8(a0, xv, vldrbq_s8(wp));
    wp += 64;
    __asm__("" : "+r"(xp), "+r"(wp));
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
  *wq = wp;
}

/* the same for len bytes of the zero point zx (taps outside the input) */
__attribute__((always_inline)) static inline void utvm_mve_conv_dot_zero(int32_t* acc, int32_t zx, const int8_t** wq,
                                                                         int32_t len) {
  const int8_t* wp = *wq;
  int8x16_t zv = vdupq_n_s8((int8_t)zx);
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  for (int32_t n = len >> 4; n > 0; --n) {
    a1 = vmladavaq_s8(a1, zv, vldrbq_s8(wp + 16));
    a2 = vmladavaq_s8(a2, zv, vldrbq_s8(wp + 32));
    a3 = vmladavaq_s8(a3, zv, vldrbq_s8(wp + 48));
    a0 = vmladavaq_s8(a0, zv, vldrbq_s8(wp));
    wp += 64;
    __asm__("" : "+r"(wp));
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
  *wq = wp;
}

/* the requantized four channels of acc (+ bias) stored at out (the lanes of pc, or all) */
__attribute__((always_inline)) static inline void utvm_mve_conv_store(int8_t* out, const int32_t* acc,
                                                                      int32x4_t bias, int32x4_t m, int32x4_t sh,
                                                                      mve_pred16_t pc, const utvm_mve_rq_t* q) {
  int32x4_t v = vdupq_n_s32(acc[0]);
  v = vsetq_lane_s32(acc[1], v, 1);
  v = vsetq_lane_s32(acc[2], v, 2);
  v = vsetq_lane_s32(acc[3], v, 3);
  v = utvm_mve_rq_apply4(q, vaddq_s32(v, bias), m, sh);
  if (pc) {
    vstrbq_p_s32(out, v, pc);
  } else {
    vstrbq_s32(out, v);
  }
}
#endif

static inline void utvm_mve_conv_row_impl(int8_t* out, const int8_t* x, int32_t h, int32_t w, int32_t cin,
                                          int32_t iy0, int32_t ow, int32_t sw, int32_t pad_left, int32_t kh,
                                          int32_t kw, int32_t dh, const int8_t* wt, int32_t cout, int32_t zx,
                                          utvm_mve_rq_t rq) {
  const utvm_mve_rq_t* q = &rq; /* a copy, see utvm_mve_gemm_impl */
  int32_t k = kh * kw * cin;
  int32_t seg = kw * cin; /* bytes of one window row */
#ifdef UTVM_MVE_VECTOR
  int32_t row_step = dh * w * cin; /* from one window row to the next */
  int32_t step = sw * cin;         /* from one pixel to the next */
  /* the window rows inside the input: [ry_lo, ry_hi) */
  int32_t ry_lo = 0, ry_hi = kh;
  while (ry_lo < kh && iy0 + ry_lo * dh < 0) ++ry_lo;
  while (ry_hi > ry_lo && iy0 + (ry_hi - 1) * dh >= h) --ry_hi;
  /* the pixels with their whole window inside the input: [in_lo, in_hi) */
  int32_t in_lo = (pad_left + sw - 1) / sw;
  int32_t in_hi = w - kw + pad_left >= 0 ? (w - kw + pad_left) / sw + 1 : 0;
  if (in_hi > ow) in_hi = ow;
  if (ry_lo != 0 || ry_hi != kh || in_lo > in_hi) in_lo = in_hi = 0;
  /* column 0 of window row 0 of pixel 0 (only the bytes inside the input are read) */
  const int8_t* x0 = x + (iy0 * w - pad_left) * cin;
  for (int32_t o = 0; o < cout; o += 4, wt += 4 * k) {
    mve_pred16_t pc = o + 4 <= cout ? 0 : vctp32q((uint32_t)(cout - o));
    int32x4_t bias = utvm_mve_rq_bias4(q, o, pc);
    int32x4_t m = utvm_mve_rq_mult4(q, o, pc);
    int32x4_t sh = utvm_mve_rq_shift4(q, o, pc);
    int32_t ox = 0;
    for (int32_t pass = 0; pass < 2; ++pass) {
      /* the pixels at the borders: before in_lo (pass 0), from in_hi on (pass 1) */
      for (int32_t end = pass ? ow : in_lo; ox < end; ++ox) {
        int32_t ix0 = ox * sw - pad_left;
        /* the window columns inside the input [rx_lo, rx_hi), as bytes of a window row */
        int32_t rx_lo = ix0 < 0 ? -ix0 : 0;
        int32_t rx_hi = w - ix0 < kw ? w - ix0 : kw;
        if (rx_hi < rx_lo) rx_hi = rx_lo;
        int32_t lo = rx_lo * cin, hi = rx_hi * cin;
        const int8_t* wq = wt;
        int32_t acc[4] = {0, 0, 0, 0};
        const int8_t* xr = x0 + ox * step;
        for (int32_t ry = 0; ry < kh; ++ry, xr += row_step) {
          if (ry < ry_lo || ry >= ry_hi || lo == hi) {
            utvm_mve_conv_dot_zero(acc, zx, &wq, seg);
            continue;
          }
          if (lo) utvm_mve_conv_dot_zero(acc, zx, &wq, lo);
          utvm_mve_conv_dot(acc, xr + lo, &wq, hi - lo);
          if (hi < seg) utvm_mve_conv_dot_zero(acc, zx, &wq, seg - hi);
        }
        utvm_mve_conv_store(out + ox * cout + o, acc, bias, m, sh, pc, q);
      }
      if (pass) break;
      /* the pixels with their whole window inside the input */
      for (const int8_t* xp = x0 + ox * step; ox < in_hi; ++ox, xp += step) {
        const int8_t* wq = wt;
        int32_t acc[4] = {0, 0, 0, 0};
        const int8_t* xr = xp;
        for (int32_t ry = 0; ry < kh; ++ry, xr += row_step) utvm_mve_conv_dot(acc, xr, &wq, seg);
        utvm_mve_conv_store(out + ox * cout + o, acc, bias, m, sh, pc, q);
      }
    }
  }
#else
  for (int32_t ox = 0; ox < ow; ++ox) {
    int32_t ix0 = ox * sw - pad_left;
    for (int32_t o = 0; o < cout; ++o) {
      const int8_t* wb = wt + (o >> 2) * 4 * k + (o & 3) * 16; /* step 0 of filter row o */
      int32_t acc = 0;
      for (int32_t ry = 0; ry < kh; ++ry) {
        int32_t iy = iy0 + ry * dh;
        for (int32_t j = 0; j < seg; ++j) {
          int32_t ix = ix0 + j / cin;
          int32_t jj = ry * seg + j; /* byte jj of the filter row: step jj / 16 */
          int32_t v = iy >= 0 && iy < h && ix >= 0 && ix < w ? x[(iy * w + ix) * cin + j % cin] : zx;
          acc += v * wb[(jj >> 4) * 64 + (jj & 15)];
        }
      }
      out[ox * cout + o] = utvm_mve_requant1(q, acc, o);
    }
  }
#endif
}

/* int8 ADD (TFLite's reference/integer_ops/add.h, double rounding), per element:
 *   va = MultiplyByQuantizedMultiplierSmallerThanOneExp((a - za) << 20, ma, sha), vb likewise,
 *   y = clamp(MultiplyByQuantizedMultiplier(va + vb, my, shy) + zy, lo, hi)
 * (ma, mb from scale / (2 * max(scale_a, scale_b)): sha, shb <= 0). */
#define UTVM_MVE_ADD_LEFT_SHIFT 20

typedef struct {
  int32_t za, ma, sha, zb, mb, shb, my, shy, zy, lo, hi;
} utvm_mve_add_t;

/* one element (plain C) */
static inline int8_t utvm_mve_add1(int32_t a, int32_t b, const utvm_mve_add_t* p) {
  int32_t va = utvm_mve_mbqm((a - p->za) * (1 << UTVM_MVE_ADD_LEFT_SHIFT), p->ma, p->sha);
  int32_t vb = utvm_mve_mbqm((b - p->zb) * (1 << UTVM_MVE_ADD_LEFT_SHIFT), p->mb, p->shb);
  return utvm_mve_clamp_s8(utvm_mve_mbqm(va + vb, p->my, p->shy) + p->zy, p->lo, p->hi);
}

#ifdef UTVM_MVE_VECTOR
/* The vector form. The input of the larger scale has multiplier 2**30 and shift 0 (scale / (2 *
 * scale) = 0.5): its scaled value is exactly (v - z) << 19, a multiply-accumulate onto the other
 * one (the "small" input: VMLAS, VQRDMULH, rounding right shift; with multiplier 2**30 and shift
 * 0 as well, done as << 21, times 2**30, >> 1: exact). */
typedef struct {
  int32x4_t pow, pow_big;        /* 2**left of the small input, 2**19 */
  int32x4_t lo, hi;              /* the clamp bounds */
  int32_t off, m, r;             /* small input: -z * 2**left, multiplier, -right shift */
  int32_t off_big;               /* -z << 19 of the larger-scale input */
  int32_t my, ry, zy;            /* output multiplier, shift (< 0), zero point */
} utvm_mve_addv_t;

/* SRDHM(x, m) rounded right by -r (r = -1..-31) as gemmlowp: VQRDMULH accumulated onto -1 for
 * the negative x (VQRDMLAH; ties away from zero), then VRSHL (ties up). A negative x gives a
 * product <= 0, and 0 - 1 still rounds to 0. */
static inline int32x4_t utvm_mve_add_scale4(int32x4_t x, int32_t m, int32_t r) {
  return vrshlq_n_s32(vqrdmlahq_n_s32(vshrq_n_s32(x, 31), x, m), r);
}

/* four outputs from four (widened) values of the small and of the larger-scale input */
static inline int32x4_t utvm_mve_add4(int32x4_t small, int32x4_t big, const utvm_mve_addv_t* k) {
  int32x4_t v = utvm_mve_add_scale4(vmlasq_n_s32(small, k->pow, k->off), k->m, k->r);
  v = vaddq_s32(v, vmlasq_n_s32(big, k->pow_big, k->off_big));
  v = vaddq_n_s32(utvm_mve_add_scale4(v, k->my, k->ry), k->zy);
  return vminq_s32(vmaxq_s32(v, k->lo), k->hi);
}

/* the constants of the vector form, 0 when it cannot do the layer (the plain C loop does) */
static inline int32_t utvm_mve_add_setup(utvm_mve_addv_t* k, int32_t zs, int32_t ms, int32_t shs, int32_t zbig,
                                         const utvm_mve_add_t* p) {
  int32_t left = UTVM_MVE_ADD_LEFT_SHIFT, right = -shs;
  if (shs == 0 && ms == (1 << 30)) {
    left = UTVM_MVE_ADD_LEFT_SHIFT + 1;
    right = 1;
  }
  if (ms < 0 || right < 1 || right > 31 || p->my < 0 || p->shy > -1 || p->shy < -31) return 0;
  k->pow = vdupq_n_s32(1 << left);
  k->pow_big = vdupq_n_s32(1 << (UTVM_MVE_ADD_LEFT_SHIFT - 1));
  k->lo = vdupq_n_s32(p->lo);
  k->hi = vdupq_n_s32(p->hi);
  k->off = -zs * (1 << left);
  k->m = ms;
  k->r = -right;
  k->off_big = -zbig * (1 << (UTVM_MVE_ADD_LEFT_SHIFT - 1));
  k->my = p->my;
  k->ry = p->shy;
  k->zy = p->zy;
  return 1;
}
#endif

/* out[i] = a[i] + b[i] (i < n), requantized as above */
static inline void utvm_mve_add_impl(int8_t* out, const int8_t* a, const int8_t* b, int32_t n,
                                     const utvm_mve_add_t* p) {
#ifdef UTVM_MVE_VECTOR
  utvm_mve_addv_t k;
  int32_t a_big = p->ma == (1 << 30) && p->sha == 0;
  int32_t ready = a_big ? utvm_mve_add_setup(&k, p->zb, p->mb, p->shb, p->za, p)
                        : p->mb == (1 << 30) && p->shb == 0 && utvm_mve_add_setup(&k, p->za, p->ma, p->sha, p->zb, p);
  if (ready) {
    const int8_t* s = a_big ? b : a;
    const int8_t* g = a_big ? a : b;
    /* 16 elements per step; the pointers stepped after each access (post-increment) */
    for (; n >= 16; n -= 16) {
      for (int32_t j = 0; j < 4; ++j, s += 4, g += 4, out += 4) {
        vstrbq_s32(out, utvm_mve_add4(vldrbq_s32(s), vldrbq_s32(g), &k));
      }
    }
    for (; n > 0; n -= 4, s += 4, g += 4, out += 4) {
      mve_pred16_t pr = vctp32q((uint32_t)n);
      vstrbq_p_s32(out, utvm_mve_add4(vldrbq_z_s32(s, pr), vldrbq_z_s32(g, pr), &k), pr);
    }
    return;
  }
#endif
  for (int32_t i = 0; i < n; ++i) out[i] = utvm_mve_add1(a[i], b[i], p);
}

/* ---------------------------------------------------------------------------------------------
 * Convolutions as blocks of 4 rows x 2 filter vectors (utvm_mve_conv42_s8).
 *
 * A "row" is the patch of one output pixel (kh x kw x cin bytes, zero-padded to steps * 16
 * bytes) or, for pointwise layers of cin = 16 / sub input channels (sub = 2, 4, 8, 16), sub
 * consecutive pixels (16 bytes, read in place). Rows are stored four at a time with their
 * 16-byte steps interleaved ("group": step s of row r at s * 64 + r * 16); pointwise layers
 * with cin = 16 / sub are already in that layout, the others are gathered into the scratch col.
 * The filters are nv "vectors" (nv even): per output channel whose weights are not all zero,
 * sub vectors (vector j of channel o: its weights in lanes [j * cin, j * cin + cin), zeros
 * elsewhere; it computes the pixels j, j + sub, ... of a group), two at a time ("pair") with
 * their steps interleaved the same way (step s of vector 2i + c at s * 32 + c * 16 of pair i),
 * each pair followed by its "record" of eight words: biases (folded with the input zero point),
 * multipliers, shifts and output offsets (j * cout + o) of its two vectors, each two side by
 * side; an odd last vector repeated. The channels whose weights are all zero ("dead", common in
 * pruned models) have a constant output: with `dead` set, a template of cout bytes follows the
 * pairs (the dead channels' outputs) and is copied to every output pixel first.
 * One block: per step one load per filter vector and per row and 8 VMLADAV(A), i.e. 14
 * instructions per 128 products; the eight dot products (row r, vector c) become two vectors
 * of the four rows, requantized four lanes at a time and stored at the rows' pixels (stride
 * sub * cout).
 * ------------------------------------------------------------------------------------------ */

#define UTVM_MVE_C42_RIGHT 1 /* every shift is a right shift of 1..31 */

/* bytes of a pair of filter vectors and its record */
static inline int32_t utvm_mve_c42_pair_bytes(int32_t steps) { return steps * 32 + 32; }

/* the record of the pair at wt: word i of vector c (0: bias, 1: multiplier, 2: shift, 3: offset) */
static inline int32_t utvm_mve_c42_rec(const int8_t* pair, int32_t steps, int32_t c, int32_t i) {
  return ((const int32_t*)(const void*)(pair + steps * 32))[2 * i + c];
}

#ifdef UTVM_MVE_VECTOR
/* One step of a block: a0..a3 (filter vector 0) and b0..b3 (vector 1) of rows 0..3 (MAC:
 * vmladav for the first step, vmladava after it); rows r1, r2, r3 bytes after row 0 (16, 32, 48
 * in a group), the row pointer advancing by ss bytes per step (64 in a group), the filter
 * pointer by 32. */
#define UTVM_MVE_MAC42_INS(MAC)                                                                    \
  "vldrb.8 %q[w0], [%[wp]], #32\n\t"                                                               \
  "vldrb.8 %q[w1], [%[wp], #-16]\n\t"                                                              \
  "vldrb.8 %q[x0], [%[dp], %[r1]]\n\t" MAC " %[a1], %q[x0], %q[w0]\n\t" MAC " %[b1], %q[x0], %q[w1]\n\t" \
  "vldrb.8 %q[x1], [%[dp], %[r2]]\n\t" MAC " %[a2], %q[x1], %q[w0]\n\t" MAC " %[b2], %q[x1], %q[w1]\n\t" \
  "vldrb.8 %q[x0], [%[dp], %[r3]]\n\t" MAC " %[a3], %q[x0], %q[w0]\n\t" MAC " %[b3], %q[x0], %q[w1]\n\t" \
  "vldrb.8 %q[x1], [%[dp]], %[ss]\n\t" MAC " %[a0], %q[x1], %q[w0]\n\t" MAC " %[b0], %q[x1], %q[w1]\n\t"
/* all the steps of a block: unrolled (the step count a constant: the first, an odd one, then
 * pairs, up to 6 pairs unrolled, more as a loop counting n down) */
#define UTVM_MVE_MAC42_ALL                                                                         \
  UTVM_MVE_MAC42_INS("vmladav.s8")                                                                 \
  ".rept %c[odd]\n\t" UTVM_MVE_MAC42_INS("vmladava.s8") ".endr\n\t"                                \
  ".if %c[n2] > 6\n\tmov %[n], %[n2]\n2:\n\t" UTVM_MVE_MAC42_INS("vmladava.s8")                    \
      UTVM_MVE_MAC42_INS("vmladava.s8") "subs %[n], %[n], #1\n\tbne 2b\n\t.else\n\t"                \
  ".rept 2 * %c[n2]\n\t" UTVM_MVE_MAC42_INS("vmladava.s8") ".endr\n\t.endif\n\t"
#define UTVM_MVE_MAC42_OUTPUTS                                                                      \
  [a0] "=&Te"(a0), [a1] "=&Te"(a1), [a2] "=&Te"(a2), [a3] "=&Te"(a3), [b0] "=&Te"(b0), [b1] "=&Te"(b1), \
      [b2] "=&Te"(b2), [b3] "=&Te"(b3), [wp] "+r"(wp), [dp] "+r"(dp), [n] "=&r"(n), [w0] "=&w"(w0),  \
      [w1] "=&w"(w1), [x0] "=&w"(x0), [x1] "=&w"(x1)

/* a, b, c, d in the four lanes of a vector with two VMOVs (two registers to two lanes): in the
 * order the Arm architecture defines (a in lane 0, ..., d in lane 3) or, as QEMU 7.2 does it,
 * lanes 0 and 2 exchanged with 1 and 3; either way the same for every such VMOV, so the
 * vectors built with it are used only lane by lane with other vectors built the same way
 * (the offsets of the stores, the row indices of the predicates: utvm_mve_lanes4_index) */
#define UTVM_MVE_LANES4(v, a, b, c, d) "vmov " v "[2], " v "[0], " c ", " a "\n\tvmov " v "[3], " v "[1], " d ", " b "\n\t"
__attribute__((always_inline)) static inline int32x4_t utvm_mve_lanes4(int32_t a, int32_t b, int32_t c, int32_t d) {
  int32x4_t v;
  __asm__(UTVM_MVE_LANES4("%q0", "%1", "%2", "%3", "%4") : "=&w"(v) : "r"(a), "r"(b), "r"(c), "r"(d));
  return v;
}

/* the lanes of utvm_mve_lanes4(0, s, 2 * s, 3 * s) */
__attribute__((always_inline)) static inline uint32x4_t utvm_mve_lanes4_index(int32_t s) {
  return vreinterpretq_u32_s32(utvm_mve_lanes4(0, s, 2 * s, 3 * s));
}

/* requantized lanes of v (accumulators without the bias; bias b, multiplier m, shift s),
 * stored at dst + offs[i] (the lanes of p, or all when p == 0) */
__attribute__((always_inline)) static inline void utvm_mve_rq_scatter(int8_t* dst, uint32x4_t offs, int32x4_t v,
                                                                      int32_t b, int32_t m, int32_t s,
                                                                      int32_t right, mve_pred16_t p, int32_t zy,
                                                                      int32x4_t lo, int32x4_t hi) {
  v = vaddq_n_s32(v, b);
  if (right) {
    /* gemmlowp rounds the right shift's ties away from zero, VRSHL up: one less for negative
     * values, accumulated by VQRDMLAH onto the sign (-1 or 0) */
    v = vrshlq_n_s32(vqrdmlahq_n_s32(vshrq_n_s32(v, 31), v, m), s);
  } else {
    int32_t r = s < 0 ? s : 0;
    v = vqrdmulhq_n_s32(vshlq_r_s32(v, s > 0 ? s : 0), m);
    v = vrshlq_n_s32(vqaddq_s32(v, vshrq_n_s32(vandq_s32(v, vdupq_n_s32(r)), 31)), r);
  }
  v = vminq_s32(vmaxq_s32(vaddq_n_s32(v, zy), lo), hi);
  if (p) {
    vstrbq_scatter_offset_p_s32(dst, offs, v, p);
  } else {
    vstrbq_scatter_offset_s32(dst, offs, v);
  }
}

/* The blocks of one group (C): rows at rows, rows + rs, ..., step s of a row ss * s bytes after
 * its start; np pixels (np < 4 * sub: a partial group, the lanes of the missing rows not stored),
 * the nv filter vectors; the group's pixel 0 is out. */
__attribute__((always_inline)) static inline void utvm_mve_group42(int8_t* out, const int8_t* rows, int32_t rs,
                                                                   int32_t ss, int32_t np, const int8_t* wt,
                                                                   int32_t steps, int32_t nv, int32_t sub,
                                                                   int32_t cout, int32_t mode, uint32x4_t offs,
                                                                   uint32x4_t rowi, int32_t zy, int32x4_t lo,
                                                                   int32x4_t hi) {
  int32_t part = np < 4 * sub;
  for (int32_t v = 0; v < nv; v += 2, wt += utvm_mve_c42_pair_bytes(steps)) {
    int32_t acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int32_t s = 0; s < steps; ++s) {
      int8x16_t w0 = vldrbq_s8(wt + s * 32), w1 = vldrbq_s8(wt + s * 32 + 16);
      for (int32_t r = 0; r < 4; ++r) {
        int8x16_t xv = vldrbq_s8(rows + s * ss + r * rs);
        acc[r] = vmladavaq_s8(acc[r], xv, w0);
        acc[4 + r] = vmladavaq_s8(acc[4 + r], xv, w1);
      }
    }
    for (int32_t c = 0; c < 2; ++c) {
      int32_t off = utvm_mve_c42_rec(wt, steps, c, 3);
      /* a partial group: the lanes of the rows with a pixel for this vector */
      int32_t j = off / cout;
      mve_pred16_t p = part ? vcmpltq_n_s32(vreinterpretq_s32_u32(rowi), (np - j + sub - 1) / sub) : 0;
      if (part && !p) continue;
      int32x4_t v4 = utvm_mve_lanes4(acc[4 * c], acc[4 * c + 1], acc[4 * c + 2], acc[4 * c + 3]);
      utvm_mve_rq_scatter(out + off, offs, v4, utvm_mve_c42_rec(wt, steps, c, 0), utvm_mve_c42_rec(wt, steps, c, 1),
                          utvm_mve_c42_rec(wt, steps, c, 2), mode & UTVM_MVE_C42_RIGHT, p, zy, lo, hi);
    }
  }
}

/* The blocks of one whole group (4 * sub pixels, rows as in utvm_mve_group42; the group's pixel
 * 0 is out) in one asm statement: the step count and strides constants, right shifts only. */
__attribute__((always_inline)) static inline void utvm_mve_group42_asm(int8_t* out, const int8_t* rows,
                                                                       int32_t rs, int32_t ss,
                                                                       const int8_t* wt, int32_t steps,
                                                                       int32_t nv, uint32x4_t offs,
                                                                       int32x4_t zyv, int32x4_t lo,
                                                                       int32x4_t hi) {
#ifdef __OPTIMIZE__ /* immediate operands: constants only when optimizing */
  int32_t a0, a1, a2, a3, b0, b1, b2, b3, n;
  int8x16_t w0, w1, x0, x1;
  const int8_t* wp = wt;
  const int8_t* dp = rows;
  const int8_t* end = wt + (nv / 2) * utvm_mve_c42_pair_bytes(steps);
  /* per block: the steps, the rows pointer back to the group, the dot products into two
   * vectors, the record (biases, multipliers, shifts, offsets), the two requantizations and
   * scatter stores (at the record's offsets plus the pixels' addresses, offs + out) */
  __asm__ volatile("1:\n\t" UTVM_MVE_MAC42_ALL
          "sub %[dp], %[dp], %[back]\n\t"
          UTVM_MVE_LANES4("%q[w0]", "%[a0]", "%[a1]", "%[a2]", "%[a3]")
          UTVM_MVE_LANES4("%q[w1]", "%[b0]", "%[b1]", "%[b2]", "%[b3]")
          "ldrd %[a0], %[a1], [%[wp]], #32\n\t"
          "ldrd %[a2], %[a3], [%[wp], #-24]\n\t"
          "ldrd %[b0], %[b1], [%[wp], #-16]\n\t"
          "ldrd %[b2], %[b3], [%[wp], #-8]\n\t"
          "vadd.i32 %q[w0], %q[w0], %[a0]\n\t"
          "vadd.i32 %q[w1], %q[w1], %[a1]\n\t"
          "vshr.s32 %q[x0], %q[w0], #31\n\t"
          "vshr.s32 %q[x1], %q[w1], #31\n\t"
          "vqrdmlah.s32 %q[x0], %q[w0], %[a2]\n\t"
          "vqrdmlah.s32 %q[x1], %q[w1], %[a3]\n\t"
          "vrshl.s32 %q[x0], %[b0]\n\t"
          "vrshl.s32 %q[x1], %[b1]\n\t"
          "vadd.i32 %q[x0], %q[x0], %q[zy]\n\t"
          "vadd.i32 %q[x1], %q[x1], %q[zy]\n\t"
          "vmax.s32 %q[x0], %q[x0], %q[lo]\n\t"
          "vmax.s32 %q[x1], %q[x1], %q[lo]\n\t"
          "vmin.s32 %q[x0], %q[x0], %q[hi]\n\t"
          "vmin.s32 %q[x1], %q[x1], %q[hi]\n\t"
          "vstrb.32 %q[x0], [%[b2], %q[offs]]\n\t"
          "vstrb.32 %q[x1], [%[b3], %q[offs]]\n\t"
          "ldr %[a0], %[end]\n\t"
          "cmp %[wp], %[a0]\n\t"
          "bne 1b"
          : UTVM_MVE_MAC42_OUTPUTS
          : [odd] "i"((steps - 1) & 1), [n2] "i"((steps - 1) >> 1), [back] "i"(steps * ss), [end] "m"(end),
            [r1] "i"(rs), [r2] "i"(2 * rs), [r3] "i"(3 * rs), [ss] "i"(ss),
            [offs] "w"(vaddq_n_u32(offs, (uint32_t)out)), [zy] "w"(zyv), [lo] "w"(lo), [hi] "w"(hi)
          : "cc", "memory");
  (void)a0, (void)a1, (void)a2, (void)a3, (void)b0, (void)b1, (void)b2, (void)b3, (void)n;
  (void)w0, (void)w1, (void)x0, (void)x1, (void)wp, (void)dp;
#else
  (void)out, (void)rows, (void)rs, (void)ss, (void)wt, (void)steps, (void)nv, (void)offs, (void)zyv, (void)lo,
      (void)hi;
#endif
}

/* bytes [j, j + n) of row r of a group: n bytes from src, or the zero point (zv, src == 0) */
__attribute__((always_inline)) static inline void utvm_mve_pack_put(int8_t* col, int32_t r, int32_t j,
                                                                    const int8_t* src, int32_t n, int8x16_t zv) {
  while (n > 0) {
    int32_t len = 16 - (j & 15);
    if (len > n) len = n;
    int8_t* d = col + (j >> 4) * 64 + r * 16 + (j & 15);
    if (len == 16) {
      vstrbq_s8(d, src ? vldrbq_s8(src) : zv);
    } else {
      mve_pred16_t p = vctp8q((uint32_t)len);
      vstrbq_p_s8(d, src ? vldrbq_z_s8(src, p) : zv, p);
    }
    if (src) src += len;
    j += len;
    n -= len;
  }
}

/* n16 whole steps (16 bytes each) from src, or the zero point (src == 0), to d, d + 64, ... */
__attribute__((always_inline)) static inline void utvm_mve_pack_steps(int8_t* d, const int8_t* src, int32_t n16,
                                                                      int8x16_t zv) {
  for (int32_t i = 0; i < n16; ++i, d += 64) {
    if (src) {
      vstrbq_s8(d, vldrbq_s8(src));
      src += 16;
    } else {
      vstrbq_s8(d, zv);
    }
  }
}

/* row r of a group: the patch of the output pixel whose window starts at input row iy0,
 * column ix0 */
__attribute__((always_inline)) static inline void utvm_mve_pack_patch(int8_t* col, int32_t r, const int8_t* x,
                                                                      int32_t h, int32_t w, int32_t cin,
                                                                      int32_t iy0, int32_t ix0, int32_t kh,
                                                                      int32_t kw, int32_t dh, int32_t dw,
                                                                      int8x16_t zv) {
  int32_t row = kw * cin;
  int32_t whole = dw == 1 && ix0 >= 0 && ix0 + kw <= w; /* the window's columns inside, contiguous */
  for (int32_t ry = 0; ry < kh; ++ry) {
    int32_t iy = iy0 + ry * dh;
    int32_t j = ry * row;
    int32_t in_y = iy >= 0 && iy < h;
    if (cin % 16 == 0) { /* whole steps */
      int8_t* d = col + (j >> 4) * 64 + r * 16;
      if (!in_y || whole) {
        utvm_mve_pack_steps(d, in_y ? x + (iy * w + ix0) * cin : 0, row >> 4, zv);
        continue;
      }
      for (int32_t rx = 0; rx < kw; ++rx, d += cin * 4) {
        int32_t ix = ix0 + rx * dw;
        utvm_mve_pack_steps(d, ix >= 0 && ix < w ? x + (iy * w + ix) * cin : 0, cin >> 4, zv);
      }
      continue;
    }
    if (!in_y || whole) {
      utvm_mve_pack_put(col, r, j, in_y ? x + (iy * w + ix0) * cin : 0, row, zv);
      continue;
    }
    for (int32_t rx = 0; rx < kw; ++rx) {
      int32_t ix = ix0 + rx * dw;
      utvm_mve_pack_put(col, r, j + rx * cin, ix >= 0 && ix < w ? x + (iy * w + ix) * cin : 0, cin, zv);
    }
  }
}

/* the scatter offsets of utvm_mve_band_pieces: lane l to piece l / cin, byte l % cin */
__attribute__((always_inline)) static inline uint8x16_t utvm_mve_band_off(int32_t cin, int32_t dstep) {
  uint8x16_t lane = vidupq_n_u8(0, 1);
  uint8x16_t piece = vdupq_n_u8(0), within = lane;
  for (int32_t i = 1; i * cin < 16; ++i) {
    mve_pred16_t later = vcmpcsq_n_u8(lane, (uint8_t)(i * cin));
    piece = vpselq_u8(vdupq_n_u8((uint8_t)i), piece, later);
    within = vpselq_u8(vsubq_n_u8(lane, (uint8_t)(i * cin)), within, later);
  }
  return vaddq_u8(vmulq_n_u8(piece, (uint8_t)dstep), within);
}

/* n pieces of cin bytes from src (contiguous) to dst, dst + dstep, ... (or of the zero point zv,
 * src == 0): 16 / cin pieces per load and one scatter store by the offsets off
 * (utvm_mve_band_off; the lanes past the pieces write the next piece's first bytes, rewritten
 * after; the last store, and load, under a predicate) */
__attribute__((always_inline)) static inline void utvm_mve_band_pieces(int8_t* dst, int32_t dstep, const int8_t* src,
                                                                       int32_t n, int32_t cin, uint8x16_t off,
                                                                       int8x16_t zv) {
  int32_t per = 16 / cin;
  for (; n > 0; n -= per, dst += per * dstep) {
    int32_t bytes = n * cin;
    if (bytes >= 16 + cin) {
      vstrbq_scatter_offset_s8(dst, off, src ? vldrbq_s8(src) : zv);
    } else {
      mve_pred16_t pl = vctp8q((uint32_t)(bytes < 16 ? bytes : per * cin));
      vstrbq_scatter_offset_p_s8(dst, off, src ? vldrbq_z_s8(src, pl) : zv, pl);
    }
    if (src) src += per * cin;
  }
}

/* The band of one output line (mode 1: row `line`; mode 2: column `line`): the input positions
 * along the line (columns, or rows) from the padding's first, `pos` of them, each holding the
 * across * cin bytes of the window's other dimension (kh rows, dilation dh; or kw columns,
 * dilation dw), the zero point outside the input. */
__attribute__((always_inline)) static inline void utvm_mve_band(int8_t* band, const int8_t* x, int32_t h, int32_t w,
                                                                int32_t cin, int32_t line, int32_t mode,
                                                                int32_t pos, int32_t kh, int32_t kw, int32_t sh,
                                                                int32_t sw, int32_t dh, int32_t dw, int32_t pad_top,
                                                                int32_t pad_left, int8x16_t zv) {
  int32_t rows = mode == 1;
  int32_t across = rows ? kh : kw, d = rows ? dh : dw;
  int32_t na = rows ? w : h, nc = rows ? h : w, pa = rows ? pad_left : pad_top; /* along: size, padding */
  int32_t first = line * (rows ? sh : sw) - (rows ? pad_top : pad_left);        /* across: first position */
  int32_t step = across * cin;                                                   /* band bytes per position */
  int32_t in0 = pa < pos ? pa : pos, in1 = pa + na < pos ? pa + na : pos;       /* positions inside */
  if (rows) {
    uint8x16_t off = utvm_mve_band_off(cin, step);
    for (int32_t t = 0; t < across; ++t) {
      int32_t ic = first + t * d;
      int8_t* dst = band + t * cin;
      if (ic < 0 || ic >= nc) {
        utvm_mve_band_pieces(dst, step, 0, pos, cin, off, zv);
        continue;
      }
      utvm_mve_band_pieces(dst + in0 * step, step, x + ic * w * cin, in1 - in0, cin, off, zv);
      utvm_mve_band_pieces(dst, step, 0, in0, cin, off, zv);
      utvm_mve_band_pieces(dst + in1 * step, step, 0, pos - in1, cin, off, zv);
    }
    return;
  }
  /* columns: per input row the across * cin bytes, contiguous in x when every column is inside */
  int32_t whole = d == 1 && first >= 0 && first + across <= nc;
  for (int32_t a = 0; a < pos; ++a) {
    int8_t* dst = band + a * step;
    if (a < in0 || a >= in1) {
      utvm_mve_fill_s8(dst, (int8_t)vgetq_lane_s8(zv, 0), step);
    } else if (whole) {
      utvm_mve_copy_s8(dst, x + ((a - pa) * w + first) * cin, step);
    } else {
      for (int32_t t = 0; t < across; ++t) {
        int32_t ic = first + t * d;
        if (ic >= 0 && ic < nc) {
          utvm_mve_copy_s8(dst + t * cin, x + ((a - pa) * w + ic) * cin, cin);
        } else {
          utvm_mve_fill_s8(dst + t * cin, (int8_t)vgetq_lane_s8(zv, 0), cin);
        }
      }
    }
  }
}
#endif

/* Convolution, the whole layer:
 *   out[(oy * ow + ox) * cout + o] = requant(sum_{ry, rx, c} x[iy][ix][c] * w[o][ry][rx][c], o)
 * with iy = oy * sh - pad_top + ry * dh, ix = ox * sw - pad_left + rx * dw, the taps outside the
 * input counting as the zero point zx; x is h x w x cin, wt the nv filter vectors, records and
 * (dead != 0) template described above (sub > 1: 1 x 1 windows, stride 1, no padding,
 * cin = 16 / sub); col: the scratch. Pointwise layers with cin = 16 / sub read their rows in
 * place (the last, partial group copied into col: no read past x). Band != 0 (few input
 * channels, lines of at least 4 pixels): per output row (band 1) or column (band 2) its input
 * re-laid out in col (utvm_mve_band) so that each pixel's patch is contiguous, taps ordered
 * (along, across, channel): kw x kh x cin for rows (no column dilation), kh x kw x cin for
 * columns (no row dilation), and read in place; col then holds the band's positions
 * ((len - 1) * stride + window along) x across x cin bytes and 16 more. Else the patches of
 * four pixels are gathered into col (64 * steps bytes). */
__attribute__((always_inline)) static inline void utvm_mve_conv42_impl(int8_t* out, const int8_t* x, int32_t h,
                                                                       int32_t w, int32_t cin, int32_t oh,
                                                                       int32_t ow, int32_t kh, int32_t kw,
                                                                       int32_t sh, int32_t sw, int32_t dh,
                                                                       int32_t dw, int32_t pad_top,
                                                                       int32_t pad_left, const int8_t* wt,
                                                                       int32_t nv, int32_t dead, int32_t cout,
                                                                       int32_t sub, int32_t band, int32_t zx,
                                                                       int8_t* col, int32_t mode, int32_t zy,
                                                                       int32_t lo, int32_t hi) {
  int32_t k = kh * kw * cin;
  int32_t steps = (k + 15) >> 4;
  int32_t npix = oh * ow;
  const int8_t* tmpl = wt + (nv / 2) * utvm_mve_c42_pair_bytes(steps);
#ifdef UTVM_MVE_VECTOR
  int32_t gp = 4 * sub; /* pixels per group */
  int32_t full = npix / gp, rest = npix - full * gp;
  uint32x4_t offs = utvm_mve_lanes4_index(sub * cout), rowi = utvm_mve_lanes4_index(1);
  int32x4_t vlo = vdupq_n_s32(lo), vhi = vdupq_n_s32(hi), zyv = vdupq_n_s32(zy);
  int8x16_t zv = vdupq_n_s8((int8_t)zx);
  /* the groups in one asm statement when the step count is a constant */
  int32_t fast = UTVM_MVE_CONSTANT(steps) && UTVM_MVE_CONSTANT(band) && steps * 64 <= 4095 &&
                 (mode & UTVM_MVE_C42_RIGHT);
  int32_t direct = kh == 1 && kw == 1 && sh == 1 && sw == 1 && !pad_top && !pad_left && cin * sub == 16;
  if (dead) {
    for (int32_t p = 0; p < npix; ++p) utvm_mve_copy_s8(out + p * cout, tmpl, cout);
  }
  if (band && nv) {
    /* per line a band (in col), its pixels four at a time (the last four overlapping the previous
     * ones), the rows read in place: row r of a group r * rs bytes after its first */
    int32_t rows = band == 1;
    int32_t len = rows ? ow : oh, nlines = rows ? oh : ow;
    int32_t rs = (rows ? sw * kh : sh * kw) * cin;                /* band bytes per pixel */
    int32_t pos = (len - 1) * (rows ? sw : sh) + (rows ? kw : kh); /* band positions */
    int32_t ostep = (rows ? 1 : ow) * cout, lstep = (rows ? ow : 1) * cout;
    uint32x4_t boffs = utvm_mve_lanes4_index(ostep);
    for (int32_t line = 0; line < nlines; ++line) {
      utvm_mve_band(col, x, h, w, cin, line, band, pos, kh, kw, sh, sw, dh, dw, pad_top, pad_left, zv);
      for (int32_t p0 = 0; p0 < len; p0 += 4) {
        int32_t p = p0 + 4 > len ? len - 4 : p0;
        int8_t* o = out + line * lstep + p * ostep;
        if (fast) {
          utvm_mve_group42_asm(o, col + p * rs, rs, 16, wt, steps, nv, boffs, zyv, vlo, vhi);
        } else {
          utvm_mve_group42(o, col + p * rs, rs, 16, 4, wt, steps, nv, 1, cout, mode, boffs, rowi, zy, vlo, vhi);
        }
      }
    }
    return;
  }
  int32_t oy = 0, ox = 0;
  for (int32_t g = 0; g <= full; ++g) {
    int32_t np = g < full ? gp : rest;
    if (!np || !nv) break;
    const int8_t* rows = col;
    if (direct && np == gp) {
      rows = x + g * 64;
    } else if (direct) {
      utvm_mve_copy_s8(col, x + g * 64, np * cin);
    } else {
      for (int32_t r = 0; r < np; ++r) {
        utvm_mve_pack_patch(col, r, x, h, w, cin, oy * sh - pad_top, ox * sw - pad_left, kh, kw, dh, dw, zv);
        if (++ox == ow) {
          ox = 0;
          ++oy;
        }
      }
    }
    if (np == gp && fast) {
      utvm_mve_group42_asm(out + g * gp * cout, rows, 16, 64, wt, steps, nv, offs, zyv, vlo, vhi);
    } else {
      utvm_mve_group42(out + g * gp * cout, rows, 16, 64, np, wt, steps, nv, sub, cout, mode, offs, rowi, zy, vlo,
                       vhi);
    }
  }
#else
  (void)col, (void)mode;
  for (int32_t p = 0; p < npix; ++p) {
    int32_t oy = p / ow, ox = p % ow;
    if (dead) {
      for (int32_t o = 0; o < cout; ++o) out[p * cout + o] = tmpl[o];
    }
    for (int32_t v = 0; v < nv; ++v) {
      const int8_t* pair = wt + (v >> 1) * utvm_mve_c42_pair_bytes(steps);
      int32_t off = utvm_mve_c42_rec(pair, steps, v & 1, 3);
      int32_t j = off / cout; /* vector v computes the pixels j, j + sub, ... */
      if (p % sub != j) continue;
      int32_t acc = 0;
      for (int32_t ry = 0; ry < kh; ++ry) {
        for (int32_t rx = 0; rx < kw; ++rx) {
          int32_t iy = oy * sh - pad_top + ry * dh, ix = ox * sw - pad_left + rx * dw;
          int32_t in = iy >= 0 && iy < h && ix >= 0 && ix < w;
          for (int32_t c = 0; c < cin; ++c) {
            /* lane of the filter vector: taps (ry, rx), or (rx, ry) for bands along rows */
            int32_t l = (band == 1 ? rx * kh + ry : ry * kw + rx) * cin + c + j * cin;
            acc += (in ? x[(iy * w + ix) * cin + c] : zx) * pair[(l >> 4) * 32 + (v & 1) * 16 + (l & 15)];
          }
        }
      }
      int32_t r = utvm_mve_mbqm(acc + utvm_mve_c42_rec(pair, steps, v & 1, 0), utvm_mve_c42_rec(pair, steps, v & 1, 1),
                                utvm_mve_c42_rec(pair, steps, v & 1, 2));
      out[(p - j) * cout + off] = utvm_mve_clamp_s8(r + zy, lo, hi);
    }
  }
#endif
}

/* ---------------------------------------------------------------------------------------------
 * 3x3 depthwise convolutions (depth multiplier 1) by gathers: utvm_mve_dwg_s8.
 *
 * One VMLADAV per output: its 16 lanes hold the window of one channel around two or three
 * neighbouring output pixels of a "line" (an output row, or an output column when the layer is
 * taller than wide), so that one gather load serves them, each pixel with its own filter
 * vector (the 9 weights at its lanes, zeros elsewhere). A pass handles `lines` neighbouring
 * lines for one block of cb channels (16 or 8): it copies the input they read into a "tile"
 * (the zero point in the padding): along the lines la positions, across them bw positions
 * (their windows), position (a, b) of channel j at (a * bw + b) * cb + j; the 15 taps of
 * along positions a..a + 4 and across positions b..b + 2 are then within 255 bytes of the
 * first ((4 * bw + 2) * cb <= 255), one gather with 8-bit offsets. Then, per channel, it runs
 * through the pass's output pixels four at a time (one vector of four dot products,
 * requantized together: VQRDMLAH onto the sign, VRSHL, and stored by one scatter) following a
 * table built once per call in the scratch: the address of every gather and the output
 * offsets of every vector. The lines are split into groups of `share` pixels (3 at stride 1,
 * else 2; a last group overlapping the previous one when the line length is not a multiple),
 * and the groups of a pass padded to whole units (12 pixels: 4 or 6 gathers, 3 vectors) by
 * repeating the last group (the same values stored twice); the last pass overlaps the
 * previous one when the lines are not a multiple.
 * Filters and requantization: per channel a record of 32 bytes: 6 zero bytes, the 9 weights in
 * the order of the lanes (along-major: (along tap) * 3 + (across tap)), 7 zero bytes, the
 * shift (int8), a zero byte, the folded bias and the multiplier (int32): the filter vector of
 * the pixel k of a group (k = 0, 1, 2) is the 16 bytes at 6 - 3 * stride * k.
 * ------------------------------------------------------------------------------------------ */

#define UTVM_MVE_DWG_RECORD 32
#define UTVM_MVE_DWG_UNIT 12 /* pixels per unit */

/* the geometry of a utvm_mve_dwg_s8 layer, along and across its lines */
typedef struct {
  int32_t c, cb, vertical, len, nlines, lines, share;
  int32_t sa, sc, pa, pc, na, nc; /* strides, paddings before, input sizes along / across */
  int32_t step_p, step_m;         /* output bytes per pixel along / per line */
  int32_t la, bw, ta;             /* tile positions along, across; tile bytes per along position */
  int32_t groups;                 /* groups per line */
  int32_t units;                  /* units per pass */
} utvm_mve_dwg_geo_t;

static inline void utvm_mve_dwg_geo(utvm_mve_dwg_geo_t* g, int32_t h, int32_t w, int32_t c, int32_t oh, int32_t ow,
                                    int32_t sh, int32_t sw, int32_t pad_top, int32_t pad_left, int32_t vertical,
                                    int32_t lines, int32_t cb) {
  g->c = c;
  g->cb = cb;
  g->vertical = vertical;
  g->len = vertical ? oh : ow;
  g->nlines = vertical ? ow : oh;
  g->lines = lines;
  g->sa = vertical ? sh : sw;
  g->sc = vertical ? sw : sh;
  g->pa = vertical ? pad_top : pad_left;
  g->pc = vertical ? pad_left : pad_top;
  g->na = vertical ? h : w;
  g->nc = vertical ? w : h;
  g->step_p = (vertical ? ow : 1) * c;
  g->step_m = (vertical ? 1 : ow) * c;
  g->share = g->sa == 1 && g->len >= 3 ? 3 : 2;
  g->la = (g->len - 1) * g->sa + 3 + 2; /* + 2: the lanes past the last group's window */
  g->bw = (lines - 1) * g->sc + 3;
  g->ta = g->bw * cb;
  g->groups = (g->len + g->share - 1) / g->share;
  g->units = (lines * g->groups * g->share + UTVM_MVE_DWG_UNIT - 1) / UTVM_MVE_DWG_UNIT;
}

/* the first pixel of group i of a line (the last one overlaps its predecessor) */
static inline int32_t utvm_mve_dwg_first(const utvm_mve_dwg_geo_t* g, int32_t i) {
  int32_t p = i * g->share;
  return p + g->share > g->len ? g->len - g->share : p;
}

/* the reference (plain C): one output */
static inline int8_t utvm_mve_dwg_ref(const int8_t* x, const utvm_mve_dwg_geo_t* g, const int8_t* rec, int32_t ch,
                                      int32_t m, int32_t p, int32_t zx, int32_t zy, int32_t lo, int32_t hi) {
  int32_t acc = 0;
  for (int32_t ta = 0; ta < 3; ++ta) {
    for (int32_t tc = 0; tc < 3; ++tc) {
      int32_t ia = p * g->sa - g->pa + ta, ic = m * g->sc - g->pc + tc;
      int32_t in = ia >= 0 && ia < g->na && ic >= 0 && ic < g->nc;
      int32_t iy = g->vertical ? ia : ic, ix = g->vertical ? ic : ia; /* row, column */
      int32_t wdt = g->vertical ? g->nc : g->na;
      acc += (in ? x[(iy * wdt + ix) * g->c + ch] : zx) * rec[6 + ta * 3 + tc];
    }
  }
  const int32_t* words = (const int32_t*)(const void*)(rec + 24);
  return utvm_mve_clamp_s8(utvm_mve_mbqm(acc + words[0], words[1], rec[22]) + zy, lo, hi);
}

#ifdef UTVM_MVE_VECTOR
/* n pieces of cb bytes (8 or 16) from src (step bytes apart) to dst (dstep bytes apart) */
__attribute__((always_inline)) static inline void utvm_mve_dwg_pieces(int8_t* dst, int32_t dstep,
                                                                      const int8_t* src, int32_t step, int32_t n,
                                                                      int32_t cb) {
  if (cb == 16) {
    for (int32_t i = 0; i < n; ++i, src += step, dst += dstep) vstrbq_s8(dst, vldrbq_s8(src));
  } else if (step == 8) { /* contiguous: two pieces per load, stored by one scatter */
    uint8x16_t lane = vidupq_n_u8(0, 1);
    uint8x16_t sc = vaddq_u8(vandq_u8(lane, vdupq_n_u8(7)), vmulq_n_u8(vshrq_n_u8(lane, 3), (uint8_t)dstep));
    for (; n >= 2; n -= 2, src += 16, dst += 2 * dstep) vstrbq_scatter_offset_s8(dst, sc, vldrbq_s8(src));
    if (n) vstrbq_p_s8(dst, vldrbq_z_s8(src, vctp8q(8)), vctp8q(8));
  } else {
    for (int32_t i = 0; i < n; ++i, src += step, dst += dstep) {
      uint64_t v;
      __builtin_memcpy(&v, src, 8);
      __builtin_memcpy(dst, &v, 8);
    }
  }
}

/* n pieces of cb bytes of the zero point to dst (dstep bytes apart) */
__attribute__((always_inline)) static inline void utvm_mve_dwg_fill(int8_t* dst, int32_t dstep, int32_t n,
                                                                    int32_t cb, int8x16_t zv) {
  mve_pred16_t pb = vctp8q((uint32_t)cb);
  for (int32_t i = 0; i < n; ++i, dst += dstep) vstrbq_p_s8(dst, zv, pb);
}

/* the tile of lines m0..m0 + lines - 1, channels cb0..cb0 + cb - 1 */
__attribute__((always_inline)) static inline void utvm_mve_dwg_tile(int8_t* tile, const int8_t* x,
                                                                    const utvm_mve_dwg_geo_t* g, int32_t m0,
                                                                    int32_t cb0, int8x16_t zv) {
  int32_t wdt = g->vertical ? g->nc : g->na; /* input columns */
  int32_t along = (g->vertical ? wdt : 1) * g->c, across = (g->vertical ? 1 : wdt) * g->c;
  /* the along positions inside the input: [a0, a1) */
  int32_t a0 = g->pa < g->la ? g->pa : g->la;
  int32_t a1 = g->pa + g->na < g->la ? g->pa + g->na : g->la;
  for (int32_t b = 0; b < g->bw; ++b) {
    int32_t ic = m0 * g->sc - g->pc + b;
    int8_t* d = tile + b * g->cb;
    if (ic < 0 || ic >= g->nc) {
      utvm_mve_dwg_fill(d, g->ta, g->la, g->cb, zv);
      continue;
    }
    utvm_mve_dwg_fill(d, g->ta, a0, g->cb, zv);
    utvm_mve_dwg_pieces(d + a0 * g->ta, g->ta, x + ic * across + cb0, along, a1 - a0, g->cb);
    utvm_mve_dwg_fill(d + a1 * g->ta, g->ta, g->la - a1, g->cb, zv);
  }
}

/* the table of a pass, in the order the loops read it: per unit and vector (four pixels), the
 * addresses of the gathers it completes (of channel 0; int32) then its output offsets (from the
 * pass's output at channel 0, in the lane order of utvm_mve_lanes4; 16 bytes) */
__attribute__((always_inline)) static inline void utvm_mve_dwg_table(int8_t* table, const int8_t* tile,
                                                                     const utvm_mve_dwg_geo_t* g) {
  int32_t total = g->units * UTVM_MVE_DWG_UNIT;
  int32_t m = 0, i = 0, slots = 0, off[4];
  int8_t* t = table;
  for (int32_t s = 0; s < total; s += g->share) {
    int32_t first = utvm_mve_dwg_first(g, i);
    *(int32_t*)(void*)t = (int32_t)(intptr_t)(tile + first * g->sa * g->ta + m * g->sc * g->cb);
    t += 4;
    for (int32_t j = 0; j < g->share; ++j) {
      off[slots++] = m * g->step_m + (first + j) * g->step_p;
      if (slots == 4) { /* a vector complete: its offsets */
        *(uint32x4_t*)(void*)t = vreinterpretq_u32_s32(utvm_mve_lanes4(off[0], off[1], off[2], off[3]));
        t += 16;
        slots = 0;
      }
    }
    /* the next group (the sequence padded by repeating the last group) */
    if (m + 1 < g->lines || i + 1 < g->groups) {
      if (++i == g->groups) {
        i = 0;
        ++m;
      }
    }
  }
}

/* one channel of a pass, three pixels per gather (stride 1 along), lo = -128 and hi = 127 (the
 * clamp is the saturation to int8): per unit 4 gathers, 12 VMLADAV, 3 requantized vectors */
__attribute__((always_inline)) static inline void utvm_mve_dwg_run3(int8_t* ob, const int8_t* tbl, int32_t units,
                                                                    const int8_t* rec, uint8x16_t offc,
                                                                    int32x4_t zyv) {
#ifdef __OPTIMIZE__ /* the asm loops only when optimizing: without, the C loop runs */
  const int32_t* words = (const int32_t*)(const void*)(rec + 24);
  int32_t bias = words[0], mult = words[1], shift = rec[22];
  int8x16_t w0 = vldrbq_s8(rec + 6), w1 = vldrbq_s8(rec + 3), w2 = vldrbq_s8(rec);
  int32_t a0, a1, a2, a3, b0, b1, gb;
  register int32_t n __asm__("lr") = units; /* the loop counter of LE */
  int8x16_t d;
  int32x4_t v;
#define UTVM_MVE_DWG_REQ(A, B, C, D)                                                               \
  UTVM_MVE_LANES4("%q[v]", A, B, C, D)                                                             \
  "vadd.i32 %q[v], %q[v], %[bias]\n\t"                                                            \
  "vshr.s32 %q[d], %q[v], #31\n\t"                                                                 \
  "vqrdmlah.s32 %q[d], %q[v], %[mult]\n\t"                                                         \
  "vldrw.32 %q[v], [%[tbl]], #16\n\t"                                                              \
  "vrshl.s32 %q[d], %[shift]\n\t"                                                                  \
  "vadd.i32 %q[d], %q[d], %q[zy]\n\t"                                                              \
  "vqmovnb.s32 %q[d], %q[d]\n\t"                                                                   \
  "vqmovnb.s16 %q[d], %q[d]\n\t"                                                                   \
  "vstrb.32 %q[d], [%[ob], %q[v]]\n\t"
#define UTVM_MVE_DWG_G3(A, B, C)                                                                   \
  "ldr %[gb], [%[tbl]], #4\n\t"                                                                    \
  "vldrb.u8 %q[d], [%[gb], %q[off]]\n\t"                                                           \
  "vmladav.s8 " A ", %q[d], %q[w0]\n\t"                                                            \
  "vmladav.s8 " B ", %q[d], %q[w1]\n\t"                                                            \
  "vmladav.s8 " C ", %q[d], %q[w2]\n\t"
  __asm__ volatile(
      "dls lr, %[n]\n"
      "1:\n\t"
      UTVM_MVE_DWG_G3("%[a0]", "%[a1]", "%[a2]")
      UTVM_MVE_DWG_G3("%[a3]", "%[b0]", "%[b1]")
      UTVM_MVE_DWG_REQ("%[a0]", "%[a1]", "%[a2]", "%[a3]")
      UTVM_MVE_DWG_G3("%[a0]", "%[a1]", "%[a2]")
      UTVM_MVE_DWG_REQ("%[b0]", "%[b1]", "%[a0]", "%[a1]")
      UTVM_MVE_DWG_G3("%[a3]", "%[b0]", "%[b1]")
      UTVM_MVE_DWG_REQ("%[a2]", "%[a3]", "%[b0]", "%[b1]")
      "le lr, 1b"
      : [a0] "=&Te"(a0), [a1] "=&Te"(a1), [a2] "=&Te"(a2), [a3] "=&Te"(a3), [b0] "=&Te"(b0), [b1] "=&Te"(b1),
        [gb] "=&r"(gb), [tbl] "+r"(tbl), [n] "+r"(n), [d] "=&w"(d), [v] "=&w"(v)
      : [ob] "r"(ob), [bias] "r"(bias), [mult] "r"(mult), [shift] "r"(shift), [off] "w"(offc), [w0] "w"(w0),
        [w1] "w"(w1), [w2] "w"(w2), [zy] "w"(zyv)
      : "memory");
  (void)a0, (void)a1, (void)a2, (void)a3, (void)b0, (void)b1, (void)gb, (void)d, (void)v;
#else
  (void)ob, (void)tbl, (void)units, (void)rec, (void)offc, (void)zyv;
#endif
}

/* one channel of a pass, two pixels per gather, any clamp: per unit 6 gathers, 12 VMLADAV, 3
 * requantized vectors */
__attribute__((always_inline)) static inline void utvm_mve_dwg_run2(int8_t* ob, const int8_t* tbl, int32_t units,
                                                                    const int8_t* rec, int32_t sa, uint8x16_t offc,
                                                                    int32_t zy, int32x4_t lo, int32x4_t hi) {
#ifdef __OPTIMIZE__
  const int32_t* words = (const int32_t*)(const void*)(rec + 24);
  int32_t bias = words[0], mult = words[1], shift = rec[22];
  int8x16_t w0 = vldrbq_s8(rec + 6), w1 = vldrbq_s8(rec + 6 - 3 * sa);
  int32_t a0, a1, a2, a3, gb;
  register int32_t n __asm__("lr") = units; /* the loop counter of LE */
  int8x16_t d;
  int32x4_t v;
#define UTVM_MVE_DWG_G2(A, B)                                                                      \
  "ldr %[gb], [%[tbl]], #4\n\t"                                                                    \
  "vldrb.u8 %q[d], [%[gb], %q[off]]\n\t"                                                           \
  "vmladav.s8 " A ", %q[d], %q[w0]\n\t"                                                            \
  "vmladav.s8 " B ", %q[d], %q[w1]\n\t"
#define UTVM_MVE_DWG_VEC2                                                                          \
  UTVM_MVE_DWG_G2("%[a0]", "%[a1]")                                                                \
  UTVM_MVE_DWG_G2("%[a2]", "%[a3]")                                                                \
  UTVM_MVE_LANES4("%q[v]", "%[a0]", "%[a1]", "%[a2]", "%[a3]")                                      \
  "vadd.i32 %q[v], %q[v], %[bias]\n\t"                                                            \
  "vshr.s32 %q[d], %q[v], #31\n\t"                                                                 \
  "vqrdmlah.s32 %q[d], %q[v], %[mult]\n\t"                                                         \
  "vldrw.32 %q[v], [%[tbl]], #16\n\t"                                                              \
  "vrshl.s32 %q[d], %[shift]\n\t"                                                                  \
  "vadd.i32 %q[d], %q[d], %[zy]\n\t"                                                               \
  "vmax.s32 %q[d], %q[d], %q[lo]\n\t"                                                              \
  "vmin.s32 %q[d], %q[d], %q[hi]\n\t"                                                              \
  "vstrb.32 %q[d], [%[ob], %q[v]]\n\t"
  __asm__ volatile("dls lr, %[n]\n1:\n\t" UTVM_MVE_DWG_VEC2 UTVM_MVE_DWG_VEC2 UTVM_MVE_DWG_VEC2 "le lr, 1b"
                   : [a0] "=&Te"(a0), [a1] "=&Te"(a1), [a2] "=&Te"(a2), [a3] "=&Te"(a3), [gb] "=&r"(gb),
                     [tbl] "+r"(tbl), [n] "+r"(n), [d] "=&w"(d), [v] "=&w"(v)
                   : [ob] "r"(ob), [bias] "r"(bias), [mult] "r"(mult), [shift] "r"(shift), [zy] "r"(zy),
                     [off] "w"(offc), [w0] "w"(w0), [w1] "w"(w1), [lo] "w"(lo), [hi] "w"(hi)
                   : "memory");
  (void)a0, (void)a1, (void)a2, (void)a3, (void)gb, (void)d, (void)v;
#else
  (void)ob, (void)tbl, (void)units, (void)rec, (void)sa, (void)offc, (void)zy, (void)lo, (void)hi;
#endif
}

/* one channel of a pass (C): the same table, any share and clamp */
__attribute__((always_inline)) static inline void utvm_mve_dwg_runc(int8_t* ob, const int8_t* tbl, int32_t units,
                                                                    const int8_t* rec, int32_t sa, int32_t share,
                                                                    uint8x16_t offc, int32_t zy, int32x4_t lo,
                                                                    int32x4_t hi) {
  const int32_t* words = (const int32_t*)(const void*)(rec + 24);
  int32_t bias = words[0], mult = words[1], shift = rec[22];
  int8x16_t wk[3] = {vldrbq_s8(rec + 6), vldrbq_s8(rec + 6 - 3 * sa), vldrbq_s8(rec + 6 - 6 * sa)};
  int32_t acc[4], slots = 0;
  for (int32_t s = 0; s < units * UTVM_MVE_DWG_UNIT; s += share) {
    const int8_t* gb = (const int8_t*)(intptr_t) * (const int32_t*)(const void*)tbl;
    tbl += 4;
    uint8x16_t d = vldrbq_gather_offset_u8((const uint8_t*)gb, offc);
    for (int32_t k = 0; k < share; ++k) {
      acc[slots++] = vmladavq_s8(vreinterpretq_s8_u8(d), wk[k]);
      if (slots == 4) {
        uint32x4_t offs = vldrwq_u32((const uint32_t*)(const void*)tbl);
        tbl += 16;
        slots = 0;
        utvm_mve_rq_scatter(ob, offs, utvm_mve_lanes4(acc[0], acc[1], acc[2], acc[3]), bias, mult, shift, 0, 0, zy,
                            lo, hi);
      }
    }
  }
}
#endif

/* Depthwise 3 x 3 convolution (multiplier 1), the whole layer:
 *   out[(oy * ow + ox) * c + ch] = requant(sum_{ry, rx} x[oy * sh - pad_top + ry][ox * sw - pad_left + rx][ch]
 *                                          * w[ry][rx][ch], ch)
 * (taps outside the input: the zero point zx); wt: the records above (right: every shift a right
 * shift); orientation `vertical`:
 * lines are output columns); `lines` lines per pass (at most the number of lines), cb channels
 * per tile (8 or 16, dividing c; (4 * bw + 2) * cb <= 255); scratch: the tile, la * bw * cb
 * bytes, and the table. */
__attribute__((always_inline)) static inline void utvm_mve_dwg_impl(int8_t* out, const int8_t* x, int32_t h, int32_t w,
                                                                    int32_t c, int32_t oh, int32_t ow, int32_t sh,
                                                                    int32_t sw, int32_t pad_top, int32_t pad_left,
                                                                    const int8_t* wt, int32_t zx, int32_t zy,
                                                                    int32_t lo, int32_t hi, int32_t right,
                                                                    int32_t vertical, int32_t lines, int32_t cb,
                                                                    int8_t* scratch) {
  utvm_mve_dwg_geo_t g;
  utvm_mve_dwg_geo(&g, h, w, c, oh, ow, sh, sw, pad_top, pad_left, vertical, lines, cb);
#ifdef UTVM_MVE_VECTOR
  int8_t* tile = scratch;
  int8_t* table = scratch + g.la * g.ta;
  int8x16_t zv = vdupq_n_s8((int8_t)zx);
  int32x4_t vlo = vdupq_n_s32(lo), vhi = vdupq_n_s32(hi), zyv = vdupq_n_s32(zy);
  /* the lanes: taps (along i / 3, across i % 3), i < 15; lane 15 a copy of lane 14 (weight 0) */
  static const uint8_t lane_along[16] = {0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 4};
  static const uint8_t lane_across[16] = {0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 2};
  uint8x16_t off = vaddq_u8(vmulq_n_u8(vld1q_u8(lane_along), (uint8_t)g.ta),
                            vmulq_n_u8(vld1q_u8(lane_across), (uint8_t)cb));
  /* the asm loops: right shifts only (VQRDMLAH onto the sign); not without optimization (the C
   * loop is then the one tested) */
  int32_t fast = UTVM_MVE_CONSTANT(right) && right;
  int32_t fast3 = fast && lo == -128 && hi == 127 && g.share == 3;
  int32_t fast2 = fast && g.share == 2;
  utvm_mve_dwg_table(table, tile, &g);
  for (int32_t m0 = 0; m0 < g.nlines; m0 += lines) {
    int32_t mm = m0 + lines > g.nlines ? g.nlines - lines : m0; /* the last pass: the last lines */
    int8_t* ob = out + mm * g.step_m;
    for (int32_t cb0 = 0; cb0 < c; cb0 += cb) {
      utvm_mve_dwg_tile(tile, x, &g, mm, cb0, zv);
      for (int32_t j = 0; j < cb; ++j) {
        const int8_t* rec = wt + (cb0 + j) * UTVM_MVE_DWG_RECORD;
        uint8x16_t offc = vaddq_n_u8(off, (uint8_t)j);
        if (fast3) {
          utvm_mve_dwg_run3(ob + cb0 + j, table, g.units, rec, offc, zyv);
        } else if (fast2) {
          utvm_mve_dwg_run2(ob + cb0 + j, table, g.units, rec, g.sa, offc, zy, vlo, vhi);
        } else {
          utvm_mve_dwg_runc(ob + cb0 + j, table, g.units, rec, g.sa, g.share, offc, zy, vlo, vhi);
        }
      }
    }
  }
#else
  (void)scratch, (void)right;
  for (int32_t m = 0; m < g.nlines; ++m) {
    for (int32_t p = 0; p < g.len; ++p) {
      for (int32_t ch = 0; ch < c; ++ch) {
        out[m * g.step_m + p * g.step_p + ch] =
            utvm_mve_dwg_ref(x, &g, wt + ch * UTVM_MVE_DWG_RECORD, ch, m, p, zx, zy, lo, hi);
      }
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

static inline int32_t utvm_mve_conv_row_s8(void* out, void* x, int32_t h, int32_t w, int32_t cin, int32_t iy0,
                                           int32_t ow, int32_t sw, int32_t pad_left, int32_t kh, int32_t kw,
                                           int32_t dh, void* wt, int32_t cout, int32_t zx, void* bias, void* mult,
                                           void* shift, int32_t m0, int32_t s0, int32_t mode, int32_t zy, int32_t lo,
                                           int32_t hi) {
  utvm_mve_rq_t q = {(const int32_t*)bias, (const int32_t*)mult, (const int8_t*)shift, m0, s0, mode, zy, lo, hi};
  utvm_mve_conv_row_impl((int8_t*)out, (const int8_t*)x, h, w, cin, iy0, ow, sw, pad_left, kh, kw, dh,
                         (const int8_t*)wt, cout, zx, q);
  return 0;
}

static inline int32_t utvm_mve_dw3x3_row_s8(void* out, void* x, int32_t h, int32_t w, int32_t c, int32_t iy0,
                                            int32_t ow, int32_t sw, int32_t pad_left, int32_t dh, int32_t dw,
                                            void* wt, int32_t zx, void* bias, void* mult, void* shift,
                                            int32_t m0, int32_t s0, int32_t mode, int32_t zy, int32_t lo,
                                            int32_t hi) {
  utvm_mve_rq_t q = {(const int32_t*)bias, (const int32_t*)mult, (const int8_t*)shift, m0, s0, mode, zy, lo, hi};
  utvm_mve_dw3x3_row_impl((int8_t*)out, (const int8_t*)x, h, w, c, iy0, ow, sw, pad_left, dh, dw,
                          (const int8_t*)wt, zx, q);
  return 0;
}

/* a + b of n int8 elements; za, zb, zy: zero points; ma, sha, mb, shb, my, shy: TFLite's
 * input and output multipliers and shifts; lo, hi: activation range */
static inline int32_t utvm_mve_add_s8(void* out, void* a, void* b, int32_t n, int32_t za, int32_t ma, int32_t sha,
                                      int32_t zb, int32_t mb, int32_t shb, int32_t my, int32_t shy, int32_t zy,
                                      int32_t lo, int32_t hi) {
  utvm_mve_add_t p = {za, ma, sha, zb, mb, shb, my, shy, zy, lo, hi};
  utvm_mve_add_impl((int8_t*)out, (const int8_t*)a, (const int8_t*)b, n, &p);
  return 0;
}

__attribute__((always_inline)) static inline int32_t utvm_mve_conv42_s8(void* out, void* x, int32_t h, int32_t w,
                                                                        int32_t cin, int32_t oh, int32_t ow,
                                                                        int32_t kh, int32_t kw, int32_t sh,
                                                                        int32_t sw, int32_t dh, int32_t dw,
                                                                        int32_t pad_top, int32_t pad_left, void* wt,
                                                                        int32_t nv, int32_t dead, int32_t cout,
                                                                        int32_t sub, int32_t band, int32_t zx,
                                                                        void* col, int32_t mode, int32_t zy,
                                                                        int32_t lo, int32_t hi) {
  utvm_mve_conv42_impl((int8_t*)out, (const int8_t*)x, h, w, cin, oh, ow, kh, kw, sh, sw, dh, dw, pad_top, pad_left,
                       (const int8_t*)wt, nv, dead, cout, sub, band, zx, (int8_t*)col, mode, zy, lo, hi);
  return 0;
}

__attribute__((always_inline)) static inline int32_t utvm_mve_dwg_s8(void* out, void* x, int32_t h, int32_t w,
                                                                     int32_t c, int32_t oh, int32_t ow, int32_t sh,
                                                                     int32_t sw, int32_t pad_top, int32_t pad_left,
                                                                     void* wt, int32_t zx, int32_t zy, int32_t lo,
                                                                     int32_t hi, int32_t right, int32_t vertical,
                                                                     int32_t lines, int32_t cb, void* scratch) {
  utvm_mve_dwg_impl((int8_t*)out, (const int8_t*)x, h, w, c, oh, ow, sh, sw, pad_top, pad_left, (const int8_t*)wt, zx,
                    zy, lo, hi, right, vertical, lines, cb, (int8_t*)scratch);
  return 0;
}

#endif /* UTVM_KERNELS_MVE_H_ */
