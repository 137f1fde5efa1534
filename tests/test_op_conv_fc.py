"""int8 CONV_2D and FULLY_CONNECTED against TFLite Micro, in the configurations the Cortex-M4/M7/M33
kernels (kernels_dsp.h: dsp_gemm) take: seeded random layers side by side in one model (input
and output channels that are and are not multiples of 4, pointwise layers read in place and
windows gathered into patches, kernels up to 10x4, strides, dilations, SAME/VALID padding, batch,
fully connected rows of any depth, zero points, per-channel and per-tensor weight scales, fused
activations, with and without a bias), with the default int8 weights and with the weights
widened to int16 (through a tuning log), on the host (the helpers' plain-C forms) and on
mps2/an386 (their assembly). Every output must equal TFLite Micro's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mac_cases import Layer, _activation, _out_size, fc_case
from op_check import Cases, check_model, side_by_side, tuning_log
from tflite_builder import ModelBuilder
from toolchains import toolchain_problem
from utvm.compiler import CompileOptions, compile_model
from utvm.importer import load_model
from utvm.kernels import tiny

N_CONV, N_FC = 28, 16


def conv_case(cases: Cases, seed: int) -> None:
    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        rng = np.random.default_rng(seed)
        L = Layer(m, rng, f"conv_{seed}", "int8")
        cin = int(rng.choice([1, 2, 3, 4, 5, 8, 12, 16]))
        cout = int(rng.choice([1, 2, 3, 4, 5, 6, 8, 12, 16]))
        if seed % 9 == 0:  # KWS's first layer, smaller
            (kh, kw), (sh, sw), (dh, dw), cin = (10, 4), (2, 2), (1, 1), 1
        elif seed % 3 == 0:  # pointwise
            (kh, kw), (sh, sw), (dh, dw) = (1, 1), (int(rng.integers(1, 3)),) * 2, (1, 1)
        else:
            kh, kw = (int(v) for v in rng.integers(1, 4, 2))
            sh, sw = (int(v) for v in rng.integers(1, 3, 2))
            dh, dw = (int(v) for v in rng.integers(1, 3, 2)) if rng.random() < 0.3 else (1, 1)
        same = bool(rng.random() < 0.6)
        h = int(rng.integers((kh - 1) * dh + 1, 13))
        w = int(rng.integers((kw - 1) * dw + 1, 11))
        batch = 2 if seed % 7 == 3 else 1
        oh, ow = _out_size(h, kh, sh, dh, same), _out_size(w, kw, sw, dw, same)
        ins: list[int] = []
        x = L.input((batch, h, w, cin), ins, cases.inputs)
        shape = (cout, kh, kw, cin)
        wt = L.weights(shape, 0) if seed % 4 else _per_tensor_4d(L, shape)
        inputs = [x, wt] + ([L.bias(cout, None)] if rng.random() < 0.8 else [])
        y = L.output((batch, oh, ow, cout), kh * kw * cin)
        m.add_operator("CONV_2D", inputs, [y], {
            "padding": "SAME" if same else "VALID", "stride_w": sw, "stride_h": sh, "dilation_w_factor": dw,
            "dilation_h_factor": dh, "fused_activation_function": _activation(rng, "int8")})
        return ins, [y]

    cases.cases.append(build)


def _per_tensor_4d(L: Layer, shape: tuple[int, ...]) -> int:
    """Filter weights with one scale (the converter's per-tensor layers)."""
    scale = float(L.rng.uniform(0.004, 0.02))
    L.sw = np.full(shape[0], scale)
    data = L.rng.integers(-127, 128, shape).astype(np.int8)
    return L.m.add_tensor(f"{L.tag}_w", shape, "int8", data=data, scale=scale, zero_point=0)


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Cases]:
    cases = Cases()
    for seed in range(N_CONV):
        conv_case(cases, seed)
    for seed in range(N_FC):
        fc_case(cases, 100 + seed)
    path = tmp_path_factory.mktemp("conv_fc") / "conv_fc.tflite"
    path.write_bytes(side_by_side(cases.cases, "int8 conv and fc"))
    return path, cases


def _wide_log(path: Path, model: Path, cpu: str | None) -> Path:
    """A tuning log giving every layer the dsp_gemm kernel with int16 weights."""
    return tuning_log(path, model, cpu, lambda g, op: {"variant": "dsp_gemm", "weights": "int16"})


def _log(weights: str, path: Path, model: Path, cpu: str | None) -> Path | None:
    """No log (int8), int16 weights, or (packed) every layer's dsp_gemm with its constants packed."""
    if weights == "packed":
        return tuning_log(path, model, cpu, lambda g, op: {"variant": "dsp_gemm", "consts": "packed"})
    return _wide_log(path, model, cpu) if weights == "int16" else None


def test_dsp_gemm_takes_the_int8_layers(model: tuple[Path, Cases], tmp_path: Path) -> None:
    """Untuned, every layer runs dsp_gemm but the small FC layers (dsp_tiny); with the log every
    layer runs dsp_gemm with the log's int16 weights."""
    result = compile_model(model[0], tmp_path / "mlf", CompileOptions(cpu="cortex-m4"))
    graph = load_model(model[0])
    variants = [call.variant for call in result.lowered.calls]
    assert len(variants) == N_CONV + N_FC
    for call in result.lowered.calls:
        op = graph.ops[call.op_index]
        w = graph.tensors[op.inputs[1]]
        fits = op.kind == "fully_connected" and tiny.applies(w.shape[1], w.shape[0], graph.tensors[op.inputs[0]].size
                                                             // w.shape[1])
        assert call.variant == ("dsp_tiny" if fits else "dsp_gemm")
    log = _wide_log(tmp_path / "log.json", model[0], "cortex-m4")
    tuned = compile_model(model[0], tmp_path / "tuned", CompileOptions(cpu="cortex-m4", tuning_log=log))
    configs = [tuned.configs.get(call.op_index) for call in tuned.lowered.calls]
    assert configs == [{"variant": "dsp_gemm", "weights": "int16"}] * (N_CONV + N_FC)
    assert {tuned.configs.source(call.op_index) for call in tuned.lowered.calls} == {"tuning log"}
    assert all(op.config is None and "config" not in op.attrs for op in tuned.graph.ops)  # the graph is not edited
    assert {call.variant for call in tuned.lowered.calls} == {"dsp_gemm"}


@pytest.mark.parametrize("weights", ["int8", "int16", "packed"])
def test_matches_tflite_micro_on_host(model: tuple[Path, Cases], tmp_path: Path, weights: str) -> None:
    path, cases = model
    check_model(path, tmp_path, "host", cases.inputs, tuning_log=_log(weights, tmp_path / "log.json", path, None))


@pytest.mark.skipif(toolchain_problem() is not None, reason="bare-metal toolchain missing")
@pytest.mark.parametrize("weights", ["int8", "int16", "packed"])
def test_matches_tflite_micro_on_cortex_m4(model: tuple[Path, Cases], tmp_path: Path, weights: str) -> None:
    path, cases = model
    check_model(path, tmp_path, "mps2/an386", cases.inputs,
                tuning_log=_log(weights, tmp_path / "log.json", path, "cortex-m4"))
