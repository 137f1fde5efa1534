"""Shared pieces of the DSP (Cortex-M4/M7/M33) GEMM kernels of ``utvm/kernels_dsp.h``.

A convolution or fully connected layer there is rows of K int8 inputs (a pixel, an im2col
patch, a batch row) times the weights of ``cout`` output channels, requantized per channel.
The weights, the folded biases and the requantization constants travel as one int32 stream
(see kernels_dsp.h for the layout): blocks of four output channels, the weights widened to
int16 and doubled (so that the accumulator is twice TFLite's and SMMLAR gives
SaturatingRoundingDoublingHighMul without a shift), the rounding offset and the output zero
point folded into one constant per channel.

Exact with TFLite's arithmetic under conditions checked at compile time (:func:`gemm_requant`):
the accumulator bound keeps twice the accumulator inside int32, every shift is a right shift
of 1 to MAX_RIGHT bits, every multiplier is normalized (QuantizeMultiplier's [2**30, 2**31)).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tvm import te

from ..ir import Graph, Operator, Tensor
from .helium import call, extern
from .kerneldef import KernelArg, KernelDef
from .requant import I32, activation_range_int8, effective_scales, requant_constants

#: output channels per block of the stream
BLOCK = 4
#: requantization words per channel after a block's weights (kernels_dsp.h)
RQ_WORDS = 3
#: the largest right shift: c = 2**(e-1) + zy * 2**e and h + c stay inside int32
MAX_RIGHT = 22
#: the flag of the last channel's e word
LAST = 256


@dataclass
class GemmRequant:
    """Per output channel: the folded bias, multiplier and right shift (>= 1) of a layer whose
    requantization the DSP GEMM kernels compute exactly."""

    folded: np.ndarray
    mults: np.ndarray
    rights: np.ndarray


def gemm_requant(folded: np.ndarray, scales: np.ndarray, wabs: np.ndarray, bias: np.ndarray) -> GemmRequant | None:
    """The requantization constants, or None when the kernels' short form is not exact for
    this layer. ``wabs``: per channel the sum of |w|; ``bias``: the bias before folding. Every
    partial sum of twice the accumulator (the inputs in [-128, 127], the folded bias first)
    stays inside int32: 2 * (|bias| + 256 * sum|w|) < 2**31."""
    channels = folded.size
    bound = 256 * wabs.astype(np.int64) + np.abs(bias.astype(np.int64))
    folded, mults, shifts, bound = requant_constants(folded.astype(np.int64), scales, channels, bound, wabs == 0)
    if mults.size == 1:
        mults, shifts = np.repeat(mults, channels), np.repeat(shifts, channels)
    if not (np.all(bound < (1 << 30)) and np.all(shifts <= -1) and np.all(shifts >= -MAX_RIGHT)
            and np.all(mults >= (1 << 30)) and np.all(mults < (1 << 31))):
        return None
    return GemmRequant(folded, mults, -shifts)


#: mode bits of kernels_dsp.h
PER_TENSOR, W8, PAIRS, SMALL, NARROW, X8, LO, PACKED = 1, 2, 4, 8, 16, 32, 64, 128
#: packed constants (knob ``consts``): the distinct right shifts a layer may have (a 2-bit index per
#: channel), each at most SHIFT_STEP above the one before (bits of the mode's header)
PACKED_SHIFTS, SHIFT_STEP = 4, 7
#: rows of at most this many quads stay in registers (SMALL)
SMALL_QUADS = 2


def per_tensor(rq: GemmRequant) -> bool:
    """One set of requantization constants serves every channel."""
    return bool(np.all(rq.mults == rq.mults[0]) and np.all(rq.rights == rq.rights[0]))


def packed_shifts(rq: GemmRequant) -> list[int] | None:
    """The distinct right shifts of a layer whose constants pack (``PACKED``): at most
    PACKED_SHIFTS, ascending, each at most SHIFT_STEP above the one before; else None."""
    shifts = sorted({int(e) for e in rq.rights})
    if len(shifts) > PACKED_SHIFTS or any(b - a > SHIFT_STEP for a, b in zip(shifts, shifts[1:])):
        return None
    return shifts


def pack_dead(rq: GemmRequant, wmat: np.ndarray) -> GemmRequant:
    """The channels without weights (requant.dead_channels: the output v + zy from a bias of 4v,
    m = 2**30, shift 1) at the smallest shift e of the others, so that they need no shift of their
    own when packed: the bias v * 2**(e + 1) (v = MBQM(v * 2**(e+1), 2**30, -e))."""
    dead = ~np.any(wmat != 0, axis=1) & (rq.mults == 1 << 30) & (rq.rights == 1) & (rq.folded % 4 == 0)
    if not np.any(dead) or np.all(dead):
        return rq
    e = int(rq.rights[~dead].min())
    folded = np.where(dead, (rq.folded // 4) << (e + 1), rq.folded)
    if np.any(np.abs(folded[dead]) >= 1 << 29):
        return rq
    return GemmRequant(folded, rq.mults, np.where(dead, e, rq.rights))


def packed_header(rq: GemmRequant, zy: int, mode: int, lo: int) -> int:
    """The bits 8-30 of a packed layer's mode (kernels_dsp.h UTVM_DSP_PACKED): the output zero
    point at the shift's scale z (zy, or zy - lo with a lower clamp; 9 bits), the first shift (5
    bits) and the steps to the next three (3 bits each)."""
    shifts = packed_shifts(rq)
    assert shifts is not None
    shifts += [shifts[-1]] * (PACKED_SHIFTS - len(shifts))
    z = zy - (lo if mode & LO else 0)
    assert -256 <= z < 256
    steps = [b - a for a, b in zip(shifts, shifts[1:])]
    return (z & 0x1FF) | shifts[0] << 9 | steps[0] << 14 | steps[1] << 17 | steps[2] << 20


def gemm_stream(w: np.ndarray, rq: GemmRequant, zy: int, mode: int, lo: int = -128) -> np.ndarray:
    """The int32 stream of a layer with weights ``w`` (cout x K, K % 4 == 0), in blocks of four
    output channels (one row at a time) or, with ``PAIRS`` in ``mode``, two (two rows at a
    time, both starting from the block's biases); each block's biases first, once; channels past a whole block are padded with zero
    weights and the constants of the last channel. int16 weights (doubled) or, with ``W8``,
    int8; constants per channel or, with ``PER_TENSOR``, per block; with ``LO`` (a lower clamp
    ``lo``) the constants c hold zy - lo; with ``PACKED`` the blocks hold the biases and the weights only, and one word per channel
    after the last block, m - 2**30 | the index of its shift among packed_shifts << 30, which the
    kernel expands into m, c, e in scratch (see kernels_dsp.h)."""
    cout, k = w.shape
    assert k % 4 == 0
    nc = 2 if mode & (PAIRS | NARROW) else BLOCK
    blocks = -(-cout // nc)
    pad = blocks * nc - cout
    w = np.concatenate([w.astype(np.int64), np.zeros((pad, k), np.int64)])
    folded = np.concatenate([rq.folded, np.zeros(pad, np.int64)])
    mults = np.concatenate([rq.mults, np.repeat(rq.mults[-1:], pad)]).astype(np.int64)
    rights = np.concatenate([rq.rights, np.repeat(rq.rights[-1:], pad)]).astype(np.int64)
    kq = k // 4
    quads = w.reshape(blocks, nc, kq, 4).transpose(0, 2, 1, 3)  # block, quad, channel, weight
    if mode & W8:  # per channel its four int8 weights
        weights = np.ascontiguousarray(quads.astype(np.int8)).view("<i4").reshape(blocks, kq * nc)
    else:  # per channel the doubled int16 pairs (w0, w2), (w1, w3)
        pairs = (2 * quads)[..., [0, 2, 1, 3]]
        weights = np.ascontiguousarray(pairs.astype("<i2")).view("<i4").reshape(blocks, kq * 2 * nc)
    # the accumulators start at twice the folded bias, or at it when they are doubled at the end
    biases = ((1 if mode & W8 and mode & X8 else 2) * folded).reshape(blocks, nc)
    if mode & PACKED:
        shifts = packed_shifts(rq)
        assert shifts is not None and not mode & (PER_TENSOR | SMALL)
        index = np.searchsorted(np.array(shifts), rights)
        words = (mults - (1 << 30)) | (index << 30)
        body = np.concatenate([biases, weights], axis=1).reshape(-1)
        return np.concatenate([body, words]).astype(np.uint32).view(np.int32)
    c = (1 << (rights - 1)) + (zy - (lo if mode & LO else 0)) * (1 << rights)
    words = [mults, c, rights]
    consts = np.stack(words, axis=1).reshape(blocks, nc, len(words))
    if mode & PER_TENSOR:
        consts = consts[:, :1]
    consts = consts.reshape(blocks, -1).copy()
    consts[-1, 2 - len(words)] |= LAST  # the last channel's e word
    stream = np.concatenate([biases, weights, consts], axis=1)
    return stream.reshape(-1).astype(np.int32)


@dataclass(frozen=True)
class Geometry:
    """A layer as utvm_dsp_conv_<kernel> sees it: an NHWC convolution (a fully connected layer is
    h = 1, w = batch rows, cin = depth with a 1 x 1 window)."""

    n: int
    h: int
    w: int
    cin: int
    oh: int
    ow: int
    cout: int
    kh: int = 1
    kw: int = 1
    sh: int = 1
    sw: int = 1
    dh: int = 1
    dw: int = 1
    top: int = 0
    left: int = 0

    @property
    def kq(self) -> int:
        """Quads of four inputs per row (the patch padded)."""
        return -(-self.kh * self.kw * self.cin // 4)

    @property
    def in_place(self) -> bool:
        """Rows read from the input (pointwise, whole quads, no padding) rather than gathered."""
        return self.kh == self.kw == 1 and self.cin % 4 == 0 and self.top == self.left == 0

    def patch_order(self) -> np.ndarray:
        """The K order of a gathered patch (utvm_dsp_patch): index into the (row, column,
        channel) flattened window, -1 for the zeros that complete the last quad. The window is
        cut into segments of contiguous input bytes (a window row; one tap with dilation along
        the width), their whole quads first, then every segment's last bytes."""
        taps = self.kw if self.dw == 1 else 1
        seg = taps * self.cin
        whole = seg - seg % 4
        starts = [(ry * self.kw + sx) * self.cin for ry in range(self.kh) for sx in range(0, self.kw, taps)]
        body = [s + b for s in starts for b in range(whole)]
        rest = [s + b for s in starts for b in range(whole, seg)]
        return np.array(body + rest + [-1] * (-len(rest) % 4), np.int64)


#: bytes of patches gathered per call at most (several output pixels per call when they are small)
PATCH_BYTES = 512


def patch_chunk(geo: Geometry) -> int:
    """Output pixels whose patches one call gathers (consecutive pixels, across output rows): as
    many as PATCH_BYTES hold, an even number (two rows at a time), at least two, at most all."""
    return min(geo.n * geo.oh * geo.ow, max(2, PATCH_BYTES // (8 * geo.kq)) & ~1)


#: a gathered layer copies its input with the padding its windows reach into scratch first (bit
#: 31 of the mode argument, gemm_dsp.h), every patch then gathered as from inside the input (whole
#: words, no per-byte bounds), where the copy takes at most PAD_COPY_BYTES and fewer bytes than
#: the patches of the pixels whose windows reach the padding (small maps of large windows: the
#: autoencoder's 5x5 SAME on 4x4 and 8x8 maps)
PAD_COPY_BYTES = 2560


def padded_extent(geo: Geometry) -> tuple[int, int]:
    """The rows and columns of input (with the padding) the windows of a layer reach."""
    return (geo.oh - 1) * geo.sh + (geo.kh - 1) * geo.dh + 1, (geo.ow - 1) * geo.sw + (geo.kw - 1) * geo.dw + 1


def pad_copy(geo: Geometry) -> bool:
    """The layer's patches are gathered from a padded copy of its input (see PAD_COPY_BYTES): one
    image, no dilation along the width, some windows reaching the padding."""
    if geo.in_place or geo.n != 1 or geo.dw != 1:
        return False
    ph, pw = padded_extent(geo)
    size = ph * pw * geo.cin
    if size > PAD_COPY_BYTES:
        return False
    rows_in = sum(1 for i in range(geo.oh) if 0 <= i * geo.sh - geo.top and
                  i * geo.sh - geo.top + (geo.kh - 1) * geo.dh < geo.h)
    cols_in = sum(1 for j in range(geo.ow) if 0 <= j * geo.sw - geo.left and j * geo.sw - geo.left + geo.kw <= geo.w)
    edge = geo.oh * geo.ow - rows_in * cols_in
    return edge > 0 and edge * geo.kh * geo.kw * geo.cin >= size


def scratch_words(geo: Geometry, chunk: int, mode: int) -> int:
    """Words of scratch the kernels use: the widened rows (none for rows kept in registers
    or read unwidened, a row or a pair read in place, or the patches of ``chunk`` pixels, rounded
    up to pairs), then (one row at a time with cout not a multiple of the block) a block's
    outputs, then the padded copy of the input (:func:`pad_copy`)."""
    if geo.in_place:
        rows = 0 if mode & (SMALL | X8) else (2 if mode & PAIRS else 1)
    else:
        rows = chunk + (chunk % 2 if mode & PAIRS else 0)
    width = 2 if mode & NARROW else BLOCK
    tail = 0 if mode & PAIRS or geo.cout % width == 0 else -(-geo.cout // BLOCK)
    ph, pw = padded_extent(geo)
    copy = -(-ph * pw * geo.cin // 4) if pad_copy(geo) else 0
    return packed_words(geo, mode) + 2 * geo.kq * rows + tail + copy


def packed_words(geo: Geometry, mode: int) -> int:
    """Words of scratch before the rows that a packed layer's constants expand into: m, c, e per
    channel of the whole blocks."""
    nc = 2 if mode & (PAIRS | NARROW) else BLOCK
    return RQ_WORDS * nc * -(-geo.cout // nc) if mode & PACKED else 0


def kernel_name(mode: int, kq: int, lo: int, hi: int) -> str:
    """The kernels_dsp.h kernel of a mode (UTVM_DSP_KERNEL_NAMES): shape and weights, constants
    per channel or per tensor, the clamp."""
    clamp = ("b" if hi < 127 else "l") if lo > -128 else ("h" if hi < 127 else "n")
    consts = "t" if mode & PER_TENSOR else "p" if mode & PACKED else "c"
    if mode & SMALL:
        shape = f"small{kq}_w16"
    elif mode & X8:
        shape = ("narrow" if mode & NARROW else "row") + ("_x8w8" if mode & W8 else "_x8")
    else:
        shape = ("narrow" if mode & NARROW else "pair" if mode & PAIRS else "row") + ("_w8" if mode & W8 else "_w16")
    return f"{shape}_{consts}{clamp}"


@dataclass
class GemmPlan:
    """What a call of the layer's entry point (utvm_dsp_conv_<kernel>) takes besides the pointers
    and the geometry."""

    stream: np.ndarray
    mode: int
    chunk: int
    #: words of scratch
    scratch: int
    #: the kernel's name (kernel_name)
    kernel: str
    #: packed constants: bits 8-30 of the mode argument (packed_header)
    header: int = 0

    @property
    def entry(self) -> str:
        return f"utvm_dsp_conv_{self.kernel}"

    def call_args(self, geo: Geometry, zx: int, lo: int, hi: int) -> list[int]:
        """The integer arguments after the four pointers (out, x, stream, scratch), in
        kernels_dsp.h's order."""
        # bit 31 (pad_copy): the argument negative
        arg = self.mode | self.header << 8 | (1 << 31 if pad_copy(geo) else 0)
        return [geo.n, geo.h, geo.w, geo.cin, geo.oh, geo.ow, geo.cout, geo.kh, geo.kw, geo.sh, geo.sw, geo.dh,
                geo.dw, geo.top, geo.left, zx, geo.kq, self.chunk, lo, hi, arg - (1 << 32) if arg >> 31 else arg]


def _rows_per_call(geo: Geometry) -> int:
    if geo.in_place:
        full = (geo.sh, geo.sw, geo.oh, geo.ow) == (1, 1, geo.h, geo.w)
        return geo.n * geo.oh * geo.ow if full else geo.ow
    return patch_chunk(geo)


def _small(geo: Geometry, wide: bool) -> bool:
    return geo.in_place and geo.kq <= SMALL_QUADS and wide


def _pairs(geo: Geometry, wide: bool) -> bool:
    return geo.cout % 2 == 0 and _rows_per_call(geo) > 1 and not _small(geo, wide)


def widen_applies(geo: Geometry, wide: bool) -> bool:
    """Rows read in place one at a time (not in registers): they may be widened into scratch
    first (once for all blocks) or read unwidened (no scratch, each word split per block)."""
    return geo.in_place and not _small(geo, wide) and not _pairs(geo, wide)


def gemm_plan(geo: Geometry, wmat: np.ndarray, rq: GemmRequant, zy: int, wide: bool, lo: int, hi: int,
              widen: bool = False, packed: bool = False) -> GemmPlan:
    """The stream and the mode of a layer with weights ``wmat`` (cout x window in (row, column,
    channel) order): rows read in place or gathered patches (their K order), two rows at a time
    when cout is even and a call has several rows, int16 (``wide``) or int8 weights; rows of
    one or two quads read in place kept in registers (int16 weights; per-channel constants when
    clamped); other rows read in place one at a time unwidened unless ``widen`` (scratch) and
    more than one block; ``lo``, ``hi``: the activation clamp; ``packed``: two words of constants
    per channel instead of four where they pack (per-channel constants, not small rows,
    packed_shifts)."""
    chunk = 1 if geo.in_place else patch_chunk(geo)
    if not geo.in_place:
        order = geo.patch_order()
        wmat = np.where(order >= 0, wmat[:, np.maximum(order, 0)], 0)
    wmat = np.concatenate([wmat, np.zeros((geo.cout, 4 * geo.kq - wmat.shape[1]), np.int64)], axis=1)
    small, pairs = _small(geo, wide), _pairs(geo, wide)
    clamped = lo > -128 or hi < 127
    narrow = geo.cout <= 2 and not pairs and not small
    # unwidened: no scratch; widening costs what it saves with one block per row
    x8 = widen_applies(geo, wide) and (not widen or geo.cout <= (2 if narrow else BLOCK))
    tensor = per_tensor(rq) and not (small and clamped)
    mode = ((0 if wide else W8) | (PER_TENSOR if tensor else 0) | (PAIRS if pairs else 0) | (SMALL if small else 0)
            | (NARROW if narrow else 0) | (X8 if x8 else 0) | (LO if lo > -128 else 0))
    if packed and not mode & (PER_TENSOR | SMALL):
        rq = pack_dead(rq, wmat)
        mode |= PACKED if packed_shifts(rq) is not None else 0
    header = packed_header(rq, zy, mode, lo) if mode & PACKED else 0
    return GemmPlan(gemm_stream(wmat, rq, zy, mode, lo), mode, chunk, scratch_words(geo, chunk, mode),
                    kernel_name(mode, geo.kq, lo, hi), header)


@dataclass
class Int8Layer:
    """What the DSP kernels of an int8 layer need: its input, the weights as a (cout x window)
    matrix, the requantization constants (short exact form), zero points and activation clamp."""

    x: Tensor
    wmat: np.ndarray
    rq: GemmRequant
    zx: int
    zy: int
    lo: int
    hi: int


def int8_layer(g: Graph, op: Operator, in_double: bool) -> Int8Layer | None:
    """The layer's constants, or None when it is not int8 with symmetric constant weights or its
    requantization is outside the short exact form (:func:`gemm_requant`)."""
    x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    b = g.tensors[op.inputs[2]] if len(op.inputs) > 2 and op.inputs[2] else None
    if x.dtype != "int8" or w.dtype != "int8" or y.dtype != "int8" or w.data is None:
        return None
    if x.quant is None or w.quant is None or y.quant is None or np.any(w.quant.zero_point != 0):
        return None
    if b is not None and b.data is None:
        return None
    wmat = w.data.reshape(w.shape[0], -1).astype(np.int64)
    _, zx = x.quant.scalar()
    ys, zy = y.quant.scalar()
    bias = b.data.astype(np.int64).reshape(-1) if b is not None else np.zeros(wmat.shape[0], np.int64)
    rq = gemm_requant(bias - zx * wmat.sum(axis=1), effective_scales(x, w, y, in_double),
                      np.abs(wmat).sum(axis=1), bias)
    if rq is None:
        return None
    lo, hi = activation_range_int8(op.attrs.get("activation", "none"), ys, zy)
    return Int8Layer(x, wmat, rq, int(zx), int(zy), lo, hi)


def gemm_kernel(g: Graph, op: Operator, geo: Geometry, wide: bool, in_double: bool,
                widen: bool = False, packed: bool = False) -> KernelDef | None:
    """The kernels_dsp.h kernel of an int8 conv2d / fully_connected layer (``wide``: int16
    weights in the stream; ``widen``, ``packed``: see gemm_plan), or None when it does not apply
    (not int8 with symmetric constant weights, or a requantization outside the short exact form)."""
    layer = int8_layer(g, op, in_double)
    if layer is None:
        return None
    x, zx, lo, hi = layer.x, layer.zx, layer.lo, layer.hi
    plan = gemm_plan(geo, layer.wmat, layer.rq, layer.zy, wide, lo, hi, widen, packed)
    args = [KernelArg(te.placeholder(x.shape, "int8", name="x"), tensor=x.name),
            KernelArg(te.placeholder((plan.stream.size,), I32, name="w"), constant=plan.stream, role="w")]
    if plan.scratch:
        args.append(KernelArg(te.placeholder((plan.scratch,), I32, name="col"), role="col", scratch=True))

    def body(ins, outs):  # type: ignore[no-untyped-def]
        # without scratch (the kernel does not touch it) the output's pointer stands in for it
        scratch = ins[2] if plan.scratch else outs[0]
        return call(plan.entry, outs[0].access_ptr("w"), ins[0].access_ptr("r"), ins[1].access_ptr("r"),
                    scratch.access_ptr("w"), *plan.call_args(geo, zx, lo, hi))

    return extern(g.tensors[op.outputs[0]], args, body)
