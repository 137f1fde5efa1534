"""The Helium layer helpers of kernels_mve.h against numpy, for many seeded random layers.

Each helper runs in a C program that prints its outputs: built with the host gcc (the plain-C
fallbacks) and for mps3/an547 (the vector code, at -O2 and at -O0, where the inline assembly
that needs constant operands is left out), and compared with a numpy reference of TFLite's
arithmetic (taps outside the input are the input zero point, folded bias,
MultiplyByQuantizedMultiplier per channel, output zero point, activation clamp).

- utvm_mve_conv42_s8: kernel sizes 1..5, strides 1..3, dilations 1..2, paddings from none to
  the whole window, input channels 1..40 (multiples of 16 and not), output channels 1..40 (odd
  ones: a zero filter vector), pointwise layers read in place (16 / cin pixels per vector),
  per-tensor and per-channel requantization (large biases, left shifts, zero shifts, only right
  shifts), pruned channels (weights all zero, biases near 2**30: a constant output), extreme zero
  points and activation ranges.
- utvm_mve_fc4_s8 (fully connected): depths 1..700, 1..40 units, batches 1..3.
- Whole layers of each kind of read (bands along rows and columns, pointwise in place with 2
  and 4 pixels per row, gathered depthwise in both orientations, at stride 2, on tiny maps;
  fully connected with depths up to 8 and a last partial block) compiled by utvm and compared
  with TFLite Micro on mps3/an547.
- utvm_mve_dwg_s8 (3x3 depthwise): sizes from 1 x 2 to 13 x 13, strides 1 and 2, paddings 0..2
  on each side, 8..48 channels, both orientations, tiles of 8 or 16 channels and of every
  number of lines their gathers reach (passes overlapping at the end, groups overlapping at the
  end of the lines, units padded), the same requantization variety.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from helium_logs import tiny_plan_log
from tflite_builder import conv2d_model, fully_connected_model
from toolchains import toolchain_problem
from utvm.importer import load_model
from utvm.kernels import fixedpoint as fp
from utvm.kernels import helium as mve
from utvm.kernels.target import Target
from utvm.ops import variant
from utvm.ops.depthwise_conv2d import helium_plans
from utvm.run import qemu
from utvm.run.boards import get_board
from utvm.run.runner import run_model

INCLUDE = Path(__file__).resolve().parents[1] / "lib" / "crt" / "include"
STRICT = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror"]

Case = dict[str, object]


def _requant(rng: np.random.Generator, i: int, cout: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(folded biases, multipliers, shifts) in one of the formats of pack_requant: per-channel
    right shifts (packed), per-tensor, large biases (int8 shift array), zero and left shifts."""
    kind = i % 5
    bias = rng.integers(-30000, 30000, cout)
    mult = rng.integers(2**30, 2**31, cout)
    shift = rng.integers(-14, -5, cout)
    if kind == 1:  # per tensor
        mult[:], shift[:] = mult[0], shift[0]
    elif kind == 2:  # biases too large to share their word with the shift
        bias = rng.integers(-(2**29), 2**29, cout)
        shift = rng.integers(-20, -10, cout)
    elif kind == 3:  # some shifts 0
        shift[rng.random(cout) < 0.5] = 0
        shift[shift == 0] = 0
    elif kind == 4:  # left shifts on small accumulators
        shift = rng.integers(-3, 3, cout)
    return bias, mult, shift


def _np_requant(acc: np.ndarray, c: Case) -> np.ndarray:
    v = fp.np_multiply_by_quantized_multiplier(acc + c["bias"], c["mult"], c["shift"]) + c["zy"]
    return np.clip(v, c["lo"], c["hi"])


def _conv_cases(seed: int, count: int) -> list[Case]:
    rng = np.random.default_rng(seed)
    cases: list[Case] = []
    for i in range(count):
        pointwise = i % 4 == 0
        if pointwise:
            kh = kw = sh = sw = dh = dw = 1
            cin = int(rng.choice([1, 2, 4, 8, 16, 3, 24, 32]))
        else:
            kh, kw = (int(v) for v in rng.integers(1, 6, 2))
            sh, sw = (int(v) for v in rng.integers(1, 4, 2))
            dh, dw = (int(v) for v in rng.integers(1, 3, 2))
            cin = int(rng.choice([1, 3, 4, 8, 16, 32, 5, 40]))
        h, w = (int(v) for v in rng.integers(1, 11, 2))
        cout = int(rng.choice([1, 2, 3, 8, 16, 7, 20, 40]))
        top = left = bottom = right = 0
        if not pointwise and i % 3:
            top, bottom = (int(v) for v in rng.integers(0, (kh - 1) * dh + 1, 2))
            left, right = (int(v) for v in rng.integers(0, (kw - 1) * dw + 1, 2))
        oh = (h + top + bottom - (kh - 1) * dh - 1) // sh + 1
        ow = (w + left + right - (kw - 1) * dw - 1) // sw + 1
        if oh < 1 or ow < 1:
            top, bottom, left, right = (kh - 1) * dh, 0, (kw - 1) * dw, 0
            oh = (h + top - (kh - 1) * dh - 1) // sh + 1
            ow = (w + left - (kw - 1) * dw - 1) // sw + 1
        bias, mult, shift = _requant(rng, i, cout)
        small = i % 5 == 4
        x = rng.integers(-3, 4, (h, w, cin)) if small else rng.integers(-128, 128, (h, w, cin))
        wt = rng.integers(-3, 4, (cout, kh, kw, cin)) if small else rng.integers(-127, 128, (cout, kh, kw, cin))
        if i % 7 == 3:  # pruned channels: weights all zero, biases near 2**30, any shift
            dead = rng.random(cout) < (1.0 if i % 21 == 3 else 0.5)
            wt[dead] = 0
            bias[dead] = rng.choice([-(2**30), 2**30, 2**30 - 64], int(dead.sum()))
            shift[dead] = rng.integers(-31, 1, int(dead.sum()))
        zx = [-128, 127, 0][i % 3] if i < 6 else int(rng.integers(-128, 128))
        if small:
            zx = int(rng.integers(-3, 4))
        zy = int(rng.integers(-128, 128))
        lo, hi = (-128, 127) if i % 2 else tuple(sorted(int(v) for v in rng.integers(-128, 128, 2)))
        cases.append(dict(h=h, w=w, cin=cin, cout=cout, kh=kh, kw=kw, sh=sh, sw=sw, dh=dh, dw=dw, top=top,
                          left=left, oh=oh, ow=ow, zx=zx, x=x, wt=wt, bias=bias, mult=mult, shift=shift, zy=zy,
                          lo=lo, hi=hi))
    return cases


def _np_conv(c: Case) -> np.ndarray:
    x, wt = c["x"], c["wt"]
    assert isinstance(x, np.ndarray) and isinstance(wt, np.ndarray)
    g = {k: int(c[k]) for k in ("h", "w", "kh", "kw", "oh", "ow", "sh", "sw", "dh", "dw", "top", "left", "zx")}  # type: ignore[call-overload]
    acc = np.zeros((g["oh"], g["ow"], wt.shape[0]), np.int64)
    for ry in range(g["kh"]):
        for rx in range(g["kw"]):
            iy = np.arange(g["oh"])[:, None] * g["sh"] - g["top"] + ry * g["dh"]
            ix = np.arange(g["ow"])[None, :] * g["sw"] - g["left"] + rx * g["dw"]
            inside = (iy >= 0) & (iy < g["h"]) & (ix >= 0) & (ix < g["w"])
            taps = np.where(inside[..., None], x[np.clip(iy, 0, g["h"] - 1), np.clip(ix, 0, g["w"] - 1)], g["zx"])
            acc += taps @ wt[:, ry, rx, :].T
    return _np_requant(acc, c).reshape(-1)


def _arr(ctype: str, name: str, a: np.ndarray) -> str:
    return (f"static const {ctype} {name}[] __attribute__((aligned(16))) = "
            f"{{{', '.join(str(int(v)) for v in a.reshape(-1))}}};")


def _program(cases: list[Case], one: Callable[[int, Case], tuple[list[str], str]]) -> str:
    """C that runs the helper call of every case (``one``: its declarations and call, writing
    y<i>) and prints its outputs, one per line."""
    lines = ["#include <stdio.h>", '#include "utvm/kernels_mve.h"']
    calls = []
    for i, c in enumerate(cases):
        decls, call = one(i, c)
        n = int(c["oh"]) * int(c["ow"]) * int(c["cout"])  # type: ignore[call-overload]
        lines += [*decls, f"static int8_t y{i}[{n}];"]
        calls.append(f"  {call};\n  for (int i = 0; i < {n}; ++i) printf(\"%d\\n\", y{i}[i]);")
    return "\n".join([*lines, "int main(void) {", *calls, "  return 0;\n}\n"])


def _conv_call(i: int, c: Case) -> tuple[list[str], str]:
    wt = c["wt"]
    assert isinstance(wt, np.ndarray)
    cin, cout = int(c["cin"]), int(c["cout"])  # type: ignore[call-overload]
    g = {k: int(c[k]) for k in ("oh", "ow", "kh", "kw", "sh", "sw", "dh", "dw", "top", "left")}  # type: ignore[call-overload]
    plan = mve.conv42_plan((g["oh"], g["ow"]), (g["kh"], g["kw"]), cin, (g["sh"], g["sw"]), (g["dh"], g["dw"]),
                           (g["top"], g["left"], g["top"], g["left"]))
    f = mve.conv42_filters(plan.taps(wt), plan.sub, tuple(np.asarray(c[n]) for n in ("bias", "mult", "shift")),
                           (int(c["zy"]), int(c["lo"]), int(c["hi"])))  # type: ignore[call-overload]
    decls = [_arr("int8_t", f"x{i}", c["x"]), _arr("int8_t", f"w{i}", f.data),  # type: ignore[arg-type]
             f"static int8_t col{i}[{plan.scratch}] __attribute__((aligned(16)));"]
    geo = ", ".join(str(c[k]) for k in ("h", "w", "cin", "oh", "ow", "kh", "kw", "sh", "sw", "dh", "dw", "top", "left"))
    return decls, (f"utvm_mve_conv42_s8(y{i}, (void*)x{i}, {geo}, (void*)w{i}, {f.nv}, {int(f.dead)}, {cout}, "
                   f"{plan.sub}, {plan.band}, {c['zx']}, col{i}, {f.mode}, {c['zy']}, {c['lo']}, {c['hi']})")


def _conv_program(cases: list[Case]) -> str:
    return _program(cases, _conv_call)


def _check(stdout: str, want: list[np.ndarray]) -> None:
    got = np.array([int(v) for v in stdout.split()])
    ref = np.concatenate(want)
    assert got.shape == ref.shape
    bad = np.flatnonzero(got != ref)
    assert bad.size == 0, f"{bad.size} outputs differ, first at {bad[:5]}: {got[bad[:5]]} != {ref[bad[:5]]}"


def _run_host(tmp_path: Path, program: str) -> str:
    if shutil.which("gcc") is None:
        pytest.skip("no host gcc")
    src = tmp_path / "k.c"
    src.write_text(program)
    exe = tmp_path / "k"
    subprocess.run(["gcc", *STRICT, "-fsanitize=undefined", "-fno-sanitize-recover", f"-I{INCLUDE}", str(src),
                    "-o", str(exe)], check=True)
    return subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout


def _run_m55(tmp_path: Path, program: str, opt: str) -> str:
    src = tmp_path / "k.c"
    src.write_text(program)
    board = get_board("mps3/an547")
    elf = qemu.build_firmware(board, [src], [INCLUDE], {}, tmp_path / "fw", ["-Wall", "-Wextra", "-Werror", opt])
    run = qemu.run_firmware(board, elf, timeout_s=int(__import__("os").environ.get("M55_TIMEOUT", "300")))
    assert run.exit_code == 0 and run.fault is None
    return run.stdout


# ---------------------------------------------------------------------------------------------
# utvm_mve_dwg_s8
# ---------------------------------------------------------------------------------------------


def _dw_cases(seed: int, count: int) -> list[Case]:
    rng = np.random.default_rng(seed)
    cases: list[Case] = []
    while len(cases) < count:
        i = len(cases)
        h, w = (int(v) for v in rng.integers(1, 14, 2))
        sh, sw = (int(v) for v in rng.integers(1, 3, 2))
        top, bottom, left, right = (int(v) for v in rng.integers(0, 3, 4))
        oh = (h + top + bottom - 3) // sh + 1
        ow = (w + left + right - 3) // sw + 1
        vertical = bool(i % 2)
        if oh < 1 or ow < 1 or (oh if vertical else ow) < 2:
            continue
        c = int(rng.choice([8, 16, 24, 32, 48]))
        sc = sw if vertical else sh
        cb = 16 if c % 16 == 0 and i % 4 == 0 else 8
        lines = int(rng.integers(1, min(5 if sc == 1 else 3, ow if vertical else oh) + 1)) if cb == 8 else 1
        cases.append(dict(h=h, w=w, cin=c, cout=c, kh=3, kw=3, sh=sh, sw=sw, dh=1, dw=1, top=top, left=left, oh=oh,
                          ow=ow, **_dw_values(rng, i, h, w, c), vertical=vertical, lines=lines, cb=cb))
    return cases


def _dw_values(rng: np.random.Generator, i: int, h: int, w: int, c: int) -> Case:
    """The input, 3x3 weights, requantization, zero points and clamp of random depthwise case i
    (every fifth one small values, the first six extreme input zero points)."""
    bias, mult, shift = _requant(rng, i, c)
    small = i % 5 == 4
    x = rng.integers(-3, 4, (h, w, c)) if small else rng.integers(-128, 128, (h, w, c))
    wt = rng.integers(-3, 4, (3, 3, c)) if small else rng.integers(-127, 128, (3, 3, c))
    zx = [-128, 127, 0][i % 3] if i < 6 else int(rng.integers(-128, 128))
    if small:
        zx = int(rng.integers(-3, 4))
    zy = int(rng.integers(-128, 128))
    lo, hi = (-128, 127) if i % 3 else tuple(sorted(int(v) for v in rng.integers(-128, 128, 2)))
    return dict(x=x, wt=wt, bias=bias, mult=mult, shift=shift, zx=zx, zy=zy, lo=lo, hi=hi)


def _np_dw(c: Case) -> np.ndarray:
    wt = c["wt"]
    assert isinstance(wt, np.ndarray)
    ch = wt.shape[-1]
    # a depthwise layer as a convolution whose filter of channel o only has weights on channel o
    full = np.zeros((ch, 3, 3, ch), np.int64)
    full[np.arange(ch), :, :, np.arange(ch)] = wt.transpose(2, 0, 1)
    return _np_conv({**c, "wt": full})


def _dw_call(i: int, c: Case) -> tuple[list[str], str]:
    wt = c["wt"]
    assert isinstance(wt, np.ndarray)
    ch = wt.shape[-1]
    vertical, nl = bool(c["vertical"]), int(c["lines"])  # type: ignore[call-overload]
    plan = mve.dwg_plan((int(c["oh"]), int(c["ow"])), ch, (int(c["sh"]), int(c["sw"])), vertical, nl,  # type: ignore[call-overload]
                        int(c["cb"]))  # type: ignore[call-overload]
    assert plan is not None
    params = tuple(np.asarray(c[n]) for n in ("bias", "mult", "shift"))
    # every other case whose biases fit: the compact records (17 bytes a channel, expanded per pass)
    compact = i % 2 == 1 and mve.dwg_compact_fits(params)  # type: ignore[arg-type]
    rec = mve.dwg_records(wt, vertical, params, compact)  # type: ignore[arg-type]
    assert rec.size == (mve.DWG_COMPACT_BYTES if compact else mve.DWG_RECORD) * ch
    decls, geo, right = _dw_decls(i, c, rec, plan.scratch + (plan.cb * mve.DWG_RECORD if compact else 0))
    mode = right | (mve.DWG_COMPACT if compact else 0)
    return decls, (f"utvm_mve_dwg_s8(y{i}, (void*)x{i}, {geo}, (void*)w{i}, {c['zx']}, {c['zy']}, {c['lo']}, "
                   f"{c['hi']}, {mode}, {int(vertical)}, {nl}, {plan.cb}, s{i})")


def _dw_decls(i: int, c: Case, const: np.ndarray, scratch: int) -> tuple[list[str], str, int]:
    """The declarations of a depthwise case's input, constant and scratch, its geometry
    arguments and whether every shift is a right shift."""
    decls = [_arr("int8_t", f"x{i}", c["x"]), _arr("int8_t", f"w{i}", const),  # type: ignore[arg-type]
             f"static int8_t s{i}[{scratch}] __attribute__((aligned(16)));"]
    geo = ", ".join(str(c[k]) for k in ("h", "w", "cin", "oh", "ow", "sh", "sw", "top", "left"))
    return decls, geo, int(np.all(np.asarray(c["shift"]) <= -1))


def _dw_program(cases: list[Case]) -> str:
    return _program(cases, _dw_call)


# ---------------------------------------------------------------------------------------------
# utvm_mve_dwt_s8
# ---------------------------------------------------------------------------------------------


def _dwt_cases(seed: int, count: int) -> list[Case]:
    """Tiny maps (1 x 1 .. 6 x 6 inputs), strides 1 and 2, SAME (paddings 0..1 before, the rest
    after) and VALID, channel counts whole blocks of 16 and not, the requantization variety."""
    rng = np.random.default_rng(seed)
    cases: list[Case] = []
    while len(cases) < count:
        i = len(cases)
        h, w = (int(v) for v in rng.integers(1, 7, 2))
        sh, sw = (int(v) for v in rng.integers(1, 3, 2))
        if i % 4 == 3:  # VALID
            top = left = bottom = right = 0
        else:  # SAME
            ph, pw = max((-(-h // sh) - 1) * sh + 3 - h, 0), max((-(-w // sw) - 1) * sw + 3 - w, 0)
            top, left, bottom, right = ph // 2, pw // 2, ph - ph // 2, pw - pw // 2
        oh, ow = (h + top + bottom - 3) // sh + 1, (w + left + right - 3) // sw + 1
        if oh < 1 or ow < 1:
            continue
        c = int(rng.choice([1, 3, 8, 16, 20, 24, 32, 40, 64] if i % 10 else [128, 136, 256]))
        cases.append(dict(h=h, w=w, cin=c, cout=c, kh=3, kw=3, sh=sh, sw=sw, dh=1, dw=1, top=top, left=left, oh=oh,
                          ow=ow, **_dw_values(rng, i, h, w, c)))
    return cases


def _dwt_call(i: int, c: Case) -> tuple[list[str], str]:
    wt = c["wt"]
    assert isinstance(wt, np.ndarray)
    g = {k: int(c[k]) for k in ("h", "w", "oh", "ow", "sh", "sw", "top", "left", "zx")}  # type: ignore[call-overload]
    # the kernel's folded biases: TFLite's bias minus zx times all 9 weights; the reference's
    # acc (taps outside the input are zx) plus bias is the same sum
    lay = mve.dwt_layout(wt, (g["h"], g["w"]), (g["oh"], g["ow"]), (g["sh"], g["sw"]), (g["top"], g["left"]), g["zx"],
                         tuple(np.asarray(c[n]) for n in ("bias", "mult", "shift")))  # type: ignore[arg-type]
    assert lay is not None
    decls, geo, right = _dw_decls(i, c, lay.data, lay.scratch)
    return decls, (f"utvm_mve_dwt_s8(y{i}, (void*)x{i}, {geo}, (void*)w{i}, {c['zy']}, {c['lo']}, {c['hi']}, "
                   f"{right}, {lay.rcls}, {lay.ccls}, {lay.ncc}, {lay.ns}, {c['zx']}, {int(lay.pad)}, s{i})")


def _dwt_program(cases: list[Case]) -> str:
    return _program(cases, _dwt_call)


# ---------------------------------------------------------------------------------------------
# utvm_mve_fc4_s8
# ---------------------------------------------------------------------------------------------


def _fc_cases(seed: int, count: int) -> list[Case]:
    """Fully connected layers as 1 x 1 convolutions of batch x 1 pixels: depths 1..700 (whole
    16-byte steps and not), 1..40 units (whole blocks of 8 and not), batches 1..3."""
    rng = np.random.default_rng(seed)
    cases: list[Case] = []
    for i in range(count):
        depth = int(rng.choice([1, 4, 8, 12, 16, 32, 64, 100, 128, 256, 640, 700]))
        units = int(rng.choice([1, 2, 3, 4, 8, 10, 12, 16, 40]))
        batch = int(rng.integers(1, 4))
        bias, mult, shift = _requant(rng, i, units)
        small = i % 5 == 4
        x = rng.integers(-3, 4, (batch, 1, depth)) if small else rng.integers(-128, 128, (batch, 1, depth))
        wt = rng.integers(-3, 4, (units, 1, 1, depth)) if small else rng.integers(-127, 128, (units, 1, 1, depth))
        lo, hi = (-128, 127) if i % 2 else tuple(sorted(int(v) for v in rng.integers(-128, 128, 2)))
        cases.append(dict(h=batch, w=1, cin=depth, cout=units, kh=1, kw=1, sh=1, sw=1, dh=1, dw=1, top=0, left=0,
                          oh=batch, ow=1, zx=0, x=x, wt=wt, bias=bias, mult=mult, shift=shift,
                          zy=int(rng.integers(-128, 128)), lo=lo, hi=hi))
    return cases


def _fc_call(i: int, c: Case) -> tuple[list[str], str]:
    wt = c["wt"]
    assert isinstance(wt, np.ndarray)
    units, depth = wt.shape[0], wt.shape[-1]
    blocks, mode = mve.fc4_blocks(wt.reshape(units, depth), tuple(np.asarray(c[n]) for n in ("bias", "mult",
                                                                                             "shift")))
    decls = [_arr("int8_t", f"x{i}", c["x"]), _arr("int8_t", f"w{i}", blocks)]  # type: ignore[arg-type]
    return decls, (f"utvm_mve_fc4_s8(y{i}, (void*)x{i}, {c['h']}, {depth}, {units}, (void*)w{i}, {mode}, "
                   f"{c['zy']}, {c['lo']}, {c['hi']})")


def _fc_program(cases: list[Case]) -> str:
    return _program(cases, _fc_call)


#: per helper: the random cases (seed, count), the C program and the numpy reference of a case
HELPERS: dict[str, tuple[Callable[[int, int], list[Case]], Callable[[list[Case]], str],
                         Callable[[Case], np.ndarray]]] = {
    "conv42": (_conv_cases, _conv_program, _np_conv),
    "dwg": (_dw_cases, _dw_program, _np_dw),
    "dwt": (_dwt_cases, _dwt_program, _np_dw),
    "fc4": (_fc_cases, _fc_program, _np_conv),
}


@pytest.mark.parametrize("helper", sorted(HELPERS))
def test_fallback_matches_numpy(tmp_path: Path, helper: str) -> None:
    make, program, reference = HELPERS[helper]
    cases = make(1, 60)
    _check(_run_host(tmp_path, program(cases)), [reference(c) for c in cases])


@pytest.mark.skipif(toolchain_problem() is not None, reason="bare-metal toolchain missing")
@pytest.mark.parametrize("opt", ["-O2", "-O0"])
@pytest.mark.parametrize("helper", sorted(HELPERS))
def test_vector_matches_numpy_on_cortex_m55(tmp_path: Path, helper: str, opt: str) -> None:
    make, program, reference = HELPERS[helper]
    # -O0: fewer cases (every call inlines the whole unoptimized helper)
    cases = make(2, 60) if opt == "-O2" else make(3, 16)
    _check(_run_m55(tmp_path, program(cases), opt), [reference(c) for c in cases])


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="no arm-none-eabi-gcc")
@pytest.mark.parametrize("flags", [["-O1"], ["-Os"], ["-O3"], ["-O2", "-fno-omit-frame-pointer"], ["-Og"]])
def test_vector_code_compiles_with_other_flags(tmp_path: Path, flags: list[str]) -> None:
    """The inline assembly of the helpers needs at most 13 general registers (the frame pointer
    may be reserved) and constants only where the optimizer provides them: every helper compiles
    for the Cortex-M55 with other optimization levels and a frame pointer."""
    for helper, (make, program, _) in HELPERS.items():
        src = tmp_path / f"{helper}.c"
        src.write_text(program(make(4, 20)))
        subprocess.run(["arm-none-eabi-gcc", "-std=c99", *flags, "-Wall", "-Wextra", "-Werror", "-mcpu=cortex-m55",
                        "-mthumb", "-mfloat-abi=hard", f"-I{INCLUDE}", "-c", str(src), "-o", str(tmp_path / "k.o")],
                       check=True)


# ---------------------------------------------------------------------------------------------
# whole layers against TFLite Micro
# ---------------------------------------------------------------------------------------------

#: (model builder, its arguments, the helper and its read mode: conv42's band / sub, dwg's orientation
#: or utvm_mve_dwt_s8, "tiny", given by a tuning log)
LAYERS: dict[str, tuple[Callable[..., bytes], dict[str, object], str]] = {
    "rgb_s2_band_rows": (conv2d_model, dict(input_shape=(1, 13, 14, 3), out_channels=8, stride=(2, 2), seed=40,
                                            activation="RELU"), "band1"),
    "kws_first_band_cols": (conv2d_model, dict(input_shape=(1, 17, 10, 1), out_channels=16, kernel=(10, 4),
                                               stride=(2, 2), seed=41), "band2"),
    "pointwise_k8": (conv2d_model, dict(input_shape=(1, 5, 7, 8), out_channels=12, kernel=(1, 1), seed=42,
                                        activation="RELU6"), "sub2"),
    "pointwise_k4": (conv2d_model, dict(input_shape=(1, 3, 5, 4), out_channels=5, kernel=(1, 1), seed=43), "sub4"),
    "pointwise_k64_odd_pixels": (conv2d_model, dict(input_shape=(1, 5, 5, 64), out_channels=64, kernel=(1, 1),
                                                    seed=44), "band3"),
    "conv3x3_c64_gathered": (conv2d_model, dict(input_shape=(1, 4, 5, 64), out_channels=10, seed=50), "pack"),
    "conv3x3_c16_band_wide": (conv2d_model, dict(input_shape=(1, 6, 7, 16), out_channels=6, seed=51,
                                                 activation="RELU"), "band1"),
    "dw_tall_columns": (conv2d_model, dict(input_shape=(1, 13, 3, 16), depthwise=True, seed=45), "cols"),
    "dw_s2_c32": (conv2d_model, dict(input_shape=(1, 9, 9, 32), depthwise=True, stride=(2, 2), seed=46,
                                     activation="RELU"), "rows"),
    "dw_3x3_map": (conv2d_model, dict(input_shape=(1, 3, 3, 24), depthwise=True, seed=47), "tiny"),
    "dw_tiny_s2_c128": (conv2d_model, dict(input_shape=(1, 6, 6, 128), depthwise=True, stride=(2, 2), seed=52,
                                           activation="RELU6"), "tiny"),
    "dw_tiny_3x3_c256": (conv2d_model, dict(input_shape=(1, 3, 3, 256), depthwise=True, seed=53), "tiny"),
    "dw_tiny_5x5_c20_valid": (conv2d_model, dict(input_shape=(1, 5, 5, 20), depthwise=True, padding="VALID",
                                                 per_channel=False, seed=54, activation="RELU"), "tiny"),
    "dw_tiny_4x5_c36_s2": (conv2d_model, dict(input_shape=(1, 4, 5, 36), depthwise=True, stride=(2, 1), seed=55),
                           "tiny"),
    "dw_tiny_1x1_c8": (conv2d_model, dict(input_shape=(1, 1, 1, 8), depthwise=True, seed=56), "tiny"),
    # 1,080 products: past helium_tiny's limit, so that the run takes utvm_mve_fc4_s8's depth <= 8 form
    "fc_depth6_units180": (fully_connected_model, dict(batch=1, in_features=6, out_features=180, per_channel=True,
                                                       seed=48), "fc"),
    "fc_depth100_units7_batch2": (fully_connected_model, dict(batch=2, in_features=100, out_features=7, seed=49,
                                                              activation="RELU"), "fc"),
}


def _read_mode(path: Path) -> str:
    """How the Helium kernel of the model's only layer reads its input (conv42's plan, dwg's
    orientation, "k" for helium_k, "fc")."""
    g = load_model(path)
    op = g.ops[0]
    m55 = Target.for_cpu("cortex-m55")
    built = [v.build(g, op, m55) for name in ("helium", "helium_k") if (v := variant(op.kind, name)) is not None]
    assert any(k is not None for k in built)
    if op.kind == "fully_connected":
        return "fc"
    y = g.tensors[op.outputs[0]]
    if op.kind == "depthwise_conv2d":
        plan = helium_plans(g, op)[0]
        return plan if plan == "tiny" else plan[:4]
    w = g.tensors[op.inputs[1]]
    plan = mve.conv42_plan(y.shape[1:3], w.shape[1:3], w.shape[3], op.attrs["strides"], op.attrs["dilation"],
                           op.attrs["padding"])
    return f"band{plan.band}" if plan.band else f"sub{plan.sub}" if plan.sub > 1 else "pack"


@pytest.mark.skipif(toolchain_problem() is not None, reason="bare-metal toolchain missing")
@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_bit_exact_with_tflite_micro_on_cortex_m55(tmp_path: Path, name: str) -> None:
    build, kwargs, mode = LAYERS[name]
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(build(**kwargs))
    log = None
    if mode == "tiny":
        assert _read_mode(path) != "tiny"  # untuned: the general kernel
        log = tiny_plan_log(tmp_path, path)
    else:
        assert _read_mode(path) == mode
    report = run_model(path, "mps3/an547", workdir=tmp_path / "work", tuning_log=log)
    assert report.outputs_match_reference
    assert report.max_abs_diff == 0
