/* utvm/kernels/mac_dsp.h: moved from kernels.h by the split of issue 24 (one header per
 * operator family and instruction set, the bodies unchanged). */
#ifndef UTVM_KERNELS_MAC_DSP_H_
#define UTVM_KERNELS_MAC_DSP_H_

#include "common.h"


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

static inline int32_t utvm_dot4w_acc_s8(int32_t acc, int32_t x, int32_t we, int32_t wo) {
  acc = __smlad(__sxtb16(x), we, acc);
  return __smlad(utvm_sxtb16_ror8(x), wo, acc);
}

/* the four rows of a step (utvm_mac4_s8, utvm_mac4_s16): from the input halves xe, xv and the
 * weight words of rows 0 and 1 (w0, w1), the four rows' SXTB16 and SMLADs */
#define UTVM_MAC4_ROWS                           \
  "sxtb16 %[t], %[w0]\n\t"                       \
  "sxtb16 %[w0], %[w0], ror #8\n\t"              \
  "smlad %[a0], %[xe], %[t], %[a0]\n\t"          \
  "smlad %[a0], %[xv], %[w0], %[a0]\n\t"         \
  "sxtb16 %[t], %[w1]\n\t"                       \
  "sxtb16 %[w1], %[w1], ror #8\n\t"              \
  "smlad %[a1], %[xe], %[t], %[a1]\n\t"          \
  "smlad %[a1], %[xv], %[w1], %[a1]\n\t"         \
  "ldrd %[w0], %[w1], [%[w]], #8\n\t"            \
  "sxtb16 %[t], %[w0]\n\t"                       \
  "sxtb16 %[w0], %[w0], ror #8\n\t"              \
  "smlad %[a2], %[xe], %[t], %[a2]\n\t"          \
  "smlad %[a2], %[xv], %[w0], %[a2]\n\t"         \
  "sxtb16 %[t], %[w1]\n\t"                       \
  "sxtb16 %[w1], %[w1], ror #8\n\t"              \
  "smlad %[a3], %[xe], %[t], %[a3]\n\t"          \
  "smlad %[a3], %[xv], %[w1], %[a3]\n\t"

/* one step of utvm_mac4_s8: input word k, weight words 4k..4k+3 */
#define UTVM_MAC4_STEP                           \
  "ldr %[xv], [%[x]], #4\n\t"                    \
  "ldrd %[w0], %[w1], [%[w]], #8\n\t"            \
  "sxtb16 %[xe], %[xv]\n\t"                      \
  "sxtb16 %[xv], %[xv], ror #8\n\t"              \
  UTVM_MAC4_ROWS

#define UTVM_MAC4_OPERANDS                                                                   \
  : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "+r"(x), [w] "+r"(w),     \
    [n] "+r"(n), [xv] "=&r"(xv), [xe] "=&r"(xe), [w0] "=&r"(w0), [w1] "=&r"(w1), [t] "=&r"(t) \
  :                                                                                          \
  : "cc", "memory"

/* the same without the loop counter (one step, no loop) */
#define UTVM_MAC4_STEP_OPERANDS                                                                \
  : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "+r"(x), [w] "+r"(w),     \
    [xv] "=&r"(xv), [xe] "=&r"(xe), [w0] "=&r"(w0), [w1] "=&r"(w1), [t] "=&r"(t)             \
  :                                                                                          \
  : "memory"

/* the four accumulators of a channel block back to memory */
#define UTVM_ACC4_STORE(acc) \
  do { \
    (acc)[0] = a0; \
    (acc)[1] = a1; \
    (acc)[2] = a2; \
    (acc)[3] = a3; \
  } while (0)

/* the body of utvm_mac4_s8 and utvm_mac4w_s8 around their step: straight-line steps for a few
 * words known at compile time (no loop counter), else one step for an odd count and a loop of
 * two steps */
#define UTVM_MAC4_LOOP(STEP)                                              \
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];             \
  int32_t xv, xe, w0, w1, t;                                              \
  if (__builtin_constant_p(n) && n <= 2) {                                \
    if (n >= 1) __asm__(STEP UTVM_MAC4_STEP_OPERANDS);                    \
    if (n >= 2) __asm__(STEP UTVM_MAC4_STEP_OPERANDS);                    \
    n = 0;                                                                \
  }                                                                       \
  if (n & 1) {                                                            \
    __asm__(STEP UTVM_MAC4_STEP_OPERANDS);                                \
  }                                                                       \
  n >>= 1;                                                                \
  if (n > 0) {                                                            \
    __asm__("1:\n\t" STEP STEP "subs %[n], %[n], #1\n\tbne 1b\n\t" UTVM_MAC4_OPERANDS); \
  }                                                                       \
  UTVM_ACC4_STORE(acc);                                                   \
  return 0

UTVM_INLINE int32_t utvm_mac4_s8(int32_t* acc, int32_t* x, int32_t* w,
                                                                  int32_t n) {
  UTVM_MAC4_LOOP(UTVM_MAC4_STEP);
}

/* the four rows of a widened-weight step (utvm_mac4w_s8, utvm_mac4w_s16): from the input halves
 * xe, xv and the first two weight words of row 0, the four rows' SMLADs */
#define UTVM_MAC4W_ROWS                          \
  "smlad %[a0], %[xe], %[w0], %[a0]\n\t"         \
  "smlad %[a0], %[xv], %[w1], %[a0]\n\t"         \
  "ldrd %[w0], %[w1], [%[w]], #8\n\t"            \
  "smlad %[a1], %[xe], %[w0], %[a1]\n\t"         \
  "smlad %[a1], %[xv], %[w1], %[a1]\n\t"         \
  "ldrd %[w0], %[w1], [%[w]], #8\n\t"            \
  "smlad %[a2], %[xe], %[w0], %[a2]\n\t"         \
  "smlad %[a2], %[xv], %[w1], %[a2]\n\t"         \
  "ldrd %[w0], %[w1], [%[w]], #8\n\t"            \
  "smlad %[a3], %[xe], %[w0], %[a3]\n\t"         \
  "smlad %[a3], %[xv], %[w1], %[a3]\n\t"

/* one step of utvm_mac4w_s8: input word k, the eight widened weight words of the four rows */
#define UTVM_MAC4W_STEP                          \
  "ldr %[xv], [%[x]], #4\n\t"                    \
  "ldrd %[w0], %[w1], [%[w]], #8\n\t"            \
  "sxtb16 %[xe], %[xv]\n\t"                      \
  "sxtb16 %[xv], %[xv], ror #8\n\t"              \
  UTVM_MAC4W_ROWS

UTVM_INLINE int32_t utvm_mac4w_s8(int32_t* acc, int32_t* x, int32_t* w,
                                                                   int32_t n) {
  UTVM_MAC4_LOOP(UTVM_MAC4W_STEP);
}

UTVM_INLINE int32_t utvm_mac4_u_s8(int32_t* acc, int8_t* x, int8_t* w,
                                                                    int32_t n) {
  /* the assembly reads x with LDR only, which allows any alignment on Armv7-M and later */
  return utvm_mac4_s8(acc, (int32_t*)(void*)x, (int32_t*)(void*)w, n);
}

static inline int32_t utvm_mac4_lane_s8(int32_t* acc, int32_t x, int8_t* w) {
  int32_t wv, we, wo;
  __builtin_memcpy(&wv, w, 4);
  we = __sxtb16(wv);
  wo = utvm_sxtb16_ror8(wv);
  acc[0] = __smlabb(x, we, acc[0]);
  acc[1] = __smlabb(x, wo, acc[1]);
  acc[2] = __smlabt(x, we, acc[2]);
  acc[3] = __smlabt(x, wo, acc[3]);
  return 0;
}

static inline int32_t utvm_dw4_pair_s8(int32_t* acc, int32_t xa, int32_t xb, int8_t* w) {
  int32_t lo, hi, wlo, whi;
  __builtin_memcpy(&wlo, w, 4);
  __builtin_memcpy(&whi, w + 4, 4);
  /* lo = (a0, a1, b0, b1), hi = (a2, a3, b2, b3): the same lanes of both taps side by side */
  __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(lo) : "r"(xa), "r"(xb));
  __asm__("pkhtb %0, %1, %2, asr #16" : "=r"(hi) : "r"(xb), "r"(xa));
  acc[0] = __smlad(__sxtb16(lo), __sxtb16(wlo), acc[0]);
  acc[1] = __smlad(utvm_sxtb16_ror8(lo), utvm_sxtb16_ror8(wlo), acc[1]);
  acc[2] = __smlad(__sxtb16(hi), __sxtb16(whi), acc[2]);
  acc[3] = __smlad(utvm_sxtb16_ror8(hi), utvm_sxtb16_ror8(whi), acc[3]);
  return 0;
}

typedef int32_t __attribute__((may_alias)) utvm_word_t;
typedef int64_t __attribute__((may_alias, aligned(4))) utvm_dword_t;
typedef int32_t __attribute__((may_alias, aligned(1))) utvm_uword_t;

/* utvm_dw4_pair_s8 with the two input words read from xa and xb (an interior pixel): the
 * loads inside the assembly, so that the compiler does not hoist them all and spill */
UTVM_INLINE int32_t utvm_dw4_pair_at_s8(int32_t* acc, int32_t* xa, int32_t* xb,
                                                                         int8_t* w) {
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  int32_t va, vb, lo, wl, wh, t;
  __asm__(
      "ldr %[va], %[ma]\n\t"
      "ldr %[vb], %[mb]\n\t"
      "ldrd %[wl], %[wh], %[mw]\n\t"
      "pkhbt %[lo], %[va], %[vb], lsl #16\n\t"
      "pkhtb %[vb], %[vb], %[va], asr #16\n\t"
      "sxtb16 %[va], %[lo]\n\t"
      "sxtb16 %[t], %[wl]\n\t"
      "smlad %[a0], %[va], %[t], %[a0]\n\t"
      "sxtb16 %[lo], %[lo], ror #8\n\t"
      "sxtb16 %[wl], %[wl], ror #8\n\t"
      "smlad %[a1], %[lo], %[wl], %[a1]\n\t"
      "sxtb16 %[va], %[vb]\n\t"
      "sxtb16 %[t], %[wh]\n\t"
      "smlad %[a2], %[va], %[t], %[a2]\n\t"
      "sxtb16 %[vb], %[vb], ror #8\n\t"
      "sxtb16 %[wh], %[wh], ror #8\n\t"
      "smlad %[a3], %[vb], %[wh], %[a3]\n\t"
      : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [va] "=&r"(va), [vb] "=&r"(vb),
        [lo] "=&r"(lo), [wl] "=&r"(wl), [wh] "=&r"(wh), [t] "=&r"(t)
      : [ma] "m"(*(const utvm_word_t*)xa), [mb] "m"(*(const utvm_word_t*)xb),
        [mw] "m"(*(const utvm_dword_t*)w));
  UTVM_ACC4_STORE(acc);
  return 0;
}

/* utvm_dw4_tap_s8 with the input word read from x */
UTVM_INLINE int32_t utvm_dw4_tap_at_s8(int32_t* acc, int32_t* x, int8_t* w) {
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  int32_t v, wv, e, f;
  __asm__(
      "ldr %[v], %[mx]\n\t"
      "ldr %[wv], %[mw]\n\t"
      "sxtb16 %[e], %[v]\n\t"
      "sxtb16 %[f], %[wv]\n\t"
      "smlabb %[a0], %[e], %[f], %[a0]\n\t"
      "smlatt %[a2], %[e], %[f], %[a2]\n\t"
      "sxtb16 %[v], %[v], ror #8\n\t"
      "sxtb16 %[wv], %[wv], ror #8\n\t"
      "smlabb %[a1], %[v], %[wv], %[a1]\n\t"
      "smlatt %[a3], %[v], %[wv], %[a3]\n\t"
      : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [v] "=&r"(v), [wv] "=&r"(wv), [e] "=&r"(e),
        [f] "=&r"(f)
      : [mx] "m"(*(const utvm_word_t*)x), [mw] "m"(*(const utvm_word_t*)w));
  UTVM_ACC4_STORE(acc);
  return 0;
}

/* the four channels of one input word: weight words w[0..3] (one per output channel) */
#define UTVM_MAC4_WORD_ASM                       \
  "sxtb16 %[xe], %[xv]\n\t"                      \
  "sxtb16 %[xv], %[xv], ror #8\n\t"              \
  "ldrd %[w0], %[w1], %[m01]\n\t"                \
  "sxtb16 %[t], %[w0]\n\t"                       \
  "sxtb16 %[w0], %[w0], ror #8\n\t"              \
  "smlad %[a0], %[xe], %[t], %[a0]\n\t"          \
  "smlad %[a0], %[xv], %[w0], %[a0]\n\t"         \
  "sxtb16 %[t], %[w1]\n\t"                       \
  "sxtb16 %[w1], %[w1], ror #8\n\t"              \
  "smlad %[a1], %[xe], %[t], %[a1]\n\t"          \
  "smlad %[a1], %[xv], %[w1], %[a1]\n\t"         \
  "ldrd %[w0], %[w1], %[m23]\n\t"                \
  "sxtb16 %[t], %[w0]\n\t"                       \
  "sxtb16 %[w0], %[w0], ror #8\n\t"              \
  "smlad %[a2], %[xe], %[t], %[a2]\n\t"          \
  "smlad %[a2], %[xv], %[w0], %[a2]\n\t"         \
  "sxtb16 %[t], %[w1]\n\t"                       \
  "sxtb16 %[w1], %[w1], ror #8\n\t"              \
  "smlad %[a3], %[xe], %[t], %[a3]\n\t"          \
  "smlad %[a3], %[xv], %[w1], %[a3]\n\t"

#define UTVM_MAC4_WORD_OPERANDS                                                                        \
  [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [xv] "=&r"(xv), [xe] "=&r"(xe), [w0] "=&r"(w0), \
      [w1] "=&r"(w1), [t] "=&r"(t)

/* the body of the one-word helpers: the input word into xv by ``first`` (from operand
 * ``input``), then ``steps`` with the weight operands ``weights`` */
#define UTVM_MAC4_WORD_BODY(first, input, steps, weights)                        \
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];                    \
  int32_t xv, xe, w0, w1, t;                                                     \
  __asm__(first steps : UTVM_MAC4_WORD_OPERANDS : input, weights);               \
  (void)t;                                                                       \
  UTVM_ACC4_STORE(acc);                                                          \
  return 0

#define UTVM_MAC4_WORD_WEIGHTS(w) \
  [m01] "m"(*(const utvm_dword_t*)(w)), [m23] "m"(*(const utvm_dword_t*)((w) + 8))

UTVM_INLINE int32_t utvm_mac4_word_s8(int32_t* acc, int32_t x, int8_t* w) {
  UTVM_MAC4_WORD_BODY("mov %[xv], %[x]\n\t", [x] "r"(x), UTVM_MAC4_WORD_ASM, UTVM_MAC4_WORD_WEIGHTS(w));
}

UTVM_INLINE int32_t utvm_mac4_word_at_s8(int32_t* acc, int8_t* x, int8_t* w) {
  UTVM_MAC4_WORD_BODY("ldr %[xv], %[mx]\n\t", [mx] "m"(*(const utvm_uword_t*)x), UTVM_MAC4_WORD_ASM,
                      UTVM_MAC4_WORD_WEIGHTS(w));
}

/* utvm_mac4_word_s8 on widened weights: eight words, (weight 0, weight 2) and (weight 1, weight 3)
 * as int16 pairs per channel */
#define UTVM_MAC4W_WORD_ASM                      \
  "sxtb16 %[xe], %[xv]\n\t"                      \
  "sxtb16 %[xv], %[xv], ror #8\n\t"              \
  "ldrd %[w0], %[w1], %[m0]\n\t"                 \
  "smlad %[a0], %[xe], %[w0], %[a0]\n\t"         \
  "smlad %[a0], %[xv], %[w1], %[a0]\n\t"         \
  "ldrd %[w0], %[w1], %[m1]\n\t"                 \
  "smlad %[a1], %[xe], %[w0], %[a1]\n\t"         \
  "smlad %[a1], %[xv], %[w1], %[a1]\n\t"         \
  "ldrd %[w0], %[w1], %[m2]\n\t"                 \
  "smlad %[a2], %[xe], %[w0], %[a2]\n\t"         \
  "smlad %[a2], %[xv], %[w1], %[a2]\n\t"         \
  "ldrd %[w0], %[w1], %[m3]\n\t"                 \
  "smlad %[a3], %[xe], %[w0], %[a3]\n\t"         \
  "smlad %[a3], %[xv], %[w1], %[a3]\n\t"

#define UTVM_MAC4W_WORD_WEIGHTS(w)                                                             \
  [m0] "m"(*(const utvm_dword_t*)(w)), [m1] "m"(*(const utvm_dword_t*)((w) + 2)),           \
      [m2] "m"(*(const utvm_dword_t*)((w) + 4)), [m3] "m"(*(const utvm_dword_t*)((w) + 6))

UTVM_INLINE int32_t utvm_mac4w_word_s8(int32_t* acc, int32_t x, int32_t* w) {
  UTVM_MAC4_WORD_BODY("mov %[xv], %[x]\n\t", [x] "r"(x), UTVM_MAC4W_WORD_ASM, UTVM_MAC4W_WORD_WEIGHTS(w));
}

UTVM_INLINE int32_t utvm_mac4w_word_at_s8(int32_t* acc, int8_t* x, int32_t* w) {
  UTVM_MAC4_WORD_BODY("ldr %[xv], %[mx]\n\t", [mx] "m"(*(const utvm_uword_t*)x), UTVM_MAC4W_WORD_ASM,
                      UTVM_MAC4W_WORD_WEIGHTS(w));
}

static inline int32_t utvm_dw4_tap_s8(int32_t* acc, int32_t x, int8_t* w) {
  int32_t wv, xe, xo, we, wo;
  __builtin_memcpy(&wv, w, 4);
  xe = __sxtb16(x);
  xo = utvm_sxtb16_ror8(x);
  we = __sxtb16(wv);
  wo = utvm_sxtb16_ror8(wv);
  acc[0] = __smlabb(xe, we, acc[0]);
  acc[1] = __smlabb(xo, wo, acc[1]);
  acc[2] = __smlatt(xe, we, acc[2]);
  acc[3] = __smlatt(xo, wo, acc[3]);
  return 0;
}
#endif

#endif /* UTVM_KERNELS_MAC_DSP_H_ */
