/* utvm/kernels/gemm_c.h: moved from kernels.h by the split of issue 24 (one header per
 * operator family and instruction set, the bodies unchanged). */
#ifndef UTVM_KERNELS_GEMM_C_H_
#define UTVM_KERNELS_GEMM_C_H_

#include "common.h"


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

#endif /* UTVM_KERNELS_GEMM_C_H_ */
