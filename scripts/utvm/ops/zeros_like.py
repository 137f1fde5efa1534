"""ZEROS_LIKE: a tensor of zeros of the input's shape and type.

Import: TFLite ZEROS_LIKE (int8, int32, int64, float32, as TFLite Micro's kernel). ONNX has no
operator of its own for it (ConstantOfShape of a constant shape, ops/fill.py, is folded at import).
Semantics: TFLite Micro's zeros_like.cc: every output element the value 0 of its type (for
int8 the raw 0, not the zero point); the input's values are not read.
"""

from __future__ import annotations

from typing import Any

from tvm import te, tirx

from ..ir import Graph, Operator
from ..kernels.kerneldef import KernelArg, KernelDef
from ..kernels.target import Target
from .base import OpDef, OpError, SourceOp, Validation, Variant
from .common import io

_TYPES = ("int8", "int32", "int64", "float32")


def from_tflite(ctx: Any, node: Any) -> None:
    if len(node.inputs) != 1 or len(node.outputs) != 1:
        raise ctx.fail(node, f"expects 1 input and 1 output, has {len(node.inputs)} and {len(node.outputs)}")
    ctx.emit(node, "zeros_like", [node.inputs[0]], node.outputs)


def check(g: Graph, op: Operator) -> None:
    """ZerosLikePrepare gives the output the input's type; Eval accepts int64, int32, int8 and
    float32 and needs matching element counts (MatchingFlatSize)."""
    x, y = io(g, op)
    if x.dtype not in _TYPES or y.dtype != x.dtype:
        raise OpError(f"{op.source}: unsupported data types {x.dtype} -> {y.dtype} (int8, int32, int64, float32)")
    if x.size != y.size:
        raise OpError(f"{op.source}: {y.size} output elements for {x.size} input elements")


def uniform_kernel(g: Graph, op: Operator, value: Any) -> KernelDef:
    """Every output element ``value(args)`` (the first input is the kernel's argument)."""
    x, y = io(g, op)
    X = te.placeholder((max(x.size, 1),), x.dtype, name="x")
    out = te.compute(y.shape, lambda *i: value(X), name="out")
    return KernelDef([KernelArg(X, tensor=x.name)], out, y.name)


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    dtype = g.tensors[op.outputs[0]].dtype
    return uniform_kernel(g, op, lambda X: tirx.const(0, dtype))


OPS = (
    OpDef(
        kind="zeros_like",
        summary="zeros of the input's shape and type",
        tflite=(SourceOp("ZEROS_LIKE", from_tflite, _TYPES),),
        variants=(Variant("generic", _generic, types=_TYPES),),
        check=check,
        reference="TFLite Micro zeros_like.cc (the value 0 of the type)",
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "input type other than int8/int32/int64/float32, or output of another type",
               'Eval: `MicroPrintf("ZerosLike only currently supports ...")` for other input types [k/zeros_like.cc:74-78]; an output of another type gets the input\'s type in Prepare (input-type zeros written) [k/zeros_like.cc:39]',
               "refused-by-TFLM", "kept"),
    Validation("check", "output of another element count than the input",
               "`MatchingFlatSize` is a `TFLITE_DCHECK` (off in release); Eval writes the input's flat size [k/zeros_like.cc:58]",
               "would-compute-differently", "kept"),
    Validation("from_tflite", "ZEROS_LIKE without 1 input and 1 output",
               "`TF_LITE_ENSURE_EQ(NumInputs(node), 1)`, `NumOutputs == 1` [k/zeros_like.cc:31-32]",
               "refused-by-TFLM", "kept", rule=True),
)
