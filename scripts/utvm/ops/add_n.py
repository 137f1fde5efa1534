"""ADD_N: the elementwise sum of two or more tensors of one shape.

Import: TFLite ADD_N (int8, float32, as TFLite Micro's add_n.cc: every input of the output's
shape and type, int8 inputs all with one scale and zero point); ONNX Sum (float32, two or more
inputs of one shape, no broadcasting).
Semantics: float32 ``((0 + x0) + x1) + ...`` in input order, as reference_ops::AddN. int8 as
TFLite Micro's quantized AddN: with z the inputs' zero point, every term ``(q - z) * 2**20`` is
scaled by 1/2 (QuantizeMultiplierSmallerThanOneExp of scale / (2 scale)), the sum starts from
the term of q = 0 (the reference kernel's ``x = input1_offset``, an extra ``-z`` term), is
scaled by 2 scale / (2**20 output scale) and offset by the output's zero point, then clamped to
int8. An output scale that makes the last factor 1 or more is refused (TFLite Micro's
QuantizeMultiplierSmallerThanOneExp aborts on it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tvm import tirx

from ..ir import NHWC, PLAIN, Graph, Operator
from ..kernels import fixedpoint as fp
from ..kernels.kerneldef import KernelDef
from ..kernels.requant import clamp_s8, scale_const
from ..kernels.target import Target
from . import elementwise
from .base import OpDef, OpError, SourceOp, Validation, Variant

TYPES = ("int8", "float32")
LEFT_SHIFT = fp.ADD_LEFT_SHIFT


def from_tflite(ctx: Any, node: Any) -> None:
    if len(node.inputs) < 2 or not all(node.inputs):
        raise ctx.fail(node, f"expects at least 2 inputs, got {len([n for n in node.inputs if n])}")
    ctx.emit(node, "add_n", list(node.inputs), node.outputs)


def from_onnx(imp: Any, node: Any) -> None:
    if len(node.input) < 2:
        raise imp.fail(f"Sum of {len(node.input)} input is not supported (at least 2)")
    shapes = {tuple(imp.shape(v)) for v in node.input}
    if len(shapes) != 1:
        raise imp.fail(f"Sum with broadcasting ({' and '.join(str(list(s)) for s in sorted(shapes))}) "
                       "is not supported")
    layout = NHWC if all(NHWC in imp.vals.get(v, {}) for v in node.input) else PLAIN
    imp.emit("add_n", [imp.get(v, layout) for v in node.input], node.output[0], layout)


def _params(g: Graph, op: Operator) -> tuple[int, int, int, int]:
    """(input multiplier, input shift, output multiplier, output shift) of the int8 sum."""
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    assert x.quant and y.quant
    twice = 2.0 * fp.as_float32(x.quant.scalar()[0])
    m_in, sh_in = elementwise.smaller_than_one(fp.as_float32(x.quant.scalar()[0]) / twice, "input", op)
    m_out, sh_out = elementwise.smaller_than_one(twice / ((1 << LEFT_SHIFT) * fp.as_float32(y.quant.scalar()[0])),
                                                 "output", op)
    return m_in, sh_in, m_out, sh_out


def check(g: Graph, op: Operator) -> None:
    if len(op.inputs) < 2:
        raise OpError(f"{op.source}: ADD_N needs at least 2 inputs, it has {len(op.inputs)}")
    dtype = elementwise.check_types(g, op, TYPES)
    y = g.tensors[op.outputs[0]]
    shapes = [g.tensors[n].shape for n in op.inputs]
    if any(tuple(s) != tuple(y.shape) for s in shapes):
        raise OpError(f"{op.source}: input shapes {' and '.join(str(list(s)) for s in shapes)} differ from the "
                      f"output's {list(y.shape)} (ADD_N does not broadcast)")
    if dtype == "int8":
        params = {g.tensors[n].quant.scalar() for n in op.inputs}  # type: ignore[union-attr]
        if len(params) != 1:
            raise OpError(f"{op.source}: int8 inputs with different quantizations {sorted(params)} "
                          "(TFLite Micro requires one scale and zero point)")
        _params(g, op)


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x = g.tensors[op.inputs[0]]
    names = [f"x{k}" for k in range(len(op.inputs))]
    if x.dtype == "float32":
        def f(v: Sequence[Any]) -> Any:
            total = v[0]
            for term in v[1:]:
                total = total + term
            return total
        return elementwise.kernel(g, op, f, names)
    zp = x.quant.scalar()[1]  # type: ignore[union-attr]
    zy = g.tensors[op.outputs[0]].quant.scalar()[1]  # type: ignore[union-attr]
    m_in, sh_in, m_out, sh_out = _params(g, op)
    # every term lies within 255 * 2**19; their sum may pass int32 for 16 inputs or more, where
    # the reference kernel's int32 sum wraps (in practice) and so does this one
    bound = (len(op.inputs) + 1) * (elementwise.OFFSET_BOUND["int8"] << (LEFT_SHIFT - 1)) + len(op.inputs) + 1
    wraps = bound >= 1 << 31

    def f(v: Sequence[Any]) -> Any:
        total = elementwise.rescaled(tirx.IntImm("int32", 0), zp, LEFT_SHIFT, m_in, sh_in, "int8")
        for term in v:
            scaled = elementwise.rescaled(term, zp, LEFT_SHIFT, m_in, sh_in, "int8")
            total = elementwise.wrapping(total, scaled, lambda p, q: p + q) if wraps else total + scaled
        out = fp.multiply_by_quantized_multiplier(total, m_out, sh_out) if wraps else \
            scale_const(total, m_out, sh_out, bound)
        return clamp_s8(out + zy, -128, 127)

    return elementwise.kernel(g, op, f, names)


OPS = (
    OpDef(
        kind="add_n",
        summary="elementwise sum of two or more tensors",
        tflite=(SourceOp("ADD_N", from_tflite, TYPES, "same shapes; int8 inputs quantized alike"),),
        onnx=(SourceOp("Sum", from_onnx, ("float32",), "two or more inputs of one shape"),),
        variants=(Variant("generic", _generic, types=TYPES),),
        check=check,
        reference="TFLite Micro add_n.cc (reference_ops::AddN); ONNX Sum",
        inplace=True,
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "ADD_N with fewer than 2 inputs",
               "`TF_LITE_ENSURE(num_inputs >= 2)` [k/add_n.cc:51]",
               "refused-by-TFLM", "kept"),
    Validation("check", "an input's shape differs from the output's (no broadcasting)",
               "`TF_LITE_ENSURE(HaveSameShapes(input_tensor_first, input))` [k/add_n.cc:67]; the output's shape is not compared (AddN writes the first input's flat size into it)",
               "refused-by-TFLM", "kept"),
    Validation("check", "int8 inputs with different scales or zero points",
               "`TF_LITE_ENSURE` on zero_point and scale equal to the first input's [k/add_n.cc:72-75]",
               "refused-by-TFLM", "kept"),
    Validation("from_tflite", "ADD_N with fewer than 2 inputs, or an omitted one",
               "`TF_LITE_ENSURE(num_inputs >= 2)`, `TF_LITE_ENSURE(input != nullptr)` [k/add_n.cc:51,66]",
               "refused-by-TFLM", "kept", rule=True),
)
