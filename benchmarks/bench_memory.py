#!/usr/bin/env python3
"""Pool, RAM and instructions of --memory-mode fast (layer by layer), min (the first stage
patch by patch, the smallest pool) and min:5 (the smallest pool at most 5% more MACs buy) on an
emulated board, with and without the inputs/outputs in the pool.

    python3 benchmarks/bench_memory.py [--board mps2/an386] [--models vww_96_int8,...]

Writes benchmarks/results/memory_modes.md and .json; prints the table. Where the planner
finds no patch split that lowers the pool, min compiles the same model as fast (not run twice).
Not a test: figures only.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from utvm.run.runner import run_model  # noqa: E402

MODELS = ["vww_96_int8", "kws_ref_model", "pretrainedResnet_quant", "ad01_int8"]
#: min:5: the smallest pool whose patches cost at most 5% more MACs
MODES = ("fast", "min", "min:5")


def bench(model: Path, board: str, io_in_pool: bool) -> list[dict[str, Any]]:
    from utvm.importer import load_model
    from utvm.options import MemoryMode
    from utvm.plan.patches import choose_patches

    rows = []
    fast: dict[str, Any] | None = None
    for mode in MODES:
        overhead = MemoryMode.parse(mode).max_extra_macs
        if overhead is not None and fast is not None and choose_patches(load_model(model), io_in_pool,
                                                                        overhead)[1] is None:
            rows.append({**fast, "mode": mode, "patch_plan": None, "same_as_fast": True})
            continue
        with tempfile.TemporaryDirectory(prefix="utvm-mem-") as tmp:
            r = run_model(model, board, io_in_pool=io_in_pool, workdir=Path(tmp), memory_mode=mode)
        row = {"model": model.stem, "board": board, "io_in_pool": io_in_pool, "mode": mode,
               "match": r.outputs_match_reference, "pool_bytes": r.workspace_bytes,
               "ram_bytes": r.workspace_bytes + r.io_bytes, "instructions": r.instructions,
               "flash_code_bytes": r.memory.get("flash_code_bytes"), "patch_plan": r.patch_plan}
        if mode == "fast":
            fast = row
        rows.append(row)
    base = rows[0]["instructions"]
    for row in rows:
        row["extra_instructions"] = (row["instructions"] / base - 1) if base and row["instructions"] else None
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    head = ("| model | I/O in pool | mode | matches TFLM | pool B | RAM B (pool + I/O) | instructions | extra instr. "
            "| code B | patches (layers, grid, extra MACs) |")
    lines = [head, "|" + "---|" * head.count(" | ") + "---|"]
    for r in rows:
        pp = r["patch_plan"]
        patches = (f"{pp['layers']}, {pp['grid'][0]}x{pp['grid'][1]}, +{pp['mac_overhead']:.1%}" if pp
                   else ("no split lowers the pool" if r["mode"] != "fast" else "-"))
        extra = "-" if r["extra_instructions"] is None else f"{r['extra_instructions']:+.1%}"
        lines.append(f"| {r['model']} | {'yes' if r['io_in_pool'] else 'no'} | {r['mode']} "
                     f"| {'yes' if r['match'] else 'NO'} | {r['pool_bytes']:,} | {r['ram_bytes']:,} "
                     f"| {r['instructions']:,} | {extra} | {r['flash_code_bytes']:,} | {patches} |")
    return "\n".join(lines) + (
        "\n\nInstructions: QEMU -icount on the board named in the JSON (FPGAIO counter). extra instr.: against "
        "fast with the same I/O placement. min:5: the smallest pool with at most 5% more MACs. Code: the model's functions in the linked firmware (min has one "
        "kernel per patch and layer of the stage).\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--board", default="mps2/an386")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--models-dir", type=Path, default=ROOT.parent / "shared" / "models")
    ap.add_argument("--out-dir", type=Path, default=ROOT / "benchmarks" / "results")
    args = ap.parse_args(argv)
    rows: list[dict[str, Any]] = []
    for model in [m for m in args.models.split(",") if m]:
        for io in (True, False):
            print(f"{model} io_in_pool={io} ...", file=sys.stderr, flush=True)
            rows += bench(args.models_dir / f"{model}.tflite", args.board, io)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "memory_modes.json").write_text(json.dumps(rows, indent=1) + "\n")
    table = markdown(rows)
    (args.out_dir / "memory_modes.md").write_text(table)
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
