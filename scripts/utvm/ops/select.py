"""SELECT_V2: x where the bool condition holds, else y; the three operands broadcast (NumPy rules).

Import: TFLite SELECT_V2; ONNX Where.
Semantics: TFLite Micro's select.cc (reference_ops::Select / BroadcastSelect5DSlow): the stored
values are picked as they are (no requantization), at most 5 dimensions.
"""

from __future__ import annotations

from tvm import tirx

from ..ir import Graph, Operator
from ..kernels.kerneldef import KernelDef
from ..kernels.target import Target
from . import elementwise
from .base import OpDef, OpError, SourceOp, Validation, Variant

TYPES = ("int8", "int16", "float32")


def check(g: Graph, op: Operator) -> None:
    cond = g.tensors[op.inputs[0]]
    if cond.dtype != "bool":
        raise OpError(f"{op.source}: the condition must be bool, not {cond.dtype}")
    elementwise.check_types(g, op, TYPES, inputs=(1, 2))
    elementwise.check_shapes(g, op)
    if len(g.tensors[op.outputs[0]].shape) > 5:
        raise OpError(f"{op.source}: select of more than 5 dimensions (TFLite Micro's kernel takes at most 5)")


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    return elementwise.kernel(g, op, lambda v: tirx.Select(v[0], v[1], v[2]), names=("cond", "x", "y"))


OPS = (
    OpDef(
        kind="select",
        summary="x where the condition holds, else y",
        tflite=(SourceOp("SELECT_V2", elementwise.tflite_rule("select", n_inputs=3), TYPES,
                         "bool condition; broadcasting of all three operands, at most 5-D"),),
        onnx=(SourceOp("Where", elementwise.onnx_rule("select"), ("float32",), "broadcasting, at most 5-D"),),
        variants=(Variant("generic", _generic, types=TYPES),),
        check=check,
        reference="TFLite Micro select.cc: reference_ops::Select/BroadcastSelect5DSlow",
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "SELECT condition not bool",
               "`TF_LITE_ENSURE_TYPES_EQ(input_condition->type, kTfLiteBool)` [k/select.cc:95]",
               "refused-by-TFLM", "kept"),
    Validation("check", "SELECT of more than 5 dimensions",
               "reference BroadcastSelect5DSlow takes 5 dims (`TFLITE_DCHECK_LE`); 6-D overflows its descriptors [k/select.cc]",
               "would-compute-differently", "kept"),
)
