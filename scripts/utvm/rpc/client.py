"""Host side of the utvm RPC protocol: transports and :class:`RpcClient`.

Transports: anything pyserial's ``serial_for_url`` opens (a serial device ``/dev/ttyACM0``, a
pty ``/dev/pts/N``, ``socket://host:port``, ``rfc2217://...``) and the pipes of a server
process (``rpc_host_main`` on the host, or QEMU with ``-serial stdio``).

Every request carries a sequence number. Replies with another number (stale replies after a
timeout) are skipped; a request that gets no reply within its timeout, or whose frame the
server reports as damaged (a frame-error reply with the same number), is sent again, up to
``retries`` times. A frame error without a number (``seq`` 0: the server lost the frame before
its sequence byte, e.g. by its inter-byte timeout inside the header) is taken as the request's
own when its command byte is the request's or was not received either: the request is sent
again at once rather than after its timeout. A partial reply frame after which the line stays
quiet for the inter-byte timeout is dropped, so a lost byte never hangs the client.
"""

from __future__ import annotations

import os
import select
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, Self

import numpy as np

from utvm.errors import UtvmError
from utvm.rpc import protocol as p


class RpcError(UtvmError):
    """The server answered with an error status (``status``) or could not be reached."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class RpcTimeout(RpcError):
    """No valid reply within the timeout, after all retries."""


class RpcClosed(RpcError):
    """The transport reached end of stream (the server process exited)."""


class Transport(Protocol):
    def write(self, data: bytes) -> None: ...

    def read(self, max_bytes: int, timeout_s: float) -> bytes:
        """Bytes available within ``timeout_s`` (``b""`` on timeout); RpcClosed at EOF."""
        ...

    def close(self) -> None: ...


class SerialTransport:
    """A pyserial port: ``serial.serial_for_url(url)``."""

    def __init__(self, url: str, baudrate: int = 115200) -> None:
        import serial  # pyserial, imported lazily: only this transport needs it

        try:
            self.port = serial.serial_for_url(url, baudrate=baudrate, timeout=0.1)
        except (serial.SerialException, ValueError) as exc:
            raise RpcError(f"cannot open {url}: {exc}") from exc
        self.url = url

    def write(self, data: bytes) -> None:
        self.port.write(data)
        self.port.flush()

    def read(self, max_bytes: int, timeout_s: float) -> bytes:
        self.port.timeout = max(0.0, timeout_s)
        first = self.port.read(1)
        if not first:
            return b""
        waiting = min(self.port.in_waiting, max_bytes - 1)
        return first + (self.port.read(waiting) if waiting > 0 else b"")

    def close(self) -> None:
        self.port.close()


class PipeTransport:
    """The stdin/stdout pipes of a server process; owns the process when ``own`` is true."""

    def __init__(self, proc: subprocess.Popen[bytes], own: bool = True) -> None:
        if proc.stdin is None or proc.stdout is None:
            raise RpcError("server process needs stdin and stdout pipes")
        self.proc = proc
        self.own = own
        self._in = proc.stdin
        self._out_fd = proc.stdout.fileno()

    @classmethod
    def spawn(cls, argv: Sequence[str], stderr: int | None = None) -> PipeTransport:
        """Start ``argv`` with piped stdin/stdout (stderr inherited unless given)."""
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            bufsize=0,
        )
        return cls(proc, own=True)

    def write(self, data: bytes) -> None:
        try:
            self._in.write(data)
            self._in.flush()
        except (BrokenPipeError, OSError) as exc:
            raise RpcClosed(f"server process closed its input ({exc})") from exc

    def read(self, max_bytes: int, timeout_s: float) -> bytes:
        ready, _, _ = select.select([self._out_fd], [], [], max(0.0, timeout_s))
        if not ready:
            return b""
        data = os.read(self._out_fd, max_bytes)
        if not data:
            code = self.proc.poll()
            raise RpcClosed(f"server process ended the stream (exit code {code})")
        return data

    def close(self) -> None:
        if not self.own:
            return
        try:
            self._in.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def _frame_error_is_ours(reply: p.Frame, cmd: int, seq: int) -> bool:
    """Whether a frame-error reply is about the request ``cmd``/``seq`` in flight: it carries
    that ``seq``, or none (0, lost before the sequence byte) with the request's command byte
    or none either (0: lost before the command byte)."""
    if reply.seq == seq:
        return True
    return reply.seq == 0 and reply.payload[1:2] in (b"\x00", bytes([cmd & 0xFF]))


@dataclass(frozen=True)
class RunResult:
    """Result of one RUN: the model's return code (0 = success) and the counter difference."""

    model_status: int
    cycles: int


class RpcClient:
    """Drives one RPC server. Use as a context manager to close the transport."""

    def __init__(
        self,
        transport: Transport,
        timeout_s: float = 5.0,
        retries: int = 3,
        interbyte_timeout_s: float = 0.25,
    ) -> None:
        self.transport = transport
        self.timeout_s = timeout_s
        self.retries = retries
        self.interbyte_timeout_s = interbyte_timeout_s
        self.decoder = p.FrameDecoder()
        self._seq = 0
        self._info: p.ServerInfo | None = None
        self._models: dict[int, p.ModelInfo] = {}
        #: Requests made, requests sent again (timeouts or damaged frames), attempts that got
        #: no reply within their timeout, frame errors taken as a request's own; for
        #: diagnostics, soak runs and tests.
        self.requests = 0
        self.resends = 0
        self.timeouts = 0
        self.frame_errors = 0

    # ---- construction -------------------------------------------------------------------

    @classmethod
    def over_url(cls, url: str, baudrate: int = 115200, **kwargs: float) -> RpcClient:
        """Connect through pyserial: a device, a pty, ``socket://host:port``..."""
        return cls(SerialTransport(url, baudrate), **kwargs)  # type: ignore[arg-type]

    @classmethod
    def over_process(cls, argv: Sequence[str], **kwargs: float) -> RpcClient:
        """Start a server process (e.g. ``rpc_host_main``) and talk over its pipes."""
        return cls(PipeTransport.spawn(argv), **kwargs)  # type: ignore[arg-type]

    def close(self) -> None:
        self.transport.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- framing --------------------------------------------------------------------------

    def _next_seq(self) -> int:
        self._seq = self._seq % 255 + 1  # 1..255; 0 is left for frame errors
        return self._seq

    def send_raw(self, data: bytes) -> None:
        """Write bytes as they are (tests use this to send damaged frames)."""
        self.transport.write(data)

    def read_frames(self, timeout_s: float) -> list[p.Frame]:
        """Frames arriving within ``timeout_s`` (returns as soon as at least one has come)."""
        deadline = time.monotonic() + timeout_s
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return self.decoder.timeout() if self.decoder.pending else []
            wait = (
                min(remaining, self.interbyte_timeout_s)
                if self.decoder.pending
                else remaining
            )
            data = self.transport.read(4096, wait)
            frames = self.decoder.feed(data) if data else self.decoder.timeout()
            if frames:
                return frames

    def request(
        self,
        cmd: int,
        payload: bytes = b"",
        timeout_s: float | None = None,
        check: bool = True,
    ) -> p.Frame:
        """Send one request and return its reply; RpcError for an error status."""
        timeout = self.timeout_s if timeout_s is None else timeout_s
        seq = self._next_seq()
        frame = p.encode_frame(cmd, seq, payload)
        want = (cmd | p.REPLY) & 0xFF
        self.requests += 1
        for attempt in range(self.retries + 1):
            if attempt:
                self.resends += 1
            self.transport.write(frame)
            deadline = time.monotonic() + timeout
            resend = False
            while not resend:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self.timeouts += 1
                    break
                for reply in self.read_frames(remaining):
                    if reply.cmd == want and reply.seq == seq:
                        if check and reply.status != p.Status.OK:
                            raise RpcError(
                                f"{p.Cmd(cmd).name if cmd in p.Cmd._value2member_map_ else cmd}"
                                f" failed: {p.Status.describe(reply.status)}",
                                reply.status,
                            )
                        return reply
                    if reply.is_frame_error and _frame_error_is_ours(reply, cmd, seq):
                        if reply.status == p.Status.ERR_TOO_LONG and reply.payload[
                            1:2
                        ] == bytes([cmd & 0xFF]):
                            raise RpcError(
                                f"request of {len(payload)} bytes is larger than the "
                                "server's frame buffer",
                                reply.status,
                            )
                        self.frame_errors += 1
                        resend = True  # the server saw our frame damaged
        raise RpcTimeout(
            f"no reply to command 0x{cmd:02x} after {self.retries + 1} attempts "
            f"({timeout:g} s each)"
        )

    def sync(self, timeout_s: float = 2.0) -> None:
        """Discard stale input, then check the server answers a PING."""
        while self.transport.read(4096, 0.05):
            pass
        self.decoder.reset()
        token = os.urandom(4)
        reply = self.request(p.Cmd.PING, token, timeout_s=timeout_s)
        if reply.payload[1:] != token:
            raise RpcError("PING reply does not echo the token")

    # ---- commands -------------------------------------------------------------------------

    def ping(self, data: bytes = b"") -> bytes:
        return self.request(p.Cmd.PING, data).payload[1:]

    def info(self) -> p.ServerInfo:
        if self._info is None:
            self._info = p.ServerInfo.parse(self.request(p.Cmd.INFO).payload)
            if not p.MIN_PROTOCOL_VERSION <= self._info.version <= p.PROTOCOL_VERSION:
                raise RpcError(
                    f"server speaks protocol version {self._info.version}, "
                    f"this client {p.MIN_PROTOCOL_VERSION} to {p.PROTOCOL_VERSION}"
                )
        return self._info

    def model_info(self, model: int) -> p.ModelInfo:
        if model not in self._models:
            reply = self.request(p.Cmd.MODEL_INFO, p.req_model(model))
            self._models[model] = p.ModelInfo.parse(model, reply.payload)
        return self._models[model]

    def models(self) -> list[p.ModelInfo]:
        return [self.model_info(i) for i in range(self.info().num_models)]

    def find_model(self, name: str | None) -> int:
        """Index of the model called ``name`` (None: the only model, else the first)."""
        models = self.models()
        if not models:
            raise RpcError("the server has no models")
        if name is None:
            return 0
        for m in models:
            if m.name == name:
                return m.index
        names = ", ".join(m.name for m in models)
        raise RpcError(f"the server has no model {name!r} (it has: {names})")

    def op_names(self, model: int) -> list[str]:
        names: list[str] = []
        while True:
            page = p.OpNamesPage.parse(
                self.request(p.Cmd.OP_NAMES, p.req_op_names(model, len(names))).payload
            )
            names.extend(page.names)
            if len(names) >= page.total or not page.names:
                return names

    def write_input(self, model: int, index: int, data: bytes, offset: int = 0) -> None:
        chunk = max(1, self.info().max_payload - p.WRITE_HEADER)
        view = memoryview(bytes(data))
        for start in range(0, len(view), chunk):
            part = bytes(view[start : start + chunk])
            self.request(
                p.Cmd.WRITE_INPUT, p.req_write_input(model, index, offset + start, part)
            )

    def _read(
        self, cmd: int, model: int, index: int, offset: int, length: int
    ) -> bytes:
        out = bytearray()
        chunk = 4096
        while len(out) < length:
            n = min(chunk, length - len(out))
            reply = self.request(cmd, p.req_read(model, index, offset + len(out), n))
            out += reply.payload[1:]
        return bytes(out)

    def read_output(
        self, model: int, index: int, length: int | None = None, offset: int = 0
    ) -> bytes:
        if length is None:
            length = self.model_info(model).outputs[index].size_bytes - offset
        return self._read(p.Cmd.READ_OUTPUT, model, index, offset, length)

    def read_input(
        self, model: int, index: int, length: int | None = None, offset: int = 0
    ) -> bytes:
        if length is None:
            length = self.model_info(model).inputs[index].size_bytes - offset
        return self._read(p.Cmd.READ_INPUT, model, index, offset, length)

    def run(self, model: int, timeout_s: float = 120.0, repeats: int = 1) -> RunResult:
        """Run ``model``; ``cycles`` counts all ``repeats`` runs. A server of protocol 2 runs
        them back to back between two counter reads (the counter's resolution divided by
        ``repeats``); a version 1 server is sent one RUN per repeat and the counts are added."""
        if repeats > 1 and self.info().version < 2:
            runs = [self.run(model, timeout_s) for _ in range(repeats)]
            return RunResult(runs[-1].model_status, sum(r.cycles for r in runs))
        reply = self.request(
            p.Cmd.RUN, p.req_run(model, repeats), timeout_s=timeout_s, check=False
        )
        if reply.payload[:1] != bytes([p.Status.OK]) and len(reply.payload) < 9:
            raise RpcError(f"run failed: {p.Status.describe(reply.payload[0])}", reply.payload[0])
        parsed = p.RunReply.parse(reply.payload)
        if parsed.status != p.Status.OK:
            raise RpcError(
                f"run failed: {p.Status.describe(parsed.status)} "
                f"(model returned {parsed.model_status})",
                parsed.status,
            )
        return RunResult(parsed.model_status, parsed.cycles)

    def profile(self, model: int) -> p.ProfileReply:
        return p.ProfileReply.parse(
            self.request(p.Cmd.PROFILE, p.req_model(model)).payload
        )

    def reset(self) -> None:
        self.request(p.Cmd.RESET)

    # ---- arrays ---------------------------------------------------------------------------

    def set_inputs(self, model: int, arrays: Sequence[np.ndarray]) -> None:
        info = self.model_info(model)
        if len(arrays) != len(info.inputs):
            raise RpcError(
                f"model {info.name} has {len(info.inputs)} inputs, got {len(arrays)}"
            )
        for i, (t, arr) in enumerate(zip(info.inputs, arrays)):
            data = np.ascontiguousarray(arr, dtype=np.dtype(t.dtype)).tobytes()
            if len(data) != t.size_bytes:
                raise RpcError(
                    f"input {t.name}: {len(data)} bytes given, the model takes {t.size_bytes}"
                )
            self.write_input(model, i, data)

    def get_outputs(self, model: int) -> list[np.ndarray]:
        info = self.model_info(model)
        out: list[np.ndarray] = []
        for i, t in enumerate(info.outputs):
            raw = self.read_output(model, i)
            out.append(
                np.frombuffer(raw, dtype=np.dtype(t.dtype)).reshape(t.shape).copy()
            )
        return out
