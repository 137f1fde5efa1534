"""HARD_SWISH (ONNX HardSwish): x * relu6(x + 3) / 6, and ONNX HardSigmoid: max(0, min(1,
alpha * x + beta)).

Import: TFLite HARD_SWISH; ONNX HardSwish, HardSigmoid (alpha, beta: default 0.2, 0.5).
Semantics: TFLite Micro's hard_swish.cc. int8: reference_ops::HardSwish, whose int16 fixed-point
arithmetic (the input on a scale 128 times finer, a "reluish" factor in [0, 1] from the
multiplier hires_input_scale / (3 / 32768), the output multiplier hires_input_scale /
output_scale, both computed in float32 and reduced to 16-bit multipliers) is evaluated on the
host for the 256 int8 values and looked up. float32: x * min(6, max(0, x + 3)) / 6.
"""

from __future__ import annotations

import numpy as np
from tvm import te, tirx

from ..ir import Graph, Operator
from ..kernels import fixedpoint as fp
from ..kernels.kerneldef import KernelDef
from ..kernels.target import Target
from .base import OpDef, OpError, SourceOp, Validation, Variant
from .unary import INT8_VALUES, check_float, check_unary, expr_kernel, onnx_rule, scales, table_kernel, tflite_rule

INT16_MIN, INT16_MAX = -32768, 32767


def _wrap16(v: np.ndarray) -> np.ndarray:
    return ((np.asarray(v, np.int64) + 32768) & 0xFFFF) - 32768


def _truncdiv(v: np.ndarray, d: int) -> np.ndarray:
    return np.where(v >= 0, v // d, -((-v) // d))


def np_srdhm16(a: np.ndarray, b: int) -> np.ndarray:
    """gemmlowp's SaturatingRoundingDoublingHighMul of int16 values."""
    ab = np.asarray(a, np.int64) * b
    high = _truncdiv(ab + np.where(ab >= 0, 1 << 14, 1 - (1 << 14)), 1 << 15)
    return np.where((a == INT16_MIN) & (b == INT16_MIN), INT16_MAX, high)


def np_sdhm16(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """TFLite's SaturatingDoublingHighMul of int16 values (truncating)."""
    return np.where((a == INT16_MIN) & (b == INT16_MIN), INT16_MAX, _truncdiv(np.asarray(a, np.int64) * b, 1 << 15))


def np_rounding_divide_by_pot16(x: np.ndarray, exponent: int) -> np.ndarray:
    """gemmlowp's RoundingDivideByPOT of int16 values: its mask (1 << exponent) - 1 is an int16
    too, so from an exponent of 16 on it is -1 and the result is x >> exponent plus 1 when x >= 0
    (what TFLite Micro computes for an output scale over 256 times the input scale)."""
    mask = int(_wrap16(np.int64((1 << exponent) - 1)))
    x = np.asarray(x, np.int64)
    threshold = _wrap16((mask >> 1) + (x < 0))
    return _wrap16((x >> exponent) + ((x & mask) > threshold))


def _saturating_left_shift(v: np.ndarray, amount: int) -> np.ndarray:
    return np.clip(np.asarray(v, np.int64) << amount, INT16_MIN, INT16_MAX)


def _int16_multiplier(real: np.float32) -> tuple[int, int]:
    """QuantizeMultiplier then DownScaleInt32ToInt16Multiplier."""
    m, exponent = fp.quantize_multiplier(float(real))
    return (INT16_MAX if m >= fp.INT32_MAX - (1 << 15) else (m + (1 << 15)) >> 16), exponent


def params(g: Graph, op: Operator) -> tuple[int, int, int, int]:
    """(output multiplier, its exponent, reluish multiplier, its exponent), 16-bit multipliers."""
    sx, _, sy, _ = scales(g, op)
    hires = np.float32(1.0 / 128.0) * np.float32(sx)
    out_m, out_e = _int16_multiplier(np.float32(hires / np.float32(sy)))
    relu_m, relu_e = _int16_multiplier(np.float32(hires / np.float32(3.0 / 32768.0)))
    return out_m, out_e, relu_m, relu_e


def check(g: Graph, op: Operator) -> None:
    if check_unary(g, op, ("int8", "float32")) == "int8" and params(g, op)[1] > 0:
        raise OpError(f"{op.source}: the output scale is too small for the input scale "
                      "(TFLite Micro's HARD_SWISH needs input_scale / 128 < output_scale)")


def int8_table(g: Graph, op: Operator) -> np.ndarray:
    """reference_ops::HardSwish<int8_t> of every int8 value."""
    _, zx, _, zy = scales(g, op)
    out_m, out_e, relu_m, relu_e = params(g, op)
    hires = (INT8_VALUES - zx) * 128
    preshift = np_srdhm16(hires, out_m)
    reluish = hires
    if relu_e > 0:
        reluish = _saturating_left_shift(reluish, relu_e - 1)
    reluish = np_srdhm16(reluish, relu_m)
    if relu_e > 0:
        reluish = _saturating_left_shift(reluish, 1)
    if relu_e < 0:
        reluish = np_rounding_divide_by_pot16(reluish, -relu_e)
    reluish = (reluish + (1 << 15)) >> 1
    out = np_rounding_divide_by_pot16(np_sdhm16(reluish, preshift), -out_e)
    return np.clip(_wrap16(out + zy), -128, 127).astype(np.int8)


def _float(v: te.Tensor) -> te.Tensor:
    f32 = lambda c: tirx.const(c, "float32")  # noqa: E731
    return v * te.min(f32(6.0), te.max(f32(0.0), v + f32(3.0))) / f32(6.0)


def _hard_sigmoid(g: Graph, op: Operator, target: Target) -> KernelDef:
    f32 = lambda c: tirx.const(c, "float32")  # noqa: E731
    alpha, beta = f32(op.attrs["alpha"]), f32(op.attrs["beta"])
    return expr_kernel(g, op, lambda v: te.max(f32(0.0), te.min(f32(1.0), alpha * v + beta)))


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    if g.tensors[op.inputs[0]].dtype == "int8":
        return table_kernel(g, op, int8_table(g, op))
    return expr_kernel(g, op, _float)


OPS = (
    OpDef(
        kind="hard_swish",
        summary="x * relu6(x + 3) / 6",
        tflite=(SourceOp("HARD_SWISH", tflite_rule("hard_swish"), ("int8", "float32")),),
        onnx=(SourceOp("HardSwish", onnx_rule("hard_swish"), ("float32",)),),
        variants=(Variant("generic", _generic, types=("int8", "float32")),),
        check=check,
        reference="TFLite Micro hard_swish.cc: reference_ops::HardSwish (int8 as a 256-entry table, float32)",
        inplace=True,
    ),
    OpDef(
        kind="hard_sigmoid",
        summary="max(0, min(1, alpha * x + beta))",
        onnx=(SourceOp("HardSigmoid", onnx_rule("hard_sigmoid", {"alpha": 0.2, "beta": 0.5}), ("float32",)),),
        variants=(Variant("generic", _hard_sigmoid, types=("float32",)),),
        check=check_float,
        reference="ONNX HardSigmoid (onnxruntime), float32",
        inplace=True,
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "int8 HARD_SWISH output scale too small (output multiplier exponent above 0)",
               "`TF_LITE_ENSURE(output_multiplier_exponent <= 0)` [k/hard_swish_common.cc:68]",
               "refused-by-TFLM", "kept"),
)
