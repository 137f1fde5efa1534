/* utvm/kernels/mac16_mve.h: moved from kernels_mve.h by the split of issue 24 (one header per
 * operator family and instruction set, the bodies unchanged). */
#ifndef UTVM_KERNELS_MAC16_MVE_H_
#define UTVM_KERNELS_MAC16_MVE_H_

#include "common_mve.h"
#include "mac_mve.h"


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
UTVM_INLINE int32_t utvm_mve_mac4_s16(int32_t* acc, int16_t* x, int8_t* w,
                                                                       int32_t len) {
  UTVM_MVE_MAC4_ROWS(int16x8_t, vldrhq_s16, vldrhq_z_s16, vldrbq_s16, vctp16q, 8);
}

#endif /* UTVM_KERNELS_MAC16_MVE_H_ */
