"""The operator registry: every module of this package that defines ``OPS`` holds operators.

Adding an operator is adding one module here (see :mod:`utvm.ops.base`); the importers, the
lowering, the runner and ``utvm ops`` find it through the functions below.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from ..ir import Graph, Operator
from .base import Channels, Offload, OpDef, OpError, Slot, SourceOp, Validation, Variant, Weights

__all__ = ["Channels", "Offload", "OpDef", "OpError", "Slot", "SourceOp", "Variant", "Weights", "all_ops", "check_graph", "get", "macs", "onnx_ops", "tflite_ops", "variant"]

@cache
def all_ops() -> dict[str, OpDef]:
    """Every operator, by kind."""
    found: dict[str, OpDef] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for opdef in getattr(module, "OPS", ()):
            if opdef.kind in found:
                raise RuntimeError(f"operator kind '{opdef.kind}' is defined twice ({info.name})")
            found[opdef.kind] = opdef
    return found


def get(kind: str) -> OpDef | None:
    return all_ops().get(kind)


def variant(kind: str, name: str) -> Variant | None:
    """The kernel variant ``name`` of operator ``kind`` (None if it has none of that name)."""
    opdef = get(kind)
    return next((v for v in opdef.variants if v.name == name), None) if opdef else None


def _sources(attr: str) -> dict[str, SourceOp]:
    table: dict[str, SourceOp] = {}
    for opdef in all_ops().values():
        for src in getattr(opdef, attr):
            if src.name in table:
                raise RuntimeError(f"{src.name} is imported by two operators")
            table[src.name] = src
    return table


@cache
def tflite_ops() -> dict[str, SourceOp]:
    """TFLite builtin name -> how it is imported."""
    return _sources("tflite")


@cache
def onnx_ops() -> dict[str, SourceOp]:
    """ONNX operator type -> how it is imported."""
    return _sources("onnx")


def macs(graph: Graph, op: Operator) -> int:
    """Multiply-accumulates of ``op`` in one run (0 for operators without a MAC count)."""
    opdef = get(op.kind)
    return opdef.macs(graph, op) if opdef is not None and opdef.macs is not None else 0


def check_graph(graph: Graph) -> None:
    """Every operator's parameter checks; the first problem is raised as OpError. An operator
    may not write a constant or a model input, and a tensor has one producer."""
    written: set[str] = set()
    inputs = set(graph.inputs)
    for op in graph.ops:
        opdef = get(op.kind)
        if opdef is None:
            raise OpError(f"{op.source}: unknown operator kind '{op.kind}'")
        for name in op.outputs:
            t = graph.tensors[name]
            if t.is_constant or name in inputs:
                raise OpError(f"{op.source}: writes '{name[:80]}', a {'constant' if t.is_constant else 'model input'}")
            if name in written:
                raise OpError(f"{op.source}: '{name[:80]}' is written by two operators")
            written.add(name)
        if not op.outputs or "" in op.outputs or (op.inputs and not op.inputs[0]):
            raise OpError(f"{op.source}: its first input or an output is missing")
        if opdef.check is None:
            continue
        try:
            opdef.check(graph, op)
        except OpError:
            raise
        except (KeyError, IndexError, ValueError, TypeError, ArithmeticError) as exc:  # damaged models
            detail = str(exc).strip().splitlines()[0][:80] if str(exc).strip() else ""
            raise OpError(f"{op.source}: malformed operator ({type(exc).__name__}{': ' + detail if detail else ''})"
                          ) from None

#: the heading of this module's rows in docs/VALIDATION.md
VALIDATION_TITLE = "Every operator (ops/__init__.py: check_graph)"
#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check_graph", "operator kind without a definition (importer bug)",
               "— (internal: the importers emit registered kinds only)",
               "not-a-model-check", "kept"),
    Validation("check_graph", "an operator writes a constant or a model input",
               "no check; the kernel writes into the constant's flatbuffer bytes (flash) or over the caller's input [micro_allocator.cc]",
               "would-compute-differently", "kept: utvm keeps constants in flash and inputs in the caller's buffers"),
    Validation("check_graph", "a tensor written by two operators",
               "no check; operators run in order, the last write wins [micro_interpreter_graph.cc]",
               "would-compute-differently", "kept: the memory planner gives a tensor one producer and one lifetime"),
    Validation("check_graph", "first input or an output omitted (index -1)",
               "`AllocateTempInputTensor` gives nullptr, every Prepare has `TF_LITE_ENSURE(input != nullptr)` [k/*.cc]",
               "refused-by-TFLM", "kept"),
    Validation("check_graph", "a check met a malformed operator (missing attribute/input: KeyError, IndexError, ...)",
               "the same nullptr / dims `TF_LITE_ENSURE`s of each Prepare (the fuzzed models found: missing inputs, options of another operator) [k/*.cc]",
               "refused-by-TFLM", "kept"),
)
