"""Patch-based execution of a CNN's first stage (``--memory-mode min``), as MCUNetV2 does.

A layer-by-layer plan needs at least the largest input + output of any one layer. The first
layers of a CNN have the largest activations; computing them patch by patch (each patch of the
stage's output computed through all the stage's layers before the next patch starts) keeps only
one patch of each intermediate alive at a time, at the cost of recomputing the overlapping halos.

:func:`split_stage` rewrites the graph: for a stage (a chain of convolutions and depthwise
convolutions from the start of the model) and a grid, every layer becomes one operator per patch
with the padding its patch needs (the real padding at the image border, none inside: the halo
is real data), the model input is cut into overlapping patches by slices, and the last layer's
patches are concatenations' slots of its original output tensor (rows of patches along W, the
rows along H). Every output pixel reads exactly the values it read before: outputs stay
bit-exact. :func:`choose_patches` tries stage depths and grids and keeps the one whose estimated
pool (tensor lifetimes placed as the planner does, without kernel scratch) is smallest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..ir import Graph, Operator, Tensor
from .memory import Buffer, _best_placement, align_up

#: operators a stage may hold (NHWC, one activation input, one output)
STAGE_KINDS = ("conv2d", "depthwise_conv2d")
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


def stage_chain(graph: Graph) -> list[int]:
    """Indices of the longest chain of stage operators from the model's input: each reads the
    previous one's output (the first, a model input), which nothing else reads."""
    consumers: dict[str, int] = {}
    for op in graph.ops:
        for name in op.inputs:
            consumers[name] = consumers.get(name, 0) + 1
    chain: list[int] = []
    source = None
    for i, op in enumerate(graph.ops):
        if op.kind not in STAGE_KINDS or len(op.outputs) != 1:
            break
        x = op.inputs[0]
        if source is None:
            if x not in graph.inputs or len(graph.tensors[x].shape) != 4:
                break
        elif x != source or consumers.get(x, 0) != 1 or x in graph.outputs:
            break
        if any(graph.tensors[n].data is None for n in op.inputs[1:] if n):
            break
        chain.append(i)
        source = op.outputs[0]
    return chain


def _bounds(n: int, parts: int) -> list[int]:
    return [round(i * n / parts) for i in range(parts + 1)]


def _window(op: Operator, graph: Graph, axis: int, lo: int, hi: int) -> tuple[int, int, int, int]:
    """Input range [a, b) (clipped to the input) and the padding before/after it that output
    range [lo, hi) along spatial ``axis`` (0: rows, 1: columns) needs."""
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


def split_stage(graph: Graph, chain: list[int], grid: tuple[int, int]) -> tuple[Graph, list[tuple[int, int, int, int]]]:
    """The graph with the operators ``chain`` (a :func:`stage_chain` prefix) computed patch by
    patch on ``grid`` (rows, columns of patches of the last layer's output)."""
    g = Graph(graph.name, dict(graph.tensors), [], list(graph.inputs), list(graph.outputs))
    stage = [graph.ops[i] for i in chain]
    last = graph.tensors[stage[-1].outputs[0]]
    rows, cols = _bounds(last.shape[1], grid[0]), _bounds(last.shape[2], grid[1])
    tiles = [(rows[i], rows[i + 1], cols[j], cols[j + 1]) for i in range(grid[0]) for j in range(grid[1])]

    def tensor(like: Tensor, name: str, h: int, w: int) -> str:
        g.tensors[name] = Tensor(name, (like.shape[0], h, w, like.shape[3]), like.dtype, like.quant)
        return name

    row_parts: list[str] = []
    row_tensors: list[str] = []
    for t, (r0, r1, c0, c1) in enumerate(tiles):
        # backwards: the region each layer must produce for this patch, and its padding
        regions = [(r0, r1, c0, c1)]
        pads = []
        for op in reversed(stage):
            a, b, pt, pb = _window(op, graph, 0, regions[0][0], regions[0][1])
            c, e, pl, pr = _window(op, graph, 1, regions[0][2], regions[0][3])
            regions.insert(0, (a, b, c, e))
            pads.insert(0, (pt, pl, pb, pr))
        x = graph.tensors[stage[0].inputs[0]]
        a, b, c, e = regions[0]
        source = x.name
        if (b - a, e - c) != tuple(x.shape[1:3]):
            source = tensor(x, f"{x.name}__patch{t}", b - a, e - c)
            g.ops.append(Operator("strided_slice", [x.name], [source],
                                  {"begin": (0, a, c, 0), "strides": (1, 1, 1, 1), "out_axes": (0, 1, 2, 3)},
                                  f"patch {t} of {x.name}"))
        for op, (pt, pl, pb, pr), (a, b, c, e) in zip(stage, pads, regions[1:]):
            out = graph.tensors[op.outputs[0]]
            name = out.name if len(tiles) == 1 else tensor(out, f"{out.name}__patch{t}", b - a, e - c)
            g.ops.append(Operator(op.kind, [source, *op.inputs[1:]], [name], dict(op.attrs, padding=(pt, pl, pb, pr)),
                                  f"{op.source or op.kind} (patch {t})"))
            source = name
        row_parts.append(source)
        if len(tiles) > 1 and (t + 1) % grid[1] == 0:
            i = t // grid[1]
            row = row_parts[0]
            if grid[1] > 1:
                row = last.name if grid[0] == 1 else tensor(last, f"{last.name}__row{i}", rows[i + 1] - rows[i],
                                                           last.shape[2])
                g.ops.append(Operator("concatenation", row_parts, [row], {"axis": 2}, f"patch row {i}"))
            row_tensors.append(row)
            row_parts = []
    if len(tiles) > 1 and grid[0] > 1:
        g.ops.append(Operator("concatenation", row_tensors, [last.name], {"axis": 1}, "patch rows"))
    in_stage = set(chain)
    g.ops += [op for i, op in enumerate(graph.ops) if i not in in_stage]
    return g, tiles


def estimate_pool(graph: Graph, io_in_pool: bool) -> int:
    """The pool the planner would reach, from tensor sizes and lifetimes alone (no kernel
    scratch): a concatenation's inputs live in its output (slots), a slice along rows only is a
    view of its input, a reshape is its input."""
    container: dict[str, str] = {}
    for op in graph.ops:
        if op.kind == "concatenation":
            for name in op.inputs:
                container[name] = op.outputs[0]
        elif op.kind == "reshape" or (op.kind == "strided_slice" and _rows_only(graph, op)):
            container[op.outputs[0]] = op.inputs[0]

    def root(name: str) -> str:
        while name in container:
            name = container[name]
        return name

    first: dict[str, int] = {}
    last: dict[str, int] = {}
    step = 0
    for op in graph.ops:
        if op.kind == "concatenation" or op.outputs[0] in container and op.kind != "concatenation" \
                and root(op.outputs[0]) == root(op.inputs[0]):
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
    from ..ops import macs

    chain = stage_chain(graph)
    before = sum(macs(graph, op) for op in graph.ops)
    baseline = estimate_pool(graph, io_in_pool)
    best: tuple[int, int, Graph, PatchPlan] | None = None
    for n in range(2, len(chain) + 1):
        out = graph.tensors[graph.ops[chain[n - 1]].outputs[0]]
        for k in GRIDS:
            if k > min(out.shape[1], out.shape[2]):
                continue
            g, tiles = split_stage(graph, chain[:n], (k, k))
            after = sum(macs(g, op) for op in g.ops)
            if before and after / before - 1 > max_overhead:
                continue
            pool = estimate_pool(g, io_in_pool)
            if best is None or (pool, after) < (best[0], best[1]):
                stage = [graph.ops[i].outputs[0] for i in chain[:n]]
                best = (pool, after, g, PatchPlan(stage, (k, k), before, after, pool, baseline, tiles))
    if best is None or best[0] >= baseline:
        return graph, None
    return best[2], best[3]
