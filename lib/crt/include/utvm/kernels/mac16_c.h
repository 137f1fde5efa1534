/* utvm/kernels/mac16_c.h: moved from kernels.h by the split of issue 24 (one header per
 * operator family and instruction set, the bodies unchanged). */
#ifndef UTVM_KERNELS_MAC16_C_H_
#define UTVM_KERNELS_MAC16_C_H_

#include "common.h"
#include "mac16_dsp.h"

#if defined(__ARM_FEATURE_SIMD32) && __ARM_FEATURE_SIMD32

#else

static inline int32_t utvm_mac4_s16(int32_t* acc, int16_t* x, int8_t* w, int32_t len) {
  int32_t k, c, n = len >> 2;
  for (k = 0; k < n; ++k, x += 4, w += 16) {
    for (c = 0; c < 4; ++c) {
      const int8_t* wc = w + 4 * c;
      acc[c] += x[0] * wc[0] + x[1] * wc[2] + x[2] * wc[1] + x[3] * wc[3];
    }
  }
  if (len & 2) {
    for (c = 0; c < 4; ++c) acc[c] += x[0] * utvm_ldh_s16(w + 4 * c) + x[1] * utvm_ldh_s16(w + 4 * c + 2);
    x += 2;
    w += 16;
  }
  if (len & 1) {
    for (c = 0; c < 4; ++c) acc[c] += x[0] * utvm_ldh_s16(w + 4 * c);
  }
  return 0;
}

static inline int32_t utvm_mac4w_s16(int32_t* acc, int16_t* x, int8_t* w, int32_t len) {
  int32_t k, c, n = len >> 2;
  for (k = 0; k < n; ++k, x += 4, w += 32) {
    for (c = 0; c < 4; ++c) {
      const int8_t* wc = w + 8 * c;
      acc[c] += x[0] * utvm_ldh_s16(wc) + x[1] * utvm_ldh_s16(wc + 2) + x[2] * utvm_ldh_s16(wc + 4) +
                x[3] * utvm_ldh_s16(wc + 6);
    }
  }
  return utvm_mac4_s16(acc, x, w, len & 3); /* the tail: the same int16 words */
}

static inline int32_t utvm_dw4_pair_at_s16(int32_t* acc, int16_t* xa, int16_t* xb, int32_t* w) {
  const int8_t* wb = (const int8_t*)w;
  int c;
  for (c = 0; c < 4; ++c) acc[c] += xa[c] * utvm_ldh_s16(wb + 4 * c) + xb[c] * utvm_ldh_s16(wb + 4 * c + 2);
  return 0;
}

static inline int32_t utvm_dw4_tap_at_s16(int32_t* acc, int16_t* x, int32_t* w) {
  const int8_t* wb = (const int8_t*)w;
  int c;
  for (c = 0; c < 4; ++c) acc[c] += x[c] * utvm_ldh_s16(wb + 2 * c);
  return 0;
}

#endif

/* (the empty asm hides where x comes from: the taps' loads then take x plus their offsets as
 * immediates, rather than addresses the compiler would derive from a pointer of its choice) */
UTVM_INLINE int32_t utvm_dw4_pair_s16(int32_t* acc, int16_t* x, int32_t a, int32_t b,
                                                                       int32_t* w) {
  __asm__("" : "+r"(x));
  return utvm_dw4_pair_at_s16(acc, x + a, x + b, w);
}

UTVM_INLINE int32_t utvm_dw4_tap_s16(int32_t* acc, int16_t* x, int32_t a, int32_t* w) {
  __asm__("" : "+r"(x));
  return utvm_dw4_tap_at_s16(acc, x + a, w);
}

UTVM_INLINE int32_t utvm_dw4_pair_pad_s16(int32_t* acc, int32_t ina, int16_t* xa,
                                                                           int32_t inb, int16_t* xb, int32_t* w) {
  return utvm_dw4_pair_at_s16(acc, ina ? xa : (int16_t*)(void*)utvm_zeros_s16,
                              inb ? xb : (int16_t*)(void*)utvm_zeros_s16, w);
}

UTVM_INLINE int32_t utvm_dw4_tap_pad_s16(int32_t* acc, int32_t in, int16_t* x,
                                                                          int32_t* w) {
  return utvm_dw4_tap_at_s16(acc, in ? x : (int16_t*)(void*)utvm_zeros_s16, w);
}

#endif /* UTVM_KERNELS_MAC16_C_H_ */
