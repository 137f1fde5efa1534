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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from mac_cases import conv_case
from utvm.configs.log import read_log
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
    _zephyr_tools()
    board = "mps2_an385" if version() < (3, 7) else "mps2/an385"
    build = tmp_path / "build"
    port = _free_port()
    _build(SAMPLE, build, board, f"-DUTVM_RPC_QEMU_PORT={port}")
    assert "sleep=on" in (build / "build.ninja").read_text(), "QEMU still runs with sleep=off"

    with _run_target(build, READY):
        with RpcClient.over_url(f"socket://127.0.0.1:{port}") as client:
            client.sync()
            result = soak(client, 0, 250)
    assert result.requests >= 250
    assert (result.resends, result.timeouts, result.frame_errors) == (0, 0, 0)
    assert result.mismatches == 0
    # Running code is timed by instruction count: the same cycles, up to a tick.
    assert max(result.cycles_per_run) - min(result.cycles_per_run) <= 2


def _zephyr_tools() -> None:
    require_zephyr()
    for tool in ("arm-none-eabi-gcc", "qemu-system-arm", "ninja"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not on PATH")


def _build(source: Path, build: Path, board: str, *args: str) -> str:
    """Configures and builds a Zephyr application (as west build does); the build's output."""
    r = subprocess.run(["cmake", "-S", str(source), "-B", str(build), "-GNinja", f"-DBOARD={board}",
                        f"-DPython3_EXECUTABLE={sys.executable}", *args],
                       capture_output=True, text=True, timeout=900, check=False)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    b = subprocess.run(["cmake", "--build", str(build), "--", "-j2"],
                       capture_output=True, text=True, timeout=1800, check=False)
    assert b.returncode == 0, b.stdout[-4000:] + b.stderr[-4000:]
    return r.stdout + r.stderr + b.stdout + b.stderr


@contextmanager
def _run_target(build: Path, until: re.Pattern[str], timeout_s: float = 120) -> Iterator[str]:
    """Zephyr's QEMU run target (ninja run) until the console matches ``until``; the console so
    far. QEMU is stopped on leaving."""
    qemu = subprocess.Popen(["ninja", "-C", str(build), "run"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        assert qemu.stdout is not None
        os.set_blocking(qemu.stdout.fileno(), False)
        console = b""
        deadline = time.monotonic() + timeout_s
        while not until.search(console.decode(errors="replace")):
            assert time.monotonic() < deadline and qemu.poll() is None, console.decode()
            console += qemu.stdout.read() or b""
            time.sleep(0.1)
        yield console.decode(errors="replace")
    finally:
        os.killpg(qemu.pid, signal.SIGTERM)
        qemu.wait(timeout=30)


@pytest.mark.slow
def test_tune_through_the_zephyr_sample_then_build_with_the_log(tmp_path: Path) -> None:
    """utvm tune --device with the sample's reflash.py as --flash: the candidates of a 3x3
    convolution (2 configurations on the Cortex-M55 of mps3_an547, CONFIG_FPU=y: Helium) served
    by the Zephyr sample under its QEMU run target, the same choice as utvm's own QEMU; the log
    then applied by tvm_add_model(... TUNING_LOG ...) in a Zephyr build of utvm_inference that
    passes."""
    _zephyr_tools()
    from op_check import side_by_side

    zephyr_board = ("mps3_an547" if version() < (3, 7) else
                    "mps3/an547" if version() < (4, 0) else "mps3/corstone300/an547")
    model = tmp_path / "conv.tflite"
    model.write_bytes(side_by_side([conv_case(2, (3, 3), 4, 8)]))
    env = {**os.environ, "PYTHONPATH": str(REPO / "scripts")}
    port = _free_port()
    server_build = tmp_path / "server"
    flash = (f"{sys.executable} {SAMPLE / 'reflash.py'} --qemu -b {zephyr_board} -d {server_build} "
             f"--models {{build}} -- -DUTVM_RPC_QEMU_PORT={port}")
    logs = {}
    try:
        for where, extra in (("device", ["--device", f"socket://127.0.0.1:{port}", "--flash", flash]),
                             ("qemu", [])):
            logs[where] = tmp_path / f"{where}.json"
            r = subprocess.run([sys.executable, "-m", "utvm", "tune", str(model), "--board", "mps3/an547",
                                "--trials", "4", "-o", str(logs[where]), *extra],
                               capture_output=True, text=True, timeout=1800, env=env, check=False)
            assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    finally:
        subprocess.run([sys.executable, str(SAMPLE / "reflash.py"), "--stop", "-d", str(server_build)],
                       check=False)
    (device,), (direct,) = read_log(logs["device"]), read_log(logs["qemu"])
    assert device["measured_on"] == "device" and device["key"] == direct["key"]
    assert device["config"] == direct["config"]

    app = tmp_path / "inference"
    out = _build(REPO / "samples" / "utvm_inference", app, zephyr_board,
                 f"-DUTVM_MODEL={model}", f"-DUTVM_TUNING_LOG={logs['device']}")
    assert "1 of 1 operators take a tuned configuration" in out, out[-3000:]
    with _run_target(app, re.compile(r"utvm_inference: (PASS|FAIL)")) as console:
        assert "utvm_inference: PASS" in console, console
