"""What the elementwise operators of one operand share: their import rules, their type checks and
their two kinds of kernel.

- int8 operators: every one of them maps each of the 256 input values to one output value, so
  the kernel is a table lookup ``y[i] = table[x[i] + 128]``. The table is computed on the host,
  in numpy, by the same integer (or float) arithmetic TFLite Micro's reference kernel does for
  that value (each operator module has that arithmetic as an ``np_`` function), so the lookup
  is bit-exact with the reference for every input.
- int16 and float32 operators: an expression of the element, computed in the kernel.

Both read element i before writing element i: the operators may compute in place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from tvm import te

from ..ir import Graph, Operator, Tensor
from ..kernels.fixedpoint import Expr
from ..kernels.kerneldef import KernelArg, KernelDef
from .base import OpError, Validation
from .common import io

#: every int8 value, in table order
INT8_VALUES = np.arange(-128, 128, dtype=np.int64)


def tflite_rule(kind: str, options: str | None = None,
                fields: Sequence[tuple[str, str]] = ()) -> Callable[[Any, Any], None]:
    """The import rule of a TFLite unary builtin: its first input, and ``fields`` (attribute,
    getter of the ``options`` table) as attributes."""

    def convert(ctx: Any, node: Any) -> None:
        attrs: dict[str, Any] = {}
        if options is not None:
            o = ctx.options(node, options)
            attrs = {attr: float(getattr(o, getter)()) for attr, getter in fields}
        if not node.inputs or not node.inputs[0]:
            raise ctx.fail(node, "expects an input")
        ctx.emit(node, kind, node.inputs[:1], node.outputs, attrs)

    return convert


def onnx_rule(kind: str, defaults: dict[str, float] | None = None) -> Callable[[Any, Any], None]:
    """The import rule of an ONNX unary operator: computed in whichever layout the input is held
    in, with the float attributes of ``defaults`` (name -> ONNX default)."""

    def convert(imp: Any, node: Any) -> None:
        given = imp.attrs(node)
        attrs = {k: float(given.get(k, v)) for k, v in (defaults or {}).items()}
        x, layout = imp.any_layout(node.input[0])
        imp.emit(kind, [x], node.output[0], layout, attrs)

    return convert


def check_unary(g: Graph, op: Operator, types: Sequence[str], int16_zero_point: bool = True) -> str:
    """One input and one output of the same shape and type (one of ``types``); quantized ones
    per tensor, int16 ones with zero point 0 (unless ``int16_zero_point`` is False). Returns the
    type."""
    x, y = io(g, op)
    if x.dtype not in types or y.dtype != x.dtype:
        raise OpError(f"{op.source}: unsupported data types {x.dtype} -> {y.dtype}")
    if x.size != y.size:
        raise OpError(f"{op.source}: input shape {list(x.shape)} and output shape {list(y.shape)} differ")
    if x.dtype in ("int8", "int16"):
        check_quant(op, x, y, zero_point=int16_zero_point and x.dtype == "int16")
    return x.dtype


def check_float(g: Graph, op: Operator) -> None:
    """check_unary for float32-only operators."""
    check_unary(g, op, ("float32",))


def check_quant(op: Operator, *tensors: Tensor, zero_point: bool = False) -> None:
    """The tensors are quantized per tensor (with zero point 0 when ``zero_point``)."""
    for t in tensors:
        if t.quant is None:
            raise OpError(f"{op.source}: {t.dtype} tensor '{t.name}' without quantization parameters")
        if t.quant.per_channel:
            raise OpError(f"{op.source}: per-channel quantization of '{t.name}' is not supported here")
        if zero_point and t.quant.scalar()[1] != 0:
            raise OpError(f"{op.source}: {t.dtype} tensor '{t.name}' with zero point "
                          f"{t.quant.scalar()[1]} (must be 0)")


def scales(g: Graph, op: Operator) -> tuple[float, int, float, int]:
    """(input scale, input zero point, output scale, output zero point), the scales as the
    float32 values the model stores."""
    x, y = io(g, op)
    assert x.quant and y.quant
    (sx, zx), (sy, zy) = x.quant.scalar(), y.quant.scalar()
    return float(np.float32(sx)), int(zx), float(np.float32(sy)), int(zy)


def table_kernel(g: Graph, op: Operator, table: np.ndarray) -> KernelDef:
    """The kernel of an int8 operator: ``table`` (256 values, for inputs -128..127) looked up."""
    x, y = io(g, op)
    X = te.placeholder((x.size,), "int8", name="x")
    T = te.placeholder((256,), y.dtype, name="table")
    data = np.asarray(table).astype(y.dtype)
    out = te.compute((x.size,), lambda i: T[X[i].astype("int32") + 128], name="out")
    return KernelDef([KernelArg(X, tensor=x.name), KernelArg(T, constant=data, role="table")], out, y.name)


def expr_kernel(g: Graph, op: Operator, fn: Callable[[Expr], Expr]) -> KernelDef:
    """The kernel computing ``fn`` of every element."""
    x, y = io(g, op)
    X = te.placeholder((x.size,), x.dtype, name="x")
    return KernelDef([KernelArg(X, tensor=x.name)], te.compute((y.size,), lambda i: fn(X[i]), name="out"), y.name)


def float_table(g: Graph, op: Operator, f: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """TFLite's PopulateLookupTable<int8_t>: each int8 value dequantized in float32, ``f`` of it
    (float32 in, float32 out), divided by the output scale by multiplying with its float32
    inverse, rounded half away from zero, offset by the output zero point, saturated."""
    sx, zx, sy, zy = scales(g, op)
    with np.errstate(over="ignore", invalid="ignore"):
        dequantized = np.float32(sx) * (INT8_VALUES - zx).astype(np.float32)
        transformed = np.asarray(f(dequantized), np.float32)
        scaled = (transformed * (np.float32(1.0) / np.float32(sy))).astype(np.float64)
        rounded = np.sign(scaled) * np.floor(np.abs(scaled) + 0.5)
        quantized = np.nan_to_num(rounded + zy, nan=0.0, posinf=127.0, neginf=-128.0)
    return np.clip(quantized, -128, 127).astype(np.int8)


def saturate(v: np.ndarray, dtype: str) -> np.ndarray:
    """int64 values clamped to the range of ``dtype``, as that type."""
    info = np.iinfo(dtype)
    return np.clip(v, info.min, info.max).astype(dtype)

#: the heading of this module's rows in docs/VALIDATION.md
VALIDATION_TITLE = "Unary operators (shared checks of ops/unary.py)"
#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check_unary", "unary input/output types outside the operator's set or different",
               "`TF_LITE_ENSURE_TYPES_EQ(input, output)` and type switches [k/activations_common.cc, leaky_relu_common.cc:43, elu.cc:93, elementwise.cc]",
               "refused-by-TFLM", "kept"),
    Validation("check_unary", "unary input and output element counts differ",
               "MatchingFlatSize is a `TFLITE_DCHECK`: release builds read/write the input's count [reference ops]",
               "would-compute-differently", "kept"),
    Validation("check_quant", "int8/int16 unary tensor without quantization",
               "multipliers from params.scale 0 (QuantizeMultiplier of inf/NaN aborts) [k/leaky_relu_common.cc, elu.cc, hard_swish_common.cc]",
               "refused-by-TFLM", "kept"),
    Validation("check_quant", "per-channel unary tensor (ONNX only: TFLite tensors read per tensor keep their first scale)",
               "unreachable from TFLite",
               "refused-by-TFLM", "kept"),
    Validation("check_quant", "int16 unary tensor with a zero point",
               "`TF_LITE_ENSURE_EQ(zero_point, 0)` [k/activations_common.cc:103-104, logistic_common.cc:70-71, tanh.cc:89-90]",
               "refused-by-TFLM", "kept"),
    Validation("convert", "unary operator without an input",
               "`TF_LITE_ENSURE(input != nullptr)` [k/activations_common.cc:95, ...]",
               "refused-by-TFLM", "kept", rule=True),
)
