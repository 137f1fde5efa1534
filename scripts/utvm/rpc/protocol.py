"""Wire format of the utvm RPC protocol (docs/RPC.md), shared by the client and the tests.

A frame is ``A5 5A | len:u16le | cmd:u8 | seq:u8 | payload[len] | crc:u16le`` with
CRC-16/CCITT-FALSE over ``len .. payload``. Replies carry ``cmd | 0x80`` and the request's
``seq``; their payload starts with a :class:`Status` byte. Frames the server could not parse
are answered with cmd ``0xFF`` and payload ``[status, cmd byte seen]``.
"""

from __future__ import annotations

import binascii
import enum
import struct
from dataclasses import dataclass, field

SYNC = b"\xa5\x5a"
HEADER_SIZE = 6
TRAILER_SIZE = 2
OVERHEAD = HEADER_SIZE + TRAILER_SIZE
MAX_LEN = 0xFFFF
REPLY = 0x80
FRAME_ERROR = 0xFF
PROTOCOL_VERSION = 2
#: Oldest server this client talks to (version 1: RUN without a repeat count).
MIN_PROTOCOL_VERSION = 1

#: Bytes of a WRITE_INPUT payload before the data: model, index, offset.
WRITE_HEADER = 6
#: Longest READ_OUTPUT / READ_INPUT length (the reply adds a status byte).
MAX_READ = MAX_LEN - 1


class Cmd(enum.IntEnum):
    PING = 0x00
    INFO = 0x01
    MODEL_INFO = 0x02
    OP_NAMES = 0x03
    WRITE_INPUT = 0x10
    READ_OUTPUT = 0x11
    READ_INPUT = 0x12
    RUN = 0x20
    PROFILE = 0x21
    RESET = 0x30


class Status(enum.IntEnum):
    OK = 0
    ERR_CRC = 1
    ERR_TOO_LONG = 2
    ERR_TRUNCATED = 3
    ERR_UNKNOWN_CMD = 4
    ERR_BAD_LENGTH = 5
    ERR_BAD_MODEL = 6
    ERR_BAD_TENSOR = 7
    ERR_BAD_RANGE = 8
    ERR_RUN_FAILED = 9
    ERR_UNSUPPORTED = 10
    ERR_NO_RUN = 11

    @classmethod
    def describe(cls, value: int) -> str:
        try:
            return cls(value).name
        except ValueError:
            return f"status {value}"


#: utvm_dtype_t -> numpy dtype name.
DTYPES: dict[int, str] = {0: "int8", 1: "uint8", 2: "int16", 3: "int32", 4: "float32", 5: "bool", 6: "int64"}

MODEL_PROFILING = 0x01
MODEL_IO_IN_POOL = 0x02


def crc16(data: bytes, crc: int = 0xFFFF) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final xor)."""
    return binascii.crc_hqx(data, crc)


@dataclass(frozen=True)
class Frame:
    """One decoded frame."""

    cmd: int
    seq: int
    payload: bytes

    @property
    def is_reply(self) -> bool:
        return self.cmd != FRAME_ERROR and bool(self.cmd & REPLY)

    @property
    def is_frame_error(self) -> bool:
        return self.cmd == FRAME_ERROR

    @property
    def status(self) -> int:
        """First payload byte of a reply (ERR_BAD_LENGTH when the payload is empty)."""
        return self.payload[0] if self.payload else int(Status.ERR_BAD_LENGTH)


def encode_frame(cmd: int, seq: int, payload: bytes = b"") -> bytes:
    """The bytes of one frame."""
    if len(payload) > MAX_LEN:
        raise ValueError(f"payload of {len(payload)} bytes exceeds {MAX_LEN}")
    body = struct.pack("<HBB", len(payload), cmd & 0xFF, seq & 0xFF) + bytes(payload)
    return SYNC + body + struct.pack("<H", crc16(body))


@dataclass
class FrameDecoder:
    """Incremental decoder with resynchronisation, mirroring the server's parser.

    Bytes outside frames are skipped; a candidate frame with a bad CRC or a length above
    ``max_payload`` is dropped and the bytes after its first sync byte are scanned again.
    """

    max_payload: int = MAX_LEN
    _buf: bytearray = field(default_factory=bytearray)
    bad_frames: int = 0
    skipped: int = 0

    def reset(self) -> None:
        """Forget everything buffered."""
        self.skipped += len(self._buf)
        self._buf.clear()

    def timeout(self) -> list[Frame]:
        """The line went quiet: a partial frame will not complete. Drop it, but keep any
        complete frame that starts inside it (as the server does after its inter-byte
        timeout)."""
        frames: list[Frame] = []
        while self._buf:
            self.bad_frames += 1
            self.skipped += 1
            del self._buf[:1]
            frames.extend(self.feed(b""))
        return frames

    @property
    def pending(self) -> int:
        return len(self._buf)

    def feed(self, data: bytes) -> list[Frame]:
        self._buf.extend(data)
        frames: list[Frame] = []
        buf = self._buf
        while True:
            start = buf.find(SYNC)
            if start < 0:
                # Keep a trailing first sync byte: the second may be in the next chunk.
                keep = 1 if buf[-1:] == SYNC[:1] else 0
                self.skipped += len(buf) - keep
                del buf[: len(buf) - keep]
                return frames
            if start:
                self.skipped += start
                del buf[:start]
            if len(buf) < HEADER_SIZE:
                return frames
            length, cmd, seq = struct.unpack_from("<HBB", buf, 2)
            if length > self.max_payload:
                self.bad_frames += 1
                del buf[:1]
                continue
            total = length + OVERHEAD
            if len(buf) < total:
                return frames
            (want,) = struct.unpack_from("<H", buf, total - TRAILER_SIZE)
            if crc16(bytes(buf[2 : total - TRAILER_SIZE])) != want:
                self.bad_frames += 1
                del buf[:1]
                continue
            frames.append(
                Frame(cmd, seq, bytes(buf[HEADER_SIZE : total - TRAILER_SIZE]))
            )
            del buf[:total]


def decode_frames(data: bytes) -> list[Frame]:
    """All complete frames in ``data``."""
    return FrameDecoder().feed(data)


# ---------------------------------------------------------------------------------------------
# Request payloads.


def req_model(model: int) -> bytes:
    return struct.pack("<B", model)


def req_run(model: int, repeats: int = 1) -> bytes:
    """RUN of ``model``; with ``repeats`` > 1 (protocol 2) the server runs it that many times and
    replies the cycles of all of them."""
    if not 1 <= repeats <= 0xFFFF:
        raise ValueError(f"repeats must be 1..65535, not {repeats}")
    return struct.pack("<B", model) if repeats == 1 else struct.pack("<BH", model, repeats)


def req_op_names(model: int, first: int) -> bytes:
    return struct.pack("<BH", model, first)


def req_write_input(model: int, index: int, offset: int, data: bytes) -> bytes:
    return struct.pack("<BBI", model, index, offset) + bytes(data)


def req_read(model: int, index: int, offset: int, length: int) -> bytes:
    return struct.pack("<BBIH", model, index, offset, length)


# ---------------------------------------------------------------------------------------------
# Reply payloads (after the status byte has been checked).


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self, fmt: str) -> tuple[int | float, ...]:
        values = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return values

    def u8(self) -> int:
        return int(self.take("<B")[0])

    def u16(self) -> int:
        return int(self.take("<H")[0])

    def u32(self) -> int:
        return int(self.take("<I")[0])

    def i32(self) -> int:
        return int(self.take("<i")[0])

    def f32(self) -> float:
        return float(self.take("<f")[0])

    def string(self) -> str:
        n = self.u8()
        raw = self.data[self.pos : self.pos + n]
        if len(raw) != n:
            raise struct.error("string runs past the end of the payload")
        self.pos += n
        return raw.decode("utf-8", errors="replace")

    def rest(self) -> bytes:
        return self.data[self.pos :]


@dataclass(frozen=True)
class ServerInfo:
    version: int
    num_models: int
    max_payload: int
    io_buf_size: int
    pool_size: int
    interbyte_timeout_ms: int

    @classmethod
    def parse(cls, payload: bytes) -> ServerInfo:
        r = _Reader(payload)
        r.u8()  # status
        version, num_models = r.u8(), r.u8()
        r.u8()
        return cls(version, num_models, r.u32(), r.u32(), r.u32(), r.u32())


@dataclass(frozen=True)
class TensorInfo:
    name: str
    dtype: str
    shape: tuple[int, ...]
    size_bytes: int
    scale: float
    zero_point: int

    @classmethod
    def read(cls, r: _Reader) -> TensorInfo:
        name = r.string()
        code = r.u8()
        ndim = r.u8()
        shape = tuple(r.i32() for _ in range(ndim))
        size = r.u32()
        scale = r.f32()
        zero_point = r.i32()
        return cls(
            name, DTYPES.get(code, f"dtype{code}"), shape, size, scale, zero_point
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "dtype": self.dtype,
            "shape": list(self.shape),
            "size_bytes": self.size_bytes,
            "scale": self.scale,
            "zero_point": self.zero_point,
        }


@dataclass(frozen=True)
class ModelInfo:
    index: int
    name: str
    workspace_size: int
    num_ops: int
    profiling: bool
    io_in_pool: bool
    inputs: tuple[TensorInfo, ...]
    outputs: tuple[TensorInfo, ...]

    @classmethod
    def parse(cls, index: int, payload: bytes) -> ModelInfo:
        r = _Reader(payload)
        r.u8()  # status
        name = r.string()
        workspace, num_ops, flags = r.u32(), r.u32(), r.u8()
        n_in, n_out = r.u8(), r.u8()
        inputs = tuple(TensorInfo.read(r) for _ in range(n_in))
        outputs = tuple(TensorInfo.read(r) for _ in range(n_out))
        return cls(
            index,
            name,
            workspace,
            num_ops,
            bool(flags & MODEL_PROFILING),
            bool(flags & MODEL_IO_IN_POOL),
            inputs,
            outputs,
        )


@dataclass(frozen=True)
class OpNamesPage:
    total: int
    first: int
    names: tuple[str, ...]

    @classmethod
    def parse(cls, payload: bytes) -> OpNamesPage:
        r = _Reader(payload)
        r.u8()
        total, first, count = r.u16(), r.u16(), r.u16()
        return cls(total, first, tuple(r.string() for _ in range(count)))


@dataclass(frozen=True)
class RunReply:
    status: int
    model_status: int
    cycles: int

    @classmethod
    def parse(cls, payload: bytes) -> RunReply:
        r = _Reader(payload)
        return cls(r.u8(), r.i32(), r.u32())


@dataclass(frozen=True)
class ProfileReply:
    total_cycles: int
    op_cycles: tuple[int, ...]

    @classmethod
    def parse(cls, payload: bytes) -> ProfileReply:
        r = _Reader(payload)
        r.u8()
        total, count = r.u32(), r.u32()
        return cls(total, tuple(r.u32() for _ in range(count)))
