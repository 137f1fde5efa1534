"""SVDF (int8 with int16 or int8 state, float32): state kept between runs, compared with TFLite
Micro over several runs, and the reset function."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from op_check import check_cases, check_model, check_state_outside_pool, side_by_side
from tflite_builder import ModelBuilder


def svdf_case(seed: int, dtype: str = "int8", state_type: str = "int16", time_type: str = "int16",
              activation: str = "NONE"):  # type: ignore[no-untyped-def]
    """One SVDF layer with random shapes, weights and quantization."""
    rng = np.random.default_rng(seed)
    batch = int(rng.integers(1, 3))
    n_input = int(rng.integers(2, 12))
    rank = int(rng.integers(1, 3))
    units = int(rng.integers(1, 6))
    filters = units * rank
    memory = int(rng.integers(1, 6))

    def case(m: ModelBuilder) -> tuple[list[int], list[int]]:
        p = f"s{seed}_"
        if dtype == "float32":
            x = m.add_tensor(p + "x", (batch, n_input), "float32")
            wf = m.add_tensor(p + "wf", (filters, n_input), "float32", rng.uniform(-1, 1, (filters, n_input)))
            wt = m.add_tensor(p + "wt", (filters, memory), "float32", rng.uniform(-1, 1, (filters, memory)))
            b = m.add_tensor(p + "b", (units,), "float32", rng.uniform(-1, 1, units))
            s = m.add_tensor(p + "state", (batch, memory * filters), "float32", is_variable=True)
            y = m.add_tensor(p + "y", (batch, units), "float32")
        else:
            sx, zx = 2.0 / 255, int(rng.integers(-20, 20))
            swf = float(rng.uniform(0.5, 1.5)) / 127
            state_span = 2.0 * float(rng.uniform(1, 4)) * np.sqrt(n_input)
            limits = {"int8": 127, "int16": 32767}
            ss = state_span / (2 * limits[state_type])
            zs = int(rng.integers(-10, 10)) if state_type == "int8" else 0
            swt = float(rng.uniform(0.5, 1.5)) / limits[time_type]
            wt_data = rng.integers(-limits[time_type], limits[time_type] + 1, (filters, memory))
            sy = state_span * rank * memory * 0.5 / 255
            x = m.add_tensor(p + "x", (batch, n_input), "int8", scale=sx, zero_point=zx)
            wf = m.add_tensor(p + "wf", (filters, n_input), "int8", rng.integers(-127, 128, (filters, n_input)),
                              scale=swf)
            wt = m.add_tensor(p + "wt", (filters, memory), time_type, wt_data, scale=swt)
            b = m.add_tensor(p + "b", (units,), "int32", rng.integers(-3000, 3000, units),
                             scale=float(np.float32(ss) * np.float32(swt)))
            s = m.add_tensor(p + "state", (batch, memory * filters), state_type, scale=ss, zero_point=zs,
                             is_variable=True)
            y = m.add_tensor(p + "y", (batch, units), "int8", scale=sy, zero_point=int(rng.integers(-10, 10)))
        m.add_operator("SVDF", [x, wf, wt, b, s], [y], {"rank": rank, "fused_activation_function": activation})
        return [x], [y]

    return case


def test_int8_int16_state_over_several_runs(tmp_path: Path) -> None:
    """20 layers side by side, three runs: the state carries over exactly as in TFLite Micro."""
    cases = [svdf_case(i) for i in range(20)]
    check_cases(cases, tmp_path, repeats=3)


def test_int8_state_and_int8_time_weights(tmp_path: Path) -> None:
    cases = [svdf_case(100 + i, state_type="int8", time_type="int8") for i in range(20)]
    check_cases(cases, tmp_path, repeats=2)


def test_state_and_time_weights_of_different_types_are_refused(tmp_path: Path) -> None:
    """TFLite Micro would read an int16 state as int8: refused in one line."""
    from utvm.errors import UtvmError
    from utvm.importer import load_model

    model = tmp_path / "mixed.tflite"
    model.write_bytes(side_by_side([svdf_case(1, state_type="int16", time_type="int8")]))
    with pytest.raises(UtvmError, match="must have one type"):
        load_model(model)


def test_float32_over_several_runs(tmp_path: Path) -> None:
    cases = [svdf_case(300 + i, dtype="float32", activation="RELU" if i % 2 else "NONE") for i in range(20)]
    check_cases(cases, tmp_path, repeats=3)


def test_state_is_outside_the_pool_and_reset(tmp_path: Path) -> None:
    """The header declares the state size and the reset function; the state is not in the pool."""
    states = check_state_outside_pool(side_by_side([svdf_case(7)]), tmp_path, "svdf")
    assert len(states) == 1


@pytest.mark.slow
def test_int8_on_cortex_m4_and_m55(tmp_path: Path) -> None:
    from toolchains import toolchain_problem

    problem = toolchain_problem()
    if problem:
        pytest.skip(problem)
    model = side_by_side([svdf_case(400 + i) for i in range(6)])
    for board in ("mps2/an386", "mps3/an547"):
        check_model(model, tmp_path, board, repeats=2)
