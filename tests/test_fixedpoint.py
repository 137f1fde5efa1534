"""utvm.kernels.fixedpoint (and the int16 sigmoid/tanh of utvm.kernels.activation16): host
parameters, TE builders compiled to C, numpy references, and the rounding mode of the tflite-micro PyPI build (through a FULLY_CONNECTED single-op model)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

tvm = pytest.importorskip("tvm")
runtime = pytest.importorskip("tflite_micro.python.tflite_micro.runtime")

from tvm import te  # noqa: E402

import tflite_builder as tb  # noqa: E402
from host_kernel import HostKernel, kernel_c_source  # noqa: E402
from utvm.kernels import activation16 as act16  # noqa: E402
from utvm.kernels import fixedpoint as fp  # noqa: E402


def test_tflite_round_is_half_away_from_zero() -> None:
    assert fp.tflite_round(0.5) == 1.0
    assert fp.tflite_round(-0.5) == -1.0
    assert fp.tflite_round(2.5) == 3.0
    assert fp.tflite_round(0.49999999999999994) == 0.0
    assert fp.tflite_round(-1.4999999) == -1.0


def test_quantize_multiplier_known_values() -> None:
    assert fp.quantize_multiplier(0.0) == (0, 0)
    assert fp.quantize_multiplier(0.5) == (1 << 30, 0)
    assert fp.quantize_multiplier(1.0) == (1 << 30, 1)
    assert fp.quantize_multiplier(0.75) == (3 << 29, 0)
    # q rounds up to 2**31: halved, shift + 1
    assert fp.quantize_multiplier(1.0 - 2.0**-40) == (1 << 30, 1)
    # tiny multipliers flush to zero, huge ones saturate only with single rounding
    assert fp.quantize_multiplier(2.0**-40) == (0, 0)
    assert fp.quantize_multiplier(2.0**40) == (1 << 30, 41)
    assert fp.quantize_multiplier(2.0**40, single_rounding=True) == (fp.INT32_MAX, 30)
    m, s = fp.quantize_multiplier(0.0123456)
    assert abs(m * 2.0 ** (s - 31) - 0.0123456) < 1e-11


def test_softmax_params_kws() -> None:
    p = fp.softmax_params(0.14469251036643982, 1.0)
    real = fp.as_float32(0.14469251036643982) * 2.0**26
    assert abs(p.input_multiplier * 2.0 ** (p.input_left_shift - 31) - real) < 1e-3
    assert p.diff_min == -int(np.floor(31 * 2.0**26 / 2.0**p.input_left_shift))


# ---------------------------------------------------------------------------------------------
# TE builders compiled to C == numpy references
# ---------------------------------------------------------------------------------------------

N = 3000
_rng = np.random.default_rng(11)
_A = _rng.integers(-(2**31), 2**31, N, dtype=np.int64)
_B = _rng.integers(-(2**31), 2**31, N, dtype=np.int64)
_A[:4] = [fp.INT32_MIN, fp.INT32_MIN, fp.INT32_MAX, 0]
_B[:4] = [fp.INT32_MIN, 5, fp.INT32_MAX, 0]
_E = _rng.integers(0, 32, N, dtype=np.int64)
_SHIFT = _rng.integers(-31, 8, N, dtype=np.int64)
_MULT = _rng.integers(1 << 30, 1 << 31, N, dtype=np.int64)

# int16 inputs of the sigmoid/tanh builders (the extremes and table edges included); their table rides
# in the second operand
_X16 = np.random.default_rng(12).integers(-32768, 32768, N, dtype=np.int64)
_X16[:8] = [-32768, 32767, 0, -1, 1, 255 * 256 // 3, -(255 * 256 // 3) - 1, 255 * 128 // 3]
_TABLE = np.zeros(N, np.int64)
_TABLE[:256] = act16.TABLE_S16

Builder = Callable[[Any, Any, Any], Any]
Ref = Callable[[], npt.NDArray[np.int64]]

CASES: dict[str, tuple[Builder, Ref, npt.NDArray[np.int64], npt.NDArray[np.int64]]] = {
    "srdhm": (
        lambda a, b, i: fp.saturating_rounding_doubling_high_mul(a[i], b[i]),
        lambda: fp.np_saturating_rounding_doubling_high_mul(_A, _B),
        _A,
        _B,
    ),
    "srdhm_const": (
        lambda a, b, i: fp.saturating_rounding_doubling_high_mul(a[i], -1010580540),
        lambda: fp.np_saturating_rounding_doubling_high_mul(_A, -1010580540),
        _A,
        _B,
    ),
    "rdbp_static": (
        lambda a, b, i: fp.rounding_divide_by_pot(a[i], 7),
        lambda: fp.np_rounding_divide_by_pot(_A, 7),
        _A,
        _B,
    ),
    "rdbp_dynamic": (
        lambda a, b, i: fp.rounding_divide_by_pot(a[i], b[i]),
        lambda: fp.np_rounding_divide_by_pot(_A, _E),
        _A,
        _E,
    ),
    "sat_pot": (
        lambda a, b, i: fp.saturating_rounding_multiply_by_pot(a[i], 3),
        lambda: fp.np_saturating_rounding_multiply_by_pot(_A, 3),
        _A,
        _B,
    ),
    "half_sum": (lambda a, b, i: fp.rounding_half_sum(a[i], b[i]), lambda: fp.np_rounding_half_sum(_A, _B), _A, _B),
    "clz": (lambda a, b, i: fp.count_leading_zeros_u32(a[i]), lambda: fp.np_count_leading_zeros_u32(_A), _A, _B),
    "mbqm_per_tensor": (
        lambda a, b, i: fp.multiply_by_quantized_multiplier(a[i] >> 8, 1518500250, -7),
        lambda: fp.np_multiply_by_quantized_multiplier(_A >> 8, 1518500250, -7),
        _A,
        _B,
    ),
    "mbqm_per_channel": (
        lambda a, b, i: fp.multiply_by_quantized_multiplier(a[i] >> 12, 1518500250, b[i]),
        lambda: fp.np_multiply_by_quantized_multiplier(_A >> 12, 1518500250, _SHIFT),
        _A,
        _SHIFT,
    ),
    "mbqm_single": (
        lambda a, b, i: fp.multiply_by_quantized_multiplier(a[i] >> 8, 1518500250, b[i], True),
        lambda: fp.np_multiply_by_quantized_multiplier(_A >> 8, 1518500250, _SHIFT, True),
        _A,
        _SHIFT,
    ),
    "mbqm_single_static": (
        lambda a, b, i: fp.multiply_by_quantized_multiplier(a[i] >> 8, 1518500250, 3, True),
        lambda: fp.np_multiply_by_quantized_multiplier(_A >> 8, 1518500250, 3, True),
        _A,
        _B,
    ),
    "sigmoid16": (  # the saturation test left out: int16 inputs stay inside the table
        lambda a, b, i: act16.sigmoid(b, act16.scaled_input(a[i], 0), act16.INT16_SCALED_MAX),
        lambda: act16.np_sigmoid(act16.np_scaled_input(_X16, 0)),
        _X16,
        _TABLE,
    ),
}
# tanh with the input shifts of the LSTM's cell state (scales 2**-12, 2**-15, 2**-11)
CASES.update({f"tanh16_shift{shift}": (
    lambda a, b, i, shift=shift: act16.tanh(b, act16.scaled_input(a[i], shift)),
    lambda shift=shift: act16.np_tanh(act16.np_scaled_input(_X16, shift)),
    _X16,
    _TABLE,
) for shift in (0, -3, 1)})


def test_int16_sigmoid_and_tanh_references() -> None:
    """The numpy references on every Q3.12 input: monotonic, in range, close to the functions (Q0.15)."""
    x = np.arange(-32768, 32768)
    s = act16.np_sigmoid(act16.np_scaled_input(x, 0))
    t = act16.np_tanh(act16.np_scaled_input(x, 0))
    assert 0 <= s.min() and s.max() <= 32767 and np.all(np.diff(s) >= 0)
    assert -32768 <= t.min() and t.max() <= 32767 and np.all(np.diff(t) >= 0)
    assert s[32768] == 16384 and t[32768] == 0  # x = 0
    real = x / 4096.0  # Q3.12
    assert np.abs(s / 32768.0 - 1 / (1 + np.exp(-real))).max() < 2e-4
    assert np.abs(t / 32768.0 - np.tanh(real)).max() < 5e-4


@pytest.mark.parametrize("name", sorted(CASES))
def test_te_builder_matches_numpy(name: str, tmp_path: Path) -> None:
    build, ref, a_val, b_val = CASES[name]
    a = te.placeholder((N,), "int32", name="a")
    b = te.placeholder((N,), "int32", name="b")
    y = te.compute((N,), lambda i: build(a, b, i), name="y")
    kern = HostKernel(kernel_c_source([a, b, y], "k"), "k", tmp_path)
    out = np.zeros(N, np.int32)
    kern(a_val.astype(np.int32), b_val.astype(np.int32), out)
    np.testing.assert_array_equal(out, ref())


def test_exp_and_reciprocal_references_are_sane() -> None:
    """np_exp_on_negative_values / np_one_over_one_plus_x_for_x_in_0_1 approximate the maths."""
    a = -np.arange(0, 16 << 26, 1 << 20, dtype=np.int64)  # Q5.26 in (-16, 0]
    e = fp.np_exp_on_negative_values(a, 5) / 2.0**31
    assert np.abs(e - np.exp(a / 2.0**26)).max() < 1e-6
    x = np.arange(0, 1 << 31, 1 << 22, dtype=np.int64)
    r = fp.np_one_over_one_plus_x_for_x_in_0_1(x) / 2.0**31
    assert np.abs(r - 1.0 / (1.0 + x / 2.0**31)).max() < 1e-6


# ---------------------------------------------------------------------------------------------
# which rounding does the tflite-micro PyPI package use? (answer: double rounding)
# ---------------------------------------------------------------------------------------------


def _fc_reference(
    x: npt.NDArray[np.int8],
    w: npt.NDArray[np.int64],
    bias: npt.NDArray[np.int64],
    in_zp: int,
    out_zp: int,
    mult: int,
    shift: int,
    single: bool,
) -> npt.NDArray[np.int8]:
    acc = (x.astype(np.int64) - in_zp) @ w.T + bias
    out = fp.np_multiply_by_quantized_multiplier(acc, mult, shift, single) + out_zp
    return np.clip(out, -128, 127).astype(np.int8)


def _read_fc(model: bytes) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    import tflite

    m = tflite.Model.GetRootAsModel(model, 0)
    sg = m.Subgraphs(0)

    def data(t: int, dtype: str) -> npt.NDArray[np.int64]:
        tensor = sg.Tensors(t)
        raw = m.Buffers(tensor.Buffer()).DataAsNumpy()
        return np.frombuffer(raw.tobytes(), dtype=dtype).reshape(tensor.ShapeAsNumpy()).astype(np.int64)

    op = sg.Operators(0)
    return data(op.Inputs(1), "int8"), data(op.Inputs(2), "int32")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tflite_micro_pypi_uses_double_rounding(seed: int) -> None:
    in_scale, in_zp, out_scale, out_zp = 0.05, 3, 0.2, -5
    model = tb.fully_connected_model(
        256,
        32,
        16,
        input_scale=in_scale,
        input_zero_point=in_zp,
        output_scale=out_scale,
        output_zero_point=out_zp,
        seed=seed,
    )
    w, bias = _read_fc(model)
    import tflite

    sg = tflite.Model.GetRootAsModel(model, 0).Subgraphs(0)
    w_scale = float(sg.Tensors(sg.Operators(0).Inputs(1)).Quantization().Scale(0))
    x = np.random.default_rng(seed).integers(-128, 128, (256, 32)).astype(np.int8)
    it = runtime.Interpreter.from_bytes(model, arena_size=256 * 1024)
    it.set_input(x, 0)
    it.invoke()
    got = it.get_output(0)

    real = fp.conv_real_multiplier(in_scale, w_scale, out_scale, per_channel=False)
    double = _fc_reference(x, w, bias, in_zp, out_zp, *fp.quantize_multiplier(real), False)
    single = _fc_reference(x, w, bias, in_zp, out_zp, *fp.quantize_multiplier(real, True), True)
    assert np.array_equal(got, double)
    # the inputs are rich enough to tell the two modes apart
    assert not np.array_equal(got, single)
