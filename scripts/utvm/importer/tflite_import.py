"""Read a ``.tflite`` flatbuffer into a :class:`utvm.ir.Graph`.

Fully int8-quantized and float32 models are accepted; every problem with the file is raised
as one :class:`UtvmError` naming what is wrong.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import UtvmError, short_list
from ..ir import Graph, Operator, Quant, Tensor
from ..ops import get, tflite_ops
from ..ops.base import OpError, Validation, Weights
from ..ops.transpose import permute
from .limits import check_tensor

# TFLite TensorType numbers -> our dtype names (None: known but unsupported).
_TENSOR_TYPES: dict[int, str] = {0: "float32", 2: "int32", 3: "uint8", 9: "int8", 7: "int16", 6: "bool",
                                 4: "int64"}
_TENSOR_TYPE_NAMES = {
    0: "FLOAT32", 1: "FLOAT16", 2: "INT32", 3: "UINT8", 4: "INT64", 5: "STRING", 6: "BOOL",
    7: "INT16", 8: "COMPLEX64", 9: "INT8", 10: "FLOAT64", 11: "COMPLEX128", 12: "UINT64",
    13: "RESOURCE", 14: "VARIANT", 15: "UINT32", 16: "UINT16", 17: "INT4", 18: "BFLOAT16",
}
_RESOURCE = 13  # TensorType RESOURCE: a resource variable's handle
_NP_TYPES = {"float32": np.float32, "int32": np.int32, "int64": np.int64, "uint8": np.uint8, "int8": np.int8,
             "int16": np.int16, "bool": np.bool_}

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
        return TfliteImporter(path, data).run()
    except UtvmError:
        raise
    except Exception as exc:  # the flatbuffer reader fails in many ways on damaged files
        raise UtvmError(f"{path}: corrupt or truncated TFLite model ({type(exc).__name__})") from None


class TfliteImporter:
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
        self.ops: list[Operator] = []
        #: tensors of type RESOURCE (resource variable handles): named, but no graph tensor; the
        #: import rules of the operators that make and use them resolve them
        self.resources: set[str] = set()
        #: what an import rule keeps across the operators of one model, under a key of its own
        self.rule_state: dict[str, Any] = {}
        self.suffix = ""  # of the tensor names of the subgraph being read ("" for the main one)

    # -- tensors ---------------------------------------------------------------------------
    def _buffer(self, index: int) -> bytes | None:
        if not 0 <= index < self.model.BuffersLength():
            raise UtvmError(f"{self.path}: buffer index {index} (the model has {self.model.BuffersLength()} buffers)")
        buf = self.model.Buffers(index)
        if buf is None:
            return None
        offset = buf.Offset() if hasattr(buf, "Offset") else 0
        if offset > 1:  # large models keep buffers after the flatbuffer
            if offset + buf.Size() > len(self.data):
                raise UtvmError(f"{self.path}: buffer {index} lies beyond the end of the file")
            return self.data[offset: offset + buf.Size()]
        if buf.DataLength() == 0:
            return None
        return buf.DataAsNumpy().tobytes()

    def _tensor(self, index: int) -> str:
        if index in self.index_to_name:
            return self.index_to_name[index]
        if not 0 <= index < self.sg.TensorsLength():
            raise UtvmError(f"{self.path}: tensor index {index} (the subgraph has {self.sg.TensorsLength()} tensors)")
        t = self.sg.Tensors(index)
        raw_name = t.Name().decode("utf-8", "replace") if t.Name() else f"t{index}"
        raw_name += self.suffix  # another subgraph's tensor: a name of its own
        name = raw_name
        if name in self.tensors or name in self.resources:
            name = f"{raw_name}#{index}"
        ttype = t.Type()
        if ttype == _RESOURCE:
            self.resources.add(name)
            self.index_to_name[index] = name
            return name
        dtype = _TENSOR_TYPES.get(ttype)
        if dtype is None:
            tname = _TENSOR_TYPE_NAMES.get(ttype, str(ttype))
            raise UtvmError(f"{self.path}: unsupported data type {tname} (tensor '{raw_name}')")
        shape = tuple(int(d) for d in t.ShapeAsNumpy()) if t.ShapeLength() else ()
        # Like TFLite Micro, the stored shape is used: shape_signature (-1 for a free dimension,
        # the batch or any other) is never read.
        quant = None
        q = t.Quantization()
        if q is not None and q.ScaleLength() > 0:
            scale = q.ScaleAsNumpy().astype(np.float32)
            zp = q.ZeroPointAsNumpy().astype(np.int64) if q.ZeroPointLength() else np.zeros_like(scale, np.int64)
            quant = Quant(scale=scale, zero_point=zp, axis=int(q.QuantizedDimension()))  # int32: tflm_quantization
        tensor = Tensor(name=name, shape=shape, dtype=dtype, quant=quant, variable=bool(t.IsVariable()))
        try:
            check_tensor(tensor, quant=False)
        except OpError as exc:
            raise UtvmError(f"{self.path}: {exc}") from None
        raw = self._buffer(t.Buffer())
        if raw is not None:
            width = np.dtype(_NP_TYPES[dtype]).itemsize
            if len(raw) != tensor.nbytes:
                raise UtvmError(f"{self.path}: constant '{raw_name[:80]}' holds {len(raw) // width} values, its shape "
                                f"{short_list(shape)} needs {tensor.size}")
            tensor.data = np.frombuffer(raw, dtype=_NP_TYPES[dtype]).reshape(shape).copy()
        self.tensors[name] = tensor
        self.index_to_name[index] = name
        return name

    # -- operators -------------------------------------------------------------------------
    def _opcode_name(self, op: Any) -> str:
        if not 0 <= op.OpcodeIndex() < self.model.OperatorCodesLength():
            raise UtvmError(f"{self.path}: operator code index {op.OpcodeIndex()} (the model has "
                            f"{self.model.OperatorCodesLength()} operator codes)")
        oc = self.model.OperatorCodes(op.OpcodeIndex())
        code = max(oc.BuiltinCode(), oc.DeprecatedBuiltinCode())
        name = self.names.get(code, f"BUILTIN_{code}")
        if name == "CUSTOM":
            custom = oc.CustomCode()
            name = f"CUSTOM:{custom.decode() if custom else '?'}"
        return name

    def run(self) -> Graph:
        converters = tflite_ops()
        sg = self.sg
        ops_raw = [sg.Operators(i) for i in range(sg.OperatorsLength())]
        kinds = [self._opcode_name(op) for op in ops_raw]
        unsupported = Counter(k for k in kinds if k not in converters)
        if unsupported:
            raise UtvmError(f"{self.path}: unsupported operators: {count_list(unsupported)} (see `utvm ops`)")
        inputs = [self._tensor(int(i)) for i in sg.InputsAsNumpy()]
        for i, (op, kind) in enumerate(zip(ops_raw, kinds)):
            ins = [self._tensor(int(j)) if j >= 0 else "" for j in op.InputsAsNumpy()]
            outs = [self._tensor(int(j)) for j in op.OutputsAsNumpy()]
            converters[kind].convert(self, TfliteNode(kind, i, op, ins, outs))
        outputs = [self._tensor(int(i)) for i in sg.OutputsAsNumpy()]
        if not inputs or not outputs:
            raise UtvmError(f"{self.path}: the model has no inputs or no outputs")
        for op in self.ops:
            handle = next((n for n in [*op.inputs, *op.outputs] if n in self.resources), None)
            if handle is not None:
                raise UtvmError(f"{self.path}: {op.source}: tensor '{handle[:80]}' of type RESOURCE is not supported here")
        if any(n in self.resources for n in [*inputs, *outputs]):
            raise UtvmError(f"{self.path}: a model input or output of type RESOURCE is not supported")
        name = Path(self.path).stem
        graph = Graph(name=name, tensors=self.tensors, ops=self.ops, inputs=inputs, outputs=outputs)
        tflm_quantization(graph)
        _own_output_buffers(graph)
        return graph

    # -- for the operators' import rules (utvm.ops) ------------------------------------------
    def subgraph(self, index: int, node: TfliteNode) -> list[TfliteNode]:
        """The operators of subgraph ``index`` (an init subgraph a CALL_ONCE names), their
        tensors added to the graph's under names of their own (``<name>@<index>``); what they do
        is the rule's to decide (nothing of them is emitted)."""
        if not 0 < index < self.model.SubgraphsLength():
            raise self.fail(node, f"subgraph {index} does not exist (the model has {self.model.SubgraphsLength()})")
        saved = self.sg, self.index_to_name, self.suffix
        self.sg, self.index_to_name, self.suffix = self.model.Subgraphs(index), {}, f"@{index}"
        try:
            nodes = []
            for i in range(self.sg.OperatorsLength()):
                raw = self.sg.Operators(i)
                ins = [self._tensor(int(j)) if j >= 0 else "" for j in raw.InputsAsNumpy()]
                outs = [self._tensor(int(j)) for j in raw.OutputsAsNumpy()]
                nodes.append(TfliteNode(self._opcode_name(raw), i, raw, ins, outs, self.suffix))
            return nodes
        finally:
            self.sg, self.index_to_name, self.suffix = saved

    def options(self, node: TfliteNode, cls_name: str) -> Any:
        """The operator's builtin options table as ``tflite.<cls_name>`` (defaults when absent)."""
        table = node.raw.BuiltinOptions()
        opts = getattr(self.tfl, cls_name)()
        if table is not None:
            opts.Init(table.Bytes, table.Pos)
        return opts

    def activation(self, code: int, node: TfliteNode) -> str:
        act = _ACTIVATIONS.get(code)
        if act is None:
            raise self.fail(node, f"unsupported fused activation {code}")
        return act

    def fail(self, node: TfliteNode, msg: str) -> UtvmError:
        return UtvmError(f"{self.path}: {node.label}: {msg}")

    def emit(self, node: TfliteNode, kind: str, inputs: list[str], outputs: list[str],
             attrs: dict[str, Any] | None = None) -> Operator:
        op = Operator(kind, inputs, outputs, attrs or {}, source=node.source)
        self.ops.append(op)
        return op


@dataclass
class TfliteNode:
    """One operator of the flatbuffer, as the import rules see it."""

    kind: str             # builtin name, e.g. CONV_2D
    index: int            # position in the subgraph
    raw: Any              # tflite.Operator
    inputs: list[str]     # tensor names ("" for an omitted optional input)
    outputs: list[str]
    subgraph: str = ""    # "@<index>" for an operator of another subgraph than the main one

    @property
    def label(self) -> str:
        return f"{self.kind} #{self.index}{self.subgraph}"

    @property
    def source(self) -> str:
        return f"{self.kind}#{self.index}{self.subgraph}"


def count_list(counts: Counter[str], limit: int = 12) -> str:
    """``A (x2), B, ...``: names with their counts, at most ``limit`` of them."""
    items = [f"{k} (x{n})" if n > 1 else k for k, n in sorted(counts.items())]
    more = f" and {len(items) - limit} more" if len(items) > limit else ""
    return ", ".join(items[:limit]) + more


def _weights(kind: str) -> Weights | None:
    """The filter and bias inputs of a MAC layer (``OpDef.weights``), None for other operators."""
    opdef = get(kind)
    return opdef.weights if opdef is not None else None


def _is_filter(reader: tuple[str, int]) -> bool:
    """(operator, input position) is a filter, whose scales TFLite Micro reads per output channel
    (its kernels check that the quantized dimension has that many channels: limits.check_tensor)."""
    w = _weights(reader[0])
    return w is not None and reader[1] == w.filter


def _is_bias(reader: tuple[str, int]) -> bool:
    """(operator, input position) is a MAC layer's bias, whose quantization no kernel reads."""
    w = _weights(reader[0])
    return w is not None and reader[1] == w.bias


def _ignores_filter_zero_points(t: Tensor, readers: set[tuple[str, int]]) -> bool:
    """Every reader of ``t`` is a filter input that ignores its zero points: that of a
    convolution, or of a FULLY_CONNECTED when ``t`` has several scales (FullyConnectedPerChannel
    takes no weights offset; the per-tensor FullyConnected does): ``Weights.offset``."""
    per_channel = t.quant is not None and t.quant.scale.size > 1
    return bool(readers) and all(
        _is_filter(r) and (w := _weights(r[0])) is not None
        and (w.offset == "never" or (w.offset == "per_tensor" and per_channel)) for r in readers)


def tflm_quantization(graph: Graph) -> None:
    """Quantization parameters as TFLite Micro reads them. A filter's scales are per output
    channel (their quantized dimension is checked against the shape, as TFLite Micro does, by
    utvm.importer.limits.check_tensor). Every other tensor is read per tensor, by
    ``TfLiteTensor.params``, the first scale and zero point: several of them (a bias's, which no
    kernel reads, or an activation's) become that first pair, whatever their quantized_dimension
    says (issue 23: 1-D biases with quantized_dimension 3)."""
    keep: set[str] = set()
    readers: dict[str, set[tuple[str, int]]] = {}
    for op in graph.ops:
        keep.update(name for k, name in enumerate(op.inputs) if _is_filter((op.kind, k)))
        opdef = get(op.kind)
        if opdef is not None and opdef.per_channel_tensors:
            keep.update(n for n in (*op.inputs, *op.outputs) if n)
        for k, name in enumerate(op.inputs):
            readers.setdefault(name, set()).add((op.kind, k))
    for name, t in graph.tensors.items():
        if t.quant is not None and t.quant.zero_point.size not in (0, 1, t.quant.scale.size):
            # TFLite Micro's allocator: zero points of another count than the scales are the first one
            t.quant.zero_point = np.full(t.quant.scale.size, t.quant.zero_point.reshape(-1)[0])
        if t.quant is not None and _ignores_filter_zero_points(t, readers.get(name, set())):
            t.quant.zero_point = np.zeros_like(t.quant.zero_point)
        if t.quant is not None and t.dtype in ("int32", "int64") and readers.get(name) and all(_is_bias(r) for r in readers[name]):
            t.quant = None  # a bias: its parameters are never read (any values, e.g. scale 0, are valid)
        q = t.quant
        if q is not None and q.per_channel and name not in keep:
            q.scale, q.zero_point, q.axis = q.scale[:1].copy(), q.zero_point[:1].copy(), 0
        if q is not None and (not q.zero_point.size or abs(int(q.zero_point.astype(np.int64).max(initial=0))) < 2**31
                              and int(q.zero_point.min(initial=0)) >= -(2**31)):
            q.zero_point = q.zero_point.astype(np.int32)  # else left for check_tensor to refuse


def is_alias(op: Operator) -> bool:
    """The operator only renames its input's bytes (``OpDef.alias``, a reshape)."""
    opdef = get(op.kind)
    return opdef is not None and opdef.alias


def _own_output_buffers(graph: Graph) -> None:
    """Give every model output bytes of its own. A RESHAPE only renames its input's bytes, so
    an output that is (a reshape of) a model input, a constant or an earlier output would
    share them; such an output is computed by a copy instead (an identity transpose) and the
    tensor it was becomes an internal one."""
    alias = {op.outputs[0]: op.inputs[0] for op in graph.ops if is_alias(op)}

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
        graph.ops.append(permute(src, dst, tuple(range(len(t.shape))), f"output:{out}"))

#: the heading of this module's rows in docs/VALIDATION.md
VALIDATION_TITLE = "TFLite flatbuffer (importer/tflite_import.py)"
#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("load_tflite", "file without the TFL3 identifier",
               "the flatbuffer verifier refuses it [micro_interpreter.cc]",
               "refused-by-TFLM", "kept"),
    Validation("load_tflite", "corrupt or truncated flatbuffer",
               "`VerifyModelBuffer` fails [micro_interpreter.cc]",
               "refused-by-TFLM", "kept"),
    Validation("__init__", "model without a subgraph",
               '`MicroPrintf("Only 1 subgraph is currently supported.")`-style refusal of an empty list [micro_allocator.cc]',
               "refused-by-TFLM", "kept"),
    Validation("_buffer", "buffer index outside the buffer list",
               "the flatbuffer verifier / allocator refuses it [micro_allocator.cc]",
               "refused-by-TFLM", "kept"),
    Validation("_buffer", "buffer data beyond the end of the file",
               "out-of-file offsets fail verification [micro_allocator.cc]",
               "refused-by-TFLM", "kept"),
    Validation("_tensor", "tensor index outside the subgraph",
               "the allocator refuses an index beyond the tensors [micro_allocator.cc]",
               "refused-by-TFLM", "kept"),
    Validation("_tensor", "tensor type utvm has no kernels for (float16, uint8, int4, string, complex, ...)",
               "TFLM runs some (uint8 DEQUANTIZE, int4 filters) [k/conv.cc:182]",
               "would-compute-differently", "kept: no utvm kernel (a feature gap)"),
    Validation("_tensor", "(prefix) a tensor's shape/size check failed",
               "— (rewraps limits.check_tensor above)",
               "not-a-model-check", "kept"),
    Validation("_tensor", "constant's data size differs from its shape's",
               "the kernels read shape x width bytes (past the buffer) [micro_allocator.cc]",
               "would-compute-differently", "kept"),
    Validation("_opcode_name", "operator code index outside the list",
               '`MicroPrintf("Failed to get registration from op code %s")` [micro_allocator.cc]',
               "refused-by-TFLM", "kept"),
    Validation("run", "operators utvm does not support",
               "— (a feature gap: TFLM runs what its op resolver registers)",
               "not-a-model-check", "kept"),
    Validation("run", "model without inputs or outputs",
               "nothing to run; `MicroPrintf` on missing inputs/outputs in the interpreter [micro_interpreter.cc]",
               "refused-by-TFLM", "kept"),
    Validation("run", "a RESOURCE tensor used by an operator other than the resource-variable ones",
               "TFLM passes the resource id (an int32) to the operator [k/var_handle.cc:70]",
               "would-compute-differently", "kept: utvm resolves the handles at import and gives them no storage (a feature gap)"),
    Validation("run", "a model input or output of type RESOURCE",
               "TFLM exposes the resource id tensor [k/var_handle.cc:70]",
               "would-compute-differently", "kept: handles have no storage in utvm (a feature gap)"),
    Validation("fail", "(helper) an import rule's refusal (`ctx.fail`: the rules of each operator module)",
               "— (the sites that use it are listed in *Import rules* below)",
               "not-a-model-check", "kept"),
)
