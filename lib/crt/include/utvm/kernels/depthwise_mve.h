/* utvm/kernels/depthwise_mve.h: moved from kernels_mve.h by the split of issue 24 (one header per
 * operator family and instruction set, the bodies unchanged). */
#ifndef UTVM_KERNELS_DEPTHWISE_MVE_H_
#define UTVM_KERNELS_DEPTHWISE_MVE_H_

#include "common_mve.h"
#include "requant_mve.h"
#include "conv_mve.h"


/* 3x3 depthwise convolution (depth multiplier 1), one output row at a time:
 *   out[ox * c + ch] for ox < ow, ch < c (a multiple of 4),
 * from x (h x w x c): the taps of pixel ox are input rows iy0 + ry * dh and columns
 * ox * sw - pad_left + rx * dw (ry, rx < 3), weights wt (3 x 3 x c); the taps outside the input
 * count as the zero point zx (the biases are folded with zx). Nothing is copied: a tap outside
 * the input adds zx times its weight (one VMLA by the scalar zx: cheaper than the tap it
 * replaces). Tap masks: bit ry * 3 + rx of a pixel, bit p * 3 + rx (column rx of pixel p) of a
 * group of four pixels, set when the tap is inside the input. */

/* bit rx: column ix0 + rx * dw inside the input (0 <= column < w) */
static inline int32_t utvm_mve_dw_cols(int32_t w, int32_t ix0, int32_t dw) {
  int32_t m = 0;
  for (int32_t rx = 0; rx < 3; ++rx) {
    int32_t ix = ix0 + rx * dw;
    m |= (ix >= 0 && ix < w) << rx;
  }
  return m;
}

/* the 9-bit tap mask of a pixel: rows rv (bit ry: the row inside), columns cols */
static inline int32_t utvm_mve_dw_taps(int32_t rv, int32_t cols) {
  return ((rv & 1) ? cols : 0) | ((rv & 2) ? cols << 3 : 0) | ((rv & 4) ? cols << 6 : 0);
}

#ifdef UTVM_MVE_VECTOR
/* Four pixels (columns step bytes apart), all channels: rows[ry] points to the first tap of
 * pixel 0 in input row ry (not read when bit ry of rv is clear), cm is the 12-bit column mask
 * of the group. Each tap loads the weights once for the four pixels; the masks are constants
 * where it is called (interior, left border, right border), so the tests fold away. */
UTVM_INLINE void utvm_mve_dw_group4(int8_t* out, const int8_t* const rows[3],
                                                                     int32_t rv, int32_t cm, int32_t c,
                                                                     int32_t step, int32_t d, const int8_t* wt,
                                                                     int32_t zx, const utvm_mve_rq_t* q) {
  for (int32_t ch = 0; ch < c; ch += 4) {
    const int8_t* wp = wt + ch;
    int32x4_t a0 = utvm_mve_rq_bias4(q, ch, 0);
    int32x4_t a1 = a0, a2 = a0, a3 = a0;
    /* one tap after the other (the empty asm orders them): gcc would otherwise load the taps
     * first and spill, with 8 vector registers */
#define UTVM_MVE_DW_TAP(rx)                                                                    \
  do {                                                                                         \
    int32x4_t wv = vldrbq_s32(wp);                                                             \
    a0 = (cm & (1 << (rx))) ? utvm_mve_mla(a0, vldrbq_s32(p0), wv) : vmlaq_n_s32(a0, wv, zx);  \
    a1 = (cm & (8 << (rx))) ? utvm_mve_mla(a1, vldrbq_s32(p1), wv) : vmlaq_n_s32(a1, wv, zx);  \
    a2 = (cm & (64 << (rx))) ? utvm_mve_mla(a2, vldrbq_s32(p2), wv) : vmlaq_n_s32(a2, wv, zx); \
    a3 = (cm & (512 << (rx))) ? utvm_mve_mla(a3, vldrbq_s32(p3), wv) : vmlaq_n_s32(a3, wv, zx); \
    wp += c;                                                                                   \
    p0 += d;                                                                                   \
    p1 += d;                                                                                   \
    p2 += d;                                                                                   \
    p3 += d;                                                                                   \
    __asm__("" : "+w"(a0), "+w"(a1), "+w"(a2), "+w"(a3), "+r"(wp), "+r"(p0), "+r"(p1), "+r"(p2), "+r"(p3)); \
  } while (0)
    /* a row outside the input: zx times the sum of its three weights */
#define UTVM_MVE_DW_ROW(ry)                                                                    \
  if (rv & (1 << (ry))) {                                                                      \
    const int8_t* p0 = rows[ry] + ch;                                                          \
    const int8_t* p1 = p0 + step;                                                              \
    const int8_t* p2 = p1 + step;                                                              \
    const int8_t* p3 = p2 + step;                                                              \
    UTVM_MVE_DW_TAP(0);                                                                        \
    UTVM_MVE_DW_TAP(1);                                                                        \
    UTVM_MVE_DW_TAP(2);                                                                        \
  } else {                                                                                     \
    int32x4_t s = vaddq_s32(vaddq_s32(vldrbq_s32(wp), vldrbq_s32(wp + c)), vldrbq_s32(wp + 2 * c)); \
    a0 = vmlaq_n_s32(a0, s, zx);                                                               \
    a1 = vmlaq_n_s32(a1, s, zx);                                                               \
    a2 = vmlaq_n_s32(a2, s, zx);                                                               \
    a3 = vmlaq_n_s32(a3, s, zx);                                                               \
    wp += 3 * c;                                                                               \
  }
    UTVM_MVE_DW_ROW(0)
    UTVM_MVE_DW_ROW(1)
    UTVM_MVE_DW_ROW(2)
#undef UTVM_MVE_DW_ROW
#undef UTVM_MVE_DW_TAP
    int32x4_t m = utvm_mve_rq_mult4(q, ch, 0);
    int32x4_t sh = utvm_mve_rq_shift4(q, ch, 0);
    int8_t* op = out + ch;
    vstrbq_s32(op, utvm_mve_rq_apply4(q, a0, m, sh));
    vstrbq_s32(op + c, utvm_mve_rq_apply4(q, a1, m, sh));
    vstrbq_s32(op + 2 * c, utvm_mve_rq_apply4(q, a2, m, sh));
    vstrbq_s32(op + 3 * c, utvm_mve_rq_apply4(q, a3, m, sh));
  }
}

/* One pixel, all channels: rows as above, tm its 9-bit tap mask. */
UTVM_INLINE void utvm_mve_dw_pixel(int8_t* out, const int8_t* const rows[3],
                                                                    int32_t tm, int32_t c, int32_t d,
                                                                    const int8_t* wt, int32_t zx,
                                                                    const utvm_mve_rq_t* q) {
  for (int32_t ch = 0; ch < c; ch += 4) {
    const int8_t* wp = wt + ch;
    int32x4_t acc = utvm_mve_rq_bias4(q, ch, 0);
    /* the nine taps written out (a loop with the mask tests is not unrolled) */
#define UTVM_MVE_DW_PTAP(ry, rx)                                                                     \
  do {                                                                                               \
    int32x4_t wv = vldrbq_s32(wp + ((ry) * 3 + (rx)) * c);                                           \
    acc = (tm & (1 << ((ry) * 3 + (rx)))) ? utvm_mve_mla(acc, vldrbq_s32(rows[ry] + ch + (rx) * d), wv) \
                                          : vmlaq_n_s32(acc, wv, zx);                                \
  } while (0)
    UTVM_MVE_DW_PTAP(0, 0);
    UTVM_MVE_DW_PTAP(0, 1);
    UTVM_MVE_DW_PTAP(0, 2);
    UTVM_MVE_DW_PTAP(1, 0);
    UTVM_MVE_DW_PTAP(1, 1);
    UTVM_MVE_DW_PTAP(1, 2);
    UTVM_MVE_DW_PTAP(2, 0);
    UTVM_MVE_DW_PTAP(2, 1);
    UTVM_MVE_DW_PTAP(2, 2);
#undef UTVM_MVE_DW_PTAP
    int32x4_t v = utvm_mve_rq_apply4(q, acc, utvm_mve_rq_mult4(q, ch, 0), utvm_mve_rq_shift4(q, ch, 0));
    vstrbq_s32(out + ch, v);
  }
}
#endif

static inline void utvm_mve_dw3x3_row_impl(int8_t* out, const int8_t* x, int32_t h, int32_t w, int32_t c,
                                           int32_t iy0, int32_t ow, int32_t sw, int32_t pad_left, int32_t dh,
                                           int32_t dw, const int8_t* wt, int32_t zx, utvm_mve_rq_t rq) {
  const utvm_mve_rq_t* q = &rq; /* a copy: the int8 stores would otherwise make gcc reload its fields */
#ifdef UTVM_MVE_VECTOR
  int32_t step = sw * c; /* bytes from one pixel's window to the next */
  int32_t d = dw * c;    /* bytes from one tap to the next */
  /* the input rows: pointers to column -pad_left (pixel 0's first tap; only the taps inside the
   * input are read), rv: bit ry set when row ry is inside */
  const int8_t* rows[3];
  int32_t rv = 0;
  for (int32_t ry = 0; ry < 3; ++ry) {
    int32_t iy = iy0 + ry * dh;
    int32_t inside = iy >= 0 && iy < h;
    rows[ry] = inside ? x + (iy * w - pad_left) * c : x;
    rv |= inside << ry;
  }
  /* groups of four pixels; when two or three remain (and ow >= 4), a last group ending at the
   * last pixel (recomputing some of the previous group: cheaper than single pixels). A group
   * with all its columns inside the input, at the left border (its pixel 0 without the first
   * column) or at the right border (its pixel 3 without the last column) is done as a group;
   * other column patterns (narrow inputs, dilation) one pixel at a time. */
  int32_t groups_end = ow >= 4 && ow % 4 >= 2 ? ow : ow & ~3;
  int32_t ox = 0;
  while (ox < groups_end) {
    int32_t gx = ox + 4 > ow ? ow - 4 : ox;
    int32_t ix0 = gx * sw - pad_left;
    if (ix0 >= 0 && ix0 + 3 * sw + 2 * dw < w) {
      const int8_t* g[3] = {rows[0] + gx * step, rows[1] + gx * step, rows[2] + gx * step};
      utvm_mve_dw_group4(out + gx * c, g, rv, 0xfff, c, step, d, wt, zx, q);
      ox += 4;
      continue;
    }
    int32_t cm = 0;
    for (int32_t p = 0; p < 4; ++p) cm |= utvm_mve_dw_cols(w, ix0 + p * sw, dw) << (3 * p);
    const int8_t* g[3] = {rows[0] + gx * step, rows[1] + gx * step, rows[2] + gx * step};
    int8_t* op = out + gx * c;
    if (cm == 0xffe) { /* left border: pixel 0 without its first column */
      utvm_mve_dw_group4(op, g, rv, 0xffe, c, step, d, wt, zx, q);
    } else if (cm == 0x7ff) { /* right border: pixel 3 without its last column */
      utvm_mve_dw_group4(op, g, rv, 0x7ff, c, step, d, wt, zx, q);
    } else {
      for (int32_t p = 0; p < 4; ++p) {
        const int8_t* pr[3] = {g[0] + p * step, g[1] + p * step, g[2] + p * step};
        utvm_mve_dw_pixel(op + p * c, pr, utvm_mve_dw_taps(rv, (cm >> (3 * p)) & 7), c, d, wt, zx, q);
      }
    }
    ox += 4;
  }
  /* the remaining pixels one at a time */
  for (int32_t ox = groups_end; ox < ow; ++ox) {
    int32_t tm = utvm_mve_dw_taps(rv, utvm_mve_dw_cols(w, ox * sw - pad_left, dw));
    const int8_t* pr[3] = {rows[0] + ox * step, rows[1] + ox * step, rows[2] + ox * step};
    utvm_mve_dw_pixel(out + ox * c, pr, tm, c, d, wt, zx, q);
  }
#else
  for (int32_t ox = 0; ox < ow; ++ox) {
    for (int32_t ch = 0; ch < c; ++ch) {
      int32_t acc = 0;
      for (int32_t ry = 0; ry < 3; ++ry) {
        int32_t iy = iy0 + ry * dh;
        for (int32_t rx = 0; rx < 3; ++rx) {
          int32_t ix = ox * sw - pad_left + rx * dw;
          int32_t v = iy >= 0 && iy < h && ix >= 0 && ix < w ? x[(iy * w + ix) * c + ch] : zx;
          acc += v * wt[(ry * 3 + rx) * c + ch];
        }
      }
      out[ox * c + ch] = utvm_mve_requant1(q, acc, ch);
    }
  }
#endif
}

/* ---------------------------------------------------------------------------------------------
 * 3x3 depthwise convolutions (depth multiplier 1) by gathers: utvm_mve_dwg_s8.
 *
 * One VMLADAV per output: its 16 lanes hold the window of one channel around two or three
 * neighbouring output pixels of a "line" (an output row, or an output column when the layer is
 * taller than wide), so that one gather load serves them, each pixel with its own filter
 * vector (the 9 weights at its lanes, zeros elsewhere). A pass handles `lines` neighbouring
 * lines for one block of cb channels (16 or 8): it copies the input they read into a "tile"
 * (the zero point in the padding): along the lines la positions, across them bw positions
 * (their windows), position (a, b) of channel j at (a * bw + b) * cb + j; the 15 taps of
 * along positions a..a + 4 and across positions b..b + 2 are then within 255 bytes of the
 * first ((4 * bw + 2) * cb <= 255), one gather with 8-bit offsets. Then, per channel, it runs
 * through the pass's output pixels four at a time (one vector of four dot products,
 * requantized together: VQRDMLAH onto the sign, VRSHL, and stored by one scatter) following a
 * table built once per call in the scratch: the address of every gather and the output
 * offsets of every vector. The lines are split into groups of `share` pixels (3 at stride 1,
 * else 2; a last group overlapping the previous one when the line length is not a multiple),
 * and the groups of a pass padded to whole units (12 pixels: 4 or 6 gathers, 3 vectors) by
 * repeating the last group (the same values stored twice); the last pass overlaps the
 * previous one when the lines are not a multiple.
 * Filters and requantization: per channel a record of 32 bytes: 6 zero bytes, the 9 weights in
 * the order of the lanes (along-major: (along tap) * 3 + (across tap)), 7 zero bytes, the
 * shift (int8), a zero byte, the folded bias and the multiplier (int32): the filter vector of
 * the pixel k of a group (k = 0, 1, 2) is the 16 bytes at 6 - 3 * stride * k.
 * ------------------------------------------------------------------------------------------ */

#define UTVM_MVE_DWG_RECORD 32
#define UTVM_MVE_DWG_UNIT 12 /* pixels per unit */
/* mode bits: every shift a right shift; compact records (17 bytes a channel: the 9 weights in the
 * record's order, the bias << 8 | the shift's byte, the multiplier, words unaligned), expanded
 * into 32-byte records in the scratch (after the tile and the table) per pass and block */
#define UTVM_MVE_DWG_RIGHT 1
#define UTVM_MVE_DWG_COMPACT 2
#define UTVM_MVE_DWG_COMPACT_BYTES 17

/* the 32-byte record of a channel from its compact form at src (its zero bytes already zero) */
UTVM_INLINE void utvm_mve_dwg_expand(int8_t* rec, const int8_t* src) {
  uint32_t bs, m; /* any alignment */
#ifdef UTVM_MVE_VECTOR
  mve_pred16_t p9 = vctp8q(9);
  vstrbq_p_s8(rec + 6, vldrbq_z_s8(src, p9), p9);
#else
  for (int32_t i = 0; i < 9; ++i) rec[6 + i] = src[i];
#endif
  __builtin_memcpy(&bs, src + 9, 4);
  __builtin_memcpy(&m, src + 13, 4);
  int32_t* words = (int32_t*)(void*)(rec + 24);
  rec[22] = (int8_t)(uint8_t)bs;
  words[0] = (int32_t)bs >> 8;
  words[1] = (int32_t)m;
}

/* the geometry of a utvm_mve_dwg_s8 layer, along and across its lines */
typedef struct {
  int32_t c, cb, vertical, len, nlines, lines, share;
  int32_t sa, sc, pa, pc, na, nc; /* strides, paddings before, input sizes along / across */
  int32_t step_p, step_m;         /* output bytes per pixel along / per line */
  int32_t la, bw, ta;             /* tile positions along, across; tile bytes per along position */
  int32_t groups;                 /* groups per line */
  int32_t units;                  /* units per pass */
} utvm_mve_dwg_geo_t;

UTVM_INLINE void utvm_mve_dwg_geo(utvm_mve_dwg_geo_t* g, int32_t h, int32_t w, int32_t c, int32_t oh, int32_t ow,
                                    int32_t sh, int32_t sw, int32_t pad_top, int32_t pad_left, int32_t vertical,
                                    int32_t lines, int32_t cb) {
  g->c = c;
  g->cb = cb;
  g->vertical = vertical;
  g->len = vertical ? oh : ow;
  g->nlines = vertical ? ow : oh;
  g->lines = lines;
  g->sa = vertical ? sh : sw;
  g->sc = vertical ? sw : sh;
  g->pa = vertical ? pad_top : pad_left;
  g->pc = vertical ? pad_left : pad_top;
  g->na = vertical ? h : w;
  g->nc = vertical ? w : h;
  g->step_p = (vertical ? ow : 1) * c;
  g->step_m = (vertical ? 1 : ow) * c;
  g->share = g->sa == 1 && g->len >= 3 ? 3 : 2;
  g->la = (g->len - 1) * g->sa + 3 + 2; /* + 2: the lanes past the last group's window */
  g->bw = (lines - 1) * g->sc + 3;
  g->ta = g->bw * cb;
  g->groups = (g->len + g->share - 1) / g->share;
  g->units = (lines * g->groups * g->share + UTVM_MVE_DWG_UNIT - 1) / UTVM_MVE_DWG_UNIT;
}

/* the first pixel of group i of a line (the last one overlaps its predecessor) */
static inline int32_t utvm_mve_dwg_first(const utvm_mve_dwg_geo_t* g, int32_t i) {
  int32_t p = i * g->share;
  return p + g->share > g->len ? g->len - g->share : p;
}

/* the reference (plain C): one output */
static inline int8_t utvm_mve_dwg_ref(const int8_t* x, const utvm_mve_dwg_geo_t* g, const int8_t* rec, int32_t ch,
                                      int32_t m, int32_t p, int32_t zx, int32_t zy, int32_t lo, int32_t hi) {
  int32_t acc = 0;
  for (int32_t ta = 0; ta < 3; ++ta) {
    for (int32_t tc = 0; tc < 3; ++tc) {
      int32_t ia = p * g->sa - g->pa + ta, ic = m * g->sc - g->pc + tc;
      int32_t in = ia >= 0 && ia < g->na && ic >= 0 && ic < g->nc;
      int32_t iy = g->vertical ? ia : ic, ix = g->vertical ? ic : ia; /* row, column */
      int32_t wdt = g->vertical ? g->nc : g->na;
      acc += (in ? x[(iy * wdt + ix) * g->c + ch] : zx) * rec[6 + ta * 3 + tc];
    }
  }
  const int32_t* words = (const int32_t*)(const void*)(rec + 24);
  return utvm_mve_clamp_s8(utvm_mve_mbqm(acc + words[0], words[1], rec[22]) + zy, lo, hi);
}

#ifdef UTVM_MVE_VECTOR
/* 8 bytes at once (pieces of 8 channels: 8-byte aligned in the tile and in x) */
typedef uint64_t __attribute__((may_alias, aligned(8))) utvm_mve_u64_t;

/* n pieces of cb bytes (8 or 16) from src (step bytes apart) to dst (dstep bytes apart) */
UTVM_INLINE void utvm_mve_dwg_pieces(int8_t* dst, int32_t dstep,
                                                                      const int8_t* src, int32_t step, int32_t n,
                                                                      int32_t cb) {
  if (cb == 16) {
    for (int32_t i = 0; i < n; ++i, src += step, dst += dstep) vstrbq_s8(dst, vldrbq_s8(src));
  } else if (step == 8) { /* contiguous: two pieces per load, stored by one scatter */
    uint8x16_t lane = vidupq_n_u8(0, 1);
    uint8x16_t sc = vaddq_u8(vandq_u8(lane, vdupq_n_u8(7)), vmulq_n_u8(vshrq_n_u8(lane, 3), (uint8_t)dstep));
    for (; n >= 2; n -= 2, src += 16, dst += 2 * dstep) vstrbq_scatter_offset_s8(dst, sc, vldrbq_s8(src));
    if (n) *(utvm_mve_u64_t*)(void*)dst = *(const utvm_mve_u64_t*)(const void*)src;
  } else {
#ifdef __OPTIMIZE__
    if (UTVM_MVE_CONSTANT(step) && UTVM_MVE_CONSTANT(dstep) && step <= 1020 && dstep <= 1020 && n > 0) {
      /* post-indexed LDRD / STRD: three instructions per piece */
      register int32_t count __asm__("lr") = n;
      int32_t lo32, hi32;
      __asm__ volatile("dls lr, %[count]\n1:\n\tldrd %[lo], %[hi], [%[src]], %[step]\n\t"
                       "strd %[lo], %[hi], [%[dst]], %[dstep]\n\tle lr, 1b"
                       : [lo] "=&r"(lo32), [hi] "=&r"(hi32), [src] "+r"(src), [dst] "+r"(dst), [count] "+r"(count)
                       : [step] "i"(step), [dstep] "i"(dstep)
                       : "memory");
      (void)count;
      return;
    }
#endif
    for (int32_t i = 0; i < n; ++i, src += step, dst += dstep) {
      *(utvm_mve_u64_t*)(void*)dst = *(const utvm_mve_u64_t*)(const void*)src;
    }
  }
}

/* n pieces of cb bytes of the zero point (zv; z8: 8 of its bytes) to dst (dstep bytes apart) */
UTVM_INLINE void utvm_mve_dwg_fill(int8_t* dst, int32_t dstep, int32_t n,
                                                                    int32_t cb, int8x16_t zv, uint64_t z8) {
  for (int32_t i = 0; i < n; ++i, dst += dstep) {
    if (cb == 16) {
      vstrbq_s8(dst, zv);
    } else {
      *(utvm_mve_u64_t*)(void*)dst = z8;
    }
  }
}

/* the tile of lines m0..m0 + lines - 1, channels cb0..cb0 + cb - 1; the positions outside the
 * input (the zero point) only when `fill` (they stay from one channel block to the next) */
UTVM_INLINE void utvm_mve_dwg_tile(int8_t* tile, const int8_t* x,
                                                                    const utvm_mve_dwg_geo_t* g, int32_t m0,
                                                                    int32_t cb0, int32_t fill, int8x16_t zv,
                                                                    uint64_t z8) {
  int32_t wdt = g->vertical ? g->nc : g->na; /* input columns */
  int32_t along = (g->vertical ? wdt : 1) * g->c, across = (g->vertical ? 1 : wdt) * g->c;
  /* the along positions inside the input: [a0, a1) */
  int32_t a0 = g->pa < g->la ? g->pa : g->la;
  int32_t a1 = g->pa + g->na < g->la ? g->pa + g->na : g->la;
  for (int32_t b = 0; b < g->bw; ++b) {
    int32_t ic = m0 * g->sc - g->pc + b;
    int8_t* d = tile + b * g->cb;
    if (ic < 0 || ic >= g->nc) {
      if (fill) utvm_mve_dwg_fill(d, g->ta, g->la, g->cb, zv, z8);
      continue;
    }
    if (fill) {
      utvm_mve_dwg_fill(d, g->ta, a0, g->cb, zv, z8);
      utvm_mve_dwg_fill(d + a1 * g->ta, g->ta, g->la - a1, g->cb, zv, z8);
    }
    utvm_mve_dwg_pieces(d + a0 * g->ta, g->ta, x + ic * across + cb0, along, a1 - a0, g->cb);
  }
}

/* the table of a pass, in the order the loops read it: per unit and vector (four pixels), the
 * addresses of the gathers it completes (of channel 0; int32) then its output offsets (from the
 * pass's output at channel 0, in the lane order of utvm_mve_lanes4; 16 bytes) */
UTVM_INLINE void utvm_mve_dwg_table(int8_t* table, const int8_t* tile,
                                                                     const utvm_mve_dwg_geo_t* g) {
  int32_t total = g->units * UTVM_MVE_DWG_UNIT;
  int32_t m = 0, i = 0, slots = 0, off[4];
  int8_t* t = table;
  for (int32_t s = 0; s < total; s += g->share) {
    int32_t first = utvm_mve_dwg_first(g, i);
    *(int32_t*)(void*)t = (int32_t)(intptr_t)(tile + first * g->sa * g->ta + m * g->sc * g->cb);
    t += 4;
    for (int32_t j = 0; j < g->share; ++j) {
      off[slots++] = m * g->step_m + (first + j) * g->step_p;
      if (slots == 4) { /* a vector complete: its offsets */
        *(uint32x4_t*)(void*)t = vreinterpretq_u32_s32(utvm_mve_lanes4(off[0], off[1], off[2], off[3]));
        t += 16;
        slots = 0;
      }
    }
    /* the next group (the sequence padded by repeating the last group) */
    if (m + 1 < g->lines || i + 1 < g->groups) {
      if (++i == g->groups) {
        i = 0;
        ++m;
      }
    }
  }
}

/* The channels of a block in one asm statement, per channel: its record (3 or 2 filter
 * vectors, shift, bias, multiplier), then `units` units following the table (rewound after),
 * the output pointer and the gather offsets moving to the next channel (one more byte). The
 * layer's constants come from memory operands, not immediates: the statements compile whatever
 * the optimizer makes of them. */
#define UTVM_MVE_DWG_GATHER(R)                                                                     \
  "ldr " R ", [%[tbl]], #4\n\t"                                                                    \
  "vldrb.u8 %q[d], [" R ", %q[off]]\n\t"
#define UTVM_MVE_DWG_NEXT                                                                          \
  "le lr, 1b\n\t"                                                                                  \
  "ldr %[tbl], %[tbl0]\n\t"                                                                        \
  "add %[ob], %[ob], #1\n\t"                                                                       \
  "vadd.i8 %q[off], %q[off], %[one]\n\t"                                                           \
  "ldr %[e0], %[rend]\n\t"                                                                         \
  "cmp %[rec], %[e0]\n\t"                                                                          \
  "bne 0b"

/* the four dot products in v plus the bias, times the multiplier (VQRDMLAH onto the sign) and
 * rounded by the right shift into T; the output offsets next in the table into v */
#define UTVM_MVE_DWG_RQ(T)                                                                         \
  "vadd.i32 %q[v], %q[v], %[bias]\n\t"                                                            \
  "vshr.s32 " T ", %q[v], #31\n\t"                                                                 \
  "vqrdmlah.s32 " T ", %q[v], %[mult]\n\t"                                                         \
  "vldrw.32 %q[v], [%[tbl]], #16\n\t"                                                              \
  "vrshl.s32 " T ", %[shift]\n\t"

/* a channel's record at three pixels per gather (its 3 filter vectors, shift, bias, multiplier),
 * then the loop over the units */
#define UTVM_MVE_DWG_RECORD3                                                                       \
  "0:\n\t"                                                                                         \
  "vldrb.8 %q[w0], [%[rec], #6]\n\t"                                                               \
  "vldrb.8 %q[w1], [%[rec], #3]\n\t"                                                               \
  "ldrsb %[shift], [%[rec], #22]\n\t"                                                              \
  "ldrd %[bias], %[mult], [%[rec], #24]\n\t"                                                       \
  "vldrb.8 %q[w2], [%[rec]], #32\n\t"                                                              \
  "ldr lr, %[units]\n\t"                                                                           \
  "dls lr, lr\n"                                                                                     \
  "1:\n\t"

/* three pixels per gather (stride 1 along), lo = -128 and hi = 127 (the clamp is the saturation
 * to int8; any other clamp: run3c): per unit 4 gathers, 12 VMLADAV, 3 requantized vectors; at
 * most 5 dot products live (e0..e4; each gather's address in one that is free) */
UTVM_INLINE void utvm_mve_dwg_run3(int8_t* ob, const int8_t* tbl, int32_t units,
                                                                    const int8_t* rec, int32_t nch,
                                                                    uint8x16_t off, int32x4_t zyv) {
#ifdef __OPTIMIZE__ /* the asm loops only when optimizing: without, the C loop runs */
  const int8_t *rend = rec + nch * UTVM_MVE_DWG_RECORD, *tbl0 = tbl;
  int32_t e0, e1, e2, e3, e4, bias, mult, shift;
  register int32_t n __asm__("lr"); /* the loop counter of LE */
  int8x16_t w0, w1, w2, d;
  int32x4_t v, t;
#define UTVM_MVE_DWG_REQ3(A, B, C, D)                                                              \
  UTVM_MVE_LANES4("%q[v]", A, B, C, D)                                                             \
  UTVM_MVE_DWG_RQ("%q[t]")                                                                         \
  "vadd.i32 %q[t], %q[t], %q[zy]\n\t"                                                              \
  "vqmovnb.s32 %q[t], %q[t]\n\t"                                                                   \
  "vqmovnb.s16 %q[t], %q[t]\n\t"                                                                   \
  "vstrb.32 %q[t], [%[ob], %q[v]]\n\t"
  __asm__ volatile(
      UTVM_MVE_DWG_RECORD3
      UTVM_MVE_DWG_GATHER("%[e0]")
      "vmladav.s8 %[e0], %q[d], %q[w0]\n\t"
      "vmladav.s8 %[e1], %q[d], %q[w1]\n\t"
      "vmladav.s8 %[e2], %q[d], %q[w2]\n\t"
      UTVM_MVE_DWG_GATHER("%[e3]")
      "vmladav.s8 %[e3], %q[d], %q[w0]\n\t"
      UTVM_MVE_DWG_REQ3("%[e0]", "%[e1]", "%[e2]", "%[e3]")
      "vmladav.s8 %[e4], %q[d], %q[w1]\n\t"
      "vmladav.s8 %[e0], %q[d], %q[w2]\n\t"
      UTVM_MVE_DWG_GATHER("%[e1]")
      "vmladav.s8 %[e1], %q[d], %q[w0]\n\t"
      "vmladav.s8 %[e2], %q[d], %q[w1]\n\t"
      "vmladav.s8 %[e3], %q[d], %q[w2]\n\t"
      UTVM_MVE_DWG_REQ3("%[e4]", "%[e0]", "%[e1]", "%[e2]")
      UTVM_MVE_DWG_GATHER("%[e0]")
      "vmladav.s8 %[e0], %q[d], %q[w0]\n\t"
      "vmladav.s8 %[e1], %q[d], %q[w1]\n\t"
      "vmladav.s8 %[e2], %q[d], %q[w2]\n\t"
      UTVM_MVE_DWG_REQ3("%[e3]", "%[e0]", "%[e1]", "%[e2]")
      UTVM_MVE_DWG_NEXT
      : [e0] "=&Te"(e0), [e1] "=&Te"(e1), [e2] "=&Te"(e2), [e3] "=&Te"(e3), [e4] "=&Te"(e4),
        [bias] "=&r"(bias), [mult] "=&r"(mult), [shift] "=&r"(shift), [n] "=&r"(n), [tbl] "+r"(tbl),
        [ob] "+r"(ob), [rec] "+r"(rec), [off] "+w"(off), [w0] "=&w"(w0), [w1] "=&w"(w1), [w2] "=&w"(w2),
        [d] "=&w"(d), [v] "=&w"(v), [t] "=&w"(t)
      : [one] "r"(1), [zy] "w"(zyv), [units] "m"(units), [tbl0] "m"(tbl0), [rend] "m"(rend)
      : "cc", "memory");
  (void)e0, (void)e1, (void)e2, (void)e3, (void)e4, (void)bias, (void)mult, (void)shift, (void)n;
  (void)w0, (void)w1, (void)w2, (void)d, (void)v, (void)t;
#else
  (void)ob, (void)tbl, (void)units, (void)rec, (void)nch, (void)off, (void)zyv;
#endif
}

/* the requantization of the four dot products in v (the output offsets next in the table)
 * with any clamp, d its temporary: no Q register for zy (a scalar), lo and hi (Q registers) */
#define UTVM_MVE_DWG_REQC                                                                          \
  UTVM_MVE_DWG_RQ("%q[d]")                                                                         \
  "vadd.i32 %q[d], %q[d], %[zy]\n\t"                                                               \
  "vmax.s32 %q[d], %q[d], %q[lo]\n\t"                                                              \
  "vmin.s32 %q[d], %q[d], %q[hi]\n\t"                                                              \
  "vstrb.32 %q[d], [%[ob], %q[v]]\n\t"

/* three pixels per gather (stride 1 along), any clamp: run3's instructions (the clamp takes
 * VMAX and VMIN where run3 narrows twice), each vector requantized once the gather that
 * completes it is used up (d its temporary, so lo and hi get Q registers) and its lanes moved
 * in two at a time (utvm_mve_lanes4's pairs (a, c), (b, d)): three dot products live (e0..e2) */
UTVM_INLINE void utvm_mve_dwg_run3c(int8_t* ob, const int8_t* tbl, int32_t units,
                                                                     const int8_t* rec, int32_t nch,
                                                                     uint8x16_t off, int32_t zy, int32x4_t lo,
                                                                     int32x4_t hi) {
#ifdef __OPTIMIZE__
  const int8_t *rend = rec + nch * UTVM_MVE_DWG_RECORD, *tbl0 = tbl;
  int32_t e0, e1, e2, bias, mult, shift;
  register int32_t n __asm__("lr"); /* the loop counter of LE */
  int8x16_t w0, w1, w2, d;
  int32x4_t v;
  __asm__ volatile(
      UTVM_MVE_DWG_RECORD3
      UTVM_MVE_DWG_GATHER("%[e0]") /* pixels 0..2 */
      "vmladav.s8 %[e0], %q[d], %q[w0]\n\t"
      "vmladav.s8 %[e1], %q[d], %q[w1]\n\t"
      "vmladav.s8 %[e2], %q[d], %q[w2]\n\t"
      "vmov %q[v][2], %q[v][0], %[e2], %[e0]\n\t"
      UTVM_MVE_DWG_GATHER("%[e0]") /* pixels 3..5 */
      "vmladav.s8 %[e0], %q[d], %q[w0]\n\t"
      "vmov %q[v][3], %q[v][1], %[e0], %[e1]\n\t"
      "vmladav.s8 %[e1], %q[d], %q[w1]\n\t"
      "vmladav.s8 %[e2], %q[d], %q[w2]\n\t"
      UTVM_MVE_DWG_REQC /* pixels 0..3 */
      UTVM_MVE_DWG_GATHER("%[e0]") /* pixels 6..8 */
      "vmladav.s8 %[e0], %q[d], %q[w0]\n\t"
      "vmov %q[v][2], %q[v][0], %[e0], %[e1]\n\t"
      "vmladav.s8 %[e0], %q[d], %q[w1]\n\t"
      "vmov %q[v][3], %q[v][1], %[e0], %[e2]\n\t"
      "vmladav.s8 %[e1], %q[d], %q[w2]\n\t"
      UTVM_MVE_DWG_REQC /* pixels 4..7 */
      UTVM_MVE_DWG_GATHER("%[e0]") /* pixels 9..11 */
      "vmladav.s8 %[e0], %q[d], %q[w0]\n\t"
      "vmladav.s8 %[e2], %q[d], %q[w1]\n\t"
      "vmov %q[v][2], %q[v][0], %[e2], %[e1]\n\t"
      "vmladav.s8 %[e1], %q[d], %q[w2]\n\t"
      "vmov %q[v][3], %q[v][1], %[e1], %[e0]\n\t"
      UTVM_MVE_DWG_REQC /* pixels 8..11 */
      UTVM_MVE_DWG_NEXT
      : [e0] "=&Te"(e0), [e1] "=&Te"(e1), [e2] "=&Te"(e2), [bias] "=&r"(bias), [mult] "=&r"(mult),
        [shift] "=&r"(shift), [n] "=&r"(n), [tbl] "+r"(tbl), [ob] "+r"(ob), [rec] "+r"(rec), [off] "+w"(off),
        [w0] "=&w"(w0), [w1] "=&w"(w1), [w2] "=&w"(w2), [d] "=&w"(d), [v] "=&w"(v)
      : [one] "r"(1), [zy] "r"(zy), [lo] "w"(lo), [hi] "w"(hi), [units] "m"(units), [tbl0] "m"(tbl0),
        [rend] "m"(rend)
      : "cc", "memory");
  (void)e0, (void)e1, (void)e2, (void)bias, (void)mult, (void)shift, (void)n;
  (void)w0, (void)w1, (void)w2, (void)d, (void)v;
#else
  (void)ob, (void)tbl, (void)units, (void)rec, (void)nch, (void)off, (void)zy, (void)lo, (void)hi;
#endif
}

/* two pixels per gather, any clamp: per unit 6 gathers, 12 VMLADAV, 3 requantized vectors */
UTVM_INLINE void utvm_mve_dwg_run2(int8_t* ob, const int8_t* tbl, int32_t units,
                                                                    const int8_t* rec, int32_t nch, int32_t sa,
                                                                    uint8x16_t off, int32_t zy, int32x4_t lo,
                                                                    int32x4_t hi) {
#ifdef __OPTIMIZE__
  const int8_t *rend = rec + nch * UTVM_MVE_DWG_RECORD, *tbl0 = tbl;
  int32_t e0, e1, e2, e3, bias, mult, shift;
  register int32_t n __asm__("lr"); /* the loop counter of LE */
  int8x16_t w0, w1, d;
  int32x4_t v;
#define UTVM_MVE_DWG_VEC2                                                                          \
  UTVM_MVE_DWG_GATHER("%[e0]")                                                                     \
  "vmladav.s8 %[e0], %q[d], %q[w0]\n\t"                                                            \
  "vmladav.s8 %[e1], %q[d], %q[w1]\n\t"                                                            \
  UTVM_MVE_DWG_GATHER("%[e2]")                                                                     \
  "vmladav.s8 %[e2], %q[d], %q[w0]\n\t"                                                            \
  "vmladav.s8 %[e3], %q[d], %q[w1]\n\t"                                                            \
  UTVM_MVE_LANES4("%q[v]", "%[e0]", "%[e1]", "%[e2]", "%[e3]")                                      \
  UTVM_MVE_DWG_REQC
  /* the filter of a group's second pixel 3 * sa lanes up: its record 3 * sa bytes down */
#define UTVM_MVE_DWG_RUN2(WK1)                                                                     \
  __asm__ volatile(                                                                                \
      "0:\n\t"                                                                                     \
      "vldrb.8 %q[w0], [%[rec], #6]\n\t"                                                           \
      "vldrb.8 %q[w1], [%[rec], #" WK1 "]\n\t"                                                     \
      "ldrsb %[shift], [%[rec], #22]\n\t"                                                          \
      "ldrd %[bias], %[mult], [%[rec], #24]\n\t"                                                   \
      "add %[rec], %[rec], #32\n\t"                                                                \
      "ldr lr, %[units]\n\t"                                                                       \
      "dls lr, lr\n"                                                                                \
      "1:\n\t" UTVM_MVE_DWG_VEC2 UTVM_MVE_DWG_VEC2 UTVM_MVE_DWG_VEC2 UTVM_MVE_DWG_NEXT              \
      : [e0] "=&Te"(e0), [e1] "=&Te"(e1), [e2] "=&Te"(e2), [e3] "=&Te"(e3), [bias] "=&r"(bias),      \
        [mult] "=&r"(mult), [shift] "=&r"(shift), [n] "=&r"(n), [tbl] "+r"(tbl), [ob] "+r"(ob),      \
        [rec] "+r"(rec), [off] "+w"(off), [w0] "=&w"(w0), [w1] "=&w"(w1), [d] "=&w"(d), [v] "=&w"(v) \
      : [one] "r"(1), [zy] "r"(zy), [lo] "w"(lo), [hi] "w"(hi), [units] "m"(units), [tbl0] "m"(tbl0), \
        [rend] "m"(rend)                                                                           \
      : "cc", "memory")
  if (sa == 1) {
    UTVM_MVE_DWG_RUN2("3");
  } else {
    UTVM_MVE_DWG_RUN2("0");
  }
#undef UTVM_MVE_DWG_RUN2
  (void)e0, (void)e1, (void)e2, (void)e3, (void)bias, (void)mult, (void)shift, (void)n;
  (void)w0, (void)w1, (void)d, (void)v;
#else
  (void)ob, (void)tbl, (void)units, (void)rec, (void)nch, (void)sa, (void)off, (void)zy, (void)lo, (void)hi;
#endif
}

/* one channel of a pass (C): the same table, any share and clamp */
UTVM_INLINE void utvm_mve_dwg_runc(int8_t* ob, const int8_t* tbl, int32_t units,
                                                                    const int8_t* rec, int32_t sa, int32_t share,
                                                                    uint8x16_t offc, int32_t zy, int32x4_t lo,
                                                                    int32x4_t hi) {
  const int32_t* words = (const int32_t*)(const void*)(rec + 24);
  int32_t bias = words[0], mult = words[1], shift = rec[22];
  int8x16_t wk[3] = {vldrbq_s8(rec + 6), vldrbq_s8(rec + 6 - 3 * sa), vldrbq_s8(rec + 6 - 6 * sa)};
  int32_t acc[4], slots = 0;
  for (int32_t s = 0; s < units * UTVM_MVE_DWG_UNIT; s += share) {
    const int8_t* gb = (const int8_t*)(intptr_t) * (const int32_t*)(const void*)tbl;
    tbl += 4;
    uint8x16_t d = vldrbq_gather_offset_u8((const uint8_t*)gb, offc);
    for (int32_t k = 0; k < share; ++k) {
      acc[slots++] = vmladavq_s8(vreinterpretq_s8_u8(d), wk[k]);
      if (slots == 4) {
        uint32x4_t offs = vldrwq_u32((const uint32_t*)(const void*)tbl);
        tbl += 16;
        slots = 0;
        utvm_mve_rq_scatter(ob, offs, utvm_mve_lanes4(acc[0], acc[1], acc[2], acc[3]), bias, mult, shift, 0, 0, zy,
                            lo, hi);
      }
    }
  }
}
#endif

/* Depthwise 3 x 3 convolution (multiplier 1), the whole layer:
 *   out[(oy * ow + ox) * c + ch] = requant(sum_{ry, rx} x[oy * sh - pad_top + ry][ox * sw - pad_left + rx][ch]
 *                                          * w[ry][rx][ch], ch)
 * (taps outside the input: the zero point zx); wt: the records above (right: the mode bits,
 * UTVM_MVE_DWG_RIGHT: every shift a right shift; UTVM_MVE_DWG_COMPACT: compact records);
 * orientation `vertical`: lines are output columns; `lines` lines per pass (at most the number of
 * lines), cb channels per tile (8 or 16, dividing c; (4 * bw + 2) * cb <= 255); scratch: the
 * tile, la * bw * cb bytes, the table and (compact) cb * 32 bytes of expanded records. */
UTVM_INLINE void utvm_mve_dwg_impl(int8_t* out, const int8_t* x, int32_t h, int32_t w,
                                                                    int32_t c, int32_t oh, int32_t ow, int32_t sh,
                                                                    int32_t sw, int32_t pad_top, int32_t pad_left,
                                                                    const int8_t* wt, int32_t zx, int32_t zy,
                                                                    int32_t lo, int32_t hi, int32_t right,
                                                                    int32_t vertical, int32_t lines, int32_t cb,
                                                                    int8_t* scratch) {
  utvm_mve_dwg_geo_t g;
  utvm_mve_dwg_geo(&g, h, w, c, oh, ow, sh, sw, pad_top, pad_left, vertical, lines, cb);
#ifdef UTVM_MVE_VECTOR
  int8_t* tile = scratch;
  int8_t* table = scratch + g.la * g.ta;
  int8x16_t zv = vdupq_n_s8((int8_t)zx);
  uint64_t z8 = (uint64_t)(uint8_t)zx * 0x0101010101010101ull;
  int32x4_t vlo = vdupq_n_s32(lo), vhi = vdupq_n_s32(hi), zyv = vdupq_n_s32(zy);
  /* the lanes: taps (along i / 3, across i % 3), i < 15; lane 15 a copy of lane 14 (weight 0) */
  static const uint8_t lane_along[16] = {0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 4};
  static const uint8_t lane_across[16] = {0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 2};
  uint8x16_t off = vaddq_u8(vmulq_n_u8(vld1q_u8(lane_along), (uint8_t)g.ta),
                            vmulq_n_u8(vld1q_u8(lane_across), (uint8_t)cb));
  /* the asm loops: right shifts only (VQRDMLAH onto the sign); not without optimization (the C
   * loop is then the one tested) */
  int32_t fast = UTVM_MVE_CONSTANT(right) && (right & UTVM_MVE_DWG_RIGHT);
  int32_t compact = right & UTVM_MVE_DWG_COMPACT;
  int8_t* recs = table + g.units * ((UTVM_MVE_DWG_UNIT / g.share) * 4 + 48); /* compact: expanded */
  for (int32_t j = 0; compact && j < cb * UTVM_MVE_DWG_RECORD; j += 16) vstrbq_s8(recs + j, vdupq_n_s8(0));
  int32_t fast3 = fast && g.share == 3, unclamped = lo == -128 && hi == 127;
  int32_t fast2 = fast && g.share == 2;
  utvm_mve_dwg_table(table, tile, &g);
  for (int32_t m0 = 0; m0 < g.nlines; m0 += lines) {
    int32_t mm = m0 + lines > g.nlines ? g.nlines - lines : m0; /* the last pass: the last lines */
    int8_t* ob = out + mm * g.step_m;
    for (int32_t cb0 = 0; cb0 < c; cb0 += cb) {
      utvm_mve_dwg_tile(tile, x, &g, mm, cb0, cb0 == 0, zv, z8);
      const int8_t* rec = wt + cb0 * UTVM_MVE_DWG_RECORD;
      if (compact) {
        for (int32_t j = 0; j < cb; ++j) {
          utvm_mve_dwg_expand(recs + j * UTVM_MVE_DWG_RECORD, wt + (cb0 + j) * UTVM_MVE_DWG_COMPACT_BYTES);
        }
        rec = recs;
      }
      if (fast3 && unclamped) {
        utvm_mve_dwg_run3(ob + cb0, table, g.units, rec, cb, off, zyv);
      } else if (fast3) {
        utvm_mve_dwg_run3c(ob + cb0, table, g.units, rec, cb, off, zy, vlo, vhi);
      } else if (fast2) {
        utvm_mve_dwg_run2(ob + cb0, table, g.units, rec, cb, g.sa, off, zy, vlo, vhi);
      } else {
        for (int32_t j = 0; j < cb; ++j) {
          utvm_mve_dwg_runc(ob + cb0 + j, table, g.units, rec + j * UTVM_MVE_DWG_RECORD, g.sa, g.share,
                            vaddq_n_u8(off, (uint8_t)j), zy, vlo, vhi);
        }
      }
    }
  }
#else
  for (int32_t ch = 0; ch < c; ++ch) {
    const int8_t* rec = wt + ch * UTVM_MVE_DWG_RECORD;
    if (right & UTVM_MVE_DWG_COMPACT) { /* the scratch's first 32 bytes */
      for (int32_t i = 0; i < UTVM_MVE_DWG_RECORD; ++i) scratch[i] = 0;
      utvm_mve_dwg_expand(scratch, wt + ch * UTVM_MVE_DWG_COMPACT_BYTES);
      rec = scratch;
    }
    for (int32_t m = 0; m < g.nlines; ++m) {
      for (int32_t p = 0; p < g.len; ++p) {
        out[m * g.step_m + p * g.step_p + ch] = utvm_mve_dwg_ref(x, &g, rec, ch, m, p, zx, zy, lo, hi);
      }
    }
  }
#endif
}

static inline int32_t utvm_mve_dw3x3_row_s8(void* out, void* x, int32_t h, int32_t w, int32_t c, int32_t iy0,
                                            int32_t ow, int32_t sw, int32_t pad_left, int32_t dh, int32_t dw,
                                            void* wt, int32_t zx, void* bias, void* mult, void* shift,
                                            int32_t m0, int32_t s0, int32_t mode, int32_t zy, int32_t lo,
                                            int32_t hi) {
  utvm_mve_rq_t q = {(const int32_t*)bias, (const int32_t*)mult, (const int8_t*)shift, m0, s0, mode, zy, lo, hi};
  utvm_mve_dw3x3_row_impl((int8_t*)out, (const int8_t*)x, h, w, c, iy0, ow, sw, pad_left, dh, dw,
                          (const int8_t*)wt, zx, q);
  return 0;
}

#ifdef UTVM_MVE_VECTOR
/* the n taps of one window row of one block of eight channels (p: the channels' predicate, 0
 * for all eight) added to the even and odd channels' sums; xs, ws: from one tap to the next */
UTVM_INLINE void utvm_mve_dw16_taps(int32x4_t* ae, int32x4_t* ao, const int16_t* xp,
                                                                     const int8_t* wp, int32_t n, int32_t xs,
                                                                     int32_t ws, mve_pred16_t p) {
  int32x4_t e = *ae, o = *ao;
  for (; n >= 2; n -= 2) {
    int16x8_t x0 = p ? vldrhq_z_s16(xp, p) : vldrhq_s16(xp);
    int16x8_t w0 = p ? vldrbq_z_s16(wp, p) : vldrbq_s16(wp);
    int16x8_t x1 = p ? vldrhq_z_s16(xp + xs, p) : vldrhq_s16(xp + xs);
    int16x8_t w1 = p ? vldrbq_z_s16(wp + ws, p) : vldrbq_s16(wp + ws);
    e = vaddq_s32(e, vmullbq_int_s16(x0, w0));
    o = vaddq_s32(o, vmulltq_int_s16(x0, w0));
    e = vaddq_s32(e, vmullbq_int_s16(x1, w1));
    o = vaddq_s32(o, vmulltq_int_s16(x1, w1));
    xp += 2 * xs;
    wp += 2 * ws;
  }
  if (n) {
    int16x8_t x0 = p ? vldrhq_z_s16(xp, p) : vldrhq_s16(xp);
    int16x8_t w0 = p ? vldrbq_z_s16(wp, p) : vldrbq_s16(wp);
    e = vaddq_s32(e, vmullbq_int_s16(x0, w0));
    o = vaddq_s32(o, vmulltq_int_s16(x0, w0));
  }
  *ae = e;
  *ao = o;
}

/* one pixel, channels ch .. ch + 7 (predicate p, 0: all eight): window rows [ry_lo, ry_hi) and
 * columns [rx_lo, rx_hi) inside the input; xp: the pixel's tap (ry_lo, rx_lo) at channel ch */
UTVM_INLINE void utvm_mve_dw16_block(int16_t* out, const int16_t* xp, const int8_t* wp,
                                                                      int32_t rows, int32_t cols, int32_t row_step,
                                                                      int32_t xs, int32_t c, int32_t kw,
                                                                      const int32_t* bias, const int32_t* mult,
                                                                      int32x4_t vlo, int32x4_t vhi, mve_pred16_t p) {
  int32x4_t ae = vldrwq_s32(bias), ao = vldrwq_s32(bias + 4);
  for (int32_t r = 0; r < rows; ++r, xp += row_step, wp += kw * c) utvm_mve_dw16_taps(&ae, &ao, xp, wp, cols, xs, c, p);
  ae = vminq_s32(vmaxq_s32(vrmulhq_s32(ae, vldrwq_s32(mult)), vlo), vhi);
  ao = vminq_s32(vmaxq_s32(vrmulhq_s32(ao, vldrwq_s32(mult + 4)), vlo), vhi);
  int16x8_t v = vmovntq_s32(vmovnbq_s32(vdupq_n_s16(0), ae), ao);
  if (p) {
    vstrhq_p_s16(out, v, p);
  } else {
    vstrhq_s16(out, v);
  }
}

/* two pixels (xp and xp + step) with the same taps inside the input, channels ch .. ch + 7: the
 * weights loaded once for both */
UTVM_INLINE void utvm_mve_dw16_block2(int16_t* out, const int16_t* xp, int32_t step,
                                                                       const int8_t* wp, int32_t rows, int32_t cols,
                                                                       int32_t row_step, int32_t xs, int32_t c,
                                                                       int32_t kw, const int32_t* bias,
                                                                       const int32_t* mult, int32x4_t vlo,
                                                                       int32x4_t vhi, mve_pred16_t p) {
  int32x4_t e0 = vldrwq_s32(bias), o0 = vldrwq_s32(bias + 4), e1 = e0, o1 = o0;
  for (int32_t r = 0; r < rows; ++r, xp += row_step, wp += kw * c) {
    const int16_t* xa = xp;
    const int8_t* wr = wp;
    for (int32_t n = cols; n > 0; --n, xa += xs, wr += c) {
      int16x8_t wv = p ? vldrbq_z_s16(wr, p) : vldrbq_s16(wr);
      int16x8_t a = p ? vldrhq_z_s16(xa, p) : vldrhq_s16(xa);
      e0 = vaddq_s32(e0, vmullbq_int_s16(a, wv));
      o0 = vaddq_s32(o0, vmulltq_int_s16(a, wv));
      a = p ? vldrhq_z_s16(xa + step, p) : vldrhq_s16(xa + step);
      e1 = vaddq_s32(e1, vmullbq_int_s16(a, wv));
      o1 = vaddq_s32(o1, vmulltq_int_s16(a, wv));
    }
  }
  int32x4_t me = vldrwq_s32(mult), mo = vldrwq_s32(mult + 4);
  int16x8_t v0 = vmovntq_s32(vmovnbq_s32(vdupq_n_s16(0), vminq_s32(vmaxq_s32(vrmulhq_s32(e0, me), vlo), vhi)),
                             vminq_s32(vmaxq_s32(vrmulhq_s32(o0, mo), vlo), vhi));
  int16x8_t v1 = vmovntq_s32(vmovnbq_s32(vdupq_n_s16(0), vminq_s32(vmaxq_s32(vrmulhq_s32(e1, me), vlo), vhi)),
                             vminq_s32(vmaxq_s32(vrmulhq_s32(o1, mo), vlo), vhi));
  if (p) {
    vstrhq_p_s16(out, v0, p);
    vstrhq_p_s16(out + c, v1, p);
  } else {
    vstrhq_s16(out, v0);
    vstrhq_s16(out + c, v1);
  }
}
#endif

static inline int32_t utvm_mve_dw_row_s16(int16_t* out, int16_t* x, int32_t h, int32_t w, int32_t c, int32_t iy0,
                                          int32_t ow, int32_t sw, int32_t pad_left, int32_t kh, int32_t kw,
                                          int32_t dh, int32_t dw, int8_t* wt, int32_t* bias, int32_t* mult, int32_t lo,
                                          int32_t hi) {
  /* the window rows inside the input: [ry_lo, ry_hi) */
  int32_t ry_lo = 0, ry_hi = kh;
  while (ry_lo < kh && iy0 + ry_lo * dh < 0) ++ry_lo;
  while (ry_hi > ry_lo && iy0 + (ry_hi - 1) * dh >= h) --ry_hi;
#ifdef UTVM_MVE_VECTOR
  /* the pixels whose whole window lies inside the input (columns): [in_lo, in_hi) */
  int32_t in_lo = (pad_left + sw - 1) / sw;
  int32_t in_hi = w - 1 - (kw - 1) * dw + pad_left >= 0 ? (w - 1 - (kw - 1) * dw + pad_left) / sw + 1 : 0;
  if (in_hi > ow) in_hi = ow;
#endif
  for (int32_t ox = 0; ox < ow; ++ox, out += c) {
    int32_t ix0 = ox * sw - pad_left;
    /* the window columns inside the input: [rx_lo, rx_hi) */
    int32_t rx_lo = 0, rx_hi = kw;
    while (rx_lo < kw && ix0 + rx_lo * dw < 0) ++rx_lo;
    while (rx_hi > rx_lo && ix0 + (rx_hi - 1) * dw >= w) --rx_hi;
    /* the taps inside: rows x cols (none: the bias alone) */
    int32_t rows = rx_lo < rx_hi ? ry_hi - ry_lo : 0, cols = rx_hi - rx_lo;
#ifdef UTVM_MVE_VECTOR
    {
      int32x4_t vlo = vdupq_n_s32(lo), vhi = vdupq_n_s32(hi);
      const int16_t* xp = x + ((iy0 + ry_lo * dh) * w + ix0 + rx_lo * dw) * c;
      const int8_t* wp = wt + (ry_lo * kw + rx_lo) * c;
      int32_t row_step = dh * w * c, xs = dw * c, ch = 0;
      if (ox >= in_lo && ox + 1 < in_hi) { /* two whole windows: the weights loaded once */
        for (; ch + 8 <= c; ch += 8) {
          utvm_mve_dw16_block2(out + ch, xp + ch, sw * c, wp + ch, rows, cols, row_step, xs, c, kw, bias + ch,
                               mult + ch, vlo, vhi, 0);
        }
        if (ch < c) {
          utvm_mve_dw16_block2(out + ch, xp + ch, sw * c, wp + ch, rows, cols, row_step, xs, c, kw, bias + ch,
                               mult + ch, vlo, vhi, vctp16q((uint32_t)(c - ch)));
        }
        ++ox;
        out += c;
        continue;
      }
      for (; ch + 8 <= c; ch += 8) {
        utvm_mve_dw16_block(out + ch, xp + ch, wp + ch, rows, cols, row_step, xs, c, kw, bias + ch, mult + ch, vlo,
                            vhi, 0);
      }
      if (ch < c) {
        utvm_mve_dw16_block(out + ch, xp + ch, wp + ch, rows, cols, row_step, xs, c, kw, bias + ch, mult + ch, vlo,
                            vhi, vctp16q((uint32_t)(c - ch)));
      }
    }
#else
    for (int32_t ch = 0; ch < c; ++ch) {
      /* channel ch: lane (ch & 7) >> 1 of the even (ch even) or odd block half */
      int32_t at = (ch & ~7) + ((ch & 1) << 2) + ((ch & 7) >> 1);
      int32_t acc = bias[at];
      for (int32_t ry = ry_lo; ry < ry_lo + rows; ++ry) {
        for (int32_t rx = rx_lo; rx < rx_lo + cols; ++rx) {
          acc += x[((iy0 + ry * dh) * w + ix0 + rx * dw) * c + ch] * wt[(ry * kw + rx) * c + ch];
        }
      }
      int32_t v = (int32_t)(((int64_t)acc * mult[at] + ((int64_t)1 << 31)) >> 32);
      out[ch] = (int16_t)(v < lo ? lo : (v > hi ? hi : v));
    }
#endif
  }
  return 0;
}

UTVM_INLINE int32_t utvm_mve_dwg_s8(void* out, void* x, int32_t h, int32_t w,
                                                                     int32_t c, int32_t oh, int32_t ow, int32_t sh,
                                                                     int32_t sw, int32_t pad_top, int32_t pad_left,
                                                                     void* wt, int32_t zx, int32_t zy, int32_t lo,
                                                                     int32_t hi, int32_t right, int32_t vertical,
                                                                     int32_t lines, int32_t cb, void* scratch) {
  utvm_mve_dwg_impl((int8_t*)out, (const int8_t*)x, h, w, c, oh, ow, sh, sw, pad_top, pad_left, (const int8_t*)wt, zx,
                    zy, lo, hi, right, vertical, lines, cb, (int8_t*)scratch);
  return 0;
}

#endif /* UTVM_KERNELS_DEPTHWISE_MVE_H_ */
