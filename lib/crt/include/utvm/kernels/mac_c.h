/* utvm/kernels/mac_c.h: moved from kernels.h by the split of issue 24 (one header per
 * operator family and instruction set, the bodies unchanged). */
#ifndef UTVM_KERNELS_MAC_C_H_
#define UTVM_KERNELS_MAC_C_H_

#include "common.h"
#include "mac_dsp.h"

/*
 * Small integer helpers that utvm's generated kernels call (header-only, C99).
 *
 * Dot products of int8 lanes:
 *
 * - utvm_dot4_s8(a, b): the dot product of the four int8 lanes packed little-endian in the
 *   int32 words a and b.
 * - utvm_dot4_acc_s8(acc, a, b): acc + utvm_dot4_s8(a, b). On CPUs with the DSP extension
 *   (Cortex-M4, M7, M33, M55) two dual 16-bit multiply-accumulates (SMLAD) on the
 *   sign-extended even and odd lanes; elsewhere plain C.
 * - utvm_dot16_acc_s8(acc, a, b): acc + the dot product of the 16 int8 values at a and b
 *   (four int32 words each). With Helium (MVE, Cortex-M55) one vector load per operand and
 *   one VMLADAVA; elsewhere four utvm_dot4_acc_s8.
 *
 * - utvm_mac4_s8(acc, x, w, n): acc[c] += the dot product of the n words at x with row c of
 *   the weights, for the four rows c = 0..3 stored interleaved word by word (w[4 * k + c] is
 *   word k of row c). Each input word is loaded and sign-extended once for the four rows;
 *   with the DSP extension an assembly loop (LDRD for two weight words, 21 instructions for
 *   16 multiply-accumulates; straight-line for n <= 2 known at compile time). Returns 0.
 * - utvm_mac4_pad_s8(acc, inside, x, z, w, n): the same on x, or on the n words at z (the
 *   packed input zero point) when inside is 0 (a kernel tap in the padding).
 * - utvm_mac4w_s8(acc, x, w, n), utvm_mac4w_pad_s8(acc, inside, x, z, w, n): the same with the
 *   weights widened to int16 ahead of time (twice the bytes): per input word k and row c two
 *   words, w[8k + 2c] = (weight 0, weight 2) and w[8k + 2c + 1] = (weight 1, weight 3) as int16
 *   halves, the pairs SMLAD takes once the input word is split by SXTB16; with the DSP
 *   extension 15 instructions for 16 multiply-accumulates. utvm_dot4w_s8(x, we, wo),
 *   utvm_dot4w_acc_s8(acc, x, we, wo): the dot product of one input word with one such pair of
 *   weight words (two SXTB16 and two SMLAD). utvm_mac4w_word_s8(acc, x, w) and
 *   utvm_mac4w_word_at_s8(acc, p, w): utvm_mac4_word_s8 / utvm_mac4_word_at_s8 on the eight
 *   widened words of the four channels.
 * - utvm_mac4_u_s8(acc, x, w, n): utvm_mac4_s8 on the 4n bytes at x, any alignment (the weights
 *   aligned), e.g. a kernel row of a convolution with three input channels.
 * - utvm_mac4_lane_s8(acc, x, w): acc[c] += x * w[c], c = 0..3, for one int8 value x (the weight
 *   word w holds one weight per output channel).
 *
 *
 * Depthwise convolutions, four channels per int32 word (channel c in lane c):
 *
 * - utvm_dw4_pair_s8(acc, xa, xb, w): acc[c] += lane c of xa * weight c of tap a + lane c of
 *   xb * weight c of tap b, for two kernel taps a and b. The eight weights are two words
 *   reordered so that one SMLAD serves a channel for both taps: w[0] = (a0, a1, b0, b1),
 *   w[1] = (a2, a3, b2, b3) as int8 lanes.
 * - utvm_dw4_tap_s8(acc, x, w): acc[c] += lane c of x * lane c of the weight word w[0] (an odd
 *   last tap).
 * - utvm_dw4_pair_at_s8(acc, pa, pb, w), utvm_dw4_tap_at_s8(acc, p, w): the same with the input
 *   words read from pa, pb, p (inside the assembly with DSP: the compiler cannot hoist the
 *   loads of all taps and run out of registers).
 *
 * - utvm_dwp_s8(...): a whole depthwise convolution on planar int16 rows in scratch, one output
 *   channel at a time with its weights in registers (the dsp_dwp variant; see its section).
 * - utvm_dwt_s8(...): the same for tiny output maps, each position with only its real taps (the
 *   dsp_dwt variant; see its section).
 *
 * - utvm_mac4_word_s8(acc, x, w), utvm_mac4_word_at_s8(acc, p, w): acc[c] += the dot product of
 *   the word x (or the four bytes at p, any alignment) with the weight word c at w, c = 0..3
 *   (a convolution with one input channel and four taps per kernel row).
 * - utvm_ldw_s8(p): the four bytes at p as a word (any alignment).
 *
 * Requantization (gemmlowp / TFLite arithmetic, bit-exact):
 *
 * - utvm_srdhm_small(a, m): SaturatingRoundingDoublingHighMul(a, m) for |a| < 2**30 (then
 *   2a does not overflow and the rounded high word of 2a * m is the result: SMMULR with DSP).
 * - utvm_srdhm2_small(a, m2): the same from m2 = 2 * m mod 2**32, for 2**30 <= m < 2**31: as
 *   int32, m2 = 2m - 2**32, so the rounded high word of a * m2 plus a is the rounded high word
 *   of 2a * m (one SMMLAR with DSP, accumulating a itself).
 * - utvm_sat_s8(x), utvm_sat_s16(x): x clamped to the int8 or int16 range (SSAT).
 * - utvm_shl_s32(x, s): x * 2**s for 0 <= s <= 31, wrapping around as two's complement (one LSL):
 *   shifted as an unsigned value, since a left shift of a negative int32 (or one that overflows)
 *   is undefined behaviour in C.
 */

#if defined(__ARM_FEATURE_SIMD32) && __ARM_FEATURE_SIMD32

#else

static inline int32_t utvm_dot4_acc_s8(int32_t acc, int32_t a, int32_t b) {
  return acc + UTVM_LANE_S8(a, 0) * UTVM_LANE_S8(b, 0) + UTVM_LANE_S8(a, 1) * UTVM_LANE_S8(b, 1) +
         UTVM_LANE_S8(a, 2) * UTVM_LANE_S8(b, 2) + UTVM_LANE_S8(a, 3) * UTVM_LANE_S8(b, 3);
}

/* lanes 0 and 2 of x times the int16 halves of we, lanes 1 and 3 times those of wo */
static inline int32_t utvm_dot4w_acc_s8(int32_t acc, int32_t x, int32_t we, int32_t wo) {
  return acc + UTVM_LANE_S8(x, 0) * (int32_t)(int16_t)(uint16_t)(uint32_t)we + UTVM_LANE_S8(x, 2) * (we >> 16) +
         UTVM_LANE_S8(x, 1) * (int32_t)(int16_t)(uint16_t)(uint32_t)wo + UTVM_LANE_S8(x, 3) * (wo >> 16);
}

#endif

static inline int32_t utvm_dot4_s8(int32_t a, int32_t b) { return utvm_dot4_acc_s8(0, a, b); }

static inline int32_t utvm_dot4w_s8(int32_t x, int32_t we, int32_t wo) { return utvm_dot4w_acc_s8(0, x, we, wo); }

#if !(defined(__ARM_FEATURE_SIMD32) && __ARM_FEATURE_SIMD32)
static inline int32_t utvm_dw4_pair_s8(int32_t* acc, int32_t xa, int32_t xb, int8_t* w) {
  int c;
  for (c = 0; c < 4; ++c) {
    int8_t* wc = w + 4 * (c >> 1) + (c & 1);
    acc[c] += UTVM_LANE_S8(xa, c) * wc[0] + UTVM_LANE_S8(xb, c) * wc[2];
  }
  return 0;
}

static inline int32_t utvm_dw4_tap_s8(int32_t* acc, int32_t x, int8_t* w) {
  int c;
  for (c = 0; c < 4; ++c) acc[c] += UTVM_LANE_S8(x, c) * w[c];
  return 0;
}

static inline int32_t utvm_dw4_pair_at_s8(int32_t* acc, int32_t* xa, int32_t* xb, int8_t* w) {
  return utvm_dw4_pair_s8(acc, *xa, *xb, w);
}

static inline int32_t utvm_dw4_tap_at_s8(int32_t* acc, int32_t* x, int8_t* w) { return utvm_dw4_tap_s8(acc, *x, w); }

static inline int32_t utvm_mac4_word_s8(int32_t* acc, int32_t x, int8_t* w) {
  int c, k;
  for (c = 0; c < 4; ++c)
    for (k = 0; k < 4; ++k) acc[c] += UTVM_LANE_S8(x, k) * w[4 * c + k];
  return 0;
}

static inline int32_t utvm_mac4_word_at_s8(int32_t* acc, int8_t* x, int8_t* w) {
  return utvm_mac4_word_s8(acc, utvm_ldw_s8(x), w);
}

static inline int32_t utvm_mac4w_word_s8(int32_t* acc, int32_t x, int32_t* w) {
  int c;
  for (c = 0; c < 4; ++c) acc[c] = utvm_dot4w_acc_s8(acc[c], x, w[2 * c], w[2 * c + 1]);
  return 0;
}

static inline int32_t utvm_mac4w_word_at_s8(int32_t* acc, int8_t* x, int32_t* w) {
  return utvm_mac4w_word_s8(acc, utvm_ldw_s8(x), w);
}

static inline int32_t utvm_mac4_s8(int32_t* acc, int32_t* x, int32_t* w, int32_t n) {
  int32_t k;
  for (k = 0; k < n; ++k) {
    acc[0] = utvm_dot4_acc_s8(acc[0], x[k], w[4 * k]);
    acc[1] = utvm_dot4_acc_s8(acc[1], x[k], w[4 * k + 1]);
    acc[2] = utvm_dot4_acc_s8(acc[2], x[k], w[4 * k + 2]);
    acc[3] = utvm_dot4_acc_s8(acc[3], x[k], w[4 * k + 3]);
  }
  return 0;
}
#endif

#if !(defined(__ARM_FEATURE_SIMD32) && __ARM_FEATURE_SIMD32)
static inline int32_t utvm_mac4w_s8(int32_t* acc, int32_t* x, int32_t* w, int32_t n) {
  int32_t k, c;
  for (k = 0; k < n; ++k)
    for (c = 0; c < 4; ++c) acc[c] += utvm_dot4w_s8(x[k], w[8 * k + 2 * c], w[8 * k + 2 * c + 1]);
  return 0;
}

static inline int32_t utvm_mac4_u_s8(int32_t* acc, int8_t* x, int8_t* w, int32_t n) {
  int32_t k, c;
  for (k = 0; k < n; ++k) {
    int32_t xv = utvm_ldw_s8(x + 4 * k);
    for (c = 0; c < 4; ++c) acc[c] = utvm_dot4_acc_s8(acc[c], xv, utvm_ldw_s8(w + 16 * k + 4 * c));
  }
  return 0;
}

static inline int32_t utvm_mac4_lane_s8(int32_t* acc, int32_t x, int8_t* w) {
  int c;
  for (c = 0; c < 4; ++c) acc[c] += x * w[c];
  return 0;
}
#endif

/* utvm_mac4_s8 on x when inside is nonzero, on z (the input zero point, n words) when the
 * kernel tap lies in the padding */
static inline int32_t utvm_mac4_pad_s8(int32_t* acc, int32_t inside, int32_t* x, int32_t* z, int32_t* w,
                                       int32_t n) {
  return utvm_mac4_s8(acc, inside ? x : z, w, n);
}

/* utvm_mac4w_s8 on x, or on z (the input zero point) for a kernel tap in the padding */
static inline int32_t utvm_mac4w_pad_s8(int32_t* acc, int32_t inside, int32_t* x, int32_t* z, int32_t* w,
                                        int32_t n) {
  return utvm_mac4w_s8(acc, inside ? x : z, w, n);
}

static inline int32_t utvm_dot16_acc_s8(int32_t acc, int32_t* a, int32_t* b) {
#ifdef UTVM_HAVE_MVE
  return vmladavaq_s8(acc, vldrbq_s8((const int8_t*)a), vldrbq_s8((const int8_t*)b));
#else
  acc = utvm_dot4_acc_s8(acc, a[0], b[0]);
  acc = utvm_dot4_acc_s8(acc, a[1], b[1]);
  acc = utvm_dot4_acc_s8(acc, a[2], b[2]);
  return utvm_dot4_acc_s8(acc, a[3], b[3]);
#endif
}

/* acc += the products of the Helium vectors at a + k, b + k, k < n, lanes at a time */
#define UTVM_MVE_DOT(load_z, vctp, lanes)                                          \
  for (; k < n; k += (lanes)) {                                                    \
    mve_pred16_t p = vctp((uint32_t)(n - k));                                      \
    acc = vmladavaq_p(acc, load_z(a + k, p), load_z(b + k, p), p);                 \
  }

static inline int32_t utvm_dot_s16(int32_t acc, int16_t* a, int16_t* b, int32_t n) {
  int32_t k = 0;
#ifdef UTVM_HAVE_MVE
  UTVM_MVE_DOT(vldrhq_z_s16, vctp16q, 8)
#elif defined(__ARM_FEATURE_SIMD32) && __ARM_FEATURE_SIMD32
  for (; k + 2 <= n; k += 2) acc = __smlad(utvm_ldw_s16(a + k), utvm_ldw_s16(b + k), acc);
#endif
  for (; k < n; ++k) acc = (int32_t)((uint32_t)acc + (uint32_t)(a[k] * b[k]));
  return acc;
}

static inline int32_t utvm_dot_s8(int32_t acc, int8_t* a, int8_t* b, int32_t n) {
  int32_t k = 0;
#ifdef UTVM_HAVE_MVE
  UTVM_MVE_DOT(vldrbq_z_s8, vctp8q, 16)
#elif defined(__ARM_FEATURE_SIMD32) && __ARM_FEATURE_SIMD32
  for (; k + 4 <= n; k += 4) acc = utvm_dot4_acc_s8(acc, utvm_ldw_s8(a + k), utvm_ldw_s8(b + k));
#endif
  for (; k < n; ++k) acc += a[k] * b[k];
  return acc;
}

#endif /* UTVM_KERNELS_MAC_C_H_ */
