"""`utvm tune`: tuning spaces, the measured search on QEMU and through the RPC server, the log."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mac_cases import conv_case
from utvm.compiler import CompileOptions, compile_model
from utvm.configs.log import read_log, write_log
from utvm.configs.workload import tunable, workload, workload_key
from utvm.importer import load_model
from utvm.kernels.target import Target
from utvm.run.runner import run_model
from utvm.tune.space import sample, space

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
ENV = {"PYTHONPATH": str(ROOT / "scripts"), "PATH": "/usr/bin:/bin:/usr/local/bin"}


def _toolchain() -> None:
    from toolchains import toolchain_problem

    problem = toolchain_problem()
    if problem:
        pytest.skip(problem)


@pytest.fixture(scope="module")
def small_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A pointwise, a 3x3 and a one-channel 3x4 int8 convolution and two fully connected layers
    (8 and 3 units) side by side: each has several configurations on M4 (variants, widened
    weights)."""
    from op_check import side_by_side
    from tflite_builder import ModelBuilder

    def fc(seed: int, depth: int, units: int):  # type: ignore[no-untyped-def]
        def case(m: ModelBuilder):  # type: ignore[no-untyped-def]
            rng = np.random.default_rng(seed)
            p = f"f{seed}_"
            x = m.add_tensor(p + "x", (1, depth), "int8", scale=0.05, zero_point=3)
            w = m.add_tensor(p + "w", (units, depth), "int8", rng.integers(-127, 128, (units, depth)), scale=0.01)
            b = m.add_tensor(p + "b", (units,), "int32", rng.integers(-500, 500, units), scale=0.0005)
            y = m.add_tensor(p + "y", (1, units), "int8", scale=0.08, zero_point=-2)
            m.add_operator("FULLY_CONNECTED", [x, w, b], [y], {"fused_activation_function": "NONE"})
            return [x], [y]
        return case

    path = tmp_path_factory.mktemp("tune") / "small.tflite"
    path.write_bytes(side_by_side([conv_case(1, (1, 1), 8, 8), conv_case(2, (3, 3), 4, 8), conv_case(5, (3, 4), 1, 4), fc(3, 16, 8),
                                   fc(4, 96, 3)]))
    return path


def test_space_starts_with_the_default_the_lowering_picks(small_model: Path, tmp_path: Path) -> None:
    result = compile_model(small_model, tmp_path / "mlf", CompileOptions(cpu="cortex-m4"))
    target = Target.for_cpu("cortex-m4")
    for call in result.lowered.calls:
        op = result.graph.ops[call.op_index]
        configs = space(result.graph, op, target)
        assert configs and configs[0]["variant"] == call.variant
        assert len({json.dumps(c, sort_keys=True) for c in configs}) == len(configs)


def test_sample_is_seeded_and_keeps_the_default() -> None:
    configs = [{"variant": "v", "k": i} for i in range(20)]
    a, b = sample(configs, 5, seed=3), sample(configs, 5, seed=3)
    assert a == b and a[0] == configs[0] and len(a) == 5
    assert sample(configs[:4], 5, seed=3) == configs[:4]


def test_every_configuration_is_bit_exact_with_tflite_micro(small_model: Path, tmp_path: Path) -> None:
    """Each configuration of each kernel, applied through a log, on the host (the plain-C forms
    of the DSP helpers): outputs identical to TFLite Micro."""
    graph = load_model(small_model)
    target = Target.for_cpu(None)
    records = []
    for op in graph.ops:
        for config in space(graph, op, target):
            w = workload(graph, op, None)
            records.append((workload_key(w), w, config))
    assert len(records) >= 4
    wide = {(w["op"], c["variant"]) for _, w, c in records if c.get("weights") == "int16"}
    # the widened-weight MAC loops are sampled too
    assert wide == {("conv2d", "dsp_gemm"), ("conv2d", "dsp_mac4"), ("conv2d", "dsp_rows4"),
                    ("fully_connected", "dsp_gemm"), ("fully_connected", "dsp_mac4"), ("fully_connected", "generic")}
    for n, (key, w, config) in enumerate(records):
        log = tmp_path / f"log{n}.json"
        write_log(log, [{"key": key, "workload": w, "config": config, "cost": {"instructions": 1}}])
        report = run_model(small_model, "host", tuning_log=log, workdir=tmp_path / f"w{n}")
        assert report.outputs_match_reference, config


def test_the_executors_fixed_cost_is_measured_beside_the_kernels(small_model: Path, tmp_path: Path) -> None:
    """The null model (the operator's function replaced by an empty one) costs nearly the same for
    two operators of different sizes (the larger one's scratch adds two calls that set it), and
    less than each; the operator's own instructions are the rest, and grow with its work."""
    _toolchain()
    from utvm.tune.measure import measure

    graph = load_model(small_model)
    fcs = [op for op in graph.ops if op.kind == "fully_connected"]
    small, large = (measure(graph, op, [{}], "mps2/an386", CompileOptions(cpu="cortex-m4"), tmp_path / f"k{k}")[0]
                    for k, op in enumerate(fcs))
    assert small.fixed is not None and large.fixed is not None
    assert small.fixed <= large.fixed <= small.fixed + 16, (small.fixed, large.fixed)
    assert 20 < small.fixed < small.instructions, (small.fixed, small.instructions)
    assert small.own == small.instructions - small.fixed and large.own == large.instructions - large.fixed
    # 16 x 8 against 96 x 3 MACs: the larger layer costs more of its own
    assert large.own > small.own, (small.own, large.own)


def _tune(model: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "utvm", "tune", str(model), "--board", "mps2/an386",
                           "--trials", "8", "-o", str(out), *extra], capture_output=True, text=True, env=ENV)


@pytest.mark.slow
def test_max_flash_keeps_the_tuned_constants_within_the_budget(small_model: Path, tmp_path: Path) -> None:
    """--max-flash at the default's constants: no pick may grow them, every record carries the
    constants of its configuration and the default's, and the tuned compile stays within it."""
    _toolchain()
    budget = compile_model(small_model, tmp_path / "default", CompileOptions(cpu="cortex-m4")).sources.constants_bytes
    log = tmp_path / "log.json"
    proc = _tune(small_model, log, "--max-flash", str(budget))
    assert proc.returncode == 0, proc.stderr
    records = read_log(log)
    assert all(isinstance(r["cost"]["constants"], int) and r["default"]["constants"] > 0 for r in records)
    tuned = compile_model(small_model, tmp_path / "tuned", CompileOptions(cpu="cortex-m4", tuning_log=log))
    assert tuned.sources.constants_bytes <= budget
    low = _tune(small_model, tmp_path / "low.json", "--max-flash", str(budget - 1))
    assert low.returncode == 2
    assert [ln for ln in low.stderr.splitlines() if ln.startswith("error:")] == [
        ln for ln in low.stderr.splitlines() if ln.strip() and not ln.startswith("utvm:")]
    assert "--max-flash" in low.stderr and "Traceback" not in low.stderr


def test_tune_compiles_the_model_as_the_command_line_asks(small_model: Path, tmp_path: Path) -> None:
    """The compile options of `utvm tune` (pools, memory mode) are the compile's: a pool the
    model does not fit ends the run before anything is measured, with compile's error line; a bad
    --memory-mode is refused as compile refuses it."""
    need = compile_model(small_model, tmp_path / "default", CompileOptions(cpu="cortex-m4")).plan.pool_size
    for args, word in ((("--pool", f"sram:{need - 1}"), "sram"), (("--memory-mode", "min:x"), "--memory-mode")):
        out = tmp_path / f"{word.strip('-')}.json"
        proc = _tune(small_model, out, *args)
        assert proc.returncode == 2, proc.stderr
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("error:") and word in lines[0], proc.stderr
        assert not out.exists()


@pytest.mark.slow
def test_tune_is_deterministic_and_its_log_applies(small_model: Path, tmp_path: Path) -> None:
    _toolchain()
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for out in (a, b):
        proc = _tune(small_model, out, "--jobs", "2")
        assert proc.returncode == 0, proc.stderr
    assert a.read_bytes() == b.read_bytes()
    records = read_log(a)
    assert len(records) == 5
    for rec in records:
        assert rec["workload"]["cpu"] == "cortex-m4"
        assert rec["cost"]["instructions"] <= rec["default"]["instructions"]
        assert rec["measured_on"] == "qemu"
    plain = run_model(small_model, "mps2/an386", workdir=tmp_path / "plain")
    tuned = run_model(small_model, "mps2/an386", tuning_log=a, workdir=tmp_path / "tuned")
    assert plain.outputs_match_reference and tuned.outputs_match_reference
    for x, y in zip(plain.outputs, tuned.outputs):
        assert np.array_equal(x, y)


def test_log_for_another_cpu_is_ignored_with_one_warning(small_model: Path, tmp_path: Path) -> None:
    graph = load_model(small_model)
    op = next(o for o in graph.ops if tunable(graph, o))
    w = workload(graph, op, "cortex-m4")
    log = tmp_path / "m4.json"
    write_log(log, [{"key": workload_key(w), "workload": w, "config": {"variant": "generic"},
                     "cost": {"instructions": 1}}])
    proc = subprocess.run([sys.executable, "-m", "utvm", "compile", str(small_model), "--cpu", "cortex-m55",
                           "--tuning-log", str(log), "-o", str(tmp_path / "out"), "--json"],
                          capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0, proc.stderr
    warnings = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(warnings) == 1 and "cortex-m4" in warnings[0] and "ignored" in warnings[0]


@pytest.mark.parametrize("content", ["{not json\n", "[1, 2]\n", '{"key": "x"}\n',
                                     '{"key": "x", "workload": {"cpu": "any"}, "config": {"variant": "g"}, '
                                     '"cost": {"instructions": 3}}\n'])
def test_malformed_log_is_one_error_line(small_model: Path, tmp_path: Path, content: str) -> None:
    log = tmp_path / "bad.json"
    log.write_text(content)
    proc = subprocess.run([sys.executable, "-m", "utvm", "compile", str(small_model), "--tuning-log", str(log),
                           "-o", str(tmp_path / "out")], capture_output=True, text=True, env=ENV)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and proc.stderr.startswith("error:"), proc.stderr
    assert not (tmp_path / "out").exists()


def test_merge_keeps_the_best_per_workload(tmp_path: Path, small_model: Path) -> None:
    graph = load_model(small_model)
    w = workload(graph, graph.ops[0], "cortex-m4")
    key = workload_key(w)
    a, b, out = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    write_log(a, [{"key": key, "workload": w, "config": {"variant": "x"}, "cost": {"instructions": 10}}])
    write_log(b, [{"key": key, "workload": w, "config": {"variant": "y"}, "cost": {"instructions": 7}}])
    proc = subprocess.run([sys.executable, "-m", "utvm", "tune", "--merge", str(a), str(b), "-o", str(out)],
                          capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0, proc.stderr
    (rec,) = read_log(out)
    assert rec["config"] == {"variant": "y"}


@pytest.mark.slow
def test_tune_through_the_rpc_server_on_qemu(small_model: Path, tmp_path: Path) -> None:
    """--device: the candidates' RPC server firmware is put on the 'device' (QEMU restarted by
    the flash command) and measured through the serial link; the same choice as QEMU direct."""
    _toolchain()
    from utvm.rpc.server import _free_port

    port = _free_port()
    pidfile = tmp_path / "qemu.pid"
    flash = f"{sys.executable} {FIXTURES / 'qemu_flash.py'} mps2/an386 {{elf}} {port} {pidfile}"
    out = tmp_path / "device.json"
    try:
        proc = _tune(small_model, out, "--device", f"socket://127.0.0.1:{port}", "--flash", flash)
    finally:
        subprocess.run([sys.executable, str(FIXTURES / "qemu_flash.py"), "--stop", str(pidfile)], env=ENV)
    assert proc.returncode == 0, proc.stderr
    device = {r["key"]: r for r in read_log(out)}
    direct_log = tmp_path / "direct.json"
    assert _tune(small_model, direct_log).returncode == 0
    direct = {r["key"]: r for r in read_log(direct_log)}
    assert device.keys() == direct.keys()
    for key, rec in device.items():
        assert rec["measured_on"] == "device"
        assert rec["config"] == direct[key]["config"]
        # within 2 %, or one tick of the MPS2 counter (40 instructions) for the smallest kernels
        tolerance = max(0.02 * rec["cost"]["instructions"], 40)
        assert abs(rec["cost"]["instructions"] - direct[key]["cost"]["instructions"]) <= tolerance


def test_zephyr_models_file_lists_what_the_sample_compiles(tmp_path: Path) -> None:
    """zephyr_models.cmake (written into {build} for samples/utvm_rpc_server -DUTVM_RPC_MODELS):
    CMake reads back the sources, the include directories and the I/O bytes as written, paths
    with spaces included."""
    import shutil

    from utvm.rpc.server import write_zephyr_models

    if shutil.which("cmake") is None:
        pytest.skip("cmake is not on PATH")
    srcs = [tmp_path / "c 0" / "lib0.c", tmp_path / "rpc_models.c"]
    incs = [tmp_path / "c 0" / "include"]
    models = write_zephyr_models(tmp_path / "zephyr_models.cmake", srcs, incs, 20000)
    script = tmp_path / "read.cmake"
    script.write_text(f'include("{models.as_posix()}")\n'
                      'foreach(v IN LISTS UTVM_RPC_MODELS_SOURCES UTVM_RPC_MODELS_INCLUDES)\n'
                      '  message(STATUS "item=${v}")\nendforeach()\n'
                      'message(STATUS "io=${UTVM_RPC_MODELS_IO_BYTES}")\n')
    r = subprocess.run(["cmake", "-P", str(script)], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    items = [ln.split("item=", 1)[1] for ln in r.stdout.splitlines() if "item=" in ln]
    assert items == [str(p) for p in [*srcs, *incs]]
    assert "-- io=20000" in r.stdout
