/* utvm/kernels/depthwise_dsp.h: moved from kernels.h by the split of issue 24 (one header per
 * operator family and instruction set, the bodies unchanged). */
#ifndef UTVM_KERNELS_DEPTHWISE_DSP_H_
#define UTVM_KERNELS_DEPTHWISE_DSP_H_

#include "common.h"
#include "mac_dsp.h"
#include "requant_c.h"


/*
 * Depthwise convolutions on planar int16 rows (the dsp_dwp variant): utvm_dwp_s8.
 *
 * The input is converted, four channels at a time and one band of output rows at a time, into
 * planar rows of int16 values in planned scratch: row r of channel g of the group at
 * scratch + (4 r + g) rs, padded with the input zero point (whose product is folded into the
 * bias) so that no kernel tap needs a test. Two input words (4 channels at columns j, j + 1)
 * give the four pair words (x_j, x_j+1) of the four planes with two PKH and four SXTB16 (in
 * assembly with DSP: 22 instructions for 16 values). Then each output channel runs over its
 * plane with its weights in registers, as int16 pairs in the order SMLAD reads them.
 *
 * Requantization: per output channel (bias, m, r, e), the weights and the bias scaled
 * at compile time (ops/depthwise_conv2d.py, _dwp_constants) so that the output is
 * sat8(SMMLA(acc, m, r) >> -e) for e < 0 (-e is then the layer's ``shift``, SSAT's operand in
 * assembly) or sat8((SMMLAR(acc, m, r) [+ acc >> 31]) >> e) for e >= 0 (the channel's own shift;
 * UTVM_DWP_ROUND_NEG adds acc >> 31; UTVM_DWP_MIXED: the layer has channels of both forms);
 * both are TFLite's MultiplyByQuantizedMultiplier plus the output zero point, exactly. The
 * accumulator starts at the bias (2 acc < 2**31 by the bound known at compile time).
 *
 * Flash holds per output channel its int8 taps (kh x kw, row-major, at wt + o kh kw) and three
 * words q = (bias, m, e | l << 8 | k << 16), what TFLite Micro keeps per channel (2**l the factor
 * of its weights, r the k-th word of the layer's table of r values after the cout channels' words:
 * a layer has few); with UTVM_DWP_PACKED two words q = (bias | i, m): the bias's low n bits are
 * zero (a multiple of 2**l), they hold the index i of the channel's third word in the layer's
 * table of at most 2**n after the channels' words (n in bits 8-15 of flags, the table's size in
 * bits 16-23), the r values after it. Before a channel's outputs its taps are widened to the
 * int16 pair words
 * below, each scaled by 2**l (utvm_dwp_widen, as CMSIS-NN widens int8 in registers).
 * Weights per output channel and kernel row (kw taps, mh = kw / 2), int16 pairs (low, high):
 * - horizontal stride 1 (two outputs j, j + 1 per step from the words A_k = (x_j+2k, x_j+2k+1)):
 *   E_k = (w_2k, w_2k+1) for k < mh, then O_k = (w_2k-1, w_2k) for 1 <= k < mh + kw % 2;
 *   output j takes E_k . A_k and, kw odd, the low half of A_mh times the high half of O_mh;
 *   output j + 1 the high half of A_0 times the low half of E_0, O_k . A_k, and, kw even, the
 *   low half of A_mh times the high half of E_mh-1 (kw = 1: one word (w_0, w_0));
 * - stride 2 or more: E_k for k < mh, then, kw odd, T = (w_kw-1 of the kernel row before (0 in
 *   the first), w_kw-1) (the high half read; T of row 1 is the (w02, w12) of the 3x3 assembly).
 * With DSP, 3x3 windows (stride 1 or 2) run an assembly loop over the rows of a channel, two
 * outputs per step (24 instructions for 18 multiply-accumulates and their requantization with
 * the layer's shift; rows of up to six steps and small planes unrolled, longer rows four steps
 * per loop iteration; a clamp narrower than int8's: CMP/IT/MOV by immediates per side; negative
 * ties (UTVM_DWP_ROUND_NEG): the high word + acc >> 31, three more instructions a pair); the
 * rest is plain C (utvm_dwp_chan_g at strides 1 and 2, two outputs per step, a clamp on both at
 * once by SSUB16/SEL). The rows of a band are converted in one assembly loop (utvm_dwp_rows4).
 * Stride 2: four outputs per step (utvm_dwp3_asm), and where the data starts at a block (left %
 * 4 == 0, rs % 4 == 0) the planes in blocks of two pair words of the four planes (utvm_dwp_col,
 * converted by utvm_dwp_rows4b with one STM a step of four columns).
 *
 * The geometry is given in strides so that a caller can swap rows and columns (a narrow,
 * tall image runs along its columns): input row r, column c of channel k at
 * x + r xrs + c xcs + k, output row i, column j of channel o at y + i yrs + j ycs + o.
 * The scratch holds 4 * ((band - 1) * sh + (kh - 1) * dh + 1) * rs int16 (rs even, at least
 * (ow - 1) * sw + kw + 1; stride 2 with blocks: a multiple of four).
 */
#define UTVM_DWP_ROUND_NEG 1
#define UTVM_DWP_MIXED 2
#define UTVM_DWP_PACKED 4 /* two words per channel (see above) */
#define UTVM_DWP_AI UTVM_INLINE
#define UTVM_DWP_MAXW 64 /* weight words per channel (kh x words per kernel row) */

#if defined(__GNUC__) && !defined(__clang__)
#define UTVM_DWP_UNROLL _Pragma("GCC unroll 16")
#else
#define UTVM_DWP_UNROLL
#endif

UTVM_DWP_AI int32_t utvm_dwp_ld(const int16_t* p) {
  int32_t v;
  __builtin_memcpy(&v, p, 4);
  return v;
}

UTVM_DWP_AI void utvm_dwp_st(int16_t* p, int32_t v) { __builtin_memcpy(p, &v, 4); }

/* column c of a plane row pr: planar, or blk (stride 2): blocks of two pair words of each of
 * the four planes (16 int16 a block, plane g at 4 g, see utvm_dwp_s8) */
UTVM_DWP_AI const int16_t* utvm_dwp_col(const int16_t* pr, int32_t blk, int32_t c) {
  return blk ? pr + 16 * (c >> 2) + (c & 3) : pr + c;
}

#if defined(__ARM_FEATURE_SIMD32) && __ARM_FEATURE_SIMD32
#define UTVM_DWP_SMLAD(a, b, c) __smlad((a), (b), (c))
#define UTVM_DWP_SMLABT(a, b, c) __smlabt((a), (b), (c))
#define UTVM_DWP_SMLATB(a, b, c) __smlatb((a), (b), (c))
UTVM_DWP_AI int32_t utvm_dwp_smmlar(int32_t a, int32_t m, int32_t r) {
  int32_t d;
  __asm__("smmlar %0, %1, %2, %3" : "=r"(d) : "r"(a), "r"(m), "r"(r));
  return d;
}
UTVM_DWP_AI int32_t utvm_dwp_smmla(int32_t a, int32_t m, int32_t r) {
  int32_t d;
  __asm__("smmla %0, %1, %2, %3" : "=r"(d) : "r"(a), "r"(m), "r"(r));
  return d;
}
UTVM_DWP_AI int32_t utvm_dwp_pkhbt(int32_t a, int32_t b) {
  int32_t d;
  __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(d) : "r"(a), "r"(b));
  return d;
}
UTVM_DWP_AI int32_t utvm_dwp_pkhtb(int32_t a, int32_t b) {
  int32_t d;
  __asm__("pkhtb %0, %1, %2, asr #16" : "=r"(d) : "r"(a), "r"(b));
  return d;
}
#define UTVM_DWP_SXTB16(x) __sxtb16(x)
#define UTVM_DWP_SXTB16_ROR8(x) utvm_sxtb16_ror8(x)
#else
#define UTVM_DWP_LO(a) ((int32_t)(int16_t)(uint16_t)(uint32_t)(a))
#define UTVM_DWP_HI(a) ((int32_t)((a) >> 16))
#define UTVM_DWP_SMLAD(a, b, c) \
  ((int32_t)((uint32_t)(c) + (uint32_t)(UTVM_DWP_LO(a) * UTVM_DWP_LO(b)) + (uint32_t)(UTVM_DWP_HI(a) * UTVM_DWP_HI(b))))
#define UTVM_DWP_SMLABT(a, b, c) ((int32_t)((uint32_t)(c) + (uint32_t)(UTVM_DWP_LO(a) * UTVM_DWP_HI(b))))
#define UTVM_DWP_SMLATB(a, b, c) ((int32_t)((uint32_t)(c) + (uint32_t)(UTVM_DWP_HI(a) * UTVM_DWP_LO(b))))
UTVM_DWP_AI int32_t utvm_dwp_smmlar(int32_t a, int32_t m, int32_t r) {
  /* the high word of r * 2**32 + a * m + 2**31; the shift of a negative value is arithmetic */
  return (int32_t)(((int64_t)a * m + (int64_t)r * 4294967296LL + 2147483648LL) >> 32);
}
UTVM_DWP_AI int32_t utvm_dwp_smmla(int32_t a, int32_t m, int32_t r) {
  return (int32_t)(((int64_t)a * m + (int64_t)r * 4294967296LL) >> 32);
}
UTVM_DWP_AI int32_t utvm_dwp_pkhbt(int32_t a, int32_t b) {
  return (int32_t)(((uint32_t)a & 0xFFFFu) | ((uint32_t)b << 16));
}
UTVM_DWP_AI int32_t utvm_dwp_pkhtb(int32_t a, int32_t b) {
  return (int32_t)(((uint32_t)a & 0xFFFF0000u) | ((uint32_t)b >> 16));
}
UTVM_DWP_AI int32_t utvm_dwp_sxtb16(int32_t x) {
  return (int32_t)(((uint32_t)UTVM_LANE_S8(x, 0) & 0xFFFFu) | ((uint32_t)UTVM_LANE_S8(x, 2) << 16));
}
#define UTVM_DWP_SXTB16(x) utvm_dwp_sxtb16(x)
#define UTVM_DWP_SXTB16_ROR8(x) utvm_dwp_sxtb16((int32_t)((uint32_t)(x) >> 8))
#endif

/* the int8 output of a scaled accumulator with (m, r, e) of its channel: e < 0 is the layer's
 * shift -e after SMMLA, e >= 0 the channel's own after SMMLAR */
UTVM_DWP_AI int32_t utvm_dwp_rq(int32_t acc2, int32_t m, int32_t r, int32_t e, int32_t flags, int32_t lo,
                                int32_t hi) {
  int32_t t = e < 0 ? utvm_dwp_smmla(acc2, m, r) : utvm_dwp_smmlar(acc2, m, r);
  if (flags & UTVM_DWP_ROUND_NEG) t += acc2 >> 31;
  t = utvm_sat_s8(t >> (e < 0 ? -e : e));
  if (lo > -128) t = t < lo ? lo : t;
  if (hi < 127) t = t > hi ? hi : t;
  return t;
}

/* the pair words of one channel (see above) from its int8 taps t (kh x kw), scaled by 2**l: each
 * tap loaded and shifted once (a row's taps in registers, the last of the row before kept for
 * T), each word one PKHBT */
UTVM_DWP_AI void utvm_dwp_widen(int32_t* wv, const int8_t* t, int32_t l, int32_t kh, int32_t kw, int32_t sw) {
  const int32_t mh = kw / 2, odd = kw & 1, f = 1 << l;
  int32_t r, k, n = 0, prev = 0;
  UTVM_DWP_UNROLL for (r = 0; r < kh; ++r) {
    int32_t s[2 * UTVM_DWP_MAXW + 1];
    UTVM_DWP_UNROLL for (k = 0; k < kw; ++k) s[k] = t[r * kw + k] * f;
    if (sw == 1 && kw == 1) {
      wv[n++] = utvm_dwp_pkhbt(s[0], s[0]);
      continue;
    }
    UTVM_DWP_UNROLL for (k = 0; k < mh; ++k) wv[n++] = utvm_dwp_pkhbt(s[2 * k], s[2 * k + 1]);
    if (sw == 1) {
      UTVM_DWP_UNROLL for (k = 1; k < mh + odd; ++k) wv[n++] = utvm_dwp_pkhbt(s[2 * k - 1], s[2 * k]);
    } else if (odd) {
      wv[n++] = utvm_dwp_pkhbt(prev, s[2 * mh]);
      prev = s[2 * mh];
    }
  }
}

/* the pair words (x_a, x_b) of four channels from the input words xa, xb, into the four planes
 * at dst (planes ps int16 apart) */
UTVM_DWP_AI void utvm_dwp_pairs(int16_t* dst, int32_t ps, int32_t xa, int32_t xb) {
  int32_t lo = utvm_dwp_pkhbt(xa, xb), hi = utvm_dwp_pkhtb(xb, xa);
  utvm_dwp_st(dst, UTVM_DWP_SXTB16(lo));
  utvm_dwp_st(dst + ps, UTVM_DWP_SXTB16_ROR8(lo));
  utvm_dwp_st(dst + 2 * ps, UTVM_DWP_SXTB16(hi));
  utvm_dwp_st(dst + 3 * ps, UTVM_DWP_SXTB16_ROR8(hi));
}

#if defined(__ARM_FEATURE_SIMD32) && __ARM_FEATURE_SIMD32 && defined(__OPTIMIZE__) && !defined(__PIC__)
/* The assembly forms need the constants of the layer as immediates (inlined at -O1 and above)
 * and at most ten registers besides ip and lr (a frame pointer may take one). */
#define UTVM_DWP_ASM 1

/* Pieces of the conversion of one input row (four channels, columns xcs bytes apart) into pair
 * words of the four planes (rs2 bytes apart; 3 rs2 <= 1020): a pair of the input words A, B into
 * the planes at d (d moves by 4); a pair with the zero point word z first or last; n steps of
 * four columns (d moves by 8 per step, 22 instructions for 16 values); the input pointer moves
 * by post-indexed loads when xcs < 256, else by additions (xcs < 1024). */
#define UTVM_DWP_PAIR_STORE(A, B)                \
  "pkhbt %[l], " A ", " B ", lsl #16\n\t"        \
  "pkhtb " B ", " B ", " A ", asr #16\n\t"       \
  "sxtb16 ip, %[l]\n\t"                          \
  "str ip, [%[d]], #4\n\t"                       \
  "sxtb16 ip, %[l], ror #8\n\t"                  \
  "str ip, [%[d], #%c[rs2]-4]\n\t"               \
  "sxtb16 ip, " B "\n\t"                         \
  "str ip, [%[d], #2*%c[rs2]-4]\n\t"             \
  "sxtb16 ip, " B ", ror #8\n\t"                 \
  "str ip, [%[d], #3*%c[rs2]-4]\n\t"
#define UTVM_DWP_LD(X) "ldr " X ", [%[px]], %[c]\n\t"
#define UTVM_DWP_LD_FAR(X) "ldr " X ", [%[px]]\n\tadd %[px], %[px], %[c]\n\t"
#define UTVM_DWP_CONV4_CORE                      \
  "pkhbt %[l], %[x0], %[x1], lsl #16\n\t"        \
  "pkhtb %[x1], %[x1], %[x0], asr #16\n\t"       \
  "pkhbt %[x0], %[x2], %[x3], lsl #16\n\t"       \
  "pkhtb %[x3], %[x3], %[x2], asr #16\n\t"       \
  "sxtb16 ip, %[l]\n\t"                          \
  "sxtb16 lr, %[x0]\n\t"                         \
  "strd ip, lr, [%[d]], #8\n\t"                  \
  "sxtb16 ip, %[l], ror #8\n\t"                  \
  "sxtb16 lr, %[x0], ror #8\n\t"                 \
  "strd ip, lr, [%[d], #%c[rs2]-8]\n\t"          \
  "sxtb16 ip, %[x1]\n\t"                         \
  "sxtb16 lr, %[x3]\n\t"                         \
  "strd ip, lr, [%[d], #2*%c[rs2]-8]\n\t"        \
  "sxtb16 ip, %[x1], ror #8\n\t"                 \
  "sxtb16 lr, %[x3], ror #8\n\t"                 \
  "strd ip, lr, [%[d], #3*%c[rs2]-8]\n\t"
#define UTVM_DWP_CONV4_BODY UTVM_DWP_CONV4_CORE "subs %[n], %[n], #1\n\tbne 1b\n\t"
#define UTVM_DWP_CONV_OPERANDS                                                                             \
  : [x0] "=&r"(x0), [x1] "=&r"(x1), [x2] "=&r"(x2), [x3] "=&r"(x3), [l] "=&r"(l), [px] "+r"(*px), [d] "+r"(*d), \
    [n] "+r"(n)                                                                                            \
  : [c] "i"(xcs), [rs2] "i"(rs2), [z] "r"(z)                                                               \
  : "cc", "memory", "ip", "lr"

/* kind: 0 a pair (z, x), 1 n steps, 2 a pair of two columns, 3 a pair (x, z) (*px stays) */
UTVM_DWP_AI void utvm_dwp_conv(const int8_t** px, int16_t** d, int32_t kind, int32_t n, int32_t xcs, int32_t rs2,
                               int32_t z) {
  int32_t x0, x1, x2, x3, l;
  if (kind == 0 && xcs < 256)
    __asm__ volatile(UTVM_DWP_LD("%[x1]") UTVM_DWP_PAIR_STORE("%[z]", "%[x1]") UTVM_DWP_CONV_OPERANDS);
  else if (kind == 0)
    __asm__ volatile(UTVM_DWP_LD_FAR("%[x1]") UTVM_DWP_PAIR_STORE("%[z]", "%[x1]") UTVM_DWP_CONV_OPERANDS);
  else if (kind == 1 && xcs < 256)
    __asm__ volatile("1:\n\t" UTVM_DWP_LD("%[x0]") UTVM_DWP_LD("%[x1]") UTVM_DWP_LD("%[x2]") UTVM_DWP_LD("%[x3]")
                         UTVM_DWP_CONV4_BODY UTVM_DWP_CONV_OPERANDS);
  else if (kind == 1)
    __asm__ volatile("1:\n\tldr %[x0], [%[px]]\n\tldr %[x1], [%[px], %[c]]\n\tldr %[x2], [%[px], #2*%c[c]]\n\t"
                     "ldr %[x3], [%[px], #3*%c[c]]\n\tadd %[px], %[px], #4*%c[c]\n\t" UTVM_DWP_CONV4_BODY
                         UTVM_DWP_CONV_OPERANDS);
  else if (kind == 2 && xcs < 256)
    __asm__ volatile(UTVM_DWP_LD("%[x0]") UTVM_DWP_LD("%[x1]") UTVM_DWP_PAIR_STORE("%[x0]", "%[x1]")
                         UTVM_DWP_CONV_OPERANDS);
  else if (kind == 2)
    __asm__ volatile(UTVM_DWP_LD_FAR("%[x0]") UTVM_DWP_LD_FAR("%[x1]") UTVM_DWP_PAIR_STORE("%[x0]", "%[x1]")
                         UTVM_DWP_CONV_OPERANDS);
  else
    __asm__ volatile("ldr %[x0], [%[px]]\n\tmov %[x1], %[z]\n\t" UTVM_DWP_PAIR_STORE("%[x0]", "%[x1]")
                         UTVM_DWP_CONV_OPERANDS);
  (void)x2;
  (void)x3;
}

/* the four input words of a step of four columns, post-indexed (xcs < 256) or by offsets */
#define UTVM_DWP_LD4                                                                                  \
  ".if %c[c] < 256\n\t" UTVM_DWP_LD("%[x0]") UTVM_DWP_LD("%[x1]") UTVM_DWP_LD("%[x2]") UTVM_DWP_LD("%[x3]") \
  ".else\n\tldr %[x0], [%[px]]\n\tldr %[x1], [%[px], %[c]]\n\tldr %[x2], [%[px], #2*%c[c]]\n\t"          \
  "ldr %[x3], [%[px], #3*%c[c]]\n\tadd %[px], %[px], #4*%c[c]\n\t.endif\n\t"
/* outside the loop of steps, input words 256 bytes apart or more are read at the running offset
 * .Lutvm_dwp_xo from px, which stays (one addition at the end of the row) */
#define UTVM_DWP_LD_AT(X, K)                                   \
  ".if .Lutvm_dwp_xo+" K "*%c[c] < 4096\n\t"                     \
  "ldr " X ", [%[px], #.Lutvm_dwp_xo+" K "*%c[c]]\n\t"           \
  ".else\n\t"                                                   \
  "movw ip, #.Lutvm_dwp_xo+" K "*%c[c]\n\t"                     \
  "ldr " X ", [%[px], ip]\n\t"                                  \
  ".endif\n\t"
#define UTVM_DWP_LD4X                                                                                  \
  ".if %c[c] < 256\n\t" UTVM_DWP_LD("%[x0]") UTVM_DWP_LD("%[x1]") UTVM_DWP_LD("%[x2]") UTVM_DWP_LD("%[x3]") \
  ".else\n\t" UTVM_DWP_LD_AT("%[x0]", "0") UTVM_DWP_LD_AT("%[x1]", "1") UTVM_DWP_LD_AT("%[x2]", "2")             \
  UTVM_DWP_LD_AT("%[x3]", "3") ".set .Lutvm_dwp_xo, .Lutvm_dwp_xo+4*%c[c]\n\t.endif\n\t"
#define UTVM_DWP_LDX(X) \
  ".if %c[c] < 256\n\t" UTVM_DWP_LD(X) ".else\n\t" UTVM_DWP_LD_AT(X, "0") ".set .Lutvm_dwp_xo, .Lutvm_dwp_xo+%c[c]\n\t.endif\n\t"

/* nr >= 1 input rows converted as utvm_dwp_row4 converts one, in one loop: the pieces chosen by
 * the assembler (.if on the constants), then px and d advanced to the next row by immediates
 * (|xend| < 4096: what px still lacks to the next row; 0 <= dadv < 4096); four-column steps
 * unrolled up to four (one where the words are 256 bytes apart or more), else two per loop
 * iteration */
UTVM_DWP_AI void utvm_dwp_rows4(int16_t* dst, int32_t ps, const int8_t* xrow, int32_t nr, int32_t xcs, int32_t left,
                                int32_t zw, int32_t lodd, int32_t steps, int32_t two, int32_t tail,
                                int32_t xend, int32_t dadv) {
  int32_t x0, x1, x2, x3, l, n, rows = nr, z = zw;
  const int8_t* px = xrow;
  int16_t* d = dst + 2 * (left / 2);
  __asm__ volatile(
      "0:\n\t"
      ".set .Lutvm_dwp_xo, 0\n\t"
      ".if %c[lodd] && %c[steps] == 0 && %c[two]\n\t" /* (z, x_0, x_1, x_2) as one step */
      "mov %[x0], %[z]\n\t" UTVM_DWP_LDX("%[x1]") UTVM_DWP_LDX("%[x2]") UTVM_DWP_LDX("%[x3]") UTVM_DWP_CONV4_CORE
      ".else\n\t"
      ".if %c[lodd]\n\t" UTVM_DWP_LDX("%[x1]") UTVM_DWP_PAIR_STORE("%[z]", "%[x1]") ".endif\n\t"
      ".if %c[steps] == 1\n\t" UTVM_DWP_LD4X UTVM_DWP_CONV4_CORE
      ".elseif %c[steps] <= 4 && %c[c] < 256\n\t"
      ".rept %c[steps]\n\t" UTVM_DWP_LD4 UTVM_DWP_CONV4_CORE ".endr\n\t"
      ".elseif %c[steps] > 1\n\t"
      ".if .Lutvm_dwp_xo\n\tadd %[px], %[px], #.Lutvm_dwp_xo\n\t.set .Lutvm_dwp_xo, 0\n\t.endif\n\t"
      ".if %c[steps] & 1\n\t" UTVM_DWP_LD4 UTVM_DWP_CONV4_CORE ".endif\n\t"
      "movw %[n], #%c[steps]/2\n\t"
      "1:\n\t" UTVM_DWP_LD4 UTVM_DWP_CONV4_CORE UTVM_DWP_LD4 UTVM_DWP_CONV4_BODY ".endif\n\t"
      ".if %c[two]\n\t" UTVM_DWP_LDX("%[x0]") UTVM_DWP_LDX("%[x1]") UTVM_DWP_PAIR_STORE("%[x0]", "%[x1]") ".endif\n\t"
      ".endif\n\t"
      ".if %c[tail]\n\t" UTVM_DWP_LD_AT("%[x0]", "0") "mov %[x1], %[z]\n\t" UTVM_DWP_PAIR_STORE("%[x0]", "%[x1]")
      ".endif\n\t"
      ".if %c[xend] != 0\n\tadd %[px], %[px], #%c[xend]\n\t.endif\n\t"
      "add %[d], %[d], #%c[dadv]\n\t"
      "subs %[rows], %[rows], #1\n\t"
      "bne 0b\n\t"
      : [x0] "=&r"(x0), [x1] "=&r"(x1), [x2] "=&r"(x2), [x3] "=&r"(x3), [l] "=&r"(l), [n] "=&r"(n), [px] "+r"(px),
        [d] "+r"(d), [rows] "+r"(rows)
      : [c] "i"(xcs), [rs2] "i"(2 * ps), [z] "r"(z), [lodd] "i"(lodd), [steps] "i"(steps), [two] "i"(two),
        [tail] "i"(tail), [xend] "i"(xend), [dadv] "i"(dadv)
      : "cc", "memory", "ip", "lr");
}

/* stride 2 (blk): nr input rows converted into blocks of two pair words of the four planes
 * (pairs k, k + 1 of plane g at 32 (k / 2) + 8 g bytes of the row), one STM of eight words per
 * step of four columns (17 instructions for 16 values; r0-r5, ip, lr in ascending order, r7 left
 * to a frame pointer; the steps of a row written out, up to 16); a pair of two columns and a last pair (x_w-1, zero point) as four words 8
 * bytes apart; px moves by post-indexed loads (xcs < 256; up to 1023: loads at offsets and one ADDW),
 * then both move on by immediates */
#define UTVM_DWP_B_STEP                          \
  "ldr r0, [%[px]], %[c]\n\t"                    \
  "ldr ip, [%[px]], %[c]\n\t"                    \
  "ldr r1, [%[px]], %[c]\n\t"                    \
  "ldr lr, [%[px]], %[c]\n\t" UTVM_DWP_B_STEP_OPS
/* columns 256 to 1023 bytes apart: the loads at offsets, one ADDW */
#define UTVM_DWP_B_STEP_FAR                      \
  "ldr r0, [%[px]]\n\t"                          \
  "ldr ip, [%[px], #%c[c]]\n\t"                  \
  "ldr r1, [%[px], #2*%c[c]]\n\t"                \
  "ldr lr, [%[px], #3*%c[c]]\n\t"                \
  "addw %[px], %[px], #4*%c[c]\n\t" UTVM_DWP_B_STEP_OPS
#define UTVM_DWP_B_STEP_OPS                      \
  "pkhbt r2, r0, ip, lsl #16\n\t"                \
  "pkhtb ip, ip, r0, asr #16\n\t"                \
  "pkhbt r3, r1, lr, lsl #16\n\t"                \
  "pkhtb lr, lr, r1, asr #16\n\t"                \
  "sxtb16 r0, r2\n\t"                            \
  "sxtb16 r1, r3\n\t"                            \
  "sxtb16 r2, r2, ror #8\n\t"                    \
  "sxtb16 r3, r3, ror #8\n\t"                    \
  "sxtb16 r4, ip\n\t"                            \
  "sxtb16 r5, lr\n\t"                            \
  "sxtb16 ip, ip, ror #8\n\t"                    \
  "sxtb16 lr, lr, ror #8\n\t"                    \
  "stmia %[d]!, {r0-r5, ip, lr}\n\t"
#define UTVM_DWP_B_PAIR(LD0, LD1)                \
  LD0 LD1                                        \
  "pkhbt r2, r0, r1, lsl #16\n\t"                \
  "pkhtb r1, r1, r0, asr #16\n\t"                \
  "sxtb16 r0, r2\n\t"                            \
  "sxtb16 r2, r2, ror #8\n\t"                    \
  "sxtb16 r3, r1\n\t"                            \
  "sxtb16 r1, r1, ror #8\n\t"                    \
  "str r0, [%[d]], #4\n\t"                       \
  "str r2, [%[d], #4]\n\t"                       \
  "str r3, [%[d], #12]\n\t"                      \
  "str r1, [%[d], #20]\n\t"
#define UTVM_DWP_B_ROW                                                                                    \
  "0:\n\t"                                                                                                \
  ".rept %c[steps]\n\t.if %c[c] < 256\n\t" UTVM_DWP_B_STEP ".else\n\t" UTVM_DWP_B_STEP_FAR ".endif\n\t.endr\n\t" \
  ".if %c[two] && %c[c] < 256\n\t" UTVM_DWP_B_PAIR("ldr r0, [%[px]], %[c]\n\t", "ldr r1, [%[px]], %[c]\n\t")      \
  ".elseif %c[two]\n\t" UTVM_DWP_B_PAIR("ldr r0, [%[px]]\n\t", "ldr r1, [%[px], #%c[c]]\n\taddw %[px], %[px], #2*%c[c]\n\t") \
  ".endif\n\t"                                                                                            \
  ".if %c[tail]\n\t" UTVM_DWP_B_PAIR("ldr r0, [%[px]]\n\t", "mov r1, %[z]\n\t") ".endif\n\t"               \
  ".if %c[xend] != 0\n\tadd %[px], %[px], #%c[xend]\n\t.endif\n\t"                                        \
  ".if %c[dadv] != 0\n\tadd %[d], %[d], #%c[dadv]\n\t.endif\n\t"
#define UTVM_DWP_B_INS                                                                                   \
  [c] "i"(xcs), [z] "i"(zw), [steps] "i"(steps), [two] "i"(two), [tail] "i"(tail), [xend] "i"(xend),       \
      [dadv] "i"(dadv)
/* reg: the row count in a register (the layers whose channels run the 3x3 assembly), else in
 * memory (two more instructions a row): GCC's code for utvm_dwp_chan_g in the same function may
 * leave it no register for it */
UTVM_DWP_AI void utvm_dwp_rows4b(int16_t* dst, const int8_t* xrow, int32_t nr, int32_t xcs, int32_t zw,
                                 int32_t steps, int32_t two, int32_t tail, int32_t xend, int32_t dadv, int32_t reg) {
  int32_t rows = nr;
  const int8_t* px = xrow;
  int16_t* d = dst;
  if (reg)
    __asm__ volatile(UTVM_DWP_B_ROW "subs %[rows], %[rows], #1\n\tbne 0b\n\t"
                     : [px] "+r"(px), [d] "+r"(d), [rows] "+r"(rows)
                     : UTVM_DWP_B_INS
                     : "cc", "memory", "r0", "r1", "r2", "r3", "r4", "r5", "ip", "lr");
  else
    __asm__ volatile(UTVM_DWP_B_ROW "ldr r0, %[rows]\n\tsubs r0, r0, #1\n\tstr r0, %[rows]\n\tbne 0b\n\t"
                     : [px] "+r"(px), [d] "+r"(d), [rows] "+m"(rows)
                     : UTVM_DWP_B_INS
                     : "cc", "memory", "r0", "r1", "r2", "r3", "r4", "r5", "ip", "lr");
}
#undef UTVM_DWP_B_ROW
#undef UTVM_DWP_B_INS

/* 3x3 windows: all nb output rows of one channel, two outputs per step (a last odd one alone),
 * the steps of a row unrolled up to six, else four per loop iteration. ip and lr
 * hold the input pair words; on the stack (utvm_dwp_loop_t): bb = (bias, bias), mr = (m, r), e,
 * steps = (plane and output advance at the end of a row), ny (output bytes of the looped
 * steps of a row), the rows' output bytes (made their end: y there after the last) and the end of the looped steps
 * of the current row. */
/* requantization of accumulators A (and B: SH##2) with (m, r) in ip, lr: the layer's shift as
 * SSAT's operand, or the channel's own shift e (read into ip) */
/* a clamp narrower than int8's (the layer's lo, hi as immediates; nothing where it is int8's):
 * one output by CMP/IT/MOV, two at once as int16 pairs in A (SSUB16 sets GE, SEL picks; the
 * pair's constant by one MOV or MVN into lr), B then A's high half; ip and lr taken */
#define UTVM_DWP_CLAMP(A)                                                        \
  ".if .Lutvm_dwp_lo > -128\n\tcmp " A ", #.Lutvm_dwp_lo\n\tit lt\n\tmovlt " A ", #.Lutvm_dwp_lo\n\t.endif\n\t" \
  ".if .Lutvm_dwp_hi < 127\n\tcmp " A ", #.Lutvm_dwp_hi\n\tit gt\n\tmovgt " A ", #.Lutvm_dwp_hi\n\t.endif\n\t"
#define UTVM_DWP_CLAMP2(A, B)                                                      \
  ".if .Lutvm_dwp_lo > -128 || .Lutvm_dwp_hi < 127\n\t"                            \
  "pkhbt ip, " A ", " B ", lsl #16\n\t"                                            \
  ".if .Lutvm_dwp_lo > -128 && .Lutvm_dwp_hi < 127\n\t"                            \
  "mov lr, #.Lutvm_dwp_lo2\n\tssub16 " A ", ip, lr\n\tsel ip, ip, lr\n\t"          \
  "mov lr, #.Lutvm_dwp_hi2\n\tssub16 " A ", lr, ip\n\tsel " A ", ip, lr\n\t"       \
  ".elseif .Lutvm_dwp_lo > -128\n\t"                                               \
  "mov lr, #.Lutvm_dwp_lo2\n\tssub16 " A ", ip, lr\n\tsel " A ", ip, lr\n\t"       \
  ".else\n\t"                                                                      \
  "mov lr, #.Lutvm_dwp_hi2\n\tssub16 " A ", lr, ip\n\tsel " A ", ip, lr\n\t"       \
  ".endif\n\t"                                                                     \
  "asr " B ", " A ", #16\n\t"                                                      \
  ".endif\n\t"
/* lo, hi, rn and the layer's shift sh from the one immediate cl (GCC takes at most 30 operands), set in each statement */
#define UTVM_DWP_CL_SET                                                                                  \
  ".set .Lutvm_dwp_lo, (%c[cl] & 255) - 128\n\t.set .Lutvm_dwp_hi, ((%c[cl] >> 8) & 255) - 128\n\t"   \
  ".set .Lutvm_dwp_rn, (%c[cl] >> 16) & 1\n\t.set .Lutvm_dwp_sh, (%c[cl] >> 17) & 31\n\t"             \
  ".set .Lutvm_dwp_lo2, (.Lutvm_dwp_lo & 0xffff) * 0x10001\n\t"                                        \
  ".set .Lutvm_dwp_hi2, (.Lutvm_dwp_hi & 0xffff) * 0x10001\n\t"
/* requantization of accumulators A (B, ...: SH##2, SH##3, SH##4) with (m, r) in ip, lr: the
 * layer's shift as SSAT's operand, or the channel's own shift e (read into ip) */
#define UTVM_DWP_SH_IMM_(A)                      \
  "smmla " A ", " A ", ip, lr\n\t"               \
  "ssat " A ", #8, " A ", asr #.Lutvm_dwp_sh\n\t"
#define UTVM_DWP_SH_IMM(A) UTVM_DWP_SH_IMM_(A) UTVM_DWP_CLAMP(A)
#define UTVM_DWP_SH_IMM2(A, B) UTVM_DWP_SH_IMM_(A) UTVM_DWP_SH_IMM_(B) UTVM_DWP_CLAMP2(A, B)
/* the channel's own shift; UTVM_DWP_ROUND_NEG (rn): the high word into ip, then + acc >> 31
 * (m read again for a second output) */
#define UTVM_DWP_SMMLAR_RN(A)                    \
  "smmlar ip, " A ", ip, lr\n\t"                 \
  "add " A ", ip, " A ", asr #31\n\t"
#define UTVM_DWP_SH_REG(A)                       \
  ".if .Lutvm_dwp_rn\n\t" UTVM_DWP_SMMLAR_RN(A)         \
  ".else\n\t"                                    \
  "smmlar " A ", " A ", ip, lr\n\t"              \
  ".endif\n\t"                                   \
  "ldr ip, %[e]\n\t"                             \
  "asr " A ", " A ", ip\n\t"                     \
  "ssat " A ", #8, " A "\n\t" UTVM_DWP_CLAMP(A)
#define UTVM_DWP_SH_REG2(A, B)                   \
  ".if .Lutvm_dwp_rn\n\t" UTVM_DWP_SMMLAR_RN(A)         \
  "ldr ip, %[mr]\n\t" UTVM_DWP_SMMLAR_RN(B)      \
  ".else\n\t"                                    \
  "smmlar " A ", " A ", ip, lr\n\t"              \
  "smmlar " B ", " B ", ip, lr\n\t"              \
  ".endif\n\t"                                   \
  "ldr ip, %[e]\n\t"                             \
  "asr " A ", " A ", ip\n\t"                     \
  "asr " B ", " B ", ip\n\t"                     \
  "ssat " A ", #8, " A "\n\t"                    \
  "ssat " B ", #8, " B "\n\t" UTVM_DWP_CLAMP2(A, B)
/* the stores and the output pointer's advance: post-indexed when it fits 8 bits (the
 * assembler decides, .if on the constant) */
#define UTVM_DWP_STORE_ADVANCE(A, STEP)                                  \
  ".if " STEP " <= 255\n\t"                                              \
  "strb " A ", [%[y]], #" STEP "\n\t"                                     \
  ".else\n\t"                                                             \
  "strb " A ", [%[y]]\n\t"                                                \
  "add %[y], %[y], #" STEP "\n\t"                                         \
  ".endif\n\t"
/* unrolled planes (.Lutvm_dwp_fix = 1) store at the running offset .Lutvm_dwp_yo from y, which
 * stays (an offset past 12 bits through ip: only in code that does not run, which -Og may keep);
 * the others advance y */
#define UTVM_DWP_STRB_AT(A, OFF)                  \
  ".if " OFF " >= 0 && " OFF " < 4096\n\t"         \
  "strb " A ", [%[y], #" OFF "]\n\t"               \
  ".elseif " OFF " >= 0\n\t"                       \
  "movw ip, #" OFF "\n\t"                          \
  "strb " A ", [%[y], ip]\n\t"                     \
  ".else\n\t"                                      \
  "movw ip, #-(" OFF ")\n\t"                       \
  "sub ip, %[y], ip\n\t"                           \
  "strb " A ", [ip]\n\t"                           \
  ".endif\n\t"
/* runs (.Lutvm_dwp_fix = 2, RUN_SET: the looped rows of outputs 256 to 1023 bytes apart, where a
 * step's stores past STRB's post-index would take one more addition): the outputs of a
 * run of steps at offsets from y like the unrolled planes', y advanced once where the run ends
 * (FLUSH: the end of a row's steps, the loop's entry and the end of its body) or where the next
 * step's offsets would pass 12 bits (RUN_ROOM: SPAN bytes of output) */
#define UTVM_DWP_FLUSH                                                \
  ".if .Lutvm_dwp_fix == 2 && .Lutvm_dwp_yo != 0\n\t"                \
  "add %[y], %[y], #.Lutvm_dwp_yo\n\t"                               \
  ".set .Lutvm_dwp_yo, 0\n\t"                                        \
  ".endif\n\t"
#define UTVM_DWP_RUN_SET                                              \
  ".set .Lutvm_dwp_fix, 0\n\t"                                        \
  ".if %c[c1] > 255 && %c[c1] <= 1023\n\t.set .Lutvm_dwp_fix, 2\n\t.endif\n\t"
#define UTVM_DWP_RUN_ROOM(SPAN)                                       \
  ".if .Lutvm_dwp_fix == 2 && .Lutvm_dwp_yo+" SPAN " > 4095\n\t" UTVM_DWP_FLUSH ".endif\n\t"
#define UTVM_DWP_RQ2(SH)                         \
  "ldrd ip, lr, %[mr]\n\t"                       \
  SH##2("%[a0]", "%[a1]")                        \
  UTVM_DWP_RUN_ROOM("2*%c[c1]")                   \
  ".if .Lutvm_dwp_fix\n\t"                       \
  UTVM_DWP_STRB_AT("%[a0]", ".Lutvm_dwp_yo")      \
  UTVM_DWP_STRB_AT("%[a1]", ".Lutvm_dwp_yo+%c[c1]") \
  ".set .Lutvm_dwp_yo, .Lutvm_dwp_yo+2*%c[c1]\n\t" \
  ".elseif 2*%c[c1] > 255 && %c[c1] <= 255\n\t"  \
  "strb %[a0], [%[y]], #%c[c1]\n\t"              \
  "strb %[a1], [%[y]], #%c[c1]\n\t"              \
  ".else\n\t"                                    \
  "strb %[a1], [%[y], %[c1]]\n\t"                \
  UTVM_DWP_STORE_ADVANCE("%[a0]", "2*%c[c1]")     \
  ".endif\n\t"
#define UTVM_DWP_RQ1(SH)                         \
  "ldrd ip, lr, %[mr]\n\t" SH("%[a0]")           \
  UTVM_DWP_RUN_ROOM("%c[c1]")                     \
  ".if .Lutvm_dwp_fix\n\t"                       \
  UTVM_DWP_STRB_AT("%[a0]", ".Lutvm_dwp_yo")      \
  ".set .Lutvm_dwp_yo, .Lutvm_dwp_yo+%c[c1]\n\t" \
  ".else\n\t"                                    \
  UTVM_DWP_STORE_ADVANCE("%[a0]", "%c[c1]")      \
  ".endif\n\t"

/* stride 1: weights E, O of each kernel row; p at row 0 of the pair's first column */
#define UTVM_DWP_S1_ROW(R, W0, W1)               \
  "ldrd ip, lr, [%[p]" R "\n\t"                  \
  "smlad %[a0], ip, " W0 ", %[a0]\n\t"           \
  "smlatb %[a1], ip, " W0 ", %[a1]\n\t"          \
  "smlabt %[a0], lr, " W1 ", %[a0]\n\t"          \
  "smlad %[a1], lr, " W1 ", %[a1]\n\t"
#define UTVM_DWP_S1_ONE(R, W0, W1)               \
  "ldrd ip, lr, [%[p]" R "\n\t"                  \
  "smlad %[a0], ip, " W0 ", %[a0]\n\t"           \
  "smlabt %[a0], lr, " W1 ", %[a0]\n\t"
#define UTVM_DWP_S1_PAIR(SH)                                                                      \
  "ldrd %[a0], %[a1], %[bb]\n\t"                                                                  \
  UTVM_DWP_S1_ROW("], #4", "%[w0]", "%[w1]") UTVM_DWP_S1_ROW(", #%c[r1]-4]", "%[w2]", "%[w3]")      \
  UTVM_DWP_S1_ROW(", #2*%c[r1]-4]", "%[w4]", "%[w5]") UTVM_DWP_RQ2(SH)
#define UTVM_DWP_S1_TAIL(SH)                                                                      \
  "ldr %[a0], %[bb]\n\t"                                                                          \
  UTVM_DWP_S1_ONE("]", "%[w0]", "%[w1]") UTVM_DWP_S1_ONE(", #%c[r1]]", "%[w2]", "%[w3]")            \
  UTVM_DWP_S1_ONE(", #2*%c[r1]]", "%[w4]", "%[w5]") UTVM_DWP_RQ1(SH)

/* stride 2: weights E r0, (w02, w12), E r1, E r2, (0, w22) and the bias in registers; p at row 0
 * of the first column; A0, A1 into ip, lr, then A2 into ip; the first row accumulates on the
 * bias (ACC0, ACC1 = %[b]) */
#define UTVM_DWP_S2_ROW(R, R8, W0, W1, SEL, ACC0, ACC1) \
  "ldrd ip, lr, [%[p]" R "\n\t"                  \
  "smlad %[a0], ip, " W0 ", " ACC0 "\n\t"        \
  "smlad %[a1], lr, " W0 ", " ACC1 "\n\t"        \
  "smlab" SEL " %[a0], lr, " W1 ", %[a0]\n\t"    \
  "ldr ip, [%[p]" R8 "\n\t"                      \
  "smlab" SEL " %[a1], ip, " W1 ", %[a1]\n\t"
#define UTVM_DWP_S2_ONE(R, W0, W1, SEL, ACC0)    \
  "ldrd ip, lr, [%[p]" R "\n\t"                  \
  "smlad %[a0], ip, " W0 ", " ACC0 "\n\t"        \
  "smlab" SEL " %[a0], lr, " W1 ", %[a0]\n\t"
/* the bias in register b, or (_M) read from bb into the accumulators */
#define UTVM_DWP_S2_PAIR(SH) UTVM_DWP_S2_PAIR_(SH, "", "%[b]", "%[b]")
#define UTVM_DWP_S2_PAIR_M(SH) UTVM_DWP_S2_PAIR_(SH, "ldrd %[a0], %[a1], %[bb]\n\t", "%[a0]", "%[a1]")
#define UTVM_DWP_S2_TAIL(SH) UTVM_DWP_S2_TAIL_(SH, "", "%[b]")
#define UTVM_DWP_S2_TAIL_M(SH) UTVM_DWP_S2_TAIL_(SH, "ldr %[a0], %[bb]\n\t", "%[a0]")
#define UTVM_DWP_S2_PAIR_(SH, INIT, ACC0, ACC1)                                                   \
  INIT UTVM_DWP_S2_ROW("], %[pa]", "]", "%[w0]", "%[w1]", "b", ACC0, ACC1)                        \
  UTVM_DWP_S2_ROW(", #%c[r1]-%c[pa]]", ", #%c[r1]]", "%[w2]", "%[w1]", "t", "%[a0]", "%[a1]")     \
  UTVM_DWP_S2_ROW(", #2*%c[r1]-%c[pa]]", ", #2*%c[r1]]", "%[w3]", "%[w4]", "t", "%[a0]", "%[a1]") \
  UTVM_DWP_RQ2(SH)
#define UTVM_DWP_S2_TAIL_(SH, INIT, ACC0)                                                         \
  INIT UTVM_DWP_S2_ONE("]", "%[w0]", "%[w1]", "b", ACC0)                                          \
  UTVM_DWP_S2_ONE(", #%c[r1]]", "%[w2]", "%[w1]", "t", "%[a0]")                                   \
  UTVM_DWP_S2_ONE(", #2*%c[r1]]", "%[w3]", "%[w4]", "t", "%[a0]") UTVM_DWP_RQ1(SH)

/* stride 2, four outputs per step (a0..a3): A0, A1 into ip, lr, then A2, A3, then A4 into ip;
 * 3 loads and 8 multiplies per kernel row instead of 4 and 8, one (m, r) load for four outputs */
#define UTVM_DWP_S2_QROW(R, R8, R16, W0, W1, SEL)  \
  "ldrd ip, lr, [%[p]" R "\n\t"                  \
  "smlad %[a0], ip, " W0 ", %[a0]\n\t"           \
  "smlad %[a1], lr, " W0 ", %[a1]\n\t"           \
  "smlab" SEL " %[a0], lr, " W1 ", %[a0]\n\t"    \
  "ldrd ip, lr, [%[p]" R8 "\n\t"                 \
  "smlab" SEL " %[a1], ip, " W1 ", %[a1]\n\t"    \
  "smlad %[a2], ip, " W0 ", %[a2]\n\t"           \
  "smlad %[a3], lr, " W0 ", %[a3]\n\t"           \
  "smlab" SEL " %[a2], lr, " W1 ", %[a2]\n\t"    \
  "ldr ip, [%[p]" R16 "\n\t"                     \
  "smlab" SEL " %[a3], ip, " W1 ", %[a3]\n\t"
#define UTVM_DWP_SH_IMM4(A, B, C, D) \
  UTVM_DWP_SH_IMM_(A) UTVM_DWP_SH_IMM_(B) UTVM_DWP_SH_IMM_(C) UTVM_DWP_SH_IMM_(D) UTVM_DWP_CLAMP2(A, B) UTVM_DWP_CLAMP2(C, D)
#define UTVM_DWP_SH_REG4(A, B, C, D) \
  UTVM_DWP_SH_REG2(A, B) "ldrd ip, lr, %[mr]\n\t" UTVM_DWP_SH_REG2(C, D)
/* the four stores: at offsets from y (unrolled), else post-indexed (c1 <= 255) or at offsets
 * with one advance */
#define UTVM_DWP_RQ4(SH)                                        \
  "ldrd ip, lr, %[mr]\n\t"                                      \
  SH##4("%[a0]", "%[a1]", "%[a2]", "%[a3]")                     \
  UTVM_DWP_RUN_ROOM("4*%c[c1]")                                  \
  ".if .Lutvm_dwp_fix\n\t"                                      \
  UTVM_DWP_STRB_AT("%[a0]", ".Lutvm_dwp_yo")                     \
  UTVM_DWP_STRB_AT("%[a1]", ".Lutvm_dwp_yo+%c[c1]")              \
  UTVM_DWP_STRB_AT("%[a2]", ".Lutvm_dwp_yo+2*%c[c1]")            \
  UTVM_DWP_STRB_AT("%[a3]", ".Lutvm_dwp_yo+3*%c[c1]")            \
  ".set .Lutvm_dwp_yo, .Lutvm_dwp_yo+4*%c[c1]\n\t"              \
  ".elseif 4*%c[c1] > 255 && %c[c1] <= 255\n\t"                 \
  "strb %[a0], [%[y]], #%c[c1]\n\t"                             \
  "strb %[a1], [%[y]], #%c[c1]\n\t"                             \
  "strb %[a2], [%[y]], #%c[c1]\n\t"                             \
  "strb %[a3], [%[y]], #%c[c1]\n\t"                             \
  ".else\n\t"                                                   \
  "strb %[a1], [%[y], %[c1]]\n\t"                               \
  "strb %[a2], [%[y], #2*%c[c1]]\n\t"                           \
  "strb %[a3], [%[y], #3*%c[c1]]\n\t"                           \
  UTVM_DWP_STORE_ADVANCE("%[a0]", "4*%c[c1]")                    \
  ".endif\n\t"
#define UTVM_DWP_S2_QUAD(SH)                                                                          \
  "ldrd %[a0], %[a1], %[bb]\n\t"                                                                      \
  "ldrd %[a2], %[a3], %[bb]\n\t"                                                                      \
  UTVM_DWP_S2_QROW("], #2*%c[pa]", ", #-%c[pa]]", "]", "%[w0]", "%[w1]", "b")                          \
  UTVM_DWP_S2_QROW(", #%c[r1]-2*%c[pa]]", ", #%c[r1]-%c[pa]]", ", #%c[r1]]", "%[w2]", "%[w1]", "t")       \
  UTVM_DWP_S2_QROW(", #2*%c[r1]-2*%c[pa]]", ", #2*%c[r1]-%c[pa]]", ", #2*%c[r1]]", "%[w3]", "%[w4]", "t") \
  UTVM_DWP_RQ4(SH)

/* stride 2, small planes of an odd width: the last three outputs of a row as one step (a0..a2;
 * A0, A1 then A2, A3 into ip, lr: 2 loads and 6 multiplies per kernel row), the bias in b;
 * p moves by pa as after a pair; the outputs at offsets from y (unrolled planes only) */
#define UTVM_DWP_S2_TROW(R, RA, W0, W1, SEL, ACC0, ACC1, ACC2) \
  "ldrd ip, lr, [%[p]" R "\n\t"                  \
  "smlad %[a0], ip, " W0 ", " ACC0 "\n\t"        \
  "smlad %[a1], lr, " W0 ", " ACC1 "\n\t"        \
  "smlab" SEL " %[a0], lr, " W1 ", %[a0]\n\t"    \
  "ldrd ip, lr, [%[p]" RA "\n\t"                 \
  "smlab" SEL " %[a1], ip, " W1 ", %[a1]\n\t"    \
  "smlad %[a2], ip, " W0 ", " ACC2 "\n\t"        \
  "smlab" SEL " %[a2], lr, " W1 ", %[a2]\n\t"
#define UTVM_DWP_SH_IMM3(A, B, C) \
  UTVM_DWP_SH_IMM_(A) UTVM_DWP_SH_IMM_(B) UTVM_DWP_SH_IMM_(C) UTVM_DWP_CLAMP2(A, B) UTVM_DWP_CLAMP(C)
#define UTVM_DWP_SH_REG3(A, B, C) UTVM_DWP_SH_REG2(A, B) "ldrd ip, lr, %[mr]\n\t" UTVM_DWP_SH_REG(C)
#define UTVM_DWP_S2_TRIPLE(SH)                                                                         \
  UTVM_DWP_S2_TROW("], %[pa]", "]", "%[w0]", "%[w1]", "b", "%[b]", "%[b]", "%[b]")                      \
  UTVM_DWP_S2_TROW(", #%c[r1]-%c[pa]]", ", #%c[r1]]", "%[w2]", "%[w1]", "t", "%[a0]", "%[a1]", "%[a2]")  \
  UTVM_DWP_S2_TROW(", #2*%c[r1]-%c[pa]]", ", #2*%c[r1]]", "%[w3]", "%[w4]", "t", "%[a0]", "%[a1]",       \
                   "%[a2]")                                                                            \
  "ldrd ip, lr, %[mr]\n\t" SH##3("%[a0]", "%[a1]", "%[a2]")                                           \
  UTVM_DWP_STRB_AT("%[a0]", ".Lutvm_dwp_yo")                                                          \
  UTVM_DWP_STRB_AT("%[a1]", ".Lutvm_dwp_yo+%c[c1]")                                                   \
  UTVM_DWP_STRB_AT("%[a2]", ".Lutvm_dwp_yo+2*%c[c1]")                                                 \
  ".set .Lutvm_dwp_yo, .Lutvm_dwp_yo+3*%c[c1]\n\t"

/* unrolled planes of an odd width: the last outputs of two rows as one pair (a0: the row
 * above, psh bytes before p; a1: this row at p), stored at offsets from y; the words of the row
 * above through ip where the offset does not fit LDRD's (only in code that does not run) */
#define UTVM_DWP_LD_ABOVE(R)                                     \
  ".if " R "-%c[psh] >= -1020\n\t"                               \
  "ldrd ip, lr, [%[p], #" R "-%c[psh]]\n\t"                      \
  ".else\n\t"                                                    \
  "movw ip, #%c[psh]-" R "\n\t"                                  \
  "sub ip, %[p], ip\n\t"                                         \
  "ldrd ip, lr, [ip]\n\t"                                        \
  ".endif\n\t"
#define UTVM_DWP_V_RQ2(SH)                                 \
  "ldrd ip, lr, %[mr]\n\t"                                 \
  SH##2("%[a0]", "%[a1]")                                  \
  UTVM_DWP_STRB_AT("%[a0]", ".Lutvm_dwp_yo-%c[yrs]")         \
  UTVM_DWP_STRB_AT("%[a1]", ".Lutvm_dwp_yo")                 \
  ".set .Lutvm_dwp_yo, .Lutvm_dwp_yo+%c[c1]\n\t"
#define UTVM_DWP_S1_VROW(R, W0, W1)                        \
  UTVM_DWP_LD_ABOVE(R)                                     \
  "smlad %[a0], ip, " W0 ", %[a0]\n\t"                     \
  "smlabt %[a0], lr, " W1 ", %[a0]\n\t"                    \
  "ldrd ip, lr, [%[p], #" R "]\n\t"                        \
  "smlad %[a1], ip, " W0 ", %[a1]\n\t"                     \
  "smlabt %[a1], lr, " W1 ", %[a1]\n\t"
#define UTVM_DWP_S1_VPAIR(SH)                                                                       \
  "ldrd %[a0], %[a1], %[bb]\n\t" UTVM_DWP_S1_VROW("0", "%[w0]", "%[w1]")                           \
  UTVM_DWP_S1_VROW("%c[r1]", "%[w2]", "%[w3]") UTVM_DWP_S1_VROW("2*%c[r1]", "%[w4]", "%[w5]")      \
  UTVM_DWP_V_RQ2(SH)
#define UTVM_DWP_S2_VROW(R, W0, W1, SEL, ACC0, ACC1)       \
  UTVM_DWP_LD_ABOVE(R)                                     \
  "smlad %[a0], ip, " W0 ", " ACC0 "\n\t"                  \
  "smlab" SEL " %[a0], lr, " W1 ", %[a0]\n\t"              \
  "ldrd ip, lr, [%[p], #" R "]\n\t"                        \
  "smlad %[a1], ip, " W0 ", " ACC1 "\n\t"                  \
  "smlab" SEL " %[a1], lr, " W1 ", %[a1]\n\t"
#define UTVM_DWP_S2_VPAIR(SH)                                                                       \
  UTVM_DWP_S2_VROW("0", "%[w0]", "%[w1]", "b", "%[b]", "%[b]")                                      \
  UTVM_DWP_S2_VROW("%c[r1]", "%[w2]", "%[w1]", "t", "%[a0]", "%[a1]")                               \
  UTVM_DWP_S2_VROW("2*%c[r1]", "%[w3]", "%[w4]", "t", "%[a0]", "%[a1]") UTVM_DWP_V_RQ2(SH)

/* the steps of a row: unrolled (written out, so that the compiler knows the asm's size), or a
 * loop of two steps */
#define UTVM_DWP_LOOP(PAIR) UTVM_DWP_LOOP8(PAIR PAIR PAIR PAIR)
#define UTVM_DWP_LOOP8(BODY)                     \
  UTVM_DWP_FLUSH                                 \
  "ldr ip, %[ny]\n\t"                            \
  "add ip, %[y], ip\n\t"                         \
  "str ip, %[yend]\n\t"                          \
  "1:\n\t" BODY UTVM_DWP_FLUSH                   \
  "ldr ip, %[yend]\n\t"                          \
  "cmp %[y], ip\n\t"                             \
  "bne 1b\n\t"
/* the advance of p and y to the next row: immediates where they fit 12 bits, else (steps) */
#define UTVM_DWP_ROW_STEP                                                          \
  ".if %c[pstep] < 4096 && %c[pstep] > -4096 && %c[ystep] < 4096 && %c[ystep] > -4096\n\t" \
  "add %[p], %[p], %[pstep]\n\t"                                                   \
  ".if %c[ystep] != 0 && .Lutvm_dwp_fix\n\t"                                      \
  ".set .Lutvm_dwp_yo, .Lutvm_dwp_yo+%c[ystep]\n\t"                                \
  UTVM_DWP_REBASE                                                                  \
  ".elseif %c[ystep] != 0\n\t"                                                     \
  "add %[y], %[y], %[ystep]\n\t"                                                   \
  ".endif\n\t"                                                                     \
  ".else\n\t"                                                                      \
  "ldrd ip, lr, %[steps]\n\t"                                                      \
  "add %[p], %[p], ip\n\t"                                                         \
  "add %[y], %[y], lr\n\t"                                                         \
  ".endif\n\t"
/* unrolled rows whose outputs would pass 12 bits of offset (medium planes only: the offsets
 * of small ones fit) move y to the next row's first output; y goes back at the end */
#define UTVM_DWP_REBASE                                                          \
  ".if .Lutvm_dwp_yo+%c[yspan] > 4095\n\t"                                     \
  "addw %[y], %[y], #.Lutvm_dwp_yo\n\t"                                         \
  ".set .Lutvm_dwp_ymv, .Lutvm_dwp_ymv+.Lutvm_dwp_yo\n\t"                       \
  ".set .Lutvm_dwp_yo, 0\n\t"                                                  \
  ".endif\n\t"
#define UTVM_DWP_YBACK                                                           \
  ".if .Lutvm_dwp_ymv > 0 && .Lutvm_dwp_ymv < 4096\n\t"                        \
  "subw %[y], %[y], #.Lutvm_dwp_ymv\n\t"                                        \
  ".elseif .Lutvm_dwp_ymv > 0\n\t"                                             \
  "movw ip, #.Lutvm_dwp_ymv\n\t"                                                \
  "sub %[y], %[y], ip\n\t"                                                     \
  ".endif\n\t"
#define UTVM_DWP_ROW_END                         \
  UTVM_DWP_ROW_STEP                              \
  "ldr ip, %[rows]\n\t"                          \
  "cmp %[y], ip\n\t"                             \
  "bne 0b\n\t"

#define UTVM_DWP_OUTS : [a0] "=&r"(a0), [a1] "=&r"(a1), [p] "+r"(p), [y] "+r"(y), [rows] "+m"(kp->rows), [yend] "=m"(kp->yend)
#define UTVM_DWP_INS                                                                                 \
  [bb] "m"(kp->bb), [mr] "m"(kp->mr), [e] "m"(kp->e), [steps] "m"(kp->steps), [ny] "m"(kp->ny),                \
      [r1] "i"(rb), [c1] "i"(ycs), [cl] "i"(cl) UTVM_DWP_EXTRA
/* ten registers: a0, a1, p, y and six weights (stride 1) or five and the bias (stride 2) */
#define UTVM_DWP_S1_OPERANDS                                                                         \
  UTVM_DWP_OUTS : [w0] "r"(w0), [w1] "r"(w1), [w2] "r"(w2), [w3] "r"(w3), [w4] "r"(w4), [w5] "r"(w5), \
                  UTVM_DWP_INS : "cc", "memory", "ip", "lr"
#define UTVM_DWP_S2Q_OPERANDS                                                                        \
  UTVM_DWP_OUTS, [a2] "=&r"(a2), [a3] "=&r"(a3) : [w0] "r"(w0), [w1] "r"(w1), [w2] "r"(w2), [w3] "r"(w3),        \
                  [w4] "r"(w4), UTVM_DWP_INS : "cc", "memory", "ip", "lr"
#define UTVM_DWP_S2T_OPERANDS                                                                        \
  UTVM_DWP_OUTS, [a2] "=&r"(a2) : [w0] "r"(w0), [w1] "r"(w1), [w2] "r"(w2), [w3] "r"(w3), [w4] "r"(w4),           \
                  [b] "r"(b), UTVM_DWP_INS : "cc", "memory", "ip", "lr"
#define UTVM_DWP_S2_OPERANDS                                                                         \
  UTVM_DWP_OUTS : [w0] "r"(w0), [w1] "r"(w1), [w2] "r"(w2), [w3] "r"(w3), [w4] "r"(w4), [b] "r"(b),      \
                                  UTVM_DWP_INS : "cc", "memory", "ip", "lr"

typedef struct {
  int32_t bb[2], mr[2], steps[2], e, ny, rows, yend;
} utvm_dwp_loop_t;

/* one asm statement for the shape of a row (ow, np = ow / 2 constants): its steps unrolled (up
 * to six) or looped four at a time (np % 4 before the loop), then the last odd output */
#define UTVM_DWP_ROW_ASM(STEPS, TAIL) \
  __asm__ volatile(UTVM_DWP_CL_SET UTVM_DWP_RUN_SET ".set .Lutvm_dwp_yo, 0\n\t"                      \
                   "ldr ip, %[rows]\n\tadd ip, %[y], ip\n\tstr ip, %[rows]\n\t0:\n\t" STEPS \
                   TAIL UTVM_DWP_FLUSH ".set .Lutvm_dwp_fix, 0\n\t" UTVM_DWP_ROW_END OPERANDS)
#define UTVM_DWP_ROW_TAILS(STEPS, ONE) \
  do {                                 \
    if (ow & 1)                        \
      UTVM_DWP_ROW_ASM(STEPS, ONE);    \
    else                               \
      UTVM_DWP_ROW_ASM(STEPS, "");     \
  } while (0)
#define UTVM_DWP_ROWS(PAIR, ONE, SH)                                           \
  do {                                                                       \
    if (np == 0)                                                             \
      UTVM_DWP_ROW_TAILS("", ONE(SH));                                       \
    else if (np == 1)                                                        \
      UTVM_DWP_ROW_TAILS(PAIR(SH), ONE(SH));                                 \
    else if (np == 2)                                                        \
      UTVM_DWP_ROW_TAILS(PAIR(SH) PAIR(SH), ONE(SH));                        \
    else if (np == 3)                                                        \
      UTVM_DWP_ROW_TAILS(PAIR(SH) PAIR(SH) PAIR(SH), ONE(SH));               \
    else if (np == 4)                                                        \
      UTVM_DWP_ROW_TAILS(PAIR(SH) PAIR(SH) PAIR(SH) PAIR(SH), ONE(SH));      \
    else if (np == 5)                                                        \
      UTVM_DWP_ROW_TAILS(PAIR(SH) PAIR(SH) PAIR(SH) PAIR(SH) PAIR(SH), ONE(SH)); \
    else if (np == 6)                                                        \
      UTVM_DWP_ROW_TAILS(PAIR(SH) PAIR(SH) PAIR(SH) PAIR(SH) PAIR(SH) PAIR(SH), ONE(SH)); \
    else if (np % 4 == 1)                                                    \
      UTVM_DWP_ROW_TAILS(PAIR(SH) UTVM_DWP_LOOP(PAIR(SH)), ONE(SH));         \
    else if (np % 4 == 2)                                                    \
      UTVM_DWP_ROW_TAILS(PAIR(SH) PAIR(SH) UTVM_DWP_LOOP(PAIR(SH)), ONE(SH)); \
    else if (np % 4 == 3)                                                    \
      UTVM_DWP_ROW_TAILS(PAIR(SH) PAIR(SH) PAIR(SH) UTVM_DWP_LOOP(PAIR(SH)), ONE(SH)); \
    else                                                                     \
      UTVM_DWP_ROW_TAILS(UTVM_DWP_LOOP(PAIR(SH)), ONE(SH));                  \
  } while (0)

/* stride 2 with four outputs per step (Q): np / 2 steps of four and a pair, unrolled up to
 * 24 outputs (Q3: twelve), else eight per loop iteration */
#define UTVM_DWP_Q3(QUAD, SH) QUAD(SH) QUAD(SH) QUAD(SH)
#define UTVM_DWP_ROWS_Q(PAIR, QUAD, ONE, SH)                                         \
  do {                                                                             \
    if (np == 1)                                                                   \
      UTVM_DWP_ROW_TAILS(PAIR(SH), ONE(SH));                                       \
    else if (np == 2)                                                              \
      UTVM_DWP_ROW_TAILS(QUAD(SH), ONE(SH));                                       \
    else if (np == 3)                                                              \
      UTVM_DWP_ROW_TAILS(QUAD(SH) PAIR(SH), ONE(SH));                              \
    else if (np == 4)                                                              \
      UTVM_DWP_ROW_TAILS(QUAD(SH) QUAD(SH), ONE(SH));                              \
    else if (np == 5)                                                              \
      UTVM_DWP_ROW_TAILS(QUAD(SH) QUAD(SH) PAIR(SH), ONE(SH));                     \
    else if (np == 6)                                                              \
      UTVM_DWP_ROW_TAILS(UTVM_DWP_Q3(QUAD, SH), ONE(SH));                          \
    else if (np == 7)                                                              \
      UTVM_DWP_ROW_TAILS(UTVM_DWP_Q3(QUAD, SH) PAIR(SH), ONE(SH));                 \
    else if (np == 8)                                                              \
      UTVM_DWP_ROW_TAILS(UTVM_DWP_Q3(QUAD, SH) QUAD(SH), ONE(SH));                 \
    else if (np == 9)                                                              \
      UTVM_DWP_ROW_TAILS(UTVM_DWP_Q3(QUAD, SH) QUAD(SH) PAIR(SH), ONE(SH));        \
    else if (np == 10)                                                             \
      UTVM_DWP_ROW_TAILS(UTVM_DWP_Q3(QUAD, SH) QUAD(SH) QUAD(SH), ONE(SH));        \
    else if (np == 11)                                                             \
      UTVM_DWP_ROW_TAILS(UTVM_DWP_Q3(QUAD, SH) QUAD(SH) QUAD(SH) PAIR(SH), ONE(SH)); \
    else if (np == 12)                                                             \
      UTVM_DWP_ROW_TAILS(UTVM_DWP_Q3(QUAD, SH) UTVM_DWP_Q3(QUAD, SH), ONE(SH));    \
    else if (np % 4 == 1)                                                          \
      UTVM_DWP_ROW_TAILS(PAIR(SH) UTVM_DWP_LOOP8(QUAD(SH) QUAD(SH)), ONE(SH));     \
    else if (np % 4 == 2)                                                          \
      UTVM_DWP_ROW_TAILS(QUAD(SH) UTVM_DWP_LOOP8(QUAD(SH) QUAD(SH)), ONE(SH));     \
    else if (np % 4 == 3)                                                          \
      UTVM_DWP_ROW_TAILS(QUAD(SH) PAIR(SH) UTVM_DWP_LOOP8(QUAD(SH) QUAD(SH)), ONE(SH)); \
    else                                                                           \
      UTVM_DWP_ROW_TAILS(UTVM_DWP_LOOP8(QUAD(SH) QUAD(SH)), ONE(SH));              \
  } while (0)

/* small planes: every row written out (nb rows of np <= 2 steps), no loop, the outputs at
 * offsets from y */
#define UTVM_DWP_FIX UTVM_DWP_CL_SET ".set .Lutvm_dwp_fix, 1\n\t.set .Lutvm_dwp_yo, 0\n\t.set .Lutvm_dwp_ymv, 0\n\t"
#define UTVM_DWP_UNROLLED(ROW)                                                                        \
  do {                                                                                                \
    if (nb == 1)                                                                                      \
      __asm__ volatile(UTVM_DWP_FIX ROW OPERANDS);                                                    \
    else if (nb == 2)                                                                                 \
      __asm__ volatile(UTVM_DWP_FIX ROW UTVM_DWP_ROW_STEP ROW OPERANDS);                              \
    else if (nb == 3)                                                                                 \
      __asm__ volatile(UTVM_DWP_FIX ROW UTVM_DWP_ROW_STEP ROW UTVM_DWP_ROW_STEP ROW OPERANDS);         \
    else                                                                                              \
      __asm__ volatile(UTVM_DWP_FIX ROW UTVM_DWP_ROW_STEP ROW UTVM_DWP_ROW_STEP ROW UTVM_DWP_ROW_STEP   \
                       ROW OPERANDS);                                                                 \
  } while (0)
/* an odd width: the last outputs of rows 2k and 2k + 1 as one vertical pair (V), of a last odd
 * row alone (ONE); the output offset passes over the last output of row 2k (SKIP) */
#define UTVM_DWP_SKIP ".set .Lutvm_dwp_yo, .Lutvm_dwp_yo+%c[c1]\n\t"
#define UTVM_DWP_UNROLLED_V(PAIRS, ONE, V)                                                              \
  do {                                                                                                \
    if (nb == 1)                                                                                      \
      __asm__ volatile(UTVM_DWP_FIX PAIRS ONE OPERANDS);                                              \
    else if (nb == 2)                                                                                 \
      __asm__ volatile(UTVM_DWP_FIX PAIRS UTVM_DWP_SKIP UTVM_DWP_ROW_STEP PAIRS V OPERANDS);           \
    else if (nb == 3)                                                                                 \
      __asm__ volatile(UTVM_DWP_FIX PAIRS UTVM_DWP_SKIP UTVM_DWP_ROW_STEP PAIRS V UTVM_DWP_ROW_STEP PAIRS \
                           ONE OPERANDS);                                                             \
    else                                                                                              \
      __asm__ volatile(UTVM_DWP_FIX PAIRS UTVM_DWP_SKIP UTVM_DWP_ROW_STEP PAIRS V UTVM_DWP_ROW_STEP     \
                           PAIRS UTVM_DWP_SKIP UTVM_DWP_ROW_STEP PAIRS V OPERANDS);                   \
  } while (0)
#define UTVM_DWP_UNROLLED_ROWS(PAIR, ONE, V, SH)                      \
  do {                                                              \
    if (np == 0)                                                    \
      UTVM_DWP_UNROLLED_V("", ONE(SH), V(SH));                      \
    else if (np == 1 && (ow & 1))                                   \
      UTVM_DWP_UNROLLED_V(PAIR(SH), ONE(SH), V(SH));                \
    else if (np == 1)                                               \
      UTVM_DWP_UNROLLED(PAIR(SH));                                  \
    else if (ow & 1)                                                \
      UTVM_DWP_UNROLLED_V(PAIR(SH) PAIR(SH), ONE(SH), V(SH));       \
    else                                                            \
      UTVM_DWP_UNROLLED(PAIR(SH) PAIR(SH));                         \
  } while (0)

/* medium planes at stride 2 (one band of up to eight rows of two to four steps): every row written out
 * as the looped rows run it, no row loop, the outputs at offsets from y */
#define UTVM_DWP_R2(ROW) ROW UTVM_DWP_ROW_STEP ROW
#define UTVM_DWP_R4(ROW) UTVM_DWP_R2(ROW) UTVM_DWP_ROW_STEP UTVM_DWP_R2(ROW)
#define UTVM_DWP_UNROLLED8(ROW)                                                                                \
  do {                                                                                                         \
    if (nb == 1)                                                                                               \
      __asm__ volatile(UTVM_DWP_FIX ROW UTVM_DWP_YBACK OPERANDS);                                                             \
    else if (nb == 2)                                                                                          \
      __asm__ volatile(UTVM_DWP_FIX UTVM_DWP_R2(ROW) UTVM_DWP_YBACK OPERANDS);                                                \
    else if (nb == 3)                                                                                          \
      __asm__ volatile(UTVM_DWP_FIX UTVM_DWP_R2(ROW) UTVM_DWP_ROW_STEP ROW UTVM_DWP_YBACK OPERANDS);                          \
    else if (nb == 4)                                                                                          \
      __asm__ volatile(UTVM_DWP_FIX UTVM_DWP_R4(ROW) UTVM_DWP_YBACK OPERANDS);                                                \
    else if (nb == 5)                                                                                          \
      __asm__ volatile(UTVM_DWP_FIX UTVM_DWP_R4(ROW) UTVM_DWP_ROW_STEP ROW UTVM_DWP_YBACK OPERANDS);                          \
    else if (nb == 6)                                                                                          \
      __asm__ volatile(UTVM_DWP_FIX UTVM_DWP_R4(ROW) UTVM_DWP_ROW_STEP UTVM_DWP_R2(ROW) UTVM_DWP_YBACK OPERANDS);             \
    else if (nb == 7)                                                                                          \
      __asm__ volatile(UTVM_DWP_FIX UTVM_DWP_R4(ROW) UTVM_DWP_ROW_STEP UTVM_DWP_R2(ROW) UTVM_DWP_ROW_STEP ROW  \
                           UTVM_DWP_YBACK OPERANDS);                                                                          \
    else                                                                                                       \
      __asm__ volatile(UTVM_DWP_FIX UTVM_DWP_R4(ROW) UTVM_DWP_ROW_STEP UTVM_DWP_R4(ROW) UTVM_DWP_YBACK OPERANDS);             \
  } while (0)
#define UTVM_DWP_MEDIUM_TAILS(STEPS, ONE) \
  do {                                    \
    if (ow & 1)                           \
      UTVM_DWP_UNROLLED8(STEPS ONE);      \
    else                                  \
      UTVM_DWP_UNROLLED8(STEPS);          \
  } while (0)
/* stride 2 only (at stride 1 the code it costs, ~5.7 KB in VWW, bought 0.2%): steps of four and a pair */
#define UTVM_DWP_MEDIUM_Q(PAIR, QUAD, ONE, SH)                  \
  do {                                                          \
    if (np == 2)                                                \
      UTVM_DWP_MEDIUM_TAILS(QUAD(SH), ONE(SH));                 \
    else if (np == 3)                                           \
      UTVM_DWP_MEDIUM_TAILS(QUAD(SH) PAIR(SH), ONE(SH));        \
    else                                                        \
      UTVM_DWP_MEDIUM_TAILS(QUAD(SH) QUAD(SH), ONE(SH));        \
  } while (0)

/* sh: the layer's right shift as an immediate (1..31: SMMLA), or 0: the channel's own (SMMLAR, k.e);
 * q: (bias, m, e | ...) of the channel (e < 0: the layer's shift), r its r; packed
 * (UTVM_DWP_PACKED): q holds (bias | i, m), b the bias and qe the third word instead; k: the loop's constants
 * (steps, ny) set by the caller; unrolled: nb is the layer's constant row count (one band).
 * *pp, *yp: the plane and the output, given back unchanged (recovered from where the assembly
 * leaves them, so that the caller keeps them in registers rather than on the stack) */
UTVM_DWP_AI void utvm_dwp3_asm(const int16_t** pp, int8_t** yp, const int32_t* wv, const int32_t* q,
                               int32_t packed, int32_t b, int32_t qe, int32_t r, utvm_dwp_loop_t* kp, int32_t nb, int32_t unrolled, int32_t ow, int32_t sw, int32_t rb,
                               int32_t psh, int32_t yrs, int32_t ycs, int32_t sh, int32_t blk, int32_t lo,
                               int32_t hi, int32_t rn) {
  const int16_t* p = *pp;
  int8_t* y = *yp;
  int32_t a0, a1, a2, a3, w0 = wv[0], w1 = wv[1], w2 = wv[2], w3 = wv[3], w4 = wv[4], w5 = wv[5];
  /* pa: bytes from one stride-2 pair word to the next but one (blk: the next block) */
  const int32_t pa = blk ? 32 : 8, pst = sw == 1 ? 4 : pa;
  const int32_t np = ow / 2, pstep = psh - pst * np, ystep = yrs - ow * ycs;
  const int32_t small = unrolled && nb <= 4 && np <= 2 && nb * (np * 27 + (ow & 1) * 15) <= 170 && pstep < 4096 &&
                        ystep < 4096 && ystep > -4096 && (nb - 1) * yrs + ow * ycs < 4096 && psh <= 1020;
  /* one band of up to eight rows of two to four steps, within about 480 instructions */
  const int32_t medium = unrolled && !small && sw == 2 && nb <= 8 && np >= 2 && np <= 4 &&
                         nb * ((np / 2) * 48 + (np & 1) * 25) + nb * (ow & 1) * 14 <= 480 &&
                         pstep < 4096 && ystep < 4096 && ystep > -4096 && ow * ycs < 4096;
  const int32_t fixed = small || medium;
  const int32_t cl = ((lo + 128) & 255) | (((hi + 128) & 255) << 8) | (rn ? 1 << 16 : 0) | (sh & 31) << 17;
  /* only what the loop reads, by LDRD/STRD: the bias pair for stride 1 and the steps of four
   * (stride 2 otherwise holds it in a register), (m, r), e for the channel's own shift (GCC finds
   * no register for q's address in some functions when the loops read q itself) */
  if ((sw == 1 || !small) && !packed)
    __asm__ volatile("ldr ip, [%[q]]\n\tmov lr, ip\n\tstrd ip, lr, %[bb]\n\t" : [bb] "=m"(kp->bb) : [q] "r"(q),
                     "m"(*q) : "ip", "lr");
  else if (sw == 1 || !small)
    __asm__ volatile("strd %[b], %[b], %[bb]\n\t" : [bb] "=m"(kp->bb) : [b] "r"(b));
  __asm__ volatile("ldr ip, [%[q], #4]\n\tstrd ip, %[r], %[mr]\n\t" : [mr] "=m"(kp->mr) : [q] "r"(q), "m"(q[1]),
                   [r] "r"(r) : "ip");
  if (sh == 0) kp->e = (int8_t)(uint8_t)(uint32_t)(packed ? qe : q[2]);
  if (!packed) b = q[0];
  if (!fixed) kp->rows = nb * yrs; /* the rows' output bytes: the asm makes it their end */
#define UTVM_DWP_EXTRA \
  , [pstep] "i"(pstep), [ystep] "i"(ystep), [psh] "i"(psh), [yrs] "i"(yrs), [yspan] "i"(ow * ycs), [pa] "i"(pa)
/* the rows unrolled or looped, the layer's shift or the channel's */
#define UTVM_DWP_STRIDE(PAIR, TAIL, V)                         \
  do {                                                         \
    if (small && sh > 0)                                       \
      UTVM_DWP_UNROLLED_ROWS(PAIR, TAIL, V, UTVM_DWP_SH_IMM);  \
    else if (small)                                            \
      UTVM_DWP_UNROLLED_ROWS(PAIR, TAIL, V, UTVM_DWP_SH_REG);  \
    else if (sh > 0)                                           \
      UTVM_DWP_ROWS(PAIR, TAIL, UTVM_DWP_SH_IMM);              \
    else                                                       \
      UTVM_DWP_ROWS(PAIR, TAIL, UTVM_DWP_SH_REG);              \
  } while (0)
  if (sw == 2) {
    w1 = wv[3];
    w3 = wv[4];
    w4 = wv[5];
  }
#define OPERANDS UTVM_DWP_S2Q_OPERANDS
  if (sw == 2 && medium && sh > 0)
    UTVM_DWP_MEDIUM_Q(UTVM_DWP_S2_PAIR_M, UTVM_DWP_S2_QUAD, UTVM_DWP_S2_TAIL_M, UTVM_DWP_SH_IMM);
  else if (sw == 2 && medium)
    UTVM_DWP_MEDIUM_Q(UTVM_DWP_S2_PAIR_M, UTVM_DWP_S2_QUAD, UTVM_DWP_S2_TAIL_M, UTVM_DWP_SH_REG);
  else if (sw == 2 && !small && sh > 0)
    UTVM_DWP_ROWS_Q(UTVM_DWP_S2_PAIR_M, UTVM_DWP_S2_QUAD, UTVM_DWP_S2_TAIL_M, UTVM_DWP_SH_IMM);
  else if (sw == 2 && !small)
    UTVM_DWP_ROWS_Q(UTVM_DWP_S2_PAIR_M, UTVM_DWP_S2_QUAD, UTVM_DWP_S2_TAIL_M, UTVM_DWP_SH_REG);
#undef OPERANDS
#define OPERANDS UTVM_DWP_S2T_OPERANDS
#define UTVM_DWP_TRIPLES(SH)                                            \
  do {                                                                  \
    if (np == 1)                                                        \
      UTVM_DWP_UNROLLED(UTVM_DWP_S2_TRIPLE(SH));                        \
    else                                                                \
      UTVM_DWP_UNROLLED(UTVM_DWP_S2_PAIR(SH) UTVM_DWP_S2_TRIPLE(SH));   \
  } while (0)
  if (sw == 2 && small && (ow & 1) && np >= 1 && sh > 0)
    UTVM_DWP_TRIPLES(UTVM_DWP_SH_IMM);
  else if (sw == 2 && small && (ow & 1) && np >= 1)
    UTVM_DWP_TRIPLES(UTVM_DWP_SH_REG);
#undef UTVM_DWP_TRIPLES
#undef OPERANDS
#define OPERANDS UTVM_DWP_S2_OPERANDS
  if (sw == 2 && small && !((ow & 1) && np >= 1))
    UTVM_DWP_STRIDE(UTVM_DWP_S2_PAIR, UTVM_DWP_S2_TAIL, UTVM_DWP_S2_VPAIR);
#undef OPERANDS
#define OPERANDS UTVM_DWP_S1_OPERANDS
  if (sw == 1) UTVM_DWP_STRIDE(UTVM_DWP_S1_PAIR, UTVM_DWP_S1_TAIL, UTVM_DWP_S1_VPAIR);
#undef OPERANDS
#undef UTVM_DWP_STRIDE
#undef UTVM_DWP_EXTRA
  (void)w5;
  /* the assembly moved p by psh bytes a row (unrolled: the last row by its steps only) and y by
   * yrs a row (unrolled: not at all) */
  *pp = (const int16_t*)(uintptr_t)((uintptr_t)p - (uint32_t)(fixed ? (nb - 1) * psh + pst * np : nb * psh));
  *yp = (int8_t*)(uintptr_t)((uintptr_t)y - (uint32_t)(fixed ? 0 : nb * yrs));
}
#endif

/* the data pairs of one input row (four channels at xrow, columns xcs bytes apart) into the
 * planes (dst: this row of plane 0, planes ps int16 apart): pairs left / 2 .. (left + w) / 2 - 1
 * of the padded row, with a first pair (zero point, x_0) when left is odd and a last pair
 * (x_w-1, zero point) when left + w is odd; the pairs of padding only are written once */
UTVM_DWP_AI void utvm_dwp_row4(int16_t* dst, int32_t ps, const int8_t* xrow, int32_t w, int32_t xcs, int32_t left,
                               int32_t zw, int32_t blk) {
  int32_t k = left / 2, k1 = (left + w) / 2;
  const int8_t* px = xrow;
  int16_t* d = dst + 2 * k;
  if (blk) { /* pair k of plane g at 16 (k / 2) + 2 (k % 2) + 4 g */
    for (; k < (left + w + 1) / 2; ++k) {
      const int32_t c = 2 * k - left; /* the input column of the pair's first value */
      const int32_t xa = c < 0 ? zw : utvm_ldw_s8((int8_t*)xrow + c * xcs);
      const int32_t xb = c + 1 >= w ? zw : utvm_ldw_s8((int8_t*)xrow + (c + 1) * xcs);
      utvm_dwp_pairs(dst + 16 * (k >> 1) + 2 * (k & 1), 4, xa, xb);
    }
    return;
  }
#ifdef UTVM_DWP_ASM
  if (xcs < 1024 && 3 * ps <= 506) {
    int32_t steps = (k1 - k - (left & 1)) / 2;
    if (left & 1) utvm_dwp_conv(&px, &d, 0, 0, xcs, 2 * ps, zw);
    if (steps) utvm_dwp_conv(&px, &d, 1, steps, xcs, 2 * ps, zw);
    if ((k1 - k - (left & 1)) & 1) utvm_dwp_conv(&px, &d, 2, 0, xcs, 2 * ps, zw);
    if ((left + w) & 1) utvm_dwp_conv(&px, &d, 3, 0, xcs, 2 * ps, zw);
    return;
  }
#endif
  if (left & 1) {
    utvm_dwp_pairs(d, ps, zw, utvm_ldw_s8((int8_t*)px));
    px += xcs;
    d += 2;
    ++k;
  }
  for (; k < k1; ++k, px += 2 * xcs, d += 2) utvm_dwp_pairs(d, ps, utvm_ldw_s8((int8_t*)px), utvm_ldw_s8((int8_t*)px + xcs));
  if ((left + w) & 1) utvm_dwp_pairs(d, ps, utvm_ldw_s8((int8_t*)px), zw);
}

/* columns [c0, c1) (even) of nr rows of the gc planes set to the zero point; blk (c1 a multiple
 * of four): those of all four planes, a run of whole blocks after the second pairs of the first */
UTVM_DWP_AI void utvm_dwp_fill(int16_t* sc, int32_t rs, int32_t blk, int32_t gc, int32_t nr, int32_t c0, int32_t c1,
                               int32_t zx) {
  int32_t zz = (int32_t)(((uint32_t)zx & 0xFFFFu) * 0x10001u);
  int32_t r, g, c;
  for (r = 0; r < nr; ++r) {
    int16_t* row = sc + 4 * r * rs;
    if (blk) {
      int16_t* pe = row + 16 * (c1 >> 2);
      int16_t* pb = row + 16 * (c0 >> 2);
      if (c0 & 2) {
        for (g = 0; g < 4; ++g) utvm_dwp_st(pb + 4 * g + 2, zz);
        pb += 16;
      }
      for (; pb < pe; pb += 16) /* a block a loop iteration */
        UTVM_DWP_UNROLL for (c = 0; c < 16; c += 2) utvm_dwp_st(pb + c, zz);
      continue;
    }
    for (g = 0; g < gc; ++g)
      for (c = c0; c < c1; c += 2) utvm_dwp_st(row + g * rs + c, zz);
  }
}

/* the outputs of one channel over nb output rows in plain C (any window, strides) */
UTVM_DWP_AI void utvm_dwp_chan_c(int8_t* yo, const int16_t* pl, const int32_t* wv, const int32_t* q, int32_t r0,
                                 int32_t nb,
                                 int32_t ow, int32_t yrs, int32_t ycs, int32_t kh, int32_t kw, int32_t sh,
                                 int32_t sw, int32_t dh, int32_t rs, int32_t flags, int32_t lo, int32_t hi,
                                 int32_t blk) {
  const int32_t b2 = q[0], m = q[1], e = (int8_t)(uint8_t)(uint32_t)q[2], mh = kw / 2, odd = kw & 1;
  const int32_t rw = sw == 1 ? (kw > 1 ? kw - 1 : 1) : (kw + 1) / 2; /* words per kernel row */
  const int32_t sg = sw == 1 ? (kw > 1 ? 2 * mh - 1 : 0) : mh;       /* the word of the last odd tap */
  const int32_t rstep = 4 * rs * dh;
  int32_t i, j, r, k;
  for (i = 0; i < nb; ++i) {
    const int16_t* row = pl + 4 * rs * sh * i;
    int8_t* yr = yo + i * yrs;
    j = 0;
    if (sw <= 2) {
      for (; j + 1 < ow; j += 2) {
        int32_t a0 = b2, a1 = b2;
        UTVM_DWP_UNROLL for (r = 0; r < kh; ++r) {
          const int16_t* p = row + r * rstep + j * sw;
          const int32_t* wr = wv + r * rw;
          if (sw == 1) {
            a1 = UTVM_DWP_SMLATB(utvm_dwp_ld(p), wr[0], a1);
            UTVM_DWP_UNROLL for (k = 0; k < mh; ++k) a0 = UTVM_DWP_SMLAD(utvm_dwp_ld(p + 2 * k), wr[k], a0);
            for (k = 1; k < mh + odd; ++k) a1 = UTVM_DWP_SMLAD(utvm_dwp_ld(p + 2 * k), wr[mh + k - 1], a1);
            if (odd) a0 = UTVM_DWP_SMLABT(utvm_dwp_ld(p + 2 * mh), wr[sg], a0);
            if (!odd) a1 = UTVM_DWP_SMLABT(utvm_dwp_ld(p + 2 * mh), wr[mh - 1], a1);
          } else {
            const int16_t* pr = row + r * rstep;
            UTVM_DWP_UNROLL for (k = 0; k < mh; ++k) {
              a0 = UTVM_DWP_SMLAD(utvm_dwp_ld(utvm_dwp_col(pr, blk, 2 * j + 2 * k)), wr[k], a0);
              a1 = UTVM_DWP_SMLAD(utvm_dwp_ld(utvm_dwp_col(pr, blk, 2 * j + 2 * k + 2)), wr[k], a1);
            }
            if (odd) {
              a0 = UTVM_DWP_SMLABT(utvm_dwp_ld(utvm_dwp_col(pr, blk, 2 * j + 2 * mh)), wr[sg], a0);
              a1 = UTVM_DWP_SMLABT(utvm_dwp_ld(utvm_dwp_col(pr, blk, 2 * j + 2 * mh + 2)), wr[sg], a1);
            }
          }
        }
        yr[j * ycs] = (int8_t)utvm_dwp_rq(a0, m, r0, e, flags, lo, hi);
        yr[(j + 1) * ycs] = (int8_t)utvm_dwp_rq(a1, m, r0, e, flags, lo, hi);
      }
    }
    for (; j < ow; ++j) {
      int32_t a0 = b2;
      UTVM_DWP_UNROLL for (r = 0; r < kh; ++r) {
        const int16_t* pr = row + r * rstep;
        const int32_t* wr = wv + r * rw;
        UTVM_DWP_UNROLL for (k = 0; k < mh; ++k)
          a0 = UTVM_DWP_SMLAD(utvm_dwp_ld(utvm_dwp_col(pr, blk, j * sw + 2 * k)), wr[k], a0);
        if (odd) a0 = UTVM_DWP_SMLABT(utvm_dwp_ld(utvm_dwp_col(pr, blk, j * sw + 2 * mh)), wr[sg], a0);
      }
      yr[j * ycs] = (int8_t)utvm_dwp_rq(a0, m, r0, e, flags, lo, hi);
    }
  }
}

#if defined(__ARM_FEATURE_SIMD32) && __ARM_FEATURE_SIMD32 && defined(__OPTIMIZE__)
/* the halfwords of p clamped to those of lo2 and hi2 (SSUB16 sets GE, SEL picks), the constant
 * made in the statement (one MOV or MVN of 0x00XY00XY): held in a register across the layer it
 * leaves the conversion's assembly too few */
UTVM_DWP_AI int32_t utvm_dwp_max16(int32_t p, int32_t lo2) {
  int32_t d, t;
  __asm__("mov %1, %3\n\tssub16 %0, %2, %1\n\tsel %0, %2, %1" : "=&r"(d), "=&r"(t) : "r"(p), "i"(lo2) : "cc");
  return d;
}
UTVM_DWP_AI int32_t utvm_dwp_min16(int32_t p, int32_t hi2) {
  int32_t d, t;
  __asm__("mov %1, %3\n\tssub16 %0, %1, %2\n\tsel %0, %2, %1" : "=&r"(d), "=&r"(t) : "r"(p), "i"(hi2) : "cc");
  return d;
}
#else
UTVM_DWP_AI int32_t utvm_dwp_max16(int32_t p, int32_t lo2) {
  const int32_t a = (int16_t)(uint16_t)(uint32_t)p, b = p >> 16, l = (int16_t)(uint16_t)(uint32_t)lo2;
  return utvm_dwp_pkhbt(a < l ? l : a, b < l ? l : b);
}
UTVM_DWP_AI int32_t utvm_dwp_min16(int32_t p, int32_t hi2) {
  const int32_t a = (int16_t)(uint16_t)(uint32_t)p, b = p >> 16, h = (int16_t)(uint16_t)(uint32_t)hi2;
  return utvm_dwp_pkhbt(a > h ? h : a, b > h ? h : b);
}
#endif

/* the int8 outputs of two scaled accumulators of one channel into y0, y1: own = 0 the layer's
 * shift es after SMMLA, own = 1 the channel's es after SMMLAR (UTVM_DWP_ROUND_NEG: + acc >> 31);
 * a clamp narrower than int8's on both at once, as int16 pairs (SSUB16 and SEL) */
UTVM_DWP_AI void utvm_dwp_rq2(int8_t* y0, int8_t* y1, int32_t a0, int32_t a1, int32_t m, int32_t r, int32_t own,
                              int32_t es, int32_t flags, int32_t lo, int32_t hi) {
  int32_t t0 = own ? utvm_dwp_smmlar(a0, m, r) : utvm_dwp_smmla(a0, m, r);
  int32_t t1 = own ? utvm_dwp_smmlar(a1, m, r) : utvm_dwp_smmla(a1, m, r);
  if (flags & UTVM_DWP_ROUND_NEG) {
    t0 += a0 >> 31;
    t1 += a1 >> 31;
  }
  t0 = utvm_sat_s8(t0 >> es);
  t1 = utvm_sat_s8(t1 >> es);
  if (lo > -128 || hi < 127) {
    int32_t p = utvm_dwp_pkhbt(t0, t1);
    if (lo > -128) p = utvm_dwp_max16(p, (int32_t)(((uint32_t)lo & 0xFFFFu) * 0x10001u));
    if (hi < 127) p = utvm_dwp_min16(p, (int32_t)(((uint32_t)hi & 0xFFFFu) * 0x10001u));
    *y0 = (int8_t)p;
    *y1 = (int8_t)(p >> 16);
    return;
  }
  *y0 = (int8_t)t0;
  *y1 = (int8_t)t1;
}

/* one output as utvm_dwp_rq2 */
UTVM_DWP_AI int32_t utvm_dwp_rq1(int32_t a0, int32_t m, int32_t r, int32_t own, int32_t es, int32_t flags,
                                 int32_t lo, int32_t hi) {
  int32_t t = own ? utvm_dwp_smmlar(a0, m, r) : utvm_dwp_smmla(a0, m, r);
  if (flags & UTVM_DWP_ROUND_NEG) t += a0 >> 31;
  t = utvm_sat_s8(t >> es);
  if (lo > -128) t = t < lo ? lo : t;
  if (hi < 127) t = t > hi ? hi : t;
  return t;
}

/* utvm_dwp_chan_c for strides 1 and 2 with the form of the requantization known (own, es: see
 * utvm_dwp_rq2), so that the loops hold no test of it */
UTVM_DWP_AI void utvm_dwp_chan_g(int8_t* yo, const int16_t* pl, const int32_t* wv, int32_t b2, int32_t m,
                                 int32_t r0, int32_t own, int32_t es, int32_t nb, int32_t ow, int32_t yrs,
                                 int32_t ycs, int32_t kh, int32_t kw, int32_t sh, int32_t sw, int32_t dh, int32_t rs,
                                 int32_t flags, int32_t lo, int32_t hi, int32_t blk) {
  const int32_t mh = kw / 2, odd = kw & 1;
  const int32_t rw = sw == 1 ? (kw > 1 ? kw - 1 : 1) : (kw + 1) / 2; /* words per kernel row */
  const int32_t sg = sw == 1 ? (kw > 1 ? 2 * mh - 1 : 0) : mh;       /* the word of the last odd tap */
  const int32_t rstep = 4 * rs * dh;
  /* the pair words from p (the step's first): stride 1 at p + 2 k, stride 2 pair t at p + 2 t,
   * blk: at p + 16 (t / 2) + 2 (t % 2) (p moves by a block a step) */
#define UTVM_DWP_AT(t) (sw == 1 ? 2 * (t) : blk ? 16 * ((t) >> 1) + 2 * ((t) & 1) : 2 * (t))
  const int32_t pstep = sw == 1 ? 2 : blk ? 16 : 4;
  /* the two outputs of the pair step at P into A0, A1 */
#define UTVM_DWP_PAIR(P, A0, A1)                                              \
  do {                                                                        \
    (A0) = b2;                                                                \
    (A1) = b2;                                                                \
      UTVM_DWP_UNROLL for (r = 0; r < kh; ++r) { \
        const int32_t* wr = wv + r * rw; \
        const int16_t* pr = (P) + r * rstep; \
        if (sw == 1) { \
          if (kw == 1) { \
            const int32_t v = utvm_dwp_ld(pr); \
            (A0) = UTVM_DWP_SMLABT(v, wr[0], (A0)); \
            (A1) = UTVM_DWP_SMLATB(v, wr[0], (A1)); \
            continue; \
          } \
          (A1) = UTVM_DWP_SMLATB(utvm_dwp_ld(pr), wr[0], (A1)); \
          UTVM_DWP_UNROLL for (k = 0; k < mh; ++k) (A0) = UTVM_DWP_SMLAD(utvm_dwp_ld(pr + 2 * k), wr[k], (A0)); \
          UTVM_DWP_UNROLL for (k = 1; k < mh + odd; ++k) \
            (A1) = UTVM_DWP_SMLAD(utvm_dwp_ld(pr + 2 * k), wr[mh + k - 1], (A1)); \
          if (odd) (A0) = UTVM_DWP_SMLABT(utvm_dwp_ld(pr + 2 * mh), wr[sg], (A0)); \
          if (!odd) (A1) = UTVM_DWP_SMLABT(utvm_dwp_ld(pr + 2 * mh), wr[mh - 1], (A1)); \
        } else { \
          UTVM_DWP_UNROLL for (k = 0; k < mh; ++k) { \
            (A0) = UTVM_DWP_SMLAD(utvm_dwp_ld(pr + UTVM_DWP_AT(k)), wr[k], (A0)); \
            (A1) = UTVM_DWP_SMLAD(utvm_dwp_ld(pr + UTVM_DWP_AT(k + 1)), wr[k], (A1)); \
          } \
          if (odd) { \
            (A0) = UTVM_DWP_SMLABT(utvm_dwp_ld(pr + UTVM_DWP_AT(mh)), wr[sg], (A0)); \
            (A1) = UTVM_DWP_SMLABT(utvm_dwp_ld(pr + UTVM_DWP_AT(mh + 1)), wr[sg], (A1)); \
          } \
        } \
      } \
  } while (0)
  const int32_t quad = kh > 1 || kw <= 3 || (sw == 2 && kw <= 5);
  int32_t i, j, r, k;
  for (i = 0; i < nb; ++i) {
    const int16_t* p = pl + 4 * rs * sh * i;
    int8_t* yp = yo + i * yrs;
    /* steps of four outputs (two pairs: the loads they share read once; not on the 1-D rows of
     * five taps or more, where GCC then spills: 1x9 2.3 -> 2.4, 1x15 1.8 -> 2.0 instructions per
     * MAC, 5x5 1.7 -> 1.5), then of two */
    for (j = 0; quad && j + 3 < ow; j += 4, p += 2 * pstep, yp += 4 * ycs) {
      int32_t a0, a1, a2, a3;
      UTVM_DWP_PAIR(p, a0, a1);
      UTVM_DWP_PAIR(p + pstep, a2, a3);
      utvm_dwp_rq2(yp, yp + ycs, a0, a1, m, r0, own, es, flags, lo, hi);
      utvm_dwp_rq2(yp + 2 * ycs, yp + 3 * ycs, a2, a3, m, r0, own, es, flags, lo, hi);
    }
    for (; j + 1 < ow; j += 2, p += pstep, yp += 2 * ycs) {
      int32_t a0, a1;
      UTVM_DWP_PAIR(p, a0, a1);
      utvm_dwp_rq2(yp, yp + ycs, a0, a1, m, r0, own, es, flags, lo, hi);
    }
    if (ow & 1) { /* p at the last output's first pair (stride 1: its first value) */
      int32_t a0 = b2;
      UTVM_DWP_UNROLL for (r = 0; r < kh; ++r) {
        const int16_t* pr = p + r * rstep;
        const int32_t* wr = wv + r * rw;
        if (sw == 1 && kw == 1) {
          a0 = UTVM_DWP_SMLABT(utvm_dwp_ld(pr), wr[0], a0);
          continue;
        }
        UTVM_DWP_UNROLL for (k = 0; k < mh; ++k) a0 = UTVM_DWP_SMLAD(utvm_dwp_ld(pr + UTVM_DWP_AT(k)), wr[k], a0);
        if (odd) a0 = UTVM_DWP_SMLABT(utvm_dwp_ld(pr + UTVM_DWP_AT(mh)), wr[sg], a0);
      }
      *yp = (int8_t)utvm_dwp_rq1(a0, m, r0, own, es, flags, lo, hi);
    }
  }
#undef UTVM_DWP_AT
#undef UTVM_DWP_PAIR
}

/* the outputs of one channel at stride 1 or 2 (utvm_dwp_chan_g by the form of its shift) */
UTVM_DWP_AI void utvm_dwp_chan_f(int8_t* yo, const int16_t* pl, const int32_t* wv, const int32_t* q, int32_t r0,
                                 int32_t nb, int32_t ow, int32_t yrs, int32_t ycs, int32_t kh, int32_t kw, int32_t sh,
                                 int32_t sw, int32_t dh, int32_t rs, int32_t flags, int32_t lo, int32_t hi,
                                 int32_t blk, int32_t shift) {
  const int32_t e = (int8_t)(uint8_t)(uint32_t)q[2];
  if (shift > 0 && ((flags & UTVM_DWP_MIXED) == 0 || e < 0))
    utvm_dwp_chan_g(yo, pl, wv, q[0], q[1], r0, 0, shift, nb, ow, yrs, ycs, kh, kw, sh, sw, dh, rs, flags, lo, hi,
                    blk);
  else
    utvm_dwp_chan_g(yo, pl, wv, q[0], q[1], r0, 1, e, nb, ow, yrs, ycs, kh, kw, sh, sw, dh, rs, flags, lo, hi, blk);
}

/* the layer (see above); returns 0 */
UTVM_DWP_AI int32_t utvm_dwp_s8(void* yv, void* xv, void* scv, void* wtv, void* qv, int32_t h, int32_t w,
                                int32_t cin, int32_t mult, int32_t oh, int32_t ow, int32_t xrs, int32_t xcs,
                                int32_t yrs, int32_t ycs, int32_t kh, int32_t kw, int32_t sh, int32_t sw, int32_t dh,
                                int32_t top, int32_t left, int32_t zx, int32_t band, int32_t rs, int32_t flags,
                                int32_t lo, int32_t hi, int32_t shift) {
  int8_t* y = (int8_t*)yv;
  const int8_t* x = (const int8_t*)xv;
  int16_t* sc = (int16_t*)scv;
  const int8_t* wt = (const int8_t*)wtv;
  const int32_t* q = (const int32_t*)qv;
  const int32_t qw = flags & UTVM_DWP_PACKED ? 2 : 3; /* words per channel */
  const int32_t* ct = q + qw * cin * mult;             /* packed: the table of third words */
  const int32_t* rt = ct + (qw == 2 ? (flags >> 16) & 0xFF : 0); /* the r values */
  const int32_t imask = (int32_t)((1u << ((flags >> 8) & 0xFF)) - 1u); /* packed: the index bits */
  const int32_t tapw = kh * kw;
  int32_t wv[UTVM_DWP_MAXW];
  const int32_t span = (kh - 1) * dh + 1, rows = (band - 1) * sh + span;
  const int32_t zw = (int32_t)(((uint32_t)zx & 0xFFu) * 0x01010101u);
  const int32_t dataend = ((left + w + 1) / 2) * 2; /* first column of the padding-only pairs */
  /* stride 2: the planes in blocks (see utvm_dwp_col) where the data starts at a block */
  const int32_t blk = sw == 2 && (left & 3) == 0 && (rs & 3) == 0;
  int32_t g0, i0, r, gi, mm;
#ifdef UTVM_DWP_ASM
  /* every channel in utvm_dwp3_asm (ycs: STRB's offsets; stride 2's steps of four store at 3 ycs) */
  const int32_t asm3 = kh == 3 && kw == 3 && sw <= 2 && 16 * rs * dh <= 1020 && 8 * rs * sh <= 4095 &&
                       (sw == 1 ? ycs <= 2047 : 3 * ycs <= 4095);
  utvm_dwp_loop_t k;
  k.steps[0] = 8 * rs * sh - (sw == 1 ? 4 : blk ? 32 : 4 * sw) * (ow / 2);
  k.steps[1] = yrs - ow * ycs;
  k.ny = (ow / 8) * 8 * ycs; /* the rows of more than six steps loop over four at a time */
#endif
  /* the pairs of padding only, once */
  utvm_dwp_fill(sc, rs, blk, 4, rows, 0, (left / 2) * 2, zx);
  utvm_dwp_fill(sc, rs, blk, 4, rows, dataend, rs, zx);
  if (band >= oh) { /* the rows of padding, once */
    for (r = 0; r < rows; ++r)
      if (r < top || r - top >= h) utvm_dwp_fill(sc + 4 * rs * r, rs, blk, 4, 1, 0, rs, zx);
  }
  for (g0 = 0; g0 < cin; g0 += 4) {
    const int32_t gc = cin - g0 < 4 ? cin - g0 : 4;
    for (i0 = 0; i0 < oh; i0 += band) {
      const int32_t nb = oh - i0 < band ? oh - i0 : band, nr = (nb - 1) * sh + span;
      /* scratch rows [r0, r1) hold input rows, the others padding */
      const int32_t r0 = top > i0 * sh ? top - i0 * sh : 0, r1 = h + top - i0 * sh < nr ? h + top - i0 * sh : nr;
      const int8_t* px = x + (i0 * sh + r0 - top) * xrs + g0;
      int16_t* dst = sc + 4 * rs * r0;
      if (band < oh)
        for (r = 0; r < nr; ++r)
          if (r < r0 || r >= r1) utvm_dwp_fill(sc + 4 * rs * r, rs, blk, gc, 1, 0, rs, zx);
#ifdef UTVM_DWP_ASM
      if (blk) {
        const int32_t k1 = (left + w) / 2 - left / 2, steps = k1 / 2, two = k1 & 1, tail = (left + w) & 1;
        const int32_t xend = xrs - xcs * (4 * steps + 2 * two), dadv = 8 * rs - (32 * steps + 4 * two + 4 * tail);
        if (gc == 4 && xcs < 1024 && steps <= 16 && xend < 4096 && xend > -4096 && dadv >= 0 && dadv < 4096) {
          if (r1 > r0)
            utvm_dwp_rows4b(dst + 16 * (left / 4), px, r1 - r0, xcs, zw, steps, two, tail, xend, dadv, asm3);
          r = r1; /* done */
        } else {
          r = r0;
        }
      } else {
        /* the pieces of utvm_dwp_row4: a first pair (zero point, x_0), steps of four columns, a
         * pair of two, a last pair (x_w-1, zero point) */
        const int32_t lodd = left & 1, k1 = (left + w) / 2 - left / 2 - lodd, steps = k1 / 2, two = k1 & 1;
        const int32_t tail = (left + w) & 1, pairs = lodd + 2 * steps + two + tail, dadv = 8 * rs - 4 * pairs;
        /* px moves by its post-indexed loads (xcs < 256), else only by the loop of steps */
        const int32_t moved = xcs < 256 ? lodd + 4 * steps + 2 * two : (steps > 1 ? lodd + 4 * steps : 0);
        const int32_t xend = xrs - xcs * moved;
        if (gc == 4 && xcs < 1024 && 3 * rs <= 506 && xend < 4096 && xend > -4096 && dadv >= 0 &&
            dadv < 4096) {
          if (r1 > r0)
            utvm_dwp_rows4(dst, rs, px, r1 - r0, xcs, left, zw, lodd, steps, two, tail, xend, dadv);
          r = r1; /* done */
        } else {
          r = r0;
        }
      }
#else
      r = r0;
#endif
      for (; r < r1; ++r, px += xrs, dst += 4 * rs) {
        if (gc == 4) {
          utvm_dwp_row4(dst, rs, px, w, xcs, left, zw, blk);
        } else {
          int32_t g, c;
          for (g = 0; g < gc; ++g)
            for (c = (left / 2) * 2; c < dataend; ++c)
              *(int16_t*)(uintptr_t)utvm_dwp_col(dst + (blk ? 4 * g : g * rs), blk, c) = (int16_t)(c < left || c >= left + w ? zx : px[(c - left) * xcs + g]);
        }
      }
      {
        /* output channel o = (g0 + gi) mult + mm: its plane, q, weights and outputs */
        const int16_t* pl = sc;
        const int32_t* qp = q + qw * g0 * mult;
        const int8_t* tc = wt + g0 * mult * tapw;
        const int32_t* wo = wv;
        int8_t* yo = y + i0 * yrs + g0 * mult;
        for (gi = 0; gi < gc; ++gi, pl += blk ? 4 : rs)
          for (mm = 0; mm < mult; ++mm, qp += qw, tc += tapw, ++yo) {
            /* packed: the third word from the first's index bits */
            const int32_t qe = qw == 2 ? ct[qp[0] & imask] : qp[2], r0 = rt[(qe >> 16) & 0xFF];
            int32_t qd[3];
            const int32_t* qo = qp;
            utvm_dwp_widen(wv, tc, (qe >> 8) & 0xFF, kh, kw, sw);
#ifdef UTVM_DWP_ASM
            if (asm3) {
              /* packed: the bias from the first word (the assembly reads m at qp + 1) */
              const int32_t b = qp[0] & ~imask;
              if (shift > 0 && ((flags & UTVM_DWP_MIXED) == 0 || (qe & 0x80)))
                utvm_dwp3_asm(&pl, &yo, wo, qp, qw == 2, b, qe, r0, &k, nb, band >= oh, ow, sw, 8 * rs * dh, 8 * rs * sh, yrs, ycs,
                              shift, blk, lo, hi, flags & UTVM_DWP_ROUND_NEG);
              else
                utvm_dwp3_asm(&pl, &yo, wo, qp, qw == 2, b, qe, r0, &k, nb, band >= oh, ow, sw, 8 * rs * dh, 8 * rs * sh, yrs, ycs, 0,
                              blk, lo, hi, flags & UTVM_DWP_ROUND_NEG);
              continue;
            }
#endif
            if (qw == 2) { /* the three words of the channel */
              qd[0] = qp[0] & ~imask;
              qd[1] = qp[1];
              qd[2] = qe;
              qo = qd;
            }
            if (sw <= 2)
              utvm_dwp_chan_f(yo, pl, wo, qo, r0, nb, ow, yrs, ycs, kh, kw, sh, sw, dh, rs, flags, lo, hi, blk,
                              shift);
            else
              utvm_dwp_chan_c(yo, pl, wo, qo, r0, nb, ow, yrs, ycs, kh, kw, sh, sw, dh, rs, flags, lo, hi, blk);
          }
      }
    }
  }
  return 0;
}

#endif /* UTVM_KERNELS_DEPTHWISE_DSP_H_ */
