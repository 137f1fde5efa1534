"""Validation that matches TFLite Micro (issue 23, item 1; docs/VALIDATION.md).

A check may refuse only what TFLite Micro refuses, or what would make utvm compute something
else. The checks relaxed after the classification each get a model that hits the old
condition: it now compiles and matches TFLite Micro bit for bit (float32 within the runner's
tolerance). The last test keeps docs/VALIDATION.md honest: every place that raises a check's
error has its row there.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from mac_cases import Cases
from op_check import assert_refused, check_cases, check_model, side_by_side
from tflite_builder import ModelBuilder
from tflite_patch import edit_model

ROOT = Path(__file__).resolve().parents[1]
POOL_OPTIONS = {"padding": "VALID", "stride_w": 2, "stride_h": 2, "filter_width": 2, "filter_height": 2}


def _pool(op: str, out_scale: float, act: str = "NONE", zero_point: int = -3):
    def case(m: ModelBuilder) -> tuple[list[int], list[int]]:
        x = m.add_tensor(f"{op}_x_{out_scale}_{act}", [1, 6, 6, 5], "int8", scale=0.07, zero_point=zero_point)
        y = m.add_tensor(f"{op}_y_{out_scale}_{act}", [1, 3, 3, 5], "int8", scale=out_scale, zero_point=zero_point)
        m.add_operator(op, [x], [y], {**POOL_OPTIONS, "fused_activation_function": act})
        return [x], [y]
    return case


def test_pool_scales_within_tflm_tolerance_compile_bit_exact(tmp_path: Path) -> None:
    """PoolingPrepare: int8 input and output scales at most 1e-6 apart (zero points equal); we
    refused any difference. Scales 4e-7 and 9e-7 apart, RELU6 clamped by the output's scale."""
    near, nearer = float(np.float32(0.07 + 9e-7)), float(np.float32(0.07 - 4e-7))
    cases = [_pool("AVERAGE_POOL_2D", near), _pool("MAX_POOL_2D", nearer), _pool("AVERAGE_POOL_2D", nearer, "RELU6"),
             _pool("MAX_POOL_2D", near, "RELU")]
    report = check_cases(cases, tmp_path)
    assert report.max_abs_diff == 0


def test_pool_scales_beyond_tflm_tolerance_still_refused(tmp_path: Path) -> None:
    m = ModelBuilder()
    ins, outs = _pool("AVERAGE_POOL_2D", 0.07 + 3e-6)(m)
    assert_refused(m.finish(ins, outs), "int8 pooling needs the same quantization in and out", tmp_path)


def _unary(op: str, dtype: str, x_q: tuple[float, int], y_q: tuple[float, int], n: int):
    def case(m: ModelBuilder) -> tuple[list[int], list[int]]:
        x = m.add_tensor(f"{op}_{dtype}_x_{y_q}", [n], dtype, scale=x_q[0], zero_point=x_q[1])
        y = m.add_tensor(f"{op}_{dtype}_y_{y_q}", [n], dtype, scale=y_q[0], zero_point=y_q[1])
        m.add_operator(op, [x], [y])
        return [x], [y]
    return case


def test_logistic_tanh_output_quantization_tflm_does_not_read(tmp_path: Path) -> None:
    """TFLite Micro's int8 LOGISTIC checks only the output zero point (-128), int8 TANH nothing
    of the output, int16 both a scale whose log2 rounds to -15 within 1e-3: their kernels write
    the fixed quantization whatever the tensor says. We refused any other output scale."""
    every = np.arange(-128, 128, dtype=np.int8)
    rng = np.random.default_rng(23)
    wide = rng.integers(-32768, 32768, size=64).astype(np.int16)
    cases = [_unary("LOGISTIC", "int8", (0.05, 3), (0.02, -128), 256),
             _unary("TANH", "int8", (0.05, 3), (0.03, 7), 256),
             _unary("LOGISTIC", "int16", (2.0 ** -11, 0), (2.0 ** -15 * 1.0004, 0), 64),
             _unary("TANH", "int16", (0.0007, 0), (2.0 ** -15 * 0.9997, 0), 64)]
    report = check_cases(cases, tmp_path, inputs=[every, every, wide, wide])
    assert report.max_abs_diff == 0


@pytest.mark.parametrize("op,dtype,y_q,words", [
    ("LOGISTIC", "int8", (1 / 256, 0), "must be (0.00390625, -128)"),
    ("LOGISTIC", "int16", (2.0 ** -14, 0), "must be (3.05176e-05, 0)"),
    ("TANH", "int16", (2.0 ** -15 * 1.01, 0), "must be (3.05176e-05, 0)")])
def test_logistic_tanh_output_tflm_refuses_still_refused(op: str, dtype: str, y_q: tuple[float, int], words: str,
                                                         tmp_path: Path) -> None:
    m = ModelBuilder()
    ins, outs = _unary(op, dtype, (0.05 if dtype == "int8" else 2.0 ** -12, 0), y_q, 8)(m)
    assert_refused(m.finish(ins, outs), words, tmp_path)


def test_float_softmax_any_beta_bit_exact(tmp_path: Path) -> None:
    """float32 SOFTMAX: TFLite Micro computes exp((x - max) * beta) / sum for any beta; we
    refused beta 0 and negative ones."""
    def case(beta: float):
        def make(m: ModelBuilder) -> tuple[list[int], list[int]]:
            x = m.add_tensor(f"x_{beta}", [3, 10], "float32")
            y = m.add_tensor(f"y_{beta}", [3, 10], "float32")
            m.add_operator("SOFTMAX", [x], [y], {"beta": beta})
            return [x], [y]
        return make

    rng = np.random.default_rng(5)
    data = [rng.uniform(-4, 4, size=(3, 10)).astype(np.float32) for _ in range(3)]
    report = check_cases([case(0.0), case(-0.7), case(-2.5)], tmp_path, inputs=data)
    assert report.max_abs_diff <= 1e-6


def test_float_softmax_non_finite_beta_refused(tmp_path: Path) -> None:
    """TFLite Micro runs it (NaN outputs); utvm's generated C has no constant for it."""
    m = ModelBuilder()
    x = m.add_tensor("x", [1, 10], "float32")
    y = m.add_tensor("y", [1, 10], "float32")
    m.add_operator("SOFTMAX", [x], [y], {"beta": float("inf")})
    assert_refused(m.finish([x], [y]), "(must be finite)", tmp_path)


def test_int8_softmax_negative_beta_still_refused(tmp_path: Path) -> None:
    m = ModelBuilder()
    x = m.add_tensor("x", [1, 10], "int8", scale=0.1, zero_point=0)
    y = m.add_tensor("y", [1, 10], "int8", scale=1 / 256, zero_point=-128)
    m.add_operator("SOFTMAX", [x], [y], {"beta": -1.0})
    assert_refused(m.finish([x], [y]), "must be finite and positive", tmp_path)


def _filter_zero_points(model: object, rng: np.random.Generator) -> None:
    """Nonzero zero points on every filter TFLite Micro reads without them: those of CONV_2D,
    DEPTHWISE_CONV_2D, TRANSPOSE_CONV, and of FULLY_CONNECTED quantized per channel."""
    sg = model.subgraphs[0]  # type: ignore[attr-defined]
    for op in sg.operators:
        oc = model.operatorCodes[op.opcodeIndex]  # type: ignore[attr-defined]
        code = max(oc.builtinCode, oc.deprecatedBuiltinCode)
        if code not in (3, 4, 9, 67):
            continue
        q = sg.tensors[int(op.inputs[1])].quantization
        if code == 9 and len(q.scale) < 2:
            continue  # per-tensor FullyConnected reads its weights offset
        q.zeroPoint = [int(z) for z in rng.integers(-40, 41, len(q.scale))]
        q.zeroPoint[0] = q.zeroPoint[0] or 7


def test_filter_zero_points_tflm_ignores_compile_bit_exact(tmp_path: Path) -> None:
    """TFLite Micro's ConvPerChannel, DepthwiseConvPerChannel, TransposeConv and
    FullyConnectedPerChannel take no weights offset: a filter's zero points are never read. We
    refused nonzero ones ('filter zero points must be 0') on convolutions and subtracted the
    first one in a per-channel FULLY_CONNECTED. Random layers of test_op_mac (int8, 16x8 CONV_2D)
    with filter zero points in [-40, 40]."""
    cases = Cases()
    for seed in range(4):
        cases.conv("int8", seed)
        cases.conv("int8", 10 + seed, depthwise=True)
        cases.fully_connected("int8", 2 * seed + 1)  # odd seeds: per channel
        cases.transpose_conv("int8", seed)
    cases.conv("int16", 3)
    model = edit_model(side_by_side(cases.cases), lambda m: _filter_zero_points(m, np.random.default_rng(11)))
    report = check_model(model, tmp_path, inputs=cases.inputs)
    assert report.max_abs_diff == 0


def _filter_axes(model: object) -> None:
    """quantized_dimension 1 on every CONV_2D, DEPTHWISE_CONV_2D and TRANSPOSE_CONV filter."""
    sg = model.subgraphs[0]  # type: ignore[attr-defined]
    for op in sg.operators:
        oc = model.operatorCodes[op.opcodeIndex]  # type: ignore[attr-defined]
        if max(oc.builtinCode, oc.deprecatedBuiltinCode) in (3, 4, 67):
            sg.tensors[int(op.inputs[1])].quantization.quantizedDimension = 1


def test_convolution_filter_quantized_dimension_refused_as_tflm(tmp_path: Path) -> None:
    """A per-channel filter whose quantized_dimension is not its channel dimension:
    PopulateConvolutionQuantizationParams refuses it (TF_LITE_ENSURE_EQ(filter dims at
    quantized_dimension, channels), kernel_util.cc), and so does utvm (the tflite-micro
    interpreter fails these models' AllocateTensors: 'CONV_2D failed to prepare')."""
    cases = Cases()
    cases.conv("int8", 20)
    model = edit_model(side_by_side(cases.cases), _filter_axes)
    assert_refused(model, "quantization scales for", tmp_path)


def test_per_channel_quantize_output_refused_as_tflm(tmp_path: Path) -> None:
    """TFLite Micro's QUANTIZE: TF_LITE_ENSURE(output scale->size == 1); we quantized with the
    first scale."""
    m = ModelBuilder()
    x = m.add_tensor("x", [1, 2, 3], "float32")
    y = m.add_tensor("y", [1, 2, 3], "int8", scale=[0.1, 0.2], zero_point=[0, 0], quantized_dimension=1)
    m.add_operator("QUANTIZE", [x], [y])
    assert_refused(m.finish([x], [y]), "per-channel QUANTIZE output", tmp_path)


def test_zero_point_count_other_than_scales_first_one_bit_exact(tmp_path: Path) -> None:
    """TFLite Micro's allocator gives every channel the first zero point when a tensor has
    another count of zero points than of scales; we refused it ('1 quantization scales but 3
    zero points'). ADD with such an operand and output, DEQUANTIZE of such an input."""
    def case(m: ModelBuilder) -> tuple[list[int], list[int]]:
        a = m.add_tensor("a", [2, 8], "int8", scale=0.05, zero_point=3)
        b = m.add_tensor("b", [2, 8], "int8", scale=0.07, zero_point=-4)
        y = m.add_tensor("y", [2, 8], "int8", scale=0.1, zero_point=6)
        d = m.add_tensor("d", [2, 8], "float32")
        m.add_operator("ADD", [a, b], [y])
        m.add_operator("DEQUANTIZE", [b], [d])
        return [a, b], [y, d]

    def zero_points(model: object) -> None:
        for t in model.subgraphs[0].tensors:  # type: ignore[attr-defined]
            if t.quantization is not None and t.quantization.zeroPoint is not None and len(t.quantization.scale) == 1:
                z = int(t.quantization.zeroPoint[0])
                t.quantization.zeroPoint = [z, z + 9, z - 11]

    model = edit_model(side_by_side([case]), zero_points)
    report = check_model(model, tmp_path)
    assert report.max_abs_diff == 0


# ---------------------------------------------------------------------------------------------
# docs/VALIDATION.md lists every check

#: the exceptions a check raises, and the classes of docs/VALIDATION.md
_CLASSES = ("refused-by-TFLM", "would-compute-differently", "neither", "not-a-model-check")
_ERRORS = {"OpError", "UtvmError"}
_FILES = [*sorted((ROOT / "scripts" / "utvm" / "ops").glob("*.py")),
          *(ROOT / "scripts" / "utvm" / "importer" / n for n in ("__init__.py", "limits.py", "tflite_import.py",
                                                                  "onnx_import.py"))]


def _calls(node: ast.AST, func: str, rel: str, sites: Counter[str], rules: bool = False) -> None:
    """Count the raise sites under ``node`` (``rules``: the ``ctx.fail(...)`` calls instead)."""
    for child in ast.iter_child_nodes(node):
        name = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else func
        if isinstance(child, ast.Call):
            f = child.func
            if (rules and isinstance(f, ast.Attribute) and f.attr == "fail" and isinstance(f.value, ast.Name)
                    and f.value.id == "ctx") or (not rules and isinstance(f, ast.Name) and f.id in _ERRORS):
                sites[f"{rel}:{func}"] += 1
        _calls(child, name, rel, sites, rules)


def check_sites() -> Counter[str]:
    """``file:function`` -> how many checks raise there: each ``OpError(...)`` /
    ``UtvmError(...)`` of the operator modules and the importer. ctx.fail / imp.fail (an
    operator's import rule) are not counted."""
    sites: Counter[str] = Counter()
    for path in _FILES:
        _calls(ast.parse(path.read_text()), "<module>", path.relative_to(ROOT / "scripts" / "utvm").as_posix(), sites)
    return sites


def rule_sites() -> Counter[str]:
    """``file:function`` -> how many TFLite import rules refuse there (``ctx.fail(...)``)."""
    sites: Counter[str] = Counter()
    for path in sorted((ROOT / "scripts" / "utvm" / "ops").glob("*.py")):
        _calls(ast.parse(path.read_text()), "<module>", path.relative_to(ROOT / "scripts" / "utvm").as_posix(), sites,
               rules=True)
    return sites


def doc_rows(prefix: str = "") -> Counter[str]:
    """``file:function`` of each row of docs/VALIDATION.md's tables (the first column; ``prefix``
    "rule ": the import rules' table)."""
    rows: Counter[str] = Counter()
    for line in (ROOT / "docs" / "VALIDATION.md").read_text().splitlines():
        m = re.match(rf"\|\s*{prefix}`([\w/.]+\.py:[\w<>]+)`", line)
        if m:
            rows[m.group(1)] += 1
    return rows


def test_validation_doc_is_generated_from_the_declarations() -> None:
    """docs/VALIDATION.md is what ``utvm ops --validation`` writes from the modules' VALIDATION rows."""
    from utvm.importer.validation import as_markdown

    assert (ROOT / "docs" / "VALIDATION.md").read_text() == as_markdown(), \
        "docs/VALIDATION.md differs from the declarations: python -m utvm ops --validation > docs/VALIDATION.md"


def test_validation_doc_lists_every_check() -> None:
    sites, rows = check_sites(), doc_rows()
    missing = {k: n - rows[k] for k, n in sites.items() if rows[k] < n}
    extra = {k: n - sites[k] for k, n in rows.items() if sites[k] < n}
    assert not missing and not extra, f"docs/VALIDATION.md rows missing: {missing}; rows of no check: {extra}"


def test_validation_doc_lists_every_tflite_import_rule() -> None:
    sites, rows = rule_sites(), doc_rows("rule ")
    assert sites == rows, f"rules without rows: {sites - rows}; rows of no rule: {rows - sites}"
    text = (ROOT / "docs" / "VALIDATION.md").read_text()
    classes = Counter(m.group(1) for m in re.finditer(r"^\| rule `[^`]+` \|.*\| ([\w-]+) \| [^|]* \|$", text, re.M))
    sums = re.search(r"^Rules sum: (.*) \((\d+) rules", text, re.M)
    assert sums, "no rules sum line"
    stated = {m.group(1): int(m.group(2)) for m in re.finditer(r"([\w-]+) (\d+)", sums.group(1))}
    assert {k: v for k, v in stated.items() if v} == dict(classes) and int(sums.group(2)) == sum(classes.values())


def test_validation_doc_sums_match_rows() -> None:
    """The sum line counts the rows of each class, and every row has one of the four classes."""
    text = (ROOT / "docs" / "VALIDATION.md").read_text()
    classes: Counter[str] = Counter()
    for line in text.splitlines():
        if re.match(r"\|\s*`[\w/.]+\.py:[\w<>]+`", line):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            assert len(cells) == 5 and cells[3] in _CLASSES, line
            classes[cells[3]] += 1
    sums = re.search(r"^Sum: (.*) \((\d+) checks", text, re.M)
    assert sums, "no sum line"
    stated = {m.group(1): int(m.group(2)) for m in re.finditer(r"([\w-]+) (\d+)", sums.group(1))}
    assert stated == dict(classes) and int(sums.group(2)) == sum(classes.values()), (stated, classes)
