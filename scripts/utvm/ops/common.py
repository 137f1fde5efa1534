"""Code shared by several operator modules: the int8 layer parameters of the MAC operators,
their type checks, and the shape of operators' attributes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from tvm import te

from ..errors import short_list
from ..ir import Graph, Operator, Tensor
from ..kernels import fixedpoint as fp
from ..kernels.kerneldef import KernelArg, KernelDef
from ..kernels.mac16 import mulhr, short_int64_requant
from ..kernels.requant import (
    Requant,
    acc_bound,
    activation_range_int8,
    activation_range_quantized,
    bias_requant,
    effective_scales,
    sat_s16,
)
from ..kernels.target import Target
from .base import OpError, Validation

#: the element types a byte copy (variables, ASSIGN) takes
ANY_TYPE = ("int8", "int16", "int32", "float32")


def flat_copy(g: Graph, op: Operator, target: Target) -> KernelDef:
    """A copy element by element, both tensors seen flat (of the same size)."""
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    X = te.placeholder((x.size,), x.dtype, name="x")
    return KernelDef([KernelArg(X, tensor=x.name)], te.compute((y.size,), lambda i: X[i], name="out"), y.name)


def io(g: Graph, op: Operator) -> tuple[Tensor, Tensor]:
    """The first input and the output of ``op``."""
    return g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]


def bias_of(g: Graph, op: Operator, index: int = 2) -> Tensor | None:
    """The optional bias input (omitted inputs are absent or named "")."""
    return g.tensors[op.inputs[index]] if len(op.inputs) > index and op.inputs[index] else None


def abs_sums(w: np.ndarray | None, axes: tuple[int, ...]) -> np.ndarray | None:
    """Sum of |w| over ``axes`` (per output channel), None without constant weights."""
    return None if w is None else np.abs(w.astype(np.int64)).sum(axis=axes)


def check_io_types(g: Graph, op: Operator, types: tuple[str, ...] = ("int8", "float32")) -> None:
    """The first input and the output have the same type, one of ``types``; quantized types carry
    quantization parameters."""
    x, y = io(g, op)
    if x.dtype not in types or y.dtype != x.dtype:
        raise OpError(f"{op.source}: unsupported data types {x.dtype} -> {y.dtype}")
    if x.dtype in ("int8", "int16") and (x.quant is None or y.quant is None):
        raise OpError(f"{op.source}: {x.dtype} tensors without quantization parameters")


def check_mac_types(g: Graph, op: Operator) -> None:
    """Types of a conv / depthwise / fully connected layer: int8 or float32 activations with
    weights of the same type, or int16 activations with int8 weights (16x8); refuse
    dynamic-range (hybrid) models."""
    x, w = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]]
    if x.dtype == "int16":
        check_16x8(g, op)
        return
    if x.dtype == "float32" and w.dtype == "int8":
        raise OpError(
            f"{op.source}: hybrid (dynamic-range) quantized model: float32 activations and int8 weights;"
            " TFLite Micro does not run these either. Quantize the model fully to int8 (with a"
            " representative dataset) or keep it float32")
    if x.dtype == "int8" and (x.quant is None or w.quant is None):
        raise OpError(f"{op.source}: int8 tensors without quantization parameters")
    if x.dtype not in ("int8", "float32") or w.dtype != x.dtype:
        raise OpError(f"{op.source}: unsupported data types {x.dtype} input, {w.dtype} weights")


#: the largest stride or dilation accepted
MAX_STEP = 1 << 16


def check_window(g: Graph, op: Operator, kh: int, kw: int) -> None:
    """A sliding window over a 4-D NHWC input (convolutions, pools), as TFLite Micro's Prepare
    functions check it: strides and dilations of at least 1, padding not negative and smaller
    than the window, and the output's batch, height and width those the window gives (rounded
    down, or up as ONNX's ceil_mode does)."""
    x, y = io(g, op)
    if len(x.shape) != 4 or len(y.shape) != 4:
        raise OpError(f"{op.source}: needs a 4-D input and output, not {short_list(x.shape)} -> {short_list(y.shape)}")
    steps = (*op.attrs["strides"], *op.attrs.get("dilation", (1, 1)))
    if any(not 1 <= int(v) <= MAX_STEP for v in steps):
        raise OpError(f"{op.source}: strides {tuple(op.attrs['strides'])} and dilations "
                      f"{tuple(op.attrs.get('dilation', (1, 1)))} must be from 1 to {MAX_STEP}")
    top, left, bottom, right = (int(v) for v in op.attrs["padding"])
    (sh, sw), (dh, dw) = op.attrs["strides"], op.attrs.get("dilation", (1, 1))
    if y.shape[0] != x.shape[0]:
        raise OpError(f"{op.source}: batch {y.shape[0]} out, {x.shape[0]} in")
    for what, size, k, stride, dil, p0, p1, out in (("height", x.shape[1], kh, sh, dh, top, bottom, y.shape[1]),
                                                    ("width", x.shape[2], kw, sw, dw, left, right, y.shape[2])):
        eff = (k - 1) * dil + 1
        if k < 1 or min(p0, p1) < 0 or max(p0, p1) >= eff or size + p0 + p1 < eff:
            raise OpError(f"{op.source}: a window of {k} (dilation {dil}) with padding {p0}, {p1} does not fit "
                          f"the input {what} {size}")
        span = size + p0 + p1 - eff
        if out not in (span // stride + 1, -(-span // stride) + 1):
            raise OpError(f"{op.source}: output {what} {out}, the window over the input gives {span // stride + 1}")


def check_same_size(g: Graph, op: Operator) -> None:
    """The output has as many elements as the first input (elementwise kernels run flat over it)."""
    x, y = io(g, op)
    if x.size != y.size:
        raise OpError(f"{op.source}: output of shape {short_list(y.shape)} for an input of shape {short_list(x.shape)}")


def check_bias(g: Graph, op: Operator, channels: int, index: int = 2) -> None:
    """The optional bias: one value per output channel, int32 for int8 activations (int16, int32
    or int64 for int16 ones), float32 for float32 ones."""
    b = bias_of(g, op, index)
    if b is None:
        return
    x = g.tensors[op.inputs[0]]
    allowed = {"int8": ("int32",), "float32": ("float32",), "int16": ("int16", "int32", "int64")}.get(x.dtype, ())
    if b.dtype not in allowed:
        raise OpError(f"{op.source}: a {b.dtype} bias for {x.dtype} activations")
    if b.size != channels:
        raise OpError(f"{op.source}: a bias of {b.size} values for {channels} output channels")


def check_16x8(g: Graph, op: Operator) -> None:
    """int16 activations (zero points 0), int8 symmetric weights, an int16, int32 or int64 bias,
    an int16 output: what TFLite Micro's 16x8 kernels take."""
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    b = bias_of(g, op)
    if w.dtype != "int8" or y.dtype != "int16":
        raise OpError(f"{op.source}: int16 activations need int8 weights and an int16 output, "
                      f"not {w.dtype} weights, {y.dtype} output")
    if x.quant is None or w.quant is None or y.quant is None:
        raise OpError(f"{op.source}: int16 tensors without quantization parameters")
    if x.quant.scalar()[1] != 0 or y.quant.scalar()[1] != 0:
        raise OpError(f"{op.source}: int16 activations must have zero point 0")
    if np.any(w.quant.zero_point != 0):
        raise OpError(f"{op.source}: filter zero points must be 0 (symmetric int8 weights)")
    if b is not None and b.dtype not in ("int16", "int32", "int64"):
        raise OpError(f"{op.source}: unsupported bias type {b.dtype} for int16 activations")


@dataclass
class Requant16:
    """The output of a 16x8 layer: the type the sums are computed in (TFLite Micro accumulates
    in int64 unless the bias is int32; int64 sums that provably fit are computed in int32, see
    ``short``), the bias as a kernel argument, per-channel multipliers and shifts, and the int16
    activation range."""

    args: list[KernelArg]       # bias (when there is one), then multiplier and shift arrays
    acc: str                    # "int64" or "int32"
    bias: te.Tensor | None
    at: Any                     # o -> (multiplier, shift): ints, or loads of the arrays
    lo: int
    hi: int
    #: TFLite's int64 sums fit int32 and its int64 requantization is one utvm_mulhr_s32 by a
    #: multiplier with the shift folded in (kernels/mac16.short_int64_requant): the bias is then an
    #: int32 constant and ``at`` gives (folded multiplier, 0)
    short: bool = False
    #: with ``short``: the int32 biases and folded multipliers per channel
    short_arrays: tuple[np.ndarray, np.ndarray] | None = None

    def output(self, acc: Any, o: Any, add_bias: bool = True) -> Any:
        """MultiplyByQuantizedMultiplier(acc + bias[o]) (the int64 form for int64 accumulators),
        clamped to the activation range, as int16; ``add_bias`` False: ``acc`` holds the bias."""
        if self.bias is not None and add_bias:
            acc = acc + self.bias[o].astype(self.acc)
        m, s = self.at(o)
        if self.short:
            v = mulhr(acc, m)
        elif self.acc == "int64":
            v = fp.multiply_by_quantized_multiplier_int64(acc, m, s)
        else:
            v = fp.multiply_by_quantized_multiplier(acc, m, s)
        v = sat_s16(v)
        if self.hi < 32767:
            v = te.min(v, self.hi)
        if self.lo > -32768:
            v = te.max(v, self.lo)
        return v.astype("int16")


def requant16(g: Graph, op: Operator, channels: int, in_double: bool, int64_acc: bool,
              wabs: np.ndarray | None = None) -> Requant16:
    """The Requant16 of a 16x8 conv / depthwise / fully connected / transpose conv layer;
    ``wabs``: the sum of |w| per output channel (bounding the sums), for the short form."""
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    b = bias_of(g, op)
    assert x.quant and w.quant and y.quant
    pairs = [fp.quantize_multiplier(float(s)) for s in effective_scales(x, w, y, in_double)]
    mults = np.broadcast_to(np.array([m for m, _ in pairs], np.int64), (channels,))
    shifts = np.broadcast_to(np.array([s for _, s in pairs], np.int64), (channels,))
    ys, zy = y.quant.scalar()
    lo, hi = activation_range_quantized(op.attrs.get("activation", "none"), ys, zy, -32768, 32767)
    bias_data = b.data.astype(np.int64).reshape(-1) if b is not None and b.data is not None else None
    short = None
    if int64_acc and wabs is not None and (b is None or bias_data is not None):
        short = short_int64_requant(mults, shifts, wabs, bias_data if bias_data is not None
                                    else np.zeros(channels, np.int64))
    if short is not None:
        bias32, folded = short
        args: list[KernelArg] = []
        bias = None
        if b is not None:
            bias = te.placeholder((channels,), "int32", name="bias")
            args.append(KernelArg(bias, constant=bias32, role="bias"))
        margs, at = _per_channel(folded, np.zeros(channels, np.int64), channels)
        return Requant16(args + margs, "int32", bias, at, lo, hi, True, short)
    args = []
    bias = None
    if b is not None:
        bias = te.placeholder((channels,), b.dtype, name="bias")
        args.append(KernelArg(bias, tensor=b.name))
    margs, at = _per_channel(mults, shifts, channels)
    return Requant16(args + margs, "int64" if int64_acc else "int32", bias, at, lo, hi)


def _per_channel(mults: np.ndarray, shifts: np.ndarray, channels: int) -> tuple[list[KernelArg], Any]:
    """Multipliers and shifts as immediates (all channels alike) or constant arrays: (kernel
    arguments, o -> (multiplier, shift))."""
    if np.all(mults == mults[0]) and np.all(shifts == shifts[0]):
        m0, s0 = int(mults[0]), int(shifts[0])
        return [], lambda o: (m0, s0)
    M = te.placeholder((channels,), "int32", name="mult")
    S = te.placeholder((channels,), "int32", name="shift")
    args = [KernelArg(M, constant=np.ascontiguousarray(mults, dtype=np.int32), role="mult")]
    if np.all(shifts == shifts[0]):
        s0 = int(shifts[0])
        return args, lambda o: (M[o], s0)
    args.append(KernelArg(S, constant=np.ascontiguousarray(shifts, dtype=np.int32), role="shift"))
    return args, lambda o: (M[o], S[o])


def int64_accumulation(g: Graph, op: Operator) -> bool:
    """TFLite Micro's rule for 16x8 conv and fully connected layers: int32 accumulators when
    the bias is int32 (or there is none and the options say the bias type is int32), else int64."""
    b = bias_of(g, op)
    if b is not None:
        return b.dtype != "int32"
    return op.attrs.get("quantized_bias_type") != "int32"


@dataclass
class QuantConv:
    """What every int8 variant of a convolution (or depthwise convolution) starts from: the
    placeholders of input and filter, the requantization (bias folded with the input zero
    point), and the output quantization with its activation clamp."""

    X: te.Tensor
    W: te.Tensor
    args: list[KernelArg]       # x, w, then the requantization constants
    rq: Requant
    wdata: np.ndarray           # the filter as int64
    zx: int
    zy: int
    lo: int
    hi: int


def quant_conv(g: Graph, op: Operator, dsp: bool) -> QuantConv:
    """The int8 parameters of a conv2d / depthwise_conv2d; ``dsp``: the target has SMMLAR."""
    depthwise = op.kind == "depthwise_conv2d"
    x, w = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]]
    b = bias_of(g, op)
    y = g.tensors[op.outputs[0]]
    assert x.quant and w.quant and y.quant and w.data is not None
    cout = y.shape[3]
    X = te.placeholder(x.shape, x.dtype, name="x")
    W = te.placeholder(w.shape, w.dtype, name="w")
    args = [KernelArg(X, tensor=x.name), KernelArg(W, tensor=w.name)]
    _, zx = x.quant.scalar()
    ys, zy = y.quant.scalar()
    wdata = w.data.astype(np.int64)
    if np.any(w.quant.zero_point != 0):
        raise OpError(f"{op.source}: filter zero points must be 0 (symmetric int8 weights)")
    # bias' = bias - zx * sum(w): the input offset folded into the bias
    axes = (0, 1, 2) if depthwise else (1, 2, 3)
    wsum = wdata.sum(axis=axes)
    bias = (b.data.astype(np.int64) if b is not None and b.data is not None else np.zeros(cout, np.int64))
    folded = (bias - zx * wsum).astype(np.int64)
    if np.any(folded > 2**31 - 1) or np.any(folded < -(2**31)):
        raise OpError(f"{op.source}: folded bias overflows int32")
    wabs = np.abs(wdata).sum(axis=axes)
    rq = bias_requant(folded, effective_scales(x, w, y, True), cout, acc_bound(wabs, bias), wabs == 0, dsp)
    args += rq.args
    lo, hi = activation_range_int8(op.attrs["activation"], ys, zy)
    return QuantConv(X, W, args, rq, wdata, zx, zy, lo, hi)


def conv_macs(g: Graph, op: Operator) -> int:
    """MACs of a convolution: output elements x window x input channels per output."""
    w, y = g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    per_output = w.shape[1] * w.shape[2] * (w.shape[3] if op.kind == "conv2d" else 1)
    return y.size * per_output


def check_row_op(g: Graph, op: Operator, fixed: dict[str, tuple[float, int, float]], name: str) -> None:
    """An operator over the last axis (SOFTMAX, LOG_SOFTMAX, L2_NORMALIZATION): float32 or a
    type ``fixed`` names, equal shapes of at least one axis, and the output quantization TFLite
    requires for each type in ``fixed``: (scale, zero point, relative tolerance of the scale)."""
    check_io_types(g, op, ("float32", *fixed))
    x, y = io(g, op)
    if x.shape != y.shape or not x.shape:
        raise OpError(f"{op.source}: input {list(x.shape)} and output {list(y.shape)} differ")
    if x.dtype in fixed:
        assert y.quant is not None
        scale, zero_point, tolerance = fixed[x.dtype]
        ys, zy = y.quant.scalar()
        if zy != zero_point or abs(float(ys) - scale) > tolerance * scale:
            raise OpError(f"{op.source}: {x.dtype} {name} output must have scale {scale:g} and zero point {zero_point}")


def rows_kernel(g: Graph, op: Operator, build: Callable[[te.Tensor], te.Tensor]) -> KernelDef:
    """The kernel of an operator over the last axis: ``build`` maps the input seen as
    [rows, depth] to the output of that shape."""
    x, y = io(g, op)
    depth = x.shape[-1]
    X = te.placeholder((x.size // depth, depth), x.dtype, name="x")
    return KernelDef([KernelArg(X, tensor=x.name)], build(X), y.name)


#: the heading of this module's rows in docs/VALIDATION.md
VALIDATION_TITLE = "Shared checks of several operators (ops/common.py): MAC layers, windows, biases, 16x8, rows"
#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check_io_types", "input/output types outside the operator's set, or different",
               'each kernel\'s type switch, `MicroPrintf("Type %s (%d) not supported")` [k/pooling_common.cc:86, l2norm.cc:124, ...]',
               "refused-by-TFLM", "kept"),
    Validation("check_io_types", "int8/int16 tensors without quantization parameters",
               "kernels read params.scale 0: activation ranges and multipliers divide by it; pooling with NONE runs (scales 0 == 0) [k/pooling_common.cc:73]",
               "neither", "kept (left: utvm's kernels need the output quantization; see *Left*)"),
    Validation("check_mac_types", "hybrid model: float32 activations, int8 weights",
               '`TF_LITE_ENSURE_MSG(..., "Hybrid models are not supported on TFLite Micro.")` [k/conv_common.cc:159, depthwise_conv_common.cc:194, fully_connected.cc:63]',
               "refused-by-TFLM", "kept"),
    Validation("check_mac_types", "int8 layer without quantization parameters",
               "`TF_LITE_ENSURE_EQ(filter->quantization.type, kTfLiteAffineQuantization)` [k/conv_common.cc:185, depthwise_conv_common.cc:176, fully_connected_common.cc:74]",
               "refused-by-TFLM", "kept"),
    Validation("check_mac_types", "activation/weight types other than int8/int8, float32/float32 (int16/int8 goes to check_16x8)",
               'same `TF_LITE_ENSURE_MSG` / `MicroPrintf("Input type %s with filter type %s not supported")` [k/conv_common.cc:159, fully_connected.cc:63]; int4 weights: TFLM runs them, utvm has no int4',
               "refused-by-TFLM", "kept"),
    Validation("check_window", "convolution/pool input or output not 4-D",
               "no rank check; reads dims->data[1..3] (out of bounds below 4-D) [k/conv_common.cc:166-171, pooling_common.cc:36]",
               "would-compute-differently", "kept"),
    Validation("check_window", "strides or dilations below 1 or above 65536",
               "no check; below 1: ComputePaddingHeightWidth divides by the stride (SIGFPE) or gives negative sizes [kernels/padding.h]; above 65536: runs (one window)",
               "would-compute-differently", "kept: below 1 TFLM crashes; the upper bound keeps utvm's index arithmetic in int32 (see *Left*)"),
    Validation("check_window", "output batch differs from the input's",
               "MatchingDim(input, 0, output, 0) is a `TFLITE_DCHECK` (off in release): loops over the input's batches [reference conv.h]",
               "would-compute-differently", "kept"),
    Validation("check_window", "window with negative padding, padding not smaller than the window, or a window larger than the padded input",
               "padding comes from SAME/VALID (ComputePaddingHeightWidth, never negative); the reference loops over the stored output and skips taps outside the image [reference conv.h, pooling.h]",
               "would-compute-differently", "kept: utvm's kernels are sized from the window arithmetic, not from stored output sizes it does not give"),
    Validation("check_window", "stored output height/width is not what the window gives",
               "no check of the stored output size; the reference loops over it (taps outside the image skipped) [reference conv.h, pooling.h]",
               "would-compute-differently", "kept: as above"),
    Validation("check_same_size", "elementwise output of another element count than the input",
               "MatchingFlatSize is a `TFLITE_DCHECK` (off in release): reads/writes the input's count [reference ops]",
               "would-compute-differently", "kept"),
    Validation("check_bias", "bias type not the one of the activations (int8: int32; int16: int16/int32/int64; float32: float32)",
               '`MicroPrintf("Bias type %s (%d) not supported")` [k/conv.cc:85, fully_connected.cc, depthwise_conv.cc]',
               "refused-by-TFLM", "kept"),
    Validation("check_bias", "bias of another length than the output channels",
               "no length check (conv/depthwise/FC read `output_depth` bias values: out of bounds) [reference conv.h]",
               "would-compute-differently", "kept"),
    Validation("check_16x8", "int16 activations without int8 weights or an int16 output",
               "`TF_LITE_ENSURE_MSG` hybrid check / `TF_LITE_ENSURE_EQ(input->type, output->type)` [k/conv_common.cc:158-159]",
               "refused-by-TFLM", "kept"),
    Validation("check_16x8", "16x8 tensors without quantization parameters",
               "filter quantization must be affine [k/conv_common.cc:185]",
               "refused-by-TFLM", "kept"),
    Validation("check_16x8", "16x8 activations with a zero point",
               "`TF_LITE_ENSURE_EQ(input/output zero_point, 0)` for int16 [k/conv_common.cc (PopulateConvolutionQuantizationParams), fully_connected_common.cc]",
               "refused-by-TFLM", "kept"),
    Validation("check_16x8", "16x8 filter zero points not 0 (after import: only per-tensor FULLY_CONNECTED keeps them)",
               "per-tensor int16 FullyConnected uses the weights offset; `TFLITE_DCHECK(filter zero_point == 0)` in debug [k/fully_connected_common.cc:148]; convolutions never read it (set to 0 at import)",
               "would-compute-differently", "kept: utvm's 16x8 kernels have no weights offset"),
    Validation("check_16x8", "16x8 bias type other than int16/int32/int64",
               '`MicroPrintf("Bias type %s (%d) not supported")` [k/conv.cc:85]',
               "refused-by-TFLM", "kept"),
    Validation("quant_conv", "int8 convolution filter zero points not 0",
               "ConvPerChannel / DepthwiseConvPerChannel take no weights offset: TFLM never reads them [reference integer_ops/conv.h, depthwise_conv.h]",
               "neither", "relaxed (import sets them to 0, as TFLM reads them; this check is now unreachable from TFLite)"),
    Validation("quant_conv", "input offset folded into the bias overflows int32",
               "the reference accumulates in int32 without a check (wraps, UB) [reference integer_ops/conv.h]",
               "would-compute-differently", "kept: utvm folds the offset into the bias ahead of time"),
    Validation("check_row_op", "row operator (SOFTMAX, LOG_SOFTMAX) output shape differs",
               "`TF_LITE_ENSURE(HaveSameShapes(input, output))` [k/log_softmax.cc:59]; softmax loops over the input shape [k/softmax_common.cc]",
               "refused-by-TFLM", "kept"),
    Validation("check_row_op", "int8/int16 SOFTMAX or LOG_SOFTMAX output quantization other than the fixed one",
               "int8 SOFTMAX: zero point -128 and `scale == 1/256` exactly; int16: zero point 0, scale 1/32768 within 1e-3 of it; LOG_SOFTMAX: 16/256, 127 [k/softmax_common.cc:91-104, log_softmax.cc:72-73]",
               "refused-by-TFLM", "kept (utvm accepts int8 scales within 1e-8 of 1/256: *Missing*)"),
)
