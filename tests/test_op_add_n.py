"""ADD_N against TFLite Micro: 20 seeded configurations per type (2 to 6 inputs of rank 1 to 4,
int8 with any zero point and output quantization, one of 17 inputs at the extremes whose int32
sum wraps) side by side in one model (tests/op_check.py), every output identical; ONNX Sum
against onnxruntime; refused parameters give one error line."""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest
from onnx import helper

from op_check import Cases, OnnxCases, assert_cli_refuses, assert_refused, check_exact, on_boards, quant_params, seeded
from tflite_builder import ModelBuilder

N = 20


def _case(c: Cases, dtype: str, seed: int) -> None:
    rng = np.random.default_rng(zlib.crc32(f"add_n {dtype} {seed}".encode()))
    shape = [int(d) for d in rng.integers(1, 6, 1 + seed % 4)]
    n = 17 if seed == N - 1 and dtype == "int8" else int(rng.integers(2, 7))
    qx = quant_params(rng, -2, 2) if dtype == "int8" else (None, None)
    qy = quant_params(rng, -2 * n, 2 * n) if dtype == "int8" else (None, None)
    if seed == N - 1 and dtype == "int8":  # every input at the end of its range: the sum wraps
        qx = (qx[0], -128)
        c.inputs += [np.full(shape, 127, np.int8) for _ in range(n)]
    elif dtype == "int8":
        c.inputs += [rng.integers(-128, 128, shape).astype(np.int8) for _ in range(n)]
    else:
        c.inputs += [rng.uniform(-4, 4, shape).astype(np.float32) for _ in range(n)]

    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        xs = [m.add_tensor(f"an{seed}_x{k}", shape, dtype, scale=qx[0], zero_point=qx[1]) for k in range(n)]
        y = m.add_tensor(f"an{seed}_y", shape, dtype, scale=qy[0], zero_point=qy[1])
        m.add_operator("ADD_N", xs, [y])
        return xs, [y]

    c.cases.append(build)


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_add_n_matches_tflite_micro(tmp_path: Path, dtype: str) -> None:
    check_exact(seeded(_case, [dtype], N), tmp_path)


@on_boards
def test_add_n_on_board(tmp_path: Path, board: str) -> None:
    check_exact(seeded(_case, ["int8"], N), tmp_path, board)


def test_onnx_sum_matches_onnxruntime(tmp_path: Path) -> None:
    c = OnnxCases()
    for s in range(N):
        rng = np.random.default_rng(zlib.crc32(f"onnx sum {s}".encode()))
        shape = [int(d) for d in rng.integers(1, 6, 1 + s % 4)]
        xs = [c.operand(f"x{s}_{k}", rng.uniform(-4, 4, shape).astype(np.float32))
              for k in range(int(rng.integers(2, 7)))]
        c.nodes.append(helper.make_node("Sum", xs, [c.output(f"y{s}", shape)]))
    assert c.check(tmp_path, "sum").max_abs_diff == 0


def _model(shapes: list[list[int]], out: list[int], dtype: str = "int8", zps: list[int] | None = None,
           out_scale: float = 0.1, out_type: str | None = None) -> bytes:
    m = ModelBuilder()
    quantized = dtype == "int8"
    xs = [m.add_tensor(f"x{k}", s, dtype, scale=0.05 if quantized else None,
                       zero_point=(zps[k] if zps else 0) if quantized else None) for k, s in enumerate(shapes)]
    y = m.add_tensor("y", out, out_type or dtype, scale=out_scale if quantized else None, zero_point=0 if quantized else None)
    m.add_operator("ADD_N", xs, [y])
    return m.finish(xs, [y])


@pytest.mark.parametrize(("model", "words"), [
    (lambda: _model([[2, 3], [3]], [2, 3]), "input shapes [2, 3] and [3] differ from the output's [2, 3]"),
    (lambda: _model([[2, 3], [2, 3]], [2, 3], zps=[0, 1]), "int8 inputs with different quantizations"),
    (lambda: _model([[2], [2]], [2], dtype="int16"), "unsupported data types int16, int16 -> int16"),
    (lambda: _model([[2], [2]], [2], out_type="int16"), "unsupported data types int8, int8 -> int16"),
    (lambda: _model([[2]], [2]), "expects at least 2 inputs, got 1"),
    (lambda: _model([[2], [2]], [2], out_scale=1e-8), "the output rescaling factor"),
])
def test_bad_parameters_are_refused(tmp_path: Path, model: object, words: str) -> None:
    assert_refused(model(), words, tmp_path)  # type: ignore[operator]


def test_refused_on_the_command_line(tmp_path: Path) -> None:
    assert_cli_refuses(_model([[2, 3], [2, 3]], [2, 3], zps=[0, 1]), tmp_path, "ADD_N#0", "different quantizations")
