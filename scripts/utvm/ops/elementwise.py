"""What every elementwise operator with several operands shares: NumPy/TFLite broadcasting, the
kernel that loops over the output and indexes each operand, the import rules of the binary
operators, and the ranges of quantized types.

Broadcasting (NumPy's rules, which TFLite and ONNX follow): shapes are aligned at their last
dimension, missing leading dimensions count as 1, and a dimension of 1 is repeated to the
other operands' size. The kernel does not loop over the output's dimensions one by one: output
dimensions of size 1 are dropped and neighbouring dimensions in which every operand either
moves or stays are merged, as TFLite's BroadcastBinaryOpSimple does. ``[1,4,4,8] + [8]`` is
then a loop of 16 x 8 in which ``b`` is read at the inner index only, and operands of the
same shape are one flat loop.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from tvm import te, tirx
from tvm.sym import Analyzer
from tvm.tirx.analysis import undefined_vars

from ..ir import NHWC, PLAIN, TO_NHWC, Graph, Operator, Tensor, trivial_perm
from ..kernels import fixedpoint as fp
from ..kernels.fixedpoint import Expr
from ..kernels.kerneldef import KernelArg, KernelDef
from ..kernels.requant import I32, activation_range_quantized, clamp_s8, scale_const
from .base import OpError, Validation

# ---------------------------------------------------------------------------------------
# broadcasting


def broadcast_shape(shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...] | None:
    """The shape of operands of ``shapes`` broadcast together, None if they do not broadcast."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for d in range(rank):
        dims = {s[len(s) - rank + d] for s in shapes if len(s) - rank + d >= 0} - {1}
        if len(dims) > 1:
            return None
        out.append(dims.pop() if dims else 1)
    return tuple(out)


@dataclass(frozen=True)
class Broadcast:
    """The loop nest of an elementwise kernel: ``shape`` (the output's dimensions of size > 1,
    neighbours merged) and, per operand, the element stride of each loop (0: repeated)."""

    shape: tuple[int, ...]
    strides: tuple[tuple[int, ...], ...]

    def index(self, k: int, loop: Sequence[Expr]) -> Expr:
        """Flat element index of operand ``k`` at loop indices ``loop``."""
        terms = [v if s == 1 else v * s for v, s in zip(loop, self.strides[k]) if s != 0]
        if not terms:
            return tirx.const(0, "int32")
        expr = terms[0]
        for t in terms[1:]:
            expr = expr + t
        return expr

    @property
    def repeats(self) -> bool:
        """Some operand is read more than once (not every operand has the output's size)."""
        return any(0 in s for s in self.strides)


def plan(out_shape: tuple[int, ...], shapes: Sequence[tuple[int, ...]]) -> Broadcast:
    """The loop nest computing ``out_shape`` from operands of ``shapes`` (which broadcast to it)."""
    rank = len(out_shape)
    # operands of a higher rank than the output have leading dimensions of size 1 only
    padded = [(1,) * (rank - len(s)) + tuple(s[max(len(s) - rank, 0):]) for s in shapes]
    # per output dimension > 1: which operands move along it
    dims = [(n, tuple(p[d] != 1 for p in padded)) for d, n in enumerate(out_shape) if n != 1]
    loops: list[tuple[int, tuple[bool, ...]]] = []
    for n, moves in dims:
        if loops and loops[-1][1] == moves:
            loops[-1] = (loops[-1][0] * n, moves)
        else:
            loops.append((n, moves))
    if not loops:
        return Broadcast((1,), tuple((0,) for _ in shapes))
    strides = []
    for k in range(len(shapes)):
        acc, per_loop = 1, []
        for n, moves in reversed(loops):
            per_loop.append(acc if moves[k] else 0)
            acc *= n if moves[k] else 1
        strides.append(tuple(reversed(per_loop)))
    return Broadcast(tuple(n for n, _ in loops), tuple(strides))


#: the value of each operand at the current element -> the output element
ElementFn = Callable[[Sequence[Expr]], Expr]

_NAMES = ("a", "b", "c")


def kernel(g: Graph, op: Operator, fn: ElementFn, names: Sequence[str] = _NAMES,
           operands: Sequence[int] | None = None) -> KernelDef:
    """The kernel of an elementwise operator: ``fn`` of its operands' values at every output
    element. Operands (``operands``: the positions of the inputs ``fn`` reads, default all) are
    flat placeholders named ``names``; an operand of the output's size with the output's shape
    is read at the loop index itself (a flat loop when all are)."""
    ins = [g.tensors[op.inputs[k]] for k in (operands if operands is not None else range(len(op.inputs)))]
    y = g.tensors[op.outputs[0]]
    bc = plan(y.shape, [t.shape for t in ins])
    # an integer (or bool) constant of one element is an immediate, not an argument; an operand
    # the result does not depend on (max(x, INT32_MAX) once the constant is in) is not read
    fixed = {k: v for k, v in ((k, immediate(t)) for k, t in enumerate(ins)) if v is not None}
    probes = {k: tirx.Var(f"operand{k}", t.dtype) for k, t in enumerate(ins) if k not in fixed}
    simple = Analyzer().simplify(fn([fixed[k] if k in fixed else probes[k] for k in range(len(ins))]))
    read = {v.name for v in undefined_vars(simple)}
    for k, probe in probes.items():
        if probe.name not in read:
            fixed[k] = tirx.const(0, ins[k].dtype)
    holders = {k: te.placeholder((t.size,), t.dtype, name=name) for k, (t, name) in enumerate(zip(ins, names))
               if k not in fixed}

    def body(loop: Sequence[Expr]) -> Expr:
        return fn([holders[k][bc.index(k, loop)] if k in holders else fixed[k] for k in range(len(ins))])

    if len(bc.shape) == 1:
        out = te.compute(bc.shape, lambda i: body([i]), name="out")
    else:
        out = te.compute(bc.shape, lambda *loop: body(loop), name="out")
    return KernelDef([KernelArg(h, tensor=ins[k].name) for k, h in holders.items()], out, y.name)


def immediate(t: Tensor) -> Expr | None:
    """The value of ``t`` as an immediate if it is an integer or bool constant of one element
    (float immediates are not used: TVM prints them with 7 digits)."""
    if t.data is None or t.size != 1 or t.dtype == "float32":
        return None
    value = t.data.reshape(-1)[0]
    return tirx.const(bool(value) if t.dtype == "bool" else int(value), t.dtype)


# ---------------------------------------------------------------------------------------
# checks


def check_shapes(g: Graph, op: Operator) -> None:
    """The operands broadcast to the output's shape (up to leading dimensions of size 1)."""
    shapes = [g.tensors[n].shape for n in op.inputs]
    y = g.tensors[op.outputs[0]]
    want = broadcast_shape(shapes)
    if want is None or _squeeze_leading(want) != _squeeze_leading(y.shape):
        shown = " and ".join(str(list(s)) for s in shapes)
        raise OpError(f"{op.source}: shapes {shown} do not broadcast to the output shape {list(y.shape)}")


def _squeeze_leading(shape: tuple[int, ...]) -> tuple[int, ...]:
    """``shape`` without its leading dimensions of size 1 (TFLite extends every shape to the
    output's rank with such dimensions)."""
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    return shape[k:]


def check_types(g: Graph, op: Operator, types: Sequence[str], out: str | None = None,
                inputs: Sequence[int] | None = None) -> str:
    """The operands (``inputs``: their positions, default all) share one type of ``types``, the
    output has that type (or ``out``); quantized operands carry per-tensor parameters, int16
    ones zero points 0 (the 16x8 scheme). Returns the type."""
    picked = [g.tensors[op.inputs[i]] for i in (inputs if inputs is not None else range(len(op.inputs)))]
    y = g.tensors[op.outputs[0]]
    dtype = picked[0].dtype
    want = out or dtype
    if dtype not in types or any(t.dtype != dtype for t in picked) or y.dtype != want:
        shown = ", ".join(t.dtype for t in picked)
        raise OpError(f"{op.source}: unsupported data types {shown} -> {y.dtype}")
    quantized = [*picked, y] if want == dtype else picked
    if dtype in ("int8", "int16"):
        for t in quantized:
            if t.quant is None:
                raise OpError(f"{op.source}: {dtype} tensor '{t.name}' without quantization parameters")
            if t.quant.per_channel:
                raise OpError(f"{op.source}: per-channel quantization of '{t.name}' is not supported here")
            if dtype == "int16" and t.quant.scalar()[1] != 0:
                raise OpError(f"{op.source}: int16 tensor '{t.name}' with zero point {t.quant.scalar()[1]} (must be 0)")
    return dtype


def check_binary(g: Graph, op: Operator, types: Sequence[str], out: str | None = None) -> str:
    """check_types and check_shapes."""
    dtype = check_types(g, op, types, out)
    check_shapes(g, op)
    return dtype


# ---------------------------------------------------------------------------------------
# quantized values


def zero_points(g: Graph, op: Operator) -> list[int]:
    """Zero points of the operands and the output (quantized, per tensor)."""
    return [g.tensors[n].quant.scalar()[1] for n in (*op.inputs, op.outputs[0])]  # type: ignore[union-attr]


def qrange(dtype: str) -> tuple[int, int]:
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def activation_range(act: str, t: Tensor) -> tuple[int, int]:
    """TFLite's CalculateActivationRangeQuantized for the output ``t`` (int8 or int16)."""
    scale, zp = t.quant.scalar() if t.quant else (1.0, 0)
    return activation_range_quantized(act, scale, zp, *qrange(t.dtype))


def clamp_to(v: Expr, lo: int, hi: int, dtype: str) -> Expr:
    """An int32 value clamped to [lo, hi] as ``dtype``."""
    return te.max(te.min(v, hi), lo).astype(dtype)


def smaller_than_one(real: float, what: str, op: Operator) -> tuple[int, int]:
    """TFLite's QuantizeMultiplierSmallerThanOneExp: refuses a multiplier of 1 or more."""
    m, shift = fp.quantize_multiplier(real)
    if shift > 0:
        raise OpError(f"{op.source}: the {what} rescaling factor {real:.4g} is not below 1 "
                      "(TFLite Micro refuses these quantization parameters too)")
    return m, shift


def int32_clamp(v: Expr, act: str) -> Expr:
    """The fused activation of an int32 output (TFLite's CalculateActivationRange<int32_t>)."""
    lo, hi = {"none": (None, None), "relu": (0, None), "relu6": (0, 6), "relu_n1_to_1": (-1, 1)}[act]
    if hi is not None:
        v = te.min(v, hi)
    return v if lo is None else te.max(v, lo)


def wrapping(a: Expr, b: Expr, f: Callable[[Expr, Expr], Expr]) -> Expr:
    """``f`` of two int32 values in 32-bit two's complement (no signed overflow in the C). The
    result is reinterpreted, not cast: TVM's simplifier takes a cast from uint32 for a value >= 0
    and would drop a following max(v, -1)."""
    return tirx.reinterpret("int32", f(a.astype("uint32"), b.astype("uint32")))


# ---------------------------------------------------------------------------------------
# import rules


def tflite_rule(kind: str, options: str | None = None, n_inputs: int = 2) -> Callable[[Any, Any], None]:
    """The import rule of a TFLite elementwise builtin: its first ``n_inputs`` inputs, and the
    fused activation of its ``options`` table if it has one."""

    def convert(ctx: Any, node: Any) -> None:
        attrs: dict[str, Any] = {}
        if options is not None:
            o = ctx.options(node, options)
            attrs["activation"] = ctx.activation(o.FusedActivationFunction(), node)
        if len(node.inputs) < n_inputs or any(not n for n in node.inputs[:n_inputs]):
            raise ctx.fail(node, f"expects {n_inputs} inputs")
        ctx.emit(node, kind, node.inputs[:n_inputs], node.outputs, attrs)

    return convert


def onnx_rule(kind: str, attrs: dict[str, Any] | None = None) -> Callable[[Any, Any], None]:
    """The import rule of an ONNX elementwise operator with NumPy broadcasting."""

    def convert(imp: Any, node: Any) -> None:
        onnx_emit(imp, node, kind, list(node.input), dict(attrs or {}))

    return convert


def onnx_emit(imp: Any, node: Any, kind: str, operands: list[str], attrs: dict[str, Any]) -> None:
    """Emit elementwise ``kind`` of ONNX values ``operands`` (variables or constants) computing
    the node's output.

    A 4-D output is computed in NHWC when some 4-D variable operand is held in NHWC only (or every
    one is held in both layouts); the other operands follow: constants are stored transposed,
    lower-rank variables are viewed as NHWC when that moves no element, else the whole operator
    is computed in ONNX's own layout."""
    out = node.output[0]
    out_shape = imp.shape(out)
    variables = [v for v in operands if v not in imp.consts]
    if not variables:
        raise imp.fail("every operand is constant")
    layout = PLAIN
    four = [v for v in variables if len(imp.shape(v)) == 4]
    if len(out_shape) == 4 and four:
        have = [imp.vals.get(v, {}) for v in four]
        if any(PLAIN not in h for h in have) or all(NHWC in h for h in have):
            layout = NHWC
        for v in variables:
            shape = imp.shape(v)
            if len(shape) != 4 and not trivial_perm((1,) * (4 - len(shape)) + shape, TO_NHWC):
                layout = PLAIN
    tensors = []
    for v in operands:
        shape = imp.shape(v)
        if v in imp.consts:
            data = np.asarray(imp.consts[v])
            if data.dtype not in (np.float32, np.bool_):
                raise imp.fail(f"unsupported data type {data.dtype} for constant '{v}' (only float32 and bool)")
            if layout == NHWC:
                data = data.reshape((1,) * (4 - data.ndim) + data.shape).transpose(TO_NHWC)
            tensors.append(imp.add_const(f"{out}_{v}", data, str(data.dtype) if data.dtype == np.bool_ else "float32"))
        elif layout == NHWC and len(shape) != 4:
            padded = (1,) * (4 - len(shape)) + shape
            tensors.append(imp.view(imp.get(v, PLAIN), tuple(padded[p] for p in TO_NHWC)))
        else:
            tensors.append(imp.get(v, layout))
    imp.emit(kind, tensors, out, layout, attrs)


# ---------------------------------------------------------------------------------------
# the rescaling of TFLite's ADD, SUB, SQUARED_DIFFERENCE and comparisons


#: largest |q - zero point| of a quantized operand (int16: zero point 0)
OFFSET_BOUND = {"int8": 255, "int16": 32768}


#: the bound to give scale_const for values in [-2**30, 2**30): its cheap form (SMMULR of 2x)
#: needs 2x to fit in int32, which holds for -2**30 too, although |x| is then not below 2**30
HALF_OPEN_2_30 = (1 << 30) - 1


def shifted_bound(dtype: str, left_shift: int) -> int:
    """A bound of |(v - zp) * 2**left_shift| for scale_const. int16 values (zero point 0) shifted
    by 15 lie in [-2**30, 2**30 - 2**15]: HALF_OPEN_2_30."""
    if dtype == "int16" and left_shift == 15:
        return HALF_OPEN_2_30
    return OFFSET_BOUND[dtype] << left_shift


def rescaled(v: Expr, zp: int, left_shift: int, m: int, shift: int, dtype: str) -> Expr:
    """(v - zp) * 2**left_shift scaled by (m, shift), as TFLite's ADD, SUB and comparisons
    bring both operands to one scale (MultiplyByQuantizedMultiplierSmallerThanOneExp)."""
    if isinstance(v, tirx.IntImm):  # a constant operand: rescaled here
        x_value = (int(v.value) - zp) * (1 << left_shift)
        return tirx.const(int(fp.np_multiply_by_quantized_multiplier(np.int64(x_value), m, shift)), I32)
    x = (v.astype(I32) - zp) * (1 << left_shift)
    return scale_const(x, m, shift, shifted_bound(dtype, left_shift))


#: the left shift of both quantized inputs of ADD and SUB (TFLite's CalculateOpDataAdd/Sub)
ADD_SUB_LEFT_SHIFT = {"int8": fp.ADD_LEFT_SHIFT, "int16": 15}


def add_sub_params(g: Graph, op: Operator) -> tuple[int, int, int, int, int, int]:
    """(ma, sha, mb, shb, my, shy): ADD's and SUB's rescaling factors, computed in double, every
    one below 1. (The source of TFLite Micro's CalculateOpDataSub divides in float32, but the
    TFLite Micro we compare with and the SEANet golden outputs agree with double, which differs
    in the last bits for tiny scale ratios.)"""
    a, b, y = (g.tensors[n] for n in (*op.inputs, op.outputs[0]))
    assert a.quant and b.quant and y.quant
    params = fp.add_params(a.quant.scalar()[0], b.quant.scalar()[0], y.quant.scalar()[0],
                           ADD_SUB_LEFT_SHIFT[y.dtype])
    if max(params[1], params[3], params[5]) > 0:
        raise OpError(f"{op.source}: output scale {y.quant.scalar()[0]:.3g} too small for the input scales"
                      " (TFLite Micro refuses these quantization parameters too)")
    return params


def add_sub(g: Graph, op: Operator, combine: Callable[[Expr, Expr], Expr]) -> ElementFn:
    """The quantized ADD (SUB) element: both inputs offset, shifted left, rescaled to a common
    scale, combined by ``combine``, rescaled to the output, clamped to the activation range."""
    a, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    za, zb, zy = zero_points(g, op)
    left_shift = ADD_SUB_LEFT_SHIFT[a.dtype]
    ma, sha, mb, shb, my, shy = add_sub_params(g, op)
    lo, hi = activation_range(op.attrs["activation"], y)
    # bounds of the three requantized values: 255 * 2**20 for the shifted int8 inputs, their
    # combination at most twice that (each input multiplier is at most 1/2). int16: the shifted
    # inputs lie in [-2**30, 2**30 - 2**15], each rescaled one in [-2**29, 2**29 - 2**14], the
    # sum or difference in [-2**30, 2**30)
    bound = OFFSET_BOUND[a.dtype] << left_shift
    out_bound = 2 * bound + 2 if a.dtype == "int8" else HALF_OPEN_2_30

    def f(v: Sequence[Expr]) -> Expr:
        va = rescaled(v[0], za, left_shift, ma, sha, a.dtype)
        vb = rescaled(v[1], zb, left_shift, mb, shb, a.dtype)
        total = scale_const(combine(va, vb), my, shy, out_bound) + zy
        return clamp_s8(total, lo, hi) if a.dtype == "int8" else clamp_to(total, lo, hi, y.dtype)
    return f

#: the heading of this module's rows in docs/VALIDATION.md
VALIDATION_TITLE = "Elementwise binary operators (ADD, SUB, MUL, MAXIMUM, MINIMUM, DIV, comparisons' types, ...)"
#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check_shapes", "operand shapes do not broadcast to the output",
               '`MicroPrintf("Given shapes are not broadcastable.")` / ProcessBroadcastShapes [k/select.cc:67, add_common.cc]; ADD/MUL: NdArrayDesc indexes by stored shapes',
               "refused-by-TFLM", "kept"),
    Validation("check_types", "operand/output types outside the operator's set or different",
               "`TF_LITE_ENSURE_TYPES_EQ` and type switches [k/add_common.cc, mul_common.cc:55, div.cc:49-50, floor_div.cc:50-51]",
               "refused-by-TFLM", "kept"),
    Validation("check_types", "int8/int16 operand without quantization parameters",
               "add/sub: `TFLITE_CHECK_NE(output->quantization.type, kTfLiteNoQuantization)`, `TF_LITE_ENSURE_EQ(input quantization type, affine)` [k/add_common.cc:42,104-106, sub_common.cc:103-107, div.cc:96-98]",
               "refused-by-TFLM", "kept"),
    Validation("check_types", "per-channel operand (ONNX only: TFLite tensors read per tensor keep their first scale)",
               "unreachable from TFLite; onnxruntime's QLinear ops are per tensor",
               "refused-by-TFLM", "kept"),
    Validation("check_types", "int16 operand with a zero point",
               "`TF_LITE_ENSURE_EQ(zero_point, 0)` for int16 [k/add_common.cc, mul_common.cc:73-75, sub_common.cc]",
               "refused-by-TFLM", "kept"),
    Validation("smaller_than_one", "a rescaling factor of 1 or more (MUL/MAXIMUM/... requantization)",
               "QuantizeMultiplierSmallerThanOneExp: `TFLITE_CHECK_LT(multiplier, 1)` aborts [quantization_util.cc:117]",
               "refused-by-TFLM", "kept"),
    Validation("add_sub_params", "ADD/SUB output scale too small for the input scales",
               "QuantizeMultiplierSmallerThanOneExp on the three multipliers aborts [k/add_common.cc:60-66, sub_common.cc:62-68]",
               "refused-by-TFLM", "kept"),
    Validation("convert", "elementwise operator with another input count",
               "`TF_LITE_ENSURE_EQ(NumInputs(node), n)` [k/add_common.cc, mul_common.cc, elementwise.cc, ...]",
               "refused-by-TFLM", "kept", rule=True),
)
