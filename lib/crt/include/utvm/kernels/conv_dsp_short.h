/*
 * Short-window int8 convolutions of one input channel on DSP CPUs (Cortex-M4/M7/M33): windows
 * of at most 10 taps (3x3 is nine, five int16 pairs), where kernels_dsp.h's blocks spend more on
 * gathering patches, padding K to whole quads and their loops than on the products.
 * utvm/lower/shortk.py generates one naked assembly function per layer,
 * fn(out, rows, stream, np): np output pixels of one output row, the window of pixel j at
 * rows + j sw (the kh window rows wp bytes apart), its taps loaded as int16 pairs straight into
 * registers (LDR + SXTB16 for taps two apart in a row, LDRSB + PKHBT for the others), then per
 * output channel (unrolled, the right shift an immediate) the stream's words by LDM into the free
 * registers, one SMLAD per pair, SMMLAR and the clamp, the outputs cout bytes apart.
 *
 * The stream (utvm/lower/tiny.py stream): per output channel 2 * (bias - zx * sum(w)), the pairs'
 * doubled int16 weights, m and c = 2**(e-1) + (zy - base) * 2**e (base: lo when lo > -128 and the
 * layer is ``based``, else 0: a ReLU of a nonzero zero point compares with lo after SSAT).
 *
 * - utvm_dsp_short_conv(y, x, stream, rows, n, h, w, oh, ow, cout, kh, sh, top, left, wp, zx, fn):
 *   per output row the kh input rows it reads copied into rows (kh x wp bytes and 4 more: the
 *   columns left and right of the input, and the rows above and below it, the zero point zx),
 *   then fn on them;
 * - utvm_dsp_short_rows(out, rows, stream, np, taps, pairs, cout, sw, lo, hi, based): the plain C of the
 *   generated functions (builds without the DSP extension in Thumb-2), the same arithmetic; taps:
 *   per pair the byte offsets of its low and high tap in the window (-1: none).
 */
#ifndef UTVM_KERNELS_CONV_DSP_SHORT_H_
#define UTVM_KERNELS_CONV_DSP_SHORT_H_

#include <stdint.h>

#include "common_dsp.h"
#include <string.h>

typedef void (*utvm_dsp_short_fn)(int8_t* out, const int8_t* rows, const int32_t* stream, int32_t np);

static inline void utvm_dsp_short_rows(int8_t* out, const int8_t* rows, const int32_t* stream, int32_t np,
                                       const int16_t* taps, int32_t pairs, int32_t cout, int32_t sw, int32_t lo,
                                       int32_t hi, int32_t based) {
  for (int32_t r = 0; r < np; r++, rows += sw, out += cout) {
    const int32_t* w = stream;
    for (int32_t o = 0; o < cout; o++) {
      int32_t acc = *w++;
      for (int32_t j = 0; j < pairs; j++) {
        int32_t a = taps[2 * j], b = taps[2 * j + 1];
        acc += rows[a] * utvm_dsp_half_lo(w[j]) + (b >= 0 ? rows[b] * utvm_dsp_half_hi(w[j]) : 0);
      }
      w += pairs;
      int32_t q[3] = {w[0], w[1], 1};
      while (!((uint32_t)q[1] >> (q[2] - 1) & 1u)) q[2]++;
      int32_t v = utvm_dsp_requant(acc, q, based ? lo : -128, hi);
      out[o] = (int8_t)(v < lo ? lo : v);
      w += 2;
    }
  }
}

UTVM_INLINE int32_t utvm_dsp_short_conv(
    void* y, void* x, void* stream, void* rows, int32_t n, int32_t h, int32_t w, int32_t oh, int32_t ow, int32_t cout,
    int32_t kh, int32_t sh, int32_t top, int32_t left, int32_t wp, int32_t zx, utvm_dsp_short_fn fn) {
  int8_t* out = (int8_t*)y;
  const int8_t* in = (const int8_t*)x;
  int8_t* buf = (int8_t*)rows;
  /* the input columns a window row holds: [c0, c1) of the input at [left', ...) of the row */
  int32_t c0 = left, c1 = w + left < wp ? w + left : wp;
  for (int32_t b = 0; b < n; b++) {
    for (int32_t i = 0; i < oh; i++) {
      for (int32_t r = 0; r < kh; r++) {
        int8_t* dst = buf + r * wp;
        int32_t iy = i * sh - top + r;
        if (iy < 0 || iy >= h) {
          memset(dst, zx, (size_t)wp);
          continue;
        }
        if (c0 > 0) memset(dst, zx, (size_t)c0);
        memcpy(dst + c0, in + ((b * h) + iy) * w, (size_t)(c1 - c0));
        if (c1 < wp) memset(dst + c1, zx, (size_t)(wp - c1));
      }
      fn(out + ((b * oh) + i) * ow * cout, buf, (const int32_t*)stream, ow);
    }
  }
  return 0;
}

#endif /* UTVM_KERNELS_CONV_DSP_SHORT_H_ */
