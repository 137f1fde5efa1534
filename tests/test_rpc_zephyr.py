"""samples/utvm_rpc_server built with Zephyr for mps2_an385 and run by Zephyr's own QEMU
target (``ninja run``: Zephyr's QEMU flags, RPC on UART1 over a TCP port of the host), then
driven over RPC for hundreds of consecutive requests.

Under Zephyr's default ``-icount shift=7,align=off,sleep=off`` the server's clock jumped to its
inter-byte timeout's deadline whenever it idled between two bytes of a request, so requests
were cut as truncated (frame errors, resends, timeouts). The sample's Kconfig makes QEMU
targets run with ``sleep=on``; this checks the run target has it and that no request needs a
resend. Needs ZEPHYR_BASE (skips with the reason otherwise), arm-none-eabi-gcc and
qemu-system-arm.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from utvm.rpc.client import RpcClient
from utvm.rpc.runner import soak
from zephyr_tree import require_zephyr, version

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "samples" / "utvm_rpc_server"
READY = re.compile(r"utvm_rpc_server: ready, (\d+) model\(s\)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_zephyr_rpc_server_under_zephyrs_qemu_run_target(tmp_path: Path) -> None:
    require_zephyr()
    for tool in ("arm-none-eabi-gcc", "qemu-system-arm", "ninja"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not on PATH")
    board = "mps2_an385" if version() < (3, 7) else "mps2/an385"
    build = tmp_path / "build"
    port = _free_port()
    r = subprocess.run(
        ["cmake", "-S", str(SAMPLE), "-B", str(build), "-GNinja", f"-DBOARD={board}",
         f"-DUTVM_RPC_QEMU_PORT={port}", f"-DPython3_EXECUTABLE={sys.executable}"],
        capture_output=True, text=True, timeout=900, check=False)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    r = subprocess.run(["cmake", "--build", str(build), "--", "-j2"],
                       capture_output=True, text=True, timeout=1800, check=False)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    assert "sleep=on" in (build / "build.ninja").read_text(), "QEMU still runs with sleep=off"

    qemu = subprocess.Popen(["ninja", "-C", str(build), "run"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        assert qemu.stdout is not None
        os.set_blocking(qemu.stdout.fileno(), False)
        console = b""
        deadline = time.monotonic() + 60
        while not READY.search(console.decode(errors="replace")):
            assert time.monotonic() < deadline and qemu.poll() is None, console.decode()
            console += qemu.stdout.read() or b""
            time.sleep(0.1)
        with RpcClient.over_url(f"socket://127.0.0.1:{port}") as client:
            client.sync()
            result = soak(client, 0, 250)
        assert result.requests >= 250
        assert (result.resends, result.timeouts, result.frame_errors) == (0, 0, 0)
        assert result.mismatches == 0
        # Running code is timed by instruction count: the same cycles, up to a tick.
        assert max(result.cycles_per_run) - min(result.cycles_per_run) <= 2
    finally:
        os.killpg(qemu.pid, signal.SIGTERM)
        qemu.wait(timeout=30)
