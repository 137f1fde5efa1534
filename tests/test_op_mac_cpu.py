"""The per-CPU kernels of the multiply-accumulate operators beyond int8 CONV_2D / DEPTHWISE_CONV_2D /
FULLY_CONNECTED: the 16x8 (int16 x int8) conv, depthwise and fully connected layers, TRANSPOSE_CONV
(int8, 16x8) and BATCH_MATMUL (int8), on DSP CPUs (dsp_* variants, utvm/kernels.h) and Helium
CPUs (helium* variants, utvm/kernels_mve.h).

- the helpers against numpy on the weight layouts of utvm/kernels/mac16.py, with random data at
  the int16 / int8 extremes, unaligned inputs and every tail length: plain C on the host, the
  DSP assembly on the Cortex-M4 (mps2/an386), MVE on the Cortex-M55 (mps3/an547);
- the short form of TFLite's int64 requantization against its numpy reference;
- per operator and type, 14 to 24 seeded layers (shapes, strides, dilations, paddings, bias
  types, quantization, fused activations, sums too large for int32) side by side in one model
  against TFLite Micro, on the host and on both boards; each layer's kernel is the variant
  meant for the CPU.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from mac_cases import Layers
from op_check import check_cases
from tflite_builder import ModelBuilder
from toolchains import toolchain_problem
from utvm.importer import load_model
from utvm.kernels import fixedpoint as fp
from utvm.kernels import mac16
from utvm.kernels.target import Target
from utvm.ops import get
from utvm.run import qemu
from utvm.run.boards import get_board

INCLUDE = Path(__file__).resolve().parents[1] / "lib" / "crt" / "include"
STRICT = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror"]
BOARDS = ["mps2/an386", "mps3/an547"]
needs_qemu = pytest.mark.skipif(toolchain_problem() is not None, reason="bare-metal toolchain missing")

# ---------------------------------------------------------------------------------------------
# helpers of utvm/kernels.h and kernels_mve.h against numpy


def _carr(ctype: str, name: str, a: np.ndarray) -> str:
    return f"static {ctype} {name}[{max(a.size, 1)}] = {{{', '.join(str(int(v)) for v in a.reshape(-1)) or '0'}}};"


def _extremes(rng: np.random.Generator, shape: tuple[int, ...], lo: int, hi: int) -> np.ndarray:
    """Random integers with a quarter of them at the extremes of [lo, hi]."""
    a = rng.integers(lo, hi + 1, shape)
    pick = rng.random(shape)
    a[pick < 0.125] = lo
    a[(pick >= 0.125) & (pick < 0.25)] = hi
    return a


def _helper_cases(seed: int) -> tuple[list[str], list[str], list[np.ndarray]]:
    """C declarations, C statements printing results, and the expected results (in order)."""
    rng = np.random.default_rng(seed)
    decls: list[str] = []
    body: list[str] = []
    want: list[np.ndarray] = []

    def emit(call: str, out: str, n: int) -> None:
        body.append(f"  {call};\n  for (int i = 0; i < {n}; ++i) printf(\"%ld\\n\", (long){out}[i]);")

    for i, length in enumerate([*range(1, 21), 37, 64, 200]):
        # utvm_mac4_s16 / utvm_mve_mac4_s16: 4 rows of int8 weights against int16 inputs at an
        # odd element offset (2-byte aligned only)
        w = _extremes(rng, (4, length), -128, 127)
        x = _extremes(rng, (length + 1,), -32768, 32767)
        start = rng.integers(-(1 << 20), 1 << 20, 4)
        want.append(start + w @ x[1:])
        for helium, wide in ((False, False), (True, False), (False, True)):
            rows = mac16.Rows.build(w, [length], helium, wide=wide)
            tag = f"{'v' if helium else 'w' if wide else 'd'}{i}"
            decls += [_carr("int8_t", f"w{tag}", rows.data), _carr("int16_t", f"x{tag}", x),
                      _carr("int32_t", f"a{tag}", start)]
            emit(f"{rows.helper}(a{tag}, x{tag} + 1, w{tag}, {length})", f"a{tag}", 4)
    want = [w for k, w in enumerate(want) for _ in range(3)]

    # utvm_mulhr_s32: (x * m + 2**31) >> 32
    xs = _extremes(rng, (64,), -(1 << 31), (1 << 31) - 1)
    ms = rng.integers(0, 1 << 31, 64)
    decls += [_carr("int32_t", "mx", xs), _carr("int32_t", "mm", ms), "static int32_t mr[64];"]
    emit("for (int k = 0; k < 64; ++k) mr[k] = utvm_mulhr_s32(mx[k], mm[k])", "mr", 64)
    want.append((xs * ms + (1 << 31)) >> 32)

    # depthwise pairs and taps, by offsets and by address with inside flags
    for i, taps in enumerate((1, 2, 3, 9)):
        x = _extremes(rng, (taps, 4), -32768, 32767)
        w = _extremes(rng, (taps, 4), -128, 127)
        inside = rng.random(taps) < 0.7
        words = mac16.dw4_weights(w)
        decls += [_carr("int16_t", f"dx{i}", x), _carr("int32_t", f"dw{i}", words), f"static int32_t da{i}[4];",
                  f"static int32_t db{i}[4];"]
        calls = []
        for t in range(0, taps - 1, 2):
            calls.append(f"utvm_dw4_pair_s16(da{i}, dx{i}, {4 * t}, {4 * t + 4}, dw{i} + {4 * (t // 2)})")
            calls.append(f"utvm_dw4_pair_pad_s16(db{i}, {int(inside[t])}, dx{i} + {4 * t}, {int(inside[t + 1])}, "
                         f"dx{i} + {4 * t + 4}, dw{i} + {4 * (t // 2)})")
        if taps % 2:
            calls.append(f"utvm_dw4_tap_s16(da{i}, dx{i}, {4 * (taps - 1)}, dw{i} + {4 * (taps // 2)})")
            calls.append(f"utvm_dw4_tap_pad_s16(db{i}, {int(inside[-1])}, dx{i} + {4 * (taps - 1)}, "
                         f"dw{i} + {4 * (taps // 2)})")
        body.append("  " + ";\n  ".join(calls) + ";")
        emit("(void)0", f"da{i}", 4)
        emit("(void)0", f"db{i}", 4)
        want += [(x * w).sum(axis=0), (x * w * inside[:, None]).sum(axis=0)]

    # BATCH_MATMUL packing: a k x n matrix by strides (plain and transposed)
    for i, (k, n, adj) in enumerate(((8, 5, False), (12, 8, True), (4, 1, False), (64, 13, True))):
        mat = _extremes(rng, (k, n), -128, 127)
        src = mat.T.copy() if adj else mat
        sk, sn = (1, k) if adj else (n, 1)
        blocks = -(-n // 4)
        padded = np.zeros((k, blocks * 4), np.int64)
        padded[:, :n] = mat
        packed = padded.reshape(k // 4, 4, blocks, 4).transpose(2, 0, 3, 1).reshape(-1)
        decls += [_carr("int8_t", f"ps{i}", src), f"static int8_t pd{i}[{packed.size}];",
                  f"static int32_t pc{i}[{blocks * 4}];", f"static int8_t pt{i}[{k * n}];",
                  f"static int32_t pr{i}[{n}];"]
        emit(f"utvm_pack4_s8(pd{i}, pc{i}, ps{i}, {k}, {n}, {sk}, {sn}, -7, 1000)", f"pd{i}", packed.size)
        emit("(void)0", f"pc{i}", blocks * 4)
        emit(f"utvm_copy2d_s8(pt{i}, ps{i}, {n}, {k}, {sn}, {sk})", f"pt{i}", k * n)
        emit(f"utvm_sums_s8(pr{i}, pt{i}, {n}, {k}, {k}, 3, -5)", f"pr{i}", n)
        want += [packed, 1000 - 7 * padded.sum(axis=0), mat.T.reshape(-1), 3 * mat.sum(axis=0) - 5]

    # the Helium 16x8 depthwise row against numpy (any channel count, padding, stride, dilation)
    for i in range(6):
        c = int(rng.integers(1, 21))
        kh, kw = (int(v) for v in rng.integers(1, 4, 2))
        sw, dh, dw = (int(v) for v in rng.integers(1, 3, 3))
        h, wd = int(rng.integers(1, 6)), int(rng.integers(1, 9))
        iy0, left = int(rng.integers(-2, h)), int(rng.integers(0, kw))
        ow = max(1, (wd + 2 * left - (kw - 1) * dw - 1) // sw + 1)
        x = _extremes(rng, (h, wd, c), -32768, 32767)
        w = rng.integers(-128, 128, (kh, kw, c))
        bias = rng.integers(-(1 << 20), 1 << 20, c)
        mult = rng.integers(1 << 14, 1 << 24, c)
        lo, hi = sorted(int(v) for v in rng.integers(-32768, 32768, 2))
        decls += [_carr("int16_t", f"rx{i}", x), _carr("int8_t", f"rw{i}", w),
                  _carr("int32_t", f"rb{i}", mac16.even_odd(bias)), _carr("int32_t", f"rm{i}", mac16.even_odd(mult)),
                  f"static int16_t ry{i}[{ow * c}];"]
        emit(f"utvm_mve_dw_row_s16(ry{i}, rx{i}, {h}, {wd}, {c}, {iy0}, {ow}, {sw}, {left}, {kh}, {kw}, {dh}, {dw}, "
             f"rw{i}, rb{i}, rm{i}, {lo}, {hi})", f"ry{i}", ow * c)
        acc = np.tile(bias, (ow, 1))
        for ox in range(ow):
            for ry in range(kh):
                for rx in range(kw):
                    iy, ix = iy0 + ry * dh, ox * sw - left + rx * dw
                    if 0 <= iy < h and 0 <= ix < wd:
                        acc[ox] += x[iy, ix] * w[ry, rx]
        want.append(np.clip((acc * mult + (1 << 31)) >> 32, lo, hi).reshape(-1))
    return decls, body, want


def _helper_program(seed: int) -> tuple[str, np.ndarray]:
    decls, body, want = _helper_cases(seed)
    src = "\n".join(['#include <stdio.h>', '#include "utvm/kernels.h"', '#include "utvm/kernels_mve.h"', *decls,
                     "int main(void) {", *body, "  return 0;\n}\n"])
    return src, np.concatenate([np.asarray(w, np.int64).reshape(-1) for w in want])


def _check_output(stdout: str, want: np.ndarray) -> None:
    got = np.array([int(v) for v in stdout.split()], np.int64)
    assert got.shape == want.shape
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, f"{bad.size} results differ, first at {bad[:5]}: {got[bad[:5]]} != {want[bad[:5]]}"


def test_helpers_plain_c_match_numpy(tmp_path: Path) -> None:
    if shutil.which("gcc") is None:
        pytest.skip("no host gcc")
    src, want = _helper_program(1)
    (tmp_path / "helpers.c").write_text(src)
    exe = tmp_path / "helpers"
    subprocess.run(["gcc", *STRICT, f"-I{INCLUDE}", str(tmp_path / "helpers.c"), "-o", str(exe)], check=True)
    _check_output(subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout, want)


@needs_qemu
@pytest.mark.parametrize("board", BOARDS)
def test_helpers_match_numpy_on_board(tmp_path: Path, board: str) -> None:
    """The DSP assembly (Cortex-M4) and the MVE code (Cortex-M55) of the same helpers."""
    src, want = _helper_program(2)
    (tmp_path / "helpers.c").write_text(src)
    spec = get_board(board)
    elf = qemu.build_firmware(spec, [tmp_path / "helpers.c"], [INCLUDE], {}, tmp_path / "fw",
                              ["-Wall", "-Wextra", "-Werror"])
    run = qemu.run_firmware(spec, elf)
    assert run.exit_code == 0 and run.fault is None
    _check_output(run.stdout, want)


def test_short_int64_requantization_is_tflites() -> None:
    """(x * reduced + 2**(t-1)) >> t == (x * (reduced << (32 - t)) + 2**31) >> 32 for every x that
    fits in int32: random multipliers (with the 0x7FFF0000 cap), every shift the short form takes."""
    rng = np.random.default_rng(4)
    for shift in range(-17, 0):
        mults = np.concatenate([rng.integers(1 << 30, 1 << 31, 60), [0x7FFF0000, 0x7FFFFFFF, 1 << 30]])
        x = np.concatenate([rng.integers(-(1 << 31), 1 << 31, 2000), [-(1 << 31), (1 << 31) - 1, 0, -1, 1]])
        for m in mults:
            short = mac16.short_int64_requant(np.array([m]), np.array([shift]), np.array([1]), np.array([0]))
            assert short is not None
            folded = int(short[1][0])
            want = fp.np_multiply_by_quantized_multiplier_int64(x, m, shift)
            assert np.array_equal((x * folded + (1 << 31)) >> 32, want), (m, shift)
    # outside its range, or sums that may not fit: the general form
    assert mac16.short_int64_requant(np.array([1 << 30]), np.array([0]), np.array([1]), np.array([0])) is None
    assert mac16.short_int64_requant(np.array([1 << 30]), np.array([-18]), np.array([1]), np.array([0])) is None
    assert mac16.short_int64_requant(np.array([1 << 30]), np.array([-8]), np.array([65536]), np.array([0])) is None


def test_rows16_layouts() -> None:
    """Every weight of a matrix is where utvm_mac4_s16 / utvm_mve_mac4_s16 read it."""
    rng = np.random.default_rng(5)
    w = rng.integers(-128, 128, (6, 23))
    dsp = mac16.Rows.build(w, [10, 13], False)
    assert dsp.block == 112 and dsp.data.size == 2 * 112 and dsp.offsets == [0, 48]
    block0 = dsp.data[:dsp.block]
    words = block0[:32].reshape(2, 4, 4)  # step, row, byte
    assert np.array_equal(words[1, 3], w[3, [4, 6, 5, 7]])
    pair = block0[32:48].view("<i2").reshape(4, 2)
    assert np.array_equal(pair, w[:4, 8:10])
    helium = mac16.Rows.build(w, [23], True)
    assert helium.block == 3 * 32 and np.array_equal(helium.data[helium.block + 64 + 8: helium.block + 64 + 15],
                                                     w[5, 16:23])
    assert mac16.segments(1200) == [400, 400, 400] and mac16.segments(511) == [511]


# ---------------------------------------------------------------------------------------------
# layers against TFLite Micro, on the host and the boards, each with its CPU's kernel

ACTIVATIONS = ["NONE", "RELU", "RELU6"]


def _layers(name: str) -> Layers:
    layers = Layers()
    if name == "fully_connected_int16":
        for i in range(20):
            layers.fully_connected16(i)
    elif name == "conv2d_int16":
        for i in range(16):
            layers.conv16(100 + i)
    elif name == "depthwise_int16":
        for i in range(18):
            layers.conv16(200 + i, depthwise=True)
    elif name in ("transpose_conv_int8", "transpose_conv_int16"):
        # int8: input channels a multiple of 4 (the DSP kernel's), int16: any
        for i in range(16):
            layers.transpose_conv(name[-5:].lstrip("_"), 300 + i, (4, 8, 16) if name.endswith("int8") else (3, 9, 17))
    else:
        for i in range(24):
            layers.batch_matmul(400 + i)
    return layers


NAMES = ["fully_connected_int16", "conv2d_int16", "depthwise_int16", "transpose_conv_int8", "transpose_conv_int16",
         "batch_matmul_int8"]

#: the variant each CPU's kernel of a layer is expected from, where the layer fits it
_EXPECTED = {"cortex-m4": ("dsp_int16", "dsp_mac4"), "cortex-m55": ("helium_int16", "helium")}


def _variants(model: Path, cpu: str) -> list[str]:
    graph = load_model(model)
    target = Target.for_cpu(cpu)
    out = []
    for op in graph.ops:
        opdef = get(op.kind)
        if opdef is not None and opdef.variants:
            out.append(opdef.kernel(graph, op, target)[0])
    return out


@pytest.mark.parametrize("name", NAMES)
def test_layers_match_tflite_micro_on_host(tmp_path: Path, name: str) -> None:
    """The host runs the dsp_* variants (CPU unknown: four lanes per word) with the plain-C helpers."""
    layers = _layers(name)
    report = layers.check(tmp_path)
    assert report.outputs_match_reference
    variants = _variants(tmp_path / "model.tflite", "cortex-m4")
    # most layers fit the DSP kernels (the others: depth or channels that are no multiple of 4)
    assert sum(v in _EXPECTED["cortex-m4"] for v in variants) >= 2 * len(variants) // 3, variants


@needs_qemu
@pytest.mark.parametrize("board", BOARDS)
@pytest.mark.parametrize("name", NAMES)
def test_layers_match_tflite_micro_on_board(tmp_path: Path, name: str, board: str) -> None:
    layers = _layers(name)
    check_cases(layers.cases, tmp_path, board, inputs=layers.inputs)
    cpu = "cortex-m4" if board == "mps2/an386" else "cortex-m55"
    variants = _variants(tmp_path / "model.tflite", cpu)
    assert sum(v in _EXPECTED[cpu] for v in variants) >= 2 * len(variants) // 3, variants


# ---------------------------------------------------------------------------------------------
# recurrent layers: SVDF (int8 with int16 / int8 state), LSTM (int8), over several runs


def _recurrent_model() -> bytes:
    from mac_cases import lstm_case, svdf_case
    from op_check import side_by_side

    cases = [svdf_case(500 + i) for i in range(10)]
    cases += [svdf_case(520 + i, state_type="int8", time_type="int8") for i in range(6)]
    cases += [lstm_case(540 + i) for i in range(10)]
    return side_by_side(cases)


@pytest.mark.parametrize("board", ["host", *BOARDS])
def test_recurrent_layers_match_tflite_micro(tmp_path: Path, board: str) -> None:
    """Three runs (the states carry over), compared with TFLite Micro's third; the SVDF and LSTM
    layers take their CPU's kernels (utvm_mac4_u_s8 / utvm_mve_mac4_s8 rows, word copies of the
    state, utvm_dot_s16 / _s8)."""
    from op_check import check_model

    if board != "host" and toolchain_problem() is not None:
        pytest.skip("bare-metal toolchain missing")
    path = tmp_path / "recurrent.tflite"
    path.write_bytes(_recurrent_model())
    check_model(path, tmp_path, board, repeats=3)
    cpu = "cortex-m55" if board == "mps3/an547" else "cortex-m4"
    graph = load_model(path)
    target = Target.for_cpu(cpu)
    chosen = [(op.kind, get(op.kind).kernel(graph, op, target)[0]) for op in graph.ops  # type: ignore[union-attr]
              if op.kind in ("svdf", "svdf_state")]
    fast = [v for _, v in chosen if v != "generic"]
    # Helium takes every int8 SVDF; the DSP's feature FC wants a multiple of 4 inputs
    assert len(fast) >= (len(chosen) if cpu == "cortex-m55" else len(chosen) // 2), chosen


# ---------------------------------------------------------------------------------------------
# the kernels' C under AddressSanitizer and UndefinedBehaviorSanitizer


@pytest.mark.slow
@pytest.mark.parametrize("cpu", ["cortex-m4", "cortex-m55"])
def test_kernels_are_sanitizer_clean(tmp_path: Path, cpu: str) -> None:
    """The DSP (cortex-m4) and Helium (cortex-m55) variants' plain-C helpers built on the host with
    ASan + UBSan, run on all-zero, all-minimum, all-maximum and random inputs through every entry
    point (tests/sanitizer_build.py): no overflow of the int32 sums, no access out of bounds."""
    from op_check import side_by_side
    from sanitizer_build import build_and_run
    from toolchains import sanitizers_problem
    from utvm.compiler import CompileOptions, compile_model

    why = sanitizers_problem(tmp_path)
    if why:
        pytest.skip(why)
    cases = []
    for name in NAMES:
        cases += _layers(name).cases[:5]
    path = tmp_path / "layers.tflite"
    path.write_bytes(side_by_side(cases))
    for model in (path, tmp_path / "recurrent.tflite"):
        if model.name == "recurrent.tflite":
            model.write_bytes(_recurrent_model())
        result = compile_model(model, tmp_path / f"mlf_{model.stem}", CompileOptions(cpu=cpu))
        run = build_and_run(result.mlf_dir, result.name, randoms=1, workdir=tmp_path)
        assert run.problem == "", run.output[-3000:]


# ---------------------------------------------------------------------------------------------
# SOFTMAX int8 -> int16 (the keyword models' last layer)


@pytest.mark.parametrize("board", ["host", *(pytest.param(b, marks=pytest.mark.slow) for b in BOARDS)])
def test_softmax_int8_to_int16_matches_tflite_micro(tmp_path: Path, board: str) -> None:
    """Softmax<int8_t, int16_t>: output scale 1/65536, zero point -32768, for random input scales,
    zero points, betas and depths (1 to 40), and the numpy reference of the same arithmetic."""
    from op_check import Cases, check_model, side_by_side
    from utvm.ops.softmax import np_softmax_int8

    if board != "host" and toolchain_problem() is not None:
        pytest.skip("bare-metal toolchain missing")
    rng = np.random.default_rng(9)
    cases = Cases()
    params = []
    for i in range(12):
        depth, rows = int(rng.integers(1, 41)), int(rng.integers(1, 4))
        scale, zp, beta = float(10 ** rng.uniform(-2.5, -0.5)), int(rng.integers(-128, 128)), float(rng.uniform(0.5, 2))
        data = rng.integers(-128, 128, (rows, depth)).astype(np.int8)
        params.append((data, scale, beta))

        def case(m: ModelBuilder, i: int = i, shape: tuple[int, int] = (rows, depth), q: tuple[float, int, float] =
                 (scale, zp, beta)) -> tuple[list[int], list[int]]:
            x = m.add_tensor(f"x{i}", shape, "int8", scale=q[0], zero_point=q[1])
            y = m.add_tensor(f"y{i}", shape, "int16", scale=1.0 / 65536.0, zero_point=-32768)
            m.add_operator("SOFTMAX", [x], [y], {"beta": q[2]})
            return [x], [y]
        cases.cases.append(case)
        cases.inputs.append(data)
    path = tmp_path / "softmax16.tflite"
    path.write_bytes(side_by_side(cases.cases))
    report = check_model(path, tmp_path, board, inputs=cases.inputs)
    for out, (data, scale, beta) in zip(report.outputs, params):
        assert np.array_equal(out, np_softmax_int8(data, scale, beta, bits=16))


# ---------------------------------------------------------------------------------------------
# the tuning knob of the dsp_int16 variants: weights widened to int16 ahead of time


@pytest.mark.parametrize("board", ["host", "mps2/an386"])
def test_widened_weights_are_bit_exact(tmp_path: Path, board: str) -> None:
    """Every dsp_int16 layer (conv, fully connected, transpose conv) tuned to widened weights
    (utvm_mac4w_s16) through a tuning log: outputs identical to TFLite Micro."""
    from op_check import check_model, side_by_side
    from utvm.configs.log import write_log
    from utvm.configs.workload import workload, workload_key
    from utvm.tune.space import space

    if board != "host" and toolchain_problem() is not None:
        pytest.skip("bare-metal toolchain missing")
    cases = []
    for name in ("fully_connected_int16", "conv2d_int16", "transpose_conv_int16"):
        cases += _layers(name).cases[:6]
    path = tmp_path / "wide.tflite"
    path.write_bytes(side_by_side(cases))
    from utvm.compiler import CompileOptions, compile_model

    graph = load_model(path)
    cpu = None if board == "host" else "cortex-m4"
    target = Target.for_cpu(cpu)
    records = []
    for op in graph.ops:
        wide = [c for c in space(graph, op, target) if c.get("weights") == "int16" and c["variant"] == "dsp_int16"]
        assert wide, op.kind
        w = workload(graph, op, cpu)
        records.append({"key": workload_key(w), "workload": w, "config": wide[0], "cost": {"instructions": 1}})
    log = tmp_path / "log.json"
    write_log(log, records)
    result = compile_model(path, tmp_path / "mlf", CompileOptions(cpu=cpu, tuning_log=log))
    assert result.lowered.c_source.count("utvm_mac4w_s16(") >= len(graph.ops)
    check_model(path, tmp_path, board, tuning_log=log)


@pytest.mark.parametrize("name", [*NAMES, "recurrent"])
def test_helium_fallbacks_match_tflite_micro_on_host(tmp_path: Path, name: str) -> None:
    """The layers compiled for the Cortex-M55 (helium* variants) and built on the host: the
    plain-C forms of the Helium helpers against TFLite Micro (three runs for the recurrent layers)."""
    from utvm.compiler import CompileOptions, compile_model
    from utvm.run.runner import run_compiled

    path = tmp_path / f"{name}.tflite"
    inputs = None
    if name == "recurrent":
        path.write_bytes(_recurrent_model())
    else:
        from op_check import side_by_side

        layers = _layers(name)
        path.write_bytes(side_by_side(layers.cases))
        inputs = []
        for k, arr in enumerate(layers.inputs):
            np.save(tmp_path / f"in{k}.npy", arr)
            inputs.append(tmp_path / f"in{k}.npy")
    result = compile_model(path, tmp_path / "mlf", CompileOptions(cpu="cortex-m55"))
    assert any(c.variant.startswith("helium") for c in result.lowered.calls) or name == "recurrent"
    report = run_compiled(path, result, "host", tmp_path, inputs, repeats=3 if name == "recurrent" else 1)
    assert report.outputs_match_reference
