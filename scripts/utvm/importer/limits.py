"""The largest inputs utvm accepts, and the checks every imported tensor passes (whatever its
operator): shapes, element counts, quantization parameters.

The operators' own parameter checks (strides, padding, axes, ... as TFLite Micro's Prepare
functions) live in their modules (``utvm.ops.<op>.check``); these run first, so that those
checks see well-formed tensors.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import short_list
from ..ir import Graph, Tensor
from ..ops.base import OpError, Validation

#: the largest model file read (bytes)
MAX_MODEL_BYTES = 256 << 20
#: the largest tensor, constant or not (bytes)
MAX_TENSOR_BYTES = 64 << 20
#: the largest workspace pool a compiled model may need (bytes)
MAX_POOL_BYTES = 256 << 20
#: the most dimensions of a tensor (UTVM_MAX_DIMS of utvm/model.h)
MAX_RANK = 6
#: the most tensors and operators of a model
MAX_TENSORS = 100_000

#: zero points each integer type can hold
_ZP_RANGE = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767), "int32": (-(2**31), 2**31 - 1),
             "int64": (-(2**31), 2**31 - 1)}


def mib(n: int) -> str:
    return f"{n / (1 << 20):.0f} MiB" if n >= 1 << 20 else f"{n} bytes"


def limits_text() -> str:
    """The limits, as ``utvm compile --help`` shows them."""
    return (f"limits: model files up to {mib(MAX_MODEL_BYTES)}, tensors up to {mib(MAX_TENSOR_BYTES)} and "
            f"{MAX_RANK} dimensions, a workspace pool up to {mib(MAX_POOL_BYTES)}, {MAX_TENSORS} tensors")


def check_tensor(t: Tensor, quant: bool = True) -> None:
    """One tensor's shape, size and quantization parameters (OpError naming the tensor).
    ``quant=False`` leaves out the quantization parameters: the TFLite importer checks them
    once it knows which of them a kernel reads (:func:`utvm.importer.tflite_import.tflm_quantization`
    drops a bias's and keeps one scale of a tensor read per tensor), in :func:`check_graph_limits`."""
    label = f"tensor '{t.name[:80]}'"
    if len(t.shape) > MAX_RANK:
        raise OpError(f"{label} has {len(t.shape)} dimensions (at most {MAX_RANK} are supported)")
    if any(d < 1 for d in t.shape):
        raise OpError(f"{label} has shape {short_list(t.shape)}: every dimension must be at least 1")
    if t.nbytes > MAX_TENSOR_BYTES:
        raise OpError(f"{label} of shape {short_list(t.shape)} needs {mib(t.nbytes)}, more than the largest tensor "
                      f"accepted ({mib(MAX_TENSOR_BYTES)})")
    q = t.quant
    if q is None or t.dtype not in _ZP_RANGE or not quant:
        return
    scale = np.asarray(q.scale, np.float64).reshape(-1)
    zp = np.asarray(q.zero_point, np.int64).reshape(-1)
    if not np.all(np.isfinite(scale)) or np.any(scale <= 0):
        bad = next(float(s) for s in scale if not (math.isfinite(s) and s > 0))
        raise OpError(f"{label}: quantization scale {bad:g} (scales must be finite and positive)")
    if np.any(scale < 1e-30) or np.any(scale > 1e30):
        bad = next(float(s) for s in scale if not 1e-30 <= s <= 1e30)
        raise OpError(f"{label}: quantization scale {bad:g} is out of the range 1e-30 .. 1e30")
    lo, hi = _ZP_RANGE[t.dtype]
    if zp.size and (int(zp.min()) < lo or int(zp.max()) > hi):
        bad = next(int(z) for z in zp if not lo <= z <= hi)
        raise OpError(f"{label}: zero point {bad} is outside the range of {t.dtype} ({lo} .. {hi})")
    if zp.size not in (0, 1, scale.size):
        raise OpError(f"{label}: {scale.size} quantization scales but {zp.size} zero points")
    if scale.size > 1:
        if not 0 <= q.axis < max(len(t.shape), 1):
            raise OpError(f"{label}: quantized dimension {q.axis} of a {len(t.shape)}-D tensor")
        if scale.size != t.shape[q.axis]:
            raise OpError(f"{label}: {scale.size} quantization scales for {t.shape[q.axis]} channels "
                          f"(dimension {q.axis})")


def check_graph_limits(graph: Graph) -> None:
    """Every tensor of the graph (see :func:`check_tensor`), and that the operators name tensors
    of the graph."""
    if len(graph.tensors) > MAX_TENSORS or len(graph.ops) > MAX_TENSORS:
        raise OpError(f"{len(graph.tensors)} tensors, {len(graph.ops)} operators (at most {MAX_TENSORS})")
    for t in graph.tensors.values():
        check_tensor(t)
    for op in graph.ops:
        for name in (*op.inputs, *op.outputs):
            if name and name not in graph.tensors:
                raise OpError(f"{op.source}: unknown tensor '{name[:80]}'")

#: the heading of this module's rows in docs/VALIDATION.md
VALIDATION_TITLE = "Every tensor and the graph (importer/limits.py)"
#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check_tensor", "tensor of more than 6 dimensions",
               'RuntimeShape holds at most kMaxSmallSize = 6 (`TFLITE_DCHECK_LE`), kernels refuse more (e.g. `MicroPrintf("... num dimensions > %d")` [k/concatenation.cc:171]) [kernels/internal/runtime_shape.h:37]',
               "refused-by-TFLM", "kept"),
    Validation("check_tensor", "a dimension below 1",
               "negative: the tensor's byte size overflows, arena allocation fails [micro_allocator.cc]; 0: TFLM runs empty tensors",
               "neither", "kept (0: left, utvm's planner and kernels assume non-empty buffers; see *Left*)"),
    Validation("check_tensor", "tensor larger than 64 MiB",
               "arena allocation fails (AllocateTensors: not enough memory) for a non-constant one [micro_allocator.cc]",
               "refused-by-TFLM", "kept"),
    Validation("check_tensor", "a read scale not finite and positive",
               "0: multipliers divide by it, QuantizeMultiplier of inf aborts (`TFLITE_CHECK`) [quantization_util.cc:75-80]; negative: negative multipliers, sign-flipped results utvm's requantization does not reproduce",
               "would-compute-differently", "kept"),
    Validation("check_tensor", "a read scale outside 1e-30 .. 1e30",
               "TFLM computes with them (float32 scale products, double multipliers) [kernel_util.cc]",
               "neither", "kept (left: not checked that utvm's effective scales equal TFLM's float32 products there; see *Left*)"),
    Validation("check_tensor", "a read zero point outside its type's range",
               "stored as int32 (params.zero_point), used as offsets in int32 arithmetic; squared_difference, pad refuse them [k/squared_difference.cc:115-125, pad_common.cc:103-105]",
               "neither", "kept (left: not all of utvm's kernels checked for offsets beyond the type; see *Left*)"),
    Validation("check_tensor", "zero point count neither 0, 1 nor the scale count",
               "the allocator gives every channel the list's first zero point when the counts differ [micro_allocator.cc:331-334]",
               "neither", "relaxed (the TFLite importer does what the allocator does; the check is now unreachable from TFLite)"),
    Validation("check_tensor", "quantized dimension outside the rank (several scales)",
               "no range check: PopulateConvolutionQuantizationParams and FULLY_CONNECTED read dims[quantized_dimension] (out of bounds) [kernel_util.cc:244, k/fully_connected_common.cc:107]",
               "would-compute-differently", "kept"),
    Validation("check_tensor", "scale count not the size of the quantized dimension",
               "`TF_LITE_ENSURE_EQ(scale size, channels)`, `TF_LITE_ENSURE_EQ(filter dims[quantized_dimension], channels)` [kernel_util.cc:243-244 (PopulateConvolutionQuantizationParams), k/fully_connected_common.cc:104-107]; test_convolution_filter_quantized_dimension_refused_as_tflm",
               "refused-by-TFLM", "kept"),
    Validation("check_graph_limits", "more than 100,000 tensors or operators",
               "arena/persistent allocation fails long before (resource limit) [micro_allocator.cc]",
               "refused-by-TFLM", "kept"),
    Validation("check_graph_limits", "operator names a tensor the graph lacks (importer bug)",
               "— (internal: importers resolve every index)",
               "not-a-model-check", "kept"),
)
