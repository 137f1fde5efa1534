"""L2_NORMALIZATION over the last axis: x / ||x||.

Import: TFLite L2_NORMALIZATION (fused activation NONE); ONNX LpNormalization with p=2 over the
last axis (float32).
Semantics, TFLite Micro l2norm.cc: float32 ``x / max(sqrt(sum(x * x)), 1e-6)`` (the sum in order);
int8 (reference_integer_ops::L2Normalization, output scale 1/128, zero point 0): the sum of the
squared differences to the input zero point in int32, its inverse square root as a quantized
multiplier (GetInvSqrtQuantizedMultiplierExp: the sum brought into [2**27, 2**29) by pairs of
bits, five Newton-Raphson steps of gemmlowp fixed point with 3 integer bits, times sqrt(2)/2),
then each difference times that multiplier with shift ``7 - exponent``, clamped to int8.
:func:`np_l2norm_int8` is the same arithmetic in numpy.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from tvm import te, tirx

from ..ir import PLAIN, Graph, Operator
from ..kernels import fixedpoint as fp
from ..kernels.kerneldef import KernelDef
from ..kernels.requant import clamp
from ..kernels.target import Target
from .base import OpDef, SourceOp, Validation, Variant
from .common import check_row_op, rows_kernel

OUTPUT_SCALE = 1.0 / 128.0
#: output bits below the point (scale 1/128), as TFLite's kOutputScale
OUTPUT_SHIFT = 7
EPSILON = 1e-6
_HALF_THREE_F3 = (1 << 28) + (1 << 27)   # 1.5 with 3 integer bits
_ONE_F3 = 1 << 28
_HALF_SQRT_2 = 1518500250                # sqrt(2) / 2 in Q0.31
_NEWTON_STEPS = 5


def np_inv_sqrt(acc: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """TFLite's GetInvSqrtQuantizedMultiplierExp(acc, -1): (multiplier, shift) arrays with
    1 / sqrt(acc) ~= multiplier * 2**(shift - 31)."""
    srdhm = fp.np_saturating_rounding_doubling_high_mul
    a = np.asarray(acc, np.int64)
    big = a >= (1 << 29)
    a = np.where(big, a // 4, a)
    pairs = (fp.np_count_leading_zeros_u32(a) - 1) // 2 - 1
    shift = 11 + big.astype(np.int64) - pairs
    a = fp.np_wrap32(a << (2 * np.maximum(pairs, 0)))
    half_input = fp.np_rounding_divide_by_pot(a >> 1, 1)
    x = np.full(a.shape, _ONE_F3, np.int64)
    for _ in range(_NEWTON_STEPS):
        x3 = fp.np_saturating_rounding_multiply_by_pot(srdhm(srdhm(x, x), x), 6)
        x = fp.np_saturating_rounding_multiply_by_pot(fp.np_wrap32(srdhm(_HALF_THREE_F3, x) - srdhm(half_input, x3)), 3)
    x = srdhm(x, _HALF_SQRT_2)
    x = np.where(shift < 0, fp.np_wrap32(x << np.maximum(-shift, 0)), x)
    shift = np.maximum(shift, 0)
    small = np.asarray(acc, np.int64) <= 1
    return np.where(small, fp.INT32_MAX, x), np.where(small, 0, -shift)


def np_l2norm_int8(x: npt.ArrayLike, zero_point: int) -> np.ndarray:
    """numpy reference of the int8 kernel over the last axis."""
    d = np.asarray(x, np.int64) - zero_point
    acc = fp.np_wrap32((d * d).sum(axis=-1, keepdims=True))
    m, shift = np_inv_sqrt(acc)
    out = fp.np_multiply_by_quantized_multiplier(d, m, shift + OUTPUT_SHIFT)
    return np.clip(out, -128, 127).astype(np.int8)


def inv_sqrt_stages(acc: te.Tensor, name: str) -> tuple[te.Tensor, te.Tensor]:
    """GetInvSqrtQuantizedMultiplierExp of every element of the int32 [rows] tensor ``acc`` in
    TE stages: (multiplier, shift) tensors, as :func:`np_inv_sqrt`."""
    c32 = fp.c32
    srdhm = fp.saturating_rounding_doubling_high_mul
    rows = acc.shape

    def reduced(i: Any) -> Any:  # at most one division by 4 brings an int32 below 2**29
        big = tirx.Select(acc[i] >= c32(1 << 29), c32(1), c32(0))
        return acc[i] >> (big * c32(2))

    small = te.compute(rows, reduced, name=f"{name}_in")
    pairs = te.compute(rows, lambda i: tirx.max((fp.count_leading_zeros_u32(small[i]) - c32(1)) // c32(2) - c32(1),
                                                c32(0)), name=f"{name}_pairs")
    half_input = te.compute(rows, lambda i: fp.rounding_divide_by_pot((small[i] << (pairs[i] * c32(2))) >> c32(1), 1),
                            name=f"{name}_half")
    def newton(x: te.Tensor, step: int) -> te.Tensor:
        """x <- 3/2 x - 1/2 input x**3, in F3 (x**3 rescaled from F9)."""
        cube = te.compute(rows, lambda i: fp.saturating_rounding_multiply_by_pot(srdhm(srdhm(x[i], x[i]), x[i]), 6),
                          name=f"{name}_cube{step}")
        return te.compute(rows, lambda i: fp.saturating_rounding_multiply_by_pot(
            srdhm(x[i], _HALF_THREE_F3) - srdhm(half_input[i], cube[i]), 3), name=f"{name}_x{step + 1}")

    last = te.compute(rows, lambda i: c32(_ONE_F3), name=f"{name}_x0")
    for step in range(_NEWTON_STEPS):
        last = newton(last, step)

    def shift_of(i: Any) -> Any:
        big = tirx.Select(acc[i] >= c32(1 << 29), c32(1), c32(0))
        return c32(11) + big - pairs[i]

    shift = te.compute(rows, shift_of, name=f"{name}_exp")

    def multiplier(i: Any) -> Any:
        v = srdhm(last[i], _HALF_SQRT_2) << tirx.max(c32(0) - shift[i], c32(0))
        return tirx.Select(acc[i] <= c32(1), c32(fp.INT32_MAX), v)

    mult = te.compute(rows, multiplier, name=f"{name}_mult")
    neg_shift = te.compute(rows, lambda i: tirx.Select(acc[i] <= c32(1), c32(0), c32(0) - tirx.max(shift[i], c32(0))),
                           name=f"{name}_shift")
    return mult, neg_shift


def from_tflite(ctx: Any, node: Any) -> None:
    act = ctx.activation(ctx.options(node, "L2NormOptions").FusedActivationFunction(), node)
    if act != "none":
        raise ctx.fail(node, f"fused activation {act.upper()} is not supported (TFLite Micro has none either)")
    ctx.emit(node, "l2_normalization", [node.inputs[0]], node.outputs)


def from_onnx(imp: Any, node: Any) -> None:
    attrs = imp.attrs(node)
    x, out = node.input[0], node.output[0]
    rank = len(imp.shape(x))
    axis = int(attrs.get("axis", -1))
    if int(attrs.get("p", 2)) != 2 or axis not in (-1, rank - 1):
        raise imp.fail("only p=2 over the last axis is supported")
    imp.emit("l2_normalization", [imp.get(x, PLAIN)], out, PLAIN)


def check(g: Graph, op: Operator) -> None:
    check_row_op(g, op, {"int8": (OUTPUT_SCALE, 0, 0.0)}, "L2_NORMALIZATION")


def l2norm_float(X: te.Tensor) -> te.Tensor:
    rows, depth = X.shape
    k = te.reduce_axis((0, depth), name="k")
    sq = te.compute((rows,), lambda i: te.sum(X[i, k] * X[i, k], axis=k), name="sumsq")
    norm = te.compute((rows,), lambda i: te.max(te.sqrt(sq[i]), tirx.const(EPSILON, "float32")), name="norm")
    return te.compute((rows, depth), lambda i, c: X[i, c] / norm[i], name="out")


def l2norm_int8(X: te.Tensor, zero_point: int) -> te.Tensor:
    rows, depth = X.shape
    k = te.reduce_axis((0, depth), name="k")

    def diff(i: Any, c: Any) -> Any:
        return X[i, c].astype("int32") - fp.c32(zero_point)

    sq = te.compute((rows,), lambda i: te.sum(diff(i, k) * diff(i, k), axis=k), name="sumsq")
    mult, shift = inv_sqrt_stages(sq, "isqrt")
    return te.compute(
        (rows, depth),
        lambda i, c: clamp(fp.multiply_by_quantized_multiplier(diff(i, c), mult[i], shift[i] + fp.c32(OUTPUT_SHIFT)),
                           -128, 127).astype("int8"),
        name="out")


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x = g.tensors[op.inputs[0]]
    if x.dtype == "int8":
        assert x.quant is not None
        zx = int(x.quant.scalar()[1])
        return rows_kernel(g, op, lambda X: l2norm_int8(X, zx))
    return rows_kernel(g, op, l2norm_float)


OPS = (
    OpDef(
        kind="l2_normalization",
        summary="L2 normalization over the last axis",
        tflite=(SourceOp("L2_NORMALIZATION", from_tflite,
                         constraints="no fused activation; int8 output scale 1/128, zero point 0"),),
        onnx=(SourceOp("LpNormalization", from_onnx, ("float32",), "p=2, last axis"),),
        variants=(Variant("generic", _generic, types=("int8", "float32")),),
        check=check,
        reference="TFLite Micro l2norm.cc: reference_integer_ops::L2Normalization, reference_ops::L2Normalization",
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("from_tflite", "L2_NORMALIZATION with a fused activation",
               "`TF_LITE_ENSURE_EQ(params->activation, kTfLiteActNone)` [k/l2norm.cc:68]",
               "refused-by-TFLM", "kept", rule=True),
)
