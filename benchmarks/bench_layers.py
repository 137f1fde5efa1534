#!/usr/bin/env python3
"""Instructions per MAC of seeded int8 layer shapes on both emulated CPUs, each bit-exact with
TFLite Micro.

The shapes come from `tests/layer_shapes.py` (keyword spotting with multiplier > 1, streaming
1-D audio, MobileNet V1/V2/V3 at 96 and 128 pixels, ResNet-8/-18 style, autoencoders, LSTM/SVDF
gates). To keep QEMU boots and TVM compiles few, `--chunk` layers sit side by side in one
model (each its own input and output), compiled once per CPU and run once in a firmware built
with UTVM_PROFILE: the executor times each operator call (its packed function and kernel; the
run's fixed cost and the binding of its tensors left out), so a layer's figure is its own.
Every output is compared byte for byte with TFLite Micro on the same seeded inputs.

    python3 benchmarks/bench_layers.py [--ops CONV_2D,DEPTHWISE_CONV_2D,FULLY_CONNECTED]
                                       [--per-op 200] [--seed 0] [--chunk 25] [--boards ...]
                                       [--out benchmarks/results/layers] [--before OLD.json]
                                       [--table RUN.json] [--only REGEX] [--families stream1d,misc] [--multiplier 1]
                                       [--filter REGEX]

`--only` keeps the shapes whose "<family> <shape>" text matches REGEX (e.g. `--only ' m([2-9]|[1-9][0-9])'`:
the depthwise layers of multiplier > 1).

Writes <out>.md and <out>.json: per shape the instructions per MAC on each CPU; the worst layer
per CPU and the shapes where the Cortex-M55 takes more instructions than the Cortex-M4.
Resolution: one counter tick (40 instructions on mps2/an386, 50 on mps3/an547). Not a test: figures only.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tests"))

from layer_shapes import OPS, Shape, add_layer, shapes  # noqa: E402
from tflite_builder import ModelBuilder  # noqa: E402
from utvm.compiler import CompileOptions, compile_model  # noqa: E402
from utvm.run import qemu  # noqa: E402
from utvm.run.boards import get_board  # noqa: E402
from utvm.run.harness import parse_harness_output, write_harness  # noqa: E402
from utvm.run.host import mlf_sources  # noqa: E402
from utvm.run.reference import random_inputs, run_reference  # noqa: E402

BOARDS = ["mps2/an386", "mps3/an547"]
#: the issue's per-layer bounds (layers of at least 1,000 MACs)
BOUNDS = {"cortex-m4": 2.0, "cortex-m55": 1.0}
CPUS = tuple(BOUNDS)
_OP = re.compile(r"^UTVM_OP (\S+) (\d+)$", re.M)


def measure_chunk(layers: list[Shape], board_name: str, work: Path) -> list[dict[str, Any]]:
    """Per layer: instructions of its call and whether its output equals TFLite Micro's."""
    board = get_board(board_name)
    m = ModelBuilder("bench_layers")
    ins: list[int] = []
    outs: list[int] = []
    for k, s in enumerate(layers):
        i, o = add_layer(m, s, f"l{k}")
        ins += i
        outs += o
    model = work / "model.tflite"
    model.write_bytes(m.finish(ins, outs))
    result = compile_model(model, work / "mlf", CompileOptions(cpu=board.cpu))
    g = result.graph
    calls = result.lowered.calls
    if len(calls) != len(layers):
        raise SystemExit(f"error: {len(layers)} layers compiled into {len(calls)} calls")
    x = random_inputs(g, seed=1)
    harness = write_harness(work, result.name, x, [g.tensors[n].nbytes for n in g.outputs])
    sources, includes = mlf_sources([result.mlf_dir], "baremetal")
    elf = qemu.build_firmware(board, [*sources, harness], includes, {"UTVM_PROFILE": ""}, work / "fw")
    run = qemu.run_firmware(board, elf, timeout_s=600)
    if run.fault:
        raise SystemExit(f"error: the firmware crashed on {board_name}: {run.fault}")
    dtypes = [g.tensors[n].dtype for n in g.outputs]
    oshapes = [g.tensors[n].shape for n in g.outputs]
    outputs, _, status = parse_harness_output(run.stdout, dtypes, oshapes)
    if status != 0:
        raise SystemExit(f"error: the model returned status {status} on {board_name}")
    ref = run_reference(model, x, len(g.outputs), 1)
    ticks = [int(t) for _, t in _OP.findall(run.stdout)]
    rows = []
    for k in range(len(layers)):
        exact = None if ref is None else bool(np.array_equal(outputs[k], ref[0][k]))
        rows.append({"instructions": board.ticks_to_instructions(ticks[k]), "exact": exact})
    return rows


#: bytes of one model's weights and of its inputs (flash) and activations (RAM), mps3/an547
#: having 512 KB of each
CHUNK_BYTES = 300 * 1024


def chunks(table: list[dict[str, Any]], most: int) -> list[tuple[int, list[dict[str, Any]]]]:
    """Consecutive runs of at most ``most`` layers and CHUNK_BYTES of weights plus activations."""
    out: list[tuple[int, list[dict[str, Any]]]] = []
    start, size = 0, 0
    for k, r in enumerate(table):
        s = r["_s"]
        b = s.weight_bytes + s.activation_bytes
        if k > start and (k - start >= most or size + b > CHUNK_BYTES):
            out.append((start, table[start:k]))
            start, size = k, 0
        size += b
    if start < len(table):
        out.append((start, table[start:]))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--per-op", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--chunk", type=int, default=25)
    ap.add_argument("--boards", default=",".join(BOARDS))
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "layers")
    ap.add_argument("--table", type=Path, help="write the tables of this JSON (an earlier run's) again, nothing measured")
    ap.add_argument("--before", type=Path, help="a JSON of an earlier run: its figures as columns 'before'")
    ap.add_argument("--only", help="measure only the shapes whose '<family> <shape>' matches this regular expression")
    ap.add_argument("--families", help="only the shapes of these families (comma-separated, e.g. stream1d,misc)")
    ap.add_argument("--multiplier", type=int, help="only the depthwise shapes of this depth multiplier")
    ap.add_argument("--filter", help="only the shapes whose 'OP family shape activation' matches this regular expression")
    a = ap.parse_args()
    try:
        only = re.compile(a.only) if a.only else None
    except re.error as exc:
        print(f"error: --only {a.only!r}: {exc}", file=sys.stderr)
        return 2
    boards = a.boards.split(",")
    table: list[dict[str, Any]] = []
    for op in ([] if a.table else a.ops.split(",")):
        if op not in OPS:
            print(f"error: unknown operator {op!r} (one of {', '.join(OPS)})", file=sys.stderr)
            return 2
        for s in shapes(op, a.per_op, a.seed):
            if (only is not None and not only.search(f"{s.family} {s.text()}")
                    or a.filter and not re.search(a.filter, f"{op} {s.family} {s.text()} {s.activation}")
                    or a.families and s.family not in a.families.split(",")
                    or a.multiplier is not None and (op != "DEPTHWISE_CONV_2D" or s.multiplier != a.multiplier)):
                continue
            table.append({"op": op, "family": s.family, "shape": s.text(), "activation": s.activation,
                          "per_channel": s.per_channel, "macs": s.macs, "_s": s})
    for board_name in boards:
        cpu = get_board(board_name).cpu
        for start, part in chunks(table, a.chunk):
            print(f"{board_name}: layers {start}-{start + len(part) - 1} of {len(table)}", file=sys.stderr)
            with tempfile.TemporaryDirectory(prefix="bench_layers_") as tmp:
                rows = measure_chunk([r["_s"] for r in part], board_name, Path(tmp))
            for r, m in zip(part, rows):
                r[cpu] = {**m, "ipm": round(m["instructions"] / r["macs"], 3)}
    for r in table:
        del r["_s"]
    if a.table:
        table = json.loads(a.table.read_text())
    if a.before:
        earlier = {(r["op"], r["shape"], r["activation"]): r for r in json.loads(a.before.read_text())}
        for r in table:
            old = earlier.get((r["op"], r["shape"], r["activation"]), {})
            r["before"] = {c: old[c] for c in CPUS if c in old}
    write(table, boards, a.out)
    return 0


def write(table: list[dict[str, Any]], boards: list[str], out: Path) -> None:
    cpus = [get_board(b).cpu for b in boards]
    out.with_suffix(".json").write_text(json.dumps(table, indent=1) + "\n")
    lines = ["# Instructions per MAC of seeded layer shapes (`benchmarks/bench_layers.py`)", "",
             "Each layer's own instructions (its operator call, timed by UTVM_PROFILE; one counter tick",
             "= 40 instructions on mps2/an386, 50 on mps3/an547) over its MACs; `exact`: outputs equal",
             "TFLite Micro's.", ""]
    for cpu in cpus:
        worst = max(table, key=lambda r: r[cpu]["ipm"])
        over = [r for r in table if r[cpu]["ipm"] > BOUNDS.get(cpu, 99)]
        lines.append(f"- {cpu}: worst {worst[cpu]['ipm']} ({worst['op']} {worst['shape']}, {worst['family']}); "
                     f"{len(over)} of {len(table)} above {BOUNDS.get(cpu)}; "
                     f"{sum(1 for r in table if r[cpu]['exact'] is False)} not exact")
    before = [c for c in cpus if any(c in r.get("before", {}) for r in table)]
    for c in before:
        rows = [r for r in table if c in r.get("before", {})]
        worst = max(rows, key=lambda r: r["before"][c]["ipm"])
        line = f"- {c} before: worst {worst['before'][c]['ipm']} ({worst['op']} {worst['shape']}, {worst['family']})"
        if len(cpus) == 2 and c == cpus[1]:
            n = sum(1 for r in rows if r["before"][c]["instructions"] > r[cpus[0]]["instructions"])
            line += f"; shapes where it took more instructions than {cpus[0]}: {n}"
        lines.append(line)
    if len(cpus) == 2:
        slower = [r for r in table if r[cpus[1]]["instructions"] > r[cpus[0]]["instructions"]]
        lines.append(f"- shapes where {cpus[1]} takes more instructions than {cpus[0]}: {len(slower)}")
        for op in OPS:
            n = [r for r in table if r["op"] == op]
            if n:
                lines.append(f"  - {op}: {sum(1 for r in slower if r['op'] == op)} of {len(n)}")
    lines += ["", "| op | family | shape | act | MACs | " + " | ".join(f"{c} ipm" for c in cpus)
              + "".join(f" | {c} before" for c in before) + " | exact |",
              "|---|---|---|---|---:|" + "---:|" * (len(cpus) + len(before)) + "---|"]
    for r in table:
        exact = all(r[c]["exact"] for c in cpus)
        lines.append(f"| {r['op']} | {r['family']} | {r['shape']} | {r['activation']} | {r['macs']} | "
                     + " | ".join(f"{r[c]['ipm']:.3f}" for c in cpus)
                     + "".join(f" | {r['before'][c]['ipm']:.3f}" if c in r.get("before", {}) else " | " for c in before)
                     + f" | {'yes' if exact else 'NO'} |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
