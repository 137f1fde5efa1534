"""Hostile input to the compiler's front door and the generated code (issue 14), one test per
finding: one short `error:` line, exit 2, nothing left behind, no hang, no undefined behaviour."""

from __future__ import annotations

import contextlib
import io
import os
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import tflite

from cli_check import assert_one_error

ROOT = Path(__file__).resolve().parents[1]
MAX_LINE = 400


def cli(argv: list[str]) -> tuple[int | None, str, str]:
    """``utvm argv`` in this process: (exit code or None for an escaping exception, stdout, stderr)."""
    from utvm import cli as utvm_cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc: int | None = utvm_cli.main(argv)
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 1
        except Exception as exc:  # noqa: BLE001 - a traceback is what these tests look for
            rc = None
            err.write(f"Traceback: {type(exc).__name__}: {exc}\n")
    return rc, out.getvalue(), err.getvalue()


def one_error(rc: int | None, stderr: str, *needles: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("error:"), (rc, stderr[-2000:])
    assert len(lines[0]) <= MAX_LINE, len(lines[0])
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def without_dac(cmd: list[str]) -> list[str]:
    """``cmd`` run so that file permissions apply to it: as root, without the capabilities that
    override them (setpriv drops them from the bounding set)."""
    if os.geteuid() != 0:
        return cmd
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root and setpriv (util-linux) is missing: permissions cannot be denied")
    return [setpriv, "--bounding-set", "-dac_override,-dac_read_search", *cmd]


def utvm_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "utvm", *args]


def run_proc(cmd: list[str], timeout: float = 120, memory: int | None = None) -> subprocess.CompletedProcess[str]:
    """``cmd`` with the worktree's utvm, at most ``timeout`` seconds and ``memory`` bytes of address space."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "scripts"))

    def limit() -> None:
        if memory is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout, preexec_fn=limit)


@pytest.fixture()
def kws(models_dir: Path) -> bytes:
    return (models_dir / "kws_ref_model.tflite").read_bytes()


@pytest.fixture()
def open_dir() -> Iterator[Path]:
    """A directory anyone may use (pytest's tmp_path is private to root)."""
    d = Path(tempfile.mkdtemp(prefix="utvm-hostile-"))
    d.chmod(0o777)
    yield d
    shutil.rmtree(d, ignore_errors=True)


# -- 1: an unreadable model file ---------------------------------------------------------------

def test_unreadable_model_file(open_dir: Path, kws: bytes) -> None:
    model = open_dir / "secret.tflite"
    model.write_bytes(kws)
    model.chmod(0)
    out = open_dir / "out"
    proc = run_proc(without_dac(utvm_cmd("compile", str(model), "-o", str(out))))
    assert_one_error(proc, out, "cannot read", "Permission denied")


# -- 2: not a regular file, too large ----------------------------------------------------------

def test_fifo_is_refused_without_waiting(tmp_path: Path) -> None:
    model = tmp_path / "x.tflite"
    os.mkfifo(model)
    out = tmp_path / "out"
    proc = run_proc(utvm_cmd("compile", str(model), "-o", str(out)), timeout=60)
    assert_one_error(proc, out, "not a regular file")


def test_device_symlink_is_refused(tmp_path: Path) -> None:
    model = tmp_path / "zero.tflite"
    model.symlink_to("/dev/zero")
    out = tmp_path / "out"
    proc = run_proc(utvm_cmd("compile", str(model), "-o", str(out)), timeout=120, memory=2 << 30)
    assert_one_error(proc, out, "not a regular file")


def test_model_larger_than_the_limit(tmp_path: Path) -> None:
    from utvm.importer.limits import MAX_MODEL_BYTES

    model = tmp_path / "huge.tflite"
    with model.open("wb") as f:
        f.write(b"\x1c\x00\x00\x00TFL3")
        f.truncate(MAX_MODEL_BYTES + 1)  # sparse: nothing is written to disk
    out = tmp_path / "out"
    rc, _, err = cli(["compile", str(model), "-o", str(out)])
    one_error(rc, err, "larger than the largest model accepted", "256 MiB")


def test_help_shows_the_limits() -> None:
    from utvm.cli import build_parser

    text = build_parser()._subparsers._group_actions[0].choices["compile"].format_help()  # type: ignore[union-attr]
    assert "256 MiB" in text and "tensors up to 64 MiB" in text and "pool up to 256 MiB" in text


# -- 3: a bad -o -------------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["existing file", "under a file", "proc"])
def test_bad_output_path(tmp_path: Path, models_dir: Path, where: str) -> None:
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    out = {"existing file": plain, "under a file": plain / "sub" / "mlf", "proc": Path("/proc/utvm_out")}[where]
    rc, _, err = cli(["compile", str(models_dir / "ad01_int8.tflite"), "-o", str(out)])
    one_error(rc, err, "-o")
    assert plain.read_text() == "x"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain.txt"]


def test_read_only_output_directory(open_dir: Path, models_dir: Path) -> None:
    ro = open_dir / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    out = ro / "mlf"
    proc = run_proc(without_dac(utvm_cmd("compile", str(models_dir / "ad01_int8.tflite"), "-o", str(out))))
    assert_one_error(proc, out, "-o", "cannot write")
    assert list(ro.iterdir()) == []


# -- 4: corrupted parameters must not reach lowering or TVM ------------------------------------

def _tensor_named(data: bytes, name: bytes) -> tflite.Tensor:
    sg = tflite.Model.GetRootAsModel(data, 0).Subgraphs(0)
    return next(sg.Tensors(i) for i in range(sg.TensorsLength()) if sg.Tensors(i).Name() == name)


def _quant_vector(t: tflite.Tensor, slot: int) -> int:
    tab = t.Quantization()._tab
    return tab.Vector(tab.Offset(slot))


def test_zero_point_out_of_range(tmp_path: Path, kws: bytes) -> None:
    """The TVM ValueError 'Literal value 2147483652 exceeds range of int32' of the campaign."""
    sg = tflite.Model.GetRootAsModel(kws, 0).Subgraphs(0)
    t = sg.Tensors(int(sg.Inputs(0)))
    buf = bytearray(kws)
    struct.pack_into("<q", buf, _quant_vector(t, 10), 2**31 + 4)
    model = tmp_path / "zp.tflite"
    model.write_bytes(bytes(buf))
    out = tmp_path / "out"
    rc, _, err = cli(["compile", str(model), "-o", str(out)])
    one_error(rc, err, "zero point 2147483652")


@pytest.mark.parametrize("value", [float("nan"), -1.0, 0.0, float("inf")])
def test_bad_quantization_scale(tmp_path: Path, kws: bytes, value: float) -> None:
    sg = tflite.Model.GetRootAsModel(kws, 0).Subgraphs(0)
    t = sg.Tensors(int(sg.Outputs(0)))
    buf = bytearray(kws)
    struct.pack_into("<f", buf, _quant_vector(t, 8), value)
    model = tmp_path / "scale.tflite"
    model.write_bytes(bytes(buf))
    out = tmp_path / "out"
    rc, _, err = cli(["compile", str(model), "-o", str(out)])
    one_error(rc, err, "quantization scale")


def test_fully_connected_weights_of_the_wrong_shape(tmp_path: Path, models_dir: Path) -> None:
    """The AssertionError of the fully connected kernel: weights with other output units than the
    output tensor has."""
    data = (models_dir / "ad01_int8.tflite").read_bytes()
    sg = tflite.Model.GetRootAsModel(data, 0).Subgraphs(0)
    op = sg.Operators(0)
    w = sg.Tensors(int(op.Inputs(1)))
    tab = w._tab
    shape_at = tab.Vector(tab.Offset(4))
    buf = bytearray(data)
    rows, cols = (int(d) for d in w.ShapeAsNumpy())
    struct.pack_into("<ii", buf, shape_at, cols, rows)  # the same bytes, transposed shape
    model = tmp_path / "fc.tflite"
    model.write_bytes(bytes(buf))
    out = tmp_path / "out"
    rc, _, err = cli(["compile", str(model), "-o", str(out)])
    one_error(rc, err, "FULLY_CONNECTED")


def test_unexpected_exception_is_one_internal_error(tmp_path: Path, models_dir: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from utvm.lower import lowering

    def broken(*_: object) -> None:
        raise AssertionError("a kernel builder's invariant")

    monkeypatch.setattr(lowering, "_build", broken)
    out = tmp_path / "out"
    model = str(models_dir / "ad01_int8.tflite")
    rc, _, err = cli(["compile", model, "-o", str(out)])
    line = one_error(rc, err, "internal error while compiling", "FULLY_CONNECTED", "report")
    assert "AssertionError" in line
    assert not out.exists() and list(tmp_path.iterdir()) == []
    rc, _, err = cli(["--debug", "compile", model, "-o", str(out)])
    assert rc == 2 and "Traceback" in err and "a kernel builder's invariant" in err
    assert err.strip().splitlines()[-1].startswith("error: internal error while compiling")


# -- 5: short error lines ----------------------------------------------------------------------

def test_error_line_is_short(tmp_path: Path) -> None:
    from tflite_builder import ModelBuilder

    m = ModelBuilder("long names")
    a = m.add_tensor("a" * 40000, [1, 4], "float16")
    y = m.add_tensor("y", [1, 4], "float16")
    m.add_operator("RELU", [a], [y])
    model = tmp_path / "long.tflite"
    model.write_bytes(m.finish([a], [y]))
    out = tmp_path / "out"
    rc, _, err = cli(["compile", str(model), "-o", str(out)])
    one_error(rc, err, "unsupported data type FLOAT16")


def test_long_shape_lists_are_cut() -> None:
    from utvm.errors import short_list

    assert short_list(range(3)) == "[0, 1, 2]"
    assert short_list(range(5000)) == "[0, 1, 2, 3, 4, 5, 6, 7, ... and 4992 more]"


# -- 6: run --input of the wrong shape ---------------------------------------------------------

def test_run_input_needs_the_exact_shape(tmp_path: Path, models_dir: Path) -> None:
    bad = tmp_path / "x.npy"
    np.save(bad, np.zeros((2, 320), np.int8))  # 640 elements, as the input, in another shape
    rc, _, err = cli(["run", str(models_dir / "ad01_int8.tflite"), "--input", str(bad)])
    one_error(rc, err, "shape [2, 320]", "needs [1, 640]")


def test_a_batch_of_one_may_be_added_or_dropped() -> None:
    from utvm.run.runner import same_shape

    assert same_shape((1, 640), (1, 640)) and same_shape((640,), (1, 640)) and same_shape((1, 1, 640), (1, 640))
    assert not same_shape((2, 320), (1, 640)) and not same_shape((640, 1), (1, 640))
    assert not same_shape((1, 1, 1, 640), (1, 640))


# -- 7: NaN in float outputs -------------------------------------------------------------------

def test_nan_at_the_same_place_matches() -> None:
    from utvm.run.runner import compare

    ours = np.array([1.0, np.nan, np.inf, -2.0], np.float32)
    assert compare([ours], [ours.copy()]) == (True, 0.0, 0.0)
    other = ours.copy()
    other[0] = np.nan
    ok, max_abs, _ = compare([ours], [other])
    assert not ok and max_abs == float("inf")


# -- 9: the descriptor's run checks what the typed API checks ----------------------------------

def test_descriptor_run_refuses_bad_buffers(tmp_path: Path, models_dir: Path) -> None:
    """Every entry point (typed run, run_with_pool, the descriptor's run) refuses NULL and
    misaligned inputs, outputs and pools (the sanitizer harness checks them all)."""
    from sanitizer_build import build_and_run
    from utvm.compiler import compile_model

    result = compile_model(models_dir / "ad01_int8.tflite", tmp_path / "ad")
    run = build_and_run(result.mlf_dir, result.name, sanitize=False, randoms=0)
    assert run.problem == "" and run.inputs == 3, run.output[-2000:]


# -- 10: numeric options of the RPC host server ------------------------------------------------

@pytest.mark.parametrize("value", ["3000000000", "-5", "0", "12abc", ""])
def test_rpc_host_interbyte_range(tmp_path: Path, value: str) -> None:
    from rpc_check import build_host_server

    exe = build_host_server(tmp_path)
    proc = subprocess.run([str(exe), "--interbyte-ms", value], capture_output=True, text=True, timeout=10,
                          stdin=subprocess.PIPE)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith("error: --interbyte-ms")


# -- 11: the format is the content's -----------------------------------------------------------

def test_format_is_decided_by_content(tmp_path: Path, models_dir: Path) -> None:
    data = (models_dir / "ad01_int8.tflite").read_bytes()
    for name in ("model.bin", "model.onnx"):
        model = tmp_path / name
        model.write_bytes(data)
        rc, stdout, err = cli(["compile", str(model), "-o", str(tmp_path / "out")])
        assert rc == 0, err
        assert "holds a TFLite model (detected by content" in stdout
    text = tmp_path / "text.TFLITE"
    text.write_bytes(b"not a model\n" * 10)
    rc, _, err = cli(["compile", str(text), "-o", str(tmp_path / "out2")])
    one_error(rc, err, "not a TFLite model")


def test_onnx_named_tflite_is_read_as_onnx(tmp_path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    path = tmp_path / "relu.tflite"
    path.write_bytes(model.SerializeToString())
    onnx.checker.check_model(model)
    rc, stdout, err = cli(["compile", str(path), "-o", str(tmp_path / "out")])
    assert rc == 0, err
    assert "holds an ONNX model (detected by content" in stdout


# -- found by the campaign (tests/fuzz/model_fuzz.py) ------------------------------------------

def test_tensor_names_are_escaped_in_the_c(tmp_path: Path) -> None:
    """A tensor name with a NUL, quotes, a newline and comment delimiters: the C builds."""
    from sanitizer_build import build_and_run
    from tflite_builder import ModelBuilder
    from utvm.compiler import compile_model

    m = ModelBuilder("names")
    name = 'in\x00"put*/ /* \\\n??='
    x = m.add_tensor(name, [1, 4], "float32")
    y = m.add_tensor(name + "out", [1, 4], "float32")
    m.add_operator("RELU", [x], [y])
    model = tmp_path / "names.tflite"
    model.write_bytes(m.finish([x], [y]))
    result = compile_model(model, tmp_path / "mlf")
    run = build_and_run(result.mlf_dir, result.name, sanitize=False, randoms=0)
    assert run.problem == "", run.output[-2000:]


def test_huge_per_channel_bias_compiles(tmp_path: Path, kws: bytes) -> None:
    """Biases near INT32_MIN take the general requantization with per-channel multipliers, whose
    tensor loads TE left unbound inside a truncdiv (a TVM TypeError before)."""
    sg = tflite.Model.GetRootAsModel(kws, 0).Subgraphs(0)
    model_ = tflite.Model.GetRootAsModel(kws, 0)
    t = next(sg.Tensors(i) for i in range(sg.TensorsLength())
             if b"depthwise_conv2d_2/BiasAdd/ReadVariableOp" in sg.Tensors(i).Name())
    tab = model_.Buffers(t.Buffer())._tab
    at, n = tab.Vector(tab.Offset(4)), tab.VectorLen(tab.Offset(4))
    buf = bytearray(kws)
    buf[at:at + n] = b"\x80" * n
    model = tmp_path / "bias.tflite"
    model.write_bytes(bytes(buf))
    rc, _, err = cli(["compile", str(model), "-o", str(tmp_path / "out")])
    assert rc == 0, err


def test_missing_first_input(tmp_path: Path, models_dir: Path) -> None:
    data = (models_dir / "ad01_int8.tflite").read_bytes()
    op = tflite.Model.GetRootAsModel(data, 0).Subgraphs(0).Operators(0)
    tab = op._tab
    buf = bytearray(data)
    struct.pack_into("<i", buf, tab.Vector(tab.Offset(6)), -1)  # inputs[0] = -1: omitted
    model = tmp_path / "noinput.tflite"
    model.write_bytes(bytes(buf))
    rc, _, err = cli(["compile", str(model), "-o", str(tmp_path / "out")])
    one_error(rc, err, "first input or an output is missing")


def test_bias_of_the_wrong_type(tmp_path: Path, models_dir: Path) -> None:
    data = (models_dir / "ad01_int8.tflite").read_bytes()
    sg = tflite.Model.GetRootAsModel(data, 0).Subgraphs(0)
    bias = sg.Tensors(int(sg.Operators(0).Inputs(2)))
    tab = bias._tab
    buf = bytearray(data)
    buf[tab.Pos + tab.Offset(6)] = 0  # INT32 -> FLOAT32: the same bytes read as floats
    model = tmp_path / "fbias.tflite"
    model.write_bytes(bytes(buf))
    rc, _, err = cli(["compile", str(model), "-o", str(tmp_path / "out")])
    one_error(rc, err, "float32 bias for int8 activations")


def test_softmax_output_larger_than_its_input(tmp_path: Path) -> None:
    """The kernel ran over the output's size and read past its input (entry points disagreed)."""
    from tflite_builder import ModelBuilder

    m = ModelBuilder("softmax sizes")
    x = m.add_tensor("x", [1, 10], "float32")
    y = m.add_tensor("y", [1, 20], "float32")
    m.add_operator("SOFTMAX", [x], [y], {"beta": 1.0})
    model = tmp_path / "sizes.tflite"
    model.write_bytes(m.finish([x], [y]))
    rc, _, err = cli(["compile", str(model), "-o", str(tmp_path / "out")])
    one_error(rc, err, "output of shape [1, 20] for an input of shape [1, 10]")


def test_softmax_input_scale_too_small(tmp_path: Path) -> None:
    from tflite_builder import softmax_model

    model = tmp_path / "tiny.tflite"
    model.write_bytes(softmax_model((1, 10), input_scale=1e-25))
    rc, _, err = cli(["compile", str(model), "-o", str(tmp_path / "out")])
    one_error(rc, err, "too small for the int8 softmax")


def _window_model(op: str, options: dict[str, object], x_shape: tuple[int, ...] = (1, 6, 6, 2),
                  y_shape: tuple[int, ...] = (1, 6, 6, 2)) -> bytes:
    from tflite_builder import ModelBuilder

    m = ModelBuilder("window")
    x = m.add_tensor("x", x_shape, "float32")
    y = m.add_tensor("y", y_shape, "float32")
    if op == "AVERAGE_POOL_2D":
        m.add_operator(op, [x], [y], {"padding": "SAME", "stride_w": 1, "stride_h": 1, "filter_width": 3,
                                      "filter_height": 3, **options})
    else:
        cin = x_shape[3]
        w = m.add_tensor("w", (1, 3, 3, cin) if op == "DEPTHWISE_CONV_2D" else (y_shape[3], 3, 3, cin), "float32",
                         np.ones((1, 3, 3, cin) if op == "DEPTHWISE_CONV_2D" else (y_shape[3], 3, 3, cin), np.float32))
        base: dict[str, object] = {"padding": "SAME", "stride_w": 1, "stride_h": 1, "dilation_w_factor": 1,
                                   "dilation_h_factor": 1}
        if op == "DEPTHWISE_CONV_2D":
            base["depth_multiplier"] = 1
        m.add_operator(op, [x, w], [y], {**base, **options})
    return m.finish([x], [y])


@pytest.mark.parametrize("op, options, shapes, words", [
    # dilation 0: read as 1 before, so the model compiled into other arithmetic than TFLite Micro's
    ("CONV_2D", {"dilation_h_factor": 0}, {}, "dilations (0, 1) must be from 1"),
    ("DEPTHWISE_CONV_2D", {"dilation_w_factor": 0}, {}, "dilations (1, 0) must be from 1"),
    ("CONV_2D", {"stride_h": 0}, {}, "strides (0, 1)"),
    ("DEPTHWISE_CONV_2D", {"stride_w": -2}, {}, "strides (1, -2)"),
    ("AVERAGE_POOL_2D", {"stride_w": 0}, {}, "strides (1, 0)"),
    ("CONV_2D", {"padding": "VALID"}, {"x_shape": (1, 2, 2, 2), "y_shape": (1, 1, 1, 2)}, "does not fit the input"),
    ("CONV_2D", {}, {"y_shape": (1, 5, 6, 2)}, "output height 5"),
    ("DEPTHWISE_CONV_2D", {"stride_w": 2}, {}, "output width 6"),
])
def test_window_parameters_are_checked(tmp_path: Path, op: str, options: dict[str, object],
                                       shapes: dict[str, tuple[int, ...]], words: str) -> None:
    """Strides, dilations, padding and output sizes of windowed operators, as TFLite Micro's
    Prepare functions check them: one error line, nothing written."""
    model = tmp_path / "window.tflite"
    model.write_bytes(_window_model(op, options, **shapes))
    rc, _, err = cli(["compile", str(model), "-o", str(tmp_path / "out")])
    one_error(rc, err, words)
    assert not (tmp_path / "out").exists()


def test_nan_input_of_an_onnx_model_runs_and_matches(tmp_path: Path) -> None:
    """Item 7 end to end: a float ONNX model given NaN (and inf) inputs exits 0 with its outputs
    matching onnxruntime (NaN where onnxruntime has NaN)."""
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "c"], ["s"]), helper.make_node("Mul", ["s", "c"], ["y"])], "nan",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor("c", TensorProto.FLOAT, [1, 8], [0.5] * 8)])
    model = tmp_path / "nan.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), model)
    data = np.array([[np.nan, 1.0, -3.0, np.inf, -np.inf, 0.0, np.nan, 2.0]], np.float32)
    np.save(tmp_path / "x.npy", data)
    rc, out, err = cli(["run", str(model), "--board", "host", "--input", str(tmp_path / "x.npy"), "--json"])
    assert rc == 0, err
    import json

    report = json.loads(out)
    assert report["outputs_match_reference"] is True and report["reference"].startswith("onnxruntime")


@pytest.mark.parametrize("target", ["constant", "input", "twice"])
def test_operator_output_must_be_its_own(tmp_path: Path, target: str) -> None:
    """A fuzzed FULLY_CONNECTED wrote into another layer's constant bias: the kernel compiled and
    ran off the end of the constant under ASan. An output that is a constant, a model input, or
    written by two operators is refused."""
    from tflite_builder import ModelBuilder

    m = ModelBuilder("outputs")
    x = m.add_tensor("x", [1, 8], "float32")
    c = m.add_tensor("c", [1, 8], "float32", data=np.ones((1, 8), np.float32))
    y = m.add_tensor("y", [1, 8], "float32")
    out = {"constant": c, "input": x, "twice": y}[target]
    m.add_operator("RELU", [x], [out])
    m.add_operator("RELU", [x] if target == "twice" else [out], [y])
    model = tmp_path / "outputs.tflite"
    model.write_bytes(m.finish([x], [y]))
    rc, _, err = cli(["compile", str(model), "-o", str(tmp_path / "out")])
    one_error(rc, err, {"constant": "a constant", "input": "a model input", "twice": "written by two operators"}[target])
    assert not (tmp_path / "out").exists()
