#!/usr/bin/env python3
"""Instructions per MAC of seeded int8 layer shapes on both emulated CPUs, each bit-exact with
TFLite Micro.

The shapes come from `tests/layer_shapes.py` (keyword spotting with multiplier > 1, streaming
1-D audio, MobileNet V1/V2/V3 at 96 and 128 pixels, ResNet-8/-18 style, autoencoders, LSTM/SVDF
gates). To keep QEMU boots and TVM compiles few, `--chunk` layers sit side by side in one
model (each its own input and output), compiled once per CPU and run once in a firmware built
with UTVM_PROFILE: the executor times each operator call (its packed function and kernel; the
run's fixed cost and the binding of its tensors left out), so a layer's figure is its own.
Every output is compared byte for byte with TFLite Micro on the same seeded inputs (each
layer's input seeded by its shape's seed, so that it does not depend on the chunk).

Where the time goes (one chunk: TVM ~0.5-1.5 s, gcc ~3 s of which the model's operators ~2 s,
QEMU ~0.5-2 s, TFLite Micro ~0.1 s), and what keeps it short: each board's chunks as large as
its flash and RAM allow (mps2/an386's 4 MB take ~100 layers, mps3/an547's 512 KB ~15), the
constants as an ELF object (not C arrays for gcc to parse), the runtime's objects compiled
once per board and TFLite Micro's outputs once per shape (both kept under --cache, keyed by
their sources / by the shape, its seed, the generator's code and the tflite-micro version),
and, only with --jobs N, N chunks at once.

    python3 benchmarks/bench_layers.py [--ops CONV_2D,DEPTHWISE_CONV_2D,FULLY_CONNECTED]
                                       [--per-op 200] [--seed 0] [--chunk 100] [--jobs 1] [--boards ...]
                                       [--out benchmarks/results/layers] [--before OLD.json]
                                       [--table RUN.json] [--only REGEX] [--families stream1d,misc] [--multiplier 1]
                                       [--filter REGEX] [--cache DIR | --no-cache]

`--only` keeps the shapes whose "<family> <shape>" text matches REGEX (e.g. `--only ' m([2-9]|[1-9][0-9])'`:
the depthwise layers of multiplier > 1).

Writes <out>.md and <out>.json: per shape the instructions per MAC on each CPU; the worst layer
per CPU and the shapes where the Cortex-M55 takes more instructions than the Cortex-M4.
Resolution: one counter tick (40 instructions on mps2/an386, 50 on mps3/an547). Not a test: figures only.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import inspect
import json
import os
import re
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tests"))

import layer_shapes  # noqa: E402
from layer_shapes import FAMILIES, OPS, Shape, layers_model, shapes  # noqa: E402
from utvm.compiler import CompileOptions, compile_model  # noqa: E402
from utvm.errors import UtvmError  # noqa: E402
from utvm.run import qemu  # noqa: E402
from utvm.run.boards import get_board  # noqa: E402
from utvm.run.harness import parse_harness_output, write_harness  # noqa: E402
from utvm.run.host import mlf_sources  # noqa: E402
from utvm.run.reference import run_reference  # noqa: E402

BOARDS = ["mps2/an386", "mps3/an547"]
#: the issue's per-layer bounds (layers of at least 1,000 MACs)
BOUNDS = {"cortex-m4": 2.0, "cortex-m55": 1.0}
CPUS = tuple(BOUNDS)
_OP = re.compile(r"^UTVM_OP (\S+) (\d+)$", re.M)
#: where the runtime's objects (per board) and TFLite Micro's outputs (per shape) are kept
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "utvm" / "bench_layers"
#: CPU seconds spent per phase (this process and the programs it ran: TVM, gcc, QEMU), which
#: a shared machine does not inflate as it does wall time
TIMES: dict[str, float] = {}


def cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@contextmanager
def timed(phase: str) -> Iterator[None]:
    t0 = cpu_seconds()
    try:
        yield
    finally:
        TIMES[phase] = TIMES.get(phase, 0.0) + cpu_seconds() - t0


def chunk_model(layers: list[Shape]) -> bytes:
    return layers_model(layers, "bench_layers")


def layer_input(s: Shape) -> np.ndarray:
    """The input of ``s``: seeded by the shape's own seed, so the same wherever it sits in a
    chunk (and its reference output can be kept per shape)."""
    return np.random.default_rng([s.seed, 1]).integers(-128, 128, size=s.input, dtype=np.int8)


def _key(s: Shape) -> str:
    """The reference cache's name of ``s``: the shape and seed, the code that makes its weights
    (tests/layer_shapes.py) and the TFLite Micro package's version."""
    try:
        version = importlib.metadata.version("tflite-micro")
    except importlib.metadata.PackageNotFoundError:
        version = "none"
    text = f"{s!r}|{inspect.getsource(layer_shapes)}|{inspect.getsource(layer_input)}|{version}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def references(model: Path, layers: list[Shape], cache: Path | None) -> list[np.ndarray | None]:
    """TFLite Micro's output of each layer (None without tflite-micro): from ``cache`` where
    kept, else from one reference run of the chunk (whose outputs are kept)."""
    keys = [_key(s) for s in layers]
    kept = [cache / f"{k}.npy" if cache else None for k in keys]
    if all(p is not None and p.is_file() for p in kept):
        return [np.load(p) for p in kept]
    ref = run_reference(model, [layer_input(s) for s in layers], len(layers), 1)
    if ref is None:
        return [None] * len(layers)
    outs = ref[0]
    if cache:
        cache.mkdir(parents=True, exist_ok=True)
        for p, y in zip(kept, outs):
            tmp = p.with_suffix(f".{os.getpid()}.tmp.npy")
            np.save(tmp, y)
            tmp.replace(p)
    return outs


def runtime_objects(board_name: str, runtime: Path, sources: list[Path], work: Path, cache: Path) -> list[Path]:
    """The runtime's C sources (the same in every chunk's MLF) compiled once per board and kept
    in ``cache`` by their text, their headers' and how they are built (the board, qemu.py's
    flags): later chunks link the objects."""
    board = get_board(board_name)
    headers = sorted(p for p in (runtime / "include").rglob("*") if p.is_file())
    text = b"".join(s.read_bytes() for s in [*sources, *headers]) + f"{board!r}{inspect.getsource(qemu)}".encode()
    d = cache / "runtime" / f"{board_name.replace('/', '_')}_{hashlib.sha256(text).hexdigest()[:16]}"
    objs = [d / f"{k:03d}_{s.stem}.o" for k, s in enumerate(sources)]
    if not all(o.is_file() for o in objs):
        out = work / "runtime"
        # a firmware of the runtime alone would not link (no main): compile only, then keep the objects
        try:
            qemu.build_firmware(board, sources, [runtime / "include"], {"UTVM_PROFILE": ""}, out)
        except UtvmError:
            pass
        built = sorted((out / "obj").glob("*.o"))
        if len(built) != len(sources):
            return list(sources)
        d.mkdir(parents=True, exist_ok=True)
        for b, o in zip(built, objs):
            shutil.copy(b, o.with_suffix(".tmp"))
            o.with_suffix(".tmp").replace(o)
    return objs


def measure_chunk(layers: list[Shape], board_name: str, work: Path, refs: list[np.ndarray | None],
                  cache: Path | None) -> list[dict[str, Any]]:
    """Per layer: instructions of its call and whether its output equals TFLite Micro's."""
    board = get_board(board_name)
    model = work / "model.tflite"
    if not model.is_file():
        model.write_bytes(chunk_model(layers))
    with timed("tvm"):
        result = compile_model(model, work / "mlf", CompileOptions(cpu=board.cpu, constants="object"))
    g = result.graph
    calls = result.lowered.calls
    if len(calls) != len(layers):
        raise SystemExit(f"error: {len(layers)} layers compiled into {len(calls)} calls")
    x = [layer_input(s) for s in layers]
    harness = write_harness(work, result.name, x, [g.tensors[n].nbytes for n in g.outputs])
    sources, includes = mlf_sources([result.mlf_dir], "baremetal")
    rt = result.mlf_dir / "runtime"
    runtime = [s for s in sources if rt in s.parents and s.suffix == ".c"]
    with timed("gcc"):
        if cache is not None and runtime:
            objs = runtime_objects(board_name, rt, runtime, work, cache)
            sources = [s for s in sources if s not in runtime] + objs
        elf = qemu.build_firmware(board, [*sources, harness], includes, {"UTVM_PROFILE": ""}, work / "fw")
    with timed("qemu"):
        run = qemu.run_firmware(board, elf, timeout_s=600)
    if run.fault:
        raise SystemExit(f"error: the firmware crashed on {board_name}: {run.fault}")
    dtypes = [g.tensors[n].dtype for n in g.outputs]
    oshapes = [g.tensors[n].shape for n in g.outputs]
    outputs, _, status = parse_harness_output(run.stdout, dtypes, oshapes)
    if status != 0:
        raise SystemExit(f"error: the model returned status {status} on {board_name}")
    ticks = [int(t) for _, t in _OP.findall(run.stdout)]
    if len(ticks) != len(layers):
        raise SystemExit(f"error: {len(ticks)} operator timings for {len(layers)} layers on {board_name}")
    rows = []
    for k in range(len(layers)):
        exact = None if refs[k] is None else bool(np.array_equal(outputs[k], refs[k]))
        rows.append({"instructions": board.ticks_to_instructions(ticks[k]), "exact": exact})
    return rows


def budgets(board_name: str) -> tuple[int, int]:
    """Bytes one model's layers may take of ``board_name``'s flash (weights and the harness's
    inputs) and of its RAM (inputs, outputs): 70% of each, the rest for code, the workspace and
    the stack (mps3/an547: 358 KB of 512 KB each; mps2/an386: 2.8 MB of 4 MB). A chunk that does
    not link after all is measured in halves."""
    board = get_board(board_name)
    return board.flash_size * 7 // 10, board.ram_size * 7 // 10


def chunks(table: list[dict[str, Any]], most: int, budget: tuple[int, int]) -> list[tuple[int, list[dict[str, Any]]]]:
    """Consecutive runs of at most ``most`` layers within ``budget`` (flash, RAM)."""
    out: list[tuple[int, list[dict[str, Any]]]] = []
    start, flash, ram = 0, 0, 0
    for k, r in enumerate(table):
        s = r["_s"]
        i = int(np.prod(s.input))
        f, m = s.weight_bytes + i, s.activation_bytes
        if k > start and (k - start >= most or flash + f > budget[0] or ram + m > budget[1]):
            out.append((start, table[start:k]))
            start, flash, ram = k, 0, 0
        flash, ram = flash + f, ram + m
    if start < len(table):
        out.append((start, table[start:]))
    return out


def run_chunk(layers: list[Shape], board_name: str, cache: Path | None,
              label: str) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """One chunk on one board: its rows, and the CPU seconds this call spent per phase."""
    TIMES.clear()
    print(f"{board_name}: {label}", file=sys.stderr, flush=True)
    rows = _measure(layers, board_name, cache)
    return rows, dict(TIMES)


def _measure(layers: list[Shape], board_name: str, cache: Path | None) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="bench_layers_") as tmp:
        work = Path(tmp)
        model = work / "model.tflite"
        model.write_bytes(chunk_model(layers))
        with timed("tflm"):
            refs = references(model, layers, cache / "reference" if cache else None)
        try:
            return measure_chunk(layers, board_name, work, refs, cache)
        except UtvmError as exc:
            if "overflowed" not in str(exc) or len(layers) < 2:
                raise
    print(f"{board_name}: {len(layers)} layers do not fit, in halves", file=sys.stderr, flush=True)
    half = len(layers) // 2
    return _measure(layers[:half], board_name, cache) + _measure(layers[half:], board_name, cache)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--per-op", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--chunk", type=int, default=100, help="most layers in one model (and CHUNK_BYTES)")
    ap.add_argument("--boards", default=",".join(BOARDS))
    ap.add_argument("--jobs", type=int, default=1, help="chunks measured at once (one process each); default 1")
    ap.add_argument("--cache", type=Path, default=CACHE,
                    help="runtime objects and TFLite Micro outputs per shape (keyed by shape, seed and code)")
    ap.add_argument("--no-cache", action="store_true", help="keep nothing, reuse nothing")
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
    for b in boards:
        try:
            get_board(b)
        except UtvmError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    if a.jobs < 1 or a.chunk < 1:
        print("error: --jobs and --chunk must be at least 1", file=sys.stderr)
        return 2
    for path in (a.table, a.before):
        if path is not None and not path.is_file():
            print(f"error: {path}: no such file", file=sys.stderr)
            return 2
    cache = None if a.no_cache else a.cache
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
    t0 = time.perf_counter()
    tasks = [(board_name, start, part) for board_name in boards
             for start, part in chunks(table, a.chunk, budgets(board_name))]
    args = [([r["_s"] for r in part], board_name, cache, f"layers {start}-{start + len(part) - 1} of {len(table)}")
            for board_name, start, part in tasks]
    totals: dict[str, float] = {}
    if a.jobs == 1:
        results: Iterable[tuple[list[dict[str, Any]], dict[str, float]]] = (run_chunk(*x) for x in args)
    else:
        pool = ProcessPoolExecutor(max_workers=a.jobs)
        results = list(pool.map(run_chunk, *zip(*args)))
        pool.shutdown()
    for (board_name, _, part), (rows, times) in zip(tasks, results):
        cpu = get_board(board_name).cpu
        for r, m in zip(part, rows):
            r[cpu] = {**m, "ipm": round(m["instructions"] / r["macs"], 3)}
        for k, v in times.items():
            totals[k] = totals.get(k, 0.0) + v
    wall = time.perf_counter() - t0
    cpu_s = cpu_seconds()
    for r in table:
        del r["_s"]
    timing = None
    if table:
        timing = (f"{len(table)} shapes in {len(tasks)} chunks on {len(boards)} CPUs, --jobs {a.jobs}: {wall:.0f} s wall, {cpu_s:.0f} s of CPU (this process and its children; "
                  + ", ".join(f"{k} {v:.0f} s" for k, v in sorted(totals.items())) + ")")
        print(timing, file=sys.stderr)
    if a.table:
        table = json.loads(a.table.read_text())
    if a.before:
        # a shape's name: its text does not say whether an FC layer's weights are per channel
        earlier = {(r["op"], r["shape"], r["activation"], r.get("per_channel")): r
                   for r in json.loads(a.before.read_text())}
        for r in table:
            old = earlier.get((r["op"], r["shape"], r["activation"], r.get("per_channel")), {})
            r["before"] = {c: old[c] for c in CPUS if c in old}
    write(table, boards, a.out, timing)
    return 0


def write(table: list[dict[str, Any]], boards: list[str], out: Path, timing: str | None = None) -> None:
    cpus = [get_board(b).cpu for b in boards]
    out.parent.mkdir(parents=True, exist_ok=True)  # --out in a folder not made yet
    out.with_suffix(".json").write_text(json.dumps(table, indent=1) + "\n")
    lines = ["# Instructions per MAC of seeded layer shapes (`benchmarks/bench_layers.py`)", "",
             "Each layer's own instructions (its operator call, timed by UTVM_PROFILE; one counter tick",
             "= 40 instructions on mps2/an386, 50 on mps3/an547) over its MACs; `exact`: outputs equal",
             "TFLite Micro's.", ""]
    if timing:
        lines += [f"Run: {timing}.", ""]
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
    slower: list[dict[str, Any]] = []
    if len(cpus) == 2:
        slower = [r for r in table if r[cpus[1]]["instructions"] > r[cpus[0]]["instructions"]]
        lines.append(f"- shapes where {cpus[1]} takes more instructions than {cpus[0]}: {len(slower)}")
        for op in OPS:
            n = [r for r in table if r["op"] == op]
            if n:
                lines.append(f"  - {op}: {sum(1 for r in slower if r['op'] == op)} of {len(n)}")
    lines += ["", "## Per family", "",
              "The worst layer of each operator's family on each CPU, and how many are above the bound"
              + (f" ({cpus[1]} slower: more instructions than on {cpus[0]})" if len(cpus) == 2 else "") + ".", "",
              "| op | family | shapes | " + " | ".join(f"{c} worst | {c} shape | {c} > {BOUNDS.get(c)}" for c in cpus)
              + (f" | {cpus[1]} slower" if len(cpus) == 2 else "") + " |",
              "|---|---|---:|" + "---:|---|---:|" * len(cpus) + ("---:|" if len(cpus) == 2 else "")]
    for op in OPS:
        for family in FAMILIES[op][1]:
            rows = [r for r in table if r["op"] == op and r["family"] == family]
            if not rows:
                continue
            cells = []
            for c in cpus:
                w = max(rows, key=lambda r: r[c]["ipm"])
                cells.append(f"{w[c]['ipm']:.3f} | {w['shape']} {w['activation']} | "
                             f"{sum(1 for r in rows if r[c]['ipm'] > BOUNDS.get(c, 99))}")
            tail = f" | {sum(1 for r in rows if r in slower)}" if len(cpus) == 2 else ""
            lines.append(f"| {op} | {family} | {len(rows)} | " + " | ".join(cells) + tail + " |")
    lines += ["", "## Per shape", "",
              "| op | family | shape | act | weights | MACs | " + " | ".join(f"{c} ipm" for c in cpus)
              + "".join(f" | {c} before" for c in before) + " | exact |",
              "|---|---|---|---|---|---:|" + "---:|" * (len(cpus) + len(before)) + "---|"]
    for r in table:
        exact = all(r[c]["exact"] for c in cpus)
        q = "per channel" if r.get("per_channel") else "per tensor"
        lines.append(f"| {r['op']} | {r['family']} | {r['shape']} | {r['activation']} | {q} | {r['macs']} | "
                     + " | ".join(f"{r[c]['ipm']:.3f}" for c in cpus)
                     + "".join(f" | {r['before'][c]['ipm']:.3f}" if c in r.get("before", {}) else " | " for c in before)
                     + f" | {'yes' if exact else 'NO'} |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
