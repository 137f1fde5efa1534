"""BATCH_MATMUL: a batch of matrix products with NumPy broadcasting of the batch dimensions.

Import: TFLite BATCH_MATMUL (adj_x / adj_y transpose the last two dimensions of an operand;
ranks 2 to 5; either operand may be a constant); ONNX MatMul whose second operand is not a
constant matrix (a constant matrix is a fully_connected layer).
Semantics: TFLite Micro's batch_matmul.cc over reference_ops::BatchMatMul: int8 sums
(lhs - lhs zero point) * (rhs - rhs zero point) in int32, MultiplyByQuantizedMultiplier by
lhs scale x rhs scale (a float32 product) / output scale, plus the output zero point,
saturated; int16 (zero points 0) sums in int64 with the int64 MultiplyByQuantizedMultiplier;
float32 sums in order of the depth.
"""

from __future__ import annotations

from typing import Any

from tvm import te

from ..ir import Graph, Operator
from ..lower import fixedpoint as fp
from ..lower.kerneldef import KernelArg, KernelDef
from ..lower.requant import clamp
from ..lower.schedules import reduction_schedule
from ..lower.target import Target
from .base import OpDef, OpError, SourceOp, Variant
from .elementwise import broadcast_shape

_RANGES = {"int8": (-128, 127), "int16": (-32768, 32767)}


def from_tflite(ctx: Any, node: Any) -> None:
    o = ctx.options(node, "BatchMatMulOptions")
    ctx.emit(node, "batch_matmul", node.inputs[:2], node.outputs, {"adj_x": bool(o.AdjX()), "adj_y": bool(o.AdjY())})


def from_onnx(imp: Any, node: Any) -> None:
    """MatMul of two values (or a value and a constant that is not a 2-D matrix)."""
    from ..importer.onnx_import import PLAIN

    a, b = node.input[0], node.input[1]
    if len(imp.shape(a)) < 2 or len(imp.shape(b)) < 2:
        raise imp.fail("MatMul of a 1-D operand is not supported")
    ins = [imp.add_const(f"{node.output[0]}_{k}", imp.float_const(v, "operand")) if v in imp.consts
           else imp.get(v, PLAIN) for k, v in enumerate((a, b))]
    imp.emit("batch_matmul", ins, node.output[0], PLAIN, {"adj_x": False, "adj_y": False})


def _dims(g: Graph, op: Operator) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], int, int, int]:
    """(lhs batch dims, rhs batch dims, output batch dims, M, K, N); raises OpError."""
    a, b = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]]
    if not (2 <= len(a.shape) <= 5 and 2 <= len(b.shape) <= 5):
        raise OpError(f"{op.source}: operands of rank 2 to 5 only, got {list(a.shape)} and {list(b.shape)}")
    m, ka = (a.shape[-1], a.shape[-2]) if op.attrs["adj_x"] else (a.shape[-2], a.shape[-1])
    kb, n = (b.shape[-1], b.shape[-2]) if op.attrs["adj_y"] else (b.shape[-2], b.shape[-1])
    if ka != kb:
        raise OpError(f"{op.source}: depths {ka} and {kb} differ ({list(a.shape)} x {list(b.shape)})")
    batch = broadcast_shape([a.shape[:-2], b.shape[:-2]])
    if batch is None:
        raise OpError(f"{op.source}: batch dimensions {list(a.shape[:-2])} and {list(b.shape[:-2])} do not broadcast")
    return tuple(a.shape[:-2]), tuple(b.shape[:-2]), batch, m, ka, n


def check(g: Graph, op: Operator) -> None:
    _, _, batch, m, _, n = _dims(g, op)
    a, b, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    if y.size != int(_prod(batch)) * m * n:
        raise OpError(f"{op.source}: output {list(y.shape)} is not {list(batch) + [m, n]}")
    if not (a.dtype == b.dtype == y.dtype and a.dtype in ("int8", "int16", "float32")):
        raise OpError(f"{op.source}: unsupported data types {a.dtype} x {b.dtype} -> {y.dtype}")
    if a.dtype != "float32":
        if a.quant is None or b.quant is None or y.quant is None:
            raise OpError(f"{op.source}: {a.dtype} tensors without quantization parameters")
        if a.quant.per_channel or b.quant.per_channel:
            raise OpError(f"{op.source}: per-channel quantization is not supported")
        if a.dtype == "int16" and any(t.quant.scalar()[1] != 0 for t in (a, b, y) if t.quant is not None):
            raise OpError(f"{op.source}: int16 operands must have zero point 0")


def _prod(dims: tuple[int, ...]) -> int:
    out = 1
    for d in dims:
        out *= d
    return out


def _index(batch_in: tuple[int, ...], batch_out: tuple[int, ...], idx: tuple[Any, ...]) -> list[Any]:
    """The operand's batch indices for output batch indices ``idx`` (broadcast dimensions at 0)."""
    off = len(batch_out) - len(batch_in)
    return [0 if d == 1 else idx[off + k] for k, d in enumerate(batch_in)]


def _kernel(g: Graph, op: Operator, target: Target) -> KernelDef:
    ba, bb, batch, m, k, n = _dims(g, op)
    a, b, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    A = te.placeholder(a.shape, a.dtype, name="a")
    B = te.placeholder(b.shape, b.dtype, name="b")
    r = te.reduce_axis((0, k), "k")
    adj_x, adj_y = op.attrs["adj_x"], op.attrs["adj_y"]
    nb = len(batch)

    def lhs(idx: tuple[Any, ...], i: Any) -> Any:
        pre = _index(ba, batch, idx)
        return A[(*pre, r, i)] if adj_x else A[(*pre, i, r)]

    def rhs(idx: tuple[Any, ...], j: Any) -> Any:
        pre = _index(bb, batch, idx)
        return B[(*pre, j, r)] if adj_y else B[(*pre, r, j)]

    shape = (*batch, m, n)
    if a.dtype == "float32":
        acc = te.compute(shape, lambda *v: te.sum(lhs(v[:nb], v[nb]) * rhs(v[:nb], v[nb + 1]), axis=r), name="acc")
        out = te.compute(shape, lambda *v: acc[v], name="out")
    else:
        assert a.quant and b.quant and y.quant
        sa, za = a.quant.scalar()
        sb, zb = b.quant.scalar()
        sy, zy = y.quant.scalar()
        mult, shift = fp.quantize_multiplier(fp.conv_real_multiplier(sa, sb, sy, False))
        wide = "int64" if a.dtype == "int16" else "int32"
        acc = te.compute(shape, lambda *v: te.sum(
            (lhs(v[:nb], v[nb]).astype(wide) - za) * (rhs(v[:nb], v[nb + 1]).astype(wide) - zb), axis=r), name="acc")
        lo, hi = _RANGES[a.dtype]
        scale = fp.multiply_by_quantized_multiplier_int64 if wide == "int64" else fp.multiply_by_quantized_multiplier
        out = te.compute(shape, lambda *v: clamp(scale(acc[v], mult, shift) + zy, lo, hi).astype(y.dtype), name="out")
    args = [KernelArg(A, tensor=a.name), KernelArg(B, tensor=b.name)]
    return KernelDef(args, out, y.name, reduction_schedule("acc", "out", None, nb + 2))


def macs(g: Graph, op: Operator) -> int:
    _, _, batch, m, k, n = _dims(g, op)
    return _prod(batch) * m * k * n


OPS = (
    OpDef(
        kind="batch_matmul",
        summary="batched matrix product with broadcasting",
        tflite=(SourceOp("BATCH_MATMUL", from_tflite, ("int8", "int16", "float32"),
                         "ranks 2 to 5, adj_x/adj_y, per-tensor quantization"),),
        variants=(Variant("generic", _kernel, types=("int8", "int16", "float32")),),
        check=check,
        reference="TFLite Micro batch_matmul.cc: reference_ops::BatchMatMul (int8, int16 with int64 accumulators, "
                  "float32)",
        macs=macs,
    ),
)
