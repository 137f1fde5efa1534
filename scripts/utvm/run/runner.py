"""run: compile a model, build it for a board, run it, and compare with the reference."""

from __future__ import annotations

import dataclasses
import statistics
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..compiler import CompileOptions, CompileResult, compile_model
from ..errors import UtvmError, short_list
from ..ir import Graph
from ..ops import get as get_op
from ..ops import macs
from .harness import parse_harness_output, write_harness
from .host import build_host, mlf_sources, run_host
from .reference import NO_TFLM, random_inputs, reference_name, run_reference

HOST_BOARD = "host"


@dataclass
class RunReport:
    """What ``utvm run`` reports (``--json``): the same keys as ``run --rpc`` and ``profile``
    where they are meaningful there (:func:`utvm.cli.rpc.reference_fields`)."""

    model: str
    board: str
    #: "tflite-micro" or "onnx-reference"; None when none is installed (no comparison)
    reference: str | None
    outputs_match_reference: bool | None
    max_abs_diff: float | None
    max_rel_diff: float | None
    workspace_bytes: int
    io_bytes: int
    constants_bytes: int
    #: None where the host's executables are not ELF (macOS: Mach-O)
    code_bytes: int | None
    compile_seconds: float
    io_in_pool: bool
    instructions: int | None = None
    instructions_per_mac: float | None = None
    macs: int = 0
    latency_ratio_vs_reference: float | None = None
    memory: dict[str, Any] = field(default_factory=dict)
    #: the workspace pools: name, size, capacity, linker section (metadata.json's "pools")
    pools: list[dict[str, Any]] = field(default_factory=list)
    #: --memory-mode min: the stage computed patch by patch (layers, grid, MAC overhead), or None
    patch_plan: dict[str, Any] | None = None
    #: external module -> operators it took (--offload)
    offloaded: dict[str, int] = field(default_factory=dict)
    outputs: list[np.ndarray] = field(default_factory=list, repr=False)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("outputs")
        return d


def count_macs(result: CompileResult) -> int:
    g = result.source_graph or result.graph  # the model's MACs, dropped channels included
    return sum(macs(g, op) for op in g.ops)


def compare(outputs: list[np.ndarray], reference: list[np.ndarray],
            steps: list[float | None] | None = None) -> tuple[bool, float, float]:
    """(match, max abs diff, max relative diff): ints must be identical, floats within 1e-5 rel.
    ``steps[i]``, when given, is output i's quantization step: it may then differ by one step
    (quantized ONNX models, whose reference requantizes in float)."""
    if len(outputs) != len(reference):
        return False, float("inf"), float("inf")
    ok = True
    max_abs = 0.0
    max_rel = 0.0
    for k, (ours, ref) in enumerate(zip(outputs, reference)):
        if ref.size != ours.size:
            return False, float("inf"), float("inf")
        ref = ref.reshape(ours.shape)
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.abs(ours.astype(np.float64) - ref.astype(np.float64))
        if np.issubdtype(ours.dtype, np.floating):  # NaN equals NaN at the same position, inf the same inf
            diff = np.where((np.isnan(ours) & np.isnan(ref)) | (ours == ref), 0.0, np.nan_to_num(diff, nan=np.inf))
        max_abs = max(max_abs, float(diff.max(initial=0.0)))
        step = steps[k] if steps else None
        if step is not None:
            ok = ok and bool(np.all(diff <= step * (1 + 1e-4)))
        elif np.issubdtype(ours.dtype, np.floating):
            scale = np.maximum(np.nan_to_num(np.abs(ref.astype(np.float64)), nan=1.0, posinf=1.0), 1e-6)
            max_rel = max(max_rel, float((diff / scale).max(initial=0.0)))
            ok = ok and bool(np.allclose(ours, ref, rtol=1e-5, atol=1e-6, equal_nan=True))
        else:
            ok = ok and bool(np.array_equal(ours, ref))
    return ok, max_abs, max_rel


def output_steps(model: Path, g: Graph) -> list[float | None] | None:
    """For a quantized ONNX model, the quantization step of each output (an int8 output: 1; a
    float output computed by dequantizing an int8 tensor: that tensor's scale), else None."""
    if model.suffix.lower() != ".onnx":
        return None
    producer = {op.outputs[0]: op for op in g.ops}

    def step(name: str) -> float | None:
        t = g.tensors[name]
        if t.dtype == "int8":
            return 1.0
        op = producer.get(name)
        opdef = get_op(op.kind) if op is not None else None
        while op is not None and opdef is not None and opdef.rearranges:
            op = producer.get(op.inputs[0])
            opdef = get_op(op.kind) if op is not None else None
        if op is None or opdef is None or opdef.output_step is None:
            return None
        return opdef.output_step(g, op)

    steps = [step(n) for n in g.outputs]
    return steps if any(s is not None for s in steps) else None


def same_shape(given: tuple[int, ...], needed: tuple[int, ...]) -> bool:
    """``given`` is ``needed``, up to a leading batch dimension of 1 added or dropped."""
    return given == needed or (1, *given) == needed or given == (1, *needed)


def load_inputs(paths: list[Path], result: CompileResult) -> list[np.ndarray]:
    g = result.graph
    if len(paths) != len(g.inputs):
        raise UtvmError(f"the model has {len(g.inputs)} input(s), {len(paths)} --input file(s) given")
    arrays = []
    for path, name in zip(paths, g.inputs):
        t = g.tensors[name]
        try:
            arr = np.load(path, allow_pickle=False)
        except Exception as exc:
            raise UtvmError(f"{path}: not a readable .npy file ({type(exc).__name__})") from None
        if arr.dtype != np.dtype(t.dtype):
            raise UtvmError(f"{path}: dtype {arr.dtype}, input '{name}' needs {t.dtype}")
        if not same_shape(tuple(arr.shape), t.shape):
            raise UtvmError(f"{path}: shape {short_list(arr.shape)}, input '{name}' needs {short_list(t.shape)}")
        arrays.append(arr.reshape(t.shape))
    return arrays


def board_options(options: CompileOptions, board: str) -> CompileOptions:
    """``options`` for a model built for ``board``: the board's CPU, constants as an object in
    the board's ELF format."""
    host = board == HOST_BOARD
    return dataclasses.replace(options, cpu=None if host else _board_cpu(board),
                               constants_target="host" if host else "arm")


def run_model(model: Path, board: str = HOST_BOARD, inputs: list[Path] | None = None,
              options: CompileOptions | None = None, repeats: int = 1, workdir: Path | None = None,
              progress: Any = None, **fields: Any) -> RunReport:
    """Compile ``model`` with ``options`` (or a CompileOptions of ``fields``: io_in_pool=True,
    tuning_log=LOG, ...) for ``board``, build it, run it and compare with the reference."""
    if options is None:
        options = CompileOptions(**fields)
    elif fields:
        raise TypeError(f"run_model: options and {', '.join(fields)} given")
    model = Path(model)
    options = board_options(options, board)
    with tempfile.TemporaryDirectory(prefix="utvm-run-") as tmp_s:
        tmp = Path(workdir) if workdir else Path(tmp_s)
        result = compile_model(model, tmp / "mlf", options,
                               progress=progress or (lambda _: None))
        return run_compiled(model, result, board, tmp, inputs, options.io_in_pool, repeats, progress,
                            options.offload)


def run_compiled(model: Path, result: CompileResult, board: str, tmp: Path, inputs: list[Path] | None = None,
                 io_in_pool: bool = False, repeats: int = 1, progress: Any = None,
                 offload: tuple[str, ...] = ()) -> RunReport:
    """Builds the Model Library Format of ``result`` (compiled from ``model`` for ``board``) in
    ``tmp``, runs it and compares its outputs with the reference's."""
    g = result.graph
    x = load_inputs(inputs, result) if inputs else random_inputs(g)
    out_sizes = [g.tensors[n].nbytes for n in g.outputs]
    harness = write_harness(tmp, result.name, x, out_sizes, repeats)
    dtypes = [g.tensors[n].dtype for n in g.outputs]
    shapes = [g.tensors[n].shape for n in g.outputs]
    instructions = None
    memory: dict[str, Any] = {}
    if board == HOST_BOARD:
        binary = build_host(result.mlf_dir, harness, tmp / "model_host")
        stdout = run_host(binary)
        code_bytes = _host_code_bytes(binary, result.name)
    else:
        stdout, instructions, code_bytes, memory = _run_qemu(board, [result.mlf_dir], [result.name], harness, tmp)
    outputs, cycles, status = parse_harness_output(stdout, dtypes, shapes)
    if status != 0:
        raise UtvmError(f"the model returned status {status} on {board}")
    reference = run_reference(model, x, len(g.outputs), repeats)
    ok: bool | None = None
    max_abs: float | None = None
    max_rel: float | None = None
    ref_times: list[float] = []
    if reference is not None:
        ref, ref_times = reference
        ok, max_abs, max_rel = compare(outputs, ref, output_steps(model, g))
    elif progress is not None:
        progress(NO_TFLM)
    mem = result.module_memory
    macs = count_macs(result)
    ratio = None
    if board == HOST_BOARD and cycles and ref_times:
        ratio = statistics.median(cycles) * 1e-9 / statistics.median(ref_times)
    return RunReport(
        model=str(model), board=board, reference=reference_name(model) if reference else None,
        outputs_match_reference=ok, max_abs_diff=max_abs, max_rel_diff=max_rel,
        workspace_bytes=mem["workspace_size_bytes"], io_bytes=mem["io_size_bytes"],
        constants_bytes=mem["constants_size_bytes"], code_bytes=code_bytes,
        compile_seconds=round(result.compile_seconds, 3), io_in_pool=io_in_pool,
        instructions=instructions,
        instructions_per_mac=(instructions / macs) if instructions and macs else None,
        macs=macs, latency_ratio_vs_reference=ratio, memory=memory,
        pools=result.metadata["modules"][result.name]["pools"],
        patch_plan=result.metadata["modules"][result.name]["patch_plan"],
        offloaded={m: sum(1 for c in result.lowered.calls if c.module == m) for m in offload},
        outputs=outputs,
    )


def _host_code_bytes(binary: Path, name: str) -> int | None:
    """Bytes of machine code of the model's functions in the host binary, its own static
    kernels included (None when the host's executables are not ELF)."""
    from . import elfreport

    with open(binary, "rb") as f:
        if f.read(4) != b"\x7fELF":
            return None
    return elfreport.model_symbols(binary, f"tvmgen_{name}_").code_bytes


def _run_qemu(board_name: str, mlfs: list[Path], names: list[str], harness: Path, tmp: Path,
              extra: tuple[list[Path], list[Path]] = ([], [])) -> tuple[str, int | None, int, dict[str, Any]]:
    """Build the MLFs' models (named ``names``; ``extra`` sources and include dirs too) with
    ``harness`` for an emulated board and run it: (stdout, instructions of the first model's
    runs, code bytes, memory report)."""
    from . import boards, elfreport, qemu

    board = boards.get_board(board_name)
    sources, includes = mlf_sources(mlfs, "baremetal")
    elf = qemu.build_firmware(board, [*sources, *extra[0], harness], [*includes, *extra[1]], {}, tmp / "fw")
    run = qemu.run_firmware(board, elf)
    if run.fault:
        raise UtvmError(f"the firmware crashed on {board_name}: {run.fault}")
    stdout = run.stdout
    ticks = parse_cycles(stdout)
    instructions = board.ticks_to_instructions(ticks) if ticks is not None else None
    code = constants = pool = 0
    ok = True
    pools: list[dict[str, object]] = []
    for name in names:
        symbols = elfreport.model_symbols(elf, f"tvmgen_{name}_", board)
        code, constants, pool = code + symbols.code_bytes, constants + symbols.constants_bytes, pool + symbols.pool_bytes
        ok = ok and elfreport.constants_in_flash(elf, board, prefix=f"tvmgen_{name}_").ok
        pools += symbols.pool_places()
    report = elfreport.memory_report(elf, board)
    memory = {
        "flash_code_bytes": code, "flash_constants_bytes": constants,
        "ram_pool_bytes": pool, "ram_stack_bytes": report.ram_stack,
        "ram_other_bytes": report.ram_other, "constants_in_flash": ok, "pools": pools,
        "image": report.as_dict(),
    }
    return stdout, instructions, code, memory


def parse_cycles(stdout: str) -> int | None:
    import re

    m = re.search(r"^UTVM_CYCLES (\d+)", stdout, re.M)
    return int(m.group(1)) if m else None


def run_group(models: list[Path], board: str = HOST_BOARD, options: CompileOptions | None = None,
              keep: list[str] | None = None, group: str = "models", workdir: Path | None = None,
              progress: Any = None) -> dict[str, Any]:
    """run --shared-pool: the models compiled as one group, run one after the other in one program
    with the group's pool, each compared with the reference. The report (``--json``): the group's
    pool_bytes and, per model, its own pool need and outputs_match_reference."""
    from ..group import compile_group, group_sources
    from .harness import HarnessModel, parse_models_output, write_models_harness

    with tempfile.TemporaryDirectory(prefix="utvm-run-") as tmp_s:
        tmp = Path(workdir) if workdir else Path(tmp_s)
        options = board_options(options or CompileOptions(), board)
        built = compile_group([Path(m) for m in models], tmp / "group", group, options, keep,
                              progress or (lambda _: None))
        inputs = [random_inputs(r.graph) for r in built.models]
        entries = [HarnessModel(r.name, x, [r.graph.tensors[n].nbytes for n in r.graph.outputs],
                                tuple(r.graph.outputs.index(t) for t in built.kept.get(r.name, [])))
                   for r, x in zip(built.models, inputs)]
        harness = write_models_harness(tmp, entries)
        mlfs = [r.mlf_dir for r in built.models]
        extra = group_sources(built.out_dir)
        memory: dict[str, Any] = {}
        if board == HOST_BOARD:
            stdout = run_host(build_host(mlfs, harness, tmp / "group_host", extra=extra))
        else:
            stdout, _, _, memory = _run_qemu(board, mlfs, [*(r.name for r in built.models), group], harness, tmp, extra)
        rows = []
        for r, x, text, model in zip(built.models, inputs, parse_models_output(stdout, len(mlfs)), models):
            g = r.graph
            outputs, cycles, status = parse_harness_output(text, [g.tensors[n].dtype for n in g.outputs],
                                                           [g.tensors[n].shape for n in g.outputs])
            if status != 0:
                raise UtvmError(f"model {r.name} returned status {status} on {board}")
            reference = run_reference(Path(model), x, len(g.outputs), 1)
            ok = max_abs = None
            if reference is not None:
                ok, max_abs, _ = compare(outputs, reference[0], output_steps(Path(model), g))
            instructions = None
            if board != HOST_BOARD and cycles:
                from .boards import get_board

                instructions = get_board(board).ticks_to_instructions(cycles[0])
            rows.append({"model": str(model), "name": r.name, "own_pool_bytes": r.plan.pool_size,
                         "outputs_match_reference": ok, "max_abs_diff": max_abs, "instructions": instructions,
                         "kept_outputs": built.kept.get(r.name, []),
                         "patch_plan": r.metadata["modules"][r.name]["patch_plan"]})
        return {"group": group, "board": board, "io_in_pool": options.io_in_pool, "pool_bytes": built.pool_size,
                "models": rows, "memory": memory}


def _board_cpu(board: str) -> str | None:
    from .boards import get_board

    return get_board(board).cpu
