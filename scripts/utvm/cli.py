"""Command line: ``python -m utvm compile|run ...`` (``west tvm`` calls the same functions)."""

from __future__ import annotations

import argparse
import json
import sys
import traceback
import warnings
from pathlib import Path

from .errors import InternalError, UtvmError


def _progress(msg: str) -> None:
    """Progress goes to stdout: stderr carries nothing but the one error line."""
    print(f"utvm: {msg}", flush=True)


def add_compile_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", type=Path, help=".tflite or .onnx model")
    add_group_arguments(p)
    p.add_argument("--name", help="model name used in C symbols (default: the file stem)")
    p.add_argument("-o", "--output", type=Path, help="MLF directory to write (default: build/<name>)")
    p.add_argument("--io-in-pool", action="store_true",
                   help="place inputs and outputs inside the workspace pool (least RAM)")
    p.add_argument("--cpu", help="CPU the C is compiled for, e.g. cortex-m4 (selects kernel variants)")
    add_pool_argument(p)
    add_memory_mode_argument(p)
    p.add_argument("--max-flash", type=int, metavar="BYTES",
                   help="keep the model's constants within BYTES of flash: layouts that cost flash (int16-widened "
                        "weights) give way to int8 ones; exit 2 when even those do not fit")
    _add_constants_argument(p)
    p.add_argument("--constants-target", choices=("host", "arm"),
                   help="with --constants object: the object's ELF format (default: arm with --cpu, else host)")
    p.add_argument("--export", choices=("static-lib",),
                   help="static-lib: also build DIR/lib/lib<name>.a and its headers with --cc")
    p.add_argument("--cc", default="cc", help="C compiler for --export static-lib (default: cc)")
    p.add_argument("--cflags", default="", help="flags for --cc, e.g. \"-mcpu=cortex-m4 -mthumb -O2\"")
    add_offload_arguments(p)
    add_tuning_log_argument(p)
    p.add_argument("--compat", choices=("tvm-0.18",),
                   help="tvm-0.18: tvmgen_<name>.h and a system library as TVM 0.18 generated them, for "
                        "microTVM application code and project templates")
    p.add_argument("--json", action="store_true", help="print a JSON summary")


def add_group_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("more_models", type=Path, nargs="*", metavar="MODEL",
                   help="with --shared-pool: more models, run one after the other")
    p.add_argument("--shared-pool", action="store_true",
                   help="one pool for all the models (the largest need): one directory per model plus the "
                        "group's header tvmgen_<group>.h and pool")
    p.add_argument("--group", help="with --shared-pool: the group's C name (default: the output directory's name)")
    p.add_argument("--keep", action="append", default=[], metavar="MODEL:OUTPUT",
                   help="with --shared-pool: keep this output of MODEL alive while the later models run")


def _group_args(args: argparse.Namespace, default_group: str) -> tuple[list[Path], str] | None:
    """(models, group name) for --shared-pool, None for one model without it."""
    from .importer import c_identifier

    models = [args.model, *args.more_models]
    if not args.shared_pool:
        if len(models) > 1 or args.keep or args.group:
            raise UtvmError("several models, --group and --keep need --shared-pool")
        return None
    if getattr(args, "name", None):
        raise UtvmError("--name is for one model; with --shared-pool the models take their file names")
    return models, args.group or c_identifier(default_group)


def pool_spec(text: str) -> tuple[str, int]:
    """``NAME:BYTES`` of --pool."""
    name, sep, size = text.partition(":")
    try:
        if not sep:
            raise ValueError
        return name, int(size, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not NAME:BYTES (e.g. dtcm:32768)") from None


def add_memory_mode_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--memory-mode", default="fast", metavar="{fast,min,min:PCT}",
                   help="fast: layer by layer; min: the first layers of a CNN patch by patch where that lowers the "
                        "pool (more MACs: the overlapping halos are recomputed); min:PCT: the smallest pool with at "
                        "most PCT percent more MACs (min is min:50)")


def add_pool_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pool", action="append", default=[], type=pool_spec, metavar="NAME:BYTES",
                   help="a workspace pool of at most BYTES (own symbol, size macro and section .bss.tvm.NAME); "
                        "repeat in order of preference (hottest tensors into the first), e.g. "
                        "--pool dtcm:32768 --pool sram:131072; exit 2 when the model does not fit")


def add_tuning_log_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tuning-log", type=Path, metavar="LOG",
                   help="apply the kernel configurations `utvm tune` recorded for this CPU")


def add_offload_arguments(p: argparse.ArgumentParser) -> None:
    from .external import module_names

    p.add_argument("--offload", action="append", default=[], metavar="MODULE",
                   help=f"let an external module take the operators it supports ({', '.join(module_names())}); "
                        "repeat for several, the first named has priority")
    p.add_argument("--cmsis-nn-dir", type=Path, metavar="DIR",
                   help="CMSIS-NN sources for --offload cmsis-nn (default: $CMSIS_NN_DIR)")


def offload_compile_args(args: argparse.Namespace) -> list[str]:
    """The --offload / --cmsis-nn-dir options of ``args`` as ``utvm compile`` arguments."""
    out: list[str] = []
    for name in getattr(args, "offload", None) or []:
        out += ["--offload", name]
    if getattr(args, "cmsis_nn_dir", None):
        out += ["--cmsis-nn-dir", str(args.cmsis_nn_dir)]
    return out


def _add_constants_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--constants", choices=("c", "object"), default="c",
                   help="c: weights as C arrays (<name>_lib2.c); object: a relocatable ELF object")


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", type=Path, help=".tflite or .onnx model")
    add_group_arguments(p)
    p.add_argument("--board", default="host",
                   help="host, or an emulated board: mps2/an385, mps2/an386, mps2/an500, mps3/an547")
    p.add_argument("--input", type=Path, action="append", default=[],
                   help=".npy input (once per model input); default: deterministic random")
    p.add_argument("--output", type=Path, help="write the first output to this .npy file")
    p.add_argument("--io-in-pool", action="store_true", help="inputs and outputs inside the pool")
    add_pool_argument(p)
    add_memory_mode_argument(p)
    p.add_argument("--repeats", type=int, default=1, help="runs to time (median is reported)")
    _add_constants_argument(p)
    add_offload_arguments(p)
    add_tuning_log_argument(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")


def cmd_compile(args: argparse.Namespace) -> int:
    from .compiler import CompileOptions, compile_model
    from .importer import c_identifier

    name = args.name or c_identifier(args.model.stem)
    out = args.output or Path("build") / name
    grouped = _group_args(args, out.name)
    if grouped is not None:
        return _compile_group(args, out, *grouped)
    options = CompileOptions(name=args.name, io_in_pool=args.io_in_pool, cpu=args.cpu,
                             constants=args.constants, constants_target=args.constants_target,
                             export=args.export, cc=args.cc, cflags=args.cflags,
                             offload=tuple(args.offload), cmsis_nn_dir=args.cmsis_nn_dir,
                             tuning_log=args.tuning_log, compat=args.compat, pools=tuple(args.pool),
                             memory_mode=args.memory_mode, max_flash=args.max_flash)
    result = compile_model(args.model, out, options,
                           progress=(lambda _: None) if args.json else _progress)
    mem = result.module_memory
    summary = {"model": str(args.model), "name": result.name, "mlf": str(result.mlf_dir),
               "tar": str(result.tar_path), "workspace_bytes": mem["workspace_size_bytes"],
               "io_bytes": mem["io_size_bytes"], "constants_bytes": mem["constants_size_bytes"],
               "pools": result.metadata["modules"][result.name]["pools"],
               "patch_plan": result.metadata["modules"][result.name]["patch_plan"],
               "kernels": len(result.lowered.calls), "compile_seconds": round(result.compile_seconds, 3),
               "offloaded": {m: sum(1 for c in result.lowered.calls if c.module == m) for m in args.offload}}
    if args.json:
        print(json.dumps(summary))
    else:
        for k in ("workspace_bytes", "io_bytes", "constants_bytes", "kernels"):
            print(f"  {k:<16} {summary[k]}")
        for m, n in summary["offloaded"].items():
            print(f"  {'offloaded':<16} {n} to {m}")
    return 0


def _compile_group(args: argparse.Namespace, out: Path, models: list[Path], group: str) -> int:
    from .compiler import CompileOptions
    from .group import compile_group

    options = CompileOptions(io_in_pool=args.io_in_pool, cpu=args.cpu, constants=args.constants,
                             constants_target=args.constants_target, offload=tuple(args.offload),
                             cmsis_nn_dir=args.cmsis_nn_dir, tuning_log=args.tuning_log, pools=tuple(args.pool),
                             memory_mode=args.memory_mode, max_flash=args.max_flash)
    if args.export or args.compat:
        raise UtvmError("--export and --compat are for one model, not --shared-pool")
    result = compile_group(models, out, group, options, args.keep, (lambda _: None) if args.json else _progress)
    summary = {"group": group, "directory": str(result.out_dir), "pool_bytes": result.pool_size,
               "models": [{"model": str(m), "name": r.name, "own_pool_bytes": r.plan.pool_size,
                           "kept_outputs": result.kept.get(r.name, [])} for m, r in zip(models, result.models)]}
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"  {'pool_bytes':<16} {result.pool_size}")
        for row in summary["models"]:
            print(f"  {row['name']:<16} {row['own_pool_bytes']}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    import numpy as np

    if getattr(args, "rpc", False) or getattr(args, "device", None):
        from .rpc.commands import cmd_run_rpc

        return cmd_run_rpc(args)

    from .run.runner import HOST_BOARD, run_model

    if args.repeats < 1:
        raise UtvmError("--repeats must be at least 1")
    if args.board != HOST_BOARD:
        from .run.boards import get_board

        get_board(args.board)
    grouped = _group_args(args, "models")
    if grouped is not None:
        return _run_group(args, *grouped)
    report = run_model(args.model, args.board, args.input, args.io_in_pool, args.repeats,
                       progress=None if args.json else _progress, constants=getattr(args, "constants", "c"),
                       offload=tuple(args.offload), cmsis_nn_dir=args.cmsis_nn_dir,
                       tuning_log=args.tuning_log, pools=tuple(getattr(args, "pool", ())),
                       memory_mode=getattr(args, "memory_mode", "fast"))
    if args.output:
        np.save(args.output, report.outputs[0])
    if args.json:
        if report.reference is None:
            from .run.reference import NO_TFLM

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
    from .run.runner import run_group

    if args.pool or args.input or args.output or args.repeats != 1 or args.offload:
        raise UtvmError("run --shared-pool takes no --pool, --input, --output, --repeats or --offload")
    report = run_group(models, args.board, args.io_in_pool, args.keep, group,
                       progress=None if args.json else _progress, memory_mode=args.memory_mode)
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


def version_text() -> str:
    """``utvm --version``: this package's version and the TVM it compiles with."""
    from importlib import metadata

    from . import __version__

    try:
        tvm = metadata.version("apache-tvm")
    except metadata.PackageNotFoundError:
        tvm = "not installed"
    return f"utvm {__version__} (Apache TVM {tvm})"


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
    p.add_argument("--seed", type=int, default=0, help="seed of the search and the test inputs (default 0)")
    p.add_argument("--merge", type=Path, nargs="+", metavar="LOG", help="merge logs, keeping the best per workload")
    p.add_argument("-o", "--output", type=Path, required=True, help="log to write (JSON lines)")
    p.add_argument("--json", action="store_true", help="print a JSON summary")


def cmd_tune(args: argparse.Namespace) -> int:
    from .tune.log import merge_logs

    if args.merge:
        if args.model is not None:
            raise UtvmError("give either a model to tune or --merge LOG..., not both")
        n = merge_logs(args.merge, args.output)
        print(f"utvm: merged {len(args.merge)} logs into {args.output} ({n} workloads)")
        return 0
    if args.model is None:
        raise UtvmError("tune needs a model (or --merge LOG...)")
    from .tune.tuner import TuneOptions, tune_model

    options = TuneOptions(board=args.board, trials=args.trials, jobs=args.jobs, max_ram=args.max_ram,
                          max_flash=args.max_flash, seed=args.seed, devices=tuple(args.device), flash=args.flash, cpu=args.cpu)
    results = tune_model(args.model, args.output, options, (lambda _: None) if args.json else _progress)
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


def cmd_ops(args: argparse.Namespace) -> int:
    from .ops import table

    if args.json:
        print(json.dumps(table.as_json(), indent=1))
    elif args.markdown:
        print(table.as_markdown(), end="")
    else:
        print(table.as_text(), end="")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="utvm", description="Compile ML models into C for microcontrollers with TVM.")
    parser.add_argument("--version", action="version", version=version_text())
    parser.add_argument("--debug", action="store_true", help="show the traceback of an internal error")
    sub = parser.add_subparsers(dest="command", required=True)
    from .importer.limits import limits_text

    compile_parser = sub.add_parser("compile", help="compile a model into Model Library Format",
                                    epilog=limits_text() + ".")
    add_compile_arguments(compile_parser)
    compile_parser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                                help="show the traceback of an internal error")
    from .rpc.commands import add_profile_parser, add_rpc_run_arguments

    run_parser = sub.add_parser("run", help="compile, build, run and compare with the reference")
    add_run_arguments(run_parser)
    run_parser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                            help="show the traceback of an internal error")
    add_rpc_run_arguments(run_parser)
    add_profile_parser(sub)
    add_tune_parser(sub)
    ops_parser = sub.add_parser("ops", help="the supported operators (TFLite builtins, ONNX operators)")
    fmt = ops_parser.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the table as JSON")
    fmt.add_argument("--markdown", action="store_true", help="print docs/OPERATORS.md")
    from .info import add_info_parser

    add_info_parser(sub)
    return parser


COMMANDS = {"compile": cmd_compile, "run": cmd_run, "ops": cmd_ops, "tune": cmd_tune}

#: the longest error line printed (a longer message is cut in the middle)
MAX_ERROR_CHARS = 400


def error_line(message: str) -> str:
    """``error: <message>`` on one line of at most MAX_ERROR_CHARS characters."""
    text = " ".join(str(message).split())
    limit = MAX_ERROR_CHARS - len("error: ")
    if len(text) > limit:
        keep = limit - 40
        text = f"{text[:keep]} ... ({len(text) - keep} more characters)"
    return f"error: {text}"


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    debug = bool(getattr(args, "debug", False))
    try:
        handler = COMMANDS.get(args.command) or args.func
        with warnings.catch_warnings():
            if not debug:  # stderr carries the one error line only (numpy on damaged constants)
                warnings.simplefilter("ignore")
            return handler(args)
    except UtvmError as exc:
        if debug and exc.__cause__ is not None:
            traceback.print_exception(exc.__cause__)
        print(error_line(str(exc)), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except MemoryError:
        print(error_line(f"out of memory running utvm {args.command}"), file=sys.stderr)
        return 2
    except Exception as exc:  # the last line: one error, never a traceback (unless --debug)
        if debug:
            traceback.print_exc()
        print(error_line(str(InternalError(f"(utvm {args.command})", exc))), file=sys.stderr)
        return 2
