"""conv2d's helium_fc: 1 x 1 convolutions whose output map is one pixel (MobileNetV3's
squeeze-excite layers) through fully_connected's utvm_mve_fc4_s8 on the Cortex-M55. The layers
(depths 1..960, 1..960 output channels, NONE/RELU/RELU6, per channel and per tensor, a 1 x 1
input with stride 2) take the variant, and so do layers of at most 3 output pixels whose patches
lie contiguous in the input (one fc4 row per pixel: VALID 1-D windows, windows as wide as the
input); wider maps, 4 pixels and padded windows do not; all bit-exact with TFLite Micro (QEMU)."""

from __future__ import annotations

from pathlib import Path

import pytest

from layer_shapes import Shape, layers_model
from op_check import check_model
from toolchains import toolchain_problem
from utvm.compiler import CompileOptions, compile_model

#: the layers helium_fc takes
TAKEN = [Shape("CONV_2D", "se", (1, 1, 1, cin), cout, stride=stride, activation=act, per_channel=pc, seed=k)
         for k, (cin, cout, stride, act, pc) in enumerate([
             (32, 112, (1, 1), "NONE", True), (72, 288, (1, 1), "RELU", True), (96, 24, (1, 1), "RELU6", False),
             (184, 48, (2, 2), "NONE", True), (960, 240, (1, 1), "RELU", False), (5, 3, (1, 1), "NONE", True),
             (1, 17, (1, 1), "RELU6", True), (17, 1, (2, 1), "NONE", False)])]
#: the layers it takes as one utvm_mve_fc4_s8 row per output pixel (at most FC_PATCH_PIXELS
#: pixels, each patch contiguous in the input: VALID windows one row high or as wide as it)
PATCHES = [Shape("CONV_2D", "k3", (1, 3, 3, 16), 8, kernel=(3, 3), padding="VALID", seed=101),
           Shape("CONV_2D", "stream1d", (1, 1, 8, 16), 48, kernel=(1, 7), padding="VALID", seed=102),
           Shape("CONV_2D", "stream1d", (1, 1, 7, 5), 19, kernel=(1, 3), stride=(1, 2), padding="VALID",
                 activation="RELU", seed=103),
           Shape("CONV_2D", "rows", (1, 4, 3, 6), 13, kernel=(3, 3), padding="VALID", activation="RELU6",
                 per_channel=False, seed=104)]
#: the layers it leaves to helium
LEFT = [Shape("CONV_2D", "map", (1, 2, 2, 32), 16, seed=100),
        Shape("CONV_2D", "stream1d", (1, 1, 9, 16), 48, kernel=(1, 6), padding="VALID", seed=105),
        Shape("CONV_2D", "stream1d", (1, 1, 2, 16), 48, kernel=(1, 3), seed=106),
        Shape("CONV_2D", "k3", (1, 4, 4, 8), 8, kernel=(3, 3), padding="VALID", seed=107)]


def model() -> bytes:
    return layers_model(TAKEN + PATCHES + LEFT, "conv helium_fc")


def test_one_pixel_layers_take_helium_fc(tmp_path: Path) -> None:
    path = tmp_path / "conv.tflite"
    path.write_bytes(model())
    result = compile_model(path, tmp_path / "mlf", CompileOptions(cpu="cortex-m55"))
    variants = [c.variant for c in result.lowered.calls]
    assert variants == ["helium_fc"] * (len(TAKEN) + len(PATCHES)) + ["helium"] * len(LEFT)


@pytest.mark.slow
@pytest.mark.skipif(toolchain_problem() is not None, reason="bare-metal toolchain missing")
def test_bit_exact_on_cortex_m55(tmp_path: Path) -> None:
    report = check_model(model(), tmp_path, "mps3/an547")
    assert report.max_abs_diff == 0
