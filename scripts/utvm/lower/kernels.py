"""Operators as TVM tensor expressions, one kernel per (fused) operator.

int8 operators compute in integers exactly as TFLite's reference kernels do: int8 x int8
products accumulated in int32, the input zero point folded into the bias at compile time,
per-channel fixed-point requantization, then the output zero point and the activation clamp.
float32 operators accumulate in the same order as TFLite's reference kernels.

Each builder returns a :class:`KernelDef`: TE placeholders bound to graph tensors (or to
constants the lowering adds, such as folded biases), the output, and the schedule to apply.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import tvm
from tvm import te, tirx

from ..errors import UtvmError
from ..ir import Graph, Operator, Tensor
from . import fixedpoint as fp
from .kerneldef import KernelArg, KernelDef
from .softmax import softmax_float, softmax_int8
from .transpose import transpose

I32 = "int32"


def _c(v: int | float, dtype: str = I32) -> tirx.PrimExpr:
    return tirx.const(v, dtype)


def _clamp(x: tirx.PrimExpr, lo: tirx.PrimExpr | int | float, hi: tirx.PrimExpr | int | float) -> tirx.PrimExpr:
    return te.max(te.min(x, hi), lo)


def _clamp_s8(x: tirx.PrimExpr, lo: int, hi: int) -> tirx.PrimExpr:
    """An int32 value clamped to [lo, hi] within the int8 range, as int8: saturation to
    int8 (one SSAT, utvm/kernels.h) and the activation bounds that remain."""
    v = tirx.call_pure_extern(I32, "utvm_sat_s8", x)
    if hi < 127:
        v = te.min(v, hi)
    if lo > -128:
        v = te.max(v, lo)
    return v.astype("int8")


# ---------------------------------------------------------------------------------------
# quantization helpers


def activation_range_int8(act: str, scale: float, zero_point: int) -> tuple[int, int]:
    """TFLite's CalculateActivationRangeQuantized for int8 outputs."""

    def q(v: float) -> int:
        return zero_point + int(fp.tflite_round(v / scale))

    lo, hi = -128, 127
    if act == "relu":
        lo = max(lo, q(0.0))
    elif act == "relu6":
        lo, hi = max(lo, q(0.0)), min(hi, q(6.0))
    elif act == "relu_n1_to_1":
        lo, hi = max(lo, q(-1.0)), min(hi, q(1.0))
    return lo, hi


def activation_range_float(act: str) -> tuple[float, float]:
    return {"none": (-math.inf, math.inf), "relu": (0.0, math.inf), "relu6": (0.0, 6.0),
            "relu_n1_to_1": (-1.0, 1.0)}[act]


def _float_clamp(x: tirx.PrimExpr, act: str) -> tirx.PrimExpr:
    lo, hi = activation_range_float(act)
    if hi != math.inf:
        x = te.min(x, _c(hi, "float32"))
    if lo != -math.inf:
        x = te.max(x, _c(lo, "float32"))
    return x


@dataclass
class _Requant:
    """Bias and requantization of an int8 layer: kernel args, and per output channel ``o``
    the expressions (bias, multiplier, shift)."""

    args: list[KernelArg]
    at: Callable[[tirx.PrimExpr], tuple[tirx.PrimExpr, tirx.PrimExpr | int, tirx.PrimExpr | int]]
    #: every (acc + bias) * 2**left_shift stays below 2**30 in magnitude: cheap requantization
    small: bool = False
    #: every shift is <= 0 (a right shift only)
    right_only: bool = False
    #: every shift is < 0 (a right shift by at least one)
    right_positive: bool = False
    #: the third value of ``at`` is the right shift minus one (right_positive packed shifts)
    right_minus_one: bool = False
    #: (small only) every multiplier m is in [2**30, 2**31): the high product is one SMMLAR
    #: (utvm_srdhm2_small), per-channel multipliers stored as 2 * m mod 2**32
    doubled: bool = False

    def _high(self, a: tirx.PrimExpr, m: tirx.PrimExpr | int) -> tirx.PrimExpr:
        """SaturatingRoundingDoublingHighMul(a, m) for |a| < 2**30 (``m`` as ``at`` gives it)."""
        if not self.doubled:
            return tirx.call_pure_extern(I32, "utvm_srdhm_small", a, fp.c32(m))
        if isinstance(m, int):
            m = (2 * m) - (1 << 32)
        return tirx.call_pure_extern(I32, "utvm_srdhm2_small", a, fp.c32(m))

    def output_s8(self, acc: tirx.PrimExpr, o: tirx.PrimExpr, zy: int, lo: int, hi: int) -> tirx.PrimExpr:
        """The int8 output: MultiplyByQuantizedMultiplier(acc + bias[o], ...) + zy, clamped.

        With the cheap requantization and a right shift e >= 1, the rounding division by
        2**e and the output zero point take four instructions: y = x - (x < 0), then
        ((y >> (e - 1)) + 1 + 2 * zy) >> 1 (exact: see _rounding_divide_by_pot_small), the last
        shift folded into the saturation (SSAT's shifted operand)."""
        bias_o, m, s = self.at(o)
        if self.small and (self.right_minus_one or (isinstance(s, int) and s < 0)):
            right_m1: tirx.PrimExpr | int = s if self.right_minus_one else -s - 1
            high = self._high(acc + bias_o, m)
            y = high + (high >> _c(31))
            q = y if isinstance(right_m1, int) and right_m1 == 0 else y >> fp.c32(right_m1)
            v = tirx.call_pure_extern(I32, "utvm_sat_s8", (q + _c(1 + 2 * zy)) >> _c(1))
            if hi < 127:
                v = te.min(v, hi)
            if lo > -128:
                v = te.max(v, lo)
            return v.astype("int8")
        return _clamp_s8(self.apply(acc, o) + zy, lo, hi)

    def apply(self, acc: tirx.PrimExpr, o: tirx.PrimExpr) -> tirx.PrimExpr:
        """MultiplyByQuantizedMultiplier(acc + bias[o], multiplier[o], shift[o])."""
        assert not self.right_minus_one
        bias_o, m, s = self.at(o)
        x = acc + bias_o
        if not self.small:
            return fp.multiply_by_quantized_multiplier(x, m, s)
        if isinstance(s, int):
            a = x * (1 << s) if s > 0 else x
            right: tirx.PrimExpr | int = max(-s, 0)
        elif self.right_only:
            a, right = x, _c(0) - s
        else:
            a, right = x << tirx.max(s, _c(0)), tirx.max(_c(0) - s, _c(0))
        high = self._high(a, m)
        return _rounding_divide_by_pot_small(high, right, self.right_positive)


def _rounding_divide_by_pot_small(x: tirx.PrimExpr, e: tirx.PrimExpr | int, positive: bool = False) -> tirx.PrimExpr:
    """gemmlowp RoundingDivideByPOT(x, e) for |x| < 2**30 (x + 2**(e-1) cannot overflow):
    floor((x + 2**(e-1) - (x < 0)) / 2**e), which rounds half away from zero as gemmlowp does.
    ``positive``: e >= 1 for sure."""
    if isinstance(e, int):
        if e == 0:
            return x
        return (x + (_c(1 << (e - 1)) + (x >> _c(31)))) >> _c(e)
    if positive:
        return (x + ((_c(1) << e >> _c(1)) + (x >> _c(31)))) >> e
    mask = (_c(1) << e) - _c(1)
    # the offset is 2**(e-1) - (x < 0) for e >= 1 and must be 0 for e == 0: masked by 2**e - 1
    offset = ((_c(1) << e >> _c(1)) + (x >> _c(31))) & mask
    return (x + offset) >> e


def _acc_bound(weights_abs_sum: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """Largest |acc + folded bias| per output channel: sum((x - zx) * w) + bias with
    |x - zx| <= 255 (padding contributes zx - zx = 0)."""
    return 255 * weights_abs_sum.astype(np.int64) + np.abs(bias.astype(np.int64))


#: bits of a packed bias word that hold the right shift (see _bias_requant)
SHIFT_BITS = 5


def _bias_requant(folded: np.ndarray, scales: np.ndarray, channels: int, bound: np.ndarray | None = None,
                  dead: np.ndarray | None = None, dsp: bool = False) -> _Requant:
    """Constants of a layer's bias and per-channel requantization, kept small for flash.

    Per-tensor values become immediates. Per-channel multipliers are an int32 array; per-channel
    right shifts (0..31) are packed into the low bits of the bias words when every bias fits
    in the remaining bits, otherwise they are a separate int8 array.

    ``bound`` (per channel, see :func:`_acc_bound`), when known, enables the cheaper
    requantization. ``dead`` marks the channels whose weights are all zero: their output is
    a constant, requantized from a small bias instead (pruned channels often have biases
    near 2**30, which would rule the cheaper requantization out for the whole layer).
    ``dsp``: the target has the DSP extension (SMMLAR), see :attr:`_Requant.doubled`.
    """
    if folded.size != channels:
        raise UtvmError(f"bias of {folded.size} values for {channels} channels")
    pairs = [fp.quantize_multiplier(float(v)) for v in scales]
    mults = np.array([m for m, _ in pairs], dtype=np.int64)
    shifts = np.array([sh for _, sh in pairs], dtype=np.int64)
    if mults.size not in (1, channels):
        raise UtvmError(f"per-channel scales ({mults.size}) do not match {channels} channels")
    if bound is not None and dead is not None and mults.size == channels and np.any(dead):
        # acc is 0: the output is clamp(v + zy) with v the requantized bias; v clipped to
        # +-255 gives the same clamped output for any zero point, and v = MBQM(4v, 2**30, -1)
        v = np.clip(fp.np_multiply_by_quantized_multiplier(folded[dead], mults[dead], shifts[dead]), -255, 255)
        folded, mults, shifts, bound = folded.copy(), mults.copy(), shifts.copy(), bound.copy()
        folded[dead], mults[dead], shifts[dead], bound[dead] = 4 * v, 1 << 30, -1, np.abs(4 * v)
    bp = te.placeholder((channels,), I32, name="bias")
    args: list[KernelArg] = []
    limit = 1 << (31 - SHIFT_BITS)
    packable = bool(np.all(shifts <= 0) and np.all(-shifts < (1 << SHIFT_BITS))
                    and np.all(folded < limit) and np.all(folded >= -limit))
    uniform_m = bool(np.all(mults == mults[0]))
    small = bound is not None and bool(np.all((bound << np.maximum(shifts, 0)) < (1 << 30)))
    doubled = dsp and small and bool(np.all((mults >= (1 << 30)) & (mults < (1 << 31))))
    if uniform_m:
        m_at: Callable[[tirx.PrimExpr], tirx.PrimExpr | int] = lambda o: int(mults[0])  # noqa: E731
    else:
        mp = te.placeholder((channels,), I32, name="mult")
        stored = 2 * mults - (1 << 32) if doubled else mults
        args.append(KernelArg(mp, constant=stored.astype(np.int32), role="mult"))
        m_at = lambda o: mp[o]  # noqa: E731
    rq = _bias_requant_at(bp, args, m_at, folded, shifts, small, packable)
    rq.doubled = doubled
    return rq


def _bias_requant_at(bp: te.Tensor, args: list[KernelArg], m_at: Callable[[tirx.PrimExpr], tirx.PrimExpr | int],
                     folded: np.ndarray, shifts: np.ndarray, small: bool, packable: bool) -> _Requant:
    """The bias and shift part of :func:`_bias_requant`."""
    channels = folded.size
    if bool(np.all(shifts == shifts[0])):
        args.insert(0, KernelArg(bp, constant=folded.astype(np.int32), role="bias"))
        return _Requant(args, lambda o: (bp[o], m_at(o), int(shifts[0])), small)
    if packable:
        mask = (1 << SHIFT_BITS) - 1
        if small and np.all(shifts < 0):
            # right shifts >= 1 stored minus one (see _Requant.output_s8)
            words = (folded << SHIFT_BITS) | (-shifts - 1)
            args.insert(0, KernelArg(bp, constant=words.astype(np.int32), role="bias_shift"))
            return _Requant(args, lambda o: (bp[o] >> SHIFT_BITS, m_at(o), bp[o] & mask), small, True, True,
                            right_minus_one=True)
        words = (folded << SHIFT_BITS) | (-shifts)
        args.insert(0, KernelArg(bp, constant=words.astype(np.int32), role="bias_shift"))
        return _Requant(args, lambda o: (bp[o] >> SHIFT_BITS, m_at(o), _c(0) - (bp[o] & mask)), small, True,
                        bool(np.all(shifts < 0)))
    sp = te.placeholder((channels,), "int8", name="shift")
    args.insert(0, KernelArg(bp, constant=folded.astype(np.int32), role="bias"))
    args.append(KernelArg(sp, constant=shifts.astype(np.int8), role="shift"))
    return _Requant(args, lambda o: (bp[o], m_at(o), sp[o].astype(I32)), small)


def effective_scales(x: Tensor, w: Tensor, y: Tensor, in_double: bool) -> np.ndarray:
    """input_scale * filter_scale[c] / output_scale, computed as TFLite Micro does: in double
    for convolutions, with a float32 product for per-tensor fully connected layers."""
    assert x.quant is not None and w.quant is not None and y.quant is not None
    xs, _ = x.quant.scalar()
    ys, _ = y.quant.scalar()
    return np.array([fp.conv_real_multiplier(xs, float(ws), ys, in_double) for ws in w.quant.scale])


#: reduction loops up to this many iterations are unrolled completely; longer ones by UNROLL
FULL_UNROLL = 16
UNROLL = 4


def _unroll_reduction(sch: tvm.s_tir.Schedule, loops: list) -> None:  # type: ignore[type-arg]
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


def _reduction_schedule(acc_name: str, out_name: str, pad_name: str | None,
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
            _unroll_reduction(sch, sch.get_loops(acc)[keep_axes:])
        _fuse_accumulate(sch, acc)

    return apply


def dot4(a: tirx.PrimExpr, b: tirx.PrimExpr) -> tirx.PrimExpr:
    """Dot product of the four int8 lanes of two int32 words (utvm/kernels.h: SMLAD on
    Cortex-M with the DSP extension, plain C elsewhere)."""
    return tirx.call_pure_extern(I32, "utvm_dot4_s8", a, b)


def dot16(a: tirx.PrimExpr, b: tirx.PrimExpr) -> tirx.PrimExpr:
    """Dot product of the 16 int8 lanes of four consecutive int32 words starting at the two
    word loads ``a`` and ``b``. Only a marker: :func:`_fuse_accumulate` turns the reduction
    step into ``utvm_dot16_acc_s8(acc, &a, &b)`` (one Helium VMLADAVA on Cortex-M55)."""
    return tirx.call_pure_extern(I32, "utvm_dot16_s8", a, b)


#: extern dot products -> (accumulating form in utvm/kernels.h, operands passed by address)
_ACC_FORMS = {"utvm_dot4_s8": ("utvm_dot4_acc_s8", False), "utvm_dot16_s8": ("utvm_dot16_acc_s8", True)}


def _fuse_accumulate(sch: tvm.s_tir.Schedule, block: tvm.s_tir.SBlockRV) -> None:
    """Rewrite the update ``acc = acc + f(a, b)`` of ``block`` into ``acc = f_acc(acc, a, b)``
    for the dot products of :data:`_ACC_FORMS`: the multiply-accumulate instructions then add
    into the accumulator themselves (TE reductions only express ``acc + value``)."""
    stmt = sch.get(block)
    body = stmt.body
    matched = isinstance(body, tirx.BufferStore) and isinstance(body.value, tvm.ir.prim.expr.Add)
    if matched:
        lhs, call = body.value.a, body.value.b
        matched = (isinstance(lhs, tvm.ir.expr.TensorLoad) and lhs.source.same_as(body.buffer)
                   and isinstance(call, tvm.ir.expr.Call) and len(call.args) == 3
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


def _packed_int8(v: int) -> int:
    """The int32 word whose four int8 lanes all hold v."""
    return int(np.full(4, v, dtype=np.int8).view(np.int32)[0])


#: output channels computed together by the packed int8 kernels (each input word is loaded
#: and sign-extended once for all of them)
CHANNEL_BLOCK = 4
#: at most this many dot products unrolled in one blocked loop body (code size)
UNROLL_BUDGET = 64


def _block_channels(sch: tvm.s_tir.Schedule, pad_name: str | None,
                    keep_axes: int) -> tuple[tvm.s_tir.SBlockRV, tvm.s_tir.LoopRV, int]:
    """The common start of the blocked schedules: padding inlined, the output-channel axis split
    into blocks of CHANNEL_BLOCK whose inner loop moves inside the reduction, the output computed
    per block, the accumulators zeroed before the reduction. Returns the accumulator block, the
    inner channel loop and the number of reduction axes."""
    if pad_name:
        sch.compute_inline(sch.get_sblock(pad_name))
    acc = sch.get_sblock("acc")
    loops = sch.get_loops(acc)
    spatial, reduce = loops[:keep_axes], loops[keep_axes:]
    oo, oi = sch.split(spatial[-1], factors=[None, CHANNEL_BLOCK])
    sch.reorder(oo, *reduce, oi)
    sch.reverse_compute_at(sch.get_sblock("out"), oo)
    sch.decompose_reduction(acc, reduce[0])
    return acc, oi, len(reduce)


def _blocked_schedule(pad_name: str | None, keep_axes: int,
                      channels: int) -> Callable[[tvm.s_tir.Schedule], None]:
    """Schedule of a packed int8 kernel: CHANNEL_BLOCK output channels accumulate side by
    side in the innermost loop, the requantization follows per block."""

    def apply(sch: tvm.s_tir.Schedule) -> None:
        acc, oi, n_reduce = _block_channels(sch, pad_name, keep_axes)
        sch.unroll(oi)
        reduce = sch.get_loops(acc)[keep_axes: keep_axes + n_reduce]
        extents = [int(sch.get(loop).extent) for loop in reduce]
        body = CHANNEL_BLOCK
        for loop, extent in zip(reversed(reduce), reversed(extents)):  # innermost first
            if extent > FULL_UNROLL or body * extent > UNROLL_BUDGET:
                break
            sch.unroll(loop)
            body *= extent
        _fuse_accumulate(sch, acc)

    if channels % CHANNEL_BLOCK:
        return _reduction_schedule("acc", "out", pad_name, keep_axes)
    return apply


def _interleave_rows(w: np.ndarray) -> np.ndarray:
    """int8 weights (rows, ..., depth) with depth % 4 == 0 and rows % CHANNEL_BLOCK == 0,
    reordered for utvm_mac4_s8: per block of CHANNEL_BLOCK rows, word k of each row in turn
    (the same bytes, another order)."""
    rows, depth = w.shape[0], w.shape[-1]
    mid = w.shape[1:-1]
    blocks = w.reshape(rows // CHANNEL_BLOCK, CHANNEL_BLOCK, *mid, depth // 4, 4)
    order = (0, *range(2, 2 + len(mid) + 1), 1, 3 + len(mid))
    return np.ascontiguousarray(blocks.transpose(order)).reshape(w.shape)


#: builds the statement (or call) replacing a blocked reduction: from the iteration variables
#: of the block (spatial axes with the channel block last, then the reduction axes), the
#: accumulator buffer and the parameters by name
MakeCall = Callable[[list[tirx.Var], tirx.Buffer, dict[str, tirx.Buffer]], "tirx.PrimExpr | tirx.Stmt"]


def _mac4_schedule(pad_name: str | None, keep_axes: int, make_call: MakeCall,
                   inner_axes: int = 1) -> Callable[[tvm.s_tir.Schedule], None]:
    """Schedule of a packed int8 kernel whose innermost ``inner_axes`` reduction axes, for
    CHANNEL_BLOCK output channels, are replaced by helper calls (utvm/kernels.h) that
    ``make_call`` builds: e.g. one utvm_mac4_s8 call for the input words of one kernel tap.
    The remaining (kernel-window) reduction loops are unrolled."""

    def apply(sch: tvm.s_tir.Schedule) -> None:
        acc, _, _ = _block_channels(sch, pad_name, keep_axes)
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


def _to_tir(e: tirx.PrimExpr, bufs: dict[str, tirx.Var]) -> tirx.PrimExpr:
    """A TE expression (e.g. from :meth:`_Requant.output_s8`) with each read of a placeholder
    turned into a read of the kernel parameter of the same name: for loop nests written
    directly in TIR (:func:`_root_schedule`)."""
    if isinstance(e, _BINARY_NODES):
        return type(e)(_to_tir(e.a, bufs), _to_tir(e.b, bufs))
    if isinstance(e, _PRIM.Cast):
        return _PRIM.Cast(e.ty, _to_tir(e.value, bufs))
    if isinstance(e, _PRIM.Select):
        return _PRIM.Select(_to_tir(e.condition, bufs), _to_tir(e.true_value, bufs), _to_tir(e.false_value, bufs))
    if isinstance(e, tvm.ir.expr.Call):
        args = list(e.args)
        if e.op.name == "te.tensor_load":
            return bufs[args[0].op.name][tuple(_to_tir(a, bufs) for a in args[1:])]
        return tvm.ir.expr.Call(e.op, [a if isinstance(a, tvm.ir.expr.StringImm) else _to_tir(a, bufs) for a in args],
                                ret_ty=e.ty)
    return e


#: builds a kernel's whole body in TIR: from the parameters by name, the statement and the
#: local buffers it allocates
BuildBody = Callable[[dict[str, tirx.Var]], tuple[tirx.Stmt, list[tirx.Var]]]


def _root_schedule(build: BuildBody) -> Callable[[tvm.s_tir.Schedule], None]:
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


def _loop(extent: int, name: str, body: Callable[[tirx.Var], tirx.Stmt],
          kind: tirx.ForKind = tirx.ForKind.SERIAL) -> tirx.Stmt:
    """``for name in range(extent): body(name)`` (the body alone for extent 1)."""
    if extent == 1:
        return body(_c(0))  # type: ignore[arg-type]
    v = tirx.Var(name, I32)
    return tirx.For(v, _c(0), _c(extent), kind, body(v))


def _over_pixels(shape: tuple[int, int, int], pixel: Callable[[tirx.Var, tirx.Var, tirx.Var], tirx.Stmt]) -> tirx.Stmt:
    """Loops over batch, output rows and output columns around ``pixel(b, i, j)``."""
    n, oh, ow = shape
    return _loop(n, "b", lambda bb: _loop(oh, "i", lambda i: _loop(ow, "j", lambda j: pixel(bb, i, j))))


def _store_block(acc4: tirx.Buffer, rq: _Requant, o0: tirx.PrimExpr, out_q: tuple[int, int, int],
                 yb: tirx.Var, bufs: dict[str, tirx.Var], pixel: tuple[tirx.PrimExpr, ...]) -> list[tirx.Stmt]:
    """Requantize the CHANNEL_BLOCK accumulators of one block and store them at output channels
    o0, o0 + 1, ... of ``pixel`` (b, i, j); ``out_q``: output zero point and clamp bounds."""
    zy, lo, hi = out_q
    stores = []
    for k in range(CHANNEL_BLOCK):
        value = rq.output_s8(acc4[k], o0 + k, zy, lo, hi)
        stores.append(tirx.BufferStore(yb, _to_tir(value, bufs), [*pixel, o0 + k]))
    return stores


def _seq(stmts: list[tirx.Stmt]) -> tirx.Stmt:
    return tirx.SeqStmt(stmts) if len(stmts) > 1 else stmts[0]


def _pad_from(x: te.Tensor, pad: tuple[int, int, int, int], fill: te.Tensor) -> tuple[te.Tensor, str]:
    """``x`` (NHWC) padded with ``fill[c]`` in channel c."""
    top, left, bottom, right = pad
    n, h, w, c = x.shape

    def f(b: tirx.PrimExpr, i: tirx.PrimExpr, j: tirx.PrimExpr, k: tirx.PrimExpr) -> tirx.PrimExpr:
        inside = tirx.all(i >= top, i < h + top, j >= left, j < w + left)
        return tirx.if_then_else(inside, x[b, i - top, j - left, k], fill[k])

    return te.compute((n, h + top + bottom, w + left + right, c), f, name="pad"), "pad"


def _pad(x: te.Tensor, pad: tuple[int, int, int, int], value: tirx.PrimExpr) -> tuple[te.Tensor, str | None]:
    top, left, bottom, right = pad
    if not any(pad):
        return x, None
    n, h, w, c = x.shape
    name = "pad"

    def f(b: tirx.PrimExpr, i: tirx.PrimExpr, j: tirx.PrimExpr, k: tirx.PrimExpr) -> tirx.PrimExpr:
        inside = tirx.all(i >= top, i < h + top, j >= left, j < w + left)
        return tirx.if_then_else(inside, x[b, i - top, j - left, k], value)

    return te.compute((n, h + top + bottom, w + left + right, c), f, name=name), name


# ---------------------------------------------------------------------------------------
# convolutions


def _wide(packed: bool | int) -> bool:
    """True when ``packed`` (see :func:`packed_lanes`) asks for 16-lane vector dot products."""
    return not isinstance(packed, bool) and packed >= VECTOR_LANES


def conv2d(g: Graph, op: Operator, packed: bool | int = True) -> KernelDef:
    depthwise = op.kind == "depthwise_conv2d"
    x, w = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]]
    b = g.tensors[op.inputs[2]] if len(op.inputs) > 2 else None
    y = g.tensors[op.outputs[0]]
    if w.data is None:
        raise UtvmError(f"{op.source}: the filter must be a constant")
    n, h, wd, cin = x.shape
    _, oh, ow, cout = y.shape
    kh, kw = (w.shape[1], w.shape[2])
    sh, sw = op.attrs["strides"]
    dh, dw = op.attrs["dilation"]
    mult = op.attrs.get("depth_multiplier", 1)
    quant = x.dtype == "int8"
    lanes = quant and packed and not depthwise and cin % 4 == 0  # four channels per int32 word
    # utvm_mac4_s8 blocks (not with Helium, which has its own wider dot products)
    mac4 = bool(lanes) and not _wide(packed) and cout % CHANNEL_BLOCK == 0 and w.data is not None

    X = te.placeholder(x.shape, x.dtype, name="x")
    W = te.placeholder(w.shape, w.dtype, name="w")
    args = [KernelArg(X, tensor=x.name), KernelArg(W, tensor=w.name)]
    ry = te.reduce_axis((0, kh), "ry")
    rx = te.reduce_axis((0, kw), "rx")

    if quant:
        assert x.quant and w.quant and y.quant
        _, zx = x.quant.scalar()
        ys, zy = y.quant.scalar()
        wdata = w.data.astype(np.int64)
        if np.any(w.quant.zero_point != 0):
            raise UtvmError(f"{op.source}: filter zero points must be 0 (symmetric int8 weights)")
        # bias' = bias - zx * sum(w): the input offset folded into the bias
        if depthwise:
            wsum = wdata.sum(axis=(0, 1, 2))
        else:
            wsum = wdata.sum(axis=(1, 2, 3))
        bias = (b.data.astype(np.int64) if b is not None and b.data is not None else np.zeros(cout, np.int64))
        folded = (bias - zx * wsum).astype(np.int64)
        if np.any(folded > 2**31 - 1) or np.any(folded < -(2**31)):
            raise UtvmError(f"{op.source}: folded bias overflows int32")
        wabs = np.abs(wdata).sum(axis=(0, 1, 2) if depthwise else (1, 2, 3))
        rq = _bias_requant(folded, effective_scales(x, w, y, True), cout, _acc_bound(wabs, bias), wabs == 0,
                           bool(packed))
        args += rq.args
        lo, hi = activation_range_int8(op.attrs["activation"], ys, zy)
        if (not depthwise and packed and not _wide(packed) and cin == 1 and kw == 4 and dw == 1 and wd >= 4
                and cout % CHANNEL_BLOCK == 0 and max(op.attrs["padding"][1], op.attrs["padding"][3]) < 4):
            return _conv_rows4(op, X, wdata, zx, args, rq, (oh, ow), zy, lo, hi, y.name)
        if (not depthwise and packed and not _wide(packed) and cin % 4 and dw == 1 and kw * cin >= 4
                and cout % CHANNEL_BLOCK == 0):
            return _conv_rows_flat(op, X, wdata, zx, args, rq, (oh, ow), zy, lo, hi, y.name)
        if depthwise and packed and not _wide(packed) and mult == 1 and cin % CHANNEL_BLOCK == 0:
            return _depthwise_dw4(op, X, wdata, zx, args, rq, (oh, ow), zy, lo, hi, y.name)
        if depthwise:
            P, pad_name = _pad(X, op.attrs["padding"], _c(zx, "int8"))

            def acc_f(bb, i, j, o):  # type: ignore[no-untyped-def]
                return te.sum(P[bb, i * sh + ry * dh, j * sw + rx * dw, o // mult].astype(I32)
                              * W[0, ry, rx, o].astype(I32), axis=[ry, rx])
        elif lanes:
            # four channels per step: the same bytes read as int32 words (activations and
            # weights are 4-byte aligned), dot products of packed int8 lanes
            X4 = te.placeholder((n, h, wd, cin // 4), I32, name="x")
            W4 = te.placeholder((cout, kh, kw, cin // 4), I32, name="w")
            args[0], args[1] = KernelArg(X4, tensor=x.name), KernelArg(W4, tensor=w.name)
            P, pad_name = _pad(X4, op.attrs["padding"], _c(_packed_int8(zx)))
            if mac4:
                return _conv_mac4(op, X4, P, pad_name, w.data, zx, args, rq, (oh, ow), zy, lo, hi, y.name)
            if pad_name is None and _wide(packed) and cin % VECTOR_LANES == 0:
                # 16 channels per step (Helium): the extern reads four words from each address
                rc = te.reduce_axis((0, cin // VECTOR_LANES), "rc")

                def acc_f(bb, i, j, o):  # type: ignore[no-untyped-def]
                    return te.sum(dot16(X4[bb, i * sh + ry * dh, j * sw + rx * dw, rc * 4], W4[o, ry, rx, rc * 4]),
                                  axis=[ry, rx, rc])
            else:
                rc = te.reduce_axis((0, cin // 4), "rc")

                def acc_f(bb, i, j, o):  # type: ignore[no-untyped-def]
                    return te.sum(dot4(P[bb, i * sh + ry * dh, j * sw + rx * dw, rc], W4[o, ry, rx, rc]),
                                  axis=[ry, rx, rc])
        else:
            P, pad_name = _pad(X, op.attrs["padding"], _c(zx, "int8"))
            rc = te.reduce_axis((0, cin), "rc")

            def acc_f(bb, i, j, o):  # type: ignore[no-untyped-def]
                return te.sum(P[bb, i * sh + ry * dh, j * sw + rx * dw, rc].astype(I32)
                              * W[o, ry, rx, rc].astype(I32), axis=[ry, rx, rc])

        acc = te.compute((n, oh, ow, cout), acc_f, name="acc")

        def out_f(bb, i, j, o):  # type: ignore[no-untyped-def]
            return rq.output_s8(acc[bb, i, j, o], o, zy, lo, hi)

        out = te.compute((n, oh, ow, cout), out_f, name="out")
    else:
        P, pad_name = _pad(X, op.attrs["padding"], _c(0.0, "float32"))
        if depthwise:
            def acc_f(bb, i, j, o):  # type: ignore[no-untyped-def]
                return te.sum(P[bb, i * sh + ry * dh, j * sw + rx * dw, o // mult] * W[0, ry, rx, o],
                              axis=[ry, rx])
        else:
            rc = te.reduce_axis((0, cin), "rc")

            def acc_f(bb, i, j, o):  # type: ignore[no-untyped-def]
                return te.sum(P[bb, i * sh + ry * dh, j * sw + rx * dw, rc] * W[o, ry, rx, rc],
                              axis=[ry, rx, rc])

        acc = te.compute((n, oh, ow, cout), acc_f, name="acc")
        if b is not None:
            B = te.placeholder((cout,), "float32", name="bias")
            args.append(KernelArg(B, tensor=b.name))
            out = te.compute((n, oh, ow, cout),
                             lambda bb, i, j, o: _float_clamp(acc[bb, i, j, o] + B[o], op.attrs["activation"]),
                             name="out")
        else:
            out = te.compute((n, oh, ow, cout),
                             lambda bb, i, j, o: _float_clamp(acc[bb, i, j, o], op.attrs["activation"]),
                             name="out")
    if quant and (depthwise or kh * kw == 1 or cin == 1):
        # pointwise (and single input channel): block output channels, each input value is
        # loaded once for all of them; depthwise: the padding tests and the loop are shared by
        # the block; wider windows do better fully unrolled per channel
        return KernelDef(args, out, y.name, _blocked_schedule(pad_name, 4, cout))
    return KernelDef(args, out, y.name, _reduction_schedule("acc", "out", pad_name, 4))


def _conv_mac4(op: Operator, X4: te.Tensor, P: te.Tensor, pad_name: str | None, wdata: np.ndarray, zx: int,
               args: list[KernelArg], rq: _Requant, out_hw: tuple[int, int], zy: int, lo: int, hi: int,
               y_name: str) -> KernelDef:
    """A packed int8 convolution (cin % 4 == 0) made of utvm_mac4_s8 calls: per output pixel,
    block of CHANNEL_BLOCK output channels and kernel tap, the cin / 4 input words of the tap.
    The weights are reordered for the call; a tap in the padding reads cin / 4 words of the
    packed input zero point (a small constant) instead of the input."""
    n, h, wd, cin4 = (int(v) for v in X4.shape)
    cout, kh, kw, _ = wdata.shape
    oh, ow = out_hw
    sh, sw = op.attrs["strides"]
    dh, dw = op.attrs["dilation"]
    top, left, _, _ = op.attrs["padding"]
    W4 = te.placeholder((cout // CHANNEL_BLOCK, kh, kw, cin4, CHANNEL_BLOCK), I32, name="w")
    args = [args[0], KernelArg(W4, constant=_interleave_rows(wdata), role="w"), *args[2:]]
    if pad_name:
        # the padding reads the zero point words (the call points there for a tap in the padding)
        ZP = te.placeholder((cin4,), I32, name="zp")
        args.append(KernelArg(ZP, constant=np.full(cin4, _packed_int8(zx), dtype=np.int32), role="zp"))
        P, pad_name = _pad_from(X4, op.attrs["padding"], ZP)
    ry = te.reduce_axis((0, kh), "ry")
    rx = te.reduce_axis((0, kw), "rx")
    rc = te.reduce_axis((0, cin4), "rc")

    def acc_f(bb, i, j, o):  # type: ignore[no-untyped-def]
        return te.sum(dot4(P[bb, i * sh + ry * dh, j * sw + rx * dw, rc],
                           W4[o // CHANNEL_BLOCK, ry, rx, rc, o % CHANNEL_BLOCK]), axis=[ry, rx, rc])

    acc = te.compute((n, oh, ow, cout), acc_f, name="acc")
    out = te.compute((n, oh, ow, cout), lambda bb, i, j, o: rq.output_s8(acc[bb, i, j, o], o, zy, lo, hi),
                     name="out")

    def make_call(ivs: list[tirx.Var], acc_buf: tirx.Buffer, params: dict[str, tirx.Buffer]) -> tirx.PrimExpr:
        bb, i, j, oo, vy, vx = ivs[:6]
        ih = i * sh + vy * dh - top
        iw = j * sw + vx * dw - left
        acc_addr = tirx.address_of(acc_buf[bb, i, j, oo * CHANNEL_BLOCK])
        xaddr = tirx.address_of(params["x"][bb, ih, iw, 0])
        waddr = tirx.address_of(params["w"][oo, vy, vx, 0, 0])
        if pad_name:
            inside = tirx.all(ih >= 0, ih < h, iw >= 0, iw < wd).astype(I32)
            return tirx.call_extern(I32, "utvm_mac4_pad_s8", acc_addr, inside, xaddr,
                                    tirx.address_of(params["zp"][0]), waddr, _c(cin4))
        return tirx.call_extern(I32, "utvm_mac4_s8", acc_addr, xaddr, waddr, _c(cin4))

    return KernelDef(args, out, y_name, _mac4_schedule(pad_name, 4, make_call))


Window = tuple[int, int, int, int, int, int, int, int, int, int]


def _pad_sides(window: Window, out_hw: tuple[int, int]) -> tuple[bool, bool, bool, bool]:
    """Which sides of the input (top, bottom, left, right) some kernel tap can fall beyond;
    ``window``: (kh, kw, sh, sw, dh, dw, top, left, h, w)."""
    kh, kw, sh, sw, dh, dw, top, left, h, wd = window
    oh, ow = out_hw
    return (top > 0, (oh - 1) * sh + (kh - 1) * dh - top >= h,
            left > 0, (ow - 1) * sw + (kw - 1) * dw - left >= wd)


def _window_conds(ih: tirx.PrimExpr, iw: tirx.PrimExpr, h: int, w: int,
                  sides: tuple[bool, bool, bool, bool]) -> list[tirx.PrimExpr]:
    """The tests that input position (ih, iw) is inside, on the sides that need them."""
    conds = []
    for need, cond in zip(sides, (ih >= 0, ih < h, iw >= 0, iw < w)):
        if need:
            conds.append(cond)
    return conds


def _interior_or_border(i: tirx.PrimExpr, j: tirx.PrimExpr, window: Window, sides: tuple[bool, bool, bool, bool],
                        body: Callable[[bool], tirx.Stmt]) -> tirx.Stmt:
    """``body(False)`` (no padding tests) for an output pixel (i, j) whose whole window lies
    inside the input, else ``body(True)``: one test per pixel instead of one per tap."""
    if not any(sides):
        return body(False)
    kh, kw, sh, sw, dh, dw, top, left, h, wd = window
    inside = _window_conds(i * sh - top, j * sw - left, h, wd, (sides[0], False, sides[2], False))
    inside += _window_conds(i * sh + (kh - 1) * dh - top, j * sw + (kw - 1) * dw - left, h, wd,
                            (False, sides[1], False, sides[3]))
    return tirx.IfThenElse(tirx.all(*inside), body(False), body(True))


def _conv_rows4(op: Operator, X: te.Tensor, wdata: np.ndarray, zx: int, args: list[KernelArg], rq: _Requant,
                out_hw: tuple[int, int], zy: int, lo: int, hi: int, y_name: str) -> KernelDef:
    """An int8 convolution with one input channel and four taps per kernel row (e.g. the
    first layer of KWS): each kernel row of a window is one input word (four bytes, any
    alignment), dotted with four output channels at once (utvm_mac4_word_s8). In a border
    window the word is completed with the input zero point. Weights reordered (same bytes):
    per block of four channels and kernel row, one word per channel."""
    n, h, wd, _ = (int(v) for v in X.shape)
    cout, kh, kw, _ = wdata.shape
    oh, ow = out_hw
    sh, sw = op.attrs["strides"]
    dh, _ = op.attrs["dilation"]
    top, left, _, _ = op.attrs["padding"]
    blocks = cout // CHANNEL_BLOCK
    reordered = wdata.reshape(blocks, CHANNEL_BLOCK, kh, kw).transpose(0, 2, 1, 3)
    W8 = te.placeholder((cout * kh * kw,), "int8", name="w")
    args = [args[0], KernelArg(W8, constant=np.ascontiguousarray(reordered).reshape(-1).astype(np.int8), role="w"),
            *args[2:]]
    P, pad_name = _pad(X, op.attrs["padding"], _c(zx, "int8"))
    ry = te.reduce_axis((0, kh), "ry")
    rx = te.reduce_axis((0, kw), "rx")
    row_words = CHANNEL_BLOCK * kw

    def acc_f(bb, i, j, o):  # type: ignore[no-untyped-def]
        widx = ((o // CHANNEL_BLOCK) * kh + ry) * row_words + (o % CHANNEL_BLOCK) * kw + rx
        return te.sum(P[bb, i * sh + ry * dh, j * sw + rx, 0].astype(I32) * W8[widx].astype(I32), axis=[ry, rx])

    acc = te.compute((n, oh, ow, cout), acc_f, name="acc")
    out = te.compute((n, oh, ow, cout), lambda bb, i, j, o: rq.output_s8(acc[bb, i, j, o], o, zy, lo, hi), name="out")
    window = (kh, kw, sh, sw, dh, 1, top, left, h, wd)
    sides = _pad_sides(window, out_hw)
    zword = _packed_int8(zx)
    u32 = "uint32"

    def make_call(ivs: list[tirx.Var], acc_buf: tirx.Buffer, params: dict[str, tirx.Buffer]) -> tirx.Stmt:
        bb, i, j, oo = ivs[:4]
        x = params["x"]
        iw = j * sw - left
        acc_addr = tirx.address_of(acc_buf[bb, i, j, oo * CHANNEL_BLOCK])

        def rows(checked: bool) -> tirx.Stmt:
            calls = []
            for r in range(kh):
                ih = i * sh + r * dh - top
                w_addr = tirx.address_of(params["w"][(oo * kh + r) * row_words])
                if not checked:
                    calls.append(tirx.Evaluate(tirx.call_extern(I32, "utvm_mac4_word_at_s8", acc_addr,
                                                                tirx.address_of(x[bb, ih, iw, 0]), w_addr)))
                    continue
                base = tirx.min(tirx.max(iw, _c(0)), _c(wd - kw)) if sides[2] or sides[3] else iw
                word = tirx.call_extern(I32, "utvm_ldw_s8", tirx.address_of(x[bb, ih, base, 0]))
                if sides[2] or sides[3]:
                    # bytes left of column 0 or right of the last column: the zero point
                    sl = (tirx.max(_c(0) - iw, _c(0)) * 8).astype(u32)
                    sr = (tirx.max(iw - (wd - kw), _c(0)) * 8).astype(u32)
                    ones = tirx.const(0xFFFFFFFF, u32)
                    keep = (ones << sl) >> sr
                    shifted = (word.astype(u32) << sl) >> sr
                    word = (shifted | (tirx.const(zword & 0xFFFFFFFF, u32) & ~keep)).astype(I32)
                conds = _window_conds(ih, _c(0), h, wd, (sides[0], sides[1], False, False))
                if conds:
                    word = tirx.if_then_else(tirx.all(*conds), word, _c(zword))
                calls.append(tirx.Evaluate(tirx.call_extern(I32, "utvm_mac4_word_s8", acc_addr, word, w_addr)))
            return tirx.SeqStmt(calls) if len(calls) > 1 else calls[0]

        return _interior_or_border(i, j, window, sides, rows)

    return KernelDef(args, out, y_name, _mac4_schedule(pad_name, 4, make_call, inner_axes=2))


def _flat_row_weights(wdata: np.ndarray) -> np.ndarray:
    """int8 weights (cout, kh, kw, cin), cout % CHANNEL_BLOCK == 0, reordered for
    :func:`_conv_rows_flat` (the same bytes): per block of CHANNEL_BLOCK output channels and
    kernel row of L = kw * cin bytes, the L // 4 words of the row interleaved by channel (as
    utvm_mac4_s8 reads them), then per remaining byte one word of the four channels' weights."""
    cout, kh, kw, cin = wdata.shape
    length = kw * cin
    nwords = length // 4
    blocks = cout // CHANNEL_BLOCK
    rows = wdata.reshape(blocks, CHANNEL_BLOCK, kh, length)
    words = rows[..., :4 * nwords].reshape(blocks, CHANNEL_BLOCK, kh, nwords, 4).transpose(0, 2, 3, 1, 4)
    tail = rows[..., 4 * nwords:].transpose(0, 2, 3, 1)  # block, row, byte, channel
    return np.concatenate([words.reshape(blocks, kh, -1), tail.reshape(blocks, kh, -1)], axis=2).reshape(-1)


def _flat_row_index(o: tirx.PrimExpr, r: tirx.PrimExpr | int, p: int, kh: int, length: int) -> tirx.PrimExpr:
    """Position in :func:`_flat_row_weights` of the weight of output channel ``o``, kernel row
    ``r``, byte ``p`` of the row."""
    nwords = length // 4
    base = ((o // CHANNEL_BLOCK) * kh + r) * (4 * length)
    lane = o % CHANNEL_BLOCK
    if p < 4 * nwords:
        return base + 16 * (p // 4) + 4 * lane + p % 4
    return base + 16 * nwords + 4 * (p - 4 * nwords) + lane


def _conv_rows_flat(op: Operator, X: te.Tensor, wdata: np.ndarray, zx: int, args: list[KernelArg], rq: _Requant,
                    out_hw: tuple[int, int], zy: int, lo: int, hi: int, y_name: str) -> KernelDef:
    """An int8 convolution whose input channels do not fill words (e.g. the three of an RGB
    image): the kw * cin bytes of a kernel row are contiguous in the input (NHWC, no dilation
    along the width), a flat dot product with the row's weights. Per output pixel and block
    of four output channels, each kernel row takes one utvm_mac4_u_s8 call for its whole words
    (any alignment) and one utvm_mac4_lane_s8 per remaining byte. A window that crosses the
    border takes the rows that do byte by byte, the input zero point in the padding."""
    n, h, wd, cin = (int(v) for v in X.shape)
    cout, kh, kw, _ = wdata.shape
    oh, ow = out_hw
    sh, sw = op.attrs["strides"]
    dh, _ = op.attrs["dilation"]
    top, left, _, _ = op.attrs["padding"]
    length = kw * cin
    nwords, rem = divmod(length, 4)
    blocks = cout // CHANNEL_BLOCK
    W8 = te.placeholder((wdata.size,), "int8", name="w")
    args = [args[0], KernelArg(W8, constant=_flat_row_weights(wdata).astype(np.int8), role="w"), *args[2:]]
    P, _ = _pad(X, op.attrs["padding"], _c(zx, "int8"))
    ry = te.reduce_axis((0, kh), "ry")
    rp = te.reduce_axis((0, length), "rp")

    def acc_f(bb, i, j, o):  # type: ignore[no-untyped-def]
        nw = 4 * nwords
        base = ((o // CHANNEL_BLOCK) * kh + ry) * (4 * length)
        lane = o % CHANNEL_BLOCK
        widx = base + tirx.Select(rp < nw, 16 * (rp // 4) + 4 * lane + rp % 4, 16 * nwords + 4 * (rp - nw) + lane)
        return te.sum(P[bb, i * sh + ry * dh, j * sw + rp // cin, rp % cin].astype(I32) * W8[widx].astype(I32),
                      axis=[ry, rp])

    acc = te.compute((n, oh, ow, cout), acc_f, name="acc")
    out = te.compute((n, oh, ow, cout), lambda bb, i, j, o: rq.output_s8(acc[bb, i, j, o], o, zy, lo, hi), name="out")
    window = (kh, kw, sh, sw, dh, 1, top, left, h, wd)
    sides = _pad_sides(window, out_hw)

    def build(bufs: dict[str, tirx.Var]) -> tuple[tirx.Stmt, list[tirx.Var]]:
        x8, w8, yb = bufs["x"], bufs["w"], bufs["out"]
        acc4 = tirx.decl_buffer((CHANNEL_BLOCK,), I32, "acc")
        acc_addr = tirx.address_of(acc4[0])

        def pixel(bb: tirx.PrimExpr, i: tirx.PrimExpr, j: tirx.PrimExpr) -> tirx.Stmt:
            iw = j * sw - left

            def channel_blocks(checked: bool) -> tirx.Stmt:
                def block(oo: tirx.Var) -> tirx.Stmt:
                    o0 = oo * CHANNEL_BLOCK
                    stmts: list[tirx.Stmt] = [tirx.BufferStore(acc4, _c(0), [k]) for k in range(CHANNEL_BLOCK)]
                    for r in range(kh):
                        ih = i * sh + r * dh - top
                        fast: list[tirx.Stmt] = []
                        if nwords:
                            fast.append(tirx.Evaluate(tirx.call_extern(
                                I32, "utvm_mac4_u_s8", acc_addr, tirx.address_of(x8[bb, ih, iw, 0]),
                                tirx.address_of(w8[_flat_row_index(o0, r, 0, kh, length)]), _c(nwords))))
                        for p in range(4 * nwords, length):
                            xv = x8[bb, ih, iw + p // cin, p % cin].astype(I32)
                            fast.append(tirx.Evaluate(tirx.call_extern(
                                I32, "utvm_mac4_lane_s8", acc_addr, xv,
                                tirx.address_of(w8[_flat_row_index(o0, r, p, kh, length)]))))
                        row_conds = _window_conds(ih, iw, h, wd, (sides[0], sides[1], sides[2], False))
                        row_conds += _window_conds(ih, iw + kw - 1, h, wd, (False, False, False, sides[3]))
                        if not checked or not row_conds:
                            stmts += fast
                            continue
                        slow: list[tirx.Stmt] = []
                        for p in range(length):
                            conds = _window_conds(ih, iw + p // cin, h, wd, sides)
                            xv = tirx.if_then_else(tirx.all(*conds), x8[bb, ih, iw + p // cin, p % cin].astype(I32),
                                                   _c(zx))
                            for k in range(CHANNEL_BLOCK):
                                wv = w8[_flat_row_index(o0 + k, r, p, kh, length)].astype(I32)
                                slow.append(tirx.BufferStore(acc4, acc4[k] + xv * wv, [k]))
                        stmts.append(tirx.IfThenElse(tirx.all(*row_conds), _seq(fast), _seq(slow)))
                    stmts += _store_block(acc4, rq, o0, (zy, lo, hi), yb, bufs, (bb, i, j))
                    return _seq(stmts)

                return _loop(blocks, "oo", block)

            return _interior_or_border(i, j, window, sides, channel_blocks)

        return _over_pixels((n, oh, ow), pixel), [acc4]

    return KernelDef(args, out, y_name, _root_schedule(build))


def _dw4_weight_order(taps: int) -> np.ndarray:
    """Byte position, within a block of CHANNEL_BLOCK channels, of the weight of (tap, lane):
    pairs of taps (a, b) as the two words (a0, a1, b0, b1), (a2, a3, b2, b3) that
    utvm_dw4_pair_s8 reads, then an odd last tap as one word (utvm_dw4_tap_s8)."""
    pos = np.zeros((taps, CHANNEL_BLOCK), dtype=np.int64)
    for t in range(taps):
        for c in range(CHANNEL_BLOCK):
            if t < taps - taps % 2:
                pos[t, c] = 8 * (t // 2) + 4 * (c // 2) + 2 * (t % 2) + c % 2
            else:
                pos[t, c] = 8 * (t // 2) + c
    return pos


def _depthwise_dw4(op: Operator, X: te.Tensor, wdata: np.ndarray, zx: int, args: list[KernelArg], rq: _Requant,
                   out_hw: tuple[int, int], zy: int, lo: int, hi: int, y_name: str) -> KernelDef:
    """An int8 depthwise convolution (multiplier 1, channels % 4 == 0) on four channels per
    int32 word: per output pixel and block of four channels, the kernel taps two by two with
    utvm_dw4_pair_s8 (one SMLAD per channel and pair), an odd last tap with utvm_dw4_tap_s8.
    Taps in the padding read the packed input zero point. The weights are reordered (same
    bytes) for the pairs."""
    n, h, wd, c = (int(v) for v in X.shape)
    _, kh, kw, _ = wdata.shape
    oh, ow = out_hw
    sh, sw = op.attrs["strides"]
    dh, dw = op.attrs["dilation"]
    top, left, _, _ = op.attrs["padding"]
    taps = kh * kw
    pos = _dw4_weight_order(taps)
    flat = wdata.reshape(taps, c // CHANNEL_BLOCK, CHANNEL_BLOCK).transpose(1, 0, 2)  # block, tap, lane
    reordered = np.zeros((c // CHANNEL_BLOCK, taps * CHANNEL_BLOCK), dtype=np.int8)
    reordered[:, pos.reshape(-1)] = flat.reshape(c // CHANNEL_BLOCK, -1)
    X4 = te.placeholder((n, h, wd, c // CHANNEL_BLOCK), I32, name="x")
    W8 = te.placeholder((c // CHANNEL_BLOCK * taps * CHANNEL_BLOCK,), "int8", name="w")
    args = [KernelArg(X4, tensor=args[0].tensor), KernelArg(W8, constant=reordered.reshape(-1), role="w"), *args[2:]]
    zword = _packed_int8(zx)
    P, pad_name = _pad(X4, op.attrs["padding"], _c(zword))
    ry = te.reduce_axis((0, kh), "ry")
    rx = te.reduce_axis((0, kw), "rx")
    paired = taps - taps % 2
    window = (kh, kw, sh, sw, dh, dw, top, left, h, wd)
    pad_sides = _pad_sides(window, out_hw)

    def w_index(o: tirx.PrimExpr, t: tirx.PrimExpr) -> tirx.PrimExpr:
        lane = o % CHANNEL_BLOCK
        in_pair = 8 * (t // 2) + 4 * (lane // 2) + 2 * (t % 2) + lane % 2
        return (o // CHANNEL_BLOCK) * (taps * CHANNEL_BLOCK) + tirx.Select(t < paired, in_pair, 8 * (t // 2) + lane)

    def acc_f(bb, i, j, o):  # type: ignore[no-untyped-def]
        word = P[bb, i * sh + ry * dh, j * sw + rx * dw, o // CHANNEL_BLOCK]
        lane = (word << (_c(24) - (o % CHANNEL_BLOCK) * 8)) >> _c(24)
        return te.sum(lane * W8[w_index(o, ry * kw + rx)].astype(I32), axis=[ry, rx])

    acc = te.compute((n, oh, ow, c), acc_f, name="acc")
    out = te.compute((n, oh, ow, c), lambda bb, i, j, o: rq.output_s8(acc[bb, i, j, o], o, zy, lo, hi), name="out")

    blocks = c // CHANNEL_BLOCK

    def build(bufs: dict[str, tirx.Var]) -> tuple[tirx.Stmt, list[tirx.Var]]:
        x4, w8, yb = bufs["x"], bufs["w"], bufs["out"]
        acc4 = tirx.decl_buffer((CHANNEL_BLOCK,), I32, "acc")  # in registers once inlined
        acc_addr = tirx.address_of(acc4[0])

        def pixel(bb: tirx.PrimExpr, i: tirx.PrimExpr, j: tirx.PrimExpr) -> tirx.Stmt:
            def channel_blocks(checked: bool) -> tirx.Stmt:
                def block(oo: tirx.Var) -> tirx.Stmt:
                    def word(t: int) -> tirx.PrimExpr:
                        ih = i * sh + (t // kw) * dh - top
                        iw = j * sw + (t % kw) * dw - left
                        conds = _window_conds(ih, iw, h, wd, pad_sides)
                        load = x4[bb, ih, iw, oo]
                        return tirx.if_then_else(tirx.all(*conds), load, _c(zword)) if conds else load

                    def at(t: int) -> tirx.PrimExpr:
                        return tirx.address_of(x4[bb, i * sh + (t // kw) * dh - top, j * sw + (t % kw) * dw - left, oo])

                    base = oo * (taps * CHANNEL_BLOCK)
                    stmts: list[tirx.Stmt] = [tirx.BufferStore(acc4, _c(0), [k]) for k in range(CHANNEL_BLOCK)]
                    for t in range(0, paired, 2):
                        w_addr = tirx.address_of(w8[base + 8 * (t // 2)])
                        if checked:
                            call = tirx.call_extern(I32, "utvm_dw4_pair_s8", acc_addr, word(t), word(t + 1), w_addr)
                        else:
                            call = tirx.call_extern(I32, "utvm_dw4_pair_at_s8", acc_addr, at(t), at(t + 1), w_addr)
                        stmts.append(tirx.Evaluate(call))
                    if taps % 2:
                        w_addr = tirx.address_of(w8[base + 8 * (taps // 2)])
                        if checked:
                            call = tirx.call_extern(I32, "utvm_dw4_tap_s8", acc_addr, word(taps - 1), w_addr)
                        else:
                            call = tirx.call_extern(I32, "utvm_dw4_tap_at_s8", acc_addr, at(taps - 1), w_addr)
                        stmts.append(tirx.Evaluate(call))
                    stmts += _store_block(acc4, rq, oo * CHANNEL_BLOCK, (zy, lo, hi), yb, bufs, (bb, i, j))
                    return _seq(stmts)

                return _loop(blocks, "oo", block)

            return _interior_or_border(i, j, window, pad_sides, channel_blocks)

        return _over_pixels((n, oh, ow), pixel), [acc4]

    return KernelDef(args, out, y_name, _root_schedule(build))


def fully_connected(g: Graph, op: Operator, packed: bool | int = True) -> KernelDef:
    x, w = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]]
    b = g.tensors[op.inputs[2]] if len(op.inputs) > 2 else None
    y = g.tensors[op.outputs[0]]
    if w.data is None or len(w.shape) != 2:
        raise UtvmError(f"{op.source}: the weights must be a 2-D constant")
    units, depth = w.shape
    if x.size % depth:
        raise UtvmError(f"{op.source}: input of {x.size} elements is not a multiple of depth {depth}")
    batch = x.size // depth
    X = te.placeholder((batch, depth), x.dtype, name="x")
    W = te.placeholder(w.shape, w.dtype, name="w")
    args = [KernelArg(X, tensor=x.name), KernelArg(W, tensor=w.name)]
    k = te.reduce_axis((0, depth), "k")
    lanes = False  # four inputs per int32 word (int8 only)
    mac4 = False  # utvm_mac4_s8 calls (see _conv_mac4)
    if x.dtype == "int8":
        assert x.quant and w.quant and y.quant
        _, zx = x.quant.scalar()
        ys, zy = y.quant.scalar()
        zw = int(w.quant.zero_point.reshape(-1)[0])
        bias = (b.data.astype(np.int64) if b is not None and b.data is not None else np.zeros(units, np.int64))
        lanes = packed and zw == 0 and depth % 4 == 0
        if lanes:
            folded = bias - zx * w.data.astype(np.int64).sum(axis=1)
            X4 = te.placeholder((batch, depth // 4), I32, name="x")
            W4 = te.placeholder((units, depth // 4), I32, name="w")
            args = [KernelArg(X4, tensor=x.name), KernelArg(W4, tensor=w.name)]
            if _wide(packed) and depth % VECTOR_LANES == 0:
                k16 = te.reduce_axis((0, depth // VECTOR_LANES), "k")
                acc = te.compute((batch, units), lambda i, o: te.sum(dot16(X4[i, k16 * 4], W4[o, k16 * 4]),
                                                                     axis=k16), name="acc")
            elif not _wide(packed) and units % CHANNEL_BLOCK == 0:
                # utvm_mac4_s8 per block of units, on reordered weights
                mac4 = True
                W4 = te.placeholder((units // CHANNEL_BLOCK, depth // 4, CHANNEL_BLOCK), I32, name="w")
                args[1] = KernelArg(W4, constant=_interleave_rows(w.data), role="w")
                k4 = te.reduce_axis((0, depth // 4), "k")
                acc = te.compute((batch, units), lambda i, o: te.sum(
                    dot4(X4[i, k4], W4[o // CHANNEL_BLOCK, k4, o % CHANNEL_BLOCK]), axis=k4), name="acc")
            else:
                k4 = te.reduce_axis((0, depth // 4), "k")
                acc = te.compute((batch, units), lambda i, o: te.sum(dot4(X4[i, k4], W4[o, k4]), axis=k4),
                                 name="acc")
        elif zw == 0:
            folded = bias - zx * w.data.astype(np.int64).sum(axis=1)
            acc = te.compute((batch, units), lambda i, o: te.sum(
                X[i, k].astype(I32) * W[o, k].astype(I32), axis=k), name="acc")
        else:
            folded = bias
            acc = te.compute((batch, units), lambda i, o: te.sum(
                (X[i, k].astype(I32) - zx) * (W[o, k].astype(I32) - zw), axis=k), name="acc")
        wabs = np.abs(w.data.astype(np.int64)).sum(axis=1)
        bound = _acc_bound(wabs, bias) if zw == 0 else None
        rq = _bias_requant(folded, effective_scales(x, w, y, w.quant.per_channel), units, bound, wabs == 0,
                           bool(packed))
        args += rq.args
        lo, hi = activation_range_int8(op.attrs["activation"], ys, zy)

        def out_f(i, o):  # type: ignore[no-untyped-def]
            return rq.output_s8(acc[i, o], o, zy, lo, hi)

        out = te.compute((batch, units), out_f, name="out")
    else:
        acc = te.compute((batch, units), lambda i, o: te.sum(X[i, k] * W[o, k], axis=k), name="acc")
        if b is not None:
            B = te.placeholder((units,), "float32", name="bias")
            args.append(KernelArg(B, tensor=b.name))
            out = te.compute((batch, units), lambda i, o: _float_clamp(acc[i, o] + B[o], op.attrs["activation"]),
                             name="out")
        else:
            out = te.compute((batch, units), lambda i, o: _float_clamp(acc[i, o], op.attrs["activation"]),
                             name="out")
    if mac4:
        def make_call(ivs: list[tirx.Var], acc_buf: tirx.Buffer, params: dict[str, tirx.Buffer]) -> tirx.PrimExpr:
            i, oo = ivs[:2]
            return tirx.call_extern(I32, "utvm_mac4_s8", tirx.address_of(acc_buf[i, oo * CHANNEL_BLOCK]),
                                    tirx.address_of(params["x"][i, 0]), tirx.address_of(params["w"][oo, 0, 0]),
                                    _c(depth // 4))

        return KernelDef(args, out, y.name, _mac4_schedule(None, 2, make_call))
    if lanes:
        return KernelDef(args, out, y.name, _blocked_schedule(None, 2, units))
    return KernelDef(args, out, y.name, _reduction_schedule("acc", "out", None, 2))


# ---------------------------------------------------------------------------------------
# pooling


def pool2d(g: Graph, op: Operator) -> KernelDef:
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    n, h, w, c = x.shape
    _, oh, ow, _ = y.shape
    kh, kw = op.attrs["pool_size"]
    sh, sw = op.attrs["strides"]
    top, left, _, _ = op.attrs["padding"]
    X = te.placeholder(x.shape, x.dtype, name="x")
    ry = te.reduce_axis((0, kh), "ry")
    rx = te.reduce_axis((0, kw), "rx")
    quant = x.dtype == "int8"
    acc_dtype = I32 if quant else "float32"

    def inside(i, j):  # type: ignore[no-untyped-def]
        hi = i * sh - top + ry
        wi = j * sw - left + rx
        return tirx.all(hi >= 0, hi < h, wi >= 0, wi < w), hi, wi

    if op.kind == "avg_pool2d":
        def acc_f(b, i, j, ch):  # type: ignore[no-untyped-def]
            ok, hi, wi = inside(i, j)
            v = X[b, te.max(te.min(hi, h - 1), 0), te.max(te.min(wi, w - 1), 0), ch].astype(acc_dtype)
            return te.sum(tirx.if_then_else(ok, v, _c(0, acc_dtype)), axis=[ry, rx])
    else:
        def acc_f(b, i, j, ch):  # type: ignore[no-untyped-def]
            ok, hi, wi = inside(i, j)
            v = X[b, te.max(te.min(hi, h - 1), 0), te.max(te.min(wi, w - 1), 0), ch].astype(acc_dtype)
            low = _c(-(2**31), I32) if quant else _c(-3.4028234663852886e38, "float32")
            return te.max(tirx.if_then_else(ok, v, low), axis=[ry, rx])

    acc = te.compute((n, oh, ow, c), acc_f, name="acc")

    def count(i, j):  # type: ignore[no-untyped-def]
        h0 = i * sh - top
        w0 = j * sw - left
        hc = te.min(h0 + kh, h) - te.max(h0, 0)
        wc = te.min(w0 + kw, w) - te.max(w0, 0)
        return hc * wc

    act = op.attrs["activation"]
    if quant:
        assert y.quant is not None
        lo, hi_ = activation_range_int8(act, *y.quant.scalar())
        if op.kind == "avg_pool2d":
            def out_f(b, i, j, ch):  # type: ignore[no-untyped-def]
                s = acc[b, i, j, ch]
                cnt = count(i, j)
                half = tirx.truncdiv(cnt, 2)
                avg = tirx.Select(s > 0, tirx.truncdiv(s + half, cnt), tirx.truncdiv(s - half, cnt))
                return _clamp(avg, lo, hi_).astype("int8")
        else:
            def out_f(b, i, j, ch):  # type: ignore[no-untyped-def]
                return _clamp(acc[b, i, j, ch], lo, hi_).astype("int8")
    else:
        if op.kind == "avg_pool2d":
            def out_f(b, i, j, ch):  # type: ignore[no-untyped-def]
                return _float_clamp(acc[b, i, j, ch] / count(i, j).astype("float32"), act)
        else:
            def out_f(b, i, j, ch):  # type: ignore[no-untyped-def]
                return _float_clamp(acc[b, i, j, ch], act)

    out = te.compute((n, oh, ow, c), out_f, name="out")
    # unrolled, the max reduction gave wrong results (TVM 0.27; not investigated further)
    unroll = op.kind == "avg_pool2d"
    return KernelDef([KernelArg(X, tensor=x.name)], out, y.name,
                     _reduction_schedule("acc", "out", None, 4, unroll))


# ---------------------------------------------------------------------------------------
# elementwise


def _scale_const(x: tirx.PrimExpr, m: int, shift: int, bound: int) -> tirx.PrimExpr:
    """MultiplyByQuantizedMultiplier(x, m, shift) for constants m and shift, given |x| <= bound:
    SMMULR and a branch-free rounding shift when x * 2**max(shift, 0) stays below 2**30, the
    general form otherwise."""
    if bound << max(shift, 0) >= 1 << 30:
        return fp.multiply_by_quantized_multiplier(x, m, shift)
    a = x * (1 << shift) if shift > 0 else x
    high = tirx.call_pure_extern(I32, "utvm_srdhm_small", a, fp.c32(m))
    return _rounding_divide_by_pot_small(high, max(-shift, 0))


def add(g: Graph, op: Operator) -> KernelDef:
    a, b, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    size = y.size
    A = te.placeholder((size,), a.dtype, name="a")
    B = te.placeholder((size,), b.dtype, name="b")
    act = op.attrs["activation"]
    if a.dtype == "int8":
        assert a.quant and b.quant and y.quant
        sa, za = a.quant.scalar()
        sb, zb = b.quant.scalar()
        sy, zy = y.quant.scalar()
        left_shift = fp.ADD_LEFT_SHIFT
        ma, sha, mb, shb, my, shy = fp.add_params(sa, sb, sy)
        lo, hi = activation_range_int8(act, sy, zy)

        # bounds of the three requantized values: 255 * 2**20 for the shifted inputs, their
        # requantized sum at most twice that (each input multiplier is at most 1/2)
        bound = 255 << left_shift

        def f(i):  # type: ignore[no-untyped-def]
            xa = (A[i].astype(I32) - za) * (1 << left_shift)
            xb = (B[i].astype(I32) - zb) * (1 << left_shift)
            va = _scale_const(xa, ma, sha, bound)
            vb = _scale_const(xb, mb, shb, bound)
            return _clamp_s8(_scale_const(va + vb, my, shy, 2 * bound + 2) + zy, lo, hi)
    else:
        def f(i):  # type: ignore[no-untyped-def]
            return _float_clamp(A[i] + B[i], act)

    out = te.compute((size,), f, name="out")
    return KernelDef([KernelArg(A, tensor=a.name), KernelArg(B, tensor=b.name)], out, y.name)


def softmax(g: Graph, op: Operator) -> KernelDef:
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    depth = x.shape[-1]
    rows = x.size // depth
    X = te.placeholder((rows, depth), x.dtype, name="x")
    if x.dtype == "int8":
        assert x.quant and y.quant
        ys, zy = y.quant.scalar()
        if zy != -128 or abs(ys - 1.0 / 256) > 1e-8:
            raise UtvmError(f"{op.source}: int8 softmax output must have scale 1/256 and zero point -128")
        out = softmax_int8(X, float(x.quant.scalar()[0]), op.attrs["beta"], "out")
    else:
        out = softmax_float(X, op.attrs["beta"], "out")
    return KernelDef([KernelArg(X, tensor=x.name)], out, y.name)


def quantize(g: Graph, op: Operator) -> KernelDef:
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    X = te.placeholder((x.size,), x.dtype, name="x")
    if x.dtype == "float32" and y.dtype == "int8":
        assert y.quant
        s, z = y.quant.scalar()

        def f(i):  # type: ignore[no-untyped-def]
            v = tirx.round(X[i] / _c(float(np.float32(s)), "float32")).astype(I32) + z
            return _clamp(v, -128, 127).astype("int8")
    elif x.dtype == "int8" and y.dtype == "int8":
        assert x.quant and y.quant
        sx, zx = x.quant.scalar()
        sy, zy = y.quant.scalar()
        m, sft = fp.quantize_multiplier(float(sx) / float(sy))

        def f(i):  # type: ignore[no-untyped-def]
            v = fp.multiply_by_quantized_multiplier(X[i].astype(I32) - zx, m, sft) + zy
            return _clamp(v, -128, 127).astype("int8")
    else:
        raise UtvmError(f"{op.source}: QUANTIZE from {x.dtype} to {y.dtype} is not supported")
    return KernelDef([KernelArg(X, tensor=x.name)], te.compute((x.size,), f, name="out"), y.name)


def dequantize(g: Graph, op: Operator) -> KernelDef:
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    if x.dtype != "int8" or y.dtype != "float32" or x.quant is None:
        raise UtvmError(f"{op.source}: DEQUANTIZE from {x.dtype} to {y.dtype} is not supported")
    X = te.placeholder((x.size,), x.dtype, name="x")
    s, z = x.quant.scalar()
    out = te.compute((x.size,), lambda i: ((X[i].astype(I32) - z).astype("float64")
                                           * _c(float(s), "float64")).astype("float32"), name="out")
    return KernelDef([KernelArg(X, tensor=x.name)], out, y.name)


def relu(g: Graph, op: Operator) -> KernelDef:
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    X = te.placeholder((x.size,), x.dtype, name="x")
    act = "relu6" if op.kind == "relu6" else "relu"
    if x.dtype == "int8":
        assert x.quant and y.quant
        sx, zx = x.quant.scalar()
        sy, zy = y.quant.scalar()
        m, sft = fp.quantize_multiplier(float(sx) / float(sy))
        lo, hi = activation_range_int8(act, sy, zy)

        def f(i):  # type: ignore[no-untyped-def]
            v = fp.multiply_by_quantized_multiplier(X[i].astype(I32) - zx, m, sft) + zy
            return _clamp(v, lo, hi).astype("int8")
        out = te.compute((x.size,), f, name="out")
    else:
        out = te.compute((x.size,), lambda i: _float_clamp(X[i], act), name="out")
    return KernelDef([KernelArg(X, tensor=x.name)], out, y.name)


#: operators whose builders take ``packed``: four int8 lanes per int32 word (utvm_dot4_s8)
PACKED_KINDS = ("conv2d", "depthwise_conv2d", "fully_connected")

#: CPUs without the DSP extension, where utvm_dot4_s8 is slower than one byte at a time
NO_DSP_CPUS = ("cortex-m0", "cortex-m0plus", "cortex-m1", "cortex-m3", "cortex-m23")

#: CPUs with Helium (MVE): 16 int8 lanes per vector multiply-accumulate (utvm_dot16_acc_s8)
MVE_CPUS = ("cortex-m52", "cortex-m55", "cortex-m85")

#: int8 lanes of one Helium vector
VECTOR_LANES = 16


def packed_lanes(cpu: str | None) -> int:
    """The ``packed`` argument of the builders for ``cpu`` (None: any CPU with 32-bit words):
    0 bytes one at a time, 4 lanes per int32 word, 16 lanes per Helium vector."""
    name = (cpu or "").lower()
    if name in NO_DSP_CPUS:
        return 0
    return VECTOR_LANES if name in MVE_CPUS else 4

BUILDERS: dict[str, Callable[..., KernelDef]] = {
    "conv2d": conv2d,
    "depthwise_conv2d": conv2d,
    "fully_connected": fully_connected,
    "avg_pool2d": pool2d,
    "max_pool2d": pool2d,
    "add": add,
    "softmax": softmax,
    "quantize": quantize,
    "dequantize": dequantize,
    "relu": relu,
    "relu6": relu,
    "transpose": transpose,
}
