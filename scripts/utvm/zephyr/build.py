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
from utvm.paths import repo_root

#: The application ``west tvm build`` builds unless told otherwise (a checkout's sample; an
#: installed package has no samples, so --app is needed there).
_REPO = repo_root()
DEFAULT_APP = (_REPO or Path(".")) / "samples" / "utvm_inference"
#: Boards that ``utvm run`` handles itself, never through Zephyr.
HOST_BOARDS = frozenset({"host"})
#: Zephyr boards whose only emulator is Arm FVP (boards/arm/mps2/board.cmake and the boards'
#: yaml: simulation armfvp): `west build -t run` needs FVP for them, so ``west tvm run`` runs
#: them with utvm's own QEMU runner (the same CPU, QEMU machines mps2-an386 / mps2-an500).
FVP_ONLY_BOARDS = frozenset({"mps2/an386", "mps2/an500"})

NO_ZEPHYR_MESSAGE = (
    "ZEPHYR_BASE is not set: `west tvm {cmd}` needs a Zephyr tree "
    "(set ZEPHYR_BASE, or add zephyr to this west workspace's west.yml and run west update)"
)
#: The default of west's build.dir-fmt setting (as zephyr's build_helpers.py).
DEFAULT_BUILD_DIR = "build"


@dataclass
class BuildRequest:
    """What to build: an application for a board, with an optional model."""

    board: str
    app: Path = DEFAULT_APP
    #: None: west build chooses (its build.dir-fmt setting, "build" by default)
    build_dir: Path | None = None
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
        defines.append(f"-DUTVM_MODEL={model.as_posix()}")
        defines.append(f"-DUTVM_MODEL_NAME={req.name or model_name(model)}")
    elif req.name:
        defines.append(f"-DUTVM_MODEL_NAME={req.name}")
    return defines


def offload_cmake_args(modules: Sequence[str]) -> list[str]:
    """Kconfig settings (as CMake -D) that make a Zephyr build offload to ``modules``: the
    CONFIG_UTVM_OFFLOAD_<M> symbol, and Zephyr's cmsis-nn library for cmsis-nn."""
    out: list[str] = []
    for name in dict.fromkeys(modules):
        symbol = re.sub(r"[^0-9A-Za-z]", "_", name).upper()
        if name == "cmsis-nn":
            out.append("-DCONFIG_CMSIS_NN=y")
        out.append(f"-DCONFIG_UTVM_OFFLOAD_{symbol}=y")
    return out


def _check_app(req: BuildRequest) -> Path:
    app = req.app.expanduser().resolve()
    if not (app / "CMakeLists.txt").is_file():
        raise UtvmError(f"not a Zephyr application (no CMakeLists.txt): {req.app}")
    return app


def west_build_command(req: BuildRequest, west: Sequence[str]) -> list[str]:
    """The ``west build`` command line for the request; west is how to run west."""
    app = _check_app(req)
    cmd = [*west, "build", "-b", req.board]
    if req.build_dir is not None:
        cmd += ["-d", str(req.build_dir)]
    if req.target:
        cmd += ["-t", req.target]
    cmd += [*req.west_args, str(app)]
    cmake = [*cmake_defines(req), *req.cmake_args]
    if cmake:
        cmd += ["--", *cmake]
    return cmd


def cmake_commands(req: BuildRequest, zephyr_base: Path, cmake: str = "cmake",
                   generator: str | None = None, dir_fmt: str | None = None) -> list[list[str]]:
    """Configure and build with CMake directly, as ``west build`` would (no west build): without
    ``-d`` in the directory west's ``build.dir-fmt`` (``dir_fmt``) names, as ``west flash`` and
    ``west tvm report`` will look for it."""
    app = _check_app(req)
    if req.west_args:
        raise UtvmError(
            "options for west build ("
            + " ".join(req.west_args)
            + ") need `west build`, which this workspace does not have; "
            "pass CMake arguments after --"
        )
    build_dir = req.build_dir
    if build_dir is None:
        build_dir = find_build_dir(None, dir_fmt, board=req.board, app=app.name,
                                   source_dir=os.path.relpath(app, Path.cwd()))
    configure = [cmake, "-S", str(app), "-B", str(build_dir), f"-DBOARD={req.board}",
                 f"-DZEPHYR_BASE={zephyr_base.as_posix()}"]
    if generator:
        configure += ["-G", generator]
    configure += [*cmake_defines(req), *req.cmake_args]
    build = [cmake, "--build", str(build_dir)]
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
    """Whether ``west tvm run`` goes through a Zephyr build: for any board but the host and
    the boards Zephyr runs only in Arm FVP, when a Zephyr tree is there and bare metal was
    not asked for."""
    return (zephyr_base is not None and not baremetal and board not in HOST_BOARDS
            and board not in FVP_ONLY_BOARDS)


def _is_zephyr_build(path: Path) -> bool:
    """As zephyr's build_helpers.is_zephyr_build: a CMake cache with ZEPHYR_TOOLCHAIN_VARIANT."""
    cache = path / "CMakeCache.txt"
    try:
        return any(line.startswith("ZEPHYR_TOOLCHAIN_VARIANT:")
                   for line in cache.read_text(errors="replace").splitlines())
    except OSError:
        return False


def find_build_dir(given: Path | None, dir_fmt: str | None = None, cwd: Path | None = None,
                   **fields: str) -> Path:
    """The build directory west's commands would use, as zephyr's build_helpers.find_build_dir:
    the given one; else build.dir-fmt (default "build", formatted with ``fields`` such as
    board, source_dir, app) if it is a Zephyr build; else the current directory if it is one;
    else the formatted default."""
    cwd = Path.cwd() if cwd is None else cwd
    if given is not None:
        return given
    try:
        default: Path | None = cwd / (dir_fmt or DEFAULT_BUILD_DIR).format(**fields)
    except (KeyError, IndexError, ValueError):
        default = None
    if default is not None and _is_zephyr_build(default):
        return default
    if _is_zephyr_build(cwd):
        return cwd
    if default is None:
        raise UtvmError(f"west's build.dir-fmt ({dir_fmt}) needs fields that are not known here: "
                        "give the build directory with -d")
    return default


def image_elf(build_dir: Path) -> Path:
    """The application's zephyr.elf in a build directory: with sysbuild, in the default
    domain's directory (domains.yaml, as zephyr's build_helpers/domains.py reads it)."""
    domains = build_dir / "domains.yaml"
    if domains.is_file():
        import yaml

        try:
            data = yaml.safe_load(domains.read_text())
            default = data["default"]
            (domain,) = [d for d in data["domains"] if d["name"] == default]
            top = build_dir / data["build_dir"]  # relative paths: to the file's directory
            app_dir = top / domain["build_dir"]  # then to the top build directory
        except (yaml.YAMLError, KeyError, TypeError, ValueError) as e:
            raise UtvmError(f"{domains}: not a sysbuild domains file ({e})") from None
        return app_dir / "zephyr" / "zephyr.elf"
    return build_dir / "zephyr" / "zephyr.elf"


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
