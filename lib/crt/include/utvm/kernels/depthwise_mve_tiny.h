/* utvm/kernels/depthwise_mve_tiny.h: moved from kernels_mve.h by the split of issue 24 (one header per
 * operator family and instruction set, the bodies unchanged). */
#ifndef UTVM_KERNELS_DEPTHWISE_MVE_TINY_H_
#define UTVM_KERNELS_DEPTHWISE_MVE_TINY_H_

#include "common_mve.h"
#include "requant_mve.h"
#include "copy_mve.h"
#include "conv_mve.h"


/* ---------------------------------------------------------------------------------------------
 * 3x3 depthwise convolutions of tiny maps (h * w <= 36, w <= 6; depth multiplier 1, any
 * channel count): utvm_mve_dwt_s8.
 *
 * Every output pixel is its own case, fully unrolled (the geometry is constant): per block of
 * 16 channels the input is copied once into planes (channel j's h x w values at tile + j * S,
 * S = h * w, by one scatter per pixel, two when 15 * S > 255); then per group of 4 channels and
 * output pixel, 4 VMLADAV, each of the 16 bytes at the pixel's first valid tap in a channel's
 * plane (immediate offsets) with that channel's filter vector of the pixel's border class: the
 * 9 weights at lanes (row - first row) * w + (column - first column) for the taps inside the
 * input only (the padding taps skipped, not multiplied by the zero point; the other lanes,
 * whatever they read, zero). The four dot products become one vector (paired VMOVs), get the
 * class's biases (the zero point folded over the taps the pixel really has, at compile time),
 * are requantized (per-lane multipliers and shifts: VQRDMULH, minus one on negative values
 * when every shift is a right shift, VRSHL) and stored contiguously.
 * The classes: per output row the rows of its window inside the input (first, end), in the
 * order they first occur, likewise per column; class = row class * ncc + column class, the row
 * and column classes 4 bits per output row / column in rcls / ccls. With `pad` the planes hold a
 * row of the zero point above and below the input and a column of it shared by the ends of
 * neighbouring rows (rows of w + 1 bytes): every window is whole, one class, the biases folded
 * over all 9 taps. With int8's whole range as the clamp, the pixels run class by class, the 4
 * filters of a class of several pixels kept in registers (VQMOVNB saturates instead of
 * VMAX/VMIN with two vector registers).
 * The constant, per group of 4 channels (the last one zero-padded), ns classes:
 * [class][channel][16] filter bytes, [class][channel] biases, then the 4 multipliers and the 4
 * shifts (int32): (80 * ns + 32) bytes.
 * ------------------------------------------------------------------------------------------ */

static inline int32_t utvm_mve_dwt_group_bytes(int32_t ns) { return 80 * ns + 32; }

/* the class of output pixel (i, j) */
static inline int32_t utvm_mve_dwt_slot(int32_t i, int32_t j, int32_t rcls, int32_t ccls, int32_t ncc) {
  return (int32_t)(((uint32_t)rcls >> (4 * i)) & 15u) * ncc + (int32_t)(((uint32_t)ccls >> (4 * j)) & 15u);
}

/* the first input row (or column) inside the input of a window starting at v0 */
static inline int32_t utvm_mve_dwt_first(int32_t v0) { return v0 < 0 ? 0 : v0; }

/* the offset of output pixel p's first valid tap in its plane (pad: padded planes, its first
 * tap) */
static inline int32_t utvm_mve_dwt_base(int32_t p, int32_t w, int32_t ow, int32_t sh, int32_t sw, int32_t top,
                                        int32_t left, int32_t pad) {
  if (pad) return w + 2 + ((p / ow) * sh - top) * (w + 1) + (p % ow) * sw - left;
  return utvm_mve_dwt_first((p / ow) * sh - top) * w + utvm_mve_dwt_first((p % ow) * sw - left);
}

/* the bytes of a channel's plane: h x w, or (pad) with a row of the zero point above and below
 * and a column shared by the ends of neighbouring rows, (h + 2) x (w + 1) + 1 */
static inline int32_t utvm_mve_dwt_stride(int32_t h, int32_t w, int32_t pad) {
  return pad ? (h + 2) * (w + 1) + 1 : h * w;
}

#ifdef UTVM_MVE_VECTOR
/* np pixels of channels [cb0, cb0 + n) into planes hw bytes apart:
 * tile + j * hw + p = x[p * c + cb0 + j] */
UTVM_INLINE void utvm_mve_dwt_planes(int8_t* tile, const int8_t* x, int32_t np,
                                                                      int32_t hw, int32_t c, int32_t n) {
  uint8x16_t lane = vidupq_n_u8(0, 1);
#ifdef __OPTIMIZE__
  if (n == 16 && 15 * hw <= 255) { /* a pixel's 16 channels by one load and one scatter */
    uint8x16_t off = vmulq_n_u8(lane, (uint8_t)hw);
    int8x16_t v;
    register int32_t count __asm__("lr") = np;
    __asm__ volatile("dls lr, lr\n1:\n\tvldrb.8 %q[v], [%[x]]\n\tadd %[x], %[x], %[c]\n\t"
                     "vstrb.8 %q[v], [%[t], %q[off]]\n\tadds %[t], %[t], #1\n\tle lr, 1b"
                     : [v] "=&w"(v), [x] "+&r"(x), [t] "+&r"(tile), [n] "+&r"(count)
                     : [c] "r"(c), [off] "w"(off)
                     : "memory");
    (void)v, (void)count;
    return;
  }
  if (n == 16 && np == hw && c <= 248 && hw % 2 == 0 && 7 * hw + 1 <= 255) {
    /* two pixels' 8 channels by one gather (offsets j, c + j) and one scatter (j * S, j * S + 1),
     * twice (channels 8..15: 8 bytes further in x, 8 * S in the tile) */
    uint8x16_t hi = vshrq_n_u8(lane, 3), j = vandq_u8(lane, vdupq_n_u8(7));
    uint8x16_t g0 = vaddq_u8(j, vmulq_n_u8(hi, (uint8_t)c)), g1 = vaddq_u8(g0, vdupq_n_u8(8));
    uint8x16_t off = vaddq_u8(vmulq_n_u8(j, (uint8_t)hw), hi);
    int8_t* t1 = tile + 8 * hw;
    int8x16_t v;
    register int32_t count __asm__("lr") = hw / 2;
    __asm__ volatile("dls lr, lr\n1:\n\tvldrb.u8 %q[v], [%[x], %q[g0]]\n\t"
                     "vstrb.8 %q[v], [%[t0], %q[off]]\n\tvldrb.u8 %q[v], [%[x], %q[g1]]\n\t"
                     "vstrb.8 %q[v], [%[t1], %q[off]]\n\tadd %[x], %[x], %[c2]\n\tadds %[t0], %[t0], #2\n\t"
                     "adds %[t1], %[t1], #2\n\tle lr, 1b"
                     : [v] "=&w"(v), [x] "+&r"(x), [t0] "+&r"(tile), [t1] "+&r"(t1), [n] "+&r"(count)
                     : [c2] "r"(2 * c), [g0] "w"(g0), [g1] "w"(g1), [off] "w"(off)
                     : "memory");
    (void)v, (void)count;
    return;
  }
  if (n == 16 && 7 * hw <= 255) { /* lanes 0..7 from tile, 8..15 from tile + 8 * S */
    uint8x16_t off = vmulq_n_u8(vandq_u8(lane, vdupq_n_u8(7)), (uint8_t)hw);
    int8_t* t1 = tile + 8 * hw;
    int8x16_t v;
    register int32_t count __asm__("lr") = np;
    /* the E slot of a VPT block inverts P0: set again per pixel */
    __asm__ volatile("dls lr, lr\n1:\n\tvldrb.8 %q[v], [%[x]]\n\tadd %[x], %[x], %[c]\n\tvmsr p0, %[lo8]\n\t"
                     "vpste\n\tvstrbt.8 %q[v], [%[t0], %q[off]]\n\tvstrbe.8 %q[v], [%[t1], %q[off]]\n\t"
                     "adds %[t0], %[t0], #1\n\tadds %[t1], %[t1], #1\n\tle lr, 1b"
                     : [v] "=&w"(v), [x] "+&r"(x), [t0] "+&r"(tile), [t1] "+&r"(t1), [n] "+&r"(count)
                     : [c] "r"(c), [off] "w"(off), [lo8] "r"(0x00ff)
                     : "memory", "cc");
    (void)v, (void)count;
    return;
  }
#endif
  mve_pred16_t in = vctp8q((uint32_t)n);
  if (15 * hw <= 255) {
    uint8x16_t off = vmulq_n_u8(lane, (uint8_t)hw);
    for (int32_t p = 0; p < np; ++p, x += c) vstrbq_scatter_offset_s8(tile + p, off, vldrbq_z_s8(x, in));
  } else { /* lanes 0..7 from tile, 8..15 from tile + 8 * S: offsets up to 7 * 36 */
    uint8x16_t off = vmulq_n_u8(vandq_u8(lane, vdupq_n_u8(7)), (uint8_t)hw);
    for (int32_t p = 0; p < np; ++p, x += c) {
      int8x16_t v = vldrbq_z_s8(x, in);
      vstrbq_scatter_offset_p_s8(tile + p, off, v, 0x00ff);
      vstrbq_scatter_offset_p_s8(tile + 8 * hw + p, off, v, 0xff00);
    }
  }
}

/* One pixel of 4 channels (C): planes pl + k * hw (k = 0..3), b the pixel's first valid tap,
 * grp the group's constants, slot its class; the lanes of `in` stored at o. */
UTVM_INLINE void utvm_mve_dwt_pixel_c(int8_t* o, const int8_t* pl, int32_t hw,
                                                                       int32_t b, const int8_t* grp, int32_t ns,
                                                                       int32_t slot, int32_t right, int32_t zy,
                                                                       int32x4_t lo, int32x4_t hi, mve_pred16_t in,
                                                                       int32_t swapped) {
  int32_t e[4];
  for (int32_t k = 0; k < 4; ++k) e[k] = vmladavq_s8(vldrbq_s8(pl + k * hw + b), vldrbq_s8(grp + slot * 64 + k * 16));
  int32x4_t v = swapped ? utvm_mve_lanes4(e[2], e[3], e[0], e[1]) : utvm_mve_lanes4(e[0], e[1], e[2], e[3]);
  const int32_t* words = (const int32_t*)(const void*)(grp + ns * 64);
  v = vaddq_s32(v, vldrwq_s32(words + slot * 4));
  int32x4_t m = vldrwq_s32(words + ns * 4), sh = vldrwq_s32(words + ns * 4 + 4);
  if (right) {
    v = vaddq_s32(vqrdmulhq_s32(v, m), vshrq_n_s32(v, 31));
  } else {
    v = vqrdmulhq_s32(vshlq_s32(v, vmaxq_s32(sh, vdupq_n_s32(0))), m);
    sh = vminq_s32(sh, vdupq_n_s32(0));
    v = vqaddq_s32(v, vshrq_n_s32(vandq_s32(v, sh), 31));
  }
  v = vminq_s32(vmaxq_s32(vaddq_n_s32(vrshlq_s32(v, sh), zy), lo), hi);
  vstrbq_p_s32(o, v, in);
}

#ifdef __OPTIMIZE__
/* The same in asm statements (every shift a right shift; pl and grp point 64 and mid bytes into
 * the planes and the group's constants: B, F, R the immediate offsets of the first plane's tap,
 * the class's first filter and its biases from them). UTVM_MVE_DWT_PIXEL: the filters loaded
 * (LD: vldrw) or kept in registers from the pixel before (LD empty; FK: their operands); the
 * clamp to [lo, hi], or (SAT) the saturation to int8 */
#define UTVM_MVE_DWT_MAC(K, E, LD, F)                                                              \
  "vldrb.8 %q[d], [%[pl], #(%c[b] + " #K " * %c[hw])]\n\t" LD                                     \
  "vmladav.s8 " E ", %q[d], " F "\n\t"
#define UTVM_MVE_DWT_LD(K) "vldrw.32 %q[f], [%[grp], #(%c[fo] + " #K " * 16)]\n\t"
#define UTVM_MVE_DWT_CLAMP "vmax.s32 %q[v], %q[v], %q[lo]\n\tvmin.s32 %q[v], %q[v], %q[hi]\n\t"
#define UTVM_MVE_DWT_SAT "vqmovnb.s32 %q[v], %q[v]\n\tvqmovnb.s16 %q[v], %q[v]\n\t"
#define UTVM_MVE_DWT_PIXEL(LANES, L0, L1, L2, L3, F0, F1, F2, F3, CLAMP, FOUT, ...)                   \
  __asm__ volatile(UTVM_MVE_DWT_MAC(0, "%[e0]", L0, F0) UTVM_MVE_DWT_MAC(1, "%[e1]", L1, F1)       \
                   UTVM_MVE_DWT_MAC(2, "%[e2]", L2, F2) UTVM_MVE_DWT_MAC(3, "%[e3]", L3, F3) LANES  \
                   "vldrw.32 %q[d], [%[grp], #%c[ro]]\n\t"                                        \
                   "vadd.i32 %q[v], %q[v], %q[d]\n\t"                                             \
                   "vshr.s32 %q[d], %q[v], #31\n\t"                                               \
                   "vqrdmulh.s32 %q[v], %q[v], %q[m]\n\t"                                         \
                   "vadd.i32 %q[v], %q[v], %q[d]\n\t"                                             \
                   "vrshl.s32 %q[v], %q[v], %q[sh]\n\t"                                           \
                   "vadd.i32 %q[v], %q[v], %[zy]\n\t" CLAMP                                        \
                   "vstrb.32 %q[v], [%[o]]"                                                       \
                   : [e0] "=&Te"(e0), [e1] "=&Te"(e1), [e2] "=&Te"(e2), [e3] "=&Te"(e3), [d] "=&w"(d), \
                     [v] "=&w"(v) FOUT                                                             \
                   : [pl] "r"(pl), [grp] "r"(grp), [o] "l"(o), [b] "i"(b - 64), [hw] "i"(hw),           \
                     [ro] "i"(ns * 64 + slot * 16 - mid), [m] "w"(m), [sh] "w"(sh), [zy] "r"(zy),       \
                     __VA_ARGS__                                                                     \
                   : "memory")
#define UTVM_MVE_DWT_LANES_0 UTVM_MVE_LANES4("%q[v]", "%[e0]", "%[e1]", "%[e2]", "%[e3]")
#define UTVM_MVE_DWT_LANES_1 UTVM_MVE_LANES4("%q[v]", "%[e2]", "%[e3]", "%[e0]", "%[e1]")
#define UTVM_MVE_DWT_LANES(SW) UTVM_MVE_DWT_LANES_##SW
/* loading its filters, clamping to [lo, hi] (sat: saturating to int8) */
UTVM_INLINE void utvm_mve_dwt_pixel_asm(int8_t* o, const int8_t* pl, int32_t hw,
                                                                         int32_t b, const int8_t* grp, int32_t mid,
                                                                         int32_t ns, int32_t slot, int32x4_t m,
                                                                         int32x4_t sh, int32_t zy, int32x4_t lo,
                                                                         int32x4_t hi, int32_t sat, int32_t swapped) {
  int32_t e0, e1, e2, e3;
  int8x16_t d, f;
  int32x4_t v;
#define UTVM_MVE_DWT_LOADING(SW, CLAMP, ...)                                                       \
  UTVM_MVE_DWT_PIXEL(UTVM_MVE_DWT_LANES(SW), UTVM_MVE_DWT_LD(0), UTVM_MVE_DWT_LD(1), UTVM_MVE_DWT_LD(2),       \
                     UTVM_MVE_DWT_LD(3), "%q[f]", "%q[f]", "%q[f]", "%q[f]", CLAMP, UTVM_MVE_DWT_F,        \
                     [fo] "i"(slot * 64 - mid), __VA_ARGS__)
#define UTVM_MVE_DWT_F , [f] "=&w"(f)
  if (sat && swapped) {
    UTVM_MVE_DWT_LOADING(1, UTVM_MVE_DWT_SAT, "m"(*grp));
  } else if (sat) {
    UTVM_MVE_DWT_LOADING(0, UTVM_MVE_DWT_SAT, "m"(*grp));
  } else if (swapped) {
    UTVM_MVE_DWT_LOADING(1, UTVM_MVE_DWT_CLAMP, [lo] "w"(lo), [hi] "w"(hi));
  } else {
    UTVM_MVE_DWT_LOADING(0, UTVM_MVE_DWT_CLAMP, [lo] "w"(lo), [hi] "w"(hi));
  }
#undef UTVM_MVE_DWT_LOADING
  (void)e0, (void)e1, (void)e2, (void)e3, (void)d, (void)f, (void)v;
}
#undef UTVM_MVE_DWT_F

/* a class's 4 filters into registers */
UTVM_INLINE void utvm_mve_dwt_filters(const int8_t* grp, int32_t fo, int8x16_t* f) {
  __asm__("vldrw.32 %q[f0], [%[grp], #%c[fo]]\n\tvldrw.32 %q[f1], [%[grp], #(%c[fo] + 16)]\n\t"
          "vldrw.32 %q[f2], [%[grp], #(%c[fo] + 32)]\n\tvldrw.32 %q[f3], [%[grp], #(%c[fo] + 48)]"
          : [f0] "=&w"(f[0]), [f1] "=&w"(f[1]), [f2] "=&w"(f[2]), [f3] "=&w"(f[3])
          : [grp] "r"(grp), [fo] "i"(fo), "m"(*(const int8_t(*)[64])(const void*)(grp + fo)));
}

/* with the class's filters in registers, saturating to int8 */
UTVM_INLINE void utvm_mve_dwt_pixel_sat(int8_t* o, const int8_t* pl, int32_t hw,
                                                                         int32_t b, const int8_t* grp, int32_t mid,
                                                                         int32_t ns, int32_t slot, int32x4_t m,
                                                                         int32x4_t sh, int32_t zy,
                                                                         const int8x16_t* f, int32_t swapped) {
  int32_t e0, e1, e2, e3;
  int8x16_t d;
  int32x4_t v;
#define UTVM_MVE_DWT_KEPT(SW)                                                                      \
  UTVM_MVE_DWT_PIXEL(UTVM_MVE_DWT_LANES(SW), "", "", "", "", "%q[f0]", "%q[f1]", "%q[f2]", "%q[f3]",          \
                     UTVM_MVE_DWT_SAT, , [f0] "w"(f[0]), [f1] "w"(f[1]), [f2] "w"(f[2]), [f3] "w"(f[3]))
  if (swapped) {
    UTVM_MVE_DWT_KEPT(1);
  } else {
    UTVM_MVE_DWT_KEPT(0);
  }
#undef UTVM_MVE_DWT_KEPT
  (void)e0, (void)e1, (void)e2, (void)e3, (void)d, (void)v;
}
#undef UTVM_MVE_DWT_PIXEL
#undef UTVM_MVE_DWT_LANES
#undef UTVM_MVE_DWT_LANES_0
#undef UTVM_MVE_DWT_LANES_1
#undef UTVM_MVE_DWT_SAT
#undef UTVM_MVE_DWT_CLAMP
#undef UTVM_MVE_DWT_LD
#undef UTVM_MVE_DWT_MAC
#endif

/* the output pixels of channels [ch, ch + 4) (of which n < 4 may exist: the rest not stored);
 * sat: the clamp is int8's range */
UTVM_INLINE void utvm_mve_dwt_group(
    int8_t* out, const int8_t* pl, const int8_t* grp, int32_t w, int32_t c, int32_t oh, int32_t ow, int32_t sh,
    int32_t sw, int32_t top, int32_t left, int32_t rcls, int32_t ccls, int32_t ncc, int32_t ns, int32_t hw,
    int32_t right, int32_t n, int32_t zy, int32x4_t lo, int32x4_t hi, int32_t sat, int32_t pad, int32_t swapped) {
#ifdef __OPTIMIZE__
  /* the group's constants from mid bytes in: every offset within VLDRW's reach */
  int32_t mid = (utvm_mve_dwt_group_bytes(ns) / 2) & ~15;
  const int32_t* words = (const int32_t*)(const void*)(grp + ns * 80);
  int32x4_t m = vldrwq_s32(words), shv = vldrwq_s32(words + 4);
#endif
#ifdef __OPTIMIZE__
  if (UTVM_MVE_CONSTANT(hw) && UTVM_MVE_CONSTANT(ns) && UTVM_MVE_CONSTANT(sat) && sat && right && n == 4) {
    /* the pixels class by class, the filters of a class of several pixels loaded once */
#pragma GCC unroll 16
    for (int32_t k = 0; k < ns; ++k) {
      int32_t count = 0;
#pragma GCC unroll 64
      for (int32_t p = 0; p < oh * ow; ++p) count += utvm_mve_dwt_slot(p / ow, p % ow, rcls, ccls, ncc) == k;
      int32_t keep = count > 1 && UTVM_MVE_CONSTANT(k);
      int8x16_t f[4] = {vdupq_n_s8(0), vdupq_n_s8(0), vdupq_n_s8(0), vdupq_n_s8(0)};
      if (keep) utvm_mve_dwt_filters(grp + mid, k * 64 - mid, f);
#pragma GCC unroll 64
      for (int32_t p = 0; p < oh * ow; ++p) {
        int32_t b = utvm_mve_dwt_base(p, w, ow, sh, sw, top, left, pad);
        if (utvm_mve_dwt_slot(p / ow, p % ow, rcls, ccls, ncc) != k) continue;
        if (!(UTVM_MVE_CONSTANT(b) && UTVM_MVE_CONSTANT(k))) { /* loops not unrolled */
          utvm_mve_dwt_pixel_c(out + p * c, pl, hw, b, grp, ns, k, right, zy, lo, hi, 0xffff, swapped);
        } else if (keep) {
          utvm_mve_dwt_pixel_sat(out + p * c, pl + 64, hw, b, grp + mid, mid, ns, k, m, shv, zy, f, swapped);
        } else {
          utvm_mve_dwt_pixel_asm(out + p * c, pl + 64, hw, b, grp + mid, mid, ns, k, m, shv, zy, lo, hi, 1, swapped);
        }
      }
    }
    return;
  }
#else
  (void)sat;
#endif
#pragma GCC unroll 64
  for (int32_t p = 0; p < oh * ow; ++p) {
    int32_t b = utvm_mve_dwt_base(p, w, ow, sh, sw, top, left, pad);
    int32_t slot = utvm_mve_dwt_slot(p / ow, p % ow, rcls, ccls, ncc);
    int8_t* o = out + p * c;
#ifdef __OPTIMIZE__
    if (UTVM_MVE_CONSTANT(b) && UTVM_MVE_CONSTANT(slot) && UTVM_MVE_CONSTANT(hw) && UTVM_MVE_CONSTANT(ns) &&
        right && n == 4) {
      utvm_mve_dwt_pixel_asm(o, pl + 64, hw, b, grp + mid, mid, ns, slot, m, shv, zy, lo, hi, 0, swapped);
      continue;
    }
#endif
    utvm_mve_dwt_pixel_c(o, pl, hw, b, grp, ns, slot, right, zy, lo, hi, vctp32q((uint32_t)n), swapped);
  }
}

UTVM_INLINE void utvm_mve_dwt_run(
    int8_t* out, const int8_t* x, int32_t h, int32_t w, int32_t c, int32_t oh, int32_t ow, int32_t sh, int32_t sw,
    int32_t top, int32_t left, const int8_t* wt, int32_t zy, int32_t lo, int32_t hi, int32_t right, int32_t rcls,
    int32_t ccls, int32_t ncc, int32_t ns, int32_t zx, int32_t pad, int8_t* tile, int32_t swapped) {
  int32_t hw = utvm_mve_dwt_stride(h, w, pad), gb = utvm_mve_dwt_group_bytes(ns);
  int32x4_t vlo = vdupq_n_s32(lo), vhi = vdupq_n_s32(hi);
  if (pad) utvm_mve_fill_s8(tile, zx, 16 * hw + 16); /* the padding stays from block to block */
  for (int32_t cb0 = 0; cb0 < c; cb0 += 16) {
    int32_t n = c - cb0 < 16 ? c - cb0 : 16;
    if (pad) {
      for (int32_t iy = 0; iy < h; ++iy) {
        utvm_mve_dwt_planes(tile + w + 2 + iy * (w + 1), x + iy * w * c + cb0, w, hw, c, n);
      }
    } else {
      utvm_mve_dwt_planes(tile, x + cb0, hw, hw, c, n);
    }
    for (int32_t j = 0; j < n; j += 4, wt += gb) {
      utvm_mve_dwt_group(out + cb0 + j, tile + j * hw, wt, w, c, oh, ow, sh, sw, top, left, rcls, ccls, ncc, ns, hw,
                         right, n - j < 4 ? n - j : 4, zy, vlo, vhi, lo == -128 && hi == 127, pad, swapped);
    }
  }
}
#endif

/* Depthwise 3 x 3 convolution (multiplier 1) of a tiny map, the whole layer (see above); wt:
 * the groups' constants; right: every shift a right shift; pad: planes padded with the zero
 * point zx (one class: windows within one position of the input on every side, w <= 5); tile:
 * 16 * utvm_mve_dwt_stride + 16 bytes. */
UTVM_INLINE void utvm_mve_dwt_impl(
    int8_t* out, const int8_t* x, int32_t h, int32_t w, int32_t c, int32_t oh, int32_t ow, int32_t sh, int32_t sw,
    int32_t top, int32_t left, const int8_t* wt, int32_t zy, int32_t lo, int32_t hi, int32_t right, int32_t rcls,
    int32_t ccls, int32_t ncc, int32_t ns, int32_t zx, int32_t pad, int8_t* tile) {
#ifdef UTVM_MVE_VECTOR
  /* the lane order of paired VMOVs (QEMU 7.2 puts a, b, c, d in lanes 2, 3, 0, 1) */
  if (vgetq_lane_s32(utvm_mve_lanes4(0, 1, 2, 3), 0) != 0) {
    utvm_mve_dwt_run(out, x, h, w, c, oh, ow, sh, sw, top, left, wt, zy, lo, hi, right, rcls, ccls, ncc, ns, zx, pad,
                     tile, 1);
  } else {
    utvm_mve_dwt_run(out, x, h, w, c, oh, ow, sh, sw, top, left, wt, zy, lo, hi, right, rcls, ccls, ncc, ns, zx, pad,
                     tile, 0);
  }
#else
  int32_t gb = utvm_mve_dwt_group_bytes(ns);
  (void)right, (void)tile;
  for (int32_t ch = 0; ch < c; ++ch) {
    const int8_t* grp = wt + (ch / 4) * gb;
    const int32_t* words = (const int32_t*)(const void*)(grp + ns * 64);
    int32_t k = ch % 4;
    for (int32_t p = 0; p < oh * ow; ++p) {
      int32_t i = p / ow, j = p % ow, pitch = pad ? w + 1 : w;
      int32_t y0 = i * sh - top, x0 = j * sw - left;
      int32_t slot = utvm_mve_dwt_slot(i, j, rcls, ccls, ncc);
      const int8_t* f = grp + slot * 64 + k * 16;
      int32_t acc = words[slot * 4 + k];
      if (!pad) y0 = utvm_mve_dwt_first(y0), x0 = utvm_mve_dwt_first(x0);
      for (int32_t l = 0; l < 16; ++l) {
        int32_t iy = y0 + l / pitch, ix = x0 + l % pitch;
        int32_t in = iy >= 0 && iy < h && ix >= 0 && ix < w;
        if (f[l]) acc += (in ? x[(iy * w + ix) * c + ch] : zx) * f[l];
      }
      int32_t v = utvm_mve_mbqm(acc, words[ns * 4 + k], words[ns * 4 + 4 + k]);
      out[p * c + ch] = utvm_mve_clamp_s8(v + zy, lo, hi);
    }
  }
#endif
}

UTVM_INLINE int32_t utvm_mve_dwt_s8(void* out, void* x, int32_t h, int32_t w,
                                                                     int32_t c, int32_t oh, int32_t ow, int32_t sh,
                                                                     int32_t sw, int32_t pad_top, int32_t pad_left,
                                                                     void* wt, int32_t zy, int32_t lo, int32_t hi,
                                                                     int32_t right, int32_t rcls, int32_t ccls,
                                                                     int32_t ncc, int32_t ns, int32_t zx,
                                                                     int32_t pad, void* tile) {
  utvm_mve_dwt_impl((int8_t*)out, (const int8_t*)x, h, w, c, oh, ow, sh, sw, pad_top, pad_left, (const int8_t*)wt,
                    zy, lo, hi, right, rcls, ccls, ncc, ns, zx, pad, (int8_t*)tile);
  return 0;
}

#endif /* UTVM_KERNELS_DEPTHWISE_MVE_TINY_H_ */
