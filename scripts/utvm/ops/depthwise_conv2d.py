"""DEPTHWISE_CONV_2D: depthwise 2-D convolution, NHWC input, 1HW(C*M) filter.

Import: TFLite DEPTHWISE_CONV_2D; ONNX Conv with group = input channels (see conv2d.py).
Semantics: TFLite Micro's reference kernels (reference_integer_ops::DepthwiseConvPerChannel for
int8, reference_ops::DepthwiseConv for float32); output channel o reads input channel
o // depth_multiplier.

Kernel variants, first that applies:
- conv: int8, one input channel, multiplier M > 1 (keyword spotting's first layer), on every DSP
  or Helium CPU: the layer is a convolution of one input channel and M outputs (TFLite Micro
  computes both alike), its filter transposed to M x kh x kw x 1 and run on the first
  convolution kernel that takes it (Helium's utvm_mve_conv42_s8, the DSP GEMM), the M outputs of
  a pixel sharing one patch (_as_conv); on DSP CPUs without Helium, multipliers up to 4 of
  windows up to 64 taps are left to dsp_dwp (conv_gives_way; a tuning log naming conv keeps it);
- helium_pix: multiplier 4n on Cortex-M52/M55/M85, VALID windows, at most DWX_PIXELS output
  pixels (utvm_mve_dwx_s8 of utvm/kernels/depthwise_mve_mult.h: per pixel and group of four
  output channels, per tap one scalar input value, the four weights and one VMLA);
- helium_dot: multiplier > 1 on Cortex-M52/M55/M85, windows of 2 or more rows of at most 16 taps
  (utvm_mve_dwd_s8 of utvm/kernels/depthwise_mve_mult.h: the input re-laid out as channel planes,
  one gather of a pixel's window shared by the channel's filters, one VMLADAV per output);
- helium_mult: multiplier > 1 on Cortex-M52/M55/M85, any other window (1-D ones, large ones):
  utvm_mve_dwm_s8 (output pixels in vector lanes, one gather per tap shared by two outputs);
- helium: 3x3 windows, multiplier 1 on Cortex-M52/M55/M85: utvm_mve_dwg_s8 for channels % 8 == 0
  without dilation, else utvm_mve_dw3x3_row_s8 (channels % 4 == 0), else utvm_mve_dwt_s8 on tiny
  maps (at most 36 input pixels, 6 columns; any channel count: every output pixel its own case,
  padding taps skipped); knob ``plan`` (dwg's lines along output rows or columns, lines per
  pass, channels per tile, default the least estimated cost; "tiny" second; "k": helium_k,
  first where dw3x3_row (or nothing) would run, else second, see _helium_plans; where dwg would
  run its C loop (a left shift): "tiny" first on maps it pads, else "k"; a clamp narrower than
  int8's: dwg's assembly as without one, "tiny" first on maps it pads);
- helium_k: int8, multiplier 1 on Cortex-M52/M55/M85, any window, stride, dilation and channel
  count (1-D layers of height 1, 5x5, 3x3 on channel counts dwg refuses):
  utvm_mve_dwk_row_s8 of utvm/kernels/depthwise_mve_k.h, one call per output row: the window's
  rows copied into scratch padded with the zero point (VALID layers of 4n channels read in
  place), then groups of four pixels x four channels (13 instructions per 16 MACs, the weights in
  blocks of four channels x taps), the last c % 4 channels stored under a predicate;
- dsp_dwp: int8 on DSP CPUs (Cortex-M4/M7/M33, and on Cortex-M52/M55/M85 the layers the Helium
  kernels do not take: multiplier > 1), any multiplier, channel count, window and
  stride, dilation along one axis at most, requantization constants that fit (see
  _dwp_constants): the input converted four channels at a time into planar int16 rows in
  planned scratch (a band of output rows at a time), then each output channel over its plane
  with its weights (int8 in flash) widened in registers to int16 pairs, two outputs per step (utvm_dwp_s8 of
  utvm/kernels.h; 3x3 windows of stride 1 or 2 in assembly, any clamp and rounding, the other
  windows of stride 1 or 2 two or four outputs a step in C). Knobs: ``orient`` (the output rows
  run along the image rows, or along its columns: a narrow tall image transposed) and ``band``
  (output rows per conversion: fewer rows, less scratch, more input rows converted twice);
- dsp_dwt: int8 on DSP CPUs, 3x3 windows of stride 1 or 2, multiplier 1, at most 4x4 outputs
  (utvm_dwt_s8): each output position with only its real taps, the zero point folded into
  per-position biases, no padding converted (6-wide stride 2 in assembly); after dsp_dwp, so
  taken where a tuning log names it (see "Tiny maps are tuned for");
- dsp_dw4: multiplier 1, channels % 4 == 0: two taps per SMLAD, four channels per word;
- helium_int16: 16x8, multiplier 1, where the short requantization applies
  (kernels/mac16.short_int64_requant): one utvm_mve_dw_row_s16 call per output row;
- dsp_int16: the same on DSP CPUs, channels % 4 == 0: tap pairs by utvm_dw4_pair_s16;
- int16: 16x8, any (TE);
- generic: any multiplier, window, stride, dilation; int8 blocked by four channels, or float32.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from tvm import te, tirx

from ..ir import NHWC, Graph, Operator, Quant, Tensor
from ..kernels import extern as ext
from ..kernels import fixedpoint as fp
from ..kernels import helium as mve
from ..kernels import mac16
from ..kernels.kerneldef import KernelArg, KernelDef
from ..kernels.requant import I32, acc_bound, activation_range_int8, dead_channels, effective_scales, imm
from ..kernels.schedules import (
    CHANNEL_BLOCK,
    Window,
    blocked_schedule,
    interior_or_border,
    loop,
    over_pixels,
    packed_int8,
    pad,
    pad_sides,
    reduction_schedule,
    root_schedule,
    seq,
    store_block,
    window_conds,
)
from ..kernels.target import Target
from .base import Channels, Offload, OpDef, OpError, SourceOp, Validation, Variant, Weights, knob
from .common import (
    QuantConv,
    Requant16,
    abs_sums,
    bias_of,
    check_bias,
    check_mac_types,
    check_window,
    conv_macs,
    quant_conv,
    requant16,
)
from .conv2d import OPS as CONV_OPS
from .conv2d import float_output, from_tflite


def check(g: Graph, op: Operator) -> None:
    check_mac_types(g, op)
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    if w.data is None or len(w.shape) != 4:
        raise OpError(f"{op.source}: the filter must be a 4-D constant")
    check_window(g, op, w.shape[1], w.shape[2])
    if w.shape[0] != 1 or w.shape[3] != y.shape[3]:
        raise OpError(f"{op.source}: a filter of shape {list(w.shape)} for {y.shape[3]} output channels")
    check_bias(g, op, y.shape[3])
    mult = op.attrs.get("depth_multiplier", 1)
    b = bias_of(g, op)
    if x.dtype == "int16" and b is not None and b.dtype != "int64":
        raise OpError(f"{op.source}: a 16x8 depthwise convolution needs an int64 bias (TFLite Micro reads it as one)")
    if mult < 1 or x.shape[3] * mult != y.shape[3]:
        raise OpError(f"{op.source}: {y.shape[3]} output channels are not {x.shape[3]} input channels"
                      f" x depth multiplier {mult}")


def _int16(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """16x8: int16 input and output, int8 filter, int64 accumulation and bias (TFLite Micro's
    DepthwiseConvPerChannel for int16)."""
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    if x.dtype != "int16":
        return None
    n, oh, ow, cout = y.shape
    kh, kw = w.shape[1], w.shape[2]
    sh, sw = op.attrs["strides"]
    dh, dw = op.attrs["dilation"]
    mult = op.attrs.get("depth_multiplier", 1)
    rq = requant16(g, op, cout, True, True, abs_sums(w.data, (0, 1, 2)))
    X = te.placeholder(x.shape, "int16", name="x")
    W = te.placeholder(w.shape, "int8", name="w")
    P, pad_name = pad(X, op.attrs["padding"], imm(0, "int16"))
    ry, rx = te.reduce_axis((0, kh), "ry"), te.reduce_axis((0, kw), "rx")
    acc = te.compute((n, oh, ow, cout), lambda bb, i, j, o: te.sum(
        P[bb, i * sh + ry * dh, j * sw + rx * dw, o // mult].astype(rq.acc) * W[0, ry, rx, o].astype(rq.acc),
        axis=[ry, rx]), name="acc")
    out = te.compute((n, oh, ow, cout), lambda bb, i, j, o: rq.output(acc[bb, i, j, o], o), name="out")
    args = [KernelArg(X, tensor=x.name), KernelArg(W, tensor=w.name), *rq.args]
    return KernelDef(args, out, y.name, reduction_schedule("acc", "out", pad_name, 4))


def _mac16(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """16x8 (depth multiplier 1) on a DSP or Helium CPU, where the short requantization applies
    (mac16.short_int64_requant: int32 sums, one rounded high multiply)."""
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    if x.dtype != "int16" or w.data is None or op.attrs.get("depth_multiplier", 1) != 1:
        return None
    rq = requant16(g, op, y.shape[3], True, True, abs_sums(w.data, (0, 1, 2)))
    if not rq.short:
        return None
    if target.helium:
        return _helium16(g, op, rq)
    return _dsp16(g, op, rq) if x.shape[3] % mac16.BLOCK == 0 else None


def _window(g: Graph, op: Operator) -> Window:
    """(kh, kw, sh, sw, dh, dw, top, left, h, w) of the layer."""
    x, w = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]]
    return (w.shape[1], w.shape[2], *op.attrs["strides"], *op.attrs["dilation"], *op.attrs["padding"][:2],
            x.shape[1], x.shape[2])


def _dsp16(g: Graph, op: Operator, rq: Requant16) -> KernelDef:
    """Per output pixel and block of four channels, the kernel taps two by two with
    utvm_dw4_pair_s16 (PKHBT/PKHTB pair a channel's two taps, one SMLAD), an odd last tap with
    utvm_dw4_tap_s16, over weights widened to int16 pairs (mac16.dw4_weights); in a window that
    crosses the border the taps outside read zeros (the _pad_ forms)."""
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    assert w.data is not None
    n, _, _, c = x.shape
    _, oh, ow, _ = y.shape
    window = kh, kw, sh, sw, dh, dw, top, left, h, wd = _window(g, op)
    taps = kh * kw
    words = mac16.dw4_block_words(taps)
    weights = mac16.dw4_weights(w.data.reshape(taps, c))
    X = te.placeholder(x.shape, "int16", name="x")
    args = [KernelArg(X, tensor=x.name), KernelArg(te.placeholder(weights.shape, I32, name="w"), constant=weights,
                                                   role="w"), *rq.args]
    sides = pad_sides(window, (oh, ow))

    def build(bufs: dict[str, tirx.Var]) -> tuple[tirx.Stmt, list[tirx.Buffer]]:
        xb, wb, yb = bufs["x"], bufs["w"], bufs["out"]
        acc = mac16.Acc16(rq)
        acc_at = tirx.address_of(acc.acc[0])

        def pixel(bb: tirx.PrimExpr, i: tirx.PrimExpr, j: tirx.PrimExpr) -> tirx.Stmt:
            iy0, ix0 = i * sh - top, j * sw - left

            def body(checked: bool) -> tirx.Stmt:
                def block(oo: tirx.PrimExpr) -> tirx.Stmt:
                    def operands(*ts: int) -> list[tirx.PrimExpr]:
                        """The operands of taps ts: by offsets from the window's first tap, or (in
                        a window that crosses the border) by address, each after its inside flag."""
                        if not checked:
                            x0 = tirx.address_of(xb[bb, iy0, ix0, oo * mac16.BLOCK])
                            return [x0, *(imm(((t // kw) * dh * wd + (t % kw) * dw) * c) for t in ts)]
                        out = []
                        for t in ts:
                            ih, iw = iy0 + (t // kw) * dh, ix0 + (t % kw) * dw
                            conds = window_conds(ih, iw, h, wd, sides)
                            out += [tirx.all(*conds).astype(I32) if conds else imm(1),
                                    tirx.address_of(xb[bb, ih, iw, oo * mac16.BLOCK])]
                        return out

                    pad = "_pad" if checked else ""
                    stmts = acc.start(oo * mac16.BLOCK, c, bufs)
                    for t in range(0, taps - 1, 2):
                        w_at = tirx.address_of(wb[oo * words + mac16.BLOCK * (t // 2)])
                        stmts.append(tirx.Evaluate(tirx.call_extern(I32, f"utvm_dw4_pair{pad}_s16", acc_at,
                                                                    *operands(t, t + 1), w_at)))
                    if taps % 2:
                        w_at = tirx.address_of(wb[oo * words + mac16.BLOCK * (taps // 2)])
                        stmts.append(tirx.Evaluate(tirx.call_extern(I32, f"utvm_dw4_tap{pad}_s16", acc_at,
                                                                    *operands(taps - 1), w_at)))
                    return seq(stmts + acc.store(oo * mac16.BLOCK, c, bufs,
                                                 lambda o, v: tirx.BufferStore(yb, v, [bb, i, j, o])))

                return mac16.over_blocks(c, block)

            return interior_or_border(i, j, window, sides, body)

        return over_pixels((n, oh, ow), pixel), acc.buffers

    return KernelDef(args, mac16.signature(tuple(y.shape), X), y.name, root_schedule(build))


def _helium16(g: Graph, op: Operator, rq: Requant16) -> KernelDef:
    """One utvm_mve_dw_row_s16 call per output row: eight channels per step as int16 lanes
    (VMULLB/VMULLT), the taps outside the input skipped, VRMULH requantization; biases and
    multipliers stored per block of eight channels, even ones first."""
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    assert rq.short_arrays is not None
    n, _, _, c = x.shape
    _, oh, ow, _ = y.shape
    kh, kw, sh, sw, dh, dw, top, left, h, wd = _window(g, op)
    X = te.placeholder(x.shape, "int16", name="x")
    args = [KernelArg(X, tensor=x.name), KernelArg(te.placeholder(w.shape, "int8", name="w"), tensor=w.name),
            *(KernelArg(te.placeholder((-(-c // 8) * 8,), I32, name=role), constant=mac16.even_odd(v), role=role)
              for role, v in zip(("bias", "mult"), rq.short_arrays))]

    def build(bufs: dict[str, tirx.Var]) -> tuple[tirx.Stmt, list[tirx.Buffer]]:
        xb, wb, yb = bufs["x"], bufs["w"], bufs["out"]

        def row(bb: tirx.PrimExpr, oy: tirx.PrimExpr) -> tirx.Stmt:
            return tirx.Evaluate(tirx.call_extern(
                I32, "utvm_mve_dw_row_s16", tirx.address_of(yb[bb, oy, 0, 0]), tirx.address_of(xb[bb, 0, 0, 0]),
                imm(h), imm(wd), imm(c), oy * sh - top, imm(ow), imm(sw), imm(left), imm(kh), imm(kw), imm(dh),
                imm(dw), tirx.address_of(wb[0, 0, 0, 0]), tirx.address_of(bufs["bias"][0]),
                tirx.address_of(bufs["mult"][0]), imm(rq.lo), imm(rq.hi)))

        return loop(n, "b", lambda bb: loop(oh, "oy", lambda oy: row(bb, oy))), []

    return KernelDef(args, mac16.signature(tuple(y.shape), X), y.name, root_schedule(build))


def _dw4(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    if not (target.dsp and x.dtype == "int8" and op.attrs.get("depth_multiplier", 1) == 1
            and x.shape[3] % CHANNEL_BLOCK == 0):
        return None
    return _depthwise_dw4(op, quant_conv(g, op, target.packed), y.shape[1:3], y.name)


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    n, oh, ow, cout = y.shape
    kh, kw = (w.shape[1], w.shape[2])
    sh, sw = op.attrs["strides"]
    dh, dw = op.attrs["dilation"]
    mult = op.attrs.get("depth_multiplier", 1)
    ry = te.reduce_axis((0, kh), "ry")
    rx = te.reduce_axis((0, kw), "rx")
    if x.dtype == "int8":
        q = quant_conv(g, op, target.packed)
        P, pad_name = pad(q.X, op.attrs["padding"], imm(q.zx, "int8"))
        W = q.W
        acc = te.compute((n, oh, ow, cout), lambda bb, i, j, o: te.sum(
            P[bb, i * sh + ry * dh, j * sw + rx * dw, o // mult].astype(I32) * W[0, ry, rx, o].astype(I32),
            axis=[ry, rx]), name="acc")
        out = te.compute((n, oh, ow, cout), lambda bb, i, j, o: q.rq.output_s8(acc[bb, i, j, o], o, q.zy, q.lo, q.hi),
                         name="out")
        # the padding tests and the loop are shared by a block of output channels
        return KernelDef(q.args, out, y.name, blocked_schedule(pad_name, 4, cout))
    X = te.placeholder(x.shape, x.dtype, name="x")
    W = te.placeholder(w.shape, w.dtype, name="w")
    args = [KernelArg(X, tensor=x.name), KernelArg(W, tensor=w.name)]
    P, pad_name = pad(X, op.attrs["padding"], imm(0.0, "float32"))
    acc = te.compute((n, oh, ow, cout), lambda bb, i, j, o: te.sum(
        P[bb, i * sh + ry * dh, j * sw + rx * dw, o // mult] * W[0, ry, rx, o], axis=[ry, rx]), name="acc")
    out = float_output(acc, bias_of(g, op), args, op.attrs["activation"])
    return KernelDef(args, out, y.name, reduction_schedule("acc", "out", pad_name, 4))


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


def _depthwise_dw4(op: Operator, q: QuantConv, out_hw: tuple[int, int], y_name: str) -> KernelDef:
    """An int8 depthwise convolution (multiplier 1, channels % 4 == 0) on four channels per
    int32 word: per output pixel and block of four channels, the kernel taps two by two with
    utvm_dw4_pair_s8 (one SMLAD per channel and pair), an odd last tap with utvm_dw4_tap_s8.
    Taps in the padding read the packed input zero point. The weights are reordered (same
    bytes) for the pairs."""
    X, wdata, zx, args, rq, zy, lo, hi = q.X, q.wdata, q.zx, q.args, q.rq, q.zy, q.lo, q.hi
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
    zword = packed_int8(zx)
    P, pad_name = pad(X4, op.attrs["padding"], imm(zword))
    ry = te.reduce_axis((0, kh), "ry")
    rx = te.reduce_axis((0, kw), "rx")
    paired = taps - taps % 2
    window = (kh, kw, sh, sw, dh, dw, top, left, h, wd)
    sides = pad_sides(window, out_hw)

    def w_index(o: tirx.PrimExpr, t: tirx.PrimExpr) -> tirx.PrimExpr:
        lane = o % CHANNEL_BLOCK
        in_pair = 8 * (t // 2) + 4 * (lane // 2) + 2 * (t % 2) + lane % 2
        return (o // CHANNEL_BLOCK) * (taps * CHANNEL_BLOCK) + tirx.Select(t < paired, in_pair, 8 * (t // 2) + lane)

    def acc_f(bb, i, j, o):  # type: ignore[no-untyped-def]
        word = P[bb, i * sh + ry * dh, j * sw + rx * dw, o // CHANNEL_BLOCK]
        lane = fp.shift_left_wrap(word, imm(24) - (o % CHANNEL_BLOCK) * 8) >> imm(24)
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
                        conds = window_conds(ih, iw, h, wd, sides)
                        load = x4[bb, ih, iw, oo]
                        return tirx.if_then_else(tirx.all(*conds), load, imm(zword)) if conds else load

                    def at(t: int) -> tirx.PrimExpr:
                        return tirx.address_of(x4[bb, i * sh + (t // kw) * dh - top, j * sw + (t % kw) * dw - left, oo])

                    base = oo * (taps * CHANNEL_BLOCK)
                    stmts: list[tirx.Stmt] = [tirx.BufferStore(acc4, imm(0), [k]) for k in range(CHANNEL_BLOCK)]
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
                    stmts += store_block(acc4, rq, oo * CHANNEL_BLOCK, (zy, lo, hi), yb, bufs, (bb, i, j))
                    return seq(stmts)

                return loop(blocks, "oo", block)

            return interior_or_border(i, j, window, sides, channel_blocks)

        return over_pixels((n, oh, ow), pixel), [acc4]

    return KernelDef(args, out, y_name, root_schedule(build))


# ---------------------------------------------------------------------------------------
# conv: one input channel, multiplier > 1, on the convolution kernels

#: the convolution variants a one-channel depthwise layer is tried on, in order
CONV_VARIANTS = ("helium", "dsp_gemm", "dsp_rows4", "dsp_rows_flat", "dsp_mac4")


def _as_conv(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """A depthwise layer of one input channel and multiplier M > 1 is a convolution of one input
    channel and M output channels (TFLite Micro's DepthwiseConvPerChannel and ConvPerChannel
    compute the same sums and requantization): its 1 x kh x kw x M filter, transposed to
    M x kh x kw x 1 (the same int8 bytes, per-channel scales on axis 0), runs on the first
    convolution kernel of the CPU that takes it (Helium's utvm_mve_conv42_s8, the DSP GEMM), where
    the M outputs of a pixel share one gathered patch.

    bench_layers --per-op 200, the 49 one-channel multiplier > 1 shapes: the Cortex-M55 at most
    1.55 instructions per MAC (dsp_dwp / generic before: 1.34-5.69); the Cortex-M4 faster on 37
    (10x8 s2x1 m2 5.66 -> 1.77), slower on 12 where dsp_dwp's planes were already quick (narrow
    maps, m4-m8: 8x8 s2x2 m8 on 49x10 1.36 -> 2.36), which `utvm tune` finds: dsp_dwp stays in
    the tuning space."""
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    if not (x.dtype == "int8" and y.dtype == "int8" and x.shape[3] == 1 and op.attrs.get("depth_multiplier", 1) > 1
            and w.data is not None and w.quant is not None and (target.helium or target.dsp)):
        return None
    if conv_gives_way(g, op, target) and _dwp(g, op, target) is not None:
        return None
    name = f"{w.name}:conv"
    wconv = Tensor(name, (w.shape[3], w.shape[1], w.shape[2], 1), w.dtype,
                   Quant(w.quant.scale, w.quant.zero_point, 0), np.ascontiguousarray(w.data.transpose(3, 1, 2, 0)))
    shadow = Graph(g.name, {**g.tensors, name: wconv}, [], g.inputs, g.outputs)
    conv = Operator("conv2d", [op.inputs[0], name, *op.inputs[2:]], list(op.outputs),
                    {k: v for k, v in op.attrs.items() if k not in ("depth_multiplier", "config")}, op.source)
    variants = {v.name: v for v in CONV_OPS[0].variants}
    for vname in CONV_VARIANTS:
        kdef = variants[vname].build(shadow, conv, target)
        if kdef is not None:
            kdef.args = [replace(a, tensor="", constant=wconv.data, role=a.role or "w") if a.tensor == name else a
                         for a in kdef.args]
            return kdef
    return None


#: one-channel layers of at most this multiplier and window taps run dsp_dwp on DSP CPUs without
#: Helium (see conv_gives_way)
DWP_CONV_MAX_MULT, DWP_CONV_MAX_TAPS = 4, 64


def conv_gives_way(g: Graph, op: Operator, target: Target) -> bool:
    """Whether a one-channel layer leaves the convolution kernels to dsp_dwp (untuned; a tuning
    log naming "conv" keeps them): on DSP CPUs without Helium, multipliers up to
    DWP_CONV_MAX_MULT and windows up to DWP_CONV_MAX_TAPS taps, where each pixel's patch is shared
    by too few filters. The 35 seeded kws shapes on mps2/an386, dsp_dwp against conv: faster on
    6 of the 7 of those ([61, 13, 1] 8x8 m4 3.22 -> 1.68, 7x3 s2 m3 3.67 -> 2.18, [32, 10, 1] 5x5 s2
    m2 3.47 -> 2.72, [124, 40, 1] 10x4 m2 2.05 -> 1.53 instructions per MAC; one equal), slower
    on larger windows (10x8 m2 1.78 -> 1.80, 20x8 m4 1.14 -> 3.62) and multipliers (m16-m64 on
    8x8 to 20x8: 0.92-1.18 -> 1.5-3.8)."""
    w = g.tensors[op.inputs[1]]
    return (not target.helium and op.attrs.get("depth_multiplier", 1) <= DWP_CONV_MAX_MULT
            and w.shape[1] * w.shape[2] <= DWP_CONV_MAX_TAPS and knob(op, "variant", None) != "conv")


# ---------------------------------------------------------------------------------------
# helium_mult: multiplier > 1 on Helium (utvm_mve_dwm_s8 of utvm/kernels/depthwise_mve_mult.h)

#: the band of input rows utvm_mve_dwm_s8 copies stays within this many bytes (when one output row fits)
DWM_BAND_BUDGET = 8192
#: output pixels per step of utvm_mve_dwm_s8
DWM_PIXELS = 8


def _dwm_band(op: Operator, in_c: int, out_hw: tuple[int, int], kernel: tuple[int, int]) -> tuple[int, int, int]:
    """(pixels per band row, output rows per band, band bytes) of utvm_mve_dwm_s8: as many output
    rows as DWM_BAND_BUDGET holds, at least one."""
    (sh, sw), (dh, dw) = op.attrs["strides"], op.attrs["dilation"]
    oh, ow = out_hw
    pw = (ow - 1) * sw + (kernel[1] - 1) * dw + 1

    def size(rows: int) -> int:
        return ((rows - 1) * sh + (kernel[0] - 1) * dh + 1) * pw * in_c

    rows = oh
    while rows > 1 and size(rows) > DWM_BAND_BUDGET:
        rows -= 1
    return pw, rows, size(rows)


def _helium_mult(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """Multiplier > 1 on Helium (the layers of one input channel the convolution kernels have not
    taken): per band of output rows the input rows their windows read copied into scratch padded
    with the zero point, then per pair of output channels of an input channel and 8 output pixels
    (running on across the band's rows) two gathers per tap shared by the two channels' VMLAs,
    requantized and scattered 4 pixels at a time."""
    mult = op.attrs.get("depth_multiplier", 1)
    lay = _helium_mult_layer(g, op, target)
    if lay is None:
        return None
    x, y = lay.x, lay.y
    n, h, wd, c = x.shape
    _, oh, ow, cout = y.shape
    kh, kw = lay.wdata.shape[1], lay.wdata.shape[2]
    (sh, sw), (dh, dw) = op.attrs["strides"], op.attrs["dilation"]
    top, left, _, _ = op.attrs["padding"]
    folded, mults, shifts = lay.params
    rq = np.stack([folded, mults, shifts], axis=1).astype(np.int32).reshape(-1)
    taps = np.ascontiguousarray(lay.wdata[0].transpose(2, 0, 1).astype(np.int8)).reshape(-1)
    pw, rows, band = _dwm_band(op, c, (oh, ow), (kh, kw))
    right = int(np.all(shifts <= -1))
    args = [KernelArg(te.placeholder(x.shape, "int8", name="x"), tensor=x.name),
            KernelArg(te.placeholder((taps.size,), "int8", name="w"), constant=taps, role="w"),
            KernelArg(te.placeholder((rq.size,), I32, name="rq"), constant=rq, role="rq"),
            KernelArg(te.placeholder((band,), "int8", name="band"), role="band", scratch=True),
            KernelArg(te.placeholder((rows * ow + 8,), I32, name="offs"), role="offs", scratch=True)]

    def body(ins, outs):  # type: ignore[no-untyped-def]
        xb, wb, qb, bb, ob = ins
        return seq([mve.call("utvm_mve_dwm_s8", outs[0].access_ptr("w", offset=i * (y.size // n)),
                             xb.access_ptr("r", offset=i * (x.size // n)), h, wd, c, mult, oh, ow, kh, kw, sh, sw,
                             dh, dw, top, left, wb.access_ptr("r"), qb.access_ptr("r"), lay.zx, lay.zy, lay.lo,
                             lay.hi, right, pw, rows, bb.access_ptr("w"), ob.access_ptr("w")) for i in range(n)])

    return mve.extern(y, args, body)


# ---------------------------------------------------------------------------------------
# helium_pix: few output pixels, output channels in the lanes (utvm_mve_dwx_s8 of
# utvm/kernels/depthwise_mve_mult.h)

#: the most output pixels helium_pix takes: below the vectors of pixels of helium_row,
#: helium_dot and helium_mult (stream1d [1,8,64] 1x8 s1x2 VALID m4 on one pixel: 12,400
#: instructions on utvm_mve_dwd_s8)
DWX_PIXELS = 3


def _helium_pix(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """Multiplier 4n on Helium, VALID windows, at most DWX_PIXELS output pixels: utvm_mve_dwx_s8
    (per pixel and group of four output channels, per tap one scalar input value times the
    group's four weights, one VMLA; nothing copied)."""
    mult = op.attrs.get("depth_multiplier", 1)
    lay = _helium_mult_layer(g, op, target)
    if lay is None or mult % 4 or any(op.attrs["padding"]) or len(lay.wdata.shape) != 4:
        return None
    x, y = lay.x, lay.y
    n, h, wd, c = x.shape
    _, oh, ow, cout = y.shape
    if oh * ow > DWX_PIXELS or cout != c * mult:
        return None
    kh, kw = lay.wdata.shape[1], lay.wdata.shape[2]
    (sh, sw), (dh, dw) = op.attrs["strides"], op.attrs["dilation"]
    groups = cout // 4
    wt = lay.wdata.reshape(kh * kw, groups, 4).transpose(1, 0, 2).astype(np.int8)
    rq = np.stack([p.reshape(groups, 4) for p in lay.params], axis=1).astype(np.int32)
    args = [KernelArg(te.placeholder(x.shape, "int8", name="x"), tensor=x.name),
            KernelArg(te.placeholder((wt.size,), "int8", name="w"), constant=wt.reshape(-1), role="w"),
            KernelArg(te.placeholder((rq.size,), I32, name="rq"), constant=rq.reshape(-1), role="rq")]

    def body(ins, outs):  # type: ignore[no-untyped-def]
        xb, wb, qb = ins
        return seq([mve.call("utvm_mve_dwx_s8", outs[0].access_ptr("w", offset=i * (y.size // n)),
                             xb.access_ptr("r", offset=i * (x.size // n)), wd, c, mult, oh, ow, kh, kw, sh, sw,
                             dh, dw, wb.access_ptr("r"), qb.access_ptr("r"), lay.zy, lay.lo, lay.hi)
                    for i in range(n)])

    return mve.extern(y, args, body)


# ---------------------------------------------------------------------------------------
# helium_row: output pixels in the lanes (utvm_mve_dwr_s8 of utvm/kernels/depthwise_mve_row.h)

#: below this many channels the channel-vector kernels leave lanes empty: helium_row takes them
DWR_FEW_CHANNELS = 8


def dwr_takes(x_shape: tuple[int, ...], kh: int, mult: int, ow: int) -> bool:
    """Whether helium_row is chosen (see _helium_row), by its measured instructions per MAC on
    issue 23's seeded layers (mps3/an547): fewer than DWR_FEW_CHANNELS input channels
    ([12,12,1] 3x3 9.14 -> 1.51, [20,20,5] 3x3 3.03 -> 1.58, [12,12,5] 5x5 2.12 -> 1.08); 1-D
    layers (height 1, windows of one row) of multiplier > 1 and at least 4 output pixels
    (utvm_mve_dwm_s8 before: [1,49,32] 1x3 m4 2.99 -> 2.20, [1,32,64] 1x5 m2 1.97 -> 1.40,
    [1,64,32] 1x15 m4 1.08 -> 0.83); 2-D layers of two output channels per chunk (a multiplier
    of 2 x odd) whose rows leave at most a quarter of the lanes of their vectors of 8 pixels
    empty (utvm_mve_dwd_s8 before: [49,10,16] 3x3 m2 1.40 -> 1.05, [49,20,32] 1.44 -> 1.35; 10
    pixels a row, 16 lanes: 1.39 -> 1.80)."""
    c = x_shape[3]
    if c < DWR_FEW_CHANNELS:
        return True
    if x_shape[1] == 1 and kh == 1:
        return mult > 1 and ow >= 4
    return mult % 2 == 0 and mult % 4 != 0 and -(-ow // 8) * 8 * 3 <= ow * 4


def dwr_plan(ow: int, kh: int, kw: int, sw: int, mult: int) -> tuple[int, int, int]:
    """(g, mm, pwp) of utvm_mve_dwr_s8: mm output channels of an input channel at once (a divisor
    of the multiplier, at most 4), g vectors of 4 pixels (g x mm <= 4 accumulators; the g of
    the least estimated instructions: per step g x mm bias copies, per tap g loads, mm weight
    loads and g x mm VMLA, 7 instructions per requantized vector), pwp the columns of a plane."""
    mm = next(k for k in (4, 3, 2, 1) if mult % k == 0)
    taps, runs = kh * kw, kh * min(sw, kw)

    def cost(g: int) -> int:
        steps = -(-ow // (4 * g))
        return steps * (g * mm * 8 + taps * (g + mm + g * mm) + 2 * runs + 4)

    g = min((g for g in (1, 2, 4) if g * mm <= 4), key=lambda g: (cost(g), -g))
    return g, mm, -(-ow // (4 * g)) * 4 * g + (kw - 1) // sw + 1


def dwr_weights(wdata: np.ndarray, kh: int, kw: int, sw: int, mm: int) -> np.ndarray:
    """utvm_mve_dwr_s8's weights: per chunk of mm output channels, per window row, per phase ph,
    per tap ph, ph + sw, ... < kw, the chunk's mm weights (int8)."""
    w = wdata.reshape(kh, kw, -1).transpose(2, 0, 1)  # cout x kh x kw
    order = [(ry, rx) for ry in range(kh) for ph in range(sw) for rx in range(ph, kw, sw)]
    taps = np.stack([w[:, ry, rx] for ry, rx in order], axis=1)  # cout x taps, in run order
    chunks = taps.reshape(-1, mm, len(order)).transpose(0, 2, 1)  # chunk x taps x mm
    return np.ascontiguousarray(chunks.astype(np.int8)).reshape(-1)


def _helium_row(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """Helium depthwise with the output pixels of a row in the lanes (any multiplier, window,
    stride and padding, no dilation) for the layers whose channels leave vector lanes empty:
    1-D layers (height 1, windows of one row) and fewer than DWR_FEW_CHANNELS channels. Per
    output row and input channel the rows its windows read copied into phase planes padded with
    the zero point, then per chunk of output channels and g x 4 pixels a contiguous load per tap
    and VMLA by the weight (utvm_mve_dwr_s8)."""
    if not target.helium:
        return None
    lay = mve.layer(g, op, (0, 1, 2))
    if lay is None or len(lay.w.shape) != 4 or op.attrs["dilation"] != (1, 1):
        return None
    x, y = lay.x, lay.y
    n, h, wd, c = x.shape
    _, oh, ow, cout = y.shape
    mult = op.attrs.get("depth_multiplier", 1)
    kh, kw = lay.wdata.shape[1], lay.wdata.shape[2]
    sh, sw = op.attrs["strides"]
    # strides of 3 and more refused: a seeded 3x2 stride-3 layer differed from TFLite Micro
    if cout != c * mult or max(sh, sw) > 2 or not dwr_takes(tuple(x.shape), kh, mult, ow):
        return None
    top, left, _, _ = op.attrs["padding"]
    folded, mults, shifts = lay.params
    rq = np.stack([folded, mults, shifts], axis=1).astype(np.int32).reshape(-1)
    gg, mm, pwp = dwr_plan(ow, kh, kw, sw, mult)
    wt = dwr_weights(lay.wdata, kh, kw, sw, mm)
    right = int(np.all(shifts <= -1))
    rows = oh  # output rows per pass: their input rows of a channel copied at once
    while rows > 1 and ((rows - 1) * sh + kh) * sw * pwp > DWM_BAND_BUDGET:
        rows -= 1
    planes = ((rows - 1) * sh + kh) * sw * pwp + 16
    args = [KernelArg(te.placeholder(x.shape, "int8", name="x"), tensor=x.name),
            KernelArg(te.placeholder((wt.size,), "int8", name="w"), constant=wt, role="w"),
            KernelArg(te.placeholder((rq.size,), I32, name="rq"), constant=rq, role="rq"),
            KernelArg(te.placeholder((planes,), "int8", name="planes"), role="planes", scratch=True)]

    def body(ins, outs):  # type: ignore[no-untyped-def]
        xb, wb, qb, pb = ins
        return seq([mve.call("utvm_mve_dwr_s8", outs[0].access_ptr("w", offset=i * (y.size // n)),
                             xb.access_ptr("r", offset=i * (x.size // n)), h, wd, c, mult, oh, ow, kh, kw, sh, sw,
                             top, left, wb.access_ptr("r"), qb.access_ptr("r"), lay.zx, lay.zy, lay.lo, lay.hi,
                             right, gg, mm, pwp, rows, pb.access_ptr("w")) for i in range(n)])

    kdef = mve.extern(y, args, body)
    # a pass of several rows writes them channel by channel, each after its own input rows only
    kdef.rows_out_of_order = rows > 1 and c > 1
    return kdef


def _helium_mult_layer(g: Graph, op: Operator, target: Target):  # type: ignore[no-untyped-def]
    """The int8 layer of a multiplier > 1 depthwise on Helium (mve.layer), None elsewhere."""
    if not target.helium or op.attrs.get("depth_multiplier", 1) < 2:
        return None
    return mve.layer(g, op, (0, 1, 2))


def _helium_dot(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """Multiplier > 1 on Helium, windows of at most 16 taps within 255 bytes of a channel plane:
    utvm_mve_dwd_s8 (per band of output rows the input re-laid out as channel planes padded with
    the zero point; per input channel its filters in vector registers, per output pixel one gather
    of its window and one VMLADAV per filter, four pixels requantized in one vector)."""
    mult = op.attrs.get("depth_multiplier", 1)
    lay = _helium_mult_layer(g, op, target)
    if lay is None:
        return None
    x, y = lay.x, lay.y
    n, h, wd, c = x.shape
    _, oh, ow, cout = y.shape
    kh, kw = lay.wdata.shape[1], lay.wdata.shape[2]
    (sh, sw), (dh, dw) = op.attrs["strides"], op.attrs["dilation"]
    top, left, _, _ = op.attrs["padding"]
    pw = (ow - 1) * sw + (kw - 1) * dw + 1
    toff = np.array([ky * dh * pw + kx * dw for ky in range(kh) for kx in range(kw)], np.int64)
    # 1-D windows (height 1) run faster on utvm_mve_dwm_s8 (1x3 multiplier 4: 2.7 against 3.7
    # instructions per MAC, 1x9 multiplier 2: 1.43 against 1.52), except on fewer output pixels
    # than its vectors of 8 (1x8 stride 2 on 8 inputs, one output: 8.08 there, dsp_dwp 7.3)
    if (kh == 1 and oh * ow >= DWM_PIXELS) or toff.size > 16 or toff.max() > 255:
        return None
    rows = oh
    while rows > 1 and c * ((rows - 1) * sh + (kh - 1) * dh + 1) * pw > DWM_BAND_BUDGET:
        rows -= 1
    planes = c * ((rows - 1) * sh + (kh - 1) * dh + 1) * pw
    folded, mults, shifts = lay.params
    rq = np.stack([folded, mults, shifts], axis=1).astype(np.int32).reshape(-1)
    wt = np.ascontiguousarray(lay.wdata[0].transpose(2, 0, 1).astype(np.int8))  # int8 taps per channel
    offs = np.zeros(16, np.uint8)
    offs[:toff.size] = toff
    right = int(np.all(shifts <= -1))
    args = [KernelArg(te.placeholder(x.shape, "int8", name="x"), tensor=x.name),
            KernelArg(te.placeholder((wt.size,), "int8", name="w"), constant=wt.reshape(-1), role="w"),
            KernelArg(te.placeholder((16,), "uint8", name="toff"), constant=offs, role="toff"),
            KernelArg(te.placeholder((rq.size,), I32, name="rq"), constant=rq, role="rq"),
            KernelArg(te.placeholder((planes,), "int8", name="planes"), role="planes", scratch=True),
            KernelArg(te.placeholder((rows * ow + 3,), I32, name="offs"), role="offs", scratch=True)]

    def body(ins, outs):  # type: ignore[no-untyped-def]
        xb, wb, tb, qb, pb, ob = ins
        return seq([mve.call("utvm_mve_dwd_s8", outs[0].access_ptr("w", offset=i * (y.size // n)),
                             xb.access_ptr("r", offset=i * (x.size // n)), h, wd, c, mult, oh, ow, kh, kw, sh, sw,
                             dh, top, left, wb.access_ptr("r"), tb.access_ptr("r"), qb.access_ptr("r"), lay.zx,
                             lay.zy, lay.lo, lay.hi, right, pw, rows, pb.access_ptr("w"), ob.access_ptr("w"))
                    for i in range(n)])

    return mve.extern(y, args, body)


# ---------------------------------------------------------------------------------------
# dsp_dwp: planar int16 rows (utvm_dwp_s8 of utvm/kernels.h)

#: weight words per output channel that utvm_dwp_s8 holds (UTVM_DWP_MAXW)
DWP_MAX_WORDS = 64
#: the largest right shift of its requantization (r = 2**(e-1) + zy * 2**e stays in int32)
DWP_MAX_SHIFT = 23
#: UTVM_DWP_ROUND_NEG, UTVM_DWP_MIXED, UTVM_DWP_PACKED
DWP_ROUND_NEG, DWP_MIXED, DWP_PACKED = 1, 2, 4

#: scratch bytes the default band stays within (when one output row fits)
DWP_SCRATCH_BUDGET = 8192


@dataclass(frozen=True)
class DwpGeometry:
    """The layer as utvm_dwp_s8 runs it, output rows along the image rows or (transposed)
    along its columns: sizes, window, strides, padding, and the byte strides of the input and
    output rows and columns."""

    h: int
    w: int
    oh: int
    ow: int
    kh: int
    kw: int
    sh: int
    sw: int
    dh: int
    top: int
    left: int
    xrs: int
    xcs: int
    yrs: int
    ycs: int

    @property
    def rs(self) -> int:
        """int16 values per plane row: the padded width and one more, even (stride 2: a multiple of
        four, for the blocks of two pair words of utvm_dwp_s8)."""
        unit = 4 if self.sw == 2 else 2
        return -(-((self.ow - 1) * self.sw + self.kw + 1) // unit) * unit

    @property
    def row_words(self) -> int:
        """Weight words per kernel row (see kernels.h)."""
        if self.sw == 1:
            return max(self.kw - 1, 1)
        return (self.kw + 1) // 2

    def scratch_values(self, band: int) -> int:
        """int16 values of the planes of four channels for ``band`` output rows."""
        return 4 * ((band - 1) * self.sh + (self.kh - 1) * self.dh + 1) * self.rs

    def fast(self) -> bool:
        """The assembly loop applies (3x3, stride 1 or 2, offsets within LDRD's and STRB's reach)."""
        return (self.kh == self.kw == 3 and self.sw <= 2 and 16 * self.rs * self.dh <= 1020
                and 8 * self.rs * self.sh <= 4095 and (self.ycs <= 2047 if self.sw == 1 else 3 * self.ycs <= 4095))


    def converts_fast(self) -> bool:
        """The conversion's assembly applies (utvm_dwp_rows4 / utvm_dwp_rows4b): input columns
        less than 1024 bytes apart, the planes of four channels within its reach (blocks at
        stride 2 from column 0, else 3 rs <= 506); elsewhere plain C, about twice the
        instructions a value (kws_ds [49, 20, 64] s2 VALID along its columns, 1,280 bytes apart:
        3.19 instructions per MAC, along its rows 2.3)."""
        blk = self.sw == 2 and self.left % 4 == 0 and self.rs % 4 == 0
        return self.xcs < 1024 and (blk or 3 * self.rs <= 506)


def _dwp_geometry(g: Graph, op: Operator, orient: str) -> DwpGeometry | None:
    """The geometry for ``orient`` ("rows" or "cols"), None when the dilation runs along the
    output rows (pairs of taps must be neighbours)."""
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    _, h, wd, c = x.shape
    _, oh, ow, cout = y.shape
    (sh, sw), (dh, dw) = op.attrs["strides"], op.attrs["dilation"]
    top, left, _, _ = op.attrs["padding"]
    kh, kw = w.shape[1], w.shape[2]
    if orient == "cols":
        h, wd, oh, ow, kh, kw, sh, sw, dh, dw, top, left = wd, h, ow, oh, kw, kh, sw, sh, dw, dh, left, top
        strides = (c, x.shape[2] * c, cout, y.shape[2] * cout)
    else:
        strides = (wd * c, c, ow * cout, cout)
    if dw != 1:
        return None
    return DwpGeometry(h, wd, oh, ow, kh, kw, sh, sw, dh, top, left, *strides)


@dataclass(frozen=True)
class DwpConstants:
    """Per output channel (bias, bias, m, r, e) and the factor of its weights (see kernels.h),
    the flags, the output clamp and the layer's shift (0: none)."""

    q: np.ndarray
    scale: np.ndarray
    flags: int
    lo: int
    hi: int
    shift: int


def _dwp_constants(g: Graph, op: Operator) -> DwpConstants | None:
    """The requantization as utvm_dwp_s8 computes it, or None where it cannot be exact.

    TFLite's output is floor((2 acc m + 2**31 + (r - n) 2**32) / 2**(32 + e)) with
    r = 2**(e-1) + zy 2**e (zy for e = 0) and n = 1 for negative ties (acc < 0), 0 otherwise;
    the weights and the bias are doubled (and scaled by a left shift), so that one SMMLAR gives
    the numerator's high word ("own" form, the channel's e). Without negative ties to round
    (the clamp starts at zy or above, which clamps them to the same value), numerator and
    denominator may be scaled by 2**d with d = E - e >= 1: the 2**31 becomes a multiple of
    2**32, one SMMLA gives the high word with r' = 2**(d-1) + r 2**d, and the shift is the
    layer's E (SSAT's operand; stored as e = -E). E is chosen to give that form to the most
    channels (the scaled weights must stay within int16); the others keep their own
    (UTVM_DWP_MIXED). Every form needs |scaled acc| < 2**31 and shifts up to DWP_MAX_SHIFT, the
    own form with negative ties a shift of at least 1."""
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    b = bias_of(g, op)
    assert x.quant is not None and w.quant is not None and y.quant is not None and w.data is not None
    cout = y.shape[3]
    _, zx = x.quant.scalar()
    ys, zy = y.quant.scalar()
    lo, hi = activation_range_int8(op.attrs["activation"], ys, zy)
    wdata = w.data.astype(np.int64).reshape(-1, cout)
    bias = b.data.astype(np.int64) if b is not None and b.data is not None else np.zeros(cout, np.int64)
    if np.any(w.quant.zero_point != 0) or bias.size != cout:
        return None
    folded = bias - zx * wdata.sum(axis=0)
    pairs = [fp.quantize_multiplier(float(v)) for v in effective_scales(x, w, y, True)]
    mults = np.broadcast_to(np.array([m for m, _ in pairs], np.int64), (cout,))
    shifts = np.broadcast_to(np.array([s for _, s in pairs], np.int64), (cout,))
    wabs = np.abs(wdata).sum(axis=0)
    folded, mults, shifts, bound = dead_channels(folded, mults, shifts, acc_bound(wabs, bias), wabs == 0)
    e = np.maximum(-shifts, 0)
    r = np.where(e > 0, np.left_shift(1, np.maximum(e - 1, 0)) + zy * np.left_shift(1, e), zy)
    base = np.left_shift(2, np.maximum(shifts, 0))
    wmax = np.abs(wdata).max(axis=0)

    def fits(scale: np.ndarray, words: np.ndarray) -> np.ndarray:
        return ((wmax * scale <= 32767) & (bound * scale < 1 << 31) & np.all(np.abs(words) < 1 << 31, axis=1)
                & (np.abs(words[:, 4]) <= DWP_MAX_SHIFT))

    own = np.stack([folded * base, folded * base, mults, r, e], axis=1)
    own_ok = fits(base, own) & ((lo >= zy) | (e > 0))
    best = (0, 0, own, base)
    if lo >= zy:
        for top in sorted(set((e + 1).tolist())):
            d = np.maximum(top - e, 1)
            q = np.stack([folded * base << d, folded * base << d, mults, np.left_shift(1, d - 1) + (r << d),
                          np.full(cout, -top)], axis=1)
            ok = fits(base << d, q) & (e < top)
            if ok.sum() > best[0] and np.all(ok | own_ok):
                best = (int(ok.sum()), top, np.where(ok[:, None], q, own), np.where(ok, base << d, base))
    count, top, q, scale = best
    if not np.all((q[:, 4] < 0) | own_ok):
        return None
    flags = (DWP_ROUND_NEG if lo < zy else 0) | (DWP_MIXED if 0 < count < cout else 0)
    return DwpConstants(q.astype(np.int32), scale, flags, lo, hi, top)


def _dwp_taps(w: np.ndarray, geo: DwpGeometry) -> np.ndarray:
    """Weights (kh, kw, cout) as utvm_dwp_s8 keeps them in flash: int8, per output channel its
    kh x kw taps row-major; it widens them to its int16 pair words (scaled by the channel's
    factor) itself."""
    return np.ascontiguousarray(w.transpose(2, 0, 1).astype(np.int8)).reshape(-1)


def _dwp_q(consts: DwpConstants, packed: bool) -> tuple[np.ndarray, int]:
    """The constants of utvm_dwp_s8 and the flags they add: per output channel three words,
    bias, m and e | l << 8 | k << 16 (2**l: the factor of the channel's weights, r the k-th of the
    layer's distinct r values, which follow the channels' words), or (``packed``: knob ``consts``
    "packed", which --max-flash takes; 4 bytes a channel less, about 3 instructions a channel
    more with the 3x3 assembly (KWS: 120,000 -> 120,200 a layer; about 11 in C); UTVM_DWP_PACKED, where the
    index i of each channel's third word in the layer's table of distinct ones fits the n low bits
    that every bias has zero) two: bias | i and m, the table after them, then the r values (n and
    the table's size in the flags' bits 8-15 and 16-23)."""
    q = consts.q.astype(np.int64)
    ls = np.log2(consts.scale).astype(np.int64)
    assert np.all(np.left_shift(1, ls) == consts.scale) and np.all(q[:, 0] == q[:, 1])
    ls = np.where(ls > 15, 0, ls)  # only all-zero weights take more (|w| 2**l <= 32767 otherwise)
    rvals, k = np.unique(q[:, 3], return_inverse=True)
    assert rvals.size <= 256  # r is 2**(d-1) + (2**(e-1) + zy 2**e) 2**d: a few dozen at most
    third = (q[:, 4] & 0xFF) | (ls << 8) | (k.reshape(-1) << 16)
    table, index = np.unique(third, return_inverse=True)
    bits = (table.size - 1).bit_length()
    if packed and table.size < 256 and np.all(q[:, 0] & ((1 << bits) - 1) == 0):
        words = np.stack([q[:, 0] | index.reshape(-1), q[:, 2]], axis=1)
        return (np.concatenate([words.reshape(-1), table, rvals]).astype(np.int32),
                DWP_PACKED | bits << 8 | table.size << 16)
    words = np.stack([q[:, 0], q[:, 2], third], axis=1)
    return np.concatenate([words.reshape(-1), rvals]).astype(np.int32), 0


def _dwp_orients(g: Graph, op: Operator) -> tuple[str, ...]:
    """The orientations that apply, the default first: the assembly loop where only one of them
    has it, then the conversion's assembly, else the longer output rows (fewer row ends and odd last outputs), rows on a tie."""
    geos = {o: _dwp_geometry(g, op, o) for o in ("rows", "cols")}
    usable = [o for o, geo in geos.items() if geo is not None]

    def score(o: str) -> tuple[bool, bool, int, bool]:
        geo = geos[o]
        assert geo is not None
        return geo.fast(), geo.converts_fast(), geo.ow, o == "rows"

    return tuple(sorted(usable, key=score, reverse=True))


def _dwp_inplace(geo: DwpGeometry, x: Tensor, y: Tensor, mult: int) -> bool:
    """The output may take the input's bytes (KernelDef.inplace): same shape (stride 1, SAME,
    multiplier 1), one band (each group of four channels is converted whole before any of its
    outputs is written; no other channel's input bytes are touched), when the planes of all rows
    take less than the output and the planes of DWP_SCRATCH_BUDGET's band together."""
    return (x.shape == y.shape and mult == 1
            and 2 * geo.scratch_values(geo.oh) < y.nbytes + 2 * geo.scratch_values(_dwp_fit(geo, DWP_SCRATCH_BUDGET)))


def _dwp_fit(geo: DwpGeometry, budget: int) -> int:
    """The most output rows per band whose planes take at most ``budget`` bytes (at least one)."""
    band = geo.oh
    while band > 1 and 2 * geo.scratch_values(band) > budget:
        band -= 1
    return band


def _dwp_bands(geo: DwpGeometry, inplace: bool) -> tuple[int, ...]:
    """Output rows per band, the default first: all rows where the output can take the input's
    bytes (see _dwp_inplace), else as many as DWP_SCRATCH_BUDGET holds (the input rows that two
    bands share are converted twice); then, for `utvm tune --max-ram`, as many as a quarter of
    it holds and one row. More rows than the budget are not offered: they buy a few conversions
    with kilobytes of pool."""
    default = geo.oh if inplace else _dwp_fit(geo, DWP_SCRATCH_BUDGET)
    return tuple(dict.fromkeys((default, _dwp_fit(geo, DWP_SCRATCH_BUDGET // 4), 1)))


def _dwp_knobs(g: Graph, op: Operator, target: Target) -> dict[str, tuple[Any, ...]]:
    orients = _dwp_orients(g, op)
    geo = _dwp_geometry(g, op, orients[0])
    assert geo is not None
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    return {"orient": orients, "band": _dwp_bands(geo, _dwp_inplace(geo, x, y, op.attrs.get("depth_multiplier", 1)))}


def _dwp_fit_scratch(g: Graph, op: Operator, target: Target, room: int) -> dict[str, Any] | None:
    """For a layer whose planes set the pool (a stride-2 layer at the peak of a MobileNet-style
    network): the most output rows per band whose planes take at most ``room`` bytes, or, when
    not even one row fits, those of a quarter of DWP_SCRATCH_BUDGET (a little more pool, much
    less than the default's, at a few more conversions)."""
    # the layers of the kernels before dsp_dwp keep theirs (helium_k's rows: kh padded input rows,
    # less than dsp_dwp's planes)
    before_dwp = (_helium, _as_conv, _helium_dot, _helium_mult, _helium_k)
    if _dwp(g, op, target) is None or any(f(g, op, target) is not None for f in before_dwp):
        return None
    orient = _dwp_orients(g, op)[0]
    geo = _dwp_geometry(g, op, orient)
    assert geo is not None
    band = _dwp_fit(geo, room - 16)  # the planner rounds buffers up to 16 bytes
    if 2 * geo.scratch_values(band) > room - 16:
        band = _dwp_fit(geo, DWP_SCRATCH_BUDGET // 4)
    return {"variant": "dsp_dwp", "orient": orient, "band": band}


def _dwp(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    # also on Helium CPUs (they have the DSP extension), after the Helium kernels: the layers
    # those do not take (multiplier > 1) run no slower than on the M4
    if not (target.packed and x.dtype == "int8" and y.dtype == "int8" and w.data is not None):
        return None
    orients = _dwp_orients(g, op)
    consts = _dwp_constants(g, op)
    if not orients or consts is None:
        return None
    orient = knob(op, "orient", orients[0])
    orient = orient if orient in orients else orients[0]
    geo = _dwp_geometry(g, op, orient)
    assert geo is not None
    if geo.kh * geo.row_words > DWP_MAX_WORDS:
        return None
    mult = op.attrs.get("depth_multiplier", 1)
    inplace = _dwp_inplace(geo, x, y, mult)
    bands = _dwp_bands(geo, inplace)
    band = min(max(int(knob(op, "band", bands[0])), 1), geo.oh)
    wdata = w.data[0]
    if orient == "cols":
        wdata = wdata.transpose(1, 0, 2)
    n, c = x.shape[0], x.shape[3]
    taps, (q, packed) = _dwp_taps(wdata, geo), _dwp_q(consts, knob(op, "consts", "words") == "packed")
    assert x.quant is not None
    _, zx = x.quant.scalar()
    args = [KernelArg(te.placeholder(x.shape, "int8", name="x"), tensor=x.name),
            KernelArg(te.placeholder((taps.size,), "int8", name="w"), constant=taps, role="w"),
            KernelArg(te.placeholder((q.size,), I32, name="q"), constant=q, role="q"),
            KernelArg(te.placeholder((geo.scratch_values(band),), "int16", name="planes"), role="planes",
                      scratch=True)]
    params = (geo.h, geo.w, c, mult, geo.oh, geo.ow, geo.xrs, geo.xcs, geo.yrs, geo.ycs, geo.kh, geo.kw, geo.sh,
              geo.sw, geo.dh, geo.top, geo.left, zx, band, geo.rs, consts.flags | packed, consts.lo, consts.hi,
              consts.shift)

    def body(ins, outs):  # type: ignore[no-untyped-def]
        xb, wb, qb, sb = ins
        return seq([ext.call("utvm_dwp_s8", outs[0].access_ptr("w", offset=i * (y.size // n)),
                             xb.access_ptr("r", offset=i * (x.size // n)), sb.access_ptr("w"), wb.access_ptr("r"),
                             qb.access_ptr("r"), *params) for i in range(n)])

    kdef = ext.extern(y, args, body)
    kdef.inplace = inplace and band >= geo.oh
    return kdef


# ---------------------------------------------------------------------------------------
# dsp_dwt: tiny output maps, each position its own case (utvm_dwt_s8 of utvm/kernels.h)

# Tiny maps are tuned for: the tiny-map kernels (dsp_dwt, Helium's plan "tiny") come after the
# general ones, so that an untuned compile keeps the general kernel and `utvm tune` picks them
# where they are faster. They save a few hundred to a few thousand instructions a layer (VWW,
# whole model: 8,840 of 8.4 million on the Cortex-M4, 6,500 of 1.52 million on the M55) for
# 4-9 KB of flash a layer (per-position records or per-class filters, code unrolled per
# layer): VWW's two such layers add 16 KB on the M4 (5% of its flash), 15 KB on the M55 (11%).

#: the largest output side utvm_dwt_s8 takes (its positions unrolled)
DWT_MAX_SIDE = 4


def _dwt_records(w: np.ndarray, consts: DwpConstants, zx: int, taps: np.ndarray) -> np.ndarray | None:
    """Per output channel (see kernels.h, utvm_dwt_s8): E_ky, T, O_ky as int16 pair words of the
    scaled weights, m, r, e, then one bias word per output position, the zero point's product with the weights of
    the taps on the padding added (``taps``: positions x 3 x 3, 1 where the tap is on the input),
    or None where a bias leaves int32."""
    ws = w.astype(np.int64).transpose(2, 0, 1) * consts.scale[:, None, None]  # cout, ky, kx

    def pair(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return (a & 0xFFFF) | ((b & 0xFFFF) << 16)

    words = [pair(ws[:, ky, 0], ws[:, ky, 1]) for ky in range(3)] + [pair(ws[:, 0, 2], ws[:, 1, 2])]
    words += [pair(ws[:, ky, 1], ws[:, ky, 2]) for ky in range(3)]
    q = consts.q.astype(np.int64)
    pad_sums = np.einsum("pyx,oyx->op", 1 - taps, ws)
    bias = q[:, :1] + zx * pad_sums
    if np.any(np.abs(bias) >= 1 << 31):
        return None
    out = np.concatenate([np.stack(words, axis=1), q[:, 2:5], bias], axis=1)
    return (out & 0xFFFFFFFF).astype(np.uint32).view(np.int32)


def _dwt_taps(oh: int, ow: int, geo: tuple[int, int, int, int, int, int]) -> np.ndarray:
    """1 where tap (ky, kx) of output position (i, j) falls on the input: positions x 3 x 3."""
    h, wd, sh, sw, top, left = geo
    iy = np.arange(oh)[:, None] * sh + np.arange(3)[None, :] - top  # i, ky
    ix = np.arange(ow)[:, None] * sw + np.arange(3)[None, :] - left  # j, kx
    ry, rx = (iy >= 0) & (iy < h), (ix >= 0) & (ix < wd)
    return (ry[:, None, :, None] & rx[None, :, None, :]).reshape(oh * ow, 3, 3).astype(np.int64)


def _dwt_shape(g: Graph, op: Operator, target: Target) -> bool:
    """A layer utvm_dwt_s8 may run (its constants aside): int8 on a DSP CPU, 3x3 windows of
    stride 1 or 2 without dilation, multiplier 1, at most DWT_MAX_SIDE outputs a side."""
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    return bool(target.dsp and x.dtype == "int8" and y.dtype == "int8" and w.data is not None
                and op.attrs.get("depth_multiplier", 1) == 1 and tuple(w.shape[1:3]) == (3, 3)
                and op.attrs["dilation"] == (1, 1) and max(op.attrs["strides"]) <= 2
                and max(y.shape[1:3]) <= DWT_MAX_SIDE)


def _dwt(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """Tiny output maps (at most DWT_MAX_SIDE a side) of 3x3 windows, stride 1 or 2, multiplier
    1: utvm_dwt_s8, the padding taps skipped, the zero point folded into per-position biases."""
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    if not _dwt_shape(g, op, target) or w.data is None:
        return None
    consts = _dwp_constants(g, op)
    if consts is None:
        return None
    n, h, wd, c = x.shape
    _, oh, ow, _ = y.shape
    (sh, sw), (top, left) = op.attrs["strides"], op.attrs["padding"][:2]
    assert x.quant is not None
    _, zx = x.quant.scalar()
    recs = _dwt_records(w.data[0], consts, zx, _dwt_taps(oh, ow, (h, wd, sh, sw, top, left)))
    if recs is None:
        return None
    args = [KernelArg(te.placeholder(x.shape, "int8", name="x"), tensor=x.name),
            KernelArg(te.placeholder((recs.size,), I32, name="w"), constant=recs.reshape(-1), role="w"),
            KernelArg(te.placeholder((4 * h * ((wd + 1) // 2),), I32, name="planes"), role="planes", scratch=True)]
    params = (h, wd, c, oh, ow, sh, sw, top, left, consts.flags, consts.lo, consts.hi, consts.shift)

    def body(ins, outs):  # type: ignore[no-untyped-def]
        xb, wb, sb = ins
        return seq([ext.call("utvm_dwt_s8", outs[0].access_ptr("w", offset=i * (y.size // n)),
                             xb.access_ptr("r", offset=i * (x.size // n)), sb.access_ptr("w"), wb.access_ptr("r"),
                             *params) for i in range(n)])

    kdef = ext.extern(y, args, body)
    kdef.inplace = x.shape == y.shape  # each group of four channels is converted before its outputs are written
    return kdef


def _helium(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """Helium 3x3 depthwise (multiplier 1), by the plan (_helium_plans): utvm_mve_dwt_s8 (tiny
    maps, any channel count: every output pixel its own case), utvm_mve_dwg_s8 (channels a
    multiple of 8, no dilation: a gather per two or three output pixels and one VMLADAV per
    output), else utvm_mve_dw3x3_row_s8 (channels a multiple of 4: four pixels x four channels
    per step)."""
    if not target.helium:
        return None
    lay = mve.layer(g, op, (0, 1, 2))
    if lay is None:
        return None
    x, w, y = lay.x, lay.w, lay.y
    _, h, wd, c = x.shape
    _, oh, ow, cout = y.shape
    if op.attrs.get("depth_multiplier", 1) != 1 or cout != c or len(w.shape) != 4 or tuple(w.shape) != (1, 3, 3, c):
        return None
    sh, sw = op.attrs["strides"]
    top, left, _, _ = op.attrs["padding"]
    names = _helium_plans(g, op, lay)
    if not names:
        return None
    name = knob(op, "plan", "") or names[0]
    name = name if name in names else names[0]
    if name == "k":  # helium_k's (the next variant)
        return None
    if name == "tiny":
        return _mve_dwt(lay, op)
    if name != "row":
        plans = {p.name: p for p in mve.dwg_plans((oh, ow), c, (sh, sw))}
        plan = plans[name]
        # knob records "compact" (--max-flash, see _lean): 17 bytes a channel, expanded per pass
        compact = knob(op, "records", "full") == "compact" and mve.dwg_compact_fits(lay.params)
        records = mve.dwg_records(lay.wdata, plan.vertical, lay.params, compact)
        right = (mve.DWG_RIGHT if np.all(lay.params[2] <= -1) else 0) | (mve.DWG_COMPACT if compact else 0)
        scratch = plan.scratch + (plan.cb * mve.DWG_RECORD if compact else 0)
        args = [KernelArg(te.placeholder(x.shape, "int8", name="x"), tensor=x.name),
                KernelArg(te.placeholder(records.shape, "int8", name="w"), constant=records, role="w"),
                KernelArg(te.placeholder((scratch,), "int8", name="tiles"), role="tiles", scratch=True)]

        def gather(ins, outs):  # type: ignore[no-untyped-def]
            xb, wb, tiles = ins
            return mve.call("utvm_mve_dwg_s8", outs[0].access_ptr("w"), xb.access_ptr("r"), h, wd, c, oh, ow, sh,
                            sw, top, left, wb.access_ptr("r"), lay.zx, lay.zy, lay.lo, lay.hi, right,
                            int(plan.vertical), plan.lines, plan.cb, tiles.access_ptr("w"))

        kdef = mve.extern(y, args, gather)
        kdef.rows_out_of_order = _dwg_out_of_order(plan, oh, c)
        return kdef
    dh, dw = op.attrs["dilation"]
    rq = mve.pack_requant(*lay.params)
    zx, zy, lo, hi = lay.zx, lay.zy, lay.lo, lay.hi

    X = te.placeholder(x.shape, "int8", name="x")
    W = te.placeholder(w.shape, "int8", name="w")
    # no scratch: the taps in the padding are the zero point times their weights (kernels_mve.h)
    args = [KernelArg(X, tensor=x.name), KernelArg(W, tensor=w.name), *rq.args]

    def body(ins, outs):  # type: ignore[no-untyped-def]
        xb, wb = ins[0], ins[1]
        yb = outs[0]
        oy = tirx.Var("oy", I32)
        row = mve.call("utvm_mve_dw3x3_row_s8", yb.access_ptr("w", offset=oy * (ow * c)), xb.access_ptr("r"),
                    h, wd, c, oy * sh - top, ow, sw, left, dh, dw, wb.access_ptr("r"), zx,
                    *rq.call_args(ins[2:]), zy, lo, hi)
        return tirx.For(oy, 0, oh, tirx.ForKind.SERIAL, row)

    return mve.extern(y, args, body)


def _dwk_scratch(ow: int, sw: int, kh: int, kw: int, dw: int, c: int) -> int:
    """Bytes of utvm_mve_dwk_row_s8's padded rows (utvm_mve_dwk_scratch of its header)."""
    return kh * ((ow - 1) * sw + (kw - 1) * dw + 1) * (-(-c // 4) * 4) + 16


def _helium_k(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """Helium depthwise of any window (multiplier 1, any channel count, dilation): one
    utvm_mve_dwk_row_s8 call per output row (kernels/depthwise_mve_k.h): the rows of the window
    copied into scratch, padded with the zero point (channels in blocks of four), then four
    pixels x four channels per step, the last c % 4 channels stored under a predicate; the rows
    outside the input add the zero point times their weights. For the layers the 3x3 Helium kernels do not take (1-D and 5x5
    windows, 3x3 on channel counts they refuse)."""
    if not target.helium:
        return None
    lay = mve.layer(g, op, (0, 1, 2))
    if lay is None:
        return None
    x, w, y = lay.x, lay.w, lay.y
    _, h, wd, c = x.shape
    _, oh, ow, cout = y.shape
    if op.attrs.get("depth_multiplier", 1) != 1 or cout != c or len(w.shape) != 4:
        return None
    kh, kw = w.shape[1], w.shape[2]
    (sh, sw), (dh, dw) = op.attrs["strides"], op.attrs["dilation"]
    top, left, _, _ = op.attrs["padding"]
    rq = mve.pack_requant(*lay.params)
    blocks = -(-c // 4)
    # blocks of four channels, each its taps' four weights in turn (UTVM_MVE_DWK_W)
    wts = np.zeros((blocks * 4, kh * kw), np.int8)
    wts[:c] = lay.wdata.reshape(kh * kw, c).T
    wts = wts.reshape(blocks, 4, kh * kw).transpose(0, 2, 1).reshape(-1)
    args = [KernelArg(te.placeholder(x.shape, "int8", name="x"), tensor=x.name),
            KernelArg(te.placeholder(wts.shape, "int8", name="w"), constant=wts, role="w"), *rq.args,
            KernelArg(te.placeholder((_dwk_scratch(ow, sw, kh, kw, dw, c),), "int8", name="rows"), role="rows",
                      scratch=True)]

    def body(ins, outs):  # type: ignore[no-untyped-def]
        xb, wb = ins[0], ins[1]
        oy = tirx.Var("oy", I32)
        row = mve.call("utvm_mve_dwk_row_s8", outs[0].access_ptr("w", offset=oy * (ow * c)), xb.access_ptr("r"),
                       h, wd, c, oy * sh - top, ow, sw, left, kh, kw, dh, dw, wb.access_ptr("r"), lay.zx,
                       *rq.call_args(ins[2:-1]), lay.zy, lay.lo, lay.hi, ins[-1].access_ptr("w"))
        return tirx.For(oy, 0, oh, tirx.ForKind.SERIAL, row)

    return mve.extern(y, args, body)


def shift_margin(g: Graph, op: Operator) -> int | None:
    """Bytes by which the output may start before the input in one buffer when the kernel writes
    rows in order: output row y (all of it) must lie below the first input row y's window reads,
    ``(y + 1) * out_row <= margin + max(0, y * stride - top) * in_row`` for every y. None when
    that saves nothing (the margin as large as the output)."""
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    if len(x.shape) != 4 or x.shape[0] != 1 or y.shape[0] != 1:
        return None
    item = x.nbytes // max(x.size, 1)
    in_row, out_row = x.shape[2] * x.shape[3] * item, y.shape[2] * y.shape[3] * item
    sh, top = op.attrs["strides"][0], op.attrs["padding"][0]
    margin = max((r + 1) * out_row - max(0, r * sh - top) * in_row for r in range(y.shape[1]))
    margin = -(-max(margin, 0) // 16) * 16
    return margin if margin < y.nbytes else None


def _helium_rows_in_order(g: Graph, op: Operator, target: Target, slack: float | None) -> dict[str, Any] | None:
    """The cheapest utvm_mve_dwg_s8 plan that writes rows in order (see _helium), if its
    estimated cost is within ``slack`` times the default plan's (none within any slack of
    utvm_mve_dwt_s8's: 2-3 times its instructions on tiny maps)."""
    y = g.tensors[op.outputs[0]]
    oh, ow, c = y.shape[1], y.shape[2], y.shape[3]
    if slack is not None and helium_plans(g, op)[:1] == ["tiny"]:
        return None
    plans = mve.dwg_plans((oh, ow), c, op.attrs["strides"])
    for plan in plans:
        if not _dwg_out_of_order(plan, oh, c):
            if slack is not None and plan.cost > slack * plans[0].cost:
                return None
            return {"variant": "helium", "plan": plan.name}
    return None


def _dwg_out_of_order(plan: mve.DwgPlan, oh: int, c: int) -> bool:
    """Rows are written in order when each pass copies all the input it reads before it writes:
    passes along output rows of one line, or of every channel in one tile and no pass
    overlapping the one before (the last pass takes the last ``lines`` lines)."""
    return plan.vertical or (plan.lines > 1 and (plan.cb < c or oh % plan.lines != 0))


def _mve_dwt_layout(lay: mve.Layer, op: Operator) -> mve.DwtLayout | None:
    """utvm_mve_dwt_s8's constant for a tiny map (no dilation), None elsewhere."""
    if op.attrs["dilation"] != (1, 1):
        return None
    return mve.dwt_layout(lay.wdata, tuple(lay.x.shape[1:3]), tuple(lay.y.shape[1:3]), op.attrs["strides"],
                          op.attrs["padding"][:2], lay.zx, lay.params)


def _mve_dwt(lay: mve.Layer, op: Operator) -> KernelDef:
    """utvm_mve_dwt_s8: every output pixel of a tiny map its own case (see kernels_mve.h)."""
    tiny = _mve_dwt_layout(lay, op)
    assert tiny is not None
    x, y = lay.x, lay.y
    _, h, wd, c = x.shape
    _, oh, ow, _ = y.shape
    sh, sw = op.attrs["strides"]
    top, left, _, _ = op.attrs["padding"]
    right = int(np.all(lay.params[2] <= -1))
    args = [KernelArg(te.placeholder(x.shape, "int8", name="x"), tensor=x.name),
            KernelArg(te.placeholder(tiny.data.shape, "int8", name="w"), constant=tiny.data, role="w"),
            KernelArg(te.placeholder((tiny.scratch,), "int8", name="planes"), role="planes", scratch=True)]

    def body(ins, outs):  # type: ignore[no-untyped-def]
        xb, wb, planes = ins
        return mve.call("utvm_mve_dwt_s8", outs[0].access_ptr("w"), xb.access_ptr("r"), h, wd, c, oh, ow, sh, sw, top,
                        left, wb.access_ptr("r"), lay.zy, lay.lo, lay.hi, right, tiny.rcls, tiny.ccls, tiny.ncc,
                        tiny.ns, lay.zx, int(tiny.pad), planes.access_ptr("w"))

    kdef = mve.extern(y, args, body)
    # one block of 16 channels: all of the input is copied before the first output is written
    kdef.rows_out_of_order = c > 16
    return kdef


def _helium_plans(g: Graph, op: Operator, lay: mve.Layer) -> list[str]:
    """The kernels (and plans) of a Helium 3x3 depthwise layer, the default first: the
    utvm_mve_dwg_s8 plans (8n channels, no dilation, output lines of at least 2 pixels) from the
    least estimated cost, else "row" (utvm_mve_dw3x3_row_s8, 4n channels), with "k" (helium_k)
    first where it measured faster (see below); "tiny"
    (utvm_mve_dwt_s8, measured below utvm_mve_dwg_s8 on every tiny map tried, 1x1 to 6x6 inputs,
    8 to 256 channels, strides 1 and 2: VWW's 3x3 outputs 1.27 -> 0.93 and 1.02 -> 0.87
    instructions per MAC) second, for the tuner ("Tiny maps are tuned for": 4-5 KB of flash a
    layer), or alone where no other plan applies."""
    y = lay.y
    c = y.shape[-1]
    dwg = (mve.dwg_plans(y.shape[1:3], c, op.attrs["strides"])
           if c % 8 == 0 and op.attrs["dilation"] == (1, 1) and max(y.shape[1:3]) >= 2 else [])
    names = [p.name for p in dwg] or (["row"] if c % 4 == 0 else [])
    # helium_k's groups of four pixels a third or more empty (ow 5: [25,5,32] 2.29 -> 2.39): dwg
    ow = y.shape[2]
    slow = bool(dwg) and not _dwg_asm(lay) and -(-ow // 4) * 4 * 2 <= ow * 3
    tiny = _mve_dwt_layout(lay, op)
    # "tiny" first on maps it pads (one class: 28 bytes a channel, dwg's 32) where dwg runs its C
    # loop, or a clamp narrower than int8's (utvm_mve_dwg_run3c: seeded RELU/RELU6 [4,4,1024]
    # 0.84 against dwg's 1.00, [3,3,256] 0.90 against 1.02 instructions per MAC on mps3/an547)
    clamped = not (lay.lo == -128 and lay.hi == 127)
    if tiny is not None and tiny.pad and (slow or bool(dwg) and clamped):
        return ["tiny", "k", *names] if slow else ["tiny", names[0], "k", *names[1:]]
    if tiny is not None:
        names = [names[0], "tiny", *names[1:]] if names else ["tiny"]
    # "k": helium_k (any window, groups of four pixels from padded rows), measured below
    # utvm_mve_dw3x3_row_s8 on every layer tried (issue 23's seeded shapes: [6,6,12] 3.78 -> 2.19,
    # [12,12,36] s2 3.28 -> 1.90 instructions per MAC); on seeded layers also below
    # utvm_mve_dwg_s8 at stride 1 from 16 channels ([4,4,72] 3.15 -> 1.66, [25,10,64] 2.24 ->
    # 1.96) but above it in KWS and VWW (675,700 -> 1,173,500 and 1,372,450 -> 1,752,250
    # instructions on mps3/an547), so second there, for the tuner; clamped layers at stride 1
    # run dwg's assembly (run3c: seeded RELU/RELU6 with an output zero point above -128, 1.5-2.3
    # with "k" -> 0.59-0.86 with dwg). Where dwg's plan would run its C loop (a left shift,
    # _dwg_asm): "k" first
    return ["k", *names] if not names or names[0] == "row" or slow else [names[0], "k", *names[1:]]


def _dwg_asm(lay: mve.Layer) -> bool:
    """Whether utvm_mve_dwg_s8 runs its assembly loops (every shift a right shift: VQRDMLAH onto
    the sign), else its C loop per channel (2.0-3.1 instructions per MAC on seeded layers at
    stride 1, where helium_k takes 1.7-2.2 and "tiny" 0.8-0.9). Any clamp: a clamp narrower than
    int8's (RELU/RELU6 with an output zero point above -128) at three pixels per gather runs
    utvm_mve_dwg_run3c, as many instructions as run3 without a clamp."""
    return bool(np.all(lay.params[2] <= -1))


def helium_plans(g: Graph, op: Operator) -> list[str]:
    """The Helium kernels and plans of a 3x3 depthwise layer, the default first (see
    _helium_plans); none where the Helium kernels cannot take its quantization."""
    lay = mve.layer(g, op, (0, 1, 2))
    if lay is None or lay.y.shape[-1] != lay.x.shape[-1]:
        return []
    return _helium_plans(g, op, lay)


def _helium_knobs(g: Graph, op: Operator, target: Target) -> dict[str, tuple[Any, ...]]:
    """The kernel and plan (utvm_mve_dwt_s8; utvm_mve_dwg_s8's orientation, lines per pass and
    channels per tile): the default (see _helium_plans), then the next three."""
    names = helium_plans(g, op)
    return {"plan": ("", *names[1:4])} if len(names) > 1 else {}



def _lean(g: Graph, op: Operator, config: dict[str, Any], target: Target) -> dict[str, Any] | None:
    """--max-flash: dsp_dwp's constants in two words a channel (knob ``consts``, see _dwp_q); on
    Helium, where the helium variant runs utvm_mve_dwg_s8 (a record of 32 bytes a channel), its
    compact records (knob ``records``: 17 bytes a channel, expanded into the scratch per pass and
    block of channels: KWS's depthwise layers 2,048 -> 1,088 bytes each); where it runs
    utvm_mve_dwt_s8 (or the biases do not fit 24 bits), helium_k (the 9 int8 taps and the packed
    requantization, about 1.7 times the instructions on KWS: see _helium_plans)."""
    if not target.helium:
        return None if config.get("consts") == "packed" else {**config, "consts": "packed"}
    variant = config.get("variant")
    if variant not in (None, "helium") or (variant is None and OPS[0].kernel(g, op, target)[0] != "helium"):
        return None
    plan = config.get("plan") or (helium_plans(g, op) or ["k"])[0]
    if plan in ("k", "row") or config.get("records") == "compact":
        return None
    lay = mve.layer(g, op, (0, 1, 2))
    if plan != "tiny" and lay is not None and mve.dwg_compact_fits(lay.params):
        return {**config, "variant": "helium", "plan": plan, "records": "compact"}
    return {"variant": "helium_k"} if _helium_k(g, op, target) is not None else None


OPS = (
    OpDef(
        kind="depthwise_conv2d",
        summary="depthwise 2-D convolution",
        tflite=(SourceOp("DEPTHWISE_CONV_2D", from_tflite, ("int8", "int16", "float32"),
                         "fused activation NONE/RELU/RELU6/RELU_N1_TO_1; any depth multiplier; "
                         "int16: zero points 0, int64 bias"),),
        variants=(
            Variant("conv", _as_conv, "Cortex-M4/M7/M33/M52/M55/M85"),
            Variant("helium_pix", _helium_pix, "Cortex-M52/M55/M85"),
            Variant("helium_row", _helium_row, "Cortex-M52/M55/M85", rows_in_order=True),
            Variant("helium_dot", _helium_dot, "Cortex-M52/M55/M85"),
            Variant("helium_mult", _helium_mult, "Cortex-M52/M55/M85"),
            Variant("helium", _helium, "Cortex-M52/M55/M85", knobs=_helium_knobs, rows_in_order=True),
            Variant("helium_k", _helium_k, "Cortex-M52/M55/M85", rows_in_order=True),
            # not rows_in_order: each group of four channels runs over all output rows (dwp: bands)
            Variant("dsp_dwp", _dwp, "Cortex-M4/M7/M33/M52/M55/M85", knobs=_dwp_knobs),
            # tiny maps, where a tuning log names it ("Tiny maps are tuned for")
            Variant("dsp_dwt", _dwt, "Cortex-M4/M7/M33"),
            Variant("dsp_dw4", _dw4, "Cortex-M4/M7/M33", rows_in_order=True),
            Variant("helium_int16", mac16.on_helium(_mac16), "Cortex-M52/M55/M85", types=("int16",),
                    rows_in_order=True),
            Variant("dsp_int16", mac16.on_dsp(_mac16), "Cortex-M4/M7/M33", types=("int16",), rows_in_order=True),
            Variant("int16", _int16, types=("int16",), rows_in_order=True),
            Variant("generic", _generic, rows_in_order=True),
        ),
        check=check,
        shift_margin=shift_margin,
        reference="TFLite Micro depthwise_conv.cc: reference_integer_ops::DepthwiseConvPerChannel (int8; int16 "
                  "with int64 accumulators), "
                  "reference_ops::DepthwiseConv (float32)",
        fuses_activation=True,
        macs=conv_macs,
        fit_scratch=_dwp_fit_scratch,
        rows_in_order_config=_helium_rows_in_order,
        patch_stage="window",
        offload=(Offload("cmsis-nn", ("int8", "int16"), "depthwise_conv"),),
        lean=_lean,
        weights=Weights(onnx_bias=NHWC),
        channels=Channels("depthwise", lambda g, op: op.attrs.get("depth_multiplier", 1) == 1),
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "DEPTHWISE_CONV_2D filter not a 4-D constant",
               "non-constant filters run in TFLM; other ranks read dims out of bounds [k/depthwise_conv_common.cc]",
               "would-compute-differently", "kept: utvm packs filters at compile time"),
    Validation("check", "depthwise filter not [1, kh, kw, output channels]",
               "channel dims are `TFLITE_DCHECK`s in the reference [reference integer_ops/depthwise_conv.h]",
               "would-compute-differently", "kept"),
    Validation("check", "16x8 depthwise bias not int64",
               "the int16 depthwise kernel reads the bias as int64 (an int32 bias is read past its end) [k/depthwise_conv.cc]",
               "would-compute-differently", "kept"),
    Validation("check", "output channels are not input channels x depth multiplier",
               "`TFLITE_DCHECK_EQ(output_depth, input_depth * depth_multiplier)` (off in release) [reference depthwise_conv.h]",
               "would-compute-differently", "kept"),
)
