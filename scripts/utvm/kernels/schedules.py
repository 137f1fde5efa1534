"""Schedules and TIR building blocks shared by the kernels of several operators.

Reductions scheduled for Cortex-M (outputs computed right after their accumulators, windows
unrolled, output channels in blocks of CHANNEL_BLOCK), dot products of packed int8 lanes
(utvm/kernels.h), and helpers for kernels written directly as TIR loop nests (one
interior-or-border test per output pixel, blocks of accumulators stored with requantization).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import tvm
from tvm import te, tirx

from ..errors import UtvmError
from .requant import I32, Requant, imm

FULL_UNROLL = 16
UNROLL = 4


def unroll_reduction(sch: tvm.s_tir.Schedule, loops: list) -> None:  # type: ignore[type-arg]
    """Unroll the kernel-window loops and the innermost channel loop (by UNROLL), so that
    the multiply-accumulates are not dominated by loop overhead."""
    for loop in loops[:-1]:
        extent = sch.get(loop).extent
        if isinstance(extent, tirx.IntImm) and int(extent) <= FULL_UNROLL:
            sch.unroll(loop)
    last = loops[-1]
    extent = sch.get(last).extent
    if not isinstance(extent, tirx.IntImm):
        return
    n = int(extent)
    if n <= FULL_UNROLL:
        sch.unroll(last)
    elif n % UNROLL == 0:
        _, inner = sch.split(last, factors=[None, UNROLL])
        sch.unroll(inner)


def reduction_schedule(acc_name: str, out_name: str, pad_name: str | None,
                        keep_axes: int, unroll: bool = True) -> Callable[[tvm.s_tir.Schedule], None]:
    """Inline the padding and compute each output right after its accumulator."""

    def apply(sch: tvm.s_tir.Schedule) -> None:
        if pad_name:
            sch.compute_inline(sch.get_sblock(pad_name))
        acc = sch.get_sblock(acc_name)
        loops = sch.get_loops(acc)
        sch.reverse_compute_at(sch.get_sblock(out_name), loops[keep_axes - 1])
        # zero the accumulator before its reduction loop rather than on its first iteration
        sch.decompose_reduction(acc, loops[keep_axes])
        if unroll:
            unroll_reduction(sch, sch.get_loops(acc)[keep_axes:])
        fuse_accumulate(sch, acc)

    return apply


def dot4(a: tirx.PrimExpr, b: tirx.PrimExpr) -> tirx.PrimExpr:
    """Dot product of the four int8 lanes of two int32 words (utvm/kernels.h: SMLAD on
    Cortex-M with the DSP extension, plain C elsewhere)."""
    return tirx.call_pure_extern(I32, "utvm_dot4_s8", a, b)


def dot16(a: tirx.PrimExpr, b: tirx.PrimExpr) -> tirx.PrimExpr:
    """Dot product of the 16 int8 lanes of four consecutive int32 words starting at the two
    word loads ``a`` and ``b``. Only a marker: :func:`fuse_accumulate` turns the reduction
    step into ``utvm_dot16_acc_s8(acc, &a, &b)`` (one Helium VMLADAVA on Cortex-M55)."""
    return tirx.call_pure_extern(I32, "utvm_dot16_s8", a, b)


#: extern dot products -> (accumulating form in utvm/kernels.h, operands passed by address)
_ACC_FORMS = {"utvm_dot4_s8": ("utvm_dot4_acc_s8", False), "utvm_dot4w_s8": ("utvm_dot4w_acc_s8", False),
              "utvm_dot16_s8": ("utvm_dot16_acc_s8", True)}


def fuse_accumulate(sch: tvm.s_tir.Schedule, block: tvm.s_tir.SBlockRV) -> None:
    """Rewrite the update ``acc = acc + f(a, b)`` of ``block`` into ``acc = f_acc(acc, a, b)``
    for the dot products of :data:`_ACC_FORMS`: the multiply-accumulate instructions then add
    into the accumulator themselves (TE reductions only express ``acc + value``)."""
    stmt = sch.get(block)
    body = stmt.body
    matched = isinstance(body, tirx.BufferStore) and isinstance(body.value, tvm.ir.prim.expr.Add)
    if matched:
        lhs, call = body.value.a, body.value.b
        matched = (isinstance(lhs, tvm.ir.expr.TensorLoad) and lhs.source.same_as(body.buffer)
                   and isinstance(call, tvm.ir.expr.Call) and len(call.args) >= 3
                   and isinstance(call.args[0], tvm.ir.expr.StringImm) and call.args[0].value in _ACC_FORMS)
    if not matched:
        if "utvm_dot16_s8" in str(body):  # a marker only, no such C function
            raise UtvmError(f"internal: block {stmt.name_hint} keeps a utvm_dot16_s8 marker")
        return
    fname, by_address = _ACC_FORMS[call.args[0].value]
    operands = [tirx.address_of(a) if by_address else a for a in call.args[1:]]
    value = tirx.call_pure_extern(I32, fname, lhs, *operands)
    new = tvm.s_tir.SBlock(stmt.iter_vars, stmt.reads, stmt.writes, stmt.name_hint,
                           tirx.BufferStore(body.buffer, value, body.indices), stmt.init,
                           stmt.alloc_buffers, stmt.match_buffers, stmt.annotations)
    sch.state.replace(sch.get_sref(block), new, {stmt: new})


def packed_int8(v: int) -> int:
    """The int32 word whose four int8 lanes all hold v."""
    return int(np.full(4, v, dtype=np.int8).view(np.int32)[0])


#: output channels computed together by the packed int8 kernels (each input word is loaded
#: and sign-extended once for all of them)
CHANNEL_BLOCK = 4
#: at most this many dot products unrolled in one blocked loop body (code size)
UNROLL_BUDGET = 64


def block_channels(sch: tvm.s_tir.Schedule, pad_name: str | None, keep_axes: int,
                   block: int = CHANNEL_BLOCK) -> tuple[tvm.s_tir.SBlockRV, tvm.s_tir.LoopRV, int]:
    """The common start of the blocked schedules: padding inlined, the output-channel axis split
    into blocks of ``block`` (CHANNEL_BLOCK) whose inner loop moves inside the reduction, the output computed
    per block, the accumulators zeroed before the reduction. Returns the accumulator block, the
    inner channel loop and the number of reduction axes."""
    if pad_name:
        sch.compute_inline(sch.get_sblock(pad_name))
    acc = sch.get_sblock("acc")
    loops = sch.get_loops(acc)
    spatial, reduce = loops[:keep_axes], loops[keep_axes:]
    oo, oi = sch.split(spatial[-1], factors=[None, block])
    sch.reorder(oo, *reduce, oi)
    sch.reverse_compute_at(sch.get_sblock("out"), oo)
    sch.decompose_reduction(acc, reduce[0])
    return acc, oi, len(reduce)


def blocked_schedule(pad_name: str | None, keep_axes: int, channels: int,
                     block: int = CHANNEL_BLOCK) -> Callable[[tvm.s_tir.Schedule], None]:
    """Schedule of a packed int8 kernel: ``block`` (CHANNEL_BLOCK) output channels accumulate
    side by side in the innermost loop, the requantization follows per block."""

    def apply(sch: tvm.s_tir.Schedule) -> None:
        acc, oi, n_reduce = block_channels(sch, pad_name, keep_axes, block)
        sch.unroll(oi)
        reduce = sch.get_loops(acc)[keep_axes: keep_axes + n_reduce]
        extents = [int(sch.get(loop).extent) for loop in reduce]
        body = block
        for loop, extent in zip(reversed(reduce), reversed(extents)):  # innermost first
            if extent > FULL_UNROLL or body * extent > UNROLL_BUDGET:
                break
            sch.unroll(loop)
            body *= extent
        fuse_accumulate(sch, acc)

    if channels % block:
        return reduction_schedule("acc", "out", pad_name, keep_axes)
    return apply


def interleave_rows(w: np.ndarray) -> np.ndarray:
    """int8 weights (rows, ..., depth) with depth % 4 == 0 and rows % CHANNEL_BLOCK == 0,
    reordered for utvm_mac4_s8: per block of CHANNEL_BLOCK rows, word k of each row in turn
    (the same bytes, another order)."""
    rows, depth = w.shape[0], w.shape[-1]
    mid = w.shape[1:-1]
    blocks = w.reshape(rows // CHANNEL_BLOCK, CHANNEL_BLOCK, *mid, depth // 4, 4)
    order = (0, *range(2, 2 + len(mid) + 1), 1, 3 + len(mid))
    return np.ascontiguousarray(blocks.transpose(order)).reshape(w.shape)


def widen_words(w: np.ndarray) -> np.ndarray:
    """int8 weights in words of four (e.g. :func:`interleave_rows`' order) widened for
    utvm_mac4w_s8: each word (w0, w1, w2, w3) becomes two int32 words holding the int16 pairs
    (w0, w2) and (w1, w3), the halves SMLAD multiplies with an input word split by SXTB16."""
    words = np.ascontiguousarray(w, dtype=np.int8).reshape(-1, 4)
    return np.ascontiguousarray(words[:, [0, 2, 1, 3]].astype("<i2")).view("<i4").reshape(-1)


def dot4w(x: tirx.PrimExpr, we: tirx.PrimExpr, wo: tirx.PrimExpr) -> tirx.PrimExpr:
    """Dot product of the int8 lanes of ``x`` with the widened weight words ``we``, ``wo``
    (:func:`widen_words`)."""
    return tirx.call_pure_extern(I32, "utvm_dot4w_s8", x, we, wo)


#: builds the statement (or call) replacing a blocked reduction: from the iteration variables
#: of the block (spatial axes with the channel block last, then the reduction axes), the
#: accumulator buffer and the parameters by name
MakeCall = Callable[[list[tirx.Var], tirx.Buffer, dict[str, tirx.Buffer]], "tirx.PrimExpr | tirx.Stmt"]


def mac4_schedule(pad_name: str | None, keep_axes: int, make_call: MakeCall,
                   inner_axes: int = 1) -> Callable[[tvm.s_tir.Schedule], None]:
    """Schedule of a packed int8 kernel whose innermost ``inner_axes`` reduction axes, for
    CHANNEL_BLOCK output channels, are replaced by helper calls (utvm/kernels.h) that
    ``make_call`` builds: e.g. one utvm_mac4_s8 call for the input words of one kernel tap.
    The remaining (kernel-window) reduction loops are unrolled."""

    def apply(sch: tvm.s_tir.Schedule) -> None:
        acc, _, _ = block_channels(sch, pad_name, keep_axes)
        out = sch.get_sblock("out")
        sch.unroll(sch.get_loops(out)[-1])
        loops = sch.get_loops(acc)
        outer = sch.blockize(loops[len(loops) - 1 - inner_axes])  # the helper's loops, the channel block
        for loop in sch.get_loops(outer)[keep_axes:]:  # the kernel window
            extent = sch.get(loop).extent
            if isinstance(extent, tirx.IntImm) and int(extent) <= FULL_UNROLL:
                sch.unroll(loop)
        stmt = sch.get(outer)
        params = {region.source.name: region.source for region in stmt.reads}
        call = make_call([iv.var for iv in stmt.iter_vars], stmt.writes[0].source, params)
        body = call if isinstance(call, tirx.Stmt) else tirx.Evaluate(call)
        new = tvm.s_tir.SBlock(stmt.iter_vars, stmt.reads, stmt.writes, stmt.name_hint, body,
                               None, stmt.alloc_buffers, stmt.match_buffers, stmt.annotations)
        sch.state.replace(sch.get_sref(outer), new, {stmt: new})

    return apply


_PRIM = tvm.ir.prim.expr
_BINARY_NODES = tuple(getattr(_PRIM, name) for name in (
    "Add", "Sub", "Mul", "RShift", "LShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "Min", "Max",
    "FloorDiv", "FloorMod", "LT", "LE", "GT", "GE", "EQ", "NE", "And", "Or"))


def to_tir(e: tirx.PrimExpr, bufs: dict[str, tirx.Var]) -> tirx.PrimExpr:
    """A TE expression (e.g. from :meth:`Requant.output_s8`) with each read of a placeholder
    turned into a read of the kernel parameter of the same name: for loop nests written
    directly in TIR (:func:`root_schedule`)."""
    if isinstance(e, _BINARY_NODES):
        return type(e)(to_tir(e.a, bufs), to_tir(e.b, bufs))
    if isinstance(e, _PRIM.Cast):
        return _PRIM.Cast(e.ty, to_tir(e.value, bufs))
    if isinstance(e, _PRIM.Select):
        return _PRIM.Select(to_tir(e.condition, bufs), to_tir(e.true_value, bufs), to_tir(e.false_value, bufs))
    if isinstance(e, tvm.ir.expr.Call):
        args = list(e.args)
        if e.op.name == "te.tensor_load":
            return bufs[args[0].op.name][tuple(to_tir(a, bufs) for a in args[1:])]
        return tvm.ir.expr.Call(e.op, [a if isinstance(a, tvm.ir.expr.StringImm) else to_tir(a, bufs) for a in args],
                                ret_ty=e.ty)
    return e


#: builds a kernel's whole body in TIR: from the parameters by name, the statement and the
#: local buffers it allocates
BuildBody = Callable[[dict[str, tirx.Var]], tuple[tirx.Stmt, list[tirx.Var]]]


def root_schedule(build: BuildBody) -> Callable[[tvm.s_tir.Schedule], None]:
    """A kernel written directly as a TIR loop nest (the TE definition only gives the
    signature and documents the arithmetic): the root block's body is replaced by ``build``'s.
    For control flow that schedules cannot express, such as one interior-or-border test per
    output pixel around the loop over channel blocks."""

    def apply(sch: tvm.s_tir.Schedule) -> None:
        bufs = {p.name: p for p in sch.mod["main"].params}
        root = sch.get_sblock("root")
        stmt = sch.get(root)
        body, local = build(bufs)
        new = tvm.s_tir.SBlock([], [], [], stmt.name_hint, body, None, local, [], stmt.annotations)
        sch.state.replace(sch.get_sref(root), new, {stmt: new})

    return apply


def loop(extent: int, name: str, body: Callable[[tirx.Var], tirx.Stmt],
          kind: tirx.ForKind = tirx.ForKind.SERIAL) -> tirx.Stmt:
    """``for name in range(extent): body(name)`` (the body alone for extent 1)."""
    if extent == 1:
        return body(imm(0))  # type: ignore[arg-type]
    v = tirx.Var(name, I32)
    return tirx.For(v, imm(0), imm(extent), kind, body(v))


def over_pixels(shape: tuple[int, int, int], pixel: Callable[[tirx.Var, tirx.Var, tirx.Var], tirx.Stmt]) -> tirx.Stmt:
    """Loops over batch, output rows and output columns around ``pixel(b, i, j)``."""
    n, oh, ow = shape
    return loop(n, "b", lambda bb: loop(oh, "i", lambda i: loop(ow, "j", lambda j: pixel(bb, i, j))))


def store_block(acc4: tirx.Buffer, rq: Requant, o0: tirx.PrimExpr, out_q: tuple[int, int, int],
                 yb: tirx.Var, bufs: dict[str, tirx.Var], pixel: tuple[tirx.PrimExpr, ...]) -> list[tirx.Stmt]:
    """Requantize the CHANNEL_BLOCK accumulators of one block and store them at output channels
    o0, o0 + 1, ... of ``pixel`` (b, i, j); ``out_q``: output zero point and clamp bounds."""
    zy, lo, hi = out_q
    stores = []
    for k in range(CHANNEL_BLOCK):
        value = rq.output_s8(acc4[k], o0 + k, zy, lo, hi)
        stores.append(tirx.BufferStore(yb, to_tir(value, bufs), [*pixel, o0 + k]))
    return stores


def seq(stmts: list[tirx.Stmt]) -> tirx.Stmt:
    return tirx.SeqStmt(stmts) if len(stmts) > 1 else stmts[0]


def pad_from(x: te.Tensor, pad: tuple[int, int, int, int], fill: te.Tensor) -> tuple[te.Tensor, str]:
    """``x`` (NHWC) padded with ``fill[c]`` in channel c."""
    top, left, bottom, right = pad
    n, h, w, c = x.shape

    def f(b: tirx.PrimExpr, i: tirx.PrimExpr, j: tirx.PrimExpr, k: tirx.PrimExpr) -> tirx.PrimExpr:
        inside = tirx.all(i >= top, i < h + top, j >= left, j < w + left)
        return tirx.if_then_else(inside, x[b, i - top, j - left, k], fill[k])

    return te.compute((n, h + top + bottom, w + left + right, c), f, name="pad"), "pad"


def pad(x: te.Tensor, pad: tuple[int, int, int, int], value: tirx.PrimExpr) -> tuple[te.Tensor, str | None]:
    top, left, bottom, right = pad
    if not any(pad):
        return x, None
    n, h, w, c = x.shape
    name = "pad"

    def f(b: tirx.PrimExpr, i: tirx.PrimExpr, j: tirx.PrimExpr, k: tirx.PrimExpr) -> tirx.PrimExpr:
        inside = tirx.all(i >= top, i < h + top, j >= left, j < w + left)
        return tirx.if_then_else(inside, x[b, i - top, j - left, k], value)

    return te.compute((n, h + top + bottom, w + left + right, c), f, name=name), name



Window = tuple[int, int, int, int, int, int, int, int, int, int]


def pad_sides(window: Window, out_hw: tuple[int, int]) -> tuple[bool, bool, bool, bool]:
    """Which sides of the input (top, bottom, left, right) some kernel tap can fall beyond;
    ``window``: (kh, kw, sh, sw, dh, dw, top, left, h, w)."""
    kh, kw, sh, sw, dh, dw, top, left, h, wd = window
    oh, ow = out_hw
    return (top > 0, (oh - 1) * sh + (kh - 1) * dh - top >= h,
            left > 0, (ow - 1) * sw + (kw - 1) * dw - left >= wd)


def window_conds(ih: tirx.PrimExpr, iw: tirx.PrimExpr, h: int, w: int,
                  sides: tuple[bool, bool, bool, bool]) -> list[tirx.PrimExpr]:
    """The tests that input position (ih, iw) is inside, on the sides that need them."""
    conds = []
    for need, cond in zip(sides, (ih >= 0, ih < h, iw >= 0, iw < w)):
        if need:
            conds.append(cond)
    return conds


def interior_or_border(i: tirx.PrimExpr, j: tirx.PrimExpr, window: Window, sides: tuple[bool, bool, bool, bool],
                        body: Callable[[bool], tirx.Stmt]) -> tirx.Stmt:
    """``body(False)`` (no padding tests) for an output pixel (i, j) whose whole window lies
    inside the input, else ``body(True)``: one test per pixel instead of one per tap."""
    if not any(sides):
        return body(False)
    kh, kw, sh, sw, dh, dw, top, left, h, wd = window
    inside = window_conds(i * sh - top, j * sw - left, h, wd, (sides[0], False, sides[2], False))
    inside += window_conds(i * sh + (kh - 1) * dh - top, j * sw + (kw - 1) * dw - left, h, wd,
                            (False, sides[1], False, sides[3]))
    return tirx.IfThenElse(tirx.all(*inside), body(False), body(True))

