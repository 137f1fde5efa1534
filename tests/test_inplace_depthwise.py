"""Depthwise convolutions in place over their input (utvm.plan.sharing.choose_shifted): the input
lies in the output's buffer a few rows after its start, the kernel writes the output's rows in
order, so the pool drops by about the output's size where the depthwise layer is the peak
(MobileNetV2's expanded blocks). Outputs stay identical to TFLite Micro on every kernel variant
(generic, dsp_dw4, helium, int16)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from helium_logs import tiny_plan_log
from op_check import check_model, on_boards, side_by_side
from tflite_builder import ModelBuilder
from toolchains import toolchain_problem
from utvm.compiler import CompileOptions, CompileResult, compile_model
from utvm.ops import all_ops
from utvm.ops.depthwise_conv2d import shift_margin
from utvm.run.runner import RunReport

#: (height, width, channels, kernel, stride, padding, dilation, depth multiplier)
SHAPES = [
    (10, 7, 16, 3, 1, "SAME", 1, 1),
    (11, 9, 8, 3, 2, "SAME", 1, 1),
    (9, 6, 12, 3, 1, "VALID", 1, 1),
    (12, 10, 8, 5, 1, "SAME", 1, 1),
    (13, 8, 4, 3, 2, "VALID", 1, 1),
    (10, 10, 8, 3, 1, "SAME", 2, 1),
    (7, 5, 20, 3, 1, "SAME", 1, 1),
    (16, 4, 8, 3, 2, "SAME", 1, 1),
    (9, 8, 4, 3, 1, "SAME", 1, 2),
    (10, 6, 3, 5, 2, "SAME", 1, 4),
    (4, 5, 16, 3, 1, "SAME", 1, 1),  # Helium: utvm_mve_dwt_s8 when tuned (one block of 16 channels: rows in order)
]


def _block(seed: int, dtype: str = "int8"):  # type: ignore[no-untyped-def]
    """x -> 1x1 CONV_2D expanding to ``channels`` -> DEPTHWISE_CONV_2D -> 1x1 CONV_2D to 4
    channels: the depthwise layer holds the block's peak (its input dies at it)."""
    h, w, c, k, s, padding, d, mult = SHAPES[seed % len(SHAPES)]

    def case(m: ModelBuilder):  # type: ignore[no-untyped-def]
        rng = np.random.default_rng(seed)
        p = f"b{seed}_"
        q = dtype != "float32"

        def act(name: str, shape: tuple[int, ...], scale: float) -> int:
            zero = int(rng.integers(-20, 20)) if dtype == "int8" else 0
            return m.add_tensor(p + name, shape, dtype, scale=(scale / 256 if dtype == "int16" else scale) if q else None,
                                zero_point=zero if q else None)

        def conv(op: str, x: int, wshape: tuple[int, ...], y: int, axis: int, options: dict[str, object]) -> None:
            channels = wshape[axis]
            ws = rng.uniform(0.004, 0.03, channels)
            if q:
                wt = m.add_tensor(p + f"w{y}", wshape, "int8", rng.integers(-127, 128, wshape), scale=ws,
                                  zero_point=[0] * channels, quantized_dimension=axis)
                bias = "int64" if dtype == "int16" else "int32"
                bt = m.add_tensor(p + f"b{y}", (channels,), bias, rng.integers(-300, 300, channels),
                                  scale=0.05 * ws, zero_point=[0] * channels)
            else:
                wt = m.add_tensor(p + f"w{y}", wshape, "float32", rng.normal(0, 0.3, wshape).astype(np.float32))
                bt = m.add_tensor(p + f"b{y}", (channels,), "float32", rng.normal(0, 0.1, channels).astype(np.float32))
            base = {"padding": "SAME", "stride_w": 1, "stride_h": 1, "dilation_w_factor": 1,
                    "dilation_h_factor": 1, "fused_activation_function": "NONE"}
            m.add_operator(op, [x, wt, bt], [y], {**base, **options})

        x = act("x", (1, h, w, 3), 0.05)
        e = act("e", (1, h, w, c), 0.1)
        conv("CONV_2D", x, (c, 1, 1, 3), e, 0, {"fused_activation_function": "RELU"})
        span = (k - 1) * d
        oh = -(-h // s) if padding == "SAME" else (h - span - 1) // s + 1
        ow = -(-w // s) if padding == "SAME" else (w - span - 1) // s + 1
        dw = act("dw", (1, oh, ow, c * mult), 0.2)
        conv("DEPTHWISE_CONV_2D", e, (1, k, k, c * mult), dw, 3,
             {"padding": padding, "stride_w": s, "stride_h": s, "dilation_w_factor": d, "dilation_h_factor": d,
              "depth_multiplier": mult})
        y = act("y", (1, oh, ow, 4), 0.3)
        conv("CONV_2D", dw, (4, 1, 1, c * mult), y, 0, {})
        return [x], [y]

    return case


def _model(tmp_path: Path, dtype: str = "int8", n: int = len(SHAPES)) -> Path:
    path = tmp_path / f"blocks_{dtype}.tflite"
    path.write_bytes(side_by_side([_block(i, dtype) for i in range(n)]))
    return path


def test_margin_keeps_written_rows_below_the_rows_still_read() -> None:
    """The margin is the least multiple of 16 with (y + 1) * out_row <= margin + first window row
    of y * in_row for every output row y: two rows for a stride-1 SAME 3x3, one output row for
    stride 2; with a channel multiplier the output's rows outgrow the input's, yet the last row
    still lands over dead input; None when the margin is the whole output (one output row)."""
    from utvm.ir import Graph, Operator, Tensor

    def margin(shape: tuple[int, ...], out: tuple[int, ...], stride: int, top: int) -> int | None:
        x, y = Tensor("x", shape, "int8"), Tensor("y", out, "int8")
        op = Operator("depthwise_conv2d", ["x", "w", "b"], ["y"], {"strides": (stride, stride), "padding": (top, 1, 1, 1)})
        return shift_margin(Graph("g", {"x": x, "y": y}, [op], ["x"], ["y"]), op)

    assert margin((1, 10, 8, 16), (1, 10, 8, 16), 1, 1) == 2 * 8 * 16
    assert margin((1, 10, 8, 16), (1, 5, 4, 16), 2, 0) == 4 * 16
    assert margin((1, 10, 8, 16), (1, 10, 8, 64), 1, 1) == 10 * 8 * 64 - 8 * 8 * 16
    assert margin((1, 3, 10, 16), (1, 1, 8, 16), 1, 0) is None


def _generic_run(model: Path, tmp_path: Path) -> tuple[CompileResult, RunReport]:
    """Compiled for the Cortex-M3 (the generic kernels; constants for the host) and run on the
    host against TFLite Micro."""
    from utvm.run.runner import run_compiled

    work = tmp_path / "m3"
    work.mkdir(exist_ok=True)
    result = compile_model(model, work / "mlf", CompileOptions(cpu="cortex-m3", constants_target="host"))
    return result, run_compiled(model, result, "host", work)


def test_depthwise_runs_in_place_and_the_pool_shrinks(tmp_path: Path) -> None:
    model = _model(tmp_path)
    result, report = _generic_run(model, tmp_path)
    plan = result.plan
    assert plan.check() == []
    assert {c.variant for c in result.lowered.calls if "depthwise" in c.op_name} == {"generic"}
    shifted = [t for t in plan.tenants if t.how == "shifted"]
    assert {t.name for t in shifted} == {f"b{i}_e" for i in range(len(SHAPES))}
    largest = max(result.graph.tensors[t.target].nbytes + result.graph.tensors[t.name].nbytes for t in shifted)
    assert plan.pool_size < largest  # below the largest depthwise layer's input + output
    assert report.outputs_match_reference and report.workspace_bytes == plan.pool_size


def test_a_margin_too_small_changes_the_outputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests above can fail: one row less than the margin and a stride-1 3x3 kernel writes
    over input rows it still reads."""
    opdef = all_ops()["depthwise_conv2d"]

    def short(g, op):  # type: ignore[no-untyped-def]
        right = shift_margin(g, op)
        return None if right is None else right - g.tensors[op.outputs[0]].shape[2] * g.tensors[op.outputs[0]].shape[3]

    monkeypatch.setitem(all_ops(), "depthwise_conv2d", dataclasses.replace(opdef, shift_margin=short))
    _, report = _generic_run(_model(tmp_path, n=1), tmp_path)
    assert not report.outputs_match_reference


def test_float32_depthwise_in_place(tmp_path: Path) -> None:
    model = _model(tmp_path, "float32", 4)
    plan = compile_model(model, tmp_path / "mlf", CompileOptions()).plan
    assert plan.check() == [] and any(t.how == "shifted" for t in plan.tenants)
    check_model(model, tmp_path)


def test_int16_depthwise_in_place(tmp_path: Path) -> None:
    model = _model(tmp_path, "int16", 6)
    plan = compile_model(model, tmp_path / "mlf", CompileOptions()).plan
    assert plan.check() == [] and any(t.how == "shifted" for t in plan.tenants)
    check_model(model, tmp_path)


@on_boards
def test_int16_depthwise_in_place_on_the_boards(tmp_path: Path, board: str) -> None:
    """The 16x8 variants: dsp_int16 on the Cortex-M4, helium_int16 on the Cortex-M55."""
    model = _model(tmp_path, "int16", 6)
    check_model(model, tmp_path, board, io_in_pool=True)
    cpu = "cortex-m4" if board == "mps2/an386" else "cortex-m55"
    result = compile_model(model, tmp_path / "mlf", CompileOptions(cpu=cpu, io_in_pool=True))
    chosen = {c.variant for c in result.lowered.calls if result.graph.ops[c.op_index].kind == "depthwise_conv2d"}
    assert chosen & {"dsp_int16", "helium_int16"}, chosen
    assert any(t.how == "shifted" for t in result.plan.tenants)


@on_boards
def test_depthwise_in_place_on_the_boards(tmp_path: Path, board: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Helium (3x3) and generic on the Cortex-M55 shifted (the peak's Helium layer with a plan
    that writes rows in order, whatever it costs); dsp_dwp / dsp_dw4 on the Cortex-M4 (in place
    where dsp_dwp converts the whole input first), I/O in the pool."""
    from utvm import compiler

    monkeypatch.setattr(compiler, "ROWS_IN_ORDER_SLACK", 10.0)
    model = _model(tmp_path)
    report = check_model(model, tmp_path, board, io_in_pool=True)
    cpu = "cortex-m4" if board == "mps2/an386" else "cortex-m55"
    result = compile_model(model, tmp_path / "mlf", CompileOptions(cpu=cpu, io_in_pool=True))
    variants = {result.graph.ops[c.op_index].kind: set() for c in result.lowered.calls}
    for c in result.lowered.calls:
        variants[result.graph.ops[c.op_index].kind].add(c.variant)
    assert variants["depthwise_conv2d"] & {"dsp_dwp", "helium"}
    assert any(t.how in ("shifted", "inplace") for t in result.plan.tenants)
    assert report.workspace_bytes == result.plan.pool_size


def test_helium_depthwise_at_the_peak_takes_a_plan_with_rows_in_order(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """utvm_mve_dwg_s8's cheapest plan for a 10x7x16 layer (5 output rows per pass, 8 of the 16
    channels per tile) writes rows out of order, so it cannot run shifted. At the pool's peak the
    compiler takes the cheapest plan that writes them in order, when its estimated cost is within
    ROWS_IN_ORDER_SLACK (1.25) times the default's (any, with --memory-mode min) and the pool
    shrinks. This one's is 1.43 times: the layer keeps its plan and its pool, unless the slack is
    raised."""
    from utvm import compiler
    from utvm.kernels import helium as mve
    from utvm.ops.depthwise_conv2d import _dwg_out_of_order

    plans = mve.dwg_plans((10, 7), 16, (1, 1))
    assert _dwg_out_of_order(plans[0], 10, 16)
    in_order = next(p for p in plans if not _dwg_out_of_order(p, 10, 16))
    assert compiler.ROWS_IN_ORDER_SLACK * plans[0].cost < in_order.cost < 2 * plans[0].cost
    model = _model(tmp_path, n=1)
    pools, default = {}, compiler.ROWS_IN_ORDER_SLACK
    for slack in (default, 2.0):
        monkeypatch.setattr(compiler, "ROWS_IN_ORDER_SLACK", slack)
        result = compile_model(model, tmp_path / str(slack), CompileOptions(cpu="cortex-m55", io_in_pool=True))
        (call,) = [c for c in result.lowered.calls if result.graph.ops[c.op_index].kind == "depthwise_conv2d"]
        assert call.variant == "helium"
        assert call.rows_out_of_order == (slack < 2)
        assert any(t.how == "shifted" for t in result.plan.tenants) == (slack == 2)
        pools[slack] = result.plan.pool_size
    assert pools[2.0] < pools[default]


@pytest.mark.skipif(toolchain_problem() is not None, reason="bare-metal toolchain missing")
def test_helium_tiny_map_in_place(tmp_path: Path) -> None:
    """utvm_mve_dwt_s8 (plan "tiny", given by a tuning log: the tuner's pick on tiny maps) over a
    block of 16 channels writes its rows in order, so at the block's peak it runs shifted over
    its input; identical to TFLite Micro."""
    model = tmp_path / "tiny_block.tflite"
    model.write_bytes(side_by_side([_block(len(SHAPES) - 1)]))
    log = tiny_plan_log(tmp_path, model)
    result = compile_model(model, tmp_path / "mlf", CompileOptions(cpu="cortex-m55", io_in_pool=True, tuning_log=log))
    (call,) = [c for c in result.lowered.calls if result.graph.ops[c.op_index].kind == "depthwise_conv2d"]
    op = result.graph.ops[call.op_index]
    assert call.variant == "helium" and result.configs[call.op_index]["plan"] == "tiny" and not call.rows_out_of_order
    assert any(t.how == "shifted" and t.name == op.inputs[0] for t in result.plan.tenants)
    check_model(model, tmp_path, "mps3/an547", io_in_pool=True, tuning_log=log)
