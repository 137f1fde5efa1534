/* utvm/kernels/gemm_dsp.h: moved from kernels_dsp.h by the split of issue 24 (one header per
 * operator family and instruction set, the bodies unchanged). */
#ifndef UTVM_KERNELS_GEMM_DSP_H_
#define UTVM_KERNELS_GEMM_DSP_H_

#include "common_dsp.h"

/*
 * int8 convolution and fully connected kernels for CPUs with the DSP extension (Cortex-M4,
 * M7, M33) that utvm's generated code calls (header-only, C99): one call runs a whole layer.
 * With __ARM_FEATURE_SIMD32 (Thumb-2) the inner loops are hand-written assembly (naked
 * functions); elsewhere plain C computes the same results (TFLite's arithmetic, bit-exact).
 *
 * A layer is rows of K inputs (a pixel of a pointwise convolution, the patch of an output
 * pixel, a batch row of a fully connected layer), K padded to kq quads of four, times the
 * weights of cout output channels in blocks; the outputs of a row are stored contiguously
 * (cout bytes). A row is widened to int16 pairs (x0, x2), (x1, x3) per quad (SXTB16) once,
 * into scratch, and read by every block. The kernels (mode bits below, names in
 * UTVM_DSP_KERNEL_NAMES):
 *   - pair: two rows x two channels per block (the weights and, for int8 weights, their
 *     SXTB16 serve both rows): 10 instructions per quad and block (16 multiply-accumulates:
 *     LDM of the two rows' pairs, LDM of four int16 weight words, eight SMLAD), 14 with int8
 *     weights (LDRD of two words, four SXTB16);
 *   - row: one row x four channels: 11 (LDRD of the pairs, two LDM, eight SMLAD), 19 with int8
 *     weights; narrow: one row x two channels (one or two output channels): 6, 10;
 *   - x8 (row, narrow): the row read unwidened, each word split in the quad (one block per
 *     row: widening it first would cost what it saves), int16 weights: 13, 8;
 *   - small1/small2: rows of one or two quads (K <= 8) kept in registers across all blocks,
 *     int16 weights, one row x four channels.
 * The quads of a block run in a body unrolled 16 times, entered at the address that leaves
 * the first kq % 16 quads (no loop counter).
 *
 * The stream (int32 words, prepared at compile time: utvm/lower/dsp.py gemm_stream) holds per
 * block of nc output channels (4, or 2 for pair and narrow):
 *   - nc words: the accumulators' start, 2 * (bias - zx * sum(w)) per channel (pairs: both
 *     rows start from them, the first quad of a block peeled to do so at no cost);
 *   - per quad: with int16 weights 2 nc words, per channel the int16 pairs (2 w0, 2 w2),
 *     (2 w1, 2 w3) (doubled: the accumulator is twice TFLite's); with int8 weights
 *     (UTVM_DSP_W8) nc words, per channel its four weights (the inputs doubled instead when
 *     they are widened);
 *   - the requantization constants m, c, e (| 256 on the layer's last channel): per channel,
 *     or once for the block (UTVM_DSP_PER_TENSOR); none with UTVM_DSP_PACKED, where one word per channel follows the last block
 *     instead, m - 2**30 | i << 30 (i: the index of the channel's shift among the layer's at most
 *     four), with the output zero point and the shifts in the mode's bits 8-30 (z: bits 8-16,
 *     zy or with UTVM_DSP_LO zy - lo, signed; the first shift: bits 17-21; the steps to the next
 *     three: bits 22-24, 25-27, 28-30): utvm_dsp_conv expands them into m, c, e per channel at
 *     the start of the scratch (RAM), which the kernels read instead (12 bytes a channel of
 *     flash fewer; two instructions per block and row more, none for pairs of rows, whose
 *     pointer to them shares a load and a store with the output's).
 *
 * Requantization: with acc = 2a (a = TFLite's accumulator plus bias, |a| < 2**30) and a right
 * shift e >= 1 (TFLite shift -e), multiplier m (2**30 <= m < 2**31), output zero point zy:
 *   SaturatingRoundingDoublingHighMul(a, m) = h = floor((a * m + 2**30) / 2**31)
 *                                           = floor((acc * m + 2**31) / 2**32)   (SMMULR)
 *   RoundingDivideByPOT(h, e) + zy = floor((h + 2**(e-1) + zy * 2**e - (h < 0)) / 2**e)
 * so with c = 2**(e-1) + zy * 2**e: t = SMMLAR(acc, m, c) = h + c, t += acc >> 31 (a < 0
 * exactly when h < 0, or h = 0 where the correction does not change the quotient), t >>= e
 * (a shift by register reads its low byte only: the last flag does not matter), saturated to
 * int8 (SSAT): five instructions and a store per output. A lower activation bound lo > -128
 * (UTVM_DSP_LO) takes c with zy - lo: max(t, 0) (USAT #31) + lo, then SSAT; an upper one a
 * compare and a conditional move; the kernels of one row x four channels clamp from below by
 * t saturated to [0, 255] (USAT #8) and then four outputs at once as bytes (UTVM_DSP_BYTES_CLAMP).
 *
 * - utvm_dsp_conv_<kernel>(out, x, stream, scratch, n, h, w, cin, oh, ow, cout, kh, kw, sh, sw,
 *   dh, dw, top, left, zx, kq, chunk, lo, hi, mode): an NHWC convolution (a fully connected
 *   layer is one with h = 1, w = batch rows, cin = depth, 1 x 1 windows) with the kernel the
 *   name gives (so that only the kernels a model uses are linked, at any optimization level;
 *   with -O0 unreferenced ones are left to --gc-sections). Pointwise windows with cin % 4 ==
 *   0 and no padding read their rows in place; other layers gather the patches of up to
 *   ``chunk`` output pixels of a row into scratch (whole input words widened straight from
 *   the input, the K order of utvm/lower/dsp.py patch_order; the taps outside the input the
 *   zero point zx), then run them as rows. Scratch: utvm/lower/dsp.py scratch_words.
 */


/* mode bits */
#define UTVM_DSP_PER_TENSOR 1 /* one set of requantization constants per block */
#define UTVM_DSP_W8 2         /* int8 weights in the stream, the inputs doubled */
#define UTVM_DSP_PAIRS 4      /* two rows x two channels per block (cout even), else one row x four */
#define UTVM_DSP_NARROW 16    /* one row x two channels per block (one or two output channels) */
#define UTVM_DSP_X8 32        /* rows read in place unwidened, each word split in the quads (no scratch);
                                 with W8 the biases undoubled, the accumulators doubled at the end */
#define UTVM_DSP_LO 64        /* a lower clamp: the constants c hold zy - lo (set exactly when lo > -128) */
#define UTVM_DSP_SMALL 8      /* one row of one or two quads (kq <= 2) in registers x four channels: int16
                                 weights, no clamp */
#define UTVM_DSP_PACKED 128   /* per-channel constants packed after the blocks, expanded into scratch */
#define UTVM_DSP_MODE_BITS 255 /* above them: the packed constants' header (bits 8-30), then: */
/* bit 31 of the mode argument (the argument negative): a gathered layer (one image, no dilation
 * along the width) copies its input with the padding its windows reach (zx) into the scratch
 * after the rows and the tail buffer first, and gathers every patch from there as from inside
 * the input (utvm/kernels/dsp.py pad_copy: small inputs most of whose windows reach the padding) */

/* requantization words per channel; the last flag */
#define UTVM_DSP_RQ_WORDS 3
#define UTVM_DSP_LAST 256

typedef struct {
  int32_t np;       /* rows */
  int32_t xstride;  /* bytes from one row's inputs to the next */
  int32_t kq;       /* quads of inputs per row */
  int32_t* scratch; /* the rows widened (a pair: 4 kq words, one row: 2 kq); NULL: widened already */
  int32_t lo, hi;   /* activation clamp (UTVM_DSP_BYTES_CLAMP: lo and hi - lo in each byte) */
  int32_t ostride;  /* bytes from one row's outputs to the next (cout) */
  const int32_t* rq; /* UTVM_DSP_PACKED: the expanded constants (m, c, e per channel), else NULL */
} utvm_dsp_cfg_t;

/* the kernels of one row x four channels with a lower clamp (UTVM_DSP_LO, not UTVM_DSP_PAIRS nor
 * UTVM_DSP_NARROW) clamp four outputs at once as bytes: cfg->lo holds lo in each byte, cfg->hi
 * hi - lo in each byte */
#define UTVM_DSP_BYTES_CLAMP(mode) \
  (((mode) & (UTVM_DSP_LO | UTVM_DSP_PAIRS | UTVM_DSP_NARROW)) == UTVM_DSP_LO)

/* a kernel: cfg->np rows at x, their outputs at out, the weights and constants in stream */
typedef void (*utvm_dsp_kernel_fn)(int8_t*, const int8_t*, const int32_t*, const utvm_dsp_cfg_t*);

/* every kernel (utvm_dsp_<name>): shape and weights, constants per channel (c) or per tensor
 * (t) or packed (p: expanded into scratch), clamped by none (n), lo (l), hi (h) or both (b); X(name)
 * for each */
#define UTVM_DSP_EIGHT_NAMES(X, NAME)                                                              \
  X(NAME##_cn) X(NAME##_cl) X(NAME##_ch) X(NAME##_cb) X(NAME##_tn) X(NAME##_tl) X(NAME##_th) X(NAME##_tb) \
  X(NAME##_pn) X(NAME##_pl) X(NAME##_ph) X(NAME##_pb)
#define UTVM_DSP_SMALL_NAMES(X, NAME) X(NAME##_cn) X(NAME##_cl) X(NAME##_ch) X(NAME##_cb) X(NAME##_tn)
#define UTVM_DSP_KERNEL_NAMES(X)                                                                      \
  UTVM_DSP_EIGHT_NAMES(X, row_w16) UTVM_DSP_EIGHT_NAMES(X, pair_w16) UTVM_DSP_EIGHT_NAMES(X, row_w8)   \
  UTVM_DSP_EIGHT_NAMES(X, pair_w8) UTVM_DSP_EIGHT_NAMES(X, narrow_w16) UTVM_DSP_EIGHT_NAMES(X, narrow_w8) \
  UTVM_DSP_EIGHT_NAMES(X, row_x8) UTVM_DSP_EIGHT_NAMES(X, narrow_x8) UTVM_DSP_EIGHT_NAMES(X, row_x8w8)    \
  UTVM_DSP_EIGHT_NAMES(X, narrow_x8w8) UTVM_DSP_SMALL_NAMES(X, small1_w16)                                \
  UTVM_DSP_SMALL_NAMES(X, small2_w16)

/* plain C: acc[0..nc) += one block's quads of a row, its inputs int8 values times scale (row)
 * or int16 pairs, ``step`` words from one quad to the next (pairs), the weights int16 pairs or
 * int8 (w8); returns the weights' end. Four loops, each without branches inside. */
#define UTVM_DSP_X_ROW(q)                                                                            \
  int32_t x0 = scale * row[4 * (q)], x1 = scale * row[4 * (q) + 1], x2 = scale * row[4 * (q) + 2], \
          x3 = scale * row[4 * (q) + 3]
#define UTVM_DSP_X_PAIRS(q)                                                                          \
  int32_t x0 = utvm_dsp_half_lo(pairs[step * (q)]), x2 = utvm_dsp_half_hi(pairs[step * (q)]),       \
          x1 = utvm_dsp_half_lo(pairs[step * (q) + 1]), x3 = utvm_dsp_half_hi(pairs[step * (q) + 1])
#define UTVM_DSP_W_W16(c)                                                                            \
  (x0 * utvm_dsp_half_lo(w[2 * (c)]) + x2 * utvm_dsp_half_hi(w[2 * (c)]) +                           \
   x1 * utvm_dsp_half_lo(w[2 * (c) + 1]) + x3 * utvm_dsp_half_hi(w[2 * (c) + 1]))
#define UTVM_DSP_W_W8(c)                                                                             \
  (x0 * ((const int8_t*)(w + (c)))[0] + x1 * ((const int8_t*)(w + (c)))[1] +                         \
   x2 * ((const int8_t*)(w + (c)))[2] + x3 * ((const int8_t*)(w + (c)))[3])
#define UTVM_DSP_QUADS_C(X, W, QWORDS)                                                               \
  for (q = 0; q < kq; ++q, w += (QWORDS)) {                                                          \
    X(q);                                                                                            \
    acc[0] += W(0);                                                                                  \
    acc[1] += W(1);                                                                                  \
    if (nc == 4) {                                                                                   \
      acc[2] += W(2);                                                                                \
      acc[3] += W(3);                                                                                \
    }                                                                                                \
  }

UTVM_INLINE const int32_t* utvm_dsp_block_c(int32_t* acc, int32_t nc,
                                                                             const int8_t* row, const int32_t* pairs,
                                                                             int32_t step, int32_t scale,
                                                                             const int32_t* w, int32_t kq, int32_t w8) {
  int32_t q;
  if (pairs && w8) {
    UTVM_DSP_QUADS_C(UTVM_DSP_X_PAIRS, UTVM_DSP_W_W8, nc)
  } else if (pairs) {
    UTVM_DSP_QUADS_C(UTVM_DSP_X_PAIRS, UTVM_DSP_W_W16, 2 * nc)
  } else if (w8) {
    UTVM_DSP_QUADS_C(UTVM_DSP_X_ROW, UTVM_DSP_W_W8, nc)
  } else {
    UTVM_DSP_QUADS_C(UTVM_DSP_X_ROW, UTVM_DSP_W_W16, 2 * nc)
  }
  return w;
}

/* plain C rows: the same stream, the same results as the assembly */
UTVM_INLINE void utvm_dsp_gemm_c(int8_t* out, const int8_t* x,
                                                                  const int32_t* stream, const utvm_dsp_cfg_t* cfg,
                                                                  int32_t mode) {
  int32_t p, c, w8 = mode & UTVM_DSP_W8, per_tensor = mode & UTVM_DSP_PER_TENSOR;
  int32_t nc = (mode & (UTVM_DSP_PAIRS | UTVM_DSP_NARROW)) ? 2 : 4, step = (mode & UTVM_DSP_PAIRS) ? 4 : 2;
  int32_t scale = w8 && !(mode & UTVM_DSP_X8) ? 2 : 1;
  int32_t twice = w8 && (mode & UTVM_DSP_X8); /* x8w8: the accumulators doubled at the end */
  int32_t rqw = UTVM_DSP_RQ_WORDS;
  int32_t packed = mode & UTVM_DSP_PACKED;
  int32_t lo = cfg->lo, hi = cfg->hi;
  if (UTVM_DSP_BYTES_CLAMP(mode)) { /* lo and hi - lo in each byte */
    lo = (int8_t)(lo & 0xFF);
    hi = lo + (hi & 0xFF);
  }
  for (p = 0; p < cfg->np; ++p) {
    const int8_t* row = x + p * cfg->xstride;
    const int32_t* pairs = 0;
    const int32_t* s = stream;
    /* the row's origin hidden from gcc's object-size analysis, which after inlining the tail rows
     * of a layer (utvm_dsp_rows) takes it for an empty object (a false -Warray-bounds) */
    __asm__("" : "+r"(row));
    int8_t* o = out + p * cfg->ostride;
    const int32_t* r = cfg->rq; /* packed: the expanded constants */
    int32_t last = 0;
    if (!cfg->scratch) /* widened rows: of a pair, row 2i at x + 2i xstride, row 2i + 1 two words on */
      pairs = (const int32_t*)(const void*)(x + (p & ~(step >> 2)) * cfg->xstride) + ((step >> 2) & p) * 2;
    while (!last) {
      int32_t acc[4] = {0, 0, 0, 0};
      const int32_t* w;
      for (c = 0; c < nc; ++c) acc[c] = s[c];
      const int32_t* q;
      w = utvm_dsp_block_c(acc, nc, row, pairs, step, scale, s + nc, cfg->kq, w8);
      q = packed ? r : w;
      for (c = 0; c < nc; ++c)
        *o++ = (int8_t)utvm_dsp_requant(twice ? 2 * acc[c] : acc[c], per_tensor ? q : q + rqw * c, lo, hi);
      q += (per_tensor ? 1 : nc) * rqw;
      s = packed ? w : q;
      r = packed ? q : r;
      last = q[2 - rqw] & UTVM_DSP_LAST; /* in the last channel's e word */
    }
  }
}

#ifdef UTVM_DSP_ASM

/* The assembly kernels: r0 out, r1 x, r2 stream, r3 cfg (AAPCS), callee-saved registers pushed.
 * The quads of a block run in a body unrolled UTVM_DSP_QMAX times, entered at the address that
 * leaves the first kq % QMAX (or QMAX) quads, then repeated until the row's inputs end: no loop
 * counter, no loop overhead below QMAX quads. Requantization: r4-r6 m, c, e; r7 the output. */
#define UTVM_DSP_QMAX "16"

/* frame slots shared by both kernels */
#define UTVM_DSP_F_ROWS "[sp, #0]"    /* rows (pairs) left; with the next four: one LDM at a row's end */
#define UTVM_DSP_F_X "[sp, #4]"       /* this row's (pair's) inputs */
#define UTVM_DSP_F_ROWOUT "[sp, #8]"  /* this row's (pair's) first output */
#define UTVM_DSP_F_XSTRIDE "[sp, #12]"
#define UTVM_DSP_F_OSTRIDE "[sp, #16]"
#define UTVM_DSP_F_OUT "[sp, #20]"    /* the next output */
#define UTVM_DSP_F_RQ "[sp, #24]"     /* packed: the next block's expanded constants (after F_OUT: one LDRD) */
#define UTVM_DSP_F_RQBASE "[sp, #28]" /* packed: the first block's */
#define UTVM_DSP_F_ENTRY "[sp, #32]"  /* where a block's quads start (Thumb bit set) */
#define UTVM_DSP_F_XEND "[sp, #36]"   /* the end of this row's (pair's) int16 pairs */
#define UTVM_DSP_F_R1OFF "[sp, #40]"  /* pairs: bytes from row 0's outputs to row 1's (0: row 1 is row 0) */
#define UTVM_DSP_F_XBASE "[sp, #44]"  /* this row's (pair's) int16 pairs */
#define UTVM_DSP_F_CFG "[sp, #48]"
#define UTVM_DSP_F_STREAM "[sp, #52]"
#define UTVM_DSP_F_LOHI "[sp, #56]"   /* lo, hi */
#define UTVM_DSP_F_LO "[sp, #56]"
#define UTVM_DSP_F_HI "[sp, #60]"
#define UTVM_DSP_FRAME "64"

/* ROWS: the rows, or (pairs) (np + 1) / 2; ENTRY: where the block's quads start */
#define UTVM_DSP_PROLOGUE(ROWS, ENTRY)       \
  "push {r4-r11, lr}\n\t"                    \
  "sub sp, sp, #" UTVM_DSP_FRAME "\n\t"      \
  "ldm r3, {r4-r9}\n\t"                      \
  "str r1, " UTVM_DSP_F_X "\n\t"             \
  "str r0, " UTVM_DSP_F_OUT "\n\t"           \
  "str r0, " UTVM_DSP_F_ROWOUT "\n\t"        \
  "str r5, " UTVM_DSP_F_XSTRIDE "\n\t"       \
  "ldrd r5, r12, [r3, #24]\n\t"              \
  "str r5, " UTVM_DSP_F_OSTRIDE "\n\t"       \
  "strd r12, r12, " UTVM_DSP_F_RQ "\n\t"     \
  "str r3, " UTVM_DSP_F_CFG "\n\t"           \
  "str r2, " UTVM_DSP_F_STREAM "\n\t"        \
  "strd r8, r9, " UTVM_DSP_F_LOHI "\n\t"     \
  ROWS                                       \
  "str r4, " UTVM_DSP_F_ROWS "\n\t"          \
  ENTRY

/* the entry into the unrolled body (QB: bytes of one quad's code) for kq (r6) quads */
#define UTVM_DSP_ENTRY(QB) UTVM_DSP_ENTRY_N("adds r12, r12, #1\n\t", QB)
/* ONE: "" for (kq - 1) % QMAX quads, else (kq - 1) % QMAX + 1 */
#define UTVM_DSP_ENTRY_N(ONE, QB)            \
  "subs r12, r6, #1\n\t"                     \
  "and r12, r12, #" UTVM_DSP_QMAX " - 1\n\t" \
  ONE                                        \
  "movs r11, #" QB "\n\t"                    \
  "mul r12, r12, r11\n\t"                    \
  "adr r11, 6f\n\t"                          \
  "subs r11, r11, r12\n\t"                   \
  "orr r11, r11, #1\n\t"                     \
  "str r11, " UTVM_DSP_F_ENTRY "\n\t"

#define UTVM_DSP_PAIR_COUNT "adds r4, r4, #1\n\tlsrs r4, r4, #1\n\t"

/* pairs: the entry for the kq - 1 quads after the first, (kq - 1) % QMAX of them before the check
 * at 6 (none: entered at 6, whose check repeats the whole body while quads are left) */
#define UTVM_DSP_ENTRY2(QB) UTVM_DSP_ENTRY_N("", QB)

/* doubling of widened pairs (int8 weights) */
#define UTVM_DSP_DBL(r) "sadd16 " r ", " r ", " r "\n\t"

/* one row: widened into the scratch (two quads per step), or its pairs used in place */
#define UTVM_DSP_ROW_START(DBL)            \
  "1:\n\t"                                 \
  "ldr r12, " UTVM_DSP_F_CFG "\n\t"        \
  "ldr r9, " UTVM_DSP_F_X "\n\t"           \
  "ldr r10, [r12, #12]\n\t"                \
  "ldr r12, [r12, #8]\n\t"                 \
  "cmp r10, #0\n\t"                        \
  "beq 8f\n\t"                             \
  "str r10, " UTVM_DSP_F_XBASE "\n\t"      \
  "lsrs r12, r12, #1\n\t"                  \
  "bcc 7f\n\t"                             \
  "ldr r4, [r9], #4\n\t"                   \
  "sxtb16 r5, r4\n\t"                      \
  "sxtb16 r6, r4, ror #8\n\t"              \
  DBL("r5") DBL("r6")                      \
  "strd r5, r6, [r10], #8\n\t"             \
  "beq 2f\n\t"                             \
  "7:\n\t"                                 \
  "ldrd r4, r7, [r9], #8\n\t"              \
  "sxtb16 r5, r4\n\t"                      \
  "sxtb16 r6, r4, ror #8\n\t"              \
  "sxtb16 r8, r7, ror #8\n\t"              \
  "sxtb16 r7, r7\n\t"                      \
  DBL("r5") DBL("r6") DBL("r7") DBL("r8")  \
  "stm r10!, {r5-r8}\n\t"                  \
  "subs r12, r12, #1\n\t"                  \
  "bne 7b\n\t"                             \
  "2:\n\t"                                 \
  "str r10, " UTVM_DSP_F_XEND "\n\t"       \
  "b 9f\n\t"                               \
  "8:\n\t"                                 \
  "str r9, " UTVM_DSP_F_XBASE "\n\t"       \
  "add r12, r9, r12, lsl #3\n\t"           \
  "str r12, " UTVM_DSP_F_XEND "\n\t"       \
  "9:\n\t"                                 \
  "ldr r11, " UTVM_DSP_F_STREAM "\n\t"     \
  "ldr lr, " UTVM_DSP_F_OUT "\n\t"

/* a row read as int8 words in the quads (X8: no widening) */
#define UTVM_DSP_ROW_X8_START              \
  "1:\n\t"                                 \
  "ldr r12, " UTVM_DSP_F_CFG "\n\t"        \
  "ldr r9, " UTVM_DSP_F_X "\n\t"           \
  "ldr r12, [r12, #8]\n\t"                 \
  "str r9, " UTVM_DSP_F_XBASE "\n\t"      \
  "add r12, r9, r12, lsl #2\n\t"           \
  "str r12, " UTVM_DSP_F_XEND "\n\t"       \
  "ldr r11, " UTVM_DSP_F_STREAM "\n\t"     \
  "ldr lr, " UTVM_DSP_F_OUT "\n\t"

/* a pair of rows: row 1 at xstride from row 0 (0 for the last pair of an odd count, whose
 * outputs then go over row 0's, the same values), widened interleaved (per quad row 0's two
 * pair words, then row 1's), or (no scratch) interleaved already, the pair at 2 xstride */
#define UTVM_DSP_PAIR_START(DBL)           \
  "1:\n\t"                                 \
  "ldr r12, " UTVM_DSP_F_CFG "\n\t"        \
  "ldr r9, " UTVM_DSP_F_X "\n\t"           \
  "ldr r8, [r12, #4]\n\t"                  \
  "ldr r10, [r12, #24]\n\t"                \
  "ldr r4, " UTVM_DSP_F_ROWS "\n\t"        \
  "cmp r4, #1\n\t"                         \
  "bne 2f\n\t"                             \
  "ldr r5, [r12, #0]\n\t"                  \
  "tst r5, #1\n\t"                         \
  "itt ne\n\t"                             \
  "movne r8, #0\n\t"                       \
  "movne r10, #0\n\t"                      \
  "2:\n\t"                                 \
  "str r10, " UTVM_DSP_F_R1OFF "\n\t"      \
  "ldr r10, [r12, #12]\n\t"                \
  "ldr r12, [r12, #8]\n\t"                 \
  "cmp r10, #0\n\t"                        \
  "beq 8f\n\t"                             \
  "str r10, " UTVM_DSP_F_XBASE "\n\t"      \
  "add r8, r9, r8\n\t"                     \
  "7:\n\t"                                 \
  "ldr r6, [r9], #4\n\t"                   \
  "ldr r7, [r8], #4\n\t"                   \
  "sxtb16 r4, r6\n\t"                      \
  "sxtb16 r5, r6, ror #8\n\t"              \
  "sxtb16 r6, r7\n\t"                      \
  "sxtb16 r7, r7, ror #8\n\t"              \
  DBL("r4") DBL("r5") DBL("r6") DBL("r7")  \
  "stm r10!, {r4-r7}\n\t"                  \
  "subs r12, r12, #1\n\t"                  \
  "bne 7b\n\t"                             \
  "str r10, " UTVM_DSP_F_XEND "\n\t"       \
  "b 9f\n\t"                               \
  "8:\n\t"                                 \
  "str r9, " UTVM_DSP_F_XBASE "\n\t"       \
  "add r12, r9, r12, lsl #4\n\t"           \
  "str r12, " UTVM_DSP_F_XEND "\n\t"       \
  "9:\n\t"                                 \
  "ldr r11, " UTVM_DSP_F_STREAM "\n\t"

/* one quad, one row x four channels: int16 weights (11 instructions, 44 bytes) */
#define UTVM_DSP_QUAD1_W16 "ldrd r8, r9, [r10], #8\n\t" UTVM_DSP_QUAD1_W16_BODY
#define UTVM_DSP_QUAD1_W16_BODY            \
  "ldm.w r11!, {r4-r7}\n\t"                \
  "smlad r0, r8, r4, r0\n\t"               \
  "smlad r0, r9, r5, r0\n\t"               \
  "smlad r1, r8, r6, r1\n\t"               \
  "smlad r1, r9, r7, r1\n\t"               \
  "ldm.w r11!, {r4-r7}\n\t"                \
  "smlad r2, r8, r4, r2\n\t"               \
  "smlad r2, r9, r5, r2\n\t"               \
  "smlad r3, r8, r6, r3\n\t"               \
  "smlad r3, r9, r7, r3\n\t"

/* int8 weights: two channels' words extended (19 instructions, 76 bytes per quad) */
#define UTVM_DSP_W8_TWO(A, B)              \
  "ldrd r4, r5, [r11], #8\n\t"             \
  "sxtb16 r6, r4\n\t"                      \
  "sxtb16 r4, r4, ror #8\n\t"              \
  "smlad " A ", r8, r6, " A "\n\t"         \
  "smlad " A ", r9, r4, " A "\n\t"         \
  "sxtb16 r6, r5\n\t"                      \
  "sxtb16 r5, r5, ror #8\n\t"              \
  "smlad " B ", r8, r6, " B "\n\t"         \
  "smlad " B ", r9, r5, " B "\n\t"
#define UTVM_DSP_QUAD1_W8 "ldrd r8, r9, [r10], #8\n\t" UTVM_DSP_W8_TWO("r0", "r1") UTVM_DSP_W8_TWO("r2", "r3")

/* one quad, one row x two channels: int16 weights 6 instructions (24 bytes), int8 10 (40 bytes) */
#define UTVM_DSP_QUADN_W16 "ldrd r8, r9, [r10], #8\n\t" UTVM_DSP_QUADN_W16_BODY
#define UTVM_DSP_QUADN_W16_BODY            \
  "ldm.w r11!, {r4-r7}\n\t"                \
  "smlad r0, r8, r4, r0\n\t"               \
  "smlad r0, r9, r5, r0\n\t"               \
  "smlad r1, r8, r6, r1\n\t"               \
  "smlad r1, r9, r7, r1\n\t"
#define UTVM_DSP_QUADN_W8 "ldrd r8, r9, [r10], #8\n\t" UTVM_DSP_W8_TWO("r0", "r1")

/* the same with the inputs as int8 words, each split once (X8): 13 (52 bytes), 8 (32 bytes) */
#define UTVM_DSP_SPLIT "ldr.w r8, [r10], #4\n\tsxtb16 r9, r8, ror #8\n\tsxtb16 r8, r8\n\t"
#define UTVM_DSP_QUAD1_X8 UTVM_DSP_SPLIT UTVM_DSP_QUAD1_W16_BODY
#define UTVM_DSP_QUADN_X8 UTVM_DSP_SPLIT UTVM_DSP_QUADN_W16_BODY
/* with int8 weights (x8w8): 21 instructions (84 bytes), 12 (48 bytes); the inputs not doubled: the
 * accumulators (the biases undoubled) are doubled before the requantization */
#define UTVM_DSP_QUAD1_X8W8 UTVM_DSP_SPLIT UTVM_DSP_W8_TWO("r0", "r1") UTVM_DSP_W8_TWO("r2", "r3")
#define UTVM_DSP_QUADN_X8W8 UTVM_DSP_SPLIT UTVM_DSP_W8_TWO("r0", "r1")
#define UTVM_DSP_DOUBLE2 "add r0, r0, r0\n\tadd r1, r1, r1\n\t"
#define UTVM_DSP_DOUBLE4 UTVM_DSP_DOUBLE2 "add r2, r2, r2\n\tadd r3, r3, r3\n\t"

/* one quad, two rows x two channels: accumulators r0 (row 0, c0), r1 (row 0, c1), r2 (row 1,
 * c0), r3 (row 1, c1); inputs r8, r9 (row 0), r12, lr (row 1). int16 weights: 10 instructions,
 * 40 bytes; int8: 14, 56 bytes */
#define UTVM_DSP_QUAD2_W16 UTVM_DSP_QUAD2_W16_FROM("r2", "r3")
#define UTVM_DSP_FIRST2_W16 UTVM_DSP_QUAD2_W16_FROM("r0", "r1")
/* row 1's accumulators first, from A2, A3: themselves, or in a block's first quad (FIRST2) row 0's
 * biases before those accumulate (the stream holds each bias once, for both rows) */
#define UTVM_DSP_QUAD2_W16_FROM(A2, A3)    \
  "ldm.w r10!, {r8, r9, r12, lr}\n\t"      \
  "ldm.w r11!, {r4-r7}\n\t"                \
  "smlad r2, r12, r4, " A2 "\n\t"          \
  "smlad r2, lr, r5, r2\n\t"               \
  "smlad r3, r12, r6, " A3 "\n\t"          \
  "smlad r3, lr, r7, r3\n\t"               \
  "smlad r0, r8, r4, r0\n\t"               \
  "smlad r0, r9, r5, r0\n\t"               \
  "smlad r1, r8, r6, r1\n\t"               \
  "smlad r1, r9, r7, r1\n\t"

#define UTVM_DSP_QUAD2_W8 UTVM_DSP_QUAD2_W8_FROM("r2", "r3")
#define UTVM_DSP_FIRST2_W8 UTVM_DSP_QUAD2_W8_FROM("r0", "r1")
#define UTVM_DSP_QUAD2_W8_FROM(A2, A3)     \
  "ldm.w r10!, {r8, r9, r12, lr}\n\t"      \
  "ldrd r4, r5, [r11], #8\n\t"             \
  "sxtb16 r6, r4\n\t"                      \
  "sxtb16 r4, r4, ror #8\n\t"              \
  "smlad r2, r12, r6, " A2 "\n\t"          \
  "smlad r2, lr, r4, r2\n\t"               \
  "smlad r0, r8, r6, r0\n\t"               \
  "smlad r0, r9, r4, r0\n\t"               \
  "sxtb16 r6, r5\n\t"                      \
  "sxtb16 r5, r5, ror #8\n\t"              \
  "smlad r3, r12, r6, " A3 "\n\t"          \
  "smlad r3, lr, r5, r3\n\t"               \
  "smlad r1, r8, r6, r1\n\t"               \
  "smlad r1, r9, r5, r1\n\t"

/* a block's quads: the accumulators from the biases (BIAS: one word per channel), FIRST (pairs:
 * the first quad, which starts row 1's accumulators from row 0's biases), the unrolled body
 * entered at F_ENTRY */
#define UTVM_DSP_BIAS4 "ldm r11!, {r0-r3}\n\t"
#define UTVM_DSP_BIAS2 "ldm r11!, {r0, r1}\n\t"
#define UTVM_DSP_BLOCK(BIAS, FIRST, QUAD)  \
  "3:\n\t"                                 \
  BIAS                                     \
  "ldr r10, " UTVM_DSP_F_XBASE "\n\t"      \
  FIRST                                    \
  "ldr pc, " UTVM_DSP_F_ENTRY "\n\t"       \
  "5:\n\t"                                 \
  ".rept " UTVM_DSP_QMAX "\n\t"            \
  QUAD                                     \
  ".endr\n\t"                              \
  "6:\n\t"                                 \
  "ldr r12, " UTVM_DSP_F_XEND "\n\t"       \
  "cmp r10, r12\n\t"                       \
  "bne 5b\n\t"

/* accumulator A requantized with m, c, e (r4-r6) into r7 (CLAMP: by lo, hi in r8, r9), stored
 * by STORE */
#define UTVM_DSP_RQ1(A, CLAMP, STORE)      \
  "smmlar r7, " A ", r4, r5\n\t"           \
  "add r7, r7, " A ", asr #31\n\t"         \
  "asr r7, r7, r6\n\t"                     \
  CLAMP                                    \
  STORE

#define UTVM_DSP_NEXT "strb r7, [lr], #1\n\t"
#define UTVM_DSP_ROW1 "strb r7, [lr, r12]\n\t"
/* saturation to int8 and the activation clamp beyond it: none, lo (r8) only, hi (r9) only, both.
 * With a lower bound the constant c holds zy - lo (UTVM_DSP_LO): max(t, 0) (USAT #31) + lo is
 * max(y, lo); SSAT then bounds it above by 127 */
#define UTVM_DSP_CLAMP_N "ssat r7, #8, r7\n\t"
#define UTVM_DSP_MAX_LO(LO) "usat r7, #31, r7\n\tadd r7, r7, " LO "\n\tssat r7, #8, r7\n\t"
#define UTVM_DSP_MIN_HI(HI) "cmp r7, " HI "\n\tit gt\n\tmovgt r7, " HI "\n\t"
#define UTVM_DSP_CLAMP_L UTVM_DSP_MAX_LO("r8")
#define UTVM_DSP_CLAMP_H UTVM_DSP_CLAMP_N UTVM_DSP_MIN_HI("r9")
#define UTVM_DSP_CLAMP_B UTVM_DSP_CLAMP_L UTVM_DSP_MIN_HI("r9")
/* the upper clamp in the small-row kernels, which hold inputs in r8, r9: the bound loaded into r5
 * (c, spent by then) */
#define UTVM_DSP_LOAD_HI "ldr r5, " UTVM_DSP_F_HI "\n\t"
#define UTVM_DSP_SCLAMP_H UTVM_DSP_CLAMP_N UTVM_DSP_LOAD_HI UTVM_DSP_MIN_HI("r5")
#define UTVM_DSP_LOAD_LOHI "ldrd r8, r9, " UTVM_DSP_F_LOHI "\n\t"
#define UTVM_DSP_LOAD_RQ "ldm r11!, {r4-r6}\n\t"

/* requantization of one row x four channels: constants per channel (C: LOAD before each
 * channel) or per block (LOAD once) */
#define UTVM_DSP_RQ_ROW(CLAMP, LOADLOHI, L0, L1, PK)                                                  \
  LOADLOHI UTVM_DSP_RQ_AT_##PK L0 UTVM_DSP_RQ1("r0", CLAMP, UTVM_DSP_NEXT) L1 UTVM_DSP_RQ1("r1", CLAMP, UTVM_DSP_NEXT) \
  L1 UTVM_DSP_RQ1("r2", CLAMP, UTVM_DSP_NEXT) L1 UTVM_DSP_RQ1("r3", CLAMP, UTVM_DSP_NEXT)          \
  UTVM_DSP_RQ_BACK_##PK                                                                              \
  "tst r6, #256\n\t"                                                                                 \
  "beq 3b\n\t"

/* one row x four channels with a lower clamp (l, b), the four outputs clamped as bytes: per channel
 * u = y - lo saturated to [0, 255] (USAT; c holds zy - lo), into the accumulator's register (its
 * sign used by then); the four bytes in r0 (BFI), min(u, hi - lo) (USUB8, SEL with LH's bytes
 * hi - lo), + lo (UADD8 with LL's bytes lo: y modulo 256), one STR: 11 instructions per four outputs
 * after the shifts where the clamps take 16 (lo) or 28 (both) one at a time. LOADLOHI: LL, LH from
 * the frame before the block's requantization (row kernels: r8, r9) or LATE after it (small rows,
 * whose r8, r9 hold inputs: r4, r5, spent by then) */
#define UTVM_DSP_RQ1U(A)              \
  "smmlar r7, " A ", r4, r5\n\t"     \
  "add r7, r7, " A ", asr #31\n\t"   \
  "asr r7, r7, r6\n\t"               \
  "usat " A ", #8, r7\n\t"
#define UTVM_DSP_RQ_BYTES(LOADLOHI, LATE, LL, LH, L0, L1, PK)                                       \
  LOADLOHI UTVM_DSP_RQ_AT_##PK L0 UTVM_DSP_RQ1U("r0") L1 UTVM_DSP_RQ1U("r1") L1 UTVM_DSP_RQ1U("r2")  \
  L1 UTVM_DSP_RQ1U("r3") LATE                                                                      \
  "bfi r0, r1, #8, #8\n\t"                                                                          \
  "bfi r0, r2, #16, #8\n\t"                                                                         \
  "bfi r0, r3, #24, #8\n\t"                                                                         \
  "usub8 r7, r0, " LH "\n\t"                                                                        \
  "sel r0, " LH ", r0\n\t"                                                                          \
  "uadd8 r0, r0, " LL "\n\t"                                                                        \
  "str r0, [lr], #4\n\t"                                                                            \
  UTVM_DSP_RQ_BACK_##PK                                                                            \
  "tst r6, #256\n\t"                                                                                \
  "beq 3b\n\t"
#define UTVM_DSP_RQ_ROW_BYTES(CLAMP, LOADLOHI, L0, L1, PK) \
  UTVM_DSP_RQ_BYTES(LOADLOHI, "", "r8", "r9", L0, L1, PK)

/* packed (PK = P) or not (N): the expanded constants' pointer (r10) from and back to the frame,
 * with pairs in one LDRD / STRD with the output pointer */
#define UTVM_DSP_RQ_AT_N ""
#define UTVM_DSP_RQ_AT_P "ldr r10, " UTVM_DSP_F_RQ "\n\t"
#define UTVM_DSP_RQ_BACK_N ""
#define UTVM_DSP_RQ_BACK_P "str r10, " UTVM_DSP_F_RQ "\n\t"
#define UTVM_DSP_OUT_AT_N "ldr lr, " UTVM_DSP_F_OUT "\n\t"
#define UTVM_DSP_OUT_AT_P "ldrd lr, r10, " UTVM_DSP_F_OUT "\n\t"
#define UTVM_DSP_OUT_BACK_N "str lr, " UTVM_DSP_F_OUT "\n\t"
#define UTVM_DSP_OUT_BACK_P "strd lr, r10, " UTVM_DSP_F_OUT "\n\t"

/* one row x two channels */
#define UTVM_DSP_RQ_NARROW(CLAMP, LOADLOHI, L0, L1, PK)                                               \
  LOADLOHI UTVM_DSP_RQ_AT_##PK L0 UTVM_DSP_RQ1("r0", CLAMP, UTVM_DSP_NEXT) L1 UTVM_DSP_RQ1("r1", CLAMP, UTVM_DSP_NEXT) \
  UTVM_DSP_RQ_BACK_##PK                                                                              \
  "tst r6, #256\n\t"                                                                                 \
  "beq 3b\n\t"

/* two rows x two channels: row 1's outputs at R1OFF from row 0's */
#define UTVM_DSP_RQ_PAIR(CLAMP, LOADLOHI, L0, L1, PK)                                                 \
  UTVM_DSP_OUT_AT_##PK                                                                               \
  "ldr r12, " UTVM_DSP_F_R1OFF "\n\t"                                                                \
  LOADLOHI L0 UTVM_DSP_RQ1("r2", CLAMP, UTVM_DSP_ROW1) UTVM_DSP_RQ1("r0", CLAMP, UTVM_DSP_NEXT)    \
  L1 UTVM_DSP_RQ1("r3", CLAMP, UTVM_DSP_ROW1) UTVM_DSP_RQ1("r1", CLAMP, UTVM_DSP_NEXT)             \
  UTVM_DSP_OUT_BACK_##PK                                                                             \
  "tst r6, #256\n\t"                                                                                 \
  "beq 3b\n\t"

/* the next row (inputs at xstride, outputs at ostride) or pair (SHIFT ", lsl #1": twice) */
#define UTVM_DSP_ROW_END(SHIFT)                   \
  "ldm sp, {r4-r8}\n\t"                           \
  "subs r4, r4, #1\n\t"                           \
  "add r5, r5, r7" SHIFT "\n\t"                   \
  "add r6, r6, r8" SHIFT "\n\t"                   \
  "stm sp, {r4-r6}\n\t"                           \
  "str r6, " UTVM_DSP_F_OUT "\n\t"                \
  "bne 1b\n\t"                                    \
  "add sp, sp, #" UTVM_DSP_FRAME "\n\t"           \
  "pop {r4-r11, pc}\n\t"

#define UTVM_DSP_UNUSED __attribute__((unused))
#define UTVM_DSP_KERNEL(name, BODY)                                                                       \
  __attribute__((naked, noinline)) static void name(                                                  \
      UTVM_DSP_UNUSED int8_t* out, UTVM_DSP_UNUSED const int8_t* x, UTVM_DSP_UNUSED const int32_t* stream, \
      UTVM_DSP_UNUSED const utvm_dsp_cfg_t* cfg) {                                                        \
    __asm__ volatile(BODY);                                                                               \
  }

/* the kernels' shapes: rows x four channels, pairs of rows x two channels (with the entry into
 * the unrolled quads), rows of one or two quads kept in registers x four channels */
#define UTVM_DSP_ROW_KERNEL(QUAD, QB, DBL, BIAS, RQ) \
  UTVM_DSP_ROW_KERNEL_AT(QUAD, QB, UTVM_DSP_ROW_START(DBL), BIAS, RQ)
#define UTVM_DSP_ROW_KERNEL_AT(QUAD, QB, START, BIAS, RQ)                                        \
  UTVM_DSP_PROLOGUE("", UTVM_DSP_ENTRY(QB)) START UTVM_DSP_BLOCK(BIAS, "", QUAD) RQ UTVM_DSP_ROW_END("")
#define UTVM_DSP_PAIR_KERNEL(FIRST, QUAD, QB, DBL, RQ)                                           \
  UTVM_DSP_PROLOGUE(UTVM_DSP_PAIR_COUNT, UTVM_DSP_ENTRY2(QB)) UTVM_DSP_PAIR_START(DBL)          \
  UTVM_DSP_BLOCK(UTVM_DSP_BIAS2, FIRST, QUAD) RQ UTVM_DSP_ROW_END(", lsl #1")
#define UTVM_DSP_SMALL_KERNEL(WIDEN, QUADS, RQ)                                                  \
  UTVM_DSP_PROLOGUE("", "") "1:\n\t" "ldr r4, " UTVM_DSP_F_X "\n\t" WIDEN                         \
  "ldr r11, " UTVM_DSP_F_STREAM "\n\t" "ldr lr, " UTVM_DSP_F_OUT "\n\t"                          \
  "3:\n\t" "ldm r11!, {r0-r3}\n\t" QUADS RQ UTVM_DSP_ROW_END("")

/* small rows: the inputs of one quad (in r8, r9) or two (r8, r9, r10, r12), int16 weights */
#define UTVM_DSP_SMALL_IN1 "ldr r5, [r4]\n\tsxtb16 r8, r5\n\tsxtb16 r9, r5, ror #8\n\t"
#define UTVM_DSP_SMALL_IN2 \
  "ldrd r5, r6, [r4]\n\tsxtb16 r8, r5\n\tsxtb16 r9, r5, ror #8\n\tsxtb16 r10, r6\n\tsxtb16 r12, r6, ror #8\n\t"
#define UTVM_DSP_SMALL_QUAD(XE, XO)                                                                         \
  "ldm r11!, {r4-r7}\n\tsmlad r0, " XE ", r4, r0\n\tsmlad r0, " XO ", r5, r0\n\t"                          \
  "smlad r1, " XE ", r6, r1\n\tsmlad r1, " XO ", r7, r1\n\t"                                               \
  "ldm r11!, {r4-r7}\n\tsmlad r2, " XE ", r4, r2\n\tsmlad r2, " XO ", r5, r2\n\t"                          \
  "smlad r3, " XE ", r6, r3\n\tsmlad r3, " XO ", r7, r3\n\t"

#define UTVM_DSP_NODBL(r) ""
#define UTVM_DSP_ROW_W16(RQ) UTVM_DSP_ROW_KERNEL(UTVM_DSP_QUAD1_W16, "44", UTVM_DSP_NODBL, UTVM_DSP_BIAS4, RQ)
#define UTVM_DSP_PAIR_W16(RQ) UTVM_DSP_PAIR_KERNEL(UTVM_DSP_FIRST2_W16, UTVM_DSP_QUAD2_W16, "40", UTVM_DSP_NODBL, RQ)
#define UTVM_DSP_ROW_W8(RQ) UTVM_DSP_ROW_KERNEL(UTVM_DSP_QUAD1_W8, "76", UTVM_DSP_DBL, UTVM_DSP_BIAS4, RQ)
#define UTVM_DSP_PAIR_W8(RQ) UTVM_DSP_PAIR_KERNEL(UTVM_DSP_FIRST2_W8, UTVM_DSP_QUAD2_W8, "56", UTVM_DSP_DBL, RQ)
#define UTVM_DSP_NARROW_W16(RQ) UTVM_DSP_ROW_KERNEL(UTVM_DSP_QUADN_W16, "24", UTVM_DSP_NODBL, UTVM_DSP_BIAS2, RQ)
#define UTVM_DSP_NARROW_W8(RQ) UTVM_DSP_ROW_KERNEL(UTVM_DSP_QUADN_W8, "40", UTVM_DSP_DBL, UTVM_DSP_BIAS2, RQ)
#define UTVM_DSP_ROW_X8(RQ) \
  UTVM_DSP_ROW_KERNEL_AT(UTVM_DSP_QUAD1_X8, "52", UTVM_DSP_ROW_X8_START, UTVM_DSP_BIAS4, RQ)
#define UTVM_DSP_NARROW_X8(RQ) \
  UTVM_DSP_ROW_KERNEL_AT(UTVM_DSP_QUADN_X8, "32", UTVM_DSP_ROW_X8_START, UTVM_DSP_BIAS2, RQ)
#define UTVM_DSP_ROW_X8W8(RQ) \
  UTVM_DSP_ROW_KERNEL_AT(UTVM_DSP_QUAD1_X8W8, "84", UTVM_DSP_ROW_X8_START, UTVM_DSP_BIAS4, UTVM_DSP_DOUBLE4 RQ)
#define UTVM_DSP_NARROW_X8W8(RQ)                                                                    \
  UTVM_DSP_ROW_KERNEL_AT(UTVM_DSP_QUADN_X8W8, "48", UTVM_DSP_ROW_X8_START, UTVM_DSP_BIAS2, UTVM_DSP_DOUBLE2 RQ)
#define UTVM_DSP_SMALL1(RQ) UTVM_DSP_SMALL_KERNEL(UTVM_DSP_SMALL_IN1, UTVM_DSP_SMALL_QUAD("r8", "r9"), RQ)
#define UTVM_DSP_SMALL2(RQ)                                                                          \
  UTVM_DSP_SMALL_KERNEL(UTVM_DSP_SMALL_IN2, UTVM_DSP_SMALL_QUAD("r8", "r9") UTVM_DSP_SMALL_QUAD("r10", "r12"), RQ)

/* the kernels of one shape and weight type NAME: constants per channel (c) or per tensor (t),
 * clamped by none (n), lo (l), hi (h) or both (b) */
#define UTVM_DSP_RQ_ALL(RQ, CL, LOAD)                                                             \
  RQ(UTVM_DSP_CLAMP_##CL, LOAD, UTVM_DSP_LOAD_RQ, UTVM_DSP_LOAD_RQ, N)
#define UTVM_DSP_RQ_ONE(RQ, CL, LOAD) RQ(UTVM_DSP_CLAMP_##CL, LOAD, UTVM_DSP_LOAD_RQ, "", N)
/* packed: the block's constants from the expanded ones in scratch (r10, free after the quads),
 * back to the first block's at the end of a row */
#define UTVM_DSP_LOAD_PK "ldm r10!, {r4-r6}\n\t"
#define UTVM_DSP_RQ_PK(RQ, CL, LOAD)                                                                  \
  RQ(UTVM_DSP_CLAMP_##CL, LOAD, UTVM_DSP_LOAD_PK, UTVM_DSP_LOAD_PK, P)                                \
  "ldr r10, " UTVM_DSP_F_RQBASE "\n\t"                                                                  \
  "str r10, " UTVM_DSP_F_RQ "\n\t"
/* RQL: the requantization of the kernels with a lower clamp (l, b) */
#define UTVM_DSP_CLAMPS(NAME, KERNEL, RQ, RQL, PER)                                               \
  UTVM_DSP_KERNEL(NAME##n, KERNEL(PER(RQ, N, "")))                                                \
  UTVM_DSP_KERNEL(NAME##l, KERNEL(PER(RQL, L, UTVM_DSP_LOAD_LOHI)))                               \
  UTVM_DSP_KERNEL(NAME##h, KERNEL(PER(RQ, H, UTVM_DSP_LOAD_LOHI)))                                \
  UTVM_DSP_KERNEL(NAME##b, KERNEL(PER(RQL, B, UTVM_DSP_LOAD_LOHI)))
#define UTVM_DSP_EIGHT_L(NAME, KERNEL, RQ, RQL)                                                    \
  UTVM_DSP_CLAMPS(NAME##_c, KERNEL, RQ, RQL, UTVM_DSP_RQ_ALL)                                       \
  UTVM_DSP_CLAMPS(NAME##_t, KERNEL, RQ, RQL, UTVM_DSP_RQ_ONE) UTVM_DSP_CLAMPS(NAME##_p, KERNEL, RQ, RQL, UTVM_DSP_RQ_PK)
#define UTVM_DSP_EIGHT(NAME, KERNEL, RQ) UTVM_DSP_EIGHT_L(NAME, KERNEL, RQ, RQ)
#define UTVM_DSP_EIGHT_ROW(NAME, KERNEL) UTVM_DSP_EIGHT_L(NAME, KERNEL, UTVM_DSP_RQ_ROW, UTVM_DSP_RQ_ROW_BYTES)

/* the kernels a model does not name are not emitted (no unused-function warning for them) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
UTVM_DSP_EIGHT_ROW(utvm_dsp_row_w16, UTVM_DSP_ROW_W16)
UTVM_DSP_EIGHT(utvm_dsp_pair_w16, UTVM_DSP_PAIR_W16, UTVM_DSP_RQ_PAIR)
UTVM_DSP_EIGHT_ROW(utvm_dsp_row_w8, UTVM_DSP_ROW_W8)
UTVM_DSP_EIGHT(utvm_dsp_pair_w8, UTVM_DSP_PAIR_W8, UTVM_DSP_RQ_PAIR)
UTVM_DSP_EIGHT(utvm_dsp_narrow_w16, UTVM_DSP_NARROW_W16, UTVM_DSP_RQ_NARROW)
UTVM_DSP_EIGHT(utvm_dsp_narrow_w8, UTVM_DSP_NARROW_W8, UTVM_DSP_RQ_NARROW)
UTVM_DSP_EIGHT_ROW(utvm_dsp_row_x8, UTVM_DSP_ROW_X8)
UTVM_DSP_EIGHT(utvm_dsp_narrow_x8, UTVM_DSP_NARROW_X8, UTVM_DSP_RQ_NARROW)
UTVM_DSP_EIGHT_ROW(utvm_dsp_row_x8w8, UTVM_DSP_ROW_X8W8)
UTVM_DSP_EIGHT(utvm_dsp_narrow_x8w8, UTVM_DSP_NARROW_X8W8, UTVM_DSP_RQ_NARROW)
/* small rows with a lower clamp: the outputs clamped as bytes, lo and hi - lo from the frame into r4,
 * r5 after the four channels' requantization */
#define UTVM_DSP_RQ_SMALL_LO                                                                      \
  UTVM_DSP_RQ_BYTES("", "ldrd r4, r5, " UTVM_DSP_F_LOHI "\n\t", "r4", "r5", UTVM_DSP_LOAD_RQ, UTVM_DSP_LOAD_RQ, N)

/* small rows: constants per channel with any clamp, per tensor unclamped */
#define UTVM_DSP_SMALL_KERNELS(NAME, KERNEL)                                                       \
  UTVM_DSP_KERNEL(NAME##_cn, KERNEL(UTVM_DSP_RQ_ROW(UTVM_DSP_CLAMP_N, "", UTVM_DSP_LOAD_RQ, UTVM_DSP_LOAD_RQ, N))) \
  UTVM_DSP_KERNEL(NAME##_cl, KERNEL(UTVM_DSP_RQ_SMALL_LO))                                         \
  UTVM_DSP_KERNEL(NAME##_ch, KERNEL(UTVM_DSP_RQ_ROW(UTVM_DSP_SCLAMP_H, "", UTVM_DSP_LOAD_RQ, UTVM_DSP_LOAD_RQ, N))) \
  UTVM_DSP_KERNEL(NAME##_cb, KERNEL(UTVM_DSP_RQ_SMALL_LO))                                         \
  UTVM_DSP_KERNEL(NAME##_tn, KERNEL(UTVM_DSP_RQ_ROW(UTVM_DSP_CLAMP_N, "", UTVM_DSP_LOAD_RQ, "", N)))
UTVM_DSP_SMALL_KERNELS(utvm_dsp_small1_w16, UTVM_DSP_SMALL1)
UTVM_DSP_SMALL_KERNELS(utvm_dsp_small2_w16, UTVM_DSP_SMALL2)
#pragma GCC diagnostic pop

/* the kernel the generated code names (utvm_dsp_conv_<name>: utvm/lower/dsp.py kernel_name), so
 * that only the kernels a model uses are linked, whatever the optimization level */
#define UTVM_DSP_FN(name) utvm_dsp_##name
static inline void utvm_dsp_gemm(int8_t* out, const int8_t* x, const int32_t* stream, const utvm_dsp_cfg_t* cfg,
                                 int32_t mode, utvm_dsp_kernel_fn fn) {
  (void)mode;
  fn(out, x, stream, cfg);
}
#else
#define UTVM_DSP_FN(name) ((utvm_dsp_kernel_fn)0)
UTVM_INLINE void utvm_dsp_gemm(int8_t* out, const int8_t* x, const int32_t* stream,
                                                                const utvm_dsp_cfg_t* cfg, int32_t mode,
                                                                utvm_dsp_kernel_fn fn) {
  (void)fn;
  utvm_dsp_gemm_c(out, x, stream, cfg, mode);
}
#endif

/* the last bytes of the segments, gathered four at a time into quads */
typedef struct {
  int32_t* dst;
  int32_t step, dbl, n;
  uint32_t word;
} utvm_dsp_tail_t;

static inline void utvm_dsp_tail_push(utvm_dsp_tail_t* t, int32_t v) {
  t->word |= (uint32_t)(uint8_t)v << (8 * t->n);
  if (++t->n == 4) {
    utvm_dsp_put(t->dst, (int32_t)t->word, t->dbl);
    t->dst += t->step;
    t->n = 0;
    t->word = 0;
  }
}

/* quads [0, lq) and then the last len % 4 bytes of a segment whose bytes are x[at + b] for b
 * in [lo, hi) and the zero point outside that range */
UTVM_INLINE int32_t* utvm_dsp_segment(int32_t* dst, int32_t step, const int8_t* x, int32_t at, int32_t len,
                                        int32_t lo, int32_t hi, int32_t zx, int32_t dbl, utvm_dsp_tail_t* tail) {
  int32_t lq = len >> 2, q, b;
  if (lo <= 0 && hi >= len) { /* all inside: the whole quads straight from the input words */
    const int8_t* src = x + at;
    for (q = 0; q < lq; ++q, dst += step) utvm_dsp_put(dst, utvm_dsp_load(src + 4 * q), dbl);
    for (b = 4 * lq; b < len; ++b) utvm_dsp_tail_push(tail, src[b]);
    return dst;
  }
  for (q = 0; q < lq; ++q, dst += step) {
    uint32_t v = 0;
    if (4 * q >= lo && 4 * q + 4 <= hi) {
      v = (uint32_t)utvm_dsp_load(x + at + 4 * q);
    } else {
      for (b = 4 * q; b < 4 * q + 4; ++b) v |= (uint32_t)(uint8_t)(b >= lo && b < hi ? x[at + b] : zx) << (8 * (b & 3));
    }
    utvm_dsp_put(dst, (int32_t)v, dbl);
  }
  for (b = 4 * lq; b < len; ++b) utvm_dsp_tail_push(tail, b >= lo && b < hi ? x[at + b] : zx);
  return dst;
}

/* The patch of an output pixel whose window starts at input row iy0, column ix0, widened (dbl:
 * doubled) to quads of int16 pairs, ``step`` words from one quad to the next. Its K order
 * (utvm/lower/dsp.py: patch_order): the window is cut into segments of contiguous input bytes
 * (a window row, or one tap when dw > 1), each of len = taps x cin bytes; the whole quads of
 * every segment come first, in segment order, widened straight from the input words, then the
 * len % 4 last bytes of every segment, in segment order, then zeros up to a whole quad. Taps
 * outside the input hold the zero point zx. */
/* utvm_dsp_patch of a window wholly inside the input, no dilation along the width (most
 * pixels): its rows at src, dh input rows apart; loops the compiler unrolls for a known shape */
UTVM_INLINE void utvm_dsp_patch_inside(int32_t* dst, int32_t step, const int8_t* src,
                                                                        int32_t w, int32_t cin, int32_t kh,
                                                                        int32_t kw, int32_t dh, int32_t dbl) {
  int32_t len = kw * cin, lq = len >> 2, ry, q, b, n = 0, tq = kh * lq;
  uint32_t word = 0;
#pragma GCC unroll 16
  for (ry = 0; ry < kh; ++ry, src += dh * w * cin) {
#pragma GCC unroll 16
    for (q = 0; q < lq; ++q) utvm_dsp_put(dst + step * (ry * lq + q), utvm_dsp_load(src + 4 * q), dbl);
#pragma GCC unroll 4
    for (b = 4 * lq; b < len; ++b) {
      word |= (uint32_t)(uint8_t)src[b] << (8 * n);
      if (++n == 4) {
        utvm_dsp_put(dst + step * tq++, (int32_t)word, dbl);
        n = 0;
        word = 0;
      }
    }
  }
  if (n) utvm_dsp_put(dst + step * tq, (int32_t)word, dbl);
}

UTVM_INLINE void utvm_dsp_patch(int32_t* dst, int32_t step, const int8_t* x, int32_t h,
                                                                 int32_t w, int32_t cin, int32_t iy0, int32_t ix0,
                                                                 int32_t kh, int32_t kw, int32_t dh, int32_t dw,
                                                                 int32_t zx, int32_t dbl) {
  int32_t taps = dw == 1 ? kw : 1, len = taps * cin, ry, rx;
  utvm_dsp_tail_t tail;
  tail.dst = dst + step * (kh * (kw / taps) * (len >> 2));
  tail.step = step;
  tail.dbl = dbl;
  tail.n = 0;
  tail.word = 0;
  for (ry = 0; ry < kh; ++ry) {
    int32_t iy = iy0 + ry * dh, row = iy >= 0 && iy < h;
    for (rx = 0; rx < kw; rx += taps) {
      int32_t ix = ix0 + rx * dw; /* the segment's first column, its valid bytes [lo, hi) */
      int32_t lo = row ? (ix < 0 ? -ix * cin : 0) : len;
      int32_t hi = row ? (ix + taps > w ? (w - ix) * cin : len) : len;
      dst = utvm_dsp_segment(dst, step, x, (iy * w + ix) * cin, len, lo, hi, zx, dbl, &tail);
    }
  }
  while (tail.n) utvm_dsp_tail_push(&tail, 0);
}

/* n bytes from src to dst (any alignment: unaligned words), or of the zero point (src NULL) */
UTVM_INLINE int8_t* utvm_dsp_fill(int8_t* dst, const int8_t* src, int32_t n,
                                                                  int32_t zx) {
  const int32_t zw = (int32_t)(((uint32_t)zx & 0xFFu) * 0x01010101u);
  int32_t b;
  for (b = 0; b + 4 <= n; b += 4) {
    int32_t v = src ? utvm_dsp_load(src + b) : zw;
    __builtin_memcpy(dst + b, &v, 4);
  }
  for (; b < n; ++b) dst[b] = src ? src[b] : (int8_t)zx;
  return dst + n;
}

/* the input rows and columns [-top, ph - top) x [-left, pw - left) with the zero point outside
 * the input, ph x pw x cin bytes at pc (bit 31 of the mode: see above) */
UTVM_INLINE void utvm_dsp_pad_copy(int8_t* pc, const int8_t* x, int32_t h, int32_t w,
                                                                     int32_t cin, int32_t ph, int32_t pw, int32_t top,
                                                                     int32_t left, int32_t zx) {
  const int32_t c1 = left + w < pw ? left + w : pw; /* columns [left, c1) from the input */
  int32_t r;
  for (r = 0; r < ph; ++r) {
    const int32_t iy = r - top;
    if (iy < 0 || iy >= h) {
      pc = utvm_dsp_fill(pc, 0, pw * cin, zx);
      continue;
    }
    pc = utvm_dsp_fill(pc, 0, left * cin, zx);
    pc = utvm_dsp_fill(pc, x + iy * w * cin, (c1 - left) * cin, zx);
    pc = utvm_dsp_fill(pc, 0, (pw - c1) * cin, zx);
  }
}

/* cfg->np rows at x into y, ``after`` more rows of the layer after them. A row stores whole
 * blocks of four outputs: with cout % 4 != 0 the last stores of a row go into the next rows'
 * outputs (stored later, over them), and past the end of the layer's outputs for its last
 * rows: with a tail buffer (4-byte aligned, a block of outputs per four channels) those rows
 * go there first, one at a time, and only cout (cfg->ostride) outputs each to y */
UTVM_INLINE void utvm_dsp_rows(int8_t* y, const int8_t* x, const int32_t* stream,
                                                                utvm_dsp_cfg_t* cfg, int32_t mode, utvm_dsp_kernel_fn fn,
                                                                int8_t* tail, int32_t after) {
  int32_t np = cfg->np, cout = cfg->ostride, p, c;
  /* the layer's last rows whose stores pass its end, and how many of them are this call's */
  int32_t width = (mode & UTVM_DSP_NARROW) ? 2 : 4; /* outputs a block stores */
  int32_t unsafe = 0;
  if (tail) {
    unsafe = (((cout + width - 1) & -width) - 1) / cout - after;
    unsafe = unsafe < 0 ? 0 : (unsafe > np ? np : unsafe);
  }
  if (unsafe < np) {
    cfg->np = np - unsafe;
    utvm_dsp_gemm(y, x, stream, cfg, mode, fn);
  }
  for (p = 0; tail && p < unsafe; ++p) {
    int32_t row = np - unsafe + p;
    cfg->np = 1;
    utvm_dsp_gemm(tail, x + row * cfg->xstride, stream, cfg, mode, fn);
    for (c = 0; c < cout; ++c) y[row * cout + c] = tail[c];
  }
  cfg->np = np;
}

/* UTVM_DSP_PACKED: per channel of the whole blocks m, c, e at rq from the words after the stream's
 * blocks and the mode's header (see the stream's layout above); returns the end of them. Not
 * inlined: once per layer call, one copy for all the layers */
__attribute__((noinline, unused)) static int32_t* utvm_dsp_unpack(int32_t* rq, const int32_t* stream, int32_t cout, int32_t kq, int32_t mode) {
  int32_t nc = (mode & (UTVM_DSP_PAIRS | UTVM_DSP_NARROW)) ? 2 : 4, n = (cout + nc - 1) / nc * nc, c, k;
  uint32_t hdr = (uint32_t)mode >> 8;
  const uint32_t* words = (const uint32_t*)stream + n / nc * (nc + kq * ((mode & UTVM_DSP_W8) ? nc : 2 * nc));
  int32_t z = (int32_t)(hdr & 0x1FF) - (int32_t)((hdr & 0x100) << 1), e = (int32_t)((hdr >> 9) & 31);
  /* per shift index i: c, e and the mask m ^ word = i << 30 ^ 2**30 (m - 2**30 < 2**30), a fourth
   * word so that an index scales by a shift */
  uint32_t tab[16];
  for (k = 0; k < 4; ++k) {
    if (k > 0) e += (int32_t)((hdr >> (11 + 3 * k)) & 7);
    tab[4 * k] = (uint32_t)((1 << (e - 1)) + z * (1 << e));
    tab[4 * k + 1] = (uint32_t)e;
    tab[4 * k + 2] = ((uint32_t)k << 30) ^ 0x40000000u;
    tab[4 * k + 3] = 0;
  }
#ifdef UTVM_DSP_ASM
  /* n is even: four channels per step (two in a last one when n % 4 == 2), five instructions
   * each (LSR, ADD, LDM of the index's words, EOR, STM of m, c, e) and three per step */
#define UTVM_DSP_UNPACK1(W)                                                                        \
  "lsr ip, " W ", #30\n\tadd ip, %[tab], ip, lsl #4\n\tldm ip, {r5, r6, r8}\n\teor r4, " W ", r8\n\t" \
  "stm %[rq]!, {r4, r5, r6}\n\t"
  c = n;
  __asm__ volatile(
      "subs %[c], %[c], #4\n\t"
      "blt 2f\n"
      "1:\n\t"
      "ldm %[wd]!, {r9, r10, r11, lr}\n\t"
      UTVM_DSP_UNPACK1("r9") UTVM_DSP_UNPACK1("r10") UTVM_DSP_UNPACK1("r11") UTVM_DSP_UNPACK1("lr")
      "subs %[c], %[c], #4\n\t"
      "bge 1b\n"
      "2:\n\t"
      "adds %[c], %[c], #4\n\t"
      "beq 3f\n\t"
      "ldm %[wd]!, {r9, r10}\n\t"
      UTVM_DSP_UNPACK1("r9") UTVM_DSP_UNPACK1("r10")
      "3:\n\t"
      : [rq] "+r"(rq), [wd] "+r"(words), [c] "+r"(c)
      : [tab] "r"(tab)
      : "cc", "memory", "ip", "lr", "r4", "r5", "r6", "r8", "r9", "r10", "r11");
#undef UTVM_DSP_UNPACK1
#else
  for (c = 0; c < n; ++c, rq += UTVM_DSP_RQ_WORDS) {
    const uint32_t* t = tab + 4 * (words[c] >> 30);
    rq[0] = (int32_t)(words[c] ^ t[2]);
    rq[1] = (int32_t)t[0];
    rq[2] = (int32_t)t[1];
  }
#endif
  rq[-1] |= UTVM_DSP_LAST;
  return rq;
}

UTVM_INLINE int32_t utvm_dsp_conv(
    void* out, void* x, void* stream, void* scratch, int32_t n, int32_t h, int32_t w, int32_t cin, int32_t oh,
    int32_t ow, int32_t cout, int32_t kh, int32_t kw, int32_t sh, int32_t sw, int32_t dh, int32_t dw, int32_t top,
    int32_t left, int32_t zx, int32_t kq, int32_t chunk, int32_t lo, int32_t hi, int32_t mode, utvm_dsp_kernel_fn fn) {
  int8_t* y = (int8_t*)out;
  const int8_t* xb = (const int8_t*)x;
  const int32_t* st = (const int32_t*)stream;
  int32_t* col = (int32_t*)scratch;
  int32_t b, i, j, p, pairs = mode & UTVM_DSP_PAIRS, step = pairs ? 4 : 2, in_place;
  const int32_t padded = mode < 0; /* bit 31: the padded copy */
  int8_t* tail;
  utvm_dsp_cfg_t cfg;
  in_place = kh == 1 && kw == 1 && (cin & 3) == 0 && top == 0 && left == 0;
  cfg.rq = 0;
  if (mode & UTVM_DSP_PACKED) { /* the constants expanded at the start of the scratch, the rows after them */
    cfg.rq = col;
    col = utvm_dsp_unpack(col, st, cout, kq, mode);
  }
  mode &= UTVM_DSP_MODE_BITS;
  /* after the rows (scratch_words in utvm/lower/dsp.py) */
  tail = (cout & ((mode & UTVM_DSP_NARROW) ? 1 : 3)) && !pairs
             ? (int8_t*)(col + 2 * kq * (in_place ? ((mode & (UTVM_DSP_SMALL | UTVM_DSP_X8)) ? 0 : 1) : chunk))
             : 0;
  cfg.kq = kq;
  cfg.lo = lo;
  cfg.hi = hi;
  if (UTVM_DSP_BYTES_CLAMP(mode)) {
    cfg.lo = (int32_t)((uint32_t)(lo & 0xFF) * 0x01010101u);
    cfg.hi = (int32_t)((uint32_t)(hi - lo) * 0x01010101u);
  }
  cfg.ostride = cout;
  if (in_place) { /* rows read from the input, widened one (pair) at a time */
    cfg.scratch = col;
    if (sh == 1 && sw == 1 && oh == h && ow == w) {
      cfg.np = n * oh * ow;
      cfg.xstride = cin;
      utvm_dsp_rows(y, xb, st, &cfg, mode, fn, tail, 0);
      return 0;
    }
    cfg.np = ow;
    cfg.xstride = sw * cin;
    for (b = 0; b < n; ++b)
      for (i = 0; i < oh; ++i)
        utvm_dsp_rows(y + ((b * oh + i) * ow) * cout, xb + ((b * h + i * sh) * w) * cin, st, &cfg, mode, fn,
                      tail, (n * oh - (b * oh + i) - 1) * ow);
    return 0;
  }
  cfg.scratch = 0;
  cfg.xstride = 8 * kq;
  if (padded) { /* after the rows (rounded up to pairs) and the tail buffer; then the input, unpadded */
    int8_t* pc = (int8_t*)(col + 2 * kq * (chunk + (pairs ? (chunk & 1) : 0)) + (tail ? (cout + 3) / 4 : 0));
    const int32_t ph = (oh - 1) * sh + (kh - 1) * dh + 1, pw = (ow - 1) * sw + kw;
    utvm_dsp_pad_copy(pc, xb, h, w, cin, ph, pw, top, left, zx);
    xb = pc;
    h = ph;
    w = pw;
    top = left = 0;
  }
  /* the next pixel to gather: output row i (across the batch), column j; its window's first
   * input row and column, the row's inputs and whether its window rows are all inside */
  i = j = 0;
  {
    const int8_t* xi = xb;
    int32_t iy0 = -top, ix0 = -left, rows_in = dw == 1 && iy0 >= 0 && iy0 + (kh - 1) * dh < h;
    for (p = 0; p < n * oh * ow; p += cfg.np) {
      int32_t q, *d = col;
      cfg.np = n * oh * ow - p < chunk ? n * oh * ow - p : chunk;
      for (q = 0; q < cfg.np; ++q) { /* pairs: two pixels' quads interleaved */
        if (rows_in && ix0 >= 0 && ix0 + kw <= w) {
          utvm_dsp_patch_inside(d, step, xi + (iy0 * w + ix0) * cin, w, cin, kh, kw, dh, mode & UTVM_DSP_W8);
        } else {
          utvm_dsp_patch(d, step, xi, h, w, cin, iy0, ix0, kh, kw, dh, dw, zx, mode & UTVM_DSP_W8);
        }
        d += pairs ? ((q & 1) ? 4 * kq - 2 : 2) : 2 * kq;
        ix0 += sw;
        if (++j == ow) { /* the next output row, of this image or the next */
          j = 0;
          ix0 = -left;
          iy0 += sh;
          if (++i == oh) {
            i = 0;
            iy0 = -top;
            xi += h * w * cin;
          }
          rows_in = dw == 1 && iy0 >= 0 && iy0 + (kh - 1) * dh < h;
        }
      }
      if (pairs && (cfg.np & 1)) { /* the last pixel of an odd count is its pair's second row too */
        int32_t* last = col + 4 * kq * (cfg.np >> 1);
        for (q = 0; q < kq; ++q) {
          last[4 * q + 2] = last[4 * q];
          last[4 * q + 3] = last[4 * q + 1];
        }
      }
      utvm_dsp_rows(y + p * cout, (const int8_t*)col, st, &cfg, mode, fn, tail, n * oh * ow - p - cfg.np);
    }
  }
  return 0;
}

/* the entry points the generated code calls, one per kernel (TVM declares externs with int32 and
 * handle arguments) */
#define UTVM_DSP_CONV_ENTRY(name)                                                                               \
  UTVM_INLINE int32_t utvm_dsp_conv_##name(                                    \
      void* out, void* x, void* stream, void* scratch, int32_t n, int32_t h, int32_t w, int32_t cin, int32_t oh, \
      int32_t ow, int32_t cout, int32_t kh, int32_t kw, int32_t sh, int32_t sw, int32_t dh, int32_t dw,          \
      int32_t top, int32_t left, int32_t zx, int32_t kq, int32_t chunk, int32_t lo, int32_t hi, int32_t mode) {  \
    return utvm_dsp_conv(out, x, stream, scratch, n, h, w, cin, oh, ow, cout, kh, kw, sh, sw, dh, dw, top, left, \
                         zx, kq, chunk, lo, hi, mode, UTVM_DSP_FN(name));                                        \
  }
UTVM_DSP_KERNEL_NAMES(UTVM_DSP_CONV_ENTRY)

#endif /* UTVM_KERNELS_GEMM_DSP_H_ */
