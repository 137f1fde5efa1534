"""What a kernel is, independently of the model it comes from: the workload key of a log record."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np

from ..ir import Graph, Operator, Tensor
from ..ops import get


def _tensor(t: Tensor) -> dict[str, Any]:
    quant = "none"
    zero_point = None
    if t.quant is not None:
        quant = "per-channel" if t.quant.per_channel else "per-tensor"
        if not t.is_constant:
            zero_point = int(t.quant.scalar()[1])
    return {"shape": [int(d) for d in t.shape], "dtype": t.dtype, "constant": t.is_constant,
            "quant": quant, "zero_point": zero_point}


def _plain(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return f"array{list(value.shape)}"
    return value


def workload(graph: Graph, op: Operator, cpu: str | None) -> dict[str, Any]:
    """Operator kind, its tensors' shapes, types and quantization kinds (with the activations'
    zero points, which the padding uses), its attributes, and the CPU."""
    tensors = [_tensor(graph.tensors[n]) for n in [*op.inputs, *op.outputs] if n]
    attrs = {k: _plain(v) for k, v in sorted(op.attrs.items())}
    return {"op": op.kind, "tensors": tensors, "attrs": attrs, "cpu": cpu or "any"}


def workload_key(w: dict[str, Any]) -> str:
    """A short stable hash of a workload (the CPU included)."""
    text = json.dumps(w, sort_keys=True, separators=(",", ":"))
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def tunable(graph: Graph, op: Operator) -> bool:
    """Operators worth tuning: the MAC-carrying ones (their OpDef counts MACs), without state."""
    opdef = get(op.kind)
    if opdef is None or opdef.macs is None or opdef.alias:
        return False
    return not any(graph.tensors[n].variable for n in [*op.inputs, *op.outputs] if n)
