"""Static memory planning: every intermediate tensor and kernel scratch gets an offset in one pool.

Lifetimes are measured in kernel-call steps. Buffers whose lifetimes do not overlap may share
bytes. Placement is greedy by size (largest first, lowest offset that fits beside every
already placed buffer it overlaps in time), the approach of TFLite Micro's greedy planner and
TVM's old USMP "greedy_by_size".
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..ir import Graph
from ..lower.lowering import Lowered

ALIGN = 16


def align_up(n: int, a: int = ALIGN) -> int:
    return (n + a - 1) // a * a


@dataclass
class Buffer:
    """One block of the pool: a tensor (or kernel scratch) with its lifetime [first, last]."""

    name: str
    size: int
    first: int
    last: int
    offset: int = -1
    kind: str = "tensor"  # tensor, scratch, input, output

    def overlaps_in_time(self, other: Buffer) -> bool:
        return self.first <= other.last and other.first <= self.last

    def overlaps_in_space(self, other: Buffer) -> bool:
        return self.offset < other.offset + other.size and other.offset < self.offset + self.size


@dataclass
class MemoryPlan:
    pool_size: int
    buffers: list[Buffer]
    #: tensor name -> (offset in pool) for every tensor living in the pool, aliases included
    offsets: dict[str, int] = field(default_factory=dict)
    #: kernel call index -> scratch buffer
    scratch: dict[int, Buffer] = field(default_factory=dict)
    #: tensor name -> graph input/output it aliases, for tensors that live in application buffers
    external: dict[str, str] = field(default_factory=dict)
    #: variable tensor (state kept between runs) -> offset in the state buffer, outside the pool
    state: dict[str, int] = field(default_factory=dict)
    state_size: int = 0

    def check(self) -> list[str]:
        """Problems with the plan: overlapping live buffers, buffers outside the pool."""
        problems = []
        for i, a in enumerate(self.buffers):
            if a.offset < 0 or a.offset + a.size > self.pool_size:
                problems.append(f"{a.name} [{a.offset}, {a.offset + a.size}) outside pool of {self.pool_size}")
            if a.offset % ALIGN:
                problems.append(f"{a.name} offset {a.offset} not {ALIGN}-aligned")
            for b in self.buffers[i + 1:]:
                if a.overlaps_in_time(b) and a.overlaps_in_space(b):
                    problems.append(f"{a.name} and {b.name} are live together and overlap")
        return problems


def resolve_alias(name: str, aliases: dict[str, str]) -> str:
    while name in aliases:
        name = aliases[name]
    return name


def plan_memory(lowered: Lowered, io_in_pool: bool = False) -> MemoryPlan:
    """Assign pool offsets from the lifetimes of the tensors the kernel calls touch."""
    graph: Graph = lowered.graph
    aliases = lowered.aliases
    steps = len(lowered.calls)
    first: dict[str, int] = {}
    last: dict[str, int] = {}

    def touch(name: str, step: int) -> None:
        root = resolve_alias(name, aliases)
        first[root] = min(first.get(root, step), step)
        last[root] = max(last.get(root, step), step)

    for step, call in enumerate(lowered.calls):
        for arg in call.args:
            if not graph.tensors[resolve_alias(arg, aliases)].is_constant:
                touch(arg, step)

    io_roots: dict[str, str] = {}
    for name in graph.inputs:
        io_roots[resolve_alias(name, aliases)] = name
        touch(name, 0)  # written by the application before the run
    for name in graph.outputs:
        root = resolve_alias(name, aliases)
        io_roots.setdefault(root, name)
        touch(name, max(steps - 1, 0))

    buffers: list[Buffer] = []
    external: dict[str, str] = {}
    state: dict[str, int] = {}
    state_size = 0
    for root in first:
        tensor = graph.tensors[root]
        if tensor.variable:  # kept between runs: its own buffer, one after the other
            state[root] = state_size
            state_size = align_up(state_size + tensor.nbytes)
            continue
        is_io = root in io_roots
        if is_io and not io_in_pool:
            external[root] = io_roots[root]
            continue
        kind = "tensor"
        if root in (resolve_alias(n, aliases) for n in graph.inputs):
            kind = "input"
        elif root in (resolve_alias(n, aliases) for n in graph.outputs):
            kind = "output"
        buffers.append(Buffer(root, align_up(tensor.nbytes), first[root], last[root], kind=kind))

    scratch: dict[int, Buffer] = {}
    for step, call in enumerate(lowered.calls):
        if call.scratch_bytes:
            buf = Buffer(f"{call.symbol}_scratch", align_up(call.scratch_bytes), step, step, kind="scratch")
            scratch[step] = buf
            buffers.append(buf)

    pool_size = _best_placement(buffers)
    offsets = {b.name: b.offset for b in buffers if b.kind != "scratch"}
    for name in graph.tensors:
        root = resolve_alias(name, aliases)
        if root != name and root in offsets:
            offsets[name] = offsets[root]
        if root != name and root in external:
            external[name] = external[root]
    return MemoryPlan(pool_size, buffers, offsets, scratch, external, state, state_size)


_ORDERS = {
    "size": lambda b: (-b.size, b.first, b.name),
    "area": lambda b: (-b.size * (b.last - b.first + 1), -b.size, b.name),
    "first_use": lambda b: (b.first, -b.size, b.name),
    "lifetime": lambda b: (-(b.last - b.first), -b.size, b.name),
}


def _best_placement(buffers: list[Buffer]) -> int:
    """Greedy placement under several orders; keep the smallest pool."""
    best: tuple[int, list[int]] | None = None
    for order in _ORDERS.values():
        size = _greedy(buffers, order)
        if best is None or size < best[0]:
            best = (size, [b.offset for b in buffers])
    assert best is not None
    for buf, offset in zip(buffers, best[1]):
        buf.offset = offset
    return best[0]


def _greedy_by_size(buffers: list[Buffer]) -> int:
    return _greedy(buffers, _ORDERS["size"])


def _greedy(buffers: list[Buffer], order) -> int:  # type: ignore[no-untyped-def]
    placed: list[Buffer] = []
    for buf in sorted(buffers, key=order):
        conflicts = sorted((p for p in placed if p.overlaps_in_time(buf)), key=lambda p: p.offset)
        offset = 0
        for p in conflicts:
            if offset + buf.size <= p.offset:
                break
            offset = max(offset, align_up(p.offset + p.size))
        buf.offset = offset
        placed.append(buf)
    return max((b.offset + b.size for b in buffers), default=0)
