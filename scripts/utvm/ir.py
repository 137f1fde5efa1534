"""The model graph every importer produces and every later stage reads.

Activations are NHWC. A graph is a list of operators in execution order; tensors are named,
and a tensor with ``data`` is a constant.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Layouts of a value the ONNX importer keeps (ONNX is NCHW, utvm NHWC): as written, and a 4-D
#: NCHW value stored as NHWC; the permutations between the two.
PLAIN = "plain"
NHWC = "nhwc"
TO_NHWC = (0, 2, 3, 1)
TO_NCHW = (0, 3, 1, 2)


def trivial_perm(shape: tuple[int, ...], perm: tuple[int, ...]) -> bool:
    """True if transposing ``shape`` by ``perm`` keeps the row-major element order."""
    moved = [p for p in perm if shape[p] != 1]
    return moved == sorted(moved)


#: Element types the compiler handles, with their sizes in bytes.
DTYPE_SIZES = {"int8": 1, "uint8": 1, "int16": 2, "int32": 4, "int64": 8, "float32": 4, "bool": 1}


@dataclass
class Quant:
    """Affine quantization: real = scale * (q - zero_point), per tensor or per ``axis``."""

    scale: np.ndarray
    zero_point: np.ndarray
    axis: int = 0

    @property
    def per_channel(self) -> bool:
        return self.scale.size > 1

    def scalar(self) -> tuple[float, int]:
        """The per-tensor (scale, zero point)."""
        return float(self.scale.reshape(-1)[0]), int(self.zero_point.reshape(-1)[0])


@dataclass
class Tensor:
    name: str
    shape: tuple[int, ...]
    dtype: str
    quant: Quant | None = None
    data: np.ndarray | None = None
    #: state kept between runs (TFLite variable tensors: SVDF and LSTM states; resource
    #: variables); lives outside the workspace pool and is reset to its zero point by
    #: tvmgen_<name>_reset()
    variable: bool = False
    #: a variable tensor's value for the first run only, set once before it (TFLite's CALL_ONCE
    #: of an init subgraph; a reset does not set it again, as in TFLite Micro); None: none
    initial: np.ndarray | None = None

    @property
    def is_constant(self) -> bool:
        return self.data is not None

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def nbytes(self) -> int:
        return self.size * DTYPE_SIZES[self.dtype]


@dataclass
class Operator:
    """One operator: ``kind`` is utvm's name (conv2d, depthwise_conv2d, fully_connected, ...)."""

    kind: str
    inputs: list[str]
    outputs: list[str]
    attrs: dict[str, Any] = field(default_factory=dict)
    #: the operator's name in the source model, for error messages and profiles
    source: str = ""
    #: the kernel configuration to build with (``utvm.ops.base.knob``): set only on the copy the
    #: lowering hands to the kernel builders (from its ``KernelConfigs``), never in a graph
    config: dict[str, Any] | None = None


@dataclass
class Graph:
    name: str
    tensors: dict[str, Tensor]
    ops: list[Operator]
    inputs: list[str]
    outputs: list[str]

    def tensor(self, name: str) -> Tensor:
        return self.tensors[name]

    def text(self, configs: Mapping[int, dict[str, Any]] | None = None) -> str:
        """Readable listing, written into the MLF as src/<name>.graph.txt; ``configs`` (operator
        index -> kernel configuration, as lowered) shows as each operator's ``config=``."""
        lines = [f"graph {self.name}"]
        for name in self.inputs:
            t = self.tensors[name]
            lines.append(f"  input  {name}: {t.dtype}{list(t.shape)}")
        for i, op in enumerate(self.ops):
            args = ", ".join(op.inputs)
            items = {**op.attrs, "config": configs[i]} if configs and i in configs else op.attrs
            attrs = ", ".join(f"{k}={v}" for k, v in sorted(items.items()) if not _bulky(v))
            outs = ", ".join(f"{o}: {self.tensors[o].dtype}{list(self.tensors[o].shape)}" for o in op.outputs)
            lines.append(f"  {i:3d} {outs} = {op.kind}({args}) {{{attrs}}}")
        for name in self.outputs:
            lines.append(f"  output {name}")
        return "\n".join(lines) + "\n"


def _bulky(value: Any) -> bool:
    return isinstance(value, np.ndarray) and value.size > 8
