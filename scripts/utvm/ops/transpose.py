"""TRANSPOSE: permute the axes of a tensor (attr ``perm``, numpy semantics).

``out.shape[d] == x.shape[perm[d]]`` and ``out[j0, .., jn] == x[k]`` with ``k[perm[d]] == j[d]``.
Import: TFLite TRANSPOSE (constant perm, up to 5-D); ONNX Transpose. The ONNX importer also uses it to move 4-D activations between NCHW
(the model's view) and NHWC (utvm's layout), and both importers to give a model output that
would share its bytes with another tensor a copy of its own (identity perm).
Semantics: it only moves elements, so it is exact for every dtype.
"""

from __future__ import annotations

from typing import Any

from tvm import te

from ..ir import NHWC, PLAIN, TO_NCHW, TO_NHWC, Graph, Operator, trivial_perm
from ..kernels.kerneldef import KernelArg, KernelDef
from ..kernels.target import Target
from ._movement import MOVE_TYPES, check_same_types, tflite_ints
from .base import OpDef, OpError, SourceOp, Validation, Variant


def permute(x: str, out: str, perm: tuple[int, ...], source: str) -> Operator:
    """``out``, ``x`` with its axes in the order ``perm``; the identity ``perm`` is a copy (the
    importers' layout changes and copies of model outputs into bytes of their own)."""
    return Operator("transpose", [x], [out], {"perm": perm}, source=source)


def from_tflite(ctx: Any, node: Any) -> None:
    x = ctx.tensors[node.inputs[0]]
    perm = tuple(int(p) for p in tflite_ints(ctx, node, 1, "perm").reshape(-1))
    if len(perm) != len(x.shape):
        raise ctx.fail(node, f"perm {list(perm)} does not fit a {len(x.shape)}-D input")
    ctx.emit(node, "transpose", [node.inputs[0]], node.outputs, {"perm": perm})


def from_onnx(imp: Any, node: Any) -> None:
    attrs = imp.attrs(node)
    x, out = node.input[0], node.output[0]
    shape = imp.shape(x)
    perm = tuple(int(p) for p in attrs.get("perm", list(range(len(shape)))[::-1]))
    have = imp.vals.get(x, {})
    if len(shape) == 4 and NHWC in have and perm == TO_NHWC and len(imp.shape(out)) == 4:
        # NCHW -> NHWC of a value already held as NHWC: its bytes are the answer
        imp.emit("reshape", [have[NHWC]], out, PLAIN)
        return
    if len(shape) == 4 and PLAIN in have and perm == TO_NCHW:
        # NHWC -> NCHW (TensorFlow exports): the input's bytes are the output's NHWC layout
        imp.emit("reshape", [have[PLAIN]], out, NHWC)
        return
    src = imp.get(x, PLAIN)
    if trivial_perm(shape, perm):
        imp.emit("reshape", [src], out, PLAIN)
    else:
        imp.emit("transpose", [src], out, PLAIN, {"perm": perm})


def check(g: Graph, op: Operator) -> None:
    check_same_types(g, op, MOVE_TYPES + ("int32", "uint8", "bool"))
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    perm = tuple(int(p) for p in op.attrs["perm"])
    if sorted(perm) != list(range(len(x.shape))):
        raise OpError(f"{op.source}: perm {list(perm)} is not a permutation of {len(x.shape)} axes")
    out_shape = tuple(x.shape[p] for p in perm)
    if out_shape != tuple(y.shape):
        raise OpError(f"{op.source}: transpose of {list(x.shape)} by {list(perm)} gives "
                      f"{list(out_shape)}, not {list(y.shape)}")


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    perm = tuple(int(p) for p in op.attrs["perm"])
    out_shape = tuple(x.shape[p] for p in perm)
    X = te.placeholder(x.shape, x.dtype, name="x")
    inverse = [0] * len(perm)
    for d, p in enumerate(perm):
        inverse[p] = d

    def f(*j):  # type: ignore[no-untyped-def]
        return X[tuple(j[inverse[a]] for a in range(len(perm)))]

    out = te.compute(out_shape, f, name="out")
    return KernelDef([KernelArg(X, tensor=x.name)], out, y.name)


OPS = (
    OpDef(
        kind="transpose",
        summary="permute axes",
        tflite=(SourceOp("TRANSPOSE", from_tflite, ("int8", "int16", "float32"), "constant perm"),),
        onnx=(SourceOp("Transpose", from_onnx, ("float32",), qdq="passthrough"),),
        variants=(Variant("generic", _generic),),
        check=check,
        reference="TFLite Micro transpose.cc: reference_ops::Transpose; ONNX Transpose",
        rearranges=True,
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "perm not a permutation of the input's axes",
               "`TF_LITE_ENSURE_EQ(perm size, dims)`, `TF_LITE_ENSURE_MSG(0 <= perm < dims)` [k/transpose_common.cc:44-47]",
               "refused-by-TFLM", "kept"),
    Validation("check", "stored output is not the transposed shape",
               "no check of the stored shape; the reference writes by the permuted input shape [reference transpose.h]",
               "would-compute-differently", "kept"),
    Validation("from_tflite", "TRANSPOSE perm does not fit the input's rank",
               "`TF_LITE_ENSURE_EQ(perm->dims->data[0], dims)` [k/transpose_common.cc:45]",
               "refused-by-TFLM", "kept", rule=True),
)
