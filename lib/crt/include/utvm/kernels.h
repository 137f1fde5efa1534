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
 * - utvm_mac4_s8(acc, x, w, n): acc[c] += the dot product of the n words at x with row c of
 *   the weights, for the four rows c = 0..3 stored interleaved word by word (w[4 * k + c] is
 *   word k of row c). Each input word is loaded and sign-extended once for the four rows;
 *   with the DSP extension an assembly loop (LDRD for two weight words, 21 instructions for
 *   16 multiply-accumulates; straight-line for n <= 2 known at compile time). Returns 0.
 * - utvm_mac4_pad_s8(acc, inside, x, z, w, n): the same on x, or on the n words at z (the
 *   packed input zero point) when inside is 0 (a kernel tap in the padding).
 * - utvm_mac4w_s8(acc, x, w, n), utvm_mac4w_pad_s8(acc, inside, x, z, w, n): the same with the
 *   weights widened to int16 ahead of time (twice the bytes): per input word k and row c two
 *   words, w[8k + 2c] = (weight 0, weight 2) and w[8k + 2c + 1] = (weight 1, weight 3) as int16
 *   halves, the pairs SMLAD takes once the input word is split by SXTB16; with the DSP
 *   extension 15 instructions for 16 multiply-accumulates. utvm_dot4w_s8(x, we, wo),
 *   utvm_dot4w_acc_s8(acc, x, we, wo): the dot product of one input word with one such pair of
 *   weight words (two SXTB16 and two SMLAD). utvm_mac4w_word_s8(acc, x, w) and
 *   utvm_mac4w_word_at_s8(acc, p, w): utvm_mac4_word_s8 / utvm_mac4_word_at_s8 on the eight
 *   widened words of the four channels.
 * - utvm_mac4_u_s8(acc, x, w, n): utvm_mac4_s8 on the 4n bytes at x, any alignment (the weights
 *   aligned), e.g. a kernel row of a convolution with three input channels.
 * - utvm_mac4_lane_s8(acc, x, w): acc[c] += x * w[c], c = 0..3, for one int8 value x (the weight
 *   word w holds one weight per output channel).
 *
 *
 * Depthwise convolutions, four channels per int32 word (channel c in lane c):
 *
 * - utvm_dw4_pair_s8(acc, xa, xb, w): acc[c] += lane c of xa * weight c of tap a + lane c of
 *   xb * weight c of tap b, for two kernel taps a and b. The eight weights are two words
 *   reordered so that one SMLAD serves a channel for both taps: w[0] = (a0, a1, b0, b1),
 *   w[1] = (a2, a3, b2, b3) as int8 lanes.
 * - utvm_dw4_tap_s8(acc, x, w): acc[c] += lane c of x * lane c of the weight word w[0] (an odd
 *   last tap).
 * - utvm_dw4_pair_at_s8(acc, pa, pb, w), utvm_dw4_tap_at_s8(acc, p, w): the same with the input
 *   words read from pa, pb, p (inside the assembly with DSP: the compiler cannot hoist the
 *   loads of all taps and run out of registers).
 *
 * - utvm_mac4_word_s8(acc, x, w), utvm_mac4_word_at_s8(acc, p, w): acc[c] += the dot product of
 *   the word x (or the four bytes at p, any alignment) with the weight word c at w, c = 0..3
 *   (a convolution with one input channel and four taps per kernel row).
 * - utvm_ldw_s8(p): the four bytes at p as a word (any alignment).
 *
 * Requantization (gemmlowp / TFLite arithmetic, bit-exact):
 *
 * - utvm_srdhm_small(a, m): SaturatingRoundingDoublingHighMul(a, m) for |a| < 2**30 (then
 *   2a does not overflow and the rounded high word of 2a * m is the result: SMMULR with DSP).
 * - utvm_srdhm2_small(a, m2): the same from m2 = 2 * m mod 2**32, for 2**30 <= m < 2**31: as
 *   int32, m2 = 2m - 2**32, so the rounded high word of a * m2 plus a is the rounded high word
 *   of 2a * m (one SMMLAR with DSP, accumulating a itself).
 * - utvm_sat_s8(x), utvm_sat_s16(x): x clamped to the int8 or int16 range (SSAT).
 * - utvm_shl_s32(x, s): x * 2**s for 0 <= s <= 31, wrapping around as two's complement (one LSL):
 *   shifted as an unsigned value, since a left shift of a negative int32 (or one that overflows)
 *   is undefined behaviour in C.
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

/* lane k of the word x as a signed int8 value */
#define UTVM_LANE_S8(x, k) ((int32_t)(int8_t)(uint8_t)((uint32_t)(x) >> (8 * (k))))

/* the four bytes at p (any alignment) as one little-endian word */
static inline int32_t utvm_ldw_s8(int8_t* p) {
  int32_t v;
  __builtin_memcpy(&v, p, 4);
  return v;
}

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

static inline __attribute__((always_inline)) int32_t utvm_mac4_s8(int32_t* acc, int32_t* x, int32_t* w,
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

static inline __attribute__((always_inline)) int32_t utvm_mac4w_s8(int32_t* acc, int32_t* x, int32_t* w,
                                                                   int32_t n) {
  UTVM_MAC4_LOOP(UTVM_MAC4W_STEP);
}

static inline __attribute__((always_inline)) int32_t utvm_mac4_u_s8(int32_t* acc, int8_t* x, int8_t* w,
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
static inline __attribute__((always_inline)) int32_t utvm_dw4_pair_at_s8(int32_t* acc, int32_t* xa, int32_t* xb,
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
static inline __attribute__((always_inline)) int32_t utvm_dw4_tap_at_s8(int32_t* acc, int32_t* x, int8_t* w) {
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

static inline __attribute__((always_inline)) int32_t utvm_mac4_word_s8(int32_t* acc, int32_t x, int8_t* w) {
  UTVM_MAC4_WORD_BODY("mov %[xv], %[x]\n\t", [x] "r"(x), UTVM_MAC4_WORD_ASM, UTVM_MAC4_WORD_WEIGHTS(w));
}

static inline __attribute__((always_inline)) int32_t utvm_mac4_word_at_s8(int32_t* acc, int8_t* x, int8_t* w) {
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

static inline __attribute__((always_inline)) int32_t utvm_mac4w_word_s8(int32_t* acc, int32_t x, int32_t* w) {
  UTVM_MAC4_WORD_BODY("mov %[xv], %[x]\n\t", [x] "r"(x), UTVM_MAC4W_WORD_ASM, UTVM_MAC4W_WORD_WEIGHTS(w));
}

static inline __attribute__((always_inline)) int32_t utvm_mac4w_word_at_s8(int32_t* acc, int8_t* x, int32_t* w) {
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

#else

static inline int32_t utvm_dot4_acc_s8(int32_t acc, int32_t a, int32_t b) {
  return acc + UTVM_LANE_S8(a, 0) * UTVM_LANE_S8(b, 0) + UTVM_LANE_S8(a, 1) * UTVM_LANE_S8(b, 1) +
         UTVM_LANE_S8(a, 2) * UTVM_LANE_S8(b, 2) + UTVM_LANE_S8(a, 3) * UTVM_LANE_S8(b, 3);
}

/* lanes 0 and 2 of x times the int16 halves of we, lanes 1 and 3 times those of wo */
static inline int32_t utvm_dot4w_acc_s8(int32_t acc, int32_t x, int32_t we, int32_t wo) {
  return acc + UTVM_LANE_S8(x, 0) * (int32_t)(int16_t)(uint16_t)(uint32_t)we + UTVM_LANE_S8(x, 2) * (we >> 16) +
         UTVM_LANE_S8(x, 1) * (int32_t)(int16_t)(uint16_t)(uint32_t)wo + UTVM_LANE_S8(x, 3) * (wo >> 16);
}

static inline int32_t utvm_srdhm_small(int32_t a, int32_t m) {
  /* (a * m + 2**30) >> 31 with an arithmetic shift rounds as gemmlowp does (half up) */
  return (int32_t)(((int64_t)a * m + ((int64_t)1 << 30)) >> 31);
}

static inline int32_t utvm_srdhm2_small(int32_t a, int32_t m2) {
  return utvm_srdhm_small(a, (int32_t)((uint32_t)m2 >> 1));
}

#endif

static inline int32_t utvm_dot4_s8(int32_t a, int32_t b) { return utvm_dot4_acc_s8(0, a, b); }

static inline int32_t utvm_dot4w_s8(int32_t x, int32_t we, int32_t wo) { return utvm_dot4w_acc_s8(0, x, we, wo); }

#if !(defined(__ARM_FEATURE_SIMD32) && __ARM_FEATURE_SIMD32)
static inline int32_t utvm_dw4_pair_s8(int32_t* acc, int32_t xa, int32_t xb, int8_t* w) {
  int c;
  for (c = 0; c < 4; ++c) {
    int8_t* wc = w + 4 * (c >> 1) + (c & 1);
    acc[c] += UTVM_LANE_S8(xa, c) * wc[0] + UTVM_LANE_S8(xb, c) * wc[2];
  }
  return 0;
}

static inline int32_t utvm_dw4_tap_s8(int32_t* acc, int32_t x, int8_t* w) {
  int c;
  for (c = 0; c < 4; ++c) acc[c] += UTVM_LANE_S8(x, c) * w[c];
  return 0;
}

static inline int32_t utvm_dw4_pair_at_s8(int32_t* acc, int32_t* xa, int32_t* xb, int8_t* w) {
  return utvm_dw4_pair_s8(acc, *xa, *xb, w);
}

static inline int32_t utvm_dw4_tap_at_s8(int32_t* acc, int32_t* x, int8_t* w) { return utvm_dw4_tap_s8(acc, *x, w); }

static inline int32_t utvm_mac4_word_s8(int32_t* acc, int32_t x, int8_t* w) {
  int c, k;
  for (c = 0; c < 4; ++c)
    for (k = 0; k < 4; ++k) acc[c] += UTVM_LANE_S8(x, k) * w[4 * c + k];
  return 0;
}

static inline int32_t utvm_mac4_word_at_s8(int32_t* acc, int8_t* x, int8_t* w) {
  return utvm_mac4_word_s8(acc, utvm_ldw_s8(x), w);
}

static inline int32_t utvm_mac4w_word_s8(int32_t* acc, int32_t x, int32_t* w) {
  int c;
  for (c = 0; c < 4; ++c) acc[c] = utvm_dot4w_acc_s8(acc[c], x, w[2 * c], w[2 * c + 1]);
  return 0;
}

static inline int32_t utvm_mac4w_word_at_s8(int32_t* acc, int8_t* x, int32_t* w) {
  return utvm_mac4w_word_s8(acc, utvm_ldw_s8(x), w);
}

static inline int32_t utvm_mac4_s8(int32_t* acc, int32_t* x, int32_t* w, int32_t n) {
  int32_t k;
  for (k = 0; k < n; ++k) {
    acc[0] = utvm_dot4_acc_s8(acc[0], x[k], w[4 * k]);
    acc[1] = utvm_dot4_acc_s8(acc[1], x[k], w[4 * k + 1]);
    acc[2] = utvm_dot4_acc_s8(acc[2], x[k], w[4 * k + 2]);
    acc[3] = utvm_dot4_acc_s8(acc[3], x[k], w[4 * k + 3]);
  }
  return 0;
}
#endif

#if !(defined(__ARM_FEATURE_SIMD32) && __ARM_FEATURE_SIMD32)
static inline int32_t utvm_mac4w_s8(int32_t* acc, int32_t* x, int32_t* w, int32_t n) {
  int32_t k, c;
  for (k = 0; k < n; ++k)
    for (c = 0; c < 4; ++c) acc[c] += utvm_dot4w_s8(x[k], w[8 * k + 2 * c], w[8 * k + 2 * c + 1]);
  return 0;
}

static inline int32_t utvm_mac4_u_s8(int32_t* acc, int8_t* x, int8_t* w, int32_t n) {
  int32_t k, c;
  for (k = 0; k < n; ++k) {
    int32_t xv = utvm_ldw_s8(x + 4 * k);
    for (c = 0; c < 4; ++c) acc[c] = utvm_dot4_acc_s8(acc[c], xv, utvm_ldw_s8(w + 16 * k + 4 * c));
  }
  return 0;
}

static inline int32_t utvm_mac4_lane_s8(int32_t* acc, int32_t x, int8_t* w) {
  int c;
  for (c = 0; c < 4; ++c) acc[c] += x * w[c];
  return 0;
}
#endif

/* utvm_mac4_s8 on x when inside is nonzero, on z (the input zero point, n words) when the
 * kernel tap lies in the padding */
static inline int32_t utvm_mac4_pad_s8(int32_t* acc, int32_t inside, int32_t* x, int32_t* z, int32_t* w,
                                       int32_t n) {
  return utvm_mac4_s8(acc, inside ? x : z, w, n);
}

/* utvm_mac4w_s8 on x, or on z (the input zero point) for a kernel tap in the padding */
static inline int32_t utvm_mac4w_pad_s8(int32_t* acc, int32_t inside, int32_t* x, int32_t* z, int32_t* w,
                                        int32_t n) {
  return utvm_mac4w_s8(acc, inside ? x : z, w, n);
}

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

/*
 * 16x8 layers (int16 activations, int8 weights; utvm/lower/mac16.py lays the weights out).
 * The sums are int32: the kernels use these helpers where the bound of the sums known at compile
 * time (32768 x the weights' absolute sum) stays below 2**31, which makes TFLite Micro's int64
 * sums exact in int32.
 *
 * - utvm_mac4_s16(acc, x, w, len): acc[c] += the dot product of the len int16 values at x (any
 *   2-byte alignment) with weight row c, c = 0..3. The rows are stored four inputs at a time, one
 *   word per row: bytes (w[4k], w[4k+2], w[4k+1], w[4k+3]) of row c at w + 16k + 4c, which SXTB16
 *   turns into the int16 pairs (w[4k], w[4k+1]) and (w[4k+2], w[4k+3]) that SMLAD multiplies with
 *   two input words. Then the last len % 4 weights of each row widened to int16: for two of them a
 *   word (w[a], w[a+1]) per row, for an odd last one a word (w[last], 0) per row (16 bytes each).
 *   With the DSP extension 20 instructions for 16 multiply-accumulates.
 * - utvm_mac4w_s16(acc, x, w, len): the same with the weights widened to int16 ahead of time
 *   (twice the bytes): per four inputs and row two words (w[4k], w[4k+1]), (w[4k+2], w[4k+3]) at
 *   w + 32k + 8c, then the same tail; 14 instructions for 16 multiply-accumulates.
 * - utvm_mulhr_s32(x, m): (x * m + 2**31) >> 32, the rounded high word (SMMULR). TFLite's int64
 *   MultiplyByQuantizedMultiplier (x * reduced + 2**(t-1)) >> t of an x that fits in int32, with
 *   m = reduced << (32 - t) (16 <= t <= 32), is exactly this.
 * - utvm_dw4_pair_s16(acc, x, a, b, w): depthwise, four channels: acc[c] += xa[c] * wa[c] +
 *   xb[c] * wb[c] for the int16 values of two kernel taps at xa = x + a and xb = x + b (a, b:
 *   offsets known at compile time, so that the loads take immediate offsets), the weights widened
 *   to int16 pairs, w[c] = (wa[c], wb[c]) (PKHBT/PKHTB pair the taps per channel, one SMLAD
 *   each). utvm_dw4_tap_s16(acc, x, a, w): acc[c] += xa[c] * w[c], w the four weights as int16
 *   (two words). utvm_dw4_pair_pad_s16(acc, ina, xa, inb, xb, w) and utvm_dw4_tap_pad_s16(acc,
 *   in, x, w): the taps by address, those whose flag is 0 (in the padding) read as zeros.
 * - utvm_im2col_s16(col, x, h, w, c, iy0, ix0, kh, kw, dh): the kh x kw window of c int16 values
 *   per tap whose first tap is row iy0, column ix0 of x (h x w x c), rows dh apart, contiguous in
 *   col; the taps outside the input are zeros (a window at the border of a 16x8 convolution).
 */

/* the int16 value at p (2-byte aligned) and the word of two int16 values at p */
static inline int32_t utvm_ldh_s16(const int8_t* p) {
  int16_t v;
  __builtin_memcpy(&v, p, 2);
  return v;
}

static inline int32_t utvm_ldw_s16(const int16_t* p) {
  int32_t v;
  __builtin_memcpy(&v, p, 4);
  return v;
}

static const int16_t utvm_zeros_s16[4] = {0, 0, 0, 0};

#if defined(__ARM_FEATURE_SIMD32) && __ARM_FEATURE_SIMD32

/* one step of utvm_mac4_s16: four input values (two words, xe and xv), the four rows' weight
 * words (the operand names of UTVM_MAC4_LOOP) */
#define UTVM_MAC4_S16_STEP                      \
  "ldr %[xe], [%[x]], #4\n\t"                   \
  "ldr %[xv], [%[x]], #4\n\t"                   \
  "ldrd %[w0], %[w1], [%[w]], #8\n\t"           \
  UTVM_MAC4_ROWS

/* one step of utvm_mac4w_s16: four input values, the four rows' widened weights (two words each) */
#define UTVM_MAC4W_S16_STEP                     \
  "ldr %[xe], [%[x]], #4\n\t"                   \
  "ldr %[xv], [%[x]], #4\n\t"                   \
  "ldrd %[w0], %[w1], [%[w]], #8\n\t"           \
  UTVM_MAC4W_ROWS

/* the n steps of four inputs (UTVM_MAC4_LOOP's form: straight-line for one or two steps known at
 * compile time, else an odd step and a loop of two) */
static inline __attribute__((always_inline)) int32_t utvm_mac4_s16_steps(int32_t* acc, int16_t* x, int8_t* w,
                                                                         int32_t n) {
  UTVM_MAC4_LOOP(UTVM_MAC4_S16_STEP);
}

static inline __attribute__((always_inline)) int32_t utvm_mac4w_s16_steps(int32_t* acc, int16_t* x, int8_t* w,
                                                                          int32_t n) {
  UTVM_MAC4_LOOP(UTVM_MAC4W_S16_STEP);
}

/* the last len % 4 inputs (r): int16 weight words, a pair then a single one per row */
static inline __attribute__((always_inline)) int32_t utvm_mac4_s16_tail(int32_t* acc, int16_t* x, int8_t* w,
                                                                        int32_t r) {
  const utvm_word_t* wp = (const utvm_word_t*)(void*)w;
  if (r & 2) {
    int32_t xv = utvm_ldw_s16(x);
    acc[0] = __smlad(xv, wp[0], acc[0]);
    acc[1] = __smlad(xv, wp[1], acc[1]);
    acc[2] = __smlad(xv, wp[2], acc[2]);
    acc[3] = __smlad(xv, wp[3], acc[3]);
    x += 2;
    wp += 4;
  }
  if (r & 1) {
    acc[0] = __smlabb(*x, wp[0], acc[0]);
    acc[1] = __smlabb(*x, wp[1], acc[1]);
    acc[2] = __smlabb(*x, wp[2], acc[2]);
    acc[3] = __smlabb(*x, wp[3], acc[3]);
  }
  return 0;
}

static inline __attribute__((always_inline)) int32_t utvm_mac4_s16(int32_t* acc, int16_t* x, int8_t* w,
                                                                   int32_t len) {
  utvm_mac4_s16_steps(acc, x, w, len >> 2);
  return utvm_mac4_s16_tail(acc, x + (len & ~3), w + 4 * (len & ~3), len & 3);
}

static inline __attribute__((always_inline)) int32_t utvm_mac4w_s16(int32_t* acc, int16_t* x, int8_t* w,
                                                                    int32_t len) {
  utvm_mac4w_s16_steps(acc, x, w, len >> 2);
  return utvm_mac4_s16_tail(acc, x + (len & ~3), w + 8 * (len & ~3), len & 3);
}

static inline int32_t utvm_mulhr_s32(int32_t x, int32_t m) {
  int32_t r;
  __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"(x), "r"(m));
  return r;
}

/* two channels of two taps: PKHBT / PKHTB pair each channel's taps, one SMLAD each. One asm
 * statement per pair of channels (four temporaries and three addresses each), so that gcc has
 * registers left for the addresses when the two taps lie far apart (dilations, wide rows). */
static inline __attribute__((always_inline)) void utvm_dw4_pair_half_s16(int32_t* a0, int32_t* a1,
                                                                         const int16_t* xa,
                                                                         const int16_t* xb,
                                                                         const int32_t* w) {
  int32_t va, vb, w0, t;
  __asm__("ldr %[va], %[ma]\n\t"
          "ldr %[vb], %[mb]\n\t"
          "pkhbt %[t], %[va], %[vb], lsl #16\n\t"
          "pkhtb %[va], %[vb], %[va], asr #16\n\t"
          "ldrd %[w0], %[vb], %[mw]\n\t"
          "smlad %[a0], %[t], %[w0], %[a0]\n\t"
          "smlad %[a1], %[va], %[vb], %[a1]\n\t"
          : [a0] "+r"(*a0), [a1] "+r"(*a1), [va] "=&r"(va), [vb] "=&r"(vb), [w0] "=&r"(w0), [t] "=&r"(t)
          : [ma] "m"(*(const utvm_uword_t*)xa), [mb] "m"(*(const utvm_uword_t*)xb),
            [mw] "m"(*(const utvm_dword_t*)w));
}

static inline __attribute__((always_inline)) int32_t utvm_dw4_pair_at_s16(int32_t* acc, int16_t* xa, int16_t* xb,
                                                                          int32_t* w) {
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  utvm_dw4_pair_half_s16(&a0, &a1, xa, xb, w);
  utvm_dw4_pair_half_s16(&a2, &a3, xa + 2, xb + 2, w + 2);
  UTVM_ACC4_STORE(acc);
  return 0;
}

static inline __attribute__((always_inline)) int32_t utvm_dw4_tap_at_s16(int32_t* acc, int16_t* x, int32_t* w) {
  int32_t v = utvm_ldw_s16(x), u = utvm_ldw_s16(x + 2);
  acc[0] = __smlabb(v, w[0], acc[0]);
  acc[1] = __smlatt(v, w[0], acc[1]);
  acc[2] = __smlabb(u, w[1], acc[2]);
  acc[3] = __smlatt(u, w[1], acc[3]);
  return 0;
}

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

static inline int32_t utvm_mulhr_s32(int32_t x, int32_t m) {
  return (int32_t)(((int64_t)x * m + ((int64_t)1 << 31)) >> 32);
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
static inline __attribute__((always_inline)) int32_t utvm_dw4_pair_s16(int32_t* acc, int16_t* x, int32_t a, int32_t b,
                                                                       int32_t* w) {
  __asm__("" : "+r"(x));
  return utvm_dw4_pair_at_s16(acc, x + a, x + b, w);
}

static inline __attribute__((always_inline)) int32_t utvm_dw4_tap_s16(int32_t* acc, int16_t* x, int32_t a, int32_t* w) {
  __asm__("" : "+r"(x));
  return utvm_dw4_tap_at_s16(acc, x + a, w);
}

static inline __attribute__((always_inline)) int32_t utvm_dw4_pair_pad_s16(int32_t* acc, int32_t ina, int16_t* xa,
                                                                           int32_t inb, int16_t* xb, int32_t* w) {
  return utvm_dw4_pair_at_s16(acc, ina ? xa : (int16_t*)(void*)utvm_zeros_s16,
                              inb ? xb : (int16_t*)(void*)utvm_zeros_s16, w);
}

static inline __attribute__((always_inline)) int32_t utvm_dw4_tap_pad_s16(int32_t* acc, int32_t in, int16_t* x,
                                                                          int32_t* w) {
  return utvm_dw4_tap_at_s16(acc, in ? x : (int16_t*)(void*)utvm_zeros_s16, w);
}

static inline int32_t utvm_im2col_s16(int16_t* col, int16_t* x, int32_t h, int32_t w, int32_t c, int32_t iy0,
                                      int32_t ix0, int32_t kh, int32_t kw, int32_t dh) {
  int32_t ry, rx, k;
  for (ry = 0; ry < kh; ++ry) {
    int32_t iy = iy0 + ry * dh;
    for (rx = 0; rx < kw; ++rx, col += c) {
      int32_t ix = ix0 + rx;
      if (iy >= 0 && iy < h && ix >= 0 && ix < w) {
        for (k = 0; k < c; ++k) col[k] = x[(iy * w + ix) * c + k];
      } else {
        for (k = 0; k < c; ++k) col[k] = 0;
      }
    }
  }
  return 0;
}

/*
 * Matrix products of two variable int8 operands (BATCH_MATMUL):
 *
 * - utvm_pack4_s8(dst, sums, src, k, n, sk, sn, scale, offset): the k x n matrix at src (element
 *   (i, j) at src[i * sk + j * sn], k % 4 == 0) as the weight rows of utvm_mac4_u_s8: column
 *   block b (columns 4b .. 4b + 3, zeros past n), word i / 4, column c at dst + (b * k / 4 + i /
 *   4) * 16 + 4c; and sums[j] = offset + scale x the sum of column j (j < n rounded up to 4).
 * - utvm_copy2d_s8(dst, src, rows, cols, sr, sc): dst[r * cols + c] = src[r * sr + c * sc] (a
 *   transposition when sr = 1; Helium: gathers of eight elements).
 * - utvm_sums_s8(out, src, rows, cols, sr, scale, offset): out[r] = offset + scale x the sum of
 *   the cols contiguous elements of row r at src + r * sr (DSP: USADA8 on four bytes at a time;
 *   Helium: VADDVA on 16).
 * - utvm_offset_s32(dst, src, v, n): dst[i] = src[i] + v.
 */
static inline int32_t utvm_pack4_s8(int8_t* dst, int32_t* sums, int8_t* src, int32_t k, int32_t n, int32_t sk,
                                    int32_t sn, int32_t scale, int32_t offset) {
  int32_t j, i;
  for (j = 0; j < (n + 3) / 4 * 4; ++j) {
    int8_t* d = dst + (j / 4) * 4 * k + 4 * (j % 4);
    const int8_t* p = src + j * sn;
    int32_t sum = 0;
    for (i = 0; i < k; i += 4, d += 16, p += 4 * sk) {
      if (j < n) {
        d[0] = p[0];
        d[1] = p[sk];
        d[2] = p[2 * sk];
        d[3] = p[3 * sk];
        sum += d[0] + d[1] + d[2] + d[3];
      } else {
        d[0] = d[1] = d[2] = d[3] = 0;
      }
    }
    sums[j] = offset + scale * sum;
  }
  return 0;
}

static inline int32_t utvm_copy2d_s8(int8_t* dst, int8_t* src, int32_t rows, int32_t cols, int32_t sr, int32_t sc) {
  int32_t r, c;
#ifdef UTVM_HAVE_MVE
  if (sc > 0 && (cols - 1) * sc < 65536) {
    uint16x8_t offsets = vmulq_n_u16(vidupq_n_u16(0, 1), (uint16_t)sc);
    for (r = 0; r < rows; ++r, dst += cols) {
      const int8_t* p = src + r * sr;
      for (c = 0; c < cols; c += 8, p += 8 * sc) {
        mve_pred16_t pr = vctp16q((uint32_t)(cols - c));
        vstrbq_p_s16(dst + c, vldrbq_gather_offset_z_s16(p, offsets, pr), pr);
      }
    }
    return 0;
  }
#endif
  for (r = 0; r < rows; ++r, dst += cols)
    for (c = 0; c < cols; ++c) dst[c] = src[r * sr + c * sc];
  return 0;
}

static inline int32_t utvm_sums_s8(int32_t* out, int8_t* src, int32_t rows, int32_t cols, int32_t sr, int32_t scale,
                                   int32_t offset) {
  int32_t r, c;
  for (r = 0; r < rows; ++r) {
    const int8_t* p = src + r * sr;
    int32_t sum = 0;
    c = 0;
#ifdef UTVM_HAVE_MVE
    for (; c < cols; c += 16) sum = vaddvaq_p_s8(sum, vldrbq_z_s8(p + c, vctp8q((uint32_t)(cols - c))),
                                                 vctp8q((uint32_t)(cols - c)));
#elif defined(__ARM_FEATURE_SIMD32) && __ARM_FEATURE_SIMD32
    {
      /* the bytes as unsigned (x + 128: flip the sign bits) summed by USADA8 */
      uint32_t u = 0;
      for (; c + 4 <= cols; c += 4) u = __usada8((uint32_t)utvm_ldw_s8((int8_t*)(void*)(p + c)) ^ 0x80808080u, 0, u);
      sum = (int32_t)u - 128 * c;
    }
#endif
    for (; c < cols; ++c) sum += p[c];
    out[r] = offset + scale * sum;
  }
  return 0;
}

static inline int32_t utvm_offset_s32(int32_t* dst, int32_t* src, int32_t v, int32_t n) {
  int32_t i;
  for (i = 0; i < n; ++i) dst[i] = src[i] + v;
  return 0;
}

/*
 * Vectors of the recurrent layers (SVDF):
 *
 * - utvm_copy_s8(dst, src, n), utvm_copy_s16(dst, src, n): n elements copied (no overlap; any
 *   alignment of the element type), two words at a time.
 * - utvm_dot_s8(acc, a, b, n), utvm_dot_s16(acc, a, b, n): acc + the dot product of the n
 *   elements at a and b, modulo 2**32 as TFLite's int32 sums (SMLAD on int16 pairs, or the int8
 *   lanes of words; VMLADAVA on Helium).
 */
static inline void utvm_copy_bytes(int8_t* dst, const int8_t* src, int32_t n) {
  for (; n >= 8; n -= 8, dst += 8, src += 8) {
    int32_t a, b;
    __builtin_memcpy(&a, src, 4);
    __builtin_memcpy(&b, src + 4, 4);
    __builtin_memcpy(dst, &a, 4);
    __builtin_memcpy(dst + 4, &b, 4);
  }
  for (; n > 0; --n) *dst++ = *src++;
}

static inline int32_t utvm_copy_s8(int8_t* dst, int8_t* src, int32_t n) {
  utvm_copy_bytes(dst, src, n);
  return 0;
}

static inline int32_t utvm_copy_s16(int16_t* dst, int16_t* src, int32_t n) {
  utvm_copy_bytes((int8_t*)(void*)dst, (const int8_t*)(const void*)src, 2 * n);
  return 0;
}

/* acc += the products of the Helium vectors at a + k, b + k, k < n, lanes at a time */
#define UTVM_MVE_DOT(load_z, vctp, lanes)                                          \
  for (; k < n; k += (lanes)) {                                                    \
    mve_pred16_t p = vctp((uint32_t)(n - k));                                      \
    acc = vmladavaq_p(acc, load_z(a + k, p), load_z(b + k, p), p);                 \
  }

static inline int32_t utvm_dot_s16(int32_t acc, int16_t* a, int16_t* b, int32_t n) {
  int32_t k = 0;
#ifdef UTVM_HAVE_MVE
  UTVM_MVE_DOT(vldrhq_z_s16, vctp16q, 8)
#elif defined(__ARM_FEATURE_SIMD32) && __ARM_FEATURE_SIMD32
  for (; k + 2 <= n; k += 2) acc = __smlad(utvm_ldw_s16(a + k), utvm_ldw_s16(b + k), acc);
#endif
  for (; k < n; ++k) acc = (int32_t)((uint32_t)acc + (uint32_t)(a[k] * b[k]));
  return acc;
}

static inline int32_t utvm_dot_s8(int32_t acc, int8_t* a, int8_t* b, int32_t n) {
  int32_t k = 0;
#ifdef UTVM_HAVE_MVE
  UTVM_MVE_DOT(vldrbq_z_s8, vctp8q, 16)
#elif defined(__ARM_FEATURE_SIMD32) && __ARM_FEATURE_SIMD32
  for (; k + 4 <= n; k += 4) acc = utvm_dot4_acc_s8(acc, utvm_ldw_s8(a + k), utvm_ldw_s8(b + k));
#endif
  for (; k < n; ++k) acc += a[k] * b[k];
  return acc;
}

#endif /* UTVM_KERNELS_H_ */
