"""samples/utvm_rpc_server/pytest/test_rpc_server.py against Zephyr's real pytest-twister-harness.

Zephyr cannot be built here, so the device is utvm's bare-metal RPC server firmware, laid out
as the Zephyr sample is on mps2/an385: it prints the sample's "ready" line on UART0 and
serves RPC on UART1. QEMU runs it as twister does the sample: UART0 on the FIFO pair
``<build>/qemu-fifo.{in,out}`` (Zephyr's QEMU_PIPE), UART1 on a TCP port named in the build's
CMakeCache.txt (the sample's CMakeLists.txt). The ``dut`` handed to the sample's test is the
harness's own QemuAdapter, with its reader thread and FifoHandler reading the console all
along, exactly as under twister.

The harness comes from the Zephyr tree of $ZEPHYR_BASE (scripts/pylib/pytest-twister-harness):
installed with pip by scripts/setup.sh when ZEPHYR_BASE is set, or imported from its source
tree. Without ZEPHYR_BASE the test skips with that reason.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import sys
from pathlib import Path
from types import ModuleType

import pytest

from utvm.run.boards import get_board

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from zephyr_tree import require_zephyr  # noqa: E402

SAMPLE_TEST = ROOT / "samples" / "utvm_rpc_server" / "pytest" / "test_rpc_server.py"
KWS = ROOT / "samples" / "utvm_inference" / "model" / "kws_ref_model.tflite"

#: CMSDK UARTs of mps2-an385 (Zephyr's mps2 devicetree: uart0, uart1).
UART0, UART1 = 0x40004000, 0x40005000


def _import_harness() -> ModuleType:
    harness_src = require_zephyr() / "scripts" / "pylib" / "pytest-twister-harness" / "src"
    if not harness_src.is_dir():
        pytest.skip(f"Zephyr's pytest-twister-harness is not at {harness_src}")
    try:
        import twister_harness  # noqa: F401
    except ImportError:
        sys.path.insert(0, str(harness_src))
    from twister_harness.device import qemu_adapter

    return qemu_adapter


def _sample_test() -> ModuleType:
    spec = importlib.util.spec_from_file_location("utvm_rpc_sample_test", SAMPLE_TEST)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def firmware(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The KWS model's RPC server for mps2/an385: RPC on UART1, ready line on UART0."""
    from utvm.compiler import CompileOptions, compile_model
    from utvm.errors import UtvmError
    from utvm.rpc.server import ServerSources, build_qemu_server, mlf_server_sources
    from utvm.run.qemu import find_tools

    try:
        find_tools(qemu=True)
    except UtvmError as e:
        pytest.skip(f"no Arm toolchain or QEMU: {e}")
    work = tmp_path_factory.mktemp("twister-rpc")
    board = get_board("mps2/an385")
    mlf = compile_model(KWS, work / "mlf", CompileOptions(name="kws", cpu=board.cpu)).mlf_dir
    src = mlf_server_sources(mlf, "mps2/an385", work / "fw", profile=True)
    defines = {**src.defines, "UTVM_RPC_UART_BASE": f"0x{UART1:08x}u",
               "UTVM_RPC_CONSOLE_UART_BASE": f"0x{UART0:08x}u", "UTVM_RPC_MAX_PAYLOAD": "512u"}
    return build_qemu_server("mps2/an385", ServerSources(src.sources, src.include_dirs, defines), work / "fw")


def _qemu(elf: Path, build_dir: Path, port: int) -> list[str]:
    from utvm.run.qemu import find_tools, qemu_command

    tools = find_tools(qemu=True)
    cmd = qemu_command(get_board("mps2/an385"), elf, tools.qemu or "qemu-system-arm")
    at = cmd.index("-serial")
    # UART0: the FIFO pair twister's harness reads (Zephyr's -serial pipe:${QEMU_PIPE});
    # UART1: the host TCP port of samples/utvm_rpc_server/CMakeLists.txt.
    cmd[at:at + 2] = ["-serial", f"pipe:{build_dir / 'qemu-fifo'}",
                      "-serial", f"tcp:127.0.0.1:{port},server=on,wait=off"]
    return cmd


def test_sample_rpc_test_with_the_real_harness(firmware: Path, tmp_path: Path) -> None:
    qemu_adapter = _import_harness()
    from twister_harness.twister_harness_config import DeviceConfig

    build = tmp_path / "build"
    build.mkdir()
    port = _free_port()
    # What the sample's build leaves for its test: the port in CMakeCache.txt.
    (build / "CMakeCache.txt").write_text(f"UTVM_RPC_QEMU_PORT:STRING={port}\n")
    # QEMU opens the FIFOs as it starts; the harness makes them only after starting it.
    for end in ("in", "out"):
        os.mkfifo(build / f"qemu-fifo.{end}")

    config = DeviceConfig(type="qemu", build_dir=build, base_timeout=30.0)
    dut = qemu_adapter.QemuAdapter(config)
    dut.command = _qemu(firmware, build, port)
    sample = _sample_test()
    try:
        dut.launch()
        sample.test_rpc_server(dut)
        # The harness's line reader kept the console: nothing but text went through it.
        log = (build / "handler.log").read_text(errors="replace")
        assert "utvm_rpc_server: ready, 1 model(s), max payload 512, on uart@40005000" in log
        assert "\ufffd" not in log  # no binary bytes decoded by the harness
    finally:
        dut.close()


def test_sample_reads_the_port_from_the_build(tmp_path: Path) -> None:
    sample = _sample_test()
    (tmp_path / "CMakeCache.txt").write_text(
        "// comment\nUTVM_RPC_QEMU_PORT:STRING=4321\nUTVM_MODEL:FILEPATH=/m.tflite\n")
    assert sample.cmake_cache_value(tmp_path, "UTVM_RPC_QEMU_PORT") == "4321"
    assert sample.cmake_cache_value(tmp_path, "NOPE") is None
    assert sample.cmake_cache_value(tmp_path / "none", "UTVM_RPC_QEMU_PORT") is None
