"""Patch-based execution of a CNN's first stage (--memory-mode min): the split graph computes
exactly what the layer-by-layer graph computes, in a smaller pool."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from utvm.compiler import CompileOptions, compile_graph
from utvm.errors import UtvmError
from utvm.importer import load_model
from utvm.options import MemoryMode
from utvm.plan.patches import choose_patches, estimate_pool, split_stage, stage_chain
from utvm.run.harness import parse_harness_output, write_harness
from utvm.run.host import build_host, run_host
from utvm.run.reference import run_reference


def _cnn(path: Path) -> Path:
    """input [1,23,19,3] -> CONV 3x3/2 SAME (8) -> DEPTHWISE 3x3 SAME, dilation 2 -> CONV 1x1 (12)
    -> DEPTHWISE 3x3/2 VALID (x2) -> CONV 3x3 SAME (4) -> output; per-channel int8 weights,
    RELU6 on some layers."""
    from tflite_builder import ModelBuilder

    rng = np.random.default_rng(13)
    m = ModelBuilder()

    def act(name: str, shape: list[int], scale: float, zp: int) -> int:
        return m.add_tensor(name, shape, "int8", scale=scale, zero_point=zp)

    def weights(name: str, shape: list[int], axis: int) -> int:
        sw = rng.uniform(0.004, 0.02, shape[axis])
        return m.add_tensor(name, shape, "int8", data=rng.integers(-127, 128, shape).astype(np.int8),
                            scale=sw, zero_point=[0] * shape[axis], quantized_dimension=axis)

    def bias(name: str, n: int, sx: float) -> int:
        return m.add_tensor(name, [n], "int32", data=rng.integers(-3000, 3000, n).astype(np.int32),
                            scale=[sx * 0.01] * n, zero_point=[0] * n)

    x = act("x", [1, 23, 19, 3], 0.03, -5)
    layers = [  # (op, out shape, weights shape, axis, options)
        ("CONV_2D", [1, 12, 10, 8], [8, 3, 3, 3], 0, {"padding": "SAME", "stride_h": 2, "stride_w": 2,
                                                      "fused_activation_function": "RELU6"}),
        ("DEPTHWISE_CONV_2D", [1, 12, 10, 8], [1, 3, 3, 8], 3, {"padding": "SAME", "dilation_h_factor": 2,
                                                                "dilation_w_factor": 2, "depth_multiplier": 1}),
        ("CONV_2D", [1, 12, 10, 12], [12, 1, 1, 8], 0, {"padding": "VALID"}),
        ("DEPTHWISE_CONV_2D", [1, 5, 4, 24], [1, 3, 3, 24], 3, {"padding": "VALID", "stride_h": 2, "stride_w": 2,
                                                                "depth_multiplier": 2,
                                                                "fused_activation_function": "RELU"}),
        ("CONV_2D", [1, 5, 4, 4], [4, 3, 3, 24], 0, {"padding": "SAME"}),
    ]
    y = x
    for i, (op, shape, wshape, axis, options) in enumerate(layers):
        out = act(f"a{i}", shape, 0.05 + 0.01 * i, 3 - i)
        m.add_operator(op, [y, weights(f"w{i}", wshape, axis), bias(f"b{i}", shape[3], 0.03)], [out],
                       {"stride_h": 1, "stride_w": 1, **options})
        y = out
    path.write_bytes(m.finish([x], [y]))
    return path


def _residual(path: Path) -> Path:
    """input [1,14,11,4] -> CONV 3x3 (8) = a -> CONV 3x3 -> CONV 3x3 -> ADD(a, .) -> CONV 3x3/2 (6) -> output:
    a residual block whose skip tensor feeds a convolution (halo) and the ADD (no halo)."""
    from tflite_builder import ModelBuilder

    rng = np.random.default_rng(7)
    m = ModelBuilder()
    x = m.add_tensor("x", [1, 14, 11, 4], "int8", scale=0.04, zero_point=2)

    def conv(name: str, src: int, cin: int, cout: int, stride: int, shape: list[int]) -> int:
        w = m.add_tensor(f"{name}_w", [cout, 3, 3, cin], "int8", data=rng.integers(-127, 128, (cout, 3, 3, cin)).astype(np.int8),
                         scale=rng.uniform(0.004, 0.02, cout), zero_point=[0] * cout, quantized_dimension=0)
        b = m.add_tensor(f"{name}_b", [cout], "int32", data=rng.integers(-2000, 2000, cout).astype(np.int32),
                         scale=[0.0004] * cout, zero_point=[0] * cout)
        y = m.add_tensor(name, shape, "int8", scale=0.06, zero_point=-4)
        m.add_operator("CONV_2D", [src, w, b], [y], {"padding": "SAME", "stride_h": stride, "stride_w": stride,
                                                     "fused_activation_function": "RELU"})
        return y

    a = conv("a", x, 4, 8, 1, [1, 14, 11, 8])
    c = conv("c", conv("b", a, 8, 8, 1, [1, 14, 11, 8]), 8, 8, 1, [1, 14, 11, 8])
    s = m.add_tensor("sum", [1, 14, 11, 8], "int8", scale=0.08, zero_point=1)
    m.add_operator("ADD", [a, c], [s], {"fused_activation_function": "NONE"})
    y = conv("y", s, 8, 6, 2, [1, 7, 6, 6])
    path.write_bytes(m.finish([x], [y]))
    return path


def test_residual_stage_is_bit_exact(tmp_path: Path) -> None:
    """A stage through a residual ADD: the skip tensor's patch covers both readers' regions and is
    cut to the ADD's."""
    model = _residual(tmp_path / "res.tflite")
    graph = load_model(model)
    graph.name = "res"
    ends = stage_chain(graph)
    assert ends == [0, 3, 4]  # not inside the block: its first output is read after
    split, _ = split_stage(graph, [3], (3, 2))
    assert sum(op.kind == "add" for op in split.ops) == 6
    x = np.random.default_rng(2).integers(-128, 128, (1, 14, 11, 4)).astype(np.int8)
    (ref,), _ = run_reference(model, [x], 1, 1)  # type: ignore[misc]
    (ours,) = _run(model, split, tmp_path, x)
    assert np.array_equal(ours, ref.reshape(ours.shape))


def _run(graph_model: Path, graph, tmp: Path, x: np.ndarray) -> list[np.ndarray]:  # type: ignore[no-untyped-def]
    result = compile_graph(graph, tmp / "mlf", CompileOptions())
    assert result.plan.check() == []
    g = result.graph
    harness = write_harness(tmp, result.name, [x], [g.tensors[n].nbytes for n in g.outputs])
    out, _, status = parse_harness_output(run_host(build_host(result.mlf_dir, harness, tmp / "prog")),
                                          [g.tensors[n].dtype for n in g.outputs],
                                          [g.tensors[n].shape for n in g.outputs])
    assert status == 0
    return out


@pytest.mark.parametrize("layers, grid", [
    (5, (3, 2)), (3, (4, 4)),
    pytest.param(2, (2, 3), marks=pytest.mark.slow), pytest.param(4, (1, 3), marks=pytest.mark.slow),
])
def test_split_stage_is_bit_exact(tmp_path: Path, layers: int, grid: tuple[int, int]) -> None:
    model = _cnn(tmp_path / "cnn.tflite")
    graph = load_model(model)
    graph.name = "cnn"
    chain = stage_chain(graph)
    assert len(chain) == 5
    split, tiles = split_stage(graph, chain[:layers], grid)
    assert len(tiles) == grid[0] * grid[1]
    x = np.random.default_rng(1).integers(-128, 128, (1, 23, 19, 3)).astype(np.int8)
    (ref,), _ = run_reference(model, [x], 1, 1)  # type: ignore[misc]
    (ours,) = _run(model, split, tmp_path, x)
    assert np.array_equal(ours, ref.reshape(ours.shape))


def test_choose_patches_lowers_the_pool_and_reports_the_overhead(tmp_path: Path) -> None:
    graph = load_model(_cnn(tmp_path / "cnn.tflite"))
    split, plan = choose_patches(graph, io_in_pool=False)
    assert plan is not None
    assert plan.estimated_pool < plan.estimated_pool_without == estimate_pool(graph, False)
    assert plan.macs_after > plan.macs_before and 0 < plan.overhead <= 0.5
    kinds = [op.kind for op in split.ops]
    assert kinds.count("concatenation") >= 1 and len(split.ops) > len(graph.ops)


def test_memory_mode_names_the_mac_budget() -> None:
    """fast: no patches; min: at most 50% more MACs; min:PCT: at most PCT percent; anything else
    is one error naming the forms."""
    assert MemoryMode.parse("fast").max_extra_macs is None and MemoryMode.parse("fast").fast
    assert MemoryMode.parse("min").max_extra_macs == 0.5
    assert MemoryMode.parse("min:5").max_extra_macs == 0.05 and MemoryMode.parse("min:0").max_extra_macs == 0
    assert CompileOptions().memory_mode.fast and CompileOptions(memory_mode="min:5").memory_mode == MemoryMode(0.05)
    for bad in ("fastest", "min:", "min:-1", "min:x", "max:5", "min:1e9", "min:nan"):
        with pytest.raises(UtvmError, match="min:PCT"):
            MemoryMode.parse(bad)


def test_a_smaller_mac_budget_takes_a_coarser_split(models_dir: Path) -> None:
    """VWW with its input in the pool: min takes the smallest estimated pool (+9% MACs), min:5
    a coarser grid still under 0.75x the per-layer bound at no more than 5% more MACs."""
    graph = load_model(models_dir / "vww_96_int8.tflite")
    _, smallest = choose_patches(graph, True)
    _, budget = choose_patches(graph, True, 0.05)
    assert smallest is not None and budget is not None
    assert budget.overhead <= 0.05 < smallest.overhead
    assert smallest.estimated_pool < budget.estimated_pool <= 41472


@pytest.mark.slow
@pytest.mark.parametrize("board", ["host", "mps2/an386"])
def test_vww_min_memory_mode(models_dir: Path, board: str) -> None:
    """VWW with its input in the pool: at most 0.75x the per-layer bound (55,296 B), bit-exact,
    within min's budget of extra MACs. The extra MACs are a fraction of the model's MACs after
    the channels that only meet zero weights are dropped (VWW: 674,912 extra MACs, 0.17 of the
    3,999,104 left, 0.09 of the model's 7,489,664)."""
    from utvm.run.runner import run_model

    report = run_model(models_dir / "vww_96_int8.tflite", board, io_in_pool=True, memory_mode="min")
    assert report.outputs_match_reference is True
    assert report.workspace_bytes <= 41472, report.workspace_bytes
    assert report.patch_plan is not None
    assert 0 < report.patch_plan["mac_overhead"] <= MemoryMode.parse("min").max_extra_macs, report.patch_plan["mac_overhead"]


def test_a_tuned_configuration_follows_its_operator_into_the_patches(tmp_path: Path) -> None:
    """The kernel configurations are a map beside the graph: with --memory-mode min every patch of
    a stage operator is lowered with the configuration the tuning log gave the operator, the
    operators after the stage keep theirs, and no operator of the graph carries one."""
    from utvm.configs.log import write_log
    from utvm.configs.workload import tunable, workload, workload_key
    from utvm.kernels.target import Target
    from utvm.tune.space import space

    model = _cnn(tmp_path / "cnn.tflite")
    graph = load_model(model)
    tuned: dict[str, dict[str, object]] = {}
    records = {}
    for op in graph.ops:
        configs = space(graph, op, Target.for_cpu("cortex-m4")) if tunable(graph, op) else []
        if len(configs) > 1:
            w = workload(graph, op, "cortex-m4")
            tuned[op.source] = configs[-1]  # not the default
            records[workload_key(w)] = {"key": workload_key(w), "workload": w, "config": configs[-1],
                                        "cost": {"instructions": 1}}
    assert len(tuned) >= 3
    log = tmp_path / "log.json"
    write_log(log, list(records.values()))
    graph.name = "cnn"
    result = compile_graph(graph, tmp_path / "mlf", CompileOptions(cpu="cortex-m4", tuning_log=log, memory_mode="min"))
    assert result.metadata["modules"]["cnn"]["patch_plan"] is not None
    patches = 0
    for index, op in enumerate(result.graph.ops):
        assert op.config is None and "config" not in op.attrs
        original = op.source.split(" (patch ")[0]
        patches += original != op.source and original in tuned
        if original in tuned:
            assert result.configs[index] == tuned[original], op.source
            assert result.configs.source(index) == "tuning log"
        elif index in result.configs:
            assert result.configs.source(index) != "tuning log", op.source
    assert patches >= 4
