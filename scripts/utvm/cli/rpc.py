"""Host-driven mode on the command line: ``utvm run --rpc`` / ``--device`` (the options
:func:`add_rpc_run_arguments` adds, the command :func:`cmd_run_rpc`) and ``utvm profile``.

MODEL is a ``.tflite``/``.onnx`` file (compiled here, in this process, as ``utvm compile``
would with the board's CPU) or an MLF directory that is already compiled.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..errors import UtvmError
from ..options import CompileOptions
from ..rpc.runner import RpcRunResult, run_over_rpc
from ..rpc.server import is_host_board
from .options import add_offload_arguments, options_from


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


def compile_options(args: argparse.Namespace, command: str = "run --rpc") -> CompileOptions:
    """The compile options that follow from the run or profile options: the model's name, the
    board's CPU, external modules, constants as an object in the board's ELF format."""
    board = getattr(args, "board", "host") or "host"
    host = is_host_board(board)
    cpu = None
    if not host:
        from ..run.boards import get_board

        cpu = get_board(board).cpu
    constants = getattr(args, "constants", "c")
    # the RPC server's model runs in the pool and with the kernels it was compiled for
    return options_from(args, refuse=("io_in_pool", "pools", "memory_mode", "tuning_log"), command=command,
                        cpu=cpu, constants_target=("host" if host else "arm") if constants == "object" else None)


def compiled_mlf(model: Path, work: Path, options: CompileOptions) -> Path:
    """An MLF directory for ``model``: itself if already compiled, else compiled here with
    ``options`` (its name, by default, from the file's)."""
    model = Path(model)
    if model.is_dir() and (model / "metadata.json").is_file():
        return model
    if not model.is_file():
        raise UtvmError(f"model not found: {model}")
    from ..compiler import compile_model

    options = dataclasses.replace(options, name=_model_name(model, options.name))
    try:
        return compile_model(model, work / "mlf", options).mlf_dir
    except UtvmError as exc:
        raise UtvmError(f"compiling {model.name} failed: {exc}") from exc.__cause__


def reference_fields(model: Path, result: RpcRunResult, mlf: Path | None) -> dict[str, object]:
    """The keys ``run --rpc --json`` and ``profile --json`` share with ``run --json``
    (:class:`utvm.run.runner.RunReport`): the reference and the comparison with it (None
    when there is no reference: not a model file, or tflite-micro not installed), and the
    memory of the compiled model (None when only a device was given)."""
    from ..run.reference import reference_name, run_reference
    from ..run.runner import compare

    fields: dict[str, object] = {
        "model": str(model), "board": result.board, "reference": None,
        "outputs_match_reference": None, "max_abs_diff": None, "max_rel_diff": None,
    }
    memory = _mlf_memory(mlf) if mlf is not None else {}
    for key in ("workspace_size_bytes", "io_size_bytes", "constants_size_bytes"):
        fields[key.replace("_size", "")] = memory.get(key)
    if not model.is_file() or model.suffix.lower() not in (".tflite", ".onnx"):
        return fields
    reference = run_reference(model, [t.array for t in result.inputs], len(result.outputs))
    if reference is None:
        return fields
    steps = None
    if model.suffix.lower() == ".onnx":  # quantized ONNX: one quantization step of slack
        from ..importer import load_model
        from ..run.runner import output_steps

        steps = output_steps(model, load_model(model))
    ok, max_abs, max_rel = compare([o.array for o in result.outputs], reference[0], steps)
    fields.update(reference=reference_name(model), outputs_match_reference=ok,
                  max_abs_diff=max_abs, max_rel_diff=max_rel)
    return fields


def _mlf_memory(mlf: Path) -> dict[str, int]:
    try:
        meta = json.loads((mlf / "metadata.json").read_text())
        module = next(iter(meta["modules"].values()))
        return dict(module["memory"]["functions"]["main"][0])
    except (OSError, ValueError, KeyError, StopIteration, IndexError, TypeError):
        return {}


def _print_reference(fields: dict[str, object], as_json: bool) -> None:
    if fields["reference"] is not None or not str(fields["model"]).lower().endswith(".tflite"):
        return
    from ..run.reference import NO_TFLM

    print(f"utvm: {NO_TFLM}", file=sys.stderr if as_json else sys.stdout)


def _work_dir(arg: Path | None) -> Path:
    if arg is not None:
        arg.mkdir(parents=True, exist_ok=True)
        return arg
    return Path(tempfile.mkdtemp(prefix="utvm-rpc-"))


def _run(args: argparse.Namespace, with_profile: bool) -> tuple[RpcRunResult, Any, dict[str, object]]:
    """Compile MODEL (unless only a device is given), run it once through the RPC server and
    compare it with the reference: (result, profile or None, reference fields)."""
    model = Path(args.model)
    work = _work_dir(getattr(args, "work_dir", None))
    mlf = None if args.device and not model.exists() else compiled_mlf(model, work, compile_options(args, "profile" if with_profile else "run --rpc"))
    result, prof = run_over_rpc(mlf, args.board, device=args.device, work_dir=work,
                                seed=getattr(args, "seed", 0) or 0, baudrate=getattr(args, "baudrate", 115200),
                                with_profile=with_profile)
    fields = reference_fields(model, result, mlf)
    _print_reference(fields, getattr(args, "json", False))
    return result, prof, fields


def cmd_run_rpc(args: argparse.Namespace) -> int:
    """``utvm run MODEL --board B --rpc [--device P] [--json]``."""
    result, _, fields = _run(args, with_profile=False)
    match = fields["outputs_match_reference"]
    if getattr(args, "json", False):
        print(json.dumps({**result.to_json(), **fields}))  # model: the file, as run --json
    else:
        print(f"model {result.model} on {result.board} via RPC: {result.cycles} cycles")
        for out in result.outputs:
            print(
                f"output {out.name} {list(out.array.shape)}: {out.array.reshape(-1).tolist()}"
            )
        if match is not None:
            print(f"{fields['reference']}: {'identical outputs' if match else 'OUTPUTS DIFFER'}")
    return 0 if match is not False else 1


def cmd_profile(args: argparse.Namespace) -> int:
    """``utvm profile MODEL --board B [--device P] [--json]``."""
    result, prof, fields = _run(args, with_profile=True)
    assert prof is not None
    if args.json:
        print(json.dumps({**fields, "cycles": result.cycles, **prof.to_json()}))
    else:
        print(prof.format_table())
        if fields["outputs_match_reference"] is not None:
            print(f"{fields['reference']}: "
                  f"{'identical outputs' if fields['outputs_match_reference'] else 'OUTPUTS DIFFER'}")
    return 0 if fields["outputs_match_reference"] is not False else 1
