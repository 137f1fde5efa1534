"""Patch-based execution of a CNN's first stage (``--memory-mode min``), as MCUNetV2 does.

A layer-by-layer plan needs at least the largest input + output of any one layer. The first
layers of a CNN have the largest activations; computing them patch by patch (each patch of the
stage's output computed through all the stage's layers before the next patch starts) keeps only
one patch of each intermediate alive at a time, at the cost of recomputing the overlapping halos.

:func:`split_stage` rewrites the graph: for a stage (the model's first convolutions, depthwise
convolutions and residual ADDs, up to an operator whose output alone leaves the stage) and a
grid, every operator becomes one operator per patch with the padding its patch needs (the real
padding at the image border, none inside: the halo is real data; a tensor read by several
operators holds the union of their regions, cut for each where they differ), the model input is cut into overlapping patches by slices, and the last layer's
patches are concatenations' slots of its original output tensor (rows of patches along W, the
rows along H). Every output pixel reads exactly the values it read before: outputs stay
bit-exact. :func:`choose_patches` tries stage depths and grids and keeps the one whose estimated
pool (tensor lifetimes placed as the planner does, without kernel scratch) is smallest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..ir import Graph, Operator, Tensor
from ..ops import get, macs
from ..ops.concatenation import join
from ..ops.strided_slice import window
from .memory import Buffer, _best_placement, align_up

#: patch grids tried (rows = columns)
GRIDS = (2, 3, 4, 5, 6, 8)


@dataclass
class PatchPlan:
    """The stage split into patches: its operators (names of their outputs), the grid, the MACs
    before and after (the recomputed halos), the estimated pools with and without patches."""

    stage: list[str]
    grid: tuple[int, int]
    macs_before: int
    macs_after: int
    estimated_pool: int
    estimated_pool_without: int
    #: per patch: (row0, row1, col0, col1) of the stage output it computes
    tiles: list[tuple[int, int, int, int]] = field(default_factory=list)

    @property
    def overhead(self) -> float:
        """Extra MACs of the stage recomputation, as a fraction of the model's MACs."""
        return self.macs_after / self.macs_before - 1 if self.macs_before else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"stage": self.stage, "layers": len(self.stage), "grid": list(self.grid),
                "macs_before": self.macs_before, "macs_after": self.macs_after,
                "mac_overhead": round(self.overhead, 4), "estimated_pool": self.estimated_pool,
                "estimated_pool_without_patches": self.estimated_pool_without,
                "tiles": [list(t) for t in self.tiles]}


def _spatial(graph: Graph, name: str) -> bool:
    t = graph.tensors[name]
    return len(t.shape) == 4 and t.shape[0] == 1 and t.data is None


def patch_stage(op: Operator) -> str | None:
    """How a stage may hold the operator (``OpDef.patch_stage``): "window", "elementwise" or None."""
    opdef = get(op.kind)
    return opdef.patch_stage if opdef is not None else None


def _activations(op: Operator) -> list[str]:
    """The activation inputs a patch of the operator reads a region of."""
    return [op.inputs[0]] if patch_stage(op) == "window" else list(op.inputs)


def _stage_op(graph: Graph, op: Operator) -> bool:
    """An operator a stage may hold: a convolution (constant weights) or an ADD of two same-shaped
    activations, on batch-1 NHWC tensors."""
    if len(op.outputs) != 1 or not _spatial(graph, op.outputs[0]):
        return False
    if patch_stage(op) == "window":
        return _spatial(graph, op.inputs[0]) and all(graph.tensors[n].data is not None for n in op.inputs[1:] if n)
    if patch_stage(op) == "elementwise":
        shape = graph.tensors[op.outputs[0]].shape
        return len(op.inputs) == 2 and all(_spatial(graph, n) and graph.tensors[n].shape == shape for n in op.inputs)
    return False


def stage_chain(graph: Graph) -> list[int]:
    """Indices of the operators that may end a stage: a stage is the model's first operators up to
    one of these (all convolutions or ADDs reading the model input or each other), whose output
    is the only tensor of the stage read after it."""
    readers: dict[str, list[int]] = {}
    for i, op in enumerate(graph.ops):
        for name in op.inputs:
            readers.setdefault(name, []).append(i)
    ends: list[int] = []
    produced: set[str] = set()
    for i, op in enumerate(graph.ops):
        if not _stage_op(graph, op):
            break
        activations = _activations(op)
        if any(x not in produced and x not in graph.inputs for x in activations):
            break
        produced.add(op.outputs[0])
        out = op.outputs[0]
        escaping = [t for t in produced if t in graph.outputs or any(r > i for r in readers.get(t, []))]
        if escaping == [out]:
            ends.append(i)
    return ends


def _bounds(n: int, parts: int) -> list[int]:
    return [round(i * n / parts) for i in range(parts + 1)]


def _window(op: Operator, graph: Graph, axis: int, lo: int, hi: int) -> tuple[int, int, int, int]:
    """Input range [a, b) (clipped to the input) and the padding before/after it that output
    range [lo, hi) along spatial ``axis`` (0: rows, 1: columns) needs (ADD: the same range)."""
    if patch_stage(op) == "elementwise":
        return lo, hi, 0, 0
    w = graph.tensors[op.inputs[1]]
    k = w.shape[1 + axis]
    s = op.attrs["strides"][axis]
    d = op.attrs["dilation"][axis]
    before = op.attrs["padding"][axis]
    size = graph.tensors[op.inputs[0]].shape[1 + axis]
    start = lo * s - before
    end = (hi - 1) * s - before + (k - 1) * d + 1
    a, b = max(start, 0), min(end, size)
    return a, b, a - start, end - b


Region = tuple[int, int, int, int]  # rows [r0, r1), columns [c0, c1)


def _needs(graph: Graph, stage: list[Operator], tile: Region) -> tuple[dict[str, Region], list[list[Region]], list[tuple[int, int, int, int]]]:
    """Backwards from the tile of the stage output: the region each tensor's patch must hold (the
    union of what its readers need), per operator the region each activation input must give it,
    and its padding."""
    region: dict[str, Region] = {stage[-1].outputs[0]: tile}
    wants: list[list[Region]] = [[] for _ in stage]
    pads: list[tuple[int, int, int, int]] = [(0, 0, 0, 0)] * len(stage)
    for k in range(len(stage) - 1, -1, -1):
        op = stage[k]
        r0, r1, c0, c1 = region[op.outputs[0]]
        a, b, pt, pb = _window(op, graph, 0, r0, r1)
        c, e, pl, pr = _window(op, graph, 1, c0, c1)
        pads[k] = (pt, pl, pb, pr)
        activations = _activations(op)
        for x in activations:
            wants[k].append((a, b, c, e))
            old = region.get(x)
            region[x] = (a, b, c, e) if old is None else (min(old[0], a), max(old[1], b), min(old[2], c), max(old[3], e))
    return region, wants, pads


def split_stage(graph: Graph, chain: list[int], grid: tuple[int, int]) -> tuple[Graph, list[Region]]:
    """The graph with its first ``chain[-1] + 1`` operators (a stage, :func:`stage_chain`)
    computed patch by patch on ``grid`` (rows, columns of patches of the stage's output)."""
    g = Graph(graph.name, dict(graph.tensors), [], list(graph.inputs), list(graph.outputs))
    stage = graph.ops[:chain[-1] + 1]
    last = graph.tensors[stage[-1].outputs[0]]
    rows, cols = _bounds(last.shape[1], grid[0]), _bounds(last.shape[2], grid[1])
    tiles = [(rows[i], rows[i + 1], cols[j], cols[j + 1]) for i in range(grid[0]) for j in range(grid[1])]
    single = len(tiles) == 1

    def tensor(like: Tensor, name: str, h: int, w: int) -> str:
        g.tensors[name] = Tensor(name, (like.shape[0], h, w, like.shape[3]), like.dtype, like.quant)
        return name

    def crop(name: str, have: Region, want: Region, tag: str) -> str:
        """``name`` (holding region ``have`` of its tensor) cut to region ``want``."""
        if have == want:
            return name
        out = tensor(g.tensors[name], f"{name}__{tag}", want[1] - want[0], want[3] - want[2])
        g.ops.append(window(name, out, (0, want[0] - have[0], want[2] - have[2], 0), f"patch {tag} of {name}"))
        return out

    row_parts: list[str] = []
    row_tensors: list[str] = []
    for t, tile in enumerate(tiles):
        region, wants, pads = _needs(graph, stage, tile)
        patch: dict[str, str] = {}
        for x in graph.inputs:
            if x in region:
                full = (0, graph.tensors[x].shape[1], 0, graph.tensors[x].shape[2])
                patch[x] = crop(x, full, region[x], f"patch{t}")
        for k, op in enumerate(stage):
            activations = _activations(op)
            args = [crop(patch[x], region[x], want, f"patch{t}_to{k}_{j}")
                    for j, (x, want) in enumerate(zip(activations, wants[k]))]
            out = graph.tensors[op.outputs[0]]
            r0, r1, c0, c1 = region[out.name]
            name = out.name if single else tensor(out, f"{out.name}__patch{t}", r1 - r0, c1 - c0)
            attrs = dict(op.attrs, padding=pads[k]) if patch_stage(op) == "window" else dict(op.attrs)
            g.ops.append(Operator(op.kind, [*args, *op.inputs[len(activations):]], [name], attrs,
                                  f"{op.source or op.kind} (patch {t})"))
            patch[out.name] = name
        row_parts.append(patch[last.name])
        if not single and (t + 1) % grid[1] == 0:
            i = t // grid[1]
            row = row_parts[0]
            if grid[1] > 1:
                row = last.name if grid[0] == 1 else tensor(last, f"{last.name}__row{i}", rows[i + 1] - rows[i],
                                                           last.shape[2])
                g.ops.append(join(row_parts, row, 2, f"patch row {i}"))
            row_tensors.append(row)
            row_parts = []
    if not single and grid[0] > 1:
        g.ops.append(join(row_tensors, last.name, 1, "patch rows"))
    g.ops += graph.ops[chain[-1] + 1:]
    return g, tiles


def estimate_pool(graph: Graph, io_in_pool: bool) -> int:
    """The pool the planner would reach, from tensor sizes and lifetimes alone (no kernel
    scratch): the inputs of an operator with slots (``OpDef.input_slots``, a concatenation) live
    in its output, a view that cuts rows only (``OpDef.view_of_input``, a slice) is in its input,
    an alias (``OpDef.alias``, a reshape) is its input."""
    container: dict[str, str] = {}
    slotted: set[int] = set()
    for op in graph.ops:
        opdef = get(op.kind)
        if opdef is None:
            continue
        if opdef.input_slots is not None:
            slotted.add(id(op))
            for name in op.inputs:
                container[name] = op.outputs[0]
        elif opdef.alias or (opdef.view_of_input is not None and _rows_only(graph, op)):
            container[op.outputs[0]] = op.inputs[0]

    def root(name: str) -> str:
        while name in container:
            name = container[name]
        return name

    first: dict[str, int] = {}
    last: dict[str, int] = {}
    step = 0
    for op in graph.ops:
        if id(op) in slotted or op.outputs[0] in container and root(op.outputs[0]) == root(op.inputs[0]):
            continue
        for name in [*op.inputs, *op.outputs]:
            if name and graph.tensors[name].data is None:
                r = root(name)
                first.setdefault(r, step)
                last[r] = step
        step += 1
    end = max(step - 1, 0)
    io = {root(n) for n in [*graph.inputs, *graph.outputs]}
    for name in graph.inputs:
        first[root(name)] = 0
    for name in graph.outputs:
        last[root(name)] = end
    buffers = [Buffer(r, align_up(graph.tensors[r].nbytes), first[r], last[r]) for r in first
               if io_in_pool or r not in io]
    return _best_placement(buffers)


def _rows_only(graph: Graph, op: Operator) -> bool:
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    return len(x.shape) == 4 and x.shape[0] == 1 and tuple(x.shape[2:]) == tuple(y.shape[2:])


def choose_patches(graph: Graph, io_in_pool: bool, max_overhead: float = 0.5) -> tuple[Graph, PatchPlan | None]:
    """The graph with the stage depth and grid that minimise the estimated pool (ties: fewer
    MACs; at most ``max_overhead`` more MACs), or the graph unchanged (None) when no split
    lowers it."""
    chain = stage_chain(graph)
    before = sum(macs(graph, op) for op in graph.ops)
    baseline = estimate_pool(graph, io_in_pool)
    best: tuple[int, int, Graph, PatchPlan] | None = None
    for end in chain:
        out = graph.tensors[graph.ops[end].outputs[0]]
        if end < 1:
            continue
        for k in GRIDS:
            if k > min(out.shape[1], out.shape[2]):
                continue
            g, tiles = split_stage(graph, [end], (k, k))
            after = sum(macs(g, op) for op in g.ops)
            if before and after / before - 1 > max_overhead:
                continue
            pool = estimate_pool(g, io_in_pool)
            if best is None or (pool, after) < (best[0], best[1]):
                stage = [op.outputs[0] for op in graph.ops[:end + 1]]
                best = (pool, after, g, PatchPlan(stage, (k, k), before, after, pool, baseline, tiles))
    if best is None or best[0] >= baseline:
        return graph, None
    return best[2], best[3]
