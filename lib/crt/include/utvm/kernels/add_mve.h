/* utvm/kernels/add_mve.h: moved from kernels_mve.h by the split of issue 24 (one header per
 * operator family and instruction set, the bodies unchanged). */
#ifndef UTVM_KERNELS_ADD_MVE_H_
#define UTVM_KERNELS_ADD_MVE_H_

#include "common_mve.h"
#include "requant_mve.h"


/* int8 ADD (TFLite's reference/integer_ops/add.h, double rounding), per element:
 *   va = MultiplyByQuantizedMultiplierSmallerThanOneExp((a - za) << 20, ma, sha), vb likewise,
 *   y = clamp(MultiplyByQuantizedMultiplier(va + vb, my, shy) + zy, lo, hi)
 * (ma, mb from scale / (2 * max(scale_a, scale_b)): sha, shb <= 0). */
#define UTVM_MVE_ADD_LEFT_SHIFT 20

typedef struct {
  int32_t za, ma, sha, zb, mb, shb, my, shy, zy, lo, hi;
} utvm_mve_add_t;

/* one element (plain C) */
static inline int8_t utvm_mve_add1(int32_t a, int32_t b, const utvm_mve_add_t* p) {
  int32_t va = utvm_mve_mbqm((a - p->za) * (1 << UTVM_MVE_ADD_LEFT_SHIFT), p->ma, p->sha);
  int32_t vb = utvm_mve_mbqm((b - p->zb) * (1 << UTVM_MVE_ADD_LEFT_SHIFT), p->mb, p->shb);
  return utvm_mve_clamp_s8(utvm_mve_mbqm(va + vb, p->my, p->shy) + p->zy, p->lo, p->hi);
}

#ifdef UTVM_MVE_VECTOR
/* The vector form. The input of the larger scale has multiplier 2**30 and shift 0 (scale / (2 *
 * scale) = 0.5): its scaled value is exactly (v - z) << 19, a multiply-accumulate onto the other
 * one (the "small" input: VMLAS, VQRDMULH, rounding right shift; with multiplier 2**30 and shift
 * 0 as well, done as << 21, times 2**30, >> 1: exact). */
typedef struct {
  int32x4_t pow, pow_big;        /* 2**left of the small input, 2**19 */
  int32x4_t lo, hi;              /* the clamp bounds */
  int32_t off, m, r;             /* small input: -z * 2**left, multiplier, -right shift */
  int32_t off_big;               /* -z << 19 of the larger-scale input */
  int32_t my, ry, zy;            /* output multiplier, shift (< 0), zero point */
} utvm_mve_addv_t;

/* SRDHM(x, m) rounded right by -r (r = -1..-31) as gemmlowp: VQRDMULH accumulated onto -1 for
 * the negative x (VQRDMLAH; ties away from zero), then VRSHL (ties up). A negative x gives a
 * product <= 0, and 0 - 1 still rounds to 0. */
static inline int32x4_t utvm_mve_add_scale4(int32x4_t x, int32_t m, int32_t r) {
  return vrshlq_n_s32(vqrdmlahq_n_s32(vshrq_n_s32(x, 31), x, m), r);
}

/* four outputs from four (widened) values of the small and of the larger-scale input */
static inline int32x4_t utvm_mve_add4(int32x4_t small, int32x4_t big, const utvm_mve_addv_t* k) {
  int32x4_t v = utvm_mve_add_scale4(vmlasq_n_s32(small, k->pow, k->off), k->m, k->r);
  v = vaddq_s32(v, vmlasq_n_s32(big, k->pow_big, k->off_big));
  v = vaddq_n_s32(utvm_mve_add_scale4(v, k->my, k->ry), k->zy);
  return vminq_s32(vmaxq_s32(v, k->lo), k->hi);
}

/* the constants of the vector form, 0 when it cannot do the layer (the plain C loop does) */
static inline int32_t utvm_mve_add_setup(utvm_mve_addv_t* k, int32_t zs, int32_t ms, int32_t shs, int32_t zbig,
                                         const utvm_mve_add_t* p) {
  int32_t left = UTVM_MVE_ADD_LEFT_SHIFT, right = -shs;
  if (shs == 0 && ms == (1 << 30)) {
    left = UTVM_MVE_ADD_LEFT_SHIFT + 1;
    right = 1;
  }
  if (ms < 0 || right < 1 || right > 31 || p->my < 0 || p->shy > -1 || p->shy < -31) return 0;
  k->pow = vdupq_n_s32(1 << left);
  k->pow_big = vdupq_n_s32(1 << (UTVM_MVE_ADD_LEFT_SHIFT - 1));
  k->lo = vdupq_n_s32(p->lo);
  k->hi = vdupq_n_s32(p->hi);
  k->off = -zs * (1 << left);
  k->m = ms;
  k->r = -right;
  k->off_big = -zbig * (1 << (UTVM_MVE_ADD_LEFT_SHIFT - 1));
  k->my = p->my;
  k->ry = p->shy;
  k->zy = p->zy;
  return 1;
}
#endif

/* out[i] = a[i] + b[i] (i < n), requantized as above */
static inline void utvm_mve_add_impl(int8_t* out, const int8_t* a, const int8_t* b, int32_t n,
                                     const utvm_mve_add_t* p) {
#ifdef UTVM_MVE_VECTOR
  utvm_mve_addv_t k;
  int32_t a_big = p->ma == (1 << 30) && p->sha == 0;
  int32_t ready = a_big ? utvm_mve_add_setup(&k, p->zb, p->mb, p->shb, p->za, p)
                        : p->mb == (1 << 30) && p->shb == 0 && utvm_mve_add_setup(&k, p->za, p->ma, p->sha, p->zb, p);
  if (ready) {
    const int8_t* s = a_big ? b : a;
    const int8_t* g = a_big ? a : b;
    /* 16 elements per step; the pointers stepped after each access (post-increment) */
    for (; n >= 16; n -= 16) {
      for (int32_t j = 0; j < 4; ++j, s += 4, g += 4, out += 4) {
        vstrbq_s32(out, utvm_mve_add4(vldrbq_s32(s), vldrbq_s32(g), &k));
      }
    }
    for (; n > 0; n -= 4, s += 4, g += 4, out += 4) {
      mve_pred16_t pr = vctp32q((uint32_t)n);
      vstrbq_p_s32(out, utvm_mve_add4(vldrbq_z_s32(s, pr), vldrbq_z_s32(g, pr), &k), pr);
    }
    return;
  }
#endif
  for (int32_t i = 0; i < n; ++i) out[i] = utvm_mve_add1(a[i], b[i], p);
}

/* a + b of n int8 elements; za, zb, zy: zero points; ma, sha, mb, shb, my, shy: TFLite's
 * input and output multipliers and shifts; lo, hi: activation range */
static inline int32_t utvm_mve_add_s8(void* out, void* a, void* b, int32_t n, int32_t za, int32_t ma, int32_t sha,
                                      int32_t zb, int32_t mb, int32_t shb, int32_t my, int32_t shy, int32_t zy,
                                      int32_t lo, int32_t hi) {
  utvm_mve_add_t p = {za, ma, sha, zb, mb, shb, my, shy, zy, lo, hi};
  utvm_mve_add_impl((int8_t*)out, (const int8_t*)a, (const int8_t*)b, n, &p);
  return 0;
}

#endif /* UTVM_KERNELS_ADD_MVE_H_ */
