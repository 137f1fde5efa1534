"""RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR on NHWC tensors, attrs ``size`` (output height,
width) and the coordinate rule: TFLite's ``align_corners`` / ``half_pixel_centers``, or ONNX's
``coordinate_transformation_mode`` (+ ``nearest_mode``, ``scales``).

Source rows and columns (and bilinear weights) depend only on the output position, so they
are computed at compile time, exactly as the reference computes them, and the kernels read
them from small constant tables (or from ``y * in // out`` when that is what they hold).

Import: TFLite RESIZE_NEAREST_NEIGHBOR (int8, int16, float32), RESIZE_BILINEAR (int8, float32),
constant size; ONNX Resize (4-D, only H and W resized, mode nearest or linear,
coordinate_transformation_mode half_pixel, pytorch_half_pixel, asymmetric, align_corners;
opset 11 and later).
Semantics: TFLite Micro's reference_ops::ResizeNearestNeighbor (float32 arithmetic of the source
index), ResizeBilinear (float32) and ResizeBilinearInteger (int8: 10-bit fixed-point positions,
a 2^20 weighted sum rounded half away from zero); ONNX's Resize reference (float64 coordinates).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from tvm import te, tirx

from ..ir import NHWC, Graph, Operator
from ..kernels.kerneldef import KernelArg, KernelDef
from ..kernels.target import Target
from ._movement import TYPES_8_16_F, TYPES_8_F, check_same_types, tflite_ints
from .base import OpDef, OpError, SourceOp, Validation, Variant

_KINDS = {"RESIZE_NEAREST_NEIGHBOR": "resize_nearest_neighbor", "RESIZE_BILINEAR": "resize_bilinear"}
_F32 = np.float32


# -- source positions: TFLite ----------------------------------------------------------------

def tflite_nearest(in_size: int, out_size: int, align: bool, half: bool) -> np.ndarray:
    """reference_ops::GetNearestNeighbor for every output index (float32 arithmetic)."""
    if align and out_size > 1:
        scale = _F32(in_size - 1) / _F32(out_size - 1)
    else:
        scale = _F32(in_size) / _F32(out_size)
    offset = _F32(0.5 if half else 0.0)
    out = np.empty(out_size, np.int32)
    for i in range(out_size):
        v = (_F32(i) + offset) * scale
        j = int(math.copysign(math.floor(abs(float(v)) + 0.5), float(v))) if align else int(math.floor(float(v)))
        j = min(j, in_size - 1)
        out[i] = max(j, 0) if half else j
    return out


def tflite_bilinear_float(in_size: int, out_size: int, align: bool, half: bool
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lower index, upper index, [1 - frac, frac] float32) per output index, as
    reference_ops::ResizeBilinear computes them."""
    scale = _F32(in_size) / _F32(out_size)
    if align and out_size > 1:
        scale = _F32(in_size - 1) / _F32(out_size - 1)
    lo, hi = np.empty(out_size, np.int32), np.empty(out_size, np.int32)
    w = np.empty((out_size, 2), np.float32)
    for i in range(out_size):
        v = (_F32(i) + _F32(0.5)) * scale - _F32(0.5) if half else _F32(i) * scale
        lo[i] = max(int(math.floor(float(v))), 0)
        hi[i] = min(int(math.ceil(float(v))), in_size - 1)
        frac = _F32(v - _F32(lo[i]))
        w[i] = (_F32(1) - frac, frac)
    return lo, hi, w


def _tdiv(a: int, b: int) -> int:
    """C integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def tflite_bilinear_int(in_size: int, out_size: int, align: bool, half: bool
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lower index, upper index, position - 1024 * lower) per output index, as
    reference_ops::ResizeBilinearInteger computes them (10 fractional bits)."""
    scale = ((1 << 10) * in_size + out_size // 2) // out_size
    if align and out_size > 1:
        scale = ((1 << 10) * (in_size - 1) + (out_size - 1) // 2) // (out_size - 1)
    lo, hi, frac = (np.empty(out_size, np.int32) for _ in range(3))
    for i in range(out_size):
        v = i * scale + scale // 2 - (1 << 9) if half else i * scale
        lo[i] = min(max(_tdiv(v, 1 << 10), 0), in_size - 1)
        hi[i] = min(_tdiv(v + (1 << 10) - 1, 1 << 10), in_size - 1)
        frac[i] = v - (1 << 10) * int(lo[i])
    return lo, hi, frac


# -- source positions: ONNX --------------------------------------------------------------------

ONNX_MODES = ("half_pixel", "pytorch_half_pixel", "asymmetric", "align_corners")


def onnx_positions(in_size: int, out_size: int, scale: float, mode: str, nearest: str | None
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first index, second index, [weight of first, weight of second]) per output index, as
    ONNX's Resize reference computes them; ``nearest``: the nearest_mode, None for linear."""
    y = np.arange(out_size, dtype=np.float64)
    width = scale * in_size
    if mode == "align_corners":
        x = np.zeros(out_size) if width == 1 else y * (in_size - 1) / (width - 1)
    elif mode == "asymmetric":
        x = y / scale
    elif mode == "pytorch_half_pixel":
        x = np.full(out_size, -0.5) if width == 1 else (y + 0.5) / scale - 0.5
    else:
        x = (y + 0.5) / scale - 0.5
    floor = np.floor(x)
    integer = x == floor
    ratio = np.where(integer, 1.0, x - floor)
    first = np.where(integer, floor - 1, floor).astype(np.int64)
    if nearest is None:
        w = np.stack([1 - ratio, ratio], axis=1)
    else:
        pick = {"round_prefer_floor": ratio > 0.5, "round_prefer_ceil": ratio >= 0.5,
                "floor": np.zeros_like(ratio, bool), "ceil": np.ones_like(ratio, bool)}[nearest]
        pick = np.where(integer, True, pick)
        w = np.stack([~pick, pick], axis=1).astype(np.float64)
    lo = np.clip(first, 0, in_size - 1).astype(np.int32)
    hi = np.clip(first + 1, 0, in_size - 1).astype(np.int32)
    return lo, hi, w


# -- import ------------------------------------------------------------------------------------

def from_tflite(ctx: Any, node: Any) -> None:
    table = "ResizeNearestNeighborOptions" if node.kind == "RESIZE_NEAREST_NEIGHBOR" else "ResizeBilinearOptions"
    o = ctx.options(node, table)
    size = tuple(int(v) for v in tflite_ints(ctx, node, 1, "size").reshape(-1))
    align, half = bool(o.AlignCorners()), bool(o.HalfPixelCenters())
    if node.kind == "RESIZE_BILINEAR" and align and half:
        raise ctx.fail(node, "half_pixel_centers and align_corners together are not supported (TFLite Micro refuses them)")
    ctx.emit(node, _KINDS[node.kind], [node.inputs[0]], node.outputs,
             {"size": size, "align_corners": align, "half_pixel_centers": half})


def _text(v: Any, default: str) -> str:
    v = default if v is None else v
    return v.decode() if isinstance(v, bytes) else str(v)


def from_onnx(imp: Any, node: Any) -> None:
    attrs = imp.attrs(node)
    if imp.opset < 11:
        raise imp.fail("Resize before opset 11 is not supported")
    mode = _text(attrs.get("mode"), "nearest")
    coord = _text(attrs.get("coordinate_transformation_mode"), "half_pixel")
    nearest = _text(attrs.get("nearest_mode"), "round_prefer_floor")
    if mode not in ("nearest", "linear"):
        raise imp.fail(f"Resize mode '{mode}' is not supported (nearest, linear)")
    if coord not in ONNX_MODES:
        raise imp.fail(f"Resize coordinate_transformation_mode '{coord}' is not supported")
    if int(attrs.get("antialias", 0)) or "axes" in attrs or int(attrs.get("exclude_outside", 0)):
        raise imp.fail("Resize with antialias, axes or exclude_outside is not supported")
    x_value, out = node.input[0], node.output[0]
    shape, out_shape = imp.shape(x_value), imp.shape(out)
    if len(shape) != 4 or tuple(shape[:2]) != tuple(out_shape[:2]):
        raise imp.fail("only Resize of the height and width of a 4-D NCHW tensor is supported")
    scales = [out_shape[2] / shape[2], out_shape[3] / shape[3]]
    if len(node.input) > 2 and node.input[2] and imp.const(node.input[2], "scales").size:
        given = imp.const(node.input[2], "scales").astype(np.float64).reshape(-1)
        if given.size != 4 or given[0] != 1 or given[1] != 1:
            raise imp.fail("only Resize of the height and width of a 4-D NCHW tensor is supported")
        scales = [float(given[2]), float(given[3])]
    kind = "resize_nearest_neighbor" if mode == "nearest" else "resize_bilinear"
    imp.emit(kind, [imp.get(x_value, NHWC)], out, NHWC,
             {"size": (out_shape[2], out_shape[3]), "coordinate_transformation_mode": coord,
              "nearest_mode": nearest, "scales": tuple(scales)})


# -- checks and kernels ------------------------------------------------------------------------

def check(g: Graph, op: Operator) -> None:
    types = TYPES_8_16_F if op.kind == "resize_nearest_neighbor" else TYPES_8_F
    check_same_types(g, op, types)
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    oh, ow = op.attrs["size"]
    if len(x.shape) != 4 or tuple(y.shape) != (x.shape[0], oh, ow, x.shape[3]) or oh < 1 or ow < 1:
        raise OpError(f"{op.source}: resize of {list(x.shape)} to {[oh, ow]} does not give {list(y.shape)}")


def _positions(op: Operator, axis: int, in_size: int, out_size: int, integer: bool
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a = op.attrs
    if "coordinate_transformation_mode" in a:
        nearest = a["nearest_mode"] if op.kind == "resize_nearest_neighbor" else None
        return onnx_positions(in_size, out_size, float(a["scales"][axis]), a["coordinate_transformation_mode"],
                              nearest)
    if op.kind == "resize_nearest_neighbor":
        idx = tflite_nearest(in_size, out_size, a["align_corners"], a["half_pixel_centers"])
        return idx, idx, np.zeros((out_size, 2), np.float32)
    if integer:
        return tflite_bilinear_int(in_size, out_size, a["align_corners"], a["half_pixel_centers"])
    return tflite_bilinear_float(in_size, out_size, a["align_corners"], a["half_pixel_centers"])


def _index(table: np.ndarray, in_size: int, role: str, args: list[KernelArg]) -> Any:
    """A function of the output index giving ``table[i]``: ``i * in // out`` when that is what
    the table holds, else a read of a constant table (added to ``args``)."""
    out_size = table.size
    if np.array_equal(table, np.arange(out_size) * in_size // out_size):
        return lambda i: i * in_size // out_size if in_size != out_size else i
    T = te.placeholder((out_size,), "int32", name=role)
    args.append(KernelArg(T, constant=np.ascontiguousarray(table.astype(np.int32)), role=role))
    return lambda i: T[i]


def _table(data: np.ndarray, role: str, args: list[KernelArg]) -> te.Tensor:
    T = te.placeholder(data.shape, str(data.dtype), name=role)
    args.append(KernelArg(T, constant=np.ascontiguousarray(data), role=role))
    return T


def _nearest(g: Graph, op: Operator, target: Target) -> KernelDef:
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    X = te.placeholder(x.shape, x.dtype, name="x")
    args = [KernelArg(X, tensor=x.name)]
    rows = _positions(op, 0, x.shape[1], y.shape[1], False)
    cols = _positions(op, 1, x.shape[2], y.shape[2], False)
    # ONNX gives two candidates and which one to take; TFLite one index (first == second)
    row = np.where(rows[2][:, 1] > 0, rows[1], rows[0]) if rows[2].any() else rows[0]
    col = np.where(cols[2][:, 1] > 0, cols[1], cols[0]) if cols[2].any() else cols[0]
    r = _index(row, x.shape[1], "rows", args)
    c = _index(col, x.shape[2], "cols", args)
    out = te.compute(y.shape, lambda b, i, j, d: X[b, r(i), c(j), d], name="out")
    return KernelDef(args, out, y.name)


def _bilinear(g: Graph, op: Operator, target: Target) -> KernelDef:
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    integer = x.dtype == "int8"
    X = te.placeholder(x.shape, x.dtype, name="x")
    args = [KernelArg(X, tensor=x.name)]
    (y0, y1, wy), (x0, x1, wx) = (_positions(op, 0, x.shape[1], y.shape[1], integer),
                                  _positions(op, 1, x.shape[2], y.shape[2], integer))
    Y0, Y1 = _index(y0, x.shape[1], "y0", args), _index(y1, x.shape[1], "y1", args)
    X0, X1 = _index(x0, x.shape[2], "x0", args), _index(x1, x.shape[2], "x1", args)
    if integer:
        FY, FX = _table(wy.astype(np.int32), "fy", args), _table(wx.astype(np.int32), "fx", args)
        one = 1 << 10
        half = 1 << 19

        def f(b, i, j, d):  # type: ignore[no-untyped-def]
            def v(r, c):  # type: ignore[no-untyped-def]
                return X[b, r, c, d].astype("int32")
            fy, fx = FY[i], FX[j]
            acc = (v(Y0(i), X0(j)) * (one - fy) * (one - fx) + v(Y1(i), X0(j)) * fy * (one - fx)
                   + v(Y0(i), X1(j)) * (one - fy) * fx + v(Y1(i), X1(j)) * fy * fx)
            rounded = acc + tirx.if_then_else(acc > 0, half, -half)
            return tirx.truncdiv(rounded, 1 << 20).astype("int8")
    else:
        WY, WX = _table(wy.astype(np.float32), "wy", args), _table(wx.astype(np.float32), "wx", args)
        onnx = "coordinate_transformation_mode" in op.attrs

        def f(b, i, j, d):  # type: ignore[no-untyped-def]
            def v(r, c):  # type: ignore[no-untyped-def]
                return X[b, r, c, d]
            if onnx:  # the reference interpolates along the height first, then the width
                top = WY[i, 0] * v(Y0(i), X0(j)) + WY[i, 1] * v(Y1(i), X0(j))
                bottom = WY[i, 0] * v(Y0(i), X1(j)) + WY[i, 1] * v(Y1(i), X1(j))
                return WX[j, 0] * top + WX[j, 1] * bottom
            # TFLite: in * (1 - dy) * (1 - dx) + ..., summed left to right
            return (v(Y0(i), X0(j)) * WY[i, 0] * WX[j, 0] + v(Y1(i), X0(j)) * WY[i, 1] * WX[j, 0]
                    + v(Y0(i), X1(j)) * WY[i, 0] * WX[j, 1] + v(Y1(i), X1(j)) * WY[i, 1] * WX[j, 1])

    out = te.compute(y.shape, f, name="out")
    return KernelDef(args, out, y.name)


OPS = (
    OpDef(
        kind="resize_nearest_neighbor",
        summary="upsample/downsample H and W by picking the nearest source pixel",
        tflite=(SourceOp("RESIZE_NEAREST_NEIGHBOR", from_tflite, TYPES_8_16_F, "constant size"),),
        onnx=(SourceOp("Resize", from_onnx, ("float32",),
                       "4-D, H/W only; nearest or linear; half_pixel, pytorch_half_pixel, asymmetric, "
                       "align_corners"),),
        variants=(Variant("generic", _nearest, types=TYPES_8_16_F),),
        check=check,
        reference="TFLite Micro resize_nearest_neighbor.cc; ONNX Resize (nearest)",
    ),
    OpDef(
        kind="resize_bilinear",
        summary="bilinear interpolation of H and W (int8: TFLite's 10-bit fixed point)",
        tflite=(SourceOp("RESIZE_BILINEAR", from_tflite, TYPES_8_F, "constant size"),),
        variants=(Variant("generic", _bilinear, types=TYPES_8_F),),
        check=check,
        reference="TFLite Micro resize_bilinear.cc (ResizeBilinear / ResizeBilinearInteger); ONNX Resize (linear)",
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "RESIZE not 4-D or the stored output not [n, size, c]",
               "`TF_LITE_ENSURE_EQ(NumDimensions(input), 4)`, size 1-D int32 of 2 constant [k/resize_bilinear.cc:46-52, resize_nearest_neighbor.cc:50-57]; TFLM writes the output dims",
               "refused-by-TFLM", "kept"),
    Validation("from_tflite", "RESIZE with half_pixel_centers and align_corners",
               '`MicroPrintf("If half_pixel_centers is True, align_corners must be False.")` [k/resize_bilinear.cc:59]',
               "refused-by-TFLM", "kept", rule=True),
)
