/* utvm/kernels/copy_mve.h: moved from kernels_mve.h by the split of issue 24 (one header per
 * operator family and instruction set, the bodies unchanged). */
#ifndef UTVM_KERNELS_COPY_MVE_H_
#define UTVM_KERNELS_COPY_MVE_H_

#include "common_mve.h"


static inline void utvm_mve_copy_s8(int8_t* dst, const int8_t* src, int32_t n) {
#ifdef UTVM_MVE_VECTOR
  for (; n > 0; n -= 16, dst += 16, src += 16) {
    mve_pred16_t p = vctp8q((uint32_t)n);
    vstrbq_p_s8(dst, vldrbq_z_s8(src, p), p);
  }
#else
  for (int32_t i = 0; i < n; ++i) dst[i] = src[i];
#endif
}

static inline void utvm_mve_fill_s8(int8_t* dst, int32_t v, int32_t n) {
#ifdef UTVM_MVE_VECTOR
  int8x16_t vv = vdupq_n_s8((int8_t)v);
  for (; n > 0; n -= 16, dst += 16) vstrbq_p_s8(dst, vv, vctp8q((uint32_t)n));
#else
  for (int32_t i = 0; i < n; ++i) dst[i] = (int8_t)v;
#endif
}

#endif /* UTVM_KERNELS_COPY_MVE_H_ */
