/* utvm/kernels/conv_c.h: moved from kernels.h by the split of issue 24 (one header per
 * operator family and instruction set, the bodies unchanged). */
#ifndef UTVM_KERNELS_CONV_C_H_
#define UTVM_KERNELS_CONV_C_H_

#include "common.h"


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

#endif /* UTVM_KERNELS_CONV_C_H_ */
