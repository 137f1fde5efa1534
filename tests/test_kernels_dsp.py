"""The DSP GEMM kernels of utvm/kernels_dsp.h (the dsp_gemm variants of CONV_2D and
FULLY_CONNECTED on Cortex-M4/M7/M33) against a numpy reference of TFLite's arithmetic.

Seeded random layers (kernel sizes 1x1 to 10x4, strides 1-3, dilations, SAME/VALID padding,
input and output channels that are and are not multiples of 4, batch 1-2, fully connected
rows, zero points over the whole int8 range, per-channel and per-tensor scales over the range
of right shifts the kernels take, channels without weights, activation clamps), each with
int8 and int16 weights, compiled into one C program with the layout utvm/kernels/dsp.py
prepares: each case in its own function, as the generated code calls the kernel (one call
site, constants known). The plain-C forms run on the host under AddressSanitizer and
UndefinedBehaviorSanitizer; the assembly on mps2/an386 (Cortex-M4) under QEMU. Every output
byte must equal the reference, and no byte past the outputs or the scratch may change.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from mac_cases import _out_size
from utvm.kernels import fixedpoint as fp
from utvm.kernels.dsp import (
    LO,
    NARROW,
    PACKED,
    PAIRS,
    PER_TENSOR,
    SMALL,
    W8,
    X8,
    GemmPlan,
    Geometry,
    gemm_plan,
    gemm_requant,
    gemm_stream,
)

INCLUDE = Path(__file__).resolve().parents[1] / "lib" / "crt" / "include"
PORT = Path(__file__).resolve().parents[1] / "lib" / "crt" / "ports" / "baremetal" / "platform_baremetal.c"
STRICT = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror"]
#: guard bytes after the outputs and words after the scratch that must stay untouched
GUARD = 8


@dataclass
class Layer:
    geo: Geometry
    x: np.ndarray
    plan: GemmPlan
    zx: int
    lo: int
    hi: int
    ref: np.ndarray


def geometry(n: int, h: int, w: int, cin: int, cout: int, kernel: tuple[int, int], strides: tuple[int, int],
             dilation: tuple[int, int], same: bool) -> Geometry:
    """The geometry of a convolution with TFLite's SAME (padding split, the extra at the end)
    or VALID padding."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, strides, dilation
    oh, ow = _out_size(h, kh, sh, dh, same), _out_size(w, kw, sw, dw, same)
    top = max(((oh - 1) * sh + (kh - 1) * dh + 1 - h) // 2, 0) if same else 0
    left = max(((ow - 1) * sw + (kw - 1) * dw + 1 - w) // 2, 0) if same else 0
    return Geometry(n, h, w, cin, oh, ow, cout, kh, kw, sh, sw, dh, dw, top, left)


def reference(x: np.ndarray, w: np.ndarray, bias: np.ndarray, geo: Geometry, zx: int, mults: np.ndarray,
              shifts: np.ndarray, zy: int, lo: int, hi: int) -> np.ndarray:
    """TFLite's ConvPerChannel: sum of (x - zx) * w over the taps inside the input, plus the
    bias, MultiplyByQuantizedMultiplier per channel, plus zy, clamped."""
    acc = np.zeros((geo.n, geo.oh, geo.ow, geo.cout), np.int64)
    xs = x.astype(np.int64) - zx
    for i in range(geo.oh):
        for j in range(geo.ow):
            for ry in range(geo.kh):
                for rx in range(geo.kw):
                    iy, ix = i * geo.sh - geo.top + ry * geo.dh, j * geo.sw - geo.left + rx * geo.dw
                    if 0 <= iy < geo.h and 0 <= ix < geo.w:
                        acc[:, i, j] += xs[:, iy, ix] @ w[:, ry, rx].T
    y = fp.np_multiply_by_quantized_multiplier(acc + bias, mults, shifts) + zy
    return np.clip(y, lo, hi).astype(np.int8)


def layer(rng: np.random.Generator, geo: Geometry, wide: bool, per_tensor: bool | None = None,
          clamp: str | None = None, widen: bool = False, packed: bool = False) -> Layer | None:
    """Random data and quantization for ``geo``; per-tensor scales and the activation clamp as
    told (``clamp``: "" none, "l" a lower bound, "h" an upper one, "lh" both), else at random.
    ``packed``: the constants packed where they pack (at most four shifts a layer, the scales then
    drawn from three octaves). None when the kernels' requantization does not apply (a scale or
    bias outside its range)."""
    x = rng.integers(-128, 128, (geo.n, geo.h, geo.w, geo.cin)).astype(np.int8)
    w = rng.integers(-128 if rng.random() < 0.2 else -127, 128, (geo.cout, geo.kh, geo.kw, geo.cin))
    if geo.cout > 1 and rng.random() < 0.2:
        w[int(rng.integers(0, geo.cout))] = 0  # a pruned channel
    bias = rng.integers(-(1 << int(rng.integers(4, 24))), 1 << 20, geo.cout)
    zx, zy = (int(v) for v in rng.integers(-128, 128, 2))
    one = rng.random() < 0.3 if per_tensor is None else per_tensor
    scales = np.exp(rng.uniform(np.log(2e-6), np.log(0.3), 1 if one else geo.cout))
    if packed:  # three octaves (at most four shifts) at random among those the kernels take
        top = rng.uniform(np.log(2e-6) + 3 * np.log(2), np.log(0.3))
        scales = np.exp(rng.uniform(top - 3 * np.log(2), top, 1 if one else geo.cout))
    scales = np.broadcast_to(scales, (geo.cout,)).copy()
    if clamp is None:  # RELU or RELU6-like clamps beyond the int8 range
        clamp = ("l" if rng.random() < 0.5 else "lh") if rng.random() < 0.3 else ""
    lo = int(rng.integers(-127, 60)) if "l" in clamp else -128
    hi = int(rng.integers(max(lo, -60), 127)) if "h" in clamp else 127
    wmat = w.reshape(geo.cout, -1).astype(np.int64)
    rq = gemm_requant(bias - zx * wmat.sum(axis=1), scales, np.abs(wmat).sum(axis=1), bias)
    if rq is None:
        return None
    pairs = [fp.quantize_multiplier(float(s)) for s in scales]
    mults = np.array([m for m, _ in pairs], np.int64)
    shifts = np.array([s for _, s in pairs], np.int64)
    ref = reference(x, w, bias, geo, zx, mults, shifts, zy, lo, hi)
    return Layer(geo, x, gemm_plan(geo, wmat, rq, zy, wide, lo, hi, widen, packed), zx, lo, hi, ref)


def random_geometry(rng: np.random.Generator) -> Geometry:
    if rng.random() < 0.25:  # fully connected: batch rows of depth inputs
        batch, depth, units = int(rng.integers(1, 4)), int(rng.integers(1, 70)), int(rng.integers(1, 20))
        return Geometry(1, 1, batch, depth, 1, batch, units)
    cin = int(rng.choice([1, 2, 3, 4, 5, 7, 8, 12, 16, 20]))
    cout = int(rng.choice([1, 2, 3, 4, 5, 6, 8, 10, 16]))
    if rng.random() < 0.3:
        kernel, strides, dilation = (1, 1), (int(rng.integers(1, 3)),) * 2, (1, 1)
    else:
        kernel = (int(rng.integers(1, 6)), int(rng.integers(1, 6)))
        strides = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        dilation = (int(rng.integers(1, 3)), int(rng.integers(1, 3))) if rng.random() < 0.3 else (1, 1)
    h = int(rng.integers((kernel[0] - 1) * dilation[0] + 1, 11))
    w = int(rng.integers((kernel[1] - 1) * dilation[1] + 1, 11))
    return geometry(int(rng.integers(1, 3)), h, w, cin, cout, kernel, strides, dilation, bool(rng.random() < 0.6))


#: the shapes of the shared models' layers, smaller in space
MODEL_SHAPES = [
    geometry(1, 12, 12, 3, 8, (3, 3), (2, 2), (1, 1), True),     # VWW's first layer
    geometry(1, 8, 8, 3, 16, (3, 3), (1, 1), (1, 1), True),      # IC's first layer
    geometry(1, 13, 10, 1, 16, (10, 4), (2, 2), (1, 1), True),   # KWS's first layer
    geometry(1, 6, 6, 8, 16, (1, 1), (1, 1), (1, 1), True),      # pointwise, K = 8
    geometry(1, 3, 3, 64, 24, (1, 1), (1, 1), (1, 1), True),     # pointwise, K = 64
    geometry(1, 8, 8, 16, 32, (1, 1), (2, 2), (1, 1), True),     # pointwise, stride 2
    geometry(1, 6, 6, 16, 16, (3, 3), (1, 1), (1, 1), True),     # IC's 3x3 layers
    geometry(1, 5, 5, 32, 12, (3, 3), (2, 2), (1, 1), True),
    geometry(1, 1, 64, 4, 8, (1, 5), (1, 2), (1, 1), False),     # conv1d
    Geometry(1, 1, 1, 160, 1, 1, 24),                             # AD's fully connected layers
    Geometry(1, 1, 1, 8, 1, 1, 32),
    Geometry(1, 1, 1, 256, 1, 1, 2),
    Geometry(1, 1, 1, 10, 1, 1, 10),
    Geometry(1, 1, 1, 4, 1, 1, 16),                               # squeeze-excite's
    Geometry(1, 1, 3, 8, 1, 3, 12),
    Geometry(1, 1, 2, 4, 1, 2, 8),
]

#: more of them with per-channel and per-tensor scales and every clamp (none, lower, upper,
#: both), so that every kernel (one or two rows, one or two quads in registers, two channels,
#: unwidened rows) runs each way
FIXED_SHAPES = [
    Geometry(1, 1, 1, 10, 1, 1, 10),
    Geometry(1, 1, 1, 10, 1, 1, 2),
    Geometry(1, 1, 1, 4, 1, 1, 16),
    Geometry(1, 1, 3, 8, 1, 3, 12),
    Geometry(1, 1, 1, 120, 1, 1, 3),
    Geometry(1, 1, 1, 256, 1, 1, 2),
    geometry(1, 6, 6, 16, 16, (3, 3), (1, 1), (1, 1), True),
    geometry(1, 6, 6, 16, 12, (1, 1), (1, 1), (1, 1), True),
]


def cases(seed: int = 1, n_random: int = 50) -> list[Layer]:
    rng = np.random.default_rng(seed)
    shapes = MODEL_SHAPES + [random_geometry(rng) for _ in range(n_random)]
    out = []
    for k, geo in enumerate(shapes):
        for wide in (False, True):
            # rows read one at a time: widened into scratch for half of them
            made = layer(np.random.default_rng(seed * 1000 + 2 * k + wide), geo, wide, widen=bool(k % 2))
            if made is not None:
                out.append(made)
    for k, geo in enumerate(MODEL_SHAPES + FIXED_SHAPES):  # packed constants
        for wide in (False, True):
            clamps = ("", "l", "h", "lh") if k >= len(MODEL_SHAPES) else (("", "l", "h", "lh")[k % 4],)
            for c, clamp in enumerate(clamps):
                made = layer(np.random.default_rng(seed * 1000 + 700 + 8 * k + 4 * wide + c), geo, wide, False,
                             clamp, widen=bool(c % 2), packed=True)
                if made is not None:
                    out.append(made)
    for k, geo in enumerate(FIXED_SHAPES):
        for wide in (False, True):
            for pt in (False, True):
                for c, clamp in enumerate(("", "l", "h", "lh")):
                    made = layer(np.random.default_rng(seed * 1000 + 500 + 16 * k + 8 * wide + 4 * pt + c), geo, wide,
                                 pt, clamp, widen=bool(c % 2))
                    assert made is not None
                    out.append(made)
    return out


def _array(ctype: str, name: str, values: np.ndarray, extra: str = "") -> str:
    return f"static const {ctype} {name}[{max(values.size, 1)}]{extra} = {{{', '.join(map(str, values.reshape(-1)))}}};"


def program(layers: list[Layer], timed: bool = False) -> str:
    """One C program: each case's call in its own function (constants known, as in the generated
    code); main runs them, checks the outputs and the guards, prints one line per case."""
    lines = ["#include <stdio.h>", "#include <string.h>", '#include "utvm/kernels_dsp.h"']
    lines.append('#include "utvm/platform.h"' if timed else "static unsigned utvm_platform_cycles(void) { return 0; }")
    scratch = max(c.plan.scratch for c in layers) + GUARD
    lines.append(f"static int32_t scratch[{scratch}];")
    for i, c in enumerate(layers):
        lines.append(_array("int8_t", f"x{i}", c.x, " __attribute__((aligned(4)))"))
        lines.append(_array("int32_t", f"s{i}", c.plan.stream))
        lines.append(_array("int8_t", f"r{i}", c.ref))
        lines.append(f"static int8_t o{i}[{c.ref.size + GUARD}] __attribute__((aligned(4)));")
        args = ", ".join(map(str, c.plan.call_args(c.geo, c.zx, c.lo, c.hi)))
        lines.append(f"__attribute__((noinline)) static void run{i}(void) {{\n"
                     f"  {c.plan.entry}(o{i}, (void*)x{i}, (void*)s{i}, scratch, {args});\n}}")
    lines += ["static int check(const int8_t* o, const int8_t* r, unsigned n, unsigned used) {",
              "  unsigned k;", "  if (memcmp(o, r, n) != 0) return 1;",
              f"  for (k = 0; k < {GUARD}; ++k) if (o[n + k] != 0x55) return 2;",
              f"  for (k = used; k < {scratch}; ++k) if (scratch[k] != 0x55555555) return 3;", "  return 0;", "}",
              "int main(void) {", "  int bad = 0, r;", "  uint32_t t;"]
    for i, c in enumerate(layers):
        lines += [f"  memset(o{i}, 0x55, sizeof o{i});", "  memset(scratch, 0x55, sizeof scratch);",
                  "  t = utvm_platform_cycles();", f"  run{i}();", "  t = utvm_platform_cycles() - t;",
                  f"  r = check(o{i}, r{i}, sizeof r{i}, {c.plan.scratch});", "  bad |= r;",
                  f'  printf("case {i} %d %lu\\n", r, (unsigned long)t);']
    lines += ["  return bad != 0;", "}", ""]
    return "\n".join(lines)


def _results(stdout: str, n: int) -> list[int]:
    codes = [int(line.split()[2]) for line in stdout.splitlines() if line.startswith("case ")]
    assert len(codes) == n, stdout[-2000:]
    return codes


def _describe(layers: list[Layer], codes: list[int]) -> list[str]:
    what = {1: "outputs differ", 2: "wrote past the outputs", 3: "wrote past the scratch"}
    return [f"{layers[i].geo} mode {layers[i].plan.mode}: {what[c]}" for i, c in enumerate(codes) if c]


@pytest.fixture(scope="module")
def dsp_cases() -> list[Layer]:
    layers = cases()
    modes = {c.plan.mode for c in layers}
    # every kernel: weight types, shapes, per-tensor and per-channel constants
    shapes = {0, W8, PAIRS, W8 | PAIRS, SMALL, NARROW, NARROW | W8, X8, X8 | NARROW, X8 | W8, X8 | W8 | NARROW}
    assert modes >= shapes | {m | PER_TENSOR for m in shapes} | {m | LO for m in shapes}
    clamps = {(c.plan.mode & ~(PER_TENSOR | LO), c.lo > -128, c.hi < 127) for c in layers}
    assert clamps >= {(m, lo, hi) for m in shapes for lo in (False, True) for hi in (False, True)}
    # packed constants: every shape but the small rows, each clamp
    packed = {(c.plan.mode & ~(PACKED | LO), c.lo > -128, c.hi < 127) for c in layers if c.plan.mode & PACKED}
    assert packed >= {(m, lo, hi) for m in shapes - {SMALL} for lo in (False, True) for hi in (False, True)}, packed
    assert len(layers) >= 200
    return layers


def test_plain_c_matches_tflite_on_host_with_sanitizers(dsp_cases: list[Layer], tmp_path: Path) -> None:
    if not shutil.which("gcc"):
        pytest.skip("no host gcc")
    src = tmp_path / "dsp.c"
    src.write_text(program(dsp_cases))
    exe = tmp_path / "dsp"
    # -O0 (as tests/sanitizer_build.py): UTVM_INLINE's helpers emitted once, not inlined per call
    # (1 s to build; -O1 took 127 s); the optimized forms run in the board and host model tests
    subprocess.run(["gcc", *STRICT, "-O0", "-fsanitize=address,undefined", "-fno-sanitize-recover=all", f"-I{INCLUDE}",
                    str(src), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True)
    codes = _results(out.stdout, len(dsp_cases))
    assert not any(codes), _describe(dsp_cases, codes)
    assert out.returncode == 0, out.stderr[-2000:]


def test_assembly_matches_tflite_on_cortex_m4(dsp_cases: list[Layer], tmp_path: Path) -> None:
    from toolchains import toolchain_problem
    from utvm.run import qemu
    from utvm.run.boards import get_board

    problem = toolchain_problem()
    if problem:
        pytest.skip(problem)
    src = tmp_path / "dsp.c"
    src.write_text(program(dsp_cases, timed=True))
    board = get_board("mps2/an386")
    elf = qemu.build_firmware(board, [src, PORT], [INCLUDE], {}, tmp_path / "fw", ["-std=c99", "-Wextra", "-Werror"])
    run = qemu.run_firmware(board, elf, timeout_s=300)
    assert run.fault is None, run.fault
    codes = _results(run.stdout, len(dsp_cases))
    assert not any(codes), _describe(dsp_cases, codes)


def test_patch_order_is_a_permutation_of_the_window() -> None:
    """Whole quads of each segment (a window row, or a tap with dilation along the width) first,
    then the segments' last bytes, then padding to a quad."""
    geo = geometry(1, 9, 9, 3, 4, (3, 3), (1, 1), (1, 1), True)
    order = geo.patch_order()
    assert order.tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16, 18, 19, 20, 21, 22, 23, 24, 25,
                              8, 17, 26, -1]
    for geo in (geometry(1, 9, 9, 5, 4, (2, 3), (1, 1), (1, 2), True), geometry(1, 9, 9, 16, 4, (3, 3), (1, 1),
                                                                                (1, 1), True)):
        order = geo.patch_order()
        k = geo.kh * geo.kw * geo.cin
        assert sorted(order[order >= 0].tolist()) == list(range(k)) and order.size == 4 * geo.kq
    assert geometry(1, 9, 9, 16, 4, (3, 3), (1, 1), (1, 1), True).patch_order().tolist() == list(range(144))


def test_stream_layout() -> None:
    """Pairs: per block of two channels the biases once, per quad the doubled int16 pairs
    (w0, w2), (w1, w3) of each channel, then m, c, e per channel; the last e word flagged."""
    w = np.arange(-8, 8).reshape(2, 8)
    folded = np.array([10, -20])
    rq = gemm_requant(folded, np.array([0.001, 0.002]), np.abs(w).sum(axis=1), folded)
    assert rq is not None
    s = gemm_stream(w, rq, 3, PAIRS)
    assert s[:2].tolist() == [20, -40]
    halves = s[2:10].view("<i2").reshape(2, 2, 2, 2)  # quad, channel, word, half
    assert halves[0, 1].tolist() == [[0, 4], [2, 6]]  # channel 1, quad 0: 2 * (0, 2), 2 * (1, 3)
    m, c, e = s[10:13]
    assert c == (1 << (int(e) - 1)) + 3 * (1 << int(e)) and s[-1] == rq.rights[1] | 256
    # int8 weights, one row x four channels (two padded): per quad one word per channel
    s8 = gemm_stream(w, rq, 3, W8)
    assert s8[8:10].view(np.int8).tolist() == w[0, 4:8].tolist() + w[1, 4:8].tolist()
    assert s8[10:12].tolist() == [0, 0]


def test_packed_stream_layout() -> None:
    """Packed constants: the blocks hold the biases and the weights only; after them one word per
    channel, m - 2**30 | the index of its shift << 30; the shifts and z in the mode's header; a
    channel without weights moved to the others' smallest shift, its output unchanged."""
    w = np.arange(-24, 24).reshape(3, 16)
    w[2] = 0
    folded = np.array([10, -20, 40])
    rq = gemm_requant(folded, np.array([0.001, 0.004, 0.3]), np.abs(w).sum(axis=1), folded)
    assert rq is not None and rq.rights.tolist() == [9, 7, 1]  # the dead channel: 4v at m = 2**30, shift 1
    geo = Geometry(1, 1, 2, 16, 1, 2, 3)
    plan = gemm_plan(geo, w, rq, 3, True, -128, 127, packed=True)
    assert plan.mode & PACKED and plan.kernel == "row_x8_pn"
    s = plan.stream.view(np.uint32)
    blocks = 4 + 4 * 4 * 2  # one block of four channels (one padded): four biases, four quads of eight int16 pairs
    v = 12  # the dead channel's output before zy: 40 * 0.3, at shift 7: v * 2**(7 + 1), doubled
    assert plan.stream[:4].tolist() == [20, -40, 2 * (v << 8), 0]
    words = s[blocks:]
    assert words.size == 4 and (words & 0x3FFFFFFF).tolist() == [m - (1 << 30) for m in rq.mults.tolist()[:2]] + [0, 0]
    assert (words >> 30).tolist() == [1, 0, 0, 0]  # shifts 7, 9: channel 0 at 9, the others at 7
    assert plan.header == 3 | 7 << 9 | 2 << 14
    assert plan.call_args(geo, 0, -128, 127)[-1] == plan.mode | plan.header << 8


def test_requant_short_form_applies_only_where_exact() -> None:
    w = np.ones((1, 8), np.int64)
    ok = gemm_requant(np.array([5]), np.array([0.01]), np.array([8]), np.array([5]))
    assert ok is not None and ok.rights[0] == 6  # 0.01 = 0.64 / 2**6
    assert gemm_requant(np.array([5]), np.array([0.7]), np.array([8]), np.array([5])) is None  # no right shift
    assert gemm_requant(np.array([5]), np.array([1e-9]), np.array([8]), np.array([5])) is None  # shift > 22
    big = np.array([(1 << 30) - 1000])
    assert gemm_requant(big, np.array([0.01]), w.sum(axis=1), big) is None  # 2 * accumulator past int32
