"""The Cortex-M4/M7/M33 kernels of issue 23's slow int8 layer classes against TFLite Micro:

- CONV_2D of one input channel with windows of at most 10 taps (the first layers of keyword and
  autoencoder models; conv2d's dsp_short, kernels/shortk.py): seeded layers (windows 1x1 to 1x10, 2x5,
  3x3, 5x2 and 9x1, strides, SAME/VALID, batch, 1 to 64 output channels, zero points, per-channel and
  per-tensor scales, activations, with and without a bias);
- FULLY_CONNECTED of one row whose units leave one or two past whole blocks of four (dsp_gemm
  split in two calls, kernels/dsp_split.py): seeded layers of 5 to 18 units and 80 to 400 inputs;

side by side in one model, on the host (plain C) and on mps2/an386 (their assembly) and
mps3/an547; every output equal to TFLite Micro's. And the issue's shapes within its bounds of
instructions per MAC (2.0 on the Cortex-M4, 1.0 on the M55; the M55 never above the M4), each
layer timed on its own (benchmarks/bench_layers.py's UTVM_PROFILE run).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from layer_shapes import Shape
from mac_cases import Layer, _activation, _out_size, fc_case
from op_check import Cases, assert_kernels_warning_free, check_model, on_boards, side_by_side
from tflite_builder import ModelBuilder
from toolchains import toolchain_problem
from utvm.compiler import CompileOptions, compile_model
from utvm.importer import load_model
from utvm.kernels import dsp_split, shortk
from utvm.kernels.dsp import Geometry

N_CONV, N_FC = 24, 24
WINDOWS = [(3, 3), (3, 3), (1, 3), (1, 5), (3, 1), (2, 2), (2, 4), (1, 1), (2, 5), (3, 2), (1, 9), (1, 10), (5, 2),
           (9, 1)]


def short_case(cases: Cases, seed: int) -> None:
    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        rng = np.random.default_rng(seed)
        L = Layer(m, rng, f"short_{seed}", "int8")
        kh, kw = WINDOWS[seed % len(WINDOWS)]
        sh, sw = (int(v) for v in rng.integers(1, 3, 2))
        cout = int(rng.choice([1, 3, 4, 8, 16, 28, 32, 64]))
        same = bool(rng.random() < 0.6)
        h, w = int(rng.integers(kh, 14)), int(rng.integers(kw, 12))
        batch = 2 if seed % 7 == 3 else 1
        oh, ow = _out_size(h, kh, sh, 1, same), _out_size(w, kw, sw, 1, same)
        ins: list[int] = []
        x = L.input((batch, h, w, 1), ins, cases.inputs)
        shape = (cout, kh, kw, 1)
        if seed % 4:
            wt = L.weights(shape, 0)
        else:  # one scale for the layer
            L.sw = np.full(cout, float(rng.uniform(0.004, 0.02)))
            wt = m.add_tensor(f"{L.tag}_w", shape, "int8", data=rng.integers(-127, 128, shape).astype(np.int8),
                              scale=float(L.sw[0]), zero_point=0)
        inputs = [x, wt] + ([L.bias(cout, None)] if rng.random() < 0.8 else [])
        y = L.output((batch, oh, ow, cout), kh * kw)
        m.add_operator("CONV_2D", inputs, [y], {
            "padding": "SAME" if same else "VALID", "stride_w": sw, "stride_h": sh, "dilation_w_factor": 1,
            "dilation_h_factor": 1, "fused_activation_function": _activation(rng, "int8")})
        return ins, [y]

    cases.cases.append(build)


def _fc_shape(rng: np.random.Generator) -> tuple[int, int, int]:
    return int(rng.choice([80, 100, 120, 256, 257, 400])), int(rng.choice([5, 6, 9, 10, 13, 14, 17, 18])), 1


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Cases]:
    cases = Cases()
    for seed in range(N_CONV):
        short_case(cases, seed)
    for seed in range(N_FC):
        fc_case(cases, 200 + seed, shape=_fc_shape)
    path = tmp_path_factory.mktemp("short") / "short.tflite"
    path.write_bytes(side_by_side(cases.cases, "short convolutions and split fully connected layers"))
    return path, cases


def test_the_layers_take_the_new_kernels(model: tuple[Path, Cases], tmp_path: Path) -> None:
    """On the Cortex-M4 every convolution runs dsp_short, every fully connected layer too big for
    dsp_tiny runs dsp_gemm in two calls (one C function per layer for dsp_short)."""
    result = compile_model(model[0], tmp_path / "mlf", CompileOptions(cpu="cortex-m4"))
    graph = load_model(model[0])
    calls = result.lowered.calls
    assert len(calls) == N_CONV + N_FC
    split = 0
    for call in calls:
        op = graph.ops[call.op_index]
        if op.kind == "conv2d":
            assert call.variant == "dsp_short"
        else:
            units, depth = graph.tensors[op.inputs[1]].shape
            split += call.variant == "dsp_gemm" and dsp_split.applies(Geometry(1, 1, 1, depth, 1, 1, units))
    assert split >= N_FC // 2
    assert shortk.applies(Geometry(1, 16, 16, 1, 16, 16, 32, 3, 3))
    assert not shortk.applies(Geometry(1, 16, 16, 2, 16, 16, 32, 3, 3))  # two input channels
    assert not shortk.applies(Geometry(1, 49, 10, 1, 25, 5, 64, 10, 4))  # 40 taps
    assert not shortk.applies(Geometry(1, 16, 16, 1, 16, 16, 97, 3, 3))  # 97 channels
    assert shortk.applies(Geometry(1, 400, 10, 1, 391, 10, 8, 10, 1))
    assert not shortk.applies(Geometry(1, 10, 600, 1, 1, 600, 8, 10, 1))  # taps 600 bytes apart
    assert dsp_split.applies(Geometry(1, 1, 1, 256, 1, 1, 5)) and not dsp_split.applies(Geometry(1, 1, 1, 256, 1, 1, 7))
    assert not dsp_split.applies(Geometry(1, 1, 2, 256, 1, 2, 5))  # two rows
    assert not dsp_split.applies(Geometry(1, 1, 1, 64, 1, 1, 10))  # 640 products (MLPerf Tiny IC's)


def test_matches_tflite_micro_on_host(model: tuple[Path, Cases], tmp_path: Path) -> None:
    path, cases = model
    check_model(path, tmp_path, "host", cases.inputs)


@pytest.mark.skipif(toolchain_problem() is not None, reason="bare-metal toolchain missing")
def test_matches_tflite_micro_on_cortex_m4(model: tuple[Path, Cases], tmp_path: Path) -> None:
    """Bit-exact with the generated assembly; the model's C free of warnings (-Wall -Wextra -Werror)."""
    path, cases = model
    check_model(path, tmp_path, "mps2/an386", cases.inputs)
    assert_kernels_warning_free(tmp_path, "mps2/an386")


@pytest.mark.skipif(toolchain_problem() is not None, reason="bare-metal toolchain missing")
@pytest.mark.slow
def test_matches_tflite_micro_on_cortex_m55(model: tuple[Path, Cases], tmp_path: Path) -> None:
    path, cases = model
    check_model(path, tmp_path, "mps3/an547", cases.inputs)


#: the issue's layers that missed the bounds, the bound on mps2/an386 asserted here, and (comments)
#: their instructions per MAC there in benchmarks/results/layers.md (bench_layers' seeds) before
#: dsp_short / the split -> with these seeds after (M55: 0.69-0.79 and 0.35 / 0.25, unchanged)
ISSUE_LAYERS = [
    (Shape("CONV_2D", "autoencoder", (1, 16, 16, 1), 32, kernel=(3, 3), activation="RELU6", seed=11), 1.75),  # 2.72 -> 1.68
    (Shape("CONV_2D", "autoencoder", (1, 16, 16, 1), 32, kernel=(3, 3), stride=(2, 2), activation="RELU6", seed=12),
     1.85),  # 2.72 -> 1.70
    (Shape("CONV_2D", "kws", (1, 32, 10, 1), 28, kernel=(3, 3), activation="RELU", seed=13), 1.85),  # 2.48 -> 1.59
    (Shape("CONV_2D", "kws", (1, 32, 10, 1), 32, kernel=(3, 3), stride=(2, 2), activation="RELU6", seed=14),
     1.85),  # 2.73 -> 1.71
    (Shape("CONV_2D", "kws", (1, 49, 40, 1), 32, kernel=(3, 3), stride=(2, 2), activation="RELU", seed=15),
     1.85),  # 2.30 -> 1.58
    (Shape("FULLY_CONNECTED", "heads", (1, 256), 5, seed=16), 1.95),  # 2.25 -> 1.81
    (Shape("FULLY_CONNECTED", "kws", (1, 640), 6, activation="RELU", seed=17), 1.6),  # 1.81 -> 1.45
]


@on_boards
def test_issue_layers_within_the_bounds(tmp_path: Path, board: str) -> None:
    """Each layer's own instructions per MAC: within the figures above on the Cortex-M4 (the
    issue's bound 2.0), within 1.0 on the M55; bit-exact on both."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from bench_layers import run_chunk

    rows = run_chunk([s for s, _ in ISSUE_LAYERS], board, None, "test")[0]
    for (s, bound), row in zip(ISSUE_LAYERS, rows, strict=True):
        ipm = row["instructions"] / s.macs
        assert row["exact"] is not False, s.text()
        assert ipm <= (bound if board == "mps2/an386" else 1.0), (s.text(), ipm)
