"""Arguments that several commands share (pools, memory mode, offload, tuning log, model
groups), the one place the command line becomes a :class:`~utvm.options.CompileOptions`
(:func:`options_from`), and the progress line every command prints."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import UtvmError
from ..options import CompileOptions

#: CompileOptions fields that no command-line argument sets (a model group sets them)
_NOT_ARGUMENTS = ("shared_pool", "reserved")
#: CompileOptions fields whose argument has another name (``--pool``, repeated, gives ``pools``)
_ARGUMENT = {"pools": "pool"}


def progress(msg: str) -> None:
    """Progress goes to stdout: stderr carries nothing but the one error line."""
    print(f"utvm: {msg}", flush=True)


def add_group_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("more_models", type=Path, nargs="*", metavar="MODEL",
                   help="with --shared-pool: more models, run one after the other")
    p.add_argument("--shared-pool", action="store_true",
                   help="one pool for all the models (the largest need): one directory per model plus the "
                        "group's header tvmgen_<group>.h and pool")
    p.add_argument("--group", help="with --shared-pool: the group's C name (default: the output directory's name)")
    p.add_argument("--keep", action="append", default=[], metavar="MODEL:OUTPUT",
                   help="with --shared-pool: keep this output of MODEL alive while the later models run")


def options_from(args: argparse.Namespace, refuse: Iterable[str] = (), command: str = "",
                 **given: Any) -> CompileOptions:
    """The compile options a command line asks for, made once: each field from its argument where
    the command has one (repeated arguments as tuples), with ``given`` over them (what the command
    derives itself, e.g. a board's CPU). The fields in ``refuse`` are options ``command`` does not
    hand on to its compile: left at their defaults they keep them, set they end the command with
    one error line (rather than being dropped without a word)."""
    values: dict[str, Any] = {}
    default = CompileOptions()
    for f in dataclasses.fields(CompileOptions):
        dest = _ARGUMENT.get(f.name, f.name)
        if not f.init or f.name in _NOT_ARGUMENTS or not hasattr(args, dest):
            continue
        value = getattr(args, dest)
        value = tuple(value) if isinstance(value, list) else value
        if f.name in refuse:
            if getattr(CompileOptions(**{f.name: value}), f.name) != getattr(default, f.name):
                raise UtvmError(f"{command} does not take --{dest.replace('_', '-')}")
            continue
        values[f.name] = value
    return CompileOptions(**{**values, **given})


def group_args(args: argparse.Namespace, default_group: str) -> tuple[list[Path], str] | None:
    """(models, group name) for --shared-pool, None for one model without it."""
    from ..importer import c_identifier

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
    from ..external import module_names

    p.add_argument("--offload", action="append", default=[], metavar="MODULE",
                   help=f"let an external module take the operators it supports ({', '.join(module_names())}); "
                        "repeat for several, the first named has priority")
    p.add_argument("--cmsis-nn-dir", type=Path, metavar="DIR",
                   help="CMSIS-NN sources for --offload cmsis-nn (default: $CMSIS_NN_DIR)")


def add_constants_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--constants", choices=("c", "object"), default="c",
                   help="c: weights as C arrays (<name>_lib2.c); object: a relocatable ELF object")


def add_build_arguments(p: argparse.ArgumentParser) -> None:
    """How the model is compiled, as compile and run take it: pools, memory mode, constants,
    external modules, tuning log."""
    add_pool_argument(p)
    add_memory_mode_argument(p)
    add_constants_argument(p)
    add_offload_arguments(p)
    add_tuning_log_argument(p)


def add_debug_argument(p: argparse.ArgumentParser) -> None:
    """--debug after the command too (``utvm compile M --debug``)."""
    p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                   help="show the traceback of an internal error")
