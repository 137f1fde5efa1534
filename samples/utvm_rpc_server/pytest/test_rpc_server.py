"""Twister pytest harness for samples/utvm_rpc_server (``harness: pytest``).

The ``dut`` fixture (pytest-twister-harness) boots the image and reads its console lines;
once the sample prints "utvm_rpc_server: ready" the UART carries binary frames, so the
test closes the harness's line reader and talks to the same UART with utvm's RpcClient:
the serial port on hardware, QEMU's FIFO pair (``qemu-fifo.in`` / ``qemu-fifo.out`` in
the build directory) on QEMU.
"""

from __future__ import annotations

import os
import select
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "scripts"))

from utvm.rpc import protocol as p
from utvm.rpc.client import RpcClient, RpcClosed
from utvm.rpc.runner import default_inputs, profile_from_client


class FifoTransport:
    """QEMU's ``-serial pipe:<base>``: write to ``<base>.in``, read from ``<base>.out``."""

    def __init__(self, base: Path) -> None:
        self._out = os.open(f"{base}.out", os.O_RDONLY | os.O_NONBLOCK)
        self._in = os.open(f"{base}.in", os.O_WRONLY)

    def write(self, data: bytes) -> None:
        os.write(self._in, data)

    def read(self, max_bytes: int, timeout_s: float) -> bytes:
        ready, _, _ = select.select([self._out], [], [], max(0.0, timeout_s))
        if not ready:
            return b""
        data = os.read(self._out, max_bytes)
        if not data:
            raise RpcClosed("QEMU closed its serial FIFO")
        return data

    def close(self) -> None:
        os.close(self._in)
        os.close(self._out)


def _client(dut: Any) -> RpcClient:
    dut.readlines_until(regex="utvm_rpc_server: ready", timeout=60)
    config = dut.device_config
    dut.disconnect()
    time.sleep(0.2)
    if config.type == "hardware":
        return RpcClient.over_url(config.serial, int(getattr(config, "baud", 115200)))
    return RpcClient(
        FifoTransport(Path(config.build_dir) / "qemu-fifo"), timeout_s=10.0
    )


def test_rpc_server(dut: Any) -> None:
    with _client(dut) as client:
        client.sync(timeout_s=10.0)
        (model,) = client.models()
        assert model.profiling, "prj.conf sets CONFIG_TVM_PROFILE=y"

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
