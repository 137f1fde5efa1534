"""FULLY_CONNECTED: y = x W^T + b over the last axis of x (W is units x depth).

Import: TFLite FULLY_CONNECTED (any input rank: the input is rows of ``depth``); ONNX Gemm
(transA=0, constant B, alpha/beta folded) and MatMul with a constant 2-D second operand (any other MatMul
is a batch_matmul).
Semantics: TFLite Micro's reference kernels (reference_integer_ops::FullyConnected, per-tensor
or per-channel; the effective scale of per-tensor layers is a float32 product as TFLite Micro
computes it), reference_ops::FullyConnected for float32.

Kernel variants, first that applies:
- helium_tiny: Cortex-M52/M55/M85, int8 layers of depth <= 32 and at most 1024 multiply-accumulates per
  row with dsp_gemm's short exact requantization: one naked assembly function generated for the
  layer (kernels/tiny.py), per group of four units four VMLADAVA and one vector requantization;
- helium: Cortex-M52/M55/M85, utvm_mve_fc4_s8;
- dsp_tiny: Cortex-M4/M7/M33, int8 layers of at most 1024 multiply-accumulates per row and depth
  <= 40 whose requantization has dsp_gemm's short exact form: one naked assembly function generated
  for the layer (kernels/tiny.py), the row's int16 pairs in registers (depth <= 16, one row) or on
  the stack;
- dsp_gemm: Cortex-M4/M7/M33, int8 with symmetric weights whose requantization has the short
  exact form: kernels_dsp.h with the batch rows as pixels of a 1 x 1 convolution (one row whose
  units leave one or two past whole blocks of four: two calls, the last units with the narrow
  kernels, kernels/dsp_split.py); knob ``weights`` as conv2d's dsp_gemm;
- dsp_mac4: units % 4 == 0 and depth % 4 == 0, one assembly MAC loop per block of 4 units;
  knob ``weights``: int8 (default) or int16 (widened ahead of time: twice the flash, fewer
  instructions);
- helium_int16 / dsp_int16: 16x8, per block of 4 units one utvm_mve_mac4_s16 / utvm_mac4_s16
  call per piece of at most 511 inputs (kernels/mac16.py); knob ``weights`` of dsp_int16 as
  dsp_mac4's (utvm_mac4w_s16);
- int16: 16x8 (TE);
- generic: any shape (weights with a zero point, float32); on DSP CPUs the knob ``weights``
  when four inputs per word apply (int16: utvm_dot4w_acc_s8 on widened weights, up to four
  units side by side).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from tvm import te, tirx

from ..errors import short_list
from ..ir import PLAIN, Graph, Operator, Quant
from ..kernels import dsp_split, mac16, tiny
from ..kernels import helium as mve
from ..kernels.dsp import Geometry, Int8Layer, gemm_kernel, int8_layer, per_tensor
from ..kernels.helium import call, extern
from ..kernels.kerneldef import KernelArg, KernelDef
from ..kernels.requant import I32, acc_bound, activation_range_int8, bias_requant, effective_scales, float_clamp, imm
from ..kernels.schedules import (
    CHANNEL_BLOCK,
    blocked_schedule,
    dot4,
    dot4w,
    dot16,
    interleave_rows,
    loop,
    mac4_schedule,
    reduction_schedule,
    root_schedule,
    seq,
    widen_words,
)
from ..kernels.target import VECTOR_LANES, Target
from .base import Channels, Offload, OpDef, OpError, SourceOp, Validation, Variant, Weights
from .batch_matmul import from_onnx
from .common import (
    abs_sums,
    bias_of,
    check_bias,
    check_mac_types,
    int64_accumulation,
    requant16,
)
from .mac_knobs import gemm_knobs, gemm_packed, gemm_wide, gemm_widen, lean_weights, mac4_knobs, wide_weights

# ---------------------------------------------------------------------------------------
# import


def from_tflite(ctx: Any, node: Any) -> None:
    o = ctx.options(node, "FullyConnectedOptions")
    if o.WeightsFormat() != 0:
        raise ctx.fail(node, "shuffled weights format is not supported")
    attrs = {"activation": ctx.activation(o.FusedActivationFunction(), node)}
    if hasattr(o, "QuantizedBiasType") and o.QuantizedBiasType() == 2:  # INT32: 16x8 accumulates in int32
        attrs["quantized_bias_type"] = "int32"
    ins = node.inputs
    inputs = [ins[0], ins[1]] + ([ins[2]] if len(ins) > 2 and ins[2] else [])
    ctx.emit(node, "fully_connected", inputs, node.outputs, attrs)


def _onnx_fc(imp: Any, x_value: str, weights: np.ndarray, bias: np.ndarray | None, out: str) -> None:
    x = imp.get(x_value, PLAIN)
    inputs = [x, imp.add_const(f"{out}_weight", weights)]
    if bias is not None:
        inputs.append(imp.add_const(f"{out}_bias", bias))
    imp.emit("fully_connected", inputs, out, PLAIN, {"activation": "none"})


def from_onnx_gemm(imp: Any, node: Any) -> None:
    attrs = imp.attrs(node)
    if int(attrs.get("transA", 0)):
        raise imp.fail("transA=1 is not supported")
    a_shape = imp.shape(node.input[0])
    if len(a_shape) != 2:
        raise imp.fail(f"expects a 2-D input, got {list(a_shape)}")
    b = imp.float_const(node.input[1], "B matrix")
    alpha, beta = float(attrs.get("alpha", 1.0)), float(attrs.get("beta", 1.0))
    w = b if int(attrs.get("transB", 0)) else b.T
    if alpha != 1.0:
        w = w * np.float32(alpha)
    units = w.shape[0]
    bias = None
    if len(node.input) > 2 and node.input[2]:
        c = imp.float_const(node.input[2], "C (bias)")
        if c.size != units and c.size != 1:
            raise imp.fail(f"bias of shape {list(c.shape)} is not supported (needs [{units}])")
        bias = np.broadcast_to(c.reshape(-1), (units,)) * np.float32(beta)
    _onnx_fc(imp, node.input[0], w, bias, node.output[0])


def from_onnx_matmul(imp: Any, node: Any) -> None:
    """MatMul by a constant 2-D matrix is a layer; any other MatMul is a batch_matmul."""
    if node.input[1] not in imp.consts or imp.consts[node.input[1]].ndim != 2:
        from_onnx(imp, node)
        return
    b = imp.float_const(node.input[1], "second MatMul operand")
    if len(imp.shape(node.input[0])) < 2:
        raise imp.fail("a 1-D first operand is not supported")
    _onnx_fc(imp, node.input[0], b.T, None, node.output[0])


def _onnx_qfc(imp: Any, node: Any, x_value: str, xq: Any, w: np.ndarray, ws: np.ndarray, wz: np.ndarray,
              bias: np.ndarray | None) -> None:
    """An int8 fully_connected from an integer ONNX operator: ``w`` is (units, depth)."""
    if w.dtype != np.int8:
        raise imp.fail(f"unsupported weight type {w.dtype} (int8 only)")
    if np.any(wz != 0):
        raise imp.fail("weights with a zero point other than 0 are not supported (quantize them symmetrically)")
    if ws.size not in (1, w.shape[0]):
        raise imp.fail(f"{ws.size} weight scales for {w.shape[0]} output units")
    wq = Quant(scale=ws, zero_point=np.zeros(ws.size, np.int32), axis=0)
    inputs = [imp.get(x_value, PLAIN), imp.add_const(f"{node.output[0]}_weight", np.ascontiguousarray(w), wq)]
    if bias is not None:
        if bias.dtype != np.int32 or bias.size != w.shape[0]:
            raise imp.fail(f"the bias must be {w.shape[0]} int32 values")
        bq = Quant(scale=(np.float64(xq.scalar()[0]) * ws.astype(np.float64)).astype(np.float32),
                   zero_point=np.zeros(ws.size, np.int32))
        inputs.append(imp.add_const(f"{node.output[0]}_bias", bias.reshape(-1), bq))
    act = imp.attrs(node).get("activation", b"none")
    imp.emit("fully_connected", inputs, node.output[0], PLAIN,
             {"activation": act.decode() if isinstance(act, bytes) else str(act)})


def _weight_quant(imp: Any, scale: str, zero_point: str) -> tuple[np.ndarray, np.ndarray]:
    ws = imp.const(scale, "weight scale").astype(np.float32).reshape(-1)
    wz = imp.const(zero_point, "weight zero point").reshape(-1) if zero_point else np.zeros(1, np.int8)
    return ws, wz


def from_onnx_qlinear_matmul(imp: Any, node: Any) -> None:
    """QLinearMatMul with a constant 2-D int8 second operand (and the MatMul groups of QDQ models)."""
    xq = imp.quantized_input(node.input[0], node.input[1], node.input[2], "input")
    b = imp.const(node.input[3], "second operand")
    if b.ndim != 2:
        raise imp.fail(f"expects a 2-D constant second operand, got {list(b.shape)}")
    ws, wz = _weight_quant(imp, node.input[4], node.input[5])
    _onnx_qfc(imp, node, node.input[0], xq, b.T, ws, wz, None)


def from_onnx_qgemm(imp: Any, node: Any) -> None:
    """com.microsoft.QGemm (and the Gemm groups of QDQ models): transA=0, alpha=1, constant int8
    B, optional int32 bias in the scale input x B, int8 output."""
    attrs = imp.attrs(node)
    if int(attrs.get("transA", 0)) or float(attrs.get("alpha", 1.0)) != 1.0:
        raise imp.fail("only transA=0 and alpha=1 are supported")
    if len(node.input) < 8 or not node.input[7]:
        raise imp.fail("a float output (no output scale) is not supported")
    xq = imp.quantized_input(node.input[0], node.input[1], node.input[2], "input")
    b = imp.const(node.input[3], "B matrix")
    if b.ndim != 2:
        raise imp.fail(f"expects a 2-D constant B, got {list(b.shape)}")
    ws, wz = _weight_quant(imp, node.input[4], node.input[5])
    bias = imp.const(node.input[6], "bias") if node.input[6] else None
    _onnx_qfc(imp, node, node.input[0], xq, b if int(attrs.get("transB", 0)) else b.T, ws, wz, bias)


def check(g: Graph, op: Operator) -> None:
    check_mac_types(g, op)
    x, w = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]]
    if w.data is None or len(w.shape) != 2:
        raise OpError(f"{op.source}: the weights must be a 2-D constant")
    if w.shape[1] == 0 or x.size % w.shape[1]:
        raise OpError(f"{op.source}: input of {x.size} elements is not a multiple of depth {w.shape[1]}")
    y = g.tensors[op.outputs[0]]
    if y.size != x.size // w.shape[1] * w.shape[0] or y.shape[-1:] != (w.shape[0],):
        raise OpError(f"{op.source}: output of shape {short_list(y.shape)} for {x.size // w.shape[1]} rows of "
                      f"{w.shape[0]} units")
    check_bias(g, op, w.shape[0])


def macs(g: Graph, op: Operator) -> int:
    return g.tensors[op.outputs[0]].size * g.tensors[op.inputs[1]].shape[1]


# ---------------------------------------------------------------------------------------
# kernels


def _int16(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """16x8: int16 input and output, int8 weights, int64 accumulation (int32 with an int32 bias)
    as TFLite Micro's FullyConnected / FullyConnectedPerChannel for int16."""
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    if x.dtype != "int16":
        return None
    assert w.quant is not None
    units, depth = w.shape
    batch = x.size // depth
    rq = requant16(g, op, units, bool(w.quant.per_channel), int64_accumulation(g, op), abs_sums(w.data, (1,)))
    X = te.placeholder((batch, depth), "int16", name="x")
    W = te.placeholder(w.shape, "int8", name="w")
    k = te.reduce_axis((0, depth), "k")
    acc = te.compute((batch, units), lambda i, o: te.sum(X[i, k].astype(rq.acc) * W[o, k].astype(rq.acc), axis=k),
                     name="acc")
    out = te.compute((batch, units), lambda i, o: rq.output(acc[i, o], o), name="out")
    args = [KernelArg(X, tensor=x.name), KernelArg(W, tensor=w.name), *rq.args]
    return KernelDef(args, out, y.name, reduction_schedule("acc", "out", None, 2))


def _mac16(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """16x8 on a DSP or Helium CPU: per batch row and block of four units one dot-product helper
    call per piece of at most mac16.SEGMENT_MAX inputs (utvm_mac4_s16: SMLAD on int16 pairs and
    weights sign-extended by SXTB16; utvm_mve_mac4_s16: VMLADAVA.S16), the sums requantized in
    TIR (the short form of TFLite's int64 requantization where it is exact)."""
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    if x.dtype != "int16" or w.data is None:
        return None
    assert w.quant is not None
    units, depth = w.shape
    batch = x.size // depth
    rq = requant16(g, op, units, bool(w.quant.per_channel), int64_accumulation(g, op), abs_sums(w.data, (1,)))
    rows = mac16.Rows.build(w.data, mac16.segments(depth), target.helium, wide=wide_weights(op))
    starts = [int(v) for v in np.cumsum([0, *rows.lengths[:-1]])]
    X = te.placeholder((batch, depth), "int16", name="x")
    args = [KernelArg(X, tensor=x.name), KernelArg(te.placeholder(rows.data.shape, "int8", name="w"),
                                                   constant=rows.data, role="w"), *rq.args]

    def build(bufs: dict[str, tirx.Var]) -> tuple[tirx.Stmt, list[tirx.Buffer]]:
        xb, wb, yb = bufs["x"], bufs["w"], bufs["out"]
        acc = mac16.Acc16(rq)

        def row(i: tirx.PrimExpr) -> tirx.Stmt:
            def block(oo: tirx.PrimExpr) -> tirx.Stmt:
                inputs = [(s, tirx.address_of(xb[i, k]), None) for s, k in enumerate(starts)]
                stmts = acc.sums(rows, wb, oo, units, bufs, inputs)
                return seq(stmts + acc.store(oo * mac16.BLOCK, units, bufs,
                                             lambda o, v: tirx.BufferStore(yb, v, [i, o])))

            return mac16.over_blocks(units, block)

        return loop(batch, "i", row), acc.buffers

    return KernelDef(args, mac16.signature((batch, units), X), y.name, root_schedule(build))


def _geometry(g: Graph, op: Operator) -> Geometry:
    """The batch rows as pixels of a 1 x 1 convolution."""
    x, w = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]]
    units, depth = w.shape
    batch = x.size // depth
    return Geometry(1, 1, batch, depth, 1, batch, units)


def _gemm(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """kernels_dsp.h with the batch rows as pixels of a 1 x 1 convolution."""
    x, w = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]]
    if not (target.dsp and x.dtype == "int8" and w.quant is not None):
        return None
    geo = _geometry(g, op)
    if dsp_split.applies(geo):
        return dsp_split.split_kernel(g, op, geo, gemm_wide(g, op), bool(w.quant.per_channel), gemm_widen(op),
                                      gemm_packed(op))
    return gemm_kernel(g, op, geo, gemm_wide(g, op), bool(w.quant.per_channel), gemm_widen(op), gemm_packed(op))


def _gemm_knobs(g: Graph, op: Operator, target: Target) -> dict[str, tuple[Any, ...]]:
    return gemm_knobs(g, op, _geometry(g, op))


def _tiny_kernel(g: Graph, op: Operator, fits: bool,
                 build: Callable[[int, Int8Layer], tuple[np.ndarray, str, str]]) -> KernelDef | None:
    """A layer's own function (kernels/tiny.py): ``build(batch, wmat, layer)`` returns the stream,
    the function's name and its C source; None when the shape does not ``fit`` or the layer is
    not int8 with the short exact requantization."""
    x, w = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]]
    if not fits or w.quant is None:
        return None
    found = int8_layer(g, op, bool(w.quant.per_channel))
    if found is None:
        return None
    data, name, source = build(x.size // w.shape[1], found)
    args = [KernelArg(te.placeholder((x.size // w.shape[1], w.shape[1]), "int8", name="x"), tensor=x.name),
            KernelArg(te.placeholder((data.size,), I32, name="w"), constant=data, role="w")]

    def body(ins, outs):  # type: ignore[no-untyped-def]
        return call(name, outs[0].access_ptr("w"), ins[0].access_ptr("r"), ins[1].access_ptr("r"))

    kdef = extern(g.tensors[op.outputs[0]], args, body)
    kdef.source = source
    return kdef


def _fc_shape(g: Graph, op: Operator) -> tuple[int, int, int]:
    """depth, units, batch rows."""
    units, depth = g.tensors[op.inputs[1]].shape
    return depth, units, g.tensors[op.inputs[0]].size // depth


def _dsp_tiny(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """A small int8 layer on a DSP CPU: one naked assembly function generated for it
    (kernels/tiny.py), the rows' pairs in registers, the weights and constants read by LDM."""
    def build(batch: int, found: Int8Layer) -> tuple[np.ndarray, str, str]:
        layer = tiny.TinyFc(batch, *found.wmat.shape[::-1], tuple(int(e) for e in found.rq.rights), found.lo, found.hi)
        name = tiny.function_name("utvm_dsp", layer.assembly())
        return tiny.stream(found.wmat, found.rq, found.zy, found.lo), name, tiny.dsp_source(layer, name)

    return _tiny_kernel(g, op, target.dsp and tiny.applies(*_fc_shape(g, op)), build)


def _helium_tiny(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """A small int8 layer (depth <= 32) on Helium: one naked assembly function generated for it
    (kernels/tiny.py), per group of four channels four VMLADAVA and one vector requantization."""
    def build(batch: int, found: Int8Layer) -> tuple[np.ndarray, str, str]:
        uniform = per_tensor(found.rq)
        layer = tiny.TinyMve(batch, *found.wmat.shape[::-1], found.zy, found.lo, found.hi, uniform)
        name = tiny.function_name("utvm_mve", layer.assembly())
        return tiny.mve_stream(found.wmat, found.rq, uniform), name, tiny.mve_source(layer, name)

    depth, units, _ = _fc_shape(g, op)
    return _tiny_kernel(g, op, target.helium and tiny.mve_applies(depth, units), build)


def _mac4_applies(g: Graph, op: Operator, target: Target) -> bool:
    """int8 on a DSP CPU, symmetric weights, depth % 4 == 0, units % 4 == 0."""
    x, w = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]]
    return (target.dsp and x.dtype == "int8" and w.quant is not None and int(w.quant.zero_point.reshape(-1)[0]) == 0
            and w.shape[1] % 4 == 0 and w.shape[0] % CHANNEL_BLOCK == 0)


def _mac4(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """utvm_mac4_s8 per block of four units over weights reordered for it (see conv2d's dsp_mac4)."""
    return _kernel(g, op, target) if _mac4_applies(g, op, target) else None


def _generic_knobs(g: Graph, op: Operator, target: Target) -> dict[str, tuple[Any, ...]]:
    """Widened weights (see mac_knobs.mac4_knobs) where generic runs four lanes per word on a DSP
    CPU without the dsp_mac4 blocks (units % 4 != 0)."""
    x, w = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]]
    four_lanes = (target.dsp and not target.helium and x.dtype == "int8" and w.quant is not None
                  and not np.any(w.quant.zero_point) and w.shape[1] % 4 == 0)
    return mac4_knobs(g, op, target) if four_lanes and not _mac4_applies(g, op, target) else {}


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    """int8: four inputs per word (16 per Helium vector) when the depth allows, else bytes;
    weights with a zero point subtract it per product; float32."""
    return _kernel(g, op, target)


def _kernel(g: Graph, op: Operator, target: Target) -> KernelDef:
    x, w = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]]
    b = bias_of(g, op)
    y = g.tensors[op.outputs[0]]
    assert w.data is not None
    units, depth = w.shape
    packed = target.lanes
    batch = x.size // depth
    X = te.placeholder((batch, depth), x.dtype, name="x")
    W = te.placeholder(w.shape, w.dtype, name="w")
    args = [KernelArg(X, tensor=x.name), KernelArg(W, tensor=w.name)]
    k = te.reduce_axis((0, depth), "k")
    lanes = False  # four inputs per int32 word (int8 only)
    wide = wide_weights(op)  # utvm_mac4w_s8 on weights widened ahead of time
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
            if target.helium and depth % VECTOR_LANES == 0:
                k16 = te.reduce_axis((0, depth // VECTOR_LANES), "k")
                acc = te.compute((batch, units), lambda i, o: te.sum(dot16(X4[i, k16 * 4], W4[o, k16 * 4]),
                                                                     axis=k16), name="acc")
            elif _mac4_applies(g, op, target):
                # utvm_mac4_s8 per block of units, on reordered weights
                mac4 = True
                k4 = te.reduce_axis((0, depth // 4), "k")
                if wide:
                    W4 = te.placeholder((units // CHANNEL_BLOCK, depth // 4, CHANNEL_BLOCK, 2), I32, name="w")
                    args[1] = KernelArg(W4, constant=widen_words(interleave_rows(w.data)), role="w")
                    acc = te.compute((batch, units), lambda i, o: te.sum(dot4w(
                        X4[i, k4], W4[o // CHANNEL_BLOCK, k4, o % CHANNEL_BLOCK, 0],
                        W4[o // CHANNEL_BLOCK, k4, o % CHANNEL_BLOCK, 1]), axis=k4), name="acc")
                else:
                    W4 = te.placeholder((units // CHANNEL_BLOCK, depth // 4, CHANNEL_BLOCK), I32, name="w")
                    args[1] = KernelArg(W4, constant=interleave_rows(w.data), role="w")
                    acc = te.compute((batch, units), lambda i, o: te.sum(
                        dot4(X4[i, k4], W4[o // CHANNEL_BLOCK, k4, o % CHANNEL_BLOCK]), axis=k4), name="acc")
            elif wide:
                k4 = te.reduce_axis((0, depth // 4), "k")
                W4 = te.placeholder((units, depth // 4, 2), I32, name="w")
                args[1] = KernelArg(W4, constant=widen_words(w.data), role="w")
                acc = te.compute((batch, units), lambda i, o: te.sum(
                    dot4w(X4[i, k4], W4[o, k4, 0], W4[o, k4, 1]), axis=k4), name="acc")
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
        bound = acc_bound(wabs, bias) if zw == 0 else None
        rq = bias_requant(folded, effective_scales(x, w, y, w.quant.per_channel), units, bound, wabs == 0,
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
            out = te.compute((batch, units), lambda i, o: float_clamp(acc[i, o] + B[o], op.attrs["activation"]),
                             name="out")
        else:
            out = te.compute((batch, units), lambda i, o: float_clamp(acc[i, o], op.attrs["activation"]),
                             name="out")
    if mac4:
        def make_call(ivs: list[tirx.Var], acc_buf: tirx.Buffer, params: dict[str, tirx.Buffer]) -> tirx.PrimExpr:
            i, oo = ivs[:2]
            wbuf = params["w"]
            return tirx.call_extern(I32, "utvm_mac4w_s8" if wide else "utvm_mac4_s8",
                                    tirx.address_of(acc_buf[i, oo * CHANNEL_BLOCK]),
                                    tirx.address_of(params["x"][i, 0]),
                                    tirx.address_of(wbuf[(oo,) + (0,) * (len(wbuf.shape) - 1)]), imm(depth // 4))

        return KernelDef(args, out, y.name, mac4_schedule(None, 2, make_call))
    if lanes and wide and not mac4:
        # the units side by side, up to CHANNEL_BLOCK (each input word split once for all)
        block = max(b for b in range(1, CHANNEL_BLOCK + 1) if units % b == 0)
        return KernelDef(args, out, y.name, blocked_schedule(None, 2, units, block))
    if lanes:
        return KernelDef(args, out, y.name, blocked_schedule(None, 2, units))
    return KernelDef(args, out, y.name, reduction_schedule("acc", "out", None, 2))


def _helium(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """Helium: utvm_mve_fc4_s8, per input row blocks of 4 units (one input load per 4 units and
    16 products, the requantization constants beside the weights)."""
    if not target.helium:
        return None
    x, w = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]]
    b = bias_of(g, op)
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
    params = mve.requant_params(x, w, y, b, w.data.astype(np.int64).sum(axis=1), units, bool(w.quant.per_channel))
    if params is None:
        return None
    ys, zy = y.quant.scalar()
    return mve.fc4_kernel(x, y, w.data, params, zy, *activation_range_int8(op.attrs["activation"], ys, zy))


OPS = (
    OpDef(
        kind="fully_connected",
        summary="fully connected layer (matrix times constant weights)",
        tflite=(SourceOp("FULLY_CONNECTED", from_tflite, ("int8", "int16", "float32"),
                         "fused activation NONE/RELU/RELU6/RELU_N1_TO_1; default weights format; "
                         "int16: zero points 0, int32/int64 bias"),),
        onnx=(SourceOp("Gemm", from_onnx_gemm, ("float32",), "transA=0, constant B", qdq="mac"),
              SourceOp("MatMul", from_onnx_matmul, ("float32",), "constant 2-D second operand; otherwise a batch_matmul", qdq="mac"),
              SourceOp("QLinearMatMul", from_onnx_qlinear_matmul, ("int8",),
                       "also QDQ MatMul groups; constant symmetric int8 2-D second operand"),
              SourceOp("com.microsoft.QGemm", from_onnx_qgemm, ("int8",),
                       "also QDQ Gemm groups; transA=0, alpha=1, symmetric int8 B, int8 output")),
        variants=(
            Variant("helium_tiny", _helium_tiny, "Cortex-M52/M55/M85"),
            Variant("helium", _helium, "Cortex-M52/M55/M85"),
            Variant("dsp_tiny", _dsp_tiny, "Cortex-M4/M7/M33"),
            Variant("dsp_gemm", _gemm, "Cortex-M4/M7/M33", knobs=_gemm_knobs),
            Variant("dsp_mac4", _mac4, "Cortex-M4/M7/M33", knobs=mac4_knobs),
            Variant("helium_int16", mac16.on_helium(_mac16), "Cortex-M52/M55/M85", types=("int16",)),
            Variant("dsp_int16", mac16.on_dsp(_mac16), "Cortex-M4/M7/M33", types=("int16",), knobs=mac4_knobs),
            Variant("int16", _int16, types=("int16",)),
            Variant("generic", _generic, knobs=_generic_knobs),
        ),
        check=check,
        reference="TFLite Micro fully_connected.cc: reference_integer_ops::FullyConnected (int8), "
                  "reference_ops::FullyConnected (float32)",
        fuses_activation=True,
        macs=macs,
        offload=(Offload("cmsis-nn", ("int8",), "fully_connected"),),
        lean=lean_weights,
        weights=Weights(offset="per_tensor", onnx_bias=PLAIN),
        channels=Channels("mac"),
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "FULLY_CONNECTED weights not a 2-D constant",
               "non-constant weights run in TFLM; other ranks: the reference reads the last two dims [reference fully_connected.h]",
               "would-compute-differently", "kept: utvm packs weights at compile time"),
    Validation("check", "input size not a multiple of the depth",
               "no check; batches = output size / units, rows read past the input [reference fully_connected.h]",
               "would-compute-differently", "kept"),
    Validation("check", "output not rows x units",
               "`TFLITE_DCHECK_LE(output_depth, filter rows)` only [reference fully_connected.h]",
               "would-compute-differently", "kept"),
    Validation("from_tflite", "FULLY_CONNECTED with shuffled weights (weights_format SHUFFLED4x16INT8)",
               "not read: the weights are multiplied in their stored order [k/fully_connected.cc]",
               "neither", "kept (left: accepting would compute TFLM's product of shuffled weights; a warning at most)", rule=True),
)
