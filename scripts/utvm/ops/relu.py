"""RELU and RELU6 as operators of their own (most are fused into the layer before them).

Import: TFLite RELU, RELU6; ONNX Relu and Clip (0..6, 0..inf, -1..1) fold into the producing
Conv/Gemm/MatMul/Add/pool when it has no other consumer, else become relu / relu6.
Semantics: TFLite Micro's activations.cc: int8 requantized from the input to the output scale
(MultiplyByQuantizedMultiplier) and clamped to the quantized [0, inf) / [0, 6]; float32 clamp.
"""

from __future__ import annotations

import math
from typing import Any

from tvm import te

from ..ir import Graph, Operator
from ..lower import fixedpoint as fp
from ..lower.kerneldef import KernelArg, KernelDef
from ..lower.requant import I32, activation_range_int8, clamp, float_clamp
from ..lower.target import Target
from .base import OpDef, SourceOp, Variant
from .common import check_io_types, check_same_size


def from_tflite(ctx: Any, node: Any) -> None:
    ctx.emit(node, node.kind.lower(), [node.inputs[0]], node.outputs)


def _activation(imp: Any, node: Any, act: str) -> None:
    """Fold the clamp into the producer of the input when it can take it, else emit it."""
    from ..importer.onnx_import import NHWC, PLAIN
    from . import get

    x, out = node.input[0], node.output[0]
    op = imp.fusable_producer(x)
    producer = get(op.kind) if op is not None else None
    if op is not None and producer is not None and producer.fuses_activation and op.attrs.get("activation") == "none":
        layout = NHWC if NHWC in imp.vals[x] else PLAIN
        op.attrs["activation"] = act
        imp.retarget(op, out, layout)
        return
    if act not in ("relu", "relu6"):
        raise imp.fail(f"a standalone clamp to {act} is not supported (only after Conv, Gemm, MatMul, Add or pooling)")
    tensor, layout = imp.any_layout(x)
    imp.emit(act, [tensor], out, layout)


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
    act = acts.get((lo, hi))
    if act is None:
        raise imp.fail(f"Clip({lo}, {hi}) is not supported (only 0..6, 0..inf, -1..1)")
    _activation(imp, node, act)


def check(g: Graph, op: Operator) -> None:
    check_io_types(g, op)
    check_same_size(g, op)


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    X = te.placeholder((x.size,), x.dtype, name="x")
    act = "relu6" if op.kind == "relu6" else "relu"
    if x.dtype == "int8":
        assert x.quant and y.quant
        sx, zx = x.quant.scalar()
        sy, zy = y.quant.scalar()
        m, sft = fp.quantize_multiplier(float(sx) / float(sy))
        lo, hi = activation_range_int8(act, sy, zy)

        def f(i):  # type: ignore[no-untyped-def]
            v = fp.multiply_by_quantized_multiplier(X[i].astype(I32) - zx, m, sft) + zy
            return clamp(v, lo, hi).astype("int8")
        out = te.compute((x.size,), f, name="out")
    else:
        out = te.compute((x.size,), lambda i: float_clamp(X[i], act), name="out")
    return KernelDef([KernelArg(X, tensor=x.name)], out, y.name)


OPS = (
    OpDef(
        kind="relu",
        summary="max(x, 0)",
        tflite=(SourceOp("RELU", from_tflite),),
        onnx=(SourceOp("Relu", from_onnx_relu, ("float32",)),
              SourceOp("Clip", from_onnx_clip, ("float32",), "min/max 0..6, 0..inf or -1..1")),
        variants=(Variant("generic", _generic),),
        check=check,
        reference="TFLite Micro activations.cc: ReluQuantized (int8), Relu (float32)",
    ),
    OpDef(
        kind="relu6",
        summary="min(max(x, 0), 6)",
        tflite=(SourceOp("RELU6", from_tflite),),
        variants=(Variant("generic", _generic),),
        check=check,
        reference="TFLite Micro activations.cc: Relu6Quantized (int8), Relu6 (float32)",
    ),
)
