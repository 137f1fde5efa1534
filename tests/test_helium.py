"""Helium (MVE) kernels of utvm/kernels/helium.py and utvm/kernels_mve.h.

- the plain-C requantization of kernels_mve.h equals the numpy reference of fixedpoint.py;
- which layers the Helium kernels take;
- the generated C compiles with strict warnings for the host (plain-C fallbacks), Cortex-M4
  and Cortex-M55;
- convolutions of several shapes are bit-exact with TFLite Micro on mps3/an547 (Cortex-M55);
- int8 ADD (utvm_mve_add_s8): the plain-C form on the host and the vector form on the
  Cortex-M55 equal a numpy reference built from fixedpoint.py's steps, for random scales, zero
  points, activations and sizes (tails); ADD layers are bit-exact with TFLite Micro.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tflite_builder import ModelBuilder, conv2d_model
from toolchains import toolchain_problem
from utvm.compiler import CompileOptions, compile_model
from utvm.importer import load_model
from utvm.ir import Graph, Operator
from utvm.kernels import fixedpoint as fp
from utvm.kernels.fixedpoint import add_params
from utvm.kernels.kerneldef import KernelDef
from utvm.kernels.requant import activation_range_int8
from utvm.kernels.target import Target
from utvm.ops import variant
from utvm.run import qemu
from utvm.run.boards import get_board
from utvm.run.runner import run_model

M55 = Target.for_cpu("cortex-m55")


def helium_kernel(g: Graph, op: Operator) -> KernelDef | None:
    """The Helium variant of the operator's kernel (depthwise: helium, else helium_k), None where
    it has none or it does not apply."""
    for name in ("helium", "helium_k"):
        v = variant(op.kind, name)
        kdef = v.build(g, op, M55) if v is not None else None
        if kdef is not None:
            return kdef
    return None


INCLUDE = Path(__file__).resolve().parents[1] / "lib" / "crt" / "include"
STRICT = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror"]


def test_fallback_requantization_matches_numpy(tmp_path: Path) -> None:
    if shutil.which("gcc") is None:
        pytest.skip("no host gcc")
    rng = np.random.default_rng(1)
    n = 4000
    x = np.concatenate([rng.integers(-(2**31), 2**31, n // 2), rng.integers(-(2**20), 2**20, n // 2),
                        [fp.INT32_MIN, fp.INT32_MAX, 0, -1, 1]]).astype(np.int64)
    m = rng.integers(2**30, 2**31, x.size).astype(np.int64)
    m[-5:] = [fp.INT32_MAX, 2**30, 2**31 - 1, 2**30, 2**30 + 1]
    s = rng.integers(-31, 8, x.size).astype(np.int64)
    # left shifts only on values that do not overflow (TFLite's assumption)
    s = np.where((s > 0) & (np.abs(x) >= 2**23), -s, s)
    src = tmp_path / "t.c"
    values = ",".join(f"{{{a}, {b}, {c}}}" for a, b, c in zip(x, m, s))
    src.write_text(
        '#include <stdio.h>\n#include "utvm/kernels_mve.h"\n'
        f"static const long long v[][3] = {{{values}}};\n"
        "int main(void) {\n"
        "  for (unsigned i = 0; i < sizeof v / sizeof v[0]; ++i)\n"
        "    printf(\"%ld\\n\", (long)utvm_mve_mbqm((int32_t)v[i][0], (int32_t)v[i][1], (int32_t)v[i][2]));\n"
        "  return 0;\n}\n")
    exe = tmp_path / "t"
    subprocess.run(["gcc", *STRICT, f"-I{INCLUDE}", str(src), "-o", str(exe)], check=True)
    got = np.array([int(v) for v in subprocess.run([str(exe)], capture_output=True, text=True,
                                                     check=True).stdout.split()])
    want = fp.np_multiply_by_quantized_multiplier(x, m, s)
    assert np.array_equal(got, want)


def _model(tmp_path: Path, name: str, **kwargs: object) -> Path:
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(conv2d_model(**kwargs))  # type: ignore[arg-type]
    return path


CASES = {
    "conv3x3_same_c16": dict(input_shape=(1, 9, 7, 16), out_channels=12, activation="RELU"),
    "conv3x3_same_c3": dict(input_shape=(1, 10, 10, 3), out_channels=8, seed=1),
    "conv3x3_s2_same": dict(input_shape=(1, 9, 10, 24), out_channels=20, stride=(2, 2), seed=2),
    "conv5x2_valid": dict(input_shape=(1, 12, 6, 1), out_channels=16, kernel=(5, 2), padding="VALID", seed=3),
    "pointwise": dict(input_shape=(1, 5, 5, 40), out_channels=20, kernel=(1, 1), seed=4, activation="RELU6"),
    "pointwise_s2": dict(input_shape=(1, 6, 6, 8), out_channels=8, kernel=(1, 1), stride=(2, 2), seed=5),
    "pointwise_per_tensor": dict(input_shape=(1, 3, 3, 32), out_channels=16, kernel=(1, 1), per_channel=False,
                                 seed=6),
    # k >= 64: blocks of four channels (a partial last block, tails of k and of the pixels)
    "pointwise_deep": dict(input_shape=(1, 3, 3, 72), out_channels=10, kernel=(1, 1), seed=12, activation="RELU"),
    "pointwise_deep_per_tensor": dict(input_shape=(1, 5, 3, 64), out_channels=7, kernel=(1, 1),
                                      per_channel=False, seed=13),
    "dw3x3_same": dict(input_shape=(1, 7, 5, 20), depthwise=True, activation="RELU", seed=7),
    "dw3x3_s2_same": dict(input_shape=(1, 9, 8, 8), depthwise=True, stride=(2, 2), seed=8),
    "dw3x3_valid": dict(input_shape=(1, 6, 6, 12), depthwise=True, padding="VALID", seed=9),
    "dw3x3_narrow": dict(input_shape=(1, 4, 1, 4), depthwise=True, seed=10),
    "dw3x3_c6": dict(input_shape=(1, 7, 7, 6), depthwise=True, seed=11),  # helium_k (any count)
    "dw3x3_c6_tiny": dict(input_shape=(1, 5, 5, 6), depthwise=True, seed=31),  # utvm_mve_dwt_s8: any count
    # depthwise borders read in place (no padded copy): widths 1-5 (single pixels, a group with
    # both borders, a group and a pixel), 6-9 (left and right border groups, an overlapping
    # last group), one input row (both window rows outside), stride 2 on even sizes (SAME
    # padding only at the bottom and right) and odd ones, channels 4, 8, 20
    "dw3x3_w1_h1": dict(input_shape=(1, 1, 1, 8), depthwise=True, seed=14),
    "dw3x3_w2_s2": dict(input_shape=(1, 4, 2, 20), depthwise=True, stride=(2, 2), seed=15),
    "dw3x3_w3": dict(input_shape=(1, 3, 3, 4), depthwise=True, activation="RELU6", seed=16),
    "dw3x3_w4": dict(input_shape=(1, 6, 4, 8), depthwise=True, seed=17),
    "dw3x3_w5": dict(input_shape=(1, 2, 5, 20), depthwise=True, seed=18),
    "dw3x3_w5_s2": dict(input_shape=(1, 5, 5, 4), depthwise=True, stride=(2, 2), seed=19),
    "dw3x3_w4_s2": dict(input_shape=(1, 4, 4, 8), depthwise=True, stride=(2, 2), seed=20),
    "dw3x3_w6_h1": dict(input_shape=(1, 1, 6, 4), depthwise=True, seed=21),
    "dw3x3_w7": dict(input_shape=(1, 3, 7, 20), depthwise=True, activation="RELU", seed=22),
    "dw3x3_w9_s2": dict(input_shape=(1, 6, 9, 8), depthwise=True, stride=(2, 2), seed=23),
    "dw3x3_w10_s2": dict(input_shape=(1, 3, 10, 4), depthwise=True, stride=(2, 2), per_channel=False,
                         seed=24),
    # convolutions of 16n input channels (utvm_mve_conv42_s8, gathered patches): an odd last
    # pair of channels, stride 2 (SAME padding at the bottom and right only), a 5 x 3 window on
    # an input as small as it, every pixel at a border, one column, VALID padding
    "conv3x3_rows_s2": dict(input_shape=(1, 8, 7, 16), out_channels=6, stride=(2, 2), seed=25),
    "conv5x3_rows": dict(input_shape=(1, 5, 4, 32), out_channels=10, kernel=(5, 3), activation="RELU6", seed=26),
    "conv3x3_rows_2x2": dict(input_shape=(1, 2, 2, 16), out_channels=8, seed=27),
    "conv3x3_rows_w1": dict(input_shape=(1, 4, 1, 16), out_channels=3, seed=28),
    "conv3x2_rows_valid": dict(input_shape=(1, 6, 7, 16), out_channels=16, kernel=(3, 2), padding="VALID",
                               per_channel=False, seed=29),
    # more output channels
    "conv3x3_c32_col": dict(input_shape=(1, 5, 5, 16), out_channels=32, seed=30),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_helium_kernel_taken(tmp_path: Path, name: str) -> None:
    g = load_model(_model(tmp_path, name, **CASES[name]))
    op = g.ops[0]
    assert helium_kernel(g, op) is not None


def test_float_and_other_layers_left_to_generic(tmp_path: Path) -> None:
    g = load_model(_model(tmp_path, "f", dtype="float32"))
    assert helium_kernel(g, g.ops[0]) is None
    g = load_model(_model(tmp_path, "dm", input_shape=(1, 5, 5, 4), depthwise=True, depth_multiplier=2))
    assert helium_kernel(g, g.ops[0]) is None


def _compilers() -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = []
    if shutil.which("gcc"):
        out.append(("gcc", []))
    if shutil.which("arm-none-eabi-gcc"):
        out.append(("arm-none-eabi-gcc", ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]))
        out.append(("arm-none-eabi-gcc", ["-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"]))
    return out


def test_generated_c_compiles_strictly(tmp_path: Path) -> None:
    compilers = _compilers()
    if not compilers:
        pytest.skip("no C compiler")
    sources = []
    for name in ("conv3x3_s2_same", "pointwise", "dw3x3_same", "conv5x2_valid", "conv3x3_rows_s2", "dw3x3_w9_s2"):
        out = tmp_path / name
        compile_model(_model(tmp_path, name, **CASES[name]), out, CompileOptions(cpu="cortex-m55"))
        src = next((out / "codegen" / "host" / "src").glob("*_lib0.c"))
        assert re.search(r'#include "\.\./include/utvm/kernels/\w+_mve(_\w+)?\.h"', src.read_text())
        sources.append((src, out / "runtime" / "include"))
    for cc, flags in compilers:
        for src, include in sources:
            subprocess.run([cc, *STRICT, *flags, f"-I{include}", "-c", str(src), "-o", str(tmp_path / "k.o")],
                           check=True)


@pytest.mark.skipif(toolchain_problem() is not None, reason="bare-metal toolchain missing")
@pytest.mark.parametrize("name", sorted(CASES))
def test_bit_exact_on_cortex_m55(tmp_path: Path, name: str) -> None:
    report = run_model(_model(tmp_path, name, **CASES[name]), "mps3/an547", workdir=tmp_path / "work")
    assert report.outputs_match_reference
    assert report.max_abs_diff == 0


#: the depthwise cases where utvm_mve_dwt_s8 applies beside another Helium plan (the default
#: there, for its flash: "Tiny maps are tuned for"), run again with it from a tuning log
TINY_CASES = [n for n, c in CASES.items() if c.get("depthwise") and n != "dw3x3_c6"
              and int(np.prod(c["input_shape"][1:3])) <= 36 and c["input_shape"][2] <= 6
              and c["input_shape"][3] % 4 == 0]  # type: ignore[index, call-overload]


@pytest.mark.skipif(toolchain_problem() is not None, reason="bare-metal toolchain missing")
@pytest.mark.parametrize("name", TINY_CASES)
def test_bit_exact_on_cortex_m55_with_tiny(tmp_path: Path, name: str) -> None:
    from helium_logs import tiny_plan_log
    from utvm.ops import depthwise_conv2d

    path = _model(tmp_path, name, **CASES[name])
    g = load_model(path)
    assert depthwise_conv2d.helium_plans(g, g.ops[0])[0] != "tiny"
    log = tiny_plan_log(tmp_path, path)  # checks that the compiler takes plan tiny from it
    report = run_model(path, "mps3/an547", workdir=tmp_path / "work", tuning_log=log)
    assert report.outputs_match_reference
    assert report.max_abs_diff == 0


SCRATCH_CASES = ["conv3x3_same_c16", "conv3x3_s2_same", "conv3x3_rows_s2", "conv3x3_c32_col", "pointwise_per_tensor",
                 "dw3x3_same", "dw3x3_valid", "dw3x3_w9_s2", "dw3x3_w4_s2", "dw3x3_c6_tiny"]


def _conv_constant_bytes(w: np.ndarray, sub: int = 1) -> int:
    """Bytes of a utvm_mve_conv42_s8 filter array: per pair of filter vectors (sub per channel whose
    weights are not all zero, an odd count rounded up) the weights in 16-byte steps, a last
    partial step of k > 16 only k % 16 bytes (rounded up to even) a vector, and a record of 24
    bytes, 16 (8 a channel) with one vector per channel, every channel live, an even count and
    at most 14 whole steps (the test models' biases all fit 24 bits); a template of cout bytes
    when some channel is dead."""
    cout = w.shape[0]
    k = w.size // cout
    live = int(np.count_nonzero(np.any(w.reshape(cout, k) != 0, axis=1)))
    pairs = -(-live * sub // 2)
    tail = (k % 16 + 1) // 2 * 2 if k > 16 else 0
    full = k // 16 if tail else -(-k // 16)
    compact = sub == 1 and live == cout and cout % 2 == 0 and full <= 14
    return pairs * (full * 32 + 2 * tail + (16 if compact else 24)) + (cout if live < cout else 0)


@pytest.mark.parametrize("name", SCRATCH_CASES)
def test_constants_compact_and_scratch_planned(tmp_path: Path, name: str) -> None:
    """Convolutions: one constant, the filters (16-byte steps, two vectors at a time, a last
    partial step not padded) with the requantization of each pair of output channels beside it
    (8 or 12 bytes per channel), the patches of four pixels as the only temporary buffer. Depthwise layers of
    8n channels: a record of 32 bytes per channel (weights and requantization), the tile of the
    input as the only temporary buffer; others (helium_k): the weights in blocks of four
    channels (the last one zero-padded), requantization constants no larger than the generic
    kernels' (int32 bias, int32 multipliers only per channel, shifts packed or scalar), the
    padded input rows as the only temporary buffer. Temporaries are scratch arguments (in the memory plan), never on the
    stack or from TVMBackendAllocWorkspace."""
    g = load_model(_model(tmp_path, name, **CASES[name]))
    kdef = helium_kernel(g, g.ops[0])
    assert kdef is not None
    cout = g.tensors[g.ops[0].outputs[0]].shape[-1]
    consts = [a.constant for a in kdef.args if a.constant is not None and a.role != "w"]
    filters = [a.constant for a in kdef.args if a.role == "w"]
    scratch = [a.role for a in kdef.args if a.scratch]
    w = g.tensors[g.ops[0].inputs[1]]
    assert w.data is not None
    if scratch == ["planes"]:  # utvm_mve_dwt_s8: per 4 channels 80 bytes per border class and 32
        groups, x = -(-cout // 4), g.tensors[g.ops[0].inputs[0]]
        classes = (filters[0].nbytes // groups - 32) / 80
        assert not consts and filters[0].nbytes % groups == 0 and classes in range(1, 10)
        h, w = x.shape[1:3]  # planes of h x w, or padded with the zero point: (h + 2) x (w + 1) + 1
        assert kdef.args[-1].placeholder.shape[0] in (16 * h * w + 16, 16 * ((h + 2) * (w + 1) + 1) + 16)
    elif name.startswith("dw") and cout % 8:  # helium_k: weights in blocks of 4 channels, padded rows
        assert sum(c.nbytes for c in consts) <= 8 * cout
        kh, kw = w.shape[1:3]
        assert filters[0].nbytes == -(-cout // 4) * 4 * kh * kw and scratch == ["rows"]
    elif name.startswith("dw"):  # utvm_mve_dwg_s8: a record of 32 bytes per channel, the tile
        assert not consts and filters[0].nbytes == 32 * cout and scratch == ["tiles"]
    else:
        assert not consts and scratch == ["col"]
        assert filters[0].nbytes == _conv_constant_bytes(w.data)
    out = tmp_path / "out"
    compile_model(_model(tmp_path, name, **CASES[name]), out, CompileOptions(cpu="cortex-m55"))
    src = next((out / "codegen" / "host" / "src").glob("*_lib0.c")).read_text()
    assert "TVMBackendAllocWorkspace" not in src
    assert not re.search(r"\bint8_t \w+\[\d+\]", src)


def test_packed_shift_width_matches_the_header() -> None:
    """the Helium kernels pack shifts into bias words with helium.py's SHIFT_BITS; kernels_mve.h
    unpacks them with UTVM_MVE_RQ_SHIFT_BITS: the two must agree."""
    from utvm.kernels.helium import SHIFT_BITS

    kernels = Path(__file__).resolve().parents[1] / "lib/crt/include/utvm/kernels"
    header = "".join(p.read_text() for p in sorted(kernels.glob("*_mve.h")))
    (bits,) = re.findall(r"#define UTVM_MVE_RQ_SHIFT_BITS (\d+)", header)
    assert int(bits) == SHIFT_BITS
    from utvm.kernels.fixedpoint import ADD_LEFT_SHIFT

    (left,) = re.findall(r"#define UTVM_MVE_ADD_LEFT_SHIFT (\d+)", header)
    assert int(left) == ADD_LEFT_SHIFT



# ---------------------------------------------------------------------------------------------
# utvm_mve_dw3x3_row_s8 (depthwise read in place) against numpy, any padding and dilation
# ---------------------------------------------------------------------------------------------

RQ_MULT_SHIFT8 = 1 | 4  # UTVM_MVE_RQ_MULT | UTVM_MVE_RQ_SHIFT8


def _window_cases(seed: int, count: int) -> list[dict[str, object]]:
    """Random rows of utvm_mve_dw3x3_row_s8 layers (3 x 3, channels 4, 8, 20): sizes down to one
    pixel, strides and dilations 1 and 2, paddings from none to the whole window on every side,
    the extreme zero points, per-channel requantization."""
    rng = np.random.default_rng(seed)
    cases = []
    for i in range(count):
        h, w = (int(v) for v in rng.integers(1, 10, 2))
        c = int(rng.choice([4, 8, 20]))
        dh, dw = (int(v) for v in rng.integers(1, 3, 2))
        sh, sw = (int(v) for v in rng.integers(1, 3, 2))
        top, bottom = (int(v) for v in rng.integers(0, 2 * dh + 1, 2))
        left, right = (int(v) for v in rng.integers(0, 2 * dw + 1, 2))
        oh = (h + top + bottom - 2 * dh - 1) // sh + 1
        ow = (w + left + right - 2 * dw - 1) // sw + 1
        if oh < 1 or ow < 1:
            oh, ow, top, left = max(oh, 1), max(ow, 1), 2 * dh, 2 * dw
        zx = [-128, 127, 0][i % 3] if i < 6 else int(rng.integers(-128, 128))
        x = rng.integers(-128, 128, (h, w, c))
        wt = rng.integers(-127, 128, (3, 3, c))
        cases.append(dict(h=h, w=w, c=c, sh=sh, sw=sw, dh=dh, dw=dw, top=top, left=left, oh=oh, ow=ow, zx=zx, x=x,
                          wt=wt, bias=rng.integers(-20000, 20000, c), mult=rng.integers(2**30, 2**31, c),
                          shift=rng.integers(-12, -4, c), zy=int(rng.integers(-128, 128)), lo=-128 if i % 2 else -100,
                          hi=127 if i % 4 else 90))
    return cases


def _np_window(c: dict[str, object]) -> np.ndarray:
    """The reference: taps outside the input are the zero point; TFLite's requantization."""
    x, wt = c["x"], c["wt"]
    assert isinstance(x, np.ndarray) and isinstance(wt, np.ndarray)
    h, w, oh, ow, sh, sw, dh, dw, top, left = (int(c[k]) for k in ("h", "w", "oh", "ow", "sh", "sw", "dh", "dw",  # type: ignore[call-overload]
                                                                   "top", "left"))
    acc = np.zeros((oh, ow, int(c["c"])), np.int64)  # type: ignore[call-overload]
    for ry in range(3):
        for rx in range(3):
            iy = np.arange(oh)[:, None] * sh - top + ry * dh
            ix = np.arange(ow)[None, :] * sw - left + rx * dw
            inside = (iy >= 0) & (iy < h) & (ix >= 0) & (ix < w)
            taps = np.where(inside[..., None], x[np.clip(iy, 0, h - 1), np.clip(ix, 0, w - 1)], c["zx"])
            acc += taps * wt[ry, rx]
    v = fp.np_multiply_by_quantized_multiplier(acc + c["bias"], c["mult"], c["shift"]) + c["zy"]
    return np.clip(v, c["lo"], c["hi"]).reshape(-1)


def _window_program(cases: list[dict[str, object]]) -> str:
    """C that runs utvm_mve_dw3x3_row_s8 row by row for every case and prints the outputs, one
    per line."""

    def arr(ctype: str, name: str, a: np.ndarray) -> str:
        return f"static {ctype} {name}[] = {{{', '.join(str(int(v)) for v in a.reshape(-1))}}};"

    lines = ['#include <stdio.h>', '#include "utvm/kernels_mve.h"']
    calls = []
    for i, c in enumerate(cases):
        n = int(c["oh"]) * int(c["ow"]) * int(c["c"])  # type: ignore[call-overload]
        lines += [arr("int8_t", f"x{i}", c["x"]), arr("int8_t", f"w{i}", c["wt"]),  # type: ignore[arg-type]
                  arr("int32_t", f"b{i}", c["bias"]), arr("int32_t", f"m{i}", c["mult"]),  # type: ignore[arg-type]
                  arr("int8_t", f"s{i}", c["shift"]), f"static int8_t y{i}[{n}];"]  # type: ignore[arg-type]
        row = f"y{i} + oy * {int(c['ow']) * int(c['c'])}, x{i}, {c['h']}, {c['w']}, {c['c']}, "  # type: ignore[call-overload]
        row += f"oy * {c['sh']} - {c['top']}, {c['ow']}, {c['sw']}, {c['left']}, {c['dh']}, {c['dw']}, w{i}, {c['zx']}"
        row += f", b{i}, m{i}, s{i}, 0, 0, {RQ_MULT_SHIFT8}, {c['zy']}, {c['lo']}, {c['hi']}"
        calls.append(f"  for (int32_t oy = 0; oy < {c['oh']}; ++oy) utvm_mve_dw3x3_row_s8({row});\n"
                     f"  for (int i = 0; i < {n}; ++i) printf(\"%d\\n\", y{i}[i]);")
    lines.append("int main(void) {")
    lines.extend(calls)
    lines.append("  return 0;\n}\n")
    return "\n".join(lines)


def _check_window_outputs(cases: list[dict[str, object]], stdout: str) -> None:
    got = np.array([int(v) for v in stdout.split()])
    want = np.concatenate([_np_window(c) for c in cases])
    assert got.shape == want.shape
    assert np.array_equal(got, want)


def test_window_fallback_matches_numpy(tmp_path: Path) -> None:
    if shutil.which("gcc") is None:
        pytest.skip("no host gcc")
    cases = _window_cases(5, 40)
    src = tmp_path / "window.c"
    src.write_text(_window_program(cases))
    exe = tmp_path / "window"
    subprocess.run(["gcc", *STRICT, f"-I{INCLUDE}", str(src), "-o", str(exe)], check=True)
    _check_window_outputs(cases, subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout)


@pytest.mark.skipif(toolchain_problem() is not None, reason="bare-metal toolchain missing")
def test_window_vector_matches_numpy_on_cortex_m55(tmp_path: Path) -> None:
    cases = _window_cases(7, 40)
    src = tmp_path / "window.c"
    src.write_text(_window_program(cases))
    board = get_board("mps3/an547")
    elf = qemu.build_firmware(board, [src], [INCLUDE], {}, tmp_path / "fw")
    run = qemu.run_firmware(board, elf)
    assert run.exit_code == 0 and run.fault is None
    _check_window_outputs(cases, run.stdout)


# ---------------------------------------------------------------------------------------------
# int8 ADD
# ---------------------------------------------------------------------------------------------

ACTIVATIONS = {"NONE": "none", "RELU": "relu", "RELU6": "relu6", "RELU_N1_TO_1": "relu_n1_to_1"}


def _np_add(a: np.ndarray, b: np.ndarray, za: int, zb: int, zy: int, params: tuple[int, ...], lo: int,
            hi: int) -> np.ndarray:
    """TFLite's int8 ADD from fixedpoint.py's numpy steps (shifts <= 0: SmallerThanOneExp)."""
    ma, sha, mb, shb, my, shy = params
    va = fp.np_multiply_by_quantized_multiplier((a.astype(np.int64) - za) << 20, ma, sha)
    vb = fp.np_multiply_by_quantized_multiplier((b.astype(np.int64) - zb) << 20, mb, shb)
    v = fp.np_multiply_by_quantized_multiplier(va + vb, my, shy) + zy
    return np.clip(v, lo, hi)


def _add_cases(seed: int, count: int) -> list[dict[str, object]]:
    """Random ADD layers: scales over 6 decades (input shifts down to -20 and more), the
    corner cases (equal scales, ratio 2, ratio 1e-9: multiplier 0), zero points with the
    extremes, every activation, sizes with tails of 0..15 elements."""
    rng = np.random.default_rng(seed)
    cases = []
    for i in range(count):
        sa, sb = 10.0 ** rng.uniform(-4, 0, 2)
        if i % 6 == 1:
            sb = sa
        elif i % 6 == 2:
            sb = sa * 2
        elif i == 3:
            sb = sa * 1e-9
        sy = max(sa, sb) * 10.0 ** rng.uniform(-0.5, 1.5)
        if i == 5:
            sy = max(sa, sb) * 1e-7  # output multiplier > 1: a left shift (plain C only)
        za, zb, zy = (int(v) for v in rng.integers(-128, 128, 3))
        if i % 4 == 0:
            za, zb, zy = -128, 127, -128
        act = list(ACTIVATIONS)[i % 4]
        n = int(rng.integers(1, 80)) if i % 3 else 16 * int(rng.integers(1, 6))
        a = rng.integers(-128, 128, n)
        b = rng.integers(-128, 128, n)
        a[:4] = [-128, 127, -128, za][:n] if n >= 4 else a[:4]
        b[:4] = [-128, -128, 127, zb][:n] if n >= 4 else b[:4]
        lo, hi = activation_range_int8(ACTIVATIONS[act], sy, zy)
        params = add_params(sa, sb, sy)
        cases.append(dict(a=a, b=b, za=za, zb=zb, zy=zy, params=params, lo=lo, hi=hi))
    return cases


def _add_program(cases: list[dict[str, object]]) -> str:
    """C that prints utvm_mve_add_s8's outputs of every case, one per line."""
    lines = ['#include <stdio.h>', '#include "utvm/kernels_mve.h"']
    calls = []
    for i, c in enumerate(cases):
        a, b = c["a"], c["b"]
        assert isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
        lines.append(f"static int8_t a{i}[] = {{{', '.join(map(str, a))}}};")
        lines.append(f"static int8_t b{i}[] = {{{', '.join(map(str, b))}}};")
        lines.append(f"static int8_t y{i}[{a.size}];")
        ma, sha, mb, shb, my, shy = c["params"]  # type: ignore[misc]
        calls.append(f"  utvm_mve_add_s8(y{i}, a{i}, b{i}, {a.size}, {c['za']}, {ma}, {sha}, {c['zb']}, {mb}, "
                     f"{shb}, {my}, {shy}, {c['zy']}, {c['lo']}, {c['hi']});\n"
                     f"  for (int i = 0; i < {a.size}; ++i) printf(\"%d\\n\", y{i}[i]);")
    lines.append("int main(void) {")
    lines.extend(calls)
    lines.append("  return 0;\n}\n")
    return "\n".join(lines)


def _check_add_outputs(cases: list[dict[str, object]], stdout: str) -> None:
    got = [int(v) for v in stdout.split()]
    want = np.concatenate([_np_add(c["a"], c["b"], c["za"], c["zb"], c["zy"], c["params"],  # type: ignore[arg-type]
                                   c["lo"], c["hi"]) for c in cases])  # type: ignore[arg-type]
    assert np.array_equal(np.array(got), want)


def test_add_params_shapes() -> None:
    """The larger-scale input has multiplier 2**30 and shift 0 (the vector form relies on it);
    the other one a right shift."""
    for sa, sb in [(0.1, 0.04), (0.04, 0.1), (0.3, 0.3), (0.2, 0.1), (0.5, 0.4999999999)]:
        ma, sha, mb, shb, _, shy = add_params(sa, sb, 0.07)
        big = (ma, sha) if sa >= sb else (mb, shb)
        small = (mb, shb) if sa >= sb else (ma, sha)
        assert big == (1 << 30, 0)
        assert small == (1 << 30, 0) or small[1] < 0
        assert shy < 0


def test_add_fallback_matches_numpy(tmp_path: Path) -> None:
    if shutil.which("gcc") is None:
        pytest.skip("no host gcc")
    cases = _add_cases(2, 40)
    src = tmp_path / "add.c"
    src.write_text(_add_program(cases))
    exe = tmp_path / "add"
    subprocess.run(["gcc", *STRICT, f"-I{INCLUDE}", str(src), "-o", str(exe)], check=True)
    _check_add_outputs(cases, subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout)


@pytest.mark.skipif(toolchain_problem() is not None, reason="bare-metal toolchain missing")
def test_add_vector_matches_numpy_on_cortex_m55(tmp_path: Path) -> None:
    cases = _add_cases(3, 40)
    src = tmp_path / "add.c"
    src.write_text(_add_program(cases))
    board = get_board("mps3/an547")
    elf = qemu.build_firmware(board, [src], [INCLUDE], {}, tmp_path / "fw")
    run = qemu.run_firmware(board, elf)
    assert run.exit_code == 0 and run.fault is None
    _check_add_outputs(cases, run.stdout)


def _add_model(path: Path, shape: tuple[int, ...], sa: float, za: int, sb: float, zb: int, sy: float, zy: int,
               activation: str = "NONE") -> Path:
    m = ModelBuilder("add")
    a = m.add_tensor("a", shape, "int8", scale=sa, zero_point=za)
    b = m.add_tensor("b", shape, "int8", scale=sb, zero_point=zb)
    y = m.add_tensor("output", shape, "int8", scale=sy, zero_point=zy)
    m.add_operator("ADD", [a, b], [y], {"fused_activation_function": activation})
    path.write_bytes(m.finish([a, b], [y]))
    return path


ADD_CASES = {
    # ResNet-like: a ReLU add, the second input of the larger scale, 16 elements per step
    "add_resnet": ((1, 4, 4, 16), 0.039, -128, 0.104, 4, 0.051, -128, "RELU"),
    # 105 elements: 6 steps and a tail of 9 (4, 4, 1 under a predicate)
    "add_tail": ((1, 3, 5, 7), 0.09, 100, 0.02, -5, 0.07, 3, "NONE"),
    "add_equal_scales": ((1, 2, 3, 5), 0.05, 127, 0.05, -128, 0.1, 0, "RELU6"),
    "add_three": ((1, 1, 1, 3), 0.5, 0, 0.0004, 17, 0.3, -20, "NONE"),
}


@pytest.mark.parametrize("name", sorted(ADD_CASES))
def test_add_kernel_taken(tmp_path: Path, name: str) -> None:
    g = load_model(_add_model(tmp_path / "m.tflite", *ADD_CASES[name]))  # type: ignore[arg-type]
    kdef = helium_kernel(g, g.ops[0])
    assert kdef is not None
    assert all(a.constant is None and not a.scratch for a in kdef.args)


def test_float_add_left_to_generic(tmp_path: Path) -> None:
    m = ModelBuilder("add")
    a = m.add_tensor("a", (1, 4), "float32")
    b = m.add_tensor("b", (1, 4), "float32")
    y = m.add_tensor("output", (1, 4), "float32")
    m.add_operator("ADD", [a, b], [y], {"fused_activation_function": "NONE"})
    path = tmp_path / "f.tflite"
    path.write_bytes(m.finish([a, b], [y]))
    g = load_model(path)
    assert helium_kernel(g, g.ops[0]) is None


def test_add_generated_c_compiles_strictly(tmp_path: Path) -> None:
    compilers = _compilers()
    if not compilers:
        pytest.skip("no C compiler")
    out = tmp_path / "out"
    compile_model(_add_model(tmp_path / "m.tflite", *ADD_CASES["add_tail"]), out,  # type: ignore[arg-type]
                  CompileOptions(cpu="cortex-m55"))
    src = next((out / "codegen" / "host" / "src").glob("*_lib0.c"))
    assert "utvm_mve_add_s8" in src.read_text()
    for cc, flags in compilers:
        subprocess.run([cc, *STRICT, *flags, f"-I{out / 'runtime' / 'include'}", "-c", str(src), "-o",
                        str(tmp_path / "k.o")], check=True)


@pytest.mark.skipif(toolchain_problem() is not None, reason="bare-metal toolchain missing")
@pytest.mark.parametrize("name", sorted(ADD_CASES))
def test_add_bit_exact_on_cortex_m55(tmp_path: Path, name: str) -> None:
    shape = ADD_CASES[name][0]
    model = _add_model(tmp_path / f"{name}.tflite", *ADD_CASES[name])  # type: ignore[arg-type]
    rng = np.random.default_rng(4)
    inputs = []
    for k, first in enumerate(([-128, 127, -128, 127], [-128, -128, 127, 127])):
        x = rng.integers(-128, 128, int(np.prod(shape))).astype(np.int8)
        x[:4] = first[:x.size] if x.size >= 4 else x[:4]
        path = tmp_path / f"in{k}.npy"
        np.save(path, x.reshape(shape))
        inputs.append(path)
    report = run_model(model, "mps3/an547", inputs=inputs, workdir=tmp_path / "work")
    assert report.outputs_match_reference
    assert report.max_abs_diff == 0


#: depthwise layers utvm_mve_dwg_s8 takes (stride 1 and 2, rows and columns, with and without a
#: clamp: its three loops), compiled with --max-flash below their default constants
COMPACT_DW_CASES = ["dw3x3_s2_same", "dw3x3_w4", "dw3x3_w9_s2", "kws_dw_unclamped"]


@pytest.mark.skipif(toolchain_problem() is not None, reason="bare-metal toolchain missing")
@pytest.mark.parametrize("name", COMPACT_DW_CASES)
def test_depthwise_compact_records_bit_exact_on_cortex_m55(tmp_path: Path, name: str) -> None:
    """--max-flash below a utvm_mve_dwg_s8 layer's constants: its compact records (knob records,
    17 bytes a channel instead of 32, expanded into the scratch per pass and block), bit-exact."""
    kwargs = CASES.get(name) or dict(input_shape=(1, 10, 5, 16), depthwise=True, seed=60)
    path = _model(tmp_path, name, **kwargs)
    default = compile_model(path, tmp_path / "default", CompileOptions(cpu="cortex-m55"))
    c = int(kwargs["input_shape"][3])  # type: ignore[index]
    report = run_model(path, "mps3/an547", workdir=tmp_path / "work", max_flash=default.sources.constants_bytes - 1)
    assert report.outputs_match_reference
    assert report.max_abs_diff == 0
    assert report.constants_bytes == default.sources.constants_bytes - 15 * c
