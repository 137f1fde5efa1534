"""import stage: read a model file into a utvm.ir.Graph."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from pathlib import Path

from ..errors import UtvmError
from ..ir import Graph
from ..ops import OpError, check_graph
from ..ops.base import Validation
from .limits import MAX_MODEL_BYTES, check_graph_limits, mib
from .onnx_import import load_onnx
from .tflite_import import load_tflite


def c_identifier(name: str) -> str:
    """A model name made safe for C symbols: letters, digits, underscores, not starting with a digit."""
    ident = re.sub(r"[^0-9A-Za-z_]", "_", name).strip("_") or "model"
    if ident[0].isdigit():
        ident = "m_" + ident
    return ident


def read_model_file(path: Path) -> bytes:
    """The bytes of ``path``: a regular file (no FIFO, device or directory), at most
    MAX_MODEL_BYTES long, opened without blocking."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise UtvmError(f"{path}: no such file") from None
    except OSError as exc:
        raise UtvmError(f"{path}: cannot read the file ({exc.strerror or type(exc).__name__})") from None
    if stat.S_ISDIR(st.st_mode):
        raise UtvmError(f"{path}: is a directory, expected a .tflite or .onnx file")
    if not stat.S_ISREG(st.st_mode):
        raise UtvmError(f"{path}: not a regular file (a FIFO, socket or device), expected a .tflite or .onnx file")
    if st.st_size > MAX_MODEL_BYTES:
        raise UtvmError(f"{path}: {mib(st.st_size)} is larger than the largest model accepted "
                        f"({mib(MAX_MODEL_BYTES)})")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise UtvmError(f"{path}: cannot read the file ({exc.strerror or type(exc).__name__})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # replaced between stat and open
            raise UtvmError(f"{path}: not a regular file, expected a .tflite or .onnx file")
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > MAX_MODEL_BYTES:
                raise UtvmError(f"{path}: larger than the largest model accepted ({mib(MAX_MODEL_BYTES)})")
            chunks.append(chunk)
    except OSError as exc:
        raise UtvmError(f"{path}: cannot read the file ({exc.strerror or type(exc).__name__})") from None
    finally:
        os.close(fd)
    return b"".join(chunks)


#: top-level fields of onnx.ModelProto (field number -> protobuf wire type)
_ONNX_MODEL_FIELDS = {1: 0, 2: 2, 3: 2, 4: 2, 5: 0, 6: 2, 7: 2, 8: 2, 14: 2, 20: 2, 25: 2, 26: 2}


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while pos < len(data) and shift < 64:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, pos
    raise ValueError("bad varint")


def looks_like_onnx(data: bytes) -> bool:
    """True when ``data`` reads as a protobuf ModelProto with a graph: every top-level field is
    one of ModelProto's with its wire type, and the lengths add up to the file."""
    pos, graph = 0, False
    try:
        while pos < len(data):
            key, pos = _varint(data, pos)
            number, wire = key >> 3, key & 7
            if _ONNX_MODEL_FIELDS.get(number) != wire:
                return False
            if wire == 0:
                _, pos = _varint(data, pos)
            else:
                length, pos = _varint(data, pos)
                pos += length
            graph = graph or number == 7
    except ValueError:
        return False
    return graph and pos == len(data)


FORMATS = {"tflite": "TFLite", "onnx": "ONNX"}


def detect_format(path: Path, data: bytes) -> str:
    """"tflite" or "onnx", from the content (the TFL3 file identifier, an ONNX ModelProto)."""
    if len(data) >= 8 and data[4:8] == b"TFL3":
        return "tflite"
    if looks_like_onnx(data):
        return "onnx"
    suffix = path.suffix.lower()
    if suffix == ".onnx":
        return "onnx"  # let the ONNX reader say what is wrong with it
    if suffix == ".tflite":
        raise UtvmError(f"{path}: not a TFLite model (no TFL3 file identifier)")
    raise UtvmError(f"{path}: neither a TFLite model (no TFL3 file identifier) nor an ONNX model")


def load_model(path: Path, note: Callable[[str], None] | None = None) -> Graph:
    """Read ``path``, a TFLite or ONNX model (decided by its content; ``note`` is told when the
    file name says otherwise)."""
    path = Path(path)
    data = read_model_file(path)
    if not data:
        raise UtvmError(f"{path}: the file is empty")
    fmt = detect_format(path, data)
    named = {".tflite": "tflite", ".onnx": "onnx"}.get(path.suffix.lower())
    if named != fmt and note is not None:
        said = f"its name says {FORMATS[named]}" if named else f"its suffix '{path.suffix}' names no format"
        article = "an" if fmt == "onnx" else "a"
        note(f"{path} holds {article} {FORMATS[fmt]} model (detected by content; {said})")
    if fmt == "tflite":
        graph = load_tflite(path, data)
    else:
        graph = load_onnx(path, data)

    try:
        check_graph_limits(graph)
        check_graph(graph)
    except OpError as exc:
        raise UtvmError(f"{path}: {exc}") from None
    return graph

#: the heading of this module's rows in docs/VALIDATION.md
VALIDATION_TITLE = "Reading the file (importer/__init__.py)"
#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("read_model_file", "no such file",
               "— (file access)",
               "not-a-model-check", "kept"),
    Validation("read_model_file", "file cannot be read (stat)",
               "— (file access)",
               "not-a-model-check", "kept"),
    Validation("read_model_file", "path is a directory",
               "— (file access)",
               "not-a-model-check", "kept"),
    Validation("read_model_file", "not a regular file (FIFO, socket, device)",
               "— (file access)",
               "not-a-model-check", "kept"),
    Validation("read_model_file", "file larger than 256 MiB (stat)",
               "— (a model of more than 256 MiB fits no microcontroller's flash; resource limit)",
               "not-a-model-check", "kept"),
    Validation("read_model_file", "file cannot be opened",
               "— (file access)",
               "not-a-model-check", "kept"),
    Validation("read_model_file", "file replaced by a non-regular one between stat and open",
               "— (file access)",
               "not-a-model-check", "kept"),
    Validation("read_model_file", "file grows beyond 256 MiB while read",
               "— (resource limit)",
               "not-a-model-check", "kept"),
    Validation("read_model_file", "read error",
               "— (file access)",
               "not-a-model-check", "kept"),
    Validation("detect_format", ".tflite file without the TFL3 identifier",
               "`tflite::GetModel` + `ModelBuffer Verify` fail: the interpreter refuses it [micro_interpreter.cc]",
               "refused-by-TFLM", "kept"),
    Validation("detect_format", "neither TFLite nor ONNX",
               "as above",
               "refused-by-TFLM", "kept"),
    Validation("load_model", "empty file",
               "no model to verify [micro_interpreter.cc]",
               "refused-by-TFLM", "kept"),
    Validation("load_model", "(prefix) an operator's check failed",
               "— (rewraps the operator checks above with the file name)",
               "not-a-model-check", "kept"),
)
