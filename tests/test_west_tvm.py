"""`west tvm` in a real west workspace made in a temporary directory.

The workspace's manifest lists this repository (symlinked in) as a project without imports,
so west loads the extension offline, without Zephyr. What needs Zephyr (building the sample
for a board) runs only where ZEPHYR_BASE is set.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from utvm.errors import UtvmError
from utvm.run import elfreport
from utvm.zephyr import build as zbuild
from utvm.zephyr import report

REPO = Path(__file__).resolve().parents[1]
KWS = REPO / "samples/utvm_inference/model/kws_ref_model.tflite"  # the sample's copy
ZEPHYR_BASE = os.environ.get("ZEPHYR_BASE")

_MANIFEST = """\
manifest:
  projects:
    - name: utvm
      url: https://example.invalid/utvm
      path: utvm
      west-commands: west-commands/west-commands.yml
  self:
    path: manifest
"""


def _compiler_missing() -> str | None:
    try:
        from utvm import cli
    except ImportError as e:
        return f"the utvm compiler is not importable yet (utvm.cli: {e})"
    for name in ("add_compile_arguments", "add_run_arguments", "cmd_compile", "cmd_run"):
        if not hasattr(cli, name):
            return f"utvm.cli has no {name} yet"
    return None


@pytest.fixture(scope="session")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("west") is None and not _has_west_module():
        pytest.skip("west is not installed")
    top = tmp_path_factory.mktemp("ws")
    (top / "manifest").mkdir()
    (top / "manifest" / "west.yml").write_text(_MANIFEST)
    (top / "utvm").symlink_to(REPO, target_is_directory=True)
    r = subprocess.run([sys.executable, "-m", "west", "init", "-l", "manifest"], cwd=top,
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    return top


def _has_west_module() -> bool:
    try:
        import west  # noqa: F401
    except ImportError:
        return False
    return True


def west(ws: Path, *args: str, env: dict[str, str] | None = None,
         timeout: float = 900) -> subprocess.CompletedProcess[str]:
    environ = dict(os.environ if env is None else env)
    # The extension puts scripts/ on sys.path itself; a PYTHONPATH must not be needed.
    environ.pop("PYTHONPATH", None)
    return subprocess.run([sys.executable, "-m", "west", *args], cwd=ws, env=environ,
                          capture_output=True, text=True, timeout=timeout, check=False)


def _without_zephyr() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("ZEPHYR_BASE", None)
    return env


def _error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


# --------------------------------------------------------------------------- no compiler


def test_help(workspace: Path) -> None:
    r = west(workspace, "tvm", "--help")
    assert r.returncode == 0, r.stderr
    for sub in ("compile", "build", "run", "report"):
        assert sub in r.stdout
    r = west(workspace, "help")
    assert "tvm" in r.stdout
    r = west(workspace, "tvm", "build", "--help")
    assert r.returncode == 0 and "--board" in r.stdout


def test_build_without_zephyr_base_fails_with_one_line(workspace: Path) -> None:
    r = west(workspace, "tvm", "build", "-b", "mps2/an385", "--model", str(KWS),
             env=_without_zephyr())
    assert r.returncode != 0
    lines = _error_lines(r.stderr)
    assert len(lines) == 1, r.stderr
    assert "ZEPHYR_BASE is not set" in lines[0]
    assert "Traceback" not in r.stderr + r.stdout


def test_build_needs_a_board(workspace: Path) -> None:
    r = west(workspace, "tvm", "build", env=_without_zephyr())
    assert r.returncode != 0
    assert "-b/--board" in r.stderr


def test_build_with_a_zephyr_base_outside_the_workspace_runs_cmake(
        workspace: Path, tmp_path: Path) -> None:
    """ZEPHYR_BASE set, but no zephyr project in the workspace (so no `west build`):
    west tvm build configures with CMake directly. The stand-in tree has no CMake package,
    so configuring fails, after the command was composed and run."""
    tree = tmp_path / "zephyr"
    (tree / "cmake").mkdir(parents=True)
    (tree / "Kconfig.zephyr").write_text("")
    env = dict(os.environ, ZEPHYR_BASE=str(tree))
    build = tmp_path / "build"
    r = west(workspace, "tvm", "build", "-b", "qemu_cortex_m3", "-d", str(build), env=env)
    assert r.returncode != 0
    assert f"running: cmake -S {zbuild.DEFAULT_APP} -B {build} -DBOARD=qemu_cortex_m3" in r.stdout
    assert "cmake exited with code" in r.stderr


def test_report_without_an_image_fails_with_one_line(workspace: Path, tmp_path: Path) -> None:
    r = west(workspace, "tvm", "report", "-d", str(tmp_path / "nothing"))
    assert r.returncode != 0
    lines = _error_lines(r.stderr)
    assert len(lines) == 1 and "no image at" in lines[0], r.stderr


def test_unknown_arguments_are_refused_except_for_build(workspace: Path) -> None:
    r = west(workspace, "tvm", "report", "--bogus")
    assert r.returncode != 0
    assert "unrecognized arguments: --bogus" in r.stderr


# --------------------------------------------------------------------------- build.py


def test_west_build_command(tmp_path: Path) -> None:
    model = tmp_path / "my-model.tflite"
    model.write_bytes(b"x")
    west_args, cmake_args = zbuild.split_passthrough(["-p", "always", "--", "-DCONFIG_X=y"])
    req = zbuild.BuildRequest(board="mps2/an385", build_dir=Path("b"), model=model,
                              west_args=west_args, cmake_args=cmake_args)
    cmd = zbuild.west_build_command(req, ["west"])
    assert cmd[:6] == ["west", "build", "-b", "mps2/an385", "-d", "b"]
    assert cmd[6:9] == ["-p", "always", str(zbuild.DEFAULT_APP)]
    assert cmd[9] == "--"
    assert cmd[10:] == [f"-DTVM_MODEL={model.resolve().as_posix()}",
                        "-DTVM_MODEL_NAME=my_model", "-DCONFIG_X=y"]
    req.target = "run"
    req.model = None
    req.west_args = []
    req.cmake_args = []
    assert zbuild.west_build_command(req, ["west"]) == [
        "west", "build", "-b", "mps2/an385", "-d", "b", "-t", "run", str(zbuild.DEFAULT_APP)]


def test_cmake_commands(tmp_path: Path) -> None:
    req = zbuild.BuildRequest(board="native_sim", build_dir=tmp_path / "b", target="run",
                              cmake_args=["-DFOO=1"])
    configure, build = zbuild.cmake_commands(req, Path("/z"), generator="Ninja")
    assert configure[:3] == ["cmake", "-S", str(zbuild.DEFAULT_APP)]
    assert "-DBOARD=native_sim" in configure and "-DZEPHYR_BASE=/z" in configure
    assert configure[-1] == "-DFOO=1"
    assert build == ["cmake", "--build", str(tmp_path / "b"), "--target", "run"]
    req.west_args = ["-p", "always"]
    with pytest.raises(UtvmError, match="need `west build`"):
        zbuild.cmake_commands(req, Path("/z"))


def test_build_request_errors(tmp_path: Path) -> None:
    req = zbuild.BuildRequest(board="b", model=tmp_path / "none.tflite")
    with pytest.raises(UtvmError, match="model file not found"):
        zbuild.west_build_command(req, ["west"])
    req = zbuild.BuildRequest(board="b", app=tmp_path)
    with pytest.raises(UtvmError, match="not a Zephyr application"):
        zbuild.west_build_command(req, ["west"])


def test_find_zephyr_base(tmp_path: Path) -> None:
    assert zbuild.find_zephyr_base({}) is None
    tree = tmp_path / "zephyr"
    (tree / "cmake").mkdir(parents=True)
    (tree / "Kconfig.zephyr").write_text("")
    assert zbuild.find_zephyr_base({"ZEPHYR_BASE": str(tree)}) == tree.resolve()
    assert zbuild.find_zephyr_base({}, workspace_zephyr=tree) == tree.resolve()
    assert zbuild.find_zephyr_base({}, config_base="zephyr", topdir=tmp_path) == tree.resolve()
    with pytest.raises(UtvmError, match="not a Zephyr tree"):
        zbuild.find_zephyr_base({"ZEPHYR_BASE": str(tmp_path / "nope")})
    assert zbuild.uses_zephyr("mps2/an385", tree)
    assert not zbuild.uses_zephyr("host", tree)
    assert not zbuild.uses_zephyr("mps2/an385", None)
    assert not zbuild.uses_zephyr("mps2/an385", tree, baremetal=True)


def test_run_until_verdict_stops_the_emulator(tmp_path: Path) -> None:
    """As `west build -t run` on QEMU: output, a verdict, then the process never exits."""
    script = tmp_path / "fake_qemu.sh"
    script.write_text("#!/bin/sh\necho booting\necho 'utvm_inference: PASS'\nsleep 300 &\n"
                      "wait\n")
    script.chmod(0o755)
    lines: list[str] = []
    assert zbuild.run_until_verdict([str(script)], echo=lines.append) == 0
    assert lines == ["booting", "utvm_inference: PASS"]
    script.write_text("#!/bin/sh\necho 'utvm_inference: FAIL'\nsleep 300\n")
    assert zbuild.run_until_verdict([str(script)], echo=lines.append) == 1
    script.write_text("#!/bin/sh\necho no verdict\nexit 3\n")
    assert zbuild.run_until_verdict([str(script)], echo=lines.append) == 3
    script.write_text("#!/bin/sh\nexit 0\n")
    assert zbuild.run_until_verdict([str(script)], echo=lines.append) == 1


def test_model_name() -> None:
    assert zbuild.model_name(Path("kws_ref_model.tflite")) == "kws_ref_model"
    assert zbuild.model_name(Path("/x/my-net.v2.onnx")) == "my_net_v2"
    assert zbuild.model_name(Path("3d.tflite")) == "m_3d"


def test_offload_cmake_args() -> None:
    assert zbuild.offload_cmake_args([]) == []
    assert zbuild.offload_cmake_args(["plain-c", "cmsis-nn", "plain-c"]) == [
        "-DCONFIG_TVM_OFFLOAD_PLAIN_C=y", "-DCONFIG_CMSIS_NN=y", "-DCONFIG_TVM_OFFLOAD_CMSIS_NN=y"]


def test_regions_from_config(tmp_path: Path) -> None:
    cfg = tmp_path / ".config"
    cfg.write_text('CONFIG_BOARD="mps2"\nCONFIG_BOARD_TARGET="mps2/an385"\nCONFIG_XIP=y\n'
                   "CONFIG_FLASH_BASE_ADDRESS=0x0\nCONFIG_FLASH_SIZE=4096\n"
                   "CONFIG_SRAM_BASE_ADDRESS=0x20000000\nCONFIG_SRAM_SIZE=4096\n"
                   "# CONFIG_TVM_PROFILE is not set\n")
    config = report.read_config(cfg)
    board = report.regions_from_config(config)
    assert board is not None and board.name == "mps2/an385"
    assert board.flash.origin == 0 and board.flash.size == 4 << 20
    assert board.ram.origin == 0x2000_0000 and board.ram.size == 4 << 20
    del config["CONFIG_XIP"]
    assert report.regions_from_config(config) is None  # code runs from RAM: no flash split
    assert report.regions_from_config({"CONFIG_BOARD": "native_sim"}) is None


_FAKE_MODEL_C = """
#include <stdint.h>
#include <string.h>
const uint8_t tvmgen_fake_weights[4096] = {1, 2, 3};
uint8_t tvmgen_fake_global_workspace_pool[2048];
int32_t __tvm_ffi_tvmgen_fake_add_0(const uint8_t* in, uint8_t* out) {
  out[0] = (uint8_t)(tvmgen_fake_weights[in[0]] + tvmgen_fake_global_workspace_pool[1]);
  out[1] = (uint8_t)(in[2] * in[3] + in[4]);
  return 0;
}
int32_t tvmgen_fake_run(const uint8_t* in, uint8_t* out) {
  memcpy(tvmgen_fake_global_workspace_pool, in, 16);
  return __tvm_ffi_tvmgen_fake_add_0(in, out);
}
const struct { const char* name; int32_t (*run)(const uint8_t*, uint8_t*); }
    tvmgen_fake_model = {"fake", tvmgen_fake_run};
int main(int argc, char** argv) {
  uint8_t in[16] = {0}, out[2];
  (void)argv;
  in[0] = (uint8_t)argc;
  return tvmgen_fake_model.run(in, out) + out[0] - 2;
}
"""


def test_report_on_a_small_image(workspace: Path, tmp_path: Path) -> None:
    """west tvm report on a host ELF with a stand-in model (no compiler needed)."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("no gcc")
    (tmp_path / "fake.c").write_text(_FAKE_MODEL_C)
    elf = tmp_path / "fake.elf"
    r = subprocess.run([gcc, "-O1", str(tmp_path / "fake.c"), "-o", str(elf)],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    r = west(workspace, "tvm", "report", "--elf", str(elf), "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["regions"] == "elf"
    (model,) = data["models"]
    assert model["name"] == "fake"
    assert model["flash"]["constants"] >= 4096
    kernel = elfreport.model_symbols(elf, "tvmgen_fake_").find("__tvm_ffi_tvmgen_fake_add_0")
    assert kernel is not None and kernel.kind == "code"  # the kernel counts as the model's code
    assert model["flash"]["code"] > kernel.size > 0
    assert model["ram"]["pool"] == 2048
    assert model["constants_in_flash"] and model["pool_in_ram"]
    r = west(workspace, "tvm", "report", "--elf", str(elf), "--name", "nope")
    assert r.returncode != 0 and "no symbols of a model named 'nope'" in r.stderr


# --------------------------------------------------------------------------- with the compiler


@pytest.fixture(scope="session")
def compiled_kws(workspace: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`west tvm compile` of the KWS model, shared by the tests below."""
    reason = _compiler_missing()
    if reason:
        pytest.skip(reason)
    out = tmp_path_factory.mktemp("west-compile") / "kws"
    r = west(workspace, "tvm", "compile", str(KWS), "--name", "kws", "-o", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    return out


def test_compile(compiled_kws: Path) -> None:
    meta = json.loads((compiled_kws / "metadata.json").read_text())
    assert meta["version"] == 7
    assert "kws" in meta["modules"]
    header = (compiled_kws / "codegen/host/include/tvmgen_kws.h").read_text()
    assert "TVMGEN_KWS_WORKSPACE_SIZE" in header
    assert sorted(p.name for p in (compiled_kws / "codegen/host/src").glob("*.c")) == [
        "kws_lib0.c", "kws_lib1.c", "kws_lib2.c"]


def test_compile_with_offload(workspace: Path, tmp_path: Path) -> None:
    """west tvm compile passes --offload on: the glue and the module's library are in the MLF."""
    reason = _compiler_missing()
    if reason:
        pytest.skip(reason)
    out = tmp_path / "kws"
    r = west(workspace, "tvm", "compile", str(KWS), "--name", "kws", "-o", str(out), "--offload", "plain-c")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "offloaded        1 to plain-c" in r.stdout
    assert (out / "codegen/plain_c/src/kws_plain_c.c").is_file()
    assert "tvmgen_kws_plain_c_avg_pool2d" in (out / "codegen/host/src/kws_lib1.c").read_text()


def test_compile_errors_are_one_line(workspace: Path, tmp_path: Path) -> None:
    reason = _compiler_missing()
    if reason:
        pytest.skip(reason)
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"not a model")
    r = west(workspace, "tvm", "compile", str(bad), "--name", "bad", "-o", str(tmp_path / "o"))
    assert r.returncode != 0
    assert "Traceback" not in r.stderr
    assert len(_error_lines(r.stderr)) == 1, r.stderr


def test_run_on_host(workspace: Path) -> None:
    reason = _compiler_missing()
    if reason:
        pytest.skip(reason)
    r = west(workspace, "tvm", "run", "--board", "host", str(KWS), env=_without_zephyr())
    assert r.returncode == 0, r.stdout + r.stderr


def test_report_on_a_host_image(compiled_kws: Path, workspace: Path, tmp_path: Path) -> None:
    """Link the compiled model into a host program and report on its ELF."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("no gcc")
    main = tmp_path / "main.c"
    main.write_text('#include "tvmgen_kws.h"\n'
                    "int main(void) { return tvmgen_kws_model.num_inputs == 1 ? 0 : 1; }\n")
    elf = tmp_path / "app.elf"
    platform = sorted((compiled_kws / "runtime/ports/host").glob("platform_*.c"))
    srcs = [main, *sorted((compiled_kws / "codegen/host/src").glob("*.c")),
            *sorted((compiled_kws / "runtime/src").glob("*.c")), *platform]
    r = subprocess.run([gcc, "-std=c99", "-O1", f"-I{compiled_kws / 'codegen/host/include'}",
                        f"-I{compiled_kws / 'runtime/include'}", *map(str, srcs), "-lm",
                        "-o", str(elf)], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    r = west(workspace, "tvm", "report", "--elf", str(elf), "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    (model,) = data["models"]
    assert model["name"] == "kws"
    assert model["flash"]["code"] > 0
    assert model["flash"]["constants"] > 10_000  # KWS has 24 KB of int8 weights
    assert model["constants_in_flash"] is True
    assert model["ram"]["pool"] > 0 and model["pool_in_ram"] is True
    r = west(workspace, "tvm", "report", "--elf", str(elf))
    assert r.returncode == 0, r.stderr
    assert "kws" in r.stdout and "constants in flash" in r.stdout


_ZEPHYR_CONFIG = """\
CONFIG_BOARD="mps2"
CONFIG_BOARD_TARGET="mps2/an385"
CONFIG_XIP=y
CONFIG_FLASH_BASE_ADDRESS=0x0
CONFIG_FLASH_SIZE=4096
CONFIG_SRAM_BASE_ADDRESS=0x20000000
CONFIG_SRAM_SIZE=4096
"""


def test_report_on_a_cortex_m_build_dir(compiled_kws: Path, workspace: Path,
                                        tmp_path: Path) -> None:
    """A Cortex-M3 image laid out like a Zephyr build directory (zephyr/zephyr.elf and
    zephyr/.config): flash and RAM come from the .config, constants must be in flash."""
    gcc = shutil.which("arm-none-eabi-gcc")
    if gcc is None:
        pytest.skip("arm-none-eabi-gcc is not installed")
    main = tmp_path / "main.c"
    main.write_text('#include "tvmgen_kws.h"\n'
                    "int main(void) { return tvmgen_kws_model.num_inputs == 1 ? 0 : 1; }\n")
    build = tmp_path / "build"
    (build / "zephyr").mkdir(parents=True)
    (build / "zephyr" / ".config").write_text(_ZEPHYR_CONFIG)
    srcs = [main, *sorted((compiled_kws / "codegen/host/src").glob("*.c")),
            compiled_kws / "runtime/src/backend.c",
            compiled_kws / "runtime/ports/baremetal/platform_baremetal.c"]
    r = subprocess.run(
        [gcc, "-mcpu=cortex-m3", "-mthumb", "-O2", "-std=c99", "--specs=picolibc.specs",
         "--oslib=semihost", "-ffunction-sections", "-fdata-sections", "-Wl,--gc-sections",
         "-Wl,--defsym=__flash=0x0,--defsym=__flash_size=0x400000",
         "-Wl,--defsym=__ram=0x20000000,--defsym=__ram_size=0x400000",
         f"-I{compiled_kws / 'codegen/host/include'}", f"-I{compiled_kws / 'runtime/include'}",
         *map(str, srcs), "-lm", "-o", str(build / "zephyr" / "zephyr.elf")],
        capture_output=True, text=True, check=False)
    if r.returncode != 0 and "picolibc" in r.stderr:
        pytest.skip("picolibc for arm-none-eabi is not installed")
    assert r.returncode == 0, r.stderr
    r = west(workspace, "tvm", "report", "-d", str(build), "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["regions"] == "config" and data["board"] == "mps2/an385"
    (model,) = data["models"]
    assert model["constants_in_flash"] and model["pool_in_ram"], model["problems"]
    assert model["flash"]["constants"] >= 24_376  # the KWS weights
    assert model["ram"]["pool"] == data["image"]["ram_pool"] > 0
    r = west(workspace, "tvm", "report", "-d", str(build))
    assert r.returncode == 0, r.stderr
    assert "flash/RAM from Zephyr .config" in r.stdout


def test_sample_main_on_host(compiled_kws: Path, tmp_path: Path) -> None:
    """samples/utvm_inference/src/main.c and the Zephyr port, built on the host against
    stand-ins of Zephyr's headers (tests/zephyr/host), with the KWS model compiled above and
    the test data header the sample's build makes: it prints PASS (outputs equal TFLite
    Micro's)."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("no gcc")
    testdata = tmp_path / "testdata"
    r = subprocess.run([sys.executable, "-m", "utvm.zephyr.testdata", str(KWS), "--name", "kws",
                        "-o", str(testdata / "tvmgen_kws_testdata.h")],
                       capture_output=True, text=True, check=False,
                       env=dict(os.environ, PYTHONPATH=str(REPO / "scripts")))
    assert r.returncode == 0, r.stderr
    crt = REPO / "lib/crt"
    stubs = REPO / "tests/zephyr/host"
    flags = [
        "-DUTVM_SAMPLE_MODEL=kws", "-DUTVM_SAMPLE_MODEL_UPPER=KWS",
        '-DUTVM_SAMPLE_MODEL_H="tvmgen_kws.h"', '-DUTVM_SAMPLE_TESTDATA_H="tvmgen_kws_testdata.h"',
        "-DCONFIG_LOG=1", "-DCONFIG_TVM_LOG_LEVEL=3", "-DCONFIG_TVM_LOG_LINE_SIZE=128",
        "-DCONFIG_TVM_WORKSPACE_CHECK=1", "-DCONFIG_TVM_STACK_CHECK=1", "-DCONFIG_TVM_PROFILE=1",
        "-DUTVM_PROFILE=1", f"-I{stubs}", f"-I{crt / 'include'}", f"-I{crt / 'ports/zephyr'}",
        f"-I{compiled_kws / 'codegen/host/include'}", f"-I{testdata}",
    ]
    objs = []
    for src in (REPO / "samples/utvm_inference/src/main.c", crt / "ports/zephyr/platform_zephyr.c"):
        obj = tmp_path / f"{src.stem}.o"
        r = subprocess.run([gcc, "-std=c99", "-Wall", "-Wextra", "-Werror", *flags, "-c",
                            str(src), "-o", str(obj)], capture_output=True, text=True, check=False)
        assert r.returncode == 0, r.stderr
        objs.append(str(obj))
    others = [*sorted((compiled_kws / "codegen/host/src").glob("*.c")),
              *sorted((crt / "src").glob("*.c")), stubs / "zephyr_host.c"]
    exe = tmp_path / "sample"
    r = subprocess.run([gcc, "-std=c99", "-O1", *flags, *objs, *map(str, others), "-lm", "-o",
                        str(exe)], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([str(exe)], capture_output=True, text=True, check=False, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "utvm_inference: model kws, 1 input(s), 1 output(s), pool" in r.stdout
    assert "cycles per inference" in r.stdout
    assert "utvm_inference: op 0 " in r.stdout  # CONFIG_TVM_PROFILE: per-operator cycles
    assert r.stdout.rstrip().endswith("utvm_inference: PASS"), r.stdout


# --------------------------------------------------------------------------- with Zephyr


@pytest.mark.skipif(not ZEPHYR_BASE, reason="ZEPHYR_BASE is not set: no Zephyr tree to build "
                    "the sample with (CI: .github/workflows/twister.yml)")
def test_build_and_report_with_zephyr(workspace: Path, tmp_path: Path) -> None:
    reason = _compiler_missing()
    if reason:
        pytest.skip(reason)
    build = tmp_path / "build"
    r = west(workspace, "tvm", "build", "-b", "qemu_cortex_m3", "-d", str(build))
    assert r.returncode == 0, r.stdout + r.stderr
    r = west(workspace, "tvm", "report", "-d", str(build), "--json")
    assert r.returncode == 0, r.stderr
    (model,) = json.loads(r.stdout)["models"]
    assert model["name"] == "kws"
    assert model["constants_in_flash"] and model["pool_in_ram"]
