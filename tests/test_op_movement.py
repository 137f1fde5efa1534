"""Data-movement operators against TFLite Micro (and ONNX models against onnxruntime): PAD,
PADV2, CONCATENATION, PACK, STRIDED_SLICE, SLICE, SPLIT, SPLIT_V, UNPACK, SQUEEZE, EXPAND_DIMS,
TRANSPOSE, GATHER, DEPTH_TO_SPACE, SPACE_TO_DEPTH, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND,
RESIZE_NEAREST_NEIGHBOR, RESIZE_BILINEAR.

Every test builds at least 20 seeded random configurations side by side in one model
(tests/op_check.py): one compile, one run, every output identical to the reference (float32
within 1e-5). Some inputs go through a producer first (PAD, TRANSPOSE) so that the tests also
cover producers writing straight into a concatenation's slot and slices read in place.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

from op_check import check_cases, check_model, quant_params, side_by_side
from tflite_builder import ModelBuilder
from utvm.ops.strided_slice import tflite_strided_slice
from utvm.run.runner import run_model

N = 20
SEEDS = range(N)

Case = Callable[[ModelBuilder], tuple[Sequence[int], Sequence[int]]]


def _rng(*key: object) -> np.random.Generator:
    """A generator seeded by the case's key (stable across processes)."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _shape(rng: np.random.Generator, rank: int, lo: int = 1, hi: int = 6) -> list[int]:
    return [int(v) for v in rng.integers(lo, hi + 1, rank)]


class Tensors:
    """Adds tensors of one type and quantization to a model (int8/int16 share the quantization,
    as data-movement operators do not requantize)."""

    def __init__(self, m: ModelBuilder, dtype: str, rng: np.random.Generator, tag: str) -> None:
        self.m, self.dtype, self.tag = m, dtype, tag
        self.q = quant_params(rng, dtype=dtype) if dtype != "float32" else None
        self.count = 0

    def __call__(self, shape: Sequence[int], data: object = None) -> int:
        self.count += 1
        name = f"{self.tag}_{self.count}"
        if self.q is None:
            return self.m.add_tensor(name, shape, self.dtype, data=data)
        return self.m.add_tensor(name, shape, self.dtype, data=data, scale=self.q[0], zero_point=self.q[1])

    def const_int(self, values: Sequence[int] | np.ndarray, shape: Sequence[int] | None = None) -> int:
        self.count += 1
        arr = np.asarray(values, dtype=np.int32)
        return self.m.add_tensor(f"{self.tag}_c{self.count}", list(arr.shape) if shape is None else shape,
                                 "int32", data=arr)


def _maybe_produced(t: Tensors, rng: np.random.Generator, shape: list[int], inputs: list[int]) -> int:
    """A tensor of ``shape``: a model input, or (half of the time) the output of a PAD of a smaller
    model input, so that a kernel produces it."""
    if rng.random() < 0.5:
        x = t(shape)
        inputs.append(x)
        return x
    pads = [[int(rng.integers(0, min(2, d))), 0] for d in shape]
    src_shape = [d - a - b for d, (a, b) in zip(shape, pads)]
    x = t(src_shape)
    inputs.append(x)
    y = t(shape)
    t.m.add_operator("PAD", [x, t.const_int(pads)], [y])
    return y


# -- cases ----------------------------------------------------------------------------------------

def pad_case(dtype: str, seed: int, v2: bool = False) -> Case:
    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        rng = _rng("pad", dtype, seed, v2)
        t = Tensors(m, dtype, rng, f"pad{int(v2)}_{seed}")
        rank = int(rng.integers(1, 5))
        shape = _shape(rng, rank, 1, 5)
        pads = rng.integers(0, 4, (rank, 2))
        if rank == 4 and seed % 3 == 0:  # image style: batch and channels untouched
            pads[0] = pads[3] = 0
        x = t(shape)
        y = t([d + int(a) + int(b) for d, (a, b) in zip(shape, pads)])
        ins = [x, t.const_int(pads)]
        if v2:
            if dtype == "float32":
                value = float(rng.uniform(-2, 2))
            elif dtype == "int8":
                value = int(rng.integers(-128, 128))
            else:
                value = int(rng.integers(-32768, 32768))
            ins.append(t([], data=np.array(value)))
        m.add_operator("PADV2" if v2 else "PAD", ins, [y])
        return [x], [y]
    return build


def concat_case(dtype: str, seed: int) -> Case:
    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        rng = _rng("concat", dtype, seed)
        t = Tensors(m, dtype, rng, f"cat{seed}")
        rank = int(rng.integers(1, 5))
        shape = _shape(rng, rank, 1, 5)
        axis = int(rng.integers(-rank, rank))
        n = int(rng.integers(1, 5))
        model_inputs: list[int] = []
        parts, total = [], 0
        for _ in range(n):
            s = list(shape)
            s[axis] = int(rng.integers(1, 5))
            total += s[axis]
            parts.append(_maybe_produced(t, rng, s, model_inputs))
        out_shape = list(shape)
        out_shape[axis] = total
        y = t(out_shape)
        m.add_operator("CONCATENATION", parts, [y], {"axis": axis})
        return model_inputs, [y]
    return build


def pack_case(dtype: str, seed: int) -> Case:
    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        rng = _rng("pack", dtype, seed)
        t = Tensors(m, dtype, rng, f"pack{seed}")
        rank = int(rng.integers(1, 4))
        shape = _shape(rng, rank, 1, 5)
        n = int(rng.integers(1, 5))
        axis = int(rng.integers(0, rank + 1))
        model_inputs: list[int] = []
        parts = [_maybe_produced(t, rng, shape, model_inputs) for _ in range(n)]
        y = t(shape[:axis] + [n] + shape[axis:])
        m.add_operator("PACK", parts, [y], {"values_count": n, "axis": axis - (rank + 1) * int(seed % 2)})
        return model_inputs, [y]
    return build


def strided_slice_case(dtype: str, seed: int) -> Case:
    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        rng = _rng("ss", dtype, seed)
        t = Tensors(m, dtype, rng, f"ss{seed}")
        rank = int(rng.integers(1, 5))
        shape = _shape(rng, rank, 1, 7)
        begin, end, strides = [], [], []
        bm = em = sm = 0
        for k, d in enumerate(shape):
            s = int(rng.choice([1, 1, 2, 3, -1, -2]))
            begin.append(int(rng.integers(-d - 1, d + 1)))
            end.append(int(rng.integers(-d - 1, d + 2)))
            strides.append(s)
            bm |= int(rng.random() < 0.25) << k
            em |= int(rng.random() < 0.25) << k
            sm |= int(rng.random() < 0.15) << k
        for k, d in enumerate(shape):  # a shrunk axis needs its begin inside the axis and, for
            if sm >> k & 1:            # TFLite Micro to take it, a positive stride
                begin[k] = int(rng.integers(-d, d))
                strides[k] = abs(strides[k])
                bm &= ~(1 << k)
        for k in range(rank):  # an axis left empty (TFLite Micro refuses empty tensors): take it whole
            _, out_shape = tflite_strided_slice(tuple(shape), begin, end, strides, bm, em, 0, 0, sm)
            kept = [a for a in range(rank) if not sm >> a & 1]
            if k in kept and out_shape[kept.index(k)] == 0:
                bm, em = bm | 1 << k, em | 1 << k
        _, out_shape = tflite_strided_slice(tuple(shape), begin, end, strides, bm, em, 0, 0, sm)
        x = _maybe_produced(t, rng, shape, inputs := [])
        y = t(list(out_shape))
        m.add_operator("STRIDED_SLICE", [x, t.const_int(begin), t.const_int(end), t.const_int(strides)], [y],
                       {"begin_mask": bm, "end_mask": em, "shrink_axis_mask": sm})
        return inputs, [y]
    return build


def slice_case(dtype: str, seed: int) -> Case:
    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        rng = _rng("slice", dtype, seed)
        t = Tensors(m, dtype, rng, f"sl{seed}")
        rank = int(rng.integers(1, 5))
        shape = _shape(rng, rank, 1, 6)
        begin = [int(rng.integers(0, d)) for d in shape]
        size = [int(rng.integers(1, d - b + 1)) if rng.random() < 0.8 else -1 for d, b in zip(shape, begin)]
        out = [d - b if s < 0 else s for d, b, s in zip(shape, begin, size)]
        x = _maybe_produced(t, rng, shape, inputs := [])
        y = t(out)
        m.add_operator("SLICE", [x, t.const_int(begin), t.const_int(size)], [y])
        return inputs, [y]
    return build


def split_case(dtype: str, seed: int, v: bool = False) -> Case:
    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        rng = _rng("split", dtype, seed, v)
        t = Tensors(m, dtype, rng, f"sp{int(v)}_{seed}")
        rank = int(rng.integers(1, 5))
        shape = _shape(rng, rank, 1, 4)
        axis = int(rng.integers(-rank, rank))
        n = int(rng.integers(1, 4))
        if v:
            sizes = [int(s) for s in rng.integers(1, 4, n)]
            shape[axis] = sum(sizes)
            given = list(sizes)
            given[int(rng.integers(0, n))] = -1
        else:
            shape[axis] *= n
            sizes = [shape[axis] // n] * n
        x = _maybe_produced(t, rng, shape, inputs := [])
        outs = []
        for s in sizes:
            o = list(shape)
            o[axis] = s
            outs.append(t(o))
        if v:
            m.add_operator("SPLIT_V", [x, t.const_int(given), t.const_int([axis], [])], outs, {"num_splits": n})
        else:
            m.add_operator("SPLIT", [t.const_int([axis], []), x], outs, {"num_splits": n})
        return inputs, outs
    return build


def unpack_case(dtype: str, seed: int) -> Case:
    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        rng = _rng("unpack", dtype, seed)
        t = Tensors(m, dtype, rng, f"up{seed}")
        rank = int(rng.integers(1, 5))
        shape = _shape(rng, rank, 1, 4)
        axis = int(rng.integers(-rank, rank))
        x = _maybe_produced(t, rng, shape, inputs := [])
        outs = [t(shape[:axis % rank] + shape[axis % rank + 1:]) for _ in range(shape[axis])]
        m.add_operator("UNPACK", [x], outs, {"num": shape[axis], "axis": axis})
        return inputs, outs
    return build


def squeeze_expand_case(dtype: str, seed: int) -> Case:
    """SQUEEZE then EXPAND_DIMS then PAD (an alias chain read by a kernel), and the squeezed
    tensor as an output of its own."""
    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        rng = _rng("sq", dtype, seed)
        t = Tensors(m, dtype, rng, f"sq{seed}")
        rank = int(rng.integers(2, 5))
        shape = [d if k == 0 or rng.random() < 0.5 else 1 for k, d in enumerate(_shape(rng, rank, 2, 5))]
        ones = [k for k, d in enumerate(shape) if d == 1]
        dims = [k for k in ones if rng.random() < 0.6] if seed % 2 else []
        squeezed = [d for k, d in enumerate(shape) if not (k in dims or (not dims and d == 1))]
        x = t(shape)
        s = t(squeezed)
        m.add_operator("SQUEEZE", [x], [s], {"squeeze_dims": dims})
        axis = int(rng.integers(-len(squeezed) - 1, len(squeezed) + 1))
        pos = axis % (len(squeezed) + 1)
        e = t(squeezed[:pos] + [1] + squeezed[pos:])
        m.add_operator("EXPAND_DIMS", [s, t.const_int([axis], [])], [e])
        p = t([d + 1 for d in squeezed[:pos] + [1] + squeezed[pos:]])
        m.add_operator("PAD", [e, t.const_int([[1, 0]] * (len(squeezed) + 1))], [p])
        return [x], [p]
    return build


def transpose_case(dtype: str, seed: int) -> Case:
    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        rng = _rng("tr", dtype, seed)
        t = Tensors(m, dtype, rng, f"tr{seed}")
        rank = int(rng.integers(1, 6))
        shape = _shape(rng, rank, 1, 5)
        perm = [int(p) for p in rng.permutation(rank)]
        x = _maybe_produced(t, rng, shape, inputs := [])
        y = t([shape[p] for p in perm])
        m.add_operator("TRANSPOSE", [x, t.const_int(perm)], [y])
        return inputs, [y]
    return build


def gather_case(dtype: str, seed: int, arrays: list[np.ndarray]) -> Case:
    """GATHER with constant indices (odd seeds) or indices given as a model input (even seeds,
    ``arrays`` receives every model input's data in order)."""
    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        rng = _rng("gather", dtype, seed)
        t = Tensors(m, dtype, rng, f"ga{seed}")
        rank = int(rng.integers(1, 5))
        shape = _shape(rng, rank, 1, 5)
        axis = int(rng.integers(0, rank))
        batch_dims = int(rng.integers(0, axis + 1)) if seed % 4 == 0 else 0
        idx_shape = shape[:batch_dims] + _shape(rng, int(rng.integers(0, 3)), 1, 4)
        idx = rng.integers(0, shape[axis], idx_shape).astype(np.int32)
        x = t(shape)
        arrays.append(_random(rng, dtype, shape))
        ins = [x]
        if seed % 2:
            i = t.const_int(idx, idx_shape)
        else:
            t.count += 1
            i = m.add_tensor(f"ga{seed}_idx", idx_shape, "int32")
            ins.append(i)
            arrays.append(idx)
        y = t(shape[:axis] + idx_shape[batch_dims:] + shape[axis + 1:])
        m.add_operator("GATHER", [x, i], [y], {"axis": axis - rank * int(seed % 3 == 1), "batch_dims": batch_dims})
        return ins, [y]
    return build


def depth_space_case(dtype: str, seed: int, to_space: bool) -> Case:
    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        rng = _rng("ds", dtype, seed, to_space)
        t = Tensors(m, dtype, rng, f"ds{int(to_space)}_{seed}")
        b = int(rng.integers(1, 4))
        n, h, w, c = (int(v) for v in _shape(rng, 4, 1, 4))
        if to_space:
            x = _maybe_produced(t, rng, [n, h, w, c * b * b], inputs := [])
            y = t([n, h * b, w * b, c])
            m.add_operator("DEPTH_TO_SPACE", [x], [y], {"block_size": b})
        else:
            x = _maybe_produced(t, rng, [n, h * b, w * b, c], inputs := [])
            y = t([n, h, w, c * b * b])
            m.add_operator("SPACE_TO_DEPTH", [x], [y], {"block_size": b})
        return inputs, [y]
    return build


def batch_space_case(dtype: str, seed: int, to_batch: bool, padded: bool = False) -> Case:
    """SPACE_TO_BATCH_ND (``padded``: with paddings that pad, which TFLite Micro fills with
    whatever its arena held) or BATCH_TO_SPACE_ND."""
    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        rng = _rng("bs", dtype, seed, to_batch, padded)
        t = Tensors(m, dtype, rng, f"bs{int(to_batch)}_{seed}")
        three = seed % 4 == 3
        bh, bw = int(rng.integers(1, 4)), 1 if three else int(rng.integers(1, 4))
        n, h, w, c = (int(v) for v in _shape(rng, 4, 1, 4))
        w = 1 if three else w
        block = [bh] if three else [bh, bw]
        if to_batch:
            pads = [[int(rng.integers(0, 3)) if padded else 0 for _ in range(2)] for _ in range(2)]
            ph, pw = (h + sum(pads[0])), (w + sum(pads[1]))
            if padded:
                pads[0][1] += -ph % bh
                pads[1][1] += -pw % bw
            else:
                h, w = h * bh, 1 if three else w * bw
            if three:
                pads[1] = [0, 0]
            oh, ow = (h + sum(pads[0])) // bh, (w + sum(pads[1])) // bw
            x_shape = [n, h, c] if three else [n, h, w, c]
            y_shape = [n * bh * bw, oh, c] if three else [n * bh * bw, oh, ow, c]
            x = t(x_shape)
            y = t(y_shape)
            m.add_operator("SPACE_TO_BATCH_ND", [x, t.const_int(block), t.const_int(pads[:1] if three else pads)], [y])
        else:
            crops = [[int(rng.integers(0, 2)) for _ in range(2)] for _ in range(2)]
            if three:
                crops[1] = [0, 0]
            oh, ow = h * bh - sum(crops[0]), w * bw - sum(crops[1])
            if oh <= 0 or ow <= 0:
                crops, oh, ow = [[0, 0], [0, 0]], h * bh, w * bw
            x_shape = [n * bh * bw, h, c] if three else [n * bh * bw, h, w, c]
            y_shape = [n, oh, c] if three else [n, oh, ow, c]
            x = t(x_shape)
            y = t(y_shape)
            m.add_operator("BATCH_TO_SPACE_ND", [x, t.const_int(block), t.const_int(crops[:1] if three else crops)], [y])
        return [x], [y]
    return build


def resize_case(dtype: str, seed: int, bilinear: bool) -> Case:
    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        rng = _rng("rs", dtype, seed, bilinear)
        t = Tensors(m, dtype, rng, f"rs{int(bilinear)}_{seed}")
        n, h, w, c = (int(v) for v in _shape(rng, 4, 1, 6))
        oh, ow = int(rng.integers(1, 13)), int(rng.integers(1, 13))
        align, half = [(False, False), (True, False), (False, True), (True, True)][seed % 4]
        if bilinear and align and half:
            align = False
        x = _maybe_produced(t, rng, [n, h, w, c], inputs := [])
        y = t([n, oh, ow, c])
        op = "RESIZE_BILINEAR" if bilinear else "RESIZE_NEAREST_NEIGHBOR"
        m.add_operator(op, [x, t.const_int([oh, ow])], [y], {"align_corners": align, "half_pixel_centers": half})
        return inputs, [y]
    return build


def _random(rng: np.random.Generator, dtype: str, shape: Sequence[int]) -> np.ndarray:
    if dtype == "float32":
        return rng.uniform(-1, 1, shape).astype(np.float32)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, shape).astype(dtype)


# -- tests ------------------------------------------------------------------------------------------

CASES: dict[str, tuple[Callable[[str, int], Case], tuple[str, ...]]] = {
    "pad": (lambda d, s: pad_case(d, s), ("int8", "int16", "float32")),
    "padv2": (lambda d, s: pad_case(d, s, v2=True), ("int8", "int16", "float32")),
    "concatenation": (concat_case, ("int8", "int16", "float32")),
    "pack": (pack_case, ("int8", "float32")),
    "strided_slice": (strided_slice_case, ("int8", "int16", "float32")),
    "slice": (slice_case, ("int8", "float32")),
    "split": (lambda d, s: split_case(d, s), ("int8", "float32")),
    "split_v": (lambda d, s: split_case(d, s, v=True), ("int8", "float32")),
    "unpack": (unpack_case, ("int8", "float32")),
    "squeeze_expand_dims": (squeeze_expand_case, ("int8", "float32")),
    "transpose": (transpose_case, ("int8", "int16", "float32")),
    "depth_to_space": (lambda d, s: depth_space_case(d, s, True), ("int8", "float32")),
    "space_to_depth": (lambda d, s: depth_space_case(d, s, False), ("int8", "float32")),
    "space_to_batch_nd": (lambda d, s: batch_space_case(d, s, True), ("int8", "float32")),  # no padding
    "batch_to_space_nd": (lambda d, s: batch_space_case(d, s, False), ("int8", "float32")),
    "resize_nearest_neighbor": (lambda d, s: resize_case(d, s, False), ("int8", "int16", "float32")),
    "resize_bilinear": (lambda d, s: resize_case(d, s, True), ("int8", "float32")),
}


@pytest.mark.parametrize(("op", "dtype"), [(op, d) for op, (_, types) in CASES.items() for d in types])
def test_operator_matches_tflite_micro(tmp_path: Path, op: str, dtype: str) -> None:
    make, _ = CASES[op]
    report = check_cases([make(dtype, s) for s in SEEDS], tmp_path)
    assert report.outputs_match_reference


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_gather_matches_tflite_micro(tmp_path: Path, dtype: str) -> None:
    arrays: list[np.ndarray] = []
    model = side_by_side([gather_case(dtype, s, arrays) for s in SEEDS])  # fills ``arrays`` in input order
    check_model(model, tmp_path, inputs=arrays)


def _space_to_batch(x: np.ndarray, block: Sequence[int], pads: np.ndarray, value: float) -> np.ndarray:
    """TFLite's SpaceToBatchND (3-D tensors as [batch, height, 1, depth]), padding with ``value``."""
    three = x.ndim == 3
    x4 = x[:, :, None, :] if three else x
    bh, bw = (block[0], 1) if three else (block[0], block[1])
    top, left = int(pads[0][0]), 0 if three else int(pads[1][0])
    n, h, w, c = x4.shape
    oh = (h + int(pads[0].sum())) // bh
    ow = 1 if three else (w + int(pads[1].sum())) // bw
    out = np.full((n * bh * bw, oh, ow, c), value, dtype=x.dtype)
    for ob in range(n * bh * bw):
        shift_h, shift_w = divmod(ob // n, bw)
        for i in range(oh):
            for j in range(ow):
                ih, iw = i * bh + shift_h - top, j * bw + shift_w - left
                if 0 <= ih < h and 0 <= iw < w:
                    out[ob, i, j] = x4[ob % n, ih, iw]
    return out[:, :, 0, :] if three else out


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_space_to_batch_pads_with_the_zero_point(tmp_path: Path, dtype: str) -> None:
    """Padded positions hold the zero point (TFLite's semantics; TFLite Micro leaves them to
    whatever its arena held, so this compares with numpy)."""
    m = ModelBuilder()
    cases = [batch_space_case(dtype, s, True, padded=True) for s in SEEDS]
    ins: list[int] = []
    outs: list[int] = []
    for case in cases:
        i, o = case(m)
        ins += i
        outs += o
    (tmp_path / "m.tflite").write_bytes(m.finish(ins, outs))
    rng = np.random.default_rng(7)
    arrays, paths = [], []
    g_ops = [op for op in m._operators if op["op"] == "SPACE_TO_BATCH_ND"]
    for k, op in enumerate(g_ops):
        tensor = m._tensors[op["inputs"][0]]
        arrays.append(_random(rng, dtype, tensor["shape"]))
        paths.append(tmp_path / f"in{k}.npy")
        np.save(paths[-1], arrays[-1])
    report = run_model(tmp_path / "m.tflite", "host", inputs=paths, workdir=tmp_path)
    for k, op in enumerate(g_ops):
        block = np.frombuffer(m._buffers[m._tensors[op["inputs"][1]]["buffer"]], np.int32)
        pads = np.frombuffer(m._buffers[m._tensors[op["inputs"][2]]["buffer"]], np.int32).reshape(-1, 2)
        zp = m._tensors[op["outputs"][0]]["zero_point"]
        want = _space_to_batch(arrays[k], list(block), pads, float(zp[0]) if zp else 0.0)
        assert np.array_equal(report.outputs[k], want), f"case {k}"
    assert any(int(p.sum()) for p in [np.frombuffer(m._buffers[m._tensors[o["inputs"][2]]["buffer"]], np.int32)
                                      for o in g_ops])


def _apply_slice(x: np.ndarray, attrs: dict[str, tuple[int, ...]], out_shape: tuple[int, ...]) -> np.ndarray:
    """What the strided_slice kernel computes, in numpy: x[begin + strides * j] on walked axes."""
    walked = [a for a in attrs["out_axes"] if a >= 0]
    counts = {a: out_shape[d] for d, a in enumerate(attrs["out_axes"]) if a >= 0}
    index = [attrs["begin"][a] + attrs["strides"][a] * np.arange(counts[a]) if a in walked
             else np.array([attrs["begin"][a]]) for a in range(x.ndim)]
    return x[np.ix_(*index)].reshape(out_shape)


@pytest.mark.parametrize("seed", range(40))
def test_strided_slice_masks_follow_tensorflow(seed: int) -> None:
    """Ellipsis and new-axis masks (TFLite Micro ignores them) and the others, against numpy's
    own slicing of the same specification."""
    rng = _rng("masks", seed)
    rank = int(rng.integers(1, 5))
    shape = tuple(_shape(rng, rank, 1, 6))
    x = rng.integers(-100, 100, shape)
    n = int(rng.integers(1, rank + 3))
    begin, end, strides, py = [], [], [], []
    masks = {"begin": 0, "end": 0, "ellipsis": 0, "new": 0, "shrink": 0}
    ellipsis_at = int(rng.integers(0, n)) if rng.random() < 0.5 else -1
    consumed = 0
    for i in range(n):
        b, e, s = int(rng.integers(-7, 7)), int(rng.integers(-7, 8)), int(rng.choice([1, 2, -1, -3]))
        begin.append(b)
        end.append(e)
        strides.append(s)
        after = sum(1 for k in range(i + 1, n) if not (masks["new"] >> k & 1))
        if i == ellipsis_at:
            masks["ellipsis"] |= 1 << i
            py.append(Ellipsis)
            consumed = rank - after
        elif rng.random() < 0.2 or consumed >= rank:
            masks["new"] |= 1 << i
            py.append(None)
        elif rng.random() < 0.2:
            d = shape[consumed]
            begin[i] = int(rng.integers(-d, d))
            strides[i] = 1
            masks["shrink"] |= 1 << i
            py.append(begin[i])
            consumed += 1
        else:
            bm, em = rng.random() < 0.3, rng.random() < 0.3
            masks["begin"] |= int(bm) << i
            masks["end"] |= int(em) << i
            py.append(slice(None if bm else b, None if em else e, s))
            consumed += 1
    try:
        want = x[tuple(py)]
    except IndexError:
        pytest.skip("numpy rejects this specification")
    attrs, out_shape = tflite_strided_slice(shape, begin, end, strides, masks["begin"], masks["end"],
                                            masks["ellipsis"], masks["new"], masks["shrink"])
    assert out_shape == want.shape
    if want.size:
        assert np.array_equal(_apply_slice(x, attrs, out_shape), want)


# -- ONNX (float32, against onnxruntime) ------------------------------------------------------------

class OnnxCases:
    """Many independent ONNX subgraphs in one model: each case adds its input, nodes, output."""

    def __init__(self) -> None:
        self.nodes: list[object] = []
        self.inputs: list[object] = []
        self.outputs: list[object] = []
        self.inits: dict[str, np.ndarray] = {}

    def input(self, name: str, shape: Sequence[int]) -> str:
        from onnx import TensorProto, helper

        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape)))
        return name

    def const(self, name: str, value: np.ndarray) -> str:
        self.inits[name] = value
        return name

    def node(self, op: str, ins: Sequence[str], outs: Sequence[str], **attrs: object) -> None:
        from onnx import helper

        self.nodes.append(helper.make_node(op, list(ins), list(outs), **attrs))

    def output(self, name: str) -> None:
        from onnx import TensorProto, helper

        self.outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))

    def nchw(self, prefix: str, shape: Sequence[int], rng: np.random.Generator, conv: bool) -> str:
        """A 4-D NCHW value: the model input itself, or (``conv``) a 1x1 convolution of it, which
        the importer keeps in NHWC layout."""
        x = self.input(f"{prefix}_x", shape)
        if not conv:
            return x
        c = shape[1]
        w = self.const(f"{prefix}_w", rng.standard_normal((c, c, 1, 1)).astype(np.float32))
        self.node("Conv", [x, w], [f"{prefix}_conv"])
        return f"{prefix}_conv"

    def save(self, path: Path, opset: int = 17) -> Path:
        import onnx
        from onnx import helper, numpy_helper

        graph = helper.make_graph(self.nodes, path.stem, self.inputs, self.outputs,
                                  [numpy_helper.from_array(v, k) for k, v in self.inits.items()])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 8
        model = onnx.shape_inference.infer_shapes(model, strict_mode=True)  # gives the outputs their shapes
        onnx.checker.check_model(model)
        onnx.save(model, str(path))
        return path


def onnx_concat(c: OnnxCases, s: int) -> None:
    rng = _rng("onnx_concat", s)
    shape = _shape(rng, 4, 1, 4)
    axis = int(rng.integers(-4, 4))
    parts = []
    for k in range(int(rng.integers(1, 4))):
        sh = list(shape)
        sh[axis] = int(rng.integers(1, 4))
        if k == 1 and s % 3 == 0:
            parts.append(c.const(f"cat{s}_k{k}", rng.standard_normal(sh).astype(np.float32)))
        else:
            parts.append(c.nchw(f"cat{s}_{k}", sh, rng, conv=bool(rng.random() < 0.5)))
    c.node("Concat", parts, [f"cat{s}_y"], axis=axis)
    c.output(f"cat{s}_y")


def onnx_pad(c: OnnxCases, s: int) -> None:
    rng = _rng("onnx_pad", s)
    mode = ["constant", "edge", "reflect"][s % 3]
    rank = 4 if s % 2 else int(rng.integers(1, 4))
    shape = _shape(rng, rank, 2, 5)
    x = c.nchw(f"pad{s}", shape, rng, conv=rank == 4 and s % 4 == 1) if rank == 4 else c.input(f"pad{s}_x", shape)
    hi = [min(3, d - 1) if mode == "reflect" else 3 for d in shape]
    pads = [int(rng.integers(0, h + 1)) for h in hi] + [int(rng.integers(0, h + 1)) for h in hi]
    if mode == "constant" and s % 5 == 0:  # negative pads crop
        pads[0] = -min(1, shape[0] - 1)
    ins = [x, c.const(f"pad{s}_p", np.array(pads, np.int64))]
    if mode == "constant":
        ins.append(c.const(f"pad{s}_v", np.array(rng.uniform(-1, 1), np.float32)))
    c.node("Pad", ins, [f"pad{s}_y"], mode=mode)
    c.output(f"pad{s}_y")


def onnx_slice(c: OnnxCases, s: int) -> None:
    rng = _rng("onnx_slice", s)
    rank = int(rng.integers(1, 5))
    shape = _shape(rng, rank, 1, 6)
    x = c.nchw(f"sl{s}", shape, rng, conv=s % 2 == 1) if rank == 4 else c.input(f"sl{s}_x", shape)
    axes = sorted(int(a) for a in rng.choice(rank, int(rng.integers(1, rank + 1)), replace=False))
    starts, ends, steps = [], [], []
    for a in axes:
        d = shape[a]
        step = int(rng.choice([1, 1, 2, -1, -2]))
        start = int(rng.integers(-d, d))
        end = int(rng.choice([int(rng.integers(-d - 2, d + 3)), 2**62 if step > 0 else -(2**62)]))
        if len(range(*slice(start, end, step).indices(d))) == 0:
            start, end, step = 0, d, 1
        starts.append(start)
        ends.append(end)
        steps.append(step)
    ins = [x] + [c.const(f"sl{s}_{n}", np.array(v, np.int64))
                 for n, v in (("s", starts), ("e", ends), ("a", [a - rank * (s % 2) for a in axes]), ("t", steps))]
    c.node("Slice", ins, [f"sl{s}_y"])
    c.output(f"sl{s}_y")


def onnx_split(c: OnnxCases, s: int) -> None:
    rng = _rng("onnx_split", s)
    shape = _shape(rng, 4, 1, 4)
    axis = int(rng.integers(0, 4))
    sizes = [int(v) for v in rng.integers(1, 4, int(rng.integers(1, 4)))]
    shape[axis] = sum(sizes)
    x = c.nchw(f"sp{s}", shape, rng, conv=s % 2 == 1)
    outs = [f"sp{s}_y{k}" for k in range(len(sizes))]
    c.node("Split", [x, c.const(f"sp{s}_s", np.array(sizes, np.int64))], outs, axis=axis - 4 * (s % 3 == 0))
    for o in outs:
        c.output(o)


def onnx_squeeze(c: OnnxCases, s: int) -> None:
    rng = _rng("onnx_squeeze", s)
    shape = [d if rng.random() < 0.6 else 1 for d in _shape(rng, int(rng.integers(2, 5)), 2, 4)]
    shape[0] = max(shape[0], 2)
    x = c.input(f"sq{s}_x", shape)
    ones = [k for k, d in enumerate(shape) if d == 1]
    ins = [x] + ([c.const(f"sq{s}_a", np.array(ones, np.int64))] if ones and s % 2 else [])
    c.node("Squeeze", ins, [f"sq{s}_s"])
    rank = len(shape) - len(ones)
    axis = int(rng.integers(-rank - 1, rank + 1))
    c.node("Unsqueeze", [f"sq{s}_s", c.const(f"sq{s}_ua", np.array([axis], np.int64))], [f"sq{s}_u"])
    c.node("Pad", [f"sq{s}_u", c.const(f"sq{s}_p", np.array([1] + [0] * rank + [0] * (rank + 1), np.int64))],
           [f"sq{s}_y"])
    c.output(f"sq{s}_y")


def onnx_gather(c: OnnxCases, s: int) -> None:
    rng = _rng("onnx_gather", s)
    rank = int(rng.integers(1, 5))
    shape = _shape(rng, rank, 1, 5)
    axis = int(rng.integers(0, rank))
    idx_shape = _shape(rng, int(rng.integers(0, 3)), 1, 4)
    idx = rng.integers(-shape[axis], shape[axis], idx_shape).astype(np.int64)
    x = c.input(f"ga{s}_x", shape)
    c.node("Gather", [x, c.const(f"ga{s}_i", idx)], [f"ga{s}_y"], axis=axis - rank * (s % 2))
    c.output(f"ga{s}_y")


def onnx_resize(c: OnnxCases, s: int) -> None:
    rng = _rng("onnx_resize", s)
    n, ch, h, w = _shape(rng, 4, 1, 5)
    mode = "linear" if s % 2 else "nearest"
    coord = ["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"][(s // 2) % 4]
    nearest = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"][s % 4]
    x = c.nchw(f"rs{s}", [n, ch, h, w], rng, conv=s % 3 == 0)
    if s % 5 < 3:
        oh, ow = int(rng.integers(1, 11)), int(rng.integers(1, 11))
        ins = [x, "", "", c.const(f"rs{s}_size", np.array([n, ch, oh, ow], np.int64))]
    else:
        factors = np.array([1, 1, rng.choice([0.5, 2.0, 3.0, 1.5]), rng.choice([0.5, 2.0, 3.0, 1.5])], np.float32)
        ins = [x, "", c.const(f"rs{s}_scales", factors)]
    c.node("Resize", ins, [f"rs{s}_y"], mode=mode, coordinate_transformation_mode=coord, nearest_mode=nearest)
    c.output(f"rs{s}_y")


def onnx_depth_space(c: OnnxCases, s: int) -> None:
    rng = _rng("onnx_ds", s)
    b = int(rng.integers(1, 4))
    n, ch, h, w = _shape(rng, 4, 1, 3)
    if s % 2:
        x = c.nchw(f"ds{s}", [n, ch * b * b, h, w], rng, conv=s % 4 == 1)
        c.node("DepthToSpace", [x], [f"ds{s}_y"], blocksize=b, mode="CRD" if s % 3 else "DCR")
    else:
        x = c.nchw(f"ds{s}", [n, ch, h * b, w * b], rng, conv=s % 4 == 0)
        c.node("SpaceToDepth", [x], [f"ds{s}_y"], blocksize=b)
    c.output(f"ds{s}_y")


def onnx_tile(c: OnnxCases, s: int) -> None:
    rng = _rng("onnx_tile", s)
    shape = _shape(rng, int(rng.integers(1, 5)), 1, 4)
    x = c.input(f"ti{s}_x", shape)
    reps = rng.integers(1, 4, len(shape)).astype(np.int64)
    c.node("Tile", [x, c.const(f"ti{s}_r", reps)], [f"ti{s}_y"])
    c.output(f"ti{s}_y")


ONNX_CASES = {"concat": onnx_concat, "pad": onnx_pad, "slice": onnx_slice, "split": onnx_split,
              "squeeze_unsqueeze": onnx_squeeze, "gather": onnx_gather, "resize": onnx_resize,
              "depth_space": onnx_depth_space, "tile": onnx_tile}


@pytest.mark.parametrize("op", list(ONNX_CASES))
def test_onnx_operator_matches_onnxruntime(tmp_path: Path, op: str) -> None:
    cases = OnnxCases()
    for s in range(N if op != "depth_space" else 2 * N):
        ONNX_CASES[op](cases, s)
    model = cases.save(tmp_path / f"{op}.onnx")
    report = check_model(model, tmp_path)
    assert report.max_rel_diff <= 1e-5 or report.max_abs_diff <= 1e-6


def test_onnx_split_num_outputs(tmp_path: Path) -> None:
    """Split's num_outputs (opset 18): the last part may be smaller."""
    cases = OnnxCases()
    for s in range(N):
        rng = _rng("onnx_split18", s)
        shape = _shape(rng, 3, 1, 7)
        n = int(rng.integers(1, shape[1] + 1))
        outs = [f"n{s}_y{k}" for k in range(n)]
        cases.node("Split", [cases.input(f"n{s}_x", shape)], outs, axis=1, num_outputs=n)
        for o in outs:
            cases.output(o)
    check_model(cases.save(tmp_path / "split18.onnx", opset=18), tmp_path)


# -- shared models ------------------------------------------------------------------------------------

#: the whole corpus and TFLite Micro models run in test_shared_models.py
BOARDS = ["mps2/an386", "mps3/an547"]


def _run_shared(path: Path, board: str, work: Path, inputs: list[Path] | None = None) -> object:
    from utvm.errors import UtvmError

    try:
        return run_model(path, board, inputs=inputs, workdir=work)
    except UtvmError as exc:
        if "unsupported operators" in str(exc):  # an operator of another family, not merged yet
            pytest.skip(str(exc).split(": ", 1)[-1])
        raise


def _seanet(models_dir: Path, layer: str) -> list[Path]:
    folder = models_dir / "tflm" / "seanet" / layer
    return sorted(folder.glob(f"{layer}*.tflite"), key=lambda p: int(p.stem[len(layer):]))


def _csv(path: Path) -> np.ndarray:
    return np.array([int(v) for v in path.read_text().replace("\n", ",").split(",") if v.strip()], np.int16)


def _seanet_run(model: Path, board: str, tmp_path: Path) -> None:
    import tflite

    sg = tflite.Model.GetRootAsModel(model.read_bytes(), 0).Subgraphs(0)
    paths = []
    for k, csv in enumerate(sorted(model.parent.glob(f"{model.stem}_input*_int16.csv"))):
        paths.append(tmp_path / f"in{k}.npy")
        np.save(paths[-1], _csv(csv).reshape(sg.Tensors(sg.Inputs(k)).ShapeAsNumpy()))
    golden = _csv(model.parent / f"{model.stem}_golden_int16.csv")
    report = _run_shared(model, board, tmp_path, paths)
    assert report.outputs_match_reference  # type: ignore[attr-defined]
    assert np.array_equal(report.outputs[0].reshape(-1), golden)  # type: ignore[attr-defined]


QUICK_SEANET = {"pad": (0, 7, 18), "strided_slice": (0, 11, 33)}


@pytest.mark.parametrize("layer", ["pad", "strided_slice"])
def test_seanet_layers_match_golden_on_host(models_dir: Path, tmp_path: Path, layer: str) -> None:
    """A few SEANet int16 layers (all of them in the slow test below)."""
    for k in QUICK_SEANET[layer]:
        model = models_dir / "tflm" / "seanet" / layer / f"{layer}{k}.tflite"
        (tmp_path / model.stem).mkdir()
        _seanet_run(model, "host", tmp_path / model.stem)


@pytest.mark.slow
@pytest.mark.parametrize("board", ["host", *BOARDS])
@pytest.mark.parametrize("layer", ["pad", "strided_slice"])
def test_all_seanet_layers_match_golden(models_dir: Path, tmp_path: Path, layer: str, board: str) -> None:
    models = _seanet(models_dir, layer)
    assert len(models) >= 19
    for model in models:
        if not (model.parent / f"{model.stem}_golden_int16.csv").exists():
            continue
        (tmp_path / model.stem).mkdir()
        _seanet_run(model, board, tmp_path / model.stem)


@pytest.mark.slow
@pytest.mark.parametrize("board", BOARDS)
@pytest.mark.parametrize(("op", "dtype"), [("concatenation", "int8"), ("pad", "int16"), ("strided_slice", "int16"),
                                           ("resize_bilinear", "int8"), ("transpose", "int8"), ("gather", "int8")])
def test_operator_on_board(tmp_path: Path, op: str, dtype: str, board: str) -> None:
    """The same seeded configurations on emulated Cortex-M4 and M55 boards."""
    if op == "gather":
        arrays: list[np.ndarray] = []
        model = side_by_side([gather_case(dtype, s, arrays) for s in SEEDS])
        check_model(model, tmp_path, board, inputs=arrays)
        return
    make, _ = CASES[op]
    check_cases([make(dtype, s) for s in SEEDS], tmp_path, board)
