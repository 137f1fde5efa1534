#!/usr/bin/env python3
"""Draw a compiled model's workspace-pool plan: one rectangle per buffer, step against offset.

Each pool buffer (from the MLF ``metadata.json``, ``modules.<name>.memory_plan``) is a
rectangle from kernel-call step ``first`` to ``last + 1`` and from byte ``offset`` to
``offset + size``, coloured by kind (tensor / scratch / input / output) and labelled with a
short tensor name. A dashed line marks the pool size; a thin step line shows the bytes live
at each step (what a perfect packing would need), so the gap between the two is fragmentation.
Tensors that share a buffer (``memory_sharing``) are drawn over it, hatched: concatenation
slots that their producers write straight into (``//``) and elementwise outputs written over
their input in place (``xx``); slots in model outputs (outside the pool) are counted at the side.

    python3 benchmarks/plot_memory_plan.py MODEL.tflite|MLF_DIR|metadata.json ... [--out-dir DIR]

Writes ``<out-dir>/memory_plan_<model>.png`` (default ``benchmarks/results``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch, Rectangle  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"

#: hatching of tensors that share a buffer, by how they share it
SHARED_HATCHES: dict[str, tuple[str, str]] = {
    "slot": ("//", "slot written by its producer"),
    "inplace": ("xx", "written in place over its input"),
    "shifted": ("\\\\", "input of a depthwise layer run in place (output written over it)"),
}

KIND_COLOURS: dict[str, str] = {
    "tensor": "#4c72b0",
    "scratch": "#dd8452",
    "input": "#55a868",
    "output": "#c44e52",
}
#: Op-name endings that say nothing about which layer a tensor belongs to.
_GENERIC_TAILS = {"Relu", "Relu6", "BiasAdd", "add", "AvgPool", "MatMul", "Conv2D", "depthwise",
                  "FusedBatchNormV3", "Reshape", "Softmax", "MaxPool", "Mean"}


@dataclass(frozen=True)
class PlanBuffer:
    name: str
    kind: str
    offset: int
    size: int
    first: int
    last: int


@dataclass(frozen=True)
class Shared:
    """A tensor living inside ``buffer``: a slot, an in-place output or an alias."""

    name: str
    buffer: str
    how: str
    offset: int
    size: int
    first: int
    last: int


@dataclass(frozen=True)
class Plan:
    model: str
    pool_size: int
    buffers: list[PlanBuffer]
    shared: list[Shared] = field(default_factory=list)
    #: --memory-mode min: "<layers> layers on a <g>x<g> grid, +x% MACs" (buffers of a patch: "#p<i>")
    patches: str = ""


def plan_from_metadata(metadata: Mapping[str, Any] | Path) -> Plan:
    """The pool plan of the (only) module of an MLF ``metadata.json`` (a path or the parsed dict)."""
    meta: Mapping[str, Any]
    if isinstance(metadata, Path):
        meta = json.loads(metadata.read_text())
    else:
        meta = metadata
    modules = meta["modules"]
    name, module = next(iter(modules.items()))
    pool = int(module["memory"]["functions"]["main"][0]["workspace_size_bytes"])
    # several pools (--pool NAME:BYTES): drawn one above the other, in their order
    base: dict[str, int] = {}
    top = 0
    for p in module.get("pools", []):
        base[str(p["name"])] = top
        top += (int(p["size"]) + 15) // 16 * 16
    buffers = [PlanBuffer(str(b["name"]), str(b["kind"]), base.get(str(b.get("pool", "")), 0) + int(b["offset"]),
                          int(b["size"]), int(b["first"]), int(b["last"]))
               for b in module.get("memory_plan", [])]
    shared = [Shared(str(t["name"]), str(t["buffer"]), str(t["how"]), int(t["offset"]), int(t["size"]),
                     int(t["first"]), int(t["last"]))
              for t in module.get("memory_sharing", [])]
    pp = module.get("patch_plan")
    patches = (f"first {pp['layers']} layers patch by patch on a {pp['grid'][0]}x{pp['grid'][1]} grid, "
               f"+{pp['mac_overhead']:.1%} MACs" if pp else "")
    return Plan(model=str(name), pool_size=pool, buffers=buffers, shared=shared, patches=patches)


def _common_prefix(names: Sequence[str]) -> str:
    """The first path component ("model/", "functional_1/") if every tensor name shares it."""
    heads = {n.split(";")[0].split("/")[0] for n in names if "/" in n.split(";")[0]}
    tensors = [n for n in names if "/" in n.split(";")[0]]
    if len(heads) == 1 and len(tensors) >= 2:
        return heads.pop() + "/"
    return ""


def short_name(name: str, kind: str, model: str = "", prefix: str = "", limit: int = 22) -> str:
    """A label that fits a rectangle: the layer name of a TFLite tensor, the op of a scratch."""
    if kind == "scratch":
        text = name.removesuffix("_scratch")
        for p in (f"tvmgen_{model}_", "tvmgen_"):
            if text.startswith(p):
                text = text[len(p):]
                break
        text = "scratch " + text.removeprefix("fused_")
    else:
        text = name.split(";")[0]
        if prefix and text.startswith(prefix):
            text = text[len(prefix):]
        parts = [p for p in text.split("/") if p]
        if len(parts) > 1 and parts[-1] in _GENERIC_TAILS:
            parts = parts[:-1]
        text = "/".join(parts[-2:]) if parts else name
    text, _, patch = text.partition("__patch")
    patch = f" #p{patch}" if patch else ""
    if len(text) + len(patch) > limit:
        text = text[: max(limit - 1 - len(patch), 1)] + "\u2026"
    return text + patch


def _live_bytes(plan: Plan, steps: int) -> list[int]:
    live = [0] * steps
    for b in plan.buffers:
        for s in range(b.first, b.last + 1):
            if 0 <= s < steps:
                live[s] += b.size
    return live


def plot_plan(plan: Plan, out: Path, title: str | None = None) -> Path:
    """Draw ``plan`` into the PNG ``out`` (its directory is created) and return ``out``."""
    steps = max((b.last + 1 for b in plan.buffers), default=1)
    top = max([plan.pool_size, *(b.offset + b.size for b in plan.buffers), 1])
    width = min(max(8.0, 0.42 * steps + 3.0), 20.0)
    fig, ax = plt.subplots(figsize=(width, 5.5), dpi=100)
    ax.set_xlim(0, steps)
    ax.set_ylim(0, top * 1.08)
    fig.canvas.draw()  # fixes the data-to-pixel transform used to size labels
    prefix = _common_prefix([b.name for b in plan.buffers])
    to_px = ax.transData.transform
    for b in plan.buffers:
        colour = KIND_COLOURS.get(b.kind, "#8c8c8c")
        rect = Rectangle((b.first, b.offset), b.last + 1 - b.first, b.size, facecolor=colour,
                         edgecolor="black", linewidth=0.6, alpha=0.75)
        ax.add_patch(rect)
        (x0, y0), (x1, y1) = to_px((b.first, b.offset)), to_px((b.last + 1, b.offset + b.size))
        w_px, h_px = abs(x1 - x0), abs(y1 - y0)
        if max(w_px, h_px) < 18 or min(w_px, h_px) < 7:
            continue  # too small for any text
        label = short_name(b.name, b.kind, plan.model, prefix)
        vertical = h_px > w_px * 1.3 and w_px < 6.5 * len(label)
        text = ax.text(b.first + (b.last + 1 - b.first) / 2, b.offset + b.size / 2, label,
                       ha="center", va="center", fontsize=7, color="white",
                       rotation=90 if vertical else 0)
        text.set_clip_path(rect)
    _draw_shared(ax, plan)
    live = _live_bytes(plan, steps)
    ax.stairs(live, range(steps + 1), color="#e6a700", linewidth=1.6, linestyle="-",
              label="bytes live at the step", zorder=3)
    ax.axhline(plan.pool_size, color="black", linestyle="--", linewidth=1.2)
    ax.annotate(f"pool {plan.pool_size:,} B", xy=(steps, plan.pool_size), xytext=(-4, 3),
                textcoords="offset points", ha="right", va="bottom", fontsize=8)
    ax.set_xlabel("kernel-call step")
    ax.set_ylabel("offset in the workspace pool (bytes)")
    ax.xaxis.get_major_locator().set_params(integer=True)
    n_slots = sum(t.how == "slot" for t in plan.shared)
    n_inplace = sum(t.how in ("inplace", "shifted") for t in plan.shared)
    sharing = f", {n_slots} slots, {n_inplace} in place" if n_slots or n_inplace else ""
    ax.set_title(title or f"{plan.model}: memory plan, {len(plan.buffers)} buffers{sharing}, "
                 f"pool {plan.pool_size:,} B, peak live {max(live, default=0):,} B"
                 + (f"\n{plan.patches}" if plan.patches else ""), fontsize=10)
    kinds = [k for k in KIND_COLOURS if any(b.kind == k for b in plan.buffers)]
    handles: list[Any] = [Patch(facecolor=KIND_COLOURS[k], edgecolor="black", alpha=0.75, label=k)
                          for k in kinds]
    for how, (hatch, text) in SHARED_HATCHES.items():
        if any(t.how == how for t in plan.shared):
            handles.append(Patch(facecolor="none", edgecolor="black", hatch=hatch, label=text))
    handles.append(ax.get_legend_handles_labels()[0][0])
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize=8,
              frameon=False)
    if not any(b.kind in ("input", "output") for b in plan.buffers):
        ax.text(1.005, 0.0, "inputs and outputs\nlive outside the pool\n(--io-in-pool puts\nthem inside)",
                transform=ax.transAxes, ha="left", va="bottom", fontsize=7, color="#555555")
    outside = [t for t in plan.shared if t.how == "slot" and t.buffer not in {b.name for b in plan.buffers}]
    if outside:
        ax.text(1.005, 0.25, f"{len(outside)} tensor(s) written\nstraight into model\noutputs (slots)",
                transform=ax.transAxes, ha="left", va="bottom", fontsize=7, color="#555555")
    ax.grid(axis="y", linewidth=0.3, alpha=0.5)
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    plt.close(fig)
    return out


def _draw_shared(ax: Any, plan: Plan) -> None:
    """Hatched rectangles over the pool buffers for the tensors living inside them."""
    where = {b.name: b for b in plan.buffers}
    for t in plan.shared:
        if t.how not in SHARED_HATCHES or t.buffer not in where or t.first < 0:
            continue
        base = where[t.buffer]
        first, last = (t.first, t.last) if t.how == "slot" else (t.first, max(t.last, t.first))
        ax.add_patch(Rectangle((first, base.offset + t.offset), last + 1 - first, max(t.size, 1),
                               facecolor="none", edgecolor="white", hatch=SHARED_HATCHES[t.how][0],
                               linewidth=0.8, zorder=2))


def plot_memory_plan(metadata: Mapping[str, Any] | Path, out_dir: Path = RESULTS,
                     label: str | None = None) -> Path:
    """Plot the plan in an MLF's metadata into ``out_dir/memory_plan_<label or module>.png``."""
    plan = plan_from_metadata(metadata)
    return plot_plan(plan, Path(out_dir) / f"memory_plan_{label or plan.model}.png")


def _plot_source(source: Path, out_dir: Path, io_in_pool: bool, memory_mode: str = "fast") -> Path:
    if source.is_dir():
        return plot_memory_plan(source / "metadata.json", out_dir)
    if source.name.endswith(".json"):
        return plot_memory_plan(source, out_dir)
    sys.path.insert(0, str(ROOT / "scripts"))
    from utvm.compiler import CompileOptions, compile_model

    with tempfile.TemporaryDirectory(prefix="utvm-plot-") as tmp:
        result = compile_model(source, Path(tmp) / "mlf", CompileOptions(io_in_pool=io_in_pool,
                                                                         memory_mode=memory_mode))
        suffix = "_min" if memory_mode == "min" else ""
        return plot_memory_plan(result.metadata, out_dir, label=source.stem + suffix)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sources", nargs="+", type=Path,
                    help="a model (.tflite/.onnx, compiled here), an MLF directory or its metadata.json")
    ap.add_argument("--out-dir", type=Path, default=RESULTS)
    ap.add_argument("--io-in-pool", action="store_true", help="compile models with inputs/outputs in the pool")
    ap.add_argument("--memory-mode", choices=("fast", "min"), default="fast",
                    help="min: the first layers patch by patch (drawn as #p<i> buffers)")
    args = ap.parse_args(argv)
    for source in args.sources:
        print(_plot_source(source, args.out_dir, args.io_in_pool, args.memory_mode))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
