"""LOGISTIC (ONNX Sigmoid) and TANH (ONNX Tanh), which share their int8 arithmetic (gemmlowp's
fixed-point logistic and tanh, evaluated on the host for the 256-entry table of the int8 kernel)
and their int16 kernel (a 256-entry sigmoid table with linear interpolation).

Import: TFLite LOGISTIC, TANH; ONNX Sigmoid, Tanh.
Semantics: float32 LOGISTIC as reference_ops::Logistic (exp(x) below -9, 1 above 16.619047),
float32 TANH as tanhf. Facts from TFLite Micro's logistic/tanh kernels (reference_integer_ops::Logistic / Tanh):

- int8: the input offset by its zero point is rescaled into Q4.27 by MultiplyByQuantizedMultiplier
  with the multiplier of input_scale * 2**27 (frexp, rounded half away from zero); inputs beyond
  CalculateInputRadius(4, shift) saturate. The Q0.31 result of gemmlowp's logistic (tanh) is
  divided by 2**23 (2**24) with rounding, logistic adds the output zero point -128; both clamp.
  The output scale is fixed: 1/256 (logistic), 1/128 (tanh).
- int16 (zero points 0, output scale 2**-15): with an input scale of 2**-12 or 2**-11 the
  input is multiplied by 3 << shift; otherwise by int(input_scale * 3 * 4096 * 2**k) and
  shifted right by k with rounding, k the smallest that brings the multiplier above 32767/2.
  The magnitude indexes the sigmoid table (sigmoid(i/24) in 0.16, 256 entries, the one TFLite
  and CMSIS-NN ship) by its bits above 9 (tanh: 8), the bits below interpolate between two
  entries; the sign folds the result, tanh as 2 * sigmoid(2x) - 1.
"""

from __future__ import annotations

import math

import numpy as np
from tvm import te, tirx

from ..ir import Graph, Operator
from ..kernels import activation16 as act16
from ..kernels import fixedpoint as fp
from ..kernels.fixedpoint import Expr
from ..kernels.kerneldef import KernelArg, KernelDef
from ..kernels.requant import I32
from ..kernels.target import Target
from .base import OpDef, OpError, SourceOp, Validation, Variant
from .common import io
from .unary import INT8_VALUES, check_unary, expr_kernel, onnx_rule, scales, table_kernel, tflite_rule

#: the integer bits of the int8 input rescaled for gemmlowp (Q4.27)
INPUT_INTEGER_BITS = 4
#: output (scale, zero point) TFLite fixes for each kind and type
OUTPUTS = {("logistic", "int8"): (1 / 256, -128), ("tanh", "int8"): (1 / 128, 0),
           ("logistic", "int16"): (1 / 32768, 0), ("tanh", "int16"): (1 / 32768, 0)}


def check(g: Graph, op: Operator) -> None:
    dtype = check_unary(g, op, ("int8", "int16", "float32"))
    if dtype == "float32":
        return
    _, _, sy, zy = scales(g, op)
    want = OUTPUTS[(op.kind, dtype)]
    # What TFLite Micro's Prepare checks; the kernels write the fixed quantization whatever the
    # output tensor says: int8 LOGISTIC checks only the zero point -128, int8 TANH nothing, int16
    # a zero point 0 and a scale whose log2 rounds to -15 within 1e-3 (CheckedLog2).
    if dtype == "int16":
        log2 = math.log(sy) / math.log(2.0) if math.isfinite(sy) and sy > 0 else math.nan
        ok = zy == 0 and math.isfinite(log2) and abs(log2 - round(log2)) < 1e-3 and round(log2) == -15
    else:
        ok = op.kind == "tanh" or zy == want[1]
    if not ok:
        raise OpError(f"{op.source}: {dtype} output quantization ({sy:.6g}, {zy}) must be ({want[0]:.6g}, {want[1]}) "
                      "as TFLite's kernel produces it")


# ---------------------------------------------------------------------------------------------
# int8: gemmlowp's fixed point on the host


def np_one_minus_x_over_one_plus_x(a: np.ndarray) -> np.ndarray:
    """gemmlowp's one_minus_x_over_one_plus_x_for_x_in_0_1 (Q0.31 in and out)."""
    srdhm = fp.np_saturating_rounding_doubling_high_mul
    half_den = fp.np_rounding_half_sum(a, fp.INT32_MAX)
    x = fp.np_wrap32(1515870810 + srdhm(half_den, -1010580540))
    for _ in range(3):
        one_minus = fp.np_wrap32((1 << 29) - srdhm(half_den, x))
        x = fp.np_wrap32(x + fp.np_saturating_rounding_multiply_by_pot(srdhm(x, one_minus), 2))
    return fp.np_saturating_rounding_multiply_by_pot(fp.np_wrap32(x - (1 << 29)), 2)


def np_logistic(a: np.ndarray, integer_bits: int) -> np.ndarray:
    """gemmlowp's logistic of raw Q(integer_bits) values, raw Q0.31 out."""
    positive = a > 0
    magnitude = np.where(positive, a, fp.np_wrap32(-a))
    if_positive = fp.np_one_over_one_plus_x_for_x_in_0_1(
        fp.np_exp_on_negative_values(fp.np_wrap32(-magnitude), integer_bits))
    return np.where(a == 0, 1 << 30, np.where(positive, if_positive, fp.INT32_MAX - if_positive))


def np_tanh(a: np.ndarray, integer_bits: int) -> np.ndarray:
    """gemmlowp's tanh of raw Q(integer_bits) values, raw Q0.31 out."""
    negative = a < 0
    non_positive = np.where(negative, a, fp.np_wrap32(-a))
    t = np_one_minus_x_over_one_plus_x(fp.np_exp_on_negative_values(non_positive, integer_bits + 1))
    return np.where(a == 0, 0, np.where(negative, fp.np_wrap32(-t), t))


def int8_table(g: Graph, op: Operator) -> np.ndarray:
    """The output for every int8 input, as TFLite Micro's int8 LOGISTIC (TANH) computes it."""
    sx, zx, _, zy = scales(g, op)
    fraction, shift = math.frexp(sx * float(1 << (31 - INPUT_INTEGER_BITS)))
    multiplier = int(fp.tflite_round(fraction * float(1 << 31)))
    radius = fp.calculate_input_radius(INPUT_INTEGER_BITS, shift, 31)
    x = INT8_VALUES - zx
    q4 = fp.np_multiply_by_quantized_multiplier(x, multiplier, shift)
    if op.kind == "logistic":
        y = fp.np_rounding_divide_by_pot(np_logistic(q4, INPUT_INTEGER_BITS), 23) + zy
    else:
        y = fp.np_rounding_divide_by_pot(np_tanh(q4, INPUT_INTEGER_BITS), 24)
    y = np.where(x <= -radius, -128, np.where(x >= radius, 127, y))
    return np.clip(y, -128, 127).astype(np.int8)


# ---------------------------------------------------------------------------------------------
# int16: the sigmoid table, interpolated


def int16_input_scaling(input_scale: float) -> tuple[int, int]:
    """(multiplier, right shift) bringing int16 inputs to the table's scale 1/(3 * 4096)."""
    log2 = math.log(input_scale) / math.log(2.0)
    rounded = round(log2)
    left_shift = 12 + rounded
    if abs(log2 - rounded) < 1e-3 and left_shift in (0, 1):
        return 3 << left_shift, 0
    multiplier, shift = input_scale * 4096.0 * 3.0, 0
    while multiplier <= 32767.0 / 2.0 and shift <= 30:
        shift += 1
        multiplier *= 2.0
    return int(multiplier), shift


def int16_kernel(g: Graph, op: Operator) -> KernelDef:
    x, y = io(g, op)
    sx = scales(g, op)[0]
    multiplier, shift = int16_input_scaling(sx)
    rounding = (1 << (shift - 1)) if shift > 0 else 0
    X = te.placeholder((x.size,), "int16", name="x")
    T = te.placeholder((256,), "int16", name="table")
    activation = act16.sigmoid if op.kind == "logistic" else act16.tanh

    def f(i: Expr) -> Expr:
        v = (X[i].astype(I32) * multiplier + rounding) >> shift
        return activation(T, v).astype("int16")

    out = te.compute((x.size,), f, name="out")
    return KernelDef([KernelArg(X, tensor=x.name), KernelArg(T, constant=act16.TABLE_S16, role="sigmoid")], out, y.name)


# ---------------------------------------------------------------------------------------------
# float32 and the operators

#: reference_ops::Logistic's cut-offs (float32)
CUTOFF_UPPER = 16.619047164916992188
CUTOFF_LOWER = -9.0


def _float_logistic(v: Expr) -> Expr:
    one = tirx.const(1.0, "float32")
    return tirx.Select(v > tirx.const(CUTOFF_UPPER, "float32"), one,
                       tirx.Select(v < tirx.const(CUTOFF_LOWER, "float32"), te.exp(v), one / (one + te.exp(-v))))


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    dtype = g.tensors[op.inputs[0]].dtype
    if dtype == "int8":
        return table_kernel(g, op, int8_table(g, op))
    if dtype == "int16":
        return int16_kernel(g, op)
    return expr_kernel(g, op, _float_logistic if op.kind == "logistic" else te.tanh)


OPS = tuple(
    OpDef(
        kind=kind,
        summary=summary,
        tflite=(SourceOp(builtin, tflite_rule(kind), ("int8", "int16", "float32"),
                         f"int8 output scale {OUTPUTS[(kind, 'int8')][0]:.6g}, zero point {OUTPUTS[(kind, 'int8')][1]}; "
                         "int16 zero points 0, output scale 2^-15"),),
        onnx=(SourceOp(onnx, onnx_rule(kind), ("float32",)),),
        variants=(Variant("generic", _generic, types=("int8", "int16", "float32")),),
        check=check,
        reference=f"TFLite Micro {kind}.cc: reference_integer_ops::{builtin.title()} (int8 fixed point as a 256-entry "
                  f"table, int16 interpolated table), {float32}",
        inplace=True,
    )
    for kind, builtin, onnx, summary, float32 in (
        ("logistic", "LOGISTIC", "Sigmoid", "1 / (1 + exp(-x))", "reference_ops::Logistic (float32)"),
        ("tanh", "TANH", "Tanh", "tanh(x)", "std::tanh (float32)"),
    )
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "int8/int16 LOGISTIC/TANH output quantization other than the fixed one",
               "int8 LOGISTIC: only `zero_point == -128` [k/logistic_common.cc:46]; int8 TANH: nothing [k/tanh.cc:64-75]; int16: zero point 0 and CheckedLog2(scale) == -15 within 1e-3 [k/logistic_common.cc:70-105, tanh.cc:89-126]",
               "neither", "relaxed to TFLM's tests (the kernels write the fixed quantization whatever the tensor says)"),
)
