"""Build an MLF with the host C compiler and run it."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from ..errors import UtvmError
from ..package.mlf import model_sources


def mlf_sources(mlf: Path | Sequence[Path], port: str) -> tuple[list[Path], list[Path]]:
    """(C sources and prebuilt objects, include dirs) to build the MLF (or several MLFs, whose
    models are linked together: the runtime is taken once, from the first) with one platform port.

    The objects (``codegen/host/lib/*.o``, the constants with ``--constants object``) are
    only linked. External modules' glue and library sources are included.
    """
    mlfs = [Path(mlf)] if isinstance(mlf, (str, Path)) else [Path(m) for m in mlf]
    sources: list[Path] = []
    includes: list[Path] = []
    for one in mlfs:
        model = model_sources(one)
        sources += [*model.sources, *model.objects]
        includes += [d for d in model.include_dirs if d not in includes]
    runtime = mlfs[0] / "runtime"
    sources += sorted((runtime / "src").glob("*.c"))
    sources += sorted((runtime / "ports" / port).glob("*.c"))
    return sources, [*includes, runtime / "include"]


HOST_CFLAGS = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror"]


def build_host(mlf: Path | Sequence[Path], harness: Path, out: Path, defines: dict[str, str] | None = None,
               cc: str = "cc", extra: tuple[list[Path], list[Path]] = ([], [])) -> Path:
    """Build the MLF(s) with the host port and ``harness``; ``extra`` (sources, include dirs)
    are compiled too (a model group's pool)."""
    if shutil.which(cc) is None:
        raise UtvmError(f"no host C compiler '{cc}' (install gcc)")
    sources, includes = mlf_sources(mlf, "host")
    sources, includes = [*sources, *extra[0]], [*includes, *extra[1]]
    cmd = [cc, *HOST_CFLAGS, *[f"-I{d}" for d in includes]]
    cmd += [f"-D{k}={v}" if v else f"-D{k}" for k, v in (defines or {}).items()]
    cmd += [str(s) for s in [*sources, harness]] + ["-o", str(out), "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        first = next((ln for ln in proc.stderr.splitlines() if "error" in ln), proc.stderr.strip()[:300])
        raise UtvmError(f"host build failed: {first}")
    return out


def run_host(binary: Path, timeout_s: float = 300) -> str:
    try:
        proc = subprocess.run([str(binary)], capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise UtvmError(f"{binary.name} did not finish within {timeout_s:.0f} s") from None
    if proc.returncode != 0:
        raise UtvmError(f"{binary.name} exited with {proc.returncode}: {proc.stderr.strip()[:200]}")
    return proc.stdout
