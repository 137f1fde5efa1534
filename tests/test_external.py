"""Issue 6: external modules through the registry (--offload).

The in-repo plain-C module (lib/ext/plain_c) runs everywhere: pattern, glue call in the AOT
executor, MLF layout, scratch from the memory plan, static library, host and QEMU runs.
CMSIS-NN's tests need its sources: set CMSIS_NN_DIR to a CMSIS-NN checkout (Include/,
Source/), otherwise they skip.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from archive_check import assert_archive_runs_bit_exact
from op_check import check_cases
from toolchains import arm_tools_problem
from utvm.compiler import CompileOptions, compile_model
from utvm.errors import UtvmError
from utvm.external import ExternalModule, OffloadOptions, create_modules, module_names
from utvm.run.runner import HOST_BOARD, run_model

ROOT = Path(__file__).resolve().parents[1]
KWS = "kws_ref_model.tflite"
INT8_MODELS = ["kws_ref_model", "vww_96_int8", "pretrainedResnet_quant", "ad01_int8"]

needs_arm = pytest.mark.skipif(arm_tools_problem() is not None, reason=arm_tools_problem() or "")


def _cmsis_nn_dir() -> Path | None:
    env = os.environ.get("CMSIS_NN_DIR")
    if env and (Path(env) / "Include" / "arm_nnfunctions.h").is_file():
        return Path(env)
    return None


needs_cmsis_nn = pytest.mark.skipif(
    _cmsis_nn_dir() is None,
    reason="CMSIS-NN sources not available: set CMSIS_NN_DIR to a checkout of github.com/ARM-software/CMSIS-NN")


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "scripts")}
    env.pop("CMSIS_NN_DIR", None)
    return subprocess.run([sys.executable, "-m", "utvm", *args], capture_output=True, text=True, env=env,
                          cwd=cwd)


# --------------------------------------------------------------------------- registry


def test_registry_has_the_builtin_modules() -> None:
    assert {"plain-c", "cmsis-nn"} <= set(module_names())
    (module,) = create_modules(["plain-c", "plain-c"], OffloadOptions())
    assert isinstance(module, ExternalModule) and module.c_name == "plain_c"
    with pytest.raises(UtvmError, match="unknown --offload module 'nope'.*plain-c"):
        create_modules(["nope"], OffloadOptions())


def test_a_module_registered_from_outside(models_dir: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry is open: a module declared outside utvm (here: plain-c's library under
    another name, with one pattern whose handler declines) is usable by name, and what it
    declines stays with TVM."""
    import utvm.external
    from utvm.external import Pattern, register
    from utvm.external.plain_c import PlainC

    monkeypatch.setattr(utvm.external, "_REGISTRY", dict(utvm.external._REGISTRY))

    class Picky(PlainC):
        name = "picky"
        patterns = (Pattern("conv2d", "int8", "decline"), Pattern("avg_pool2d", "int8", "average_pool"))

        def decline(self, graph, op):  # type: ignore[no-untyped-def]
            return None

    register(Picky)
    assert "picky" in module_names()
    result = compile_model(models_dir / KWS, tmp_path / "m", CompileOptions(name="m", offload=("picky",)))
    taken = {c.op_name.rsplit("_", 1)[0] for c in result.lowered.calls if c.module == "picky"}
    assert taken == {"avg_pool2d"}
    assert any(c.op_name.startswith("conv2d") and c.external is None for c in result.lowered.calls)
    assert (result.mlf_dir / "codegen/picky/src/m_picky.c").is_file()



@pytest.mark.parametrize("args, message", [
    (["--offload", "nope"], "unknown --offload module 'nope'"),
    (["--offload", "cmsis-nn"], "--offload cmsis-nn needs the CMSIS-NN sources"),
    (["--offload", "cmsis-nn", "--cmsis-nn-dir", "."], "not a CMSIS-NN source tree"),
])
def test_offload_usage_errors(models_dir: Path, tmp_path: Path, args: list[str], message: str) -> None:
    out = tmp_path / "out"
    r = _cli("compile", str(models_dir / KWS), "-o", str(out), *args, cwd=tmp_path)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and message in lines[0], r.stderr
    assert not out.exists() and not out.with_name("out.tar").exists()


# --------------------------------------------------------------------------- plain-C module


@pytest.fixture(scope="module")
def kws_plain_c(models_dir: Path, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    out = tmp_path_factory.mktemp("plain_c") / "kws"
    return compile_model(models_dir / KWS, out, CompileOptions(name="kws", offload=("plain-c",)))


def test_plain_c_glue_is_called_by_the_executor(kws_plain_c) -> None:  # type: ignore[no-untyped-def]
    mlf = kws_plain_c.mlf_dir
    (call,) = [c for c in kws_plain_c.lowered.calls if c.module == "plain-c"]
    assert call.op_name.startswith("avg_pool2d_")
    executor = (mlf / "codegen/host/src/kws_lib1.c").read_text()
    assert f"rc = {call.symbol}(" in executor
    glue = (mlf / "codegen/plain_c/src/kws_plain_c.c").read_text()
    assert f"int32_t {call.symbol}(" in glue and "utvm_plainc_avgpool_s8(" in glue
    # TVM did not generate a kernel for the operator
    assert f"__tvm_ffi_{call.symbol}" not in (mlf / "codegen/host/src/kws_lib0.c").read_text()
    assert "avg_pool2d" not in (mlf / "codegen/host/src/kws_lib0.c").read_text()
    # the library travels in the MLF under the module's own directory
    assert (mlf / "codegen/plain_c/lib/src/utvm_plainc_avgpool.c").is_file()
    assert (mlf / "codegen/plain_c/lib/include/utvm_plainc.h").is_file()
    meta = json.loads((mlf / "metadata.json").read_text())["modules"]["kws"]
    layout = meta["external_modules"]["plain-c"]
    assert layout["glue_sources"] == ["codegen/plain_c/src/kws_plain_c.c"]
    assert layout["library_sources"] == ["codegen/plain_c/lib/src/utvm_plainc_avgpool.c"]
    assert layout["operators"][0]["calls"] == "utvm_plainc_avgpool_s8"


def test_plain_c_scratch_comes_from_the_plan(kws_plain_c) -> None:  # type: ignore[no-untyped-def]
    """One int32 sum per channel: 64 channels -> 256 bytes, a scratch block of the pool that
    the executor passes to the glue, live only during the call."""
    step, call = next((i, c) for i, c in enumerate(kws_plain_c.lowered.calls) if c.module == "plain-c")
    x = kws_plain_c.graph.tensors[call.args[0]]
    assert call.scratch_bytes == x.shape[-1] * 4 == 256
    scratch = kws_plain_c.plan.scratch[step]
    assert scratch.size >= 256 and scratch.first == scratch.last == step
    assert scratch.offset + scratch.size <= kws_plain_c.plan.pool_size
    assert not kws_plain_c.plan.check()
    executor = (kws_plain_c.mlf_dir / "codegen/host/src/kws_lib1.c").read_text()
    assert f"pool + {scratch.offset}, 256);" in executor


def test_plain_c_runs_bit_exact_on_the_host(models_dir: Path) -> None:
    report = run_model(models_dir / KWS, HOST_BOARD, offload=("plain-c",))
    assert report.offloaded == {"plain-c": 1}
    assert report.outputs_match_reference and report.max_abs_diff == 0


@needs_arm
def test_plain_c_runs_bit_exact_on_qemu(models_dir: Path) -> None:
    report = run_model(models_dir / KWS, "mps2/an385", offload=("plain-c",))
    assert report.offloaded == {"plain-c": 1}
    assert report.outputs_match_reference and report.max_abs_diff == 0
    assert report.instructions


def test_plain_c_run_cli(models_dir: Path, tmp_path: Path) -> None:
    r = _cli("run", str(models_dir / KWS), "--offload", "plain-c", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["offloaded"] == {"plain-c": 1} and data["outputs_match_reference"]


def test_rpc_paths_compile_with_the_run_options() -> None:
    """run --rpc and profile compile with the board's CPU and the same --offload and
    --constants options as run (none of them is silently dropped)."""
    import argparse

    from utvm.cli.rpc import compile_options

    args = argparse.Namespace(board="mps2/an386", offload=["plain-c"], cmsis_nn_dir=Path("/x"), constants="object")
    options = compile_options(args)
    assert (options.cpu, options.target.dsp, options.constants, options.constants_target) == (
        "cortex-m4", True, "object", "arm")
    assert (options.offload, options.cmsis_nn_dir) == (("plain-c",), Path("/x"))
    host = compile_options(argparse.Namespace(board="host"))
    assert (host.cpu, host.constants, host.constants_target, host.offload) == (None, "c", None, ())


@pytest.mark.parametrize("command", ["run", "profile"])
def test_rpc_paths_refuse_a_bad_model_in_one_line(tmp_path: Path, command: str) -> None:
    """run --rpc and profile compile in this process: a model that is not one is one error
    line, exit 2, no traceback, before any server is built."""
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"TFL3 but not a flatbuffer" * 4)
    extra = ["--rpc", "--json"] if command == "run" else ["--work-dir", str(tmp_path / "w")]
    r = _cli(command, str(bad), *extra, cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: compiling bad.tflite failed: "), r.stderr
    assert "Traceback" not in r.stdout + r.stderr


def test_plain_c_through_the_rpc_server(models_dir: Path, tmp_path: Path) -> None:
    r = _cli("run", str(models_dir / KWS), "--rpc", "--offload", "plain-c", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["outputs_match_reference"] is True and data["max_abs_diff"] == 0


@needs_arm
def test_static_lib_carries_the_external_module(models_dir: Path, tmp_path: Path) -> None:
    """--export static-lib with an offloaded operator: the archive holds the glue and the
    module's library; linked into the QEMU harness it runs bit-exact."""
    from utvm.run.boards import get_board

    board = get_board("mps2/an386")
    model = models_dir / KWS
    result = compile_model(model, tmp_path / "kws", CompileOptions(
        name="kws", cpu=board.cpu, export="static-lib", cc="arm-none-eabi-gcc",
        cflags=" ".join([*board.gcc_flags, "-O2"]), offload=("plain-c",)))
    archive = result.mlf_dir / "lib" / "libkws.a"
    symbols = subprocess.run(["arm-none-eabi-nm", "-g", str(archive)], capture_output=True, text=True,
                             check=True).stdout
    assert " T utvm_plainc_avgpool_s8" in symbols
    assert any(f" T {c.symbol}" in symbols for c in result.lowered.calls if c.module == "plain-c")
    assert_archive_runs_bit_exact(model, result, board, tmp_path)


def test_plain_c_library_rejects_bad_arguments(tmp_path: Path) -> None:
    """The C library checks its arguments and reports, never crashes."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no host C compiler")
    lib = ROOT / "lib" / "ext" / "plain_c"
    main = tmp_path / "main.c"
    main.write_text(r"""
#include <stdio.h>
#include "utvm_plainc.h"
int main(void) {
  utvm_plainc_pool_params_t p = {1, 2, 2, 3, 1, 1, 2, 2, 2, 2, 0, 0, -128, 127};
  int8_t in[12] = {1, -1, 100, 2, -2, 100, 3, -3, 100, 4, -4, 101};
  int8_t out[3];
  int32_t sums[3];
  int bad = 0;
  bad += utvm_plainc_avgpool_s8_buffer_size(3) != 12;
  bad += utvm_plainc_avgpool_s8(&p, in, out, sums, 8) != UTVM_PLAINC_ERR_ARGUMENT;  /* scratch too small */
  bad += utvm_plainc_avgpool_s8(NULL, in, out, sums, 12) != UTVM_PLAINC_ERR_ARGUMENT;
  bad += utvm_plainc_avgpool_s8(&p, NULL, out, sums, 12) != UTVM_PLAINC_ERR_ARGUMENT;
  p.stride_h = 0;
  bad += utvm_plainc_avgpool_s8(&p, in, out, sums, 12) != UTVM_PLAINC_ERR_ARGUMENT;
  p.stride_h = 2;
  bad += utvm_plainc_avgpool_s8(&p, in, out, sums, 12) != UTVM_PLAINC_OK;
  /* (1+2+3+4)/4 = 2.5 -> 3; (-10)/4 = -2.5 -> -3; 401/4 = 100.25 -> 100 */
  bad += out[0] != 3 || out[1] != -3 || out[2] != 100;
  printf("%d\n", bad);
  return bad;
}
""")
    exe = tmp_path / "t"
    r = subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", f"-I{lib / 'include'}", str(main),
                        *map(str, (lib / "src").glob("*.c")), "-o", str(exe)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([str(exe)], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "0", r.stdout


# --------------------------------------------------------------------------- CMSIS-NN


@needs_cmsis_nn
@pytest.mark.parametrize("model", INT8_MODELS)
def test_cmsis_nn_bit_exact_on_the_host(models_dir: Path, model: str) -> None:
    report = run_model(models_dir / f"{model}.tflite", HOST_BOARD, offload=("cmsis-nn",),
                       cmsis_nn_dir=_cmsis_nn_dir())
    assert report.offloaded["cmsis-nn"] > 0
    assert report.outputs_match_reference and report.max_abs_diff == 0


@needs_cmsis_nn
@needs_arm
@pytest.mark.parametrize("board", ["mps2/an386", "mps3/an547"])
def test_cmsis_nn_bit_exact_on_qemu(models_dir: Path, board: str) -> None:
    report = run_model(models_dir / KWS, board, offload=("cmsis-nn",), cmsis_nn_dir=_cmsis_nn_dir())
    assert report.offloaded["cmsis-nn"] == 12  # every operator but the reshape
    assert report.outputs_match_reference and report.max_abs_diff == 0
    assert report.instructions_per_mac


@needs_cmsis_nn
@pytest.mark.parametrize("board", ["host", "mps2/an386", "mps3/an547"])
def test_cmsis_nn_16x8_conv_and_depthwise_bit_exact(tmp_path: Path, board: str) -> None:
    """16x8 CONV_2D (int64 and int32 bias) and DEPTHWISE_CONV_2D (int64 bias) layers of random shapes,
    strides, dilations, paddings and quantization in arm_convolve_wrapper_s16 /
    arm_depthwise_conv_wrapper_s16: identical to TFLite Micro."""
    from mac_cases import Layers

    if board != "host" and arm_tools_problem() is not None:
        pytest.skip(arm_tools_problem() or "")
    layers = Layers()
    for i in range(10):
        layers.conv16(100 + i)
        layers.conv16(200 + i, depthwise=True)
    report = check_cases(layers.cases, tmp_path, board, inputs=layers.inputs, offload=("cmsis-nn",),
                         cmsis_nn_dir=_cmsis_nn_dir())
    assert report.offloaded["cmsis-nn"] >= len(layers.cases) - 2 and report.max_abs_diff == 0


@needs_cmsis_nn
def test_cmsis_nn_layout_and_scratch(models_dir: Path, tmp_path: Path) -> None:
    """Scratch sizes come from CMSIS-NN's own buffer-size functions for the CPU's code path;
    only the library files the glue needs are copied."""
    sizes = {}
    for cpu in ("cortex-m4", "cortex-m55"):
        result = compile_model(models_dir / KWS, tmp_path / cpu, CompileOptions(
            name="kws", cpu=cpu, offload=("cmsis-nn",), cmsis_nn_dir=_cmsis_nn_dir()))
        glue = (result.mlf_dir / "codegen/cmsis_nn/src/kws_cmsis_nn.c").read_text()
        assert "arm_convolve_wrapper_s8(" in glue and "arm_depthwise_conv_wrapper_s8(" in glue
        assert "arm_fully_connected_s8(" in glue and "arm_softmax_s8(" in glue
        lib = result.mlf_dir / "codegen/cmsis_nn/lib"
        assert (lib / "Include/arm_nnfunctions.h").is_file()
        copied = {p.name for p in (lib / "Source").rglob("*.c")}
        assert "arm_convolve_wrapper_s8.c" in copied and "arm_svdf_s8.c" not in copied
        sizes[cpu] = [c.scratch_bytes for c in result.lowered.calls]
        assert not result.plan.check()
    # first layer: 10x4 conv over 1 channel. DSP: im2col of 2 columns as int16 (2 * 40 * 2);
    # Helium: 4 rows of 16-lane-padded columns (4 * 48)
    assert sizes["cortex-m4"][0] == 2 * 40 * 2
    assert sizes["cortex-m55"][0] == 4 * 48
