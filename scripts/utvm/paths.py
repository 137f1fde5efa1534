"""Where utvm's files that are not Python are: the C runtime (lib/crt), the C libraries of the
in-repo external modules (lib/ext) and the CMake helpers (cmake/).

:func:`data_root` is the one place that finds them; everything else asks it. An installed
package (a wheel built from the repository) carries them as package data in ``utvm/_data``,
laid out as in the repository; an editable install or a source checkout
(``PYTHONPATH=scripts``) reads the repository itself. ``$UTVM_CRT_DIR`` overrides lib/crt.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import UtvmError

#: The package directory (scripts/utvm in a checkout, site-packages/utvm when installed).
PACKAGE_DIR = Path(__file__).resolve().parent
#: Where a wheel keeps the data files, relative to the package.
PACKAGED_DATA = "_data"
#: The data directories, relative to the data root (setup.py copies them into the wheel).
DATA_DIRS = ("lib/crt", "lib/ext", "cmake")
_MARKER = Path("lib/crt/include/utvm/crt.h")


def repo_root() -> Path | None:
    """The repository checkout this package runs from, or None for an installed package."""
    root = PACKAGE_DIR.parents[1]
    if (root / _MARKER).is_file() and (root / "scripts" / "utvm" / "__init__.py").is_file():
        return root
    return None


def data_root() -> Path:
    """The directory holding lib/crt, lib/ext and cmake/: the package's data, else the
    repository."""
    packaged = PACKAGE_DIR / PACKAGED_DATA
    if (packaged / _MARKER).is_file():
        return packaged
    root = repo_root()
    if root is not None:
        return root
    raise UtvmError(f"utvm's runtime files are missing: neither {packaged} (an installed "
                    f"package) nor a repository checkout around {PACKAGE_DIR} has {_MARKER}; "
                    "reinstall utvm")


def crt_dir() -> Path:
    """lib/crt (or $UTVM_CRT_DIR)."""
    env = os.environ.get("UTVM_CRT_DIR")
    path = Path(env) if env else data_root() / "lib" / "crt"
    if not (path / "include" / "utvm" / "crt.h").exists():
        raise UtvmError(f"the C runtime was not found at {path} (set UTVM_CRT_DIR)")
    return path


def ext_lib_dir(name: str) -> Path:
    """lib/ext/<name>: the C library of an in-repo external module."""
    path = data_root() / "lib" / "ext" / name
    if not path.is_dir():
        raise UtvmError(f"the external module library {name} was not found at {path}")
    return path


def cmake_dir() -> Path:
    """cmake/: tvm.cmake, for plain CMake projects (include(<dir>/tvm.cmake))."""
    return data_root() / "cmake"
