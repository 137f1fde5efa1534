"""Measuring candidate kernels: each configuration of one operator compiled as a model of its own
(the operator alone, its activations as inputs, its constants kept), all candidates linked
into one firmware that runs each on the same random inputs, and read back: instructions
(QEMU's exact count; a short kernel runs back to back until the count spans TARGET_TICKS counter
ticks, so the counter's tick does not round it) and the output bytes (which must equal the
default's).

The same firmware runs the default configuration's model once more with its operator's function
replaced by an empty one (the "null" model): what the executor spends around any operator (run
entry, I/O checks, binding the tensors, the call) whatever the kernel. A candidate's instructions
minus that fixed cost are the operator's own: its packed function and its kernel."""

from __future__ import annotations

import multiprocessing
import re
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import UtvmError
from ..ir import Graph, Operator
from ..options import CompileOptions
from ..run.reference import random_inputs
from .space import Config

#: counter ticks a measurement spans at least (a short kernel runs back to back that long)
TARGET_TICKS = 500


@dataclass
class Candidate:
    """One configuration of a kernel, compiled (``mlf``) or not (``error``)."""

    index: int
    config: Config
    mlf: Path | None = None
    #: bytes of pool the kernel alone needs (its scratch: im2col rows, padded copies)
    scratch: int = 0
    #: bytes of constants (flash) the kernel's configuration stores: weights in their layout,
    #: biases, requantization records
    constants: int = 0
    error: str = ""
    instructions: int | None = None
    output: bytes | None = None
    #: instructions the executor spends around the operator (the null model), measured beside it
    fixed: int | None = None

    @property
    def own(self) -> int | None:
        """Instructions of the operator itself (its packed function and kernel)."""
        if self.instructions is None or self.fixed is None:
            return None
        return max(self.instructions - self.fixed, 0)


def one_op_graph(graph: Graph, op: Operator, name: str) -> Graph:
    """A model of ``op`` alone: its non-constant inputs are the inputs (its configuration is
    the compile's, see :func:`_compile`)."""
    names = [n for n in [*op.inputs, *op.outputs] if n]
    tensors = {n: graph.tensors[n] for n in names}
    alone = Operator(op.kind, list(op.inputs), list(op.outputs), dict(op.attrs), op.source)
    inputs = [n for n in dict.fromkeys(op.inputs) if n and not tensors[n].is_constant]
    return Graph(name, tensors, [alone], inputs, [op.outputs[0]])


def _compile(args: tuple[Graph, Config, CompileOptions, Path]) -> tuple[str | None, int, int, str]:
    """(MLF directory, scratch bytes, constants bytes, error) of one candidate: a model of one
    operator compiled with its configuration; runs in a worker process."""
    graph, config, options, out = args
    from ..compiler import compile_graph

    try:
        result = compile_graph(graph, out, options, configs={0: config})
    except UtvmError as exc:
        return None, 0, 0, str(exc)
    except Exception as exc:  # a configuration TVM cannot build: rejected, not fatal
        return None, 0, 0, f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
    return str(result.mlf_dir), result.plan.pool_size, result.sources.constants_bytes, ""


def compile_candidates(graph: Graph, op: Operator, configs: list[Config], options: CompileOptions, work: Path,
                       jobs: int = 1) -> list[Candidate]:
    """Compile every configuration with ``options`` (``jobs`` at a time, in worker processes)."""
    cands = [Candidate(i, c) for i, c in enumerate(configs)]
    tasks = [(one_op_graph(graph, op, f"tune_c{c.index}"), c.config, options, work / f"c{c.index}") for c in cands]
    if jobs > 1 and len(tasks) > 1:
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
            results = list(pool.map(_compile, tasks))
    else:
        results = [_compile(t) for t in tasks]
    for cand, (mlf, scratch, constants, error) in zip(cands, results):
        cand.mlf = Path(mlf) if mlf else None
        cand.scratch = scratch
        cand.constants = constants
        cand.error = error
    return cands


#: the null model's name and the empty function its operator calls instead of its kernel
NULL_NAME = "tune_null"
NULL_OP = "utvm_tune_null_op"


def _null_model(mlf: Path) -> tuple[list[Path], dict[str, str]]:
    """The null model's sources to leave out (its kernels) and the defines that point its
    executor's calls at the empty ``NULL_OP``."""
    src = mlf / "codegen" / "host" / "src"
    executor = src / f"{NULL_NAME}_lib1.c"
    symbols = sorted(set(re.findall(rf"__tvm_ffi_tvmgen_{NULL_NAME}_\w+", executor.read_text())))
    return [src / f"{NULL_NAME}_lib0.c"], {s: NULL_OP for s in symbols}


def _harness(path: Path, cands: list[Candidate], inputs: list[np.ndarray], out_size: int,
             null: bool = False) -> Path:
    """C that runs every candidate model once on the same inputs and prints its instruction
    count (counter ticks) and output bytes; with ``null`` the null model as index -1."""
    lines = ["#include <stdio.h>", "#include <string.h>", "#include <stdint.h>",
             '#include "utvm/model.h"', '#include "utvm/platform.h"', ""]
    for c in cands:
        lines.append(f"extern const utvm_model_t tvmgen_tune_c{c.index}_model;")
    if null:
        lines += [f"extern const utvm_model_t tvmgen_{NULL_NAME}_model;",
                  f"__attribute__((noinline)) int32_t {NULL_OP}(void* self, void* args, int32_t n, void* result);",
                  f"__attribute__((noinline)) int32_t {NULL_OP}(void* self, void* args, int32_t n, void* result) {{",
                  "  (void)self;", "  (void)args;", "  (void)n;", "  (void)result;", "  return 0;", "}"]
    for i, arr in enumerate(inputs):
        data = np.ascontiguousarray(arr).view(np.uint8).reshape(-1)
        lines.append(f"static const uint8_t in_data{i}[{max(data.size, 1)}] = {{{', '.join(map(str, data))}}};")
        lines.append(f"static uint8_t in_buf{i}[{max(data.size, 1)}] __attribute__((aligned(16)));")
    lines.append(f"static uint8_t out_buf[{max(out_size, 1)}] __attribute__((aligned(16)));")
    lines += ["", "static void run(const utvm_model_t* m, int index) {",
              f"  void* in[{max(len(inputs), 1)}];", "  void* out[1];", "  uint32_t t0, t, k, reps;", "  int32_t rc;"]
    for i in range(len(inputs)):
        lines.append(f"  memcpy(in_buf{i}, in_data{i}, sizeof(in_data{i}));")
        lines.append(f"  in[{i}] = in_buf{i};")
    # a first run gives the order of magnitude; then the kernel runs back to back for about
    # TARGET_TICKS counter ticks, so the counter's tick (40 instructions on MPS2) is divided out
    lines += ["  out[0] = out_buf;", "  t0 = utvm_platform_cycles();", "  rc = m->run(in, out, NULL);",
              "  t = utvm_platform_cycles() - t0;",
              f"  reps = t >= {TARGET_TICKS}u ? 1u : {TARGET_TICKS}u / (t ? t : 1u);",
              "  if (rc == 0 && reps > 1u) {", "    t0 = utvm_platform_cycles();",
              "    for (k = 0; k < reps && rc == 0; ++k) rc = m->run(in, out, NULL);",
              "    t = utvm_platform_cycles() - t0;", "  } else {", "    reps = 1u;", "  }",
              '  printf("TUNE %d %ld %lu %lu ", index, (long)rc, (unsigned long)t, (unsigned long)reps);',
              f"  for (k = 0; k < {out_size}u; ++k) {{", '    printf("%02x", out_buf[k]);', "  }", '  printf("\\n");',
              "}", "", "int main(void) {"]
    for c in cands:
        lines.append(f"  run(&tvmgen_tune_c{c.index}_model, {c.index});")
    if null:
        lines.append(f"  run(&tvmgen_{NULL_NAME}_model, -1);")
    lines += ["  return 0;", "}", ""]
    path.write_text("\n".join(lines))
    return path


_LINE = re.compile(r"^TUNE (-?\d+) (-?\d+) (\d+) (\d+) ([0-9a-f]*)$", re.M)


def run_candidates(cands: list[Candidate], board_name: str, inputs: list[np.ndarray], out_size: int,
                   work: Path, null: Path | None = None) -> None:
    """Link the compiled candidates (and the ``null`` model's MLF, if given) into one firmware
    for an emulated board, run it once, and fill in each candidate's instructions, output and
    the executor's fixed cost."""
    from ..run import qemu
    from ..run.boards import get_board
    from ..run.host import mlf_sources

    built = [c for c in cands if c.mlf is not None]
    if not built:
        return
    board = get_board(board_name)
    mlfs = [c.mlf for c in built] + ([null] if null else [])
    sources, includes = mlf_sources(mlfs, "baremetal")  # type: ignore[arg-type]
    defines: dict[str, str] = {}
    if null:
        left_out, defines = _null_model(null)
        sources = [s for s in sources if s not in left_out]
    harness = _harness(work / "tune_main.c", built, inputs, out_size, null=null is not None)
    elf = qemu.build_firmware(board, [*sources, harness], includes, defines, work / "fw", jobs=2)
    result = qemu.run_firmware(board, elf, timeout_s=600)
    if result.fault:
        raise UtvmError(f"the tuning firmware crashed on {board_name}: {result.fault}")
    by_index = {c.index: c for c in built}
    fixed = None
    for m in _LINE.finditer(result.stdout):
        count = round(board.ticks_to_instructions(int(m.group(3))) / int(m.group(4)))
        if int(m.group(1)) < 0:
            fixed = count
            continue
        c = by_index[int(m.group(1))]
        if int(m.group(2)) != 0:
            c.error = f"the kernel returned status {m.group(2)}"
            continue
        c.instructions = count
        c.output = bytes.fromhex(m.group(5))
    for c in built:
        c.fixed = fixed
    for c in built:
        if c.instructions is None and not c.error:
            c.error = "no measurement (the firmware stopped early)"


def kernel_inputs(graph: Graph, op: Operator, seed: int) -> list[np.ndarray]:
    """Seeded random inputs for the operator's non-constant inputs."""
    alone = one_op_graph(graph, op, "inputs")
    return random_inputs(alone, seed)


Progress = Callable[[str], None]


def measure(graph: Graph, op: Operator, configs: list[Config], board: str, options: CompileOptions, work: Path,
            jobs: int = 1, seed: int = 0, **_: Any) -> list[Candidate]:
    """Compile (with ``options``) and measure every configuration of ``op`` on an emulated ``board``."""
    work.mkdir(parents=True, exist_ok=True)
    cands = compile_candidates(graph, op, configs, options, work, jobs)
    null, _, _, error = _compile((one_op_graph(graph, op, NULL_NAME), configs[0] if configs else {}, options,
                                  work / "null"))
    inputs = kernel_inputs(graph, op, seed)
    run_candidates(cands, board, inputs, graph.tensors[op.outputs[0]].nbytes, work,
                   null=Path(null) if null and not error else None)
    return cands
