/* utvm/kernels/mac_mve.h: moved from kernels_mve.h by the split of issue 24 (one header per
 * operator family and instruction set, the bodies unchanged). */
#ifndef UTVM_KERNELS_MAC_MVE_H_
#define UTVM_KERNELS_MAC_MVE_H_

#include "common_mve.h"


/* out[o] = clamp(MultiplyByQuantizedMultiplier(bias[o] + the dot product of the k int8 values
 * at x with row o of w (n rows of k), m0, s0) + zy, -128, 127) for o < n: utvm_mve_gemm_s8 of one
 * pixel (four rows per input load) with per-row biases computed at run time (BATCH_MATMUL: its
 * zero-point terms), mode UTVM_MVE_RQ_LEFT or 0 */
/* acc[c] += the dot product of the len int8 values at x with weight row c, c = 0..3, the rows
 * stored 16 inputs at a time (w[64k + 16c .. 64k + 16c + 15] = row c's weights 16k .. 16k + 15,
 * the last group padded with zeros; utvm/lower/mac16.py): per 16 inputs one input load, four
 * weight loads and four VMLADAVA; the last len % 16 inputs under a predicate */
/* the body of utvm_mve_mac4_s8 / _s16: ``group`` inputs per step (one vector: load, load_z under
 * a predicate made by vctp), the four rows' weights (load_w) after one another */
#ifdef UTVM_MVE_VECTOR
#define UTVM_MVE_MAC4_ROWS(vec_t, load, load_z, load_w, vctp, group)            \
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];                   \
  int32_t n = len;                                                              \
  for (; n >= (group); n -= (group)) {                                          \
    vec_t xv = load(x);                                                         \
    x += (group);                                                               \
    a0 = vmladavaq(a0, xv, load_w(w));                                          \
    a1 = vmladavaq(a1, xv, load_w(w + (group)));                                \
    a2 = vmladavaq(a2, xv, load_w(w + 2 * (group)));                            \
    a3 = vmladavaq(a3, xv, load_w(w + 3 * (group)));                            \
    w += 4 * (group);                                                           \
  }                                                                             \
  if (n > 0) {                                                                  \
    vec_t xv = load_z(x, vctp((uint32_t)n));                                    \
    a0 = vmladavaq(a0, xv, load_w(w));                                          \
    a1 = vmladavaq(a1, xv, load_w(w + (group)));                                \
    a2 = vmladavaq(a2, xv, load_w(w + 2 * (group)));                            \
    a3 = vmladavaq(a3, xv, load_w(w + 3 * (group)));                            \
  }                                                                             \
  acc[0] = a0;                                                                  \
  acc[1] = a1;                                                                  \
  acc[2] = a2;                                                                  \
  acc[3] = a3;                                                                  \
  return 0
#else
#define UTVM_MVE_MAC4_ROWS(vec_t, load, load_z, load_w, vctp, group)                    \
  for (int32_t j = 0; j < len; ++j) {                                                   \
    const int8_t* wj = w + 4 * (group) * (j / (group)) + j % (group);                    \
    for (int32_t c = 0; c < 4; ++c) acc[c] += x[j] * wj[(group) * c];                   \
  }                                                                                     \
  return 0
#endif

/* acc[c] += the dot product of the len int8 values at x with weight row c, c = 0..3, the rows
 * stored 16 inputs at a time (w[64k + 16c .. 64k + 16c + 15] = row c's weights 16k .. 16k + 15,
 * the last group padded with zeros; utvm/lower/mac16.py): per 16 inputs one input load, four
 * weight loads and four VMLADAVA; the last len % 16 inputs under a predicate */
UTVM_INLINE int32_t utvm_mve_mac4_s8(int32_t* acc, int8_t* x, int8_t* w,
                                                                      int32_t len) {
  UTVM_MVE_MAC4_ROWS(int8x16_t, vldrbq_s8, vldrbq_z_s8, vldrbq_s8, vctp8q, 16);
}

#endif /* UTVM_KERNELS_MAC_MVE_H_ */
