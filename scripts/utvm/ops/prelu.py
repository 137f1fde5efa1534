"""PRELU: x if x >= 0 else alpha * x, with alpha broadcast to x (NumPy rules).

Import: TFLite PRELU; ONNX PRelu.
Semantics: TFLite Micro's prelu.cc: int8 (and int16 input and output with int8 alpha) as
reference_ops::BroadcastPrelu4DSlow: the offset input, if >= 0, MultiplyByQuantizedMultiplier by
input_scale / output_scale, else its product with the offset alpha by input_scale * alpha_scale
/ output_scale (both in double), plus the output zero point, clamped to the output type;
float32 as BroadcastPrelu4DSlowFloat (at most 4 dimensions).
"""

from __future__ import annotations

from tvm import tirx

from ..ir import Graph, Operator
from ..kernels import fixedpoint as fp
from ..kernels.kerneldef import KernelDef
from ..kernels.requant import I32, scale_const
from ..kernels.target import Target
from . import elementwise
from .base import OpDef, OpError, SourceOp, Validation, Variant


def check(g: Graph, op: Operator) -> None:
    x, alpha, y = (g.tensors[n] for n in (*op.inputs, op.outputs[0]))
    if x.dtype == "int16":
        elementwise.check_types(g, op, ("int16",), inputs=(0,))
        if alpha.dtype != "int8" or alpha.quant is None or alpha.quant.per_channel:
            raise OpError(f"{op.source}: an int16 PRELU needs a per-tensor quantized int8 alpha, not {alpha.dtype}")
    else:
        elementwise.check_types(g, op, ("int8", "float32"))
    elementwise.check_shapes(g, op)
    if y.shape != x.shape:
        raise OpError(f"{op.source}: alpha {list(alpha.shape)} must broadcast to the input's shape {list(x.shape)}")
    if x.dtype == "float32" and len(y.shape) > 4:
        raise OpError(f"{op.source}: float32 PRELU of {len(y.shape)} dimensions (TFLite Micro's kernel takes at most 4)")


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x, alpha, y = (g.tensors[n] for n in (*op.inputs, op.outputs[0]))
    f: elementwise.ElementFn
    if x.dtype == "float32":
        def f(v):  # type: ignore[no-untyped-def]
            return tirx.Select(v[0] >= tirx.const(0.0, "float32"), v[0], v[0] * v[1])
        return elementwise.kernel(g, op, f, names=("x", "alpha"))
    assert x.quant and alpha.quant and y.quant
    (sx, zx), (sa, za), (sy, zy) = x.quant.scalar(), alpha.quant.scalar(), y.quant.scalar()
    m1, s1 = fp.quantize_multiplier(float(sx) / float(sy))
    m2, s2 = fp.quantize_multiplier(float(sx) * float(sa) / float(sy))
    lo, hi = elementwise.qrange(y.dtype)
    bound = elementwise.OFFSET_BOUND[x.dtype]

    def f(v):  # type: ignore[no-untyped-def]
        xv = v[0].astype(I32) - zx
        positive = scale_const(xv, m1, s1, bound)
        negative = scale_const(xv * (v[1].astype(I32) - za), m2, s2, bound * 255)
        return elementwise.clamp_to(tirx.Select(xv >= 0, positive, negative) + zy, lo, hi, y.dtype)
    return elementwise.kernel(g, op, f, names=("x", "alpha"))


OPS = (
    OpDef(
        kind="prelu",
        summary="x if x >= 0 else alpha * x",
        tflite=(SourceOp("PRELU", elementwise.tflite_rule("prelu"), ("int8", "int16", "float32"),
                         "alpha broadcast to the input; int16 input with int8 alpha; float32 at most 4-D"),),
        onnx=(SourceOp("PRelu", elementwise.onnx_rule("prelu"), ("float32",), "slope broadcast to the input, at most 4-D"),),
        variants=(Variant("generic", _generic, types=("int8", "int16", "float32")),),
        check=check,
        reference="TFLite Micro prelu.cc: BroadcastPrelu4DSlow (int8, int16), BroadcastPrelu4DSlowFloat (float32)",
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "int16 PRELU alpha not per-tensor int8",
               "`TF_LITE_ENSURE(alpha->type == kTfLiteInt8)` for int16 input [k/prelu_common.cc:101]",
               "refused-by-TFLM", "kept"),
    Validation("check", "alpha does not broadcast to the input's shape",
               "reference BroadcastPrelu4DSlow indexes by NdArrayDesc of the stored shapes (out of bounds) [k/prelu_common.cc]",
               "would-compute-differently", "kept"),
    Validation("check", "float32 PRELU of more than 4 dimensions",
               "BroadcastPrelu4DSlow: `TFLITE_DCHECK_LE(dims, 4)`; 5-D shapes overflow its 4-D descriptors [reference prelu.h]",
               "would-compute-differently", "kept"),
)
