"""Resource variables (VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE, CALL_ONCE): the state that
streaming models keep between runs in TensorFlow variables.

Import: TFLite VAR_HANDLE names a variable by its container and shared name (TFLite Micro's
MicroResourceVariables::FindId: an empty container matches any); its output, a RESOURCE handle,
is no graph tensor. Each variable becomes one variable tensor (``Tensor.variable``) kept in the
state buffer outside the pool, of the shape and type of the first value read from it or
assigned to it. READ_VARIABLE becomes ``read_variable`` (the variable copied into its output),
ASSIGN_VARIABLE becomes ``assign`` (ops/assign.py: the value copied over the variable, at its
place among the operators). CALL_ONCE runs its init subgraph on the first run only: the
converter's init subgraph (VAR_HANDLE and ASSIGN_VARIABLE of constants) gives the variables'
values before the first run (``Tensor.initial``); an init subgraph that computes anything else
is refused, as is a CALL_ONCE after a variable was used. Types: any TFLite Micro copies
(int8, int16, int32, float32, ...); the bytes read must be the bytes the variable holds.
Semantics: TFLite Micro's var_handle.cc, read_variable.cc, assign_variable.cc, call_once.cc and
micro_resource_variable.cc: a variable's buffer is set to its default value (the zero point,
cast to int8, of the first value assigned to it in Prepare's order, the main subgraph first;
0 without quantization) when allocated and by every reset (ResetAll); the init subgraph runs
on the first invocation only and a reset does not run it again (CALL_ONCE has no reset), so
``tvmgen_<name>_reset()`` sets the variables to their default values, as TFLite Micro's
reset does; reads and assignments are byte copies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..ir import Graph, Operator, Tensor
from .base import OpDef, OpError, SourceOp, Validation, Variant
from .common import ANY_TYPE, flat_copy


@dataclass
class _Variables:
    """The resource variables of one model being imported."""

    #: (container or None, shared name, variable tensor name) in the order they were made
    found: list[tuple[str | None, str, str]] = field(default_factory=list)
    #: handle (RESOURCE tensor) -> variable tensor name
    handles: dict[str, str] = field(default_factory=dict)
    #: variables whose default value a main-subgraph ASSIGN_VARIABLE fixed (Prepare's order)
    fixed: set[str] = field(default_factory=set)
    #: variables read or assigned so far in the main subgraph
    used: set[str] = field(default_factory=set)


def _state(ctx: Any) -> _Variables:
    return ctx.rule_state.setdefault(__name__, _Variables())


def _text(raw: bytes | None) -> str | None:
    return raw.decode("utf-8", "replace") if raw else None


def _var_handle(ctx: Any, node: Any) -> None:
    """VAR_HANDLE: the handle names the variable of its container and shared name (made if new)."""
    if node.inputs or len(node.outputs) != 1 or node.outputs[0] not in ctx.resources:
        raise ctx.fail(node, "expects no input and one RESOURCE output")
    o = ctx.options(node, "VarHandleOptions")
    container, shared = _text(o.Container()), _text(o.SharedName()) or ""
    st = _state(ctx)
    for have_container, have_shared, name in st.found:
        if (container is None or container == have_container) and shared == have_shared:
            st.handles[node.outputs[0]] = name
            return
    name = f"variable:{container or ''}/{shared}"
    while name in ctx.tensors:
        name += "_"
    st.found.append((container, shared, name))
    st.handles[node.outputs[0]] = name


def _variable(ctx: Any, node: Any, handle: str, like: Tensor, assigned: bool) -> Tensor:
    """The variable tensor a handle names, made of ``like``'s shape and type when first used; a
    main-subgraph assignment fixes its default value (the zero point of ``like``)."""
    st = _state(ctx)
    name = st.handles.get(handle)
    if name is None:
        raise ctx.fail(node, f"its handle '{handle[:80]}' is not the output of a VAR_HANDLE")
    var = ctx.tensors.get(name)
    if var is None:
        var = ctx.tensors[name] = Tensor(name, like.shape, like.dtype, like.quant, variable=True)
    elif var.nbytes != like.nbytes:
        raise ctx.fail(node, f"{like.dtype}{list(like.shape)} ({like.nbytes} bytes) does not fit variable "
                             f"'{name[:80]}' of {var.nbytes} bytes")
    if assigned and name not in st.fixed:
        var.quant = like.quant
        if not node.subgraph:
            st.fixed.add(name)
    if not node.subgraph:
        st.used.add(name)
    return var


def _read_variable(ctx: Any, node: Any) -> None:
    if len(node.inputs) != 1 or len(node.outputs) != 1:
        raise ctx.fail(node, f"expects 1 input and 1 output, has {len(node.inputs)} and {len(node.outputs)}")
    var = _variable(ctx, node, node.inputs[0], ctx.tensors[node.outputs[0]], assigned=False)
    ctx.emit(node, "read_variable", [var.name], node.outputs)


def assign_variable(ctx: Any, node: Any) -> None:
    """ASSIGN_VARIABLE: ``assign`` (ops/assign.py) copies the value over the variable."""
    if len(node.inputs) != 2 or node.outputs:
        raise ctx.fail(node, f"expects 2 inputs and no output, has {len(node.inputs)} and {len(node.outputs)}")
    var = _variable(ctx, node, node.inputs[0], ctx.tensors[node.inputs[1]], assigned=True)
    ctx.emit(node, "assign", [node.inputs[1]], [var.name])


def _call_once(ctx: Any, node: Any) -> None:
    """CALL_ONCE: the init subgraph's assignments of constants become the variables' values for
    the first run."""
    if node.inputs or node.outputs:
        raise ctx.fail(node, "expects no inputs and no outputs")
    st = _state(ctx)
    if st.used:
        raise ctx.fail(node, "a CALL_ONCE after a variable was read or assigned is not supported")
    index = int(ctx.options(node, "CallOnceOptions").InitSubgraphIndex())
    for inner in ctx.subgraph(index, node):
        if inner.kind == "VAR_HANDLE":
            _var_handle(ctx, inner)
        elif inner.kind == "ASSIGN_VARIABLE" and len(inner.inputs) == 2 \
                and ctx.tensors.get(inner.inputs[1]) is not None and ctx.tensors[inner.inputs[1]].data is not None:
            value = ctx.tensors[inner.inputs[1]]
            _variable(ctx, inner, inner.inputs[0], value, assigned=True).initial = value.data.copy()
        else:
            raise ctx.fail(inner, "an init subgraph may only assign constants to variables (VAR_HANDLE, "
                                  "ASSIGN_VARIABLE of a constant)")


def check(g: Graph, op: Operator) -> None:
    """The variable holds the bytes read (TFLite Micro's Read: EvalTensorBytes == bytes)."""
    var, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    if not var.variable:
        raise OpError(f"{op.source}: reads '{var.name[:80]}', which is not a variable")
    if var.nbytes != y.nbytes or var.dtype != y.dtype:
        raise OpError(f"{op.source}: reads {y.dtype}{list(y.shape)} from a variable of {var.dtype}{list(var.shape)}")


OPS = (
    OpDef(
        kind="read_variable",
        summary="copy a resource variable's value (state kept between runs)",
        tflite=(SourceOp("VAR_HANDLE", _var_handle, ("resource",), "no operator: names the variable",
                         operator=False),
                SourceOp("READ_VARIABLE", _read_variable, ANY_TYPE),
                SourceOp("CALL_ONCE", _call_once, ("none",), "no operator: its init subgraph (only VAR_HANDLE, "
                                                             "ASSIGN_VARIABLE of constants) gives the first run's values; "
                                                             "before any use of a variable", operator=False)),
        variants=(Variant("generic", flat_copy, types=ANY_TYPE),),
        check=check,
        reference="TFLite Micro read_variable.cc / assign_variable.cc / micro_resource_variable.cc (byte copies)",
    ),
)

#: the heading of this module's rows in docs/VALIDATION.md
VALIDATION_TITLE = "resource_variables (ops/resource_variables.py: READ_VARIABLE)"
#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "read_variable of a tensor that is not a variable",
               "— (internal: the import rule emits read_variable of the variable a VAR_HANDLE names)",
               "not-a-model-check", "kept"),
    Validation("check", "read of another byte count or type than the variable",
               "MicroResourceVariables::Read: `TFLITE_DCHECK(EvalTensorBytes(tensor) == variable.bytes)` (off in release), then memcpy of the variable's bytes into the output [micro_resource_variable.cc:77-79]",
               "would-compute-differently", "kept (a read of another type with the same bytes is a raw copy in TFLM: see *Left*)"),
    Validation("_var_handle", "VAR_HANDLE with inputs, or without one RESOURCE output",
               "no check of the counts or the type; `TFLITE_DCHECK(output != nullptr)`, the output gets the resource id [k/var_handle.cc:66-70]",
               "would-compute-differently", "kept: utvm resolves handles at import", rule=True),
    Validation("_variable", "READ_VARIABLE / ASSIGN_VARIABLE handle that is not a VAR_HANDLE's output",
               "reads the resource id from whatever tensor it is (`TF_LITE_ENSURE` type resource or int32 [k/assign_variable.cc:66]), a run-time id",
               "would-compute-differently", "kept: utvm resolves the variable at compile time", rule=True),
    Validation("_variable", "value of another byte count than the variable (its first use)",
               "MicroResourceVariables::Assign / Read: `TFLITE_DCHECK(count_bytes == variable.bytes)` (off in release), memcpy of the variable's bytes from or into a smaller buffer [micro_resource_variable.cc:77,131]",
               "would-compute-differently", "kept", rule=True),
    Validation("_read_variable", "READ_VARIABLE without 1 input and 1 output",
               "`TFLITE_DCHECK(NumInputs(node) == 1)`, `NumOutputs == 1` only (off in release) [k/read_variable.cc:39-40]",
               "would-compute-differently", "kept", rule=True),
    Validation("assign_variable", "ASSIGN_VARIABLE without 2 inputs and no output",
               "`TF_LITE_ENSURE_EQ(NumInputs(node), 2)`, `NumOutputs == 0` [k/assign_variable.cc:54-55]",
               "refused-by-TFLM", "kept", rule=True),
    Validation("_call_once", "CALL_ONCE with inputs or outputs",
               "`TF_LITE_ENSURE(NumInputs(node) == 0)`, `NumOutputs == 0` [k/call_once.cc:51-52]",
               "refused-by-TFLM", "kept", rule=True),
    Validation("_call_once", "CALL_ONCE after a variable was read or assigned",
               "runs the init subgraph at its place on the first Invoke [k/call_once.cc:63-80]",
               "would-compute-differently", "kept: utvm gives the init values before the first run (a feature gap)", rule=True),
    Validation("_call_once", "init subgraph doing other than VAR_HANDLE + ASSIGN_VARIABLE of constants",
               "InvokeSubgraph runs any subgraph [k/call_once.cc:74]",
               "would-compute-differently", "kept: utvm folds the init subgraph into initial values (a feature gap)", rule=True),
)
