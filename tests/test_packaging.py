"""The package as a user installs it: a wheel built from the repository (not an editable
install), used from a directory outside the repository.

The wheel carries the C runtime, the in-repo external modules' C and the CMake helpers as
package data (setup.py); utvm.paths.data_root() finds them there. The virtual environment
sees the machine's packages (TVM, tflite-micro, ...), so that only utvm itself is installed
from the repository; CI's twister workflow also installs it on macOS and Linux aarch64 from
PyPI alone.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KWS = ROOT / "samples/utvm_inference/model/kws_ref_model.tflite"

pytestmark = pytest.mark.slow


def _run(cmd: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``cmd`` without PYTHONPATH (a checkout's scripts/ on it would shadow the installed package)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False, env=env)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtual environment with utvm installed from a wheel of this checkout."""
    env = tmp_path_factory.mktemp("venv") / "v"
    venv.create(env, system_site_packages=True, with_pip=True)
    r = _run([str(env / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
              "--no-deps", "--no-build-isolation", str(ROOT)], cwd=env)
    assert r.returncode == 0, r.stdout + r.stderr
    return env


def test_the_wheel_carries_the_runtime_and_finds_it(installed: Path, tmp_path: Path) -> None:
    python = str(installed / "bin" / "python")
    r = _run([python, "-c", "import json, utvm, utvm.paths as p; print(json.dumps([utvm.__file__, "
              "str(p.data_root()), str(p.crt_dir()), str(p.ext_lib_dir('plain_c')), str(p.cmake_dir()), "
              "p.repo_root()]))"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    package, data, crt, plain_c, cmake, repo = json.loads(r.stdout)
    site = Path(package).parent
    assert Path(package).is_relative_to(installed), package  # not the checkout
    assert repo is None
    assert Path(data) == site / "_data"
    assert (Path(crt) / "include/utvm/crt.h").is_file() and (Path(crt) / "ports/zephyr/platform_zephyr.c").is_file()
    assert (Path(plain_c) / "include/utvm_plainc.h").is_file()
    assert (Path(cmake) / "tvm.cmake").is_file()


def test_installed_cli_compiles_and_runs_outside_the_repository(installed: Path, tmp_path: Path) -> None:
    utvm = str(installed / "bin" / "utvm")
    r = _run([utvm, "--version"], cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.startswith("utvm "), r.stdout + r.stderr
    r = _run([utvm, "compile", str(KWS), "--name", "kws", "-o", str(tmp_path / "kws")], cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "kws/runtime/include/utvm/crt.h").is_file()  # the MLF carries the runtime
    r = _run([utvm, "run", str(KWS), "--board", "host", "--offload", "plain-c", "--json"], cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads(r.stdout.strip().splitlines()[-1])
    assert report["outputs_match_reference"] is True and report["offloaded"] == {"plain-c": 1}


def test_installed_cmake_helpers(installed: Path, tmp_path: Path) -> None:
    """A plain CMake project includes the installed package's tvm.cmake: the model is
    compiled by the installed compiler and runs with the installed runtime."""
    cmake = shutil.which("cmake")
    if cmake is None or shutil.which("cc") is None:
        pytest.skip("cmake or a C compiler is missing")
    python = str(installed / "bin" / "python")
    r = _run([python, "-m", "utvm", "info", "--json"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    cmake_dir = json.loads(r.stdout)["cmake"]
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "tests/cmake/main.c", project / "main.c")
    (project / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(p C)\n"
        f"include({Path(cmake_dir).as_posix()}/tvm.cmake)\n"
        "add_executable(model_host main.c)\n"
        f"tvm_add_model(NAME kws MODEL {KWS.as_posix()} TARGET model_host RUNTIME host TEST_DATA)\n"
        "target_compile_definitions(model_host PRIVATE MODEL_NAME=kws MODEL_NAME_UPPER=KWS\n"
        "  MODEL_H=\"tvmgen_kws.h\" TESTDATA_H=\"tvmgen_kws_testdata.h\")\n")
    build = tmp_path / "build"
    r = _run([cmake, "-S", str(project), "-B", str(build), f"-DPython3_EXECUTABLE={python}"], cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    r = _run([cmake, "--build", str(build)], cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    r = _run([str(build / "model_host")], cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.rstrip().endswith("PASS"), r.stdout + r.stderr
    assert sys.executable != python
