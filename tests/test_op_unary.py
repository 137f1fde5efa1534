"""Elementwise operators of one operand: LOGISTIC, TANH, HARD_SWISH, LEAKY_RELU, ELU, RELU/RELU6
(int16), ABS, the float32 functions (EXP, LOG, SQRT, RSQRT, SQUARE, SIN, COS, NEG, FLOOR, CEIL,
ROUND), CAST, QUANTIZE and DEQUANTIZE, and their ONNX counterparts.

Every operator is checked with 20+ seeded configurations per element type (random shapes up to
5-D, quantization parameters, the types' extremes, every int8 value), side by side in one model,
against TFLite Micro: identical integers, float32 within 1e-5. The shared models these operators
unlock run on the host and (int8/int16) on the emulated boards; the SEANet LEAKY_RELU and
QUANTIZE layers are compared with their golden outputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

import op_check
from model_parts import one_op_model
from op_check import check_model, quant_params
from seanet import check_layer, layers
from tflite_builder import ModelBuilder
from toolchains import toolchain_problem

N_CASES = 20
BOARDS = ["mps2/an386", "mps3/an547"]
needs_qemu = pytest.mark.skipif(toolchain_problem() is not None, reason="bare-metal toolchain missing")


@dataclass(frozen=True)
class Spec:
    op: str
    dtypes: tuple[str, ...]
    #: range of the float32 inputs (and of the real values the int8/int16 inputs cover)
    in_range: tuple[float, float] = (-4.0, 4.0)
    #: range of the outputs, for random output quantization
    out_range: tuple[float, float] = (-4.0, 4.0)
    #: fixed output (scale, zero point) per type
    fixed_out: dict[str, tuple[float, int]] = field(default_factory=dict)
    #: option fields and a function of the generator giving their values
    options: str = ""


SIGMOID_OUT = {"int8": (1 / 256, -128), "int16": (1 / 32768, 0)}
SPECS = [
    Spec("LOGISTIC", ("int8", "int16", "float32"), (-10.0, 10.0), fixed_out=SIGMOID_OUT),
    Spec("TANH", ("int8", "int16", "float32"), (-6.0, 6.0), fixed_out={"int8": (1 / 128, 0), "int16": (1 / 32768, 0)}),
    Spec("HARD_SWISH", ("int8", "float32"), (-6.0, 6.0), (-0.5, 6.0)),
    Spec("LEAKY_RELU", ("int8", "int16", "float32"), options="alpha"),
    Spec("ELU", ("int8", "float32"), (-5.0, 4.0), (-1.0, 4.0)),
    Spec("RELU", ("int8", "int16", "float32")),
    Spec("RELU6", ("int8", "int16", "float32"), (-3.0, 8.0), (0.0, 6.0)),
    Spec("ABS", ("int8", "int16", "float32"), out_range=(0.0, 4.0)),
    Spec("EXP", ("float32",), (-8.0, 8.0)),
    Spec("LOG", ("float32",), (1e-3, 100.0)),
    Spec("SQRT", ("float32",), (0.0, 100.0)),
    Spec("RSQRT", ("int8", "float32"), (1e-3, 100.0), (0.0, 10.0)),
    Spec("SQUARE", ("float32",)),
    Spec("SIN", ("float32",), (-7.0, 7.0)),
    Spec("COS", ("float32",), (-7.0, 7.0)),
    Spec("NEG", ("float32",)),
    Spec("FLOOR", ("float32",)),
    Spec("CEIL", ("float32",)),
    Spec("ROUND", ("float32",)),
]


def random_shape(rng: np.random.Generator) -> tuple[int, ...]:
    return tuple(int(d) for d in rng.integers(1, 6, size=int(rng.integers(0, 6))))


def values(rng: np.random.Generator, shape: Sequence[int], dtype: str, lo: float = -4.0, hi: float = 4.0,
           every: bool = False) -> np.ndarray:
    """Random data: float32 in [lo, hi] (halves included, for the rounding functions, where lo <= 0); integers
    over their whole range with both extremes, or (``every``) each value of the type once."""
    if dtype == "float32":
        data = rng.uniform(lo, hi, size=shape).astype(np.float32)
        if lo <= 0.0:  # (not where 0 is out of the domain)
            flat = data.reshape(-1)
            flat[: flat.size // 4] = np.round(flat[: flat.size // 4] * 2) / 2
        return data
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    info = np.iinfo(dtype)
    if every:
        return rng.permutation(np.arange(info.min, info.max + 1)).astype(dtype).reshape(shape)
    data = rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)
    flat = data.reshape(-1)
    flat[:1] = info.min
    flat[-1:] = info.max
    return data


def _q(quant: tuple[float, int] | None) -> dict[str, object]:
    return {"scale": quant[0], "zero_point": quant[1]} if quant else {}


class Cases(op_check.Cases):
    """The unary operators' cases."""

    def one(self, m: ModelBuilder, tag: str, op: str, data: np.ndarray, out_dtype: str,
            qx: tuple[float, int] | None, qy: tuple[float, int] | None,
            options: dict[str, object] | None = None) -> tuple[list[int], list[int]]:
        x = m.add_tensor(f"{tag}_x", data.shape, str(data.dtype), **_q(qx))
        y = m.add_tensor(f"{tag}_y", data.shape, out_dtype, **_q(qy))
        m.add_operator(op, [x], [y], options)
        self.inputs.append(data)
        return [x], [y]

    def add(self, spec: Spec, dtype: str, seed: int) -> None:
        def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
            rng = np.random.default_rng(seed)
            every = (dtype == "int8" and seed % 2 == 0) or (dtype == "int16" and seed % 4 == 0)
            shape = {"int8": (4, 64), "int16": (256, 256)}[dtype] if every else random_shape(rng)
            lo, hi = spec.in_range
            qx = qy = None
            if dtype != "float32":
                qx = quant_params(rng, lo, hi, dtype)
                qy = spec.fixed_out.get(dtype) or quant_params(rng, *spec.out_range, dtype)
                if spec.op == "ABS" and seed % 5 == 0:
                    qy = qx  # equal scales: no rescaling
                if spec.op == "HARD_SWISH" and seed % 4 == 2:  # fine inputs: the reluish factor shifts right
                    qx = quant_params(rng, -0.5, 0.5, dtype)
                if spec.op == "HARD_SWISH" and seed % 4 == 3:  # output scale over 2**8 times the input's
                    qy = (qx[0] * float(10 ** rng.uniform(2.5, 3.5)), qy[1])
                if spec.op in ("LOGISTIC", "TANH") and dtype == "int16" and seed % 5 == 1:
                    qx = (2.0 ** -(10 + seed // 5 % 3), 0)  # powers of two: 2**-12, 2**-11 multiply by 3 << k
            options = {"alpha": float(rng.choice([0.01, 0.1, 0.2, 0.3, 0.5]))} if spec.options == "alpha" else None
            data = values(rng, shape, dtype, lo, hi, every)
            if qx is not None and lo >= 0.0:  # the operator's domain: at or above the zero point
                data = np.maximum(data, qx[1]).astype(dtype)
            return self.one(m, f"{spec.op.lower()}_{dtype}_{seed}", spec.op, data, dtype, qx, qy, options)
        self.cases.append(build)


@pytest.mark.parametrize("spec", SPECS, ids=[s.op for s in SPECS])
def test_unary_operator_matches_tflite_micro(spec: Spec, tmp_path: Path) -> None:
    cases = Cases()
    for dtype, seed in op_check.seeds(spec.dtypes, N_CASES):
        cases.add(spec, dtype, seed)
    cases.check(tmp_path)


@pytest.mark.slow
@needs_qemu
@pytest.mark.parametrize("board", BOARDS)
def test_quantized_unary_operators_on_board(tmp_path: Path, board: str) -> None:
    """A few int8 and int16 configurations of every operator on the emulated Cortex-M4 and M55,
    and their C warning-free for arm-none-eabi-gcc -Wall -Wextra -Werror."""
    cases = Cases()
    for spec in SPECS:
        for dtype, seed in op_check.seeds([t for t in spec.dtypes if t != "float32"], 3):
            cases.add(spec, dtype, seed + 1)  # odd seeds: random shapes, not every value
    cases.check(tmp_path, board)
    op_check.assert_kernels_warning_free(tmp_path, board)


def test_chain_computes_in_place(tmp_path: Path) -> None:
    """A chain of unary operators after a layer takes one buffer: each writes over its input."""
    from utvm.compiler import CompileOptions, compile_model

    m = ModelBuilder()
    rng = np.random.default_rng(5)
    q = {"scale": 0.05, "zero_point": 3}
    x = m.add_tensor("x", [2, 3, 40], "int8", **q)
    chain = [("ADD", "sum", q), ("LEAKY_RELU", "leaky", {"scale": 0.04, "zero_point": -20}),
             ("TANH", "tanh", {"scale": 1 / 128, "zero_point": 0}), ("ABS", "abs", {"scale": 0.004, "zero_point": -128}),
             ("LOGISTIC", "sig", {"scale": 1 / 256, "zero_point": -128}), ("QUANTIZE", "y", q)]
    prev = x
    for op, name, quant in chain:
        t = m.add_tensor(name, [2, 3, 40], "int8", **quant)
        m.add_operator(op, [prev, prev] if op == "ADD" else [prev], [t],
                       {"alpha": 0.2} if op == "LEAKY_RELU" else None)
        prev = t
    (tmp_path / "chain.tflite").write_bytes(m.finish([x], [prev]))
    check_model(tmp_path / "chain.tflite", tmp_path, inputs=[values(rng, (2, 3, 40), "int8")])
    plan = compile_model(tmp_path / "chain.tflite", tmp_path / "mlf", CompileOptions()).plan
    assert plan.check() == []
    how = {t.name: t.how for t in plan.tenants}
    assert all(how.get(name) == "inplace" for name in ("leaky", "tanh", "abs", "sig")), how
    assert plan.pool_size <= 2 * 3 * 40 + 16  # one buffer: the sum, then each result over it


# ---------------------------------------------------------------------------------------------
# CAST, QUANTIZE, DEQUANTIZE

CAST_TYPES = ("int8", "int16", "int32", "float32", "bool")
QUANTIZE_PAIRS = [("float32", "int8"), ("float32", "int16"), ("int8", "int8"), ("int8", "int16"), ("int8", "int32"),
                  ("int16", "int8"), ("int16", "int16"), ("int16", "int32"), ("int32", "int8"), ("int32", "int16")]


def cast_values(rng: np.random.Generator, shape: Sequence[int], src: str, dst: str) -> np.ndarray:
    """Data of type ``src`` whose conversion to ``dst`` is defined in C (floats in range)."""
    if src == "float32":
        bound = {"int8": 127.0, "int16": 32767.0}.get(dst, 1e6)
        data = rng.uniform(-bound, bound, size=shape).astype(np.float32)
        data.reshape(-1)[:2] = (0.0, -0.75)[: data.size]
        return data
    return values(rng, shape, src)


def _quantization(rng: np.random.Generator, dtype: str, other: tuple[float, int] | None = None) -> tuple[float, int]:
    """Random parameters of a ``dtype`` tensor; int32 ones (zero point 0) 2**10 to 2**14 times
    finer than ``other``, as a SEANet int32 accumulator is to its int16 values."""
    if dtype == "int32":
        assert other is not None
        return other[0] / float(2.0 ** rng.uniform(10, 14)), 0
    return quant_params(rng, -3.0, 3.0, dtype)


class ConversionCases(Cases):
    def add_cast(self, src: str, dst: str, seed: int) -> None:
        def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
            rng = np.random.default_rng(seed)
            data = cast_values(rng, random_shape(rng), src, dst)
            return self.one(m, f"cast_{src}_{dst}_{seed}", "CAST", data, dst, None, None)
        self.cases.append(build)

    def add_quantize(self, src: str, dst: str, seed: int) -> None:
        def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
            rng = np.random.default_rng(seed)
            shape = random_shape(rng)
            if src == "int32":  # an accumulator: requantized to a coarser scale
                qy = _quantization(rng, dst)
                qx = (qy[0] / float(2.0 ** rng.uniform(10, 14)), 0)
                data = rng.integers(-(1 << 26), 1 << 26, size=shape).astype(np.int32)
            else:
                qx = None if src == "float32" else _quantization(rng, src)
                qy = _quantization(rng, dst, qx or (0.01, 0))
                data = values(rng, shape, src, -4.0, 4.0)
            return self.one(m, f"quantize_{src}_{dst}_{seed}", "QUANTIZE", data, dst, qx, qy)
        self.cases.append(build)

    def add_dequantize(self, src: str, seed: int) -> None:
        def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
            rng = np.random.default_rng(seed)
            data = values(rng, random_shape(rng), src)
            return self.one(m, f"dequantize_{src}_{seed}", "DEQUANTIZE", data, "float32",
                            quant_params(rng, -3.0, 3.0, src), None)
        self.cases.append(build)


def test_cast_matches_tflite_micro(tmp_path: Path) -> None:
    cases = ConversionCases()
    for a, src in enumerate(CAST_TYPES):
        for b, dst in enumerate(CAST_TYPES):
            for i in range(3 if src != dst else 1):
                cases.add_cast(src, dst, 100 * (5 * a + b) + i)
    cases.check(tmp_path)


def test_quantize_dequantize_match_tflite_micro(tmp_path: Path) -> None:
    cases = ConversionCases()
    for k, (src, dst) in enumerate(QUANTIZE_PAIRS):
        for i in range(N_CASES // 2 if src != dst else N_CASES):
            cases.add_quantize(src, dst, 100 * k + i)
    for k, src in enumerate(("int8", "int16")):
        for i in range(N_CASES):
            cases.add_dequantize(src, 5000 + 100 * k + i)
    cases.check(tmp_path)


# ---------------------------------------------------------------------------------------------
# ONNX (float32), compared with onnxruntime

#: operator -> (input range, attributes drawn per case)
ONNX_OPS: dict[str, tuple[tuple[float, float], dict[str, tuple[float, ...]]]] = {
    "Sigmoid": ((-12.0, 12.0), {}), "Tanh": ((-6.0, 6.0), {}),
    "LeakyRelu": ((-4.0, 4.0), {"alpha": (0.01, 0.1, 0.3)}), "HardSwish": ((-6.0, 6.0), {}),
    "HardSigmoid": ((-6.0, 6.0), {"alpha": (0.2, 0.1, 1 / 6), "beta": (0.5, 0.3)}),
    "Elu": ((-5.0, 4.0), {"alpha": (1.0, 0.5, 2.0)}), "Abs": ((-4.0, 4.0), {}), "Neg": ((-4.0, 4.0), {}),
    "Exp": ((-8.0, 8.0), {}), "Log": ((1e-3, 100.0), {}), "Sqrt": ((0.0, 100.0), {}),
    "Reciprocal": ((0.1, 10.0), {}), "Floor": ((-4.0, 4.0), {}), "Ceil": ((-4.0, 4.0), {}),
    "Round": ((-4.0, 4.0), {}), "Erf": ((-3.0, 3.0), {}), "Sin": ((-7.0, 7.0), {}), "Cos": ((-7.0, 7.0), {}),
    "Cast": ((-2.0, 2.0), {}),
    "Clip": ((-4.0, 4.0), {}),
}
#: (min, max) of the Clip cases, in turn ("" omits the input)
CLIP_BOUNDS = [(-1.0, 1.0), (-0.5, 2.5), ("", 1.5), (-2.0, ""), (0.0, 6.0), (0.25, 0.75)]


class OnnxCases(op_check.OnnxCases):
    def add(self, op: str, seed: int) -> None:
        rng = np.random.default_rng(seed)
        (lo, hi), choices = ONNX_OPS[op]
        shape = random_shape(rng) if seed % 4 else (1, 3, 4, 5)
        data = values(rng, shape, "float32", lo, hi)
        if op == "Reciprocal":
            data *= rng.choice([-1.0, 1.0], size=shape).astype(np.float32)
        tag = f"{op.lower()}{seed}"
        attrs = {k: float(rng.choice(v)) for k, v in choices.items()}
        if op == "Cast":  # float -> bool -> float, and float -> float
            data.reshape(-1)[: data.size // 2] = 0.0
            mid = f"{tag}_mid"
            self.nodes.append(helper.make_node("Cast", [self.operand(f"{tag}_x", data)], [mid], to=TensorProto.BOOL))
            self.nodes.append(helper.make_node("Cast", [mid], [self.output(f"{tag}_y", shape)], to=TensorProto.FLOAT))
            self.nodes.append(helper.make_node("Cast", [f"{tag}_x"], [self.output(f"{tag}_z", shape)],
                                               to=TensorProto.FLOAT))
            self.outputs.append(helper.make_tensor_value_info(mid, TensorProto.BOOL, list(shape)))
            return
        x = self.operand(f"{tag}_x", data)
        extra: list[str] = []
        if op == "Clip":
            for k, bound in zip(("min", "max"), CLIP_BOUNDS[seed % len(CLIP_BOUNDS)]):
                extra.append(bound if bound == "" else self.operand(f"{tag}_{k}", np.array(bound, np.float32), True))
        if seed % 4 == 0:  # after a convolution: computed in NHWC
            w = self.operand(f"{tag}_w", rng.normal(0, 0.5, (5, 3, 1, 1)).astype(np.float32), constant=True)
            conv = f"{tag}_conv"
            self.nodes.append(helper.make_node("Conv", [x, w], [conv]))
            x, shape = conv, (1, 5, 4, 5)
            if lo >= 0.0:  # the operator's domain
                self.nodes.append(helper.make_node("Abs", [conv], [f"{tag}_abs"]))
                x = f"{tag}_abs"
        self.nodes.append(helper.make_node(op, [x, *extra], [self.output(f"{tag}_y", shape)], **attrs))


@pytest.mark.parametrize("op", list(ONNX_OPS))
def test_onnx_operator_matches_onnxruntime(op: str, tmp_path: Path) -> None:
    cases = OnnxCases()
    for i in range(N_CASES):
        cases.add(op, i)
    cases.check(tmp_path, op)


# ---------------------------------------------------------------------------------------------
# the shared models that use these operators

#: the whole corpus models run in test_shared_models.py
SEANET_OPS = ("leaky_relu", "quantize")
#: SEANet layers whose golden outputs TFLite Micro (and so utvm) does not reproduce: their
#: generator computed LEAKY_RELU's multipliers in float32, the TFLite Micro we compare with
#: computes them in double; so many elements differ, by one step
GOLDEN_MISMATCHES = {"leaky_relu/leaky_relu3": 3, "leaky_relu/leaky_relu11": 1, "leaky_relu/leaky_relu18": 1,
                     "leaky_relu/leaky_relu19": 1}


def _dir(tmp_path: Path, name: str) -> Path:
    d = tmp_path / name.replace("/", "_")
    d.mkdir()
    return d


@pytest.mark.parametrize("op", SEANET_OPS)
def test_seanet_layers_match_golden_on_host(models_dir: Path, tmp_path: Path, op: str) -> None:
    names = layers(models_dir, op)
    assert len(names) >= 2, f"SEANet {op} layers missing from {models_dir}"
    for name in names:
        check_layer(models_dir, _dir(tmp_path, name), name, "host", GOLDEN_MISMATCHES.get(name, 0))


@pytest.mark.slow
@needs_qemu
@pytest.mark.parametrize("board", BOARDS)
def test_seanet_layers_match_golden_on_board(models_dir: Path, tmp_path: Path, board: str) -> None:
    for name in ["leaky_relu/leaky_relu0", "leaky_relu/leaky_relu3", "quantize/quantize0", "quantize/quantize1"]:
        check_layer(models_dir, _dir(tmp_path, name), name, board, GOLDEN_MISMATCHES.get(name, 0))


# ---------------------------------------------------------------------------------------------
# what is refused, with one line naming the problem

REFUSED = {
    "logistic output": (one_op_model("LOGISTIC", [((4,), "int8", (0.1, 0)), ((4,), "int8", (0.1, 0))]),
                        "must be (0.00390625, -128)"),
    "tanh int16 zero point": (one_op_model("TANH", [((4,), "int16", (0.001, 3)), ((4,), "int16", (2.0 ** -15, 0))]),
                              "zero point 3 (must be 0)"),
    "int8 NEG": (one_op_model("NEG", [((4,), "int8", (0.1, 0)), ((4,), "int8", (0.1, 0))]),
                 "unsupported data types int8 -> int8"),
    "float32 to int32": (one_op_model("QUANTIZE", [((4,), "float32", None), ((4,), "int32", (0.1, 0))]),
                         "QUANTIZE from float32 to int32 is not supported"),
    "hard swish scales": (one_op_model("HARD_SWISH", [((4,), "int8", (0.1, 0)), ((4,), "int8", (1e-4, 0))]),
                          "output scale is too small"),
    "cast to int64": (one_op_model("CAST", [((4,), "int8", None), ((4,), "int64", None)]),
                      "CAST from int8 to int64 is not supported"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_with_one_clear_line(case: str, tmp_path: Path) -> None:
    op_check.assert_refused(*REFUSED[case], tmp_path)
