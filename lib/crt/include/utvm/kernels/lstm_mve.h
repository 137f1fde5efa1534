/* utvm/kernels/lstm_mve.h: moved from kernels_mve.h by the split of issue 24 (one header per
 * operator family and instruction set, the bodies unchanged). */
#ifndef UTVM_KERNELS_LSTM_MVE_H_
#define UTVM_KERNELS_LSTM_MVE_H_

#include "common_mve.h"
#include "requant_mve.h"
#include "gemm_mve.h"


/* TFLite Micro's integer LSTM (utvm/ops/lstm.py), four units at a time:
 *
 * - utvm_mve_lstm_gate4(out, rec, in, mr, sr, mi, si, table, tanh): units u .. u + 3 of one gate,
 *   out[j] = act(sat16(sat16(MBQM(rec[j], mr, sr)) + sat16(MBQM(in[j], mi, si)))) (rec, in: the
 *   recurrent and input FC sums with their biases; MultiplyByQuantizedMultiplier as
 *   utvm_mve_rq_apply4 does it), act the Q0.15 sigmoid (tanh: nonzero) of 3x.
 * - utvm_mve_lstm_update4(gi, gf, gg, go, c, h, y, ...): the cell state c = clamp(sat16(
 *   sat16(MBQM(f * c, m_fc, s_fc)) + sat16(MBQM(i * g, m_ig, s_ig))), c_lo, c_hi) (the cell clip),
 *   then h = y = clamp(MBQM(o * tanh(c scaled by t_shift), m_h, s_h) + zh, -128, 127).
 *
 * The activations: TFLite's table (int16 values minus 32768, utvm/lower/activation16.py), the
 * entry of |v| >> 9 (tanh: >> 8) interpolated towards the next by the low bits, saturated past the
 * table, the sign folded in. Helium: four lanes, the table entries by gathers; elsewhere plain C. */
static inline int32_t utvm_mve_sigtanh1(int32_t v, const int16_t* table, int32_t tanh) {
  int32_t bits = tanh ? 8 : 9, m = v >> 31, a = (v ^ m) - m, uh = a >> bits;
  int32_t idx = uh < 254 ? uh : 254, ua = table[idx], ub = table[idx + 1];
  int32_t r = ((ua + 32768) << bits) + (a & ((1 << bits) - 1)) * (ub - ua);
  if (uh >= 255) r = tanh ? 0xFFFF << 8 : 0x7FFF << 10;
  if (tanh) return (((r - (1 << 23)) ^ m) + (1 << 7)) >> 8;
  return ((r ^ m) + (1 << 9) + (m & (1 << 25))) >> 10;
}

/* v * 3 << t (t >= 0), or (3v + 2**(-t-1)) >> -t: the table's input (activation16.scaled_input) */
static inline int32_t utvm_mve_scaled1(int32_t v, int32_t t) {
  return t >= 0 ? v * (3 << t) : (v * 3 + (1 << (-t - 1))) >> -t;
}

static inline int32_t utvm_mve_clamp1(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

#ifdef UTVM_MVE_VECTOR
UTVM_INLINE int32x4_t utvm_mve_sigtanh4(int32x4_t v, const int16_t* table,
                                                                         int32_t tanh) {
  int32_t bits = tanh ? 8 : 9;
  int32x4_t m = vshrq_n_s32(v, 31);
  int32x4_t a = vabsq_s32(v);
  int32x4_t uh = vshlq_s32(a, vdupq_n_s32(-bits));
  uint32x4_t idx = vreinterpretq_u32_s32(vminq_s32(uh, vdupq_n_s32(254)));
  int32x4_t ua = vldrhq_gather_shifted_offset_s32(table, idx);
  int32x4_t ub = vldrhq_gather_shifted_offset_s32(table, vaddq_n_u32(idx, 1));
  int32x4_t r = vaddq_s32(vshlq_s32(vaddq_n_s32(ua, 32768), vdupq_n_s32(bits)),
                          vmulq_s32(vandq_s32(a, vdupq_n_s32((1 << bits) - 1)), vsubq_s32(ub, ua)));
  r = vpselq_s32(vdupq_n_s32(tanh ? 0xFFFF << 8 : 0x7FFF << 10), r, vcmpgtq_n_s32(uh, 254));
  if (tanh) return vshrq_n_s32(vaddq_n_s32(veorq_s32(vsubq_n_s32(r, 1 << 23), m), 1 << 7), 8);
  return vshrq_n_s32(vaddq_s32(vaddq_n_s32(veorq_s32(r, m), 1 << 9), vandq_s32(m, vdupq_n_s32(1 << 25))), 10);
}

/* MBQM(v, m, s) + zy clamped to [lo, hi], four lanes (utvm_mve_rq_apply4 with one multiplier) */
UTVM_INLINE int32x4_t utvm_mve_scale4(int32x4_t v, int32_t m, int32_t s, int32_t zy,
                                                                       int32_t lo, int32_t hi) {
  utvm_mve_rq_t q = {0, 0, 0, m, s, s > 0 ? UTVM_MVE_RQ_LEFT : 0, zy, lo, hi};
  return utvm_mve_rq_apply4(&q, v, vdupq_n_s32(m), vdupq_n_s32(s));
}
#endif

UTVM_INLINE int32_t utvm_mve_lstm_gate4(int16_t* out, int32_t* rec, int32_t* in,
                                                                         int32_t mr, int32_t sr, int32_t mi,
                                                                         int32_t si, int16_t* table, int32_t tanh) {
#ifdef UTVM_MVE_VECTOR
  int32x4_t g = vaddq_s32(utvm_mve_scale4(vldrwq_s32(rec), mr, sr, 0, -32768, 32767),
                          utvm_mve_scale4(vldrwq_s32(in), mi, si, 0, -32768, 32767));
  g = vminq_s32(vmaxq_s32(g, vdupq_n_s32(-32768)), vdupq_n_s32(32767));
  vstrhq_s32(out, utvm_mve_sigtanh4(vmulq_n_s32(g, 3), table, tanh));
#else
  for (int32_t j = 0; j < 4; ++j) {
    int32_t g = utvm_mve_clamp1(utvm_mve_mbqm(rec[j], mr, sr), -32768, 32767) +
                utvm_mve_clamp1(utvm_mve_mbqm(in[j], mi, si), -32768, 32767);
    out[j] = (int16_t)utvm_mve_sigtanh1(3 * utvm_mve_clamp1(g, -32768, 32767), table, tanh);
  }
#endif
  return 0;
}

UTVM_INLINE int32_t utvm_mve_lstm_update4(
    int16_t* gi, int16_t* gf, int16_t* gg, int16_t* go, int16_t* c, int8_t* h, int8_t* y, int32_t m_fc, int32_t s_fc,
    int32_t m_ig, int32_t s_ig, int32_t c_lo, int32_t c_hi, int32_t t_shift, int32_t m_h, int32_t s_h, int32_t zh,
    int16_t* table) {
#ifdef UTVM_MVE_VECTOR
  int32x4_t fc = utvm_mve_scale4(vmulq_s32(vldrhq_s32(gf), vldrhq_s32(c)), m_fc, s_fc, 0, -32768, 32767);
  int32x4_t ig = utvm_mve_scale4(vmulq_s32(vldrhq_s32(gi), vldrhq_s32(gg)), m_ig, s_ig, 0, -32768, 32767);
  int32x4_t cn = vminq_s32(vmaxq_s32(vaddq_s32(fc, ig), vdupq_n_s32(c_lo)), vdupq_n_s32(c_hi));
  vstrhq_s32(c, cn);
  int32x4_t v = t_shift >= 0 ? vmulq_n_s32(cn, 3 << t_shift)
                             : vshlq_s32(vaddq_n_s32(vmulq_n_s32(cn, 3), 1 << (-t_shift - 1)), vdupq_n_s32(t_shift));
  int32x4_t hv = utvm_mve_scale4(vmulq_s32(vldrhq_s32(go), utvm_mve_sigtanh4(v, table, 1)), m_h, s_h, zh, -128, 127);
  vstrbq_s32(h, hv);
  vstrbq_s32(y, hv);
#else
  for (int32_t j = 0; j < 4; ++j) {
    int32_t fc = utvm_mve_clamp1(utvm_mve_mbqm(gf[j] * c[j], m_fc, s_fc), -32768, 32767);
    int32_t ig = utvm_mve_clamp1(utvm_mve_mbqm(gi[j] * gg[j], m_ig, s_ig), -32768, 32767);
    int32_t cn = utvm_mve_clamp1(utvm_mve_clamp1(fc + ig, -32768, 32767), c_lo, c_hi);
    c[j] = (int16_t)cn;
    int32_t t = utvm_mve_sigtanh1(utvm_mve_scaled1(cn, t_shift), table, 1);
    h[j] = y[j] = (int8_t)utvm_mve_clamp1(utvm_mve_mbqm(go[j] * t, m_h, s_h) + zh, -128, 127);
  }
#endif
  return 0;
}

static inline int32_t utvm_mve_matvec_s8(int8_t* out, int8_t* x, int8_t* w, int32_t k, int32_t n, int32_t* bias,
                                         int32_t m0, int32_t s0, int32_t mode, int32_t zy) {
  utvm_mve_rq_t q = {bias, bias, (const int8_t*)bias, m0, s0, mode, zy, -128, 127};
  utvm_mve_gemm_impl(out, 1, n, x, k, w, k, n, q);
  return 0;
}

#endif /* UTVM_KERNELS_LSTM_MVE_H_ */
