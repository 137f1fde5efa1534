#!/usr/bin/env python3
"""Instructions and memory of every int8 shared model on the emulated Cortex-M boards.

For each model x board: compile, build with arm-none-eabi-gcc + picolibc, run in QEMU with
-icount (instructions counted exactly), compare the outputs with TFLite Micro, and collect
instructions per inference and per MAC, the workspace pool, flash (code + constants) and RAM,
beside TFLite Micro's arena and its instructions per MAC on the same emulated CPUs
(DESIGN.md section 5). Also draws each model's memory plan (plot_memory_plan.py).

    python3 benchmarks/bench_boards.py [--boards mps2/an385,mps3/an547] [--models kws_ref_model,...]
                                       [--offload cmsis-nn [--cmsis-nn-dir DIR]]

Writes benchmarks/results/boards.md, boards.json and memory_plan_<model>.png; prints the table;
progress goes to stderr. With --offload M: boards_M.md and boards_M.json (the operators M
supports run in M's library), no plots. Not a test: figures only.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from utvm.errors import UtvmError  # noqa: E402
from utvm.run.boards import BOARDS, get_board  # noqa: E402
from utvm.run.runner import run_model  # noqa: E402

MODELS = ["kws_ref_model", "vww_96_int8", "pretrainedResnet_quant", "ad01_int8"]
BOARD_NAMES = ["mps2/an385", "mps2/an386", "mps2/an500", "mps3/an547"]
SHORT = {"kws_ref_model": "KWS", "vww_96_int8": "VWW", "pretrainedResnet_quant": "IC", "ad01_int8": "AD"}

#: TFLite Micro arena, bytes (non-persistent + persistent), shared/models/README.md.
TFLM_ARENA = {"kws_ref_model": 24272, "vww_96_int8": 103680, "pretrainedResnet_quant": 55984, "ad01_int8": 3984}
#: TFLite Micro instructions per MAC under QEMU -icount, DESIGN.md section 5.
TFLM_M4_REFERENCE = {"kws_ref_model": 16.2, "vww_96_int8": 13.4, "pretrainedResnet_quant": 8.6, "ad01_int8": 7.4}
TFLM_M4_CMSIS_NN = {"kws_ref_model": 2.88, "vww_96_int8": 3.22, "pretrainedResnet_quant": 2.50, "ad01_int8": 2.21}
TFLM_M55_CMSIS_NN = {"kws_ref_model": 0.68, "vww_96_int8": 0.88, "pretrainedResnet_quant": 0.39, "ad01_int8": 0.57}


def tflm_figures(model: str, board: str) -> dict[str, Any]:
    """TFLite Micro's instructions/MAC to compare with on ``board``: M4 figures for the MPS2 boards
    (measured on the AN386; the M3 and M7 have no figure of their own), M55 for the AN547."""
    if board == "mps3/an547":
        return {"tflm_cpu": "Cortex-M55", "tflm_ref_ipm": None, "tflm_cmsis_ipm": TFLM_M55_CMSIS_NN.get(model)}
    return {"tflm_cpu": "Cortex-M4", "tflm_ref_ipm": TFLM_M4_REFERENCE.get(model),
            "tflm_cmsis_ipm": TFLM_M4_CMSIS_NN.get(model)}


def bench_one(model_path: Path, board: str, workdir: Path, offload: tuple[str, ...] = (),
              cmsis_nn_dir: Path | None = None, max_flash: int | None = None) -> dict[str, Any]:
    name = model_path.stem
    start = time.monotonic()
    r = run_model(model_path, board, workdir=workdir, offload=offload, cmsis_nn_dir=cmsis_nn_dir,
                  max_flash=max_flash)
    mem = r.memory
    flash_code = int(mem.get("flash_code_bytes", r.code_bytes))
    flash_constants = int(mem.get("flash_constants_bytes", r.constants_bytes))
    pool = int(mem.get("ram_pool_bytes", r.workspace_bytes))
    return {
        "model": name, "board": board, "cpu": get_board(board).cpu, "offloaded": r.offloaded,
        "match": r.outputs_match_reference, "max_abs_diff": r.max_abs_diff,
        "instructions": r.instructions, "macs": r.macs,
        "instructions_per_mac": round(r.instructions_per_mac, 3) if r.instructions_per_mac else None,
        **tflm_figures(name, board),
        "workspace_bytes": r.workspace_bytes, "pool_symbol_bytes": pool, "io_bytes": r.io_bytes,
        "ram_model_bytes": r.workspace_bytes + r.io_bytes,
        "tflm_arena_bytes": TFLM_ARENA.get(name),
        "flash_code_bytes": flash_code, "flash_constants_bytes": flash_constants,
        "flash_model_bytes": flash_code + flash_constants,
        "constants_in_flash": mem.get("constants_in_flash"),
        "ram_stack_bytes": mem.get("ram_stack_bytes"), "ram_other_bytes": mem.get("ram_other_bytes"),
        "image": mem.get("image", {}),
        "compile_seconds": r.compile_seconds, "seconds": round(time.monotonic() - start, 2),
    }


def _fmt(value: Any, spec: str = ",") -> str:
    if value is None:
        return "-"
    if isinstance(value, float) and spec == ",":
        spec = ".2f"
    return format(value, spec)


#: the instruction counts' note under each table
ICOUNT_NOTE = ("Instructions: executed Thumb instructions per inference, counted by QEMU -icount shift=0 "
               "(FPGAIO counter, resolution 40 instructions on MPS2, 50 on the AN547); not cycles.")


def table_lines(head: str, rows: list[dict[str, Any]], label: Callable[[dict[str, Any]], str],
                cells: Callable[[dict[str, Any]], list[str]]) -> list[str]:
    """A markdown table: ``head``, then per row its ``label`` (the model's cells), its board and
    ``cells`` (or the run's error)."""
    width = head.count(" | ") + 1
    lines = [head, "|" + "---|" * width]
    for r in rows:
        board = f"{r['board']} ({r.get('cpu', '?')})"
        values = [f"ERROR: {r['error']}"] + [""] * (width - label(r).count(" | ") - 3) if "error" in r else cells(r)
        lines.append("| " + " | ".join([label(r), board, *values]) + " |")
    return lines


def match_cell(r: dict[str, Any]) -> str:
    return "yes" if r["match"] else f"NO (max diff {_fmt(r['max_abs_diff'], 'g')})"


def flash_cell(r: dict[str, Any]) -> str:
    return f"{_fmt(r['flash_model_bytes'])} ({_fmt(r['flash_code_bytes'])} + {_fmt(r['flash_constants_bytes'])})"


def markdown(rows: list[dict[str, Any]]) -> str:
    head = ("| model | board (CPU) | matches TFLM | instructions | MACs | instr./MAC | TFLM ref. instr./MAC "
            "| TFLM CMSIS-NN instr./MAC | pool B | RAM B (pool + I/O) | TFLM arena B | RAM / arena "
            "| flash B (code + constants) | firmware RAM B |")

    def cells(r: dict[str, Any]) -> list[str]:
        arena = r["tflm_arena_bytes"]
        cmsis = _fmt(r["tflm_cmsis_ipm"])
        if r["tflm_cmsis_ipm"] is not None:
            cmsis += " (M55)" if r["tflm_cpu"] == "Cortex-M55" else " (M4)"
        return [match_cell(r), _fmt(r["instructions"]), _fmt(r["macs"]), _fmt(r["instructions_per_mac"]),
                _fmt(r["tflm_ref_ipm"]), cmsis, _fmt(r["workspace_bytes"]), _fmt(r["ram_model_bytes"]),
                _fmt(arena), f"{r['ram_model_bytes'] / arena:.2f}" if arena else "-", flash_cell(r),
                _fmt(r["image"].get("ram_total"))]

    lines = table_lines(head, rows, lambda r: f"{SHORT.get(r['model'], r['model'])} ({r['model']})", cells)
    notes = [
        "",
        ICOUNT_NOTE,
        "TFLM instr./MAC: TFLite Micro built for the same emulated CPUs (DESIGN.md section 5): the MPS2 "
        "rows show the Cortex-M4 figures (reference kernels, CMSIS-NN), the AN547 row Cortex-M55 + "
        "CMSIS-NN (Helium); no figure exists for the M3 and M7 themselves.",
        "RAM B (pool + I/O): the workspace pool plus the input and output buffers, comparable to the "
        "TFLite Micro arena (shared/models/README.md). Flash: the model's code and constants in the "
        "linked firmware. Firmware RAM: everything in RAM, including the 16 KiB stack and the harness.",
    ]
    return "\n".join(lines + notes) + "\n"


def error_row(model: str, board: str, exc: Exception) -> dict[str, Any]:
    """The row of a run that failed, its error printed to stderr."""
    print(f"    error: {exc}", file=sys.stderr, flush=True)
    return {"model": model, "board": board, "cpu": get_board(board).cpu, "error": str(exc)}


def print_progress(row: dict[str, Any], t0: float) -> None:
    print(f"    {'match' if row['match'] else 'MISMATCH'}, {_fmt(row['instructions'])} instructions, "
          f"{_fmt(row['instructions_per_mac'])}/MAC, {row['seconds']:.1f} s "
          f"(total {time.monotonic() - t0:.0f} s)", file=sys.stderr, flush=True)


def write_results(out_dir: Path, stem: str, title: str, table: str, rows: list[dict[str, Any]], t0: float) -> int:
    """Write ``stem``.md (``title`` + ``table``) and ``stem``.json (``rows``), print the table;
    returns the exit status: 1 when a run failed or differed from TFLite Micro."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{stem}.md").write_text(f"# {title}\n\n{table}")
    (out_dir / f"{stem}.json").write_text(json.dumps(rows, indent=2) + "\n")
    print(table)
    print(f"wrote {out_dir / stem}.md and .json in {time.monotonic() - t0:.0f} s", file=sys.stderr)
    failed = [r for r in rows if "error" in r or not r.get("match")]
    return 1 if failed else 0


def _split(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--boards", type=_split, default=BOARD_NAMES, help="comma-separated (default: all four)")
    ap.add_argument("--models", type=_split, default=MODELS, help="comma-separated model names (default: int8 ones)")
    ap.add_argument("--models-dir", type=Path, default=ROOT.parent / "shared" / "models")
    ap.add_argument("--out-dir", type=Path, default=ROOT / "benchmarks" / "results")
    ap.add_argument("--no-plots", action="store_true", help="skip the memory-plan PNGs")
    ap.add_argument("--offload", action="append", default=[], help="external module (e.g. cmsis-nn)")
    ap.add_argument("--cmsis-nn-dir", type=Path, help="CMSIS-NN sources (default: $CMSIS_NN_DIR)")
    ap.add_argument("--max-flash", type=int, metavar="BYTES",
                    help="compile as `utvm compile --max-flash BYTES` does (write to another --out-dir)")
    args = ap.parse_args(argv)
    offload = tuple(args.offload)
    suffix = "".join(f"_{m}" for m in offload)
    if offload:
        args.no_plots = True
    for board in args.boards:
        if board not in BOARDS:
            ap.error(f"unknown board {board!r} (choose from {', '.join(BOARD_NAMES)})")
    for model in args.models:
        if not (args.models_dir / f"{model}.tflite").is_file():
            ap.error(f"model {model!r} not found in {args.models_dir}")

    rows: list[dict[str, Any]] = []
    total = len(args.models) * len(args.boards)
    t0 = time.monotonic()
    for model in args.models:
        path = args.models_dir / f"{model}.tflite"
        plotted = args.no_plots
        for board in args.boards:
            print(f"[{len(rows) + 1}/{total}] {model} on {board} ...", file=sys.stderr, flush=True)
            with tempfile.TemporaryDirectory(prefix="utvm-bench-") as tmp:
                try:
                    row = bench_one(path, board, Path(tmp), offload, args.cmsis_nn_dir, args.max_flash)
                except UtvmError as exc:
                    rows.append(error_row(model, board, exc))
                    continue
                if not plotted:
                    from plot_memory_plan import plot_memory_plan

                    png = plot_memory_plan(Path(tmp) / "mlf" / "metadata.json", args.out_dir, label=model)
                    print(f"    wrote {png}", file=sys.stderr, flush=True)
                    plotted = True
            rows.append(row)
            print_progress(row, t0)

    title = "int8 models on the emulated boards" + (f" (--offload {', '.join(offload)})" if offload else "")
    return write_results(args.out_dir, f"boards{suffix}", title, markdown(rows), rows, t0)


if __name__ == "__main__":
    raise SystemExit(main())
