"""CMSIS-NN as an external module: int8 convolutions, depthwise convolutions, fully connected
layers, pooling, softmax and add, and 16x8 convolutions and depthwise convolutions call Arm's
kernels instead of TVM-generated code.

The glue fills CMSIS-NN's parameter structs (as TensorFlow Lite Micro's CMSIS-NN kernels do:
offsets are negated input zero points, shifts in TFLite's sign convention) and checks at run
time that the scratch the memory plan gave is at least what CMSIS-NN asks for. Scratch sizes
are known at compile time: the CMSIS-NN ``*_get_buffer_size_{dsp,mve}`` functions, which Arm
documents for use on the host, are built from the given sources and run here.

The library comes from ``--cmsis-nn-dir`` (a CMSIS-NN checkout: Include/, Source/); the files
the glue needs are copied into the MLF under codegen/cmsis_nn/lib. A Zephyr build compiles the
glue only and links Zephyr's own cmsis-nn module (CONFIG_CMSIS_NN).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from ..errors import UtvmError
from ..ir import Graph, Operator, Tensor
from ..kernels import fixedpoint as fp
from ..kernels.requant import activation_range_int8, activation_range_quantized, effective_scales
from ..lower.offload import ExternalArg, ExternalKernel, ExternalModule, LibraryFiles, OffloadOptions
from ..ops.common import int64_accumulation

#: CPUs whose CMSIS-NN build uses Helium (MVE) or the DSP extension; others get plain C
MVE_CPUS = ("cortex-m55", "cortex-m85")
DSP_CPUS = ("cortex-m4", "cortex-m7", "cortex-m33", "cortex-m35p", "cortex-m52")


def variant_for(cpu: str | None) -> str:
    """Which CMSIS-NN code path a CPU compiles: "mve", "dsp" or "plain"."""
    c = (cpu or "").lower()
    if c in MVE_CPUS:
        return "mve"
    if c in DSP_CPUS:
        return "dsp"
    return "plain"


def _dims(*v: int) -> str:
    return "{" + ", ".join(str(int(x)) for x in v) + "}"


def _int8_quant(*tensors: Tensor) -> bool:
    return all(t.dtype == "int8" and t.quant is not None for t in tensors)


def _channel_multipliers(x: Tensor, w: Tensor, y: Tensor) -> tuple[np.ndarray, np.ndarray]:
    """Per output channel int32 multipliers and shifts of a convolution (TFLite's, in double)."""
    cout = y.shape[3]
    scales = list(effective_scales(x, w, y, True))
    if len(scales) == 1:
        scales *= cout
    pairs = [fp.quantize_multiplier(s) for s in scales]
    return np.array([m for m, _ in pairs], np.int32), np.array([s for _, s in pairs], np.int32)


def _conv_function(depthwise: bool, suffix: str) -> str:
    return ("arm_depthwise_conv_wrapper_" if depthwise else "arm_convolve_wrapper_") + suffix


def _conv_params(op: Operator, depthwise: bool, tensors: tuple[Tensor, Tensor, Tensor], offsets: tuple[int, int],
                 act: tuple[int, int]) -> tuple[str, str, str]:
    """(params struct type, its initializer, filter dims) of a convolution or depthwise
    convolution wrapper: ``offsets`` input and output, ``act`` the clamp."""
    x, w, y = tensors
    cin, cout, kh, kw = x.shape[3], y.shape[3], w.shape[1], w.shape[2]
    (sh, sw), (dh, dw) = op.attrs["strides"], op.attrs["dilation"]
    top, left = op.attrs["padding"][0], op.attrs["padding"][1]
    tile = lambda a, bb: "{" + f"{bb}, {a}" + "}"  # noqa: E731  (cmsis_nn_tile is {w, h})
    window = f"{tile(sh, sw)}, {tile(top, left)}, {tile(dh, dw)}, {{{act[0]}, {act[1]}}}"
    if depthwise:
        return ("cmsis_nn_dw_conv_params", f"{{{offsets[0]}, {offsets[1]}, {cout // cin}, {window}}}",
                _dims(1, kh, kw, cout))
    return "cmsis_nn_conv_params", f"{{{offsets[0]}, {offsets[1]}, {window}}}", _dims(cout, kh, kw, cin)


class CmsisNN(ExternalModule):
    name = "cmsis-nn"
    summary = "Arm CMSIS-NN kernels (needs --cmsis-nn-dir, or Zephyr's cmsis-nn module)"

    def __init__(self, options: OffloadOptions) -> None:
        super().__init__(options)
        root = options.cmsis_nn_dir
        if root is None:
            raise UtvmError("--offload cmsis-nn needs the CMSIS-NN sources: pass --cmsis-nn-dir DIR "
                            "(a checkout of github.com/ARM-software/CMSIS-NN) or set CMSIS_NN_DIR")
        root = Path(root)
        if not (root / "Include" / "arm_nnfunctions.h").is_file() or not (root / "Source").is_dir():
            raise UtvmError(f"{root}: not a CMSIS-NN source tree (no Include/arm_nnfunctions.h or Source/)")
        self.root = root
        self.variant = variant_for(options.cpu)
        self._index: dict[str, Path] | None = None

    # ------------------------------------------------------------------------------------
    # handlers, named by the operators' definitions (OpDef.offload)

    def conv(self, g: Graph, op: Operator) -> ExternalKernel | None:
        """arm_convolve_wrapper_s8 / _s16."""
        return self._conv(g, op, False)

    def depthwise_conv(self, g: Graph, op: Operator) -> ExternalKernel | None:
        """arm_depthwise_conv_wrapper_s8 / _s16."""
        return self._conv(g, op, True)

    def _conv(self, g: Graph, op: Operator, depthwise: bool) -> ExternalKernel | None:
        x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
        b = g.tensors[op.inputs[2]] if len(op.inputs) > 2 else None
        if x.dtype == "int16":
            return self._conv16(g, op, depthwise)
        if not _int8_quant(x, w, y) or w.data is None or (b is not None and (b.data is None or b.dtype != "int32")):
            return None
        assert x.quant and w.quant and y.quant
        if np.any(w.quant.zero_point != 0) or len(x.shape) != 4 or (depthwise and x.shape[0] != 1):
            return None
        cout = y.shape[3]
        _, zx = x.quant.scalar()
        ys, zy = y.quant.scalar()
        mult, shift = _channel_multipliers(x, w, y)
        bias = b.data.astype(np.int32) if b is not None and b.data is not None else np.zeros(cout, np.int32)
        params_type, params, filter_dims = _conv_params(op, depthwise, (x, w, y), (-zx, zy),
                                                        activation_range_int8(op.attrs["activation"], ys, zy))
        return self._conv_glue(
            (x, w, y), params_type, params, _conv_function(depthwise, "s8"), filter_dims, [],
            [ExternalArg("const int32_t*", "bias", constant=bias, role="bias"),
             ExternalArg("const int32_t*", "multiplier", constant=mult, role="mult"),
             ExternalArg("const int32_t*", "shift", constant=shift, role="shift")], "bias")

    def _conv_glue(self, tensors: tuple[Tensor, Tensor, Tensor], params_type: str, params: str, fn: str,
                   filter_dims: str, pre: list[str], consts: list[ExternalArg], call_bias: str) -> ExternalKernel:
        """The glue of a convolution wrapper ``fn`` (int8 or int16 data): its constant structs, the
        scratch check against ``fn``_get_buffer_size, the call (``pre``: statements before the
        check, ``consts``: bias, multiplier and shift arguments, ``call_bias``: the bias operand)."""
        x, w, y = tensors
        n, h, wd, cin = x.shape
        _, oh, ow, cout = y.shape
        ctype = "int16_t" if x.dtype == "int16" else "int8_t"
        size_fn = fn + "_get_buffer_size"
        body = [
            f"static const {params_type} params = {params};",
            f"static const cmsis_nn_dims input_dims = {_dims(n, h, wd, cin)};",
            f"static const cmsis_nn_dims filter_dims = {filter_dims};",
            f"static const cmsis_nn_dims bias_dims = {_dims(1, 1, 1, cout)};",
            f"static const cmsis_nn_dims output_dims = {_dims(n, oh, ow, cout)};",
            "cmsis_nn_per_channel_quant_params quant;",
            "cmsis_nn_context ctx;",
            "quant.multiplier = (int32_t*)multiplier;",
            "quant.shift = (int32_t*)shift;",
            "ctx.buf = scratch;",
            "ctx.size = scratch_size;",
            *pre,
            f"if ({size_fn}(&params, &input_dims, &filter_dims, &output_dims) > scratch_size) {{",
            "  return -1;",
            "}",
            f"return (int32_t){fn}(&ctx, &params, &quant, &input_dims, input, &filter_dims, filter, "
            f"&bias_dims, {call_bias}, &output_dims, output);",
        ]
        query = (f"{{ static const {params_type} p = {params}; static const cmsis_nn_dims i = {_dims(n, h, wd, cin)}, "
                 f"f = {filter_dims}, o = {_dims(n, oh, ow, cout)}; "
                 f"printf(\"%ld\\n\", (long){self._size_name(size_fn)}(&p, &i, &f, &o)); }}")
        return ExternalKernel(
            args=[ExternalArg(f"const {ctype}*", "input", tensor=x.name),
                  ExternalArg("const int8_t*", "filter", tensor=w.name), *consts],
            output=ExternalArg(f"{ctype}*", "output", tensor=y.name),
            body=body, function=fn, size_query=query)

    def _conv16(self, g: Graph, op: Operator, depthwise: bool) -> ExternalKernel | None:
        """16x8 conv (arm_convolve_wrapper_s16, int64 or int32 bias) and depthwise
        (arm_depthwise_conv_wrapper_s16, int64 bias, batch 1), as TFLite Micro's CMSIS-NN kernels
        call them: no offsets, int64 sums requantized by arm_nn_requantize_s64 (TFLite's int64
        MultiplyByQuantizedMultiplier)."""
        x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
        b = g.tensors[op.inputs[2]] if len(op.inputs) > 2 else None
        if w.data is None or w.dtype != "int8" or y.dtype != "int16" or len(x.shape) != 4 or x.shape[0] != 1:
            return None
        if b is not None and b.data is None:
            return None
        wide = int64_accumulation(g, op)
        if depthwise and (not wide or op.attrs.get("depth_multiplier", 1) != 1):
            return None
        assert x.quant and w.quant and y.quant
        cout = y.shape[3]
        ys, zy = y.quant.scalar()
        mult, shift = _channel_multipliers(x, w, y)
        bias_type, ctype = ("int64", "int64_t") if wide else ("int32", "int32_t")
        bias = (b.data.astype(bias_type) if b is not None and b.data is not None
                else np.zeros(cout, bias_type))
        params_type, params, filter_dims = _conv_params(
            op, depthwise, (x, w, y), (0, 0), activation_range_quantized(op.attrs["activation"], ys, zy, -32768, 32767))
        pre = [] if depthwise else [f"const cmsis_nn_bias_data bias_data = {{bias, {'false' if wide else 'true'}}};"]
        return self._conv_glue(
            (x, w, y), params_type, params, _conv_function(depthwise, "s16"), filter_dims, pre,
            [ExternalArg(f"const {ctype}*", "bias", constant=bias, role="bias"),
             ExternalArg("const int32_t*", "multiplier", constant=mult, role="mult"),
             ExternalArg("const int32_t*", "shift", constant=shift, role="shift")],
            "bias" if depthwise else "&bias_data")

    def fully_connected(self, g: Graph, op: Operator) -> ExternalKernel | None:
        """arm_fully_connected_s8 / arm_fully_connected_per_channel_s8."""
        x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
        b = g.tensors[op.inputs[2]] if len(op.inputs) > 2 else None
        if not _int8_quant(x, w, y) or w.data is None or len(w.shape) != 2:
            return None
        if b is not None and (b.data is None or b.dtype != "int32"):
            return None
        assert x.quant and w.quant and y.quant
        if np.any(w.quant.zero_point != 0):
            return None
        units, depth = w.shape
        if x.size % depth:
            return None
        batches = x.size // depth
        _, zx = x.quant.scalar()
        ys, zy = y.quant.scalar()
        lo, hi = activation_range_int8(op.attrs["activation"], ys, zy)
        per_channel = w.quant.per_channel
        scales = list(effective_scales(x, w, y, per_channel))
        pairs = [fp.quantize_multiplier(s) for s in scales]
        bias = b.data.astype(np.int32) if b is not None and b.data is not None else np.zeros(units, np.int32)
        args = [ExternalArg("const int8_t*", "input", tensor=x.name),
                ExternalArg("const int8_t*", "filter", tensor=w.name),
                ExternalArg("const int32_t*", "bias", constant=bias, role="bias")]
        body = [
            f"static const cmsis_nn_fc_params params = {{{-zx}, 0, {zy}, {{{lo}, {hi}}}}};",
            f"static const cmsis_nn_dims input_dims = {_dims(batches, 1, 1, depth)};",
            f"static const cmsis_nn_dims filter_dims = {_dims(depth, 1, 1, units)};",
            f"static const cmsis_nn_dims bias_dims = {_dims(1, 1, 1, units)};",
            f"static const cmsis_nn_dims output_dims = {_dims(batches, 1, 1, units)};",
            "cmsis_nn_context ctx;",
        ]
        if self.variant == "mve":
            # Helium kernels want bias + input_offset * (row sums of the weights) in the context
            # buffer (arm_vector_sum_s8): computed here once and kept in flash.
            sums = (bias.astype(np.int64) - zx * w.data.astype(np.int64).sum(axis=1))
            sums = ((sums + 2**31) % 2**32 - 2**31).astype(np.int32)
            args.append(ExternalArg("const int32_t*", "kernel_sums", constant=sums, role="ksum"))
            body += ["ctx.buf = (void*)kernel_sums;", f"ctx.size = {units * 4};"]
        else:
            body += ["ctx.buf = NULL;", "ctx.size = 0;"]
        body += ["if (arm_fully_connected_s8_get_buffer_size(&filter_dims) > ctx.size) {", "  return -1;", "}",
                 "(void)scratch;", "(void)scratch_size;"]
        if per_channel:
            args += [ExternalArg("const int32_t*", "multiplier",
                                 constant=np.array([m for m, _ in pairs], np.int32), role="mult"),
                     ExternalArg("const int32_t*", "shift", constant=np.array([s for _, s in pairs], np.int32),
                                 role="shift")]
            body += ["cmsis_nn_per_channel_quant_params quant;", "quant.multiplier = (int32_t*)multiplier;",
                     "quant.shift = (int32_t*)shift;"]
            fn = "arm_fully_connected_per_channel_s8"
        else:
            m, s = pairs[0]
            body.append(f"const cmsis_nn_per_tensor_quant_params quant = {{{m}, {s}}};")
            fn = "arm_fully_connected_s8"
        body.append(f"return (int32_t){fn}(&ctx, &params, &quant, &input_dims, input, &filter_dims, filter, "
                    "&bias_dims, bias, &output_dims, output);")
        return ExternalKernel(args=args, output=ExternalArg("int8_t*", "output", tensor=y.name),
                              body=body, function=fn)

    def average_pool(self, g: Graph, op: Operator) -> ExternalKernel | None:
        """arm_avgpool_s8."""
        return self._pool(g, op, True)

    def max_pool(self, g: Graph, op: Operator) -> ExternalKernel | None:
        """arm_max_pool_s8."""
        return self._pool(g, op, False)

    def _pool(self, g: Graph, op: Operator, avg: bool) -> ExternalKernel | None:
        x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
        if not _int8_quant(x, y) or len(x.shape) != 4 or x.shape[0] != 1:
            return None
        assert y.quant is not None
        _, h, w, c = x.shape
        _, oh, ow, _ = y.shape
        (kh, kw), (sh, sw) = op.attrs["pool_size"], op.attrs["strides"]
        top, left = op.attrs["padding"][0], op.attrs["padding"][1]
        lo, hi = activation_range_int8(op.attrs["activation"], *y.quant.scalar())
        fn = "arm_avgpool_s8" if avg else "arm_max_pool_s8"
        body = [
            f"static const cmsis_nn_pool_params params = {{{{{sw}, {sh}}}, {{{left}, {top}}}, {{{lo}, {hi}}}}};",
            f"static const cmsis_nn_dims input_dims = {_dims(1, h, w, c)};",
            f"static const cmsis_nn_dims filter_dims = {_dims(1, kh, kw, 1)};",
            f"static const cmsis_nn_dims output_dims = {_dims(1, oh, ow, c)};",
            "cmsis_nn_context ctx;",
            "ctx.buf = scratch;",
            "ctx.size = scratch_size;",
        ]
        query = ""
        if avg:
            body += [f"if (arm_avgpool_s8_get_buffer_size({ow}, {c}) > scratch_size) {{", "  return -1;", "}"]
            query = f"printf(\"%ld\\n\", (long){self._size_name('arm_avgpool_s8_get_buffer_size')}({ow}, {c}));"
        body.append(f"return (int32_t){fn}(&ctx, &params, &input_dims, input, &filter_dims, &output_dims, output);")
        return ExternalKernel(args=[ExternalArg("const int8_t*", "input", tensor=x.name)],
                              output=ExternalArg("int8_t*", "output", tensor=y.name),
                              body=body, function=fn, size_query=query)

    def softmax(self, g: Graph, op: Operator) -> ExternalKernel | None:
        x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
        if not _int8_quant(x, y):
            return None
        assert x.quant and y.quant
        ys, zy = y.quant.scalar()
        if zy != -128 or abs(ys - 1.0 / 256) > 1e-8:
            return None
        depth = x.shape[-1]
        p = fp.softmax_params(x.quant.scalar()[0], op.attrs["beta"])
        return ExternalKernel(
            args=[ExternalArg("const int8_t*", "input", tensor=x.name)],
            output=ExternalArg("int8_t*", "output", tensor=y.name),
            body=["(void)scratch;", "(void)scratch_size;",
                  f"arm_softmax_s8(input, {x.size // depth}, {depth}, {p.input_multiplier}, "
                  f"{p.input_left_shift}, {p.diff_min}, output);", "return 0;"],
            function="arm_softmax_s8")

    def add(self, g: Graph, op: Operator) -> ExternalKernel | None:
        a, b, y = (g.tensors[n] for n in (*op.inputs[:2], op.outputs[0]))
        if not _int8_quant(a, b, y) or a.shape != b.shape or a.is_constant or b.is_constant:
            return None
        assert a.quant and b.quant and y.quant
        (sa, za), (sb, zb), (sy, zy) = a.quant.scalar(), b.quant.scalar(), y.quant.scalar()
        left_shift = fp.ADD_LEFT_SHIFT
        ma, sha, mb, shb, my, shy = fp.add_params(sa, sb, sy)
        lo, hi = activation_range_int8(op.attrs["activation"], sy, zy)
        return ExternalKernel(
            args=[ExternalArg("const int8_t*", "input1", tensor=a.name),
                  ExternalArg("const int8_t*", "input2", tensor=b.name)],
            output=ExternalArg("int8_t*", "output", tensor=y.name),
            body=["(void)scratch;", "(void)scratch_size;",
                  f"return (int32_t)arm_elementwise_add_s8(input1, input2, {-za}, {ma}, {sha}, {-zb}, {mb}, {shb}, "
                  f"{left_shift}, output, {zy}, {my}, {shy}, {lo}, {hi}, {y.size});"],
            function="arm_elementwise_add_s8")

    # ------------------------------------------------------------------------------------
    # scratch sizes, computed by CMSIS-NN itself on the host

    def _size_name(self, generic: str) -> str:
        """The host-callable buffer-size function for this CPU: the _dsp or _mve variant, or
        the generic one (which, built on the host, is the plain-C path)."""
        return generic if self.variant == "plain" else f"{generic}_{self.variant}"

    def finalize(self, kernels: list[ExternalKernel]) -> None:
        queries = [k for k in kernels if k.size_query]
        if not queries:
            return
        cc = shutil.which("cc") or shutil.which("gcc")
        if cc is None:
            raise UtvmError("--offload cmsis-nn needs a host C compiler (cc) to ask CMSIS-NN for its buffer sizes")
        calls = set(re.findall(r"\b(arm_\w+_get_buffer_size\w*)\(", "\n".join(k.size_query for k in queries)))
        sources = [self.root / s for s in self._closure(calls)]
        with tempfile.TemporaryDirectory(prefix="utvm-cmsis-nn-") as tmp:
            main = Path(tmp) / "sizes.c"
            main.write_text("#include <stdio.h>\n#include \"arm_nnfunctions.h\"\n\nint main(void) {\n"
                            + "".join(f"  {k.size_query}\n" for k in queries) + "  return 0;\n}\n")
            exe = Path(tmp) / "sizes"
            proc = subprocess.run([cc, "-std=c99", "-O0", f"-I{self.root / 'Include'}", str(main),
                                   *map(str, sources), "-o", str(exe)], capture_output=True, text=True)
            if proc.returncode != 0:
                first = next((ln for ln in proc.stderr.splitlines() if "error" in ln), proc.stderr.strip()[:200])
                raise UtvmError(f"could not build CMSIS-NN's buffer-size functions from {self.root}: {first}")
            out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60).stdout.split()
        if len(out) != len(queries):
            raise UtvmError("CMSIS-NN's buffer-size functions gave no answer for every layer")
        for k, v in zip(queries, out):
            k.scratch_bytes = max(int(v), 0)

    # ------------------------------------------------------------------------------------
    # library files

    def headers(self) -> list[str]:
        return ["arm_nnfunctions.h"]

    def library(self, used_functions: set[str]) -> LibraryFiles:
        headers = sorted(p.relative_to(self.root).as_posix() for p in (self.root / "Include").rglob("*.h"))
        return LibraryFiles(self.root, sources=self._closure(used_functions), headers=headers,
                            include_dirs=["Include"])

    _DEF_RE = re.compile(r"^[A-Za-z_][\w *]*?\b(arm_\w+)\s*\(", re.M)
    _CALL_RE = re.compile(r"\b(arm_\w+)\s*\(")

    def _defined_in(self) -> dict[str, Path]:
        """Function name -> the source file that defines it (CMSIS-NN: one file per function
        family, named after it)."""
        if self._index is None:
            index: dict[str, Path] = {}
            for path in sorted((self.root / "Source").rglob("*.c")):
                for m in self._DEF_RE.finditer(_strip_comments(path.read_text(errors="replace"))):
                    index.setdefault(m.group(1), path)
            self._index = index
        return self._index

    def _closure(self, functions: set[str]) -> list[str]:
        """The source files (relative to the root) defining ``functions`` and what they call."""
        index = self._defined_in()
        files: set[Path] = set()
        pending = [f for f in functions if f in index]
        seen: set[str] = set()
        while pending:
            fn = pending.pop()
            if fn in seen:
                continue
            seen.add(fn)
            path = index[fn]
            if path in files:
                continue
            files.add(path)
            for call in self._CALL_RE.findall(_strip_comments(path.read_text(errors="replace"))):
                if call in index and call not in seen:
                    pending.append(call)
        return sorted(p.relative_to(self.root).as_posix() for p in files)


def _strip_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)
