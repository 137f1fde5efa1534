"""REVERSE_V2 against TFLite Micro: 20 seeded configurations per type (rank 1 to 6, one to all
axes, negative axes, in any order) side by side in one model (tests/op_check.py), every output
identical; refused parameters give one error line."""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest

from op_check import Cases, assert_cli_refuses, assert_refused, check_exact, on_boards, quant_params, seeded
from tflite_builder import ModelBuilder

N = 20


def _data(rng: np.random.Generator, dtype: str, shape: list[int]) -> np.ndarray:
    if dtype == "float32":
        return rng.uniform(-4, 4, shape).astype(np.float32)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    info = np.iinfo(dtype)
    return rng.integers(info.min, int(info.max) + 1, shape).astype(dtype)


def _case(c: Cases, dtype: str, seed: int) -> None:
    rng = np.random.default_rng(zlib.crc32(f"reverse {dtype} {seed}".encode()))
    rank = 1 + seed % 6
    shape = [int(d) for d in rng.integers(1, 6 if rank < 5 else 4, rank)]
    count = int(rng.integers(1, rank + 1))
    first = int(rng.integers(0, rank - count + 1))
    axes = [a - rank if rng.random() < 0.3 else a for a in rng.permutation(range(first, first + count))]
    q = quant_params(rng, dtype=dtype) if dtype in ("int8", "int16") else (None, None)

    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        x = m.add_tensor(f"rv{seed}_x", shape, dtype, scale=q[0], zero_point=q[1])
        a = m.add_tensor(f"rv{seed}_a", [len(axes)], "int32", data=np.array(axes))
        y = m.add_tensor(f"rv{seed}_y", shape, dtype, scale=q[0], zero_point=q[1])
        m.add_operator("REVERSE_V2", [x, a], [y])
        return [x], [y]

    c.cases.append(build)
    c.inputs.append(_data(rng, dtype, shape))


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "float32"])
def test_reverse_matches_tflite_micro(tmp_path: Path, dtype: str) -> None:
    check_exact(seeded(_case, [dtype], N), tmp_path)


def test_reverse_uint8_int64_and_bool_match_tflite_micro(tmp_path: Path) -> None:
    check_exact(seeded(_case, ["uint8", "int64", "bool"], 10), tmp_path)


@on_boards
def test_reverse_on_board(tmp_path: Path, board: str) -> None:
    check_exact(seeded(_case, ["int16"], N), tmp_path, board)


def _model(shape: list[int], axes: list[int] | np.ndarray, dtype: str = "int8", axis_type: str = "int32",
           constant: bool = True, out_type: str = "int8") -> bytes:
    m = ModelBuilder()
    x = m.add_tensor("x", shape, dtype)
    arr = np.asarray(axes)
    a = m.add_tensor("a", list(arr.shape), axis_type, data=arr if constant else None)
    y = m.add_tensor("y", shape, out_type)
    m.add_operator("REVERSE_V2", [x, a], [y])
    return m.finish([x] if constant else [x, a], [y])


@pytest.mark.parametrize(("model", "words"), [
    (lambda: _model([2, 3, 4], [0, 2]), "axes [0, 2] are not distinct neighbours"),
    (lambda: _model([2, 3, 4], [1, -2]), "axes [1, 1] are not distinct neighbours"),
    (lambda: _model([2, 3], [2]), "axes [2] out of range for a 2-D input"),
    (lambda: _model([2, 3], [0, 1, 0]), "3 axes for a 2-D input"),
    (lambda: _model([2, 3], np.zeros(0, np.int32)), "every dimension must be at least 1"),
    (lambda: _model([2, 3], [[0]]), "the axis tensor must be 1-D"),
    (lambda: _model([2, 3], [0], axis_type="int64"), "an axis tensor of type int64 is not supported"),
    (lambda: _model([1] * 7, [0]), "at most 6 are supported"),
    (lambda: _model([2, 3], [0], out_type="int16"), "unsupported data types int8 -> int16"),
    (lambda: _model([2, 3], [0], constant=False), "the axis tensor must be constant"),
])
def test_bad_parameters_are_refused(tmp_path: Path, model: object, words: str) -> None:
    assert_refused(model(), words, tmp_path)  # type: ignore[operator]


def test_refused_on_the_command_line(tmp_path: Path) -> None:
    assert_cli_refuses(_model([2, 3, 4], [0, 2]), tmp_path, "REVERSE_V2#0", "neighbours")
