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

from utvm.lower import fixedpoint as fp
from utvm.lower.kernels import _rounding_divide_by_pot_small, packed_lanes

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
    e = (int32_t)(next() % 400u) - 200;
    if (utvm_sat_s8(e) != (e < -128 ? -128 : (e > 127 ? 127 : e))) bad |= 8;
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
