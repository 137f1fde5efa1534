"""BROADCAST_TO against TFLite Micro: 20 seeded configurations per type (inputs of rank 0 to 5
broadcast to 1 to 5 axes, int32 and int64 shapes) side by side in one model
(tests/op_check.py), every output identical; ONNX Expand against onnxruntime; refused
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


def _shapes(rng: np.random.Generator, seed: int) -> tuple[list[int], list[int]]:
    """(input shape, output shape): the output of rank 1 to 5, the input its last axes or fewer,
    some of them 1."""
    out = [int(d) for d in rng.integers(1, 5, 1 + seed % 5)]
    x = [1 if rng.random() < 0.5 else d for d in out[int(rng.integers(0, len(out) + 1)):]]
    return x, out


def _case(c: Cases, dtype: str, seed: int) -> None:
    rng = np.random.default_rng(zlib.crc32(f"broadcast_to {dtype} {seed}".encode()))
    shape, out = _shapes(rng, seed)
    q = quant_params(rng, dtype=dtype) if dtype in ("int8", "int16") else (None, None)
    if dtype in ("float32", "bool"):
        data = rng.uniform(-4, 4, shape).astype(np.float32) if dtype == "float32" else rng.random(shape) < 0.5
    else:
        data = rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, shape, dtype=dtype, endpoint=True)

    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        x = m.add_tensor(f"bt{seed}_x", shape, dtype, scale=q[0], zero_point=q[1])
        s = m.add_tensor(f"bt{seed}_s", [len(out)], "int64" if seed % 3 == 0 else "int32", data=np.array(out))
        y = m.add_tensor(f"bt{seed}_y", out, dtype, scale=q[0], zero_point=q[1])
        m.add_operator("BROADCAST_TO", [x, s], [y])
        return [x], [y]

    c.cases.append(build)
    c.inputs.append(np.asarray(data))


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "float32"])
def test_broadcast_to_matches_tflite_micro(tmp_path: Path, dtype: str) -> None:
    check_exact(seeded(_case, [dtype], N), tmp_path)


def test_broadcast_to_uint8_int64_and_bool_match_tflite_micro(tmp_path: Path) -> None:
    check_exact(seeded(_case, ["uint8", "int64", "bool"], 10), tmp_path)


@on_boards
def test_broadcast_to_on_board(tmp_path: Path, board: str) -> None:
    check_exact(seeded(_case, ["int8"], N), tmp_path, board)


def test_onnx_expand_matches_onnxruntime(tmp_path: Path) -> None:
    c = OnnxCases()
    for s in range(N):
        rng = np.random.default_rng(zlib.crc32(f"onnx expand {s}".encode()))
        shape, out = _shapes(rng, s)
        # Expand also takes a shape with 1 where the input is larger, or shorter than the input
        target = [1 if d == e and rng.random() < 0.3 else e for d, e in zip([0] * (len(out) - len(shape)) + shape, out)]
        target = target[int(rng.integers(0, 2)) if s % 4 == 0 else 0:]
        want = list(np.broadcast_shapes(tuple(shape), tuple(target)))
        x = c.operand(f"x{s}", rng.uniform(-4, 4, shape).astype(np.float32))
        c.nodes.append(helper.make_node("Expand", [x, c.operand(f"s{s}", np.array(target, np.int64), constant=True)],
                                        [c.output(f"y{s}", want)]))
    assert c.check(tmp_path, "expand").max_abs_diff == 0


def _model(shape: list[int], out: list[int], target: list[int] | None = None, dtype: str = "int8",
           shape_type: str = "int32", out_type: str = "int8") -> bytes:
    m = ModelBuilder()
    x = m.add_tensor("x", shape, dtype)
    arr = np.array(out if target is None else target)
    s = m.add_tensor("s", list(arr.shape), shape_type, data=arr)
    y = m.add_tensor("y", out, out_type)
    m.add_operator("BROADCAST_TO", [x, s], [y])
    return m.finish([x], [y])


@pytest.mark.parametrize(("model", "words"), [
    (lambda: _model([2, 3], [2, 4]), "[2, 3] does not broadcast to [2, 4]"),
    (lambda: _model([2, 3], [3]), "[2, 3] does not broadcast to [3]"),
    (lambda: _model([1], [2, 3], target=[2, 4]), "the shape [2, 4] differs from the output's [2, 3]"),
    (lambda: _model([1], [2, 3], shape_type="int16"), "a shape of type int16 is not supported"),
    (lambda: _model([1], [1, 1, 1, 1, 2, 2]), "up to 5 dimensions, the output has 6"),
    (lambda: _model([1], [2], out_type="int16"), "unsupported data types int8 -> int16"),
])
def test_bad_parameters_are_refused(tmp_path: Path, model: object, words: str) -> None:
    assert_refused(model(), words, tmp_path)  # type: ignore[operator]


def test_refused_on_the_command_line(tmp_path: Path) -> None:
    assert_cli_refuses(_model([2, 3], [2, 4]), tmp_path, "BROADCAST_TO#0", "does not broadcast")
