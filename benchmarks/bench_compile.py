#!/usr/bin/env python3
"""Memory, constants, host latency and compile time of every shared model, against TFLite Micro.

Prints a markdown table and writes benchmarks/results/compile.json. Not a test: figures only.

    python3 benchmarks/bench_compile.py [--models DIR] [--repeats N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from utvm.run.runner import run_model  # noqa: E402

# TFLite Micro arena (bytes, non-persistent + persistent) and the lower bound (largest
# operator's input + output), from shared/models/README.md (recording allocator, x86 build).
TFLM_ARENA = {"kws_ref_model": 24272, "vww_96_int8": 103680, "pretrainedResnet_quant": 55984, "ad01_int8": 3984}
LOWER_BOUND = {"kws_ref_model": 16000, "vww_96_int8": 55296, "pretrainedResnet_quant": 49152, "ad01_int8": 768}
WEIGHT_BYTES = {"kws_ref_model": 24376, "vww_96_int8": 219072, "pretrainedResnet_quant": 78752, "ad01_int8": 270880}
MODELS = ["kws_ref_model", "vww_96_int8", "pretrainedResnet_quant", "ad01_int8",
          "vww_96_float", "pretrainedResnet", "ad01_fp32"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--models", type=Path, default=ROOT.parent / "shared" / "models")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "compile.json")
    args = ap.parse_args()
    rows = []
    for name in MODELS:
        path = args.models / f"{name}.tflite"
        print(f"[{len(rows) + 1}/{len(MODELS)}] {name}", file=sys.stderr, flush=True)
        with tempfile.TemporaryDirectory() as tmp:
            r = run_model(path, "host", repeats=args.repeats, workdir=Path(tmp))
        with tempfile.TemporaryDirectory() as tmp:
            rp = run_model(path, "host", io_in_pool=True, workdir=Path(tmp))
        rows.append({
            "model": name, "match": r.outputs_match_reference, "max_abs_diff": r.max_abs_diff,
            "ram": r.workspace_bytes + r.io_bytes, "workspace": r.workspace_bytes, "io": r.io_bytes,
            "ram_io_in_pool": rp.workspace_bytes, "tflm_arena": TFLM_ARENA.get(name),
            "lower_bound": LOWER_BOUND.get(name), "constants": r.constants_bytes,
            "weight_bytes": WEIGHT_BYTES.get(name), "latency_ratio": r.latency_ratio_vs_reference,
            "compile_seconds": r.compile_seconds,
        })
    print("| model | match | workspace+IO | TFLM arena | ratio | io-in-pool | lower bound | ratio "
          "| constants | weights | ratio | latency vs TFLM | compile s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")

    def ratio(a: float | None, b: float | None) -> str:
        return f"{a / b:.3f}" if a is not None and b else "-"

    for r in rows:
        print(f"| {r['model']} | {'yes' if r['match'] else 'NO'} | {r['ram']} | {r['tflm_arena'] or '-'} "
              f"| {ratio(r['ram'], r['tflm_arena'])} | {r['ram_io_in_pool']} | {r['lower_bound'] or '-'} "
              f"| {ratio(r['ram_io_in_pool'], r['lower_bound'])} | {r['constants']} | {r['weight_bytes'] or '-'} "
              f"| {ratio(r['constants'], r['weight_bytes'])} | {r['latency_ratio']:.3f} | {r['compile_seconds']:.1f} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=2) + "\n")
    print(f"\nmedian latency ratio (ours / TFLite Micro, host): "
          f"{statistics.median(r['latency_ratio'] for r in rows):.3f}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
