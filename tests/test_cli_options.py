"""The command line becomes CompileOptions in one place (utvm.cli.options.options_from)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from utvm.cli.main import build_parser
from utvm.cli.options import options_from
from utvm.errors import UtvmError
from utvm.options import CompileOptions, MemoryMode


def test_compile_hands_every_option_on() -> None:
    args = build_parser().parse_args([
        "compile", "m.tflite", "--name", "n", "--io-in-pool", "--cpu", "cortex-m55", "--pool", "a:100",
        "--pool", "b:200", "--memory-mode", "min:10", "--constants", "object", "--offload", "plain-c",
        "--cmsis-nn-dir", "/c", "--tuning-log", "t.json", "--max-flash", "9000", "--constants-target", "host",
        "--export", "static-lib", "--cc", "gcc", "--cflags=-O2", "--compat", "tvm-0.18"])
    options = options_from(args)
    assert options == CompileOptions(
        name="n", io_in_pool=True, cpu="cortex-m55", constants="object", constants_target="host",
        export="static-lib", cc="gcc", cflags="-O2", offload=("plain-c",), cmsis_nn_dir=Path("/c"),
        tuning_log=Path("t.json"), compat="tvm-0.18", pools=(("a", 100), ("b", 200)),
        memory_mode=MemoryMode(0.1), max_flash=9000)
    # every field a command line can set is set above: none is left at its default
    default = CompileOptions()
    left = [f.name for f in dataclasses.fields(CompileOptions)
            if f.init and f.name not in ("shared_pool", "reserved") and getattr(options, f.name) == getattr(default, f.name)]
    assert left == []


def test_leave_and_given() -> None:
    args = build_parser().parse_args(["run", "m.tflite", "--memory-mode", "min", "--constants", "object",
                                      "--tuning-log", "t.json", "--io-in-pool"])
    options = options_from(args, refuse=("cmsis_nn_dir", "pools"), cpu="cortex-m4")
    assert (options.memory_mode, options.io_in_pool, options.constants, options.tuning_log, options.cpu) == (
        MemoryMode(0.5), True, "object", Path("t.json"), "cortex-m4")
    # an option the command does not hand on is refused when it is given, not dropped
    with pytest.raises(UtvmError, match="^run --shared-pool does not take --tuning-log$"):
        options_from(args, refuse=("tuning_log",), command="run --shared-pool")
    with pytest.raises(UtvmError, match="does not take --memory-mode"):
        options_from(args, refuse=("memory_mode",), command="run --rpc")
    assert options.target.dsp
