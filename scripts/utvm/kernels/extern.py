"""TE extern operators whose loops call C helpers (utvm/kernels.h, utvm/kernels_mve.h).

The Helium kernels (``kernels/helium.py``) and the DSP depthwise kernel of
``ops/depthwise_conv2d.py`` are TE extern operators: the TE definition only gives the signature,
the body is TIR that calls the helpers with the buffers' pointers and the layer's constants.
"""

from __future__ import annotations

import tvm
from tvm import te, tirx

from ..ir import Tensor
from .kerneldef import KernelArg, KernelDef
from .requant import I32


def buffer(t: te.Tensor, name: str) -> tirx.Buffer:
    """A compact buffer at offset 0 (no byte_offset code in the kernel)."""
    return tirx.decl_buffer(t.shape, t.dtype, name=name, elem_offset=0)


def name_root(sch: tvm.s_tir.Schedule) -> None:
    """Name the extern operator's block "root", as the lowering expects of every kernel (the
    block of a TE extern operator is the function's top block)."""
    block = sch.get_sblock("out")
    stmt = sch.get(block)
    new = tvm.s_tir.SBlock(stmt.iter_vars, stmt.reads, stmt.writes, "root", stmt.body, stmt.init,
                           stmt.alloc_buffers, stmt.match_buffers, stmt.annotations)
    sch.state.replace(sch.get_sref(block), new, {stmt: new})


def call(name: str, *args: tirx.PrimExpr | int) -> tirx.Stmt:
    return tirx.Evaluate(tirx.call_extern(I32, name, *[tirx.const(a, I32) if isinstance(a, int) else a
                                                       for a in args]))


def extern(y: Tensor, args: list[KernelArg], body) -> KernelDef:  # type: ignore[no-untyped-def]
    """The extern operator of ``body(ins, outs)`` over the placeholders of ``args`` (compact
    buffers), with the kernel's block named root."""
    ins = [a.placeholder for a in args]
    out = te.extern(y.shape, ins, body, name="out", dtype="int8", in_buffers=[buffer(t, t.op.name) for t in ins],
                    out_buffers=[tirx.decl_buffer(y.shape, "int8", name="y", elem_offset=0)])
    return KernelDef(args, out, y.name, name_root)
