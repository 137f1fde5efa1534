"""ZEROS_LIKE and FILL against TFLite Micro: 20+ seeded configurations of each (every type
TFLite Micro's kernels accept; FILL's value a model input or a constant, its dims of every
integer type) side by side in one model, every output identical; ONNX ConstantOfShape (folded
at import) against onnxruntime; bad parameters refused in one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from op_check import Cases, OnnxCases, assert_refused, side_by_side
from tflite_builder import ModelBuilder

N = 24


def _value(rng: np.random.Generator, dtype: str) -> np.ndarray:
    if dtype == "float32":
        return np.array(rng.uniform(-100, 100), np.float32)
    info = np.iinfo(dtype)
    return np.array(rng.integers(info.min, info.max, endpoint=True), dtype)


def zeros_like_case(cases: Cases, seed: int) -> None:
    rng = np.random.default_rng(seed)
    dtype = ("int8", "int32", "int64", "float32")[seed % 4]
    shape = [int(v) for v in rng.integers(1, 6, int(rng.integers(0, 5)))]
    data = np.asarray(_value(rng, dtype) if not shape else
                      rng.integers(-100, 100, shape).astype(dtype))

    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        q = {"scale": 0.5, "zero_point": 7} if dtype == "int8" else {}  # the output is 0, not 7
        x = m.add_tensor(f"z{seed}_x", shape, dtype, **q)
        y = m.add_tensor(f"z{seed}_y", shape, dtype, **q)
        m.add_operator("ZEROS_LIKE", [x], [y])
        return [x], [y]

    cases.cases.append(build)
    cases.inputs.append(data)


def fill_case(cases: Cases, seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    dtype = ("int8", "int32", "float32")[seed % 3]
    dims_type = ("int8", "int16", "int32", "int64")[seed % 4]
    shape = [int(v) for v in rng.integers(1, 6, int(rng.integers(1, 5)))]
    value = _value(rng, dtype)
    as_input = bool(seed % 2)

    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        q = {"scale": 0.25, "zero_point": -3} if dtype == "int8" else {}
        d = m.add_tensor(f"f{seed}_dims", [len(shape)], dims_type, data=shape)
        v = m.add_tensor(f"f{seed}_v", [], dtype, data=None if as_input else value, **q)
        y = m.add_tensor(f"f{seed}_y", shape, dtype, **q)
        m.add_operator("FILL", [d, v], [y])
        return ([v] if as_input else []), [y]

    cases.cases.append(build)
    if as_input:
        cases.inputs.append(value)


def test_zeros_like_and_fill_against_tflite_micro(tmp_path: Path) -> None:
    cases = Cases()
    for seed in range(N):
        zeros_like_case(cases, seed)
    for seed in range(N):
        fill_case(cases, seed)
    report = cases.check(tmp_path)
    assert report.reference == "tflite-micro" and report.outputs_match_reference
    assert report.max_abs_diff == 0


def test_onnx_constant_of_shape_against_onnxruntime(tmp_path: Path) -> None:
    c = OnnxCases()
    for s in range(20):
        rng = np.random.default_rng(300 + s)
        shape = [int(v) for v in rng.integers(1, 5, int(rng.integers(1, 4)))]
        x = c.operand(f"x{s}", rng.uniform(-1, 1, shape).astype(np.float32))
        k = c.operand(f"k{s}", np.array(shape, np.int64), constant=True)
        value = numpy_helper.from_array(np.array([rng.uniform(-5, 5)], np.float32), f"v{s}")
        c.nodes.append(helper.make_node("ConstantOfShape", [k], [f"f{s}"], value=value))
        c.nodes.append(helper.make_node("Add", [x, f"f{s}"], [c.output(f"y{s}", shape, TensorProto.FLOAT)]))
    c.check(tmp_path, "constant_of_shape")


def _fill_model(dims: list[int]) -> bytes:
    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        d = m.add_tensor("dims", [len(dims)], "int32", data=dims)
        v = m.add_tensor("value", [], "float32")
        y = m.add_tensor("y", [2, 3], "float32")
        m.add_operator("FILL", [d, v], [y])
        return [v], [y]
    return side_by_side([build])


def _zeros_like_int16() -> bytes:
    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        x = m.add_tensor("x", [4], "int16", scale=0.1)
        y = m.add_tensor("y", [4], "int16", scale=0.1)
        m.add_operator("ZEROS_LIKE", [x], [y])
        return [x], [y]
    return side_by_side([build])


def test_bad_parameters_are_refused_in_one_line(tmp_path: Path) -> None:
    assert_refused(_fill_model([3, 2]), "the dims [3, 2] are not the output's shape [2, 3]", tmp_path)
    assert_refused(_zeros_like_int16(), "unsupported data types int16 -> int16", tmp_path)
    (tmp_path / "fill.tflite").write_bytes(_fill_model([3, 2]))
    proc = subprocess.run([sys.executable, "-m", "utvm", "compile", str(tmp_path / "fill.tflite"), "-o",
                           str(tmp_path / "o")], capture_output=True, text=True)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "are not the output's shape" in proc.stderr and "Traceback" not in proc.stderr
