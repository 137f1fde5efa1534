"""A real model through the RPC server: MLPerf Tiny's keyword-spotting model compiled with
``python -m utvm compile`` (with ``UTVM_PROFILE``), served by the host process and on QEMU.

Outputs must be identical to TFLite Micro's for the same inputs, and the per-operator
cycles must add up to within 5 % of the whole run.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from utvm.errors import UtvmError
from utvm.rpc.runner import profile, run_over_rpc

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT.parent / "shared" / "models"
MODEL = MODELS / "kws_ref_model.tflite"
NAME = "kws"


def _compiler_missing() -> str | None:
    if (
        importlib.util.find_spec("utvm.cli") is None
        and importlib.util.find_spec("utvm.__main__") is None
    ):
        return "the compiler CLI (scripts/utvm/cli/, `python -m utvm compile`) is not there yet"
    if not MODEL.is_file():
        return f"reference model not found: {MODEL}"
    return None


@pytest.fixture(scope="module")
def mlf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    reason = _compiler_missing()
    if reason is not None:
        pytest.skip(reason)
    out = tmp_path_factory.mktemp("rpc_model") / NAME
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "scripts"), *filter(None, [env.get("PYTHONPATH")])]
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "utvm",
            "compile",
            str(MODEL),
            "--name",
            NAME,
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, f"utvm compile failed:\n{proc.stdout}\n{proc.stderr}"
    return out


def _tflm_outputs(inputs: list[np.ndarray], n_outputs: int) -> list[np.ndarray]:
    from tflite_micro.python.tflite_micro import runtime

    interp = runtime.Interpreter.from_file(str(MODEL))
    for i, arr in enumerate(inputs):
        interp.set_input(arr, i)
    interp.invoke()
    return [np.asarray(interp.get_output(i)) for i in range(n_outputs)]


def test_kws_matches_tflite_micro_on_host(mlf: Path, tmp_path: Path) -> None:
    result, prof = run_over_rpc(
        mlf, "host", seed=7, work_dir=tmp_path, with_profile=True
    )
    expected = _tflm_outputs([t.array for t in result.inputs], len(result.outputs))
    for got, want in zip(result.outputs, expected):
        np.testing.assert_array_equal(got.array.reshape(want.shape), want)
    assert prof is not None and prof.operators
    op_sum = sum(o.cycles for o in prof.operators)
    assert abs(prof.total_cycles - op_sum) <= 0.05 * prof.total_cycles, (
        prof.format_table()
    )


def test_kws_profile_on_qemu(mlf: Path, tmp_path: Path) -> None:
    from utvm.run.qemu import find_tools

    try:
        find_tools(qemu=True)
    except UtvmError as exc:
        pytest.skip(f"needs the Arm toolchain and QEMU: {exc}")
    prof = profile(mlf, "mps2/an385", seed=7, work_dir=tmp_path)
    op_sum = sum(o.cycles for o in prof.operators)
    assert prof.total_cycles > 0
    assert abs(prof.total_cycles - op_sum) <= 0.05 * prof.total_cycles, (
        prof.format_table()
    )
    js = prof.to_json()
    assert set(js) == {"total_cycles", "operators"}


def test_kws_matches_tflite_micro_on_qemu(mlf: Path, tmp_path: Path) -> None:
    from utvm.run.qemu import find_tools

    try:
        find_tools(qemu=True)
    except UtvmError as exc:
        pytest.skip(f"needs the Arm toolchain and QEMU: {exc}")
    result, _ = run_over_rpc(mlf, "mps2/an385", seed=11, work_dir=tmp_path)
    expected = _tflm_outputs([t.array for t in result.inputs], len(result.outputs))
    for got, want in zip(result.outputs, expected):
        np.testing.assert_array_equal(got.array.reshape(want.shape), want)
