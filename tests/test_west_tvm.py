"""`west tvm` in a real west workspace made in a temporary directory.

The workspace's manifest lists this repository (symlinked in) as a project without imports,
so west loads the extension offline, without Zephyr. What needs Zephyr (building the sample
for a board) runs only where ZEPHYR_BASE is set.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
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
    # without ZEPHYR_BASE: west init would look for a workspace there, find the one around
    # that Zephyr tree and stop ("already initialized")
    r = subprocess.run([sys.executable, "-m", "west", "init", "-l", "manifest"], cwd=top,
                       env=_without_zephyr(), capture_output=True, text=True, check=False)
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
    assert cmd[10:] == [f"-DUTVM_MODEL={model.resolve().as_posix()}",
                        "-DUTVM_MODEL_NAME=my_model", "-DCONFIG_X=y"]
    req.target = "run"
    req.model = None
    req.west_args = []
    req.cmake_args = []
    assert zbuild.west_build_command(req, ["west"]) == [
        "west", "build", "-b", "mps2/an385", "-d", "b", "-t", "run", str(zbuild.DEFAULT_APP)]
    # No -d: west build picks the directory (its build.dir-fmt setting), as west flash will.
    req.build_dir = None
    assert zbuild.west_build_command(req, ["west"]) == [
        "west", "build", "-b", "mps2/an385", "-t", "run", str(zbuild.DEFAULT_APP)]


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


def test_cmake_commands_follow_build_dir_fmt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without -d, the CMake path (a workspace without west build) builds where west's
    build.dir-fmt says, as west flash and west tvm report will look."""
    monkeypatch.chdir(tmp_path)
    req = zbuild.BuildRequest(board="mps2/an385")
    configure, build = zbuild.cmake_commands(req, Path("/z"), dir_fmt="out/{board}/{app}")
    where = tmp_path / "out" / "mps2/an385" / zbuild.DEFAULT_APP.name
    assert configure[configure.index("-B") + 1] == str(where) and build[2] == str(where)
    configure, _ = zbuild.cmake_commands(req, Path("/z"))
    assert configure[configure.index("-B") + 1] == str(tmp_path / "build")
    with pytest.raises(UtvmError, match="give the build directory with -d"):
        zbuild.cmake_commands(req, Path("/z"), dir_fmt="out/{nope}")


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
    # Zephyr runs these only in Arm FVP: utvm's QEMU runner takes them.
    assert not zbuild.uses_zephyr("mps2/an386", tree) and not zbuild.uses_zephyr("mps2/an500", tree)
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
        "-DCONFIG_UTVM_OFFLOAD_PLAIN_C=y", "-DCONFIG_CMSIS_NN=y", "-DCONFIG_UTVM_OFFLOAD_CMSIS_NN=y"]


def test_regions_from_config(tmp_path: Path) -> None:
    cfg = tmp_path / ".config"
    cfg.write_text('CONFIG_BOARD="mps2"\nCONFIG_BOARD_TARGET="mps2/an385"\nCONFIG_XIP=y\n'
                   "CONFIG_FLASH_BASE_ADDRESS=0x0\nCONFIG_FLASH_SIZE=4096\n"
                   "CONFIG_SRAM_BASE_ADDRESS=0x20000000\nCONFIG_SRAM_SIZE=4096\n"
                   "# CONFIG_UTVM_PROFILE is not set\n")
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
/* a kernel the model's source defines itself (static, no model prefix) */
__attribute__((noinline)) static int utvm_dsp_fake_kernel(int v) { return v * 7 + 3; }
int32_t __tvm_ffi_tvmgen_fake_add_0(const uint8_t* in, uint8_t* out) {
  out[0] = (uint8_t)(tvmgen_fake_weights[in[0]] + tvmgen_fake_global_workspace_pool[1]);
  out[0] = (uint8_t)utvm_dsp_fake_kernel(out[0]);
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
    (tmp_path / "fake_lib0.c").write_text(_FAKE_MODEL_C)
    # a static function of the same kind outside the model's files is not the model's (kept in the
    # binary by the global function that calls it)
    (tmp_path / "other.c").write_text("__attribute__((noinline)) static int utvm_dsp_other(int v) { return v * 5; }\n"
                                      "int utvm_elsewhere(int v) { return utvm_dsp_other(v) + 1; }\n")
    elf = tmp_path / "fake.elf"
    r = subprocess.run([gcc, "-O1", str(tmp_path / "fake_lib0.c"), str(tmp_path / "other.c"), "-o", str(elf)],
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
    symbols = elfreport.model_symbols(elf, "tvmgen_fake_")
    static = symbols.find("utvm_dsp_fake_kernel")  # found by its file, fake_lib0.c
    assert static is not None and static.kind == "code" and static.size > 0
    assert symbols.find("utvm_dsp_other") is None and symbols.find("utvm_elsewhere") is None
    assert "utvm_dsp_other" in subprocess.run(["nm", str(elf)], capture_output=True, text=True, check=True).stdout
    assert model["flash"]["code"] == symbols.code_bytes >= kernel.size + static.size
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


def _west_compile(workspace: Path, out: Path, *options: str) -> str:
    """west tvm compile of KWS into ``out`` (named as its last part) with these options; its stdout."""
    reason = _compiler_missing()
    if reason:
        pytest.skip(reason)
    r = west(workspace, "tvm", "compile", str(KWS), "--name", out.name, "-o", str(out), *options)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_compile_with_compat(workspace: Path, tmp_path: Path) -> None:
    """west tvm compile passes --compat on: TVM 0.18's header and system library."""
    out = tmp_path / "default"
    _west_compile(workspace, out, "--compat", "tvm-0.18")
    header = (out / "codegen/host/include/tvmgen_default.h").read_text()
    assert [ln for ln in header.splitlines() if ln.startswith("#include")] == ["#include <stdint.h>"]
    assert "  void* Identity;" in header
    assert "TVMSystemLibEntryPoint" in (out / "codegen/host/src/default_lib3.c").read_text()


def test_compile_with_offload(workspace: Path, tmp_path: Path) -> None:
    """west tvm compile passes --offload on: the glue and the module's library are in the MLF."""
    out = tmp_path / "kws"
    assert "offloaded        1 to plain-c" in _west_compile(workspace, out, "--offload", "plain-c")
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
    (build / "tvm" / "kws").mkdir(parents=True)  # where tvm_add_model() puts the MLF in a build
    shutil.copy(compiled_kws / "metadata.json", build / "tvm" / "kws" / "metadata.json")
    r = west(workspace, "tvm", "report", "-d", str(build), "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["regions"] == "config" and data["board"] == "mps2/an385"
    (model,) = data["models"]
    assert model["constants_in_flash"] and model["pool_in_ram"], model["problems"]
    (pool,) = model["pools"]  # the pool symbol, its output section and address
    assert pool["symbol"] == "tvmgen_kws_pool" and pool["section"] == ".bss" and pool["in_ram"]
    assert [p["size"] for p in model["planned_pools"]] == [model["ram"]["pool"]] and model["patch_plan"] is None
    assert model["flash"]["constants"] >= 24_376  # the KWS weights
    assert model["ram"]["pool"] == data["image"]["ram_pool"] > 0
    r = west(workspace, "tvm", "report", "-d", str(build))
    assert r.returncode == 0, r.stderr
    assert "flash/RAM from Zephyr .config" in r.stdout


def _run_sample_on_host(compiled_kws: Path, tmp_path: Path,
                        edit: Callable[[str], str] | None = None) -> subprocess.CompletedProcess[str]:
    """samples/utvm_inference/src/main.c and the Zephyr port, built on the host against
    stand-ins of Zephyr's headers (tests/zephyr/host), with the KWS model compiled above and
    the test data header the sample's build makes (``edit`` may change its text), then run."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("no gcc")
    testdata = tmp_path / "testdata"
    header = testdata / "tvmgen_kws_testdata.h"
    r = subprocess.run([sys.executable, "-m", "utvm.zephyr.testdata", str(KWS), "--name", "kws",
                        "-o", str(header)],
                       capture_output=True, text=True, check=False,
                       env=dict(os.environ, PYTHONPATH=str(REPO / "scripts")))
    assert r.returncode == 0, r.stderr
    if edit is not None:
        header.write_text(edit(header.read_text()))
    crt = REPO / "lib/crt"
    stubs = REPO / "tests/zephyr/host"
    flags = [
        "-DUTVM_SAMPLE_MODEL=kws", "-DUTVM_SAMPLE_MODEL_UPPER=KWS",
        '-DUTVM_SAMPLE_MODEL_H="tvmgen_kws.h"', '-DUTVM_SAMPLE_TESTDATA_H="tvmgen_kws_testdata.h"',
        "-DCONFIG_LOG=1", "-DCONFIG_UTVM_LOG_LEVEL=3", "-DCONFIG_UTVM_LOG_LINE_SIZE=128",
        "-DCONFIG_UTVM_WORKSPACE_CHECK=1", "-DCONFIG_UTVM_STACK_CHECK=1", "-DCONFIG_UTVM_PROFILE=1",
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
    return subprocess.run([str(exe)], capture_output=True, text=True, check=False, timeout=120)


def test_sample_main_on_host(compiled_kws: Path, tmp_path: Path) -> None:
    """The sample prints PASS: its outputs equal TFLite Micro's."""
    r = _run_sample_on_host(compiled_kws, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "utvm_inference: model kws, 1 input(s), 1 output(s), pool" in r.stdout
    assert re.search(r"utvm_inference: \d+ k_cycle_get_32 ticks per inference", r.stdout), r.stdout
    assert "utvm_inference: op 0 " in r.stdout  # CONFIG_UTVM_PROFILE: per-operator cycles
    assert r.stdout.rstrip().endswith("utvm_inference: PASS"), r.stdout


def test_sample_ends_a_failed_run_the_way_twister_sees_at_once(compiled_kws: Path, tmp_path: Path) -> None:
    """A wrong output ends with FAIL and twister's failure marker (twisterlib/harness.py:
    RUN_FAILED stops the run), not a timeout."""
    def corrupt(text: str) -> str:
        start = text.index("tvmgen_kws_test_output0")
        return text[:start] + re.sub(r"0x[0-9a-f]{2}", "0x00", text[start:], count=4)

    r = _run_sample_on_host(compiled_kws, tmp_path, corrupt)
    assert r.returncode == 1
    lines = r.stdout.rstrip().splitlines()
    assert lines[-2:] == ["utvm_inference: FAIL", "PROJECT EXECUTION FAILED"], r.stdout
    assert any(line.startswith("expected 0 (") for line in lines)


def test_sample_without_a_reference_says_so(compiled_kws: Path, tmp_path: Path, no_tflite_micro: None) -> None:
    """Built where tflite-micro is missing: the test data has the input only, the sample
    still builds and runs, and says in one line that it could not check its outputs."""
    from utvm.zephyr import testdata

    vectors = testdata.reference(KWS)
    assert vectors.outputs == [] and vectors.output_bytes == [12]
    text = testdata.render_header("kws", vectors, KWS, 0)
    assert "#define TVMGEN_KWS_TEST_HAS_REFERENCE 0" in text
    r = _run_sample_on_host(compiled_kws, tmp_path, lambda _: text)
    assert r.returncode == 0
    notes = [line for line in r.stdout.splitlines() if "not checked" in line]
    assert notes == ["utvm_inference: outputs not checked: no reference output (tflite-micro was "
                     "not installed where the sample was built)", "utvm_inference: PASS (outputs not checked)"]
    assert "FAIL" not in r.stdout


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


# --------------------------------------------------------------------------- workspace, build dirs


def test_version(workspace: Path) -> None:
    r = west(workspace, "tvm", "--version")
    assert r.returncode == 0, r.stderr
    assert re.fullmatch(r"utvm \S+ \(Apache TVM \S+\)", r.stdout.strip()), r.stdout
    r = subprocess.run([sys.executable, "-m", "utvm", "--version"], capture_output=True, text=True,
                       check=False, env=dict(os.environ, PYTHONPATH=str(REPO / "scripts")))
    assert r.returncode == 0 and r.stdout.strip().startswith("utvm "), r.stderr


def _zephyr_build_dir(path: Path) -> Path:
    """A directory west's build helpers take for a Zephyr build (a CMake cache naming the
    toolchain variant)."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "CMakeCache.txt").write_text("ZEPHYR_TOOLCHAIN_VARIANT:STRING=zephyr\n")
    return path


def test_find_build_dir_follows_west(tmp_path: Path) -> None:
    assert zbuild.find_build_dir(Path("given"), "b/{board}", tmp_path) == Path("given")
    assert zbuild.find_build_dir(None, None, tmp_path) == tmp_path / "build"
    fmt = "build/{board}/{app}"
    assert zbuild.find_build_dir(None, fmt, tmp_path, board="mps2/an385", app="utvm_inference") == \
        tmp_path / "build/mps2/an385/utvm_inference"
    _zephyr_build_dir(tmp_path / "cwd")
    assert zbuild.find_build_dir(None, fmt, tmp_path / "cwd") == tmp_path / "cwd"  # in a build dir
    with pytest.raises(UtvmError, match="build.dir-fmt"):
        zbuild.find_build_dir(None, fmt, tmp_path)


def test_sysbuild_image_is_the_default_domains(tmp_path: Path) -> None:
    """With sysbuild the application's image is in its domain's directory: the same one
    Zephyr's own domains helper ($ZEPHYR_BASE/scripts/pylib/build_helpers/domains.py, when
    ZEPHYR_BASE is set) reads from domains.yaml."""
    build = tmp_path / "build"
    build.mkdir()
    (build / "domains.yaml").write_text(
        "default: utvm_inference\nbuild_dir: .\ndomains:\n"
        "  - name: mcuboot\n    build_dir: mcuboot\n"
        "  - name: utvm_inference\n    build_dir: utvm_inference\n"
        "flash_order:\n  - mcuboot\n  - utvm_inference\n")
    elf = zbuild.image_elf(build)
    assert elf == build / "utvm_inference" / "zephyr" / "zephyr.elf"
    assert zbuild.image_elf(tmp_path) == tmp_path / "zephyr" / "zephyr.elf"  # no sysbuild
    helpers = Path(os.environ.get("ZEPHYR_BASE") or "/nonexistent") / "scripts/pylib/build_helpers"
    if (helpers / "domains.py").is_file():
        sys.path.insert(0, str(helpers))
        try:
            from domains import Domains
        finally:
            sys.path.remove(str(helpers))
        domain = Domains.from_file(str(build / "domains.yaml")).get_default_domain()
        # a domain's build_dir as written (3.4 keeps it relative to the top build directory)
        assert (build / domain.build_dir).resolve() == elf.parent.parent.resolve()


def test_report_follows_build_dir_fmt_and_sysbuild(workspace: Path, tmp_path: Path) -> None:
    """west tvm report without -d reads west's build.dir-fmt, and a sysbuild layout."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("no gcc")
    cwd = Path(tempfile.mkdtemp(prefix="report-", dir=workspace))  # inside the workspace
    app_dir = _zephyr_build_dir(cwd / "out" / "kws_app")
    (app_dir.parent / "domains.yaml").write_text(
        f"default: kws_app\nbuild_dir: {app_dir.parent}\ndomains:\n"
        f"  - name: kws_app\n    build_dir: {app_dir}\n")
    (app_dir / "zephyr").mkdir()
    (tmp_path / "fake.c").write_text(_FAKE_MODEL_C)
    r = subprocess.run([gcc, "-O1", str(tmp_path / "fake.c"), "-o", str(app_dir / "zephyr" / "zephyr.elf")],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    config = subprocess.run([sys.executable, "-m", "west", "config", "--local", "build.dir-fmt", "out"],
                            cwd=workspace, env=env, capture_output=True, text=True, check=False)
    assert config.returncode == 0, config.stderr
    try:
        r = subprocess.run([sys.executable, "-m", "west", "tvm", "report", "--json"], cwd=cwd, env=env,
                           capture_output=True, text=True, check=False, timeout=300)
    finally:
        subprocess.run([sys.executable, "-m", "west", "config", "--local", "-d", "build.dir-fmt"],
                       cwd=workspace, env=env, capture_output=True, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(r.stdout)["elf"] == str(app_dir / "zephyr" / "zephyr.elf")


def test_utvm_info_says_what_the_workspace_lacks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A workspace that lists utvm as an ordinary project (no west-commands) has no
    `west tvm`: west only says "unknown command"; `utvm info` names the missing line."""
    from utvm.zephyr.workspace import WEST_COMMANDS_LINE, check

    # west's topdir search falls back on ZEPHYR_BASE's workspace outside a workspace
    monkeypatch.delenv("ZEPHYR_BASE", raising=False)

    top = tmp_path / "ws"
    (top / "manifest").mkdir(parents=True)
    (top / "manifest" / "west.yml").write_text(_MANIFEST.replace(
        "      west-commands: west-commands/west-commands.yml\n", ""))
    (top / "utvm").symlink_to(REPO, target_is_directory=True)
    env = _without_zephyr()  # else west looks for the workspace around ZEPHYR_BASE (see workspace)
    env.pop("PYTHONPATH", None)
    r = subprocess.run([sys.executable, "-m", "west", "init", "-l", "manifest"], cwd=top, env=env,
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([sys.executable, "-m", "west", "tvm", "--help"], cwd=top, env=env,
                       capture_output=True, text=True, check=False)
    assert r.returncode != 0  # west does not know the command
    status = check(top)
    assert status.project == "utvm" and not status.west_tvm
    assert any(WEST_COMMANDS_LINE in line and "project utvm" in line for line in status.advice)
    assert any("no zephyr project" in line for line in status.advice)
    r = subprocess.run([sys.executable, "-m", "utvm", "info"], cwd=top, capture_output=True, text=True,
                       check=False, env=dict(os.environ, PYTHONPATH=str(REPO / "scripts")))
    assert r.returncode == 0 and WEST_COMMANDS_LINE in r.stdout, r.stdout + r.stderr
    assert check(tmp_path).topdir is None  # not a workspace at all


def test_workspace_with_the_extension_is_fine(workspace: Path) -> None:
    from utvm.zephyr.workspace import check

    status = check(workspace)
    assert status.west_tvm and status.project == "utvm"


def test_run_on_an_fvp_only_board_uses_qemu(workspace: Path, tmp_path: Path) -> None:
    """mps2/an386 inside a Zephyr workspace: Zephyr runs it in Arm FVP only, so west tvm run
    uses utvm's QEMU runner (and says so) instead of `west build -t run`."""
    reason = _compiler_missing()
    if reason:
        pytest.skip(reason)
    if shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("QEMU or the Arm toolchain is not installed")
    tree = tmp_path / "zephyr"
    (tree / "cmake").mkdir(parents=True)
    (tree / "Kconfig.zephyr").write_text("")
    model = REPO.parent / "shared/models/ad01_int8.tflite"
    if not model.is_file():
        pytest.skip(f"{model} is not there")
    r = west(workspace, "tvm", "run", "--board", "mps2/an386", str(model), "--json",
             env=dict(os.environ, ZEPHYR_BASE=str(tree)))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Arm FVP only" in r.stdout
    data = json.loads(r.stdout.strip().splitlines()[-1])
    assert data["board"] == "mps2/an386" and data["outputs_match_reference"] is True
