"""Shared pieces of the Helium (MVE: Cortex-M52, M55, M85) int8 kernels.

The Helium variants of the operators (``helium`` in conv2d, depthwise_conv2d,
fully_connected and add under utvm/ops) are TE extern operators: TIR loops over output rows
or groups of four output pixels that call the vector helpers of ``utvm/kernels_mve.h`` (each
helper does a whole inner loop with Helium instructions; plain C with the same results
elsewhere). This module has what they share: the operand checks, the requantization constants
stored as compactly as the generic kernels store them (:class:`MveRequant`); the extern
operator wrapper is ``lower/extern.py``'s.

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
from .kerneldef import KernelArg
from .requant import SHIFT_BITS, effective_scales  # SHIFT_BITS: UTVM_MVE_RQ_SHIFT_BITS
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
RQ_MULT, RQ_PACKED, RQ_SHIFT8, RQ_LEFT = 1, 2, 4, 8


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


def mve_requant(x: Tensor, w: Tensor, y: Tensor, b: Tensor | None, wsum: np.ndarray, cout: int,
             in_double: bool = True) -> MveRequant | None:
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
        return MveRequant(args, int(mults[0]), int(shifts[0]), mode)
    limit = 1 << (31 - SHIFT_BITS)
    if np.all(shifts <= 0) and np.all(folded < limit) and np.all(folded >= -limit):
        words = (folded << SHIFT_BITS) | -shifts
        args[0] = KernelArg(bp, constant=words.astype(np.int32), role="bias_shift")
        return MveRequant(args, int(mults[0]), 0, mode | RQ_PACKED)
    args.append(KernelArg(te.placeholder((cout,), "int8", name="shift"), constant=shifts.astype(np.int8),
                          role="shift"))
    return MveRequant(args, int(mults[0]), 0, mode | RQ_SHIFT8)


