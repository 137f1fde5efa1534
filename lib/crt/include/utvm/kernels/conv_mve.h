/* utvm/kernels/conv_mve.h: moved from kernels_mve.h by the split of issue 24 (one header per
 * operator family and instruction set, the bodies unchanged). */
#ifndef UTVM_KERNELS_CONV_MVE_H_
#define UTVM_KERNELS_CONV_MVE_H_

#include "common_mve.h"
#include "requant_mve.h"
#include "copy_mve.h"


/* ---------------------------------------------------------------------------------------------
 * Convolutions as blocks of 4 rows x 2 filter vectors (utvm_mve_conv42_s8).
 *
 * A "row" is the patch of one output pixel (kh x kw x cin bytes, zero-padded to steps * 16
 * bytes) or, for pointwise layers of cin = 16 / sub input channels (sub = 2, 4, 8, 16), sub
 * consecutive pixels (16 bytes, read in place). Rows are stored four at a time with their
 * 16-byte steps interleaved ("group": step s of row r at s * 64 + r * 16); pointwise layers
 * with cin = 16 / sub are already in that layout, the others are gathered into the scratch col.
 * The filters are nv "vectors" (nv even): per output channel whose weights are not all zero,
 * sub vectors (vector j of channel o: its weights in lanes [j * cin, j * cin + cin), zeros
 * elsewhere; it computes the pixels j, j + sub, ... of a group), two at a time ("pair") with
 * their steps interleaved the same way (step s of vector 2i + c at s * 32 + c * 16 of pair i),
 * each pair followed by its "record" of six words: biases (folded with the input zero point),
 * multipliers, and the shift (low byte, signed) with the output offset (j * cout + o) above it,
 * of its two vectors, each two side by side; an odd last vector repeated. Mode
 * UTVM_MVE_C42_COMPACT (sub 1, every channel live, cout even, biases within 24 bits, at most
 * 14 whole steps): records of four words, the bias << 8 | the shift's byte of each vector, then
 * the multipliers, the output offsets implicit (vector v: channel v), 8 bytes a channel. Mode
 * UTVM_MVE_C42_TAIL (k > 16, not a multiple of 16): the last step of each vector holds only
 * t = k % 16 bytes (rounded up to even), the two vectors' t bytes after the pair's whole steps,
 * loaded under a predicate (the weights past t read as zeros), not padded to 16. The channels
 * whose weights are all zero ("dead", common in pruned models) have a constant output: with
 * `dead` set, a template of cout bytes follows the pairs (the dead channels' outputs) and is
 * copied to every output pixel first.
 * One block: per step one load per filter vector and per row and 8 VMLADAV(A), i.e. 14
 * instructions per 128 products; the eight dot products (row r, vector c) become two vectors
 * of the four rows, requantized four lanes at a time and stored at the rows' pixels (stride
 * sub * cout). VRSHL takes its shift from the low byte of its register: the shift's byte is
 * used in place, the bias or offset above it shifted down.
 * ------------------------------------------------------------------------------------------ */

#define UTVM_MVE_C42_RIGHT 1   /* every shift is a right shift of 1..31 */
#define UTVM_MVE_C42_COMPACT 2 /* records of four words, offsets implicit (see above) */
#define UTVM_MVE_C42_TAIL 4    /* the last step k % 16 bytes (rounded up to even) a vector */

/* bytes of the last step of a vector (0: every step 16 bytes); inlined: an immediate operand of
 * utvm_mve_group42_asm at any optimization level */
UTVM_INLINE int32_t utvm_mve_c42_tail(int32_t k, int32_t mode) {
  return (mode & UTVM_MVE_C42_TAIL) ? ((k & 15) + 1) & ~1 : 0;
}

/* utvm_mve_group42_asm takes the layer: right shifts only, the group's rows within VLDRB's
 * reach, compact records only without the loop over steps (at most 14 whole steps: its counter
 * counts the offsets) */
static inline int32_t utvm_mve_c42_fast(int32_t steps, int32_t t, int32_t mode) {
  int32_t fs = steps - (t > 0);
  return steps * 64 <= 4095 && (mode & UTVM_MVE_C42_RIGHT) && (!(mode & UTVM_MVE_C42_COMPACT) || fs <= 14);
}

/* bytes of the filter vectors of a pair (fs whole steps, a tail of t bytes) */
static inline int32_t utvm_mve_c42_wbytes(int32_t fs, int32_t t) { return fs * 32 + 2 * t; }

/* bytes of a pair of filter vectors and its record */
static inline int32_t utvm_mve_c42_pair_bytes(int32_t fs, int32_t t, int32_t mode) {
  return utvm_mve_c42_wbytes(fs, t) + ((mode & UTVM_MVE_C42_COMPACT) ? 16 : 24);
}

/* the record of the pair at `pair` (its vectors v0, v0 + 1; wb: utvm_mve_c42_wbytes): value i of
 * vector c (0: bias, 1: multiplier, 2: shift, 3: offset) */
static inline int32_t utvm_mve_c42_rec(const int8_t* pair, int32_t wb, int32_t mode, int32_t v0, int32_t c,
                                       int32_t i) {
  const int32_t* r = (const int32_t*)(const void*)(pair + wb);
  if (mode & UTVM_MVE_C42_COMPACT) {
    return i == 0 ? r[c] >> 8 : i == 1 ? r[2 + c] : i == 2 ? (int32_t)(int8_t)(uint8_t)(uint32_t)r[c] : v0 + c;
  }
  const int32_t w = r[2 * (i < 2 ? i : 2) + c];
  return i < 2 ? w : i == 2 ? (int32_t)(int8_t)(uint8_t)(uint32_t)w : w >> 8;
}

/* weight l (0 <= l < steps * 16) of vector c of the pair at `pair` */
static inline int32_t utvm_mve_c42_w(const int8_t* pair, int32_t fs, int32_t t, int32_t c, int32_t l) {
  if ((l >> 4) < fs) return pair[(l >> 4) * 32 + c * 16 + (l & 15)];
  return (l & 15) < t ? pair[fs * 32 + c * t + (l & 15)] : 0;
}

#ifdef UTVM_MVE_VECTOR
/* One step of a block: a0..a3 (filter vector 0) and b0..b3 (vector 1) of rows 0..3 (MAC:
 * vmladav for the first step, vmladava after it); rows r1, r2, r3 bytes after row 0 (16, 32, 48
 * in a group), the row pointer advancing by ss bytes per step (64 in a group), the filter
 * pointer by 32. */
#define UTVM_MVE_MAC42_INS(MAC, LD)                                                                \
  "vldrb.8 %q[w0], [%[wp]], #32\n\t"                                                               \
  "vldrb.8 %q[w1], [%[wp], #-16]\n\t"                                                              \
  UTVM_MVE_MAC42_ROWS(MAC, LD)
/* the rows of a step, the filter vectors loaded */
#define UTVM_MVE_MAC42_ROWS(MAC, LD)                                                               \
  LD " %q[x0], [%[dp], %[r1]]\n\t" MAC " %[a1], %q[x0], %q[w0]\n\t" MAC " %[b1], %q[x0], %q[w1]\n\t"      \
  LD " %q[x1], [%[dp], #2 * %c[r1]]\n\t" MAC " %[a2], %q[x1], %q[w0]\n\t" MAC " %[b2], %q[x1], %q[w1]\n\t"      \
  LD " %q[x0], [%[dp], #3 * %c[r1]]\n\t" MAC " %[a3], %q[x0], %q[w0]\n\t" MAC " %[b3], %q[x0], %q[w1]\n\t"      \
  LD " %q[x1], [%[dp]], %[ss]\n\t" MAC " %[a0], %q[x1], %q[w0]\n\t" MAC " %[b0], %q[x1], %q[w1]\n\t"
/* all the steps of a block: unrolled (the step count a constant: the first, an odd one of the
 * `more` after it, then pairs, up to 6 pairs unrolled, more as a loop counting n down; then the tail, its filter
 * vectors loaded under the predicate set before the blocks); rows loaded by LD: vldrb.8,
 * or vldrw.32 (offsets up to 508, word-aligned rows) */
#define UTVM_MVE_MAC42_ALL(LD)                                                                     \
  UTVM_MVE_MAC42_INS("vmladav.s8", LD)                                                             \
  ".rept %c[more] & 1\n\t" UTVM_MVE_MAC42_INS("vmladava.s8", LD) ".endr\n\t"                            \
  ".if (%c[more] >> 1) > 6\n\tmov %[n], #%c[more] >> 1\n2:\n\t" UTVM_MVE_MAC42_INS("vmladava.s8", LD)                \
      UTVM_MVE_MAC42_INS("vmladava.s8", LD) "subs %[n], %[n], #1\n\tbne 2b\n\t.else\n\t"            \
  ".rept 2 * (%c[more] >> 1)\n\t" UTVM_MVE_MAC42_INS("vmladava.s8", LD) ".endr\n\t.endif\n\t"                \
  ".if %c[tail] > 0\n\tvpstt\n\tvldrbt.8 %q[w0], [%[wp]], #2 * %c[tail]\n\tvldrbt.8 %q[w1], [%[wp], #-%c[tail]]\n\t"   \
  UTVM_MVE_MAC42_ROWS("vmladava.s8", LD) ".endif\n\t"
#define UTVM_MVE_MAC42_OUTPUTS                                                                      \
  [a0] "=&Te"(a0), [a1] "=&Te"(a1), [a2] "=&Te"(a2), [a3] "=&Te"(a3), [b0] "=&Te"(b0), [b1] "=&Te"(b1), \
      [b2] "=&Te"(b2), [b3] "=&Te"(b3), [wp] "+r"(wp), [dp] "+r"(dp), [n] "=&r"(n), [w0] "=&w"(w0),  \
      [w1] "=&w"(w1), [x0] "=&w"(x0), [x1] "=&w"(x1)

/* a, b, c, d in the four lanes of a vector with two VMOVs (two registers to two lanes): in the
 * order the Arm architecture defines (a in lane 0, ..., d in lane 3) or, as QEMU 7.2 does it,
 * lanes 0 and 2 exchanged with 1 and 3; either way the same for every such VMOV, so the
 * vectors built with it are used only lane by lane with other vectors built the same way
 * (the offsets of the stores, the row indices of the predicates: utvm_mve_lanes4_index) */
#define UTVM_MVE_LANES4(v, a, b, c, d) "vmov " v "[2], " v "[0], " c ", " a "\n\tvmov " v "[3], " v "[1], " d ", " b "\n\t"
UTVM_INLINE int32x4_t utvm_mve_lanes4(int32_t a, int32_t b, int32_t c, int32_t d) {
  int32x4_t v;
  __asm__(UTVM_MVE_LANES4("%q0", "%1", "%2", "%3", "%4") : "=&w"(v) : "r"(a), "r"(b), "r"(c), "r"(d));
  return v;
}

/* the lanes of utvm_mve_lanes4(0, s, 2 * s, 3 * s) */
UTVM_INLINE uint32x4_t utvm_mve_lanes4_index(int32_t s) {
  return vreinterpretq_u32_s32(utvm_mve_lanes4(0, s, 2 * s, 3 * s));
}

/* requantized lanes of v (accumulators with their biases; multiplier m, shift s), stored at
 * dst + offs[i] (the lanes of p, or all when p == 0) */
UTVM_INLINE void utvm_mve_rq4_store(int8_t* dst, uint32x4_t offs, int32x4_t v,
                                                                     int32_t m, int32_t s, int32_t right,
                                                                     mve_pred16_t p, int32_t zy, int32x4_t lo,
                                                                     int32x4_t hi) {
  if (right) {
    /* gemmlowp rounds the right shift's ties away from zero, VRSHL up: one less for negative
     * values, accumulated by VQRDMLAH onto the sign (-1 or 0) */
    v = vrshlq_n_s32(vqrdmlahq_n_s32(vshrq_n_s32(v, 31), v, m), s);
  } else {
    int32_t r = s < 0 ? s : 0;
    v = vqrdmulhq_n_s32(vshlq_r_s32(v, s > 0 ? s : 0), m);
    v = vrshlq_n_s32(vqaddq_s32(v, vshrq_n_s32(vandq_s32(v, vdupq_n_s32(r)), 31)), r);
  }
  v = vminq_s32(vmaxq_s32(vaddq_n_s32(v, zy), lo), hi);
  if (p) {
    vstrbq_scatter_offset_p_s32(dst, offs, v, p);
  } else {
    vstrbq_scatter_offset_s32(dst, offs, v);
  }
}

/* the same with the bias b added first (accumulators without it) */
UTVM_INLINE void utvm_mve_rq_scatter(int8_t* dst, uint32x4_t offs, int32x4_t v,
                                                                      int32_t b, int32_t m, int32_t s,
                                                                      int32_t right, mve_pred16_t p, int32_t zy,
                                                                      int32x4_t lo, int32x4_t hi) {
  utvm_mve_rq4_store(dst, offs, vaddq_n_s32(v, b), m, s, right, p, zy, lo, hi);
}

/* The blocks of one group (C): rows at rows, rows + rs, ..., step s of a row ss * s bytes after
 * its start; np pixels (np < 4 * sub: a partial group, the lanes of the missing rows not stored),
 * the nv filter vectors; the group's pixel 0 is out. */
UTVM_INLINE void utvm_mve_group42(int8_t* out, const int8_t* rows, int32_t rs,
                                                                   int32_t ss, int32_t np, const int8_t* wt,
                                                                   int32_t steps, int32_t t, int32_t nv,
                                                                   int32_t sub, int32_t cout, int32_t mode,
                                                                   uint32x4_t offs, uint32x4_t rowi, int32_t zy,
                                                                   int32x4_t lo, int32x4_t hi) {
  int32_t part = np < 4 * sub;
  int32_t fs = steps - (t > 0), wb = utvm_mve_c42_wbytes(fs, t);
  for (int32_t v = 0; v < nv; v += 2, wt += utvm_mve_c42_pair_bytes(fs, t, mode)) {
    int32_t acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int32_t s = 0; s < steps; ++s) {
      int32_t len = s < fs ? 16 : t; /* the tail: t bytes a vector */
      mve_pred16_t pl = vctp8q((uint32_t)len);
      int8x16_t w0 = vldrbq_z_s8(wt + s * 32, pl), w1 = vldrbq_z_s8(wt + s * 32 + len, pl);
      for (int32_t r = 0; r < 4; ++r) {
        int8x16_t xv = vldrbq_s8(rows + s * ss + r * rs);
        acc[r] = vmladavaq_s8(acc[r], xv, w0);
        acc[4 + r] = vmladavaq_s8(acc[4 + r], xv, w1);
      }
    }
    for (int32_t c = 0; c < 2; ++c) {
      int32_t off = utvm_mve_c42_rec(wt, wb, mode, v, c, 3);
      /* a partial group: the lanes of the rows with a pixel for this vector */
      int32_t j = off / cout;
      mve_pred16_t p = part ? vcmpltq_n_s32(vreinterpretq_s32_u32(rowi), (np - j + sub - 1) / sub) : 0;
      if (part && !p) continue;
      int32x4_t v4 = utvm_mve_lanes4(acc[4 * c], acc[4 * c + 1], acc[4 * c + 2], acc[4 * c + 3]);
      utvm_mve_rq_scatter(out + off, offs, v4, utvm_mve_c42_rec(wt, wb, mode, v, c, 0),
                          utvm_mve_c42_rec(wt, wb, mode, v, c, 1), utvm_mve_c42_rec(wt, wb, mode, v, c, 2),
                          mode & UTVM_MVE_C42_RIGHT, p, zy, lo, hi);
    }
  }
}

/* The blocks of one whole group (4 * sub pixels, rows as in utvm_mve_group42; the group's pixel
 * 0 is out) in one asm statement: the step count, tail, mode and strides constants, right shifts
 * only; wide: rows further than 42 bytes apart (VLDRW: offsets up to 508, rows word-aligned). */
UTVM_INLINE void utvm_mve_group42_asm(int8_t* out, const int8_t* rows,
                                                                       int32_t rs, int32_t ss, int32_t wide,
                                                                       const int8_t* wt, int32_t steps,
                                                                       int32_t t, int32_t nv, int32_t mode,
                                                                       uint32x4_t offs, int32x4_t zyv,
                                                                       int32x4_t lo, int32x4_t hi) {
#ifdef __OPTIMIZE__ /* immediate operands: constants only when optimizing */
  int32_t a0, a1, a2, a3, b0, b1, b2, b3, n;
  int8x16_t w0, w1, x0, x1;
  const int8_t* wp = wt;
  const int8_t* dp = rows;
  int32_t fs = steps - (t > 0);
  const int8_t* end = wt + (nv / 2) * utvm_mve_c42_pair_bytes(fs, t, mode);
  /* per block: the steps, the rows pointer back to the group, the dot products into two
   * vectors, the record (biases, multipliers, shifts, offsets; compact: the biases and shifts,
   * multipliers, the offsets counted by n, which then counts no steps: at most 14 whole steps,
   * see utvm_mve_c42_fast), the two requantizations and scatter stores (at the offsets plus the
   * pixels' addresses, offs + out) */
#define UTVM_MVE_GROUP42(LD)                                                                       \
  __asm__ volatile(".if %c[tail] > 0\n\tmov %[n], %[tail]\n\tvctp.8 %[n]\n\t.endif\n\t" \
          ".if %c[compact]\n\tmovs %[n], #0\n\t.endif\n" \
          "1:\n\t" UTVM_MVE_MAC42_ALL(LD) \
          "sub %[dp], %[dp], %[back]\n\t" \
          UTVM_MVE_LANES4("%q[w0]", "%[a0]", "%[a1]", "%[a2]", "%[a3]") \
          UTVM_MVE_LANES4("%q[w1]", "%[b0]", "%[b1]", "%[b2]", "%[b3]") \
          ".if %c[compact]\n\t" \
          "ldrd %[b2], %[b3], [%[wp]], #16\n\t" \
          "ldrd %[a2], %[a3], [%[wp], #-8]\n\t" \
          ".else\n\t" \
          "ldrd %[a0], %[a1], [%[wp]], #24\n\t" \
          "ldrd %[a2], %[a3], [%[wp], #-16]\n\t" \
          "ldrd %[b2], %[b3], [%[wp], #-8]\n\t" \
          ".endif\n\t" \
          "asr %[b0], %[b2], #8\n\t" \
          "asr %[b1], %[b3], #8\n\t" \
          ".if %c[compact]\n\t" \
          "vadd.i32 %q[w0], %q[w0], %[b0]\n\t" \
          "vadd.i32 %q[w1], %q[w1], %[b1]\n\t" \
          ".else\n\t" \
          "vadd.i32 %q[w0], %q[w0], %[a0]\n\t" \
          "vadd.i32 %q[w1], %q[w1], %[a1]\n\t" \
          ".endif\n\t" \
          "vshr.s32 %q[x0], %q[w0], #31\n\t" \
          "vshr.s32 %q[x1], %q[w1], #31\n\t" \
          "vqrdmlah.s32 %q[x0], %q[w0], %[a2]\n\t" \
          "vqrdmlah.s32 %q[x1], %q[w1], %[a3]\n\t" \
          "vrshl.s32 %q[x0], %[b2]\n\t" \
          "vrshl.s32 %q[x1], %[b3]\n\t" \
          "vadd.i32 %q[x0], %q[x0], %q[zy]\n\t" \
          "vadd.i32 %q[x1], %q[x1], %q[zy]\n\t" \
          "vmax.s32 %q[x0], %q[x0], %q[lo]\n\t" \
          "vmax.s32 %q[x1], %q[x1], %q[lo]\n\t" \
          "vmin.s32 %q[x0], %q[x0], %q[hi]\n\t" \
          "vmin.s32 %q[x1], %q[x1], %q[hi]\n\t" \
          ".if %c[compact]\n\t" \
          "vstrb.32 %q[x0], [%[n], %q[offs]]\n\t" \
          "add %[n], %[n], #1\n\t" \
          "vstrb.32 %q[x1], [%[n], %q[offs]]\n\t" \
          "add %[n], %[n], #1\n\t" \
          ".else\n\t" \
          "vstrb.32 %q[x0], [%[b0], %q[offs]]\n\t" \
          "vstrb.32 %q[x1], [%[b1], %q[offs]]\n\t" \
          ".endif\n\t" \
          "ldr %[a0], %[end]\n\t" \
          "cmp %[wp], %[a0]\n\t" \
          "bne 1b" \
          : UTVM_MVE_MAC42_OUTPUTS \
          : [more] "i"(fs - 1), [back] "i"(steps * ss), [end] "m"(end), \
            [tail] "i"(t), [compact] "i"((mode & UTVM_MVE_C42_COMPACT) != 0), \
            [r1] "i"(rs), [ss] "i"(ss), \
            [offs] "w"(vaddq_n_u32(offs, (uint32_t)out)), [zy] "w"(zyv), [lo] "w"(lo), [hi] "w"(hi) \
          : "cc", "memory", "p0"); /* p0: VPR, set by the tail's VCTP */
  if (wide) {
    UTVM_MVE_GROUP42("vldrw.32");
  } else {
    UTVM_MVE_GROUP42("vldrb.8");
  }
#undef UTVM_MVE_GROUP42
  (void)a0, (void)a1, (void)a2, (void)a3, (void)b0, (void)b1, (void)b2, (void)b3, (void)n;
  (void)w0, (void)w1, (void)x0, (void)x1, (void)wp, (void)dp;
#else
  (void)out, (void)rows, (void)rs, (void)ss, (void)wide, (void)wt, (void)steps, (void)t, (void)nv, (void)mode,
      (void)offs, (void)zyv, (void)lo, (void)hi;
#endif
}

/* bytes [j, j + n) of row r of a group: n bytes from src, or the zero point (zv, src == 0) */
UTVM_INLINE void utvm_mve_pack_put(int8_t* col, int32_t r, int32_t j,
                                                                    const int8_t* src, int32_t n, int8x16_t zv) {
  while (n > 0) {
    int32_t len = 16 - (j & 15);
    if (len > n) len = n;
    int8_t* d = col + (j >> 4) * 64 + r * 16 + (j & 15);
    if (len == 16) {
      vstrbq_s8(d, src ? vldrbq_s8(src) : zv);
    } else {
      mve_pred16_t p = vctp8q((uint32_t)len);
      vstrbq_p_s8(d, src ? vldrbq_z_s8(src, p) : zv, p);
    }
    if (src) src += len;
    j += len;
    n -= len;
  }
}

/* n16 whole steps (16 bytes each) from src, or the zero point (src == 0), to d, d + 64, ... */
UTVM_INLINE void utvm_mve_pack_steps(int8_t* d, const int8_t* src, int32_t n16,
                                                                      int8x16_t zv) {
  for (int32_t i = 0; i < n16; ++i, d += 64) {
    if (src) {
      vstrbq_s8(d, vldrbq_s8(src));
      src += 16;
    } else {
      vstrbq_s8(d, zv);
    }
  }
}

/* row r of a group: the patch of the output pixel whose window starts at input row iy0,
 * column ix0 */
UTVM_INLINE void utvm_mve_pack_patch(int8_t* col, int32_t r, const int8_t* x,
                                                                      int32_t h, int32_t w, int32_t cin,
                                                                      int32_t iy0, int32_t ix0, int32_t kh,
                                                                      int32_t kw, int32_t dh, int32_t dw,
                                                                      int8x16_t zv) {
  int32_t row = kw * cin;
  int32_t whole = dw == 1 && ix0 >= 0 && ix0 + kw <= w; /* the window's columns inside, contiguous */
  for (int32_t ry = 0; ry < kh; ++ry) {
    int32_t iy = iy0 + ry * dh;
    int32_t j = ry * row;
    int32_t in_y = iy >= 0 && iy < h;
    if (cin % 16 == 0) { /* whole steps */
      int8_t* d = col + (j >> 4) * 64 + r * 16;
      if (!in_y || whole) {
        utvm_mve_pack_steps(d, in_y ? x + (iy * w + ix0) * cin : 0, row >> 4, zv);
        continue;
      }
      for (int32_t rx = 0; rx < kw; ++rx, d += cin * 4) {
        int32_t ix = ix0 + rx * dw;
        utvm_mve_pack_steps(d, ix >= 0 && ix < w ? x + (iy * w + ix) * cin : 0, cin >> 4, zv);
      }
      continue;
    }
    if (!in_y || whole) {
      utvm_mve_pack_put(col, r, j, in_y ? x + (iy * w + ix0) * cin : 0, row, zv);
      continue;
    }
    for (int32_t rx = 0; rx < kw; ++rx) {
      int32_t ix = ix0 + rx * dw;
      utvm_mve_pack_put(col, r, j + rx * cin, ix >= 0 && ix < w ? x + (iy * w + ix) * cin : 0, cin, zv);
    }
  }
}

/* the scatter offsets of utvm_mve_band_pieces: lane l to piece l / cin, byte l % cin */
UTVM_INLINE uint8x16_t utvm_mve_band_off(int32_t cin, int32_t dstep) {
  uint8x16_t lane = vidupq_n_u8(0, 1);
  uint8x16_t piece = vdupq_n_u8(0), within = lane;
  for (int32_t i = 1; i * cin < 16; ++i) {
    mve_pred16_t later = vcmpcsq_n_u8(lane, (uint8_t)(i * cin));
    piece = vpselq_u8(vdupq_n_u8((uint8_t)i), piece, later);
    within = vpselq_u8(vsubq_n_u8(lane, (uint8_t)(i * cin)), within, later);
  }
  return vaddq_u8(vmulq_n_u8(piece, (uint8_t)dstep), within);
}

/* n pieces of cin bytes from src (contiguous) to dst, dst + dstep, ... (or of the zero point zv,
 * src == 0): 16 / cin pieces per load and one scatter store by the offsets off
 * (utvm_mve_band_off; the lanes past the pieces write the next piece's first bytes, rewritten
 * after; the last store, and load, under a predicate); cin a multiple of 16: its chunks */
UTVM_INLINE void utvm_mve_band_pieces(int8_t* dst, int32_t dstep, const int8_t* src,
                                                                       int32_t n, int32_t cin, uint8x16_t off,
                                                                       int8x16_t zv) {
  if (cin % 16 == 0) { /* pieces of whole 16-byte chunks */
    for (int32_t i = 0; i < n; ++i, dst += dstep) {
      for (int32_t j = 0; j < cin; j += 16) vstrbq_s8(dst + j, src ? vldrbq_s8(src + j) : zv);
      if (src) src += cin;
    }
    return;
  }
  int32_t per = 16 / cin;
  for (; n > 0; n -= per, dst += per * dstep) {
    int32_t bytes = n * cin;
    if (bytes >= 16 + cin) {
      vstrbq_scatter_offset_s8(dst, off, src ? vldrbq_s8(src) : zv);
    } else {
      mve_pred16_t pl = vctp8q((uint32_t)(bytes < 16 ? bytes : per * cin));
      vstrbq_scatter_offset_p_s8(dst, off, src ? vldrbq_z_s8(src, pl) : zv, pl);
    }
    if (src) src += per * cin;
  }
}

/* The band of one output line (mode 1: row `line`; mode 2: column `line`): the input positions
 * along the line (columns, or rows) from the padding's first, `pos` of them, each holding the
 * across * cin bytes of the window's other dimension (kh rows, dilation dh; or kw columns,
 * dilation dw), the zero point outside the input. */
UTVM_INLINE void utvm_mve_band(int8_t* band, const int8_t* x, int32_t h, int32_t w,
                                                                int32_t cin, int32_t line, int32_t mode,
                                                                int32_t pos, int32_t kh, int32_t kw, int32_t sh,
                                                                int32_t sw, int32_t dh, int32_t dw, int32_t pad_top,
                                                                int32_t pad_left, int8x16_t zv) {
  int32_t rows = mode == 1;
  int32_t across = rows ? kh : kw, d = rows ? dh : dw;
  int32_t na = rows ? w : h, nc = rows ? h : w, pa = rows ? pad_left : pad_top; /* along: size, padding */
  int32_t first = line * (rows ? sh : sw) - (rows ? pad_top : pad_left);        /* across: first position */
  int32_t step = across * cin;                                                   /* band bytes per position */
  int32_t in0 = pa < pos ? pa : pos, in1 = pa + na < pos ? pa + na : pos;       /* positions inside */
  if (rows) {
    uint8x16_t off = utvm_mve_band_off(cin, step);
    for (int32_t t = 0; t < across; ++t) {
      int32_t ic = first + t * d;
      int8_t* dst = band + t * cin;
      if (ic < 0 || ic >= nc) {
        utvm_mve_band_pieces(dst, step, 0, pos, cin, off, zv);
        continue;
      }
      utvm_mve_band_pieces(dst + in0 * step, step, x + ic * w * cin, in1 - in0, cin, off, zv);
      utvm_mve_band_pieces(dst, step, 0, in0, cin, off, zv);
      utvm_mve_band_pieces(dst + in1 * step, step, 0, pos - in1, cin, off, zv);
    }
    return;
  }
  /* columns: per input row the across * cin bytes, contiguous in x when every column is inside */
  int32_t whole = d == 1 && first >= 0 && first + across <= nc;
  for (int32_t a = 0; a < pos; ++a) {
    int8_t* dst = band + a * step;
    if (a < in0 || a >= in1) {
      utvm_mve_fill_s8(dst, (int8_t)vgetq_lane_s8(zv, 0), step);
    } else if (whole) {
      utvm_mve_copy_s8(dst, x + ((a - pa) * w + first) * cin, step);
    } else {
      for (int32_t t = 0; t < across; ++t) {
        int32_t ic = first + t * d;
        if (ic >= 0 && ic < nc) {
          utvm_mve_copy_s8(dst + t * cin, x + ((a - pa) * w + ic) * cin, cin);
        } else {
          utvm_mve_fill_s8(dst + t * cin, (int8_t)vgetq_lane_s8(zv, 0), cin);
        }
      }
    }
  }
}
#endif

/* Convolution, the whole layer:
 *   out[(oy * ow + ox) * cout + o] = requant(sum_{ry, rx, c} x[iy][ix][c] * w[o][ry][rx][c], o)
 * with iy = oy * sh - pad_top + ry * dh, ix = ox * sw - pad_left + rx * dw, the taps outside the
 * input counting as the zero point zx; x is h x w x cin, wt the nv filter vectors, records and
 * (dead != 0) template described above (sub > 1: 1 x 1 windows, stride 1, no padding,
 * cin = 16 / sub); col: the scratch. Pointwise layers with cin = 16 / sub read their rows in
 * place (the last, partial group copied into col: no read past x). Band != 0 (few input
 * channels, lines of at least 4 pixels): per output row (band 1) or column (band 2) its input
 * re-laid out in col (utvm_mve_band) so that each pixel's patch is contiguous, taps ordered
 * (along, across, channel): kw x kh x cin for rows (no column dilation), kh x kw x cin for
 * columns (no row dilation), and read in place; col then holds the band's positions
 * ((len - 1) * stride + window along) x across x cin bytes and 16 more. Band 3: a pointwise
 * layer (1 x 1, stride 1, no padding) whose pixels are read in place as one line. Else the
 * patches of four pixels are gathered into col (64 * steps bytes). */
UTVM_INLINE void utvm_mve_conv42_impl(int8_t* out, const int8_t* x, int32_t h,
                                                                       int32_t w, int32_t cin, int32_t oh,
                                                                       int32_t ow, int32_t kh, int32_t kw,
                                                                       int32_t sh, int32_t sw, int32_t dh,
                                                                       int32_t dw, int32_t pad_top,
                                                                       int32_t pad_left, const int8_t* wt,
                                                                       int32_t nv, int32_t dead, int32_t cout,
                                                                       int32_t sub, int32_t band, int32_t zx,
                                                                       int8_t* col, int32_t mode, int32_t zy,
                                                                       int32_t lo, int32_t hi) {
  int32_t k = kh * kw * cin;
  int32_t steps = (k + 15) >> 4;
  int32_t t = utvm_mve_c42_tail(k, mode), fs = steps - (t > 0);
  int32_t npix = oh * ow;
  const int8_t* tmpl = wt + (nv / 2) * utvm_mve_c42_pair_bytes(fs, t, mode);
#ifdef UTVM_MVE_VECTOR
  int32_t gp = 4 * sub; /* pixels per group */
  int32_t full = npix / gp, rest = npix - full * gp;
  uint32x4_t offs = utvm_mve_lanes4_index(sub * cout), rowi = utvm_mve_lanes4_index(1);
  int32x4_t vlo = vdupq_n_s32(lo), vhi = vdupq_n_s32(hi), zyv = vdupq_n_s32(zy);
  int8x16_t zv = vdupq_n_s8((int8_t)zx);
  /* the groups in one asm statement when the step count is a constant */
  int32_t fast = UTVM_MVE_CONSTANT(steps) && UTVM_MVE_CONSTANT(band) && UTVM_MVE_CONSTANT(mode) &&
                 UTVM_MVE_CONSTANT(t) && utvm_mve_c42_fast(steps, t, mode);
  int32_t direct = kh == 1 && kw == 1 && sh == 1 && sw == 1 && !pad_top && !pad_left && cin * sub == 16;
  if (dead) {
    for (int32_t p = 0; p < npix; ++p) utvm_mve_copy_s8(out + p * cout, tmpl, cout);
  }
  if (band && nv) {
    /* per line a band (in col; band 3: x itself, the pixels of a pointwise layer one line), its
     * pixels four at a time (the last four overlapping the previous ones), the rows read in
     * place: row r of a group r * rs bytes after its first */
    int32_t rows = band != 2, flat = band == 3;
    int32_t len = flat ? npix : rows ? ow : oh, nlines = flat ? 1 : rows ? oh : ow;
    int32_t rs = (rows ? sw * kh : sh * kw) * cin;                /* band bytes per pixel */
    int32_t pos = (len - 1) * (rows ? sw : sh) + (rows ? kw : kh); /* band positions */
    int32_t ostep = (rows ? 1 : ow) * cout, lstep = (rows ? ow : 1) * cout;
    uint32x4_t boffs = utvm_mve_lanes4_index(ostep);
    const int8_t* src = flat ? x : col;
    for (int32_t line = 0; line < nlines; ++line) {
      if (!flat) utvm_mve_band(col, x, h, w, cin, line, band, pos, kh, kw, sh, sw, dh, dw, pad_top, pad_left, zv);
      for (int32_t p0 = 0; p0 < len; p0 += 4) {
        int32_t p = p0 + 4 > len ? len - 4 : p0;
        int8_t* o = out + line * lstep + p * ostep;
        if (fast && UTVM_MVE_CONSTANT(rs)) {
          utvm_mve_group42_asm(o, src + p * rs, rs, 16, rs > 42, wt, steps, t, nv, mode, boffs, zyv, vlo, vhi);
        } else {
          utvm_mve_group42(o, src + p * rs, rs, 16, 4, wt, steps, t, nv, 1, cout, mode, boffs, rowi, zy, vlo, vhi);
        }
      }
    }
    return;
  }
  /* the groups; with at least one whole group, the last one ends at the last pixel
   * (overlapping the one before: the same outputs stored twice), else a partial group */
  for (int32_t g = 0; g * gp < npix && nv; ++g) {
    int32_t p0 = full && g * gp + gp > npix ? npix - gp : g * gp;
    int32_t np = full ? gp : rest;
    const int8_t* rows = col;
    if (direct && np == gp) {
      rows = x + p0 * cin;
    } else if (direct) {
      utvm_mve_copy_s8(col, x, np * cin);
    } else {
      for (int32_t r = 0; r < np; ++r) {
        int32_t oy = (p0 + r) / ow, ox = (p0 + r) % ow;
        utvm_mve_pack_patch(col, r, x, h, w, cin, oy * sh - pad_top, ox * sw - pad_left, kh, kw, dh, dw, zv);
      }
    }
    if (np == gp && fast) {
      utvm_mve_group42_asm(out + p0 * cout, rows, 16, 64, 0, wt, steps, t, nv, mode, offs, zyv, vlo, vhi);
    } else {
      utvm_mve_group42(out + p0 * cout, rows, 16, 64, np, wt, steps, t, nv, sub, cout, mode, offs, rowi, zy, vlo,
                       vhi);
    }
  }
#else
  (void)col, (void)mode;
  for (int32_t p = 0; p < npix; ++p) {
    int32_t oy = p / ow, ox = p % ow;
    if (dead) {
      for (int32_t o = 0; o < cout; ++o) out[p * cout + o] = tmpl[o];
    }
    for (int32_t v = 0; v < nv; ++v) {
      const int8_t* pair = wt + (v >> 1) * utvm_mve_c42_pair_bytes(fs, t, mode);
      int32_t wb = utvm_mve_c42_wbytes(fs, t), v0 = v & ~1;
      int32_t off = utvm_mve_c42_rec(pair, wb, mode, v0, v & 1, 3);
      int32_t j = off / cout; /* vector v computes the pixels j, j + sub, ... */
      if (p % sub != j) continue;
      int32_t acc = 0;
      for (int32_t ry = 0; ry < kh; ++ry) {
        for (int32_t rx = 0; rx < kw; ++rx) {
          int32_t iy = oy * sh - pad_top + ry * dh, ix = ox * sw - pad_left + rx * dw;
          int32_t in = iy >= 0 && iy < h && ix >= 0 && ix < w;
          for (int32_t c = 0; c < cin; ++c) {
            /* lane of the filter vector: taps (ry, rx), or (rx, ry) for bands along rows */
            int32_t l = (band == 1 ? rx * kh + ry : ry * kw + rx) * cin + c + j * cin;
            acc += (in ? x[(iy * w + ix) * cin + c] : zx) * utvm_mve_c42_w(pair, fs, t, v & 1, l);
          }
        }
      }
      int32_t r = utvm_mve_mbqm(acc + utvm_mve_c42_rec(pair, wb, mode, v0, v & 1, 0),
                                utvm_mve_c42_rec(pair, wb, mode, v0, v & 1, 1),
                                utvm_mve_c42_rec(pair, wb, mode, v0, v & 1, 2));
      out[(p - j) * cout + off] = utvm_mve_clamp_s8(r + zy, lo, hi);
    }
  }
#endif
}

UTVM_INLINE int32_t utvm_mve_conv42_s8(void* out, void* x, int32_t h, int32_t w,
                                                                        int32_t cin, int32_t oh, int32_t ow,
                                                                        int32_t kh, int32_t kw, int32_t sh,
                                                                        int32_t sw, int32_t dh, int32_t dw,
                                                                        int32_t pad_top, int32_t pad_left, void* wt,
                                                                        int32_t nv, int32_t dead, int32_t cout,
                                                                        int32_t sub, int32_t band, int32_t zx,
                                                                        void* col, int32_t mode, int32_t zy,
                                                                        int32_t lo, int32_t hi) {
  utvm_mve_conv42_impl((int8_t*)out, (const int8_t*)x, h, w, cin, oh, ow, kh, kw, sh, sw, dh, dw, pad_top, pad_left,
                       (const int8_t*)wt, nv, dead, cout, sub, band, zx, (int8_t*)col, mode, zy, lo, hi);
  return 0;
}

#endif /* UTVM_KERNELS_CONV_MVE_H_ */
