/* utvm/kernels/mac16_dsp.h: moved from kernels.h by the split of issue 24 (one header per
 * operator family and instruction set, the bodies unchanged). */
#ifndef UTVM_KERNELS_MAC16_DSP_H_
#define UTVM_KERNELS_MAC16_DSP_H_

#include "common.h"
#include "mac_dsp.h"


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
UTVM_INLINE int32_t utvm_mac4_s16_steps(int32_t* acc, int16_t* x, int8_t* w,
                                                                         int32_t n) {
  UTVM_MAC4_LOOP(UTVM_MAC4_S16_STEP);
}

UTVM_INLINE int32_t utvm_mac4w_s16_steps(int32_t* acc, int16_t* x, int8_t* w,
                                                                          int32_t n) {
  UTVM_MAC4_LOOP(UTVM_MAC4W_S16_STEP);
}

/* the last len % 4 inputs (r): int16 weight words, a pair then a single one per row */
UTVM_INLINE int32_t utvm_mac4_s16_tail(int32_t* acc, int16_t* x, int8_t* w,
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

UTVM_INLINE int32_t utvm_mac4_s16(int32_t* acc, int16_t* x, int8_t* w,
                                                                   int32_t len) {
  utvm_mac4_s16_steps(acc, x, w, len >> 2);
  return utvm_mac4_s16_tail(acc, x + (len & ~3), w + 4 * (len & ~3), len & 3);
}

UTVM_INLINE int32_t utvm_mac4w_s16(int32_t* acc, int16_t* x, int8_t* w,
                                                                    int32_t len) {
  utvm_mac4w_s16_steps(acc, x, w, len >> 2);
  return utvm_mac4_s16_tail(acc, x + (len & ~3), w + 8 * (len & ~3), len & 3);
}

/* two channels of two taps: PKHBT / PKHTB pair each channel's taps, one SMLAD each. One asm
 * statement per pair of channels (four temporaries and three addresses each), so that gcc has
 * registers left for the addresses when the two taps lie far apart (dilations, wide rows). */
UTVM_INLINE void utvm_dw4_pair_half_s16(int32_t* a0, int32_t* a1,
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

UTVM_INLINE int32_t utvm_dw4_pair_at_s16(int32_t* acc, int16_t* xa, int16_t* xb,
                                                                          int32_t* w) {
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  utvm_dw4_pair_half_s16(&a0, &a1, xa, xb, w);
  utvm_dw4_pair_half_s16(&a2, &a3, xa + 2, xb + 2, w + 2);
  UTVM_ACC4_STORE(acc);
  return 0;
}

UTVM_INLINE int32_t utvm_dw4_tap_at_s16(int32_t* acc, int16_t* x, int32_t* w) {
  int32_t v = utvm_ldw_s16(x), u = utvm_ldw_s16(x + 2);
  acc[0] = __smlabb(v, w[0], acc[0]);
  acc[1] = __smlatt(v, w[0], acc[1]);
  acc[2] = __smlabb(u, w[1], acc[2]);
  acc[3] = __smlatt(u, w[1], acc[3]);
  return 0;
}
#endif

#endif /* UTVM_KERNELS_MAC16_DSP_H_ */
