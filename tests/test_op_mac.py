"""Multiply-accumulate operators beyond int8/float32 layers: the 16x8 (int16 activations, int8
weights) CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED, TRANSPOSE_CONV and BATCH_MATMUL (int8,
int16, float32), and ONNX ConvTranspose and MatMul of two values.

Every operator and type is checked with 20+ seeded configurations (shapes, strides, dilations,
padding, depth multipliers, bias types, adjoints, broadcast batches, quantization parameters,
fused activations) side by side in one model against TFLite Micro: identical integers, float32
within 1e-5. The SEANet CONV_2D and TRANSPOSE_CONV layers (16x8) reproduce TFLite Micro's
golden outputs bit for bit, on the host and on the emulated Cortex-M4 and M55.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import helper

import op_check
from mac_cases import Cases
from op_check import check_model
from seanet import check_layer, layers
from toolchains import toolchain_problem

N_CASES = 20
BOARDS = ["mps2/an386", "mps3/an547"]
needs_qemu = pytest.mark.skipif(toolchain_problem() is not None, reason="bare-metal toolchain missing")


#: operator -> (case method name, types, extra keyword arguments)
TFLITE = {
    "conv2d_int16": ("conv", ("int16",), {}),
    "depthwise_int16": ("conv", ("int16",), {"depthwise": True}),
    "fully_connected_int16": ("fully_connected", ("int16",), {}),
    "transpose_conv": ("transpose_conv", ("int8", "int16", "float32"), {}),
    "batch_matmul": ("batch_matmul", ("int8", "int16", "float32"), {}),
}


def _cases(name: str, n: int) -> Cases:
    method, dtypes, extra = TFLITE[name]
    cases = Cases()
    for k, dtype in enumerate(dtypes):
        for i in range(n):
            getattr(cases, method)(dtype, 100 * k + i, **extra)
    return cases


@pytest.mark.parametrize("name", list(TFLITE))
def test_operator_matches_tflite_micro(name: str, tmp_path: Path) -> None:
    _cases(name, N_CASES).check(tmp_path)


@pytest.mark.slow
@needs_qemu
@pytest.mark.parametrize("board", BOARDS)
def test_operators_on_board(tmp_path: Path, board: str) -> None:
    """A few configurations of every operator and type in one model on each emulated board."""
    cases = Cases()
    for name in TFLITE:
        part = _cases(name, 4)
        cases.cases += part.cases
        cases.inputs += part.inputs
    cases.check(tmp_path, board)


# ---------------------------------------------------------------------------------------------
# ONNX (float32) against onnxruntime


class OnnxCases(op_check.OnnxCases):
    """ConvTranspose and MatMul cases."""

    def conv_transpose(self, seed: int) -> None:
        rng = np.random.default_rng(seed)
        tag = f"ct{seed}"
        cin, cout = int(rng.integers(1, 6)), int(rng.integers(1, 6))
        kh, kw = (int(v) for v in rng.integers(1, 5, 2))
        sh, sw = (int(v) for v in rng.integers(1, 4, 2))
        h, w = (int(v) for v in rng.integers(1, 6, 2))
        x = self.operand(f"{tag}_x", rng.uniform(-2, 2, (1, cin, h, w)).astype(np.float32))
        wt = self.operand(f"{tag}_w", rng.normal(0, 0.5, (cin, cout, kh, kw)).astype(np.float32), constant=True)
        ins = [x, wt]
        if rng.random() < 0.6:
            ins.append(self.operand(f"{tag}_b", rng.normal(0, 0.5, cout).astype(np.float32), constant=True))
        attrs: dict[str, object] = {"strides": [sh, sw]}
        style = seed % 3
        if style == 0:  # explicit pads
            pads = [int(rng.integers(0, kh)), int(rng.integers(0, kw))]
            attrs["pads"] = pads + [int(rng.integers(0, kh)), int(rng.integers(0, kw))]
            oh = (h - 1) * sh + kh - attrs["pads"][0] - attrs["pads"][2]  # type: ignore[index]
            ow = (w - 1) * sw + kw - attrs["pads"][1] - attrs["pads"][3]  # type: ignore[index]
            if oh < 1 or ow < 1:
                attrs["pads"], oh, ow = [0, 0, 0, 0], (h - 1) * sh + kh, (w - 1) * sw + kw
        elif style == 1:  # SAME_UPPER / SAME_LOWER: output = input x stride
            attrs["auto_pad"] = "SAME_UPPER" if rng.random() < 0.5 else "SAME_LOWER"
            oh, ow = min(h * sh, (h - 1) * sh + kh), min(w * sw, (w - 1) * sw + kw)  # padding is never negative
        else:
            oh, ow = (h - 1) * sh + kh, (w - 1) * sw + kw
        y = f"{tag}_y"
        self.output(y, (1, cout, oh, ow))
        self.nodes.append(helper.make_node("ConvTranspose", ins, [y], **attrs))

    def matmul(self, seed: int) -> None:
        rng = np.random.default_rng(seed)
        tag = f"mm{seed}"
        batch = [int(rng.integers(1, 4)) for _ in range(int(rng.integers(0, 3)))]
        ba = [d if rng.random() < 0.7 else 1 for d in batch]
        bb = [d if rng.random() < 0.7 else 1 for d in batch][int(rng.integers(0, len(batch) + 1)) if rng.random() < 0.3
                                                              else 0:]
        if not ba and not bb:
            bb = [2]  # two values, or a batched constant: not a plain layer
        mm, k, n = (int(v) for v in rng.integers(1, 9, 3))
        a = self.operand(f"{tag}_a", rng.uniform(-2, 2, (*ba, mm, k)).astype(np.float32))
        b = self.operand(f"{tag}_b", rng.uniform(-2, 2, (*bb, k, n)).astype(np.float32),
                       constant=bool(bb) and rng.random() < 0.3)
        out = (*np.broadcast_shapes(tuple(ba), tuple(bb)), mm, n)
        y = f"{tag}_y"
        self.output(y, out)
        self.nodes.append(helper.make_node("MatMul", [a, b], [y]))


@pytest.mark.parametrize("op", ["ConvTranspose", "MatMul"])
def test_onnx_operator_matches_onnxruntime(op: str, tmp_path: Path) -> None:
    cases = OnnxCases()
    for i in range(N_CASES):
        cases.conv_transpose(i) if op == "ConvTranspose" else cases.matmul(i)
    report = check_model(cases.save(tmp_path / f"{op}.onnx"), tmp_path, inputs=cases.data)
    assert report.reference == "onnxruntime"


# ---------------------------------------------------------------------------------------------
# shared models

SEANET_OPS = ("conv", "transpose_conv")
#: the whole corpus models run in test_shared_models.py


def _dir(tmp_path: Path, name: str) -> Path:
    d = tmp_path / name.replace("/", "_")
    d.mkdir()
    return d


def _seanet(models_dir: Path) -> list[str]:
    return [name for op in SEANET_OPS for name in layers(models_dir, op)]


@pytest.mark.parametrize("op", SEANET_OPS)
def test_seanet_layers_match_golden_on_host(models_dir: Path, tmp_path: Path, op: str) -> None:
    names = layers(models_dir, op)
    assert len(names) >= 5, f"SEANet {op} layers missing from {models_dir}"
    for name in names:
        check_layer(models_dir, _dir(tmp_path, name), name, "host")


@pytest.mark.slow
@needs_qemu
@pytest.mark.parametrize("board", BOARDS)
def test_seanet_layers_match_golden_on_board(models_dir: Path, tmp_path: Path, board: str) -> None:
    for name in _seanet(models_dir):
        check_layer(models_dir, _dir(tmp_path, name), name, board)
