"""UNIDIRECTIONAL_SEQUENCE_LSTM (int8 with an int16 cell state, float32): TFLite Micro's MNIST
LSTM models and seeded layers of many shapes and quantizations side by side, compared with
TFLite Micro over several runs (the hidden and cell states carry over); refused variants."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from op_check import check_cases, check_model, check_state_outside_pool, side_by_side
from tflite_builder import ModelBuilder

MODELS = Path(__file__).resolve().parents[1].parent / "shared" / "models" / "tflm"


def _tflm_model(name: str) -> Path:
    """TFLite Micro's model ``name`` from shared/models/tflm; the test skips without it."""
    path = MODELS / name
    if not path.is_file():
        pytest.skip(f"{path} is not there (shared/ beside the repository)")
    return path


def lstm_case(seed: int, dtype: str = "int8", time_major: bool | None = None, variant: str = "",
              cell_power: int | None = None):  # type: ignore[no-untyped-def]
    """One LSTM layer with random shapes, weights and quantization (``variant``: an unsupported
    extra input: "layer_norm", "peephole", "projection", "cifg", or "int16")."""
    rng = np.random.default_rng(seed)
    batch = int(rng.integers(1, 4))
    steps = int(rng.integers(1, 7))
    units = int(rng.choice([1, 2, 3, 4, 5, 8, 12]))
    n_input = int(rng.integers(1, 13))
    major = bool(rng.integers(0, 2)) if time_major is None else time_major
    clip = float(rng.choice([0.0, 0.0, 2.5, 8.0]))
    gain = float(rng.choice([0.5, 1.0, 3.0]))  # 3: gates and cell saturate often

    def case(m: ModelBuilder) -> tuple[list[int], list[int]]:
        p = f"l{seed}_"
        lead = [steps, batch] if major else [batch, steps]
        if dtype == "float32":
            x = m.add_tensor(p + "x", [*lead, n_input], "float32")

            def weights(name: str, depth: int) -> int:
                return m.add_tensor(p + name, [units, depth], "float32",
                                    rng.normal(0, gain / np.sqrt(depth), (units, depth)))

            def bias(name: str) -> int:
                return m.add_tensor(p + name, [units], "float32", rng.normal(0, 0.5, units))

            h = m.add_tensor(p + "h", [batch, units], "float32", is_variable=True)
            c = m.add_tensor(p + "c", [batch, units], "float32", is_variable=True)
            y = m.add_tensor(p + "y", [*lead, units], "float32")
        else:
            act = "int16" if variant == "int16" else "int8"
            sx, zx = 2.0 / 255, int(rng.integers(-20, 20))
            hs, zh = float(rng.uniform(1.0, 1.3)) / 128, int(rng.integers(-10, 10))
            if act == "int16":
                sx, zx, hs, zh = 1 / 32768, 0, 1 / 32768, 0
            power = int(rng.integers(-15, -10)) if cell_power is None else cell_power
            x = m.add_tensor(p + "x", [*lead, n_input], act, scale=sx, zero_point=zx)

            def weights(name: str, depth: int) -> int:
                sw = gain * float(rng.uniform(0.5, 2.0)) / (127 * np.sqrt(depth))
                return m.add_tensor(p + name, [units, depth], "int8", rng.integers(-127, 128, (units, depth)),
                                    scale=sw)

            def bias(name: str) -> int:
                return m.add_tensor(p + name, [units], "int32", rng.integers(-20000, 20000, units),
                                    scale=sx * 0.01)

            h = m.add_tensor(p + "h", [batch, units], act, scale=hs, zero_point=zh, is_variable=True)
            c = m.add_tensor(p + "c", [batch, units], "int16", scale=2.0 ** power, is_variable=True)
            y = m.add_tensor(p + "y", [*lead, units], act, scale=hs, zero_point=zh)
        i2 = [weights(f"i2{g}", n_input) for g in "ifco"]
        r2 = [weights(f"r2{g}", units) for g in "ifco"]
        b = [bias(f"b{g}") for g in "ifco"]
        extra = dict.fromkeys(range(24), -1)
        if variant == "layer_norm":
            for k in range(20, 24):
                extra[k] = bias(f"ln{k}")
        elif variant == "peephole":
            for k in range(9, 12):
                extra[k] = bias(f"peep{k}")
        elif variant == "projection":
            extra[16] = weights("proj", units)
        if variant == "cifg":
            i2[0] = r2[0] = -1
        inputs = [x, *i2, *r2, extra[9], extra[10], extra[11], *b, extra[16], extra[17], h, c,
                  extra[20], extra[21], extra[22], extra[23]]
        m.add_operator("UNIDIRECTIONAL_SEQUENCE_LSTM", inputs, [y],
                       {"fused_activation_function": "TANH", "cell_clip": clip, "proj_clip": 0.0,
                        "time_major": major})
        return [x], [y]

    return case


@pytest.mark.parametrize("name", ["trained_lstm_int8.tflite", "trained_lstm.tflite"])
def test_tflm_mnist_lstm(name: str, tmp_path: Path) -> None:
    """TFLite Micro's MNIST LSTM models, three runs: identical outputs (float32 within 1e-5)."""
    check_model(_tflm_model(name), tmp_path, repeats=3)


def test_int8_over_several_runs(tmp_path: Path) -> None:
    """24 int8 layers side by side (batch and time major, 1-12 units, saturating gates, cell clip,
    cell scales 2**-15 .. 2**-11), three runs: bit-exact with TFLite Micro, state included."""
    cases = [lstm_case(i) for i in range(24)]
    check_cases(cases, tmp_path, repeats=3)


def test_float32_over_several_runs(tmp_path: Path) -> None:
    """The gates' input parts from fully_connected operators before the recurrence."""
    cases = [lstm_case(100 + i, dtype="float32") for i in range(12)]
    check_cases(cases, tmp_path, repeats=3)


def test_float32_input_parts_inside_the_recurrence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Above PRECOMPUTE_LIMIT a float32 recurrence computes the gates' input parts step by step,
    as int8 ones always do (no fully_connected operators)."""
    from utvm.importer import load_model
    from utvm.ops import lstm

    monkeypatch.setattr(lstm, "PRECOMPUTE_LIMIT", 0)
    check_cases([lstm_case(200 + i, dtype="float32") for i in range(12)], tmp_path, repeats=2)
    assert {op.kind for op in load_model(tmp_path / "model.tflite").ops} == {"lstm"}


@pytest.mark.parametrize("variant, message", [
    ("layer_norm", "layer normalisation is not supported"),
    ("peephole", "peephole weights is not supported"),
    ("projection", "projection is not supported"),
    ("cifg", "coupled input and forget gates"),
    ("int16", "16x8 LSTM"),
])
def test_unsupported_variants_are_refused(variant: str, message: str, tmp_path: Path) -> None:
    from utvm.errors import UtvmError
    from utvm.importer import load_model

    model = tmp_path / f"{variant}.tflite"
    model.write_bytes(side_by_side([lstm_case(1, variant=variant)]))
    with pytest.raises(UtvmError, match=message):
        load_model(model)


def test_refusal_is_one_error_line(tmp_path: Path) -> None:
    from test_bad_input import assert_one_error, compile_cli

    model = tmp_path / "layer_norm.tflite"
    model.write_bytes(side_by_side([lstm_case(2, variant="layer_norm")]))
    out = tmp_path / "out"
    assert_one_error(compile_cli(model, out), out, "layer normalisation")


def test_states_are_outside_the_pool_and_reset(tmp_path: Path) -> None:
    """The hidden (int8) and cell (int16) states live in the state buffer, reset by tvmgen_lstm_reset."""
    states = check_state_outside_pool(side_by_side([lstm_case(7)]), tmp_path, "lstm")
    assert sorted(t.dtype for t in states) == ["int16", "int8"]


@pytest.mark.slow
def test_on_cortex_m4_and_m55(tmp_path: Path) -> None:
    from toolchains import toolchain_problem

    problem = toolchain_problem()
    if problem:
        pytest.skip(problem)
    model = side_by_side([lstm_case(400 + i) for i in range(6)] + [lstm_case(500, dtype="float32")])
    for board in ("mps2/an386", "mps3/an547"):
        check_model(model, tmp_path, board, repeats=2)
        check_model(_tflm_model("trained_lstm_int8.tflite"), tmp_path, board, repeats=2)
