"""``utvm tune``: measure the kernel configurations of a model and record the fastest."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..errors import UtvmError
from .options import add_memory_mode_argument, add_offload_arguments, add_pool_argument, options_from, progress


def add_tune_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("tune", help="measure kernel configurations on a board and record the fastest",
                       description="For each distinct MAC-carrying kernel of MODEL, measure the configurations "
                       "of its tuning space (kernel variants and knobs) on an emulated board (QEMU's exact "
                       "instruction counts) or on devices through the RPC server, and write the fastest whose "
                       "outputs equal the default's to LOG (JSON lines) for compile/run --tuning-log.")
    p.add_argument("model", type=Path, nargs="?", help=".tflite or .onnx model")
    p.add_argument("--board", default="mps2/an386", help="emulated board or the device's board (default mps2/an386)")
    p.add_argument("--device", action="append", default=[], metavar="PORT",
                   help="an RPC server to measure on (serial port, pty, socket://host:port); repeat for a farm "
                        "of boards, one worker each")
    p.add_argument("--flash", metavar="CMD",
                   help="with --device: command that puts a firmware on the device, {elf} and {build} replaced "
                        "(e.g. \"west flash -d {build}\")")
    p.add_argument("--cpu", help="with --device: the device's CPU when utvm does not know its board (e.g. cortex-m7)")
    p.add_argument("--trials", type=int, default=16, help="configurations measured per kernel at most (default 16)")
    p.add_argument("--jobs", type=int, default=1, help="candidates compiled in parallel (default 1)")
    p.add_argument("--max-ram", type=int, metavar="BYTES", help="reject configurations pushing the pool above this")
    p.add_argument("--max-flash", type=int, metavar="BYTES",
                   help="reject configurations pushing the model's constants (flash) above this")
    add_pool_argument(p)
    add_memory_mode_argument(p)
    add_offload_arguments(p)
    p.add_argument("--seed", type=int, default=0, help="seed of the search and the test inputs (default 0)")
    p.add_argument("--merge", type=Path, nargs="+", metavar="LOG", help="merge logs, keeping the best per workload")
    p.add_argument("-o", "--output", type=Path, required=True, help="log to write (JSON lines)")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.set_defaults(func=cmd_tune)


def cmd_tune(args: argparse.Namespace) -> int:
    from ..configs.log import merge_logs

    if args.merge:
        if args.model is not None:
            raise UtvmError("give either a model to tune or --merge LOG..., not both")
        n = merge_logs(args.merge, args.output)
        print(f"utvm: merged {len(args.merge)} logs into {args.output} ({n} workloads)")
        return 0
    if args.model is None:
        raise UtvmError("tune needs a model (or --merge LOG...)")
    from ..tune.tuner import TuneOptions, tune_model

    options = TuneOptions(board=args.board, trials=args.trials, jobs=args.jobs, max_ram=args.max_ram,
                          max_flash=args.max_flash, seed=args.seed, devices=tuple(args.device), flash=args.flash, cpu=args.cpu)
    # the model is tuned as it will be compiled (pools, memory mode, external modules); --max-flash
    # is the tuner's budget for the configurations it picks, not a compile option of each candidate
    compile_options = options_from(args, max_flash=None)
    results = tune_model(args.model, args.output, options, (lambda _: None) if args.json else progress,
                         compile_options)
    rows = [{"op": r.op, "key": r.key, "configurations": r.configs, "measured": r.measured,
             "default_instructions": r.default.instructions, "best_instructions": r.best.instructions,
             "best": r.best.config, "rejected": r.rejected} for r in results]
    if args.json:
        print(json.dumps({"log": str(args.output), "kernels": rows}))
    else:
        for row in rows:
            print(f"  {row['op']:<18} {row['default_instructions']:>10} -> {row['best_instructions']:>10}  "
                  f"{row['best']}")
    return 0
