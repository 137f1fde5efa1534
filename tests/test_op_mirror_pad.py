"""MIRROR_PAD against TFLite Micro: 20 seeded configurations per type (rank 1 to 5, REFLECT and
SYMMETRIC, borders from 0 up to the widest the mode allows, int32 and int64 paddings) side by
side in one model (tests/op_check.py), every output identical; refused parameters give one
error line."""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest

from op_check import Cases, assert_cli_refuses, assert_refused, check_exact, on_boards, quant_params, seeded
from tflite_builder import ModelBuilder

N = 20


def _case(c: Cases, dtype: str, seed: int) -> None:
    rng = np.random.default_rng(zlib.crc32(f"mirror_pad {dtype} {seed}".encode()))
    rank = 1 + seed % 5
    shape = [int(d) for d in rng.integers(1, 6, rank)]
    mode = "SYMMETRIC" if seed % 2 else "REFLECT"
    most = [d if mode == "SYMMETRIC" else d - 1 for d in shape]
    pads = np.array([[int(rng.integers(0, m + 1)), int(rng.integers(0, m + 1))] for m in most])
    q = quant_params(rng) if dtype == "int8" else (None, None)
    data = (rng.integers(-128, 128, shape).astype(np.int8) if dtype == "int8"
            else rng.uniform(-4, 4, shape).astype(np.float32))
    out_shape = [d + int(a) + int(b) for d, (a, b) in zip(shape, pads)]

    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        x = m.add_tensor(f"mp{seed}_x", shape, dtype, scale=q[0], zero_point=q[1])
        p = m.add_tensor(f"mp{seed}_p", [rank, 2], "int64" if seed % 3 == 0 else "int32", data=pads)
        y = m.add_tensor(f"mp{seed}_y", out_shape, dtype, scale=q[0], zero_point=q[1])
        m.add_operator("MIRROR_PAD", [x, p], [y], {"mode": 1 if mode == "SYMMETRIC" else 0})
        return [x], [y]

    c.cases.append(build)
    c.inputs.append(data)


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_mirror_pad_matches_tflite_micro(tmp_path: Path, dtype: str) -> None:
    check_exact(seeded(_case, [dtype], N), tmp_path)


@on_boards
def test_mirror_pad_on_board(tmp_path: Path, board: str) -> None:
    check_exact(seeded(_case, ["int8"], N), tmp_path, board)


def _model(shape: list[int], pads: list[list[int]], mode: int = 0, dtype: str = "int8",
           pad_type: str = "int32") -> bytes:
    m = ModelBuilder()
    x = m.add_tensor("x", shape, dtype)
    p = m.add_tensor("p", [len(pads), 2], pad_type, data=np.array(pads))
    y = m.add_tensor("y", [d + a + b for d, (a, b) in zip(shape, pads)], dtype)
    m.add_operator("MIRROR_PAD", [x, p], [y], {"mode": mode})
    return m.finish([x], [y])


@pytest.mark.parametrize(("model", "words"), [
    (lambda: _model([3, 4], [[3, 0], [0, 0]]), "reflect padding (3, 0) of axis 0 (3 elements) must lie in [0, 2]"),
    (lambda: _model([3, 4], [[0, 0], [0, 5]], mode=1), "symmetric padding (0, 5) of axis 1"),
    (lambda: _model([3], [[0, -1]]), "must lie in [0, 2]"),
    (lambda: _model([3], [[1, 1]], dtype="int16"), "TFLite Micro mirror-pads int8 and float32"),
    (lambda: _model([3], [[1, 1]], pad_type="int16"), "paddings of type int16 are not supported"),
    (lambda: _model([3], [[1, 1]], mode=2), "unknown mirror padding mode 2"),
])
def test_bad_parameters_are_refused(tmp_path: Path, model: object, words: str) -> None:
    assert_refused(model(), words, tmp_path)  # type: ignore[operator]


def test_refused_on_the_command_line(tmp_path: Path) -> None:
    assert_cli_refuses(_model([2, 2], [[2, 2], [0, 0]]), tmp_path, "MIRROR_PAD#0", "must lie in [0, 1]")
