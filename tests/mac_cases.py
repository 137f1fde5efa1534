"""Seeded random cases of the MAC-carrying layers (convolutions, fully connected, LSTM, SVDF):
their tensors, quantization and fused activations, shared by the operator and per-CPU tests."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import op_check
from op_check import quant_params
from tflite_builder import ModelBuilder

ACTIVATIONS = ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"]


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


def fc_case(cases: op_check.Cases, seed: int, shape: Callable[[np.random.Generator], tuple[int, int, int]] | None = None,
            activation: Callable[[np.random.Generator], str] | None = None) -> None:
    """A random int8 layer; ``shape``: depth, units, batch from the case's generator;
    ``activation``: the fused activation."""
    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        rng = np.random.default_rng(seed)
        L = Layer(m, rng, f"fc_{seed}", "int8")
        if shape is None:
            depth = int(rng.choice([4, 8, 10, 12, 16, 27, 64, 120, 256]))
            units = int(rng.choice([1, 2, 3, 4, 8, 10, 12, 16, 64]))
            batch = int(rng.integers(1, 4)) if seed % 3 == 0 else 1
        else:
            depth, units, batch = shape(rng)
        ins: list[int] = []
        x = L.input((batch, depth), ins, cases.inputs)
        w = L.weights((units, depth), 0) if seed % 2 else _per_tensor(L, (units, depth))
        inputs = [x, w] + ([L.bias(units, None)] if rng.random() < 0.8 else [])
        y = L.output((batch, units), depth)
        act = activation(rng) if activation else _activation(rng, "int8")
        m.add_operator("FULLY_CONNECTED", inputs, [y], {"fused_activation_function": act})
        return ins, [y]

    cases.cases.append(build)


class Layers(Cases):
    """Layers shaped for the per-CPU kernels (input and output quantization from test_op_mac's
    Layer: int16 with zero point 0, int8 with any)."""

    def fully_connected16(self, seed: int) -> None:
        def build(m: ModelBuilder, ins: list[int]) -> list[int]:
            rng = np.random.default_rng(seed)
            L = Layer(m, rng, f"fc{seed}", "int16")
            # seed % 5 == 4: weights +-127 over 600 inputs, sums that may not fit in int32
            big = seed % 5 == 4
            depth = 600 if big else int(rng.choice([1, 3, 8, 17, 64, 130, 600]))
            units, batch = int(rng.integers(1, 14)), int(rng.integers(1, 4))
            x = L.input((batch, depth), ins, self.inputs)
            w = L.weights((units, depth), 0)
            if big:  # the weights' buffer rewritten
                m._buffers[m._tensors[w]["buffer"]] = rng.choice([-127, 127], (units, depth)).astype(np.int8).tobytes()
            bias = str(rng.choice(["int64", "int32", "none"]))
            inputs = [x, w] + ([L.bias(units, bias)] if bias != "none" else [])
            y = L.output((batch, units), depth)
            options: dict[str, object] = {"fused_activation_function": str(rng.choice(ACTIVATIONS))}
            if bias == "none" and seed % 2:
                options["quantized_bias_type"] = "INT32"
            m.add_operator("FULLY_CONNECTED", inputs, [y], options)
            return [y]
        self.add(build)

    def conv16(self, seed: int, depthwise: bool = False) -> None:
        def build(m: ModelBuilder, ins: list[int]) -> list[int]:
            rng = np.random.default_rng(seed)
            op = "DEPTHWISE_CONV_2D" if depthwise else "CONV_2D"
            L = Layer(m, rng, f"{op.lower()}{seed}", "int16")
            cin = int(rng.choice([4, 8, 12, 20])) if depthwise and seed % 3 else int(rng.integers(1, 10))
            cout = cin if depthwise else int(rng.integers(1, 10))
            kh, kw = (int(v) for v in rng.integers(1, 6, 2))
            sh, sw = (int(v) for v in rng.integers(1, 3, 2))
            dh = int(rng.integers(1, 3))
            dw = int(rng.integers(1, 3)) if depthwise else 1
            same = bool(rng.random() < 0.6)
            h, w = int(rng.integers((kh - 1) * dh + 1, 10)), int(rng.integers((kw - 1) * dw + 1, 12))
            oh = (h + sh - 1) // sh if same else (h - (kh - 1) * dh - 1) // sh + 1
            ow = (w + sw - 1) // sw if same else (w - (kw - 1) * dw - 1) // sw + 1
            x = L.input((1, h, w, cin), ins, self.inputs)
            wt = L.weights((1, kh, kw, cout) if depthwise else (cout, kh, kw, cin), 3 if depthwise else 0)
            bias = "int64" if depthwise else str(rng.choice(["int64", "int32"]))
            inputs = [x, wt] + ([L.bias(cout, bias)] if rng.random() < 0.8 else [])
            y = L.output((1, oh, ow, cout), kh * kw * (1 if depthwise else cin))
            options: dict[str, object] = {"padding": "SAME" if same else "VALID", "stride_w": sw, "stride_h": sh,
                                          "dilation_w_factor": dw, "dilation_h_factor": dh,
                                          "fused_activation_function": str(rng.choice(ACTIVATIONS))}
            if depthwise:
                options["depth_multiplier"] = 1
            m.add_operator(op, inputs, [y], options)
            return [y]
        self.add(build)

    def batch_matmul(self, seed: int) -> None:
        def build(m: ModelBuilder, ins: list[int]) -> list[int]:
            from op_check import quant_params

            rng = np.random.default_rng(seed)
            tag = f"bmm{seed}"
            batch = [int(rng.integers(1, 4)) for _ in range(int(rng.integers(0, 3)))]
            ba = [d if rng.random() < 0.7 else 1 for d in batch]
            bb = [d if rng.random() < 0.7 else 1 for d in batch]
            mm, n = int(rng.integers(1, 12)), int(rng.integers(1, 14))
            k = int(rng.choice([4, 8, 12, 32, 100, 3, 7]))
            adj_x, adj_y = bool(rng.random() < 0.4), bool(rng.random() < 0.4)
            a_shape = (*ba, k, mm) if adj_x else (*ba, mm, k)
            b_shape = (*bb, n, k) if adj_y else (*bb, k, n)
            qa, qb = quant_params(rng, -3.0, 3.0), quant_params(rng, -2.0, 4.0)
            if seed % 4 == 0:
                qa, qb = (qa[0], 0), (qb[0], 0)
            spread = 9.0 * np.sqrt(k) * 0.6
            qy = quant_params(rng, -spread, spread)
            a = m.add_tensor(f"{tag}_a", a_shape, "int8", scale=qa[0], zero_point=qa[1])
            b = m.add_tensor(f"{tag}_b", b_shape, "int8", scale=qb[0], zero_point=qb[1])
            y = m.add_tensor(f"{tag}_y", (*np.broadcast_shapes(tuple(ba), tuple(bb)), mm, n), "int8", scale=qy[0],
                             zero_point=qy[1])
            for t, shape in ((a, a_shape), (b, b_shape)):
                ins.append(t)
                self.inputs.append(rng.integers(-128, 128, shape).astype(np.int8))
            m.add_operator("BATCH_MATMUL", [a, b], [y], {"adj_x": adj_x, "adj_y": adj_y})
            return [y]
        self.add(build)


def lstm_case(seed: int, dtype: str = "int8", time_major: bool | None = None, variant: str = "",
              cell_power: int | None = None, shape: tuple[int, int, int, int] | None = None):  # type: ignore[no-untyped-def]
    """One LSTM layer with random shapes, weights and quantization (``variant``: an unsupported
    extra input: "layer_norm", "peephole", "projection", "cifg", or "int16"; ``shape``: batch,
    steps, units, inputs instead of random ones)."""
    rng = np.random.default_rng(seed)
    batch = int(rng.integers(1, 4))
    steps = int(rng.integers(1, 7))
    units = int(rng.choice([1, 2, 3, 4, 5, 8, 12]))
    n_input = int(rng.integers(1, 13))
    if shape is not None:
        batch, steps, units, n_input = shape
    major = bool(rng.integers(0, 2)) if time_major is None else time_major
    clip = float(rng.choice([0.0, 0.0, 2.5, 8.0]))
    gain = float(rng.choice([0.5, 1.0, 3.0]))  # 3: gates and cell saturate often

    def case(m: ModelBuilder) -> tuple[list[int], list[int]]:
        p = f"l{seed}_"
        lead = [steps, batch] if major else [batch, steps]
        if dtype == "float32":
            x = m.add_tensor(p + "x", [*lead, n_input], "float32")

            def weights(name: str, depth: int) -> int:
                return m.add_tensor(p + name, [units, depth], "float32",
                                    rng.normal(0, gain / np.sqrt(depth), (units, depth)))

            def bias(name: str) -> int:
                return m.add_tensor(p + name, [units], "float32", rng.normal(0, 0.5, units))

            h = m.add_tensor(p + "h", [batch, units], "float32", is_variable=True)
            c = m.add_tensor(p + "c", [batch, units], "float32", is_variable=True)
            y = m.add_tensor(p + "y", [*lead, units], "float32")
        else:
            act = "int16" if variant == "int16" else "int8"
            sx, zx = 2.0 / 255, int(rng.integers(-20, 20))
            hs, zh = float(rng.uniform(1.0, 1.3)) / 128, int(rng.integers(-10, 10))
            if act == "int16":
                sx, zx, hs, zh = 1 / 32768, 0, 1 / 32768, 0
            power = int(rng.integers(-15, -10)) if cell_power is None else cell_power
            x = m.add_tensor(p + "x", [*lead, n_input], act, scale=sx, zero_point=zx)

            def weights(name: str, depth: int) -> int:
                sw = gain * float(rng.uniform(0.5, 2.0)) / (127 * np.sqrt(depth))
                return m.add_tensor(p + name, [units, depth], "int8", rng.integers(-127, 128, (units, depth)),
                                    scale=sw)

            def bias(name: str) -> int:
                return m.add_tensor(p + name, [units], "int32", rng.integers(-20000, 20000, units),
                                    scale=sx * 0.01)

            h = m.add_tensor(p + "h", [batch, units], act, scale=hs, zero_point=zh, is_variable=True)
            c = m.add_tensor(p + "c", [batch, units], "int16", scale=2.0 ** power, is_variable=True)
            y = m.add_tensor(p + "y", [*lead, units], act, scale=hs, zero_point=zh)
        i2 = [weights(f"i2{g}", n_input) for g in "ifco"]
        r2 = [weights(f"r2{g}", units) for g in "ifco"]
        b = [bias(f"b{g}") for g in "ifco"]
        extra = dict.fromkeys(range(24), -1)
        if variant == "layer_norm":
            for k in range(20, 24):
                extra[k] = bias(f"ln{k}")
        elif variant == "peephole":
            for k in range(9, 12):
                extra[k] = bias(f"peep{k}")
        elif variant == "projection":
            extra[16] = weights("proj", units)
        if variant == "cifg":
            i2[0] = r2[0] = -1
        inputs = [x, *i2, *r2, extra[9], extra[10], extra[11], *b, extra[16], extra[17], h, c,
                  extra[20], extra[21], extra[22], extra[23]]
        m.add_operator("UNIDIRECTIONAL_SEQUENCE_LSTM", inputs, [y],
                       {"fused_activation_function": "TANH", "cell_clip": clip, "proj_clip": 0.0,
                        "time_major": major})
        return [x], [y]

    return case


def svdf_case(seed: int, dtype: str = "int8", state_type: str = "int16", time_type: str = "int16",
              activation: str = "NONE", shape: tuple[int, int, int, int, int] | None = None):  # type: ignore[no-untyped-def]
    """One SVDF layer with random shapes, weights and quantization (``shape``: batch, inputs, rank,
    units, memory instead of random ones)."""
    rng = np.random.default_rng(seed)
    batch = int(rng.integers(1, 3))
    n_input = int(rng.integers(2, 12))
    rank = int(rng.integers(1, 3))
    units = int(rng.integers(1, 6))
    filters = units * rank
    memory = int(rng.integers(1, 6))
    if shape is not None:
        batch, n_input, rank, units, memory = shape
        filters = units * rank

    def case(m: ModelBuilder) -> tuple[list[int], list[int]]:
        p = f"s{seed}_"
        if dtype == "float32":
            x = m.add_tensor(p + "x", (batch, n_input), "float32")
            wf = m.add_tensor(p + "wf", (filters, n_input), "float32", rng.uniform(-1, 1, (filters, n_input)))
            wt = m.add_tensor(p + "wt", (filters, memory), "float32", rng.uniform(-1, 1, (filters, memory)))
            b = m.add_tensor(p + "b", (units,), "float32", rng.uniform(-1, 1, units))
            s = m.add_tensor(p + "state", (batch, memory * filters), "float32", is_variable=True)
            y = m.add_tensor(p + "y", (batch, units), "float32")
        else:
            sx, zx = 2.0 / 255, int(rng.integers(-20, 20))
            swf = float(rng.uniform(0.5, 1.5)) / 127
            state_span = 2.0 * float(rng.uniform(1, 4)) * np.sqrt(n_input)
            limits = {"int8": 127, "int16": 32767}
            ss = state_span / (2 * limits[state_type])
            zs = int(rng.integers(-10, 10)) if state_type == "int8" else 0
            swt = float(rng.uniform(0.5, 1.5)) / limits[time_type]
            wt_data = rng.integers(-limits[time_type], limits[time_type] + 1, (filters, memory))
            sy = state_span * rank * memory * 0.5 / 255
            x = m.add_tensor(p + "x", (batch, n_input), "int8", scale=sx, zero_point=zx)
            wf = m.add_tensor(p + "wf", (filters, n_input), "int8", rng.integers(-127, 128, (filters, n_input)),
                              scale=swf)
            wt = m.add_tensor(p + "wt", (filters, memory), time_type, wt_data, scale=swt)
            b = m.add_tensor(p + "b", (units,), "int32", rng.integers(-3000, 3000, units),
                             scale=float(np.float32(ss) * np.float32(swt)))
            s = m.add_tensor(p + "state", (batch, memory * filters), state_type, scale=ss, zero_point=zs,
                             is_variable=True)
            y = m.add_tensor(p + "y", (batch, units), "int8", scale=sy, zero_point=int(rng.integers(-10, 10)))
        m.add_operator("SVDF", [x, wf, wt, b, s], [y], {"rank": rank, "fused_activation_function": activation})
        return [x], [y]

    return case


def conv_case(seed: int, kernel: tuple[int, int], cin: int, cout: int):  # type: ignore[no-untyped-def]
    """An int8 CONV_2D on a 6x6 input (SAME, stride 1), per-channel weights, for op_check.side_by_side."""
    def case(m: ModelBuilder):  # type: ignore[no-untyped-def]
        rng = np.random.default_rng(seed)
        p = f"c{seed}_"
        x = m.add_tensor(p + "x", (1, 6, 6, cin), "int8", scale=0.05, zero_point=-7)
        ws = rng.uniform(0.002, 0.02, cout)
        w = m.add_tensor(p + "w", (cout, *kernel, cin), "int8", rng.integers(-127, 128, (cout, *kernel, cin)),
                         scale=ws)
        b = m.add_tensor(p + "b", (cout,), "int32", rng.integers(-500, 500, cout), scale=0.05 * ws)
        y = m.add_tensor(p + "y", (1, 6, 6, cout), "int8", scale=0.1, zero_point=4)
        m.add_operator("CONV_2D", [x, w, b], [y], {"padding": "SAME", "stride_w": 1, "stride_h": 1,
                                                   "dilation_w_factor": 1, "dilation_h_factor": 1})
        return [x], [y]
    return case
