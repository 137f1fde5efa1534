"""Write small TFLite flatbuffer models programmatically, for tests.

``ModelBuilder`` assembles tensors, buffers and operators with the generated builder functions of
the ``tflite`` package (schema v3); the ``*_model`` helpers below build single-operator models
(int8 with per-tensor or per-channel quantization, float32) and models our importer must refuse
(an unsupported operator, a CUSTOM operator, a hybrid model, a dynamic shape, a float16 input).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import flatbuffers
import numpy as np
import numpy.typing as npt
import tflite
from tflite.ActivationFunctionType import ActivationFunctionType
from tflite.BuiltinOperator import BuiltinOperator
from tflite.BuiltinOptions import BuiltinOptions
from tflite.FullyConnectedOptionsWeightsFormat import FullyConnectedOptionsWeightsFormat
from tflite.Padding import Padding
from tflite.TensorType import TensorType

#: numpy dtype name -> TFLite TensorType
DTYPES: dict[str, int] = {
    "float32": TensorType.FLOAT32,
    "float16": TensorType.FLOAT16,
    "float64": TensorType.FLOAT64,
    "int8": TensorType.INT8,
    "uint8": TensorType.UINT8,
    "int16": TensorType.INT16,
    "int32": TensorType.INT32,
    "int64": TensorType.INT64,
    "bool": TensorType.BOOL,
    "complex64": TensorType.COMPLEX64,
}

#: operator -> name of its options table (BuiltinOptions member and tflite module), where it is
#: not the operator's name in CamelCase + "Options" (see :func:`options_table`)
OPTIONS: dict[str, str] = {
    "CONV_2D": "Conv2DOptions",
    "DEPTHWISE_CONV_2D": "DepthwiseConv2DOptions",
    "AVERAGE_POOL_2D": "Pool2DOptions",
    "MAX_POOL_2D": "Pool2DOptions",
    "L2_POOL_2D": "Pool2DOptions",
    "LSTM": "LSTMOptions",
    "UNIDIRECTIONAL_SEQUENCE_LSTM": "UnidirectionalSequenceLSTMOptions",
    "SVDF": "SVDFOptions",
    "PADV2": "PadV2Options",
    "MEAN": "ReducerOptions",
    "SUM": "ReducerOptions",
    "REDUCE_MAX": "ReducerOptions",
    "REDUCE_MIN": "ReducerOptions",
    "REDUCE_PROD": "ReducerOptions",
    "BATCH_MATMUL": "BatchMatMulOptions",
    "L2_NORMALIZATION": "L2NormOptions",
    "SPACE_TO_BATCH_ND": "SpaceToBatchNDOptions",
    "BATCH_TO_SPACE_ND": "BatchToSpaceNDOptions",
    "LOCAL_RESPONSE_NORMALIZATION": "LocalResponseNormalizationOptions",
}


def options_table(op: str) -> str | None:
    """The options table of ``op`` (e.g. STRIDED_SLICE -> StridedSliceOptions), None if it has none."""
    if op in OPTIONS:
        return OPTIONS[op]
    name = "".join(part.capitalize() for part in op.split("_")) + "Options"
    try:
        importlib.import_module(f"tflite.{name}")
    except ImportError:
        return None
    return name

#: option fields given as names of enum members
ENUMS: dict[str, Any] = {
    "padding": Padding,
    "fused_activation_function": ActivationFunctionType,
    "weights_format": FullyConnectedOptionsWeightsFormat,
    "quantized_bias_type": TensorType,
    "output_type": TensorType,
}

_BUFFER_ALIGNMENT = 16


def _camel(field: str) -> str:
    """stride_w -> StrideW (the generated builder function suffix)."""
    return "".join(part[:1].upper() + part[1:] for part in field.split("_"))


class ModelBuilder:
    """Incrementally build one-subgraph TFLite models: tensors, operators, then ``finish``."""

    def __init__(self, description: str = "utvm test model") -> None:
        self.description = description
        self._tensors: list[dict[str, Any]] = []
        self._buffers: list[bytes | None] = [None]  # buffer 0: the empty sentinel
        self._opcodes: list[tuple[int, str]] = []
        self._operators: list[dict[str, Any]] = []

    def add_tensor(
        self,
        name: str,
        shape: Sequence[int],
        dtype: str,
        data: npt.ArrayLike | None = None,
        scale: None | float | Sequence[float] = None,
        zero_point: None | int | Sequence[int] = None,
        quantized_dimension: int = 0,
        shape_signature: Sequence[int] | None = None,
        is_variable: bool = False,
    ) -> int:
        """Add a tensor (constant when ``data`` is given; ``is_variable``: state kept between
        invocations, as SVDF and LSTM states); returns its index."""
        if dtype not in DTYPES:
            raise ValueError(f"unknown dtype {dtype!r}")
        buffer = 0
        if data is not None:
            arr = np.asarray(data, dtype=np.dtype(dtype))
            if tuple(arr.shape) != tuple(shape):
                arr = arr.reshape(tuple(shape))
            self._buffers.append(arr.astype(arr.dtype.newbyteorder("<")).tobytes())
            buffer = len(self._buffers) - 1
        scales = None if scale is None else [float(s) for s in np.atleast_1d(scale)]
        zps = None
        if scales is not None:
            zp = 0 if zero_point is None else zero_point
            zps = [int(z) for z in np.atleast_1d(zp)]
            if len(zps) == 1 and len(scales) > 1:
                zps = zps * len(scales)
        self._tensors.append(
            {
                "name": name,
                "shape": [int(d) for d in shape],
                "type": DTYPES[dtype],
                "buffer": buffer,
                "scale": scales,
                "zero_point": zps,
                "qdim": quantized_dimension,
                "signature": None if shape_signature is None else list(shape_signature),
                "variable": is_variable,
            }
        )
        return len(self._tensors) - 1

    def _opcode(self, op: str) -> int:
        key = (
            (BuiltinOperator.CUSTOM, op[len("CUSTOM:") :])
            if op.startswith("CUSTOM:")
            else (getattr(BuiltinOperator, op), "")
        )
        if key not in self._opcodes:
            self._opcodes.append(key)
        return self._opcodes.index(key)

    def add_operator(
        self,
        op: str,
        inputs: Sequence[int],
        outputs: Sequence[int],
        options: dict[str, Any] | None = None,
    ) -> None:
        """Add an operator: a BuiltinOperator name ("CONV_2D") or "CUSTOM:<name>".

        ``options`` maps snake_case option fields (stride_w, padding="SAME", beta, new_shape,
        fused_activation_function="RELU", ...) of the operator's options table; for a CUSTOM
        operator, ``{"custom": b"..."}`` gives the raw custom options."""
        self._operators.append(
            {
                "opcode": self._opcode(op),
                "op": op,
                "inputs": list(inputs),
                "outputs": list(outputs),
                "options": dict(options or {}),
            }
        )

    # -- serialization ------------------------------------------------------------------------

    @staticmethod
    def _int_vector(b: flatbuffers.Builder, values: Sequence[int], dtype: str = "int32") -> int:
        return b.CreateNumpyVector(np.asarray(values, dtype=dtype))

    def _write_options(self, b: flatbuffers.Builder, op: str, options: dict[str, Any]) -> tuple[int, int]:
        table = options_table(op)
        if table is None:
            if options:
                raise ValueError(f"no options table known for {op}")
            return 0, 0
        module = importlib.import_module(f"tflite.{table}")
        vectors = {k: self._int_vector(b, v) for k, v in options.items() if isinstance(v, (list, tuple))}
        getattr(module, f"{table}Start")(b)
        for key, value in options.items():
            add = getattr(module, f"{table}Add{_camel(key)}")
            if key in vectors:
                add(b, vectors[key])
            elif isinstance(value, str):
                add(b, getattr(ENUMS[key], value))
            else:
                add(b, value)
        return getattr(BuiltinOptions, table), getattr(module, f"{table}End")(b)

    def _write_buffer(self, b: flatbuffers.Builder, data: bytes | None) -> int:
        vec = 0
        if data:
            b.StartVector(1, len(data), _BUFFER_ALIGNMENT)
            b.head = b.head - len(data)
            b.Bytes[b.head : b.head + len(data)] = data
            vec = b.EndVector()
        tflite.BufferStart(b)
        if vec:
            tflite.BufferAddData(b, vec)
        return tflite.BufferEnd(b)

    def _write_tensor(self, b: flatbuffers.Builder, t: dict[str, Any]) -> int:
        name = b.CreateString(t["name"])
        shape = self._int_vector(b, t["shape"])
        sig = self._int_vector(b, t["signature"]) if t["signature"] is not None else 0
        quant = 0
        if t["scale"] is not None:
            scale = b.CreateNumpyVector(np.asarray(t["scale"], dtype=np.float32))
            zp = self._int_vector(b, t["zero_point"], "int64")
            tflite.QuantizationParametersStart(b)
            tflite.QuantizationParametersAddScale(b, scale)
            tflite.QuantizationParametersAddZeroPoint(b, zp)
            tflite.QuantizationParametersAddQuantizedDimension(b, t["qdim"])
            quant = tflite.QuantizationParametersEnd(b)
        tflite.TensorStart(b)
        tflite.TensorAddShape(b, shape)
        tflite.TensorAddType(b, t["type"])
        tflite.TensorAddBuffer(b, t["buffer"])
        tflite.TensorAddName(b, name)
        if quant:
            tflite.TensorAddQuantization(b, quant)
        if sig:
            tflite.TensorAddShapeSignature(b, sig)
        if t["variable"]:
            tflite.TensorAddIsVariable(b, True)
        return tflite.TensorEnd(b)

    def _write_operator(self, b: flatbuffers.Builder, o: dict[str, Any]) -> int:
        inputs = self._int_vector(b, o["inputs"])
        outputs = self._int_vector(b, o["outputs"])
        custom = 0
        options = dict(o["options"])
        if o["op"].startswith("CUSTOM:"):
            raw = options.pop("custom", b"")
            custom = b.CreateNumpyVector(np.frombuffer(raw, dtype=np.uint8)) if raw else 0
            opt_type, opt = 0, 0
        else:
            opt_type, opt = self._write_options(b, o["op"], options)
        tflite.OperatorStart(b)
        tflite.OperatorAddOpcodeIndex(b, o["opcode"])
        tflite.OperatorAddInputs(b, inputs)
        tflite.OperatorAddOutputs(b, outputs)
        if opt:
            tflite.OperatorAddBuiltinOptionsType(b, opt_type)
            tflite.OperatorAddBuiltinOptions(b, opt)
        if custom:
            tflite.OperatorAddCustomOptions(b, custom)
        return tflite.OperatorEnd(b)

    def _write_opcode(self, b: flatbuffers.Builder, code: int, custom: str) -> int:
        name = b.CreateString(custom) if custom else 0
        tflite.OperatorCodeStart(b)
        tflite.OperatorCodeAddDeprecatedBuiltinCode(b, min(code, 127))
        tflite.OperatorCodeAddBuiltinCode(b, code)
        tflite.OperatorCodeAddVersion(b, 1)
        if name:
            tflite.OperatorCodeAddCustomCode(b, name)
        return tflite.OperatorCodeEnd(b)

    @staticmethod
    def _table_vector(b: flatbuffers.Builder, offsets: Sequence[int]) -> int:
        b.StartVector(4, len(offsets), 4)
        for off in reversed(offsets):
            b.PrependUOffsetTRelative(off)
        return b.EndVector()

    def finish(self, inputs: Sequence[int], outputs: Sequence[int]) -> bytes:
        """Serialize the model with the given subgraph inputs and outputs; returns the bytes."""
        b = flatbuffers.Builder(1024)
        buffers = [self._write_buffer(b, d) for d in self._buffers]
        tensors = [self._write_tensor(b, t) for t in self._tensors]
        operators = [self._write_operator(b, o) for o in self._operators]
        opcodes = [self._write_opcode(b, c, n) for c, n in self._opcodes]
        sg_name = b.CreateString("main")
        t_vec = self._table_vector(b, tensors)
        o_vec = self._table_vector(b, operators)
        in_vec = self._int_vector(b, inputs)
        out_vec = self._int_vector(b, outputs)
        tflite.SubGraphStart(b)
        tflite.SubGraphAddTensors(b, t_vec)
        tflite.SubGraphAddInputs(b, in_vec)
        tflite.SubGraphAddOutputs(b, out_vec)
        tflite.SubGraphAddOperators(b, o_vec)
        tflite.SubGraphAddName(b, sg_name)
        subgraph = tflite.SubGraphEnd(b)
        desc = b.CreateString(self.description)
        sg_vec = self._table_vector(b, [subgraph])
        oc_vec = self._table_vector(b, opcodes)
        buf_vec = self._table_vector(b, buffers)
        tflite.ModelStart(b)
        tflite.ModelAddVersion(b, 3)
        tflite.ModelAddOperatorCodes(b, oc_vec)
        tflite.ModelAddSubgraphs(b, sg_vec)
        tflite.ModelAddDescription(b, desc)
        tflite.ModelAddBuffers(b, buf_vec)
        b.Finish(tflite.ModelEnd(b), file_identifier=b"TFL3")
        return bytes(b.Output())


# ---------------------------------------------------------------------------------------------
# single-operator models
# ---------------------------------------------------------------------------------------------


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def softmax_model(
    shape: Sequence[int],
    dtype: str = "int8",
    input_scale: float = 0.1,
    input_zero_point: int = 0,
    beta: float = 1.0,
) -> bytes:
    """SOFTMAX over the last axis; int8 output quantized as TFLite requires (1/256, -128)."""
    m = ModelBuilder("softmax")
    if dtype == "int8":
        x = m.add_tensor("input", shape, "int8", scale=input_scale, zero_point=input_zero_point)
        y = m.add_tensor("output", shape, "int8", scale=1.0 / 256.0, zero_point=-128)
    else:
        x = m.add_tensor("input", shape, dtype)
        y = m.add_tensor("output", shape, dtype)
    m.add_operator("SOFTMAX", [x], [y], {"beta": beta})
    return m.finish([x], [y])


def fully_connected_model(
    batch: int,
    in_features: int,
    out_features: int,
    dtype: str = "int8",
    per_channel: bool = False,
    input_scale: float = 0.05,
    input_zero_point: int = 3,
    output_scale: float = 0.2,
    output_zero_point: int = -5,
    activation: str = "NONE",
    seed: int = 0,
) -> bytes:
    """FULLY_CONNECTED [batch, in] x [out, in]^T + bias, random weights."""
    rng = _rng(seed)
    m = ModelBuilder("fully_connected")
    if dtype == "int8":
        w_scale = rng.uniform(0.002, 0.02, out_features if per_channel else 1)
        w = rng.integers(-127, 128, (out_features, in_features))
        bias_scale = input_scale * w_scale.astype(np.float32).astype(np.float64)
        x = m.add_tensor("input", [batch, in_features], "int8", scale=input_scale, zero_point=input_zero_point)
        wt = m.add_tensor("weights", [out_features, in_features], "int8", data=w, scale=w_scale, zero_point=0)
        bt = m.add_tensor(
            "bias",
            [out_features],
            "int32",
            data=rng.integers(-2000, 2000, out_features),
            scale=bias_scale,
            zero_point=0,
        )
        y = m.add_tensor(
            "output",
            [batch, out_features],
            "int8",
            scale=output_scale,
            zero_point=output_zero_point,
        )
    else:
        x = m.add_tensor("input", [batch, in_features], "float32")
        wt = m.add_tensor(
            "weights",
            [out_features, in_features],
            "float32",
            data=rng.normal(0, 0.3, (out_features, in_features)),
        )
        bt = m.add_tensor("bias", [out_features], "float32", data=rng.normal(0, 0.1, out_features))
        y = m.add_tensor("output", [batch, out_features], "float32")
    m.add_operator("FULLY_CONNECTED", [x, wt, bt], [y], {"fused_activation_function": activation})
    return m.finish([x], [y])


def conv2d_model(
    input_shape: Sequence[int] = (1, 8, 8, 3),
    out_channels: int = 4,
    kernel: tuple[int, int] = (3, 3),
    stride: tuple[int, int] = (1, 1),
    padding: str = "SAME",
    depthwise: bool = False,
    depth_multiplier: int = 1,
    dtype: str = "int8",
    per_channel: bool = True,
    activation: str = "NONE",
    seed: int = 0,
) -> bytes:
    """CONV_2D (OHWI filter) or DEPTHWISE_CONV_2D (1HW(C*M) filter) on NHWC, random weights."""
    rng = _rng(seed)
    n, h, w, c = input_shape
    kh, kw = kernel
    oc = c * depth_multiplier if depthwise else out_channels
    fshape = [1, kh, kw, oc] if depthwise else [oc, kh, kw, c]
    if padding == "SAME":
        oh, ow = -(-h // stride[0]), -(-w // stride[1])
    else:
        oh, ow = (h - kh) // stride[0] + 1, (w - kw) // stride[1] + 1
    m = ModelBuilder("depthwise_conv_2d" if depthwise else "conv_2d")
    if dtype == "int8":
        in_scale, out_scale = 0.05, 0.1
        w_scale = rng.uniform(0.002, 0.02, oc if per_channel else 1)
        x = m.add_tensor("input", input_shape, "int8", scale=in_scale, zero_point=-7)
        wt = m.add_tensor(
            "filter",
            fshape,
            "int8",
            data=rng.integers(-127, 128, fshape),
            scale=w_scale,
            zero_point=0,
            quantized_dimension=3 if depthwise else 0,
        )
        bt = m.add_tensor(
            "bias",
            [oc],
            "int32",
            data=rng.integers(-500, 500, oc),
            scale=in_scale * w_scale.astype(np.float32).astype(np.float64),
            zero_point=0,
        )
        y = m.add_tensor("output", [n, oh, ow, oc], "int8", scale=out_scale, zero_point=4)
    else:
        x = m.add_tensor("input", input_shape, "float32")
        wt = m.add_tensor("filter", fshape, "float32", data=rng.normal(0, 0.3, fshape))
        bt = m.add_tensor("bias", [oc], "float32", data=rng.normal(0, 0.1, oc))
        y = m.add_tensor("output", [n, oh, ow, oc], "float32")
    opts: dict[str, Any] = {
        "padding": padding,
        "stride_w": stride[1],
        "stride_h": stride[0],
        "fused_activation_function": activation,
        "dilation_w_factor": 1,
        "dilation_h_factor": 1,
    }
    if depthwise:
        opts["depth_multiplier"] = depth_multiplier
    m.add_operator("DEPTHWISE_CONV_2D" if depthwise else "CONV_2D", [x, wt, bt], [y], opts)
    return m.finish([x], [y])


def pool2d_model(
    op: str = "AVERAGE_POOL_2D",
    input_shape: Sequence[int] = (1, 8, 8, 4),
    pool: tuple[int, int] = (2, 2),
    stride: tuple[int, int] = (2, 2),
    padding: str = "VALID",
    dtype: str = "int8",
) -> bytes:
    """AVERAGE_POOL_2D or MAX_POOL_2D on NHWC (int8: same scale/zero point in and out)."""
    n, h, w, c = input_shape
    if padding == "SAME":
        oh, ow = -(-h // stride[0]), -(-w // stride[1])
    else:
        oh, ow = (h - pool[0]) // stride[0] + 1, (w - pool[1]) // stride[1] + 1
    m = ModelBuilder(op.lower())
    q: dict[str, Any] = {"scale": 0.07, "zero_point": -3} if dtype == "int8" else {}
    x = m.add_tensor("input", input_shape, dtype, **q)
    y = m.add_tensor("output", [n, oh, ow, c], dtype, **q)
    m.add_operator(
        op,
        [x],
        [y],
        {
            "padding": padding,
            "stride_w": stride[1],
            "stride_h": stride[0],
            "filter_width": pool[1],
            "filter_height": pool[0],
            "fused_activation_function": "NONE",
        },
    )
    return m.finish([x], [y])


def add_model(shape: Sequence[int] = (1, 4, 4, 8), dtype: str = "int8", activation: str = "NONE",
              scales: Sequence[float] = (0.05, 0.08, 0.11), zero_points: Sequence[int] = (-10, 6, -2)) -> bytes:
    """ADD of two inputs of the same shape (int8: the scales and zero points of a, b, output)."""
    m = ModelBuilder("add")
    if dtype == "int8":
        (sa, sb, sy), (za, zb, zy) = scales, zero_points
        a = m.add_tensor("a", shape, "int8", scale=sa, zero_point=za)
        b = m.add_tensor("b", shape, "int8", scale=sb, zero_point=zb)
        y = m.add_tensor("output", shape, "int8", scale=sy, zero_point=zy)
    else:
        a = m.add_tensor("a", shape, dtype)
        b = m.add_tensor("b", shape, dtype)
        y = m.add_tensor("output", shape, dtype)
    m.add_operator("ADD", [a, b], [y], {"fused_activation_function": activation})
    return m.finish([a, b], [y])


def reshape_model(
    in_shape: Sequence[int] = (1, 2, 3, 4), out_shape: Sequence[int] = (1, 24), dtype: str = "int8"
) -> bytes:
    """RESHAPE with the new shape as a constant int32 input and in the options."""
    m = ModelBuilder("reshape")
    q: dict[str, Any] = {"scale": 0.1, "zero_point": 1} if dtype == "int8" else {}
    x = m.add_tensor("input", in_shape, dtype, **q)
    s = m.add_tensor("shape", [len(out_shape)], "int32", data=list(out_shape))
    y = m.add_tensor("output", out_shape, dtype, **q)
    m.add_operator("RESHAPE", [x, s], [y], {"new_shape": list(out_shape)})
    return m.finish([x], [y])


# ---------------------------------------------------------------------------------------------
# models the importer must refuse
# ---------------------------------------------------------------------------------------------


def custom_op_model() -> bytes:
    """A CUSTOM operator ("MyCustomOp") on a float32 tensor."""
    m = ModelBuilder("custom")
    x = m.add_tensor("input", [1, 4], "float32")
    y = m.add_tensor("output", [1, 4], "float32")
    m.add_operator("CUSTOM:MyCustomOp", [x], [y], {"custom": b"\x00\x01"})
    return m.finish([x], [y])


def lstm_model(batch: int = 1, n_input: int = 3, n_cell: int = 4) -> bytes:
    """A float32 LSTM operator (24 inputs, the optional ones -1), not supported by the importer."""
    rng = _rng(1)
    m = ModelBuilder("lstm")
    x = m.add_tensor("input", [batch, n_input], "float32")

    def w(name: str, shape: list[int]) -> int:
        return m.add_tensor(name, shape, "float32", data=rng.normal(0, 0.2, shape))

    i2i, i2f, i2c, i2o = (w(f"i2{g}", [n_cell, n_input]) for g in "ifco")
    r2i, r2f, r2c, r2o = (w(f"r2{g}", [n_cell, n_cell]) for g in "ifco")
    bi, bf, bc, bo = (w(f"b{g}", [n_cell]) for g in "ifco")
    out_state = m.add_tensor("output_state", [batch, n_cell], "float32", data=np.zeros((batch, n_cell)))
    cell_state = m.add_tensor("cell_state", [batch, n_cell], "float32", data=np.zeros((batch, n_cell)))
    y = m.add_tensor("output", [batch, n_cell], "float32")
    inputs = [
        x,
        i2i,
        i2f,
        i2c,
        i2o,
        r2i,
        r2f,
        r2c,
        r2o,
        -1,
        -1,
        -1,
        bi,
        bf,
        bc,
        bo,
        -1,
        -1,
        out_state,
        cell_state,
        -1,
        -1,
        -1,
        -1,
    ]
    m.add_operator("LSTM", inputs, [y], {"fused_activation_function": "TANH", "cell_clip": 0.0, "proj_clip": 0.0})
    return m.finish([x], [y])


def hybrid_fully_connected_model(in_features: int = 8, out_features: int = 4) -> bytes:
    """Dynamic-range (hybrid) FULLY_CONNECTED: float32 input/output, int8 weights with a scale."""
    rng = _rng(2)
    m = ModelBuilder("hybrid")
    x = m.add_tensor("input", [1, in_features], "float32")
    wt = m.add_tensor(
        "weights",
        [out_features, in_features],
        "int8",
        data=rng.integers(-127, 128, (out_features, in_features)),
        scale=0.01,
        zero_point=0,
    )
    bt = m.add_tensor("bias", [out_features], "float32", data=rng.normal(0, 0.1, out_features))
    y = m.add_tensor("output", [1, out_features], "float32")
    m.add_operator("FULLY_CONNECTED", [x, wt, bt], [y], {"fused_activation_function": "NONE"})
    return m.finish([x], [y])


def dynamic_shape_model() -> bytes:
    """SOFTMAX on a float32 input whose batch dimension is dynamic (shape_signature -1)."""
    m = ModelBuilder("dynamic")
    x = m.add_tensor("input", [1, 10], "float32", shape_signature=[-1, 10])
    y = m.add_tensor("output", [1, 10], "float32", shape_signature=[-1, 10])
    m.add_operator("SOFTMAX", [x], [y], {"beta": 1.0})
    return m.finish([x], [y])


def unsupported_dtype_model(dtype: str = "float16") -> bytes:
    """ADD on two inputs of an unsupported dtype (float16 or complex64)."""
    m = ModelBuilder("unsupported_dtype")
    a = m.add_tensor("a", [1, 4], dtype)
    b = m.add_tensor("b", [1, 4], dtype)
    y = m.add_tensor("output", [1, 4], dtype)
    m.add_operator("ADD", [a, b], [y], {"fused_activation_function": "NONE"})
    return m.finish([a, b], [y])
