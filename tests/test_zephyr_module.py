"""The Zephyr module: the CMake function tvm_add_model, the C port, the manifest.

What needs Zephyr itself (a real `west build` of the sample and the ztest suite) runs only
where ZEPHYR_BASE points at a Zephyr tree; everything else runs here for real: cmake + gcc on
a plain CMake project that uses cmake/tvm.cmake, gcc on the Zephyr-facing C against host
stand-ins of Zephyr's headers. module.yml, the sample and testcase files and Kconfig are
checked against Zephyr's own files in tests/test_zephyr_files.py.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
MODELS = REPO.parent / "shared" / "models"
HOST_STUBS = REPO / "tests" / "zephyr" / "host"
CRT = REPO / "lib" / "crt"
ZEPHYR_BASE = os.environ.get("ZEPHYR_BASE")

needs_zephyr = pytest.mark.skipif(
    not ZEPHYR_BASE,
    reason="ZEPHYR_BASE is not set: no Zephyr tree to build with (CI: .github/workflows/twister.yml)",
)


def _compiler_missing() -> str | None:
    try:
        from utvm import cli
    except ImportError as e:
        return f"the utvm compiler is not importable yet (utvm.cli: {e})"
    if not hasattr(cli, "cmd_compile"):
        return "utvm.cli has no cmd_compile yet"
    return None


def _run(cmd: list[str], cwd: Path | None = None, env: dict[str, str] | None = None,
         timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


# --------------------------------------------------------------------------- module.yml


def test_requirements_match_the_package() -> None:
    """scripts/requirements.txt (what a Zephyr workspace installs) lists pyproject.toml's
    dependencies, with the same environment markers: tflite-micro only where its wheels
    exist (Linux x86-64), so that pip install works on macOS and Linux aarch64."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11
    from packaging.requirements import Requirement

    lines = (REPO / "scripts" / "requirements.txt").read_text().splitlines()
    listed = {str(Requirement(line)) for line in lines if line.strip() and not line.startswith("#")}
    declared = {str(Requirement(d)) for d in
                tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]}
    assert listed == declared
    reqs = {Requirement(r).name: Requirement(r) for r in declared}
    assert str(reqs["apache-tvm"].specifier) == "==0.27.0.post1"
    marker = reqs["tflite-micro"].marker
    assert marker is not None
    assert marker.evaluate({"platform_system": "Linux", "platform_machine": "x86_64"})
    for system, machine in (("Darwin", "arm64"), ("Linux", "aarch64"), ("Windows", "AMD64")):
        assert not marker.evaluate({"platform_system": system, "platform_machine": machine})
    for name in ("pyelftools", "west", "kconfiglib", "numpy", "tflite"):
        assert reqs[name].marker is None, name


def test_sample_ships_the_mlperf_tiny_model() -> None:
    model = REPO / "samples/utvm_inference/model/kws_ref_model.tflite"
    assert model.read_bytes()[4:8] == b"TFL3"
    notice = (model.parent / "README.md").read_text()
    assert "mlcommons/tiny" in notice and "Apache License 2.0" in notice
    shared = MODELS / model.name
    if shared.is_file():
        assert shared.read_bytes() == model.read_bytes()


def test_west_manifest_declares_the_extension() -> None:
    from west.manifest import validate

    data = yaml.safe_load((REPO / "west.yml").read_text())
    validate(data)  # west's own manifest schema
    manifest = data["manifest"]
    assert manifest["self"]["path"] == "utvm"
    allow = manifest["projects"][0]["import"]["name-allowlist"]
    assert {"cmsis-nn", "cmsis-dsp"} <= set(allow)  # CONFIG_UTVM_OFFLOAD_CMSIS_NN
    # The HALs of a first real board (as zephyrproject-rtos/example-application lists them).
    assert {"cmsis", "hal_nordic", "hal_stm32"} <= set(allow)
    commands_file = REPO / manifest["self"]["west-commands"]
    commands = yaml.safe_load(commands_file.read_text())["west-commands"]
    assert commands[0]["commands"][0]["name"] == "tvm"
    assert (REPO / commands[0]["file"]).is_file()


def test_samples_take_what_west_tvm_passes() -> None:
    """The -D variables west tvm build/run pass are the samples' cache variables, and no
    sample caches UTVM_OPTIONS (tvm_add_model() reads it for one configure only)."""
    from utvm.zephyr import build as zbuild

    req = zbuild.BuildRequest(board="b", model=CMAKE_MODEL, name="kws")
    passed = {d[2:].split("=")[0] for d in zbuild.cmake_defines(req)}
    assert passed == {"UTVM_MODEL", "UTVM_MODEL_NAME"}
    for sample in ("utvm_inference", "utvm_rpc_server"):
        text = (REPO / "samples" / sample / "CMakeLists.txt").read_text()
        cached = set(re.findall(r"^set\((\w+)\s[^)]*\bCACHE\b", text, re.M))
        assert passed <= cached, (sample, passed - cached)
        assert "UTVM_OPTIONS" not in cached and "TVM_OPTIONS" not in text.replace("UTVM_OPTIONS", "")


def test_no_board_names_in_cmake() -> None:
    board_like = re.compile(r"qemu_|mps[23]|native_sim|an38[56]|nrf|stm32|nucleo", re.IGNORECASE)
    for path in [REPO / "CMakeLists.txt", REPO / "cmake" / "tvm.cmake",
                 REPO / "samples/utvm_inference/CMakeLists.txt"]:
        code = "\n".join(line for line in path.read_text().splitlines()
                         if not line.lstrip().startswith("#"))
        assert not board_like.search(code), path


# --------------------------------------------------------------------------- C on the host


def _gcc() -> str:
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        pytest.skip("no host C compiler")
    return gcc


CFLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-Wno-unused-function"]


_LOG = ["-DCONFIG_LOG=1", "-DCONFIG_UTVM_LOG_LEVEL=3"]  # Kconfig: UTVM_LOG_LEVEL needs LOG


@pytest.mark.parametrize("defines", [
    [],
    _LOG,
    [*_LOG, "-DCONFIG_UTVM_ABORT_PANIC=1", "-DCONFIG_UTVM_STACK_CHECK=1"],
])
def test_zephyr_port_compiles(tmp_path: Path, defines: list[str]) -> None:
    """lib/crt/ports/zephyr against host stand-ins of Zephyr's headers, warnings as errors."""
    cmd = [_gcc(), *CFLAGS, "-DCONFIG_UTVM_LOG_LINE_SIZE=128",
           *defines, f"-I{HOST_STUBS}", f"-I{CRT / 'include'}", "-c",
           str(CRT / "ports/zephyr/platform_zephyr.c"), "-o", str(tmp_path / "p.o")]
    r = _run(cmd)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("defines", [[], _LOG])
def test_ztest_suite_on_host(tmp_path: Path, defines: list[str]) -> None:
    """tests/zephyr/crt against the real lib/crt core and Zephyr port, with host stand-ins
    of ztest and the kernel."""
    exe = tmp_path / "crt_tests"
    cmd = [_gcc(), *CFLAGS, "-DCONFIG_UTVM_LOG_LINE_SIZE=128", *defines, f"-I{HOST_STUBS}",
           f"-I{CRT / 'include'}", f"-I{CRT / 'ports/zephyr'}",
           str(REPO / "tests/zephyr/crt/src/main.c"), str(HOST_STUBS / "ztest_host.c"),
           str(CRT / "src/backend.c"), str(CRT / "ports/zephyr/platform_zephyr.c"),
           str(HOST_STUBS / "zephyr_host.c"), "-o", str(exe)]
    r = _run(cmd)
    assert r.returncode == 0, r.stderr
    r = _run([str(exe)])
    assert r.returncode == 0, r.stdout
    assert "8 passed, 0 failed" in r.stdout
    # Runtime log lines go through Zephyr logging, and nowhere without it.
    assert ("utvm port test: 42 ok" in r.stdout) == bool(defines)


_TIMING_MAIN = r"""
#include <stdio.h>
#include <string.h>
#include <zephyr/timing/timing.h>
#include "utvm/platform.h"
#include "utvm_zephyr.h"
int main(int argc, char** argv) {
  uint32_t a, b;
  (void)argv;
  host_timing_step = argc > 1 ? 0u : 7u;
  a = utvm_platform_cycles();
  b = utvm_platform_cycles();
  printf("%s|%u|%llu\n", utvm_zephyr_cycles_unit(), (unsigned)(b - a),
         (unsigned long long)utvm_zephyr_cycles_to_ns(100u));
  return 0;
}
"""


def test_zephyr_port_counts_with_the_timing_functions(tmp_path: Path) -> None:
    """With Zephyr's timing functions the port counts with them (the CPU's cycle counter on
    Cortex-M, where k_cycle_get_32() may tick at 32 kHz), and names the unit; when the
    counter does not run (DWT under QEMU) it falls back to k_cycle_get_32()."""
    (tmp_path / "main.c").write_text(_TIMING_MAIN)
    exe = tmp_path / "timing"
    r = _run([_gcc(), *CFLAGS, "-DCONFIG_UTVM_LOG_LINE_SIZE=128", "-DCONFIG_UTVM_TIMING_FUNCTIONS=1",
              "-DCONFIG_TIMING_FUNCTIONS=1", f"-I{HOST_STUBS}", f"-I{CRT / 'include'}",
              f"-I{CRT / 'ports/zephyr'}", str(tmp_path / "main.c"), str(CRT / "ports/zephyr/platform_zephyr.c"),
              str(HOST_STUBS / "zephyr_host.c"), str(HOST_STUBS / "timing_host.c"), "-o", str(exe)])
    assert r.returncode == 0, r.stderr
    unit, delta, ns = _run([str(exe)]).stdout.strip().split("|")
    assert (unit, delta, ns) == ("timing cycles", "7", "1000")  # across the 32-bit wrap
    unit, _, _ = _run([str(exe), "stopped"]).stdout.strip().split("|")
    assert unit == "k_cycle_get_32 ticks"


# --------------------------------------------------------------------------- CMake


def _cmake() -> str:
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.skip("cmake is not installed")
    return cmake


def _configure_command(tmp_path: Path) -> tuple[Path, list[str]]:
    """The build directory and the configure command of tests/cmake with a copy of KWS."""
    build = tmp_path / "build"
    model = tmp_path / "m.tflite"
    shutil.copy(CMAKE_MODEL, model)
    return build, [_cmake(), "-S", str(REPO / "tests/cmake"), "-B", str(build),
                   f"-DUTVM_TEST_MODEL={model}", "-DUTVM_TEST_NAME=kws",
                   f"-DPython3_EXECUTABLE={sys.executable}"]


def test_cmake_options_stamp_changes_only_with_the_options(tmp_path: Path) -> None:
    """Configuring writes the compiler's command line to a stamp that the custom command
    depends on; it is rewritten only when the command line changes (no compiler needed)."""
    build, configure = _configure_command(tmp_path)
    r = _run(configure)
    assert r.returncode == 0, r.stdout + r.stderr
    stamp = build / "tvm" / "kws.cmdline"
    lines = stamp.read_text().splitlines()
    assert lines[0] == sys.executable
    assert lines[1:4] == ["-m", "utvm", "compile"]
    assert str(tmp_path / "m.tflite") in lines and "--name" in lines
    first = stamp.stat().st_mtime_ns
    time.sleep(1.1)
    assert _run(configure).returncode == 0
    assert stamp.stat().st_mtime_ns == first
    assert _run([*configure, "-DUTVM_TEST_OPTIONS=--foo;bar"]).returncode == 0
    assert stamp.stat().st_mtime_ns > first
    assert stamp.read_text().splitlines()[-2:] == ["--foo", "bar"]


def test_cmake_tuning_log_reaches_the_compiler(tmp_path: Path) -> None:
    """TUNING_LOG becomes --tuning-log with the absolute path, in the command-line stamp."""
    log = tmp_path / "m4.json"
    log.write_text("")
    (tmp_path / "main.c").write_text("int main(void) { return 0; }\n")
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(t C)\n"
        f"include({(REPO / 'cmake/tvm.cmake').as_posix()})\n"
        "add_executable(t main.c)\n"
        f"tvm_add_model(NAME m MODEL {CMAKE_MODEL.as_posix()} TARGET t TUNING_LOG m4.json)\n")
    r = _run([_cmake(), "-S", str(tmp_path), "-B", str(tmp_path / "b"), f"-DPython3_EXECUTABLE={sys.executable}"])
    assert r.returncode == 0, r.stdout + r.stderr
    lines = (tmp_path / "b" / "tvm" / "m.cmdline").read_text().splitlines()
    assert lines[lines.index("--tuning-log") + 1] == str(log)


@pytest.mark.parametrize(("call", "message"), [
    ("tvm_add_model(NAME m MODEL {model})", "TARGET is required outside Zephyr"),
    ("tvm_add_model(NAME 1m MODEL {model} TARGET t)", "NAME must be a C identifier"),
    ("tvm_add_model(NAME m MODEL /no/such.tflite TARGET t)", "model file not found"),
    ("tvm_add_model(NAME m MODEL {model} TARGET t RUNTIME nope)", "no runtime port 'nope'"),
    ("tvm_add_model(NAME m MODEL {model} TARGET t BOGUS 1)", "unknown arguments: BOGUS"),
    ("tvm_add_model(NAME m MODEL {model} TARGET t TUNING_LOG /no/such.json)", "tuning log not found"),
    ("tvm_add_model(NAME m MODEL {model} TARGET t COMPAT tvm-0.17)", "COMPAT must be tvm-0.18"),
])
def test_cmake_usage_errors(tmp_path: Path, call: str, message: str) -> None:
    (tmp_path / "main.c").write_text("int main(void) { return 0; }\n")
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(t C)\n"
        f"include({(REPO / 'cmake/tvm.cmake').as_posix()})\n"
        "add_executable(t main.c)\n" + call.format(model=CMAKE_MODEL.as_posix()) + "\n")
    r = _run([_cmake(), "-S", str(tmp_path), "-B", str(tmp_path / "b")])
    assert r.returncode != 0
    assert message in r.stderr, r.stderr


# The copy the sample ships (MLPerf Tiny KWS), so that these tests need nothing outside.
CMAKE_MODEL = REPO / "samples/utvm_inference/model/kws_ref_model.tflite"


def _stand_in_repo(root: Path) -> Path:
    """A copy of the repository's layout whose `python -m utvm compile` is the stand-in
    tests/cmake/stand_in/fake_compile.py (the real lib/crt, cmake/ and test data helper)."""
    shutil.copytree(REPO / "cmake", root / "cmake")
    shutil.copytree(REPO / "lib/crt", root / "lib/crt")
    shutil.copytree(REPO / "lib/ext", root / "lib/ext")
    shutil.copytree(REPO / "tests/cmake", root / "tests/cmake")
    shutil.copy(REPO / "CMakeLists.txt", root / "CMakeLists.txt")
    pkg = root / "scripts" / "utvm"
    (pkg / "zephyr").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    shutil.copy(REPO / "scripts/utvm/errors.py", pkg / "errors.py")
    shutil.copy(REPO / "tests/cmake/stand_in/fake_compile.py", pkg / "__main__.py")
    for name in ("__init__.py", "testdata.py"):
        shutil.copy(REPO / "scripts/utvm/zephyr" / name, pkg / "zephyr" / name)
    (pkg / "run").mkdir()
    for name in ("ir.py", "run/__init__.py", "run/reference.py"):  # what testdata.py imports
        shutil.copy(REPO / "scripts/utvm" / name, pkg / name)
    return root


@pytest.mark.parametrize("generator", ["Unix Makefiles", "Ninja"])
def test_cmake_with_a_stand_in_compiler(tmp_path: Path, generator: str) -> None:
    """tvm_add_model()'s build logic, fast: the stand-in compiler writes the outputs and
    counts its runs. The compiler runs on the first build, not on a second one, again when
    the model is touched or the options change. Ninja is what Zephyr builds with."""
    tool = "ninja" if generator == "Ninja" else "make"
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed")
    root = _stand_in_repo(tmp_path / "repo")
    model = tmp_path / "kws.tflite"
    shutil.copy(CMAKE_MODEL, model)
    build = tmp_path / "build"
    configure = [_cmake(), "-S", str(root / "tests/cmake"), "-B", str(build), "-G", generator,
                 f"-DUTVM_TEST_MODEL={model}", "-DUTVM_TEST_NAME=kws",
                 f"-DPython3_EXECUTABLE={sys.executable}"]
    calls = build / "tvm" / "kws.calls"

    def build_and_count() -> int:
        r = _run([_cmake(), "--build", str(build)])
        assert r.returncode == 0, r.stdout + r.stderr
        return len(calls.read_text().splitlines())

    assert _run(configure).returncode == 0
    assert build_and_count() == 1
    r = _run([str(build / "model_host")])
    assert r.returncode == 0 and "PASS" in r.stdout, r.stdout
    assert build_and_count() == 1  # nothing changed: the compiler does not run
    time.sleep(1.1)
    model.touch()
    assert build_and_count() == 2  # the model changed
    assert build_and_count() == 2
    r = _run([*configure, "-DUTVM_TEST_OPTIONS=--fast"])
    assert r.returncode == 0, r.stderr
    assert build_and_count() == 3  # the options changed
    assert calls.read_text().splitlines()[-1].endswith("--fast")
    assert _run([str(build / "model_host")]).returncode == 0
    # A failed compile leaves no completion stamp, so the next build runs it again.
    (build / "tvm" / "kws" / ".tvm-done").unlink()
    assert build_and_count() == 4
    # CPU goes to a compiler whose --help lists --cpu; POOL_SECTION to the executor's build.
    r = _run([*configure, "-DUTVM_TEST_OPTIONS=", "-DUTVM_TEST_CPU=cortex-m4",
              "-DUTVM_TEST_POOL_SECTION=.tvm_pool", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"])
    assert r.returncode == 0, r.stderr
    assert build_and_count() == 5
    assert calls.read_text().splitlines()[-1].endswith("--cpu cortex-m4")
    commands = json.loads((build / "compile_commands.json").read_text())
    lib1 = [c["command"] for c in commands if c["file"].endswith("kws_lib1.c")]
    assert lib1 and 'UTVM_POOL_SECTION=\\".tvm_pool\\"' in lib1[0], lib1


def test_cmake_options_of_one_configure_do_not_stick(tmp_path: Path) -> None:
    """-DUTVM_OPTIONS=... applies to the configure it is given on: a later configure without
    it compiles without it (a plain cache variable would keep it)."""
    build, configure = _configure_command(tmp_path)
    stamp = build / "tvm" / "kws.cmdline"
    r = _run([*configure, "-DUTVM_OPTIONS=--io-in-pool"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert stamp.read_text().splitlines()[-1] == "--io-in-pool"
    assert "UTVM_OPTIONS" not in (build / "CMakeCache.txt").read_text()
    r = _run([*configure, "-DUTVM_TEST_CPU="])  # another option, not UTVM_OPTIONS
    assert r.returncode == 0, r.stdout + r.stderr
    assert "--io-in-pool" not in stamp.read_text().splitlines()


def test_zephyr_mode_scopes_includes_and_definitions(tmp_path: Path) -> None:
    """The module's CMakeLists.txt and tvm_add_model() as Zephyr runs them (stand-ins of
    Zephyr's CMake functions, tests/cmake/zephyr_stand_in): the runtime's include
    directories and UTVM_PROFILE reach the module's library, the app and the generated
    executor only; another library of the image compiles without them (its source fails to
    compile otherwise). The CPU and the offload module come from Kconfig."""
    if shutil.which("ninja") is None:
        pytest.skip("ninja is not installed")
    root = _stand_in_repo(tmp_path / "repo")
    model = tmp_path / "kws.tflite"
    shutil.copy(CMAKE_MODEL, model)
    build = tmp_path / "build"
    r = _run([_cmake(), "-S", str(REPO / "tests/cmake/zephyr_stand_in"), "-B", str(build), "-G", "Ninja",
              f"-DUTVM_MODULE_DIR={root}", f"-DMODEL={model}", f"-DHOST_STUBS={HOST_STUBS}",
              f"-DPython3_EXECUTABLE={sys.executable}", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"])
    assert r.returncode == 0, r.stdout + r.stderr
    r = _run([_cmake(), "--build", str(build)])
    assert r.returncode == 0, r.stdout + r.stderr
    commands = {Path(c["file"]).name: c["command"] for c in json.loads((build / "compile_commands.json").read_text())}
    crt_include = f"-I{root / 'lib/crt/include'}"
    assert crt_include in commands["platform_zephyr.c"] and crt_include in commands["app.c"]
    assert crt_include not in commands["other.c"]
    assert "UTVM_PROFILE" in commands["kws_lib1.c"]
    assert not [f for f, c in commands.items() if "UTVM_PROFILE" in c and f != "kws_lib1.c"]
    assert 'UTVM_POOL_SECTION=\\".noinit.utvm_pool\\"' in commands["kws_lib1.c"]
    assert "utvm_plainc_avgpool.c" in commands  # CONFIG_UTVM_OFFLOAD_PLAIN_C: in the module's library
    calls = (build / "tvm" / "kws.calls").read_text()
    assert "--cpu cortex-m4" in calls and "--offload plain-c" in calls


#: The shared model the real CMake project compiles: MLPerf Tiny's anomaly detection model,
#: the quickest of the four to compile (a few seconds), so that rebuilding is cheap to test.
REAL_MODEL = MODELS / "ad01_int8.tflite"


def _need_real_model() -> None:
    """Skip the test, with the reason, without the compiler or without REAL_MODEL."""
    reason = _compiler_missing()
    if reason:
        pytest.skip(reason)
    if not REAL_MODEL.is_file():
        pytest.skip(f"{REAL_MODEL} is not there (shared/ beside the repository)")


@pytest.fixture(scope="session")
def cmake_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/cmake configured and built once: tvm_add_model() runs the real compiler."""
    _need_real_model()
    work = tmp_path_factory.mktemp("cmake")
    model = work / REAL_MODEL.name
    shutil.copy(REAL_MODEL, model)
    build = work / "build"
    r = _run([_cmake(), "-S", str(REPO / "tests/cmake"), "-B", str(build),
              f"-DUTVM_TEST_MODEL={model}", "-DUTVM_TEST_NAME=ad01",
              "-DUTVM_TEST_POOL_SECTION=.tvm_pool_test",
              f"-DPython3_EXECUTABLE={sys.executable}"])
    assert r.returncode == 0, r.stdout + r.stderr
    r = _run([_cmake(), "--build", str(build)])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "utvm: compiling model ad01" in r.stdout
    return build


def test_cmake_builds_and_runs_the_model(cmake_project: Path) -> None:
    r = _run([str(cmake_project / "model_host")])
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.rstrip().endswith("PASS")  # equal to TFLite Micro's output
    mlf = cmake_project / "tvm" / "ad01"
    header = (mlf / "codegen/host/include/tvmgen_ad01.h").read_text()
    assert re.search(r"#define\s+TVMGEN_AD01_WORKSPACE_SIZE\s+\d+", header)
    assert re.search(r"#define\s+TVMGEN_AD01_\w+_SIZE\s+640\b", header)  # I/O size macros
    variables = (cmake_project / "tvm_vars.txt").read_text()
    assert f"DIR={mlf}" in variables
    assert "ad01_lib0.c" in variables and "runtime/ports/host/platform_host.c" in variables


def test_cmake_pool_section(cmake_project: Path) -> None:
    """POOL_SECTION puts the model's static pool into that linker section."""
    from elftools.elf.elffile import ELFFile

    with (cmake_project / "model_host").open("rb") as fh:
        elf = ELFFile(fh)
        section = elf.get_section_by_name(".tvm_pool_test")
        assert section is not None, "no .tvm_pool_test section"
        symtab = elf.get_section_by_name(".symtab")
        (pool,) = [s for s in symtab.iter_symbols() if s.name == "tvmgen_ad01_pool"]
        assert elf.get_section(pool["st_shndx"]).name == ".tvm_pool_test"


def test_cmake_rebuild_runs_the_compiler_only_when_needed(cmake_project: Path) -> None:
    stamp = cmake_project / "tvm" / "ad01" / ".tvm-done"
    before = stamp.stat().st_mtime_ns
    r = _run([_cmake(), "--build", str(cmake_project)])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "utvm: compiling model" not in r.stdout
    assert stamp.stat().st_mtime_ns == before

    # Touching the model compiles it again.
    time.sleep(1.1)  # coarse file systems
    (cmake_project.parent / REAL_MODEL.name).touch()
    r = _run([_cmake(), "--build", str(cmake_project)])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "utvm: compiling model ad01" in r.stdout
    assert stamp.stat().st_mtime_ns > before
    assert _run([str(cmake_project / "model_host")]).returncode == 0

    # Re-configuring with the same options leaves the options stamp alone: no rebuild.
    r = _run([_cmake(), str(cmake_project)])
    assert r.returncode == 0, r.stderr
    r = _run([_cmake(), "--build", str(cmake_project)])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "utvm: compiling model" not in r.stdout


def test_cmake_offload_plain_c(tmp_path: Path) -> None:
    """OFFLOAD plain-c: the glue source is part of the build, the in-repo module's library is
    linked, and the program still prints PASS (TFLite Micro's output)."""
    reason = _compiler_missing()
    if reason:
        pytest.skip(reason)
    build = _build_kws_project(tmp_path, "kws", "-DUTVM_TEST_OFFLOAD=plain-c")
    assert "kws_plain_c.c" in (build / "tvm_vars.txt").read_text()
    assert "utvm_plainc_avgpool_s8" in _run(["nm", str(build / "model_host")]).stdout


def test_cmake_compat_tvm_018(tmp_path: Path) -> None:
    """COMPAT tvm-0.18: tvmgen_<name>.h is TVM 0.18's, the system library (<name>_lib3.c)
    is built in, and the program still prints PASS (TFLite Micro's output)."""
    reason = _compiler_missing()
    if reason:
        pytest.skip(reason)
    build = _build_kws_project(tmp_path, "default", "-DUTVM_TEST_COMPAT=tvm-0.18")
    assert "default_lib3.c" in (build / "tvm_vars.txt").read_text()
    header = (build / "tvm/default/codegen/host/include/tvmgen_default.h").read_text()
    assert "  void* Identity;" in header and "utvm/model.h" not in header
    symbols = _run(["nm", str(build / "model_host")]).stdout
    assert "TVMSystemLibEntryPoint" in symbols and "tvmgen_default___tvm_main__" in symbols


def _build_kws_project(tmp_path: Path, name: str, *defines: str) -> Path:
    """tests/cmake built with the shared KWS model and these -D options; its program prints PASS."""
    model = MODELS / "kws_ref_model.tflite"
    if not model.is_file():
        pytest.skip(f"{model} is not there (shared/ beside the repository)")
    build = tmp_path / "build"
    r = _run([_cmake(), "-S", str(REPO / "tests/cmake"), "-B", str(build), f"-DUTVM_TEST_MODEL={model}",
              f"-DUTVM_TEST_NAME={name}", *defines, f"-DPython3_EXECUTABLE={sys.executable}"])
    assert r.returncode == 0, r.stdout + r.stderr
    r = _run([_cmake(), "--build", str(build)])
    assert r.returncode == 0, r.stdout + r.stderr
    r = _run([str(build / "model_host")])
    assert r.returncode == 0 and r.stdout.rstrip().endswith("PASS"), r.stdout + r.stderr
    return build


def test_cmake_offload_errors(tmp_path: Path) -> None:
    _need_real_model()
    model = REAL_MODEL
    for offload, message in (("nope", "unknown OFFLOAD module 'nope'"), ("cmsis-nn", "CMSIS_NN_DIR")):
        r = _run([_cmake(), "-S", str(REPO / "tests/cmake"), "-B", str(tmp_path / offload),
                  f"-DUTVM_TEST_MODEL={model}", f"-DUTVM_TEST_OFFLOAD={offload}",
                  f"-DPython3_EXECUTABLE={sys.executable}"])
        assert r.returncode != 0 and message in r.stderr, r.stderr


# --------------------------------------------------------------------------- Zephyr


@needs_zephyr
@pytest.mark.parametrize("app", ["samples/utvm_inference", "tests/zephyr/crt"])
def test_zephyr_build(tmp_path: Path, app: str) -> None:
    """A real Zephyr build for an emulated board (qemu_cortex_m3), with the module."""
    reason = _compiler_missing()
    if reason and app.startswith("samples"):
        pytest.skip(reason)
    build = tmp_path / "build"
    r = _run(["cmake", "-S", str(REPO / app), "-B", str(build), "-GNinja",
              "-DBOARD=qemu_cortex_m3", f"-DPython3_EXECUTABLE={sys.executable}"])
    assert r.returncode == 0, r.stdout + r.stderr
    r = _run(["cmake", "--build", str(build)])
    assert r.returncode == 0, r.stdout + r.stderr
    assert (build / "zephyr" / "zephyr.elf").is_file()
    config = (build / "zephyr" / ".config").read_text()
    assert "CONFIG_UTVM=y" in config


@needs_zephyr
@pytest.mark.slow
def test_native_board_times_the_inference(tmp_path: Path) -> None:
    """On a native board Zephyr's clocks are simulated time, which stands still while code
    runs (the sample printed '0 timing cycles per inference'): the port reads the host's
    monotonic clock there, and the count is real."""
    reason = _compiler_missing()
    if reason:
        pytest.skip(reason)
    base = Path(ZEPHYR_BASE or "")
    # a 64-bit native board (the 32-bit ones need gcc-multilib): native_posix_64 up to 3.7,
    # native_sim_64 from 3.5, native_sim/native/64 under hardware model v2
    board = next((name for name in ("native_posix_64", "native_sim_64")
                  if any(base.glob(f"boards/**/{name}.yaml"))), "native_sim/native/64")
    build = tmp_path / "build"
    r = _run(["cmake", "-S", str(REPO / "samples/utvm_inference"), "-B", str(build), "-GNinja",
              f"-DBOARD={board}", f"-DPython3_EXECUTABLE={sys.executable}"])
    assert r.returncode == 0, r.stdout + r.stderr
    r = _run(["cmake", "--build", str(build)])
    assert r.returncode == 0, r.stdout + r.stderr
    run = _run([str(build / "zephyr" / "zephyr.exe"), "-stop_at=5"], timeout=120)
    assert "utvm_inference: PASS" in run.stdout, run.stdout + run.stderr
    timed = re.search(r"utvm_inference: ([0-9]+) host clock ns per inference", run.stdout)
    assert timed is not None and int(timed.group(1)) > 0, run.stdout


# ------------------------------------------------- pools in memory regions, the fit check

#: Stand-ins of Zephyr's devicetree CMake API (cmake/modules/extensions.cmake), with its
#: signatures: a board with a 256-byte DTCM and a 64 KiB SRAM2 (zephyr,memory-region nodes)
#: and a 1 MiB chosen zephyr,flash. test_zephyr_devicetree_cmake_api checks the signatures
#: against Zephyr's own file where ZEPHYR_BASE is set.
DT_STAND_IN = """
set(DT_PATH_dtcm /soc/memory@20000000)
set(DT_SIZE_/soc/memory@20000000 256)
set(DT_REGION_/soc/memory@20000000 DTCM)
set(DT_PATH_sram2 /soc/memory@30000000)
set(DT_SIZE_/soc/memory@30000000 65536)
set(DT_REGION_/soc/memory@30000000 SRAM2)
set(DT_PATH_flash0 /soc/flash@0)
set(DT_SIZE_/soc/flash@0 1048576)
function(dt_nodelabel var)
  cmake_parse_arguments(DT "" "NODELABEL;TARGET" "" ${ARGN})
  if(DEFINED DT_PATH_${DT_NODELABEL})
    set(${var} ${DT_PATH_${DT_NODELABEL}} PARENT_SCOPE)
  else()
    set(${var} NOTFOUND PARENT_SCOPE)
  endif()
endfunction()
function(dt_reg_size var)
  cmake_parse_arguments(DT "" "PATH;INDEX;NAME;TARGET" "" ${ARGN})
  set(${var} ${DT_SIZE_${DT_PATH}} PARENT_SCOPE)
endfunction()
function(dt_prop var)
  cmake_parse_arguments(DT "" "PATH;PROPERTY;INDEX;TARGET" "" ${ARGN})
  if(DT_PROPERTY STREQUAL "zephyr,memory-region" AND DEFINED DT_REGION_${DT_PATH})
    set(${var} ${DT_REGION_${DT_PATH}} PARENT_SCOPE)
  else()
    set(${var} NOTFOUND PARENT_SCOPE)
  endif()
endfunction()
function(dt_chosen var)
  cmake_parse_arguments(DT "" "PROPERTY;TARGET" "" ${ARGN})
  if(DT_PROPERTY STREQUAL "zephyr,flash")
    set(${var} /soc/flash@0 PARENT_SCOPE)
  endif()
endfunction()
"""


def _fit_project(tmp_path: Path, call: str, devicetree: bool = False) -> list[str]:
    """A plain CMake project with one tvm_add_model() call; the configure command."""
    (tmp_path / "main.c").write_text("int main(void) { return 0; }\n")
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(t C)\n"
        f"include({(REPO / 'cmake/tvm.cmake').as_posix()})\n" + (DT_STAND_IN if devicetree else "")
        + "add_executable(t main.c)\n" + call.replace("{model}", REAL_MODEL.as_posix()) + "\n")
    return [_cmake(), "-S", str(tmp_path), "-B", str(tmp_path / "b"), f"-DPython3_EXECUTABLE={sys.executable}",
            "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"]


def _one_error(stderr: str) -> str:
    """The text of the configure's one CMake error, lines joined."""
    assert stderr.count("CMake Error") == 1, stderr
    text = stderr.split("CMake Error", 1)[1].split("Call Stack", 1)[0]
    return " ".join(text.split()[1:])


def test_cmake_fit_check_with_sizes(tmp_path: Path) -> None:
    """POOLS <pool>:<bytes> and FLASH <bytes> without devicetree: a pool larger than its region
    (the compiler's exit 2), or constants larger than the flash, fail the configure with one
    message; when everything fits the configure reports the pools and the build compiles
    nothing again."""
    _need_real_model()
    configure = _fit_project(tmp_path, "tvm_add_model(NAME m MODEL {model} TARGET t POOLS ${P} FLASH ${F})")
    r = _run([*configure, "-DP=fast:100;slow:128", "-DF=1000000"])
    assert r.returncode != 0
    message = _one_error(r.stderr)
    assert "tvm_add_model(m): does not fit: the model needs 272 bytes" in message, message
    assert "fast 100, slow 128 bytes" in message
    assert not (tmp_path / "b" / "tvm" / "m").exists()
    r = _run([*configure, "-DP=fast:4096", "-DF=1000"])
    assert r.returncode != 0
    need = re.search(r"the constants need (\d+) bytes, the flash region has 1000", _one_error(r.stderr))
    assert need, r.stderr
    r = _run([*configure, "-DP=fast:64;slow:0x1000", "-DF=1000000"])
    assert r.returncode == 0, r.stderr
    assert re.search(rf"utvm: m fits \(used/region bytes\): fast \d+/64 slow \d+/4096; constants {need[1]}/1000000",
                     r.stdout), r.stdout
    meta = json.loads((tmp_path / "b" / "tvm" / "m" / "metadata.json").read_text())
    assert int(need[1]) == meta["modules"]["m"]["memory"]["functions"]["main"][0]["constants_size_bytes"]
    pools = {p["name"]: p for p in meta["modules"]["m"]["pools"]}
    assert pools["fast"]["size"] <= 64 and pools["slow"]["size"] <= 4096 and pools["slow"]["size"] > 0


def test_cmake_pools_in_devicetree_regions(tmp_path: Path) -> None:
    """POOLS <pool>:<node label>: the size comes from the node (dt_nodelabel, dt_reg_size), the
    executor places the pool in the node's zephyr,memory-region section (the configure says
    what the application must do for a region Zephyr's startup does not initialise); too small
    a node fails the configure."""
    _need_real_model()
    configure = _fit_project(tmp_path, "tvm_add_model(NAME m MODEL {model} TARGET t POOLS ${P})", devicetree=True)
    r = _run([*configure, "-DP=fast:dtcm"])
    assert r.returncode != 0
    assert "fast 256 bytes" in _one_error(r.stderr)
    r = _run([*configure, "-DP=fast:dtcm;slow:sram2"])
    assert r.returncode == 0, r.stderr
    assert re.search(r"constants \d+/1048576", r.stdout), r.stdout  # the chosen zephyr,flash
    # a region's own section is neither zeroed nor loaded at boot: the configure says what that means
    said = " ".join(r.stderr.split())
    for pool, label, section in (("fast", "dtcm", "DTCM"), ("slow", "sram2", "SRAM2")):
        assert (f"tvm_add_model(m): pool '{pool}' is in devicetree region '{label}' (section {section}), which "
                "Zephyr's startup neither zeroes nor loads: the pool is scratch and needs neither, but the "
                "application must make that memory usable") in said, r.stderr
    r = _run([_cmake(), "--build", str(tmp_path / "b")])
    assert r.returncode == 0, r.stdout + r.stderr
    commands = {Path(c["file"]).name: c["command"]
                for c in json.loads((tmp_path / "b" / "compile_commands.json").read_text())}
    assert 'UTVM_POOL_FAST_SECTION=\\"DTCM\\"' in commands["m_lib1.c"]
    assert 'UTVM_POOL_SLOW_SECTION=\\"SRAM2\\"' in commands["m_lib1.c"]
    r = _run([*configure, "-DP=fast:nosuch"])
    assert "no devicetree node labelled 'nosuch'" in _one_error(r.stderr)


@needs_zephyr
def test_zephyr_devicetree_cmake_api() -> None:
    """The devicetree functions tvm.cmake calls exist in Zephyr with the keywords it passes."""
    text = (Path(str(ZEPHYR_BASE)) / "cmake" / "modules" / "extensions.cmake").read_text()
    for function, keywords in (("dt_nodelabel", ["NODELABEL"]), ("dt_reg_size", ["PATH"]),
                               ("dt_prop", ["PATH", "PROPERTY"]), ("dt_chosen", ["PROPERTY"])):
        m = re.search(rf"^function\({function}\s+var\)(.*?)^endfunction", text, re.M | re.S)
        assert m, f"{function} not in Zephyr's extensions.cmake"
        for keyword in keywords:
            assert keyword in m.group(1), (function, keyword)


def test_cmake_model_group(tmp_path: Path) -> None:
    """tvm_add_model_group(): two models in one pool of the larger need; the program runs both
    from the group's pool."""
    _need_real_model()
    for name in ("det", "cls"):
        shutil.copy(REAL_MODEL, tmp_path / f"{name}.tflite")
    (tmp_path / "main.c").write_text("""
#include <stdint.h>
#include "tvmgen_pipe.h"
#include "tvmgen_det.h"
#include "tvmgen_cls.h"
typedef char pool_is_the_larger[(TVMGEN_PIPE_POOL_SIZE == (TVMGEN_DET_WORKSPACE_SIZE > TVMGEN_CLS_WORKSPACE_SIZE
    ? TVMGEN_DET_WORKSPACE_SIZE : TVMGEN_CLS_WORKSPACE_SIZE)) ? 1 : -1];
static int8_t in[TVMGEN_DET_INPUT_1_SIZE], out[TVMGEN_DET_IDENTITY_SIZE];
int main(void) {
  struct tvmgen_det_inputs di = {in};
  struct tvmgen_det_outputs dout = {out};
  struct tvmgen_cls_inputs ci = {in};
  struct tvmgen_cls_outputs co = {out};
  return tvmgen_det_run(&di, &dout) != 0 || tvmgen_cls_run(&ci, &co) != 0;
}
""")
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(t C)\n"
        f"include({(REPO / 'cmake/tvm.cmake').as_posix()})\n"
        "add_executable(t main.c)\n"
        "tvm_add_model_group(NAME pipe MODELS det.tflite cls.tflite TARGET t RUNTIME host)\n"
        "file(WRITE ${CMAKE_BINARY_DIR}/vars.txt \"${UTVM_PIPE_MODELS}\")\n")
    build = tmp_path / "b"
    r = _run([_cmake(), "-S", str(tmp_path), "-B", str(build), f"-DPython3_EXECUTABLE={sys.executable}"])
    assert r.returncode == 0, r.stderr
    assert (build / "vars.txt").read_text() == "det;cls"
    r = _run([_cmake(), "--build", str(build)])
    assert r.returncode == 0, r.stdout + r.stderr
    assert _run([str(build / "t")]).returncode == 0
    meta = json.loads((build / "tvm" / "pipe" / "group.json").read_text())
    assert [m["name"] for m in meta["models"]] == ["det", "cls"]


@pytest.mark.parametrize("path", sorted(REPO.glob("samples/*/sample.yaml")) + sorted(REPO.glob("tests/zephyr/*/testcase.yaml")),
                         ids=lambda p: p.parent.name)
def test_no_scenario_names_boards_in_platform_allow(path: Path) -> None:
    """twister 3.4 to 3.6 knows mps2_an385, 4.x knows mps2/an385 and exits on a board name it
    does not know: a scenario matches its boards by the Kconfig symbols of its filter instead
    (tests/test_zephyr_files.py checks them against a Zephyr tree)."""
    data = yaml.safe_load(path.read_text())
    scenarios = {"common": data.get("common") or {}, **{k: v or {} for k, v in data["tests"].items()}}
    assert [name for name, s in scenarios.items() if "platform_allow" in s] == []
