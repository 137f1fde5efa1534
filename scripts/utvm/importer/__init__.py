"""import stage: read a model file into a utvm.ir.Graph."""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import UtvmError
from ..ir import Graph


def c_identifier(name: str) -> str:
    """A model name made safe for C symbols: letters, digits, underscores, not starting with a digit."""
    ident = re.sub(r"[^0-9A-Za-z_]", "_", name).strip("_") or "model"
    if ident[0].isdigit():
        ident = "m_" + ident
    return ident


def load_model(path: Path) -> Graph:
    """Read ``path`` (.tflite or .onnx)."""
    path = Path(path)
    if not path.exists():
        raise UtvmError(f"{path}: no such file")
    if path.is_dir():
        raise UtvmError(f"{path}: is a directory, expected a .tflite or .onnx file")
    data = path.read_bytes()
    if not data:
        raise UtvmError(f"{path}: the file is empty")
    suffix = path.suffix.lower()
    if suffix == ".tflite":
        from .tflite_import import load_tflite

        graph = load_tflite(path, data)
    elif suffix == ".onnx":
        from .onnx_import import load_onnx

        graph = load_onnx(path, data)
    else:
        raise UtvmError(f"{path}: unknown model format '{suffix}' (expected .tflite or .onnx)")
    from ..ops import OpError, check_graph

    try:
        check_graph(graph)
    except OpError as exc:
        raise UtvmError(f"{path}: {exc}") from None
    return graph
