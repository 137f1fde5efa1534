"""Make broken variants of a real .tflite model by patching fields of its flatbuffer in place."""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

import tflite


def _model(data: bytes) -> tflite.Model:
    return tflite.Model.GetRootAsModel(data, 0)


def _field_pos(table: object, vtable_offset: int) -> int:
    tab = table._tab  # type: ignore[attr-defined]
    off = tab.Offset(vtable_offset)
    if not off:
        raise ValueError("field not present in this model")
    return tab.Pos + off


def set_operator_code(data: bytes, op_code_index: int, builtin: int) -> bytes:
    """Turn operator code ``op_code_index`` into another builtin operator."""
    buf = bytearray(data)
    oc = _model(data).OperatorCodes(op_code_index)
    try:
        buf[_field_pos(oc, 4)] = min(builtin, 127)  # deprecated_builtin_code (int8)
    except ValueError:
        pass
    try:
        struct.pack_into("<i", buf, _field_pos(oc, 10), builtin)  # builtin_code (int32)
    except ValueError:
        pass
    return bytes(buf)


def set_tensor_type(data: bytes, tensor_index: int, tensor_type: int) -> bytes:
    buf = bytearray(data)
    t = _model(data).Subgraphs(0).Tensors(tensor_index)
    buf[_field_pos(t, 6)] = tensor_type
    return bytes(buf)


def set_shape_signature(data: bytes, tensor_index: int, dim: int, value: int) -> bytes:
    buf = bytearray(data)
    t = _model(data).Subgraphs(0).Tensors(tensor_index)
    tab = t._tab
    vec = tab.Vector(tab.Offset(18))
    struct.pack_into("<i", buf, vec + 4 * dim, value)
    return bytes(buf)


def input_tensor_index(data: bytes) -> int:
    return int(_model(data).Subgraphs(0).Inputs(0))


def edit_model(data: bytes, edit: Callable[[Any], None]) -> bytes:
    """``data`` unpacked into TFLite's object API (the schema tflite-micro ships), changed by
    ``edit(model)`` and packed again: for fields a model omits (defaults are not stored)."""
    import flatbuffers
    from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as schema

    model = schema.ModelT.InitFromPackedBuf(data, 0)
    edit(model)
    builder = flatbuffers.Builder(len(data) + 1024)
    builder.Finish(model.Pack(builder), b"TFL3")
    return bytes(builder.Output())
