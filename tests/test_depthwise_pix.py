"""depthwise_conv2d's helium_pix: multiplier 4n, VALID windows, at most DWX_PIXELS output pixels
on the Cortex-M55 (utvm_mve_dwx_s8: output channels in the lanes, one VMLA per tap and group of
four). The layers (1-D and 2-D windows, strides 1 and 2, multipliers 4 and 8, NONE/RELU/RELU6,
per channel and per tensor) take the variant; padded windows, more pixels and multiplier 2 do
not; all bit-exact with TFLite Micro (QEMU), and the seeded one-pixel stream1d layer within
its bound."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from layer_shapes import Shape, layers_model
from op_check import check_model
from toolchains import toolchain_problem
from utvm.compiler import CompileOptions, compile_model

DW = "DEPTHWISE_CONV_2D"
#: the layers helium_pix takes
TAKEN = [Shape(DW, "stream1d", (1, 1, 8, 64), 256, kernel=(1, 8), stride=(1, 2), padding="VALID", multiplier=4,
               seed=1),
         Shape(DW, "stream1d", (1, 1, 7, 6), 48, kernel=(1, 5), padding="VALID", multiplier=8, activation="RELU",
               seed=2),
         Shape(DW, "k3", (1, 3, 3, 5), 20, kernel=(3, 3), padding="VALID", multiplier=4, activation="RELU6",
               per_channel=False, seed=3),
         Shape(DW, "k3", (1, 5, 3, 3), 12, kernel=(3, 3), stride=(2, 1), padding="VALID", multiplier=4, seed=4)]
#: the layers it leaves to the other kernels
LEFT = [Shape(DW, "same", (1, 1, 8, 16), 64, kernel=(1, 3), padding="SAME", multiplier=4, seed=10),
        Shape(DW, "wide", (1, 1, 10, 16), 64, kernel=(1, 7), padding="VALID", multiplier=4, seed=11),
        Shape(DW, "m2", (1, 1, 8, 16), 32, kernel=(1, 8), padding="VALID", multiplier=2, seed=12)]


def model() -> bytes:
    return layers_model(TAKEN + LEFT, "depthwise helium_pix")


def test_few_pixel_layers_take_helium_pix(tmp_path: Path) -> None:
    path = tmp_path / "dw.tflite"
    path.write_bytes(model())
    result = compile_model(path, tmp_path / "mlf", CompileOptions(cpu="cortex-m55"))
    variants = [c.variant for c in result.lowered.calls]
    assert variants[:len(TAKEN)] == ["helium_pix"] * len(TAKEN)
    assert "helium_pix" not in variants[len(TAKEN):]


@pytest.mark.slow
@pytest.mark.skipif(toolchain_problem() is not None, reason="bare-metal toolchain missing")
def test_bit_exact_on_cortex_m55(tmp_path: Path) -> None:
    report = check_model(model(), tmp_path, "mps3/an547")
    assert report.max_abs_diff == 0


@pytest.mark.slow
@pytest.mark.skipif(toolchain_problem() is not None, reason="bare-metal toolchain missing")
def test_seeded_one_pixel_layer_instructions() -> None:
    """stream1d [1,8,64] 1x8 s1x2 VALID m4 (issue 23's worst layer on both CPUs): 3,000
    instructions on mps3/an547 (1.465 per MAC; 12,400 on utvm_mve_dwd_s8 before), 3% above."""
    from layer_shapes import shapes

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from bench_layers import run_chunk

    layers = [s for s in shapes(DW, 200, 0) if s.text() == "[1, 8, 64] 1x8 s1x2 VALID m4 -> 256"]
    assert len(layers) == 1
    row = run_chunk(layers, "mps3/an547", None, "test")[0][0]
    assert row["exact"]
    assert row["instructions"] / layers[0].macs <= 1.51
