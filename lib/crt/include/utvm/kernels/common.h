/* utvm/kernels/common.h: moved from kernels.h by the split of issue 24 (one header per
 * operator family and instruction set, the bodies unchanged). */
#ifndef UTVM_KERNELS_COMMON_H_
#define UTVM_KERNELS_COMMON_H_

#include <stdint.h>

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>
#define UTVM_HAVE_MVE 1
#endif

#if (defined(__ARM_FEATURE_SIMD32) && __ARM_FEATURE_SIMD32) || (defined(__ARM_FEATURE_SAT) && __ARM_FEATURE_SAT)
#include <arm_acle.h>
#endif

/* a helper inlined into every caller where the compiler optimizes (the device and host builds
 * at -O1 and above); at -O0 (the sanitizer and debug builds) a plain static inline function,
 * emitted once per translation unit instead of once per call: the same code, and an unoptimized
 * KWS model's kernels compile in a fraction of the time */
#if defined(__OPTIMIZE__)
#define UTVM_INLINE __attribute__((always_inline)) static inline
#else
#define UTVM_INLINE static inline
#endif

/* lane k of the word x as a signed int8 value */
#define UTVM_LANE_S8(x, k) ((int32_t)(int8_t)(uint8_t)((uint32_t)(x) >> (8 * (k))))

/* the four bytes at p (any alignment) as one little-endian word */
static inline int32_t utvm_ldw_s8(int8_t* p) {
  int32_t v;
  __builtin_memcpy(&v, p, 4);
  return v;
}

/*
 * 16x8 layers (int16 activations, int8 weights; utvm/lower/mac16.py lays the weights out).
 * The sums are int32: the kernels use these helpers where the bound of the sums known at compile
 * time (32768 x the weights' absolute sum) stays below 2**31, which makes TFLite Micro's int64
 * sums exact in int32.
 *
 * - utvm_mac4_s16(acc, x, w, len): acc[c] += the dot product of the len int16 values at x (any
 *   2-byte alignment) with weight row c, c = 0..3. The rows are stored four inputs at a time, one
 *   word per row: bytes (w[4k], w[4k+2], w[4k+1], w[4k+3]) of row c at w + 16k + 4c, which SXTB16
 *   turns into the int16 pairs (w[4k], w[4k+1]) and (w[4k+2], w[4k+3]) that SMLAD multiplies with
 *   two input words. Then the last len % 4 weights of each row widened to int16: for two of them a
 *   word (w[a], w[a+1]) per row, for an odd last one a word (w[last], 0) per row (16 bytes each).
 *   With the DSP extension 20 instructions for 16 multiply-accumulates.
 * - utvm_mac4w_s16(acc, x, w, len): the same with the weights widened to int16 ahead of time
 *   (twice the bytes): per four inputs and row two words (w[4k], w[4k+1]), (w[4k+2], w[4k+3]) at
 *   w + 32k + 8c, then the same tail; 14 instructions for 16 multiply-accumulates.
 * - utvm_mulhr_s32(x, m): (x * m + 2**31) >> 32, the rounded high word (SMMULR). TFLite's int64
 *   MultiplyByQuantizedMultiplier (x * reduced + 2**(t-1)) >> t of an x that fits in int32, with
 *   m = reduced << (32 - t) (16 <= t <= 32), is exactly this.
 * - utvm_dw4_pair_s16(acc, x, a, b, w): depthwise, four channels: acc[c] += xa[c] * wa[c] +
 *   xb[c] * wb[c] for the int16 values of two kernel taps at xa = x + a and xb = x + b (a, b:
 *   offsets known at compile time, so that the loads take immediate offsets), the weights widened
 *   to int16 pairs, w[c] = (wa[c], wb[c]) (PKHBT/PKHTB pair the taps per channel, one SMLAD
 *   each). utvm_dw4_tap_s16(acc, x, a, w): acc[c] += xa[c] * w[c], w the four weights as int16
 *   (two words). utvm_dw4_pair_pad_s16(acc, ina, xa, inb, xb, w) and utvm_dw4_tap_pad_s16(acc,
 *   in, x, w): the taps by address, those whose flag is 0 (in the padding) read as zeros.
 * - utvm_im2col_s16(col, x, h, w, c, iy0, ix0, kh, kw, dh): the kh x kw window of c int16 values
 *   per tap whose first tap is row iy0, column ix0 of x (h x w x c), rows dh apart, contiguous in
 *   col; the taps outside the input are zeros (a window at the border of a 16x8 convolution).
 */

/* the int16 value at p (2-byte aligned) and the word of two int16 values at p */
static inline int32_t utvm_ldh_s16(const int8_t* p) {
  int16_t v;
  __builtin_memcpy(&v, p, 2);
  return v;
}

static inline int32_t utvm_ldw_s16(const int16_t* p) {
  int32_t v;
  __builtin_memcpy(&v, p, 4);
  return v;
}

static const int16_t utvm_zeros_s16[4] = {0, 0, 0, 0};

#endif /* UTVM_KERNELS_COMMON_H_ */
