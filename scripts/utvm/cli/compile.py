"""``utvm compile``: a model (or a group of models with --shared-pool) into Model Library Format."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..errors import UtvmError
from .options import add_build_arguments, add_debug_argument, add_group_arguments, group_args, options_from, progress


def add_compile_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from ..importer.limits import limits_text

    p = sub.add_parser("compile", help="compile a model into Model Library Format", epilog=limits_text() + ".")
    add_compile_arguments(p)
    add_debug_argument(p)
    p.set_defaults(func=cmd_compile)


def add_compile_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", type=Path, help=".tflite or .onnx model")
    add_group_arguments(p)
    p.add_argument("--name", help="model name used in C symbols (default: the file stem)")
    p.add_argument("-o", "--output", type=Path, help="MLF directory to write (default: build/<name>)")
    p.add_argument("--io-in-pool", action="store_true",
                   help="place inputs and outputs inside the workspace pool (least RAM)")
    p.add_argument("--cpu", help="CPU the C is compiled for, e.g. cortex-m4 (selects kernel variants)")
    add_build_arguments(p)
    p.add_argument("--max-flash", type=int, metavar="BYTES",
                   help="keep the model's constants within BYTES of flash: layouts that cost flash (int16-widened "
                        "weights) give way to int8 ones; exit 2 when even those do not fit")
    p.add_argument("--constants-target", choices=("host", "arm"),
                   help="with --constants object: the object's ELF format (default: arm with --cpu, else host)")
    p.add_argument("--export", choices=("static-lib",),
                   help="static-lib: also build DIR/lib/lib<name>.a and its headers with --cc")
    p.add_argument("--cc", default="cc", help="C compiler for --export static-lib (default: cc)")
    p.add_argument("--cflags", default="", help="flags for --cc, e.g. \"-mcpu=cortex-m4 -mthumb -O2\"")
    p.add_argument("--compat", choices=("tvm-0.18",),
                   help="tvm-0.18: tvmgen_<name>.h and a system library as TVM 0.18 generated them, for "
                        "microTVM application code and project templates")
    p.add_argument("--json", action="store_true", help="print a JSON summary")


def cmd_compile(args: argparse.Namespace) -> int:
    from ..compiler import compile_model
    from ..importer import c_identifier

    name = args.name or c_identifier(args.model.stem)
    out = args.output or Path("build") / name
    grouped = group_args(args, out.name)
    if grouped is not None:
        return _compile_group(args, out, *grouped)
    options = options_from(args)
    result = compile_model(args.model, out, options,
                           progress=(lambda _: None) if args.json else progress)
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
    from ..group import compile_group

    if args.export or args.compat:
        raise UtvmError("--export and --compat are for one model, not --shared-pool")
    # --name is refused with --shared-pool; --cc/--cflags only serve --export
    options = options_from(args, refuse=("name", "cc", "cflags"), command="compile --shared-pool")
    result = compile_group(models, out, group, options, args.keep, (lambda _: None) if args.json else progress)
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
