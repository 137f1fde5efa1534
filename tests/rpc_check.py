"""The RPC server built for the host with the fixture models (tests/fixtures/rpc), and an MLF
directory of one of those models, shared by the RPC tests."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CRT = ROOT / "lib" / "crt"
FIXTURE = ROOT / "tests" / "fixtures" / "rpc" / "fixture_models.c"
#: the payload limit the fixture server is built with
MAX_PAYLOAD = 512


def build_host_server(out: Path, extra: tuple[str, ...] = ()) -> Path:
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no host C compiler (gcc/cc) on PATH")
    exe = out / "rpc_fixture_server"
    cmd = [
        cc,
        "-std=c99",
        "-O2",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-DUTVM_RPC_MAIN",
        f"-DUTVM_RPC_MAX_PAYLOAD={MAX_PAYLOAD}u",
        f"-I{CRT / 'include'}",
        *extra,
        str(CRT / "src" / "rpc_server.c"),
        str(CRT / "ports" / "host" / "rpc_host_main.c"),
        str(CRT / "ports" / "host" / "platform_host.c"),
        str(FIXTURE),
        "-o",
        str(exe),
    ]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return exe


def make_fixture_mlf(root: Path) -> Path:
    """A minimal Model Library Format directory whose model is the fixture's add_one."""
    mlf = root / "add_one_mlf"
    src = mlf / "codegen" / "host" / "src"
    src.mkdir(parents=True)
    (mlf / "codegen" / "host" / "include").mkdir(parents=True)
    (src / "add_one_lib1.c").write_text(
        f'#define FIXTURE_NO_MODEL_TABLE\n#include "{FIXTURE}"\n'
    )
    meta = {
        "version": 7,
        "modules": {
            "add_one": {
                "memory": {
                    "functions": {
                        "main": [
                            {
                                "inputs": {"x": {"size": 8, "dtype": "int8"}},
                                "outputs": {"y": {"size": 8, "dtype": "int8"}},
                            }
                        ]
                    }
                }
            }
        },
    }
    (mlf / "metadata.json").write_text(json.dumps(meta))
    return mlf
