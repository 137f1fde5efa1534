/* utvm/kernels/copy_c.h: moved from kernels.h by the split of issue 24 (one header per
 * operator family and instruction set, the bodies unchanged). */
#ifndef UTVM_KERNELS_COPY_C_H_
#define UTVM_KERNELS_COPY_C_H_

#include "common.h"


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

#endif /* UTVM_KERNELS_COPY_C_H_ */
