"""Command-line glue for host-driven mode, kept here so that ``utvm/cli.py`` needs only a
few lines:

    from utvm.rpc.commands import add_rpc_run_arguments, add_profile_parser, cmd_run_rpc

    add_rpc_run_arguments(run_parser)          # --rpc, --device, --baudrate
    add_profile_parser(subparsers)             # utvm profile MODEL --board B [--device P] [--json]
    if args.rpc: return cmd_run_rpc(args)      # in the run command

MODEL is a ``.tflite``/``.onnx`` file (compiled here with ``python -m utvm compile``) or an
MLF directory that is already compiled.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from utvm.errors import UtvmError
from utvm.rpc.runner import ProfileResult, RpcRunResult, profile, run_over_rpc
from utvm.rpc.server import is_host_board


def add_rpc_run_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``utvm run`` for host-driven mode."""
    group = parser.add_argument_group("host-driven mode (RPC)")
    group.add_argument(
        "--rpc",
        action="store_true",
        help="run through the RPC server: write inputs, run, read outputs over a byte stream",
    )
    _add_device_arguments(group)


def _add_device_arguments(group: argparse._ActionsContainer) -> None:
    group.add_argument(
        "--device",
        metavar="PORT",
        default=None,
        help="talk to a running RPC server: serial port, pty or socket://host:port "
        "(default: build the server for --board and start it)",
    )
    group.add_argument(
        "--baudrate", type=int, default=115200, help="serial speed (default 115200)"
    )


def add_profile_parser(
    subparsers: argparse._SubParsersAction,
) -> argparse.ArgumentParser:  # type: ignore[type-arg]
    """``utvm profile MODEL --board BOARD [--device PORT] [--json]``."""
    parser = subparsers.add_parser(
        "profile",
        help="cycles of every operator of one run, through the RPC server",
        description="Build the model with UTVM_PROFILE, run it once through the RPC server "
        "(host process, QEMU, or --device) and print the cycles of every operator.",
    )
    parser.add_argument("model", help=".tflite/.onnx model or compiled MLF directory")
    parser.add_argument(
        "--board", default="host", help="host, or a QEMU board (mps2/an385, ...)"
    )
    _add_device_arguments(parser)
    parser.add_argument(
        "--name", default=None, help="model name (default: from the file name)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    from utvm.cli import add_offload_arguments

    add_offload_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument(
        "--work-dir", type=Path, default=None, help="keep build files here"
    )
    parser.set_defaults(func=cmd_profile)
    return parser


def _model_name(model: Path, name: str | None) -> str:
    if name:
        return name
    stem = "".join(c if c.isalnum() else "_" for c in model.stem)
    return stem if stem and not stem[0].isdigit() else f"m_{stem}"


def compile_args(args: argparse.Namespace) -> list[str]:
    """``utvm compile`` options that follow from the run or profile options: the board's CPU,
    external modules, constants as an object."""
    from utvm.cli import offload_compile_args

    out: list[str] = []
    board = getattr(args, "board", "host") or "host"
    if not is_host_board(board):
        from utvm.run.boards import get_board

        out += ["--cpu", get_board(board).cpu]
    if getattr(args, "constants", "c") == "object":
        out += ["--constants", "object", "--constants-target", "host" if is_host_board(board) else "arm"]
    return out + offload_compile_args(args)


def compiled_mlf(model: Path, name: str | None, work: Path, extra: list[str] | None = None) -> Path:
    """An MLF directory for ``model``: itself if already compiled, else ``utvm compile``
    (with ``extra`` options)."""
    model = Path(model)
    if model.is_dir() and (model / "metadata.json").is_file():
        return model
    if not model.is_file():
        raise UtvmError(f"model not found: {model}")
    out = work / "mlf"
    cmd = [
        sys.executable,
        "-m",
        "utvm",
        "compile",
        str(model),
        "--name",
        _model_name(model, name),
        *(extra or []),
    ]
    proc = subprocess.run(
        [*cmd, "-o", str(out)], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise UtvmError(f"compiling {model.name} failed: {last}")
    return out


def _tflm_match(model: Path, result: RpcRunResult) -> bool | None:
    """Whether TFLite Micro gives identical outputs for the same inputs (None: not a .tflite)."""
    if model.suffix != ".tflite" or not model.is_file():
        return None
    try:
        from tflite_micro.python.tflite_micro import runtime
    except ImportError:
        return None
    interp = runtime.Interpreter.from_file(str(model))
    for i, t in enumerate(result.inputs):
        interp.set_input(t.array, i)
    interp.invoke()
    for i, out in enumerate(result.outputs):
        want = np.asarray(interp.get_output(i))
        if want.size != out.array.size or not np.array_equal(
            want.reshape(-1), out.array.reshape(-1)
        ):
            return False
    return True


def _work_dir(arg: Path | None) -> Path:
    if arg is not None:
        arg.mkdir(parents=True, exist_ok=True)
        return arg
    return Path(tempfile.mkdtemp(prefix="utvm-rpc-"))


def cmd_run_rpc(args: argparse.Namespace) -> int:
    """``utvm run MODEL --board B --rpc [--device P] [--json]``."""
    model = Path(args.model)
    work = _work_dir(getattr(args, "work_dir", None))
    mlf = (
        None
        if args.device and not model.exists()
        else compiled_mlf(model, getattr(args, "name", None), work, compile_args(args))
    )
    result, _ = run_over_rpc(
        mlf,
        args.board,
        device=args.device,
        work_dir=work,
        seed=getattr(args, "seed", 0) or 0,
        baudrate=getattr(args, "baudrate", 115200),
    )
    match = _tflm_match(model, result)
    if getattr(args, "json", False):
        data = result.to_json()
        if match is not None:
            data["matches_tflite_micro"] = match
        print(json.dumps(data))
    else:
        print(f"model {result.model} on {result.board} via RPC: {result.cycles} cycles")
        for out in result.outputs:
            print(
                f"output {out.name} {list(out.array.shape)}: {out.array.reshape(-1).tolist()}"
            )
        if match is not None:
            print(f"TFLite Micro: {'identical outputs' if match else 'OUTPUTS DIFFER'}")
    return 0 if match is not False else 1


def cmd_profile(args: argparse.Namespace) -> int:
    """``utvm profile MODEL --board B [--device P] [--json]``."""
    model = Path(args.model)
    work = _work_dir(getattr(args, "work_dir", None))
    mlf = (
        None
        if args.device and not model.exists()
        else compiled_mlf(model, args.name, work, compile_args(args))
    )
    prof: ProfileResult = profile(
        mlf,
        args.board,
        device=args.device,
        work_dir=work,
        seed=args.seed,
        baudrate=args.baudrate,
    )
    if args.json:
        print(json.dumps(prof.to_json()))
    else:
        print(prof.format_table())
    return 0
