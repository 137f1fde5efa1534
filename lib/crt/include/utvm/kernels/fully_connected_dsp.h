/* utvm/kernels/fully_connected_dsp.h: moved from kernels_dsp.h by the split of issue 24 (one header per
 * operator family and instruction set, the bodies unchanged). */
#ifndef UTVM_KERNELS_FULLY_CONNECTED_DSP_H_
#define UTVM_KERNELS_FULLY_CONNECTED_DSP_H_

#include "common_dsp.h"


/* plain C of the per-layer functions of utvm/lower/tiny.py (tiny fully connected layers, generated
 * assembly on DSP CPUs): batch rows of depth inputs; per output channel the stream holds the
 * accumulator's start, the doubled weights as int16 pairs in the order of the row's pairs ((x0,
 * x2), (x1, x3) per quad, then (x0), (x0, x1) or (x0, x1), (x2) for the last one to three inputs),
 * m and c (the right shift e: c is an odd multiple of 2**(e-1)) */
static inline void utvm_dsp_tiny_fc(int8_t* y, const int8_t* x, const int32_t* stream, int32_t batch, int32_t depth,
                                    int32_t units, int32_t lo, int32_t hi) {
  int32_t whole = depth / 4, rest = depth % 4;
  int32_t npairs = 2 * whole + (rest == 3 ? 2 : rest ? 1 : 0);
  for (int32_t b = 0; b < batch; b++) {
    const int8_t* row = x + b * depth;
    const int32_t* w = stream;
    for (int32_t o = 0; o < units; o++) {
      int32_t acc = *w++;
      for (int32_t j = 0; j < npairs; j++) {
        int32_t a, c; /* the inputs in the pair's low and high halves (-1: none) */
        if (j < 2 * whole) {
          a = 4 * (j / 2) + j % 2;
          c = a + 2;
        } else {
          a = 4 * whole + 2 * (j - 2 * whole);
          c = a + 1 < depth ? a + 1 : -1;
        }
        acc += row[a] * utvm_dsp_half_lo(w[j]) + (c >= 0 ? row[c] * utvm_dsp_half_hi(w[j]) : 0);
      }
      w += npairs;
      int32_t q[3] = {w[0], w[1], 1};
      while (!((uint32_t)q[1] >> (q[2] - 1) & 1u)) q[2]++;
      y[b * units + o] = (int8_t)utvm_dsp_requant(acc, q, lo, hi);
      w += 2;
    }
  }
}

#endif /* UTVM_KERNELS_FULLY_CONNECTED_DSP_H_ */
