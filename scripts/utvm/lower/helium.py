"""int8 kernels written for Helium (MVE: Cortex-M52, M55, M85).

:func:`helium_kernel` is asked first for every operator when the CPU has Helium; it returns
a :class:`KernelDef` for the layers it has a vector formulation of, None for the others
(the generic builders of kernels.py then take them).

The kernels are TE extern operators: TIR loops over output rows or groups of four output
pixels that call the vector helpers of ``utvm/kernels_mve.h`` (each helper does a whole
inner loop with Helium instructions; plain C with the same results elsewhere):

- convolutions (any window, stride, dilation, padding): the input patches of four output
  pixels are gathered (``utvm_mve_im2col_s8``, the padding filled with the input zero point;
  skipped for pointwise stride-1 layers, whose pixels are already contiguous rows), then
  ``utvm_mve_gemm_s8`` computes the four pixels of every output channel with one filter load
  and four VMLADAVA per 16 products, and requantizes the results as vectors (with k >= 64
  blocks of four channels: one vector per pixel; else the four pixels of one channel);
  windows of several taps with a multiple of 16 input channels and few output channels
  (``ROW_CONV_MAX_COUT``) are read in place instead, one output row per
  ``utvm_mve_conv_row_s8`` call: per pixel four channels at a time, one input load and four
  filter loads (filters interleaved four channels at a time) per 16 products, the taps in the
  padding multiplying the zero point;
- fully connected layers: ``utvm_mve_gemm_s8`` on up to four batch rows; one row is done four
  units at a time (one input load for four filter rows, vector requantization);
- 3x3 depthwise convolutions with a multiple of 4 channels: ``utvm_mve_dw3x3_row_s8`` per
  output row, four pixels x four channels per step sharing the filter loads, read in place (a
  tap in the padding adds the zero point times its weight);
- int8 additions of two tensors of the same shape: one ``utvm_mve_add_s8`` call for the whole
  tensor, 16 elements per step (widened to four int32x4, VQRDMULH and rounding shifts).

The arithmetic is TFLite's (bias folded with the input zero point, per-channel
MultiplyByQuantizedMultiplier, output zero point, activation clamp), bit-exact. The
requantization constants are stored as compactly as the generic kernels store them
(:class:`_Requant`), and the only temporary buffer (the im2col patches of the convolutions
not read in place) is a ``scratch`` argument that the memory planner places in the pool: no
kernel allocates on the stack or through TVMBackendAllocWorkspace.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import tvm
from tvm import te, tirx

from ..ir import Graph, Operator, Tensor
from . import fixedpoint as fp
from .kerneldef import KernelArg, KernelDef
from .kernels import SHIFT_BITS, activation_range_int8, effective_scales  # SHIFT_BITS: UTVM_MVE_RQ_SHIFT_BITS

I32 = "int32"
#: output pixels per utvm_mve_gemm_s8 call (one int32 vector of results per channel)
PIXELS = 4
#: convolutions with up to this many output channels read their windows in place
#: (utvm_mve_conv_row_s8) when the input channels are a multiple of 16
ROW_CONV_MAX_COUT = 16


def helium_kernel(graph: Graph, op: Operator) -> KernelDef | None:
    """A Helium-specific kernel for ``op``, or None."""
    if op.kind == "conv2d":
        return _conv2d(graph, op)
    if op.kind == "depthwise_conv2d":
        return _depthwise3x3(graph, op)
    if op.kind == "fully_connected":
        return _fully_connected(graph, op)
    if op.kind == "add":
        return _add(graph, op)
    return None


def _buffer(t: te.Tensor, name: str) -> tirx.Buffer:
    """A compact buffer at offset 0 (no byte_offset code in the kernel)."""
    return tirx.decl_buffer(t.shape, t.dtype, name=name, elem_offset=0)


def _quant_ok(g: Graph, op: Operator) -> tuple[Tensor, Tensor, Tensor, Tensor | None] | None:
    x, w = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]]
    b = g.tensors[op.inputs[2]] if len(op.inputs) > 2 else None
    y = g.tensors[op.outputs[0]]
    if x.dtype != "int8" or w.dtype != "int8" or y.dtype != "int8" or w.data is None:
        return None
    if x.quant is None or w.quant is None or y.quant is None or np.any(w.quant.zero_point != 0):
        return None
    if x.shape[0] != 1 or len(x.shape) != 4 or (b is not None and b.data is None):
        return None
    return x, w, y, b


#: mode bits of the requantization arguments (UTVM_MVE_RQ_* of kernels_mve.h)
RQ_MULT, RQ_PACKED, RQ_SHIFT8, RQ_LEFT = 1, 2, 4, 8


@dataclass
class _Requant:
    """The requantization constants of a layer, stored like the generic kernels store them
    (see kernels_mve.h): a bias array; multipliers and shifts per channel only when they
    differ, the right shifts packed into the bias words when they fit."""

    args: list[KernelArg]  # bias first, then mult and shift when stored
    m0: int
    s0: int
    mode: int

    def call_args(self, bufs: list[tirx.Buffer]) -> list[tirx.PrimExpr | int]:
        """bias, mult, shift, m0, s0, mode of the helper calls (``bufs``: the buffers of args;
        the pointers that are not used are the bias pointer)."""
        bias = bufs[0].access_ptr("r")
        rest = iter(bufs[1:])
        mult = next(rest).access_ptr("r") if self.mode & RQ_MULT else bias
        shift = next(rest).access_ptr("r") if self.mode & RQ_SHIFT8 else bias
        return [bias, mult, shift, self.m0, self.s0, self.mode]


def _requant(x: Tensor, w: Tensor, y: Tensor, b: Tensor | None, wsum: np.ndarray, cout: int,
             in_double: bool = True) -> _Requant | None:
    assert x.quant is not None
    _, zx = x.quant.scalar()
    bias = b.data.astype(np.int64).reshape(-1) if b is not None and b.data is not None else np.zeros(cout, np.int64)
    if bias.size != cout:
        return None
    folded = bias - zx * wsum
    if np.any(folded > fp.INT32_MAX) or np.any(folded < fp.INT32_MIN):
        return None
    pairs = [fp.quantize_multiplier(float(v)) for v in effective_scales(x, w, y, in_double)]
    if len(pairs) not in (1, cout):
        return None
    mults = np.array([m for m, _ in pairs], np.int64)
    shifts = np.array([s for _, s in pairs], np.int64)
    if np.any(shifts > 30) or np.any(shifts < -31):
        return None
    mode = RQ_LEFT if np.any(shifts > 0) else 0
    bp = te.placeholder((cout,), I32, name="bias")
    args = [KernelArg(bp, constant=folded.astype(np.int32), role="bias")]
    if np.any(mults != mults[0]):
        mode |= RQ_MULT
        args.append(KernelArg(te.placeholder((cout,), I32, name="mult"), constant=mults.astype(np.int32),
                              role="mult"))
    if np.all(shifts == shifts[0]):
        return _Requant(args, int(mults[0]), int(shifts[0]), mode)
    limit = 1 << (31 - SHIFT_BITS)
    if np.all(shifts <= 0) and np.all(folded < limit) and np.all(folded >= -limit):
        words = (folded << SHIFT_BITS) | -shifts
        args[0] = KernelArg(bp, constant=words.astype(np.int32), role="bias_shift")
        return _Requant(args, int(mults[0]), 0, mode | RQ_PACKED)
    args.append(KernelArg(te.placeholder((cout,), "int8", name="shift"), constant=shifts.astype(np.int8),
                          role="shift"))
    return _Requant(args, int(mults[0]), 0, mode | RQ_SHIFT8)


def _name_root(sch: tvm.s_tir.Schedule) -> None:
    """Name the extern operator's block "root", as the lowering expects of every kernel (the
    block of a TE extern operator is the function's top block)."""
    block = sch.get_sblock("out")
    stmt = sch.get(block)
    new = tvm.s_tir.SBlock(stmt.iter_vars, stmt.reads, stmt.writes, "root", stmt.body, stmt.init,
                           stmt.alloc_buffers, stmt.match_buffers, stmt.annotations)
    sch.state.replace(sch.get_sref(block), new, {stmt: new})


def _call(name: str, *args: tirx.PrimExpr | int) -> tirx.Stmt:
    return tirx.Evaluate(tirx.call_extern(I32, name, *[tirx.const(a, I32) if isinstance(a, int) else a
                                                       for a in args]))


def _extern(y: Tensor, args: list[KernelArg], body) -> KernelDef:  # type: ignore[no-untyped-def]
    """The extern operator of ``body(ins, outs)`` over the placeholders of ``args`` (compact
    buffers), with the kernel's block named root."""
    ins = [a.placeholder for a in args]
    out = te.extern(y.shape, ins, body, name="out", dtype="int8", in_buffers=[_buffer(t, t.op.name) for t in ins],
                    out_buffers=[tirx.decl_buffer(y.shape, "int8", name="y", elem_offset=0)])
    return KernelDef(args, out, y.name, _name_root)


def _conv2d(g: Graph, op: Operator) -> KernelDef | None:
    checked = _quant_ok(g, op)
    if checked is None:
        return None
    x, w, y, b = checked
    assert w.data is not None and x.quant is not None and y.quant is not None
    _, h, wd, cin = x.shape
    _, oh, ow, cout = y.shape
    if len(w.shape) != 4 or w.shape[0] != cout or w.shape[3] != cin:
        return None
    kh, kw = w.shape[1], w.shape[2]
    sh, sw = op.attrs["strides"]
    dh, dw = op.attrs["dilation"]
    top, left, _, _ = op.attrs["padding"]
    k = kh * kw * cin
    rq = _requant(x, w, y, b, w.data.astype(np.int64).sum(axis=(1, 2, 3)), cout)
    if rq is None:
        return None
    _, zx = x.quant.scalar()
    ys, zy = y.quant.scalar()
    lo, hi = activation_range_int8(op.attrs["activation"], ys, zy)
    direct = kh == kw == 1 and sh == sw == 1 and not any(op.attrs["padding"])
    # windows of several taps whose rows are whole 16-byte steps (cin a multiple of 16), few
    # output channels: read in place, one output row per call (utvm_mve_conv_row_s8, filters
    # interleaved four channels at a time), no patch scratch. It pays a window-row loop and a
    # requantization per pixel and four channels where the patch copy is paid once for all
    # channels: ahead up to 16 output channels (ResNet-8's 32x32x16 layers on the AN547: 12 %
    # fewer instructions), behind from 32 (its other 3x3 layers: 6 to 17 % more), where the
    # patches are gathered as before.
    rows = kh * kw > 1 and dw == 1 and cin % 16 == 0 and cout <= ROW_CONV_MAX_COUT
    pixels = oh * ow
    groups = (pixels + PIXELS - 1) // PIXELS

    X = te.placeholder(x.shape, "int8", name="x")
    W = te.placeholder(w.shape, "int8", name="w")
    args = [KernelArg(X, tensor=x.name), KernelArg(W, tensor=w.name), *rq.args]
    if rows:
        blocks = (cout + 3) // 4
        args[1] = KernelArg(te.placeholder((blocks * 4 * k,), "int8", name="w"), constant=_interleave4(w.data, k),
                            role="w")
    if not direct and not rows:  # the patches of four pixels, in the memory plan
        args.append(KernelArg(te.placeholder((PIXELS * k,), "int8", name="col"), role="col", scratch=True))

    def body(ins, outs):  # type: ignore[no-untyped-def]
        xb, wb = ins[0], ins[1]
        yb = outs[0]
        if rows:
            oy = tirx.Var("oy", I32)
            row = _call("utvm_mve_conv_row_s8", yb.access_ptr("w", offset=oy * (ow * cout)), xb.access_ptr("r"),
                        h, wd, cin, oy * sh - top, ow, sw, left, kh, kw, dh, wb.access_ptr("r"), cout, zx,
                        *rq.call_args(ins[2:]), zy, lo, hi)
            return tirx.For(oy, 0, oh, tirx.ForKind.SERIAL, row)
        gi = tirx.Var("g", I32)
        first = gi * PIXELS
        count = tirx.min(pixels - first, PIXELS) if pixels % PIXELS else tirx.const(PIXELS, I32)
        tail = (yb.access_ptr("w", offset=first * cout), count, cout)
        params = (wb.access_ptr("r"), k, cout, *rq.call_args(ins[2:2 + len(rq.args)]), zy, lo, hi)
        if direct:
            step = _call("utvm_mve_gemm_s8", *tail, xb.access_ptr("r", offset=first * cin), cin, *params)
            return tirx.For(gi, 0, groups, tirx.ForKind.SERIAL, step)
        col = ins[-1]
        pi = tirx.Var("p", I32)
        pix = first + pi
        gather = _call("utvm_mve_im2col_s8", col.access_ptr("w", offset=pi * k), xb.access_ptr("r"),
                       h, wd, cin, tirx.floordiv(pix, ow) * sh - top, tirx.floormod(pix, ow) * sw - left,
                       kh, kw, dh, dw, zx)
        if pixels % PIXELS:
            gather = tirx.IfThenElse(pix < pixels, gather, None)
        step = tirx.SeqStmt([
            tirx.For(pi, 0, PIXELS, tirx.ForKind.SERIAL, gather),
            _call("utvm_mve_gemm_s8", *tail, col.access_ptr("r"), k, *params),
        ])
        return tirx.For(gi, 0, groups, tirx.ForKind.SERIAL, step)

    return _extern(y, args, body)


def _interleave4(wdata: np.ndarray, k: int) -> np.ndarray:
    """Filters (cout x k, k a multiple of 16) four output channels at a time, their 16-byte
    steps interleaved: block b, step j holds rows 4b..4b+3 of bytes 16j..16j+15 (zero rows
    past cout), the layout of utvm_mve_conv_row_s8."""
    rows = wdata.reshape(wdata.shape[0], k).astype(np.int8)
    blocks = (rows.shape[0] + 3) // 4
    padded = np.zeros((blocks * 4, k), np.int8)
    padded[:rows.shape[0]] = rows
    return np.ascontiguousarray(padded.reshape(blocks, 4, k // 16, 16).transpose(0, 2, 1, 3)).reshape(-1)


def _fully_connected(g: Graph, op: Operator) -> KernelDef | None:
    x, w = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]]
    b = g.tensors[op.inputs[2]] if len(op.inputs) > 2 else None
    y = g.tensors[op.outputs[0]]
    if x.dtype != "int8" or w.dtype != "int8" or y.dtype != "int8" or w.data is None or len(w.shape) != 2:
        return None
    if x.quant is None or w.quant is None or y.quant is None or np.any(w.quant.zero_point != 0):
        return None
    if b is not None and b.data is None:
        return None
    units, depth = w.shape
    if x.size % depth or y.size != x.size // depth * units:
        return None
    batch = x.size // depth
    rq = _requant(x, w, y, b, w.data.astype(np.int64).sum(axis=1), units, bool(w.quant.per_channel))
    if rq is None:
        return None
    ys, zy = y.quant.scalar()
    lo, hi = activation_range_int8(op.attrs["activation"], ys, zy)
    X = te.placeholder((batch, depth), "int8", name="x")
    W = te.placeholder(w.shape, "int8", name="w")
    args = [KernelArg(X, tensor=x.name), KernelArg(W, tensor=w.name), *rq.args]
    groups = (batch + PIXELS - 1) // PIXELS

    def body(ins, outs):  # type: ignore[no-untyped-def]
        xb, wb = ins[0], ins[1]
        gi = tirx.Var("g", I32)
        first = gi * PIXELS
        count = tirx.min(batch - first, PIXELS) if batch % PIXELS else tirx.const(PIXELS, I32)
        step = _call("utvm_mve_gemm_s8", outs[0].access_ptr("w", offset=first * units), count, units,
                     xb.access_ptr("r", offset=first * depth), depth, wb.access_ptr("r"), depth, units,
                     *rq.call_args(ins[2:]), zy, lo, hi)
        return tirx.For(gi, 0, groups, tirx.ForKind.SERIAL, step)

    return _extern(y, args, body)


def _depthwise3x3(g: Graph, op: Operator) -> KernelDef | None:
    checked = _quant_ok(g, op)
    if checked is None:
        return None
    x, w, y, b = checked
    assert w.data is not None and x.quant is not None and y.quant is not None
    _, h, wd, c = x.shape
    _, oh, ow, cout = y.shape
    if (op.attrs.get("depth_multiplier", 1) != 1 or cout != c or c % 4 or len(w.shape) != 4
            or tuple(w.shape) != (1, 3, 3, c)):
        return None
    sh, sw = op.attrs["strides"]
    dh, dw = op.attrs["dilation"]
    top, left, _, _ = op.attrs["padding"]
    rq = _requant(x, w, y, b, w.data.astype(np.int64).sum(axis=(0, 1, 2)), c)
    if rq is None:
        return None
    _, zx = x.quant.scalar()
    ys, zy = y.quant.scalar()
    lo, hi = activation_range_int8(op.attrs["activation"], ys, zy)

    X = te.placeholder(x.shape, "int8", name="x")
    W = te.placeholder(w.shape, "int8", name="w")
    # no scratch: the taps in the padding are the zero point times their weights (kernels_mve.h)
    args = [KernelArg(X, tensor=x.name), KernelArg(W, tensor=w.name), *rq.args]

    def body(ins, outs):  # type: ignore[no-untyped-def]
        xb, wb = ins[0], ins[1]
        yb = outs[0]
        oy = tirx.Var("oy", I32)
        row = _call("utvm_mve_dw3x3_row_s8", yb.access_ptr("w", offset=oy * (ow * c)), xb.access_ptr("r"),
                    h, wd, c, oy * sh - top, ow, sw, left, dh, dw, wb.access_ptr("r"), zx,
                    *rq.call_args(ins[2:]), zy, lo, hi)
        return tirx.For(oy, 0, oh, tirx.ForKind.SERIAL, row)

    return _extern(y, args, body)


def _add(g: Graph, op: Operator) -> KernelDef | None:
    a, b, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    if a.dtype != "int8" or b.dtype != "int8" or y.dtype != "int8":
        return None
    if a.quant is None or b.quant is None or y.quant is None:
        return None
    if a.quant.per_channel or b.quant.per_channel or y.quant.per_channel:
        return None
    if a.shape != b.shape or a.size != y.size:
        return None
    sa, za = a.quant.scalar()
    sb, zb = b.quant.scalar()
    sy, zy = y.quant.scalar()
    ma, sha, mb, shb, my, shy = fp.add_params(float(sa), float(sb), float(sy))
    lo, hi = activation_range_int8(op.attrs["activation"], sy, zy)
    size = y.size
    A = te.placeholder((size,), "int8", name="a")
    B = te.placeholder((size,), "int8", name="b")

    def body(ins, outs):  # type: ignore[no-untyped-def]
        return _call("utvm_mve_add_s8", outs[0].access_ptr("w"), ins[0].access_ptr("r"), ins[1].access_ptr("r"),
                     size, za, ma, sha, zb, mb, shb, my, shy, zy, lo, hi)

    return _extern(y, [KernelArg(A, tensor=a.name), KernelArg(B, tensor=b.name)], body)
