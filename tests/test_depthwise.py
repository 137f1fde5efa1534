"""int8 DEPTHWISE_CONV_2D on DSP CPUs (the dsp_dwp variant: planar int16 rows, utvm_dwp_s8 of
utvm/kernels.h), against TFLite Micro.

- its requantization (weights, bias and shifts rescaled at compile time, SMMLA with the layer's
  shift or SMMLAR with the channel's, negative ties rounded) equals TFLite's on random
  accumulators;
- many seeded layers side by side in one model (strides 1-3, windows 1x1 to 5x5 and 10x8,
  SAME/VALID, dilation along one axis, depth multipliers 1-8, odd widths, channel counts that
  are not multiples of 4, zero points, per-channel and per-tensor scales, fused activations,
  pruned channels, batch 2): identical to TFLite Micro on the host (plain C) and on the
  emulated Cortex-M4 (mps2/an386, the assembly loops), the variant taken wherever it applies;
- the generated kernels compile at every optimization level, with a frame pointer, -fPIC and
  for Cortex-M7/M33;
- every tuning configuration (orientation, band) is bit-exact;
- a stride-1 layer writes its output over its input; a stride-2 layer at the pool's peak gets a
  band whose planes barely raise the pool;
- the KWS and VWW layers measured alone on the Cortex-M4: stride 1 from 6x6 up at most 2
  instructions per MAC, the others below 2.7;
- channel multiplier > 1 (30 seeded layers: one input channel or more, 1-D, strides 1 and 2,
  SAME/VALID): one input channel on the convolution kernels (conv), more on dsp_dwp (Cortex-M4)
  or the Helium multiplier kernels (helium_dot, helium_mult), identical to TFLite Micro on the
  host (compiled for either CPU) and on mps2/an386 and mps3/an547.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dw_cases import DwCases
from tflite_builder import ModelBuilder
from toolchains import toolchain_problem
from utvm.compiler import CompileOptions, compile_model
from utvm.configs.log import write_log
from utvm.configs.workload import workload, workload_key
from utvm.importer import load_model
from utvm.ir import Operator
from utvm.kernels import fixedpoint as fp
from utvm.kernels.requant import effective_scales
from utvm.kernels.target import Target
from utvm.ops.depthwise_conv2d import (
    DWP_CONV_MAX_MULT,
    DWP_CONV_MAX_TAPS,
    DWP_ROUND_NEG,
    DWX_PIXELS,
    _dwp_constants,
    dwr_takes,
)
from utvm.tune.space import space

needs_qemu = pytest.mark.skipif(toolchain_problem() is not None, reason="bare-metal toolchain missing")
M4 = Target.for_cpu("cortex-m4")


#: layers shaped like the MLPerf Tiny ones (3x3, RELU with output zero point -128: the assembly
#: loops), narrow and small ones, odd widths and channel counts
FIXED = [
    dict(shape=(9, 5, 8), kernel=(3, 3), stride=(1, 1), same=True, act="RELU", zy=-128),
    dict(shape=(7, 12, 12), kernel=(3, 3), stride=(1, 1), same=True, act="RELU6", zy=-128),
    dict(shape=(12, 12, 8), kernel=(3, 3), stride=(2, 2), same=True, act="RELU", zy=-128),
    dict(shape=(11, 9, 4), kernel=(3, 3), stride=(2, 2), same=True, act="NONE"),
    dict(shape=(6, 6, 16), kernel=(3, 3), stride=(1, 1), same=True, act="RELU", zy=-128),
    dict(shape=(3, 3, 8), kernel=(3, 3), stride=(1, 1), same=True, act="RELU", zy=-128),
    dict(shape=(6, 7, 6), kernel=(3, 3), stride=(2, 2), same=True, act="RELU", zy=-128),
    dict(shape=(25, 5, 4), kernel=(3, 3), stride=(1, 1), same=True, act="RELU", zy=-128),
    dict(shape=(5, 13, 5), kernel=(3, 3), stride=(1, 1), same=False, act="NONE"),
    dict(shape=(8, 8, 4), kernel=(3, 3), stride=(1, 1), same=True, act="RELU", per_channel=False),
    dict(shape=(20, 10, 1), kernel=(10, 8), stride=(2, 2), same=True, mult=8, act="RELU"),
    dict(shape=(7, 6, 3), kernel=(3, 3), stride=(1, 1), same=True, mult=2, act="NONE"),
    dict(shape=(9, 8, 5), kernel=(3, 3), stride=(2, 2), same=True, mult=4, act="RELU", zy=-128),
    dict(shape=(8, 9, 4), kernel=(3, 3), stride=(1, 1), dilation=(2, 2), same=True),  # not dsp_dwp
    dict(shape=(6, 5, 4), kernel=(3, 3), stride=(1, 1), same=True, batch=2, act="RELU", zy=-128),
    # rows of 5 to 12 steps (unrolled up to six, else looped four at a time after np % 4), odd
    # last outputs; the conversion of all rows in one loop: a first pair of padding, one or more
    # steps of four columns, a pair of two, a last pair of padding, input words 256 bytes apart
    dict(shape=(5, 16, 4), kernel=(3, 3), stride=(1, 1), same=True, act="RELU", zy=-128),
    dict(shape=(6, 19, 8), kernel=(3, 3), stride=(2, 2), same=True, act="RELU", zy=-128),
    dict(shape=(7, 30, 4), kernel=(3, 3), stride=(2, 2), same=True, act="RELU6", zy=-128),
    dict(shape=(4, 26, 4), kernel=(3, 3), stride=(1, 1), same=False, act="RELU", zy=-128),
    dict(shape=(5, 21, 4), kernel=(3, 3), stride=(1, 1), same=True, act="RELU", zy=-128),
    dict(shape=(9, 19, 4), kernel=(3, 3), stride=(2, 2), same=False, act="RELU", zy=-128),
    dict(shape=(5, 36, 4), kernel=(3, 3), stride=(2, 2), same=True, act="RELU", zy=-128),
    dict(shape=(6, 6, 4), kernel=(3, 3), stride=(1, 1), same=True, act="RELU", zy=-128),
    dict(shape=(3, 5, 258), kernel=(3, 3), stride=(2, 2), same=True, mult=1, act="RELU", zy=-128),
    dict(shape=(3, 3, 257), kernel=(3, 3), stride=(1, 1), same=True, mult=1, act="RELU", zy=-128),
    dict(shape=(3, 10, 260), kernel=(3, 3), stride=(1, 1), same=True, mult=1, act="RELU", zy=-128),
    dict(shape=(4, 6, 256), kernel=(3, 3), stride=(1, 1), same=False, mult=1, act="RELU", zy=-128),
    dict(shape=(3, 3, 600), kernel=(3, 3), stride=(1, 1), same=True, mult=1, act="RELU", zy=-128),
    # small planes of an odd width: the last outputs of two rows as one vertical pair (four rows:
    # the orientation across, in test_every_configuration_is_bit_exact)
    dict(shape=(7, 5, 4), kernel=(3, 3), stride=(2, 2), same=True, mult=1, act="RELU", zy=-128),
    dict(shape=(4, 3, 8), kernel=(3, 3), stride=(1, 1), same=True, mult=1, act="RELU", zy=-128),
    # the layer's shift and channels of their own (UTVM_DWP_MIXED), stride 1 and 2, loops and tails
    dict(shape=(7, 19, 8), kernel=(3, 3), stride=(2, 2), same=True, mult=1, act="RELU", zy=-128, per_channel=True,
         last=600.0),
    dict(shape=(5, 17, 8), kernel=(3, 3), stride=(1, 1), same=True, mult=1, act="RELU", zy=-128, per_channel=True,
         last=600.0),
    dict(shape=(3, 3, 8), kernel=(3, 3), stride=(1, 1), same=True, mult=1, act="RELU", zy=-128, per_channel=True,
         last=600.0),
    # stride 2 with the data from a block on (blocks of two pair words of the four planes): a
    # step of four columns, a pair of two and a last pair; eleven steps (looped); the C
    # multiply-accumulate (negative ties) and the C conversion (words 256 bytes apart) on blocks;
    # rows of ten pairs and an odd one (steps of four outputs: np % 4 == 2 before the loop)
    dict(shape=(7, 7, 4), kernel=(3, 3), stride=(2, 2), same=False, act="RELU", zy=-128),
    dict(shape=(13, 45, 4), kernel=(3, 3), stride=(2, 2), dilation=(1, 1), same=False, act="RELU", zy=-128),
    dict(shape=(8, 10, 8), kernel=(3, 3), stride=(2, 2), same=False, act="NONE"),
    dict(shape=(4, 6, 260), kernel=(3, 3), stride=(2, 2), same=False, act="RELU", zy=-128),
    dict(shape=(5, 42, 4), kernel=(3, 3), stride=(2, 2), same=True, act="RELU", zy=-128),
    # one band written out (medium planes): stride 2 of an odd width, planar and on blocks, with
    # channels of their own shift; outputs past 12 bits of offset (y moves on); a stride-1 layer
    # of that size (looped rows)
    dict(shape=(10, 9, 8), kernel=(3, 3), stride=(2, 2), same=True, act="RELU", zy=-128),
    dict(shape=(11, 11, 8), kernel=(3, 3), stride=(2, 2), same=False, act="RELU", zy=-128),
    dict(shape=(7, 20, 8), kernel=(3, 3), stride=(2, 2), same=False, act="RELU", zy=-128, per_channel=True,
         last=600.0),
    dict(shape=(12, 12, 136), kernel=(3, 3), stride=(2, 2), same=True, act="RELU", zy=-128),
    dict(shape=(6, 6, 120), kernel=(3, 3), stride=(1, 1), same=True, act="RELU", zy=-128),
    # small planes of stride 2 and an odd width: the last three outputs of a row as one step (a
    # pair before it; channels of their own shift)
    dict(shape=(4, 10, 8), kernel=(3, 3), stride=(2, 2), dilation=(1, 1), same=True, act="RELU", zy=-128),
    dict(shape=(6, 6, 8), kernel=(3, 3), stride=(2, 2), dilation=(1, 1), same=True, act="RELU", zy=-128,
         per_channel=True, last=600.0),
    # stride 2 rows of 8 and 12 pairs written out, of 13 and 14 looped (eight outputs an iteration)
    *[dict(shape=(5, w, 4), kernel=(3, 3), stride=(2, 2), dilation=(1, 1), same=True, act="RELU", zy=-128)
      for w in (33, 48, 52, 56)],
]
N_RANDOM = 40


def _cases(fixed: list[dict[str, object]], seeds: range) -> DwCases:
    cases = DwCases()
    for k, f in enumerate(fixed):
        cases.layer(1000 + k, **f)
    for seed in seeds:
        cases.layer(seed)
    return cases


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, DwCases]:
    from op_check import side_by_side

    cases = _cases(FIXED, range(N_RANDOM))
    path = tmp_path_factory.mktemp("dw") / "dw.tflite"
    path.write_bytes(side_by_side(cases.cases))
    return path, cases


def test_requantization_equals_tflite(tmp_path: Path) -> None:
    """The constants of _dwp_constants, applied as utvm_dwp_s8 applies them, give TFLite's
    outputs on random accumulators (both forms, left shifts, pruned channels)."""
    seen = set()
    for seed in range(60):
        cases = DwCases()
        cases.layer(seed, kernel=(3, 3), stride=(1, 1), dilation=(1, 1))
        path = tmp_path / f"q{seed}.tflite"
        from op_check import side_by_side

        path.write_bytes(side_by_side(cases.cases))
        g = load_model(path)
        op = g.ops[0]
        consts = _dwp_constants(g, op)
        if consts is None:
            continue
        seen |= {"layer shift" if e < 0 else "own shift" for e in consts.q[:, 4]}
        seen |= {"rounds negative ties"} if consts.flags & DWP_ROUND_NEG else set()
        x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
        assert x.quant and w.quant and y.quant and w.data is not None
        cout = y.shape[3]
        rng = np.random.default_rng(seed)
        acc = rng.integers(-(1 << 17), 1 << 17, (4000, cout)).astype(np.int64)  # sum((x - zx) w)
        bias = g.tensors[op.inputs[2]].data.astype(np.int64) if len(op.inputs) > 2 else np.zeros(cout, np.int64)
        _, zx = x.quant.scalar()
        _, zy = y.quant.scalar()
        pairs = [fp.quantize_multiplier(float(s)) for s in np.broadcast_to(effective_scales(x, w, y, True), (cout,))]
        want = fp.np_multiply_by_quantized_multiplier(acc + bias, np.array([m for m, _ in pairs]),
                                                      np.array([s for _, s in pairs])) + zy
        want = np.clip(want, consts.lo, consts.hi)
        dead = np.all(w.data.reshape(-1, cout) == 0, axis=0)
        acc[:, dead] = 0
        want[:, dead] = np.clip(fp.np_multiply_by_quantized_multiplier(bias[dead], np.array(pairs)[dead, 0],
                                                                       np.array(pairs)[dead, 1]) + zy,
                                consts.lo, consts.hi)
        wsum = w.data.astype(np.int64).reshape(-1, cout).sum(axis=0)
        q = consts.q.astype(np.int64)
        scaled = (acc + zx * wsum) * consts.scale + q[:, 0]  # sum(x w) scaled, plus the scaled folded bias
        assert np.all(np.abs(scaled) < 1 << 31)
        layer = q[:, 4] < 0  # SMMLA and the layer's shift, else SMMLAR and the channel's
        high = (scaled * q[:, 2] + q[:, 3] * (1 << 32) + np.where(layer, 0, 1 << 31)) >> 32
        if consts.flags & DWP_ROUND_NEG:
            high += scaled >> 31
        got = np.clip(np.clip(high >> np.abs(q[:, 4]), -128, 127), consts.lo, consts.hi)
        assert np.array_equal(got, want), seed
    assert seen == {"layer shift", "own shift", "rounds negative ties"}


def test_variant_taken_where_it_applies(model: tuple[Path, DwCases], tmp_path: Path) -> None:
    path, _ = model
    result = compile_model(path, tmp_path / "mlf", CompileOptions(cpu="cortex-m4"))
    variants = [call.variant for call in result.lowered.calls]
    conv = 0
    for call in result.lowered.calls:
        op = result.graph.ops[call.op_index]
        if result.graph.tensors[op.inputs[0]].shape[3] == 1 and op.attrs["depth_multiplier"] > 1:
            # one input channel: a convolution, few filters of small windows dsp_dwp (conv_gives_way)
            assert call.variant == _mult_variant(op, result.graph, "cortex-m4"), (op.source, call.variant)
            conv += 1
            continue
        dh, dw = op.attrs["dilation"]
        assert (call.variant in ("dsp_dwp", "dsp_dwt")) == (dh == 1 or dw == 1), (op.source, call.variant)
        y = result.graph.tensors[op.outputs[0]]
        tiny = max(y.shape[1:3]) <= 4 and op.attrs.get("depth_multiplier", 1) == 1 and op.attrs["dilation"] == (1, 1)
        if call.variant in ("dsp_dwp", "dsp_dwt") and tiny and tuple(result.graph.tensors[op.inputs[1]].shape[1:3]) == (3, 3) \
                and max(op.attrs["strides"]) <= 2:
            # tiny maps: dsp_dwp untuned (dsp_dwt's flash), dsp_dwt in the tuning space
            assert call.variant == "dsp_dwp", op.source
            assert "dsp_dwt" in {c["variant"] for c in space(result.graph, op, M4)}, op.source
    assert variants.count("dsp_dwp") + variants.count("dsp_dwt") >= len(variants) - conv - 4


def test_matches_tflite_micro_on_host(model: tuple[Path, DwCases], tmp_path: Path) -> None:
    path, cases = model
    from op_check import check_model

    check_model(path, tmp_path, "host", cases.inputs)


@needs_qemu
def test_matches_tflite_micro_on_cortex_m4(model: tuple[Path, DwCases], tmp_path: Path) -> None:
    path, cases = model
    from op_check import assert_kernels_warning_free, check_model

    check_model(path, tmp_path, "mps2/an386", cases.inputs)
    assert_kernels_warning_free(tmp_path, "mps2/an386")


def _asm_cases(seed: int, n: int) -> DwCases:
    """n seeded random 3x3 layers the assembly runs (RELU from the output zero point -128), stride
    1 or 2, of any size up to 14 x 40 x 20, SAME or VALID, some with channels of their own shift:
    the steps of four and three, the planes in blocks and planar, written out, small and looped."""
    rng = np.random.default_rng(seed)
    cases = DwCases()
    for k in range(n):
        stride = int(rng.choice([1, 2], p=[0.3, 0.7]))
        h, w = int(rng.integers(3, 15)), int(rng.integers(3, 41))
        fixed = dict(shape=(h, w, int(rng.integers(1, 21))), kernel=(3, 3), stride=(stride, stride),
                     dilation=(1, 1), same=bool(rng.random() < 0.6), act="RELU", zy=-128, mult=1, batch=1,
                     per_channel=True, last=float(rng.choice([1.0, 600.0], p=[0.7, 0.3])))
        cases.layer(seed * 1000 + k, **fixed)
    return cases


@pytest.mark.parametrize("board", ["host", pytest.param("mps2/an386", marks=needs_qemu)])
def test_assembly_paths_match_tflite_micro(board: str, tmp_path: Path) -> None:
    """Random layers of the assembly's shapes (_asm_cases) identical to TFLite Micro."""
    from op_check import check_model, side_by_side

    cases = _asm_cases(7, 40)
    path = tmp_path / "asm.tflite"
    path.write_bytes(side_by_side(cases.cases))
    check_model(path, tmp_path, board, cases.inputs)


def _run_cases() -> DwCases:
    """3x3 layers whose outputs lie 256 to 1023 bytes apart (utvm_dwp3_asm's runs, UTVM_DWP_FLUSH):
    stride 1 and 2, rows written out and looped, runs cut where their offsets pass 12 bits
    (ow x channels > 4095), a clamp on both sides, one side and none (negative ties)."""
    cases = DwCases()
    layers = [((8, 8, 288), 1, "RELU6", 5), ((8, 8, 672), 1, "RELU", -128), ((6, 6, 480), 1, "NONE", 3),
              ((20, 20, 256), 1, "RELU", 2), ((4, 18, 300), 2, "RELU6", -4), ((12, 12, 512), 2, "NONE", 0),
              ((7, 7, 1000), 1, "RELU", 1)]
    for k, (shape, stride, act, zy) in enumerate(layers):
        cases.layer(900 + k, shape=shape, kernel=(3, 3), stride=(stride, stride), dilation=(1, 1), same=True,
                    act=act, zy=zy, mult=1, batch=1, per_channel=True, last=1.0)
    return cases


@pytest.mark.parametrize("board", ["host", pytest.param("mps2/an386", marks=needs_qemu)])
def test_wide_output_runs_match_tflite_micro(board: str, tmp_path: Path) -> None:
    """The layers of _run_cases identical to TFLite Micro."""
    from op_check import check_model, side_by_side

    cases = _run_cases()
    path = tmp_path / "runs.tflite"
    path.write_bytes(side_by_side(cases.cases))
    check_model(path, tmp_path, board, cases.inputs)


def _clamped_cases(seed: int, n: int) -> DwCases:
    """n seeded random layers of the paths that seeded shapes take (issue 23): 3x3 at stride 1 or
    2 in the assembly with a clamp narrower than int8's (RELU, RELU6 from a random output zero
    point) or negative ties to round (NONE); utvm_dwp_chan_g's C steps (1xK windows of height 1,
    5x5, 1x3 to 1x15, strides 1 and 2 along the row, multipliers 1-4); channel counts that are
    not multiples of 4; stride 2 with the input's columns 256 to 1023 bytes apart (the blocks'
    conversion by offsets)."""
    rng = np.random.default_rng(seed)
    cases = DwCases()
    for k in range(n):
        kind = str(rng.choice(["asm", "row", "5x5", "wide"], p=[0.4, 0.3, 0.15, 0.15]))
        act = str(rng.choice(["NONE", "RELU", "RELU6"]))
        fixed: dict[str, object] = dict(dilation=(1, 1), act=act, batch=1, same=bool(rng.random() < 0.6),
                                        last=float(rng.choice([1.0, 600.0], p=[0.8, 0.2])))
        if kind == "asm":
            s = int(rng.integers(1, 3))
            fixed.update(shape=(int(rng.integers(3, 15)), int(rng.integers(3, 25)), int(rng.integers(1, 21))),
                         kernel=(3, 3), stride=(s, s), mult=int(rng.choice([1, 1, 1, 2])))
        elif kind == "row":
            kw = int(rng.choice([3, 5, 7, 8, 9, 15]))
            fixed.update(shape=(1, int(rng.integers(kw, kw + 60)), int(rng.integers(1, 40))), kernel=(1, kw),
                         stride=(1, int(rng.integers(1, 3))), mult=int(rng.choice([1, 1, 2, 4])))
        elif kind == "5x5":
            s = int(rng.integers(1, 3))
            fixed.update(shape=(int(rng.integers(5, 13)), int(rng.integers(5, 13)), int(rng.integers(1, 30))),
                         kernel=(5, 5), stride=(s, s), mult=1)
        else:
            fixed.update(shape=(int(rng.integers(3, 9)), int(rng.integers(3, 9)), int(rng.integers(256, 600))),
                         kernel=(3, 3), stride=(2, 2), mult=1)
        cases.layer(seed * 1000 + k, **fixed)
    return cases


@pytest.mark.parametrize("board", ["host", pytest.param("mps2/an386", marks=needs_qemu)])
def test_clamped_and_c_paths_match_tflite_micro(board: str, tmp_path: Path) -> None:
    """Random layers of _clamped_cases identical to TFLite Micro (on the Cortex-M4: the clamps and
    negative ties of the 3x3 assembly, utvm_dwp_chan_g, the far conversion of blocks)."""
    from op_check import check_model, side_by_side

    cases = _clamped_cases(23, 36)
    path = tmp_path / "clamped.tflite"
    path.write_bytes(side_by_side(cases.cases))
    check_model(path, tmp_path, board, cases.inputs)


FLAG_SETS = [["-O2", "-fno-omit-frame-pointer"], ["-Os", "-fno-omit-frame-pointer"], ["-O3"], ["-Og"], ["-O1"], ["-O0"],
             ["-O2", "-fPIC"], ["-O2", "-mcpu=cortex-m7"], ["-O2", "-mcpu=cortex-m33"]]


def test_kernels_compile_with_other_options(tmp_path: Path) -> None:
    """The assembly loops keep within the registers a frame pointer or a PIC register leave (at
    most eleven operands besides ip and lr; the conversion of planes in blocks: three besides
    eight named registers): the generated C of the fixed layers compiles
    warning-free for Cortex-M4 (M7, M33) at every optimization level, with a frame pointer and
    position-independent."""
    import shutil
    import subprocess

    from op_check import side_by_side

    if shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("arm-none-eabi-gcc is not installed")
    path = tmp_path / "fixed.tflite"
    path.write_bytes(side_by_side(_cases(FIXED + TINY, range(0)).cases))
    mlf = compile_model(path, tmp_path / "mlf", CompileOptions(cpu="cortex-m4")).mlf_dir
    for flags in FLAG_SETS:
        cpu = [] if any(f.startswith("-mcpu") for f in flags) else ["-mcpu=cortex-m4"]
        for src in sorted((mlf / "codegen" / "host" / "src").glob("*.c")):
            proc = subprocess.run(["arm-none-eabi-gcc", *cpu, *flags, "-mthumb", "-std=c99", "-Wall", "-Wextra",
                                   "-Werror", "-c", f"-I{mlf / 'codegen' / 'host' / 'include'}",
                                   f"-I{mlf / 'runtime' / 'include'}", str(src), "-o", str(tmp_path / "k.o")],
                                  capture_output=True, text=True)
            assert proc.returncode == 0, f"{src.name} {flags}: {proc.stderr[:2000]}"


@pytest.mark.parametrize("board", ["host", pytest.param("mps2/an386", marks=needs_qemu)])
def test_every_configuration_is_bit_exact(board: str, tmp_path: Path) -> None:
    """Each orientation and band of a few layers (through a tuning log): identical to TFLite
    Micro, on the host and with the assembly loops on the Cortex-M4 (a stride-2 plane of width 5
    written out, a pair and a step of three, in its one-band configuration)."""
    from op_check import check_model, side_by_side

    mixed = next(f for f in FIXED if f["shape"] == (3, 3, 8) and f.get("last"))
    odd_s2 = next(f for f in FIXED if f["shape"] == (4, 10, 8))
    cases = _cases([FIXED[0], FIXED[2], FIXED[6], FIXED[11], mixed, odd_s2], range(0))
    path = tmp_path / "cfg.tflite"
    path.write_bytes(side_by_side(cases.cases))
    graph = load_model(path)
    per_op = []
    for op in graph.ops:
        configs = [c for c in space(graph, op, M4) if c["variant"] == "dsp_dwp"]
        assert len(configs) >= 2, op.source
        w = workload(graph, op, "cortex-m4")
        per_op.append([(workload_key(w), w, c) for c in configs])
    rounds = max(len(c) for c in per_op)
    for n in range(rounds):
        records = [{"key": k, "workload": w, "config": c, "cost": {"instructions": 1}}
                   for k, w, c in (configs[n % len(configs)] for configs in per_op)]
        log = tmp_path / f"log{n}.json"
        write_log(log, records)
        work = tmp_path / f"r{n}"
        work.mkdir()
        check_model(path, work, board, cases.inputs, tuning_log=log)


def _pointwise(m: ModelBuilder, rng: np.random.Generator, name: str, x: int, shape: tuple[int, ...],
               cout: int) -> int:
    """A 1x1 CONV_2D with RELU after ``x`` of ``shape``."""
    cin = shape[-1]
    ws = rng.uniform(0.004, 0.02, cout)
    w = m.add_tensor(f"{name}_w", (cout, 1, 1, cin), "int8", rng.integers(-127, 128, (cout, 1, 1, cin)), scale=ws)
    b = m.add_tensor(f"{name}_b", (cout,), "int32", rng.integers(-500, 500, cout), scale=0.05 * ws)
    y = m.add_tensor(f"{name}_y", (*shape[:-1], cout), "int8", scale=0.04, zero_point=-128)
    m.add_operator("CONV_2D", [x, w, b], [y], {"padding": "SAME", "stride_w": 1, "stride_h": 1,
                                               "dilation_w_factor": 1, "dilation_h_factor": 1,
                                               "fused_activation_function": "RELU"})
    return y


def _conv_dw_conv(m: ModelBuilder, stride: int, size: tuple[int, int, int, int] = (9, 7, 8, 12)
                  ) -> tuple[list[int], list[int]]:
    """1x1 CONV_2D (h x w x c -> e channels), 3x3 DEPTHWISE_CONV_2D of ``stride``, 1x1 CONV_2D
    (-> 4); ``size``: (h, w, c, e)."""
    rng = np.random.default_rng(40 + stride)
    h0, w0, c, e = size
    x = m.add_tensor(f"s{stride}_x", (1, h0, w0, c), "int8", scale=0.05, zero_point=3)
    h = _pointwise(m, rng, f"s{stride}_a", x, (1, h0, w0, c), e)
    dws = rng.uniform(0.004, 0.02, e)
    dwt = m.add_tensor(f"s{stride}_dw", (1, 3, 3, e), "int8", rng.integers(-127, 128, (1, 3, 3, e)), scale=dws,
                       quantized_dimension=3)
    db = m.add_tensor(f"s{stride}_db", (e,), "int32", rng.integers(-500, 500, e), scale=0.04 * dws)
    out = (1, (h0 + stride - 1) // stride, (w0 + stride - 1) // stride, e)
    d = m.add_tensor(f"s{stride}_d", out, "int8", scale=0.05, zero_point=-128)
    m.add_operator("DEPTHWISE_CONV_2D", [h, dwt, db], [d], {
        "padding": "SAME", "stride_w": stride, "stride_h": stride, "dilation_w_factor": 1,
        "dilation_h_factor": 1, "depth_multiplier": 1, "fused_activation_function": "RELU"})
    return [x], [_pointwise(m, rng, f"s{stride}_b", d, out, 4)]


@pytest.mark.parametrize("board", ["host", pytest.param("mps2/an386", marks=needs_qemu)])
def test_output_over_its_input(board: str, tmp_path: Path) -> None:
    """A stride-1 layer whose input dies at it writes its output over the input (its planes of
    four channels are converted before their outputs are written): the plan gives both one
    buffer; stride 2 keeps its own; both identical to TFLite Micro."""
    from op_check import check_model, side_by_side

    path = tmp_path / "inplace.tflite"
    path.write_bytes(side_by_side([lambda m: _conv_dw_conv(m, 1), lambda m: _conv_dw_conv(m, 2)]))
    result = compile_model(path, tmp_path / "mlf", CompileOptions(cpu="cortex-m4"))
    plan = result.plan
    for call in result.lowered.calls:
        op = result.graph.ops[call.op_index]
        if op.kind != "depthwise_conv2d":
            continue
        stride = op.attrs["strides"][0]
        assert call.variant == "dsp_dwp" and call.inplace == (stride == 1)
        over_input = [t for t in plan.tenants if t.name == op.outputs[0] and t.how == "inplace"]
        assert bool(over_input) == (stride == 1) and all(t.target == op.inputs[0] for t in over_input), stride
    check_model(path, tmp_path, board)


def test_planes_shrink_where_they_set_the_pool(tmp_path: Path) -> None:
    """A stride-2 layer at the peak (its input the largest tensor, as in MobileNet blocks): the
    compiler gives it a band whose planes take at most a quarter of the scratch budget, so the
    pool grows by that much at most, not by the default's planes; identical to TFLite Micro."""
    from op_check import check_model, side_by_side
    from utvm.ops.depthwise_conv2d import DWP_SCRATCH_BUDGET, _dwp_bands, _dwp_geometry

    path = tmp_path / "peak.tflite"
    path.write_bytes(side_by_side([lambda m: _conv_dw_conv(m, 2, (32, 32, 8, 32))]))
    result = compile_model(path, tmp_path / "mlf", CompileOptions(cpu="cortex-m4"))
    call = next(c for c in result.lowered.calls if c.variant == "dsp_dwp")
    op = result.graph.ops[call.op_index]
    config = result.configs[call.op_index]
    assert result.configs.source(call.op_index) == "less scratch where it sets the pool"
    geo = _dwp_geometry(result.graph, op, config["orient"])
    assert geo is not None
    default = _dwp_bands(geo, False)[0]
    assert config["band"] < default
    x, d = result.graph.tensors[op.inputs[0]], result.graph.tensors[op.outputs[0]]
    assert result.plan.pool_size <= x.nbytes + d.nbytes + DWP_SCRATCH_BUDGET // 4 + 16
    assert 2 * geo.scratch_values(default) > DWP_SCRATCH_BUDGET // 2  # the default would have cost more
    check_model(path, tmp_path, "host")


def dw_layer_costs(path: Path, work: Path) -> list[tuple[str, float]]:
    """(operator, instructions per MAC) of every DEPTHWISE_CONV_2D of a model, each measured alone
    on mps2/an386 as `utvm tune` measures kernels: with its default configuration, tiny maps
    with dsp_dwt (which the tuner picks there; not the default, for its flash)."""
    from utvm.ops.common import conv_macs
    from utvm.tune.measure import measure

    graph = load_model(path)
    out = []
    for k, op in enumerate(graph.ops):
        if op.kind != "depthwise_conv2d":
            continue
        configs = space(graph, op, M4)
        config = next((c for c in configs if c["variant"] == "dsp_dwt"), configs[0])
        (cand,) = measure(graph, op, [config], "mps2/an386", CompileOptions(cpu="cortex-m4"), work / f"k{k}")
        assert cand.instructions is not None, cand.error
        out.append((f"{op.source} {config}", cand.instructions / conv_macs(graph, op)))
    return out


@needs_qemu
@pytest.mark.slow
@pytest.mark.parametrize("name", ["kws_ref_model", "vww_96_int8"])
def test_model_layers_instructions_per_mac(name: str, models_dir: Path, tmp_path: Path) -> None:
    """Every DEPTHWISE_CONV_2D of KWS and VWW, measured alone on the Cortex-M4, no slower than
    today: stride 1 at most 1.56 from 12 x 12 on (1.51-1.56), 1.81 from 6 x 6 on (1.77-1.81),
    stride 2 at most 2.08 from 6 x 6 on (1.92-2.07); VWW's 3 x 3 outputs (dsp_dwt) at most 1.8
    (stride 1: 1.77) and 1.9 (stride 2: 1.88). dsp_dwp's taps stay int8 in flash and are widened
    per channel before its outputs (b136683): that costs up to 0.07 on 6 x 6 maps, and VWW's
    stride-2 6 x 6 layer (2.07) is over issue 23's 2.0 for the M4 (before: 1.50-1.54, 1.69-1.72,
    at most 2.0)."""
    path = models_dir / f"{name}.tflite"
    if not path.is_file():
        pytest.skip(f"{path} is missing")
    graph = load_model(path)

    def limit(op: Operator) -> float:
        side = min(graph.tensors[op.outputs[0]].shape[1:3])
        if op.attrs["strides"] == (1, 1):
            return 1.56 if side >= 12 else 1.81 if side >= 6 else 1.8
        return 2.08 if side >= 6 else 1.9

    limits = {op.source: limit(op) for op in graph.ops if op.kind == "depthwise_conv2d"}
    costs = dw_layer_costs(path, tmp_path)
    assert len(costs) == len(limits)
    for label, cost in costs:
        source = label.split(" ")[0]
        assert cost <= limits[source], (label, cost)


def _tiny_cases(seed: int, n: int) -> DwCases:
    """n seeded random 3x3 layers of at most 4 x 4 outputs (dsp_dwt): stride 1 or 2, SAME or
    VALID, 1 to 9 input rows and columns, 4 to 260 channels (not only multiples of 4), fused
    RELU/RELU6/NONE, zero points, channels of their own shift."""
    rng = np.random.default_rng(seed)
    cases = DwCases()
    for k in range(n):
        stride = int(rng.integers(1, 3))
        same = bool(rng.random() < 0.6)
        lo = 1 if same else 3
        hi = 4 * stride if same else 3 * stride + 3 - stride + 1
        h, w = int(rng.integers(lo, hi + 1)), int(rng.integers(lo, hi + 1))
        cin = int(rng.choice([4, 5, 7, 8, 12, 13, 128, 130, 260]))
        act = str(rng.choice(["NONE", "RELU", "RELU6"]))
        fixed: dict[str, object] = dict(shape=(h, w, cin), kernel=(3, 3), stride=(stride, stride), dilation=(1, 1),
                                        same=same, act=act, mult=1, batch=1,
                                        last=float(rng.choice([1.0, 600.0], p=[0.6, 0.4])))
        if rng.random() < 0.4:
            fixed["zy"] = -128
        cases.layer(seed * 1000 + k, **fixed)
    return cases


#: tiny maps of sizes 1x1 to 4x4 at strides 1 and 2, SAME and VALID, VWW's 6x6 -> 3x3 with
#: channels of their own shift
TINY = [
    dict(shape=(6, 6, 128), kernel=(3, 3), stride=(2, 2), same=True, act="RELU6", zy=-128, last=600.0),
    # the assembly (6 wide, stride 2, nothing padded above or left): the layer's shift only, four
    # output rows, a last group of one channel
    dict(shape=(6, 6, 16), kernel=(3, 3), stride=(2, 2), same=True, act="RELU", zy=-128, per_channel=True),
    dict(shape=(8, 6, 13), kernel=(3, 3), stride=(2, 2), same=True, act="RELU", zy=-128, last=600.0),
    dict(shape=(3, 3, 12), kernel=(3, 3), stride=(1, 1), same=True, act="RELU", zy=-128),
    dict(shape=(1, 1, 4), kernel=(3, 3), stride=(1, 1), same=True, act="NONE"),
    dict(shape=(2, 2, 9), kernel=(3, 3), stride=(2, 2), same=True, act="RELU"),
    dict(shape=(7, 7, 8), kernel=(3, 3), stride=(2, 2), same=True, act="RELU6"),
    dict(shape=(8, 8, 6), kernel=(3, 3), stride=(2, 2), same=True, act="NONE", last=600.0),
    dict(shape=(9, 9, 4), kernel=(3, 3), stride=(2, 2), same=False, act="RELU"),
    dict(shape=(6, 5, 260), kernel=(3, 3), stride=(1, 1), same=False, act="RELU", zy=-128),
    dict(shape=(4, 2, 7), kernel=(3, 3), stride=(1, 1), same=True, act="NONE", last=600.0),
    dict(shape=(5, 3, 4), kernel=(3, 3), stride=(2, 1), same=True, act="RELU", batch=2),
]
TINY = [dict(t, mult=1, dilation=(1, 1)) for t in TINY]


@pytest.mark.parametrize("board", ["host", pytest.param("mps2/an386", marks=needs_qemu)])
def test_tiny_maps_match_tflite_micro(board: str, tmp_path: Path) -> None:
    """Layers of at most 4 x 4 outputs given dsp_dwt by a tuning log (each position its own taps,
    padding taps skipped, per-position biases; untuned they take dsp_dwp) are identical to
    TFLite Micro: built for the host (the plain-C forms of the DSP helpers) and on the Cortex-M4
    (the assembly)."""
    from op_check import check_model, side_by_side, tuning_log

    cases = _cases(TINY, range(0))
    extra = _tiny_cases(11, 30)
    path = tmp_path / "tiny.tflite"
    path.write_bytes(side_by_side(cases.cases + extra.cases))  # each case adds its input
    untuned = compile_model(path, tmp_path / "untuned", CompileOptions(cpu="cortex-m4"))
    assert {c.variant for c in untuned.lowered.calls} == {"dsp_dwp"}
    log = tuning_log(tmp_path / "dwt.json", path, "cortex-m4", lambda g, op: {"variant": "dsp_dwt"})
    result = compile_model(path, tmp_path / "mlf", CompileOptions(cpu="cortex-m4", tuning_log=log))
    variants = {result.graph.ops[c.op_index].source: c.variant for c in result.lowered.calls}
    assert set(variants.values()) == {"dsp_dwt"}, variants
    inputs = cases.inputs + extra.inputs
    if board == "host":  # compiled for the Cortex-M4, built on the host: the plain-C forms of the helpers
        from utvm.run.runner import run_compiled

        paths = []
        for k, arr in enumerate(inputs):
            np.save(tmp_path / f"in{k}.npy", arr)
            paths.append(tmp_path / f"in{k}.npy")
        assert run_compiled(path, result, "host", tmp_path, paths).outputs_match_reference
    else:
        check_model(path, tmp_path, board, inputs, tuning_log=log)


@pytest.mark.parametrize("board", ["host", pytest.param("mps2/an386", marks=needs_qemu)])
def test_tiny_map_output_over_its_input(board: str, tmp_path: Path) -> None:
    """A stride-1 tiny map (dsp_dwt by a tuning log, 3x3 -> 3x3) whose input dies at it writes its
    output over the input (each group of four channels is converted before its outputs are
    written); identical to TFLite Micro."""
    from op_check import check_model, side_by_side, tuning_log

    path = tmp_path / "tiny_inplace.tflite"
    path.write_bytes(side_by_side([lambda m: _conv_dw_conv(m, 1, (3, 3, 8, 14))]))
    log = tuning_log(tmp_path / "dwt.json", path, "cortex-m4",
                     lambda g, op: {"variant": "dsp_dwt"} if op.kind == "depthwise_conv2d" else None)
    result = compile_model(path, tmp_path / "mlf", CompileOptions(cpu="cortex-m4", tuning_log=log))
    call = next(c for c in result.lowered.calls if result.graph.ops[c.op_index].kind == "depthwise_conv2d")
    op = result.graph.ops[call.op_index]
    assert call.variant == "dsp_dwt" and call.inplace
    assert any(t.name == op.outputs[0] and t.how == "inplace" and t.target == op.inputs[0]
               for t in result.plan.tenants)
    check_model(path, tmp_path, board, tuning_log=log)


# ---------------------------------------------------------------------------------------
# channel multiplier > 1: the convolution kernels (one input channel) and the Helium kernels

#: fixed multiplier > 1 layers: keyword spotting (one channel, 10x8 / 3x3 / 5x5), DS-CNN style
#: multiplier 2, 1-D (height 1) of 3 to 15 taps, odd multipliers, narrow maps, dilation
MULT_FIXED = [
    dict(shape=(20, 10, 1), kernel=(10, 8), stride=(2, 2), same=True, mult=8, act="RELU"),
    dict(shape=(24, 12, 1), kernel=(10, 8), stride=(2, 1), same=False, mult=2, act="RELU"),
    dict(shape=(13, 9, 1), kernel=(3, 3), stride=(2, 2), same=True, mult=16, act="NONE"),
    dict(shape=(12, 5, 1), kernel=(5, 5), stride=(1, 1), same=True, mult=3, act="RELU6"),
    dict(shape=(7, 10, 16), kernel=(3, 3), stride=(1, 1), same=True, mult=2, act="RELU6"),
    dict(shape=(9, 5, 24), kernel=(3, 3), stride=(2, 2), same=True, mult=2, act="NONE"),
    dict(shape=(6, 7, 5), kernel=(3, 3), stride=(1, 1), same=False, mult=4, act="RELU", zy=-128),
    dict(shape=(1, 20, 12), kernel=(1, 9), stride=(1, 1), same=False, mult=2, act="RELU"),
    dict(shape=(1, 17, 8), kernel=(1, 3), stride=(1, 1), same=True, mult=4, act="NONE"),
    dict(shape=(1, 25, 6), kernel=(1, 5), stride=(1, 2), same=True, mult=3, act="RELU6"),
    dict(shape=(1, 30, 4), kernel=(1, 15), stride=(1, 1), same=True, mult=2, act="NONE"),
    dict(shape=(8, 8, 6), kernel=(5, 5), stride=(1, 1), same=True, mult=2, act="RELU"),  # 25 taps: helium_mult
    dict(shape=(9, 9, 4), kernel=(3, 3), stride=(1, 1), dilation=(2, 1), same=True, mult=2, act="NONE"),
    dict(shape=(5, 6, 3), kernel=(2, 2), stride=(2, 2), same=False, mult=5, act="RELU", per_channel=False),
    dict(shape=(6, 5, 8), kernel=(3, 3), stride=(1, 1), same=True, mult=2, act="RELU", per_channel=True,
         last=600.0),  # a channel of its own shift
    dict(shape=(4, 6, 4), kernel=(3, 3), stride=(1, 1), same=True, mult=2, batch=2, act="RELU"),
    dict(shape=(1, 8, 12), kernel=(1, 8), stride=(1, 2), same=False, mult=4, act="NONE"),  # one output pixel
]


def _mult_cases(seed: int, n: int) -> DwCases:
    """MULT_FIXED and n seeded random multiplier > 1 layers: one input channel or 2 to 20,
    height 1 (1-D) or 2-D maps, windows 1x1 to 10x8, strides 1 and 2, SAME or VALID."""
    rng = np.random.default_rng(seed)
    cases = _cases([{"dilation": (1, 1), "batch": 1, **f} for f in MULT_FIXED], range(0))
    for k in range(n):
        one_d = rng.random() < 0.3
        kernel = (1, int(rng.choice([3, 5, 7, 9]))) if one_d else tuple(
            int(v) for v in [(3, 3), (3, 3), (5, 5), (10, 8), (4, 10), (2, 3)][int(rng.integers(6))])
        cin = 1 if rng.random() < 0.35 else int(rng.integers(2, 21))
        h = 1 if one_d else int(rng.integers(kernel[0], kernel[0] + 12))
        w = int(rng.integers(kernel[1], kernel[1] + 14))
        stride = (1, int(rng.integers(1, 3))) if one_d else tuple(int(v) for v in rng.integers(1, 3, 2))
        cases.layer(seed * 1000 + k, shape=(h, w, cin), kernel=kernel, stride=stride, dilation=(1, 1),
                    same=bool(rng.random() < 0.5), mult=int(rng.choice([2, 3, 4, 8])), batch=1)
    return cases


def _mult_variant(op: Operator, graph: object, cpu: str) -> str:
    """The kernel a multiplier > 1 layer takes (batch 1)."""
    x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]  # type: ignore[attr-defined]
    kh, kw = w.shape[1], w.shape[2]
    if x.shape[3] == 1:
        # the Cortex-M4: few filters of small windows on dsp_dwp (ops/depthwise_conv2d.py, conv_gives_way)
        small = op.attrs["depth_multiplier"] <= DWP_CONV_MAX_MULT and kh * kw <= DWP_CONV_MAX_TAPS
        return "dsp_dwp" if cpu == "cortex-m4" and small else "conv"
    if cpu == "cortex-m4":
        return "dsp_dwp"
    y = graph.tensors[op.outputs[0]]  # type: ignore[attr-defined]
    if op.attrs["depth_multiplier"] % 4 == 0 and not any(op.attrs["padding"]) and y.shape[1] * y.shape[2] <= DWX_PIXELS:
        return "helium_pix"
    if op.attrs["dilation"] == (1, 1) and dwr_takes(tuple(x.shape), kh, op.attrs["depth_multiplier"], y.shape[2]):
        return "helium_row"
    pw = (y.shape[2] - 1) * op.attrs["strides"][1] + (kw - 1) * op.attrs["dilation"][1] + 1
    reach = (kh - 1) * op.attrs["dilation"][0] * pw + (kw - 1) * op.attrs["dilation"][1]
    tiny = y.shape[1] * y.shape[2] < 8  # fewer pixels than utvm_mve_dwm_s8's vectors
    return "helium_dot" if (kh > 1 or tiny) and kh * kw <= 16 and reach <= 255 else "helium_mult"


@pytest.fixture(scope="module")
def mult_model(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, DwCases]:
    from op_check import side_by_side

    cases = _mult_cases(23, 14)
    path = tmp_path_factory.mktemp("dwm") / "dwm.tflite"
    path.write_bytes(side_by_side(cases.cases))
    return path, cases


@pytest.mark.parametrize("cpu", ["cortex-m4", "cortex-m55"])
def test_multiplier_kernels_taken(mult_model: tuple[Path, DwCases], cpu: str, tmp_path: Path) -> None:
    """One input channel: the convolution kernels (conv) on both CPUs (on the Cortex-M4 dsp_dwp for
    multipliers up to 4 of windows up to 64 taps, conv_gives_way); more channels: dsp_dwp on
    the Cortex-M4, on the M55 helium_pix on VALID multipliers 4n of at most DWX_PIXELS pixels,
    helium_row where dwr_takes says so (fewer than 8 channels, 1-D
    layers, 2-D layers of multiplier 2 x odd on rows that fill its vectors), else helium_dot
    (2-D windows of at most 16 taps) or helium_mult; the
    batch-2 layer (not taken by the Helium kernels) dsp_dwp."""
    path, cases = mult_model
    assert len(cases.cases) >= 30
    result = compile_model(path, tmp_path / "mlf", CompileOptions(cpu=cpu))
    taken = {}
    for call in result.lowered.calls:
        op = result.graph.ops[call.op_index]
        assert op.attrs["depth_multiplier"] > 1
        if result.graph.tensors[op.inputs[0]].shape[0] == 2:
            one = result.graph.tensors[op.inputs[0]].shape[3] == 1
            assert call.variant == (_mult_variant(op, result.graph, cpu) if one else "dsp_dwp")
            continue
        expected = _mult_variant(op, result.graph, cpu)
        assert call.variant == expected, (op.source, call.variant, expected)
        taken[expected] = taken.get(expected, 0) + 1
    assert set(taken) == ({"conv", "dsp_dwp"} if cpu == "cortex-m4"
                          else {"conv", "helium_dot", "helium_mult", "helium_row", "helium_pix"}), taken


@pytest.mark.parametrize("cpu", ["cortex-m4", "cortex-m55"])
def test_multiplier_layers_match_tflite_micro_on_host(mult_model: tuple[Path, DwCases], cpu: str,
                                                      tmp_path: Path) -> None:
    """Compiled for each CPU and built on the host (the plain-C forms of the kernels): identical
    to TFLite Micro."""
    from utvm.run.runner import run_compiled

    path, cases = mult_model
    result = compile_model(path, tmp_path / "mlf", CompileOptions(cpu=cpu, constants_target="host"))
    paths = []
    for k, arr in enumerate(cases.inputs):
        np.save(tmp_path / f"in{k}.npy", arr)
        paths.append(tmp_path / f"in{k}.npy")
    report = run_compiled(path, result, "host", tmp_path, paths)
    assert report.outputs_match_reference and report.max_abs_diff == 0


@needs_qemu
@pytest.mark.parametrize("board", ["mps2/an386", "mps3/an547"])
def test_multiplier_layers_match_tflite_micro(mult_model: tuple[Path, DwCases], board: str,
                                              tmp_path: Path) -> None:
    """On the emulated Cortex-M4 (conv, dsp_dwp) and Cortex-M55 (conv on utvm_mve_conv42_s8,
    utvm_mve_dwd_s8, utvm_mve_dwm_s8): identical to TFLite Micro, the kernels warning-free."""
    from op_check import assert_kernels_warning_free, check_model

    path, cases = mult_model
    check_model(path, tmp_path, board, cases.inputs)
    assert_kernels_warning_free(tmp_path, board)


#: seeded shapes of tests/layer_shapes.py (family, shape, activation) that dsp_dwp runs on the
#: Cortex-M4 and the most instructions per MAC each may take there, measured alone (the planes
#: fit to the one layer's pool), about 3% over the figures of 2026-12-03: 2.09, 1.92, 2.04, 2.49,
#: 2.52, 2.48, 1.79 (before the clamped and negative-tie 3x3 assembly, utvm_dwp_chan_g, the far
#: conversion and the orientation by conversion: 3.19, 3.00, 2.65, 4.45, 6.51, 4.24, 1.99)
SEEDED_BOUNDS = [
    (("mobilenet_v1", "[32, 32, 32] 3x3 s1x1 SAME m1 -> 32", "RELU6"), 2.15),
    (("kws_ds", "[25, 20, 64] 3x3 s1x1 VALID m1 -> 64", "RELU"), 1.98),
    (("mobilenet_v3", "[8, 8, 480] 3x3 s1x1 SAME m1 -> 480", "NONE"), 2.11),
    (("mobilenet_v1", "[24, 24, 64] 3x3 s2x2 SAME m1 -> 64", "NONE"), 2.56),
    (("kws_ds", "[49, 20, 64] 3x3 s2x2 VALID m1 -> 64", "RELU"), 2.6),
    (("stream1d", "[1, 49, 48] 1x9 s1x1 SAME m1 -> 48", "RELU6"), 2.55),
    (("mobilenet_v3", "[16, 16, 120] 5x5 s1x1 SAME m1 -> 120", "RELU"), 1.85),
]


@needs_qemu
@pytest.mark.slow
@pytest.mark.parametrize("key,bound", SEEDED_BOUNDS, ids=[f"{k[0]} {k[1]}" for k, _ in SEEDED_BOUNDS])
def test_seeded_layers_instructions_per_mac(key: tuple[str, str, str], bound: float, tmp_path: Path) -> None:
    """Each of SEEDED_BOUNDS' layers alone on mps2/an386: bit-exact with TFLite Micro and within
    its bound."""
    from layer_shapes import add_layer, shapes
    from op_check import check_model

    (layer,) = [s for s in shapes("DEPTHWISE_CONV_2D", 200) if (s.family, s.text(), s.activation) == key]
    m = ModelBuilder("one layer")
    x, y = add_layer(m, layer, "l")
    report = check_model(m.finish(x, y), tmp_path, "mps2/an386")
    assert report.instructions is not None
    ipm = report.instructions / layer.macs
    assert ipm <= bound, (key, ipm)
