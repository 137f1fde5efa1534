"""ASSIGN (internal): copy a tensor over a variable tensor, the state a layer keeps between runs.

TFLite's ASSIGN_VARIABLE becomes it (ops/resource_variables.py finds the variable); stateful
layers (SVDF, LSTM) emit it after the operator that computes their new state, so the state kept
in the state buffer (outside the pool) is only overwritten once everything that reads the old
one has run.
Semantics: a copy, exact for every type (``words``: the bytes a word or a Helium vector at a
time; ``generic``: element by element).
"""

from __future__ import annotations

from tvm import te, tirx

from ..ir import Graph, Operator
from ..kernels.kerneldef import KernelArg, KernelDef
from ..kernels.schedules import root_schedule
from ..kernels.target import Target
from .base import OpDef, OpError, SourceOp, Validation, Variant
from .common import ANY_TYPE, flat_copy
from .resource_variables import assign_variable


def check(g: Graph, op: Operator) -> None:
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    if not y.variable:
        raise OpError(f"{op.source}: assign writes a variable tensor, '{y.name}' is not one")
    if x.size != y.size or x.dtype != y.dtype:
        raise OpError(f"{op.source}: cannot assign {x.dtype}{list(x.shape)} to {y.dtype}{list(y.shape)}")


def _words(g: Graph, op: Operator, target: Target) -> KernelDef:
    """The bytes copied a word (or a Helium vector) at a time: utvm_copy_s8 on byte views."""
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    X = te.placeholder((x.nbytes,), "int8", name="x")
    out = te.compute((x.nbytes,), lambda i: X[i], name="out")  # the signature: the body is one call

    def build(bufs: dict[str, tirx.Var]) -> tuple[tirx.Stmt, list[tirx.Buffer]]:
        return tirx.Evaluate(tirx.call_extern("int32", "utvm_copy_s8", tirx.address_of(bufs["out"][0]),
                                              tirx.address_of(bufs["x"][0]), tirx.const(x.nbytes, "int32"))), []

    return KernelDef([KernelArg(X, tensor=x.name)], out, y.name, root_schedule(build))


OPS = (
    OpDef(
        kind="assign",
        summary="copy into a variable tensor (the state of SVDF / LSTM layers)",
        tflite=(SourceOp("ASSIGN_VARIABLE", assign_variable, ANY_TYPE, "a copy into the variable"),),
        variants=(Variant("words", _words, types=ANY_TYPE), Variant("generic", flat_copy, types=ANY_TYPE)),
        check=check,
        reference="a copy (TFLite Micro writes variable tensors in place)",
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "ASSIGN_VARIABLE target is not a variable",
               "`TF_LITE_ENSURE(resource id tensor type resource/int32)`, `NumElements == 1` [k/assign_variable.cc:66-68]",
               "refused-by-TFLM", "kept"),
    Validation("check", "assigned value of another size or type than the variable",
               "MicroResourceVariables::Assign checks the bytes with a `TFLITE_DCHECK(count_bytes == variable.bytes)` only (off in release), then copies the variable's bytes from the value [micro_resource_variable.cc:131-133]",
               "would-compute-differently", "kept (was classified refused-by-TFLM: the check is a DCHECK)"),
)
