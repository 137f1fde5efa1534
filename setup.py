"""Build hook of the utvm package (the metadata is in pyproject.toml).

A wheel carries, besides the Python package, the files the compiler reads at run time: the C
runtime (lib/crt), the in-repo external modules' C libraries (lib/ext) and the CMake helpers
(cmake/), copied into utvm/_data with the repository's layout (utvm.paths.DATA_DIRS), where
utvm.paths.data_root() finds them. An editable install reads the repository instead.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "scripts"))
from utvm.paths import DATA_DIRS, PACKAGED_DATA  # noqa: E402


class BuildPyWithData(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / "utvm" / PACKAGED_DATA
        for name in DATA_DIRS:
            source = ROOT / name
            if not source.is_dir():
                raise SystemExit(f"setup.py: {source} is missing: build from a full checkout")
            shutil.copytree(source, target / name, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.o", "*.a"))


setup(cmdclass={"build_py": BuildPyWithData})
