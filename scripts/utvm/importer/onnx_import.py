"""Read a float32 ``.onnx`` model into a :class:`utvm.ir.Graph`.

ONNX is NCHW, utvm is NHWC. Every ONNX value is kept in one or both of two layouts:

* ``plain``: the tensor exactly as ONNX sees it (any rank, row-major);
* ``nhwc``: a 4-D NCHW value stored as NHWC, what convolutions and pools read and write.

A value is converted between the layouts on demand with a ``transpose`` operator (or a
``reshape`` alias when the permutation does not move any element, e.g. one channel), so the
model's inputs and outputs keep their ONNX shapes and Flatten/Reshape/Gemm see ONNX's element
order. Nodes whose inputs are all constant (Constant, Shape of a static tensor, the shape
arithmetic exporters emit) are evaluated at import time with ONNX's reference implementation.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import UtvmError
from ..ir import NHWC, PLAIN, TO_NCHW, TO_NHWC, Graph, Operator, Quant, Tensor, trivial_perm
from ..ops import get as get_op
from ..ops import onnx_ops, reshape, transpose
from ..ops.base import Validation
from .onnx_qdq import contrib_value_infos, fuse_qdq
from .tflite_import import count_list, is_alias

#: ONNX element types of values -> utvm dtypes (FLOAT, BOOL)
_DTYPES = {1: "float32", 9: "bool"}

def load_onnx(path: Path, data: bytes) -> Graph:
    """Parse ``data`` (the bytes of ``path``) into a graph."""
    import onnx
    from google.protobuf.message import DecodeError

    try:
        model = onnx.load_model_from_string(data)
    except (DecodeError, ValueError, RuntimeError) as exc:
        raise UtvmError(f"{path}: corrupt or truncated ONNX model ({type(exc).__name__})") from None
    if not model.HasField("graph") or (not model.graph.node and not model.graph.output):
        raise UtvmError(f"{path}: corrupt or truncated ONNX model (no graph)")
    try:
        return OnnxImporter(path, model).run()
    except UtvmError:
        raise
    except Exception as exc:  # damaged files fail in the protobuf or numpy layers in many ways
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
        detail = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
        raise UtvmError(f"{path}: corrupt or truncated ONNX model ({detail})") from None


def _tensor_type_name(elem_type: int) -> str:
    from onnx import TensorProto

    try:
        return str(TensorProto.DataType.Name(elem_type))
    except ValueError:
        return str(elem_type)


def _op_name(node: Any) -> str:
    return f"{node.domain}.{node.op_type}" if node.domain not in ("", "ai.onnx") else str(node.op_type)


class OnnxImporter:
    def __init__(self, path: Path, model: Any) -> None:
        self.path = path
        self.model = model
        self.graph = model.graph
        self.opset = 1
        for imp in model.opset_import:
            if imp.domain in ("", "ai.onnx"):
                self.opset = int(imp.version)
        self.tensors: dict[str, Tensor] = {}
        self.ops: list[Operator] = []
        self.producer: dict[str, Operator] = {}
        self.consts: dict[str, np.ndarray] = {}
        self.shapes: dict[str, tuple[int, ...]] = {}
        self.elem_types: dict[str, int] = {}
        #: ONNX value -> {layout: graph tensor name}
        self.vals: dict[str, dict[str, str]] = {}
        self.consumers: Counter[str] = Counter()
        self.outputs: list[str] = []
        self.node_index = 0
        self.node: Any = None
        #: quantization of the int8 values (outputs of QuantizeLinear and the QLinear operators)
        self.qparams: dict[str, Quant] = {}
        #: QuantizeLinear / DequantizeLinear are left alone until the QDQ groups are fused
        self.qdq_fused = False

    # -- the pipeline ------------------------------------------------------------------------
    def run(self) -> Graph:
        from onnx import numpy_helper

        g = self.graph
        for init in g.initializer:
            if init.data_location == 1:  # EXTERNAL
                raise UtvmError(f"{self.path}: initializer '{init.name}' uses external data, which is not supported")
            self.consts[init.name] = numpy_helper.to_array(init)
        inputs = [i for i in g.input if i.name not in self.consts]
        self.outputs = [o.name for o in g.output]
        if not inputs or not self.outputs:
            raise UtvmError(f"{self.path}: the model has no inputs or no outputs")
        self._check_unsupported()
        for i in inputs:
            self._check_input(i)
        self._prefold()
        self._infer_shapes()
        fuse_qdq(self)
        self.qdq_fused = True

        for node in g.node:
            for name in node.input:
                if name:
                    self.consumers[name] += 1
        for name in self.outputs:
            self.consumers[name] += 1

        graph_inputs = []
        for i in inputs:
            shape = self.shapes[i.name]
            self.tensors[i.name] = Tensor(i.name, shape, self.value_dtype(i.name))
            self.vals[i.name] = {PLAIN: i.name}
            graph_inputs.append(i.name)

        for index, node in enumerate(g.node):
            self.node_index, self.node = index, node
            if self._foldable(node):
                self._fold(node)
                continue
            for out in node.output:
                if out:
                    self.value_dtype(out)
            source = onnx_ops().get(_op_name(node))
            if source is None:  # a Shape of a tensor without a static shape
                raise UtvmError(f"{self.path}: dynamic shapes are not supported ({self._where()} "
                                "cannot be evaluated at compile time)")
            source.convert(self, node)

        for name in self.outputs:
            if name in self.consts:
                raise UtvmError(f"{self.path}: output '{name}' is a constant; nothing to compute")
        if len(set(self.outputs)) != len(self.outputs):
            raise UtvmError(f"{self.path}: the model lists an output twice")
        graph_outputs = self._outputs(self.outputs, graph_inputs)
        return Graph(name=Path(self.path).stem, tensors=self.tensors, ops=self.ops,
                     inputs=graph_inputs, outputs=graph_outputs)

    def _check_unsupported(self) -> None:
        const = set(self.consts)
        unsupported: Counter[str] = Counter()
        for node in self.graph.node:
            if node.op_type == "Shape" or all(not n or n in const for n in node.input):
                if node.domain in ("", "ai.onnx") and not any(a.type in (5, 10) for a in node.attribute):
                    const.update(o for o in node.output if o)  # evaluated at import time
                    continue
            if _op_name(node) not in onnx_ops():
                unsupported[_op_name(node)] += 1
        if unsupported:
            raise UtvmError(f"{self.path}: unsupported operators: {count_list(unsupported)} (see `utvm ops`)")

    def _check_input(self, value: Any) -> None:
        tt = value.type.tensor_type if value.type.HasField("tensor_type") else None
        if tt is None:
            raise UtvmError(f"{self.path}: input '{value.name}' is not a tensor")
        if tt.elem_type not in _DTYPES:
            raise UtvmError(f"{self.path}: unsupported data type {_tensor_type_name(tt.elem_type)} "
                            f"(input '{value.name}'); only float32 (and bool) ONNX models are supported")
        if not tt.HasField("shape"):
            raise UtvmError(f"{self.path}: dynamic shapes are not supported (input '{value.name}' has no shape)")
        dims = list(tt.shape.dim)
        shown = [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in dims]
        for k, d in enumerate(dims):
            if d.HasField("dim_value") and d.dim_value > 0:
                continue
            if k == 0 and len(dims) > 1:
                d.Clear()
                d.dim_value = 1  # a free batch dimension: fixed to 1
                continue
            raise UtvmError(f"{self.path}: dynamic shapes are not supported (input '{value.name}' has shape "
                            f"{shown}); export the model with fixed sizes")

    def _prefold(self) -> None:
        """Evaluate the constant parts of the graph (shape arithmetic) and put the results in as
        initializers, so that shape inference sees constant Reshape shapes."""
        import onnx
        from onnx import numpy_helper

        g = self.graph
        for _ in range(8):
            try:
                inferred = onnx.shape_inference.infer_shapes(self.model, data_prop=True)
            except Exception:
                return  # the strict pass reports it
            self.shapes.clear()
            for v in [*inferred.graph.input, *inferred.graph.value_info, *inferred.graph.output]:
                tt = v.type.tensor_type
                if v.type.HasField("tensor_type") and tt.HasField("shape") \
                        and all(d.HasField("dim_value") for d in tt.shape.dim):
                    self.shapes[v.name] = tuple(int(d.dim_value) for d in tt.shape.dim)
            folded = []
            for index, node in enumerate(g.node):
                self.node_index, self.node = index, node
                if self._foldable(node):
                    self._fold(node)
                    folded.append(node)
            if not folded:
                return
            used = {n for node in g.node for n in node.input} | set(self.outputs)
            for node in folded:
                g.node.remove(node)
                for o in node.output:
                    if o and o in used and o not in {i.name for i in g.initializer}:
                        g.initializer.append(numpy_helper.from_array(np.asarray(self.consts[o]), o))

    def _infer_shapes(self) -> None:
        """ONNX's strict shape inference; the outputs of onnxruntime's quantized contrib operators,
        which it does not know, are given their shapes and the inference repeated."""
        import onnx

        for _ in range(len(self.graph.node) + 1):
            try:
                inferred = onnx.shape_inference.infer_shapes(self.model, check_type=True, strict_mode=True,
                                                             data_prop=True)
            except Exception as exc:
                first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
                raise UtvmError(f"{self.path}: invalid ONNX model: shape inference failed: {first}") from None
            g = inferred.graph
            for v in [*g.input, *g.value_info, *g.output]:
                if not v.type.HasField("tensor_type"):
                    continue
                tt = v.type.tensor_type
                self.elem_types[v.name] = tt.elem_type
                if tt.HasField("shape") and all(d.HasField("dim_value") for d in tt.shape.dim):
                    self.shapes[v.name] = tuple(int(d.dim_value) for d in tt.shape.dim)
            for name, arr in self.consts.items():
                self.shapes[name] = tuple(arr.shape)
            added = contrib_value_infos(self)
            if not added:
                return
            self.graph.value_info.extend(added)

    # -- constant folding --------------------------------------------------------------------
    def _foldable(self, node: Any) -> bool:
        if node.op_type == "Shape":
            return node.input[0] in self.shapes
        if node.op_type in ("QuantizeLinear", "DequantizeLinear") and not self.qdq_fused:
            return False  # the QDQ fusion looks at them first
        if any(a.type in (5, 10) for a in node.attribute):  # subgraphs
            return False
        return node.domain in ("", "ai.onnx") and all(not n or n in self.consts for n in node.input)

    def _fold(self, node: Any) -> None:
        if node.op_type == "Shape":
            shape = self.shapes[node.input[0]]
            attrs = self.attrs(node)
            start, end = int(attrs.get("start", 0)), attrs.get("end")
            picked = shape[start:] if end is None else shape[start:int(end)]
            self.consts[node.output[0]] = np.array(picked, dtype=np.int64)
            return
        if node.op_type == "DequantizeLinear":  # the reference evaluator lacks it before opset 19
            self.consts[node.output[0]] = self._dequantize_const(node)
            self.shapes[node.output[0]] = tuple(self.consts[node.output[0]].shape)
            return
        import onnx
        from onnx import helper, numpy_helper
        from onnx.reference import ReferenceEvaluator

        try:
            inits = [numpy_helper.from_array(self.consts[n], n) for n in dict.fromkeys(node.input) if n]
            outs = [onnx.ValueInfoProto(name=o) for o in node.output if o]
            one = helper.make_model(helper.make_graph([node], "fold", [], outs, inits),
                                    opset_imports=[helper.make_opsetid("", self.opset)])
            results = ReferenceEvaluator(one).run(None, {})
        except Exception as exc:
            raise UtvmError(f"{self.path}: {self._where()}: could not evaluate the constant expression "
                            f"({type(exc).__name__})") from None
        for name, value in zip([o for o in node.output if o], results, strict=False):
            if name:
                self.consts[name] = np.asarray(value)
                self.shapes[name] = tuple(np.asarray(value).shape)

    def _dequantize_const(self, node: Any) -> np.ndarray:
        """(q - zero point) * scale of a constant, per tensor or along ``axis``, as float32."""
        q = self.consts[node.input[0]].astype(np.float64)
        scale = self.consts[node.input[1]].astype(np.float32).astype(np.float64)
        zp = (self.consts[node.input[2]].astype(np.float64) if len(node.input) > 2 and node.input[2]
              else np.zeros_like(scale))
        if scale.size > 1:
            axis = int(self.attrs(node).get("axis", 1))
            shape = [1] * q.ndim
            shape[axis if axis >= 0 else axis + q.ndim] = scale.size
            scale, zp = scale.reshape(shape), zp.reshape(shape)
        return ((q - zp) * scale).astype(np.float32)

    # -- helpers -----------------------------------------------------------------------------
    def _where(self) -> str:
        node = self.node
        label = f"{node.op_type} '{node.name}'" if node.name else f"{node.op_type} #{self.node_index}"
        return label

    def _source(self) -> str:
        return f"{self.node.op_type}#{self.node_index}"

    def fail(self, msg: str) -> UtvmError:
        return UtvmError(f"{self.path}: {self._where()}: {msg}")

    @staticmethod
    def attrs(node: Any) -> dict[str, Any]:
        from onnx import helper

        return {a.name: helper.get_attribute_value(a) for a in node.attribute}

    def shape(self, name: str) -> tuple[int, ...]:
        if name not in self.shapes:
            raise UtvmError(f"{self.path}: dynamic shapes are not supported (no static shape for '{name}')")
        return self.shapes[name]

    def const(self, name: str, what: str) -> np.ndarray:
        if name not in self.consts:
            raise self.fail(f"the {what} must be a constant")
        return self.consts[name]

    def float_const(self, name: str, what: str) -> np.ndarray:
        arr = self.const(name, what)
        if arr.dtype != np.float32:
            raise self.fail(f"unsupported data type {arr.dtype} for the {what} (only float32)")
        return arr

    def _unique(self, base: str) -> str:
        name, k = base, 1
        while name in self.tensors:
            name = f"{base}_{k}"
            k += 1
        return name

    def add_const(self, base: str, data: np.ndarray, quant: Quant | None = None) -> str:
        """A constant graph tensor: float32, or with ``quant`` an integer constant of the
        array's own type (int8 weights, int32 biases); bool arrays stay bool."""
        name = self._unique(base)
        shape = tuple(data.shape)  # (np.ascontiguousarray makes a scalar 1-D)
        if quant is None and data.dtype != np.bool_:
            data = np.ascontiguousarray(data.astype(np.float32)).reshape(shape)
            self.tensors[name] = Tensor(name, shape, "float32", data=data)
        else:
            data = np.ascontiguousarray(data).reshape(shape)
            self.tensors[name] = Tensor(name, shape, str(data.dtype), quant=quant, data=data)
        return name

    def view(self, tensor: str, shape: tuple[int, ...]) -> str:
        """A tensor with ``tensor``'s bytes seen with another shape of the same size (a reshape)."""
        t = self.tensors[tensor]
        name = self._unique(f"{tensor}_view")
        self.tensors[name] = Tensor(name, shape, t.dtype, quant=t.quant)
        op = reshape.view(tensor, name, self._source())
        self.ops.append(op)
        self.producer[name] = op
        return name

    def emit_temp(self, kind: str, inputs: list[str], like: str, quant: Quant | None,
                  attrs: dict[str, Any] | None = None) -> str:
        """An operator whose output is a graph tensor of no ONNX value: shaped like tensor
        ``like``, with its dtype and the given quantization."""
        t = self.tensors[like]
        name = self._unique(f"{like}_{kind}")
        self.tensors[name] = Tensor(name, t.shape, t.dtype, quant=quant)
        op = Operator(kind, inputs, [name], attrs or {}, source=self._source())
        self.ops.append(op)
        self.producer[name] = op
        return name

    def quantized_input(self, value: str, scale: str, zero_point: str | None, what: str) -> Quant:
        """The quantization of int8 ``value`` as an integer operator declares it; it must be the
        one the value was produced with."""
        q = self.scalar_quant(scale, zero_point, what)
        have = self.qparams.get(value)
        if have is None or value in self.consts:
            raise self.fail(f"the {what} must be an int8 value computed by the model")
        if have.scalar() != q.scalar():
            raise self.fail(f"the {what}'s quantization {q.scalar()} differs from its producer's {have.scalar()}")
        return q

    def value_dtype(self, value: str) -> str:
        """utvm's element type of an ONNX value: float32 (bool), or int8 for quantized values."""
        elem = self.elem_types.get(value, 1)
        if elem in _DTYPES:
            return _DTYPES[elem]
        if elem == 3 and value in self.qparams:
            return "int8"
        if elem == 7 and value not in self.consts:  # computed indices (ArgMax)
            return "int64"
        raise UtvmError(f"{self.path}: {self._where()}: unsupported data type {_tensor_type_name(elem)} "
                        f"(value '{value}')")

    def scalar_quant(self, scale: str, zero_point: str | None, what: str) -> Quant:
        """Per-tensor quantization from the scale and zero-point inputs of a (Q)Linear operator."""
        s = self.const(scale, f"{what} scale").astype(np.float32).reshape(-1)
        z = (self.const(zero_point, f"{what} zero point").astype(np.int64).reshape(-1) if zero_point
             else np.zeros(1, np.int64))
        if s.size != 1 or z.size != 1:
            raise self.fail(f"the {what} must be quantized per tensor")
        return Quant(scale=s, zero_point=z.astype(np.int32))

    def _new_tensor(self, value: str, layout: str) -> str:
        """A graph tensor for ONNX ``value`` in ``layout``. The model's outputs keep their own
        names for the plain layout."""
        shape = self.shape(value)
        if layout == NHWC:
            shape = tuple(shape[p] for p in TO_NHWC)
            base = f"{value}_nhwc" if value in self.outputs else value
        else:
            base = value if value not in self.tensors else f"{value}_nchw"
        name = self._unique(base)
        self.tensors[name] = Tensor(name, shape, self.value_dtype(value), quant=self.qparams.get(value))
        return name

    def emit(self, kind: str, inputs: list[str], value: str, layout: str,
             attrs: dict[str, Any] | None = None) -> Operator:
        out = self._new_tensor(value, layout)
        return self._place(Operator(kind, inputs, [out], attrs or {}, source=self._source()), value, layout)

    def _place(self, op: Operator, value: str, layout: str) -> Operator:
        """``op``, appended, its output the graph tensor of ONNX ``value`` in ``layout``."""
        out = op.outputs[0]
        self.ops.append(op)
        self.producer[out] = op
        self.vals.setdefault(value, {})[layout] = out
        return op

    def get(self, value: str, layout: str) -> str:
        """The graph tensor holding ONNX ``value`` in ``layout``, converting if needed."""
        if value in self.consts:
            raise self.fail(f"constant input '{value}' is not supported here")
        have = self.vals.get(value)
        if not have:
            raise self.fail(f"input '{value}' is not available")
        if layout in have:
            return have[layout]
        shape = self.shape(value)
        if len(shape) != 4:
            raise self.fail(f"expects a 4-D (NCHW) input, '{value}' has shape {list(shape)}")
        if layout == NHWC:
            src, perm, src_shape = have[PLAIN], TO_NHWC, shape
        else:
            src, perm = have[NHWC], TO_NCHW
            src_shape = tuple(shape[p] for p in TO_NHWC)
        out = self._new_tensor(value, layout)
        trivial = trivial_perm(src_shape, perm)
        self._place(reshape.view(src, out, self._source()) if trivial
                    else transpose.permute(src, out, perm, self._source()), value, layout)
        return out

    def any_layout(self, value: str) -> tuple[str, str]:
        """(tensor, layout) for elementwise operators: NHWC if the value has it."""
        have = self.vals.get(value) or {}
        layout = NHWC if NHWC in have else PLAIN
        return self.get(value, layout), layout

    def _alias_root(self, tensor: str) -> str:
        op = self.producer.get(tensor)
        while op is not None and is_alias(op):
            tensor = op.inputs[0]
            op = self.producer.get(tensor)
        return tensor

    def _outputs(self, values: list[str], graph_inputs: list[str]) -> list[str]:
        """Graph tensors for the model's outputs, in order. Every output needs a buffer of its
        own: one that would share its bytes with an input or another output gets a copy."""
        tensors = {v: self.get(v, PLAIN) for v in values}
        claimed = {self._alias_root(i) for i in graph_inputs}
        owner: dict[str, str] = {}
        for v in sorted(values, key=lambda v: tensors[v] != v):  # outputs keeping their name first
            root = self._alias_root(tensors[v])
            if root not in claimed:
                claimed.add(root)
                owner[v] = tensors[v]
        result = []
        for v in values:
            tensor = tensors[v]
            if v in owner and tensor == v:
                result.append(tensor)
                continue
            out = self._unique(v)
            self.tensors[out] = Tensor(out, self.shape(v), self.value_dtype(v), quant=self.qparams.get(v))
            if v in owner:
                op = reshape.view(tensor, out, f"output:{v}")
            else:  # identity permutation: a copy
                op = transpose.permute(tensor, out, tuple(range(len(self.shape(v)))), f"output:{v}")
            self.ops.append(op)
            self.producer[out] = op
            result.append(out)
        return result

    def fusable_producer(self, value: str) -> Operator | None:
        """The operator computing ``value`` if the current node is its only consumer."""
        have = self.vals.get(value) or {}
        if len(have) != 1 or self.consumers[value] != 1 or value in self.outputs:
            return None
        tensor = next(iter(have.values()))
        if sum(1 for v in self.vals.values() if tensor in v.values()) != 1:
            return None  # shared with an Identity's output
        return self.producer.get(tensor)

    def retarget(self, op: Operator, value: str, layout: str) -> None:
        """Make ``op`` compute ONNX ``value`` (the current node's output) directly."""
        old = op.outputs[0]
        del self.tensors[old]
        del self.producer[old]
        out = self._new_tensor(value, layout)
        op.outputs[0] = out
        self.producer[out] = op
        self.vals[value] = {layout: out}

    # -- shared by the operators' import rules (utvm.ops) ---------------------------------------
    def pads_2d(self, attrs: dict[str, Any], hw: tuple[int, int], kernel: tuple[int, int],
                strides: tuple[int, int], dilation: tuple[int, int]) -> tuple[int, int, int, int]:
        """(top, left, bottom, right) from ``pads`` or ``auto_pad``."""
        auto = attrs.get("auto_pad", b"NOTSET")
        auto = auto.decode() if isinstance(auto, bytes) else str(auto)
        if auto in ("NOTSET", ""):
            pads = [int(p) for p in attrs.get("pads", [0, 0, 0, 0])]
            if len(pads) != 4:
                raise self.fail(f"expects 4 pads, got {pads}")
            return pads[0], pads[1], pads[2], pads[3]
        if auto == "VALID":
            return 0, 0, 0, 0
        if auto not in ("SAME_UPPER", "SAME_LOWER"):
            raise self.fail(f"unsupported auto_pad {auto}")
        before, after = [], []
        for size, k, s, d in zip(hw, kernel, strides, dilation, strict=True):
            out = -(-size // s)
            total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
            small, big = total // 2, total - total // 2
            before.append(small if auto == "SAME_UPPER" else big)
            after.append(big if auto == "SAME_UPPER" else small)
        return before[0], before[1], after[0], after[1]

    def pair(self, attrs: dict[str, Any], key: str, default: tuple[int, int]) -> tuple[int, int]:
        v = [int(x) for x in attrs.get(key, default)]
        if len(v) != 2:
            raise self.fail(f"only 2-D operators are supported ({key}={v})")
        return v[0], v[1]

    def fuse_bias(self, value: str, c: np.ndarray, out: str) -> bool:
        """Fold Add(value, constant c) into the fully_connected/conv computing ``value``."""
        op = self.fusable_producer(value)
        if op is None or len(op.inputs) != 2 or op.attrs.get("activation") != "none":
            return False
        shape = self.shape(value)
        if self.shape(out) != shape:
            return False
        opdef = get_op(op.kind)
        layout = opdef.weights.onnx_bias if opdef is not None and opdef.weights is not None else None
        if layout == PLAIN:
            n = shape[-1]
            if c.size != n or c.shape[-1:] != (n,):
                return False
        elif layout == NHWC:
            n = shape[1]
            ok_shapes = ((n, 1, 1), (1, n, 1, 1))
            if c.shape not in ok_shapes and not (n == 1 and c.size == 1):
                return False
        else:
            return False
        op.inputs.append(self.add_const(f"{out}_bias", c.reshape(-1).astype(np.float32)))
        self.retarget(op, out, layout)
        return True

#: the heading of this module's rows in docs/VALIDATION.md
VALIDATION_TITLE = "ONNX model (importer/onnx_import.py; reference: the ONNX spec and onnxruntime)"
#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("load_onnx", "corrupt or truncated ONNX (protobuf parse)",
               "onnxruntime: InferenceSession fails ('INVALID_PROTOBUF')",
               "refused-by-TFLM", "kept"),
    Validation("load_onnx", "ONNX model without a graph",
               "onnxruntime refuses it",
               "refused-by-TFLM", "kept"),
    Validation("load_onnx", "ONNX checker error (corrupt model)",
               "onnxruntime refuses what onnx.checker refuses (invalid graph)",
               "refused-by-TFLM", "kept"),
    Validation("run", "initializer with external data",
               "onnxruntime loads external data from files beside the model",
               "would-compute-differently", "kept: utvm reads one file (a feature gap)"),
    Validation("run", "ONNX model without inputs or outputs",
               "nothing to run",
               "refused-by-TFLM", "kept"),
    Validation("run", "a shape that cannot be evaluated at compile time",
               "onnxruntime runs dynamic shapes",
               "would-compute-differently", "kept: utvm plans memory for static shapes"),
    Validation("run", "an output that is a constant",
               "onnxruntime returns it",
               "would-compute-differently", "kept: nothing for utvm to compute (a feature gap)"),
    Validation("run", "an output listed twice",
               "onnx.checker / onnxruntime refuse duplicate output names",
               "refused-by-TFLM", "kept"),
    Validation("_check_unsupported", "ONNX operators utvm does not support",
               "— (a feature gap)",
               "not-a-model-check", "kept"),
    Validation("_check_input", "an input that is not a tensor (sequence, map)",
               "onnxruntime runs them",
               "would-compute-differently", "kept: no utvm kernels"),
    Validation("_check_input", "ONNX input of a type other than float32/bool",
               "onnxruntime runs them",
               "would-compute-differently", "kept: utvm imports float32 ONNX (and QDQ int8), a feature gap"),
    Validation("_check_input", "ONNX input without a shape",
               "onnxruntime runs it",
               "would-compute-differently", "kept: static shapes needed"),
    Validation("_check_input", "ONNX input with a free dimension",
               "onnxruntime runs it",
               "would-compute-differently", "kept: static shapes needed (export with fixed sizes)"),
    Validation("_infer_shapes", "ONNX shape inference fails",
               "onnxruntime refuses the model (the same inference)",
               "refused-by-TFLM", "kept"),
    Validation("_fold", "a constant subexpression fails to evaluate",
               "onnxruntime fails on it at run time",
               "refused-by-TFLM", "kept"),
    Validation("fail", "(helper) an ONNX import rule's refusal (`imp.fail`)",
               "— (the sites that use it are listed in *Import rules* below)",
               "not-a-model-check", "kept"),
    Validation("shape", "value without a static shape",
               "onnxruntime runs it",
               "would-compute-differently", "kept: static shapes needed"),
    Validation("value_dtype", "value of a type utvm has no kernels for",
               "onnxruntime runs it",
               "would-compute-differently", "kept: a feature gap"),
)
