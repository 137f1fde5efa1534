"""Checking operators against the reference: many configurations in one model, one compile.

An operator test builds its configurations side by side in one TFLite model (each with its own
inputs and outputs), compiles it once, runs it once on the host (or an emulated board) and
compares every output with TFLite Micro: identical for integer outputs, within 1e-5 relative
for float32. This keeps a test of 20+ configurations at one TVM compile.

    cases = [lambda m, i=i: my_case(m, seed=i) for i in range(20)]
    check_cases(cases, tmp_path)

A case is a function ``(ModelBuilder) -> (input tensor indices, output tensor indices)``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tflite_builder import ModelBuilder
from utvm.run.runner import RunReport, run_model

Case = Callable[[ModelBuilder], tuple[Sequence[int], Sequence[int]]]


def side_by_side(cases: Sequence[Case], description: str = "utvm operator test") -> bytes:
    """One model holding every case, inputs and outputs in case order."""
    m = ModelBuilder(description)
    inputs: list[int] = []
    outputs: list[int] = []
    for case in cases:
        ins, outs = case(m)
        inputs += list(ins)
        outputs += list(outs)
    return m.finish(inputs, outputs)


def check_model(model: bytes | Path, tmp_path: Path, board: str = "host",
                inputs: Sequence[np.ndarray] | None = None, **run_options: object) -> RunReport:
    """Compile and run ``model``, assert every output matches the reference, return the report.
    ``inputs``: arrays for the model inputs in order (default: the runner's seeded random ones)."""
    if isinstance(model, bytes):
        path = tmp_path / "model.tflite"
        path.write_bytes(model)
    else:
        path = model
    paths = None
    if inputs is not None:
        paths = []
        for k, arr in enumerate(inputs):
            p = tmp_path / f"input{k}.npy"
            np.save(p, arr)
            paths.append(p)
    work = tmp_path / f"work_{board.replace('/', '_')}"
    work.mkdir(exist_ok=True)
    report = run_model(path, board, inputs=paths, workdir=work, **run_options)  # type: ignore[arg-type]
    assert report.outputs_match_reference, (
        f"{path.name} on {board}: outputs differ from {report.reference} (max abs diff {report.max_abs_diff:g}, "
        f"max rel diff {report.max_rel_diff:g})")
    return report


def assert_kernels_warning_free(tmp_path: Path, board: str) -> None:
    """The generated C of the model :func:`check_model` ran on ``board`` compiles with
    arm-none-eabi-gcc -Wall -Wextra -Werror for the board's CPU."""
    mlf = tmp_path / f"work_{board.replace('/', '_')}" / "mlf"
    cpu = "cortex-m4" if board == "mps2/an386" else "cortex-m55"
    for src in sorted((mlf / "codegen" / "host" / "src").glob("*.c")):
        proc = subprocess.run(["arm-none-eabi-gcc", "-O2", f"-mcpu={cpu}", "-mthumb", "-std=c99", "-Wall", "-Wextra",
                               "-Werror", "-c", f"-I{mlf / 'codegen' / 'host' / 'include'}",
                               f"-I{mlf / 'runtime' / 'include'}", str(src), "-o", str(tmp_path / (src.stem + ".o"))],
                              capture_output=True, text=True)
        assert proc.returncode == 0, f"{src.name}: {proc.stderr[:2000]}"


def assert_refused(model: bytes, words: str, tmp_path: Path) -> None:
    """Importing ``model`` fails with one line that says ``words``."""
    import pytest

    from utvm.errors import UtvmError
    from utvm.importer import load_model

    path = tmp_path / "bad.tflite"
    path.write_bytes(model)
    with pytest.raises(UtvmError) as info:
        load_model(path)
    msg = str(info.value)
    assert words in msg and "\n" not in msg, msg


def check_cases(cases: Sequence[Case], tmp_path: Path, board: str = "host",
                inputs: Sequence[np.ndarray] | None = None, **run_options: object) -> RunReport:
    """:func:`side_by_side` then :func:`check_model`."""
    return check_model(side_by_side(cases), tmp_path, board, inputs, **run_options)


#: the emulated boards operator tests run on: Cortex-M4 (DSP) and Cortex-M55 (Helium)
BOARDS = ["mps2/an386", "mps3/an547"]


def on_boards(test: Callable[..., None]) -> Callable[..., None]:
    """Mark a test slow, skip it without the bare-metal toolchain, run it per board (``board``)."""
    from toolchains import toolchain_problem

    test = pytest.mark.parametrize("board", BOARDS)(test)
    test = pytest.mark.skipif(toolchain_problem() is not None, reason="bare-metal toolchain missing")(test)
    return pytest.mark.slow(test)


def seeds(dtypes: Sequence[str], n: int) -> list[tuple[str, int]]:
    """(type, seed) of ``n`` cases of every type of ``dtypes``: the k-th type's seeds are 100 k + i."""
    return [(dtype, 100 * k + i) for k, dtype in enumerate(dtypes) for i in range(n)]


class Cases:
    """Cases of one model and the input data they chose, in model-input order (a case that
    makes a model input appends its data to ``inputs``)."""

    def __init__(self) -> None:
        self.cases: list[Case] = []
        self.inputs: list[np.ndarray] = []

    def check(self, tmp_path: Path, board: str = "host") -> RunReport:
        return check_cases(self.cases, tmp_path, board, inputs=self.inputs)


def seeded(case: Callable[[Cases, str, int], None], dtypes: Sequence[str], n: int = 20) -> Cases:
    """The cases ``case(cases, dtype, seed)`` adds for every type of ``dtypes`` and seeds 0 to n - 1."""
    c = Cases()
    for dtype in dtypes:
        for seed in range(n):
            case(c, dtype, seed)
    return c


def check_exact(cases: Cases, tmp_path: Path, board: str = "host") -> RunReport:
    """:meth:`Cases.check` against TFLite Micro with every output identical (max abs diff 0)."""
    report = cases.check(tmp_path, board)
    assert report.reference == "tflite-micro" and report.max_abs_diff == 0, (report.reference, report.max_abs_diff)
    return report


def assert_cli_refuses(model: bytes, tmp_path: Path, *words: str) -> None:
    """`utvm compile` of ``model`` exits with 2, printing one error line that says each of
    ``words`` and no traceback, and writes no output."""
    path, out = tmp_path / "bad.tflite", tmp_path / "out"
    path.write_bytes(model)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "scripts")}
    proc = subprocess.run([sys.executable, "-m", "utvm", "compile", str(path), "-o", str(out)],
                          capture_output=True, text=True, env=env)
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("error:"), proc.stderr
    assert all(w in lines[0] for w in words) and not out.exists(), lines[0]


def quant_params(rng: np.random.Generator, lo: float = -4.0, hi: float = 4.0,
                 dtype: str = "int8") -> tuple[float, int]:
    """A random (scale, zero point) covering roughly [lo, hi]: int8 with any zero point, int16 with
    zero point 0 (the 16x8 scheme)."""
    span = (hi - lo) * float(rng.uniform(0.5, 1.5))
    if dtype == "int16":
        return span / 65535.0, 0
    scale = span / 255.0
    return scale, int(np.clip(round(-128 - lo / scale), -128, 127))


class OnnxCases:
    """ONNX nodes side by side in one model (opset 17 unless told), with the data of its inputs."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.outputs: list[onnx.ValueInfoProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.data: list[np.ndarray] = []

    def operand(self, name: str, data: np.ndarray, constant: bool = False) -> str:
        """An initializer, or a graph input (float32 or bool) whose data is recorded."""
        if constant:
            self.inits.append(numpy_helper.from_array(data, name))
        else:
            elem = TensorProto.BOOL if data.dtype == np.bool_ else TensorProto.FLOAT
            self.inputs.append(helper.make_tensor_value_info(name, elem, list(data.shape)))
            self.data.append(data)
        return name

    def output(self, name: str, shape: Sequence[int], elem: int = TensorProto.FLOAT) -> str:
        self.outputs.append(helper.make_tensor_value_info(name, elem, [int(d) for d in shape]))
        return name

    def check(self, tmp_path: Path, name: str) -> RunReport:
        """Save as ``name``.onnx, compile, run and compare with onnxruntime."""
        report = check_model(self.save(tmp_path / f"{name}.onnx"), tmp_path, inputs=self.data)
        assert report.reference == "onnxruntime"
        return report

    def save(self, path: Path, opset: int = 17) -> Path:
        graph = helper.make_graph(self.nodes, path.stem, self.inputs, self.outputs, self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 8
        onnx.checker.check_model(model, full_check=True)
        onnx.save(model, str(path))
        return path


def check_state_outside_pool(model: bytes, tmp_path: Path, name: str) -> list:  # type: ignore[type-arg]
    """Compile ``model`` (written as ``<name>.tflite``): the header declares the state size and
    the reset function, the state buffer holds every variable tensor and the pool none of them.
    Returns the variable tensors."""
    from utvm.compiler import compile_model

    path = tmp_path / f"{name}.tflite"
    path.write_bytes(model)
    result = compile_model(path, tmp_path / "mlf")
    header = (result.mlf_dir / "codegen" / "host" / "include" / f"tvmgen_{name}.h").read_text()
    states = [t for t in result.graph.tensors.values() if t.variable]
    assert f"#define TVMGEN_{name.upper()}_STATE_SIZE {result.plan.state_size}" in header
    assert result.plan.state_size >= sum(t.nbytes for t in states)
    assert f"void tvmgen_{name}_reset(void);" in header
    assert not any(t.name in result.plan.offsets for t in states)
    return states


def tuning_log(path: Path, model: Path, cpu: str | None,
               pick: Callable[[Any, Any], dict[str, Any] | None]) -> Path:
    """Write at ``path`` a tuning log (as `utvm tune` writes one) that gives each operator of
    ``model`` the configuration ``pick(graph, op)`` returns for it (None: no record)."""
    from utvm.configs.log import write_log
    from utvm.configs.workload import workload, workload_key
    from utvm.importer import load_model

    graph = load_model(model)
    records = []
    for op in graph.ops:
        config = pick(graph, op)
        if config is not None:
            w = workload(graph, op, cpu)
            records.append({"key": workload_key(w), "workload": w, "config": config, "cost": {"instructions": 1}})
    write_log(path, records)
    return path
