"""Statically quantized ONNX in QDQ form, turned into integer operators before import.

onnxruntime's ``quantize_static`` (QDQ format) writes a float graph whose operators read
``DequantizeLinear`` outputs and feed ``QuantizeLinear``:

    x_q -> DQ -> Conv(w = DQ(w_q), b = DQ(b_q)) [-> Relu] -> Q -> y_q

Run in float, such a model only pretends to be quantized. :func:`fuse_qdq` rewrites each group
it recognises into the integer operator it stands for, on the ONNX graph (after shape
inference, so every value keeps its shape and type):

- Conv -> QLinearConv, MatMul -> QLinearMatMul, Gemm -> com.microsoft.QGemm, Add ->
  com.microsoft.QLinearAdd, AveragePool / GlobalAveragePool -> com.microsoft.QLinearAveragePool /
  QLinearGlobalAveragePool (a following Relu or Clip becomes their ``activation`` attribute);
- operators that only move or select values (MaxPool, Reshape, Flatten, Transpose, Squeeze,
  Unsqueeze, Identity, Relu, Concat) with the same quantization in and out simply run on the
  int8 values.

Which rule an ONNX operator's group takes is its operator module's declaration (``SourceOp.qdq``).

Those operators then import as utvm's int8 operators, which compute with TFLite's integer
arithmetic (onnxruntime requantizes in float: the two agree within one step of the output
scale). What is not recognised stays in float between its DequantizeLinear and
QuantizeLinear. uint8 quantization is turned into int8 (values and zero points minus 128: the
same real numbers).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..ir import Quant
from ..ops import onnx_ops

#: ONNX TensorProto element types
FLOAT, UINT8, INT8, INT32 = 1, 2, 3, 6


class _Graph:
    """Producers and consumers of the ONNX graph's values, kept up to date while rewriting."""

    def __init__(self, imp: Any) -> None:
        self.imp = imp
        self.g = imp.graph
        self.producer: dict[str, Any] = {}
        self.consumers: dict[str, list[Any]] = {}
        for node in self.g.node:
            for o in node.output:
                self.producer[o] = node
            for i in node.input:
                if i:
                    self.consumers.setdefault(i, []).append(node)
        self.outputs = {o.name for o in self.g.output}

    def const(self, name: str) -> np.ndarray | None:
        return self.imp.consts.get(name) if name else None

    def scalar_qparams(self, node: Any) -> tuple[float, int] | None:
        """(scale, zero point) of a Q/DQ node with constant per-tensor parameters."""
        s = self.const(node.input[1])
        z = self.const(node.input[2]) if len(node.input) > 2 and node.input[2] else np.zeros(1, np.int8)
        if s is None or z is None or s.size != 1 or z.size != 1:
            return None
        return float(s.reshape(-1)[0]), int(z.reshape(-1)[0])

    def dq_value(self, value: str) -> tuple[Any, tuple[float, int]] | None:
        """The DequantizeLinear node of a non-constant int8 value feeding ``value``, with its
        per-tensor (scale, zero point)."""
        node = self.producer.get(value)
        if node is None or node.op_type != "DequantizeLinear" or node.input[0] in self.imp.consts:
            return None
        if self.imp.elem_types.get(node.input[0]) != INT8:
            return None
        qp = self.scalar_qparams(node)
        return (node, qp) if qp is not None else None

    def dq_const(self, value: str, dtype: int, per_tensor: bool = False) -> Any | None:
        """The DequantizeLinear node of a constant of ``dtype`` (int8 weights, int32 bias)."""
        node = self.producer.get(value)
        if node is None or node.op_type != "DequantizeLinear" or node.input[0] not in self.imp.consts:
            return None
        data = self.imp.consts[node.input[0]]
        want = {INT8: np.int8, INT32: np.int32}[dtype]
        if per_tensor and self.scalar_qparams(node) is None:
            return None
        return node if data.dtype == want else None

    def single_consumer(self, value: str) -> Any | None:
        users = self.consumers.get(value, [])
        return users[0] if len(users) == 1 and value not in self.outputs else None

    def q_after(self, node: Any) -> tuple[list[Any], Any, str] | None:
        """The QuantizeLinear the single output of ``node`` feeds, directly or through one Relu /
        Clip: (nodes between, the Q node, activation)."""
        between: list[Any] = []
        act = "none"
        nxt = self.single_consumer(node.output[0])
        if nxt is not None and nxt.op_type in ("Relu", "Clip"):
            act = _activation(self, nxt)
            if act is None:
                return None
            between.append(nxt)
            nxt = self.single_consumer(nxt.output[0])
        if nxt is None or nxt.op_type != "QuantizeLinear" or self.scalar_qparams(nxt) is None:
            return None
        if self.imp.elem_types.get(nxt.output[0]) != INT8:
            return None
        return between, nxt, act

    def replace(self, old: list[Any], new: Any) -> None:
        """Put ``new`` where the first of ``old`` was and remove them all."""
        nodes = list(self.g.node)
        at = min(nodes.index(n) for n in old)
        for n in old:
            self.g.node.remove(n)
        self.g.node.insert(at, new)
        self.__init__(self.imp)  # type: ignore[misc]


def _activation(graph: _Graph, node: Any) -> str | None:
    if node.op_type == "Relu":
        return "relu"
    attrs = graph.imp.attrs(node)
    lo = attrs.get("min", -np.inf)
    hi = attrs.get("max", np.inf)
    if len(node.input) > 1 and node.input[1]:
        c = graph.const(node.input[1])
        lo = None if c is None else float(c.reshape(-1)[0])
    if len(node.input) > 2 and node.input[2]:
        c = graph.const(node.input[2])
        hi = None if c is None else float(c.reshape(-1)[0])
    if lo is None or hi is None:
        return None
    return {(0.0, 6.0): "relu6", (0.0, np.inf): "relu", (-1.0, 1.0): "relu_n1_to_1"}.get((float(lo), float(hi)))


def _make(op_type: str, inputs: list[str], output: str, attrs: dict[str, Any], domain: str = "") -> Any:
    from onnx import helper

    return helper.make_node(op_type, inputs, [output], domain=domain or None, **attrs)


def _copy_attrs(graph: _Graph, node: Any, act: str) -> dict[str, Any]:
    attrs = dict(graph.imp.attrs(node))
    if act != "none":
        attrs["activation"] = act
    return attrs


def _bias(graph: _Graph, value: str, x_scale: float, w_scale: np.ndarray, name: str) -> str | None:
    """An int32 bias in the scale x_scale * w_scale (what integer kernels add to the
    accumulator), from a DequantizeLinear of an int32 constant (rescaled if its scale differs)
    or a float constant; "" without bias, None if it cannot be."""
    if not value:
        return ""
    imp = graph.imp
    want = (np.float64(x_scale) * w_scale.astype(np.float64)).reshape(-1)
    dq = graph.dq_const(value, INT32)
    if dq is not None:
        q = imp.consts[dq.input[0]].astype(np.int64).reshape(-1)
        s = imp.consts.get(dq.input[1])
        if s is None:
            return None
        real = q * np.broadcast_to(s.astype(np.float64).reshape(-1), q.shape)
        if np.allclose(s.astype(np.float64).reshape(-1), want, rtol=1e-6):
            return dq.input[0]
    elif value in imp.consts and imp.consts[value].dtype == np.float32:
        real = imp.consts[value].astype(np.float64).reshape(-1)
    else:
        return None
    scaled = np.round(real / np.broadcast_to(want, real.shape))
    if np.any(np.abs(scaled) > 2**31 - 1):
        return None
    imp.consts[name] = scaled.astype(np.int32)
    return name


def _fuse_conv_like(graph: _Graph, node: Any) -> bool:
    """Conv, MatMul and Gemm with a quantized input and int8 constant weights."""
    x = graph.dq_value(node.input[0])
    if x is None or len(node.input) < 2:
        return False
    wdq = graph.dq_const(node.input[1], INT8)
    after = graph.q_after(node)
    if wdq is None or after is None:
        return False
    between, q, act = after
    xdq, (xs, _) = x
    w_scale = graph.const(wdq.input[1])
    w_zp = graph.const(wdq.input[2]) if len(wdq.input) > 2 and wdq.input[2] else None
    if w_scale is None or (w_zp is not None and np.any(w_zp != 0)):
        return False
    wz = wdq.input[2] if len(wdq.input) > 2 and wdq.input[2] else ""
    head = [xdq.input[0], xdq.input[1], xdq.input[2] if len(xdq.input) > 2 else "",
            wdq.input[0], wdq.input[1], wz]
    tail = [q.input[1], q.input[2] if len(q.input) > 2 else ""]
    bias_in = node.input[2] if len(node.input) > 2 else ""
    if node.op_type == "MatMul":
        if bias_in or graph.const(wdq.input[0]) is None or graph.const(wdq.input[0]).ndim != 2:
            return False
        new = _make("QLinearMatMul", head + tail, q.output[0], _copy_attrs(graph, node, act))
    else:
        bias = _bias(graph, bias_in, xs, w_scale, f"{node.output[0]}__bias_q")
        if bias is None:
            return False
        if node.op_type == "Conv":
            new = _make("QLinearConv", head + tail + ([bias] if bias else []), q.output[0],
                        _copy_attrs(graph, node, act))
        else:  # Gemm
            attrs = _copy_attrs(graph, node, act)
            if float(attrs.pop("beta", 1.0)) != 1.0 or float(attrs.get("alpha", 1.0)) != 1.0 or attrs.get("transA"):
                return False
            new = _make("QGemm", head + [bias] + tail, q.output[0], attrs, "com.microsoft")
    graph.imp.qparams[q.output[0]] = _quant(graph.scalar_qparams(q))
    graph.replace([node, *between, q], new)
    return True


def _fuse_add(graph: _Graph, node: Any) -> bool:
    """Add of two quantized values, or of a quantized value and an int8 constant (a bias
    quantized on its own, as quantize_static writes MatMul + Add)."""
    dqs = []
    for value in node.input[:2]:
        v = graph.dq_value(value)
        dqs.append(v[0] if v is not None else graph.dq_const(value, INT8, per_tensor=True))
    after = graph.q_after(node)
    if None in dqs or after is None or all(d.input[0] in graph.imp.consts for d in dqs):
        return False
    between, q, act = after
    adq, bdq = dqs
    inputs = [adq.input[0], adq.input[1], adq.input[2] if len(adq.input) > 2 else "",
              bdq.input[0], bdq.input[1], bdq.input[2] if len(bdq.input) > 2 else "",
              q.input[1], q.input[2] if len(q.input) > 2 else ""]
    attrs = {"activation": act} if act != "none" else {}
    graph.imp.qparams[q.output[0]] = _quant(graph.scalar_qparams(q))
    graph.replace([node, *between, q], _make("QLinearAdd", inputs, q.output[0], attrs, "com.microsoft"))
    return True


def _fuse_pool(graph: _Graph, node: Any) -> bool:
    x = graph.dq_value(node.input[0])
    after = graph.q_after(node)
    if x is None or after is None or len([o for o in node.output if o]) != 1:
        return False
    between, q, act = after
    xdq, _ = x
    inputs = [xdq.input[0], xdq.input[1], xdq.input[2] if len(xdq.input) > 2 else "",
              q.input[1], q.input[2] if len(q.input) > 2 else ""]
    attrs = _copy_attrs(graph, node, act)
    graph.imp.qparams[q.output[0]] = _quant(graph.scalar_qparams(q))
    graph.replace([node, *between, q], _make(f"QLinear{node.op_type}", inputs, q.output[0], attrs, "com.microsoft"))
    return True


def _fuse_passthrough(graph: _Graph, node: Any) -> bool:
    """An operator that only moves values, between a DQ and a Q of the same quantization."""
    data_inputs = [node.input[0]] if node.op_type != "Concat" else [i for i in node.input if i]
    dqs = [graph.dq_value(v) for v in data_inputs]
    nxt = graph.single_consumer(node.output[0]) if len([o for o in node.output if o]) == 1 else None
    if any(d is None for d in dqs) or nxt is None or nxt.op_type != "QuantizeLinear":
        return False
    qp = graph.scalar_qparams(nxt)
    if qp is None or any(d[1] != qp for d in dqs) or graph.imp.elem_types.get(nxt.output[0]) != INT8:  # type: ignore[index]
        return False
    for k, d in zip((range(len(node.input)) if node.op_type == "Concat" else [0]), dqs):
        node.input[k] = d[0].input[0]  # type: ignore[index]
    node.output[0] = nxt.output[0]
    graph.imp.qparams[nxt.output[0]] = _quant(qp)
    graph.replace([node, nxt], node)
    return True


#: where the output scale and zero point are among the inputs of the integer operators
OUTPUT_QPARAMS = {"QuantizeLinear": (1, 2), "QLinearConv": (6, 7), "QLinearMatMul": (6, 7), "QGemm": (7, 8),
                  "QLinearAdd": (6, 7), "QLinearAveragePool": (3, 4), "QLinearGlobalAveragePool": (3, 4)}


def _quant(qp: tuple[float, int] | None) -> Quant:
    assert qp is not None
    return Quant(scale=np.array([qp[0]], np.float32), zero_point=np.array([qp[1]], np.int32))


#: the rule of each ``SourceOp.qdq``
_RULES: dict[str, Callable[[_Graph, Any], bool]] = {
    "mac": _fuse_conv_like,
    "elementwise": _fuse_add,
    "pool": _fuse_pool,
    "passthrough": _fuse_passthrough,
}


def _qdq(node: Any) -> str | None:
    """How the QDQ group of the ONNX operator ``node`` becomes integer (``SourceOp.qdq``)."""
    src = onnx_ops().get(node.op_type)
    return src.qdq if src is not None else None


def _uint8_to_int8(imp: Any) -> None:
    """uint8 quantization as int8: constants and zero points minus 128, value types int8."""
    for node in imp.graph.node:
        if node.op_type not in OUTPUT_QPARAMS and node.op_type != "DequantizeLinear":
            continue
        for name in node.input:
            arr = imp.consts.get(name) if name else None
            if arr is not None and arr.dtype == np.uint8:
                imp.consts[name] = (arr.astype(np.int16) - 128).astype(np.int8)
    for value, elem in list(imp.elem_types.items()):
        if elem == UINT8:
            imp.elem_types[value] = INT8


def fuse_qdq(imp: Any) -> None:
    """Rewrite the QDQ groups of the importer's ONNX graph into integer operators (see the
    module docstring); record the quantization of every int8 value."""
    if not any(n.op_type in OUTPUT_QPARAMS or n.op_type == "DequantizeLinear" for n in imp.graph.node):
        return
    _uint8_to_int8(imp)
    graph = _Graph(imp)
    changed = True
    while changed:
        changed = False
        for node in list(graph.g.node):
            role = _qdq(node) if node.domain in ("", "ai.onnx") else None
            rule = _RULES.get(role) if role is not None else None
            if rule is not None and rule(graph, node):
                changed = True
                break
    # DequantizeLinear nodes nothing reads any more
    used = {i for n in graph.g.node for i in n.input} | graph.outputs
    for node in list(graph.g.node):
        if node.op_type == "DequantizeLinear" and node.output[0] not in used:
            graph.g.node.remove(node)
    for node in graph.g.node:
        if _qdq(node) == "passthrough" and node.op_type != "Concat" and node.input[0] in imp.qparams:
            imp.qparams.setdefault(node.output[0], imp.qparams[node.input[0]])  # int8 in, the same out
        where = OUTPUT_QPARAMS.get(node.op_type)
        if where is None or len(node.input) <= where[0] or node.output[0] in imp.qparams:
            continue
        s = graph.const(node.input[where[0]])
        z = graph.const(node.input[where[1]]) if len(node.input) > where[1] and node.input[where[1]] else np.zeros(1)
        if s is not None and z is not None and s.size == 1 and z.size == 1:
            imp.qparams[node.output[0]] = _quant((float(s.reshape(-1)[0]), int(z.reshape(-1)[0])))


def _pool_out(size: int, k: int, s: int, before: int, after: int, ceil: bool) -> int:
    span = size + before + after - k
    return (-(-span // s) if ceil else span // s) + 1


def _contrib_shape(imp: Any, node: Any) -> tuple[int, ...] | None:
    """The output shape of an onnxruntime quantized contrib operator, from its inputs' shapes."""
    shapes = [imp.shapes.get(i) if i else None for i in node.input]
    if node.op_type == "QLinearAdd" and shapes[0] is not None and shapes[3] is not None:
        return tuple(int(d) for d in np.broadcast_shapes(shapes[0], shapes[3]))
    if node.op_type == "QLinearGlobalAveragePool" and shapes[0] is not None:
        x = shapes[0]
        return (x[0], x[-1], 1, 1) if int(imp.attrs(node).get("channels_last", 0)) else (*x[:2], *[1] * (len(x) - 2))
    if node.op_type == "QLinearAveragePool" and shapes[0] is not None and len(shapes[0]) == 4:
        attrs = imp.attrs(node)
        x = shapes[0]
        k = imp.pair(attrs, "kernel_shape", (1, 1))
        s = imp.pair(attrs, "strides", (1, 1))
        top, left, bottom, right = imp.pads_2d(attrs, (x[2], x[3]), k, s, (1, 1))
        ceil = bool(int(attrs.get("ceil_mode", 0)))
        return (x[0], x[1], _pool_out(x[2], k[0], s[0], top, bottom, ceil), _pool_out(x[3], k[1], s[1], left, right, ceil))
    if node.op_type == "QGemm" and shapes[0] is not None and shapes[3] is not None:
        attrs = imp.attrs(node)
        m = shapes[0][1] if int(attrs.get("transA", 0)) else shapes[0][0]
        n = shapes[3][0] if int(attrs.get("transB", 0)) else shapes[3][1]
        return (m, n)
    return None


def contrib_value_infos(imp: Any) -> list[Any]:
    """Value infos (int8 tensors) for the outputs of contrib operators whose shapes the ONNX
    shape inference left unknown and whose inputs' shapes are known now."""
    from onnx import helper

    out = []
    for node in imp.graph.node:
        if node.domain != "com.microsoft" or not node.output or node.output[0] in imp.shapes:
            continue
        try:
            shape = _contrib_shape(imp, node)
        except Exception:  # a malformed node: the converter reports it
            shape = None
        if shape is not None:
            out.append(helper.make_tensor_value_info(node.output[0], INT8, list(shape)))
    return out
