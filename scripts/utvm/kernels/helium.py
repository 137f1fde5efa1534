"""Shared pieces of the Helium (MVE: Cortex-M52, M55, M85) int8 kernels.

The Helium variants of the operators (``helium`` in conv2d, depthwise_conv2d,
fully_connected and add under utvm/ops) are TE extern operators: TIR loops over output rows
or groups of four output pixels that call the vector helpers of ``utvm/kernels_mve.h`` (each
helper does a whole inner loop with Helium instructions; plain C with the same results
elsewhere). This module has what they share: the operand checks, the requantization constants
stored as compactly as the generic kernels store them (:class:`MveRequant`); the extern
operator wrapper is ``kernels/extern.py``'s.

The arithmetic is TFLite's (bias folded with the input zero point, per-channel
MultiplyByQuantizedMultiplier, output zero point, activation clamp), bit-exact. The only
temporary buffers (e.g. the im2col patches of the convolutions not read in place) are
``scratch`` arguments that the memory planner places in the pool: no kernel allocates on the
stack or through TVMBackendAllocWorkspace.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tvm import te, tirx

from ..ir import Graph, Operator, Tensor
from . import fixedpoint as fp
from .extern import buffer, call, extern, name_root  # noqa: F401 (the Helium kernels' names)
from .kerneldef import KernelArg, KernelDef
from .requant import activation_range_int8, effective_scales
from .target import Target

I32 = "int32"
#: output pixels per utvm_mve_gemm_s8 call (one int32 vector of results per channel)
PIXELS = 4


def quant_ok(g: Graph, op: Operator) -> tuple[Tensor, Tensor, Tensor, Tensor | None] | None:
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


def operands(g: Graph, op: Operator, target: Target) -> tuple[Tensor, Tensor, Tensor, Tensor | None] | None:
    """:func:`quant_ok` of an operator on a Helium CPU, None elsewhere."""
    return quant_ok(g, op) if target.helium else None


#: mode bits of the requantization arguments (UTVM_MVE_RQ_* of kernels_mve.h)
RQ_MULT, RQ_PACKED, RQ_SHIFT8, RQ_LEFT, RQ_RIGHT = 1, 2, 4, 8, 16
#: the shifts packed in the low byte of the bias words (UTVM_MVE_RQ_SHIFT_BITS)
SHIFT_BITS = 8


@dataclass
class MveRequant:
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


def requant_params(x: Tensor, w: Tensor, y: Tensor, b: Tensor | None, wsum: np.ndarray, cout: int,
                   in_double: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Per output channel: the bias folded with the input zero point, TFLite's multiplier and
    shift (None when they do not fit the Helium kernels)."""
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
    return folded, np.broadcast_to(mults, (cout,)).copy(), np.broadcast_to(shifts, (cout,)).copy()


@dataclass
class Layer:
    """An int8 layer the Helium kernels take: its tensors, the requantization per output channel
    (folded biases, multipliers, shifts), the zero points and the activation range."""

    x: Tensor
    w: Tensor
    y: Tensor
    params: tuple[np.ndarray, np.ndarray, np.ndarray]
    zx: int
    zy: int
    lo: int
    hi: int

    @property
    def wdata(self) -> np.ndarray:
        assert self.w.data is not None
        return self.w.data


def layer(g: Graph, op: Operator, sum_axes: tuple[int, ...]) -> Layer | None:
    """The layer of a convolution operator (the filter summed over ``sum_axes`` per output
    channel), None when the Helium kernels cannot take it."""
    checked = quant_ok(g, op)
    if checked is None:
        return None
    x, w, y, b = checked
    assert w.data is not None and x.quant is not None and y.quant is not None
    cout = y.shape[-1]
    params = requant_params(x, w, y, b, w.data.astype(np.int64).sum(axis=sum_axes), cout)
    if params is None:
        return None
    _, zx = x.quant.scalar()
    ys, zy = y.quant.scalar()
    return Layer(x, w, y, params, zx, zy, *activation_range_int8(op.attrs["activation"], ys, zy))


def mve_requant(x: Tensor, w: Tensor, y: Tensor, b: Tensor | None, wsum: np.ndarray, cout: int,
                in_double: bool = True) -> MveRequant | None:
    params = requant_params(x, w, y, b, wsum, cout, in_double)
    return pack_requant(*params) if params is not None else None


def pack_requant(folded: np.ndarray, mults: np.ndarray, shifts: np.ndarray) -> MveRequant:
    """The compact form of folded biases (one per channel), multipliers and shifts (one, or one
    per channel)."""
    cout = folded.size
    mode = RQ_LEFT if np.any(shifts > 0) else 0
    if np.all(shifts <= -1):
        mode |= RQ_RIGHT
    bp = te.placeholder((cout,), I32, name="bias")
    args = [KernelArg(bp, constant=folded.astype(np.int32), role="bias")]
    if np.any(mults != mults[0]):
        mode |= RQ_MULT
        args.append(KernelArg(te.placeholder((cout,), I32, name="mult"), constant=mults.astype(np.int32),
                              role="mult"))
    if np.all(shifts == shifts[0]):
        return MveRequant(args, int(mults[0]), int(shifts[0]), mode)
    limit = 1 << (31 - SHIFT_BITS)
    if np.all(folded < limit) and np.all(folded >= -limit):
        words = (folded.astype(np.int64) << SHIFT_BITS) | (shifts & ((1 << SHIFT_BITS) - 1))
        args[0] = KernelArg(bp, constant=words.astype(np.int32), role="bias_shift")
        return MveRequant(args, int(mults[0]), 0, mode | RQ_PACKED)
    args.append(KernelArg(te.placeholder((cout,), "int8", name="shift"), constant=shifts.astype(np.int8),
                          role="shift"))
    return MveRequant(args, int(mults[0]), 0, mode | RQ_SHIFT8)


#: mode bits of utvm_mve_conv42_s8 (UTVM_MVE_C42_*): every shift of the records a right shift;
#: records of 8 bytes a channel (bias << 8 | shift, multiplier; offsets implicit); the last step
#: of each filter vector k % 16 bytes (rounded up to even), loaded under a predicate
C42_RIGHT, C42_COMPACT, C42_TAIL = 1, 2, 4
#: the folded biases of compact records: 24 bits (the shift's byte below them); whole steps at most
#: (the assembly's step loop and offsets share a counter: utvm_mve_c42_fast)
C42_BIAS_LIMIT, C42_COMPACT_STEPS = 1 << 23, 14


@dataclass
class Conv42Filters:
    """The constant of utvm_mve_conv42_s8 (filter vectors, records, template) and its arguments."""

    data: np.ndarray
    nv: int
    dead: bool
    mode: int


def conv42_filters(wdata: np.ndarray, sub: int, params: tuple[np.ndarray, np.ndarray, np.ndarray],
                   out_range: tuple[int, int, int]) -> Conv42Filters:
    """Filters (cout x k) and requantization (folded biases, multipliers, shifts per channel) of
    utvm_mve_conv42_s8 as one byte array (see kernels/conv_mve.h): ``sub`` vectors per output channel
    whose weights are not all zero (sub > 1 only for k = 16 / sub: vector j holds the weights in
    lanes [j * k, j * k + k)), in 16-byte steps, two at a time with their steps interleaved, the
    last step of k > 16 not a multiple of 16 only its t = k % 16 bytes (rounded up to even) of
    each vector (C42_TAIL), each pair followed by its record: biases, multipliers, then shift |
    output offset j * cout + o << 8; or (C42_COMPACT: sub 1, every channel live, cout even,
    biases within 24 bits, at most 14 whole steps) bias << 8 | shift, then multipliers; then,
    when some channel's weights are all zero, the template of an output pixel (those channels'
    constant outputs).
    ``out_range``: zy, lo, hi."""
    folded, mults, shifts = params
    zy, lo, hi = out_range
    cout, k = wdata.shape
    steps = -(-k // 16)
    tail = ((k % 16) + 1) & ~1 if steps > 1 and k % 16 else 0
    live = np.flatnonzero(np.any(wdata != 0, axis=1))
    owner = np.repeat(live, sub)
    lane = np.tile(np.arange(sub), live.size)
    if owner.size % 2:
        owner, lane = np.append(owner, owner[-1]), np.append(lane, lane[-1])
    vecs = np.zeros((owner.size, steps * 16), np.int8)
    for v, (o, j) in enumerate(zip(owner, lane)):
        vecs[v, j * k:j * k + k] = wdata[o]
    npairs = owner.size // 2
    full = steps - 1 if tail else steps
    compact = (sub == 1 and live.size == cout and cout % 2 == 0 and full <= C42_COMPACT_STEPS
               and bool(np.all(folded >= -C42_BIAS_LIMIT)) and bool(np.all(folded < C42_BIAS_LIMIT)))
    if compact:
        rec = np.stack([(folded[owner] << 8) | (shifts[owner] & 0xFF), mults[owner]])
    else:
        packed = (shifts[owner] & 0xFF) | ((lane * cout + owner) << 8)  # the shift's byte and the offset
        rec = np.stack([folded[owner], mults[owner], packed])  # word, vector
    words = rec.shape[0]
    rec = rec.reshape(words, npairs, 2).transpose(1, 0, 2).reshape(npairs, 2 * words)
    rec = rec.astype(np.int32).view(np.int8)
    pairs = vecs.reshape(npairs, 2, steps, 16)
    body = pairs[:, :, :full].transpose(0, 2, 1, 3).reshape(npairs, full * 32)
    parts_pair = [body]
    if tail:
        parts_pair.append(pairs[:, :, full, :tail].reshape(npairs, 2 * tail))
    parts = [np.concatenate([*parts_pair, rec], axis=1).reshape(-1)]
    dead = live.size < cout
    if dead:
        const = fp.np_multiply_by_quantized_multiplier(folded, mults, shifts) + zy
        parts.append(np.clip(const, lo, hi).astype(np.int8))
    mode = (C42_RIGHT if np.all(shifts[live] <= -1) else 0) | (C42_COMPACT if compact else 0) | (C42_TAIL if tail else 0)
    return Conv42Filters(np.ascontiguousarray(np.concatenate(parts)), int(owner.size), dead, mode)


#: utvm_mve_dwg_s8: pixels per unit, bytes per channel record
DWG_UNIT, DWG_RECORD = 12, 32


@dataclass(frozen=True)
class DwgPlan:
    """How utvm_mve_dwg_s8 runs a 3x3 depthwise layer: lines along output columns (vertical) or
    rows, `lines` lines per pass, cb channels per tile; the scratch it needs (tile and table) and
    an estimate of its instructions."""

    vertical: bool
    lines: int
    cb: int
    scratch: int
    cost: float
    #: output pixels per gather (3 at stride 1 along lines of 3 or more, else 2)
    share: int = 3

    @property
    def name(self) -> str:
        """The plan as a tuning knob value, e.g. "rows3x8": lines along output rows, 3 per pass, 8
        channels per tile."""
        return f"{'cols' if self.vertical else 'rows'}{self.lines}x{self.cb}"


def dwg_plan(out_hw: tuple[int, int], c: int, strides: tuple[int, int], vertical: bool, lines: int,
             cb: int) -> DwgPlan | None:
    """The geometry of utvm_mve_dwg_geo (kernels_mve.h), None when the gathers cannot reach the
    taps ((4 * bw + 2) * cb > 255), with an estimate of its instructions: the tiles (about 2.5
    instructions per position and channel block, 1.5 for 8 contiguous channels), per unit of
    12 pixels 54 (3 pixels per gather) or 66, a setup per pass and channel."""
    oh, ow = out_hw
    length, nlines = (oh, ow) if vertical else (ow, oh)
    sa, sc = (strides[0], strides[1]) if vertical else (strides[1], strides[0])
    bw = (lines - 1) * sc + 3
    if c % cb or (4 * bw + 2) * cb > 255 or lines > nlines:
        return None
    share = 3 if sa == 1 and length >= 3 else 2
    la = (length - 1) * sa + 5
    units = -(-lines * -(-length // share) * share // DWG_UNIT)
    passes = -(-nlines // lines)
    piece = 1.5 if cb == c == 8 and not vertical else 2.5
    cost = passes * (c * (14 + (54 if share == 3 else 66) * units) + (c // cb) * (la * bw * piece + 10 * bw))
    table = units * ((DWG_UNIT // share) * 4 + 48)
    return DwgPlan(vertical, lines, cb, la * bw * cb + table, cost, share)


def dwg_plans(out_hw: tuple[int, int], c: int, strides: tuple[int, int]) -> list[DwgPlan]:
    """Every plan (both orientations with lines of at least 2 pixels, lines per pass, channel
    blocks), the least estimated cost first."""
    oh, ow = out_hw
    plans = [dwg_plan(out_hw, c, strides, vertical, lines, cb)
             for vertical in (False, True) if (oh if vertical else ow) >= 2
             for lines in range(1, 8) for cb in (8, 16)]
    return sorted((p for p in plans if p is not None), key=lambda p: p.cost)


#: utvm_mve_dwg_s8's mode bits (UTVM_MVE_DWG_*): every shift a right shift; compact records
DWG_RIGHT, DWG_COMPACT = 1, 2
#: bytes a channel of the compact records
DWG_COMPACT_BYTES = 17


def dwg_compact_fits(params: tuple[np.ndarray, np.ndarray, np.ndarray]) -> bool:
    """The folded biases fit the 24 bits of the compact records (the shift's byte below them)."""
    return bool(np.all(params[0] >= -C42_BIAS_LIMIT) and np.all(params[0] < C42_BIAS_LIMIT))


def dwg_records(wdata: np.ndarray, vertical: bool, params: tuple[np.ndarray, np.ndarray, np.ndarray],
                compact: bool = False) -> np.ndarray:
    """The per-channel records of utvm_mve_dwg_s8: 6 zero bytes, the 3x3 weights along-major
    (along tap * 3 + across tap), 7 zero bytes, the shift, a zero byte, the folded bias and the
    multiplier (int32); ``compact`` (the biases within 24 bits, dwg_compact_fits): 17 bytes, the
    9 weights, bias << 8 | the shift's byte and the multiplier (int32, unaligned), expanded by the
    kernel into its scratch."""
    folded, mults, shifts = params
    c = wdata.shape[-1]
    taps = wdata.reshape(3, 3, c)  # ry, rx, channel
    along_major = taps.transpose(0, 1, 2) if vertical else taps.transpose(1, 0, 2)
    if compact:
        words = np.stack([(folded << 8) | (shifts & 0xFF), mults], axis=1).astype(np.int32).view(np.int8)
        return np.ascontiguousarray(np.concatenate([along_major.reshape(9, c).T, words], axis=1)).reshape(-1)
    rec = np.zeros((c, DWG_RECORD), np.int8)
    rec[:, 6:15] = along_major.reshape(9, c).T
    rec[:, 22] = shifts.astype(np.int8)
    words = np.stack([folded, mults], axis=1).astype(np.int32).view(np.int8)
    rec[:, 24:32] = words
    return rec.reshape(-1)


@dataclass(frozen=True)
class Conv42Plan:
    """How utvm_mve_conv42_s8 reads a convolution's input: ``sub`` pixels per 16-byte row
    (pointwise layers of 16 / sub channels, in place), a band per output row (band 1) or column
    (band 2) with each patch contiguous, a pointwise layer's pixels in place as one line (band
    3), or (band 0) the patches of four pixels gathered; the scratch (bytes) and the filter tap
    order (transposed: kw x kh x cin for bands along rows)."""

    sub: int
    band: int
    scratch: int

    def taps(self, wdata: np.ndarray) -> np.ndarray:
        """The filters (cout, kh, kw, cin) as rows of the patch order."""
        ordered = wdata.transpose(0, 2, 1, 3) if self.band == 1 else wdata
        return np.ascontiguousarray(ordered).reshape(wdata.shape[0], -1)


def _band_fits(cin: int, across: int, stride: int, along_len: int, rows: bool) -> bool:
    """A band of this geometry is read in place (its rows 3 * stride * across * cin bytes apart at
    most: 127 for VLDRB's offsets, 508 for VLDRW's when the rows are whole words); along rows
    it is built with 8-bit scatter offsets of pieces of cin < 16 bytes (utvm_mve_band_off) or
    from whole 16-byte chunks."""
    rs = stride * across * cin
    if along_len < 4 or 3 * rs > (508 if rs % 4 == 0 and cin % 16 == 0 else 127):
        return False
    if not rows or cin % 16 == 0:
        return True
    if cin > 16:
        return False
    per = 16 // cin
    last = per * across * cin + 16 % cin - 1 if 16 % cin else (per - 1) * across * cin + cin - 1
    return last <= 255


def conv42_plan(out_hw: tuple[int, int], kernel: tuple[int, int], cin: int, strides: tuple[int, int],
                dilation: tuple[int, int], padding: tuple[int, int, int, int]) -> Conv42Plan:
    """Pointwise layers in place (16 / sub channels: sub pixels per row; 16n channels: one line of
    pixels whose rows VLDRW reaches); else bands when a band fits (copying the
    input a line reads once costs less than gathering every patch; the orientation with the
    fewer pixels recomputed by the overlapping last group of a line: lines of a multiple of 4
    pixels first); else the patches gathered."""
    (oh, ow), (kh, kw) = out_hw, kernel
    k = kh * kw * cin
    steps = -(-k // 16)
    if kh == kw == 1 and strides == (1, 1) and not any(padding):
        if 16 % cin == 0:
            return Conv42Plan(16 // cin, 0, 64)
        if oh * ow >= 4 and cin % 16 == 0 and 3 * cin <= 508:  # whole steps: nothing read past x
            return Conv42Plan(1, 3, 16)
    options = []
    if dilation[1] == 1 and _band_fits(cin, kh, strides[1], ow, True):
        options.append((-(-ow // 4) * 4 / ow, 1, ((ow - 1) * strides[1] + kw) * kh * cin + 16))
    if dilation[0] == 1 and _band_fits(cin, kw, strides[0], oh, False):
        options.append((-(-oh // 4) * 4 / oh, 2, ((oh - 1) * strides[0] + kh) * kw * cin + 16))
    if options:
        _, band, scratch = min(options)
        return Conv42Plan(1, band, scratch)
    return Conv42Plan(1, 0, 64 * steps)


#: UTVM_MVE_FC_RIGHT: every shift of the blocks is a right shift (or 0)
FC_RIGHT = 1


def fc4_blocks(wdata: np.ndarray, params: tuple[np.ndarray, np.ndarray, np.ndarray]) -> tuple[np.ndarray, int]:
    """Weights (units x depth) and requantization of utvm_mve_fc4_s8 as blocks of 4 units (the
    last zero-padded): per 16-byte step of the depth the 4 units' 16 weights (zeros past the
    depth; a depth up to 8: two units per 16 bytes, 8 each), then their folded biases,
    multipliers and shifts (int32); and the mode."""
    folded, mults, shifts = params
    units, depth = wdata.shape
    blocks = -(-units // 4)
    width = 8 if depth <= 8 else -(-depth // 16) * 16
    w = np.zeros((blocks * 4, width), np.int8)
    w[:units, :depth] = wdata
    rq = np.zeros((3, blocks * 4), np.int64)
    rq[:, :units] = np.stack([folded, mults, shifts])
    if depth <= 8:
        weights = w.reshape(blocks, -1)
    else:
        weights = w.reshape(blocks, 4, width // 16, 16).transpose(0, 2, 1, 3).reshape(blocks, -1)
    consts = rq.reshape(3, blocks, 4).transpose(1, 0, 2).astype(np.int32).reshape(blocks, -1).view(np.int8)
    mode = FC_RIGHT if np.all(shifts <= 0) else 0
    return np.ascontiguousarray(np.concatenate([weights, consts], axis=1)).reshape(-1), mode


def fc4_kernel(x: Tensor, y: Tensor, wdata: np.ndarray, params: tuple[np.ndarray, np.ndarray, np.ndarray],
               zy: int, lo: int, hi: int) -> KernelDef:
    """utvm_mve_fc4_s8 over the rows of ``x`` (``wdata``: units x depth, ``params``: the folded
    biases, multipliers and shifts per unit): fully_connected's helium, and conv2d's helium_fc
    (1 x 1 filters, the pixels as rows)."""
    units, depth = wdata.shape
    batch = x.size // depth
    blocks, mode = fc4_blocks(wdata, params)
    args = [KernelArg(te.placeholder((batch, depth), "int8", name="x"), tensor=x.name),
            KernelArg(te.placeholder(blocks.shape, "int8", name="w"), constant=blocks, role="w")]

    def body(ins, outs):  # type: ignore[no-untyped-def]
        xb, wb = ins
        return call("utvm_mve_fc4_s8", outs[0].access_ptr("w"), xb.access_ptr("r"), batch, depth, units,
                    wb.access_ptr("r"), mode, zy, lo, hi)

    return extern(y, args, body)


#: utvm_mve_dwt_s8: the largest input map (its planes: 16 x h x w bytes), the widest input row
DWT_MAX_PIXELS, DWT_MAX_WIDTH = 36, 6


@dataclass(frozen=True)
class DwtLayout:
    """The constant of utvm_mve_dwt_s8 (per group of 4 channels: filters, biases per class,
    multipliers, shifts) and its arguments: the row and column classes (4 bits per output row /
    column), the number of column classes and of classes; the scratch (planes)."""

    data: np.ndarray
    rcls: int
    ccls: int
    ncc: int
    ns: int
    scratch: int
    pad: bool  # planes padded with the zero point: one class


def _dwt_spans(n_out: int, stride: int, pad: int, n_in: int) -> tuple[list[int], list[tuple[int, int]]] | None:
    """Per output row (or column) the index of its span: the taps [first, end) of its window
    inside the input, the spans in the order they first occur (None when a window has no tap
    inside)."""
    spans: list[tuple[int, int]] = []
    index = []
    for i in range(n_out):
        v0 = i * stride - pad
        span = (max(0, -v0), min(3, n_in - v0))
        if span[0] >= span[1]:
            return None
        if span not in spans:
            spans.append(span)
        index.append(spans.index(span))
    return index, spans


def _nibbles(values: list[int]) -> int:
    """values (each < 16) 4 bits each, the first lowest, as a signed int32."""
    word = sum(v << (4 * i) for i, v in enumerate(values))
    return word - (1 << 32) if word >= 1 << 31 else word


#: utvm_mve_dwt_s8: the most classes (a group's constants within VLDRW's reach from its middle)
DWT_MAX_CLASSES = 12


def dwt_layout(wdata: np.ndarray, in_hw: tuple[int, int], out_hw: tuple[int, int], strides: tuple[int, int],
               pads: tuple[int, int], zx: int, params: tuple[np.ndarray, np.ndarray, np.ndarray]) -> DwtLayout | None:
    """utvm_mve_dwt_s8's constant for 3x3 weights (1, 3, 3, c) (see kernels_mve.h), None when the
    layer is not tiny (more than DWT_MAX_PIXELS inputs, rows wider than DWT_MAX_WIDTH, more than
    7 output rows or columns, more than DWT_MAX_CLASSES classes) or a class bias leaves int32."""
    (h, w), (oh, ow) = in_hw, out_hw
    if h * w > DWT_MAX_PIXELS or w > DWT_MAX_WIDTH or oh > 7 or ow > 7:
        return None
    pad = _dwt_padded(in_hw, out_hw, strides, pads)
    rows = ([0] * oh, [(0, 3)]) if pad else _dwt_spans(oh, strides[0], pads[0], h)
    cols = ([0] * ow, [(0, 3)]) if pad else _dwt_spans(ow, strides[1], pads[1], w)
    if rows is None or cols is None or len(rows[1]) * len(cols[1]) > DWT_MAX_CLASSES:
        return None
    pitch = w + 1 if pad else w
    folded, mults, shifts = params
    c = wdata.shape[-1]
    cp = -(-c // 4) * 4
    taps = np.zeros((3, 3, cp), np.int64)
    taps[:, :, :c] = wdata.reshape(3, 3, c)
    filters, biases = [], []
    for r0, r1 in rows[1]:
        for c0, c1 in cols[1]:
            vec = np.zeros((16, cp), np.int64)
            for dy in range(r0, r1):
                vec[(dy - r0) * pitch: (dy - r0) * pitch + c1 - c0] = taps[dy, c0:c1]
            filters.append(vec)
            # the zero point was folded over all 9 taps: add back the taps outside the input
            outside = taps.sum(axis=(0, 1)) - taps[r0:r1, c0:c1].sum(axis=(0, 1))
            biases.append(np.pad(folded, (0, cp - c)) + zx * outside)
    bias = np.stack(biases)  # class, channel
    if np.any(bias > fp.INT32_MAX) or np.any(bias < fp.INT32_MIN):
        return None
    ns, groups = len(filters), cp // 4
    words = np.zeros((2, cp), np.int64)
    words[0, :c], words[1, :c] = mults, shifts
    data = np.concatenate([
        np.stack(filters).reshape(ns, 16, groups, 4).transpose(2, 0, 3, 1).reshape(groups, -1).astype(np.int8),
        np.ascontiguousarray(bias.reshape(ns, groups, 4).transpose(1, 0, 2)).astype(np.int32).view(np.int8)
        .reshape(groups, -1),
        np.ascontiguousarray(words.reshape(2, groups, 4).transpose(1, 0, 2)).astype(np.int32).view(np.int8)
        .reshape(groups, -1)], axis=1)
    stride = (h + 2) * (w + 1) + 1 if pad else h * w
    return DwtLayout(np.ascontiguousarray(data.reshape(-1)), _nibbles(rows[0]), _nibbles(cols[0]), len(cols[1]), ns,
                     16 * stride + 16, pad)


def _dwt_padded(in_hw: tuple[int, int], out_hw: tuple[int, int], strides: tuple[int, int],
                pads: tuple[int, int]) -> bool:
    """utvm_mve_dwt_s8 takes planes padded with the zero point (one class, no filters per border):
    every window within one position of the input on each side, rows of at most 5 values (the
    window's 3 rows of w + 1 in 16 lanes) and at least 2 (its 3 columns apart), planes of at most 36
    bytes."""
    (h, w), (oh, ow) = in_hw, out_hw
    return (2 <= w <= 5 and (h + 2) * (w + 1) + 1 <= DWT_MAX_PIXELS and max(pads) <= 1
            and (oh - 1) * strides[0] - pads[0] + 2 <= h and (ow - 1) * strides[1] - pads[1] + 2 <= w)
