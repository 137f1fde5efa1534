"""Twister pytest harness for samples/utvm_rpc_server (``harness: pytest``).

The ``dut`` fixture (pytest-twister-harness) boots the image and reads its console lines in
a thread of its own, up to every newline, for as long as the device runs: the console
(QEMU's FIFO, or the serial port on hardware) cannot also carry binary frames to a second
reader, which would get them split. So the console carries the "ready" line only, and the
RPC runs on a UART of its own (boards/mps2_an385.overlay: UART1), which the sample's
CMakeLists.txt connects, under QEMU, to a TCP port of the host (UTVM_RPC_QEMU_PORT in the
build's CMakeCache.txt). On hardware, UTVM_RPC_DEVICE names the serial port of the board's
RPC UART.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "scripts"))

from utvm.rpc import protocol as p  # noqa: E402
from utvm.rpc.client import RpcClient  # noqa: E402
from utvm.rpc.runner import default_inputs, profile_from_client  # noqa: E402

READY = r"utvm_rpc_server: ready, (\d+) model\(s\), max payload (\d+), on (\S+)"


def cmake_cache_value(build_dir: Path, name: str) -> str | None:
    """The value of ``name`` in ``build_dir/CMakeCache.txt`` (None when absent)."""
    cache = build_dir / "CMakeCache.txt"
    if not cache.is_file():
        return None
    for line in cache.read_text(errors="replace").splitlines():
        key, sep, value = line.partition("=")
        if sep and key.split(":", 1)[0] == name:
            return value
    return None


def rpc_url(dut: Any) -> str:
    """Waits for the ready line on the console; the pyserial URL of the RPC UART."""
    lines = dut.readlines_until(regex=READY, timeout=60)
    ready = re.search(READY, lines[-1])
    assert ready is not None and int(ready.group(1)) >= 1, lines[-1]
    config = dut.device_config
    if config.type == "qemu":
        # the application's build directory: app_build_dir since sysbuild (Zephyr 3.7), the
        # one build_dir before (3.4 to 3.6)
        app_build_dir = getattr(config, "app_build_dir", None) or config.build_dir
        port = cmake_cache_value(Path(app_build_dir), "UTVM_RPC_QEMU_PORT")
        if not port:
            pytest.fail(f"no UTVM_RPC_QEMU_PORT in {app_build_dir}/CMakeCache.txt: "
                        "the RPC UART is not connected to the host")
        return f"socket://127.0.0.1:{port}"
    device = os.environ.get("UTVM_RPC_DEVICE")
    if not device:
        pytest.skip(f"{config.type}: set UTVM_RPC_DEVICE to the serial port of the board's RPC "
                    "UART (devicetree chosen utvm,rpc-uart), not the console the harness reads")
    return device


def test_rpc_server(dut: Any) -> None:
    url = rpc_url(dut)
    with RpcClient.over_url(url, int(getattr(dut.device_config, "baud", 115200)),
                            timeout_s=10.0) as client:
        client.sync(timeout_s=10.0)
        (model,) = client.models()
        assert model.profiling, "prj.conf sets CONFIG_UTVM_PROFILE=y"

        inputs = default_inputs(model, seed=1)
        client.set_inputs(0, inputs)
        run = client.run(0, timeout_s=120.0)
        outputs = client.get_outputs(0)
        assert [o.shape for o in outputs] == [t.shape for t in model.outputs]

        # Same inputs, same outputs: the run is repeatable through the server.
        client.set_inputs(0, inputs)
        client.run(0, timeout_s=120.0)
        for a, b in zip(outputs, client.get_outputs(0)):
            np.testing.assert_array_equal(a, b)

        prof = profile_from_client(client, 0)
        op_sum = sum(o.cycles for o in prof.operators)
        assert len(prof.operators) == model.num_ops
        assert op_sum <= prof.total_cycles
        assert prof.total_cycles > 0 and run.cycles > 0

        # A damaged frame is answered with an error and the server keeps serving.
        bad = bytearray(p.encode_frame(p.Cmd.INFO, 99))
        bad[-1] ^= 0xFF
        client.send_raw(bytes(bad))
        assert client.ping(b"alive") == b"alive"
    # The console went on carrying text only: the harness still reads it line by line.
    assert dut.is_device_connected()
