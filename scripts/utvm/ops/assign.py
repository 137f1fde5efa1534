"""ASSIGN (internal): copy a tensor over a variable tensor, the state a layer keeps between runs.

No source operator imports as it directly; stateful layers (SVDF, LSTM) emit it after the
operator that computes their new state, so the state kept in the state buffer (outside the
pool) is only overwritten once everything that reads the old one has run.
Semantics: an element-by-element copy, exact for every type.
"""

from __future__ import annotations

from tvm import te

from ..ir import Graph, Operator
from ..lower.kerneldef import KernelArg, KernelDef
from ..lower.target import Target
from .base import OpDef, OpError, Variant


def check(g: Graph, op: Operator) -> None:
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    if not y.variable:
        raise OpError(f"{op.source}: assign writes a variable tensor, '{y.name}' is not one")
    if x.size != y.size or x.dtype != y.dtype:
        raise OpError(f"{op.source}: cannot assign {x.dtype}{list(x.shape)} to {y.dtype}{list(y.shape)}")


def _copy(g: Graph, op: Operator, target: Target) -> KernelDef:
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    X = te.placeholder((x.size,), x.dtype, name="x")
    return KernelDef([KernelArg(X, tensor=x.name)], te.compute((x.size,), lambda i: X[i], name="out"), y.name)


_ANY = ("int8", "int16", "int32", "float32")
OPS = (
    OpDef(
        kind="assign",
        summary="copy into a variable tensor (the state of SVDF / LSTM layers)",
        variants=(Variant("generic", _copy, types=_ANY),),
        check=check,
        reference="a copy (TFLite Micro writes variable tensors in place)",
    ),
)
