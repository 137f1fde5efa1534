"""Generate the AOT executor, the constants and the public header of a compiled model."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..external.base import ExternalModule
from ..ir import Graph, Tensor
from ..lower.lowering import KernelCall, Lowered
from ..plan.memory import MemoryPlan, align_up, resolve_alias
from . import compat_v018

_C_TYPES = {"int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t",
            "float32": "float", "bool": "uint8_t"}
_UTVM_DTYPES = {"int8": "UTVM_DTYPE_INT8", "uint8": "UTVM_DTYPE_UINT8", "int16": "UTVM_DTYPE_INT16",
                "int32": "UTVM_DTYPE_INT32", "float32": "UTVM_DTYPE_FLOAT32",
                "bool": "UTVM_DTYPE_BOOL", "int64": "UTVM_DTYPE_INT64"}


@dataclass
class EmittedSources:
    header: str        # tvmgen_<name>.h
    executor: str      # <name>_lib1.c
    constants: str     # <name>_lib2.c
    constants_bytes: int
    io_names: dict[str, str]  # graph tensor -> C field name
    #: (symbol, raw little-endian bytes) of every constant, in <name>_lib2.c order
    constant_data: list[tuple[str, bytes]] = field(default_factory=list)
    #: external module C name -> its glue source (<name>_<module>.c)
    glue: dict[str, str] = field(default_factory=dict)
    #: --compat tvm-0.18: the system library (<name>_lib3.c), else ""
    system_lib: str = ""


def c_field_names(names: list[str]) -> dict[str, str]:
    """Unique C identifiers for the model's input and output tensors."""
    return unique_idents(names, lambda n: re.sub(r"[^0-9A-Za-z_]", "_", n.split(":")[0]).strip("_").lower(), "t_")


def unique_idents(names: list[str], base_of: Callable[[str], str], digit_prefix: str) -> dict[str, str]:
    """A C identifier per name: ``base_of(name)`` (``digit_prefix`` before a leading digit),
    made unique with _2, _3, ..."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for name in names:
        base = base_of(name) or "tensor"
        if base[0].isdigit():
            base = digit_prefix + base
        ident, n = base, 1
        while ident in used:
            n += 1
            ident = f"{base}_{n}"
        used.add(ident)
        out[name] = ident
    return out


#: Inserted into the constants' source when a float constant is infinite or NaN: C99 has
#: INFINITY (math.h); a NaN keeps its sign and payload through GCC's and Clang's builtins.
NONFINITE_PRELUDE = [
    "#include <math.h>",
    "#if defined(__GNUC__)",
    "#define UTVM_NANF(payload) __builtin_nanf(payload)",
    "#define UTVM_NANSF(payload) __builtin_nansf(payload)",
    "#else",
    "#define UTVM_NANF(payload) NAN",
    "#define UTVM_NANSF(payload) NAN",
    "#endif",
]


def c_string(text: str) -> str:
    """``text`` as a C string literal: printable ASCII as is, every other byte of its UTF-8 (NUL,
    newlines, quotes, backslashes, '?' of trigraphs) as an octal escape."""
    out = []
    for b in text.encode("utf-8"):
        ch = chr(b)
        out.append(ch if 0x20 <= b < 0x7F and ch not in '\\"?' else f"\\{b:03o}")
    return '"' + "".join(out) + '"'


def c_comment(text: str) -> str:
    """``text`` safe inside a C comment: printable ASCII only, no comment delimiters."""
    clean = "".join(ch if 0x20 <= ord(ch) < 0x7F else "?" for ch in text)
    return clean.replace("*/", "*?").replace("/*", "?*").replace("\\", "/")


def c_float(v: np.float32) -> str:
    """A C99 constant expression for exactly the bits of float32 ``v``: a literal, or for
    inf and NaN (sign, quiet bit and payload kept) the macros of NONFINITE_PRELUDE."""
    v = np.float32(v)
    if np.isfinite(v):
        return f"{float(v)!r}f"  # repr round-trips: the nearest float is v itself
    bits = int(v.view(np.uint32))
    sign = "-" if bits >> 31 else ""
    if np.isinf(v):
        return f"{sign}INFINITY"
    payload = bits & 0x3FFFFF
    macro = "UTVM_NANF" if bits & 0x400000 else "UTVM_NANSF"
    return f'{sign}{macro}("{payload:#x}")'


def _format_array(data: np.ndarray) -> str:
    flat = data.reshape(-1)
    if flat.dtype == np.float32:
        items = [c_float(v) for v in flat]
    else:
        items = [str(int(v)) for v in flat]
    lines = []
    for i in range(0, len(items), 24):
        lines.append("  " + ", ".join(items[i:i + 24]) + ",")
    return "\n".join(lines)


def emit(name: str, lowered: Lowered, plan: MemoryPlan, io_in_pool: bool,
         constants_c: bool = True, modules: Sequence[ExternalModule] = (),
         compat: str | None = None, shared_pool: str | None = None) -> EmittedSources:
    """Sources of a compiled model; ``constants_c=False`` skips the C text of the constants
    (``constants`` is then empty; ``constant_data`` always holds the raw bytes). Every module
    in ``modules`` gets a glue source, empty when it took no operator. ``shared_pool`` names the
    model group whose pool (``tvmgen_<group>_pool``, defined by the group) the model runs in."""
    g = lowered.graph
    prefix = f"tvmgen_{name}"
    io = (compat_v018.field_names if compat else c_field_names)(g.inputs + g.outputs)

    # constants: every constant tensor a kernel reads
    const_syms: dict[str, str] = {}
    const_lines = [
        f"/* Constants of model '{name}', generated by utvm. They stay in flash (section .rodata.tvm). */",
        "#include <stdint.h>",
        "",
        "#if defined(__GNUC__) && defined(__APPLE__)",
        "/* Mach-O (macOS hosts) spells sections \"segment,section\": const data stays in __TEXT,__const. */",
        "#define UTVM_CONST_ATTR __attribute__((aligned(16)))",
        "#elif defined(__GNUC__)",
        "#define UTVM_CONST_ATTR __attribute__((section(\".rodata.tvm\"), aligned(16)))",
        "#else",
        "#define UTVM_CONST_ATTR",
        "#endif",
        "",
    ]
    const_decls: list[str] = []
    constant_data: list[tuple[str, bytes]] = []
    constants_bytes = 0
    for call in lowered.calls:
        for arg in call.args:
            t = g.tensors[resolve_alias(arg, lowered.aliases)]
            if not t.is_constant or t.name in const_syms:
                continue
            sym = f"{prefix}_c{len(const_syms)}"
            const_syms[t.name] = sym
            ctype = _C_TYPES[t.dtype]
            assert t.data is not None
            data = np.ascontiguousarray(t.data.astype(t.dtype))
            constants_bytes += data.nbytes
            constant_data.append((sym, data.astype(data.dtype.newbyteorder("<")).tobytes()))
            if constants_c:
                const_lines.append(f"/* {c_comment(t.name[:100])} {t.dtype}{list(t.shape)} */")
                const_lines.append(f"const {ctype} {sym}[{max(data.size, 1)}] UTVM_CONST_ATTR = {{")
                const_lines.append(_format_array(data) if data.size else "  0,")
                const_lines.append("};")
            const_decls.append(f"extern const {ctype} {sym}[{max(data.size, 1)}];")

    if any(t.dtype == "float32" and not np.all(np.isfinite(t.data)) for t in g.tensors.values()
           if t.name in const_syms and t.data is not None):
        at = const_lines.index("#include <stdint.h>") + 1
        const_lines[at:at] = NONFINITE_PRELUDE
    if compat:
        header = compat_v018.header(name, g, plan, io)
        system_lib = compat_v018.system_lib(name, len(g.inputs), len(g.outputs))
    else:
        header, system_lib = _header(name, g, plan, io, io_in_pool), ""
    executor = _executor(name, lowered, plan, io, const_syms, const_decls, io_in_pool, shared_pool)
    constants_text = "\n".join(const_lines) + "\n" if constants_c else ""
    glue = {m.c_name: _glue(name, m, [c for c in lowered.calls if c.module == m.name]) for m in modules}
    return EmittedSources(header, executor, constants_text, constants_bytes, io,
                          constant_data, glue, system_lib)


def _glue_signature(call: KernelCall) -> str:
    assert call.external is not None
    k = call.external
    params = [f"{a.ctype} {a.name}" for a in (*k.args, k.output)]
    return f"int32_t {call.symbol}({', '.join(params)}, uint8_t* scratch, int32_t scratch_size)"


def _glue(name: str, module: ExternalModule, calls: list[KernelCall]) -> str:
    """The C functions through which the AOT executor calls an external module."""
    lines = [
        f"/* Calls of model '{name}' into external module '{module.name}', generated by utvm. */",
        "#include <stddef.h>",
        "#include <stdint.h>",
        "",
        *[f'#include "{h}"' for h in module.headers()],
        "",
    ]
    for call in calls:
        assert call.external is not None
        lines.append(f"/* {call.op_name}: {call.external.function} */")
        lines.append(_glue_signature(call) + ";")
        lines.append(_glue_signature(call) + " {")
        lines += [f"  {stmt}" for stmt in call.external.body]
        lines += ["}", ""]
    if not calls:
        lines.append(f"/* No operator of this model was offloaded to {module.name}. */")
        lines.append(f"typedef int {module.c_name}_{name}_unused_t;")
    return "\n".join(lines) + "\n"


def _quant_macros(upper: str, field: str, t: Tensor) -> list[str]:
    if t.quant is None or t.dtype not in ("int8", "uint8", "int16"):
        return []
    s, z = t.quant.scalar()
    return [f"#define TVMGEN_{upper}_{field.upper()}_SCALE {float(np.float32(s))!r}f",
            f"#define TVMGEN_{upper}_{field.upper()}_ZERO_POINT ({z})"]


def _header(name: str, g: Graph, plan: MemoryPlan, io: dict[str, str], io_in_pool: bool) -> str:
    upper = name.upper()
    prefix = f"tvmgen_{name}"
    lines = [
        f"/* Public API of model '{name}', generated by utvm. */",
        f"#ifndef TVMGEN_{upper}_H_",
        f"#define TVMGEN_{upper}_H_",
        "",
        "#include <stdint.h>",
        "",
        '#include "utvm/model.h"',
        "",
        "#ifdef __cplusplus",
        'extern "C" {',
        "#endif",
        "",
        "/* Bytes of the workspace pool (intermediate tensors and kernel scratch"
        + (", inputs and outputs included" if io_in_pool else "") + "). */",
        f"#define TVMGEN_{upper}_WORKSPACE_SIZE {plan.pool_size}",
        f"#define TVMGEN_{upper}_WORKSPACE_ALIGNMENT 16",
        *_pool_macros(upper, plan),
        f"#define TVMGEN_{upper}_IO_IN_POOL {1 if io_in_pool else 0}",
        "/* Bytes of state kept between runs (SVDF / LSTM states), outside the pool. */",
        f"#define TVMGEN_{upper}_STATE_SIZE {plan.state_size}",
        "",
    ]
    for kind, names in (("input", g.inputs), ("output", g.outputs)):
        for n in names:
            t = g.tensors[n]
            f = io[n]
            lines.append(f"/* {kind} '{c_comment(n)}': {t.dtype} {list(t.shape)} */")
            lines.append(f"#define TVMGEN_{upper}_{f.upper()}_SIZE {t.nbytes}")
            lines += _quant_macros(upper, f, t)
    lines.append("")
    for kind, names in (("inputs", g.inputs), ("outputs", g.outputs)):
        lines.append(f"struct {prefix}_{kind} {{")
        for n in names:
            lines.append(f"  void* {io[n]};")
        lines.append("};")
        lines.append("")
    lines += [
        "/* Run the model with its static pool. Returns 0 or a utvm_status_t. */",
        f"int32_t {prefix}_run(struct {prefix}_inputs* inputs, struct {prefix}_outputs* outputs);",
        "",
        f"/* Run with an application-owned pool of TVMGEN_{upper}_WORKSPACE_SIZE bytes, 16-byte aligned. */",
        f"int32_t {prefix}_run_with_pool(struct {prefix}_inputs* inputs, struct {prefix}_outputs* outputs,",
        f"{' ' * (len(prefix) + 23)}uint8_t* pool);",
        "",
        f"/* Run with application-owned pools, one pointer per pool (TVMGEN_{upper}_NUM_POOLS, in the order",
        "   of the TVMGEN_..._POOL_<NAME>_SIZE macros), each 16-byte aligned. run_with_pool carves them",
        "   one after the other (16-byte aligned) out of one block. */",
        f"int32_t {prefix}_run_with_pools(struct {prefix}_inputs* inputs, struct {prefix}_outputs* outputs,",
        f"{' ' * (len(prefix) + 24)}uint8_t* const* pools);",
        "",
    ]
    if io_in_pool:
        lines += [
            "/* Where the inputs and outputs live inside a pool (NULL: the static pool). Write the",
            "   inputs there, run with the same structs, read the outputs there. */",
            f"void {prefix}_map_io(uint8_t* pool, struct {prefix}_inputs* inputs, struct {prefix}_outputs* outputs);",
            "",
        ]
    lines += [
        "/* Set the state kept between runs (the variable tensors of SVDF and LSTM layers, in a static",
        "   buffer outside the pool) to its initial value, as TFLite Micro's ResetVariableTensors()",
        "   does. The first run resets it by itself; later runs continue from the state the previous",
        f"   run left (streaming). A model without state (TVMGEN_{upper}_STATE_SIZE 0) does nothing. */",
        f"void {prefix}_reset(void);",
        "",
        "/* Descriptor for generic drivers (RPC server, test harnesses). */",
        f"extern const utvm_model_t {prefix}_model;",
        "",
        "#ifdef __cplusplus",
        "}",
        "#endif",
        "",
        f"#endif /* TVMGEN_{upper}_H_ */",
    ]
    return "\n".join(lines) + "\n"


def _pool_macros(upper: str, plan: MemoryPlan) -> list[str]:
    lines = [f"#define TVMGEN_{upper}_NUM_POOLS {len(plan.pools)}"]
    for pool in plan.pools:
        if pool.name:
            lines += [f"/* pool '{pool.name}' (linker section {pool_section(pool.name)}) */",
                      f"#define TVMGEN_{upper}_POOL_{pool.name.upper()}_SIZE {pool.size}"]
    return lines


def _tensor_info(g: Graph, names: list[str]) -> list[str]:
    rows = []
    for n in names:
        t = g.tensors[n]
        shape = list(t.shape) + [0] * (6 - len(t.shape))
        scale, zp = (t.quant.scalar() if t.quant is not None else (0.0, 0))
        rows.append(f'  {{{c_string(n)}, {_UTVM_DTYPES[t.dtype]}, {len(t.shape)}, '
                    f'{{{", ".join(str(d) for d in shape)}}}, {t.nbytes}u, {float(np.float32(scale))!r}f, {zp}}},')
    return rows


def pool_symbol(prefix: str, pool_name: str) -> str:
    """The C symbol of a model's static pool (``pool_name`` "" : the single default pool)."""
    return f"{prefix}_pool_{pool_name}" if pool_name else f"{prefix}_pool"


def pool_section(pool_name: str, noinit: bool = False) -> str:
    """The linker section of a named pool (``--pool NAME:BYTES``)."""
    return f".{'noinit' if noinit else 'bss'}.tvm.{pool_name}"


#: UTVM_POOL_ATTR: the attributes of a static pool (UTVM_POOL_SECTION, when defined, places it)
POOL_ATTR = ["#if defined(UTVM_POOL_SECTION) && defined(__GNUC__)",
             "#define UTVM_POOL_ATTR __attribute__((section(UTVM_POOL_SECTION), aligned(16)))",
             "#elif defined(__GNUC__)",
             "#define UTVM_POOL_ATTR __attribute__((aligned(16)))",
             "#else",
             "#define UTVM_POOL_ATTR",
             "#endif"]


def _pool_code(name: str, plan: MemoryPlan, shared_pool: str | None) -> list[str]:
    """The static pools and ``<prefix>_pools(block, pools)``, which points ``pools`` at them (block
    NULL) or carves them one after the other out of one application-owned block."""
    prefix, upper = f"tvmgen_{name}", name.upper()
    lines = [*POOL_ATTR, ""]
    symbols = []
    if shared_pool is not None:
        symbols.append(f"tvmgen_{shared_pool}_pool")
        lines += [f"/* The pool of model group '{shared_pool}', shared by its models (they run one after the other). */",
                  f"extern uint8_t {symbols[0]}[];"]
    elif len(plan.pools) == 1 and not plan.pools[0].name:
        symbols.append(pool_symbol(prefix, ""))
        lines.append(f"static uint8_t {symbols[0]}[TVMGEN_{upper}_WORKSPACE_SIZE > 0 ? TVMGEN_{upper}_WORKSPACE_SIZE : 1]"
                     " UTVM_POOL_ATTR;")
    else:
        for pool in plan.pools:
            macro, sym = f"UTVM_POOL_{pool.name.upper()}_SECTION", pool_symbol(prefix, pool.name)
            symbols.append(sym)
            lines += [f"/* pool '{pool.name}': {pool.size} bytes"
                      + (f" of at most {pool.capacity}" if pool.capacity is not None else "") + " */",
                      f"#if !defined({macro}) && defined(UTVM_POOL_NOINIT)",
                      f'#define {macro} "{pool_section(pool.name, noinit=True)}"',
                      f"#elif !defined({macro})",
                      f'#define {macro} "{pool_section(pool.name)}"',
                      "#endif",
                      "#if defined(__GNUC__)",
                      f"static uint8_t {sym}[{max(pool.size, 1)}] __attribute__((section({macro}), aligned(16)));",
                      "#else",
                      f"static uint8_t {sym}[{max(pool.size, 1)}];",
                      "#endif"]
    lines += ["", f"#define UTVM_NUM_POOLS {len(symbols)}u",
              f"static void {prefix}_pools(uint8_t* block, uint8_t** pools) {{",
              "  if (block == NULL) {"]
    lines += [f"    pools[{k}] = {sym};" for k, sym in enumerate(symbols)]
    lines += ["    return;", "  }"]
    start = 0
    for k, pool in enumerate(plan.pools):
        lines.append(f"  pools[{k}] = block + {start};")
        start += align_up(pool.size)
    lines += ["}", ""]
    return lines


def _executor(name: str, lowered: Lowered, plan: MemoryPlan, io: dict[str, str],
              const_syms: dict[str, str], const_decls: list[str], io_in_pool: bool,
              shared_pool: str | None = None) -> str:
    g = lowered.graph
    upper = name.upper()
    prefix = f"tvmgen_{name}"
    pool_vars = [f"pool_{p.name}" if p.name else "pool" for p in plan.pools]
    tvm_calls = [c for c in lowered.calls if c.external is None]
    max_args = max((len(c.args) for c in tvm_calls), default=1)
    in_index = {resolve_alias(n, lowered.aliases): i for i, n in enumerate(g.inputs)}
    out_index = {resolve_alias(n, lowered.aliases): i for i, n in enumerate(g.outputs)}

    def ref(tensor: str) -> str:
        root = resolve_alias(tensor, lowered.aliases)
        if root in const_syms:
            return f"(void*){const_syms[root]}"
        buffer, offset = plan.storage.get(tensor, (root, 0))
        for index, base in ((out_index, "outputs"), (in_index, "inputs")):
            if buffer in index:
                at = f"{base}[{index[buffer]}]"
                return f"((uint8_t*){at} + {offset})" if offset else at
        if root in plan.state:
            return f"{prefix}_state + {plan.state[root]}"
        return f"{pool_vars[plan.pool_of(tensor)]} + {plan.offsets[tensor]}"

    L = [
        f"/* AOT executor of model '{name}', generated by utvm: kernels are called directly, in order,",
        "   with every tensor at an offset of the statically planned pool. No heap. */",
        "#include <stddef.h>",
        "#include <stdint.h>",
        "#include <string.h>",
        "",
        '#include "tvm/ffi/c_api.h"',
        '#include "utvm/crt.h"',
        '#include "utvm/model.h"',
        '#include "utvm/platform.h"',
        f'#include "{prefix}.h"',
        "",
        f"#ifndef TVMGEN_{upper}_STATE_SIZE  /* not in the header of --compat tvm-0.18 */",
        f"#define TVMGEN_{upper}_STATE_SIZE {plan.state_size}",
        "#endif",
        "",
        "/* kernels (TVM-generated, " + f"{name}_lib0.c) */",
    ]
    for call in tvm_calls:
        L.append(f"int32_t __tvm_ffi_{call.symbol}(void* self, void* args, int32_t num_args, void* result);")
    for module in dict.fromkeys(c.module for c in lowered.calls if c.external is not None):
        L.append(f"/* external module '{module}' (codegen/{module.replace('-', '_')}/src) */")
        L += [_glue_signature(c) + ";" for c in lowered.calls if c.module == module]
    L.append("")
    L.append(f"/* constants ({name}_lib2.c) */")
    L += const_decls
    L += [
        "",
        *_pool_code(name, plan, shared_pool),
        *_state_code(prefix, upper, g, plan),
        f"static const char* const {prefix}_op_names[{max(len(lowered.calls), 1)}] = {{",
    ]
    for call in lowered.calls:
        L.append(f'  "{call.op_name}",')
    if not lowered.calls:
        L.append('  "",')
    L += [
        "};",
        "",
        "#ifdef UTVM_PROFILE",
        f"static uint32_t {prefix}_op_cycles[{max(len(lowered.calls), 1)}];",
        "#define UTVM_OP_BEGIN() uint32_t utvm_t0 = utvm_platform_cycles()",
        f"#define UTVM_OP_END(i) {prefix}_op_cycles[(i)] = utvm_platform_cycles() - utvm_t0",
        f"#define UTVM_OP_CYCLES {prefix}_op_cycles",
        "#else",
        "#define UTVM_OP_BEGIN() do { } while (0)",
        "#define UTVM_OP_END(i) do { } while (0)",
        "#define UTVM_OP_CYCLES NULL",
        "#endif",
        "",
    ]
    if tvm_calls:
        L += [
            "static void utvm_bind(TVMFFIAny* arg, DLTensor* tensor, void* data) {",
            "  tensor->data = data;",
            "  tensor->device.device_type = kDLCPU;",
            "  tensor->device.device_id = 0;",
            "  tensor->ndim = 0;",
            "  tensor->shape = NULL;",
            "  tensor->strides = NULL;",
            "  tensor->byte_offset = 0;",
            "  arg->type_index = kTVMFFIDLTensorPtr;",
            "  arg->zero_padding = 0;",
            "  arg->v_ptr = tensor;",
            "}",
            "",
        ]
    L.append(f"static int32_t {prefix}_execute(void* const* inputs, void* const* outputs, uint8_t* const* pools) {{")
    if tvm_calls:
        L += [f"  DLTensor tensors[{max_args}];", f"  TVMFFIAny args[{max_args}];"]
    L += [f"  uint8_t* {var} = pools[{k}];" for k, var in enumerate(pool_vars)]
    L.append("  int32_t rc;")
    if plan.state:
        L += [f"  if (!{prefix}_state_ready) {{", f"    {prefix}_reset();", "  }"]
    if not any(True for _ in g.inputs):
        L.append("  (void)inputs;")
    L += [f"  (void){var};" for var in pool_vars]
    L.append("  (void)outputs;")
    for i, call in enumerate(lowered.calls):
        L.append(f"  /* {i}: {call.op_name} */")
        L.append("  {")
        if call.external is not None:
            args = [r if r.startswith("(void*)") else f"(void*)({r})" for r in map(ref, call.args)]
            s = plan.scratch.get(i)
            args += [f"{pool_vars[s.pool]} + {s.offset}", f"{call.scratch_bytes}"] if s else ["NULL", "0"]
            L.append("    UTVM_OP_BEGIN();")
            L.append(f"    rc = {call.symbol}({', '.join(args)});")
            L.append(f"    UTVM_OP_END({i});")
            L += ["    if (rc != 0) {", "      return UTVM_ERR_KERNEL;", "    }", "  }"]
            continue
        for j, arg in enumerate(call.args):
            L.append(f"    utvm_bind(&args[{j}], &tensors[{j}], {ref(arg)});")
        if i in plan.scratch:
            s = plan.scratch[i]
            L.append(f"    utvm_scratch_set({pool_vars[s.pool]} + {s.offset}, {s.size}u);")
        L.append("    UTVM_OP_BEGIN();")
        L.append(f"    rc = __tvm_ffi_{call.symbol}(NULL, args, {len(call.args)}, NULL);")
        L.append(f"    UTVM_OP_END({i});")
        if i in plan.scratch:
            L.append("    utvm_scratch_set(NULL, 0u);")
        L.append("    if (rc != 0) {")
        L.append("      return UTVM_ERR_KERNEL;")
        L.append("    }")
        L.append("  }")
    L += ["  return UTVM_OK;", "}", ""]

    n_in, n_out = len(g.inputs), len(g.outputs)
    L.append("/* Inputs and outputs must be 4-byte aligned: kernels may read and write them four int8 lanes\n"
             "   (or one int32/float32 element) at a time. */\n"
             "static int utvm_check_io(void* const* ptrs, uint32_t n) {\n  uint32_t i;\n"
             "  for (i = 0; i < n; ++i) {\n"
             "    if (ptrs[i] == NULL || ((uintptr_t)ptrs[i] & 3u) != 0u) {\n      return 0;\n    }\n"
             "  }\n  return 1;\n}\n")
    L.append(f"static int32_t {prefix}_check(struct {prefix}_inputs* in, struct {prefix}_outputs* out,")
    L.append(f"{' ' * (len(prefix) + 20)}void** inputs, void** outputs) {{")
    L.append("  if (in == NULL || out == NULL) {")
    L.append("    return UTVM_ERR_ARGUMENT;")
    L.append("  }")
    for i, n in enumerate(g.inputs):
        L.append(f"  inputs[{i}] = in->{io[n]};")
    for i, n in enumerate(g.outputs):
        L.append(f"  outputs[{i}] = out->{io[n]};")
    L.append(f"  return (utvm_check_io(inputs, {n_in}u) && utvm_check_io(outputs, {n_out}u)) ? UTVM_OK"
             " : UTVM_ERR_ARGUMENT;")
    L.append("}")
    L.append("")
    pools_decl = "  uint8_t* pools[UTVM_NUM_POOLS];"
    L += [
        f"int32_t {prefix}_run(struct {prefix}_inputs* in, struct {prefix}_outputs* out) {{",
        f"  void* inputs[{max(n_in, 1)}];",
        f"  void* outputs[{max(n_out, 1)}];",
        pools_decl,
        f"  int32_t rc = {prefix}_check(in, out, inputs, outputs);",
        "  if (rc != UTVM_OK) {",
        "    return rc;",
        "  }",
        f"  {prefix}_pools(NULL, pools);",
        f"  return {prefix}_execute(inputs, outputs, pools);",
        "}",
        "",
        f"int32_t {prefix}_run_with_pools(struct {prefix}_inputs* in, struct {prefix}_outputs* out,",
        f"{' ' * (len(prefix) + 19)}uint8_t* const* pools) {{",
        f"  void* inputs[{max(n_in, 1)}];",
        f"  void* outputs[{max(n_out, 1)}];",
        "  int32_t rc;",
        "  uint32_t k;",
        "  for (k = 0; k < UTVM_NUM_POOLS; ++k) {",
        "    if (pools == NULL || pools[k] == NULL || ((uintptr_t)pools[k] % 16u) != 0u) {",
        "      return UTVM_ERR_ARGUMENT;",
        "    }",
        "  }",
        f"  rc = {prefix}_check(in, out, inputs, outputs);",
        "  if (rc != UTVM_OK) {",
        "    return rc;",
        "  }",
        f"  return {prefix}_execute(inputs, outputs, pools);",
        "}",
        "",
        f"int32_t {prefix}_run_with_pool(struct {prefix}_inputs* in, struct {prefix}_outputs* out, uint8_t* pool) {{",
        pools_decl,
        "  if (pool == NULL || ((uintptr_t)pool % 16u) != 0u) {",
        "    return UTVM_ERR_ARGUMENT;",
        "  }",
        f"  {prefix}_pools(pool, pools);",
        f"  return {prefix}_run_with_pools(in, out, pools);",
        "}",
        "",
        f"static int32_t {prefix}_model_run(void* const* inputs, void* const* outputs, uint8_t* pool) {{",
        pools_decl,
        f"  if (inputs == NULL || outputs == NULL || !utvm_check_io(inputs, {n_in}u) || !utvm_check_io(outputs, {n_out}u)",
        "      || ((uintptr_t)pool % 16u) != 0u) {",
        "    return UTVM_ERR_ARGUMENT;",
        "  }",
        f"  {prefix}_pools(pool, pools);",
        f"  return {prefix}_execute(inputs, outputs, pools);",
        "}",
        "",
    ]
    io_fn = "NULL"
    if io_in_pool:
        io_fn = f"{prefix}_io_in_pool"
        L.append(f"static void* {prefix}_io_in_pool(uint8_t* pool, int32_t is_output, uint32_t index) {{")
        L.append(pools_decl)
        L.append(f"  {prefix}_pools(pool, pools);")
        for names, flag in ((g.inputs, 0), (g.outputs, 1)):
            for i, n in enumerate(names):
                root = resolve_alias(n, lowered.aliases)
                L.append(f"  if (is_output == {flag} && index == {i}u) {{")
                L.append(f"    return pools[{plan.pool_of(root)}] + {plan.offsets[root]};")
                L.append("  }")
        L.append("  return NULL;")
        L.append("}")
        L.append("")
        L.append(f"void {prefix}_map_io(uint8_t* pool, struct {prefix}_inputs* in, struct {prefix}_outputs* out) {{")
        for i, n in enumerate(g.inputs):
            L.append(f"  if (in != NULL) {{\n    in->{io[n]} = {prefix}_io_in_pool(pool, 0, {i}u);\n  }}")
        for i, n in enumerate(g.outputs):
            L.append(f"  if (out != NULL) {{\n    out->{io[n]} = {prefix}_io_in_pool(pool, 1, {i}u);\n  }}")
        L.append("}")
        L.append("")
    L.append(f"static const utvm_tensor_info_t {prefix}_input_info[{max(n_in, 1)}] = {{")
    L += _tensor_info(g, g.inputs)
    L.append("};")
    L.append(f"static const utvm_tensor_info_t {prefix}_output_info[{max(n_out, 1)}] = {{")
    L += _tensor_info(g, g.outputs)
    L.append("};")
    L += [
        "",
        f"const utvm_model_t {prefix}_model = {{",
        f'  "{name}",',
        f"  {n_in}u,",
        f"  {n_out}u,",
        f"  {prefix}_input_info,",
        f"  {prefix}_output_info,",
        f"  TVMGEN_{upper}_WORKSPACE_SIZE,",
        f"  {prefix}_model_run,",
        f"  {io_fn},",
        f"  {len(lowered.calls)}u,",
        f"  {prefix}_op_names,",
        "  UTVM_OP_CYCLES,",
        f"  TVMGEN_{upper}_STATE_SIZE,",
        f"  {prefix}_reset,",
        "};",
    ]
    return "\n".join(L) + "\n"


def _state_code(prefix: str, upper: str, g: Graph, plan: MemoryPlan) -> list[str]:
    """The state buffer (variable tensors, kept between runs) and the reset function."""
    lines = [f"/* State kept between runs ({len(plan.state)} tensors), reset to the zero points before the",
             "   first run and by the reset function. */"]
    if plan.state:
        lines += [
            f"static uint8_t {prefix}_state[TVMGEN_{upper}_STATE_SIZE] __attribute__((aligned(16)));",
            f"static int {prefix}_state_ready;",
            "",
        ]
    lines.append(f"void {prefix}_reset(void) {{")
    for name, offset in sorted(plan.state.items(), key=lambda kv: kv[1]):
        t = g.tensors[name]
        fill = t.quant.scalar()[1] if t.quant is not None and t.dtype == "int8" else 0
        lines.append(f"  memset({prefix}_state + {offset}, {fill}, {t.nbytes}u);  /* {c_comment(name[:60])} */")
    if plan.state:
        lines.append(f"  {prefix}_state_ready = 1;")
    lines += ["}", ""]
    return lines
