/* utvm/kernels/fully_connected_mve.h: moved from kernels_mve.h by the split of issue 24 (one header per
 * operator family and instruction set, the bodies unchanged). */
#ifndef UTVM_KERNELS_FULLY_CONNECTED_MVE_H_
#define UTVM_KERNELS_FULLY_CONNECTED_MVE_H_

#include "common_mve.h"
#include "requant_mve.h"



/* ---------------------------------------------------------------------------------------------
 * Fully connected layers: utvm_mve_fc4_s8, one input row x 4 units per block.
 *
 * The weights and requantization in one array of blocks of 4 units (the last one zero-padded):
 * per step of 16 input bytes the 4 units' 16 weights side by side ([step][unit][16], zeros past
 * the depth), then the units' folded biases, multipliers and shifts (3 x 4 int32). One block:
 * per step one input load, 4 filter loads and 4 VMLADAV(A) (9 instructions per 64 products).
 * A depth up to 8: two units per 16-byte row (8 bytes each), multiplied by the row in the low
 * or in the high 8 lanes of an input vector (two filter loads and 4 VMLADAV per block);
 * the 4 dot products become a vector (single-lane moves: the lanes must match the constants'
 * and the output's order), requantized with vector constants (VQRDMULH, gemmlowp's rounding by
 * VAND/VSHR/VQADD then VRSHL) and stored contiguously.
 * ------------------------------------------------------------------------------------------ */

#define UTVM_MVE_FC_RIGHT 1 /* every shift <= 0 */

/* bytes of a block's weights: depth k up to 8, two units per 16-byte row; else steps of 64 */
static inline int32_t utvm_mve_fc_weight_bytes(int32_t k) { return k <= 8 ? 32 : ((k + 15) >> 4) * 64; }

static inline int32_t utvm_mve_fc_block_bytes(int32_t k) { return utvm_mve_fc_weight_bytes(k) + 48; }

/* unit u of the block at blk: weight j, or requantization word i (0: bias, 1: mult, 2: shift) */
static inline int32_t utvm_mve_fc_w(const int8_t* blk, int32_t k, int32_t u, int32_t j) {
  return k <= 8 ? blk[u * 8 + j] : blk[(j >> 4) * 64 + u * 16 + (j & 15)];
}
static inline int32_t utvm_mve_fc_rq(const int8_t* blk, int32_t k, int32_t u, int32_t i) {
  return ((const int32_t*)(const void*)(blk + utvm_mve_fc_weight_bytes(k)))[i * 4 + u];
}

/* the four dot products a0..a3 of a block requantized with the block's constants at wp (biases,
 * multipliers, shifts) and stored at op */
#define UTVM_MVE_FC_REQ                                                                            \
  "vmov.32 %q[va][0], %[a0]\n\tvmov.32 %q[va][1], %[a1]\n\tvmov.32 %q[va][2], %[a2]\n\t"          \
  "vmov.32 %q[va][3], %[a3]\n\t"                                                                    \
  "vldrw.32 %q[vt], [%[wp]], #16\n\t"                                                              \
  "vadd.i32 %q[va], %q[va], %q[vt]\n\t"                                                            \
  "vldrw.32 %q[vt], [%[wp]], #16\n\t"                                                              \
  "vqrdmulh.s32 %q[va], %q[va], %q[vt]\n\t"                                                        \
  "vldrw.32 %q[wv], [%[wp]], #16\n\t"                                                              \
  "vand %q[vt], %q[va], %q[wv]\n\t"                                                                \
  "vshr.s32 %q[vt], %q[vt], #31\n\t"                                                               \
  "vqadd.s32 %q[va], %q[va], %q[vt]\n\t"                                                           \
  "vrshl.s32 %q[va], %q[va], %q[wv]\n\t"                                                           \
  "vadd.i32 %q[va], %q[va], %[zy]\n\t"                                                             \
  "vmax.s32 %q[va], %q[va], %q[lo]\n\t"                                                            \
  "vmin.s32 %q[va], %q[va], %q[hi]\n\t"                                                            \
  "vstrb.32 %q[va], [%[op]], #4\n\t"

#ifdef UTVM_MVE_VECTOR
/* the `blocks` whole blocks of one row of k bytes at xp in one asm statement: the steps of 16
 * bytes, a last partial one loading k % 16 bytes under a predicate (nothing read past the row) */
UTVM_INLINE void utvm_mve_fc4_asm(int8_t* op, const int8_t* xp, const int8_t* wp,
                                                                   int32_t k, int32_t blocks, int32_t zy,
                                                                   int32x4_t lo, int32x4_t hi) {
#ifdef __OPTIMIZE__
  int32_t steps = (k + 15) >> 4;
  int32_t a0, a1, a2, a3, n;
  register int32_t count __asm__("lr") = blocks; /* the loop counter of LE */
  int8x16_t xv, wv;
  int32x4_t va, vt;
#define UTVM_MVE_FC_STEP(MAC, LOAD)                                                                \
  LOAD "%q[xv], [%[xp]], #16\n\t"                                                                  \
  "vldrb.8 %q[wv], [%[wp]], #16\n\t" MAC " %[a0], %q[xv], %q[wv]\n\t"                              \
  "vldrb.8 %q[wv], [%[wp]], #16\n\t" MAC " %[a1], %q[xv], %q[wv]\n\t"                              \
  "vldrb.8 %q[wv], [%[wp]], #16\n\t" MAC " %[a2], %q[xv], %q[wv]\n\t"                              \
  "vldrb.8 %q[wv], [%[wp]], #16\n\t" MAC " %[a3], %q[xv], %q[wv]\n\t"
#define UTVM_MVE_FC_LD "vldrb.8 "
#define UTVM_MVE_FC_LDP "vpst\n\tvldrbt.8 "
  __asm__ volatile(
      ".if %c[rem] > 0\n\tmov %[n], %[rem]\n\tvctp.8 %[n]\n\t.endif\n\t"
      "dls lr, %[count]\n"
      "1:\n\t"
      ".if %c[full] > 0\n\t" UTVM_MVE_FC_STEP("vmladav.s8", UTVM_MVE_FC_LD)
      ".if %c[full] > 1\n\tmov %[n], %[full] - 1\n2:\n\t" UTVM_MVE_FC_STEP("vmladava.s8", UTVM_MVE_FC_LD)
      "subs %[n], %[n], #1\n\tbne 2b\n\t.endif\n\t"
      ".if %c[rem] > 0\n\t" UTVM_MVE_FC_STEP("vmladava.s8", UTVM_MVE_FC_LDP) ".endif\n\t"
      ".else\n\t" UTVM_MVE_FC_STEP("vmladav.s8", UTVM_MVE_FC_LDP) ".endif\n\t"
      "sub %[xp], %[xp], %[back]\n\t" UTVM_MVE_FC_REQ "le lr, 1b"
      : [a0] "=&Te"(a0), [a1] "=&Te"(a1), [a2] "=&Te"(a2), [a3] "=&Te"(a3), [n] "=&r"(n), [xp] "+&r"(xp),
        [wp] "+&r"(wp), [op] "+&l"(op), [count] "+&r"(count), [xv] "=&w"(xv), [wv] "=&w"(wv), [va] "=&w"(va),
        [vt] "=&w"(vt)
      : [full] "i"(k >> 4), [rem] "i"(k & 15), [back] "i"(steps * 16), [zy] "r"(zy), [lo] "w"(lo), [hi] "w"(hi)
      : "cc", "memory", "p0"); /* p0: VPR, set by the tail's VCTP */
  (void)a0, (void)a1, (void)a2, (void)a3, (void)n, (void)count, (void)xv, (void)wv, (void)va, (void)vt;
#else
  (void)op, (void)xp, (void)wp, (void)k, (void)blocks, (void)zy, (void)lo, (void)hi;
#endif
}

/* the same for a depth up to 8: x0 the row in lanes 0..7, x1 in lanes 8..15 (zeros elsewhere) */
UTVM_INLINE void utvm_mve_fc4p_asm(int8_t* op, int8x16_t x0, int8x16_t x1,
                                                                    const int8_t* wp, int32_t blocks, int32_t zy,
                                                                    int32x4_t lo, int32x4_t hi) {
#ifdef __OPTIMIZE__
  int32_t a0, a1, a2, a3;
  register int32_t count __asm__("lr") = blocks; /* the loop counter of LE */
  int8x16_t wv;
  int32x4_t va, vt;
  __asm__ volatile("dls lr, %[count]\n1:\n\t"
                   "vldrb.8 %q[wv], [%[wp]], #16\n\t"
                   "vmladav.s8 %[a0], %q[x0], %q[wv]\n\t"
                   "vmladav.s8 %[a1], %q[x1], %q[wv]\n\t"
                   "vldrb.8 %q[wv], [%[wp]], #16\n\t"
                   "vmladav.s8 %[a2], %q[x0], %q[wv]\n\t"
                   "vmladav.s8 %[a3], %q[x1], %q[wv]\n\t" UTVM_MVE_FC_REQ "le lr, 1b"
                   : [a0] "=&Te"(a0), [a1] "=&Te"(a1), [a2] "=&Te"(a2), [a3] "=&Te"(a3), [wp] "+&r"(wp),
                     [op] "+&l"(op), [count] "+&r"(count), [wv] "=&w"(wv), [va] "=&w"(va), [vt] "=&w"(vt)
                   : [x0] "w"(x0), [x1] "w"(x1), [zy] "r"(zy), [lo] "w"(lo), [hi] "w"(hi)
                   : "cc", "memory");
  (void)a0, (void)a1, (void)a2, (void)a3, (void)count, (void)wv, (void)va, (void)vt;
#else
  (void)op, (void)x0, (void)x1, (void)wp, (void)blocks, (void)zy, (void)lo, (void)hi;
#endif
}
#endif

/* out[r * units + u] = requant(sum_j x[r * k + j] * w[u][j], u) for r < batch, u < units; wt: the
 * blocks above (a last block of fewer than 4 units computes 4, its outputs copied). */
UTVM_INLINE void utvm_mve_fc4_impl(int8_t* out, const int8_t* x, int32_t batch,
                                                                    int32_t k, int32_t units, const int8_t* wt,
                                                                    int32_t mode, int32_t zy, int32_t lo,
                                                                    int32_t hi) {
  int32_t steps = (k + 15) >> 4, bb = utvm_mve_fc_block_bytes(k);
  int32_t full = units / 4;
#ifdef UTVM_MVE_VECTOR
  int32x4_t vlo = vdupq_n_s32(lo), vhi = vdupq_n_s32(hi);
  int32_t fast = UTVM_MVE_CONSTANT(k) && UTVM_MVE_CONSTANT(mode) && (mode & UTVM_MVE_FC_RIGHT) && steps * 16 <= 4095;
  for (int32_t r = 0; r < batch; ++r) {
    const int8_t* xr = x + r * k;
    int8_t* orow = out + r * units;
    /* a depth up to 8: the row in the low and in the high 8 lanes */
    int8x16_t x0 = vldrbq_z_s8(xr, vctp8q((uint32_t)(k < 16 ? k : 16))), x1 = x0;
    if (k <= 8) {
      uint32_t carry = 0;
      x1 = vshlcq_s8(vshlcq_s8(x0, &carry, 32), &carry, 32);
    }
    if (fast) {
      int8_t tail[4];
      for (int32_t part = 0; part < 2; ++part) {
        int32_t n = part ? (units & 3 ? 1 : 0) : full;
        int8_t* o = part ? tail : orow;
        if (!n) continue;
        if (k <= 8) {
          utvm_mve_fc4p_asm(o, x0, x1, wt + part * full * bb, n, zy, vlo, vhi);
        } else {
          utvm_mve_fc4_asm(o, xr, wt + part * full * bb, k, n, zy, vlo, vhi);
        }
      }
      for (int32_t u = 0; u < (units & 3); ++u) orow[full * 4 + u] = tail[u];
      continue;
    }
    for (int32_t b = 0; b * 4 < units; ++b) {
      const int8_t* blk = wt + b * bb;
      int32_t acc[4] = {0, 0, 0, 0};
      if (k <= 8) {
        for (int32_t u = 0; u < 4; ++u) acc[u] = vmladavq_s8(u & 1 ? x1 : x0, vldrbq_s8(blk + (u >> 1) * 16));
      } else {
        for (int32_t s = 0; s < steps; ++s) {
          int32_t n = k - s * 16;
          int8x16_t xv = vldrbq_z_s8(xr + s * 16, vctp8q((uint32_t)(n < 16 ? n : 16)));
          for (int32_t u = 0; u < 4; ++u) acc[u] = vmladavaq_s8(acc[u], xv, vldrbq_s8(blk + s * 64 + u * 16));
        }
      }
      for (int32_t u = 0; u < 4 && b * 4 + u < units; ++u) {
        int32_t v = utvm_mve_mbqm(acc[u] + utvm_mve_fc_rq(blk, k, u, 0), utvm_mve_fc_rq(blk, k, u, 1),
                                  utvm_mve_fc_rq(blk, k, u, 2));
        orow[b * 4 + u] = utvm_mve_clamp_s8(v + zy, lo, hi);
      }
    }
  }
#else
  (void)mode, (void)full, (void)steps;
  for (int32_t r = 0; r < batch; ++r) {
    for (int32_t u = 0; u < units; ++u) {
      const int8_t* blk = wt + (u / 4) * bb;
      int32_t acc = 0;
      for (int32_t j = 0; j < k; ++j) acc += x[r * k + j] * utvm_mve_fc_w(blk, k, u % 4, j);
      int32_t v = utvm_mve_mbqm(acc + utvm_mve_fc_rq(blk, k, u % 4, 0), utvm_mve_fc_rq(blk, k, u % 4, 1),
                                utvm_mve_fc_rq(blk, k, u % 4, 2));
      out[r * units + u] = utvm_mve_clamp_s8(v + zy, lo, hi);
    }
  }
#endif
}

UTVM_INLINE int32_t utvm_mve_fc4_s8(void* out, void* x, int32_t batch, int32_t k,
                                                                     int32_t units, void* wt, int32_t mode, int32_t zy,
                                                                     int32_t lo, int32_t hi) {
  utvm_mve_fc4_impl((int8_t*)out, (const int8_t*)x, batch, k, units, (const int8_t*)wt, mode, zy, lo, hi);
  return 0;
}

/* plain C of the per-layer Helium functions of utvm/lower/tiny.py (tiny fully connected layers,
 * depth <= 16): per group of four output channels the stream holds the four folded biases, the
 * weights, the four multipliers and the four shifts (TFLite's, <= -1; the last group padded with
 * its last channel's). The weights: per channel of the group its vectors of 16 bytes (zeros past
 * the depth); depths up to UTVM_MVE_TINY_LANES: per input the four channels' weights (a word, zeros
 * for missing channels). per_tensor: one multiplier and shift, the stream's first two words, none
 * in the groups. */
#define UTVM_MVE_TINY_LANES 5
static inline void utvm_mve_tiny_fc(int8_t* y, const int8_t* x, const int32_t* stream, int32_t batch, int32_t depth,
                                    int32_t units, int32_t zy, int32_t lo, int32_t hi, int32_t per_tensor) {
  int32_t lanes = depth <= UTVM_MVE_TINY_LANES;
  for (int32_t b = 0; b < batch; b++) {
    const int8_t* row = x + b * depth;
    const int32_t* s = per_tensor ? stream + 2 : stream;
    for (int32_t g = 0; g * 4 < units; g++) {
      int32_t n = units - 4 * g < 4 ? units - 4 * g : 4;
      int32_t steps = (depth + 15) / 16, words = lanes ? depth : 4 * n * steps;
      const int8_t* w = (const int8_t*)(const void*)(s + 4);
      for (int32_t u = 0; u < n; u++) {
        int32_t acc = s[u];
        for (int32_t j = 0; j < depth; j++) acc += row[j] * w[lanes ? 4 * j + u : 16 * steps * u + j];
        int32_t v = per_tensor ? utvm_mve_mbqm(acc, stream[0], stream[1])
                               : utvm_mve_mbqm(acc, s[4 + words + u], s[8 + words + u]);
        /* blocks of 16 channels (depths up to UTVM_MVE_TINY_LANES): group g's lane u is channel
         * 16 (g / 4) + 4 u + (0, 2, 1, 3)[g % 4] (BLOCK_ORDER of tiny.py) */
        int32_t c = lanes && 16 * (g / 4 + 1) <= units ? 16 * (g / 4) + 4 * u + (g & 1) * 2 + (g & 2) / 2
                                                      : 4 * g + u;
        y[b * units + c] = utvm_mve_clamp_s8(v + zy, lo, hi);
      }
      s += 4 + words + (per_tensor ? 0 : 8);
    }
  }
}

#endif /* UTVM_KERNELS_FULLY_CONNECTED_MVE_H_ */
