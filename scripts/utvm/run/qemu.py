"""Build bare-metal Cortex-M firmware with arm-none-eabi-gcc + picolibc and run it in QEMU.

The firmware is linked with picolibc's own linker script (``picolibc.ld``), told where the
board's flash and RAM are with ``--defsym``. That script keeps ``.text`` and every
``.rodata*`` input section (the TVM constants are ``.rodata.tvm``) in one flash output
section, so constants are read in place and never copied to RAM; only ``.data`` has a
flash load image that start-up code copies.

The program runs under ``qemu-system-arm`` with semihosting: ``printf`` goes to QEMU's
stdout (through a stdio chardev; QEMU's default for semihosting output is stderr), and
``exit(n)`` (and returning ``n`` from ``main``, with ``--crt0=semihost``) makes QEMU exit
with status ``n``. A fault makes picolibc print ``ARM fault: ...`` and exit with 1. ``-icount shift=0,sleep=off`` makes the virtual clock advance
exactly 1 ns per executed instruction and never jump with host time, so the FPGAIO counter
reads the same on every run.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from utvm.errors import UtvmError
from utvm.run.boards import BoardSpec

GCC = "arm-none-eabi-gcc"
QEMU = "qemu-system-arm"

#: Bytes reserved for the stack at the top of RAM (picolibc ``__stack_size``).
DEFAULT_STACK_SIZE = 16 * 1024

DEFAULT_CFLAGS: tuple[str, ...] = (
    "-O2",
    "-ffunction-sections",
    "-fdata-sections",
    "-Wall",
)

_PICOLIBC_FLAGS: tuple[str, ...] = (
    "--specs=picolibc.specs",
    "--oslib=semihost",
    "--crt0=semihost",
)


@dataclass(frozen=True)
class Tools:
    """Absolute paths of the external programs the runner uses."""

    gcc: Path
    qemu: Path | None


@dataclass(frozen=True)
class QemuRun:
    """Result of one QEMU run."""

    #: What the firmware wrote through semihosting (stdout and stderr).
    stdout: str
    #: QEMU's own diagnostics.
    stderr: str
    #: The firmware's exit status modulo 256; 1 after a fault (see :attr:`fault`).
    exit_code: int
    wall_time_s: float

    @property
    def fault(self) -> str | None:
        """picolibc's fault report (``ARM fault: hardfault`` ...), if the firmware faulted."""
        index = self.stdout.find("ARM fault:")
        if index < 0:
            return None
        return self.stdout[index:].splitlines()[0].strip()


def _missing(tool: str, package: str) -> UtvmError:
    return UtvmError(f"{tool} not found on PATH; install the Debian package {package}")


def find_tools(qemu: bool = True) -> Tools:
    """Locate arm-none-eabi-gcc (with picolibc) and, when ``qemu`` is true, qemu-system-arm.

    Raises UtvmError naming the package to install when something is missing.
    """
    gcc = shutil.which(GCC)
    if gcc is None:
        raise _missing(GCC, "gcc-arm-none-eabi")
    specs = subprocess.run(
        [gcc, "-print-file-name=picolibc.specs"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    if not specs or not Path(specs).is_absolute() or not Path(specs).exists():
        raise UtvmError(
            f"{GCC} cannot find picolibc.specs; install the Debian package picolibc-arm-none-eabi"
        )
    qemu_path: Path | None = None
    if qemu:
        found = shutil.which(QEMU)
        if found is None:
            raise _missing(QEMU, "qemu-system-arm")
        qemu_path = Path(found)
    return Tools(gcc=Path(gcc), qemu=qemu_path)


_COMPILE_MARKERS = ("error:", "error")
_LINK_MARKERS = (
    "overflowed by",
    "undefined reference",
    "multiple definition",
    "error:",
)


def _first_error_line(text: str, markers: tuple[str, ...] = _COMPILE_MARKERS) -> str:
    """The most informative line of a tool's error output."""
    lines = [
        re.sub(r"^\S*/ld(\.bfd)?: ", "ld: ", line.strip())
        for line in text.splitlines()
        if line.strip()
    ]
    for marker in markers:
        for line in lines:
            if marker in line.lower():
                return line
    return lines[0] if lines else "(no output)"


def _define_flags(defines: dict[str, str]) -> list[str]:
    flags = []
    for key, value in defines.items():
        flags.append(f"-D{key}" if value == "" else f"-D{key}={value}")
    return flags


def linker_flags(board: BoardSpec, stack_size: int = DEFAULT_STACK_SIZE) -> list[str]:
    """``-Wl`` flags placing picolibc's memory regions for ``board``, stack explicit, no heap."""
    return [
        f"-Wl,--defsym=__flash=0x{board.flash.origin:08x}",
        f"-Wl,--defsym=__flash_size=0x{board.flash.size:x}",
        f"-Wl,--defsym=__ram=0x{board.ram.origin:08x}",
        f"-Wl,--defsym=__ram_size=0x{board.ram.size:x}",
        f"-Wl,--defsym=__stack_size=0x{stack_size:x}",
        # No heap: the runtime never calls malloc; an empty heap makes a stray call fail.
        "-Wl,--defsym=__heap_end=__heap_start",
        "-Wl,--gc-sections",
        # Named explicitly and after the --defsym options: the script's DEFINED() tests
        # only see symbols defined before it (the specs file would put it first).
        "-Tpicolibc.ld",
    ]


def build_firmware(
    board: BoardSpec,
    sources: list[Path],
    include_dirs: list[Path],
    defines: dict[str, str],
    out_dir: Path,
    cflags_extra: list[str] | None = None,
    *,
    name: str = "firmware",
    stack_size: int = DEFAULT_STACK_SIZE,
    jobs: int | None = None,
) -> Path:
    """Compile ``sources`` for ``board`` and link them with picolibc; return the ELF path.

    Entries of ``sources`` ending in ``.o`` or ``.a`` are prebuilt: linked, not compiled.

    ``defines`` are added after the board's own (``UTVM_FPGAIO_COUNTER_ADDR``) and may
    override them. Objects, ``<name>.elf``, ``<name>.map`` and ``build.log`` go to
    ``out_dir``. Raises UtvmError with the first compiler error on failure.
    """
    if not sources:
        raise UtvmError("build_firmware: no source files given")
    for src in sources:
        if not Path(src).is_file():
            raise UtvmError(f"source file not found: {src}")
    tools = find_tools(qemu=False)
    out_dir = Path(out_dir)
    obj_dir = out_dir / "obj"
    obj_dir.mkdir(parents=True, exist_ok=True)
    log_path = out_dir / "build.log"

    target = board.gcc_flags
    all_defines = {**board.defines, **defines}
    common = [
        *target,
        *DEFAULT_CFLAGS,
        *_PICOLIBC_FLAGS,
        *[f"-I{Path(d)}" for d in include_dirs],
        *_define_flags(all_defines),
        *(cflags_extra or []),
    ]

    log: list[str] = []

    def compile_one(
        index: int, src: Path
    ) -> tuple[Path, list[str], subprocess.CompletedProcess[str]]:
        obj = obj_dir / f"{index:03d}_{Path(src).stem}.o"
        cmd = [str(tools.gcc), *common, "-c", str(src), "-o", str(obj)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        return obj, cmd, proc

    # Prebuilt objects and archives (``.o``, e.g. the constants of ``--constants object``;
    # ``.a``, e.g. ``--export static-lib``) are only linked, after the compiled sources.
    prebuilt = [Path(s) for s in sources if Path(s).suffix in (".o", ".a")]
    sources = [s for s in sources if Path(s).suffix not in (".o", ".a")]
    workers = jobs if jobs is not None else min(len(sources), os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        results = list(pool.map(compile_one, range(len(sources)), sources))

    objects: list[Path] = []
    failure: tuple[Path, str] | None = None
    for src, (obj, cmd, proc) in zip(sources, results):
        log.append(" ".join(cmd))
        log.append(proc.stdout + proc.stderr)
        if proc.returncode != 0 and failure is None:
            failure = (Path(src), proc.stderr)
        objects.append(obj)
    if failure is not None:
        log_path.write_text("\n".join(log))
        src, stderr = failure
        raise UtvmError(
            f"{GCC} failed on {src.name}: {_first_error_line(stderr)} (full log: {log_path})"
        )

    elf = out_dir / f"{name}.elf"
    map_file = out_dir / f"{name}.map"
    link_cmd = [
        str(tools.gcc),
        *target,
        *_PICOLIBC_FLAGS,
        *(cflags_extra or []),
        *[str(o) for o in [*objects, *prebuilt]],
        *linker_flags(board, stack_size),
        f"-Wl,-Map={map_file}",
        "-o",
        str(elf),
    ]
    proc = subprocess.run(link_cmd, capture_output=True, text=True, check=False)
    log.append(" ".join(link_cmd))
    log.append(proc.stdout + proc.stderr)
    log_path.write_text("\n".join(log))
    if proc.returncode != 0:
        raise UtvmError(
            f"{GCC} failed linking {elf.name}: {_first_error_line(proc.stderr, _LINK_MARKERS)} "
            f"(full log: {log_path})"
        )
    return elf


def qemu_command(board: BoardSpec, elf: Path, qemu: Path | str = QEMU) -> list[str]:
    """The qemu-system-arm command line that runs ``elf`` on ``board``."""
    return [
        str(qemu),
        "-M",
        board.qemu_machine,
        "-nographic",
        "-monitor",
        "none",
        "-serial",
        "null",
        # Semihosting console output goes to stderr unless routed to a chardev.
        "-chardev",
        "stdio,id=semihost0",
        "-semihosting-config",
        "enable=on,target=native,chardev=semihost0",
        # 1 ns of virtual time per instruction; sleep=off keeps host time out of the
        # virtual clock (otherwise the counter phase differs from run to run).
        "-icount",
        "shift=0,sleep=off",
        "-kernel",
        str(elf),
    ]


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run_firmware(board: BoardSpec, elf: Path, timeout_s: float = 120) -> QemuRun:
    """Run ``elf`` in QEMU until it exits through semihosting; return its output and status.

    The exit code is the firmware's ``exit``/``main`` status modulo 256 (a host process
    status).

    Raises UtvmError when QEMU is missing, when QEMU itself reports an error, or when the
    run takes longer than ``timeout_s`` (QEMU's whole process group is killed).
    """
    tools = find_tools(qemu=True)
    assert tools.qemu is not None
    elf = Path(elf)
    if not elf.is_file():
        raise UtvmError(f"firmware not found: {elf}")
    cmd = qemu_command(board, elf, tools.qemu)
    start = time.monotonic()
    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = proc.communicate()
        last = _last_line(out.decode(errors="replace"))
        raise UtvmError(
            f"{QEMU} timed out after {timeout_s:g} s running {elf.name} on {board.name}"
            f" (last output: {last})"
        ) from None
    except BaseException:
        # Interrupted (e.g. Ctrl-C): leave no QEMU behind.
        _kill_group(proc)
        proc.wait()
        raise
    elapsed = time.monotonic() - start
    stdout = out.decode(errors="replace")
    stderr = err.decode(errors="replace")
    if proc.returncode != 0:
        for line in stderr.splitlines():
            if line.startswith(f"{QEMU}:"):
                raise UtvmError(f"{line.strip()} (board {board.name}, {elf.name})")
    return QemuRun(
        stdout=stdout, stderr=stderr, exit_code=proc.returncode, wall_time_s=elapsed
    )


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1].strip() if lines else "(none)"
