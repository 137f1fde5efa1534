/* utvm/kernels/requant_mve.h: moved from kernels_mve.h by the split of issue 24 (one header per
 * operator family and instruction set, the bodies unchanged). */
#ifndef UTVM_KERNELS_REQUANT_MVE_H_
#define UTVM_KERNELS_REQUANT_MVE_H_

#include "common_mve.h"


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

#endif /* UTVM_KERNELS_REQUANT_MVE_H_ */
