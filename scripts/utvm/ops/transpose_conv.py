"""TRANSPOSE_CONV: the gradient of a 2-D convolution (a learned upsampling), NHWC, OHWI filter.

Import: TFLite TRANSPOSE_CONV (its first input is the output shape, a constant; the bias, when
given, is its fourth); ONNX ConvTranspose (group 1, no output padding beyond what the output
shape implies).
Semantics: TFLite Micro's transpose_conv.cc. Each input pixel scatters, through the filter, into
the output window it is the centre of: output (oy, ox) takes input (iy, ix) and tap (fy, fx)
when oy = iy * stride - pad + fy. The padding is what SAME/VALID gives a convolution from the
output's size (ComputePaddingHeightWidth with the output as input). int8: per-channel filter,
(x - input zero point) * w summed in int32, bias, MultiplyByQuantizedMultiplier per channel,
output zero point, activation clamp. int16 (16x8): int64 sums and the int64
MultiplyByQuantizedMultiplier, an int16 bias widened to int64. float32: the same sums (TFLite
scatters, utvm gathers: the order of the float additions differs).
The kernels gather: for each output pixel the taps (fy, fx) whose input row/column
(oy + pad - fy) / stride is a whole number inside the input. Kernel variants, first that applies:
- helium: int8, batch 1, every phase with taps: per phase (see :class:`Phase`) patches of four
  outputs gathered by utvm_mve_im2col_s8 and utvm_mve_gemm_s8 with the phase's folded biases;
- dsp_mac4: int8, cin % 4 == 0: utvm_mac4_s8 per tap, the zero point read outside the input;
- helium_int16 / dsp_int16: 16x8, the 16x8 dot-product helpers per tap (kernels/mac16.py); knob
  ``weights`` of dsp_int16 (utvm_mac4w_s16);
- generic: any (TE).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from tvm import te, tirx

from ..ir import NHWC, Graph, Operator
from ..kernels import helium as mve
from ..kernels import mac16
from ..kernels.kerneldef import KernelArg, KernelDef
from ..kernels.requant import (
    I32,
    Requant,
    acc_bound,
    activation_range_int8,
    bias_requant,
    effective_scales,
    float_clamp,
    imm,
)
from ..kernels.schedules import (
    CHANNEL_BLOCK,
    interleave_rows,
    loop,
    packed_int8,
    reduction_schedule,
    root_schedule,
    seq,
    to_tir,
)
from ..kernels.target import Target
from .base import OpDef, OpError, SourceOp, Validation, Variant, Weights
from .common import abs_sums, bias_of, check_16x8, requant16
from .mac_knobs import lean_tuned_weights, mac4_knobs, wide_weights


def transpose_padding(code: int, out_size: int, k: int, stride: int) -> int:
    """The padding before the first row (column) TFLite uses: that of a SAME (0) / VALID (1)
    convolution whose input is the transpose conv's output."""
    conv_out = (out_size + stride - 1) // stride if code == 0 else (out_size + stride - k) // stride
    return max((conv_out - 1) * stride + k - out_size, 0) // 2


def from_tflite(ctx: Any, node: Any) -> None:
    o = ctx.options(node, "TransposeConvOptions")
    ins = node.inputs
    if len(ins) < 3:
        raise ctx.fail(node, f"expects the output shape, the filter and the input, has {len(ins)} inputs")
    shape_t, w, x = (ctx.tensors[n] if n else None for n in ins[:3])
    y = ctx.tensors[node.outputs[0]]
    if shape_t is None or shape_t.size != 4:
        raise ctx.fail(node, "the output shape (input 1) must be a tensor of 4 values")
    # a model input (TFLite Micro's SEANet tests) is taken for the output tensor's static shape
    if shape_t.data is not None and [int(v) for v in shape_t.data.reshape(-1)] != list(y.shape):
        raise ctx.fail(node, f"output shape {shape_t.data.reshape(-1).tolist()} differs from the output tensor's "
                             f"{list(y.shape)}")
    if w is None or x is None or len(w.shape) != 4 or len(x.shape) != 4 or len(y.shape) != 4:
        raise ctx.fail(node, "expects 4-D filter, input and output")
    sh, sw = o.StrideH(), o.StrideW()
    if sh < 1 or sw < 1:
        raise ctx.fail(node, f"strides must be at least 1, got {sh}x{sw}")
    code = o.Padding()
    pad = (transpose_padding(code, y.shape[1], w.shape[1], sh), transpose_padding(code, y.shape[2], w.shape[2], sw))
    act = ctx.activation(o.FusedActivationFunction(), node) if hasattr(o, "FusedActivationFunction") else "none"
    inputs = [ins[2], ins[1]] + ([ins[3]] if len(ins) > 3 and ins[3] else [])
    ctx.emit(node, "transpose_conv2d", inputs, node.outputs, {"strides": (sh, sw), "padding": pad, "activation": act})


def from_onnx(imp: Any, node: Any) -> None:
    """ConvTranspose, 2-D, group 1: weights [C_in, C_out, KH, KW] -> OHWI."""
    attrs = imp.attrs(node)
    x_shape, out_shape = imp.shape(node.input[0]), imp.shape(node.output[0])
    w = imp.float_const(node.input[1], "weight")
    if len(x_shape) != 4 or w.ndim != 4:
        raise imp.fail("only 2-D transposed convolutions (4-D input) are supported")
    if int(attrs.get("group", 1)) != 1:
        raise imp.fail("grouped transposed convolution is not supported")
    if imp.pair(attrs, "dilations", (1, 1)) != (1, 1):
        raise imp.fail("dilated transposed convolution is not supported")
    strides = imp.pair(attrs, "strides", (1, 1))
    kh, kw = w.shape[2], w.shape[3]
    auto = attrs.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else str(auto)
    if auto in ("NOTSET", "", "VALID"):
        pads = [int(p) for p in attrs.get("pads", [0, 0, 0, 0])] if auto != "VALID" else [0, 0, 0, 0]
        top, left = pads[0], pads[1]
    else:  # SAME_*: the padding that makes the output stride x input; SAME_UPPER puts the odd one after
        tot_h = max((x_shape[2] - 1) * strides[0] + kh - out_shape[2], 0)
        tot_w = max((x_shape[3] - 1) * strides[1] + kw - out_shape[3], 0)
        top, left = (tot_h // 2, tot_w // 2) if auto == "SAME_UPPER" else (tot_h - tot_h // 2, tot_w - tot_w // 2)
    x = imp.get(node.input[0], NHWC)
    inputs = [x, imp.add_const(f"{node.output[0]}_weight", w.transpose(1, 2, 3, 0))]
    if len(node.input) > 2 and node.input[2]:
        inputs.append(imp.add_const(f"{node.output[0]}_bias", imp.float_const(node.input[2], "bias").reshape(-1)))
    imp.emit("transpose_conv2d", inputs, node.output[0], NHWC,
             {"strides": strides, "padding": (top, left), "activation": "none"})


def check(g: Graph, op: Operator) -> None:
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    b = bias_of(g, op)
    if w.data is None or len(w.shape) != 4 or w.shape[3] != x.shape[3] or w.shape[0] != y.shape[3]:
        raise OpError(f"{op.source}: filter {list(w.shape)} must be a constant [{y.shape[3]}, kh, kw, {x.shape[3]}]")
    if x.shape[0] != y.shape[0]:
        raise OpError(f"{op.source}: batch {x.shape[0]} in, {y.shape[0]} out")
    if b is not None and (b.data is None or b.size != y.shape[3]):
        raise OpError(f"{op.source}: the bias must be a constant of {y.shape[3]} values")
    if x.dtype == "int16":
        check_16x8(g, op)
        if b is not None and b.dtype not in ("int16", "int64"):
            raise OpError(f"{op.source}: a 16x8 transpose conv needs an int16 or int64 bias, not {b.dtype}")
    elif x.dtype == "int8":
        if w.dtype != "int8" or y.dtype != "int8" or x.quant is None or w.quant is None or y.quant is None:
            raise OpError(f"{op.source}: int8 transpose conv needs int8 filter and output with quantization")
        if np.any(w.quant.zero_point != 0):
            raise OpError(f"{op.source}: filter zero points must be 0 (symmetric int8 weights)")
        if b is not None and b.dtype != "int32":
            raise OpError(f"{op.source}: int8 transpose conv needs an int32 bias, not {b.dtype}")
    elif not (x.dtype == w.dtype == y.dtype == "float32"):
        raise OpError(f"{op.source}: unsupported data types {x.dtype} input, {w.dtype} filter")


def _taps(g: Graph, op: Operator, X: te.Tensor, value: Any) -> Any:
    """acc(b, oy, ox, oc) = sum over taps and input channels of value(x, w) where the tap lands."""
    x, w = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]]
    _, h, wd, cin = x.shape
    _, kh, kw, _ = w.shape
    sh, sw = op.attrs["strides"]
    top, left = op.attrs["padding"]
    ry, rx, rc = te.reduce_axis((0, kh), "ry"), te.reduce_axis((0, kw), "rx"), te.reduce_axis((0, cin), "rc")

    def f(b, oy, ox, o):  # type: ignore[no-untyped-def]
        ty, tx = oy + top - ry, ox + left - rx
        iy, ix = tirx.floordiv(ty, sh), tirx.floordiv(tx, sw)
        inside = tirx.all(ty >= 0, tx >= 0, tirx.floormod(ty, sh) == 0, tirx.floormod(tx, sw) == 0, iy < h, ix < wd)
        xv = X[b, te.max(te.min(iy, h - 1), 0), te.max(te.min(ix, wd - 1), 0), rc]
        return value(inside, xv, o, ry, rx, rc)

    return f, [ry, rx, rc]


def _kernel(g: Graph, op: Operator, target: Target) -> KernelDef:
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    b = bias_of(g, op)
    cout = y.shape[3]
    X = te.placeholder(x.shape, x.dtype, name="x")
    W = te.placeholder(w.shape, w.dtype, name="w")
    args = [KernelArg(X, tensor=x.name), KernelArg(W, tensor=w.name)]
    if x.dtype == "float32":
        f, axes = _taps(g, op, X, lambda ok, xv, o, ry, rx, rc: tirx.if_then_else(ok, xv * W[o, ry, rx, rc],
                                                                                  imm(0.0, "float32")))
        acc = te.compute(y.shape, lambda *i: te.sum(f(*i), axis=axes), name="acc")
        act = op.attrs["activation"]
        if b is not None:
            B = te.placeholder((cout,), "float32", name="bias")
            args.append(KernelArg(B, tensor=b.name))
            out = te.compute(y.shape, lambda bb, i, j, o: float_clamp(acc[bb, i, j, o] + B[o], act), name="out")
        else:
            out = te.compute(y.shape, lambda bb, i, j, o: float_clamp(acc[bb, i, j, o], act), name="out")
        return KernelDef(args, out, y.name, reduction_schedule("acc", "out", None, 4))
    if x.dtype == "int16":
        rq = requant16(g, op, cout, True, True, abs_sums(w.data, (1, 2, 3)))
        f, axes = _taps(g, op, X, lambda ok, xv, o, ry, rx, rc: tirx.if_then_else(
            ok, xv.astype(rq.acc) * W[o, ry, rx, rc].astype(rq.acc), imm(0, rq.acc)))
        acc = te.compute(y.shape, lambda *i: te.sum(f(*i), axis=axes), name="acc")
        out = te.compute(y.shape, lambda bb, i, j, o: rq.output(acc[bb, i, j, o], o), name="out")
        return KernelDef([*args, *rq.args], out, y.name, reduction_schedule("acc", "out", None, 4))
    assert x.quant and w.quant and y.quant and w.data is not None
    _, zx = x.quant.scalar()
    ys, zy = y.quant.scalar()
    bias = b.data.astype(np.int64) if b is not None and b.data is not None else np.zeros(cout, np.int64)
    rq8 = bias_requant(bias, effective_scales(x, w, y, True), cout)
    lo, hi = activation_range_int8(op.attrs["activation"], ys, zy)
    f, axes = _taps(g, op, X, lambda ok, xv, o, ry, rx, rc: tirx.if_then_else(
        ok, (xv.astype(I32) - zx) * W[o, ry, rx, rc].astype(I32), imm(0)))
    acc = te.compute(y.shape, lambda *i: te.sum(f(*i), axis=axes), name="acc")
    out = te.compute(y.shape, lambda bb, i, j, o: rq8.output_s8(acc[bb, i, j, o], o, zy, lo, hi), name="out")
    return KernelDef([*args, *rq8.args], out, y.name, reduction_schedule("acc", "out", None, 4))


# ---------------------------------------------------------------------------------------
# per-CPU kernels: the output split into stride_h x stride_w phases


@dataclass
class Phase:
    """The outputs (py + sh * qy, px + sw * qx) of one phase gather the same kernel taps: rows fy
    of ``taps_y`` reading input row qy + cy, columns fx of ``taps_x`` reading input column qx +
    cx, each list ordered by the input offset (c). A stride-1 convolution of the input with the
    taps' sub-filter (flipped), written to every sh-th row and sw-th column of the output."""

    py: int
    px: int
    taps_y: list[tuple[int, int]]   # (fy, cy)
    taps_x: list[tuple[int, int]]   # (fx, cx)
    rows: int                       # qy < rows
    cols: int                       # qx < cols

    def taps(self) -> list[tuple[int, int, int, int]]:
        """(fy, fx, cy, cx) of every tap."""
        return [(fy, fx, cy, cx) for fy, cy in self.taps_y for fx, cx in self.taps_x]

    def inside(self, qy: tirx.PrimExpr, qx: tirx.PrimExpr, h: int, w: int) -> list[tirx.PrimExpr]:
        """The tests that every tap of output (qy, qx) lies inside the input (those that can fail)."""
        conds = []
        for q, taps, size, extent in ((qy, self.taps_y, h, self.rows), (qx, self.taps_x, w, self.cols)):
            if taps and taps[0][1] < 0:
                conds.append(q + taps[0][1] >= 0)
            if taps and extent - 1 + taps[-1][1] >= size:
                conds.append(q + taps[-1][1] < size)
        return conds


def phases(g: Graph, op: Operator) -> list[Phase]:
    """The stride_h x stride_w phases of a transpose convolution's output."""
    w, y = g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    kh, kw = w.shape[1], w.shape[2]
    (sh, sw), (top, left) = op.attrs["strides"], op.attrs["padding"]

    def taps(p: int, pad: int, k: int, s: int) -> list[tuple[int, int]]:
        return sorted(((f, (p + pad - f) // s) for f in range(k) if (p + pad - f) % s == 0), key=lambda t: t[1])

    return [Phase(py, px, taps(py, top, kh, sh), taps(px, left, kw, sw), -(-(y.shape[1] - py) // sh),
                  -(-(y.shape[2] - px) // sw))
            for py in range(min(sh, y.shape[1])) for px in range(min(sw, y.shape[2]))]


def _over_phases(g: Graph, op: Operator, pixel: Callable[[Phase, tirx.PrimExpr, tirx.PrimExpr, tirx.PrimExpr,
                                                                 bool], tirx.Stmt]) -> tirx.Stmt:
    """Per batch, phase and output of the phase, ``pixel(phase, b, qy, qx, checked)``: unchecked
    where every tap of the output lies inside the input (one test per output)."""
    x = g.tensors[op.inputs[0]]
    n, h, wd, _ = x.shape

    def phase(ph: Phase, bb: tirx.PrimExpr) -> tirx.Stmt:
        def at(qy: tirx.PrimExpr, qx: tirx.PrimExpr) -> tirx.Stmt:
            conds = ph.inside(qy, qx, h, wd)
            if not conds:
                return pixel(ph, bb, qy, qx, False)
            return tirx.IfThenElse(tirx.all(*conds), pixel(ph, bb, qy, qx, False), pixel(ph, bb, qy, qx, True))

        return loop(ph.rows, "qy", lambda qy: loop(ph.cols, "qx", lambda qx: at(qy, qx)))

    return loop(n, "b", lambda bb: seq([phase(ph, bb) for ph in phases(g, op)]))


def _tap_inside(qy: tirx.PrimExpr, qx: tirx.PrimExpr, cy: int, cx: int, h: int, w: int) -> tirx.PrimExpr:
    return tirx.all(qy + cy >= 0, qy + cy < h, qx + cx >= 0, qx + cx < w)


def _mac16(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """16x8 on a DSP or Helium CPU: per output (phase by phase) and block of four output
    channels, one dot-product helper call per kernel tap of the phase (the tap's cin inputs are
    contiguous: utvm_mac4_s16 / utvm_mve_mac4_s16); a tap outside the input adds nothing (zero
    point 0). TFLite's int64 sums in int32 where they fit (kernels/mac16.py)."""
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    if x.dtype != "int16" or w.data is None:
        return None
    _, h, wd, cin = x.shape
    cout, kh, kw, _ = w.shape
    (sh, sw) = op.attrs["strides"]
    rq = requant16(g, op, cout, True, True, abs_sums(w.data, (1, 2, 3)))
    pieces = mac16.segments(cin)
    starts = [int(v) for v in np.cumsum([0, *pieces[:-1]])]
    rows = mac16.Rows.build(w.data.reshape(cout, kh * kw * cin), pieces * (kh * kw), target.helium,
                            wide=wide_weights(op))
    X = te.placeholder(x.shape, "int16", name="x")
    args = [KernelArg(X, tensor=x.name), KernelArg(te.placeholder(rows.data.shape, "int8", name="w"),
                                                   constant=rows.data, role="w"), *rq.args]

    def build(bufs: dict[str, tirx.Var]) -> tuple[tirx.Stmt, list[tirx.Buffer]]:
        xb, wb, yb = bufs["x"], bufs["w"], bufs["out"]
        acc = mac16.Acc16(rq)

        def pixel(ph: Phase, bb: tirx.PrimExpr, qy: tirx.PrimExpr, qx: tirx.PrimExpr, checked: bool) -> tirx.Stmt:
            oy, ox = ph.py + sh * qy, ph.px + sw * qx
            inputs = [((fy * kw + fx) * len(pieces) + s, tirx.address_of(xb[bb, qy + cy, qx + cx, k]),
                       _tap_inside(qy, qx, cy, cx, h, wd) if checked else None)
                      for fy, fx, cy, cx in ph.taps() for s, k in enumerate(starts)]

            def block(oo: tirx.PrimExpr) -> tirx.Stmt:
                return seq(acc.sums(rows, wb, oo, cout, bufs, inputs) + acc.store(
                    oo * mac16.BLOCK, cout, bufs, lambda o, v: tirx.BufferStore(yb, v, [bb, oy, ox, o])))

            return mac16.over_blocks(cout, block)

        return _over_phases(g, op, pixel), acc.buffers

    return KernelDef(args, mac16.signature(tuple(y.shape), X), y.name, root_schedule(build))


def _quant8(g: Graph, op: Operator, target: Target) -> tuple[Requant, int, int, int, int]:
    """(requantization with the bias, input zero point, output zero point, clamp bounds) of an
    int8 layer; the bound of the sums |sum (x - zx) w| <= 255 sum|w| allows the short forms."""
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    b = bias_of(g, op)
    assert x.quant and y.quant and w.data is not None
    cout = y.shape[3]
    bias = b.data.astype(np.int64) if b is not None and b.data is not None else np.zeros(cout, np.int64)
    wabs = abs_sums(w.data, (1, 2, 3))
    assert wabs is not None
    rq = bias_requant(bias, effective_scales(x, w, y, True), cout, acc_bound(wabs, bias), wabs == 0, target.packed)
    _, zx = x.quant.scalar()
    ys, zy = y.quant.scalar()
    return (rq, zx, zy, *activation_range_int8(op.attrs["activation"], ys, zy))


def _dsp8(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """int8 on a DSP CPU, input channels a multiple of 4: per output (phase by phase) and block
    of four output channels, one utvm_mac4_s8 call per kernel tap of the phase over the tap's
    cin / 4 input words (weights interleaved for it). A tap outside the input reads cin / 4
    words of the input zero point instead (utvm_mac4_pad_s8): the sums then start from
    -zx x the phase's weight sums, which makes every tap count (x - zx) w, those outside 0."""
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    if not target.dsp or x.dtype != "int8" or x.shape[3] % 4 or w.data is None:
        return None
    n, h, wd, cin = x.shape
    cout, kh, kw, _ = w.shape
    cin4, blocks = cin // 4, -(-cout // CHANNEL_BLOCK)
    (sh, sw) = op.attrs["strides"]
    rq, zx, zy, lo, hi = _quant8(g, op, target)
    padded = np.zeros((blocks * CHANNEL_BLOCK, kh, kw, cin), np.int64)
    padded[:cout] = w.data
    weights = interleave_rows(padded.astype(np.int8)).view(np.int32).reshape(-1)
    all_phases = phases(g, op)
    X4 = te.placeholder((n, h, wd, cin4), I32, name="x")
    args = [KernelArg(X4, tensor=x.name), KernelArg(te.placeholder(weights.shape, I32, name="w"), constant=weights,
                                                    role="w"), *rq.args]
    if zx:
        corr = np.stack([-zx * sum(padded[:, fy, fx].sum(axis=1) for fy, fx, _, _ in ph.taps())
                         if ph.taps() else np.zeros(len(padded), np.int64) for ph in all_phases])
        args += [KernelArg(te.placeholder(corr.shape, I32, name="corr"), constant=corr.astype(np.int32), role="corr"),
                 KernelArg(te.placeholder((cin4,), I32, name="zp"),
                           constant=np.full(cin4, packed_int8(zx), np.int32), role="zp")]

    def build(bufs: dict[str, tirx.Var]) -> tuple[tirx.Stmt, list[tirx.Buffer]]:
        xb, wb, yb = bufs["x"], bufs["w"], bufs["out"]
        acc = tirx.decl_buffer((CHANNEL_BLOCK,), I32, "acc")
        acc_at = tirx.address_of(acc[0])

        def pixel(ph: Phase, bb: tirx.PrimExpr, qy: tirx.PrimExpr, qx: tirx.PrimExpr, checked: bool) -> tirx.Stmt:
            oy, ox = ph.py + sh * qy, ph.px + sw * qx
            p = all_phases.index(ph)

            def block(oo: tirx.PrimExpr) -> tirx.Stmt:
                o0 = oo * CHANNEL_BLOCK
                stmts: list[tirx.Stmt] = [tirx.BufferStore(acc, bufs["corr"][p, o0 + k] if zx else imm(0), [k])
                                          for k in range(CHANNEL_BLOCK)]
                for fy, fx, cy, cx in ph.taps():
                    x_at = tirx.address_of(xb[bb, qy + cy, qx + cx, 0])
                    w_at = tirx.address_of(wb[((oo * kh + fy) * kw + fx) * cin4 * CHANNEL_BLOCK])
                    if not checked:
                        stmts.append(tirx.Evaluate(tirx.call_extern(I32, "utvm_mac4_s8", acc_at, x_at, w_at,
                                                                    imm(cin4))))
                        continue
                    inside = _tap_inside(qy, qx, cy, cx, h, wd)
                    if zx:
                        stmts.append(tirx.Evaluate(tirx.call_extern(
                            I32, "utvm_mac4_pad_s8", acc_at, inside.astype(I32), x_at,
                            tirx.address_of(bufs["zp"][0]), w_at, imm(cin4))))
                    else:
                        stmts.append(tirx.IfThenElse(inside, tirx.Evaluate(tirx.call_extern(
                            I32, "utvm_mac4_s8", acc_at, x_at, w_at, imm(cin4))), None))
                for k in range(CHANNEL_BLOCK):
                    value = to_tir(rq.output_s8(acc[k], o0 + k, zy, lo, hi), bufs)
                    stmts.append(mac16.guard(o0 + k, cout, k, tirx.BufferStore(yb, value, [bb, oy, ox, o0 + k])))
                return seq(stmts)

            return loop(blocks, "oo", block)

        return _over_phases(g, op, pixel), [acc]

    out = te.compute(y.shape, lambda *i: X4[(0,) * 4].astype("int8"), name="out")  # the signature only
    return KernelDef(args, out, y.name, root_schedule(build))


def _helium8(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """int8 on Helium: phase by phase a stride-1 convolution by the phase's flipped sub-filter:
    the taps of four outputs of a phase row gathered into planned scratch (utvm_mve_im2col_s8,
    the input zero point outside) and utvm_mve_gemm_s8 with the phase's folded biases (bias -
    zx x the phase's weight sums), its outputs sw pixels apart."""
    checked = mve.operands(g, op, target)
    all_phases = phases(g, op)
    if checked is None or any(not ph.taps() for ph in all_phases):
        return None
    x, w, y, b = checked
    assert w.data is not None and x.quant is not None and y.quant is not None
    (_, h, wd, cin), (_, _, ow, cout), (sh, sw) = x.shape, y.shape, op.attrs["strides"]
    _, zx = x.quant.scalar()
    ys, zy = y.quant.scalar()
    lo, hi = activation_range_int8(op.attrs["activation"], ys, zy)
    X = te.placeholder(x.shape, "int8", name="x")
    args = [KernelArg(X, tensor=x.name)]
    parts = []  # per phase: (index of its weights in args, its MveRequant, depth of its patches)
    for p, ph in enumerate(all_phases):
        sub = w.data[:, [fy for fy, _ in ph.taps_y]][:, :, [fx for fx, _ in ph.taps_x]]
        rq = mve.mve_requant(x, w, y, b, sub.astype(np.int64).sum(axis=(1, 2, 3)), cout)
        if rq is None:
            return None
        parts.append((len(args), rq, sub[0].size))
        args.append(KernelArg(te.placeholder((sub.size,), "int8", name=f"w{p}"),
                              constant=np.ascontiguousarray(sub.astype(np.int8)).reshape(-1), role=f"w{p}"))
        args += [KernelArg(te.placeholder(a.placeholder.shape, a.placeholder.dtype, name=f"{a.role}{p}"),
                           constant=a.constant, role=f"{a.role}{p}") for a in rq.args]
    depth = max(k for _, _, k in parts)
    args.append(KernelArg(te.placeholder((mve.PIXELS * depth,), "int8", name="col"), role="col", scratch=True))

    def body(ins, outs):  # type: ignore[no-untyped-def]
        xb, col, yb = ins[0], ins[-1], outs[0]
        stmts = []
        for ph, (at, rq, k) in zip(all_phases, parts):
            qy, gi, pi = tirx.Var("qy", I32), tirx.Var("g", I32), tirx.Var("p", I32)
            first = gi * mve.PIXELS
            count = tirx.min(ph.cols - first, mve.PIXELS) if ph.cols % mve.PIXELS else tirx.const(mve.PIXELS, I32)
            gather = mve.call("utvm_mve_im2col_s8", col.access_ptr("w", offset=pi * k), xb.access_ptr("r"), h, wd,
                              cin, qy + ph.taps_y[0][1], first + pi + ph.taps_x[0][1], len(ph.taps_y),
                              len(ph.taps_x), 1, 1, zx)
            if ph.cols % mve.PIXELS:
                gather = tirx.IfThenElse(first + pi < ph.cols, gather, None)
            out_at = ((ph.py + sh * qy) * ow + ph.px + sw * first) * cout
            gemm = mve.call("utvm_mve_gemm_s8", yb.access_ptr("w", offset=out_at), count, sw * cout,
                            col.access_ptr("r"), k, ins[at].access_ptr("r"), k, cout,
                            *rq.call_args(ins[at + 1:at + 1 + len(rq.args)]), zy, lo, hi)
            group = tirx.SeqStmt([tirx.For(pi, 0, mve.PIXELS, tirx.ForKind.SERIAL, gather), gemm])
            groups = -(-ph.cols // mve.PIXELS)
            stmts.append(tirx.For(qy, 0, ph.rows, tirx.ForKind.SERIAL,
                                  tirx.For(gi, 0, groups, tirx.ForKind.SERIAL, group)))
        return seq(stmts)

    return mve.extern(y, args, body)


def macs(g: Graph, op: Operator) -> int:
    """Every input element times every filter tap and output channel (what the scatter does)."""
    x, w = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]]
    return x.size * w.shape[0] * w.shape[1] * w.shape[2]


OPS = (
    OpDef(
        kind="transpose_conv2d",
        summary="transposed 2-D convolution",
        tflite=(SourceOp("TRANSPOSE_CONV", from_tflite, ("int8", "int16", "float32"),
                         "constant output shape; int8 filter per-channel symmetric; int16: int16/int64 bias"),),
        onnx=(SourceOp("ConvTranspose", from_onnx, ("float32",), "2-D, group 1, no dilation"),),
        variants=(
            Variant("helium", _helium8, "Cortex-M52/M55/M85"),
            Variant("dsp_mac4", _dsp8, "Cortex-M4/M7/M33"),
            Variant("helium_int16", mac16.on_helium(_mac16), "Cortex-M52/M55/M85", types=("int16",)),
            Variant("dsp_int16", mac16.on_dsp(_mac16), "Cortex-M4/M7/M33", types=("int16",), knobs=mac4_knobs),
            Variant("generic", _kernel, types=("int8", "int16", "float32")),
        ),
        check=check,
        reference="TFLite Micro transpose_conv.cc: reference_integer_ops::TransposeConv (int8, int16 with int64 "
                  "accumulators), reference_ops::TransposeConv (float32)",
        fuses_activation=True,
        macs=macs,
        lean=lean_tuned_weights,
        weights=Weights(),
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "TRANSPOSE_CONV filter not a constant [out, kh, kw, in]",
               "non-constant filters run in TFLM; channel dims are `TFLITE_DCHECK`s [reference transpose_conv.h]",
               "would-compute-differently", "kept: utvm packs filters at compile time"),
    Validation("check", "TRANSPOSE_CONV batch in and out differ",
               "MatchingDim is a `TFLITE_DCHECK` [reference transpose_conv.h]",
               "would-compute-differently", "kept"),
    Validation("check", "TRANSPOSE_CONV bias not a constant of output channels",
               "no length check; non-constant: TFLM runs [k/transpose_conv.cc]",
               "would-compute-differently", "kept: utvm folds the bias at compile time"),
    Validation("check", "16x8 TRANSPOSE_CONV bias not int16/int64",
               "int16 biases are widened to int64, others go to the int64 kernel [k/transpose_conv.cc:120-133]; an int32 bias is read as int64",
               "would-compute-differently", "kept"),
    Validation("check", "int8 TRANSPOSE_CONV filter/output not int8 or without quantization",
               "filter quantization `TF_LITE_ENSURE_EQ(affine)` [k/transpose_conv.cc:213-220], `TF_LITE_ENSURE_EQ(input->type, output->type)` [287]",
               "refused-by-TFLM", "kept"),
    Validation("check", "int8 TRANSPOSE_CONV filter zero points not 0",
               "TransposeConv takes no weights offset: never read [reference integer_ops/transpose_conv.h]",
               "neither", "relaxed (import sets them to 0; this check is now unreachable from TFLite)"),
    Validation("check", "int8 TRANSPOSE_CONV bias not int32",
               'the int8 kernel reads an int32 bias (`MicroPrintf("Type %s (%d) not supported.")` for others) [k/transpose_conv.cc:401]',
               "refused-by-TFLM", "kept"),
    Validation("check", "TRANSPOSE_CONV types other than float32/int8/16x8",
               '`MicroPrintf("Type %s (%d) not supported.")` [k/transpose_conv.cc:401]',
               "refused-by-TFLM", "kept"),
    Validation("from_tflite", "TRANSPOSE_CONV without output shape, filter and input",
               "`TF_LITE_ENSURE(has_bias || node->inputs->size == 3)` [k/transpose_conv.cc:78]",
               "refused-by-TFLM", "kept", rule=True),
    Validation("from_tflite", "TRANSPOSE_CONV output shape input not 4 values",
               "no check on the shape tensor; TFLM computes with the output tensor's dims [k/transpose_conv.cc]",
               "would-compute-differently", "kept: utvm takes the shape from that input", rule=True),
    Validation("from_tflite", "TRANSPOSE_CONV output shape input differs from the output tensor",
               "not read; the output tensor's dims are used [k/transpose_conv.cc]",
               "would-compute-differently", "kept: utvm takes the shape from that input", rule=True),
    Validation("from_tflite", "TRANSPOSE_CONV filter, input or output not 4-D",
               "no rank check; reads dims->data[1..3] [k/transpose_conv.cc]",
               "would-compute-differently", "kept", rule=True),
    Validation("from_tflite", "TRANSPOSE_CONV strides below 1",
               "no check; ComputePaddingHeightWidth divides by the stride [kernels/padding.h]",
               "would-compute-differently", "kept", rule=True),
)
