"""Statically quantized ONNX models, as onnxruntime's quantize_static writes them (QDQ and
QOperator formats): compiled to integer kernels, compared with onnxruntime within one step of
the output quantization."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort_quant = pytest.importorskip("onnxruntime.quantization")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from utvm.compiler import compile_model  # noqa: E402
from utvm.lower.lowering import _function_body  # noqa: E402
from utvm.run.runner import run_model  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _init(name: str, arr: np.ndarray) -> object:
    return numpy_helper.from_array(arr.astype(np.float32), name)


def cnn(rng: np.random.Generator) -> tuple[object, tuple[int, ...]]:
    """Conv-ReLU, max pool, depthwise conv, conv-ReLU, residual add, average pool, global average
    pool, FC (QOperator: QLinearConv, QLinearAdd, QLinearAveragePool, QLinearGlobalAveragePool,
    QGemm)."""
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "wd", "bd"], ["d1"], pads=[1, 1, 1, 1], group=8),
        helper.make_node("Conv", ["d1", "w2", "b2"], ["c2"]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("Add", ["r2", "p1"], ["s"]),
        helper.make_node("AveragePool", ["s"], ["a"], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1]),
        helper.make_node("GlobalAveragePool", ["a"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "w3", "b3"], ["y"], transB=1),
    ]
    inits = [_init("w1", rng.normal(0, .3, (8, 3, 3, 3))), _init("b1", rng.normal(0, .1, 8)),
             _init("wd", rng.normal(0, .3, (8, 1, 3, 3))), _init("bd", rng.normal(0, .1, 8)),
             _init("w2", rng.normal(0, .3, (8, 8, 1, 1))), _init("b2", rng.normal(0, .1, 8)),
             _init("w3", rng.normal(0, .3, (10, 8))), _init("b3", rng.normal(0, .1, 10))]
    graph = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), (1, 3, 16, 16)


def mlp(rng: np.random.Generator) -> tuple[object, tuple[int, ...]]:
    """Gemm-ReLU, MatMul + Add-ReLU, Gemm."""
    nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["h1"], transB=1), helper.make_node("Relu", ["h1"], ["r1"]),
             helper.make_node("MatMul", ["r1", "w2"], ["h2"]), helper.make_node("Add", ["h2", "b2"], ["h3"]),
             helper.make_node("Relu", ["h3"], ["r3"]), helper.make_node("Gemm", ["r3", "w3", "b3"], ["y"], transB=1)]
    inits = [_init("w1", rng.normal(0, .3, (32, 20))), _init("b1", rng.normal(0, .1, 32)),
             _init("w2", rng.normal(0, .3, (32, 16))), _init("b2", rng.normal(0, .1, 16)),
             _init("w3", rng.normal(0, .3, (4, 16))), _init("b3", rng.normal(0, .1, 4))]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 20])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), (1, 20)


MODELS: dict[str, Callable[[np.random.Generator], tuple[object, tuple[int, ...]]]] = {"cnn": cnn, "mlp": mlp}
#: name -> quantize_static options (onnxruntime.quantization names)
SCHEMES = {
    "qdq_s8": dict(quant_format="QDQ"),
    # reduce_range: 7-bit weights, as onnxruntime's documentation asks on x86 without VNNI, where its
    # u8s8 kernels (VPMADDUBSW) saturate pairs of products in int16: with full-range weights in every
    # channel the reference itself came out up to 0.21 off on such a machine (CI), and exact here
    "qdq_s8_per_channel": dict(quant_format="QDQ", per_channel=True, reduce_range=True),
    "qdq_u8": dict(quant_format="QDQ", activation_type="QUInt8"),
    "qoperator": dict(quant_format="QOperator"),
}


def quantize(tmp: Path, model: str, scheme: str) -> Path:
    """The float model, quantized by onnxruntime with a seeded calibration set."""
    rng = np.random.default_rng(7)
    fmodel, shape = MODELS[model](rng)
    fpath = tmp / f"{model}_float.onnx"
    onnx.save(fmodel, str(fpath))
    batches = iter([{"x": rng.uniform(-1, 1, shape).astype(np.float32)} for _ in range(16)])

    class Reader(ort_quant.CalibrationDataReader):  # type: ignore[misc]
        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(batches, None)

    opts = dict(SCHEMES[scheme])
    opts["quant_format"] = getattr(ort_quant.QuantFormat, str(opts["quant_format"]))
    if "activation_type" in opts:
        opts["activation_type"] = getattr(ort_quant.QuantType, str(opts["activation_type"]))
    qpath = tmp / f"{model}_{scheme}.onnx"
    ort_quant.quantize_static(str(fpath), str(qpath), Reader(), **opts)
    return qpath


@pytest.fixture(scope="session")
def quantized(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, str], Path]:
    cache: dict[tuple[str, str], Path] = {}
    tmp = tmp_path_factory.mktemp("onnx_quantized")

    def get(model: str, scheme: str) -> Path:
        if (model, scheme) not in cache:
            cache[(model, scheme)] = quantize(tmp, model, scheme)
        return cache[(model, scheme)]

    return get


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
@pytest.mark.parametrize("model", sorted(MODELS))
def test_matches_onnxruntime_within_one_step(quantized: Callable[[str, str], Path], tmp_path: Path,
                                             model: str, scheme: str) -> None:
    report = run_model(quantized(model, scheme), "host", workdir=tmp_path)
    assert report.reference == "onnxruntime"
    assert report.outputs_match_reference, f"max abs diff {report.max_abs_diff}"


@pytest.mark.parametrize("model", sorted(MODELS))
def test_quantized_layers_compute_in_integers(quantized: Callable[[str, str], Path], tmp_path: Path,
                                              model: str) -> None:
    """Every kernel but the input's quantize and the output's dequantize is free of float
    arithmetic; the weights stay int8 in flash."""
    result = compile_model(quantized(model, "qdq_s8"), tmp_path / "mlf")
    kinds = {c.symbol: result.graph.ops[c.op_index].kind for c in result.lowered.calls}
    assert "quantize" in kinds.values() and "dequantize" in kinds.values()
    assert {"conv2d", "fully_connected"} & set(kinds.values())
    for symbol, kind in kinds.items():
        if kind in ("quantize", "dequantize"):
            continue
        body = _function_body(result.lowered.c_source, f"__tvm_ffi_{symbol}")
        assert body, symbol
        assert not re.search(r"\b(float|double)\b", body), f"{kind} kernel {symbol} uses float arithmetic"
    consts = next((result.mlf_dir / "codegen" / "host" / "src").glob("*_lib2.c")).read_text()
    assert "const float" not in consts


@pytest.mark.slow
@pytest.mark.parametrize("model", sorted(MODELS))
def test_on_cortex_m4(quantized: Callable[[str, str], Path], tmp_path: Path, model: str) -> None:
    from toolchains import toolchain_problem

    problem = toolchain_problem()
    if problem:
        pytest.skip(problem)
    report = run_model(quantized(model, "qdq_s8_per_channel"), "mps2/an386", workdir=tmp_path)
    assert report.outputs_match_reference, f"max abs diff {report.max_abs_diff}"


def test_asymmetric_weights_are_refused_in_one_line(tmp_path: Path) -> None:
    """A QLinearConv whose weights have a zero point: one error line, exit 2, nothing written."""
    w = numpy_helper.from_array(np.ones((4, 3, 1, 1), np.int8), "w")
    inits = [w] + [numpy_helper.from_array(np.array(v, dt), n) for n, v, dt in (
        ("xs", 0.1, np.float32), ("xz", 0, np.int8), ("ws", 0.1, np.float32), ("wz", 3, np.int8),
        ("ys", 0.2, np.float32), ("yz", 0, np.int8))]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("QLinearConv", ["xq", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["yq"]),
             helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 4, 4])], inits)
    path = tmp_path / "asym.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    proc = subprocess.run([sys.executable, "-m", "utvm", "compile", str(path), "-o", str(tmp_path / "out")],
                          capture_output=True, text=True, env={"PYTHONPATH": str(ROOT / "scripts"), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "zero point" in lines[0], proc.stderr
    assert not (tmp_path / "out").exists()


def test_qoperator_models_exercise_the_qlinear_operators(quantized: Callable[[str, str], Path]) -> None:
    """The QOperator-format models above (run against onnxruntime by the tests above) hold every
    QLinear* operator of the registry, the com.microsoft ones included."""
    kinds = set()
    for model in MODELS:
        graph = onnx.load(str(quantized(model, "qoperator"))).graph
        kinds |= {f"{n.domain}.{n.op_type}" if n.domain else n.op_type for n in graph.node}
    assert {"QLinearConv", "QLinearMatMul", "com.microsoft.QGemm", "com.microsoft.QLinearAdd",
            "com.microsoft.QLinearAveragePool", "com.microsoft.QLinearGlobalAveragePool"} <= kinds, kinds
