"""int8 DEPTHWISE_CONV_2D of depth multiplier 1 on Helium (the helium_k variant:
utvm_mve_dwk_row_s8 of utvm/kernels/depthwise_mve_k.h), against TFLite Micro.

Seeded multiplier-1 layers side by side in one model: height 1 (1-D windows 1x3 to 1x15),
small maps, 5x5 windows, strides 1 and 2, SAME and VALID, channel counts that are not
multiples of 16 or 4 (the last channels under a predicate), dilation, per-tensor and
per-channel scales, left shifts, fused activations: identical to TFLite Micro on the host (plain
C) and on the emulated Cortex-M55 (mps3/an547, Helium), and on the emulated Cortex-M4
(mps2/an386), whose variants the same layers exercise.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dw_cases import DwCases, cases_model
from layer_shapes import Shape, add_layer
from op_check import check_model
from tflite_builder import ModelBuilder
from toolchains import toolchain_problem
from utvm.compiler import CompileOptions, compile_model
from utvm.importer import load_model
from utvm.ops.depthwise_conv2d import helium_plans

needs_qemu = pytest.mark.skipif(toolchain_problem() is not None, reason="bare-metal toolchain missing")

#: (h, w, c), kernel, stride, SAME
FIXED = [
    ((1, 49, 96), (1, 3), (1, 1), False),
    ((1, 16, 32), (1, 5), (1, 2), True),
    ((1, 100, 48), (1, 5), (1, 1), False),
    ((1, 49, 30), (1, 15), (1, 1), True),
    ((1, 64, 17), (1, 7), (1, 1), True),
    ((1, 25, 5), (1, 9), (1, 2), False),
    ((1, 8, 3), (1, 3), (1, 1), True),
    ((1, 33, 20), (1, 5), (1, 2), True),
    ((12, 12, 5), (3, 3), (2, 2), True),
    ((6, 6, 12), (3, 3), (1, 1), True),
    ((16, 16, 9), (5, 5), (2, 2), True),
    ((9, 7, 18), (5, 5), (1, 1), True),
    ((7, 9, 6), (5, 5), (1, 1), False),
    ((4, 4, 21), (3, 3), (2, 2), True),
    ((5, 11, 1), (3, 3), (1, 1), True),
    ((10, 3, 13), (3, 1), (1, 1), True),
    ((13, 1, 8), (5, 1), (2, 1), True),
]
N_RANDOM = 16


def _cases() -> DwCases:
    cases = DwCases()
    for k, (shape, kernel, stride, same) in enumerate(FIXED):
        cases.layer(2000 + k, shape=shape, kernel=kernel, stride=stride, same=same, mult=1, batch=1,
                    dilation=(1, 1))
    rng = np.random.default_rng(23)
    for k in range(N_RANDOM):
        kh = 1 if k % 2 == 0 else int(rng.integers(1, 6))
        kw = int(rng.integers(1, 10))
        h = 1 if kh == 1 else int(rng.integers(kh, kh + 8))
        dw = 2 if k % 5 == 4 else 1
        fixed = dict(shape=(h, int(rng.integers((kw - 1) * dw + 1, kw * dw + 30)), int(rng.integers(1, 40))),
                     kernel=(kh, kw), stride=(1, int(rng.integers(1, 3))), dilation=(1, dw), mult=1, batch=1)
        cases.layer(3000 + k, **fixed)
    return cases


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, DwCases]:
    return cases_model(tmp_path_factory.mktemp("dwk"), _cases(), "dwk")


def test_helium_k_taken(model: tuple[Path, DwCases], tmp_path: Path) -> None:
    """On the Cortex-M55 every layer the 3x3 Helium kernels do not take runs helium_k, but for
    those of fewer than 8 channels without dilation: helium_row (pixels in the lanes)."""
    path, _ = model
    result = compile_model(path, tmp_path / "mlf", CompileOptions(cpu="cortex-m55"))
    variants = [call.variant for call in result.lowered.calls]
    assert len(variants) == len(FIXED) + N_RANDOM
    assert set(variants) <= {"helium", "helium_k", "helium_row"}, variants
    for call in result.lowered.calls:
        op = result.graph.ops[call.op_index]
        few = result.graph.tensors[op.inputs[0]].shape[3] < 8 and op.attrs["dilation"] == (1, 1)
        assert (call.variant == "helium_row") == few, (op.source, call.variant)
    assert variants.count("helium_k") + variants.count("helium_row") >= len(variants) - 6, variants


#: seeded 3x3 stride-1 layers (output zero point -10..10): a RELU/RELU6 clamp narrower than int8
#: runs utvm_mve_dwg_s8's assembly (run3c, 0.6-0.86 instructions per MAC on mps3/an547, helium_k
#: 1.5-2.3), so dwg (a "rows"/"cols" plan) keeps them, as unclamped, but for "tiny" on the maps it
#: pads (0.84-0.90 there, dwg 0.98-1.02)
CLAMP_CASES = {((8, 8, 256), "SAME", "RELU6"): "dwg", ((13, 20, 64), "SAME", "RELU"): "dwg",
               ((4, 4, 1024), "SAME", "RELU6"): "tiny", ((3, 3, 256), "SAME", "RELU6"): "tiny",
               ((8, 8, 256), "SAME", "NONE"): "dwg", ((13, 20, 64), "VALID", "NONE"): "dwg",
               ((25, 5, 32), "SAME", "RELU"): "dwg"}


@pytest.mark.parametrize("case", sorted(CLAMP_CASES))
def test_clamped_stride1_plans(case: tuple[tuple[int, int, int], str, str], tmp_path: Path) -> None:
    hwc, padding, act = case
    m = ModelBuilder("clamp")
    i, o = add_layer(m, Shape("DEPTHWISE_CONV_2D", "kws_ds", (1, *hwc), hwc[2], (3, 3), (1, 1), padding, 1, act), "l0")
    path = tmp_path / "clamp.tflite"
    path.write_bytes(m.finish(i, o))
    g = load_model(path)
    plan = helium_plans(g, g.ops[0])[0]
    assert (plan if plan in ("k", "tiny") else "dwg") == CLAMP_CASES[case], plan


@pytest.mark.parametrize("board", ["host", pytest.param("mps3/an547", marks=needs_qemu),
                                   pytest.param("mps2/an386", marks=needs_qemu)])
def test_matches_tflite_micro(model: tuple[Path, DwCases], tmp_path: Path, board: str) -> None:
    path, cases = model
    check_model(path, tmp_path, board, cases.inputs)


#: instructions per MAC of helium_k on mps3/an547 for the seeded multiplier-1 layers it takes
#: (benchmarks/bench_layers.py --ops DEPTHWISE_CONV_2D --per-op 40 --multiplier 1; before:
#: dsp_dwp or utvm_mve_dw3x3_row_s8), 3% above the figures measured
M55_BOUNDS = {
    "[1, 100, 48] 1x5 s1x1 VALID m1 -> 48": 1.61,  # 3.74 before
    "[1, 16, 32] 1x5 s1x2 SAME m1 -> 32": 1.73,  # 4.61
    "[12, 12, 5] 3x3 s2x2 SAME m1 -> 5": 3.09,  # 4.88 (helium_row: 3.46 before its planes' fills once)
    "[6, 6, 12] 3x3 s1x1 SAME m1 -> 12": 2.24,  # 3.78
    "[16, 16, 20] 3x3 s2x2 SAME m1 -> 20": 1.64,  # 2.64
    "[16, 16, 96] 5x5 s1x1 SAME m1 -> 96": 1.27,  # 1.69
    "[12, 12, 20] 3x3 s2x2 SAME m1 -> 20": 2.01,  # 3.49
    "[1, 64, 16] 1x7 s1x1 SAME m1 -> 16": 1.43,  # 2.97
    "[12, 12, 36] 3x3 s2x2 SAME m1 -> 36": 1.96,  # 3.28
    "[1, 49, 64] 1x5 s1x1 VALID m1 -> 64": 1.64,  # 3.28
    "[12, 12, 12] 3x3 s1x1 SAME m1 -> 12": 1.80,  # 2.78
    "[1, 49, 32] 1x15 s1x1 SAME m1 -> 32": 1.14,  # 3.14
    "[8, 8, 20] 3x3 s1x1 SAME m1 -> 20": 1.76,  # 1.83
    "[1, 49, 96] 1x3 s1x1 VALID m1 -> 96": 2.10,  # 4.77
    "[16, 16, 8] 5x5 s2x2 SAME m1 -> 8": 1.34,  # 2.38
}


@needs_qemu
@pytest.mark.slow
def test_seeded_layers_instructions_per_mac(tmp_path: Path) -> None:
    """The seeded multiplier-1 layers helium_k takes, side by side as bench_layers.py runs them:
    bit-exact on both CPUs, within M55_BOUNDS on the Cortex-M55 and never more instructions
    there than on the Cortex-M4."""
    import sys

    from layer_shapes import shapes

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from bench_layers import run_chunk

    # the generator of 200 shapes per operator (i-layers) still yields 8 of the 15 measured shapes
    layers = [s for s in shapes("DEPTHWISE_CONV_2D", 200, 0) if s.text() in M55_BOUNDS]
    assert len(layers) >= 8
    (tmp_path / "m55").mkdir()
    (tmp_path / "m4").mkdir()
    m55 = run_chunk(layers, "mps3/an547", None, "test")[0]
    m4 = run_chunk(layers, "mps2/an386", None, "test")[0]
    slower = []
    for s, a, b in zip(layers, m55, m4):
        assert a["exact"] and b["exact"], s.text()
        assert a["instructions"] / s.macs <= M55_BOUNDS[s.text()], (s.text(), a["instructions"] / s.macs)
        if a["instructions"] > b["instructions"]:
            slower.append((s.text(), a["instructions"], b["instructions"]))
    # M55_SLOWER: the shapes still known to take more instructions on the M55 (issue 23, open)
    assert sorted(t for t, _, _ in slower) == sorted(M55_SLOWER), slower


#: seeded layers that take more instructions on the Cortex-M55 than on the Cortex-M4 (issue 23
#: item 4: none; [12,12,5] 3x3 s2 SAME was, 5,600 on helium_row against 5,360, until
#: utvm_mve_dwr_s8 filled its planes' padding once: 4,850). A new entry fails the test.
M55_SLOWER: tuple[str, ...] = ()


#: instructions per MAC on mps3/an547 of seeded clamped 3x3 stride-1 layers (RELU/RELU6, output
#: zero point above -128) that utvm_mve_dwg_s8 runs in its assembly (run3c; bench_layers.py
#: --filter on them), 3% above the figures measured; before, helium_k (the figure after #)
DWG_CLAMPED_BOUNDS = {
    ("mobilenet_v1", "[8, 8, 256] 3x3 s1x1 SAME m1 -> 256", "RELU6"): 0.735,  # 1.905
    ("mobilenet_v1", "[48, 48, 8] 3x3 s1x1 SAME m1 -> 8", "RELU6"): 0.607,  # 1.805
    ("mobilenet_v2", "[6, 6, 288] 3x3 s1x1 SAME m1 -> 288", "RELU6"): 0.820,  # 2.253
    ("kws_ds", "[13, 20, 64] 3x3 s1x1 SAME m1 -> 64", "RELU"): 0.766,  # 1.693
    ("kws_ds", "[13, 10, 16] 3x3 s1x1 SAME m1 -> 16", "RELU"): 0.881,  # 1.976
    ("kws_ds", "[25, 5, 32] 3x3 s1x1 SAME m1 -> 32", "RELU"): 0.755,  # 2.294
    ("kws_ds", "[49, 5, 32] 3x3 s1x1 VALID m1 -> 32", "RELU"): 0.697,  # 1.677
}


@needs_qemu
@pytest.mark.slow
def test_clamped_stride1_dwg_instructions_per_mac(tmp_path: Path) -> None:
    """The seeded clamped stride-1 layers of DWG_CLAMPED_BOUNDS, side by side as bench_layers.py
    runs them: bit-exact with TFLite Micro on the Cortex-M55 and within their bounds."""
    import sys

    from layer_shapes import shapes

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from bench_layers import run_chunk

    layers = [s for s in shapes("DEPTHWISE_CONV_2D", 200, 0) if (s.family, s.text(), s.activation) in DWG_CLAMPED_BOUNDS]
    assert len(layers) == len(DWG_CLAMPED_BOUNDS)
    for s, r in zip(layers, run_chunk(layers, "mps3/an547", None, "test")[0]):
        assert r["exact"], s.text()
        assert r["instructions"] / s.macs <= DWG_CLAMPED_BOUNDS[(s.family, s.text(), s.activation)], \
            (s.text(), r["instructions"] / s.macs)
