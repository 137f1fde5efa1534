"""The seeded layer shapes of benchmarks/bench_layers.py (tests/layer_shapes.py), and the
Cortex-M55's kernel for the depthwise layers its Helium kernels do not take (dsp_dwp)."""

from __future__ import annotations

from pathlib import Path

import pytest

from layer_shapes import FAMILIES, OPS, Shape, add_layer, shapes
from op_check import check_model, side_by_side
from tflite_builder import ModelBuilder
from utvm.compiler import CompileOptions, compile_model
from utvm.run.runner import run_compiled

#: the issue's keyword-spotting layer: one input channel, multiplier 8, 10x8 window, stride 2
KWS_M8 = Shape("DEPTHWISE_CONV_2D", "kws", (1, 49, 40, 1), 8, kernel=(10, 8), stride=(2, 2), multiplier=8)
#: a streaming model's depthwise 1-D layer (height 1)
DW_1D = Shape("DEPTHWISE_CONV_2D", "stream1d", (1, 1, 49, 32), 32, kernel=(1, 5), activation="RELU")


#: the families issue 23 names, by the operators that must have them
NAMED = {
    "kws": OPS, "stream1d": OPS, "autoencoder": ("CONV_2D", "FULLY_CONNECTED"),
    "mobilenet_v1": ("CONV_2D", "DEPTHWISE_CONV_2D"), "mobilenet_v2": ("CONV_2D", "DEPTHWISE_CONV_2D"),
    "mobilenet_v3": ("CONV_2D", "DEPTHWISE_CONV_2D"), "resnet8": ("CONV_2D",), "resnet18": ("CONV_2D",),
    "lstm": ("FULLY_CONNECTED",), "svdf": ("FULLY_CONNECTED",),
}
#: the maps of a 96 and of a 128 pixel MobileNet (strides 2 to 32)
MAPS_96, MAPS_128 = {48, 24, 12, 6, 3}, {64, 32, 16, 8, 4}


def _key(s: Shape) -> tuple[object, ...]:
    """What makes two shapes different (not their seed, activation or family)."""
    return (s.op, s.input, s.out, s.kernel, s.stride, s.padding, s.multiplier, s.per_channel)


@pytest.mark.parametrize("op", OPS)
def test_200_distinct_seeded_shapes_per_op(op: str) -> None:
    a = shapes(op, 200, seed=0)
    assert len(a) == 200 and len({_key(s) for s in a}) == 200
    assert a == shapes(op, 200, seed=0) and a != shapes(op, 200, seed=1)
    assert [_key(s) for s in shapes(op, 200, seed=1)] != [_key(s) for s in a]
    # the first n of a list are the list of n (a shorter run measures a prefix)
    assert shapes(op, 50, seed=0) == a[:50]
    assert min(s.macs for s in a) >= 1000
    assert {s.family for s in a} == set(FAMILIES[op][1])
    assert max(s.weight_bytes for s in a) <= 256 * 1024
    assert len({s.seed for s in a}) == 200
    for family, ops in NAMED.items():
        assert (family in {s.family for s in a}) == (op in ops), family


def test_named_families_have_their_layers() -> None:
    by = {op: shapes(op, 200, seed=0) for op in OPS}
    dw, conv, fc = by["DEPTHWISE_CONV_2D"], by["CONV_2D"], by["FULLY_CONNECTED"]
    # keyword spotting: one input channel, multiplier > 1; streaming: height 1
    assert sum(s.family == "kws" and s.input[3] == 1 and s.multiplier > 1 for s in dw) >= 20
    assert all(s.input[1] == 1 for s in dw + conv if s.family == "stream1d")
    # the MobileNets at 96 and at 128 pixels; V3's 5x5 depthwise and squeeze-excite 1x1 maps
    for family in ("mobilenet_v1", "mobilenet_v2", "mobilenet_v3"):
        maps = {s.input[1] for s in dw + conv if s.family == family}
        assert maps & MAPS_96 and maps & MAPS_128, (family, maps)
    v3 = [s for s in dw + conv if s.family == "mobilenet_v3"]
    assert any(s.kernel == (5, 5) for s in v3) and any(s.input[1] == 1 for s in v3)
    # ResNet-18 style: 3x3 on 32, 16 and 8 maps with 64-512 channels
    r18 = [s for s in conv if s.family == "resnet18"]
    assert {s.input[1] for s in r18 if s.kernel == (3, 3) and s.input[3] >= 64} >= {32, 16, 8}
    assert max(s.out for s in r18) == 512
    assert {s.input[1:] for s in conv if s.family == "resnet8"} & {(32, 32, 16), (16, 16, 32), (8, 8, 64)}
    # LSTM gates: 4 x units; autoencoders: the 640 - 128 - 8 of MLPerf Tiny's AD among others
    assert all(s.out % 4 == 0 for s in fc if s.family == "lstm")
    assert {s.input[1] for s in fc if s.family == "autoencoder"} >= {640, 128}


def _model(layers: list[Shape]) -> bytes:
    cases = [lambda m, s=s, k=k: add_layer(m, s, f"l{k}") for k, s in enumerate(layers)]
    return side_by_side(cases, "layer shapes")


def test_sample_bit_exact_for_cortex_m55_on_host(tmp_path: Path) -> None:
    """A few generated shapes per operator compiled for the Cortex-M55 (plain-C fallbacks on the
    host) equal TFLite Micro; the depthwise layers that are not 3x3 of multiplier 1 take dsp_dwp."""
    layers = [KWS_M8, DW_1D]
    for op in OPS:
        layers += sorted(shapes(op, 30, seed=3), key=lambda s: s.macs)[:3]
    path = tmp_path / "model.tflite"
    path.write_bytes(_model(layers))
    result = compile_model(path, tmp_path / "mlf", CompileOptions(cpu="cortex-m55", constants_target="host"))
    report = run_compiled(path, result, "host", tmp_path)
    assert report.outputs_match_reference
    for s, call in zip(layers, result.lowered.calls):
        if s.op == "DEPTHWISE_CONV_2D" and (s.kernel != (3, 3) or s.multiplier != 1):
            assert call.variant == "dsp_dwp", (s.text(), call.variant)


@pytest.mark.slow
@pytest.mark.parametrize("layer", [KWS_M8, DW_1D], ids=["kws_m8", "dw_1d"])
def test_depthwise_on_cortex_m55_near_the_m4(tmp_path: Path, layer: Shape) -> None:
    """The issue's keyword-spotting layer ran 3.02 instructions per MAC on the M55 (generic
    kernel) against 1.52 on the M4; with dsp_dwp on both, the M55 within 5% of the M4 (this
    layer: 2.04 and 1.95, within 2.1; 1.80 and 1.77 before dsp_dwp kept its taps int8 in flash
    and widened each channel's 80 taps before its outputs, b136683)."""
    m = ModelBuilder("one layer")
    x, y = add_layer(m, layer, "l")
    model = m.finish(x, y)
    figures = {}
    for board in ("mps2/an386", "mps3/an547"):
        work = tmp_path / board.replace("/", "_")
        work.mkdir()
        report = check_model(model, work, board)
        assert report.instructions is not None
        figures[board] = report.instructions / layer.macs
    # the 1-D layer stays above the bounds on both CPUs (3.75 and 3.77: dsp_dwp's planes
    # of one row; the generic kernel took 7.7 on the M55)
    bound = 2.1 if layer is KWS_M8 else 4.0
    assert figures["mps3/an547"] <= bound and figures["mps2/an386"] <= bound, figures
    assert figures["mps3/an547"] <= 1.05 * figures["mps2/an386"], figures
