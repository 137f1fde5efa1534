"""ONNX import: small float32 models built with onnx.helper, compiled, run on the host and
compared with onnx.reference; plus the command line's handling of bad ONNX files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from utvm.run.runner import run_model

ROOT = Path(__file__).resolve().parents[1]


def _rand(rng: np.random.Generator, *shape: int, scale: float = 0.5) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _save(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto], outputs: list[onnx.ValueInfoProto],
          inits: dict[str, np.ndarray], path: Path, opset: int = 17) -> Path:
    graph = helper.make_graph(nodes, path.stem, inputs, outputs,
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def _vi(name: str, shape: list[int | str]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def _cnn(path: Path) -> Path:
    rng = np.random.default_rng(1)
    inits = {
        "w1": _rand(rng, 8, 3, 3, 3), "b1": _rand(rng, 8),
        "wd": _rand(rng, 16, 1, 3, 3), "bd": _rand(rng, 16),
        "w2": _rand(rng, 10, 16 * 3 * 3, scale=0.1), "b2": _rand(rng, 10),
        "six": np.array(6.0, np.float32), "zero": np.array(0.0, np.float32),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], strides=[1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        # depthwise, depth multiplier 2, SAME_UPPER, stride 2
        helper.make_node("Conv", ["p1", "wd", "bd"], ["c2"], group=8, auto_pad="SAME_UPPER", strides=[2, 2]),
        helper.make_node("Clip", ["c2", "zero", "six"], ["r2"]),
        helper.make_node("AveragePool", ["r2"], ["p2"], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1]),
        helper.make_node("Flatten", ["p2"], ["f"]),
        helper.make_node("Gemm", ["f", "w2", "b2"], ["g"], transB=1),
        helper.make_node("Softmax", ["g"], ["y"], axis=-1),
    ]
    return _save(nodes, [_vi("x", ["N", 3, 12, 12])], [_vi("y", ["N", 10])], inits, path)


def _mlp(path: Path) -> Path:
    rng = np.random.default_rng(2)
    inits = {"w1": _rand(rng, 20, 32), "b1": _rand(rng, 32), "w2": _rand(rng, 32, 5), "b2": _rand(rng, 5)}
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["m1"]),
        helper.make_node("Add", ["m1", "b1"], ["a1"]),
        helper.make_node("Relu", ["a1"], ["r1"]),
        helper.make_node("Dropout", ["r1"], ["d1"]),
        helper.make_node("MatMul", ["d1", "w2"], ["m2"]),
        helper.make_node("Add", ["b2", "m2"], ["y"]),
    ]
    return _save(nodes, [_vi("x", [1, 20])], [_vi("y", [1, 5])], inits, path)


def _branches(path: Path) -> Path:
    """Two convolution branches added, reshaped with a constant shape, output kept 4-D too."""
    rng = np.random.default_rng(3)
    inits = {"wa": _rand(rng, 6, 4, 3, 3), "wb": _rand(rng, 6, 4, 1, 1), "bb": _rand(rng, 6),
             "shape": np.array([1, -1], np.int64)}
    nodes = [
        helper.make_node("Conv", ["x", "wa"], ["a"], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["x", "wb", "bb"], ["b"]),
        helper.make_node("Add", ["a", "b"], ["s"]),
        helper.make_node("Relu", ["s"], ["feat"]),
        helper.make_node("Reshape", ["feat", "shape"], ["flat"]),
        helper.make_node("Identity", ["flat"], ["y"]),
    ]
    return _save(nodes, [_vi("x", [1, 4, 5, 7])], [_vi("y", [1, 6 * 5 * 7]), _vi("feat", [1, 6, 5, 7])],
                 inits, path)


def _gap(path: Path) -> Path:
    rng = np.random.default_rng(4)
    inits = {"w": _rand(rng, 5, 2, 3, 3), "b": _rand(rng, 5), "wf": _rand(rng, 3, 5), "bf": _rand(rng, 3)}
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], strides=[2, 2], pads=[0, 1, 1, 0]),
        helper.make_node("GlobalAveragePool", ["c"], ["gp"]),
        helper.make_node("Flatten", ["gp"], ["f"]),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], transB=1),
    ]
    return _save(nodes, [_vi("x", [1, 2, 9, 8])], [_vi("y", [1, 3])], inits, path)


def _transpose(path: Path) -> Path:
    """NCHW -> NHWC by Transpose, a per-pixel MatMul over the channels, back by Transpose."""
    rng = np.random.default_rng(5)
    nodes = [
        helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 3, 1]),
        helper.make_node("MatMul", ["t", "w"], ["m"]),
        helper.make_node("Relu", ["m"], ["r"]),
        helper.make_node("Transpose", ["r"], ["y"], perm=[0, 3, 1, 2]),
    ]
    return _save(nodes, [_vi("x", [1, 3, 4, 5])], [_vi("y", [1, 6, 4, 5])], {"w": _rand(rng, 3, 6)}, path)


@pytest.mark.parametrize("build", [_cnn, _mlp, _branches, _gap, _transpose],
                         ids=["cnn", "mlp", "branches", "gap", "transpose"])
def test_onnx_model_matches_reference(build: object, tmp_path: Path) -> None:
    assert callable(build)
    model = build(tmp_path / f"{build.__name__.strip('_')}.onnx")
    report = run_model(model, "host", workdir=tmp_path / "work")
    assert report.reference == "onnxruntime"
    assert report.outputs_match_reference, (report.max_abs_diff, report.max_rel_diff)
    assert report.max_rel_diff <= 1e-5


def _compile_fails(model: Path, tmp_path: Path) -> str:
    out = tmp_path / "out"
    env_path = str(ROOT / "scripts")
    proc = subprocess.run([sys.executable, "-m", "utvm", "compile", str(model), "-o", str(out), "--json"],
                          capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": env_path}, timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error:")
    assert "Traceback" not in proc.stderr
    assert not out.exists()
    return lines[0]


def test_truncated_onnx(tmp_path: Path) -> None:
    good = _cnn(tmp_path / "good.onnx").read_bytes()
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(good[: len(good) // 2])
    assert "corrupt or truncated ONNX model" in _compile_fails(bad, tmp_path)


def test_unsupported_operators(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    inits = {"w": _rand(rng, 1, 16, 4), "r": _rand(rng, 1, 16, 4)}
    nodes = [
        helper.make_node("LSTM", ["x", "w", "r"], ["h"], hidden_size=4),
        helper.make_node("Einsum", ["x", "x"], ["e1"], equation="sbi,sbi->sbi"),
        helper.make_node("Einsum", ["e1", "x"], ["e2"], equation="sbi,sbi->sbi"),
    ]
    model = _save(nodes, [_vi("x", [2, 1, 4])], [_vi("h", [2, 1, 1, 4]), _vi("e2", [2, 1, 4])], inits,
                  tmp_path / "lstm.onnx")
    msg = _compile_fails(model, tmp_path)
    assert "unsupported operators" in msg and "LSTM" in msg and "Einsum (x2)" in msg


def test_dynamic_shape(tmp_path: Path) -> None:
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    model = _save(nodes, [_vi("x", ["N", 3, "H", "W"])], [_vi("y", ["N", 3, "H", "W"])], {},
                  tmp_path / "dyn.onnx")
    assert "dynamic shapes" in _compile_fails(model, tmp_path)


def test_non_float_input(tmp_path: Path) -> None:
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    x = helper.make_tensor_value_info("x", TensorProto.INT32, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.INT32, [1, 4])
    model = _save(nodes, [x], [y], {}, tmp_path / "int.onnx")
    assert "unsupported data type INT32" in _compile_fails(model, tmp_path)
