"""Elementwise binary operators with NumPy/TFLite broadcasting: ADD, SUB, MUL, DIV, FLOOR_DIV,
FLOOR_MOD, SQUARED_DIFFERENCE, MAXIMUM, MINIMUM, PRELU, the comparisons, LOGICAL_AND/OR and
SELECT_V2, and their ONNX counterparts.

Every operator is checked with 20+ seeded configurations per element type (random shapes up to
5-D, broadcast patterns, constant operands, quantization parameters, fused activations), side by
side in one model, against TFLite Micro: identical integers, float32 within 1e-5. The shared
models that use these operators run on the host and (int8/int16) on the emulated boards; the
SEANet ADD/SUB layers are compared with their golden outputs.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

import op_check
from model_parts import OperandCases, extract_ops, one_op_model, values
from op_check import check_model, quant_params
from seanet import check_layer
from tflite_builder import ModelBuilder
from toolchains import toolchain_problem
from utvm.ops.elementwise import broadcast_shape, plan

N_CASES = 20

#: shapes every operator meets besides the random ones: (a, b)
PATTERNS = [
    ((1, 4, 4, 8), (1, 1, 1, 8)),   # per-channel vector (the example)
    ((1, 4, 4, 8), (8,)),
    ((), (2, 3)),                    # a scalar
    ((2, 1, 3, 1, 4), (1, 3, 5, 1)),  # 5-D, both operands repeated
    ((1, 5, 1), (3, 1, 6)),
    ((3, 7), (3, 7)),                # same shapes
    ((3, 4), ()),                    # a scalar, constant (an immediate)
    ((2, 5), (1, 1)),                # one element, constant
]
#: pattern indices whose second operand is a constant
CONSTANT_PATTERNS = (6, 7)


@dataclass(frozen=True)
class Spec:
    op: str
    dtypes: tuple[str, ...]
    activation: bool = False
    #: output range for the random quantization parameters
    out_range: tuple[float, float] = (-6.0, 6.0)
    #: element type of the output (comparisons: bool)
    out_dtype: str | None = None
    #: inputs drawn from a few values, so that equal operands occur (comparisons)
    few_values: bool = False


ARITH = ("int8", "int16", "float32", "int32")
COMPARE = ("int8", "float32", "int32")
SPECS = [
    Spec("ADD", ARITH, activation=True),
    Spec("SUB", ARITH, activation=True),
    Spec("MUL", ARITH, activation=True, out_range=(-9.0, 9.0)),
    Spec("DIV", ("float32",), activation=True),
    Spec("FLOOR_DIV", ("float32",), few_values=True),
    Spec("FLOOR_MOD", ("float32",), few_values=True),
    Spec("LOGICAL_AND", ("bool",), out_dtype="bool"),
    Spec("LOGICAL_OR", ("bool",), out_dtype="bool"),
    Spec("SQUARED_DIFFERENCE", ARITH, out_range=(0.0, 30.0)),
    Spec("MAXIMUM", ARITH),
    Spec("MINIMUM", ARITH),
    Spec("EQUAL", (*COMPARE, "bool"), out_dtype="bool", few_values=True),
    Spec("NOT_EQUAL", (*COMPARE, "bool"), out_dtype="bool", few_values=True),
    Spec("LESS", COMPARE, out_dtype="bool", few_values=True),
    Spec("LESS_EQUAL", COMPARE, out_dtype="bool", few_values=True),
    Spec("GREATER", COMPARE, out_dtype="bool", few_values=True),
    Spec("GREATER_EQUAL", COMPARE, out_dtype="bool", few_values=True),
]

DIVISIONS = ("DIV", "FLOOR_DIV", "FLOOR_MOD")
ACTIVATIONS = ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"]
BOARDS = ["mps2/an386", "mps3/an547"]
needs_qemu = pytest.mark.skipif(toolchain_problem() is not None, reason="bare-metal toolchain missing")


def operand_shape(rng: np.random.Generator, out: Sequence[int]) -> tuple[int, ...]:
    """A shape that broadcasts to ``out``: some dimensions 1, maybe fewer leading ones."""
    s = [d if rng.random() < 0.6 else 1 for d in out]
    drop = int(rng.integers(0, len(s) + 1)) if rng.random() < 0.4 else 0
    return tuple(s[drop:])


def shapes(rng: np.random.Generator, seed: int, n: int = 2, max_rank: int = 5) -> list[tuple[int, ...]]:
    """Operand shapes of case ``seed``: the fixed patterns first, then random ones."""
    if seed < len(PATTERNS) and n == 2 and max(len(s) for s in PATTERNS[seed]) <= max_rank:
        return [tuple(s) for s in PATTERNS[seed]]
    rank = int(rng.integers(0, max_rank + 1))
    out = [int(rng.integers(1, 6)) for _ in range(rank)]
    return [operand_shape(rng, out) for _ in range(n)]


class Cases(OperandCases):
    """The binary operators' cases."""

    def add(self, spec: Spec, dtype: str, seed: int) -> None:
        def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
            rng = np.random.default_rng(seed)
            a_shape, b_shape = shapes(rng, seed % 100)
            out_shape = np.broadcast_shapes(a_shape, b_shape)
            quant = dtype in ("int8", "int16")
            qa = quant_params(rng, -3.0, 3.0, dtype) if quant else None
            qb = quant_params(rng, -3.0, 3.0, dtype) if quant else None
            qy = quant_params(rng, *spec.out_range, dtype) if quant and spec.out_dtype is None else None
            if spec.op in ("MAXIMUM", "MINIMUM") and quant:
                qb = qy = qa  # the converter gives all three the same parameters
            const_b = rng.random() < 0.25 or seed % 100 in CONSTANT_PATTERNS
            ins: list[int] = []
            tag = f"{spec.op.lower()}_{dtype}_{seed}"
            a = self.tensor(m, f"{tag}_a", a_shape, dtype, rng, ins, quant=qa, few=spec.few_values)
            denominator = None
            if spec.op in DIVISIONS:  # away from 0; exact quotients among a few values
                sign = rng.choice([-1.0, 1.0], size=b_shape)
                magnitude = (rng.choice([0.5, 1.0, 1.5, 2.0], size=b_shape) if spec.few_values
                             else rng.uniform(0.5, 2.0, size=b_shape))
                denominator = np.asarray(sign * magnitude, np.float32)
            b = self.tensor(m, f"{tag}_b", b_shape, dtype, rng, ins, const_b, qb, spec.few_values, denominator)
            y = m.add_tensor(f"{tag}_y", out_shape, spec.out_dtype or dtype,
                             **({"scale": qy[0], "zero_point": qy[1]} if qy else {}))
            options = {"fused_activation_function": ACTIVATIONS[int(rng.integers(0, 4))]} if spec.activation else None
            first, second = (b, a) if rng.random() < 0.3 and spec.op not in DIVISIONS else (a, b)
            m.add_operator(spec.op, [first, second], [y], options)
            return ins, [y]
        self.cases.append(build)


    def add_prelu(self, dtype: str, seed: int) -> None:
        def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
            rng = np.random.default_rng(seed)
            x_shape = tuple(int(d) for d in np.broadcast_shapes(*shapes(rng, seed % 100, max_rank=4)))
            alpha_shape = operand_shape(rng, x_shape)
            alpha_dtype = "int8" if dtype == "int16" else dtype
            quant = dtype != "float32"
            ins: list[int] = []
            tag = f"prelu_{dtype}_{seed}"
            x = self.tensor(m, f"{tag}_x", x_shape, dtype, rng, ins, quant=quant_params(rng, -3.0, 3.0, dtype) if quant else None)
            alpha = self.tensor(m, f"{tag}_alpha", alpha_shape, alpha_dtype, rng, ins, constant=rng.random() < 0.7,
                                quant=quant_params(rng, -0.5, 1.0) if quant else None)
            qy = quant_params(rng, -2.0, 3.0, dtype) if quant else None
            y = m.add_tensor(f"{tag}_y", x_shape, dtype, **({"scale": qy[0], "zero_point": qy[1]} if qy else {}))
            m.add_operator("PRELU", [x, alpha], [y])
            return ins, [y]
        self.cases.append(build)

    def add_select(self, dtype: str, seed: int) -> None:
        def build(m: ModelBuilder) -> tuple[list[int], list[int]]:
            rng = np.random.default_rng(seed)
            c_shape, x_shape, y_shape = shapes(rng, seed, n=3)
            out_shape = np.broadcast_shapes(c_shape, x_shape, y_shape)
            q = quant_params(rng, -3.0, 3.0, dtype) if dtype != "float32" else None
            ins: list[int] = []
            tag = f"select_{dtype}_{seed}"
            cond = self.tensor(m, f"{tag}_cond", c_shape, "bool", rng, ins, constant=rng.random() < 0.2)
            x = self.tensor(m, f"{tag}_x", x_shape, dtype, rng, ins, quant=q)
            y = self.tensor(m, f"{tag}_y", y_shape, dtype, rng, ins, constant=rng.random() < 0.3, quant=q)
            out = m.add_tensor(f"{tag}_out", out_shape, dtype, **({"scale": q[0], "zero_point": q[1]} if q else {}))
            m.add_operator("SELECT_V2", [cond, x, y], [out])
            return ins, [out]
        self.cases.append(build)


@pytest.mark.parametrize("spec", SPECS, ids=[s.op for s in SPECS])
def test_binary_operator_matches_tflite_micro(spec: Spec, tmp_path: Path) -> None:
    cases = Cases()
    for dtype, seed in op_check.seeds(spec.dtypes, N_CASES):
        cases.add(spec, dtype, seed)
    cases.check(tmp_path)


def test_prelu_matches_tflite_micro(tmp_path: Path) -> None:
    cases = Cases()
    for k, dtype in enumerate(("int8", "int16", "float32")):
        for i in range(N_CASES):
            cases.add_prelu(dtype, 100 * k + i)
    cases.check(tmp_path)


def test_select_v2_matches_tflite_micro(tmp_path: Path) -> None:
    cases = Cases()
    for k, dtype in enumerate(("int8", "int16", "float32")):
        for i in range(N_CASES):
            cases.add_select(dtype, 100 * k + i)
    cases.check(tmp_path)


def _mixed() -> Cases:
    """A few configurations of every operator and type, in one model."""
    cases = Cases()
    for spec in SPECS:
        for k, dtype in enumerate(spec.dtypes):
            for i in range(3):
                cases.add(spec, dtype, 100 * k + i)
    for k, dtype in enumerate(("int8", "int16", "float32")):
        for i in range(3):
            cases.add_prelu(dtype, 100 * k + i)
            cases.add_select(dtype, 100 * k + i)
    return cases


@pytest.mark.slow
@needs_qemu
@pytest.mark.parametrize("board", BOARDS)
def test_binary_operators_on_board(tmp_path: Path, board: str) -> None:
    """Every operator and type on the emulated Cortex-M4 and M55, and its C warning-free for
    arm-none-eabi-gcc -Wall -Wextra -Werror."""
    cases = _mixed()
    cases.check(tmp_path, board)
    op_check.assert_kernels_warning_free(tmp_path, board)


# ---------------------------------------------------------------------------------------------
# ONNX (float32), compared with onnxruntime

ONNX_OPS = ["Add", "Sub", "Mul", "Div", "Max", "Min", "Pow", "PRelu", "Equal", "Less", "LessOrEqual", "Greater",
            "GreaterOrEqual", "Where", "And", "Or", "Xor"]
ONNX_COMPARISONS = {"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"}
ONNX_LOGICAL = {"And", "Or", "Xor"}


class OnnxCases(op_check.OnnxCases):
    """The binary operators' ONNX cases."""

    def add(self, op: str, seed: int) -> None:
        rng = np.random.default_rng(seed)
        tag = f"{op.lower()}{seed}"
        n = 3 if op == "Where" else 2
        shp = shapes(rng, seed % 100, n=n, max_rank=5 if op != "PRelu" else 4)
        if op == "PRelu":  # the slope broadcasts to the input
            shp[0] = tuple(int(d) for d in np.broadcast_shapes(*shp))
            shp[1] = operand_shape(rng, shp[0])
        out_shape = tuple(int(d) for d in np.broadcast_shapes(*shp))
        few = op in ONNX_COMPARISONS
        data = [values(rng, s, "float32", few) for s in shp]
        if op == "Div":
            data[1] = (rng.uniform(0.5, 2.0, shp[1]) * rng.choice([-1.0, 1.0], shp[1])).astype(np.float32)
        if op == "Pow":
            data[0] = rng.uniform(0.1, 2.0, shp[0]).astype(np.float32)
            if seed % 4 == 1:
                shp[1], data[1] = (), np.array(2.0, np.float32)
        if op == "Where":
            data[0] = values(rng, shp[0], "bool")
        if op in ONNX_LOGICAL:
            data = [values(rng, sh, "bool") for sh in shp]
        constant = [k == n - 1 and rng.random() < 0.3 for k in range(n)]  # the last operand
        if op == "Pow" and data[1].ndim == 0:
            constant[1] = True
        names = [self.operand(f"{tag}_{k}", d, c) for k, (d, c) in enumerate(zip(data, constant))]
        if op == "Where" and seed % 3 == 0:  # a condition computed by a comparison
            names[0] = f"{tag}_cmp"
            self.nodes.append(helper.make_node("Less", [names[1], names[2]], [names[0]]))
            out_shape = tuple(int(d) for d in np.broadcast_shapes(shp[1], shp[2]))
        elem = TensorProto.BOOL if op in ONNX_COMPARISONS | ONNX_LOGICAL else TensorProto.FLOAT
        self.nodes.append(helper.make_node(op, names, [self.output(f"{tag}_y", out_shape, elem)]))


@pytest.mark.parametrize("op", ONNX_OPS)
def test_onnx_operator_matches_onnxruntime(op: str, tmp_path: Path) -> None:
    cases = OnnxCases()
    for i in range(N_CASES):
        cases.add(op, i)
    cases.check(tmp_path, op)


def _conv(cases: OnnxCases, x: str, y: str, cin: int, cout: int, rng: np.random.Generator) -> str:
    w = cases.operand(f"{y}_w", rng.normal(0, 0.3, (cout, cin, 3, 3)).astype(np.float32), constant=True)
    cases.nodes.append(helper.make_node("Conv", [x, w], [y], pads=[1, 1, 1, 1]))
    return y


def test_onnx_broadcasting_across_layouts(tmp_path: Path) -> None:
    """Values that convolutions keep in NHWC combined with constants and with variables held in
    ONNX's layout, of rank 4 and lower, including a lower-rank one that cannot be viewed in NHWC."""
    rng = np.random.default_rng(7)
    c = OnnxCases()
    x = c.operand("x", values(rng, (1, 3, 5, 6), "float32"), constant=False)
    plain4 = c.operand("p4", values(rng, (1, 4, 5, 6), "float32"), constant=False)
    row = c.operand("row", values(rng, (6,), "float32"), constant=False)        # viewed as NHWC
    chw = c.operand("chw", values(rng, (4, 1, 6), "float32"), constant=False)   # not: ONNX layout
    bias = c.operand("bias", values(rng, (4, 1, 1), "float32"), constant=True)
    grid = c.operand("grid", values(rng, (5, 1), "float32"), constant=True)
    slope = c.operand("slope", values(rng, (4, 1, 1), "float32"), constant=True)
    a = _conv(c, x, "ca", 3, 4, rng)
    b = _conv(c, x, "cb", 3, 4, rng)
    nodes = [
        ("Mul", [a, bias], "m1"), ("Sub", [grid, "m1"], "s1"), ("Add", ["s1", b], "a1"), ("Div", ["a1", "two"], "d1"),
        ("Max", ["d1", plain4], "mx"), ("Min", [row, "mx"], "mn"), ("Mul", ["mn", chw], "m2"),
        ("PRelu", ["m2", slope], "pr"), ("Greater", ["pr", b], "gt"), ("Where", ["gt", "pr", row], "w"),
    ]
    c.operand("two", np.array([2.0], np.float32), constant=True)
    for op, ins, out in nodes:
        c.nodes.append(helper.make_node(op, ins, [out]))
    _conv(c, "w", "y", 4, 2, rng)
    c.output("y", (1, 2, 5, 6))
    c.output("gt", (1, 4, 5, 6), TensorProto.BOOL)
    c.output("a1", (1, 4, 5, 6))
    check_model(c.save(tmp_path / "layouts.onnx"), tmp_path, inputs=c.data)


# ---------------------------------------------------------------------------------------------
# the shared models that use these operators

#: the whole corpus and TFLite Micro models run in test_shared_models.py
SEANET = [f"add/add{i}" for i in range(17)] + [f"sub/sub{i}" for i in range(5)]


#: corpus models that also need operators of other families: their binary operators are checked
#: alone, each with its own shapes, quantization, constants and fused activation
PARTLY = ["squeeze_excite_int8", "squeeze_excite_int16x8", "squeeze_excite_float32", "resize_int8", "resize_float32"]


@pytest.mark.parametrize("name", PARTLY)
def test_binary_operators_of_other_corpus_models(models_dir: Path, tmp_path: Path, name: str) -> None:
    cases = extract_ops(models_dir / "corpus" / f"{name}.tflite", {s.op for s in SPECS} | {"PRELU", "SELECT_V2"})
    assert cases.cases, f"{name} has no binary operator"
    cases.check(tmp_path)


@pytest.mark.parametrize("name", SEANET)
def test_seanet_layer_on_host(models_dir: Path, tmp_path: Path, name: str) -> None:
    check_layer(models_dir, tmp_path, name, "host")


@pytest.mark.slow
@needs_qemu
@pytest.mark.parametrize("board", BOARDS)
@pytest.mark.parametrize("name", SEANET)
def test_seanet_layer_on_board(models_dir: Path, tmp_path: Path, name: str, board: str) -> None:
    check_layer(models_dir, tmp_path, name, board)


# ---------------------------------------------------------------------------------------------
# what is refused, with one line naming the problem


REFUSED = {
    "shapes": (one_op_model("ADD", [((2, 3), "float32", None), ((3, 2), "float32", None), ((3, 3), "float32", None)]),
               "do not broadcast"),
    "int16 zero point": (one_op_model("SUB", [((4,), "int16", (0.01, 3)), ((4,), "int16", (0.01, 0)),
                                          ((4,), "int16", (0.02, 0))]), "zero point 3 (must be 0)"),
    "output scale": (one_op_model("ADD", [((4,), "int8", (1.0, 0)), ((4,), "int8", (1.0, 0)),
                                      ((4,), "int8", (1e-9, 0))]), "output scale"),
    "int16 comparison": (one_op_model("LESS", [((4,), "int16", (0.01, 0)), ((4,), "int16", (0.01, 0)),
                                           ((4,), "bool", None)]), "unsupported data types int16, int16 -> bool"),
    "condition": (one_op_model("SELECT_V2", [((4,), "int8", (0.1, 0)), ((4,), "int8", (0.1, 0)),
                                         ((4,), "int8", (0.1, 0)), ((4,), "int8", (0.1, 0))]), "condition must be bool"),
    "int8 division": (one_op_model("DIV", [((4,), "int8", (0.1, 0)), ((4,), "int8", (0.1, 0)), ((4,), "int8", (0.1, 0))]),
                      "unsupported data types int8, int8 -> int8"),
    "5-D float PRELU": (one_op_model("PRELU", [((1, 2, 2, 2, 2), "float32", None), ((2,), "float32", None),
                                           ((1, 2, 2, 2, 2), "float32", None)]), "at most 4"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_with_one_clear_line(case: str, tmp_path: Path) -> None:
    op_check.assert_refused(*REFUSED[case], tmp_path)


def test_refused_on_the_command_line(tmp_path: Path) -> None:
    import os
    import sys

    path = tmp_path / "bad.tflite"
    path.write_bytes(REFUSED["shapes"][0])
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-m", "utvm", "compile", str(path), "-o", str(tmp_path / "out")],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(root / "scripts")})
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("error:"), proc.stderr
    assert "ADD#0" in lines[0] and "do not broadcast" in lines[0]
    assert not (tmp_path / "out").exists()


def test_int16_power_of_two_scales_take_the_general_path(tmp_path: Path) -> None:
    """TFLite (not Micro) has a power-of-two path for int16 ADD/SUB; TFLite Micro's add.cc and
    sub.cc always take the general one (reference_ops::Add(..., pot_scale=false), Sub), so
    power-of-two scales must give the general path's results too."""
    cases = Cases()
    for k in range(8):
        def build(m: ModelBuilder, k=k) -> tuple[list[int], list[int]]:  # type: ignore[no-untyped-def]
            rng = np.random.default_rng(50 + k)
            sa, sb, sy = (2.0 ** -int(rng.integers(10, 15)) for _ in range(3))
            a_shape, b_shape = shapes(rng, 10 + k)
            ins: list[int] = []
            ta = cases.tensor(m, f"pot{k}_a", a_shape, "int16", rng, ins, quant=(sa, 0))
            tb = cases.tensor(m, f"pot{k}_b", b_shape, "int16", rng, ins, quant=(sb, 0))
            ty = m.add_tensor(f"pot{k}_y", np.broadcast_shapes(a_shape, b_shape), "int16", scale=sy, zero_point=0)
            m.add_operator("ADD" if k % 2 else "SUB", [ta, tb], [ty], {"fused_activation_function": "NONE"})
            return ins, [ty]
        cases.cases.append(build)
    cases.check(tmp_path)


def test_output_rank_differs_by_leading_ones(tmp_path: Path) -> None:
    """TFLite lets the output (or an operand) carry extra leading dimensions of size 1."""
    cases = Cases()
    for k, (a, b, y) in enumerate([((4, 8), (8,), (1, 4, 8)), ((1, 1, 4, 8), (8,), (4, 8)),
                                   ((3, 1), (1, 1, 1, 5), (1, 3, 5))]):
        def build(m: ModelBuilder, a=a, b=b, y=y, k=k) -> tuple[list[int], list[int]]:  # type: ignore[no-untyped-def]
            rng = np.random.default_rng(k)
            ins: list[int] = []
            ta = cases.tensor(m, f"lead{k}_a", a, "int8", rng, ins, quant=(0.05, 3))
            tb = cases.tensor(m, f"lead{k}_b", b, "int8", rng, ins, quant=(0.03, -7))
            ty = m.add_tensor(f"lead{k}_y", y, "int8", scale=0.06, zero_point=1)
            m.add_operator("MUL" if k % 2 else "ADD", [ta, tb], [ty], {"fused_activation_function": "NONE"})
            return ins, [ty]
        cases.cases.append(build)
    cases.check(tmp_path)


# ---------------------------------------------------------------------------------------------
# the broadcasting arithmetic itself


def test_broadcast_shape_follows_numpy() -> None:
    rng = np.random.default_rng(0)
    for seed in range(200):
        a, b = shapes(rng, seed)
        assert broadcast_shape([a, b]) == np.broadcast_shapes(a, b)
    assert broadcast_shape([(2, 3), (3, 2)]) is None
    assert broadcast_shape([(), ()]) == ()


def test_broadcast_plan_merges_dimensions_and_indexes_like_numpy() -> None:
    bc = plan((1, 4, 4, 8), [(1, 4, 4, 8), (8,)])
    assert bc.shape == (16, 8) and bc.strides == ((8, 1), (0, 1))
    assert plan((3, 7), [(3, 7), (3, 7)]).shape == (21,)
    rng = np.random.default_rng(1)
    for seed in range(100):
        a, b = shapes(rng, seed)
        out = np.broadcast_shapes(a, b)
        bc = plan(out, [a, b])
        loops = np.indices(bc.shape).reshape(len(bc.shape), -1).T
        for k, s in enumerate((a, b)):
            flat = np.arange(int(np.prod(s)), dtype=np.int64).reshape(s)
            want = np.broadcast_to(flat, out).reshape(-1)
            got = loops @ np.array(bc.strides[k], dtype=np.int64)
            assert np.array_equal(got, want), (a, b, k)
