"""Bad input: one clear error line, exit code 2, no traceback, nothing left behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli_check import assert_one_error, compile_cli
from tflite_patch import input_tensor_index, set_operator_code, set_shape_signature, set_tensor_type

ROOT = Path(__file__).resolve().parents[1]
LSTM = 16
FLOAT16 = 1
FLOAT32 = 0


@pytest.fixture()
def kws(models_dir: Path) -> bytes:
    return (models_dir / "kws_ref_model.tflite").read_bytes()


def test_missing_file(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert_one_error(compile_cli(tmp_path / "nope.tflite", out), out, "no such file")


def test_empty_file(tmp_path: Path) -> None:
    model = tmp_path / "empty.tflite"
    model.write_bytes(b"")
    out = tmp_path / "out"
    assert_one_error(compile_cli(model, out), out, "empty")


@pytest.mark.parametrize("keep", [6, 100, 20000])
def test_truncated_file(tmp_path: Path, kws: bytes, keep: int) -> None:
    model = tmp_path / "cut.tflite"
    model.write_bytes(kws[:keep])
    out = tmp_path / "out"
    assert_one_error(compile_cli(model, out), out, str(model))


def test_not_a_model(tmp_path: Path) -> None:
    model = tmp_path / "text.tflite"
    model.write_bytes(b"this is not a flatbuffer at all, just text\n" * 10)
    out = tmp_path / "out"
    assert_one_error(compile_cli(model, out), out, "not a TFLite model")


def test_corrupt_file(tmp_path: Path, kws: bytes) -> None:
    data = bytearray(kws)
    data[8:64] = b"\xff" * 56  # root table offsets destroyed, identifier kept
    model = tmp_path / "corrupt.tflite"
    model.write_bytes(bytes(data))
    out = tmp_path / "out"
    assert_one_error(compile_cli(model, out), out, "corrupt")


def test_unsupported_operator_is_named(tmp_path: Path, kws: bytes) -> None:
    model = tmp_path / "lstm.tflite"
    model.write_bytes(set_operator_code(kws, 0, LSTM))
    out = tmp_path / "out"
    assert_one_error(compile_cli(model, out), out, "unsupported operators", "LSTM")


def test_shape_signature_is_not_read(tmp_path: Path, kws: bytes) -> None:
    """A free dimension in shape_signature (here not the batch) is no refusal: TFLite Micro runs
    the model with the stored shape, and so does utvm, bit for bit."""
    from op_check import check_model

    report = check_model(set_shape_signature(kws, input_tensor_index(kws), 1, -1), tmp_path)
    assert report.max_abs_diff == 0


def test_unsupported_dtype(tmp_path: Path, kws: bytes) -> None:
    model = tmp_path / "f16.tflite"
    model.write_bytes(set_tensor_type(kws, input_tensor_index(kws), FLOAT16))
    out = tmp_path / "out"
    assert_one_error(compile_cli(model, out), out, "unsupported data type FLOAT16")


def test_hybrid_model(tmp_path: Path, models_dir: Path) -> None:
    data = (models_dir / "ad01_int8.tflite").read_bytes()
    model = tmp_path / "hybrid.tflite"
    model.write_bytes(set_tensor_type(data, input_tensor_index(data), FLOAT32))
    out = tmp_path / "out"
    assert_one_error(compile_cli(model, out), out, "hybrid")


def test_existing_output_is_kept_on_error(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("x")
    model = tmp_path / "empty.tflite"
    model.write_bytes(b"")
    proc = compile_cli(model, out)
    assert proc.returncode == 2
    assert (out / "keep.txt").exists()


def test_wrong_input_shape_for_run(tmp_path: Path, models_dir: Path) -> None:
    import numpy as np

    bad = tmp_path / "x.npy"
    np.save(bad, np.zeros((3, 3), np.int8))
    env = dict(os.environ, PYTHONPATH=str(ROOT / "scripts"))
    proc = subprocess.run([sys.executable, "-m", "utvm", "run", str(models_dir / "ad01_int8.tflite"),
                           "--input", str(bad)], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "needs [1, 640]" in proc.stderr
