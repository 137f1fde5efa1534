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
 * Requantization (gemmlowp / TFLite arithmetic, bit-exact):
 *
 * - utvm_srdhm_small(a, m): SaturatingRoundingDoublingHighMul(a, m) for |a| < 2**30 (then
 *   2a does not overflow and the rounded high word of 2a * m is the result: SMMULR with DSP).
 * - utvm_sat_s8(x): x clamped to the int8 range (SSAT).
 */
#ifndef UTVM_KERNELS_H_
#define UTVM_KERNELS_H_

#include <stdint.h>

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>
#define UTVM_HAVE_MVE 1
#endif

#if (defined(__ARM_FEATURE_SIMD32) && __ARM_FEATURE_SIMD32) || (defined(__ARM_FEATURE_SAT) && __ARM_FEATURE_SAT)
#include <arm_acle.h>
#endif

#if defined(__ARM_FEATURE_SIMD32) && __ARM_FEATURE_SIMD32

/* the odd int8 lanes (1 and 3) of x sign-extended into two int16 halves: SXTB16 with its
 * rotation, one instruction */
static inline int32_t utvm_sxtb16_ror8(int32_t x) {
  int32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
  return r;
}

static inline int32_t utvm_dot4_acc_s8(int32_t acc, int32_t a, int32_t b) {
  acc = __smlad(__sxtb16(a), __sxtb16(b), acc);
  return __smlad(utvm_sxtb16_ror8(a), utvm_sxtb16_ror8(b), acc);
}

static inline int32_t utvm_srdhm_small(int32_t a, int32_t m) {
  int32_t r;
  __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"(a * 2), "r"(m));
  return r;
}

#else

#define UTVM_LANE_S8(x, k) ((int32_t)(int8_t)(uint8_t)((uint32_t)(x) >> (8 * (k))))

static inline int32_t utvm_dot4_acc_s8(int32_t acc, int32_t a, int32_t b) {
  return acc + UTVM_LANE_S8(a, 0) * UTVM_LANE_S8(b, 0) + UTVM_LANE_S8(a, 1) * UTVM_LANE_S8(b, 1) +
         UTVM_LANE_S8(a, 2) * UTVM_LANE_S8(b, 2) + UTVM_LANE_S8(a, 3) * UTVM_LANE_S8(b, 3);
}

static inline int32_t utvm_srdhm_small(int32_t a, int32_t m) {
  /* (a * m + 2**30) >> 31 with an arithmetic shift rounds as gemmlowp does (half up) */
  return (int32_t)(((int64_t)a * m + ((int64_t)1 << 30)) >> 31);
}

#endif

static inline int32_t utvm_dot4_s8(int32_t a, int32_t b) { return utvm_dot4_acc_s8(0, a, b); }

/* x clamped to [-128, 127] (SSAT on Armv7-M and later) */
static inline int32_t utvm_sat_s8(int32_t x) {
#if defined(__ARM_FEATURE_SAT) && __ARM_FEATURE_SAT
  return __ssat(x, 8);
#else
  return x < -128 ? -128 : (x > 127 ? 127 : x);
#endif
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

#endif /* UTVM_KERNELS_H_ */
