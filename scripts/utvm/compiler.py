"""compile: model file -> Model Library Format directory (the whole pipeline, in order)."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .configs.kernels import Config, KernelConfigs
from .configs.log import tuned_configs
from .emit.aot import EmittedSources, emit
from .emit.compat_v018 import COMPAT_TVM_018
from .errors import REPORT_HINT, UtvmError, internal
from .external import OffloadOptions, create_modules
from .importer import c_identifier, load_model
from .importer.limits import MAX_POOL_BYTES, mib
from .ir import Graph, Operator
from .kernels.target import Target
from .lower.channels import drop_channels
from .lower.lowering import KernelCall, Lowered, lower_graph
from .ops import get as get_op
from .options import CompileOptions
from .package.mlf import called_functions, external_layout, metadata, write_mlf, write_tar
from .package.staticlib import build_static_lib
from .plan.memory import MemoryPlan, plan_memory, resolve_alias, step_heights
from .plan.patches import PatchPlan, choose_patches, patch_stage

if TYPE_CHECKING:
    from .ops.base import OpDef


@dataclass
class CompileResult:
    name: str
    mlf_dir: Path
    tar_path: Path
    graph: Graph
    lowered: Lowered
    plan: MemoryPlan
    sources: EmittedSources
    metadata: dict[str, Any]
    compile_seconds: float
    #: the graph as imported, before the channels that only meet zero weights were dropped
    source_graph: Graph | None = None

    @property
    def configs(self) -> KernelConfigs:
        """The kernel configuration of each operator of ``graph`` (none: its default), with where
        it came from."""
        configs = self.lowered.configs
        assert isinstance(configs, KernelConfigs)  # the compile loop lowers with one
        return configs

    @property
    def module_memory(self) -> dict[str, Any]:
        return self.metadata["modules"][self.name]["memory"]["functions"]["main"][0]


Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


def compile_model(model: Path, out_dir: Path, options: CompileOptions | None = None,
                  progress: Progress = _quiet) -> CompileResult:
    """Compile ``model`` into ``out_dir`` (an MLF directory) and ``out_dir``.tar.

    Output appears only when everything succeeded: files are written into a temporary
    directory beside ``out_dir`` and renamed into place at the end.
    """
    options = options or CompileOptions()
    start = time.monotonic()
    model = Path(model)
    name = c_identifier(options.name or model.stem)
    if options.name is not None and name != options.name:
        raise UtvmError(f"--name '{options.name}' is not a C identifier (try '{name}')")
    _check_options(options)
    check_output(Path(out_dir))
    progress(f"importing {model}")
    try:
        graph = load_model(model, note=lambda msg: progress(f"note: {msg}"))
    except UtvmError:
        raise
    except Exception as exc:
        raise internal(f"{model} (import)", exc) from exc
    graph.name = name
    return compile_graph(graph, out_dir, options, progress, start)


def check_output(out_dir: Path) -> None:
    """Refuse an output path that cannot become an MLF directory (before any work is done):
    an existing file, a path under a file, a directory that cannot be written."""
    tar = out_dir.with_name(out_dir.name + ".tar")
    if out_dir.exists() and not out_dir.is_dir():
        raise UtvmError(f"-o {out_dir}: exists and is not a directory")
    if tar.is_dir():
        raise UtvmError(f"-o {out_dir}: {tar} is a directory (the .tar is written there)")
    parent = out_dir.parent
    while not parent.exists() and parent != parent.parent:
        if parent.is_symlink():
            raise UtvmError(f"-o {out_dir}: {parent} is a broken symbolic link")
        parent = parent.parent
    if not parent.is_dir():
        raise UtvmError(f"-o {out_dir}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UtvmError(f"-o {out_dir}: cannot write in {parent} (permission denied)")


def _missing_parents(path: Path) -> list[Path]:
    """The ancestors of ``path`` that do not exist yet, innermost first."""
    missing = []
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        missing.append(parent)
        parent = parent.parent
    return missing


def _remove_dirs(dirs: list[Path]) -> None:
    """Remove the (empty) directories compile created, innermost first."""
    for d in dirs:
        try:
            d.rmdir()
        except OSError:
            break


def _check_options(options: CompileOptions) -> None:
    if options.constants not in ("c", "object"):
        raise UtvmError(f"--constants must be 'c' or 'object', not '{options.constants}'")
    if options.export not in (None, "static-lib"):
        raise UtvmError(f"--export must be 'static-lib', not '{options.export}'")
    if options.export == "static-lib" and shutil.which(options.cc) is None:
        raise UtvmError(f"C compiler '{options.cc}' not found on PATH (needed by --export static-lib)")
    if options.object_target not in ("host", "arm"):
        raise UtvmError(f"--constants-target must be 'host' or 'arm', not '{options.object_target}'")
    if options.compat not in (None, COMPAT_TVM_018):
        raise UtvmError(f"--compat must be '{COMPAT_TVM_018}', not '{options.compat}'")
    names = [name for name, _ in options.pools]
    for name, size in options.pools:
        if not name.isidentifier() or not name.isascii():
            raise UtvmError(f"--pool: '{name}' is not a C identifier")
        if size <= 0:
            raise UtvmError(f"--pool {name}: the size must be a positive number of bytes, not {size}")
    if len(set(names)) != len(names):
        raise UtvmError("--pool: each pool name may be given once")
    if options.max_flash is not None and options.max_flash <= 0:
        raise UtvmError(f"--max-flash: the budget must be a positive number of bytes, not {options.max_flash}")
    if options.pools and (options.shared_pool or options.compat):
        raise UtvmError("--pool cannot be combined with --shared-pool or --compat")


def compile_graph(graph: Graph, out_dir: Path, options: CompileOptions | None = None,
                  progress: Progress = _quiet, start: float | None = None,
                  configs: Mapping[int, Config] | None = None) -> CompileResult:
    """Compile an imported graph (``graph.name`` is the model name in C symbols) into
    ``out_dir`` (an MLF directory) and ``out_dir``.tar; see :func:`compile_model`. ``configs``
    (operator index -> kernel configuration: the tuner's candidate) are where the loop starts;
    the tuning log's configurations go over them."""
    options = options or CompileOptions()
    _check_options(options)
    start = time.monotonic() if start is None else start
    cmsis_nn_dir = options.cmsis_nn_dir or (Path(os.environ["CMSIS_NN_DIR"]) if os.environ.get("CMSIS_NN_DIR") else None)
    modules = create_modules(options.offload, OffloadOptions(cpu=options.cpu, cmsis_nn_dir=cmsis_nn_dir))
    source_graph = graph
    graph, dropped = drop_channels(graph)
    if dropped:
        progress(f"{dropped} channels that only meet zero weights dropped")
    kernel_configs = KernelConfigs.of(configs or {}, "tuner")
    if options.tuning_log is not None:
        tuned = tuned_configs(graph, options.tuning_log, options.cpu)
        kernel_configs = kernel_configs.with_configs(tuned, "tuning log")
        progress(f"tuning log: {len(tuned)} of {len(graph.ops)} operators take a tuned configuration")
    patch_plan = None
    if not options.memory_mode.fast:
        patched, patch_plan = choose_patches(graph, options.io_in_pool, options.memory_mode.max_extra_macs)
        if patch_plan is not None:
            kernel_configs = _through_patches(kernel_configs, graph, patched)
            graph = patched
            progress(f"patches: the first {len(patch_plan.stage)} layers on a {patch_plan.grid[0]}x{patch_plan.grid[1]} "
                     f"grid, {patch_plan.overhead:.1%} more MACs")
    progress(f"lowering {len(graph.ops)} operators with TVM")
    try:
        result = _compile_lowered(graph, out_dir, options, progress, start, modules, patch_plan, kernel_configs)
    except UtvmError:
        raise
    except Exception as exc:  # the last line: one error, never a traceback
        raise internal(graph.name, exc) from exc
    result.source_graph = source_graph
    return result


def _through_patches(configs: KernelConfigs, graph: Graph, patched: Graph) -> KernelConfigs:
    """``configs`` for the graph with its first stage split into patches (``split_stage``): an
    operator after the stage keeps its configuration, each patch of a stage operator takes the
    operator's. The patches are the new operators a stage may hold (``OpDef.patch_stage``; the
    others are the slices and concatenations that cut and join them), the stage's operators in
    order once per patch."""
    kept = {id(op): index for index, op in enumerate(graph.ops)}
    after = {id(op) for op in patched.ops}
    stage = [index for index, op in enumerate(graph.ops) if id(op) not in after]
    copies = [index for index, op in enumerate(patched.ops)
              if id(op) not in kept and patch_stage(op) is not None]
    old = {index: kept[id(op)] for index, op in enumerate(patched.ops) if id(op) in kept}
    for n, index in enumerate(copies):
        old[index] = stage[n % len(stage)]
        if patched.ops[index].kind != graph.ops[old[index]].kind:
            raise internal(f"{graph.name} (patches)", ValueError("a patch is not of its stage operator's kind"))
    return KernelConfigs({new: configs.entries[i] for new, i in old.items() if i in configs.entries})


def _configure(last: Attempt, pick: Callable[[int, KernelCall, Operator, OpDef], Config | None]) -> dict[int, Config]:
    """The configuration ``pick(step, call, op, opdef)`` returns (None: keep the default) for each
    operator the last round left without one."""
    changes: dict[int, Config] = {}
    for step, call in enumerate(last.lowered.calls):
        index = call.op_index
        op = last.lowered.graph.ops[index]
        opdef = get_op(op.kind)
        if opdef is None or index in last.configs or index in changes:
            continue
        config = pick(step, call, op, opdef)
        if config is not None:
            changes[index] = config
    return changes


def constants_bytes(lowered: Lowered) -> int:
    """Bytes of the constants the kernels of ``lowered`` read (each tensor once, as emitted)."""
    seen = {resolve_alias(a, lowered.aliases) for c in lowered.calls for a in c.args}
    return sum(t.nbytes for n in seen if (t := lowered.graph.tensors[n]).is_constant)


@dataclass
class Attempt:
    """One lowering of the compile loop: the configurations it was lowered with, the lowering, and
    its memory plan (made when a round first asks for it)."""

    configs: KernelConfigs
    lowered: Lowered
    planner: Callable[[Lowered], MemoryPlan]

    @cached_property
    def plan(self) -> MemoryPlan:
        return self.planner(self.lowered)


@dataclass(frozen=True)
class Round:
    """One round of the compile loop: ``propose`` reads the last attempt and returns new
    configurations for some operators (none: nothing to do, the round is skipped); the loop lowers
    and plans with them and keeps the new attempt when ``keep(last, new, options)`` says so (it may
    also refuse the compile: one UtvmError); progress shows ``figure`` of both attempts."""

    name: str
    propose: Callable[[Attempt, CompileOptions], dict[int, Config]]
    keep: Callable[[Attempt, Attempt, CompileOptions], bool]
    #: what the round changes, in bytes: "constants" (flash) or "pool"
    figure: str = "pool"

    def measure(self, attempt: Attempt) -> int:
        return constants_bytes(attempt.lowered) if self.figure == "constants" else attempt.plan.pool_size


def lean_configs(graph: Graph, target: Target, configs: dict[int, Config] | None = None) -> dict[int, Config]:
    """Every operator's leanest configuration (``OpDef.lean``) on ``target``, from ``configs``
    (tuned ones, or the defaults): what --max-flash takes when the constants are over it."""
    changes = {}
    for index, op in enumerate(graph.ops):
        opdef = get_op(op.kind)
        lean = (opdef.lean(graph, op, dict((configs or {}).get(index) or {}), target)
                if opdef and opdef.lean else None)
        if lean is not None:
            changes[index] = lean
    return changes


def _lean(last: Attempt, options: CompileOptions) -> dict[int, Config]:
    """With --max-flash and constants over it: every operator's leanest configuration
    (``OpDef.lean``: int8 weights kept as int8, packed constants), over tuned ones too."""
    if options.max_flash is None or constants_bytes(last.lowered) <= options.max_flash:
        return {}
    changes = lean_configs(last.lowered.graph, options.target, last.configs)
    if not changes:
        _within_flash(last, last, options)
    return changes


def _within_flash(last: Attempt, new: Attempt, options: CompileOptions) -> bool:
    """Kept when its constants are within --max-flash; else UtvmError."""
    after = constants_bytes(new.lowered)
    if after > (options.max_flash or 0):
        raise UtvmError(f"--max-flash {options.max_flash}: the model's constants take {after} bytes of flash "
                        f"even with int8 weights kept as int8 wherever a knob allows")
    return True


def _fit_scratch(last: Attempt, options: CompileOptions) -> dict[int, Config]:
    """A configuration with less scratch (``OpDef.fit_scratch``) for each operator without one
    whose kernel's scratch raises the pool above what the other steps need."""
    symbols = [c.symbol for c in last.lowered.calls]
    heights, need = step_heights(last.plan, symbols), step_heights(last.plan, symbols, own=True)

    def pick(step: int, call: KernelCall, op: Operator, opdef: OpDef) -> Config | None:
        others = max([need[s] for s in need if s != step] + [heights[step]])
        if opdef.fit_scratch is None or need[step] <= others:
            return None
        return opdef.fit_scratch(last.lowered.graph, op, options.target, others - heights[step])

    return _configure(last, pick)


#: --memory-mode fast: the most estimated instructions a kernel may take to run in place
ROWS_IN_ORDER_SLACK = 1.25


def _order_rows(last: Attempt, options: CompileOptions) -> dict[int, Config]:
    """A configuration that writes rows in order (``OpDef.rows_in_order_config``, with --memory-mode
    fast within ROWS_IN_ORDER_SLACK of the default's estimated cost) for each operator at the
    pool's peak, without one, whose kernel writes them out of order (it cannot run shifted)."""
    need = step_heights(last.plan, [c.symbol for c in last.lowered.calls], own=True)
    peak = max(need.values(), default=0)
    slack = ROWS_IN_ORDER_SLACK if options.memory_mode.fast else None

    def pick(step: int, call: KernelCall, op: Operator, opdef: OpDef) -> Config | None:
        if not call.rows_out_of_order or need[step] < peak or opdef.rows_in_order_config is None:
            return None
        return opdef.rows_in_order_config(last.lowered.graph, op, options.target, slack)

    return _configure(last, pick)


def _always(last: Attempt, new: Attempt, options: CompileOptions) -> bool:
    return True


def _smaller_pool(last: Attempt, new: Attempt, options: CompileOptions) -> bool:
    return new.plan.pool_size < last.plan.pool_size


#: the rounds of the compile loop, in order: each proposes configurations from the attempt the
#: last round kept, the loop lowers and plans with them and keeps the result if the rule says so
ROUNDS = (
    Round("int8 weights within --max-flash", _lean, _within_flash, "constants"),
    Round("less scratch where it sets the pool", _fit_scratch, _always),
    Round("rows in order where the pool's peak may run in place", _order_rows, _smaller_pool),
)


def _compile_loop(graph: Graph, configs: KernelConfigs, options: CompileOptions, modules: list[Any],
                  progress: Progress) -> Attempt:
    """Lower and plan ``graph`` with ``configs``, then once more for each of ROUNDS that
    proposes new configurations; the attempt the last kept round made."""

    def attempt(configs: KernelConfigs) -> Attempt:
        lowered = lower_graph(graph, f"tvmgen_{graph.name}", options.target, modules, configs=configs)
        return Attempt(configs, lowered, planner)

    def planner(lowered: Lowered) -> MemoryPlan:
        return plan_memory(lowered, options.io_in_pool, options.pools, options.reserved)

    last = attempt(configs)
    for m in modules:
        taken = sum(1 for c in last.lowered.calls if c.module == m.name)
        progress(f"{m.name}: {taken} of {len(last.lowered.calls)} operators offloaded")
    for number, step in enumerate(ROUNDS, 1):
        head = f"round {number} of {len(ROUNDS)}, {step.name}:"
        changes = step.propose(last, options)
        if not changes:
            progress(f"{head} nothing to change")
            continue
        new = attempt(last.configs.with_configs(changes, step.name))
        kept = step.keep(last, new, options)
        progress(f"{head} {len(changes)} operators reconfigured, {step.figure} {step.measure(last)} -> "
                 f"{step.measure(new)} bytes: " + ("kept" if kept else "dropped"))
        if kept:
            last = new
    return last


def _compile_lowered(graph: Graph, out_dir: Path, options: CompileOptions, progress: Progress, start: float,
                     modules: list[Any], patch_plan: PatchPlan | None, configs: KernelConfigs) -> CompileResult:
    name = graph.name
    final = _compile_loop(graph, configs, options, modules, progress)
    lowered, plan = final.lowered, final.plan
    problems = plan.check()
    if problems:
        raise UtvmError(f"internal error: invalid memory plan: {problems[0]}; {REPORT_HINT}")
    if plan.pool_size > MAX_POOL_BYTES:
        raise UtvmError(f"the model needs a workspace pool of {mib(plan.pool_size)}, more than the largest "
                        f"accepted ({mib(MAX_POOL_BYTES)})")
    progress("emitting the AOT executor")
    sources = emit(name, lowered, plan, options.io_in_pool, constants_c=options.constants == "c", modules=modules,
                   compat=options.compat, shared_pool=options.shared_pool)
    libraries = {m.name: m.library(called_functions(sources.glue[m.c_name])) for m in modules}
    target = "c" + (f" -mcpu={options.cpu}" if options.cpu else "")
    meta = metadata(name, lowered.graph, lowered, plan, sources, options.io_in_pool, target,
                    external_layout(name, modules, libraries, lowered))
    meta["modules"][name]["patch_plan"] = patch_plan.as_dict() if patch_plan is not None else None

    out_dir = Path(out_dir)
    check_output(out_dir)
    created = _missing_parents(out_dir)
    tar_path = out_dir.with_name(out_dir.name + ".tar")
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    except OSError as exc:
        _remove_dirs(created)
        raise UtvmError(f"-o {out_dir}: cannot write there ({exc.strerror or type(exc).__name__})") from None
    try:
        stage = tmp / "mlf"
        stage.mkdir()
        write_mlf(stage, name, lowered.graph, lowered, plan, sources, meta,
                  constants_object_target=options.object_target if options.constants == "object" else None,
                  modules=modules, libraries=libraries)
        if options.export == "static-lib":
            progress(f"building lib{name}.a with {options.cc}")
            build_static_lib(stage, name, options.cc, options.cflags)
        write_tar(stage, tmp / "mlf.tar")
        if out_dir.exists():
            shutil.rmtree(out_dir)
        os.replace(stage, out_dir)
        os.replace(tmp / "mlf.tar", tar_path)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        _remove_dirs(created)
        if isinstance(exc, OSError):
            raise UtvmError(f"-o {out_dir}: cannot write the output ({exc.strerror or type(exc).__name__})") from None
        raise
    shutil.rmtree(tmp, ignore_errors=True)
    seconds = time.monotonic() - start
    progress(f"wrote {out_dir} and {tar_path} in {seconds:.1f} s")
    return CompileResult(name, out_dir, tar_path, lowered.graph, lowered, plan, sources, meta, seconds)
