"""Composing the Zephyr build of an application that uses tvm_add_model (``west tvm build``).

The model is compiled inside the build: the application's CMakeLists.txt calls
tvm_add_model(), which runs ``python -m utvm compile`` as a custom command. ``west tvm build``
therefore only needs to pick the application, the board and the model, and hand everything
else to ``west build`` (or, when the workspace has no ``west build``, to CMake directly).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from utvm.errors import UtvmError

#: Root of this repository (scripts/utvm/zephyr/build.py -> ../../..).
REPO_ROOT = Path(__file__).resolve().parents[3]
#: The application ``west tvm build`` builds unless told otherwise.
DEFAULT_APP = REPO_ROOT / "samples" / "utvm_inference"
#: Boards that ``utvm run`` handles itself, never through Zephyr.
HOST_BOARDS = frozenset({"host"})

NO_ZEPHYR_MESSAGE = (
    "ZEPHYR_BASE is not set: `west tvm {cmd}` needs a Zephyr tree "
    "(set ZEPHYR_BASE, or add zephyr to this west workspace)"
)


@dataclass
class BuildRequest:
    """What to build: an application for a board, with an optional model."""

    board: str
    app: Path = DEFAULT_APP
    build_dir: Path = Path("build")
    model: Path | None = None
    name: str | None = None
    #: Build target, e.g. "run" for QEMU boards; None builds the image.
    target: str | None = None
    #: Options for ``west build`` placed before the application (e.g. ``-p always``).
    west_args: list[str] = field(default_factory=list)
    #: Extra CMake arguments (what follows ``--`` on ``west build``'s command line).
    cmake_args: list[str] = field(default_factory=list)


def model_name(model: Path) -> str:
    """A C identifier for a model file: its stem, other characters replaced by '_'."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", model.stem)
    if not name or name[0].isdigit():
        name = "m_" + name
    return name


def split_passthrough(args: Sequence[str]) -> tuple[list[str], list[str]]:
    """Splits arguments meant for ``west build`` at ``--``: (west options, CMake arguments)."""
    items = list(args)
    if "--" in items:
        i = items.index("--")
        return items[:i], items[i + 1:]
    return items, []


def cmake_defines(req: BuildRequest) -> list[str]:
    """The -D options that select the model in samples/utvm_inference (or any app using them)."""
    defines: list[str] = []
    if req.model is not None:
        model = req.model.expanduser().resolve()
        if not model.is_file():
            raise UtvmError(f"model file not found: {req.model}")
        defines.append(f"-DTVM_MODEL={model.as_posix()}")
        defines.append(f"-DTVM_MODEL_NAME={req.name or model_name(model)}")
    elif req.name:
        defines.append(f"-DTVM_MODEL_NAME={req.name}")
    return defines


def offload_cmake_args(modules: Sequence[str]) -> list[str]:
    """Kconfig settings (as CMake -D) that make a Zephyr build offload to ``modules``: the
    CONFIG_TVM_OFFLOAD_<M> symbol, and Zephyr's cmsis-nn library for cmsis-nn."""
    out: list[str] = []
    for name in dict.fromkeys(modules):
        symbol = re.sub(r"[^0-9A-Za-z]", "_", name).upper()
        if name == "cmsis-nn":
            out.append("-DCONFIG_CMSIS_NN=y")
        out.append(f"-DCONFIG_TVM_OFFLOAD_{symbol}=y")
    return out


def _check_app(req: BuildRequest) -> Path:
    app = req.app.expanduser().resolve()
    if not (app / "CMakeLists.txt").is_file():
        raise UtvmError(f"not a Zephyr application (no CMakeLists.txt): {req.app}")
    return app


def west_build_command(req: BuildRequest, west: Sequence[str]) -> list[str]:
    """The ``west build`` command line for the request; west is how to run west."""
    app = _check_app(req)
    cmd = [*west, "build", "-b", req.board, "-d", str(req.build_dir)]
    if req.target:
        cmd += ["-t", req.target]
    cmd += [*req.west_args, str(app)]
    cmake = [*cmake_defines(req), *req.cmake_args]
    if cmake:
        cmd += ["--", *cmake]
    return cmd


def cmake_commands(req: BuildRequest, zephyr_base: Path, cmake: str = "cmake",
                   generator: str | None = None) -> list[list[str]]:
    """Configure and build with CMake directly, as ``west build`` would (no west build)."""
    app = _check_app(req)
    if req.west_args:
        raise UtvmError(
            "options for west build ("
            + " ".join(req.west_args)
            + ") need `west build`, which this workspace does not have; "
            "pass CMake arguments after --"
        )
    configure = [cmake, "-S", str(app), "-B", str(req.build_dir), f"-DBOARD={req.board}",
                 f"-DZEPHYR_BASE={zephyr_base.as_posix()}"]
    if generator:
        configure += ["-G", generator]
    configure += [*cmake_defines(req), *req.cmake_args]
    build = [cmake, "--build", str(req.build_dir)]
    if req.target:
        build += ["--target", req.target]
    return [configure, build]


def find_zephyr_base(env: Mapping[str, str] | None = None,
                     workspace_zephyr: Path | None = None,
                     config_base: str | None = None,
                     topdir: Path | None = None) -> Path | None:
    """Where Zephyr is: $ZEPHYR_BASE, else west's zephyr.base setting, else a workspace
    project named zephyr. None when there is none (or it is not a Zephyr tree)."""
    env = os.environ if env is None else env
    candidates: list[Path] = []
    if env.get("ZEPHYR_BASE"):
        candidates.append(Path(env["ZEPHYR_BASE"]))
    if config_base:
        base = Path(config_base)
        candidates.append(base if base.is_absolute() or topdir is None else topdir / base)
    if workspace_zephyr is not None:
        candidates.append(workspace_zephyr)
    for c in candidates:
        if (c / "cmake").is_dir() and (c / "Kconfig.zephyr").is_file():
            return c.resolve()
    if candidates and env.get("ZEPHYR_BASE"):
        raise UtvmError(f"ZEPHYR_BASE={env['ZEPHYR_BASE']} is not a Zephyr tree "
                        "(no Kconfig.zephyr there)")
    return None


def uses_zephyr(board: str, zephyr_base: Path | None, baremetal: bool = False) -> bool:
    """Whether ``west tvm run`` goes through a Zephyr build: for any board but the host,
    when a Zephyr tree is there and bare metal was not asked for."""
    return zephyr_base is not None and not baremetal and board not in HOST_BOARDS


#: Lines of samples/utvm_inference that end a run: QEMU and native_sim keep running after
#: main() returns, so `west tvm run` stops them when one of these appears.
VERDICTS = {"utvm_inference: PASS": 0, "utvm_inference: FAIL": 1}


def run_until_verdict(cmd: Sequence[str], env: Mapping[str, str] | None = None,
                      echo: Callable[[str], None] = print,
                      verdicts: Mapping[str, int] = VERDICTS) -> int:
    """Runs ``cmd`` (e.g. ``west build -t run``), echoing its output, until a verdict line
    appears; then stops it (its whole process group: the build tool and the emulator) and
    returns the verdict's exit code. Without a verdict, the command's own exit code (1 if it
    exited with 0)."""
    proc = subprocess.Popen(list(cmd), env=dict(env) if env is not None else None,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            errors="replace", start_new_session=True)
    verdict: int | None = None
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            echo(line.rstrip("\n"))
            for marker, code in verdicts.items():
                if marker in line:
                    verdict = code
            if verdict is not None:
                break
    finally:
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    if verdict is not None:
        return verdict
    return proc.returncode or 1
