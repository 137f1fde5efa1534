"""The RPC server as bare-metal firmware (lib/crt/ports/baremetal/rpc_uart.c) on QEMU
mps2/an385, driven over the emulated CMSDK UART through a local TCP socket."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from utvm.errors import UtvmError
from utvm.rpc import protocol as p
from utvm.rpc.client import RpcClient
from utvm.rpc.runner import profile_from_client
from utvm.rpc.server import ServerSources, build_qemu_server, connect

ROOT = Path(__file__).resolve().parents[1]
CRT = ROOT / "lib" / "crt"
BOARD = "mps2/an385"


def _toolchain_missing() -> str | None:
    from utvm.run.qemu import find_tools

    try:
        find_tools(qemu=True)
    except UtvmError as exc:
        return str(exc)
    return None


@pytest.fixture(scope="module")
def qemu_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RpcClient]:
    reason = _toolchain_missing()
    if reason is not None:
        pytest.skip(f"bare-metal RPC test needs the Arm toolchain and QEMU: {reason}")
    out = tmp_path_factory.mktemp("rpc_qemu")
    src = ServerSources(
        sources=(
            CRT / "src" / "rpc_server.c",
            CRT / "ports" / "baremetal" / "rpc_uart.c",
            CRT / "ports" / "baremetal" / "platform_baremetal.c",
            ROOT / "tests" / "fixtures" / "rpc" / "fixture_models.c",
        ),
        include_dirs=(CRT / "include",),
        defines={
            "UTVM_RPC_MAIN": "",
            "FIXTURE_WORK": "200",
            "UTVM_RPC_MAX_PAYLOAD": "256u",
        },
    )
    elf = build_qemu_server(BOARD, src, out)
    with connect(BOARD, elf, log_path=out / "qemu.log", timeout_s=10.0) as client:
        yield client


def test_qemu_info(qemu_client: RpcClient) -> None:
    info = qemu_client.info()
    assert info.num_models == 2 and info.max_payload == 256
    assert [m.name for m in qemu_client.models()] == ["add_one", "mul_f32"]


def test_qemu_run_and_profile(qemu_client: RpcClient) -> None:
    x = np.arange(-4, 4, dtype=np.int8).reshape(1, 8)
    qemu_client.set_inputs(0, [x])
    run = qemu_client.run(0)
    np.testing.assert_array_equal(qemu_client.get_outputs(0)[0], x + 1)
    prof = profile_from_client(qemu_client, 0)
    op_sum = sum(o.cycles for o in prof.operators)
    assert prof.total_cycles == run.cycles
    # FPGAIO counter ticks under -icount: deterministic, the two operators are the run.
    assert 0.95 * run.cycles <= op_sum <= run.cycles


def test_qemu_float_model(qemu_client: RpcClient) -> None:
    a = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    b = np.full((2, 3), 3.0, np.float32)
    qemu_client.set_inputs(1, [a, b])
    qemu_client.run(1)
    np.testing.assert_array_equal(qemu_client.get_outputs(1)[0], a * b)


def test_qemu_recovers_from_damaged_frames(qemu_client: RpcClient) -> None:
    bad = bytearray(p.encode_frame(p.Cmd.INFO, 90))
    bad[-1] ^= 0x40
    qemu_client.send_raw(bytes(bad) + b"\x13\x37\xa5")
    reply = qemu_client.read_frames(5.0)
    assert reply and reply[0].is_frame_error and reply[0].payload[0] == p.Status.ERR_CRC
    # The trailing A5 leaves the parser waiting for a second sync byte: the inter-byte
    # timeout (virtual time) or the next frame resolves it.
    assert qemu_client.ping(b"uart") == b"uart"


def test_qemu_profile_of_mlf(tmp_path: Path) -> None:
    reason = _toolchain_missing()
    if reason is not None:
        pytest.skip(f"bare-metal RPC test needs the Arm toolchain and QEMU: {reason}")
    from rpc_check import make_fixture_mlf
    from utvm.rpc.runner import profile

    mlf = make_fixture_mlf(tmp_path)
    prof = profile(mlf, BOARD, work_dir=tmp_path / "w", seed=3)
    op_sum = sum(o.cycles for o in prof.operators)
    assert [o.name for o in prof.operators] == [
        "tvmgen_add_one_add",
        "tvmgen_add_one_copy",
    ]
    assert 0.95 * prof.total_cycles <= op_sum <= prof.total_cycles
