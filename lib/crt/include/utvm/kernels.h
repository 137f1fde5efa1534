/*
 * Small integer helpers that utvm's generated kernels call (header-only, C99).
 *
 * utvm_dot4_s8(a, b): the dot product of the four int8 lanes packed little-endian in a and
 * b. On CPUs with the DSP extension (Cortex-M4, M7, M33, M55) it is two dual 16-bit
 * multiply-accumulates (SMUAD, SMLAD) on sign-extended even and odd lanes; elsewhere plain C.
 */
#ifndef UTVM_KERNELS_H_
#define UTVM_KERNELS_H_

#include <stdint.h>

#if defined(__ARM_FEATURE_SIMD32) && __ARM_FEATURE_SIMD32
#include <arm_acle.h>

static inline int32_t utvm_dot4_s8(int32_t a, int32_t b) {
  uint32_t ua = (uint32_t)a;
  uint32_t ub = (uint32_t)b;
  int32_t a_even = (int32_t)__sxtb16((int32_t)ua);
  int32_t b_even = (int32_t)__sxtb16((int32_t)ub);
  int32_t a_odd = (int32_t)__sxtb16((int32_t)((ua >> 8) | (ua << 24)));
  int32_t b_odd = (int32_t)__sxtb16((int32_t)((ub >> 8) | (ub << 24)));
  return __smlad(a_odd, b_odd, __smuad(a_even, b_even));
}

#else

#define UTVM_LANE_S8(x, k) ((int32_t)(int8_t)(uint8_t)((uint32_t)(x) >> (8 * (k))))

static inline int32_t utvm_dot4_s8(int32_t a, int32_t b) {
  return UTVM_LANE_S8(a, 0) * UTVM_LANE_S8(b, 0) + UTVM_LANE_S8(a, 1) * UTVM_LANE_S8(b, 1) +
         UTVM_LANE_S8(a, 2) * UTVM_LANE_S8(b, 2) + UTVM_LANE_S8(a, 3) * UTVM_LANE_S8(b, 3);
}

#endif

#endif /* UTVM_KERNELS_H_ */
