"""DEPTHWISE_CONV_2D: depthwise 2-D convolution, NHWC input, 1HW(C*M) filter.

Import: TFLite DEPTHWISE_CONV_2D; ONNX Conv with group = input channels (see conv2d.py).
Semantics: TFLite Micro's reference kernels (reference_integer_ops::DepthwiseConvPerChannel for
int8, reference_ops::DepthwiseConv for float32); output channel o reads input channel
o // depth_multiplier.

Kernel variants, first that applies:
- helium: 3x3 windows, multiplier 1, channels % 4 == 0 on Cortex-M52/M55/M85 (utvm_mve_dwg_s8 for
  channels % 8 == 0 without dilation, else utvm_mve_dw3x3_row_s8); knob ``plan`` (dwg: lines along
  output rows or columns, lines per pass, channels per tile; default the least estimated cost);
- dsp_dw4: multiplier 1, channels % 4 == 0: two taps per SMLAD, four channels per word;
- generic: any multiplier, window, stride, dilation; int8 blocked by four channels, or float32.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tvm import te, tirx

from ..ir import Graph, Operator
from ..lower import fixedpoint as fp
from ..lower import helium as mve
from ..lower.kerneldef import KernelArg, KernelDef
from ..lower.requant import I32, imm
from ..lower.schedules import (
    CHANNEL_BLOCK,
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
from ..lower.target import Target
from .base import OpDef, OpError, SourceOp, Variant, knob
from .common import QuantConv, bias_of, check_bias, check_mac_types, check_window, conv_macs, quant_conv, requant16
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
    rq = requant16(g, op, cout, True, True)
    X = te.placeholder(x.shape, "int16", name="x")
    W = te.placeholder(w.shape, "int8", name="w")
    P, pad_name = pad(X, op.attrs["padding"], imm(0, "int16"))
    ry, rx = te.reduce_axis((0, kh), "ry"), te.reduce_axis((0, kw), "rx")
    acc = te.compute((n, oh, ow, cout), lambda bb, i, j, o: te.sum(
        P[bb, i * sh + ry * dh, j * sw + rx * dw, o // mult].astype("int64") * W[0, ry, rx, o].astype("int64"),
        axis=[ry, rx]), name="acc")
    out = te.compute((n, oh, ow, cout), lambda bb, i, j, o: rq.output(acc[bb, i, j, o], o), name="out")
    args = [KernelArg(X, tensor=x.name), KernelArg(W, tensor=w.name), *rq.args]
    return KernelDef(args, out, y.name, reduction_schedule("acc", "out", pad_name, 4))


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


def _helium(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """Helium 3x3 depthwise (multiplier 1): utvm_mve_dwg_s8 (channels a multiple of 8, no
    dilation: a gather per two or three output pixels and one VMLADAV per output), else
    utvm_mve_dw3x3_row_s8 (channels a multiple of 4: four pixels x four channels per step)."""
    if not target.helium:
        return None
    lay = mve.layer(g, op, (0, 1, 2))
    if lay is None:
        return None
    x, w, y = lay.x, lay.w, lay.y
    _, h, wd, c = x.shape
    _, oh, ow, cout = y.shape
    if (op.attrs.get("depth_multiplier", 1) != 1 or cout != c or c % 4 or len(w.shape) != 4
            or tuple(w.shape) != (1, 3, 3, c)):
        return None
    sh, sw = op.attrs["strides"]
    top, left, _, _ = op.attrs["padding"]
    if c % 8 == 0 and op.attrs["dilation"] == (1, 1) and max(oh, ow) >= 2:
        plans = {p.name: p for p in mve.dwg_plans((oh, ow), c, (sh, sw))}
        plan = plans.get(knob(op, "plan", ""), next(iter(plans.values())))
        records = mve.dwg_records(lay.wdata, plan.vertical, lay.params)
        right = int(np.all(lay.params[2] <= -1))
        args = [KernelArg(te.placeholder(x.shape, "int8", name="x"), tensor=x.name),
                KernelArg(te.placeholder(records.shape, "int8", name="w"), constant=records, role="w"),
                KernelArg(te.placeholder((plan.scratch,), "int8", name="tiles"), role="tiles", scratch=True)]

        def gather(ins, outs):  # type: ignore[no-untyped-def]
            xb, wb, tiles = ins
            return mve.call("utvm_mve_dwg_s8", outs[0].access_ptr("w"), xb.access_ptr("r"), h, wd, c, oh, ow, sh,
                            sw, top, left, wb.access_ptr("r"), lay.zx, lay.zy, lay.lo, lay.hi, right,
                            int(plan.vertical), plan.lines, plan.cb, tiles.access_ptr("w"))

        return mve.extern(y, args, gather)
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


def _helium_knobs(g: Graph, op: Operator, target: Target) -> dict[str, tuple[Any, ...]]:
    """utvm_mve_dwg_s8's plan (orientation, lines per pass, channels per tile): the default the
    least estimated cost, then the next three estimates."""
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    c = x.shape[-1]
    if c % 8 or op.attrs["dilation"] != (1, 1) or max(y.shape[1:3]) < 2 or y.shape[-1] != c:
        return {}
    plans = mve.dwg_plans(y.shape[1:3], c, op.attrs["strides"])
    return {"plan": ("", *(p.name for p in plans[1:4]))}


OPS = (
    OpDef(
        kind="depthwise_conv2d",
        summary="depthwise 2-D convolution",
        tflite=(SourceOp("DEPTHWISE_CONV_2D", from_tflite, ("int8", "int16", "float32"),
                         "fused activation NONE/RELU/RELU6/RELU_N1_TO_1; any depth multiplier; "
                         "int16: zero points 0, int64 bias"),),
        variants=(
            Variant("helium", _helium, "Cortex-M52/M55/M85", knobs=_helium_knobs),
            Variant("dsp_dw4", _dw4, "Cortex-M4/M7/M33"),
            Variant("int16", _int16, types=("int16",)),
            Variant("generic", _generic),
        ),
        check=check,
        reference="TFLite Micro depthwise_conv.cc: reference_integer_ops::DepthwiseConvPerChannel (int8; int16 "
                  "with int64 accumulators), "
                  "reference_ops::DepthwiseConv (float32)",
        fuses_activation=True,
        macs=conv_macs,
    ),
)
