"""GATHER_ND against TFLite Micro: 20 seeded configurations per type (params of rank 1 to 5,
index tuples of 1 to 5, constant indices and indices given as a model input, some tuples with
an index beyond its axis whose flat position TFLite Micro still reads) side by side in one model
(tests/op_check.py), every output identical; ONNX GatherND against onnxruntime; refused
parameters give one error line."""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest
from onnx import helper

from op_check import Cases, OnnxCases, assert_cli_refuses, assert_refused, check_exact, on_boards, quant_params, seeded
from tflite_builder import ModelBuilder

N = 20


def _rng(*key: object) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _indices(rng: np.random.Generator, shape: list[int], nd: int, lead: list[int], carry: bool) -> np.ndarray:
    """Index tuples inside ``shape``; with ``carry`` some tuples borrow one from an axis and add
    the next axis' size to the next index (the same flat position, an index beyond its axis)."""
    idx = np.stack([rng.integers(0, d, lead) for d in shape[:nd]], axis=-1).astype(np.int32)
    if carry and nd > 1:
        flat = idx.reshape(-1, nd)
        for row in flat[rng.random(len(flat)) < 0.5]:
            k = int(rng.integers(1, nd))
            if row[k - 1] > 0:
                row[k - 1] -= 1
                row[k] += shape[k]
        idx = flat.reshape(idx.shape)
    return idx


def _case(c: Cases, dtype: str, seed: int) -> None:
    rng = _rng("gather_nd", dtype, seed)
    rank = 1 + seed % 5
    shape = [int(d) for d in rng.integers(1, 6, rank)]
    nd = int(rng.integers(1, rank + 1))
    lead = [int(d) for d in rng.integers(1, 4, int(rng.integers(0, 3)))]
    idx = _indices(rng, shape, nd, lead, carry=seed % 4 == 1)
    q = quant_params(rng) if dtype == "int8" else (None, None)
    data = (rng.integers(-128, 128, shape).astype(np.int8) if dtype == "int8"
            else rng.uniform(-4, 4, shape).astype(np.float32))
    constant = seed % 2 == 1

    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        x = m.add_tensor(f"gn{seed}_x", shape, dtype, scale=q[0], zero_point=q[1])
        i = m.add_tensor(f"gn{seed}_i", list(idx.shape), "int32", data=idx if constant else None)
        y = m.add_tensor(f"gn{seed}_y", lead + shape[nd:], dtype, scale=q[0], zero_point=q[1])
        m.add_operator("GATHER_ND", [x, i], [y])
        return ([x] if constant else [x, i]), [y]

    c.cases.append(build)
    c.inputs.append(data)
    if not constant:
        c.inputs.append(idx)


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_gather_nd_matches_tflite_micro(tmp_path: Path, dtype: str) -> None:
    check_exact(seeded(_case, [dtype], N), tmp_path)


@on_boards
def test_gather_nd_on_board(tmp_path: Path, board: str) -> None:
    check_exact(seeded(_case, ["int8"], N), tmp_path, board)


def test_onnx_gather_nd_matches_onnxruntime(tmp_path: Path) -> None:
    c = OnnxCases()
    for s in range(N):
        rng = _rng("onnx_gather_nd", s)
        rank = 1 + s % 5
        shape = [int(d) for d in rng.integers(1, 6, rank)]
        nd = int(rng.integers(1, rank + 1))
        lead = [int(d) for d in rng.integers(1, 4, int(rng.integers(0, 3)))]
        idx = _indices(rng, shape, nd, lead, carry=False).astype(np.int64)
        idx = np.where(rng.random(idx.shape) < 0.3, idx - np.array(shape[:nd]), idx)  # negative: from the end
        x = c.operand(f"x{s}", rng.uniform(-4, 4, shape).astype(np.float32))
        c.nodes.append(helper.make_node("GatherND", [x, c.operand(f"i{s}", idx, constant=True)],
                                        [c.output(f"y{s}", lead + shape[nd:])]))
    report = c.check(tmp_path, "gather_nd")
    assert report.max_abs_diff == 0


def _model(shape: list[int], idx: np.ndarray, out: list[int], dtype: str = "int8",
           idx_type: str = "int32") -> bytes:
    m = ModelBuilder()
    x = m.add_tensor("x", shape, dtype)
    i = m.add_tensor("i", list(idx.shape), idx_type, data=idx)
    y = m.add_tensor("y", out, dtype)
    m.add_operator("GATHER_ND", [x, i], [y])
    return m.finish([x], [y])


@pytest.mark.parametrize(("model", "words"), [
    (lambda: _model([2, 3], np.array([[1, 3]]), [1]), "constant indices outside params of shape [2, 3]"),
    (lambda: _model([2, 3], np.array([[-1, 0]]), [1]), "constant indices outside params"),
    (lambda: _model([2, 3], np.array([[0, 0, 0]]), [1]), "index tuples of 3 for 2-D params"),
    (lambda: _model([1] * 6, np.zeros((1, 6)), [1]), "at most 5"),
    (lambda: _model([2, 3], np.array([[0]]), [1, 3], dtype="int16"), "TFLite Micro gathers int8 and float32"),
    (lambda: _model([2, 3], np.array([[0]]), [1, 3], idx_type="int64"), "indices of type int64 are not supported"),
    (lambda: _model([2, 3], np.array([[0]]), [1, 2]), "gather_nd gives [1, 3], the output is [1, 2]"),
])
def test_bad_parameters_are_refused(tmp_path: Path, model: object, words: str) -> None:
    assert_refused(model(), words, tmp_path)  # type: ignore[operator]


def test_refused_on_the_command_line(tmp_path: Path) -> None:
    assert_cli_refuses(_model([2, 3], np.array([[2, 0]]), [1]), tmp_path, "GATHER_ND#0", "outside params")
