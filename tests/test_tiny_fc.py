"""Tiny int8 FULLY_CONNECTED layers (the dsp_tiny and helium_tiny variants, kernels/tiny.py): seeded
random shapes (depth 1..40, units 1..24, batch 1..3; the first N_BLOCKS depth 1..5 and 16..40
units, whole Helium blocks of 16 channels), activations NONE/RELU/RELU6/RELU_N1_TO_1,
per-tensor and per-channel weights, random zero points and output scales, side by side in one
model, bit-exact with TFLite Micro on the host (the plain-C utvm_dsp_tiny_fc, and
utvm_mve_tiny_fc of the layers compiled for the Cortex-M55), on the Cortex-M4 and on the
Cortex-M55 (the generated assembly). Layers that do not fit (depth > 16, many products) take the
other variants."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mac_cases import fc_case
from op_check import Cases, check_model, side_by_side
from toolchains import toolchain_problem
from utvm.compiler import CompileOptions, compile_model
from utvm.importer import load_model
from utvm.kernels import tiny

N_CASES = 48
#: of them, layers of depth up to MVE_LANES and 16 to 40 units (whole Helium blocks of 16 channels)
N_BLOCKS = 10
ACTIVATIONS = ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"]


def shape(rng: np.random.Generator) -> tuple[int, int, int]:
    """depth, units, batch of a case: mostly layers the variant takes."""
    depth = int(rng.integers(1, 17)) if rng.random() < 0.75 else int(rng.integers(1, 41))
    # rows deeper than 16 (widened onto the stack) mostly within the DSP limit of products
    most = tiny.MAX_MACS // depth if depth > 16 and rng.random() < 0.8 else 24
    return depth, int(rng.integers(1, most + 1)), int(rng.integers(1, 4)) if rng.random() < 0.35 else 1


def block_shape(rng: np.random.Generator) -> tuple[int, int, int]:
    depth = int(rng.integers(1, tiny.MVE_LANES + 1))
    return depth, int(rng.integers(16, 41)), int(rng.integers(1, 3))


def activation(rng: np.random.Generator) -> str:
    return str(rng.choice(ACTIVATIONS, p=[0.4, 0.3, 0.2, 0.1]))


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Cases]:
    cases = Cases()
    for seed in range(N_CASES):
        fc_case(cases, 1000 + seed, block_shape if seed < N_BLOCKS else shape, activation)
    path = tmp_path_factory.mktemp("tiny_fc") / "tiny_fc.tflite"
    path.write_bytes(side_by_side(cases.cases, "tiny int8 fc"))
    return path, cases


def test_dsp_tiny_takes_the_layers_that_fit(model: tuple[Path, Cases], tmp_path: Path) -> None:
    result = compile_model(model[0], tmp_path / "mlf", CompileOptions(cpu="cortex-m4"))
    graph = load_model(model[0])
    taken = stacked = 0
    for call in result.lowered.calls:
        op = graph.ops[call.op_index]
        units, depth = graph.tensors[op.inputs[1]].shape
        batch = graph.tensors[op.inputs[0]].size // depth
        assert (call.variant == "dsp_tiny") == tiny.applies(depth, units, batch), (depth, units, batch)
        taken += call.variant == "dsp_tiny"
        stacked += call.variant == "dsp_tiny" and not tiny.resident(depth, batch)
    assert taken >= N_CASES // 2 and stacked >= 2, (taken, stacked)
    # one generated function per distinct layer code, in the kernels' source
    assert result.lowered.c_source.count("__attribute__((naked, noinline)) static int32_t utvm_dsp_tiny_") >= 2


def test_helium_tiny_takes_the_layers_that_fit(model: tuple[Path, Cases], tmp_path: Path) -> None:
    result = compile_model(model[0], tmp_path / "mlf", CompileOptions(cpu="cortex-m55"))
    graph = load_model(model[0])
    blocks = 0
    for call in result.lowered.calls:
        op = graph.ops[call.op_index]
        units, depth = graph.tensors[op.inputs[1]].shape
        assert (call.variant == "helium_tiny") == tiny.mve_applies(depth, units), (depth, units)
        blocks += call.variant == "helium_tiny" and tiny.mve_blocks(depth, units) > 0
    assert blocks >= N_BLOCKS // 2, blocks
    assert "static int32_t utvm_mve_tiny_" in result.lowered.c_source


def test_no_tiny_kernel_without_the_dsp_extension(model: tuple[Path, Cases], tmp_path: Path) -> None:
    result = compile_model(model[0], tmp_path / "m3", CompileOptions(cpu="cortex-m3"))
    assert not {"dsp_tiny", "helium_tiny"} & {call.variant for call in result.lowered.calls}


def test_register_budget() -> None:
    """A row's pairs plus a channel's words fit the eleven registers up to 16 inputs (one row),
    deeper rows (up to 40 inputs) go through the stack; at most 256 products per row (Helium:
    1,024, up to 32 inputs)."""
    assert tiny.pair_words(16) == 8 and tiny.pair_words(15) == 8 and tiny.pair_words(13) == 7
    assert tiny.resident(16, 1) and not tiny.resident(16, 2) and tiny.resident(14, 3) and not tiny.resident(17, 1)
    assert tiny.applies(16, 16, 1) and not tiny.applies(16, 17, 1) and tiny.applies(16, 4, 2)
    assert tiny.applies(40, 6, 3) and not tiny.applies(41, 4, 1) and not tiny.applies(40, 7, 1)
    assert tiny.mve_applies(32, 32) and not tiny.mve_applies(32, 33) and not tiny.mve_applies(33, 1)


def test_matches_tflite_micro_on_host(model: tuple[Path, Cases], tmp_path: Path) -> None:
    path, cases = model
    check_model(path, tmp_path, "host", cases.inputs)


def test_helium_fallback_matches_tflite_micro_on_host(model: tuple[Path, Cases], tmp_path: Path) -> None:
    from utvm.run.runner import run_compiled

    path, cases = model
    inputs = []
    for k, arr in enumerate(cases.inputs):
        np.save(tmp_path / f"in{k}.npy", arr)
        inputs.append(tmp_path / f"in{k}.npy")
    result = compile_model(path, tmp_path / "mlf", CompileOptions(cpu="cortex-m55"))
    assert run_compiled(path, result, "host", tmp_path, inputs).outputs_match_reference


@pytest.mark.skipif(toolchain_problem() is not None, reason="bare-metal toolchain missing")
@pytest.mark.parametrize("board", ["mps2/an386", "mps3/an547"])
def test_matches_tflite_micro_on_board(model: tuple[Path, Cases], tmp_path: Path, board: str) -> None:
    path, cases = model
    check_model(path, tmp_path, board, cases.inputs)


@pytest.mark.parametrize("cpu", ["cortex-m4", "cortex-m55"])
def test_fallbacks_are_sanitizer_clean(model: tuple[Path, Cases], tmp_path: Path, cpu: str) -> None:
    """utvm_dsp_tiny_fc / utvm_mve_tiny_fc under ASan+UBSan on extreme and random inputs."""
    from sanitizer_build import build_and_run
    from toolchains import sanitizers_problem

    why = sanitizers_problem(tmp_path)
    if why:
        pytest.skip(why)
    result = compile_model(model[0], tmp_path / "mlf", CompileOptions(cpu=cpu, constants_target="host"))
    assert {"dsp_tiny", "helium_tiny"} & {c.variant for c in result.lowered.calls}
    run = build_and_run(result.mlf_dir, result.graph.name, randoms=1, workdir=tmp_path)
    assert run.problem == "", run.output[-3000:]
