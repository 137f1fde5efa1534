"""Turn a graph into TVM-generated C kernels and the call list the AOT executor follows."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import tvm
from tvm import te

from ..errors import UtvmError, internal
from ..ir import Graph, Operator, Tensor
from ..kernels.kerneldef import KernelArg, KernelDef
from ..kernels.target import Target
from ..ops import get
from .kernel_headers import includes_for
from .offload import ExternalArg, ExternalKernel, ExternalModule
from .pipeline import PIPELINE_NAME
from .slots import Placement, View, alias_roots, plan_slots, read_view, strided_output


@dataclass
class KernelCall:
    """One call of the AOT executor: ``symbol(args...)``, with tensors named in the graph."""

    symbol: str             # C function name
    op_index: int
    op_name: str            # for profiles: kind and position in the source model
    args: list[str]         # tensor names, parameters in order, output last
    scratch_bytes: int = 0  # TVMBackendAllocWorkspace bytes the kernel asks for
    #: set when an external module took the operator: the module's name and its glue
    module: str = ""
    external: ExternalKernel | None = None
    #: the kernel variant of the operator that was used (utvm.ops), "" for external modules
    variant: str = ""
    #: the kernel may write its output over a same-shaped input (KernelDef.inplace)
    inplace: bool = False
    #: KernelDef.rows_out_of_order
    rows_out_of_order: bool = False


@dataclass
class Lowered:
    graph: Graph                                         # with the constants the lowering added
    calls: list[KernelCall]
    aliases: dict[str, str] = field(default_factory=dict)  # tensor -> tensor whose bytes it uses
    #: tensor -> where it lies inside another tensor (producers writing into a concatenation)
    views: dict[str, View] = field(default_factory=dict)
    c_source: str = ""
    tir_text: str = ""
    #: operator index -> the kernel configuration it was lowered with (none: its default)
    configs: Mapping[int, dict[str, Any]] = field(default_factory=dict)


def _sanitize(s: str) -> str:
    return re.sub(r"[^0-9A-Za-z_]", "_", s)


def lower_graph(graph: Graph, prefix: str, target: Target | str | None = None,
                offload: Sequence[ExternalModule] = (), compile_c: bool = True,
                configs: Mapping[int, dict[str, Any]] | None = None) -> Lowered:
    """Build every kernel, compile them with TVM's C target into one source file.

    ``target``, a :class:`Target` or a CPU name (e.g. cortex-m4), selects kernel variants; None
    means any CPU with 32-bit words.
    Each operator is first offered to the ``offload`` modules in order; the first that claims
    it supplies a glue function instead of a TVM kernel. ``compile_c=False`` stops before TVM's
    C code generation: calls, aliases and views as for the model, no source and no kernel scratch
    (for planning alone, as the planner fuzz does). ``configs`` (operator index -> kernel
    configuration, a ``utvm.configs.kernels.KernelConfigs``) reaches each operator's kernel
    builders on a copy of the operator (``Operator.config``); the graph is not changed."""
    target = target if isinstance(target, Target) else Target.for_cpu(target)
    configs = configs or {}
    funcs: dict[str, tvm.tirx.PrimFunc] = {}
    sources: dict[str, None] = {}  # KernelDef.source texts, in order, each once
    calls: list[KernelCall] = []
    aliases: dict[str, str] = {}
    tensors = dict(graph.tensors)
    placements = plan_slots(graph)
    roots = alias_roots(graph)
    views: dict[str, View] = {}
    for index, op in enumerate(graph.ops):
        try:
            opdef = get(op.kind)
            if opdef is None:
                raise UtvmError(f"{op.source}: no kernel for operator '{op.kind}'")
            if opdef.alias:
                aliases[op.outputs[0]] = op.inputs[0]
                continue
            if opdef.input_slots is not None:
                _fill_slots(graph, op, index, prefix, target, tensors, views, funcs, calls)
                continue
            view = read_view(graph, index, roots)
            if view is not None:
                views[op.outputs[0]] = view
                continue
            if graph.tensors[op.outputs[0]].size == 0:
                continue  # an empty output: nothing to compute
            placed = placements.get(op.outputs[0])
            external = _offload(graph, op, offload)
            if external is not None:
                module, kernel = external
                symbol = f"{prefix}_{module.c_name}_{op.kind}_{index}"
                names = [_bind_arg(tensors, arg, symbol) for arg in (*kernel.args, kernel.output)]
                calls.append(KernelCall(symbol, index, f"{op.kind}_{index}", names, module=module.name,
                                        external=kernel))
                if placed is not None and placed.view.strides is None:
                    views[placed.tensor] = placed.view
                continue
            configured = replace(op, config=configs[index]) if index in configs else op
            variant, kdef = opdef.kernel(graph, configured, target)
            symbol = f"{prefix}_{op.kind}_{index}"
            func, arg_names = _build(kdef, tensors, symbol)
            if placed is not None and kdef.output_tensor == placed.tensor:
                func = _into_view(func, placed, views)
            funcs[symbol] = func.with_attr("global_symbol", symbol)
            sources[kdef.source] = None
            calls.append(KernelCall(symbol, index, f"{op.kind}_{index}", arg_names, variant=variant,
                                    inplace=kdef.inplace, rows_out_of_order=kdef.rows_out_of_order))
        except UtvmError:
            raise
        except Exception as exc:  # the last line: one error naming the operator
            raise internal(f"{op.source} ({op.kind})", exc) from exc
    for module in offload:
        module.finalize([c.external for c in calls if c.module == module.name and c.external is not None])
    for call in calls:
        if call.external is not None:
            call.scratch_bytes = call.external.scratch_bytes
    lowered_graph = Graph(graph.name, tensors, graph.ops, graph.inputs, graph.outputs)
    if not funcs or not compile_c:
        return Lowered(lowered_graph, calls, aliases, views, configs=configs)
    mod = tvm.IRModule(funcs)
    try:
        with tvm.transform.PassContext(opt_level=3, config={"tirx.disable_assert": True}):
            lib = tvm.compile(mod, target=tvm.target.Target("c"), tir_pipeline=PIPELINE_NAME)
        source = finish_source(lib.mod.inspect_source(), "".join(sources))
    except UtvmError:
        raise
    except Exception as exc:
        raise internal("the kernels (TVM's C code generation)", exc) from exc
    for call in calls:
        if call.external is None:
            call.scratch_bytes = _scratch_bytes(source, call.symbol)
    return Lowered(lowered_graph, calls, aliases, views, source, mod.script(), configs)


def _build(kdef: KernelDef, tensors: dict[str, Tensor], symbol: str) -> tuple[tvm.tirx.PrimFunc, list[str]]:
    """The scheduled PrimFunc of a kernel and the tensor names of its arguments (output last)."""
    arg_names = [_bind_arg(tensors, arg, symbol) for arg in kdef.args]
    arg_names.append(kdef.output_tensor)
    func = te.create_prim_func([a.placeholder for a in kdef.args] + [kdef.output])
    sch = tvm.s_tir.Schedule(func)
    if kdef.schedule is not None:
        kdef.schedule(sch)
    _decompose_reductions(sch)
    return sch.mod["main"], arg_names


def _into_view(func: tvm.tirx.PrimFunc, placed: Placement, views: dict[str, View]) -> tvm.tirx.PrimFunc:
    """Let the kernel write its output into its planned slot: contiguous slots need nothing, a
    strided slot needs a kernel that writes by plain element stores (else the slot is given up
    and the concatenation copies the tensor)."""
    if placed.view.strides is not None:
        strided = strided_output(func, placed.view.strides)
        if strided is None:
            return func
        func = strided
    views[placed.tensor] = placed.view
    return func


def _fill_slots(graph: Graph, op: Operator, index: int, prefix: str, target: Target,
                tensors: dict[str, Tensor], views: dict[str, View],
                funcs: dict[str, tvm.tirx.PrimFunc], calls: list[KernelCall]) -> None:
    """A concatenation: every input whose producer did not write into its slot is copied there
    by the operator's kernel for one input."""
    opdef = get(op.kind)
    assert opdef is not None and opdef.input_slots is not None
    y = graph.tensors[op.outputs[0]]
    itemsize = y.nbytes // max(y.size, 1)
    roots = alias_roots(graph)
    for k, (name, slot) in enumerate(zip(op.inputs, opdef.input_slots(graph, op))):
        view = View(op.outputs[0], slot.offset * itemsize, slot.strides)
        root = roots.get(name, name)
        if views.get(root) == view:
            continue  # its producer wrote it there
        x = graph.tensors[name]
        part = f"{op.outputs[0]}:slot{k}"
        tensors[part] = Tensor(part, x.shape, x.dtype, x.quant)
        copy = Operator(op.kind, [name], [part], dict(op.attrs), source=op.source)
        variant, kdef = opdef.kernel(graph, copy, target)
        symbol = f"{prefix}_{op.kind}_{index}_{k}"
        func, arg_names = _build(kdef, tensors, symbol)
        if slot.strides is not None:
            strided = strided_output(func, slot.strides)
            if strided is None:
                raise UtvmError(f"{op.source}: the copy kernel of input {k} cannot write into its slot")
            func = strided
        views[part] = view
        funcs[symbol] = func.with_attr("global_symbol", symbol)
        calls.append(KernelCall(symbol, index, f"{op.kind}_{index}", arg_names, variant=variant))


_COMM_REDUCE = 2  # IterVar type of a reduction axis


def _decompose_reductions(sch: tvm.s_tir.Schedule) -> None:
    """Initialise every remaining reduction before its loop instead of on its first iteration:
    one branch less per step, and no 'may be used uninitialized' warnings from gcc."""
    pending = list(sch.get_child_blocks(sch.get_sblock("root")))
    while pending:
        block = pending.pop()
        pending.extend(sch.get_child_blocks(block))
        stmt = sch.get(block)
        if stmt.init is None:
            continue
        n_reduce = sum(1 for iv in stmt.iter_vars if int(iv.iter_type) == _COMM_REDUCE)
        loops = sch.get_loops(block)
        if 0 < n_reduce <= len(loops):
            sch.decompose_reduction(block, loops[len(loops) - n_reduce])


def _offload(graph: Graph, op: Operator,
             modules: Sequence[ExternalModule]) -> tuple[ExternalModule, ExternalKernel] | None:
    """(module, glue) of the first module that claims ``op``, or None."""
    for module in modules:
        kernel = module.claim(graph, op)
        if kernel is not None:
            return module, kernel
    return None


def _bind_arg(tensors: dict[str, Tensor], arg: KernelArg | ExternalArg, symbol: str) -> str:
    if arg.tensor:
        return arg.tensor
    name = f"{symbol}_{arg.role}"
    if isinstance(arg, KernelArg) and arg.scratch:
        shape = tuple(int(d) for d in arg.placeholder.shape)
        tensors[name] = Tensor(name=name, shape=shape, dtype=str(arg.placeholder.dtype))
        return name
    assert arg.constant is not None
    data = np.ascontiguousarray(arg.constant)
    tensors[name] = Tensor(name=name, shape=tuple(data.shape), dtype=str(data.dtype), data=data)
    return name


_ENTRY_RE = re.compile(r"\n// CodegenC: NOTE: Auto-generated entry function.*\Z", re.S)


def finish_source(src: str, definitions: str = "") -> str:
    """Make TVM's C output fit a firmware with several models in it, with ``definitions``
    (KernelDef.source) after the helpers' includes.

    TVM appends an entry function ``__tvm_ffi_main`` and a ``__tvm_ffi__library_ctx``
    global to every module: both would clash between two models, and neither is used by the
    AOT executor, which calls kernels by symbol.
    """
    src = _ENTRY_RE.sub("\n", src)
    src = src.replace("void* __tvm_ffi__library_ctx = NULL;\n", "")
    if re.search(r"\butvm_\w+\(", src):  # helpers of utvm/kernels/: the headers of the names used
        headers = "".join(f'#include "utvm/kernels/{h}"\n' for h in includes_for(src + definitions))
        src = src.replace("#include <math.h>\n", "#include <math.h>\n" + headers + definitions, 1)
    return _warning_clean(src)


_EMPTY_IF_RE = re.compile(r"^[ \t]*if \(!\(\w+ == NULL\)\) \{\n[ \t]*\}\n", re.M)
_LOCAL_RE = re.compile(r"^[ \t]*[A-Za-z_][\w]*\*? (\w+) = [^;\n]*;\n", re.M)
_DEF_RE = re.compile(r"^(TVM_DLL int32_t __tvm_ffi_\w+\(void\* self_handle, void\* args, "
                     r"int32_t num_args, void\* result\) \{\n)", re.M)


def _warning_clean(src: str) -> str:
    """Remove what the packed-API prologue declares and never uses (shape and stride
    pointers, the device id, the arguments' type indices, empty checks), so the kernels compile with -Wall -Wextra -Werror,
    and mark the unused packed-call parameters as such."""
    src = _EMPTY_IF_RE.sub("", src)
    parts = _DEF_RE.split(src)
    out = [parts[0]]
    for i in range(1, len(parts), 2):
        header, body = parts[i], parts[i + 1]
        changed = True
        while changed:
            changed = False
            # words counted once per pass: removals only lower the counts, so a stale count
            # never lets a used local go (the next pass sees the new counts)
            words = Counter(re.findall(r"\w+", body))
            for m in list(_LOCAL_RE.finditer(body)):
                if words[m.group(1)] == 1:
                    body = body.replace(m.group(0), "", 1)
                    changed = True
        out.append(header + "  (void)self_handle;\n  (void)num_args;\n  (void)result;\n" + body)
    return "".join(out)


def _scratch_bytes(source: str, symbol: str) -> int:
    """Bytes a kernel requests from TVMBackendAllocWorkspace (all live at once, worst case)."""
    body = _function_body(source, f"__tvm_ffi_{symbol}")
    total = 0
    for m in re.finditer(r"TVMBackendAllocWorkspace\(\d+, [^,]+, \(uint64_t\)(\d+)", body):
        total += (int(m.group(1)) + 15) // 16 * 16
    return total


def _function_body(source: str, name: str) -> str:
    start = source.rfind(f"{name}(void* self_handle")  # the definition, after the prototype
    start = source.find("{", source.find(")", start)) if start >= 0 else -1
    if start < 0:
        return ""
    depth = 0
    for i in range(start, len(source)):
        if source[i] == "{":
            depth += 1
        elif source[i] == "}":
            depth -= 1
            if depth == 0:
                return source[start: i + 1]
    return source[start:]
