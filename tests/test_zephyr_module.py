"""The Zephyr module: module.yml, Kconfig, the CMake function tvm_add_model, the C port.

What needs Zephyr itself (a real `west build` of the sample and the ztest suite) runs only
where ZEPHYR_BASE points at a Zephyr tree; everything else runs here for real: pykwalify on
module.yml, kconfiglib on the Kconfig tree, cmake + gcc on a plain CMake project that uses
cmake/tvm.cmake, gcc on the Zephyr-facing C against host stand-ins of Zephyr's headers.
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

import pykwalify.core
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


# The schema of zephyr/module.yml as Zephyr's scripts/zephyr_module.py validates it
# (METADATA_SCHEMA), written out here from its documented structure.
MODULE_SCHEMA = yaml.safe_load("""
type: map
mapping:
  name: {required: false, type: str}
  build:
    required: false
    type: map
    mapping:
      cmake: {required: false, type: str}
      kconfig: {required: false, type: str}
      cmake-ext: {required: false, type: bool}
      kconfig-ext: {required: false, type: bool}
      sysbuild-cmake: {required: false, type: str}
      sysbuild-kconfig: {required: false, type: str}
      sysbuild-cmake-ext: {required: false, type: bool}
      sysbuild-kconfig-ext: {required: false, type: bool}
      depends: {required: false, type: seq, sequence: [{type: str}]}
      settings:
        required: false
        type: map
        mapping:
          board_root: {required: false, type: str}
          dts_root: {required: false, type: str}
          snippet_root: {required: false, type: str}
          soc_root: {required: false, type: str}
          arch_root: {required: false, type: str}
          module_ext_root: {required: false, type: str}
          sca_root: {required: false, type: str}
  tests: {required: false, type: seq, sequence: [{type: str}]}
  samples: {required: false, type: seq, sequence: [{type: str}]}
  boards: {required: false, type: seq, sequence: [{type: str}]}
  blobs:
    required: false
    type: seq
    sequence:
      - type: map
        mapping:
          path: {required: true, type: str}
          sha256: {required: true, type: str}
          type: {required: true, type: str, enum: [img, lib]}
          version: {required: true, type: str}
          license-path: {required: true, type: str}
          url: {required: true, type: str}
          description: {required: true, type: str}
          doc-url: {required: false, type: str}
  security:
    required: false
    type: map
    mapping:
      external-references: {required: false, type: seq, sequence: [{type: str}]}
  package-managers:
    required: false
    type: map
    mapping:
      pip:
        required: false
        type: map
        mapping:
          requirement-files: {required: false, type: seq, sequence: [{type: str}]}
  runners:
    required: false
    type: seq
    sequence:
      - type: map
        mapping:
          file: {required: true, type: str}
""")


def _run(cmd: list[str], cwd: Path | None = None, env: dict[str, str] | None = None,
         timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


# --------------------------------------------------------------------------- module.yml


def test_module_yml_is_valid() -> None:
    meta = yaml.safe_load((REPO / "zephyr" / "module.yml").read_text())
    pykwalify.core.Core(source_data=meta, schema_data=MODULE_SCHEMA).validate()
    assert meta["name"] == "utvm"
    # What zephyr_module.py then checks or uses: the cmake folder has a CMakeLists.txt,
    # kconfig names a file, and the sample, test and requirement paths exist.
    assert (REPO / meta["build"]["cmake"] / "CMakeLists.txt").is_file()
    assert (REPO / meta["build"]["kconfig"]).is_file()
    for path in meta["samples"] + meta["tests"]:
        assert (REPO / path).is_dir(), path
    for path in meta["package-managers"]["pip"]["requirement-files"]:
        assert (REPO / path).is_file(), path
    assert "west-commands" not in meta  # declared by west.yml instead


def test_module_schema_rejects_a_bad_module_yml() -> None:
    bad = {"name": "utvm", "build": {"cmake": ".", "kconfig": ["Kconfig"]}}
    with pytest.raises(pykwalify.errors.SchemaError):
        pykwalify.core.Core(source_data=bad, schema_data=MODULE_SCHEMA).validate()


def test_requirements_pin_tvm() -> None:
    reqs = (REPO / "scripts" / "requirements.txt").read_text().split()
    assert "apache-tvm==0.27.0.post1" in reqs
    for name in ("tflite-micro", "pyelftools", "west", "kconfiglib", "numpy"):
        assert name in reqs


def test_sample_ships_the_mlperf_tiny_model() -> None:
    model = REPO / "samples/utvm_inference/model/kws_ref_model.tflite"
    assert model.read_bytes()[4:8] == b"TFL3"
    notice = (model.parent / "README.md").read_text()
    assert "mlcommons/tiny" in notice and "Apache License 2.0" in notice
    shared = MODELS / model.name
    if shared.is_file():
        assert shared.read_bytes() == model.read_bytes()


def test_sample_and_testcase_yaml() -> None:
    sample = yaml.safe_load((REPO / "samples/utvm_inference/sample.yaml").read_text())
    for name, test in sample["tests"].items():
        assert name.startswith("sample.")
        del test
    # the external-module variants switch on the Kconfig options tvm_add_model() reads
    assert "CONFIG_TVM_OFFLOAD_CMSIS_NN=y" in sample["tests"]["sample.tvm.utvm_inference.cmsis_nn"]["extra_configs"]
    assert "CONFIG_TVM_OFFLOAD_PLAIN_C=y" in sample["tests"]["sample.tvm.utvm_inference.plain_c"]["extra_configs"]
    common = sample["common"]
    assert common["harness"] == "console"
    assert set(common["integration_platforms"]) == {"qemu_cortex_m3", "mps2/an385", "native_sim"}
    regexes = common["harness_config"]["regex"]
    assert regexes[-1] == "utvm_inference: PASS"
    for r in regexes:
        re.compile(r)
    # The sample's output lines match the regexes (the format main.c prints).
    lines = [
        "utvm_inference: model kws, 1 input(s), 1 output(s), pool 16000 bytes",
        "output 0 (Identity): -128 -128 -127 42",
        "utvm_inference: 123456 cycles per inference (4938 us)",
        "utvm_inference: PASS",
    ]
    for r, line in zip(regexes, lines, strict=True):
        assert re.search(r, line), (r, line)
    testcase = yaml.safe_load((REPO / "tests/zephyr/crt/testcase.yaml").read_text())
    assert all(name.startswith("tvm.") for name in testcase["tests"])


def test_west_manifest_declares_the_extension() -> None:
    from west.manifest import validate

    data = yaml.safe_load((REPO / "west.yml").read_text())
    validate(data)  # west's own manifest schema
    manifest = data["manifest"]
    assert manifest["self"]["path"] == "utvm"
    allow = manifest["projects"][0]["import"]["name-allowlist"]
    assert {"cmsis-nn", "cmsis-dsp"} <= set(allow)  # CONFIG_TVM_OFFLOAD_CMSIS_NN
    commands_file = REPO / manifest["self"]["west-commands"]
    commands = yaml.safe_load(commands_file.read_text())["west-commands"]
    assert commands[0]["commands"][0]["name"] == "tvm"
    assert (REPO / commands[0]["file"]).is_file()


def test_no_board_names_in_cmake() -> None:
    board_like = re.compile(r"qemu_|mps[23]|native_sim|an38[56]|nrf|stm32|nucleo", re.IGNORECASE)
    for path in [REPO / "CMakeLists.txt", REPO / "cmake" / "tvm.cmake",
                 REPO / "samples/utvm_inference/CMakeLists.txt"]:
        code = "\n".join(line for line in path.read_text().splitlines()
                         if not line.lstrip().startswith("#"))
        assert not board_like.search(code), path


# --------------------------------------------------------------------------- Kconfig


# The Zephyr pieces our Kconfig refers to, reduced to what kconfiglib needs: the symbols it
# selects or depends on, and the logging template (same symbol names as Zephyr's).
_STUB_TOP = """
mainmenu "utvm Kconfig test"
config LOG
\tbool "Logging"
config ASSERT
\tbool "Asserts"
config THREAD_STACK_INFO
\tbool
config INIT_STACKS
\tbool
menuconfig CMSIS_NN
\tbool "CMSIS-NN"
if CMSIS_NN
config CMSIS_NN_BASICMATH
\tbool "Basic math"
config CMSIS_NN_CONVOLUTION
\tbool "Convolution"
config CMSIS_NN_FULLYCONNECTED
\tbool "Fully connected"
config CMSIS_NN_NNSUPPORT
\tbool "NN support"
config CMSIS_NN_POOLING
\tbool "Pooling"
config CMSIS_NN_SOFTMAX
\tbool "Softmax"
endif
source "{repo}/Kconfig"
"""

_STUB_LOG_TEMPLATE = """
choice "$(module)_LOG_LEVEL_CHOICE"
\tprompt "Max compiled-in log level for $(module-str)"
\tdefault $(module)_LOG_LEVEL_DEFAULT
\tdepends on LOG
config $(module)_LOG_LEVEL_OFF
\tbool "Off"
config $(module)_LOG_LEVEL_ERR
\tbool "Error"
config $(module)_LOG_LEVEL_WRN
\tbool "Warning"
config $(module)_LOG_LEVEL_INF
\tbool "Info"
config $(module)_LOG_LEVEL_DBG
\tbool "Debug"
config $(module)_LOG_LEVEL_DEFAULT
\tbool "Default"
endchoice
config $(module)_LOG_LEVEL
\tint
\tdepends on LOG
\tdefault 0 if $(module)_LOG_LEVEL_OFF
\tdefault 1 if $(module)_LOG_LEVEL_ERR
\tdefault 2 if $(module)_LOG_LEVEL_WRN
\tdefault 3 if $(module)_LOG_LEVEL_INF
\tdefault 4 if $(module)_LOG_LEVEL_DBG
\tdefault 3
"""

_STUB_SYMBOLS = {"LOG", "ASSERT", "THREAD_STACK_INFO", "INIT_STACKS", "CMSIS_NN", "CMSIS_NN_BASICMATH",
                 "CMSIS_NN_CONVOLUTION", "CMSIS_NN_FULLYCONNECTED", "CMSIS_NN_NNSUPPORT", "CMSIS_NN_POOLING",
                 "CMSIS_NN_SOFTMAX"}


@pytest.fixture()
def kconfig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    kconfiglib = pytest.importorskip("kconfiglib")
    (tmp_path / "subsys" / "logging").mkdir(parents=True)
    (tmp_path / "subsys/logging/Kconfig.template.log_config").write_text(_STUB_LOG_TEMPLATE)
    top = tmp_path / "Kconfig"
    top.write_text(_STUB_TOP.format(repo=REPO.as_posix()))
    monkeypatch.setenv("srctree", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return kconfiglib.Kconfig(str(top), warn_to_stderr=False)


def test_kconfig_symbols_are_prefixed(kconfig) -> None:
    assert not kconfig.warnings, kconfig.warnings
    ours = {sym.name for sym in kconfig.unique_defined_syms if sym.name not in _STUB_SYMBOLS}
    assert "TVM" in ours
    assert {"TVM_PROFILE", "TVM_POOL_SECTION", "TVM_LOG_LEVEL", "TVM_STACK_CHECK",
            "TVM_WORKSPACE_CHECK"} <= ours
    assert all(name == "TVM" or name.startswith("TVM_") for name in ours), sorted(ours)
    for choice in kconfig.choices:
        if choice.name:
            assert choice.name.startswith("TVM_"), choice.name
    # Every symbol referred to is defined: ours, or one of the Zephyr symbols stubbed above.
    undefined = {sym.name for sym in kconfig.syms.values()
                 if not sym.nodes and not re.fullmatch(r"[0-9]+|[ynm]|MODULES", sym.name)}
    assert not undefined, undefined


def test_kconfig_defaults(kconfig) -> None:
    syms = kconfig.syms
    assert syms["TVM"].str_value == "n"
    assert syms["TVM_PROFILE"].visibility == 0  # hidden until TVM is on
    syms["TVM"].set_value("y")
    syms["LOG"].set_value("y")
    assert syms["TVM_POOL_BSS"].str_value == "y"
    assert syms["TVM_POOL_SECTION"].str_value == ""
    assert syms["TVM_LOG_LEVEL"].str_value == "3"
    syms["TVM_LOG_LEVEL_DBG"].set_value("y")
    assert syms["TVM_LOG_LEVEL"].str_value == "4"
    syms["TVM_POOL_NOINIT"].set_value("y")
    assert syms["TVM_POOL_SECTION"].str_value == ".noinit.tvm_pool"
    syms["TVM_STACK_CHECK"].set_value("y")
    assert syms["THREAD_STACK_INFO"].str_value == "y"
    # CMSIS-NN offload needs Zephyr's cmsis-nn module and turns on the parts the glue calls.
    assert syms["TVM_OFFLOAD_CMSIS_NN"].visibility == 0
    syms["CMSIS_NN"].set_value("y")
    syms["TVM_OFFLOAD_CMSIS_NN"].set_value("y")
    assert syms["TVM_OFFLOAD_CMSIS_NN"].str_value == "y"
    for part in ("CONVOLUTION", "FULLYCONNECTED", "POOLING", "SOFTMAX", "BASICMATH", "NNSUPPORT"):
        assert syms[f"CMSIS_NN_{part}"].str_value == "y", part
    assert syms["TVM_LOG_LINE_SIZE"].str_value == "128"


def test_kconfig_matches_the_c_and_cmake() -> None:
    """Every CONFIG_TVM_* the C and CMake code use is defined in Kconfig."""
    defined = set(re.findall(r"^(?:menu)?config (TVM\w*)", (REPO / "Kconfig").read_text(), re.MULTILINE))
    defined |= {"TVM_LOG_LEVEL"}  # from Zephyr's logging template
    used: set[str] = set()
    for path in [REPO / "CMakeLists.txt", REPO / "cmake/tvm.cmake",
                 REPO / "lib/crt/ports/zephyr/platform_zephyr.c",
                 REPO / "samples/utvm_inference/src/main.c"]:
        used |= set(re.findall(r"CONFIG_(TVM\w*)", path.read_text()))
    assert used, "no CONFIG_TVM symbols found"
    assert used <= defined, used - defined


# --------------------------------------------------------------------------- C on the host


def _gcc() -> str:
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        pytest.skip("no host C compiler")
    return gcc


CFLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-Wno-unused-function"]


_LOG = ["-DCONFIG_LOG=1", "-DCONFIG_TVM_LOG_LEVEL=3"]  # Kconfig: TVM_LOG_LEVEL needs LOG


@pytest.mark.parametrize("defines", [
    [],
    _LOG,
    [*_LOG, "-DCONFIG_TVM_ABORT_PANIC=1", "-DCONFIG_TVM_STACK_CHECK=1"],
])
def test_zephyr_port_compiles(tmp_path: Path, defines: list[str]) -> None:
    """lib/crt/ports/zephyr against host stand-ins of Zephyr's headers, warnings as errors."""
    cmd = [_gcc(), *CFLAGS, "-DCONFIG_TVM_LOG_LINE_SIZE=128",
           *defines, f"-I{HOST_STUBS}", f"-I{CRT / 'include'}", "-c",
           str(CRT / "ports/zephyr/platform_zephyr.c"), "-o", str(tmp_path / "p.o")]
    r = _run(cmd)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("defines", [[], _LOG])
def test_ztest_suite_on_host(tmp_path: Path, defines: list[str]) -> None:
    """tests/zephyr/crt against the real lib/crt core and Zephyr port, with host stand-ins
    of ztest and the kernel."""
    exe = tmp_path / "crt_tests"
    cmd = [_gcc(), *CFLAGS, "-DCONFIG_TVM_LOG_LINE_SIZE=128", *defines, f"-I{HOST_STUBS}",
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


# --------------------------------------------------------------------------- CMake


def _cmake() -> str:
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.skip("cmake is not installed")
    return cmake


def test_cmake_options_stamp_changes_only_with_the_options(tmp_path: Path) -> None:
    """Configuring writes the compiler's command line to a stamp that the custom command
    depends on; it is rewritten only when the command line changes (no compiler needed)."""
    build = tmp_path / "build"
    model = tmp_path / "m.tflite"
    shutil.copy(CMAKE_MODEL, model)
    configure = [_cmake(), "-S", str(REPO / "tests/cmake"), "-B", str(build),
                 f"-DTVM_TEST_MODEL={model}", "-DTVM_TEST_NAME=kws",
                 f"-DPython3_EXECUTABLE={sys.executable}"]
    r = _run(configure)
    assert r.returncode == 0, r.stdout + r.stderr
    stamp = build / "tvm" / "kws.cmdline"
    lines = stamp.read_text().splitlines()
    assert lines[0] == sys.executable
    assert lines[1:4] == ["-m", "utvm", "compile"]
    assert str(model) in lines and "--name" in lines
    first = stamp.stat().st_mtime_ns
    time.sleep(1.1)
    assert _run(configure).returncode == 0
    assert stamp.stat().st_mtime_ns == first
    assert _run([*configure, "-DTVM_TEST_OPTIONS=--foo;bar"]).returncode == 0
    assert stamp.stat().st_mtime_ns > first
    assert stamp.read_text().splitlines()[-2:] == ["--foo", "bar"]


@pytest.mark.parametrize(("call", "message"), [
    ("tvm_add_model(NAME m MODEL {model})", "TARGET is required outside Zephyr"),
    ("tvm_add_model(NAME 1m MODEL {model} TARGET t)", "NAME must be a C identifier"),
    ("tvm_add_model(NAME m MODEL /no/such.tflite TARGET t)", "model file not found"),
    ("tvm_add_model(NAME m MODEL {model} TARGET t RUNTIME nope)", "no runtime port 'nope'"),
    ("tvm_add_model(NAME m MODEL {model} TARGET t BOGUS 1)", "unknown arguments: BOGUS"),
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
    shutil.copytree(REPO / "tests/cmake", root / "tests/cmake")
    pkg = root / "scripts" / "utvm"
    (pkg / "zephyr").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    shutil.copy(REPO / "scripts/utvm/errors.py", pkg / "errors.py")
    shutil.copy(REPO / "tests/cmake/stand_in/fake_compile.py", pkg / "__main__.py")
    for name in ("__init__.py", "testdata.py"):
        shutil.copy(REPO / "scripts/utvm/zephyr" / name, pkg / "zephyr" / name)
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
                 f"-DTVM_TEST_MODEL={model}", "-DTVM_TEST_NAME=kws",
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
    r = _run([*configure, "-DTVM_TEST_OPTIONS=--fast"])
    assert r.returncode == 0, r.stderr
    assert build_and_count() == 3  # the options changed
    assert calls.read_text().splitlines()[-1].endswith("--fast")
    assert _run([str(build / "model_host")]).returncode == 0
    # A failed compile leaves no completion stamp, so the next build runs it again.
    (build / "tvm" / "kws" / ".tvm-done").unlink()
    assert build_and_count() == 4
    # CPU goes to a compiler whose --help lists --cpu; POOL_SECTION to the executor's build.
    r = _run([*configure, "-DTVM_TEST_OPTIONS=", "-DTVM_TEST_CPU=cortex-m4",
              "-DTVM_TEST_POOL_SECTION=.tvm_pool", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"])
    assert r.returncode == 0, r.stderr
    assert build_and_count() == 5
    assert calls.read_text().splitlines()[-1].endswith("--cpu cortex-m4")
    commands = json.loads((build / "compile_commands.json").read_text())
    lib1 = [c["command"] for c in commands if c["file"].endswith("kws_lib1.c")]
    assert lib1 and 'UTVM_POOL_SECTION=\\".tvm_pool\\"' in lib1[0], lib1


#: The shared model the real CMake project compiles: MLPerf Tiny's anomaly detection model,
#: the quickest of the four to compile (a few seconds), so that rebuilding is cheap to test.
REAL_MODEL = MODELS / "ad01_int8.tflite"


@pytest.fixture(scope="session")
def cmake_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/cmake configured and built once: tvm_add_model() runs the real compiler."""
    reason = _compiler_missing()
    if reason:
        pytest.skip(reason)
    if not REAL_MODEL.is_file():
        pytest.skip(f"{REAL_MODEL} is not there (shared/ beside the repository)")
    work = tmp_path_factory.mktemp("cmake")
    model = work / REAL_MODEL.name
    shutil.copy(REAL_MODEL, model)
    build = work / "build"
    r = _run([_cmake(), "-S", str(REPO / "tests/cmake"), "-B", str(build),
              f"-DTVM_TEST_MODEL={model}", "-DTVM_TEST_NAME=ad01",
              "-DTVM_TEST_POOL_SECTION=.tvm_pool_test",
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
    model = MODELS / "kws_ref_model.tflite"
    if not model.is_file():
        pytest.skip(f"{model} is not there (shared/ beside the repository)")
    build = tmp_path / "build"
    r = _run([_cmake(), "-S", str(REPO / "tests/cmake"), "-B", str(build), f"-DTVM_TEST_MODEL={model}",
              "-DTVM_TEST_NAME=kws", "-DTVM_TEST_OFFLOAD=plain-c", f"-DPython3_EXECUTABLE={sys.executable}"])
    assert r.returncode == 0, r.stdout + r.stderr
    r = _run([_cmake(), "--build", str(build)])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "kws_plain_c.c" in (build / "tvm_vars.txt").read_text()
    r = _run([str(build / "model_host")])
    assert r.returncode == 0 and r.stdout.rstrip().endswith("PASS"), r.stdout + r.stderr
    assert "utvm_plainc_avgpool_s8" in _run(["nm", str(build / "model_host")]).stdout


def test_cmake_offload_errors(tmp_path: Path) -> None:
    reason = _compiler_missing()
    if reason:
        pytest.skip(reason)
    model = MODELS / "ad01_int8.tflite"
    for offload, message in (("nope", "unknown OFFLOAD module 'nope'"), ("cmsis-nn", "CMSIS_NN_DIR")):
        r = _run([_cmake(), "-S", str(REPO / "tests/cmake"), "-B", str(tmp_path / offload),
                  f"-DTVM_TEST_MODEL={model}", f"-DTVM_TEST_OFFLOAD={offload}",
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
    assert "CONFIG_TVM=y" in config
