"""Reductions and normalizations: MEAN, SUM, REDUCE_MAX, REDUCE_MIN, ARG_MAX, ARG_MIN,
L2_NORMALIZATION, LOG_SOFTMAX, int16 SOFTMAX, and their ONNX counterparts.

Each operator is checked with 20+ seeded configurations per element type (shapes up to 5-D,
axes with negative and repeated ones, keep_dims, quantization parameters, the types' extremes),
side by side in one model compiled once, against TFLite Micro (identical integers, float32
within 1e-5) or onnxruntime. The shared models these operators complete run on the host and
(int8) on the emulated boards.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

import op_check
from op_check import check_model, quant_params
from tflite_builder import ModelBuilder
from utvm.ops.reduce import normalize_axes, reduced_shape

N_CASES = 20


def values(rng: np.random.Generator, shape: Sequence[int], dtype: str, extremes: bool = True) -> np.ndarray:
    """Random data of ``dtype``; integer data holds the type's extremes."""
    if dtype == "float32":
        return rng.uniform(-3.0, 3.0, size=shape).astype(np.float32)
    info = np.iinfo(dtype)
    data = rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)
    if extremes and data.size >= 3:
        flat = data.reshape(-1)
        flat[0], flat[-1] = info.min, info.max
    return data


def random_shape(rng: np.random.Generator, min_rank: int = 1, max_rank: int = 5, max_dim: int = 6) -> tuple[int, ...]:
    rank = int(rng.integers(min_rank, max_rank + 1))
    return tuple(int(rng.integers(1, max_dim + 1)) for _ in range(rank))


def random_axes(rng: np.random.Generator, rank: int, most: int = 3) -> list[int]:
    """1..most axes, some counted from the end, sometimes one repeated."""
    n = int(rng.integers(1, min(rank, most) + 1))
    axes = [int(a) for a in rng.choice(rank, n, replace=False)]
    axes = [a - rank if rng.random() < 0.3 else a for a in axes]
    if rng.random() < 0.15:
        axes.append(axes[0] - rank if axes[0] >= 0 else axes[0] + rank)
    return axes


def qargs(q: tuple[float, int] | None) -> dict[str, float | int]:
    return {"scale": q[0], "zero_point": q[1]} if q else {}


#: fixed (shape, axes, keep_dims) every reduction meets before the random ones
REDUCE_PATTERNS = [
    ((1, 6, 5, 8), [1, 2], True),      # TFLite's mean over H, W of NHWC (global pooling)
    ((1, 6, 5, 8), [2, 1], False),
    ((2, 3, 4, 5, 3), [0, 2, 4], False),
    ((7,), [0], False),                # to a scalar
    ((3, 4), [-1], True),
    ((1, 12, 12, 16), [1, 2], True),   # squeeze-excite's MEAN
]


class Cases(op_check.Cases):
    """The cases of this family's operators (TFLite)."""

    def input(self, m: ModelBuilder, name: str, data: np.ndarray, ins: list[int],
              q: tuple[float, int] | None = None) -> int:
        index = m.add_tensor(name, data.shape, str(data.dtype), **qargs(q))
        ins.append(index)
        self.inputs.append(data)
        return index

    def reduce(self, op: str, dtype: str, seed: int) -> None:
        def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
            rng = np.random.default_rng(seed)
            if seed % 100 < len(REDUCE_PATTERNS):
                shape, axes, keep = REDUCE_PATTERNS[seed % 100]
            else:
                shape = random_shape(rng)
                axes, keep = random_axes(rng, len(shape)), bool(rng.random() < 0.5)
            quant = dtype != "float32"
            qx = quant_params(rng, -3.0, 3.0, dtype) if quant else None
            qy = None
            if quant:
                lo, hi = (-3.0, 3.0) if op != "SUM" else (-20.0, 20.0)
                qy = qx if op in ("REDUCE_MAX", "REDUCE_MIN") or rng.random() < 0.2 else quant_params(rng, lo, hi, dtype)
                if dtype == "int16" and rng.random() < 0.3:  # a zero point other than 0
                    qx = (qx[0], int(rng.integers(-300, 300)))
            tag = f"{op.lower()}_{dtype}_{seed}"
            ins: list[int] = []
            x = self.input(m, f"{tag}_x", values(rng, shape, dtype), ins, qx)
            ax = m.add_tensor(f"{tag}_axes", (len(axes),), "int32", data=np.array(axes, np.int32))
            resolved = normalize_axes(axes, len(shape))
            assert resolved is not None
            y = m.add_tensor(f"{tag}_y", reduced_shape(shape, resolved, keep), dtype, **qargs(qy))
            m.add_operator(op, [x, ax], [y], {"keep_dims": keep})
            return ins, [y]
        self.cases.append(build)


REDUCTIONS = {"MEAN": ("int8", "int16", "float32"), "SUM": ("int8", "int16", "float32"),
              "REDUCE_MAX": ("int8", "float32"), "REDUCE_MIN": ("int8", "float32")}


@pytest.mark.parametrize("op", sorted(REDUCTIONS))
def test_reduction_matches_tflite_micro(op: str, tmp_path: Path) -> None:
    cases = Cases()
    for k, dtype in enumerate(REDUCTIONS[op]):
        for i in range(N_CASES + len(REDUCE_PATTERNS)):
            cases.reduce(op, dtype, 100 * k + i)
    cases.check(tmp_path)


def _arg_case(cases: Cases, op: str, dtype: str, out_dtype: str, seed: int) -> None:
    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        rng = np.random.default_rng(seed)
        shape = random_shape(rng)
        axis = int(rng.integers(-len(shape), len(shape)))
        q = quant_params(rng, -3.0, 3.0) if dtype != "float32" else None
        data = values(rng, shape, dtype)
        if seed % 3 == 0:  # ties: the first index wins
            data = (data // 64).astype(dtype) if dtype != "float32" else np.round(data).astype(np.float32)
        tag = f"{op.lower()}_{dtype}_{out_dtype}_{seed}"
        ins: list[int] = []
        x = cases.input(m, f"{tag}_x", data, ins, q)
        ax = m.add_tensor(f"{tag}_axis", (1,), "int32", data=np.array([axis]))
        a = axis + len(shape) if axis < 0 else axis
        y = m.add_tensor(f"{tag}_y", reduced_shape(shape, (a,), False), out_dtype)
        m.add_operator(op, [x, ax], [y], {"output_type": out_dtype.upper()})
        return ins, [y]
    cases.cases.append(build)


@pytest.mark.parametrize("op", ["ARG_MAX", "ARG_MIN"])
def test_arg_min_max_matches_tflite_micro(op: str, tmp_path: Path) -> None:
    cases = Cases()
    for k, dtype in enumerate(("int8", "float32")):  # TFLite Micro writes int32 indices only
        for i in range(N_CASES):
            _arg_case(cases, op, dtype, "int32", 100 * k + i)
    cases.check(tmp_path)


def _l2_case(cases: Cases, dtype: str, seed: int) -> None:
    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        rng = np.random.default_rng(seed)
        shape = random_shape(rng, max_rank=4, max_dim=8)
        if seed % 4 == 3:  # long rows: sums of squares past 2**29
            shape = (2, int(rng.integers(9000, 12000)))
        qx = quant_params(rng, -3.0, 3.0) if dtype == "int8" else None
        data = values(rng, shape, dtype)
        if seed % 5 == 0 and qx:  # a row of zeros and one of a single step
            flat = data.reshape(-1, shape[-1])
            flat[0] = qx[1]
            if flat.shape[0] > 1:
                flat[1] = qx[1]
                flat[1, 0] = qx[1] + (1 if qx[1] < 127 else -1)
        tag = f"l2_{dtype}_{seed}"
        ins: list[int] = []
        x = cases.input(m, f"{tag}_x", data, ins, qx)
        y = m.add_tensor(f"{tag}_y", shape, dtype, **qargs((1 / 128, 0) if qx else None))
        m.add_operator("L2_NORMALIZATION", [x], [y])
        return ins, [y]
    cases.cases.append(build)


def test_l2_normalization_matches_tflite_micro(tmp_path: Path) -> None:
    cases = Cases()
    for k, dtype in enumerate(("int8", "float32")):
        for i in range(N_CASES):
            _l2_case(cases, dtype, 100 * k + i)
    cases.check(tmp_path)


def test_inverse_square_root_is_tflite_micros(tmp_path: Path) -> None:
    """The numpy model of the int8 kernel's arithmetic against TFLite Micro over the whole range
    of sums of squares (rows of one repeated value, up to 2**31 - 1)."""
    from utvm.ops.l2norm import np_l2norm_int8
    from utvm.run.reference import run_reference

    pytest.importorskip("tflite_micro")
    rng = np.random.default_rng(3)
    depth = 40000
    m = ModelBuilder()
    x = m.add_tensor("x", (64, depth), "int8", scale=0.05, zero_point=-128)
    y = m.add_tensor("y", (64, depth), "int8", scale=1 / 128, zero_point=0)
    m.add_operator("L2_NORMALIZATION", [x], [y])
    path = tmp_path / "l2.tflite"
    data = np.full((64, depth), -128, np.int8)
    for r in range(64):
        n = int(rng.integers(1, depth + 1)) if r else depth
        data[r, :n] = rng.integers(-128, 128, n)
    path.write_bytes(m.finish([x], [y]))
    ref = run_reference(path, [data], 1)
    assert ref is not None
    np.testing.assert_array_equal(ref[0][0], np_l2norm_int8(data, -128))


def _log_softmax_case(cases: Cases, dtype: str, seed: int) -> None:
    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        rng = np.random.default_rng(seed)
        shape = random_shape(rng, max_rank=4, max_dim=9)
        if seed % 5 == 4:
            shape = (2, int(rng.integers(200, 600)))
        qx = None
        if dtype == "int8":  # scales from 1/1000 to 1, any zero point
            qx = (float(np.exp(rng.uniform(np.log(1e-3), 0.0))), int(rng.integers(-128, 128)))
        data = values(rng, shape, dtype)
        if seed % 4 == 1:  # rows of equal and of nearly equal values
            data.reshape(-1, shape[-1])[0] = data.reshape(-1)[0]
        tag = f"log_softmax_{dtype}_{seed}"
        ins: list[int] = []
        x = cases.input(m, f"{tag}_x", data, ins, qx)
        y = m.add_tensor(f"{tag}_y", shape, dtype, **qargs((16 / 256, 127) if qx else None))
        m.add_operator("LOG_SOFTMAX", [x], [y])
        return ins, [y]
    cases.cases.append(build)


def test_log_softmax_matches_tflite_micro(tmp_path: Path) -> None:
    cases = Cases()
    for k, dtype in enumerate(("int8", "float32")):
        for i in range(N_CASES):
            _log_softmax_case(cases, dtype, 100 * k + i)
    cases.check(tmp_path)


def _softmax16_case(cases: Cases, seed: int) -> None:
    def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
        rng = np.random.default_rng(seed)
        shape = random_shape(rng, max_rank=4, max_dim=9)
        if seed % 5 == 4:
            shape = (2, int(rng.integers(200, 1200)))
        scale = float(np.exp(rng.uniform(np.log(1e-5), np.log(1e-2))))
        beta = float(rng.choice([1.0, 0.5, 2.0, 0.1]))
        data = values(rng, shape, "int16")
        if seed % 4 == 1:  # a row of nearly equal values
            data.reshape(-1, shape[-1])[0] = rng.integers(32000, 32768, shape[-1])
        tag = f"softmax_int16_{seed}"
        ins: list[int] = []
        x = cases.input(m, f"{tag}_x", data, ins, (scale, 0))
        y = m.add_tensor(f"{tag}_y", shape, "int16", scale=1 / 32768, zero_point=0)
        m.add_operator("SOFTMAX", [x], [y], {"beta": beta})
        return ins, [y]
    cases.cases.append(build)


def test_int16_softmax_matches_tflite_micro(tmp_path: Path) -> None:
    cases = Cases()
    for i in range(N_CASES + 5):
        _softmax16_case(cases, i)
    cases.check(tmp_path)


def test_int16_softmax_tables_follow_exp_and_reciprocal() -> None:
    """The tables against a plain float64 construction: equal but for the rare entries where
    float32 rounding moves a value across .5 (the kernel test above checks TFLite Micro's)."""
    from utvm.ops.softmax import softmax_int16_luts

    exp_lut, recip_lut = softmax_int16_luts()
    grid = np.linspace(-10.0, 0.0, 513)
    assert exp_lut[-1] == 32767 and recip_lut[0] == 32767 and recip_lut[-1] == 16384
    assert np.abs(exp_lut.astype(int) - np.round(np.exp(grid) * 32768).clip(max=32767)).max() <= 2
    grid = np.linspace(0.0, 1.0, 513)
    assert np.abs(recip_lut.astype(int) - np.round(32768 / (1 + grid)).clip(max=32767)).max() <= 2


# ---------------------------------------------------------------------------------------------
# ONNX (float32), compared with onnxruntime

ONNX_REDUCTIONS = ["ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin"]


class OnnxCases(op_check.OnnxCases):
    """This family's ONNX cases."""

    def __init__(self, opset: int = 17) -> None:
        super().__init__()
        self.opset = opset

    def source(self, tag: str, shape: tuple[int, ...], rng: np.random.Generator, conv: bool) -> str:
        """A model input, or (``conv``, 4-D) a 1x1 convolution of one, which utvm holds channels-last."""
        x = self.operand(f"{tag}_x", values(rng, shape, "float32"))
        if not conv:
            return x
        w = self.operand(f"{tag}_w", rng.normal(0, 0.5, (shape[1], shape[1], 1, 1)).astype(np.float32), constant=True)
        self.nodes.append(helper.make_node("Conv", [x, w], [f"{tag}_conv"]))
        return f"{tag}_conv"

    def reduction(self, op: str, seed: int) -> None:
        rng = np.random.default_rng(seed)
        tag = f"{op.lower()}{seed}"
        conv = seed % 4 == 0
        shape = random_shape(rng, 4, 4) if conv else random_shape(rng)
        x = self.source(tag, shape, rng, conv)
        axes: list[int] | None = random_axes(rng, len(shape), 4) if seed % 5 else None  # None: all axes
        keep = bool(rng.random() < 0.6)
        attrs: dict[str, object] = {"keepdims": int(keep)}
        inputs = [x]
        if axes is not None:
            axes = sorted(set(axes), key=lambda a: a % len(shape))  # ONNX refuses repeated axes
            if self.opset >= 18 or op == "ReduceSum":
                inputs.append(self.operand(f"{tag}_axes", np.array(axes, np.int64), constant=True))
            else:
                attrs["axes"] = axes
        resolved = normalize_axes(axes if axes is not None else range(len(shape)), len(shape))
        assert resolved is not None
        y = self.output(f"{tag}_y", reduced_shape(shape, resolved, keep))
        self.nodes.append(helper.make_node(op, inputs, [y], **attrs))

    def arg(self, op: str, seed: int) -> None:
        rng = np.random.default_rng(seed)
        tag = f"{op.lower()}{seed}"
        shape = random_shape(rng)
        data = values(rng, shape, "float32")
        if seed % 3 == 0:
            data = np.round(data)  # ties
        x = self.operand(f"{tag}_x", data)
        axis = int(rng.integers(-len(shape), len(shape)))
        keep, last = bool(rng.random() < 0.5), int(rng.random() < 0.4)
        a = axis % len(shape)
        y = self.output(f"{tag}_y", reduced_shape(shape, (a,), keep), TensorProto.INT64)
        self.nodes.append(helper.make_node(op, [x], [y], axis=axis, keepdims=int(keep), select_last_index=last))

    def unary(self, op: str, seed: int, **attrs: object) -> None:
        """An operator whose output has its input's shape (or GlobalMaxPool's)."""
        rng = np.random.default_rng(seed)
        tag = f"{op.lower()}{seed}"
        four_d = op == "GlobalMaxPool"
        conv = four_d and seed % 2 == 0
        shape = random_shape(rng, 4, 4) if four_d else random_shape(rng)
        x = self.source(tag, shape, rng, conv)
        out_shape = shape[:2] + (1, 1) if four_d else shape
        self.nodes.append(helper.make_node(op, [x], [self.output(f"{tag}_y", out_shape)], **attrs))


def _batch_norm(cases: OnnxCases, seed: int) -> None:
    rng = np.random.default_rng(seed)
    tag = f"bn{seed}"
    conv = seed % 2 == 0
    shape = random_shape(rng, 4, 4) if conv or seed % 3 else random_shape(rng, 2, 5)
    x = cases.source(tag, shape, rng, conv)
    c = shape[1]
    params = [rng.uniform(0.5, 2.0, c), rng.normal(0, 1, c), rng.normal(0, 1, c), rng.uniform(0.1, 3.0, c)]
    names = [cases.operand(f"{tag}_{k}", p.astype(np.float32), constant=True) for k, p in enumerate(params)]
    y = cases.output(f"{tag}_y", shape)
    if conv and seed % 4 == 2:  # the convolution's output is also the model's: not folded into it
        cases.output(x, shape)
    if seed % 4 == 1:  # a Relu after it: its fused activation
        cases.nodes.append(helper.make_node("BatchNormalization", [x, *names], [f"{tag}_bn"], epsilon=1e-3))
        cases.nodes.append(helper.make_node("Relu", [f"{tag}_bn"], [y]))
    else:
        cases.nodes.append(helper.make_node("BatchNormalization", [x, *names], [y]))


@pytest.mark.parametrize("opset", [13, 18])
def test_onnx_reductions_match_onnxruntime(tmp_path: Path, opset: int) -> None:
    cases = OnnxCases(opset)
    for op in ONNX_REDUCTIONS:
        for i in range(N_CASES):
            cases.reduction(op, i)
    report = check_model(cases.save(tmp_path / f"reduce{opset}.onnx", opset), tmp_path, inputs=cases.data)
    assert report.reference == "onnxruntime"


def test_onnx_arg_min_max_match_onnxruntime(tmp_path: Path) -> None:
    cases = OnnxCases()
    for op in ("ArgMax", "ArgMin"):
        for i in range(N_CASES):
            cases.arg(op, i)
    check_model(cases.save(tmp_path / "arg.onnx"), tmp_path, inputs=cases.data)


def test_onnx_normalizations_match_onnxruntime(tmp_path: Path) -> None:
    cases = OnnxCases()
    for i in range(N_CASES):
        cases.unary("GlobalMaxPool", i)
        cases.unary("LpNormalization", 100 + i, axis=-1, p=2)
        cases.unary("LogSoftmax", 200 + i, axis=-1)
        _batch_norm(cases, 300 + i)
    check_model(cases.save(tmp_path / "norm.onnx"), tmp_path, inputs=cases.data)


# ---------------------------------------------------------------------------------------------
# the shared models these operators complete

#: the whole corpus models run in test_shared_models.py


@pytest.mark.parametrize("name", ["squeeze_excite_int8", "squeeze_excite_int16x8", "squeeze_excite_float32"])
def test_mean_of_squeeze_excite(models_dir: Path, tmp_path: Path, name: str) -> None:
    """squeeze-excite's MEAN alone, with its shapes and quantization (the model also needs LOGISTIC)."""
    from model_parts import extract_ops

    cases = extract_ops(models_dir / "corpus" / f"{name}.tflite", {"MEAN"})
    assert len(cases.cases) == 1
    cases.check(tmp_path)


def _mixed() -> Cases:
    """A few configurations of every TFLite operator and type of this family, in one model."""
    cases = Cases()
    for op, dtypes in REDUCTIONS.items():
        for k, dtype in enumerate(dtypes):
            for i in (0, 2, 6, 7):
                cases.reduce(op, dtype, 100 * k + i)
    for k, dtype in enumerate(("int8", "float32")):
        for i in range(3):
            for op in ("ARG_MAX", "ARG_MIN"):
                _arg_case(cases, op, dtype, "int32", 100 * k + i)
            _l2_case(cases, dtype, 100 * k + i)
            _log_softmax_case(cases, dtype, 100 * k + i)
    for i in range(3):
        _softmax16_case(cases, i)
    return cases


@op_check.on_boards
def test_operators_on_board(tmp_path: Path, board: str) -> None:
    """Every operator and type on the emulated Cortex-M4 and M55, its C warning-free for
    arm-none-eabi-gcc -Wall -Wextra -Werror."""
    _mixed().check(tmp_path, board)
    op_check.assert_kernels_warning_free(tmp_path, board)


# ---------------------------------------------------------------------------------------------
# what is refused, with one line naming the problem


def _refused_model(op: str, x: tuple[Sequence[int], str, tuple[float, int] | None],
                   y: tuple[Sequence[int], str, tuple[float, int] | None], axes: Sequence[int] | None = None,
                   options: dict[str, object] | None = None) -> bytes:
    m = ModelBuilder()
    xi = m.add_tensor("x", x[0], x[1], **qargs(x[2]))
    ins = [xi]
    if axes is not None:
        ins.append(m.add_tensor("axes", (len(axes),), "int32", data=np.array(axes, np.int32)))
    yi = m.add_tensor("y", y[0], y[1], **qargs(y[2]))
    m.add_operator(op, ins, [yi], options)
    return m.finish([xi], [yi])


REFUSED = {
    "max quantization": (_refused_model("REDUCE_MAX", ((2, 3), "int8", (0.1, 0)), ((2,), "int8", (0.2, 0)), [1]),
                         "needs the same quantization in and out"),
    "int16 max": (_refused_model("REDUCE_MAX", ((2, 3), "int16", (0.1, 0)), ((2,), "int16", (0.1, 0)), [1]),
                  "unsupported data types int16"),
    "axis": (_refused_model("MEAN", ((2, 3), "float32", None), ((2,), "float32", None), [2]), "out of range"),
    "shape": (_refused_model("SUM", ((2, 3), "float32", None), ((3,), "float32", None), [1]), "gives [2]"),
    "l2 scale": (_refused_model("L2_NORMALIZATION", ((2, 3), "int8", (0.1, 0)), ((2, 3), "int8", (0.1, 0))),
                 "scale 0.0078125 and zero point 0"),
    "log_softmax zero point": (_refused_model("LOG_SOFTMAX", ((2, 3), "int8", (0.1, 0)), ((2, 3), "int8", (0.0625, 0))),
                               "zero point 127"),
    "int16 softmax zero point": (_refused_model("SOFTMAX", ((2, 3), "int16", (0.001, 5)),
                                                ((2, 3), "int16", (1 / 32768, 0)), options={"beta": 1.0}),
                                 "input must have zero point 0"),
    "two arg axes": (_refused_model("ARG_MAX", ((2, 3), "int8", (0.1, 0)), ((2,), "int32", None), [0, 1]),
                     "is not one axis"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_with_one_clear_line(case: str, tmp_path: Path) -> None:
    op_check.assert_refused(*REFUSED[case], tmp_path)
