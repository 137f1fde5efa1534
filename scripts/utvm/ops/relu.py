"""RELU and RELU6 as operators of their own (most are fused into the layer before them).

Import: TFLite RELU, RELU6; ONNX Relu and Clip (0..6, 0..inf, -1..1) fold into the producing
Conv/Gemm/MatMul/Add/pool when it has no other consumer, else become relu / relu6.
Semantics: TFLite Micro's activations.cc: int8 and int16 requantized from the input to the output
scale (MultiplyByQuantizedMultiplier) and clamped to the quantized [0, inf) / [0, 6]; float32 clamp.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from tvm import te, tirx

from ..ir import NHWC, PLAIN, Graph, Operator
from ..kernels import fixedpoint as fp
from ..kernels.kerneldef import KernelArg, KernelDef
from ..kernels.requant import I32, clamp, float_clamp
from ..kernels.target import Target
from . import get
from .base import OpDef, SourceOp, Variant
from .common import check_io_types, check_same_size
from .elementwise import activation_range, qrange
from .unary import expr_kernel


def from_tflite(ctx: Any, node: Any) -> None:
    # TFLite Micro's quantized RELU6 clamps the input's own values to its zero point and 6.0 on
    # its own scale: the output's quantization is not looked at
    attrs = {"input_scale": True} if node.kind == "RELU6" else {}
    ctx.emit(node, node.kind.lower(), [node.inputs[0]], node.outputs, attrs)


def _activation(imp: Any, node: Any, act: str, bounds: tuple[float, float] | None = None) -> None:
    """Fold the clamp ``act`` into the producer of the input when it can take it, else emit it
    (a clamp to other ``bounds``, or relu_n1_to_1 standalone, as the float32 clip)."""
    x, out = node.input[0], node.output[0]
    op = imp.fusable_producer(x)
    producer = get(op.kind) if op is not None else None
    if (act and op is not None and producer is not None and producer.fuses_activation
            and op.attrs.get("activation") == "none"):
        layout = NHWC if NHWC in imp.vals[x] else PLAIN
        op.attrs["activation"] = act
        imp.retarget(op, out, layout)
        return
    tensor, layout = imp.any_layout(x)
    if act in ("relu", "relu6"):
        imp.emit(act, [tensor], out, layout)
    else:
        assert bounds is not None
        imp.emit("clip", [tensor], out, layout, {"min": bounds[0], "max": bounds[1]})


def from_onnx_relu(imp: Any, node: Any) -> None:
    _activation(imp, node, "relu")


def from_onnx_clip(imp: Any, node: Any) -> None:
    attrs = imp.attrs(node)
    lo, hi = float(attrs.get("min", -math.inf)), float(attrs.get("max", math.inf))
    if len(node.input) > 1 and node.input[1]:
        lo = float(imp.const(node.input[1], "min").reshape(-1)[0])
    if len(node.input) > 2 and node.input[2]:
        hi = float(imp.const(node.input[2], "max").reshape(-1)[0])
    acts = {(0.0, 6.0): "relu6", (0.0, math.inf): "relu", (-1.0, 1.0): "relu_n1_to_1"}
    _activation(imp, node, acts.get((lo, hi), ""), (lo, hi))


def check_clip(g: Graph, op: Operator) -> None:
    check_io_types(g, op, ("float32",))


def _clip(g: Graph, op: Operator, target: Target) -> KernelDef:
    lo, hi = (float(np.float32(op.attrs[k])) for k in ("min", "max"))

    def f(v):  # type: ignore[no-untyped-def]
        if lo != -math.inf:
            v = te.max(v, tirx.const(lo, "float32"))
        return v if hi == math.inf else te.min(v, tirx.const(hi, "float32"))
    return expr_kernel(g, op, f)


def check(g: Graph, op: Operator) -> None:
    check_io_types(g, op, ("int8", "int16", "float32"))
    check_same_size(g, op)


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    X = te.placeholder((x.size,), x.dtype, name="x")
    act = "relu6" if op.kind == "relu6" else "relu"
    if x.dtype in ("int8", "int16"):
        assert x.quant and y.quant
        sx, zx = x.quant.scalar()
        sy, zy = y.quant.scalar()
        m, sft = fp.quantize_multiplier(float(sx) / float(sy))
        lo, hi = activation_range(act, y)
        if op.attrs.get("input_scale"):
            qlo, qhi = qrange(x.dtype)
            lo = max(qlo, zx)
            hi = min(qhi, int(fp.tflite_round(float(np.float32(6.0) / np.float32(sx)))) + zx)
            out = te.compute((x.size,), lambda i: clamp(X[i].astype(I32), lo, hi).astype(x.dtype), name="out")
            return KernelDef([KernelArg(X, tensor=x.name)], out, y.name)

        def f(i):  # type: ignore[no-untyped-def]
            v = fp.multiply_by_quantized_multiplier(X[i].astype(I32) - zx, m, sft) + zy
            return clamp(v, lo, hi).astype(x.dtype)
        out = te.compute((x.size,), f, name="out")
    else:
        out = te.compute((x.size,), lambda i: float_clamp(X[i], act), name="out")
    return KernelDef([KernelArg(X, tensor=x.name)], out, y.name)


OPS = (
    OpDef(
        kind="relu",
        summary="max(x, 0)",
        tflite=(SourceOp("RELU", from_tflite, ("int8", "int16", "float32")),),
        onnx=(SourceOp("Relu", from_onnx_relu, ("float32",), qdq="passthrough"),
              SourceOp("Clip", from_onnx_clip, ("float32",),
                       "constant min/max; 0..6, 0..inf, -1..1 fold into the layer before")),
        variants=(Variant("generic", _generic),),
        check=check,
        reference="TFLite Micro activations.cc: ReluQuantized (int8, int16), Relu (float32)",
        inplace=True,
    ),
    OpDef(
        kind="relu6",
        summary="min(max(x, 0), 6)",
        tflite=(SourceOp("RELU6", from_tflite, ("int8", "int16", "float32")),),
        variants=(Variant("generic", _generic),),
        check=check,
        reference="TFLite Micro activations.cc: Relu6Quantized (int8, int16: the input clamped on its own scale), Relu6 (float32)",
        inplace=True,
    ),
    OpDef(
        kind="clip",
        summary="min(max(x, min), max) (ONNX Clip that is no fused activation)",
        variants=(Variant("generic", _clip, types=("float32",)),),
        check=check_clip,
        reference="ONNX Clip (onnxruntime), float32",
        inplace=True,
    ),
)
