"""Whether the tools a group of tests needs are on this machine: one reason string for a skip,
or None (or '') when they are there."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from utvm.errors import UtvmError
from utvm.run import qemu


def toolchain_problem() -> str | None:
    """None when arm-none-eabi-gcc, picolibc and qemu-system-arm are there, else what is missing."""
    try:
        qemu.find_tools(qemu=True)
    except UtvmError as exc:
        return str(exc)
    return None


def sanitizers_problem(tmp: Path) -> str:
    """'' when the host compiler builds and runs an ASan+UBSan program, else why not."""
    if shutil.which("cc") is None:
        return "no host C compiler"
    src = tmp / "probe.c"
    src.write_text("int main(void) { return 0; }\n")
    proc = subprocess.run(["cc", "-fsanitize=address,undefined", str(src), "-o", str(tmp / "probe")],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return f"the host compiler has no ASan/UBSan runtime: {proc.stderr.strip()[:200]}"
    return "" if subprocess.run([str(tmp / "probe")]).returncode == 0 else "ASan programs do not run here"


def arm_tools_problem() -> str | None:
    """None when arm-none-eabi-gcc and -ar, picolibc and qemu-system-arm are there (a static
    library is archived and run on QEMU), else what is missing."""
    for tool in ("arm-none-eabi-gcc", "arm-none-eabi-ar", "qemu-system-arm"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian: gcc-arm-none-eabi, binutils-arm-none-eabi, qemu-system-arm)"
    try:
        qemu.find_tools(qemu=True)
    except Exception as exc:  # noqa: BLE001 - any missing piece is a skip reason
        return str(exc)
    return None
