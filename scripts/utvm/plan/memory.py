"""Static memory planning: every intermediate tensor and kernel scratch gets an offset in one pool.

Lifetimes are measured in kernel-call steps. Buffers whose lifetimes do not overlap may share
bytes. Placement is greedy by size (largest first, lowest offset that fits beside every
already placed buffer it overlaps in time), the approach of TFLite Micro's greedy planner and
TVM's old USMP "greedy_by_size".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import UtvmError
from ..ir import Graph
from ..lower.lowering import Lowered
from .sharing import Storage, Tenant, check_tenants, choose_inplace, choose_shifted, tenants, tensor_steps

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
    #: index of the pool it is placed in (MemoryPlan.pools)
    pool: int = 0

    def overlaps_in_time(self, other: Buffer) -> bool:
        return self.first <= other.last and other.first <= self.last

    def overlaps_in_space(self, other: Buffer) -> bool:
        return (self.pool == other.pool and self.offset < other.offset + other.size
                and other.offset < self.offset + self.size)


@dataclass(frozen=True)
class Pool:
    """One workspace pool: its name (a C identifier; "" for the default single pool), the bytes
    the plan uses and the bytes it may have (``capacity``, None: unbounded)."""

    name: str
    size: int
    capacity: int | None = None


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
    #: the pools, in order of preference (one unnamed pool unless --pool was given)
    pools: list[Pool] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.pools:
            self.pools = [Pool("", self.pool_size)]

    def pool_of(self, tensor: str) -> int:
        """Index in ``pools`` of the pool holding ``tensor`` (a pool tensor or its tenant)."""
        root = self.storage.get(tensor, (tensor, 0))[0]
        for b in self.buffers:
            if b.name == root:
                return b.pool
        return 0

    def check(self) -> list[str]:
        """Problems with the plan: overlapping live buffers, buffers outside the pool, unsafe
        sharing (slots overlapping, in-place outputs over data still needed)."""
        problems = check_tenants(self.tenants, self.buffer_bytes, self.lifetimes)
        for i, a in enumerate(self.buffers):
            size = self.pools[a.pool].size if a.pool < len(self.pools) else -1
            if a.offset < 0 or a.offset + a.size > size:
                problems.append(f"{a.name} [{a.offset}, {a.offset + a.size}) outside pool of {size}")
            if a.offset % ALIGN:
                problems.append(f"{a.name} offset {a.offset} not {ALIGN}-aligned")
            for b in self.buffers[i + 1:]:
                if a.overlaps_in_time(b) and a.overlaps_in_space(b):
                    problems.append(f"{a.name} and {b.name} are live together and overlap")
        return problems


def step_heights(plan: MemoryPlan, symbols: Sequence[str], own: bool = False) -> dict[int, int]:
    """Per kernel call (``symbols`` in call order): the pool bytes in use at that step apart from
    the call's own scratch and temporaries (``own``: with them)."""
    out = {}
    for step, symbol in enumerate(symbols):
        mine = set() if own else {b.name for b in plan.buffers if b.first == b.last == step
                                  and (b.kind == "scratch" or b.name.startswith(symbol + "_"))}
        live = [b for b in plan.buffers if b.first <= step <= b.last and b.name not in mine]
        out[step] = max((b.offset + b.size for b in live), default=0)
    return out


def resolve_alias(name: str, aliases: dict[str, str]) -> str:
    while name in aliases:
        name = aliases[name]
    return name


def plan_memory(lowered: Lowered, io_in_pool: bool = False, pools: Sequence[tuple[str, int]] = (),
                reserved: Sequence[tuple[int, int]] = ()) -> MemoryPlan:
    """Assign pool offsets from the lifetimes of the tensors the kernel calls touch. Aliases and
    concatenation slots share their buffer; elementwise operators run in place where safe.
    Depthwise convolutions run in place over their input (``choose_shifted``) when that makes
    the pool smaller: the plan is made with and without, and the smaller kept.

    ``pools`` (name, bytes), in order of preference: several pools of bounded size, the hottest
    buffers in the first (:func:`assign_pools`; :class:`PoolsTooSmall` when they do not fit).
    ``reserved`` (offset, bytes): regions of the (first) pool the plan must not use at all, such
    as another model's output kept alive while this model runs (``--keep``)."""
    plans: list[MemoryPlan] = []
    error: PoolsTooSmall | None = None
    for shift in (False, True):
        try:
            plans.append(_plan(lowered, io_in_pool, pools, reserved, shift))
        except PoolsTooSmall as exc:
            error = error or exc
    if not plans:
        assert error is not None
        raise error
    return min(plans, key=lambda p: p.pool_size)  # the first (unshifted) on a tie


def _plan(lowered: Lowered, io_in_pool: bool, pools: Sequence[tuple[str, int]], reserved: Sequence[tuple[int, int]],
          shift: bool) -> MemoryPlan:
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
    extents = choose_shifted(lowered, storage, first, last, io_roots) if shift else {}

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
        buffers.append(Buffer(root, align_up(extents.get(root, tensor.nbytes)), first[root], last[root], kind=kind))

    scratch: dict[int, Buffer] = {}
    for step, call in enumerate(lowered.calls):
        if call.scratch_bytes:
            buf = Buffer(f"{call.symbol}_scratch", align_up(call.scratch_bytes), step, step, kind="scratch")
            scratch[step] = buf
            buffers.append(buf)

    fixed = [Buffer(f"reserved{i}", align_up(size), 0, max(steps - 1, 0), offset, kind="reserved")
             for i, (offset, size) in enumerate(reserved)]
    if pools:
        pool_list = assign_pools(buffers, list(pools), fixed)
        pool_size = sum(align_up(p.size) for p in pool_list)
    else:
        pool_size = _best_placement(buffers, fixed)
        pool_list = [Pool("", pool_size)]
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
    sizes = {b.name: extents.get(b.name, graph.tensors[b.name].nbytes) for b in buffers if b.kind != "scratch"}
    sizes.update({root: graph.tensors[root].nbytes for root in external})
    return MemoryPlan(pool_size, buffers, offsets, scratch, external, state, state_size, places, shared, sizes,
                      lifetimes, pool_list)


class PoolsTooSmall(UtvmError):
    """The buffers of a plan do not fit the pools given (``--pool NAME:BYTES``)."""


def _heat(buf: Buffer) -> tuple[int, int, int, str]:
    """Sort key, hottest first: kernel scratch (im2col rows, padded rows: read over and over by
    their kernel), then the activations, smallest first (every activation byte is written once
    and read about as often as any other, so the small ones put the most tensors in the fast
    pool), earliest first."""
    return (0 if buf.kind == "scratch" else 1, buf.size, buf.first, buf.name)


def assign_pools(buffers: list[Buffer], pools: list[tuple[str, int]], fixed: Sequence[Buffer] = ()) -> list[Pool]:
    """Place ``buffers`` into ``pools`` (name, capacity), in order of preference: when the whole
    plan fits the first pool it all goes there; otherwise each pool in turn takes, hottest first,
    every remaining buffer with which its members (and, in pool 0, the ``fixed`` ones) can still be
    placed within its capacity. Raises :class:`PoolsTooSmall` (one line: the
    need and the sizes) when a buffer fits nowhere."""
    need = _best_placement(buffers, fixed)
    if need <= pools[0][1]:
        return [Pool(name, need if i == 0 else 0, cap) for i, (name, cap) in enumerate(pools)]
    remaining = sorted(buffers, key=_heat)
    out = []
    for index, (name, cap) in enumerate(pools):
        here = fixed if index == 0 else ()
        members: list[Buffer] = []
        for buf in remaining:
            if _best_placement([*members, buf], here) <= cap:
                members.append(buf)
        taken = {id(b) for b in members}
        remaining = [b for b in remaining if id(b) not in taken]
        size = _best_placement(members, here) if members else 0
        for buf in members:
            buf.pool = index
        out.append(Pool(name, size, cap))
    if remaining:
        sizes = ", ".join(f"{name} {cap}" for name, cap in pools)
        largest = max(b.size for b in buffers)
        raise PoolsTooSmall(f"the model needs {need} bytes of workspace (one pool; largest buffer {largest}), "
                            f"which do not fit the pools given: {sizes} bytes")
    return out


_ORDERS = {
    "size": lambda b: (-b.size, b.first, b.name),
    "area": lambda b: (-b.size * (b.last - b.first + 1), -b.size, b.name),
    "first_use": lambda b: (b.first, -b.size, b.name),
    "lifetime": lambda b: (-(b.last - b.first), -b.size, b.name),
}


def _best_placement(buffers: list[Buffer], fixed: Sequence[Buffer] = ()) -> int:
    """Greedy placement under several orders (beside the already placed ``fixed`` buffers);
    keep the smallest pool."""
    best: tuple[int, list[int]] | None = None
    for order in _ORDERS.values():
        size = _greedy(buffers, order, fixed)
        if best is None or size < best[0]:
            best = (size, [b.offset for b in buffers])
    assert best is not None
    for buf, offset in zip(buffers, best[1]):
        buf.offset = offset
    return best[0]


def _greedy_by_size(buffers: list[Buffer]) -> int:
    return _greedy(buffers, _ORDERS["size"])


def _greedy(buffers: list[Buffer], order, fixed: Sequence[Buffer] = ()) -> int:  # type: ignore[no-untyped-def]
    placed: list[Buffer] = list(fixed)
    for buf in sorted(buffers, key=order):
        buf.offset = _first_fit(buf, placed)
        placed.append(buf)
    return max((b.offset + b.size for b in placed), default=0)


def _first_fit(buf: Buffer, placed: Sequence[Buffer]) -> int:
    """The lowest aligned offset where ``buf`` overlaps none of ``placed`` live at the same time."""
    conflicts = sorted((p for p in placed if p.overlaps_in_time(buf)), key=lambda p: p.offset)
    offset = 0
    for p in conflicts:
        if offset + buf.size <= p.offset:
            break
        offset = max(offset, align_up(p.offset + p.size))
    return offset
