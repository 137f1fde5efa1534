"""TFLite's int16 sigmoid and tanh: the 256-entry table with linear interpolation that
reference_integer_ops::Logistic / Tanh (int16) and TFLite Micro's integer LSTM use, as TIR
expression builders and numpy references.

An int16 input ``x`` is first scaled by the caller's multiplier (3 << left_shift, or 3 and a
rounding right shift), so that Q3.12 covers [-10.7, 10.7] with the table's step; the table holds
sigmoid(i / 24) in Q0.16, i = 0..255 (``SIGMOID_TABLE``). Sigmoid interpolates at 9 fractional
bits and gives Q0.15 in [0, 32767]; tanh uses 2 sigmoid(2x) - 1 (8 fractional bits) and gives
Q0.15 in [-32768, 32767]. Past the table the result saturates. Branch-free except one select
for the saturation; the sign is folded in with a mask as gemmlowp does.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from tvm import tirx

#: sigmoid(i / 24) in Q0.16 (the last entry 65535), TFLite's sigmoid_table_uint16
SIGMOID_TABLE = np.array([
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794, 41432, 42064, 42688,
    43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409,
    51865, 52311, 52745, 53169, 53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110,
    61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186,
    63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900,
    64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208,
    65221, 65234, 65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433, 65438, 65442, 65445, 65449,
    65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491,
    65493, 65495, 65497, 65498, 65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530,
    65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535
,
], dtype=np.uint16)

#: the table as the kernels hold it: int16 values minus 32768 (what every planner and emitter
#: stores), ``table`` in the builders below
TABLE_S16 = (SIGMOID_TABLE.astype(np.int32) - 32768).astype(np.int16)

I32 = "int32"


def _c(v: int) -> tirx.PrimExpr:
    return tirx.const(v, I32)


#: the largest |scaled_input| of an int16 value with left shift 0 (the LSTM's gates)
INT16_SCALED_MAX = 3 * 32768


def scaled_input(x: tirx.PrimExpr, left_shift: int) -> tirx.PrimExpr:
    """The table's input from an int32 ``x``: x * (3 << left_shift) for left_shift >= 0, else
    (3x + 2**(-left_shift - 1)) >> -left_shift (TFLite's Tanh with a negative shift)."""
    if left_shift >= 0:
        return x * _c(3 << left_shift)
    return (x * _c(3) + _c(1 << (-left_shift - 1))) >> _c(-left_shift)


def _interpolate(table: tirx.Buffer, v: tirx.PrimExpr, frac_bits: int, saturated: int,
                 max_abs: int | None) -> tirx.PrimExpr:
    """(``table`` holds TABLE_S16) table[|v| >> frac_bits] interpolated towards the next entry
    by the low bits, or ``saturated`` past the table (no test when ``max_abs``, a bound of |v|,
    keeps v inside it)."""
    m = v >> _c(31)
    a = (v ^ m) - m
    uh = a >> _c(frac_bits)
    inside = max_abs is not None and max_abs >> frac_bits < 255
    idx = uh if inside else tirx.min(uh, _c(254))
    ua = table[idx].astype(I32)
    ub = table[idx + 1].astype(I32)
    r = ((ua + _c(32768)) << _c(frac_bits)) + (a & _c((1 << frac_bits) - 1)) * (ub - ua)
    return r if inside else tirx.Select(uh < _c(255), r, _c(saturated))


def sigmoid(table: tirx.Buffer, v: tirx.PrimExpr, max_abs: int | None = None) -> tirx.PrimExpr:
    """Q0.15 sigmoid of the scaled input ``v`` (:func:`scaled_input`; ``max_abs``: a bound of
    |v| if known), an int32 in [0, 32767]: (r + 2**9) >> 10 for v >= 0, (2**25 - r + 2**9 - 1) >> 10
    below."""
    r = _interpolate(table, v, 9, 0x7FFF << 10, max_abs)
    m = v >> _c(31)
    return ((r ^ m) + _c(1 << 9) + (m & _c(1 << 25))) >> _c(10)


def tanh(table: tirx.Buffer, v: tirx.PrimExpr, max_abs: int | None = None) -> tirx.PrimExpr:
    """Q0.15 tanh of the scaled input ``v``, an int32 in [-32768, 32767]: (r - 2**23 + 2**7) >> 8
    for v >= 0, (2**23 - r + 2**7 - 1) >> 8 below."""
    q = _interpolate(table, v, 8, 0xFFFF << 8, max_abs) - _c(1 << 23)
    m = v >> _c(31)
    return ((q ^ m) + _c(1 << 7)) >> _c(8)


# ---------------------------------------------------------------------------------------------
# numpy references (int64 arrays)


def np_scaled_input(x: npt.ArrayLike, left_shift: int) -> npt.NDArray[np.int64]:
    v = np.asarray(x, dtype=np.int64)
    if left_shift >= 0:
        return v * (3 << left_shift)
    return (v * 3 + (1 << (-left_shift - 1))) >> -left_shift


def _np_interpolate(v: npt.NDArray[np.int64], frac_bits: int, saturated: int) -> npt.NDArray[np.int64]:
    t = SIGMOID_TABLE.astype(np.int64)
    a = np.abs(v)
    uh = a >> frac_bits
    idx = np.minimum(uh, 254)
    r = (t[idx] << frac_bits) + (a & ((1 << frac_bits) - 1)) * (t[idx + 1] - t[idx])
    return np.where(uh < 255, r, saturated)


def np_sigmoid(v: npt.ArrayLike) -> npt.NDArray[np.int64]:
    a = np.asarray(v, dtype=np.int64)
    r = _np_interpolate(a, 9, 0x7FFF << 10)
    return np.where(a >= 0, r + (1 << 9), (1 << 25) - r + (1 << 9) - 1) >> 10


def np_tanh(v: npt.ArrayLike) -> npt.NDArray[np.int64]:
    a = np.asarray(v, dtype=np.int64)
    r = _np_interpolate(a, 8, 0xFFFF << 8)
    return np.where(a >= 0, r - (1 << 23) + (1 << 7), (1 << 23) - r + (1 << 7) - 1) >> 8
