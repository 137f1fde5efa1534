"""TILE (ONNX Tile): the input repeated along each axis, the output's shape giving the counts.

Import: ONNX Tile (constant repeats).
Semantics: ``out[j] = x[j % x.shape]`` per axis; values are moved, exact.
"""

from __future__ import annotations

from typing import Any

from ..ir import PLAIN, Graph, Operator
from ..kernels.kerneldef import KernelDef
from ..kernels.target import Target
from ._movement import MOVE_TYPES, check_same_types, gather_kernel, onnx_ints
from .base import OpDef, OpError, SourceOp, Validation, Variant


def from_onnx(imp: Any, node: Any) -> None:
    repeats = onnx_ints(imp, node.input[1], "repeats").reshape(-1)
    if repeats.size != len(imp.shape(node.input[0])) or (repeats < 1).any():
        raise imp.fail(f"repeats {repeats.tolist()} do not fit the input")
    imp.emit("tile", [imp.get(node.input[0], PLAIN)], node.output[0], PLAIN)


def check(g: Graph, op: Operator) -> None:
    check_same_types(g, op, MOVE_TYPES)
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    if len(x.shape) != len(y.shape) or any(d == 0 or o % d for d, o in zip(x.shape, y.shape)):
        raise OpError(f"{op.source}: {list(y.shape)} is not a tiling of {list(x.shape)}")


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    return gather_kernel(g, op, lambda j: tuple(jk % d if d != o else jk for jk, d, o in zip(j, x.shape, y.shape)))


OPS = (
    OpDef(
        kind="tile",
        summary="the input repeated along each axis",
        onnx=(SourceOp("Tile", from_onnx, ("float32",), "constant repeats"),),
        variants=(Variant("generic", _generic, types=MOVE_TYPES),),
        check=check,
        reference="ONNX Tile",
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "TILE output not a tiling of the input",
               "TFLM has no TILE kernel (the op resolver refuses the model); TFLite computes the output shape from the multiples",
               "would-compute-differently", "kept"),
)
