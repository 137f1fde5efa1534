"""Tensors that share a buffer: aliases, concatenation slots and operators run in place.

Three kinds of tenant live in a buffer they do not own alone:

- ``alias``: a RESHAPE-like output (``OpDef.alias``), the same bytes under another shape;
- ``slot``: a tensor whose producer writes straight into its slot of a concatenation's output
  (``utvm.lower.slots``), at a byte offset, contiguous or with the container's strides;
- ``view``: a slice that is one contiguous run of its input: no kernel, its consumers read the
  input's bytes at an offset;
- ``inplace``: the output of an elementwise operator (``OpDef.inplace``), or of a kernel that
  reads each input element before writing the same output element (``KernelDef.inplace``: the
  depthwise convolution on planar rows, which copies four channels out before writing them),
  that takes the bytes of a same-shaped input dying at that operator;
- ``shifted``: the input of a windowed operator run in place (depthwise convolution,
  ``OpDef.shift_margin``): the input dies at the operator and lies in the output's buffer a few
  rows after the output's start, so the rows the kernel writes, in order, are rows of input it
  no longer reads (TinyEngine's in-place depthwise convolution, without its per-channel copy).

:func:`resolve` maps every tensor to its buffer and byte offset, :func:`choose_inplace` picks the
in-place operators, and :func:`check_tenants` verifies that sharing is safe (what
``MemoryPlan.check`` reports).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..ir import Graph
from ..lower.lowering import Lowered
from ..ops import get


@dataclass
class Tenant:
    """A tensor living in ``buffer`` (a pool buffer or a model input/output) at byte ``offset``."""

    name: str
    buffer: str
    offset: int
    how: str                        # alias, slot, view, inplace
    target: str                     # the tensor it is linked to: aliased, container, input
    shape: tuple[int, ...]
    itemsize: int
    #: element strides in the buffer when not one contiguous run (strided slots)
    strides: tuple[int, ...] | None = None
    first: int = -1                 # kernel-call steps it is used in (-1: never)
    last: int = -1
    #: for ``inplace``: the step that writes it over ``target``
    step: int = -1

    def byte_span(self) -> int:
        """Bytes from its first to one past its last element."""
        if not self.shape or min(self.shape) == 0:
            return 0
        if self.strides is None:
            return int(np.prod(self.shape)) * self.itemsize
        return (sum((d - 1) * s for d, s in zip(self.shape, self.strides)) + 1) * self.itemsize

    def bytes(self) -> np.ndarray:
        """Byte offsets in the buffer of every byte it covers."""
        n = int(np.prod(self.shape)) if self.shape else 1
        if self.strides is None:
            return np.arange(self.offset, self.offset + n * self.itemsize)
        index = np.zeros(1, dtype=np.int64)
        for d, s in zip(self.shape, self.strides):
            index = (index[:, None] + np.arange(d, dtype=np.int64)[None, :] * s).reshape(-1)
        starts = self.offset + index * self.itemsize
        return (starts[:, None] + np.arange(self.itemsize)[None, :]).reshape(-1)


class Storage:
    """tensor -> (buffer, byte offset, how) through aliases, slots and in-place links."""

    def __init__(self, lowered: Lowered) -> None:
        self.links: dict[str, tuple[str, int, str]] = {}
        for name, target in lowered.aliases.items():
            self.links[name] = (target, 0, "alias")
        for name, view in lowered.views.items():
            self.links[name] = (view.container, view.offset, view.how)

    def resolve(self, name: str) -> tuple[str, int]:
        offset = 0
        seen = set()
        while name in self.links and name not in seen:
            seen.add(name)
            name, off, _ = self.links[name]
            offset += off
        return name, offset

    def root(self, name: str) -> str:
        return self.resolve(name)[0]


def tensor_steps(lowered: Lowered) -> dict[str, tuple[int, int]]:
    """First and last kernel-call step each tensor name appears in as an argument; model outputs
    are read by the application after the last step."""
    steps: dict[str, tuple[int, int]] = {}
    for step, call in enumerate(lowered.calls):
        for name in call.args:
            a, b = steps.get(name, (step, step))
            steps[name] = (min(a, step), max(b, step))
    end = max(len(lowered.calls) - 1, 0)
    for name in lowered.graph.outputs:
        steps[name] = (steps.get(name, (end, end))[0], end)
    return steps


def choose_inplace(lowered: Lowered, storage: Storage, first: dict[str, int], last: dict[str, int],
                   io_roots: Iterable[str]) -> list[tuple[int, str, str]]:
    """Let elementwise kernels (and kernels that say so: KernelDef.inplace) write over an input
    that dies at them: (step, input, output) for each, with ``storage``, ``first`` and ``last``
    (per buffer) updated to the shared buffer."""
    graph: Graph = lowered.graph
    io = set(io_roots)
    chosen = []
    for step, call in enumerate(lowered.calls):
        op = graph.ops[call.op_index]
        opdef = get(op.kind)
        if opdef is None or not (opdef.inplace or call.inplace) or call.external is not None:
            continue
        out = call.args[-1]
        y = graph.tensors[out]
        if out in storage.links or out in io or first.get(out) != step or y.variable:
            continue
        for name in dict.fromkeys(op.inputs):
            if not name or name not in call.args[:-1]:
                continue
            x = graph.tensors[name]
            root, offset = storage.resolve(name)
            if x.is_constant or graph.tensors[root].variable or root in io or offset != 0 or last.get(root) != step:
                continue
            if x.shape != y.shape or x.dtype != y.dtype or graph.tensors[root].nbytes != x.nbytes:
                continue
            storage.links[out] = (name, 0, "inplace")
            last[root] = max(last[root], last.pop(out))
            first.pop(out)
            chosen.append((step, name, out))
            break
    return chosen


def choose_shifted(lowered: Lowered, storage: Storage, first: dict[str, int], last: dict[str, int],
                   io_roots: Iterable[str]) -> dict[str, int]:
    """Let windowed kernels that write rows in order run in place: the buffer of an input dying
    at such an operator moves into the output's buffer, ``OpDef.shift_margin`` bytes after its
    start. Returns the bytes each such output's buffer needs (``storage``, ``first`` and
    ``last`` are updated as by :func:`choose_inplace`)."""
    graph: Graph = lowered.graph
    io = set(io_roots)
    extents: dict[str, int] = {}
    for step, call in enumerate(lowered.calls):
        op = graph.ops[call.op_index]
        opdef = get(op.kind)
        if opdef is None or opdef.shift_margin is None or call.external is not None:
            continue
        variant = next((v for v in opdef.variants if v.name == call.variant), None)
        out, name = call.args[-1], op.inputs[0]
        if variant is None or not variant.rows_in_order or call.rows_out_of_order or name not in call.args[:-1]:
            continue
        y, x = graph.tensors[out], graph.tensors[name]
        root, offset = storage.resolve(name)
        if out in storage.links or out in io or first.get(out) != step or y.variable or x.is_constant:
            continue
        if root in io or offset != 0 or last.get(root) != step or graph.tensors[root].nbytes != x.nbytes:
            continue
        if graph.tensors[root].variable or root in extents:  # state, or itself a shifted buffer
            continue
        margin = opdef.shift_margin(graph, op)
        if margin is None:
            continue
        storage.links[root] = (out, margin, "shifted")
        first[out] = min(first.pop(root), first[out])
        last.pop(root)
        extents[out] = max(y.nbytes, margin + x.nbytes)
    return extents


def tenants(lowered: Lowered, storage: Storage, inplace: list[tuple[int, str, str]],
            steps: dict[str, tuple[int, int]]) -> list[Tenant]:
    """Every tensor that shares a buffer, with its place and the steps it is used in."""
    graph = lowered.graph
    at_step = {out: step for step, _, out in inplace}
    out = []
    for name, (target, _, how) in storage.links.items():
        t = graph.tensors[name]
        buffer, offset = storage.resolve(name)
        view = lowered.views.get(name)
        first, last = steps.get(name, (-1, -1))
        out.append(Tenant(name, buffer, offset, how, target, tuple(t.shape), t.nbytes // max(t.size, 1),
                          view.strides if view is not None else None, first, last, at_step.get(name, -1)))
    return out


def check_tenants(items: list[Tenant], buffer_bytes: dict[str, int],
                  lifetimes: dict[str, tuple[int, int]]) -> list[str]:
    """Problems with shared buffers: a tenant outside its buffer, two slots of one buffer live
    together on the same bytes, an in-place output whose input (or anything else in the buffer
    besides the output and its aliases) is still used after the operator."""
    problems = []
    for t in items:
        size = buffer_bytes.get(t.buffer)
        if size is not None and (t.offset < 0 or t.offset + t.byte_span() > size):
            problems.append(f"{t.name} ({t.how}) [{t.offset}, {t.offset + t.byte_span()}) outside "
                            f"{t.buffer} of {size} bytes")
    slots = [t for t in items if t.how == "slot"]
    for i, a in enumerate(slots):
        for b in slots[i + 1:]:
            if a.buffer != b.buffer or a.last < b.first or b.last < a.first or a.first < 0 or b.first < 0:
                continue
            if np.intersect1d(a.bytes(), b.bytes()).size:
                problems.append(f"slots {a.name} and {b.name} of {a.buffer} share bytes while both are live")
    links = {t.name: t for t in items}

    def aliases(name: str, target: str) -> bool:
        while name in links and links[name].how == "alias":
            name = links[name].target
            if name == target:
                return True
        return False

    for t in items:
        if t.how == "shifted":
            problems += _check_shifted(t, links, lifetimes)
        if t.how != "inplace":
            continue
        src = links.get(t.target)
        where = (src.buffer, src.offset) if src is not None else (t.target, 0)
        if where != (t.buffer, t.offset):
            problems.append(f"{t.name} runs in place of {t.target} but lies elsewhere")
        for name, (first, last) in lifetimes.items():
            if name == t.name or aliases(name, t.name) or not first <= t.step < last:
                continue
            owner = links[name].buffer if name in links else name
            if owner == t.buffer:
                problems.append(f"{t.name} overwrites {name} in place at step {t.step}, "
                                f"but {name} is still used at step {last}")
    return problems


def _check_shifted(t: Tenant, links: dict[str, Tenant], lifetimes: dict[str, tuple[int, int]]) -> list[str]:
    """A shifted input (and whatever else lives in its output's buffer before the step that first
    writes the output, besides the output and its aliases) must not be used after that step.
    Tensors first written later (an elementwise operator in place over the output) are the
    buffer's next tenants: :func:`check_tenants` checks them as in-place outputs."""
    start = lifetimes.get(t.target, (-1, -1))[0]
    problems = []
    for name, (first, last) in lifetimes.items():
        owner = links[name].buffer if name in links else name
        if owner != t.buffer or name == t.target or last <= start or first > start:
            continue
        chain = name
        while chain in links and links[chain].how == "alias":
            chain = links[chain].target
        if chain != t.target:
            problems.append(f"{name} lives in {t.buffer}, which {t.target} is written over from step {start}, "
                            f"but {name} is still used at step {last}")
    return problems
