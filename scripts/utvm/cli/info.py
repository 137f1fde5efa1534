"""``utvm info``: where this installation's files are, whether the reference interpreter is
there, and whether the west workspace around the current directory offers ``west tvm``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def version_text() -> str:
    """``utvm --version``: this package's version and the TVM it compiles with."""
    from importlib import metadata

    from .. import __version__

    try:
        tvm = metadata.version("apache-tvm")
    except metadata.PackageNotFoundError:
        tvm = "not installed"
    return f"utvm {__version__} (Apache TVM {tvm})"


def add_info_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "info", help="versions, runtime and CMake files, reference, west workspace",
        description="Print utvm's version, where its runtime and CMake helpers are (a plain "
        "CMake project includes <cmake>/tvm.cmake), whether TFLite Micro is there to check "
        "outputs, and what the west workspace around the current directory lacks for `west tvm`.")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_info)


def cmd_info(args: argparse.Namespace) -> int:
    from ..paths import PACKAGE_DIR, cmake_dir, data_root
    from ..run.reference import NO_TFLM, tflm_runtime
    from ..zephyr.workspace import check

    west = check()
    info: dict[str, object] = {
        "version": version_text(),
        "package": str(PACKAGE_DIR),
        "data": str(data_root()),
        "cmake": str(cmake_dir()),
        "reference": "tflite-micro" if tflm_runtime() is not None else None,
        "west_workspace": str(west.topdir) if west.topdir else None,
        "west_tvm": west.west_tvm,
        "zephyr": str(west.zephyr) if west.zephyr else None,
        "advice": list(west.advice),
    }
    if args.json:
        print(json.dumps(info))
        return 0
    rows = [("package", info["package"]), ("runtime", f"{info['data']} (lib/crt, lib/ext)"),
            ("cmake", f"include({Path(str(info['cmake'])).as_posix()}/tvm.cmake)"),
            ("reference", info["reference"] or NO_TFLM),
            ("west", f"{info['west_workspace'] or 'no workspace'}; west tvm: "
                     f"{'yes' if west.west_tvm else 'no'}")]
    print(info["version"])
    for key, value in rows:
        print(f"  {key:<10} {value}")
    for line in west.advice:
        print(f"  - {line}")
    return 0
