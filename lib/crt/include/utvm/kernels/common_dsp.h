/* utvm/kernels/common_dsp.h: moved from kernels_dsp.h by the split of issue 24 (one header per
 * operator family and instruction set, the bodies unchanged). */
#ifndef UTVM_KERNELS_COMMON_DSP_H_
#define UTVM_KERNELS_COMMON_DSP_H_

#include <stdint.h>

#include "common.h" /* UTVM_INLINE */

#if defined(__ARM_FEATURE_SIMD32) && __ARM_FEATURE_SIMD32 && defined(__thumb2__)
#include <arm_acle.h>
#define UTVM_DSP_ASM 1
#endif

/* int16 pairs of the lanes of a word: (lane 0, lane 2), (lane 1, lane 3); both halves doubled */
#ifdef UTVM_DSP_ASM
static inline int32_t utvm_dsp_even(int32_t v) { return __sxtb16(v); }
static inline int32_t utvm_dsp_odd(int32_t v) {
  int32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
  return r;
}
static inline int32_t utvm_dsp_dbl(int32_t v) { return __sadd16(v, v); }
#else
static inline int32_t utvm_dsp_pair(int32_t lo, int32_t hi) {
  return (int32_t)(((uint32_t)hi << 16) | ((uint32_t)lo & 0xFFFFu));
}
static inline int32_t utvm_dsp_lane(int32_t v, int k) { return (int32_t)(int8_t)(uint8_t)((uint32_t)v >> (8 * k)); }
static inline int32_t utvm_dsp_even(int32_t v) { return utvm_dsp_pair(utvm_dsp_lane(v, 0), utvm_dsp_lane(v, 2)); }
static inline int32_t utvm_dsp_odd(int32_t v) { return utvm_dsp_pair(utvm_dsp_lane(v, 1), utvm_dsp_lane(v, 3)); }
static inline int32_t utvm_dsp_dbl(int32_t v) {
  return utvm_dsp_pair(2 * (int32_t)(int16_t)(uint16_t)(uint32_t)v, 2 * (v >> 16));
}
#endif

static inline int32_t utvm_dsp_half_lo(int32_t w) { return (int32_t)(int16_t)(uint16_t)(uint32_t)w; }
static inline int32_t utvm_dsp_half_hi(int32_t w) { return w >> 16; }

static inline int32_t utvm_dsp_load(const int8_t* p) {
  int32_t v;
  __builtin_memcpy(&v, p, 4);
  return v;
}

/* one quad (the four int8 lanes of v) as int16 pairs at dst[0], dst[1], doubled if dbl */
static inline void utvm_dsp_put(int32_t* dst, int32_t v, int32_t dbl) {
  int32_t e = utvm_dsp_even(v), o = utvm_dsp_odd(v);
  if (dbl) {
    e = utvm_dsp_dbl(e);
    o = utvm_dsp_dbl(o);
  }
  dst[0] = e;
  dst[1] = o;
}

/* one requantized output (plain C: the assembly's arithmetic); q = (m, c, e); with a lower clamp
 * (lo > -128) c holds zy - lo: max(t, 0) + lo */
static inline int32_t utvm_dsp_requant(int32_t acc, const int32_t* q, int32_t lo, int32_t hi) {
  int64_t p = (int64_t)acc * q[0] + ((int64_t)1 << 31);
  int32_t t = (int32_t)(p >> 32) + q[1];
  t += acc >> 31;
  t >>= (q[2] & 31);
  if (lo > -128) t = (t < 0 ? 0 : t) + lo;
  t = t < -128 ? -128 : (t > 127 ? 127 : t);
  return t > hi ? hi : t;
}

#endif /* UTVM_KERNELS_COMMON_DSP_H_ */
