"""Model Library Format that TVM 0.18's own consumers accept (../shared/tools/mlf_v018): the
tar layout, parameters/<name>.params, the runtime shim, and --compat tvm-0.18's C interface.

TVM 0.18's files come from the checkout that $TVM_018_DIR names (apache/tvm at v0.18.0);
without it, or without the checker, the tests skip with the reason."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import numpy as np
import pytest

from utvm.compiler import CompileOptions, CompileResult, compile_model
from utvm.run.runner import run_compiled

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
CHECK = SHARED / "tools" / "mlf_v018" / "check_mlf.py"
TVM_018 = Path(os.environ["TVM_018_DIR"]) if os.environ.get("TVM_018_DIR") else None
KWS = SHARED / "models" / "kws_ref_model.tflite"
#: the cases that only read the MLF (no C build)
LAYOUT_CASES = ("zephyr_aot_standalone_demo_generate", "zephyr_host_driven_generate",
                "arduino_example_project_generate", "arduino_host_driven_generate", "crt_host_generate",
                "mlf_extract_workspace_size_bytes", "tvmc_package")


def _needs_v018() -> None:
    if TVM_018 is None:
        pytest.skip("TVM_018_DIR is not set (a checkout of TVM v0.18.0)")
    if not (TVM_018 / "python" / "tvm").is_dir():
        pytest.skip(f"TVM_018_DIR={TVM_018} is not a TVM checkout (no python/tvm)")
    if not CHECK.is_file():
        pytest.skip(f"TVM 0.18's MLF checker is not at {CHECK} (../shared beside the repository)")
    missing = [m for m in ("usb", "psutil", "yaml", "packaging") if _missing(m)]
    if missing:
        pytest.skip(f"missing Python packages for TVM 0.18's template servers: {missing} (pip install .[test])")


def _missing(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is None


@pytest.fixture(scope="module")
def mlfs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, CompileResult]:
    if not KWS.is_file():
        pytest.skip(f"{KWS} is not there (../shared beside the repository)")
    tmp = tmp_path_factory.mktemp("mlf018")
    return {
        "compat": compile_model(KWS, tmp / "compat" / "default", CompileOptions(name="default", compat="tvm-0.18")),
        "plain": compile_model(KWS, tmp / "plain" / "default", CompileOptions(name="default")),
    }


def _check(tar: Path, out: Path) -> dict[str, dict[str, object]]:
    proc = subprocess.run([sys.executable, str(CHECK), str(tar), str(out), "--json"], capture_output=True,
                          text=True, timeout=600)
    return json.loads((out / "results.json").read_text()) if (out / "results.json").is_file() else \
        pytest.fail(f"check_mlf.py wrote no results: {proc.stderr[-1000:]}")


def test_compat_mlf_passes_every_tvm_018_consumer(mlfs: dict[str, CompileResult], tmp_path: Path) -> None:
    """Project generation (Zephyr, Arduino, CRT host), the CRT host template's build and run with
    the MLF's own code, the workspace reader, tvmc's package reader, v0.18's Infer() code."""
    _needs_v018()
    results = _check(mlfs["compat"].tar_path, tmp_path / "out")
    failed = {k: v["detail"] for k, v in results.items() if not v["ok"]}
    assert not failed, failed
    assert {"crt_host_build", "crt_host_run", "infer_compile"} <= results.keys()


def test_default_mlf_passes_the_layout_cases(mlfs: dict[str, CompileResult], tmp_path: Path) -> None:
    _needs_v018()
    results = _check(mlfs["plain"].tar_path, tmp_path / "out")
    failed = {k: results[k]["detail"] for k in LAYOUT_CASES if not results[k]["ok"]}
    assert not failed, failed


def test_tar_members_are_under_dot_slash(mlfs: dict[str, CompileResult]) -> None:
    with tarfile.open(mlfs["plain"].tar_path) as tar:
        names = tar.getnames()
        owners = {(m.uid, m.gid, m.uname) for m in tar.getmembers()}
    assert names[0] == "." and all(n == "." or n.startswith("./") for n in names)
    assert {"./metadata.json", "./parameters/default.params", "./src/default.relay",
            "./templates/crt_config.h.template", "./templates/platform.c.template"} <= set(names)
    assert owners == {(0, 0, "root")}


def test_params_are_readable_by_tvm(mlfs: dict[str, CompileResult]) -> None:
    """parameters/<name>.params in TVM's parameter-dictionary format: TVM 0.27's reader gives
    back every constant the kernels read, by name and value."""
    import tvm

    result = mlfs["plain"]
    data = (result.mlf_dir / "parameters" / "default.params").read_bytes()
    params = {k: v.numpy() for k, v in tvm.runtime.load_param_dict(data).items()}
    consts = {a for c in result.lowered.calls for a in c.args if result.graph.tensors[a].is_constant}
    assert set(params) == consts
    for name, value in params.items():
        want = result.graph.tensors[name].data
        assert want is not None and value.dtype == want.dtype and np.array_equal(value, want)


def test_metadata_names_the_runtime_dependency(mlfs: dict[str, CompileResult]) -> None:
    meta = json.loads((mlfs["plain"].mlf_dir / "metadata.json").read_text())
    deps = meta["modules"]["default"]["external_dependencies"]
    assert deps and deps[0]["url"] == "./runtime" and deps[0]["url_type"] == "mlf_path"


def test_compat_header_is_tvm_018s(mlfs: dict[str, CompileResult]) -> None:
    header = (mlfs["compat"].mlf_dir / "codegen" / "host" / "include" / "tvmgen_default.h").read_text()
    includes = [ln for ln in header.splitlines() if ln.startswith("#include")]
    assert includes == ["#include <stdint.h>"]
    assert "  void* input_1;" in header and "  void* Identity;" in header
    assert "#define TVMGEN_DEFAULT_INPUT_1_SIZE 490" in header
    assert "#define TVMGEN_DEFAULT_IDENTITY_SIZE 12" in header
    assert f"#define TVMGEN_DEFAULT_WORKSPACE_SIZE {mlfs['compat'].plan.pool_size}" in header
    assert "int32_t tvmgen_default_run(" in header
    plain = (mlfs["plain"].mlf_dir / "codegen" / "host" / "include" / "tvmgen_default.h").read_text()
    assert "utvm/model.h" in plain and "  void* identity;" in plain  # utvm's own stays the default


def test_generated_c_needs_no_include_directory(mlfs: dict[str, CompileResult], tmp_path: Path) -> None:
    """The kernels, the executor and the system library compile with the MLF's code alone on
    the include path (TVM 0.18's CRT host template gives the model no MLF directory)."""
    mlf = mlfs["compat"].mlf_dir
    for src in sorted((mlf / "codegen" / "host" / "src").glob("*.c")):
        extra = [f"-I{mlf / 'codegen' / 'host' / 'include'}"] if src.name.endswith("_lib3.c") else []
        proc = subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-c", *extra, str(src),
                               "-o", str(tmp_path / (src.stem + ".o"))], capture_output=True, text=True)
        assert proc.returncode == 0, f"{src.name}: {proc.stderr[:1500]}"


def test_templates_build_and_run_the_model(mlfs: dict[str, CompileResult], tmp_path: Path) -> None:
    """templates/platform.c.template, copied as it is in place of a runtime port (and
    crt_config.h.template included everywhere), builds the MLF with its runtime/src on a hosted
    C library: the program gives TFLite Micro's outputs."""
    from utvm.run.harness import parse_harness_output, write_harness
    from utvm.run.reference import random_inputs, run_reference
    from utvm.run.runner import compare

    result = mlfs["compat"]
    mlf, g = result.mlf_dir, result.graph
    x = random_inputs(g)
    harness = write_harness(tmp_path, "default", x, [g.tensors[n].nbytes for n in g.outputs])
    platform = tmp_path / "platform.c"
    platform.write_text((mlf / "templates" / "platform.c.template").read_text())
    sources = [*sorted((mlf / "codegen" / "host" / "src").glob("*.c")), *sorted((mlf / "runtime" / "src").glob("*.c"))]
    proc = subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-include",
                           str(mlf / "templates" / "crt_config.h.template"), f"-I{mlf / 'codegen' / 'host' / 'include'}",
                           f"-I{mlf / 'runtime' / 'include'}", *map(str, [*sources, platform, harness]), "-lm",
                           "-o", str(tmp_path / "app")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[:2000]
    run = subprocess.run([str(tmp_path / "app")], capture_output=True, text=True, timeout=120)
    outputs, _, status = parse_harness_output(run.stdout, [g.tensors[n].dtype for n in g.outputs],
                                              [g.tensors[n].shape for n in g.outputs])
    reference = run_reference(KWS, x, len(g.outputs), 1)
    assert status == 0 and reference is not None
    ok, max_abs, _ = compare(outputs, reference[0])
    assert ok and max_abs == 0


#: a Makefile laid out as TVM 0.18's apps/microtvm/cmsisnn one is: the MLF extracted as build/,
#: its runtime/ as the standalone CRT, two CRT files compiled by their TVM 0.18 paths, the
#: generated code archived, the application linked with both
V018_STYLE_MAKEFILE = """\
BUILD_DIR := build
STANDALONE_CRT_PATH := $(abspath $(BUILD_DIR))/runtime
CC ?= gcc
AR ?= ar
PKG_CFLAGS = -std=gnu99 -Wall -Wextra -Werror -O2 \\
\t-I${STANDALONE_CRT_PATH}/include \\
\t-I${STANDALONE_CRT_PATH}/src/runtime/crt/include \\
\t-I$(abspath $(BUILD_DIR))/codegen/host/include
CODEGEN_SRCS = $(wildcard $(abspath $(BUILD_DIR))/codegen/host/src/*.c)

$(BUILD_DIR)/demo: demo.c $(BUILD_DIR)/stack_allocator.o $(BUILD_DIR)/crt_backend_api.o $(BUILD_DIR)/libcodegen.a
\t$(CC) $(PKG_CFLAGS) -o $@ $^ -lm

$(BUILD_DIR)/stack_allocator.o: $(STANDALONE_CRT_PATH)/src/runtime/crt/memory/stack_allocator.c
\t$(CC) -c $(PKG_CFLAGS) -o $@ $^

$(BUILD_DIR)/crt_backend_api.o: $(STANDALONE_CRT_PATH)/src/runtime/crt/common/crt_backend_api.c
\t$(CC) -c $(PKG_CFLAGS) -o $@ $^

$(BUILD_DIR)/libcodegen.a: $(CODEGEN_SRCS)
\tcd $(abspath $(BUILD_DIR))/codegen/host/src && $(CC) -c $(PKG_CFLAGS) $(CODEGEN_SRCS)
\t$(AR) -cr $@ $(abspath $(BUILD_DIR))/codegen/host/src/*.o
"""


def test_v018_style_makefile_builds_and_runs_the_model(mlfs: dict[str, CompileResult], tmp_path: Path) -> None:
    """A Makefile written for a TVM 0.18 MLF (apps/microtvm/cmsisnn's layout: the runtime's
    src/runtime/crt/memory/stack_allocator.c and src/runtime/crt/common/crt_backend_api.c, no
    port, TVMLogf and TVMPlatformAbort from the application) builds the compat MLF, and the
    application's Infer-style call gives TFLite Micro's outputs; its own workspace through
    StackMemoryManager_* allocates and frees last-in first-out."""
    from utvm.run.reference import random_inputs, run_reference
    from utvm.run.runner import compare

    result = mlfs["compat"]
    g = result.graph
    with tarfile.open(result.tar_path) as tar:
        tar.extractall(tmp_path / "build", filter="data")
    (x,) = random_inputs(g)
    (out_name,) = g.outputs
    out = g.tensors[out_name]
    values = ", ".join(str(int(v)) for v in np.asarray(x).reshape(-1))
    (tmp_path / "demo.c").write_text(f"""\
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <tvm/runtime/crt/logging.h>
#include <tvm/runtime/crt/platform.h>
#include <tvm/runtime/crt/stack_allocator.h>
#include "tvmgen_default.h"

void TVMLogf(const char* msg, ...) {{
  va_list args;
  va_start(args, msg);
  vprintf(msg, args);
  va_end(args);
}}
void TVMPlatformAbort(tvm_crt_error_t code) {{
  printf("abort %d\\n", (int)code);
  exit(1);
}}

static int8_t input[TVMGEN_DEFAULT_INPUT_1_SIZE] = {{{values}}};
static int8_t output[TVMGEN_DEFAULT_IDENTITY_SIZE];
static uint8_t app_memory[256];

int main(void) {{
  tvm_workspace_t ws;
  void* a = NULL;
  void* b = NULL;
  int lifo = StackMemoryManager_Init(&ws, app_memory, sizeof(app_memory)) == kTvmErrorNoError &&
             StackMemoryManager_Allocate(&ws, 40, &a) == kTvmErrorNoError &&
             StackMemoryManager_Allocate(&ws, 24, &b) == kTvmErrorNoError &&
             ((uintptr_t)b % TVM_RUNTIME_ALLOC_ALIGNMENT_BYTES) == 0 &&
             StackMemoryManager_Allocate(&ws, 1000, &b) == kTvmErrorPlatformNoMemory &&
             StackMemoryManager_Free(&ws, a) == kTvmErrorPlatformStackAllocBadFree &&
             StackMemoryManager_Free(&ws, b) == kTvmErrorNoError &&
             StackMemoryManager_Free(&ws, a) == kTvmErrorNoError && ws.next_alloc == ws.workspace;
  struct tvmgen_default_inputs inputs = {{.input_1 = input}};
  struct tvmgen_default_outputs outputs = {{.Identity = output}};
  int32_t rc = tvmgen_default_run(&inputs, &outputs);
  printf("lifo %d rc %d out", lifo, (int)rc);
  for (int i = 0; i < TVMGEN_DEFAULT_IDENTITY_SIZE; i++) printf(" %d", output[i]);
  printf("\\n");
  return rc;
}}
""")
    (tmp_path / "Makefile").write_text(V018_STYLE_MAKEFILE)
    make = subprocess.run(["make", "-s"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert make.returncode == 0, (make.stdout + make.stderr)[-2000:]
    run = subprocess.run([str(tmp_path / "build" / "demo")], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    words = run.stdout.split()
    assert words[:4] == ["lifo", "1", "rc", "0"], run.stdout
    got = np.array([int(v) for v in words[5:]], dtype=out.dtype).reshape(out.shape)
    reference = run_reference(KWS, [x], 1, 1)
    assert reference is not None
    ok, max_abs, _ = compare([got], reference[0])
    assert ok and max_abs == 0


@pytest.mark.parametrize("board", ["host", pytest.param("mps2/an386", marks=pytest.mark.slow)])
def test_compat_model_stays_bit_exact(mlfs: dict[str, CompileResult], tmp_path: Path, board: str) -> None:
    """The very MLF that check_mlf.py gets (--name default --compat tvm-0.18, portable C) built
    with utvm's runtime for the host and for a Cortex-M4 under QEMU: TFLite Micro's outputs."""
    if board != "host":
        from toolchains import toolchain_problem

        problem = toolchain_problem()
        if problem:
            pytest.skip(problem)
    report = run_compiled(KWS, mlfs["compat"], board, tmp_path)
    assert report.reference == "tflite-micro"
    assert report.outputs_match_reference and report.max_abs_diff == 0
