/* utvm/kernels/requant_dsp.h: moved from kernels.h by the split of issue 24 (one header per
 * operator family and instruction set, the bodies unchanged). */
#ifndef UTVM_KERNELS_REQUANT_DSP_H_
#define UTVM_KERNELS_REQUANT_DSP_H_

#include "common.h"

#if defined(__ARM_FEATURE_SIMD32) && __ARM_FEATURE_SIMD32

static inline int32_t utvm_srdhm_small(int32_t a, int32_t m) {
  int32_t r;
  __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"(a * 2), "r"(m));
  return r;
}

static inline int32_t utvm_srdhm2_small(int32_t a, int32_t m2) {
  int32_t r;
  __asm__("smmlar %0, %1, %2, %1" : "=r"(r) : "r"(a), "r"(m2));
  return r;
}
#endif
#if defined(__ARM_FEATURE_SIMD32) && __ARM_FEATURE_SIMD32

static inline int32_t utvm_mulhr_s32(int32_t x, int32_t m) {
  int32_t r;
  __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"(x), "r"(m));
  return r;
}
#endif

#endif /* UTVM_KERNELS_REQUANT_DSP_H_ */
