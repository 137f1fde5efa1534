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
from .sharing import Storage, Tenant, check_tenants, choose_inplace, tenants, tensor_steps

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
    #: tensor name -> (buffer it lives in, byte offset there): pool buffers and model inputs/outputs
    storage: dict[str, tuple[str, int]] = field(default_factory=dict)
    #: tensors sharing a buffer: aliases, concatenation slots, in-place outputs (utvm.plan.sharing)
    tenants: list[Tenant] = field(default_factory=list)
    #: bytes of every buffer tenants live in (pool buffers and model inputs/outputs)
    buffer_bytes: dict[str, int] = field(default_factory=dict)
    #: tensor name -> first and last kernel-call step it is an argument of (outputs: to the end)
    lifetimes: dict[str, tuple[int, int]] = field(default_factory=dict)

    def check(self) -> list[str]:
        """Problems with the plan: overlapping live buffers, buffers outside the pool, unsafe
        sharing (slots overlapping, in-place outputs over data still needed)."""
        problems = check_tenants(self.tenants, self.buffer_bytes, self.lifetimes)
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
    """Assign pool offsets from the lifetimes of the tensors the kernel calls touch. Aliases and
    concatenation slots share their buffer; elementwise operators run in place where safe."""
    graph: Graph = lowered.graph
    storage = Storage(lowered)
    steps = len(lowered.calls)
    first: dict[str, int] = {}
    last: dict[str, int] = {}

    def touch(name: str, step: int) -> None:
        root = storage.root(name)
        first[root] = min(first.get(root, step), step)
        last[root] = max(last.get(root, step), step)

    for step, call in enumerate(lowered.calls):
        for arg in call.args:
            if not graph.tensors[storage.root(arg)].is_constant:
                touch(arg, step)

    io_roots: dict[str, str] = {}
    for name in graph.inputs:
        io_roots[storage.root(name)] = name
        touch(name, 0)  # written by the application before the run
    for name in graph.outputs:
        root = storage.root(name)
        io_roots.setdefault(root, name)
        touch(name, max(steps - 1, 0))
    inplace = choose_inplace(lowered, storage, first, last, io_roots)

    buffers: list[Buffer] = []
    external: dict[str, str] = {}
    input_roots = {storage.root(n) for n in graph.inputs}
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
        kind = "input" if root in input_roots else "output" if is_io else "tensor"
        buffers.append(Buffer(root, align_up(tensor.nbytes), first[root], last[root], kind=kind))

    scratch: dict[int, Buffer] = {}
    for step, call in enumerate(lowered.calls):
        if call.scratch_bytes:
            buf = Buffer(f"{call.symbol}_scratch", align_up(call.scratch_bytes), step, step, kind="scratch")
            scratch[step] = buf
            buffers.append(buf)

    pool_size = _best_placement(buffers)
    offsets = {b.name: b.offset for b in buffers if b.kind != "scratch"}
    places: dict[str, tuple[str, int]] = {}
    for name, t in graph.tensors.items():
        if t.is_constant:
            continue
        root, off = storage.resolve(name)
        if root in offsets:
            offsets[name] = offsets[root] + off
            places[name] = (root, off)
        elif root in external:
            external[name] = external[root]
            places[name] = (root, off)
    lifetimes = tensor_steps(lowered)
    shared = tenants(lowered, storage, inplace, lifetimes)
    sizes = {b.name: graph.tensors[b.name].nbytes for b in buffers if b.kind != "scratch"}
    sizes.update({root: graph.tensors[root].nbytes for root in external})
    return MemoryPlan(pool_size, buffers, offsets, scratch, external, state, state_size, places, shared, sizes,
                      lifetimes)


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
