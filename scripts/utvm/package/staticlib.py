"""``--export static-lib``: the compiled model as ``lib/lib<N>.a`` plus its headers.

The archive holds the kernels, the AOT executor, the constants (C or the constants
object), the glue and library of every external module and the portable runtime core (``runtime/src``), NOT a platform port: the firmware
that links the archive provides ``utvm_platform_*`` (e.g. ``runtime/ports/baremetal``).
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

from ..errors import UtvmError
from .mlf import model_sources

#: runtime headers an application needs next to ``tvmgen_<N>.h``
PUBLIC_HEADERS = ("model.h", "crt.h", "platform.h")


def archiver_for(cc: str) -> str:
    """The ``ar`` matching a compiler: ``arm-none-eabi-gcc`` -> ``arm-none-eabi-ar``, else ``ar``."""
    base = Path(cc).name
    for suffix in ("gcc", "clang", "cc"):
        if base.endswith("-" + suffix):
            prefix = base[: -len(suffix)]
            candidate = str(Path(cc).with_name(prefix + "ar")) if "/" in cc else prefix + "ar"
            if shutil.which(candidate):
                return candidate
            break
    if base.startswith("clang") and shutil.which("llvm-ar"):
        return "llvm-ar"
    if shutil.which("ar") is None:
        raise UtvmError(f"no archiver for '{cc}' (tried the '{cc}' prefix and 'ar'; install binutils)")
    return "ar"


def _first_error(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return next((ln for ln in lines if "error" in ln.lower()), lines[0] if lines else "(no output)")


def build_static_lib(mlf: Path, name: str, cc: str, cflags: str = "") -> Path:
    """Compile the MLF in ``mlf`` into ``mlf/lib/lib<name>.a``; copy the headers; return the archive."""
    if shutil.which(cc) is None:
        raise UtvmError(f"C compiler '{cc}' not found on PATH (needed by --export static-lib)")
    ar = archiver_for(cc)
    try:
        flags = shlex.split(cflags)
    except ValueError as exc:
        raise UtvmError(f"--cflags: {exc}") from None
    model = model_sources(mlf)
    sources = [*model.sources, *sorted((mlf / "runtime" / "src").glob("*.c"))]
    prebuilt = model.objects
    includes = [*model.include_dirs, mlf / "runtime" / "include"]
    out = mlf / "lib"
    obj_dir = out / "obj"
    obj_dir.mkdir(parents=True)
    objects: list[Path] = []
    for i, src in enumerate(sources):
        obj = obj_dir / f"{i:02d}_{src.stem}.o"
        cmd = [cc, *flags, "-ffunction-sections", "-fdata-sections",
               *[f"-I{d}" for d in includes], "-c", str(src), "-o", str(obj)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        except OSError as exc:
            raise UtvmError(f"cannot run '{cc}': {exc.strerror}") from None
        if proc.returncode != 0:
            raise UtvmError(f"{cc} failed on {src.name}: {_first_error(proc.stderr)}")
        objects.append(obj)
    archive = out / f"lib{name}.a"
    proc = subprocess.run([ar, "rcs", str(archive), *map(str, objects + prebuilt)],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise UtvmError(f"{ar} failed: {_first_error(proc.stderr)}")
    shutil.rmtree(obj_dir)
    inc = out / "include"
    (inc / "utvm").mkdir(parents=True)
    shutil.copy2(mlf / "codegen" / "host" / "include" / f"tvmgen_{name}.h", inc)
    for h in PUBLIC_HEADERS:
        shutil.copy2(mlf / "runtime" / "include" / "utvm" / h, inc / "utvm" / h)
    return archive
