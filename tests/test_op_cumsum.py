"""CUMSUM against TFLite Micro (int8 and float32, every axis, exclusive and reverse) and ONNX
CumSum against onnxruntime: 20+ seeded configurations per type side by side in one model
(tests/op_check.py), every output identical (float32 within 1e-5)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
from onnx import helper

from op_check import Cases, OnnxCases, assert_refused, quant_params, side_by_side
from tflite_builder import ModelBuilder

N = 20


def _config(seed: int) -> tuple[list[int], int, bool, bool]:
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 5))
    shape = [int(v) for v in rng.integers(1, 7, rank)]
    axis = int(rng.integers(-rank, rank))
    return shape, axis, bool(rng.integers(0, 2)), bool(rng.integers(0, 2))


def cumsum_case(cases: Cases, dtype: str, seed: int) -> None:
    rng = np.random.default_rng(1000 + seed)
    shape, axis, exclusive, reverse = _config(seed)
    if dtype == "int8":
        qx, qy = quant_params(rng), quant_params(rng, -12.0, 12.0)
        data = rng.integers(-128, 128, shape).astype(np.int8)
    else:
        data = rng.uniform(-3, 3, shape).astype(np.float32)

    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        p = f"c{dtype}{seed}_"
        q = {} if dtype == "float32" else {"scale": qx[0], "zero_point": qx[1]}
        x = m.add_tensor(p + "x", shape, dtype, **q)
        a = m.add_tensor(p + "axis", [1], "int32", data=[axis])
        q = {} if dtype == "float32" else {"scale": qy[0], "zero_point": qy[1]}
        y = m.add_tensor(p + "y", shape, dtype, **q)
        m.add_operator("CUMSUM", [x, a], [y], {"exclusive": exclusive, "reverse": reverse})
        return [x], [y]

    cases.cases.append(build)
    cases.inputs.append(data)


def test_int8_and_float32_against_tflite_micro(tmp_path: Path) -> None:
    cases = Cases()
    for seed in range(N):
        cumsum_case(cases, "int8", seed)
    for seed in range(N):
        cumsum_case(cases, "float32", 100 + seed)
    report = cases.check(tmp_path)
    assert report.reference == "tflite-micro" and report.outputs_match_reference
    assert report.max_abs_diff == 0  # float32 too: the same sums in the same order


def test_onnx_cumsum_against_onnxruntime(tmp_path: Path) -> None:
    c = OnnxCases()
    for s in range(N):
        shape, axis, exclusive, reverse = _config(200 + s)
        x = c.operand(f"x{s}", np.random.default_rng(s).uniform(-3, 3, shape).astype(np.float32))
        a = c.operand(f"a{s}", np.array(axis, np.int64), constant=True)
        c.nodes.append(helper.make_node("CumSum", [x, a], [c.output(f"y{s}", shape)],
                                        exclusive=int(exclusive), reverse=int(reverse)))
    c.check(tmp_path, "cumsum")


def _bad_axis_model() -> bytes:
    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        x = m.add_tensor("x", [2, 3], "float32")
        a = m.add_tensor("axis", [1], "int32", data=[2])
        y = m.add_tensor("y", [2, 3], "float32")
        m.add_operator("CUMSUM", [x, a], [y])
        return [x], [y]
    return side_by_side([build])


def test_an_axis_outside_the_rank_is_refused(tmp_path: Path) -> None:
    assert_refused(_bad_axis_model(), "invalid axis 2 for a 2-D input", tmp_path)
    model = tmp_path / "bad_axis.tflite"
    model.write_bytes(_bad_axis_model())
    proc = subprocess.run([sys.executable, "-m", "utvm", "compile", str(model), "-o", str(tmp_path / "out")],
                          capture_output=True, text=True)
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "invalid axis" in lines[0] and "Traceback" not in proc.stderr, proc.stderr
