"""A one-row int8 layer of kernels_dsp.h (a fully connected layer of batch 1) whose output
channels leave one or two past whole blocks of four: two calls, the whole blocks with the row
kernels and the last one or two channels with the narrow ones (blocks of two), instead of one
call whose last block of four computes two or three padding channels (``[1,256] -> 5``: 8
channels' products for 5). One stream (the two parts' streams one after the other), the
larger part's scratch; a row's outputs are contiguous, so the second call writes at channel
4 * (cout // 4) of the same row. Only layers of at least MIN_MACS products: the narrow kernels'
code (about 0.9 KB when no other layer links them) costs more than the few instructions smaller
layers save (MLPerf Tiny IC's [1,64] -> 10: 160 instructions fewer for 808 bytes more flash on
the Cortex-M4).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from tvm import te

from ..ir import Graph, Operator
from .dsp import GemmRequant, Geometry, gemm_plan, int8_layer
from .helium import call, extern
from .kerneldef import KernelArg, KernelDef
from .requant import I32
from .schedules import seq

#: the fewest products of a layer that is split (issue 23's bounds count layers from 1,000)
MIN_MACS = 1000


def applies(geo: Geometry) -> bool:
    """One row of at least MIN_MACS products, more than one block, one or two channels past whole
    blocks of four."""
    return (geo.n * geo.oh * geo.ow == 1 and geo.cout > 4 and geo.cout % 4 in (1, 2)
            and geo.cin * geo.cout >= MIN_MACS)


def split_kernel(g: Graph, op: Operator, geo: Geometry, wide: bool, in_double: bool,
                 widen: bool = False, packed: bool = False) -> KernelDef | None:
    layer = int8_layer(g, op, in_double)
    if layer is None:
        return None
    whole = geo.cout - geo.cout % 4
    parts = []
    offset = 0
    for a, b in ((0, whole), (whole, geo.cout)):
        sub = replace(geo, cout=b - a)
        rq = GemmRequant(layer.rq.folded[a:b], layer.rq.mults[a:b], layer.rq.rights[a:b])
        plan = gemm_plan(sub, layer.wmat[a:b], rq, layer.zy, wide, layer.lo, layer.hi, widen, packed)
        parts.append((a, offset, sub, plan))
        offset += plan.stream.size
    stream = np.concatenate([p.stream for *_, p in parts])
    scratch = max(p.scratch for *_, p in parts)
    x = layer.x
    args = [KernelArg(te.placeholder(x.shape, "int8", name="x"), tensor=x.name),
            KernelArg(te.placeholder((stream.size,), I32, name="w"), constant=stream, role="w")]
    if scratch:
        args.append(KernelArg(te.placeholder((scratch,), I32, name="col"), role="col", scratch=True))

    def body(ins, outs):  # type: ignore[no-untyped-def]
        calls = []
        for a, off, sub, plan in parts:
            col = ins[2] if scratch else outs[0]
            calls.append(call(plan.entry, outs[0].access_ptr("w", offset=a), ins[0].access_ptr("r"),
                              ins[1].access_ptr("r", offset=off), col.access_ptr("w"),
                              *plan.call_args(sub, layer.zx, layer.lo, layer.hi)))
        return seq(calls)

    return extern(g.tensors[op.outputs[0]], args, body)
