"""Read a ``.tflite`` flatbuffer into a :class:`utvm.ir.Graph`.

Fully int8-quantized and float32 models are accepted; every problem with the file is raised
as one :class:`UtvmError` naming what is wrong.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import UtvmError
from ..ir import Graph, Operator, Quant, Tensor

# TFLite TensorType numbers -> our dtype names (None: known but unsupported).
_TENSOR_TYPES: dict[int, str] = {0: "float32", 2: "int32", 3: "uint8", 9: "int8", 7: "int16"}
_TENSOR_TYPE_NAMES = {
    0: "FLOAT32", 1: "FLOAT16", 2: "INT32", 3: "UINT8", 4: "INT64", 5: "STRING", 6: "BOOL",
    7: "INT16", 8: "COMPLEX64", 9: "INT8", 10: "FLOAT64", 11: "COMPLEX128", 12: "UINT64",
    13: "RESOURCE", 14: "VARIANT", 15: "UINT32", 16: "UINT16", 17: "INT4", 18: "BFLOAT16",
}
_NP_TYPES = {"float32": np.float32, "int32": np.int32, "uint8": np.uint8, "int8": np.int8,
             "int16": np.int16}

# Fused activation function codes.
_ACTIVATIONS = {0: "none", 1: "relu", 2: "relu_n1_to_1", 3: "relu6"}


def _builtin_names() -> dict[int, str]:
    from tflite.BuiltinOperator import BuiltinOperator

    return {v: k for k, v in vars(BuiltinOperator).items() if not k.startswith("_")}


def load_tflite(path: Path, data: bytes) -> Graph:
    """Parse ``data`` (the bytes of ``path``) into a graph."""
    if len(data) < 8 or data[4:8] != b"TFL3":
        raise UtvmError(f"{path}: not a TFLite model (no TFL3 file identifier)")
    try:
        return _Importer(path, data).run()
    except UtvmError:
        raise
    except Exception as exc:  # the flatbuffer reader fails in many ways on damaged files
        raise UtvmError(f"{path}: corrupt or truncated TFLite model ({type(exc).__name__})") from None


class _Importer:
    def __init__(self, path: Path, data: bytes) -> None:
        import tflite

        self.tfl = tflite
        self.path = path
        self.data = data
        self.model = tflite.Model.GetRootAsModel(data, 0)
        if self.model.SubgraphsLength() < 1:
            raise UtvmError(f"{path}: the model has no subgraph")
        self.sg = self.model.Subgraphs(0)
        self.names = _builtin_names()
        self.tensors: dict[str, Tensor] = {}
        self.index_to_name: dict[int, str] = {}

    # -- tensors ---------------------------------------------------------------------------
    def _buffer(self, index: int) -> bytes | None:
        buf = self.model.Buffers(index)
        if buf is None:
            return None
        offset = buf.Offset() if hasattr(buf, "Offset") else 0
        if offset > 1:  # large models keep buffers after the flatbuffer
            return self.data[offset: offset + buf.Size()]
        if buf.DataLength() == 0:
            return None
        return buf.DataAsNumpy().tobytes()

    def _tensor(self, index: int) -> str:
        if index in self.index_to_name:
            return self.index_to_name[index]
        t = self.sg.Tensors(index)
        raw_name = t.Name().decode("utf-8", "replace") if t.Name() else f"t{index}"
        name = raw_name
        if name in self.tensors:
            name = f"{raw_name}#{index}"
        ttype = t.Type()
        dtype = _TENSOR_TYPES.get(ttype)
        if dtype is None:
            tname = _TENSOR_TYPE_NAMES.get(ttype, str(ttype))
            raise UtvmError(f"{self.path}: unsupported data type {tname} (tensor '{raw_name}')")
        shape = tuple(int(d) for d in t.ShapeAsNumpy()) if t.ShapeLength() else ()
        # A free batch dimension (-1 first) is common; like TFLite Micro, the stored shape's batch
        # size is used. Any other unknown dimension makes the model dynamic.
        if t.ShapeSignatureLength() and any(int(d) < 0 for d in t.ShapeSignatureAsNumpy()[1:]):
            sig = [int(d) for d in t.ShapeSignatureAsNumpy()]
            raise UtvmError(
                f"{self.path}: dynamic shapes are not supported (tensor '{raw_name}' has shape {sig});"
                " convert the model with a fixed batch size")
        quant = None
        q = t.Quantization()
        if q is not None and q.ScaleLength() > 0:
            scale = q.ScaleAsNumpy().astype(np.float32)
            zp = q.ZeroPointAsNumpy().astype(np.int64) if q.ZeroPointLength() else np.zeros_like(scale, np.int64)
            quant = Quant(scale=scale, zero_point=zp.astype(np.int32), axis=int(q.QuantizedDimension()))
        raw = self._buffer(t.Buffer())
        data = None
        if raw is not None:
            arr = np.frombuffer(raw, dtype=_NP_TYPES[dtype])
            n = int(np.prod(shape)) if shape else 1
            if arr.size != n:
                raise UtvmError(f"{self.path}: constant '{raw_name}' holds {arr.size} values, its shape {list(shape)} needs {n}")
            data = arr.reshape(shape).copy()
        self.tensors[name] = Tensor(name=name, shape=shape, dtype=dtype, quant=quant, data=data)
        self.index_to_name[index] = name
        return name

    # -- operators -------------------------------------------------------------------------
    def _opcode_name(self, op: Any) -> str:
        oc = self.model.OperatorCodes(op.OpcodeIndex())
        code = max(oc.BuiltinCode(), oc.DeprecatedBuiltinCode())
        name = self.names.get(code, f"BUILTIN_{code}")
        if name == "CUSTOM":
            custom = oc.CustomCode()
            name = f"CUSTOM:{custom.decode() if custom else '?'}"
        return name

    def _options(self, op: Any, cls_name: str) -> Any:
        table = op.BuiltinOptions()
        opts = getattr(self.tfl, cls_name)()
        if table is not None:
            opts.Init(table.Bytes, table.Pos)
        return opts

    def run(self) -> Graph:
        sg = self.sg
        ops_raw = [sg.Operators(i) for i in range(sg.OperatorsLength())]
        kinds = [self._opcode_name(op) for op in ops_raw]
        unsupported = Counter(k for k in kinds if k not in _CONVERTERS)
        if unsupported:
            listed = ", ".join(f"{k} (x{n})" if n > 1 else k for k, n in sorted(unsupported.items()))
            raise UtvmError(f"{self.path}: unsupported operators: {listed}")
        inputs = [self._tensor(int(i)) for i in sg.InputsAsNumpy()]
        ops: list[Operator] = []
        for i, (op, kind) in enumerate(zip(ops_raw, kinds)):
            ins = [self._tensor(int(j)) if j >= 0 else "" for j in op.InputsAsNumpy()]
            outs = [self._tensor(int(j)) for j in op.OutputsAsNumpy()]
            _CONVERTERS[kind](self, op, kind, ins, outs, ops, i)
        outputs = [self._tensor(int(i)) for i in sg.OutputsAsNumpy()]
        if not inputs or not outputs:
            raise UtvmError(f"{self.path}: the model has no inputs or no outputs")
        name = Path(self.path).stem
        graph = Graph(name=name, tensors=self.tensors, ops=ops, inputs=inputs, outputs=outputs)
        _check_hybrid(self.path, graph)
        _own_output_buffers(graph)
        return graph

    # -- helpers for converters -------------------------------------------------------------
    def activation(self, code: int, where: str) -> str:
        act = _ACTIVATIONS.get(code)
        if act is None:
            raise UtvmError(f"{self.path}: {where}: unsupported fused activation {code}")
        return act


def _same_padding(in_size: int, k: int, stride: int, dilation: int) -> tuple[int, int, int]:
    """TFLite SAME/VALID arithmetic: output size and the padding before and after."""
    eff = (k - 1) * dilation + 1
    out = (in_size + stride - 1) // stride
    total = max((out - 1) * stride + eff - in_size, 0)
    return out, total // 2, total - total // 2


def _padding(kind_code: int, h: int, w: int, kh: int, kw: int, sh: int, sw: int,
             dh: int, dw: int) -> tuple[int, int, int, int]:
    if kind_code == 0:  # SAME
        _, top, bottom = _same_padding(h, kh, sh, dh)
        _, left, right = _same_padding(w, kw, sw, dw)
        return top, left, bottom, right
    return 0, 0, 0, 0


def _conv(imp: _Importer, op: Any, kind: str, ins: list[str], outs: list[str],
          ops: list[Operator], index: int) -> None:
    depthwise = kind == "DEPTHWISE_CONV_2D"
    o = imp._options(op, "DepthwiseConv2DOptions" if depthwise else "Conv2DOptions")
    x = imp.tensors[ins[0]]
    w = imp.tensors[ins[1]]
    if len(x.shape) != 4 or len(w.shape) != 4:
        raise UtvmError(f"{imp.path}: {kind} #{index}: expects 4-D input and filter")
    kh, kw = w.shape[1], w.shape[2]
    sh, sw = o.StrideH(), o.StrideW()
    dh, dw = o.DilationHFactor() or 1, o.DilationWFactor() or 1
    pad = _padding(o.Padding(), x.shape[1], x.shape[2], kh, kw, sh, sw, dh, dw)
    attrs = {
        "strides": (sh, sw), "dilation": (dh, dw), "padding": pad,
        "activation": imp.activation(o.FusedActivationFunction(), f"{kind} #{index}"),
    }
    if depthwise:
        attrs["depth_multiplier"] = w.shape[3] // x.shape[3]
    inputs = [ins[0], ins[1]] + ([ins[2]] if len(ins) > 2 and ins[2] else [])
    ops.append(Operator("depthwise_conv2d" if depthwise else "conv2d", inputs, outs, attrs,
                        source=f"{kind}#{index}"))


def _fully_connected(imp: _Importer, op: Any, kind: str, ins: list[str], outs: list[str],
                     ops: list[Operator], index: int) -> None:
    o = imp._options(op, "FullyConnectedOptions")
    if o.WeightsFormat() != 0:
        raise UtvmError(f"{imp.path}: {kind} #{index}: shuffled weights format is not supported")
    attrs = {"activation": imp.activation(o.FusedActivationFunction(), f"{kind} #{index}")}
    inputs = [ins[0], ins[1]] + ([ins[2]] if len(ins) > 2 and ins[2] else [])
    ops.append(Operator("fully_connected", inputs, outs, attrs, source=f"{kind}#{index}"))


def _pool(imp: _Importer, op: Any, kind: str, ins: list[str], outs: list[str],
          ops: list[Operator], index: int) -> None:
    o = imp._options(op, "Pool2DOptions")
    x = imp.tensors[ins[0]]
    kh, kw = o.FilterHeight(), o.FilterWidth()
    sh, sw = o.StrideH(), o.StrideW()
    pad = _padding(o.Padding(), x.shape[1], x.shape[2], kh, kw, sh, sw, 1, 1)
    attrs = {"pool_size": (kh, kw), "strides": (sh, sw), "padding": pad,
             "activation": imp.activation(o.FusedActivationFunction(), f"{kind} #{index}")}
    ops.append(Operator("avg_pool2d" if kind == "AVERAGE_POOL_2D" else "max_pool2d", [ins[0]], outs,
                        attrs, source=f"{kind}#{index}"))


def _add(imp: _Importer, op: Any, kind: str, ins: list[str], outs: list[str],
         ops: list[Operator], index: int) -> None:
    o = imp._options(op, "AddOptions")
    a, b = imp.tensors[ins[0]], imp.tensors[ins[1]]
    if a.shape != b.shape:
        raise UtvmError(f"{imp.path}: {kind} #{index}: broadcasting add {list(a.shape)} + {list(b.shape)} is not supported")
    attrs = {"activation": imp.activation(o.FusedActivationFunction(), f"{kind} #{index}")}
    ops.append(Operator("add", ins[:2], outs, attrs, source=f"{kind}#{index}"))


def _reshape(imp: _Importer, op: Any, kind: str, ins: list[str], outs: list[str],
             ops: list[Operator], index: int) -> None:
    x, y = imp.tensors[ins[0]], imp.tensors[outs[0]]
    if x.size != y.size:
        raise UtvmError(f"{imp.path}: {kind} #{index}: reshape from {list(x.shape)} to {list(y.shape)} changes the element count")
    ops.append(Operator("reshape", [ins[0]], outs, {}, source=f"{kind}#{index}"))


def _softmax(imp: _Importer, op: Any, kind: str, ins: list[str], outs: list[str],
             ops: list[Operator], index: int) -> None:
    o = imp._options(op, "SoftmaxOptions")
    ops.append(Operator("softmax", [ins[0]], outs, {"beta": float(o.Beta())}, source=f"{kind}#{index}"))


def _unary(name: str) -> Callable[..., None]:
    def convert(imp: _Importer, op: Any, kind: str, ins: list[str], outs: list[str],
                ops: list[Operator], index: int) -> None:
        ops.append(Operator(name, [ins[0]], outs, {}, source=f"{kind}#{index}"))
    return convert


_CONVERTERS: dict[str, Callable[..., None]] = {
    "CONV_2D": _conv,
    "DEPTHWISE_CONV_2D": _conv,
    "FULLY_CONNECTED": _fully_connected,
    "AVERAGE_POOL_2D": _pool,
    "MAX_POOL_2D": _pool,
    "ADD": _add,
    "RESHAPE": _reshape,
    "SOFTMAX": _softmax,
    "QUANTIZE": _unary("quantize"),
    "DEQUANTIZE": _unary("dequantize"),
    "RELU": _unary("relu"),
    "RELU6": _unary("relu6"),
}


def _own_output_buffers(graph: Graph) -> None:
    """Give every model output bytes of its own. A RESHAPE only renames its input's bytes, so
    an output that is (a reshape of) a model input, a constant or an earlier output would
    share them; such an output is computed by a copy instead (an identity transpose) and the
    tensor it was becomes an internal one."""
    alias = {op.outputs[0]: op.inputs[0] for op in graph.ops if op.kind == "reshape"}

    def root(name: str) -> str:
        while name in alias:
            name = alias[name]
        return name

    claimed = {root(i) for i in graph.inputs}
    for out in list(graph.outputs):
        r = root(out)
        if r not in claimed and not graph.tensors[r].is_constant:
            claimed.add(r)
            continue
        t = graph.tensors[out]
        other = f"{out}:copy" if out in graph.inputs else f"{out}:shared"
        while other in graph.tensors:
            other += "_"
        if out in graph.inputs:  # the input keeps its name, the output is the copy
            src, dst = out, other
            graph.outputs = [dst if n == out else n for n in graph.outputs]
        else:  # the output keeps its name, what it was is renamed
            src, dst = other, out
            graph.tensors[src] = Tensor(src, t.shape, t.dtype, t.quant, t.data)
            for op in graph.ops:
                op.inputs = [src if n == out else n for n in op.inputs]
                op.outputs = [src if n == out else n for n in op.outputs]
        graph.tensors[dst] = Tensor(dst, t.shape, t.dtype, t.quant)
        graph.ops.append(Operator("transpose", [src], [dst], {"perm": tuple(range(len(t.shape)))},
                                  source=f"output:{out}"))


def _check_hybrid(path: Path, graph: Graph) -> None:
    """Refuse dynamic-range models: float activations with int8 weights."""
    for op in graph.ops:
        if op.kind not in ("conv2d", "depthwise_conv2d", "fully_connected"):
            continue
        x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
        if x.dtype == "float32" and w.dtype == "int8":
            raise UtvmError(
                f"{path}: hybrid (dynamic-range) quantized model: {op.source} has float32 activations"
                " and int8 weights; TFLite Micro does not run these either. Quantize the model fully"
                " to int8 (with a representative dataset) or keep it float32")
        if x.dtype == "int8" and (x.quant is None or w.quant is None):
            raise UtvmError(f"{path}: {op.source}: int8 tensors without quantization parameters")
        if x.dtype not in ("int8", "float32") or w.dtype != x.dtype:
            raise UtvmError(f"{path}: {op.source}: unsupported data types {x.dtype} input, {w.dtype} weights")
