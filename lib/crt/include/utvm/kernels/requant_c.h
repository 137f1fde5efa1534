/* utvm/kernels/requant_c.h: moved from kernels.h by the split of issue 24 (one header per
 * operator family and instruction set, the bodies unchanged). */
#ifndef UTVM_KERNELS_REQUANT_C_H_
#define UTVM_KERNELS_REQUANT_C_H_

#include "common.h"
#include "requant_dsp.h"

#if !(defined(__ARM_FEATURE_SIMD32) && __ARM_FEATURE_SIMD32)

static inline int32_t utvm_srdhm_small(int32_t a, int32_t m) {
  /* (a * m + 2**30) >> 31 with an arithmetic shift rounds as gemmlowp does (half up) */
  return (int32_t)(((int64_t)a * m + ((int64_t)1 << 30)) >> 31);
}

static inline int32_t utvm_srdhm2_small(int32_t a, int32_t m2) {
  return utvm_srdhm_small(a, (int32_t)((uint32_t)m2 >> 1));
}
#endif

/* x * 2**s for 0 <= s <= 31, wrapping as two's complement (a left shift of a negative int32
 * is undefined behaviour in C; shifted as unsigned, one LSL) */
static inline int32_t utvm_shl_s32(int32_t x, int32_t s) {
  return (int32_t)((uint32_t)x << (uint32_t)s);
}

/* x clamped to the range of an n-bit signed integer (SSAT on Armv7-M and later) */
#if defined(__ARM_FEATURE_SAT) && __ARM_FEATURE_SAT
#define UTVM_SSAT(x, n) __ssat((x), (n))
#else
#define UTVM_SSAT(x, n) \
  ((x) < -(1 << ((n) - 1)) ? -(1 << ((n) - 1)) : ((x) > (1 << ((n) - 1)) - 1 ? (1 << ((n) - 1)) - 1 : (x)))
#endif

static inline int32_t utvm_sat_s8(int32_t x) { return UTVM_SSAT(x, 8); }

static inline int32_t utvm_sat_s16(int32_t x) { return UTVM_SSAT(x, 16); }
#if !(defined(__ARM_FEATURE_SIMD32) && __ARM_FEATURE_SIMD32)

static inline int32_t utvm_mulhr_s32(int32_t x, int32_t m) {
  return (int32_t)(((int64_t)x * m + ((int64_t)1 << 31)) >> 32);
}
#endif

#endif /* UTVM_KERNELS_REQUANT_C_H_ */
