"""BATCH_MATMUL: a batch of matrix products with NumPy broadcasting of the batch dimensions.

Import: TFLite BATCH_MATMUL (adj_x / adj_y transpose the last two dimensions of an operand;
ranks 2 to 5; either operand may be a constant); ONNX MatMul whose second operand is not a
constant matrix (a constant matrix is a fully_connected layer).
Semantics: TFLite Micro's batch_matmul.cc over reference_ops::BatchMatMul: int8 sums
(lhs - lhs zero point) * (rhs - rhs zero point) in int32, MultiplyByQuantizedMultiplier by
lhs scale x rhs scale (a float32 product) / output scale, plus the output zero point,
saturated; int16 (zero points 0) sums in int64 with the int64 MultiplyByQuantizedMultiplier;
float32 sums in order of the depth.
Kernel variants, first that applies: helium (int8: per batch the rhs transposed into scratch, per
row utvm_mve_matvec_s8 with the zero-point terms as biases), dsp_mac4 (int8, depth % 4 == 0: the
rhs packed for utvm_mac4_u_s8), generic (TE).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from tvm import te, tirx

from ..ir import PLAIN, Graph, Operator
from ..kernels import fixedpoint as fp
from ..kernels import helium as mve
from ..kernels.kerneldef import KernelArg, KernelDef
from ..kernels.mac16 import guard
from ..kernels.requant import I32, Requant, bias_requant, clamp, imm
from ..kernels.schedules import CHANNEL_BLOCK, loop, reduction_schedule, root_schedule, seq, to_tir
from ..kernels.target import Target
from .base import OpDef, OpError, SourceOp, Validation, Variant
from .elementwise import broadcast_shape

_RANGES = {"int8": (-128, 127), "int16": (-32768, 32767)}


def from_tflite(ctx: Any, node: Any) -> None:
    o = ctx.options(node, "BatchMatMulOptions")
    ctx.emit(node, "batch_matmul", node.inputs[:2], node.outputs, {"adj_x": bool(o.AdjX()), "adj_y": bool(o.AdjY())})


def from_onnx(imp: Any, node: Any) -> None:
    """MatMul of two values (or a value and a constant that is not a 2-D matrix)."""
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


# ---------------------------------------------------------------------------------------
# per-CPU int8 kernels

#: the largest depth of the int8 kernels: their int32 sums of raw products and zero-point terms
#: (each at most 2**14 x depth) stay below 2**31
MAX_DEPTH = 8192


@dataclass
class _Int8:
    """What the int8 kernels share: shapes, zero points, the requantization, the batch loops."""

    ba: tuple[int, ...]
    bb: tuple[int, ...]
    batch: tuple[int, ...]
    m: int
    k: int
    n: int
    za: int
    zb: int
    zy: int
    rq: Requant

    def offsets(self, idx: list[tirx.PrimExpr]) -> tuple[tirx.PrimExpr, tirx.PrimExpr, tirx.PrimExpr]:
        """Element offsets of the lhs and rhs matrices and the output matrix of batch ``idx``."""
        def offset(dims: tuple[int, ...], size: int) -> tirx.PrimExpr:
            at: tirx.PrimExpr = imm(0)
            for d, v in zip(dims, _index(dims, self.batch, tuple(idx))):
                at = at * d + v
            return at * size

        flat: tirx.PrimExpr = imm(0)
        for d, v in zip(self.batch, idx):
            flat = flat * d + v
        return offset(self.ba, self.m * self.k), offset(self.bb, self.k * self.n), flat * (self.m * self.n)

    def lhs_rows(self, op: Operator, bufs: dict[str, tirx.Var],
                 a_at: tirx.PrimExpr) -> tuple[list[tirx.Stmt], Callable[[tirx.PrimExpr], tirx.PrimExpr]]:
        """The statements that make the lhs rows of a batch contiguous (an adjoint lhs transposed
        into the scratch "at"), and the address of row i."""
        if not op.attrs["adj_x"]:
            return [], lambda i: tirx.address_of(bufs["a"][a_at + i * self.k])
        at = bufs["at"]
        return ([_call("utvm_copy2d_s8", tirx.address_of(at[0]), tirx.address_of(bufs["a"][a_at]), self.m, self.k, 1,
                       self.m)], lambda i: tirx.address_of(at[i * self.k]))

    def over_batch(self, body: Callable[[list[tirx.PrimExpr]], tirx.Stmt]) -> tirx.Stmt:
        def nest(d: int, idx: list[tirx.PrimExpr]) -> tirx.Stmt:
            if d == len(self.batch):
                return body(idx)
            return loop(self.batch[d], f"t{d}", lambda v: nest(d + 1, [*idx, v]))

        return nest(0, [])


def _int8(g: Graph, op: Operator, target: Target) -> _Int8 | None:
    a, b, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    if a.dtype != "int8" or not target.packed:
        return None
    ba, bb, batch, m, k, n = _dims(g, op)
    if k > MAX_DEPTH:
        return None
    assert a.quant and b.quant and y.quant
    sa, za = a.quant.scalar()
    sb, zb = b.quant.scalar()
    sy, zy = y.quant.scalar()
    scale = fp.conv_real_multiplier(sa, sb, sy, False)
    rq = bias_requant(np.zeros(1, np.int64), np.array([scale]), 1, np.array([k * 255 * 255]), None, True)
    return _Int8(ba, bb, batch, m, k, n, za, zb, zy, rq)


def _strides(op: Operator, q: _Int8) -> tuple[int, int]:
    """(element stride of a row, of a column) of the rhs seen as K x N."""
    return (1, q.k) if op.attrs["adj_y"] else (q.n, 1)


def _signature(g: Graph, op: Operator) -> tuple[list[KernelArg], te.Tensor]:
    """The operands as flat int8 arguments and a stand-in output (the body is TIR)."""
    a, b, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    A = te.placeholder((a.size,), "int8", name="a")
    args = [KernelArg(A, tensor=a.name), KernelArg(te.placeholder((b.size,), "int8", name="b"), tensor=b.name)]
    return args, te.compute((y.size,), lambda i: A[0], name="out")


def _dsp(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """int8 on a DSP CPU, depth a multiple of 4: per batch the rhs packed into planned scratch as
    the weight rows of utvm_mac4_u_s8 (four columns interleaved word by word) and the sums of its
    columns times -(lhs zero point) plus depth x both zero points as the sums' start
    (utvm_pack4_s8), an adjoint lhs transposed; per lhs row its sum times -(rhs zero point)
    (utvm_sums_s8), then per block of four columns one utvm_mac4_u_s8 over the row's depth / 4
    words."""
    q = _int8(g, op, target)
    if q is None or not target.dsp or q.k % 4:
        return None
    blocks = -(-q.n // CHANNEL_BLOCK)
    rr, rc = _strides(op, q)
    args, out = _signature(g, op)
    args += q.rq.args
    args += [KernelArg(te.placeholder((blocks * CHANNEL_BLOCK * q.k,), "int8", name="bp"), role="bp", scratch=True),
             KernelArg(te.placeholder((blocks * CHANNEL_BLOCK,), I32, name="cs"), role="cs", scratch=True)]
    if op.attrs["adj_x"]:
        args.append(KernelArg(te.placeholder((q.m * q.k,), "int8", name="at"), role="at", scratch=True))

    def build(bufs: dict[str, tirx.Var]) -> tuple[tirx.Stmt, list[tirx.Buffer]]:
        bp, cs, yb = bufs["bp"], bufs["cs"], bufs["out"]
        acc = tirx.decl_buffer((CHANNEL_BLOCK,), I32, "acc")
        row_sum = tirx.decl_buffer((1,), I32, "rs")

        def one(idx: list[tirx.PrimExpr]) -> tirx.Stmt:
            a_at, b_at, y_at = q.offsets(idx)
            stmts = [_call("utvm_pack4_s8", tirx.address_of(bp[0]), tirx.address_of(cs[0]),
                           tirx.address_of(bufs["b"][b_at]), q.k, q.n, rr, rc, -q.za, q.k * q.za * q.zb)]
            transpose, row_at = q.lhs_rows(op, bufs, a_at)
            stmts += transpose

            def row(i: tirx.PrimExpr) -> tirx.Stmt:
                x_at = row_at(i)
                head = [_call("utvm_sums_s8", tirx.address_of(row_sum[0]), x_at, 1, q.k, 0, -q.zb, 0)]

                def block(oo: tirx.PrimExpr) -> tirx.Stmt:
                    o0 = oo * CHANNEL_BLOCK
                    body = [tirx.BufferStore(acc, cs[o0 + c] + row_sum[0], [c]) for c in range(CHANNEL_BLOCK)]
                    body.append(_call("utvm_mac4_u_s8", tirx.address_of(acc[0]), x_at,
                                      tirx.address_of(bp[oo * (CHANNEL_BLOCK * q.k)]), q.k // 4))
                    for c in range(CHANNEL_BLOCK):
                        value = to_tir(q.rq.output_s8(acc[c], imm(0), q.zy, -128, 127), bufs)
                        body.append(guard(o0 + c, q.n, c, tirx.BufferStore(yb, value, [y_at + i * q.n + o0 + c])))
                    return seq(body)

                return seq([*head, loop(blocks, "oo", block)])

            return seq([*stmts, loop(q.m, "i", row)])

        return q.over_batch(one), [acc, row_sum]

    return KernelDef(args, out, g.tensors[op.outputs[0]].name, root_schedule(build))


def _helium(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """int8 on Helium: per batch the rhs as N rows of depth (transposed into planned scratch
    unless adj_y), their sums times -(lhs zero point) plus depth x both zero points, an adjoint
    lhs transposed; per lhs row those plus its sum times -(rhs zero point) as the biases of one
    utvm_mve_matvec_s8 call (utvm_mve_gemm_s8 of one row: four columns per input load, VMLADAVA)."""
    q = _int8(g, op, target)
    if q is None or not target.helium:
        return None
    rr, rc = _strides(op, q)
    args, out = _signature(g, op)
    in_place = bool(op.attrs["adj_y"])
    scratch = [("cs", (q.n,), I32), ("bm", (q.n,), I32), ("rs", (1,), I32)]
    if not in_place:
        scratch.append(("bt", (q.n * q.k,), "int8"))
    if op.attrs["adj_x"]:
        scratch.append(("at", (q.m * q.k,), "int8"))
    args += [KernelArg(te.placeholder(shape, dtype, name=name), role=name, scratch=True)
             for name, shape, dtype in scratch]
    m0, s0 = fp.quantize_multiplier(fp.conv_real_multiplier(*(t.quant.scalar()[0] for t in (  # type: ignore[union-attr]
        g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]])), False))
    mode = mve.RQ_LEFT if s0 > 0 else 0

    def build(bufs: dict[str, tirx.Var]) -> tuple[tirx.Stmt, list[tirx.Buffer]]:
        bb, cs, bm, rs, yb = bufs["b"], bufs["cs"], bufs["bm"], bufs["rs"], bufs["out"]

        def one(idx: list[tirx.PrimExpr]) -> tirx.Stmt:
            a_at, b_at, y_at = q.offsets(idx)
            stmts = []
            if in_place:
                rhs, rhs_at = bb, b_at
            else:
                stmts.append(_call("utvm_copy2d_s8", tirx.address_of(bufs["bt"][0]), tirx.address_of(bb[b_at]),
                                   q.n, q.k, rc, rr))
                rhs, rhs_at = bufs["bt"], imm(0)
            stmts.append(_call("utvm_sums_s8", tirx.address_of(cs[0]), tirx.address_of(rhs[rhs_at]), q.n, q.k, q.k,
                               -q.za, q.k * q.za * q.zb))
            transpose, row_at = q.lhs_rows(op, bufs, a_at)
            stmts += transpose

            def row(i: tirx.PrimExpr) -> tirx.Stmt:
                x_at = row_at(i)
                bias = tirx.address_of(bm[0])
                return seq([
                    _call("utvm_sums_s8", tirx.address_of(rs[0]), x_at, 1, q.k, 0, -q.zb, 0),
                    _call("utvm_offset_s32", bias, tirx.address_of(cs[0]), rs[0], q.n),
                    _call("utvm_mve_matvec_s8", tirx.address_of(yb[y_at + i * q.n]), x_at,
                          tirx.address_of(rhs[rhs_at]), q.k, q.n, bias, m0, s0, mode, q.zy)])

            return seq([*stmts, loop(q.m, "i", row)])

        return q.over_batch(one), []

    return KernelDef(args, out, g.tensors[op.outputs[0]].name, root_schedule(build))


def _call(name: str, *args: tirx.PrimExpr | int) -> tirx.Stmt:
    return tirx.Evaluate(tirx.call_extern(I32, name, *(imm(a) if isinstance(a, int) else a for a in args)))


def macs(g: Graph, op: Operator) -> int:
    _, _, batch, m, k, n = _dims(g, op)
    return _prod(batch) * m * k * n


OPS = (
    OpDef(
        kind="batch_matmul",
        summary="batched matrix product with broadcasting",
        tflite=(SourceOp("BATCH_MATMUL", from_tflite, ("int8", "int16", "float32"),
                         "ranks 2 to 5, adj_x/adj_y, per-tensor quantization"),),
        variants=(
            Variant("helium", _helium, "Cortex-M52/M55/M85"),
            Variant("dsp_mac4", _dsp, "Cortex-M4/M7/M33"),
            Variant("generic", _kernel, types=("int8", "int16", "float32")),
        ),
        check=check,
        reference="TFLite Micro batch_matmul.cc: reference_ops::BatchMatMul (int8, int16 with int64 accumulators, "
                  "float32)",
        macs=macs,
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("_dims", "operand rank outside 2..5",
               "`TF_LITE_ENSURE(lhs_rank >= 2 && <= 5)`, same for rhs [k/batch_matmul.cc:206-209]",
               "refused-by-TFLM", "kept"),
    Validation("_dims", "contracted depths differ",
               "`TF_LITE_ENSURE_EQ(accum_dim_lhs, accum_dim_rhs)` [k/batch_matmul.cc:276]",
               "refused-by-TFLM", "kept"),
    Validation("_dims", "batch dimensions that do not broadcast",
               "`TF_LITE_ENSURE_EQ(rhs_dim, 1)` where lhs and rhs differ [k/batch_matmul.cc:264]",
               "refused-by-TFLM", "kept"),
    Validation("check", "stored output shape is not batch x M x N",
               "no check of the stored shape; the reference loops over the computed one [k/batch_matmul.cc]",
               "would-compute-differently", "kept: utvm sizes the output from the stored shape"),
    Validation("check", "types other than int8/int16/float32 or operands of different types",
               "`TF_LITE_ENSURE(lhs type float32/int8/int16)`, lhs == rhs == output [k/batch_matmul.cc:191-201]",
               "refused-by-TFLM", "kept"),
    Validation("check", "quantized operands without quantization parameters",
               "params.scale 0: GetQuantizedConvolutionMultipler divides by 0, QuantizeMultiplier's `TFLITE_CHECK` aborts [k/batch_matmul.cc:224, kernel_util.cc]",
               "refused-by-TFLM", "kept"),
    Validation("check", "per-channel operands (ONNX only: a TFLite tensor read per tensor keeps its first scale, as TfLiteTensor.params)",
               "unreachable from TFLite; onnxruntime MatMulInteger takes per-column B zero points, utvm's kernel is per tensor",
               "would-compute-differently", "kept"),
    Validation("check", "int16 operands with a zero point",
               "`TF_LITE_ENSURE_EQ(zero_point, 0)` for lhs, rhs, output [k/batch_matmul.cc:242-244]",
               "refused-by-TFLM", "kept"),
)
