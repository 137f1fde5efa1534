"""utvm_mve_fc4_s8 (the "helium" FULLY_CONNECTED variant) on the Cortex-M55 when the output zero
point equals the number of blocks of 4 units (the loop counter of LE): GCC may give both the
same register (lr) unless the counter is early-clobber, so that block b added zy - b. The
issue's layer (ISSUE, once shapes("FULLY_CONNECTED", 40, seed=0)[30]: [1,80] -> 16, RELU, per
channel, zero point 4) and neighbours (depth 33..96, 4..20 units, NONE/RELU/RELU6, per tensor and per channel),
each with zy = its number of blocks, bit-exact with TFLite Micro. The host's plain C does not
show it (no asm there): QEMU only."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from layer_shapes import Shape, add_layer
from op_check import check_model
from tflite_builder import ModelBuilder
from toolchains import toolchain_problem
from utvm.compiler import CompileOptions, compile_model

#: the layer the benchmark found (tests/layer_shapes.py's generator has changed since)
ISSUE = Shape("FULLY_CONNECTED", "gates", (1, 80), 16, activation="RELU", per_channel=True, seed=153797680)
#: depth, units, activation, per channel
LAYERS = [(d, u, act, pc) for d in (33, 65, 80, 81, 88, 96) for u in (12, 16, 20)
          for act, pc in (("NONE", False), ("RELU", True), ("RELU6", False))]


def add_fc(m: ModelBuilder, k: int, depth: int, units: int, activation: str, per_channel: bool,
           zy: int) -> tuple[list[int], list[int]]:
    rng = np.random.default_rng(k)
    xs, ys = float(rng.uniform(0.02, 0.1)), float(rng.uniform(0.05, 0.3))
    ws = ys / (xs * 40.0 * depth ** 0.5) * rng.uniform(0.5, 2.0, units if per_channel else 1)
    x = m.add_tensor(f"x{k}", [1, depth], "int8", scale=xs, zero_point=int(rng.integers(-20, 20)))
    w = m.add_tensor(f"w{k}", [units, depth], "int8", data=rng.integers(-127, 128, (units, depth)), scale=ws,
                     zero_point=0, quantized_dimension=0)
    b = m.add_tensor(f"b{k}", [units], "int32", data=rng.integers(-3000, 3000, units),
                     scale=xs * ws.astype(np.float32).astype(np.float64), zero_point=0)
    y = m.add_tensor(f"y{k}", [1, units], "int8", scale=ys, zero_point=zy)
    m.add_operator("FULLY_CONNECTED", [x, w, b], [y], {"fused_activation_function": activation})
    return [x], [y]


def model() -> bytes:
    m = ModelBuilder("helium fc zero points")
    ins, outs = add_layer(m, ISSUE, "issue")
    for k, (depth, units, act, pc) in enumerate(LAYERS):
        i, o = add_fc(m, k, depth, units, act, pc, units // 4)
        ins += i
        outs += o
    return m.finish(ins, outs)


def test_layers_take_the_helium_variant(tmp_path: Path) -> None:
    path = tmp_path / "fc.tflite"
    path.write_bytes(model())
    result = compile_model(path, tmp_path / "mlf", CompileOptions(cpu="cortex-m55"))
    assert sum(c.variant == "helium" for c in result.lowered.calls) == len(LAYERS) + 1


@pytest.mark.slow
@pytest.mark.skipif(toolchain_problem() is not None, reason="bare-metal toolchain missing")
def test_bit_exact_on_cortex_m55(tmp_path: Path) -> None:
    report = check_model(model(), tmp_path, "mps3/an547")
    assert report.max_abs_diff == 0
