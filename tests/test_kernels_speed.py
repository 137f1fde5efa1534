"""The fast int8 kernel helpers: utvm/kernels.h against plain formulas, and the cheaper
requantization of kernels.py against the fixed-point references."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import tvm
from tvm import tirx

from utvm.kernels import fixedpoint as fp
from utvm.kernels.requant import rounding_divide_by_pot_small as _rounding_divide_by_pot_small
from utvm.kernels.schedules import interleave_rows as _interleave_rows
from utvm.kernels.schedules import widen_words
from utvm.kernels.target import packed_lanes
from utvm.ops.conv2d import _flat_row_index, _flat_row_weights
from utvm.ops.depthwise_conv2d import _dw4_weight_order

INCLUDE = Path(__file__).resolve().parents[1] / "lib" / "crt" / "include"

# a host program checking every helper of utvm/kernels.h against plain C on pseudo-random data
CHECK_C = r"""
#include <stdio.h>
#include "utvm/kernels.h"

static uint32_t state = 12345u;
static uint32_t next(void) { state = state * 1664525u + 1013904223u; return state; }

static int32_t lane(int32_t w, int k) { return (int32_t)(int8_t)(uint8_t)((uint32_t)w >> (8 * k)); }

int main(void) {
  int i, k, bad = 0;
  for (i = 0; i < 100000; ++i) {
    int32_t a[4], b[4], acc = (int32_t)(next() >> 8) - (1 << 23), ref = acc, ref4, m, x, e;
    int64_t p;
    for (k = 0; k < 4; ++k) { a[k] = (int32_t)next(); b[k] = (int32_t)next(); }
    ref4 = acc;
    for (k = 0; k < 4; ++k) ref4 += lane(a[0], k) * lane(b[0], k);
    if (utvm_dot4_acc_s8(acc, a[0], b[0]) != ref4) bad |= 1;
    if (utvm_dot4_s8(a[0], b[0]) != ref4 - acc) bad |= 1;
    for (k = 0; k < 16; ++k) ref += lane(a[k / 4], k % 4) * lane(b[k / 4], k % 4);
    if (utvm_dot16_acc_s8(acc, a, b) != ref) bad |= 2;
    /* SaturatingRoundingDoublingHighMul as gemmlowp writes it, for |x| < 2**30 */
    x = (int32_t)(next() >> 1) - (1 << 30);
    m = (int32_t)(next() >> 1);
    if (i & 1) m = -m;
    p = (int64_t)x * m;
    p = (p + (p >= 0 ? (1 << 30) : (1 - (1 << 30)))) / ((int64_t)1 << 31);
    if (utvm_srdhm_small(x, m) != (int32_t)p) bad |= 4;
    /* the doubled multiplier form, 2**30 <= m < 2**31 */
    m = (int32_t)(next() >> 1) | 0x40000000;
    p = (int64_t)x * m;
    p = (p + (p >= 0 ? (1 << 30) : (1 - (1 << 30)))) / ((int64_t)1 << 31);
    if (utvm_srdhm2_small(x, (int32_t)((uint32_t)m * 2u)) != (int32_t)p) bad |= 4;
    e = (int32_t)(next() % 400u) - 200;
    if (utvm_sat_s8(e) != (e < -128 ? -128 : (e > 127 ? 127 : e))) bad |= 8;
    {
      /* utvm_mac4_s8 / utvm_mac4_pad_s8: n words against four interleaved weight rows */
      int32_t xs[5], ws[20], z[5], got[4], gotp[4], want[4], wantz[4], c, n = 1 + (int)(next() % 5u);
      for (k = 0; k < 5; ++k) { xs[k] = (int32_t)next(); z[k] = (int32_t)next(); }
      for (k = 0; k < 20; ++k) ws[k] = (int32_t)next();
      for (c = 0; c < 4; ++c) {
        got[c] = gotp[c] = want[c] = wantz[c] = (int32_t)(next() >> 12);
        for (k = 0; k < n; ++k) {
          int l;
          for (l = 0; l < 4; ++l) {
            want[c] += lane(xs[k], l) * lane(ws[4 * k + c], l);
            wantz[c] += lane(z[k], l) * lane(ws[4 * k + c], l);
          }
        }
      }
      utvm_mac4_s8(got, xs, ws, n);
      utvm_mac4_pad_s8(gotp, 0, xs, z, ws, n);
      for (c = 0; c < 4; ++c) if (got[c] != want[c] || gotp[c] != wantz[c]) bad |= 16;
    }
    {
      /* depthwise pairs and single taps, four channels per word */
      int32_t xa = (int32_t)next(), xb = (int32_t)next(), wv[2], w1, r1[4], r2[4], r3[4], r4[4], c;
      int8_t* wp = (int8_t*)wv;
      wv[0] = (int32_t)next();
      wv[1] = (int32_t)next();
      w1 = (int32_t)next();
      for (c = 0; c < 4; ++c) r1[c] = r2[c] = r3[c] = r4[c] = (int32_t)(next() >> 12);
      utvm_dw4_pair_s8(r1, xa, xb, wp);
      utvm_dw4_pair_at_s8(r2, &xa, &xb, wp);
      utvm_dw4_tap_s8(r3, xa, (int8_t*)&w1);
      utvm_dw4_tap_at_s8(r4, &xa, (int8_t*)&w1);
      for (c = 0; c < 4; ++c) {
        /* pair weights: (a0, a1, b0, b1), (a2, a3, b2, b3) */
        int32_t wa = wp[4 * (c / 2) + c % 2], wb = wp[4 * (c / 2) + 2 + c % 2];
        int32_t start = r1[c] - lane(xa, c) * wa - lane(xb, c) * wb;
        if (r2[c] != r1[c]) bad |= 32;
        if (r3[c] != start + lane(xa, c) * lane(w1, c) || r4[c] != r3[c]) bad |= 32;
      }
    }
    {
      /* one word of four taps against four channels; unaligned reads */
      int8_t bytes[8];
      int32_t wv[4], r1[4], r2[4], want[4], c, off = (int32_t)(next() % 4u), xv;
      for (k = 0; k < 8; ++k) bytes[k] = (int8_t)next();
      for (k = 0; k < 4; ++k) wv[k] = (int32_t)next();
      xv = utvm_ldw_s8(bytes + off);
      for (k = 0; k < 4; ++k) if (lane(xv, k) != bytes[off + k]) bad |= 64;
      for (c = 0; c < 4; ++c) {
        r1[c] = r2[c] = want[c] = (int32_t)(next() >> 12);
        for (k = 0; k < 4; ++k) want[c] += bytes[off + k] * lane(wv[c], k);
      }
      utvm_mac4_word_s8(r1, xv, (int8_t*)wv);
      utvm_mac4_word_at_s8(r2, bytes + off, (int8_t*)wv);
      for (c = 0; c < 4; ++c) if (r1[c] != want[c] || r2[c] != want[c]) bad |= 64;
    }
    {
      /* flat rows: n words at any alignment against four interleaved rows; one byte against
         a word of four channel weights */
      int8_t bytes[24];
      int32_t ws[20], wl, got[4], want[4], c, l, off = (int32_t)(next() % 4u), n = 1 + (int)(next() % 5u);
      int32_t xv = (int32_t)(int8_t)next();
      for (k = 0; k < 24; ++k) bytes[k] = (int8_t)next();
      for (k = 0; k < 20; ++k) ws[k] = (int32_t)next();
      wl = (int32_t)next();
      for (c = 0; c < 4; ++c) {
        got[c] = want[c] = (int32_t)(next() >> 12);
        for (k = 0; k < n; ++k)
          for (l = 0; l < 4; ++l) want[c] += bytes[off + 4 * k + l] * lane(ws[4 * k + c], l);
        want[c] += xv * lane(wl, c);
      }
      utvm_mac4_u_s8(got, bytes + off, (int8_t*)ws, n);
      utvm_mac4_lane_s8(got, xv, (int8_t*)&wl);
      for (c = 0; c < 4; ++c) if (got[c] != want[c]) bad |= 128;
      /* the straight-line form for a word count known at compile time */
      for (c = 0; c < 4; ++c) got[c] = want[c];
      utvm_mac4_s8(got, ws, ws + 8, 2);
      for (c = 0; c < 4; ++c) {
        for (k = 0; k < 2; ++k)
          for (l = 0; l < 4; ++l) want[c] += lane(ws[k], l) * lane(ws[8 + 4 * k + c], l);
        if (got[c] != want[c]) bad |= 128;
      }
    }
    {
      /* utvm_mac4w_s8 / utvm_mac4w_pad_s8: the same rows widened to int16 pairs give the same sums */
      int32_t xs[5], z[5], ws[20], wide[40], a[4], b[4], c2[4], d[4], c, n = 1 + (int)(next() % 5u);
      for (k = 0; k < 5; ++k) { xs[k] = (int32_t)next(); z[k] = (int32_t)next(); }
      for (k = 0; k < 20; ++k) {
        ws[k] = (int32_t)next();
        wide[2 * k] = (int32_t)((uint32_t)(uint16_t)lane(ws[k], 0) | ((uint32_t)lane(ws[k], 2) << 16));
        wide[2 * k + 1] = (int32_t)((uint32_t)(uint16_t)lane(ws[k], 1) | ((uint32_t)lane(ws[k], 3) << 16));
      }
      for (c = 0; c < 4; ++c) a[c] = b[c] = c2[c] = d[c] = (int32_t)(next() >> 12);
      utvm_mac4_s8(a, xs, ws, n);
      utvm_mac4w_s8(b, xs, wide, n);
      utvm_mac4w_pad_s8(c2, 0, xs, z, wide, n);
      utvm_mac4_s8(d, z, ws, n);
      for (c = 0; c < 4; ++c) if (a[c] != b[c] || c2[c] != d[c]) bad |= 256;
      utvm_mac4_s8(a, xs, ws, 2);
      utvm_mac4w_s8(b, xs, wide, 2);
      for (c = 0; c < 4; ++c) if (a[c] != b[c]) bad |= 256;
      if (utvm_dot4w_s8(xs[0], wide[0], wide[1]) != utvm_dot4_s8(xs[0], ws[0])) bad |= 256;
      /* one word (a value, or four bytes at any alignment) against four channels */
      utvm_mac4_word_s8(a, xs[1], (int8_t*)ws);
      utvm_mac4w_word_s8(b, xs[1], wide);
      utvm_mac4_word_at_s8(c2, (int8_t*)xs + 1, (int8_t*)ws);
      utvm_mac4w_word_at_s8(d, (int8_t*)xs + 1, wide);
      for (c = 0; c < 4; ++c) if (a[c] != b[c] || c2[c] != d[c]) bad |= 256;
    }
  }
  printf("%d\n", bad);
  return bad;
}
"""


def test_kernels_header_host(tmp_path: Path) -> None:
    if not shutil.which("gcc"):
        pytest.skip("no host gcc")
    src = tmp_path / "check.c"
    src.write_text(CHECK_C)
    exe = tmp_path / "check"
    subprocess.run(["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{INCLUDE}", str(src), "-o",
                    str(exe)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout


@pytest.mark.parametrize("cpu", ["cortex-m4", "cortex-m55"])
def test_kernels_header_arm_compiles(tmp_path: Path, cpu: str) -> None:
    if not shutil.which("arm-none-eabi-gcc"):
        pytest.skip("arm-none-eabi-gcc is not installed")
    src = tmp_path / "check.c"
    src.write_text(CHECK_C.replace("#include <stdio.h>", "int printf(const char *, ...);"))
    flags = ["-mfloat-abi=hard", "-mfpu=auto"] if cpu == "cortex-m55" else []
    subprocess.run(["arm-none-eabi-gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", f"-mcpu={cpu}",
                    "-mthumb", *flags, f"-I{INCLUDE}", "-c", str(src), "-o", str(tmp_path / "check.o")],
                   check=True)


def test_packed_lanes() -> None:
    assert packed_lanes(None) == 4
    assert packed_lanes("cortex-m3") == 0
    assert packed_lanes("cortex-m4") == 4
    assert packed_lanes("cortex-m55") == 16


def _fold(expr: tvm.ir.Expr) -> int:
    """The value of an expression of constants (TVM folds them as it builds the expression)."""
    assert isinstance(expr, tirx.IntImm), expr
    return int(expr.value)


@pytest.mark.parametrize("positive", [False, True])
def test_rounding_divide_by_pot_small(positive: bool) -> None:
    rng = np.random.default_rng(7)
    xs = np.concatenate([rng.integers(-(1 << 30) + 1, 1 << 30, 300), [-3, -2, -1, 0, 1, 2, 3, -(1 << 29)]])
    for x in xs:
        for e in range(1 if positive else 0, 31, 3):
            want = int(fp.np_rounding_divide_by_pot(np.int64(x), np.int64(e)))
            as_expr = _rounding_divide_by_pot_small(tirx.const(int(x), "int32"), tirx.const(e, "int32"), positive)
            as_int = _rounding_divide_by_pot_small(tirx.const(int(x), "int32"), e)
            assert _fold(as_expr) == want, (x, e)
            assert _fold(as_int) == want, (x, e)


def test_requant_output_formula() -> None:
    """_Requant.output_s8: ((y >> (e - 1)) + 1 + 2 * zy) >> 1 with y = x - (x < 0) is
    RoundingDivideByPOT(x, e) + zy for e >= 1."""
    rng = np.random.default_rng(3)
    xs = np.concatenate([rng.integers(-(1 << 30) + 1, 1 << 30, 2000), np.arange(-70, 70)]).astype(np.int64)
    for e in range(1, 32):
        for zy in (-128, -5, 0, 17, 127):
            y = xs + (xs >> 31)
            got = ((y >> (e - 1)) + 1 + 2 * zy) >> 1
            want = fp.np_rounding_divide_by_pot(xs, np.int64(e)) + zy
            assert np.array_equal(got, want), (e, zy)


def test_dead_channel_requant() -> None:
    """A channel without weights is requantized from 4v with multiplier 2**30 and shift -1: v."""
    v = np.arange(-255, 256, dtype=np.int64)
    assert np.array_equal(fp.np_multiply_by_quantized_multiplier(4 * v, 1 << 30, -1), v)


def test_weight_orders() -> None:
    w = np.arange(8 * 3 * 3 * 8, dtype=np.int64).reshape(8, 3, 3, 8)
    r = _interleave_rows(w).reshape(2, 3, 3, 2, 4, 4)  # block, ry, rx, word, row, byte
    assert r[1, 2, 0, 1, 3, 2] == w[7, 2, 0, 6]
    assert sorted(_interleave_rows(w).reshape(-1)) == sorted(w.reshape(-1))
    for taps in (1, 2, 9, 25):
        pos = _dw4_weight_order(taps)
        assert sorted(pos.reshape(-1)) == list(range(4 * taps))


def test_flat_row_weights() -> None:
    """The weights of a convolution with three input channels, reordered for utvm_mac4_u_s8
    (whole words of a kernel row) and utvm_mac4_lane_s8 (its last bytes): the same bytes, each
    where _flat_row_index says."""
    rng = np.random.default_rng(5)
    for cout, kh, kw, cin in ((8, 3, 3, 3), (4, 2, 5, 3), (8, 3, 2, 2), (4, 1, 3, 6)):
        w = rng.integers(-128, 128, (cout, kh, kw, cin))
        r = _flat_row_weights(w)
        assert sorted(r) == sorted(w.reshape(-1))
        length = kw * cin
        for o in range(cout):
            for ry in range(kh):
                for p in range(length):
                    assert r[_fold(_flat_row_index(tirx.const(o, "int32"), ry, p, kh, length))] == \
                        w[o, ry, p // cin, p % cin]


@pytest.mark.parametrize("scales, zero_points, activation", [
    ((0.05, 0.08, 0.11), (-10, 6, -2), "NONE"),
    ((0.02, 0.02, 0.5), (127, -128, 0), "RELU"),        # output coarser than the inputs
    ((0.3, 0.001, 0.004), (0, 3, -128), "RELU6"),       # very different input scales
])
def test_int8_add_matches_tflite_micro(tmp_path: Path, scales, zero_points, activation) -> None:  # type: ignore[no-untyped-def]
    """The int8 ADD kernel (SMMULR form of the three requantizations) against TFLite Micro on
    random inputs covering the whole int8 range, on the host and on a Cortex-M4."""
    from tflite_builder import add_model
    from utvm.run.runner import run_model

    model = tmp_path / "add.tflite"
    model.write_bytes(add_model((1, 8, 8, 20), "int8", activation, scales, zero_points))
    boards = ["host"]
    if shutil.which("arm-none-eabi-gcc") and shutil.which("qemu-system-arm"):
        boards.append("mps2/an386")
    for board in boards:
        report = run_model(model, board)
        assert report.outputs_match_reference and report.max_abs_diff == 0, board


def test_widen_words_pairs_the_lanes_smlad_multiplies() -> None:
    """Each word (w0, w1, w2, w3) becomes the int16 pairs (w0, w2), (w1, w3), in order."""
    rng = np.random.default_rng(3)
    w = rng.integers(-128, 128, (8, 3, 12), dtype=np.int8)
    halves = widen_words(w).view("<i2").reshape(-1, 4)
    words = w.reshape(-1, 4).astype(np.int16)
    assert np.array_equal(halves, words[:, [0, 2, 1, 3]])
    x = rng.integers(-128, 128, words.shape).astype(np.int32)
    split = (x[:, [0, 2]] * halves[:, :2]).sum(axis=1) + (x[:, [1, 3]] * halves[:, 2:]).sum(axis=1)
    assert np.array_equal((x * words).sum(axis=1), split)
