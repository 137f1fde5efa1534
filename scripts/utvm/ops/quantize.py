"""QUANTIZE: float32 -> int8 or int16, or requantization between int8, int16 and int32.

Import: TFLite QUANTIZE; ONNX QuantizeLinear.
Semantics: TFLite Micro's quantize.cc: float -> int8/int16 is round(x / scale) + zero point
(float32 division, rounded half away from zero) saturated; between int8, int16 and int32 it is
reference_ops::Requantize: MultiplyByQuantizedMultiplier(x - zx) by input_scale / output_scale
(in double) + zy, saturated to the output type.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tvm import te, tirx

from ..ir import Graph, Operator
from ..kernels import fixedpoint as fp
from ..kernels.kerneldef import KernelArg, KernelDef
from ..kernels.requant import I32, clamp, imm
from ..kernels.target import Target
from .base import OpDef, OpError, SourceOp, Validation, Variant
from .common import check_same_size
from .elementwise import qrange

INTEGERS = ("int8", "int16", "int32")
#: (input, output) types TFLite Micro quantizes
PAIRS = {("float32", "int8"), ("float32", "int16")} | {(a, b) for a in INTEGERS for b in INTEGERS if (a, b) != ("int32", "int32")}


def from_tflite(ctx: Any, node: Any) -> None:
    ctx.emit(node, "quantize", [node.inputs[0]], node.outputs)


def from_onnx(imp: Any, node: Any) -> None:
    """QuantizeLinear to int8 (or uint8, taken as int8), per tensor: round(x / scale) +
    zero point, saturated. ONNX rounds halves to even where TFLite rounds them away from
    zero: the two differ by one step on exact halves."""
    attrs = imp.attrs(node)
    scale = imp.const(node.input[1], "scale")
    if scale.size != 1:
        raise imp.fail(f"per-axis quantization (axis {attrs.get('axis', 1)}) is not supported")
    x, layout = imp.any_layout(node.input[0])
    imp.emit("quantize", [x], node.output[0], layout)


def check(g: Graph, op: Operator) -> None:
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    if (x.dtype, y.dtype) not in PAIRS:
        raise OpError(f"{op.source}: QUANTIZE from {x.dtype} to {y.dtype} is not supported")
    if y.quant is None or (x.dtype != "float32" and x.quant is None):
        raise OpError(f"{op.source}: {y.dtype} tensors without quantization parameters")
    if y.quant.scale.size > 1:  # TFLite Micro: TF_LITE_ENSURE(output scale->size == 1)
        raise OpError(f"{op.source}: a per-channel QUANTIZE output ({y.quant.scale.size} scales); "
                      "TFLite Micro quantizes per tensor only")
    check_same_size(g, op)


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    X = te.placeholder((x.size,), x.dtype, name="x")
    lo, hi = qrange(y.dtype)
    assert y.quant
    sy, zy = y.quant.scalar()
    if x.dtype == "float32":
        def f(i):  # type: ignore[no-untyped-def]
            v = tirx.round(X[i] / imm(float(np.float32(sy)), "float32")).astype(I32) + zy
            return clamp(v, lo, hi).astype(y.dtype)
    else:
        assert x.quant
        sx, zx = x.quant.scalar()
        m, sft = fp.quantize_multiplier(float(sx) / float(sy))

        def f(i):  # type: ignore[no-untyped-def]
            v = fp.multiply_by_quantized_multiplier(X[i].astype(I32) - zx, m, sft) + zy
            return v if y.dtype == "int32" else clamp(v, lo, hi).astype(y.dtype)
    return KernelDef([KernelArg(X, tensor=x.name)], te.compute((x.size,), f, name="out"), y.name)


OPS = (
    OpDef(
        kind="quantize",
        summary="quantize float32 to int8 or int16, or requantize between int8, int16 and int32",
        tflite=(SourceOp("QUANTIZE", from_tflite, ("float32", "int8", "int16", "int32"),
                         "float32 to int8/int16; between int8, int16, int32; per-tensor"),),
        onnx=(SourceOp("QuantizeLinear", from_onnx, ("float32",), "int8 or uint8 output, per tensor"),),
        variants=(Variant("generic", _generic),),
        check=check,
        reference="TFLite Micro quantize.cc: reference_ops::AffineQuantize, reference_ops::Requantize",
        per_channel_tensors=True,
        inplace=True,
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "QUANTIZE between types outside the supported pairs",
               '`MicroPrintf("Input %s, output %s not supported.")` [k/quantize_common.cc:116-230]',
               "refused-by-TFLM", "kept"),
    Validation("check", "QUANTIZE output (or a requantized input) without quantization",
               "`TF_LITE_ENSURE_EQ(output->quantization.type, kTfLiteAffineQuantization)` [k/quantize_common.cc:48-54]",
               "refused-by-TFLM", "kept"),
    Validation("check", "QUANTIZE output with several scales (per channel)",
               "`TF_LITE_ENSURE(affine_quantization->scale->size == 1)` [k/quantize_common.cc:54]",
               "refused-by-TFLM", "added (utvm quantized with the first scale: *Missing*)"),
)
