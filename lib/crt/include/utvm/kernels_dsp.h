/*
 * int8 convolution and fully connected kernels for CPUs with the DSP extension (Cortex-M4,
 * M7, M33) that utvm's generated code calls (header-only, C99): one call runs a whole layer.
 * With __ARM_FEATURE_SIMD32 (Thumb-2) the inner loops are hand-written assembly; elsewhere
 * plain C computes the same results (TFLite's arithmetic, bit-exact).
 *
 * A layer is rows of K inputs (a pixel of a pointwise convolution, the patch of an output
 * pixel, a batch row of a fully connected layer), K padded to kq quads of four, times the
 * weights of cout output channels, padded to blocks of four; the outputs of a row are
 * stored contiguously (cout bytes). Each row is widened to int16 pairs (x0, x2), (x1, x3) per
 * quad (SXTB16) into scratch once, then read by every block.
 *
 * The stream (int32 words, prepared at compile time: utvm/lower/dsp.py) holds per block of
 * four output channels c0..c3:
 *   - 4 words: the accumulators' start, 2 * (bias - zx * sum(w)) per channel;
 *   - per quad: with int16 weights (mode without UTVM_DSP_W8) 8 words, per channel the int16
 *     pairs (2 w0, 2 w2), (2 w1, 2 w3) (doubled: the accumulator is twice TFLite's);
 *     with UTVM_DSP_W8 4 words, per channel its four int8 weights (the inputs are doubled
 *     instead when they are widened);
 *   - the requantization constants m, c, e | last << 8: per channel (12 words), or once for
 *     the block with UTVM_DSP_PER_TENSOR (3 words). last is 1 on the layer's last block.
 *
 * Requantization: with acc = 2a (a = TFLite's accumulator plus bias, |a| < 2**30) and a right
 * shift e >= 1 (TFLite shift -e), multiplier m (2**30 <= m < 2**31), output zero point zy:
 *   SaturatingRoundingDoublingHighMul(a, m) = h = floor((a * m + 2**30) / 2**31)
 *                                           = floor((acc * m + 2**31) / 2**32)   (SMMULR)
 *   RoundingDivideByPOT(h, e) + zy = floor((h + 2**(e-1) + zy * 2**e - (h < 0)) / 2**e)
 * so with c = 2**(e-1) + zy * 2**e: t = SMMLAR(acc, m, c) = h + c, t += acc >> 31 (a < 0
 * exactly when h < 0, or h = 0 where the correction does not change the quotient), t >>= e
 * (a shift by register reads its low byte only: the last flag does not matter), saturated to
 * int8 (SSAT), clamped to [lo, hi]: six instructions per output.
 *
 * Cost per quad and block (16 multiply-accumulates): int16 weights 11 instructions (LDRD of
 * the input pairs, two LDM of four weight words, eight SMLAD); int8 weights 19 (LDRD of the
 * inputs, two LDRD of weights, eight SXTB16, eight SMLAD). Loops unrolled by two quads.
 *
 * - utvm_dsp_conv_s8(out, x, stream, scratch, n, h, w, cin, oh, ow, cout, kh, kw, sh, sw, dh,
 *   dw, top, left, zx, kq, chunk, lo, hi, mode): an NHWC convolution (a fully connected layer
 *   is one with h = 1, w = batch rows, cin = depth, 1 x 1 windows). Pointwise windows with
 *   cin % 4 == 0 and no padding read their rows in place (scratch: 2 kq words); other layers
 *   gather the patches of up to ``chunk`` output pixels of a row into scratch (chunk x 2 kq
 *   words: the taps outside the input hold the zero point zx), then run them as rows.
 */
#ifndef UTVM_KERNELS_DSP_H_
#define UTVM_KERNELS_DSP_H_

#include <stdint.h>

#if defined(__ARM_FEATURE_SIMD32) && __ARM_FEATURE_SIMD32 && defined(__thumb2__)
#include <arm_acle.h>
#define UTVM_DSP_ASM 1
#endif

/* mode bits */
#define UTVM_DSP_PER_TENSOR 1 /* one set of requantization constants per block */
#define UTVM_DSP_W8 2         /* int8 weights in the stream, the inputs doubled */

/* words per block before the weights; requantization words per channel; the last flag */
#define UTVM_DSP_BIAS_WORDS 4
#define UTVM_DSP_RQ_WORDS 3
#define UTVM_DSP_LAST 256

typedef struct {
  int32_t np;       /* rows */
  int32_t xstride;  /* bytes from one row's inputs to the next */
  int32_t kq;       /* quads of inputs per row */
  int32_t* scratch; /* kq * 2 words for a row widened; NULL: the rows are widened already */
  int32_t lo, hi;   /* activation clamp */
  int32_t ostride;  /* bytes from one row's outputs to the next (cout) */
} utvm_dsp_cfg_t;

/* int16 pairs of the lanes of a word: (lane 0, lane 2), (lane 1, lane 3); both halves doubled */
#ifdef UTVM_DSP_ASM
static inline int32_t utvm_dsp_even(int32_t v) { return __sxtb16(v); }
static inline int32_t utvm_dsp_odd(int32_t v) {
  int32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
  return r;
}
static inline int32_t utvm_dsp_dbl(int32_t v) { return __sadd16(v, v); }
#else
static inline int32_t utvm_dsp_pair(int32_t lo, int32_t hi) {
  return (int32_t)(((uint32_t)hi << 16) | ((uint32_t)lo & 0xFFFFu));
}
static inline int32_t utvm_dsp_lane(int32_t v, int k) { return (int32_t)(int8_t)(uint8_t)((uint32_t)v >> (8 * k)); }
static inline int32_t utvm_dsp_even(int32_t v) { return utvm_dsp_pair(utvm_dsp_lane(v, 0), utvm_dsp_lane(v, 2)); }
static inline int32_t utvm_dsp_odd(int32_t v) { return utvm_dsp_pair(utvm_dsp_lane(v, 1), utvm_dsp_lane(v, 3)); }
static inline int32_t utvm_dsp_dbl(int32_t v) {
  return utvm_dsp_pair(2 * (int32_t)(int16_t)(uint16_t)(uint32_t)v, 2 * (v >> 16));
}
#endif

static inline int32_t utvm_dsp_half_lo(int32_t w) { return (int32_t)(int16_t)(uint16_t)(uint32_t)w; }
static inline int32_t utvm_dsp_half_hi(int32_t w) { return w >> 16; }

static inline int32_t utvm_dsp_load(const int8_t* p) {
  int32_t v;
  __builtin_memcpy(&v, p, 4);
  return v;
}

/* nq quads of int8 values at src (any alignment) as int16 pairs at dst, doubled if dbl; dst
 * may be the start of the 8 nq bytes whose second half holds src */
static inline void utvm_dsp_widen(int32_t* dst, const int8_t* src, int32_t nq, int32_t dbl) {
  int32_t q;
  for (q = 0; q < nq; ++q) {
    int32_t v = utvm_dsp_load(src + 4 * q), e = utvm_dsp_even(v), o = utvm_dsp_odd(v);
    if (dbl) {
      e = utvm_dsp_dbl(e);
      o = utvm_dsp_dbl(o);
    }
    dst[2 * q] = e;
    dst[2 * q + 1] = o;
  }
}

/* one requantized output (plain C: the assembly's arithmetic); q = (m, c, e) */
static inline int32_t utvm_dsp_requant(int32_t acc, const int32_t* q, int32_t lo, int32_t hi) {
  int64_t p = (int64_t)acc * q[0] + ((int64_t)1 << 31);
  int32_t t = (int32_t)(p >> 32) + q[1];
  int32_t v;
  t += acc >> 31;
  t >>= (q[2] & 31);
  v = t < -128 ? -128 : (t > 127 ? 127 : t);
  return v < lo ? lo : (v > hi ? hi : v);
}

/* input k of a row: int8 values (times scale), or int16 pairs (x0, x2), (x1, x3) per quad */
static inline int32_t utvm_dsp_input(const int8_t* row, int32_t k, int32_t pairs, int32_t scale) {
  int32_t word;
  if (!pairs) return scale * row[k];
  __builtin_memcpy(&word, row + 4 * (2 * (k >> 2) + (k & 1)), 4);
  return (k & 2) ? utvm_dsp_half_hi(word) : utvm_dsp_half_lo(word);
}

/* weight k (0..3) of channel c in a quad of the stream */
static inline int32_t utvm_dsp_weight(const int32_t* quad, int32_t c, int32_t k, int32_t w8) {
  int32_t word;
  if (w8) return (int32_t)(int8_t)(uint8_t)((uint32_t)quad[c] >> (8 * k));
  word = quad[2 * c + (k & 1)];
  return (k & 2) ? utvm_dsp_half_hi(word) : utvm_dsp_half_lo(word);
}

/* plain C rows: the same stream, the same results as the assembly */
static inline void utvm_dsp_gemm_c(int8_t* out, const int8_t* x, const int32_t* stream, const utvm_dsp_cfg_t* cfg,
                                   int32_t mode) {
  int32_t p, q, k, c, w8 = mode & UTVM_DSP_W8, per_tensor = mode & UTVM_DSP_PER_TENSOR;
  int32_t qwords = w8 ? 4 : 8, pairs = cfg->scratch == 0, scale = w8 ? 2 : 1;
  for (p = 0; p < cfg->np; ++p) {
    const int8_t* row = x + p * cfg->xstride;
    const int32_t* s = stream;
    int8_t* o = out + p * cfg->ostride;
    int32_t last = 0;
    while (!last) {
      int32_t acc[4], xv[4];
      const int32_t* w = s + UTVM_DSP_BIAS_WORDS;
      for (c = 0; c < 4; ++c) acc[c] = s[c];
      for (q = 0; q < cfg->kq; ++q, w += qwords) {
        for (k = 0; k < 4; ++k) xv[k] = utvm_dsp_input(row, 4 * q + k, pairs, scale);
        for (c = 0; c < 4; ++c)
          for (k = 0; k < 4; ++k) acc[c] += xv[k] * utvm_dsp_weight(w, c, k, w8);
      }
      for (c = 0; c < 4; ++c)
        *o++ = (int8_t)utvm_dsp_requant(acc[c], per_tensor ? w : w + UTVM_DSP_RQ_WORDS * c, cfg->lo, cfg->hi);
      s = w + (per_tensor ? 1 : 4) * UTVM_DSP_RQ_WORDS;
      last = s[-1] & UTVM_DSP_LAST;
    }
  }
}

#ifdef UTVM_DSP_ASM

/* The assembly: r0 out, r1 x, r2 stream, r3 cfg (AAPCS). In the block loop: r0-r3
 * accumulators, r4-r7 weight words, r8-r9 input pairs, r10 input pointer, r11 stream, r12
 * count, lr out. The frame: */
#define UTVM_DSP_F_ROWS "[sp, #0]"     /* rows left */
#define UTVM_DSP_F_X "[sp, #4]"        /* this row's inputs */
#define UTVM_DSP_F_OUT "[sp, #8]"      /* this row's outputs */
#define UTVM_DSP_F_XBASE "[sp, #12]"   /* this row's int16 pairs */
#define UTVM_DSP_F_CFG "[sp, #16]"
#define UTVM_DSP_F_STREAM "[sp, #20]"
#define UTVM_DSP_F_LOHI "[sp, #24]"    /* lo, hi */
#define UTVM_DSP_F_KQ "[sp, #32]"
#define UTVM_DSP_F_SCRATCH "[sp, #36]" /* 0: the rows are int16 pairs already */
#define UTVM_DSP_FRAME "40"

#define UTVM_DSP_PROLOGUE                  \
  "push {r4-r11, lr}\n\t"                  \
  "sub sp, sp, #" UTVM_DSP_FRAME "\n\t"    \
  "mov lr, r0\n\t"                         \
  "ldm r3, {r4-r9}\n\t"                    \
  "str r4, " UTVM_DSP_F_ROWS "\n\t"        \
  "str r1, " UTVM_DSP_F_X "\n\t"           \
  "str r0, " UTVM_DSP_F_OUT "\n\t"         \
  "str r3, " UTVM_DSP_F_CFG "\n\t"         \
  "str r2, " UTVM_DSP_F_STREAM "\n\t"      \
  "strd r8, r9, " UTVM_DSP_F_LOHI "\n\t"   \
  "strd r6, r7, " UTVM_DSP_F_KQ "\n\t"

/* doubling of the widened pairs in r5-r8 (int8 weights) */
#define UTVM_DSP_DBL2 "sadd16 r5, r5, r5\n\tsadd16 r6, r6, r6\n\t"
#define UTVM_DSP_DBL4 UTVM_DSP_DBL2 "sadd16 r7, r7, r7\n\tsadd16 r8, r8, r8\n\t"

/* a row: its int8 inputs widened into the scratch (two quads per step), or read as pairs */
#define UTVM_DSP_ROW_START(DBL2, DBL4)     \
  "1:\n\t"                                 \
  "ldr r9, " UTVM_DSP_F_X "\n\t"           \
  "ldr r10, " UTVM_DSP_F_SCRATCH "\n\t"    \
  "cmp r10, #0\n\t"                        \
  "itt eq\n\t"                             \
  "streq r9, " UTVM_DSP_F_XBASE "\n\t"     \
  "beq 9f\n\t"                             \
  "str r10, " UTVM_DSP_F_XBASE "\n\t"      \
  "ldr r12, " UTVM_DSP_F_KQ "\n\t"         \
  "lsrs r12, r12, #1\n\t"                  \
  "bcc 7f\n\t"                             \
  "ldr r4, [r9], #4\n\t"                   \
  "sxtb16 r5, r4\n\t"                      \
  "sxtb16 r6, r4, ror #8\n\t"              \
  DBL2                                     \
  "strd r5, r6, [r10], #8\n\t"             \
  "beq 9f\n\t"                             \
  "7:\n\t"                                 \
  "ldrd r4, r7, [r9], #8\n\t"              \
  "sxtb16 r5, r4\n\t"                      \
  "sxtb16 r6, r4, ror #8\n\t"              \
  "sxtb16 r8, r7, ror #8\n\t"              \
  "sxtb16 r7, r7\n\t"                      \
  DBL4                                     \
  "stm r10!, {r5-r8}\n\t"                  \
  "subs r12, r12, #1\n\t"                  \
  "bne 7b\n\t"                             \
  "9:\n\t"                                 \
  "ldr r11, " UTVM_DSP_F_STREAM "\n\t"

/* one quad of inputs (two int16 pair words) against the weights of four channels */
#define UTVM_DSP_QUAD_W16                  \
  "ldrd r8, r9, [r10], #8\n\t"             \
  "ldm r11!, {r4-r7}\n\t"                  \
  "smlad r0, r8, r4, r0\n\t"               \
  "smlad r0, r9, r5, r0\n\t"               \
  "smlad r1, r8, r6, r1\n\t"               \
  "smlad r1, r9, r7, r1\n\t"               \
  "ldm r11!, {r4-r7}\n\t"                  \
  "smlad r2, r8, r4, r2\n\t"               \
  "smlad r2, r9, r5, r2\n\t"               \
  "smlad r3, r8, r6, r3\n\t"               \
  "smlad r3, r9, r7, r3\n\t"

#define UTVM_DSP_W8_PAIR(A, B)             \
  "ldrd r4, r5, [r11], #8\n\t"             \
  "sxtb16 r6, r4\n\t"                      \
  "sxtb16 r4, r4, ror #8\n\t"              \
  "smlad " A ", r8, r6, " A "\n\t"         \
  "smlad " A ", r9, r4, " A "\n\t"         \
  "sxtb16 r6, r5\n\t"                      \
  "sxtb16 r5, r5, ror #8\n\t"              \
  "smlad " B ", r8, r6, " B "\n\t"         \
  "smlad " B ", r9, r5, " B "\n\t"

#define UTVM_DSP_QUAD_W8 "ldrd r8, r9, [r10], #8\n\t" UTVM_DSP_W8_PAIR("r0", "r1") UTVM_DSP_W8_PAIR("r2", "r3")

/* a block: the accumulators from the biases, the quads (an odd one first, then pairs) */
#define UTVM_DSP_BLOCK(QUAD)               \
  "3:\n\t"                                 \
  "ldm r11!, {r0-r3}\n\t"                  \
  "ldr r10, " UTVM_DSP_F_XBASE "\n\t"      \
  "ldr r12, " UTVM_DSP_F_KQ "\n\t"         \
  "lsrs r12, r12, #1\n\t"                  \
  "bcc 4f\n\t"                             \
  QUAD                                     \
  "beq 6f\n\t"                             \
  "4:\n\t"                                 \
  QUAD QUAD                                \
  "subs r12, r12, #1\n\t"                  \
  "bne 4b\n\t"                             \
  "6:\n\t"

/* accumulator A requantized with m, c, e in r4-r6 into r7 (CLAMP: by lo, hi in r8, r9) */
#define UTVM_DSP_RQ1(A, CLAMP)             \
  "smmlar r7, " A ", r4, r5\n\t"           \
  "add r7, r7, " A ", asr #31\n\t"         \
  "asr r7, r7, r6\n\t"                     \
  "ssat r7, #8, r7\n\t"                    \
  CLAMP                                    \
  "strb r7, [lr], #1\n\t"

#define UTVM_DSP_NOCLAMP ""
#define UTVM_DSP_CLAMP                     \
  "cmp r7, r8\n\t"                         \
  "it lt\n\t"                              \
  "movlt r7, r8\n\t"                       \
  "cmp r7, r9\n\t"                         \
  "it gt\n\t"                              \
  "movgt r7, r9\n\t"

#define UTVM_DSP_LOAD_LOHI "ldrd r8, r9, " UTVM_DSP_F_LOHI "\n\t"

/* per-channel constants (12 words per block); per-tensor constants (3 words per block) */
#define UTVM_DSP_RQ_CHANNEL(CLAMP, LOAD)                                         \
  LOAD                                                                           \
  "ldm r11!, {r4-r6}\n\t" UTVM_DSP_RQ1("r0", CLAMP)                              \
  "ldm r11!, {r4-r6}\n\t" UTVM_DSP_RQ1("r1", CLAMP)                              \
  "ldm r11!, {r4-r6}\n\t" UTVM_DSP_RQ1("r2", CLAMP)                              \
  "ldm r11!, {r4-r6}\n\t" UTVM_DSP_RQ1("r3", CLAMP)                              \
  "tst r6, #256\n\t"                                                             \
  "beq 3b\n\t"

#define UTVM_DSP_RQ_TENSOR(CLAMP, LOAD)                                          \
  LOAD                                                                           \
  "ldm r11!, {r4-r6}\n\t"                                                        \
  UTVM_DSP_RQ1("r0", CLAMP) UTVM_DSP_RQ1("r1", CLAMP) UTVM_DSP_RQ1("r2", CLAMP)  \
  UTVM_DSP_RQ1("r3", CLAMP)                                                      \
  "tst r6, #256\n\t"                                                             \
  "beq 3b\n\t"

/* the next row: inputs at xstride, outputs at ostride from this row's */
#define UTVM_DSP_ROW_END                   \
  "ldr r8, " UTVM_DSP_F_CFG "\n\t"         \
  "ldr r9, " UTVM_DSP_F_X "\n\t"           \
  "ldr r10, [r8, #4]\n\t"                  \
  "add r9, r9, r10\n\t"                    \
  "str r9, " UTVM_DSP_F_X "\n\t"           \
  "ldr lr, " UTVM_DSP_F_OUT "\n\t"         \
  "ldr r10, [r8, #24]\n\t"                 \
  "add lr, lr, r10\n\t"                    \
  "str lr, " UTVM_DSP_F_OUT "\n\t"         \
  "ldr r12, " UTVM_DSP_F_ROWS "\n\t"       \
  "subs r12, r12, #1\n\t"                  \
  "str r12, " UTVM_DSP_F_ROWS "\n\t"       \
  "bne 1b\n\t"                             \
  "add sp, sp, #" UTVM_DSP_FRAME "\n\t"    \
  "pop {r4-r11, pc}\n\t"

#define UTVM_DSP_UNUSED __attribute__((unused))
/* an assembly kernel (rows of blocks of QUAD requantized by RQ) with the signature of
 * utvm_dsp_gemm_c without the mode */
#define UTVM_DSP_GEMM_ASM(name, ROW, QUAD, RQ)                                                             \
  __attribute__((naked, noinline, unused)) static void name(                                              \
      UTVM_DSP_UNUSED int8_t* out, UTVM_DSP_UNUSED const int8_t* x, UTVM_DSP_UNUSED const int32_t* stream, \
      UTVM_DSP_UNUSED const utvm_dsp_cfg_t* cfg) {                                                        \
    __asm__ volatile(UTVM_DSP_PROLOGUE ROW UTVM_DSP_BLOCK(QUAD) RQ UTVM_DSP_ROW_END);                     \
  }

#define UTVM_DSP_ROW_W16 UTVM_DSP_ROW_START("", "")
#define UTVM_DSP_ROW_W8 UTVM_DSP_ROW_START(UTVM_DSP_DBL2, UTVM_DSP_DBL4)
#define UTVM_DSP_RQ_C UTVM_DSP_RQ_CHANNEL(UTVM_DSP_NOCLAMP, "")
#define UTVM_DSP_RQ_CC UTVM_DSP_RQ_CHANNEL(UTVM_DSP_CLAMP, UTVM_DSP_LOAD_LOHI)
#define UTVM_DSP_RQ_T UTVM_DSP_RQ_TENSOR(UTVM_DSP_NOCLAMP, "")
#define UTVM_DSP_RQ_TC UTVM_DSP_RQ_TENSOR(UTVM_DSP_CLAMP, UTVM_DSP_LOAD_LOHI)

UTVM_DSP_GEMM_ASM(utvm_dsp_gemm_w16_c, UTVM_DSP_ROW_W16, UTVM_DSP_QUAD_W16, UTVM_DSP_RQ_C)
UTVM_DSP_GEMM_ASM(utvm_dsp_gemm_w16_cc, UTVM_DSP_ROW_W16, UTVM_DSP_QUAD_W16, UTVM_DSP_RQ_CC)
UTVM_DSP_GEMM_ASM(utvm_dsp_gemm_w16_t, UTVM_DSP_ROW_W16, UTVM_DSP_QUAD_W16, UTVM_DSP_RQ_T)
UTVM_DSP_GEMM_ASM(utvm_dsp_gemm_w16_tc, UTVM_DSP_ROW_W16, UTVM_DSP_QUAD_W16, UTVM_DSP_RQ_TC)
UTVM_DSP_GEMM_ASM(utvm_dsp_gemm_w8_c, UTVM_DSP_ROW_W8, UTVM_DSP_QUAD_W8, UTVM_DSP_RQ_C)
UTVM_DSP_GEMM_ASM(utvm_dsp_gemm_w8_cc, UTVM_DSP_ROW_W8, UTVM_DSP_QUAD_W8, UTVM_DSP_RQ_CC)
UTVM_DSP_GEMM_ASM(utvm_dsp_gemm_w8_t, UTVM_DSP_ROW_W8, UTVM_DSP_QUAD_W8, UTVM_DSP_RQ_T)
UTVM_DSP_GEMM_ASM(utvm_dsp_gemm_w8_tc, UTVM_DSP_ROW_W8, UTVM_DSP_QUAD_W8, UTVM_DSP_RQ_TC)

typedef void (*utvm_dsp_gemm_fn)(int8_t*, const int8_t*, const int32_t*, const utvm_dsp_cfg_t*);

/* the kernel of a mode (a constant in the generated code: one kernel kept after inlining) */
static inline void utvm_dsp_gemm(int8_t* out, const int8_t* x, const int32_t* stream, const utvm_dsp_cfg_t* cfg,
                                 int32_t mode) {
  int32_t clamp = cfg->lo > -128 || cfg->hi < 127;
  utvm_dsp_gemm_fn fn;
  if (mode & UTVM_DSP_W8) {
    fn = (mode & UTVM_DSP_PER_TENSOR) ? (clamp ? utvm_dsp_gemm_w8_tc : utvm_dsp_gemm_w8_t)
                                      : (clamp ? utvm_dsp_gemm_w8_cc : utvm_dsp_gemm_w8_c);
  } else {
    fn = (mode & UTVM_DSP_PER_TENSOR) ? (clamp ? utvm_dsp_gemm_w16_tc : utvm_dsp_gemm_w16_t)
                                      : (clamp ? utvm_dsp_gemm_w16_cc : utvm_dsp_gemm_w16_c);
  }
  fn(out, x, stream, cfg);
}
#else
static inline void utvm_dsp_gemm(int8_t* out, const int8_t* x, const int32_t* stream, const utvm_dsp_cfg_t* cfg,
                                 int32_t mode) {
  utvm_dsp_gemm_c(out, x, stream, cfg, mode);
}
#endif

/* the widened patch (kq quads, dbl: doubled) of the output pixel whose window starts at input
 * row iy0, column ix0: K = kh * kw * cin values in (row, column, channel) order, the taps
 * outside the input the zero point zx, then zeros up to 4 kq */
static inline void utvm_dsp_patch(int32_t* dst, const int8_t* x, int32_t h, int32_t w, int32_t cin, int32_t iy0,
                                  int32_t ix0, int32_t kh, int32_t kw, int32_t dh, int32_t dw, int32_t zx, int32_t kq,
                                  int32_t dbl) {
  int32_t ry, rx, c;
  if ((cin & 3) == 0) { /* whole quads per tap: widened in place from the input */
    int32_t zword = (int32_t)(0x01010101u * (uint32_t)(uint8_t)zx), ze = utvm_dsp_even(zword);
    int32_t nq = cin >> 2;
    if (dbl) ze = utvm_dsp_dbl(ze);
    for (ry = 0; ry < kh; ++ry) {
      int32_t iy = iy0 + ry * dh;
      for (rx = 0; rx < kw; ++rx, dst += 2 * nq) {
        int32_t ix = ix0 + rx * dw;
        if (iy >= 0 && iy < h && ix >= 0 && ix < w) {
          utvm_dsp_widen(dst, x + (iy * w + ix) * cin, nq, dbl);
        } else {
          for (c = 0; c < 2 * nq; ++c) dst[c] = ze;
        }
      }
    }
  } else { /* the int8 patch in the second half of the patch's bytes, then widened in place */
    int8_t* p = (int8_t*)dst + 4 * kq;
    int8_t* start = p;
    for (ry = 0; ry < kh; ++ry) {
      int32_t iy = iy0 + ry * dh;
      int32_t inside_row = iy >= 0 && iy < h;
      if (inside_row && dw == 1 && ix0 >= 0 && ix0 + kw <= w) {
        const int8_t* src = x + (iy * w + ix0) * cin;
        for (c = 0; c < kw * cin; ++c) p[c] = src[c];
        p += kw * cin;
        continue;
      }
      for (rx = 0; rx < kw; ++rx) {
        int32_t ix = ix0 + rx * dw;
        int32_t inside = inside_row && ix >= 0 && ix < w;
        for (c = 0; c < cin; ++c) *p++ = inside ? x[(iy * w + ix) * cin + c] : (int8_t)zx;
      }
    }
    while (p < start + 4 * kq) *p++ = 0;
    utvm_dsp_widen(dst, start, kq, dbl);
  }
}

/* cfg->np rows at x into y; with a tail buffer (4-byte aligned, 4 * blocks bytes) the last
 * row's outputs go there first and only cout (cfg->ostride) of them to y: with cout % 4 != 0 a
 * block's four stores would pass the end of y (elsewhere they spill into the next row, whose
 * outputs are stored later) */
static inline void utvm_dsp_rows(int8_t* y, const int8_t* x, const int32_t* stream, utvm_dsp_cfg_t* cfg,
                                 int32_t mode, int8_t* tail) {
  int32_t np = cfg->np, c;
  if (tail == 0) {
    utvm_dsp_gemm(y, x, stream, cfg, mode);
    return;
  }
  if (np > 1) {
    cfg->np = np - 1;
    utvm_dsp_gemm(y, x, stream, cfg, mode);
  }
  cfg->np = 1;
  utvm_dsp_gemm(tail, x + (np - 1) * cfg->xstride, stream, cfg, mode);
  for (c = 0; c < cfg->ostride; ++c) y[(np - 1) * cfg->ostride + c] = tail[c];
  cfg->np = np;
}

static inline int32_t utvm_dsp_conv_s8(void* out, void* x, void* stream, void* scratch, int32_t n, int32_t h,
                                       int32_t w, int32_t cin, int32_t oh, int32_t ow, int32_t cout, int32_t kh,
                                       int32_t kw, int32_t sh, int32_t sw, int32_t dh, int32_t dw, int32_t top,
                                       int32_t left, int32_t zx, int32_t kq, int32_t chunk, int32_t lo, int32_t hi,
                                       int32_t mode) {
  int8_t* y = (int8_t*)out;
  const int8_t* xb = (const int8_t*)x;
  const int32_t* st = (const int32_t*)stream;
  int32_t* col = (int32_t*)scratch;
  int32_t b, i, j, p, odd = cout & 3;
  utvm_dsp_cfg_t cfg;
  cfg.kq = kq;
  cfg.lo = lo;
  cfg.hi = hi;
  cfg.ostride = cout;
  if (kh == 1 && kw == 1 && (cin & 3) == 0 && top == 0 && left == 0) { /* rows in place */
    int8_t* tail = odd ? (int8_t*)(col + 2 * kq) : 0;
    cfg.scratch = col;
    if (sh == 1 && sw == 1 && oh == h && ow == w) {
      cfg.np = n * oh * ow;
      cfg.xstride = cin;
      utvm_dsp_rows(y, xb, st, &cfg, mode, tail);
      return 0;
    }
    cfg.np = ow;
    cfg.xstride = sw * cin;
    for (b = 0; b < n; ++b)
      for (i = 0; i < oh; ++i)
        utvm_dsp_rows(y + ((b * oh + i) * ow) * cout, xb + ((b * h + i * sh) * w) * cin, st, &cfg, mode,
                      b == n - 1 && i == oh - 1 ? tail : 0);
    return 0;
  }
  cfg.scratch = 0;
  cfg.xstride = 8 * kq;
  for (b = 0; b < n; ++b) {
    const int8_t* xi = xb + b * h * w * cin;
    for (i = 0; i < oh; ++i) {
      for (j = 0; j < ow; j += chunk) {
        cfg.np = ow - j < chunk ? ow - j : chunk;
        for (p = 0; p < cfg.np; ++p)
          utvm_dsp_patch(col + 2 * kq * p, xi, h, w, cin, i * sh - top, (j + p) * sw - left, kh, kw, dh, dw, zx, kq,
                         mode & UTVM_DSP_W8);
        utvm_dsp_rows(y + ((b * oh + i) * ow + j) * cout, (const int8_t*)col, st, &cfg, mode,
                      odd && b == n - 1 && i == oh - 1 && j + cfg.np == ow ? (int8_t*)(col + 2 * kq * chunk) : 0);
      }
    }
  }
  return 0;
}

#endif /* UTVM_KERNELS_DSP_H_ */
