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

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from onnx import helper

import op_check
from op_check import check_model, quant_params
from seanet import check_layer, layers
from tflite_builder import ModelBuilder
from toolchains import toolchain_problem

N_CASES = 20
ACTIVATIONS = ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"]
BOARDS = ["mps2/an386", "mps3/an547"]
needs_qemu = pytest.mark.skipif(toolchain_problem() is not None, reason="bare-metal toolchain missing")


def _ints(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, lo: int | None = None) -> np.ndarray:
    info = np.iinfo(dtype)
    return rng.integers(info.min if lo is None else lo, info.max, size=shape, endpoint=True).astype(dtype)


def _activation(rng: np.random.Generator, dtype: str) -> str:
    """A fused activation: mostly NONE/RELU; RELU_N1_TO_1 clamps nearly everything, so rarely."""
    return str(rng.choice(ACTIVATIONS, p=[0.45, 0.3, 0.15, 0.1] if dtype != "int16" else [0.5, 0.35, 0.15, 0.0]))


class Layer:
    """Random tensors of one case: an int8/int16/float32 input, int8/float32 weights with
    per-channel scales, the output's quantization from the expected range of the sums."""

    def __init__(self, m: ModelBuilder, rng: np.random.Generator, tag: str, dtype: str) -> None:
        self.m, self.rng, self.tag, self.dtype = m, rng, tag, dtype
        self.quant = dtype != "float32"
        self.wdtype = "int8" if self.quant else "float32"

    def input(self, shape: tuple[int, ...], ins: list[int], data: list[np.ndarray]) -> int:
        q = quant_params(self.rng, -3.0, 3.0, self.dtype) if self.quant else None
        self.sx = q[0] if q else 1.0
        arr = (_ints(self.rng, shape, self.dtype) if self.quant
               else self.rng.uniform(-2.0, 2.0, shape).astype(np.float32))
        index = self.m.add_tensor(f"{self.tag}_x", shape, self.dtype,
                                  **({"scale": q[0], "zero_point": q[1]} if q else {}))
        ins.append(index)
        data.append(arr)
        return index

    def weights(self, shape: tuple[int, ...], axis: int) -> int:
        """Constant weights, per-channel along ``axis`` (symmetric int8) when quantized."""
        if not self.quant:
            return self.m.add_tensor(f"{self.tag}_w", shape, "float32",
                                     data=self.rng.normal(0.0, 0.5, shape).astype(np.float32))
        self.sw = self.rng.uniform(0.004, 0.02, shape[axis])
        return self.m.add_tensor(f"{self.tag}_w", shape, "int8", data=_ints(self.rng, shape, "int8", -127),
                                 scale=self.sw, zero_point=[0] * shape[axis], quantized_dimension=axis)

    def bias(self, channels: int, dtype: str | None) -> int:
        """A bias of ``dtype`` (None: float32 or int32 by the layer's type)."""
        if not self.quant:
            return self.m.add_tensor(f"{self.tag}_b", (channels,), "float32",
                                     data=self.rng.normal(0.0, 0.5, channels).astype(np.float32))
        dtype = dtype or "int32"
        bound = {"int16": 30000, "int32": 200000, "int64": 3000000}[dtype]
        sb = (self.sx * np.broadcast_to(self.sw, (channels,))).astype(np.float32)
        return self.m.add_tensor(f"{self.tag}_b", (channels,), dtype,
                                 data=self.rng.integers(-bound, bound, channels).astype(dtype),
                                 scale=sb, zero_point=[0] * channels)

    def output(self, shape: tuple[int, ...], depth: int) -> int:
        """The output, its scale spanning about the sums' spread over ``depth`` products."""
        if not self.quant:
            return self.m.add_tensor(f"{self.tag}_y", shape, "float32")
        qmax = 32767 if self.dtype == "int16" else 127
        spread = np.sqrt(depth) * self.sx * qmax * float(np.mean(self.sw)) * 127 * 0.5
        q = quant_params(self.rng, -spread, spread, self.dtype)
        return self.m.add_tensor(f"{self.tag}_y", shape, self.dtype, scale=q[0], zero_point=q[1])


def _out_size(size: int, k: int, stride: int, dilation: int, same: bool) -> int:
    eff = (k - 1) * dilation + 1
    return (size + stride - 1) // stride if same else (size - eff + stride) // stride


class Cases(op_check.Cases):
    """The multiply-accumulate operators' cases."""

    def add(self, build: Callable[[ModelBuilder, list[int]], list[int]]) -> None:
        def case(m: ModelBuilder) -> tuple[list[int], list[int]]:
            ins: list[int] = []
            outs = build(m, ins)
            return ins, outs
        self.cases.append(case)

    # -- CONV_2D / DEPTHWISE_CONV_2D -----------------------------------------------------------

    def conv(self, dtype: str, seed: int, depthwise: bool = False) -> None:
        def build(m: ModelBuilder, ins: list[int]) -> list[int]:
            rng = np.random.default_rng(seed)
            op = "DEPTHWISE_CONV_2D" if depthwise else "CONV_2D"
            L = Layer(m, rng, f"{op.lower()}_{dtype}_{seed}", dtype)
            cin = int(rng.integers(1, 7))
            mult = int(rng.integers(1, 3)) if depthwise else 1
            cout = cin * mult if depthwise else int(rng.integers(1, 7))
            kh, kw = (int(v) for v in rng.integers(1, 4, 2))
            sh, sw = (int(v) for v in rng.integers(1, 3, 2))
            dh, dw = (int(v) for v in rng.integers(1, 3, 2)) if rng.random() < 0.3 else (1, 1)
            same = bool(rng.random() < 0.5)
            h = int(rng.integers((kh - 1) * dh + 1, 9))
            w = int(rng.integers((kw - 1) * dw + 1, 9))
            batch = 2 if seed % 7 == 3 else 1
            oh, ow = _out_size(h, kh, sh, dh, same), _out_size(w, kw, sw, dw, same)
            x = L.input((batch, h, w, cin), ins, self.inputs)
            wt = L.weights((1, kh, kw, cout) if depthwise else (cout, kh, kw, cin), 3 if depthwise else 0)
            # 16x8 bias: int64 (TFLite Micro's int64 accumulation) or int32 (int32 accumulation)
            bias_type = None if dtype != "int16" else ("int64" if depthwise or rng.random() < 0.6 else "int32")
            inputs = [x, wt] + ([L.bias(cout, bias_type)] if rng.random() < 0.8 else [])
            y = L.output((batch, oh, ow, cout), kh * kw * (1 if depthwise else cin))
            options: dict[str, object] = {
                "padding": "SAME" if same else "VALID", "stride_w": sw, "stride_h": sh,
                "dilation_w_factor": dw, "dilation_h_factor": dh,
                "fused_activation_function": _activation(rng, dtype)}
            if depthwise:
                options["depth_multiplier"] = mult
            elif dtype == "int16" and len(inputs) == 2 and rng.random() < 0.5:
                options["quantized_bias_type"] = "INT32"
            m.add_operator(op, inputs, [y], options)
            return [y]
        self.add(build)

    # -- FULLY_CONNECTED -------------------------------------------------------------------------

    def fully_connected(self, dtype: str, seed: int) -> None:
        def build(m: ModelBuilder, ins: list[int]) -> list[int]:
            rng = np.random.default_rng(seed)
            L = Layer(m, rng, f"fc_{dtype}_{seed}", dtype)
            depth, units = int(rng.integers(1, 40)), int(rng.integers(1, 12))
            lead = [(1,), (3,), (2, 3)][seed % 3]
            x = L.input((*lead, depth), ins, self.inputs)
            w = L.weights((units, depth), 0) if seed % 2 else _per_tensor(L, (units, depth))
            bias_type = None if dtype != "int16" else ("int64" if rng.random() < 0.6 else "int32")
            inputs = [x, w] + ([L.bias(units, bias_type)] if rng.random() < 0.8 else [])
            keep = len(lead) > 1 and rng.random() < 0.5
            out_shape = (*lead, units) if keep else (int(np.prod(lead)), units)
            y = L.output(out_shape, depth)
            options: dict[str, object] = {"fused_activation_function": _activation(rng, dtype),
                                          "keep_num_dims": keep}
            if dtype == "int16" and len(inputs) == 2 and rng.random() < 0.5:
                options["quantized_bias_type"] = "INT32"
            m.add_operator("FULLY_CONNECTED", inputs, [y], options)
            return [y]
        self.add(build)

    # -- TRANSPOSE_CONV --------------------------------------------------------------------------

    def transpose_conv(self, dtype: str, seed: int, cins: tuple[int, ...] = ()) -> None:
        """``cins``: the input channels to take (in turn by seed), else random ones."""
        def build(m: ModelBuilder, ins: list[int]) -> list[int]:
            rng = np.random.default_rng(seed)
            L = Layer(m, rng, f"tconv_{dtype}_{seed}", dtype)
            cin, cout = int(rng.integers(1, 6)), int(rng.integers(1, 6))
            cin = cins[seed % len(cins)] if cins else cin
            kh, kw = (int(v) for v in rng.integers(1, 5, 2))
            sh, sw = (int(v) for v in rng.integers(1, 4, 2))
            same = bool(rng.random() < 0.5)
            h, w = (int(v) for v in rng.integers(1, 6, 2))
            # the output sizes TFLite's converter gives: stride x input (SAME) or that plus k - stride
            oh = h * sh if same else (h - 1) * sh + kh
            ow = w * sw if same else (w - 1) * sw + kw
            tag = L.tag
            shape = m.add_tensor(f"{tag}_shape", (4,), "int32", data=np.array([1, oh, ow, cout], np.int32))
            x = L.input((1, h, w, cin), ins, self.inputs)
            wt = L.weights((cout, kh, kw, cin), 0)
            bias_type = "int64" if dtype == "int16" else None
            inputs = [shape, wt, x] + ([L.bias(cout, bias_type)] if rng.random() < 0.7 else [])
            y = L.output((1, oh, ow, cout), kh * kw * cin // max(1, sh * sw) + 1)
            options = {"padding": "SAME" if same else "VALID", "stride_w": sw, "stride_h": sh,
                       "fused_activation_function": _activation(rng, dtype) if dtype != "int16" else "NONE"}
            m.add_operator("TRANSPOSE_CONV", inputs, [y], options)
            return [y]
        self.add(build)

    # -- BATCH_MATMUL ----------------------------------------------------------------------------

    def batch_matmul(self, dtype: str, seed: int) -> None:
        def build(m: ModelBuilder, ins: list[int]) -> list[int]:
            rng = np.random.default_rng(seed)
            tag = f"bmm_{dtype}_{seed}"
            rank = int(rng.integers(2, 6))
            batch = [int(rng.integers(1, 4)) for _ in range(rank - 2)]
            ba = [d if rng.random() < 0.7 else 1 for d in batch]
            bb = [d if rng.random() < 0.7 else 1 for d in batch]
            if rng.random() < 0.3:
                bb = bb[int(rng.integers(0, len(bb) + 1)):]  # fewer leading batch dimensions
            mm, k, n = (int(v) for v in rng.integers(1, 9, 3))
            adj_x, adj_y = bool(rng.random() < 0.4), bool(rng.random() < 0.4)
            a_shape = (*ba, k, mm) if adj_x else (*ba, mm, k)
            b_shape = (*bb, n, k) if adj_y else (*bb, k, n)
            out_batch = tuple(int(d) for d in np.broadcast_shapes(tuple(ba), tuple(bb)))
            quant = dtype != "float32"
            qa = quant_params(rng, -3.0, 3.0, dtype) if quant else None
            qb = quant_params(rng, -3.0, 3.0, dtype) if quant else None
            spread = 3.0 * 3.0 * np.sqrt(k) * 0.6
            qy = quant_params(rng, -spread, spread, dtype) if quant else None

            def q(p: tuple[float, int] | None) -> dict[str, object]:
                return {"scale": p[0], "zero_point": p[1]} if p else {}

            def arr(shape: tuple[int, ...]) -> np.ndarray:
                return _ints(rng, shape, dtype) if quant else rng.uniform(-2.0, 2.0, shape).astype(np.float32)

            a = m.add_tensor(f"{tag}_a", a_shape, dtype, **q(qa))  # type: ignore[arg-type]
            ins.append(a)
            self.inputs.append(arr(a_shape))
            if rng.random() < 0.3:  # a constant right-hand side
                b = m.add_tensor(f"{tag}_b", b_shape, dtype, data=arr(b_shape), **q(qb))  # type: ignore[arg-type]
            else:
                b = m.add_tensor(f"{tag}_b", b_shape, dtype, **q(qb))  # type: ignore[arg-type]
                ins.append(b)
                self.inputs.append(arr(b_shape))
            y = m.add_tensor(f"{tag}_y", (*out_batch, mm, n), dtype, **q(qy))  # type: ignore[arg-type]
            m.add_operator("BATCH_MATMUL", [a, b], [y], {"adj_x": adj_x, "adj_y": adj_y})
            return [y]
        self.add(build)


def _per_tensor(L: Layer, shape: tuple[int, int]) -> int:
    """Weights with one scale for the whole matrix (the converter's per-tensor layers)."""
    if not L.quant:
        return L.weights(shape, 0)
    scale = float(L.rng.uniform(0.004, 0.02))
    L.sw = np.full(shape[0], scale)
    return L.m.add_tensor(f"{L.tag}_w", shape, "int8", data=_ints(L.rng, shape, "int8", -127), scale=scale,
                          zero_point=0)


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
