"""L2_POOL_2D against TFLite Micro (float32: windows, strides, SAME/VALID padding, fused
activations) and ONNX LpPool (p = 2) against onnxruntime: 20+ seeded configurations each side by
side in one model (tests/op_check.py), every output within 1e-5 of the reference."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
from onnx import helper

from op_check import Cases, OnnxCases, assert_refused, side_by_side
from tflite_builder import ModelBuilder

N = 24
_ACTS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")


def _out(size: int, k: int, s: int, same: bool) -> int:
    return -(-size // s) if same else (size - k) // s + 1


def l2_case(cases: Cases, seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, c = int(rng.integers(1, 3)), int(rng.integers(1, 5))
    kh, kw = (int(v) for v in rng.integers(1, 4, 2))
    sh, sw = (int(v) for v in rng.integers(1, 3, 2))
    h, w = int(rng.integers(kh, 9)), int(rng.integers(kw, 9))
    same = bool(seed % 2)
    shape = [n, h, w, c]

    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        x = m.add_tensor(f"l{seed}_x", shape, "float32")
        y = m.add_tensor(f"l{seed}_y", [n, _out(h, kh, sh, same), _out(w, kw, sw, same), c], "float32")
        m.add_operator("L2_POOL_2D", [x], [y], {
            "padding": "SAME" if same else "VALID", "stride_h": sh, "stride_w": sw, "filter_height": kh,
            "filter_width": kw, "fused_activation_function": _ACTS[seed % 4]})
        return [x], [y]

    cases.cases.append(build)
    cases.inputs.append(rng.uniform(-1.5, 1.5, shape).astype(np.float32))


def test_float32_against_tflite_micro(tmp_path: Path) -> None:
    cases = Cases()
    for seed in range(N):
        l2_case(cases, seed)
    report = cases.check(tmp_path)
    assert report.reference == "tflite-micro" and report.outputs_match_reference
    assert report.max_abs_diff == 0  # float32 too: the same sums in the same order


def test_onnx_lppool_p2_against_onnxruntime(tmp_path: Path) -> None:
    c = OnnxCases()
    for s in range(20):
        rng = np.random.default_rng(500 + s)
        k = [int(v) for v in rng.integers(1, 4, 2)]
        st = [int(v) for v in rng.integers(1, 3, 2)]
        pads = [int(rng.integers(0, k[0])), int(rng.integers(0, k[1])), int(rng.integers(0, k[0])),
                int(rng.integers(0, k[1]))]
        shape = [1, int(rng.integers(1, 4)), int(rng.integers(k[0], 8)), int(rng.integers(k[1], 8))]
        oh = (shape[2] + pads[0] + pads[2] - k[0]) // st[0] + 1
        ow = (shape[3] + pads[1] + pads[3] - k[1]) // st[1] + 1
        x = c.operand(f"x{s}", rng.uniform(-2, 2, shape).astype(np.float32))
        c.nodes.append(helper.make_node("LpPool", [x], [c.output(f"y{s}", [1, shape[1], oh, ow])], p=2,
                                        kernel_shape=k, strides=st, pads=pads))
    c.check(tmp_path, "lppool")


def _int8_model() -> bytes:
    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        x = m.add_tensor("x", [1, 4, 4, 2], "int8", scale=0.1, zero_point=0)
        y = m.add_tensor("y", [1, 2, 2, 2], "int8", scale=0.1, zero_point=0)
        m.add_operator("L2_POOL_2D", [x], [y], {"padding": "VALID", "stride_h": 2, "stride_w": 2,
                                                 "filter_height": 2, "filter_width": 2})
        return [x], [y]
    return side_by_side([build])


def test_int8_is_refused_as_tflite_micro_refuses_it(tmp_path: Path) -> None:
    """TFLite Micro has no quantized L2 pool: one error line, exit 2, no traceback."""
    assert_refused(_int8_model(), "unsupported data types int8 -> int8", tmp_path)
    (tmp_path / "int8.tflite").write_bytes(_int8_model())
    proc = subprocess.run([sys.executable, "-m", "utvm", "compile", str(tmp_path / "int8.tflite"), "-o",
                           str(tmp_path / "o")], capture_output=True, text=True)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "unsupported data types" in proc.stderr and "Traceback" not in proc.stderr
