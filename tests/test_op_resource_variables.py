"""Resource variables (VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE, CALL_ONCE) against TFLite
Micro over several runs and resets.

The state lives in the state buffer outside the pool; each model is compiled once and run on
the host by a program that runs it several times, calls tvmgen_<name>_reset(), and runs it
again, printing every output of every run; TFLite Micro's interpreter is invoked the same
number of times with the same inputs, and reset at the same point. Models: 20 seeded
configurations side by side (int8, int16, int32, float32 state; variables shared by two
handles; int8 values whose zero point is the default value), and the two models TensorFlow's
converter writes for a streaming layer (tests/models/make_variable_models.py: CALL_ONCE with an
init subgraph giving the variable a non-zero initial value, which a reset does not give again).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import flatbuffers
import numpy as np
import tflite
from tflite.BuiltinOptions import BuiltinOptions
from tflite.TensorType import TensorType

from op_check import check_state_outside_pool
from tflite_builder import ModelBuilder
from utvm.compiler import compile_model
from utvm.run.host import build_host, run_host
from utvm.run.reference import tflm_runtime

MODELS = Path(__file__).parent / "models"
N = 20
RUNS_BEFORE, RUNS_AFTER = 3, 2  # runs, then a reset, then runs


class VariableModel(ModelBuilder):
    """ModelBuilder with RESOURCE handles and VAR_HANDLE's string options."""

    def handle(self, name: str) -> int:
        index = self.add_tensor(name, [], "int32")
        self._tensors[index]["type"] = TensorType.RESOURCE
        return index

    def _write_options(self, b: flatbuffers.Builder, op: str, options: dict[str, Any]) -> tuple[int, int]:
        if op != "VAR_HANDLE":
            return super()._write_options(b, op, options)
        shared = b.CreateString(options["shared_name"])
        tflite.VarHandleOptionsStart(b)
        tflite.VarHandleOptionsAddSharedName(b, shared)
        return BuiltinOptions.VarHandleOptions, tflite.VarHandleOptionsEnd(b)


def _quant(rng: np.random.Generator, dtype: str) -> dict[str, Any]:
    if dtype == "int8":
        return {"scale": float(rng.uniform(0.02, 0.1)), "zero_point": int(rng.integers(-20, 20))}
    if dtype == "int16":
        return {"scale": float(rng.uniform(1e-4, 1e-3)), "zero_point": 0}
    return {}


def variable_case(seed: int, inputs: list[np.ndarray]):  # type: ignore[no-untyped-def]
    """state <- state + x (ADD in the state's quantization), output the new state; every third
    case reads the variable through a second VAR_HANDLE of the same shared name."""
    rng = np.random.default_rng(seed)
    dtype = ("int8", "int16", "int32", "float32")[seed % 4]
    shape = [int(v) for v in rng.integers(1, 5, int(rng.integers(1, 4)))]
    if dtype == "float32":
        inputs.append(rng.uniform(-1, 1, shape).astype(np.float32))
    else:
        hi = 9 if dtype == "int8" else 300
        inputs.append(rng.integers(-hi, hi, shape).astype(dtype))
    q = _quant(rng, dtype)

    def build(m: VariableModel) -> tuple[list[int], list[int]]:
        p = f"v{seed}_"
        h = m.handle(p + "h")
        m.add_operator("VAR_HANDLE", [], [h], {"shared_name": p + "state"})
        if seed % 3 == 0:
            h2 = m.handle(p + "h2")
            m.add_operator("VAR_HANDLE", [], [h2], {"shared_name": p + "state"})
        else:
            h2 = h
        x = m.add_tensor(p + "x", shape, dtype, **q)
        r = m.add_tensor(p + "read", shape, dtype, **q)
        s = m.add_tensor(p + "sum", shape, dtype, **q)
        m.add_operator("READ_VARIABLE", [h2], [r])
        m.add_operator("ADD", [r, x], [s])
        m.add_operator("ASSIGN_VARIABLE", [h, s], [])
        return [x], [s]

    return build


def _variables_model() -> tuple[bytes, list[np.ndarray]]:
    m = VariableModel("resource variables")
    inputs: list[np.ndarray] = []
    ins: list[int] = []
    outs: list[int] = []
    for seed in range(N):
        i, o = variable_case(seed, inputs)(m)
        ins += i
        outs += o
    return m.finish(ins, outs), inputs


def _harness(path: Path, name: str, inputs: list[np.ndarray], out_sizes: list[int]) -> Path:
    """A program that runs the model RUNS_BEFORE times, resets it, runs it RUNS_AFTER times and
    prints each output of each run in hex."""
    lines = ["#include <stdint.h>", "#include <stdio.h>", "#include <string.h>", '#include "utvm/model.h"',
             f'#include "tvmgen_{name}.h"', f"extern const utvm_model_t tvmgen_{name}_model;"]
    for k, arr in enumerate(inputs):
        data = np.ascontiguousarray(arr).view(np.uint8).reshape(-1)
        lines.append(f"static uint8_t in{k}[{data.size}] __attribute__((aligned(16))) = "
                     f"{{{','.join(map(str, data))}}};")
    lines += [f"static uint8_t out{k}[{size}] __attribute__((aligned(16)));" for k, size in enumerate(out_sizes)]
    lines += [f"static void* ins[{len(inputs)}] = {{{', '.join(f'in{k}' for k in range(len(inputs)))}}};",
              f"static void* outs[{len(out_sizes)}] = {{{', '.join(f'out{k}' for k in range(len(out_sizes)))}}};",
              "static void run(void) {", "  uint32_t k;",
              f"  if (tvmgen_{name}_model.run(ins, outs, NULL) != 0) {{ printf(\"FAILED\\n\"); return; }}"]
    for k, size in enumerate(out_sizes):
        lines += [f"  for (k = 0; k < {size}u; ++k) printf(\"%02x\", out{k}[k]);", '  printf("\\n");']
    lines += ["}", "int main(void) {", "  int r;", f"  for (r = 0; r < {RUNS_BEFORE}; ++r) run();",
              f"  tvmgen_{name}_reset();", f"  for (r = 0; r < {RUNS_AFTER}; ++r) run();", "  return 0;", "}"]
    path.write_text("\n".join(lines) + "\n")
    return path


def _tflm_runs(model: bytes, inputs: list[np.ndarray], n_outputs: int) -> list[list[np.ndarray]]:
    runtime = tflm_runtime()
    assert runtime is not None, "the tflite-micro package is needed"
    interp = runtime.Interpreter.from_bytes(model, arena_size=1 << 20)
    runs = []
    for r in range(RUNS_BEFORE + RUNS_AFTER):
        if r == RUNS_BEFORE:
            interp.reset()
        for k, x in enumerate(inputs):
            interp.set_input(x, k)
        interp.invoke()
        runs.append([np.array(interp.get_output(k)) for k in range(n_outputs)])
    return runs


def check_runs_and_reset(model: bytes, inputs: list[np.ndarray], tmp_path: Path, name: str) -> int:
    """Compile ``model``, run it and TFLite Micro RUNS_BEFORE times, reset both, run
    RUNS_AFTER times; every output of every run identical. Returns the outputs compared."""
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(model)
    result = compile_model(path, tmp_path / "mlf")
    g = result.graph
    assert result.plan.state_size > 0 and not any(t.name in result.plan.offsets for t in g.tensors.values()
                                                  if t.variable)
    sizes = [g.tensors[n].nbytes for n in g.outputs]
    binary = build_host(result.mlf_dir, _harness(tmp_path / "harness.c", result.name, inputs, sizes), tmp_path / "prog")
    printed = run_host(binary).split()
    expected = _tflm_runs(model, inputs, len(sizes))
    assert len(printed) == len(expected) * len(sizes)
    compared = 0
    for r, outputs in enumerate(expected):
        for k, ref in enumerate(outputs):
            got = np.frombuffer(bytes.fromhex(printed[r * len(sizes) + k]), dtype=ref.dtype).reshape(ref.shape)
            assert np.array_equal(got, ref), f"run {r + 1} output {k}: {got} != {ref}"
            compared += 1
    return compared


def test_twenty_variables_over_runs_and_a_reset(tmp_path: Path) -> None:
    model, inputs = _variables_model()
    assert check_runs_and_reset(model, inputs, tmp_path, "variables") == N * (RUNS_BEFORE + RUNS_AFTER)


def test_converter_streaming_models_with_call_once(tmp_path: Path) -> None:
    """The first run starts from the init subgraph's values; after the reset from zeros."""
    for mode in ("float32", "int8"):
        model = (MODELS / f"streaming_variable_{mode}.tflite").read_bytes()
        rng = np.random.default_rng(5)
        x = rng.uniform(-1, 1, (1, 8)).astype(np.float32)
        if mode == "int8":
            x = rng.integers(-128, 128, (1, 8)).astype(np.int8)
        (tmp_path / mode).mkdir()
        assert check_runs_and_reset(model, [x], tmp_path / mode, f"streaming_{mode}") == RUNS_BEFORE + RUNS_AFTER


def test_initial_values_and_state_outside_the_pool(tmp_path: Path) -> None:
    states = check_state_outside_pool((MODELS / "streaming_variable_float32.tflite").read_bytes(), tmp_path,
                                      "streaming")
    assert len(states) == 1 and states[0].initial is not None and np.any(states[0].initial != 0)


def _mismatch_model() -> bytes:
    m = VariableModel("bad")
    h = m.handle("h")
    m.add_operator("VAR_HANDLE", [], [h], {"shared_name": "s"})
    x = m.add_tensor("x", [4], "float32")
    r = m.add_tensor("r", [4], "float32")
    m.add_operator("READ_VARIABLE", [h], [r])
    y = m.add_tensor("y", [4], "float32")
    m.add_operator("ADD", [r, x], [y])
    big = m.add_tensor("big", [8], "float32", data=np.zeros(8))
    m.add_operator("ASSIGN_VARIABLE", [h, big], [])
    return m.finish([x], [y])


def test_a_value_that_does_not_fit_the_variable_is_refused(tmp_path: Path) -> None:
    (tmp_path / "bad.tflite").write_bytes(_mismatch_model())
    proc = subprocess.run([sys.executable, "-m", "utvm", "compile", str(tmp_path / "bad.tflite"), "-o",
                           str(tmp_path / "o")], capture_output=True, text=True)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "does not fit variable" in proc.stderr and "Traceback" not in proc.stderr

