"""The in-repo external module: int8 average pooling in plain C (lib/ext/plain_c).

It takes every int8 AVERAGE_POOL_2D and calls ``utvm_plainc_avgpool_s8``, whose per-channel
int32 sums live in scratch that the memory planner places in the workspace pool.
"""

from __future__ import annotations

from ..ir import Graph, Operator
from ..kernels.requant import activation_range_int8
from ..lower.offload import ExternalArg, ExternalKernel, ExternalModule, LibraryFiles
from ..paths import ext_lib_dir


class PlainC(ExternalModule):
    name = "plain-c"
    summary = "utvm's own plain-C kernels (int8 average pooling), in lib/ext/plain_c"

    def average_pool(self, graph: Graph, op: Operator) -> ExternalKernel | None:
        """utvm_plainc_avgpool_s8 (the pooling definition names this module: OpDef.offload)."""
        x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
        if x.dtype != "int8" or y.dtype != "int8" or y.quant is None or len(x.shape) != 4:
            return None
        if x.quant is None or x.quant.scalar() != y.quant.scalar():
            return None  # TFLite requires equal input and output quantization
        n, h, w, c = x.shape
        _, oh, ow, _ = y.shape
        (kh, kw), (sh, sw) = op.attrs["pool_size"], op.attrs["strides"]
        top, left = op.attrs["padding"][0], op.attrs["padding"][1]
        lo, hi = activation_range_int8(op.attrs["activation"], *y.quant.scalar())
        fields = (n, h, w, c, oh, ow, kh, kw, sh, sw, top, left, lo, hi)
        return ExternalKernel(
            args=[ExternalArg("const int8_t*", "input", tensor=x.name)],
            output=ExternalArg("int8_t*", "output", tensor=y.name),
            body=[
                "static const utvm_plainc_pool_params_t params = {" + ", ".join(str(v) for v in fields) + "};",
                "return (int32_t)utvm_plainc_avgpool_s8(&params, input, output, (int32_t*)(void*)scratch, "
                "scratch_size);",
            ],
            scratch_bytes=c * 4,
            function="utvm_plainc_avgpool_s8",
        )

    def headers(self) -> list[str]:
        return ["utvm_plainc.h"]

    def library(self, used_functions: set[str]) -> LibraryFiles:
        root = ext_lib_dir("plain_c")
        return LibraryFiles(root, sources=sorted(p.relative_to(root).as_posix() for p in (root / "src").glob("*.c")),
                            headers=["include/utvm_plainc.h"], include_dirs=["include"])
