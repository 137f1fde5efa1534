"""RPC protocol: Python framing, and the C server (lib/crt/src/rpc_server.c) run as a host
process over pipes with the handwritten fixture models of tests/fixtures/rpc/.

Covers every command, and damaged input: bad CRC, truncated frames, oversized lengths,
unknown commands, out-of-range indices and offsets, random garbage, a dropped byte; after
each the next good frame must be served.
"""

from __future__ import annotations

import dataclasses
import struct
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rpc_check import MAX_PAYLOAD, build_host_server, make_fixture_mlf
from utvm.rpc import protocol as p
from utvm.rpc.client import PipeTransport, RpcClient, RpcError, RpcTimeout, Transport
from utvm.rpc.runner import ProfileResult, profile_from_client, run_over_rpc
from utvm.rpc.runner import profile as rpc_profile

INTERBYTE_MS = 60


@pytest.fixture(scope="module")
def server_exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_host_server(tmp_path_factory.mktemp("rpc"))


@pytest.fixture
def client(server_exe: Path) -> Iterator[RpcClient]:
    argv = [str(server_exe), "--interbyte-ms", str(INTERBYTE_MS)]
    with RpcClient.over_process(argv, timeout_s=2.0, interbyte_timeout_s=0.1) as c:
        c.sync()
        yield c


# ---------------------------------------------------------------------------------------------
# Protocol (pure Python)


def test_crc16_check_value() -> None:
    # CRC-16/CCITT-FALSE catalogue check value.
    assert p.crc16(b"123456789") == 0x29B1


def test_encode_layout() -> None:
    frame = p.encode_frame(p.Cmd.RUN, 7, b"\x01")
    assert frame[:2] == b"\xa5\x5a"
    assert struct.unpack_from("<HBB", frame, 2) == (1, 0x20, 7)
    assert frame[6:7] == b"\x01"
    assert struct.unpack_from("<H", frame, 7)[0] == p.crc16(frame[2:7])
    assert len(frame) == p.OVERHEAD + 1


def test_decoder_roundtrip_any_split() -> None:
    frames = [p.encode_frame(c, i + 1, bytes([i] * i)) for i, c in enumerate(p.Cmd)]
    stream = b"".join(frames)
    for step in (1, 2, 3, 7, len(stream)):
        dec = p.FrameDecoder()
        got = []
        for i in range(0, len(stream), step):
            got += dec.feed(stream[i : i + step])
        assert [(f.cmd, f.seq, f.payload) for f in got] == [
            (int(c), i + 1, bytes([i] * i)) for i, c in enumerate(p.Cmd)
        ]


def test_decoder_resyncs_after_garbage_and_bad_crc() -> None:
    good = p.encode_frame(p.Cmd.PING, 9, b"abc")
    bad = bytearray(p.encode_frame(p.Cmd.PING, 8, b"xyz"))
    bad[-1] ^= 0xFF
    stream = b"\x00\xa5\xa5garbage\xa5" + bytes(bad) + b"\xa5\x5a\xff\xff" + good
    dec = p.FrameDecoder(max_payload=1000)
    got = dec.feed(stream)
    assert [(f.cmd, f.seq, f.payload) for f in got] == [(0, 9, b"abc")]
    assert dec.bad_frames >= 2


def test_decoder_timeout_keeps_embedded_frame() -> None:
    good = p.encode_frame(p.Cmd.INFO, 3)
    # A header announcing 200 bytes swallows the good frame; the timeout rescans it.
    dec = p.FrameDecoder()
    assert dec.feed(b"\xa5\x5a\xc8\x00\x01\x02" + good) == []
    assert [f.seq for f in dec.timeout()] == [3]
    assert dec.pending == 0


@given(st.binary(max_size=300), st.binary(max_size=40))
def test_decoder_finds_frame_after_any_prefix(prefix: bytes, payload: bytes) -> None:
    good = p.encode_frame(p.Cmd.PING, 77, payload)
    dec = p.FrameDecoder()
    got = dec.feed(prefix + good)
    got += dec.timeout()
    assert any(f.seq == 77 and f.payload == payload and f.cmd == 0 for f in got)


# ---------------------------------------------------------------------------------------------
# Host server: commands


def test_info_and_model_info(client: RpcClient) -> None:
    info = client.info()
    assert info.version == p.PROTOCOL_VERSION
    assert info.num_models == 2
    assert info.max_payload == MAX_PAYLOAD
    assert info.interbyte_timeout_ms == INTERBYTE_MS
    add, mul = client.models()
    assert (add.name, add.workspace_size, add.num_ops) == ("add_one", 16, 2)
    assert add.profiling and not add.io_in_pool
    (x,) = add.inputs
    assert (x.name, x.dtype, x.shape, x.size_bytes) == ("x", "int8", (1, 8), 8)
    assert (x.scale, x.zero_point) == (0.5, -3)
    assert mul.name == "mul_f32" and mul.io_in_pool and not mul.profiling
    assert [t.name for t in mul.inputs] == ["a", "b"]
    assert mul.outputs[0].dtype == "float32" and mul.outputs[0].shape == (2, 3)
    assert client.op_names(0) == ["tvmgen_add_one_add", "tvmgen_add_one_copy"]
    assert client.op_names(1) == []


def test_ping_echo(client: RpcClient) -> None:
    data = bytes(range(256)) * 2
    with pytest.raises(RpcError):  # 512 bytes + nothing fits exactly; 513 does not
        client.ping(data + b"!")
    assert client.ping(data) == data


def test_write_run_read_profile(client: RpcClient) -> None:
    x = np.array([[-128, -1, 0, 1, 5, 100, 126, 127]], dtype=np.int8)
    client.set_inputs(0, [x])
    assert client.read_input(0, 0) == x.tobytes()
    run = client.run(0)
    assert run.model_status == 0 and run.cycles > 0
    (y,) = client.get_outputs(0)
    np.testing.assert_array_equal(
        y, np.minimum(x.astype(np.int16) + 1, 127).astype(np.int8)
    )
    prof = profile_from_client(client, 0)
    assert isinstance(prof, ProfileResult)
    assert prof.total_cycles == run.cycles
    assert [o.name for o in prof.operators] == [
        "tvmgen_add_one_add",
        "tvmgen_add_one_copy",
    ]
    op_sum = sum(o.cycles for o in prof.operators)
    assert 0 < op_sum <= prof.total_cycles
    js = prof.to_json()
    assert set(js) == {"total_cycles", "operators"}
    ops = js["operators"]
    assert isinstance(ops, list)
    assert all(set(o) == {"name", "cycles", "share"} for o in ops)


def test_partial_writes_and_reads(client: RpcClient) -> None:
    client.write_input(0, 0, b"\x10\x11\x12", offset=5)
    client.write_input(0, 0, b"\x01\x02", offset=0)
    assert client.read_input(0, 0) == b"\x01\x02\x00\x00\x00\x10\x11\x12"
    client.run(0)
    assert client.read_output(0, 0, length=3, offset=5) == b"\x11\x12\x13"


def test_io_in_pool_model(client: RpcClient) -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.full((2, 3), -1.5, dtype=np.float32)
    client.set_inputs(1, [a, b])
    client.run(1)
    (c,) = client.get_outputs(1)
    np.testing.assert_array_equal(c, a * b)
    # Inputs stay staged: a second run gives the same result.
    client.run(1)
    np.testing.assert_array_equal(client.get_outputs(1)[0], a * b)


def test_repeated_run_counts_every_run(client: RpcClient) -> None:
    """RUN with a repeat count (protocol 2): the model runs that many times, the outputs are
    those of one run (an I/O-in-pool model gets its inputs again before each run) and PROFILE's
    total is the mean per run."""
    x = np.arange(-4, 4, dtype=np.int8).reshape(1, 8)
    client.set_inputs(0, [x])
    many = client.run(0, repeats=2000)
    assert many.model_status == 0
    np.testing.assert_array_equal(client.get_outputs(0)[0], x + 1)
    assert profile_from_client(client, 0).total_cycles == many.cycles // 2000
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.full((2, 3), 3.0, dtype=np.float32)
    client.set_inputs(1, [a, b])
    client.run(1, repeats=7)
    np.testing.assert_array_equal(client.get_outputs(1)[0], a * b)


def test_repeated_run_on_a_version_1_server_sends_one_run_per_repeat(client: RpcClient) -> None:
    sent: list[bytes] = []
    request = client.request

    def spy(cmd: int, payload: bytes = b"", **kw):  # type: ignore[no-untyped-def]
        if cmd == p.Cmd.RUN:
            sent.append(payload)
        return request(cmd, payload, **kw)

    info = client.info()
    client._info = p.ServerInfo(1, *dataclasses.astuple(info)[1:])  # what a version 1 server says
    client.request = spy  # type: ignore[method-assign]
    try:
        run = client.run(0, repeats=3)
    finally:
        client.request = request  # type: ignore[method-assign]
        client._info = info
    assert sent == [p.req_model(0)] * 3 and run.model_status == 0


def test_run_failure_is_reported(client: RpcClient) -> None:
    client.set_inputs(
        1, [np.full((2, 3), -1e31, np.float32), np.ones((2, 3), np.float32)]
    )
    with pytest.raises(RpcError) as err:
        client.run(1)
    assert err.value.status == p.Status.ERR_RUN_FAILED
    assert "model returned 3" in str(err.value)
    assert client.ping(b"alive") == b"alive"


def test_reset_clears_state(client: RpcClient) -> None:
    client.write_input(0, 0, b"\x07" * 8)
    client.run(0)
    client.reset()
    assert client.read_input(0, 0) == bytes(8)
    with pytest.raises(RpcError) as err:
        client.profile(0)
    assert err.value.status == p.Status.ERR_NO_RUN


def test_profile_unsupported_without_op_cycles(client: RpcClient) -> None:
    with pytest.raises(RpcError) as err:
        client.profile(1)
    assert err.value.status == p.Status.ERR_UNSUPPORTED


# ---------------------------------------------------------------------------------------------
# Host server: damaged and invalid frames


def _replies(client: RpcClient, n: int, timeout_s: float = 2.0) -> list[p.Frame]:
    got: list[p.Frame] = []
    deadline = time.monotonic() + timeout_s
    while len(got) < n and time.monotonic() < deadline:
        got += client.read_frames(deadline - time.monotonic())
    return got


def _assert_serving(client: RpcClient) -> None:
    token = b"still-serving"
    client.send_raw(p.encode_frame(p.Cmd.PING, 250, token))
    (reply,) = _replies(client, 1)
    assert (reply.cmd, reply.seq, reply.payload) == (0x80, 250, b"\x00" + token)


def test_bad_crc(client: RpcClient) -> None:
    frame = bytearray(p.encode_frame(p.Cmd.INFO, 42))
    frame[-2] ^= 0x01
    client.send_raw(bytes(frame))
    (reply,) = _replies(client, 1)
    assert reply.cmd == p.FRAME_ERROR and reply.seq == 42
    assert reply.payload == bytes([p.Status.ERR_CRC, p.Cmd.INFO])
    _assert_serving(client)


def test_truncated_frame_times_out(client: RpcClient) -> None:
    frame = p.encode_frame(
        p.Cmd.WRITE_INPUT, 43, p.req_write_input(0, 0, 0, b"12345678")
    )
    t0 = time.monotonic()
    client.send_raw(frame[:-3])
    (reply,) = _replies(client, 1)
    elapsed = time.monotonic() - t0
    assert reply.cmd == p.FRAME_ERROR and reply.seq == 43
    assert reply.payload == bytes([p.Status.ERR_TRUNCATED, p.Cmd.WRITE_INPUT])
    assert elapsed >= INTERBYTE_MS / 1000 * 0.8
    _assert_serving(client)


def test_truncated_header_times_out(client: RpcClient) -> None:
    client.send_raw(b"\xa5\x5a\x03")
    (reply,) = _replies(client, 1)
    assert reply.cmd == p.FRAME_ERROR
    assert reply.payload[0] == p.Status.ERR_TRUNCATED
    _assert_serving(client)


def test_oversized_length(client: RpcClient) -> None:
    client.send_raw(b"\xa5\x5a" + struct.pack("<HBB", 0xFFFF, 0x10, 44) + b"junk")
    (reply,) = _replies(client, 1)
    assert reply.cmd == p.FRAME_ERROR and reply.seq == 44
    assert reply.payload == bytes([p.Status.ERR_TOO_LONG, 0x10])
    _assert_serving(client)


def test_write_larger_than_frame_buffer(client: RpcClient) -> None:
    too_big = p.req_write_input(0, 0, 0, bytes(MAX_PAYLOAD))
    client.send_raw(p.encode_frame(p.Cmd.WRITE_INPUT, 45, too_big))
    replies = _replies(client, 1)
    assert replies[0].is_frame_error
    assert replies[0].payload == bytes([p.Status.ERR_TOO_LONG, p.Cmd.WRITE_INPUT])
    _assert_serving(client)


def test_unknown_command(client: RpcClient) -> None:
    client.send_raw(p.encode_frame(0x55, 45, b"?"))
    (reply,) = _replies(client, 1)
    assert (reply.cmd, reply.seq, reply.payload) == (
        0xD5,
        45,
        bytes([p.Status.ERR_UNKNOWN_CMD]),
    )
    _assert_serving(client)


def test_reply_frames_are_ignored(client: RpcClient) -> None:
    # Our own replies echoed back (a terminal in echo mode) must not start a ping-pong.
    client.send_raw(p.encode_frame(0x81, 46, b"\x00"))
    assert client.read_frames(0.3) == []
    _assert_serving(client)


@pytest.mark.parametrize(
    ("cmd", "payload", "status"),
    [
        (p.Cmd.MODEL_INFO, p.req_model(2), p.Status.ERR_BAD_MODEL),
        (p.Cmd.MODEL_INFO, b"", p.Status.ERR_BAD_LENGTH),
        (p.Cmd.OP_NAMES, p.req_op_names(0, 3), p.Status.ERR_BAD_RANGE),
        (p.Cmd.OP_NAMES, p.req_op_names(9, 0), p.Status.ERR_BAD_MODEL),
        (p.Cmd.WRITE_INPUT, p.req_write_input(3, 0, 0, b"1"), p.Status.ERR_BAD_MODEL),
        (p.Cmd.WRITE_INPUT, p.req_write_input(0, 1, 0, b"1"), p.Status.ERR_BAD_TENSOR),
        (p.Cmd.WRITE_INPUT, p.req_write_input(0, 0, 7, b"12"), p.Status.ERR_BAD_RANGE),
        (
            p.Cmd.WRITE_INPUT,
            p.req_write_input(0, 0, 0xFFFFFFFF, b"1"),
            p.Status.ERR_BAD_RANGE,
        ),
        (p.Cmd.WRITE_INPUT, b"\x00\x00\x00", p.Status.ERR_BAD_LENGTH),
        (p.Cmd.READ_OUTPUT, p.req_read(0, 1, 0, 1), p.Status.ERR_BAD_TENSOR),
        (p.Cmd.READ_OUTPUT, p.req_read(0, 0, 0xFFFFFFFF, 2), p.Status.ERR_BAD_RANGE),
        (p.Cmd.READ_OUTPUT, p.req_read(0, 0, 0, 9), p.Status.ERR_BAD_RANGE),
        (p.Cmd.READ_INPUT, p.req_read(1, 2, 0, 1), p.Status.ERR_BAD_TENSOR),
        (p.Cmd.READ_INPUT, p.req_read(0, 0, 0, 1) + b"\x00", p.Status.ERR_BAD_LENGTH),
        (p.Cmd.RUN, p.req_model(200), p.Status.ERR_BAD_MODEL),
        (p.Cmd.RUN, b"", p.Status.ERR_BAD_LENGTH),
        (p.Cmd.RUN, b"\x00\x01", p.Status.ERR_BAD_LENGTH),
        (p.Cmd.RUN, p.req_model(0) + b"\x00\x00", p.Status.ERR_BAD_RANGE),
        (p.Cmd.RUN, p.req_model(9) + b"\x02\x00", p.Status.ERR_BAD_MODEL),
        (p.Cmd.PROFILE, p.req_model(2), p.Status.ERR_BAD_MODEL),
        (p.Cmd.INFO, b"\x00", p.Status.ERR_BAD_LENGTH),
        (p.Cmd.RESET, b"\x00", p.Status.ERR_BAD_LENGTH),
    ],
)
def test_invalid_requests(
    client: RpcClient, cmd: int, payload: bytes, status: int
) -> None:
    client.send_raw(p.encode_frame(cmd, 47, payload))
    (reply,) = _replies(client, 1)
    assert (reply.cmd, reply.seq) == (cmd | 0x80, 47)
    assert reply.payload == bytes([status])
    _assert_serving(client)


def test_dropped_byte_then_next_frame(client: RpcClient) -> None:
    write = p.req_write_input(0, 0, 0, b"ABCD")
    broken = bytearray(p.encode_frame(p.Cmd.WRITE_INPUT, 48, write))
    del broken[9]
    ping = p.encode_frame(p.Cmd.PING, 49, b"next")
    client.send_raw(bytes(broken) + ping)
    replies = _replies(client, 2)
    assert replies[0].cmd == p.FRAME_ERROR and replies[0].payload[0] == p.Status.ERR_CRC
    assert (replies[1].cmd, replies[1].seq, replies[1].payload) == (
        0x80,
        49,
        b"\x00next",
    )


def test_frame_swallowed_by_long_header_is_served_after_timeout(
    client: RpcClient,
) -> None:
    # A stray header announcing 300 bytes swallows the good frame; the inter-byte timeout
    # makes the server rescan what it buffered and serve the frame inside.
    ping = p.encode_frame(p.Cmd.PING, 50, b"inner")
    client.send_raw(b"\xa5\x5a\x2c\x01\x00\x07" + ping)
    replies = _replies(client, 2)
    assert (
        replies[0].cmd == p.FRAME_ERROR
        and replies[0].payload[0] == p.Status.ERR_TRUNCATED
    )
    assert (replies[1].seq, replies[1].payload) == (50, b"\x00inner")


def test_random_garbage_then_good_frame(client: RpcClient) -> None:
    rng = np.random.default_rng(1234)
    garbage = rng.integers(0, 256, size=20000, dtype=np.uint8).tobytes()
    # Sprinkle sync pairs so that many candidate frames start inside the garbage.
    garbage = garbage.replace(b"\x00", b"\xa5\x5a")
    client.send_raw(garbage)
    for reply in _replies(client, 10_000, timeout_s=1.0):
        assert reply.cmd == p.FRAME_ERROR or reply.is_reply
    # The client's request/resend logic gets through whatever state the server is in.
    assert client.ping(b"after garbage") == b"after garbage"
    _assert_serving(client)


def test_byte_at_a_time_with_gaps_below_timeout(client: RpcClient) -> None:
    frame = p.encode_frame(p.Cmd.PING, 51, b"slow")
    for b in frame:
        client.send_raw(bytes([b]))
        time.sleep(INTERBYTE_MS / 1000 / 4)
    (reply,) = _replies(client, 1)
    assert (reply.seq, reply.payload) == (51, b"\x00slow")


def test_client_resends_after_damaged_request(client: RpcClient) -> None:
    # Half a frame first: the client's next request is swallowed by it, and still answered
    # (after the server's inter-byte timeout, or by a resend).
    client.send_raw(b"\xa5\x5a\x10\x00\x00\x01")
    assert client.ping(b"retry") == b"retry"


def test_client_times_out_without_server() -> None:
    # `cat > /dev/null` never answers.
    argv = ["sh", "-c", "cat > /dev/null"]
    with RpcClient.over_process(argv, timeout_s=0.2, retries=1) as c:
        with pytest.raises(RpcTimeout):
            c.ping(b"x")
        assert c.resends == 1


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(st.lists(st.binary(max_size=200), max_size=4))
def test_any_input_keeps_server_alive(client: RpcClient, chunks: list[bytes]) -> None:
    for chunk in chunks:
        client.send_raw(chunk)
    for reply in client.read_frames(0.02):
        assert reply.cmd == p.FRAME_ERROR or reply.is_reply
    assert client.ping(b"ok") == b"ok"


# ---------------------------------------------------------------------------------------------
# run_over_rpc / profile on an MLF-shaped directory holding the fixture model


def test_run_over_rpc_and_profile_host(tmp_path: Path) -> None:
    mlf = make_fixture_mlf(tmp_path)
    x = np.array([[1, 2, 3, 127, -128, 0, 5, 6]], np.int8)
    result, prof = run_over_rpc(
        mlf, "host", inputs=[x], work_dir=tmp_path / "w", with_profile=True
    )
    assert result.model == "add_one"
    np.testing.assert_array_equal(
        result.outputs[0].array, np.array([[2, 3, 4, 127, -127, 1, 6, 7]])
    )
    assert result.to_json()["cycles"] == result.cycles
    assert prof is not None
    assert [o.name for o in prof.operators] == [
        "tvmgen_add_one_add",
        "tvmgen_add_one_copy",
    ]
    # Busy loops dominate the fixture: the operators are (almost) the whole run.
    op_sum = sum(o.cycles for o in prof.operators)
    assert 0.5 * prof.total_cycles <= op_sum <= prof.total_cycles
    assert abs(sum(o.share for o in prof.operators) - op_sum / prof.total_cycles) < 1e-9
    prof2 = rpc_profile(mlf, "host", work_dir=tmp_path / "w2", seed=5)
    assert len(prof2.operators) == 2


class _StallingTransport:
    """Writes the first ``stalls`` requests in two parts with a pause longer than the server's
    inter-byte timeout after byte ``split``: what Zephyr's RPC server saw under QEMU's
    ``-icount ...,sleep=off``, where its clock jumped to the timeout's deadline between two
    bytes of a request."""

    def __init__(self, inner: Transport, split: int, stalls: int = 1) -> None:
        self.inner = inner
        self.split = split
        self.stalls = stalls

    def write(self, data: bytes) -> None:
        if self.stalls > 0:
            self.stalls -= 1
            self.inner.write(data[: self.split])
            time.sleep(INTERBYTE_MS / 1000 * 3)
            data = data[self.split :]
        self.inner.write(data)

    def read(self, max_bytes: int, timeout_s: float) -> bytes:
        return self.inner.read(max_bytes, timeout_s)

    def close(self) -> None:
        self.inner.close()


@pytest.mark.parametrize("split", [2, 4, 5, 6, 9])
def test_request_cut_by_the_interbyte_timeout_is_sent_again_at_once(
    server_exe: Path, split: int
) -> None:
    # Cut before its sequence byte (split < 6) the frame error carries seq 0; the client takes
    # it as its request's (command byte 0 or its own) and resends without waiting for its
    # timeout: no attempt times out.
    argv = [str(server_exe), "--interbyte-ms", str(INTERBYTE_MS)]
    with RpcClient(PipeTransport.spawn(argv), timeout_s=30.0, interbyte_timeout_s=0.1) as c:
        c.sync()
        size = c.models()[0].inputs[0].size_bytes
        c.transport = _StallingTransport(c.transport, split)
        data = bytes(range(size))
        c.write_input(0, 0, data)
        assert c.read_input(0, 0, len(data)) == data
        assert (c.resends, c.frame_errors, c.timeouts) == (1, 1, 0)
