/*
 * int8 layer helpers for Helium (MVE: Cortex-M52, M55, M85) that utvm's generated kernels call
 * (header-only, C99). Each helper does a whole layer (utvm_mve_dw3x3_row_s8: an output row);
 * the generated code passes the geometry as constants, so that the helpers, always inlined,
 * are specialised for their layer. With __ARM_FEATURE_MVE they use vector instructions (the
 * hottest loops as inline assembly, when optimizing: the step counts and strides are then
 * immediates), elsewhere plain C with the same results (the arithmetic is TFLite's,
 * bit-exact).
 *
 * Requantization: per output channel o,
 *   y = clamp(MultiplyByQuantizedMultiplier(acc + bias[o], mult[o], shift[o]) + zy, lo, hi)
 * (bias folded with the input zero point; shifts in TFLite's convention: > 0 left, < 0 right).
 * Vector form: VQRDMULH is gemmlowp's SaturatingRoundingDoublingHighMul exactly; gemmlowp's
 * rounding right shift (ties away from zero) is VRSHL (ties up) after subtracting one from the
 * negative values: with a multiplier in a scalar register, VQRDMLAH of the value onto its
 * sign (-1 or 0) does both in one instruction (right shifts of 1..31 only; 0 - 1 still rounds
 * to 0); else VAND of the value with the (negative) shift, VSHR by 31 and VQADD.
 * Per lane, the counts QEMU reports are instructions, not beats: one VMLADAV(A) is 16
 * multiply-accumulates.
 *
 * - utvm_mve_conv42_s8: convolutions (any window, stride, dilation, padding) in blocks of 4
 *   output pixels x 2 filter vectors: 8 VMLADAV(A) per 16-byte step (14 instructions per 128
 *   products); rows read in place (pointwise layers), from a band of the input re-laid out
 *   (few input channels) or gathered patches; requantization records beside the filters,
 *   pruned channels (weights all zero) from a constant template.
 * - utvm_mve_dwg_s8: 3x3 depthwise (multiplier 1, 8n channels): one VMLADAV per output on a
 *   gather (8-bit offsets into a tile of the input) shared by 2 or 3 output pixels.
 * - utvm_mve_dwt_s8: 3x3 depthwise on tiny maps (any channel count): every output pixel its own
 *   case (its taps inside the input only), 4 channels per vector of dot products.
 * - utvm_mve_fc4_s8: fully connected layers, 4 units per input load.
 * - utvm_mve_dw3x3_row_s8: 3x3 depthwise with 4n channels or dilation, one output row: four
 *   pixels x four channels per step, read in place (a tap in the padding adds the zero point
 *   times its weight).
 * - utvm_mve_add_s8: TFLite's int8 ADD of two tensors of n elements (same shape), 16 elements
 *   per step (4 x int32x4), the last n % 16 four at a time under a predicate.
 * - utvm_mve_im2col_s8 / utvm_mve_gemm_s8: one output pixel's patch made contiguous, and up to
 *   four such patches x all channels (the first Helium convolution helpers, kept for the
 *   phases of TRANSPOSE_CONV; utvm_mve_matvec_s8 of BATCH_MATMUL shares the GEMM loop).
 * - The 16x8 and recurrent helpers at the end of the file (utvm_mve_mac4_s16, utvm_mve_dw_row_s16,
 *   utvm_mve_lstm_*), described where they are defined.
 * The requantization of utvm_mve_dw3x3_row_s8 ("rq", utvm_mve_rq_t) is stored as compactly as
 * the generic kernels store it: the folded biases an int32 array; the multipliers an int32
 * array (UTVM_MVE_RQ_MULT) or one value m0; the shifts one value s0, or in the low byte of the
 * bias words (UTVM_MVE_RQ_PACKED: bias * 256 + (shift & 255), the byte VRSHL by a register
 * reads as its signed shift), or an int8 array (UTVM_MVE_RQ_SHIFT8); the unused pointers are
 * the bias pointer.
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
  const utvm_mve_rq_t* q = &rq; /* a copy: the int8 stores would otherwise make gcc reload its fields */
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
 * each pair followed by its "record" of six words: biases (folded with the input zero point),
 * multipliers, and the shift (low byte, signed) with the output offset (j * cout + o) above it,
 * of its two vectors, each two side by side; an odd last vector repeated. The channels whose weights are all zero ("dead", common in
 * pruned models) have a constant output: with `dead` set, a template of cout bytes follows the
 * pairs (the dead channels' outputs) and is copied to every output pixel first.
 * One block: per step one load per filter vector and per row and 8 VMLADAV(A), i.e. 14
 * instructions per 128 products; the eight dot products (row r, vector c) become two vectors
 * of the four rows, requantized four lanes at a time and stored at the rows' pixels (stride
 * sub * cout).
 * ------------------------------------------------------------------------------------------ */

#define UTVM_MVE_C42_RIGHT 1 /* every shift is a right shift of 1..31 */

/* bytes of a pair of filter vectors and its record */
static inline int32_t utvm_mve_c42_pair_bytes(int32_t steps) { return steps * 32 + 24; }

/* the record of the pair at wt: value i of vector c (0: bias, 1: multiplier, 2: shift, 3: offset) */
static inline int32_t utvm_mve_c42_rec(const int8_t* pair, int32_t steps, int32_t c, int32_t i) {
  const int32_t w = ((const int32_t*)(const void*)(pair + steps * 32))[2 * (i < 2 ? i : 2) + c];
  return i < 2 ? w : i == 2 ? (int32_t)(int8_t)(uint8_t)(uint32_t)w : w >> 8;
}

#ifdef UTVM_MVE_VECTOR
/* One step of a block: a0..a3 (filter vector 0) and b0..b3 (vector 1) of rows 0..3 (MAC:
 * vmladav for the first step, vmladava after it); rows r1, r2, r3 bytes after row 0 (16, 32, 48
 * in a group), the row pointer advancing by ss bytes per step (64 in a group), the filter
 * pointer by 32. */
#define UTVM_MVE_MAC42_INS(MAC, LD)                                                                \
  "vldrb.8 %q[w0], [%[wp]], #32\n\t"                                                               \
  "vldrb.8 %q[w1], [%[wp], #-16]\n\t"                                                              \
  LD " %q[x0], [%[dp], %[r1]]\n\t" MAC " %[a1], %q[x0], %q[w0]\n\t" MAC " %[b1], %q[x0], %q[w1]\n\t"      \
  LD " %q[x1], [%[dp], %[r2]]\n\t" MAC " %[a2], %q[x1], %q[w0]\n\t" MAC " %[b2], %q[x1], %q[w1]\n\t"      \
  LD " %q[x0], [%[dp], %[r3]]\n\t" MAC " %[a3], %q[x0], %q[w0]\n\t" MAC " %[b3], %q[x0], %q[w1]\n\t"      \
  LD " %q[x1], [%[dp]], %[ss]\n\t" MAC " %[a0], %q[x1], %q[w0]\n\t" MAC " %[b0], %q[x1], %q[w1]\n\t"
/* all the steps of a block: unrolled (the step count a constant: the first, an odd one, then
 * pairs, up to 6 pairs unrolled, more as a loop counting n down); rows loaded by LD: vldrb.8,
 * or vldrw.32 (offsets up to 508, word-aligned rows) */
#define UTVM_MVE_MAC42_ALL(LD)                                                                     \
  UTVM_MVE_MAC42_INS("vmladav.s8", LD)                                                             \
  ".rept %c[odd]\n\t" UTVM_MVE_MAC42_INS("vmladava.s8", LD) ".endr\n\t"                            \
  ".if %c[n2] > 6\n\tmov %[n], %[n2]\n2:\n\t" UTVM_MVE_MAC42_INS("vmladava.s8", LD)                \
      UTVM_MVE_MAC42_INS("vmladava.s8", LD) "subs %[n], %[n], #1\n\tbne 2b\n\t.else\n\t"            \
  ".rept 2 * %c[n2]\n\t" UTVM_MVE_MAC42_INS("vmladava.s8", LD) ".endr\n\t.endif\n\t"
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

/* requantized lanes of v (accumulators with their biases; multiplier m, shift s), stored at
 * dst + offs[i] (the lanes of p, or all when p == 0) */
__attribute__((always_inline)) static inline void utvm_mve_rq4_store(int8_t* dst, uint32x4_t offs, int32x4_t v,
                                                                     int32_t m, int32_t s, int32_t right,
                                                                     mve_pred16_t p, int32_t zy, int32x4_t lo,
                                                                     int32x4_t hi) {
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

/* the same with the bias b added first (accumulators without it) */
__attribute__((always_inline)) static inline void utvm_mve_rq_scatter(int8_t* dst, uint32x4_t offs, int32x4_t v,
                                                                      int32_t b, int32_t m, int32_t s,
                                                                      int32_t right, mve_pred16_t p, int32_t zy,
                                                                      int32x4_t lo, int32x4_t hi) {
  utvm_mve_rq4_store(dst, offs, vaddq_n_s32(v, b), m, s, right, p, zy, lo, hi);
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
 * 0 is out) in one asm statement: the step count and strides constants, right shifts only; wide:
 * rows further than 42 bytes apart (VLDRW: offsets up to 508, rows word-aligned). */
__attribute__((always_inline)) static inline void utvm_mve_group42_asm(int8_t* out, const int8_t* rows,
                                                                       int32_t rs, int32_t ss, int32_t wide,
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
#define UTVM_MVE_GROUP42(LD)                                                                       \
  __asm__ volatile("1:\n\t" UTVM_MVE_MAC42_ALL(LD) \
          "sub %[dp], %[dp], %[back]\n\t" \
          UTVM_MVE_LANES4("%q[w0]", "%[a0]", "%[a1]", "%[a2]", "%[a3]") \
          UTVM_MVE_LANES4("%q[w1]", "%[b0]", "%[b1]", "%[b2]", "%[b3]") \
          "ldrd %[a0], %[a1], [%[wp]], #24\n\t" \
          "ldrd %[a2], %[a3], [%[wp], #-16]\n\t" \
          "ldrd %[b2], %[b3], [%[wp], #-8]\n\t" \
          "sxtb %[b0], %[b2]\n\t" \
          "sxtb %[b1], %[b3]\n\t" \
          "asr %[b2], %[b2], #8\n\t" \
          "asr %[b3], %[b3], #8\n\t" \
          "vadd.i32 %q[w0], %q[w0], %[a0]\n\t" \
          "vadd.i32 %q[w1], %q[w1], %[a1]\n\t" \
          "vshr.s32 %q[x0], %q[w0], #31\n\t" \
          "vshr.s32 %q[x1], %q[w1], #31\n\t" \
          "vqrdmlah.s32 %q[x0], %q[w0], %[a2]\n\t" \
          "vqrdmlah.s32 %q[x1], %q[w1], %[a3]\n\t" \
          "vrshl.s32 %q[x0], %[b0]\n\t" \
          "vrshl.s32 %q[x1], %[b1]\n\t" \
          "vadd.i32 %q[x0], %q[x0], %q[zy]\n\t" \
          "vadd.i32 %q[x1], %q[x1], %q[zy]\n\t" \
          "vmax.s32 %q[x0], %q[x0], %q[lo]\n\t" \
          "vmax.s32 %q[x1], %q[x1], %q[lo]\n\t" \
          "vmin.s32 %q[x0], %q[x0], %q[hi]\n\t" \
          "vmin.s32 %q[x1], %q[x1], %q[hi]\n\t" \
          "vstrb.32 %q[x0], [%[b2], %q[offs]]\n\t" \
          "vstrb.32 %q[x1], [%[b3], %q[offs]]\n\t" \
          "ldr %[a0], %[end]\n\t" \
          "cmp %[wp], %[a0]\n\t" \
          "bne 1b" \
          : UTVM_MVE_MAC42_OUTPUTS \
          : [odd] "i"((steps - 1) & 1), [n2] "i"((steps - 1) >> 1), [back] "i"(steps * ss), [end] "m"(end), \
            [r1] "i"(rs), [r2] "i"(2 * rs), [r3] "i"(3 * rs), [ss] "i"(ss), \
            [offs] "w"(vaddq_n_u32(offs, (uint32_t)out)), [zy] "w"(zyv), [lo] "w"(lo), [hi] "w"(hi) \
          : "cc", "memory");
  if (wide) {
    UTVM_MVE_GROUP42("vldrw.32");
  } else {
    UTVM_MVE_GROUP42("vldrb.8");
  }
#undef UTVM_MVE_GROUP42
  (void)a0, (void)a1, (void)a2, (void)a3, (void)b0, (void)b1, (void)b2, (void)b3, (void)n;
  (void)w0, (void)w1, (void)x0, (void)x1, (void)wp, (void)dp;
#else
  (void)out, (void)rows, (void)rs, (void)ss, (void)wide, (void)wt, (void)steps, (void)nv, (void)offs, (void)zyv, (void)lo,
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
 * after; the last store, and load, under a predicate); cin a multiple of 16: its chunks */
__attribute__((always_inline)) static inline void utvm_mve_band_pieces(int8_t* dst, int32_t dstep, const int8_t* src,
                                                                       int32_t n, int32_t cin, uint8x16_t off,
                                                                       int8x16_t zv) {
  if (cin % 16 == 0) { /* pieces of whole 16-byte chunks */
    for (int32_t i = 0; i < n; ++i, dst += dstep) {
      for (int32_t j = 0; j < cin; j += 16) vstrbq_s8(dst + j, src ? vldrbq_s8(src + j) : zv);
      if (src) src += cin;
    }
    return;
  }
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
 * ((len - 1) * stride + window along) x across x cin bytes and 16 more. Band 3: a pointwise
 * layer (1 x 1, stride 1, no padding) whose pixels are read in place as one line. Else the
 * patches of four pixels are gathered into col (64 * steps bytes). */
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
    /* per line a band (in col; band 3: x itself, the pixels of a pointwise layer one line), its
     * pixels four at a time (the last four overlapping the previous ones), the rows read in
     * place: row r of a group r * rs bytes after its first */
    int32_t rows = band != 2, flat = band == 3;
    int32_t len = flat ? npix : rows ? ow : oh, nlines = flat ? 1 : rows ? oh : ow;
    int32_t rs = (rows ? sw * kh : sh * kw) * cin;                /* band bytes per pixel */
    int32_t pos = (len - 1) * (rows ? sw : sh) + (rows ? kw : kh); /* band positions */
    int32_t ostep = (rows ? 1 : ow) * cout, lstep = (rows ? ow : 1) * cout;
    uint32x4_t boffs = utvm_mve_lanes4_index(ostep);
    const int8_t* src = flat ? x : col;
    for (int32_t line = 0; line < nlines; ++line) {
      if (!flat) utvm_mve_band(col, x, h, w, cin, line, band, pos, kh, kw, sh, sw, dh, dw, pad_top, pad_left, zv);
      for (int32_t p0 = 0; p0 < len; p0 += 4) {
        int32_t p = p0 + 4 > len ? len - 4 : p0;
        int8_t* o = out + line * lstep + p * ostep;
        if (fast && UTVM_MVE_CONSTANT(rs)) {
          utvm_mve_group42_asm(o, src + p * rs, rs, 16, rs > 42, wt, steps, nv, boffs, zyv, vlo, vhi);
        } else {
          utvm_mve_group42(o, src + p * rs, rs, 16, 4, wt, steps, nv, 1, cout, mode, boffs, rowi, zy, vlo, vhi);
        }
      }
    }
    return;
  }
  /* the groups; with at least one whole group, the last one ends at the last pixel
   * (overlapping the one before: the same outputs stored twice), else a partial group */
  for (int32_t g = 0; g * gp < npix && nv; ++g) {
    int32_t p0 = full && g * gp + gp > npix ? npix - gp : g * gp;
    int32_t np = full ? gp : rest;
    const int8_t* rows = col;
    if (direct && np == gp) {
      rows = x + p0 * cin;
    } else if (direct) {
      utvm_mve_copy_s8(col, x, np * cin);
    } else {
      for (int32_t r = 0; r < np; ++r) {
        int32_t oy = (p0 + r) / ow, ox = (p0 + r) % ow;
        utvm_mve_pack_patch(col, r, x, h, w, cin, oy * sh - pad_top, ox * sw - pad_left, kh, kw, dh, dw, zv);
      }
    }
    if (np == gp && fast) {
      utvm_mve_group42_asm(out + p0 * cout, rows, 16, 64, 0, wt, steps, nv, offs, zyv, vlo, vhi);
    } else {
      utvm_mve_group42(out + p0 * cout, rows, 16, 64, np, wt, steps, nv, sub, cout, mode, offs, rowi, zy, vlo, vhi);
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

__attribute__((always_inline)) static inline void utvm_mve_dwg_geo(utvm_mve_dwg_geo_t* g, int32_t h, int32_t w, int32_t c, int32_t oh, int32_t ow,
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
/* 8 bytes at once (pieces of 8 channels: 8-byte aligned in the tile and in x) */
typedef uint64_t __attribute__((may_alias, aligned(8))) utvm_mve_u64_t;

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
    if (n) *(utvm_mve_u64_t*)(void*)dst = *(const utvm_mve_u64_t*)(const void*)src;
  } else {
#ifdef __OPTIMIZE__
    if (UTVM_MVE_CONSTANT(step) && UTVM_MVE_CONSTANT(dstep) && step <= 1020 && dstep <= 1020 && n > 0) {
      /* post-indexed LDRD / STRD: three instructions per piece */
      register int32_t count __asm__("lr") = n;
      int32_t lo32, hi32;
      __asm__ volatile("dls lr, %[count]\n1:\n\tldrd %[lo], %[hi], [%[src]], %[step]\n\t"
                       "strd %[lo], %[hi], [%[dst]], %[dstep]\n\tle lr, 1b"
                       : [lo] "=&r"(lo32), [hi] "=&r"(hi32), [src] "+r"(src), [dst] "+r"(dst), [count] "+r"(count)
                       : [step] "i"(step), [dstep] "i"(dstep)
                       : "memory");
      (void)count;
      return;
    }
#endif
    for (int32_t i = 0; i < n; ++i, src += step, dst += dstep) {
      *(utvm_mve_u64_t*)(void*)dst = *(const utvm_mve_u64_t*)(const void*)src;
    }
  }
}

/* n pieces of cb bytes of the zero point (zv; z8: 8 of its bytes) to dst (dstep bytes apart) */
__attribute__((always_inline)) static inline void utvm_mve_dwg_fill(int8_t* dst, int32_t dstep, int32_t n,
                                                                    int32_t cb, int8x16_t zv, uint64_t z8) {
  for (int32_t i = 0; i < n; ++i, dst += dstep) {
    if (cb == 16) {
      vstrbq_s8(dst, zv);
    } else {
      *(utvm_mve_u64_t*)(void*)dst = z8;
    }
  }
}

/* the tile of lines m0..m0 + lines - 1, channels cb0..cb0 + cb - 1; the positions outside the
 * input (the zero point) only when `fill` (they stay from one channel block to the next) */
__attribute__((always_inline)) static inline void utvm_mve_dwg_tile(int8_t* tile, const int8_t* x,
                                                                    const utvm_mve_dwg_geo_t* g, int32_t m0,
                                                                    int32_t cb0, int32_t fill, int8x16_t zv,
                                                                    uint64_t z8) {
  int32_t wdt = g->vertical ? g->nc : g->na; /* input columns */
  int32_t along = (g->vertical ? wdt : 1) * g->c, across = (g->vertical ? 1 : wdt) * g->c;
  /* the along positions inside the input: [a0, a1) */
  int32_t a0 = g->pa < g->la ? g->pa : g->la;
  int32_t a1 = g->pa + g->na < g->la ? g->pa + g->na : g->la;
  for (int32_t b = 0; b < g->bw; ++b) {
    int32_t ic = m0 * g->sc - g->pc + b;
    int8_t* d = tile + b * g->cb;
    if (ic < 0 || ic >= g->nc) {
      if (fill) utvm_mve_dwg_fill(d, g->ta, g->la, g->cb, zv, z8);
      continue;
    }
    if (fill) {
      utvm_mve_dwg_fill(d, g->ta, a0, g->cb, zv, z8);
      utvm_mve_dwg_fill(d + a1 * g->ta, g->ta, g->la - a1, g->cb, zv, z8);
    }
    utvm_mve_dwg_pieces(d + a0 * g->ta, g->ta, x + ic * across + cb0, along, a1 - a0, g->cb);
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

/* The channels of a block in one asm statement, per channel: its record (3 or 2 filter
 * vectors, shift, bias, multiplier), then `units` units following the table (rewound after),
 * the output pointer and the gather offsets moving to the next channel (one more byte). The
 * layer's constants come from memory operands, not immediates: the statements compile whatever
 * the optimizer makes of them. */
#define UTVM_MVE_DWG_GATHER(R)                                                                     \
  "ldr " R ", [%[tbl]], #4\n\t"                                                                    \
  "vldrb.u8 %q[d], [" R ", %q[off]]\n\t"
#define UTVM_MVE_DWG_NEXT                                                                          \
  "le lr, 1b\n\t"                                                                                  \
  "ldr %[tbl], %[tbl0]\n\t"                                                                        \
  "add %[ob], %[ob], #1\n\t"                                                                       \
  "vadd.i8 %q[off], %q[off], %[one]\n\t"                                                           \
  "ldr %[e0], %[rend]\n\t"                                                                         \
  "cmp %[rec], %[e0]\n\t"                                                                          \
  "bne 0b"

/* three pixels per gather (stride 1 along), lo = -128 and hi = 127 (the clamp is the saturation
 * to int8): per unit 4 gathers, 12 VMLADAV, 3 requantized vectors; at most 5 dot products live
 * (e0..e4; each gather's address in one that is free) */
__attribute__((always_inline)) static inline void utvm_mve_dwg_run3(int8_t* ob, const int8_t* tbl, int32_t units,
                                                                    const int8_t* rec, int32_t nch,
                                                                    uint8x16_t off, int32x4_t zyv) {
#ifdef __OPTIMIZE__ /* the asm loops only when optimizing: without, the C loop runs */
  const int8_t *rend = rec + nch * UTVM_MVE_DWG_RECORD, *tbl0 = tbl;
  int32_t e0, e1, e2, e3, e4, bias, mult, shift;
  register int32_t n __asm__("lr"); /* the loop counter of LE */
  int8x16_t w0, w1, w2, d;
  int32x4_t v, t;
#define UTVM_MVE_DWG_REQ3(A, B, C, D)                                                              \
  UTVM_MVE_LANES4("%q[v]", A, B, C, D)                                                             \
  "vadd.i32 %q[v], %q[v], %[bias]\n\t"                                                            \
  "vshr.s32 %q[t], %q[v], #31\n\t"                                                                 \
  "vqrdmlah.s32 %q[t], %q[v], %[mult]\n\t"                                                         \
  "vldrw.32 %q[v], [%[tbl]], #16\n\t"                                                              \
  "vrshl.s32 %q[t], %[shift]\n\t"                                                                  \
  "vadd.i32 %q[t], %q[t], %q[zy]\n\t"                                                              \
  "vqmovnb.s32 %q[t], %q[t]\n\t"                                                                   \
  "vqmovnb.s16 %q[t], %q[t]\n\t"                                                                   \
  "vstrb.32 %q[t], [%[ob], %q[v]]\n\t"
  __asm__ volatile(
      "0:\n\t"
      "vldrb.8 %q[w0], [%[rec], #6]\n\t"
      "vldrb.8 %q[w1], [%[rec], #3]\n\t"
      "ldrsb %[shift], [%[rec], #22]\n\t"
      "ldrd %[bias], %[mult], [%[rec], #24]\n\t"
      "vldrb.8 %q[w2], [%[rec]], #32\n\t"
      "ldr lr, %[units]\n\t"
      "dls lr, lr\n"
      "1:\n\t"
      UTVM_MVE_DWG_GATHER("%[e0]")
      "vmladav.s8 %[e0], %q[d], %q[w0]\n\t"
      "vmladav.s8 %[e1], %q[d], %q[w1]\n\t"
      "vmladav.s8 %[e2], %q[d], %q[w2]\n\t"
      UTVM_MVE_DWG_GATHER("%[e3]")
      "vmladav.s8 %[e3], %q[d], %q[w0]\n\t"
      UTVM_MVE_DWG_REQ3("%[e0]", "%[e1]", "%[e2]", "%[e3]")
      "vmladav.s8 %[e4], %q[d], %q[w1]\n\t"
      "vmladav.s8 %[e0], %q[d], %q[w2]\n\t"
      UTVM_MVE_DWG_GATHER("%[e1]")
      "vmladav.s8 %[e1], %q[d], %q[w0]\n\t"
      "vmladav.s8 %[e2], %q[d], %q[w1]\n\t"
      "vmladav.s8 %[e3], %q[d], %q[w2]\n\t"
      UTVM_MVE_DWG_REQ3("%[e4]", "%[e0]", "%[e1]", "%[e2]")
      UTVM_MVE_DWG_GATHER("%[e0]")
      "vmladav.s8 %[e0], %q[d], %q[w0]\n\t"
      "vmladav.s8 %[e1], %q[d], %q[w1]\n\t"
      "vmladav.s8 %[e2], %q[d], %q[w2]\n\t"
      UTVM_MVE_DWG_REQ3("%[e3]", "%[e0]", "%[e1]", "%[e2]")
      UTVM_MVE_DWG_NEXT
      : [e0] "=&Te"(e0), [e1] "=&Te"(e1), [e2] "=&Te"(e2), [e3] "=&Te"(e3), [e4] "=&Te"(e4),
        [bias] "=&r"(bias), [mult] "=&r"(mult), [shift] "=&r"(shift), [n] "=&r"(n), [tbl] "+r"(tbl),
        [ob] "+r"(ob), [rec] "+r"(rec), [off] "+w"(off), [w0] "=&w"(w0), [w1] "=&w"(w1), [w2] "=&w"(w2),
        [d] "=&w"(d), [v] "=&w"(v), [t] "=&w"(t)
      : [one] "r"(1), [zy] "w"(zyv), [units] "m"(units), [tbl0] "m"(tbl0), [rend] "m"(rend)
      : "cc", "memory");
  (void)e0, (void)e1, (void)e2, (void)e3, (void)e4, (void)bias, (void)mult, (void)shift, (void)n;
  (void)w0, (void)w1, (void)w2, (void)d, (void)v, (void)t;
#else
  (void)ob, (void)tbl, (void)units, (void)rec, (void)nch, (void)off, (void)zyv;
#endif
}

/* two pixels per gather, any clamp: per unit 6 gathers, 12 VMLADAV, 3 requantized vectors */
__attribute__((always_inline)) static inline void utvm_mve_dwg_run2(int8_t* ob, const int8_t* tbl, int32_t units,
                                                                    const int8_t* rec, int32_t nch, int32_t sa,
                                                                    uint8x16_t off, int32_t zy, int32x4_t lo,
                                                                    int32x4_t hi) {
#ifdef __OPTIMIZE__
  const int8_t *rend = rec + nch * UTVM_MVE_DWG_RECORD, *tbl0 = tbl;
  int32_t e0, e1, e2, e3, bias, mult, shift;
  register int32_t n __asm__("lr"); /* the loop counter of LE */
  int8x16_t w0, w1, d;
  int32x4_t v;
#define UTVM_MVE_DWG_VEC2                                                                          \
  UTVM_MVE_DWG_GATHER("%[e0]")                                                                     \
  "vmladav.s8 %[e0], %q[d], %q[w0]\n\t"                                                            \
  "vmladav.s8 %[e1], %q[d], %q[w1]\n\t"                                                            \
  UTVM_MVE_DWG_GATHER("%[e2]")                                                                     \
  "vmladav.s8 %[e2], %q[d], %q[w0]\n\t"                                                            \
  "vmladav.s8 %[e3], %q[d], %q[w1]\n\t"                                                            \
  UTVM_MVE_LANES4("%q[v]", "%[e0]", "%[e1]", "%[e2]", "%[e3]")                                      \
  "vadd.i32 %q[v], %q[v], %[bias]\n\t"                                                            \
  "vshr.s32 %q[d], %q[v], #31\n\t"                                                                 \
  "vqrdmlah.s32 %q[d], %q[v], %[mult]\n\t"                                                         \
  "vldrw.32 %q[v], [%[tbl]], #16\n\t"                                                              \
  "vrshl.s32 %q[d], %[shift]\n\t"                                                                  \
  "vadd.i32 %q[d], %q[d], %[zy]\n\t"                                                               \
  "vmax.s32 %q[d], %q[d], %q[lo]\n\t"                                                              \
  "vmin.s32 %q[d], %q[d], %q[hi]\n\t"                                                              \
  "vstrb.32 %q[d], [%[ob], %q[v]]\n\t"
  /* the filter of a group's second pixel 3 * sa lanes up: its record 3 * sa bytes down */
#define UTVM_MVE_DWG_RUN2(WK1)                                                                     \
  __asm__ volatile(                                                                                \
      "0:\n\t"                                                                                     \
      "vldrb.8 %q[w0], [%[rec], #6]\n\t"                                                           \
      "vldrb.8 %q[w1], [%[rec], #" WK1 "]\n\t"                                                     \
      "ldrsb %[shift], [%[rec], #22]\n\t"                                                          \
      "ldrd %[bias], %[mult], [%[rec], #24]\n\t"                                                   \
      "add %[rec], %[rec], #32\n\t"                                                                \
      "ldr lr, %[units]\n\t"                                                                       \
      "dls lr, lr\n"                                                                                \
      "1:\n\t" UTVM_MVE_DWG_VEC2 UTVM_MVE_DWG_VEC2 UTVM_MVE_DWG_VEC2 UTVM_MVE_DWG_NEXT              \
      : [e0] "=&Te"(e0), [e1] "=&Te"(e1), [e2] "=&Te"(e2), [e3] "=&Te"(e3), [bias] "=&r"(bias),      \
        [mult] "=&r"(mult), [shift] "=&r"(shift), [n] "=&r"(n), [tbl] "+r"(tbl), [ob] "+r"(ob),      \
        [rec] "+r"(rec), [off] "+w"(off), [w0] "=&w"(w0), [w1] "=&w"(w1), [d] "=&w"(d), [v] "=&w"(v) \
      : [one] "r"(1), [zy] "r"(zy), [lo] "w"(lo), [hi] "w"(hi), [units] "m"(units), [tbl0] "m"(tbl0), \
        [rend] "m"(rend)                                                                           \
      : "cc", "memory")
  if (sa == 1) {
    UTVM_MVE_DWG_RUN2("3");
  } else {
    UTVM_MVE_DWG_RUN2("0");
  }
#undef UTVM_MVE_DWG_RUN2
  (void)e0, (void)e1, (void)e2, (void)e3, (void)bias, (void)mult, (void)shift, (void)n;
  (void)w0, (void)w1, (void)d, (void)v;
#else
  (void)ob, (void)tbl, (void)units, (void)rec, (void)nch, (void)sa, (void)off, (void)zy, (void)lo, (void)hi;
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
  uint64_t z8 = (uint64_t)(uint8_t)zx * 0x0101010101010101ull;
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
      utvm_mve_dwg_tile(tile, x, &g, mm, cb0, cb0 == 0, zv, z8);
      const int8_t* rec = wt + cb0 * UTVM_MVE_DWG_RECORD;
      if (fast3) {
        utvm_mve_dwg_run3(ob + cb0, table, g.units, rec, cb, off, zyv);
      } else if (fast2) {
        utvm_mve_dwg_run2(ob + cb0, table, g.units, rec, cb, g.sa, off, zy, vlo, vhi);
      } else {
        for (int32_t j = 0; j < cb; ++j) {
          utvm_mve_dwg_runc(ob + cb0 + j, table, g.units, rec + j * UTVM_MVE_DWG_RECORD, g.sa, g.share,
                            vaddq_n_u8(off, (uint8_t)j), zy, vlo, vhi);
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

/* ---------------------------------------------------------------------------------------------
 * 3x3 depthwise convolutions of tiny maps (h * w <= 36, w <= 6; depth multiplier 1, any
 * channel count): utvm_mve_dwt_s8.
 *
 * Every output pixel is its own case, fully unrolled (the geometry is constant): per block of
 * 16 channels the input is copied once into planes (channel j's h x w values at tile + j * S,
 * S = h * w, by one scatter per pixel, two when 15 * S > 255); then per group of 4 channels and
 * output pixel, 4 VMLADAV, each of the 16 bytes at the pixel's first valid tap in a channel's
 * plane (immediate offsets) with that channel's filter vector of the pixel's border class: the
 * 9 weights at lanes (row - first row) * w + (column - first column) for the taps inside the
 * input only (the padding taps skipped, not multiplied by the zero point; the other lanes,
 * whatever they read, zero). The four dot products become one vector (paired VMOVs), get the
 * class's biases (the zero point folded over the taps the pixel really has, at compile time),
 * are requantized (per-lane multipliers and shifts: VQRDMULH, minus one on negative values
 * when every shift is a right shift, VRSHL) and stored contiguously.
 * The classes: per output row the rows of its window inside the input (first, end), in the
 * order they first occur, likewise per column; class = row class * ncc + column class, the row
 * and column classes 4 bits per output row / column in rcls / ccls. With `pad` the planes hold a
 * row of the zero point above and below the input and a column of it shared by the ends of
 * neighbouring rows (rows of w + 1 bytes): every window is whole, one class, the biases folded
 * over all 9 taps. With int8's whole range as the clamp, the pixels run class by class, the 4
 * filters of a class of several pixels kept in registers (VQMOVNB saturates instead of
 * VMAX/VMIN with two vector registers).
 * The constant, per group of 4 channels (the last one zero-padded), ns classes:
 * [class][channel][16] filter bytes, [class][channel] biases, then the 4 multipliers and the 4
 * shifts (int32): (80 * ns + 32) bytes.
 * ------------------------------------------------------------------------------------------ */

static inline int32_t utvm_mve_dwt_group_bytes(int32_t ns) { return 80 * ns + 32; }

/* the class of output pixel (i, j) */
static inline int32_t utvm_mve_dwt_slot(int32_t i, int32_t j, int32_t rcls, int32_t ccls, int32_t ncc) {
  return (int32_t)(((uint32_t)rcls >> (4 * i)) & 15u) * ncc + (int32_t)(((uint32_t)ccls >> (4 * j)) & 15u);
}

/* the first input row (or column) inside the input of a window starting at v0 */
static inline int32_t utvm_mve_dwt_first(int32_t v0) { return v0 < 0 ? 0 : v0; }

/* the offset of output pixel p's first valid tap in its plane (pad: padded planes, its first
 * tap) */
static inline int32_t utvm_mve_dwt_base(int32_t p, int32_t w, int32_t ow, int32_t sh, int32_t sw, int32_t top,
                                        int32_t left, int32_t pad) {
  if (pad) return w + 2 + ((p / ow) * sh - top) * (w + 1) + (p % ow) * sw - left;
  return utvm_mve_dwt_first((p / ow) * sh - top) * w + utvm_mve_dwt_first((p % ow) * sw - left);
}

/* the bytes of a channel's plane: h x w, or (pad) with a row of the zero point above and below
 * and a column shared by the ends of neighbouring rows, (h + 2) x (w + 1) + 1 */
static inline int32_t utvm_mve_dwt_stride(int32_t h, int32_t w, int32_t pad) {
  return pad ? (h + 2) * (w + 1) + 1 : h * w;
}

#ifdef UTVM_MVE_VECTOR
/* np pixels of channels [cb0, cb0 + n) into planes hw bytes apart:
 * tile + j * hw + p = x[p * c + cb0 + j] */
__attribute__((always_inline)) static inline void utvm_mve_dwt_planes(int8_t* tile, const int8_t* x, int32_t np,
                                                                      int32_t hw, int32_t c, int32_t n) {
  uint8x16_t lane = vidupq_n_u8(0, 1);
#ifdef __OPTIMIZE__
  if (n == 16 && 15 * hw <= 255) { /* a pixel's 16 channels by one load and one scatter */
    uint8x16_t off = vmulq_n_u8(lane, (uint8_t)hw);
    int8x16_t v;
    register int32_t count __asm__("lr") = np;
    __asm__ volatile("dls lr, lr\n1:\n\tvldrb.8 %q[v], [%[x]]\n\tadd %[x], %[x], %[c]\n\t"
                     "vstrb.8 %q[v], [%[t], %q[off]]\n\tadds %[t], %[t], #1\n\tle lr, 1b"
                     : [v] "=&w"(v), [x] "+&r"(x), [t] "+&r"(tile), [n] "+&r"(count)
                     : [c] "r"(c), [off] "w"(off)
                     : "memory");
    (void)v, (void)count;
    return;
  }
  if (n == 16 && np == hw && c <= 248 && hw % 2 == 0 && 7 * hw + 1 <= 255) {
    /* two pixels' 8 channels by one gather (offsets j, c + j) and one scatter (j * S, j * S + 1),
     * twice (channels 8..15: 8 bytes further in x, 8 * S in the tile) */
    uint8x16_t hi = vshrq_n_u8(lane, 3), j = vandq_u8(lane, vdupq_n_u8(7));
    uint8x16_t g0 = vaddq_u8(j, vmulq_n_u8(hi, (uint8_t)c)), g1 = vaddq_u8(g0, vdupq_n_u8(8));
    uint8x16_t off = vaddq_u8(vmulq_n_u8(j, (uint8_t)hw), hi);
    int8_t* t1 = tile + 8 * hw;
    int8x16_t v;
    register int32_t count __asm__("lr") = hw / 2;
    __asm__ volatile("dls lr, lr\n1:\n\tvldrb.u8 %q[v], [%[x], %q[g0]]\n\t"
                     "vstrb.8 %q[v], [%[t0], %q[off]]\n\tvldrb.u8 %q[v], [%[x], %q[g1]]\n\t"
                     "vstrb.8 %q[v], [%[t1], %q[off]]\n\tadd %[x], %[x], %[c2]\n\tadds %[t0], %[t0], #2\n\t"
                     "adds %[t1], %[t1], #2\n\tle lr, 1b"
                     : [v] "=&w"(v), [x] "+&r"(x), [t0] "+&r"(tile), [t1] "+&r"(t1), [n] "+&r"(count)
                     : [c2] "r"(2 * c), [g0] "w"(g0), [g1] "w"(g1), [off] "w"(off)
                     : "memory");
    (void)v, (void)count;
    return;
  }
  if (n == 16 && 7 * hw <= 255) { /* lanes 0..7 from tile, 8..15 from tile + 8 * S */
    uint8x16_t off = vmulq_n_u8(vandq_u8(lane, vdupq_n_u8(7)), (uint8_t)hw);
    int8_t* t1 = tile + 8 * hw;
    int8x16_t v;
    register int32_t count __asm__("lr") = np;
    /* the E slot of a VPT block inverts P0: set again per pixel */
    __asm__ volatile("dls lr, lr\n1:\n\tvldrb.8 %q[v], [%[x]]\n\tadd %[x], %[x], %[c]\n\tvmsr p0, %[lo8]\n\t"
                     "vpste\n\tvstrbt.8 %q[v], [%[t0], %q[off]]\n\tvstrbe.8 %q[v], [%[t1], %q[off]]\n\t"
                     "adds %[t0], %[t0], #1\n\tadds %[t1], %[t1], #1\n\tle lr, 1b"
                     : [v] "=&w"(v), [x] "+&r"(x), [t0] "+&r"(tile), [t1] "+&r"(t1), [n] "+&r"(count)
                     : [c] "r"(c), [off] "w"(off), [lo8] "r"(0x00ff)
                     : "memory", "cc");
    (void)v, (void)count;
    return;
  }
#endif
  mve_pred16_t in = vctp8q((uint32_t)n);
  if (15 * hw <= 255) {
    uint8x16_t off = vmulq_n_u8(lane, (uint8_t)hw);
    for (int32_t p = 0; p < np; ++p, x += c) vstrbq_scatter_offset_s8(tile + p, off, vldrbq_z_s8(x, in));
  } else { /* lanes 0..7 from tile, 8..15 from tile + 8 * S: offsets up to 7 * 36 */
    uint8x16_t off = vmulq_n_u8(vandq_u8(lane, vdupq_n_u8(7)), (uint8_t)hw);
    for (int32_t p = 0; p < np; ++p, x += c) {
      int8x16_t v = vldrbq_z_s8(x, in);
      vstrbq_scatter_offset_p_s8(tile + p, off, v, 0x00ff);
      vstrbq_scatter_offset_p_s8(tile + 8 * hw + p, off, v, 0xff00);
    }
  }
}

/* One pixel of 4 channels (C): planes pl + k * hw (k = 0..3), b the pixel's first valid tap,
 * grp the group's constants, slot its class; the lanes of `in` stored at o. */
__attribute__((always_inline)) static inline void utvm_mve_dwt_pixel_c(int8_t* o, const int8_t* pl, int32_t hw,
                                                                       int32_t b, const int8_t* grp, int32_t ns,
                                                                       int32_t slot, int32_t right, int32_t zy,
                                                                       int32x4_t lo, int32x4_t hi, mve_pred16_t in,
                                                                       int32_t swapped) {
  int32_t e[4];
  for (int32_t k = 0; k < 4; ++k) e[k] = vmladavq_s8(vldrbq_s8(pl + k * hw + b), vldrbq_s8(grp + slot * 64 + k * 16));
  int32x4_t v = swapped ? utvm_mve_lanes4(e[2], e[3], e[0], e[1]) : utvm_mve_lanes4(e[0], e[1], e[2], e[3]);
  const int32_t* words = (const int32_t*)(const void*)(grp + ns * 64);
  v = vaddq_s32(v, vldrwq_s32(words + slot * 4));
  int32x4_t m = vldrwq_s32(words + ns * 4), sh = vldrwq_s32(words + ns * 4 + 4);
  if (right) {
    v = vaddq_s32(vqrdmulhq_s32(v, m), vshrq_n_s32(v, 31));
  } else {
    v = vqrdmulhq_s32(vshlq_s32(v, vmaxq_s32(sh, vdupq_n_s32(0))), m);
    sh = vminq_s32(sh, vdupq_n_s32(0));
    v = vqaddq_s32(v, vshrq_n_s32(vandq_s32(v, sh), 31));
  }
  v = vminq_s32(vmaxq_s32(vaddq_n_s32(vrshlq_s32(v, sh), zy), lo), hi);
  vstrbq_p_s32(o, v, in);
}

#ifdef __OPTIMIZE__
/* The same in asm statements (every shift a right shift; pl and grp point 64 and mid bytes into
 * the planes and the group's constants: B, F, R the immediate offsets of the first plane's tap,
 * the class's first filter and its biases from them). UTVM_MVE_DWT_PIXEL: the filters loaded
 * (LD: vldrw) or kept in registers from the pixel before (LD empty; FK: their operands); the
 * clamp to [lo, hi], or (SAT) the saturation to int8 */
#define UTVM_MVE_DWT_MAC(K, E, LD, F)                                                              \
  "vldrb.8 %q[d], [%[pl], #(%c[b] + " #K " * %c[hw])]\n\t" LD                                     \
  "vmladav.s8 " E ", %q[d], " F "\n\t"
#define UTVM_MVE_DWT_LD(K) "vldrw.32 %q[f], [%[grp], #(%c[fo] + " #K " * 16)]\n\t"
#define UTVM_MVE_DWT_CLAMP "vmax.s32 %q[v], %q[v], %q[lo]\n\tvmin.s32 %q[v], %q[v], %q[hi]\n\t"
#define UTVM_MVE_DWT_SAT "vqmovnb.s32 %q[v], %q[v]\n\tvqmovnb.s16 %q[v], %q[v]\n\t"
#define UTVM_MVE_DWT_PIXEL(LANES, L0, L1, L2, L3, F0, F1, F2, F3, CLAMP, FOUT, ...)                   \
  __asm__ volatile(UTVM_MVE_DWT_MAC(0, "%[e0]", L0, F0) UTVM_MVE_DWT_MAC(1, "%[e1]", L1, F1)       \
                   UTVM_MVE_DWT_MAC(2, "%[e2]", L2, F2) UTVM_MVE_DWT_MAC(3, "%[e3]", L3, F3) LANES  \
                   "vldrw.32 %q[d], [%[grp], #%c[ro]]\n\t"                                        \
                   "vadd.i32 %q[v], %q[v], %q[d]\n\t"                                             \
                   "vshr.s32 %q[d], %q[v], #31\n\t"                                               \
                   "vqrdmulh.s32 %q[v], %q[v], %q[m]\n\t"                                         \
                   "vadd.i32 %q[v], %q[v], %q[d]\n\t"                                             \
                   "vrshl.s32 %q[v], %q[v], %q[sh]\n\t"                                           \
                   "vadd.i32 %q[v], %q[v], %[zy]\n\t" CLAMP                                        \
                   "vstrb.32 %q[v], [%[o]]"                                                       \
                   : [e0] "=&Te"(e0), [e1] "=&Te"(e1), [e2] "=&Te"(e2), [e3] "=&Te"(e3), [d] "=&w"(d), \
                     [v] "=&w"(v) FOUT                                                             \
                   : [pl] "r"(pl), [grp] "r"(grp), [o] "l"(o), [b] "i"(b - 64), [hw] "i"(hw),           \
                     [ro] "i"(ns * 64 + slot * 16 - mid), [m] "w"(m), [sh] "w"(sh), [zy] "r"(zy),       \
                     __VA_ARGS__                                                                     \
                   : "memory")
#define UTVM_MVE_DWT_LANES_0 UTVM_MVE_LANES4("%q[v]", "%[e0]", "%[e1]", "%[e2]", "%[e3]")
#define UTVM_MVE_DWT_LANES_1 UTVM_MVE_LANES4("%q[v]", "%[e2]", "%[e3]", "%[e0]", "%[e1]")
#define UTVM_MVE_DWT_LANES(SW) UTVM_MVE_DWT_LANES_##SW
/* loading its filters, clamping to [lo, hi] (sat: saturating to int8) */
__attribute__((always_inline)) static inline void utvm_mve_dwt_pixel_asm(int8_t* o, const int8_t* pl, int32_t hw,
                                                                         int32_t b, const int8_t* grp, int32_t mid,
                                                                         int32_t ns, int32_t slot, int32x4_t m,
                                                                         int32x4_t sh, int32_t zy, int32x4_t lo,
                                                                         int32x4_t hi, int32_t sat, int32_t swapped) {
  int32_t e0, e1, e2, e3;
  int8x16_t d, f;
  int32x4_t v;
#define UTVM_MVE_DWT_LOADING(SW, CLAMP, ...)                                                       \
  UTVM_MVE_DWT_PIXEL(UTVM_MVE_DWT_LANES(SW), UTVM_MVE_DWT_LD(0), UTVM_MVE_DWT_LD(1), UTVM_MVE_DWT_LD(2),       \
                     UTVM_MVE_DWT_LD(3), "%q[f]", "%q[f]", "%q[f]", "%q[f]", CLAMP, UTVM_MVE_DWT_F,        \
                     [fo] "i"(slot * 64 - mid), __VA_ARGS__)
#define UTVM_MVE_DWT_F , [f] "=&w"(f)
  if (sat && swapped) {
    UTVM_MVE_DWT_LOADING(1, UTVM_MVE_DWT_SAT, "m"(*grp));
  } else if (sat) {
    UTVM_MVE_DWT_LOADING(0, UTVM_MVE_DWT_SAT, "m"(*grp));
  } else if (swapped) {
    UTVM_MVE_DWT_LOADING(1, UTVM_MVE_DWT_CLAMP, [lo] "w"(lo), [hi] "w"(hi));
  } else {
    UTVM_MVE_DWT_LOADING(0, UTVM_MVE_DWT_CLAMP, [lo] "w"(lo), [hi] "w"(hi));
  }
#undef UTVM_MVE_DWT_LOADING
  (void)e0, (void)e1, (void)e2, (void)e3, (void)d, (void)f, (void)v;
}
#undef UTVM_MVE_DWT_F

/* a class's 4 filters into registers */
__attribute__((always_inline)) static inline void utvm_mve_dwt_filters(const int8_t* grp, int32_t fo, int8x16_t* f) {
  __asm__("vldrw.32 %q[f0], [%[grp], #%c[fo]]\n\tvldrw.32 %q[f1], [%[grp], #(%c[fo] + 16)]\n\t"
          "vldrw.32 %q[f2], [%[grp], #(%c[fo] + 32)]\n\tvldrw.32 %q[f3], [%[grp], #(%c[fo] + 48)]"
          : [f0] "=&w"(f[0]), [f1] "=&w"(f[1]), [f2] "=&w"(f[2]), [f3] "=&w"(f[3])
          : [grp] "r"(grp), [fo] "i"(fo), "m"(*(const int8_t(*)[64])(const void*)(grp + fo)));
}

/* with the class's filters in registers, saturating to int8 */
__attribute__((always_inline)) static inline void utvm_mve_dwt_pixel_sat(int8_t* o, const int8_t* pl, int32_t hw,
                                                                         int32_t b, const int8_t* grp, int32_t mid,
                                                                         int32_t ns, int32_t slot, int32x4_t m,
                                                                         int32x4_t sh, int32_t zy,
                                                                         const int8x16_t* f, int32_t swapped) {
  int32_t e0, e1, e2, e3;
  int8x16_t d;
  int32x4_t v;
#define UTVM_MVE_DWT_KEPT(SW)                                                                      \
  UTVM_MVE_DWT_PIXEL(UTVM_MVE_DWT_LANES(SW), "", "", "", "", "%q[f0]", "%q[f1]", "%q[f2]", "%q[f3]",          \
                     UTVM_MVE_DWT_SAT, , [f0] "w"(f[0]), [f1] "w"(f[1]), [f2] "w"(f[2]), [f3] "w"(f[3]))
  if (swapped) {
    UTVM_MVE_DWT_KEPT(1);
  } else {
    UTVM_MVE_DWT_KEPT(0);
  }
#undef UTVM_MVE_DWT_KEPT
  (void)e0, (void)e1, (void)e2, (void)e3, (void)d, (void)v;
}
#undef UTVM_MVE_DWT_PIXEL
#undef UTVM_MVE_DWT_LANES
#undef UTVM_MVE_DWT_LANES_0
#undef UTVM_MVE_DWT_LANES_1
#undef UTVM_MVE_DWT_SAT
#undef UTVM_MVE_DWT_CLAMP
#undef UTVM_MVE_DWT_LD
#undef UTVM_MVE_DWT_MAC
#endif

/* the output pixels of channels [ch, ch + 4) (of which n < 4 may exist: the rest not stored);
 * sat: the clamp is int8's range */
__attribute__((always_inline)) static inline void utvm_mve_dwt_group(
    int8_t* out, const int8_t* pl, const int8_t* grp, int32_t w, int32_t c, int32_t oh, int32_t ow, int32_t sh,
    int32_t sw, int32_t top, int32_t left, int32_t rcls, int32_t ccls, int32_t ncc, int32_t ns, int32_t hw,
    int32_t right, int32_t n, int32_t zy, int32x4_t lo, int32x4_t hi, int32_t sat, int32_t pad, int32_t swapped) {
#ifdef __OPTIMIZE__
  /* the group's constants from mid bytes in: every offset within VLDRW's reach */
  int32_t mid = (utvm_mve_dwt_group_bytes(ns) / 2) & ~15;
  const int32_t* words = (const int32_t*)(const void*)(grp + ns * 80);
  int32x4_t m = vldrwq_s32(words), shv = vldrwq_s32(words + 4);
#endif
#ifdef __OPTIMIZE__
  if (UTVM_MVE_CONSTANT(hw) && UTVM_MVE_CONSTANT(ns) && UTVM_MVE_CONSTANT(sat) && sat && right && n == 4) {
    /* the pixels class by class, the filters of a class of several pixels loaded once */
#pragma GCC unroll 16
    for (int32_t k = 0; k < ns; ++k) {
      int32_t count = 0;
#pragma GCC unroll 64
      for (int32_t p = 0; p < oh * ow; ++p) count += utvm_mve_dwt_slot(p / ow, p % ow, rcls, ccls, ncc) == k;
      int32_t keep = count > 1 && UTVM_MVE_CONSTANT(k);
      int8x16_t f[4] = {vdupq_n_s8(0), vdupq_n_s8(0), vdupq_n_s8(0), vdupq_n_s8(0)};
      if (keep) utvm_mve_dwt_filters(grp + mid, k * 64 - mid, f);
#pragma GCC unroll 64
      for (int32_t p = 0; p < oh * ow; ++p) {
        int32_t b = utvm_mve_dwt_base(p, w, ow, sh, sw, top, left, pad);
        if (utvm_mve_dwt_slot(p / ow, p % ow, rcls, ccls, ncc) != k) continue;
        if (!(UTVM_MVE_CONSTANT(b) && UTVM_MVE_CONSTANT(k))) { /* loops not unrolled */
          utvm_mve_dwt_pixel_c(out + p * c, pl, hw, b, grp, ns, k, right, zy, lo, hi, 0xffff, swapped);
        } else if (keep) {
          utvm_mve_dwt_pixel_sat(out + p * c, pl + 64, hw, b, grp + mid, mid, ns, k, m, shv, zy, f, swapped);
        } else {
          utvm_mve_dwt_pixel_asm(out + p * c, pl + 64, hw, b, grp + mid, mid, ns, k, m, shv, zy, lo, hi, 1, swapped);
        }
      }
    }
    return;
  }
#else
  (void)sat;
#endif
#pragma GCC unroll 64
  for (int32_t p = 0; p < oh * ow; ++p) {
    int32_t b = utvm_mve_dwt_base(p, w, ow, sh, sw, top, left, pad);
    int32_t slot = utvm_mve_dwt_slot(p / ow, p % ow, rcls, ccls, ncc);
    int8_t* o = out + p * c;
#ifdef __OPTIMIZE__
    if (UTVM_MVE_CONSTANT(b) && UTVM_MVE_CONSTANT(slot) && UTVM_MVE_CONSTANT(hw) && UTVM_MVE_CONSTANT(ns) &&
        right && n == 4) {
      utvm_mve_dwt_pixel_asm(o, pl + 64, hw, b, grp + mid, mid, ns, slot, m, shv, zy, lo, hi, 0, swapped);
      continue;
    }
#endif
    utvm_mve_dwt_pixel_c(o, pl, hw, b, grp, ns, slot, right, zy, lo, hi, vctp32q((uint32_t)n), swapped);
  }
}

__attribute__((always_inline)) static inline void utvm_mve_dwt_run(
    int8_t* out, const int8_t* x, int32_t h, int32_t w, int32_t c, int32_t oh, int32_t ow, int32_t sh, int32_t sw,
    int32_t top, int32_t left, const int8_t* wt, int32_t zy, int32_t lo, int32_t hi, int32_t right, int32_t rcls,
    int32_t ccls, int32_t ncc, int32_t ns, int32_t zx, int32_t pad, int8_t* tile, int32_t swapped) {
  int32_t hw = utvm_mve_dwt_stride(h, w, pad), gb = utvm_mve_dwt_group_bytes(ns);
  int32x4_t vlo = vdupq_n_s32(lo), vhi = vdupq_n_s32(hi);
  if (pad) utvm_mve_fill_s8(tile, zx, 16 * hw + 16); /* the padding stays from block to block */
  for (int32_t cb0 = 0; cb0 < c; cb0 += 16) {
    int32_t n = c - cb0 < 16 ? c - cb0 : 16;
    if (pad) {
      for (int32_t iy = 0; iy < h; ++iy) {
        utvm_mve_dwt_planes(tile + w + 2 + iy * (w + 1), x + iy * w * c + cb0, w, hw, c, n);
      }
    } else {
      utvm_mve_dwt_planes(tile, x + cb0, hw, hw, c, n);
    }
    for (int32_t j = 0; j < n; j += 4, wt += gb) {
      utvm_mve_dwt_group(out + cb0 + j, tile + j * hw, wt, w, c, oh, ow, sh, sw, top, left, rcls, ccls, ncc, ns, hw,
                         right, n - j < 4 ? n - j : 4, zy, vlo, vhi, lo == -128 && hi == 127, pad, swapped);
    }
  }
}
#endif

/* Depthwise 3 x 3 convolution (multiplier 1) of a tiny map, the whole layer (see above); wt:
 * the groups' constants; right: every shift a right shift; pad: planes padded with the zero
 * point zx (one class: windows within one position of the input on every side, w <= 5); tile:
 * 16 * utvm_mve_dwt_stride + 16 bytes. */
__attribute__((always_inline)) static inline void utvm_mve_dwt_impl(
    int8_t* out, const int8_t* x, int32_t h, int32_t w, int32_t c, int32_t oh, int32_t ow, int32_t sh, int32_t sw,
    int32_t top, int32_t left, const int8_t* wt, int32_t zy, int32_t lo, int32_t hi, int32_t right, int32_t rcls,
    int32_t ccls, int32_t ncc, int32_t ns, int32_t zx, int32_t pad, int8_t* tile) {
#ifdef UTVM_MVE_VECTOR
  /* the lane order of paired VMOVs (QEMU 7.2 puts a, b, c, d in lanes 2, 3, 0, 1) */
  if (vgetq_lane_s32(utvm_mve_lanes4(0, 1, 2, 3), 0) != 0) {
    utvm_mve_dwt_run(out, x, h, w, c, oh, ow, sh, sw, top, left, wt, zy, lo, hi, right, rcls, ccls, ncc, ns, zx, pad,
                     tile, 1);
  } else {
    utvm_mve_dwt_run(out, x, h, w, c, oh, ow, sh, sw, top, left, wt, zy, lo, hi, right, rcls, ccls, ncc, ns, zx, pad,
                     tile, 0);
  }
#else
  int32_t gb = utvm_mve_dwt_group_bytes(ns);
  (void)right, (void)tile;
  for (int32_t ch = 0; ch < c; ++ch) {
    const int8_t* grp = wt + (ch / 4) * gb;
    const int32_t* words = (const int32_t*)(const void*)(grp + ns * 64);
    int32_t k = ch % 4;
    for (int32_t p = 0; p < oh * ow; ++p) {
      int32_t i = p / ow, j = p % ow, pitch = pad ? w + 1 : w;
      int32_t y0 = i * sh - top, x0 = j * sw - left;
      int32_t slot = utvm_mve_dwt_slot(i, j, rcls, ccls, ncc);
      const int8_t* f = grp + slot * 64 + k * 16;
      int32_t acc = words[slot * 4 + k];
      if (!pad) y0 = utvm_mve_dwt_first(y0), x0 = utvm_mve_dwt_first(x0);
      for (int32_t l = 0; l < 16; ++l) {
        int32_t iy = y0 + l / pitch, ix = x0 + l % pitch;
        int32_t in = iy >= 0 && iy < h && ix >= 0 && ix < w;
        if (f[l]) acc += (in ? x[(iy * w + ix) * c + ch] : zx) * f[l];
      }
      int32_t v = utvm_mve_mbqm(acc, words[ns * 4 + k], words[ns * 4 + 4 + k]);
      out[p * c + ch] = utvm_mve_clamp_s8(v + zy, lo, hi);
    }
  }
#endif
}


/* ---------------------------------------------------------------------------------------------
 * Fully connected layers: utvm_mve_fc4_s8, one input row x 4 units per block.
 *
 * The weights and requantization in one array of blocks of 4 units (the last one zero-padded):
 * per step of 16 input bytes the 4 units' 16 weights side by side ([step][unit][16], zeros past
 * the depth), then the units' folded biases, multipliers and shifts (3 x 4 int32). One block:
 * per step one input load, 4 filter loads and 4 VMLADAV(A) (9 instructions per 64 products).
 * A depth up to 8: two units per 16-byte row (8 bytes each), multiplied by the row in the low
 * or in the high 8 lanes of an input vector (two filter loads and 4 VMLADAV per block);
 * the 4 dot products become a vector (single-lane moves: the lanes must match the constants'
 * and the output's order), requantized with vector constants (VQRDMULH, gemmlowp's rounding by
 * VAND/VSHR/VQADD then VRSHL) and stored contiguously.
 * ------------------------------------------------------------------------------------------ */

#define UTVM_MVE_FC_RIGHT 1 /* every shift <= 0 */

/* bytes of a block's weights: depth k up to 8, two units per 16-byte row; else steps of 64 */
static inline int32_t utvm_mve_fc_weight_bytes(int32_t k) { return k <= 8 ? 32 : ((k + 15) >> 4) * 64; }

static inline int32_t utvm_mve_fc_block_bytes(int32_t k) { return utvm_mve_fc_weight_bytes(k) + 48; }

/* unit u of the block at blk: weight j, or requantization word i (0: bias, 1: mult, 2: shift) */
static inline int32_t utvm_mve_fc_w(const int8_t* blk, int32_t k, int32_t u, int32_t j) {
  return k <= 8 ? blk[u * 8 + j] : blk[(j >> 4) * 64 + u * 16 + (j & 15)];
}
static inline int32_t utvm_mve_fc_rq(const int8_t* blk, int32_t k, int32_t u, int32_t i) {
  return ((const int32_t*)(const void*)(blk + utvm_mve_fc_weight_bytes(k)))[i * 4 + u];
}

/* the four dot products a0..a3 of a block requantized with the block's constants at wp (biases,
 * multipliers, shifts) and stored at op */
#define UTVM_MVE_FC_REQ                                                                            \
  "vmov.32 %q[va][0], %[a0]\n\tvmov.32 %q[va][1], %[a1]\n\tvmov.32 %q[va][2], %[a2]\n\t"          \
  "vmov.32 %q[va][3], %[a3]\n\t"                                                                    \
  "vldrw.32 %q[vt], [%[wp]], #16\n\t"                                                              \
  "vadd.i32 %q[va], %q[va], %q[vt]\n\t"                                                            \
  "vldrw.32 %q[vt], [%[wp]], #16\n\t"                                                              \
  "vqrdmulh.s32 %q[va], %q[va], %q[vt]\n\t"                                                        \
  "vldrw.32 %q[wv], [%[wp]], #16\n\t"                                                              \
  "vand %q[vt], %q[va], %q[wv]\n\t"                                                                \
  "vshr.s32 %q[vt], %q[vt], #31\n\t"                                                               \
  "vqadd.s32 %q[va], %q[va], %q[vt]\n\t"                                                           \
  "vrshl.s32 %q[va], %q[va], %q[wv]\n\t"                                                           \
  "vadd.i32 %q[va], %q[va], %[zy]\n\t"                                                             \
  "vmax.s32 %q[va], %q[va], %q[lo]\n\t"                                                            \
  "vmin.s32 %q[va], %q[va], %q[hi]\n\t"                                                            \
  "vstrb.32 %q[va], [%[op]], #4\n\t"

#ifdef UTVM_MVE_VECTOR
/* the `blocks` whole blocks of one row of k bytes at xp in one asm statement: the steps of 16
 * bytes, a last partial one loading k % 16 bytes under a predicate (nothing read past the row) */
__attribute__((always_inline)) static inline void utvm_mve_fc4_asm(int8_t* op, const int8_t* xp, const int8_t* wp,
                                                                   int32_t k, int32_t blocks, int32_t zy,
                                                                   int32x4_t lo, int32x4_t hi) {
#ifdef __OPTIMIZE__
  int32_t steps = (k + 15) >> 4;
  int32_t a0, a1, a2, a3, n;
  register int32_t count __asm__("lr") = blocks; /* the loop counter of LE */
  int8x16_t xv, wv;
  int32x4_t va, vt;
#define UTVM_MVE_FC_STEP(MAC, LOAD)                                                                \
  LOAD "%q[xv], [%[xp]], #16\n\t"                                                                  \
  "vldrb.8 %q[wv], [%[wp]], #16\n\t" MAC " %[a0], %q[xv], %q[wv]\n\t"                              \
  "vldrb.8 %q[wv], [%[wp]], #16\n\t" MAC " %[a1], %q[xv], %q[wv]\n\t"                              \
  "vldrb.8 %q[wv], [%[wp]], #16\n\t" MAC " %[a2], %q[xv], %q[wv]\n\t"                              \
  "vldrb.8 %q[wv], [%[wp]], #16\n\t" MAC " %[a3], %q[xv], %q[wv]\n\t"
#define UTVM_MVE_FC_LD "vldrb.8 "
#define UTVM_MVE_FC_LDP "vpst\n\tvldrbt.8 "
  __asm__ volatile(
      ".if %c[rem] > 0\n\tmov %[n], %[rem]\n\tvctp.8 %[n]\n\t.endif\n\t"
      "dls lr, %[count]\n"
      "1:\n\t"
      ".if %c[full] > 0\n\t" UTVM_MVE_FC_STEP("vmladav.s8", UTVM_MVE_FC_LD)
      ".if %c[full] > 1\n\tmov %[n], %[full] - 1\n2:\n\t" UTVM_MVE_FC_STEP("vmladava.s8", UTVM_MVE_FC_LD)
      "subs %[n], %[n], #1\n\tbne 2b\n\t.endif\n\t"
      ".if %c[rem] > 0\n\t" UTVM_MVE_FC_STEP("vmladava.s8", UTVM_MVE_FC_LDP) ".endif\n\t"
      ".else\n\t" UTVM_MVE_FC_STEP("vmladav.s8", UTVM_MVE_FC_LDP) ".endif\n\t"
      "sub %[xp], %[xp], %[back]\n\t" UTVM_MVE_FC_REQ "le lr, 1b"
      : [a0] "=&Te"(a0), [a1] "=&Te"(a1), [a2] "=&Te"(a2), [a3] "=&Te"(a3), [n] "=&r"(n), [xp] "+&r"(xp),
        [wp] "+&r"(wp), [op] "+&l"(op), [count] "+&r"(count), [xv] "=&w"(xv), [wv] "=&w"(wv), [va] "=&w"(va),
        [vt] "=&w"(vt)
      : [full] "i"(k >> 4), [rem] "i"(k & 15), [back] "i"(steps * 16), [zy] "r"(zy), [lo] "w"(lo), [hi] "w"(hi)
      : "cc", "memory");
  (void)a0, (void)a1, (void)a2, (void)a3, (void)n, (void)count, (void)xv, (void)wv, (void)va, (void)vt;
#else
  (void)op, (void)xp, (void)wp, (void)k, (void)blocks, (void)zy, (void)lo, (void)hi;
#endif
}

/* the same for a depth up to 8: x0 the row in lanes 0..7, x1 in lanes 8..15 (zeros elsewhere) */
__attribute__((always_inline)) static inline void utvm_mve_fc4p_asm(int8_t* op, int8x16_t x0, int8x16_t x1,
                                                                    const int8_t* wp, int32_t blocks, int32_t zy,
                                                                    int32x4_t lo, int32x4_t hi) {
#ifdef __OPTIMIZE__
  int32_t a0, a1, a2, a3;
  register int32_t count __asm__("lr") = blocks; /* the loop counter of LE */
  int8x16_t wv;
  int32x4_t va, vt;
  __asm__ volatile("dls lr, %[count]\n1:\n\t"
                   "vldrb.8 %q[wv], [%[wp]], #16\n\t"
                   "vmladav.s8 %[a0], %q[x0], %q[wv]\n\t"
                   "vmladav.s8 %[a1], %q[x1], %q[wv]\n\t"
                   "vldrb.8 %q[wv], [%[wp]], #16\n\t"
                   "vmladav.s8 %[a2], %q[x0], %q[wv]\n\t"
                   "vmladav.s8 %[a3], %q[x1], %q[wv]\n\t" UTVM_MVE_FC_REQ "le lr, 1b"
                   : [a0] "=&Te"(a0), [a1] "=&Te"(a1), [a2] "=&Te"(a2), [a3] "=&Te"(a3), [wp] "+&r"(wp),
                     [op] "+&l"(op), [count] "+&r"(count), [wv] "=&w"(wv), [va] "=&w"(va), [vt] "=&w"(vt)
                   : [x0] "w"(x0), [x1] "w"(x1), [zy] "r"(zy), [lo] "w"(lo), [hi] "w"(hi)
                   : "cc", "memory");
  (void)a0, (void)a1, (void)a2, (void)a3, (void)count, (void)wv, (void)va, (void)vt;
#else
  (void)op, (void)x0, (void)x1, (void)wp, (void)blocks, (void)zy, (void)lo, (void)hi;
#endif
}
#endif

/* out[r * units + u] = requant(sum_j x[r * k + j] * w[u][j], u) for r < batch, u < units; wt: the
 * blocks above (a last block of fewer than 4 units computes 4, its outputs copied). */
__attribute__((always_inline)) static inline void utvm_mve_fc4_impl(int8_t* out, const int8_t* x, int32_t batch,
                                                                    int32_t k, int32_t units, const int8_t* wt,
                                                                    int32_t mode, int32_t zy, int32_t lo,
                                                                    int32_t hi) {
  int32_t steps = (k + 15) >> 4, bb = utvm_mve_fc_block_bytes(k);
  int32_t full = units / 4;
#ifdef UTVM_MVE_VECTOR
  int32x4_t vlo = vdupq_n_s32(lo), vhi = vdupq_n_s32(hi);
  int32_t fast = UTVM_MVE_CONSTANT(k) && UTVM_MVE_CONSTANT(mode) && (mode & UTVM_MVE_FC_RIGHT) && steps * 16 <= 4095;
  for (int32_t r = 0; r < batch; ++r) {
    const int8_t* xr = x + r * k;
    int8_t* orow = out + r * units;
    /* a depth up to 8: the row in the low and in the high 8 lanes */
    int8x16_t x0 = vldrbq_z_s8(xr, vctp8q((uint32_t)(k < 16 ? k : 16))), x1 = x0;
    if (k <= 8) {
      uint32_t carry = 0;
      x1 = vshlcq_s8(vshlcq_s8(x0, &carry, 32), &carry, 32);
    }
    if (fast) {
      int8_t tail[4];
      for (int32_t part = 0; part < 2; ++part) {
        int32_t n = part ? (units & 3 ? 1 : 0) : full;
        int8_t* o = part ? tail : orow;
        if (!n) continue;
        if (k <= 8) {
          utvm_mve_fc4p_asm(o, x0, x1, wt + part * full * bb, n, zy, vlo, vhi);
        } else {
          utvm_mve_fc4_asm(o, xr, wt + part * full * bb, k, n, zy, vlo, vhi);
        }
      }
      for (int32_t u = 0; u < (units & 3); ++u) orow[full * 4 + u] = tail[u];
      continue;
    }
    for (int32_t b = 0; b * 4 < units; ++b) {
      const int8_t* blk = wt + b * bb;
      int32_t acc[4] = {0, 0, 0, 0};
      if (k <= 8) {
        for (int32_t u = 0; u < 4; ++u) acc[u] = vmladavq_s8(u & 1 ? x1 : x0, vldrbq_s8(blk + (u >> 1) * 16));
      } else {
        for (int32_t s = 0; s < steps; ++s) {
          int32_t n = k - s * 16;
          int8x16_t xv = vldrbq_z_s8(xr + s * 16, vctp8q((uint32_t)(n < 16 ? n : 16)));
          for (int32_t u = 0; u < 4; ++u) acc[u] = vmladavaq_s8(acc[u], xv, vldrbq_s8(blk + s * 64 + u * 16));
        }
      }
      for (int32_t u = 0; u < 4 && b * 4 + u < units; ++u) {
        int32_t v = utvm_mve_mbqm(acc[u] + utvm_mve_fc_rq(blk, k, u, 0), utvm_mve_fc_rq(blk, k, u, 1),
                                  utvm_mve_fc_rq(blk, k, u, 2));
        orow[b * 4 + u] = utvm_mve_clamp_s8(v + zy, lo, hi);
      }
    }
  }
#else
  (void)mode, (void)full, (void)steps;
  for (int32_t r = 0; r < batch; ++r) {
    for (int32_t u = 0; u < units; ++u) {
      const int8_t* blk = wt + (u / 4) * bb;
      int32_t acc = 0;
      for (int32_t j = 0; j < k; ++j) acc += x[r * k + j] * utvm_mve_fc_w(blk, k, u % 4, j);
      int32_t v = utvm_mve_mbqm(acc + utvm_mve_fc_rq(blk, k, u % 4, 0), utvm_mve_fc_rq(blk, k, u % 4, 1),
                                utvm_mve_fc_rq(blk, k, u % 4, 2));
      out[r * units + u] = utvm_mve_clamp_s8(v + zy, lo, hi);
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

/* out[o] = clamp(MultiplyByQuantizedMultiplier(bias[o] + the dot product of the k int8 values
 * at x with row o of w (n rows of k), m0, s0) + zy, -128, 127) for o < n: utvm_mve_gemm_s8 of one
 * pixel (four rows per input load) with per-row biases computed at run time (BATCH_MATMUL: its
 * zero-point terms), mode UTVM_MVE_RQ_LEFT or 0 */
/* acc[c] += the dot product of the len int8 values at x with weight row c, c = 0..3, the rows
 * stored 16 inputs at a time (w[64k + 16c .. 64k + 16c + 15] = row c's weights 16k .. 16k + 15,
 * the last group padded with zeros; utvm/lower/mac16.py): per 16 inputs one input load, four
 * weight loads and four VMLADAVA; the last len % 16 inputs under a predicate */
/* the body of utvm_mve_mac4_s8 / _s16: ``group`` inputs per step (one vector: load, load_z under
 * a predicate made by vctp), the four rows' weights (load_w) after one another */
#ifdef UTVM_MVE_VECTOR
#define UTVM_MVE_MAC4_ROWS(vec_t, load, load_z, load_w, vctp, group)            \
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];                   \
  int32_t n = len;                                                              \
  for (; n >= (group); n -= (group)) {                                          \
    vec_t xv = load(x);                                                         \
    x += (group);                                                               \
    a0 = vmladavaq(a0, xv, load_w(w));                                          \
    a1 = vmladavaq(a1, xv, load_w(w + (group)));                                \
    a2 = vmladavaq(a2, xv, load_w(w + 2 * (group)));                            \
    a3 = vmladavaq(a3, xv, load_w(w + 3 * (group)));                            \
    w += 4 * (group);                                                           \
  }                                                                             \
  if (n > 0) {                                                                  \
    vec_t xv = load_z(x, vctp((uint32_t)n));                                    \
    a0 = vmladavaq(a0, xv, load_w(w));                                          \
    a1 = vmladavaq(a1, xv, load_w(w + (group)));                                \
    a2 = vmladavaq(a2, xv, load_w(w + 2 * (group)));                            \
    a3 = vmladavaq(a3, xv, load_w(w + 3 * (group)));                            \
  }                                                                             \
  acc[0] = a0;                                                                  \
  acc[1] = a1;                                                                  \
  acc[2] = a2;                                                                  \
  acc[3] = a3;                                                                  \
  return 0
#else
#define UTVM_MVE_MAC4_ROWS(vec_t, load, load_z, load_w, vctp, group)                    \
  for (int32_t j = 0; j < len; ++j) {                                                   \
    const int8_t* wj = w + 4 * (group) * (j / (group)) + j % (group);                    \
    for (int32_t c = 0; c < 4; ++c) acc[c] += x[j] * wj[(group) * c];                   \
  }                                                                                     \
  return 0
#endif

/* acc[c] += the dot product of the len int8 values at x with weight row c, c = 0..3, the rows
 * stored 16 inputs at a time (w[64k + 16c .. 64k + 16c + 15] = row c's weights 16k .. 16k + 15,
 * the last group padded with zeros; utvm/lower/mac16.py): per 16 inputs one input load, four
 * weight loads and four VMLADAVA; the last len % 16 inputs under a predicate */
static inline __attribute__((always_inline)) int32_t utvm_mve_mac4_s8(int32_t* acc, int8_t* x, int8_t* w,
                                                                      int32_t len) {
  UTVM_MVE_MAC4_ROWS(int8x16_t, vldrbq_s8, vldrbq_z_s8, vldrbq_s8, vctp8q, 16);
}

/* TFLite Micro's integer LSTM (utvm/ops/lstm.py), four units at a time:
 *
 * - utvm_mve_lstm_gate4(out, rec, in, mr, sr, mi, si, table, tanh): units u .. u + 3 of one gate,
 *   out[j] = act(sat16(sat16(MBQM(rec[j], mr, sr)) + sat16(MBQM(in[j], mi, si)))) (rec, in: the
 *   recurrent and input FC sums with their biases; MultiplyByQuantizedMultiplier as
 *   utvm_mve_rq_apply4 does it), act the Q0.15 sigmoid (tanh: nonzero) of 3x.
 * - utvm_mve_lstm_update4(gi, gf, gg, go, c, h, y, ...): the cell state c = clamp(sat16(
 *   sat16(MBQM(f * c, m_fc, s_fc)) + sat16(MBQM(i * g, m_ig, s_ig))), c_lo, c_hi) (the cell clip),
 *   then h = y = clamp(MBQM(o * tanh(c scaled by t_shift), m_h, s_h) + zh, -128, 127).
 *
 * The activations: TFLite's table (int16 values minus 32768, utvm/lower/activation16.py), the
 * entry of |v| >> 9 (tanh: >> 8) interpolated towards the next by the low bits, saturated past the
 * table, the sign folded in. Helium: four lanes, the table entries by gathers; elsewhere plain C. */
static inline int32_t utvm_mve_sigtanh1(int32_t v, const int16_t* table, int32_t tanh) {
  int32_t bits = tanh ? 8 : 9, m = v >> 31, a = (v ^ m) - m, uh = a >> bits;
  int32_t idx = uh < 254 ? uh : 254, ua = table[idx], ub = table[idx + 1];
  int32_t r = ((ua + 32768) << bits) + (a & ((1 << bits) - 1)) * (ub - ua);
  if (uh >= 255) r = tanh ? 0xFFFF << 8 : 0x7FFF << 10;
  if (tanh) return (((r - (1 << 23)) ^ m) + (1 << 7)) >> 8;
  return ((r ^ m) + (1 << 9) + (m & (1 << 25))) >> 10;
}

/* v * 3 << t (t >= 0), or (3v + 2**(-t-1)) >> -t: the table's input (activation16.scaled_input) */
static inline int32_t utvm_mve_scaled1(int32_t v, int32_t t) {
  return t >= 0 ? v * (3 << t) : (v * 3 + (1 << (-t - 1))) >> -t;
}

static inline int32_t utvm_mve_clamp1(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

#ifdef UTVM_MVE_VECTOR
__attribute__((always_inline)) static inline int32x4_t utvm_mve_sigtanh4(int32x4_t v, const int16_t* table,
                                                                         int32_t tanh) {
  int32_t bits = tanh ? 8 : 9;
  int32x4_t m = vshrq_n_s32(v, 31);
  int32x4_t a = vabsq_s32(v);
  int32x4_t uh = vshlq_s32(a, vdupq_n_s32(-bits));
  uint32x4_t idx = vreinterpretq_u32_s32(vminq_s32(uh, vdupq_n_s32(254)));
  int32x4_t ua = vldrhq_gather_shifted_offset_s32(table, idx);
  int32x4_t ub = vldrhq_gather_shifted_offset_s32(table, vaddq_n_u32(idx, 1));
  int32x4_t r = vaddq_s32(vshlq_s32(vaddq_n_s32(ua, 32768), vdupq_n_s32(bits)),
                          vmulq_s32(vandq_s32(a, vdupq_n_s32((1 << bits) - 1)), vsubq_s32(ub, ua)));
  r = vpselq_s32(vdupq_n_s32(tanh ? 0xFFFF << 8 : 0x7FFF << 10), r, vcmpgtq_n_s32(uh, 254));
  if (tanh) return vshrq_n_s32(vaddq_n_s32(veorq_s32(vsubq_n_s32(r, 1 << 23), m), 1 << 7), 8);
  return vshrq_n_s32(vaddq_s32(vaddq_n_s32(veorq_s32(r, m), 1 << 9), vandq_s32(m, vdupq_n_s32(1 << 25))), 10);
}

/* MBQM(v, m, s) + zy clamped to [lo, hi], four lanes (utvm_mve_rq_apply4 with one multiplier) */
__attribute__((always_inline)) static inline int32x4_t utvm_mve_scale4(int32x4_t v, int32_t m, int32_t s, int32_t zy,
                                                                       int32_t lo, int32_t hi) {
  utvm_mve_rq_t q = {0, 0, 0, m, s, s > 0 ? UTVM_MVE_RQ_LEFT : 0, zy, lo, hi};
  return utvm_mve_rq_apply4(&q, v, vdupq_n_s32(m), vdupq_n_s32(s));
}
#endif

static inline __attribute__((always_inline)) int32_t utvm_mve_lstm_gate4(int16_t* out, int32_t* rec, int32_t* in,
                                                                         int32_t mr, int32_t sr, int32_t mi,
                                                                         int32_t si, int16_t* table, int32_t tanh) {
#ifdef UTVM_MVE_VECTOR
  int32x4_t g = vaddq_s32(utvm_mve_scale4(vldrwq_s32(rec), mr, sr, 0, -32768, 32767),
                          utvm_mve_scale4(vldrwq_s32(in), mi, si, 0, -32768, 32767));
  g = vminq_s32(vmaxq_s32(g, vdupq_n_s32(-32768)), vdupq_n_s32(32767));
  vstrhq_s32(out, utvm_mve_sigtanh4(vmulq_n_s32(g, 3), table, tanh));
#else
  for (int32_t j = 0; j < 4; ++j) {
    int32_t g = utvm_mve_clamp1(utvm_mve_mbqm(rec[j], mr, sr), -32768, 32767) +
                utvm_mve_clamp1(utvm_mve_mbqm(in[j], mi, si), -32768, 32767);
    out[j] = (int16_t)utvm_mve_sigtanh1(3 * utvm_mve_clamp1(g, -32768, 32767), table, tanh);
  }
#endif
  return 0;
}

static inline __attribute__((always_inline)) int32_t utvm_mve_lstm_update4(
    int16_t* gi, int16_t* gf, int16_t* gg, int16_t* go, int16_t* c, int8_t* h, int8_t* y, int32_t m_fc, int32_t s_fc,
    int32_t m_ig, int32_t s_ig, int32_t c_lo, int32_t c_hi, int32_t t_shift, int32_t m_h, int32_t s_h, int32_t zh,
    int16_t* table) {
#ifdef UTVM_MVE_VECTOR
  int32x4_t fc = utvm_mve_scale4(vmulq_s32(vldrhq_s32(gf), vldrhq_s32(c)), m_fc, s_fc, 0, -32768, 32767);
  int32x4_t ig = utvm_mve_scale4(vmulq_s32(vldrhq_s32(gi), vldrhq_s32(gg)), m_ig, s_ig, 0, -32768, 32767);
  int32x4_t cn = vminq_s32(vmaxq_s32(vaddq_s32(fc, ig), vdupq_n_s32(c_lo)), vdupq_n_s32(c_hi));
  vstrhq_s32(c, cn);
  int32x4_t v = t_shift >= 0 ? vmulq_n_s32(cn, 3 << t_shift)
                             : vshlq_s32(vaddq_n_s32(vmulq_n_s32(cn, 3), 1 << (-t_shift - 1)), vdupq_n_s32(t_shift));
  int32x4_t hv = utvm_mve_scale4(vmulq_s32(vldrhq_s32(go), utvm_mve_sigtanh4(v, table, 1)), m_h, s_h, zh, -128, 127);
  vstrbq_s32(h, hv);
  vstrbq_s32(y, hv);
#else
  for (int32_t j = 0; j < 4; ++j) {
    int32_t fc = utvm_mve_clamp1(utvm_mve_mbqm(gf[j] * c[j], m_fc, s_fc), -32768, 32767);
    int32_t ig = utvm_mve_clamp1(utvm_mve_mbqm(gi[j] * gg[j], m_ig, s_ig), -32768, 32767);
    int32_t cn = utvm_mve_clamp1(utvm_mve_clamp1(fc + ig, -32768, 32767), c_lo, c_hi);
    c[j] = (int16_t)cn;
    int32_t t = utvm_mve_sigtanh1(utvm_mve_scaled1(cn, t_shift), table, 1);
    h[j] = y[j] = (int8_t)utvm_mve_clamp1(utvm_mve_mbqm(go[j] * t, m_h, s_h) + zh, -128, 127);
  }
#endif
  return 0;
}

static inline int32_t utvm_mve_matvec_s8(int8_t* out, int8_t* x, int8_t* w, int32_t k, int32_t n, int32_t* bias,
                                         int32_t m0, int32_t s0, int32_t mode, int32_t zy) {
  utvm_mve_rq_t q = {bias, bias, (const int8_t*)bias, m0, s0, mode, zy, -128, 127};
  utvm_mve_gemm_impl(out, 1, n, x, k, w, k, n, q);
  return 0;
}

/*
 * 16x8 layers (int16 activations, int8 weights; utvm/lower/mac16.py lays the weights out). The
 * sums are int32: the kernels use these helpers where the bound of the sums known at compile
 * time stays below 2**31 (TFLite Micro's int64 sums are then exact in int32).
 *
 * - utvm_mve_mac4_s16(acc, x, w, len): acc[c] += the dot product of the len int16 values at x
 *   with weight row c, c = 0..3; the rows stored eight inputs at a time, w[32k + 8c .. 32k + 8c +
 *   7] = row c's weights 8k .. 8k + 7 (the last group of a row padded with zeros): per 8 inputs
 *   one input load, four VLDRB.S16 and four VMLADAVA.S16; the last len % 8 inputs under a
 *   predicate (no read past x + len).
 * - utvm_mve_dw_row_s16(...): one output row of a 16x8 depthwise convolution (depth multiplier 1),
 *   every channel: out[ox * c + ch] for ox < ow, the taps of pixel ox input rows iy0 + ry * dh and
 *   columns ox * sw - pad_left + rx * dw (ry < kh, rx < kw; the taps outside the input add
 *   nothing, the zero point is 0), weights wt (kh x kw x c). Eight channels per step as int16
 *   lanes, their products widened by VMULLB/VMULLT into the even and odd channels' int32 sums;
 *   then bias and multiplier per channel (stored per block of eight channels as the four even
 *   ones, then the four odd ones) and out = clamp((sum + bias) * mult + 2**31 >> 32) (VRMULH:
 *   utvm_mulhr_s32, TFLite's int64 MultiplyByQuantizedMultiplier with the shift folded into the
 *   multiplier), narrowed back into channel order.
 */
static inline __attribute__((always_inline)) int32_t utvm_mve_mac4_s16(int32_t* acc, int16_t* x, int8_t* w,
                                                                       int32_t len) {
  UTVM_MVE_MAC4_ROWS(int16x8_t, vldrhq_s16, vldrhq_z_s16, vldrbq_s16, vctp16q, 8);
}

#ifdef UTVM_MVE_VECTOR
/* the n taps of one window row of one block of eight channels (p: the channels' predicate, 0
 * for all eight) added to the even and odd channels' sums; xs, ws: from one tap to the next */
__attribute__((always_inline)) static inline void utvm_mve_dw16_taps(int32x4_t* ae, int32x4_t* ao, const int16_t* xp,
                                                                     const int8_t* wp, int32_t n, int32_t xs,
                                                                     int32_t ws, mve_pred16_t p) {
  int32x4_t e = *ae, o = *ao;
  for (; n >= 2; n -= 2) {
    int16x8_t x0 = p ? vldrhq_z_s16(xp, p) : vldrhq_s16(xp);
    int16x8_t w0 = p ? vldrbq_z_s16(wp, p) : vldrbq_s16(wp);
    int16x8_t x1 = p ? vldrhq_z_s16(xp + xs, p) : vldrhq_s16(xp + xs);
    int16x8_t w1 = p ? vldrbq_z_s16(wp + ws, p) : vldrbq_s16(wp + ws);
    e = vaddq_s32(e, vmullbq_int_s16(x0, w0));
    o = vaddq_s32(o, vmulltq_int_s16(x0, w0));
    e = vaddq_s32(e, vmullbq_int_s16(x1, w1));
    o = vaddq_s32(o, vmulltq_int_s16(x1, w1));
    xp += 2 * xs;
    wp += 2 * ws;
  }
  if (n) {
    int16x8_t x0 = p ? vldrhq_z_s16(xp, p) : vldrhq_s16(xp);
    int16x8_t w0 = p ? vldrbq_z_s16(wp, p) : vldrbq_s16(wp);
    e = vaddq_s32(e, vmullbq_int_s16(x0, w0));
    o = vaddq_s32(o, vmulltq_int_s16(x0, w0));
  }
  *ae = e;
  *ao = o;
}

/* one pixel, channels ch .. ch + 7 (predicate p, 0: all eight): window rows [ry_lo, ry_hi) and
 * columns [rx_lo, rx_hi) inside the input; xp: the pixel's tap (ry_lo, rx_lo) at channel ch */
__attribute__((always_inline)) static inline void utvm_mve_dw16_block(int16_t* out, const int16_t* xp, const int8_t* wp,
                                                                      int32_t rows, int32_t cols, int32_t row_step,
                                                                      int32_t xs, int32_t c, int32_t kw,
                                                                      const int32_t* bias, const int32_t* mult,
                                                                      int32x4_t vlo, int32x4_t vhi, mve_pred16_t p) {
  int32x4_t ae = vldrwq_s32(bias), ao = vldrwq_s32(bias + 4);
  for (int32_t r = 0; r < rows; ++r, xp += row_step, wp += kw * c) utvm_mve_dw16_taps(&ae, &ao, xp, wp, cols, xs, c, p);
  ae = vminq_s32(vmaxq_s32(vrmulhq_s32(ae, vldrwq_s32(mult)), vlo), vhi);
  ao = vminq_s32(vmaxq_s32(vrmulhq_s32(ao, vldrwq_s32(mult + 4)), vlo), vhi);
  int16x8_t v = vmovntq_s32(vmovnbq_s32(vdupq_n_s16(0), ae), ao);
  if (p) {
    vstrhq_p_s16(out, v, p);
  } else {
    vstrhq_s16(out, v);
  }
}

/* two pixels (xp and xp + step) with the same taps inside the input, channels ch .. ch + 7: the
 * weights loaded once for both */
__attribute__((always_inline)) static inline void utvm_mve_dw16_block2(int16_t* out, const int16_t* xp, int32_t step,
                                                                       const int8_t* wp, int32_t rows, int32_t cols,
                                                                       int32_t row_step, int32_t xs, int32_t c,
                                                                       int32_t kw, const int32_t* bias,
                                                                       const int32_t* mult, int32x4_t vlo,
                                                                       int32x4_t vhi, mve_pred16_t p) {
  int32x4_t e0 = vldrwq_s32(bias), o0 = vldrwq_s32(bias + 4), e1 = e0, o1 = o0;
  for (int32_t r = 0; r < rows; ++r, xp += row_step, wp += kw * c) {
    const int16_t* xa = xp;
    const int8_t* wr = wp;
    for (int32_t n = cols; n > 0; --n, xa += xs, wr += c) {
      int16x8_t wv = p ? vldrbq_z_s16(wr, p) : vldrbq_s16(wr);
      int16x8_t a = p ? vldrhq_z_s16(xa, p) : vldrhq_s16(xa);
      e0 = vaddq_s32(e0, vmullbq_int_s16(a, wv));
      o0 = vaddq_s32(o0, vmulltq_int_s16(a, wv));
      a = p ? vldrhq_z_s16(xa + step, p) : vldrhq_s16(xa + step);
      e1 = vaddq_s32(e1, vmullbq_int_s16(a, wv));
      o1 = vaddq_s32(o1, vmulltq_int_s16(a, wv));
    }
  }
  int32x4_t me = vldrwq_s32(mult), mo = vldrwq_s32(mult + 4);
  int16x8_t v0 = vmovntq_s32(vmovnbq_s32(vdupq_n_s16(0), vminq_s32(vmaxq_s32(vrmulhq_s32(e0, me), vlo), vhi)),
                             vminq_s32(vmaxq_s32(vrmulhq_s32(o0, mo), vlo), vhi));
  int16x8_t v1 = vmovntq_s32(vmovnbq_s32(vdupq_n_s16(0), vminq_s32(vmaxq_s32(vrmulhq_s32(e1, me), vlo), vhi)),
                             vminq_s32(vmaxq_s32(vrmulhq_s32(o1, mo), vlo), vhi));
  if (p) {
    vstrhq_p_s16(out, v0, p);
    vstrhq_p_s16(out + c, v1, p);
  } else {
    vstrhq_s16(out, v0);
    vstrhq_s16(out + c, v1);
  }
}
#endif

static inline int32_t utvm_mve_dw_row_s16(int16_t* out, int16_t* x, int32_t h, int32_t w, int32_t c, int32_t iy0,
                                          int32_t ow, int32_t sw, int32_t pad_left, int32_t kh, int32_t kw,
                                          int32_t dh, int32_t dw, int8_t* wt, int32_t* bias, int32_t* mult, int32_t lo,
                                          int32_t hi) {
  /* the window rows inside the input: [ry_lo, ry_hi) */
  int32_t ry_lo = 0, ry_hi = kh;
  while (ry_lo < kh && iy0 + ry_lo * dh < 0) ++ry_lo;
  while (ry_hi > ry_lo && iy0 + (ry_hi - 1) * dh >= h) --ry_hi;
#ifdef UTVM_MVE_VECTOR
  /* the pixels whose whole window lies inside the input (columns): [in_lo, in_hi) */
  int32_t in_lo = (pad_left + sw - 1) / sw;
  int32_t in_hi = w - 1 - (kw - 1) * dw + pad_left >= 0 ? (w - 1 - (kw - 1) * dw + pad_left) / sw + 1 : 0;
  if (in_hi > ow) in_hi = ow;
#endif
  for (int32_t ox = 0; ox < ow; ++ox, out += c) {
    int32_t ix0 = ox * sw - pad_left;
    /* the window columns inside the input: [rx_lo, rx_hi) */
    int32_t rx_lo = 0, rx_hi = kw;
    while (rx_lo < kw && ix0 + rx_lo * dw < 0) ++rx_lo;
    while (rx_hi > rx_lo && ix0 + (rx_hi - 1) * dw >= w) --rx_hi;
    /* the taps inside: rows x cols (none: the bias alone) */
    int32_t rows = rx_lo < rx_hi ? ry_hi - ry_lo : 0, cols = rx_hi - rx_lo;
#ifdef UTVM_MVE_VECTOR
    {
      int32x4_t vlo = vdupq_n_s32(lo), vhi = vdupq_n_s32(hi);
      const int16_t* xp = x + ((iy0 + ry_lo * dh) * w + ix0 + rx_lo * dw) * c;
      const int8_t* wp = wt + (ry_lo * kw + rx_lo) * c;
      int32_t row_step = dh * w * c, xs = dw * c, ch = 0;
      if (ox >= in_lo && ox + 1 < in_hi) { /* two whole windows: the weights loaded once */
        for (; ch + 8 <= c; ch += 8) {
          utvm_mve_dw16_block2(out + ch, xp + ch, sw * c, wp + ch, rows, cols, row_step, xs, c, kw, bias + ch,
                               mult + ch, vlo, vhi, 0);
        }
        if (ch < c) {
          utvm_mve_dw16_block2(out + ch, xp + ch, sw * c, wp + ch, rows, cols, row_step, xs, c, kw, bias + ch,
                               mult + ch, vlo, vhi, vctp16q((uint32_t)(c - ch)));
        }
        ++ox;
        out += c;
        continue;
      }
      for (; ch + 8 <= c; ch += 8) {
        utvm_mve_dw16_block(out + ch, xp + ch, wp + ch, rows, cols, row_step, xs, c, kw, bias + ch, mult + ch, vlo,
                            vhi, 0);
      }
      if (ch < c) {
        utvm_mve_dw16_block(out + ch, xp + ch, wp + ch, rows, cols, row_step, xs, c, kw, bias + ch, mult + ch, vlo,
                            vhi, vctp16q((uint32_t)(c - ch)));
      }
    }
#else
    for (int32_t ch = 0; ch < c; ++ch) {
      /* channel ch: lane (ch & 7) >> 1 of the even (ch even) or odd block half */
      int32_t at = (ch & ~7) + ((ch & 1) << 2) + ((ch & 7) >> 1);
      int32_t acc = bias[at];
      for (int32_t ry = ry_lo; ry < ry_lo + rows; ++ry) {
        for (int32_t rx = rx_lo; rx < rx_lo + cols; ++rx) {
          acc += x[((iy0 + ry * dh) * w + ix0 + rx * dw) * c + ch] * wt[(ry * kw + rx) * c + ch];
        }
      }
      int32_t v = (int32_t)(((int64_t)acc * mult[at] + ((int64_t)1 << 31)) >> 32);
      out[ch] = (int16_t)(v < lo ? lo : (v > hi ? hi : v));
    }
#endif
  }
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

__attribute__((always_inline)) static inline int32_t utvm_mve_dwt_s8(void* out, void* x, int32_t h, int32_t w,
                                                                     int32_t c, int32_t oh, int32_t ow, int32_t sh,
                                                                     int32_t sw, int32_t pad_top, int32_t pad_left,
                                                                     void* wt, int32_t zy, int32_t lo, int32_t hi,
                                                                     int32_t right, int32_t rcls, int32_t ccls,
                                                                     int32_t ncc, int32_t ns, int32_t zx,
                                                                     int32_t pad, void* tile) {
  utvm_mve_dwt_impl((int8_t*)out, (const int8_t*)x, h, w, c, oh, ow, sh, sw, pad_top, pad_left, (const int8_t*)wt,
                    zy, lo, hi, right, rcls, ccls, ncc, ns, zx, pad, (int8_t*)tile);
  return 0;
}

__attribute__((always_inline)) static inline int32_t utvm_mve_fc4_s8(void* out, void* x, int32_t batch, int32_t k,
                                                                     int32_t units, void* wt, int32_t mode, int32_t zy,
                                                                     int32_t lo, int32_t hi) {
  utvm_mve_fc4_impl((int8_t*)out, (const int8_t*)x, batch, k, units, (const int8_t*)wt, mode, zy, lo, hi);
  return 0;
}

/* plain C of the per-layer Helium functions of utvm/lower/tiny.py (tiny fully connected layers,
 * depth <= 16): per group of four output channels the stream holds the four folded biases, the
 * weights, the four multipliers and the four shifts (TFLite's, <= -1; the last group padded with
 * its last channel's). The weights: per channel of the group its vectors of 16 bytes (zeros past
 * the depth); depths up to UTVM_MVE_TINY_LANES: per input the four channels' weights (a word, zeros
 * for missing channels). per_tensor: one multiplier and shift, the stream's first two words, none
 * in the groups. */
#define UTVM_MVE_TINY_LANES 5
static inline void utvm_mve_tiny_fc(int8_t* y, const int8_t* x, const int32_t* stream, int32_t batch, int32_t depth,
                                    int32_t units, int32_t zy, int32_t lo, int32_t hi, int32_t per_tensor) {
  int32_t lanes = depth <= UTVM_MVE_TINY_LANES;
  for (int32_t b = 0; b < batch; b++) {
    const int8_t* row = x + b * depth;
    const int32_t* s = per_tensor ? stream + 2 : stream;
    for (int32_t g = 0; g * 4 < units; g++) {
      int32_t n = units - 4 * g < 4 ? units - 4 * g : 4;
      int32_t steps = (depth + 15) / 16, words = lanes ? depth : 4 * n * steps;
      const int8_t* w = (const int8_t*)(const void*)(s + 4);
      for (int32_t u = 0; u < n; u++) {
        int32_t acc = s[u];
        for (int32_t j = 0; j < depth; j++) acc += row[j] * w[lanes ? 4 * j + u : 16 * steps * u + j];
        int32_t v = per_tensor ? utvm_mve_mbqm(acc, stream[0], stream[1])
                               : utvm_mve_mbqm(acc, s[4 + words + u], s[8 + words + u]);
        /* blocks of 16 channels (depths up to UTVM_MVE_TINY_LANES): group g's lane u is channel
         * 16 (g / 4) + 4 u + (0, 2, 1, 3)[g % 4] (BLOCK_ORDER of tiny.py) */
        int32_t c = lanes && 16 * (g / 4 + 1) <= units ? 16 * (g / 4) + 4 * u + (g & 1) * 2 + (g & 2) / 2
                                                      : 4 * g + u;
        y[b * units + c] = utvm_mve_clamp_s8(v + zy, lo, hi);
      }
      s += 4 + words + (per_tensor ? 0 : 8);
    }
  }
}

#include "kernels/depthwise_mve_k.h"

#endif /* UTVM_KERNELS_MVE_H_ */
