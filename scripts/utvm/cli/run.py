"""``utvm run``: compile, build, run on the host or an emulated board, compare with the reference
(``--rpc`` / ``--device``: through the RPC server, :mod:`utvm.cli.rpc`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..errors import UtvmError
from .options import add_build_arguments, add_debug_argument, add_group_arguments, group_args, options_from, progress
from .rpc import add_rpc_run_arguments, cmd_run_rpc


def add_run_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("run", help="compile, build, run and compare with the reference")
    add_run_arguments(p)
    add_debug_argument(p)
    add_rpc_run_arguments(p)
    p.set_defaults(func=cmd_run)


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", type=Path, help=".tflite or .onnx model")
    add_group_arguments(p)
    p.add_argument("--board", default="host",
                   help="host, or an emulated board: mps2/an385, mps2/an386, mps2/an500, mps3/an547")
    p.add_argument("--input", type=Path, action="append", default=[],
                   help=".npy input (once per model input); default: deterministic random")
    p.add_argument("--output", type=Path, help="write the first output to this .npy file")
    p.add_argument("--io-in-pool", action="store_true", help="inputs and outputs inside the pool")
    add_build_arguments(p)
    p.add_argument("--repeats", type=int, default=1, help="runs to time (median is reported)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def cmd_run(args: argparse.Namespace) -> int:
    import numpy as np

    if getattr(args, "rpc", False) or getattr(args, "device", None):
        return cmd_run_rpc(args)

    from ..run.runner import HOST_BOARD, run_model

    if args.repeats < 1:
        raise UtvmError("--repeats must be at least 1")
    if args.board != HOST_BOARD:
        from ..run.boards import get_board

        get_board(args.board)
    grouped = group_args(args, "models")
    if grouped is not None:
        return _run_group(args, *grouped)
    options = options_from(args)
    report = run_model(args.model, args.board, args.input, options, args.repeats,
                       progress=None if args.json else progress)
    if args.output:
        np.save(args.output, report.outputs[0])
    if args.json:
        if report.reference is None:
            from ..run.reference import NO_TFLM

            print(f"utvm: {NO_TFLM}", file=sys.stderr)
        print(json.dumps(report.to_json()))
    else:
        rows = [("model", report.model), ("board", report.board), ("reference", report.reference or "none"),
                ("outputs match", _match_text(report.outputs_match_reference)),
                ("max abs diff", "-" if report.max_abs_diff is None else f"{report.max_abs_diff:g}"),
                ("workspace bytes", report.workspace_bytes), ("io bytes", report.io_bytes),
                ("constants bytes", report.constants_bytes), ("code bytes", report.code_bytes or "-"),
                ("compile seconds", f"{report.compile_seconds:.1f}")]
        rows += [("offloaded", f"{n} operators to {m}") for m, n in report.offloaded.items()]
        if report.instructions is not None:
            rows.append(("instructions", report.instructions))
            if report.instructions_per_mac:
                rows.append(("instructions/MAC", f"{report.instructions_per_mac:.2f}"))
        for k, v in rows:
            print(f"  {k:<16} {v}")
    return 0 if report.outputs_match_reference is not False else 1


def _run_group(args: argparse.Namespace, models: list[Path], group: str) -> int:
    from ..run.runner import run_group

    if args.pool or args.input or args.output or args.repeats != 1 or args.offload:
        raise UtvmError("run --shared-pool takes no --pool, --input, --output, --repeats or --offload")
    options = options_from(args, refuse=("constants", "tuning_log", "cmsis_nn_dir"), command="run --shared-pool")
    report = run_group(models, args.board, options, args.keep, group, progress=None if args.json else progress)
    if args.json:
        print(json.dumps(report))
    else:
        print(f"  {'pool bytes':<16} {report['pool_bytes']}")
        for row in report["models"]:
            print(f"  {row['name']:<16} own pool {row['own_pool_bytes']}, outputs match: "
                  f"{_match_text(row['outputs_match_reference'])}")
    return 0 if all(r["outputs_match_reference"] is not False for r in report["models"]) else 1


def _match_text(match: bool | None) -> str:
    return "not compared" if match is None else ("yes" if match else "NO")
