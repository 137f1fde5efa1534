"""Producers that write straight into a slot of another tensor (CONCATENATION without a copy).

An operator with ``OpDef.input_slots`` (concatenation) has no kernel of its own: each input
lies in a slot of the output. :func:`plan_slots` decides, before lowering, which inputs' producers
write into their slot directly:

- a slot that is one contiguous run of the output (concatenation along the outermost axis
  that is not 1) takes any producer (a TVM kernel, an external module's glue) whose tensor is
  not a model input, output or constant, starting at a 4-byte aligned offset: the producer
  sees an ordinary compact buffer, and other consumers of the tensor read it there;
- a strided slot (concatenation along an inner axis, e.g. channels of NHWC) needs a TVM kernel
  that writes its output only through plain element stores (:func:`strided_output` checks and
  rewrites the output buffer's strides), and the tensor must have no other consumer (it is not
  contiguous any more).

Inputs that cannot be placed are copied into their slot by one-input concatenation kernels.
The result is a :class:`View` per tensor living inside another tensor; the memory planner
resolves views to pool offsets (``utvm.plan.memory``).
"""

from __future__ import annotations

from dataclasses import dataclass

import tvm
import tvm_ffi
from tvm import tirx

from ..ir import Graph
from ..ops import get

#: byte alignment of a contiguous slot: kernels may read and write 4 int8 lanes per word
SLOT_ALIGN = 4


@dataclass(frozen=True)
class View:
    """A tensor whose bytes lie inside ``container``: its first element at byte ``offset``, the
    others at the container's element ``strides`` (None: one contiguous run). ``how``: ``slot``,
    written there by its producer (a concatenation's input), or ``view``, a slice of the
    container that needs no kernel (its consumers read the container's bytes)."""

    container: str
    offset: int
    strides: tuple[int, ...] | None = None
    how: str = "slot"


@dataclass(frozen=True)
class Placement:
    """A planned view: the tensor the producer writes, where, and for which concatenation."""

    tensor: str
    view: View
    op_index: int       # the concatenation
    input_index: int    # which of its inputs


def alias_roots(graph: Graph) -> dict[str, str]:
    """tensor -> the tensor whose bytes it is (through RESHAPE-like aliases), for alias outputs."""
    alias: dict[str, str] = {}
    for op in graph.ops:
        opdef = get(op.kind)
        if opdef is not None and opdef.alias:
            alias[op.outputs[0]] = op.inputs[0]
    roots = {}
    for name in alias:
        root = name
        while root in alias:
            root = alias[root]
        roots[name] = root
    return roots


def read_view(graph: Graph, index: int, roots: dict[str, str] | None = None) -> View | None:
    """The view an operator with ``OpDef.view_of_input`` (a slice) becomes instead of a kernel:
    its output is one contiguous run of a non-constant input starting at an aligned byte
    offset, and neither it nor an alias of it is a model output (which needs bytes of its own)."""
    op = graph.ops[index]
    opdef = get(op.kind)
    if opdef is None or opdef.view_of_input is None:
        return None
    offset = opdef.view_of_input(graph, op)
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    if offset is None or x.is_constant or x.variable:
        return None
    roots = alias_roots(graph) if roots is None else roots
    if roots.get(op.outputs[0], op.outputs[0]) in {roots.get(n, n) for n in graph.outputs}:
        return None
    offset *= y.nbytes // max(y.size, 1)
    return View(op.inputs[0], offset, None, "view") if offset % SLOT_ALIGN == 0 else None


def plan_slots(graph: Graph) -> dict[str, Placement]:
    """Which tensors their producers should write straight into a concatenation's slot."""
    roots = alias_roots(graph)

    def root(name: str) -> str:
        return roots.get(name, name)

    producer: dict[str, int] = {}
    uses: dict[str, int] = {}
    for i, op in enumerate(graph.ops):
        for name in op.outputs:
            producer[name] = i
        for name in op.inputs:
            if name:
                uses[root(name)] = uses.get(root(name), 0) + 1
    io = {root(n) for n in graph.inputs + graph.outputs}
    placed: dict[str, Placement] = {}
    for index, op in enumerate(graph.ops):
        opdef = get(op.kind)
        if opdef is None or opdef.input_slots is None:
            continue
        y = graph.tensors[op.outputs[0]]
        if root(op.outputs[0]) in {root(n) for n in graph.inputs}:
            continue
        itemsize = y.nbytes // max(y.size, 1)
        input_roots = [root(n) for n in op.inputs]
        for k, (name, slot) in enumerate(zip(op.inputs, opdef.input_slots(graph, op))):
            r = input_roots[k]
            t = graph.tensors[r]
            if t.is_constant or t.variable or y.variable or r in io or r in placed or input_roots.count(r) != 1 \
                    or r not in producer:
                continue
            maker = get(graph.ops[producer[r]].kind)
            if read_view(graph, producer[r], roots) is not None:
                continue  # a slice without a kernel: nothing writes it
            offset = slot.offset * itemsize
            if slot.strides is None:
                if offset % SLOT_ALIGN:
                    continue
            elif r != name or uses.get(r, 0) != 1 or maker is None or maker.input_slots is not None:
                continue
            placed[r] = Placement(r, View(op.outputs[0], offset, slot.strides), index, k)
    return placed


def _mentions(node: object, var: tirx.Var) -> bool:
    found = []

    def visit(v: tirx.Var) -> None:
        if v.same_as(var):
            found.append(v)

    tvm_ffi.structural_walk(node, (tvm.ir.expr.Var, visit))
    return bool(found)


def writes_only_by_stores(func: tirx.PrimFunc, buf: tirx.Var) -> bool:
    """True if ``buf`` is touched only by plain (scalar) element loads and stores: no call takes
    its address or the buffer itself, no vector access."""
    bad: list[object] = []

    def call(c: tvm.ir.expr.Call) -> None:
        if any(_mentions(a, buf) for a in c.args):
            bad.append(c)

    def store(s: tirx.BufferStore) -> None:
        if s.buffer.same_as(buf) and any(isinstance(i, tirx.Ramp) for i in s.indices):
            bad.append(s)

    def load(ld: tvm.ir.expr.TensorLoad) -> None:
        if ld.source.same_as(buf) and any(isinstance(i, tirx.Ramp) for i in ld.indices):
            bad.append(ld)

    tvm_ffi.structural_walk(func.body, [(tvm.ir.expr.Call, call), (tirx.BufferStore, store),
                                        (tvm.ir.expr.TensorLoad, load)])
    return not bad


def strided_output(func: tirx.PrimFunc, strides: tuple[int, ...]) -> tirx.PrimFunc | None:
    """``func`` writing its output (the last parameter) with the given element strides, or None
    when its output is not written by plain element stores alone."""
    out = func.params[-1]
    if len(out.shape) != len(strides) or not writes_only_by_stores(func, out):
        return None
    new = tirx.decl_buffer(out.shape, out.dtype, out.name, strides=list(strides))

    def swap(v: tirx.Var) -> tirx.Var:
        return new if v.same_as(out) else v

    return tvm_ffi.structural_map(func, (tvm.ir.expr.Var, swap))
