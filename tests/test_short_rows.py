"""Short rows on the Cortex-M4 (issue 23 item 4): FULLY_CONNECTED / pointwise CONV_2D of at most
24 inputs per output take int16 weights by default (mac_knobs.SHORT_K), the one-row kernels and
dsp_short clamp four outputs at once as bytes; seeded bench_layers shapes bit-exact with TFLite
Micro on mps2/an386 and within their bounds of instructions per MAC."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from layer_shapes import shapes
from toolchains import toolchain_problem
from utvm.kernels import shortk

#: (op, family, shape text, activation) -> bound (before -> after on mps2/an386 in the comment)
BOUNDS = {
    ("FULLY_CONNECTED", "svdf", "[1,10] -> 128", "RELU6"): 1.9,  # 2.84 -> 1.81
    ("FULLY_CONNECTED", "lstm", "[1,10] -> 192", "RELU6"): 1.9,  # 2.81 -> 1.79
    ("FULLY_CONNECTED", "autoencoder", "[1,8] -> 320", "RELU"): 1.7,  # 2.66 -> 1.61
    ("FULLY_CONNECTED", "autoencoder", "[5,8] -> 640", "RELU"): 1.7,  # 2.60 -> 1.60
    ("FULLY_CONNECTED", "lstm", "[1,13] -> 192", "NONE"): 1.6,  # 2.13 -> 1.51
    ("CONV_2D", "mobilenet_v1", "[64, 64, 8] 1x1 s1x1 SAME -> 16", "RELU6"): 1.8,  # 2.34 -> 1.71
    ("CONV_2D", "resnet8", "[32, 32, 8] 1x1 s2x2 SAME -> 16", "RELU6"): 1.8,  # 2.35 -> 1.72
    ("CONV_2D", "stream1d", "[1, 100, 1] 1x9 s1x1 SAME -> 96", "RELU"): 1.45,  # 2.07 -> 1.38
    ("CONV_2D", "stream1d", "[1, 100, 1] 1x3 s1x1 VALID -> 96", "RELU"): 2.8,  # 4.46 -> 2.69
    ("CONV_2D", "autoencoder", "[32, 32, 1] 3x3 s1x1 SAME -> 4", "RELU"): 1.98,  # 2.05 -> 1.91
}


def test_bytes_clamp_rule() -> None:
    assert not shortk.bytes_clamp(-128, 127, 16)  # no lower clamp
    assert shortk.bytes_clamp(-100, 127, 16)  # ReLU of a nonzero zero point
    assert not shortk.bytes_clamp(0, 127, 16)  # USAT #7 alone
    assert shortk.bytes_clamp(-90, 20, 16)  # both bounds


@pytest.mark.slow
@pytest.mark.skipif(toolchain_problem() is not None, reason="bare-metal toolchain missing")
def test_short_rows_within_bounds_on_cortex_m4() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from bench_layers import run_chunk

    layers = [s for op in ("CONV_2D", "FULLY_CONNECTED") for s in shapes(op, 200, 0)
              if (s.op, s.family, s.text(), s.activation) in BOUNDS]
    assert len(layers) >= len(BOUNDS)
    for s, r in zip(layers, run_chunk(layers, "mps2/an386", None, "test")[0], strict=True):
        assert r["exact"] is not False, s.text()
        assert r["instructions"] / s.macs <= BOUNDS[(s.op, s.family, s.text(), s.activation)], \
            (s.text(), r["instructions"] / s.macs)
