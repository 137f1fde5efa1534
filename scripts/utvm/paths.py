"""Where the runtime sources live."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import UtvmError


def crt_dir() -> Path:
    """lib/crt of this checkout (or $UTVM_CRT_DIR)."""
    env = os.environ.get("UTVM_CRT_DIR")
    path = Path(env) if env else Path(__file__).resolve().parents[2] / "lib" / "crt"
    if not (path / "include" / "utvm" / "crt.h").exists():
        raise UtvmError(f"the C runtime was not found at {path} (set UTVM_CRT_DIR)")
    return path


def ext_lib_dir(name: str) -> Path:
    """lib/ext/<name>: the C library of an in-repo external module, beside lib/crt."""
    path = crt_dir().parent / "ext" / name
    if not path.is_dir():
        raise UtvmError(f"the external module library {name} was not found at {path}")
    return path
