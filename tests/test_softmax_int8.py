"""softmax_int8 / softmax_float compiled by TVM to C, run on the host, against TFLite Micro.

The TE kernels are compiled with TVM's ``c`` target, built with gcc into a shared library together
with the runtime's backend functions, and called through their packed signature with ctypes.
The int8 kernel must equal TFLite Micro's reference SOFTMAX bit for bit.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
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
from utvm.ops.softmax import np_softmax_int8, softmax_float, softmax_int8  # noqa: E402

CRT = ROOT / "lib" / "crt"


# ---------------------------------------------------------------------------------------------
# compile a TE kernel to C, build it with gcc, call it with ctypes
# ---------------------------------------------------------------------------------------------


@functools.cache
def _softmax_kernel(rows: int, depth: int, scale: float, beta: float, workdir: str) -> HostKernel:
    x = te.placeholder((rows, depth), "int8", name="x")
    y = softmax_int8(x, scale, beta, "softmax")
    return HostKernel(
        kernel_c_source([x, y], "softmax"), "softmax", Path(workdir) / f"sm_{rows}_{depth}_{scale!r}_{beta!r}"
    )


def tflm_softmax(x: npt.NDArray[np.int8], scale: float, zero_point: int, beta: float) -> Any:
    """TFLite Micro's SOFTMAX on x, through a single-operator model."""
    it = runtime.Interpreter.from_bytes(
        tb.softmax_model(list(x.shape), "int8", scale, zero_point, beta), arena_size=1 << 20
    )
    it.set_input(x, 0)
    it.invoke()
    return it.get_output(0)


def run_tvm_softmax(x: npt.NDArray[np.int8], scale: float, beta: float, workdir: Path) -> npt.NDArray[np.int8]:
    """softmax_int8 compiled to C and run on x ([rows, depth])."""
    kern = _softmax_kernel(x.shape[0], x.shape[1], scale, beta, str(workdir))
    out = np.zeros_like(x)
    kern(np.ascontiguousarray(x), out)
    return out


# (input scale, input zero point, depth, beta): the three MLPerf Tiny models' softmax inputs
# first (read from their .tflite files), then other scales, betas and depths
CASES = [
    (0.14469251036643982, 14, 12, 1.0),  # kws_ref_model
    (0.014636218547821045, -5, 2, 1.0),  # vww_96_int8
    (0.17185351252555847, 24, 10, 1.0),  # pretrainedResnet_quant
    (0.00390625, -128, 16, 1.0),
    (0.05, 0, 7, 1.0),
    (0.5, 3, 33, 1.0),
    (1.0, -1, 5, 1.0),
    (2.0, 10, 9, 0.7),
    (0.1, 0, 64, 2.5),
    (0.02, 5, 100, 1.0),
    (0.25, 0, 300, 1.0),
]


def _inputs(depth: int, seed: int) -> npt.NDArray[np.int8]:
    """Random rows plus edge cases: all equal, one large, all -128, max at either end."""
    rng = np.random.default_rng(seed)
    rows = [rng.integers(-128, 128, depth) for _ in range(6)]
    rows.append(rng.integers(-20, 21, depth))  # small spread
    rows.append(np.full(depth, 37))
    rows.append(np.full(depth, -128))
    rows.append(np.full(depth, 127))
    one_large = np.full(depth, -100)
    one_large[depth // 2] = 127
    rows.append(one_large)
    ramp = np.linspace(-128, 127, depth).round()
    rows.append(ramp)
    rows.append(ramp[::-1])
    ext = np.where(np.arange(depth) % 2 == 0, -128, 127)
    rows.append(ext)
    return np.stack(rows).astype(np.int8)


@pytest.mark.parametrize(("scale", "zero_point", "depth", "beta"), CASES)
def test_softmax_int8_matches_tflite_micro(
    scale: float, zero_point: int, depth: int, beta: float, tmp_path_factory: pytest.TempPathFactory
) -> None:
    workdir = tmp_path_factory.getbasetemp() / "softmax_kernels"
    x = _inputs(depth, seed=depth)
    expected = tflm_softmax(x, scale, zero_point, beta)
    ref = np_softmax_int8(x, scale, beta)
    got = run_tvm_softmax(x, scale, beta, workdir)
    assert np.array_equal(ref, expected), "numpy reference differs from TFLite Micro"
    assert np.array_equal(got, expected), f"max abs diff {np.abs(got.astype(int) - expected.astype(int)).max()}"


def test_softmax_int8_many_random_scales(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The numpy reference (same arithmetic as the TE kernel) over many scales vs TFLite Micro."""
    rng = np.random.default_rng(123)
    for _ in range(40):
        scale = float(np.exp(rng.uniform(np.log(1e-3), np.log(4.0))))
        depth = int(rng.integers(2, 40))
        beta = float(rng.choice([1.0, 0.5, 1.7]))
        x = rng.integers(-128, 128, (4, depth)).astype(np.int8)
        expected = tflm_softmax(x, scale, 0, beta)
        assert np.array_equal(np_softmax_int8(x, scale, beta), expected), (scale, depth, beta)


def test_softmax_int8_leading_dims_and_zero_point(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A 4-D input flattened to rows gives TFLite Micro's result; the zero point does not matter."""
    workdir = tmp_path_factory.getbasetemp() / "softmax_kernels"
    rng = np.random.default_rng(7)
    x = rng.integers(-128, 128, (1, 2, 3, 12)).astype(np.int8)
    scale = 0.14469251036643982
    expected = tflm_softmax(x, scale, -33, 1.0)
    got = run_tvm_softmax(x.reshape(-1, 12), scale, 1.0, workdir).reshape(x.shape)
    assert np.array_equal(got, expected)


def test_softmax_float_matches_tflite_micro(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    x = (rng.normal(size=(5, 10)) * 4).astype(np.float32)
    xp = te.placeholder((5, 10), "float32", name="x")
    y = softmax_float(xp, 1.0, "softmax_f")
    kern = HostKernel(kernel_c_source([xp, y], "softmax_f"), "softmax_f", tmp_path)
    got = np.zeros_like(x)
    kern(x, got)
    it = runtime.Interpreter.from_bytes(tb.softmax_model([5, 10], "float32", beta=1.0))
    it.set_input(x, 0)
    it.invoke()
    expected = it.get_output(0)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="no arm-none-eabi-gcc")
def test_softmax_int8_c_compiles_for_cortex_m(tmp_path: Path) -> None:
    """The generated C compiles warning-free for Cortex-M4 and Cortex-M55."""
    x = te.placeholder((1, 12), "int8", name="x")
    y = softmax_int8(x, 0.14469251036643982, 1.0, "softmax")
    src = tmp_path / "softmax.c"
    src.write_text(kernel_c_source([x, y], "softmax"))
    for cpu in ("cortex-m4", "cortex-m55"):
        subprocess.run(
            [
                "arm-none-eabi-gcc",
                f"-mcpu={cpu}",
                "-mthumb",
                "-O2",
                "-std=gnu99",
                "-Wall",
                "-Werror",
                "-Wno-unused-variable",
                "-Wno-unused-but-set-variable",
                f"-I{CRT / 'include'}",
                "-c",
                str(src),
                "-o",
                str(tmp_path / f"{cpu}.o"),
            ],
            check=True,
            capture_output=True,
            text=True,
        )
