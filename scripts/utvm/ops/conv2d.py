"""CONV_2D: 2-D convolution, NHWC input, OHWI filter, per-channel int8 or float32.

Import: TFLite CONV_2D; ONNX Conv with group=1 (group = channels is depthwise_conv2d).
Semantics: TFLite Micro's reference kernels (reference_integer_ops::ConvPerChannel for int8:
int32 accumulation, bias, MultiplyByQuantizedMultiplier per channel with the multipliers
QuantizeMultiplier computes in double, output zero point, activation clamp;
reference_ops::Conv for float32, accumulated in the same order).

Kernel variants, first that applies:
- helium_fc: Cortex-M52/M55/M85, int8 1 x 1 filters whose output map is one pixel (the squeeze-excite
  layers of MobileNetV3): fully_connected's utvm_mve_fc4_s8, the filter as its weights;
- helium: Cortex-M52/M55/M85 (kernels_mve.h);
- dsp_gemm: Cortex-M4/M7/M33, int8 whose requantization has the short exact form (kernels/dsp.py):
  the whole layer in one call of kernels_dsp.h (pointwise rows read in place, other windows
  gathered into patches, widened to int16 once, assembly blocks of output channels); knob
  ``weights``: int16 (widened and doubled ahead of time) or int8, int16 by default only for
  small layers on large maps and rows of at most 24 inputs (mac_knobs.widened_by_default); knob
  ``consts``: the requantization constants as words or packed (4 bytes a channel instead of 16 with the bias, expanded into
  scratch; what --max-flash takes);
- dsp_short: Cortex-M4/M7/M33, int8 with dsp_gemm's short exact requantization whose gathered patch
  is at most five int16 pairs (one input channel, windows up to 9 taps), at most 96 output
  channels: one naked assembly function generated for the layer (kernels/shortk.py), a patch's pairs
  in registers, per output channel the stream's words by LDM, one SMLAD per pair, the shift an
  immediate; the patches gathered by kernels_dsp.h's utvm_dsp_conv;
- dsp_rows4: one input channel and four taps per kernel row (KWS's first layer), a word per row;
  knob ``weights`` as dsp_mac4's;
- dsp_rows_flat: input channels that do not fill words (RGB images), flat row dot products;
- dsp_mac4: cin % 4 == 0 and cout % 4 == 0, an assembly MAC loop per block of 4 output channels;
  knob ``weights``: int8 (default) or int16 (widened ahead of time: twice the flash, fewer
  instructions);
- helium_int16 / dsp_int16: 16x8, no dilation along the width: one utvm_mve_mac4_s16 /
  utvm_mac4_s16 call per kernel row and block of 4 output channels (kernels/mac16.py); knob
  ``weights`` of dsp_int16 as dsp_mac4's (utvm_mac4w_s16);
- int16: 16x8, any shape (TE);
- generic: any shape; 4 (or 16 on Helium) int8 lanes per word when cin % 4 == 0, else bytes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tvm import te, tirx

from ..ir import NHWC, Graph, Operator, Quant
from ..kernels import helium as mve
from ..kernels import mac16, shortk
from ..kernels.dsp import Geometry, gemm_kernel, int8_layer
from ..kernels.kerneldef import KernelArg, KernelDef
from ..kernels.padding import padding
from ..kernels.requant import I32, float_clamp, imm
from ..kernels.schedules import (
    CHANNEL_BLOCK,
    blocked_schedule,
    dot4,
    dot4w,
    dot16,
    interior_or_border,
    interleave_rows,
    loop,
    mac4_schedule,
    over_pixels,
    packed_int8,
    pad,
    pad_from,
    pad_sides,
    reduction_schedule,
    root_schedule,
    seq,
    store_block,
    widen_words,
    window_conds,
)
from ..kernels.target import VECTOR_LANES, Target
from .base import Channels, Offload, OpDef, OpError, SourceOp, Validation, Variant, Weights
from .common import (
    QuantConv,
    abs_sums,
    bias_of,
    check_bias,
    check_mac_types,
    check_window,
    conv_macs,
    int64_accumulation,
    quant_conv,
    requant16,
)
from .mac_knobs import gemm_knobs, gemm_packed, gemm_wide, gemm_widen, lean_weights, mac4_knobs, wide_weights

# ---------------------------------------------------------------------------------------
# import


def from_tflite(ctx: Any, node: Any) -> None:
    """CONV_2D and DEPTHWISE_CONV_2D: strides, dilation, SAME/VALID padding, fused activation."""
    depthwise = node.kind == "DEPTHWISE_CONV_2D"
    o = ctx.options(node, "DepthwiseConv2DOptions" if depthwise else "Conv2DOptions")
    ins = node.inputs
    x = ctx.tensors[ins[0]]
    w = ctx.tensors[ins[1]]
    if len(x.shape) != 4 or len(w.shape) != 4:
        raise ctx.fail(node, "expects 4-D input and filter")
    kh, kw = w.shape[1], w.shape[2]
    sh, sw = o.StrideH(), o.StrideW()
    dh, dw = o.DilationHFactor(), o.DilationWFactor()  # 1 when absent (the schema's default)
    pad4 = padding(o.Padding(), x.shape[1], x.shape[2], kh, kw, sh, sw, dh, dw)
    attrs: dict[str, Any] = {
        "strides": (sh, sw), "dilation": (dh, dw), "padding": pad4,
        "activation": ctx.activation(o.FusedActivationFunction(), node),
    }
    if depthwise:
        attrs["depth_multiplier"] = w.shape[3] // x.shape[3] if x.shape[3] else 0
    elif hasattr(o, "QuantizedBiasType") and o.QuantizedBiasType() == 2:  # INT32: 16x8 accumulates in int32
        attrs["quantized_bias_type"] = "int32"
    inputs = [ins[0], ins[1]] + ([ins[2]] if len(ins) > 2 and ins[2] else [])
    ctx.emit(node, "depthwise_conv2d" if depthwise else "conv2d", inputs, node.outputs, attrs)


def _onnx_geometry(imp: Any, node: Any, x_value: str, w_shape: tuple[int, ...]) -> tuple[str, dict[str, Any], int]:
    """(kind, attributes, axis of the output channels in the converted filter) of an ONNX
    convolution: group=1 is conv2d (OIHW -> OHWI), group = input channels with one channel per
    group is depthwise_conv2d ([C*M,1,KH,KW] -> [1,KH,KW,C*M])."""
    attrs = imp.attrs(node)
    x_shape = imp.shape(x_value)
    if len(x_shape) != 4 or len(w_shape) != 4:
        raise imp.fail(f"only 2-D convolutions (4-D input) are supported, input has shape {list(x_shape)}")
    m, cpg, kh, kw = w_shape
    cin = x_shape[1]
    group = int(attrs.get("group", 1))
    strides = imp.pair(attrs, "strides", (1, 1))
    dilation = imp.pair(attrs, "dilations", (1, 1))
    pad4 = imp.pads_2d(attrs, (x_shape[2], x_shape[3]), (kh, kw), strides, dilation)
    act = attrs.get("activation", b"none")
    conv_attrs: dict[str, Any] = {"strides": strides, "dilation": dilation, "padding": pad4,
                                  "activation": act.decode() if isinstance(act, bytes) else str(act)}
    if group == 1:
        return "conv2d", conv_attrs, 0
    if group == cin and cpg == 1 and m % cin == 0:
        conv_attrs["depth_multiplier"] = m // cin
        return "depthwise_conv2d", conv_attrs, 3
    raise imp.fail(f"grouped convolution (group={group}) is not supported; only group=1 or depthwise")


def _onnx_filter(w: np.ndarray, kind: str) -> np.ndarray:
    return w.transpose(0, 2, 3, 1) if kind == "conv2d" else w.transpose(1, 2, 3, 0)


def from_onnx(imp: Any, node: Any) -> None:
    """Conv (2-D): float32 weights and bias as given."""
    w = imp.float_const(node.input[1], "weight")
    bias = imp.float_const(node.input[2], "bias") if len(node.input) > 2 and node.input[2] else None
    kind, conv_attrs, _ = _onnx_geometry(imp, node, node.input[0], w.shape)
    x = imp.get(node.input[0], NHWC)
    inputs = [x, imp.add_const(f"{node.output[0]}_weight", _onnx_filter(w, kind))]
    if bias is not None:
        inputs.append(imp.add_const(f"{node.output[0]}_bias", bias.reshape(-1)))
    imp.emit(kind, inputs, node.output[0], NHWC, conv_attrs)


def from_onnx_qlinear(imp: Any, node: Any) -> None:
    """QLinearConv (and the Conv groups of QDQ models, fused into it): int8 input, int8
    filter with per-tensor or per-output-channel scales (zero points 0), int32 bias in the
    scale input x filter, int8 output: an int8 conv2d / depthwise_conv2d."""
    xq = imp.quantized_input(node.input[0], node.input[1], node.input[2], "input")
    w = imp.const(node.input[3], "weight")
    if w.dtype != np.int8:
        raise imp.fail(f"unsupported weight type {w.dtype} (int8 only)")
    ws = imp.const(node.input[4], "weight scale").astype(np.float32).reshape(-1)
    wz = imp.const(node.input[5], "weight zero point").reshape(-1) if node.input[5] else np.zeros(1, np.int8)
    if np.any(wz != 0):
        raise imp.fail("weights with a zero point other than 0 are not supported (quantize them symmetrically)")
    kind, conv_attrs, axis = _onnx_geometry(imp, node, node.input[0], w.shape)
    if ws.size not in (1, w.shape[0]):
        raise imp.fail(f"{ws.size} weight scales for {w.shape[0]} output channels")
    wq = Quant(scale=ws, zero_point=np.zeros(ws.size, np.int32), axis=axis)
    x = imp.get(node.input[0], NHWC)
    inputs = [x, imp.add_const(f"{node.output[0]}_weight", np.ascontiguousarray(_onnx_filter(w, kind)), wq)]
    if len(node.input) > 8 and node.input[8]:
        b = imp.const(node.input[8], "bias")
        if b.dtype != np.int32 or b.size != w.shape[0]:
            raise imp.fail(f"the bias must be {w.shape[0]} int32 values")
        bq = Quant(scale=(np.float64(xq.scalar()[0]) * ws.astype(np.float64)).astype(np.float32),
                   zero_point=np.zeros(ws.size, np.int32))
        inputs.append(imp.add_const(f"{node.output[0]}_bias", b.reshape(-1), bq))
    imp.emit(kind, inputs, node.output[0], NHWC, conv_attrs)


def check(g: Graph, op: Operator) -> None:
    """What the convolution kernels assume (TFLite Micro's Conv Prepare checks the same)."""
    check_mac_types(g, op)
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    if w.data is None or len(w.shape) != 4:
        raise OpError(f"{op.source}: the filter must be a 4-D constant")
    check_window(g, op, w.shape[1], w.shape[2])
    if w.shape[3] != x.shape[3] or w.shape[0] != y.shape[3]:
        raise OpError(f"{op.source}: a filter of shape {list(w.shape)} for {x.shape[3]} input and {y.shape[3]} "
                      "output channels")
    check_bias(g, op, y.shape[3])


# ---------------------------------------------------------------------------------------
# kernels

def _quant_dsp(g: Graph, op: Operator, target: Target) -> bool:
    """int8 on a CPU with the 4-lane DSP kernels."""
    return target.dsp and g.tensors[op.inputs[0]].dtype == "int8"


def _geometry(g: Graph, op: Operator) -> Geometry:
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    top, left, _, _ = op.attrs["padding"]
    return Geometry(*x.shape, y.shape[1], y.shape[2], y.shape[3], w.shape[1], w.shape[2], *op.attrs["strides"],
                    *op.attrs["dilation"], top, left)


def _gemm(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """kernels_dsp.h: rows of the input (pointwise) or gathered patches, widened to int16 once,
    against blocks of output channels."""
    if not _quant_dsp(g, op, target):
        return None
    return gemm_kernel(g, op, _geometry(g, op), gemm_wide(g, op), True, gemm_widen(op), gemm_packed(op))


def _short(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """A short-row layer's own function (kernels/shortk.py) over the patches kernels_dsp.h gathers."""
    if not _quant_dsp(g, op, target):
        return None
    geo = _geometry(g, op)
    if not shortk.applies(geo):
        return None
    layer = int8_layer(g, op, True)
    if layer is None:
        return None
    x = layer.x
    name, source = shortk.source(geo, tuple(int(e) for e in layer.rq.rights), layer.zx, layer.lo, layer.hi)
    data = shortk.stream(geo, layer.wmat, layer.rq, layer.zy, layer.lo, layer.hi)
    args = [KernelArg(te.placeholder(x.shape, "int8", name="x"), tensor=x.name),
            KernelArg(te.placeholder((data.size,), I32, name="w"), constant=data, role="w"),
            KernelArg(te.placeholder((shortk.scratch_words(geo),), I32, name="col"), role="col", scratch=True)]

    def body(ins, outs):  # type: ignore[no-untyped-def]
        return mve.call(name, outs[0].access_ptr("w"), ins[0].access_ptr("r"), ins[1].access_ptr("r"),
                        ins[2].access_ptr("w"))

    kdef = mve.extern(g.tensors[op.outputs[0]], args, body)
    kdef.source = source
    return kdef


def _gemm_knobs(g: Graph, op: Operator, target: Target) -> dict[str, tuple[Any, ...]]:
    return gemm_knobs(g, op, _geometry(g, op))


def _rows4(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    cin, wd, kw, cout = x.shape[3], x.shape[2], w.shape[2], y.shape[3]
    if not (_quant_dsp(g, op, target) and cin == 1 and kw == 4 and op.attrs["dilation"][1] == 1 and wd >= 4
            and cout % CHANNEL_BLOCK == 0 and max(op.attrs["padding"][1], op.attrs["padding"][3]) < 4):
        return None
    return _conv_rows4(op, quant_conv(g, op, target.packed), y.shape[1:3], y.name)


def _rows_flat(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    cin, kw, cout = x.shape[3], w.shape[2], y.shape[3]
    if not (_quant_dsp(g, op, target) and cin % 4 and op.attrs["dilation"][1] == 1 and kw * cin >= 4
            and cout % CHANNEL_BLOCK == 0):
        return None
    return _conv_rows_flat(op, quant_conv(g, op, target.packed), y.shape[1:3], y.name)


def _packed_input(g: Graph, op: Operator, q: QuantConv) -> tuple[te.Tensor, te.Tensor, te.Tensor, str | None]:
    """The input and filter read as int32 words of four channels (activations and weights are
    4-byte aligned), the input padded with the packed zero point: (X4, W4, padded, pad name)."""
    x, w = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]]
    n, h, wd, cin = x.shape
    cout, kh, kw, _ = w.shape
    X4 = te.placeholder((n, h, wd, cin // 4), I32, name="x")
    W4 = te.placeholder((cout, kh, kw, cin // 4), I32, name="w")
    q.args[0], q.args[1] = KernelArg(X4, tensor=x.name), KernelArg(W4, tensor=w.name)
    P, pad_name = pad(X4, op.attrs["padding"], imm(packed_int8(q.zx)))
    return X4, W4, P, pad_name


def _mac4(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    if not (_quant_dsp(g, op, target) and x.shape[3] % 4 == 0 and y.shape[3] % CHANNEL_BLOCK == 0):
        return None
    q = quant_conv(g, op, target.packed)
    X4, _, P, pad_name = _packed_input(g, op, q)
    return _conv_mac4(op, X4, P, pad_name, q, y.shape[1:3], y.name)


def _int16(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """16x8: int16 input and output, int8 filter, TFLite Micro's int64 accumulation (int32 with
    an int32 bias) and MultiplyByQuantizedMultiplier of that width."""
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    if x.dtype != "int16":
        return None
    n, oh, ow, cout = y.shape
    kh, kw, cin = w.shape[1], w.shape[2], w.shape[3]
    sh, sw = op.attrs["strides"]
    dh, dw = op.attrs["dilation"]
    rq = requant16(g, op, cout, True, int64_accumulation(g, op), abs_sums(w.data, (1, 2, 3)))
    X = te.placeholder(x.shape, "int16", name="x")
    W = te.placeholder(w.shape, "int8", name="w")
    P, pad_name = pad(X, op.attrs["padding"], imm(0, "int16"))
    ry, rx, rc = te.reduce_axis((0, kh), "ry"), te.reduce_axis((0, kw), "rx"), te.reduce_axis((0, cin), "rc")
    acc = te.compute((n, oh, ow, cout), lambda bb, i, j, o: te.sum(
        P[bb, i * sh + ry * dh, j * sw + rx * dw, rc].astype(rq.acc) * W[o, ry, rx, rc].astype(rq.acc),
        axis=[ry, rx, rc]), name="acc")
    out = te.compute((n, oh, ow, cout), lambda bb, i, j, o: rq.output(acc[bb, i, j, o], o), name="out")
    args = [KernelArg(X, tensor=x.name), KernelArg(W, tensor=w.name), *rq.args]
    return KernelDef(args, out, y.name, reduction_schedule("acc", "out", pad_name, 4))


def _mac16(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """16x8 on a DSP or Helium CPU (no dilation along the width): per output pixel and block of
    four output channels one dot-product helper call per kernel row (its kw * cin inputs are
    contiguous; pieces of at most mac16.SEGMENT_MAX), utvm_mac4_s16 or utvm_mve_mac4_s16. A window
    that crosses the border is first gathered, zeros outside, into planned scratch
    (utvm_im2col_s16). The sums are requantized in TIR."""
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    if x.dtype != "int16" or w.data is None or op.attrs["dilation"][1] != 1:
        return None
    n, h, wd, cin = x.shape
    _, oh, ow, cout = y.shape
    kh, kw = w.shape[1], w.shape[2]
    sh, sw = op.attrs["strides"]
    dh = op.attrs["dilation"][0]
    top, left, _, _ = op.attrs["padding"]
    rq = requant16(g, op, cout, True, int64_accumulation(g, op), abs_sums(w.data, (1, 2, 3)))
    length = kw * cin
    pieces = mac16.segments(length)
    starts = [int(v) for v in np.cumsum([0, *pieces[:-1]])]
    rows = mac16.Rows.build(w.data.reshape(cout, kh * length), pieces * kh, target.helium, wide=wide_weights(op))
    window = (kh, kw, sh, sw, dh, 1, top, left, h, wd)
    sides = pad_sides(window, (oh, ow))
    X = te.placeholder(x.shape, "int16", name="x")
    args = [KernelArg(X, tensor=x.name), KernelArg(te.placeholder(rows.data.shape, "int8", name="w"),
                                                   constant=rows.data, role="w"), *rq.args]
    if any(sides):
        args.append(KernelArg(te.placeholder((kh * length,), "int16", name="col"), role="col", scratch=True))

    def build(bufs: dict[str, tirx.Var]) -> tuple[tirx.Stmt, list[tirx.Buffer]]:
        xb, wb, yb = bufs["x"], bufs["w"], bufs["out"]
        acc = mac16.Acc16(rq)

        def pixel(bb: tirx.PrimExpr, i: tirx.PrimExpr, j: tirx.PrimExpr) -> tirx.Stmt:
            iy0, ix0 = i * sh - top, j * sw - left

            def body(checked: bool) -> tirx.Stmt:
                if checked:
                    col = bufs["col"]
                    inputs = [tirx.address_of(col[r * length + k]) for r in range(kh) for k in starts]
                else:
                    inputs = [tirx.address_of(xb[bb, iy0 + r * dh, ix0 + k // cin, k % cin])
                              for r in range(kh) for k in starts]

                def block(oo: tirx.PrimExpr) -> tirx.Stmt:
                    sums = acc.sums(rows, wb, oo, cout, bufs, [(s, a, None) for s, a in enumerate(inputs)])
                    return seq(sums + acc.store(oo * mac16.BLOCK, cout, bufs,
                                                lambda o, v: tirx.BufferStore(yb, v, [bb, i, j, o])))

                blocks = mac16.over_blocks(cout, block)
                if not checked:
                    return blocks
                gather = tirx.call_extern(I32, "utvm_im2col_s16", tirx.address_of(bufs["col"][0]),
                                          tirx.address_of(xb[bb, 0, 0, 0]), imm(h), imm(wd), imm(cin), iy0, ix0,
                                          imm(kh), imm(kw), imm(dh))
                return seq([tirx.Evaluate(gather), blocks])

            return interior_or_border(i, j, window, sides, body)

        return over_pixels((n, oh, ow), pixel), acc.buffers

    return KernelDef(args, mac16.signature(tuple(y.shape), X), y.name, root_schedule(build))


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    """TE convolution: int8 with four int8 lanes per word when cin % 4 == 0 (16 per Helium
    vector when the input needs no padding), else byte by byte; float32."""
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    b = bias_of(g, op)
    n, h, wd, cin = x.shape
    _, oh, ow, cout = y.shape
    kh, kw = (w.shape[1], w.shape[2])
    sh, sw = op.attrs["strides"]
    dh, dw = op.attrs["dilation"]
    quant = x.dtype == "int8"
    ry = te.reduce_axis((0, kh), "ry")
    rx = te.reduce_axis((0, kw), "rx")
    if quant:
        q = quant_conv(g, op, target.packed)
        args, W = q.args, q.W
        if target.packed and cin % 4 == 0:
            X4, W4, P, pad_name = _packed_input(g, op, q)
            if pad_name is None and target.helium and cin % VECTOR_LANES == 0:
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
            P, pad_name = pad(q.X, op.attrs["padding"], imm(q.zx, "int8"))
            rc = te.reduce_axis((0, cin), "rc")

            def acc_f(bb, i, j, o):  # type: ignore[no-untyped-def]
                return te.sum(P[bb, i * sh + ry * dh, j * sw + rx * dw, rc].astype(I32)
                              * W[o, ry, rx, rc].astype(I32), axis=[ry, rx, rc])

        acc = te.compute((n, oh, ow, cout), acc_f, name="acc")
        out = te.compute((n, oh, ow, cout), lambda bb, i, j, o: q.rq.output_s8(acc[bb, i, j, o], o, q.zy, q.lo, q.hi),
                         name="out")
        if kh * kw == 1 or cin == 1:
            # pointwise (and single input channel): block output channels, each input value is
            # loaded once for all of them; wider windows do better fully unrolled per channel
            return KernelDef(args, out, y.name, blocked_schedule(pad_name, 4, cout))
        return KernelDef(args, out, y.name, reduction_schedule("acc", "out", pad_name, 4))
    X = te.placeholder(x.shape, x.dtype, name="x")
    W = te.placeholder(w.shape, w.dtype, name="w")
    args = [KernelArg(X, tensor=x.name), KernelArg(W, tensor=w.name)]
    P, pad_name = pad(X, op.attrs["padding"], imm(0.0, "float32"))
    rc = te.reduce_axis((0, cin), "rc")
    acc = te.compute((n, oh, ow, cout), lambda bb, i, j, o: te.sum(
        P[bb, i * sh + ry * dh, j * sw + rx * dw, rc] * W[o, ry, rx, rc], axis=[ry, rx, rc]), name="acc")
    out = float_output(acc, b, args, op.attrs["activation"])
    return KernelDef(args, out, y.name, reduction_schedule("acc", "out", pad_name, 4))


def float_output(acc: te.Tensor, b: Any, args: list[KernelArg], act: str) -> te.Tensor:
    """The float32 output of an NHWC accumulator: plus the bias (a parameter appended to
    ``args``) when there is one, clamped by the fused activation."""
    cout = acc.shape[-1]
    if b is not None:
        B = te.placeholder((cout,), "float32", name="bias")
        args.append(KernelArg(B, tensor=b.name))
        return te.compute(acc.shape, lambda bb, i, j, o: float_clamp(acc[bb, i, j, o] + B[o], act), name="out")
    return te.compute(acc.shape, lambda bb, i, j, o: float_clamp(acc[bb, i, j, o], act), name="out")


def _conv_mac4(op: Operator, X4: te.Tensor, P: te.Tensor, pad_name: str | None, q: QuantConv,
               out_hw: tuple[int, int], y_name: str) -> KernelDef:
    """A packed int8 convolution (cin % 4 == 0) made of utvm_mac4_s8 calls: per output pixel,
    block of CHANNEL_BLOCK output channels and kernel tap, the cin / 4 input words of the tap.
    The weights are reordered for the call; a tap in the padding reads cin / 4 words of the
    packed input zero point (a small constant) instead of the input."""
    wdata, zx, args, rq, zy, lo, hi = q.wdata, q.zx, q.args, q.rq, q.zy, q.lo, q.hi
    n, h, wd, cin4 = (int(v) for v in X4.shape)
    cout, kh, kw, _ = wdata.shape
    oh, ow = out_hw
    sh, sw = op.attrs["strides"]
    dh, dw = op.attrs["dilation"]
    top, left, _, _ = op.attrs["padding"]
    wide = wide_weights(op)
    blocked = interleave_rows(wdata.astype(np.int8))
    W4 = te.placeholder((cout // CHANNEL_BLOCK, kh, kw, cin4, CHANNEL_BLOCK, *((2,) if wide else ())), I32, name="w")
    args = [args[0], KernelArg(W4, constant=widen_words(blocked) if wide else blocked, role="w"), *args[2:]]
    if pad_name:
        # the padding reads the zero point words (the call points there for a tap in the padding)
        ZP = te.placeholder((cin4,), I32, name="zp")
        args.append(KernelArg(ZP, constant=np.full(cin4, packed_int8(zx), dtype=np.int32), role="zp"))
        P, pad_name = pad_from(X4, op.attrs["padding"], ZP)
    ry = te.reduce_axis((0, kh), "ry")
    rx = te.reduce_axis((0, kw), "rx")
    rc = te.reduce_axis((0, cin4), "rc")

    def acc_f(bb, i, j, o):  # type: ignore[no-untyped-def]
        xw = P[bb, i * sh + ry * dh, j * sw + rx * dw, rc]
        at = (o // CHANNEL_BLOCK, ry, rx, rc, o % CHANNEL_BLOCK)
        product = dot4w(xw, W4[(*at, 0)], W4[(*at, 1)]) if wide else dot4(xw, W4[at])
        return te.sum(product, axis=[ry, rx, rc])

    acc = te.compute((n, oh, ow, cout), acc_f, name="acc")
    out = te.compute((n, oh, ow, cout), lambda bb, i, j, o: rq.output_s8(acc[bb, i, j, o], o, zy, lo, hi),
                     name="out")

    def make_call(ivs: list[tirx.Var], acc_buf: tirx.Buffer, params: dict[str, tirx.Buffer]) -> tirx.PrimExpr:
        bb, i, j, oo, vy, vx = ivs[:6]
        ih = i * sh + vy * dh - top
        iw = j * sw + vx * dw - left
        acc_addr = tirx.address_of(acc_buf[bb, i, j, oo * CHANNEL_BLOCK])
        xaddr = tirx.address_of(params["x"][bb, ih, iw, 0])
        waddr = tirx.address_of(params["w"][(oo, vy, vx, 0, 0, *((0,) if wide else ()))])
        helper = "utvm_mac4w" if wide else "utvm_mac4"
        if pad_name:
            inside = tirx.all(ih >= 0, ih < h, iw >= 0, iw < wd).astype(I32)
            return tirx.call_extern(I32, helper + "_pad_s8", acc_addr, inside, xaddr,
                                    tirx.address_of(params["zp"][0]), waddr, imm(cin4))
        return tirx.call_extern(I32, helper + "_s8", acc_addr, xaddr, waddr, imm(cin4))

    return KernelDef(args, out, y_name, mac4_schedule(pad_name, 4, make_call))


def _conv_rows4(op: Operator, q: QuantConv, out_hw: tuple[int, int], y_name: str) -> KernelDef:
    """An int8 convolution with one input channel and four taps per kernel row (e.g. the
    first layer of KWS): each kernel row of a window is one input word (four bytes, any
    alignment), dotted with four output channels at once (utvm_mac4_word_s8). In a border
    window the word is completed with the input zero point. Weights reordered (same bytes):
    per block of four channels and kernel row, one word per channel."""
    X, wdata, zx, args, rq, zy, lo, hi = q.X, q.wdata, q.zx, q.args, q.rq, q.zy, q.lo, q.hi
    n, h, wd, _ = (int(v) for v in X.shape)
    cout, kh, kw, _ = wdata.shape
    oh, ow = out_hw
    sh, sw = op.attrs["strides"]
    dh, _ = op.attrs["dilation"]
    top, left, _, _ = op.attrs["padding"]
    blocks = cout // CHANNEL_BLOCK
    reordered = np.ascontiguousarray(wdata.reshape(blocks, CHANNEL_BLOCK, kh, kw).transpose(0, 2, 1, 3))
    wide = wide_weights(op)  # utvm_mac4w_word(_at)_s8: per kernel row 8 widened words
    if wide:
        W8 = te.placeholder((cout * kh * kw // 2,), I32, name="w")
        args = [args[0], KernelArg(W8, constant=widen_words(reordered), role="w"), *args[2:]]
    else:
        W8 = te.placeholder((cout * kh * kw,), "int8", name="w")
        args = [args[0], KernelArg(W8, constant=reordered.reshape(-1).astype(np.int8), role="w"), *args[2:]]
    P, pad_name = pad(X, op.attrs["padding"], imm(zx, "int8"))
    ry = te.reduce_axis((0, kh), "ry")
    rx = te.reduce_axis((0, kw), "rx")
    row_words = CHANNEL_BLOCK * kw

    def acc_f(bb, i, j, o):  # type: ignore[no-untyped-def]
        widx = ((o // CHANNEL_BLOCK) * kh + ry) * row_words + (o % CHANNEL_BLOCK) * kw + rx
        if wide:  # byte t of a row word: int16 half (t // 2) of widened word 2 * word + t % 2
            half = W8[(widx // 4) * 2 + rx % 2] >> ((rx % 4) // 2 * 16).astype(I32)
            weight = (half << imm(16)) >> imm(16)
        else:
            weight = W8[widx].astype(I32)
        return te.sum(P[bb, i * sh + ry * dh, j * sw + rx, 0].astype(I32) * weight, axis=[ry, rx])

    acc = te.compute((n, oh, ow, cout), acc_f, name="acc")
    out = te.compute((n, oh, ow, cout), lambda bb, i, j, o: rq.output_s8(acc[bb, i, j, o], o, zy, lo, hi), name="out")
    window = (kh, kw, sh, sw, dh, 1, top, left, h, wd)
    sides = pad_sides(window, out_hw)
    zword = packed_int8(zx)
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
                w_addr = tirx.address_of(params["w"][(oo * kh + r) * row_words // (2 if wide else 1)])
                if not checked:
                    at = tirx.address_of(x[bb, ih, iw, 0])
                    helper = "utvm_mac4w_word_at_s8" if wide else "utvm_mac4_word_at_s8"
                    calls.append(tirx.Evaluate(tirx.call_extern(I32, helper, acc_addr, at, w_addr)))
                    continue
                base = tirx.min(tirx.max(iw, imm(0)), imm(wd - kw)) if sides[2] or sides[3] else iw
                word = tirx.call_extern(I32, "utvm_ldw_s8", tirx.address_of(x[bb, ih, base, 0]))
                if sides[2] or sides[3]:
                    # bytes left of column 0 or right of the last column: the zero point
                    sl = (tirx.max(imm(0) - iw, imm(0)) * 8).astype(u32)
                    sr = (tirx.max(iw - (wd - kw), imm(0)) * 8).astype(u32)
                    ones = tirx.const(0xFFFFFFFF, u32)
                    keep = (ones << sl) >> sr
                    shifted = (word.astype(u32) << sl) >> sr
                    word = (shifted | (tirx.const(zword & 0xFFFFFFFF, u32) & ~keep)).astype(I32)
                conds = window_conds(ih, imm(0), h, wd, (sides[0], sides[1], False, False))
                if conds:
                    word = tirx.if_then_else(tirx.all(*conds), word, imm(zword))
                helper = "utvm_mac4w_word_s8" if wide else "utvm_mac4_word_s8"
                calls.append(tirx.Evaluate(tirx.call_extern(I32, helper, acc_addr, word, w_addr)))
            return tirx.SeqStmt(calls) if len(calls) > 1 else calls[0]

        return interior_or_border(i, j, window, sides, rows)

    return KernelDef(args, out, y_name, mac4_schedule(pad_name, 4, make_call, inner_axes=2))


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


def _conv_rows_flat(op: Operator, q: QuantConv, out_hw: tuple[int, int], y_name: str) -> KernelDef:
    """An int8 convolution whose input channels do not fill words (e.g. the three of an RGB
    image): the kw * cin bytes of a kernel row are contiguous in the input (NHWC, no dilation
    along the width), a flat dot product with the row's weights. Per output pixel and block
    of four output channels, each kernel row takes one utvm_mac4_u_s8 call for its whole words
    (any alignment) and one utvm_mac4_lane_s8 per remaining byte. A window that crosses the
    border takes the rows that do byte by byte, the input zero point in the padding."""
    X, wdata, zx, args, rq, zy, lo, hi = q.X, q.wdata, q.zx, q.args, q.rq, q.zy, q.lo, q.hi
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
    P, _ = pad(X, op.attrs["padding"], imm(zx, "int8"))
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
    sides = pad_sides(window, out_hw)

    def build(bufs: dict[str, tirx.Var]) -> tuple[tirx.Stmt, list[tirx.Var]]:
        x8, w8, yb = bufs["x"], bufs["w"], bufs["out"]
        acc4 = tirx.decl_buffer((CHANNEL_BLOCK,), I32, "acc")
        acc_addr = tirx.address_of(acc4[0])

        def pixel(bb: tirx.PrimExpr, i: tirx.PrimExpr, j: tirx.PrimExpr) -> tirx.Stmt:
            iw = j * sw - left

            def channel_blocks(checked: bool) -> tirx.Stmt:
                def block(oo: tirx.Var) -> tirx.Stmt:
                    o0 = oo * CHANNEL_BLOCK
                    stmts: list[tirx.Stmt] = [tirx.BufferStore(acc4, imm(0), [k]) for k in range(CHANNEL_BLOCK)]
                    for r in range(kh):
                        ih = i * sh + r * dh - top
                        fast: list[tirx.Stmt] = []
                        if nwords:
                            fast.append(tirx.Evaluate(tirx.call_extern(
                                I32, "utvm_mac4_u_s8", acc_addr, tirx.address_of(x8[bb, ih, iw, 0]),
                                tirx.address_of(w8[_flat_row_index(o0, r, 0, kh, length)]), imm(nwords))))
                        for p in range(4 * nwords, length):
                            xv = x8[bb, ih, iw + p // cin, p % cin].astype(I32)
                            fast.append(tirx.Evaluate(tirx.call_extern(
                                I32, "utvm_mac4_lane_s8", acc_addr, xv,
                                tirx.address_of(w8[_flat_row_index(o0, r, p, kh, length)]))))
                        row_conds = window_conds(ih, iw, h, wd, (sides[0], sides[1], sides[2], False))
                        row_conds += window_conds(ih, iw + kw - 1, h, wd, (False, False, False, sides[3]))
                        if not checked or not row_conds:
                            stmts += fast
                            continue
                        slow: list[tirx.Stmt] = []
                        for p in range(length):
                            conds = window_conds(ih, iw + p // cin, h, wd, sides)
                            xv = tirx.if_then_else(tirx.all(*conds), x8[bb, ih, iw + p // cin, p % cin].astype(I32),
                                                   imm(zx))
                            for k in range(CHANNEL_BLOCK):
                                wv = w8[_flat_row_index(o0 + k, r, p, kh, length)].astype(I32)
                                slow.append(tirx.BufferStore(acc4, acc4[k] + xv * wv, [k]))
                        stmts.append(tirx.IfThenElse(tirx.all(*row_conds), seq(fast), seq(slow)))
                    stmts += store_block(acc4, rq, o0, (zy, lo, hi), yb, bufs, (bb, i, j))
                    return seq(stmts)

                return loop(blocks, "oo", block)

            return interior_or_border(i, j, window, sides, channel_blocks)

        return over_pixels((n, oh, ow), pixel), [acc4]

    return KernelDef(args, out, y_name, root_schedule(build))


#: the most output pixels helium_fc takes (utvm_mve_conv42_s8 blocks 4 pixels)
FC_PIXELS = 1
#: the most output pixels helium_fc takes as one utvm_mve_fc4_s8 row each, when every pixel's
#: patch lies contiguous in the input (VALID windows one row high, or as wide as the input):
#: below conv42's blocks of 4 pixels, whose empty lanes cost the layer half or more of its
#: instructions (mps3/an547, stream1d [1,8,16] 1x7 -> 48 on 2 pixels: 12,400 conv42)
FC_PATCH_PIXELS = 3


def _fc_patches(g: Graph, op: Operator) -> list[int] | None:
    """The input offsets of the output pixels' patches when helium_fc runs the layer one
    utvm_mve_fc4_s8 row per pixel (see FC_PATCH_PIXELS), else None."""
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    _, _, wd, cin = x.shape
    _, oh, ow, _ = y.shape
    kh, kw = w.shape[1], w.shape[2]
    sh, sw = op.attrs["strides"]
    if oh * ow > FC_PATCH_PIXELS or any(op.attrs["padding"]) or tuple(op.attrs["dilation"]) != (1, 1):
        return None
    if kh != 1 and kw != wd:
        return None
    return [(oy * sh * wd + ox * sw) * cin for oy in range(oh) for ox in range(ow)]


def _helium_fc(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """A 1 x 1 filter, stride 1 (or a 1 x 1 input), at most FC_PIXELS output pixels on Helium:
    fully_connected's utvm_mve_fc4_s8 (kernels/helium.py fc4_kernel) with the pixels as rows and
    the [O, 1, 1, I] filter as its [O, I] weights, the requantization per channel as conv's; and
    at most FC_PATCH_PIXELS output pixels whose patches lie contiguous in the input (_fc_patches):
    one utvm_mve_fc4_s8 row per pixel, the [O, kh, kw, I] filter as [O, kh kw I] weights."""
    if not target.helium:
        return None
    w, y = g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    _, oh, ow, cout = y.shape
    if len(w.shape) != 4:
        return None
    pointwise = w.shape[1:3] == (1, 1) and oh * ow <= FC_PIXELS and tuple(op.attrs["padding"]) == (0, 0, 0, 0) \
        and g.tensors[op.inputs[0]].shape[1:3] == (oh, ow)
    patches = None if pointwise else _fc_patches(g, op)
    if not pointwise and patches is None:
        return None
    lay = mve.layer(g, op, (1, 2, 3))
    if lay is None:
        return None
    wdata = lay.wdata.reshape(cout, -1)
    if patches is None:
        return mve.fc4_kernel(lay.x, y, wdata, lay.params, lay.zy, lay.lo, lay.hi)
    blocks, mode = mve.fc4_blocks(wdata, lay.params)
    depth = wdata.shape[1]
    args = [KernelArg(te.placeholder(lay.x.shape, "int8", name="x"), tensor=lay.x.name),
            KernelArg(te.placeholder(blocks.shape, "int8", name="w"), constant=blocks, role="w")]

    def body(ins, outs):  # type: ignore[no-untyped-def]
        xb, wb = ins
        return seq([mve.call("utvm_mve_fc4_s8", outs[0].access_ptr("w", offset=p * cout),
                             xb.access_ptr("r", offset=off), 1, depth, cout, wb.access_ptr("r"), mode, lay.zy,
                             lay.lo, lay.hi) for p, off in enumerate(patches)])

    return mve.extern(y, args, body)


def _helium(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """Helium (Cortex-M52/M55/M85) convolutions: one utvm_mve_conv42_s8 call per layer, blocks of
    4 output pixels x 2 filter vectors (kernels_mve.h); the patches of 4 pixels gathered into
    planned scratch, pointwise layers of 16 / sub input channels read in place (sub pixels per
    16-byte row)."""
    if not target.helium:
        return None
    lay = mve.layer(g, op, (1, 2, 3))
    if lay is None:
        return None
    x, w, y = lay.x, lay.w, lay.y
    _, h, wd, cin = x.shape
    _, oh, ow, cout = y.shape
    if len(w.shape) != 4 or w.shape[0] != cout or w.shape[3] != cin:
        return None
    kh, kw = w.shape[1], w.shape[2]
    sh, sw = op.attrs["strides"]
    dh, dw = op.attrs["dilation"]
    top, left, _, _ = op.attrs["padding"]
    zx, zy, lo, hi = lay.zx, lay.zy, lay.lo, lay.hi
    plan = mve.conv42_plan((oh, ow), (kh, kw), cin, (sh, sw), (dh, dw), op.attrs["padding"])
    f = mve.conv42_filters(plan.taps(lay.wdata), plan.sub, lay.params, (zy, lo, hi))

    X = te.placeholder(x.shape, "int8", name="x")
    args = [KernelArg(X, tensor=x.name),
            KernelArg(te.placeholder(f.data.shape, "int8", name="w"), constant=f.data, role="w"),
            KernelArg(te.placeholder((plan.scratch,), "int8", name="col"), role="col", scratch=True)]

    def body(ins, outs):  # type: ignore[no-untyped-def]
        xb, wb, col = ins
        return mve.call("utvm_mve_conv42_s8", outs[0].access_ptr("w"), xb.access_ptr("r"), h, wd, cin, oh, ow,
                        kh, kw, sh, sw, dh, dw, top, left, wb.access_ptr("r"), f.nv, int(f.dead), cout, plan.sub,
                        plan.band, zx, col.access_ptr("w"), f.mode, zy, lo, hi)

    return mve.extern(y, args, body)


OPS = (
    OpDef(
        kind="conv2d",
        summary="2-D convolution",
        tflite=(SourceOp("CONV_2D", from_tflite, ("int8", "int16", "float32"),
                         "fused activation NONE/RELU/RELU6/RELU_N1_TO_1; int8 filter per-channel symmetric; "
                         "int16: zero points 0, int32/int64 bias"),),
        onnx=(SourceOp("Conv", from_onnx, ("float32",), "2-D, group 1 or depthwise, constant weights", qdq="mac"),
              SourceOp("QLinearConv", from_onnx_qlinear, ("int8",),
                       "also QDQ Conv groups; symmetric int8 weights, per-tensor or per-channel")),
        variants=(
            Variant("helium_fc", _helium_fc, "Cortex-M52/M55/M85"),
            Variant("helium", _helium, "Cortex-M52/M55/M85"),
            Variant("dsp_short", _short, "Cortex-M4/M7/M33"),
            Variant("dsp_gemm", _gemm, "Cortex-M4/M7/M33", knobs=_gemm_knobs),
            Variant("dsp_rows4", _rows4, "Cortex-M4/M7/M33", knobs=mac4_knobs),
            Variant("dsp_rows_flat", _rows_flat, "Cortex-M4/M7/M33"),
            Variant("dsp_mac4", _mac4, "Cortex-M4/M7/M33", knobs=mac4_knobs),
            Variant("helium_int16", mac16.on_helium(_mac16), "Cortex-M52/M55/M85", types=("int16",)),
            Variant("dsp_int16", mac16.on_dsp(_mac16), "Cortex-M4/M7/M33", types=("int16",), knobs=mac4_knobs),
            Variant("int16", _int16, types=("int16",)),
            Variant("generic", _generic),
        ),
        check=check,
        reference="TFLite Micro conv.cc: reference_integer_ops::ConvPerChannel (int8; int16 with int64 or int32 "
                  "accumulators), reference_ops::Conv (float32)",
        fuses_activation=True,
        macs=conv_macs,
        patch_stage="window",
        offload=(Offload("cmsis-nn", ("int8", "int16"), "conv"),),
        lean=lean_weights,
        weights=Weights(onnx_bias=NHWC),
        channels=Channels("mac", lambda g, op: tuple(g.tensors[op.inputs[1]].shape[1:3]) == (1, 1)
                          and not any(op.attrs.get("padding", (0,)))),
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "CONV_2D filter not a 4-D constant",
               "non-constant filters run in TFLM; a non-4-D one reads dims out of bounds [k/conv_common.cc:168-171]",
               "would-compute-differently", "kept: utvm packs filters at compile time"),
    Validation("check", "CONV_2D filter shape does not match the input/output channels",
               "input depth: `MatchingDim(input, 3, filter, 3)` is a `TFLITE_DCHECK`; the reference reads by the filter's depth [reference conv.h]",
               "would-compute-differently", "kept"),
    Validation("from_tflite", "CONV_2D input or filter not 4-D",
               "no rank check; reads dims->data[1..3] [k/conv_common.cc:166-171]",
               "would-compute-differently", "kept", rule=True),
)
