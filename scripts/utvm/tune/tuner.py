"""`utvm tune`: for each distinct MAC-carrying kernel of a model, measure the configurations of
its tuning space and record the fastest one whose outputs equal the default's."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..compiler import CompileResult, compile_model
from ..configs.log import write_log
from ..configs.workload import tunable, workload, workload_key
from ..errors import UtvmError
from ..ir import Graph, Operator
from ..ops import macs
from ..options import CompileOptions
from ..plan.memory import step_heights
from ..run.boards import get_board
from .device import measure_on_devices
from .measure import Candidate, measure
from .options import TuneOptions
from .space import Config, sample, space

Progress = Callable[[str], None]


@dataclass
class KernelResult:
    key: str
    op: str
    configs: int
    measured: int
    default: Candidate
    best: Candidate
    rejected: dict[str, int] = field(default_factory=dict)
    #: the first operator of the model with this workload (e.g. ``CONV_2D#3``) and its MACs
    source: str = ""
    macs: int = 0


def _toolchain() -> str:
    gcc = shutil.which("arm-none-eabi-gcc")
    if gcc is None:
        return "none"
    out = subprocess.run([gcc, "--version"], capture_output=True, text=True, check=False).stdout
    return out.splitlines()[0] if out else "arm-none-eabi-gcc"


def _heights(result: CompileResult) -> dict[int, int]:
    """Per kernel call: the pool bytes in use at that step apart from the call's own scratch."""
    return step_heights(result.plan, [c.symbol for c in result.lowered.calls])


def _pool_with(result: CompileResult, steps: list[int], heights: dict[int, int], scratch: int) -> int:
    """The pool the model would need (estimated) if the kernels at ``steps`` needed ``scratch``."""
    return max([result.plan.pool_size, *(heights[s] + scratch for s in steps)])


def tune_cpu(options: TuneOptions) -> str:
    """The CPU the candidates are compiled for: --cpu for a device utvm does not know, else the board's."""
    if options.cpu is not None and options.devices:
        return options.cpu
    return get_board(options.board).cpu


def tune_model(model: Path, log_path: Path, options: TuneOptions, progress: Progress,
               compile_options: CompileOptions | None = None) -> list[KernelResult]:
    """Tune ``model`` compiled with ``compile_options`` (the command line's, made once; None: the
    defaults), its CPU the board's and its constants an ARM object whatever they say."""
    if options.trials < 1:
        raise UtvmError("--trials must be at least 1")
    if options.jobs < 1:
        raise UtvmError("--jobs must be at least 1")
    if options.board == "host":
        raise UtvmError("tune needs an emulated board (mps2/an385, mps2/an386, mps2/an500, mps3/an547) or --device")
    compile_options = dataclasses.replace(compile_options or CompileOptions(), cpu=tune_cpu(options),
                                          constants_target="arm")
    if options.work_dir is not None:
        options.work_dir.mkdir(parents=True, exist_ok=True)
        return _tune(model, log_path, options, progress, compile_options, options.work_dir)
    with tempfile.TemporaryDirectory(prefix="utvm-tune-") as tmp:
        return _tune(model, log_path, options, progress, compile_options, Path(tmp))


def _tune(model: Path, log_path: Path, options: TuneOptions, progress: Progress, compile_options: CompileOptions,
          work: Path) -> list[KernelResult]:
    """Tune ``model``: its default compiled with ``compile_options``, and so each candidate."""
    cpu = compile_options.cpu
    progress(f"compiling {model} for {cpu} (the default configuration)")
    default = compile_model(model, work / "default", compile_options)
    heights = _heights(default)
    steps_of: dict[str, list[int]] = {}
    first_op: dict[str, Operator] = {}
    for step, call in enumerate(default.lowered.calls):
        op = default.graph.ops[call.op_index]
        if call.external is not None or not tunable(default.graph, op):
            continue
        key = workload_key(workload(default.graph, op, cpu))
        steps_of.setdefault(key, []).append(step)
        first_op.setdefault(key, op)
    if options.max_flash is not None and default.sources.constants_bytes > options.max_flash:
        raise UtvmError(f"--max-flash {options.max_flash}: the default configuration's constants already take "
                        f"{default.sources.constants_bytes} bytes (compile with --max-flash to find the least)")
    flash = [default.sources.constants_bytes]  # the constants with the configurations picked so far
    results: list[KernelResult] = []
    records: list[dict[str, Any]] = []
    keys = sorted(first_op, key=lambda k: steps_of[k][0])
    for k, key in enumerate(keys, 1):
        op = first_op[key]
        configs = space(default.graph, op, compile_options.target)
        chosen = sample(configs, options.trials, options.seed)
        progress(f"kernel {k}/{len(keys)} {op.kind} ({op.source}): {len(configs)} configurations, "
                 f"measuring {len(chosen)}")
        measured = _measure(default.graph, op, chosen, options, compile_options, work / f"k{k}")
        result = _pick(key, op, len(configs), measured, options, default, steps_of[key], heights, flash)
        progress(f"kernel {k}/{len(keys)}: best {result.best.instructions} instructions "
                 f"({result.best.config}), default {result.default.instructions}")
        results.append(result)
        records.append(_record(default.graph, op, cpu, result, options))
    write_log(log_path, records)
    progress(f"wrote {len(records)} records to {log_path}")
    return results


def _measure(graph: Graph, op: Operator, configs: list[Config], options: TuneOptions,
             compile_options: CompileOptions, work: Path) -> list[Candidate]:
    if options.devices:
        return measure_on_devices(graph, op, configs, options, compile_options, work)
    return measure(graph, op, configs, options.board, compile_options, work, jobs=options.jobs, seed=options.seed)


def _emulated(board: str) -> bool:
    try:
        get_board(board)
    except UtvmError:
        return False
    return True


def _pick(key: str, op: Operator, n_configs: int, cands: list[Candidate], options: TuneOptions,
          default_result: CompileResult, steps: list[int], heights: dict[int, int],
          flash: list[int]) -> KernelResult:
    """The fastest candidate with the default's outputs within --max-ram and --max-flash;
    ``flash[0]``, the model's constants with the picks so far, moves by the one taken."""
    base = cands[0]
    if base.instructions is None:
        raise UtvmError(f"{op.source}: the default kernel could not be measured: {base.error}")
    rejected = {"failed": 0, "differs": 0, "ram": 0, "flash": 0}
    best = base
    for c in cands[1:]:
        if c.instructions is None:
            rejected["failed"] += 1
            continue
        if c.output != base.output:
            rejected["differs"] += 1
            continue
        if options.max_ram is not None and _pool_with(default_result, steps, heights, c.scratch) > options.max_ram:
            rejected["ram"] += 1
            continue
        grown = flash[0] + len(steps) * (c.constants - base.constants)
        if options.max_flash is not None and grown > options.max_flash:
            rejected["flash"] += 1
            continue
        if c.instructions < best.instructions:  # type: ignore[operator]
            best = c
    flash[0] += len(steps) * (best.constants - base.constants)
    return KernelResult(key, op.kind, n_configs, len(cands), base, best, rejected, op.source,
                        macs(default_result.graph, op))


def _record(graph: Graph, op: Operator, cpu: str | None, r: KernelResult, options: TuneOptions) -> dict[str, Any]:
    from .. import __version__

    unit = "instructions" if _emulated(options.board) else "cycles"
    return {
        "key": r.key, "workload": workload(graph, op, cpu), "config": r.best.config,
        "cost": {unit: r.best.instructions, "macs": macs(graph, op), "constants": r.best.constants},
        "default": {"config": r.default.config, unit: r.default.instructions, "constants": r.default.constants},
        "trials": r.measured, "configurations": r.configs, "rejected": r.rejected,
        "board": options.board, "measured_on": "device" if options.devices else "qemu",
        "toolchain": _toolchain(), "utvm": __version__,
    }
